//! BBRv3's whole startup: STARTUP, then DRAIN, then the hand-over to the flow's avoidance.
//! Sources: draft-ietf-ccwg-bbr-06 (6 July 2026) §5.3.1 (Startup), §5.3.2 (Drain), §5.6.2 (pacing
//! rate), §5.6.4 (cwnd); Google's BBRv3, `net/ipv4/tcp_bbr.c` of github.com/google/bbr
//! (`BBR_VERSION 3`, commit 001a430b3ddb): `bbr_check_full_bw_reached`,
//! `bbr_check_loss_too_high_in_startup`, `bbr_check_ecn_too_high_in_startup`, `bbr_check_drain`.
//! docs/algorithms/bbrv3.md says what each source gives, what the lab resolved and where it departs.
//!
//! ```text
//! STARTUP  pacing = 2.77 · max_bw · 0.99 (never lowered), cwnd += N while cwnd < 2 · BDP
//!          (or less than IW delivered); max_bw = the largest delivery-rate sample so far
//!   ends   (a) full pipe: 3 round ends whose delivery rate grew less than 25 %
//!          (b) loss: at a round end one round into a loss recovery (ridden out, no reduction),
//!              >= 6 discontiguous ranges lost in the round and lost > 2 % of its data;
//!              inflight_hi = max(BDP, inflight_latest)
//!          (c) ECN: 2 rounds in a row with >= 50 % of the delivered bytes CE-marked (AccECN,
//!              min RTT <= 5 ms); inflight_hi likewise
//! DRAIN    pacing = 0.5 · max_bw · 0.99, cwnd = min(cwnd + N, 2 · BDP)
//!   ends   when FlightSize <= Inflight(1.0) = max(BDP, 4 segments), or 3 rounds after it began
//! hand-over: cwnd = ssthresh = Inflight(1.0); the exit reason names STARTUP's end
//!          (bandwidth-plateau, loss or ecn); the flow's avoidance (Reno, CUBIC, Prague) goes on
//!          (the lab has no ProbeBW).
//! ```

use super::bbr_common::{self, EcnRounds, Pacing};
use crate::startup::{Detail, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, Dur, ExitReason, Time};

/// How the full-pipe estimator reads the delivery rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullBwCheck {
    /// draft-ietf-ccwg-bbr-06 `CheckFullBWReached`: once per round, on the round's last ACK,
    /// that ACK's delivery-rate sample against `full_bw · 1.25`.
    RoundEnd,
    /// Linux `bbr_check_full_bw_reached`: any ACK's sample at or above `full_bw · 1.25` restarts
    /// the count (and becomes `full_bw`); a round end without one counts.
    EveryAck,
}

/// Configuration of [`BbrV3`]; the defaults are draft-ietf-ccwg-bbr-06's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrV3Config {
    /// `BBR.StartupPacingGain` (4 ln 2 ≈ 2.77).
    pub pacing_gain: f64,
    /// `BBR.DefaultCwndGain`, STARTUP's and DRAIN's cwnd gain (2).
    pub cwnd_gain: f64,
    /// `BBR.DrainPacingGain` (draft 0.5; Linux `bbr_drain_gain` 1/2.885).
    pub drain_pacing_gain: f64,
    /// DRAIN ends at the latest this many rounds after it began (draft `CheckDrainDone`: 3);
    /// 0: no limit (Linux).
    pub drain_max_rounds: u32,
    /// `BBR.PacingMarginPercent` as a fraction (1 %).
    pub pacing_margin: f64,
    /// Growth of the delivery rate per round that counts as "still growing" (1.25).
    pub full_bw_threshold: f64,
    /// Rounds without that growth that fill the pipe (3).
    pub full_bw_rounds: u32,
    /// Which delivery-rate samples the full-pipe estimator reads.
    pub full_bw_check: FullBwCheck,
    /// `BBR.LossThresh`: a round's lost fraction above which loss is excessive (2 %).
    pub loss_thresh: f64,
    /// `BBRStartupFullLossCnt`: discontiguous lost ranges a round needs (6); 0: no loss exit.
    pub full_loss_cnt: u32,
    /// `bbr_ecn_thresh`: a round's CE-marked fraction that counts as too high (1/2).
    pub ecn_thresh: f64,
    /// `bbr_full_ecn_cnt`: rounds in a row at or above it that end STARTUP (2); 0: no ECN exit.
    pub full_ecn_rounds: u32,
    /// `bbr_ecn_max_rtt_us`: CE marks count once a minimum RTT this short was seen (5 ms).
    pub ecn_max_rtt: Dur,
    /// `BBR.MinPipeCwnd` in segments (4).
    pub min_pipe_segments: f64,
}

