//! Link directions ("channels") with their queues — a departure-at-arrival FIFO for drop-tail
//! and RED, or a dequeue-time discipline of `aqm` — and static routes; the packets they carry are
//! in `packet` (re-exported here).

use crate::aqm::{DropCause, Ecn, Events, QPacket, Qdisc};
use crate::impair::Impairment;
pub use crate::sojourn::Sojourns;
pub use crate::pipe::Pipe;
use crate::red::{Red, Verdict};
use rand_pcg::Pcg64;
pub use crate::packet::{flags, Arena, Packet, PktKind};
use startlab_scenario::QueueLimit;
use startlab_units::{Dur, Rate, Time};
use std::collections::VecDeque;

/// One direction of a full-duplex link, with its queue.
///
/// FIFO and a constant rate make every departure time known at arrival: a packet starts
/// transmission at `max(now, busy_until)`. So the channel keeps the start times of the packets
/// still waiting (to know the queue length at any later arrival) and the packets in flight in
/// arrival order; only the head of the latter is an event in the global heap.
///
/// Layout: a run with many flows touches thousands of channels (each host's access link, both
/// directions) in no order the cache can follow, so everything a packet that does not wait reads
/// or writes — offered, launched, and taken at the far end — is on the struct's first two cache
/// lines, in declaration order (`repr(C)`), one aligned pair (`align(128)`) that the hardware
/// fetches together; what only a queueing packet, a traced run or the results need comes after.
#[derive(Debug)]
#[repr(C, align(128))]
pub struct Channel {
    /// Packets propagating or queued: (arrival time at `to`, tie-break seq, packet); the first
    /// inline.
    pub pipe: Pipe,
    /// A dequeue-time discipline holding the waiting packets (`None`: the FIFO `waiting`).
    aqm: Option<Box<AqmLink>>,
    /// Path impairments (docs/IMPAIRMENTS.md); `None` on an unimpaired channel.
    pub imp: Option<Box<Impairment>>,
    /// RED admission and its own random stream (`None`: drop-tail).
    red: Option<Box<(Red, Pcg64)>>,
    wait_pkts: u64,
    busy_until: Time,
    /// Serialisation time of the last packet size seen, `tx_size`: a link direction mostly
    /// carries one size (full segments one way, ACKs the other), so this spares a 128-bit
    /// division per packet.
    tx_time: Dur,
    /// Propagation delay.
    pub delay: Dur,
    tx_size: u32,
    /// Receiving node.
    pub to: u32,
    /// Counters (the per-packet ones first).
    pub stats: ChannelStats,
    /// The FIFO's waiting packets: when each starts transmission, its size, when it arrived.
    waiting: VecDeque<(Time, u32, Time)>,
    wait_bytes: u64,
    /// Sending node.
    pub from: u32,
    /// Capacity.
    pub rate: Rate,
    /// Queue limit.
    pub limit: QueueLimit,
    last_change: Time,
    /// The earliest end of an early window in `early_watch`.
    pub early_next_end: Time,
    /// Flows whose early window watches this queue: (window end, flow, peak occupancy so far).
    pub early_watch: Vec<(Time, u32, u64)>,
    /// The largest occupancy since the watch list's peaks were last brought up to date (0:
    /// none): occupancy rises on every enqueue but the watch list changes only when a flow starts
    /// or its early window ends, so the peaks are updated then, not per packet.
    pub early_acc: u64,
    /// `LINK:FROM->TO`.
    pub name: String,
}

/// The state of a link direction whose queue is a dequeue-time discipline (aqm.rs): packets wait
/// in the discipline and the next one is chosen each time the link goes free.
#[derive(Debug)]
struct AqmLink {
    qdisc: Qdisc,
    /// The discipline's own random stream.
    rng: Pcg64,
    /// Drops decided and not yet taken by the owner ([`Channel::take_aqm_drops`]).
    events: Events,
    /// A dequeue is scheduled (the owner holds an event for it).
    armed: bool,
}

