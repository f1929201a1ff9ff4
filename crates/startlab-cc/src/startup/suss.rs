//! SUSS, "Speeding Up Slow Start" (Arghavani, Zhang, Eyers & Arghavani, ACM SIGCOMM 2024): an
//! add-on to CUBIC's slow start and HyStart in Linux. While the ACK clock says that the pipe will
//! not be full next round, a round grows cwnd fourfold instead of twofold, and the extra data is
//! paced over the round. Written from the paper's abstract and the authors' Linux 6.8 patch
//! (github.com/SUSSdeveloper/SUSS, commit b7e4456 of 2025-01-23, `tcp_cubic.c`: `suss_measurements`,
//! `suss_speedup`, `suss_cap`, the lines marked E1–E12; `tcp_input.c` C1–C3; `tcp_output.c` D1);
//! docs/algorithms/suss.md says what the sources leave open and how it is resolved here.
//!
//! HyStart is [`HyStartLinux`], by composition: its rounds, delay test and parameters are the
//! `hystart-linux` plug-in's. While SUSS is on, its own ACK-train test takes the place of
//! HyStart's (`suss_cap`); once SUSS is off (round 2 said no, a paced flow, a congestion signal)
//! HyStart runs as `hystart-linux` does.
//!
//! The ACK train of a round (SUSS counts its own rounds: a round starts on the first ACK beyond
//! the SND.NXT of the previous round's start) has a *blue* part, the ACKs of the data the previous
//! round's blue ACKs clocked out (`IW·2^(r−2)` segments in round `r`, the initial window in round
//! 2), and a *red* part, the ACKs of the data paced in the previous round. On the ACK that
//! completes the blue part:
//! * `ΔtBAT` = the blue train's duration, extrapolated from the segments acknowledged before that
//!   ACK: `blue·elapsed / (2·acked before it)`, with `blue = IW·2^(r−1)`;
//! * round 2 speeds up if `delay_min > min_rtt` (10 ms) and `ΔtBAT < delay_min/4`; otherwise SUSS is
//!   off for the connection;
//! * round `r ≥ 3` speeds up if the next round's train, predicted from the growth of the whole
//!   train (`Δt = ΔtBAT·2^(r−2)`, `Δt_prev = ΔtBAT_prev·2^(r−3)`, prediction `Δt²/Δt_prev`), fits
//!   in `delay_min`, `r < accelerated_rounds + 2`, and the round's minimum RTT has not risen:
//!   `(k+1)·curr_rtt ≤ (k+1)·delay_min + delay_margin·k·delay_min` with `k` the rounds since
//!   `delay_min` last fell; once a round says no, no later round speeds up;
//! * speeding up: `red = blue·(2^(r−1) − 1)` more segments this round, paced at `red·SMSS /
//!   (delay_min·(1 − 2^−(r−1)))` from `(delay_min/2^(r−1) − ΔtBAT)/2` after that ACK (the guard),
//!   once the ACK-clocked data has filled the window; cwnd grows as the paced data leaves, staying
//!   two segments ahead of it, up to `cwnd + acked + red − red_acks` (`red_acks = blue/2·(2^(r−2) −
//!   1)`, the red ACKs still to come, which add nothing to cwnd). The next round's first ACK stops
//!   the pacing.
//!
//! SUSS's ACK-train test runs on the blue ACKs: once `(now − round_start)·2^jumps` exceeds
//! `(delay_min + ack_delay)/2` (`jumps`: the rounds sped up so far) it sets a cap, `cwnd +
//! blue_acked·(2^jumps − 1)`, the window at which HyStart's test would have fired had the whole
//! train been clocked; SUSS stops speeding up, and slow start ends (reason `ack-train`) once cwnd
//! exceeds the cap. At an exit, after two or more sped-up rounds or inside a paced period, cwnd
//! becomes the data in flight (the source's `cwnd = packets in flight`).

use super::hystart_linux::{self, HyStartDetect, HyStartLinux, HyStartLinuxConfig, RoundReset};
use crate::startup::{Detail, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, ExitReason};
use startlab_units::{Dur, Time};

