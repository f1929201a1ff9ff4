//! The TCP sender: handshake, segmentation, RFC 6298 retransmission timer with Karn's rule and
//! backoff, Limited Transmit (RFC 3042), and loss recovery Tahoe, Reno (RFC 5681 §3.2), NewReno
//! (RFC 6582) and SACK (RFC 6675), all as ALGORITHMS.md §2 resolves them. Window arithmetic is
//! delegated to the sans-IO [`Controller`] of `startlab-cc`.
//!
//! The sender is made of parts, each with its own state type and file:
//!
//! - **scoreboard** (`scoreboard.rs`): per-segment state of `[SND.UNA, SND.MAX)`, the SACKed runs
//!   (O(log n) [`RangeSet`](crate::ranges::RangeSet) work), IsLost() and SetPipe(), RACK-TLP's
//!   loss marks; `sack.rs` reads ACKs into it and runs NextSeg() from it.
//! - **transmit** (`transmit.rs`, `pacer.rs`): what goes on the wire next, and the pacer's release.
//! - **ACK processing** (`ack.rs`) and **loss events** (`loss.rs`): the cumulative ACK point,
//!   duplicate ACKs and fast retransmit, the retransmission timeout.
//! - **loss detection**: DupThresh (`dupthresh.rs`, over any set of acknowledged numbers) and
//!   RACK (`rack.rs`, over send times); `rack_tlp.rs` runs RACK-TLP on this sender.
//! - **window reduction**: the controller halves (`startlab-cc`); PRR (`prr.rs`), ns-3's PRR and
//!   ns-2's Sack1 pipe (`ns3.rs`, `ns2.rs`) set cwnd through the episode.
//! - **signals**: Quick-Start (`quick_start.rs`) and ECN (`ecn.rs`).
//!
//! The loss-detection and window-reduction parts take transport-neutral inputs (numbers, byte
//! counts, send times) so that a packet-number transport can run them; each file says how.

use crate::{AccEcnFeedback, Ack, EcnMode, IpEcn, RtoConfig, RtoEstimator};
use startlab_cc::startup::{QsRequest, QuickStartEvent};
use startlab_cc::{AckEvent, CongestionEvent, CongestionKind, Controller, Phase, RateSample};
use startlab_units::{Dur, Time};
use scoreboard::SegMeta;
pub use variant::{PrrBound, Recovery};

/// Sender configuration.
#[derive(Clone, Copy, Debug)]
pub struct SenderConfig {
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// Bytes to transfer; `None` for an infinite (long-lived) transfer.
    pub size: Option<u64>,
    /// Loss recovery.
    pub recovery: Recovery,
    /// Retransmission timer.
    pub rto: RtoConfig,
    /// RFC 3042 Limited Transmit.
    pub limited_transmit: bool,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681: 3).
    pub dupthresh: u32,
    /// Open with a SYN / SYN-ACK exchange before sending data.
    pub handshake: bool,
    /// RFC 6582 §4.1 "Impatient" timer: restart the RTO only on the first partial ACK (default);
    /// false is "Slow-but-Steady" (restart on every partial ACK).
    pub newreno_impatient: bool,
    /// Always pace (ALGORITHMS.md §0.6 Linux-like: `ratio·cwnd/srtt`, ratio 2 while
    /// `cwnd < ssthresh/2`, else 1.2). A startup plug-in's own rate takes precedence.
    pub pacing: bool,
    /// Ask for Quick-Start (RFC 4782) with this Rate Request option (rate code, random QS TTL and
    /// nonce, drawn by the driver): the SYN carries it, or the first data segment without a
    /// handshake. The echo is checked here and the verdict goes to the controller.
    pub quick_start: Option<QsRequest>,
    /// Use ECN (RFC 3168, ALGORITHMS.md §17.3): negotiated in the handshake (SYN with ECE+CWR,
    /// SYN-ACK with ECE), assumed agreed without one. With [`EcnMode::L4s`] new data is ECT(1)
    /// (RFC 9331 §4) and the feedback Accurate ECN (RFC 9768): the SYN asks with AE+CWR+ECE and a
    /// SYN-ACK whose ACE agrees (§3.1.1, Table 2) settles it; one that answers classic ECN
    /// (ECE alone) gives classic ECN (ECT(0) data), as RFC 9768 §3.1.1 has a client do.
    pub ecn: EcnMode,
    /// The application hands data over in pieces ([`Sender::push`]) instead of all at once.
    pub app_limited: bool,
    /// What happens to cwnd when data comes after an idle period longer than the RTO.
    pub idle_restart: IdleRestart,
    /// Per-response fast startups: a response handed over after an idle period longer than the
    /// RTO starts the startup again ([`Controller::restart_startup`]; Quick-Start sends a new
    /// request on the response's first segment).
    ///
    /// [`Controller::restart_startup`]: startlab_cc::Controller::restart_startup
    pub startup_after_idle: bool,
    /// The fast startup (and a Quick-Start request) applies only to responses larger than this
    /// many bytes (0: every response). It governs the first response's Quick-Start request too,
    /// which then rides on the first data segment rather than the SYN.
    pub startup_min_response: u64,
}

