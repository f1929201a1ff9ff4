//! Receivers of the HyStart paper's era (Fig. 5): `ack = "linux" | "freebsd" | "windows"`.

mod common;
use common::{cwnd_at, run};
use startlab_scenario::AckSpec;
use startlab_sim::Dur;

fn scenario(ack: &str) -> String {
    format!(
        r#"
seed = 1
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "100Mbps"
rtt = "100ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "833pkt" }}
[[flows]]
name = "f"
tcp = {{ ack = "{ack}", congestion_avoidance = "cubic", mss = "1448B", header = "52B" }}
[trace]
seq = false
queue = false
"#
    )
}

fn ack_of(name: &str) -> AckSpec {
    startlab_scenario::from_toml(&scenario(name)).expect("accepted").flows[0].tcp.ack
}

#[test]
fn the_presets_are_the_documented_policies() {
    assert_eq!(ack_of("freebsd"), AckSpec::Delayed { timeout: Dur::from_millis(100) });
    assert_eq!(ack_of("windows"), AckSpec::Delayed { timeout: Dur::from_millis(200) });
    assert_eq!(ack_of("linux"), ack_of("quickack"));
    assert_eq!(ack_of("linux"), AckSpec::Quickack { segments: 16, timeout: Dur::from_millis(40) });
    let e = startlab_scenario::from_toml(&scenario("solaris")).unwrap_err().to_string();
    assert!(e.contains("flows[0].tcp.ack: \"solaris\" is not known") && e.contains("\"freebsd\""), "{e}");
}

#[test]
fn a_linux_receiver_speeds_up_the_first_round_trips() {
    // HyStart Fig. 5: "Linux receivers obtain more throughput than Windows and FreeBSD receivers,
    // thanks to the quick ACK of Linux during an initial stage of the connection". Measured: slow
    // start reaches 252 segments at 1 s behind a Linux receiver, 94 behind FreeBSD or Windows.
    let linux = cwnd_at(&run(&scenario("linux")), 1.0);
    for other in ["freebsd", "windows"] {
        let w = cwnd_at(&run(&scenario(other)), 1.0);
        assert!(linux > 2.0 * w, "cwnd at 1 s: linux {linux}, {other} {w}");
    }
}