/// Configuration of [`Suss`], with the source's defaults from [`SussConfig::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SussConfig {
    /// The HyStart SUSS runs on (`hystart-linux`'s parameters).
    pub hystart: HyStartLinuxConfig,
    /// `suss_max`: the most rounds whose growth factor is 4 (rounds 2 to `1 + accelerated_rounds`).
    pub accelerated_rounds: u32,
    /// SUSS speeds up only when `delay_min` exceeds this (the source's 10 000 µs).
    pub min_rtt: Dur,
    /// The allowance of condition 2 per round since `delay_min` last fell, a fraction of
    /// `delay_min` (the source's `>> 3`).
    pub delay_margin: f64,
    /// The initial window, segments (the source's `TCP_INIT_CWND`): the blue part of round `r`
    /// counts `initial_window·2^(r−1)` segments.
    pub initial_window: u64,
}

impl SussConfig {
    /// The source's defaults for segments of `mss` bytes and an initial window of `initial_window`
    /// segments.
    pub fn new(mss: u64, initial_window: u64) -> SussConfig {
        SussConfig {
            hystart: HyStartLinuxConfig::new(mss),
            accelerated_rounds: 3,
            min_rtt: Dur::from_millis(10),
            delay_margin: 0.125,
            initial_window,
        }
    }
}

/// Which part of the round's ACK train the last ACK belonged to (`suss_is_blue`: 1, 2, 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// The blue part, before its last ACK.
    Blue,
    /// The blue part's last ACK was the last one.
    Tail,
    /// The red part (and before the first round).
    Red,
}

/// SUSS over Linux HyStart.
#[derive(Clone, Debug)]
pub struct Suss {
    hs: HyStartLinux,
    st: State,
}

/// SUSS's own state (the `suss_*` fields of the source's `struct bictcp` and `tcp_sock`).
#[derive(Clone, Debug)]
struct State {
    cfg: SussConfig,
    /// SUSS is on (`suss_state` 1 or 2); off it is plain HyStart.
    on: bool,
    /// Rounds may still speed up (`suss_gf`).
    growing: bool,
    /// A paced period is in progress (`suss_state == 2`).
    pacing: bool,
    /// The paced period's window target (`suss_limit`, bytes), rate (`suss_rate`, bytes/s) and
    /// start (`suss_pacing_start_ns`), and whether the switch to pacing happened.
    limit: f64,
    rate: f64,
    start: Time,
    switched: bool,
    /// `suss_round_no`: 1 until the first ACK.
    round: u32,
    /// `suss_head_seq`: SND.NXT at the round's start.
    head_seq: u64,
    /// `suss_tail_seq + 1`: the blue part is complete once the ACK reaches it.
    tail_end: u64,
    /// `suss_round_start_us`.
    round_start: u64,
    part: Part,
    /// `suss_blue_cnt` in bytes: acknowledged in the round's blue part, before its last ACK.
    blue_acked: u64,
    /// `suss_perv_delta_t_bat`, µs.
    prev_dt: u64,
    /// `suss_num_of_jump`: rounds sped up.
    jumps: u32,
    /// `suss_cap` in bytes once `suss_flag` is set.
    cap: Option<f64>,
    /// `suss_r_minupdate`: the round in which `delay_min` last fell.
    r_minupdate: u32,
    /// Why the speed-up ended, and in which round (report).
    stop: Option<(&'static str, u32)>,
    /// The last `ΔtBAT` (µs) and pacing rate (bytes/s), for the report.
    last_dt: Option<u64>,
    last_rate: Option<f64>,
}

impl Suss {
    /// SUSS at connection start (`cubictcp_init`: round 1, the blue part the initial window).
    pub fn new(cfg: SussConfig) -> Suss {
        Suss { hs: HyStartLinux::new(cfg.hystart), st: State::new(cfg) }
    }
}

impl State {
    fn new(cfg: SussConfig) -> State {
        // "if (suss && (sk->sk_pacing_status == SK_PACING_NONE) ...) suss_state = 1; else 10": a
        // paced flow runs plain HyStart.
        let on = !cfg.hystart.paced;
        State {
            on,
            growing: on,
            pacing: false,
            limit: 0.0,
            rate: 0.0,
            start: Time::ZERO,
            switched: false,
            round: 1,
            head_seq: 0,
            // The source's `suss_tail_seq = snd_nxt + 10·mss − 1` (its TCP_INIT_CWND = 10): set at
            // the first ACK, where the segment size is known, to the flow's initial window.
            tail_end: u64::MAX,
            round_start: 0,
            part: Part::Red,
            blue_acked: 0,
            prev_dt: 0,
            jumps: 0,
            cap: None,
            r_minupdate: 0,
            stop: (!on).then_some(("paced", 1)),
            last_dt: None,
            last_rate: None,
            cfg,
        }
    }

