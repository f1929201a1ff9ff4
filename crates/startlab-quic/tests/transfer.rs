//! Whole transfers through a scripted path: the QUIC sender, a drop-tail bottleneck with a fixed
//! one-way delay, and the receiver's ACK policy, as a tiny event loop. Each test checks one
//! behaviour of RFC 9002 end to end: clean completion, one reduction per loss burst, a tail loss
//! repaired by a probe, persistent congestion after a blackout, and ECN.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use startlab_cc::avoidance::{Avoidance, Reno};
use startlab_cc::startup::{Bc, Startup};
use startlab_cc::{CcConfig, Controller, Phase, Ssthresh};
use startlab_quic::ack::{AckPolicy, Ecn, Receiver};
use startlab_quic::sender::{initial_window, Sender, SenderConfig};
use startlab_quic::Space;
use startlab_units::{Dur, Rate, Time};

const MDS: u32 = 1472;

/// What the path does to a packet besides queueing it.
#[derive(Clone, Copy, Default)]
struct Impair {
    /// Drop these packet numbers (first transmission or not).
    drop_pns: &'static [u64],
    /// Drop everything sent in `[from, to)` (seconds).
    blackout: Option<(f64, f64)>,
    /// Mark CE when the queue holds more than this many packets.
    ce_above: Option<usize>,
}

struct Path {
    rate: Rate,
    delay: Dur,
    buffer: usize,
    impair: Impair,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A data packet reaches the receiver: pn, CE.
    Data(u64, bool),
    /// An ACK frame reaches the sender (index into the frames list).
    Ack(usize),
    /// The sender's or the receiver's timer.
    SenderTimer,
    ReceiverTimer,
}

struct Run {
    sender: Sender,
    /// Drops at the bottleneck (overflow, listed or blackout).
    drops: u64,
    /// Packets marked CE.
    marks: u64,
    /// When each packet left the sender.
    sends: Vec<Time>,
    end: Time,
    /// cwnd (bytes) after each ACK, with the time.
    cwnd: Vec<(Time, f64)>,
}

fn controller(mds: u32) -> Controller {
    Controller::new(
        CcConfig {
            mss: mds as u64,
            initial_window: initial_window(mds),
            initial_ssthresh: Ssthresh::Infinite,
            loss_window: 2 * mds as u64,
            cwnd_validation: false,
            linux_ss_clamp: false,
        },
        Startup::Bc(Bc::new()),
        Avoidance::Reno(Reno::default()),
    )
}

fn transfer(size: u64, path: Path, cfg: SenderConfig, limit: Time) -> Run {
    let mut sender = Sender::new(SenderConfig { size: Some(size), max_datagram_size: MDS, ..cfg }, controller(MDS));
    let mut receiver = Receiver::new(Space::AppData, AckPolicy::default());
    let mut q: BinaryHeap<Reverse<(Time, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut frames = Vec::new();
    // The bottleneck: when it is next free, and the departure times of the packets queued.
    let mut busy = Time::ZERO;
    let mut queued: VecDeque<Time> = VecDeque::new();
    let mut drops = 0;
    let mut marks = 0;
    let mut sends = Vec::new();
    let mut cwnd = Vec::new();
    let mut now = Time::ZERO;
    let mut armed_sender: Option<Time> = None;
    let mut armed_receiver: Option<Time> = None;
    loop {
        // Send what the sender allows now.
        while let Some(tx) = sender.poll_transmit(now) {
            sends.push(now);
            while queued.front().is_some_and(|&t| t <= now) {
                queued.pop_front();
            }
            let t = now.as_secs_f64();
            let listed = path.impair.drop_pns.contains(&tx.pn);
            let dark = path.impair.blackout.is_some_and(|(a, b)| t >= a && t < b);
            if listed || dark || queued.len() >= path.buffer {
                drops += 1;
                continue;
            }
            let ce = path.impair.ce_above.is_some_and(|n| queued.len() > n);
            marks += ce as u64;
            let start = busy.max(now);
            busy = start + path.rate.tx_time(tx.size as u64 + 28);
            queued.push_back(start);
            seq += 1;
            q.push(Reverse((busy + path.delay, seq, Ev::Data(tx.pn, ce))));
        }
        let st = sender.next_timeout(now);
        if st != armed_sender {
            if let Some(t) = st {
                seq += 1;
                q.push(Reverse((t, seq, Ev::SenderTimer)));
            }
            armed_sender = st;
        }
        let rt = receiver.ack_deadline();
        if rt != armed_receiver {
            if let Some(t) = rt {
                seq += 1;
                q.push(Reverse((t, seq, Ev::ReceiverTimer)));
            }
            armed_receiver = rt;
        }
        if sender.is_done() {
            break;
        }
        let Some(Reverse((t, _, ev))) = q.pop() else { break };
        if t > limit {
            break;
        }
        now = t;
        match ev {
            Ev::Data(pn, ce) => {
                let (_, ack) = receiver.on_packet(now, pn, true, if ce { Ecn::Ce } else { Ecn::Ect0 });
                if let Some(a) = ack {
                    frames.push(a);
                    seq += 1;
                    q.push(Reverse((now + path.delay, seq, Ev::Ack(frames.len() - 1))));
                }
            }
            Ev::Ack(i) => {
                sender.on_ack(now, &frames[i]);
                cwnd.push((now, sender.controller().cwnd()));
            }
            Ev::SenderTimer => {
                if armed_sender.is_some_and(|a| a <= now) {
                    armed_sender = None;
                    sender.on_timeout(now);
                }
            }
            Ev::ReceiverTimer => {
                if armed_receiver.is_some_and(|a| a <= now) {
                    armed_receiver = None;
                    if let Some(a) = receiver.on_timer(now) {
                        frames.push(a);
                        seq += 1;
                        q.push(Reverse((now + path.delay, seq, Ev::Ack(frames.len() - 1))));
                    }
                }
            }
        }
    }
    Run { sender, drops, marks, sends, end: now, cwnd }
}

fn path(mbps: u64, one_way_ms: u64, buffer: usize, impair: Impair) -> Path {
    Path { rate: Rate(mbps * 1_000_000), delay: Dur::from_millis(one_way_ms), buffer, impair }
}

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
