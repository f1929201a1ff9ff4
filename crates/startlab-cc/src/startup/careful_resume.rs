//! Careful Resume — RFC 9959 ("Convergence of Congestion Control from Retained State", Kuhn,
//! Stephan, Fairhurst, Secchi, Huitema), published from draft-ietf-tsvwg-careful-resume-24.
//!
//! A connection reuses the capacity (`saved_cwnd`) and minimum RTT (`saved_rtt`) an earlier
//! connection on the same path observed (§3.1). The phases (§3, Figure 1), as this plug-in runs
//! them over the lab's slow start (`cwnd += min(N, SMSS)` per ACK, RFC 5681):
//!
//! ```text
//! Reconnaissance (§3.2)  cwnd = IW, slow start; min RTT of the phase recorded
//!   congestion                                   -> Normal (normal CC reacts)
//!   ACK covering the initial data, sender cwnd-limited (§3.2 "Path confirmed", §4.2's deferral):
//!     nothing saved / Lifetime exceeded / minRTT <= saved_rtt/2 / minRTT > 10 saved_rtt
//!     / jump_cwnd <= cwnd                        -> Normal, cwnd untouched
//!     else PipeSize = flight_size, cwnd = jump_cwnd = min(max_jump, saved_cwnd/2),
//!          pace at jump_cwnd / current RTT       -> Unvalidated
//! Unvalidated (§3.3)     cwnd held; PipeSize += acked; pacing follows the current RTT
//!   loss or CE (or an RTT sample <= saved_rtt/2: path changed)   -> Safe Retreat
//!   window full / first unvalidated byte ACKed / more than one RTT in the phase:
//!     flight_size < IW or flight_size <= PipeSize -> cwnd = max(PipeSize, IW), Normal
//!     else cwnd = flight_size                     -> Validating
//! Validating (§3.4)      slow start; PipeSize += acked
//!   loss or CE                                   -> Safe Retreat
//!   ACK of the last byte sent while Unvalidated  -> Normal
//! Safe Retreat (§3.5)    saved set deleted; cwnd = PipeSize/2 (at least 2 SMSS), never raised;
//!                        PipeSize += acked
//!   the last byte sent before the retreat ACKed  -> ssthresh = PipeSize x beta, Normal
//! A timeout in Unvalidated or Validating (§3.6)  -> Normal CC's timeout response, set deleted
//! ```
//!
//! Observing (§3.1, §4.1) runs in Normal: per round (one flight, about an RTT), the bytes
//! delivered (cumulatively ACKed or SACKed) over the round's duration, counted only when the round
//! ends cwnd-limited; the saved rate is the largest, the saved RTT the connection's minimum. What a
//! connection leaves for the next one on its path ([`StartupAlgorithm::retained`]): its observation
//! if `rate × rtt >= save_min_iw × IW`; else nothing if it deleted its set; else the set it was
//! given. The simulator hands it to the user's next connection ([`StartupAlgorithm::seed`]); on a
//! persistent connection with `tcp.startup_after_idle` a response after idle resumes from the
//! connection's own observation ([`StartupAlgorithm::on_restart`]).
//!
//! NOTE (choices where RFC 9959 leaves room; docs/algorithms/careful-resume.md has them all):
//! the Safe Retreat of a TCP loss is its loss recovery — it starts with `ssthresh = cwnd =
//! PipeSize/2`, the recovery (SACK by default) runs, and its end (the ACK of everything
//! outstanding at the loss, which is the last byte sent while Unvalidated or Validating) ends the
//! retreat with `PipeSize` grown by what the recovery acknowledged less what it retransmitted. After
//! a CE echo there is no recovery: the retreat's window is `cwnd = ssthresh = PipeSize/2` in
//! congestion avoidance and its end re-opens slow start up to `PipeSize × beta`.

use crate::startup::{Detail, RecoveryWindow, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, Dur, Ssthresh, Time};

#[cfg(test)]
mod tests;

/// A set of saved CC parameters (RFC 9959 §3.1): the capacity as a rate, and the minimum RTT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SavedPath {
    /// The observed capacity, bits of payload per second.
    pub rate_bps: f64,
    /// The minimum RTT when it was observed.
    pub rtt: Dur,
    /// When it was observed (for the Lifetime); `None`: given by the scenario, fresh when the
    /// connection that uses it starts.
    pub saved_at: Option<Time>,
}