    /// Ends the speed-up for good (`suss_gf = 0`), remembering why.
    fn stop(&mut self, why: &'static str) {
        self.growing = false;
        if self.stop.is_none() {
            self.stop = Some((why, self.round));
        }
    }

    /// SUSS off for the connection (`suss_state = 10`, or 3, 4, 9 after an exit or a loss).
    fn off(&mut self, why: &'static str) {
        self.stop(why);
        self.on = false;
        self.pacing = false;
    }

    /// `suss_cap`, in the place of HyStart's ACK-train test while SUSS is on.
    fn cap_test(&mut self, h: &mut HyStartLinux, view: &CcView, ack: &AckEvent, now: u64) -> Option<StartupAction> {
        if let Some(cap) = self.cap {
            if view.cwnd > cap {
                // "Stop exponential growth (type=3)"
                self.stop("cap");
                return Some(self.exit_action(ExitReason::AckTrain, ack));
            }
            return None;
        }
        // Only on the blue ACKs (`suss_is_blue != 0`), judged before this ACK's measurement.
        if self.part == Part::Red || !h.close_ack(now) {
            return None;
        }
        // The blue train stands for 2^jumps times its length: "temp = (now - ca->round_start) <<
        // ca->suss_num_of_jump; if (temp > threshold)", threshold = (delay_min + ack_delay)/2.
        let threshold = h.train_threshold_us() >> 1;
        let scaled = now.saturating_sub(h.round_start_us()).saturating_mul(1 << self.jumps.min(40));
        if scaled > threshold {
            // "suss_cap = snd_cwnd + suss_blue_cnt·((1 << suss_num_of_jump) − 1)"
            let cap = view.cwnd + self.blue_acked as f64 * ((1u64 << self.jumps.min(40)) - 1) as f64;
            self.cap = Some(cap);
            self.stop("cap");
        }
        None
    }

    /// An exit while SUSS is on: after two or more sped-up rounds cwnd becomes the data in
    /// flight, and ssthresh with it ("if (suss_num_of_jump > 1) snd_cwnd = packets in flight").
    fn exit_action(&mut self, reason: ExitReason, ack: &AckEvent) -> StartupAction {
        let mut action = StartupAction::exit(reason);
        if self.jumps > 1 {
            action.set_cwnd = Some(ack.flight_size as f64);
        }
        self.off("exit");
        action
    }

    /// `suss_measurements` for one ACK (after HyStart, before the slow-start increase).
    fn measure(&mut self, view: &CcView, ack: &AckEvent, now: u64, action: &mut StartupAction, hs: &HyStartLinux) {
        let mss = view.mss.max(1);
        // "Is it the first red ACK"
        if self.part == Part::Tail {
            self.part = Part::Red;
        }
        // The head of a train: a new round, back to the ACK clock.
        if ack.ack_seq > self.head_seq {
            self.part = Part::Blue;
            self.blue_acked = 0;
            self.round += 1;
            self.round_start = now;
            self.head_seq = ack.snd_nxt;
            if self.round == 2 {
                self.tail_end = self.cfg.initial_window.saturating_mul(mss);
            }
            // "switch to ACK clocking mode"
            if self.pacing {
                self.pacing = false;
                action.pacing_rate = Some(0.0);
            }
        }
        // The tail of the blue part: measure ΔtBAT and decide.
        if ack.ack_seq >= self.tail_end && self.round >= 2 {
            let elapsed = now.saturating_sub(self.round_start);
            self.part = Part::Tail;
            let blue = self.cfg.initial_window.checked_shl(self.round - 1).unwrap_or(u64::MAX);
            self.tail_end = self.head_seq.saturating_add(blue.saturating_mul(mss));
            if self.growing {
                self.decide(view, ack, elapsed, blue, hs);
            }
        }
        if self.part != Part::Red {
            self.blue_acked += ack.newly_acked;
        }
        // A red ACK in a paced period adds nothing: the source's "snd_cwnd -= acked" before the
        // slow-start increase.
        if self.part == Part::Red && self.pacing {
            action.increase = 0.0;
        }
    }

