//! Vegas modified slow start — Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on a
//! Global Internet", IEEE JSAC 1995 (§3.3); Linux `net/ipv4/tcp_vegas.c`; ALGORITHMS.md §11.1.
//!
//! "Leave slow start when the actual rate falls below the expected rate by about one packet's worth
//! of queue" (§11.1). In the paper, exponential growth happens only every other RTT, "cwnd frozen
//! in between so that the expected/actual comparison is valid". Once per round (§0.3) the window
//! that the RTT samples imply is compared with cwnd:
//!
//! ```text
//! rtt    = minimum RTT sample of the round          baseRTT = minimum RTT sample ever
//! diff   = cwnd · (rtt − baseRTT) / rtt             (paper: (Expected − Actual) · baseRTT)
//!        | cwnd · (rtt − baseRTT) / baseRTT         (Linux)
//! diff > γ  →  cwnd = min(cwnd, floor(cwnd · baseRTT / rtt) + 1); ssthresh = cwnd; leave slow start
//! ```
//!
//! Parameters (segments and flags): `gamma` = 1 segment (Linux `gamma = 1`, ns-2 `v_gamma_ 1`),
//! `every_other_rtt` = true (the paper; Linux grows on every ACK), `diff` = `"paper"` (`"linux"` for
//! the kernel's divisor). Growth in a growing round is standard slow start, `min(N, SMSS)` per ACK.

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, Dur, ExitReason};

/// How `diff` is normalised (ALGORITHMS.md §11.1 exposes both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VegasDiff {
    /// The paper: `(Expected − Actual) · baseRTT = cwnd · (rtt − baseRTT) / rtt`.
    Paper,
    /// Linux `tcp_vegas_cong_avoid`: `cwnd · (rtt − baseRTT) / baseRTT`.
    Linux,
}

/// Configuration of [`Vegas`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasConfig {
    /// γ in segments: leave slow start when `diff > gamma`.
    pub gamma: f64,
    /// Grow only on every other round (the paper) instead of on every ACK (Linux).
    pub every_other_rtt: bool,
    /// Which normalisation of `diff`.
    pub diff: VegasDiff,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig { gamma: Vegas::GAMMA, every_other_rtt: true, diff: VegasDiff::Paper }
    }
}

/// Vegas modified slow start.
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    /// `baseRTT`: the smallest RTT sample ever.
    base_rtt: Option<Dur>,
    /// `minRTT`: the smallest RTT sample of the current round.
    min_rtt: Option<Dur>,
    /// `cntRTT`: RTT samples in the current round.
    cnt_rtt: u32,
}

impl Vegas {
    /// γ, segments (Linux `gamma = 1`; ns-2 `v_gamma_ 1`).
    pub const GAMMA: f64 = 1.0;
    /// Linux `tcp_vegas_cong_avoid` decides only on rounds with three or more samples
    /// (`if (vegas->cntRTT <= 2)` falls back to Reno): two samples a round are most likely delayed
    /// ACKs. ALGORITHMS.md §11.1: "if cntRTT > 2".
    pub const MIN_SAMPLES: u32 = 3;

    /// A Vegas slow start with `cfg`.
    pub fn new(cfg: VegasConfig) -> Vegas {
        Vegas { cfg, base_rtt: None, min_rtt: None, cnt_rtt: 0 }
    }

    /// `diff` in segments for a window of `cwnd_pkts`, per the configured normalisation.
    fn diff(&self, cwnd_pkts: f64, rtt: Dur, base: Dur) -> f64 {
        let queued = (rtt.as_nanos() - base.as_nanos()) as f64;
        match self.cfg.diff {
            VegasDiff::Paper => cwnd_pkts * queued / rtt.as_nanos() as f64,
            VegasDiff::Linux => cwnd_pkts * queued / base.as_nanos() as f64,
        }
    }
}

