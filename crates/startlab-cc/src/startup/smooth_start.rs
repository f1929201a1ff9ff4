//! Smooth-start — Wang, Xin, Reeves & Shin, "A Simple Refinement of Slow-start of TCP Congestion
//! Control" (ALGORITHMS.md §6).
//!
//! Slow start doubles right up to ssthresh, so its last round trip adds as much as all the others
//! together. Smooth-start keeps slow start below a separator `smsthresh = ssthresh / 2^d` (the
//! "pouring sub-phase") and then takes each of the last `d` doublings in `k` round trips (the
//! "probing sub-phase"): "if we start with k ACKs triggering one increment of the congestion window
//! size at the first RTT, and (k+i) ACKs triggering one increment of cwnd at the following i-th
//! RTT, we need k RTTs to increase cwnd from ssthresh/2^(n-i) to ssthresh/2^(n-(i+1)) ... The
//! number of lag points inserted ... is k−1", so "ExtraRTTs = d × (k − 1)".
//!
//! Parameters: the grain number `k` (default 3) and the depth number `d` (default 2), or one of the
//! paper's four strategies as `preset` (Table 1; §5.1: "Coarse stands for the coarse-grained probe
//! strategy, and Fine stands for the fine-grained ... The number 2 or 4 indicates the chosen
//! separator is ssthresh/2 or ssthresh/4"): Coarse-2 (k=2, d=1), Fine-2 (k=3, d=1), Coarse-4
//! (k=2, d=2), Fine-4 (k=3, d=2), the one the paper recommends and the default of `k` and `d`.
//! `counting` picks packet counting (the paper's per-packet ACKs) or byte counting with `L = 2`
//! (§6.6, for delayed ACKs). `ssthresh_estimator = "packet-pair"` sets ssthresh from Hoe's
//! estimate as in the paper's §5.4 (Figures 12–13).
//!
//! The per-ACK rule is ALGORITHMS.md §6.4 (RESOLVED), state-free: in the fluid model the j-th round
//! trip of the doubling that starts at `base` begins exactly when `cwnd = base·(k+j)/k`, so the
//! divisor follows from cwnd alone and each ACK adds `SMSS / n` (fractional accumulation).
//! Smooth-start runs again in every slow start with the ssthresh of the moment ("triggered at the
//! beginning of a connection or after a retransmission timeout"). It needs a finite ssthresh: with
//! an infinite one the separator is infinite and it is slow start, so the scenario reader refuses
//! that combination unless the packet-pair estimator supplies one (§20 item 4).
//!
//! NOTE: the ns-2-parity variants of §6.4 (`SmoothCounterMode`: count n ACKs then add one segment;
//! `SmoothRoundMode`: freeze n at each round start) are not implemented; the fractional rule is the
//! one the `ExtraRTTs` formula holds for (§6.7).

use crate::startup::hoe::{lower_ssthresh, PacketPairEstimator};
use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, Ssthresh};

/// A (grain number, depth number) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strategy {
    /// Grain number: round trips per smoothed doubling (1 = slow start).
    pub k: u32,
    /// Depth number: smoothed doublings below ssthresh (0 = slow start).
    pub d: u32,
}

/// Table 1: one lag point, separator ssthresh/2.
pub const COARSE_2: Strategy = Strategy { k: 2, d: 1 };
/// Table 1: two lag points, separator ssthresh/2.
pub const FINE_2: Strategy = Strategy { k: 3, d: 1 };
/// Table 1: two lag points, separator ssthresh/4.
pub const COARSE_4: Strategy = Strategy { k: 2, d: 2 };
/// Table 1: four lag points, separator ssthresh/4; "Fine-4 is the probe strategy that achieves much
/// less packet losses and very good effective throughput improvements" (§5.2.2).
pub const FINE_4: Strategy = Strategy { k: 3, d: 2 };

impl Strategy {
    /// The paper's strategy named `name` in a scenario (`"fine-4"`...).
    pub fn named(name: &str) -> Option<Strategy> {
        match name {
            "coarse-2" => Some(COARSE_2),
            "fine-2" => Some(FINE_2),
            "coarse-4" => Some(COARSE_4),
            "fine-4" => Some(FINE_4),
            _ => None,
        }
    }

