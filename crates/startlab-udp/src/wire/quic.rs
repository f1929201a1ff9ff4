//! The QUIC datagram (type 7) and the QUIC INIT (INIT with the `QUIC` flag): one
//! [`startlab_quic::sender::Transmit`] per datagram, and the settings the far end needs to build
//! the QUIC client endpoint of a scenario's flow.
//!
//! Integers here are QUIC variable-length integers (RFC 9000 §16: a 2-bit length prefix, 1, 2, 4
//! or 8 bytes, values below 2^62), in their shortest form: a longer encoding than needed is
//! malformed, so that the format stays canonical. The ACK frame's ranges are written as RFC 9000
//! §19.3 writes them (largest, first range, then gap and length pairs); the ACK delay is in
//! nanoseconds (no exponent).
//!
//! What is QUIC here and what is not: the packet's *contents* are the endpoint's (packet-number
//! space, packet number, CRYPTO/STREAM offset and length, ACK frame with ranges, ACK delay and ECN
//! counts, HANDSHAKE_DONE, MAX_DATA, ACK_FREQUENCY) and the UDP payload has the simulator's size
//! (`Transmit::size`, zero padding standing for the frames' bytes). The *encoding* is not RFC
//! 9000's: no long or short header, no connection IDs, no version, no header protection, no
//! packet protection (AEAD) and no TLS — the stream and CRYPTO bytes are not sent, only their
//! offsets; the datagram format's keyed BLAKE3 MAC and anti-replay window stand in for the packet
//! protection.

use super::{DropReason, Reader, Writer, MAX_ACK_TIMEOUT, MAX_DATAGRAM};
use startlab_cc::avoidance::{Avoidance, Reno};
use startlab_cc::startup::{SlowStart, Startup};
use startlab_cc::{CcConfig, Controller, Ssthresh};
use startlab_quic::ack::{AckFrame, AckFrequency, AckPolicy, EcnCounts};
use startlab_quic::endpoint::{Endpoint, EndpointConfig, HandshakeSizes, Role};
use startlab_quic::recovery::LossConfig;
use startlab_quic::sender::{SenderConfig, Transmit};
use startlab_quic::Space;
use startlab_units::Dur;

/// The UDP payload of an INIT with the `QUIC` flag: padded with zeros to 1200 bytes, as QUIC pads
/// a client's Initial (RFC 9000 §14.1), so that the server's anti-amplification allowance (3×)
/// covers its INIT_ACK and the QUIC client's first Initial packet (1200 bytes).
pub const QUIC_INIT_LEN: usize = 1200;

/// The most ACK ranges a QUIC datagram may carry (a frame with more is malformed).
pub const MAX_ACK_RANGES: usize = 1024;

/// The largest value of a variable-length integer (2^62 − 1).
pub const VARINT_MAX: u64 = (1 << 62) - 1;

/// Flag bits (header byte 2) of a QUIC datagram.
pub mod qflags {
    /// The packet is ack-eliciting.
    pub const ACK_ELICITING: u8 = 0x01;
    /// A probe (sent past the window on a probe timeout).
    pub const PROBE: u8 = 0x02;
    /// It carries bytes sent before.
    pub const RETRANSMISSION: u8 = 0x04;
    /// HANDSHAKE_DONE.
    pub const HANDSHAKE_DONE: u8 = 0x08;
    /// A CRYPTO or STREAM frame: offset and length follow.
    pub const DATA: u8 = 0x10;
    /// An ACK frame follows.
    pub const ACK: u8 = 0x20;
    /// The ACK frame has ECN counts (only with `ACK`).
    pub const ECN: u8 = 0x40;
    /// MAX_DATA follows.
    pub const MAX_DATA: u8 = 0x80;
    /// In the space byte (not the header's flags): ACK_FREQUENCY follows.
    pub const ACK_FREQUENCY: u8 = 0x04;
}

/// One QUIC packet in one datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuicDatagram {
    /// How long its sender held it after the event that caused it (the kernel's arrival stamp of
    /// the packet it answers, or the timer's deadline), ns, saturating: the host's wake-up and
    /// processing delay. The data sender times a packet from the receiving side as if sent
    /// without it (as TCP mode's ACK delay field); the receiving side ignores it. This is not
    /// QUIC's ACK Delay (that is in the ACK frame, and the endpoints use it as RFC 9002 says).
    pub hold_ns: u32,
    /// The packet.
    pub packet: Transmit,
}