/// The window after an idle period (no data in flight, nothing sent for more than an RTO).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleRestart {
    /// RFC 5681 §4.1: `cwnd = min(IW, cwnd)`.
    Rfc5681,
    /// RFC 2861 §3: ssthresh = max(ssthresh, 3/4 cwnd), then cwnd halves once per RTO of idle
    /// time, not below `min(IW, cwnd)`.
    Rfc2861,
    /// Keep cwnd.
    Off,
}

/// What kind of segment the sender emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// Handshake SYN (no payload).
    Syn,
    /// Data.
    Data,
}

/// A segment to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Kind.
    pub kind: SegmentKind,
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// True if these bytes were sent before.
    pub retransmit: bool,
    /// Quick-Start Rate Request option carried by this segment.
    pub qs: Option<QsRequest>,
    /// IP ECN field: ECT(0) (classic) or ECT(1) (L4S) on new data of an ECN connection, Not-ECT on
    /// retransmissions and SYNs (RFC 3168 §6.1.5) and without ECN.
    pub ecn: IpEcn,
    /// TCP ECE flag: set on an ECN-setup SYN (with CWR).
    pub ece: bool,
    /// TCP AE flag: set, with CWR and ECE, on a SYN that asks for Accurate ECN (RFC 9768 §3.1.1).
    pub ae: bool,
    /// TCP CWR flag: the first new data segment after an ECN window reduction, or an ECN-setup SYN.
    pub cwr: bool,
}

/// Counters a sender keeps for the results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments sent, retransmissions included.
    pub packets_sent: u64,
    /// Data segments sent again.
    pub retransmissions: u64,
    /// Retransmission timer expiries with data outstanding.
    pub timeouts: u64,
    /// Loss-recovery episodes entered by duplicate ACKs or SACK (Tahoe's included).
    pub fast_retransmits: u64,
    /// SYN retransmissions.
    pub syn_retransmits: u64,
    /// ACKs that carried ECE, or AccECN feedback with newly CE-marked bytes.
    pub ece_acks: u64,
    /// Window reductions in answer to ECE or to AccECN's newly CE-marked bytes (at most one per
    /// window of data).
    pub ecn_reductions: u64,
    /// Payload bytes the Accurate ECN feedback reported CE-marked (RFC 9768; 0 without AccECN).
    pub ce_bytes: u64,
    /// Retransmissions the sender found lost again without a timeout (RACK-TLP).
    pub lost_retransmits: u64,
    /// Tail loss probes sent (RACK-TLP).
    pub tlp_probes: u64,
    /// Time spent in loss recovery up to the last episode that ended: from the start of a fast
    /// recovery, or from a timeout, until the cumulative ACK covers what was sent before it
    /// ([`Sender::recovery_time`] adds an episode still open).
    pub recovery_time: Dur,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handshake {
    Closed,
    SynSent { at: Time, retransmitted: bool },
    Established,
}

