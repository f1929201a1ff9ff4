//! Appropriate Byte Counting — RFC 3465 §2 (ALGORITHMS.md §5.1).
//!
//! Slow start counts the bytes an ACK acknowledges instead of the ACK itself, up to a limit `L`:
//! "cwnd += min(N, L*SMSS)". With a receiver that acknowledges every second segment, `L = 2`
//! restores the doubling per round trip that delayed ACKs take away from packet counting (Barakat's
//! `d = 1` instead of `d = 2`), and the limit keeps a stretch ACK or ACK division from producing a
//! burst.
//!
//! Parameters: `l` — the limit `L` in segments, default 2 (RFC 3465 §2.2: an implementation "MAY
//! use L = 2" and MUST NOT use more). Congestion avoidance, loss and timeout handling are RFC 5681's.
//!
//! RFC 3465 §2.3: in the slow start that follows a retransmission timeout `L = 1`, because the first
//! ACK after a timeout can cover a whole window of segments that left the network long ago.
//!
//! NOTE: the controller does not tell a plug-in about congestion signals after startup ended, so
//! [`AfterCongestion`] recognises a later slow start by the window having been cut (a timeout sets
//! cwnd to one segment; fast recovery halves it). Every slow start after the first congestion
//! signal therefore uses `L = 1`, including the one NewReno resumes when it leaves recovery below
//! ssthresh; RFC 3465 names only the timeout case.

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent};

/// The RFC 3465 §2.2 recommendation for `L`, in segments.
pub const L_DEFAULT: u64 = 2;
/// RFC 3465 §2.3: `L` in the slow start after a retransmission timeout, in segments.
pub const L_AFTER_TIMEOUT: u64 = 1;

/// Configuration of [`Abc`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbcConfig {
    /// `L`: the most one ACK may add in slow start, in segments (at least 1).
    pub l: u64,
    /// `L` in the slow starts after a congestion signal (RFC 3465 §2.3: 1, "L ... MUST be 1
    /// after a retransmission timeout"). A transport that byte-counts every slow start (QUIC,
    /// RFC 9002 §7.3.1) keeps `l`.
    pub l_after_timeout: u64,
}

impl Default for AbcConfig {
    fn default() -> Self {
        AbcConfig { l: L_DEFAULT, l_after_timeout: L_AFTER_TIMEOUT }
    }
}

/// Appropriate Byte Counting in slow start.
#[derive(Clone, Debug)]
pub struct Abc {
    cfg: AbcConfig,
    after: AfterCongestion,
}

impl Abc {
    /// A fresh instance for one connection.
    pub fn new(cfg: AbcConfig) -> Abc {
        debug_assert!(cfg.l >= 1, "L = 0 would stop slow start (refused when the scenario is read)");
        Abc { cfg, after: AfterCongestion::default() }
    }
}

impl StartupAlgorithm for Abc {
    /// RFC 3465 §2.2: "cwnd += min(N, L*SMSS)"; §2.3: `L = 1` after a timeout.
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let l = if self.after.first_slow_start(view) { self.cfg.l } else { self.cfg.l_after_timeout };
        StartupAction::grow(ack.newly_acked.min(l * view.mss) as f64)
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.after.congestion();
    }
}

/// Tells the connection's first slow start from the ones that follow a congestion signal.
///
/// Startup plug-ins hear of a congestion signal only while in slow start; a timeout in congestion
/// avoidance or during recovery cuts the window without telling them. Within slow start the window
/// only ever grows, so a window smaller than the last one seen means something cut it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AfterCongestion {
    /// A congestion signal or a cut window was seen.
    seen: bool,
    /// cwnd (bytes) at the last ACK seen in slow start.
    last_cwnd: Option<f64>,
}

impl AfterCongestion {
    /// Call on every ACK in slow start: true while this is the connection's first slow start.
    pub(crate) fn first_slow_start(&mut self, view: &CcView) -> bool {
        if self.last_cwnd.is_some_and(|w| view.cwnd < w) {
            self.seen = true;
        }
        self.last_cwnd = Some(view.cwnd);
        !self.seen
    }

    /// A congestion signal arrived during slow start.
    pub(crate) fn congestion(&mut self) {
        self.seen = true;
    }
}


use crate::decl::{AlgorithmInfo, Param, Range, no_check};

/// `l` of `startup = { algorithm = "abc", ... }`.
pub const L: Param<u64> = Param::integer("l", "2", "L: the most one ACK adds, in segments; at least 1 (RFC 3465: MAY use 2, MUST NOT use more)").range(Range::AtLeast(1.0));

