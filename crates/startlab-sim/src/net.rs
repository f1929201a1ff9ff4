//! Packets, link directions ("channels") with drop-tail queues, and static routes.

use startlab_scenario::QueueLimit;
use startlab_tcp::Ack;
use startlab_units::{Dur, Rate, Time};
use std::collections::VecDeque;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PktKind {
    /// TCP data.
    Data,
    /// TCP ACK (or SYN-ACK).
    Ack,
    /// TCP SYN.
    Syn,
    /// UDP cross traffic.
    Cross,
}

/// Packet flags used by the measurements.
pub mod flags {
    /// Sent during the startup period (before `t_su`).
    pub const STARTUP: u8 = 1;
    /// Sent within the first `early_rtts` base RTTs after `t0`.
    pub const EARLY: u8 = 2;
}

/// A packet in the arena.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Kind.
    pub kind: PktKind,
    /// Flow (TCP) or cross source index.
    pub flow: u32,
    /// Destination node.
    pub dst: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Data: first byte; ACK: unused.
    pub seq: u64,
    /// Data payload bytes.
    pub len: u32,
    /// [`flags`].
    pub flags: u8,
    /// ACK contents.
    pub ack: Ack,
}

/// Packets live here, reused through a free list: no allocation per packet once warm.
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl Arena {
    /// Stores a packet, returning its handle.
    pub fn alloc(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as u32
        }
    }
    /// Releases a handle.
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }
    /// Reads a packet.
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
    }
    /// Packets alive.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// One direction of a full-duplex link, with its queue.
///
/// FIFO and a constant rate make every departure time known at arrival: a packet starts
/// transmission at `max(now, busy_until)`. So the channel keeps the start times of the packets
/// still waiting (to know the queue length at any later arrival) and the packets in flight in
/// arrival order; only the head of the latter is an event in the global heap.
#[derive(Debug)]
pub struct Channel {
    /// `LINK:FROM->TO`.
    pub name: String,
    /// Sending node.
    pub from: u32,
    /// Receiving node.
    pub to: u32,
    /// Capacity.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Dur,
    /// Queue limit.
    pub limit: QueueLimit,
    busy_until: Time,
    /// Serialisation time of the last packet size seen: a link direction mostly carries one size
    /// (full segments one way, ACKs the other), so this spares a 128-bit division per packet.
    tx_cache: (u32, Dur),
    waiting: VecDeque<(Time, u32)>,
    wait_pkts: u64,
    wait_bytes: u64,
    /// Packets propagating or queued: (arrival time at `to`, tie-break seq, packet).
    pub pipe: VecDeque<(Time, u64, u32)>,
    /// Counters.
    pub stats: ChannelStats,
    last_change: Time,
    /// Flows whose early window watches this queue: (window end, flow).
    pub early_watch: Vec<(Time, u32)>,
}

/// Per-channel counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChannelStats {
    /// Packets offered.
    pub arrivals: u64,
    /// Packets accepted (they will be transmitted).
    pub accepted: u64,
    /// Bytes accepted.
    pub accepted_bytes: u64,
    /// Packets refused.
    pub drops: u64,
    /// Packets that reached the far node.
    pub delivered: u64,
    /// ∫ packets waiting dt, in packet·ns.
    pub q_area_pkts: u128,
    /// ∫ bytes waiting dt, in byte·ns.
    pub q_area_bytes: u128,
    /// Most packets waiting.
    pub max_pkts: u64,
    /// Most bytes waiting.
    pub max_bytes: u64,
}

/// A queue-length change, for the trace.
pub type QueueChange = (Time, u64, u64);

/// Result of offering a packet to a channel.
pub enum Offer {
    /// Accepted; arrives at the far node at this time. `first` is true if the pipe was empty
    /// (the caller schedules the event).
    Accepted {
        /// Arrival at the far end.
        arrival: Time,
        /// The channel had nothing in flight.
        first: bool,
    },
    /// Dropped by the queue.
    Dropped,
}

impl Channel {
    /// A new idle channel.
    pub fn new(name: String, from: u32, to: u32, rate: Rate, delay: Dur, limit: QueueLimit) -> Self {
        Channel {
            name,
            from,
            to,
            rate,
            delay,
            limit,
            busy_until: Time::ZERO,
            tx_cache: (0, rate.tx_time(0)),
            waiting: VecDeque::new(),
            wait_pkts: 0,
            wait_bytes: 0,
            pipe: VecDeque::new(),
            stats: ChannelStats::default(),
            last_change: Time::ZERO,
            early_watch: Vec::new(),
        }
    }

    /// Packets waiting now (after [`Channel::drain`]).
    pub fn waiting_pkts(&self) -> u64 {
        self.wait_pkts
    }

    fn account(&mut self, t: Time) {
        let dt = (t - self.last_change).as_nanos() as u128;
        self.stats.q_area_pkts += self.wait_pkts as u128 * dt;
        self.stats.q_area_bytes += self.wait_bytes as u128 * dt;
        self.last_change = t;
    }

    /// Starts transmission of every waiting packet whose turn came by `now`; reports each queue
    /// change (in time order) to `trace`.
    pub fn drain(&mut self, now: Time, mut trace: impl FnMut(QueueChange)) {
        while let Some(&(start, size)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.account(start);
            self.wait_pkts -= 1;
            self.wait_bytes -= size as u64;
            trace((start, self.wait_pkts, self.wait_bytes));
        }
    }

