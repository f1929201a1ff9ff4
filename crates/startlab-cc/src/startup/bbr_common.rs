//! What BBR's two startups share (`bbr-startup`, STARTUP alone; `bbrv3`, BBRv3's STARTUP and
//! DRAIN): the delivery-rate samples they accept, the BDP estimate, the pacing rate's
//! initialisation and update, and BBRv3's per-round test of the CE-marked fraction.

use crate::{AckEvent, Dur};

/// `bbr_cwnd_min_target` / draft-ietf-ccwg-bbr `BBR.MinPipeCwnd`: 4 segments.
pub(super) const CWND_MIN_SEGMENTS: f64 = 4.0;

/// The RTT the initial pacing rate assumes before any sample (Linux `bbr_init_pacing_rate_from_rtt`
/// "nominal default RTT", `USEC_PER_MSEC`; draft-ietf-ccwg-bbr-06 §5.6.2 `InitPacingRate`: 1 ms).
pub(super) const NOMINAL_RTT: Dur = Dur::from_millis(1);

/// The delivery rate (bytes/s) of the ACK's sample, if BBR uses it. Samples whose interval is
/// shorter than the minimum RTT are discarded, as Linux's estimator does (`tcp_rate_gen`:
/// "interval_us < tcp_min_rtt(tp)"), since they overstate the rate.
pub(super) fn sample_rate(ack: &AckEvent, min_rtt: Option<Dur>) -> Option<f64> {
    let rs = ack.rate_sample?;
    (rs.interval > Dur::ZERO && min_rtt.is_none_or(|m| rs.interval >= m)).then(|| rs.rate())
}

/// The BDP estimate `bw · min_rtt` in bytes, once both are known.
pub(super) fn bdp(bw: Option<f64>, min_rtt: Option<Dur>) -> Option<f64> {
    Some(bw? * min_rtt?.as_secs_f64())
}

/// The pacing rate a BBR startup asks for (bytes/s).
#[derive(Clone, Debug, Default)]
pub(super) struct Pacing {
    /// The rate asked for so far.
    rate: Option<f64>,
    /// Linux `has_seen_rtt`: the initial rate came from an RTT sample, not the nominal 1 ms.
    has_seen_rtt: bool,
}

impl Pacing {
    /// The initial rate `gain · IW / RTT` (Linux `bbr_init_pacing_rate_from_rtt`, the draft's
    /// `InitPacingRate`), set on the first ACK and set again on the first ACK with an RTT sample.
    ///
    /// NOTE: Linux divides by srtt; the lab's view has the minimum RTT, which on the first ACK
    /// with a sample is that sample, as srtt is.
    pub(super) fn init(&mut self, gain: f64, iw: f64, min_rtt: Option<Dur>) {
        if self.has_seen_rtt {
            return;
        }
        let rtt = min_rtt.filter(|r| *r > Dur::ZERO);
        self.has_seen_rtt = rtt.is_some();
        if rtt.is_some() || self.rate.is_none() {
            self.rate = Some(gain * iw / rtt.unwrap_or(NOMINAL_RTT).as_secs_f64());
        }
    }

    /// Linux `bbr_set_pacing_rate`, the draft's `SetPacingRateWithGain`: `rate` (none before a
    /// bandwidth estimate) replaces the current rate if it is higher, or always once the pipe
    /// was found full (`full`). Returns the rate now asked for.
    pub(super) fn set(&mut self, rate: Option<f64>, full: bool) -> f64 {
        let current = self.rate.expect("init runs first");
        let next = match rate {
            Some(r) if full || r > current => r,
            _ => current,
        };
        self.rate = Some(next);
        next
    }
}

/// BBRv3's ECN exit from STARTUP (Linux `bbr_check_ecn_too_high_in_startup`): the CE-marked
/// fraction of each round's delivered bytes, counted once the flow is "ECN eligible".
#[derive(Clone, Debug, Default)]
pub(super) struct EcnRounds {
    /// Bytes delivered and CE-marked bytes reported in the current round.
    delivered: u64,
    ce: u64,
    /// `startup_ecn_rounds`: rounds in a row with the CE-marked fraction at or above the threshold.
    rounds: u32,
    /// `ecn_eligible`: a minimum RTT of at most `max_rtt` has been seen (sticky, as Linux's).
    eligible: bool,
}

