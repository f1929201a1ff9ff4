//! The classic startup refinements through the whole simulator, on the setups of their papers:
//! Limited Slow-Start (RFC 3742), Appropriate Byte Counting (RFC 3465), Barakat & Altman's BC and
//! DBC, Smooth-start (Wang et al.) and Hoe's packet-pair ssthresh.

mod common;
use common::{cwnd_at, flow, run, single};
use startlab_sim::FlowResult;


// ---------------------------------------------------------------------------------------------
// Smooth-start: [Smooth] §5.2, the measured flow's share of the 1.5 Mbps / 25-packet-buffer
// dumbbell — 1.0 Mbps and 8 buffers, RTT 2·(45 + 5) ms, pipe ≈ 12 packets + 8 = 20 (ALGORITHMS.md
// §16) — 1024-byte packets, an ACK per packet, TCP Reno, IW 1, a 60 KB file, ssthresh = rwnd.
// ---------------------------------------------------------------------------------------------

fn smooth_path(startup: &str, rwnd: u64, ssthresh: &str) -> FlowResult {
    let tcp = format!(
        r#"recovery = "reno", mss = "1024B", initial_window = 1, rwnd = "{rwnd}pkt", initial_ssthresh = "{ssthresh}", ack = "every-packet", cwnd_validation = false"#
    );
    flow(&run(&single("1Mbps", "100ms", "8pkt", &tcp, "60KB", "30s", &format!("startup = {{ {startup} }}"))), 0)
}

