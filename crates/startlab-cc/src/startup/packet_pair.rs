//! Packet-pair slow start — the generalised Hoe estimator of ALGORITHMS.md §11.3 ([HyStart] Fig. 2e;
//! Hoe, "Improving the Start-up Behavior of a Congestion Control Scheme for TCP", SIGCOMM 1996;
//! ns-2 `tcp-newreno.cc`, §11.2).
//!
//! "During slow start, for every ACK pair whose data segments left back-to-back, compute
//! `C_i = SMSS / Δack_i`; after `n_pp = 3` samples (option) set
//! `ssthresh = median(C_i) · RTT_min / SMSS`, once." Slow start then runs (standard growth,
//! `min(N, SMSS)` per ACK) until cwnd reaches that estimate of the bottleneck's BDP, which ends
//! startup with reason `estimate`.
//!
//! The estimate measures the bottleneck's *capacity*, not the bandwidth left over by other traffic:
//! on a shared path it over-estimates ([PaSt] §5.1.2), and N flows may each compute the full
//! capacity ([HyStart]). The lab offers no accuracy guarantee (§11.3: "no accuracy test applies").
//!
//! Parameters: `n_pp` = 3 samples.

use crate::startup::{Detail, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, Dur, ExitReason, Time};

/// Configuration of [`PacketPair`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketPairConfig {
    /// `n_pp`: capacity samples before the estimate is made (at least 1).
    pub n_pp: u32,
}

impl Default for PacketPairConfig {
    fn default() -> Self {
        PacketPairConfig { n_pp: PacketPair::N_PP }
    }
}

/// Packet-pair slow start.
#[derive(Clone, Debug)]
pub struct PacketPair {
    cfg: PacketPairConfig,
    /// The previous ACK: its arrival and the send time of the newest segment it acknowledged.
    last: Option<(Time, Time)>,
    /// Capacity samples `C_i`, bytes per second (capacity `n_pp`, allocated once).
    samples: Vec<f64>,
    /// The estimated BDP in bytes, once made.
    estimate: Option<f64>,
}

impl PacketPair {
    /// `n_pp`, ALGORITHMS.md §11.3 (Hoe's least-squares fit used three ACKs).
    pub const N_PP: u32 = 3;

    /// A packet-pair slow start with `cfg`.
    pub fn new(cfg: PacketPairConfig) -> PacketPair {
        let n = cfg.n_pp.max(1);
        PacketPair { cfg: PacketPairConfig { n_pp: n }, last: None, samples: Vec::with_capacity(n as usize), estimate: None }
    }

    /// The estimated BDP in bytes, once made.
    pub fn estimate(&self) -> Option<f64> {
        self.estimate
    }

    /// The capacity sample, bytes per second, of the pair (previous ACK, this ACK arriving at `now`
    /// for `bytes`, its newest segment sent at `sent`), if both segments left back-to-back.
    fn pair_sample(&self, now: Time, sent: Time, bytes: u64) -> Option<f64> {
        let (prev_ack, prev_sent) = self.last?;
        let ack_gap = now.saturating_since(prev_ack);
        let send_gap = sent.as_nanos().checked_sub(prev_sent.as_nanos())?;
        // "whose data segments left back-to-back": both segments queued together at the
        // bottleneck, so the ACK gap is its service time. NOTE: we take a pair as back-to-back when
        // the bottleneck spread it at least twice as wide as it left the sender (the simulator's
        // pairs leave at the same instant); ns-2 guards `ack3 == ack2`, so a zero ACK gap
        // (compressed ACKs) gives no sample either.
        if ack_gap == Dur::ZERO || send_gap.saturating_mul(2) >= ack_gap.as_nanos() {
            return None;
        }
        // "C_i = SMSS / Δack_i". NOTE: we divide the bytes this ACK newly acknowledges, which is
        // SMSS for an ACK per segment; a delayed ACK spans two segments and twice the gap, and
        // SMSS / Δack would halve the estimate (the pitfall of §11.2).
        Some(bytes as f64 / ack_gap.as_secs_f64())
    }

    /// The median of the samples (the mean of the middle two for an even count).
    fn median(&self) -> f64 {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        }
    }
}