impl Default for BbrV3Config {
    fn default() -> Self {
        BbrV3Config {
            pacing_gain: 2.77,
            cwnd_gain: 2.0,
            drain_pacing_gain: 0.5,
            drain_max_rounds: 3,
            pacing_margin: 0.01,
            full_bw_threshold: 1.25,
            full_bw_rounds: 3,
            full_bw_check: FullBwCheck::RoundEnd,
            loss_thresh: 0.02,
            full_loss_cnt: 6,
            ecn_thresh: 0.5,
            full_ecn_rounds: 2,
            ecn_max_rtt: Dur::from_millis(5),
            min_pipe_segments: bbr_common::CWND_MIN_SEGMENTS,
        }
    }
}

/// Where the startup is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// STARTUP.
    Startup,
    /// DRAIN: STARTUP ended for `reason` in round `round`.
    Drain { reason: ExitReason, round: u64 },
    /// Handed over (or ended by a timeout): a later slow start is RFC 5681's.
    Done,
}

/// BBRv3's STARTUP and DRAIN as a startup plug-in.
#[derive(Clone, Debug)]
pub struct BbrV3 {
    cfg: BbrV3Config,
    mode: Mode,
    /// The initial window (bytes): cwnd on the first ACK.
    initial_window: Option<f64>,
    /// `BBR.max_bw` (bytes/s): the largest sample so far (the draft's and Linux's filter only
    /// advances in ProbeBW, so in STARTUP and DRAIN it is a running maximum).
    max_bw: Option<f64>,
    pacing: Pacing,
    /// `BBR.full_bw` (bytes/s) and `BBR.full_bw_count`.
    full_bw: f64,
    full_bw_count: u32,
    /// A round ended and its full-pipe test waits for an ACK with a valid sample (in Linux an
    /// ACK without one starts no round).
    full_bw_due: bool,
    ecn: EcnRounds,
    /// `BBR.inflight_latest` (bytes): the largest `RS.delivered` of the round.
    inflight_latest: u64,
    /// Delivered bytes (`AckEvent::delivered`) at the current round's start.
    round_start_delivered: u64,
    /// Bytes retransmitted in the current round, and their discontiguous ranges.
    round_lost: u64,
    round_ranges: u32,
    /// One past the last retransmitted byte: a retransmission starting there continues a range.
    last_rtx_end: Option<u64>,
    /// The completed rounds when the loss recovery being ridden out began.
    recovery_round: Option<u64>,
    /// `BBR.inflight_longterm` after a loss or ECN exit (bytes).
    inflight_hi: Option<f64>,
    /// For the results: the window handed over, DRAIN's rounds and how it ended.
    handover: Option<f64>,
    drain_rounds: Option<u64>,
    drain_end: &'static str,
    drain_start: Option<Time>,
}

impl BbrV3 {
    /// A BBRv3 startup with `cfg`.
    pub fn new(cfg: BbrV3Config) -> BbrV3 {
        BbrV3 {
            cfg,
            mode: Mode::Startup,
            initial_window: None,
            max_bw: None,
            pacing: Pacing::default(),
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_due: false,
            ecn: EcnRounds::default(),
            inflight_latest: 0,
            round_start_delivered: 0,
            round_lost: 0,
            round_ranges: 0,
            last_rtx_end: None,
            recovery_round: None,
            inflight_hi: None,
            handover: None,
            drain_rounds: None,
            drain_end: "none",
            drain_start: None,
        }
    }

