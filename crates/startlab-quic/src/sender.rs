//! The sending half of a QUIC endpoint: per packet-number space the bytes it must deliver (the
//! TLS handshake's CRYPTO data in the Initial and Handshake spaces, one stream of `size` bytes —
//! or unlimited — in the application data space), RFC 9002's loss detection
//! ([`LossDetection`]) and congestion control through startlab's [`Controller`], so every startup
//! and avoidance algorithm runs over QUIC unchanged. [`crate::endpoint`] drives the handshake
//! (which spaces are open, the anti-amplification limit, the ACKs to send); used alone, a
//! `Sender` has only the application data space open, as after a handshake.
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

use startlab_cc::{AckEvent, CcView, CongestionEvent, CongestionKind, Controller, RateSample};
use startlab_tcp::parts::{Pacer, RangeSet};
use startlab_units::{Dur, Time};

use crate::ack::{varint_len, AckFrame, AckFrequency};
use crate::recovery::{AckOutcome, LossConfig, LossDetection, SentPacket, Timeout};
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
    /// Pad Initial packets to 1200 bytes (a client, RFC 9000 §14.1).
    pub pad_initial: bool,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig { max_datagram_size: 1472, loss: LossConfig::default(), pacing: false, pacing_gain: 1.25, size: None, l4s: false, pad_initial: false }
    }
}

/// A packet for the driver to put on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Its packet-number space.
    pub space: Space,
    /// Its packet number in that space.
    pub pn: u64,
    /// UDP payload bytes.
    pub size: u32,
    /// The bytes it carries, `(offset, len)`: CRYPTO data in the Initial and Handshake spaces,
    /// the stream's in the application data space.
    pub data: Option<(u64, u32)>,
    /// An ACK frame it carries.
    pub ack: Option<AckFrame>,
    /// It carries HANDSHAKE_DONE (the server confirming the handshake, RFC 9000 §19.20).
    pub handshake_done: bool,
    /// It carries MAX_DATA with this limit (RFC 9000 §19.9: the receiver raising the sender's
    /// flow-control limit; one stream per connection, so it also stands for MAX_STREAM_DATA).
    pub max_data: Option<u64>,
    /// It carries ACK_FREQUENCY (the data sender asking the receiver to acknowledge less often).
    pub ack_frequency: Option<AckFrequency>,
    /// It carries a frame other than ACK and PADDING (it is acknowledged, and counts in flight).
    pub ack_eliciting: bool,
    /// A probe (sent past the window on a probe timeout).
    pub probe: bool,
    /// It carries bytes sent before (lost or probed).
    pub retransmission: bool,
}

/// Bytes of a packet of `space` around its frames: the header and the AEAD tag (16). Long headers
/// (RFC 9000 §17.2): flags, version, two 8-byte connection IDs with their lengths, a 2-byte length,
/// a 4-byte packet number, and in Initial packets an empty token's length.
pub fn packet_overhead(space: Space) -> u32 {
    match space {
        Space::Initial => 1 + 4 + 1 + 8 + 1 + 8 + 1 + 2 + 4 + 16,
        Space::Handshake => 1 + 4 + 1 + 8 + 1 + 8 + 2 + 4 + 16,
        Space::AppData => ONE_RTT_OVERHEAD,
    }
}

/// Bytes of a CRYPTO (Initial, Handshake) or STREAM (application data) frame's header at `offset`
/// (with a 2-byte length).
pub fn data_frame_header(space: Space, offset: u64) -> u32 {
    let stream_id = (space == Space::AppData) as u32;
    1 + stream_id + varint_len(offset) + 2
}

/// The bytes one space must deliver: `len` of them (`None`: unlimited), what was sent, lost and
/// acknowledged.
#[derive(Clone, Debug, Default)]
struct Outgoing {
    len: Option<u64>,
    next: u64,
    lost: RangeSet,
    acked: RangeSet,
    /// The bytes acknowledged in order from the first: `acked`'s first range if it starts at 0
    /// (kept here, read on every packet the flow receives, so that `acked`'s heap memory is not).
    acked_prefix: u64,
}

