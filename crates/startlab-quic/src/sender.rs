//! The data sender of a QUIC connection's 1-RTT space: one stream of `size` bytes (or unlimited),
//! RFC 9002's loss detection ([`LossDetection`]) and congestion control through startlab's
//! [`Controller`], so every startup and avoidance algorithm runs over QUIC unchanged.
//!
//! How RFC 9002 §7 maps onto the controller:
//! - **Bytes.** The controller's segment size is `max_datagram_size`, and windows and bytes in
//!   flight count whole datagrams (§7: "congestion window in bytes", the UDP payload). The initial
//!   window is `min(10·max_datagram_size, max(14720, 2·max_datagram_size))` (§7.2) and the minimum
//!   window `2·max_datagram_size` (the controller's loss window after persistent congestion).
//! - **ACKs.** One ACK frame is one [`AckEvent`]: `newly_acked` the in-flight bytes it newly
//!   acknowledges, `acked_segments` its packets, the RTT sample of §5.1 (always clean: no Karn
//!   ambiguity), and for rounds (ALGORITHMS.md §0.3, RFC 9406's `windowEnd`) `ack_seq`/`snd_nxt`
//!   are positions in the bytes sent: a round ends when a packet sent after it began is
//!   acknowledged.
//! - **Congestion events** (§7.3.2, Appendix B.6): packets declared lost, or an increase of the
//!   ECN-CE count (§7.1, B.7), start a recovery period unless the packet that signalled it was sent
//!   before the current one began: the controller reduces once from the window (`on_congestion`
//!   with `enter_recovery`, the window as the flight size), holds the window (no growth for packets sent before the period, §7.3.2),
//!   and the period ends when a packet sent after it began is acknowledged (`on_recovery_exit`).
//!   Unlike TCP there is no fast-recovery window: lost data goes out again in new packets as the
//!   window allows.
//! - **Persistent congestion** (§7.6.2): the window collapses to the minimum window, ssthresh stays
//!   (`on_repeated_timeout`), and the next loss starts a new period.
//! - **Probe timeouts** (§6.2.4) change no window: one or two ack-eliciting probes leave even when
//!   the window is full — new data if there is any, else the oldest unacknowledged data again.
//! - **Pacing** (§7.7): the startup's rate while it sets one, else with `pacing` the RFC's
//!   `N · cwnd / smoothed_rtt` with `N = pacing_gain` (1.25), from the first RTT sample on (the
//!   initial window leaves as one burst, as §7.7 allows).

use startlab_cc::{AckEvent, CcView, CongestionEvent, CongestionKind, Controller};
use startlab_tcp::parts::{Pacer, RangeSet};
use startlab_units::{Dur, Time};

use crate::ack::{varint_len, AckFrame};
use crate::recovery::{LossConfig, LossDetection, SentPacket, Timeout};
use crate::Space;

/// Bytes of a 1-RTT packet around its frames: the short header (1 byte of flags, an 8-byte
/// connection ID, a 4-byte packet number) and the AEAD tag (16 bytes).
pub const ONE_RTT_OVERHEAD: u32 = 1 + 8 + 4 + 16;

/// RFC 9002 §7.2's initial window for a datagram size.
pub fn initial_window(max_datagram_size: u32) -> u64 {
    let d = max_datagram_size as u64;
    (10 * d).min(14_720.max(2 * d))
}

/// The sender's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SenderConfig {
    /// Largest UDP payload (RFC 9000 §14: at least 1200).
    pub max_datagram_size: u32,
    /// Loss detection's constants and the peer's `max_ack_delay`.
    pub loss: LossConfig,
    /// Pace at `pacing_gain · cwnd / smoothed_rtt` when the startup sets no rate (§7.7).
    pub pacing: bool,
    /// `N` of §7.7 (1.25).
    pub pacing_gain: f64,
    /// Stream bytes to send (`None`: unlimited).
    pub size: Option<u64>,
    /// The ECN-CE count increase is handed to the controller as marked bytes (an L4S flow's
    /// feedback, as Accurate ECN for TCP) rather than as a classic congestion event.
    pub l4s: bool,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig { max_datagram_size: 1472, loss: LossConfig::default(), pacing: false, pacing_gain: 1.25, size: None, l4s: false }
    }
}

