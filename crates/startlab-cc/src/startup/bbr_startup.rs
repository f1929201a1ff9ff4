//! BBR STARTUP — Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 2016; Linux `net/ipv4/tcp_bbr.c` (BBRv1); draft-ietf-ccwg-bbr (BBRv3);
//! ALGORITHMS.md §12. Only the STARTUP phase: the lab hands over to Reno or CUBIC afterwards.
//!
//! "A BBR flow starts in STARTUP, and ramps up its sending rate quickly. When it estimates the pipe
//! is full, it enters DRAIN to drain the queue" (`tcp_bbr.c`). On every ACK:
//!
//! ```text
//! BtlBw       = max of the delivery-rate samples of the last 10 rounds
//! pacing_rate = pacing_gain · BtlBw             (before the first sample: pacing_gain · IW / RTT)
//! target      = max(cwnd_gain · BtlBw · RTprop, IW, 4 segments)
//! cwnd       += min(N, target − cwnd) while cwnd < target
//! ```
//!
//! and once per round (§0.3), the "full pipe" test: "if BtlBw >= full_bw · 1.25: full_bw = BtlBw;
//! full_bw_cnt = 0 / else: full_bw_cnt += 1; if full_bw_cnt >= 3: filled_pipe = true" (§12). A full
//! pipe ends startup with reason `bandwidth-plateau`, ssthresh and cwnd set to `BtlBw · RTprop`.
//!
//! Parameters: `pacing_gain` = 2.885 (`high_gain` = 2/ln 2, Linux's 2885/1000), `cwnd_gain` = 2
//! (BBRv3's STARTUP cwnd gain; v1 uses `high_gain` for both, see the NOTE on [`BbrStartupConfig`]),
//! `full_bw_threshold` = 1.25, `full_bw_rounds` = 3. `RTprop` is the controller's minimum RTT
//! (`view.min_rtt`, never expired: a startup lasts far less than BBR's 10 s window).
//!
//! **On CE marks** (BBRv3, Linux `tcp_bbr.c` `bbr_check_ecn_too_high_in_startup`; the draft has
//! no ECN exit): its own rule ([`CeRule::OwnRule`](super::CeRule::OwnRule)). A flow is "ECN
//! eligible" once it has seen a minimum RTT of at most `ecn_max_rtt` (`bbr_ecn_max_rtt_us`, 5 ms)
//! with precise CE feedback (Linux: shallow-threshold ECN; here Accurate ECN, an L4S flow's
//! `ce_bytes`); then each round whose CE-marked fraction of the delivered bytes is at least
//! `ecn_thresh` (`bbr_ecn_thresh`, 1/2) counts, a round below it resets the count, and
//! `full_ecn_rounds` (`bbr_full_ecn_cnt`, 2) such rounds in a row end STARTUP with reason `ecn`,
//! cwnd and ssthresh at `max(BDP, bytes delivered in the last round)` (Linux: `inflight_hi =
//! max(bdp, inflight_latest)`). A classic ECE echo does not end STARTUP: BBRv3 uses ECN only
//! with that precise, shallow-threshold feedback.

use super::bbr_common::{self, EcnRounds, Pacing};
use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, Dur, ExitReason};

/// Configuration of [`BbrStartup`].
///
/// NOTE: ALGORITHMS.md §12 gives BBRv1's STARTUP cwnd gain as `high_gain` (2.885; its test vector
/// "cwnd 144 270 B" is 2.885 BDP); the lab's default is 2, BBRv3's STARTUP cwnd gain, which queues
/// less on the way up. `cwnd_gain = 2.885` gives v1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrStartupConfig {
    /// Pacing rate over the bandwidth estimate (dimensionless).
    pub pacing_gain: f64,
    /// cwnd target over the BDP estimate (dimensionless).
    pub cwnd_gain: f64,
    /// Growth of the bandwidth estimate per round that counts as "still growing" (1.25 = 25 %).
    pub full_bw_threshold: f64,
    /// Rounds in a row without that growth that fill the pipe.
    pub full_bw_rounds: u32,
    /// CE-marked fraction of a round's delivered bytes that counts as "too high" (`bbr_ecn_thresh`).
    pub ecn_thresh: f64,
    /// Rounds in a row at or above `ecn_thresh` that end STARTUP (`bbr_full_ecn_cnt`).
    pub full_ecn_rounds: u32,
    /// The largest minimum RTT at which CE marks are used (`bbr_ecn_max_rtt_us`).
    pub ecn_max_rtt: Dur,
}

