//! Hoe's packet-pair ssthresh estimate — J. Hoe, "Improving the Start-up Behavior of a Congestion
//! Control Scheme for TCP", SIGCOMM 1996; the ns-2 `tcp-newreno.cc` startup that the Paced Start
//! paper calls "NewReno" (its Figure 9, §5.1.2) (ALGORITHMS.md §11.2).
//!
//! Two segments that leave back to back are spread out by the bottleneck to its serialisation
//! time, and their ACKs come back with that spacing. Hoe estimates the bottleneck bandwidth from
//! the gap of such a pair of ACKs and sets "ssthresh = bandwidth × RTT (the BDP), so slow start
//! ends near the pipe size"; the ns-2 code only ever lowers ssthresh. Slow start itself is
//! unchanged (`cwnd += min(N, SMSS)`), and startup ends the ordinary way when cwnd reaches the
//! estimate (exit reason `ssthresh`).
//!
//! Parameters: none. The estimate measures the path's *capacity*, not the bandwidth left by other
//! traffic, so it overshoots under cross traffic (Paced Start §5.1.2), and N flows may each find
//! the whole capacity ([HyStart]).
//!
//! NOTE (which pair): ns-2 takes the 2nd and 3rd ACKs, whose segments were sent back to back only
//! with an initial window of 1 or of 3 and more (with 2, the 3rd segment leaves one RTT after the
//! 2nd). [`PacketPairEstimator`] takes the first two consecutive ACKs whose data was in flight
//! together — the second ACK acknowledges nothing sent after the first ACK arrived — which is the
//! 2nd/3rd pair for IW 1 and the 1st/2nd for larger windows. A pair released by the delayed-ACK
//! timer is skipped, and the bandwidth counts the bytes the second ACK covers (`N / gap`), so an
//! ACK for two segments does not halve the estimate (the §11.2 delayed-ACK pitfall).
//!
//! NOTE (which RTT): ns-2's `basertt` is the first ACK's RTT; this uses the smallest RTT sample so
//! far, which is that sample or a smaller one, and is defined when Karn's rule withholds a sample.

use crate::startup::abc::AfterCongestion;
use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, Ssthresh};
use startlab_units::Time;

/// The previous ACK of a candidate pair.
#[derive(Clone, Copy, Debug)]
struct PairStart {
    /// When it arrived.
    at: Time,
    /// `SND.NXT` when it arrived: data up to here was already in flight.
    snd_nxt: u64,
    /// Released by the receiver's delayed-ACK timer (its timing says nothing about the path).
    timer_triggered: bool,
}

/// Hoe's packet-pair estimate of the BDP from the dispersion of the first back-to-back pair of
/// ACKs: `ssthresh = bandwidth × RTT_min`, with `bandwidth = bytes acked by the second ACK / gap`.
/// Reusable by any startup that wants the estimate (Hoe's slow start, Smooth-start's
/// `ssthresh_estimator = "packet-pair"`). It estimates once.
#[derive(Clone, Debug, Default)]
pub struct PacketPairEstimator {
    prev: Option<PairStart>,
    /// The estimate in bytes, whole segments, once made.
    estimate: Option<f64>,
    /// No estimate will be made (a congestion signal came first).
    abandoned: bool,
}

impl PacketPairEstimator {
    /// An estimator that has seen no ACK.
    pub fn new() -> PacketPairEstimator {
        PacketPairEstimator::default()
    }

    /// The estimate (bytes), once made.
    pub fn estimate(&self) -> Option<f64> {
        self.estimate
    }

    /// Stops estimating (e.g. after a congestion signal: later ACKs are no longer a clean pair).
    pub fn abandon(&mut self) {
        self.abandoned = true;
    }