    /// `ExtraRTTs = d × (k − 1)`: round trips added to slow start's `log2(ssthresh)`.
    pub fn extra_rtts(self) -> u32 {
        self.d * self.k.saturating_sub(1)
    }
}

/// How ACKs are counted (ALGORITHMS.md §0.4, §6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// One increment opportunity per ACK, worth at most one segment (the paper's setting).
    Packet,
    /// The segments an ACK covers, at most `L = 2` (RFC 3465), so delayed ACKs keep the schedule.
    Byte,
}

/// RFC 3465 `L` for [`Counting::Byte`], in segments.
pub const L: u64 = 2;

/// Configuration of [`SmoothStart`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmoothStartConfig {
    /// Grain and depth numbers.
    pub strategy: Strategy,
    /// ACK counting.
    pub counting: Counting,
    /// Set ssthresh from Hoe's packet-pair estimate (only ever lowering it).
    pub packet_pair: bool,
}

impl Default for SmoothStartConfig {
    fn default() -> Self {
        SmoothStartConfig { strategy: FINE_4, counting: Counting::Packet, packet_pair: false }
    }
}

/// Relative tolerance on the divisor boundaries, so a window that reached `base·(k+j)/k` through
/// floating-point sums of `SMSS/n` is not read as just below it.
const BOUNDARY_EPSILON: f64 = 1e-9;

/// ALGORITHMS.md §6.4: the number of ACKs per one-segment increment at a window of `cwnd_pkts`
/// segments, `None` in the pouring sub-phase (slow start).
///
/// ```text
/// smsthresh = ssthresh / 2^d
/// base = smsthresh · 2^p, p = floor(log2(cwnd/smsthresh)), 0 ≤ p ≤ d−1
/// j    = floor(k · (cwnd/base − 1)), 0 ≤ j ≤ k−1
/// n    = k + j
/// ```
pub fn divisor(cwnd_pkts: f64, ssthresh_pkts: f64, s: Strategy) -> Option<u32> {
    if s.d == 0 || s.k <= 1 {
        return None;
    }
    let smsthresh = ssthresh_pkts / 2f64.powi(s.d as i32);
    if cwnd_pkts < smsthresh * (1.0 - BOUNDARY_EPSILON) {
        return None;
    }
    let mut base = smsthresh;
    for _ in 1..s.d {
        if cwnd_pkts >= 2.0 * base * (1.0 - BOUNDARY_EPSILON) {
            base *= 2.0;
        }
    }
    let j = (s.k as f64 * (cwnd_pkts / base - 1.0) + BOUNDARY_EPSILON).floor().clamp(0.0, (s.k - 1) as f64) as u32;
    Some(s.k + j)
}

/// Smooth-start.
#[derive(Clone, Debug)]
pub struct SmoothStart {
    cfg: SmoothStartConfig,
    estimator: PacketPairEstimator,
}

impl SmoothStart {
    /// A fresh instance for one connection.
    pub fn new(cfg: SmoothStartConfig) -> SmoothStart {
        SmoothStart { cfg, estimator: PacketPairEstimator::new() }
    }
}

impl StartupAlgorithm for SmoothStart {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let mss = view.mss as f64;
        let set_ssthresh = if self.cfg.packet_pair { lower_ssthresh(view, self.estimator.on_ack(view, ack)) } else { None };
        let ssthresh = match set_ssthresh {
            Some(s) => Ssthresh::Bytes(s),
            None => view.ssthresh,
        };
        // units · SMSS: "units = 1 (PerAck mode) | N / SMSS (ByteCount mode, capped at L)".
        let counted = match self.cfg.counting {
            Counting::Packet => ack.newly_acked.min(view.mss),
            Counting::Byte => ack.newly_acked.min(L * view.mss),
        } as f64;
        let increase = match ssthresh {
            // An infinite separator: slow start (refused by the scenario reader without an estimator).
            Ssthresh::Infinite => counted,
            Ssthresh::Bytes(s) => match divisor(view.cwnd / mss, s / mss, self.cfg.strategy) {
                // "if cwnd_pkts < smsthresh: cwnd += units * SMSS" (pouring sub-phase)
                None => counted,
                // "cwnd += units * SMSS / n" (probing sub-phase)
                Some(n) => counted / n as f64,
            },
        };
        StartupAction { increase, set_ssthresh, ..StartupAction::default() }
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        // A later slow start smooths towards the new ssthresh; no new estimate is made.
        self.estimator.abandon();
    }
}