    /// `suss_speedup` and the set-up of the paced period, at the blue part's last ACK.
    fn decide(&mut self, view: &CcView, ack: &AckEvent, elapsed: u64, blue: u64, hs: &HyStartLinux) {
        let mss = view.mss.max(1);
        let delay_min = hs.delay_min_us().unwrap_or(0);
        let r = self.round;
        // "delta_t_bat = blue_pkt·elapsed / (suss_blue_cnt << 1)"
        if self.blue_acked == 0 {
            // NOTE: the whole blue part came in one ACK: no train to time (the source divides by
            // zero). Round 2 turns SUSS off, as its other "no"; a later round stops the speed-up.
            if r == 2 {
                self.off("no-train");
            } else {
                self.stop("no-train");
            }
            return;
        }
        let dt = ((blue as u128 * mss as u128 * elapsed as u128) / (2 * self.blue_acked as u128)).min(u64::MAX as u128) as u64;
        self.last_dt = Some(dt);
        if let Err(why) = self.speedup(dt, delay_min, hs.curr_rtt_us()) {
            if r == 2 {
                // "tp->suss_state = 10; // Disable SUSS"
                self.off(why);
            } else {
                self.stop(why);
            }
            return;
        }
        self.prev_dt = dt;
        let red = (blue << (r - 1)) - blue;
        let blue_acks = blue / 2;
        let red_acks = (blue_acks << (r - 2)) - blue_acks;
        let pacing_us = delay_min - (delay_min >> (r - 1));
        if delay_min - pacing_us <= dt || pacing_us == 0 {
            // NOTE: the blue data would not fit in its share of the round. The source skips the
            // pacing this round but keeps evaluating, and its later rounds then size their red
            // data as if this one had grown fourfold; here the speed-up ends.
            self.stop("no-room");
            return;
        }
        // "suss_limit = (snd_cwnd + acked) + red_pkt - red_ack": the window at the round's end;
        // cwnd gets there as the paced data leaves (`on_send`).
        self.limit = view.cwnd + ack.newly_acked as f64 + (red - red_acks) as f64 * mss as f64;
        self.rate = red as f64 * mss as f64 * 1e6 / pacing_us as f64;
        // "guard = ((temp - delta_t_bat) >> 1)": the paced data starts half the blue share's slack
        // after this ACK, so the round's data sits in the middle of its RTT.
        let guard = (delay_min - pacing_us - dt) / 2;
        self.start = ack.now + Dur::from_micros(guard);
        self.switched = false;
        self.pacing = true;
        self.jumps += 1;
        self.last_rate = Some(self.rate);
    }

    /// The source's `tcp_event_new_data_sent` hook (D1) in a paced period: once the ACK-clocked
    /// data has filled the window, switch to pacing from the guard's end; then keep cwnd two
    /// segments ahead of the data out, up to the round's target.
    fn sent(&mut self, view: &CcView, now: Time, flight: u64) -> StartupAction {
        let mut action = StartupAction::default();
        if !self.pacing || view.cwnd >= self.limit {
            return action;
        }
        let mss = view.mss.max(1);
        // The window is full when another segment would not fit.
        let full = (flight + mss) as f64 > view.cwnd;
        if !self.switched {
            if !full {
                return action;
            }
            // "Switch to pacing mode": sk_pacing_rate = suss_rate, tcp_wstamp_ns = the start.
            // NOTE: the source switches on the send that leaves cwnd at most one segment ahead;
            // with TSO the ACK's two clocked segments leave as one, so the switch comes after
            // both. Here each segment leaves alone, and the switch waits for the full window.
            self.switched = true;
            action.pacing_rate = Some(self.rate);
            action.pacing_start = Some(self.start.max(now));
        }
        // "if (snd_cwnd <= packets_in_flight + pcount) snd_cwnd += 2", up to suss_limit: the
        // window stays two segments ahead of the data sent.
        if view.cwnd <= (flight + mss) as f64 {
            action.set_cwnd = Some(((flight + 2 * mss) as f64).min(self.limit).max(view.cwnd));
        }
        action
    }