impl SavedPath {
    /// `saved_cwnd` in bytes: the rate over the saved RTT.
    pub fn cwnd(&self) -> f64 {
        self.rate_bps / 8.0 * self.rtt.as_secs_f64()
    }
}

/// What a connection leaves for the next connection on its path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PathMemory {
    /// No set of CC parameters (deleted, or nothing worth saving).
    Forget,
    /// This set.
    Save(SavedPath),
}

/// Configuration of [`CarefulResume`] (its declared parameters, resolved).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CarefulResumeConfig {
    /// The set of CC parameters the first connection on the path finds (`None`: nothing saved).
    pub saved: Option<SavedPath>,
    /// `max_jump` in bytes; `None`: no cap.
    pub max_jump: Option<f64>,
    /// `jump_cwnd = min(max_jump, jump_fraction × saved_cwnd)`; RFC 9959: at most 1/2.
    pub jump_fraction: f64,
    /// No jump when the Reconnaissance minimum RTT is at most `rtt_low × saved_rtt` (1/2).
    pub rtt_low: f64,
    /// No jump when it is above `rtt_high × saved_rtt` (10).
    pub rtt_high: f64,
    /// ssthresh on leaving Safe Retreat is `PipeSize × beta` (0.5).
    pub beta: f64,
    /// A saved set older than this is deleted unused.
    pub lifetime: Dur,
    /// An observation below this many bytes (`save_min_iw × IW`) is not saved.
    pub save_min: f64,
    /// The initial window in bytes.
    pub iw: f64,
}

impl CarefulResumeConfig {
    /// RFC 9959's values for a flow whose initial window is `iw` bytes, with `saved`.
    pub fn rfc(iw: f64, saved: Option<SavedPath>) -> Self {
        CarefulResumeConfig {
            saved,
            max_jump: None,
            jump_fraction: 0.5,
            rtt_low: 0.5,
            rtt_high: 10.0,
            beta: 0.5,
            lifetime: Dur::from_secs(300),
            save_min: 4.0 * iw,
            iw,
        }
    }
}

/// The phases of RFC 9959 §3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrPhase {
    /// §3.2: confirming the path, normal CC.
    Reconnaissance,
    /// §3.3: the jump, paced.
    Unvalidated,
    /// §3.4: waiting for the ACKs of the unvalidated data.
    Validating,
    /// §3.5: draining after congestion.
    SafeRetreat,
    /// Careful Resume over (or never used): normal CC.
    Normal,
}

impl CrPhase {
    fn name(self) -> &'static str {
        match self {
            CrPhase::Reconnaissance => "reconnaissance",
            CrPhase::Unvalidated => "unvalidated",
            CrPhase::Validating => "validating",
            CrPhase::SafeRetreat => "safe-retreat",
            CrPhase::Normal => "normal",
        }
    }
}

/// How a Safe Retreat ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RetreatEnd {
    /// At the end of the loss recovery that began it, which acknowledges `[from, end)` of the
    /// unvalidated bytes outstanding at the loss (`rtx`: bytes retransmitted on the connection by
    /// then).
    Recovery { from: u64, end: u64, rtx: u64 },
    /// When the cumulative ACK reaches this sequence number (ECN, or a path change on an ACK).
    Ack { seq: u64, ecn: bool },
}

/// The record of one Careful Resume attempt, for the results.
#[derive(Clone, Copy, Debug, Default)]
struct History {
    recon_exit: Option<&'static str>,
    unvalidated_exit: Option<&'static str>,
    retreat_cause: Option<&'static str>,
    normal_cause: Option<&'static str>,
    visited: [bool; 4],
    times: [Option<Time>; 4],
    jump: Option<f64>,
    recon_min_rtt: Option<Dur>,
    retreat_cwnd: Option<f64>,
    exit_ssthresh: Option<f64>,
    /// Normal began at the end of a recovery: its time is the next ACK's.
    normal_pending: bool,
}

/// Per-round delivery rates while observing (§3.1, §4.1).
#[derive(Clone, Copy, Debug, Default)]
struct Observer {
    round_end: Option<u64>,
    round_start: (Time, u64),
    /// Largest per-round delivery rate, bytes/s.
    best: f64,
    /// When a round last counted.
    at: Option<Time>,
}

