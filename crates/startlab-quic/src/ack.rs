//! ACK frames and the receiver's ACK policy — RFC 9000 §13.2 and §19.3, with the parameters of
//! the ACK-frequency extension (draft-ietf-quic-ack-frequency: ack-eliciting threshold, requested
//! max ack delay, immediate ACK on reordering).
//!
//! A receiver keeps the packet numbers it received per packet-number space as ranges and answers
//! with an ACK frame: the largest acknowledged, the ACK delay (how long it held the largest
//! before acknowledging it), up to `max_ranges` ranges from the highest down, and the ECN counts
//! (§19.3.2). When it sends one (§13.2.1, §13.2.2):
//! - immediately for an ack-eliciting Initial or Handshake packet;
//! - immediately for an ack-eliciting packet that arrives out of order: below the largest
//!   received, or above it with a gap in between (`immediate_on_reorder`; the extension's
//!   reordering threshold 0 turns this off);
//! - immediately for a packet marked CE (§13.2.1: "SHOULD be acknowledged immediately");
//! - after `ack_eliciting_threshold` ack-eliciting packets not yet acknowledged (RFC 9000's "at
//!   least two": 2);
//! - else when `max_ack_delay` has passed since the first ack-eliciting packet it has not
//!   acknowledged.
//!
//! Non-ack-eliciting packets (ACK-only) are recorded but never trigger an ACK (§13.2.1).

use startlab_tcp::parts::RangeSet;
use startlab_units::{Dur, Time};

use crate::Space;

/// The ECN codepoint of a received packet's IP header (the same field TCP's segments carry).
pub use startlab_tcp::IpEcn as Ecn;

/// ECN counts of an ACK frame (§19.3.2): packets received with each codepoint, cumulative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    /// ECT(0) count.
    pub ect0: u64,
    /// ECT(1) count.
    pub ect1: u64,
    /// ECN-CE count.
    pub ce: u64,
}

/// An ACK frame (§19.3): ranges of acknowledged packet numbers, inclusive, from the highest down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckFrame {
    /// The space the acknowledged packets belong to.
    pub space: Space,
    /// `[first, last]` ranges, highest first; the first range's `last` is the largest acknowledged.
    pub ranges: Vec<(u64, u64)>,
    /// The ACK delay the receiver reports (already decoded from its exponent).
    pub ack_delay: Dur,
    /// ECN counts, when the receiver reports them.
    pub ecn: Option<EcnCounts>,
}

impl AckFrame {
    /// The largest acknowledged packet number.
    pub fn largest(&self) -> u64 {
        self.ranges[0].1
    }

    /// True when `pn` is acknowledged by this frame.
    pub fn acks(&self, pn: u64) -> bool {
        self.ranges.iter().any(|&(a, b)| a <= pn && pn <= b)
    }

    /// The frame's encoded size in bytes (§19.3, variable-length integers; the ACK delay with
    /// the default exponent 3), for packet sizing.
    pub fn encoded_len(&self) -> u32 {
        let mut len = 1 + varint_len(self.largest()) + varint_len(self.ack_delay.as_nanos() / 8_000) + varint_len(self.ranges.len() as u64 - 1);
        len += varint_len(self.ranges[0].1 - self.ranges[0].0);
        for w in self.ranges.windows(2) {
            let (lower, higher) = (w[1], w[0]);
            len += varint_len(higher.0 - lower.1 - 2) + varint_len(lower.1 - lower.0);
        }
        if let Some(e) = self.ecn {
            len += varint_len(e.ect0) + varint_len(e.ect1) + varint_len(e.ce);
        }
        len
    }
}

/// An ACK_FREQUENCY frame (draft-ietf-quic-ack-frequency §4): the data sender asks its peer to
/// acknowledge less (or more) often. Frames with a sequence number not above the last one applied
/// are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFrequency {
    /// Sequence number (increasing per frame sent).
    pub sequence: u64,
    /// Ack-eliciting packets the receiver may receive without acknowledging: it acknowledges the
    /// next one (RFC 9000's behaviour is 1).
    pub ack_eliciting_threshold: u32,
    /// The receiver's new `max_ack_delay`.
    pub request_max_ack_delay: Dur,
    /// 0: no immediate ACK for reordering; otherwise RFC 9000's immediate ACK of a packet out of
    /// order (the draft's larger thresholds, which tolerate some reordering, are taken as 1).
    pub reordering_threshold: u64,
}

