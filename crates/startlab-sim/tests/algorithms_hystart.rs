//! HyStart (paper), HyStart as in Linux, and HyStart++ on the paper's comparison setup ([HyStart]
//! §IV-A, Fig. 2; ALGORITHMS.md §8.7), scaled for CI: 100 Mb/s, RTT 106 ms, a drop-tail buffer of
//! one BDP (883 packets of 1500 B on the wire: 1448 B payload + 52 B header), one flow with
//! infinite initial ssthresh and an ACK per segment, four seconds.

mod common;
use common::{bdp_pkts, flow, run, single};
use startlab_sim::FlowResult;

const TCP: &str = r#"recovery = "sack", mss = "1448B", header = "52B", initial_ssthresh = "infinite", ack = "every-packet""#;

/// One flow on the 100 Mb/s, 106 ms path with a `queue`-packet buffer, for `duration`, with
/// startup `startup` (an inline table body); returns the simulation for traces.
fn path(startup: &str, queue: &str, duration: &str) -> startlab_sim::Simulation {
    run(&single("100Mbps", "106ms", queue, TCP, "infinite", duration, &format!("startup = {{ {startup} }}")))
}

/// The comparison setup: a one-BDP buffer, four seconds.
fn comparison(startup: &str) -> FlowResult {
    flow(&path(startup, "883pkt", "4s"), 0)
}


/// Checks an early exit near the BDP without a loss in startup.
fn assert_exits_near_the_bdp(name: &str, f: &FlowResult, reasons: &[&str]) {
    assert!(reasons.contains(&f.exit_reason.as_str()), "{name}: exit reason {} not in {reasons:?}", f.exit_reason);
    let overshoot = f.overshoot.expect("startup ended");
    assert!((0.8..=2.0).contains(&overshoot), "{name}: exit cwnd {:?} pkts is {overshoot:.2} BDP; expected within a factor 2", f.exit_cwnd_pkts);
    assert_eq!(f.su_loss, Some(0.0), "{name}: no loss during startup");
    assert_eq!((f.drops, f.timeouts), (0, 0), "{name}: no drop and no timeout in the whole run");
}