/// A TCP sender.
///
/// Layout: with many flows taking turns, every ACK finds its sender's state cold, so the fields
/// are in declaration order (`repr(C)`, starting on a cache line) with what every ACK and every
/// send reads first — the sequence space, the timers' deadlines, the configuration, the RTT
/// estimator, the scoreboard's head, the two counters every send updates, then the controller,
/// whose own hot part leads — and what only a recovery in progress, a recovery variant that is
/// off, the handshake or the results read last.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Sender {
    // The sequence space and transmission.
    /// SND.UNA: the cumulative ACK point.
    snd_una: u64,
    /// SND.NXT: the next byte to send (below `snd_max` after a timeout or Tahoe: go-back-N).
    snd_nxt: u64,
    /// One past the highest byte ever sent (`HighData + 1`).
    snd_max: u64,
    /// The receiver's advertised window.
    rwnd: u64,
    /// Bytes delivered (cumulatively ACKed or SACKed) and when that count last grew.
    delivered: u64,
    delivered_time: Time,
    /// One past the highest retransmitted byte in this SACK episode (`HighRxt + 1`).
    high_rxt: u64,
    /// RFC 6675 `pipe` in a recovery episode of the scoreboard variants: SetPipe() at the last
    /// ACK plus what was sent since.
    pipe: u64,
    /// Bytes sent by Limited Transmit since the last advance (not counted in FlightSize at entry).
    lt_sent: u64,
    /// Last data transmission (for the idle restart).
    last_send: Time,
    /// With `app_limited`: bytes the application has handed over so far (read with the
    /// configuration's `size` for the end of the data).
    app_limit: u64,
    /// The retransmission timer.
    rto_deadline: Option<Time>,
    completed_at: Option<Time>,
    first_data: Option<Time>,
    /// A retransmission chosen to go out next (fast retransmit, a partial ACK's hole).
    rtx_pending: Option<u64>,
    /// When the recovery in progress (fast, or after a timeout) began.
    recovery_since: Option<Time>,
    /// NewReno/Tahoe `recover` and SACK `RecoveryPoint`, as one past the highest byte (exclusive).
    recover: Option<u64>,
    handshake: Handshake,
    /// Duplicate ACKs since the last advance.
    dupacks: u32,
    /// Backoffs since the last valid sample / forward progress (first expiry sets ssthresh).
    timeout_streak: u32,
    in_recovery: bool,
    /// The application has data from now on ([`Sender::start`]).
    started: bool,
    /// A timeout's recovery is in progress: the cumulative ACK has not yet covered what was
    /// sent before the timeout.
    rto_loss: bool,
    /// The SYN was retransmitted (the next SYN is marked so; Karn's rule for its RTT).
    syn_retransmitted: bool,
    /// ns-3's flags beside PRR's counters (`Ns3Prr`).
    ns3: ns3::Ns3State,
    cfg: SenderConfig,
    rtt: RtoEstimator,
    /// The pacer's release times.
    pacer: pacer::Pacer,
    /// ECN's agreement, reduction window and CWR mark.
    ecn: ecn::EcnState,
    /// The Quick-Start request and its verdict.
    qs: quick_start::QuickStartState,
    /// The RFC 6675 scoreboard of `[snd_una, snd_max)`, with RACK-TLP's marks.
    sb: scoreboard::Scoreboard,
    /// [`SenderStats::packets_sent`] and [`SenderStats::retransmissions`], kept with the fields
    /// every send writes (the other counters change rarely: `stats`).
    packets_sent: u64,
    retransmissions: u64,
    cc: Controller,
    // Read only by the variants that use them, in a recovery, or once.
    /// The counters but `packets_sent` and `retransmissions` (see [`Sender::stats`]).
    stats: SenderStats,
    /// Proportional Rate Reduction's counters for the current episode (`Prr`, `Linux`, `Ns3Prr`).
    prr: prr::Prr,
    /// ns-2 Sack1's `pipe` counter (`Sack1`).
    sack1: ns2::Sack1State,
    /// RACK's detector (`RackTlp`, `Linux`).
    rack: rack::Rack,
    /// RACK-TLP's tail loss probe (`RackTlp`, `Linux`).
    tlp: rack_tlp::Tlp,
    /// RFC 6675 `RescueRxt`: the `recover` of the episode's rescue retransmission.
    rescue_rxt: Option<u64>,
    /// With `app_limited`: the handshake's RTT sample, held until the application hands over the
    /// first response so that the startup sizes its first flight on it (Jump-Start's `D`).
    handshake_rtt: Option<Dur>,
    /// NewReno's partial ACKs in this episode (RFC 6582 §4.1 Impatient timer).
    partial_acks: u32,
}

