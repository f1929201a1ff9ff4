//! CUBIC congestion avoidance — RFC 9438 §4 (ALGORITHMS.md §9).
//!
//! The window is a cubic function of the time since the current congestion-avoidance stage began,
//! `W_cubic(t) = C·(t − K)³ + W_max` (RFC 9438 §4.2, Figure 1): concave while it climbs back towards
//! `W_max`, the window at the last congestion event, flat around it, convex beyond it. A
//! Reno-friendly estimate `W_est` (§4.3) keeps it at least as fast as Reno where the cubic is slow
//! (small BDP, short RTT). After a congestion event `ssthresh = β_cubic·cwnd` (§4.6), and fast
//! convergence (§4.7) lowers `W_max` when the loss came below the previous one. After a timeout
//! the next stage starts with `K = 0` and `W_max` = the window at its start (§4.8).
//!
//! Parameters and defaults ([`CubicConfig`], scenario keys of the `tcp` table):
//! * `C` = 0.4 segments/s³ (`cubic_c`, RFC 9438 §5.1),
//! * `β_cubic` = 0.7 (`cubic_beta`, §4.6),
//! * fast convergence on (`cubic_fast_convergence`, §4.7),
//! * ssthresh from `cwnd` (Linux) or from FlightSize (the RFC's formula) (`cubic_ssthresh_from`,
//!   ALGORITHMS.md §9.3; default `cwnd`).
//!
//! Inside this module windows are in segments, as the RFC writes them: the controller's bytes are
//! divided by SMSS on the way in and multiplied by it on the way out. Times are seconds as `f64`
//! derived from integer ns. The cube root is computed with `+ − × ÷` only ([`cube_root`]) so that
//! results stay bit-identical across math libraries (DETERMINISM.md, "Floating point").

use crate::{AckEvent, CcView, CongestionEvent, CongestionKind};
use startlab_units::{Dur, Time};

/// Where the ssthresh after a congestion event comes from (ALGORITHMS.md §9.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsthreshFrom {
    /// `ssthresh = cwnd·β_cubic`, as Linux `bictcp_recalc_ssthresh`. RFC 9438 §4.6 allows it for a
    /// sender that does not grow cwnd while it is not cwnd-limited, which `tcp.cwnd_validation`
    /// (on by default) ensures.
    Cwnd,
    /// `ssthresh = flight_size·β_cubic`, RFC 9438 §4.6 as written.
    FlightSize,
}

/// How the window grows where RFC 9438 and Linux's `tcp_cubic.c` differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// RFC 9438 as written (with this module's NOTEs).
    Rfc9438,
    /// As Linux's `bictcp_update`: while no congestion event has set `W_max` (`last_max_cwnd ==
    /// 0`: from the connection's start, as after a HyStart exit, and again after a timeout, which
    /// `bictcp_reset` clears) the window grows by at least 5 % per RTT (`cnt` at most 20), not
    /// from K = 0 along a cubic that adds 0.4 segments in the first second; and the Reno-friendly
    /// estimate always grows by α_cubic per RTT (`beta_scale`).
    Linux,
}

/// CUBIC's parameters, with the RFC 9438 defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// `C`, segments/s³; positive.
    pub c: f64,
    /// `β_cubic`, the multiplicative decrease factor; in (0, 1).
    pub beta: f64,
    /// RFC 9438 §4.7 fast convergence.
    pub fast_convergence: bool,
    /// The window the ssthresh after a congestion event is computed from.
    pub ssthresh_from: SsthreshFrom,
    /// RFC 9438's growth or Linux's.
    pub growth: Growth,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig { c: Cubic::C, beta: Cubic::BETA_CUBIC, fast_convergence: true, ssthresh_from: SsthreshFrom::Cwnd, growth: Growth::Rfc9438 }
    }
}

/// One congestion-avoidance stage ("epoch"): from its first ACK until the next congestion event.
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// `t_epoch`: the first ACK of the stage.
    t_epoch: Time,
    /// `K`, seconds.
    k: f64,
    /// `W_max` of this stage, segments (the origin of the cubic).
    w_max: f64,
    /// `W_est`, segments.
    w_est: f64,
    /// The window this module returned last, bytes; if the controller's cwnd differs, someone else
    /// (restart after idle) moved it and the stage is over.
    last_cwnd: f64,
    /// No congestion event has set `W_max` before this stage (Linux `last_max_cwnd == 0`).
    no_history: bool,
}

