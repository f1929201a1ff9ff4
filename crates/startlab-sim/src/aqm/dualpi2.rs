//! DualPI2, the Dual-Queue Coupled AQM of L4S (RFC 9332), as RFC 9332 Appendix A gives it: a
//! PI² controller (Appendix A.1, with the edge cases of Appendix A.2) coupling a Classic queue (C)
//! and a low-latency L4S queue (L) that it owns.
//!
//! - **Classifier** (RFC 9332 §2.3, RFC 9331 §5.1): ECT(1) and CE go to L, Not-ECT and ECT(0) to C.
//! - **Base probability** `p'` (App. A.1 Fig. 6, App. A.2): every `Tupdate`,
//!   `p' += alpha·(curq − target) + beta·(curq − prevq)`, clamped to [0, 1], where `curq` is the
//!   larger of the two queues' head-packet sojourn times (App. A.2 "use greatest queuing time";
//!   the simplified first pass, App. A.1, samples the Classic queue only).
//! - **Coupling** (RFC 9332 §2.1, eq. (1)): `p_CL = k·p'` (capped at `p_Lmax`) for L and
//!   `p_C = p'²` for C.
//! - **L dequeue**: `p_L = max(p'_L, p_CL)` where the native L4S AQM `p'_L` is a step: 1 if the
//!   packet's sojourn (or the L backlog in packets) exceeds the step threshold, else 0; CE-marked
//!   with probability `p_L`. The native step is suppressed when the packet is alone in L (`Th_len`,
//!   App. A.2).
//! - **C dequeue**: with probability `p_C` the packet is dropped, or CE-marked if it is ECT(0) and
//!   Classic ECN is on; dropped packets are reported and the loop takes the next packet.
//! - **Overload** (RFC 9332 §4.2.3, App. A.2), when `drop_on_overload`: once `k·p' ≥ p_Lmax` the L
//!   queue drops with probability `p_C` before marking the rest with `p_CL`, and once
//!   `p_C ≥ p_Cmax` the C queue drops even ECN-capable packets. Without it, `p'` is held where
//!   neither `p_CL` exceeds `p_Lmax` nor `p_C` exceeds `p_Cmax`, so the queues grow to the buffer
//!   limit instead (Linux's "overflow" mode).
//! - **Scheduler**: the time-shifted FIFO of RFC 9332 App. A.1 (its `scheduler()` in App. B):
//!   L goes first unless the C head has waited more than `tshift` longer than the L head.
//!
//! Differences from Linux's `sch_dualpi2` (the RFC's reference implementation), which this does
//! not follow: Linux schedules with a weighted round robin on byte credits (`classic_protection`,
//! C weight 10 %), not a time-shifted FIFO; it never drops or marks while the whole backlog is
//! under 2 MTU; it decides the step per packet at enqueue (`min_qlen_step`, default 0: always);
//! its overload test is the strict `k·p' > 1`; and its buffer has a byte (memory) limit besides
//! the packet limit. The RFC's own buffer limit is in bytes (`MAX_LINK_RATE · 250 ms`); here it is
//! in packets, as in Linux.

use super::{sojourn, DropCause, Ecn, Events, Fifo, QPacket};
use rand::RngExt as _;
use rand_pcg::Pcg64;
use startlab_units::{Dur, Time};

/// DualPI2 parameters, named as in RFC 9332 Appendix A (Figure 2) where the RFC names them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Params {
    /// `target`: the queue delay the PI controller steers to (RFC: 15 ms).
    pub target: Dur,
    /// `Tupdate`: the interval between updates of `p'` (16 ms, as Linux; the RFC's formula
    /// `min(target, RTT_max/3)` gives 15 ms).
    pub t_update: Dur,
    /// `alpha`: the integral gain in Hz (0.16 for `Tupdate` = 16 ms and `RTT_max` = 100 ms;
    /// RFC formula `0.1·Tupdate/RTT_max²`).
    pub alpha: f64,
    /// `beta`: the proportional gain in Hz (3.2, as Linux; RFC formula `0.3/RTT_max`).
    pub beta: f64,
    /// `k`: the coupling factor between the queues (RFC: 2).
    pub k: f64,
    /// The L queue's native step threshold in time: an L packet whose sojourn exceeds it is marked
    /// (1 ms, as Linux; the RFC's example ramps from 800 µs to 1.2 ms).
    pub step_thresh: Dur,
    /// Use the packet form of the step instead: mark when more than `step_thresh_pkts` packets
    /// remain in L after the dequeue.
    pub step_packets: bool,
    /// The step threshold in packets, for `step_packets`.
    pub step_thresh_pkts: usize,
    /// `Th_len`: the native step applies only if L holds more than this many packets, the
    /// dequeued one included (RFC App. A.2: 1 packet, so a lone packet is never step-marked;
    /// 0 marks every packet over the threshold, as Linux's default). The RFC's pseudocode tests
    /// `lq.len()` after the dequeue, which read literally would also spare a packet with one
    /// behind it; its comments ("> 1 packet queued", "suppress marks 1 pkt queue") mean a lone
    /// packet, which is what this counts.
    pub th_len: usize,
    /// `p_Cmax`: above it the C queue drops instead of marking in overload (RFC: `min(1/k², 1)`).
    pub p_cmax: f64,
    /// `p_Lmax`: the largest L marking probability (RFC: 1).
    pub p_lmax: f64,
    /// `tshift`: the time-shifted FIFO's bias against C (RFC App. A.1: 50 ms for the public
    /// Internet; about 4·target in smaller private networks).
    pub tshift: Dur,
    /// Buffer limit in packets, both queues together (Linux: 10000).
    pub limit: usize,
    /// Classic ECN: CE-mark ECT(0) packets of the C queue instead of dropping them (RFC and
    /// Linux: on).
    pub ecn_classic: bool,
    /// Drop on overload (RFC 9332 §4.2.3): past `p_CL = p_Lmax` the L queue drops too and C
    /// stops marking; off, `p'` saturates and the queues overflow instead (Linux: on).
    pub drop_on_overload: bool,
}