/// What the INIT of a QUIC flow carries: the settings of the scenario's QUIC client endpoint
/// (the simulator's `quic_ends` for the flow's `quic` and `tcp.ecn`), so that the serving side runs
/// the scenario's client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuicSettings {
    /// Run the handshake (`quic.handshake`).
    pub handshake: bool,
    /// The handshake messages' sizes.
    pub sizes: HandshakeSizes,
    /// The request's bytes (`quic.request`).
    pub request: u64,
    /// The client's ACK policy.
    pub ack_policy: AckPolicy,
    /// The client's receive window (`quic.max_data`; `None`: unlimited).
    pub receive_window: Option<u64>,
    /// `quic.max_datagram_size`.
    pub max_datagram_size: u32,
    /// Loss detection's constants and the server's `max_ack_delay`.
    pub loss: LossConfig,
    /// `quic.pacing`.
    pub pacing: bool,
    /// `quic.pacing_gain`.
    pub pacing_gain: f64,
    /// The client controller's initial window, bytes (`quic.initial_window`).
    pub initial_window: u64,
    /// Packets leave ECT(0) (`tcp.ecn = true`); ACK frames then report ECN counts.
    pub ecn: bool,
}

impl QuicSettings {
    /// The client endpoint these settings describe: the one the simulator builds for the flow
    /// (RFC 9002's slow start and NewReno carry the request and the ACKs). A test checks that
    /// both are the same.
    pub fn client_endpoint(&self) -> Endpoint {
        let mds = self.max_datagram_size as u64;
        let cc = Controller::new(
            CcConfig { mss: mds, initial_window: self.initial_window, initial_ssthresh: Ssthresh::Infinite, loss_window: 2 * mds, cwnd_validation: false, linux_ss_clamp: false },
            Startup::SlowStart(SlowStart { byte_counting: true }),
            Avoidance::Reno(Reno::default()),
        );
        let cfg = EndpointConfig {
            role: Role::Client,
            handshake: self.handshake,
            sizes: self.sizes,
            request: self.request,
            response: None,
            ack_policy: self.ack_policy,
            receive_window: self.receive_window,
            peer_receive_window: None,
            request_ack_frequency: None,
            sender: SenderConfig {
                max_datagram_size: self.max_datagram_size,
                loss: self.loss,
                pacing: self.pacing,
                pacing_gain: self.pacing_gain,
                size: None,
                l4s: false,
                pad_initial: false,
            },
        };
        Endpoint::new(cfg, cc)
    }

    /// The first setting the format cannot carry, as `(quic key, what is accepted)`; `None` if
    /// every one fits (a QUIC INIT with any of them is malformed).
    pub fn out_of_range(&self) -> Option<(&'static str, String)> {
        let l = &self.loss;
        let p = &self.ack_policy;
        let ms = |d: Dur| d <= MAX_ACK_TIMEOUT;
        let limit = format!("at most {MAX_ACK_TIMEOUT}");
        let checks: [(bool, &'static str, String); 13] = [
            ((1200..=MAX_DATAGRAM as u32).contains(&self.max_datagram_size), "max_datagram_size", format!("1200 to {MAX_DATAGRAM} bytes")),
            (p.ack_eliciting_threshold >= 1, "ack_eliciting_threshold", "at least 1".into()),
            (ms(p.max_ack_delay) && ms(l.max_ack_delay), "max_ack_delay", limit.clone()),
            ((1..=MAX_ACK_RANGES).contains(&p.max_ranges), "max_ack_ranges", format!("1 to {MAX_ACK_RANGES}")),
            (p.ecn == self.ecn, "ecn", "ECN counts exactly when packets are ECT(0)".into()),
            (self.receive_window.is_none_or(|w| w > 0), "max_data", "a positive window".into()),
            (l.packet_threshold >= 1, "packet_threshold", "at least 1".into()),
            (l.time_threshold.1 > 0, "time_threshold", "a positive fraction".into()),
            (ms(l.granularity), "granularity", limit.clone()),
            (l.persistent_congestion_threshold >= 1, "persistent_congestion_threshold", "at least 1".into()),
            (l.initial_rtt > Dur::ZERO && ms(l.initial_rtt), "initial_rtt", format!("positive, {limit}")),
            (self.pacing_gain.is_finite() && self.pacing_gain > 0.0, "pacing_gain", "a positive number".into()),
            (self.initial_window >= self.max_datagram_size as u64, "initial_window", "at least one datagram".into()),
        ];
        checks.into_iter().find(|c| !c.0).map(|(_, key, accepted)| (key, accepted))
    }

    fn valid(&self) -> bool {
        self.out_of_range().is_none()
    }
}

/// Bytes of `x` as a variable-length integer.
fn varint_len(x: u64) -> usize {
    startlab_quic::ack::varint_len(x) as usize
}

impl Writer<'_> {
    /// Panics beyond [`VARINT_MAX`] (the caller's bug: every field is checked before).
    fn varint(&mut self, x: u64) {
        assert!(x <= VARINT_MAX, "{x} does not fit a variable-length integer");
        match varint_len(x) {
            1 => self.u8(x as u8),
            2 => self.u16(x as u16 | 0x4000),
            4 => self.u32(x as u32 | 0x8000_0000),
            _ => self.u64(x | 0xc000_0000_0000_0000),
        }
    }
}