    /// `BDPMultiple(gain)`: `gain · max_bw · min_rtt`, the initial window before an RTT sample.
    fn bdp_multiple(&self, gain: f64, min_rtt: Option<Dur>) -> f64 {
        match min_rtt {
            None => self.initial_window.unwrap_or(0.0),
            Some(_) => gain * bbr_common::bdp(self.max_bw, min_rtt).unwrap_or(0.0),
        }
    }

    /// `Inflight(gain)` = `QuantizationBudget(BDPMultiple(gain))`: at least `BBR.MinPipeCwnd`.
    fn inflight(&self, gain: f64, view: &CcView) -> f64 {
        self.bdp_multiple(gain, view.min_rtt).max(self.cfg.min_pipe_segments * view.mss as f64)
    }

    /// The full-pipe estimator on one ACK whose sample is `sample` (bytes/s). True when the pipe
    /// is found full.
    fn full_bw_reached(&mut self, sample: Option<f64>) -> bool {
        let Some(s) = sample else { return false };
        let grew = s >= self.full_bw * self.cfg.full_bw_threshold;
        let any_ack = self.cfg.full_bw_check == FullBwCheck::EveryAck;
        if grew && (any_ack || self.full_bw_due) {
            // Still growing: a new baseline, and the count starts over.
            self.full_bw = s;
            self.full_bw_count = 0;
        } else if self.full_bw_due {
            self.full_bw_count += 1;
        }
        self.full_bw_due = false;
        self.full_bw_count >= self.cfg.full_bw_rounds
    }

    /// The round that just ended had excessive loss (checked one round into a loss recovery).
    fn loss_too_high(&self, round: u64, delivered: u64) -> bool {
        let into_recovery = self.recovery_round.is_some_and(|r| round > r);
        let data = (delivered + self.round_lost) as f64;
        into_recovery && self.cfg.full_loss_cnt > 0 && self.round_ranges >= self.cfg.full_loss_cnt && self.round_lost as f64 > self.cfg.loss_thresh * data
    }

    /// STARTUP ends at `now`: DRAIN begins.
    fn enter_drain(&mut self, reason: ExitReason, view: &CcView, now: Time) {
        if reason != ExitReason::BandwidthPlateau {
            // §5.3.1.3, and Linux's `bbr_handle_queue_too_high_in_startup` for ECN as well: the
            // larger of the BDP and the round's largest delivered volume.
            self.inflight_hi = Some(self.inflight(1.0, view).max(self.inflight_latest as f64));
        }
        self.mode = Mode::Drain { reason, round: view.round };
        self.drain_start = Some(now);
    }

