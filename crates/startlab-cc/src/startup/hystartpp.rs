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
//! Parameters (registry name `hystart++`, declared in `hystartpp/decl.rs`): the RFC's constants,
//! `paced` (`L = 8` when not paced, `L = ∞` when paced: "A paced TCP implementation SHOULD use
//! L = infinity"), `low_window_gate` (no CSS while cwnd < 16 segments; not in the RFC), and the
//! choices by which the QUIC stacks that deploy HyStart++ differ from the RFC's text
//! ([`RttSamples`], [`RoundMin`], [`CssCheck`], [`CssBaseline`], [`AckOrder`], `later_slow_starts`).
//! A `preset` ("rfc9406", "quiche", "msquic", "neqo", "ngtcp2") sets all of them as one stack
//! does; `hystartpp/decl.rs` cites each stack's source file and version.
//!
//! By default HyStart++ runs in the initial slow start only (§8.5 (b)): "An implementation SHOULD
//! use HyStart++ only for the initial slow start ... and fall back to using standard slow start for
//! the remainder of the connection lifetime." After it ends, by its own exit or by a congestion
//! signal, this plug-in is standard slow start (`cwnd += min(N, SMSS)`, RFC 5681), unless
//! `later_slow_starts = "hystart++"`, which starts it afresh in every later slow start.

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, ExitReason};
use startlab_units::Dur;

mod decl;
pub use decl::DECL;
#[cfg(test)]
mod tests;

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

/// A closed set of choices, each with its name in scenarios.
macro_rules! named {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $v,)* }
        impl $name {
            /// Every choice's name in scenarios, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($s),*];
            /// The name in scenarios.
            pub fn name(self) -> &'static str {
                match self { $(Self::$v => $s,)* }
            }
            /// The choice named `s`.
            pub fn named(s: &str) -> Option<Self> {
                match s { $($s => Some(Self::$v),)* _ => None }
            }
        }
    };
}

named! {
    /// How many RTT samples an ACK with an RTT sample gives.
    RttSamples {
        /// One (RFC 9406: "For each arriving ACK ... rttSampleCount += 1").
        PerAck = "per-ack",
        /// One per segment it acknowledges, each with the ACK's RTT (quiche: its congestion control
        /// runs per acknowledged packet with the connection's latest RTT).
        PerSegment = "per-segment",
    }
}

named! {
    /// Which samples of a round its minimum RTT is taken over.
    RoundMin {
        /// Every sample (RFC 9406); the tests run from the `N_RTT_SAMPLE`-th sample on.
        AllSamples = "all-samples",
        /// The first `N_RTT_SAMPLE` only; both tests run on the later samples of the round, against
        /// that minimum (msquic).
        FirstN = "first-n",
    }
}

named! {
    /// When CSS checks whether its entry was spurious (the round's minimum below the baseline).
    CssCheck {
        /// On every sample once the round has `N_RTT_SAMPLE` (RFC 9406, msquic).
        NSamples = "n-samples",
        /// On every sample, from the round's first (ngtcp2).
        EverySample = "every-sample",
        /// On every `N_RTT_SAMPLE`-th sample: the count restarts after each check (quiche).
        EveryNthSample = "every-nth-sample",
        /// As `n-samples`, but the count restarts when CSS is entered, so the round of entry needs
        /// `N_RTT_SAMPLE` more samples (neqo).
        NAfterEntry = "n-after-entry",
    }
}

named! {
    /// The baseline a CSS round's minimum is compared with.
    CssBaseline {
        /// `currentRoundMinRTT` when CSS was entered (RFC 9406).
        EntryMin = "entry-min",
        /// `lastRoundMinRTT + RttThresh` at entry, the level that triggered CSS (neqo's
        /// `HyStartCssBaseline::EntryThreshold`, not its default).
        EntryThreshold = "entry-threshold",
    }
}