use crate::decl::{AlgorithmInfo, FlowContext, Param, ParamError, Params, Range};

/// `preset` of `startup = { algorithm = "smooth-start", ... }`.
pub const PRESET: Param<&'static str> = Param::choice("preset", &["none", "coarse-2", "fine-2", "coarse-4", "fine-4"], "\"none\"", "the paper's strategies (Table 1): coarse-2 (k=2, d=1), fine-2 (k=3, d=1), coarse-4 (k=2, d=2), fine-4 (k=3, d=2); \"none\" uses k and d");

/// `k` of `startup = { algorithm = "smooth-start", ... }`.
pub const K: Param<u64> = Param::integer("k", "3", "grain number: RTTs per smoothed doubling, at least 1 (1 = slow start); not with a preset").range(Range::AtLeast(1.0));

/// `d` of `startup = { algorithm = "smooth-start", ... }`.
pub const D: Param<u64> = Param::integer("d", "2", "depth number: smoothed doublings, separator ssthresh/2^d, 0 to 30 (0 = slow start); not with a preset").range(Range::Between(0.0, 30.0));

/// `counting` of `startup = { algorithm = "smooth-start", ... }`.
pub const COUNTING: Param<&'static str> = Param::choice("counting", &["packet", "byte"], "\"packet\"", "\"packet\": one increment opportunity per ACK (the paper, per-packet ACKs); \"byte\": the segments an ACK covers, at most 2 (for delayed ACKs)");