impl Default for BbrStartupConfig {
    fn default() -> Self {
        BbrStartupConfig {
            pacing_gain: BbrStartup::HIGH_GAIN,
            cwnd_gain: BbrStartup::STARTUP_CWND_GAIN,
            full_bw_threshold: BbrStartup::FULL_BW_THRESH,
            full_bw_rounds: BbrStartup::FULL_BW_CNT,
            ecn_thresh: BbrStartup::ECN_THRESH,
            full_ecn_rounds: BbrStartup::FULL_ECN_CNT,
            ecn_max_rtt: BbrStartup::ECN_MAX_RTT,
        }
    }
}

/// BBR's STARTUP phase as a startup plug-in.
#[derive(Clone, Debug)]
pub struct BbrStartup {
    cfg: BbrStartupConfig,
    /// The bandwidth filter: the largest delivery-rate sample (bytes/s) of each of the last
    /// `BW_FILTER_ROUNDS` rounds, as (round, rate), in a ring indexed by round.
    bw_by_round: [Option<(u64, f64)>; BbrStartup::BW_FILTER_ROUNDS as usize],
    /// `full_bw`: the estimate (bytes/s) at the last round that grew it by the threshold; `None`
    /// before the first round ended with an estimate.
    full_bw: Option<f64>,
    /// `full_bw_cnt`: rounds since then.
    full_bw_count: u32,
    /// The initial window (bytes): cwnd on the first ACK.
    initial_window: Option<f64>,
    /// The pacing rate asked for so far.
    pacing: Pacing,
    /// STARTUP is over (the pipe filled, or a congestion signal ended it): a later slow start
    /// (after a timeout) is RFC 5681's.
    done: bool,
    /// BBRv3's per-round CE-marked fraction.
    ecn: EcnRounds,
}

impl BbrStartup {
    /// `bbr_high_gain`: "2/ln(2) ~= 2.885 is the smallest pacing_gain that allows a smoothly
    /// increasing pacing rate to double each round trip" (Linux, as 2885/1000).
    pub const HIGH_GAIN: f64 = 2.885;
    /// BBRv3's STARTUP cwnd gain (draft-ietf-ccwg-bbr `BBR.StartupCwndGain`).
    pub const STARTUP_CWND_GAIN: f64 = 2.0;
    /// `bbr_full_bw_thresh`: "if BtlBw >= full_bw · 1.25" the pipe is still filling.
    pub const FULL_BW_THRESH: f64 = 1.25;
    /// `bbr_full_bw_cnt`: rounds without that growth before the pipe counts as full.
    pub const FULL_BW_CNT: u32 = 3;
    /// BBRv3 `bbr_ecn_thresh`: "ECN mark rate" of a round that counts as too high (1/2).
    pub const ECN_THRESH: f64 = 0.5;
    /// BBRv3 `bbr_full_ecn_cnt`: rounds in a row with a too-high mark rate that end STARTUP.
    pub const FULL_ECN_CNT: u32 = 2;
    /// BBRv3 `bbr_ecn_max_rtt_us`: CE marks are used only on paths with a minimum RTT this short.
    pub const ECN_MAX_RTT: Dur = Dur::from_millis(5);
    /// Length of the bandwidth filter in rounds ("windowed max of delivery-rate samples (10 rounds)").
    pub const BW_FILTER_ROUNDS: u64 = 10;
    /// `bbr_cwnd_min_target`: "minimum cwnd 4 packets".
    pub const CWND_MIN_SEGMENTS: f64 = bbr_common::CWND_MIN_SEGMENTS;
    /// The RTT assumed for the initial pacing rate before any sample (Linux: "use nominal default
    /// RTT", `USEC_PER_MSEC`).
    pub const NOMINAL_RTT: Dur = bbr_common::NOMINAL_RTT;

    /// A BBR STARTUP with `cfg`.
    pub fn new(cfg: BbrStartupConfig) -> BbrStartup {
        BbrStartup {
            cfg,
            bw_by_round: [None; Self::BW_FILTER_ROUNDS as usize],
            full_bw: None,
            full_bw_count: 0,
            initial_window: None,
            pacing: Pacing::default(),
            done: false,
            ecn: EcnRounds::default(),
        }
    }

    /// Feeds a delivery-rate sample (bytes/s) taken in `round` to the bandwidth filter.
    fn record(&mut self, round: u64, rate: f64) {
        let slot = &mut self.bw_by_round[(round % Self::BW_FILTER_ROUNDS) as usize];
        *slot = match *slot {
            Some((r, max)) if r == round => Some((r, max.max(rate))),
            _ => Some((round, rate)),
        };
    }

