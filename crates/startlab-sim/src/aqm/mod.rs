//! Active queue management that decides when a packet leaves, not only when it arrives: CoDel
//! (RFC 8289), FQ-CoDel (RFC 8290), PIE (RFC 8033) and DualPI2 (RFC 9332). A link direction whose
//! queue is one of these holds its waiting packets here and asks for the next one each time the
//! link goes free (`net::Channel::dequeue`); drop-tail and RED keep the cheaper
//! departure-at-arrival FIFO of `net.rs`.
//!
//! Each discipline is a state machine over [`QPacket`]s with the time passed in, so the simulator
//! and the testbed's router (crates/startlab-router) run the same code. Drops and CE marks that a
//! call decides for packets other than the one it returns are reported in an [`Events`] buffer.

pub mod codel;
pub mod dualpi2;
pub mod fq_codel;
pub mod pie;

use rand_pcg::Pcg64;
use startlab_units::{Dur, Time};
use std::collections::VecDeque;

/// The ECN field of a packet's IP header (RFC 3168; ECT(1) is L4S's identifier, RFC 9331).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ecn {
    /// Not ECN-capable.
    NotEct,
    /// ECT(0): classic ECN.
    Ect0,
    /// ECT(1): L4S.
    Ect1,
    /// Congestion Experienced.
    Ce,
}

impl Ecn {
    /// ECN-capable (ECT(0), ECT(1) or already CE): a mark may replace a drop.
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// A packet as a queue discipline sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QPacket {
    /// The owner's handle (the simulator's arena index, the router's frame slot).
    pub pkt: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// The flow it belongs to (a hash of its 5-tuple), for flow queueing.
    pub flow: u64,
    /// Its ECN field; a discipline that marks it sets [`Ecn::Ce`].
    pub ecn: Ecn,
    /// When it entered the queue (for sojourn times).
    pub enqueued: Time,
}

/// Why a discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The AQM's control law (CoDel, PIE, PI²), at enqueue or dequeue.
    Aqm,
    /// The buffer (a packet or byte limit, FQ-CoDel's memory limit) was full.
    Overflow,
    /// The link's impairment lost it after the discipline let it go (docs/IMPAIRMENTS.md).
    Impairment,
}

/// Drops and marks decided during one call, for packets other than the one the call returns.
#[derive(Clone, Debug, Default)]
pub struct Events {
    /// Dropped packets with why, in the order decided.
    pub drops: Vec<(QPacket, DropCause)>,
}

/// A FIFO of packets with its length in packets and bytes: the queue under every discipline here
/// (FQ-CoDel keeps one per flow bucket).
///
/// The head packet is held in the struct itself, the rest in a ring buffer: a flow queue of
/// FQ-CoDel mostly holds no packet or one, and then its operations touch no memory but its own
/// (with a thousand flows, the buffers are all cold).
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    /// The head (`None`: the queue is empty, and so is `rest`).
    head: Option<QPacket>,
    /// The packets behind the head, in order.
    rest: VecDeque<QPacket>,
    bytes: u64,
}

impl Fifo {
    /// Appends at the tail.
    pub fn push(&mut self, p: QPacket) {
        self.bytes += p.size as u64;
        if self.head.is_none() {
            self.head = Some(p);
        } else {
            self.rest.push_back(p);
        }
    }

    /// Takes the head.
    pub fn pop(&mut self) -> Option<QPacket> {
        let p = self.head.take()?;
        self.bytes -= p.size as u64;
        self.head = self.rest.pop_front();
        Some(p)
    }

    /// The head, if any.
    pub fn head(&self) -> Option<&QPacket> {
        self.head.as_ref()
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.head.is_some() as usize + self.rest.len()
    }

    /// Nothing waits.
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &QPacket> + '_ {
        self.head.iter().chain(self.rest.iter())
    }
}

/// How long a packet waited: from its enqueue to `now`.
pub fn sojourn(p: &QPacket, now: Time) -> Dur {
    now.saturating_since(p.enqueued)
}

