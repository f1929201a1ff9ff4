//! Loss detection — RFC 9002 §6 and Appendix A, per packet-number space.
//!
//! Every packet gets a new packet number, so an acknowledgment is never ambiguous. A packet is
//! lost when a later one is acknowledged and it is either `kPacketThreshold` (3) packet numbers
//! below the largest acknowledged or was sent more than `kTimeThreshold · max(smoothed_rtt,
//! latest_rtt)` (9/8, at least `kGranularity` = 1 ms) before now (§6.1). The earliest time a
//! packet would pass the time threshold arms the loss timer; when no packet waits on it, the
//! probe timeout (§6.2) — `smoothed_rtt + max(4·rttvar, kGranularity)` (+ `max_ack_delay` in the
//! application data space), doubled per consecutive expiry — runs from the last ack-eliciting
//! packet sent; its expiry sends one or two probes and declares nothing lost. Persistent
//! congestion (§7.6) is a run of lost ack-eliciting packets, none acknowledged between them,
//! spanning more than `(PTO period without backoff) · kPersistentCongestionThreshold` (3), all
//! sent after the first RTT sample.
//!
//! The pseudocode's structure is kept (`OnPacketSent`, `OnAckReceived`,
//! `DetectAndRemoveLostPackets`, `SetLossDetectionTimer`, `OnLossDetectionTimeout`) so the
//! appendix can be read beside it; `tests/reference.rs` checks it against a literal transcription.
//!
//! Storage departs from the pseudocode's `sent_packets` map where it costs without changing an
//! outcome: a space's outstanding packets sit in a ring indexed by packet number (numbers only
//! grow), and a packet that is neither ack-eliciting nor in flight (an ACK alone) is not kept with
//! them — acknowledging or losing it changes no window, no byte count and no timer that matters —
//! except the last [`UNTRACKED_KEPT`] of them, by number and send time, so that an ACK whose
//! largest acknowledged is one of them still gives the RTT sample §5.1 asks for. An endpoint that
//! only acknowledges (the client of a download) is never acknowledged itself, and the map would
//! grow by a packet per ACK for the whole connection.

use std::collections::VecDeque;

/// ACK-only packets remembered for the RTT sample rule (see the module's documentation).
pub const UNTRACKED_KEPT: usize = 16;

use startlab_tcp::parts::RangeSet;
use startlab_units::{Dur, Time};

use crate::ack::AckFrame;
use crate::rtt::RttEstimator;
use crate::Space;

/// RFC 9002's loss-detection constants (§6.1.1, §6.1.2, §6.2, §7.6), as parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossConfig {
    /// `kPacketThreshold` (3).
    pub packet_threshold: u64,
    /// `kTimeThreshold` as a fraction (9/8).
    pub time_threshold: (u64, u64),
    /// `kGranularity` (1 ms).
    pub granularity: Dur,
    /// The peer's `max_ack_delay` (transport parameter; default 25 ms).
    pub max_ack_delay: Dur,
    /// `kPersistentCongestionThreshold` (3).
    pub persistent_congestion_threshold: u32,
    /// The RTT before any sample (333 ms).
    pub initial_rtt: Dur,
}

impl Default for LossConfig {
    fn default() -> Self {
        LossConfig {
            packet_threshold: 3,
            time_threshold: (9, 8),
            granularity: Dur::from_millis(1),
            max_ack_delay: Dur::from_millis(25),
            persistent_congestion_threshold: 3,
            initial_rtt: crate::rtt::INITIAL_RTT,
        }
    }
}

/// A packet sent and not yet acknowledged or declared lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentPacket {
    /// Its space.
    pub space: Space,
    /// Its packet number.
    pub pn: u64,
    /// When it left.
    pub time_sent: Time,
    /// Bytes on the wire (UDP payload), counted in `bytes_in_flight` when `in_flight`.
    pub size: u32,
    /// Carries a frame other than ACK, PADDING or CONNECTION_CLOSE.
    pub ack_eliciting: bool,
    /// Counts toward bytes in flight (ack-eliciting or padded).
    pub in_flight: bool,
    /// The stream bytes it carried, `(offset, len)`, if any.
    pub stream: Option<(u64, u32)>,
    /// Bytes the connection had sent when this packet left, including it (the position that
    /// rounds and delivery rates are counted in).
    pub sent_before: u64,
    /// The sender's delivered bytes and the time of the last delivery when this packet left (the
    /// delivery-rate sample's start, as TCP's `delivered_at_send`).
    pub delivery: (u64, Time),
}

