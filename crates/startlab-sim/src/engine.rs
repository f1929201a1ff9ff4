//! The event queue: integer-nanosecond times, ties broken by scheduling order.
//!
//! Determinism contract (DETERMINISM.md): an event is `(time, seq, source)`; `seq` is a counter
//! incremented on every push, so two events at the same nanosecond run in the order they were
//! scheduled, on every machine. Links keep their own FIFO of packets in flight (arrivals on one link
//! are in order), so the heap holds one entry per busy link plus the armed timers, not one per
//! packet.

use startlab_units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What an event wakes up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// The head packet of a link direction reaches the far node.
    Channel(u32),
    /// A flow's sender timer (RTO).
    SenderTimer(u32),
    /// A flow's receiver timer (delayed ACK).
    ReceiverTimer(u32),
    /// A flow's application opens the connection.
    FlowStart(u32),
    /// A cross-traffic source emits a packet.
    Cross(u32),
    /// A flow's client sends its next request (request/response applications).
    Request(u32),
    /// A `[[users]]` user on a new connection per transfer starts its next transfer.
    UserNext(u32),
    /// A link direction with a dequeue-time queue discipline went free: it sends its next packet.
    Dequeue(u32),
    /// A link direction's queue discipline updates its drop probability (PIE, DualPI2).
    QueueTimer(u32),
}

/// The pending-event heap.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Time, u64, Source)>>,
    seq: u64,
}

impl EventQueue {
    /// Schedules `src` at `t`; returns the tie-break sequence number it got.
    pub fn push(&mut self, t: Time, src: Source) -> u64 {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, src)));
        self.seq
    }
    /// Schedules with a sequence number reserved earlier (a link's next head keeps the order it
    /// got when the packet entered the link).
    pub fn push_with_seq(&mut self, t: Time, seq: u64, src: Source) {
        self.heap.push(Reverse((t, seq, src)));
    }
    /// Reserves a tie-break number without scheduling.
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }
    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(Time, Source)> {
        self.heap.pop().map(|Reverse((t, _, s))| (t, s))
    }
    /// Entries in the heap.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// Nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// One timer per endpoint, armed lazily: a deadline that moves later does not push a new entry;
/// the old entry, when it fires early, re-arms at the new deadline. At most one live entry exists
/// per deadline change to an earlier time.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerSlot {
    armed_at: Option<Time>,
}

impl TimerSlot {
    /// Makes sure an entry exists no later than `deadline`.
    pub fn sync(&mut self, q: &mut EventQueue, deadline: Option<Time>, src: Source) {
        if let Some(d) = deadline {
            if self.armed_at.is_none_or(|a| d < a) {
                q.push(d, src);
                self.armed_at = Some(d);
            }
        }
    }
    /// An entry for this slot popped at `t`: true if it is the live one (the caller then checks
    /// the endpoint's real deadline and re-syncs).
    pub fn take(&mut self, t: Time) -> bool {
        if self.armed_at == Some(t) {
            self.armed_at = None;
            true
        } else {
            false
        }
    }
}
