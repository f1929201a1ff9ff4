//! HyStart — Hybrid Slow Start as the paper's Algorithm 1 writes it: Ha & Rhee, "Hybrid Slow Start
//! for High-Bandwidth and Long-Distance Networks", PFLDnet 2008, §III-B; ALGORITHMS.md §8.2.
//!
//! Slow start keeps its exponential growth, and two signals end it before the first loss:
//! * **ACK train length** — "when Λ(N) is the same as the minimum forward delay of the link,
//!   b(N)Λ(N) is simply the BDP of the forward link": once the closely spaced ACKs of a round span
//!   `dMin/2`, the flight approximates the BDP;
//! * **delay increase** — "RTT_k ≥ RTT_{k−1} + η": the minimum of the first `nSampling` RTT samples
//!   of a round exceeds the previous round's by `η = max(2, ⌈lastRTT/16⌉)` ms.
//!
//! On detection `ssthresh = cwnd` and the flow continues in congestion avoidance (exit reasons
//! `ack-train` and `delay-increase`).
//!
//! The paper's clock is jiffies with HZ = 1000: times and RTTs are whole milliseconds here. The
//! variant in today's Linux differs in many small ways (ALGORITHMS.md §8.4); it is
//! [`HyStartLinux`](super::HyStartLinux).
//!
//! Parameters (registry name `hystart`):
//! * `low_ssthresh` — `low_ssthresh`, default 16 segments;
//! * `n_sampling` — `nSampling`, RTT samples per round for the delay test, default 8;
//! * `gate_low_window` — default `true`: skip detection entirely while `cwnd <= low_ssthresh`
//!   (ALGORITHMS.md §20 item 9); `false` is the literal reading, in which a detection at or below
//!   `low_ssthresh` latches `found` without setting ssthresh and the flow then runs plain slow
//!   start until a loss.
//!
//! Growth: Linux's `tcp_slow_start` credits every newly acknowledged segment (byte counting with no
//! cap, ALGORITHMS.md §0.4); with one ACK per segment this is standard slow start.

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, ExitReason, Ssthresh};
use startlab_units::Time;

/// One jiffy, in nanoseconds (the paper's kernel ran with HZ = 1000).
const JIFFY_NS: u64 = 1_000_000;

/// "if Jiffies − lastJiffies < msecs_to_jiffies(2)": the ACK spacing below which an ACK extends
/// the train, in jiffies.
const ACK_SPACING_JIFFIES: u64 = 2;

/// The floor of the delay threshold η, in jiffies: "η ← max(2, ⌈lastRTT/16⌉)".
const ETA_MIN_JIFFIES: u64 = 2;

/// The divisor of the delay threshold: "η ← max(2, ⌈lastRTT/16⌉)".
const ETA_DIVISOR: u64 = 16;

/// Configuration of [`HyStart`], with the paper's defaults from [`HyStartConfig::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyStartConfig {
    /// `low_ssthresh` in bytes: "if found and cwnd > low_ssthresh then ssthresh ← cwnd".
    pub low_ssthresh: f64,
    /// `nSampling`: RTT samples per round whose minimum is the round's delay.
    pub n_sampling: u32,
    /// Skip detection entirely while `cwnd <= low_ssthresh` (ALGORITHMS.md §8.2, default); `false`
    /// latches `found` without exiting when detection happens at or below `low_ssthresh`.
    pub gate_low_window: bool,
}

impl HyStartConfig {
    /// The paper's values for a sender with segments of `mss` bytes: `low_ssthresh ← 16`,
    /// `nSampling ← 8`, detection gated below the low window.
    pub fn new(mss: u64) -> HyStartConfig {
        HyStartConfig { low_ssthresh: 16.0 * mss as f64, n_sampling: 8, gate_low_window: true }
    }
}

/// `found` of Algorithm 1: which detector fired (1 = ACK train, 2 = delay increase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    AckTrain,
    DelayIncrease,
}

impl Found {
    fn reason(self) -> ExitReason {
        match self {
            Found::AckTrain => ExitReason::AckTrain,
            Found::DelayIncrease => ExitReason::DelayIncrease,
        }
    }
}

