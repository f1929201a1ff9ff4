//! Closed forms on lossless paths and the classic loss-recovery experiments, run through the whole
//! simulator.

mod common;
use common::{cwnd_at, flow, run, single};


#[test]
fn slow_start_reaches_ssthresh_in_ceil_log2_rounds_with_per_packet_acks() {
    // ALGORITHMS.md §1.7: from w to S segments takes ceil(log2(S/w)) RTTs on a lossless path.
    for (w, s) in [(1u64, 64u64), (2, 64), (3, 100), (10, 1000), (4, 5)] {
        let tcp = format!(
            r#"recovery = "sack", mss = "1000B", initial_window = {w}, initial_ssthresh = "{s}pkt", ack = "every-packet""#
        );
        let sim = run(&single("1Gbps", "100ms", "100000pkt", &tcp, "infinite", "3s", ""));
        let f = flow(&sim, 0);
        assert_eq!(f.exit_reason, "ssthresh");
        assert!(f.drops == 0, "lossless path");
        let rounds = f.su_time.unwrap() / f.base_rtt;
        let expected = ((s as f64) / (w as f64)).log2().ceil();
        assert!(
            rounds >= expected && rounds < expected + 0.1,
            "w={w} S={s}: slow start took {rounds:.3} RTTs, expected {expected} (plus serialisation)"
        );
    }
}

#[test]
fn delayed_acks_grow_the_window_by_about_one_and_a_half_per_rtt() {
    let tcp = r#"recovery = "sack", mss = "1000B", initial_window = 2, ack = "delayed", delack_timeout = "200ms""#;
    let sim = run(&single("10Gbps", "100ms", "100000pkt", tcp, "infinite", "1.2s", ""));
    let f = flow(&sim, 0);
    let (t0, rtt) = (f.t0.unwrap(), f.base_rtt);
    let mut ratios = vec![];
    for k in 3..9 {
        let a = cwnd_at(&sim, t0 + (k as f64 + 0.5) * rtt);
        let b = cwnd_at(&sim, t0 + (k as f64 + 1.5) * rtt);
        ratios.push(b / a);
    }
    for r in &ratios {
        assert!((1.4..=1.6).contains(r), "per-RTT growth with delayed ACKs should be about 1.5, got {ratios:?}");
    }
}

/// Fall & Floyd style: a window of 20 segments in congestion avoidance, then three drops in one
/// window (the 40th, 42nd and 44th data packets sent).
fn three_drops(recovery: &str) -> startlab_sim::FlowResult {
    let tcp = format!(
        r#"recovery = "{recovery}", mss = "1000B", initial_window = 2, initial_ssthresh = "20pkt", ack = "every-packet", rto_min = "1s""#
    );
    let sim = run(&single("10Mbps", "100ms", "1000pkt", &tcp, "200pkt", "30s", "drops = [40, 42, 44]"));
    let f = flow(&sim, 0);
    assert!(f.completed, "{recovery}: the transfer completes");
    assert_eq!(f.drops, 3, "{recovery}: exactly the forced drops");
    f
}

#[test]
fn sack_recovers_three_drops_without_a_timeout_where_reno_times_out() {
    let sack = three_drops("sack");
    assert_eq!((sack.timeouts, sack.recovery_episodes), (0, 1), "SACK: one recovery episode, no timeout");
    let reno = three_drops("reno");
    assert!(reno.timeouts >= 1, "Reno with three drops in a window waits for the retransmission timer");
    let newreno = three_drops("newreno");
    assert_eq!(newreno.timeouts, 0, "NewReno repairs every hole without a timeout");
    assert!(sack.completion_time < newreno.completion_time, "SACK repairs the holes in one RTT, NewReno in three");
    assert!(newreno.completion_time < reno.completion_time, "Reno pays the timeout");
    let tahoe = three_drops("tahoe");
    assert_eq!(tahoe.timeouts, 0, "Tahoe goes back to slow start instead");
    assert!(tahoe.retransmissions > 3, "go-back-N resends more than the lost segments");
}