impl Observer {
    fn on_ack(&mut self, ack: &AckEvent) {
        match self.round_end {
            Some(end) if ack.ack_seq < end => {}
            Some(_) => {
                let took = ack.now.saturating_since(self.round_start.0).as_secs_f64();
                if took > 0.0 && ack.cwnd_limited {
                    let rate = ack.delivered.saturating_sub(self.round_start.1) as f64 / took;
                    self.best = self.best.max(rate);
                    self.at = Some(ack.now);
                }
                self.start(ack);
            }
            None => self.start(ack),
        }
    }

    fn start(&mut self, ack: &AckEvent) {
        self.round_end = Some(ack.snd_nxt.max(ack.ack_seq + 1));
        self.round_start = (ack.now, ack.delivered);
    }
}

/// Careful Resume as a startup plug-in.
#[derive(Clone, Debug)]
pub struct CarefulResume {
    cfg: CarefulResumeConfig,
    phase: CrPhase,
    /// The set in use by this attempt.
    saved: Option<SavedPath>,
    /// The set was deleted (Safe Retreat, a timeout after the jump, Lifetime exceeded).
    forgot: bool,
    /// End of the initial data (SND.NXT on the attempt's first ACK).
    initial_end: Option<u64>,
    /// Latest RTT sample ("current RTT") and the connection's minimum.
    current_rtt: Option<Dur>,
    min_rtt: Option<Dur>,
    /// Highest cumulative ACK point and SND.NXT as of the last ACK seen.
    una: u64,
    nxt: u64,
    jump: f64,
    pipesize: f64,
    unvalidated_at: Time,
    first_unvalidated: u64,
    last_unvalidated: u64,
    retreat_cwnd: f64,
    retreat: Option<RetreatEnd>,
    history: History,
    obs: Observer,
    attempts: u64,
    jumps: u64,
}

impl CarefulResume {
    /// A Careful Resume with `cfg`; its first attempt uses `cfg.saved`.
    pub fn new(cfg: CarefulResumeConfig) -> CarefulResume {
        let mut cr = CarefulResume {
            cfg,
            phase: CrPhase::Reconnaissance,
            saved: None,
            forgot: false,
            initial_end: None,
            current_rtt: None,
            min_rtt: None,
            una: 0,
            nxt: 0,
            jump: 0.0,
            pipesize: 0.0,
            unvalidated_at: Time::ZERO,
            first_unvalidated: 0,
            last_unvalidated: 0,
            retreat_cwnd: 0.0,
            retreat: None,
            history: History::default(),
            obs: Observer::default(),
            attempts: 0,
            jumps: 0,
        };
        cr.begin(cfg.saved);
        cr
    }

    /// The current phase.
    pub fn phase(&self) -> CrPhase {
        self.phase
    }

    /// PipeSize (bytes).
    pub fn pipesize(&self) -> f64 {
        self.pipesize
    }

    /// A new attempt (a connection's start, or a response after idle) with `saved`.
    fn begin(&mut self, saved: Option<SavedPath>) {
        self.saved = saved;
        self.forgot = false;
        self.initial_end = None;
        self.retreat = None;
        self.history = History::default();
        self.attempts += 1;
        self.phase = CrPhase::Reconnaissance;
        if saved.is_none() {
            self.history.recon_exit = Some("no-saved-state");
            self.enter_normal(None, "no-saved-state");
        }
    }

    fn mark(&mut self, phase: CrPhase, now: Option<Time>) {
        self.phase = phase;
        let i = match phase {
            CrPhase::Unvalidated => 0,
            CrPhase::Validating => 1,
            CrPhase::SafeRetreat => 2,
            CrPhase::Normal => 3,
            CrPhase::Reconnaissance => return,
        };
        self.history.visited[i] = true;
        self.history.times[i] = now;
    }

    fn enter_normal(&mut self, now: Option<Time>, cause: &'static str) {
        self.retreat = None;
        self.history.normal_cause = Some(cause);
        self.mark(CrPhase::Normal, now);
    }

