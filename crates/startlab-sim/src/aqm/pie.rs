//! PIE, the Proportional Integral controller Enhanced (RFC 8033), as a state machine over the
//! queue it guards: a drop probability recomputed every `T_UPDATE` from the queueing delay (a PI
//! controller on latency, §4.2), applied at enqueue (§4.1), with a burst allowance (§4.4).
//!
//! # Contract with the queue's owner
//!
//! The owner holds the packets (a [`Fifo`](super::Fifo)) and calls:
//! - [`Pie::enqueue`] for each arrival that fits the buffer, with the bytes already waiting (the
//!   arrival not counted). [`Verdict::Accept`]: enqueue it; [`Verdict::Mark`]: set
//!   [`Ecn::Ce`](super::Ecn::Ce) and enqueue it; [`Verdict::Drop`]: discard it
//!   ([`DropCause::Aqm`](super::DropCause::Aqm)). An arrival that overflows the buffer is the
//!   owner's tail drop: report it with [`Pie::on_tail_drop`] (RFC 8033 Appendix B resets the
//!   derandomization accumulator there).
//! - [`Pie::on_dequeue`] after each departure, with the bytes still waiting.
//! - [`Pie::update`] at [`Pie::next_update`] (every `t_update`), with the bytes waiting.
//!
//! # Units
//!
//! `alpha` and `beta` are in Hz, as RFC 8033 §4.2 states them (defaults 1/8 and 1 + 1/4): with the
//! delays in seconds, `p = alpha·(qdelay − target) + beta·(qdelay − qdelay_old)` is a change of
//! probability per update, before the auto-tuning divisor. They are not rescaled with `t_update`
//! (§4.2 asks to halve alpha and add alpha/4 to beta when `T_UPDATE` is halved; that is the
//! caller's choice). Linux's `tc pie alpha 2 beta 20` are the same gains in units of 1/16 Hz; ns-3's
//! `A`/`B` attributes are in Hz like these.
//!
//! # What is implemented
//!
//! - §4.1 random drop with the two work-conserving safeguards (`qdelay_old < target/2` while
//!   `drop_prob < 0.2`; at most two packets' worth of bytes waiting), in the order of Appendix A.
//! - §4.2 drop-probability calculation with the auto-tuning divisors (2048 … 2) by `drop_prob` range,
//!   the ×0.98 decay when both the current and the previous delay are zero, and the [0, 1] bound.
//! - §4.3 latency from timestamps (the dequeued packet's sojourn; the default, as in Linux and ns-3)
//!   or, with `use_timestamps = false`, §5.2 departure-rate estimation exactly as Appendix B's
//!   pseudocode: measurement cycles of at least `DQ_THRESHOLD` bytes started when that much is
//!   waiting, an EWMA of the cycle time with weight `DQ_THRESHOLD/2^16`, and
//!   `qdelay = queue_bytes · avg_dq_time / DQ_THRESHOLD`.
//! - §4.4 burst allowance: `MAX_BURST` while `drop_prob == 0` and both delays are under
//!   `target/2`, spent `T_UPDATE` per update; no early drop while any is left.
//! - §5.1 ECN: an ECN-capable arrival chosen for an early drop is marked instead while
//!   `drop_prob ≤ mark_ecn_th`; above it, ECN-capable packets are dropped too.
//! - §5.4 derandomization (option `derandomize`, off by default as in ns-3; Linux always has it).
//! - §5.5 cap drop adjustment (option `cap_drop`, on by default): while `drop_prob ≥ 10%` one update
//!   raises it by at most 2%. (RFC 8033 has no cap below 10%.)
//! - Not in RFC 8033, opt-in: Linux's non-linear boost, +2% per update while the delay exceeds a
//!   threshold (`high_delay_boost = Some(250 ms)` reproduces `sch_pie.c`).
//!
//! # What is not
//!
//! - §5.3 active/inactive states (PIE switched on at a third of the tail-drop threshold and off
//!   when idle): PIE is always active here, as in Linux and ns-3's default. It would need the
//!   buffer's limit, which the owner keeps.
//! - Scaling the drop probability by packet size (§4.1's remark; Linux `bytemode`, ns-3 in byte
//!   mode).
//! - The tail drop itself (the owner's buffer), FQ-PIE, and ns-3's L4S CE-threshold marking.
//!
//! # Where Linux, ns-3 and FreeBSD differ from the RFC (this module follows the RFC)
//!
//! - Empty queue, timestamp mode: the RFC keeps the last sample. Here an update that finds the
//!   queue empty takes the delay as zero (as FreeBSD's dummynet does; without it a stale sample
//!   keeps raising `drop_prob` through an idle period, and the decay never starts). Linux and
//!   ns-3 zero the sample at the dequeue that empties the queue.
//! - First safeguard: Linux tests the current delay, the RFC (and ns-3, FreeBSD) `qdelay_old`.
//! - Second safeguard: the RFC drops nothing while `byte_length ≤ 2·MEAN_PKTSIZE` (`mtu_bytes`
//!   here); Linux while `backlog < 2·MTU`; ns-3 uses a 1000-byte mean packet size.
//! - Burst allowance: Linux spends it by the time between dequeues and restores it in the
//!   periodic update; ns-3 keeps a three-state burst machine with a 1.5 s reset timeout and holds
//!   `drop_prob` at zero during the allowance.
//! - Decay: the RFC multiplies by 0.98; Linux and FreeBSD by 1 − 1/64, and Linux skips it while
//!   the delay is zero but the queue is not.
//! - Departure rate: Linux averages the rate (weight 1/8) over the exact bytes counted, ns-3 with
//!   weight 1/2; the RFC averages the cycle time with weight `DQ_THRESHOLD/2^16` (1/4) and uses it
//!   as the time of exactly `DQ_THRESHOLD` bytes, though a cycle ends past it: the estimate runs
//!   high by the overshoot (16 500/16 384 with 1500-byte packets). Kept as the RFC has it.
//! - ECN: Linux marks while `drop_prob ≤ 10%` (as here); ns-3 and FreeBSD only below it.
//! - Order: Appendix B evaluates `drop_early()` before the burst test, so the derandomization
//!   accumulator grows during the allowance; Appendix A, Linux, ns-3 and FreeBSD test the burst
//!   first, as here (no random draw while the allowance lasts).
//! - Linux runs its first update 500 ms after setup; here the first is at `t_update`.

