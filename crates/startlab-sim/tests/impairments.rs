//! `[[impairments]]` (docs/IMPAIRMENTS.md): each impairment measured against what it promises —
//! loss rates within sampling error, Gilbert-Elliott clustering, jitter bounds and FIFO order,
//! reordering that TCP survives, aggregation instants, a rate schedule's queue build-up, a
//! delivery trace's opportunities, determinism under the seed — and refused with key paths when
//! written wrong.

mod common;
use common::{flow, run};
use startlab_scenario::{ImpairmentSpec, JitterDist, JitterSpec, LossSpec, QueueLimit, RateTraceSpec};
use startlab_sim::impair::Impairment;
use startlab_sim::net::{Channel, Offer};
use startlab_sim::rng::{stream, Component};
use startlab_sim::trace::SEQ_ACKED;
use startlab_sim::{Dur, LinkResult, Simulation, Time};
use startlab_units::Rate;

fn spec() -> ImpairmentSpec {
    ImpairmentSpec { link: "x".into(), forward: true, reverse: false, loss: None, jitter: None, aggregate: None, coalesce: None, rate: Vec::new(), rate_trace: None }
}

fn channel(s: &ImpairmentSpec, rate_bps: u64, delay: Dur, seed: u64) -> Channel {
    let mut ch = Channel::new("x:a->b".into(), 0, 1, Rate(rate_bps), delay, QueueLimit::Packets(1_000_000));
    ch.imp = Some(Box::new(Impairment::new(s, stream(seed, Component::Impairment, 0))));
    ch
}

/// Offers a packet at `now`; its far-end arrival, or `None` if lost or dropped.
fn offer(ch: &mut Channel, now: Time, size: u32, seq: u64) -> Option<Time> {
    ch.drain(now, |_| {});
    match ch.offer(now, size, seq, seq as u32, false, |_| {}) {
        Offer::Accepted { arrival, .. } => Some(arrival),
        Offer::Dropped | Offer::Lost | Offer::Queued { .. } => None,
    }
}

/// One CBR source across a dumbbell, 1000-byte packets, with `impairments` appended.
fn cbr(seed: u64, rate: &str, bottleneck: &str, queue: &str, duration: &str, impairments: &str) -> String {
    format!(
        r#"
seed = {seed}
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "{bottleneck}"
rtt = "20ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "{queue}" }}
[[cross]]
kind = "cbr"
rate = "{rate}"
packet_size = "1000B"
{impairments}
"#
    )
}

fn link(sim: &Simulation, name: &str) -> LinkResult {
    sim.results().links.into_iter().find(|l| l.link == name).unwrap_or_else(|| panic!("no link {name}"))
}

// ---------------------------------------------------------------- loss

#[test]
fn random_loss_rate_is_p_within_sampling_error() {
    // 1 Mb/s of 1000-byte packets for 200 s: 25 000 packets; p = 0.01 gives 250 ± 15.7 (1 sd).
    let sim = run(&cbr(3, "1Mbps", "10Mbps", "100pkt", "200s", "[[impairments]]\nlink = \"bottleneck\"\nloss = { kind = \"random\", p = 0.01 }"));
    let l = link(&sim, "bottleneck:left->right");
    let n = l.arrivals as f64;
    assert!(n > 24_900.0, "{n} packets offered");
    assert_eq!(l.drops, l.impairment_drops, "no queue drops at 10 % load");
    let sd = (n * 0.01 * 0.99).sqrt();
    let lost = l.impairment_drops as f64;
    assert!((lost - n * 0.01).abs() < 4.0 * sd, "{lost} lost of {n}; expected {} ± {:.0} (4 sd)", n * 0.01, 4.0 * sd);
    // The reverse direction and the other links are untouched.
    assert_eq!(link(&sim, "bottleneck:right->left").impairment_drops, 0);
    let through = link(&sim, "access-xd0:right->xd0").arrivals;
    assert!(l.arrivals - l.drops - through <= 1, "{through} forwarded; at most one still in flight");
}