/// Hybrid Slow Start, paper variant. Times and RTTs are whole jiffies (ms).
#[derive(Clone, Debug)]
pub struct HyStart {
    cfg: HyStartConfig,
    found: Option<Found>,
    /// `dMin`, ms; `None` is the paper's ∞.
    d_min: Option<u64>,
    /// `roundStart`, jiffies; `None` until the first round started.
    round_start: Option<u64>,
    /// `lastJiffies`: the last closely spaced ACK of the round.
    last_jiffies: u64,
    /// `lastRTT`, ms: the previous round's `curRTT`; `None` is ∞.
    last_rtt: Option<u64>,
    /// `curRTT`, ms: minimum of the first `nSampling` samples of this round; `None` is ∞.
    cur_rtt: Option<u64>,
    /// `samplingCnt`: samples still to take this round.
    sampling_cnt: u32,
}

impl HyStart {
    /// A flow that has not sent yet: `dMin = ∞`, nothing found.
    pub fn new(cfg: HyStartConfig) -> HyStart {
        HyStart {
            cfg,
            found: None,
            d_min: None,
            round_start: None,
            last_jiffies: 0,
            last_rtt: None,
            cur_rtt: None,
            sampling_cnt: 0,
        }
    }

    /// Algorithm 1's slow-start guard "cwnd ≤ ssthresh" (the controller's own phase test is
    /// `cwnd < ssthresh`, ALGORITHMS.md §1.4; the guard is kept literally).
    fn in_slow_start(view: &CcView) -> bool {
        match view.ssthresh {
            Ssthresh::Infinite => true,
            Ssthresh::Bytes(s) => view.cwnd <= s,
        }
    }
}

/// `Jiffies` at `t`: whole milliseconds, rounded down like a tick counter.
fn jiffies(t: Time) -> u64 {
    t.as_nanos() / JIFFY_NS
}

/// η of Algorithm 1 for a previous-round delay of `last_rtt` ms: `max(2, ⌈lastRTT/16⌉)`.
pub(crate) fn eta_ms(last_rtt: u64) -> u64 {
    last_rtt.div_ceil(ETA_DIVISOR).max(ETA_MIN_JIFFIES)
}

impl StartupAlgorithm for HyStart {
    fn signals(&self, out: &mut Vec<f64>) {
        let ms = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64 / 1e3);
        out.push(ms(self.d_min));
        out.push(ms(self.cur_rtt));
        out.push(ms(self.last_rtt));
        out.push(ms(self.last_rtt.map(|l| l + eta_ms(l))));
        out.push(self.sampling_cnt as f64);
        out.push(ms(self.round_start.map(|r| self.last_jiffies.saturating_sub(r))));
        out.push(self.d_min.map_or(f64::NAN, |d| d as f64 / 2e3));
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let grow = StartupAction::grow(ack.newly_acked as f64);
        let now = jiffies(ack.now);

        // "At the start of each RTT round: if !found and cwnd ≤ ssthresh then roundStart ←
        // lastJiffies ← Jiffies; lastRTT ← curRTT; curRTT ← ∞; samplingCnt ← nSampling"
        // NOTE: the plug-in does not see the first segment leave, so the first round's clock starts
        // at its first ACK, which lets round 1 measure a train from its first ACK like every later
        // round.
        if (view.new_round || self.round_start.is_none()) && self.found.is_none() && Self::in_slow_start(view) {
            self.round_start = Some(now);
            self.last_jiffies = now;
            self.last_rtt = self.cur_rtt;
            self.cur_rtt = None;
            self.sampling_cnt = self.cfg.n_sampling;
        }

        // "RTT ← usecs_to_jiffies(RTT_us)": rounded to the nearest ms, at least 1 (§8.2). An ACK
        // without a sample (Karn) takes no part in detection, as in the kernel, where
        // `hystart_update` runs from the RTT-sample hook.
        let Some(sample) = ack.rtt else { return grow };
        let rtt = sample.as_nanos().saturating_add(JIFFY_NS / 2) / JIFFY_NS;
        let rtt = rtt.max(1);
        // "dMin ← min(dMin, RTT)"
        let d_min = self.d_min.map_or(rtt, |d| d.min(rtt));
        self.d_min = Some(d_min);

        // "if !found and cwnd ≤ ssthresh then"
        if self.found.is_some() || !Self::in_slow_start(view) {
            return grow;
        }
        // ALGORITHMS.md §20 item 9: detection is skipped entirely while cwnd ≤ low_ssthresh.
        if self.cfg.gate_low_window && view.cwnd <= self.cfg.low_ssthresh {
            return grow;
        }
        let round_start = self.round_start.unwrap_or(now);

        // "if Jiffies − lastJiffies < msecs_to_jiffies(2) then lastJiffies ← Jiffies;
        //  if Jiffies − roundStart ≥ dMin/2 then found ← 1"
        // dMin/2 is an exact half (§8.2): compare 2·(Jiffies − roundStart) with dMin.
        if now.saturating_sub(self.last_jiffies) < ACK_SPACING_JIFFIES {
            self.last_jiffies = now;
            if 2 * now.saturating_sub(round_start) >= d_min {
                self.found = Some(Found::AckTrain);
            }
        }

