//! The declaration of `hystart++`: its parameters, each with its RFC 9406 default and its value in
//! each `preset`, and the checks between them.
//!
//! The presets are HyStart++ as four QUIC stacks deploy it, read from their sources (git snapshots
//! of August 2026; docs/algorithms/hystart++.md tabulates the differences):
//! * `quiche` — cloudflare/quiche 0.29.3 (git e97798e1, 2026-08-06):
//!   `quiche/src/recovery/congestion/hystart.rs` (based on draft-ietf-tcpm-hystartplusplus-04),
//!   `cubic.rs`, `reno.rs`, `mod.rs`;
//! * `msquic` — microsoft/msquic v2.6.0-rc (git 4984c210, `v2.6.0-rc-21`, 2026-08-21):
//!   `src/core/cubic.c` (`CubicCongestionControlOnDataAcknowledged`), `src/core/quicdef.h`;
//! * `neqo` — mozilla/neqo v0.30.1 (git 80ca01ee, `v0.30.1-53`, 2026-08-21):
//!   `neqo-transport/src/cc/hystart.rs`, `classic_cc.rs`, `connection/params.rs`;
//! * `ngtcp2` — ngtcp2 v1.25.0 (git f3af8b14, `v1.25.0-39`, 2026-08-22): `lib/ngtcp2_cc.c`
//!   (`ngtcp2_cc_cubic_cc_on_ack_recv`).
//!
//! All four use the RFC's constants (4 ms, 16 ms, 8, 8, 4, 5). picoquic (git d199d45b,
//! 2026-08-16) declares them in `picoquic/cc_common.h` under "TODO HyStart++ isn't implemented
//! yet!" and runs a HyStart-like filtered-RTT test instead (`picoquic_cc_hystart_test`), so it has
//! no preset.
//!
//! Precedence: a key the scenario gives overrides the preset's value for it; the preset sets the
//! defaults of the keys it does not give (the scenario crate resolves `ParamInfo::presets`).

use super::{AckOrder, CssBaseline, CssCheck, HyStartPlusPlus, HyStartPlusPlusConfig, RoundMin, RttSamples};
use crate::decl::{AlgorithmInfo, FlowContext, Param, ParamError, Params, Range};
use startlab_units::Dur;

/// The presets, "rfc9406" (the defaults) first.
pub const PRESETS: &[&str] = &["rfc9406", "quiche", "msquic", "neqo", "ngtcp2"];

/// `preset` of `startup = { algorithm = "hystart++", ... }`.
pub const PRESET: Param<&'static str> = Param::choice(
    "preset",
    PRESETS,
    "\"rfc9406\"",
    "HyStart++ as deployed: the defaults of the other keys as RFC 9406 or as one QUIC stack (quiche 0.29.3, msquic 2.6.0-rc, neqo 0.30.1, ngtcp2 1.25.0) sets them; a key given beside it overrides the preset",
);

/// Every QUIC preset, with the same value.
const fn quic(value: &'static str) -> [(&'static str, &'static str); 4] {
    [("quiche", value), ("msquic", value), ("neqo", value), ("ngtcp2", value)]
}

/// The QUIC stacks count every acknowledged byte: quiche and ngtcp2 per packet or per ACK without
/// a cap (`cubic.rs` `on_packet_acked`, `ngtcp2_cc.c` `cwnd += ack->bytes_delivered`), msquic
/// `CongestionWindow += BytesAcked / CWndSlowStartGrowthDivisor`, neqo `limit = usize::MAX` when
/// pacing, which `ConnectionParameters` enables by default.
const PACED_PRESETS: [(&str, &str); 4] = quic("true");

/// `paced` of `startup = { algorithm = "hystart++", ... }`.
pub const PACED: Param<bool> = Param::flag("paced", "false", "L = infinity instead of 8 (cwnd += min(N, L*SMSS)): the sender paces (RFC 9406 §4.3), or counts every acknowledged byte as the QUIC stacks do")
    .presets(&PACED_PRESETS);

/// `low_window_gate` of `startup = { algorithm = "hystart++", ... }`.
pub const LOW_WINDOW_GATE: Param<bool> = Param::flag("low_window_gate", "false", "do not enter CSS while cwnd < 16 segments (not in RFC 9406, nor in any preset's stack; Linux's classic HyStart has hystart_low_window = 16)");

/// `min_rtt_thresh` of `startup = { algorithm = "hystart++", ... }`.
pub const MIN_RTT_THRESH: Param<Dur> = Param::duration("min_rtt_thresh", "4ms", "MIN_RTT_THRESH: the floor of RttThresh; at most max_rtt_thresh");

