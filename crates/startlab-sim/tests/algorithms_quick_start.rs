//! Quick-Start (RFC 4782, ALGORITHMS.md §10.1) through the whole simulator: the request rides on
//! the SYN, the dumbbell's routers `left` and `right` admit it on their output links, the receiver
//! echoes it in the SYN-ACK and the sender paces the approved window. The path is Scharf's: a
//! 10 Mb/s drop-tail bottleneck, 200 ms RTT, 1448-byte segments with 52-byte headers (MTU 1500),
//! an ACK per segment, infinite initial ssthresh, IW 3.

mod common;
use common::{cwnd_at, flow, run};
use startlab_sim::{FlowResult, Simulation};

const TAU: f64 = 0.2;
const MSS: f64 = 1448.0;
const TCP: &str = r#"recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet", initial_ssthresh = "infinite""#;

/// A dumbbell with Scharf's path; `flows` and `extra` are appended as written.
fn scenario(queue: &str, flows: &str, extra: &str) -> String {
    format!(
        r#"
seed = 3
duration = "30s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "200ms"
access_rate = "10Gbps"
queue = {{ kind = "droptail", limit = "{queue}" }}
{extra}
{flows}
"#
    )
}

/// One Quick-Start flow of `size` with the startup table body `startup`.
fn qs_flow(size: &str, startup: &str, handshake: bool, more: &str) -> String {
    format!(
        r#"
[[flows]]
name = "qs"
size = "{size}"
tcp = {{ {TCP}, handshake = {handshake} }}
startup = {{ algorithm = "quick-start", {startup} }}
{more}
"#
    )
}

fn detail_num(f: &FlowResult, key: &str) -> f64 {
    f.startup_details.get(key).and_then(|v| v.as_f64()).unwrap_or_else(|| panic!("{key} is reported: {:?}", f.startup_details))
}

fn outcome(f: &FlowResult) -> String {
    f.startup_details.get("qs_outcome").and_then(|v| v.as_str()).expect("qs_outcome is reported").to_string()
}

/// Data bytes flow `flow` sent for the first time in `[from, to)` (s).
fn sent_between(sim: &Simulation, flow: u32, from: f64, to: f64) -> u64 {
    let s = &sim.results().traces.seq;
    (0..s.time.len())
        .filter(|&i| s.flow[i] == flow && s.event[i] == 0 && s.time[i] >= from && s.time[i] < to)
        .map(|i| s.len[i] as u64)
        .sum()
}

/// ssthresh of flow 0 in segments at time `t` (s), from the cwnd trace.
fn ssthresh_at(sim: &Simulation, t: f64) -> f64 {
    let r = sim.results();
    let tr = &r.traces.cwnd;
    let last = (0..tr.time.len()).rev().find(|&i| tr.flow[i] == 0 && tr.time[i] <= t);
    last.map_or(f64::NAN, |i| tr.ssthresh[i]) / MSS
}