impl Reader<'_> {
    /// A variable-length integer in its shortest form (a longer one is malformed).
    fn varint(&mut self) -> Result<u64, DropReason> {
        let first = *self.buf.get(self.at).ok_or(DropReason::Truncated)?;
        let (x, n) = match first >> 6 {
            0 => (self.u8()? as u64, 1),
            1 => ((self.u16()? & 0x3fff) as u64, 2),
            2 => ((self.u32()? & 0x3fff_ffff) as u64, 4),
            _ => (self.u64()? & VARINT_MAX, 8),
        };
        if varint_len(x) != n {
            return Err(DropReason::Malformed);
        }
        Ok(x)
    }
    fn varint_u32(&mut self) -> Result<u32, DropReason> {
        u32::try_from(self.varint()?).map_err(|_| DropReason::Malformed)
    }
    fn dur(&mut self) -> Result<Dur, DropReason> {
        Ok(Dur(self.varint()?))
    }
    /// The rest must be zeros (padding), `n` of them.
    fn zeros(&mut self, n: usize) -> Result<(), DropReason> {
        let pad = self.bytes(n)?;
        if pad.iter().any(|&b| b != 0) {
            return Err(DropReason::Malformed);
        }
        Ok(())
    }
}

/// The QUIC INIT's fields before its padding.
fn settings_len(s: &QuicSettings) -> usize {
    let l = &s.loss;
    let p = &s.ack_policy;
    let v = |x: u64| varint_len(x);
    1 + v(s.sizes.client_hello as u64)
        + v(s.sizes.server_hello as u64)
        + v(s.sizes.server_flight as u64)
        + v(s.sizes.client_finished as u64)
        + v(s.request)
        + v(p.ack_eliciting_threshold as u64)
        + v(p.max_ack_delay.as_nanos())
        + v(p.max_ranges as u64)
        + s.receive_window.map_or(0, v)
        + v(s.max_datagram_size as u64)
        + v(l.packet_threshold)
        + v(l.time_threshold.0)
        + v(l.time_threshold.1)
        + v(l.granularity.as_nanos())
        + v(l.max_ack_delay.as_nanos())
        + v(l.persistent_congestion_threshold as u64)
        + v(l.initial_rtt.as_nanos())
        + 8
        + v(s.initial_window)
}

/// Settings bits (the QUIC INIT's first field).
const S_HANDSHAKE: u8 = 0x01;
const S_IMMEDIATE: u8 = 0x02;
const S_ECN: u8 = 0x04;
const S_PACING: u8 = 0x08;
const S_WINDOW: u8 = 0x10;

/// Writes the QUIC INIT's fields and its padding (`room`: the bytes left before the MAC).
pub(super) fn write_settings(w: &mut Writer<'_>, s: &QuicSettings, room: usize) {
    let start = w.at;
    let bit = |on: bool, b: u8| if on { b } else { 0 };
    let p = &s.ack_policy;
    w.u8(bit(s.handshake, S_HANDSHAKE) | bit(p.immediate_on_reorder, S_IMMEDIATE) | bit(s.ecn, S_ECN) | bit(s.pacing, S_PACING) | bit(s.receive_window.is_some(), S_WINDOW));
    for x in [s.sizes.client_hello, s.sizes.server_hello, s.sizes.server_flight, s.sizes.client_finished] {
        w.varint(x as u64);
    }
    w.varint(s.request);
    w.varint(p.ack_eliciting_threshold as u64);
    w.varint(p.max_ack_delay.as_nanos());
    w.varint(p.max_ranges as u64);
    if let Some(win) = s.receive_window {
        w.varint(win);
    }
    w.varint(s.max_datagram_size as u64);
    let l = &s.loss;
    for x in [l.packet_threshold, l.time_threshold.0, l.time_threshold.1, l.granularity.as_nanos(), l.max_ack_delay.as_nanos(), l.persistent_congestion_threshold as u64, l.initial_rtt.as_nanos()] {
        w.varint(x);
    }
    w.u64(s.pacing_gain.to_bits());
    w.varint(s.initial_window);
    let pad = room - (w.at - start);
    w.bytes(&[0; QUIC_INIT_LEN][..pad]);
}

