use super::*;
use crate::{AckPolicy, Receiver, ReceiverConfig};
use proptest::prelude::*;
use std::collections::VecDeque;
use startlab_cc::avoidance::{Avoidance, Reno};
use startlab_cc::startup::{SlowStart, Startup};
use startlab_cc::{CcConfig, Ssthresh};

/// Drives a SACK sender and receiver over a path with a fixed one-way delay that drops the
/// data transmissions whose (1-based) index is in `drops`; the reference module checks the
/// scoreboard at every ACK. Returns the receiver's delivered bytes and the sender's counters.
fn transfer(mss: u32, size: u64, iw: u64, dupthresh: u32, delayed: bool, drops: &[u64]) -> (u64, SenderStats) {
    transfer_with(Recovery::Sack, mss, size, iw, dupthresh, delayed, drops)
}

/// [`transfer`] under any recovery (the RACK-TLP counters are checked at every ACK).
fn transfer_with(recovery: Recovery, mss: u32, size: u64, iw: u64, dupthresh: u32, delayed: bool, drops: &[u64]) -> (u64, SenderStats) {
    let (rcv, snd) = transfer_ends(recovery, mss, size, iw, dupthresh, delayed, drops);
    (rcv.delivered(), snd.stats())
}

/// [`transfer_with`], returning both ends as they are at the end.
fn transfer_ends(recovery: Recovery, mss: u32, size: u64, iw: u64, dupthresh: u32, delayed: bool, drops: &[u64]) -> (Receiver, Sender) {
    let cc = Controller::new(
        CcConfig {
            mss: mss as u64,
            initial_window: iw * mss as u64,
            initial_ssthresh: Ssthresh::Infinite,
            loss_window: mss as u64,
            cwnd_validation: true,
            linux_ss_clamp: false,
        },
        Startup::SlowStart(SlowStart::default()),
        Avoidance::Reno(Reno::default()),
    );
    let cfg = SenderConfig {
        mss,
        size: Some(size),
        recovery,
        rto: RtoConfig::default(),
        limited_transmit: true,
        dupthresh,
        handshake: false,
        newreno_impatient: true,
        pacing: false,
        quick_start: None,
        ecn: EcnMode::Off,
        app_limited: false,
        idle_restart: IdleRestart::Rfc5681,
        startup_after_idle: false,
        startup_min_response: 0,
    };
    let mut snd = Sender::new(cfg, cc);
    let policy = if delayed { AckPolicy::Delayed { timeout: Dur::from_millis(200) } } else { AckPolicy::EveryPacket };
    let mut rcv = Receiver::new(ReceiverConfig { policy, sack: true, max_sack_blocks: 3, rwnd: u64::MAX, mss: mss as u64, accecn: false });
    let delay = Dur::from_millis(10);
    // In-flight data and ACKs, each with its arrival time, in arrival order (FIFO path).
    let mut data: VecDeque<(Time, Segment)> = VecDeque::new();
    let mut acks: VecDeque<(Time, Ack)> = VecDeque::new();
    let mut now = Time::ZERO;
    let (mut sent, mut reductions) = (0, 0);
    snd.start(now);
    for _ in 0..200_000 {
        while let Some(seg) = snd.poll_transmit(now) {
            sent += 1;
            if !drops.contains(&sent) {
                data.push_back((now + delay, seg));
            }
        }
        if snd.completed_at().is_some() {
            break;
        }
        let next = [data.front().map(|d| d.0), acks.front().map(|a| a.0), snd.next_timeout(), rcv.next_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("something is pending");
        now = next;
        if data.front().is_some_and(|d| d.0 == now) {
            let (_, seg) = data.pop_front().unwrap();
            if let Some(a) = rcv.on_segment(now, seg.seq, seg.len) {
                acks.push_back((now + delay, a));
            }
        } else if acks.front().is_some_and(|a| a.0 == now) {
            let (_, a) = acks.pop_front().unwrap();
            snd.on_ack(now, &a);
        } else if rcv.next_timeout() == Some(now) {
            if let Some(a) = rcv.on_timer(now) {
                acks.push_back((now + delay, a));
            }
        } else {
            snd.on_timer(now);
        }
        check_reduction(&snd, &mut reductions);
    }
    (rcv, snd)
}

/// Every congestion event since the last call: it never raised ssthresh above the cwnd it
/// found (but for the 2 SMSS floor), whatever FlightSize was. (A timeout during recovery keeps
/// the episode's ssthresh, which PRR's cwnd may be below: that raises nothing.)
fn check_reduction(snd: &Sender, seen: &mut u64) {
    let cc = snd.cc();
    if cc.reductions() == *seen {
        return;
    }
    *seen = cc.reductions();
    let r = cc.last_reduction().expect("a reduction was recorded");
    let floor = 2.0 * snd.mss() as f64;
    assert!(
        r.ssthresh_after <= r.cwnd_before.max(floor) || r.ssthresh_after <= r.ssthresh_before.as_f64(),
        "{:?} at {:?} raised ssthresh to {} above the cwnd it found, {} ({:?} recovery)",
        r.kind, r.now, r.ssthresh_after, r.cwnd_before, snd.cfg.recovery
    );
    // RACK reduces as Linux does: Reno's half of cwnd at most, never of a larger FlightSize.
    if snd.cfg.recovery.rack() && r.kind == CongestionKind::FastRetransmit {
        assert!(r.ssthresh_after <= (r.cwnd_before / 2.0).max(floor), "{:?} recovery: ssthresh {} from cwnd {}", snd.cfg.recovery, r.ssthresh_after, r.cwnd_before);
    }
}

/// A delayed-ACK receiver holds the ACK of an in-order segment; the next one is dropped, so
/// the ACK that first SACKs (the segment after the hole) also acknowledges the held one. That
/// segment lies below the highest SACKed byte after the ACK but not before it, so it is no
/// reordering (Linux compares with `prior_fack`): RACK keeps a zero reordering window in
/// recovery. Every drop position of a 60-segment transfer, one and two drops.
#[test]
fn rack_sees_no_reordering_on_a_fifo_path() {
    for recovery in [Recovery::RackTlp, Recovery::Linux] {
        for first in 1..60 {
            for drops in [vec![first], vec![first, first + 2]] {
                let (rcv, snd) = transfer_ends(recovery, 1000, 60_000, 10, 3, true, &drops);
                assert_eq!(rcv.delivered(), 60_000);
                assert!(!snd.reordering_seen(), "{recovery:?}, drops {drops:?}: reordering reported on a FIFO path");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Loss bursts and scattered drops, short last segments, every DupThresh: the run-based
    /// scoreboard gives RFC 6675's IsLost(), SetPipe() and NextSeg() at every step (checked by
    /// `reference`), and the transfer completes with every byte delivered.
    #[test]
    fn the_run_based_scoreboard_is_rfc_6675(
        mss in 1u32..1500,
        segments in 1u64..400,
        tail in 0u64..1500,
        iw in 1u64..20,
        dupthresh in 1u32..6,
        delayed in any::<bool>(),
        burst in (1u64..200, 0u64..150),
        scattered in prop::collection::vec(1u64..1200, 0..30),
    ) {
        let size = segments * mss as u64 + tail % mss as u64;
        let mut drops: Vec<u64> = (burst.0..burst.0 + burst.1).collect();
        drops.extend(scattered);
        let (delivered, stats) = transfer(mss, size, iw, dupthresh, delayed, &drops);
        prop_assert_eq!(delivered, size);
        prop_assert!(stats.retransmissions > 0 || drops.iter().all(|&d| d > stats.packets_sent));
    }

    /// The same losses under every other scoreboard recovery: the transfer completes with
    /// every byte delivered, PRR's pipe is RFC 6675's at every ACK, and RACK-TLP's lost and
    /// retransmitted counts match its per-segment marks at every ACK.
    #[test]
    fn every_sack_recovery_delivers_everything(
        recovery in prop::sample::select(vec![
            Recovery::Prr(PrrBound::SlowStart), Recovery::Prr(PrrBound::Conservative), Recovery::Prr(PrrBound::SafeAck),
            Recovery::RackTlp, Recovery::Linux, Recovery::Sack1, Recovery::Ns3Prr,
        ]),
        mss in 1u32..1500,
        segments in 1u64..300,
        iw in 1u64..20,
        delayed in any::<bool>(),
        burst in (1u64..200, 0u64..150),
        scattered in prop::collection::vec(1u64..1200, 0..30),
    ) {
        let mut drops: Vec<u64> = (burst.0..burst.0 + burst.1).collect();
        drops.extend(scattered);
        let size = segments * mss as u64;
        let (delivered, _) = transfer_with(recovery, mss, size, iw, 3, delayed, &drops);
        prop_assert_eq!(delivered, size);
    }

    /// Under every recovery, with Reno's ssthresh = FlightSize/2: no congestion event sets
    /// ssthresh above the cwnd it found (checked at every step by `check_reduction`), even
    /// when SND.UNA stays behind a lost retransmission while the recovery sends on.
    #[test]
    fn no_congestion_event_raises_ssthresh_above_cwnd(
        recovery in prop::sample::select(vec![
            Recovery::Tahoe, Recovery::Reno, Recovery::NewReno, Recovery::Sack,
            Recovery::Prr(PrrBound::SlowStart), Recovery::Prr(PrrBound::Conservative), Recovery::Prr(PrrBound::SafeAck),
            Recovery::RackTlp, Recovery::Linux, Recovery::Sack1, Recovery::Ns3Prr,
        ]),
        segments in 50u64..2000,
        iw in 1u64..20,
        delayed in any::<bool>(),
        bursts in prop::collection::vec((1u64..3000, 0u64..300), 1..4),
    ) {
        let mut drops: Vec<u64> = bursts.iter().flat_map(|&(at, n)| at..at + n).collect();
        drops.sort_unstable();
        let size = segments * 1000;
        let (delivered, _) = transfer_with(recovery, 1000, size, iw, 3, delayed, &drops);
        prop_assert_eq!(delivered, size);
    }
}
