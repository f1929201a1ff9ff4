//! The controller: owns cwnd, ssthresh and the phase, and applies the plug-ins' decisions.

use crate::Probe;
use crate::avoidance::Avoidance;
use crate::startup::{CeRule, Detail, PathMemory, QuickStartEvent, SavedPath, SendLimit, Startup, StartupAction};
use crate::{AckEvent, CongestionEvent, CongestionKind, ExitReason, Ssthresh};
use startlab_units::{Dur, Time};

/// Configuration that builds a [`Controller`].
#[derive(Clone, Debug)]
pub struct CcConfig {
    /// Sender maximum segment size (payload bytes).
    pub mss: u64,
    /// Initial window in bytes.
    pub initial_window: u64,
    /// Initial slow-start threshold.
    pub initial_ssthresh: Ssthresh,
    /// Loss window after a timeout, in bytes (RFC 5681 LW = 1 SMSS).
    pub loss_window: u64,
    /// Apply RFC 7661 / Linux `tcp_is_cwnd_limited`: no growth while not cwnd-limited.
    pub cwnd_validation: bool,
    /// Linux clamps slow start at ssthresh and carries the rest into avoidance; RFC 5681 does not
    /// clamp (ALGORITHMS.md §1.4). Off by default.
    pub linux_ss_clamp: bool,
}

/// Phase of the congestion controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `cwnd < ssthresh`, growth decided by the startup plug-in.
    SlowStart,
    /// In loss recovery (the endpoint drives the window until recovery ends).
    Recovery,
    /// Linear growth decided by the avoidance plug-in.
    CongestionAvoidance,
}

/// The record of the end of startup, written once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StartupExit {
    /// When the exponential phase ended.
    pub time: Time,
    /// Why.
    pub reason: ExitReason,
    /// cwnd at that moment, before any reduction (bytes).
    pub cwnd: f64,
}

/// Read-only view of the controller state handed to plug-ins.
#[derive(Clone, Copy, Debug)]
pub struct CcView {
    /// Congestion window (bytes).
    pub cwnd: f64,
    /// Slow-start threshold.
    pub ssthresh: Ssthresh,
    /// Segment size (bytes).
    pub mss: u64,
    /// Completed rounds so far (§0.3).
    pub round: u64,
    /// Smallest RTT sample seen so far.
    pub min_rtt: Option<Dur>,
    /// True while handling the ACK that ended a round (§0.3).
    pub new_round: bool,
}

/// A congestion controller generic over a startup and an avoidance plug-in (enum dispatch).
///
/// Layout: a sender's state is read on every ACK, and with many flows taking turns it is cold
/// each time, so the fields are in declaration order (`repr(C)`) with what every ACK and every
/// send reads first — the window, the rounds, the startup's holds, the configuration and the
/// avoidance plug-in, on few adjacent cache lines — then the startup plug-in's state (read on
/// every ACK only while in startup), then what only a congestion event or the results read.
#[derive(Debug)]
#[repr(C)]
pub struct Controller {
    cwnd: f64,
    ssthresh: Ssthresh,
    round: u64,
    round_end: Option<u64>,
    min_rtt: Option<Dur>,
    /// The cumulative ACK point of the last ACK (for the flight a startup plug-in sees on a send).
    snd_una: u64,
    /// CE-marked bytes the ACKs reported so far (`AckEvent::ce_bytes`, Accurate ECN).
    ce_bytes: u64,
    /// A loss recovery that startup rides out ([`StartupAlgorithm::keeps_startup_on_loss`]) is in
    /// progress: the ssthresh startup resumes with when it ends.
    ///
    /// [`StartupAlgorithm::keeps_startup_on_loss`]: crate::startup::StartupAlgorithm::keeps_startup_on_loss
    riding: Option<Ssthresh>,
    /// Pacing rate a startup plug-in asked for (bytes/s), until startup ends.
    startup_pacing: Option<f64>,
    /// A pacing start a startup plug-in set, for the sender to take ([`Controller::take_pacing_start`]).
    pacing_start: Option<Time>,
    /// New data at or beyond this sequence number is held (startup plug-in's hold), until startup ends.
    send_limit: Option<u64>,
    /// Startup ends once new data up to this sequence number has been sent.
    exit_when_sent: Option<(u64, ExitReason)>,
    entered_ca: Option<Time>,
    /// Congestion events so far (what the last one did: `last_reduction`).
    reductions: u64,
    /// Bytes retransmitted so far on the connection.
    retransmitted: u64,
    exit: Option<StartupExit>,
    phase: Phase,
    /// A per-response startup runs (after [`Controller::restart_startup`]) and has not ended.
    restarted: bool,
    cfg: CcConfig,
    avoidance: Avoidance,
    startup: Startup,
    last_reduction: Option<Reduction>,
    /// What the simulator's `[trace] rtt` and `[trace] startup` record (`None`: neither is on).
    probe: Option<Box<Probe>>,
}

