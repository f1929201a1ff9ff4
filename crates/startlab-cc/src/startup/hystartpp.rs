//! HyStart++ — RFC 9406 (Balasubramanian, Huang, Olson, May 2023), §4; ALGORITHMS.md §8.5.
//!
//! Delay-based only: "HyStart++ uses increase in round-trip delay as a heuristic to find an exit
//! point before possible overshoot." When the minimum RTT of a round exceeds the previous round's by
//! `RttThresh`, slow start gives way to **Conservative Slow Start (CSS)**, which grows the window
//! `CSS_GROWTH_DIVISOR` times more slowly; if the RTT falls back below the CSS baseline the exit was
//! spurious and slow start resumes; after `CSS_ROUNDS` rounds of CSS, `ssthresh = cwnd` and the flow
//! enters congestion avoidance (exit reason `css-done`).
//!
//! Rounds are the controller's (ALGORITHMS.md §0.3, the RFC's `windowEnd`). The round in which CSS
//! was entered counts as the first of the `CSS_ROUNDS` (§20 item 10).
//!
//! Parameters (registry name `hystart++`):
//! * `paced` — default `false`: `L = 8` when not paced, `L = ∞` when paced ("A paced TCP
//!   implementation SHOULD use L = infinity");
//! * `low_window_gate` — default `false`: when true, CSS is not entered while cwnd < 16 segments
//!   (not in the RFC; some QUIC stacks do it, ALGORITHMS.md §8.5 (d)).
//!
//! HyStart++ runs in the initial slow start only (§8.5 (b)): "An implementation SHOULD use
//! HyStart++ only for the initial slow start ... and fall back to using standard slow start for the
//! remainder of the connection lifetime." After it ends, by its own exit or by a congestion signal,
//! this plug-in is standard slow start (`cwnd += min(N, SMSS)`, RFC 5681).

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, ExitReason};
use startlab_units::Dur;

/// `MIN_RTT_THRESH`: the floor of `RttThresh`.
pub const MIN_RTT_THRESH: Dur = Dur::from_millis(4);
/// `MAX_RTT_THRESH`: the ceiling of `RttThresh`.
pub const MAX_RTT_THRESH: Dur = Dur::from_millis(16);
/// `MIN_RTT_DIVISOR`: `RttThresh` is `lastRoundMinRTT / MIN_RTT_DIVISOR`, clamped.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// `N_RTT_SAMPLE`: RTT samples a round needs before the tests run.
pub const N_RTT_SAMPLE: u32 = 8;
/// `CSS_GROWTH_DIVISOR`: how much more slowly CSS grows than slow start (must be ≥ 2).
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
/// `CSS_ROUNDS`: rounds of CSS before congestion avoidance.
pub const CSS_ROUNDS: u32 = 5;
/// `L` for a sender that does not pace: at most `L·SMSS` bytes of one ACK count towards growth.
pub const L: u64 = 8;
/// The window below which `low_window_gate` holds off CSS, in segments.
const LOW_WINDOW: f64 = 16.0;

/// Configuration of [`HyStartPlusPlus`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HyStartPlusPlusConfig {
    /// The sender paces: `L = ∞` instead of 8.
    pub paced: bool,
    /// Hold off CSS while cwnd < 16 segments (not in RFC 9406).
    pub low_window_gate: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Standard slow start with HyStart++'s delay test.
    SlowStart,
    /// Conservative Slow Start.
    Css,
    /// HyStart++ has ended (CSS finished or a congestion signal): later slow starts are standard.
    Done,
}

/// HyStart++ (RFC 9406).
#[derive(Clone, Debug)]
pub struct HyStartPlusPlus {
    cfg: HyStartPlusPlusConfig,
    phase: Phase,
    /// `lastRoundMinRTT`; `None` is ∞.
    last_round_min_rtt: Option<Dur>,
    /// `currentRoundMinRTT`; `None` is ∞.
    current_round_min_rtt: Option<Dur>,
    /// `rttSampleCount`.
    rtt_sample_count: u32,
    /// `cssBaselineMinRtt`; `None` is ∞ (outside CSS).
    css_baseline_min_rtt: Option<Dur>,
    /// Rounds of CSS ended so far, the entry round included.
    css_rounds: u32,
}

