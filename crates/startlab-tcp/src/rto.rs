//! Retransmission timeout estimation — RFC 6298 §2, with Karn's rule applied by the caller.
//!
//! "When the first RTT measurement R is made, the host MUST set SRTT <- R, RTTVAR <- R/2,
//! RTO <- SRTT + max (G, K*RTTVAR)"; later samples update RTTVAR with the old SRTT first, then
//! SRTT, with alpha = 1/8, beta = 1/4, K = 4. The RTO is clamped to `[min, max]`; each expiry
//! doubles it ("back off the timer") until a fresh valid sample arrives.

use startlab_units::Dur;

/// RTO parameters (ALGORITHMS.md §2.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoConfig {
    /// RTO before any sample (RFC 6298: 1 s).
    pub initial: Dur,
    /// Floor (RFC 6298: 1 s; Linux 200 ms).
    pub min: Dur,
    /// Ceiling (at least 60 s).
    pub max: Dur,
    /// Clock granularity G (0 for an ideal simulator clock).
    pub granularity: Dur,
    /// How the floor applies.
    pub policy: RtoPolicy,
}

/// Where the RTO floor applies (ALGORITHMS.md §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoPolicy {
    /// RFC 6298: `RTO = max(SRTT + max(G, K*RTTVAR), min)`.
    Rfc6298,
    /// Linux floors the variance term instead: `RTO = SRTT + max(K*RTTVAR, min)`, so the smallest
    /// RTO is about one RTT plus `min` (200 ms in Linux).
    Linux,
}

impl Default for RtoConfig {
    fn default() -> Self {
        RtoConfig {
            initial: Dur::from_secs(1),
            min: Dur::from_secs(1),
            max: Dur::from_secs(60),
            granularity: Dur::ZERO,
            policy: RtoPolicy::Rfc6298,
        }
    }
}

const ALPHA: f64 = 1.0 / 8.0;
const BETA: f64 = 1.0 / 4.0;
const K: f64 = 4.0;

/// SRTT, RTTVAR and the current (possibly backed-off) RTO.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    cfg: RtoConfig,
    /// Smoothed RTT in nanoseconds.
    srtt: Option<f64>,
    /// RTT variation in nanoseconds.
    rttvar: f64,
    rto: Dur,
}

impl RtoEstimator {
    /// An estimator with no sample yet (RTO = `cfg.initial`).
    pub fn new(cfg: RtoConfig) -> Self {
        RtoEstimator { rto: cfg.initial.min(cfg.max), cfg, srtt: None, rttvar: 0.0 }
    }

    /// Feeds one valid (Karn-approved) sample; resets any backoff.
    pub fn on_sample(&mut self, r: Dur) {
        let r = r.as_nanos() as f64;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(srtt) => {
                self.rttvar = (1.0 - BETA) * self.rttvar + BETA * (srtt - r).abs();
                self.srtt = Some((1.0 - ALPHA) * srtt + ALPHA * r);
            }
        }
        self.rto = self.clamp(self.raw_rto().unwrap_or(self.cfg.initial.as_nanos() as f64));
    }

    /// RTO before clamping in ns, `SRTT + max(G, K*RTTVAR)` (Linux policy: the variance term is
    /// also floored at `min`); `None` before any sample.
    pub fn raw_rto(&self) -> Option<f64> {
        let mut floor = self.cfg.granularity.as_nanos() as f64;
        if self.cfg.policy == RtoPolicy::Linux {
            floor = floor.max(self.cfg.min.as_nanos() as f64);
        }
        self.srtt.map(|s| s + floor.max(K * self.rttvar))
    }

    fn clamp(&self, ns: f64) -> Dur {
        Dur(ns.round() as u64).max(self.cfg.min).min(self.cfg.max)
    }

    /// Timer expiry: `RTO = min(2*RTO, max)`.
    pub fn back_off(&mut self) {
        self.rto = Dur(self.rto.as_nanos().saturating_mul(2)).min(self.cfg.max);
    }

    /// Raise the RTO to at least `floor` (RFC 6298 §5.7: 3 s after a retransmitted SYN).
    pub fn raise_to(&mut self, floor: Dur) {
        self.rto = self.rto.max(floor).min(self.cfg.max);
    }

    /// The current RTO.
    pub fn rto(&self) -> Dur {
        self.rto
    }

    /// Reads, and discards, the estimator's state without computing anything (see
    /// [`Sender::warm`](crate::Sender::warm)).
    pub(crate) fn warm(&self) -> u64 {
        self.rto.as_nanos() ^ self.srtt.map_or(0, f64::to_bits)
    }

    /// RTTVAR, once a sample exists.
    pub fn rttvar(&self) -> Option<Dur> {
        self.srtt.map(|_| Dur(self.rttvar.round() as u64))
    }
    /// The smoothed RTT, once a sample exists.
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt.map(|s| Dur(s.round() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_rfc6298_worked_example() {
        // ALGORITHMS.md §2.5: samples 100, 100, 120, 300 ms with G = 1 ms.
        let mut e = RtoEstimator::new(RtoConfig { granularity: Dur::from_millis(1), ..RtoConfig::default() });
        let expected = [(100.0, 300.0), (100.0, 250.0), (102.5, 235.0), (127.1875, 424.0625)];
        for (sample, (srtt, raw)) in [100, 100, 120, 300].into_iter().zip(expected) {
            e.on_sample(Dur::from_millis(sample));
            let got_srtt = e.srtt().unwrap().as_nanos() as f64 / 1e6;
            let got_raw = e.raw_rto().unwrap() / 1e6;
            assert!((got_srtt - srtt).abs() < 1e-3, "SRTT {got_srtt} should be {srtt}");
            assert!((got_raw - raw).abs() < 1e-3, "raw RTO {got_raw} should be {raw}");
            assert_eq!(e.rto(), Dur::from_secs(1), "the 1 s floor applies");
        }
    }

    #[test]
    fn linux_policy_floors_the_variance_term_not_the_rto() {
        // ALGORITHMS.md §2.5: Linux-like first sample 100 ms -> RTO = 100 + max(200, 200) = 300 ms.
        let mut e = RtoEstimator::new(RtoConfig { min: Dur::from_millis(200), policy: RtoPolicy::Linux, ..RtoConfig::default() });
        e.on_sample(Dur::from_millis(100));
        assert_eq!(e.rto(), Dur::from_millis(300));
        let mut rfc = RtoEstimator::new(RtoConfig { min: Dur::from_millis(200), ..RtoConfig::default() });
        rfc.on_sample(Dur::from_millis(10));
        assert_eq!(rfc.rto(), Dur::from_millis(200), "RFC policy: the floor applies to the RTO itself");
    }

    #[test]
    fn backoff_doubles_up_to_the_ceiling() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        let mut seen = vec![];
        for _ in 0..7 {
            e.back_off();
            seen.push(e.rto().as_nanos() / 1_000_000_000);
        }
        assert_eq!(seen, [2, 4, 8, 16, 32, 60, 60]);
        e.on_sample(Dur::from_millis(100));
        assert_eq!(e.rto(), Dur::from_secs(1), "a valid sample ends the backoff");
    }
}