impl Outgoing {
    fn with_len(len: Option<u64>) -> Outgoing {
        Outgoing { len, ..Outgoing::default() }
    }

    /// Lost bytes first, then new ones, at most `max` at once: `(offset, len, retransmission)`.
    fn next_chunk(&self, max: impl Fn(u64) -> u32) -> Option<(u64, u32, bool)> {
        if let Some((s, e)) = self.lost.first() {
            return Some((s, (e - s).min(max(s) as u64) as u32, true));
        }
        let room = self.len.map_or(u64::MAX, |l| l.saturating_sub(self.next));
        (room > 0).then(|| (self.next, room.min(max(self.next) as u64) as u32, false))
    }

    /// `[off, off + len)` is acknowledged: it need not be sent again.
    fn on_acked(&mut self, off: u64, len: u32) {
        self.acked.insert(off, off + len as u64, |_, _| {});
        if !self.lost.is_empty() {
            self.lost.remove(off, off + len as u64);
        }
        if off <= self.acked_prefix {
            self.acked_prefix = self.acked.first().filter(|&(s, _)| s == 0).map_or(0, |(_, e)| e);
        }
    }

    fn done(&self) -> bool {
        self.len.is_some_and(|l| l == 0 || self.acked.covers(0, l))
    }
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
    /// Of those, the ones an increase of the CE count started.
    pub ecn_events: u64,
    /// Persistent congestion declared.
    pub persistent_congestion: u64,
    /// Time spent in recovery periods that ended (from a congestion event until a packet sent
    /// after it is acknowledged, RFC 9002 §7.3.2); [`Sender::recovery_time`] adds one still open.
    pub recovery_time: Dur,
}

/// The sending half of an endpoint.
///
/// `repr(C)`: the flags and counters every ACK and every send attempt read come first, on a few
/// cache lines together, then the configuration, the application data space's state, loss
/// detection and the controller (itself laid out hot fields first).
#[derive(Debug)]
#[repr(C)]
pub struct Sender {
    /// Per space: keys are available (packets may be sent).
    open: [bool; 3],
    /// HANDSHAKE_DONE must be sent (server): set once, and again if the packet carrying it is lost.
    handshake_done: bool,
    /// The last send was stopped by the window (RFC 7661's "cwnd-limited").
    cwnd_limited: bool,
    /// Stream data was held back by the peer's limit (for results).
    flow_blocked: bool,
    /// Per space: the encoded length of the ACK frame in `acks` (asked on every send attempt).
    ack_lens: [u32; 3],
    /// Probes owed after a probe timeout, and their space.
    probes: Option<(Space, u32)>,
    /// A MAX_DATA frame to send (this end's receive limit), and the packet carrying the last one.
    max_data: Option<u64>,
    /// Bytes the anti-amplification limit still allows (RFC 9000 §8.1); `None`: no limit.
    amplification: Option<u64>,
    /// The peer's flow-control limit on the stream (`None`: unlimited).
    peer_max_data: Option<u64>,
    /// The current recovery period began at this time (§7.3.2 `congestion_recovery_start_time`).
    recovery_start: Option<Time>,
    /// A recovery period is open since this time (for [`SenderStats::recovery_time`]).
    recovering_since: Option<Time>,
    /// Largest position (bytes sent, [`SentPacket::sent_before`]) acknowledged.
    ack_pos: u64,
    /// Bytes acknowledged.
    delivered: u64,
    /// When `delivered` last grew (the delivery-rate samples' clock).
    delivered_time: Time,
    /// The peer's last ECN-CE count (application data space).
    ce_count: u64,
    /// The packet that carries HANDSHAKE_DONE, until it is acknowledged.
    handshake_done_pn: Option<u64>,
    max_data_pn: Option<(u64, u64)>,
    /// An ACK_FREQUENCY frame to send, and the packet carrying the last one.
    ack_frequency: Option<AckFrequency>,
    pacer: Pacer,
    stats: SenderStats,
    cfg: SenderConfig,
    /// Per space: an ACK frame to send (bundled with data, or alone).
    acks: [Option<AckFrame>; 3],
    /// Per space: the bytes to deliver.
    out: [Outgoing; 3],
    ld: LossDetection,
    cc: Controller,
    ack_frequency_pn: Option<(u64, AckFrequency)>,
    /// The last ACK's outcome, kept for its vectors' memory.
    scratch: AckOutcome,
    /// Packets declared lost since the log was last taken, `(space, packet number, persistent
    /// congestion)`, when a log is kept (`keep_lost_log`: the simulator's qlog output).
    lost_log: Option<Vec<(Space, u64, bool)>>,
}