/// A packet that left a dequeue-time queue and started transmission.
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    /// The owner's handle.
    pub pkt: u32,
    /// When it reaches the far node.
    pub arrival: Time,
    /// The link had nothing else in flight (the caller schedules its arrival event).
    pub first: bool,
    /// It leaves with the CE codepoint.
    pub ce: bool,
    /// How long it waited in the queue.
    pub sojourn: Dur,
}

/// Per-channel counters (`repr(C)`: those every packet updates first, see [`Channel`]).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct ChannelStats {
    /// Packets offered.
    pub arrivals: u64,
    /// Packets accepted (they will be transmitted).
    pub accepted: u64,
    /// Bytes accepted.
    pub accepted_bytes: u64,
    /// Packets that reached the far node.
    pub delivered: u64,
    /// Packets refused (buffer overflow and RED's early drops).
    pub drops: u64,
    /// Of `drops`, those RED chose (probabilistic or forced region), not buffer overflow.
    pub early_drops: u64,
    /// Packets RED marked CE instead of dropping.
    pub marks: u64,
    /// Of `drops`, packets an impairment's loss process discarded (the queue had admitted them).
    pub impairment_drops: u64,
    /// Packets that reached the far node after a packet that entered the link later (jitter with
    /// `reorder = true`).
    pub reordered: u64,
    /// Most packets waiting.
    pub max_pkts: u64,
    /// Most bytes waiting.
    pub max_bytes: u64,
    /// ∫ packets waiting dt, in packet·ns.
    pub q_area_pkts: u128,
    /// ∫ bytes waiting dt, in byte·ns.
    pub q_area_bytes: u128,
    /// How long the packets that waited at all waited in the queue: every other accepted packet
    /// waited 0 ns and is not added one by one ([`ChannelStats::sojourns`] counts them in).
    pub sojourn: Sojourns,
}

impl ChannelStats {
    /// The sojourn times of every accepted packet: those that waited, and the others at 0 ns.
    pub fn sojourns(&self) -> Sojourns {
        self.sojourn.with_zeros(self.accepted - self.sojourn.count)
    }
}


/// A queue-length change, for the queue trace.
#[derive(Clone, Copy, Debug)]
pub struct QueueChange {
    /// When.
    pub time: Time,
    /// Packets waiting after the change.
    pub packets: u64,
    /// Bytes waiting after the change.
    pub bytes: u64,
    /// RED's average queue after the change (NaN for any other queue).
    pub red_avg: f64,
    /// The change is a packet starting transmission: how long it waited (`None` for an arrival
    /// or a drop).
    pub sojourn: Option<Dur>,
}