    /// Tracks the ACK's sequence numbers and RTT sample.
    fn track(&mut self, ack: &AckEvent) {
        self.una = self.una.max(ack.ack_seq);
        self.nxt = self.nxt.max(ack.snd_nxt);
        if let Some(r) = ack.rtt {
            self.current_rtt = Some(r);
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
    }

    /// Bytes this ACK newly acknowledges from those sent since the jump: PipeSize counts the
    /// flight at the jump once, then each unvalidated byte when it is acknowledged (Appendix B.2
    /// and B.4 read §3.3's rule so: 29 + 34 = 63 packets).
    fn newly_validated(&self, ack: &AckEvent) -> f64 {
        let before = ack.ack_seq - ack.newly_acked;
        ack.ack_seq.saturating_sub(before.max(self.first_unvalidated)) as f64
    }

    /// Normal slow start (RFC 5681): `min(N, SMSS)`.
    fn grow(view: &CcView, ack: &AckEvent) -> StartupAction {
        StartupAction::grow(ack.newly_acked.min(view.mss) as f64)
    }

    /// §3.2 "Path confirmed": the checks, then the jump or normal CC.
    fn confirm(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let grow = Self::grow(view, ack);
        let Some(saved) = self.saved else { return grow };
        let Some(min_rtt) = self.history.recon_min_rtt else {
            // No RTT sample yet (Karn): wait for one.
            return grow;
        };
        let saved_at = saved.saved_at.unwrap_or(ack.now);
        let ratio = min_rtt.as_secs_f64() / saved.rtt.as_secs_f64();
        let jump = (self.cfg.jump_fraction * saved.cwnd()).min(self.cfg.max_jump.unwrap_or(f64::INFINITY));
        let refusal = if ack.now.saturating_since(saved_at) > self.cfg.lifetime {
            self.forget();
            Some("lifetime-expired")
        } else if ratio <= self.cfg.rtt_low {
            Some("rtt-too-small")
        } else if ratio > self.cfg.rtt_high {
            Some("rtt-too-large")
        } else if jump <= view.cwnd + grow.increase {
            Some("cwnd-above-jump")
        } else if matches!(view.ssthresh, Ssthresh::Bytes(s) if jump >= s) {
            Some("jump-above-ssthresh")
        } else {
            None
        };
        if let Some(why) = refusal {
            self.history.recon_exit = Some(why);
            self.enter_normal(Some(ack.now), why);
            return grow;
        }
        // §3.3 on entry: PipeSize = flight_size, cwnd = jump_cwnd; pacing on the current RTT.
        self.history.recon_exit = Some("jump");
        self.history.jump = Some(jump);
        self.jumps += 1;
        self.jump = jump;
        self.pipesize = ack.flight_size as f64;
        self.unvalidated_at = ack.now;
        self.first_unvalidated = ack.snd_nxt;
        self.mark(CrPhase::Unvalidated, Some(ack.now));
        StartupAction { set_cwnd: Some(jump), pacing_rate: Some(self.pacing_rate(min_rtt)), ..StartupAction::default() }
    }

    /// §4.3.2: `jump_cwnd` per current RTT (payload bytes per second).
    fn pacing_rate(&self, fallback: Dur) -> f64 {
        let rtt = self.current_rtt.unwrap_or(fallback).as_secs_f64().max(1e-9);
        self.jump / rtt
    }

    /// An ACK in the Unvalidated Phase.
    fn unvalidated(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.pipesize += self.newly_validated(ack);
        let saved_rtt = self.saved.map_or(Dur::ZERO, |s| s.rtt);
        if ack.rtt.is_some_and(|r| r.as_secs_f64() <= self.cfg.rtt_low * saved_rtt.as_secs_f64()) {
            // §3.3 "Confirming the path during transmission": the RTT changed.
            let cwnd = self.enter_retreat(view, ack.now, "path-changed");
            self.retreat = Some(RetreatEnd::Ack { seq: self.nxt, ecn: false });
            return StartupAction { set_cwnd: Some(cwnd), pacing_rate: Some(0.0), ..StartupAction::default() };
        }
        let flight_before = ack.snd_nxt.saturating_sub(ack.ack_seq - ack.newly_acked);
        let trigger = if flight_before + view.mss > self.jump as u64 {
            Some("window-full")
        } else if ack.ack_seq > self.first_unvalidated {
            Some("first-unvalidated-acked")
        } else if self.current_rtt.is_some_and(|r| ack.now.saturating_since(self.unvalidated_at) > r) {
            Some("rtt-exceeded")
        } else {
            None
        };
        let Some(trigger) = trigger else {
            return StartupAction { pacing_rate: Some(self.pacing_rate(saved_rtt)), ..StartupAction::default() };
        };
        self.history.unvalidated_exit = Some(trigger);
        // §3.3 "Check flight_size".
        let flight = ack.flight_size as f64;
        if flight < self.cfg.iw || flight <= self.pipesize {
            self.enter_normal(Some(ack.now), "rate-limited");
            let cwnd = self.pipesize.max(self.cfg.iw);
            return StartupAction { set_cwnd: Some(cwnd), pacing_rate: Some(0.0), ..StartupAction::default() };
        }
        self.last_unvalidated = ack.snd_nxt;
        self.mark(CrPhase::Validating, Some(ack.now));
        StartupAction { set_cwnd: Some(flight), pacing_rate: Some(0.0), ..StartupAction::default() }
    }

    /// §3.5 on entry: the set is deleted and cwnd becomes PipeSize/2 (at least 2 SMSS). Returns it.
    fn enter_retreat(&mut self, view: &CcView, now: Time, cause: &'static str) -> f64 {
        self.forget();
        self.retreat_cwnd = (self.pipesize / 2.0).max(2.0 * view.mss as f64);
        self.history.retreat_cause = Some(cause);
        self.history.retreat_cwnd = Some(self.retreat_cwnd);
        self.mark(CrPhase::SafeRetreat, Some(now));
        self.retreat_cwnd
    }

    /// §3.5 on leaving: ssthresh = PipeSize × beta.
    fn leave_retreat(&mut self, now: Option<Time>) -> f64 {
        let ss = self.pipesize * self.cfg.beta;
        self.history.exit_ssthresh = Some(ss);
        self.enter_normal(now, "retreat-done");
        ss
    }

    /// The saved set is deleted (§3.5), and with it what this connection observed before: only
    /// what it observes from now on may be saved again (§4.6).
    fn forget(&mut self) {
        self.forgot = true;
        self.obs = Observer::default();
    }

    /// An ACK in Normal: observing.
    fn normal_ack(&mut self, ack: &AckEvent) {
        if std::mem::take(&mut self.history.normal_pending) {
            self.history.times[3] = Some(ack.now);
        }
        self.obs.on_ack(ack);
    }

    /// An ACK outside recovery while an ECN- or ACK-begun Safe Retreat runs: `Some(ssthresh)` when
    /// it ends.
    fn retreat_ack(&mut self, ack: &AckEvent) -> Option<f64> {
        self.pipesize += self.newly_validated(ack);
        match self.retreat {
            Some(RetreatEnd::Ack { seq, .. }) if ack.ack_seq >= seq => Some(self.leave_retreat(Some(ack.now))),
            Some(RetreatEnd::Recovery { .. }) => {
                // An ACK outside recovery while the retreat waited for the recovery's end: the
                // recovery ended without it (a timeout took over).
                self.enter_normal(Some(ack.now), "timeout");
                None
            }
            _ => None,
        }
    }

    /// What this connection leaves for the next one on its path.
    pub fn memory(&self) -> PathMemory {
        let obs = self.observation();
        match obs {
            Some(p) if p.cwnd() >= self.cfg.save_min => PathMemory::Save(p),
            _ if self.forgot => PathMemory::Forget,
            _ => self.saved.map_or(PathMemory::Forget, PathMemory::Save),
        }
    }

    /// The connection's own observation, if it has one.
    fn observation(&self) -> Option<SavedPath> {
        let rtt = self.min_rtt?;
        (self.obs.best > 0.0).then_some(SavedPath { rate_bps: self.obs.best * 8.0, rtt, saved_at: self.obs.at })
    }
}

impl StartupAlgorithm for CarefulResume {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.track(ack);
        match self.phase {
            CrPhase::Normal => {
                self.normal_ack(ack);
                Self::grow(view, ack)
            }
            CrPhase::Reconnaissance => {
                if self.initial_end.is_none() {
                    // A set the scenario gave is as old as the connection that first uses it.
                    if let Some(s) = self.saved.as_mut() {
                        s.saved_at.get_or_insert(ack.now);
                    }
                }
                let end = *self.initial_end.get_or_insert(ack.snd_nxt);
                if let Some(r) = ack.rtt {
                    self.history.recon_min_rtt = Some(self.history.recon_min_rtt.map_or(r, |m| m.min(r)));
                }
                // §3.2 / §4.2: a rate-limited sender may stay here until it has more to send than
                // normal CC allows.
                if ack.ack_seq >= end && ack.cwnd_limited {
                    self.confirm(view, ack)
                } else {
                    Self::grow(view, ack)
                }
            }
            CrPhase::Unvalidated => self.unvalidated(view, ack),
            CrPhase::Validating => {
                self.pipesize += self.newly_validated(ack);
                if ack.ack_seq >= self.last_unvalidated {
                    self.enter_normal(Some(ack.now), "validated");
                }
                Self::grow(view, ack)
            }
            CrPhase::SafeRetreat if matches!(self.retreat, Some(RetreatEnd::Ack { ecn: true, .. })) => {
                // Slow start again while a CE echo's retreat ran in congestion avoidance: only a
                // timeout (which the plug-in does not see outside slow start) brings that.
                self.enter_normal(Some(ack.now), "timeout");
                Self::grow(view, ack)
            }
            CrPhase::SafeRetreat => match self.retreat_ack(ack) {
                Some(ss) => StartupAction { set_ssthresh: Some(ss), ..StartupAction::default() },
                // §3.5 "Maintaining CWND": not increased.
                None if self.phase == CrPhase::SafeRetreat => StartupAction::default(),
                None => Self::grow(view, ack),
            },
        }
    }