/// Reads the QUIC INIT's fields and checks its padding.
pub(super) fn read_settings(r: &mut Reader<'_>) -> Result<QuicSettings, DropReason> {
    let start = r.at;
    let bits = r.u8()?;
    if bits & !(S_HANDSHAKE | S_IMMEDIATE | S_ECN | S_PACING | S_WINDOW) != 0 {
        return Err(DropReason::Malformed);
    }
    let has = |b: u8| bits & b != 0;
    let sizes = HandshakeSizes { client_hello: r.varint_u32()?, server_hello: r.varint_u32()?, server_flight: r.varint_u32()?, client_finished: r.varint_u32()? };
    let request = r.varint()?;
    let ack_eliciting_threshold = r.varint_u32()?;
    let max_ack_delay = r.dur()?;
    let max_ranges = usize::try_from(r.varint()?).map_err(|_| DropReason::Malformed)?;
    let receive_window = if has(S_WINDOW) { Some(r.varint()?) } else { None };
    let max_datagram_size = r.varint_u32()?;
    let loss = LossConfig {
        packet_threshold: r.varint()?,
        time_threshold: (r.varint()?, r.varint()?),
        granularity: r.dur()?,
        max_ack_delay: r.dur()?,
        persistent_congestion_threshold: r.varint_u32()?,
        initial_rtt: r.dur()?,
    };
    let pacing_gain = f64::from_bits(r.u64()?);
    let initial_window = r.varint()?;
    let s = QuicSettings {
        handshake: has(S_HANDSHAKE),
        sizes,
        request,
        ack_policy: AckPolicy { ack_eliciting_threshold, max_ack_delay, immediate_on_reorder: has(S_IMMEDIATE), max_ranges, ecn: has(S_ECN) },
        receive_window,
        max_datagram_size,
        loss,
        pacing: has(S_PACING),
        pacing_gain,
        initial_window,
        ecn: has(S_ECN),
    };
    if !s.valid() {
        return Err(DropReason::Malformed);
    }
    // Header and MAC around the fields; the rest up to QUIC_INIT_LEN is zeros.
    let used = super::HEADER_LEN + super::MAC_LEN + (r.at - start);
    r.zeros(QUIC_INIT_LEN.checked_sub(used).ok_or(DropReason::Malformed)?)?;
    Ok(s)
}

/// The QUIC INIT's settings fit its 1200 bytes (they always do: at most about 130 bytes).
pub(super) fn settings_fit(s: &QuicSettings) -> bool {
    super::HEADER_LEN + super::MAC_LEN + settings_len(s) <= QUIC_INIT_LEN
}

/// The header flags of a QUIC datagram.
pub(super) fn flags_of(q: &QuicDatagram) -> u8 {
    let t = &q.packet;
    let bit = |on: bool, b: u8| if on { b } else { 0 };
    bit(t.ack_eliciting, qflags::ACK_ELICITING)
        | bit(t.probe, qflags::PROBE)
        | bit(t.retransmission, qflags::RETRANSMISSION)
        | bit(t.handshake_done, qflags::HANDSHAKE_DONE)
        | bit(t.data.is_some(), qflags::DATA)
        | bit(t.ack.is_some(), qflags::ACK)
        | bit(t.ack.as_ref().is_some_and(|a| a.ecn.is_some()), qflags::ECN)
        | bit(t.max_data.is_some(), qflags::MAX_DATA)
}