        // "if samplingCnt then curRTT ← min(curRTT, RTT); samplingCnt ← samplingCnt − 1"
        if self.sampling_cnt > 0 {
            self.cur_rtt = Some(self.cur_rtt.map_or(rtt, |c| c.min(rtt)));
            self.sampling_cnt -= 1;
        }
        // "η ← max(2, ⌈lastRTT/16⌉); if !samplingCnt and curRTT ≥ lastRTT + η then found ← 2"
        // With lastRTT = ∞ (the first round) the test cannot hold.
        if let (Some(last), Some(cur)) = (self.last_rtt, self.cur_rtt) {
            if self.sampling_cnt == 0 && cur >= last + eta_ms(last) {
                self.found = Some(Found::DelayIncrease);
            }
        }

        // "if found and cwnd > low_ssthresh then ssthresh ← cwnd"
        match self.found {
            Some(found) if view.cwnd > self.cfg.low_ssthresh => {
                // NOTE: the deciding ACK adds nothing, so ssthresh is the window the detector saw
                // (the kernel gives that ACK one more slow-start or CUBIC increment).
                StartupAction::exit(found.reason())
            }
            _ => grow,
        }
    }

    /// "Timeout: found ← 0; dMin ← ∞". A fast retransmit leaves the state alone.
    fn on_congestion(&mut self, _view: &CcView, ev: &CongestionEvent) {
        if ev.kind == CongestionKind::Timeout {
            self.found = None;
            self.d_min = None;
        }
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// `low_ssthresh` of `startup = { algorithm = "hystart", ... }`.
pub const LOW_SSTHRESH: Param<u64> = Param::window("low_ssthresh", "16pkt", "low_ssthresh: a detection sets ssthresh only while cwnd > low_ssthresh");

/// `n_sampling` of `startup = { algorithm = "hystart", ... }`.
pub const N_SAMPLING: Param<u64> = Param::integer("n_sampling", "8", "nSampling: RTT samples per round whose minimum is compared with the previous round's");

/// `gate_low_window` of `startup = { algorithm = "hystart", ... }`.
pub const GATE_LOW_WINDOW: Param<bool> = Param::flag("gate_low_window", "true", "skip detection entirely while cwnd <= low_ssthresh (ALGORITHMS.md §20 item 9); false = literal: an early detection latches and the flow runs plain slow start");

/// The variables of the paper's Algorithm 1, in [`StartupAlgorithm::signals`]' order (the
/// algorithm's clock is the jiffy, 1 ms).
pub const SIGNALS: &[super::Signal] = &[
    super::Signal::new("d_min", "s", "dMin: the smallest RTT sample"),
    super::Signal::new("cur_rtt", "s", "curRTT: the minimum of this round's first nSampling samples"),
    super::Signal::new("last_rtt", "s", "lastRTT: the previous round's curRTT"),
    super::Signal::new("delay_thresh", "s", "lastRTT + max(2 ms, lastRTT/16): curRTT at or above it ends startup (delay increase)"),
    super::Signal::new("sampling_cnt", "acks", "samples still to take this round"),
    super::Signal::new("ack_train", "s", "the ACK train so far: lastJiffies - roundStart"),
    super::Signal::new("train_thresh", "s", "dMin / 2: a train this long ends startup (ACK train)"),
];

/// The declaration of `hystart` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "hystart",
        role: "startup",
        summary: "Hybrid Slow Start, the paper's Algorithm 1: ssthresh = cwnd once the round's ACK train spans dMin/2 or its first RTT samples rise by max(2 ms, lastRTT/16) over the previous round's",
        source: "Ha & Rhee, Hybrid Slow Start for High-Bandwidth and Long-Distance Networks, PFLDnet 2008, Algorithm 1 (ALGORITHMS.md §8.2)",
        params: &[LOW_SSTHRESH.info, N_SAMPLING.info, GATE_LOW_WINDOW.info],
    },
    build: super::Build::Native(|p, _| super::Startup::HyStart(HyStart::new(HyStartConfig {
            low_ssthresh: p.get(&LOW_SSTHRESH) as f64,
            n_sampling: p.get(&N_SAMPLING).min(u32::MAX as u64) as u32,
            gate_low_window: p.get(&GATE_LOW_WINDOW),
        }))),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: SIGNALS,
};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::startup::Startup;
    use crate::Phase;
    use crate::testkit::{at_ms, ms, Sender, MSS};

    pub(crate) fn paper(cfg: HyStartConfig) -> Startup {
        Startup::HyStart(HyStart::new(cfg))
    }

    #[test]
    fn eta_is_the_papers_max_of_two_and_a_sixteenth_rounded_up() {
        // ALGORITHMS.md §8.7: 2 → 2, 20 → 2, 80 → 5, 128 → 8, 200 → 13.
        for (rtt, eta) in [(2, 2), (20, 2), (80, 5), (128, 8), (200, 13), (33, 3)] {
            assert_eq!(eta_ms(rtt), eta, "η for lastRTT = {rtt} ms");
        }
    }

    #[test]
    fn the_ack_train_fires_when_the_train_spans_half_the_minimum_rtt() {
        let mut s = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        // Round 1, t=100..119 ms: 20 ACKs 1 ms apart, RTT 100 ms; the train spans 19 ms < 50 ms.
        assert_eq!(s.flight_acks(at_ms(100), ms(1), |_| Some(ms(100))), None);
        // Round 2, t=200..239 ms: 40 ACKs; 39 ms < 50 ms.
        assert_eq!(s.flight_acks(at_ms(200), ms(1), |_| Some(ms(100))), None);
        // Round 3, t=300 ms on: 80 ACKs; the ACK at t=350 ms makes the train 50 ms = dMin/2 long.
        assert_eq!(s.flight(), 80);
        let fired = s.flight_acks(at_ms(300), ms(1), |_| Some(ms(100)));
        assert_eq!(fired, Some(50), "the 51st ACK of the round (t=350 ms) reaches dMin/2");
        assert_eq!(s.exit(), Some((ExitReason::AckTrain, 130.0)), "80 + 50 segments when the train reached dMin/2");
        assert_eq!(s.c.ssthresh(), Ssthresh::Bytes(130.0 * MSS as f64), "ssthresh = cwnd");
    }

    #[test]
    fn acks_two_milliseconds_apart_do_not_extend_the_train() {
        // "Jiffies − lastJiffies < msecs_to_jiffies(2)" is strict: ACKs exactly 2 ms apart never form
        // a train, and with a flat RTT nothing else fires.
        let mut s = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        for round in 1..=5 {
            let fired = s.flight_acks(at_ms(1000 * round), ms(2), |_| Some(ms(100)));
            assert_eq!(fired, None, "round {round}: no train with 2 ms spacing");
        }
        assert_eq!(s.cwnd(), 20.0 * 32.0, "plain doubling for five rounds");
    }

    #[test]
    fn the_delay_test_compares_the_first_samples_with_the_previous_rounds() {
        // ACKs 3 ms apart: never a train.
        let mut s = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        // Round 1: RTT 80 ms; lastRTT is ∞, no delay test.
        assert_eq!(s.flight_acks(at_ms(100), ms(3), |_| Some(ms(80))), None);
        // Round 2: RTT 84 ms < 80 + η(80) = 85 ms.
        assert_eq!(s.flight_acks(at_ms(300), ms(3), |_| Some(ms(84))), None);
        // Round 3: lastRTT = 84, η = ⌈84/16⌉ = 6; 89 ms < 90 ms.
        assert_eq!(s.flight_acks(at_ms(600), ms(3), |_| Some(ms(89))), None);
        // Round 4: lastRTT = 89, η = 6; 90 ms < 95 ms. The baseline moves with every round, so a
        // slow rise (80 → 90 ms over three rounds) is never an increase.
        assert_eq!(s.flight_acks(at_ms(1000), ms(3), |_| Some(ms(90))), None);
        // Round 5 (320 ACKs): the first 8 samples at 96 ms ≥ 90 + 6: found on the 8th sample.
        let fired = s.flight_acks(at_ms(2000), ms(3), |_| Some(ms(96)));
        assert_eq!(fired, Some(7), "the 8th sample of the round decides");
        assert_eq!(s.exit(), Some((ExitReason::DelayIncrease, 320.0 + 7.0)));
    }

    #[test]
    fn cur_rtt_is_the_minimum_of_the_first_samples_only() {
        let mut s = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        assert_eq!(s.flight_acks(at_ms(100), ms(3), |_| Some(ms(80))), None);
        // Round 2: one 80 ms sample among the first eight keeps curRTT at 80; the 100 ms samples
        // after the eighth are not looked at.
        let fired = s.flight_acks(at_ms(300), ms(3), |i| Some(ms(if i == 3 { 80 } else { 100 })));
        assert_eq!(fired, None, "min of the first 8 samples is 80 ms: no increase");
        // Round 3: the sample at 80 ms comes ninth: too late to count; 100 ≥ 80 + 5 at the 8th.
        let fired = s.flight_acks(at_ms(600), ms(3), |i| Some(ms(if i == 8 { 80 } else { 100 })));
        assert_eq!(fired, Some(7));
    }

    #[test]
    fn detection_is_skipped_while_the_window_is_at_or_below_the_low_window() {
        // RTT 20 ms (dMin/2 = 10 ms), ACKs 1 ms apart, IW 10.
        // t=20..29 ms, round 1: cwnd 10 → 20. The first ACK starts the round at t=20; the ACKs at
        // cwnd 10..16 (t=20..26) are skipped, so lastJiffies stays at 20 and the ACK at t=27
        // (cwnd 17) is 7 ms after it: the train is broken for this round.
        let mut s = Sender::new(paper(HyStartConfig::new(MSS)), 10);
        assert_eq!(s.flight_acks(at_ms(20), ms(1), |_| Some(ms(20))), None);
        // Round 2 at cwnd 20: a train from t=40 reaches 10 ms at t=50, the 11th ACK.
        assert_eq!(s.flight_acks(at_ms(40), ms(1), |_| Some(ms(20))), Some(10));
        assert_eq!(s.exit(), Some((ExitReason::AckTrain, 30.0)));
    }

    #[test]
    fn with_the_literal_reading_a_detection_below_the_low_window_latches_and_never_exits() {
        // IW 10, ACKs 1 ms apart, RTT 12 ms (dMin/2 = 6 ms), gate_low_window = false.
        // Round 1, t=20..29 ms: the train reaches 6 ms at t=26 with cwnd 16, not > 16: found
        // latches, ssthresh stays infinite, and as every test is guarded by !found nothing checks
        // again, not even when later rounds show RTTs rising by 10 ms each.
        let cfg = HyStartConfig { gate_low_window: false, ..HyStartConfig::new(MSS) };
        let mut s = Sender::new(paper(cfg), 10);
        assert_eq!(s.flight_acks(at_ms(20), ms(1), |_| Some(ms(12))), None, "found at cwnd 16 sets no ssthresh");
        for round in 1..=4 {
            assert_eq!(s.flight_acks(at_ms(1000 * round), ms(1), |_| Some(ms(12 + 10 * round))), None);
        }
        assert_eq!(s.c.phase(), Phase::SlowStart, "plain slow start until a loss");
        assert_eq!(s.cwnd(), 20.0 * 16.0);
        // The default gate skips that early train and exits in round 2 instead.
        let mut g = Sender::new(paper(HyStartConfig::new(MSS)), 10);
        assert_eq!(g.flight_acks(at_ms(20), ms(1), |_| Some(ms(12))), None);
        assert_eq!(g.flight_acks(at_ms(1000), ms(1), |_| Some(ms(12))), Some(6));
    }

    #[test]
    fn a_timeout_clears_found_and_dmin() {
        let mut h = HyStart::new(HyStartConfig::new(MSS));
        let view = CcView { cwnd: 40.0 * MSS as f64, ssthresh: Ssthresh::Infinite, mss: MSS, round: 3, min_rtt: None, new_round: false };
        let ack = |t: u64, rtt: u64| AckEvent {
            now: at_ms(t),
            newly_acked: MSS,
            ack_seq: t * MSS,
            snd_nxt: t * MSS + 40 * MSS,
            rtt: Some(ms(rtt)),
            flight_size: 40 * MSS,
            delivered: t * MSS,
            ..AckEvent::default()
        };
        // t=100..110 ms: ACKs 1 ms apart at RTT 20 ms: the train reaches 10 ms at t=110.
        for t in 100..110 {
            assert_eq!(h.on_ack(&view, &ack(t, 20)).exit, None);
        }
        assert_eq!(h.on_ack(&view, &ack(110, 20)).exit, Some(ExitReason::AckTrain));
        assert_eq!(h.d_min, Some(20));
        h.on_congestion(&view, &CongestionEvent { now: at_ms(500), kind: CongestionKind::FastRetransmit, flight_size: 0, enter_recovery: true });
        assert!(h.found.is_some(), "a fast retransmit changes nothing");
        h.on_congestion(&view, &CongestionEvent { now: at_ms(900), kind: CongestionKind::Timeout, flight_size: 0, enter_recovery: false });
        assert_eq!((h.found, h.d_min), (None, None), "Timeout: found ← 0; dMin ← ∞");
    }
}
