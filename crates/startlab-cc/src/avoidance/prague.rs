//! Prague congestion avoidance — draft-briscoe-iccrg-prague-congestion-control-04 §2.4, the
//! scalable congestion control of L4S (RFC 9331 §4.3), with the defaults of the Linux reference
//! implementation (`tcp_prague.c`) where the draft leaves a choice:
//!
//! * **Moving average of ECN feedback** (§2.4.1, DCTCP's): once per round (the controller's
//!   rounds), `alpha ← (1 − g)·alpha + g·F` with `F` the CE-marked bytes over the acknowledged
//!   bytes of the round (Accurate ECN's ECEB counter, RFC 9768) and `g = 1/16`. `alpha` starts at
//!   1 and stays there until the first CE mark (Linux: no update before `saw_ce`, "proof that
//!   there's an AQM on the path").
//! * **Multiplicative decrease on ECN feedback** (§2.4.2): on the first CE-marked ACK of a round
//!   trip `cwnd ← cwnd·(1 − alpha/2)` and `ssthresh` with it; further feedback in that round trip
//!   is suppressed (the sender's one ECN reduction per window of data). Not a loss episode: no
//!   retransmission, no recovery.
//! * **Additive increase** (§2.4.3): per ACK `cwnd += SMSS·A/cwnd` with `A` the acknowledged bytes
//!   that were not CE-marked, so that the increase over a round is proportional to `1 − p`
//!   (Linux: "additive increase uses unsaturated marking").
//! * **Reduced RTT-dependence** (§2.4.4): once `prague_rtt_transition` rounds have passed outside
//!   slow start (Linux: 500), a flow whose smoothed RTT `R` is below the reference
//!   `prague_rtt_target` `R0` (25 ms) scales its additive increase by `(R/R0)²` — its rate then
//!   grows by one segment per `R0²`, as a flow with RTT `R0` — and waits at least `R0` between
//!   two EWMA updates and between two reductions (Linux's default `RTT_CONTROL_RATE`).
//! * **Loss and timeouts** are Reno's (RFC 5681: `ssthresh = max(FlightSize/2, 2·SMSS)`), as the
//!   draft's Reno-friendly loss response.
//!
//! NOTE: `R` is this module's RFC 6298 smoothing (gain 1/8) of the ACKs' RTT samples, as Linux's
//! `srtt`; the controller passes no smoothed RTT. Linux tracks cwnd in 2^-20 segments and steps the
//! socket's cwnd by one segment per ACK toward it; the lab's window is fractional bytes and takes
//! the new value at once. The classic-ECN fallback of Linux (off by default) and Prague's pacing
//! (§2.5: use `tcp.pacing`) are not part of this module.

use crate::{AckEvent, CcView, CongestionEvent, CongestionKind};
use startlab_units::{Dur, Time};

/// Prague's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PragueConfig {
    /// EWMA gain `g` of `alpha` (draft §2.4.1: 1/16).
    pub g: f64,
    /// Reference RTT `R0` of the reduced RTT-dependence (draft §2.4.4, Linux `prague_rtt_target`:
    /// 25 ms); zero turns it off.
    pub rtt_target: Dur,
    /// Rounds outside slow start before the reduced RTT-dependence applies (Linux
    /// `prague_rtt_transition`: 500).
    pub rtt_transition: u64,
}

impl Default for PragueConfig {
    fn default() -> Self {
        PragueConfig { g: Prague::G, rtt_target: Prague::RTT_TARGET, rtt_transition: Prague::RTT_TRANSITION }
    }
}