#[test]
fn newreno_retransmits_one_hole_per_rtt() {
    let tcp = r#"recovery = "newreno", mss = "1000B", initial_window = 2, initial_ssthresh = "20pkt", ack = "every-packet""#;
    let sim = run(&single("10Mbps", "100ms", "1000pkt", tcp, "200pkt", "30s", "drops = [40, 42, 44]"));
    let r = sim.results();
    let t = &r.traces.seq;
    let rtx: Vec<f64> = (0..t.time.len()).filter(|&i| t.event[i] == 1).map(|i| t.time[i]).collect();
    assert_eq!(rtx.len(), 3, "exactly the three lost segments are retransmitted: {rtx:?}");
    let rtt = r.flows[0].base_rtt;
    for w in rtx.windows(2) {
        let gap = (w[1] - w[0]) / rtt;
        assert!((0.95..1.6).contains(&gap), "one hole per RTT: gaps {gap:.2} RTT in {rtx:?}");
    }
}

#[test]
fn the_paced_start_example_overflows_the_queue_in_slow_start() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/paced-start-default.toml")).unwrap();
    let sim = run(&text.replace("duration = \"50s\"", "duration = \"10s\""));
    let f = flow(&sim, 0);
    assert_eq!(f.exit_reason, "loss");
    assert!(f.su_loss.unwrap() > 0.01, "slow start loses a large share in startup: {:?}", f.su_loss);
    assert!(f.overshoot.unwrap() > 2.0, "cwnd at exit is several BDPs: {:?}", f.overshoot);
    let bottleneck = &sim.results().links[0];
    assert_eq!(bottleneck.max_queue, 1000, "the 1000-packet queue fills");
}

#[test]
fn the_same_seed_gives_identical_results_and_traces() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/paced-start-default.toml")).unwrap();
    let text = text.replace("duration = \"50s\"", "duration = \"5s\"");
    let a = run(&text);
    let b = run(&text);
    let ja = serde_json::to_string(&(a.results(), a.results().traces)).unwrap();
    let jb = serde_json::to_string(&(b.results(), b.results().traces)).unwrap();
    assert!(ja == jb, "two runs of one scenario differ");
}

#[test]
fn the_handshake_adds_one_rtt_and_samples_it() {
    let tcp = r#"recovery = "sack", mss = "1000B", ack = "every-packet", handshake = true"#;
    let sim = run(&single("10Mbps", "100ms", "100pkt", tcp, "10pkt", "5s", ""));
    let f = flow(&sim, 0);
    let t0 = f.t0.unwrap();
    assert!((t0 - f.base_rtt).abs() < 0.002, "data starts one RTT after the SYN: t0 = {t0}");
    assert!(f.completed);
}

#[test]
fn a_graph_routes_flows_along_the_shortest_path() {
    let toml = r#"
seed = 1
duration = "5s"
[topology]
kind = "graph"
hosts = ["a", "b"]
routers = ["r1", "r2", "r3"]
[[topology.links]]
between = ["a", "r1"]
rate = "100Mbps"
delay = "1ms"
queue = { kind = "droptail", limit = "100pkt" }
[[topology.links]]
between = ["r1", "r2"]
rate = "10Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "100pkt" }
[[topology.links]]
between = ["r1", "r3"]
rate = "100Mbps"
delay = "30ms"
queue = { kind = "droptail", limit = "100pkt" }
[[topology.links]]
between = ["r3", "r2"]
rate = "100Mbps"
delay = "30ms"
queue = { kind = "droptail", limit = "100pkt" }
[[topology.links]]
between = ["r2", "b"]
rate = "100Mbps"
delay = "1ms"
queue = { kind = "droptail", limit = "100pkt" }
[[flows]]
name = "f"
from = "a"
to = "b"
size = "100KB"
tcp = { ack = "every-packet" }
"#;
    let sim = run(toml);
    let r = sim.results();
    let f = &r.flows[0];
    assert!(f.completed);
    // Shortest by delay: a-r1-r2-b, 12 ms one way; the 60 ms detour via r3 carries nothing.
    assert!((f.base_rtt - 0.024).abs() < 0.002, "base RTT {}", f.base_rtt);
    assert!((f.available_rate.unwrap() - 10e6).abs() < 1.0, "the 10 Mbps link is the bottleneck");
    let detour = r.links.iter().find(|l| l.link.starts_with("r1-r3")).unwrap();
    assert_eq!(detour.arrivals, 0);
}