#[test]
fn smooth_start_fine_4_loses_fewer_packets_than_slow_start_when_ssthresh_exceeds_the_pipe() {
    // [Smooth] Fig. 7(b): with the separator at ssthresh/4 Smooth-start "significantly reduces
    // packet losses in all cases". Measured: slow start 4, 10, 10 drops; Fine-4 0, 0, 2.
    let (mut ss_total, mut fine_total) = (0, 0);
    for rwnd in [24, 36, 64] {
        let ss = smooth_path(r#"algorithm = "slow-start""#, rwnd, "rwnd");
        let fine = smooth_path(r#"algorithm = "smooth-start", preset = "fine-4""#, rwnd, "rwnd");
        assert!(ss.drops > 0 && ss.timeouts > 0, "rwnd {rwnd}: slow start overflows the 8 buffers and times out (Reno)");
        assert!(fine.drops < ss.drops, "rwnd {rwnd}: Fine-4 should drop fewer than slow start's {}, dropped {}", ss.drops, fine.drops);
        assert!(
            fine.completion_time < ss.completion_time,
            "rwnd {rwnd}: fewer losses, shorter transfer: Fine-4 {:?} s vs slow start {:?} s",
            fine.completion_time,
            ss.completion_time
        );
        ss_total += ss.drops;
        fine_total += fine.drops;
    }
    assert!(fine_total * 4 <= ss_total, "Fine-4 should lose at most a quarter of slow start's packets: {fine_total} vs {ss_total}");
}

#[test]
fn with_ssthresh_at_the_pipe_size_neither_loses_and_smooth_start_costs_a_little_time() {
    // rwnd 18 and 20 (ssthresh ≤ pipe): no congestion; "if no congestion occurs, the performance of
    // Smooth-start is worse than that of Slow-start", slightly (§5.5).
    for rwnd in [18, 20] {
        let ss = smooth_path(r#"algorithm = "slow-start""#, rwnd, "rwnd");
        let fine = smooth_path(r#"algorithm = "smooth-start", preset = "fine-4""#, rwnd, "rwnd");
        assert_eq!((ss.drops, fine.drops), (0, 0), "rwnd {rwnd}: the window fits pipe and buffer");
        let (a, b) = (ss.completion_time.unwrap(), fine.completion_time.unwrap());
        assert!(b >= a && b < a + 0.2, "rwnd {rwnd}: Fine-4 should finish a little later ({b:.3} s) than slow start ({a:.3} s)");
    }
}

#[test]
fn coarse_2_loses_as_much_as_slow_start_when_its_separator_is_above_the_pipe() {
    // [Smooth] §5.2.1: with separator ssthresh/2 and the default ssthresh (64), "the number of
    // packet losses in Smooth-start is the same as that in Slow-start, because the separator
    // ssthresh/2 is larger than the actual pipe size". Measured: 10 and 10.
    let ss = smooth_path(r#"algorithm = "slow-start""#, 64, "rwnd");
    let coarse = smooth_path(r#"algorithm = "smooth-start", preset = "coarse-2""#, 64, "rwnd");
    assert_eq!(coarse.drops, ss.drops, "separator 32 > pipe 20: the losses happen in the pouring sub-phase");
}

#[test]
fn the_packet_pair_estimator_lets_smooth_start_lose_nothing_even_with_an_infinite_ssthresh() {
    // [Smooth] §5.4 (Figures 12–13): slow start drops six, Smooth-start two, Smooth-start with the
    // ssthresh estimator one. Measured here: 10, 2, 0 — the estimate is the 12-packet pipe.
    let ss = smooth_path(r#"algorithm = "slow-start""#, 64, "rwnd");
    let fine = smooth_path(r#"algorithm = "smooth-start", preset = "fine-4""#, 64, "rwnd");
    for ssthresh in ["rwnd", "infinite"] {
        let est = smooth_path(r#"algorithm = "smooth-start", preset = "fine-4", ssthresh_estimator = "packet-pair""#, 64, ssthresh);
        assert!(est.drops < fine.drops && fine.drops < ss.drops, "ssthresh {ssthresh}: drops should fall {} > {} > {}", ss.drops, fine.drops, est.drops);
        assert_eq!(est.exit_reason, "ssthresh", "ssthresh {ssthresh}: startup ends at the estimate");
        let pipe = 1e6 / 8.0 * 0.1 / 1024.0;
        let w = est.exit_cwnd_pkts.unwrap();
        assert!((w - pipe).abs() < 1.0, "ssthresh {ssthresh}: exit window {w:.2} should be about the {pipe:.1}-packet pipe");
    }
}

#[test]
fn smooth_start_without_a_finite_ssthresh_or_an_estimator_is_refused() {
    let tcp = r#"recovery = "reno", mss = "1024B", initial_ssthresh = "infinite""#;
    let text = single("1Mbps", "100ms", "8pkt", tcp, "60KB", "30s", r#"startup = { algorithm = "smooth-start", preset = "fine-4" }"#);
    let e = startlab_scenario::from_toml(&text).expect_err("an infinite separator is not Smooth-start");
    assert_eq!(e.path, "flows[0].startup.algorithm");
    assert!(e.message.contains("finite tcp.initial_ssthresh") && e.message.contains("packet-pair"), "the message says what to set: {}", e.message);
    let both = single("1Mbps", "100ms", "8pkt", "initial_ssthresh = \"64pkt\"", "60KB", "30s", r#"startup = { algorithm = "smooth-start", preset = "fine-4", k = 2 }"#);
    assert_eq!(startlab_scenario::from_toml(&both).unwrap_err().path, "flows[0].startup.k", "a preset and k together are ambiguous");
}

// ---------------------------------------------------------------------------------------------
// Limited Slow-Start (RFC 3742).
// ---------------------------------------------------------------------------------------------

#[test]
fn limited_slow_start_grows_linearly_above_max_ssthresh() {
    // 1 Gbps, 100 ms (BDP ≈ 12000 segments), IW 10, ssthresh 300 segments, max_ssthresh 20:
    // 10 → 20 in one round, then about max_ssthresh/2 = 10 segments per round: 29 rounds in the
    // fluid model; the RFC's integer int(MSS/K) makes it 30 (measured 30.0; 9.8-10.0 segments per
    // RTT above 30 segments). Slow start: 5.
    let tcp = r#"recovery = "sack", mss = "1000B", initial_window = 10, initial_ssthresh = "300pkt", ack = "every-packet""#;
    let lss = run(&single("1Gbps", "100ms", "100000pkt", tcp, "infinite", "4s", r#"startup = { algorithm = "lss", max_ssthresh = "20pkt" }"#));
    let ss = run(&single("1Gbps", "100ms", "100000pkt", tcp, "infinite", "4s", ""));
    let (f, g) = (flow(&lss, 0), flow(&ss, 0));
    assert_eq!((f.exit_reason.as_str(), f.drops), ("ssthresh", 0));
    let rounds = f.su_time.unwrap() / f.base_rtt;
    assert!((29.0..31.0).contains(&rounds), "LSS should take about 29-30 RTTs to reach 300 segments, took {rounds:.2}");
    let ss_rounds = g.su_time.unwrap() / g.base_rtt;
    assert!(ss_rounds < 5.1, "slow start doubles: log2(300/10) → 5 RTTs, took {ss_rounds:.2}");
    // Per-RTT growth read from the cwnd trace, once above max_ssthresh: linear, never above 10.
    let (t0, rtt) = (f.t0.unwrap(), f.base_rtt);
    let mut steps = Vec::new();
    for k in 3..25 {
        let a = cwnd_at(&lss, t0 + (k as f64 + 0.5) * rtt);
        let b = cwnd_at(&lss, t0 + (k as f64 + 1.5) * rtt);
        steps.push(b - a);
    }
    for s in &steps {
        assert!((9.0..=10.0).contains(s), "above max_ssthresh the window should grow by 9-10 segments per RTT, got {steps:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Byte counting over delayed ACKs: ABC (RFC 3465), BC and DBC ([Barakat] §4).
// ---------------------------------------------------------------------------------------------

#[test]
fn abc_restores_doubling_per_rtt_over_delayed_acks() {
    // Lossless 10 Gbps / 100 ms path, IW 2, ssthresh 256, an ACK per two segments: ABC (L = 2)
    // reaches 256 in log2(128) = 7 RTTs; slow start grows ×1.5 per RTT: log1.5(128) ≈ 12, plus a
    // delayed-ACK timer wait (measured 13.0).
    let tcp = r#"recovery = "sack", mss = "1000B", initial_window = 2, initial_ssthresh = "256pkt", ack = "delayed""#;
    let rounds = |startup: &str| {
        let f = flow(&run(&single("10Gbps", "100ms", "100000pkt", tcp, "infinite", "3s", startup)), 0);
        assert_eq!(f.exit_reason, "ssthresh");
        f.su_time.unwrap() / f.base_rtt
    };
    let abc = rounds(r#"startup = { algorithm = "abc" }"#);
    let bc = rounds(r#"startup = { algorithm = "bc" }"#);
    let ss = rounds("");
    let abc_l1 = rounds(r#"startup = { algorithm = "abc", l = 1 }"#);
    assert!((7.0..7.1).contains(&abc), "ABC L=2: 7 RTTs, took {abc:.2}");
    assert!((7.0..7.1).contains(&bc), "BC: 7 RTTs, took {bc:.2}");
    assert!((12.0..13.1).contains(&ss), "slow start: about 12-13 RTTs, took {ss:.2}");
    assert!((abc_l1 - ss).abs() < 1e-9, "ABC L=1 is packet counting: {abc_l1:.3} vs {ss:.3}");
}

/// [Barakat] Fig. 3/8 style: 512-byte packets, a 100 KB file, W_th = ssthresh = BDP (68 packets
/// at 1.5 Mbps, 200 ms), delayed ACKs, Reno, buffer `b`.
fn barakat(startup: &str, b: &str) -> FlowResult {
    let tcp = r#"recovery = "reno", mss = "512B", initial_window = 1, initial_ssthresh = "68pkt", ack = "delayed", cwnd_validation = false"#;
    flow(&run(&single("1.5Mbps", "200ms", b, tcp, "100KB", "30s", &format!("startup = {{ {startup} }}"))), 0)
}

#[test]
fn on_a_small_buffer_dbc_avoids_the_early_overflow_of_bc_and_finishes_before_standard_tcp() {
    // [Barakat] Fig. 8: B = 30 < μT/d = 68 for d = 1, so BC overflows the buffer before the pipe is
    // full; standard TCP (d = 2) does not; DBC "is able to increase faster the window while avoiding
    // losses". Measured: BC 3 drops and a timeout, 3.56 s; STCP 0, 2.88 s; DBC 0, 2.46 s.
    let stcp = barakat(r#"algorithm = "slow-start""#, "30pkt");
    let bc = barakat(r#"algorithm = "bc""#, "30pkt");
    let dbc = barakat(r#"algorithm = "dbc""#, "30pkt");
    assert!(bc.drops > 0, "BC (d = 1) overflows a 30-packet buffer before reaching W_th");
    assert_eq!((stcp.drops, dbc.drops), (0, 0), "STCP (d = 2) and DBC reach W_th without loss");
    assert!(dbc.su_time < stcp.su_time, "DBC reaches W_th sooner than STCP: {:?} vs {:?}", dbc.su_time, stcp.su_time);
    let (d, s, b) = (dbc.completion_time.unwrap(), stcp.completion_time.unwrap(), bc.completion_time.unwrap());
    assert!(d < s && s < b, "transfer times: DBC {d:.3} s < STCP {s:.3} s < BC {b:.3} s");
}

#[test]
fn on_a_buffer_of_one_bdp_bc_is_fastest_and_dbc_sits_between_bc_and_standard_tcp() {
    // [Barakat] §5.2: "At large buffers, BC is no longer aggressive and it outperforms the two other
    // strategies but our proposition still gives better performance than STCP". Measured: BC
    // 2.24 s, DBC 2.46 s, STCP 2.88 s, no loss.
    let stcp = barakat(r#"algorithm = "slow-start""#, "70pkt");
    let bc = barakat(r#"algorithm = "bc""#, "70pkt");
    let dbc = barakat(r#"algorithm = "dbc""#, "70pkt");
    assert_eq!((stcp.drops, bc.drops, dbc.drops), (0, 0, 0), "a 70-packet buffer absorbs every burst");
    let (d, s, b) = (dbc.completion_time.unwrap(), stcp.completion_time.unwrap(), bc.completion_time.unwrap());
    assert!(b < d && d < s, "transfer times: BC {b:.3} s < DBC {d:.3} s < STCP {s:.3} s");
}

#[test]
fn dbc_without_a_finite_ssthresh_is_refused() {
    let text = single("1.5Mbps", "200ms", "30pkt", "mss = \"512B\"", "100KB", "30s", r#"startup = { algorithm = "dbc" }"#);
    let e = startlab_scenario::from_toml(&text).expect_err("DBC's W_th is ssthresh");
    assert_eq!(e.path, "flows[0].startup.algorithm");
    assert!(e.message.contains("finite tcp.initial_ssthresh"), "{}", e.message);
}

// ---------------------------------------------------------------------------------------------
// Hoe's packet-pair ssthresh (the Paced Start paper's "NewReno", Fig. 9).
// ---------------------------------------------------------------------------------------------

#[test]
fn hoe_ends_slow_start_near_the_bdp_on_an_idle_path_where_slow_start_overshoots() {
    // 10 Mbps, 100 ms, 1000-byte segments (1040 on the wire), a 1000-packet buffer, ssthresh
    // infinite. The first back-to-back ACK pair is 0.832 ms apart: 1000 B / 0.832 ms × 100.8 ms →
    // 121 segments, the payload BDP (the wire BDP is 126 packets). Slow start runs until the
    // buffer overflows at about 18 BDP (measured 2243 segments, 1122 drops).
    for iw in [1, 2, 3, 10] {
        let tcp = format!(r#"recovery = "sack", mss = "1000B", initial_window = {iw}, ack = "every-packet""#);
        let hoe = flow(&run(&single("10Mbps", "100ms", "1000pkt", &tcp, "infinite", "5s", r#"startup = { algorithm = "hoe" }"#)), 0);
        assert_eq!(hoe.exit_reason, "ssthresh", "IW {iw}: startup ends at the estimated ssthresh");
        assert_eq!(hoe.drops, 0, "IW {iw}: nothing is lost on the way to one BDP");
        let o = hoe.overshoot.unwrap();
        assert!((0.93..=1.0).contains(&o), "IW {iw}: exit window should be the BDP less the header share, got {o:.3} BDP ({:?} segments)", hoe.exit_cwnd_pkts);
    }
    let tcp = r#"recovery = "sack", mss = "1000B", initial_window = 2, ack = "every-packet""#;
    let ss = flow(&run(&single("10Mbps", "100ms", "1000pkt", tcp, "infinite", "5s", "")), 0);
    assert_eq!(ss.exit_reason, "loss");
    assert!(ss.overshoot.unwrap() > 10.0 && ss.drops > 500, "slow start overshoots: {:?} BDP, {} drops", ss.overshoot, ss.drops);
}

#[test]
fn hoe_measures_capacity_not_the_share_left_by_cross_traffic() {
    // Paced Start §5.1.2: "NewReno tends to overestimate the available bandwidth". With 6 of the
    // 10 Mbps taken by CBR the estimate is still the full-capacity BDP: measured 122 segments,
    // 2.4x the BDP of the 4 Mbps left.
    let text = format!(
        "{}\n[[cross]]\nkind = \"cbr\"\nrate = \"6Mbps\"\npacket_size = \"1040B\"\n",
        single(
            "10Mbps",
            "100ms",
            "1000pkt",
            r#"recovery = "sack", mss = "1000B", initial_window = 3, ack = "every-packet""#,
            "infinite",
            "3s",
            r#"startup = { algorithm = "hoe" }"#
        )
    );
    let f = flow(&run(&text), 0);
    let o = f.overshoot.unwrap();
    assert!(o > 1.5, "the estimate ignores the cross traffic: exit window {:?} segments = {o:.2}x the available BDP", f.exit_cwnd_pkts);
}