/// `ssthresh_estimator` of `startup = { algorithm = "smooth-start", ... }`.
pub const SSTHRESH_ESTIMATOR: Param<&'static str> = Param::choice("ssthresh_estimator", &["none", "packet-pair"], "\"none\"", "\"packet-pair\": lower ssthresh to Hoe's estimate from the first back-to-back pair of ACKs (the paper's Figures 12-13)");

/// A preset excludes k and d; the separator ssthresh/2^d needs a finite ssthresh or the estimator
/// (ALGORITHMS.md §6.5, §20 item 4).
fn check(p: &Params<'_>, cx: &FlowContext, given: &dyn Fn(&str) -> bool) -> Result<(), ParamError> {
    if p.get(&PRESET) != "none" {
        if let Some(key) = [&K, &D].into_iter().map(|q| q.info.name).find(|k| given(k)) {
            return Err(ParamError::new(key, format!("is set by preset = {:?}; give either a preset or k and d", p.get(&PRESET))));
        }
    }
    if cx.infinite_ssthresh && p.get(&SSTHRESH_ESTIMATOR) == "none" {
        return Err(ParamError::new(
            "algorithm",
            "\"smooth-start\" needs a finite tcp.initial_ssthresh or ssthresh_estimator = \"packet-pair\" (its separator is ssthresh/2^d)",
        ));
    }
    Ok(())
}

/// The declaration of `smooth-start` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "smooth-start",
        role: "startup",
        summary: "Smooth-start: slow start up to ssthresh/2^d, then each of the last d doublings over k RTTs (one increment per k+j ACKs in the j-th); needs a finite ssthresh or the packet-pair estimator",
        source: "Wang, Xin, Reeves & Shin, A Simple Refinement of Slow-start of TCP Congestion Control, §4 (ALGORITHMS.md §6)",
        params: &[PRESET.info, K.info, D.info, COUNTING.info, SSTHRESH_ESTIMATOR.info],
    },
    build: super::Build::Native(|p, _| super::Startup::SmoothStart(SmoothStart::new(SmoothStartConfig {
            strategy: Strategy::named(p.get(&PRESET)).unwrap_or(Strategy {
                k: p.get(&K).min(u32::MAX as u64) as u32,
                d: p.get(&D).min(u32::MAX as u64) as u32,
            }),
            counting: match p.get(&COUNTING) {
                "byte" => Counting::Byte,
                _ => Counting::Packet,
            },
            packet_pair: p.get(&SSTHRESH_ESTIMATOR) == "packet-pair",
        }))),
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
    use crate::avoidance::{Avoidance, Reno};
    use crate::startup::{SlowStart, Startup};
    use crate::{CcConfig, Controller, Phase, Time};
    use startlab_units::Dur;

    /// 960 = 2^6·15: every window of the fluid trace below is a whole number of bytes and every
    /// `SMSS/n` (n = 2..5) is exact, so the sums land on the boundaries.
    const MSS: u64 = 960;

    /// Drives a controller with IW 1 segment, ssthresh `ssthresh_pkts`, one ACK per segment, each
    /// round acknowledging exactly the window at its start (the last ACK partial: the fluid model
    /// of §6.3). Returns the window (segments) after every round until startup ends.
    fn fluid_trace(startup: Startup, ssthresh_pkts: u64) -> Vec<f64> {
        let mut c = Controller::new(
            CcConfig {
                mss: MSS,
                initial_window: MSS,
                initial_ssthresh: Ssthresh::Bytes((ssthresh_pkts * MSS) as f64),
                loss_window: MSS,
                cwnd_validation: false,
                linux_ss_clamp: false,
            },
            startup,
            Avoidance::Reno(Reno::default()),
        );
        let mut trace = vec![1.0];
        let mut seq = 0;
        for round in 1..100u64 {
            let window = c.cwnd();
            assert_eq!(window.fract(), 0.0, "round {round}: the fluid trace keeps whole bytes, got {window}");
            let mut left = window as u64;
            while left > 0 && c.phase() == Phase::SlowStart {
                let n = left.min(MSS);
                seq += n;
                // t = round × 100 ms: ACK for n bytes.
                c.on_ack(&AckEvent {
                    now: Time(round * 100_000_000),
                    newly_acked: n,
                    ack_seq: seq,
                    snd_nxt: seq,
                    rtt: Some(Dur::from_millis(100)),
                    delivered: seq,
                    ..AckEvent::default()
                });
                left -= n;
            }
            trace.push(c.cwnd() / MSS as f64);
            if c.phase() != Phase::SlowStart {
                return trace;
            }
        }
        panic!("startup never ended: {trace:?}");
    }

    fn smooth(s: Strategy) -> Startup {
        Startup::SmoothStart(SmoothStart::new(SmoothStartConfig { strategy: s, ..SmoothStartConfig::default() }))
    }

    #[test]
    fn fine_2_grows_by_four_thirds_five_quarters_six_fifths_after_the_separator() {
        let t = fluid_trace(smooth(FINE_2), 64);
        // 1, 2, 4, 8, 16, 32 (separator 64/2), 42.67, 53.33, 64.
        assert_eq!(&t[..6], &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0], "slow start below the separator");
        let factors: Vec<f64> = t[5..].windows(2).map(|w| w[1] / w[0]).collect();
        let expected = [4.0 / 3.0, 5.0 / 4.0, 6.0 / 5.0];
        assert_eq!(factors.len(), 3, "three rounds from the separator to ssthresh: {t:?}");
        for (f, e) in factors.iter().zip(expected) {
            assert!((f - e).abs() < 1e-9, "per-round factors should be 4/3, 5/4, 6/5, got {factors:?}");
        }
        assert!((t.last().unwrap() - 64.0).abs() < 1e-9, "ssthresh reached exactly: {t:?}");
    }

    #[test]
    fn each_strategy_reaches_ssthresh_exactly_its_extra_rtts_after_slow_start() {
        // ALGORITHMS.md §6.8: T_Smooth = RTT·log2(ssthresh) + d(k−1)·RTT; Table 1: 1, 2, 2, 4.
        let slow = fluid_trace(Startup::SlowStart(SlowStart::default()), 64).len() - 1;
        assert_eq!(slow, 6, "slow start: log2(64) rounds");
        for (name, extra) in [("coarse-2", 1), ("fine-2", 2), ("coarse-4", 2), ("fine-4", 4)] {
            let s = Strategy::named(name).unwrap();
            assert_eq!(s.extra_rtts(), extra, "{name}: Table 1 lag points");
            let rounds = fluid_trace(smooth(s), 64).len() - 1;
            assert_eq!(rounds, slow + extra as usize, "{name} should take d(k−1) = {extra} more rounds than slow start");
        }
    }

    #[test]
    fn fine_4_follows_the_fluid_trace_of_the_spec() {
        // ALGORITHMS.md §6.8: 1, 2, 4, 8, 16, 21.33, 26.67, 32, 42.67, 53.33, 64 → 10 RTTs = 6 + 4.
        let t = fluid_trace(smooth(FINE_4), 64);
        let expected = [1.0, 2.0, 4.0, 8.0, 16.0, 64.0 / 3.0, 80.0 / 3.0, 32.0, 128.0 / 3.0, 160.0 / 3.0, 64.0];
        assert_eq!(t.len(), expected.len(), "{t:?}");
        for (got, want) in t.iter().zip(expected) {
            assert!((got - want).abs() < 1e-9, "trace {t:?} should be {expected:?}");
        }
    }

    #[test]
    fn the_divisor_table_of_the_spec() {
        // ssthresh 64, k 3, d 2, smsthresh 16: 16–21.33 → 3; –26.67 → 4; –32 → 5; 32–42.67 → 3;
        // –53.33 → 4; –64 → 5; below 16 slow start.
        let n = |w: f64| divisor(w, 64.0, FINE_4);
        assert_eq!(n(15.9), None);
        for (w, want) in [(16.0, 3), (21.0, 3), (21.5, 4), (26.5, 4), (27.0, 5), (31.9, 5), (32.0, 3), (42.5, 3), (42.7, 4), (53.3, 4), (53.4, 5), (63.9, 5)] {
            assert_eq!(n(w), Some(want), "n at cwnd {w}");
        }
        assert_eq!(divisor(40.0, 64.0, Strategy { k: 1, d: 2 }), None, "k = 1 is slow start");
        assert_eq!(divisor(40.0, 64.0, Strategy { k: 3, d: 0 }), None, "d = 0 is slow start");
    }

    #[test]
    fn byte_counting_keeps_the_schedule_under_delayed_acks() {
        // cwnd 32 of ssthresh 64 (Fine-2, n = 3): an ACK for two segments adds 2/3 of a segment.
        let view = CcView { cwnd: 32.0 * MSS as f64, ssthresh: Ssthresh::Bytes(64.0 * MSS as f64), mss: MSS, round: 5, min_rtt: None, new_round: false };
        let ack = AckEvent {
            newly_acked: 2 * MSS,
            acked_segments: 2,
            ..AckEvent::default()
        };
        let mut by_bytes = SmoothStart::new(SmoothStartConfig { strategy: FINE_2, counting: Counting::Byte, packet_pair: false });
        let mut by_packets = SmoothStart::new(SmoothStartConfig { strategy: FINE_2, counting: Counting::Packet, packet_pair: false });
        assert_eq!(by_bytes.on_ack(&view, &ack).increase, 2.0 * MSS as f64 / 3.0);
        assert_eq!(by_packets.on_ack(&view, &ack).increase, MSS as f64 / 3.0);
    }

    #[test]
    fn the_packet_pair_estimate_becomes_the_ssthresh_smooth_start_aims_at() {
        let mut s = SmoothStart::new(SmoothStartConfig { strategy: FINE_4, counting: Counting::Packet, packet_pair: true });
        let view = CcView { cwnd: 2.0 * MSS as f64, ssthresh: Ssthresh::Infinite, mss: MSS, round: 0, min_rtt: Some(Dur::from_millis(100)), new_round: false };
        let ack = |us: u64, seg: u64| AckEvent {
            now: Time(us * 1000),
            newly_acked: MSS,
            ack_seq: seg * MSS,
            snd_nxt: 2 * MSS,
            rtt: Some(Dur::from_millis(100)),
            delivered: seg * MSS,
            ..AckEvent::default()
        };
        // t=100ms, 110ms: two ACKs 10 ms apart → 10 segments per RTT of 100 ms → ssthresh 10.
        assert_eq!(s.on_ack(&view, &ack(100_000, 1)).set_ssthresh, None);
        let a = s.on_ack(&view, &ack(110_000, 2));
        assert_eq!(a.set_ssthresh, Some(10.0 * MSS as f64));
        // cwnd 2 < separator 10/4 = 2.5: still pouring.
        assert_eq!(a.increase, MSS as f64);
    }
}
