//! CoDel (RFC 8289): the packet at the head of the queue is judged by how long it waited. While
//! the sojourn time has stayed above `target` for at least `interval`, CoDel drops (or marks) at
//! dequeue, the next drop coming `interval / sqrt(count)` after the previous one (the control law),
//! and stops as soon as a packet leaves below `target` or the queue holds at most one MTU.
//!
//! This is RFC 8289 §5's pseudocode with `1/sqrt(count)` kept the way Linux and ns-3 keep it: a
//! 16-bit fixed-point reciprocal square root moved by one Newton step each time `count` changes
//! (reset to 1.0 when a drop state starts afresh), not recomputed exactly. The approximation is
//! coarse at small counts — the second drop comes interval/2 after the first, not interval/√2
//! (50 ms instead of 70.7 ms at the default interval), then 56.25, 48.8 and 44.1 ms — and it is what
//! the deployed CoDels do: with the exact root, ns-3 3.44 drops 6 packets in a first drop state
//! where this model dropped 4 (docs/QUEUES.md, "Against ns-3 3.44"). "Resuming" a drop state (§5.5:
//! `count` restarts from `count − lastcount` if the previous drop state ended less than 16
//! intervals ago) is as the RFC writes it, with one Newton step from the stored root. A packet is
//! marked instead of dropped when marking is on and it is ECN-capable; a marked packet leaves, as
//! in Linux and ns-3.

use super::{sojourn, DropCause, Ecn, Events, Fifo, QPacket};
use startlab_units::{Dur, Time};

/// CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoDelParams {
    /// Acceptable standing queue delay (RFC 8289: 5 ms).
    pub target: Dur,
    /// The window over which the delay must stay above `target` before dropping (100 ms).
    pub interval: Dur,
    /// A queue holding at most this many bytes is never dropped from (RFC 8289's MAXPACKET, the
    /// MTU; ns-3's `MinBytes`, 1500).
    pub mtu: u64,
    /// Mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
}

/// The state of one CoDel queue (one per FQ-CoDel flow bucket).
#[derive(Clone, Debug)]
pub struct CoDel {
    /// When the sojourn time first stayed above target long enough to drop (`None`: it is below).
    first_above_time: Option<Time>,
    /// Time of the next drop while dropping.
    drop_next: Time,
    /// Drops (and marks) since entering the drop state.
    count: u32,
    /// `count` when the last drop state was entered.
    lastcount: u32,
    /// In the drop state.
    dropping: bool,
    /// `1/sqrt(count)` in Q0.16 (0xFFFF is 1.0), moved by [`newton_step`] as `count` changes.
    rec_inv_sqrt: u16,
}

/// 1.0 in the Q0.16 reciprocal square root.
const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// One Newton iteration of `y ← y·(3 − count·y²)/2` towards `1/sqrt(count)`, in fixed point: `y` in
/// Q0.16 is widened to Q0.32, `y²` kept in Q0.32, and the result narrowed back (the arithmetic of
/// Linux's `codel_Newton_step`, written here from the formula).
fn newton_step(rec_inv_sqrt: u16, count: u32) -> u16 {
    let y = (rec_inv_sqrt as u64) << 16; // Q0.32
    let y2 = (y * y) >> 32; // Q0.32
    let three = 3u64 << 32;
    let t = three.saturating_sub(count as u64 * y2) >> 2; // (3 − c·y²)/4, Q0.32 scaled by 1/4
    let next = (t * y) >> (32 - 2 + 1); // ·y, undo the 1/4, halve: Q0.32
    (next >> 16).min(u16::MAX as u64) as u16
}

impl Default for CoDel {
    fn default() -> Self {
        CoDel { first_above_time: None, drop_next: Time::ZERO, count: 0, lastcount: 0, dropping: false, rec_inv_sqrt: REC_INV_SQRT_ONE }
    }
}

