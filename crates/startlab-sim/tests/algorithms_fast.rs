//! The fast-startup schemes of Scharf (`initial-start`, `jump-start`, `more-start`, ALGORITHMS.md
//! §10.2-10.4) through the whole simulator on his path: a 10 Mb/s drop-tail bottleneck, 200 ms RTT,
//! 1448-byte segments with 52-byte headers (MTU 1500), an ACK per segment, an infinite initial
//! ssthresh and a SYN/SYN-ACK handshake. The buffer is his Fig. 12 one (1000 packets), so the
//! transfers below see no loss and the §18.1 models apply.
//!
//! Times are measured from the first data segment (`t0`, after the handshake); `completion_time`
//! is when the last byte is acknowledged, so it is the model's `T_x` (which ends when the last byte
//! leaves the sender's bottleneck share) plus about one RTT for the last segment and its ACK.

mod common;
use common::{flow, run, single};
use startlab_sim::Simulation;

const TAU: f64 = 0.2;
/// R = (L/MTU)·r in bytes/s (ALGORITHMS.md §18.1).
const R: f64 = 1448.0 / 1500.0 * 10e6 / 8.0;

fn path(size: &str, startup: &str) -> Simulation {
    run(&single(
        "10Mbps",
        "200ms",
        "1000pkt",
        r#"recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet", initial_ssthresh = "infinite", handshake = true"#,
        size,
        "10s",
        &format!("startup = {{ {startup} }}"),
    ))
}

/// Data bytes flow 0 sent for the first time in `[from, to)` (s).
fn sent_between(sim: &Simulation, from: f64, to: f64) -> u64 {
    let s = &sim.results().traces.seq;
    (0..s.time.len())
        .filter(|&i| s.flow[i] == 0 && s.event[i] == 0 && s.time[i] >= from && s.time[i] < to)
        .map(|i| s.len[i] as u64)
        .sum()
}

/// Time (s) of flow 0's last first-time data transmission.
fn last_sent(sim: &Simulation) -> f64 {
    let s = &sim.results().traces.seq;
    (0..s.time.len()).filter(|&i| s.flow[i] == 0 && s.event[i] == 0).map(|i| s.time[i]).fold(0.0, f64::max)
}