named! {
    /// The order of the three steps of an ACK: R, the round that ends on it (the minima roll over,
    /// a CSS round is counted and CSS may end); G, its growth (with the phase at that step); S, its
    /// RTT samples with the tests after each.
    AckOrder {
        /// R, G, S (RFC 9406 as ALGORITHMS.md §0.5 orders it): the round-ending ACK's sample opens
        /// the next round; the ACK that completes CSS adds nothing.
        RoundGrowthSample = "round-growth-sample",
        /// G, S, R (quiche): the round-ending ACK's sample belongs to the round it ends, and the
        /// ACK that completes CSS still grows.
        GrowthSampleRound = "growth-sample-round",
        /// S, R, G (msquic, neqo): the tests come first, so the ACK that enters CSS already grows by
        /// a CSS increment, and the ACK that completes CSS adds nothing.
        SampleRoundGrowth = "sample-round-growth",
        /// G, R, S (ngtcp2): the ACK that completes CSS grows; CSS ends after its sample, unless
        /// that sample found the entry spurious.
        GrowthRoundSample = "growth-round-sample",
    }
}

/// Configuration of [`HyStartPlusPlus`]; the default is RFC 9406's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyStartPlusPlusConfig {
    /// The sender paces: `L = ∞` instead of 8.
    pub paced: bool,
    /// Hold off CSS while cwnd < 16 segments (not in RFC 9406).
    pub low_window_gate: bool,
    /// `MIN_RTT_THRESH`.
    pub min_rtt_thresh: Dur,
    /// `MAX_RTT_THRESH`.
    pub max_rtt_thresh: Dur,
    /// `MIN_RTT_DIVISOR` (at least 1).
    pub min_rtt_divisor: u64,
    /// `N_RTT_SAMPLE`.
    pub n_rtt_sample: u32,
    /// `CSS_GROWTH_DIVISOR`.
    pub css_growth_divisor: f64,
    /// `CSS_ROUNDS`: round ends in CSS, the round of entry's included, before congestion avoidance.
    pub css_rounds: u32,
    /// Samples per ACK.
    pub rtt_samples: RttSamples,
    /// The samples a round's minimum is taken over.
    pub round_min: RoundMin,
    /// When CSS checks for a spurious entry.
    pub css_check: CssCheck,
    /// What CSS compares a round's minimum with.
    pub css_baseline: CssBaseline,
    /// The order of an ACK's steps.
    pub order: AckOrder,
    /// HyStart++ again in every later slow start (after a timeout), not standard slow start.
    pub later_slow_starts: bool,
}

impl Default for HyStartPlusPlusConfig {
    fn default() -> Self {
        HyStartPlusPlusConfig {
            paced: false,
            low_window_gate: false,
            min_rtt_thresh: MIN_RTT_THRESH,
            max_rtt_thresh: MAX_RTT_THRESH,
            min_rtt_divisor: MIN_RTT_DIVISOR,
            n_rtt_sample: N_RTT_SAMPLE,
            css_growth_divisor: CSS_GROWTH_DIVISOR,
            css_rounds: CSS_ROUNDS,
            rtt_samples: RttSamples::PerAck,
            round_min: RoundMin::AllSamples,
            css_check: CssCheck::NSamples,
            css_baseline: CssBaseline::EntryMin,
            order: AckOrder::RoundGrowthSample,
            later_slow_starts: false,
        }
    }
}