#[test]
fn gilbert_elliott_loss_has_its_stationary_rate_and_clusters() {
    let (p_gb, p_bg, loss_good, loss_bad) = (0.01, 0.3, 0.0, 0.5);
    let s = ImpairmentSpec { loss: Some(LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad }), ..spec() };
    let mut imp = Impairment::new(&s, stream(11, Component::Impairment, 0));
    let n = 400_000;
    let lost: Vec<bool> = (0..n).map(|_| imp.lose()).collect();
    let rate = lost.iter().filter(|&&x| x).count() as f64 / n as f64;
    let pi_bad = p_gb / (p_gb + p_bg);
    let expect = loss_bad * pi_bad + loss_good * (1.0 - pi_bad);
    // Measured 0.0160 for expect 0.01613 (seed 11); bursts make the error larger than binomial.
    assert!((rate / expect - 1.0).abs() < 0.06, "loss rate {rate:.5}; expected {expect:.5}");
    // P(loss | previous lost): the previous loss says "bad state", which lasts 1/p_bg packets on
    // average; here ≈ (1 - p_bg)·loss_bad = 0.35, twenty times the mean rate.
    let pairs = lost.windows(2).filter(|w| w[0]).count() as f64;
    let both = lost.windows(2).filter(|w| w[0] && w[1]).count() as f64;
    let cond = both / pairs;
    assert!(cond > 10.0 * rate, "P(loss | previous lost) = {cond:.3} vs mean {rate:.4}: losses must cluster");
    assert!((cond - (1.0 - p_bg) * loss_bad).abs() < 0.03, "P(loss | previous lost) = {cond:.3}; expected ≈ {:.3}", (1.0 - p_bg) * loss_bad);
    // Random loss at the same mean does not cluster.
    let s = ImpairmentSpec { loss: Some(LossSpec::Random { p: expect }), ..spec() };
    let mut imp = Impairment::new(&s, stream(11, Component::Impairment, 0));
    let lost: Vec<bool> = (0..n).map(|_| imp.lose()).collect();
    let pairs = lost.windows(2).filter(|w| w[0]).count() as f64;
    let both = lost.windows(2).filter(|w| w[0] && w[1]).count() as f64;
    assert!(both / pairs < 3.0 * expect, "random loss: P(loss | previous lost) = {:.4}", both / pairs);
}

#[test]
fn gilbert_elliott_in_a_scenario_matches_the_stationary_rate() {
    // 40 000 packets; stationary loss 0.5 · 0.01/0.31 = 0.0161.
    let sim = run(&cbr(5, "1.6Mbps", "10Mbps", "100pkt", "200s", "[[impairments]]\nlink = \"bottleneck\"\nloss = { kind = \"gilbert-elliott\", p_gb = 0.01, p_bg = 0.3, loss_good = 0.0, loss_bad = 0.5 }"));
    let l = link(&sim, "bottleneck:left->right");
    let rate = l.impairment_drops as f64 / l.arrivals as f64;
    assert!((rate / 0.016129 - 1.0).abs() < 0.15, "loss rate {rate:.5}; expected 0.0161");
}

// ---------------------------------------------------------------- jitter

#[test]
fn jitter_without_reordering_stays_within_bounds_and_in_order() {
    let max = Dur::from_millis(5);
    let s = ImpairmentSpec { jitter: Some(JitterSpec { dist: JitterDist::Uniform { max }, reorder: false }), ..spec() };
    // 12 Mb/s, 1500 B = 1 ms per packet; one packet every 0.5 ms keeps a queue, every 3 ms none.
    let delay = Dur::from_millis(10);
    let mut ch = channel(&s, 12_000_000, delay, 1);
    let tx = Dur::from_millis(1);
    let mut prev = Time::ZERO;
    let mut busy = Time::ZERO;
    let mut extra_seen = Vec::new();
    for k in 0..4000u64 {
        let now = Time(if k < 2000 { k * 3_000_000 } else { 6_000_000_000 + (k - 2000) * 500_000 });
        let a = offer(&mut ch, now, 1500, k + 1).expect("no loss configured");
        let end = now.max(busy) + tx;
        busy = end;
        let extra = (a - end).as_nanos() as i64 - delay.as_nanos() as i64;
        assert!((0..=max.as_nanos() as i64).contains(&extra), "packet {k}: one-way delay {extra} ns beyond base + transmission");
        assert!(a >= prev, "packet {k} overtook its predecessor");
        prev = a;
        extra_seen.push(extra);
    }
    let mean = extra_seen[..2000].iter().sum::<i64>() as f64 / 2000.0;
    assert!((mean / 2.5e6 - 1.0).abs() < 0.05, "mean extra delay {mean} ns; expected 2.5 ms");
}

