//! Limited Slow-Start — RFC 3742 (ALGORITHMS.md §4).
//!
//! Above `max_ssthresh` slow start is throttled so that the window grows by at most about
//! `max_ssthresh/2` segments per round trip, instead of doubling: with a window of thousands of
//! segments, one doubling can drop thousands of packets in one round trip. Below `max_ssthresh` it
//! is standard slow start. RFC 3742 §2:
//!
//! ```text
//! For each arriving ACK in slow-start:
//!   If (cwnd <= max_ssthresh)
//!      cwnd += MSS;
//!   else
//!      K = int(cwnd/(0.5 max_ssthresh));
//!      cwnd += int(MSS/K);
//! ```
//!
//! Parameters: `max_ssthresh` (a window; RFC 3742 RECOMMENDS 100 segments). Exit, loss, timeout and
//! congestion avoidance are RFC 5681's: LSS changes only the increase.
//!
//! Below `max_ssthresh` the increase is the lab's standard `min(N, SMSS)` (RFC 3742: "the same as
//! ... standard slow-start"); above it `int(MSS/K)` bytes per ACK with the RFC's integer division
//! (§4.4: the integer `K` and byte count are part of the test vectors).

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView};

/// RFC 3742's recommended `max_ssthresh`, in segments.
pub const MAX_SSTHRESH_SEGMENTS: u64 = 100;

/// Configuration of [`Lss`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LssConfig {
    /// `max_ssthresh` in bytes (positive).
    pub max_ssthresh: u64,
}

impl LssConfig {
    /// RFC 3742's recommended configuration for segments of `mss` bytes.
    pub fn recommended(mss: u64) -> LssConfig {
        LssConfig { max_ssthresh: MAX_SSTHRESH_SEGMENTS * mss }
    }
}

/// Limited Slow-Start.
#[derive(Clone, Debug)]
pub struct Lss {
    cfg: LssConfig,
}

impl Lss {
    /// A fresh instance for one connection.
    pub fn new(cfg: LssConfig) -> Lss {
        debug_assert!(cfg.max_ssthresh > 0, "max_ssthresh = 0 is refused when the scenario is read");
        Lss { cfg }
    }

    /// The increase (bytes) for one ACK of `newly_acked` bytes at window `cwnd` (bytes).
    pub fn increase(&self, cwnd: f64, newly_acked: u64, mss: u64) -> f64 {
        let max_ssthresh = self.cfg.max_ssthresh as f64;
        if cwnd <= max_ssthresh {
            // "If (cwnd <= max_ssthresh) cwnd += MSS"
            newly_acked.min(mss) as f64
        } else {
            // "K = int(cwnd/(0.5 max_ssthresh)); cwnd += int(MSS/K)"
            let k = (cwnd / (0.5 * max_ssthresh)).floor() as u64;
            (mss / k.max(1)) as f64
        }
    }
}

impl StartupAlgorithm for Lss {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        StartupAction::grow(self.increase(view.cwnd, ack.newly_acked, view.mss))
    }
}


use crate::decl::{AlgorithmInfo, Param, Range, no_check};

/// `max_ssthresh` of `startup = { algorithm = "lss", ... }`.
pub const MAX_SSTHRESH: Param<u64> = Param::window("max_ssthresh", "100pkt", "above this window growth is limited to about max_ssthresh/2 segments per RTT; positive (RFC 3742 recommends 100 segments)").range(Range::Above(0.0));

/// The declaration of `lss` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "lss",
        role: "startup",
        summary: "Limited Slow-Start: standard slow start up to max_ssthresh, then int(SMSS/K) per ACK with K = int(cwnd/(max_ssthresh/2)), about max_ssthresh/2 segments per RTT",
        source: "RFC 3742 (ALGORITHMS.md §4)",
        params: &[MAX_SSTHRESH.info],
    },
    build: super::Build::Native(|p, _| super::Startup::Lss(Lss::new(LssConfig { max_ssthresh: p.get(&MAX_SSTHRESH) }))),
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
    use crate::testkit::{controller, one_round, MSS};
    use crate::startup::Startup;
    use crate::Ssthresh;

    #[test]
    fn a_window_of_1000_segments_grows_by_a_twentieth_segment_per_ack() {
        // ALGORITHMS.md §4.5: cwnd 1000 segments, max_ssthresh 100 → K = 20, 1448/20 = 72 bytes.
        let lss = Lss::new(LssConfig::recommended(1448));
        assert_eq!(lss.increase(1000.0 * 1448.0, 1448, 1448), 72.0);
        assert_eq!(lss.increase(100.0 * 1448.0, 1448, 1448), 1448.0, "at max_ssthresh: standard slow start");
        assert_eq!(lss.increase(101.0 * 1448.0, 1448, 1448), 724.0, "just above: K = 2, half a segment");
    }

    /// Drives a controller round by round with an ACK per segment; returns the window (segments)
    /// at the start of every round until it reaches `target` segments.
    fn trace(max_ssthresh_pkts: u64, target: u64) -> Vec<f64> {
        let lss = Lss::new(LssConfig { max_ssthresh: max_ssthresh_pkts * MSS });
        let mut c = controller(Startup::Lss(lss), 1, Ssthresh::Infinite);
        let mut seq = 0;
        let mut windows = vec![1.0];
        let mut round = 0;
        while *windows.last().unwrap() < target as f64 {
            round += 1;
            windows.push(one_round(&mut c, round, 1, &mut seq));
        }
        windows
    }

    #[test]
    fn the_increase_per_round_never_exceeds_half_of_max_ssthresh_above_it() {
        for max in [10, 40, 100] {
            let w = trace(max, 20 * max);
            for pair in w.windows(2) {
                if pair[0] > max as f64 {
                    let grown = pair[1] - pair[0];
                    assert!(grown <= max as f64 / 2.0, "max_ssthresh {max}: from {:.1} the window grew {grown:.2} > {} segments in a round", pair[0], max / 2);
                    assert!(grown > 0.45 * max as f64, "max_ssthresh {max}: growth {grown:.2} from {:.1} should stay near max_ssthresh/2", pair[0]);
                }
            }
        }
    }

    #[test]
    fn below_max_ssthresh_it_doubles_like_slow_start() {
        let w = trace(100, 64);
        assert_eq!(w, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
    }

    #[test]
    fn from_one_to_5000_segments_takes_about_105_rounds() {
        // ALGORITHMS.md §4.5: 105 rounds in a fluid per-ACK model (log2(100) + 4900/50 = 104.6).
        // The RFC's integer division int(MSS/K) drops the fraction of a byte on every ACK, which
        // costs three more rounds at SMSS 1000 (108; 107 at 1448).
        let w = trace(100, 5000);
        let rounds = w.len() - 1;
        assert!((105..=108).contains(&rounds), "1 → 5000 segments took {rounds} rounds, expected 105 (fluid) to 108 (integer bytes)");
    }
}