impl StartupAlgorithm for Vegas {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        // "each ACK: baseRTT = min(baseRTT, rtt); minRTT = min(minRTT, rtt); cntRTT += 1"
        if let Some(rtt) = ack.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.cnt_rtt += 1;
        }
        let mss = view.mss as f64;
        if view.new_round {
            // "once per round (ACK beyond the round's snd_nxt, §0.3), if cntRTT > 2"
            if let (true, Some(rtt), Some(base)) = (self.cnt_rtt >= Self::MIN_SAMPLES, self.min_rtt, self.base_rtt) {
                let cwnd_pkts = view.cwnd / mss;
                if self.diff(cwnd_pkts, rtt, base) > self.cfg.gamma {
                    // "cwnd = min(cwnd, floor(target) + 1); ssthresh = min(ssthresh, cwnd)", with
                    // target = cwnd · baseRTT / rtt, the window matching the actual rate. The
                    // controller sets ssthresh to the reduced cwnd, below any finite ssthresh since
                    // we are in slow start.
                    let target = cwnd_pkts * base.as_nanos() as f64 / rtt.as_nanos() as f64;
                    let cwnd = cwnd_pkts.min(target.floor() + 1.0) * mss;
                    return StartupAction { set_cwnd: Some(cwnd), exit: Some(ExitReason::VegasDiff), ..Default::default() };
                }
            }
            // "reset minRTT, cntRTT"
            self.min_rtt = None;
            self.cnt_rtt = 0;
        }
        // "grow exponentially every OTHER RTT (cwnd frozen in between)": the first round (0) grows.
        if self.cfg.every_other_rtt && view.round % 2 == 1 {
            return StartupAction::default();
        }
        StartupAction::grow(ack.newly_acked.min(view.mss) as f64)
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// `gamma` of `startup = { algorithm = "vegas", ... }`.
pub const GAMMA: Param<f64> = Param::number("gamma", "1", "gamma, segments: leave slow start when diff > gamma (Linux gamma = 1, ns-2 v_gamma_ 1)");

/// `every_other_rtt` of `startup = { algorithm = "vegas", ... }`.
pub const EVERY_OTHER_RTT: Param<bool> = Param::flag("every_other_rtt", "true", "grow only on every other round, holding cwnd in between (the paper); false grows on every ACK (Linux)");

/// `diff` of `startup = { algorithm = "vegas", ... }`.
pub const DIFF: Param<&'static str> = Param::choice("diff", &["paper", "linux"], "paper", "diff divisor: the paper's (Expected-Actual)*baseRTT = cwnd*(rtt-baseRTT)/rtt, or Linux's cwnd*(rtt-baseRTT)/baseRTT");