/// CUBIC (RFC 9438).
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// `W_max` remembered from the last congestion event, segments; `None` before the first one and
    /// after a timeout (RFC 9438 §4.8, §4.10: the next stage takes `W_max` = its first window).
    w_max: Option<f64>,
    /// `cwnd_prior`: the window when ssthresh was last set, segments (RFC 9438 §4.3, §4.6).
    cwnd_prior: Option<f64>,
    /// The current stage; `None` until the first ACK in congestion avoidance after a congestion
    /// event (or at the very start).
    epoch: Option<Epoch>,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(CubicConfig::default())
    }
}

impl Cubic {
    /// RFC 9438 §5.1: "C SHOULD be set to 0.4" (segments/s³).
    pub const C: f64 = 0.4;
    /// RFC 9438 §4.6: "Parameter β_cubic SHOULD be set to 0.7".
    pub const BETA_CUBIC: f64 = 0.7;

    /// CUBIC with `cfg`.
    pub fn new(cfg: CubicConfig) -> Cubic {
        debug_assert!(cfg.c > 0.0 && cfg.c.is_finite(), "C must be positive");
        debug_assert!(cfg.beta > 0.0 && cfg.beta < 1.0, "β_cubic must be in (0, 1)");
        Cubic { cfg, w_max: None, cwnd_prior: None, epoch: None }
    }

