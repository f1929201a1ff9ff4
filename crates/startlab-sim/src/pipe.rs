//! A link direction's packets in flight, in the order they reach the far node, with the first one
//! kept inline.
//!
//! An access link at 10 Gbit/s mostly carries one packet at a time (it leaves 1.2 µs after it
//! came), and with a thousand flows taking turns its memory is cold at every packet. Keeping the
//! first packet in the channel's own cache line, and only the packets behind it in a buffer that
//! is allocated the first time two are in flight at once, lets such a packet's launch and arrival
//! touch the channel alone: no buffer line to fetch or to write back.

use startlab_units::Time;
use std::collections::VecDeque;

/// A packet in flight: its arrival time at the far node, the tie-break number its arrival event
/// takes, and its handle.
pub type InFlight = (Time, u64, u32);

/// The handle that marks an empty pipe (no packet has it: the arena's handles stay far below).
const EMPTY: u32 = u32::MAX;

/// The packets in flight on a link direction, first in, first out (32 bytes).
#[derive(Debug)]
pub struct Pipe {
    /// The first packet's arrival time.
    at: Time,
    /// The first packet's tie-break number.
    seq: u64,
    /// The first packet's handle, or [`EMPTY`].
    pkt: u32,
    /// Packets in `rest` (kept here so that a pipe with one packet never reads the buffer).
    behind: u32,
    /// The packets behind the first, in order (allocated when first needed, then kept). Boxed
    /// on purpose: 8 bytes here instead of a `VecDeque`'s 32 keep the pipe, and with it the
    /// channel's per-packet fields, on one cache line pair.
    #[allow(clippy::box_collection)]
    rest: Option<Box<VecDeque<InFlight>>>,
}

impl Default for Pipe {
    fn default() -> Self {
        Pipe { at: Time::ZERO, seq: 0, pkt: EMPTY, behind: 0, rest: None }
    }
}

impl Pipe {
    /// Nothing in flight.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkt == EMPTY
    }

    /// Packets in flight.
    #[inline]
    pub fn len(&self) -> usize {
        if self.is_empty() { 0 } else { 1 + self.behind as usize }
    }

    /// The first packet, if any.
    #[inline]
    pub fn front(&self) -> Option<InFlight> {
        (!self.is_empty()).then_some((self.at, self.seq, self.pkt))
    }

    /// The last packet, if any.
    #[inline]
    pub fn back(&self) -> Option<InFlight> {
        match &self.rest {
            Some(rest) if self.behind > 0 => rest.back().copied(),
            _ => self.front(),
        }
    }

    /// Appends a packet.
    #[inline]
    pub fn push_back(&mut self, p: InFlight) {
        debug_assert_ne!(p.2, EMPTY, "a packet handle");
        if self.is_empty() {
            (self.at, self.seq, self.pkt) = p;
        } else {
            self.rest.get_or_insert_with(Box::default).push_back(p);
            self.behind += 1;
        }
    }

    /// Removes the first packet.
    #[inline]
    pub fn pop_front(&mut self) -> Option<InFlight> {
        let first = self.front()?;
        let next = match self.rest.as_mut() {
            Some(rest) if self.behind > 0 => {
                self.behind -= 1;
                rest.pop_front()
            }
            _ => None,
        };
        (self.at, self.seq, self.pkt) = next.unwrap_or((Time::ZERO, 0, EMPTY));
        Some(first)
    }

    /// The packets in order.
    pub fn iter(&self) -> impl Iterator<Item = InFlight> + '_ {
        let rest = self.rest.as_deref().into_iter().flatten().copied();
        self.front().into_iter().chain(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_like_a_deque() {
        let mut p = Pipe::default();
        let mut want: VecDeque<InFlight> = VecDeque::new();
        let mut x = 7u64;
        for k in 0..2_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (x >> 61) < 5 {
                let e = (Time(k as u64), x, k);
                p.push_back(e);
                want.push_back(e);
            } else {
                assert_eq!(p.pop_front(), want.pop_front());
            }
            assert_eq!((p.len(), p.is_empty()), (want.len(), want.is_empty()));
            assert_eq!((p.front(), p.back()), (want.front().copied(), want.back().copied()));
            assert!(p.iter().eq(want.iter().copied()));
        }
        assert_eq!(std::mem::size_of::<Pipe>(), 32);
    }
}