/// Prague (draft-briscoe-iccrg-prague-congestion-control-04).
#[derive(Clone, Debug)]
pub struct Prague {
    cfg: PragueConfig,
    /// The EWMA of the CE-marked fraction, in [0, 1].
    alpha: f64,
    /// A CE mark has been seen (before it `alpha` stays 1).
    saw_ce: bool,
    /// Bytes acknowledged and CE-marked bytes reported since the last EWMA update.
    round_acked: u64,
    round_ce: u64,
    /// A round ended since the last EWMA update.
    round_ended: bool,
    /// The last EWMA update and the last reduction on ECN feedback.
    last_update: Option<Time>,
    last_reduction: Option<Time>,
    /// Rounds completed outside slow start.
    ca_rounds: u64,
    /// RFC 6298 smoothed RTT of the ACKs' samples, seconds.
    srtt: Option<f64>,
}

impl Default for Prague {
    fn default() -> Self {
        Prague::new(PragueConfig::default())
    }
}

impl Prague {
    /// Draft §2.4.1: "g = 1/16" (Linux `PRAGUE_SHIFT_G` = 4).
    pub const G: f64 = 1.0 / 16.0;
    /// Draft §2.4.4 / Linux `prague_rtt_target`: 25 ms.
    pub const RTT_TARGET: Dur = Dur::from_millis(25);
    /// Linux `prague_rtt_transition`: 500 rounds.
    pub const RTT_TRANSITION: u64 = 500;
    /// RFC 6298 §2.3: the smoothed RTT's gain.
    const SRTT_GAIN: f64 = 1.0 / 8.0;