/// What a congestion event did to the window (the controller's record of the last one): a
/// reduction, never an undo (startlab's recoveries undo no reduction).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reduction {
    /// When.
    pub now: Time,
    /// Loss (fast retransmit), timeout or ECN echo.
    pub kind: CongestionKind,
    /// cwnd (bytes) the event found.
    pub cwnd_before: f64,
    /// ssthresh (bytes) before the event.
    pub ssthresh_before: Ssthresh,
    /// ssthresh (bytes) the event set.
    pub ssthresh_after: f64,
}

impl Controller {
    /// Builds a controller in slow start with the configured initial window.
    pub fn new(cfg: CcConfig, startup: Startup, avoidance: Avoidance) -> Controller {
        let mut c = Controller {
            cwnd: cfg.initial_window as f64,
            ssthresh: cfg.initial_ssthresh,
            phase: Phase::SlowStart,
            startup,
            avoidance,
            exit: None,
            entered_ca: None,
            round: 0,
            round_end: None,
            min_rtt: None,
            startup_pacing: None,
            send_limit: None,
            exit_when_sent: None,
            pacing_start: None,
            snd_una: 0,
            retransmitted: 0,
            restarted: false,
            reductions: 0,
            last_reduction: None,
            probe: None,
            ce_bytes: 0,
            riding: None,
            cfg,
        };
        if c.phase == Phase::SlowStart && c.ssthresh.above(c.cwnd) {
            let action = c.startup.on_start(&c.view());
            c.apply(&action);
        }
        if !c.ssthresh.above(c.cwnd) {
            // An initial ssthresh at or below the initial window (or the first flight the plug-in
            // just shaped): startup ends before it begins, and with it any hold or pacing the
            // plug-in asked for (Paced Start's hold would otherwise block the rest of the data).
            c.leave_startup(Time::ZERO, ExitReason::Ssthresh);
            c.enter_ca(Time::ZERO);
        }
        c
    }

    /// Reads, and discards, a value on each cache line of the state an ACK reads (the fields
    /// before the startup plug-in's state, in declaration order, and which plug-in that is), so
    /// that a driver can start these cache misses early ([`Sender::warm`] in startlab-tcp). The
    /// result means nothing: pass it to `std::hint::black_box`.
    ///
    /// [`Sender::warm`]: https://docs.rs/startlab-tcp
    pub fn warm(&self) -> u64 {
        self.cwnd.to_bits()
            ^ self.snd_una
            ^ self.send_limit.unwrap_or(0)
            ^ self.reductions
            ^ self.phase as u64
            ^ self.cfg.mss
            ^ matches!(self.avoidance, Avoidance::Reno(_)) as u64
            ^ matches!(self.startup, Startup::SlowStart(_)) as u64
    }

