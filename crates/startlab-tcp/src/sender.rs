//! The TCP sender: handshake, segmentation, RFC 6298 retransmission timer with Karn's rule and
//! backoff, Limited Transmit (RFC 3042), and loss recovery Tahoe, Reno (RFC 5681 §3.2), NewReno
//! (RFC 6582) and SACK (RFC 6675), all as ALGORITHMS.md §2 resolves them. Window arithmetic is
//! delegated to the sans-IO [`Controller`] of `startlab-cc`.

use crate::{Ack, RtoConfig, RtoEstimator};
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
    /// SYN-ACK with ECE), assumed agreed without one.
    pub ecn: bool,
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
    /// IP ECN field ECT(0): new data of an ECN connection (never retransmissions or SYNs).
    pub ect: bool,
    /// TCP ECE flag: set on an ECN-setup SYN (with CWR).
    pub ece: bool,
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
    /// ACKs that carried ECE.
    pub ece_acks: u64,
    /// Window reductions in answer to ECE (at most one per window of data).
    pub ecn_reductions: u64,
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
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    cc: Controller,
    rtt: RtoEstimator,
    handshake: Handshake,
    snd_una: u64,
    snd_nxt: u64,
    /// One past the highest byte ever sent (`HighData + 1`).
    snd_max: u64,
    /// The RFC 6675 scoreboard of `[snd_una, snd_max)`, with RACK-TLP's marks.
    sb: scoreboard::Scoreboard,
    rwnd: u64,
    dupacks: u32,
    in_recovery: bool,
    /// NewReno/Tahoe `recover` and SACK `RecoveryPoint`, as one past the highest byte (exclusive).
    recover: Option<u64>,
    /// One past the highest retransmitted byte in this SACK episode (`HighRxt + 1`).
    high_rxt: u64,
    /// RFC 6675 `RescueRxt`: the `recover` of the episode's rescue retransmission.
    rescue_rxt: Option<u64>,
    /// RFC 6675 `pipe` in a recovery episode of the scoreboard variants: SetPipe() at the last
    /// ACK plus what was sent since.
    pipe: u64,
    rtx_pending: Option<u64>,
    lt_sent: u64,
    partial_acks: u32,
    rto_deadline: Option<Time>,
    /// The pacer's release times.
    pacer: pacer::Pacer,
    /// Backoffs since the last valid sample / forward progress (first expiry sets ssthresh).
    timeout_streak: u32,
    started: bool,
    /// Bytes delivered (cumulatively ACKed or SACKed) and when that count last grew.
    delivered: u64,
    delivered_time: Time,
    syn_retransmitted: bool,
    first_data: Option<Time>,
    completed_at: Option<Time>,
    stats: SenderStats,
    /// The Quick-Start request and its verdict.
    qs: quick_start::QuickStartState,
    /// With `app_limited`: bytes the application has handed over so far.
    app_limit: u64,
    /// With `app_limited`: the handshake's RTT sample, held until the application hands over the
    /// first response so that the startup sizes its first flight on it (Jump-Start's `D`).
    handshake_rtt: Option<Dur>,
    /// Last data transmission (for the idle restart).
    last_send: Time,
    /// ECN's agreement, reduction window and CWR mark.
    ecn: ecn::EcnState,
    /// Proportional Rate Reduction's counters for the current episode (`Prr`, `Linux`).
    prr: prr::Prr,
    /// RACK's detector (`RackTlp`, `Linux`).
    rack: rack::Rack,
    /// RACK-TLP's tail loss probe (`RackTlp`, `Linux`).
    tlp: rack_tlp::Tlp,
    /// ns-2 Sack1's `pipe` counter (`Sack1`).
    sack1: ns2::Sack1State,
    /// ns-3's flags beside PRR's counters (`Ns3Prr`).
    ns3: ns3::Ns3State,
    /// A timeout's recovery is in progress: the cumulative ACK has not yet covered what was
    /// sent before the timeout.
    rto_loss: bool,
    /// When the recovery in progress (fast, or after a timeout) began.
    recovery_since: Option<Time>,
}

