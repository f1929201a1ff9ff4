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

/// One pending event: when (ns), its tie-break number, what it wakes ([`pack`]ed). Three plain
/// words: the heap moves entries whole, and a [`Source`] written as its two 32-bit halves and
/// read back as one word would stall the load until the stores reach the cache.
type Entry = (u64, u64, u64);

impl Source {
    /// The variant's number and its index in one word.
    #[inline]
    fn pack(self) -> u64 {
        let (tag, i) = match self {
            Source::Channel(i) => (0, i),
            Source::SenderTimer(i) => (1, i),
            Source::ReceiverTimer(i) => (2, i),
            Source::FlowStart(i) => (3, i),
            Source::Cross(i) => (4, i),
            Source::Request(i) => (5, i),
            Source::UserNext(i) => (6, i),
            Source::Dequeue(i) => (7, i),
            Source::QueueTimer(i) => (8, i),
        };
        (tag << 32) | i as u64
    }

    /// The inverse of [`Source::pack`].
    #[inline]
    fn unpack(w: u64) -> Source {
        let i = w as u32;
        match w >> 32 {
            0 => Source::Channel(i),
            1 => Source::SenderTimer(i),
            2 => Source::ReceiverTimer(i),
            3 => Source::FlowStart(i),
            4 => Source::Cross(i),
            5 => Source::Request(i),
            6 => Source::UserNext(i),
            7 => Source::Dequeue(i),
            _ => Source::QueueTimer(i),
        }
    }
}

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

/// The window of time `t` (ns).
#[inline]
fn window(t: u64) -> u64 {
    t >> WINDOW_SHIFT
}

/// A binary min-heap of entries by `(time, seq)` (unique: `seq` is), for the current window.
///
/// The standard `BinaryHeap` keeps the element it sifts down in a stack slot written as two words
/// and read back as one 16-byte load, which cannot be forwarded from the stores and waits for them
/// to reach the cache on every pop; here the sifted entry stays in registers.
#[derive(Debug, Default)]
struct Heap {
    v: Vec<Entry>,
}

impl Heap {
    #[inline]
    fn before(a: &Entry, b: &Entry) -> bool {
        (a.0, a.1) < (b.0, b.1)
    }
    #[inline]
    fn len(&self) -> usize {
        self.v.len()
    }
    #[inline]
    fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        self.v.first()
    }
    #[inline]
    fn push(&mut self, e: Entry) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if !Self::before(&e, &self.v[parent]) {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let last = self.v.pop()?;
        let Some(&top) = self.v.first() else { return Some(last) };
        let n = self.v.len();
        let mut i = 0;
        loop {
            let mut c = 2 * i + 1;
            if c >= n {
                break;
            }
            if c + 1 < n && Self::before(&self.v[c + 1], &self.v[c]) {
                c += 1;
            }
            if !Self::before(&self.v[c], &last) {
                break;
            }
            self.v[i] = self.v[c];
            i = c;
        }
        self.v[i] = last;
        Some(top)
    }
}

/// The pending events.
#[derive(Debug)]
pub struct EventQueue {
    /// Events of the current window and earlier, smallest first.
    now: Heap,
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
            now: Heap::default(),
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
        self.insert((t.as_nanos(), self.seq, src.pack()));
        self.seq
    }
    /// Schedules with a sequence number reserved earlier (a link's next head keeps the order it
    /// got when the packet entered the link).
    pub fn push_with_seq(&mut self, t: Time, seq: u64, src: Source) {
        self.insert((t.as_nanos(), seq, src.pack()));
    }
    /// Files `e` by its window.
    #[inline(always)]
    fn insert(&mut self, e: Entry) {
        let w = window(e.0);
        if w <= self.current {
            self.now.push(e);
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
                for e in bucket.drain(..) {
                    self.now.push(e);
                }
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
            self.now.push(e);
        } else {
            self.fine[(w % FINE) as usize].push(e);
            self.in_fine += 1;
        }
    }
    /// Time of the earliest event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.refill();
        self.now.peek().map(|&(t, _, _)| Time(t))
    }
    /// The next event's source, if it is in the current window (a hint for warming the caches:
    /// an event pushed before it pops may come first).
    pub fn peek_source(&self) -> Option<Source> {
        self.now.peek().map(|&(_, _, s)| Source::unpack(s))
    }
    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(Time, Source)> {
        self.refill();
        self.now.pop().map(|(t, _, s)| (Time(t), Source::unpack(s)))
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
        let mut want: Vec<(Time, u64, Source)> = Vec::new();
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
