//! RED queues (ALGORITHMS.md §17.1-17.2) and ECN endpoints (§17.3) in whole simulations.

mod common;
use startlab_sim::{LinkResult, Simulation, Time};

/// The bottleneck direction carrying the data (`bottleneck:left->right`).
fn bottleneck(sim: &Simulation) -> LinkResult {
    sim.results().links.into_iter().find(|l| l.link == "bottleneck:left->right").expect("a dumbbell has a bottleneck")
}

/// RED's p_b at average `avg` (§17.2, gentle).
fn p_b(avg: f64, min_th: f64, max_th: f64, max_p: f64) -> f64 {
    if avg < min_th {
        0.0
    } else if avg < max_th {
        max_p * (avg - min_th) / (max_th - min_th)
    } else {
        (max_p + (1.0 - max_p) * (avg - max_th) / max_th).min(1.0)
    }
}

/// The long-run drop rate of the uniform-spacing rule at a constant `p_b`: 1 / E[X], X = arrivals
/// from one drop to the next. After a drop `count` = 0 and the j-th arrival sees count = j, so it is
/// dropped with `p_a = p_b / (1 − j·p_b)` (1 once `j·p_b >= 1`); E[X] = Σ_{j>=0} P(X > j).
///
/// NOTE: this makes X uniform on {1, …, 1/p_b − 1} (P(X = j) = p_b/(1 − p_b)), mean 1/(2 p_b):
/// the rate is 2·p_b, not the 2·p_b/(1 + p_b) of the paper's "uniform on {1, …, 1/p_b}" (which
/// would need the first arrival after a drop to see count = 0).
/// Computing it from the rule itself avoids choosing between the approximations.
fn uniform_spacing_rate(p_b: f64) -> f64 {
    let (mut survive, mut mean) = (1.0, 0.0);
    for j in 1..100_000u32 {
        mean += survive; // P(X > j − 1)
        let c = j as f64 * p_b;
        let p_a = if c >= 1.0 { 1.0 } else { p_b / (1.0 - c) };
        survive *= 1.0 - p_a;
        if survive <= 0.0 {
            break;
        }
    }
    1.0 / mean
}

/// CBR sources overloading a 10 Mb/s RED bottleneck (1000-byte packets, 1250 packet/s service).
fn cbr_overload(rate_mbps: f64, queue: &str) -> String {
    format!(
        r#"
seed = 3
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "20ms"
access_rate = "1Gbps"
queue = {{ {queue} }}
[[cross]]
kind = "cbr"
rate = "{}Kbps"
packet_size = "1000B"
[[cross]]
kind = "cbr"
rate = "{}Kbps"
packet_size = "1000B"
start = "1ms"
[trace]
cwnd = false
seq = false
"#,
        rate_mbps * 500.0,
        rate_mbps * 500.0
    )
}

/// Time-weighted mean of the bottleneck's RED average over `[from, to]` s, from the queue trace.
fn mean_red_avg(sim: &Simulation, link: u32, from: f64, to: f64) -> f64 {
    let r = sim.results();
    let q = &r.traces.queue;
    let pts: Vec<(f64, f64)> = (0..q.time.len()).filter(|&i| q.link[i] == link).map(|i| (q.time[i], q.red_avg[i])).collect();
    let (mut area, mut span) = (0.0, 0.0);
    for w in pts.windows(2) {
        let (a, b) = (w[0].0.max(from), w[1].0.min(to));
        if b > a {
            area += w[0].1 * (b - a);
            span += b - a;
        }
    }
    area / span
}

/// Early drops per arrival at the bottleneck between `from` and the end of the run.
fn measured(toml: &str, from: f64) -> (f64, f64, LinkResult) {
    let scenario = startlab_scenario::from_toml(toml).expect("scenario resolves");
    let mut sim = Simulation::new(scenario).expect("scenario builds");
    sim.run_until(Time::ZERO + startlab_sim::Dur::from_secs_f64(from));
    let before = bottleneck(&sim);
    sim.run();
    sim.check_invariants().expect("invariants hold");
    let after = bottleneck(&sim);
    let link = sim.results().links.iter().position(|l| l.link == "bottleneck:left->right").unwrap() as u32;
    let rate = (after.early_drops - before.early_drops) as f64 / (after.arrivals - before.arrivals) as f64;
    (mean_red_avg(&sim, link, from, 60.0), rate, after)
}

