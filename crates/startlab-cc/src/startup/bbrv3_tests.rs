//! Unit tests of `bbrv3` on scripted ACK streams: each exit from STARTUP, DRAIN and its end,
//! and the controller riding a loss recovery out.

use super::*;
use crate::avoidance::{Avoidance, Reno};
use crate::startup::{CeRule, Startup};
use crate::{CcConfig, Controller, Phase, RateSample, Ssthresh};

const MSS: u64 = 1000;
/// The path's minimum RTT in most tests.
const RTT: Dur = Dur::from_millis(40);

/// Bytes per second of `mbps` megabits per second.
fn bps(mbps: f64) -> f64 {
    mbps * 1e6 / 8.0
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn view(cwnd: f64, round: u64, new_round: bool) -> CcView {
    CcView { cwnd, ssthresh: Ssthresh::Infinite, mss: MSS, round, min_rtt: Some(RTT), new_round }
}

/// An ACK of `acked` bytes with a delivery-rate sample of `mbps` (that many bytes over one
/// second, so that the rate is exact), `flight` bytes left in flight and `delivered` bytes
/// delivered so far.
fn ack(acked: u64, mbps: Option<f64>, flight: u64, delivered: u64) -> AckEvent {
    AckEvent {
        newly_acked: acked,
        rtt: Some(RTT),
        flight_size: flight,
        delivered,
        rate_sample: mbps.map(|m| RateSample { delivered: bps(m) as u64, interval: Dur::from_secs(1) }),
        ..AckEvent::default()
    }
}

/// The round-end ACKs of §12's vector (round maxima 2, 4, 8, 9, 9.5, 9.8 Mb/s), one per round,
/// with `flight` bytes in flight. Returns the last action.
fn six_rounds(b: &mut BbrV3, flight: u64) -> StartupAction {
    let mut last = StartupAction::default();
    for (i, mbps) in [2.0, 4.0, 8.0, 9.0, 9.5, 9.8].into_iter().enumerate() {
        let round = i as u64 + 1;
        last = b.on_ack(&view(100_000.0, round, true), &ack(MSS, Some(mbps), flight, 100_000 * round));
        let expected = round.saturating_sub(3) as u32;
        assert_eq!(b.counts().0, expected, "round {round}: {mbps} Mb/s");
        assert_eq!(b.mode == Mode::Startup, round < 6, "round {round}");
    }
    last
}

#[test]
fn the_third_round_without_25_percent_growth_starts_drain_not_the_hand_over() {
    let mut b = BbrV3::new(BbrV3Config::default());
    let a = six_rounds(&mut b, 200_000);
    assert_eq!(b.mode, Mode::Drain { reason: ExitReason::BandwidthPlateau, round: 6 });
    assert_eq!(a.exit, None, "200 kB in flight is above the 49 kB BDP: DRAIN goes on");
    // DRAIN paces at 0.5 · max_bw · 0.99; max_bw is the largest sample, 9.8 Mb/s.
    assert!(close(a.pacing_rate.unwrap(), 0.5 * bps(9.8) * 0.99), "pacing {:?}", a.pacing_rate);
    // cwnd = min(cwnd + N, 2 · BDP): 100 kB is above 2 · 49 kB, so it is cut to 98 kB.
    assert_eq!(a.set_cwnd, Some(98_000.0));
}

#[test]
fn drain_ends_exactly_when_the_flight_is_down_to_the_bdp() {
    let mut b = BbrV3::new(BbrV3Config::default());
    six_rounds(&mut b, 200_000);
    // BDP = 9.8 Mb/s · 40 ms = 49 000 B. One byte more stays in DRAIN; the BDP itself hands over.
    let bdp = bps(9.8) * RTT.as_secs_f64();
    assert!(close(bdp, 49_000.0));
    let a = b.on_ack(&view(90_000.0, 6, false), &ack(MSS, Some(9.0), bdp as u64 + 1, 700_000));
    assert_eq!((a.exit, a.increase), (None, MSS as f64), "cwnd 90 kB + N stays below 2 · BDP");
    let a = b.on_ack(&view(91_000.0, 6, false), &ack(MSS, Some(9.0), bdp as u64, 701_000));
    assert_eq!(a.exit, Some(ExitReason::BandwidthPlateau), "the reason names STARTUP's end");
    assert!(close(a.set_cwnd.unwrap(), 49_000.0) && close(a.set_ssthresh.unwrap(), 49_000.0), "{a:?}");
    assert_eq!(b.mode, Mode::Done);
    let report = b.report();
    assert!(report.contains(&("bbrv3_drain_end", Detail::Text("inflight"))), "{report:?}");
    assert!(report.contains(&("bbrv3_drain_rounds", Detail::Num(0.0))), "{report:?}");
    // After the hand-over a later slow start (after a timeout) is RFC 5681's.
    assert_eq!(b.on_ack(&view(2_000.0, 9, false), &ack(5 * MSS, Some(9.0), 0, 0)).increase, MSS as f64);
}

#[test]
fn drain_ends_three_rounds_after_it_began_if_the_flight_stays_high() {
    let mut b = BbrV3::new(BbrV3Config::default());
    six_rounds(&mut b, 200_000);
    for round in 7..=9 {
        let a = b.on_ack(&view(98_000.0, round, true), &ack(MSS, Some(9.0), 200_000, 100_000 * round));
        assert_eq!(a.exit, None, "round {round} is within drain_start_round + 3");
    }
    let a = b.on_ack(&view(98_000.0, 10, true), &ack(MSS, Some(9.0), 200_000, 1_000_000));
    assert_eq!(a.exit, Some(ExitReason::BandwidthPlateau));
    assert!(close(a.set_ssthresh.unwrap(), 49_000.0), "the hand-over window is the BDP, not the flight");
    assert!(b.report().contains(&("bbrv3_drain_end", Detail::Text("rounds"))));
    // drain_max_rounds = 0 (Linux): DRAIN lasts until the flight is down.
    let mut b = BbrV3::new(BbrV3Config { drain_max_rounds: 0, ..BbrV3Config::default() });
    six_rounds(&mut b, 200_000);
    for round in 7..=20 {
        assert_eq!(b.on_ack(&view(98_000.0, round, true), &ack(MSS, Some(9.0), 200_000, 100_000 * round)).exit, None);
    }
}

#[test]
fn a_round_with_25_percent_growth_restarts_the_count() {
    let mut b = BbrV3::new(BbrV3Config::default());
    for (round, mbps) in [(1, 8.0), (2, 9.0), (3, 9.5), (4, 10.0), (5, 10.0), (6, 10.0)] {
        b.on_ack(&view(100_000.0, round, true), &ack(MSS, Some(mbps), 200_000, 0));
        assert_eq!(b.mode, Mode::Startup, "round {round}");
    }
    b.on_ack(&view(100_000.0, 7, true), &ack(MSS, Some(10.0), 200_000, 0));
    assert_eq!(b.mode, Mode::Drain { reason: ExitReason::BandwidthPlateau, round: 7 }, "rounds 5, 6, 7 did not grow on 10 Mb/s");
}

#[test]
fn the_draft_reads_round_ends_and_linux_every_ack() {
    // Round ends at 8, 9, 9 Mb/s, then a 10 Mb/s sample inside round 4, which ends at 9 Mb/s.
    let run = |check| {
        let mut b = BbrV3::new(BbrV3Config { full_bw_check: check, ..BbrV3Config::default() });
        for (round, mbps) in [(1, 8.0), (2, 9.0), (3, 9.0)] {
            b.on_ack(&view(100_000.0, round, true), &ack(MSS, Some(mbps), 200_000, 0));
        }
        b.on_ack(&view(100_000.0, 3, false), &ack(MSS, Some(10.0), 200_000, 0));
        b.on_ack(&view(100_000.0, 4, true), &ack(MSS, Some(9.0), 200_000, 0));
        b.mode
    };
    assert_eq!(run(FullBwCheck::RoundEnd), Mode::Drain { reason: ExitReason::BandwidthPlateau, round: 4 }, "the mid-round sample is not read");
    assert_eq!(run(FullBwCheck::EveryAck), Mode::Startup, "10 Mb/s >= 1.25 · 8 restarted the count");
}

#[test]
fn a_round_end_without_a_valid_sample_defers_the_test_to_the_next_sample() {
    let mut b = BbrV3::new(BbrV3Config::default());
    for (round, mbps) in [(1, 8.0), (2, 9.0), (3, 9.0)] {
        b.on_ack(&view(100_000.0, round, true), &ack(MSS, Some(mbps), 200_000, 0));
    }
    b.on_ack(&view(100_000.0, 4, true), &ack(MSS, None, 200_000, 0));
    assert_eq!((b.counts().0, b.mode), (2, Mode::Startup), "no sample: round 4 not counted yet");
    b.on_ack(&view(100_000.0, 4, false), &ack(MSS, Some(9.0), 200_000, 0));
    assert_eq!(b.mode, Mode::Drain { reason: ExitReason::BandwidthPlateau, round: 4 });
}

#[test]
fn startup_paces_at_2_77_times_max_bw_less_the_margin_and_never_slower() {
    let mut b = BbrV3::new(BbrV3Config::default());
    let a = b.on_ack(&view(10_000.0, 0, false), &ack(MSS, Some(10.0), 20_000, MSS));
    // 2.77 · 1.25 MB/s · 0.99 = 3.43 MB/s is above the initial 2.77 · IW / RTT = 692.5 kB/s.
    assert!(close(a.pacing_rate.unwrap(), 2.77 * bps(10.0) * 0.99), "pacing {:?}", a.pacing_rate);
    let a = b.on_ack(&view(10_000.0, 0, false), &ack(MSS, Some(5.0), 20_000, 2 * MSS));
    assert!(close(a.pacing_rate.unwrap(), 2.77 * bps(10.0) * 0.99), "max_bw is a running maximum");
    // Before any sample: the initial rate from the IW and the first RTT sample.
    let mut b = BbrV3::new(BbrV3Config::default());
    let a = b.on_ack(&view(10_000.0, 0, false), &ack(MSS, None, 20_000, MSS));
    assert!(close(a.pacing_rate.unwrap(), 2.77 * 10_000.0 / 0.04), "pacing {:?}", a.pacing_rate);
}

#[test]
fn startup_grows_by_whole_acks_below_two_bdp_or_before_an_iw_is_delivered() {
    // BDP 10 Mb/s · 40 ms = 50 kB: cwnd 90 kB + 20 kB ACK goes to 110 kB (the draft adds all of
    // N while below BBR.max_inflight = 100 kB); at 110 kB it stops.
    let mut b = BbrV3::new(BbrV3Config::default());
    b.on_ack(&view(10_000.0, 0, false), &ack(MSS, Some(10.0), 20_000, MSS));
    assert_eq!(b.on_ack(&view(90_000.0, 0, false), &ack(20_000, Some(10.0), 20_000, 50_000)).increase, 20_000.0);
    assert_eq!(b.on_ack(&view(110_000.0, 0, false), &ack(20_000, Some(10.0), 20_000, 70_000)).increase, 0.0);
    // A tiny estimate (max_inflight = 4 segments): growth only while less than the IW (10 kB)
    // was delivered.
    let mut b = BbrV3::new(BbrV3Config::default());
    let tiny = |delivered| AckEvent { rate_sample: Some(RateSample { delivered: 40, interval: RTT }), ..ack(MSS, None, 0, delivered) };
    assert_eq!(b.on_ack(&view(10_000.0, 0, false), &tiny(9_000)).increase, MSS as f64);
    assert_eq!(b.on_ack(&view(11_000.0, 0, false), &tiny(10_000)).increase, 0.0);
    // Never below BBR.MinPipeCwnd.
    let a = b.on_ack(&view(2_000.0, 0, false), &tiny(20_000));
    assert_eq!((a.increase, a.set_cwnd), (0.0, Some(4_000.0)));
}

/// A round of ten one-segment ACKs, `marked` of them CE-marked, on a 2 ms path at 40 Mb/s
/// (BDP 10 kB); the last ACK ends the round and carries a sample of `latest` delivered bytes.
fn ce_round(b: &mut BbrV3, round: u64, marked: u64, latest: u64) -> StartupAction {
    let short = Dur::from_millis(2);
    let mut last = StartupAction::default();
    for i in 0..10 {
        let v = CcView { min_rtt: Some(short), ..view(30_000.0, round, i == 9) };
        // 40 Mb/s = 5 MB/s: `latest` bytes take latest · 200 ns.
        let rs = RateSample { delivered: if i == 9 { latest } else { 10_000 }, interval: if i == 9 { Dur(latest * 200) } else { short } };
        let a = AckEvent { ce_bytes: if i < marked { MSS } else { 0 }, rate_sample: Some(rs), ..ack(MSS, None, 30_000, 0) };
        last = b.on_ack(&v, &a);
    }
    last
}

#[test]
fn two_rounds_with_half_the_bytes_ce_marked_start_drain_with_reason_ecn() {
    let mut b = BbrV3::new(BbrV3Config::default());
    ce_round(&mut b, 1, 5, 10_000);
    ce_round(&mut b, 2, 4, 10_000);
    assert_eq!(b.mode, Mode::Startup, "a round below 1/2 resets the count");
    ce_round(&mut b, 3, 6, 10_000);
    // The last round's largest RS.delivered is 20 kB (a 4 ms sample at 40 Mb/s).
    ce_round(&mut b, 4, 10, 20_000);
    assert_eq!(b.mode, Mode::Drain { reason: ExitReason::Ecn, round: 4 });
    assert!(b.report().contains(&("bbrv3_inflight_hi", Detail::Num(20_000.0))), "max(BDP 10 kB, inflight_latest 20 kB): {:?}", b.report());
    let v = CcView { min_rtt: Some(Dur::from_millis(2)), ..view(30_000.0, 4, false) };
    let a = b.on_ack(&v, &ack(MSS, None, 10_000, 0));
    assert_eq!((a.exit, a.set_cwnd), (Some(ExitReason::Ecn), Some(10_000.0)), "FlightSize 10 kB = BDP: hand over");
    assert_eq!(DECL.on_ce, CeRule::OwnRule, "a classic ECE echo does not end STARTUP");
    // On a 40 ms path the marks do not count (not ECN-eligible).
    let mut b = BbrV3::new(BbrV3Config::default());
    for round in 1..=4 {
        for i in 0..10 {
            let growing = Some(10.0 * 1.5f64.powi(round as i32));
            b.on_ack(&view(30_000.0, round, i == 9), &AckEvent { ce_bytes: MSS, ..ack(MSS, growing, 200_000, 0) });
        }
    }
    assert_eq!(b.mode, Mode::Startup);
}

fn cfg() -> CcConfig {
    CcConfig { mss: MSS, initial_window: 10 * MSS, initial_ssthresh: Ssthresh::Infinite, loss_window: MSS, cwnd_validation: false, linux_ss_clamp: false }
}

fn loss(now: u64) -> CongestionEvent {
    CongestionEvent { now: Time(now), kind: CongestionKind::FastRetransmit, flight_size: 60_000, enter_recovery: true }
}

/// A controller over bbrv3 whose first ACK fixed the first round's end at 30 kB, then a fast
/// retransmit at cwnd 11 kB, a SACK that fixes the loss round's end at SND.NXT = 60 kB, and
/// `ranges` retransmissions of 1 kB each (`contiguous`: in one run).
fn in_recovery(ranges: u64, contiguous: bool) -> Controller {
    let mut c = Controller::new(cfg(), Startup::BbrV3(BbrV3::new(BbrV3Config::default())), Avoidance::Reno(Reno::default()));
    c.on_ack(&AckEvent { now: Time(40_000_000), ack_seq: MSS, snd_nxt: 30_000, ..ack(MSS, Some(10.0), 29_000, MSS) });
    let cwnd = c.cwnd();
    c.on_congestion(&loss(50_000_000));
    assert_eq!((c.phase(), c.cwnd(), c.ssthresh()), (Phase::Recovery, cwnd, Ssthresh::Bytes(cwnd)), "no reduction");
    assert!(c.rides_out_recovery() && c.startup_exit().is_none(), "startup goes on");
    assert_eq!(c.reductions(), 1, "still a congestion event");
    let round = c.round();
    c.on_recovery_ack(&AckEvent { now: Time(55_000_000), ack_seq: MSS, snd_nxt: 60_000, ..ack(0, None, 59_000, 20_000) }, 35_000);
    assert_eq!(c.round(), round, "35 kB SACKed is past the first round's 30 kB, but the loss started a new round");
    for i in 0..ranges {
        let seq = 40_000 + i * if contiguous { MSS } else { 3 * MSS };
        c.on_retransmit(seq, MSS);
    }
    c
}

/// The recovery ACK that ends the loss round (a SACK past 60 kB while the cumulative ACK is
/// still at 31 kB), with `delivered` bytes delivered and 60 kB in flight.
fn recovery_round_end(c: &mut Controller, delivered: u64) {
    let round = c.round();
    c.on_recovery_ack(&AckEvent { now: Time(90_000_000), ack_seq: 31_000, snd_nxt: 80_000, ..ack(MSS, Some(10.0), 60_000, delivered) }, 61_000);
    assert_eq!(c.round(), round + 1);
}

#[test]
fn six_lost_ranges_and_over_2_percent_lost_in_a_round_of_recovery_start_drain_with_reason_loss() {
    let mut c = in_recovery(6, false);
    // 6 kB lost of 6 + 60 kB: 9 %.
    recovery_round_end(&mut c, 60_000);
    let drain = 0.5 * bps(10.0) * 0.99;
    assert!(c.pacing_rate().is_some_and(|r| close(r, drain)), "DRAIN pacing from the recovery's ACK: {:?}", c.pacing_rate());
    assert_eq!((c.phase(), c.startup_exit()), (Phase::Recovery, None), "60 kB in flight > BDP 50 kB: still DRAIN");
    // The recovery ends: DRAIN goes on in slow start with the window the loss found.
    c.on_recovery_exit(Time(100_000_000), 11_000.0);
    assert_eq!((c.phase(), c.ssthresh(), c.startup_exit()), (Phase::SlowStart, Ssthresh::Infinite, None));
    c.on_ack(&AckEvent { now: Time(110_000_000), ack_seq: 40_000, snd_nxt: 80_000, ..ack(MSS, Some(10.0), 50_001, 70_000) });
    assert_eq!(c.startup_exit(), None);
    c.on_ack(&AckEvent { now: Time(120_000_000), ack_seq: 41_000, snd_nxt: 80_000, ..ack(MSS, Some(10.0), 50_000, 71_000) });
    let exit = c.startup_exit().expect("handed over");
    assert_eq!((exit.reason, exit.time), (ExitReason::Loss, Time(120_000_000)));
    assert!(close(c.cwnd(), 50_000.0) && close(c.ssthresh().as_f64(), 50_000.0), "cwnd {} ssthresh {:?}", c.cwnd(), c.ssthresh());
    assert_eq!((c.phase(), c.pacing_rate()), (Phase::CongestionAvoidance, None));
}

#[test]
fn the_loss_test_waits_for_the_round_that_began_with_the_loss() {
    let mut c = in_recovery(10, false);
    // SACKed up to 59 kB: the loss round (ending at 60 kB) goes on, so no test yet.
    c.on_recovery_ack(&AckEvent { now: Time(80_000_000), ack_seq: 31_000, snd_nxt: 80_000, ..ack(MSS, Some(10.0), 60_000, 50_000) }, 59_000);
    assert!(c.pacing_rate().is_some_and(|r| close(r, 2.77 * bps(10.0) * 0.99)), "still STARTUP");
    recovery_round_end(&mut c, 60_000);
    assert!(c.pacing_rate().is_some_and(|r| close(r, 0.5 * bps(10.0) * 0.99)), "DRAIN");
}

#[test]
fn fewer_ranges_or_a_low_loss_rate_leave_startup_running_after_the_recovery() {
    // Five discontiguous ranges; six segments in one range; six ranges of 1 kB of 300 kB (2 %,
    // not above the threshold).
    for (ranges, contiguous, delivered) in [(5, false, 60_000), (6, true, 60_000), (6, false, 294_000)] {
        let mut c = in_recovery(ranges, contiguous);
        recovery_round_end(&mut c, delivered);
        let startup = 2.77 * bps(10.0) * 0.99;
        assert!(c.pacing_rate().is_some_and(|r| close(r, startup)), "{ranges} ranges, contiguous {contiguous}: STARTUP pacing {:?}", c.pacing_rate());
        c.on_recovery_exit(Time(100_000_000), 11_000.0);
        assert_eq!((c.phase(), c.ssthresh(), c.startup_exit()), (Phase::SlowStart, Ssthresh::Infinite, None));
    }
    // Outside a recovery the loss test never runs.
    let mut c = Controller::new(cfg(), Startup::BbrV3(BbrV3::new(BbrV3Config::default())), Avoidance::Reno(Reno::default()));
    c.on_ack(&AckEvent { now: Time(40_000_000), ack_seq: MSS, snd_nxt: 30_000, ..ack(MSS, Some(10.0), 29_000, MSS) });
    for i in 0..10 {
        c.on_retransmit(40_000 + 3 * i * MSS, MSS);
    }
    c.on_ack(&AckEvent { now: Time(90_000_000), ack_seq: 31_000, snd_nxt: 80_000, ..ack(MSS, Some(10.0), 60_000, 20_000) });
    assert!(c.pacing_rate().is_some_and(|r| close(r, 2.77 * bps(10.0) * 0.99)));
}

#[test]
fn drain_may_end_inside_the_recovery_which_then_ends_with_the_bdp() {
    let mut c = in_recovery(6, false);
    recovery_round_end(&mut c, 60_000);
    c.on_recovery_ack(&AckEvent { now: Time(95_000_000), ack_seq: 32_000, snd_nxt: 80_000, ..ack(MSS, Some(10.0), 50_000, 61_000) }, 62_000);
    let exit = c.startup_exit().expect("DRAIN ended in the recovery");
    assert_eq!(exit.reason, ExitReason::Loss);
    assert_eq!((c.phase(), c.ssthresh(), c.rides_out_recovery()), (Phase::Recovery, Ssthresh::Bytes(50_000.0), false));
    c.on_recovery_exit(Time(100_000_000), 50_000.0);
    assert_eq!((c.phase(), c.cwnd()), (Phase::CongestionAvoidance, 50_000.0));
}

#[test]
fn a_timeout_during_a_ridden_recovery_ends_startup() {
    let mut c = in_recovery(2, false);
    c.on_congestion(&CongestionEvent { now: Time(300_000_000), kind: CongestionKind::Timeout, flight_size: 60_000, enter_recovery: false });
    assert_eq!(c.startup_exit().map(|e| e.reason), Some(ExitReason::Timeout));
    assert!(!c.rides_out_recovery());
    assert_eq!((c.phase(), c.cwnd(), c.ssthresh()), (Phase::SlowStart, MSS as f64, Ssthresh::Bytes(11_000.0)), "ssthresh never above the episode's");
    // A recovery ACK now does nothing; a slow-start ACK grows by one SMSS (RFC 5681).
    c.on_recovery_ack(&ack(MSS, Some(10.0), 0, 0), 0);
    c.on_ack(&AckEvent { ack_seq: 50_000, snd_nxt: 51_000, ..ack(5 * MSS, Some(10.0), 1_000, 90_000) });
    assert_eq!(c.cwnd(), 2.0 * MSS as f64);
}

#[test]
fn other_startups_still_end_on_a_loss_and_see_no_recovery_acks() {
    let mut c = crate::testkit::controller(Startup::SlowStart(crate::startup::SlowStart::default()), 10, Ssthresh::Infinite);
    c.on_congestion(&loss(1));
    assert!(!c.rides_out_recovery());
    assert_eq!(c.startup_exit().map(|e| e.reason), Some(ExitReason::Loss));
    let before = (c.round(), c.cwnd(), c.ce_bytes());
    c.on_recovery_ack(&AckEvent { ack_seq: 100_000, snd_nxt: 200_000, ce_bytes: 5, ..ack(MSS, Some(10.0), 0, 0) }, 150_000);
    assert_eq!((c.round(), c.cwnd(), c.ce_bytes()), before);
}
