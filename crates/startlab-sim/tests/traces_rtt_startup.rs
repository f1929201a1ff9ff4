//! `[trace] rtt` and `[trace] startup`: every RTT sample a sender took, and each startup
//! algorithm's declared decision variables after every ACK in startup — with the values of the ACK
//! that ended startup showing the algorithm's own exit test passing.

mod common;

use startlab_sim::Simulation;

fn scenario(startup: &str, trace: &str) -> String {
    format!(
        r#"
seed = 1
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "200pkt" }}
[[flows]]
name = "a"
size = "infinite"
tcp = {{ congestion_avoidance = "cubic" }}
startup = {{ algorithm = "{startup}" }}
[trace]
{trace}
"#
    )
}

/// The exit row's value of `signal` (`ALGORITHM.NAME`).
fn at_exit(sim: &Simulation, signal: &str) -> f64 {
    let r = sim.results();
    let t = &r.traces.startup;
    let i = t.names.iter().position(|(n, _)| n == signal).unwrap_or_else(|| panic!("no signal {signal}: {:?}", t.names)) as u32;
    let rows: Vec<usize> = (0..t.time.len()).filter(|&k| t.exit[k] && t.signal[k] == i).collect();
    assert_eq!(rows.len(), 1, "one exit row of {signal}");
    t.value[rows[0]]
}

#[test]
fn rtt_samples_are_above_the_base_rtt_and_min_rtt_is_their_running_minimum() {
    let sim = common::run(&scenario("hystart-linux", "rtt = true"));
    let r = sim.results();
    let t = &r.traces.rtt;
    assert!(t.time.len() > 500, "{} samples", t.time.len());
    let mut min = f64::INFINITY;
    let mut last_ack = 0;
    for k in 0..t.time.len() {
        assert!(t.rtt[k] >= 0.040, "sample {} below the 40 ms base RTT", t.rtt[k]);
        min = min.min(t.rtt[k]);
        assert_eq!(t.min_rtt[k], min);
        assert!(t.ack[k] >= last_ack, "cumulative ACKs go forward");
        last_ack = t.ack[k];
        assert!(t.srtt[k].is_finite() && t.rttvar[k].is_finite());
    }
    // The startup trace stays off unless asked for; the other traces too are as without it.
    assert!(r.traces.startup.time.is_empty());
}

#[test]
fn the_exit_rows_show_each_algorithms_own_test_passing() {
    let hl = common::run(&scenario("hystart-linux", "startup = true"));
    assert_eq!(common::flow(&hl, 0).exit_reason, "ack-train");
    assert!(at_exit(&hl, "hystart-linux.ack_train") > at_exit(&hl, "hystart-linux.train_thresh"));

    let search = common::run(&scenario("search", "startup = true"));
    assert_eq!(common::flow(&search, 0).exit_reason, "bandwidth-plateau");
    assert!(at_exit(&search, "search.norm_diff") >= at_exit(&search, "search.thresh"));

    let bbr = common::run(&scenario("bbr-startup", "startup = true"));
    assert_eq!(common::flow(&bbr, 0).exit_reason, "bandwidth-plateau");
    assert!(at_exit(&bbr, "bbr-startup.full_bw_count") >= at_exit(&bbr, "bbr-startup.full_bw_rounds"));
    assert!(at_exit(&bbr, "bbr-startup.max_bw") < 1.25 * at_exit(&bbr, "bbr-startup.full_bw"));
}

#[test]
fn hystart_plus_plus_reports_its_css_state() {
    // A large buffer: HyStart++'s delay test, not a loss, ends the first slow start.
    let toml = scenario("hystart++", "startup = true").replace("200pkt", "2000pkt");
    let sim = common::run(&toml);
    let f = common::flow(&sim, 0);
    let r = sim.results();
    let t = &r.traces.startup;
    let state = t.names.iter().position(|(n, _)| n == "hystart++.state").unwrap() as u32;
    let states: Vec<f64> = (0..t.time.len()).filter(|&k| t.signal[k] == state).map(|k| t.value[k]).collect();
    assert_eq!(states[0], 0.0, "starts in slow start");
    assert!(states.contains(&1.0), "the delay test entered CSS on this path: {}", f.exit_reason);
}

#[test]
fn recording_changes_no_result() {
    let plain = common::run(&scenario("search", ""));
    let traced = common::run(&scenario("search", "rtt = true\nstartup = true"));
    assert_eq!(format!("{:?}", common::flow(&plain, 0)), format!("{:?}", common::flow(&traced, 0)));
    assert_eq!(plain.results().traces.cwnd.time, traced.results().traces.cwnd.time);
}

#[test]
fn hystart_and_paced_start_show_their_deciding_values() {
    let hs = common::run(&scenario("hystart", "startup = true"));
    let reason = common::flow(&hs, 0).exit_reason;
    match reason.as_str() {
        "ack-train" => assert!(at_exit(&hs, "hystart.ack_train") >= at_exit(&hs, "hystart.train_thresh")),
        "delay-increase" => assert!(at_exit(&hs, "hystart.cur_rtt") >= at_exit(&hs, "hystart.delay_thresh")),
        other => panic!("HyStart left startup by {other} on a 200-packet buffer"),
    }
    let past = common::run(&scenario("paced-start", "startup = true"));
    let f = common::flow(&past, 0);
    assert_eq!(f.exit_reason, "rate-found", "{f:?}");
    let r = past.results();
    let t = &r.traces.startup;
    let case = t.names.iter().position(|(n, _)| n == "paced-start.case").unwrap() as u32;
    let decided: Vec<f64> = (0..t.time.len()).filter(|&k| t.signal[k] == case && t.value[k].is_finite()).map(|k| t.value[k]).collect();
    assert!(!decided.is_empty() && decided.iter().all(|c| (1.0..=5.0).contains(c)), "{decided:?}");
    // The trace's last case is the one the flow's results report.
    assert_eq!(Some(decided[decided.len() - 1]), f.startup_details.get("past_case").and_then(|v| v.as_f64()));
    // The bottleneck's gap: 1448 + 40 bytes at 20 Mbit/s.
    let g_b = t.value[(0..t.time.len()).rev().find(|&k| t.names[t.signal[k] as usize].0 == "paced-start.g_b").unwrap()];
    assert!((g_b - 1488.0 * 8.0 / 20e6).abs() < 1e-5, "g_B {g_b}");
}