impl StartupAlgorithm for PacketPair {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let increase = ack.newly_acked.min(view.mss) as f64;
        let mut action = StartupAction::grow(increase);
        if self.estimate.is_none() {
            // The newest acknowledged segment left at `now − rtt` (the RTT sample is taken from it);
            // without a sample (Karn) the pair cannot be judged.
            let sent = ack.rtt.and_then(|rtt| ack.now.as_nanos().checked_sub(rtt.as_nanos())).map(Time);
            match sent {
                Some(sent) => {
                    if let Some(c) = self.pair_sample(ack.now, sent, ack.newly_acked) {
                        self.samples.push(c);
                    }
                    self.last = Some((ack.now, sent));
                }
                None => self.last = None,
            }
            if self.samples.len() as u32 >= self.cfg.n_pp {
                if let Some(rtt_min) = view.min_rtt {
                    // "ssthresh = median(C_i) · RTT_min / SMSS" segments, i.e. median · RTT_min bytes.
                    let estimate = self.median() * rtt_min.as_secs_f64();
                    self.estimate = Some(estimate);
                    action.set_ssthresh = Some(estimate);
                }
            }
        }
        if let Some(estimate) = self.estimate {
            // Startup ends once cwnd reaches the estimate. If the estimate is already below cwnd,
            // it stands as ssthresh (Hoe: it "only ever lowers ssthresh"); otherwise ssthresh
            // becomes the window that reached it.
            if view.cwnd >= estimate {
                action.increase = 0.0;
                action.set_ssthresh = Some(estimate);
                action.exit = Some(ExitReason::Estimate);
            } else if view.cwnd + increase >= estimate {
                action.set_ssthresh = None;
                action.exit = Some(ExitReason::Estimate);
            }
        }
        action
    }

    /// `pp_capacity`: the median capacity sample in bit/s, once `n_pp` samples were taken (what
    /// ACK compression inflates: [HyStart] Fig. 2e); `pp_samples`: the samples taken.
    fn report(&self) -> Vec<(&'static str, Detail)> {
        let mut out = vec![("pp_samples", Detail::Num(self.samples.len() as f64))];
        if self.estimate.is_some() {
            out.push(("pp_capacity", Detail::Num(self.median() * 8.0)));
        }
        out
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// `n_pp` of `startup = { algorithm = "packet-pair", ... }`.
pub const N_PP: Param<u64> = Param::integer("n_pp", "3", "n_pp: capacity samples before the estimate (0 is taken as 1)");

/// The declaration of `packet-pair` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "packet-pair",
        role: "startup",
        summary: "packet-pair slow start: C_i = bytes/ACK gap over ACK pairs whose segments left back-to-back; after n_pp samples ssthresh = median(C_i)*RTT_min, and startup ends when cwnd reaches it",
        source: "Hoe, SIGCOMM 1996; ns-2 tcp-newreno.cc; [HyStart] Fig. 2e (ALGORITHMS.md §11.2-11.3)",
        params: &[N_PP.info],
    },
    build: super::Build::Native(|p, _| super::Startup::PacketPair(PacketPair::new(PacketPairConfig {
            n_pp: p.get(&N_PP).min(u32::MAX as u64) as u32,
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
    use crate::avoidance::{Avoidance, Reno};
    use crate::startup::Startup;
    use crate::{CcConfig, Controller, Phase, Ssthresh};

    const MSS: u64 = 1000;

    fn view(cwnd_pkts: f64, min_rtt_ms: u64) -> CcView {
        CcView {
            cwnd: cwnd_pkts * MSS as f64,
            ssthresh: Ssthresh::Infinite,
            mss: MSS,
            round: 0,
            min_rtt: Some(Dur::from_millis(min_rtt_ms)),
            new_round: false,
        }
    }

    /// An ACK arriving at `now_us` for one segment sent at `sent_us`.
    fn ack(now_us: u64, sent_us: u64) -> AckEvent {
        AckEvent {
            now: Time(now_us * 1000),
            newly_acked: MSS,
            ack_seq: 0,
            snd_nxt: 0,
            rtt: Some(Dur::from_micros(now_us - sent_us)),
            ..AckEvent::default()
        }
    }

    #[test]
    fn estimate_is_the_segment_size_over_the_ack_gap_times_the_minimum_rtt() {
        // Four segments leave together at t=0; a 10 Mb/s bottleneck spaces 1000-byte segments by
        // 800 µs, so the ACKs arrive at 100.0, 100.8, 101.6, 102.4 ms.
        let mut p = PacketPair::new(PacketPairConfig::default());
        let mut last = StartupAction::default();
        for (i, t) in [100_000, 100_800, 101_600, 102_400].into_iter().enumerate() {
            last = p.on_ack(&view(4.0 + i as f64, 100), &ack(t, 0));
        }
        // C = 1000 B / 0.8 ms = 1.25 MB/s; BDP = 1.25 MB/s · 100 ms = 125 000 B = 125 segments
        // (ALGORITHMS.md §11.2's test: basertt 100 ms, gap 0.8 ms → 125 packets).
        let est = p.estimate().expect("three pairs give the estimate");
        assert!((est - 125_000.0).abs() < 1e-6, "estimate {est}");
        assert_eq!(last.set_ssthresh, Some(est));
        assert_eq!(last.exit, None, "cwnd 7 segments is below the estimate: slow start goes on");
        assert_eq!(last.increase, MSS as f64);
    }

    #[test]
    fn the_median_ignores_one_outlier() {
        // Gaps 800, 200 (ACK compression), 800 µs: samples 1.25, 5, 1.25 MB/s → median 1.25 MB/s.
        let mut p = PacketPair::new(PacketPairConfig::default());
        for (i, t) in [100_000, 100_800, 101_000, 101_800].into_iter().enumerate() {
            p.on_ack(&view(4.0 + i as f64, 100), &ack(t, 0));
        }
        assert!((p.estimate().unwrap() - 125_000.0).abs() < 1e-6);
    }

    #[test]
    fn pairs_that_did_not_leave_together_give_no_sample() {
        // Segments sent 800 µs apart arrive 800 µs apart: the sender, not the bottleneck, spaced
        // them, and nothing can be learned. Then a back-to-back pair gives one sample.
        let mut p = PacketPair::new(PacketPairConfig { n_pp: 1 });
        p.on_ack(&view(4.0, 100), &ack(100_000, 0));
        p.on_ack(&view(4.0, 100), &ack(100_800, 800));
        p.on_ack(&view(4.0, 100), &ack(101_600, 1_600));
        assert_eq!(p.estimate(), None, "paced segments are not a packet pair");
        p.on_ack(&view(4.0, 100), &ack(102_000, 1_600));
        // 1000 B / 400 µs = 2.5 MB/s; · 100 ms = 250 000 B.
        assert!((p.estimate().unwrap() - 250_000.0).abs() < 1e-6);
    }

    #[test]
    fn an_ack_without_rtt_sample_breaks_the_pair() {
        let mut p = PacketPair::new(PacketPairConfig { n_pp: 1 });
        p.on_ack(&view(4.0, 100), &ack(100_000, 0));
        let mut karn = ack(100_800, 0);
        karn.rtt = None;
        p.on_ack(&view(4.0, 100), &karn);
        p.on_ack(&view(4.0, 100), &ack(101_600, 0));
        // Only the pair (karn, third) could count, and karn's send time is unknown.
        assert_eq!(p.estimate(), None);
    }

    #[test]
    fn slow_start_ends_with_reason_estimate_when_cwnd_reaches_it() {
        let mut c = Controller::new(
            CcConfig {
                mss: MSS,
                initial_window: 4 * MSS,
                initial_ssthresh: Ssthresh::Infinite,
                loss_window: MSS,
                cwnd_validation: false,
                linux_ss_clamp: false,
            },
            Startup::PacketPair(PacketPair::new(PacketPairConfig::default())),
            Avoidance::Reno(Reno::default()),
        );
        c.on_first_send(MSS);
        // t=100 ms: four back-to-back segments are acknowledged 1 ms apart: C = 1 MB/s. The first
        // RTT sample is 100 ms, so the estimate is 1 MB/s · 100 ms = 100 000 B = 100 segments.
        let mut seq = 0;
        for i in 0..4u64 {
            seq += MSS;
            let mut a = ack(100_000 + 1000 * i, 0);
            a.ack_seq = seq;
            a.snd_nxt = 8 * MSS;
            c.on_ack(&a);
        }
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(100_000.0), "ssthresh set to the estimate once");
        assert_eq!(c.phase(), Phase::SlowStart);
        // cwnd is 8 segments; 92 more ACKs (spaced 1 ms, from segments sent later) reach 100.
        for i in 0..92u64 {
            seq += MSS;
            let mut a = ack(110_000 + 1000 * i, 10_000 + 1000 * i);
            a.ack_seq = seq;
            a.snd_nxt = seq + 100 * MSS;
            c.on_ack(&a);
        }
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
        let exit = c.startup_exit().unwrap();
        assert_eq!((exit.reason, exit.cwnd), (ExitReason::Estimate, 100_000.0));
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(100_000.0));
    }
}
