//! Decreasing Byte Counting — Barakat & Altman, "Performance of Short TCP Transfers", §4.3
//! (ALGORITHMS.md §5.3–5.4).
//!
//! Byte counting (`d = 1`, the window doubles per round trip) is fastest while the window is small
//! but overflows a small buffer before the pipe is full; packet counting over delayed ACKs
//! (`d = 2`, ×1.5 per round trip) is gentler. DBC moves from one to the other as the window grows:
//! "we vary d linearly between 1 and d_max as long as W grows from 1 (or other initial value) to
//! W_th. This gives us, d(W) = 1 + (d_max − 1)(W − 1)/(W_th − 1)." Each ACK adds
//! `SMSS · segments_covered / d(W)`, so a round trip adds about `W/d(W)` segments and the burst
//! entering the bottleneck runs at `(1 + 1/d)` times its rate, less as W grows.
//!
//! Parameters: `d_max` (default 2, "A possible value for d_max can be that of STCP (d_max = 2)").
//! `W_th` is the slow-start threshold itself — in the paper "the network capacity estimate is
//! called the SS threshold (W_th)" and slow start ends there — so DBC reads it from ssthresh
//! (`tcp.initial_ssthresh`) rather than taking a second threshold; the scenario reader refuses DBC
//! with an infinite ssthresh (§5.3 RESOLVED (d)). The paper sets W_th to the BDP.
//!
//! RESOLVED choices of §5.3: (a) `d(W)` uses cwnd before the increment; (b) the increase is
//! proportional to the segments an ACK covers (`N / SMSS`, byte counting); (c) the bytes counted
//! per ACK are capped at `L·SMSS` with RFC 3465's `L = 2`; (e) after a congestion signal slow start
//! is plain RFC 5681 slow start (`L = 1`, packet counting). Congestion avoidance is untouched.

use crate::startup::abc::AfterCongestion;
use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, Ssthresh};

/// The paper's suggested `d_max`: that of standard TCP over delayed ACKs.
pub const D_MAX_DEFAULT: f64 = 2.0;
/// RFC 3465 `L` (segments) capping the bytes one ACK may count (§5.3 RESOLVED (c)).
pub const L: u64 = 2;

/// Configuration of [`Dbc`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DbcConfig {
    /// `d_max`: the aggressiveness divisor reached at `W = W_th` (at least 1).
    pub d_max: f64,
}

impl Default for DbcConfig {
    fn default() -> Self {
        DbcConfig { d_max: D_MAX_DEFAULT }
    }
}

/// `d(W) = 1 + (d_max − 1)(W − 1)/(W_th − 1)`, with `W` and `W_th` in segments.
///
/// `W` is held to `[1, W_th]` (the window never falls below one segment and slow start ends at
/// W_th); a threshold of one segment or less gives `d_max`.
pub fn d_of_w(w_pkts: f64, w_th_pkts: f64, d_max: f64) -> f64 {
    if w_th_pkts <= 1.0 {
        return d_max;
    }
    let w = w_pkts.clamp(1.0, w_th_pkts);
    1.0 + (d_max - 1.0) * (w - 1.0) / (w_th_pkts - 1.0)
}

/// Decreasing Byte Counting in the first slow start.
#[derive(Clone, Debug)]
pub struct Dbc {
    cfg: DbcConfig,
    after: AfterCongestion,
}

impl Dbc {
    /// A fresh instance for one connection.
    pub fn new(cfg: DbcConfig) -> Dbc {
        debug_assert!(cfg.d_max >= 1.0, "d_max < 1 is refused when the scenario is read");
        Dbc { cfg, after: AfterCongestion::default() }
    }
}

impl StartupAlgorithm for Dbc {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let mss = view.mss as f64;
        if !self.after.first_slow_start(view) {
            // §5.3 RESOLVED (e): "after an RTO use plain slow start with L = 1".
            return StartupAction::grow(ack.newly_acked.min(view.mss) as f64);
        }
        // "cwnd += SMSS * segments_covered / d(cwnd_pkts)", segments_covered = N / SMSS ≤ L.
        let counted = ack.newly_acked.min(L * view.mss) as f64;
        let d = match view.ssthresh {
            Ssthresh::Bytes(w_th) => d_of_w(view.cwnd / mss, w_th / mss, self.cfg.d_max),
            // Undefined without a threshold (refused by the scenario reader); count bytes, d = 1.
            Ssthresh::Infinite => 1.0,
        };
        StartupAction::grow(counted / d)
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.after.congestion();
    }
}


use crate::decl::{AlgorithmInfo, FlowContext, Param, ParamError, Params, Range};