/// Bytes of the fields (no padding) of a QUIC datagram.
fn fields_len(q: &QuicDatagram) -> usize {
    let t = &q.packet;
    let v = |x: u64| varint_len(x);
    let mut n = 1 + v(q.hold_ns as u64) + v(t.pn) + v(t.size as u64);
    if let Some((off, len)) = t.data {
        n += v(off) + v(len as u64);
    }
    if let Some(a) = &t.ack {
        n += v(a.largest()) + v(a.ack_delay.as_nanos()) + v(a.ranges.len() as u64 - 1) + v(a.ranges[0].1 - a.ranges[0].0);
        for w in a.ranges.windows(2) {
            let (higher, lower) = (w[0], w[1]);
            n += v(higher.0 - lower.1 - 2) + v(lower.1 - lower.0);
        }
        if let Some(e) = a.ecn {
            n += v(e.ect0) + v(e.ect1) + v(e.ce);
        }
    }
    if let Some(m) = t.max_data {
        n += v(m);
    }
    if let Some(f) = &t.ack_frequency {
        n += v(f.sequence) + v(f.ack_eliciting_threshold as u64) + v(f.request_max_ack_delay.as_nanos()) + v(f.reordering_threshold);
    }
    n
}

/// Bytes of a QUIC datagram's type-specific part: its fields, padded so that the whole datagram
/// (header and MAC included) is `Transmit::size` bytes when they fit in it.
pub(super) fn body_len(q: &QuicDatagram) -> usize {
    let fields = fields_len(q);
    let around = super::HEADER_LEN + super::MAC_LEN;
    fields.max((q.packet.size as usize).saturating_sub(around))
}

fn space_byte(s: Space) -> u8 {
    match s {
        Space::Initial => 0,
        Space::Handshake => 1,
        Space::AppData => 2,
    }
}

/// Writes a QUIC datagram's fields and padding (`room`: the bytes left before the MAC).
///
/// Panics on a packet the wire cannot carry (ranges not descending with gaps, an ACK frame of
/// another space, more than [`MAX_ACK_RANGES`], a value beyond [`VARINT_MAX`]): the caller's bug.
pub(super) fn write_packet(w: &mut Writer<'_>, q: &QuicDatagram, room: usize) {
    let start = w.at;
    let t = &q.packet;
    w.u8(space_byte(t.space) | if t.ack_frequency.is_some() { qflags::ACK_FREQUENCY } else { 0 });
    w.varint(q.hold_ns as u64);
    w.varint(t.pn);
    w.varint(t.size as u64);
    if let Some((off, len)) = t.data {
        w.varint(off);
        w.varint(len as u64);
    }
    if let Some(a) = &t.ack {
        assert!(a.space == t.space && !a.ranges.is_empty() && a.ranges.len() <= MAX_ACK_RANGES, "an ACK frame the wire cannot carry: {a:?}");
        w.varint(a.largest());
        w.varint(a.ack_delay.as_nanos());
        w.varint(a.ranges.len() as u64 - 1);
        w.varint(a.ranges[0].1 - a.ranges[0].0);
        for pair in a.ranges.windows(2) {
            let (higher, lower) = (pair[0], pair[1]);
            w.varint(higher.0 - lower.1 - 2);
            w.varint(lower.1 - lower.0);
        }
        if let Some(e) = a.ecn {
            w.varint(e.ect0);
            w.varint(e.ect1);
            w.varint(e.ce);
        }
    }
    if let Some(m) = t.max_data {
        w.varint(m);
    }
    if let Some(f) = &t.ack_frequency {
        w.varint(f.sequence);
        w.varint(f.ack_eliciting_threshold as u64);
        w.varint(f.request_max_ack_delay.as_nanos());
        w.varint(f.reordering_threshold);
    }
    let pad = room - (w.at - start);
    w.bytes(&ZEROS[..pad]);
}

static ZEROS: [u8; MAX_DATAGRAM] = [0; MAX_DATAGRAM];