    /// Feeds an ACK that advanced `SND.UNA`; returns the estimate (bytes, rounded down to whole
    /// segments) on the ACK that completes it, and `None` on every other ACK.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> Option<f64> {
        if self.estimate.is_some() || self.abandoned {
            return None;
        }
        let this = PairStart { at: ack.now, snd_nxt: ack.snd_nxt, timer_triggered: ack.timer_triggered };
        let prev = self.prev.replace(this)?;
        // Both ACKs' data in flight together, neither ACK held back by the receiver's timer.
        let back_to_back = ack.ack_seq <= prev.snd_nxt && !prev.timer_triggered && !ack.timer_triggered;
        let gap = ack.now.saturating_since(prev.at).as_nanos();
        let rtt = view.min_rtt?.as_nanos();
        if !back_to_back || gap == 0 || rtt == 0 {
            // ns-2 guards "ack3 == ack2"; here the next pair is tried instead.
            return None;
        }
        // bandwidth × RTT = N / gap × RTT, in integer bytes, then whole segments as ns-2's
        // floor(basertt / gap) packets.
        let bytes = (ack.newly_acked as u128 * rtt as u128 / gap as u128) as u64;
        let estimate = (bytes / view.mss * view.mss) as f64;
        self.estimate = Some(estimate);
        Some(estimate)
    }
}

/// Slow start with Hoe's packet-pair ssthresh.
#[derive(Clone, Debug, Default)]
pub struct Hoe {
    estimator: PacketPairEstimator,
    after: AfterCongestion,
}

impl Hoe {
    /// A fresh instance for one connection.
    pub fn new() -> Hoe {
        Hoe::default()
    }
}

/// ns-2: "if new_ssthresh < ssthresh: ssthresh = new_ssthresh" — the estimate only ever lowers it.
pub(crate) fn lower_ssthresh(view: &CcView, estimate: Option<f64>) -> Option<f64> {
    let e = estimate?;
    match view.ssthresh {
        Ssthresh::Bytes(s) if s <= e => None,
        _ => Some(e),
    }
}

impl StartupAlgorithm for Hoe {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        if !self.after.first_slow_start(view) {
            self.estimator.abandon();
        }
        let set_ssthresh = lower_ssthresh(view, self.estimator.on_ack(view, ack));
        StartupAction { increase: ack.newly_acked.min(view.mss) as f64, set_ssthresh, ..StartupAction::default() }
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.after.congestion();
        self.estimator.abandon();
    }
}


use crate::decl::{AlgorithmInfo, no_check};