/// The declaration of `vegas` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "vegas",
        role: "startup",
        summary: "Vegas modified slow start: grow every other round; once per round, when diff = cwnd*(rtt-baseRTT)/rtt exceeds gamma, cwnd = min(cwnd, floor(cwnd*baseRTT/rtt)+1) and ssthresh = cwnd",
        source: "Brakmo & Peterson, TCP Vegas, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c (ALGORITHMS.md §11.1)",
        params: &[GAMMA.info, EVERY_OTHER_RTT.info, DIFF.info],
    },
    build: super::Build::Native(|p, _| super::Startup::Vegas(Vegas::new(VegasConfig {
            gamma: p.get(&GAMMA),
            every_other_rtt: p.get(&EVERY_OTHER_RTT),
            diff: match p.get(&DIFF) {
                "linux" => VegasDiff::Linux,
                _ => VegasDiff::Paper,
            },
        }))),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avoidance::{Avoidance, Reno};
    use crate::startup::Startup;
    use crate::{CcConfig, Controller, Phase, Ssthresh, Time};

    const MSS: u64 = 1000;

    fn view(cwnd_pkts: f64, round: u64, new_round: bool) -> CcView {
        CcView { cwnd: cwnd_pkts * MSS as f64, ssthresh: Ssthresh::Infinite, mss: MSS, round, min_rtt: None, new_round }
    }

    fn ack(now_ms: u64, rtt_ms: u64) -> AckEvent {
        AckEvent {
            now: Time(now_ms * 1_000_000),
            newly_acked: MSS,
            ack_seq: 0,
            snd_nxt: 0,
            rtt: Some(Dur::from_millis(rtt_ms)),
            ..AckEvent::default()
        }
    }

    #[test]
    fn the_spec_test_vector_cuts_32_segments_to_31() {
        // ALGORITHMS.md §11.1: cwnd 32, baseRTT 100 ms, rtt 105 ms → diff 1.6 (Linux) > 1 →
        // cwnd = min(32, floor(30.48) + 1) = 31. The paper's diff is 32 · 5 / 105 = 1.52, also > 1.
        for diff in [VegasDiff::Linux, VegasDiff::Paper] {
            let mut v = Vegas::new(VegasConfig { diff, ..Default::default() });
            // Round 0: baseRTT 100 ms from one sample, then the 105 ms samples of the round.
            v.on_ack(&view(32.0, 0, false), &ack(100, 100));
            v.on_ack(&view(32.0, 1, true), &ack(101, 105));
            for t in 0..3 {
                v.on_ack(&view(32.0, 1, false), &ack(200 + t, 105));
            }
            let a = v.on_ack(&view(32.0, 2, true), &ack(205, 105));
            assert_eq!(a.exit, Some(ExitReason::VegasDiff), "{diff:?}: diff > gamma must end slow start");
            assert_eq!(a.set_cwnd, Some(31.0 * MSS as f64), "{diff:?}: floor(32 · 100/105) + 1 = 31 segments");
            assert_eq!(a.increase, 0.0);
        }
    }

    #[test]
    fn a_round_with_fewer_than_three_samples_makes_no_decision() {
        let mut v = Vegas::new(VegasConfig::default());
        v.on_ack(&view(32.0, 0, false), &ack(100, 100));
        v.on_ack(&view(32.0, 1, true), &ack(101, 200));
        // Only two samples (the round-ending ACK is the second) at a huge delay: no verdict.
        let a = v.on_ack(&view(32.0, 2, true), &ack(300, 200));
        assert_eq!(a.exit, None, "Linux needs cntRTT > 2 before it trusts minRTT");
    }

    #[test]
    fn diff_below_gamma_keeps_slow_start_going() {
        // cwnd 10, rtt 105 vs base 100: paper diff = 10 · 5/105 = 0.48 < 1.
        let mut v = Vegas::new(VegasConfig::default());
        v.on_ack(&view(10.0, 0, false), &ack(100, 100));
        for t in 0..3 {
            v.on_ack(&view(10.0, 0, false), &ack(101 + t, 105));
        }
        let a = v.on_ack(&view(10.0, 2, true), &ack(200, 105));
        assert_eq!(a.exit, None);
        assert_eq!(a.increase, MSS as f64, "round 2 is a growing round");
    }

    /// Feeds one round of `acks` per-segment ACKs, each with an RTT sample of `rtt_ms`, the first
    /// flagged as ending the previous round (from round 1 on), as the controller does (§0.3).
    /// Applies the increases to `cwnd` (segments) and returns the action that ended startup, if any.
    fn round(v: &mut Vegas, r: u64, cwnd: &mut f64, acks: u64, rtt_ms: u64) -> Option<StartupAction> {
        for i in 0..acks {
            let a = v.on_ack(&view(*cwnd, r, r > 0 && i == 0), &ack(r * 100 + i, rtt_ms));
            *cwnd += a.increase / MSS as f64;
            if a.exit.is_some() {
                return Some(a);
            }
        }
        None
    }

    #[test]
    fn grows_only_on_alternate_rounds_and_exits_on_the_round_where_diff_exceeds_gamma() {
        // Paper flavour, gamma 1 segment, baseRTT 100 ms, an ACK per segment.
        let mut v = Vegas::new(VegasConfig::default());
        let mut cwnd = 4.0;
        // Round 0 grows: 4 ACKs at 100 ms, cwnd 4 → 8.
        assert!(round(&mut v, 0, &mut cwnd, 4, 100).is_none());
        assert_eq!(cwnd, 8.0);
        // Round 1 holds: its first ACK judges round 0 (diff 0); 8 ACKs, cwnd stays 8.
        assert!(round(&mut v, 1, &mut cwnd, 8, 100).is_none());
        assert_eq!(cwnd, 8.0, "odd rounds hold the window");
        // Round 2 grows with samples at 101 ms: cwnd 8 → 16.
        assert!(round(&mut v, 2, &mut cwnd, 8, 101).is_none());
        assert_eq!(cwnd, 16.0);
        // Round 3 holds; its first ACK judges round 2: 16 · 1/101 = 0.16 < 1. Samples 104 ms.
        assert!(round(&mut v, 3, &mut cwnd, 16, 104).is_none());
        assert_eq!(cwnd, 16.0);
        // Round 4 grows; judging round 3 gives 16 · 4/104 = 0.62 < 1. cwnd 16 → 32.
        assert!(round(&mut v, 4, &mut cwnd, 16, 104).is_none());
        assert_eq!(cwnd, 32.0);
        // Round 5's first ACK judges round 4: 32 · 4/104 = 1.23 > 1: exit, with
        // cwnd = min(32, floor(32 · 100/104) + 1) = min(32, 30 + 1) = 31.
        let a = round(&mut v, 5, &mut cwnd, 32, 104).expect("diff > gamma on round 5");
        assert_eq!(a.exit, Some(ExitReason::VegasDiff));
        assert_eq!(a.set_cwnd, Some(31.0 * MSS as f64));
    }

    #[test]
    fn linux_flavour_grows_every_round_and_uses_the_base_rtt_divisor() {
        let mut v = Vegas::new(VegasConfig { every_other_rtt: false, diff: VegasDiff::Linux, ..Default::default() });
        let mut cwnd = 4.0;
        // Round 0: 4 → 8. Round 1 (samples 100 ms): 8 → 16. Round 2 (101 ms): judging round 1
        // gives 0; 16 → 32.
        assert!(round(&mut v, 0, &mut cwnd, 4, 100).is_none());
        assert!(round(&mut v, 1, &mut cwnd, 8, 100).is_none());
        assert_eq!(cwnd, 16.0, "Linux grows on every ACK");
        assert!(round(&mut v, 2, &mut cwnd, 16, 102).is_none());
        assert_eq!(cwnd, 32.0);
        // Round 3's first ACK judges round 2: Linux diff = 32 · 2/100 = 0.64 < 1, so it goes on:
        // 32 → 64 with samples at 102 ms. Round 4 judges 64 · 2/100 = 1.28 > 1:
        // cwnd = min(64, floor(64 · 100/102) + 1) = 63.
        assert!(round(&mut v, 3, &mut cwnd, 32, 102).is_none());
        assert_eq!(cwnd, 64.0);
        let a = round(&mut v, 4, &mut cwnd, 64, 102).expect("diff > gamma on round 4");
        assert_eq!(a.set_cwnd, Some(63.0 * MSS as f64));
    }

    #[test]
    fn in_a_controller_the_exit_records_the_reduced_window_as_ssthresh() {
        let mut c = Controller::new(
            CcConfig {
                mss: MSS,
                initial_window: 32 * MSS,
                initial_ssthresh: Ssthresh::Infinite,
                loss_window: MSS,
                cwnd_validation: false,
                linux_ss_clamp: false,
            },
            Startup::Vegas(Vegas::new(VegasConfig::default())),
            Avoidance::Reno(Reno::default()),
        );
        // As the sender does, the first round ends on the ACK covering the first segment sent.
        c.on_first_send(MSS);
        let mut a = ack(100, 100);
        a.snd_nxt = 33 * MSS;
        // t=100ms: ACK 1 (sample 100 ms, the base RTT): round 0 grows, cwnd 32 → 33.
        a.ack_seq = MSS;
        c.on_ack(&a);
        // ACK 2 ends round 0 with only two samples: no verdict. Round 1 holds: ACKs 2..=33 leave
        // cwnd at 33, each with a 120 ms sample.
        a.rtt = Some(Dur::from_millis(120));
        for i in 2..=33u64 {
            a.ack_seq = i * MSS;
            c.on_ack(&a);
        }
        assert_eq!((c.phase(), c.cwnd()), (Phase::SlowStart, 33.0 * MSS as f64), "round 1 holds the window");
        // ACK 34 covers SND.NXT of round 1's start and ends it: paper diff = 33 · 20/120 = 5.5 > 1.
        a.ack_seq = 34 * MSS;
        c.on_ack(&a);
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
        let exit = c.startup_exit().unwrap();
        assert_eq!(exit.reason, ExitReason::VegasDiff);
        // min(33, floor(33 · 100/120) + 1) = min(33, 27 + 1) = 28 segments.
        assert_eq!(c.cwnd(), 28.0 * MSS as f64);
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(28.0 * MSS as f64));
    }
}
