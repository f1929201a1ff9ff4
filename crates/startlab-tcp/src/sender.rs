//! The TCP sender: handshake, segmentation, RFC 6298 retransmission timer with Karn's rule and
//! backoff, Limited Transmit (RFC 3042), and loss recovery Tahoe, Reno (RFC 5681 §3.2), NewReno
//! (RFC 6582) and SACK (RFC 6675), all as ALGORITHMS.md §2 resolves them. Window arithmetic is
//! delegated to the sans-IO [`Controller`] of `startlab-cc`.

use crate::ranges::RangeSet;
use crate::{Ack, RtoConfig, RtoEstimator};
use startlab_cc::startup::{QsRequest, QuickStartEvent};
use startlab_cc::{AckEvent, CongestionEvent, CongestionKind, Controller, Phase, RateSample};
use startlab_units::{Dur, Time};
use std::collections::VecDeque;

/// Loss-recovery variant (ALGORITHMS.md §2; docs/algorithms/recovery.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment (go-back-N).
    Tahoe,
    /// Fast retransmit and fast recovery with window inflation; leaves recovery on the first ACK
    /// that advances.
    Reno,
    /// RFC 6582: stays in recovery until the ACK covers `recover`, one hole per partial ACK.
    NewReno,
    /// RFC 6675: scoreboard, `pipe`, `NextSeg()`; cwnd = ssthresh for the whole episode.
    Sack,
    /// RFC 6675 loss detection and `NextSeg()`, with RFC 6937 Proportional Rate Reduction setting
    /// cwnd on every ACK of the episode.
    Prr(PrrBound),
    /// RFC 8985 RACK-TLP: time-based loss detection (lost retransmissions included), the
    /// reordering window and the tail loss probe; cwnd = ssthresh for the episode (as RFC 6675).
    RackTlp,
    /// Linux's defaults (since 4.18): RACK-TLP with Linux's PRR (`tcp_cwnd_reduction`).
    Linux,
    /// ns-2's `Agent/TCP/Sack1`: halve on the third duplicate ACK, a `pipe` counter set at entry
    /// and decreased per ACK, every hole retransmitted in order, SACK state dropped on a timeout.
    Sack1,
    /// ns-3 3.44's SACK recovery with `TcpPrrRecovery` (its default), as that release runs it:
    /// RFC 6675's detection and NextSeg() without the rescue retransmission, a `pipe` that keeps
    /// a retransmitted segment after it is SACKed (ns-3 issue #1190), and ns-3's PRR. See
    /// `sender/ns3.rs`.
    Ns3Prr,
}

/// RFC 6937's reduction bound, used once `pipe` has fallen to ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrBound {
    /// PRR-SSRB: at most one segment more than delivered per ACK (slow start's pace).
    SlowStart,
    /// PRR-CRB: never more than delivered (packet conservation).
    Conservative,
    /// RFC 9937: PRR-SSRB on an ACK that advances SND.UNA and marks nothing newly lost (a "safe"
    /// ACK), else `max(prr_delivered - prr_out, DeliveredData)`; Linux's and ns-3-dev's rule.
    SafeAck,
}

impl Recovery {
    /// The name used in scenarios and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Recovery::Tahoe => "tahoe",
            Recovery::Reno => "reno",
            Recovery::NewReno => "newreno",
            Recovery::Sack => "sack",
            Recovery::Prr(_) => "prr",
            Recovery::RackTlp => "rack-tlp",
            Recovery::Linux => "linux",
            Recovery::Sack1 => "sack1",
            Recovery::Ns3Prr => "ns3-prr",
        }
    }

    /// The receiver must send SACK blocks: every variant with a scoreboard.
    pub fn uses_sack(self) -> bool {
        !matches!(self, Recovery::Tahoe | Recovery::Reno | Recovery::NewReno)
    }

    /// RFC 6675's IsLost()/SetPipe()/NextSeg() machinery (with or without PRR).
    fn rfc6675(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::Prr(_) | Recovery::Ns3Prr)
    }

    /// RACK-TLP loss detection.
    fn rack(self) -> bool {
        matches!(self, Recovery::RackTlp | Recovery::Linux)
    }
}

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