/// What one ACK frame did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AckOutcome {
    /// Packets it newly acknowledged, in increasing packet number.
    pub acked: Vec<SentPacket>,
    /// Packets declared lost by it (and by the time threshold at that moment).
    pub lost: Vec<SentPacket>,
    /// The RTT sample it gave (`latest_rtt`), if any.
    pub rtt_sample: Option<Dur>,
    /// The lost packets establish persistent congestion (§7.6.2).
    pub persistent_congestion: bool,
}

/// What the loss-detection timer's expiry asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Timeout {
    /// The time threshold passed: these packets are lost.
    Lost {
        /// Packets declared lost.
        lost: Vec<SentPacket>,
        /// They establish persistent congestion.
        persistent_congestion: bool,
    },
    /// The probe timeout: send this many ack-eliciting probes in `space` (§6.2.4: one or two).
    Probe {
        /// The space the probes go in.
        space: Space,
        /// How many.
        count: u32,
    },
}

/// A space's outstanding packets in packet-number order: `slots[i]` holds packet `base + i` (or
/// nothing, once it is acknowledged, lost, or not kept).
#[derive(Clone, Debug, Default)]
struct SentQueue {
    base: u64,
    slots: VecDeque<Option<SentPacket>>,
    /// Packets kept that are ack-eliciting and in flight (the probe timeout's condition, §6.2.1,
    /// without a walk of the queue).
    eliciting_in_flight: usize,
}

impl SentQueue {
    fn push(&mut self, p: SentPacket) {
        if self.slots.is_empty() {
            self.base = p.pn;
        }
        while self.base + (self.slots.len() as u64) < p.pn {
            self.slots.push_back(None);
        }
        self.eliciting_in_flight += (p.ack_eliciting && p.in_flight) as usize;
        self.slots.push_back(Some(p));
    }
    /// Takes the packet in slot `i` out (the empty slots at the front are left to
    /// [`SentQueue::trim`]).
    fn take_slot(&mut self, i: usize) -> Option<SentPacket> {
        let p = self.slots.get_mut(i)?.take()?;
        self.eliciting_in_flight -= (p.ack_eliciting && p.in_flight) as usize;
        Some(p)
    }
    /// Drops the empty slots at the front.
    fn trim(&mut self) {
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
    }
    /// Slot indices of packet numbers `[lo, end)` (clamped to the slots).
    fn slots_in(&self, lo: u64, end: u64) -> std::ops::Range<usize> {
        let from = lo.saturating_sub(self.base).min(self.slots.len() as u64) as usize;
        let to = end.saturating_sub(self.base).min(self.slots.len() as u64) as usize;
        from..to
    }
    /// No packet number below this is or will ever be kept: the lowest slot's (every packet sent
    /// later has a higher number).
    fn floor(&self) -> u64 {
        self.base
    }
    fn values(&self) -> impl Iterator<Item = &SentPacket> {
        self.slots.iter().flatten()
    }
    fn clear(&mut self) {
        self.slots.clear();
        self.eliciting_in_flight = 0;
    }
}

/// `repr(C)`, the timers' fields first: every event asks every space for its timers (a space's
/// first cache line), and only the space of the packet or the ACK for the rest.
#[derive(Clone, Debug, Default)]
#[repr(C)]
struct SpaceState {
    loss_time: Option<Time>,
    last_ack_eliciting: Option<Time>,
    discarded: bool,
    sent: SentQueue,
    next_pn: u64,
    largest_acked: Option<u64>,
    /// The last ACK-only packets sent (number, time), not acknowledged or lost.
    untracked: VecDeque<(u64, Time)>,
    /// Packet numbers ever acknowledged (for persistent congestion's "none acknowledged
    /// between"), from the sent queue's [`SentQueue::floor`] up: that check only asks about
    /// numbers between two packets of the queue, so what lies below its lowest slot is never read
    /// again and is not kept (an ACK frame repeats its old ranges, and a space with many holes
    /// would otherwise look each of them up on every frame).
    acked: RangeSet,
}

/// Loss detection for one connection's three packet-number spaces (RFC 9002 Appendix A).
///
/// `repr(C)`: what every ACK, send and timer reads comes first, the spaces last.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct LossDetection {
    bytes_in_flight: u64,
    pto_count: u32,
    handshake_confirmed: bool,
    /// A client that has not seen its address validated must keep a PTO armed (§6.2.2.1).
    peer_awaits_validation: bool,
    sent_bytes: u64,
    /// What the sender had delivered, and when, stamped on every packet sent.
    delivery: (u64, Time),
    rtt: RttEstimator,
    first_rtt_sample: Option<Time>,
    cfg: LossConfig,
    spaces: [SpaceState; 3],
}

