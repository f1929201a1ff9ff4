//! Careful Resume (RFC 9959, docs/algorithms/careful-resume.md) through the whole simulator: a
//! 20 Mbit/s drop-tail bottleneck, 100 ms RTT, 1448-byte segments with 40-byte headers (a payload
//! capacity of 20 × 1448/1488 = 19.46 Mbit/s, a BDP of 169 segments), an ACK per segment, IW 3.
//!
//! - a saved rate five times the path's: the jump overloads the path and Safe Retreat follows;
//! - the path's own rate saved: the jump fills half the pipe one RTT after the start;
//! - `[[users]]`: each connection leaves its observation to the user's next one, and a persistent
//!   connection resumes from its own after idle (`tcp.startup_after_idle`).

mod common;
use common::{flow, run, single};
use startlab_sim::Simulation;

/// Payload bytes per second of the bottleneck.
const CAPACITY: f64 = 20e6 / 8.0 * 1448.0 / 1488.0;
const MSS: f64 = 1448.0;

fn path(queue: &str, startup: &str) -> Simulation {
    run(&single("20Mbps", "100ms", queue, r#"mss = "1448B", ack = "every-packet""#, "5MB", "20s", &format!("startup = {{ {startup} }}")))
}

fn num(f: &startlab_sim::FlowResult, key: &str) -> f64 {
    f.startup_details.get(key).and_then(|v| v.as_f64()).unwrap_or_else(|| panic!("{key} is reported: {:?}", f.startup_details))
}

fn text(f: &startlab_sim::FlowResult, key: &str) -> String {
    f.startup_details.get(key).and_then(|v| v.as_str()).unwrap_or_else(|| panic!("{key} is reported: {:?}", f.startup_details)).to_string()
}

/// The largest cwnd (bytes) of trace series `flow` in `(from, to)` (s).
fn max_cwnd(sim: &Simulation, flow: u32, from: f64, to: f64) -> f64 {
    let tr = &sim.results().traces.cwnd;
    (0..tr.time.len()).filter(|&i| tr.flow[i] == flow && tr.time[i] > from && tr.time[i] < to).map(|i| tr.cwnd[i]).fold(0.0, f64::max)
}

/// cwnd (bytes) of trace series `flow` at `t` (s): the last change at or before it.
fn cwnd_at(sim: &Simulation, flow: u32, t: f64) -> f64 {
    let tr = &sim.results().traces.cwnd;
    (0..tr.time.len()).rev().find(|&i| tr.flow[i] == flow && tr.time[i] <= t).map_or(f64::NAN, |i| tr.cwnd[i])
}

#[test]
fn a_saved_rate_above_the_paths_ends_in_safe_retreat_and_the_path_is_observed_anew() {
    // saved 100 Mbit/s at 100 ms: jump_cwnd = 625 000 B (432 segments), paced at 50 Mbit/s into
    // a 20 Mbit/s path with a 100-packet buffer.
    let sim = path("100pkt", r#"algorithm = "careful-resume", saved_rate = "100Mbps", saved_rtt = "100ms""#);
    let f = flow(&sim, 0);
    assert_eq!(text(&f, "cr_recon_exit"), "jump");
    assert_eq!(num(&f, "cr_jump_cwnd"), 625_000.0);
    assert_eq!(text(&f, "cr_path"), "reconnaissance>unvalidated>validating>safe-retreat>normal");
    assert_eq!(text(&f, "cr_retreat_cause"), "loss");
    assert_eq!(text(&f, "cr_normal_cause"), "retreat-done");
    // §3.5: cwnd = PipeSize/2 at entry, never raised until the retreat ends; then ssthresh =
    // PipeSize x Beta, at most what the path holds (BDP + buffer).
    let (t_retreat, t_normal, retreat_cwnd) = (num(&f, "cr_t_retreat"), num(&f, "cr_t_normal"), num(&f, "cr_retreat_cwnd"));
    assert!(t_retreat < 0.35 && t_normal > t_retreat, "retreat {t_retreat} .. {t_normal}");
    assert!(retreat_cwnd < 0.25 * 625_000.0, "the retreat window is far below the jump: {retreat_cwnd}");
    assert!(max_cwnd(&sim, 0, t_retreat, t_normal) <= retreat_cwnd + 1.0, "cwnd rose during Safe Retreat");
    let ss = num(&f, "cr_exit_ssthresh");
    assert_eq!(ss, num(&f, "cr_pipesize") * 0.5);
    assert!(ss < CAPACITY * 0.1 + 100.0 * MSS, "ssthresh {ss} beyond BDP + buffer");
    assert_eq!(num(&f, "cr_jumps"), 1.0);
    // The 100 Mbit/s set is deleted; what is left for the next connection is the path's capacity.
    assert_eq!(text(&f, "cr_retained"), "observed");
    let rate = num(&f, "cr_retained_rate") / 8.0;
    assert!((rate / CAPACITY - 1.0).abs() < 0.01, "observed {rate} B/s vs {CAPACITY}");
    assert!(f.completed && f.drops > 0);
}

#[test]
fn the_paths_own_rate_saved_fills_the_pipe_faster_than_slow_start() {
    let cr = path("200pkt", r#"algorithm = "careful-resume", saved_rate = "20Mbps", saved_rtt = "100ms""#);
    let ss = path("200pkt", r#"algorithm = "slow-start""#);
    let (c, s) = (flow(&cr, 0), flow(&ss, 0));
    assert_eq!(text(&c, "cr_path"), "reconnaissance>unvalidated>validating>normal");
    assert_eq!(text(&c, "cr_normal_cause"), "validated");
    // One RTT after the start (the IW's ACKs): cwnd = 20 Mbit/s x 100 ms / 2 = 125 000 B.
    let t_jump = num(&c, "cr_t_unvalidated");
    assert!((t_jump - 0.1).abs() < 0.005, "{t_jump}");
    assert_eq!(cwnd_at(&cr, 0, t_jump + 0.05), 125_000.0);
    assert!(cwnd_at(&ss, 0, t_jump + 0.05) < 10.0 * MSS, "slow start is still at a few segments");
    // The jump is validated without loss; the rate reaches 90 % of the path in about half the time.
    assert!(num(&c, "cr_t_normal") < 0.31);
    let (tc, ts) = (c.time_to_90.unwrap(), s.time_to_90.unwrap());
    assert!(tc < 0.6 * ts, "time to 90 %: careful resume {tc:.3} s, slow start {ts:.3} s");
    assert!(c.completion_time.unwrap() < s.completion_time.unwrap());
}

fn users(startup: &str, tcp: &str) -> String {
    format!(
        r#"
seed = 3
duration = "30s"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
rtt = "100ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "100pkt" }}
[[users]]
name = "u"
count = 1
connection = "new"
size = {{ dist = "fixed", value = "2MB" }}
think = {{ dist = "fixed", value = "1s" }}
transfers = 3
tcp = {{ ack = "every-packet" {tcp} }}
startup = {{ {startup} }}
"#
    )
}

#[test]
fn a_users_connections_carry_the_saved_rate_and_rtt_from_one_to_the_next() {
    // Nothing saved at first: connection 0 is slow start (identical to a slow-start user's);
    // connection 1 jumps to half of what connection 0 observed, one RTT after it opens.
    let cr = run(&users(r#"algorithm = "careful-resume""#, ""));
    let ss = run(&users(r#"algorithm = "slow-start""#, ""));
    let (a, b) = (cr.results().transfers, ss.results().transfers);
    assert_eq!(a.len(), 3);
    assert_eq!(a[0].completion_time, b[0].completion_time, "the first connection has nothing to resume");
    let half_bdp = CAPACITY * 0.1 / 2.0;
    for k in 1..3 {
        let at = a[k].start + 0.15;
        let jump = cwnd_at(&cr, 0, at);
        assert!((jump / half_bdp - 1.0).abs() < 0.02, "connection {k}: cwnd {jump} at {at:.3} s vs half the observed BDP {half_bdp}");
        assert!(cwnd_at(&ss, 0, b[k].start + 0.15) < 10.0 * MSS);
        assert!(a[k].time_to_90.unwrap() < 0.6 * b[k].time_to_90.unwrap(), "connection {k}: {:?} vs {:?}", a[k].time_to_90, b[k].time_to_90);
    }
    // A scenario's saved set seeds the first connection only: 100 Mbit/s overloads the path (Safe
    // Retreat); the next connection resumes from what that one observed after its retreat (at
    // most the path's 19.5 Mbit/s), not from 100 Mbit/s.
    let seeded = run(&users(r#"algorithm = "careful-resume", saved_rate = "100Mbps", saved_rtt = "100ms""#, ""));
    let t = seeded.results().transfers;
    assert!((cwnd_at(&seeded, 0, t[0].start + 0.15) - 625_000.0).abs() < 1.0, "the scenario's jump");
    assert!(t[0].drops > 0);
    let second = cwnd_at(&seeded, 0, t[1].start + 0.15);
    assert!(second > 20.0 * MSS && second < 1.02 * half_bdp, "second connection: {second} vs {half_bdp}");
}

#[test]
fn a_persistent_connection_resumes_from_its_own_observation_after_idle() {
    // tcp.startup_after_idle: a response after an idle period longer than the RTO runs Careful
    // Resume again, with what the connection observed earlier as its saved set.
    let toml = r#"
seed = 3
duration = "30s"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
rtt = "100ms"
access_rate = "1Gbps"
queue = { kind = "droptail", limit = "100pkt" }
[[flows]]
name = "web"
app = { kind = "request-response", request = "300B", response = { dist = "fixed", value = "2MB" }, think = { dist = "fixed", value = "3s" }, count = 3 }
tcp = { ack = "every-packet", startup_after_idle = true }
startup = { algorithm = "careful-resume" }
"#;
    let sim = run(toml);
    let f = flow(&sim, 0);
    assert_eq!((num(&f, "cr_attempts"), num(&f, "cr_jumps")), (3.0, 2.0), "{:?}", f.startup_details);
    let saved = num(&f, "cr_saved_rate") / 8.0;
    assert!((saved / CAPACITY - 1.0).abs() < 0.01, "resumed from {saved} B/s");
    let r = sim.results().responses;
    assert!(r[1].response_time < r[0].response_time, "{:?}", r);
}

#[test]
fn each_transfer_row_carries_its_connections_report() {
    // The first connection found nothing saved; the second jumped to half of what the first
    // retained. With the scenario's 100 Mbit/s the first retreats instead.
    let detail = |t: &startlab_sim::TransferResult, key: &str| t.startup_details.get(key).cloned().unwrap_or(serde_json::Value::Null);
    let cr = run(&users(r#"algorithm = "careful-resume""#, ""));
    let t = cr.results().transfers;
    assert_eq!(detail(&t[0], "cr_path"), "reconnaissance>normal");
    assert_eq!(detail(&t[0], "cr_recon_exit"), "no-saved-state");
    assert_eq!(detail(&t[0], "cr_jump_cwnd"), serde_json::Value::Null);
    assert_eq!(detail(&t[1], "cr_recon_exit"), "jump");
    assert_eq!(detail(&t[1], "cr_saved_rate"), detail(&t[0], "cr_retained_rate"));
    let (rate, rtt) = (detail(&t[1], "cr_saved_rate").as_f64().unwrap(), detail(&t[1], "cr_saved_rtt").as_f64().unwrap());
    let jump = detail(&t[1], "cr_jump_cwnd").as_f64().unwrap();
    assert!((jump - rate / 8.0 * rtt / 2.0).abs() < 1e-6, "jump {jump} vs saved {rate} bit/s x {rtt} s / 2");
    let seeded = run(&users(r#"algorithm = "careful-resume", saved_rate = "100Mbps", saved_rtt = "100ms""#, ""));
    let t = seeded.results().transfers;
    assert_eq!(detail(&t[0], "cr_retreat_cause"), "loss");
    assert_eq!(detail(&t[1], "cr_retreat_cause"), serde_json::Value::Null);
    // A startup without a report adds nothing.
    assert!(run(&users(r#"algorithm = "slow-start""#, "")).results().transfers.iter().all(|t| t.startup_details.is_empty()));
}