/// `RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))`.
pub(crate) fn rtt_thresh(last_round_min_rtt: Dur) -> Dur {
    Dur(last_round_min_rtt.as_nanos() / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
}

impl HyStartPlusPlus {
    /// A flow in its initial slow start: every RTT variable at infinity.
    pub fn new(cfg: HyStartPlusPlusConfig) -> HyStartPlusPlus {
        HyStartPlusPlus {
            cfg,
            phase: Phase::SlowStart,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
        }
    }

    /// `min(N, L*SMSS)`, with `L = ∞` when paced.
    fn limited(&self, newly_acked: u64, mss: u64) -> f64 {
        match self.cfg.paced {
            true => newly_acked as f64,
            false => newly_acked.min(L * mss) as f64,
        }
    }
}

impl StartupAlgorithm for HyStartPlusPlus {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        if self.phase == Phase::Done {
            // Standard slow start (RFC 5681 §3.1) for every slow start after the initial one.
            return StartupAction::grow(ack.newly_acked.min(view.mss) as f64);
        }

        // "When windowEnd is ACKed, the current round ends and windowEnd is set to SND.NXT. At the
        // start of each round during standard slow start and CSS, initialize the variables used to
        // compute the last round's and current round's minimum RTT:
        //     lastRoundMinRTT = currentRoundMinRTT; currentRoundMinRTT = infinity;
        //     rttSampleCount = 0"
        if view.new_round {
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            if self.phase == Phase::Css {
                // "If CSS_ROUNDS rounds are complete, enter congestion avoidance by setting the
                // ssthresh to the current cwnd."
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    // NOTE: the ACK that completes the rounds adds nothing, so ssthresh is the
                    // window at the end of the last CSS round.
                    return StartupAction::exit(ExitReason::CssDone);
                }
            }
        }

        // "For each arriving ACK in slow start, where N is the number of previously unacknowledged
        // bytes acknowledged in the arriving ACK: cwnd = cwnd + min(N, L*SMSS)"
        // "For each arriving ACK in CSS ...: cwnd = cwnd + (min(N, L*SMSS) / CSS_GROWTH_DIVISOR)"
        let increase = match self.phase {
            Phase::Css => self.limited(ack.newly_acked, view.mss) / CSS_GROWTH_DIVISOR,
            _ => self.limited(ack.newly_acked, view.mss),
        };

        // "keep track of the minimum observed RTT: currentRoundMinRTT = min(currentRoundMinRTT,
        // currRTT); rttSampleCount += 1". An ACK without a sample (Karn) counts nothing (§8.5 (c)).
        if let Some(rtt) = ack.rtt {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sample_count += 1;
        }
        let enough = self.rtt_sample_count >= N_RTT_SAMPLE;

        match (self.phase, self.current_round_min_rtt, self.last_round_min_rtt) {
            // "For rounds where at least N_RTT_SAMPLE RTT samples have been obtained and
            // currentRoundMinRTT and lastRoundMinRTT are valid, check to see if delay increase
            // triggers slow start exit: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT /
            // MIN_RTT_DIVISOR, MAX_RTT_THRESH)); if (currentRoundMinRTT >= (lastRoundMinRTT +
            // RttThresh)) cssBaselineMinRtt = currentRoundMinRTT; exit slow start and enter CSS"
            (Phase::SlowStart, Some(current), Some(last)) if enough => {
                let gated = self.cfg.low_window_gate && view.cwnd < LOW_WINDOW * view.mss as f64;
                if !gated && current >= last + rtt_thresh(last) {
                    self.css_baseline_min_rtt = Some(current);
                    self.phase = Phase::Css;
                    self.css_rounds = 0;
                }
            }
            // "For CSS rounds where at least N_RTT_SAMPLE RTT samples have been obtained, check to
            // see if the current round's minRTT drops below baseline (cssBaselineMinRtt) indicating
            // that slow start exit was spurious: if (currentRoundMinRTT < cssBaselineMinRtt)
            // cssBaselineMinRtt = infinity; resume slow start including HyStart++"
            (Phase::Css, Some(current), _)
                if enough && self.css_baseline_min_rtt.is_some_and(|baseline| current < baseline) =>
            {
                self.css_baseline_min_rtt = None;
                self.phase = Phase::SlowStart;
            }
            _ => {}
        }
        StartupAction::grow(increase)
    }

    /// "If loss or ECN-marking is observed anytime during standard slow start or CSS, ... enter
    /// congestion avoidance" — the controller does that; HyStart++ is not used again.
    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.phase = Phase::Done;
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// `paced` of `startup = { algorithm = "hystart++", ... }`.
pub const PACED: Param<bool> = Param::flag("paced", "false", "the sender paces: L = infinity instead of 8 (cwnd += min(N, L*SMSS))");