#[derive(Clone, Copy, Debug)]
struct SegMeta {
    /// Last transmission time.
    sent: Time,
    /// Transmissions so far.
    tx: u16,
    sacked: bool,
    /// The SACK recovery episode (`Sender::episode`) in which this segment was last retransmitted;
    /// it is "retransmitted in the current episode" (its retransmission counts in `pipe`) when
    /// this equals the sender's current episode, so a new episode clears every mark in O(1).
    rtx_episode: u32,
    /// Sender's `delivered` count and its time when this segment was (last) sent, for rate samples.
    delivered_at_send: u64,
    delivered_time_at_send: Time,
    /// RACK-TLP: deemed lost (by RACK or a timeout) and not SACKed since.
    lost: bool,
    /// RACK-TLP: a retransmission of it is in flight (Linux `TCPCB_SACKED_RETRANS`).
    retrans: bool,
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
    /// Per-segment state for `[snd_una, snd_max)`; `segs[0]` is the segment starting at `snd_una`.
    segs: VecDeque<SegMeta>,
    /// The SACKed segments of `segs` as maximal runs of bytes (the RFC 6675 scoreboard's SACKed
    /// sequences), so that IsLost(), SetPipe() and NextSeg() never walk the window.
    sacked: RangeSet,
    /// RFC 6675 IsLost() for every unSACKed segment at once: IsLost() is monotone (every SACKed
    /// byte or run above a segment is also above every lower one), so the unSACKed segments
    /// starting below this byte are lost and the others are not. Set with `pipe` on every ACK
    /// while SACK blocks exist.
    lost_below: u64,
    /// Current SACK recovery episode (see `SegMeta::rtx_episode`); 0 is never current.
    episode: u32,
    /// Bytes of unSACKed segments retransmitted in the current episode (the second term of SetPipe()).
    rtx_unsacked: u64,
    /// `Ns3Prr` only: bytes of segments retransmitted in the current episode and SACKed since,
    /// which ns-3 3.44 still counts in `pipe` until the cumulative ACK covers them.
    rtx_sacked: u64,
    /// Bytes newly SACKed by the ACK being processed (added to `delivered`).
    sacked_bytes_pending: u64,
    rwnd: u64,
    dupacks: u32,
    in_recovery: bool,
    /// NewReno/Tahoe `recover` and SACK `RecoveryPoint`, as one past the highest byte (exclusive).
    recover: Option<u64>,
    /// One past the highest retransmitted byte in this SACK episode (`HighRxt + 1`).
    high_rxt: u64,
    rescue_rxt: Option<u64>,
    /// Highest SACKed byte + 1.
    high_sacked: u64,
    pipe: u64,
    rtx_pending: Option<u64>,
    lt_sent: u64,
    partial_acks: u32,
    rto_deadline: Option<Time>,
    /// Earliest departure of the next data segment under pacing (§0.6 `next_send_time`).
    next_send: Time,
    /// Transmission is held by the pacer until this time.
    pacing_wait: Option<Time>,
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
    /// The Quick-Start request has been put on a segment.
    qs_sent: bool,
    /// The Quick-Start request sent, until its echo (or its absence) is judged.
    qs_awaiting: Option<QsRequest>,
    /// The segment that carries the Quick-Start request: 0, or the first byte of a response that
    /// restarted the startup after idle.
    qs_seq: u64,
    /// The pending request belongs to such a restart.
    qs_restart: bool,
    /// With `app_limited`: bytes the application has handed over so far.
    app_limit: u64,
    /// With `app_limited`: the handshake's RTT sample, held until the application hands over the
    /// first response so that the startup sizes its first flight on it (Jump-Start's `D`).
    handshake_rtt: Option<Dur>,
    /// Last data transmission (for the idle restart).
    last_send: Time,
    /// ECN is in use on this connection (asked for, and agreed or no handshake).
    ecn_ok: bool,
    /// `snd_max` at the last ECN reduction: no new one before an ACK covers data sent after it.
    ecn_recover: Option<u64>,
    /// Put CWR on the next new data segment.
    cwr_pending: bool,
    /// Proportional Rate Reduction's counters for the current episode (`Prr`, `Linux`).
    prr: prr::Prr,
    /// RACK-TLP's state (`RackTlp`, `Linux`).
    rack: rack::Rack,
    /// ns-2 Sack1's `pipe` counter in bytes during its fast recovery.
    sack1_pipe: i64,
    /// `Ns3Prr`: the ACK being processed cumulatively acknowledged a segment retransmitted in
    /// this episode and not SACKed before (ns-3's `m_isRetransDataAcked`).
    ns3_rtx_acked: bool,
    /// `Ns3Prr`: the ACK being processed is a partial ACK of the episode.
    ns3_partial_ack: bool,
    /// `Ns3Prr`: a partial ACK lets one segment of new data out whatever the window.
    ns3_forced_new: bool,
    /// A timeout's recovery is in progress: the cumulative ACK has not yet covered what was
    /// sent before the timeout.
    rto_loss: bool,
    /// When the recovery in progress (fast, or after a timeout) began.
    recovery_since: Option<Time>,
}