impl AckFrequency {
    /// The frame's encoded size (a 2-byte frame type, then variable-length integers; the delay
    /// in microseconds).
    pub fn encoded_len(&self) -> u32 {
        2 + varint_len(self.sequence) + varint_len(self.ack_eliciting_threshold as u64) + varint_len(self.request_max_ack_delay.as_nanos() / 1000) + varint_len(self.reordering_threshold)
    }
}

/// Bytes of a QUIC variable-length integer (RFC 9000 §16).
pub fn varint_len(x: u64) -> u32 {
    match x {
        0..=63 => 1,
        64..=16_383 => 2,
        16_384..=1_073_741_823 => 4,
        _ => 8,
    }
}

/// The receiver's ACK policy (§13.2 and the ACK-frequency extension's parameters).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckPolicy {
    /// Ack-eliciting packets that trigger an ACK (RFC 9000: 2).
    pub ack_eliciting_threshold: u32,
    /// The longest an ack-eliciting packet waits for its ACK (RFC 9000 default 25 ms).
    pub max_ack_delay: Dur,
    /// ACK at once a packet that arrives out of order (RFC 9000 §13.2.1; the extension's
    /// reordering threshold 0 turns it off).
    pub immediate_on_reorder: bool,
    /// At most this many ranges in a frame (the oldest are left out).
    pub max_ranges: usize,
    /// Report ECN counts.
    pub ecn: bool,
}

impl Default for AckPolicy {
    fn default() -> Self {
        AckPolicy { ack_eliciting_threshold: 2, max_ack_delay: Dur::from_millis(25), immediate_on_reorder: true, max_ranges: 32, ecn: true }
    }
}

/// The receiving side of one packet-number space.
#[derive(Clone, Debug)]
pub struct Receiver {
    space: Space,
    policy: AckPolicy,
    received: RangeSet,
    /// The highest `max_ranges` ranges of `received` as an ACK frame lists them (`[first, last]`,
    /// highest first), kept up to date as packets arrive above the largest received (the usual
    /// case) and rebuilt from `received` after any other change (`None`): a frame then copies
    /// them instead of walking `received`, which keeps every hole since the connection began.
    top: Option<Vec<(u64, u64)>>,
    /// Largest packet number received and when.
    largest: Option<(u64, Time)>,
    /// Largest ack-eliciting packet number received.
    largest_eliciting: Option<u64>,
    /// Ack-eliciting packets received since the last ACK.
    unacked_eliciting: u32,
    /// When the first of them arrived (the delayed-ACK timer runs from it).
    first_unacked: Option<Time>,
    /// Something not yet acknowledged arrived (an ACK would say something new).
    pending: bool,
    ecn: EcnCounts,
    /// The last ACK_FREQUENCY sequence number applied.
    frequency_seq: Option<u64>,
}

impl Receiver {
    /// A receiver for `space` with `policy`.
    pub fn new(space: Space, policy: AckPolicy) -> Receiver {
        Receiver {
            space,
            policy,
            received: RangeSet::default(),
            top: None,
            largest: None,
            largest_eliciting: None,
            unacked_eliciting: 0,
            first_unacked: None,
            pending: false,
            ecn: EcnCounts::default(),
            frequency_seq: None,
        }
    }

    /// Applies an ACK_FREQUENCY frame unless an equal or later one was applied.
    pub fn apply_frequency(&mut self, f: &AckFrequency) {
        if self.frequency_seq.is_some_and(|s| f.sequence <= s) {
            return;
        }
        self.frequency_seq = Some(f.sequence);
        self.policy.ack_eliciting_threshold = f.ack_eliciting_threshold + 1;
        self.policy.max_ack_delay = f.request_max_ack_delay;
        self.policy.immediate_on_reorder = f.reordering_threshold > 0;
    }

    /// The policy in force.
    pub fn policy(&self) -> &AckPolicy {
        &self.policy
    }

    /// Changes the policy (an ACK_FREQUENCY frame, or the handshake's transport parameters).
    pub fn set_policy(&mut self, policy: AckPolicy) {
        self.policy = policy;
        self.top = None;
    }

