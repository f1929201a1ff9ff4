//! Seeded path impairments of one link direction (docs/IMPAIRMENTS.md): random and
//! Gilbert-Elliott loss, jitter (FIFO-preserving or reordering), aggregation of arrivals at
//! multiples of an interval, a piecewise-constant rate schedule and a Mahimahi-style trace of
//! delivery opportunities.
//!
//! A [`Channel`](crate::net::Channel) without impairments carries `None` and pays one branch per
//! packet. An impaired channel consults this state at three points of `Channel::offer`: the service
//! times (schedule or trace, instead of `size / rate`), after the queue admitted the packet (loss),
//! and for the far-end arrival time (jitter, aggregation). Every random draw comes from the
//! channel's own PCG stream (`rng::Component::Impairment`, instance = channel index), in packet
//! order: one draw for loss (two states' worth for Gilbert-Elliott: a loss draw and a transition
//! draw), then the jitter draws — so the same scenario and seed give the same impairments.

use rand::RngExt as _;
use rand_pcg::Pcg64;
use startlab_scenario::{AggregateSpec, CoalesceSpec, ImpairmentSpec, JitterDist, JitterSpec, LossSpec};
use startlab_units::{Dur, Rate, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bytes one delivery opportunity of a rate trace carries (Mahimahi's MTU).
pub const OPPORTUNITY_BYTES: u32 = 1500;

#[derive(Debug)]
enum LossState {
    Random { p: f64 },
    Gilbert { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64, bad: bool },
}

/// A delivery trace: opportunity `k` is at `(k / m) * period + ts[k % m]`.
#[derive(Debug)]
struct TraceState {
    ts_ns: Vec<u64>,
    period_ns: u64,
    /// Last opportunity used and the bytes it has left; `None` before the first packet.
    cursor: Option<(u64, u32)>,
}

impl TraceState {
    fn time_of(&self, k: u64) -> Time {
        let m = self.ts_ns.len() as u64;
        Time((k / m).saturating_mul(self.period_ns).saturating_add(self.ts_ns[(k % m) as usize]))
    }
    /// Index of the first opportunity at or after `t`.
    fn first_at_or_after(&self, t: Time) -> u64 {
        let m = self.ts_ns.len() as u64;
        let cyc = t.as_nanos() / self.period_ns;
        let r = t.as_nanos() % self.period_ns;
        let pos = self.ts_ns.partition_point(|&x| x < r) as u64;
        if pos == m {
            (cyc + 1) * m
        } else {
            cyc * m + pos
        }
    }
}

/// A service plan: when the packet leaves the queue, when its last bit is sent, and the trace
/// cursor after it (committed only if the packet is accepted).
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Leaves the queue (starts transmission).
    pub start: Time,
    /// Transmission ends.
    pub end: Time,
    cursor: Option<(u64, u32)>,
}

/// The impairment state of one link direction.
#[derive(Debug)]
pub struct Impairment {
    rng: Pcg64,
    loss: Option<LossState>,
    jitter: Option<JitterSpec>,
    aggregate: Option<AggregateSpec>,
    /// (release instant, packets released then) of the last aggregated packet, for `max_burst`.
    agg_slot: (Time, u64),
    coalesce: Option<CoalesceSpec>,
    /// The open coalescing batch: (release time, packets in it).
    batch: (Time, u64),
    schedule: Vec<(Time, Rate)>,
    trace: Option<TraceState>,
    last_arrival: Time,
    /// Packets in flight ordered by (arrival, seq), only when jitter may reorder.
    heap: Option<BinaryHeap<Reverse<(Time, u64, u32)>>>,
    /// Highest entry seq delivered so far (reordering count).
    max_seq_out: u64,
}

impl Impairment {
    /// The state for one direction described by `spec`, drawing from `rng`.
    pub fn new(spec: &ImpairmentSpec, rng: Pcg64) -> Impairment {
        let loss = spec.loss.map(|l| match l {
            LossSpec::Random { p } => LossState::Random { p },
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => LossState::Gilbert { p_gb, p_bg, loss_good, loss_bad, bad: false },
        });
        let trace = spec.rate_trace.as_ref().map(|t| TraceState {
            ts_ns: t.opportunities_ms.iter().map(|&ms| ms * 1_000_000).collect(),
            period_ns: t.period_ms.max(1) * 1_000_000,
            cursor: None,
        });
        Impairment {
            rng,
            loss,
            jitter: spec.jitter,
            aggregate: spec.aggregate,
            agg_slot: (Time::ZERO, 0),
            coalesce: spec.coalesce,
            batch: (Time::ZERO, 0),
            schedule: spec.rate.iter().map(|&(t, r)| (Time(t.as_nanos()), r)).collect(),
            trace,
            last_arrival: Time::ZERO,
            heap: spec.jitter.is_some_and(|j| j.reorder).then(BinaryHeap::new),
            max_seq_out: 0,
        }
    }

    /// The service times replace `size / rate` (a schedule or a trace).
    #[inline]
    pub fn shapes(&self) -> bool {
        self.trace.is_some() || !self.schedule.is_empty()
    }

    /// The rate in force at `t` (the topology's `base` before the first change point).
    pub fn rate_at(&self, t: Time, base: Rate) -> Rate {
        let i = self.schedule.partition_point(|&(at, _)| at <= t);
        if i == 0 {
            base
        } else {
            self.schedule[i - 1].1
        }
    }

    /// When a packet of `size` bytes arriving at `now` behind a transmitter busy until `busy`
    /// would be served. A schedule uses the rate in force when its transmission starts (a packet
    /// straddling a change point keeps that rate to its end). A trace sends it at the first
    /// opportunity at or after its head-of-queue time with room for it (see [`Impairment::commit`]).
    pub fn plan(&self, now: Time, busy: Time, size: u32, base: Rate) -> Plan {
        let head = now.max(busy);
        match &self.trace {
            Some(tr) => {
                if let Some((k, left)) = tr.cursor {
                    if left >= size && tr.time_of(k) >= head {
                        let t = tr.time_of(k);
                        return Plan { start: t, end: t, cursor: Some((k, left - size)) };
                    }
                }
                let mut k = tr.first_at_or_after(head);
                if let Some((used, _)) = tr.cursor {
                    k = k.max(used + 1);
                }
                let n = size.div_ceil(OPPORTUNITY_BYTES).max(1);
                let last = k + n as u64 - 1;
                let t = tr.time_of(last);
                Plan { start: t, end: t, cursor: Some((last, n * OPPORTUNITY_BYTES - size)) }
            }
            None => {
                let rate = self.rate_at(head, base);
                Plan { start: head, end: head + rate.tx_time(size as u64), cursor: None }
            }
        }
    }

    /// The planned packet was accepted.
    pub fn commit(&mut self, plan: &Plan) {
        if let Some(tr) = self.trace.as_mut() {
            tr.cursor = plan.cursor;
        }
    }

    /// Decides whether the packet the queue just admitted is lost (advancing a Gilbert-Elliott
    /// chain by one packet: the loss draw uses the current state, then the state moves).
    pub fn lose(&mut self) -> bool {
        match &mut self.loss {
            None => false,
            Some(LossState::Random { p }) => {
                let p = *p;
                self.rng.random::<f64>() < p
            }
            Some(LossState::Gilbert { p_gb, p_bg, loss_good, loss_bad, bad }) => {
                let p_loss = if *bad { *loss_bad } else { *loss_good };
                let lost = self.rng.random::<f64>() < p_loss;
                let flip = if *bad { *p_bg } else { *p_gb };
                if self.rng.random::<f64>() < flip {
                    *bad = !*bad;
                }
                lost
            }
        }
    }

    fn jitter_draw(&mut self, dist: JitterDist) -> Dur {
        match dist {
            JitterDist::Uniform { max } => Dur(self.rng.random_range(0..=max.as_nanos())),
            JitterDist::Normal { mean, sd } => {
                // Irwin-Hall: the sum of 12 U[0,1) minus 6 has mean 0 and variance 1, is within
                // ±6, and needs only IEEE additions (no libm), so it is bit-identical everywhere.
                let mut z = -6.0;
                for _ in 0..12 {
                    z += self.rng.random::<f64>();
                }
                let x = mean.as_nanos() as f64 + sd.as_nanos() as f64 * z;
                Dur(if x > 0.0 { x.round() as u64 } else { 0 })
            }
        }
    }

    /// The far-end arrival time of a packet that would arrive at `base` unimpaired: plus jitter
    /// (kept FIFO unless `reorder`), then held to the next release instant of the aggregation.
    pub fn arrival(&mut self, base: Time) -> Time {
        let mut t = base;
        if let Some(j) = self.jitter {
            t += self.jitter_draw(j.dist);
            if !j.reorder {
                t = t.max(self.last_arrival);
            }
        }
        if let Some(a) = self.aggregate {
            let i = a.interval.as_nanos();
            let slot = Time(t.as_nanos().div_ceil(i).saturating_mul(i));
            t = match a.max_burst {
                None => slot,
                Some(b) => {
                    let (last, n) = self.agg_slot;
                    let (s, n) = if slot > last {
                        (slot, 1)
                    } else if n < b {
                        (last, n + 1)
                    } else {
                        (last + a.interval, 1)
                    };
                    self.agg_slot = (s, n);
                    s
                }
            };
        }
        if let Some(c) = self.coalesce {
            // Arrival times are fixed when a packet enters the link, so a batch is released by its
            // timer only: a frame count that fills it early cannot move its earlier packets'
            // arrivals back. `frames` caps the batch instead (the next packet opens a new one).
            let (release, n) = self.batch;
            self.batch = if t < release && c.frames.is_none_or(|f| n < f) { (release, n + 1) } else { (t + c.timeout, 1) };
            t = self.batch.0;
        }
        self.last_arrival = self.last_arrival.max(t);
        t
    }

    /// Packets may overtake: the channel keeps them here rather than in its FIFO pipe.
    #[inline]
    pub fn reorders(&self) -> bool {
        self.heap.is_some()
    }

    /// Puts a packet in flight (reordering channels).
    pub fn push(&mut self, arrival: Time, seq: u64, pkt: u32) {
        if let Some(h) = self.heap.as_mut() {
            h.push(Reverse((arrival, seq, pkt)));
        }
    }

    /// Takes the earliest packet in flight (reordering channels); `true` if it overtook a packet
    /// that entered the link before it.
    pub fn pop(&mut self) -> Option<(u32, bool)> {
        let Reverse((_, seq, pkt)) = self.heap.as_mut()?.pop()?;
        let overtook = seq < self.max_seq_out;
        self.max_seq_out = self.max_seq_out.max(seq);
        Some((pkt, overtook))
    }

    /// Packets in flight in the reordering heap.
    pub fn in_flight(&self) -> usize {
        self.heap.as_ref().map_or(0, |h| h.len())
    }

    /// Handles of the packets in the reordering heap.
    pub fn packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.heap.iter().flat_map(|h| h.iter().map(|Reverse((_, _, p))| *p))
    }
}