#[test]
fn normal_jitter_has_its_mean_and_sd_and_is_never_negative() {
    let (mean, sd) = (Dur::from_millis(2), Dur::from_millis(1));
    let s = ImpairmentSpec { jitter: Some(JitterSpec { dist: JitterDist::Normal { mean, sd }, reorder: true }), ..spec() };
    let mut imp = Impairment::new(&s, stream(2, Component::Impairment, 0));
    let xs: Vec<f64> = (0..100_000).map(|_| (imp.arrival(Time(1_000_000_000)) - Time(1_000_000_000)).as_nanos() as f64).collect();
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64;
    // Truncation at 0 (2 sd below the mean) moves the mean up by ≈ 0.0085 ms.
    assert!((m / 2e6 - 1.0).abs() < 0.02, "mean {m}");
    assert!((v.sqrt() / 1e6 - 1.0).abs() < 0.05, "sd {}", v.sqrt());
}

const TCP: &str = r#"recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet""#;

#[expect(clippy::too_many_arguments, reason = "a path is its rate, RTT, buffer, transfer, duration, startup and impairments; a struct would only rename them")]
fn tcp_path(seed: u64, rate: &str, rtt: &str, queue: &str, size: &str, duration: &str, startup: &str, impairments: &str) -> String {
    format!(
        r#"
seed = {seed}
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate}"
rtt = "{rtt}"
access_rate = "10Gbps"
queue = {{ kind = "droptail", limit = "{queue}" }}
[[flows]]
name = "f"
tcp = {{ {TCP} }}
size = "{size}"
startup = {{ {startup} }}
{impairments}
"#
    )
}

#[test]
fn reordering_jitter_makes_tcp_see_out_of_order_segments_and_it_still_completes() {
    // 10 Mb/s: a segment every 1.2 ms; jitter up to 5 ms lets a segment overtake up to four.
    // A 1000-packet buffer: 2 MB (1382 segments) cannot overflow it, so every drop would be
    // the impairment's and there is none.
    let toml = tcp_path(1, "10Mbps", "40ms", "1000pkt", "2MB", "30s", r#"algorithm = "slow-start""#,
        "[[impairments]]\nlink = \"bottleneck\"\njitter = { kind = \"uniform\", max = \"5ms\", reorder = true }");
    let sim = run(&toml);
    let f = flow(&sim, 0);
    let l = link(&sim, "bottleneck:left->right");
    assert!(f.completed, "the flow completes despite reordering");
    assert!(l.reordered > 100, "{} segments overtaken", l.reordered);
    // Out-of-order segments make duplicate ACKs: recoveries and retransmissions without any drop.
    assert_eq!(f.drops, 0, "no packet was dropped");
    assert!(f.recovery_episodes > 0 && f.retransmissions > 0, "spurious recoveries {} / retransmissions {}", f.recovery_episodes, f.retransmissions);
    // Without reordering, the same jitter makes no duplicate ACK.
    let toml = toml.replace("reorder = true", "reorder = false");
    let sim = run(&toml);
    let f = flow(&sim, 0);
    assert_eq!((link(&sim, "bottleneck:left->right").reordered, f.recovery_episodes, f.drops), (0, 0, 0));
}

// ---------------------------------------------------------------- aggregation

#[test]
fn aggregated_acks_reach_the_sender_only_at_multiples_of_the_interval() {
    // access-s0's reverse direction ends at the sender s0.
    let toml = tcp_path(1, "20Mbps", "40ms", "200pkt", "1MB", "10s", r#"algorithm = "slow-start""#,
        "[[impairments]]\nlink = \"access-s0\"\ndirection = \"reverse\"\naggregate = { interval = \"10ms\" }");
    let sim = run(&toml);
    assert!(flow(&sim, 0).completed);
    let r = sim.results();
    let t = &r.traces.seq;
    let acks: Vec<f64> = (0..t.time.len()).filter(|&i| t.event[i] == SEQ_ACKED).map(|i| t.time[i]).collect();
    assert!(acks.len() > 50, "{} ACK events", acks.len());
    for a in &acks {
        let k = (a / 0.01).round();
        assert!((a - k * 0.01).abs() < 1e-9, "ACK at {a} s is not a multiple of 10 ms");
    }
    // Without the impairment ACKs come at other instants.
    let sim = run(&toml.replace("direction = \"reverse\"", "direction = \"forward\""));
    let r = sim.results();
    let t = &r.traces.seq;
    let off = (0..t.time.len()).filter(|&i| t.event[i] == SEQ_ACKED).filter(|&i| ((t.time[i] / 0.01).round() * 0.01 - t.time[i]).abs() > 1e-6).count();
    assert!(off > 0, "forward aggregation: ACKs are offset by the return path");
}