impl HyStartPlusPlusConfig {
    /// `RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))`.
    pub fn rtt_thresh(&self, last_round_min_rtt: Dur) -> Dur {
        Dur(last_round_min_rtt.as_nanos() / self.min_rtt_divisor.max(1)).min(self.max_rtt_thresh).max(self.min_rtt_thresh)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Standard slow start with HyStart++'s delay test.
    SlowStart,
    /// Conservative Slow Start.
    Css,
    /// HyStart++ has ended (CSS finished or a congestion signal): later slow starts are standard,
    /// or HyStart++ afresh with `later_slow_starts`.
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

    /// The configuration.
    pub fn config(&self) -> &HyStartPlusPlusConfig {
        &self.cfg
    }

    /// `min(N, L*SMSS)`, with `L = ∞` when paced.
    fn limited(&self, newly_acked: u64, mss: u64) -> f64 {
        match self.cfg.paced {
            true => newly_acked as f64,
            false => newly_acked.min(L * mss) as f64,
        }
    }

    /// G: "For each arriving ACK in slow start, where N is the number of previously unacknowledged
    /// bytes acknowledged in the arriving ACK: cwnd = cwnd + min(N, L*SMSS)"; "For each arriving
    /// ACK in CSS ...: cwnd = cwnd + (min(N, L*SMSS) / CSS_GROWTH_DIVISOR)".
    fn growth(&self, view: &CcView, ack: &AckEvent) -> f64 {
        match self.phase {
            Phase::Css => self.limited(ack.newly_acked, view.mss) / self.cfg.css_growth_divisor,
            _ => self.limited(ack.newly_acked, view.mss),
        }
    }

    /// R: "When windowEnd is ACKed, the current round ends and windowEnd is set to SND.NXT. At the
    /// start of each round during standard slow start and CSS, initialize the variables used to
    /// compute the last round's and current round's minimum RTT: lastRoundMinRTT =
    /// currentRoundMinRTT; currentRoundMinRTT = infinity; rttSampleCount = 0". True when this
    /// completes the CSS rounds: "If CSS_ROUNDS rounds are complete, enter congestion avoidance by
    /// setting the ssthresh to the current cwnd."
    fn end_round(&mut self) -> bool {
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_sample_count = 0;
        if self.phase == Phase::Css {
            self.css_rounds += 1;
            return self.css_rounds >= self.cfg.css_rounds;
        }
        false
    }

    /// S: the ACK's RTT samples, each followed by the tests. An ACK without a sample (Karn) counts
    /// nothing (§8.5 (c)); the RFC's tests still run on it, against the round's samples so far
    /// (msquic's `first-n` runs them only with a sample).
    fn samples(&mut self, view: &CcView, ack: &AckEvent) {
        let Some(rtt) = ack.rtt else {
            if self.cfg.round_min == RoundMin::AllSamples {
                self.tests(view);
            }
            return;
        };
        let n = match self.cfg.rtt_samples {
            RttSamples::PerAck => 1,
            RttSamples::PerSegment => ack.acked_segments.max(1),
        };
        for _ in 0..n {
            // "keep track of the minimum observed RTT: currentRoundMinRTT = min(currentRoundMinRTT,
            // currRTT); rttSampleCount += 1". msquic keeps the first N_RTT_SAMPLE only, and tests
            // on the samples after them.
            if self.cfg.round_min == RoundMin::FirstN && self.rtt_sample_count >= self.cfg.n_rtt_sample {
                self.tests(view);
                continue;
            }
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sample_count += 1;
            if self.cfg.round_min == RoundMin::AllSamples {
                self.tests(view);
            }
        }
    }

    /// The delay test in slow start, the spurious-entry test in CSS.
    fn tests(&mut self, view: &CcView) {
        let enough = self.rtt_sample_count >= self.cfg.n_rtt_sample;
        match (self.phase, self.current_round_min_rtt, self.last_round_min_rtt) {
            // "For rounds where at least N_RTT_SAMPLE RTT samples have been obtained and
            // currentRoundMinRTT and lastRoundMinRTT are valid, check to see if delay increase
            // triggers slow start exit: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT /
            // MIN_RTT_DIVISOR, MAX_RTT_THRESH)); if (currentRoundMinRTT >= (lastRoundMinRTT +
            // RttThresh)) cssBaselineMinRtt = currentRoundMinRTT; exit slow start and enter CSS"
            (Phase::SlowStart, Some(current), Some(last)) if enough => {
                let gated = self.cfg.low_window_gate && view.cwnd < LOW_WINDOW * view.mss as f64;
                let thresh = self.cfg.rtt_thresh(last);
                if !gated && current >= last + thresh {
                    self.css_baseline_min_rtt = Some(match self.cfg.css_baseline {
                        CssBaseline::EntryMin => current,
                        CssBaseline::EntryThreshold => last + thresh,
                    });
                    self.phase = Phase::Css;
                    self.css_rounds = 0;
                    if self.cfg.css_check == CssCheck::NAfterEntry {
                        self.rtt_sample_count = 0;
                    }
                }
            }
            // "For CSS rounds where at least N_RTT_SAMPLE RTT samples have been obtained, check to
            // see if the current round's minRTT drops below baseline (cssBaselineMinRtt) indicating
            // that slow start exit was spurious: if (currentRoundMinRTT < cssBaselineMinRtt)
            // cssBaselineMinRtt = infinity; resume slow start including HyStart++"
            (Phase::Css, Some(current), _) => {
                let due = match self.cfg.css_check {
                    CssCheck::NSamples | CssCheck::NAfterEntry | CssCheck::EveryNthSample => enough,
                    CssCheck::EverySample => true,
                };
                if !due {
                    return;
                }
                if self.cfg.css_check == CssCheck::EveryNthSample {
                    self.rtt_sample_count = 0;
                }
                if self.css_baseline_min_rtt.is_some_and(|baseline| current < baseline) {
                    self.css_baseline_min_rtt = None;
                    self.phase = Phase::SlowStart;
                }
            }
            _ => {}
        }
    }

    /// CSS is complete: congestion avoidance with ssthresh = cwnd after `increase`.
    fn css_done(&mut self, increase: f64) -> StartupAction {
        self.phase = Phase::Done;
        StartupAction { increase, exit: Some(ExitReason::CssDone), ..StartupAction::default() }
    }
}

fn secs(d: Option<Dur>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64())
}