#[test]
fn slow_start_loses_about_a_bdp_of_packets_in_one_round() {
    // Measured: exit by loss at cwnd 3535 (3.9 BDP), 1769 drops (1.9 BDP of 916); 884 of them in
    // the first base RTT after the first drop and 883 in the second: with a full buffer a round
    // lasts two base RTTs.
    let sim = path(r#"algorithm = "slow-start""#, "883pkt", "4s");
    let f = flow(&sim, 0);
    assert_eq!(f.exit_reason, "loss");
    let bdp = bdp_pkts(&f);
    assert!((0.5 * bdp..=2.5 * bdp).contains(&(f.drops as f64)), "{} drops; expected on the order of a BDP ({bdp:.0})", f.drops);
    let r = sim.results();
    let t = &r.traces.seq;
    let drops: Vec<f64> = (0..t.time.len()).filter(|&i| t.event[i] == startlab_sim::trace::SEQ_DROPPED).map(|i| t.time[i]).collect();
    let within = drops.iter().filter(|&&x| x - drops[0] < 2.2 * f.base_rtt).count();
    assert!(within as f64 >= 0.95 * drops.len() as f64, "{within} of {} drops within one round (2 base RTTs) of the first", drops.len());
}

#[test]
fn paper_hystart_leaves_slow_start_near_the_bdp_on_the_ack_train() {
    // Measured: ack-train at cwnd 1459 (1.59 BDP) at 1.04 s, no drop.
    let f = comparison(r#"algorithm = "hystart""#);
    assert_exits_near_the_bdp("hystart", &f, &["ack-train"]);
}

#[test]
fn linux_hystart_leaves_slow_start_near_the_bdp() {
    // Measured: ack-train at cwnd 1211 (1.32 BDP) at 1.01 s, no drop. With the reset of Linux
    // 5.16–6.13 (`round_reset = "gated"`) rounds start where cwnd first reached 16, partway into a
    // flight, so the first samples of a round already see the queue the flight builds: a delay
    // increase at cwnd 1032 (1.13 BDP) at 0.99 s (docs/IMPAIRMENTS.md's table).
    let f = comparison(r#"algorithm = "hystart-linux""#);
    assert_exits_near_the_bdp("hystart-linux", &f, &["ack-train", "delay-increase"]);
    // With only the ACK-train detector it leaves at the same ACK (measured: cwnd 1211).
    let f = comparison(r#"algorithm = "hystart-linux", detect = "ack-train""#);
    assert_exits_near_the_bdp("hystart-linux (ack-train only)", &f, &["ack-train"]);
}

#[test]
fn hystartpp_sees_the_delay_rise_but_css_overruns_a_one_bdp_buffer() {
    // CSS's ×1.25 a round meets the full buffer before its fifth round. Measured: exit by loss at
    // cwnd 3194 (3.5 BDP) with 1426 drops, against slow start's 1769.
    let hspp = comparison(r#"algorithm = "hystart++""#);
    let ss = comparison(r#"algorithm = "slow-start""#);
    assert!(hspp.drops < ss.drops, "HyStart++ drops {} < slow start {}", hspp.drops, ss.drops);
    assert!(hspp.exit_cwnd_pkts < ss.exit_cwnd_pkts, "HyStart++ exits below slow start's window");
}

#[test]
fn hystartpp_finishes_its_css_rounds_without_a_loss_when_the_buffer_is_deep() {
    // Ten BDPs of buffer: CSS runs its five rounds and hands over with ssthresh = cwnd.
    // Measured: css-done at cwnd 9389 (10.2 BDP), no drop.
    let f = flow(&path(r#"algorithm = "hystart++""#, "10000pkt", "6s"), 0);
    assert_eq!(f.exit_reason, "css-done");
    assert_eq!(f.drops, 0, "CSS grows by a quarter per round: no overflow of 10 BDP");
    let overshoot = f.overshoot.unwrap();
    assert!((1.0..=15.0).contains(&overshoot), "exit at {overshoot:.2} BDP: CSS probes past the BDP, far below slow start's 24");
}

#[test]
fn hystartpp_presets_finish_css_where_their_stacks_would_on_the_deep_buffer() {
    // The same path per preset (docs/algorithms/hystart++.md). Every-segment ACKs and a steady
    // queue: the stacks' sampling and ordering choices move the exit by a fraction of a segment per
    // ACK they touch; ngtcp2's count of CSS rounds (four round ends) leaves one ×1.25 round early.
    // Measured: css-done at 9389.25 segments (rfc9406, neqo), 9391 (quiche), 9390.75 (msquic),
    // 7511.75 (ngtcp2: 0.8 of the RFC's), no drop.
    let exit = |preset: &str| {
        let f = flow(&path(&format!(r#"algorithm = "hystart++", preset = "{preset}""#), "10000pkt", "6s"), 0);
        assert_eq!((f.exit_reason.as_str(), f.drops), ("css-done", 0), "{preset}");
        f.exit_cwnd_pkts.expect("exited")
    };
    let rfc = exit("rfc9406");
    for preset in ["quiche", "msquic", "neqo"] {
        let w = exit(preset);
        assert!((w - rfc).abs() <= 4.0, "{preset}: exit at {w} segments, RFC 9406 at {rfc}");
    }
    let ngtcp2 = exit("ngtcp2");
    assert!((0.78..=0.82).contains(&(ngtcp2 / rfc)), "ngtcp2: {ngtcp2} segments, one CSS round (x1.25) below RFC 9406's {rfc}");
}

#[test]
fn linux_hystart_rounds_follow_the_flights_except_in_5_16_to_6_13() {
    // docs/reproduction/hystart.md: on an idle 400 Mb/s, 360 ms path with IW 10, Linux 5.16–6.13
    // start the first round at the sixth ACK of a flight (where cwnd reaches 16), so the delay
    // samples come from the middle of slow start's own burst and the delay test fires at about a
    // third of the BDP. Today's kernels (≥ 6.14, the default) and those before 5.16 start a round
    // at any cwnd, so the rounds stay on flight boundaries and the exit is near the BDP.
    let tcp = r#"recovery = "sack", mss = "1448B", header = "52B", initial_ssthresh = "infinite", ack = "every-packet", initial_window = 10"#;
    let exit = |round_reset: &str| {
        let startup = format!(r#"startup = {{ algorithm = "hystart-linux", round_reset = "{round_reset}" }}"#);
        flow(&run(&single("400Mbps", "360ms", "12000pkt", tcp, "infinite", "6s", &startup)), 0)
    };
    let gated = exit("gated");
    let gated_overshoot = gated.overshoot.expect("exited");
    assert_eq!(gated.exit_reason, "delay-increase");
    assert!(gated_overshoot < 0.5, "Linux 5.16-6.13 exits early: {gated_overshoot:.2} BDP");
    for reset in ["ungated", "every-ack"] {
        let f = exit(reset);
        let overshoot = f.overshoot.expect("exited");
        assert!((0.8..=2.0).contains(&overshoot), "{reset}: exits near the BDP: {overshoot:.2} BDP ({})", f.exit_reason);
    }
}