    /// A packet arrived. Returns true if it is a duplicate (already received). Returns the ACK to
    /// send now, if the policy says to send one at once.
    pub fn on_packet(&mut self, now: Time, pn: u64, ack_eliciting: bool, ecn: Ecn) -> (bool, Option<AckFrame>) {
        // Above the largest received it cannot be a duplicate (the usual case: no lookup).
        if self.largest.is_some_and(|(l, _)| pn <= l) && self.received.covers(pn, pn + 1) {
            // A duplicate is acknowledged again (its ACK may have been lost), at once.
            return (true, ack_eliciting.then(|| self.ack_now(now)).flatten());
        }
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ect0 => self.ecn.ect0 += 1,
            Ecn::Ect1 => self.ecn.ect1 += 1,
            Ecn::Ce => self.ecn.ce += 1,
        }
        let reordered = match self.largest_eliciting {
            Some(l) => pn < l || pn > l + 1 && !self.received.covers(l + 1, pn),
            None => pn > 0 && !self.received.covers(0, pn),
        };
        self.received.insert(pn, pn + 1, |_, _| {});
        match (self.top.as_mut(), self.largest) {
            // The highest range grows by one.
            (Some(top), Some((l, _))) if pn == l + 1 && !top.is_empty() => top[0].1 = pn,
            // A new highest range.
            (Some(top), Some((l, _))) if pn > l + 1 => {
                top.insert(0, (pn, pn));
                top.truncate(self.policy.max_ranges);
            }
            _ => self.top = None,
        }
        if self.largest.is_none_or(|(l, _)| pn > l) {
            self.largest = Some((pn, now));
        }
        self.pending = true;
        if !ack_eliciting {
            return (false, None);
        }
        self.largest_eliciting = Some(self.largest_eliciting.map_or(pn, |l| l.max(pn)));
        self.unacked_eliciting += 1;
        self.first_unacked.get_or_insert(now);
        let immediate = self.space != Space::AppData
            || ecn == Ecn::Ce
            || reordered && self.policy.immediate_on_reorder
            || self.unacked_eliciting >= self.policy.ack_eliciting_threshold;
        (false, if immediate { self.ack_now(now) } else { None })
    }

    /// When the delayed-ACK timer fires, if it is armed.
    pub fn ack_deadline(&self) -> Option<Time> {
        self.first_unacked.map(|t| t + self.policy.max_ack_delay)
    }

    /// The delayed-ACK timer fired at `now`: the ACK to send, if one is due.
    pub fn on_timer(&mut self, now: Time) -> Option<AckFrame> {
        match self.ack_deadline() {
            Some(t) if t <= now => self.ack_now(now),
            _ => None,
        }
    }

    /// An ACK frame of everything received so far (`None` before any packet or with nothing
    /// new since the last), and the timer and counters reset. Also used to bundle an ACK with
    /// outgoing data.
    pub fn ack_now(&mut self, now: Time) -> Option<AckFrame> {
        let (_, at) = self.largest?;
        if !self.pending {
            return None;
        }
        self.pending = false;
        self.unacked_eliciting = 0;
        self.first_unacked = None;
        // Sized at once: collected from the iterator, the vector would grow (and be copied)
        // up to four times for a frame of 32 ranges.
        let (received, max) = (&self.received, self.policy.max_ranges);
        let ranges = self.top.get_or_insert_with(|| received.iter_rev().take(max).map(|(s, e)| (s, e - 1)).collect()).clone();
        Some(AckFrame { space: self.space, ranges, ack_delay: now.saturating_since(at), ecn: self.policy.ecn.then_some(self.ecn) })
    }

    /// Packets received (distinct packet numbers).
    pub fn received_count(&self) -> u64 {
        self.received.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }

    fn app() -> Receiver {
        Receiver::new(Space::AppData, AckPolicy::default())
    }

    #[test]
    fn every_second_ack_eliciting_packet_is_acknowledged_at_once_and_the_first_after_max_ack_delay() {
        let mut r = app();
        assert_eq!(r.on_packet(t(0), 0, true, Ecn::NotEct).1, None);
        assert_eq!(r.ack_deadline(), Some(t(25)));
        let ack = r.on_packet(t(1), 1, true, Ecn::NotEct).1.expect("the second packet is acknowledged");
        assert_eq!((ack.ranges.clone(), ack.largest(), ack.ack_delay), (vec![(0, 1)], 1, Dur::ZERO));
        assert_eq!(r.ack_deadline(), None);
        assert_eq!(r.on_packet(t(2), 2, true, Ecn::NotEct).1, None);
        assert_eq!(r.on_timer(t(26)), None, "not yet: the timer runs from packet 2's arrival");
        let late = r.on_timer(t(27)).expect("max_ack_delay passed");
        assert_eq!((late.ranges.clone(), late.ack_delay), (vec![(0, 2)], Dur::from_millis(25)));
    }

    #[test]
    fn a_gap_and_its_filling_are_acknowledged_at_once_with_ranges_highest_first() {
        let mut r = app();
        r.on_packet(t(0), 0, true, Ecn::NotEct);
        let gap = r.on_packet(t(1), 3, true, Ecn::NotEct).1.expect("a gap below it");
        assert_eq!(gap.ranges, vec![(3, 3), (0, 0)]);
        let fill = r.on_packet(t(2), 1, true, Ecn::NotEct).1.expect("below the largest");
        assert_eq!(fill.ranges, vec![(3, 3), (0, 1)]);
        // With the extension's reordering threshold 0 neither is immediate.
        let mut q = Receiver::new(Space::AppData, AckPolicy { immediate_on_reorder: false, ack_eliciting_threshold: 10, ..AckPolicy::default() });
        q.on_packet(t(0), 0, true, Ecn::NotEct);
        assert_eq!(q.on_packet(t(1), 3, true, Ecn::NotEct).1, None);
        assert_eq!(q.on_packet(t(2), 1, true, Ecn::NotEct).1, None);
    }

    #[test]
    fn ce_handshake_spaces_and_duplicates_are_acknowledged_at_once_non_eliciting_never() {
        let mut r = app();
        let ce = r.on_packet(t(0), 0, true, Ecn::Ce).1.expect("CE");
        assert_eq!(ce.ecn, Some(EcnCounts { ect0: 0, ect1: 0, ce: 1 }));
        assert_eq!(r.on_packet(t(1), 1, false, Ecn::Ect0).1, None);
        assert_eq!(r.ack_deadline(), None, "an ACK-only packet arms nothing");
        let (dup, again) = r.on_packet(t(2), 0, true, Ecn::NotEct);
        assert!(dup && again.is_some());
        let mut h = Receiver::new(Space::Handshake, AckPolicy::default());
        assert!(h.on_packet(t(0), 0, true, Ecn::NotEct).1.is_some());
    }

    #[test]
    fn at_most_max_ranges_ranges_the_highest_kept() {
        let mut r = Receiver::new(Space::AppData, AckPolicy { max_ranges: 3, immediate_on_reorder: false, ack_eliciting_threshold: 100, ..AckPolicy::default() });
        for pn in (0..20).step_by(2) {
            r.on_packet(t(pn), pn, true, Ecn::NotEct);
        }
        let a = r.ack_now(t(30)).expect("pending");
        assert_eq!(a.ranges, vec![(18, 18), (16, 16), (14, 14)]);
        assert_eq!(r.ack_now(t(31)), None, "nothing new");
    }

    #[test]
    fn the_encoded_length_follows_the_varint_sizes() {
        let one = AckFrame { space: Space::AppData, ranges: vec![(0, 10)], ack_delay: Dur::ZERO, ecn: None };
        // type, largest, delay, range count, first range: one byte each.
        assert_eq!(one.encoded_len(), 5);
        let two = AckFrame { space: Space::AppData, ranges: vec![(100, 200), (0, 10)], ack_delay: Dur::from_millis(25), ecn: Some(EcnCounts::default()) };
        // largest 200 (2), delay 25 ms / 8 µs = 3125 (2), count 1, first range 100 (2), gap 88 (2),
        // range 10 (1), three ECN counts (3).
        assert_eq!(two.encoded_len(), 1 + 2 + 2 + 1 + 2 + 2 + 1 + 3);
    }

    #[test]
    fn an_ack_frequency_frame_applies_once_and_only_if_newer() {
        let mut r = app();
        let f = |sequence, threshold| AckFrequency { sequence, ack_eliciting_threshold: threshold, request_max_ack_delay: Dur::from_millis(5), reordering_threshold: 0 };
        r.apply_frequency(&f(3, 4));
        assert_eq!((r.policy().ack_eliciting_threshold, r.policy().max_ack_delay, r.policy().immediate_on_reorder), (5, Dur::from_millis(5), false));
        r.apply_frequency(&f(2, 0));
        r.apply_frequency(&f(3, 0));
        assert_eq!(r.policy().ack_eliciting_threshold, 5, "older or repeated frames are ignored");
        // Five ack-eliciting packets, then the ACK; a gap is not acknowledged at once.
        for pn in 0..4 {
            assert_eq!(r.on_packet(t(pn), pn, true, Ecn::NotEct).1, None);
        }
        assert_eq!(r.on_packet(t(5), 6, true, Ecn::NotEct).1.map(|a| a.largest()), Some(6));
        assert_eq!(r.ack_deadline(), None);
    }
}
