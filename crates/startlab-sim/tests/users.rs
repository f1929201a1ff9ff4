//! Closed-loop users (`[[users]]`), connection-vector replay (`[[replay]]`) and per-response fast
//! startups (`tcp.startup_after_idle`): conservation across reused flow slots, the closed loop's
//! timing, and the restart's effect.

mod common;
use common::run;

fn users(extra_topology: &str, users: &str, duration: &str) -> String {
    format!(
        r#"
seed = 7
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "60ms"
pairs = 3
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "15pkt" }}
{extra_topology}
[[users]]
{users}
[trace]
seq = false
queue = false
"#
    )
}

#[test]
fn new_connection_users_close_the_loop_and_conserve_packets_across_connections() {
    // A small buffer (losses, timeouts), delayed ACKs and zero think times: the next connection
    // opens while the previous one's last ACKs and retransmissions are still in the network.
    let toml = users(
        "",
        r#"name = "u"
count = 4
size = { dist = "uniform", min = "20KB", max = "200KB" }
think = { dist = "uniform", min = "0s", max = "50ms" }
tcp = { ack = "delayed", initial_window = 4 }"#,
        "20s",
    );
    let sim = run(&toml);
    let r = sim.results();
    assert!(r.flows.is_empty(), "users are not flows");
    assert!(r.transfers.len() > 40, "{} transfers", r.transfers.len());
    assert!(r.transfers.iter().any(|t| t.drops > 0), "the buffer should drop some packets");
    for u in 0..4 {
        let rows: Vec<_> = r.transfers.iter().filter(|t| t.user_index == u).collect();
        for (k, pair) in rows.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            assert_eq!((a.transfer, b.transfer), (k as u64, k as u64 + 1));
            assert!(a.completed, "only the last transfer may be unfinished");
            let gap = b.start - (a.start + a.completion_time.expect("completed"));
            assert!((gap - b.think).abs() < 1e-6, "user {u} transfer {}: gap {gap} vs think {}", b.transfer, b.think);
            assert!((20_000..=200_000).contains(&b.size));
            // A new connection: the sender's own counters start again.
            assert!(b.packets_sent <= b.size.div_ceil(1448) * 3 + 10, "{b:?}");
        }
    }
}

#[test]
fn persistent_users_count_each_transfer_and_respect_stop_and_limits() {
    let toml = users(
        "",
        r#"name = "p"
count = 2
connection = "persistent"
request = "200B"
transfers = 5
stop = "8s"
size = { dist = "fixed", value = "30KB" }
think = { dist = "fixed", value = "500ms" }
direction = "reverse""#,
        "10s",
    );
    let sim = run(&toml);
    let r = sim.results();
    assert_eq!(r.transfers.len(), 10);
    for t in &r.transfers {
        assert!(t.completed && t.connection == "persistent" && t.size == 30_000, "{t:?}");
        assert!(t.start < 8.0);
        assert_eq!(t.su_time.is_some(), t.transfer == 0, "startup metrics on the first transfer only: {t:?}");
        assert!(t.packets_sent >= 30_000u64.div_ceil(1448), "{t:?}");
    }
    // Reverse: the data crosses the bottleneck right to left.
    let fwd = r.links.iter().find(|l| l.link == "bottleneck:left->right").expect("link");
    let rev = r.links.iter().find(|l| l.link == "bottleneck:right->left").expect("link");
    assert!(rev.utilization > 5.0 * fwd.utilization, "{} vs {}", rev.utilization, fwd.utilization);
}