/// Reads a QUIC datagram's fields (`fl`: the header's flags) and checks its padding: zeros, exactly
/// up to `Transmit::size` when the fields are shorter.
pub(super) fn read_packet(r: &mut Reader<'_>, fl: u8) -> Result<QuicDatagram, DropReason> {
    let start = r.at;
    let has = |b: u8| fl & b != 0;
    let sb = r.u8()?;
    let space = match sb & 0x03 {
        0 => Space::Initial,
        1 => Space::Handshake,
        2 => Space::AppData,
        _ => return Err(DropReason::Malformed),
    };
    if sb & !(0x03 | qflags::ACK_FREQUENCY) != 0 || (has(qflags::ECN) && !has(qflags::ACK)) {
        return Err(DropReason::Malformed);
    }
    let hold_ns = r.varint_u32()?;
    let pn = r.varint()?;
    let size = r.varint_u32()?;
    if size == 0 || size as usize > MAX_DATAGRAM {
        return Err(DropReason::Malformed);
    }
    let data = if has(qflags::DATA) {
        let (off, len) = (r.varint()?, r.varint_u32()?);
        if off.checked_add(len as u64).is_none_or(|e| e > VARINT_MAX) {
            return Err(DropReason::Malformed);
        }
        Some((off, len))
    } else {
        None
    };
    let ack = if has(qflags::ACK) { Some(read_ack(r, space, has(qflags::ECN))?) } else { None };
    let max_data = if has(qflags::MAX_DATA) { Some(r.varint()?) } else { None };
    let ack_frequency = if sb & qflags::ACK_FREQUENCY != 0 {
        Some(AckFrequency { sequence: r.varint()?, ack_eliciting_threshold: r.varint_u32()?, request_max_ack_delay: r.dur()?, reordering_threshold: r.varint()? })
    } else {
        None
    };
    let fields = r.at - start;
    let around = super::HEADER_LEN + super::MAC_LEN;
    r.zeros((size as usize).saturating_sub(around).saturating_sub(fields))?;
    let packet = Transmit {
        space,
        pn,
        size,
        data,
        ack,
        handshake_done: has(qflags::HANDSHAKE_DONE),
        max_data,
        ack_frequency,
        ack_eliciting: has(qflags::ACK_ELICITING),
        probe: has(qflags::PROBE),
        retransmission: has(qflags::RETRANSMISSION),
    };
    Ok(QuicDatagram { hold_ns, packet })
}