/// `max_rtt_thresh` of `startup = { algorithm = "hystart++", ... }`.
pub const MAX_RTT_THRESH: Param<Dur> = Param::duration("max_rtt_thresh", "16ms", "MAX_RTT_THRESH: the ceiling of RttThresh");

/// `min_rtt_divisor` of `startup = { algorithm = "hystart++", ... }`.
pub const MIN_RTT_DIVISOR: Param<u64> =
    Param::integer("min_rtt_divisor", "8", "MIN_RTT_DIVISOR: RttThresh = clamp(lastRoundMinRTT / MIN_RTT_DIVISOR, min_rtt_thresh, max_rtt_thresh)").range(Range::AtLeast(1.0));

/// `n_rtt_sample` of `startup = { algorithm = "hystart++", ... }`.
pub const N_RTT_SAMPLE: Param<u64> = Param::integer("n_rtt_sample", "8", "N_RTT_SAMPLE: RTT samples a round needs before its tests run").range(Range::AtLeast(1.0));

/// `css_growth_divisor` of `startup = { algorithm = "hystart++", ... }`.
pub const CSS_GROWTH_DIVISOR: Param<f64> =
    Param::number("css_growth_divisor", "4", "CSS_GROWTH_DIVISOR: CSS grows by min(N, L*SMSS) / CSS_GROWTH_DIVISOR per ACK (\"MUST be at least 2\")").range(Range::AtLeast(2.0));

/// ngtcp2 counts the round of entry as CSS round 1 at entry and compares `css_round >=
/// NGTCP2_HS_CSS_ROUNDS` (5) when a round starts (`++cubic->hs.css_round` at `round_start`): CSS
/// ends when the fifth CSS round begins, after four round ends.
const CSS_ROUNDS_PRESETS: [(&str, &str); 1] = [("ngtcp2", "4")];

/// `css_rounds` of `startup = { algorithm = "hystart++", ... }`.
pub const CSS_ROUNDS: Param<u64> = Param::integer("css_rounds", "5", "CSS_ROUNDS: round ends in CSS (the round of entry counts) before ssthresh = cwnd and congestion avoidance")
    .range(Range::AtLeast(1.0))
    .presets(&CSS_ROUNDS_PRESETS);

/// quiche runs `Hystart::on_packet_acked` once per acknowledged packet, each with
/// `rtt_stats.latest_rtt` (`cubic.rs` `on_packets_acked`).
const RTT_SAMPLES_PRESETS: [(&str, &str); 1] = [("quiche", "\"per-segment\"")];

/// `rtt_samples` of `startup = { algorithm = "hystart++", ... }`.
pub const RTT_SAMPLES: Param<&'static str> =
    Param::choice("rtt_samples", RttSamples::NAMES, "\"per-ack\"", "samples per ACK with an RTT sample: \"per-ack\" one (RFC 9406); \"per-segment\" one per acknowledged segment (quiche)")
        .presets(&RTT_SAMPLES_PRESETS);

/// msquic updates `MinRttInCurrentRound` only while `HyStartAckCount < QUIC_HYSTART_DEFAULT_N_SAMPLING`
/// and tests in the `else` branches, on the later ACKs.
const ROUND_MIN_PRESETS: [(&str, &str); 1] = [("msquic", "\"first-n\"")];

/// `round_min` of `startup = { algorithm = "hystart++", ... }`.
pub const ROUND_MIN: Param<&'static str> = Param::choice(
    "round_min",
    RoundMin::NAMES,
    "\"all-samples\"",
    "a round's minimum RTT: \"all-samples\" (RFC 9406); \"first-n\" over its first n_rtt_sample samples, both tests on the later ones (msquic)",
)
.presets(&ROUND_MIN_PRESETS);

/// quiche: `if self.rtt_sample_count >= N_RTT_SAMPLE { self.rtt_sample_count = 0; ... }` in CSS;
/// neqo: `self.rtt_sample_count = 0` on entering CSS; ngtcp2: the baseline test in CSS has no
/// sample condition.
const CSS_CHECK_PRESETS: [(&str, &str); 3] = [("quiche", "\"every-nth-sample\""), ("neqo", "\"n-after-entry\""), ("ngtcp2", "\"every-sample\"")];