#[test]
fn early_drops_follow_the_red_curve_in_the_linear_and_gentle_regions() {
    let queue = "kind = \"red\", limit = \"100pkt\", min_th = \"5pkt\", max_th = \"15pkt\", max_p = 0.1, w_q = 0.002, gentle = true";
    // 11 Mb/s on 10 Mb/s needs 1/11 dropped: avg settles in the linear region; 20 Mb/s needs 1/2
    // dropped: the gentle region.
    for (offered, region) in [(11.0, (5.0, 15.0)), (20.0, (15.0, 30.0))] {
        let (avg, rate, link) = measured(&cbr_overload(offered, queue), 5.0);
        assert_eq!(link.drops, link.early_drops, "{offered} Mb/s: the 100-packet buffer never overflows");
        assert_eq!(link.marks, 0, "no ECN-capable packet, no mark");
        assert!(avg > region.0 && avg < region.1, "{offered} Mb/s: avg {avg} should sit in {region:?}");
        let pb = p_b(avg, 5.0, 15.0, 0.1);
        let expected = uniform_spacing_rate(pb);
        // Tolerance: the drop count over ~70k arrivals has a relative s.d. under 1 % (uniform
        // spacing is more regular than Bernoulli), and avg moves by well under 1 % of
        // max_th − min_th around its mean once settled (w_q = 0.002 averages ~500 arrivals); 3 %
        // leaves room for both while still telling apart the 2·p_b/(1 + p_b) approximation
        // (≈ 5 % lower in the linear region) and p_a = p_b without the count (half the rate).
        let err = (rate / expected - 1.0).abs();
        eprintln!(
            "offered {offered} Mb/s: avg {avg:.3} pkt, p_b {pb:.4}, measured {rate:.4}, uniform-spacing {expected:.4}, 2p/(1+p) {:.4}",
            2.0 * pb / (1.0 + pb)
        );
        assert!(err < 0.03, "{offered} Mb/s: measured early-drop rate {rate} vs {expected} from p_b({avg}) = {pb}");
    }
}

/// Two long TCP flows through a RED bottleneck that marks; `ecn` for the endpoints.
fn tcp_through_red(ecn: bool, handshake: bool) -> String {
    format!(
        r#"
seed = 5
duration = "20s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = {{ kind = "red", limit = "300pkt", min_th = "5pkt", max_th = "40pkt", max_p = 0.1, w_q = 0.002, gentle = true, ecn = true }}
[[flows]]
name = "f"
count = 2
start_jitter = "200ms"
tcp = {{ recovery = "sack", mss = "1448B", initial_window = 10, ack = "delayed", ecn = {ecn}, handshake = {handshake} }}
size = "infinite"
"#
    )
}

#[test]
fn ecn_flows_are_marked_instead_of_dropped_and_leave_startup_on_the_echo() {
    for handshake in [false, true] {
        let sim = common::run(&tcp_through_red(true, handshake));
        let link = bottleneck(&sim);
        assert!(link.marks > 0, "handshake {handshake}: the RED queue marks ECT packets ({link:?})");
        assert_eq!(link.drops, 0, "handshake {handshake}: no packet of an ECN flow is dropped ({link:?})");
        for f in &sim.results().flows {
            assert_eq!((f.drops, f.retransmissions), (0, 0), "{}: no loss, no retransmission", f.flow);
            assert!(f.ecn_marks > 0 && f.ecn_reductions > 0, "{}: marked {} times, reduced {} times", f.flow, f.ecn_marks, f.ecn_reductions);
            assert!(f.ecn_reductions <= f.ecn_marks, "{}: at most one reduction per mark", f.flow);
            assert_eq!(f.exit_reason, "ecn", "{}: the echo ends slow start", f.flow);
        }
        let plain = common::run(&tcp_through_red(false, handshake));
        let link = bottleneck(&plain);
        assert_eq!(link.marks, 0, "non-ECT packets are never marked");
        assert!(link.early_drops > 0, "without ECN the same load is dropped ({link:?})");
        assert!(plain.results().flows.iter().all(|f| f.exit_reason == "loss" && f.ecn_reductions == 0));
    }
}

#[test]
fn an_ecn_sender_reduces_at_most_once_per_round_trip() {
    let sim = common::run(&tcp_through_red(true, false));
    let r = sim.results();
    for (i, f) in r.flows.iter().enumerate() {
        // Without loss every decrease of cwnd is an ECN reduction.
        let tr = &r.traces.cwnd;
        let pts: Vec<(f64, f64)> = (0..tr.time.len()).filter(|&k| tr.flow[k] == i as u32).map(|k| (tr.time[k], tr.cwnd[k])).collect();
        let cuts: Vec<f64> = pts.windows(2).filter(|w| w[1].1 < w[0].1).map(|w| w[1].0).collect();
        assert_eq!(cuts.len() as u64, f.ecn_reductions, "{}: each reduction is one cwnd decrease", f.flow);
        // A new reduction needs the ACK of data sent after the previous one: a round trip later.
        for w in cuts.windows(2) {
            assert!(w[1] - w[0] >= f.base_rtt, "{}: reductions at {} s and {} s are less than one base RTT ({} s) apart", f.flow, w[0], w[1], f.base_rtt);
        }
        let rtts = 20.0 / f.base_rtt;
        assert!((f.ecn_reductions as f64) < rtts, "{}: {} reductions in {rtts} RTTs", f.flow, f.ecn_reductions);
    }
}

#[test]
fn red_draws_come_from_the_seed_and_nothing_else() {
    let queue = "kind = \"red\", limit = \"100pkt\"";
    let short = |seed: u64| cbr_overload(11.0, queue).replace("seed = 3", &format!("seed = {seed}")).replace("duration = \"60s\"", "duration = \"5s\"");
    let drops = |seed: u64| {
        let sim = common::run(&short(seed));
        let r = sim.results();
        let q = &r.traces.queue;
        (bottleneck(&sim).early_drops, q.red_avg.iter().map(|a| a.to_bits()).collect::<Vec<_>>())
    };
    assert_eq!(drops(3), drops(3), "same seed, same drops and the same average at every change");
    assert_ne!(drops(3), drops(4), "another seed draws other drops");
}
