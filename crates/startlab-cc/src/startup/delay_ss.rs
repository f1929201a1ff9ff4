//! Delay-based slow start — Leith, Shorten, McCullagh, Dunn, Baker, "Delay-based AIMD congestion
//! control", PFLDnet 2007, as summarised by [HyStart] §II; ALGORITHMS.md §11.5 and §20 item 16
//! (OPEN); Limited Slow Start, RFC 3742 (§4).
//!
//! "Monitor queueing delay `RTT − RTT_min`; when it exceeds a threshold `τ0`, switch to Limited
//! Slow Start with `max_ssthresh = cwnd` (current window), so growth per RTT becomes `cwnd/2`":
//!
//! ```text
//! each ACK in slow start: qdelay = rtt_sample − rtt_min
//! if qdelay > τ0 and not switched: max_ssthresh = cwnd_pkts; switched = true
//! then apply §4 (LSS) with that max_ssthresh
//! ```
//!
//! Limited Slow Start (§4.3): "if cwnd <= max_ssthresh*SMSS: cwnd += SMSS (standard slow start);
//! else: K = floor( cwnd / (0.5 * max_ssthresh * SMSS) ); cwnd += floor(SMSS / K)". Growth per RTT
//! after the switch is about `max_ssthresh/2` segments. The switch does not end startup: LSS's
//! "Exit conditions unchanged (`cwnd >= ssthresh` or loss)".
//!
//! Parameters: `tau0` = 10 ms (§20 item 16: the sources do not give τ0; the lab's default).

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, Dur};

/// Configuration of [`DelaySlowStart`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelaySlowStartConfig {
    /// τ0: the queueing delay that switches slow start to Limited Slow Start.
    pub tau0: Dur,
}

impl Default for DelaySlowStartConfig {
    fn default() -> Self {
        DelaySlowStartConfig { tau0: DelaySlowStart::TAU0 }
    }
}

/// Delay-based slow start.
#[derive(Clone, Debug)]
pub struct DelaySlowStart {
    cfg: DelaySlowStartConfig,
    /// `max_ssthresh` in bytes, once the queueing delay exceeded τ0 (`switched`).
    max_ssthresh: Option<f64>,
}

impl DelaySlowStart {
    /// τ0, the lab's default (ALGORITHMS.md §11.5: "not given in the sources we have").
    pub const TAU0: Dur = Dur::from_millis(10);

    /// A delay-based slow start with `cfg`.
    pub fn new(cfg: DelaySlowStartConfig) -> DelaySlowStart {
        DelaySlowStart { cfg, max_ssthresh: None }
    }

    /// `max_ssthresh` in bytes, once switched to Limited Slow Start.
    pub fn max_ssthresh(&self) -> Option<f64> {
        self.max_ssthresh
    }
}

