//! Active queue management that decides when a packet leaves, not only when it arrives: CoDel
//! (RFC 8289), FQ-CoDel (RFC 8290), PIE (RFC 8033) and DualPI2 (RFC 9332). A link direction whose
//! queue is one of these holds its waiting packets here and asks for the next one each time the
//! link goes free (`net::Channel::dequeue`); drop-tail and RED keep the cheaper
//! departure-at-arrival FIFO of `net.rs`.
//!
//! Each discipline is a state machine over [`QPacket`]s with the time passed in, so the simulator
//! and the testbed's router (crates/startlab-router) run the same code. Drops and CE marks that a
//! call decides for packets other than the one it returns are reported in an [`Events`] buffer.

pub mod dualpi2;

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
}

/// Drops and marks decided during one call, for packets other than the one the call returns.
#[derive(Clone, Debug, Default)]
pub struct Events {
    /// Dropped packets with why, in the order decided.
    pub drops: Vec<(QPacket, DropCause)>,
}

/// A FIFO of packets with its length in packets and bytes: the queue under every discipline here
/// (FQ-CoDel keeps one per flow bucket).
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    q: VecDeque<QPacket>,
    bytes: u64,
}

impl Fifo {
    /// Appends at the tail.
    pub fn push(&mut self, p: QPacket) {
        self.bytes += p.size as u64;
        self.q.push_back(p);
    }

    /// Takes the head.
    pub fn pop(&mut self) -> Option<QPacket> {
        let p = self.q.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    /// The head, if any.
    pub fn head(&self) -> Option<&QPacket> {
        self.q.front()
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Nothing waits.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// How long a packet waited: from its enqueue to `now`.
pub fn sojourn(p: &QPacket, now: Time) -> Dur {
    now.saturating_since(p.enqueued)
}
