//! TCP Westwood+ Adaptive Start ("Astart") — Wang, Pau, Yamada, Sanadidi, Gerla, "TCP Startup
//! Performance in Large Bandwidth Delay Networks", INFOCOM 2004; bandwidth filter of Linux
//! `net/ipv4/tcp_westwood.c` (Westwood+); ALGORITHMS.md §11.4 and §20 item 15 (OPEN).
//!
//! "During slow start, repeatedly raise ssthresh to the current Eligible Rate Estimate (ERE) ×
//! RTTmin, alternating exponential and linear growth until loss":
//!
//! ```text
//! on each ACK in startup: update ERE; ssthresh_est = ERE · RTTmin / SMSS
//!     if ssthresh_est > ssthresh: ssthresh = ssthresh_est            # re-open slow start
//!     if cwnd < ssthresh: slow start increment else CA increment
//! ```
//!
//! Two estimators (parameter `estimator`):
//! * `"westwood"` (default, as §11.4 ships it): Westwood+ BWE, one sample per RTT,
//!   `b = bytes_acked_in_RTT / RTT`, filtered `BWE ← (7·BWE + b)/8`.
//! * `"ere"`: the TCPW-CRB/ABSE eligible rate, approximate (§20 item 15: the paper's filter gains and
//!   `T_k` bounds are unknown): samples over the adaptive interval
//!   `T_k = RTT · (Expected − Achieved)/Expected`, `Expected = cwnd/RTTmin`,
//!   `Achieved = (bytes ACKed in the last RTT)/RTT`, `sample = bytes ACKed during T_k / T_k`,
//!   filtered like BWE.
//!
//! In slow start the plug-in raises ssthresh when the estimate exceeds it and grows by `min(N, SMSS)`
//! per ACK; when cwnd reaches an ssthresh that the estimate set, startup ends with reason
//! `estimate` (one the configuration set gives reason `ssthresh`). In congestion avoidance, the
//! "CA increment" is the avoidance algorithm's, and an estimate above cwnd re-opens slow start
//! (through [`StartupAlgorithm::reopen`]); the recorded end of startup stays the first one. With an
//! infinite initial ssthresh (the lab default) there is nothing to raise: Astart is slow start until
//! the first loss, as [HyStart] observed ("ERE < cwnd always").
//! NOTE: Astart stops at the first congestion signal (no raising, no re-opening afterwards): the
//! Astart phase lasts "until loss", and after a loss the ACKed-byte counts jump over data
//! delivered long before (cumulative ACKs that fill holes), which would inflate any estimate.

use std::collections::VecDeque;

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, Dur, ExitReason, Ssthresh, Time};

/// Which rate estimate raises ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AstartEstimator {
    /// Westwood+ BWE: one sample per RTT, 7/8 filter (Linux `tcp_westwood.c`).
    Westwood,
    /// The adaptive-interval eligible rate estimate (approximate, §20 item 15).
    Ere,
}

/// Configuration of [`Astart`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AstartConfig {
    /// The estimator.
    pub estimator: AstartEstimator,
}

impl Default for AstartConfig {
    fn default() -> Self {
        AstartConfig { estimator: AstartEstimator::Westwood }
    }
}

/// Westwood+ Adaptive Start.
#[derive(Clone, Debug)]
pub struct Astart {
    cfg: AstartConfig,
    /// The filtered rate estimate (BWE or ERE), bytes per second, once sampled.
    rate: Option<f64>,
    /// The latest RTT sample.
    rtt: Option<Dur>,
    /// Westwood+: start of the sampling window (`rtt_win_sx`) and `delivered` at that moment.
    window_start: Option<(Time, u64)>,
    /// ERE: `(arrival, delivered)` of recent ACKs, oldest first, kept for one RTT plus one anchor.
    history: VecDeque<(Time, u64)>,
    /// The ssthresh in force was set from the estimate.
    raised: bool,
    /// A congestion signal arrived: the Astart phase is over.
    after_loss: bool,
}