    /// Congestion window in bytes.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }
    /// Slow-start threshold.
    pub fn ssthresh(&self) -> Ssthresh {
        self.ssthresh
    }
    /// Current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// Segment size in bytes.
    pub fn mss(&self) -> u64 {
        self.cfg.mss
    }
    /// The end of the exponential phase, once it happened.
    pub fn startup_exit(&self) -> Option<StartupExit> {
        self.exit
    }
    /// The first entry into congestion avoidance outside recovery: `t_su` of ALGORITHMS.md §19.
    pub fn entered_ca(&self) -> Option<Time> {
        self.entered_ca
    }
    /// Name of the startup plug-in.
    pub fn startup_name(&self) -> &'static str {
        self.startup.name()
    }
    /// Name of the avoidance plug-in.
    pub fn avoidance_name(&self) -> &'static str {
        self.avoidance.name()
    }
    /// Rounds completed (§0.3).
    pub fn round(&self) -> u64 {
        self.round
    }
    /// The pacing rate the startup plug-in set (bytes of payload per second), while in startup.
    pub fn pacing_rate(&self) -> Option<f64> {
        self.startup_pacing
    }

    /// The time before which a startup plug-in asked the pacer to release nothing, once: the
    /// sender takes it into its pacer ([`StartupAction::pacing_start`]).
    pub fn take_pacing_start(&mut self) -> Option<Time> {
        self.pacing_start.take()
    }

    /// The hold on new data a startup plug-in set: no new byte at or beyond this sequence number
    /// may be sent (retransmissions are not held).
    pub fn send_limit(&self) -> Option<u64> {
        self.send_limit
    }
    /// The startup plug-in's values for the results (e.g. Paced Start's exit case).
    pub fn startup_report(&self) -> Vec<(&'static str, Detail)> {
        self.startup.report()
    }
    /// What the connection leaves for the next one on its path (Careful Resume's saved CC
    /// parameters); `None` for an algorithm that keeps nothing across connections.
    pub fn startup_retained(&self) -> Option<PathMemory> {
        self.startup.retained()
    }
    /// Before any event: what the previous connection on the path left (`None`: no saved set).
    pub fn seed_startup(&mut self, saved: Option<SavedPath>) {
        self.startup.seed(saved);
    }

    fn view(&self) -> CcView {
        CcView {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            mss: self.cfg.mss,
            round: self.round,
            min_rtt: self.min_rtt,
            new_round: false,
        }
    }

    /// Starts the first round explicitly with `round_end_seq = snd_nxt` (§0.3), for drivers that
    /// know where the first flight ends. Without it the first ACK fixes the first round's end.
    pub fn on_first_send(&mut self, snd_nxt: u64) {
        if self.round_end.is_none() {
            self.round_end = Some(snd_nxt);
        }
    }

    /// The handshake completed with RTT sample `rtt` (SYN to SYN-ACK, never-retransmitted SYN) and
    /// `queued` bytes of application data (`None`: unlimited). The startup plug-in may size and pace
    /// the first flight (Jump-Start, More-Start). The sample does not enter `min_rtt`: it carries no
    /// data transmission time and would bias the delay-based plug-ins.
    pub fn on_handshake(&mut self, rtt: Dur, queued: Option<u64>) {
        if self.phase != Phase::SlowStart {
            return;
        }
        let action = self.startup.on_handshake(&self.view(), rtt, queued);
        self.apply(&action);
    }

    /// The sender's verdict on its Quick-Start request (RFC 4782). The plug-in always records it;
    /// its action (the paced Quick-Start window) applies only while still in startup.
    pub fn on_quick_start(&mut self, ev: QuickStartEvent) {
        let in_startup = self.phase == Phase::SlowStart && (self.exit.is_none() || self.restarted);
        let action = self.startup.on_quick_start(&self.view(), &QuickStartEvent { in_startup, ..ev });
        if in_startup {
            self.apply(&action);
        }
    }

    /// Applies the parts of a plug-in's action other than `increase` and `exit`.
    fn apply(&mut self, action: &StartupAction) {
        if let Some(rate) = action.pacing_rate {
            self.startup_pacing = (rate > 0.0 && rate.is_finite()).then_some(rate);
        }
        if action.pacing_start.is_some() {
            self.pacing_start = action.pacing_start;
        }
        if let Some(w) = action.set_cwnd {
            self.cwnd = w.max(self.cfg.mss as f64);
        }
        if let Some(s) = action.set_ssthresh {
            self.ssthresh = Ssthresh::Bytes(s.max(2.0 * self.cfg.mss as f64));
        }
        match action.send_limit {
            Some(SendLimit::Open) => self.send_limit = None,
            Some(SendLimit::Upto(seq)) => self.send_limit = Some(seq),
            None => {}
        }
        if action.exit_when_sent.is_some() {
            self.exit_when_sent = action.exit_when_sent;
        }
    }

    /// New data was sent up to `snd_max` (one past the highest byte sent). Ends startup if a
    /// plug-in asked to leave once that data is out ([`StartupAction::exit_when_sent`]).
    pub fn on_data_sent(&mut self, now: Time, snd_max: u64) {
        if self.phase == Phase::SlowStart {
            let action = self.startup.on_send(&self.view(), now, snd_max, snd_max.saturating_sub(self.snd_una));
            self.apply(&action);
        }
        if let Some((seq, reason)) = self.exit_when_sent {
            if snd_max >= seq && self.phase == Phase::SlowStart {
                self.ssthresh = Ssthresh::Bytes(self.cwnd);
                self.leave_startup(now, reason);
                self.enter_ca(now);
            }
        }
    }

    /// `bytes` at sequence number `seq` were retransmitted (counted for
    /// [`StartupAlgorithm::after_recovery`]; in startup, passed to
    /// [`StartupAlgorithm::on_retransmit`]).
    ///
    /// [`StartupAlgorithm::after_recovery`]: crate::startup::StartupAlgorithm::after_recovery
    /// [`StartupAlgorithm::on_retransmit`]: crate::startup::StartupAlgorithm::on_retransmit
    pub fn on_retransmit(&mut self, seq: u64, bytes: u64) {
        self.retransmitted += bytes;
        if self.in_startup() {
            self.startup.on_retransmit(seq, bytes);
        }
    }

    /// In startup: slow start (or a loss recovery that startup rides out) before startup first
    /// ended, or a per-response startup.
    fn in_startup(&self) -> bool {
        (self.phase == Phase::SlowStart || self.riding.is_some()) && (self.exit.is_none() || self.restarted)
    }

    /// A loss recovery that startup rides out is in progress: the endpoint passes the recovery's
    /// ACKs to [`Controller::on_recovery_ack`].
    pub fn rides_out_recovery(&self) -> bool {
        self.riding.is_some()
    }

    /// An ACK that delivered data (advanced the cumulative ACK point, or SACKed new data) during
    /// a loss recovery that startup rides out ([`Controller::rides_out_recovery`]); `acked_to` is
    /// one past the highest byte acknowledged cumulatively or selectively. The endpoint calls it
    /// before its own recovery step. The startup plug-in's [`StartupAlgorithm::on_recovery_ack`]
    /// may pace or end startup; the window stays the recovery's. Does nothing otherwise.
    ///
    /// NOTE: in such a recovery a round ends when `acked_to` passes the round's end, and the first
    /// round starts at the loss (the first of these ACKs fixes its end). Holes stall the cumulative
    /// ACK for as long as the recovery lasts, while BBR's rounds count delivered data, SACKed data
    /// included, and its loss round starts at the first loss (Linux `bbr_note_loss`, the draft's
    /// `NoteLoss`).
    ///
    /// [`StartupAlgorithm::on_recovery_ack`]: crate::startup::StartupAlgorithm::on_recovery_ack
    pub fn on_recovery_ack(&mut self, ack: &AckEvent, acked_to: u64) {
        if self.riding.is_none() {
            return;
        }
        let new_round = self.note_ack(&AckEvent { ack_seq: ack.ack_seq.max(acked_to), ..*ack });
        let action = self.startup.on_recovery_ack(&CcView { new_round, ..self.view() }, ack);
        if let Some(rate) = action.pacing_rate {
            self.startup_pacing = (rate > 0.0 && rate.is_finite()).then_some(rate);
        }
        if let Some(reason) = action.exit {
            // The recovery goes on and ends with cwnd = ssthresh, as after a loss that ended startup.
            self.riding = None;
            self.ssthresh = Ssthresh::Bytes(action.set_ssthresh.unwrap_or(self.cwnd).max(2.0 * self.cfg.mss as f64));
            self.leave_startup(ack.now, reason);
        }
    }

    /// What every ACK updates: the CE count, the minimum RTT and the rounds. True when the ACK
    /// ended a round.
    fn note_ack(&mut self, ack: &AckEvent) -> bool {
        self.ce_bytes += ack.ce_bytes;
        self.snd_una = self.snd_una.max(ack.ack_seq);
        if let Some(rtt) = ack.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            if let Some(p) = self.probe.as_deref_mut().filter(|p| p.rtt) {
                p.rtt_rows.push((ack.now, rtt, ack.ack_seq, self.min_rtt.unwrap_or(rtt)));
            }
        }
        // §0.3: a round ends on the first ACK that covers round_end_seq.
        // NOTE: §0.3 starts the first round "when the first data segment is sent". The initial
        // window leaves as one burst, so the lab takes SND.NXT after that burst: the first ACK
        // (which arrives before anything else was sent) fixes round_end_seq to its SND.NXT. Rounds
        // then line up with flights, as Linux's and RFC 9406's do.
        match self.round_end {
            None => {
                self.round_end = Some(ack.snd_nxt);
                false
            }
            Some(end) if ack.ack_seq > end => {
                self.round += 1;
                self.round_end = Some(ack.snd_nxt);
                true
            }
            Some(_) => false,
        }
    }

    /// Starts recording RTT samples and/or the startup algorithm's signals ([`Probe`]).
    pub fn keep_probe(&mut self, rtt: bool, startup: bool) {
        if rtt || startup {
            self.probe = Some(Box::new(Probe { rtt, startup, ..Probe::default() }));
        }
    }

    /// What was recorded since the simulator last took it (`None` without [`Controller::keep_probe`]).
    pub fn probe_mut(&mut self) -> Option<&mut Probe> {
        self.probe.as_deref_mut()
    }

    /// The startup algorithm's declared signals.
    pub fn startup_signals(&self) -> &'static [crate::startup::Signal] {
        self.startup.signal_decls()
    }

    /// CE-marked bytes the ACKs have reported so far (the sum of [`AckEvent::ce_bytes`]; Accurate
    /// ECN, RFC 9768).
    pub fn ce_bytes(&self) -> u64 {
        self.ce_bytes
    }

    /// An ACK that advanced the cumulative ACK point, outside loss recovery.
    pub fn on_ack(&mut self, ack: &AckEvent) {
        let new_round = self.note_ack(ack);
        self.avoidance.on_feedback(&CcView { new_round, ..self.view() }, ack, self.phase != Phase::SlowStart);
        if self.phase == Phase::Recovery || ack.newly_acked == 0 {
            return;
        }
        let growth_allowed = ack.cwnd_limited || !self.cfg.cwnd_validation;
        if self.phase == Phase::SlowStart {
            let view = CcView { new_round, ..self.view() };
            let action = self.startup.on_ack(&view, ack);
            if growth_allowed {
                let grown = self.cwnd + action.increase;
                self.cwnd = match self.ssthresh {
                    // NOTE: RFC 5681 does not clamp at ssthresh because its increase is at most one
                    // SMSS. Byte-counting plug-ins may add a whole cumulative jump (after a hole is
                    // repaired, one ACK can cover hundreds of segments), so crossing ssthresh is
                    // limited to what one SMSS would add; Linux's tcp_slow_start clamps likewise.
                    Ssthresh::Bytes(s) if grown > s => s.max(self.cwnd + action.increase.min(self.cfg.mss as f64)),
                    _ => grown,
                };
            }
            self.apply(&action);
            if let Some(reason) = action.exit {
                if action.set_ssthresh.is_none() {
                    self.ssthresh = Ssthresh::Bytes(self.cwnd);
                }
                self.leave_startup(ack.now, reason);
                self.enter_ca(ack.now);
            } else if !self.ssthresh.above(self.cwnd) {
                if self.cfg.linux_ss_clamp {
                    if let Ssthresh::Bytes(s) = self.ssthresh {
                        self.cwnd = self.cwnd.min(s.max(self.cfg.mss as f64));
                    }
                }
                self.leave_startup(ack.now, ExitReason::Ssthresh);
                self.enter_ca(ack.now);
            }
            if let Some(p) = self.probe.as_deref_mut().filter(|p| p.startup) {
                p.startup_rows.push((ack.now, self.phase != Phase::SlowStart));
                self.startup.signals(&mut p.values);
            }
        } else if let Some(s) = self.startup.reopen(&self.view(), ack).filter(|&s| s > self.cwnd) {
            // The startup plug-in re-opens slow start (Astart); growth resumes with the next ACK.
            self.ssthresh = Ssthresh::Bytes(s);
            self.phase = Phase::SlowStart;
        } else if growth_allowed {
            self.cwnd = self.avoidance.on_ack(&self.view(), ack);
        }
        debug_assert!(self.cwnd > 0.0, "cwnd must stay positive");
    }

    /// A congestion signal: the avoidance plug-in returns the new ssthresh (ns-3's rule: the
    /// algorithm returns ssthresh, it does not set it). For a fast retransmit the endpoint then sets
    /// the recovery window; for a timeout cwnd becomes the loss window.
    ///
    /// NOTE: a congestion event never raises ssthresh above the window it found. FlightSize
    /// (RFC 5681 eq. 4) is the data sent and not cumulatively acknowledged; behind a lost
    /// retransmission, or after Reno left recovery with holes still open, it counts windows already
    /// SACKed or sent since, and the avoidance's reduction of it (FlightSize/2, β·FlightSize) can
    /// exceed cwnd: Reno's recovery on a burst set ssthresh to 1.4·cwnd. When it would, that
    /// FlightSize does not describe the network and the reduction is taken from cwnd instead, as
    /// Linux and 4.4BSD always do; everywhere else the RFC's FlightSize stands. (The RACK
    /// recoveries pass FlightSize at most cwnd: Linux's reduction from cwnd, always.)
    ///
    /// An ECN echo follows the startup algorithm's declared rule while in startup
    /// ([`CeRule`]): `ExitAsLoss` as above, `OwnRule` changes nothing here (the algorithm reads
    /// `AckEvent::ce_bytes`). Outside slow start, ECN feedback that the avoidance suppresses
    /// (Prague's reduced RTT-dependence) changes nothing. Neither counts as a congestion event.
    ///
    /// A fast retransmit in startup whose plug-in keeps startup on loss
    /// ([`StartupAlgorithm::keeps_startup_on_loss`]) does not end startup: the plug-in hears of it,
    /// the recovery runs with ssthresh = cwnd (the window the loss found, no reduction; counted as
    /// a congestion event), and startup resumes when it ends ([`Controller::on_recovery_exit`]).
    /// A timeout during that recovery ends startup (reason `timeout`).
    ///
    /// [`StartupAlgorithm::keeps_startup_on_loss`]: crate::startup::StartupAlgorithm::keeps_startup_on_loss
    pub fn on_congestion(&mut self, ev: &CongestionEvent) {
        if ev.kind == CongestionKind::Ecn {
            let in_startup = self.in_startup();
            let held = if in_startup { self.startup.on_ce() == CeRule::OwnRule } else { self.phase != Phase::SlowStart && self.avoidance.suppresses_ecn(ev.now) };
            if held {
                return;
            }
        }
        let (cwnd_before, ssthresh_before) = (self.cwnd, self.ssthresh);
        if ev.kind == CongestionKind::FastRetransmit && ev.enter_recovery && self.in_startup() && self.riding.is_none() && self.startup.keeps_startup_on_loss() {
            self.startup.on_congestion(&self.view(), ev);
            let ss = self.cwnd.max(2.0 * self.cfg.mss as f64);
            self.riding = Some(self.ssthresh);
            self.round_end = None;
            self.reductions += 1;
            self.last_reduction = Some(Reduction { now: ev.now, kind: ev.kind, cwnd_before, ssthresh_before, ssthresh_after: ss });
            self.ssthresh = Ssthresh::Bytes(ss);
            self.cwnd = ss;
            self.phase = Phase::Recovery;
            return;
        }
        let reason = match ev.kind {
            CongestionKind::FastRetransmit => ExitReason::Loss,
            CongestionKind::Timeout => ExitReason::Timeout,
            CongestionKind::Ecn => ExitReason::Ecn,
        };
        let mut plug_in_ss = None;
        if self.riding.take().is_some() {
            // A timeout (or a Tahoe-style fast retransmit) during a recovery that startup rode out.
            self.startup.on_congestion(&self.view(), ev);
            self.leave_startup(ev.now, reason);
        } else if self.phase == Phase::SlowStart {
            if let Some(w) = self.startup.loss_window(&self.view(), ev) {
                self.cwnd = w.max(self.cfg.mss as f64);
            }
            self.startup.on_congestion(&self.view(), ev);
            plug_in_ss = self.startup.loss_ssthresh(&self.view(), ev, self.retransmitted);
            self.leave_startup(ev.now, reason);
        }
        let view = self.view();
        // A timeout during recovery keeps the episode's ssthresh at most (below): nothing to guard.
        let in_episode = ev.kind == CongestionKind::Timeout && self.phase == Phase::Recovery;
        let mut ss = plug_in_ss.unwrap_or_else(|| {
            // A trial on a copy: the avoidance's reduction also updates its state (CUBIC's W_max).
            let raises = !in_episode && self.avoidance.clone().ssthresh_after_loss(&view, ev) > self.cwnd;
            let ev = if raises { CongestionEvent { flight_size: self.cwnd as u64, ..*ev } } else { *ev };
            self.avoidance.ssthresh_after_loss(&view, &ev)
        });
        if in_episode {
            // NOTE: RFC 5681 §3.1 asks for ssthresh "no more than" max(FlightSize/2, 2*SMSS) on a
            // timeout. During SACK recovery FlightSize spans every byte sent since the loss (new data
            // included) and can be several windows; like Linux (tcp_enter_loss keeps the recovery's
            // ssthresh when already in Recovery) we never raise ssthresh above the value this
            // episode already chose.
            ss = ss.min(self.ssthresh.as_f64());
        }
        let ss = ss.max(2.0 * self.cfg.mss as f64);
        self.reductions += 1;
        self.last_reduction = Some(Reduction { now: ev.now, kind: ev.kind, cwnd_before, ssthresh_before, ssthresh_after: ss });
        self.ssthresh = Ssthresh::Bytes(ss);
        match ev.enter_recovery {
            // RFC 3168 §6.1.2: "cwnd = ssthresh" (halved), no retransmission, no recovery.
            false if ev.kind == CongestionKind::Ecn => {
                self.cwnd = ss;
                if self.ssthresh.above(self.cwnd) {
                    self.phase = Phase::SlowStart;
                } else {
                    self.enter_ca(ev.now);
                }
            }
            true => {
                self.cwnd = ss;
                self.phase = Phase::Recovery;
            }
            false => {
                self.cwnd = self.cfg.loss_window as f64;
                self.phase = if self.ssthresh.above(self.cwnd) { Phase::SlowStart } else { Phase::CongestionAvoidance };
            }
        }
        self.avoidance.on_congestion(&self.view(), ev);
    }

    /// Congestion events (fast retransmits, first timeouts of an episode, ECN reductions) so far.
    pub fn reductions(&self) -> u64 {
        self.reductions
    }

    /// What the last congestion event did.
    pub fn last_reduction(&self) -> Option<Reduction> {
        self.last_reduction
    }

    /// A timeout while the window is already collapsed (RFC 6298 backoff): cwnd back to the loss
    /// window, ssthresh held (RFC 5681 §3.1 / ALGORITHMS.md §2.5).
    pub fn on_repeated_timeout(&mut self) {
        self.cwnd = self.cfg.loss_window as f64;
        if self.phase == Phase::Recovery {
            self.phase = Phase::SlowStart;
        }
    }

    /// The endpoint's loss recovery sets the window directly (Reno inflation, NewReno partial
    /// deflation). Only valid in [`Phase::Recovery`].
    pub fn set_recovery_cwnd(&mut self, cwnd: f64) {
        debug_assert_eq!(self.phase, Phase::Recovery, "recovery window outside recovery");
        self.cwnd = cwnd.max(self.cfg.mss as f64);
    }

    /// Recovery ended with window `cwnd`; the controller resumes in slow start or avoidance. After
    /// a recovery that startup rode out, ssthresh is again the one before the loss, and startup
    /// goes on.
    pub fn on_recovery_exit(&mut self, now: Time, cwnd: f64) {
        let rode_out = self.riding.take();
        if let Some(ss) = rode_out {
            self.ssthresh = ss;
        }
        self.cwnd = cwnd.max(self.cfg.mss as f64);
        if let Some(w) = self.startup.after_recovery(&self.view(), self.retransmitted) {
            self.cwnd = w.cwnd.max(self.cfg.mss as f64);
            if let Some(s) = w.ssthresh {
                self.ssthresh = Ssthresh::Bytes(s.max(2.0 * self.cfg.mss as f64));
            }
        }
        if self.ssthresh.above(self.cwnd) {
            self.phase = Phase::SlowStart;
        } else {
            if rode_out.is_some() {
                self.leave_startup(now, ExitReason::Ssthresh);
            }
            self.enter_ca(now);
        }
    }

    /// RFC 2861 §3 after `rtos` whole RTOs of idle time: ssthresh = max(ssthresh, 3/4 cwnd), then
    /// cwnd halves once per RTO, not below the restart window `min(IW, cwnd)` (Linux
    /// `tcp_cwnd_restart`).
    pub fn on_idle_decay(&mut self, rtos: u64) {
        let restart = self.cwnd.min(self.cfg.initial_window as f64);
        if let Ssthresh::Bytes(s) = self.ssthresh {
            self.ssthresh = Ssthresh::Bytes(s.max(0.75 * self.cwnd));
        }
        for _ in 0..rtos.min(64) {
            if self.cwnd <= restart {
                break;
            }
            self.cwnd = (self.cwnd / 2.0).max(restart);
        }
        if self.ssthresh.above(self.cwnd) {
            self.phase = Phase::SlowStart;
        }
    }

    /// A response starts after an idle period on a connection whose fast startup acts per
    /// response (`tcp.startup_after_idle`; call after the idle restart set the restart window):
    /// startup again with ssthresh as at the connection's start, and the plug-in's
    /// [`StartupAlgorithm::on_restart`] with the smoothed RTT (none yet: slow start). The first
    /// startup's exit stays the one the results report.
    ///
    /// [`StartupAlgorithm::on_restart`]: crate::startup::StartupAlgorithm::on_restart
    pub fn restart_startup(&mut self, rtt: Option<Dur>, queued: Option<u64>, snd_max: u64) {
        self.ssthresh = self.cfg.initial_ssthresh;
        if !self.ssthresh.above(self.cwnd) {
            return;
        }
        self.phase = Phase::SlowStart;
        self.restarted = true;
        self.round_end = None;
        self.startup_pacing = None;
        self.pacing_start = None;
        self.send_limit = None;
        self.exit_when_sent = None;
        if let Some(rtt) = rtt {
            let action = self.startup.on_restart(&self.view(), rtt, queued, snd_max);
            self.apply(&action);
        }
    }

    /// RFC 5681 §4.1 restart after idle: cwnd = min(IW, cwnd).
    pub fn on_idle_restart(&mut self) {
        self.cwnd = self.cwnd.min(self.cfg.initial_window as f64);
        if self.ssthresh.above(self.cwnd) {
            self.phase = Phase::SlowStart;
        }
    }

    fn leave_startup(&mut self, now: Time, reason: ExitReason) {
        self.restarted = false;
        self.startup_pacing = None;
        self.pacing_start = None;
        self.send_limit = None;
        self.exit_when_sent = None;
        if self.exit.is_none() {
            self.exit = Some(StartupExit { time: now, reason, cwnd: self.cwnd });
        }
    }

    fn enter_ca(&mut self, now: Time) {
        self.phase = Phase::CongestionAvoidance;
        if self.entered_ca.is_none() {
            self.entered_ca = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avoidance::Reno;
    use crate::startup::SlowStart;
    use crate::testkit::MSS;

    /// Slow start over Reno (the test kit's controller).
    fn controller(iw: u64, ssthresh: Ssthresh) -> Controller {
        crate::testkit::controller(Startup::SlowStart(SlowStart::default()), iw, ssthresh)
    }

    fn ack(now_ms: u64, acked: u64, ack_seq: u64) -> AckEvent {
        AckEvent {
            now: Time(now_ms * 1_000_000),
            newly_acked: acked,
            ack_seq,
            snd_nxt: ack_seq,
            rtt: Some(Dur::from_millis(100)),
            flight_size: 0,
            cwnd_limited: true,
            acked_segments: 1,
            timer_triggered: false,
            delivered: ack_seq,
            rate_sample: None,
            ce_bytes: 0,
        }
    }

    #[test]
    fn slow_start_doubles_per_round_and_enters_avoidance_at_ssthresh() {
        // IW 1, ssthresh 64 segments, one ACK per segment: 2^k after k rounds (ALGORITHMS.md §1.7).
        let mut c = controller(1, Ssthresh::Bytes(64.0 * MSS as f64));
        let mut seq = 0;
        for round in 1..=6 {
            let segments = c.cwnd() as u64 / MSS;
            for _ in 0..segments {
                seq += MSS;
                c.on_ack(&ack(round * 100, MSS, seq));
            }
            assert_eq!(c.cwnd() as u64, MSS << round, "cwnd should double in round {round}");
        }
        assert_eq!(c.phase(), Phase::CongestionAvoidance, "64 segments reached after 6 rounds");
        let exit = c.startup_exit().expect("startup ended");
        assert_eq!(exit.reason, ExitReason::Ssthresh);
        assert_eq!(c.entered_ca(), Some(Time(600_000_000)));
    }

    #[test]
    fn avoidance_adds_about_one_segment_per_window() {
        let mut c = controller(10, Ssthresh::Bytes(10.0 * MSS as f64));
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
        for i in 0..10 {
            c.on_ack(&ack(1, MSS, (i + 1) * MSS));
        }
        let grown = c.cwnd() - 10.0 * MSS as f64;
        assert!(grown > 0.95 * MSS as f64 && grown <= MSS as f64, "grew {grown} bytes in one window");
    }

    #[test]
    fn fast_retransmit_halves_flight_and_records_loss_exit_once() {
        let mut c = controller(2, Ssthresh::Infinite);
        c.on_ack(&ack(1, MSS, MSS));
        c.cwnd = 32.0 * MSS as f64;
        c.on_congestion(&CongestionEvent {
            now: Time(5),
            kind: CongestionKind::FastRetransmit,
            flight_size: 30 * MSS,
            enter_recovery: true,
        });
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(15.0 * MSS as f64));
        assert_eq!(c.phase(), Phase::Recovery);
        let exit = c.startup_exit().unwrap();
        assert_eq!((exit.reason, exit.cwnd), (ExitReason::Loss, 32.0 * MSS as f64));
        let r = c.last_reduction().unwrap();
        assert_eq!((r.kind, r.cwnd_before, r.ssthresh_after), (CongestionKind::FastRetransmit, 32.0 * MSS as f64, 15.0 * MSS as f64));
        assert_eq!(c.entered_ca(), None, "t_su is the recovery exit, not the loss");
        c.on_congestion(&CongestionEvent { now: Time(9), kind: CongestionKind::Timeout, flight_size: 10 * MSS, enter_recovery: false });
        assert_eq!(c.startup_exit().unwrap().reason, ExitReason::Loss, "the exit is written once");
        assert_eq!(c.cwnd(), MSS as f64);
    }

    #[test]
    fn a_cumulative_jump_cannot_carry_byte_counting_past_ssthresh() {
        // ssthresh 36 segments, cwnd 2: one ACK covers 500 segments (as after a repaired hole).
        // Uncapped byte counting would add all of them; the window stops at ssthresh.
        let mut c = Controller::new(
            CcConfig {
                mss: MSS,
                initial_window: 2 * MSS,
                initial_ssthresh: Ssthresh::Bytes(36.0 * MSS as f64),
                loss_window: MSS,
                cwnd_validation: false,
                linux_ss_clamp: false,
            },
            Startup::Bc(crate::startup::Bc::new()),
            Avoidance::Reno(Reno::default()),
        );
        c.on_ack(&ack(2, 500 * MSS, 500 * MSS));
        assert_eq!(c.cwnd(), 36.0 * MSS as f64, "slow start ends at ssthresh, not 500 segments later");
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
    }

    #[test]
    fn a_flight_size_whose_half_exceeds_cwnd_is_taken_as_cwnd() {
        // SND.UNA behind a lost retransmission while the recovery sent on: FlightSize is 300
        // segments, cwnd 40. Halving FlightSize would raise ssthresh to 150; it is halved cwnd.
        // FlightSize 60 (half of it below cwnd) stands, as RFC 5681 writes it.
        let mut c = controller(2, Ssthresh::Infinite);
        c.cwnd = 40.0 * MSS as f64;
        c.on_congestion(&CongestionEvent { now: Time(1), kind: CongestionKind::FastRetransmit, flight_size: 300 * MSS, enter_recovery: true });
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(20.0 * MSS as f64));
        assert_eq!(c.reductions(), 1);
        let mut c = controller(2, Ssthresh::Infinite);
        c.cwnd = 40.0 * MSS as f64;
        c.on_congestion(&CongestionEvent { now: Time(1), kind: CongestionKind::FastRetransmit, flight_size: 60 * MSS, enter_recovery: true });
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(30.0 * MSS as f64));
    }

    #[test]
    fn a_timeout_during_recovery_never_raises_ssthresh() {
        let mut c = controller(2, Ssthresh::Infinite);
        c.cwnd = 100.0 * MSS as f64;
        c.on_congestion(&CongestionEvent { now: Time(1), kind: CongestionKind::FastRetransmit, flight_size: 100 * MSS, enter_recovery: true });
        c.on_congestion(&CongestionEvent { now: Time(2), kind: CongestionKind::Timeout, flight_size: 300 * MSS, enter_recovery: false });
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(50.0 * MSS as f64), "FlightSize grew during recovery; ssthresh must not");
        assert_eq!(c.cwnd(), MSS as f64);
    }

    #[test]
    fn rfc_2861_halves_cwnd_once_per_idle_rto_down_to_the_restart_window() {
        let mut c = controller(4, Ssthresh::Bytes(40.0 * MSS as f64));
        c.cwnd = 64.0 * MSS as f64;
        c.phase = Phase::CongestionAvoidance;
        c.on_idle_decay(3);
        assert_eq!(c.cwnd(), 8.0 * MSS as f64, "64 -> 32 -> 16 -> 8 after three RTOs");
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(48.0 * MSS as f64), "ssthresh keeps 3/4 of the old cwnd");
        assert_eq!(c.phase(), Phase::SlowStart);
        c.on_idle_decay(10);
        assert_eq!(c.cwnd(), 4.0 * MSS as f64, "never below min(IW, cwnd)");
    }

    #[test]
    fn a_first_flight_above_the_initial_ssthresh_ends_startup_without_a_hold() {
        // Paced Start shapes the first flight (a packet pair, send limit) in on_start; with an
        // initial ssthresh below it startup is over at once and nothing may stay held (found by
        // the invariants proptest: a 5-packet flow stalled after 4).
        let cfg = CcConfig { mss: MSS, initial_window: MSS, initial_ssthresh: Ssthresh::Bytes(2.0 * MSS as f64), loss_window: MSS, cwnd_validation: false, linux_ss_clamp: false };
        let past = crate::startup::PacedStart::new(crate::startup::PacedStartConfig::default());
        let c = Controller::new(cfg, Startup::PacedStart(past), Avoidance::Reno(Reno::default()));
        assert_eq!(c.phase(), Phase::CongestionAvoidance);
        assert_eq!(c.send_limit(), None);
        assert_eq!(c.pacing_rate(), None);
        assert_eq!(c.startup_exit().map(|e| e.reason), Some(ExitReason::Ssthresh));
    }

    #[test]
    fn ssthresh_never_falls_below_two_segments() {
        let mut c = controller(2, Ssthresh::Infinite);
        c.on_congestion(&CongestionEvent { now: Time(1), kind: CongestionKind::Timeout, flight_size: MSS, enter_recovery: false });
        assert_eq!(c.ssthresh(), Ssthresh::Bytes(2.0 * MSS as f64));
    }
}