mod ack;
pub(crate) mod dupthresh;
mod ecn;
mod loss;
mod ns2;
mod ns3;
pub(crate) mod pacer;
pub(crate) mod prr;
mod quick_start;
pub(crate) mod rack;
mod rack_tlp;
mod sack;
mod scoreboard;
mod transmit;
mod variant;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

impl Sender {
    /// A sender that starts when [`Sender::start`] is called.
    pub fn new(cfg: SenderConfig, cc: Controller) -> Self {
        debug_assert!(cfg.mss > 0 && cfg.dupthresh > 0);
        Sender {
            rtt: RtoEstimator::new(cfg.rto),
            cfg,
            cc,
            handshake: Handshake::Closed,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            sb: scoreboard::Scoreboard::new(cfg.mss as u64, cfg.dupthresh, cfg.recovery == Recovery::Ns3Prr),
            rwnd: u64::MAX,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            high_rxt: 0,
            rescue_rxt: None,
            pipe: 0,
            rtx_pending: None,
            lt_sent: 0,
            partial_acks: 0,
            rto_deadline: None,
            pacer: pacer::Pacer::default(),
            timeout_streak: 0,
            started: false,
            delivered: 0,
            delivered_time: Time::ZERO,
            syn_retransmitted: false,
            first_data: None,
            completed_at: None,
            stats: SenderStats::default(),
            packets_sent: 0,
            retransmissions: 0,
            qs: quick_start::QuickStartState::default(),
            app_limit: 0,
            handshake_rtt: None,
            last_send: Time::ZERO,
            ecn: ecn::EcnState::default(),
            prr: prr::Prr::default(),
            rack: rack::Rack::default(),
            tlp: rack_tlp::Tlp::default(),
            sack1: ns2::Sack1State::default(),
            ns3: ns3::Ns3State::default(),
            rto_loss: false,
            recovery_since: None,
        }
    }

    /// Reads, and discards, a value on each cache line of the state an ACK reads (the fields
    /// before the controller in declaration order, then the controller's, see
    /// [`Controller::warm`]), so that a driver that knows an ACK comes next can start these
    /// cache misses early and overlap them with other work instead of taking them one by one.
    /// The result means nothing: pass it to `std::hint::black_box`.
    pub fn warm(&self) -> u64 {
        let sb = &self.sb;
        let lines = [
            self.snd_una,
            self.rto_deadline.map_or(0, Time::as_nanos),
            self.recover.unwrap_or(0),
            self.cfg.size.unwrap_or(0) ^ self.cfg.startup_min_response ^ self.in_recovery as u64,
            self.rtt.warm(),
            self.pacer.deadline().map_or(0, Time::as_nanos) ^ self.qs.carrier() ^ self.ecn.ok() as u64,
            sb.warm(),
            self.packets_sent ^ self.retransmissions,
            self.cc.warm(),
        ];
        lines.iter().fold(0, |a, &x| a ^ x)
    }

