//! The `startlab-quinn` binary on loopback: a 5 MB response with startlab's slow start + Reno
//! inside quinn, and with quinn's own CUBIC; both ends report the whole response.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SIZE: u64 = 5_000_000;

fn scenario(dir: &Path) -> PathBuf {
    let path = dir.join("scenario.toml");
    let text = format!(
        r#"
seed = 1
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "67pkt" }}
[[flows]]
name = "flow"
size = "{SIZE}B"
quic = {{}}
tcp = {{ congestion_avoidance = "reno" }}
startup = {{ algorithm = "slow-start" }}
"#
    );
    std::fs::write(&path, text).expect("write the scenario");
    path
}

/// Runs a server with `cc` and a client against it; their reports.
fn transfer(cc: &str, tag: &str) -> (Value, Value) {
    let dir = std::env::temp_dir().join(format!("startlab-quinn-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let scenario = scenario(&dir);
    let cert = dir.join("cert.der");
    let bin = env!("CARGO_BIN_EXE_startlab-quinn");
    let mut server = Command::new(bin)
        .args(["server", "--bind", "127.0.0.1:0", "--cc", cc, "--accept-timeout", "20"])
        .arg("--cert-out")
        .arg(&cert)
        .arg("--scenario")
        .arg(&scenario)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut out = BufReader::new(server.stdout.take().expect("stdout"));
    let mut ready = String::new();
    out.read_line(&mut ready).expect("read ready");
    let addr = ready.strip_prefix("ready ").unwrap_or_else(|| panic!("the server did not start: {ready:?}")).trim().to_string();
    let client = Command::new(bin).args(["client", "--server", &addr]).arg("--cert").arg(&cert).arg("--scenario").arg(&scenario).output().expect("run the client");
    assert!(client.status.success(), "client: {}", String::from_utf8_lossy(&client.stderr));
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("server report");
    let status = server.wait().expect("server exit");
    let mut err = String::new();
    server.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    assert!(status.success(), "server: {err}");
    std::fs::remove_dir_all(&dir).ok();
    let parse = |s: &str| serde_json::from_str::<Value>(s.trim()).unwrap_or_else(|e| panic!("{e}: {s}"));
    (parse(&rest), parse(&String::from_utf8_lossy(&client.stdout)))
}

fn check_complete(server: &Value, client: &Value) {
    assert_eq!(server["completed"], Value::Bool(true), "{server}");
    assert_eq!(client["completed"], Value::Bool(true), "{client}");
    assert_eq!(server["bytes"].as_u64(), Some(SIZE));
    assert_eq!(client["bytes"].as_u64(), Some(SIZE));
    assert_eq!(server["max_datagram_size"].as_u64(), Some(1472));
    let first = client["first_byte_s"].as_f64().expect("first byte");
    let done = client["completion_s"].as_f64().expect("completion");
    assert!(first > 0.0 && first <= done, "{client}");
}

#[test]
fn startlab_slow_start_and_reno_inside_quinn_carry_5_mb() {
    let (server, client) = transfer("startlab", "startlab");
    check_complete(&server, &client);
    assert_eq!(server["cc"], "startlab");
    let ctl = &server["controller"];
    assert_eq!((ctl["startup"].as_str(), ctl["avoidance"].as_str()), (Some("slow-start"), Some("reno")));
    // The trace starts at RFC 9002's initial window for 1472-byte datagrams and slow start grows it.
    let cwnd: Vec<u64> = server["cwnd"].as_array().expect("trace").iter().map(|s| s["cwnd"].as_u64().expect("cwnd")).collect();
    assert_eq!(cwnd.first(), Some(&14_720), "{cwnd:?}");
    assert_eq!(ctl["initial_window"].as_u64(), Some(14_720));
    assert!(cwnd.iter().any(|&c| c >= 4 * 14_720), "slow start never doubled twice: {cwnd:?}");
    assert!(ctl["acks"].as_u64().expect("acks") > 10, "{ctl}");
    // Every reduction the controller made is a congestion event quinn counted.
    assert!(ctl["congestion_events"].as_u64() <= server["congestion_events"].as_u64(), "{server}");
    if let Some(exit) = server["startup_exit"].as_object() {
        assert!(exit["cwnd"].as_f64().expect("exit cwnd") >= 14_720.0, "{server}");
    }
}

#[test]
fn quinn_cubic_carries_5_mb() {
    let (server, client) = transfer("cubic", "cubic");
    check_complete(&server, &client);
    assert_eq!(server["cc"], "cubic");
    assert!(server["controller"].is_null());
    let cwnd = server["cwnd"].as_array().expect("trace");
    assert_eq!(cwnd.first().and_then(|s| s["cwnd"].as_u64()), Some(14_720), "quinn's CUBIC starts at the scenario's initial window");
}

#[test]
fn the_server_refuses_what_it_cannot_run() {
    let bin = env!("CARGO_BIN_EXE_startlab-quinn");
    let dir = std::env::temp_dir().join(format!("startlab-quinn-{}-refuse", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let run = |args: &[&str]| {
        let out = Command::new(bin).args(args).arg("--cert-out").arg(dir.join("cert.der")).output().expect("run");
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // startlab's algorithm needs the scenario's flow.
    let (code, err) = run(&["server", "--bind", "127.0.0.1:0", "--cc", "startlab", "--size", "1000"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--cc startlab needs --scenario FILE"), "{err}");
    // A TCP flow is not a QUIC flow.
    let tcp = dir.join("tcp.toml");
    let text = std::fs::read_to_string(scenario(&dir)).expect("scenario").replace("quic = {}\n", "");
    std::fs::write(&tcp, text).expect("write");
    let (code, err) = run(&["server", "--bind", "127.0.0.1:0", "--scenario", tcp.to_str().expect("path")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("flows[0].quic: startlab-quinn runs QUIC flows"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
