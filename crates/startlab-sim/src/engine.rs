//! The event queue: integer-nanosecond times, ties broken by scheduling order.
//!
//! Determinism contract (DETERMINISM.md): an event is `(time, seq, source)`; `seq` is a counter
//! incremented on every push, so two events at the same nanosecond run in the order they were
//! scheduled, on every machine. Links keep their own FIFO of packets in flight (arrivals on one link
//! are in order), so the queue holds one entry per busy link plus the armed timers, not one per
//! packet.
//!
//! The queue is a two-level calendar (a timing wheel): time is cut into windows of [`WINDOW_NS`],
//! grouped [`FINE`] to a coarse window. Only the events of the current window are in a binary heap;
//! the other windows of the current coarse window wait unsorted in a ring of [`FINE`] buckets, the
//! next [`COARSE`] − 1 coarse windows' events in a ring of coarse buckets, and later ones (timers,
//! flow starts) in a second heap. A push is an append to a bucket that is written in order (so it
//! stays in the cache); when the current window runs out, the next window's bucket becomes the
//! heap, and when the coarse window runs out, the next coarse bucket (with the later events that
//! fall in it) is spread over the fine ring. A pop then sifts through the few events of one window
//! instead of the whole queue. Every event of the current window is in the heap and every other
//! event is later than the window, so events come out in exactly the order of one heap over all.

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

/// One pending event: when, its tie-break number, what it wakes.
type Entry = (Time, u64, Source);

/// log2 of a window in nanoseconds (32.8 µs: a few packets of a 1 Gbit/s link).
const WINDOW_SHIFT: u32 = 15;
/// A window, ns.
pub const WINDOW_NS: u64 = 1 << WINDOW_SHIFT;
/// log2 of the windows per coarse window.
const FINE_SHIFT: u32 = 6;
/// Windows per coarse window (64: a coarse window is 2.1 ms).
pub const FINE: u64 = 1 << FINE_SHIFT;
/// Coarse windows in the coarse ring, the current one included (256: 537 ms).
pub const COARSE: u64 = 256;

/// The window of time `t`.
#[inline]
fn window(t: Time) -> u64 {
    t.as_nanos() >> WINDOW_SHIFT
}

