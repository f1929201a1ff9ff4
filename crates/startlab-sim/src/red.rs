//! Random Early Detection (Floyd & Jacobson 1993) with the gentle extension, as ALGORITHMS.md §17.2
//! resolves it: an EWMA of the queue length (packets or bytes), the uniform-spacing `count` rule
//! ("method 2"), optional ns-2 `wait` spacing, and ECN marking in the probabilistic regions.

use rand::RngExt as _;
use rand_pcg::Pcg64;
use startlab_units::{Dur, Time};

/// RED parameters (the queue's unit: packets or bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// EWMA weight `w_q`.
    pub w_q: f64,
    /// Lower threshold.
    pub min_th: f64,
    /// Upper threshold.
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// Gentle RED: probabilities rise from `max_p` to 1 between `max_th` and `2·max_th`.
    pub gentle: bool,
    /// ns-2's `wait_` spacing rule instead of the paper's uniform spacing.
    pub ns2_wait: bool,
    /// Mark ECN-capable packets instead of dropping them in the probabilistic regions.
    pub ecn: bool,
    /// Typical transmission time `s`, for the idle decay.
    pub s: Dur,
}

/// What RED decided for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Enqueue unchanged.
    Accept,
    /// Enqueue with the CE codepoint set.
    Mark,
    /// Drop early (probabilistic or forced region).
    Drop,
}

/// The state of one RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    p: RedParams,
    avg: f64,
    count: i64,
    /// Start of the current idle period, if the queue is empty.
    idle_since: Option<Time>,
}

impl Red {
    /// An empty RED queue.
    pub fn new(p: RedParams) -> Red {
        Red { p, avg: 0.0, count: -1, idle_since: Some(Time::ZERO) }
    }

    /// The average queue length.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Updates the average for an arrival that finds `q` waiting (same unit as the thresholds).
    pub fn update_avg(&mut self, now: Time, q: f64) {
        match self.idle_since.take() {
            Some(since) if q == 0.0 => {
                let s = self.p.s.as_secs_f64();
                let m = if s > 0.0 { (now - since).as_secs_f64() / s } else { 0.0 };
                self.avg *= (1.0 - self.p.w_q).powf(m);
            }
            _ => self.avg = (1.0 - self.p.w_q) * self.avg + self.p.w_q * q,
        }
    }

    /// The queue emptied at `now` (idle decay starts).
    pub fn on_empty(&mut self, now: Time) {
        self.idle_since = Some(now);
    }

    /// Base probability `p_b` for the current average; `None` in the forced-drop region.
    pub fn p_b(&self) -> Option<f64> {
        let (avg, min, max, max_p) = (self.avg, self.p.min_th, self.p.max_th, self.p.max_p);
        if avg < min {
            Some(0.0)
        } else if avg < max {
            Some(max_p * (avg - min) / (max - min))
        } else if self.p.gentle && avg < 2.0 * max {
            Some(max_p + (1.0 - max_p) * (avg - max) / max)
        } else {
            None
        }
    }

    /// `p_a` from `p_b` and `count` (the count already incremented for this packet).
    pub fn p_a(&self, p_b: f64) -> f64 {
        let c = self.count as f64 * p_b;
        if self.p.ns2_wait {
            if c < 1.0 {
                0.0
            } else if c < 2.0 {
                p_b / (2.0 - c)
            } else {
                1.0
            }
        } else if c >= 1.0 {
            1.0
        } else {
            p_b / (1.0 - c)
        }
    }

    /// Decides for an arriving packet that finds `q` waiting; `ect` = the packet is ECN-capable.
    pub fn arrive(&mut self, now: Time, q: f64, ect: bool, rng: &mut Pcg64) -> Verdict {
        self.update_avg(now, q);
        match self.p_b() {
            Some(p_b) if self.avg < self.p.min_th => {
                debug_assert_eq!(p_b, 0.0);
                self.count = -1;
                Verdict::Accept
            }
            Some(p_b) => {
                self.count += 1;
                let p_a = self.p_a(p_b);
                if rng.random::<f64>() < p_a {
                    self.count = 0;
                    if self.p.ecn && ect {
                        Verdict::Mark
                    } else {
                        Verdict::Drop
                    }
                } else {
                    Verdict::Accept
                }
            }
            None => {
                self.count = 0;
                Verdict::Drop
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(gentle: bool) -> Red {
        Red::new(RedParams {
            w_q: 0.002,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            gentle,
            ns2_wait: false,
            ecn: false,
            s: Dur::from_micros(100),
        })
    }

    #[test]
    fn probabilities_match_the_test_vectors_of_section_17_2() {
        let mut r = red(true);
        r.avg = 10.0;
        assert!((r.p_b().unwrap() - 0.05).abs() < 1e-12);
        for (count, want) in [(0, 0.05), (1, 0.05263), (5, 0.06667), (10, 0.1), (19, 1.0)] {
            r.count = count;
            assert!((r.p_a(0.05) - want).abs() < 1e-5, "count {count}: {}", r.p_a(0.05));
        }
        r.avg = 20.0;
        assert!((r.p_b().unwrap() - 0.4).abs() < 1e-12);
        r.avg = 30.0;
        assert_eq!(r.p_b(), None, "forced drops at 2 max_th");
        let mut plain = red(false);
        plain.avg = 15.0;
        assert_eq!(plain.p_b(), None, "without gentle, forced drops at max_th");
    }

    #[test]
    fn the_average_follows_the_ewma_and_decays_when_idle() {
        let mut r = red(true);
        r.idle_since = None;
        for i in 0..5 {
            r.update_avg(Time(i), 10.0);
        }
        assert!((r.avg() - 0.099601).abs() < 1e-6, "{}", r.avg());
        let mut r = red(true);
        r.avg = 5.0;
        r.on_empty(Time::ZERO);
        // m = 10 ms / 100 us = 100 idle transmission times.
        r.update_avg(Time::ZERO + Dur::from_millis(10), 0.0);
        assert!((r.avg() - 4.092834).abs() < 1e-6, "{}", r.avg());
    }

    #[test]
    fn ecn_capable_packets_are_marked_and_others_dropped_in_the_probabilistic_region() {
        let mut p = red(true).p;
        p.ecn = true;
        let mut rng = crate::rng::stream(1, crate::rng::Component::FlowStart, 0);
        let (mut marks, mut drops) = (0, 0);
        let mut r = Red::new(p);
        r.avg = 12.0;
        r.idle_since = None;
        for i in 0..10_000 {
            match r.arrive(Time(i), 12.0, i % 2 == 0, &mut rng) {
                Verdict::Mark => marks += 1,
                Verdict::Drop => drops += 1,
                Verdict::Accept => {}
            }
        }
        assert!(marks > 100 && drops > 100, "marks {marks}, drops {drops}");
        // Beyond 2 max_th even ECN-capable packets are dropped.
        r.avg = 40.0;
        assert_eq!(r.arrive(Time(1), 40.0, true, &mut rng), Verdict::Drop);
    }
}