impl StartupAlgorithm for DelaySlowStart {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        // "qdelay = rtt_sample − rtt_min; if qdelay > τ0 and not switched: max_ssthresh = cwnd"
        if self.max_ssthresh.is_none() {
            if let (Some(rtt), Some(rtt_min)) = (ack.rtt, view.min_rtt) {
                if rtt.as_nanos().saturating_sub(rtt_min.as_nanos()) > self.cfg.tau0.as_nanos() {
                    self.max_ssthresh = Some(view.cwnd);
                }
            }
        }
        let mss = view.mss as f64;
        let increase = match self.max_ssthresh {
            // "if cwnd <= max_ssthresh*SMSS: cwnd += SMSS (standard slow start)": min(N, SMSS) in
            // the lab, as in `slow-start`.
            Some(max) if view.cwnd > max => {
                // "K = floor(cwnd / (0.5 * max_ssthresh * SMSS)); cwnd += floor(SMSS / K)"
                let k = (view.cwnd / (0.5 * max)).floor();
                (mss / k).floor()
            }
            _ => ack.newly_acked.min(view.mss) as f64,
        };
        StartupAction::grow(increase)
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// `tau0` of `startup = { algorithm = "delay-ss", ... }`.
pub const TAU0: Param<Dur> = Param::duration("tau0", "10ms", "tau0: the queueing delay that switches to Limited Slow Start (not given by the sources; 10 ms is the lab's default)");

/// The declaration of `delay-ss` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "delay-ss",
        role: "startup",
        summary: "delay-based slow start: when RTT - RTT_min exceeds tau0, switch to Limited Slow Start (RFC 3742) with max_ssthresh = cwnd; startup still ends at ssthresh or loss",
        source: "Leith et al., Delay-based AIMD congestion control, PFLDnet 2007, as summarised by [HyStart] (ALGORITHMS.md §11.5, §20 item 16)",
        params: &[TAU0.info],
    },
    build: super::Build::Native(|p, _| super::Startup::DelaySlowStart(DelaySlowStart::new(DelaySlowStartConfig {
            tau0: p.get(&TAU0),
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
    use crate::{Ssthresh, Time};

    const MSS: u64 = 1000;

    fn view(cwnd: f64) -> CcView {
        CcView { cwnd, ssthresh: Ssthresh::Infinite, mss: MSS, round: 0, min_rtt: Some(Dur::from_millis(100)), new_round: false }
    }

    fn ack(rtt_us: u64) -> AckEvent {
        AckEvent {
            now: Time(0),
            newly_acked: MSS,
            ack_seq: 0,
            snd_nxt: 0,
            rtt: Some(Dur::from_micros(rtt_us)),
            ..AckEvent::default()
        }
    }

    #[test]
    fn below_tau0_it_is_standard_slow_start() {
        let mut d = DelaySlowStart::new(DelaySlowStartConfig::default());
        // 110 ms against a 100 ms minimum: exactly τ0 of queue, not more.
        let a = d.on_ack(&view(50_000.0), &ack(110_000));
        assert_eq!(a.increase, MSS as f64);
        assert_eq!(d.max_ssthresh(), None, "qdelay must exceed tau0 strictly");
    }

    #[test]
    fn a_queue_beyond_tau0_switches_to_limited_slow_start_at_the_current_window() {
        let mut d = DelaySlowStart::new(DelaySlowStartConfig::default());
        // cwnd 100 segments, rtt 110.001 ms: switch with max_ssthresh = 100 segments. At cwnd ==
        // max_ssthresh the ACK still adds a full segment (RFC 3742: cwnd <= max_ssthresh).
        let a = d.on_ack(&view(100_000.0), &ack(110_001));
        assert_eq!(d.max_ssthresh(), Some(100_000.0));
        assert_eq!(a.increase, MSS as f64);
        // cwnd 101 segments: K = floor(101/50) = 2, +floor(1000/2) = 500 bytes.
        assert_eq!(d.on_ack(&view(101_000.0), &ack(100_000)).increase, 500.0);
        // cwnd 150 segments: K = 3, +333 bytes; cwnd 1000 segments: K = 20, +50 bytes.
        assert_eq!(d.on_ack(&view(150_000.0), &ack(100_000)).increase, 333.0);
        assert_eq!(d.on_ack(&view(1_000_000.0), &ack(100_000)).increase, 50.0);
        // The switch happens once: a later, larger delay does not move max_ssthresh.
        d.on_ack(&view(2_000_000.0), &ack(200_000));
        assert_eq!(d.max_ssthresh(), Some(100_000.0));
    }

    #[test]
    fn after_the_switch_the_window_grows_by_about_half_max_ssthresh_per_rtt() {
        // Fluid per-ACK model (ALGORITHMS.md §4.5): from 100 segments, one ACK per segment of the
        // window at the start of each round, five rounds add about 5 · 50 = 250 segments.
        let mut d = DelaySlowStart::new(DelaySlowStartConfig::default());
        let mut cwnd = 100_000.0;
        d.on_ack(&view(cwnd), &ack(120_000));
        for _ in 0..5 {
            let acks = (cwnd / MSS as f64) as u64;
            for _ in 0..acks {
                cwnd += d.on_ack(&view(cwnd), &ack(120_000)).increase;
            }
        }
        let grown = (cwnd - 100_000.0) / MSS as f64;
        assert!((235.0..=265.0).contains(&grown), "five LSS rounds from 100 segments grew {grown} segments");
    }
}