    /// `suss_speedup`: `Ok` if this round grows fourfold, else why not.
    fn speedup(&self, dt: u64, delay_min: u64, curr_rtt: Option<u64>) -> Result<(), &'static str> {
        let r = self.round;
        if r == 2 {
            if delay_min <= self.cfg.min_rtt.as_nanos() / 1_000 {
                return Err("short-rtt");
            }
            if dt >= delay_min >> 2 {
                return Err("slow-train");
            }
            return Ok(());
        }
        if r >= self.cfg.accelerated_rounds + 2 {
            return Err("max-rounds");
        }
        // Condition 1: the next round's train, predicted from this one's growth, fits in delay_min.
        let delta_t = dt.saturating_mul(1 << (r - 2).min(40));
        let prev = self.prev_dt.saturating_mul(1 << (r - 3).min(40));
        if prev == 0 {
            return Err("no-train");
        }
        let mu = ((delta_t as u128) << 10) / ((prev as u128) << 1);
        let predicted = (mu * delta_t as u128) >> 9;
        if predicted > delay_min as u128 {
            return Err("prediction");
        }
        // Condition 2: the round's minimum RTT has not risen (k rounds since delay_min fell).
        let k = r.saturating_sub(self.r_minupdate) as u128;
        let curr = curr_rtt.unwrap_or(u32::MAX as u64) as u128;
        let allowance = ((delay_min as u128 * k) as f64 * self.cfg.delay_margin).floor() as u128;
        if (k + 1) * curr > (k + 1) * delay_min as u128 + allowance {
            return Err("delay");
        }
        Ok(())
    }
}

impl StartupAlgorithm for Suss {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let now = ack.now.as_nanos() / 1_000;
        let Suss { hs, st } = self;
        // E5: the round in which delay_min last fell ("ca->suss_r_minupdate = ca->suss_round_no"),
        // in `cubictcp_acked`, before this ACK's measurement.
        if let Some(rtt) = ack.rtt {
            let delay = (rtt.as_nanos() / 1_000).max(1);
            if hs.delay_min_us().is_none_or(|d| delay < d) {
                st.r_minupdate = st.round;
            }
        }
        let mut action = if st.on {
            // `cubictcp_acked` → `hystart_update`, with `suss_cap` where the ACK-train test was.
            let mut action = hs.on_ack_with(view, ack, &mut |h, now| st.cap_test(h, view, ack, now));
            if let Some(reason) = action.exit.filter(|&r| r == ExitReason::DelayIncrease) {
                // "Stop exponential growth (type=2)": the delay test, with SUSS's window rule.
                st.stop("delay-increase");
                action = st.exit_action(reason, ack);
            }
            action
        } else {
            hs.on_ack(view, ack)
        };
        if action.exit.is_some() {
            return action;
        }
        // `cubictcp_cong_avoid`: "if (tp->suss_state < 3 && ca->suss_flag == 0) suss_measurements".
        if st.on && st.cap.is_none() {
            st.measure(view, ack, now, &mut action, hs);
        }
        action
    }

    fn on_congestion(&mut self, view: &CcView, ev: &CongestionEvent) {
        self.hs.on_congestion(view, ev);
        // RESOLVED: after any congestion signal SUSS is off for the connection (the source: state 9
        // after a fast retransmit or ECN, state 10 after a timeout at cwnd < 40 segments).
        let why = match ev.kind {
            CongestionKind::FastRetransmit => "loss",
            CongestionKind::Timeout => "timeout",
            CongestionKind::Ecn => "ecn",
        };
        if self.st.on {
            self.st.off(why);
        }
    }

    fn on_send(&mut self, view: &CcView, now: Time, _snd_max: u64, flight: u64) -> StartupAction {
        self.st.sent(view, now, flight)
    }

    /// The source's `tcp_init_cwnd_reduction` (C3), for a fast retransmit or an ECN echo: "if
    /// (suss_state < 3) snd_cwnd = tcp_packets_in_flight(tp)" before ssthresh is computed.
    fn loss_window(&mut self, view: &CcView, ev: &CongestionEvent) -> Option<f64> {
        (self.st.on && ev.kind != CongestionKind::Timeout).then(|| view.cwnd.min(ev.flight_size as f64))
    }

    fn report(&self) -> Vec<(&'static str, Detail)> {
        let st = &self.st;
        let mut out = vec![("suss_jumps", Detail::Num(st.jumps as f64)), ("suss_rounds", Detail::Num(st.round as f64))];
        let (why, round) = st.stop.unwrap_or(("running", st.round));
        out.push(("suss_stop", Detail::Text(why)));
        out.push(("suss_stop_round", Detail::Num(round as f64)));
        if let Some(cap) = st.cap {
            out.push(("suss_cap", Detail::Num(cap)));
        }
        if let Some(dt) = st.last_dt {
            out.push(("suss_dt_us", Detail::Num(dt as f64)));
        }
        if let Some(rate) = st.last_rate {
            out.push(("suss_pacing_rate", Detail::Num(rate)));
        }
        out
    }
}