    /// The work of one ACK, in or out of a recovery that startup rides out.
    fn step(&mut self, view: &CcView, ack: &AckEvent, in_recovery: bool) -> StartupAction {
        let mss = view.mss as f64;
        let iw = *self.initial_window.get_or_insert(view.cwnd);
        let sample = bbr_common::sample_rate(ack, view.min_rtt);
        if let Some(s) = sample {
            self.max_bw = Some(self.max_bw.map_or(s, |m| m.max(s)));
            self.inflight_latest = self.inflight_latest.max(ack.rate_sample.map_or(0, |rs| rs.delivered));
        }
        self.ecn.on_ack(ack.newly_acked, ack.ce_bytes);

        // The model at a round's end: ECN (Linux checks it as the round starts), then loss.
        if view.new_round {
            self.full_bw_due = true;
            let (ecn_high, _) = self.ecn.round_end(view.min_rtt, self.cfg.ecn_thresh, self.cfg.full_ecn_rounds, self.cfg.ecn_max_rtt);
            let delivered = ack.delivered.saturating_sub(self.round_start_delivered);
            if self.mode == Mode::Startup {
                if ecn_high {
                    self.enter_drain(ExitReason::Ecn, view, ack.now);
                } else if in_recovery && self.loss_too_high(view.round, delivered) {
                    self.enter_drain(ExitReason::Loss, view, ack.now);
                }
            }
            self.round_start_delivered = ack.delivered;
            self.round_lost = 0;
            self.round_ranges = 0;
        }
        if self.mode == Mode::Startup && self.full_bw_reached(sample) {
            self.enter_drain(ExitReason::BandwidthPlateau, view, ack.now);
        } else if self.mode != Mode::Startup {
            self.full_bw_due = false;
        }
        if view.new_round {
            // `AdvanceLatestDeliverySignals`: the next round's maximum starts from this sample.
            self.inflight_latest = sample.and(ack.rate_sample).map_or(0, |rs| rs.delivered);
        }

        // `CheckDrainDone`: the flight is down to the BDP, or DRAIN has lasted long enough.
        if let Mode::Drain { reason, round, .. } = self.mode {
            let target = self.inflight(1.0, view);
            let by_rounds = self.cfg.drain_max_rounds > 0 && view.round > round + self.cfg.drain_max_rounds as u64;
            if ack.flight_size as f64 <= target || by_rounds {
                self.mode = Mode::Done;
                self.handover = Some(target);
                self.drain_rounds = Some(view.round - round);
                self.drain_end = if ack.flight_size as f64 <= target { "inflight" } else { "rounds" };
                return StartupAction { set_cwnd: Some(target), set_ssthresh: Some(target), exit: Some(reason), ..StartupAction::default() };
            }
        }

        // `SetPacingRate`: STARTUP only ever raises the rate; DRAIN sets it.
        self.pacing.init(self.cfg.pacing_gain, iw, view.min_rtt);
        let (gain, full) = match self.mode {
            Mode::Startup => (self.cfg.pacing_gain, false),
            _ => (self.cfg.drain_pacing_gain, true),
        };
        let rate = self.pacing.set(self.max_bw.map(|bw| gain * bw * (1.0 - self.cfg.pacing_margin)), full);
        let mut action = StartupAction { pacing_rate: Some(rate), ..StartupAction::default() };
        if in_recovery {
            return action;
        }

        // `SetCwnd` with `BBR.max_inflight = QuantizationBudget(BDPMultiple(cwnd_gain))`.
        let max_inflight = self.inflight(self.cfg.cwnd_gain, view);
        let n = ack.newly_acked as f64;
        let mut cwnd = view.cwnd;
        match self.mode {
            // Before the pipe is full: all of N while below max_inflight or before an IW was delivered.
            Mode::Startup if cwnd < max_inflight || (ack.delivered as f64) < iw => action.increase = n,
            Mode::Startup => {}
            // Once the pipe is full: cwnd + N, at most max_inflight.
            _ if cwnd > max_inflight => {
                action.set_cwnd = Some(max_inflight);
                cwnd = max_inflight;
            }
            _ => action.increase = n.min(max_inflight - cwnd),
        }
        let floor = self.cfg.min_pipe_segments * mss;
        if cwnd + action.increase < floor {
            action.set_cwnd = Some(floor);
            action.increase = 0.0;
        }
        action
    }

    #[cfg(test)]
    fn counts(&self) -> (u32, u64, u32) {
        (self.full_bw_count, self.round_lost, self.round_ranges)
    }
}