/// `css_check` of `startup = { algorithm = "hystart++", ... }`.
pub const CSS_CHECK: Param<&'static str> = Param::choice(
    "css_check",
    CssCheck::NAMES,
    "\"n-samples\"",
    "when CSS tests for a spurious entry: \"n-samples\" on every sample once the round has n_rtt_sample (RFC 9406, msquic); \"every-sample\" (ngtcp2); \"every-nth-sample\" (quiche); \"n-after-entry\": the count restarts at entry (neqo)",
)
.presets(&CSS_CHECK_PRESETS);

/// `css_baseline` of `startup = { algorithm = "hystart++", ... }` (no preset changes it: neqo's
/// `HyStartCssBaseline::EntryThreshold` is an option, `CurrentRoundMinRtt` its default).
pub const CSS_BASELINE: Param<&'static str> = Param::choice(
    "css_baseline",
    CssBaseline::NAMES,
    "\"entry-min\"",
    "what a CSS round's minimum must fall below to resume slow start: \"entry-min\", the minimum that entered CSS (RFC 9406); \"entry-threshold\", lastRoundMinRTT + RttThresh at entry (neqo's option)",
);

/// quiche grows before `on_packet_acked` samples and ends the round; msquic and neqo test and end
/// the round before they grow (`CWndSlowStartGrowthDivisor` and `in_css()` already changed);
/// ngtcp2 grows, then starts the round, then samples.
const ACK_ORDER_PRESETS: [(&str, &str); 4] = [
    ("quiche", "\"growth-sample-round\""),
    ("msquic", "\"sample-round-growth\""),
    ("neqo", "\"sample-round-growth\""),
    ("ngtcp2", "\"growth-round-sample\""),
];

/// `ack_order` of `startup = { algorithm = "hystart++", ... }`.
pub const ACK_ORDER: Param<&'static str> = Param::choice(
    "ack_order",
    AckOrder::NAMES,
    "\"round-growth-sample\"",
    "the order of an ACK's round end, growth and RTT sample: \"round-growth-sample\" (RFC 9406), \"growth-sample-round\" (quiche), \"sample-round-growth\" (msquic, neqo), \"growth-round-sample\" (ngtcp2)",
)
.presets(&ACK_ORDER_PRESETS);

/// quiche never turns HyStart++ off after its first use; neqo `reset()`s it and ngtcp2
/// `cubic_cc_reset`s it on persistent congestion, whose slow start then runs it again. msquic sets
/// `HYSTART_DONE` on every congestion event.
const LATER_PRESETS: [(&str, &str); 3] = [("quiche", "\"hystart++\""), ("neqo", "\"hystart++\""), ("ngtcp2", "\"hystart++\"")];

/// `later_slow_starts` of `startup = { algorithm = "hystart++", ... }`.
pub const LATER_SLOW_STARTS: Param<&'static str> = Param::choice(
    "later_slow_starts",
    &["standard", "hystart++"],
    "\"standard\"",
    "slow starts after HyStart++ ended (after a timeout): \"standard\" slow start (RFC 9406 SHOULD, msquic); \"hystart++\" afresh (quiche, neqo, ngtcp2)",
)
.presets(&LATER_PRESETS);

/// RttThresh's clamp needs min_rtt_thresh <= max_rtt_thresh (the error names the key the scenario
/// gave); msquic's first-n minimum comes with its own timing of the CSS test.
fn check(p: &Params<'_>, _: &FlowContext, given: &dyn Fn(&str) -> bool) -> Result<(), ParamError> {
    let (lo, hi) = (p.get(&MIN_RTT_THRESH), p.get(&MAX_RTT_THRESH));
    if lo > hi {
        let key = if given(MAX_RTT_THRESH.info.name) && !given(MIN_RTT_THRESH.info.name) { MAX_RTT_THRESH.info.name } else { MIN_RTT_THRESH.info.name };
        return Err(ParamError::new(key, format!("min_rtt_thresh ({} ms) is above max_rtt_thresh ({} ms); RttThresh is clamped between them", lo.as_secs_f64() * 1e3, hi.as_secs_f64() * 1e3)));
    }
    if p.get(&ROUND_MIN) == "first-n" && p.get(&CSS_CHECK) != "n-samples" {
        return Err(ParamError::new(
            CSS_CHECK.info.name,
            format!("is {:?}, but round_min = \"first-n\" tests on the samples after the first n_rtt_sample (msquic); it needs css_check = \"n-samples\"", p.get(&CSS_CHECK)),
        ));
    }
    Ok(())
}

