//! qlog output (`capture_qlog`, docs/QLOG.md) read back with the `qlog` crate's types (the
//! schema quiche writes and qvis reads): every record of a QUIC flow's file is a valid qlog
//! event, a TCP flow's `startlab:` recovery events are the same events in another namespace, and
//! the events agree with the simulator's own counts.

mod common;

use serde_json::Value;
use startlab_sim::Simulation;
use std::path::{Path, PathBuf};

fn scenario(flow: &str) -> String {
    format!(
        r#"
name = "qlog-check"
seed = 2
duration = "4s"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "40pkt" }}
[[flows]]
name = "f"
size = "2MB"
{flow}
"#
    )
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("startlab-qlog-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run_logged(toml: &str, dir: &Path) -> Simulation {
    let scenario = startlab_scenario::from_toml(toml).expect("scenario");
    let mut sim = Simulation::new(scenario).expect("builds");
    sim.capture_qlog(dir).expect("qlog files open");
    sim.run();
    sim.check_invariants().expect("invariants");
    sim
}

/// The JSON-SEQ records of a file: each starts with the record separator.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("readable");
    text.split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .map(|r| {
            assert!(r.ends_with('\n'), "a record ends with a line feed");
            serde_json::from_str(r).expect("each record is one JSON text")
        })
        .collect()
}

fn name(e: &Value) -> &str {
    e["name"].as_str().expect("named")
}

#[test]
fn a_quic_flows_qlog_is_valid_for_the_qlog_crate_and_agrees_with_the_run() {
    let dir = tmpdir("quic");
    let sim = run_logged(&scenario("quic = {}"), &dir);
    let f = common::flow(&sim, 0);
    assert!(f.retransmissions > 0, "the 40-packet buffer must overflow for this test to mean something");
    let files = sim.qlog_files();
    assert_eq!(files.len(), 1);
    let recs = records(&files[0].0);
    let header: qlog::QlogSeq = serde_json::from_value(recs[0].clone()).expect("the header is a QlogSeq");
    assert_eq!(header.file_schema, qlog::QLOGFILESEQ_URI);
    let events = &recs[1..];
    assert_eq!(events.len() as u64, files[0].1);
    let mut last = 0.0;
    for e in events {
        let t = e["time"].as_f64().expect("a time");
        assert!(t >= last, "events in time order");
        last = t;
        if name(e).starts_with("quic:") {
            let _: qlog::events::Event = serde_json::from_value(e.clone()).unwrap_or_else(|err| panic!("{e}: {err}"));
        }
    }
    let count = |n: &str| events.iter().filter(|e| name(e) == n).count() as u64;
    let stream_sent = events
        .iter()
        .filter(|e| name(e) == "quic:packet_sent" && e["data"]["frames"].as_array().unwrap().iter().any(|fr| fr["frame_type"] == "stream"))
        .count() as u64;
    assert_eq!(stream_sent, f.packets_sent, "every stream packet the server sent");
    assert!(count("quic:packet_received") > 0);
    assert!(count("quic:packet_lost") > 0, "the overflow's losses are declared");
    let exits: Vec<&Value> = events.iter().filter(|e| name(e) == "startlab:startup_exited").collect();
    assert_eq!(exits.len(), 1);
    assert_eq!(exits[0]["data"]["reason"], f.exit_reason.as_str());
    let states: Vec<&str> = events.iter().filter(|e| name(e) == "quic:congestion_state_updated").map(|e| e["data"]["new"].as_str().unwrap()).collect();
    assert_eq!(states[0], "slow_start");
    assert!(states.contains(&"recovery") && states.contains(&"congestion_avoidance"), "{states:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tcp_flows_recovery_events_are_the_quic_events_in_the_startlab_namespace() {
    let dir = tmpdir("tcp");
    let sim = run_logged(&scenario("tcp = { handshake = true, recovery = \"sack\" }"), &dir);
    let f = common::flow(&sim, 0);
    let recs = records(&sim.qlog_files()[0].0);
    let events = &recs[1..];
    for e in events.iter().filter(|e| matches!(name(e), "startlab:recovery_metrics_updated" | "startlab:congestion_state_updated")) {
        let mut as_quic = e.clone();
        as_quic["name"] = Value::from(name(e).replacen("startlab:", "quic:", 1));
        let _: qlog::events::Event = serde_json::from_value(as_quic).unwrap_or_else(|err| panic!("{e}: {err}"));
    }
    let sent = events.iter().filter(|e| name(e) == "startlab:segment_sent").count() as u64;
    let again = events.iter().filter(|e| name(e) == "startlab:segment_sent" && e["data"]["retransmission"] == true).count() as u64;
    assert_eq!((sent, again), (f.packets_sent, f.retransmissions));
    let acked = events.iter().filter(|e| name(e) == "startlab:ack_advanced").map(|e| e["data"]["acked"].as_u64().unwrap()).max();
    assert_eq!(acked, Some(2_000_000));
    let exit = events.iter().find(|e| name(e) == "startlab:startup_exited").expect("an exit");
    assert_eq!(exit["data"]["reason"], f.exit_reason.as_str());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn qlog_files_are_the_same_run_to_run_and_leave_results_unchanged() {
    let toml = scenario("quic = {}");
    let (a, b) = (tmpdir("det-a"), tmpdir("det-b"));
    let sa = run_logged(&toml, &a);
    let sb = run_logged(&toml, &b);
    assert_eq!(std::fs::read(&sa.qlog_files()[0].0).unwrap(), std::fs::read(&sb.qlog_files()[0].0).unwrap());
    let plain = common::run(&toml);
    assert_eq!(format!("{:?}", common::flow(&plain, 0)), format!("{:?}", common::flow(&sa, 0)));
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}