impl LossDetection {
    /// Loss detection with `cfg`, before any packet.
    pub fn new(cfg: LossConfig) -> LossDetection {
        LossDetection {
            rtt: RttEstimator::new(cfg.initial_rtt),
            cfg,
            spaces: Default::default(),
            pto_count: 0,
            bytes_in_flight: 0,
            first_rtt_sample: None,
            handshake_confirmed: false,
            peer_awaits_validation: false,
            sent_bytes: 0,
            delivery: (0, Time::ZERO),
        }
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Bytes in flight.
    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }
    /// Consecutive probe timeouts.
    pub fn pto_count(&self) -> u32 {
        self.pto_count
    }
    /// Bytes sent so far (every packet, in flight or not).
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes
    }
    /// The next packet number of `space`.
    pub fn next_pn(&self, space: Space) -> u64 {
        self.spaces[space as usize].next_pn
    }
    /// The packets of `space` neither acknowledged nor lost, in packet-number order.
    pub fn outstanding(&self, space: Space) -> impl Iterator<Item = &SentPacket> {
        self.spaces[space as usize].sent.values()
    }
    /// The handshake is confirmed (§4.1.2 of RFC 9001): `max_ack_delay` now caps ACK delays and
    /// the application data space's PTO may be armed.
    pub fn confirm_handshake(&mut self) {
        self.handshake_confirmed = true;
    }
    /// The peer's `max_ack_delay` in force.
    pub fn max_ack_delay(&self) -> Dur {
        self.cfg.max_ack_delay
    }
    /// The peer's `max_ack_delay` changed (an acknowledged ACK_FREQUENCY request).
    pub fn set_max_ack_delay(&mut self, d: Dur) {
        self.cfg.max_ack_delay = d;
    }
    /// True once [`LossDetection::confirm_handshake`] was called.
    pub fn handshake_confirmed(&self) -> bool {
        self.handshake_confirmed
    }
    /// The sender's delivered bytes and last delivery time, stamped on the packets it sends next
    /// ([`SentPacket::delivery`]).
    pub fn set_delivery(&mut self, delivered: u64, at: Time) {
        self.delivery = (delivered, at);
    }
    /// A client keeps a PTO armed until the server has validated its address (§6.2.2.1).
    pub fn set_peer_awaits_validation(&mut self, awaits: bool) {
        self.peer_awaits_validation = awaits;
    }

    /// `OnPacketSent`: records a packet and returns its packet number.
    pub fn on_packet_sent(&mut self, now: Time, space: Space, size: u32, ack_eliciting: bool, in_flight: bool, stream: Option<(u64, u32)>) -> u64 {
        self.sent_bytes += size as u64;
        let s = &mut self.spaces[space as usize];
        let pn = s.next_pn;
        s.next_pn += 1;
        if in_flight {
            if ack_eliciting {
                s.last_ack_eliciting = Some(now);
            }
            self.bytes_in_flight += size as u64;
        }
        if ack_eliciting || in_flight {
            s.sent.push(SentPacket { space, pn, time_sent: now, size, ack_eliciting, in_flight, stream, sent_before: self.sent_bytes, delivery: self.delivery });
        } else {
            if s.untracked.len() == UNTRACKED_KEPT {
                s.untracked.pop_front();
            }
            s.untracked.push_back((pn, now));
        }
        pn
    }

    /// `OnAckReceived` for `frame` at `now`.
    pub fn on_ack_received(&mut self, now: Time, frame: &AckFrame) -> AckOutcome {
        let mut out = AckOutcome::default();
        self.on_ack_received_into(now, frame, &mut out);
        out
    }

    /// [`LossDetection::on_ack_received`] into `out` (cleared first), whose vectors a sender
    /// reuses from ACK to ACK.
    pub fn on_ack_received_into(&mut self, now: Time, frame: &AckFrame, out: &mut AckOutcome) {
        out.acked.clear();
        out.lost.clear();
        out.rtt_sample = None;
        out.persistent_congestion = false;
        let space = frame.space;
        let si = space as usize;
        let largest = frame.largest();
        {
            let s = &mut self.spaces[si];
            s.largest_acked = Some(s.largest_acked.map_or(largest, |l| l.max(largest)));
        }
        let untracked_largest = self.spaces[si].untracked.iter().find(|&&(pn, _)| pn == largest).map(|&(_, t)| t);
        self.detect_and_remove_acked(space, frame, &mut out.acked);
        let acked = &out.acked;
        if acked.is_empty() {
            return;
        }
        // §5.1: a sample when the largest acknowledged is newly acknowledged and some newly
        // acknowledged packet is ack-eliciting (the largest may be an ACK alone).
        let largest_sent = match acked.last() {
            Some(l) if l.pn == largest => Some(l.time_sent),
            _ => untracked_largest,
        };
        if let Some(sent) = largest_sent.filter(|_| acked.iter().any(|p| p.ack_eliciting)) {
            let latest = now.saturating_since(sent);
            let cap = self.handshake_confirmed.then_some(self.cfg.max_ack_delay);
            // Initial and Handshake ACK delays are ignored (§5.3: "MAY ignore").
            let delay = if space == Space::AppData { frame.ack_delay } else { Dur::ZERO };
            self.rtt.on_sample(latest, delay, cap);
            self.first_rtt_sample.get_or_insert(now);
            out.rtt_sample = Some(latest);
        }
        let mut lost = std::mem::take(&mut out.lost);
        out.persistent_congestion = self.detect_and_remove_lost(now, space, &mut lost);
        out.lost = lost;
        // §6.2.1: "reset the PTO backoff factor on receiving acknowledgments", except a client
        // unsure the server validated its address.
        if !self.peer_awaits_validation {
            self.pto_count = 0;
        }
    }

    /// The packets `frame` newly acknowledges, appended to `acked` in increasing packet number.
    fn detect_and_remove_acked(&mut self, space: Space, frame: &AckFrame, acked: &mut Vec<SentPacket>) {
        let s = &mut self.spaces[space as usize];
        let floor = s.sent.floor();
        // Lowest range first: the packets come out in increasing number.
        for &(lo, hi) in frame.ranges.iter().rev() {
            if !s.untracked.is_empty() {
                s.untracked.retain(|&(pn, _)| pn < lo || pn > hi);
            }
            for i in s.sent.slots_in(lo, hi.saturating_add(1)) {
                if let Some(p) = s.sent.take_slot(i) {
                    if p.in_flight {
                        self.bytes_in_flight -= p.size as u64;
                    }
                    acked.push(p);
                }
            }
            if hi >= floor {
                s.acked.insert(lo.max(floor), hi + 1, |_, _| {});
            }
        }
        s.sent.trim();
        if s.acked.first().is_some_and(|(_, e)| e <= floor) {
            s.acked.remove_below(floor);
        }
        // Already in order for a frame's disjoint ranges, highest first (a linear check then).
        acked.sort_by_key(|p| p.pn);
    }

    /// `DetectAndRemoveLostPackets(pn_space)`: the packets it declares lost are appended to
    /// `lost` (empty on entry); returns whether they establish persistent congestion.
    fn detect_and_remove_lost(&mut self, now: Time, space: Space, lost: &mut Vec<SentPacket>) -> bool {
        let loss_delay = self.rtt.loss_delay(self.cfg.time_threshold.0, self.cfg.time_threshold.1, self.cfg.granularity);
        let s = &mut self.spaces[space as usize];
        s.loss_time = None;
        let Some(largest) = s.largest_acked else { return false };
        // Packets sent at or before this are lost by time (none while the connection is younger
        // than the threshold).
        let lost_send_time = now.0.checked_sub(loss_delay.0);
        let threshold = self.cfg.packet_threshold;
        if !s.untracked.is_empty() {
            s.untracked.retain(|&(pn, t)| !(pn < largest && (lost_send_time.is_some_and(|l| t.0 <= l) || largest >= pn + threshold)));
        }
        for i in s.sent.slots_in(0, largest) {
            let Some(p) = &s.sent.slots[i] else { continue };
            if lost_send_time.is_some_and(|l| p.time_sent.0 <= l) || largest >= p.pn + threshold {
                let p = s.sent.take_slot(i).expect("kept");
                if p.in_flight {
                    self.bytes_in_flight -= p.size as u64;
                }
                lost.push(p);
            } else {
                let t = p.time_sent + loss_delay;
                s.loss_time = Some(s.loss_time.map_or(t, |l| l.min(t)));
            }
        }
        s.sent.trim();
        !lost.is_empty() && self.persistent_congestion(space, lost)
    }

    /// §7.6.2: two ack-eliciting lost packets, all packets between them lost (none ever
    /// acknowledged), sent after the first RTT sample, more than the persistent-congestion
    /// duration apart.
    fn persistent_congestion(&self, space: Space, lost: &[SentPacket]) -> bool {
        let Some(first_sample) = self.first_rtt_sample else { return false };
        let duration = Dur(self.rtt.pto_base(self.cfg.granularity, self.cfg.max_ack_delay).0 * self.cfg.persistent_congestion_threshold as u64);
        let acked = &self.spaces[space as usize].acked;
        let eliciting: Vec<&SentPacket> = lost.iter().filter(|p| p.ack_eliciting && p.time_sent > first_sample).collect();
        // Walk runs of lost packets with no acknowledged packet number between neighbours.
        let mut start: Option<&SentPacket> = None;
        let mut prev: Option<&SentPacket> = None;
        for p in eliciting {
            let contiguous = prev.is_some_and(|q| !any_in(acked, q.pn, p.pn));
            if !contiguous {
                start = Some(p);
            }
            if let Some(s) = start {
                if p.time_sent.saturating_since(s.time_sent) > duration {
                    return true;
                }
            }
            prev = Some(p);
        }
        false
    }

    /// The earliest `loss_time` over the spaces, and its space.
    fn earliest_loss_time(&self) -> Option<(Time, Space)> {
        Space::ALL.iter().filter_map(|&sp| self.spaces[sp as usize].loss_time.map(|t| (t, sp))).min_by_key(|&(t, _)| t)
    }

    /// `GetPtoTimeAndSpace`: when the probe timeout fires and for which space.
    fn pto_time_and_space(&self, now: Time) -> Option<(Time, Space)> {
        let base = self.rtt.pto_base(self.cfg.granularity, Dur::ZERO);
        let backoff = 1u64 << self.pto_count.min(30);
        if self.bytes_in_flight == 0 {
            // §6.2.2.1: only a client that is not yet sure of its validation arms it here.
            if !self.peer_awaits_validation {
                return None;
            }
            let sp = if self.spaces[Space::Handshake as usize].discarded { Space::AppData } else if self.spaces[Space::Initial as usize].discarded { Space::Handshake } else { Space::Initial };
            return Some((now + Dur(base.0 * backoff), sp));
        }
        let mut best: Option<(Time, Space)> = None;
        for sp in Space::ALL {
            let s = &self.spaces[sp as usize];
            if s.discarded || s.sent.eliciting_in_flight == 0 {
                continue;
            }
            let mut period = base.0;
            if sp == Space::AppData {
                // The application data space waits for the handshake's confirmation.
                if !self.handshake_confirmed {
                    return best;
                }
                period += self.cfg.max_ack_delay.0;
            }
            let Some(last) = s.last_ack_eliciting else { continue };
            let t = last + Dur(period * backoff);
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, sp));
            }
        }
        best
    }

    /// `SetLossDetectionTimer`: when the loss-detection timer fires (`None`: disarmed).
    pub fn timer(&self, now: Time) -> Option<Time> {
        if let Some((t, _)) = self.earliest_loss_time() {
            return Some(t);
        }
        self.pto_time_and_space(now).map(|(t, _)| t)
    }

    /// `OnLossDetectionTimeout` at `now`.
    pub fn on_timeout(&mut self, now: Time) -> Option<Timeout> {
        if let Some((_, space)) = self.earliest_loss_time() {
            let mut lost = Vec::new();
            let persistent_congestion = self.detect_and_remove_lost(now, space, &mut lost);
            return Some(Timeout::Lost { lost, persistent_congestion });
        }
        let (_, space) = self.pto_time_and_space(now)?;
        self.pto_count += 1;
        // §6.2.4: "an endpoint MAY send up to two full-sized datagrams" — two, as quinn and quiche.
        Some(Timeout::Probe { space, count: if self.bytes_in_flight == 0 { 1 } else { 2 } })
    }

    /// Discards a space's keys (§6.4): its packets leave bytes in flight and its timers stop.
    pub fn discard(&mut self, space: Space) {
        let s = &mut self.spaces[space as usize];
        for p in s.sent.values().filter(|p| p.in_flight) {
            self.bytes_in_flight -= p.size as u64;
        }
        s.sent.clear();
        s.untracked.clear();
        s.loss_time = None;
        s.last_ack_eliciting = None;
        s.discarded = true;
        self.pto_count = 0;
    }
}