#[test]
fn max_burst_spreads_an_aggregate_over_several_instants() {
    let s = ImpairmentSpec { aggregate: Some(startlab_scenario::AggregateSpec { interval: Dur::from_millis(10), max_burst: Some(3) }), ..spec() };
    let mut imp = Impairment::new(&s, stream(1, Component::Impairment, 0));
    let got: Vec<u64> = (0..8).map(|k| imp.arrival(Time(1_000_000 + k * 100_000)).as_nanos() / 1_000_000).collect();
    assert_eq!(got, vec![10, 10, 10, 20, 20, 20, 30, 30]);
}

// ---------------------------------------------------------------- rate schedule

#[test]
fn a_rate_step_down_builds_the_queue_cbr_predicts() {
    // CBR 8 Mb/s on 10 Mb/s; from 10 s to 20 s the link runs at 5 Mb/s: 3 Mb/s of excess for 10 s
    // is 3.75 MB = 3750 packets of 1000 B; afterwards it drains at 2 Mb/s (15 s).
    let sim = run(&cbr(1, "8Mbps", "10Mbps", "10000pkt", "40s", "[[impairments]]\nlink = \"bottleneck\"\nrate = [[\"10s\", \"5Mbps\"], [\"20s\", \"10Mbps\"]]"));
    let l = link(&sim, "bottleneck:left->right");
    assert_eq!(l.drops, 0);
    assert!((l.max_queue as i64 - 3750).abs() <= 3, "max queue {} packets; expected 3750", l.max_queue);
    let r = sim.results();
    let q = &r.traces.queue;
    let c = r.link_names.iter().position(|n| n == "bottleneck:left->right").unwrap() as u32;
    let at = |t: f64| (0..q.time.len()).rev().find(|&i| q.link[i] == c && q.time[i] <= t).map_or(0, |i| q.packets[i]);
    assert!(at(9.99) <= 1, "no queue before the step: {}", at(9.99));
    assert!((at(15.0) as i64 - 1875).abs() <= 3, "queue at 15 s {}; expected 1875", at(15.0));
    assert!((at(27.5) as i64 - 1875).abs() <= 3, "queue at 27.5 s {}; expected 1875 (draining at 2 Mb/s)", at(27.5));
    assert!(at(36.0) <= 1, "drained by 35 s: {}", at(36.0));
}

#[test]
fn a_rate_schedule_sets_tcp_throughput_per_phase() {
    // 20 Mb/s, then 5 Mb/s from 10 s to 20 s, then 20 Mb/s: bytes ACKed per phase.
    let toml = tcp_path(1, "20Mbps", "40ms", "100pkt", "infinite", "30s", r#"algorithm = "slow-start""#,
        "[[impairments]]\nlink = \"bottleneck\"\nrate = [[\"10s\", \"5Mbps\"], [\"20s\", \"20Mbps\"]]");
    let sim = run(&toml);
    let r = sim.results();
    let t = &r.traces.seq;
    let acked_by = |x: f64| (0..t.time.len()).rev().find(|&i| t.event[i] == SEQ_ACKED && t.time[i] <= x).map_or(0, |i| t.seq[i]);
    let mbps = |a: f64, b: f64| (acked_by(b) - acked_by(a)) as f64 * 8.0 / (b - a) / 1e6;
    // Goodput is payload (1448 of 1500 B on the wire); phases skip 2 s after each change.
    let (p1, p2, p3) = (mbps(2.0, 10.0), mbps(12.0, 20.0), mbps(22.0, 30.0));
    assert!(p1 > 17.0 && p1 < 19.4, "phase 1: {p1:.2} Mb/s");
    assert!(p2 > 4.3 && p2 < 4.85, "phase 2: {p2:.2} Mb/s");
    assert!(p3 > 17.0 && p3 < 19.4, "phase 3: {p3:.2} Mb/s");
}

// ---------------------------------------------------------------- rate trace