impl Sender {
    /// A sender with `cfg` driving `cc` (whose segment size must be `max_datagram_size`), with
    /// only the application data space open and the handshake confirmed.
    pub fn new(cfg: SenderConfig, cc: Controller) -> Sender {
        let mut s = Sender::closed(cfg, cc);
        s.ld.confirm_handshake();
        s.open[Space::AppData as usize] = true;
        s.out[Space::AppData as usize] = Outgoing::with_len(s.cfg.size);
        s
    }

    /// A sender with every space closed (the endpoint opens them as the handshake proceeds).
    pub(crate) fn closed(cfg: SenderConfig, cc: Controller) -> Sender {
        debug_assert_eq!(cc.mss(), cfg.max_datagram_size as u64, "the controller counts datagrams");
        Sender {
            lost_log: None,
            ld: LossDetection::new(cfg.loss),
            cfg,
            cc,
            pacer: Pacer::default(),
            out: Default::default(),
            open: [false; 3],
            acks: Default::default(),
            ack_lens: [0; 3],
            handshake_done: false,
            handshake_done_pn: None,
            max_data: None,
            max_data_pn: None,
            peer_max_data: None,
            ack_frequency: None,
            ack_frequency_pn: None,
            flow_blocked: false,
            amplification: None,
            recovery_start: None,
            recovering_since: None,
            probes: None,
            ce_count: 0,
            ack_pos: 0,
            delivered: 0,
            delivered_time: Time::ZERO,
            cwnd_limited: true,
            stats: SenderStats::default(),
            scratch: AckOutcome::default(),
        }
    }

    /// Keeps a log of the packets declared lost ([`Sender::take_lost`]).
    pub fn keep_lost_log(&mut self) {
        self.lost_log.get_or_insert_with(Vec::new);
    }

    /// The packets declared lost since the last call: `(space, packet number, persistent
    /// congestion)` (empty without [`Sender::keep_lost_log`]).
    pub fn take_lost(&mut self) -> Vec<(Space, u64, bool)> {
        self.lost_log.as_mut().map(std::mem::take).unwrap_or_default()
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
    pub(crate) fn loss_detection_mut(&mut self) -> &mut LossDetection {
        &mut self.ld
    }
    /// Sets how many bytes `space` must deliver (the server's response once the request is in).
    pub(crate) fn set_len(&mut self, space: Space, len: Option<u64>) {
        self.out[space as usize].len = len;
    }
    /// True when `space` is open.
    pub(crate) fn is_open(&self, space: Space) -> bool {
        self.open[space as usize]
    }
    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }
    /// Stream bytes acknowledged.
    pub fn acked_bytes(&self) -> u64 {
        self.out[Space::AppData as usize].acked.bytes()
    }
    /// Stream bytes acknowledged in order from the first (TCP's `SND.UNA`).
    pub fn stream_acked_prefix(&self) -> u64 {
        self.out[Space::AppData as usize].acked_prefix
    }
    /// The stream's bytes sent at least once (TCP's `SND.MAX`).
    pub fn stream_sent(&self) -> u64 {
        self.out[Space::AppData as usize].next
    }
    /// Time spent in recovery periods up to `now` (the one still open included).
    pub fn recovery_time(&self, now: Time) -> Dur {
        self.stats.recovery_time + self.recovering_since.map_or(Dur::ZERO, |s| now - s)
    }
    /// Every stream byte is acknowledged (never, for an unlimited stream).
    pub fn is_done(&self) -> bool {
        self.open[Space::AppData as usize] && self.out[Space::AppData as usize].done()
    }