impl DualPi2Params {
    /// `p_Cmax = min(1/k², 1)` for a coupling factor `k` (RFC 9332 App. A.1, Figure 2).
    pub fn p_cmax_for(k: f64) -> f64 {
        (1.0 / (k * k)).min(1.0)
    }
}

impl Default for DualPi2Params {
    fn default() -> Self {
        let k = 2.0;
        DualPi2Params {
            target: Dur::from_millis(15),
            t_update: Dur::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            k,
            step_thresh: Dur::from_millis(1),
            step_packets: false,
            step_thresh_pkts: 1,
            th_len: 1,
            p_cmax: DualPi2Params::p_cmax_for(k),
            p_lmax: 1.0,
            tshift: Dur::from_millis(50),
            limit: 10_000,
            ecn_classic: true,
            drop_on_overload: true,
        }
    }
}

/// A DualPI2 queue: the L and C FIFOs, the PI² state and the timer of its updates.
#[derive(Clone, Debug)]
pub struct DualPi2 {
    p: DualPi2Params,
    l: Fifo,
    c: Fifo,
    /// `p'`, the base probability.
    p_prime: f64,
    /// `p_C = p'²`.
    p_c: f64,
    /// `p_CL = min(k·p', p_Lmax)`.
    p_cl: f64,
    /// `prevq`: the queue delay at the previous update.
    prev_q: Dur,
    next_update: Time,
}

/// ECT(1) and CE go to the L queue (RFC 9331 §5.1, RFC 9332 App. A.1 Figure 3).
fn is_l4s(ecn: Ecn) -> bool {
    matches!(ecn, Ecn::Ect1 | Ecn::Ce)
}

/// True with probability `p`; draws only when `p` is strictly between 0 and 1.
fn roll(rng: &mut Pcg64, p: f64) -> bool {
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        rng.random::<f64>() < p
    }
}

