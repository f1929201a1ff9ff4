//! HyStart++ on scripted ACK streams: RFC 9406 (the defaults), then each preset where its stack
//! departs from the RFC on the same stream, then the declaration (presets, checks).

use super::decl::{self, DECL, PRESETS};
use super::*;
use crate::decl::{FlowContext, ParamKind, ParamValue, Params};
use crate::startup::Startup;
use crate::testkit::{at_ms, ms, Sender, MSS};
use crate::{CongestionKind, Phase as CcPhase, Ssthresh};
use std::collections::BTreeMap;

fn hspp(cfg: HyStartPlusPlusConfig) -> Startup {
    Startup::HyStartPlusPlus(HyStartPlusPlus::new(cfg))
}

/// The declared parameters as a scenario resolves them for `preset` with `given` keys written
/// (values as in a scenario), every other key from its preset's default or its own.
fn values(preset: &str, given: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, ParamValue> {
    let text = |q: &crate::decl::ParamInfo| {
        given.iter().find(|(k, _)| *k == q.name).map(|(_, v)| *v).or(q.presets.iter().find(|(p, _)| *p == preset).map(|(_, v)| *v)).unwrap_or(q.default)
    };
    let mut out: BTreeMap<_, _> = DECL.info.params.iter().map(|q| (q.name, parse(q.kind, if q.name == "preset" { "" } else { text(q) }))).collect();
    out.insert("preset", ParamValue::Choice(preset.to_string()));
    out
}

/// A value written as in a scenario, of `kind` (the scenario crate's parser, for the kinds
/// `hystart++` declares).
fn parse(kind: ParamKind, text: &str) -> ParamValue {
    match kind {
        ParamKind::Duration => ParamValue::Dur(startlab_units::parse_dur(text).expect("a duration")),
        ParamKind::Integer => ParamValue::Integer(text.parse().expect("an integer")),
        ParamKind::Number => ParamValue::Number(text.parse().expect("a number")),
        ParamKind::Bool => ParamValue::Bool(text.parse().expect("a boolean")),
        ParamKind::Choice(_) => ParamValue::Choice(text.trim_matches('"').to_string()),
        other => panic!("hystart++ declares no {other:?} parameter"),
    }
}

/// The configuration of `preset`, from the declaration.
fn preset(name: &str) -> HyStartPlusPlusConfig {
    decl::config(&Params::new(&values(name, &[])))
}

/// cwnd growth (segments) over the next ACK of one segment.
fn step(s: &mut Sender, t: u64, rtt: u64) -> f64 {
    let before = s.cwnd();
    s.ack_n(at_ms(t), Some(ms(rtt)), 1);
    s.cwnd() - before
}

/// The growth of each ACK of the next flight, one segment per ACK, the `i`-th at `start + i` ms
/// with RTT `rtt(i)`.
fn growths(s: &mut Sender, start: u64, rtt: impl Fn(u64) -> Dur) -> Vec<f64> {
    (0..s.flight())
        .map(|i| {
            let before = s.cwnd();
            s.ack_n(at_ms(start + i), Some(rtt(i)), 1);
            s.cwnd() - before
        })
        .collect()
}

// --- RFC 9406 (the defaults) ---------------------------------------------------------------------

#[test]
fn rtt_thresh_is_an_eighth_of_the_last_round_clamped_to_4_and_16_ms() {
    // ALGORITHMS.md §8.7: 2 → 4, 20 → 4, 80 → 10, 128 → 16, 200 → 16 (ms).
    let cfg = HyStartPlusPlusConfig::default();
    for (last, thresh) in [(2, 4), (20, 4), (80, 10), (128, 16), (200, 16)] {
        assert_eq!(cfg.rtt_thresh(ms(last)), ms(thresh), "lastRoundMinRTT {last} ms");
    }
    assert_eq!(cfg.rtt_thresh(ms(100)), Dur::from_micros(12_500));
    let other = HyStartPlusPlusConfig { min_rtt_thresh: ms(1), max_rtt_thresh: ms(30), min_rtt_divisor: 4, ..cfg };
    assert_eq!((other.rtt_thresh(ms(2)), other.rtt_thresh(ms(80)), other.rtt_thresh(ms(200))), (ms(1), ms(20), ms(30)));
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

/// CSS rounds at 113 ms after [`into_css`] until startup ends: the window at the end of each.
fn css_rounds(s: &mut Sender) -> Vec<f64> {
    let mut ends = Vec::new();
    for k in 0..10 {
        if s.flight_acks(at_ms(400 + 200 * k), ms(1), |_| Some(ms(113))).is_some() {
            return ends;
        }
        ends.push(s.cwnd());
    }
    panic!("CSS did not end: {ends:?}");
}

#[test]
fn leaves_css_after_css_rounds_with_ssthresh_equal_to_cwnd() {
    let mut s = Sender::new(hspp(HyStartPlusPlusConfig::default()), 10);
    into_css(&mut s);
    // Round 3 was the entry round (CSS round 1). Rounds 4-7 are CSS rounds 2-5, each growing
    // by a quarter of its flight: 56 → 70 → 87.5 → 109.25 → 136.5 (whole segments in flight: 56, 70, 87, 109).
    assert_eq!(css_rounds(&mut s), [70.0, 87.5, 109.25, 136.5], "a CSS round grows by flight/4");
    // The first ACK of round 8 ends CSS round 5: CA with ssthresh = cwnd.
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
    // A stretch ACK covering 10 segments adds 8 SMSS (L = 8) unpaced, all 10 when paced, and all
    // 10 under every QUIC preset (each counts every acknowledged byte).
    let stretch = |cfg| {
        let mut s = Sender::new(hspp(cfg), 20);
        s.ack_n(at_ms(100), Some(ms(100)), 10);
        s.cwnd()
    };
    assert_eq!(stretch(HyStartPlusPlusConfig::default()), 28.0);
    assert_eq!(stretch(HyStartPlusPlusConfig { paced: true, ..Default::default() }), 30.0);
    for name in &PRESETS[1..] {
        assert_eq!(stretch(preset(name)), 30.0, "{name}");
    }
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

/// A view in round `round`, `new_round` when that ACK ended the previous one.
fn view(round: u64, new_round: bool) -> CcView {
    CcView { cwnd: 20.0 * MSS as f64, ssthresh: Ssthresh::Bytes(100.0 * MSS as f64), mss: MSS, round, min_rtt: None, new_round }
}

/// An ACK of 4 segments with RTT `rtt_ms`.
fn stretch_ack(rtt_ms: u64) -> AckEvent {
    AckEvent { now: at_ms(2), newly_acked: 4 * MSS, ack_seq: 4 * MSS, snd_nxt: 20 * MSS, rtt: Some(ms(rtt_ms)), flight_size: 16 * MSS, acked_segments: 4, delivered: 4 * MSS, ..AckEvent::default() }
}

/// After a timeout, 5 rounds of ten 4-segment ACKs: round 0 at 100 ms, the rest at 200 ms. The
/// increase of each ACK, in segments.
fn after_a_timeout(cfg: HyStartPlusPlusConfig) -> Vec<f64> {
    let mut h = HyStartPlusPlus::new(cfg);
    h.on_congestion(&view(4, false), &CongestionEvent { now: at_ms(1), kind: CongestionKind::Timeout, flight_size: 0, enter_recovery: false });
    let mut out = Vec::new();
    for round in 0..5 {
        for i in 0..10 {
            let a = h.on_ack(&view(round, i == 0), &stretch_ack(if round == 0 { 100 } else { 200 }));
            assert_eq!(a.exit, None, "round {round}: CSS lasts longer");
            out.push(a.increase / MSS as f64);
        }
    }
    out
}

#[test]
fn after_a_congestion_signal_hystartpp_is_standard_slow_start() {
    let growth = after_a_timeout(HyStartPlusPlusConfig::default());
    assert!(growth.iter().all(|&g| g == 1.0), "min(N, SMSS), never CSS: {growth:?}");
}

// --- the presets -----------------------------------------------------------------------------------

#[test]
fn each_preset_sets_its_stacks_choices_and_rfc9406_is_the_default() {
    let rfc = HyStartPlusPlusConfig::default();
    assert_eq!(preset("rfc9406"), rfc);
    assert_eq!(DECL.info.params[0].kind, ParamKind::Choice(PRESETS));
    let quic = HyStartPlusPlusConfig { paced: true, ..rfc };
    let expected = [
        ("quiche", HyStartPlusPlusConfig { rtt_samples: RttSamples::PerSegment, css_check: CssCheck::EveryNthSample, order: AckOrder::GrowthSampleRound, later_slow_starts: true, ..quic }),
        ("msquic", HyStartPlusPlusConfig { round_min: RoundMin::FirstN, order: AckOrder::SampleRoundGrowth, ..quic }),
        ("neqo", HyStartPlusPlusConfig { css_check: CssCheck::NAfterEntry, order: AckOrder::SampleRoundGrowth, later_slow_starts: true, ..quic }),
        ("ngtcp2", HyStartPlusPlusConfig { css_rounds: 4, css_check: CssCheck::EverySample, order: AckOrder::GrowthRoundSample, later_slow_starts: true, ..quic }),
    ];
    assert_eq!(expected.map(|(n, _)| n), PRESETS[1..]);
    for (name, cfg) in expected {
        assert_eq!(preset(name), cfg, "{name}");
        // No stack changes the RFC's constants.
        assert_eq!((cfg.min_rtt_thresh, cfg.max_rtt_thresh, cfg.min_rtt_divisor, cfg.n_rtt_sample, cfg.css_growth_divisor), (ms(4), ms(16), 8, 8, 4.0));
    }
    for q in DECL.info.params {
        for (p, _) in q.presets {
            assert!(PRESETS[1..].contains(p), "{}: preset {p:?} is not an option of preset", q.name);
        }
    }
    for names in [RttSamples::NAMES, RoundMin::NAMES, CssCheck::NAMES, CssBaseline::NAMES, AckOrder::NAMES] {
        assert!(names.iter().all(|n| names.iter().filter(|m| *m == n).count() == 1), "{names:?}");
    }
    assert!(RttSamples::NAMES.iter().all(|n| RttSamples::named(n).map(RttSamples::name) == Some(*n)));
    assert!(AckOrder::NAMES.iter().all(|n| AckOrder::named(n).map(AckOrder::name) == Some(*n)));
    assert!(CssCheck::NAMES.iter().all(|n| CssCheck::named(n).map(CssCheck::name) == Some(*n)));
}

#[test]
fn quiche_counts_a_sample_per_acknowledged_segment_and_its_css_exit_ack_grows() {
    // Delayed ACKs, two segments each, IW 10. Rounds 1-2 at 100 ms, round 3 at 113 ms: the RFC
    // counts a sample per ACK and enters CSS on the 8th ACK of round 3, quiche counts two and
    // enters on the 5th: its round-ending ACK's samples belong to round 2, ACKs 2-5 bring 8.
    let run = |cfg| {
        let mut s = Sender::new(hspp(cfg), 10);
        let mut per_ack = Vec::new();
        for (start, rtt) in [(100, 100), (200, 100), (300, 113)] {
            per_ack.clear();
            for i in 0..s.flight() / 2 {
                let before = s.cwnd();
                s.ack_n(at_ms(start + i), Some(ms(rtt)), 2);
                per_ack.push(s.cwnd() - before);
            }
        }
        per_ack
    };
    let rfc = run(HyStartPlusPlusConfig::default());
    let quiche = run(preset("quiche"));
    assert_eq!(rfc.len(), 20);
    assert_eq!((rfc[..8].to_vec(), rfc[8..].to_vec()), (vec![2.0; 8], vec![0.5; 12]), "RFC: CSS after the 8th ACK");
    assert_eq!((quiche[..5].to_vec(), quiche[5..].to_vec()), (vec![2.0; 5], vec![0.5; 15]), "quiche: CSS after the 5th ACK");

    // One segment per ACK: the same entry (round 3's 9th ACK with quiche: its first ACK's sample
    // closed round 2); CSS for five round ends, the ACK that completes them grows by a quarter.
    let mut s = Sender::new(hspp(preset("quiche")), 10);
    for (start, rtt) in [(100, 100), (200, 100)] {
        s.flight_acks(at_ms(start), ms(1), |_| Some(ms(rtt)));
    }
    let g = growths(&mut s, 300, |_| ms(113));
    assert_eq!((g[..9].to_vec(), g[9..].to_vec()), (vec![1.0; 9], vec![0.25; 31]));
    assert_eq!(s.cwnd(), 56.75, "the RFC's 56 and three quarters: one ACK later into CSS");
    // The first ACK of round 8 ends CSS round 5 (as in the RFC) but grows by its quarter first.
    assert_eq!(css_rounds(&mut s), [70.75, 88.25, 110.25, 137.75], "CSS rounds 2-5");
    assert_eq!(s.exit(), Some((ExitReason::CssDone, 138.0)));
}

#[test]
fn quiche_checks_a_css_round_on_every_eighth_sample_only() {
    // After entry at round 3's 9th ACK (count 8), the next check is due on the 8th sample after
    // the previous one. Round 4 at 113 ms, except that its 12th ACK has 105 ms: the RFC resumes slow
    // start on it, quiche on its 16th ACK (the 8th sample of round 4 counted since its check).
    let run = |cfg| {
        let mut s = Sender::new(hspp(cfg), 10);
        for (start, rtt) in [(100, 100), (200, 100), (300, 113)] {
            s.flight_acks(at_ms(start), ms(1), |_| Some(ms(rtt)));
        }
        growths(&mut s, 400, |i| ms(if i == 11 { 105 } else { 113 }))
    };
    let rfc = run(HyStartPlusPlusConfig::default());
    let quiche = run(preset("quiche"));
    // RFC: the 12th ACK still grows by a quarter, then slow start.
    assert_eq!((rfc[..12].to_vec(), rfc[12..20].to_vec()), (vec![0.25; 12], vec![1.0; 8]));
    // quiche: round 4's first ACK closes round 3 (its sample there); ACKs 2-9 are the 8 samples of
    // the first check (no drop yet), ACKs 10-17 those of the next, which finds the 12th ACK's
    // 105 ms: slow start after the 17th ACK.
    assert_eq!((quiche[..17].to_vec(), quiche[17..25].to_vec()), (vec![0.25; 17], vec![1.0; 8]));
}

#[test]
fn msquic_takes_a_rounds_minimum_over_its_first_eight_samples_and_tests_after_them() {
    // Round 3: its first 9 ACKs at 115 ms, the rest at 100 ms. RFC 9406 enters CSS on the 8th
    // sample (115 ≥ 112.5) and the 10th (100 < 115) resumes slow start. msquic's round 3 starts
    // after its first ACK (whose sample closed round 2), keeps the minimum of ACKs 2-9 (115 ms),
    // enters CSS on the 10th ACK, which already grows by a quarter, and never sees the drop.
    let run = |cfg| {
        let mut s = Sender::new(hspp(cfg), 10);
        for (start, rtt) in [(100, 100), (200, 100)] {
            s.flight_acks(at_ms(start), ms(1), |_| Some(ms(rtt)));
        }
        growths(&mut s, 300, |i| ms(if i < 9 { 115 } else { 100 }))
    };
    let rfc = run(HyStartPlusPlusConfig::default());
    let msquic = run(preset("msquic"));
    assert_eq!(rfc.len(), 40);
    assert_eq!((rfc[..8].to_vec(), rfc[8..10].to_vec(), rfc[10..].to_vec()), (vec![1.0; 8], vec![0.25; 2], vec![1.0; 30]));
    assert_eq!((msquic[..9].to_vec(), msquic[9..].to_vec()), (vec![1.0; 9], vec![0.25; 31]));
}

#[test]
fn neqo_needs_eight_more_samples_after_entering_css_before_it_can_resume() {
    // Round 3: ACKs 1-9 at 113 ms, then 105 ms (< the 113 ms baseline). RFC 9406: CSS on the 8th
    // ACK, slow start again on the 10th. neqo: CSS on the 9th (its first ACK closed round 2), which
    // already grows by a quarter; its count restarts, so the check comes with the 8th sample after
    // entry, the 17th ACK, which then grows by a full segment.
    let run = |cfg| {
        let mut s = Sender::new(hspp(cfg), 10);
        for (start, rtt) in [(100, 100), (200, 100)] {
            s.flight_acks(at_ms(start), ms(1), |_| Some(ms(rtt)));
        }
        growths(&mut s, 300, |i| ms(if i < 9 { 113 } else { 105 }))
    };
    let rfc = run(HyStartPlusPlusConfig::default());
    let neqo = run(preset("neqo"));
    assert_eq!((rfc[..8].to_vec(), rfc[8..10].to_vec(), rfc[10..].to_vec()), (vec![1.0; 8], vec![0.25; 2], vec![1.0; 30]));
    assert_eq!((neqo[..8].to_vec(), neqo[8..16].to_vec(), neqo[16..].to_vec()), (vec![1.0; 8], vec![0.25; 8], vec![1.0; 24]));
    // With neqo's option css_baseline = "entry-threshold" the baseline is 100 + 12.5 ms, not the
    // 113 ms that entered CSS. 112.7 ms calls the entry spurious only against the latter, and then
    // enters CSS again on the next ACK (112.7 ≥ 112.5): the oscillation the option avoids.
    let at = |cfg| {
        let mut s = Sender::new(hspp(cfg), 10);
        for (start, rtt) in [(100, 100), (200, 100)] {
            s.flight_acks(at_ms(start), ms(1), |_| Some(ms(rtt)));
        }
        growths(&mut s, 300, |i| if i < 9 { ms(113) } else { Dur::from_micros(112_700) })
    };
    let entry_min = at(preset("neqo"));
    assert_eq!((entry_min[8..16].to_vec(), entry_min[16], entry_min[17..].to_vec()), (vec![0.25; 8], 1.0, vec![0.25; 23]), "entry-min: out of CSS and in again");
    let threshold = HyStartPlusPlusConfig { css_baseline: CssBaseline::EntryThreshold, ..preset("neqo") };
    assert_eq!(at(threshold)[8..].to_vec(), vec![0.25; 32], "entry-threshold: 112.7 ≥ 112.5, CSS goes on");
}

#[test]
fn ngtcp2_ends_css_after_four_round_ends_and_its_exit_ack_grows() {
    // Its entry is the RFC's (growth, then the round, then the sample). CSS rounds 2-4 at 113 ms;
    // the first ACK of the fifth CSS round grows by a quarter and ends startup.
    let mut s = Sender::new(hspp(preset("ngtcp2")), 10);
    into_css(&mut s);
    assert_eq!(css_rounds(&mut s), [70.0, 87.5, 109.25]);
    assert_eq!(s.exit(), Some((ExitReason::CssDone, 109.5)));
    assert_eq!(s.c.ssthresh(), Ssthresh::Bytes(109.5 * MSS as f64));
}

#[test]
fn ngtcp2_resumes_slow_start_on_the_first_sample_below_the_baseline() {
    // After entry (56 segments at the end of round 3), round 4 at 105 ms: the RFC waits for 8
    // samples (56 + 8/4 + 48 = 106); ngtcp2 resumes on the first, after its quarter (56 + 0.25 + 55).
    let mut s = Sender::new(hspp(preset("ngtcp2")), 10);
    into_css(&mut s);
    assert_eq!(s.flight_acks(at_ms(400), ms(1), |_| Some(ms(105))), None);
    assert_eq!(s.cwnd(), 111.25);
}

#[test]
fn quiche_neqo_and_ngtcp2_run_hystartpp_again_in_a_later_slow_start() {
    // After a timeout: round 0 at 100 ms, round 1 at 200 ms. The 8th sample of round 1 enters CSS:
    // the later ACKs grow by a quarter of the 4 segments they cover. neqo and ngtcp2 take a sample
    // per ACK (CSS from round 1's 9th ACK), quiche four (from its 4th: its 1st closed round 0).
    for (name, entered) in [("quiche", 13), ("neqo", 18), ("ngtcp2", 18)] {
        let g = after_a_timeout(preset(name));
        assert!(g[..entered].iter().all(|&x| x == 4.0) && g[entered..].iter().all(|&x| x == 1.0), "{name}: CSS from ACK {entered}: {g:?}");
    }
    let msquic = after_a_timeout(preset("msquic"));
    assert!(msquic.iter().all(|&x| x == 1.0), "msquic: standard slow start, min(N, SMSS): {msquic:?}");
}

// --- the declaration -------------------------------------------------------------------------------

fn checked(preset: &str, given: &[(&'static str, &'static str)]) -> Result<(), crate::decl::ParamError> {
    let cx = FlowContext { mss: MSS, header: 40, initial_window: 10, acks: crate::startup::AckCounting::PerPacket, handshake: false, infinite_ssthresh: true, quic: false };
    (DECL.check)(&Params::new(&values(preset, given)), &cx, &|k| given.iter().any(|(g, _)| *g == k))
}

#[test]
fn a_given_key_overrides_its_preset() {
    let cfg = decl::config(&Params::new(&values("ngtcp2", &[("css_rounds", "5"), ("ack_order", "\"round-growth-sample\"")])));
    assert_eq!(cfg, HyStartPlusPlusConfig { css_rounds: 5, order: AckOrder::RoundGrowthSample, ..preset("ngtcp2") });
    assert_eq!(decl::config(&Params::new(&values("rfc9406", &[("paced", "true")]))), HyStartPlusPlusConfig { paced: true, ..Default::default() });
    for name in PRESETS {
        assert_eq!(checked(name, &[]), Ok(()), "{name}");
    }
}

#[test]
fn contradictory_keys_are_refused_by_name() {
    let e = checked("rfc9406", &[("min_rtt_thresh", "20ms")]).unwrap_err();
    assert_eq!(e.key, "min_rtt_thresh");
    assert!(e.message.contains("min_rtt_thresh (20 ms) is above max_rtt_thresh (16 ms)"), "{}", e.message);
    assert_eq!(checked("rfc9406", &[("max_rtt_thresh", "2ms")]).unwrap_err().key, "max_rtt_thresh");
    assert_eq!(checked("rfc9406", &[("max_rtt_thresh", "2ms"), ("min_rtt_thresh", "3ms")]).unwrap_err().key, "min_rtt_thresh");
    let e = checked("msquic", &[("css_check", "\"every-sample\"")]).unwrap_err();
    assert_eq!(e.key, "css_check");
    assert!(e.message.contains("round_min = \"first-n\""), "{}", e.message);
    assert_eq!(checked("ngtcp2", &[("round_min", "\"first-n\"")]).unwrap_err().key, "css_check", "ngtcp2's every-sample check with msquic's minimum");
    assert_eq!(checked("ngtcp2", &[("round_min", "\"first-n\""), ("css_check", "\"n-samples\"")]), Ok(()));
}
