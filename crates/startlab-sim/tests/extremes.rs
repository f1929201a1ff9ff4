//! Extreme but valid scenarios end within their limits: tiny segments (1-64 B), Pbit/s links, zero
//! delays, million-packet buffers, huge initial windows, every kind of startup. Each run gets an
//! event limit; the test asserts it returns (finished, or stopped by the limit) well within a
//! generous wall-clock budget, so that no single event does work that the limit never sees.

use proptest::prelude::*;
use startlab_sim::Simulation;
use std::sync::mpsc;
use std::time::Duration;

const EVENT_LIMIT: u64 = 300_000;
const WALL_S: u64 = 60;

#[allow(clippy::too_many_arguments)]
fn scenario(mss: u64, rate: &str, rtt: &str, buffer: &str, iw: u64, startup: &str, recovery: &str, ack: &str, pacing: bool, duration: &str) -> String {
    let handshake = matches!(startup, "jump-start" | "more-start" | "quick-start");
    // Initial-Start takes its window as its own parameter; Smooth-start needs an ssthresh estimate.
    let (iw, params) = match startup {
        "initial-start" => (String::new(), format!(", initial_window = \"{iw}pkt\"")),
        "smooth-start" => (format!("initial_window = {iw}, "), ", ssthresh_estimator = \"packet-pair\"".to_string()),
        _ => (format!("initial_window = {iw}, "), String::new()),
    };
    format!(
        r#"
seed = 3
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate}"
rtt = "{rtt}"
access_rate = "1000Tbps"
queue = {{ kind = "droptail", limit = "{buffer}" }}
[[flows]]
name = "f"
count = 2
tcp = {{ mss = "{mss}B", header = "{}B", {iw}recovery = "{recovery}", ack = "{ack}", pacing = {pacing}, handshake = {handshake} }}
startup = {{ algorithm = "{startup}"{params} }}
[trace]
cwnd = true
seq = false
queue = false
"#,
        if mss < 8 { 0 } else { 40 }
    )
}

fn rates() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["1Mbps", "1Gbps", "100Gbps", "1000Tbps"])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn extreme_runs_end_within_their_event_limit(
        mss in 1u64..=64,
        rate in rates(),
        rtt in prop::sample::select(vec!["0ns", "1us", "10ms", "300ms"]),
        buffer in prop::sample::select(vec!["0pkt", "1pkt", "1000pkt", "1000000pkt", "1GB"]),
        iw in prop::sample::select(vec![1u64, 10, 1000, 100_000]),
        startup in prop::sample::select(vec![
            "slow-start", "paced-start", "quick-start", "jump-start", "more-start", "initial-start",
            "hystart", "hystart++", "bbr-startup", "bbrv3", "search", "smooth-start", "vegas",
        ]),
        recovery in prop::sample::select(vec!["sack", "newreno", "tahoe"]),
        ack in prop::sample::select(vec!["every-packet", "delayed"]),
        pacing in any::<bool>(),
        duration in prop::sample::select(vec!["1s", "60s"]),
    ) {
        let toml = scenario(mss, rate, rtt, buffer, iw, startup, recovery, ack, pacing, duration);
        let scenario = match startlab_scenario::from_toml(&toml) {
            Ok(s) => s,
            Err(e) => return Err(TestCaseError::fail(format!("refused: {e}\n{toml}"))),
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut sim = Simulation::new(scenario).expect("scenario builds");
            sim.set_event_limit(Some(EVENT_LIMIT));
            sim.run();
            let _ = tx.send((sim.event_limit_reached(), sim.stats().events));
        });
        // 300 000 events take well under a second here (6 s with the scoreboard that walked the
        // window on every ACK); a minute means one event never ended.
        match rx.recv_timeout(Duration::from_secs(WALL_S)) {
            Ok((limited, events)) => prop_assert!(events <= EVENT_LIMIT && (limited || events < EVENT_LIMIT), "{events} events"),
            Err(_) => prop_assert!(false, "the run did not return within 60 s of wall time:\n{}", toml),
        }
    }
}