impl EcnRounds {
    /// An ACK of `acked` bytes reporting `ce` newly CE-marked bytes (the ACK that ends a round is
    /// counted in that round, as Linux's delivered counts are).
    pub(super) fn on_ack(&mut self, acked: u64, ce: u64) {
        self.delivered += acked;
        self.ce += ce;
    }

    /// At a round's end: true once `full_rounds` rounds in a row had a CE-marked fraction of at
    /// least `thresh` while ECN-eligible (a minimum RTT of at most `max_rtt`). Starts the next
    /// round's counts; returns the ended round's delivered bytes beside the verdict.
    pub(super) fn round_end(&mut self, min_rtt: Option<Dur>, thresh: f64, full_rounds: u32, max_rtt: Dur) -> (bool, u64) {
        self.eligible |= min_rtt.is_some_and(|m| m <= max_rtt);
        let (delivered, ce) = (std::mem::take(&mut self.delivered), std::mem::take(&mut self.ce));
        if !self.eligible || full_rounds == 0 || delivered == 0 {
            return (false, delivered);
        }
        if ce as f64 >= thresh * delivered as f64 {
            self.rounds += 1;
        } else {
            self.rounds = 0;
        }
        (self.rounds >= full_rounds, delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RateSample;

    #[test]
    fn samples_shorter_than_the_minimum_rtt_or_empty_are_refused() {
        let ack = |delivered, ms| AckEvent { rate_sample: Some(RateSample { delivered, interval: Dur::from_millis(ms) }), ..AckEvent::default() };
        assert_eq!(sample_rate(&ack(10_000, 10), Some(Dur::from_millis(40))), None, "10 ms < min RTT 40 ms");
        assert_eq!(sample_rate(&ack(10_000, 40), Some(Dur::from_millis(40))), Some(250_000.0));
        assert_eq!(sample_rate(&ack(10_000, 10), None), Some(1_000_000.0), "no minimum RTT yet: accepted");
        assert_eq!(sample_rate(&ack(10_000, 0), None), None, "no interval");
        assert_eq!(sample_rate(&AckEvent::default(), None), None, "no sample");
    }

    #[test]
    fn the_pacing_rate_only_rises_until_the_pipe_is_full() {
        let mut p = Pacing::default();
        p.init(2.0, 10_000.0, None);
        assert_eq!(p.set(None, false), 2.0 * 10_000.0 / 0.001, "the nominal 1 ms");
        p.init(2.0, 10_000.0, Some(Dur::from_millis(40)));
        assert_eq!(p.set(None, false), 500_000.0, "set again from the first RTT sample");
        p.init(2.0, 10_000.0, Some(Dur::from_millis(10)));
        assert_eq!(p.set(Some(100_000.0), false), 500_000.0, "once only; a lower rate is ignored");
        assert_eq!(p.set(Some(600_000.0), false), 600_000.0);
        assert_eq!(p.set(Some(100_000.0), true), 100_000.0, "a full pipe lets it fall");
    }

    #[test]
    fn two_rounds_in_a_row_at_half_the_bytes_marked_are_too_high_once_eligible() {
        let (short, long) = (Some(Dur::from_millis(2)), Some(Dur::from_millis(40)));
        let max = Dur::from_millis(5);
        let mut e = EcnRounds::default();
        e.on_ack(10_000, 10_000);
        assert_eq!(e.round_end(long, 0.5, 2, max), (false, 10_000), "not eligible on a 40 ms path");
        e.on_ack(10_000, 5_000);
        assert_eq!(e.round_end(short, 0.5, 2, max), (false, 10_000), "eligible: first round at 1/2");
        e.on_ack(10_000, 4_999);
        assert_eq!(e.round_end(long, 0.5, 2, max), (false, 10_000), "below 1/2 resets; eligibility sticks");
        e.on_ack(10_000, 6_000);
        assert!(!e.round_end(long, 0.5, 2, max).0);
        e.on_ack(8_000, 8_000);
        assert_eq!(e.round_end(long, 0.5, 2, max), (true, 8_000));
        assert!(!EcnRounds::default().round_end(short, 0.5, 0, max).0, "0 rounds: never");
    }
}