/// `d_max` of `startup = { algorithm = "dbc", ... }`.
pub const D_MAX: Param<f64> = Param::number("d_max", "2", "d at W = W_th (the slow-start threshold); at least 1; 2 is standard TCP over delayed ACKs").range(Range::AtLeast(1.0));

/// ALGORITHMS.md §5.3 RESOLVED (d): DBC's W_th is ssthresh and must be finite.
fn check(_: &Params<'_>, cx: &FlowContext, _: &dyn Fn(&str) -> bool) -> Result<(), ParamError> {
    if cx.infinite_ssthresh {
        return Err(ParamError::new("algorithm", "\"dbc\" needs a finite tcp.initial_ssthresh (its W_th, e.g. the BDP)"));
    }
    Ok(())
}

/// The declaration of `dbc` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "dbc",
        role: "startup",
        summary: "Decreasing Byte Counting: cwnd += min(N, 2*SMSS)/d(W) per ACK, d(W) = 1 + (d_max - 1)(W - 1)/(W_th - 1) with W_th = ssthresh (needs a finite tcp.initial_ssthresh)",
        source: "Barakat & Altman, Performance of Short TCP Transfers, §4.3 (ALGORITHMS.md §5.3)",
        params: &[D_MAX.info],
    },
    build: super::Build::Native(|p, _| super::Startup::Dbc(Dbc::new(DbcConfig { d_max: p.get(&D_MAX) }))),
    check,
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
    use crate::startup::Startup;
    use crate::{CongestionKind, Phase, Time};

    #[test]
    fn d_matches_the_spec_test_vectors() {
        // ALGORITHMS.md §5.4: d_max = 2, W_th = 350 packets.
        for (w, d) in [(1.0, 1.0000), (50.0, 1.1404), (100.0, 1.2837), (175.0, 1.4986), (350.0, 2.0000)] {
            let got = d_of_w(w, 350.0, 2.0);
            assert!((got - d).abs() < 5e-5, "d({w}) should be {d}, got {got:.5}");
        }
    }

    #[test]
    fn growth_per_round_falls_from_two_towards_one_and_a_half_as_the_window_nears_w_th() {
        // Delayed ACKs (2 segments each), IW 2, W_th = ssthresh = 1000 segments. A round that
        // starts at W acknowledges floor(W) segments and adds floor(W)/d, d between d(W) at its
        // start and d at its end.
        let w_th = 1000.0;
        let mut c = controller(Startup::Dbc(Dbc::new(DbcConfig::default())), 2, Ssthresh::Bytes(w_th * MSS as f64));
        let mut seq = 0;
        let mut rounds = Vec::new();
        for round in 1.. {
            let before = c.cwnd() / MSS as f64;
            let after = one_round(&mut c, round, 2, &mut seq);
            if c.phase() != Phase::SlowStart {
                break;
            }
            let per_segment = (after - before) / before.floor();
            let (fast, slow) = (1.0 / d_of_w(before, w_th, 2.0), 1.0 / d_of_w(after, w_th, 2.0));
            assert!(
                per_segment <= fast + 1e-9 && per_segment >= slow - 1e-9,
                "round {round} from W = {before:.1}: grew {per_segment:.4} per segment acked, expected between 1/d(end) = {slow:.4} and 1/d(start) = {fast:.4}"
            );
            rounds.push((before, after / before));
        }
        assert!(rounds[0].1 > 1.99, "W = 2: d(2) ≈ 1.001, the first round about doubles: {rounds:?}");
        let (w, last) = *rounds.last().unwrap();
        assert!(w > 500.0 && last < 1.62, "the last full round (from W = {w:.0}) grows {last:.3}x, well below 2: {rounds:?}");
    }

    #[test]
    fn d_max_of_one_is_byte_counting_with_l_2() {
        let mut c = controller(Startup::Dbc(Dbc::new(DbcConfig { d_max: 1.0 })), 4, Ssthresh::Bytes(100.0 * MSS as f64));
        let mut seq = 0;
        assert_eq!(one_round(&mut c, 1, 2, &mut seq), 8.0);
        assert_eq!(one_round(&mut c, 2, 2, &mut seq), 16.0);
    }

    #[test]
    fn after_a_timeout_dbc_is_plain_slow_start() {
        let mut c = controller(Startup::Dbc(Dbc::new(DbcConfig::default())), 4, Ssthresh::Bytes(100.0 * MSS as f64));
        c.on_ack(&ack(100, 2, 2 * MSS));
        c.on_congestion(&CongestionEvent { now: Time(1_000_000_000), kind: CongestionKind::Timeout, flight_size: 6 * MSS, enter_recovery: false });
        c.on_ack(&ack(1100, 2, 4 * MSS));
        assert_eq!(c.cwnd(), 2.0 * MSS as f64, "one SMSS per ACK after the timeout");
    }
}