    /// The configuration.
    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }

    /// RFC 9438 §4.3: `α_cubic = 3·(1 − β_cubic)/(1 + β_cubic)`, the additive increase (segments
    /// per RTT) of the AIMD that has Reno's average window with CUBIC's `β`.
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta)
    }

    /// RFC 9438 Figure 2: `K = cubic_root((W_max − cwnd_epoch)/C)`, seconds; 0 when the window
    /// already is at or above `W_max`.
    pub fn k(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        if w_max > cwnd_epoch {
            cube_root((w_max - cwnd_epoch) / self.cfg.c)
        } else {
            0.0
        }
    }

    /// RFC 9438 Figure 1: `W_cubic(t) = C·(t − K)³ + W_max`, segments, `t` and `k` in seconds.
    pub fn w_cubic(&self, t: f64, k: f64, w_max: f64) -> f64 {
        let d = t - k;
        self.cfg.c * d * d * d + w_max
    }

    /// RFC 9438 §4.2: "target = W_cubic(t + RTT)" bounded to `[cwnd, 1.5·cwnd]`, segments. "The
    /// lower and upper bounds below ensure that CUBIC's congestion window increase rate is
    /// non-decreasing and is less than the increase rate of slow start."
    pub fn target(&self, w_cubic_next: f64, cwnd: f64) -> f64 {
        w_cubic_next.clamp(cwnd, 1.5 * cwnd)
    }

    /// RFC 9438 Figure 4: `W_est = W_est + α_cubic · segments_acked / cwnd`, segments. §4.3: "Once
    /// W_est has grown to reach the cwnd at the time of most recently setting ssthresh -- that is,
    /// W_est >= cwnd_prior -- the sender SHOULD set α_cubic to 1".
    ///
    /// NOTE: before any congestion event there is no `cwnd_prior` and no reduction to make up for;
    /// we read the rule as already satisfied and use α = 1, Reno's increase (Linux uses α_cubic
    /// always).
    ///
    /// With [`Growth::Linux`], α_cubic always (Linux's `beta_scale`).
    pub fn next_w_est(&self, w_est: f64, segments_acked: f64, cwnd: f64) -> f64 {
        let alpha = match self.cwnd_prior {
            _ if self.cfg.growth == Growth::Linux => self.alpha_cubic(),
            Some(prior) if w_est < prior => self.alpha_cubic(),
            _ => 1.0,
        };
        w_est + alpha * segments_acked / cwnd
    }

    /// New cwnd (bytes) after an ACK in congestion avoidance.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> f64 {
        let mss = view.mss as f64;
        let cwnd = view.cwnd / mss;
        // NOTE: RFC 9438 leaves restart after idle to RFC 5681 §4.1; when the controller lowered
        // cwnd behind our back (idle restart), the old stage's clock no longer describes the window,
        // so a new stage starts here (Linux instead shifts epoch_start by the idle time).
        if self.epoch.is_some_and(|e| e.last_cwnd != view.cwnd) {
            self.epoch = None;
        }
        let epoch = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(ack.now, view.cwnd, mss),
        };
        // "t = t_current − t_epoch".
        let t = ack.now.saturating_since(epoch.t_epoch).as_secs_f64();
        // NOTE: RFC 9438 §4.2 names the smoothed RTT; ALGORITHMS.md §9.3 (like Linux delay_min)
        // uses the minimum RTT. Before any sample the target is W_cubic(t).
        let rtt = view.min_rtt.or(ack.rtt).unwrap_or(Dur::ZERO).as_secs_f64();
        // NOTE: segments_acked = N/SMSS (byte counting): an ACK for two segments counts two, so
        // delayed ACKs do not halve the growth (ALGORITHMS.md §9.3 "per segment ACKed").
        let segments_acked = ack.newly_acked as f64 / mss;
        let w_est = self.next_w_est(epoch.w_est, segments_acked, cwnd);
        // Linux, no W_max yet: at least cwnd/20 more per window of ACKs (5 % per RTT).
        let floor = if self.cfg.growth == Growth::Linux && epoch.no_history { cwnd + segments_acked / 20.0 } else { 0.0 };

        let grown = if self.w_cubic(t, epoch.k, epoch.w_max) < w_est {
            // §4.3: "CUBIC is in the Reno-friendly region and cwnd SHOULD be set to W_est at each
            // reception of a new ACK."
            // NOTE: never below the current cwnd: in the cubic region the window runs ahead of
            // W_cubic(t) (its target is W_cubic(t + RTT)), and avoidance does not shrink it.
            w_est.max(cwnd)
        } else {
            let target = self.target(self.w_cubic(t + rtt, epoch.k, epoch.w_max), cwnd);
            // §4.4 (concave) and §4.5 (convex): "cwnd MUST be incremented by (target - cwnd)/cwnd
            // for each received new ACK" — here per segment acknowledged (NOTE above).
            cwnd + (target - cwnd) / cwnd * segments_acked
        };
        let new_cwnd = grown.max(floor);
        let bytes = new_cwnd * mss;
        self.epoch = Some(Epoch { w_est, last_cwnd: bytes, ..epoch });
        bytes
    }

    /// The first ACK of a congestion-avoidance stage with window `cwnd` bytes: `t_epoch = now`,
    /// `cwnd_epoch = cwnd`, `W_est = cwnd`, and `K` from the remembered `W_max` (ALGORITHMS.md §9.3).
    fn start_epoch(&mut self, now: Time, cwnd: f64, mss: f64) -> Epoch {
        let cwnd_epoch = cwnd / mss;
        let no_history = self.w_max.is_none();
        let w_max = match self.w_max {
            Some(w) if w > cwnd_epoch => w,
            // §4.8 / §4.10: no congestion event yet, or a timeout: "K is set to 0, and W_max is set
            // to the congestion window size at the beginning of the current congestion avoidance
            // stage". Also when the window already passed W_max (§4.2: then K = 0).
            _ => cwnd_epoch,
        };
        self.w_max = Some(w_max);
        // §4.3: "W_est is set equal to cwnd_epoch at the start of the congestion avoidance stage."
        Epoch { t_epoch: now, k: self.k(w_max, cwnd_epoch), w_max, w_est: cwnd_epoch, last_cwnd: cwnd, no_history }
    }

    /// ssthresh (bytes) after a congestion signal; also ends the stage and updates `W_max` and
    /// `cwnd_prior` from the window before the reduction (`view.cwnd`), as Linux's `ssthresh` hook
    /// does: the controller calls this before it reduces cwnd.
    pub fn ssthresh_after_loss(&mut self, view: &CcView, ev: &CongestionEvent) -> f64 {
        let mss = view.mss as f64;
        let cwnd = view.cwnd / mss;
        self.w_max = match ev.kind {
            // §4.7 fast convergence: a loss below the previous W_max means the flow's share shrank;
            // W_max = cwnd·(1 + β_cubic)/2 releases bandwidth sooner. Otherwise W_max = cwnd.
            // An ECN echo is a congestion event like a fast retransmit (RFC 9438 §4.6).
            CongestionKind::FastRetransmit | CongestionKind::Ecn => Some(match self.w_max {
                Some(w) if self.cfg.fast_convergence && cwnd < w => cwnd * (1.0 + self.cfg.beta) / 2.0,
                _ => cwnd,
            }),
            // §4.8: the first stage after a timeout takes K = 0 and W_max = its first window; the
            // remembered W_max is forgotten (Linux: bictcp_reset on entering TCP_CA_Loss).
            CongestionKind::Timeout => None,
        };
        // §4.6: "cwnd_prior = cwnd" (for the Reno-friendly region's α switch).
        self.cwnd_prior = Some(cwnd);
        self.epoch = None;
        // §4.6: "ssthresh = flight_size * β_cubic"; or cwnd·β_cubic (SsthreshFrom::Cwnd). The
        // controller applies the 2 SMSS floor.
        let from = match self.cfg.ssthresh_from {
            SsthreshFrom::Cwnd => view.cwnd,
            SsthreshFrom::FlightSize => ev.flight_size as f64,
        };
        from * self.cfg.beta
    }

    /// `W_max` remembered for the next stage, segments.
    #[cfg(test)]
    fn w_max(&self) -> Option<f64> {
        self.w_max
    }
}

