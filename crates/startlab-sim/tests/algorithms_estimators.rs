//! The estimator-based startups (Vegas, packet pair, Astart, delay-based slow start, SEARCH) run
//! through the whole simulator on one long-fat path: a 100 Mb/s drop-tail bottleneck, 100 ms RTT,
//! one flow with the lab's TCP defaults (1448-byte MSS, delayed ACKs, SACK, infinite ssthresh).
//! The BDP is about 864 segments; a "1-BDP" buffer holds 864 packets.

mod common;
use common::{bdp_pkts, cwnd_at, flow, run, single};
use startlab_sim::Simulation;

/// The path with a buffer of `queue` packets and startup `startup` (an inline table body); `more`
/// adds scenario text after the flow (cross traffic).
fn path(queue: &str, startup: &str, more: &str, duration: &str) -> Simulation {
    run(&single("100Mbps", "100ms", queue, r#"recovery = "sack""#, "infinite", duration, &format!("startup = {{ {startup} }}\n{more}")))
}



#[test]
fn vegas_leaves_slow_start_without_loss_well_below_the_bdp_plus_buffer() {
    // 1-BDP buffer: slow start overshoots to about 3 BDP and loses about 850 packets.
    let ss = flow(&path("864pkt", r#"algorithm = "slow-start""#, "", "4s"), 0);
    assert_eq!(ss.exit_reason, "loss");
    assert!(ss.drops > 500, "slow start overflows the buffer: {} drops", ss.drops);
    // Vegas (paper flavour) ends slow start on its own once a round's minimum RTT puts more than
    // gamma = 1 segment in the queue: at about 1.2 BDP here (1064 segments; BDP + buffer = 1728).
    let v = flow(&path("864pkt", r#"algorithm = "vegas""#, "", "4s"), 0);
    assert_eq!(v.exit_reason, "vegas-diff");
    assert_eq!(v.drops, 0, "Vegas leaves before the buffer overflows");
    let (exit, bdp) = (v.exit_cwnd_pkts.unwrap(), bdp_pkts(&v));
    assert!(exit < 0.75 * 2.0 * bdp, "exit window {exit:.0} should be well below BDP + buffer = {:.0}", 2.0 * bdp);
    assert!(exit > 0.8 * bdp, "exit window {exit:.0} should still fill the pipe of {bdp:.0}");
    // Growing every other round costs time: the paper flavour takes longer than slow start's
    // lossy startup (3.2 s against 2.3 s here).
    assert!(v.su_time.unwrap() > ss.su_time.unwrap(), "every-other-RTT growth doubles the rounds");
}

#[test]
fn linux_vegas_finishes_startup_sooner_than_slow_start_recovers_from_its_overshoot() {
    let ss = flow(&path("864pkt", r#"algorithm = "slow-start""#, "", "4s"), 0);
    let v = flow(&path("864pkt", r#"algorithm = "vegas", every_other_rtt = false, diff = "linux""#, "", "4s"), 0);
    assert_eq!((v.exit_reason.as_str(), v.drops), ("vegas-diff", 0));
    // Growing on every ACK, Vegas ends startup at 1.7 s where slow start needs 2.3 s (loss,
    // then SACK recovery); its exit window (about 1.8 BDP here) is still below BDP + buffer.
    assert!(v.su_time.unwrap() < 0.8 * ss.su_time.unwrap(), "Vegas {:?} s vs slow start {:?} s", v.su_time, ss.su_time);
    assert!(v.exit_cwnd_pkts.unwrap() < 2.0 * bdp_pkts(&v));
}

#[test]
fn packet_pair_estimates_the_bdp_on_an_idle_path() {
    // The first back-to-back segments are spaced by the bottleneck (1500 B on the wire at
    // 100 Mb/s = 120 µs); 1448 B per 120 µs times the first RTT sample is the payload BDP.
    let f = flow(&path("2592pkt", r#"algorithm = "packet-pair""#, "", "3s"), 0);
    assert_eq!(f.exit_reason, "estimate");
    assert_eq!(f.drops, 0);
    let ratio = f.exit_cwnd_pkts.unwrap() / bdp_pkts(&f);
    assert!((0.9..1.05).contains(&ratio), "estimate / BDP = {ratio:.3}");
}

#[test]
fn packet_pair_takes_the_capacity_for_the_available_bandwidth_under_cbr_cross_traffic() {
    // 60 Mb/s of CBR leaves 40 Mb/s. A packet pair still leaves the bottleneck at the link rate, so
    // the estimate is the 100 Mb/s BDP ([PaSt] §5.1.2: packet pair measures capacity).
    let cbr = "[[cross]]\nkind = \"cbr\"\nrate = \"60Mbps\"\npacket_size = \"1000B\"";
    let sim = path("864pkt", r#"algorithm = "packet-pair""#, cbr, "3s");
    let f = flow(&sim, 0);
    assert_eq!(f.exit_reason, "estimate");
    assert!((f.available_rate.unwrap() - 40e6).abs() < 1.0);
    let over = f.exit_cwnd_pkts.unwrap() / bdp_pkts(&f);
    assert!(over > 1.5, "the exit window is {over:.2} times the available BDP, expected > 1.5");
    // ssthresh is set to the estimate early (from the first pairs), long before the exit.
    let link_bdp = 100e6 / 8.0 * f.base_rtt * (f.mss as f64 / 1500.0) / f.mss as f64;
    let r = sim.results();
    let tr = &r.traces.cwnd;
    let first = (0..tr.time.len()).find(|&i| tr.ssthresh[i].is_finite()).expect("ssthresh was set");
    let est = tr.ssthresh[first] / f.mss as f64;
    assert!((est / link_bdp - 1.0).abs() < 0.1, "estimate {est:.0} segments vs the link's BDP {link_bdp:.0}");
    assert!(tr.time[first] < f.t0.unwrap() + 5.0 * f.base_rtt, "the estimate comes from the first rounds");
}

#[test]
fn search_exits_before_loss_and_drains_to_the_bdp_on_an_idle_path_with_a_deep_buffer() {
    // A 3-BDP buffer (2592 packets), the bloated case SEARCH targets: slow start fills it and
    // loses about 1700 packets.
    let ss = flow(&path("2592pkt", r#"algorithm = "slow-start""#, "", "4s"), 0);
    assert!(ss.drops > 1000, "slow start overflows even this buffer: {} drops", ss.drops);
    let f = flow(&path("2592pkt", r#"algorithm = "search""#, "", "4s"), 0);
    assert_eq!(f.exit_reason, "bandwidth-plateau");
    assert_eq!(f.drops, 0, "SEARCH leaves before the buffer overflows");
    assert!(f.startup_exit_time.unwrap() < ss.startup_exit_time.unwrap(), "before slow start's first loss");
    // With the drain target, the window becomes the bytes delivered over the last initial RTT:
    // about one BDP.
    let ratio = f.exit_cwnd_pkts.unwrap() / bdp_pkts(&f);
    assert!((0.9..1.25).contains(&ratio), "exit window / BDP = {ratio:.2}");
    // Without it, the exit keeps the window SEARCH found the plateau with, detected about 1.5 RTT
    // after the pipe filled (3.6 BDP here): the draft's detection delay.
    let raw = flow(&path("2592pkt", r#"algorithm = "search", drain = false"#, "", "4s"), 0);
    assert_eq!(raw.startup_exit_time, f.startup_exit_time);
    assert!(raw.exit_cwnd_pkts.unwrap() > 3.0 * bdp_pkts(&raw), "exit window {:?}", raw.exit_cwnd_pkts);
}

#[test]
fn delay_ss_ends_exponential_growth_below_the_bdp_and_loses_far_less_than_slow_start() {
    let ss = flow(&path("864pkt", r#"algorithm = "slow-start""#, "", "4s"), 0);
    let sim = path("864pkt", r#"algorithm = "delay-ss""#, "", "4s");
    let f = flow(&sim, 0);
    let bdp = bdp_pkts(&f);
    // Slow start with delayed ACKs grows by 1.5 per RTT. Find the first RTT over which delay-ss
    // grew by less than 1.3: the switch to Limited Slow Start. It comes below the BDP: slow start's
    // own bursts queue more than tau0 = 10 ms ([HyStart]'s premature-exit pitfall).
    let rtt = f.base_rtt;
    let mut t = f.t0.unwrap() + 3.0 * rtt;
    while cwnd_at(&sim, t + rtt) / cwnd_at(&sim, t) > 1.3 {
        t += rtt / 4.0;
        assert!(t < 4.0, "delay-ss never left exponential growth");
    }
    let switched = cwnd_at(&sim, t);
    assert!(switched < bdp, "exponential growth ended at {switched:.0} segments, BDP {bdp:.0}");
    // Limited Slow Start still reaches and passes the BDP, and the first loss costs a small
    // fraction of slow start's (115 against 853 drops here).
    assert!(cwnd_at(&sim, 3.0) > bdp);
    assert!(f.drops * 5 < ss.drops, "delay-ss {} drops, slow start {}", f.drops, ss.drops);
}

#[test]
fn delay_ss_does_not_overflow_a_deep_buffer_where_slow_start_does() {
    // With a 3-BDP buffer, Limited Slow Start (about max_ssthresh/4 segments per RTT with delayed
    // ACKs) is still below BDP + buffer after 3 s; slow start has lost 1700 packets by then. The
    // switch does not end startup (RFC 3742: exit conditions unchanged).
    let ss = flow(&path("2592pkt", r#"algorithm = "slow-start""#, "", "3s"), 0);
    let f = flow(&path("2592pkt", r#"algorithm = "delay-ss""#, "", "3s"), 0);
    assert!(ss.drops > 1000);
    assert_eq!((f.drops, f.left_startup), (0, false));
}

#[test]
fn astart_with_an_infinite_ssthresh_is_slow_start() {
    // Nothing to raise: the same overshoot and losses as slow start ([HyStart]'s observation).
    let ss = flow(&path("864pkt", r#"algorithm = "slow-start""#, "", "3s"), 0);
    let a = flow(&path("864pkt", r#"algorithm = "astart", estimator = "ere""#, "", "3s"), 0);
    assert_eq!((a.exit_reason.as_str(), a.drops, a.exit_cwnd), (ss.exit_reason.as_str(), ss.drops, ss.exit_cwnd));
}

#[test]
fn astart_from_the_ns2_ssthresh_climbs_to_the_bdp_without_the_collapse_of_slow_start() {
    // NewReno, 1-BDP buffer. Slow start with an infinite ssthresh overshoots to several BDPs,
    // loses about a thousand packets and times out ("collapse").
    let tcp = r#"recovery = "newreno""#;
    let inf = run(&single("100Mbps", "100ms", "864pkt", tcp, "infinite", "6s", r#"startup = { algorithm = "slow-start" }"#));
    let inf = flow(&inf, 0);
    assert!(inf.drops > 500 && inf.timeouts >= 1, "slow start collapses: {} drops, {} timeouts", inf.drops, inf.timeouts);
    // From ns-2's initial ssthresh of 20 segments, slow start leaves at 20 and crawls linearly.
    let tcp20 = r#"recovery = "newreno", initial_ssthresh = "20pkt""#;
    let ss20 = run(&single("100Mbps", "100ms", "864pkt", tcp20, "infinite", "6s", r#"startup = { algorithm = "slow-start" }"#));
    // Astart with the eligible-rate estimate re-opens slow start whenever ERE · RTTmin exceeds
    // ssthresh and cwnd, and climbs in steps to about the BDP: no loss, no timeout.
    let a = run(&single("100Mbps", "100ms", "864pkt", tcp20, "infinite", "6s", r#"startup = { algorithm = "astart", estimator = "ere" }"#));
    let af = flow(&a, 0);
    let bdp = bdp_pkts(&af);
    assert_eq!((af.drops, af.timeouts), (0, 0), "Astart does not overflow the buffer");
    assert!(cwnd_at(&a, 3.0) > 0.9 * bdp, "Astart reached {:.0} segments by 3 s (BDP {bdp:.0})", cwnd_at(&a, 3.0));
    assert!(cwnd_at(&ss20, 3.0) < 0.1 * bdp, "slow start from ssthresh 20 is still at {:.0}", cwnd_at(&ss20, 3.0));
    assert!(af.throughput.unwrap() > 2.0 * inf.throughput.unwrap(), "Astart {:?} vs collapsed slow start {:?} bit/s", af.throughput, inf.throughput);
    // The Westwood+ estimate, one filtered sample per RTT, lags cwnd and never re-opens slow start.
    let w = flow(&run(&single("100Mbps", "100ms", "864pkt", tcp20, "infinite", "6s", r#"startup = { algorithm = "astart" }"#)), 0);
    assert_eq!(w.throughput, flow(&ss20, 0).throughput);
}