    fn on_restart(&mut self, _view: &CcView, _rtt: Dur, _queued: Option<u64>, _snd_max: u64) -> StartupAction {
        // A response after idle on a persistent connection resumes from what the connection
        // itself observed (or the set it still holds).
        let saved = match self.memory() {
            PathMemory::Save(p) => Some(p),
            PathMemory::Forget => None,
        };
        self.obs.round_end = None;
        self.begin(saved);
        StartupAction::default()
    }

    fn loss_ssthresh(&mut self, view: &CcView, ev: &CongestionEvent, retransmitted: u64) -> Option<f64> {
        match self.phase {
            CrPhase::Normal => None,
            CrPhase::Reconnaissance => {
                // §3.2 "Detected congestion": normal CC reacts, Careful Resume is not used.
                self.history.recon_exit = Some("congestion");
                self.enter_normal(Some(ev.now), "congestion");
                None
            }
            CrPhase::Unvalidated | CrPhase::Validating | CrPhase::SafeRetreat => {
                if ev.kind == CongestionKind::Timeout || (!ev.enter_recovery && ev.kind != CongestionKind::Ecn) {
                    // §3.6: persistent congestion (or Tahoe's collapse) ends Careful Resume; normal
                    // CC's response. The set failed to validate: deleted.
                    self.forget();
                    self.enter_normal(Some(ev.now), "timeout");
                    return None;
                }
                let cwnd = if self.phase == CrPhase::SafeRetreat {
                    self.retreat_cwnd
                } else {
                    let cause = if ev.kind == CongestionKind::Ecn { "ecn" } else { "loss" };
                    self.enter_retreat(view, ev.now, cause)
                };
                self.retreat = Some(if ev.kind == CongestionKind::Ecn {
                    RetreatEnd::Ack { seq: self.nxt.max(self.una + ev.flight_size), ecn: true }
                } else {
                    RetreatEnd::Recovery { from: self.una.max(self.first_unvalidated), end: self.una + ev.flight_size, rtx: retransmitted }
                });
                Some(cwnd)
            }
        }
    }