/// `x^(1/3)` for `x >= 0` with `+ − × ÷` only: scale into [1, 8) by exact powers of 8, then a fixed
/// number of Newton steps `y ← (2y + m/y²)/3`. Correct to within an ulp or two of `f64::cbrt`, and
/// the same bits on every IEEE-754 machine (`cbrt` of the platform's libm is not correctly rounded).
pub fn cube_root(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        debug_assert!(x == 0.0, "cube_root of {x}");
        return x.max(0.0);
    }
    let (mut m, mut scale) = (x, 1.0);
    while m >= 8.0 {
        m /= 8.0;
        scale *= 2.0;
    }
    while m < 1.0 {
        m *= 8.0;
        scale /= 2.0;
    }
    // m in [1, 8), its cube root in [1, 2); from 1.5 Newton needs 5 steps to reach 1e-16.
    let mut y = 1.5;
    for _ in 0..7 {
        y = (2.0 * y + m / (y * y)) / 3.0;
    }
    y * scale
}

use crate::decl::{AlgorithmInfo, Param, Range};

/// `tcp.cubic_c`: `C`, segments/s³.
pub const C: Param<f64> = Param::number("cubic_c", "0.4", "tcp.cubic_c: C, segments/s³ (RFC 9438 §5.1); positive").range(Range::Above(0.0));
/// `tcp.cubic_beta`: `β_cubic`.
pub const BETA: Param<f64> = Param::number(
    "cubic_beta",
    "0.7",
    "tcp.cubic_beta: β_cubic, the window kept after a loss (RFC 9438 §4.6); between 0 and 1, both excluded; α_cubic = 3(1-β)/(1+β)",
)
.range(Range::StrictlyBetween(0.0, 1.0));
/// `tcp.cubic_fast_convergence`: RFC 9438 §4.7 fast convergence.
pub const FAST_CONVERGENCE: Param<bool> =
    Param::flag("cubic_fast_convergence", "true", "tcp.cubic_fast_convergence: W_max = cwnd*(1+β)/2 after a loss below the previous W_max (RFC 9438 §4.7)");
/// `tcp.cubic_ssthresh_from`: the window the ssthresh after a congestion event is `β_cubic` times.
pub const SSTHRESH_FROM: Param<&'static str> = Param::choice(
    "cubic_ssthresh_from",
    &["cwnd", "flight-size"],
    "cwnd",
    "tcp.cubic_ssthresh_from: ssthresh = β*cwnd (Linux) or β*FlightSize (RFC 9438 §4.6)",
);

/// `tcp.cubic_growth`: RFC 9438's window growth or Linux's.
pub const GROWTH: Param<&'static str> = Param::choice(
    "cubic_growth",
    &["rfc9438", "linux"],
    "rfc9438",
    "tcp.cubic_growth: \"linux\" grows as tcp_cubic.c does: at least 5 % per RTT until a congestion event sets W_max (at start, after HyStart, after a timeout), Reno-friendly at alpha_cubic",
);