/// A packet for the driver to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Its packet number in the application data space.
    pub pn: u64,
    /// UDP payload bytes.
    pub size: u32,
    /// The stream bytes it carries, `(offset, len)`.
    pub stream: Option<(u64, u32)>,
    /// A probe (sent past the window on a probe timeout).
    pub probe: bool,
    /// It carries stream bytes sent before (lost or probed).
    pub retransmission: bool,
}

/// Counters for results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Packets carrying stream bytes sent before.
    pub retransmissions: u64,
    /// Probe timeouts.
    pub ptos: u64,
    /// Congestion events (recovery periods started by loss or ECN).
    pub congestion_events: u64,
    /// Persistent congestion declared.
    pub persistent_congestion: u64,
}

/// The 1-RTT data sender.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    cc: Controller,
    ld: LossDetection,
    pacer: Pacer,
    /// Next new stream byte.
    next_offset: u64,
    /// Stream bytes declared lost and not yet sent again.
    lost: RangeSet,
    /// Stream bytes acknowledged.
    acked: RangeSet,
    /// The current recovery period began at this time (§7.3.2 `congestion_recovery_start_time`).
    recovery_start: Option<Time>,
    /// Probes owed after a probe timeout.
    probes_due: u32,
    /// The peer's last ECN-CE count.
    ce_count: u64,
    /// Largest position (bytes sent, [`SentPacket::sent_before`]) acknowledged.
    ack_pos: u64,
    /// Bytes acknowledged.
    delivered: u64,
    /// The last send was stopped by the window (RFC 7661's "cwnd-limited").
    cwnd_limited: bool,
    stats: SenderStats,
}

impl Sender {
    /// A sender with `cfg` driving `cc` (whose segment size must be `max_datagram_size`).
    pub fn new(cfg: SenderConfig, cc: Controller) -> Sender {
        debug_assert_eq!(cc.mss(), cfg.max_datagram_size as u64, "the controller counts datagrams");
        let mut ld = LossDetection::new(cfg.loss);
        // The data sender runs after the handshake (the driver models the handshake's flights).
        ld.confirm_handshake();
        Sender {
            cfg,
            cc,
            ld,
            pacer: Pacer::default(),
            next_offset: 0,
            lost: RangeSet::default(),
            acked: RangeSet::default(),
            recovery_start: None,
            probes_due: 0,
            ce_count: 0,
            ack_pos: 0,
            delivered: 0,
            cwnd_limited: true,
            stats: SenderStats::default(),
        }
    }