impl Astart {
    /// Linux `TCP_WESTWOOD_RTT_MIN` (`HZ/20`): the shortest Westwood+ sampling window.
    pub const TCP_WESTWOOD_RTT_MIN: Dur = Dur::from_millis(50);
    /// ERE: the lower bound of `T_k`. NOTE: §11.4 says "bounded below by a few ms"; the value is
    /// ours (§20 item 15 is OPEN).
    pub const T_K_MIN: Dur = Dur::from_millis(5);

    /// An Astart with `cfg`.
    pub fn new(cfg: AstartConfig) -> Astart {
        Astart { cfg, rate: None, rtt: None, window_start: None, history: VecDeque::new(), raised: false, after_loss: false }
    }

    /// The filtered rate estimate in bytes per second, once there is one.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// "BWE ← (7·BWE + b)/8" (Linux `westwood_do_filter`); the first sample is taken as is
    /// (Linux `westwood_filter`: "If the filter is empty fill it with the first sample").
    fn filter(&mut self, sample: f64) {
        self.rate = Some(match self.rate {
            None => sample,
            Some(r) => (7.0 * r + sample) / 8.0,
        });
    }

    /// Westwood+ (`westwood_update_window`): a sample once the window is longer than both the RTT
    /// and `TCP_WESTWOOD_RTT_MIN`, "b = bytes_acked_in_RTT / RTT".
    fn westwood(&mut self, ack: &AckEvent) {
        let Some((start, delivered_then)) = self.window_start else {
            self.window_start = Some((ack.now, ack.delivered));
            return;
        };
        let Some(rtt) = self.rtt else { return };
        let delta = ack.now.saturating_since(start);
        if delta > rtt.max(Self::TCP_WESTWOOD_RTT_MIN) {
            self.filter((ack.delivered - delivered_then) as f64 / delta.as_secs_f64());
            self.window_start = Some((ack.now, ack.delivered));
        }
    }

    /// Bytes delivered in the last `span` before `now`: measured from the newest recorded ACK at
    /// or before `now − span` (the oldest one if the history is shorter).
    fn delivered_in(&self, now: Time, span: Dur, delivered: u64) -> u64 {
        let from = Time(now.as_nanos().saturating_sub(span.as_nanos()));
        let base = self.history.iter().rev().find(|(t, _)| *t <= from).or(self.history.front()).map_or(delivered, |&(_, d)| d);
        delivered - base
    }

    /// The eligible rate estimate with its adaptive interval `T_k`.
    fn ere(&mut self, view: &CcView, ack: &AckEvent) {
        if let (Some(rtt), Some(rtt_min)) = (self.rtt, view.min_rtt) {
            let rtt_s = rtt.as_secs_f64();
            // "Expected = cwnd/RTTmin, Achieved = (bytes ACKed in the last RTT)/RTT"
            let expected = view.cwnd / rtt_min.as_secs_f64();
            let achieved = self.delivered_in(ack.now, rtt, ack.delivered) as f64 / rtt_s;
            // "T_k = RTT · (Expected − Achieved)/Expected (bounded below by a few ms and above by RTT)"
            let t_k = Dur::from_secs_f64(rtt_s * ((expected - achieved) / expected).max(0.0)).max(Self::T_K_MIN).min(rtt);
            // NOTE: a sample at every ACK, looking back T_k (TCPW-CRB computes its samples on ACK
            // arrival), each through the 7/8 filter; the paper's filter gains are unknown (§20
            // item 15).
            if !self.history.is_empty() {
                // "sample = bytes ACKed during T_k / T_k"
                let bytes = self.delivered_in(ack.now, t_k, ack.delivered);
                self.filter(bytes as f64 / t_k.as_secs_f64());
            }
            // Keep one RTT of history plus the newest entry older than that as the anchor.
            let horizon = Time(ack.now.as_nanos().saturating_sub(rtt.as_nanos()));
            while self.history.len() >= 2 && self.history[1].0 <= horizon {
                self.history.pop_front();
            }
        }
        self.history.push_back((ack.now, ack.delivered));
    }
}