/// An ACK frame's ranges from RFC 9000 §19.3's form, every subtraction checked.
fn read_ack(r: &mut Reader<'_>, space: Space, ecn: bool) -> Result<AckFrame, DropReason> {
    let largest = r.varint()?;
    let ack_delay = r.dur()?;
    let count = r.varint()?;
    if count >= MAX_ACK_RANGES as u64 {
        return Err(DropReason::Malformed);
    }
    let first = r.varint()?;
    let mut smallest = largest.checked_sub(first).ok_or(DropReason::Malformed)?;
    let mut ranges = Vec::with_capacity(count as usize + 1);
    ranges.push((smallest, largest));
    for _ in 0..count {
        let (gap, len) = (r.varint()?, r.varint()?);
        let high = smallest.checked_sub(gap).and_then(|x| x.checked_sub(2)).ok_or(DropReason::Malformed)?;
        smallest = high.checked_sub(len).ok_or(DropReason::Malformed)?;
        ranges.push((smallest, high));
    }
    let ecn = if ecn { Some(EcnCounts { ect0: r.varint()?, ect1: r.varint()?, ce: r.varint()? }) } else { None };
    Ok(AckFrame { space, ranges, ack_delay, ecn })
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode, encoded_len, verify, Body, Datagram, Key, HEADER_LEN, KEY_LEN, MAC_LEN};
    use super::*;
    use proptest::prelude::*;

    const KEY: Key = [9; KEY_LEN];

    fn arb_space() -> impl Strategy<Value = Space> {
        prop_oneof![Just(Space::Initial), Just(Space::Handshake), Just(Space::AppData)]
    }

    /// Ranges built from the lowest up (`start`, then (length, gap) pairs), given highest first.
    fn arb_ranges() -> impl Strategy<Value = Vec<(u64, u64)>> {
        (0u64..1 << 40, prop::collection::vec((0u64..5000, 0u64..5000), 1..40)).prop_map(|(start, steps)| {
            let mut out = Vec::new();
            let mut low = start;
            for (len, gap) in steps {
                out.push((low, low + len));
                low += len + 2 + gap;
            }
            out.reverse();
            out
        })
    }

    fn arb_transmit() -> impl Strategy<Value = Transmit> {
        let ack = (arb_ranges(), 0u64..1 << 40, prop::option::of((0u64..1 << 40, 0u64..1 << 40, 0u64..1 << 40)));
        let freq = (0u64..1 << 30, any::<u32>(), 0u64..1 << 40, 0u64..100).prop_map(|(sequence, t, d, r)| AckFrequency {
            sequence,
            ack_eliciting_threshold: t,
            request_max_ack_delay: Dur(d),
            reordering_threshold: r,
        });
        (
            (arb_space(), 0u64..1 << 50, prop_oneof![1u32..1600, 1u32..=MAX_DATAGRAM as u32], prop::option::of((0u64..1 << 50, any::<u32>()))),
            (prop::option::of(ack), any::<bool>(), prop::option::of(0..=VARINT_MAX), prop::option::of(freq), any::<[bool; 3]>()),
        )
            .prop_map(|((space, pn, size, data), (ack, handshake_done, max_data, ack_frequency, b))| Transmit {
                space,
                pn,
                size,
                data,
                ack: ack.map(|(ranges, delay, ecn)| AckFrame { space, ranges, ack_delay: Dur(delay), ecn: ecn.map(|(ect0, ect1, ce)| EcnCounts { ect0, ect1, ce }) }),
                handshake_done,
                max_data,
                ack_frequency,
                ack_eliciting: b[0],
                probe: b[1],
                retransmission: b[2],
            })
    }

    fn bytes(d: &Datagram<'_>) -> Vec<u8> {
        let mut buf = vec![0; MAX_DATAGRAM];
        let n = encode(&KEY, &mut buf, d);
        buf.truncate(n);
        buf
    }

    fn settings() -> QuicSettings {
        QuicSettings {
            handshake: true,
            sizes: HandshakeSizes::default(),
            request: 100,
            ack_policy: AckPolicy::default(),
            receive_window: Some(1 << 20),
            max_datagram_size: 1472,
            loss: LossConfig::default(),
            pacing: true,
            pacing_gain: 1.25,
            initial_window: 14_720,
            ecn: true,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        /// Every packet the endpoints can produce round-trips, is exactly `size` bytes when its
        /// fields fit (else just its fields), authenticates, and any strict prefix is truncated or
        /// malformed, never a panic.
        #[test]
        fn every_quic_packet_round_trips_at_its_size(packet in arb_transmit(), hold_ns in any::<u32>(), flip in any::<prop::sample::Index>()) {
            let d = Datagram { conn: 5, pn: 6, body: Body::Quic(QuicDatagram { hold_ns, packet: packet.clone() }) };
            let b = bytes(&d);
            prop_assert_eq!(b.len(), encoded_len(&d));
            let fields = HEADER_LEN + MAC_LEN + fields_len(&QuicDatagram { hold_ns, packet: packet.clone() });
            prop_assert_eq!(b.len(), fields.max(packet.size as usize));
            prop_assert_eq!(decode(&b), Ok(d.clone()));
            prop_assert!(verify(&KEY, &b));
            let mut changed = b.clone();
            changed[flip.index(b.len())] ^= 0x21;
            prop_assert!(decode(&changed).is_err() || !verify(&KEY, &changed), "a changed byte is caught");
            for cut in [0, 1, HEADER_LEN, HEADER_LEN + 1, b.len() / 2, b.len() - 1] {
                prop_assert!(decode(&b[..cut]).is_err(), "a prefix of {} bytes decodes", cut);
            }
        }

        /// Arbitrary bytes after a QUIC header and before a MAC never panic; whatever decodes
        /// re-encodes to the same bytes.
        #[test]
        fn arbitrary_quic_fields_never_panic(fl in any::<u8>(), rest in prop::collection::vec(any::<u8>(), 0..300)) {
            let mut b = vec![super::super::VERSION, 7, fl];
            b.extend([0; 16]);
            b.extend(rest);
            b.extend([0; MAC_LEN]);
            if let Ok(d) = decode(&b) {
                let again = bytes(&d);
                prop_assert_eq!(&again[..again.len() - MAC_LEN], &b[..b.len() - MAC_LEN]);
            }
        }

        /// QUIC INIT settings round-trip at exactly 1200 bytes.
        #[test]
        fn quic_init_round_trips(handshake in any::<bool>(), request in 0u64..1 << 40, window in prop::option::of(1u64..1 << 40), thr in 1u32..100, gain in 0.1f64..4.0, ecn in any::<bool>()) {
            let s = QuicSettings { handshake, request, receive_window: window, pacing_gain: gain, ecn, ack_policy: AckPolicy { ack_eliciting_threshold: thr, ecn, ..AckPolicy::default() }, ..settings() };
            let d = Datagram { conn: 1, pn: 0, body: Body::InitQuic { settings: s } };
            let b = bytes(&d);
            prop_assert_eq!(b.len(), QUIC_INIT_LEN);
            prop_assert_eq!(decode(&b), Ok(d));
        }
    }

    /// Encodes `d` and lets `change` alter the bytes before the MAC (the MAC is not recomputed:
    /// `decode` checks structure only).
    fn altered(d: &Datagram<'_>, change: impl FnOnce(&mut Vec<u8>)) -> Result<Datagram<'static>, DropReason> {
        let mut b = bytes(d);
        change(&mut b);
        decode(&b).map(|d| match d.body {
            Body::Quic(q) => Datagram { conn: d.conn, pn: d.pn, body: Body::Quic(q) },
            Body::InitQuic { settings } => Datagram { conn: d.conn, pn: d.pn, body: Body::InitQuic { settings } },
            _ => unreachable!(),
        })
    }

    #[test]
    fn malformed_quic_datagrams_are_refused_not_panicked_on() {
        let ack = AckFrame { space: Space::AppData, ranges: vec![(10, 20), (3, 5)], ack_delay: Dur(1000), ecn: None };
        let p = Transmit { space: Space::AppData, pn: 7, size: 200, data: None, ack: Some(ack), handshake_done: false, max_data: None, ack_frequency: None, ack_eliciting: false, probe: false, retransmission: false };
        let d = Datagram { conn: 1, pn: 9, body: Body::Quic(QuicDatagram { hold_ns: 0, packet: p }) };
        let body = HEADER_LEN; // the space byte
        assert!(altered(&d, |_| {}).is_ok());
        assert_eq!(altered(&d, |b| b[body] = 3), Err(DropReason::Malformed), "space 3");
        assert_eq!(altered(&d, |b| b[body] |= 0x80), Err(DropReason::Malformed), "an undefined bit of the space byte");
        assert_eq!(altered(&d, |b| b[2] = (b[2] & !qflags::ACK) | qflags::ECN), Err(DropReason::Malformed), "ECN counts without an ACK frame");
        let n = bytes(&d).len();
        assert_eq!(altered(&d, |b| b[n - MAC_LEN - 1] = 1), Err(DropReason::Malformed), "padding that is not zero");
        assert_eq!(altered(&d, |b| b.insert(n - MAC_LEN, 0)), Err(DropReason::Malformed), "padding beyond the size");
        assert_eq!(altered(&d, |b| { b.remove(n - MAC_LEN - 1); }), Err(DropReason::Truncated), "padding short of the size");
        // hold (1 byte: 0), pn (1 byte: 7), size (2 bytes: 200), then the ACK: largest 20, delay
        // 1000 (2 bytes), count 1, first range 10, gap 3, length 2.
        let ack_at = body + 1 + 1 + 1 + 2;
        assert_eq!(bytes(&d)[ack_at], 20);
        assert_eq!(altered(&d, |b| b[ack_at + 4] = 21), Err(DropReason::Malformed), "a first range below packet 0");
        assert_eq!(altered(&d, |b| b[ack_at + 5] = 30), Err(DropReason::Malformed), "a gap below packet 0");
        // 60 ranges: the padding's zeros are read as (gap 0, length 0) ranges, which run below 0.
        assert_eq!(altered(&d, |b| b[ack_at + 3] = 60), Err(DropReason::Malformed), "more ranges than fit");
        // A non-minimal varint: pn 7 on two bytes (and the size field then one byte later).
        assert_eq!(
            altered(&d, |b| {
                b[body + 2] = 0x40;
                b.insert(body + 3, 7);
                b.remove(n - MAC_LEN - 1);
            }),
            Err(DropReason::Malformed),
            "pn 7 written on two bytes"
        );
        // Size 0.
        let mut z = d.clone();
        if let Body::Quic(q) = &mut z.body {
            q.packet.size = 1;
        }
        assert_eq!(altered(&z, |b| b[body + 3] = 0), Err(DropReason::Malformed), "size 0");
        // A QUIC INIT with SYN, or cut short of 1200 bytes, or with settings out of range.
        let init = Datagram { conn: 1, pn: 0, body: Body::InitQuic { settings: settings() } };
        assert_eq!(altered(&init, |b| b[2] |= super::super::flags::SYN), Err(DropReason::Malformed));
        assert_eq!(altered(&init, |b| { b.remove(QUIC_INIT_LEN - MAC_LEN - 1); }), Err(DropReason::Truncated));
        for bad in [
            QuicSettings { max_datagram_size: 1199, ..settings() },
            QuicSettings { pacing_gain: f64::NAN, ..settings() },
            QuicSettings { initial_window: 1000, ..settings() },
            QuicSettings { ack_policy: AckPolicy { ack_eliciting_threshold: 0, ..AckPolicy::default() }, ..settings() },
            QuicSettings { loss: LossConfig { time_threshold: (9, 0), ..LossConfig::default() }, ..settings() },
            QuicSettings { receive_window: Some(0), ..settings() },
        ] {
            assert_eq!(altered(&Datagram { conn: 1, pn: 0, body: Body::InitQuic { settings: bad } }, |_| {}), Err(DropReason::Malformed), "{bad:?}");
        }
    }
}