/// The declaration of `hoe` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "hoe",
        role: "startup",
        summary: "Hoe's packet-pair ssthresh (ns-2 NewReno startup): ssthresh = (bytes acked / gap of the first back-to-back ACK pair) x min RTT, only ever lowered; then slow start to it",
        source: "Hoe, SIGCOMM 1996; ns-2 tcp-newreno.cc; Paced Start paper Fig. 9 (ALGORITHMS.md §11.2)",
        params: &[],
    },
    build: super::Build::Native(|_, _| super::Startup::Hoe(Hoe::new())),
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
    use crate::testkit::{controller, MSS};
    use crate::startup::Startup;
    use crate::{ExitReason, Phase};
    use startlab_units::Dur;

    fn view(ssthresh: Ssthresh, min_rtt_ms: u64) -> CcView {
        CcView { cwnd: 3.0 * MSS as f64, ssthresh, mss: MSS, round: 0, min_rtt: Some(Dur::from_millis(min_rtt_ms)), new_round: false }
    }

    /// An ACK at `now_us` microseconds for segment `seg` (1-based), SND.NXT at `snd_nxt_segs`.
    fn ack_at(now_us: u64, seg: u64, snd_nxt_segs: u64) -> AckEvent {
        AckEvent {
            now: Time(now_us * 1000),
            newly_acked: MSS,
            ack_seq: seg * MSS,
            snd_nxt: snd_nxt_segs * MSS,
            rtt: Some(Dur::from_millis(100)),
            delivered: seg * MSS,
            ..AckEvent::default()
        }
    }

    #[test]
    fn a_100ms_rtt_and_a_0_8ms_ack_gap_give_125_segments() {
        // ALGORITHMS.md §11.2 test vector. IW 2: both segments left at t=0.
        let mut e = PacketPairEstimator::new();
        let v = view(Ssthresh::Infinite, 100);
        // t=100.0ms: ACK 1, SND.NXT = 2 segments.
        assert_eq!(e.on_ack(&v, &ack_at(100_000, 1, 2)), None);
        // t=100.8ms: ACK 2 covers data sent before ACK 1 arrived: a pair.
        assert_eq!(e.on_ack(&v, &ack_at(100_800, 2, 4)), Some(125.0 * MSS as f64));
        assert_eq!(e.on_ack(&v, &ack_at(101_600, 3, 6)), None, "the estimate is made once");
        assert_eq!(e.estimate(), Some(125.0 * MSS as f64));
    }

    #[test]
    fn with_an_initial_window_of_one_the_pair_is_the_second_and_third_ack() {
        let mut e = PacketPairEstimator::new();
        let v = view(Ssthresh::Infinite, 100);
        // t=100ms: ACK 1 (SND.NXT 1 segment); it releases segments 2 and 3 back to back.
        assert_eq!(e.on_ack(&v, &ack_at(100_000, 1, 1)), None);
        // t=200ms: ACK 2 acknowledges segment 2, sent after ACK 1 arrived: not a pair with ACK 1.
        assert_eq!(e.on_ack(&v, &ack_at(200_000, 2, 3)), None, "a gap of one RTT is not a dispersion");
        // t=200.4ms: ACK 3 — segments 2 and 3 were in flight together.
        assert_eq!(e.on_ack(&v, &ack_at(200_400, 3, 5)), Some(250.0 * MSS as f64));
    }

    #[test]
    fn a_delayed_ack_for_two_segments_counts_both() {
        let mut e = PacketPairEstimator::new();
        let v = view(Ssthresh::Infinite, 100);
        let mut a1 = ack_at(100_000, 2, 4);
        a1.newly_acked = 2 * MSS;
        let mut a2 = ack_at(101_600, 4, 6);
        a2.newly_acked = 2 * MSS;
        e.on_ack(&v, &a1);
        assert_eq!(e.on_ack(&v, &a2), Some(125.0 * MSS as f64), "2 segments per 1.6 ms is 1 per 0.8 ms");
    }

    #[test]
    fn a_timer_released_ack_is_not_half_of_a_pair() {
        let mut e = PacketPairEstimator::new();
        let v = view(Ssthresh::Infinite, 100);
        let mut a1 = ack_at(100_000, 1, 3);
        a1.timer_triggered = true;
        e.on_ack(&v, &a1);
        assert_eq!(e.on_ack(&v, &ack_at(100_800, 2, 4)), None);
        assert_eq!(e.on_ack(&v, &ack_at(101_600, 3, 5)), Some(125.0 * MSS as f64), "the next clean pair is used");
    }

    #[test]
    fn the_estimate_only_ever_lowers_ssthresh() {
        let e = Some(125.0 * MSS as f64);
        assert_eq!(lower_ssthresh(&view(Ssthresh::Infinite, 100), e), e);
        assert_eq!(lower_ssthresh(&view(Ssthresh::Bytes(200_000.0), 100), e), e);
        assert_eq!(lower_ssthresh(&view(Ssthresh::Bytes(64_000.0), 100), e), None, "an ssthresh of 64 segments stays");
    }

    #[test]
    fn slow_start_then_ends_at_the_estimate() {
        let mut c = controller(Startup::Hoe(Hoe::new()), 2, Ssthresh::Infinite);
        c.on_first_send(2 * MSS);
        // t=100ms, 100.8ms: the first pair → ssthresh 125 segments.
        c.on_ack(&ack_at(100_000, 1, 2));
        c.on_ack(&ack_at(100_800, 2, 4));
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(125_000.0));
        assert_eq!(c.cwnd(), 4000.0, "slow start goes on: one SMSS per ACK");
        let mut seg = 2;
        while c.phase() == Phase::SlowStart {
            seg += 1;
            c.on_ack(&ack_at(100_800 + seg * 800, seg, seg + 2));
        }
        let exit = c.startup_exit().unwrap();
        assert_eq!((exit.reason, exit.cwnd), (ExitReason::Ssthresh, 125_000.0), "startup ends when cwnd reaches the estimate");
    }
}
