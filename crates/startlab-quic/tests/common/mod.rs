//! The scripted path the whole-transfer tests share: the QUIC sender, a drop-tail bottleneck with
//! a fixed one-way delay, and the receiver's ACK policy, as a tiny event loop. An [`Observer`]
//! sees every packet sent, every ACK and every timer (the RFC 9002 reference model's hook).

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use startlab_cc::avoidance::{Avoidance, Reno};
use startlab_cc::startup::{Bc, Startup};
use startlab_cc::{CcConfig, Controller, Ssthresh};
use startlab_quic::ack::{AckFrame, AckPolicy, Ecn, Receiver};
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64;
use startlab_quic::sender::{initial_window, Sender, SenderConfig, Transmit};
use startlab_quic::Space;
use startlab_units::{Dur, Rate, Time};

pub const MDS: u32 = 1472;

/// What the path does to a packet besides queueing it.
#[derive(Clone, Copy, Default)]
pub struct Impair {
    /// Drop these packet numbers (first transmission or not).
    pub drop_pns: &'static [u64],
    /// Drop everything sent in `[from, to)` (seconds).
    pub blackout: Option<(f64, f64)>,
    /// Mark CE when the queue holds more than this many packets.
    pub ce_above: Option<usize>,
    /// Drop each packet with this probability, from a seeded stream.
    pub random: Option<(u64, f64)>,
}

pub struct Path {
    pub rate: Rate,
    pub delay: Dur,
    pub buffer: usize,
    pub impair: Impair,
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

pub struct Run {
    pub sender: Sender,
    /// Drops at the bottleneck (overflow, listed or blackout).
    pub drops: u64,
    /// Packets marked CE.
    pub marks: u64,
    /// When each packet left the sender.
    pub sends: Vec<Time>,
    pub end: Time,
    /// cwnd (bytes) after each ACK, with the time.
    pub cwnd: Vec<(Time, f64)>,
}

pub fn controller(mds: u32) -> Controller {
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

/// Sees what the sender does.
pub trait Observer {
    /// A packet left at `now`.
    fn sent(&mut self, _now: Time, _tx: &Transmit) {}
    /// An ACK frame was handed to the sender at `now` (after it processed it).
    fn acked(&mut self, _now: Time, _frame: &AckFrame, _sender: &Sender) {}
    /// The sender's timer fired at `now` (after it handled it).
    fn timer(&mut self, _now: Time, _sender: &Sender) {}
}

impl Observer for () {}

pub fn transfer(size: u64, path: Path, cfg: SenderConfig, limit: Time) -> Run {
    transfer_observed(size, path, cfg, controller(MDS), limit, &mut ())
}

pub fn transfer_observed(size: u64, path: Path, cfg: SenderConfig, cc: Controller, limit: Time, obs: &mut impl Observer) -> Run {
    let mut sender = Sender::new(SenderConfig { size: Some(size), max_datagram_size: MDS, ..cfg }, cc);
    let mut rng = path.impair.random.map(|(seed, p)| (Pcg64::seed_from_u64(seed), p));
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
            obs.sent(now, &tx);
            while queued.front().is_some_and(|&t| t <= now) {
                queued.pop_front();
            }
            let t = now.as_secs_f64();
            let listed = path.impair.drop_pns.contains(&tx.pn);
            let dark = path.impair.blackout.is_some_and(|(a, b)| t >= a && t < b);
            let unlucky = rng.as_mut().is_some_and(|(r, p)| r.random::<f64>() < *p);
            if listed || dark || unlucky || queued.len() >= path.buffer {
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
                obs.acked(now, &frames[i], &sender);
                cwnd.push((now, sender.controller().cwnd()));
            }
            Ev::SenderTimer => {
                if armed_sender.is_some_and(|a| a <= now) {
                    armed_sender = None;
                    sender.on_timeout(now);
                    obs.timer(now, &sender);
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

pub fn path(mbps: u64, one_way_ms: u64, buffer: usize, impair: Impair) -> Path {
    Path { rate: Rate(mbps * 1_000_000), delay: Dur::from_millis(one_way_ms), buffer, impair }
}