/// True when some number in `[a, b]` (a < b) is in `set`.
fn any_in(set: &RangeSet, a: u64, b: u64) -> bool {
    for (s, e) in set.iter_rev() {
        if s > b {
            continue;
        }
        return e > a;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    fn ack(space: Space, ranges: &[(u64, u64)]) -> AckFrame {
        AckFrame { space, ranges: ranges.to_vec(), ack_delay: Dur::ZERO, ecn: None }
    }
    fn sent(ld: &mut LossDetection, at: u64, n: usize) {
        for _ in 0..n {
            ld.on_packet_sent(t(at), Space::AppData, 1200, true, true, None);
        }
    }

    #[test]
    fn three_packets_above_declares_a_loss_by_packet_threshold() {
        let mut ld = LossDetection::new(LossConfig::default());
        ld.confirm_handshake();
        sent(&mut ld, 0, 5);
        assert_eq!(ld.bytes_in_flight(), 6000);
        // 3 acknowledged: 0 is three below (lost), 1 and 2 wait on the time threshold.
        let out = ld.on_ack_received(t(100), &ack(Space::AppData, &[(3, 3)]));
        assert_eq!(out.acked.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![3]);
        assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![0]);
        assert_eq!(out.rtt_sample, Some(Dur::from_millis(100)));
        assert_eq!(ld.bytes_in_flight(), 3 * 1200);
        // The loss timer: packets 1 and 2 sent at 0 are lost at 9/8·100 ms.
        assert_eq!(ld.timer(t(100)), Some(Time(112_500_000)));
        match ld.on_timeout(t(113)) {
            Some(Timeout::Lost { lost, .. }) => assert_eq!(lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![1, 2]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_probe_timeout_runs_from_the_last_ack_eliciting_packet_and_doubles() {
        let mut ld = LossDetection::new(LossConfig::default());
        ld.confirm_handshake();
        sent(&mut ld, 0, 1);
        ld.on_ack_received(t(100), &ack(Space::AppData, &[(0, 0)]));
        sent(&mut ld, 200, 1);
        let r = ld.rtt().clone();
        let pto = Dur(r.smoothed().0 + 4 * r.var().0 + Dur::from_millis(25).0);
        assert_eq!(ld.timer(t(200)), Some(t(200) + pto));
        assert_eq!(ld.on_timeout(t(200) + pto), Some(Timeout::Probe { space: Space::AppData, count: 2 }));
        assert_eq!(ld.timer(t(200)), Some(t(200) + Dur(2 * pto.0)), "backed off");
        assert_eq!(ld.bytes_in_flight(), 1200, "a probe timeout declares nothing lost");
    }

    #[test]
    fn the_application_space_arms_no_probe_before_the_handshake_is_confirmed() {
        let mut ld = LossDetection::new(LossConfig::default());
        sent(&mut ld, 0, 1);
        assert_eq!(ld.timer(t(0)), None);
        ld.on_packet_sent(t(0), Space::Handshake, 1200, true, true, None);
        assert_eq!(ld.timer(t(0)), Some(t(0) + Dur(333_000_000 + 4 * 166_500_000)));
    }

    #[test]
    fn a_long_run_of_lost_packets_with_none_acknowledged_between_is_persistent_congestion() {
        // One sample of 50 ms, then packets 1..=20 every 100 ms; the ACK of 20 at 2.1 s gives a
        // 100 ms sample: smoothed 56.25, rttvar 31.25, PTO period 206.25 ms, ×3 = 618.75 ms.
        let run = |acked: &[(u64, u64)]| {
            let mut ld = LossDetection::new(LossConfig::default());
            ld.confirm_handshake();
            sent(&mut ld, 0, 1);
            ld.on_ack_received(t(50), &ack(Space::AppData, &[(0, 0)]));
            for i in 0..20 {
                sent(&mut ld, 100 + 100 * i, 1);
            }
            ld.on_ack_received(t(2100), &ack(Space::AppData, acked))
        };
        let out = run(&[(20, 20)]);
        assert!(out.persistent_congestion && out.lost.len() == 19, "{}", out.lost.len());
        // With every fifth packet acknowledged the lost runs span 300 ms each.
        let out = run(&[(20, 20), (15, 15), (10, 10), (5, 5)]);
        assert!(!out.persistent_congestion && out.lost.len() == 16, "{}", out.lost.len());
    }
}
