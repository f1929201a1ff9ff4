//! L4S endpoints in whole simulations (docs/QUEUES.md, DualPI2): `tcp.ecn = "l4s"` data is ECT(1),
//! which DualPI2 classifies into its shallow L queue and every other marking discipline marks as it
//! marks ECT(0).

mod common;
use common::bottleneck;


/// One flow with `tcp` settings, 50 Mbit/s, 20 ms, behind `queue`, for `duration`.
fn one_flow(queue: &str, tcp: &str, duration: &str) -> String {
    common::behind("50Mbps", "20ms", queue, tcp, duration)
}

#[test]
fn dualpi2_keeps_a_prague_flow_in_its_shallow_queue_and_a_classic_one_near_its_target() {
    let classic = common::run(&one_flow("kind = \"dualpi2\"", "congestion_avoidance = \"cubic\", ecn = true", "5s"));
    let c = bottleneck(&classic);
    // With a handshake the SYN asks for AccECN (RFC 9768 §3.1.1) and the SYN-ACK agrees; without
    // one both ends use it from the start.
    for handshake in [false, true] {
        let l4s = common::run(&one_flow("kind = \"dualpi2\"", &format!("congestion_avoidance = \"prague\", ecn = \"l4s\", handshake = {handshake}"), "5s"));
        let l = bottleneck(&l4s);
        for (name, sim, link) in [("prague", &l4s, &l), ("classic", &classic, &c)] {
            assert!(link.marks > 0 && common::flow(sim, 0).ecn_marks > 0, "{name}: no marks");
            assert_eq!(link.drops, 0, "{name}: an ECN flow under DualPI2 lost packets");
        }
        // The L queue's step threshold is 1 ms; the classic flow sits near the 15 ms target.
        let (lp99, cp50) = (l.sojourn_p99, c.sojourn_p50);
        assert!(lp99 < 0.002 && cp50 > 0.005, "handshake {handshake}: Prague's p99 sojourn {lp99} s, classic's median {cp50} s");
        assert!(l.mean_queue * 10.0 < c.mean_queue, "handshake {handshake}: Prague's mean queue {} packets against classic's {}", l.mean_queue, c.mean_queue);
        // Prague's small reductions keep the link busy where Reno's halving on each mark would not.
        assert!(l.utilization > 0.8, "handshake {handshake}: utilization {}", l.utilization);
    }
}

#[test]
fn an_l4s_flow_with_a_classic_avoidance_halves_once_per_window_and_underuses_the_link() {
    // RFC 9331 §4.3 asks an L4S sender for a scalable control; Reno on AccECN reduces as on an
    // ECE, so the L queue's shallow marks hold it far below the link rate.
    let reno = common::run(&one_flow("kind = \"dualpi2\"", "congestion_avoidance = \"reno\", ecn = \"l4s\"", "5s"));
    let prague = common::run(&one_flow("kind = \"dualpi2\"", "congestion_avoidance = \"prague\", ecn = \"l4s\"", "5s"));
    assert!(bottleneck(&reno).utilization + 0.1 < bottleneck(&prague).utilization);
}

#[test]
fn red_and_the_codel_family_mark_ect1_as_they_mark_ect0() {
    for q in ["kind = \"red\", limit = \"300pkt\", min_th = \"10pkt\", max_th = \"40pkt\", ecn = true", "kind = \"codel\", ecn = true", "kind = \"fq-codel\"", "kind = \"pie\", ecn = true"] {
        let sim = common::run(&one_flow(q, "ecn = \"l4s\"", "5s"));
        let l = bottleneck(&sim);
        assert!(l.marks > 0 && common::flow(&sim, 0).ecn_marks > 0, "{q}: an ECT(1) flow was not marked");
    }
}


#[test]
fn every_startup_applies_its_declared_ce_rule_to_accecn_marks() {
    // One L4S flow per startup behind DualPI2 on a 2 ms path (BBRv3 uses ECN below 5 ms).
    let scenario = |startup: &str, ecn: &str, rtt: &str| {
        format!(
            r#"
seed = 1
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "50Mbps"
rtt = "{rtt}"
access_rate = "1Gbps"
queue = {{ kind = "dualpi2" }}
[[flows]]
name = "f"
tcp = {{ congestion_avoidance = "prague", ecn = {ecn} }}
startup = {{ algorithm = "{startup}" }}
"#
        )
    };
    for startup in ["slow-start", "abc", "hystart++", "bbr-startup"] {
        let sim = common::run(&scenario(startup, "\"l4s\"", "2ms"));
        let f = common::flow(&sim, 0);
        assert!(f.ecn_marks > 0, "{startup}: no marks");
        assert_eq!(f.exit_reason, "ecn", "{startup}: startup ended by {:?}", f.exit_reason);
    }
    // On a 20 ms path BBRv3 does not use the marks (not ECN-eligible): its bandwidth plateau ends
    // STARTUP; slow start still ends on the first echo.
    let bbr = common::flow(&common::run(&scenario("bbr-startup", "\"l4s\"", "20ms")), 0);
    assert_eq!(bbr.exit_reason, "bandwidth-plateau");
    assert_eq!(common::flow(&common::run(&scenario("slow-start", "\"l4s\"", "20ms")), 0).exit_reason, "ecn");
}

