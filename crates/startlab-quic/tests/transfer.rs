//! Whole transfers through a scripted path (tests/common): clean completion, one reduction per
//! loss burst, a tail loss repaired by a probe, persistent congestion after a blackout, ECN, and
//! pacing.

mod common;
use common::{path, transfer, Impair, Run, MDS};
use startlab_cc::Phase;
use startlab_quic::sender::SenderConfig;
use startlab_units::Time;

#[test]
fn a_clean_transfer_completes_in_slow_start_doubling_per_round() {
    let r = transfer(1_000_000, path(100, 20, 1000, Impair::default()), SenderConfig::default(), Time(10_000_000_000));
    assert!(r.sender.is_done(), "not done by {:?}", r.end);
    let s = r.sender.stats();
    assert_eq!((s.packets_lost, s.congestion_events, s.ptos, r.drops), (0, 0, 0, 0));
    assert_eq!(r.sender.acked_bytes(), 1_000_000);
    // 1 MB in 1.4 kB packets from a 14 720-byte window doubling per 40 ms round: about 6 rounds
    // (10, 20, 40, 80, 160, 320 packets) plus the handshake-free start.
    let rounds = r.end.as_secs_f64() / 0.040;
    assert!((5.5..8.5).contains(&rounds), "{rounds} rounds");
    assert_eq!(r.sender.controller().phase(), Phase::SlowStart);
}

#[test]
fn a_burst_of_losses_is_one_congestion_event_and_every_byte_arrives() {
    let drops: &'static [u64] = &[40, 41, 42, 43, 44, 45, 46, 47, 48, 49];
    let r = transfer(2_000_000, path(100, 20, 1000, Impair { drop_pns: drops, ..Impair::default() }), SenderConfig::default(), Time(10_000_000_000));
    assert!(r.sender.is_done());
    let s = r.sender.stats();
    assert_eq!(s.congestion_events, 1, "{s:?}");
    assert_eq!(s.packets_lost, 10);
    assert!(s.retransmissions >= 10);
    assert_eq!(r.sender.controller().reductions(), 1);
    assert_eq!(s.persistent_congestion, 0);
}

#[test]
fn a_lost_tail_is_repaired_by_a_probe_timeout_without_reducing_the_window() {
    // 30 packets; the last two are lost: nothing later is acknowledged, so only a PTO finds them.
    let size = 30 * 1400;
    let pns: &'static [u64] = &[28, 29];
    let r = transfer(size, path(100, 20, 1000, Impair { drop_pns: pns, ..Impair::default() }), SenderConfig::default(), Time(10_000_000_000));
    assert!(r.sender.is_done());
    let s = r.sender.stats();
    assert!(s.ptos >= 1, "{s:?}");
    // The probes' ACKs declare the tail lost (packet threshold): one congestion event.
    assert!(s.packets_lost >= 1 && s.congestion_events == 1, "{s:?}");
}

#[test]
fn a_blackout_longer_than_three_pto_periods_is_persistent_congestion() {
    // A 100-packet buffer keeps the RTT (and so the PTO period) near 60 ms; the probes sent into
    // the 4 s blackout are lost too, so the lost run spans seconds, far above 3 PTO periods.
    let r = transfer(20_000_000, path(50, 20, 100, Impair { blackout: Some((0.5, 4.5)), ..Impair::default() }), SenderConfig::default(), Time(30_000_000_000));
    assert!(r.sender.is_done());
    let s = r.sender.stats();
    assert!(s.persistent_congestion >= 1, "{s:?}");
    // Right after it the window is the minimum window, 2·max_datagram_size.
    let min = r.cwnd.iter().filter(|(t, _)| t.as_secs_f64() > 4.5).map(|&(_, w)| w).fold(f64::INFINITY, f64::min);
    // (The ACK that establishes it also acknowledges the probe, which slow start adds.)
    assert!(min <= 3.0 * MDS as f64 + 1.0, "smallest window after the blackout {min}");
    assert!(r.sender.controller().reductions() >= 1);
}

#[test]
fn a_round_of_ce_marks_is_one_reduction_and_loses_nothing() {
    let r = transfer(5_000_000, path(50, 20, 1000, Impair { ce_above: Some(20), ..Impair::default() }), SenderConfig::default(), Time(20_000_000_000));
    assert!(r.sender.is_done());
    let s = r.sender.stats();
    assert_eq!((s.packets_lost, r.drops), (0, 0));
    // Slow start overshoots the 20-packet mark threshold by far: many packets are marked in the
    // round, the window is halved once (B.7: one event per recovery period).
    assert!(r.marks > 20, "{} marks", r.marks);
    assert_eq!((s.congestion_events, r.sender.controller().reductions()), (1, 1), "{s:?}");
    assert_eq!(r.sender.controller().startup_exit().map(|e| e.reason), Some(startlab_cc::ExitReason::Ecn));
}

#[test]
fn pacing_spreads_the_window_once_the_rtt_is_known() {
    let run = |pacing: bool| transfer(3_000_000, path(100, 20, 1000, Impair::default()), SenderConfig { pacing, ..SenderConfig::default() }, Time(10_000_000_000));
    let (paced, bursty) = (run(true), run(false));
    assert!(paced.sender.is_done() && bursty.sender.is_done());
    // Packets that left at the same instant as the one before them, after the first round trip.
    let bursts = |r: &Run| r.sends.windows(2).filter(|w| w[0] == w[1] && w[1].as_secs_f64() > 0.05).count();
    assert_eq!(bursts(&paced), 0);
    assert!(bursts(&bursty) > 100, "{}", bursts(&bursty));
    // Before the first sample the initial window leaves at once either way.
    assert_eq!(paced.sends.iter().filter(|&&t| t == Time::ZERO).count(), 10);
}