impl StartupAlgorithm for BbrV3 {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        if self.mode == Mode::Done {
            // A slow start after a timeout: RFC 5681, unpaced.
            return StartupAction::grow(ack.newly_acked.min(view.mss) as f64);
        }
        self.recovery_round = None;
        self.step(view, ack, false)
    }

    fn keeps_startup_on_loss(&self) -> bool {
        true
    }

    fn on_recovery_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        if self.mode == Mode::Done {
            return StartupAction::default();
        }
        self.step(view, ack, true)
    }

    fn on_retransmit(&mut self, seq: u64, len: u64) {
        self.round_lost += len;
        if self.last_rtx_end != Some(seq) {
            self.round_ranges += 1;
        }
        self.last_rtx_end = Some(seq + len);
    }

    fn on_congestion(&mut self, view: &CcView, ev: &CongestionEvent) {
        if ev.kind == CongestionKind::FastRetransmit && ev.enter_recovery {
            // The controller rides the recovery out (`keeps_startup_on_loss`).
            self.recovery_round = Some(view.round);
        } else {
            // A timeout (or Tahoe's fast retransmit) ends startup: the lab's rule.
            self.mode = Mode::Done;
        }
    }

    fn report(&self) -> Vec<(&'static str, Detail)> {
        let mut out = vec![("bbrv3_drain_end", Detail::Text(self.drain_end))];
        if let Some(bw) = self.max_bw {
            out.push(("bbrv3_max_bw_bps", Detail::Num(8.0 * bw)));
        }
        if let Some(t) = self.drain_start {
            out.push(("bbrv3_drain_start", Detail::Num(t.as_secs_f64())));
        }
        if let Some(r) = self.drain_rounds {
            out.push(("bbrv3_drain_rounds", Detail::Num(r as f64)));
        }
        if let Some(w) = self.handover {
            out.push(("bbrv3_handover_window", Detail::Num(w)));
        }
        if let Some(w) = self.inflight_hi {
            out.push(("bbrv3_inflight_hi", Detail::Num(w)));
        }
        out
    }
}

use crate::decl::{AlgorithmInfo, Param, Range};

/// `pacing_gain` of `startup = { algorithm = "bbrv3", ... }`.
pub const PACING_GAIN: Param<f64> = Param::number("pacing_gain", "2.77", "BBR.StartupPacingGain (4 ln 2): STARTUP's pacing rate over max_bw; positive").range(Range::Above(0.0));
/// `cwnd_gain`.
pub const CWND_GAIN: Param<f64> = Param::number("cwnd_gain", "2.0", "BBR.DefaultCwndGain: cwnd target over the BDP in STARTUP and DRAIN; positive").range(Range::Above(0.0));
/// `drain_pacing_gain`.
pub const DRAIN_PACING_GAIN: Param<f64> = Param::number("drain_pacing_gain", "0.5", "BBR.DrainPacingGain: DRAIN's pacing rate over max_bw (Linux bbr_drain_gain: 0.3466); between 0 and 1, both excluded").range(Range::StrictlyBetween(0.0, 1.0));
/// `drain_max_rounds`.
pub const DRAIN_MAX_ROUNDS: Param<u64> = Param::integer("drain_max_rounds", "3", "CheckDrainDone: DRAIN ends at the latest this many rounds after it began; 0: only when the flight is down to the BDP (Linux)");
/// `pacing_margin`.
pub const PACING_MARGIN: Param<f64> = Param::number("pacing_margin", "0.01", "BBR.PacingMarginPercent as a fraction: pace this much below gain x max_bw; 0 to 0.5").range(Range::Between(0.0, 0.5));
/// `full_bw_threshold`.
pub const FULL_BW_THRESHOLD: Param<f64> = Param::number("full_bw_threshold", "1.25", "growth of the delivery rate per round that counts as still filling the pipe; above 1").range(Range::Above(1.0));
/// `full_bw_rounds`.
pub const FULL_BW_ROUNDS: Param<u64> = Param::integer("full_bw_rounds", "3", "round ends without that growth that fill the pipe; at least 1").range(Range::AtLeast(1.0));
/// `full_bw_check`.
pub const FULL_BW_CHECK: Param<&'static str> = Param::choice("full_bw_check", &["round-end", "every-ack"], "round-end", "round-end: the sample of each round's last ACK against full_bw (draft CheckFullBWReached); every-ack: any ACK's sample can restart the count, round ends count (Linux bbr_check_full_bw_reached)");
/// `loss_thresh`.
pub const LOSS_THRESH: Param<f64> = Param::number("loss_thresh", "0.02", "BBR.LossThresh: lost fraction of a round's data above which loss is excessive; between 0 and 1, both excluded").range(Range::StrictlyBetween(0.0, 1.0));
/// `full_loss_cnt`.
pub const FULL_LOSS_CNT: Param<u64> = Param::integer("full_loss_cnt", "6", "BBRStartupFullLossCnt: discontiguous lost ranges a round of loss recovery needs to end STARTUP (reason loss); 0: never");
/// `ecn_thresh`.
pub const ECN_THRESH: Param<f64> = Param::number("ecn_thresh", "0.5", "bbr_ecn_thresh: CE-marked fraction of a round's delivered bytes that counts as too high; 0 to 1").range(Range::Between(0.0, 1.0));
/// `full_ecn_rounds`.
pub const FULL_ECN_ROUNDS: Param<u64> = Param::integer("full_ecn_rounds", "2", "bbr_full_ecn_cnt: rounds in a row with a too-high CE fraction that end STARTUP (reason ecn); 0: never");
/// `ecn_max_rtt`.
pub const ECN_MAX_RTT: Param<Dur> = Param::duration("ecn_max_rtt", "5ms", "bbr_ecn_max_rtt_us: CE marks (Accurate ECN) count only once a minimum RTT this short was seen");
/// `min_pipe_cwnd`.
pub const MIN_PIPE_CWND: Param<u64> = Param::window("min_pipe_cwnd", "4pkt", "BBR.MinPipeCwnd: the smallest cwnd and hand-over window; positive").range(Range::Above(0.0));