#[test]
fn an_idle_path_approves_5_12_mbps_and_the_first_rtt_carries_85_paced_segments() {
    let sim = run(&scenario("1000pkt", &qs_flow("1MB", r#"rate = "10Mbps""#, true, ""), ""));
    let f = flow(&sim, 0);
    assert_eq!(outcome(&f), "approved");
    assert_eq!((detail_num(&f, "qs_requested"), detail_num(&f, "qs_approved")), (5.12e6, 5.12e6), "10 Mb/s rounds down to N = 7");
    let t0 = f.t0.expect("data was sent");
    assert!((t0 - TAU).abs() < 0.01, "data starts after the SYN/SYN-ACK exchange: t0 = {t0:.4}");
    // QS_cwnd = 640 000 B/s · 0.2 s / 1500 B = 85 segments, one every 2.344 ms.
    assert_eq!(sent_between(&sim, 0, t0, t0 + TAU), 85 * 1448, "the Quick-Start window leaves within one RTT");
    let half = sent_between(&sim, 0, t0, t0 + 0.1) as f64 / 1448.0;
    assert!((42.0..=44.0).contains(&half), "paced, not a burst: {half} segments in the first 100 ms");
    assert_eq!((f.drops, f.retransmissions), (0, 0));
    // T_QS(1 MB) = T_Paced + tau = 1.126329 s (ALGORITHMS.md §18.1); measured from the first data
    // segment the signalling RTT is replaced by the last segment's RTT.
    let done = f.completion_time.expect("completes");
    assert!((done / 1.126329 - 1.0).abs() < 0.03, "completion {done:.4} s vs T_QS = 1.1263 s");
    let slow = format!("[[flows]]\nname = \"ss\"\nsize = \"1MB\"\ntcp = {{ {TCP}, handshake = true }}\n");
    let ss = flow(&run(&scenario("1000pkt", &slow, "")), 0);
    assert!(ss.completion_time.unwrap() > done + TAU, "slow start takes rounds longer: {:?} vs {done}", ss.completion_time);
}

#[test]
fn a_request_above_the_path_is_reduced_to_the_largest_code_that_fits() {
    for (startup, requested) in [(r#"rate = "100Mbps""#, 81.92e6), ("", 1.31072e9)] {
        let sim = run(&scenario("1000pkt", &qs_flow("300KB", startup, true, ""), ""));
        let f = flow(&sim, 0);
        assert_eq!(outcome(&f), "reduced", "{startup:?}");
        assert_eq!(detail_num(&f, "qs_requested"), requested);
        assert_eq!(detail_num(&f, "qs_approved"), 5.12e6, "10 Mb/s of capacity: 5.12 Mb/s fits, 10.24 does not");
        assert_eq!(sent_between(&sim, 0, f.t0.unwrap(), f.t0.unwrap() + TAU), 85 * 1448);
    }
}

#[test]
fn a_loaded_bottleneck_denies_the_request_and_the_flow_slow_starts_from_iw() {
    // CBR takes 9.95 of 10 Mb/s: less than 80 kb/s (code 1) is left, so `left` sets N = 0.
    let cross = r#"
[[cross]]
kind = "cbr"
rate = "9.95Mbps"
packet_size = "1500B"
"#;
    let sim = run(&scenario("1000pkt", &qs_flow("20KB", r#"rate = "10Mbps""#, true, r#"start = "2s""#), cross));
    let f = flow(&sim, 0);
    assert_eq!(outcome(&f), "denied");
    assert_eq!(detail_num(&f, "qs_approved"), 0.0);
    let t0 = f.t0.unwrap();
    assert_eq!(sent_between(&sim, 0, t0, t0 + 0.15), 3 * 1448, "standard slow start: IW = 3 segments in the first RTT");
}

#[test]
fn behind_a_long_lived_tcp_flow_quick_start_is_denied_as_in_scharf_fig_11() {
    // [Scharf] Fig. 11: N = 2, the second connection starts 10 s later; "Due to lack of free
    // capacity, the Quick-Start request is denied at the bottleneck, and the second connection
    // therefore falls back to Slow-Start."
    let long = format!(
        r#"
[[flows]]
name = "long"
tcp = {{ {TCP}, rwnd = "300pkt" }}
size = "infinite"
"#
    );
    // The long flow's receiver window (300 segments, BDP 167) keeps the link busy without
    // overflowing the buffer, so the new flow's SYN is not lost in a full queue.
    let sim = run(&scenario("1000pkt", &(long + &qs_flow("100KB", r#"rate = "10Mbps""#, true, r#"start = "10s""#)), ""));
    let f = flow(&sim, 1);
    assert_eq!(outcome(&f), "denied", "{:?}", f.startup_details);
    let t0 = f.t0.unwrap();
    assert!(sent_between(&sim, 1, t0, t0 + 0.2) <= 3 * 1448, "slow start from IW");
}

#[test]
fn a_router_that_ignores_the_option_makes_the_ttl_check_fail() {
    let sim = run(&scenario("1000pkt", &qs_flow("100KB", r#"rate = "10Mbps""#, true, ""), "[quick_start]\nrouters = [\"left\"]"));
    let f = flow(&sim, 0);
    assert_eq!(outcome(&f), "ttl-mismatch");
    assert_eq!(detail_num(&f, "qs_approved"), 0.0);
    let t0 = f.t0.unwrap();
    assert_eq!(sent_between(&sim, 0, t0, t0 + 0.15), 3 * 1448, "fallback: slow start from IW");
    // Both routers taking part (the default, also written out) approve.
    let sim = run(&scenario("1000pkt", &qs_flow("100KB", r#"rate = "10Mbps""#, true, ""), "[quick_start]\nrouters = [\"left\", \"right\"]"));
    assert_eq!(outcome(&flow(&sim, 0)), "approved");
}

#[test]
fn a_share_below_the_request_reduces_it() {
    // share 0.3: 3 Mb/s may be handed out -> 2.56 Mb/s (N = 6), a 42-segment window.
    let sim = run(&scenario("1000pkt", &qs_flow("300KB", r#"rate = "10Mbps""#, true, ""), "[quick_start]\nshare = 0.3\nwindow = \"500ms\""));
    let f = flow(&sim, 0);
    assert_eq!((outcome(&f).as_str(), detail_num(&f, "qs_approved")), ("reduced", 2.56e6));
    assert_eq!(sent_between(&sim, 0, f.t0.unwrap(), f.t0.unwrap() + TAU), 42 * 1448);
}

#[test]
fn qs2_enters_congestion_avoidance_with_ssthresh_at_the_quick_start_window() {
    let sim = run(&scenario("1000pkt", &qs_flow("1MB", r#"rate = "10Mbps", variant = "qs2""#, true, ""), ""));
    let f = flow(&sim, 0);
    assert_eq!(outcome(&f), "approved");
    assert_eq!(f.exit_reason, "quick-start");
    let t0 = f.t0.unwrap();
    let after = t0 + TAU + 0.05;
    assert_eq!(ssthresh_at(&sim, after), 85.0, "ssthresh = QS_cwnd");
    // Avoidance: about one segment more per RTT, not a doubling.
    let grown = cwnd_at(&sim, after + 2.0 * TAU) - cwnd_at(&sim, after);
    assert!((0.5..=3.0).contains(&grown), "cwnd grew {grown} segments in two RTTs");
    let qs1 = flow(&run(&scenario("1000pkt", &qs_flow("1MB", r#"rate = "10Mbps""#, true, ""), "")), 0);
    assert!(f.completion_time.unwrap() > qs1.completion_time.unwrap(), "QS 2 is the more careful variant");
}

#[test]
fn losing_quick_start_data_reverts_to_slow_start_from_iw_with_half_the_flight_as_ssthresh() {
    // The 10th data packet (inside the 85-segment window) is dropped.
    let sim = run(&scenario("1000pkt", &qs_flow("1MB", r#"rate = "10Mbps""#, true, "drops = [10]"), ""));
    let f = flow(&sim, 0);
    assert_eq!(outcome(&f), "lost");
    assert_eq!(detail_num(&f, "qs_approved"), 5.12e6);
    assert_eq!(f.retransmissions, 1);
    // The first ACK of QS data cuts cwnd to FlightSize 84 and adds one; the ACKs of segments 1-9
    // each release two more (slow start): FlightSize = 85 + 8 = 93 when the duplicate ACKs for
    // segment 10 arrive (Limited Transmit segments do not count), so ssthresh = 46.5 segments.
    let tr = &sim.results().traces.cwnd;
    let t0 = f.t0.unwrap();
    let idx = (0..tr.time.len()).find(|&i| tr.time[i] > t0 && tr.ssthresh[i].is_finite()).expect("the loss sets ssthresh");
    assert_eq!(tr.ssthresh[idx] / MSS, 46.5, "ssthresh = max(FlightSize/2, 2 SMSS)");
    // After recovery cwnd restarts from IW = 3 segments and slow-starts to ssthresh.
    assert!(
        (idx..tr.time.len()).any(|i| (tr.cwnd[i] / MSS - 3.0).abs() < 1e-9),
        "cwnd goes back to IW after the repair"
    );
    assert!(f.completion_time.is_some());
}

#[test]
fn without_a_handshake_the_first_data_segment_carries_the_request() {
    let sim = run(&scenario("1000pkt", &qs_flow("1MB", r#"rate = "10Mbps""#, false, ""), ""));
    let f = flow(&sim, 0);
    assert_eq!(outcome(&f), "approved");
    let t0 = f.t0.unwrap();
    assert!(t0 < 0.001, "no handshake: data at once ({t0})");
    assert_eq!(sent_between(&sim, 0, t0, t0 + 0.1), 3 * 1448, "IW first, while the request travels");
    // The echo comes back with the first ACK; then the 85-segment window is paced out.
    let qs = sent_between(&sim, 0, t0 + TAU, t0 + 2.0 * TAU) as f64 / 1448.0;
    assert!((84.0..=90.0).contains(&qs), "{qs} segments in the second RTT");
    assert_eq!(f.drops, 0);
}

#[test]
fn quick_start_costs_a_slow_start_flow_nothing_and_runs_are_deterministic() {
    let text = scenario("1000pkt", &qs_flow("500KB", r#"rate = "10Mbps""#, true, ""), "");
    let a = flow(&run(&text), 0);
    let b = flow(&run(&text), 0);
    assert_eq!(a, b, "same scenario, same seed, same result");
}

#[test]
fn the_example_scenario_approves_the_first_flow_and_denies_the_late_one() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/quick-start.toml")).unwrap();
    let sim = run(&text);
    assert_eq!(outcome(&flow(&sim, 0)), "approved");
    assert_eq!(outcome(&flow(&sim, 1)), "denied");
    assert!(flow(&sim, 0).completed && flow(&sim, 1).completed);
}