    fn after_recovery(&mut self, view: &CcView, retransmitted: u64) -> Option<RecoveryWindow> {
        let Some(RetreatEnd::Recovery { from, end, rtx }) = self.retreat else { return None };
        // The recovery acknowledged everything outstanding at the loss; what it retransmitted
        // was not delivered by the first transmission.
        let delivered = end.saturating_sub(from).saturating_sub(retransmitted.saturating_sub(rtx));
        self.pipesize += delivered as f64;
        let ss = self.leave_retreat(None);
        self.history.normal_pending = true;
        Some(RecoveryWindow { cwnd: view.cwnd.min(self.retreat_cwnd), ssthresh: Some(ss) })
    }

    fn reopen(&mut self, view: &CcView, ack: &AckEvent) -> Option<f64> {
        self.track(ack);
        match self.phase {
            CrPhase::Normal => {
                self.normal_ack(ack);
                None
            }
            CrPhase::SafeRetreat => {
                let set = self.retreat_cwnd.max(2.0 * view.mss as f64);
                let ss = self.retreat_ack(ack)?;
                // Only if no later reduction replaced the retreat's ssthresh.
                let untouched = matches!(view.ssthresh, Ssthresh::Bytes(s) if (s - set).abs() < 1e-6);
                (untouched && ss > view.cwnd).then_some(ss)
            }
            _ => None,
        }
    }

