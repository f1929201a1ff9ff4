//! Byte Counting as the papers use it — Barakat & Altman, "Performance of Short TCP Transfers",
//! §4.2 (ALGORITHMS.md §5.2, "BC").
//!
//! "Upon the receipt of an ACK, the window is increased during the first SS phase by the number of
//! packets covered by the ACK rather than by one packet ... This is equivalent to reducing d from 2
//! (case of STCP) to 1." The window grows by every byte acknowledged, so a receiver that delays its
//! ACKs no longer slows slow start down: the window doubles per round trip whatever the ACK ratio.
//!
//! Parameters: none.
//!
//! NOTE: the paper adds "with a maximum window increase of two packets", which is RFC 3465's
//! `L = 2` — available as `abc` with `l = 2`. `bc` is the uncapped form the lab's brief asks for
//! (also Linux's `tcp_slow_start`, which credits every newly acknowledged packet): the two differ
//! only on ACKs that cover more than two segments (stretch ACKs, the ACK that fills a hole).
//!
//! The paper applies BC to "the first SS phase" only; a slow start after a congestion signal is
//! standard slow start, `cwnd += min(N, SMSS)` (as RFC 3465 §2.3 asks after a timeout).

use crate::startup::abc::AfterCongestion;
use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent};

/// Uncapped byte counting in the first slow start.
#[derive(Clone, Debug, Default)]
pub struct Bc {
    after: AfterCongestion,
}

impl Bc {
    /// A fresh instance for one connection.
    pub fn new() -> Bc {
        Bc::default()
    }
}

impl StartupAlgorithm for Bc {
    /// First slow start: `cwnd += N` (d = 1 whatever the ACK ratio); later: `cwnd += min(N, SMSS)`.
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let n = ack.newly_acked;
        let counted = if self.after.first_slow_start(view) { n } else { n.min(view.mss) };
        StartupAction::grow(counted as f64)
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.after.congestion();
    }
}


use crate::decl::{AlgorithmInfo, no_check};

/// The declaration of `bc` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "bc",
        role: "startup",
        summary: "Byte Counting (d = 1): cwnd += N per ACK, uncapped, in the first slow start, so delayed ACKs do not slow it; packet counting after a congestion signal",
        source: "Barakat & Altman, Performance of Short TCP Transfers, §4.2 (ALGORITHMS.md §5.2)",
        params: &[],
    },
    build: super::Build::Native(|_, _| super::Startup::Bc(Bc::new())),
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
    use crate::testkit::{ack, controller, one_round, MSS};
    use crate::startup::{Abc, AbcConfig, Startup};
    use crate::{CongestionKind, Phase, Ssthresh, Time};

    #[test]
    fn bc_doubles_per_round_with_delayed_acks_and_with_stretch_acks() {
        for per_ack in [1, 2, 4] {
            let mut c = controller(Startup::Bc(Bc::new()), 4, Ssthresh::Infinite);
            let mut seq = 0;
            for round in 1..=4 {
                let w = one_round(&mut c, round, per_ack, &mut seq);
                assert_eq!(w, 4.0 * (1u64 << round) as f64, "{per_ack} segments per ACK, round {round}: cwnd should double");
            }
        }
    }

    #[test]
    fn stretch_acks_separate_bc_from_abc() {
        // ACKs covering 4 segments: ABC (L = 2) adds 2 per ACK (x1.5 per round), BC adds 4 (x2).
        let mut abc = controller(Startup::Abc(Abc::new(AbcConfig::default())), 8, Ssthresh::Infinite);
        let mut bc = controller(Startup::Bc(Bc::new()), 8, Ssthresh::Infinite);
        let (mut s1, mut s2) = (0, 0);
        assert_eq!(one_round(&mut abc, 1, 4, &mut s1), 12.0);
        assert_eq!(one_round(&mut bc, 1, 4, &mut s2), 16.0);
    }

    #[test]
    fn the_slow_start_after_a_timeout_counts_packets() {
        let mut c = controller(Startup::Bc(Bc::new()), 4, Ssthresh::Infinite);
        // t=100ms: an ACK for 4 segments doubles the window.
        c.on_ack(&ack(100, 4, 4 * MSS));
        assert_eq!(c.cwnd(), 8.0 * MSS as f64);
        // t=1.1s: timeout; cwnd = 1 SMSS.
        c.on_congestion(&CongestionEvent { now: Time(1_100_000_000), kind: CongestionKind::Timeout, flight_size: 8 * MSS, enter_recovery: false });
        assert_eq!(c.phase(), Phase::SlowStart);
        // t=1.2s: an ACK for 3 segments adds one SMSS.
        c.on_ack(&ack(1200, 3, 7 * MSS));
        assert_eq!(c.cwnd(), 2.0 * MSS as f64, "BC belongs to the first slow start only");
    }
}