/// The pending events.
#[derive(Debug)]
pub struct EventQueue {
    /// Events of the current window and earlier, smallest first.
    now: BinaryHeap<Reverse<Entry>>,
    /// The current window: every event outside `now` is in a later one.
    current: u64,
    /// Events of the later windows of the current coarse window, in slot `window % FINE`.
    fine: Vec<Vec<Entry>>,
    /// Events in `fine`.
    in_fine: usize,
    /// Events of the next `COARSE - 1` coarse windows, in slot `coarse window % COARSE`.
    coarse: Vec<Vec<Entry>>,
    /// Events in `coarse`.
    in_coarse: usize,
    /// Events of later coarse windows.
    later: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            now: BinaryHeap::new(),
            current: 0,
            fine: vec![Vec::new(); FINE as usize],
            in_fine: 0,
            coarse: vec![Vec::new(); COARSE as usize],
            in_coarse: 0,
            later: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl EventQueue {
    /// Schedules `src` at `t`; returns the tie-break sequence number it got.
    pub fn push(&mut self, t: Time, src: Source) -> u64 {
        self.seq += 1;
        self.insert((t, self.seq, src));
        self.seq
    }
    /// Schedules with a sequence number reserved earlier (a link's next head keeps the order it
    /// got when the packet entered the link).
    pub fn push_with_seq(&mut self, t: Time, seq: u64, src: Source) {
        self.insert((t, seq, src));
    }
    /// Files `e` by its window.
    #[inline]
    fn insert(&mut self, e: Entry) {
        let w = window(e.0);
        if w <= self.current {
            self.now.push(Reverse(e));
            return;
        }
        let (c, cur) = (w >> FINE_SHIFT, self.current >> FINE_SHIFT);
        if c == cur {
            self.fine[(w % FINE) as usize].push(e);
            self.in_fine += 1;
        } else if c - cur < COARSE {
            self.coarse[(c % COARSE) as usize].push(e);
            self.in_coarse += 1;
        } else {
            self.later.push(Reverse(e));
        }
    }
    /// Reserves a tie-break number without scheduling.
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
    /// Moves to the next window that holds an event, if the current one has none left.
    fn refill(&mut self) {
        while self.now.is_empty() {
            if self.in_fine > 0 {
                // The next window of this coarse window with events becomes the heap.
                self.current += 1;
                let bucket = &mut self.fine[(self.current % FINE) as usize];
                self.in_fine -= bucket.len();
                self.now.extend(bucket.drain(..).map(Reverse));
                continue;
            }
            // The next coarse window with events, from the ring or (nothing there) the later heap.
            let mut c = (self.current >> FINE_SHIFT) + 1;
            if self.in_coarse > 0 {
                while self.coarse[(c % COARSE) as usize].is_empty() {
                    c += 1;
                }
            } else {
                let Some(Reverse(e)) = self.later.peek() else { return };
                c = window(e.0) >> FINE_SHIFT;
            }
            self.current = c << FINE_SHIFT;
            let mut bucket = std::mem::take(&mut self.coarse[(c % COARSE) as usize]);
            self.in_coarse -= bucket.len();
            for e in bucket.drain(..) {
                self.spread(e);
            }
            self.coarse[(c % COARSE) as usize] = bucket;
            while let Some(Reverse(e)) = self.later.peek() {
                if window(e.0) >> FINE_SHIFT > c {
                    break;
                }
                let Some(Reverse(e)) = self.later.pop() else { break };
                self.spread(e);
            }
        }
    }
    /// Files an event of the current coarse window (the window moved to its first).
    #[inline]
    fn spread(&mut self, e: Entry) {
        let w = window(e.0);
        if w <= self.current {
            self.now.push(Reverse(e));
        } else {
            self.fine[(w % FINE) as usize].push(e);
            self.in_fine += 1;
        }
    }
    /// Time of the earliest event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.refill();
        self.now.peek().map(|Reverse((t, _, _))| *t)
    }
    /// The next event's source, if it is in the current window (a hint for warming the caches:
    /// an event pushed before it pops may come first).
    pub fn peek_source(&self) -> Option<Source> {
        self.now.peek().map(|Reverse((_, _, s))| *s)
    }
    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(Time, Source)> {
        self.refill();
        self.now.pop().map(|Reverse((t, _, s))| (t, s))
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.now.len() + self.in_fine + self.in_coarse + self.later.len()
    }
    /// Nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_by_time_then_by_scheduling_order() {
        // Times spread over many windows, beyond the ring and back (many equal), pushed while
        // popping as the engine does, against a sorted copy.
        let mut q = EventQueue::default();
        let mut want: Vec<Entry> = Vec::new();
        let mut now = Time::ZERO;
        let mut x = 12345u64;
        for k in 0..20_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let ahead = match (x >> 60) % 4 {
                0 => (x >> 20) % 50,
                1 => (x >> 20) % (3 * WINDOW_NS),
                2 => (x >> 20) % (FINE * WINDOW_NS * 3),
                _ => (x >> 20) % (2 * COARSE * FINE * WINDOW_NS),
            };
            let t = Time(now.as_nanos() + ahead);
            let seq = q.push(t, Source::Channel(k));
            want.push((t, seq, Source::Channel(k)));
            if !x.is_multiple_of(3) {
                want.sort();
                let first = want.remove(0);
                assert_eq!(q.peek_time(), Some(first.0));
                assert_eq!(q.pop(), Some((first.0, first.2)));
                now = first.0;
            }
            assert_eq!(q.len(), want.len());
        }
        want.sort();
        for e in want {
            assert_eq!(q.pop(), Some((e.0, e.2)));
        }
        assert!(q.is_empty() && q.pop().is_none() && q.peek_time().is_none());
    }
}