    fn report(&self) -> Vec<(&'static str, Detail)> {
        let h = &self.history;
        let mut out = vec![("cr_path", Detail::Text(path_name(h.visited, self.phase))), ("cr_phase", Detail::Text(self.phase.name()))];
        let texts = [("cr_recon_exit", h.recon_exit), ("cr_unvalidated_exit", h.unvalidated_exit), ("cr_retreat_cause", h.retreat_cause), ("cr_normal_cause", h.normal_cause)];
        out.extend(texts.into_iter().filter_map(|(k, v)| v.map(|v| (k, Detail::Text(v)))));
        if let Some(s) = self.saved {
            out.push(("cr_saved_rate", Detail::Num(s.rate_bps)));
            out.push(("cr_saved_rtt", Detail::Num(s.rtt.as_secs_f64())));
        }
        let secs = |t: Option<Time>| t.map(|t| t.as_secs_f64());
        let nums = [
            ("cr_recon_min_rtt", h.recon_min_rtt.map(|d| d.as_secs_f64())),
            ("cr_jump_cwnd", h.jump),
            ("cr_t_unvalidated", secs(h.times[0])),
            ("cr_t_validating", secs(h.times[1])),
            ("cr_t_retreat", secs(h.times[2])),
            ("cr_t_normal", secs(h.times[3])),
            ("cr_retreat_cwnd", h.retreat_cwnd),
            ("cr_exit_ssthresh", h.exit_ssthresh),
            ("cr_pipesize", h.visited[0].then_some(self.pipesize)),
        ];
        out.extend(nums.into_iter().filter_map(|(k, v)| v.map(|v| (k, Detail::Num(v)))));
        out.push(("cr_attempts", Detail::Num(self.attempts as f64)));
        out.push(("cr_jumps", Detail::Num(self.jumps as f64)));
        match self.memory() {
            PathMemory::Save(p) => {
                out.push(("cr_retained", Detail::Text(if Some(p) == self.observation() { "observed" } else { "kept" })));
                out.push(("cr_retained_rate", Detail::Num(p.rate_bps)));
                out.push(("cr_retained_rtt", Detail::Num(p.rtt.as_secs_f64())));
            }
            PathMemory::Forget => out.push(("cr_retained", Detail::Text("none"))),
        }
        out
    }

    fn retained(&self) -> Option<PathMemory> {
        Some(self.memory())
    }

    fn seed(&mut self, saved: Option<SavedPath>) {
        self.attempts = 0;
        self.jumps = 0;
        self.begin(saved);
    }
}

/// The phases an attempt went through, as one name (`reconnaissance>unvalidated>validating>normal`).
fn path_name(visited: [bool; 4], phase: CrPhase) -> &'static str {
    const NAMES: [&str; 16] = [
        "reconnaissance",
        "reconnaissance>unvalidated",
        "reconnaissance>validating",
        "reconnaissance>unvalidated>validating",
        "reconnaissance>safe-retreat",
        "reconnaissance>unvalidated>safe-retreat",
        "reconnaissance>validating>safe-retreat",
        "reconnaissance>unvalidated>validating>safe-retreat",
        "reconnaissance>normal",
        "reconnaissance>unvalidated>normal",
        "reconnaissance>validating>normal",
        "reconnaissance>unvalidated>validating>normal",
        "reconnaissance>safe-retreat>normal",
        "reconnaissance>unvalidated>safe-retreat>normal",
        "reconnaissance>validating>safe-retreat>normal",
        "reconnaissance>unvalidated>validating>safe-retreat>normal",
    ];
    let bits = visited.iter().enumerate().fold(0, |acc, (i, v)| acc | (usize::from(*v) << i));
    debug_assert!(phase == CrPhase::Normal || bits < 8);
    NAMES[bits]
}

use crate::decl::{AlgorithmInfo, Param, ParamError, Range};

/// `saved_rate` of `startup = { algorithm = "careful-resume", ... }`.
pub const SAVED_RATE: Param<f64> = Param::rate(
    "saved_rate",
    "0bps",
    "the capacity an earlier connection on this path observed (saved_cwnd = saved_rate x saved_rtt); \"0bps\": nothing saved. Seeds the first connection; later connections of a [[users]] user carry their own",
);
/// `saved_rtt`.
pub const SAVED_RTT: Param<Dur> = Param::duration("saved_rtt", "0s", "the minimum RTT saved with saved_rate; positive, required with it");
/// `max_jump`.
pub const MAX_JUMP: Param<u64> = Param::window("max_jump", "0B", "max_jump: cap on jump_cwnd; \"0B\": no cap");
/// `jump_fraction`.
pub const JUMP_FRACTION: Param<f64> =
    Param::number("jump_fraction", "0.5", "jump_cwnd = min(max_jump, jump_fraction x saved_cwnd); RFC 9959: at most 1/2").range(Range::Between(0.0, 0.5));