/// A link direction's dequeue-time queue discipline.
#[derive(Clone, Debug)]
pub enum Qdisc {
    /// CoDel over one FIFO.
    CoDel(codel::CoDelQueue),
    /// FQ-CoDel.
    FqCoDel(Box<fq_codel::FqCoDel>),
    /// PIE over one FIFO.
    Pie(Box<pie::PieQueue>),
    /// DualPI2: the L4S and Classic queues, coupled.
    DualPi2(Box<dualpi2::DualPi2>),
}

impl Qdisc {
    /// The kind's name in scenarios.
    pub fn kind(&self) -> &'static str {
        match self {
            Qdisc::CoDel(_) => "codel",
            Qdisc::FqCoDel(_) => "fq-codel",
            Qdisc::Pie(_) => "pie",
            Qdisc::DualPi2(_) => "dualpi2",
        }
    }

    /// Offers a packet; drops (of it, or of others to make room) go to `ev`. `rng`: the
    /// discipline's own random stream.
    pub fn enqueue(&mut self, p: QPacket, rng: &mut Pcg64, ev: &mut Events) {
        match self {
            Qdisc::CoDel(q) => {
                if !q.enqueue(p) {
                    ev.drops.push((p, DropCause::Overflow));
                }
            }
            Qdisc::FqCoDel(q) => q.enqueue(p, ev),
            Qdisc::Pie(q) => q.enqueue(p, rng, ev),
            Qdisc::DualPi2(q) => q.enqueue(p.enqueued, p, rng, ev),
        }
    }

    /// The next packet to send at `now`; the packets dropped on the way go to `ev`.
    pub fn dequeue(&mut self, now: Time, rng: &mut Pcg64, ev: &mut Events) -> Option<QPacket> {
        match self {
            Qdisc::CoDel(q) => q.dequeue(now, ev),
            Qdisc::FqCoDel(q) => q.dequeue(now, ev),
            Qdisc::Pie(q) => q.dequeue(now),
            Qdisc::DualPi2(q) => q.dequeue(now, rng, ev),
        }
    }

    /// Packets waiting.
    pub fn len_pkts(&self) -> u64 {
        match self {
            Qdisc::CoDel(q) => q.fifo.len() as u64,
            Qdisc::FqCoDel(q) => q.len_pkts(),
            Qdisc::Pie(q) => q.fifo.len() as u64,
            Qdisc::DualPi2(q) => q.len() as u64,
        }
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        match self {
            Qdisc::CoDel(q) => q.fifo.bytes(),
            Qdisc::FqCoDel(q) => q.len_bytes(),
            Qdisc::Pie(q) => q.fifo.bytes(),
            Qdisc::DualPi2(q) => q.bytes(),
        }
    }

    /// Every packet waiting, in no particular order.
    pub fn packets(&self) -> Box<dyn Iterator<Item = &QPacket> + '_> {
        match self {
            Qdisc::CoDel(q) => Box::new(q.fifo.iter()),
            Qdisc::FqCoDel(q) => Box::new(q.packets()),
            Qdisc::Pie(q) => Box::new(q.fifo.iter()),
            Qdisc::DualPi2(q) => Box::new(q.packets()),
        }
    }

    /// When the discipline's next periodic update is due (PIE's and PI²'s probability), if it
    /// has one.
    pub fn next_timer(&self) -> Option<Time> {
        match self {
            Qdisc::CoDel(_) | Qdisc::FqCoDel(_) => None,
            Qdisc::Pie(q) => Some(q.pie.next_update()),
            Qdisc::DualPi2(q) => Some(q.next_update()),
        }
    }

    /// Runs every periodic update due by `now`, each at its own time (the queue has not changed
    /// since the earliest of them: the owner calls this before every enqueue and dequeue).
    pub fn run_timers(&mut self, now: Time) {
        while let Some(t) = self.next_timer().filter(|&t| t <= now) {
            match self {
                Qdisc::Pie(q) => q.update(t),
                Qdisc::DualPi2(q) => q.update(t),
                Qdisc::CoDel(_) | Qdisc::FqCoDel(_) => unreachable!("no timer"),
            }
        }
    }
}
