//! BBRv3's whole startup (`bbrv3`: STARTUP, DRAIN, hand-over) through the whole simulator: one
//! flow with 1448-byte segments (1500 bytes on the wire), an ACK per segment, an infinite initial
//! ssthresh, on 20 Mbit/s and 40 ms. docs/algorithms/bbrv3.md quotes these runs.

mod common;
use common::{bdp_pkts, flow, run, single};
use startlab_sim::Simulation;

/// The path with a drop-tail `queue` buffer, recovery `recovery` and startup `startup` (an inline
/// table body), for `duration`.
fn path(queue: &str, recovery: &str, startup: &str, duration: &str) -> Simulation {
    run(&single(
        "20Mbps",
        "40ms",
        queue,
        &format!(r#"recovery = "{recovery}", mss = "1448B", header = "52B", ack = "every-packet", initial_ssthresh = "infinite""#),
        "infinite",
        duration,
        &format!("startup = {{ {startup} }}"),
    ))
}

/// The bottleneck's queue (packets) in the trace rows at or before time `t` (s).
fn bottleneck_queue(sim: &Simulation, t: f64) -> Vec<u64> {
    let r = sim.results();
    let q = &r.traces.queue;
    let c = r.link_names.iter().position(|n| n == "bottleneck:left->right").expect("a dumbbell") as u32;
    (0..q.time.len()).filter(|&i| q.link[i] == c && q.time[i] <= t).map(|i| q.packets[i]).collect()
}

/// The bottleneck's queue (packets) at time `t` (s): its last change at or before it.
fn queue_at(sim: &Simulation, t: f64) -> u64 {
    bottleneck_queue(sim, t).last().copied().unwrap_or(0)
}

/// The bottleneck's longest queue (packets) up to time `t` (s).
fn peak_queue_until(sim: &Simulation, t: f64) -> u64 {
    bottleneck_queue(sim, t).into_iter().max().unwrap_or(0)
}

/// When flow 0's window was first reduced (the first congestion event), s.
fn first_reduction(sim: &Simulation) -> f64 {
    let tr = &sim.results().traces.cwnd;
    (0..tr.time.len()).find(|&i| tr.flow[i] == 0 && tr.cause[i] != 0).map_or(f64::NAN, |i| tr.time[i])
}

/// A startup detail of flow 0 as a number.
fn detail(sim: &Simulation, key: &str) -> Option<f64> {
    flow(sim, 0).startup_details.get(key).and_then(|v| v.as_f64())
}

#[test]
fn drain_empties_the_queue_startup_built_before_handing_over() {
    // A 1000-packet buffer (14 BDP): nothing is lost. STARTUP's cwnd gain of 2 queues about one
    // BDP; three flat rounds later DRAIN paces at half the bandwidth until the flight is down to
    // the BDP, which empties the queue, and only then hands over.
    let sim = path("1000pkt", "sack", r#"algorithm = "bbrv3""#, "3s");
    let f = flow(&sim, 0);
    let bdp = bdp_pkts(&f);
    assert_eq!((f.exit_reason.as_str(), f.drops), ("bandwidth-plateau", 0));
    let exit = f.startup_exit_time.expect("handed over");
    let drain = detail(&sim, "bbrv3_drain_start").expect("DRAIN began");
    assert!(drain < exit && exit - drain < 0.1, "DRAIN from {drain:.3} s to {exit:.3} s: about one round of the inflated RTT");
    let built = queue_at(&sim, drain) as f64 / bdp;
    assert!((0.8..=1.05).contains(&built), "queue at DRAIN's start / BDP = {built:.3}, expected (cwnd_gain - 1) BDP");
    assert!(peak_queue_until(&sim, exit) as f64 <= 1.05 * bdp);
    assert!(queue_at(&sim, exit) <= 1, "queue at the hand-over: {} packets", queue_at(&sim, exit));
    assert_eq!(flow(&sim, 0).startup_details.get("bbrv3_drain_end").and_then(|v| v.as_str()), Some("inflight"));
    let handed = f.overshoot.expect("exit window known");
    assert!((0.9..1.05).contains(&handed), "hand-over window / BDP = {handed:.3}");
    // bbr-startup, whose exit stands in for DRAIN, leaves the same path with the queue still full.
    let v1 = path("1000pkt", "sack", r#"algorithm = "bbr-startup""#, "3s");
    let at_exit = queue_at(&v1, flow(&v1, 0).startup_exit_time.expect("left")) as f64 / bdp;
    assert!(at_exit > 0.8, "bbr-startup's queue at its exit / BDP = {at_exit:.3}");
}

#[test]
fn excessive_loss_on_a_shallow_buffer_ends_startup_one_round_into_the_recovery() {
    // A 20-packet buffer (0.3 BDP) under Linux's recovery (RACK-TLP, PRR), which BBRv3 runs on:
    // STARTUP rides the first loss out without a reduction, and a round later its lost ranges and
    // rate end it (reason loss); DRAIN then empties the queue.
    let sim = path("20pkt", "linux", r#"algorithm = "bbrv3""#, "3s");
    let f = flow(&sim, 0);
    assert_eq!((f.exit_reason.as_str(), f.timeouts), ("loss", 0));
    let (loss, drain, exit) = (first_reduction(&sim), detail(&sim, "bbrv3_drain_start").expect("DRAIN began"), f.startup_exit_time.expect("handed over"));
    assert!(loss + f.base_rtt <= drain && drain < exit, "first loss {loss:.3} s, DRAIN {drain:.3} s, hand-over {exit:.3} s");
    assert!(detail(&sim, "bbrv3_inflight_hi").is_some_and(|w| w >= f.bdp.unwrap()), "inflight_hi = max(BDP, inflight_latest)");
    assert!(queue_at(&sim, exit) <= 2, "queue at the hand-over: {}", queue_at(&sim, exit));
    // Without the loss exit STARTUP goes on losing until its bandwidth plateau.
    let plateau = flow(&path("20pkt", "linux", r#"algorithm = "bbrv3", full_loss_cnt = 0"#, "3s"), 0);
    assert_eq!(plateau.exit_reason, "bandwidth-plateau");
    assert!(2 * f.drops < plateau.drops, "{} drops with the loss exit, {} without", f.drops, plateau.drops);
}

/// One AccECN (L4S) flow with Prague avoidance behind DualPI2, 50 Mbit/s and `rtt`.
fn l4s(rtt: &str) -> Simulation {
    run(&format!(
        r#"
seed = 1
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck_rate = "50Mbps"
rtt = "{rtt}"
access_rate = "1Gbps"
queue = {{ kind = "dualpi2" }}
[[flows]]
name = "f"
tcp = {{ congestion_avoidance = "prague", ecn = "l4s" }}
startup = {{ algorithm = "bbrv3" }}
"#
    ))
}

#[test]
fn accecn_marks_end_startup_on_a_short_path_only() {
    // 2 ms (ECN-eligible): two rounds with half the delivered bytes CE-marked end STARTUP.
    let sim = l4s("2ms");
    let f = flow(&sim, 0);
    assert_eq!((f.exit_reason.as_str(), f.drops), ("ecn", 0));
    assert!(detail(&sim, "bbrv3_drain_start").is_some_and(|d| d < f.startup_exit_time.unwrap()));
    assert!(detail(&sim, "bbrv3_inflight_hi").is_some());
    assert!(queue_at(&sim, f.startup_exit_time.unwrap()) <= 1);
    // 20 ms: the marks do not count in STARTUP; the bandwidth plateau ends it.
    assert_eq!(flow(&l4s("20ms"), 0).exit_reason, "bandwidth-plateau");
}

#[test]
fn parameters_out_of_range_are_refused_with_their_key() {
    for (params, key) in [
        ("pacing_gain = 0", "pacing_gain"),
        ("drain_pacing_gain = 1.0", "drain_pacing_gain"),
        ("pacing_margin = 0.6", "pacing_margin"),
        ("full_bw_threshold = 1.0", "full_bw_threshold"),
        ("full_bw_rounds = 0", "full_bw_rounds"),
        ("full_bw_check = \"sometimes\"", "full_bw_check"),
        ("loss_thresh = 0", "loss_thresh"),
        ("ecn_thresh = 1.5", "ecn_thresh"),
        ("min_pipe_cwnd = 0", "min_pipe_cwnd"),
        ("drain_rounds = 3", "drain_rounds"),
    ] {
        let text = single("20Mbps", "40ms", "100pkt", "", "infinite", "1s", &format!(r#"startup = {{ algorithm = "bbrv3", {params} }}"#));
        let e = startlab_scenario::from_toml(&text).expect_err(params);
        assert_eq!(e.path, format!("flows[0].startup.{key}"), "{params} must be refused: {e}");
    }
    let ok = single("20Mbps", "40ms", "100pkt", "", "infinite", "1s", r#"startup = { algorithm = "bbrv3", drain_pacing_gain = 0.3466, drain_max_rounds = 0, full_bw_check = "every-ack", full_loss_cnt = 0 }"#);
    assert!(startlab_scenario::from_toml(&ok).is_ok(), "Linux's DRAIN and full-pipe test are valid");
}