impl DualPi2 {
    /// An empty DualPI2 with `p' = 0`, its first update due at `Tupdate`.
    ///
    /// Panics if `t_update` is zero or `k` is not positive (the scenario edge checks both).
    pub fn new(p: DualPi2Params) -> DualPi2 {
        assert!(p.t_update > Dur::ZERO, "DualPI2 needs a positive Tupdate");
        assert!(p.k > 0.0, "DualPI2 needs a positive coupling factor");
        DualPi2 {
            p,
            l: Fifo::default(),
            c: Fifo::default(),
            p_prime: 0.0,
            p_c: 0.0,
            p_cl: 0.0,
            prev_q: Dur::ZERO,
            next_update: Time::ZERO + p.t_update,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &DualPi2Params {
        &self.p
    }

    /// Classifies `pkt` (ECT(1)/CE → L, else C; RFC 9332 App. A.1 Figure 3), timestamps it with
    /// `now` and appends it, or tail-drops it ([`DropCause::Overflow`] in `ev`) if the buffer
    /// already holds `limit` packets. No AQM decision is taken here (the RFC decides at
    /// dequeue), so `_rng` is unused; it keeps the shape of the other disciplines.
    pub fn enqueue(&mut self, now: Time, mut pkt: QPacket, _rng: &mut Pcg64, ev: &mut Events) {
        if self.len() >= self.p.limit {
            ev.drops.push((pkt, DropCause::Overflow));
            return;
        }
        pkt.enqueued = now;
        if is_l4s(pkt.ecn) {
            self.l.push(pkt);
        } else {
            self.c.push(pkt);
        }
    }

    /// The next packet to send, or `None` if both queues are empty (RFC 9332 App. A.1 Figure 4,
    /// with App. A.2's overload and `Th_len` details). Packets the AQM drops on the way are
    /// reported in `ev` with [`DropCause::Aqm`]; a marked packet comes back with [`Ecn::Ce`].
    pub fn dequeue(&mut self, now: Time, rng: &mut Pcg64, ev: &mut Events) -> Option<QPacket> {
        loop {
            let from_l = self.l_goes_first(now)?;
            if from_l {
                // L holds the packet plus what remains behind it.
                let held = self.l.len();
                let mut pkt = self.l.pop()?;
                if self.l_overloaded() {
                    // Overload saturation: revert to Classic drops, then mark the rest.
                    if roll(rng, self.p_c) {
                        ev.drops.push((pkt, DropCause::Aqm));
                        continue;
                    }
                    if roll(rng, self.p_cl) {
                        pkt.ecn = Ecn::Ce;
                    }
                } else {
                    // p_L = max(p'_L, p_CL), with the native step p'_L either 0 or 1.
                    let native = held > self.p.th_len && self.step_exceeded(&pkt, now);
                    if native || roll(rng, self.p_cl) {
                        pkt.ecn = Ecn::Ce;
                    }
                }
                return Some(pkt);
            }
            let mut pkt = self.c.pop()?;
            if roll(rng, self.p_c) {
                let mark = self.p.ecn_classic && pkt.ecn.capable() && !self.c_overloaded();
                if !mark {
                    ev.drops.push((pkt, DropCause::Aqm));
                    continue;
                }
                pkt.ecn = Ecn::Ce;
            }
            return Some(pkt);
        }
    }

    /// When [`DualPi2::update`] is next due.
    pub fn next_update(&self) -> Time {
        self.next_update
    }

    /// The PI² update (RFC 9332 App. A.1 Figure 6, App. A.2): `p'` moves by
    /// `alpha·(curq − target) + beta·(curq − prevq)` and is clamped (see
    /// [`DualPi2Params::drop_on_overload`]); `p_C` and `p_CL` follow. The next update is due
    /// `Tupdate` after `now`.
    pub fn update(&mut self, now: Time) {
        let curq = self.qdelay(now);
        let integral = self.p.alpha * (curq.as_secs_f64() - self.p.target.as_secs_f64());
        let proportional = self.p.beta * (curq.as_secs_f64() - self.prev_q.as_secs_f64());
        self.set_p_prime(self.p_prime + integral + proportional);
        self.prev_q = curq;
        self.next_update = now + self.p.t_update;
    }

    /// The controller's input at `now`: the larger of the L and C head packets' sojourn times
    /// (zero for an empty queue).
    pub fn qdelay(&self, now: Time) -> Dur {
        let head = |q: &Fifo| q.head().map_or(Dur::ZERO, |p| sojourn(p, now));
        head(&self.l).max(head(&self.c))
    }

    /// Every packet waiting, the L queue's first.
    pub fn packets(&self) -> impl Iterator<Item = &QPacket> + '_ {
        self.l.iter().chain(self.c.iter())
    }

    /// `p'`, the base probability.
    pub fn p_prime(&self) -> f64 {
        self.p_prime
    }

    /// `p_C = p'²`: the C queue's drop (or mark) probability.
    pub fn p_c(&self) -> f64 {
        self.p_c
    }

    /// `p_CL = min(k·p', p_Lmax)`: the L queue's coupled marking probability.
    pub fn p_cl(&self) -> f64 {
        self.p_cl
    }

    /// Packets in the L queue.
    pub fn l_len(&self) -> usize {
        self.l.len()
    }

    /// Packets in the C queue.
    pub fn c_len(&self) -> usize {
        self.c.len()
    }

    /// Packets in both queues.
    pub fn len(&self) -> usize {
        self.l.len() + self.c.len()
    }

    /// Both queues are empty.
    pub fn is_empty(&self) -> bool {
        self.l.is_empty() && self.c.is_empty()
    }

    /// Bytes in the L queue.
    pub fn l_bytes(&self) -> u64 {
        self.l.bytes()
    }

    /// Bytes in the C queue.
    pub fn c_bytes(&self) -> u64 {
        self.c.bytes()
    }

    /// Bytes in both queues.
    pub fn bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }

    /// Sets `p'` within its bounds and derives `p_C` and `p_CL` from it.
    fn set_p_prime(&mut self, v: f64) {
        let cap = if self.p.drop_on_overload {
            1.0
        } else {
            (self.p.p_lmax / self.p.k).min(self.p.p_cmax.sqrt()).min(1.0)
        };
        self.p_prime = v.clamp(0.0, cap);
        self.p_c = self.p_prime * self.p_prime;
        self.p_cl = (self.p.k * self.p_prime).min(self.p.p_lmax);
    }