#[test]
fn the_receiver_window_caps_the_rate_at_one_window_per_rtt() {
    let tcp = r#"recovery = "sack", mss = "1000B", ack = "every-packet", rwnd = "10pkt""#;
    let sim = run(&single("100Mbps", "100ms", "1000pkt", tcp, "infinite", "20s", ""));
    let f = flow(&sim, 0);
    let cap = 10.0 * 1000.0 * 8.0 / f.base_rtt;
    let tput = f.throughput.unwrap();
    assert!(tput <= cap * 1.001 && tput > 0.95 * cap, "throughput {tput:.0} bit/s should approach rwnd/RTT = {cap:.0}");
    assert_eq!(f.drops, 0);
}

#[test]
fn cbr_cross_traffic_sends_exactly_its_rate() {
    let toml = r#"
seed = 1
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck_rate = "100Mbps"
rtt = "20ms"
access_rate = "1Gbps"
queue = { kind = "droptail", limit = "100pkt" }
[[cross]]
kind = "cbr"
rate = "40Mbps"
packet_size = "1000B"
start = "1s"
stop = "9s"
"#;
    let sim = run(toml);
    let r = sim.results();
    let b = &r.links[0];
    // 40 Mbit/s for 8 s of 10 s: 32 % of a 100 Mbit/s link, 40000 packets of 1000 B.
    assert_eq!(b.arrivals, 40_000);
    assert!((b.utilization - 0.32).abs() < 1e-6, "utilisation {}", b.utilization);
    assert_eq!(b.drops, 0);
    assert_eq!(b.max_queue, 0, "a constant rate below capacity never queues");
}

#[test]
fn decimated_traces_keep_one_point_per_interval() {
    let tcp = r#"recovery = "sack", mss = "1000B", ack = "every-packet""#;
    let base = single("10Mbps", "50ms", "50pkt", tcp, "infinite", "5s", "");
    let full = run(&base);
    let thin = run(&format!("{base}\n[trace]\ninterval = \"100ms\"\n"));
    let (a, b) = (full.results(), thin.results());
    assert!(b.traces.cwnd.time.len() < a.traces.cwnd.time.len() / 5, "decimation thins the cwnd trace");
    assert!(b.traces.cwnd.time.windows(2).all(|w| w[1] - w[0] >= 0.1 - 1e-9), "at most one point per 100 ms");
    assert!(b.traces.seq.time.len() <= 51, "one flow, 5 s: at most 51 sequence points");
    assert_eq!(a.flows, b.flows, "decimation changes traces, never results");
}

#[test]
fn start_jitter_draws_from_the_seeded_stream_of_each_flow() {
    let toml = |seed: u64| {
        format!(
            r#"
seed = {seed}
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "20ms"
access_rate = "100Mbps"
queue = {{ kind = "droptail", limit = "100pkt" }}
[[flows]]
name = "f"
count = 4
start = "100ms"
start_jitter = "500ms"
size = "10pkt"
"#
        )
    };
    let starts = |seed| -> Vec<f64> { run(&toml(seed)).results().flows.iter().map(|f| f.t0.unwrap()).collect() };
    let a = starts(1);
    assert_eq!(a, starts(1), "same seed, same draws");
    assert_ne!(a, starts(2), "another seed, other draws");
    assert!(a.iter().all(|&t| (0.1..=0.6).contains(&t)), "starts within [start, start + jitter]: {a:?}");
    let mut distinct = a.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "each flow has its own stream");
}

#[test]
fn pacing_removes_the_senders_bursts_from_the_access_queue() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/paced-start-default.toml")).unwrap();
    let text = text.replace("duration = \"50s\"", "duration = \"10s\"");
    let access_max = |text: &str| {
        let sim = run(text);
        let r = sim.results();
        r.links.iter().find(|l| l.link.starts_with("access-s0:s0")).unwrap().max_queue
    };
    let bursty = access_max(&text);
    let paced = access_max(&text.replace("ack = \"every-packet\"", "ack = \"every-packet\", pacing = true"));
    assert!(bursty > 20, "recovery's bursts queue at the sender's 1 Gbps access link: {bursty}");
    assert!(paced <= 2, "a paced sender never builds a queue at its own access link: {paced}");
}