mod dupthresh;
mod ecn;
mod loss;
mod ns2;
mod ns3;
mod pacer;
mod prr;
mod quick_start;
mod rack;
mod rack_tlp;
mod sack;
mod scoreboard;
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

    /// The congestion controller (read-only).
    pub fn cc(&self) -> &Controller {
        &self.cc
    }
    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
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
        [self.rto_deadline, self.pacer.deadline(), self.rack.reo_deadline(), self.tlp.deadline].into_iter().flatten().min()
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
            self.ecn.set_ok(self.cfg.ecn);
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

    fn seg_len(&self, seq: u64) -> u32 {
        (self.data_end() - seq).min(self.mss()) as u32
    }

    /// The sequence space as the scoreboard needs it.
    fn span(&self) -> scoreboard::Span {
        scoreboard::Span { una: self.snd_una, max: self.snd_max, end: self.data_end(), mss: self.mss() }
    }

    fn idx(&self, seq: u64) -> usize {
        ((seq - self.snd_una) / self.mss()) as usize
    }

    fn seq_of(&self, idx: usize) -> u64 {
        self.snd_una + idx as u64 * self.mss()
    }

    /// The next segment to put on the wire now, if the window, the receiver window and the
    /// recovery state allow one. Call repeatedly until it returns `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        if !self.started || self.completed_at.is_some() {
            return None;
        }
        match self.handshake {
            Handshake::Closed => {
                self.handshake = Handshake::SynSent { at: now, retransmitted: self.syn_retransmitted };
                self.arm_timer(now);
                let retransmit = self.syn_retransmitted;
                // With a size threshold the request waits for the first data segment, when the
                // first response's size is known.
                let qs = if self.cfg.app_limited && self.cfg.startup_min_response > 0 { None } else { self.take_quick_start(retransmit) };
                let setup = self.cfg.ecn;
                return Some(Segment { kind: SegmentKind::Syn, seq: 0, len: 0, retransmit, qs, ect: false, ece: setup, cwr: setup });
            }
            Handshake::SynSent { .. } => return None,
            Handshake::Established => {}
        }
        // §0.6: "A segment may leave only if now >= next_send_time and the window allows it."
        if self.pacer.holds(now, self.pacing_rate().is_some()) {
            return None;
        }
        if self.cfg.recovery.rack() {
            return self.rack_next_segment(now);
        }
        if let Some(seq) = self.rtx_pending.take() {
            if seq >= self.snd_una && seq < self.snd_max {
                return Some(self.emit(now, seq, true));
            }
        }
        if self.in_recovery && self.cfg.recovery.rfc6675() {
            return self.sack_next_segment(now);
        }
        if self.in_recovery && self.cfg.recovery == Recovery::Sack1 {
            return self.sack1_next_segment(now);
        }
        // Go-back-N after a timeout or Tahoe: resend from snd_nxt, skipping SACKed segments.
        if self.snd_nxt < self.snd_max {
            self.snd_nxt = self.sb.sacked().next_gap(self.snd_nxt);
        }
        if self.snd_nxt >= self.data_end() {
            return None;
        }
        let seq = self.snd_nxt;
        let len = self.seg_len(seq) as u64;
        if seq >= self.snd_max && self.cc.send_limit().is_some_and(|limit| seq + len > limit) {
            // The startup plug-in holds new data (Paced Start between trains).
            return None;
        }
        let flight = self.snd_nxt - self.snd_una;
        let wnd = (self.window_bytes() as u64).min(self.rwnd);
        let rwnd_ok = flight + len <= self.rwnd;
        if flight + len <= wnd {
            return Some(self.emit(now, seq, seq < self.snd_max));
        }
        // RFC 3042: one new segment per duplicate ACK (the first two), FlightSize <= cwnd + 2*SMSS.
        let lt_allow = self.dupacks.min(2) as u64 * self.mss();
        if self.cfg.limited_transmit
            && !self.in_recovery
            && self.dupacks > 0
            && seq == self.snd_max
            && rwnd_ok
            && flight + len <= self.window_bytes() as u64 + lt_allow
        {
            self.lt_sent += len;
            return Some(self.emit(now, seq, false));
        }
        None
    }

    fn emit(&mut self, now: Time, seq: u64, retransmit: bool) -> Segment {
        let len = self.seg_len(seq);
        self.pacer.on_send(now, len, self.pacing_rate());
        let end = seq + len as u64;
        if end > self.snd_max {
            debug_assert_eq!(seq, self.snd_max, "new data is sent in order");
            if self.snd_una == self.snd_max {
                // Nothing in flight: the rate interval starts now, not at the last delivery.
                self.delivered_time = now;
            }
            self.sb.push(SegMeta {
                sent: now,
                tx: 1,
                sacked: false,
                rtx_episode: 0,
                delivered_at_send: self.delivered,
                delivered_time_at_send: self.delivered_time,
                lost: false,
                retrans: false,
            });
            self.snd_max = end;
            if self.first_data.is_none() {
                self.first_data = Some(now);
            }
            self.cc.on_data_sent(now, end);
        } else {
            let i = self.idx(seq);
            let (delivered, delivered_time) = (self.delivered, self.delivered_time);
            let m = self.sb.seg_mut(i);
            m.sent = now;
            m.tx = m.tx.saturating_add(1);
            m.delivered_at_send = delivered;
            m.delivered_time_at_send = delivered_time;
        }
        if seq == self.snd_nxt {
            self.snd_nxt = end;
        }
        if self.in_recovery {
            self.prr.on_send(len as u64);
        }
        if self.cfg.recovery.rack() {
            self.rack_on_send(now, seq, retransmit);
        }
        self.last_send = now;
        self.stats.packets_sent += 1;
        if retransmit {
            self.stats.retransmissions += 1;
            self.cc.on_retransmit(len as u64);
        }
        if self.rto_deadline.is_none() {
            self.arm_timer(now);
        }
        let on_syn = self.cfg.handshake && !self.qs.is_restart() && !(self.cfg.app_limited && self.cfg.startup_min_response > 0);
        let qs = if on_syn || seq != self.qs.carrier() { None } else { self.take_quick_start(retransmit) };
        let (ect, cwr) = self.ecn.data_marks(retransmit);
        Segment { kind: SegmentKind::Data, seq, len, retransmit, qs, ect, ece: false, cwr }
    }

    fn arm_timer(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// An ACK arrived. Returns the bytes it newly acknowledged cumulatively.
    pub fn on_ack(&mut self, now: Time, ack: &Ack) -> u64 {
        if ack.syn_ack {
            if let Handshake::SynSent { at, retransmitted } = self.handshake {
                self.handshake = Handshake::Established;
                // RFC 3168 §6.1.1: a SYN-ACK with ECE (and not CWR) agrees to ECN.
                self.ecn.set_ok(self.cfg.ecn && ack.ece);
                self.rto_deadline = None;
                if let Some(req) = self.qs.take_awaiting() {
                    // Karn: no RTT from a retransmitted SYN, so no Quick-Start window (T unknown).
                    self.quick_start_verdict(req, ack, (!retransmitted).then(|| now - at));
                }
                if retransmitted {
                    // RFC 6298 §5.7: a retransmitted SYN means RTO = 3 s once data flows.
                    self.rtt.raise_to(Dur::from_secs(3));
                } else {
                    self.rtt.on_sample(now - at);
                    // The startup plug-in may size and pace the first flight (Jump-Start) on
                    // the data queued now; an application-limited sender with nothing queued
                    // yet waits for its first response (a server learns the response size when
                    // the request arrives, after the handshake).
                    if !self.cfg.app_limited {
                        self.cc.on_handshake(now - at, self.cfg.size);
                    } else if self.app_limit > self.snd_max {
                        self.first_response_startup(now - at, self.app_limit - self.snd_max);
                    } else {
                        self.handshake_rtt = Some(now - at);
                    }
                }
            }
            return 0;
        }
        if self.handshake != Handshake::Established || ack.ack > self.snd_max {
            return 0;
        }
        self.rwnd = ack.rwnd;
        let flight_before = self.snd_nxt - self.snd_una;
        let delivered_before = self.delivered;
        let was_in_recovery = self.in_recovery;
        self.ns3.begin_ack();
        // The highest SACKed byte before this ACK (Linux `prior_fack`): a segment this ACK
        // covers cumulatively shows reordering only if it lies below what was SACKed before.
        let prior_fack = self.sb.high_sacked();
        self.update_scoreboard(now, ack);
        let newly_sacked = self.sb.sacked_pending() > 0;
        self.update_delivered_by_sack(now, ack);
        let newly_acked = ack.ack.saturating_sub(self.snd_una);
        if newly_acked > 0 {
            self.on_advance(now, ack, flight_before, prior_fack);
        } else if ack.ack == self.snd_una && self.snd_max > self.snd_una && (newly_sacked || self.cfg.recovery != Recovery::Ns3Prr) {
            // ns-3 counts an ACK as a duplicate only when it SACKs new data (RFC 6675 §2).
            self.on_dupack(now);
        }
        let delivered = self.delivered - delivered_before;
        let prr = matches!(self.cfg.recovery, Recovery::Prr(_)) && self.in_recovery;
        let ns3 = self.cfg.recovery == Recovery::Ns3Prr && self.in_recovery;
        let lost_before = self.sb.lost_below();
        if self.cfg.recovery.rfc6675() && (!self.sb.sacked().is_empty() || prr || ns3) {
            self.recompute_lost_and_pipe();
        }
        if prr {
            // Newly lost: an unSACKed segment between the old lost bound and the new one.
            let lost_below = self.sb.lost_below();
            let newly_lost = lost_below > lost_before && self.sb.sacked().next_gap(lost_before.max(self.snd_una)) < lost_below;
            self.prr_on_ack(delivered, self.pipe, newly_acked > 0, newly_lost);
        }
        if ns3 {
            self.ns3_on_ack(delivered, newly_sacked, !was_in_recovery);
        }
        if self.cfg.recovery.rack() {
            self.rack_on_ack(now, delivered, newly_acked > 0);
        }
        self.account_recovery(now);
        if ack.ece && self.ecn.ok() {
            self.on_ece(now);
        }
        // Without a handshake the echo comes with the ACK of the first data segment; an ACK that
        // covers that segment without one means the request never arrived.
        if let Some(req) = self.qs.due(ack) {
            self.quick_start_verdict(req, ack, self.rtt.srtt());
        }
        newly_acked
    }
}