#[test]
fn a_trace_sends_packets_at_its_opportunities() {
    // Opportunities at 2, 2, 5 and 10 ms, repeating every 10 ms.
    let s = ImpairmentSpec {
        rate_trace: Some(RateTraceSpec { file: "t".into(), opportunities_ms: vec![2, 2, 5, 10], period_ms: 10, count: 4 }),
        ..spec()
    };
    let mut ch = channel(&s, 1_000_000, Dur::ZERO, 1);
    let ms = |t: Time| t.as_nanos() as f64 / 1e6;
    let got: Vec<f64> = (0..8).map(|k| ms(offer(&mut ch, Time::ZERO, 1500, k + 1).unwrap())).collect();
    assert_eq!(got, vec![2.0, 2.0, 5.0, 10.0, 12.0, 12.0, 15.0, 20.0]);
    // An idle link waits for the next opportunity at or after the arrival; two 700 B packets
    // share one opportunity, a third does not fit.
    let got: Vec<f64> = (0..3).map(|k| ms(offer(&mut ch, Time(33_000_000), 700, 20 + k).unwrap())).collect();
    assert_eq!(got, vec![35.0, 35.0, 40.0]);
    // A 3000 B packet takes two opportunities and leaves at the second.
    assert_eq!(ms(offer(&mut ch, Time(50_500_000), 3000, 30).unwrap()), 52.0);
    assert_eq!(ch.waiting_pkts(), 1, "it waits in the queue until then");
}