/// The variant of a declared option (every option has one: the options are the enums' `NAMES`).
fn choice<T>(variant: Option<T>, key: &str) -> T {
    variant.unwrap_or_else(|| panic!("{key}: a declared option has no variant"))
}

/// The configuration the (checked) parameters describe.
pub(super) fn config(p: &Params<'_>) -> HyStartPlusPlusConfig {
    HyStartPlusPlusConfig {
        paced: p.get(&PACED),
        low_window_gate: p.get(&LOW_WINDOW_GATE),
        min_rtt_thresh: p.get(&MIN_RTT_THRESH),
        max_rtt_thresh: p.get(&MAX_RTT_THRESH),
        min_rtt_divisor: p.get(&MIN_RTT_DIVISOR),
        n_rtt_sample: p.get(&N_RTT_SAMPLE).min(u32::MAX as u64) as u32,
        css_growth_divisor: p.get(&CSS_GROWTH_DIVISOR),
        css_rounds: p.get(&CSS_ROUNDS).min(u32::MAX as u64) as u32,
        rtt_samples: choice(RttSamples::named(p.get(&RTT_SAMPLES)), "rtt_samples"),
        round_min: choice(RoundMin::named(p.get(&ROUND_MIN)), "round_min"),
        css_check: choice(CssCheck::named(p.get(&CSS_CHECK)), "css_check"),
        css_baseline: choice(CssBaseline::named(p.get(&CSS_BASELINE)), "css_baseline"),
        order: choice(AckOrder::named(p.get(&ACK_ORDER)), "ack_order"),
        later_slow_starts: p.get(&LATER_SLOW_STARTS) == "hystart++",
    }
}

/// The declaration of `hystart++` (its entry in `startup::DECLS`).
/// The variables HyStart++ decides on (RFC 9406 §4.2), in [`StartupAlgorithm::signals`]' order.
///
/// [`StartupAlgorithm::signals`]: crate::startup::StartupAlgorithm::signals
pub const SIGNALS: &[crate::startup::Signal] = &[
    crate::startup::Signal::new("state", "-", "0 slow start with the delay test, 1 Conservative Slow Start, 2 ended"),
    crate::startup::Signal::new("last_round_min_rtt", "s", "lastRoundMinRTT: the previous round's minimum RTT"),
    crate::startup::Signal::new("current_round_min_rtt", "s", "currentRoundMinRTT: this round's minimum RTT so far"),
    crate::startup::Signal::new("rtt_thresh", "s", "RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms): the rise that enters CSS"),
    crate::startup::Signal::new("rtt_sample_count", "acks", "rttSampleCount: RTT samples this round (the test needs N_RTT_SAMPLE)"),
    crate::startup::Signal::new("css_baseline_min_rtt", "s", "cssBaselineMinRtt: the round minimum when CSS began (a drop below it resumes slow start)"),
    crate::startup::Signal::new("css_rounds", "rounds", "rounds of CSS so far (CSS_ROUNDS of them end startup)"),
];

pub const DECL: crate::startup::StartupDecl = crate::startup::StartupDecl {
    info: AlgorithmInfo {
        name: "hystart++",
        role: "startup",
        summary: "HyStart++: when a round's min RTT rises by clamp(lastRoundMinRTT/8, 4 ms, 16 ms), Conservative Slow Start (growth/4) for 5 rounds, then ssthresh = cwnd; an RTT drop in CSS resumes slow start; presets for quiche, msquic, neqo and ngtcp2",
        source: "RFC 9406 §4 (ALGORITHMS.md §8.5); quiche 0.29.3, msquic 2.6.0-rc, neqo 0.30.1, ngtcp2 1.25.0",
        params: &[
            PRESET.info,
            PACED.info,
            LOW_WINDOW_GATE.info,
            MIN_RTT_THRESH.info,
            MAX_RTT_THRESH.info,
            MIN_RTT_DIVISOR.info,
            N_RTT_SAMPLE.info,
            CSS_GROWTH_DIVISOR.info,
            CSS_ROUNDS.info,
            RTT_SAMPLES.info,
            ROUND_MIN.info,
            CSS_CHECK.info,
            CSS_BASELINE.info,
            ACK_ORDER.info,
            LATER_SLOW_STARTS.info,
        ],
    },
    build: crate::startup::Build::Native(|p, _| crate::startup::Startup::HyStartPlusPlus(HyStartPlusPlus::new(config(p)))),
    check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: crate::startup::CeRule::ExitAsLoss,
    signals: SIGNALS,
};