impl CoDel {
    /// In the drop state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// Drops and marks of the current (or last) drop state.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// RFC 8289 `dodequeue`: the head packet and whether it may be dropped.
    fn dodequeue(&mut self, p: &CoDelParams, q: &mut Fifo, now: Time) -> Option<(QPacket, bool)> {
        let Some(pkt) = q.pop() else {
            self.first_above_time = None;
            return None;
        };
        let mut ok_to_drop = false;
        if sojourn(&pkt, now) < p.target || q.bytes() <= p.mtu {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + p.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Some((pkt, ok_to_drop))
    }

    /// `t + interval/sqrt(count)`, with the stored reciprocal square root (interval × y in Q0.32).
    fn control_law(&self, p: &CoDelParams, t: Time) -> Time {
        t + Dur(((p.interval.as_nanos() as u128 * ((self.rec_inv_sqrt as u128) << 16)) >> 32) as u64)
    }

    /// Marks `pkt` (true) when marking is on and it is ECN-capable; otherwise it is to be dropped.
    fn mark(p: &CoDelParams, pkt: &mut QPacket) -> bool {
        if p.ecn && pkt.ecn.capable() {
            pkt.ecn = Ecn::Ce;
            return true;
        }
        false
    }

    /// RFC 8289 `dequeue`: the packet to send now, if any; the packets CoDel dropped on the way
    /// go to `ev`.
    pub fn dequeue(&mut self, p: &CoDelParams, q: &mut Fifo, now: Time, ev: &mut Events) -> Option<QPacket> {
        let Some((mut pkt, ok_to_drop)) = self.dodequeue(p, q, now) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
                return Some(pkt);
            }
            while now >= self.drop_next && self.dropping {
                self.count += 1;
                self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.count);
                if Self::mark(p, &mut pkt) {
                    self.drop_next = self.control_law(p, self.drop_next);
                    return Some(pkt);
                }
                ev.drops.push((pkt, DropCause::Aqm));
                match self.dodequeue(p, q, now) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((next, ok)) => {
                        pkt = next;
                        if ok {
                            self.drop_next = self.control_law(p, self.drop_next);
                        } else {
                            self.dropping = false;
                        }
                    }
                }
            }
            return Some(pkt);
        }
        if ok_to_drop {
            let marked = Self::mark(p, &mut pkt);
            let out = if marked {
                Some(pkt)
            } else {
                ev.drops.push((pkt, DropCause::Aqm));
                self.dodequeue(p, q, now).map(|(next, _)| next)
            };
            self.dropping = true;
            // §5.5: resume near the old drop rate if the last drop state ended recently.
            let delta = self.count.saturating_sub(self.lastcount);
            if delta > 1 && now.saturating_since(self.drop_next) < Dur(16 * p.interval.as_nanos()) {
                self.count = delta;
                self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.count);
            } else {
                self.count = 1;
                self.rec_inv_sqrt = REC_INV_SQRT_ONE;
            }
            self.lastcount = self.count;
            self.drop_next = self.control_law(p, now);
            return out;
        }
        Some(pkt)
    }
}

/// A CoDel queue: one FIFO with a packet limit and CoDel at its head.
#[derive(Clone, Debug)]
pub struct CoDelQueue {
    /// Parameters.
    pub params: CoDelParams,
    /// Most packets held (arrivals beyond it are dropped).
    pub limit: u64,
    /// The packets waiting.
    pub fifo: Fifo,
    /// CoDel's state.
    pub codel: CoDel,
}

impl CoDelQueue {
    /// An empty queue.
    pub fn new(params: CoDelParams, limit: u64) -> Self {
        CoDelQueue { params, limit, fifo: Fifo::default(), codel: CoDel::default() }
    }

    /// Takes the packet, or refuses it (false) when the queue is full.
    pub fn enqueue(&mut self, p: QPacket) -> bool {
        if self.fifo.len() as u64 >= self.limit {
            return false;
        }
        self.fifo.push(p);
        true
    }

