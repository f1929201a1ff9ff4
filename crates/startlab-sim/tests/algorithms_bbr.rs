//! BBR STARTUP (`bbr-startup`) through the whole simulator on a long-fat path: a 100 Mb/s drop-tail
//! bottleneck, 100 ms RTT, one flow with 1448-byte segments (1500 bytes on the wire), an ACK per
//! segment and an infinite initial ssthresh.
//!
//! The buffer holds 864 packets, the flow's BDP in segments as the results count it
//! (`FlowResult.bdp`: 100 Mb/s · 100 ms / 1448 B), the lab's "1-BDP" buffer as in
//! `algorithms_estimators.rs`. On the wire the pipe holds 833 packets of 1500 bytes.

mod common;
use common::{bdp_pkts, flow, run, single};
use startlab_sim::Simulation;

/// The path with a `queue` buffer and startup `startup` (an inline table body), for 3 s.
fn path(queue: &str, startup: &str) -> Simulation {
    run(&single(
        "100Mbps",
        "100ms",
        queue,
        r#"recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet", initial_ssthresh = "infinite""#,
        "infinite",
        "3s",
        &format!("startup = {{ {startup} }}"),
    ))
}

/// The largest cwnd (segments) of flow 0 up to time `t` (s).
fn peak_cwnd_until(sim: &Simulation, t: f64) -> f64 {
    let r = sim.results();
    let tr = &r.traces.cwnd;
    let peak = (0..tr.time.len()).filter(|&i| tr.flow[i] == 0 && tr.time[i] <= t).map(|i| tr.cwnd[i]).fold(0.0, f64::max);
    peak / r.flows[0].mss as f64
}

/// The longest queue (packets) on any link up to time `t` (s).
fn peak_queue_until(sim: &Simulation, t: f64) -> u64 {
    let q = &sim.results().traces.queue;
    (0..q.time.len()).filter(|&i| q.time[i] <= t).map(|i| q.packets[i]).max().unwrap_or(0)
}

#[test]
fn bbr_startup_leaves_on_a_bandwidth_plateau_without_the_losses_of_slow_start() {
    // Slow start doubles per round until the 864-packet buffer overflows: about 3.9 BDP of
    // window at the loss and some 1700 drops.
    let ss = flow(&path("864pkt", r#"algorithm = "slow-start""#), 0);
    assert_eq!(ss.exit_reason, "loss");
    assert!(ss.drops > 1000, "slow start overflows the buffer: {} drops", ss.drops);

    let sim = path("864pkt", r#"algorithm = "bbr-startup""#);
    let f = flow(&sim, 0);
    let bdp = bdp_pkts(&f);
    // The delivery rate reaches the bottleneck's (96.5 Mb/s of payload) at about 1.2 s; three
    // rounds of 200 ms (RTT plus a full queue) later the full-pipe test ends startup.
    assert_eq!(f.exit_reason, "bandwidth-plateau", "the pipe fills before anything is lost");
    assert_eq!(f.drops, 0, "cwnd_gain · BDP (1669 segments) fits in the pipe plus buffer (833 + 864)");
    assert!(f.drops * 100 < ss.drops);
    let exit = f.startup_exit_time.expect("startup ended");
    assert!(exit < 2.0, "three flat rounds after the pipe filled, not later: {exit:.3} s");
    // STARTUP grows cwnd up to cwnd_gain · BDP = 2 BDP and no further: the queue holds one BDP.
    let peak = peak_cwnd_until(&sim, exit) / bdp;
    assert!((1.8..=2.0).contains(&peak), "peak cwnd in STARTUP / BDP = {peak:.3}, expected just below cwnd_gain = 2");
    let queue = peak_queue_until(&sim, exit) as f64 / bdp;
    assert!((0.8..=1.0).contains(&queue), "peak queue / BDP = {queue:.3}, expected (cwnd_gain - 1) BDP");
    // The exit stands in for DRAIN: cwnd and ssthresh become BtlBw · RTprop, the BDP estimate
    // (834 segments: the payload rate times the minimum RTT).
    let overshoot = f.overshoot.expect("exit window known");
    assert!((0.9..1.05).contains(&overshoot), "exit cwnd / BDP = {overshoot:.3}, expected the BDP estimate");
}

#[test]
fn a_v1_cwnd_gain_overflows_a_one_bdp_buffer_and_ends_on_loss() {
    // With BBRv1's cwnd gain (high_gain, 2.885) the window aims at 2.9 BDP, more than the pipe plus
    // a one-BDP buffer: the buffer overflows before three flat rounds pass, and the lab's loss
    // exit (BBRv1 itself ignores loss) ends startup. Still far fewer drops than slow start.
    let ss = flow(&path("864pkt", r#"algorithm = "slow-start""#), 0);
    let f = flow(&path("864pkt", r#"algorithm = "bbr-startup", cwnd_gain = 2.885"#), 0);
    assert_eq!(f.exit_reason, "loss");
    assert!(f.drops > 100, "2.9 BDP does not fit in 2 BDP: {} drops", f.drops);
    assert!(f.drops < ss.drops / 2, "pacing keeps the overflow to half of slow start's: {} vs {}", f.drops, ss.drops);
}

#[test]
fn gains_thresholds_and_rounds_out_of_range_are_refused_with_their_key() {
    for (params, key) in [
        ("pacing_gain = 0", "pacing_gain"),
        ("cwnd_gain = -2.0", "cwnd_gain"),
        ("full_bw_threshold = 1.0", "full_bw_threshold"),
        ("full_bw_rounds = 0", "full_bw_rounds"),
    ] {
        let text = single("100Mbps", "100ms", "864pkt", "", "infinite", "1s", &format!(r#"startup = {{ algorithm = "bbr-startup", {params} }}"#));
        let e = startlab_scenario::from_toml(&text).expect_err(params);
        assert_eq!(e.path, format!("flows[0].startup.{key}"), "{params} must be refused: {e}");
    }
    let ok = single("100Mbps", "100ms", "864pkt", "", "infinite", "1s", r#"startup = { algorithm = "bbr-startup", pacing_gain = 2.77, full_bw_rounds = 1 }"#);
    assert!(startlab_scenario::from_toml(&ok).is_ok(), "BBRv3's pacing gain and a single round are valid");
}