    /// `BtlBw` (bytes/s): the largest sample of rounds `round − 9 ..= round`; `None` before any.
    fn max_bw(&self, round: u64) -> Option<f64> {
        self.bw_by_round
            .iter()
            .flatten()
            .filter(|(r, _)| r + Self::BW_FILTER_ROUNDS > round)
            .map(|&(_, rate)| rate)
            .reduce(f64::max)
    }

    /// The BDP estimate `BtlBw · RTprop` in bytes, once both are known.
    fn bdp(max_bw: Option<f64>, min_rtt: Option<Dur>) -> Option<f64> {
        bbr_common::bdp(max_bw, min_rtt)
    }

    /// The pacing rate after this ACK. "Initialize pacing rate to: high_gain * init_cwnd / RTT",
    /// then `pacing_gain · BtlBw`, which in STARTUP only ever raises it.
    /// NOTE: Linux keeps the larger of the two until the pipe is full (`bbr_set_pacing_rate`:
    /// "if (bbr_full_bw_reached(sk) || rate > sk->sk_pacing_rate)"); §12's formula alone would
    /// drop the rate on the first ACKs, whose samples cover one segment over one RTT.
    fn update_pacing(&mut self, iw: f64, min_rtt: Option<Dur>, max_bw: Option<f64>) -> f64 {
        self.pacing.init(self.cfg.pacing_gain, iw, min_rtt);
        self.pacing.set(max_bw.map(|bw| self.cfg.pacing_gain * bw), false)
    }

    /// The full-pipe test at a round end. Returns true when the pipe is full.
    fn full_pipe(&mut self, max_bw: f64) -> bool {
        match self.full_bw {
            // "else: full_bw_cnt += 1 ; if full_bw_cnt >= 3: filled_pipe = true"
            Some(full) if max_bw < full * self.cfg.full_bw_threshold => self.full_bw_count += 1,
            // "if BtlBw >= full_bw · 1.25: full_bw = BtlBw; full_bw_cnt = 0"
            _ => {
                self.full_bw = Some(max_bw);
                self.full_bw_count = 0;
            }
        }
        self.full_bw_count >= self.cfg.full_bw_rounds
    }

    #[cfg(test)]
    fn full_bw_count(&self) -> u32 {
        self.full_bw_count
    }
}

impl StartupAlgorithm for BbrStartup {
    fn signals(&self, out: &mut Vec<f64>) {
        // The filter's largest sample over the rounds it holds (its ring keeps the last
        // BW_FILTER_ROUNDS rounds).
        let max_bw = self.bw_by_round.iter().flatten().map(|&(_, r)| r).fold(f64::NAN, f64::max);
        out.push(max_bw);
        out.push(self.full_bw.unwrap_or(f64::NAN));
        out.push(self.full_bw_count as f64);
        out.push(self.cfg.full_bw_rounds as f64);
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let mss = view.mss as f64;
        if self.done {
            // A slow start after STARTUP ended (a timeout): RFC 5681, unpaced.
            return StartupAction::grow(ack.newly_acked.min(view.mss) as f64);
        }
        let iw = *self.initial_window.get_or_insert(view.cwnd);
        // NOTE: samples whose interval is shorter than the minimum RTT are discarded, as Linux's
        // estimator does (`tcp_rate_gen`: "interval_us < tcp_min_rtt(tp)"), since they overstate
        // the rate. The lab's samples carry no app-limited mark, so every other sample counts (BBR
        // skips the full-pipe test on app-limited ones; the lab's startup flows are bulk).
        if let Some(rate) = bbr_common::sample_rate(ack, view.min_rtt) {
            self.record(view.round, rate);
        }
        let max_bw = self.max_bw(view.round);
        let pacing_rate = self.update_pacing(iw, view.min_rtt, max_bw);

        // "cwnd target = cwnd_gain · BtlBw · RTprop"; "minimum cwnd 4 packets". Before an estimate
        // the target is the floor (Linux `bbr_bdp`: "be safe: cap at default initial cwnd").
        let floor = iw.max(Self::CWND_MIN_SEGMENTS * mss);
        let target = Self::bdp(max_bw, view.min_rtt).map_or(floor, |bdp| (self.cfg.cwnd_gain * bdp).max(floor));
        // NOTE: Linux adds all N while cwnd < target ("cwnd = cwnd + acked"), overshooting the
        // target by up to one ACK's worth, and also while fewer than 10 segments were delivered;
        // the lab stops exactly at the target, and the floor at the initial window stands in for
        // the 10-segment rule. Linux's ACK-aggregation and TSO allowances are not modelled.
        let increase = (target - view.cwnd).clamp(0.0, ack.newly_acked as f64);
        let mut action = StartupAction { increase, pacing_rate: Some(pacing_rate), ..StartupAction::default() };

        // The ACK that ends a round is counted in that round (as Linux's delivered counts).
        self.ecn.on_ack(ack.newly_acked, ack.ce_bytes);
        if view.new_round {
            let (ecn_too_high, last_round) = self.ecn.round_end(view.min_rtt, self.cfg.ecn_thresh, self.cfg.full_ecn_rounds, self.cfg.ecn_max_rtt);
            if ecn_too_high {
                self.done = true;
                // NOTE: Linux sets `full_bw_reached` and `inflight_hi = max(bdp, inflight_latest)`
                // and DRAIN follows; as for the plateau exit below, the lab sets cwnd and ssthresh.
                let w = Self::bdp(max_bw, view.min_rtt).unwrap_or(0.0).max(last_round as f64).max(Self::CWND_MIN_SEGMENTS * mss);
                action.increase = 0.0;
                action.set_cwnd = Some(w);
                action.set_ssthresh = Some(w);
                action.exit = Some(ExitReason::Ecn);
                return action;
            }
            if let Some(bw) = max_bw {
                if self.full_pipe(bw) {
                    self.done = true;
                    // NOTE: BBR enters DRAIN here (pacing at 1/high_gain until the flight is down
                    // to BtlBw · RTprop), then PROBE_BW. The lab hands over to Reno or CUBIC
                    // avoidance after startup, so DRAIN is stood in for by setting cwnd (and
                    // ssthresh) to the BDP estimate: the sender stays silent until the flight
                    // falls below it, which drains the queue STARTUP built.
                    let bdp = Self::bdp(Some(bw), view.min_rtt).map(|b| b.max(Self::CWND_MIN_SEGMENTS * mss));
                    action.increase = 0.0;
                    action.set_cwnd = bdp;
                    action.set_ssthresh = bdp;
                    action.exit = Some(ExitReason::BandwidthPlateau);
                }
            }
        }
        action
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        // NOTE: BBRv1 does not leave STARTUP on loss; BBRv3 does on "excessive" loss, with
        // constants ALGORITHMS.md §20 item 19 leaves OPEN. In the lab every loss or timeout ends
        // startup (the controller's rule; an ECN echo follows `DECL.on_ce`, BBRv3's own rule, and
        // does not come here), so STARTUP is over here.
        self.done = true;
    }
}