use super::{sojourn, DropCause, Ecn, Events, Fifo, QPacket};
pub use crate::red::Verdict;
use rand::RngExt as _;
use rand_pcg::Pcg64;
use startlab_units::{Dur, Time};

/// PIE parameters; [`Default`] gives RFC 8033's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    /// `QDELAY_REF`, the latency target (RFC 8033 §4.2; 15 ms).
    pub target: Dur,
    /// `T_UPDATE`, the period of the drop-probability calculation (§4.2; 15 ms).
    pub t_update: Dur,
    /// Weight of the distance from the target, in Hz (§4.2; 0.125). See the module's "Units".
    pub alpha: f64,
    /// Weight of the delay's trend since the last update, in Hz (§4.2; 1.25).
    pub beta: f64,
    /// `MAX_BURST`, the burst allowance (§4.4; 150 ms).
    pub max_burst: Dur,
    /// Mark ECN-capable packets instead of dropping them while `drop_prob ≤ mark_ecn_th` (§5.1).
    pub ecn: bool,
    /// `mark_ecnth`, the drop probability above which ECN-capable packets are dropped too (§5.1;
    /// 10%).
    pub mark_ecn_th: f64,
    /// Queueing delay from the dequeued packet's sojourn time (§4.3; the Linux and ns-3 default);
    /// `false`: from the departure rate (§5.2, Appendix B).
    pub use_timestamps: bool,
    /// `DQ_THRESHOLD`, the bytes of a departure-rate measurement cycle (§5.2; 2^14). Its EWMA
    /// weight is `DQ_THRESHOLD/2^16`, at most 1.
    pub dq_threshold_bytes: u64,
    /// `MEAN_PKTSIZE` of the §4.1 safeguard: no early drop while at most twice this many bytes
    /// wait (1500).
    pub mtu_bytes: u32,
    /// Derandomization (§5.4): drop on the accumulated probability, never below 0.85, always from
    /// 8.5.
    pub derandomize: bool,
    /// Cap drop adjustment (§5.5): from `drop_prob ≥ 10%`, one update raises it by at most 2%.
    pub cap_drop: bool,
    /// Linux's non-linear boost, not in RFC 8033: +2% per update while the delay exceeds this
    /// (`sch_pie.c`: 250 ms). `None` (default): off.
    pub high_delay_boost: Option<Dur>,
}

impl Default for PieParams {
    fn default() -> PieParams {
        PieParams {
            target: Dur::from_millis(15),
            t_update: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Dur::from_millis(150),
            ecn: false,
            mark_ecn_th: 0.1,
            use_timestamps: true,
            dq_threshold_bytes: 1 << 14,
            mtu_bytes: 1500,
            derandomize: false,
            cap_drop: true,
            high_delay_boost: None,
        }
    }
}

/// The state of one PIE queue.
#[derive(Clone, Debug)]
pub struct Pie {
    p: PieParams,
    /// `drop_prob_`, in [0, 1].
    drop_prob: f64,
    /// `current_qdelay`: the last sojourn sample (timestamps) or the last estimate (departure
    /// rate).
    qdelay: Dur,
    /// `qdelay_old_`: the delay used by the previous update.
    qdelay_old: Dur,
    /// `burst_allowance_`.
    burst_allowance: Dur,
    /// `accu_prob_` (§5.4).
    accu_prob: f64,
    /// `in_measurement_` (§5.2).
    in_measurement: bool,
    /// `measurement_start_`.
    measurement_start: Time,
    /// `dq_count_`: bytes dequeued in the current measurement cycle.
    dq_count: u64,
    /// `avg_dq_time_` in seconds: the averaged time to dequeue `DQ_THRESHOLD` bytes; 0 = none yet.
    avg_dq_time: f64,
    /// When the next §4.2 update is due.
    next_update: Time,
}