/// The declaration of `abc` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "abc",
        role: "startup",
        summary: "Appropriate Byte Counting: cwnd += min(N, L*SMSS) per ACK in slow start; L = 1 in a slow start after a congestion signal",
        source: "RFC 3465 §2 (ALGORITHMS.md §5.1)",
        params: &[L.info],
    },
    build: super::Build::Native(|p, _| super::Startup::Abc(Abc::new(AbcConfig { l: p.get(&L), ..AbcConfig::default() }))),
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
    use crate::startup::{SlowStart, Startup};
    use crate::testkit::{ack, controller, one_round, MSS};
    use crate::{CongestionKind, Phase, Ssthresh, Time};

    fn growth_per_round(startup: Startup, per_ack: u32) -> Vec<f64> {
        let mut c = controller(startup, 4, Ssthresh::Infinite);
        let mut seq = 0;
        let mut before = c.cwnd() / MSS as f64;
        let mut ratios = Vec::new();
        for round in 1..=5 {
            let after = one_round(&mut c, round, per_ack, &mut seq);
            ratios.push(after / before);
            before = after;
        }
        ratios
    }

    #[test]
    fn abc_with_l_2_doubles_per_round_when_every_ack_covers_two_segments() {
        // 4 → 8 → 16 → 32 → 64 → 128: two segments per delayed ACK, two SMSS per ACK.
        let ratios = growth_per_round(Startup::Abc(Abc::new(AbcConfig::default())), 2);
        assert!(ratios.iter().all(|&r| r == 2.0), "ABC L=2 should double per round, got {ratios:?}");
    }

    #[test]
    fn slow_start_grows_by_one_and_a_half_per_round_under_the_same_acks() {
        // 4 → 6 → 9 → 13 (9 segments: 4 ACKs of 2 and one of 1 → +5) ...: one SMSS per ACK.
        let ratios = growth_per_round(Startup::SlowStart(SlowStart::default()), 2);
        for r in &ratios {
            assert!((1.4..=1.6).contains(r), "packet counting should grow about 1.5x per round, got {ratios:?}");
        }
        assert_eq!(ratios[0], 1.5, "4 segments, 2 ACKs: 4 → 6");
    }

    #[test]
    fn abc_with_l_1_behaves_like_packet_counting() {
        let abc = growth_per_round(Startup::Abc(Abc::new(AbcConfig { l: 1, ..AbcConfig::default() })), 2);
        let ss = growth_per_round(Startup::SlowStart(SlowStart::default()), 2);
        assert_eq!(abc, ss, "L = 1 is RFC 5681 slow start");
    }

    #[test]
    fn a_stretch_ack_adds_at_most_l_segments() {
        // One ACK for 8 segments: L = 2 caps the increase at 2 SMSS.
        let mut c = controller(Startup::Abc(Abc::new(AbcConfig::default())), 8, Ssthresh::Infinite);
        c.on_ack(&ack(100, 8, 8 * MSS));
        assert_eq!(c.cwnd(), 10.0 * MSS as f64, "8 + min(8, 2) segments");
    }

    #[test]
    fn slow_start_after_a_timeout_uses_l_1() {
        let mut c = controller(Startup::Abc(Abc::new(AbcConfig::default())), 4, Ssthresh::Infinite);
        // t=100ms: two delayed ACKs, +2 SMSS each → 8 segments.
        c.on_ack(&ack(100, 2, 2 * MSS));
        c.on_ack(&ack(100, 2, 4 * MSS));
        assert_eq!(c.cwnd(), 8.0 * MSS as f64);
        // t=1.1s: the retransmission timer fires; cwnd = 1 SMSS, ssthresh = 4 SMSS.
        c.on_congestion(&CongestionEvent { now: Time(1_100_000_000), kind: CongestionKind::Timeout, flight_size: 8 * MSS, enter_recovery: false });
        assert_eq!(c.phase(), Phase::SlowStart);
        // t=1.2s: an ACK covering two segments now adds one SMSS only.
        c.on_ack(&ack(1200, 2, 6 * MSS));
        assert_eq!(c.cwnd(), 2.0 * MSS as f64, "L = 1 after a timeout (RFC 3465 §2.3)");
    }

    #[test]
    fn a_cut_window_is_recognised_without_a_congestion_call() {
        let mut t = AfterCongestion::default();
        let view = |cwnd: f64| CcView { cwnd, ssthresh: Ssthresh::Infinite, mss: MSS, round: 0, min_rtt: None, new_round: false };
        assert!(t.first_slow_start(&view(4000.0)));
        assert!(t.first_slow_start(&view(9000.0)), "growth keeps the first slow start");
        assert!(!t.first_slow_start(&view(1000.0)), "a window cut to one segment is a later slow start");
        assert!(!t.first_slow_start(&view(5000.0)), "and stays so");
    }
}