use crate::decl::{AlgorithmInfo, Param, Range, no_check};

/// `pacing_gain` of `startup = { algorithm = "bbr-startup", ... }`.
pub const PACING_GAIN: Param<f64> = Param::number("pacing_gain", "2.885", "high_gain = 2/ln 2: pacing rate over the bandwidth estimate; positive").range(Range::Above(0.0));

/// `cwnd_gain` of `startup = { algorithm = "bbr-startup", ... }`.
pub const CWND_GAIN: Param<f64> = Param::number("cwnd_gain", "2.0", "cwnd target over the BDP estimate; positive (2 as BBRv3's STARTUP; BBRv1 uses 2.885)").range(Range::Above(0.0));

/// `full_bw_threshold` of `startup = { algorithm = "bbr-startup", ... }`.
pub const FULL_BW_THRESHOLD: Param<f64> = Param::number("full_bw_threshold", "1.25", "full_bw_thresh: growth per round that counts as still filling the pipe; above 1").range(Range::Above(1.0));

/// `full_bw_rounds` of `startup = { algorithm = "bbr-startup", ... }`.
pub const FULL_BW_ROUNDS: Param<u64> = Param::integer("full_bw_rounds", "3", "full_bw_cnt: rounds in a row without that growth that fill the pipe; at least 1").range(Range::AtLeast(1.0));

/// `ecn_thresh` of `startup = { algorithm = "bbr-startup", ... }`.
pub const ECN_THRESH: Param<f64> = Param::number("ecn_thresh", "0.5", "BBRv3 ecn_thresh: CE-marked fraction of a round's delivered bytes that counts as too high; 0 to 1").range(Range::Between(0.0, 1.0));

/// `full_ecn_rounds` of `startup = { algorithm = "bbr-startup", ... }`.
pub const FULL_ECN_ROUNDS: Param<u64> = Param::integer("full_ecn_rounds", "2", "BBRv3 full_ecn_cnt: rounds in a row with a too-high CE fraction that end STARTUP (reason ecn); 0: never");

/// `ecn_max_rtt` of `startup = { algorithm = "bbr-startup", ... }`.
pub const ECN_MAX_RTT: Param<Dur> = Param::duration("ecn_max_rtt", "5ms", "BBRv3 ecn_max_rtt: CE marks (Accurate ECN) count only once a minimum RTT this short was seen");

