//! RTT estimation — RFC 9002 §5.
//!
//! QUIC takes an RTT sample from an ACK frame whose largest acknowledged packet is newly
//! acknowledged and was ack-eliciting (§5.1); packet numbers are never reused, so every such
//! sample is clean (no Karn ambiguity). `min_rtt` is the smallest sample, without the peer's
//! `ack_delay` (§5.2). The smoothed RTT and its variation follow §5.3: the first sample sets
//! `smoothed_rtt = sample`, `rttvar = sample / 2`; later ones subtract the reported `ack_delay`
//! (at most `max_ack_delay` once the handshake is confirmed) unless that would go below
//! `min_rtt`, then `rttvar ← 3/4·rttvar + 1/4·|smoothed_rtt − adjusted|` and
//! `smoothed_rtt ← 7/8·smoothed_rtt + 1/8·adjusted`.
//!
//! Arithmetic is in integer nanoseconds (as quinn, quiche and msquic keep durations), so two runs
//! give the same estimates on every machine.

use startlab_units::Dur;

/// RFC 9002 §6.2.2: the RTT assumed before the first sample.
pub const INITIAL_RTT: Dur = Dur::from_millis(333);

/// The RTT estimator of one connection (RFC 9002 §5).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    latest: Dur,
    min: Dur,
    smoothed: Dur,
    var: Dur,
    has_sample: bool,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new(INITIAL_RTT)
    }
}

impl RttEstimator {
    /// An estimator before any sample: `smoothed_rtt = initial`, `rttvar = initial / 2` (§6.2.2).
    pub fn new(initial: Dur) -> RttEstimator {
        RttEstimator { latest: Dur::ZERO, min: Dur::ZERO, smoothed: initial, var: Dur(initial.0 / 2), has_sample: false }
    }

    /// A sample (`latest_rtt`, §5.1) with the peer's reported `ack_delay`; `max_ack_delay` caps
    /// the delay once the handshake is confirmed (`None` before: the delay is used as reported).
    pub fn on_sample(&mut self, latest: Dur, ack_delay: Dur, max_ack_delay: Option<Dur>) {
        self.latest = latest;
        if !self.has_sample {
            self.has_sample = true;
            self.min = latest;
            self.smoothed = latest;
            self.var = Dur(latest.0 / 2);
            return;
        }
        self.min = self.min.min(latest);
        let ack_delay = max_ack_delay.map_or(ack_delay, |m| ack_delay.min(m));
        // §5.3: "adjusted_rtt = latest_rtt; if (latest_rtt >= min_rtt + ack_delay) adjusted_rtt = latest_rtt - ack_delay".
        let adjusted = if latest.0 >= self.min.0 + ack_delay.0 { Dur(latest.0 - ack_delay.0) } else { latest };
        let diff = self.smoothed.0.abs_diff(adjusted.0);
        self.var = Dur((3 * self.var.0 + diff) / 4);
        self.smoothed = Dur((7 * self.smoothed.0 + adjusted.0) / 8);
    }

    /// The last sample.
    pub fn latest(&self) -> Dur {
        self.latest
    }
    /// The smallest sample (zero before the first).
    pub fn min(&self) -> Dur {
        self.min
    }
    /// `smoothed_rtt`.
    pub fn smoothed(&self) -> Dur {
        self.smoothed
    }
    /// `rttvar`.
    pub fn var(&self) -> Dur {
        self.var
    }
    /// True once a sample arrived.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// The PTO period without backoff (§6.2.1): `smoothed_rtt + max(4·rttvar, kGranularity)`,
    /// plus `max_ack_delay` in the application data space.
    pub fn pto_base(&self, granularity: Dur, max_ack_delay: Dur) -> Dur {
        Dur(self.smoothed.0 + (4 * self.var.0).max(granularity.0) + max_ack_delay.0)
    }

    /// The time threshold of §6.1.2: `max(kTimeThreshold·max(smoothed_rtt, latest_rtt),
    /// kGranularity)` with `kTimeThreshold = num/den` (9/8).
    pub fn loss_delay(&self, num: u64, den: u64, granularity: Dur) -> Dur {
        let base = self.smoothed.max(self.latest).0;
        Dur((base * num).div_ceil(den).max(granularity.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }

    #[test]
    fn the_first_sample_sets_smoothed_and_half_of_it_as_variation() {
        let mut r = RttEstimator::default();
        assert_eq!((r.smoothed(), r.var()), (ms(333), Dur(ms(333).0 / 2)));
        r.on_sample(ms(100), ms(20), None);
        // The first sample ignores ack_delay (§5.3).
        assert_eq!((r.latest(), r.min(), r.smoothed(), r.var()), (ms(100), ms(100), ms(100), ms(50)));
    }

    #[test]
    fn later_samples_subtract_the_ack_delay_unless_that_goes_below_min_rtt() {
        let mut r = RttEstimator::default();
        r.on_sample(ms(100), ms(0), None);
        // 130 − 20 = 110 ≥ min: adjusted 110; var = (3·50 + 10)/4 = 40; smoothed = (700 + 110)/8.
        r.on_sample(ms(130), ms(20), Some(ms(25)));
        assert_eq!(r.var(), ms(40));
        assert_eq!(r.smoothed(), Dur((7 * ms(100).0 + ms(110).0) / 8));
        // 105 − 20 < min + ack_delay: the delay is not subtracted.
        let before = r.clone();
        r.on_sample(ms(105), ms(20), Some(ms(25)));
        let diff = before.smoothed().0.abs_diff(ms(105).0);
        assert_eq!(r.var(), Dur((3 * before.var().0 + diff) / 4));
        // After confirmation the reported delay is capped at max_ack_delay.
        let mut a = RttEstimator::default();
        a.on_sample(ms(100), ms(0), None);
        a.on_sample(ms(300), ms(150), Some(ms(25)));
        let mut b = RttEstimator::default();
        b.on_sample(ms(100), ms(0), None);
        b.on_sample(ms(300), ms(25), None);
        assert_eq!(a.smoothed(), b.smoothed());
    }

    #[test]
    fn min_rtt_ignores_ack_delay_and_pto_and_loss_delay_follow_the_formulas() {
        let mut r = RttEstimator::default();
        r.on_sample(ms(80), ms(0), None);
        r.on_sample(ms(60), ms(30), None);
        assert_eq!(r.min(), ms(60));
        let pto = r.pto_base(ms(1), ms(25));
        assert_eq!(pto, Dur(r.smoothed().0 + 4 * r.var().0 + ms(25).0));
        // 9/8 of max(smoothed, latest), at least the granularity.
        assert_eq!(r.loss_delay(9, 8, ms(1)), Dur((r.smoothed().max(r.latest()).0 * 9).div_ceil(8)));
        let tiny = RttEstimator::new(Dur(100));
        assert_eq!(tiny.loss_delay(9, 8, ms(1)), ms(1));
    }
}