/// The declaration of `bbrv3` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "bbrv3",
        role: "startup",
        summary: "BBRv3's STARTUP and DRAIN: pace at 2.77 x max delivery rate, cwnd up to 2 BDP; STARTUP ends on a full pipe (3 rounds < 25% growth), excessive loss (>2% and 6 lost ranges in a round of recovery, ridden out without reduction) or ECN (2 rounds >= 50% CE, AccECN); DRAIN paces at 0.5 x until FlightSize <= BDP (or 3 rounds), then cwnd = ssthresh = BDP",
        source: "draft-ietf-ccwg-bbr-06 §5.3.1-5.3.2; Linux tcp_bbr.c BBRv3 (github.com/google/bbr v3)",
        params: &[
            PACING_GAIN.info, CWND_GAIN.info, DRAIN_PACING_GAIN.info, DRAIN_MAX_ROUNDS.info, PACING_MARGIN.info, FULL_BW_THRESHOLD.info, FULL_BW_ROUNDS.info,
            FULL_BW_CHECK.info, LOSS_THRESH.info, FULL_LOSS_CNT.info, ECN_THRESH.info, FULL_ECN_ROUNDS.info, ECN_MAX_RTT.info, MIN_PIPE_CWND.info,
        ],
    },
    build: super::Build::Native(|p, cx| {
        let rounds = |x: u64| x.min(u32::MAX as u64) as u32;
        super::Startup::BbrV3(BbrV3::new(BbrV3Config {
            pacing_gain: p.get(&PACING_GAIN),
            cwnd_gain: p.get(&CWND_GAIN),
            drain_pacing_gain: p.get(&DRAIN_PACING_GAIN),
            drain_max_rounds: rounds(p.get(&DRAIN_MAX_ROUNDS)),
            pacing_margin: p.get(&PACING_MARGIN),
            full_bw_threshold: p.get(&FULL_BW_THRESHOLD),
            full_bw_rounds: rounds(p.get(&FULL_BW_ROUNDS)),
            full_bw_check: if p.get(&FULL_BW_CHECK) == "every-ack" { FullBwCheck::EveryAck } else { FullBwCheck::RoundEnd },
            loss_thresh: p.get(&LOSS_THRESH),
            full_loss_cnt: rounds(p.get(&FULL_LOSS_CNT)),
            ecn_thresh: p.get(&ECN_THRESH),
            full_ecn_rounds: rounds(p.get(&FULL_ECN_ROUNDS)),
            ecn_max_rtt: p.get(&ECN_MAX_RTT),
            min_pipe_segments: p.get(&MIN_PIPE_CWND) as f64 / cx.mss.max(1) as f64,
        }))
    }),
    check: crate::decl::no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::OwnRule,
    signals: &[],
};

#[cfg(test)]
#[path = "bbrv3_tests.rs"]
mod tests;