impl Astart {
    /// Takes the ACK's RTT sample and feeds the configured estimator.
    fn observe(&mut self, view: &CcView, ack: &AckEvent) {
        if let Some(rtt) = ack.rtt {
            self.rtt = Some(rtt);
        }
        match self.cfg.estimator {
            AstartEstimator::Westwood => self.westwood(ack),
            AstartEstimator::Ere => self.ere(view, ack),
        }
    }

    /// "ssthresh_est = ERE · RTTmin / SMSS", in bytes, once there is an estimate.
    fn estimate(&self, view: &CcView) -> Option<f64> {
        Some(self.rate? * view.min_rtt?.as_secs_f64())
    }
}

impl StartupAlgorithm for Astart {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let increase = ack.newly_acked.min(view.mss) as f64;
        let mut action = StartupAction::grow(increase);
        if self.after_loss {
            return action;
        }
        self.observe(view, ack);
        let Ssthresh::Bytes(mut ssthresh) = view.ssthresh else {
            // Nothing to raise: Astart is slow start until loss.
            return action;
        };
        // "if ssthresh_est > ssthresh: ssthresh = ssthresh_est"
        if let Some(estimate) = self.estimate(view).filter(|&e| e > ssthresh) {
            ssthresh = estimate;
            self.raised = true;
            action.set_ssthresh = Some(estimate);
        }
        // "if cwnd < ssthresh: slow start increment else CA increment": the linear phase begins
        // where startup ends. The controller ends it at an ssthresh the configuration set.
        if self.raised && view.cwnd + increase >= ssthresh {
            action.set_ssthresh = None;
            action.exit = Some(ExitReason::Estimate);
        }
        action
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.after_loss = true;
    }

    fn reopen(&mut self, view: &CcView, ack: &AckEvent) -> Option<f64> {
        if self.after_loss {
            return None;
        }
        self.observe(view, ack);
        // "if ssthresh_est > ssthresh: ssthresh = ssthresh_est  # re-open slow start", which
        // re-opens it when the estimate is also above cwnd.
        let estimate = self.estimate(view)?;
        (estimate > view.ssthresh.as_f64() && estimate > view.cwnd).then(|| {
            self.raised = true;
            estimate
        })
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// `estimator` of `startup = { algorithm = "astart", ... }`.
pub const ESTIMATOR: Param<&'static str> = Param::choice("estimator", &["westwood", "ere"], "westwood", "westwood: Westwood+ BWE, one sample per RTT, 7/8 filter; ere: adaptive-interval eligible rate estimate (approximate)");

/// The declaration of `astart` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "astart",
        role: "startup",
        summary: "Westwood+ Adaptive Start: raise a finite ssthresh to rate_estimate*RTT_min whenever it is larger; slow start until cwnd reaches it (reason estimate); with an infinite ssthresh, plain slow start",
        source: "Wang, Pau, Yamada, Sanadidi, Gerla, INFOCOM 2004; Linux net/ipv4/tcp_westwood.c (ALGORITHMS.md §11.4, §20 item 15)",
        params: &[ESTIMATOR.info],
    },
    build: super::Build::Native(|p, _| super::Startup::Astart(Astart::new(AstartConfig {
            estimator: match p.get(&ESTIMATOR) {
                "ere" => AstartEstimator::Ere,
                _ => AstartEstimator::Westwood,
            },
        }))),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn view(cwnd_pkts: f64, ssthresh: Ssthresh) -> CcView {
        CcView {
            cwnd: cwnd_pkts * MSS as f64,
            ssthresh,
            mss: MSS,
            round: 0,
            min_rtt: Some(Dur::from_millis(100)),
            new_round: false,
        }
    }

    fn ack(now_ms: u64, delivered: u64) -> AckEvent {
        AckEvent {
            now: Time(now_ms * 1_000_000),
            newly_acked: MSS,
            ack_seq: delivered,
            snd_nxt: delivered,
            rtt: Some(Dur::from_millis(100)),
            flight_size: 0,
            cwnd_limited: true,
            acked_segments: 1,
            timer_triggered: false,
            delivered,
            rate_sample: None,
            ce_bytes: 0,
        }
    }

    #[test]
    fn westwood_takes_one_sample_per_rtt_and_filters_by_seven_eighths() {
        let mut a = Astart::new(AstartConfig::default());
        let inf = view(10.0, Ssthresh::Infinite);
        // t=0: the window opens (delivered 0). t=50..100 ms: nothing yet, the window must exceed
        // the 100 ms RTT.
        a.on_ack(&inf, &ack(0, 0));
        a.on_ack(&inf, &ack(100, 100_000));
        assert_eq!(a.rate(), None, "a window of exactly one RTT is not yet a sample");
        // t=125 ms: 125 000 B in 125 ms → first sample 1 MB/s, taken as is.
        a.on_ack(&inf, &ack(125, 125_000));
        assert_eq!(a.rate(), Some(1_000_000.0));
        // t=250 ms: 375 000 B more in 125 ms → 3 MB/s; BWE = (7 · 1 + 3)/8 = 1.25 MB/s.
        a.on_ack(&inf, &ack(250, 500_000));
        assert_eq!(a.rate(), Some(1_250_000.0));
    }

    #[test]
    fn an_infinite_ssthresh_leaves_plain_slow_start() {
        let mut a = Astart::new(AstartConfig::default());
        let inf = view(10.0, Ssthresh::Infinite);
        for (t, d) in [(0, 0), (125, 1_000_000), (250, 2_000_000)] {
            let act = a.on_ack(&inf, &ack(t, d));
            assert_eq!(act, StartupAction::grow(MSS as f64), "nothing to raise, standard growth");
        }
    }

    #[test]
    fn the_estimate_raises_ssthresh_and_ends_startup_when_cwnd_reaches_it() {
        let mut a = Astart::new(AstartConfig::default());
        let s20 = Ssthresh::Bytes(20.0 * MSS as f64);
        a.on_ack(&view(10.0, s20), &ack(0, 0));
        // t=125 ms: 4 MB/s · 100 ms = 400 000 B > 20 segments: ssthresh raised to 400 segments.
        let act = a.on_ack(&view(12.0, s20), &ack(125, 500_000));
        assert_eq!(act.set_ssthresh, Some(400_000.0));
        assert_eq!(act.exit, None);
        let s400 = Ssthresh::Bytes(400_000.0);
        // cwnd 398 segments: still below.
        let act = a.on_ack(&view(398.0, s400), &ack(130, 501_000));
        assert_eq!((act.exit, act.increase), (None, MSS as f64));
        // cwnd 399 + 1 reaches the raised ssthresh: the exponential phase ends, reason `estimate`.
        let act = a.on_ack(&view(399.0, s400), &ack(131, 502_000));
        assert_eq!(act.exit, Some(ExitReason::Estimate));
    }

    #[test]
    fn an_estimate_below_ssthresh_leaves_the_configured_exit_to_the_controller() {
        let mut a = Astart::new(AstartConfig::default());
        let s20 = Ssthresh::Bytes(20.0 * MSS as f64);
        a.on_ack(&view(10.0, s20), &ack(0, 0));
        // t=125 ms: 10 000 B in 125 ms = 80 kB/s; · 100 ms = 8 000 B, below 20 segments.
        let act = a.on_ack(&view(19.0, s20), &ack(125, 10_000));
        assert_eq!((act.set_ssthresh, act.exit), (None, None), "the controller ends startup at its own ssthresh");
    }

    #[test]
    fn ere_samples_over_a_short_interval_when_achieved_matches_expected() {
        // cwnd 10 segments, RTTmin 100 ms: Expected = 100 kB/s. An ACK delivers 1000 B every 10 ms,
        // so once a full RTT of ACKs is recorded Achieved = 100 kB/s and T_k = RTT · 0, bounded
        // below by T_K_MIN = 5 ms: each ACK's sample counts only its own 1000 B in the last 5 ms,
        // 200 kB/s, the rate of the ACK burst rather than the average.
        let mut a = Astart::new(AstartConfig { estimator: AstartEstimator::Ere });
        let v = view(10.0, Ssthresh::Infinite);
        for i in 0..=300u64 {
            a.on_ack(&v, &ack(i * 10, i * 1000));
        }
        let r = a.rate().unwrap();
        assert!((r - 200_000.0).abs() < 200.0, "short-interval samples see the ACK burst rate: {r}");
    }

    #[test]
    fn ere_stretches_t_k_towards_the_rtt_when_the_path_is_congested() {
        // cwnd 100 segments (Expected 1 MB/s) but ACKs deliver 1000 B per 10 ms (Achieved 100 kB/s):
        // T_k = 100 ms · 0.9 = 90 ms, and each sample spans nine ACKs: 9000 B / 90 ms = 100 kB/s.
        let mut a = Astart::new(AstartConfig { estimator: AstartEstimator::Ere });
        let v = view(100.0, Ssthresh::Infinite);
        for i in 0..=3000u64 {
            a.on_ack(&v, &ack(i * 10, i * 1000));
        }
        let r = a.rate().unwrap();
        assert!((r - 100_000.0).abs() < 100.0, "long-interval samples see the achieved rate: {r}");
    }

    #[test]
    fn in_avoidance_an_estimate_above_cwnd_reopens_slow_start() {
        let mut a = Astart::new(AstartConfig::default());
        let ca = |cwnd_pkts: f64| view(cwnd_pkts, Ssthresh::Bytes(20.0 * MSS as f64));
        assert_eq!(a.reopen(&ca(30.0), &ack(0, 0)), None, "no estimate yet");
        // t=125 ms: 250 000 B in 125 ms = 2 MB/s → 200 000 B, above cwnd 30 segments.
        assert_eq!(a.reopen(&ca(30.0), &ack(125, 250_000)), Some(200_000.0));
        // An estimate above ssthresh but below cwnd does not re-open: (7 · 2 MB/s + 0)/8 → 175 000 B
        // against cwnd 180 segments.
        assert_eq!(a.reopen(&ca(180.0), &ack(250, 250_000)), None);
    }

    #[test]
    fn after_a_congestion_signal_astart_is_plain_slow_start() {
        use crate::{CongestionKind, Time};
        let mut a = Astart::new(AstartConfig::default());
        let s20 = Ssthresh::Bytes(20.0 * MSS as f64);
        a.on_ack(&view(10.0, s20), &ack(0, 0));
        a.on_congestion(&view(10.0, s20), &CongestionEvent { now: Time(1), kind: CongestionKind::Timeout, flight_size: 0, enter_recovery: false });
        // The same 4 MB/s that raised ssthresh before is now ignored.
        let act = a.on_ack(&view(12.0, s20), &ack(125, 500_000));
        assert_eq!(act, StartupAction::grow(MSS as f64));
        assert_eq!(a.reopen(&view(30.0, s20), &ack(250, 1_000_000)), None);
    }

    #[test]
    fn a_controller_resumes_slow_start_when_astart_reopens_it() {
        use crate::avoidance::{Avoidance, Reno};
        use crate::startup::Startup;
        use crate::{CcConfig, Controller, Phase};
        // ssthresh 4 segments = IW: startup is over before the first ACK (reason ssthresh).
        let mut c = Controller::new(
            CcConfig {
                mss: MSS,
                initial_window: 4 * MSS,
                initial_ssthresh: Ssthresh::Bytes(4.0 * MSS as f64),
                loss_window: MSS,
                cwnd_validation: false,
                linux_ss_clamp: false,
            },
            Startup::Astart(Astart::new(AstartConfig::default())),
            Avoidance::Reno(Reno::default()),
        );
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
        // t=0: the Westwood window opens. t=125 ms: 100 000 B in 125 ms = 800 kB/s; with the 100 ms
        // minimum RTT the estimate is 80 000 B, above cwnd: slow start re-opens with that ssthresh.
        c.on_ack(&ack(0, 1_000));
        c.on_ack(&ack(125, 101_000));
        assert_eq!((c.phase(), c.ssthresh()), (Phase::SlowStart, Ssthresh::Bytes(80_000.0)));
        // The next ACK is slow start's: +1 segment.
        let before = c.cwnd();
        c.on_ack(&ack(126, 102_000));
        assert_eq!(c.cwnd() - before, MSS as f64);
        assert_eq!(c.startup_exit().unwrap().reason, ExitReason::Ssthresh, "the first end of startup stays recorded");
    }
}