mod ns2;
mod ns3;
mod prr;
mod rack;

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
            segs: VecDeque::new(),
            sacked: RangeSet::default(),
            lost_below: 0,
            episode: 1,
            rtx_unsacked: 0,
            rtx_sacked: 0,
            sacked_bytes_pending: 0,
            rwnd: u64::MAX,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            high_rxt: 0,
            rescue_rxt: None,
            high_sacked: 0,
            pipe: 0,
            rtx_pending: None,
            lt_sent: 0,
            partial_acks: 0,
            rto_deadline: None,
            next_send: Time::ZERO,
            pacing_wait: None,
            timeout_streak: 0,
            started: false,
            delivered: 0,
            delivered_time: Time::ZERO,
            syn_retransmitted: false,
            first_data: None,
            completed_at: None,
            stats: SenderStats::default(),
            qs_sent: false,
            qs_awaiting: None,
            qs_seq: 0,
            qs_restart: false,
            app_limit: 0,
            handshake_rtt: None,
            last_send: Time::ZERO,
            ecn_ok: false,
            ecn_recover: None,
            cwr_pending: false,
            prr: prr::Prr::default(),
            rack: rack::Rack::default(),
            sack1_pipe: 0,
            ns3_rtx_acked: false,
            ns3_partial_ack: false,
            ns3_forced_new: false,
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
        [self.rto_deadline, self.pacing_wait, self.rack.reo_deadline, self.rack.tlp_deadline].into_iter().flatten().min()
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
            self.ecn_ok = self.cfg.ecn;
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
                    self.qs_sent = false;
                    self.qs_seq = self.snd_max;
                    self.qs_restart = true;
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
        if now < self.next_send && self.pacing_rate().is_some() {
            self.pacing_wait = Some(self.next_send);
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
            self.snd_nxt = self.sacked.next_gap(self.snd_nxt);
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

    /// RFC 6675 §5 NextSeg() while in SACK recovery, gated by `cwnd - pipe >= SMSS`. Each rule
    /// is a lookup in the scoreboard's runs, not a scan of the window.
    fn sack_next_segment(&mut self, now: Time) -> Option<Segment> {
        if std::mem::take(&mut self.ns3_forced_new) && self.sack_new_data_ok() {
            return Some(self.sack_send_new(now));
        }
        if (self.window_bytes() - self.pipe as f64) < self.mss() as f64 {
            return None;
        }
        // Rules (1) and (3) both want the lowest unSACKed segment above HighRxt and below the
        // highest SACKed byte (everything below HighRxt was retransmitted in this episode or is
        // SACKed). It is lost, or, IsLost() being monotone, no lost one lies above it.
        let candidate = self.next_seg_candidate().map(|seq| self.idx(seq));
        debug_assert!(candidate.is_none_or(|i| self.segs[i].rtx_episode != self.episode));
        // (1) the lowest lost, unSACKed segment above HighRxt.
        let mut rule3 = None;
        if let Some(i) = candidate {
            if self.seq_of(i) < self.lost_below {
                return Some(self.sack_retransmit(now, i));
            }
            rule3 = Some(i);
        }
        // (2) new data.
        if self.sack_new_data_ok() {
            return Some(self.sack_send_new(now));
        }
        // (3) the lowest unSACKed segment above HighRxt, not yet deemed lost.
        if let Some(i) = rule3 {
            return Some(self.sack_retransmit(now, i));
        }
        // (4) one rescue retransmission per episode: the highest unSACKed segment (not in ns-3).
        if self.cfg.recovery != Recovery::Ns3Prr && self.rescue_rxt.is_none_or(|r| self.snd_una > r) {
            let top = match self.sacked.last() {
                Some((s, e)) if e == self.snd_max => s,
                _ => self.snd_max,
            };
            if top > self.snd_una {
                self.rescue_rxt = self.recover;
                let seq = self.seq_of(self.idx(top - 1));
                let seg = self.emit(now, seq, true);
                self.pipe += seg.len as u64;
                return Some(seg);
            }
        }
        None
    }

    /// The lowest unSACKed sequence number above HighRxt and below the highest SACKed byte:
    /// NextSeg()'s candidate for rules (1) and (3).
    fn next_seg_candidate(&self) -> Option<u64> {
        let from = self.high_rxt.max(self.snd_una);
        (from < self.snd_max).then(|| self.sacked.next_gap(from)).filter(|&seq| seq < self.high_sacked)
    }

    /// NextSeg() rule (2): unsent data exists and the receiver's window takes one more segment.
    fn sack_new_data_ok(&self) -> bool {
        let seq = self.snd_max;
        seq < self.data_end() && seq + self.seg_len(seq) as u64 - self.snd_una <= self.rwnd
    }

    /// Sends the next new segment in SACK recovery; it enters `pipe` at once.
    fn sack_send_new(&mut self, now: Time) -> Segment {
        let seq = self.snd_max;
        self.snd_nxt = seq;
        let seg = self.emit(now, seq, false);
        self.pipe += seg.len as u64;
        seg
    }

    fn sack_retransmit(&mut self, now: Time, i: usize) -> Segment {
        #[cfg(test)]
        reference::check_next_seg(self, i);
        let seq = self.seq_of(i);
        let seg = self.emit(now, seq, true);
        self.mark_retransmitted_in_episode(i);
        self.high_rxt = self.high_rxt.max(seq + seg.len as u64);
        self.pipe += seg.len as u64;
        seg
    }

    /// Segment `i` was retransmitted in the current SACK episode: while unSACKed it counts twice
    /// in SetPipe() (once more than an unretransmitted segment).
    fn mark_retransmitted_in_episode(&mut self, i: usize) {
        let len = self.seg_len(self.seq_of(i)) as u64;
        let m = &mut self.segs[i];
        if m.rtx_episode != self.episode {
            m.rtx_episode = self.episode;
            if !m.sacked {
                self.rtx_unsacked += len;
            }
        }
    }

    /// A new SACK episode (or a timeout): no segment counts as retransmitted in it yet.
    fn new_episode(&mut self) {
        self.episode = self.episode.wrapping_add(1).max(1);
        self.rtx_unsacked = 0;
        self.rtx_sacked = 0;
    }

    fn emit(&mut self, now: Time, seq: u64, retransmit: bool) -> Segment {
        let len = self.seg_len(seq);
        if let Some(rate) = self.pacing_rate() {
            // §0.6: next_send_time = max(next_send_time, t) + size / rate (payload bytes).
            self.next_send = self.next_send.max(now) + Dur::from_secs_f64(len as f64 / rate);
        }
        let end = seq + len as u64;
        if end > self.snd_max {
            debug_assert_eq!(seq, self.snd_max, "new data is sent in order");
            if self.snd_una == self.snd_max {
                // Nothing in flight: the rate interval starts now, not at the last delivery.
                self.delivered_time = now;
            }
            self.segs.push_back(SegMeta {
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
            let m = &mut self.segs[i];
            m.sent = now;
            m.tx = m.tx.saturating_add(1);
            m.delivered_at_send = delivered;
            m.delivered_time_at_send = delivered_time;
        }
        if seq == self.snd_nxt {
            self.snd_nxt = end;
        }
        if self.in_recovery {
            self.prr.out += len as u64;
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
        let on_syn = self.cfg.handshake && !self.qs_restart && !(self.cfg.app_limited && self.cfg.startup_min_response > 0);
        let qs = if on_syn || seq != self.qs_seq { None } else { self.take_quick_start(retransmit) };
        // RFC 3168 §6.1.5: retransmitted segments are not ECT; CWR goes on the next new data.
        let ect = self.ecn_ok && !retransmit;
        let cwr = ect && std::mem::take(&mut self.cwr_pending);
        Segment { kind: SegmentKind::Data, seq, len, retransmit, qs, ect, ece: false, cwr }
    }

    /// The Quick-Start request for the first transmission of the segment that carries it.
    fn take_quick_start(&mut self, retransmit: bool) -> Option<QsRequest> {
        if retransmit || self.qs_sent {
            return None;
        }
        if !self.qs_restart && self.cfg.app_limited && self.cfg.startup_min_response > 0 && self.app_limit <= self.cfg.startup_min_response {
            // The first response is too small for Quick-Start (Scharf's "QS 3").
            self.qs_sent = true;
            return None;
        }
        self.qs_sent = true;
        self.qs_awaiting = self.cfg.quick_start;
        self.qs_awaiting
    }

    /// Judges the Quick-Start echo and hands the verdict to the controller.
    fn quick_start_verdict(&mut self, req: QsRequest, ack: &Ack, rtt: Option<Dur>) {
        let outcome = if rtt.is_some() { req.validate(ack.qs.as_ref()) } else { startlab_cc::startup::QsOutcome::NoReport };
        self.cc.on_quick_start(QuickStartEvent {
            outcome,
            rtt,
            queued: if self.qs_restart { Some(self.data_end().saturating_sub(self.snd_max)) } else { self.cfg.size.map(|s| s.saturating_sub(self.snd_max)) },
            snd_max: self.snd_max,
            flight_size: self.snd_nxt - self.snd_una,
            in_startup: true,
        });
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
                self.ecn_ok = self.cfg.ecn && ack.ece;
                self.rto_deadline = None;
                if let Some(req) = self.qs_awaiting.take() {
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
        self.ns3_rtx_acked = false;
        self.ns3_partial_ack = false;
        // The highest SACKed byte before this ACK (Linux `prior_fack`): a segment this ACK
        // covers cumulatively shows reordering only if it lies below what was SACKed before.
        let prior_fack = self.high_sacked;
        self.update_scoreboard(now, ack);
        let newly_sacked = self.sacked_bytes_pending > 0;
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
        let lost_before = self.lost_below;
        if self.cfg.recovery.rfc6675() && (!self.sacked.is_empty() || prr || ns3) {
            self.recompute_lost_and_pipe();
        }
        if prr {
            // Newly lost: an unSACKed segment between the old lost bound and the new one.
            let newly_lost = self.lost_below > lost_before && self.sacked.next_gap(lost_before.max(self.snd_una)) < self.lost_below;
            self.prr_on_ack(delivered, self.pipe, newly_acked > 0, newly_lost);
        }
        if ns3 {
            self.ns3_on_ack(delivered, newly_sacked, !was_in_recovery);
        }
        if self.cfg.recovery.rack() {
            self.rack_on_ack(now, delivered, newly_acked > 0);
        }
        self.account_recovery(now);
        if ack.ece && self.ecn_ok {
            self.on_ece(now);
        }
        // Without a handshake the echo comes with the ACK of the first data segment; an ACK that
        // covers that segment without one means the request never arrived.
        if self.qs_awaiting.is_some() && (ack.qs.is_some() || ack.ack > self.qs_seq) {
            if let Some(req) = self.qs_awaiting.take() {
                self.quick_start_verdict(req, ack, self.rtt.srtt());
            }
        }
        newly_acked
    }

    /// An ACK carried ECE (ALGORITHMS.md §17.3, RFC 3168 §6.1.2): reduce once per window of data,
    /// like a fast retransmit's ssthresh but with cwnd = ssthresh, no recovery, no retransmission;
    /// CWR goes on the next new data segment. A loss recovery in progress (or a window that a loss
    /// or an earlier ECE already reduced) absorbs the echo.
    fn on_ece(&mut self, now: Time) {
        self.stats.ece_acks += 1;
        let reduced_this_window = |r: Option<u64>, una: u64| r.is_some_and(|r| una <= r);
        if self.in_recovery || reduced_this_window(self.ecn_recover, self.snd_una) || reduced_this_window(self.recover, self.snd_una) {
            return;
        }
        self.stats.ecn_reductions += 1;
        self.cc.on_congestion(&CongestionEvent {
            now,
            kind: CongestionKind::Ecn,
            flight_size: self.snd_nxt - self.snd_una,
            enter_recovery: false,
        });
        // NOTE: §17.3's "if cwnd is already 1 segment, wait for the retransmit timer" never
        // applies here: the controller keeps ssthresh, and so cwnd, at 2 SMSS or more.
        self.ecn_recover = Some(self.snd_max);
        self.cwr_pending = true;
    }

    /// Marks SACKed segments (RFC 6675 scoreboard); only SACK recovery reads it. Only the part
    /// of a block not SACKed before is visited, so each segment is marked once in its life and an
    /// ACK costs O(log n) per block in the number of SACKed runs n.
    fn update_scoreboard(&mut self, now: Time, ack: &Ack) {
        if !self.cfg.recovery.uses_sack() || ack.n_sack == 0 {
            return;
        }
        let mss = self.mss();
        let (rack_on, fack) = (self.cfg.recovery.rack(), self.high_sacked);
        for &(s, e) in ack.sack_blocks() {
            let s = s.max(ack.ack).max(self.snd_una);
            let e = e.min(self.snd_max);
            if s >= e {
                continue;
            }
            // Blocks are unions of whole segments; mark every segment fully inside: from the
            // first segment boundary at or above s to the last segment end at or below e (snd_max
            // is a segment end; below it every segment that ends beyond e is a full one).
            let first = if s == self.snd_una { s } else { s.next_multiple_of(mss) };
            let last = if e == self.snd_max { e } else { e / mss * mss };
            let (una, end, episode, ns3) = (self.snd_una, self.data_end(), self.episode, self.cfg.recovery == Recovery::Ns3Prr);
            let (segs, rtx_unsacked, rtx_sacked, pending, rack) =
                (&mut self.segs, &mut self.rtx_unsacked, &mut self.rtx_sacked, &mut self.sacked_bytes_pending, &mut self.rack);
            self.sacked.insert(first, last.max(first), |a, b| {
                let mut seq = a;
                while seq < b {
                    let len = (end - seq).min(mss);
                    let m = &mut segs[((seq - una) / mss) as usize];
                    debug_assert!(!m.sacked);
                    m.sacked = true;
                    if m.rtx_episode == episode {
                        *rtx_unsacked -= len;
                        if ns3 {
                            *rtx_sacked += len;
                        }
                    }
                    if rack_on {
                        rack.on_delivered(now, m, seq, len, seq + len <= fack);
                    }
                    *pending += len;
                    seq += len;
                }
            });
            self.high_sacked = self.high_sacked.max(e);
        }
    }
}

impl Sender {
    /// SACK blocks count as delivery (the scoreboard was updated just before).
    fn update_delivered_by_sack(&mut self, now: Time, _ack: &Ack) {
        if self.sacked_bytes_pending > 0 {
            self.delivered += std::mem::take(&mut self.sacked_bytes_pending);
            self.delivered_time = now;
        }
    }

    /// The cumulative ACK point moved to `a.ack`; `prior_fack` is the highest SACKed byte before
    /// the ACK's SACK blocks were read.
    fn on_advance(&mut self, now: Time, a: &Ack, flight_before: u64, prior_fack: u64) {
        let ack = a.ack;
        let newly = ack - self.snd_una;
        // Karn: samples only from segments sent once and not SACKed before (ALGORITHMS.md §2.5):
        // the oldest newly acked feeds the RTO estimator (Linux seq_rtt), the newest the
        // congestion controller (Linux ca_rtt).
        let acked_segs = self.idx(ack.min(self.snd_max) - 1) + 1;
        let oldest = self.segs[0];
        let newest = self.segs[acked_segs - 1];
        let valid = |m: SegMeta| m.tx == 1 && !m.sacked;
        if valid(oldest) {
            self.rtt.on_sample(now - oldest.sent);
            self.rack.on_rtt_sample(now - oldest.sent);
        }
        let ca_rtt = valid(newest).then(|| now - newest.sent);
        if let Some(rtt) = ca_rtt {
            self.rack.on_rtt_sample(rtt);
        }
        let mut fresh = 0;
        let rack_on = self.cfg.recovery.rack();
        for i in 0..acked_segs {
            let seq = self.seq_of(i);
            let len = self.seg_len(seq) as u64;
            let m = &mut self.segs[i];
            if m.sacked && m.rtx_episode == self.episode && self.cfg.recovery == Recovery::Ns3Prr {
                self.rtx_sacked -= len;
            }
            if !m.sacked {
                fresh += len;
                if m.rtx_episode == self.episode {
                    self.rtx_unsacked -= len;
                    self.ns3_rtx_acked = true;
                }
                if rack_on {
                    self.rack.on_delivered(now, m, seq, len, seq + len <= prior_fack);
                }
            }
        }
        self.segs.drain(..acked_segs);
        self.sacked.remove_below(ack);
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
        if self.sacked.is_empty() {
            self.high_sacked = self.snd_una;
        }
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
                        self.ns3_partial_ack = true;
                    }
                }
                Recovery::Sack1 => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        self.exit_recovery(now, self.ssthresh_bytes());
                    } else {
                        // ns-2 Sack1: a partial ACK takes two segments out of `pipe`.
                        self.sack1_pipe -= 2 * self.mss() as i64;
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

    fn exit_recovery(&mut self, now: Time, cwnd: f64) {
        self.in_recovery = false;
        self.partial_acks = 0;
        self.pipe = 0;
        self.ns3_forced_new = false;
        self.cc.on_recovery_exit(now, cwnd);
    }

    fn on_dupack(&mut self, now: Time) {
        self.dupacks += 1;
        if self.in_recovery {
            // Reno and NewReno inflate by one SMSS per further duplicate ACK (RFC 5681 §3.2 step 4).
            if matches!(self.cfg.recovery, Recovery::Reno | Recovery::NewReno) {
                self.cc.set_recovery_cwnd(self.cc.cwnd() + self.mss() as f64);
            }
            if self.cfg.recovery == Recovery::Sack1 {
                self.sack1_pipe -= self.mss() as i64;
            }
            return;
        }
        if self.cfg.recovery.rack() {
            // RACK decides from send times, not from counting duplicate ACKs.
            return;
        }
        let sack_says_lost = self.cfg.recovery.rfc6675() && self.first_is_lost();
        if self.dupacks < self.cfg.dupthresh && !sack_says_lost {
            return;
        }
        // Guard against reacting twice to one window of losses: Tahoe and NewReno use `recover`
        // (RFC 6582: the ACK must cover more than recover), SACK its RecoveryPoint (RFC 6675).
        let allowed = match self.cfg.recovery {
            Recovery::Reno => self.dupacks == self.cfg.dupthresh || sack_says_lost,
            Recovery::Tahoe | Recovery::NewReno => {
                self.dupacks == self.cfg.dupthresh && self.recover.is_none_or(|r| self.snd_una > r)
            }
            Recovery::Sack | Recovery::Prr(_) | Recovery::Ns3Prr => self.recover.is_none_or(|r| self.snd_una >= r),
            Recovery::Sack1 => self.dupacks == self.cfg.dupthresh && self.recover.is_none_or(|r| self.snd_una >= r),
            Recovery::RackTlp | Recovery::Linux => unreachable!("RACK enters recovery on its own"),
        };
        if !allowed {
            return;
        }
        self.stats.fast_retransmits += 1;
        let flight = match self.cfg.recovery {
            Recovery::Ns3Prr => self.ns3_bytes_in_flight(),
            _ => (self.snd_nxt - self.snd_una).saturating_sub(self.lt_sent),
        };
        let tahoe = self.cfg.recovery == Recovery::Tahoe;
        self.cc.on_congestion(&CongestionEvent {
            now,
            kind: CongestionKind::FastRetransmit,
            flight_size: flight,
            enter_recovery: !tahoe,
        });
        self.recover = Some(self.snd_max);
        match self.cfg.recovery {
            Recovery::Tahoe => {
                // Go back to SND.UNA and slow-start again (ALGORITHMS.md §2.2).
                self.snd_nxt = self.snd_una;
                self.rto_loss = true;
            }
            Recovery::Reno | Recovery::NewReno => {
                self.in_recovery = true;
                self.rtx_pending = Some(self.snd_una);
                let inflated = self.ssthresh_bytes() + 3.0 * self.mss() as f64;
                self.cc.set_recovery_cwnd(inflated);
            }
            Recovery::Sack | Recovery::Prr(_) | Recovery::Ns3Prr => {
                self.in_recovery = true;
                self.rescue_rxt = None;
                self.high_rxt = self.snd_una;
                self.new_episode();
                // RFC 6675 §5 step 4.2: retransmit the first segment, not a NextSeg() choice.
                self.rtx_pending = Some(self.snd_una);
                self.mark_retransmitted_in_episode(0);
                self.high_rxt = self.snd_una + self.seg_len(self.snd_una) as u64;
                if self.cfg.recovery == Recovery::Ns3Prr {
                    self.prr_enter(flight);
                } else {
                    // RFC 6937: RecoverFS = snd.nxt - snd.una.
                    self.prr_enter(self.snd_nxt - self.snd_una);
                }
            }
            Recovery::Sack1 => self.sack1_enter(),
            Recovery::RackTlp | Recovery::Linux => unreachable!("RACK enters recovery on its own"),
        }
    }

    /// The lost bound of RFC 6675 IsLost() over the SACKed bytes above `floor`: walking the
    /// scoreboard's runs from the highest down (each cut at `floor`), the start of the run at which
    /// DupThresh runs or more than (DupThresh − 1)·SMSS bytes have been seen, with the SACKed bytes
    /// walked; `None` when that never happens. Every unSACKed segment below the bound is lost (what
    /// is SACKed above a segment is also above every lower one), none above it. O(DupThresh) runs.
    fn lost_bound(&self, floor: u64) -> Option<(u64, u64)> {
        let threshold = (self.cfg.dupthresh as u64 - 1) * self.mss();
        let (mut runs, mut bytes) = (0, 0);
        for (s, e) in self.sacked.iter_rev() {
            if e <= floor {
                break;
            }
            let s = s.max(floor);
            runs += 1;
            bytes += e - s;
            if runs >= self.cfg.dupthresh || bytes > threshold {
                return Some((s, bytes));
            }
        }
        None
    }

    /// RFC 6675 IsLost() for the first segment (used before recovery starts): its own SACK state
    /// aside, whether the bytes strictly above it meet the bound.
    fn first_is_lost(&self) -> bool {
        self.lost_bound(self.snd_una + self.seg_len(self.snd_una) as u64).is_some()
    }

    /// IsLost() for every segment (`lost_below`) and SetPipe() (RFC 6675 §4): pipe is the unSACKed
    /// bytes above the lost bound plus the unSACKed bytes retransmitted in this episode.
    fn recompute_lost_and_pipe(&mut self) {
        (self.lost_below, self.pipe) = self.lost_and_pipe();
        #[cfg(test)]
        reference::check(self);
    }

    /// The lost bound and `pipe` of [`Sender::recompute_lost_and_pipe`], from the scoreboard as it
    /// is now, without keeping them.
    fn lost_and_pipe(&self) -> (u64, u64) {
        // Nothing lost: every unSACKed byte of the window is above the bound.
        let (bound, sacked_above) = self.lost_bound(self.snd_una).unwrap_or((self.snd_una, self.sacked.bytes()));
        (bound, (self.snd_max - bound - sacked_above) + self.rtx_unsacked + self.rtx_sacked)
    }

    /// The retransmission timer fired at `now` (the driver calls this at `next_timeout()`).
    pub fn on_timer(&mut self, now: Time) {
        if self.pacing_wait.is_some_and(|t| t <= now) {
            // The pacer releases the sender; the driver polls for segments next.
            self.pacing_wait = None;
        }
        if self.cfg.recovery.rack() && self.rack_on_timer(now) {
            // The loss probe took the place of the timeout (the driver polls for it next).
            self.account_recovery(now);
            return;
        }
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => {
                self.account_recovery(now);
                return;
            }
        }
        self.rto_deadline = None;
        if let Handshake::SynSent { at, .. } = self.handshake {
            self.stats.syn_retransmits += 1;
            self.rtt.back_off();
            let _ = at;
            self.handshake = Handshake::Closed; // poll_transmit resends the SYN
            self.syn_retransmitted = true;
            return;
        }
        if self.snd_una >= self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        let flight = match self.cfg.recovery {
            Recovery::RackTlp | Recovery::Linux => self.rack_flight_size(),
            // ns-3's ReTxTimeout halves BytesInFlight() (its pipe), also during recovery.
            Recovery::Ns3Prr => self.lost_and_pipe().1,
            _ => self.snd_nxt - self.snd_una,
        };
        if self.timeout_streak == 0 {
            // First expiry of the episode sets ssthresh from FlightSize (ALGORITHMS.md §2.5).
            self.cc.on_congestion(&CongestionEvent {
                now,
                kind: CongestionKind::Timeout,
                flight_size: flight,
                enter_recovery: false,
            });
        } else {
            self.cc.on_repeated_timeout();
        }
        self.timeout_streak += 1;
        self.rtt.back_off();
        // RFC 6675 §5.1 / RFC 6582: end any recovery episode; no new one before SND.UNA passes
        // everything sent so far. SACK marks are kept (ALGORITHMS.md §2.6 lab choice).
        self.in_recovery = false;
        self.partial_acks = 0;
        self.ns3_forced_new = false;
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        self.lt_sent = 0;
        self.pipe = 0;
        self.rtx_pending = None;
        match self.cfg.recovery {
            // Every unSACKed segment is lost and goes out again from the lowest.
            Recovery::RackTlp | Recovery::Linux => self.rack_on_timeout(),
            Recovery::Sack1 => {
                self.sack1_on_timeout();
                self.snd_nxt = self.snd_una;
            }
            _ => self.snd_nxt = self.snd_una,
        }
        self.high_rxt = self.snd_una;
        self.new_episode();
        self.rto_loss = true;
        self.arm_timer(now);
        self.account_recovery(now);
    }
}

/// The scoreboard as RFC 6675 words it, one pass over every segment (the sender's code before it
/// kept runs): every unit test of this crate checks the run-based answers against it on every ACK
/// and every NextSeg() retransmission.
#[cfg(test)]
mod reference {
    use super::Sender;

    /// RFC 6675 IsLost(i) from the per-segment flags.
    pub(super) fn is_lost(s: &Sender, i: usize) -> bool {
        let (mut bytes, mut runs, mut prev) = (0, 0, false);
        for j in (i + 1)..s.segs.len() {
            let sacked = s.segs[j].sacked;
            if sacked {
                bytes += s.seg_len(s.seq_of(j)) as u64;
                runs += u32::from(!prev);
            }
            prev = sacked;
        }
        runs >= s.cfg.dupthresh || bytes > (s.cfg.dupthresh as u64 - 1) * s.mss()
    }

    /// SetPipe(), IsLost() and the flags against the runs, after `recompute_lost_and_pipe`.
    pub(super) fn check(s: &Sender) {
        let mut pipe = 0;
        let mut sacked_bytes = 0;
        for i in 0..s.segs.len() {
            let m = s.segs[i];
            let (seq, len) = (s.seq_of(i), s.seg_len(s.seq_of(i)) as u64);
            assert_eq!(m.sacked, s.sacked.containing(seq).is_some(), "flag and runs agree at {seq}");
            if m.sacked {
                sacked_bytes += len;
                if s.cfg.recovery == super::Recovery::Ns3Prr && m.rtx_episode == s.episode {
                    pipe += len;
                }
                continue;
            }
            let lost = is_lost(s, i);
            assert_eq!(lost, seq < s.lost_below, "IsLost({seq}) with lost_below {}", s.lost_below);
            pipe += if lost { 0 } else { len } + if m.rtx_episode == s.episode { len } else { 0 };
        }
        assert_eq!(sacked_bytes, s.sacked.bytes());
        assert_eq!(pipe, s.pipe, "SetPipe()");
        if !s.segs.is_empty() {
            assert_eq!(is_lost(s, 0), s.first_is_lost());
        }
    }

    /// NextSeg() rules (1) and (3) as a scan from HighRxt: the segment chosen is the one the scan
    /// picks (the lowest lost one, else the lowest not lost, both unSACKed and not retransmitted).
    pub(super) fn check_next_seg(s: &Sender, chosen: usize) {
        let first = if s.high_rxt > s.snd_una { s.idx(s.high_rxt.min(s.snd_max)) } else { 0 };
        let mut rule3 = None;
        let mut rule1 = None;
        for i in first..s.segs.len() {
            if s.seq_of(i) >= s.high_sacked {
                break;
            }
            let m = s.segs[i];
            if m.sacked || m.rtx_episode == s.episode {
                continue;
            }
            if is_lost(s, i) {
                rule1 = Some(i);
                break;
            }
            rule3 = rule3.or(Some(i));
        }
        assert_eq!(Some(chosen), rule1.or(rule3), "NextSeg() rule 1 or 3");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckPolicy, Receiver, ReceiverConfig};
    use proptest::prelude::*;
    use startlab_cc::avoidance::{Avoidance, Reno};
    use startlab_cc::startup::{SlowStart, Startup};
    use startlab_cc::{CcConfig, Ssthresh};

    /// Drives a SACK sender and receiver over a path with a fixed one-way delay that drops the
    /// data transmissions whose (1-based) index is in `drops`; the reference module checks the
    /// scoreboard at every ACK. Returns the receiver's delivered bytes and the sender's counters.
    fn transfer(mss: u32, size: u64, iw: u64, dupthresh: u32, delayed: bool, drops: &[u64]) -> (u64, SenderStats) {
        transfer_with(Recovery::Sack, mss, size, iw, dupthresh, delayed, drops)
    }

    /// [`transfer`] under any recovery (the RACK-TLP counters are checked at every ACK).
    fn transfer_with(recovery: Recovery, mss: u32, size: u64, iw: u64, dupthresh: u32, delayed: bool, drops: &[u64]) -> (u64, SenderStats) {
        let (rcv, snd) = transfer_ends(recovery, mss, size, iw, dupthresh, delayed, drops);
        (rcv.delivered(), snd.stats())
    }

    /// [`transfer_with`], returning both ends as they are at the end.
    fn transfer_ends(recovery: Recovery, mss: u32, size: u64, iw: u64, dupthresh: u32, delayed: bool, drops: &[u64]) -> (Receiver, Sender) {
        let cc = Controller::new(
            CcConfig {
                mss: mss as u64,
                initial_window: iw * mss as u64,
                initial_ssthresh: Ssthresh::Infinite,
                loss_window: mss as u64,
                cwnd_validation: true,
                linux_ss_clamp: false,
            },
            Startup::SlowStart(SlowStart),
            Avoidance::Reno(Reno::default()),
        );
        let cfg = SenderConfig {
            mss,
            size: Some(size),
            recovery,
            rto: RtoConfig::default(),
            limited_transmit: true,
            dupthresh,
            handshake: false,
            newreno_impatient: true,
            pacing: false,
            quick_start: None,
            ecn: false,
            app_limited: false,
            idle_restart: IdleRestart::Rfc5681,
            startup_after_idle: false,
            startup_min_response: 0,
        };
        let mut snd = Sender::new(cfg, cc);
        let policy = if delayed { AckPolicy::Delayed { timeout: Dur::from_millis(200) } } else { AckPolicy::EveryPacket };
        let mut rcv = Receiver::new(ReceiverConfig { policy, sack: true, max_sack_blocks: 3, rwnd: u64::MAX, mss: mss as u64 });
        let delay = Dur::from_millis(10);
        // In-flight data and ACKs, each with its arrival time, in arrival order (FIFO path).
        let mut data: VecDeque<(Time, Segment)> = VecDeque::new();
        let mut acks: VecDeque<(Time, Ack)> = VecDeque::new();
        let mut now = Time::ZERO;
        let (mut sent, mut reductions) = (0, 0);
        snd.start(now);
        for _ in 0..200_000 {
            while let Some(seg) = snd.poll_transmit(now) {
                sent += 1;
                if !drops.contains(&sent) {
                    data.push_back((now + delay, seg));
                }
            }
            if snd.completed_at().is_some() {
                break;
            }
            let next = [data.front().map(|d| d.0), acks.front().map(|a| a.0), snd.next_timeout(), rcv.next_timeout()]
                .into_iter()
                .flatten()
                .min()
                .expect("something is pending");
            now = next;
            if data.front().is_some_and(|d| d.0 == now) {
                let (_, seg) = data.pop_front().unwrap();
                if let Some(a) = rcv.on_segment(now, seg.seq, seg.len) {
                    acks.push_back((now + delay, a));
                }
            } else if acks.front().is_some_and(|a| a.0 == now) {
                let (_, a) = acks.pop_front().unwrap();
                snd.on_ack(now, &a);
            } else if rcv.next_timeout() == Some(now) {
                if let Some(a) = rcv.on_timer(now) {
                    acks.push_back((now + delay, a));
                }
            } else {
                snd.on_timer(now);
            }
            check_reduction(&snd, &mut reductions);
        }
        (rcv, snd)
    }

    /// Every congestion event since the last call: it never raised ssthresh above the cwnd it
    /// found (but for the 2 SMSS floor), whatever FlightSize was. (A timeout during recovery keeps
    /// the episode's ssthresh, which PRR's cwnd may be below: that raises nothing.)
    fn check_reduction(snd: &Sender, seen: &mut u64) {
        let cc = snd.cc();
        if cc.reductions() == *seen {
            return;
        }
        *seen = cc.reductions();
        let r = cc.last_reduction().expect("a reduction was recorded");
        let floor = 2.0 * snd.mss() as f64;
        assert!(
            r.ssthresh_after <= r.cwnd_before.max(floor) || r.ssthresh_after <= r.ssthresh_before.as_f64(),
            "{:?} at {:?} raised ssthresh to {} above the cwnd it found, {} ({:?} recovery)",
            r.kind, r.now, r.ssthresh_after, r.cwnd_before, snd.cfg.recovery
        );
        // RACK reduces as Linux does: Reno's half of cwnd at most, never of a larger FlightSize.
        if snd.cfg.recovery.rack() && r.kind == CongestionKind::FastRetransmit {
            assert!(r.ssthresh_after <= (r.cwnd_before / 2.0).max(floor), "{:?} recovery: ssthresh {} from cwnd {}", snd.cfg.recovery, r.ssthresh_after, r.cwnd_before);
        }
    }

    /// A delayed-ACK receiver holds the ACK of an in-order segment; the next one is dropped, so
    /// the ACK that first SACKs (the segment after the hole) also acknowledges the held one. That
    /// segment lies below the highest SACKed byte after the ACK but not before it, so it is no
    /// reordering (Linux compares with `prior_fack`): RACK keeps a zero reordering window in
    /// recovery. Every drop position of a 60-segment transfer, one and two drops.
    #[test]
    fn rack_sees_no_reordering_on_a_fifo_path() {
        for recovery in [Recovery::RackTlp, Recovery::Linux] {
            for first in 1..60 {
                for drops in [vec![first], vec![first, first + 2]] {
                    let (rcv, snd) = transfer_ends(recovery, 1000, 60_000, 10, 3, true, &drops);
                    assert_eq!(rcv.delivered(), 60_000);
                    assert!(!snd.reordering_seen(), "{recovery:?}, drops {drops:?}: reordering reported on a FIFO path");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Loss bursts and scattered drops, short last segments, every DupThresh: the run-based
        /// scoreboard gives RFC 6675's IsLost(), SetPipe() and NextSeg() at every step (checked by
        /// `reference`), and the transfer completes with every byte delivered.
        #[test]
        fn the_run_based_scoreboard_is_rfc_6675(
            mss in 1u32..1500,
            segments in 1u64..400,
            tail in 0u64..1500,
            iw in 1u64..20,
            dupthresh in 1u32..6,
            delayed in any::<bool>(),
            burst in (1u64..200, 0u64..150),
            scattered in prop::collection::vec(1u64..1200, 0..30),
        ) {
            let size = segments * mss as u64 + tail % mss as u64;
            let mut drops: Vec<u64> = (burst.0..burst.0 + burst.1).collect();
            drops.extend(scattered);
            let (delivered, stats) = transfer(mss, size, iw, dupthresh, delayed, &drops);
            prop_assert_eq!(delivered, size);
            prop_assert!(stats.retransmissions > 0 || drops.iter().all(|&d| d > stats.packets_sent));
        }

        /// The same losses under every other scoreboard recovery: the transfer completes with
        /// every byte delivered, PRR's pipe is RFC 6675's at every ACK, and RACK-TLP's lost and
        /// retransmitted counts match its per-segment marks at every ACK.
        #[test]
        fn every_sack_recovery_delivers_everything(
            recovery in prop::sample::select(vec![
                Recovery::Prr(PrrBound::SlowStart), Recovery::Prr(PrrBound::Conservative), Recovery::Prr(PrrBound::SafeAck),
                Recovery::RackTlp, Recovery::Linux, Recovery::Sack1, Recovery::Ns3Prr,
            ]),
            mss in 1u32..1500,
            segments in 1u64..300,
            iw in 1u64..20,
            delayed in any::<bool>(),
            burst in (1u64..200, 0u64..150),
            scattered in prop::collection::vec(1u64..1200, 0..30),
        ) {
            let mut drops: Vec<u64> = (burst.0..burst.0 + burst.1).collect();
            drops.extend(scattered);
            let size = segments * mss as u64;
            let (delivered, _) = transfer_with(recovery, mss, size, iw, 3, delayed, &drops);
            prop_assert_eq!(delivered, size);
        }

        /// Under every recovery, with Reno's ssthresh = FlightSize/2: no congestion event sets
        /// ssthresh above the cwnd it found (checked at every step by `check_reduction`), even
        /// when SND.UNA stays behind a lost retransmission while the recovery sends on.
        #[test]
        fn no_congestion_event_raises_ssthresh_above_cwnd(
            recovery in prop::sample::select(vec![
                Recovery::Tahoe, Recovery::Reno, Recovery::NewReno, Recovery::Sack,
                Recovery::Prr(PrrBound::SlowStart), Recovery::Prr(PrrBound::Conservative), Recovery::Prr(PrrBound::SafeAck),
                Recovery::RackTlp, Recovery::Linux, Recovery::Sack1, Recovery::Ns3Prr,
            ]),
            segments in 50u64..2000,
            iw in 1u64..20,
            delayed in any::<bool>(),
            bursts in prop::collection::vec((1u64..3000, 0u64..300), 1..4),
        ) {
            let mut drops: Vec<u64> = bursts.iter().flat_map(|&(at, n)| at..at + n).collect();
            drops.sort_unstable();
            let size = segments * 1000;
            let (delivered, _) = transfer_with(recovery, 1000, size, iw, 3, delayed, &drops);
            prop_assert_eq!(delivered, size);
        }
    }
}