#[test]
fn replayed_vectors_answer_every_epoch_including_requests_of_several_packets() {
    let dir = std::env::temp_dir().join(format!("startlab-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("v.csv");
    std::fs::write(&file, "# two connections\nconnection,start,rtt_class,request,think,response\n3,0.5,1,300,0.2,40000\n3,0.5,1,6000,1.0,2000\n9,0.1,0,100,0,1\n").expect("write");
    let toml = format!(
        r#"
seed = 1
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtts = ["20ms", "100ms"]
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "50pkt" }}
[[replay]]
name = "tm"
file = "{}"
"#,
        file.display()
    );
    let sim = run(&toml);
    let r = sim.results();
    assert_eq!(r.flows.iter().map(|f| f.flow.as_str()).collect::<Vec<_>>(), ["tm-3", "tm-9"]);
    assert!(r.flows.iter().all(|f| f.group.as_deref() == Some("tm")));
    assert!((r.flows[0].base_rtt - 0.1).abs() < 0.01, "rtt_class 1 is the 100 ms pair");
    let rows: Vec<_> = r.responses.iter().filter(|x| x.flow == "tm-3").collect();
    assert_eq!(rows.iter().map(|x| x.size).collect::<Vec<_>>(), [40_000, 2_000]);
    assert!((rows[0].request_time - 0.7).abs() < 1e-9, "opens at 0.5 s, thinks 0.2 s: {}", rows[0].request_time);
    let next = rows[0].request_time + rows[0].response_time + 1.0;
    assert!((rows[1].request_time - next).abs() < 1e-6, "{} vs {next}", rows[1].request_time);
    // The 6000-byte request (five packets) takes longer to arrive than one packet would.
    assert!(rows[1].response_time > 0.1 + 6000.0 * 8.0 / 10e6, "{}", rows[1].response_time);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn vector_files_with_errors_are_refused_with_their_line() {
    let dir = std::env::temp_dir().join(format!("startlab-replay-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cases = [
        ("connection,start,rtt_class,request,think\n", "lacks column \"response\""),
        ("connection,start,rtt_class,request,think,response\n0,0,0,-5,0,100\n", "line 2: request = \"-5\""),
        ("connection,start,rtt_class,request,think,response\n0,0,0,5,0,100\n1,0,0,5,0,100\n0,0,0,5,0,100\n", "line 4: connection 0 appeared before"),
        ("connection,start,rtt_class,request,think,response\n0,0,4,5,0,100\n", "rtt_class 4"),
        ("connection,start,rtt_class,request,think,response\n0,0,0,5,0,100\n0,1,0,5,0,100\n", "line 3: connection 0 has start"),
    ];
    for (k, (text, want)) in cases.iter().enumerate() {
        let file = dir.join(format!("bad{k}.csv"));
        std::fs::write(&file, text).expect("write");
        let toml = format!(
            "seed = 1\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\nbottleneck_rate = \"10Mbps\"\nrtts = [\"20ms\", \"40ms\"]\naccess_rate = \"1Gbps\"\nqueue = {{ kind = \"droptail\", limit = \"50pkt\" }}\n[[replay]]\nname = \"tm\"\nfile = \"{}\"\n",
            file.display()
        );
        let e = startlab_scenario::from_toml(&toml).expect_err("refused").to_string();
        assert!(e.starts_with("replay[0].file") && e.contains(want), "case {k}: {e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn responses(startup: &str, after_idle: bool, min_response: &str) -> Vec<f64> {
    let toml = format!(
        r#"
seed = 1
duration = "30s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "200ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "50pkt" }}
[[flows]]
name = "w"
startup = {startup}
tcp = {{ handshake = true, initial_window = 3, startup_after_idle = {after_idle}, startup_min_response = "{min_response}" }}
app = {{ kind = "request-response", request = "100B", response = {{ dist = "fixed", value = "200KB" }}, think = {{ dist = "fixed", value = "3s" }}, count = 4 }}
"#
    );
    run(&toml).results().responses.iter().map(|r| r.response_time).collect()
}

#[test]
fn fast_startups_act_again_per_response_after_idle_above_the_size_threshold() {
    for startup in [r#"{ algorithm = "jump-start" }"#, r#"{ algorithm = "more-start", rate = 10e6 }"#, r#"{ algorithm = "quick-start", rate = "10Mbps" }"#] {
        let once = responses(startup, false, "0B");
        let again = responses(startup, true, "0B");
        assert_eq!(once.len(), 4);
        assert_eq!(once[0], again[0], "{startup}: the first response is the same");
        for k in 1..4 {
            assert!(again[k] < 0.6 * once[k], "{startup}: response {k} took {} with, {} without", again[k], once[k]);
        }
        // Responses of 200 KB are not above a 300 KB threshold: no restart, and no fast startup
        // at all, not even for the first response (Quick-Start sends no request; Jump- and
        // More-Start size their first flight on the response, so they skip it); a 100 KB
        // threshold restarts.
        let above = responses(startup, true, "300KB");
        assert_eq!(above[1..], once[1..], "{startup}");
        assert!(above[0] > 1.5 * once[0], "{startup}: {} vs {}", above[0], once[0]);
        // (With a threshold Quick-Start's first request waits for the first data segment.)
        // (The first response then ends at another moment, so the RTT estimate differs slightly.)
        let below = responses(startup, true, "100KB");
        for k in 1..4 {
            assert!((below[k] - again[k]).abs() < 0.01 * again[k], "{startup}: {below:?} vs {again:?}");
        }
    }
    let e = startlab_scenario::from_toml(&common::single("10Mbps", "50ms", "50pkt", "startup_after_idle = true", "1MB", "1s", "")).expect_err("refused").to_string();
    assert!(e.starts_with("flows[0].tcp.startup_after_idle") && e.contains("\"slow-start\""), "{e}");
}