    /// The time-shifted FIFO (RFC 9332 App. A.1, App. B): `Some(true)` for L unless the C head
    /// has waited more than `tshift` longer; `None` if both queues are empty.
    fn l_goes_first(&self, now: Time) -> Option<bool> {
        match (self.l.head(), self.c.head()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(l), Some(c)) => Some(sojourn(l, now) + self.p.tshift >= sojourn(c, now)),
        }
    }

    /// The native L4S step for `pkt`, just taken from L (the packet form counts what remains).
    fn step_exceeded(&self, pkt: &QPacket, now: Time) -> bool {
        if self.p.step_packets {
            self.l.len() > self.p.step_thresh_pkts
        } else {
            sojourn(pkt, now) > self.p.step_thresh
        }
    }

    /// L is past saturation (`k·p' ≥ p_Lmax`) and drops on overload.
    fn l_overloaded(&self) -> bool {
        self.p.drop_on_overload && self.p_cl >= self.p.p_lmax
    }

    /// C is past `p_Cmax` and drops on overload: ECN no longer replaces drops.
    fn c_overloaded(&self) -> bool {
        self.p.drop_on_overload && self.p_c >= self.p.p_cmax
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u32, ecn: Ecn) -> QPacket {
        QPacket { pkt: id, size: 1000 + id, flow: 7, ecn, enqueued: Time::ZERO }
    }

    fn at_ms(ms: u64) -> Time {
        Time::ZERO + Dur::from_millis(ms)
    }

    fn at_us(us: u64) -> Time {
        Time::ZERO + Dur::from_micros(us)
    }

    fn rng(seed: u64) -> Pcg64 {
        Pcg64::new(seed as u128 | 1 << 100, 0xda3e_39cb_94b9_5bdb)
    }

    /// A DualPI2 with `p'` forced (its update-time bounds applied).
    fn forced(p: DualPi2Params, p_prime: f64) -> DualPi2 {
        let mut q = DualPi2::new(p);
        q.set_p_prime(p_prime);
        q
    }

    /// Enqueues `n` packets of codepoint `ecn` at `at`, ids from `first`.
    fn fill(q: &mut DualPi2, at: Time, first: u32, n: u32, ecn: Ecn) {
        let (mut r, mut ev) = (rng(0), Events::default());
        for i in first..first + n {
            q.enqueue(at, pkt(i, ecn), &mut r, &mut ev);
        }
        assert!(ev.drops.is_empty());
    }

    fn drain(q: &mut DualPi2, now: Time, r: &mut Pcg64, ev: &mut Events) -> Vec<QPacket> {
        std::iter::from_fn(|| q.dequeue(now, r, ev)).collect()
    }

    #[test]
    fn ect1_and_ce_go_to_l_and_the_rest_to_c_timestamped_at_enqueue() {
        let mut q = DualPi2::new(DualPi2Params::default());
        let (mut r, mut ev) = (rng(1), Events::default());
        for (i, ecn) in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].into_iter().enumerate() {
            q.enqueue(at_ms(3), pkt(i as u32, ecn), &mut r, &mut ev);
        }
        assert!(ev.drops.is_empty());
        assert_eq!((q.l_len(), q.c_len(), q.len()), (2, 2, 4));
        assert_eq!((q.l_bytes(), q.c_bytes(), q.bytes()), (1001 + 1003, 1000 + 1002, 4006));
        assert_eq!(q.l.head().map(|p| (p.pkt, p.enqueued)), Some((1, at_ms(3))));
        assert_eq!(q.c.head().map(|p| (p.pkt, p.enqueued)), Some((0, at_ms(3))));
        // With p' = 0 nothing is marked or dropped; L's two come first.
        let out = drain(&mut q, at_ms(3), &mut r, &mut ev);
        let ids: Vec<_> = out.iter().map(|p| (p.pkt, p.ecn)).collect();
        assert_eq!(
            ids,
            [(1, Ecn::Ect1), (3, Ecn::Ce), (0, Ecn::NotEct), (2, Ecn::Ect0)],
            "FIFO within each queue, L first, codepoints untouched"
        );
        assert!(q.is_empty() && ev.drops.is_empty());
    }

    #[test]
    fn a_full_buffer_tail_drops_arrivals_of_either_class() {
        let p = DualPi2Params { limit: 3, ..DualPi2Params::default() };
        let mut q = DualPi2::new(p);
        let (mut r, mut ev) = (rng(2), Events::default());
        q.enqueue(at_ms(0), pkt(0, Ecn::Ect1), &mut r, &mut ev);
        q.enqueue(at_ms(0), pkt(1, Ecn::NotEct), &mut r, &mut ev);
        q.enqueue(at_ms(0), pkt(2, Ecn::Ect1), &mut r, &mut ev);
        assert!(ev.drops.is_empty());
        q.enqueue(at_ms(1), pkt(3, Ecn::NotEct), &mut r, &mut ev);
        q.enqueue(at_ms(1), pkt(4, Ecn::Ect1), &mut r, &mut ev);
        let dropped: Vec<_> = ev.drops.iter().map(|(p, c)| (p.pkt, *c)).collect();
        assert_eq!(dropped, [(3, DropCause::Overflow), (4, DropCause::Overflow)]);
        assert_eq!((q.l_len(), q.c_len()), (2, 1));
        // Room again after a departure.
        assert!(q.dequeue(at_ms(1), &mut r, &mut ev).is_some());
        q.enqueue(at_ms(2), pkt(5, Ecn::NotEct), &mut r, &mut ev);
        assert_eq!((ev.drops.len(), q.len()), (2, 3));
    }

    #[test]
    fn p_prime_follows_the_pi2_update_on_the_classic_head_delay() {
        let mut q = DualPi2::new(DualPi2Params::default());
        assert_eq!(q.next_update(), at_ms(16));
        fill(&mut q, at_ms(0), 0, 1, Ecn::NotEct);
        // curq = 25 ms, prevq = 0: 0.16·(0.025 − 0.015) + 3.2·(0.025 − 0) = 0.0016 + 0.08.
        q.update(at_ms(25));
        assert!((q.p_prime() - 0.0816).abs() < 1e-12, "{}", q.p_prime());
        assert_eq!(q.next_update(), at_ms(41));
        // curq = 41 ms, prevq = 25 ms: + 0.16·0.026 + 3.2·0.016 = + 0.00416 + 0.0512.
        q.update(at_ms(41));
        assert!((q.p_prime() - 0.13696).abs() < 1e-12, "{}", q.p_prime());
        // The queue empties: curq = 0: + 0.16·(−0.015) + 3.2·(−0.041) = − 0.0024 − 0.1312.
        let (mut r, mut ev) = (rng(3), Events::default());
        drain(&mut q, at_ms(41), &mut r, &mut ev);
        q.update(at_ms(57));
        assert!((q.p_prime() - 0.00336).abs() < 1e-12, "{}", q.p_prime());
        // Idle: only the integral term, − 0.0024 per update, down to 0 and no further.
        q.update(at_ms(73));
        assert!((q.p_prime() - 0.00096).abs() < 1e-12, "{}", q.p_prime());
        q.update(at_ms(89));
        assert_eq!((q.p_prime(), q.p_c(), q.p_cl()), (0.0, 0.0, 0.0));
        assert_eq!(q.next_update(), at_ms(105));
    }

    #[test]
    fn the_controller_uses_the_larger_of_the_l_and_c_head_delays() {
        let mut q = DualPi2::new(DualPi2Params::default());
        fill(&mut q, at_ms(0), 0, 1, Ecn::Ect1);
        fill(&mut q, at_ms(20), 1, 1, Ecn::NotEct);
        assert_eq!(q.qdelay(at_ms(25)), Dur::from_millis(25));
        q.update(at_ms(25));
        // From L's 25 ms (C's 5 ms alone would give −0.0016 + 0.016 = 0.0144).
        assert!((q.p_prime() - 0.0816).abs() < 1e-12, "{}", q.p_prime());
        // The other way round: the C head is the older one.
        let mut q = DualPi2::new(DualPi2Params::default());
        fill(&mut q, at_ms(0), 0, 1, Ecn::NotEct);
        fill(&mut q, at_ms(20), 1, 1, Ecn::Ect1);
        q.update(at_ms(25));
        assert!((q.p_prime() - 0.0816).abs() < 1e-12, "{}", q.p_prime());
    }

    #[test]
    fn p_prime_is_clamped_to_one_or_to_saturation_without_drop_on_overload() {
        let mut q = DualPi2::new(DualPi2Params::default());
        fill(&mut q, at_ms(0), 0, 1, Ecn::NotEct);
        // 0.16·0.985 + 3.2·1.0 ≫ 1.
        q.update(at_ms(1000));
        assert_eq!((q.p_prime(), q.p_c(), q.p_cl()), (1.0, 1.0, 1.0));
        let p = DualPi2Params { drop_on_overload: false, ..DualPi2Params::default() };
        let mut q = DualPi2::new(p);
        fill(&mut q, at_ms(0), 0, 1, Ecn::NotEct);
        q.update(at_ms(1000));
        // Held at 1/k: p_CL = p_Lmax = 1 and p_C = p_Cmax = 1/4.
        assert_eq!((q.p_prime(), q.p_c(), q.p_cl()), (0.5, 0.25, 1.0));
    }

    #[test]
    fn p_c_is_p_prime_squared_and_p_cl_is_k_p_prime_capped_at_p_lmax() {
        let q = forced(DualPi2Params::default(), 0.3);
        assert!((q.p_c() - 0.09).abs() < 1e-12 && (q.p_cl() - 0.6).abs() < 1e-12);
        let q = forced(DualPi2Params::default(), 0.6);
        assert!((q.p_c() - 0.36).abs() < 1e-12, "{}", q.p_c());
        assert_eq!(q.p_cl(), 1.0, "k·p' = 1.2 is capped at p_Lmax");
        let k4 =
            DualPi2Params { k: 4.0, p_cmax: DualPi2Params::p_cmax_for(4.0), ..Default::default() };
        let q = forced(k4, 0.2);
        assert!((q.p_c() - 0.04).abs() < 1e-12 && (q.p_cl() - 0.8).abs() < 1e-12);
        let low_cap = DualPi2Params { p_lmax: 0.5, ..DualPi2Params::default() };
        assert_eq!(forced(low_cap, 0.3).p_cl(), 0.5);
        assert_eq!(DualPi2Params::p_cmax_for(2.0), 0.25);
        assert_eq!(DualPi2Params::p_cmax_for(0.5), 1.0);
    }

    #[test]
    fn an_l_packet_is_step_marked_only_when_its_sojourn_exceeds_the_threshold() {
        let p = DualPi2Params { th_len: 0, ..DualPi2Params::default() };
        let (mut r, mut ev) = (rng(4), Events::default());
        for (wait, want) in [
            (Dur::from_micros(999), Ecn::Ect1),
            (Dur::from_millis(1), Ecn::Ect1),
            (Dur::from_millis(1) + Dur(1), Ecn::Ce),
            (Dur::from_millis(30), Ecn::Ce),
        ] {
            let mut q = DualPi2::new(p);
            fill(&mut q, at_ms(10), 0, 1, Ecn::Ect1);
            let out = q.dequeue(at_ms(10) + wait, &mut r, &mut ev);
            assert_eq!(out.map(|p| p.ecn), Some(want), "sojourn {wait}");
        }
        assert!(ev.drops.is_empty());
    }

    #[test]
    fn th_len_spares_a_lone_l_packet_from_the_step() {
        // Default Th_len = 1: a packet alone in L is not step-marked however long it waited.
        let (mut r, mut ev) = (rng(5), Events::default());
        let mut q = DualPi2::new(DualPi2Params::default());
        fill(&mut q, at_ms(0), 0, 1, Ecn::Ect1);
        assert_eq!(q.dequeue(at_ms(5), &mut r, &mut ev).map(|p| p.ecn), Some(Ecn::Ect1));
        // Two packets: the first (one behind it) is marked, the last (alone) is not.
        fill(&mut q, at_ms(0), 1, 2, Ecn::Ect1);
        let out: Vec<_> = drain(&mut q, at_ms(5), &mut r, &mut ev).iter().map(|p| p.ecn).collect();
        assert_eq!(out, [Ecn::Ce, Ecn::Ect1]);
    }

    #[test]
    fn the_packet_form_of_the_step_counts_what_remains_in_l() {
        let p = DualPi2Params {
            step_packets: true,
            step_thresh_pkts: 2,
            th_len: 0,
            ..Default::default()
        };
        let mut q = DualPi2::new(p);
        fill(&mut q, at_ms(0), 0, 5, Ecn::Ect1);
        let (mut r, mut ev) = (rng(6), Events::default());
        // Sojourn 0 throughout: only the backlog counts. 4 and 3 remain (> 2), then 2, 1, 0.
        let out: Vec<_> = drain(&mut q, at_ms(0), &mut r, &mut ev).iter().map(|p| p.ecn).collect();
        assert_eq!(out, [Ecn::Ce, Ecn::Ce, Ecn::Ect1, Ecn::Ect1, Ecn::Ect1]);
    }

    #[test]
    fn l_marking_is_the_max_of_the_step_and_the_coupled_probability() {
        // p' = 0.5 without drop on overload: p_CL = 1, so even a fresh lone packet is marked.
        let p = DualPi2Params { drop_on_overload: false, ..DualPi2Params::default() };
        let mut q = forced(p, 0.5);
        fill(&mut q, at_ms(0), 0, 1, Ecn::Ect1);
        let (mut r, mut ev) = (rng(7), Events::default());
        assert_eq!(q.dequeue(at_ms(0), &mut r, &mut ev).map(|p| p.ecn), Some(Ecn::Ce));
        // p' = 0.2, k = 2: about 40 % of fresh L packets are marked (the step never fires).
        let mut q = forced(DualPi2Params { limit: 20_000, ..Default::default() }, 0.2);
        fill(&mut q, at_ms(0), 0, 20_000, Ecn::Ect1);
        let out = drain(&mut q, at_ms(0), &mut r, &mut ev);
        let marked = out.iter().filter(|p| p.ecn == Ecn::Ce).count() as f64 / out.len() as f64;
        assert!((marked - 0.4).abs() < 0.015, "marked fraction {marked}");
        assert!(ev.drops.is_empty(), "L never drops below overload");
    }

    #[test]
    fn classic_packets_are_dropped_with_p_prime_squared() {
        let mut q = forced(DualPi2Params { limit: 20_000, ..Default::default() }, 0.3);
        fill(&mut q, at_ms(0), 0, 20_000, Ecn::NotEct);
        let (mut r, mut ev) = (rng(8), Events::default());
        let out = drain(&mut q, at_ms(0), &mut r, &mut ev);
        let dropped = ev.drops.len() as f64 / 20_000.0;
        // p_C = 0.09 (k·p' = 0.6 or (k·p')² = 0.36 would be far off).
        assert!((dropped - 0.09).abs() < 0.008, "dropped fraction {dropped}");
        assert_eq!(out.len() + ev.drops.len(), 20_000);
        assert!(ev.drops.iter().all(|(_, c)| *c == DropCause::Aqm));
        assert!(out.iter().all(|p| p.ecn == Ecn::NotEct));
    }

    #[test]
    fn classic_ecn_marks_ect0_instead_of_dropping_it_below_overload() {
        // p' = 0.4: p_C = 0.16 < p_Cmax = 0.25 and p_CL = 0.8 < 1: no overload.
        let run = |ecn_classic: bool, codepoint: Ecn| {
            let p = DualPi2Params { ecn_classic, ..DualPi2Params::default() };
            let mut q = forced(p, 0.4);
            fill(&mut q, at_ms(0), 0, 10_000, codepoint);
            let (mut r, mut ev) = (rng(9), Events::default());
            let out = drain(&mut q, at_ms(0), &mut r, &mut ev);
            let marks = out.iter().filter(|p| p.ecn == Ecn::Ce).count();
            (marks, ev.drops.len())
        };
        let (marks, drops) = run(true, Ecn::Ect0);
        assert_eq!(drops, 0);
        assert!((marks as f64 / 10_000.0 - 0.16).abs() < 0.015, "marks {marks}");
        let (marks, drops) = run(false, Ecn::Ect0);
        assert_eq!(marks, 0);
        assert!((drops as f64 / 10_000.0 - 0.16).abs() < 0.015, "drops {drops}");
        let (marks, drops) = run(true, Ecn::NotEct);
        assert_eq!(marks, 0, "Not-ECT packets can only be dropped");
        assert!(drops > 1000);
    }

    #[test]
    fn in_overload_c_drops_ect0_and_l_drops_with_p_c_then_marks_the_rest() {
        // p' = 0.7: p_C = 0.49 ≥ p_Cmax and k·p' = 1.4 ≥ p_Lmax.
        let mut q = forced(DualPi2Params::default(), 0.7);
        fill(&mut q, at_ms(0), 0, 10_000, Ecn::Ect0);
        let (mut r, mut ev) = (rng(10), Events::default());
        let out = drain(&mut q, at_ms(0), &mut r, &mut ev);
        assert!(out.iter().all(|p| p.ecn == Ecn::Ect0), "overload disables classic ECN");
        assert!((ev.drops.len() as f64 / 10_000.0 - 0.49).abs() < 0.02, "{}", ev.drops.len());
        let mut q = forced(DualPi2Params::default(), 0.7);
        fill(&mut q, at_ms(0), 0, 10_000, Ecn::Ect1);
        let mut ev = Events::default();
        let out = drain(&mut q, at_ms(0), &mut r, &mut ev);
        assert!((ev.drops.len() as f64 / 10_000.0 - 0.49).abs() < 0.02, "{}", ev.drops.len());
        assert!(out.iter().all(|p| p.ecn == Ecn::Ce), "the L packets left are all marked");
        // Just below overload (p' = 0.49: p_C = 0.2401, p_CL = 0.98) L never drops.
        let mut q = forced(DualPi2Params::default(), 0.49);
        fill(&mut q, at_ms(0), 0, 1000, Ecn::Ect1);
        let mut ev = Events::default();
        drain(&mut q, at_ms(0), &mut r, &mut ev);
        assert!(ev.drops.is_empty());
    }

    #[test]
    fn without_drop_on_overload_saturation_marks_but_never_drops_l_or_ect0() {
        let p = DualPi2Params { drop_on_overload: false, ..DualPi2Params::default() };
        let mut q = DualPi2::new(p);
        fill(&mut q, at_ms(0), 0, 500, Ecn::Ect1);
        fill(&mut q, at_ms(0), 500, 500, Ecn::Ect0);
        q.update(at_ms(1000));
        assert_eq!(q.p_prime(), 0.5);
        let (mut r, mut ev) = (rng(11), Events::default());
        let out = drain(&mut q, at_ms(1000), &mut r, &mut ev);
        assert!(ev.drops.is_empty(), "{} drops", ev.drops.len());
        assert_eq!(out.len(), 1000);
        // Every L packet is marked (p_CL = 1); about p_C = 1/4 of the ECT(0) ones.
        assert!(out.iter().filter(|p| p.pkt < 500).all(|p| p.ecn == Ecn::Ce));
        let c_marks = out.iter().filter(|p| p.pkt >= 500 && p.ecn == Ecn::Ce).count();
        assert!((80..170).contains(&c_marks), "{c_marks}");
    }

    #[test]
    fn the_scheduler_prefers_l_unless_c_waited_more_than_tshift_longer() {
        // tshift = 50 ms. C waited 20 ms, L 10 ms: L first.
        let (mut r, mut ev) = (rng(12), Events::default());
        let first_out = |c_at: Time, l_at: Time, now: Time, r: &mut Pcg64, ev: &mut Events| {
            let mut q = DualPi2::new(DualPi2Params::default());
            fill(&mut q, c_at, 0, 1, Ecn::NotEct);
            fill(&mut q, l_at, 1, 1, Ecn::Ect1);
            q.dequeue(now, r, ev).map(|p| p.pkt)
        };
        assert_eq!(first_out(at_ms(0), at_ms(10), at_ms(20), &mut r, &mut ev), Some(1));
        // C waited exactly tshift longer (60 vs 10 ms): still L.
        assert_eq!(first_out(at_ms(0), at_ms(50), at_ms(60), &mut r, &mut ev), Some(1));
        // One microsecond more: C.
        assert_eq!(first_out(at_ms(0), at_us(50_001), at_ms(60), &mut r, &mut ev), Some(0));
        assert_eq!(first_out(at_ms(0), at_ms(60), at_ms(70), &mut r, &mut ev), Some(0));
        // A custom shift of 0: plain FIFO on the heads.
        let p = DualPi2Params { tshift: Dur::ZERO, ..DualPi2Params::default() };
        let mut q = DualPi2::new(p);
        fill(&mut q, at_ms(0), 0, 1, Ecn::NotEct);
        fill(&mut q, at_ms(1), 1, 1, Ecn::Ect1);
        assert_eq!(q.dequeue(at_ms(2), &mut r, &mut ev).map(|p| p.pkt), Some(0));
        assert!(ev.drops.is_empty());
    }

    #[test]
    fn dequeue_drops_and_moves_on_to_the_next_packet() {
        // p' = 1 held (no drop on overload, k = 1, p_Cmax = 1): p_C = 1, so every Not-ECT C
        // packet is dropped, and p_CL = 1 marks the L packet behind them.
        let p =
            DualPi2Params { k: 1.0, p_cmax: 1.0, drop_on_overload: false, ..Default::default() };
        let mut q = forced(p, 1.0);
        assert_eq!(q.p_prime(), 1.0);
        fill(&mut q, at_ms(0), 0, 3, Ecn::NotEct);
        fill(&mut q, at_ms(100), 3, 1, Ecn::Ect1);
        let (mut r, mut ev) = (rng(13), Events::default());
        // C's head waited 100 ms more than L's (> tshift): the three C packets go first.
        let out = q.dequeue(at_ms(100), &mut r, &mut ev);
        assert_eq!(out.map(|p| (p.pkt, p.ecn)), Some((3, Ecn::Ce)));
        let dropped: Vec<_> = ev.drops.iter().map(|(p, c)| (p.pkt, *c)).collect();
        assert_eq!(dropped, [(0, DropCause::Aqm), (1, DropCause::Aqm), (2, DropCause::Aqm)]);
        assert!(q.is_empty());
        // With drop on overload, k·p' = p_Lmax: the overloaded L queue drops with p_C = 1 too.
        let mut q = forced(DualPi2Params { k: 1.0, p_cmax: 1.0, ..Default::default() }, 1.0);
        fill(&mut q, at_ms(0), 0, 3, Ecn::NotEct);
        fill(&mut q, at_ms(100), 3, 1, Ecn::Ect1);
        let mut ev = Events::default();
        assert_eq!(q.dequeue(at_ms(100), &mut r, &mut ev), None);
        let dropped: Vec<_> = ev.drops.iter().map(|(p, _)| p.pkt).collect();
        assert_eq!(dropped, [0, 1, 2, 3]);
        assert!(q.is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_marks_and_drops() {
        let run = |seed: u64| {
            let mut q = DualPi2::new(DualPi2Params { limit: 200, ..Default::default() });
            let (mut r, mut ev) = (rng(seed), Events::default());
            let mut out = Vec::new();
            for step in 0..2_000u64 {
                let now = at_us(step * 300);
                let ecn = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ect1][step as usize % 4];
                q.enqueue(now, pkt(step as u32, ecn), &mut r, &mut ev);
                if step % 3 != 0 {
                    out.extend(q.dequeue(now, &mut r, &mut ev).map(|p| (p.pkt, p.ecn)));
                }
                if now >= q.next_update() {
                    q.update(now);
                }
            }
            let drops: Vec<_> = ev.drops.iter().map(|(p, c)| (p.pkt, *c)).collect();
            (out, drops, q.p_prime())
        };
        let a = run(21);
        assert_eq!(a, run(21));
        assert!(a.2 > 0.0, "the run must build a queue for the AQM to act");
        assert!(a.0.iter().any(|(_, e)| *e == Ecn::Ce) && !a.1.is_empty());
        assert_ne!(a, run(22), "another seed draws differently");
    }
}