/// `rtt_low`.
pub const RTT_LOW: Param<f64> =
    Param::number("rtt_low", "0.5", "no jump when the Reconnaissance min RTT is at most rtt_low x saved_rtt (RFC 9959: 1/2); after the jump, an RTT sample that low is a path change").range(Range::Between(0.0, 1.0));
/// `rtt_high`.
pub const RTT_HIGH: Param<f64> = Param::number("rtt_high", "10", "no jump when the Reconnaissance min RTT is above rtt_high x saved_rtt (RFC 9959: 10)").range(Range::AtLeast(1.0));
/// `beta`.
pub const BETA: Param<f64> = Param::number("beta", "0.5", "ssthresh = PipeSize x beta on leaving Safe Retreat (RFC 9959: 0.5 to 1, default 0.5)").range(Range::Between(0.5, 1.0));
/// `lifetime`.
pub const LIFETIME: Param<Dur> = Param::duration("lifetime", "5min", "a saved set older than this is deleted unused (RFC 9959 §4.3.1 leaves it to configuration); positive");
/// `save_min_iw`.
pub const SAVE_MIN_IW: Param<f64> =
    Param::number("save_min_iw", "4", "an observation whose rate x RTT is below save_min_iw x IW is not saved (RFC 9959 §3.1: 4)").range(Range::AtLeast(0.0));

/// The declaration of `careful-resume` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "careful-resume",
        role: "startup",
        summary: "Careful Resume: Reconnaissance (slow start, RTT check against saved_rtt), then cwnd = saved_rate x saved_rtt / 2 paced over the current RTT (Unvalidated), Validating until those bytes are ACKed; on loss or CE Safe Retreat (cwnd = PipeSize/2, then ssthresh = PipeSize x beta); [[users]] connections carry the saved rate and RTT to the next",
        source: "RFC 9959 (draft-ietf-tsvwg-careful-resume-24)",
        params: &[SAVED_RATE.info, SAVED_RTT.info, MAX_JUMP.info, JUMP_FRACTION.info, RTT_LOW.info, RTT_HIGH.info, BETA.info, LIFETIME.info, SAVE_MIN_IW.info],
    },
    build: super::Build::Native(|p, cx| {
        let iw = (cx.initial_window * cx.mss) as f64;
        let (rate, rtt) = (p.get(&SAVED_RATE), p.get(&SAVED_RTT));
        let saved = (rate > 0.0 && rtt > Dur::ZERO).then_some(SavedPath { rate_bps: rate, rtt, saved_at: None });
        let max_jump = p.get(&MAX_JUMP);
        super::Startup::CarefulResume(CarefulResume::new(CarefulResumeConfig {
            saved,
            max_jump: (max_jump > 0).then_some(max_jump as f64),
            jump_fraction: p.get(&JUMP_FRACTION),
            rtt_low: p.get(&RTT_LOW),
            rtt_high: p.get(&RTT_HIGH),
            beta: p.get(&BETA),
            lifetime: p.get(&LIFETIME),
            save_min: p.get(&SAVE_MIN_IW) * iw,
            iw,
        }))
    }),
    check: |p, _, given| {
        let (rate, rtt) = (p.get(&SAVED_RATE), p.get(&SAVED_RTT));
        if given("saved_rtt") && rtt == Dur::ZERO {
            return Err(ParamError::new("saved_rtt", "\"0s\" is not a saved RTT; expected a positive duration such as \"100ms\""));
        }
        if rate > 0.0 && rtt == Dur::ZERO {
            return Err(ParamError::new("saved_rtt", "is required with saved_rate (saved_cwnd = saved_rate x saved_rtt); expected a positive duration such as \"100ms\""));
        }
        if given("saved_rtt") && rate == 0.0 {
            return Err(ParamError::new("saved_rate", "is required with saved_rtt; expected a positive rate such as \"100Mbps\""));
        }
        if p.get(&LIFETIME) == Dur::ZERO {
            return Err(ParamError::new("lifetime", "must be positive (a saved set is used only while younger than it)"));
        }
        Ok(())
    },
    per_response: true,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};