#[test]
fn an_l4s_flow_without_an_l4s_queue_on_its_path_runs_with_a_warning() {
    let red = "kind = \"red\", limit = \"300pkt\", min_th = \"10pkt\", max_th = \"40pkt\", ecn = true";
    let warnings = |queue: &str, tcp: &str| common::run(&one_flow(queue, tcp, "1s")).results().warnings;
    let w = warnings(red, "congestion_avoidance = \"prague\", ecn = \"l4s\"");
    assert_eq!(w.len(), 1, "{w:?}");
    for words in ["flow \"bulk\"", "tcp.ecn = \"l4s\"", "no L4S-aware queue", "bottleneck:left->right red", "droptail"] {
        assert!(w[0].contains(words), "{words:?} not in {:?}", w[0]);
    }
    assert!(warnings("kind = \"dualpi2\"", "congestion_avoidance = \"prague\", ecn = \"l4s\"").is_empty(), "DualPI2 knows L4S");
    assert!(warnings(red, "ecn = true").is_empty(), "a classic flow is not warned about");
}

#[test]
fn a_classic_flow_is_the_same_whether_tcp_ecn_is_written_as_a_flag_or_a_name() {
    let run = |tcp: &str| {
        let sim = common::run(&one_flow("kind = \"dualpi2\"", tcp, "3s"));
        (format!("{:?}", sim.results().flows), format!("{:?}", sim.results().links))
    };
    assert_eq!(run("congestion_avoidance = \"cubic\", ecn = true"), run("congestion_avoidance = \"cubic\", ecn = \"classic\""));
    assert_eq!(run("congestion_avoidance = \"cubic\", ecn = false"), run("congestion_avoidance = \"cubic\", ecn = \"off\""));
    // The classic echo still reduces the window.
    let sim = common::run(&one_flow("kind = \"dualpi2\"", "congestion_avoidance = \"cubic\", ecn = true", "3s"));
    let f = common::flow(&sim, 0);
    assert!(f.ecn_marks > 0 && f.ecn_reductions > 0, "classic marks and reductions");
}

/// A Prague flow and a classic CUBIC flow started together on 50 Mbit/s, 20 ms behind DualPI2
/// with coupling factor `k`, for 40 s: Prague's throughput over CUBIC's.
fn rate_ratio(k: &str) -> f64 {
    let toml = format!(
        r#"
seed = 1
duration = "40s"
[topology]
kind = "dumbbell"
bottleneck_rate = "50Mbps"
rtts = ["20ms", "20ms"]
access_rate = "1Gbps"
queue = {{ kind = "dualpi2", k = {k} }}
[[flows]]
name = "prague"
pair = 0
tcp = {{ congestion_avoidance = "prague", ecn = "l4s" }}
[[flows]]
name = "cubic"
pair = 1
tcp = {{ congestion_avoidance = "cubic", ecn = true }}
"#
    );
    let sim = common::run(&toml);
    let rate = |i: usize| common::flow(&sim, i).throughput.expect("a 40 s flow has a throughput");
    rate(0) / rate(1)
}

#[test]
fn the_coupling_factor_balances_a_scalable_and_a_classic_flow() {
    // RFC 9332 §2.1: the L queue marks with p_CL = k·p', the Classic queue drops or marks with
    // p_C = p'², so k sets how hard L4S flows are held back against classic ones. A larger k
    // must leave Prague less of the link; k = 2, the RFC's default for Reno-like classic flows,
    // leaves it more than CUBIC here because its packets skip the Classic queue's delay (a shorter
    // RTT), and k = 4 about evens the rates.
    let (k1, k2, k4) = (rate_ratio("1"), rate_ratio("2"), rate_ratio("4"));
    assert!(k1 > k2 && k2 > k4, "Prague/CUBIC rate ratio at k = 1, 2, 4: {k1}, {k2}, {k4}");
    assert!((0.8..1.25).contains(&k4) && (1.0..2.5).contains(&k2), "{k1}, {k2}, {k4}");
}