/// The declaration of `congestion_avoidance = "cubic"` (its entry in `avoidance::DECLS`; its
/// parameters are keys of the flow's `tcp` table).
pub const DECL: super::AvoidanceDecl = super::AvoidanceDecl {
    info: AlgorithmInfo {
        name: "cubic",
        role: "avoidance",
        summary: "CUBIC: cwnd follows W_cubic(t) = C*(t-K)^3 + W_max, K = cbrt(W_max*(1-beta)/C), at least Reno's W_est; ssthresh = beta*cwnd on loss",
        source: "RFC 9438 §4",
        params: &[C.info, BETA.info, FAST_CONVERGENCE.info, SSTHRESH_FROM.info, GROWTH.info],
    },
    build: |p, _| {
        super::Avoidance::Cubic(Cubic::new(CubicConfig {
            c: p.get(&C),
            beta: p.get(&BETA),
            fast_convergence: p.get(&FAST_CONVERGENCE),
            ssthresh_from: match p.get(&SSTHRESH_FROM) {
                "flight-size" => SsthreshFrom::FlightSize,
                _ => SsthreshFrom::Cwnd,
            },
            growth: match p.get(&GROWTH) {
                "linux" => Growth::Linux,
                _ => Growth::Rfc9438,
            },
        }))
    },
    needs_l4s: false,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ssthresh;

    const MSS: u64 = 1000;
    const SEG: f64 = MSS as f64;
    const RTT_100MS: Dur = Dur::from_millis(100);

    /// The controller's view with a window of `cwnd` bytes.
    fn view(cwnd: f64, min_rtt: Option<Dur>) -> CcView {
        CcView { cwnd, ssthresh: Ssthresh::Bytes(0.0), mss: MSS, round: 0, min_rtt, new_round: false }
    }

    fn ack_at(now: Time, acked: u64) -> AckEvent {
        AckEvent {
            now,
            newly_acked: acked,
            ack_seq: 0,
            snd_nxt: 0,
            rtt: None,
            ..AckEvent::default()
        }
    }

    fn signal(kind: CongestionKind, flight_segments: u64) -> CongestionEvent {
        CongestionEvent {
            now: Time::ZERO,
            kind,
            flight_size: flight_segments * MSS,
            enter_recovery: kind == CongestionKind::FastRetransmit,
        }
    }

    /// A fast retransmit at a window of `segments`; returns ssthresh in bytes (the window the
    /// recovery exit leaves).
    fn loss_at(cubic: &mut Cubic, segments: f64) -> f64 {
        cubic.ssthresh_after_loss(&view(segments * SEG, None), &signal(CongestionKind::FastRetransmit, segments as u64))
    }

    /// Drives congestion avoidance from `cwnd` bytes for `secs`: every RTT the window is
    /// acknowledged, one ACK per segment, evenly spread over the RTT (the ACK clock of a path with a
    /// fixed RTT). Returns `(t since start in s, cwnd in segments)` at the end of every RTT.
    fn drive(cubic: &mut Cubic, mut cwnd: f64, start: Time, rtt: Dur, secs: f64) -> Vec<(f64, f64)> {
        let mut out = vec![];
        let mut now = start;
        let rounds = (secs / rtt.as_secs_f64()).round() as u64;
        for _ in 0..rounds {
            let n = (cwnd / SEG).floor().max(1.0) as u64;
            let gap = Dur(rtt.as_nanos() / n);
            for _ in 0..n {
                now += gap;
                cwnd = cubic.on_ack(&view(cwnd, Some(rtt)), &ack_at(now, MSS));
            }
            out.push((now.saturating_since(start).as_secs_f64(), cwnd / SEG));
        }
        out
    }

    /// The point of `trace` closest to `t`.
    fn at(trace: &[(f64, f64)], t: f64) -> f64 {
        trace.iter().min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs())).unwrap().1
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn k_and_w_cubic_match_the_section_9_4_vectors() {
        // ALGORITHMS.md §9.4: W_max = 100, cwnd_epoch = 70, K = cbrt(75) = 4.2172 s.
        let c = Cubic::default();
        let k = c.k(100.0, 70.0);
        assert!(close(k, 4.2172, 1e-4), "K = {k}, expected 4.2172 s");
        for (t, w) in [(0.0, 70.0), (1.0, 86.6808), (2.0, 95.6403), (k, 100.0), (5.0, 100.1919), (6.0, 102.2667)] {
            let got = c.w_cubic(t, k, 100.0);
            assert!(close(got, w, 1e-4), "W_cubic({t}) = {got}, expected {w}");
        }
        assert_eq!(c.k(100.0, 120.0), 0.0, "K is 0 when the window is already above W_max");
        assert!(close(c.alpha_cubic(), 0.5294, 1e-4), "α_cubic = 3(1 − 0.7)/(1 + 0.7)");
    }

    #[test]
    fn the_cube_root_agrees_with_the_library_one() {
        for x in [1e-9, 0.001, 0.5, 1.0, 7.999, 8.0, 75.0, 187.5, 1e3, 12_345.678, 1e9, 1e15] {
            let (ours, lib) = (cube_root(x), x.cbrt());
            assert!((ours - lib).abs() <= 4.0 * f64::EPSILON * lib, "cube_root({x}) = {ours}, cbrt = {lib}");
        }
        assert_eq!(cube_root(0.0), 0.0);
        assert_eq!(cube_root(27.0), 3.0);
    }

    #[test]
    fn the_target_is_clamped_to_one_and_a_half_windows() {
        // ALGORITHMS.md §9.4: cwnd = 80, W_cubic(t + RTT) = 130 → target 120.
        let c = Cubic::default();
        assert_eq!(c.target(130.0, 80.0), 120.0);
        assert_eq!(c.target(100.0, 80.0), 100.0, "inside the bounds the target is W_cubic(t + RTT)");
        assert_eq!(c.target(60.0, 80.0), 80.0, "the lower bound keeps the increase non-negative");
    }

    #[test]
    fn reno_friendly_estimate_matches_the_section_9_4_vectors() {
        // After a loss at 100 segments the stage starts at 70; with RTT 100 ms each RTT delivers a
        // window of 70 one-segment ACKs, so W_est(t) = 70 + α_cubic·t/RTT while below cwnd_prior.
        let mut c = Cubic::default();
        loss_at(&mut c, 100.0);
        let mut w_est = 70.0;
        let mut by_rtt = vec![];
        for _rtt in 0..40 {
            for _ in 0..70 {
                w_est = c.next_w_est(w_est, 1.0, 70.0);
            }
            by_rtt.push(w_est);
        }
        for (t, want) in [(1.0, 75.2941), (2.0, 80.5882), (4.0, 91.1765)] {
            let got = by_rtt[(t * 10.0) as usize - 1];
            assert!(close(got, want, 1e-3), "W_est({t} s) = {got}, expected {want}");
        }
        assert_eq!(c.next_w_est(100.0, 1.0, 100.0), 100.01, "α_cubic becomes 1 once W_est reaches cwnd_prior");
    }

    #[test]
    fn the_window_follows_the_cubic_function_after_a_loss() {
        // W_max = 1000 segments, RTT 100 ms: K = cbrt(300/0.4) = 9.09 s, and W_est (about 5.3
        // segments/s) stays far below the cubic, so the cubic region rules throughout.
        let mut c = Cubic::default();
        let cwnd = loss_at(&mut c, 1000.0);
        assert_eq!(cwnd, 700.0 * SEG, "ssthresh = β_cubic·cwnd");
        let trace = drive(&mut c, cwnd, Time(1_000_000_000), RTT_100MS, 12.0);
        let k = c.k(1000.0, 700.0);
        assert!(close(k, 9.0856, 1e-3), "K = {k}");
        // The target is W_cubic(t + RTT), reached in about one RTT: the window at the end of the
        // RTT ending at t tracks W_cubic(t), here within 0.1 %.
        for &(t, w) in &trace {
            let want = c.w_cubic(t, k, 1000.0);
            assert!((w - want).abs() <= 0.001 * want, "t = {t:.1} s: cwnd {w:.2} segments, W_cubic(t) = {want:.2}");
        }
        for t in [1.0, 3.0, 6.0, 11.0] {
            let want = c.w_cubic(t, k, 1000.0);
            assert!((at(&trace, t) - want).abs() < 1.0, "t = {t} s: cwnd {:.2}, W_cubic = {want:.2}", at(&trace, t));
        }
        assert!((at(&trace, k) - 1000.0).abs() < 1.0, "cwnd is back at W_max at t = K: {:.2}", at(&trace, k));
        // Concave, then convex: growth per second falls until K, then rises.
        let growth = |t: f64| at(&trace, t + 0.5) - at(&trace, t - 0.5);
        let (early, plateau, late) = (growth(1.5), growth(k), growth(11.5));
        assert!(early > 10.0 * plateau && late > 10.0 * plateau, "growth per second {early:.1}, {plateau:.2}, {late:.1}: concave then convex");
    }

    #[test]
    fn the_reno_friendly_region_takes_over_on_a_small_bdp() {
        // W_max = 10 segments, RTT 10 ms: W_cubic needs K = cbrt(3/0.4) = 1.96 s to climb back,
        // while W_est grows by α_cubic per RTT, then by one segment per RTT past cwnd_prior = 10.
        let mut c = Cubic::default();
        let cwnd = loss_at(&mut c, 10.0);
        let trace = drive(&mut c, cwnd, Time::ZERO, Dur::from_millis(10), 1.0);
        let k = c.k(10.0, 7.0);
        let first = trace[0].1 - 7.0;
        assert!(close(first, c.alpha_cubic(), 0.05), "the first RTT added {first:.3} segments, expected about α_cubic");
        for &(t, w) in &trace[10..] {
            let cubic = c.w_cubic(t, k, 10.0);
            assert!(w > cubic + 1.0, "t = {t:.2} s: cwnd {w:.2} should be W_est, above W_cubic {cubic:.2}");
        }
        let late: Vec<f64> = trace.windows(2).skip(20).map(|p| p[1].1 - p[0].1).collect();
        for d in &late {
            assert!((0.9..=1.0).contains(d), "past cwnd_prior the growth is Reno's one segment per RTT: {late:?}");
        }
        let end = trace.last().unwrap().1;
        assert!(end > 90.0, "after 100 RTTs cwnd {end:.1} is Reno's, far above W_max = 10");
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_the_previous_one() {
        // ALGORITHMS.md §9.4: loss at cwnd 100 with previous W_max 120 → W_max = 85.
        let mut c = Cubic::default();
        loss_at(&mut c, 120.0);
        assert_eq!(c.w_max(), Some(120.0));
        loss_at(&mut c, 100.0);
        assert!(close(c.w_max().unwrap(), 85.0, 1e-9), "W_max = 100·(1 + 0.7)/2 = 85, got {:?}", c.w_max());
        loss_at(&mut c, 130.0);
        assert_eq!(c.w_max(), Some(130.0), "a loss above the previous W_max keeps the window");
        let mut plain = Cubic::new(CubicConfig { fast_convergence: false, ..CubicConfig::default() });
        loss_at(&mut plain, 120.0);
        loss_at(&mut plain, 100.0);
        assert_eq!(plain.w_max(), Some(100.0), "without fast convergence W_max is the window at the loss");
    }

    #[test]
    fn fast_convergence_makes_the_window_plateau_earlier() {
        // The stage after a loss at 100 (previous W_max 120) flattens at 85, below the loss window.
        let mut c = Cubic::default();
        loss_at(&mut c, 120.0);
        let cwnd = loss_at(&mut c, 100.0);
        let trace = drive(&mut c, cwnd, Time::ZERO, RTT_100MS, 3.0);
        let k = c.k(85.0, 70.0);
        assert!(close(k, 3.3472, 1e-3), "K = cbrt(15/0.4) = {k}");
        assert!((at(&trace, k) - 85.0).abs() < 1.0, "cwnd at K is W_max = 85: {:.2}", at(&trace, k));
    }

    #[test]
    fn ssthresh_is_beta_times_cwnd_or_flight_size() {
        let ev = signal(CongestionKind::FastRetransmit, 80);
        let mut c = Cubic::default();
        assert_eq!(c.ssthresh_after_loss(&view(100.0 * SEG, None), &ev), 0.7 * 100.0 * SEG, "β_cubic × cwnd");
        let mut rfc = Cubic::new(CubicConfig { ssthresh_from: SsthreshFrom::FlightSize, ..CubicConfig::default() });
        assert_eq!(rfc.ssthresh_after_loss(&view(100.0 * SEG, None), &ev), 0.7 * 80.0 * SEG, "β_cubic × FlightSize");
    }

    #[test]
    fn after_a_timeout_the_next_stage_starts_with_k_zero_at_its_own_window() {
        let mut c = Cubic::default();
        loss_at(&mut c, 200.0);
        c.ssthresh_after_loss(&view(150.0 * SEG, None), &signal(CongestionKind::Timeout, 150));
        assert_eq!(c.w_max(), None, "a timeout forgets W_max");
        // Slow start then reaches 105 segments; the first stage starts there with K = 0.
        c.on_ack(&view(105.0 * SEG, Some(RTT_100MS)), &ack_at(Time(5_000_000_000), MSS));
        let e = c.epoch.unwrap();
        assert_eq!((e.k, e.w_max, e.w_est), (0.0, 105.0, c.next_w_est(105.0, 1.0, 105.0)), "RFC 9438 §4.8");
    }

    #[test]
    fn linux_growth_adds_five_percent_per_rtt_until_the_first_congestion_event() {
        // A HyStart exit at 1 000 segments, no loss yet, RTT 100 ms. RFC 9438: K = 0 and W_max =
        // 1 000, so the cubic adds C·t³ (0.4 segments in the first second) and W_est one segment
        // per RTT: about 10 segments in 1 s. Linux (cnt <= 20): 5 % per RTT, 1.05^10 in 1 s.
        let linux = CubicConfig { growth: Growth::Linux, ..CubicConfig::default() };
        let start = Time(1_000_000_000);
        let rfc = drive(&mut Cubic::default(), 1000.0 * SEG, start, RTT_100MS, 1.0);
        let lx = drive(&mut Cubic::new(linux), 1000.0 * SEG, start, RTT_100MS, 1.0);
        let (r, l) = (at(&rfc, 1.0), at(&lx, 1.0));
        assert!(r > 1000.0 && r < 1012.0, "RFC 9438: {r:.1} segments after 1 s");
        let per_rtt: Vec<f64> = lx.windows(2).map(|w| w[1].1 / w[0].1).collect();
        assert!(per_rtt.iter().all(|&g| (1.049..1.052).contains(&g)), "Linux: 5 % per RTT, got {per_rtt:?}");
        assert!(close(l, 1000.0 * 1.05f64.powi(10), 15.0), "Linux: {l:.1} segments after 1 s");
        // Once a loss has set W_max, the stage follows the cubic as RFC 9438 does.
        let mut c = Cubic::new(linux);
        let cwnd = loss_at(&mut c, 1000.0);
        let after = drive(&mut c, cwnd, start, RTT_100MS, 1.0);
        let mut rfc = Cubic::default();
        let cwnd = loss_at(&mut rfc, 1000.0);
        let rfc_after = drive(&mut rfc, cwnd, start, RTT_100MS, 1.0);
        assert!((at(&after, 1.0) - at(&rfc_after, 1.0)).abs() < 1.0, "{after:?} vs {rfc_after:?}");
        // A timeout clears W_max (bictcp_reset): the 5 % floor applies again.
        c.ssthresh_after_loss(&view(150.0 * SEG, None), &signal(CongestionKind::Timeout, 150));
        let again = drive(&mut c, 100.0 * SEG, Time(20_000_000_000), RTT_100MS, 0.5);
        assert!(at(&again, 0.5) >= 100.0 * 1.05f64.powi(5) - 1.0, "{again:?}");
    }

    #[test]
    fn a_window_lowered_by_the_controller_starts_a_new_stage() {
        let mut c = Cubic::default();
        let w = loss_at(&mut c, 100.0);
        let rtt = Some(RTT_100MS);
        let w = c.on_ack(&view(w, rtt), &ack_at(Time(1_000_000_000), MSS));
        c.on_ack(&view(w, rtt), &ack_at(Time(1_100_000_000), MSS));
        assert_eq!(c.epoch.unwrap().t_epoch, Time(1_000_000_000), "the stage continues while cwnd is ours");
        // t=9s: restart after idle, cwnd = IW = 4 segments.
        c.on_ack(&view(4.0 * SEG, rtt), &ack_at(Time(9_000_000_000), MSS));
        let e = c.epoch.unwrap();
        assert_eq!(e.t_epoch, Time(9_000_000_000), "a new stage starts at the restarted window");
        assert_eq!(e.k, c.k(100.0, 4.0), "K from the remembered W_max");
    }
}