#[test]
fn a_trace_file_limits_a_scenario_link_to_its_opportunities() {
    let dir = std::env::temp_dir().join(format!("startlab-imp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cell.down");
    // 3 opportunities per 10 ms: 3.6 Mb/s of 1500-byte packets.
    std::fs::write(&file, "1\n4\n10\n").unwrap();
    let imp = format!("[[impairments]]\nlink = \"bottleneck\"\nrate_trace = {:?}", file.display().to_string());
    let toml = format!(
        "seed = 1\nduration = \"10s\"\n[topology]\nkind = \"dumbbell\"\nbottleneck_rate = \"10Mbps\"\nrtt = \"20ms\"\naccess_rate = \"1Gbps\"\nqueue = {{ kind = \"droptail\", limit = \"50pkt\" }}\n[[cross]]\nkind = \"cbr\"\nrate = \"6Mbps\"\npacket_size = \"1500B\"\n{imp}\n"
    );
    let sim = run(&toml);
    let l = link(&sim, "bottleneck:left->right");
    // The first CBR packet reaches `left` at 12 µs; opportunities at 1, 4, 10 ms of each 10 ms.
    // A packet sent at opportunity t reaches `right` at t + 10 ms (the bottleneck's delay), so by
    // the end (10 s) the opportunities up to 9990 ms have delivered: 999 periods × 3 = 2997.
    assert_eq!(link(&sim, "access-xd0:right->xd0").arrivals, 2997);
    assert!(l.drops > 1000, "the 6 Mb/s source overflows a 3.6 Mb/s trace: {} drops", l.drops);
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------- determinism

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another_loss_pattern() {
    let imp = "[[impairments]]\nlink = \"bottleneck\"\ndirection = \"both\"\nloss = { kind = \"random\", p = 0.01 }\njitter = { kind = \"normal\", mean = \"1ms\", sd = \"1ms\", reorder = true }";
    let toml = |seed| tcp_path(seed, "20Mbps", "40ms", "100pkt", "5MB", "30s", r#"algorithm = "hystart++""#, imp);
    let run_seq = |seed| {
        let sim = run(&toml(seed));
        let r = sim.results();
        (r.flows.clone(), r.links.clone(), r.traces.seq.time.clone(), r.traces.seq.seq.clone())
    };
    let a = run_seq(1);
    assert!(a.0[0].impairment_drops > 0);
    assert_eq!(a, run_seq(1), "same scenario, same seed: identical results and traces");
    let b = run_seq(2);
    assert_ne!(a.2, b.2, "another seed: another loss pattern");
}

// ---------------------------------------------------------------- HyStart under aggregation

fn hystart_probe(alg: &str, agg: &str) -> startlab_sim::FlowResult {
    let imp = if agg.is_empty() { String::new() } else { format!("[[impairments]]\nlink = \"bottleneck\"\ndirection = \"reverse\"\n{agg}") };
    let toml = tcp_path(1, "100Mbps", "106ms", "883pkt", "infinite", "4s", alg, &imp);
    flow(&run(&toml.replace(r#"ack = "every-packet""#, r#"ack = "every-packet", initial_ssthresh = "infinite""#)), 0)
}

#[test]
#[ignore = "prints the HyStart exits under ACK aggregation; run with --ignored --nocapture"]
fn hystart_under_aggregation_table() {
    for agg in ["", "1ms", "2ms", "4ms", "10ms", "20ms"] {
        for alg in [r#"algorithm = "hystart-linux""#, r#"algorithm = "hystart-linux", round_reset = "gated""#, r#"algorithm = "hystart-linux", detect = "ack-train""#, r#"algorithm = "hystart""#, r#"algorithm = "hystart++""#] {
            let a = if agg.is_empty() { String::new() } else { format!("aggregate = {{ interval = \"{agg}\" }}") };
            let f = hystart_probe(alg, &a);
            println!("{agg:5} {alg:50} {:15} cwnd {:7.1} at {:.3} s drops {}", f.exit_reason, f.exit_cwnd_pkts.unwrap_or(f64::NAN), f.startup_exit_time.unwrap_or(f64::NAN), f.drops);
        }
    }
}

#[test]
fn ack_aggregation_blinds_the_ack_train_and_fakes_a_delay_increase() {
    // The HyStart comparison path (100 Mb/s, 106 ms, one-BDP buffer of 883 packets, BDP 916
    // segments), ACKs aggregated on the bottleneck's reverse direction. Measured (seed 1; the
    // ignored test above prints the table):
    //   no impairment: hystart ack-train at 1209 pkts, 0 drops; hystart-linux (detect =
    //     "ack-train") ack-train at 1211; hystart-linux (both) ack-train at 1211 (with
    //     round_reset = "gated", Linux 5.16–6.13: delay-increase at 1032).
    //   10 ms: hystart delay-increase at 3079 pkts with 1311 drops; 4 ms: hystart-linux
    //     ack-train-only exits by loss at 3552 with 2683 drops.
    //   20 ms: hystart-linux (both) delay-increase at 3080 pkts, 1311 drops; with "gated"
    //     delay-increase at 520 pkts (0.57 BDP), 0 drops.
    // Why: an ACK train is a run of ACKs each within ack_delta (2 ms) of the previous one.
    // Aggregation releases ACKs in bursts one interval apart: inside a burst the gaps are 0 but the
    // train cannot grow in length (all at one instant), and the gap to the next burst exceeds
    // ack_delta, so the train never reaches delay_min/2 — the detector is blinded and the flow
    // overshoots into the buffer (the opposite of the premature exit one might expect; the
    // premature exit appears in the delay detector instead). The delay detector compares the
    // minimum of a round's first 8 RTT samples with the smallest RTT seen; aggregation adds
    // 0..interval to each sample depending on where the round starts on the release grid, and at
    // 20 ms that exceeds Linux's threshold clamp(delay_min/8, 4 ms, 16 ms) = 13 ms: a false delay
    // increase with an empty queue — when rounds start mid-flight (the gated reset of Linux
    // 5.16–6.13); with rounds on flight boundaries the samples include the burst's own queue less.
    let base = hystart_probe(r#"algorithm = "hystart""#, "");
    assert_eq!((base.exit_reason.as_str(), base.drops), ("ack-train", 0));
    let agg = hystart_probe(r#"algorithm = "hystart""#, r#"aggregate = { interval = "10ms" }"#);
    assert_ne!(agg.exit_reason, "ack-train", "10 ms aggregation: the ACK train cannot form");
    assert!(agg.exit_cwnd_pkts.unwrap() > 2.0 * base.exit_cwnd_pkts.unwrap() && agg.drops > 0, "overshoot: {agg:?}");

    let alg = r#"algorithm = "hystart-linux", detect = "ack-train""#;
    let base = hystart_probe(alg, "");
    assert_eq!((base.exit_reason.as_str(), base.drops), ("ack-train", 0));
    let agg = hystart_probe(alg, r#"aggregate = { interval = "4ms" }"#);
    assert_eq!(agg.exit_reason, "loss", "4 ms aggregation: Linux's ACK train never fires");
    assert!(agg.drops > 1000);

    // Linux 5.16–6.13 (`round_reset = "gated"`): rounds start mid-flight, and 20 ms aggregation
    // fakes a delay increase well below the BDP.
    let gated = r#"algorithm = "hystart-linux", round_reset = "gated""#;
    let base = hystart_probe(gated, "");
    let agg = hystart_probe(gated, r#"aggregate = { interval = "20ms" }"#);
    assert_eq!((base.exit_reason.as_str(), agg.exit_reason.as_str()), ("delay-increase", "delay-increase"));
    assert!(agg.exit_cwnd_pkts.unwrap() < 0.6 * base.exit_cwnd_pkts.unwrap(), "false early exit: {:?} vs {:?}", agg.exit_cwnd_pkts, base.exit_cwnd_pkts);
    assert!(agg.overshoot.unwrap() < 0.7 && agg.drops == 0, "exit well below the BDP with no queue pressure: {:?}", agg.overshoot);
    // Today's kernels (the default): rounds follow the flights, the ACK train fires near the BDP
    // without aggregation, and 20 ms aggregation blinds it as it does the paper's: the flow
    // overshoots into the buffer.
    let base = hystart_probe(r#"algorithm = "hystart-linux""#, "");
    let agg = hystart_probe(r#"algorithm = "hystart-linux""#, r#"aggregate = { interval = "20ms" }"#);
    assert_eq!((base.exit_reason.as_str(), base.drops), ("ack-train", 0));
    assert_ne!(agg.exit_reason, "ack-train");
    assert!(agg.exit_cwnd_pkts.unwrap() > 2.0 * base.exit_cwnd_pkts.unwrap() && agg.drops > 0, "overshoot: {agg:?}");
}

#[test]
fn the_example_runs_with_its_trace_relative_to_the_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let text = std::fs::read_to_string(dir.join("impairments.toml")).unwrap();
    let scenario = startlab_scenario::from_toml_in(&text, Some(&dir)).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(scenario).unwrap();
    sim.run();
    sim.check_invariants().unwrap();
    let f = flow(&sim, 0);
    assert!(f.completed && f.impairment_drops > 0, "{f:?}");
    // The trace averages 12.8 Mb/s but is silent from 40 to 60 ms of every 100 ms: the 5 Mb/s
    // source queues 20 ms × 5 Mb/s ≈ 8 packets there, on a 1 Gb/s link that never queues.
    let x = link(&sim, "access-xs0:xs0->left");
    assert!((7..=10).contains(&x.max_queue) && x.drops == 0, "{x:?}");
}

// ---------------------------------------------------------------- refusals

#[test]
fn bad_impairments_are_refused_with_the_key_path() {
    let base = cbr(1, "1Mbps", "10Mbps", "100pkt", "1s", "");
    let refuse = |imp: &str, path: &str, words: &str| {
        let e = startlab_scenario::from_toml(&format!("{base}\n[[impairments]]\n{imp}")).expect_err(imp);
        assert_eq!(e.path, path, "{imp}: {e}");
        assert!(e.message.contains(words), "{imp}: {e}");
    };
    refuse("link = \"nope\"\nloss = { kind = \"random\", p = 0.1 }", "impairments[0].link", "bottleneck");
    refuse("link = \"bottleneck\"\ndirection = \"up\"\nloss = { kind = \"random\", p = 0.1 }", "impairments[0].direction", "\"both\"");
    refuse("link = \"bottleneck\"\nloss = { kind = \"random\", p = 1.5 }", "impairments[0].loss.p", "between 0 and 1");
    refuse("link = \"bottleneck\"\nloss = { kind = \"bursty\", p = 0.1 }", "impairments[0].loss.kind", "gilbert-elliott");
    refuse("link = \"bottleneck\"\nloss = { kind = \"random\", p_gb = 0.1 }", "impairments[0].loss.p_gb", "not a key");
    refuse("link = \"bottleneck\"\njitter = { kind = \"uniform\" }", "impairments[0].jitter.max", "missing");
    refuse("link = \"bottleneck\"\naggregate = { interval = \"0s\" }", "impairments[0].aggregate.interval", "longer than 0s");
    refuse("link = \"bottleneck\"\nrate = [[\"2s\", \"1Mbps\"], [\"1s\", \"2Mbps\"]]", "impairments[0].rate[1]", "increase");
    refuse("link = \"bottleneck\"\nrate_trace = \"/nonexistent/startlab.trace\"", "impairments[0].rate_trace", "cannot read");
    refuse("link = \"bottleneck\"", "impairments[0]", "impairs nothing");
    refuse("link = \"bottleneck\"\nloss = { kind = \"random\", p = 0.1 }\nshaper = 1", "impairments[0].shaper", "unknown field");
}