    /// Offers a packet of `size` bytes at `now` (call [`Channel::drain`] first).
    pub fn offer(&mut self, now: Time, size: u32, seq: u64, pkt: u32, mut trace: impl FnMut(QueueChange)) -> Offer {
        self.stats.arrivals += 1;
        let must_wait = self.busy_until > now;
        if must_wait {
            let full = match self.limit {
                QueueLimit::Packets(n) => self.wait_pkts + 1 > n,
                QueueLimit::Bytes(b) => self.wait_bytes + size as u64 > b,
            };
            if full {
                self.stats.drops += 1;
                return Offer::Dropped;
            }
        }
        let start = if must_wait { self.busy_until } else { now };
        if self.tx_cache.0 != size {
            self.tx_cache = (size, self.rate.tx_time(size as u64));
        }
        let end = start + self.tx_cache.1;
        self.busy_until = end;
        if must_wait {
            self.account(now);
            self.waiting.push_back((start, size));
            self.wait_pkts += 1;
            self.wait_bytes += size as u64;
            self.stats.max_pkts = self.stats.max_pkts.max(self.wait_pkts);
            self.stats.max_bytes = self.stats.max_bytes.max(self.wait_bytes);
            trace((now, self.wait_pkts, self.wait_bytes));
        }
        self.stats.accepted += 1;
        self.stats.accepted_bytes += size as u64;
        let arrival = end + self.delay;
        let first = self.pipe.is_empty();
        self.pipe.push_back((arrival, seq, pkt));
        Offer::Accepted { arrival, first }
    }

    /// Closes the books at `end`: queue area up to `end`, and bits actually on the wire by `end`.
    pub fn finish(&mut self, end: Time) -> f64 {
        self.drain(end, |_| {});
        self.account(end);
        let unsent_ns = self.busy_until.saturating_since(end).as_nanos() as f64;
        let bits = self.stats.accepted_bytes as f64 * 8.0 - unsent_ns * self.rate.bps() as f64 / 1e9;
        bits.max(0.0)
    }
}

/// Static routes, shortest by propagation delay (ties: fewer hops, then the lower channel index,
/// so routes are deterministic).
///
/// Size does not grow with the square of the host count: a node with a single outgoing channel
/// (a host) always uses it, and a host with a single link ("leaf") is reached through its router.
/// Only routers and multi-homed hosts get table rows, and only non-leaf nodes are table columns:
/// a 1000-pair dumbbell needs a 2 × 2 table.
#[derive(Debug)]
pub struct Routes {
    single_out: Vec<Option<u32>>,
    /// For a leaf node: (its router, the channel router -> leaf).
    leaf: Vec<Option<(u32, u32)>>,
    row: Vec<Option<u32>>,
    col: Vec<Option<u32>>,
    cols: usize,
    table: Vec<u32>,
}

impl Routes {
    /// Computes the routes of a network of `n` nodes. Hosts end paths but never forward: a
    /// multi-homed host is not a transit node.
    pub fn shortest(n: usize, channels: &[Channel], is_host: &[bool]) -> Routes {
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (c, ch) in channels.iter().enumerate() {
            out[ch.from as usize].push(c as u32);
            incoming[ch.to as usize].push(c as u32);
        }
        let single_out: Vec<Option<u32>> = out.iter().map(|o| (o.len() == 1).then(|| o[0])).collect();
        let leaf: Vec<Option<(u32, u32)>> = (0..n)
            .map(|v| match (&out[v][..], &incoming[v][..]) {
                ([o], [i]) if channels[*o as usize].to == channels[*i as usize].from => {
                    Some((channels[*i as usize].from, *i))
                }
                _ => None,
            })
            .collect();
        let mut row = vec![None; n];
        let mut rows = 0u32;
        for v in 0..n {
            if single_out[v].is_none() {
                row[v] = Some(rows);
                rows += 1;
            }
        }
        let mut col = vec![None; n];
        let mut cols = 0u32;
        for v in 0..n {
            if leaf[v].is_none() {
                col[v] = Some(cols);
                cols += 1;
            }
        }
        let cols = cols as usize;
        let mut table = vec![u32::MAX; rows as usize * cols];
        let mut dist: Vec<(u64, u64)> = vec![(u64::MAX, u64::MAX); n];
        let mut via: Vec<u32> = vec![u32::MAX; n];
        let mut heap = std::collections::BinaryHeap::new();
        for dst in 0..n {
            let Some(c) = col[dst] else { continue };
            dist.fill((u64::MAX, u64::MAX));
            via.fill(u32::MAX);
            dist[dst] = (0, 0);
            heap.push(std::cmp::Reverse(((0u64, 0u64), dst as u32)));
            while let Some(std::cmp::Reverse((d, v))) = heap.pop() {
                if d > dist[v as usize] || (v as usize != dst && is_host[v as usize]) {
                    continue;
                }
                for &ch_i in &incoming[v as usize] {
                    let ch = &channels[ch_i as usize];
                    let u = ch.from as usize;
                    let nd = (d.0 + ch.delay.as_nanos(), d.1 + 1);
                    if nd < dist[u] || (nd == dist[u] && ch_i < via[u]) {
                        dist[u] = nd;
                        via[u] = ch_i;
                        heap.push(std::cmp::Reverse((nd, u as u32)));
                    }
                }
            }
            for v in 0..n {
                if let Some(r) = row[v] {
                    table[r as usize * cols + c as usize] = via[v];
                }
            }
        }
        Routes { single_out, leaf, row, col, cols, table }
    }

    /// The channel from `node` towards `dst` (`node != dst`), if `dst` is reachable.
    pub fn next(&self, node: u32, dst: u32) -> Option<u32> {
        if let Some(c) = self.single_out[node as usize] {
            return Some(c);
        }
        let mut target = dst;
        if let Some((router, last)) = self.leaf[dst as usize] {
            if router == node {
                return Some(last);
            }
            target = router;
        }
        let r = self.row[node as usize]? as usize;
        let c = self.col[target as usize]? as usize;
        let ch = self.table[r * self.cols + c];
        (ch != u32::MAX).then_some(ch)
    }
}