/// Result of offering a packet to a channel.
pub enum Offer {
    /// Accepted; arrives at the far node at this time. `first` is true if the pipe was empty
    /// (the caller schedules the event).
    Accepted {
        /// Arrival at the far end.
        arrival: Time,
        /// Its transmission starts (now, or when the packets before it have left).
        start: Time,
        /// The channel had nothing in flight.
        first: bool,
        /// RED set the CE codepoint (the caller marks the packet).
        marked: bool,
    },
    /// Dropped by the queue.
    Dropped,
    /// Admitted by the queue, then discarded by an impairment's loss process.
    Lost,
    /// Taken by a dequeue-time discipline: it leaves when the discipline chooses it
    /// ([`Channel::aqm_dequeue`]). `dequeue_at`: schedule a dequeue then (the link was idle, or
    /// nothing was scheduled). Drops it caused, of itself or of others, are in
    /// [`Channel::take_aqm_drops`].
    Queued {
        /// When to call [`Channel::aqm_dequeue`], if the caller must schedule it.
        dequeue_at: Option<Time>,
    },
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
            tx_size: 0,
            tx_time: rate.tx_time(0),
            waiting: VecDeque::new(),
            wait_pkts: 0,
            wait_bytes: 0,
            pipe: Pipe::default(),
            stats: ChannelStats::default(),
            last_change: Time::ZERO,
            early_watch: Vec::new(),
            early_acc: 0,
            early_next_end: Time(u64::MAX),
            imp: None,
            red: None,
            aqm: None,
        }
    }

    /// Makes the queue a dequeue-time discipline, drawing its random decisions from `rng`.
    pub fn with_qdisc(mut self, qdisc: Qdisc, rng: Pcg64) -> Self {
        self.aqm = Some(Box::new(AqmLink { qdisc, rng, events: Events::default(), armed: false }));
        self
    }

    /// The queue is a dequeue-time discipline: offer packets with [`Channel::aqm_enqueue`].
    #[inline]
    pub fn is_aqm(&self) -> bool {
        self.aqm.is_some()
    }

    /// Runs a dequeue-time discipline's periodic updates due by `now` (PIE's and PI²'s drop
    /// probability); returns when the next is due (`None`: it has none).
    pub fn aqm_timer(&mut self, now: Time) -> Option<Time> {
        let a = self.aqm.as_mut()?;
        a.qdisc.run_timers(now);
        a.qdisc.next_timer()
    }

    /// When a dequeue-time discipline's next periodic update is due, if it has one.
    pub fn aqm_next_timer(&self) -> Option<Time> {
        self.aqm.as_ref().and_then(|a| a.qdisc.next_timer())
    }

    /// A dequeue-time discipline dropped packets not yet taken ([`Channel::take_aqm_drops`]).
    #[inline]
    pub fn has_aqm_drops(&self) -> bool {
        self.aqm.as_ref().is_some_and(|a| !a.events.drops.is_empty())
    }

    /// The packets a dequeue-time discipline dropped since the last call, with why (no allocation
    /// when there are none, the usual case).
    #[inline]
    pub fn take_aqm_drops(&mut self) -> Vec<(u32, DropCause)> {
        match self.aqm.as_mut() {
            Some(a) if !a.events.drops.is_empty() => a.events.drops.drain(..).map(|(p, c)| (p.pkt, c)).collect(),
            _ => Vec::new(),
        }
    }

    /// The waiting packets' count changed to the discipline's: account and report it.
    /// `sojourn`: the change is the departure of a packet that waited this long.
    fn aqm_settle(&mut self, now: Time, sojourn: Option<Dur>, trace: &mut impl FnMut(QueueChange)) {
        let Some(a) = self.aqm.as_ref() else { return };
        let (pk, b) = (a.qdisc.len_pkts(), a.qdisc.len_bytes());
        if (pk, b) == (self.wait_pkts, self.wait_bytes) {
            return;
        }
        self.account(now);
        self.wait_pkts = pk;
        self.wait_bytes = b;
        self.stats.max_pkts = self.stats.max_pkts.max(pk);
        self.stats.max_bytes = self.stats.max_bytes.max(b);
        trace(QueueChange { time: now, packets: pk, bytes: b, red_avg: f64::NAN, sojourn });
    }

    /// Offers a packet of `size` bytes to a dequeue-time discipline at `now`: `flow` is its flow
    /// key (FQ hashing), `ecn` its ECN field. Always [`Offer::Queued`]; an impairment's loss is
    /// drawn when the packet leaves ([`Channel::aqm_dequeue`]).
    pub fn aqm_enqueue(&mut self, now: Time, size: u32, pkt: u32, flow: u64, ecn: Ecn, mut trace: impl FnMut(QueueChange)) -> Offer {
        self.stats.arrivals += 1;
        let a = self.aqm.as_mut().expect("aqm_enqueue on a dequeue-time queue");
        a.qdisc.run_timers(now);
        let before = a.events.drops.len();
        a.qdisc.enqueue(QPacket { pkt, size, flow, ecn, enqueued: now }, &mut a.rng, &mut a.events);
        let dropped = (a.events.drops.len() - before) as u64;
        let armed = a.armed;
        self.stats.drops += dropped;
        self.stats.early_drops += self.aqm.as_ref().map_or(0, |a| a.events.drops[before..].iter().filter(|(_, c)| *c == DropCause::Aqm).count() as u64);
        self.aqm_settle(now, None, &mut trace);
        let dequeue_at = (!armed && self.wait_pkts > 0).then(|| {
            if let Some(a) = self.aqm.as_mut() {
                a.armed = true;
            }
            self.busy_until.max(now)
        });
        Offer::Queued { dequeue_at }
    }

    /// The link went free at `now` (or a packet arrived at an idle link): the discipline chooses
    /// the next packet, which starts transmission. Returns it, if any (every waiting packet may
    /// have been dropped: see [`Channel::take_aqm_drops`]), and when to call again.
    pub fn aqm_dequeue(&mut self, now: Time, seq: u64, mut trace: impl FnMut(QueueChange)) -> (Option<Departure>, Option<Time>) {
        let a = self.aqm.as_mut().expect("aqm_dequeue on a dequeue-time queue");
        a.armed = false;
        a.qdisc.run_timers(now);
        let before = a.events.drops.len();
        let mut got = a.qdisc.dequeue(now, &mut a.rng, &mut a.events);
        // An impairment's loss process takes what the discipline admitted, as on a FIFO link
        // (where it draws at admission): here as each packet leaves, before it uses the link.
        while let (Some(p), Some(imp)) = (got, self.imp.as_mut()) {
            if !imp.lose() {
                break;
            }
            a.events.drops.push((p, DropCause::Impairment));
            self.stats.impairment_drops += 1;
            got = a.qdisc.dequeue(now, &mut a.rng, &mut a.events);
        }
        let dropped = &a.events.drops[before..];
        let (n, early) = (dropped.len() as u64, dropped.iter().filter(|(_, c)| *c == DropCause::Aqm).count() as u64);
        self.stats.drops += n;
        self.stats.early_drops += early;
        let sojourn = got.map(|p| now.saturating_since(p.enqueued));
        self.aqm_settle(now, sojourn, &mut trace);
        let (Some(p), Some(sojourn)) = (got, sojourn) else {
            return (None, None);
        };
        let plan = self.imp.as_ref().filter(|i| i.shapes()).map(|i| i.plan(now, self.busy_until, p.size, self.rate));
        let end = match plan {
            Some(plan) => {
                if let Some(imp) = self.imp.as_mut() {
                    imp.commit(&plan);
                }
                plan.end
            }
            None => now.max(self.busy_until) + self.tx_time(p.size),
        };
        self.busy_until = end;
        self.stats.accepted += 1;
        self.stats.accepted_bytes += p.size as u64;
        if sojourn > Dur::ZERO {
            self.stats.sojourn.add(sojourn);
        }
        let (arrival, first) = self.launch(end, seq, p.pkt);
        let next = (self.wait_pkts > 0).then(|| {
            if let Some(a) = self.aqm.as_mut() {
                a.armed = true;
            }
            end
        });
        (Some(Departure { pkt: p.pkt, arrival, first, ce: p.ecn == Ecn::Ce, sojourn }), next)
    }

    /// Serialisation time of `size` bytes (cached for the last size seen).
    #[inline]
    fn tx_time(&mut self, size: u32) -> Dur {
        if self.tx_size != size {
            (self.tx_size, self.tx_time) = (size, self.rate.tx_time(size as u64));
        }
        self.tx_time
    }

    /// Puts a packet whose transmission ends at `end` on the wire: its arrival at the far node
    /// (after propagation and any jitter), and whether the caller must schedule it.
    fn launch(&mut self, end: Time, seq: u64, pkt: u32) -> (Time, bool) {
        let mut arrival = end + self.delay;
        if let Some(imp) = self.imp.as_mut() {
            arrival = imp.arrival(arrival);
            if imp.reorders() {
                // Every packet of a reordering channel is its own event.
                imp.push(arrival, seq, pkt);
                return (arrival, true);
            }
        }
        let first = self.pipe.is_empty();
        self.pipe.push_back((arrival, seq, pkt));
        (arrival, first)
    }

    /// Makes the queue RED, drawing its decisions from `rng` (the channel's own stream).
    pub fn with_red(mut self, red: Red, rng: Pcg64) -> Self {
        self.red = Some(Box::new((red, rng)));
        self
    }

    /// The queue's kind, as scenarios name it.
    pub fn queue_kind(&self) -> &'static str {
        match (&self.aqm, &self.red) {
            (Some(a), _) => a.qdisc.kind(),
            (None, Some(_)) => "red",
            (None, None) => "droptail",
        }
    }

    /// RED's average queue length (unit of the limit), if the queue is RED.
    pub fn red_avg(&self) -> Option<f64> {
        self.red.as_deref().map(|(r, _)| r.avg())
    }

    /// Reads, and discards, what a packet offered to this link reads and writes first: both cache
    /// lines of the fields it uses and the end of its FIFO of packets in flight, where it will be
    /// appended (so that a driver can start these cache misses early). The result means nothing:
    /// pass it to `std::hint::black_box`.
    #[inline]
    pub fn warm(&self) -> u64 {
        self.pipe.back().map_or(0, |e| e.1) ^ self.busy_until.as_nanos()
    }

    /// Packets in flight (queued or propagating).
    #[inline]
    pub fn in_flight(&self) -> usize {
        self.pipe.len() + self.imp.as_ref().map_or(0, |i| i.in_flight()) + self.aqm.as_ref().map_or(0, |a| a.qdisc.len_pkts() as usize)
    }

    /// Handles of the packets in flight, in no particular order (those waiting in a
    /// dequeue-time discipline included).
    pub fn packets_in_flight(&self) -> impl Iterator<Item = u32> + '_ {
        let waiting = self.aqm.iter().flat_map(|a| a.qdisc.packets().map(|p| p.pkt));
        self.pipe.iter().map(|(_, _, p)| p).chain(self.imp.iter().flat_map(|i| i.packets())).chain(waiting)
    }

    /// Takes the packet whose arrival event fired, counting it delivered; also returns the
    /// (arrival, seq) of the next head to schedule (`None` when nothing is left, or on a reordering
    /// channel, where every packet has its own event).
    #[inline]
    pub fn pop_arrival(&mut self) -> Option<(u32, Option<(Time, u64)>)> {
        if let Some(imp) = self.imp.as_mut().filter(|i| i.reorders()) {
            let (pkt, overtook) = imp.pop()?;
            self.stats.delivered += 1;
            self.stats.reordered += overtook as u64;
            return Some((pkt, None));
        }
        let (_, _, pkt) = self.pipe.pop_front()?;
        self.stats.delivered += 1;
        Some((pkt, self.pipe.front().map(|(t, seq, _)| (t, seq))))
    }

    /// Packets waiting now (after [`Channel::drain`]).
    pub fn waiting_pkts(&self) -> u64 {
        self.wait_pkts
    }

    /// Bytes waiting now (after [`Channel::drain`]).
    pub fn waiting_bytes(&self) -> u64 {
        self.wait_bytes
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
        if self.wait_pkts == 0 {
            // Nothing waits (the common case, on a link that is not a bottleneck): the FIFO's
            // memory stays untouched.
            return;
        }
        while let Some(&(start, size, enqueued)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.account(start);
            self.wait_pkts -= 1;
            self.wait_bytes -= size as u64;
            let red_avg = self.red_avg().unwrap_or(f64::NAN);
            let sojourn = Some(start.saturating_since(enqueued));
            trace(QueueChange { time: start, packets: self.wait_pkts, bytes: self.wait_bytes, red_avg, sojourn });
        }
    }

    /// Offers a packet of `size` bytes at `now` (call [`Channel::drain`] first); `ect`: the packet
    /// is ECN-capable (a RED queue with `ecn` may mark it instead of dropping it).
    pub fn offer(&mut self, now: Time, size: u32, seq: u64, pkt: u32, ect: bool, mut trace: impl FnMut(QueueChange)) -> Offer {
        self.stats.arrivals += 1;
        // A rate schedule or a delivery trace decides the service times (impair.rs).
        let plan = self.imp.as_ref().filter(|i| i.shapes()).map(|i| i.plan(now, self.busy_until, size, self.rate));
        let must_wait = plan.map_or(self.busy_until > now, |p| p.start > now);
        let mut marked = false;
        if let Some((red, rng)) = self.red.as_deref_mut() {
            // The queue RED averages is the packets waiting (as ns-2, the one in transmission is
            // not counted); it went empty when the link last went idle (`busy_until`).
            if !must_wait {
                red.on_empty(self.busy_until);
            }
            let q = match self.limit {
                QueueLimit::Packets(_) => self.wait_pkts as f64,
                QueueLimit::Bytes(_) => self.wait_bytes as f64,
            };
            match red.arrive(now, q, ect, rng) {
                Verdict::Accept => {}
                Verdict::Mark => marked = true,
                Verdict::Drop => {
                    self.stats.drops += 1;
                    self.stats.early_drops += 1;
                    return Offer::Dropped;
                }
            }
        }
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
        if let Some(imp) = self.imp.as_mut() {
            if imp.lose() {
                self.stats.drops += 1;
                self.stats.impairment_drops += 1;
                return Offer::Lost;
            }
        }
        let (start, end) = match plan {
            Some(p) => {
                if let Some(imp) = self.imp.as_mut() {
                    imp.commit(&p);
                }
                (p.start, p.end)
            }
            None => {
                let start = if must_wait { self.busy_until } else { now };
                (start, start + self.tx_time(size))
            }
        };
        self.busy_until = end;
        if start > now {
            self.stats.sojourn.add(start - now);
        }
        if must_wait {
            self.account(now);
            self.waiting.push_back((start, size, now));
            self.wait_pkts += 1;
            self.wait_bytes += size as u64;
            self.stats.max_pkts = self.stats.max_pkts.max(self.wait_pkts);
            self.stats.max_bytes = self.stats.max_bytes.max(self.wait_bytes);
            let red_avg = self.red_avg().unwrap_or(f64::NAN);
            trace(QueueChange { time: now, packets: self.wait_pkts, bytes: self.wait_bytes, red_avg, sojourn: None });
        }
        self.stats.accepted += 1;
        self.stats.accepted_bytes += size as u64;
        if marked {
            self.stats.marks += 1;
        }
        let (arrival, first) = self.launch(end, seq, pkt);
        Offer::Accepted { arrival, start, first, marked }
    }

    /// Closes the books at `end`: queue area up to `end`, and bits actually on the wire by `end`.
    pub fn finish(&mut self, end: Time) -> f64 {
        self.drain(end, |_| {});
        self.account(end);
        let unsent_ns = self.busy_until.saturating_since(end).as_nanos() as f64;
        let unsent_bits = match self.imp.as_ref().filter(|i| i.shapes()) {
            // A shaped link: packets still waiting are unsent; the one in transmission counts as
            // sent (a trace sends instantly; a schedule's last packet is at most one packet).
            Some(_) => self.waiting.iter().map(|&(_, b, _)| b as f64 * 8.0).sum::<f64>(),
            None => unsent_ns * self.rate.bps() as f64 / 1e9,
        };
        let bits = self.stats.accepted_bytes as f64 * 8.0 - unsent_bits;
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

/// Buckets per Quick-Start measurement window.
const QS_BUCKETS: u64 = 10;

/// A Quick-Start router's view of one output link (ALGORITHMS.md §10.1 RESOLVED admission rule):
/// the bytes it accepted over the last window, in [`QS_BUCKETS`] time buckets (O(1) per packet),
/// and the rates it approved during the last window.
#[derive(Debug)]
pub struct QsLink {
    window: Dur,
    bucket_ns: u64,
    buckets: [u64; QS_BUCKETS as usize],
    /// Bucket number (`time / bucket_ns`) of the newest bucket.
    newest: u64,
    /// Bytes in the buckets.
    sum: u64,
    approvals: VecDeque<(Time, f64)>,
    approved: f64,
}

impl QsLink {
    /// A link measured over `window` (> 0).
    pub fn new(window: Dur) -> QsLink {
        QsLink {
            window,
            bucket_ns: (window.as_nanos() / QS_BUCKETS).max(1),
            buckets: [0; QS_BUCKETS as usize],
            newest: 0,
            sum: 0,
            approvals: VecDeque::new(),
            approved: 0.0,
        }
    }

    fn advance(&mut self, now: Time) {
        let idx = now.as_nanos() / self.bucket_ns;
        if idx > self.newest {
            for k in 1..=(idx - self.newest).min(QS_BUCKETS) {
                let slot = ((self.newest + k) % QS_BUCKETS) as usize;
                self.sum -= self.buckets[slot];
                self.buckets[slot] = 0;
            }
            self.newest = idx;
        }
        while self.approvals.front().is_some_and(|&(t, _)| t + self.window <= now) {
            if let Some((_, r)) = self.approvals.pop_front() {
                self.approved -= r;
            }
        }
        if self.approvals.is_empty() {
            self.approved = 0.0; // no drift from float sums
        }
    }

    /// `bytes` were accepted for transmission at `now`.
    #[inline]
    pub fn add(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        self.buckets[(self.newest % QS_BUCKETS) as usize] += bytes;
        self.sum += bytes;
    }

    /// Measured utilisation (bit/s) over the last window: the bytes of the last `QS_BUCKETS`
    /// buckets over the time they span (less before the run is one window old).
    pub fn utilisation(&mut self, now: Time) -> f64 {
        self.advance(now);
        let span = ((QS_BUCKETS - 1) * self.bucket_ns + (now.as_nanos() - self.newest * self.bucket_ns)).min(now.as_nanos());
        if span == 0 {
            0.0
        } else {
            self.sum as f64 * 8.0 * 1e9 / span as f64
        }
    }

    /// The rate (bit/s) this router can still approve at `now`: `share·capacity − utilisation −
    /// Σ rates approved during the last window`.
    pub fn available(&mut self, now: Time, capacity_bps: f64, share: f64) -> f64 {
        let used = self.utilisation(now);
        share * capacity_bps - used - self.approved
    }

    /// A rate of `bps` was approved at `now`.
    pub fn approve(&mut self, now: Time, bps: f64) {
        self.approvals.push_back((now, bps));
        self.approved += bps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilisation_is_the_last_window_and_forgets_older_bytes() {
        let mut l = QsLink::new(Dur::from_secs(1));
        // 1250 bytes every ms for 2 s: 10 Mbit/s.
        for ms in 0..2000u64 {
            l.add(Time(ms * 1_000_000), 1250);
        }
        let u = l.utilisation(Time(2_000_000_000));
        assert!((u / 10e6 - 1.0).abs() < 0.01, "utilisation {u}");
        // 3 s of silence later nothing is left.
        assert_eq!(l.utilisation(Time(5_000_000_000)), 0.0);
    }

    #[test]
    fn approvals_count_for_one_window() {
        let mut l = QsLink::new(Dur::from_secs(1));
        l.approve(Time(0), 5.12e6);
        assert_eq!(l.available(Time(500_000_000), 10e6, 1.0), 10e6 - 5.12e6);
        assert_eq!(l.available(Time(1_000_000_000), 10e6, 0.5), 5e6, "expired after the window");
    }
}