    /// The next packet to send.
    pub fn dequeue(&mut self, now: Time, ev: &mut Events) -> Option<QPacket> {
        self.codel.dequeue(&self.params, &mut self.fifo, now, ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Dur::from_millis(ms)
    }

    fn params(ecn: bool) -> CoDelParams {
        CoDelParams { target: Dur::from_millis(5), interval: Dur::from_millis(100), mtu: 1500, ecn }
    }

    fn pkt(id: u32, at: Time, ecn: Ecn) -> QPacket {
        QPacket { pkt: id, size: 1500, flow: 0, ecn, enqueued: at }
    }

    /// A queue served at one packet per `gap` while `arrive_every` feeds it: returns the drop
    /// times.
    fn run(ecn: bool, arrivals: u32, arrive_every: Dur, gap: Dur, until: Time) -> (Vec<Time>, Vec<Time>) {
        let mut q = CoDelQueue::new(params(ecn), 10_000);
        let mut ev = Events::default();
        let (mut drops, mut marks) = (Vec::new(), Vec::new());
        let mut next_arrival = Time::ZERO;
        let mut sent = 0;
        let mut t = Time::ZERO;
        while t < until {
            while next_arrival <= t && sent < arrivals {
                q.enqueue(pkt(sent, next_arrival, Ecn::Ect0));
                sent += 1;
                next_arrival += arrive_every;
            }
            ev.drops.clear();
            if let Some(p) = q.dequeue(t, &mut ev) {
                if p.ecn == Ecn::Ce {
                    marks.push(t);
                }
            }
            drops.extend(ev.drops.iter().map(|_| t));
            t += gap;
        }
        (drops, marks)
    }

    #[test]
    fn the_newton_step_follows_the_deployed_fixed_point_schedule() {
        // From 1.0: 0.5 at count 2, 0.5625 at 3, 0.4878 at 4, 0.4412 at 5 (Q0.16), and it settles
        // on 1/sqrt(count) as count climbs one at a time (as it does while dropping).
        let mut y = REC_INV_SQRT_ONE;
        let mut got = Vec::new();
        for c in 2..=5 {
            y = newton_step(y, c);
            got.push(y as f64 / 65536.0);
        }
        for (g, want) in got.iter().zip([0.5, 0.5625, 0.4878, 0.4412]) {
            assert!((g - want).abs() < 0.001, "{got:?}");
        }
        let mut y = REC_INV_SQRT_ONE;
        for c in 2..=100 {
            y = newton_step(y, c);
        }
        assert!((y as f64 / 65536.0 - 0.1).abs() < 0.002, "{y}");
    }

    #[test]
    fn a_queue_below_target_is_never_dropped() {
        // Arrivals slower than service: every packet leaves at once.
        let (drops, marks) = run(false, 1000, Dur::from_millis(2), Dur::from_millis(1), at(3 * 1000));
        assert!(drops.is_empty() && marks.is_empty());
    }

    #[test]
    fn the_first_drop_comes_one_interval_after_the_delay_first_exceeds_target() {
        // Two arrivals per service slot of 1 ms: the packet dequeued at t ms arrived at t/2 ms.
        let (drops, _) = run(false, 100_000, Dur::from_micros(500), Dur::from_millis(1), at(400));
        let first = drops[0];
        // Its sojourn t/2 ms is first not below the 5 ms target at t = 10 ms, so first_above_time
        // = 10 ms + 100 ms and the first drop is at the dequeue at 110 ms.
        assert_eq!(first, at(110));
        // Entering the drop state sets count = 1: the next drop is one interval later, then
        // interval·y with y one Newton step from 1.0 at count 2: 0.5, so 50 ms (not 70.7), then
        // 56.25 ms at count 3 (y = 0.5625) — Linux's and ns-3's schedule.
        let mut distinct = drops.clone();
        distinct.dedup();
        assert_eq!(distinct[1], at(210));
        let gap = |k: usize| (distinct[k + 1] - distinct[k]).as_nanos() as f64 / 1e6;
        assert!((gap(1) - 50.0).abs() < 1.0 && (gap(2) - 56.25).abs() < 1.0, "{} {}", gap(1), gap(2));
    }

    #[test]
    fn drops_get_closer_as_the_count_grows() {
        let (drops, _) = run(false, 100_000, Dur::from_micros(500), Dur::from_millis(1), at(2 * 1000));
        let mut distinct: Vec<Time> = drops.clone();
        distinct.dedup();
        let gaps: Vec<u64> = distinct.windows(2).map(|w| (w[1] - w[0]).as_nanos()).collect();
        assert!(gaps.len() > 5);
        assert!(gaps[4] < gaps[0], "{gaps:?}");
    }

    #[test]
    fn with_ecn_ect_packets_are_marked_and_none_dropped() {
        let (drops, marks) = run(true, 100_000, Dur::from_micros(500), Dur::from_millis(1), at(400));
        assert!(drops.is_empty());
        assert_eq!(marks[0], at(110));
    }

    #[test]
    fn a_backlog_of_one_mtu_is_never_dropped() {
        // One 1500-byte packet left behind a 20 ms-old head: never above MAXPACKET.
        let mut q = CoDelQueue::new(params(false), 100);
        let mut ev = Events::default();
        for k in 0..200u32 {
            let t = at(10 * k as u64);
            q.enqueue(pkt(2 * k, t, Ecn::NotEct));
            q.enqueue(pkt(2 * k + 1, t, Ecn::NotEct));
            // Serve one 20 ms after: the queue holds one more packet (1500 B ≤ mtu) afterwards.
            let _ = q.dequeue(t + Dur::from_millis(20), &mut ev);
            let _ = q.dequeue(t + Dur::from_millis(20), &mut ev);
        }
        assert!(ev.drops.is_empty());
    }

    #[test]
    fn the_drop_state_resumes_near_its_old_count_within_16_intervals() {
        let p = params(false);
        let mut c = CoDel { count: 10, lastcount: 2, first_above_time: Some(Time::ZERO), drop_next: at(1000), ..CoDel::default() };
        let mut q = Fifo::default();
        let now = at(1500);
        q.push(pkt(1, Time::ZERO, Ecn::NotEct));
        q.push(pkt(2, Time::ZERO, Ecn::NotEct));
        q.push(pkt(3, Time::ZERO, Ecn::NotEct));
        let mut ev = Events::default();
        let _ = c.dequeue(&p, &mut q, now, &mut ev);
        assert!(c.dropping && c.count == 8, "count {}", c.count);
        // Long after the last drop state: count restarts at 1.
        let mut c = CoDel { count: 10, lastcount: 2, first_above_time: Some(Time::ZERO), drop_next: at(1000), ..CoDel::default() };
        q.push(pkt(4, Time::ZERO, Ecn::NotEct));
        q.push(pkt(5, Time::ZERO, Ecn::NotEct));
        let _ = c.dequeue(&p, &mut q, at(1000 + 1700), &mut ev);
        assert!(c.dropping && c.count == 1);
    }
}