    /// The congestion controller, to change (the simulator's probe for its RTT and startup traces).
    pub fn cc_mut(&mut self) -> &mut Controller {
        &mut self.cc
    }
    /// The RTT variation of RFC 6298 once sampled.
    pub fn rttvar(&self) -> Option<Dur> {
        self.rtt.rttvar()
    }
    /// The congestion controller (read-only).
    pub fn cc(&self) -> &Controller {
        &self.cc
    }
    /// Before the connection opens: what the previous connection on its path left for the
    /// startup algorithm (Careful Resume's saved CC parameters; `None`: no saved set).
    pub fn seed_startup(&mut self, saved: Option<startlab_cc::startup::SavedPath>) {
        self.cc.seed_startup(saved);
    }
    /// Counters.
    pub fn stats(&self) -> SenderStats {
        SenderStats { packets_sent: self.packets_sent, retransmissions: self.retransmissions, ..self.stats }
    }
    /// Cumulative ACK point (unique bytes acknowledged).
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// One past the highest byte sent.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// RFC 5681 FlightSize.
    pub fn flight_size(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    /// Smoothed RTT once sampled.
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    /// Current RTO.
    pub fn rto(&self) -> Dur {
        self.rtt.rto()
    }
    /// When the first data segment was sent.
    pub fn first_data_time(&self) -> Option<Time> {
        self.first_data
    }
    /// When the ACK of the last byte arrived (finite transfers).
    pub fn completed_at(&self) -> Option<Time> {
        self.completed_at
    }
    /// In loss recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// RFC 6675's `pipe` in bytes during a recovery episode of the scoreboard variants (`sack`,
    /// `prr`, `ns3-prr`), as of the last ACK and the transmissions since; `None` otherwise.
    pub fn pipe(&self) -> Option<u64> {
        (self.in_recovery && self.cfg.recovery.rfc6675()).then_some(self.pipe)
    }
    /// The next time the sender needs [`Sender::on_timer`]: the retransmission timer or the
    /// pacer's release, whichever is first.
    pub fn next_timeout(&self) -> Option<Time> {
        let (rto, pacer) = (self.rto_deadline, self.pacer.deadline());
        if !self.cfg.recovery.rack() {
            // RACK's and TLP's timers are never armed without RACK: their state stays cold.
            return [rto, pacer].into_iter().flatten().min();
        }
        [rto, pacer, self.rack.reo_deadline(), self.tlp.deadline].into_iter().flatten().min()
    }

    /// Time spent in loss recovery by `now`: [`SenderStats::recovery_time`] plus the episode in
    /// progress, if any.
    pub fn recovery_time(&self, now: Time) -> Dur {
        self.stats.recovery_time + self.recovery_since.map_or(Dur::ZERO, |t| now.saturating_since(t))
    }

    /// Opens or closes the recovery-time account after an event: a recovery is in progress while
    /// in fast recovery, or after a timeout until the cumulative ACK covers what was sent before.
    fn account_recovery(&mut self, now: Time) {
        if self.rto_loss && self.recover.is_none_or(|r| self.snd_una >= r) {
            self.rto_loss = false;
        }
        match (self.in_recovery || self.rto_loss, self.recovery_since) {
            (true, None) => self.recovery_since = Some(now),
            (false, Some(t)) => {
                self.stats.recovery_time = self.stats.recovery_time + now.saturating_since(t);
                self.recovery_since = None;
            }
            _ => {}
        }
    }

    /// The pacing rate in force (bytes of payload per second), if any: the startup plug-in's, or
    /// with `pacing` on, Linux's default `ratio·cwnd/srtt` once an RTT sample exists.
    pub fn pacing_rate(&self) -> Option<f64> {
        self.cc.pacing_rate().or_else(|| {
            let srtt = self.rtt.srtt()?.as_secs_f64();
            let cwnd = self.cc.cwnd();
            let early = self.cc.ssthresh().above(2.0 * cwnd);
            (self.cfg.pacing && srtt > 0.0).then(|| if early { 2.0 } else { 1.2 } * cwnd / srtt)
        })
    }

    /// Opens the connection (the application has data from now on).
    pub fn start(&mut self, _now: Time) {
        self.started = true;
        if !self.cfg.handshake {
            self.handshake = Handshake::Established;
            // Without a handshake there is nothing to negotiate: ECN is assumed agreed.
            self.ecn.set_mode(self.cfg.ecn);
        }
    }

    /// cwnd in whole bytes for the send decision. NOTE: fractional per-ACK growth (Smooth-start's
    /// `+SMSS/n`) reaches a whole number of segments in exact arithmetic but may end an ulp short
    /// (31 999.999… bytes): the floor would then hold back a whole segment, and the lost segment
    /// shifts every later round. A millionth of a byte of slack keeps the exact result.
    fn window_bytes(&self) -> f64 {
        (self.cc.cwnd() + startlab_cc::SSTHRESH_TOLERANCE).floor()
    }

    fn mss(&self) -> u64 {
        self.cfg.mss as u64
    }

    fn data_end(&self) -> u64 {
        let total = self.cfg.size.unwrap_or(u64::MAX);
        if self.cfg.app_limited { total.min(self.app_limit) } else { total }
    }

    /// The application hands over `bytes` more to send (with `app_limited`), rounded up to whole
    /// segments so that segment boundaries stay on multiples of the MSS (a response's last segment
    /// is padded). If the connection was idle for longer than the RTO, the idle restart applies
    /// first.
    pub fn push(&mut self, now: Time, bytes: u64) {
        debug_assert!(self.cfg.app_limited, "push needs app_limited");
        let idle = now.saturating_since(self.last_send);
        if self.snd_una == self.snd_max && self.first_data.is_some() && idle > self.rtt.rto() {
            match self.cfg.idle_restart {
                IdleRestart::Rfc5681 => self.cc.on_idle_restart(),
                IdleRestart::Rfc2861 => {
                    let rtos = idle.as_nanos() / self.rtt.rto().as_nanos().max(1);
                    self.cc.on_idle_decay(rtos);
                }
                IdleRestart::Off => {}
            }
            if self.cfg.startup_after_idle && bytes > self.cfg.startup_min_response {
                let padded = bytes.div_ceil(self.mss()) * self.mss();
                self.cc.restart_startup(self.rtt.srtt(), Some(padded), self.snd_max);
                if self.cfg.quick_start.is_some() {
                    self.qs.restart_at(self.snd_max);
                }
            }
        }
        if let Some(rtt) = self.handshake_rtt.take() {
            self.first_response_startup(rtt, bytes.div_ceil(self.mss()) * self.mss());
        }
        self.app_limit += bytes.div_ceil(self.mss()) * self.mss();
    }

    /// The first response of an application-limited connection: the startup sizes its first
    /// flight on it, unless it is not above `startup_min_response`.
    fn first_response_startup(&mut self, rtt: Dur, queued: u64) {
        if self.cfg.startup_min_response == 0 || queued > self.cfg.startup_min_response {
            self.cc.on_handshake(rtt, Some(queued));
        }
    }

    /// The length of the segment starting at `seq` (as [`scoreboard::Span::seg_len`]).
    fn seg_len(&self, seq: u64) -> u32 {
        (self.data_end() - seq).min(self.mss()) as u32
    }

    /// The sequence space as the scoreboard needs it.
    fn span(&self) -> scoreboard::Span {
        scoreboard::Span { una: self.snd_una, max: self.snd_max, end: self.data_end(), mss: self.mss() }
    }

    /// The scoreboard index of the segment that contains `seq`.
    fn idx(&self, seq: u64) -> usize {
        ((seq - self.snd_una) / self.mss()) as usize
    }

    /// The first byte of the scoreboard's segment `idx`.
    fn seq_of(&self, idx: usize) -> u64 {
        self.snd_una + idx as u64 * self.mss()
    }

    fn arm_timer(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    fn ssthresh_bytes(&self) -> f64 {
        self.cc.ssthresh().as_f64()
    }
}