    /// Opens `space` with `len` bytes to deliver in it (CRYPTO data, or the stream).
    pub(crate) fn open_space(&mut self, space: Space, len: Option<u64>) {
        self.open[space as usize] = true;
        self.out[space as usize] = Outgoing::with_len(len);
    }
    /// Discards `space` (RFC 9001 §4.9): nothing more is sent or retransmitted in it.
    pub(crate) fn discard(&mut self, space: Space) {
        self.open[space as usize] = false;
        self.acks[space as usize] = None;
        if self.probes.is_some_and(|(sp, _)| sp == space) {
            self.probes = None;
        }
        self.ld.discard(space);
    }
    /// An ACK frame to send in its space.
    pub(crate) fn queue_ack(&mut self, frame: AckFrame) {
        let sp = frame.space as usize;
        self.ack_lens[sp] = frame.encoded_len();
        self.acks[sp] = Some(frame);
    }
    /// HANDSHAKE_DONE must be sent.
    pub(crate) fn queue_handshake_done(&mut self) {
        self.handshake_done = true;
    }
    /// MAX_DATA with `limit` must be sent.
    pub(crate) fn queue_max_data(&mut self, limit: u64) {
        self.max_data = Some(limit);
    }
    /// ACK_FREQUENCY must be sent.
    pub(crate) fn queue_ack_frequency(&mut self, f: AckFrequency) {
        self.ack_frequency = Some(f);
    }
    /// The peer's flow-control limit (its transport parameter, then its MAX_DATA frames; a
    /// lower value than the one in force is ignored, RFC 9000 §4.1).
    pub(crate) fn set_peer_max_data(&mut self, limit: Option<u64>) {
        self.peer_max_data = match (self.peer_max_data, limit) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (_, l) => l,
        };
    }
    /// Stream data has been held back by the peer's flow-control limit at least once.
    pub fn flow_blocked(&self) -> bool {
        self.flow_blocked
    }
    /// The anti-amplification limit's allowance (`None`: the address is validated).
    pub(crate) fn set_amplification(&mut self, credit: Option<u64>) {
        self.amplification = credit;
    }
    pub(crate) fn add_amplification_credit(&mut self, bytes: u64) {
        if let Some(c) = self.amplification.as_mut() {
            *c += bytes;
        }
    }

    /// Bytes one packet of `space` carries at `offset`.
    fn payload_at(&self, space: Space, offset: u64, ack_len: u32) -> u32 {
        self.cfg.max_datagram_size - packet_overhead(space) - data_frame_header(space, offset) - ack_len
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

    /// The next packet to send at `now`, if the window, the pacer, the anti-amplification limit
    /// and what there is to send allow one. Spaces go in order (Initial, Handshake, application
    /// data); an ACK alone is sent whatever the window (ACK-only packets are not congestion
    /// controlled, RFC 9002 §7).
    pub fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        for space in Space::ALL {
            if !self.open[space as usize] {
                continue;
            }
            if let Some(t) = self.transmit_in(now, space) {
                return Some(t);
            }
        }
        None
    }

    fn transmit_in(&mut self, now: Time, space: Space) -> Option<Transmit> {
        let si = space as usize;
        let probe = self.probes.is_some_and(|(sp, _)| sp == space);
        let ack_len = if self.acks[si].is_some() { self.ack_lens[si] } else { 0 };
        let done_frame = space == Space::AppData && self.handshake_done;
        let max_data = self.max_data.filter(|_| space == Space::AppData);
        let frequency = self.ack_frequency.filter(|_| space == Space::AppData);
        let control_len = done_frame as u32 + max_data.map_or(0, |m| 1 + varint_len(m)) + frequency.map_or(0, |f| f.encoded_len());
        let mut chunk = self.out[si].next_chunk(|off| self.payload_at(space, off, ack_len + control_len));
        if let (Space::AppData, Some(limit), Some((off, len, false))) = (space, self.peer_max_data, chunk) {
            // RFC 9000 §4.1: no stream byte at or beyond the peer's limit.
            if off >= limit {
                self.flow_blocked = true;
                chunk = None;
            } else {
                chunk = Some((off, len.min((limit - off) as u32), false));
            }
        }
        if chunk.is_none() && probe {
            // §6.2.4: with nothing new, a probe carries the oldest unacknowledged bytes again.
            chunk = self.ld.outstanding(space).find_map(|p| p.stream).map(|(o, l)| (o, l, true));
        }
        let eliciting = chunk.is_some() || done_frame || max_data.is_some() || frequency.is_some() || probe;
        if !eliciting {
            // An ACK alone.
            let ack = self.acks[si].take()?;
            let size = self.padded(space, packet_overhead(space) + ack_len);
            if !self.amplification_allows(size) {
                self.acks[si] = Some(ack);
                return None;
            }
            let pn = self.ld.on_packet_sent(now, space, size, false, false, None);
            self.spend_amplification(size);
            return Some(Transmit { space, pn, size, data: None, ack: Some(ack), handshake_done: false, max_data: None, ack_frequency: None, ack_eliciting: false, probe: false, retransmission: false });
        }
        let data_size = chunk.map_or(0, |(o, l, _)| data_frame_header(space, o) + l);
        let size = self.padded(space, packet_overhead(space) + ack_len + data_size + control_len);
        if let Some(t) = self.cc.take_pacing_start() {
            // A startup asked that nothing leave before `t` (its paced first flight).
            self.pacer.delay_to(t);
        }
        if !probe {
            if self.ld.bytes_in_flight() + size as u64 > self.cc.cwnd() as u64 {
                self.cwnd_limited = true;
                return self.ack_alone(now, space);
            }
            if let Some((o, _, false)) = chunk {
                if space == Space::AppData && self.cc.send_limit().is_some_and(|limit| o >= limit) {
                    return self.ack_alone(now, space);
                }
            }
            let rate = self.pacing_rate();
            if self.pacer.holds(now, rate.is_some()) {
                // §7.8: a sender held back by its pacer is not application-limited; the window
                // may grow.
                self.cwnd_limited = true;
                return None;
            }
        }
        if !self.amplification_allows(size) {
            return None;
        }
        if probe {
            if let Some((_, n)) = self.probes.as_mut() {
                *n -= 1;
                if *n == 0 {
                    self.probes = None;
                }
            }
        }
        let o = &mut self.out[si];
        let retransmission = chunk.is_some_and(|c| c.2);
        if let Some((off, len, again)) = chunk {
            if again {
                o.lost.remove(off, off + len as u64);
            } else {
                o.next = off + len as u64;
            }
        }
        if retransmission {
            self.stats.retransmissions += 1;
            if let Some((off, len, _)) = chunk {
                // The stream offset stands for TCP's sequence number.
                self.cc.on_retransmit(off, len as u64);
            }
        }
        if self.stats.packets_sent == 0 {
            self.cc.on_first_send(size as u64);
        }
        let data = chunk.map(|(o, l, _)| (o, l));
        if self.ld.bytes_in_flight() == 0 {
            // Nothing in flight: the rate interval starts now, not at the last delivery.
            self.delivered_time = now;
        }
        self.ld.set_delivery(self.delivered, self.delivered_time);
        let pn = self.ld.on_packet_sent(now, space, size, true, true, data);
        self.spend_amplification(size);
        self.stats.packets_sent += 1;
        self.pacer.on_send(now, size, self.pacing_rate());
        if space == Space::AppData {
            self.cc.on_data_sent(now, self.out[si].next);
        }
        self.cwnd_limited = self.ld.bytes_in_flight() + self.cfg.max_datagram_size as u64 > self.cc.cwnd() as u64;
        let ack = self.acks[si].take();
        if done_frame {
            self.handshake_done = false;
            self.handshake_done_pn = Some(pn);
        }
        if let Some(m) = max_data {
            self.max_data = None;
            self.max_data_pn = Some((pn, m));
        }
        if let Some(f) = frequency {
            self.ack_frequency = None;
            self.ack_frequency_pn = Some((pn, f));
        }
        Some(Transmit { space, pn, size, data, ack, handshake_done: done_frame, max_data, ack_frequency: frequency, ack_eliciting: true, probe, retransmission })
    }

    /// RFC 9000 §14.1: a client pads every datagram carrying an Initial packet to 1200 bytes.
    fn padded(&self, space: Space, size: u32) -> u32 {
        if space == Space::Initial && self.cfg.pad_initial {
            size.max(1200)
        } else {
            size
        }
    }

    /// When the window holds the data back, an ACK waiting in `space` still goes.
    fn ack_alone(&mut self, now: Time, space: Space) -> Option<Transmit> {
        let ack = self.acks[space as usize].take()?;
        let size = self.padded(space, packet_overhead(space) + self.ack_lens[space as usize]);
        if !self.amplification_allows(size) {
            self.acks[space as usize] = Some(ack);
            return None;
        }
        let pn = self.ld.on_packet_sent(now, space, size, false, false, None);
        self.spend_amplification(size);
        Some(Transmit { space, pn, size, data: None, ack: Some(ack), handshake_done: false, max_data: None, ack_frequency: None, ack_eliciting: false, probe: false, retransmission: false })
    }

    fn amplification_allows(&self, size: u32) -> bool {
        self.amplification.is_none_or(|c| size as u64 <= c)
    }

    fn spend_amplification(&mut self, size: u32) {
        if let Some(c) = self.amplification.as_mut() {
            *c -= size as u64;
        }
    }

    /// An ACK frame arrived at `now` (any space).
    pub fn on_ack(&mut self, now: Time, frame: &AckFrame) {
        let mut out = std::mem::take(&mut self.scratch);
        self.ld.on_ack_received_into(now, frame, &mut out);
        self.on_ack_outcome(now, frame, &out);
        self.scratch = out;
    }

    fn on_ack_outcome(&mut self, now: Time, frame: &AckFrame, out: &AckOutcome) {
        let space = frame.space;
        let si = space as usize;
        let mut newly = 0u64;
        let mut after_recovery = 0u64;
        for p in &out.acked {
            if let Some((off, len)) = p.stream {
                self.out[si].on_acked(off, len);
            }
            if space == Space::AppData && self.handshake_done_pn == Some(p.pn) {
                self.handshake_done_pn = None;
            }
            if space == Space::AppData && self.max_data_pn.is_some_and(|(pn, _)| pn == p.pn) {
                self.max_data_pn = None;
            }
            if let Some((_, f)) = self.ack_frequency_pn.filter(|&(pn, _)| space == Space::AppData && pn == p.pn) {
                // The peer acknowledges with the new delay from now on (the draft's §6: the
                // sender uses it once the frame is acknowledged).
                self.ack_frequency_pn = None;
                self.ld.set_max_ack_delay(f.request_max_ack_delay);
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
        if newly > 0 {
            self.delivered_time = now;
        }
        // The delivery rate since the newest packet acknowledged left (draft-cheng-iccrg-delivery-
        // rate-estimation, as TCP's sender samples it): what was delivered meanwhile over the time.
        let rate_sample = out.acked.iter().rev().find(|p| p.in_flight).filter(|p| p.delivery.1 < now).map(|p| RateSample { delivered: self.delivered - p.delivery.0, interval: now - p.delivery.1 });
        // ECN (§7.1, B.7): an increase of the CE count.
        let ce_new = if space == Space::AppData { frame.ecn.map_or(0, |e| e.ce.saturating_sub(self.ce_count)) } else { 0 };
        if let Some(e) = frame.ecn.filter(|_| space == Space::AppData) {
            self.ce_count = self.ce_count.max(e.ce);
        }
        let largest_acked = out.acked.last().copied();
        if ce_new > 0 && !self.cfg.l4s {
            if let Some(p) = largest_acked {
                self.congestion_event(now, p.time_sent, CongestionKind::Ecn);
            }
        }
        self.on_lost(now, &out.lost, out.persistent_congestion);
        if newly == 0 {
            return;
        }
        if self.recovering_since.is_some() && self.recovery_start.is_some_and(|r| out.acked.iter().any(|p| p.time_sent > r)) {
            self.close_recovery(now);
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
            acked_segments: out.acked.iter().filter(|p| p.in_flight).count() as u32,
            timer_triggered: false,
            delivered: self.delivered,
            rate_sample,
            ce_bytes: if self.cfg.l4s { ce_new * self.cfg.max_datagram_size as u64 } else { 0 },
        };
        if self.cc.phase() == startlab_cc::Phase::Recovery && self.cc.rides_out_recovery() {
            // A startup that rides the recovery out (BBRv3) sees its ACKs; the window stays the
            // recovery's.
            self.cc.on_recovery_ack(&AckEvent { newly_acked: after_recovery, ..ev }, self.ack_pos);
        }
        self.cc.on_ack(&ev);
        if self.cfg.l4s && ce_new > 0 {
            if let Some(p) = largest_acked {
                self.congestion_event(now, p.time_sent, CongestionKind::Ecn);
            }
        }
    }

    /// Lost packets: their unacknowledged bytes go back in their space's queue, and the last one
    /// sent signals congestion.
    fn on_lost(&mut self, now: Time, lost: &[SentPacket], persistent: bool) {
        if let Some(log) = self.lost_log.as_mut() {
            log.extend(lost.iter().map(|p| (p.space, p.pn, persistent)));
        }
        if let Some(p) = lost.iter().find(|p| p.space == Space::AppData && Some(p.pn) == self.handshake_done_pn) {
            // HANDSHAKE_DONE goes again in a new packet.
            self.handshake_done_pn = None;
            self.handshake_done = p.in_flight;
        }
        if let Some((_, f)) = self.ack_frequency_pn.filter(|&(pn, _)| lost.iter().any(|p| p.space == Space::AppData && p.pn == pn)) {
            self.ack_frequency_pn = None;
            self.ack_frequency = Some(self.ack_frequency.unwrap_or(f));
        }
        if let Some((_, m)) = self.max_data_pn.filter(|&(pn, _)| lost.iter().any(|p| p.space == Space::AppData && p.pn == pn)) {
            // The limit goes again unless a newer one is waiting.
            self.max_data_pn = None;
            self.max_data = Some(self.max_data.map_or(m, |n| n.max(m)));
        }
        let in_flight: Vec<&SentPacket> = lost.iter().filter(|p| p.in_flight).collect();
        self.stats.packets_lost += in_flight.len() as u64;
        for p in &in_flight {
            let o = &mut self.out[p.space as usize];
            if let Some((off, len)) = p.stream {
                for (a, b) in o.acked.gaps_in(off, off + len as u64) {
                    o.lost.insert(a, b, |_, _| {});
                }
            }
        }
        let Some(last) = in_flight.iter().map(|p| p.time_sent).max() else { return };
        self.congestion_event(now, last, CongestionKind::FastRetransmit);
        if persistent {
            self.stats.persistent_congestion += 1;
            self.cc.on_repeated_timeout();
            self.recovery_start = None;
            self.close_recovery(now);
        }
    }

    /// The open recovery period ends at `now`.
    fn close_recovery(&mut self, now: Time) {
        if let Some(s) = self.recovering_since.take() {
            self.stats.recovery_time = self.stats.recovery_time + (now - s);
        }
    }

    /// `OnCongestionEvent(sent_time)` (B.6): once per recovery period.
    fn congestion_event(&mut self, now: Time, sent_time: Time, kind: CongestionKind) {
        if self.recovery_start.is_some_and(|r| sent_time <= r) {
            return;
        }
        self.recovery_start = Some(now);
        self.recovering_since.get_or_insert(now);
        self.stats.congestion_events += 1;
        self.stats.ecn_events += (kind == CongestionKind::Ecn) as u64;
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
                Some(Timeout::Probe { space, count }) => {
                    self.stats.ptos += 1;
                    self.probes = Some((space, count));
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