impl StartupAlgorithm for HyStartPlusPlus {
    fn signals(&self, out: &mut Vec<f64>) {
        out.push(match self.phase {
            Phase::SlowStart => 0.0,
            Phase::Css => 1.0,
            Phase::Done => 2.0,
        });
        out.push(secs(self.last_round_min_rtt));
        out.push(secs(self.current_round_min_rtt));
        out.push(self.last_round_min_rtt.map_or(f64::NAN, |l| self.cfg.rtt_thresh(l).as_secs_f64()));
        out.push(self.rtt_sample_count as f64);
        out.push(secs(self.css_baseline_min_rtt));
        out.push(self.css_rounds as f64);
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        if self.phase == Phase::Done {
            if !self.cfg.later_slow_starts {
                // Standard slow start (RFC 5681 §3.1) for every slow start after the initial one.
                return StartupAction::grow(ack.newly_acked.min(view.mss) as f64);
            }
            // A later slow start (after a timeout): HyStart++ afresh, every RTT variable at ∞.
            *self = HyStartPlusPlus::new(self.cfg);
        }
        let round_ends = view.new_round;
        match self.cfg.order {
            AckOrder::RoundGrowthSample => {
                if round_ends && self.end_round() {
                    // NOTE: the ACK that completes the rounds adds nothing, so ssthresh is the
                    // window at the end of the last CSS round.
                    return self.css_done(0.0);
                }
                // The increase follows the phase the ACK found, before its sample is looked at.
                let increase = self.growth(view, ack);
                self.samples(view, ack);
                StartupAction::grow(increase)
            }
            AckOrder::GrowthSampleRound => {
                let increase = self.growth(view, ack);
                self.samples(view, ack);
                if round_ends && self.end_round() {
                    return self.css_done(increase);
                }
                StartupAction::grow(increase)
            }
            AckOrder::SampleRoundGrowth => {
                self.samples(view, ack);
                if round_ends && self.end_round() {
                    return self.css_done(0.0);
                }
                StartupAction::grow(self.growth(view, ack))
            }
            AckOrder::GrowthRoundSample => {
                let increase = self.growth(view, ack);
                let complete = round_ends && self.end_round();
                self.samples(view, ack);
                if complete && self.phase == Phase::Css {
                    return self.css_done(increase);
                }
                StartupAction::grow(increase)
            }
        }
    }

    /// "If loss or ECN-marking is observed anytime during standard slow start or CSS, ... enter
    /// congestion avoidance" — the controller does that; HyStart++ is not used again, unless
    /// `later_slow_starts` starts it afresh in the next slow start.
    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.phase = Phase::Done;
    }
}