    /// The controller.
    pub fn controller(&self) -> &Controller {
        &self.cc
    }
    /// The controller, for the driver's handshake calls (`on_handshake`).
    pub fn controller_mut(&mut self) -> &mut Controller {
        &mut self.cc
    }
    /// Loss detection (RTT estimates, bytes in flight).
    pub fn loss_detection(&self) -> &LossDetection {
        &self.ld
    }
    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }
    /// Stream bytes acknowledged.
    pub fn acked_bytes(&self) -> u64 {
        self.acked.bytes()
    }
    /// Every stream byte is acknowledged (never, for an unlimited stream).
    pub fn is_done(&self) -> bool {
        self.cfg.size.is_some_and(|s| self.acked.covers(0, s) || s == 0)
    }

    /// Stream bytes one packet carries at `offset`.
    fn payload_at(&self, offset: u64) -> u32 {
        // STREAM frame: type, stream ID, offset, length (2 bytes).
        let frame = 1 + 1 + varint_len(offset) + 2;
        self.cfg.max_datagram_size - ONE_RTT_OVERHEAD - frame
    }

    /// The next stream bytes to send: lost bytes first, then new ones; `None` when there are none.
    fn next_chunk(&self) -> Option<(u64, u32, bool)> {
        if let Some((s, e)) = self.lost.first() {
            let len = (e - s).min(self.payload_at(s) as u64) as u32;
            return Some((s, len, true));
        }
        let room = self.cfg.size.map_or(u64::MAX, |s| s.saturating_sub(self.next_offset));
        if room == 0 {
            return None;
        }
        let len = room.min(self.payload_at(self.next_offset) as u64) as u32;
        Some((self.next_offset, len, false))
    }

    /// The pacing rate in force (bytes per second), if any.
    fn pacing_rate(&self) -> Option<f64> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        // Before the first RTT sample the estimate is the 333 ms default: the initial window
        // leaves at once (§7.7: bursts up to the initial window are allowed).
        if !self.cfg.pacing || !self.ld.rtt().has_sample() {
            return None;
        }
        let srtt = self.ld.rtt().smoothed().as_secs_f64();
        (srtt > 0.0).then(|| self.cfg.pacing_gain * self.cc.cwnd() / srtt)
    }

    /// The next packet to send at `now`, if the window, the pacer and the stream allow one.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        let probe = self.probes_due > 0;
        let (offset, len, retransmission) = match self.next_chunk() {
            Some(c) => c,
            None if probe => {
                // §6.2.4: with no new data, a probe carries the oldest unacknowledged bytes.
                let p = self.ld.outstanding(Space::AppData).find_map(|p| p.stream)?;
                (p.0, p.1, true)
            }
            None => return None,
        };
        if !probe {
            let size = len + ONE_RTT_OVERHEAD + 4 + varint_len(offset);
            if self.ld.bytes_in_flight() + size as u64 > self.cc.cwnd() as u64 {
                self.cwnd_limited = true;
                return None;
            }
            if let Some(limit) = self.cc.send_limit() {
                if !retransmission && offset >= limit {
                    return None;
                }
            }
            let rate = self.pacing_rate();
            if self.pacer.holds(now, rate.is_some()) {
                return None;
            }
        }
        let size = len + ONE_RTT_OVERHEAD + 4 + varint_len(offset);
        if probe {
            self.probes_due -= 1;
        }
        if retransmission {
            self.lost.remove(offset, offset + len as u64);
            self.stats.retransmissions += 1;
            self.cc.on_retransmit(len as u64);
        } else {
            self.next_offset = offset + len as u64;
        }
        if self.stats.packets_sent == 0 {
            self.cc.on_first_send(size as u64);
        }
        let pn = self.ld.on_packet_sent(now, Space::AppData, size, true, true, Some((offset, len)));
        self.stats.packets_sent += 1;
        self.pacer.on_send(now, size, self.pacing_rate());
        self.cc.on_data_sent(now, self.next_offset);
        self.cwnd_limited = self.ld.bytes_in_flight() + self.cfg.max_datagram_size as u64 > self.cc.cwnd() as u64;
        Some(Transmit { pn, size, stream: Some((offset, len)), probe, retransmission })
    }

    /// An ACK frame of the application data space arrived at `now`.
    pub fn on_ack(&mut self, now: Time, frame: &AckFrame) {
        let out = self.ld.on_ack_received(now, frame);
        let mut newly = 0u64;
        let mut after_recovery = 0u64;
        for p in &out.acked {
            if let Some((off, len)) = p.stream {
                self.acked.insert(off, off + len as u64, |_, _| {});
            }
            self.ack_pos = self.ack_pos.max(p.sent_before);
            if p.in_flight {
                newly += p.size as u64;
                if self.recovery_start.is_none_or(|r| p.time_sent > r) {
                    after_recovery += p.size as u64;
                }
            }
        }
        self.delivered += newly;
        // Acknowledged bytes need not be sent again.
        for p in &out.acked {
            if let Some((off, len)) = p.stream {
                self.lost.remove(off, off + len as u64);
            }
        }
        // ECN (§7.1, B.7): an increase of the CE count.
        let ce_new = frame.ecn.map_or(0, |e| e.ce.saturating_sub(self.ce_count));
        if let Some(e) = frame.ecn {
            self.ce_count = self.ce_count.max(e.ce);
        }
        let largest_acked = out.acked.last().copied();
        if ce_new > 0 && !self.cfg.l4s {
            if let Some(p) = largest_acked {
                self.congestion_event(now, p.time_sent, CongestionKind::Ecn);
            }
        }
        self.on_lost(now, &out.lost, out.persistent_congestion);
        if out.acked.is_empty() {
            return;
        }
        if self.cc.phase() == startlab_cc::Phase::Recovery && self.recovery_start.is_some_and(|r| out.acked.iter().any(|p| p.time_sent > r)) {
            // §7.3.2: a packet sent during the period is acknowledged: recovery ends.
            let cwnd = self.cc.cwnd();
            self.cc.on_recovery_exit(now, cwnd);
        }
        let counted = if self.cc.phase() == startlab_cc::Phase::Recovery { 0 } else { after_recovery };
        let ev = AckEvent {
            now,
            newly_acked: counted,
            ack_seq: self.ack_pos,
            snd_nxt: self.ld.sent_bytes(),
            rtt: out.rtt_sample,
            flight_size: self.ld.bytes_in_flight(),
            cwnd_limited: self.cwnd_limited,
            acked_segments: out.acked.len() as u32,
            timer_triggered: false,
            delivered: self.delivered,
            rate_sample: None,
            ce_bytes: if self.cfg.l4s { ce_new * self.cfg.max_datagram_size as u64 } else { 0 },
        };
        self.cc.on_ack(&ev);
        if self.cfg.l4s && ce_new > 0 {
            if let Some(p) = largest_acked {
                self.congestion_event(now, p.time_sent, CongestionKind::Ecn);
            }
        }
    }

    /// Lost packets: their unacknowledged stream bytes go back in the queue, and the largest one
    /// signals congestion.
    fn on_lost(&mut self, now: Time, lost: &[SentPacket], persistent: bool) {
        if lost.is_empty() {
            return;
        }
        self.stats.packets_lost += lost.len() as u64;
        for p in lost {
            if let Some((off, len)) = p.stream {
                for (a, b) in self.acked.gaps_in(off, off + len as u64) {
                    self.lost.insert(a, b, |_, _| {});
                }
            }
        }
        let last = lost.iter().map(|p| p.time_sent).max().expect("not empty");
        self.congestion_event(now, last, CongestionKind::FastRetransmit);
        if persistent {
            self.stats.persistent_congestion += 1;
            self.cc.on_repeated_timeout();
            self.recovery_start = None;
        }
    }

    /// `OnCongestionEvent(sent_time)` (B.6): once per recovery period.
    fn congestion_event(&mut self, now: Time, sent_time: Time, kind: CongestionKind) {
        if self.recovery_start.is_some_and(|r| sent_time <= r) {
            return;
        }
        self.recovery_start = Some(now);
        self.stats.congestion_events += 1;
        let enter_recovery = kind == CongestionKind::FastRetransmit;
        // B.6 reduces the window, not the bytes in flight (`ssthresh = congestion_window ·
        // kLossReductionFactor`): by the time the loss is known its packets have left the flight,
        // which after a burst or a blackout is nearly empty. The avoidance's reduction of TCP's
        // FlightSize is therefore given the window.
        let flight_size = self.cc.cwnd() as u64;
        self.cc.on_congestion(&CongestionEvent { now, kind, flight_size, enter_recovery });
    }

    /// When the driver must call [`Sender::on_timeout`]: the loss-detection timer or the pacer's
    /// release, whichever is first.
    pub fn next_timeout(&self, now: Time) -> Option<Time> {
        match (self.ld.timer(now), self.pacer.deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A timer fired at `now`.
    pub fn on_timeout(&mut self, now: Time) {
        self.pacer.on_timer(now);
        if self.ld.timer(now).is_some_and(|t| t <= now) {
            match self.ld.on_timeout(now) {
                Some(Timeout::Lost { lost, persistent_congestion }) => self.on_lost(now, &lost, persistent_congestion),
                Some(Timeout::Probe { count, .. }) => {
                    self.stats.ptos += 1;
                    self.probes_due = count;
                }
                None => {}
            }
        }
    }

    /// A read-only view of the controller, for tests and results.
    pub fn view(&self) -> CcView {
        CcView { cwnd: self.cc.cwnd(), ssthresh: self.cc.ssthresh(), mss: self.cc.mss(), round: self.cc.round(), min_rtt: None, new_round: false }
    }

    /// The smoothed RTT.
    pub fn srtt(&self) -> Dur {
        self.ld.rtt().smoothed()
    }
}