/// The variables BBR's STARTUP decides on, in [`StartupAlgorithm::signals`]' order.
pub const SIGNALS: &[super::Signal] = &[
    super::Signal::new("max_bw", "bytes/s", "the bandwidth filter's estimate: the largest delivery-rate sample of the last rounds"),
    super::Signal::new("full_bw", "bytes/s", "full_bw: the estimate at the last round that grew it by 25 %"),
    super::Signal::new("full_bw_count", "rounds", "rounds since the estimate last grew by 25 %"),
    super::Signal::new("full_bw_rounds", "rounds", "the count that ends STARTUP (the pipe is full)"),
];

/// The declaration of `bbr-startup` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "bbr-startup",
        role: "startup",
        summary: "BBR STARTUP: pace at pacing_gain x max delivery rate (10-round max), grow cwnd by N up to cwnd_gain x BDP; after 3 rounds without 25% growth of the max rate, cwnd = ssthresh = BDP (reason bandwidth-plateau); BBRv3's ECN exit after 2 rounds with >= 50% CE-marked bytes (AccECN, min RTT <= 5 ms)",
        source: "Linux net/ipv4/tcp_bbr.c (BBRv1, BBRv3's ECN exit); draft-ietf-ccwg-bbr (ALGORITHMS.md §12)",
        params: &[PACING_GAIN.info, CWND_GAIN.info, FULL_BW_THRESHOLD.info, FULL_BW_ROUNDS.info, ECN_THRESH.info, FULL_ECN_ROUNDS.info, ECN_MAX_RTT.info],
    },
    build: super::Build::Native(|p, _| super::Startup::BbrStartup(BbrStartup::new(BbrStartupConfig {
            pacing_gain: p.get(&PACING_GAIN),
            cwnd_gain: p.get(&CWND_GAIN),
            full_bw_threshold: p.get(&FULL_BW_THRESHOLD),
            full_bw_rounds: p.get(&FULL_BW_ROUNDS).min(u32::MAX as u64) as u32,
            ecn_thresh: p.get(&ECN_THRESH),
            full_ecn_rounds: p.get(&FULL_ECN_ROUNDS).min(u32::MAX as u64) as u32,
            ecn_max_rtt: p.get(&ECN_MAX_RTT),
        }))),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::OwnRule,
    signals: SIGNALS,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avoidance::{Avoidance, Reno};
    use crate::startup::Startup;
    use crate::{CcConfig, Controller, Phase, RateSample, Ssthresh, Time};

    const MSS: u64 = 1000;
    /// §12's path: RTprop 40 ms.
    const RTPROP: Dur = Dur::from_millis(40);

    /// Bytes per second of `mbps` megabits per second.
    fn bps(mbps: f64) -> f64 {
        mbps * 1e6 / 8.0
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn view(cwnd: f64, round: u64, new_round: bool) -> CcView {
        CcView { cwnd, ssthresh: Ssthresh::Infinite, mss: MSS, round, min_rtt: Some(RTPROP), new_round }
    }

    /// An ACK of `acked` bytes carrying a delivery-rate sample of `rate` bytes/s (that many bytes
    /// over one second, so that the rate is exact), or none.
    fn ack(acked: u64, rate: Option<f64>) -> AckEvent {
        AckEvent {
            newly_acked: acked,
            rtt: Some(RTPROP),
            rate_sample: rate.map(|r| RateSample { delivered: r as u64, interval: Dur::from_secs(1) }),
            ..AckEvent::default()
        }
    }

    /// A round of ten one-segment ACKs, `marked` of them CE-marked (AccECN), the last ending it,
    /// on a path with minimum RTT `min_rtt`; the growing rate keeps the plateau test quiet.
    fn ce_round(b: &mut BbrStartup, round: u64, marked: u64, min_rtt: Dur) -> StartupAction {
        let mut last = StartupAction::default();
        for i in 0..10 {
            let v = CcView { min_rtt: Some(min_rtt), ..view(100_000.0, round, i == 9) };
            let a = AckEvent { ce_bytes: if i < marked { MSS } else { 0 }, ..ack(MSS, Some(bps(2.0 * round as f64))) };
            last = b.on_ack(&v, &a);
        }
        last
    }

    #[test]
    fn bbrv3_leaves_after_two_rounds_with_half_the_bytes_ce_marked_on_a_short_path() {
        let short = Dur::from_millis(2);
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        assert_eq!(ce_round(&mut b, 1, 5, short).exit, None, "one round at 1/2: count 1");
        assert_eq!(ce_round(&mut b, 2, 4, short).exit, None, "a round below 1/2 resets the count");
        assert_eq!(ce_round(&mut b, 3, 6, short).exit, None);
        let a = ce_round(&mut b, 4, 10, short);
        assert_eq!(a.exit, Some(ExitReason::Ecn), "the second round in a row at or above 1/2");
        // max(BDP, the round's 10 000 delivered bytes): the BDP estimate 8 Mb/s * 2 ms = 2000 B is smaller.
        assert_eq!((a.set_cwnd, a.set_ssthresh, a.increase), (Some(10_000.0), Some(10_000.0), 0.0));
        // On a path whose minimum RTT is above 5 ms the marks do not count (not ECN-eligible).
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        for round in 1..=4 {
            assert_eq!(ce_round(&mut b, round, 10, RTPROP).exit, None, "round {round}");
        }
    }

    #[test]
    fn a_classic_ecn_echo_does_not_end_bbr_startup_but_ends_slow_start_for_others() {
        use crate::{CongestionEvent, CongestionKind};
        let cfg = CcConfig { mss: MSS, initial_window: 10 * MSS, initial_ssthresh: Ssthresh::Infinite, loss_window: MSS, cwnd_validation: false, linux_ss_clamp: false };
        let echo = CongestionEvent { now: Time(1), kind: CongestionKind::Ecn, flight_size: 10 * MSS, enter_recovery: false };
        // bbr-startup declares its own rule: the echo changes nothing in STARTUP.
        assert_eq!(DECL.on_ce, crate::startup::CeRule::OwnRule);
        let mut c = Controller::new(cfg.clone(), Startup::BbrStartup(BbrStartup::new(BbrStartupConfig::default())), Avoidance::Reno(Reno::default()));
        c.on_congestion(&echo);
        assert_eq!((c.phase(), c.cwnd(), c.startup_exit(), c.reductions()), (Phase::SlowStart, 10.0 * MSS as f64, None, 0));
        // Slow start exits as on a loss (RFC 3168 §6.1.2): ssthresh = FlightSize/2, cwnd = ssthresh.
        assert_eq!(crate::startup::DECLS.iter().find(|d| d.info.name == "slow-start").unwrap().on_ce, crate::startup::CeRule::ExitAsLoss);
        let mut c = Controller::new(cfg, Startup::SlowStart(crate::startup::SlowStart::default()), Avoidance::Reno(Reno::default()));
        c.on_congestion(&echo);
        assert_eq!((c.phase(), c.cwnd(), c.startup_exit().map(|e| e.reason), c.reductions()), (Phase::CongestionAvoidance, 5.0 * MSS as f64, Some(ExitReason::Ecn), 1));
    }

    #[test]
    fn leaves_on_the_third_round_without_25_percent_growth() {
        // §12's vector: round maxima 2, 4, 8, 9, 9.5, 9.8 Mb/s. Rounds 1-3 each grow by 25 % or
        // more (full_bw 2, 4, 8); rounds 4, 5 and 6 stay below 10 Mb/s.
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        let maxima = [2.0, 4.0, 8.0, 9.0, 9.5, 9.8];
        for (i, mbps) in maxima.into_iter().enumerate() {
            let round = i as u64 + 1;
            // One ACK per round, the one that ends it, carrying the round's largest sample.
            let a = b.on_ack(&view(100_000.0, round, true), &ack(MSS, Some(bps(mbps))));
            let expected_count = round.saturating_sub(3) as u32;
            assert_eq!(b.full_bw_count(), expected_count, "round {round}: {mbps} Mb/s");
            if round < 6 {
                assert_eq!(a.exit, None, "round {round} must not fill the pipe yet");
            } else {
                assert_eq!(a.exit, Some(ExitReason::BandwidthPlateau), "the third round without growth fills the pipe");
                // ssthresh and cwnd become BtlBw · RTprop = 9.8 Mb/s · 40 ms = 49 000 B.
                assert!(close(a.set_ssthresh.unwrap(), 49_000.0), "ssthresh {:?}", a.set_ssthresh);
                assert!(close(a.set_cwnd.unwrap(), 49_000.0), "cwnd {:?}", a.set_cwnd);
                assert_eq!(a.increase, 0.0);
            }
        }
    }

    #[test]
    fn a_round_with_25_percent_growth_restarts_the_count() {
        // 8, 9, 9.5 (two rounds without growth), then 10 = 1.25 · 8: the count starts over, and
        // three more flat rounds are needed.
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        for (round, mbps) in [(1, 8.0), (2, 9.0), (3, 9.5), (4, 10.0), (5, 10.0), (6, 10.0)] {
            let a = b.on_ack(&view(100_000.0, round, true), &ack(MSS, Some(bps(mbps))));
            assert_eq!(a.exit, None, "round {round} must not fill the pipe");
        }
        let a = b.on_ack(&view(100_000.0, 7, true), &ack(MSS, Some(bps(10.0))));
        assert_eq!(a.exit, Some(ExitReason::BandwidthPlateau), "rounds 5, 6, 7 did not grow on 10 Mb/s");
    }

    #[test]
    fn only_round_ends_count_towards_the_full_pipe() {
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        b.on_ack(&view(100_000.0, 1, true), &ack(MSS, Some(bps(10.0))));
        for _ in 0..10 {
            let a = b.on_ack(&view(100_000.0, 1, false), &ack(MSS, Some(bps(10.0))));
            assert_eq!(a.exit, None, "ACKs inside a round never run the full-pipe test");
        }
        assert_eq!(b.full_bw_count(), 0);
    }

    #[test]
    fn paces_at_the_gain_times_the_bandwidth_estimate() {
        // §12: BtlBw 10 Mb/s → STARTUP pacing 28.85 Mb/s.
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        let a = b.on_ack(&view(10_000.0, 0, false), &ack(MSS, Some(bps(10.0))));
        assert!(close(a.pacing_rate.unwrap(), bps(28.85)), "pacing {:?} B/s, expected 28.85 Mb/s", a.pacing_rate);
        // A bigger sample raises the rate; the estimate is the maximum, so a smaller one keeps it.
        let a = b.on_ack(&view(10_000.0, 0, false), &ack(MSS, Some(bps(20.0))));
        assert!(close(a.pacing_rate.unwrap(), 2.885 * bps(20.0)));
        let a = b.on_ack(&view(10_000.0, 1, false), &ack(MSS, Some(bps(5.0))));
        assert!(close(a.pacing_rate.unwrap(), 2.885 * bps(20.0)), "the max filter keeps 20 Mb/s");
    }

    #[test]
    fn paces_from_the_initial_window_until_the_estimate_exceeds_it() {
        // IW 10 000 B over RTprop 40 ms: 250 kB/s, times 2.885 = 721 250 B/s. A first sample of one
        // segment over one RTT (25 kB/s) would pace at 72 kB/s; Linux keeps the larger rate.
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        let a = b.on_ack(&view(10_000.0, 0, false), &ack(MSS, Some(25_000.0)));
        assert!(close(a.pacing_rate.unwrap(), 721_250.0), "pacing {:?}", a.pacing_rate);
        let a = b.on_ack(&view(11_000.0, 0, false), &ack(MSS, Some(500_000.0)));
        assert!(close(a.pacing_rate.unwrap(), 2.885 * 500_000.0), "the estimate now paces");
    }

    #[test]
    fn paces_over_one_millisecond_without_an_rtt_sample() {
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        let v = CcView { min_rtt: None, ..view(10_000.0, 0, false) };
        let a = b.on_ack(&v, &ack(MSS, None));
        assert!(close(a.pacing_rate.unwrap(), 2.885 * 10_000.0 / 0.001), "IW over the nominal 1 ms");
        // The first RTT sample re-initialises it (Linux `has_seen_rtt`): 2.885 · 10 kB / 40 ms.
        let a = b.on_ack(&view(10_000.0, 0, false), &ack(MSS, None));
        assert!(close(a.pacing_rate.unwrap(), 721_250.0), "pacing {:?}", a.pacing_rate);
    }

    #[test]
    fn grows_cwnd_by_the_acked_bytes_up_to_the_target_and_not_beyond() {
        // BtlBw 10 Mb/s, RTprop 40 ms: BDP 50 000 B, target 2 · BDP = 100 000 B. ACKs of 20 000 B
        // each: 10 000 → 30 000 → 50 000 → 70 000 → 90 000 → (+10 000, clamped) 100 000 → stays.
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        let mut cwnd = 10_000.0;
        let mut steps = Vec::new();
        for _ in 0..7 {
            let a = b.on_ack(&view(cwnd, 0, false), &ack(20_000, Some(bps(10.0))));
            cwnd += a.increase;
            steps.push(cwnd);
        }
        let target = 2.0 * bps(10.0) * RTPROP.as_secs_f64();
        assert!(close(target, 100_000.0));
        assert_eq!(&steps[..4], &[30_000.0, 50_000.0, 70_000.0, 90_000.0], "each ACK adds N below the target");
        assert!(steps[4..].iter().all(|&w| close(w, 100_000.0)), "cwnd stops at the target: {steps:?}");
    }

    #[test]
    fn a_v1_cwnd_gain_gives_section_12s_target() {
        // §12: "cwnd 144 270 B" for BtlBw 10 Mb/s, RTprop 40 ms with high_gain as the cwnd gain.
        let cfg = BbrStartupConfig { cwnd_gain: 2.8854, ..BbrStartupConfig::default() };
        let mut b = BbrStartup::new(cfg);
        let a = b.on_ack(&view(144_000.0, 0, false), &ack(MSS, Some(bps(10.0))));
        assert!(close(a.increase, 270.0), "grows to 144 270 B: increase {}", a.increase);
    }

    #[test]
    fn the_target_never_falls_below_the_initial_window_or_four_segments() {
        // A tiny estimate (1 kB/s · 40 ms = 40 B): the initial window (10 000 B) is the target.
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        assert_eq!(b.on_ack(&view(10_000.0, 0, false), &ack(MSS, Some(1_000.0))).increase, 0.0);
        assert_eq!(b.on_ack(&view(9_000.0, 0, false), &ack(MSS, Some(1_000.0))).increase, 1_000.0, "back to the IW");
        // An initial window of 2 segments: the floor is 4 segments.
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        let mut cwnd = 2_000.0;
        for _ in 0..4 {
            cwnd += b.on_ack(&view(cwnd, 0, false), &ack(MSS, Some(1_000.0))).increase;
        }
        assert_eq!(cwnd, 4_000.0, "grows to 4 segments and stops");
    }

    #[test]
    fn the_bandwidth_estimate_forgets_samples_older_than_ten_rounds() {
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        b.record(1, 100.0);
        b.record(2, 50.0);
        assert_eq!(b.max_bw(10), Some(100.0), "round 1 is within rounds 1..=10");
        assert_eq!(b.max_bw(11), Some(50.0), "round 1 left the window");
        assert_eq!(b.max_bw(12), None, "nothing within rounds 3..=12");
        b.record(11, 70.0);
        assert_eq!(b.max_bw(11), Some(70.0), "round 11 reuses round 1's slot");
    }

    #[test]
    fn samples_shorter_than_the_minimum_rtt_are_ignored() {
        let mut b = BbrStartup::new(BbrStartupConfig::default());
        let mut a = ack(MSS, None);
        // 10 kB over 10 ms (1 MB/s) when no RTT below 40 ms was ever seen.
        a.rate_sample = Some(RateSample { delivered: 10_000, interval: Dur::from_millis(10) });
        b.on_ack(&view(10_000.0, 0, false), &a);
        assert_eq!(b.max_bw(0), None);
    }

    #[test]
    fn the_controller_applies_the_exit_with_the_bdp_as_cwnd_and_ssthresh() {
        let mut c = Controller::new(
            CcConfig {
                mss: MSS,
                initial_window: 10 * MSS,
                initial_ssthresh: Ssthresh::Infinite,
                loss_window: MSS,
                cwnd_validation: false,
                linux_ss_clamp: false,
            },
            Startup::BbrStartup(BbrStartup::new(BbrStartupConfig::default())),
            Avoidance::Reno(Reno::default()),
        );
        // One ACK per round (seq = 100 kB · k, half a flight more outstanding), with a flat
        // 10 Mb/s sample: ACK 1 fixes the first round's end, ACKs 2-5 end rounds 1-4; round 1
        // sets full_bw and rounds 2, 3, 4 do not grow it.
        for k in 1..=5u64 {
            assert_eq!(c.phase(), Phase::SlowStart, "still in STARTUP before ACK {k}");
            let seq = 100_000 * k;
            c.on_ack(&AckEvent {
                now: Time(k * 40_000_000),
                ack_seq: seq,
                snd_nxt: seq + 50_000,
                delivered: seq,
                ..ack(MSS, Some(bps(10.0)))
            });
            assert!(c.pacing_rate().is_none_or(|r| close(r, bps(28.85))), "pacing {:?}", c.pacing_rate());
        }
        let exit = c.startup_exit().expect("the pipe filled");
        assert_eq!(exit.reason, ExitReason::BandwidthPlateau);
        assert_eq!(exit.time, Time(5 * 40_000_000), "ACK 1 fixes the first round's end; ACKs 2-5 end rounds 1-4");
        assert!(close(c.cwnd(), 50_000.0), "cwnd = BDP, got {}", c.cwnd());
        assert!(close(c.ssthresh().as_f64(), 50_000.0));
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
        assert_eq!(c.pacing_rate(), None, "pacing ends with startup");
    }
}