    /// Prague with `cfg`, `alpha` = 1.
    pub fn new(cfg: PragueConfig) -> Prague {
        debug_assert!((0.0..=1.0).contains(&cfg.g), "g must be in [0, 1]");
        Prague {
            cfg,
            alpha: 1.0,
            saw_ce: false,
            round_acked: 0,
            round_ce: 0,
            round_ended: false,
            last_update: None,
            last_reduction: None,
            ca_rounds: 0,
            srtt: None,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &PragueConfig {
        &self.cfg
    }

    /// The EWMA of the CE-marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The reduced RTT-dependence applies: on, and enough rounds outside slow start.
    fn rtt_independent(&self) -> bool {
        self.cfg.rtt_target > Dur::ZERO && self.ca_rounds >= self.cfg.rtt_transition
    }

    /// Less than `R0` has passed since `since` (never without an earlier event).
    fn within_target(&self, since: Option<Time>, now: Time) -> bool {
        since.is_some_and(|t| now.saturating_since(t) < self.cfg.rtt_target)
    }

    /// Every ACK the controller sees (`in_avoidance`: not in slow start): the round's counts, the
    /// smoothed RTT and, once a round has ended (and in the reduced RTT-dependence at least `R0`
    /// after the last), the EWMA update of §2.4.1.
    pub fn on_feedback(&mut self, view: &CcView, ack: &AckEvent, in_avoidance: bool) {
        if let Some(rtt) = ack.rtt {
            let r = rtt.as_secs_f64();
            self.srtt = Some(self.srtt.map_or(r, |s| s + Self::SRTT_GAIN * (r - s)));
        }
        self.round_acked += ack.newly_acked;
        self.round_ce += ack.ce_bytes;
        self.saw_ce |= ack.ce_bytes > 0;
        if view.new_round {
            self.round_ended = true;
            if in_avoidance {
                self.ca_rounds += 1;
            }
        }
        if !self.round_ended || (self.rtt_independent() && self.within_target(self.last_update, ack.now)) {
            return;
        }
        if self.saw_ce && self.round_acked > 0 {
            let f = (self.round_ce as f64 / self.round_acked as f64).min(1.0);
            self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * f;
        }
        self.last_update = Some(ack.now);
        self.round_acked = 0;
        self.round_ce = 0;
        self.round_ended = false;
    }

    /// Draft §2.4.3 and §2.4.4: `cwnd + SMSS·A/cwnd·s`, `A` the bytes acknowledged and not
    /// CE-marked, `s = min(1, (R/R0)²)` in the reduced RTT-dependence, else 1.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> f64 {
        let mss = view.mss as f64;
        let unmarked = ack.newly_acked.saturating_sub(ack.ce_bytes) as f64;
        let scale = match self.srtt {
            Some(r) if self.rtt_independent() => {
                let r0 = self.cfg.rtt_target.as_secs_f64();
                ((r * r) / (r0 * r0)).min(1.0)
            }
            _ => 1.0,
        };
        view.cwnd + mss * unmarked / view.cwnd * scale
    }

    /// ssthresh after a congestion signal: `cwnd·(1 − alpha/2)` on ECN feedback (§2.4.2), Reno's
    /// `FlightSize/2` on a loss or timeout. Pure: the trial the controller runs changes nothing.
    pub fn ssthresh_after_loss(&mut self, view: &CcView, ev: &CongestionEvent) -> f64 {
        match ev.kind {
            CongestionKind::Ecn => view.cwnd * (1.0 - self.alpha / 2.0),
            CongestionKind::FastRetransmit | CongestionKind::Timeout => super::Reno::default().ssthresh_after_loss(view, ev),
        }
    }

    /// The controller applied a congestion signal: a reduction on ECN feedback is remembered for
    /// the reduced RTT-dependence's spacing.
    pub fn on_congestion(&mut self, ev: &CongestionEvent) {
        if ev.kind == CongestionKind::Ecn {
            self.last_reduction = Some(ev.now);
        }
    }

    /// ECN feedback at `now` is suppressed: in the reduced RTT-dependence, less than `R0` after
    /// the last reduction (§2.4.4; Linux `prague_enter_cwr`).
    pub fn suppresses_ecn(&self, now: Time) -> bool {
        self.rtt_independent() && self.within_target(self.last_reduction, now)
    }
}

use crate::decl::{AlgorithmInfo, Param, Range};

/// `tcp.prague_g`: the EWMA gain.
pub const G: Param<f64> = Param::number("prague_g", "0.0625", "tcp.prague_g: EWMA gain g of alpha, the CE-marked fraction (draft-briscoe-iccrg-prague-congestion-control-04 §2.4.1: 1/16); from 0 to 1")
    .range(Range::Between(0.0, 1.0));
/// `tcp.prague_rtt_target`: the reference RTT of the reduced RTT-dependence.
pub const RTT_TARGET: Param<Dur> = Param::duration(
    "prague_rtt_target",
    "25ms",
    "tcp.prague_rtt_target: reference RTT R0 (§2.4.4, Linux prague_rtt_target): below it the additive increase is scaled by (RTT/R0)² and EWMA updates and reductions are at least R0 apart; \"0s\" turns this off",
);
/// `tcp.prague_rtt_transition`: rounds before the reduced RTT-dependence applies.
pub const RTT_TRANSITION: Param<u64> =
    Param::integer("prague_rtt_transition", "500", "tcp.prague_rtt_transition: rounds outside slow start before the reduced RTT-dependence applies (Linux prague_rtt_transition)");

/// The declaration of `congestion_avoidance = "prague"` (its entry in `avoidance::DECLS`; its
/// parameters are keys of the flow's `tcp` table).
pub const DECL: super::AvoidanceDecl = super::AvoidanceDecl {
    info: AlgorithmInfo {
        name: "prague",
        role: "avoidance",
        summary: "Prague (L4S): alpha <- (1-g)*alpha + g*F per round (F = CE-marked fraction, AccECN), cwnd *= 1 - alpha/2 once per RTT on CE, cwnd += SMSS*unmarked/cwnd per ACK scaled by (RTT/25ms)^2 below 25 ms; Reno on loss",
        source: "draft-briscoe-iccrg-prague-congestion-control-04 §2.4; Linux tcp_prague.c",
        params: &[G.info, RTT_TARGET.info, RTT_TRANSITION.info],
    },
    build: |p, _| super::Avoidance::Prague(Prague::new(PragueConfig { g: p.get(&G), rtt_target: p.get(&RTT_TARGET), rtt_transition: p.get(&RTT_TRANSITION) })),
    needs_l4s: true,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ssthresh;

    const MSS: u64 = 1000;

    fn view(cwnd_segments: f64, new_round: bool) -> CcView {
        CcView { cwnd: cwnd_segments * MSS as f64, ssthresh: Ssthresh::Bytes(0.0), mss: MSS, round: 0, min_rtt: None, new_round }
    }

    fn ack(ms: u64, acked_segments: u64, ce_segments: u64, rtt_ms: u64) -> AckEvent {
        AckEvent {
            now: Time(ms * 1_000_000),
            newly_acked: acked_segments * MSS,
            ce_bytes: ce_segments * MSS,
            rtt: Some(Dur::from_millis(rtt_ms)),
            ..AckEvent::default()
        }
    }

    fn ecn(ms: u64) -> CongestionEvent {
        CongestionEvent { now: Time(ms * 1_000_000), kind: CongestionKind::Ecn, flight_size: 0, enter_recovery: false }
    }

    /// One round of ten one-segment ACKs, `marked` of them CE-marked, the last ending the round.
    fn round(p: &mut Prague, start_ms: u64, marked: u64) {
        for i in 0..10 {
            p.on_feedback(&view(10.0, i == 9), &ack(start_ms + i, 1, (i < marked) as u64, 20), true);
        }
    }

    #[test]
    fn alpha_is_the_ewma_of_the_marked_fraction_per_round_from_the_first_mark() {
        let mut p = Prague::default();
        round(&mut p, 0, 0);
        assert_eq!(p.alpha(), 1.0, "no mark yet: alpha stays 1");
        // A round with 3 of 10 marked: alpha = 15/16 + 1/16 * 0.3 = 0.95625.
        round(&mut p, 100, 3);
        assert!((p.alpha() - 0.95625).abs() < 1e-12, "alpha {}", p.alpha());
        // Then an unmarked round: alpha = 15/16 * 0.95625 = 0.896484375.
        round(&mut p, 200, 0);
        assert!((p.alpha() - 0.896_484_375).abs() < 1e-12, "alpha {}", p.alpha());
        // Marks reported within a round count only at its end.
        p.on_feedback(&view(10.0, false), &ack(300, 1, 1, 20), true);
        assert!((p.alpha() - 0.896_484_375).abs() < 1e-12);
    }

    #[test]
    fn ecn_feedback_cuts_cwnd_by_alpha_over_two_and_loss_halves_flight_size() {
        let mut p = Prague::default();
        assert_eq!(p.ssthresh_after_loss(&view(40.0, false), &ecn(0)), 20.0 * MSS as f64, "alpha 1: half");
        round(&mut p, 0, 10);
        round(&mut p, 100, 0);
        // alpha = 15/16 (1 round at F = 1 from 1, then one at 0): cwnd * (1 - 15/32).
        let alpha = 15.0 / 16.0;
        assert!((p.alpha() - alpha).abs() < 1e-12);
        let ss = p.ssthresh_after_loss(&view(40.0, false), &ecn(200));
        assert!((ss - 40.0 * MSS as f64 * (1.0 - alpha / 2.0)).abs() < 1e-9, "ssthresh {ss}");
        let loss = CongestionEvent { kind: CongestionKind::FastRetransmit, flight_size: 30 * MSS, ..ecn(200) };
        assert_eq!(p.ssthresh_after_loss(&view(40.0, false), &loss), 15.0 * MSS as f64);
    }

    #[test]
    fn additive_increase_counts_the_unmarked_bytes_and_scales_below_the_reference_rtt() {
        let mut p = Prague::new(PragueConfig { rtt_transition: 2, ..PragueConfig::default() });
        // 2 segments acked, 1 marked, cwnd 10: + 1000 * 1000 / 10000 = 100 bytes.
        assert_eq!(p.on_ack(&view(10.0, false), &ack(0, 2, 1, 5)), 10_100.0);
        assert_eq!(p.on_ack(&view(10.0, false), &ack(0, 2, 3, 5)), 10_000.0, "more marked than acked adds nothing");
        // After the transition, RTT 5 ms against 25 ms: the increase is scaled by (5/25)² = 1/25.
        round(&mut p, 0, 0);
        round(&mut p, 100, 0);
        p.srtt = Some(0.005);
        assert!((p.on_ack(&view(10.0, false), &ack(300, 2, 0, 5)) - (10_000.0 + 200.0 / 25.0)).abs() < 1e-9);
        // At or above the reference the increase is not scaled.
        p.srtt = Some(0.030);
        assert_eq!(p.on_ack(&view(10.0, false), &ack(400, 2, 0, 30)), 10_200.0);
    }

    #[test]
    fn in_the_reduced_rtt_dependence_updates_and_reductions_are_a_reference_rtt_apart() {
        let mut p = Prague::new(PragueConfig { rtt_transition: 1, ..PragueConfig::default() });
        assert!(!p.suppresses_ecn(Time(0)));
        round(&mut p, 0, 5); // the transition round: alpha updated (saw CE), rtt-independent from now
        let after_first = p.alpha();
        // A 10 ms round ends 10 ms later: less than 25 ms since the update, so no update yet...
        round(&mut p, 10, 10);
        assert_eq!(p.alpha(), after_first);
        // ...and the next ACK after 25 ms takes both rounds' counts.
        p.on_feedback(&view(10.0, false), &ack(40, 1, 1, 10), true);
        let f = 11.0 / 11.0;
        assert!((p.alpha() - ((1.0 - Prague::G) * after_first + Prague::G * f)).abs() < 1e-12);
        p.on_congestion(&ecn(50));
        assert!(p.suppresses_ecn(Time(70_000_000)), "20 ms after a reduction");
        assert!(!p.suppresses_ecn(Time(75_000_000)), "25 ms after it");
        // Before the transition (or with R0 = 0) nothing is suppressed.
        let mut q = Prague::new(PragueConfig { rtt_target: Dur::ZERO, rtt_transition: 0, ..PragueConfig::default() });
        q.on_congestion(&ecn(50));
        assert!(!q.suppresses_ecn(Time(51_000_000)));
    }

    #[test]
    fn the_controller_cuts_by_alpha_over_two_without_a_recovery_and_stays_in_avoidance() {
        use crate::avoidance::Avoidance;
        use crate::startup::{SlowStart, Startup};
        use crate::{CcConfig, Controller, Phase};
        let cfg = CcConfig { mss: MSS, initial_window: 20 * MSS, initial_ssthresh: Ssthresh::Bytes(20.0 * MSS as f64), loss_window: MSS, cwnd_validation: false, linux_ss_clamp: false };
        let mut c = Controller::new(cfg, Startup::SlowStart(SlowStart::default()), Avoidance::Prague(Prague::default()));
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
        // One-segment ACKs of flights of 20: the first ACK fixes the first round's end (segment
        // 20), the 21st ends it and the 41st the next. The second round's ACKs (22 to 41) carry
        // ten CE-marked segments: F = 1/2, alpha = 15/16 + 1/16 * 1/2 = 31/32 after the 41st.
        for seg in 1..=41u64 {
            let ce = if seg >= 22 && seg % 2 == 0 { MSS } else { 0 };
            let ev = AckEvent { ack_seq: seg * MSS, snd_nxt: seg.div_ceil(20) * 20 * MSS, ce_bytes: ce, ..ack(seg, 1, 0, 20) };
            c.on_ack(&ev);
        }
        let cwnd = c.cwnd();
        c.on_congestion(&ecn(301));
        let alpha = 31.0 / 32.0;
        assert!((c.cwnd() - cwnd * (1.0 - alpha / 2.0)).abs() < 1e-6, "cwnd {} from {cwnd}", c.cwnd());
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(c.cwnd()));
        assert_eq!((c.phase(), c.reductions()), (Phase::CongestionAvoidance, 1), "no recovery: avoidance goes on");
    }
}