#[test]
fn jump_start_paces_u_bytes_over_the_first_rtt() {
    let sim = path("1MB", r#"algorithm = "jump-start""#);
    let f = flow(&sim, 0);
    let t0 = f.t0.expect("data was sent");
    assert!((t0 - TAU).abs() < 0.01, "data starts after the handshake RTT: t0 = {t0:.4}");
    // u = 64 KiB in whole segments: 45 · 1448 = 65 160 bytes, one every 200 ms / 45 = 4.44 ms.
    let first_rtt = sent_between(&sim, t0, t0 + TAU);
    assert_eq!(first_rtt, 45 * 1448, "the Jump-Start flight leaves within one RTT");
    // Paced, not a burst: after half an RTT about half of it has left.
    let half = sent_between(&sim, t0, t0 + TAU / 2.0) as f64 / first_rtt as f64;
    assert!((0.45..=0.56).contains(&half), "share sent in the first half RTT: {half:.3}");
    assert_eq!((f.drops, f.retransmissions), (0, 0));
    let done = f.completion_time.expect("completes");
    // T_JS(1 MB) = 1.065794 s (§18.1) to the last byte's departure; plus about one RTT to its ACK.
    assert!((done - TAU - 1.065794).abs() < 0.1, "completion {done:.4} s vs T_JS + tau = {:.4}", 1.065794 + TAU);
}

#[test]
fn jump_start_sends_a_short_response_in_one_paced_rtt() {
    // s <= u: "the response time for transfers up to s = u = 64 KiB would be T_JS = tau".
    let sim = path("50000B", r#"algorithm = "jump-start""#);
    let f = flow(&sim, 0);
    let t0 = f.t0.unwrap();
    let paced_for = last_sent(&sim) - t0;
    // 35 segments (the last of 776 bytes) at 50 000 B / 0.2 s: the last leaves 34 gaps of 29 ms after the first.
    assert!((paced_for - 34.0 * 1448.0 / 250_000.0).abs() < 0.002, "paced for {paced_for:.4} s");
    let done = f.completion_time.unwrap();
    assert!((done - 2.0 * TAU).abs() < 0.02, "T_JS = tau of pacing plus the last segment's RTT: {done:.4} s");
    let ss = flow(&path("50000B", r#"algorithm = "slow-start""#), 0).completion_time.unwrap();
    assert!(ss > done + TAU, "slow start from IW 3 needs more rounds: {ss:.4} s vs {done:.4} s");
}

#[test]
fn more_start_at_the_path_rate_matches_its_model() {
    // q = r = 10 Mb/s: R0 = R, one 200 ms flight of 166 segments, then the pipe is full.
    let sim = path("1MB", r#"algorithm = "more-start", rate = 10000000"#);
    let f = flow(&sim, 0);
    let t0 = f.t0.unwrap();
    let first = sent_between(&sim, t0, t0 + TAU) as f64;
    assert!((first / (R * TAU) - 1.0).abs() < 0.02, "first RTT: {first} B vs R·tau = {:.0} B", R * TAU);
    assert_eq!(f.drops, 0);
    let done = f.completion_time.unwrap();
    // T_MS(1 MB) at R0 = R is 0.828729 s (§18.1).
    assert!((done - TAU - 0.828729).abs() < 0.05, "completion {done:.4} s vs T_MS + tau = {:.4}", 0.828729 + TAU);
}

#[test]
fn initial_start_with_iw_83_finishes_100_kb_in_about_one_rtt() {
    let sim = path("100000B", r#"algorithm = "initial-start", initial_window = "83pkt""#);
    let f = flow(&sim, 0);
    assert_eq!(f.drops, 0);
    // 70 segments fit the IW: one burst, T_IS = s/R = 0.082873 s (§18.1), plus the RTT to the ACK.
    let done = f.completion_time.unwrap();
    assert!((done - TAU - 0.082873).abs() < 0.01, "completion {done:.4} s vs T_IS + tau = {:.4}", 0.082873 + TAU);
    assert_eq!(sent_between(&sim, 0.0, f.t0.unwrap() + 0.001), 100_000, "unpaced: everything leaves at once");
}

#[test]
fn jump_start_after_losing_its_first_flight_sets_the_window_to_half_of_what_was_delivered() {
    // Segments 10, 20 and 30 of the 45-segment first flight are discarded on Scharf's path. SACK
    // recovery repairs them (R = 3); when it ends cwnd = ssthresh = max((D − R)/2, 2) = 21
    // segments (ALGORITHMS.md §10.2), where the recovery alone would leave FlightSize/2.
    let toml = single(
        "10Mbps",
        "200ms",
        "1000pkt",
        r#"recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet", initial_ssthresh = "infinite", handshake = true"#,
        "1MB",
        "10s",
        "startup = { algorithm = \"jump-start\" }\ndrops = [10, 20, 30]",
    );
    let sim = run(&toml);
    let f = flow(&sim, 0);
    assert_eq!((f.drops, f.retransmissions, f.timeouts), (3, 3, 0), "{f:?}");
    assert_eq!(f.exit_reason, "loss");
    let want = 21.0 * 1448.0;
    let res = sim.results();
    let tr = &res.traces.cwnd;
    let exit = f.startup_exit_time.unwrap();
    // The trace's point at the loss shows the recovery's ssthresh (FlightSize/2); the next one,
    // at the end of recovery, the rule's window.
    let pts: Vec<(f64, f64, f64)> = (0..tr.time.len()).filter(|&i| tr.flow[i] == 0).map(|i| (tr.time[i], tr.cwnd[i], tr.ssthresh[i])).collect();
    let at_loss = pts.iter().rposition(|p| p.0 <= exit).unwrap();
    let recovery_ssthresh = pts[at_loss].2;
    assert!(recovery_ssthresh > want, "recovery starts from FlightSize/2 = {recovery_ssthresh}");
    assert_eq!((pts[at_loss + 1].1, pts[at_loss + 1].2), (want, want), "cwnd and ssthresh when recovery ends");
}