/// `low_window_gate` of `startup = { algorithm = "hystart++", ... }`.
pub const LOW_WINDOW_GATE: Param<bool> = Param::flag("low_window_gate", "false", "do not enter CSS while cwnd < 16 segments (not in RFC 9406; some QUIC stacks)");

/// The declaration of `hystart++` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "hystart++",
        role: "startup",
        summary: "HyStart++: when a round's min RTT rises by clamp(lastRoundMinRTT/8, 4 ms, 16 ms), Conservative Slow Start (growth/4) for 5 rounds, then ssthresh = cwnd; an RTT drop in CSS resumes slow start",
        source: "RFC 9406 §4 (ALGORITHMS.md §8.5)",
        params: &[PACED.info, LOW_WINDOW_GATE.info],
    },
    build: super::Build::Native(|p, _| super::Startup::HyStartPlusPlus(HyStartPlusPlus::new(HyStartPlusPlusConfig {
            paced: p.get(&PACED),
            low_window_gate: p.get(&LOW_WINDOW_GATE),
        }))),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{at_ms, ms, Sender, MSS};
    use crate::startup::Startup;
    use crate::{CongestionKind, Phase as CcPhase, Ssthresh};

    fn hspp(cfg: HyStartPlusPlusConfig) -> Startup {
        Startup::HyStartPlusPlus(HyStartPlusPlus::new(cfg))
    }

    /// cwnd growth (segments) over the next ACK of one segment.
    fn step(s: &mut Sender, t: u64, rtt: u64) -> f64 {
        let before = s.cwnd();
        s.ack_n(at_ms(t), Some(ms(rtt)), 1);
        s.cwnd() - before
    }

    #[test]
    fn rtt_thresh_is_an_eighth_of_the_last_round_clamped_to_4_and_16_ms() {
        // ALGORITHMS.md §8.7: 2 → 4, 20 → 4, 80 → 10, 128 → 16, 200 → 16 (ms).
        for (last, thresh) in [(2, 4), (20, 4), (80, 10), (128, 16), (200, 16)] {
            assert_eq!(rtt_thresh(ms(last)), ms(thresh), "lastRoundMinRTT {last} ms");
        }
        assert_eq!(rtt_thresh(ms(100)), Dur::from_micros(12_500));
    }

    #[test]
    fn enters_css_on_the_round_where_the_min_rtt_rises_by_more_than_its_threshold() {
        let mut s = Sender::new(hspp(HyStartPlusPlusConfig::default()), 10);
        // Round 1, t=100.. ms: 10 ACKs at RTT 100 ms; lastRoundMinRTT is ∞: no test.
        for i in 0..10 {
            assert_eq!(step(&mut s, 100 + i, 100), 1.0);
        }
        // Round 2: RttThresh = 12.5 ms. Samples at 112 ms stay below 112.5 ms: slow start.
        for i in 0..20 {
            assert_eq!(step(&mut s, 200 + i, 112), 1.0, "ACK {i} of round 2 in slow start");
        }
        // Round 3: last = 112 ms, RttThresh = 14 ms; 126 ms ≥ 126 ms at the 8th sample: CSS. That
        // ACK still grew by a segment (the test follows the increase), the next ones by a quarter.
        for i in 0..8 {
            assert_eq!(step(&mut s, 300 + i, 126), 1.0, "ACK {i} of round 3 before the test holds");
        }
        for i in 8..40 {
            assert_eq!(step(&mut s, 300 + i, 126), 0.25, "ACK {i} of round 3 in CSS");
        }
        assert_eq!(s.c.phase(), CcPhase::SlowStart, "CSS is still startup");
        assert_eq!(s.exit(), None);
    }

    /// Rounds 1-2 at 100 ms, round 3 at 113 ms (≥ 100 + 12.5 on its 8th sample): CSS from there,
    /// with cwnd 40 + 8 = 48 segments at entry and 48 + 32/4 = 56 at the end of round 3.
    fn into_css(s: &mut Sender) {
        for (start, rtt) in [(100, 100), (200, 100), (300, 113)] {
            assert_eq!(s.flight_acks(at_ms(start), ms(1), |_| Some(ms(rtt))), None);
        }
        assert_eq!(s.cwnd(), 56.0);
    }

    #[test]
    fn leaves_css_after_css_rounds_with_ssthresh_equal_to_cwnd() {
        let mut s = Sender::new(hspp(HyStartPlusPlusConfig::default()), 10);
        into_css(&mut s);
        // Round 3 was the entry round (CSS round 1). Rounds 4-7 are CSS rounds 2-5, each growing
        // by a quarter of its flight: 56 → 70 → 87.5 → 109.25 → 136.5 (whole segments in flight: 56, 70, 87, 109).
        let mut start = 400;
        for want in [70.0, 87.5, 109.25, 136.5] {
            assert_eq!(s.flight_acks(at_ms(start), ms(1), |_| Some(ms(113))), None);
            assert_eq!(s.cwnd(), want, "a CSS round grows by flight/4");
            start += 200;
        }
        // The first ACK of round 8 ends CSS round 5: CA with ssthresh = cwnd.
        assert_eq!(s.flight_acks(at_ms(start), ms(1), |_| Some(ms(113))), Some(0));
        assert_eq!(s.exit(), Some((ExitReason::CssDone, 136.5)));
        assert_eq!(s.c.ssthresh(), Ssthresh::Bytes(136.5 * MSS as f64));
        assert_eq!(s.c.phase(), CcPhase::CongestionAvoidance);
    }

    #[test]
    fn an_rtt_below_the_css_baseline_resumes_slow_start() {
        let mut s = Sender::new(hspp(HyStartPlusPlusConfig::default()), 10);
        into_css(&mut s);
        // Round 4: 56 ACKs at 105 ms < baseline 113 ms. The 8th sample proves the exit spurious:
        // seven ACKs grow by a quarter, the eighth still by a quarter (CSS when it arrived), then
        // slow start: 56 + 8/4 + 48 = 106.
        assert_eq!(s.flight_acks(at_ms(400), ms(1), |_| Some(ms(105))), None);
        assert_eq!(s.cwnd(), 106.0);
        // Rounds 5-7 at 105 ms (no rise over round 4): plain slow start, and no CSS exit comes.
        for start in [600, 1000, 2000] {
            assert_eq!(s.flight_acks(at_ms(start), ms(1), |_| Some(ms(105))), None);
        }
        assert_eq!(s.cwnd(), 106.0 * 8.0, "doubling again");
    }

    #[test]
    fn acks_without_an_rtt_sample_grow_the_window_but_are_not_samples() {
        let mut s = Sender::new(hspp(HyStartPlusPlusConfig::default()), 10);
        for (start, rtt) in [(100, 100), (200, 100)] {
            s.flight_acks(at_ms(start), ms(1), |_| Some(ms(rtt)));
        }
        // Round 3: the first four ACKs carry no sample (Karn); the 8th sample is the 12th ACK.
        for i in 0..4 {
            let before = s.cwnd();
            s.ack_n(at_ms(300 + i), None, 1);
            assert_eq!(s.cwnd() - before, 1.0);
        }
        for i in 4..12 {
            assert_eq!(step(&mut s, 300 + i, 113), 1.0, "ACK {i}: fewer than 8 samples");
        }
        assert_eq!(step(&mut s, 312, 113), 0.25, "CSS after the 8th sample");
    }

    #[test]
    fn byte_counting_is_capped_at_l_segments_unless_paced() {
        // A stretch ACK covering 10 segments adds 8 SMSS (L = 8) unpaced, all 10 when paced.
        let mut s = Sender::new(hspp(HyStartPlusPlusConfig::default()), 20);
        s.ack_n(at_ms(100), Some(ms(100)), 10);
        assert_eq!(s.cwnd(), 28.0);
        let mut p = Sender::new(hspp(HyStartPlusPlusConfig { paced: true, ..Default::default() }), 20);
        p.ack_n(at_ms(100), Some(ms(100)), 10);
        assert_eq!(p.cwnd(), 30.0);
    }

    #[test]
    fn the_low_window_gate_holds_off_css_below_sixteen_segments() {
        // IW 4. Round 1: 4 ACKs at 100 ms (cwnd 4 → 8). Round 2: 8 ACKs at 120 ms ≥ 100 + 12.5;
        // the 8th sample arrives with cwnd 15: the RFC enters CSS there, the gate does not (15 < 16).
        // Either way that ACK grew by a full segment: cwnd 16. Round 3: 16 ACKs at 120 ms.
        let run = |cfg| {
            let mut s = Sender::new(hspp(cfg), 4);
            s.flight_acks(at_ms(100), ms(1), |_| Some(ms(100)));
            s.flight_acks(at_ms(200), ms(1), |_| Some(ms(120)));
            assert_eq!(s.cwnd(), 16.0);
            s.flight_acks(at_ms(400), ms(1), |_| Some(ms(120)));
            s.cwnd()
        };
        assert_eq!(run(HyStartPlusPlusConfig::default()), 20.0, "RFC: round 3 in CSS, 16 + 16/4");
        let gated = HyStartPlusPlusConfig { low_window_gate: true, ..Default::default() };
        assert_eq!(run(gated), 32.0, "gated: round 3 in slow start, and 120 ms is no rise over round 2");
    }

    #[test]
    fn after_a_congestion_signal_hystartpp_is_standard_slow_start() {
        let mut h = HyStartPlusPlus::new(HyStartPlusPlusConfig::default());
        let view = CcView { cwnd: 20.0 * MSS as f64, ssthresh: Ssthresh::Bytes(100.0 * MSS as f64), mss: MSS, round: 4, min_rtt: None, new_round: false };
        h.on_congestion(&view, &CongestionEvent { now: at_ms(1), kind: CongestionKind::Timeout, flight_size: 0, enter_recovery: false });
        let stretch = AckEvent {
            now: at_ms(2),
            newly_acked: 4 * MSS,
            ack_seq: 4 * MSS,
            snd_nxt: 20 * MSS,
            rtt: Some(ms(500)),
            flight_size: 16 * MSS,
            acked_segments: 4,
            delivered: 4 * MSS,
            ..AckEvent::default()
        };
        for round in 0..30 {
            let a = h.on_ack(&CcView { new_round: true, round, ..view }, &stretch);
            assert_eq!(a, StartupAction::grow(MSS as f64), "min(N, SMSS), never CSS, never an exit");
        }
    }
}