/// The §4.2 auto-tuning: the divisor of `p` for the current drop probability, so that a small
/// probability changes in small steps.
fn step_divisor(drop_prob: f64) -> f64 {
    if drop_prob < 0.000001 {
        2048.0
    } else if drop_prob < 0.00001 {
        512.0
    } else if drop_prob < 0.0001 {
        128.0
    } else if drop_prob < 0.001 {
        32.0
    } else if drop_prob < 0.01 {
        8.0
    } else if drop_prob < 0.1 {
        2.0
    } else {
        1.0
    }
}

impl Pie {
    /// A PIE queue set up at time zero: empty, `drop_prob` 0, the full burst allowance, the first
    /// update due at `t_update`.
    pub fn new(p: PieParams) -> Pie {
        assert!(p.t_update > Dur::ZERO, "PIE needs a positive t_update");
        assert!(p.dq_threshold_bytes > 0, "PIE needs a positive dq_threshold");
        Pie {
            p,
            drop_prob: 0.0,
            qdelay: Dur::ZERO,
            qdelay_old: Dur::ZERO,
            burst_allowance: p.max_burst,
            accu_prob: 0.0,
            in_measurement: false,
            measurement_start: Time::ZERO,
            dq_count: 0,
            avg_dq_time: 0.0,
            next_update: Time::ZERO + p.t_update,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &PieParams {
        &self.p
    }

    /// The current drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// The current queueing delay (`current_qdelay`): the last dequeued packet's sojourn with
    /// timestamps, the last update's estimate with departure-rate estimation.
    pub fn qdelay(&self) -> Dur {
        self.qdelay
    }

    /// The delay the last update used (`qdelay_old_`).
    pub fn qdelay_old(&self) -> Dur {
        self.qdelay_old
    }

    /// What is left of the burst allowance.
    pub fn burst_allowance(&self) -> Dur {
        self.burst_allowance
    }

    /// The estimated departure rate in bytes per second (`DQ_THRESHOLD / avg_dq_time`), once a
    /// measurement cycle has completed (departure-rate estimation only).
    pub fn dequeue_rate(&self) -> Option<f64> {
        (self.avg_dq_time > 0.0).then(|| self.p.dq_threshold_bytes as f64 / self.avg_dq_time)
    }

    /// When [`Pie::update`] is due next.
    pub fn next_update(&self) -> Time {
        self.next_update
    }

    fn half_target(&self) -> Dur {
        Dur(self.p.target.0 / 2)
    }

    /// Decides for an arrival that fits the buffer and finds `queue_bytes` waiting (itself not
    /// counted): RFC 8033 Appendix A's `enque()` with the §5.1 ECN rule and the §5.4
    /// derandomization. Draws from `rng` only when the safeguards let a drop be considered.
    pub fn enqueue(&mut self, now: Time, queue_bytes: u64, pkt: &QPacket, rng: &mut Pcg64) -> Verdict {
        debug_assert!(now <= self.next_update, "PIE update overdue: {now} > {}", self.next_update);
        // §4.4: congestion is over, restore the burst allowance.
        let half = self.half_target();
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.p.max_burst;
        }
        if self.burst_allowance > Dur::ZERO || !self.drop_early(queue_bytes, rng) {
            return Verdict::Accept;
        }
        if self.p.ecn && pkt.ecn.capable() && self.drop_prob <= self.p.mark_ecn_th {
            // Appendix B resets the accumulator on drops only.
            Verdict::Mark
        } else {
            self.accu_prob = 0.0;
            Verdict::Drop
        }
    }

    /// RFC 8033 §4.1 / Appendix B `drop_early()`: whether to drop (or mark) an arrival.
    fn drop_early(&mut self, queue_bytes: u64, rng: &mut Pcg64) -> bool {
        // Work-conserving safeguards (§4.1).
        if (self.qdelay_old < self.half_target() && self.drop_prob < 0.2)
            || queue_bytes <= 2 * self.p.mtu_bytes as u64
        {
            return false;
        }
        if self.p.derandomize {
            // §5.4
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        if rng.random::<f64>() < self.drop_prob {
            self.accu_prob = 0.0;
            true
        } else {
            false
        }
    }

    /// The owner tail-dropped an arrival (buffer full): resets the derandomization accumulator
    /// (RFC 8033 Appendix B).
    pub fn on_tail_drop(&mut self) {
        self.accu_prob = 0.0;
    }

    /// A packet left at `now`, `queue_bytes_after` bytes still waiting: the sojourn sample
    /// (§4.3) or the departure-rate measurement (§5.2, Appendix B `deque()`).
    pub fn on_dequeue(&mut self, now: Time, pkt: &QPacket, queue_bytes_after: u64) {
        if self.p.use_timestamps {
            self.qdelay = sojourn(pkt, now);
            return;
        }
        if self.in_measurement {
            self.dq_count += pkt.size as u64;
            if self.dq_count >= self.p.dq_threshold_bytes {
                let dq_time = now.saturating_since(self.measurement_start).as_secs_f64();
                self.avg_dq_time = if self.avg_dq_time == 0.0 {
                    dq_time
                } else {
                    let w = (self.p.dq_threshold_bytes as f64 / 65536.0).min(1.0);
                    dq_time * w + self.avg_dq_time * (1.0 - w)
                };
                self.in_measurement = false;
            }
        }
        if queue_bytes_after >= self.p.dq_threshold_bytes && !self.in_measurement {
            self.in_measurement = true;
            self.measurement_start = now;
            self.dq_count = 0;
        }
    }

    /// The periodic drop-probability calculation (RFC 8033 §4.2 and Appendix B
    /// `calculate_drop_prob()`, with the §5.5 cap), due at [`Pie::next_update`]; `queue_bytes`
    /// are waiting. Schedules the next one `t_update` later.
    pub fn update(&mut self, now: Time, queue_bytes: u64) {
        debug_assert!(now >= self.next_update, "PIE update early: {now} < {}", self.next_update);
        let qdelay = if self.p.use_timestamps {
            // An empty queue has no delay, whatever the last departure waited (see the module doc).
            if queue_bytes == 0 {
                Dur::ZERO
            } else {
                self.qdelay
            }
        } else {
            Dur::from_secs_f64(queue_bytes as f64 * self.avg_dq_time / self.p.dq_threshold_bytes as f64)
        };
        let (cur, old) = (qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64());
        let mut p = self.p.alpha * (cur - self.p.target.as_secs_f64()) + self.p.beta * (cur - old);
        p /= step_divisor(self.drop_prob);
        if self.p.cap_drop && self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        let mut prob = self.drop_prob + p;
        if self.p.high_delay_boost.is_some_and(|th| qdelay > th) {
            prob += 0.02;
        }
        // Exponential decay once congestion is gone.
        if qdelay == Dur::ZERO && self.qdelay_old == Dur::ZERO {
            prob *= 0.98;
        }
        self.drop_prob = prob.clamp(0.0, 1.0);
        self.qdelay = qdelay;
        self.qdelay_old = qdelay;
        self.burst_allowance = Dur(self.burst_allowance.0.saturating_sub(self.p.t_update.0));
        self.next_update = now + self.p.t_update;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{Ecn, Fifo};
    use crate::rng::{stream, Component};

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }

    fn us(x: u64) -> Dur {
        Dur::from_micros(x)
    }

    fn at(d: Dur) -> Time {
        Time::ZERO + d
    }

    fn pkt(size: u32, ecn: Ecn, enqueued: Time) -> QPacket {
        QPacket { pkt: 0, size, flow: 0, ecn, enqueued }
    }

    fn rng(seed: u64) -> Pcg64 {
        stream(seed, Component::Red, 0)
    }

    /// A PIE with the given state, as an update or an arrival would find it.
    fn state(p: PieParams, drop_prob: f64, qdelay: Dur, qdelay_old: Dur) -> Pie {
        let mut q = Pie::new(p);
        q.drop_prob = drop_prob;
        q.qdelay = qdelay;
        q.qdelay_old = qdelay_old;
        q
    }

    /// `drop_prob` after one update from `state(...)` with a busy queue.
    fn after_update(p: PieParams, drop_prob: f64, qdelay: Dur, qdelay_old: Dur) -> f64 {
        let mut q = state(p, drop_prob, qdelay, qdelay_old);
        q.update(q.next_update(), 100_000);
        q.drop_prob()
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-12 * want.abs().max(1e-6)
    }

    #[test]
    fn the_first_update_divides_by_2048() {
        // p = 0.125·(0.030 − 0.015) + 1.25·(0.030 − 0) = 0.039375; drop_prob 0 < 1e-6 → /2048.
        let got = after_update(PieParams::default(), 0.0, ms(30), Dur::ZERO);
        assert!(close(got, 0.039375 / 2048.0), "{got}");
        assert!(close(got, 1.922607421875e-5), "{got}");
    }

    #[test]
    fn each_probability_range_has_its_step_divisor() {
        // qdelay = qdelay_old = 25 ms: p = 0.125·0.010 = 0.00125, no trend term, no decay, no cap.
        let cases = [
            (0.0, 2048.0),
            (0.5e-6, 2048.0),
            (1e-6, 512.0),
            (5e-6, 512.0),
            (1e-5, 128.0),
            (5e-5, 128.0),
            (1e-4, 32.0),
            (1e-3, 8.0),
            (5e-3, 8.0),
            (1e-2, 2.0),
            (0.05, 2.0),
            (0.1, 1.0),
            (0.5, 1.0),
        ];
        for (prob, div) in cases {
            let got = after_update(PieParams::default(), prob, ms(25), ms(25));
            assert!(close(got, prob + 0.00125 / div), "drop_prob {prob}: {got}, want /{div}");
        }
    }

    #[test]
    fn above_ten_percent_one_update_adds_at_most_two_percent() {
        // qdelay 100 ms, qdelay_old 20 ms: p = 0.125·0.085 + 1.25·0.080 = 0.110625.
        let p = PieParams::default();
        let uncapped = PieParams { cap_drop: false, ..p };
        assert!(close(after_update(p, 0.2, ms(100), ms(20)), 0.22));
        assert!(close(after_update(p, 0.1, ms(100), ms(20)), 0.12), "the cap starts at 10%");
        assert!(close(after_update(uncapped, 0.2, ms(100), ms(20)), 0.310625));
        // Below 10% there is no cap, only the /2 step: 0.05 + 0.0553125.
        assert!(close(after_update(p, 0.05, ms(100), ms(20)), 0.1053125));
    }

    #[test]
    fn the_probability_falls_below_target_and_stays_within_zero_and_one() {
        let p = PieParams::default();
        // 5 ms steady: p = 0.125·(−0.010) = −0.00125, /2 → 0.049375 (no decay: delays not zero).
        assert!(close(after_update(p, 0.05, ms(5), ms(5)), 0.049375));
        // p = 0.125·(−0.015) + 1.25·(−0.020) = −0.026875, /32 → below zero → 0.
        assert_eq!(after_update(p, 0.0005, Dur::ZERO, ms(20)), 0.0);
        // p = 0.125·0.485 = 0.060625 uncapped → 1.050625 → 1.
        let uncapped = PieParams { cap_drop: false, ..p };
        assert_eq!(after_update(uncapped, 0.99, ms(500), ms(500)), 1.0);
    }

    #[test]
    fn the_probability_decays_only_when_both_delays_are_zero() {
        let p = PieParams::default();
        // p = 0.125·(−0.015) = −0.001875; then ×0.98.
        let decayed = (0.5 - 0.001875) * 0.98;
        assert!(close(after_update(p, 0.5, Dur::ZERO, Dur::ZERO), decayed));
        // A stale sample does not count once the queue is empty.
        let mut q = state(p, 0.5, ms(40), Dur::ZERO);
        q.update(q.next_update(), 0);
        assert!(close(q.drop_prob(), decayed), "{}", q.drop_prob());
        assert_eq!(q.qdelay(), Dur::ZERO);
        // 1 ms now, 0 before: p = 0.125·(−0.014) + 1.25·0.001 = −0.0005, no decay.
        assert!(close(after_update(p, 0.5, ms(1), Dur::ZERO), 0.4995));
        // 0 now, 1 ms before: p = −0.001875 − 0.00125, no decay.
        assert!(close(after_update(p, 0.5, Dur::ZERO, ms(1)), 0.496875));
        // An idle queue brings any probability back to zero.
        let mut q = state(p, 1.0, Dur::ZERO, Dur::ZERO);
        for _ in 0..400 {
            q.update(q.next_update(), 0);
        }
        assert_eq!(q.drop_prob(), 0.0);
    }

    #[test]
    fn the_linux_high_delay_boost_is_opt_in() {
        let p = PieParams::default();
        let linux = PieParams { high_delay_boost: Some(ms(250)), ..p };
        // p = 0.125·0.285 = 0.035625 → capped at 0.02; the boost adds 0.02 more.
        assert!(close(after_update(p, 0.5, ms(300), ms(300)), 0.52));
        assert!(close(after_update(linux, 0.5, ms(300), ms(300)), 0.54));
        assert!(close(after_update(linux, 0.5, ms(250), ms(250)), 0.52), "only above 250 ms");
    }

    #[test]
    fn updates_run_every_t_update() {
        let mut q = Pie::new(PieParams::default());
        assert_eq!(q.next_update(), at(ms(15)));
        q.update(at(ms(15)), 0);
        assert_eq!(q.next_update(), at(ms(30)));
        q.update(at(ms(47)), 0);
        assert_eq!(q.next_update(), at(ms(62)));
    }

    #[test]
    fn the_burst_allowance_lets_a_burst_through_then_expires() {
        let mut q = state(PieParams::default(), 1.0, ms(100), ms(100));
        let mut r = rng(1);
        let p = pkt(1500, Ecn::NotEct, Time::ZERO);
        let busy = 100_000;
        assert_eq!(q.burst_allowance(), ms(150));
        for k in 1..=10u64 {
            let now = q.next_update();
            for _ in 0..50 {
                assert_eq!(q.enqueue(now, busy, &p, &mut r), Verdict::Accept, "update {k}");
            }
            q.update(now, busy);
            assert_eq!(q.burst_allowance(), ms(150 - 15 * k));
            assert_eq!(q.drop_prob(), 1.0);
        }
        // Spent: with drop_prob 1 every arrival goes.
        let now = q.next_update();
        for _ in 0..50 {
            assert_eq!(q.enqueue(now, busy, &p, &mut r), Verdict::Drop);
        }
        // Restored once drop_prob is 0 and both delays are under target/2 …
        q.drop_prob = 0.0;
        q.qdelay = ms(7);
        q.qdelay_old = Dur(7_499_999);
        assert_eq!(q.enqueue(now, busy, &p, &mut r), Verdict::Accept);
        assert_eq!(q.burst_allowance(), ms(150));
        // … and not otherwise: a delay at target/2, or any drop probability.
        let half = Dur(7_500_000);
        for (prob, cur, old) in [(0.0, ms(7), half), (0.0, half, ms(7)), (1e-9, ms(7), ms(7))] {
            let mut q = state(PieParams::default(), prob, cur, old);
            q.burst_allowance = Dur::ZERO;
            q.enqueue(at(ms(1)), busy, &p, &mut r);
            assert_eq!(q.burst_allowance(), Dur::ZERO, "{prob} {cur} {old}");
        }
    }

    /// A PIE past its burst allowance.
    fn congested(p: PieParams, drop_prob: f64, qdelay_old: Dur) -> Pie {
        let mut q = state(p, drop_prob, qdelay_old, qdelay_old);
        q.burst_allowance = Dur::ZERO;
        q
    }

    fn verdicts(q: &mut Pie, queue_bytes: u64, ecn: Ecn, n: usize, r: &mut Pcg64) -> [usize; 3] {
        let mut count = [0; 3];
        for _ in 0..n {
            let i = match q.enqueue(at(ms(1)), queue_bytes, &pkt(1500, ecn, Time::ZERO), r) {
                Verdict::Accept => 0,
                Verdict::Mark => 1,
                Verdict::Drop => 2,
            };
            count[i] += 1;
        }
        count
    }

    #[test]
    fn nothing_is_dropped_while_at_most_two_mtus_wait() {
        let mut r = rng(2);
        let mut q = congested(PieParams::default(), 1.0, ms(100));
        assert_eq!(verdicts(&mut q, 3000, Ecn::NotEct, 100, &mut r), [100, 0, 0]);
        assert_eq!(verdicts(&mut q, 3001, Ecn::NotEct, 100, &mut r), [0, 0, 100]);
        let mut q = congested(PieParams { mtu_bytes: 1000, ..PieParams::default() }, 1.0, ms(100));
        assert_eq!(verdicts(&mut q, 2000, Ecn::NotEct, 100, &mut r), [100, 0, 0]);
        assert_eq!(verdicts(&mut q, 2001, Ecn::NotEct, 100, &mut r), [0, 0, 100]);
    }

    #[test]
    fn nothing_is_dropped_under_half_the_target_at_low_probability() {
        let mut r = rng(3);
        let p = PieParams::default();
        let [_, _, drops] = verdicts(&mut congested(p, 0.19, ms(7)), 100_000, Ecn::NotEct, 2000, &mut r);
        assert_eq!(drops, 0);
        // At target/2 (7.5 ms) or at drop_prob 0.2 the random drop applies.
        for (prob, old) in [(0.19, Dur(7_500_000)), (0.2, ms(7))] {
            let [_, _, drops] = verdicts(&mut congested(p, prob, old), 100_000, Ecn::NotEct, 2000, &mut r);
            assert!((300..500).contains(&drops), "drop_prob {prob}, qdelay_old {old}: {drops} drops");
        }
        // The test is on the previous update's delay, not on the latest sample (Linux's choice).
        let mut q = congested(p, 0.19, ms(7));
        q.qdelay = ms(100);
        assert_eq!(verdicts(&mut q, 100_000, Ecn::NotEct, 2000, &mut r)[2], 0);
        let mut q = congested(p, 0.19, ms(100));
        q.qdelay = ms(7);
        assert!(verdicts(&mut q, 100_000, Ecn::NotEct, 2000, &mut r)[2] > 300);
    }

    #[test]
    fn ecn_capable_packets_are_marked_up_to_the_threshold_and_dropped_above() {
        let mut r = rng(4);
        let ecn = PieParams { ecn: true, ..PieParams::default() };
        for e in [Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            let [_, marks, drops] = verdicts(&mut congested(ecn, 0.1, ms(100)), 100_000, e, 2000, &mut r);
            assert!(marks > 100 && drops == 0, "{e:?} at 10%: {marks} marks, {drops} drops");
        }
        let [_, marks, drops] = verdicts(&mut congested(ecn, 0.1, ms(100)), 100_000, Ecn::NotEct, 2000, &mut r);
        assert!(marks == 0 && drops > 100, "not ECT: {marks} marks, {drops} drops");
        let [_, marks, drops] = verdicts(&mut congested(ecn, 0.1000001, ms(100)), 100_000, Ecn::Ect0, 2000, &mut r);
        assert!(marks == 0 && drops > 100, "ECT above 10%: {marks} marks, {drops} drops");
        let plain = PieParams::default();
        let [_, marks, drops] = verdicts(&mut congested(plain, 0.05, ms(100)), 100_000, Ecn::Ect0, 2000, &mut r);
        assert!(marks == 0 && drops > 50, "ECN off: {marks} marks, {drops} drops");
    }

    #[test]
    fn derandomization_spaces_drops_by_the_accumulated_probability() {
        let d = PieParams { derandomize: true, ..PieParams::default() };
        for seed in 0..20 {
            let mut r = rng(seed);
            let mut q = congested(d, 0.05, ms(100));
            // 16 · 0.05 = 0.8 < 0.85: the first 16 arrivals cannot be dropped.
            assert_eq!(verdicts(&mut q, 100_000, Ecn::NotEct, 16, &mut r), [16, 0, 0], "seed {seed}");
            assert!(close(q.accu_prob, 0.8), "{}", q.accu_prob);
        }
        // Without it, some seed drops within the first 16 (P(none) = 0.95^16 = 0.44 each).
        let early = (0..20)
            .filter(|&seed| {
                let mut q = congested(PieParams::default(), 0.05, ms(100));
                verdicts(&mut q, 100_000, Ecn::NotEct, 16, &mut rng(seed))[2] > 0
            })
            .count();
        assert!(early > 0);
        // From 8.5 the drop is certain, and a drop clears the accumulator …
        let mut r = rng(5);
        let mut q = congested(d, 0.1, ms(100));
        q.accu_prob = 8.45;
        assert_eq!(q.enqueue(at(ms(1)), 100_000, &pkt(1500, Ecn::NotEct, Time::ZERO), &mut r), Verdict::Drop);
        assert_eq!(q.accu_prob, 0.0);
        // … but a mark does not (Appendix B resets it on drops only).
        let mut q = congested(PieParams { ecn: true, ..d }, 0.1, ms(100));
        q.accu_prob = 8.45;
        assert_eq!(q.enqueue(at(ms(1)), 100_000, &pkt(1500, Ecn::Ect0, Time::ZERO), &mut r), Verdict::Mark);
        assert!(close(q.accu_prob, 8.55));
        // A tail drop clears it too; drop_prob 0 restarts it.
        q.on_tail_drop();
        assert_eq!(q.accu_prob, 0.0);
        let mut q = congested(d, 0.0, ms(100));
        q.accu_prob = 5.0;
        assert_eq!(verdicts(&mut q, 100_000, Ecn::NotEct, 1, &mut r), [1, 0, 0]);
        assert_eq!(q.accu_prob, 0.0);
    }

    /// A link draining one `size`-byte packet every `tx` with `depth` packets waiting, one arriving
    /// per departure, run until `end` with PIE's updates at their times; the delays the updates
    /// saw, in order.
    fn steady_queue(p: PieParams, size: u32, tx: Dur, depth: u64, end: Time) -> (Pie, Vec<Dur>) {
        let mut q = Pie::new(p);
        let mut r = rng(6);
        let mut fifo = Fifo::default();
        let mut seen = Vec::new();
        let arrival = |i: u64| Time(i * tx.0);
        for i in 0..depth {
            fifo.push(pkt(size, Ecn::NotEct, arrival(i)));
        }
        let mut n = depth;
        while arrival(n) <= end {
            let now = arrival(n);
            let head = fifo.pop().unwrap();
            q.on_dequeue(now, &head, fifo.bytes());
            let new = pkt(size, Ecn::NotEct, now);
            assert_eq!(q.enqueue(now, fifo.bytes(), &new, &mut r), Verdict::Accept);
            fifo.push(new);
            if now == q.next_update() {
                q.update(now, fifo.bytes());
                seen.push(q.qdelay());
            }
            n += 1;
        }
        (q, seen)
    }

    #[test]
    fn timestamps_and_departure_rate_agree_on_a_constant_rate_queue() {
        // 1024-byte packets every 100 us, 40 waiting: each waits 4 ms; a measurement cycle is
        // exactly 16 packets = 16 384 bytes in 1.6 ms, and 40 960 bytes · 1.6 ms / 16 384 = 4 ms.
        let ts = PieParams::default();
        let dre = PieParams { use_timestamps: false, ..ts };
        let (a, seen_a) = steady_queue(ts, 1024, us(100), 40, at(ms(46)));
        let (b, seen_b) = steady_queue(dre, 1024, us(100), 40, at(ms(46)));
        assert_eq!(seen_a, vec![ms(4); 3]);
        assert_eq!(seen_b, vec![ms(4); 3]);
        assert!(close(b.dequeue_rate().unwrap(), 10_240_000.0));
        assert!(close(a.drop_prob(), b.drop_prob()) && a.drop_prob() == 0.0);
        assert_eq!(a.dequeue_rate(), None);
    }

    #[test]
    fn the_rfc_rate_estimate_counts_the_overshooting_packet() {
        // 1500-byte packets every 120 us: a cycle ends after 11 packets (16 500 bytes) in 1.32 ms,
        // taken as the time of 16 384 bytes; 60 000 bytes waiting → 60 000 · 1.32 ms / 16 384.
        let dre = PieParams { use_timestamps: false, ..PieParams::default() };
        let (_, seen) = steady_queue(dre, 1500, us(120), 40, at(ms(16)));
        let (_, truth) = steady_queue(PieParams::default(), 1500, us(120), 40, at(ms(16)));
        assert_eq!(truth, vec![us(4800)]);
        assert_eq!(seen, vec![Dur(4_833_984)]);
    }

    #[test]
    fn the_departure_time_is_averaged_with_weight_one_quarter() {
        let dre = PieParams { use_timestamps: false, ..PieParams::default() };
        let mut q = Pie::new(dre);
        let p = pkt(1024, Ecn::NotEct, Time::ZERO);
        let busy = 50_000;
        // Below DQ_THRESHOLD no cycle starts.
        q.on_dequeue(Time::ZERO, &p, 16_383);
        assert!(!q.in_measurement);
        q.on_dequeue(Time::ZERO, &p, busy);
        let mut now = Time::ZERO;
        for _ in 0..16 {
            now += us(100);
            q.on_dequeue(now, &p, busy);
        }
        assert!(close(q.avg_dq_time, 0.0016), "{}", q.avg_dq_time);
        for _ in 0..16 {
            now += us(200);
            q.on_dequeue(now, &p, busy);
        }
        // 0.25 · 3.2 ms + 0.75 · 1.6 ms.
        assert!(close(q.avg_dq_time, 0.002), "{}", q.avg_dq_time);
        assert!(close(q.dequeue_rate().unwrap(), 8_192_000.0));
        // Without a rate estimate the delay is zero.
        let mut fresh = Pie::new(dre);
        fresh.update(fresh.next_update(), busy);
        assert_eq!(fresh.qdelay(), Dur::ZERO);
    }

    #[test]
    fn the_same_seed_gives_the_same_verdicts() {
        let run = |seed: u64, derandomize: bool| {
            let p = PieParams { derandomize, ecn: true, ..PieParams::default() };
            let mut q = congested(p, 0.08, ms(30));
            let mut r = rng(seed);
            (0..2000)
                .map(|i| {
                    let e = if i % 3 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
                    q.enqueue(at(ms(1)), 100_000, &pkt(1500, e, Time::ZERO), &mut r)
                })
                .collect::<Vec<_>>()
        };
        for derandomize in [false, true] {
            assert_eq!(run(7, derandomize), run(7, derandomize));
            assert_ne!(run(7, derandomize), run(8, derandomize));
        }
    }
}

/// A PIE queue: one FIFO with a packet limit, PIE deciding each arrival's fate.
#[derive(Clone, Debug)]
pub struct PieQueue {
    /// PIE's state.
    pub pie: Pie,
    /// Most packets held (arrivals beyond it are dropped, RFC 8033's tail drop).
    pub limit: u64,
    /// The packets waiting.
    pub fifo: Fifo,
}

impl PieQueue {
    /// An empty queue.
    pub fn new(params: PieParams, limit: u64) -> Self {
        PieQueue { pie: Pie::new(params), limit, fifo: Fifo::default() }
    }

    /// Offers a packet (its `enqueued` is now): tail drop on a full buffer, else PIE's verdict.
    pub fn enqueue(&mut self, mut p: QPacket, rng: &mut Pcg64, ev: &mut Events) {
        if self.fifo.len() as u64 >= self.limit {
            self.pie.on_tail_drop();
            ev.drops.push((p, DropCause::Overflow));
            return;
        }
        match self.pie.enqueue(p.enqueued, self.fifo.bytes(), &p, rng) {
            Verdict::Drop => ev.drops.push((p, DropCause::Aqm)),
            Verdict::Mark => {
                p.ecn = Ecn::Ce;
                self.fifo.push(p);
            }
            Verdict::Accept => self.fifo.push(p),
        }
    }

    /// The next packet to send.
    pub fn dequeue(&mut self, now: Time) -> Option<QPacket> {
        let p = self.fifo.pop()?;
        self.pie.on_dequeue(now, &p, self.fifo.bytes());
        Some(p)
    }

    /// The periodic drop-probability update due at `now`.
    pub fn update(&mut self, now: Time) {
        self.pie.update(now, self.fifo.bytes());
    }
}