impl Sender {

    /// The cumulative ACK point moved to `a.ack`; `prior_fack` is the highest SACKed byte before
    /// the ACK's SACK blocks were read.
    fn on_advance(&mut self, now: Time, a: &Ack, flight_before: u64, prior_fack: u64) {
        let ack = a.ack;
        let newly = ack - self.snd_una;
        // Karn: samples only from segments sent once and not SACKed before (ALGORITHMS.md §2.5):
        // the oldest newly acked feeds the RTO estimator (Linux seq_rtt), the newest the
        // congestion controller (Linux ca_rtt).
        let acked_segs = self.idx(ack.min(self.snd_max) - 1) + 1;
        let oldest = *self.sb.seg(0);
        let newest = *self.sb.seg(acked_segs - 1);
        let valid = |m: SegMeta| m.tx == 1 && !m.sacked;
        if valid(oldest) {
            self.rtt.on_sample(now - oldest.sent);
            self.rack.on_rtt_sample(now - oldest.sent);
        }
        let ca_rtt = valid(newest).then(|| now - newest.sent);
        if let Some(rtt) = ca_rtt {
            self.rack.on_rtt_sample(rtt);
        }
        let (rack_on, span) = (self.cfg.recovery.rack(), self.span());
        let rack = &mut self.rack;
        let (fresh, rtx_acked) = self.sb.on_cum_ack(span, ack, acked_segs, |m, seq, len| {
            if rack_on {
                rack.on_delivered(now, m.sent, m.tx, seq + len, seq + len <= prior_fack);
            }
        });
        if rtx_acked {
            self.ns3.on_rtx_acked();
        }
        // Bytes beyond the last segment boundary (a short last segment) are covered by `newly`.
        self.delivered += fresh.min(newly);
        self.delivered_time = now;
        let rate_sample = (newest.delivered_time_at_send < now).then(|| RateSample {
            delivered: self.delivered - newest.delivered_at_send,
            interval: now - newest.delivered_time_at_send,
        });
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.high_rxt = self.high_rxt.max(ack);
        self.dupacks = 0;
        self.lt_sent = 0;
        self.timeout_streak = 0;
        let mss = self.mss() as f64;
        let mut restart_timer = true;
        if self.in_recovery {
            match self.cfg.recovery {
                // Tahoe collapses the window instead of entering fast recovery.
                Recovery::Tahoe => debug_assert!(false, "Tahoe never enters fast recovery"),
                Recovery::Reno => self.exit_recovery(now, self.ssthresh_bytes()),
                Recovery::NewReno => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        // RFC 6582 §3.2 step 3, option 1: min(ssthresh, max(FlightSize, SMSS) + SMSS).
                        let flight = (self.snd_nxt - self.snd_una) as f64;
                        let w = self.ssthresh_bytes().min(flight.max(mss) + mss);
                        self.exit_recovery(now, w);
                    } else {
                        // Partial ACK: retransmit the next hole, deflate by the amount acked, add
                        // back one SMSS if at least one SMSS was acked.
                        self.rtx_pending = Some(self.snd_una);
                        let mut w = self.cc.cwnd() - newly as f64;
                        if newly >= self.mss() {
                            w += mss;
                        }
                        self.cc.set_recovery_cwnd(w);
                        self.partial_acks += 1;
                        restart_timer = !self.cfg.newreno_impatient || self.partial_acks == 1;
                    }
                }
                Recovery::Sack | Recovery::Prr(_) | Recovery::RackTlp | Recovery::Linux => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        self.exit_recovery(now, self.ssthresh_bytes());
                    }
                }
                Recovery::Ns3Prr => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        self.exit_recovery(now, self.ssthresh_bytes());
                    } else {
                        self.ns3.on_partial_ack();
                    }
                }
                Recovery::Sack1 => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        self.exit_recovery(now, self.ssthresh_bytes());
                    } else {
                        // ns-2 Sack1: a partial ACK takes two segments out of `pipe`.
                        self.sack1.on_partial_ack(self.mss());
                    }
                }
            }
        } else {
            let cwnd = self.cc.cwnd();
            // RFC 7661 / Linux tcp_is_cwnd_limited: in slow start, growth needs the flight to have
            // used more than half the window; in avoidance, the whole window less one segment.
            let cwnd_limited = if self.cc.phase() == Phase::SlowStart {
                2.0 * flight_before as f64 > cwnd
            } else {
                flight_before as f64 + mss >= cwnd
            };
            self.cc.on_ack(&AckEvent {
                now,
                newly_acked: newly,
                ack_seq: ack,
                snd_nxt: self.snd_nxt,
                rtt: ca_rtt,
                flight_size: self.snd_nxt - self.snd_una,
                cwnd_limited,
                acked_segments: a.segments,
                timer_triggered: a.timer_triggered,
                delivered: self.delivered,
                rate_sample,
            });
        }
        if self.cfg.size.is_some_and(|s| self.snd_una >= s) {
            self.completed_at = Some(now);
            self.rto_deadline = None;
        } else if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.arm_timer(now);
        }
    }

    fn ssthresh_bytes(&self) -> f64 {
        self.cc.ssthresh().as_f64()
    }
}