use crate::decl::{AlgorithmInfo, Param, Range, no_check};

/// `accelerated_rounds` of `startup = { algorithm = "suss", ... }`.
pub const ACCELERATED_ROUNDS: Param<u64> = Param::integer("accelerated_rounds", "3", "suss_max: the most rounds that grow fourfold (rounds 2 to 1 + accelerated_rounds), each only while the ACK clock predicts the pipe will not be full").range(Range::Between(1.0, 10.0));

/// `min_rtt` of `startup = { algorithm = "suss", ... }`.
pub const MIN_RTT: Param<Dur> = Param::duration("min_rtt", "10ms", "SUSS speeds up only when delay_min exceeds this at the end of round 2's blue ACK train (the source's 10 ms); otherwise it is off and HyStart runs alone");

/// `delay_margin` of `startup = { algorithm = "suss", ... }`.
pub const DELAY_MARGIN: Param<f64> = Param::number("delay_margin", "0.125", "condition 2: a round grows fourfold only while (k+1)·curr_rtt <= (k+1)·delay_min + delay_margin·k·delay_min, k = rounds since delay_min last fell (the source's 1/8)").range(Range::Between(0.0, 1.0));

/// `paced` of `startup = { algorithm = "suss", ... }`.
pub const PACED: Param<bool> = Param::flag("paced", "false", "the flow is paced (sk_pacing_status != SK_PACING_NONE, e.g. fq): SUSS stays off, as its source requires, and HyStart's train must exceed delay_min instead of delay_min/2");

/// The declaration of `suss` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "suss",
        role: "startup",
        summary: "SUSS: Linux HyStart whose ACK-clock prediction grows cwnd fourfold in up to 3 early rounds, the extra data paced over the round; its own ACK-train cap replaces HyStart's",
        source: "Arghavani, Zhang, Eyers & Arghavani, SUSS, ACM SIGCOMM 2024; Linux 6.8 patch github.com/SUSSdeveloper/SUSS b7e4456 (tcp_cubic.c suss_measurements, suss_speedup, suss_cap)",
        params: &[
            ACCELERATED_ROUNDS.info,
            MIN_RTT.info,
            DELAY_MARGIN.info,
            hystart_linux::DETECT.info,
            hystart_linux::LOW_WINDOW.info,
            hystart_linux::ACK_DELTA.info,
            hystart_linux::MIN_SAMPLES.info,
            hystart_linux::ACK_DELAY.info,
            PACED.info,
            hystart_linux::ROUND_RESET.info,
        ],
    },
    build: super::Build::Native(|p, cx| {
        super::Startup::Suss(Suss::new(SussConfig {
            hystart: HyStartLinuxConfig {
                detect: HyStartDetect::from_name(p.get(&hystart_linux::DETECT)).expect("the registry lists the choices"),
                low_window: p.get(&hystart_linux::LOW_WINDOW) as f64,
                ack_delta: p.get(&hystart_linux::ACK_DELTA),
                min_samples: p.get(&hystart_linux::MIN_SAMPLES).min(u32::MAX as u64) as u32,
                ack_delay: p.get(&hystart_linux::ACK_DELAY),
                paced: p.get(&PACED),
                round_reset: RoundReset::from_name(p.get(&hystart_linux::ROUND_RESET)).expect("the registry lists the choices"),
            },
            accelerated_rounds: p.get(&ACCELERATED_ROUNDS) as u32,
            min_rtt: p.get(&MIN_RTT),
            delay_margin: p.get(&DELAY_MARGIN),
            initial_window: cx.initial_window.max(1),
        }))
    }),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};

#[cfg(test)]
mod tests;
