//! The RFC 6675 scoreboard: per-segment state for `[SND.UNA, SND.MAX)`, the SACKed segments as
//! maximal runs (a [`RangeSet`]), IsLost() for every segment at once (the lost bound) and
//! SetPipe(), and the marks RACK-TLP leaves on segments (lost, retransmission in flight). Every
//! query is a lookup in the runs: an ACK costs O(log n) per SACK block in the number of runs, and
//! nothing walks the window but a timeout under RACK-TLP or ns-2's Sack1.
//!
//! The scoreboard is TCP's: it numbers data by byte and segments by `mss` (segment `i` covers
//! `[una + i·mss, una + (i+1)·mss)`, the last one short at the end of the data), as the sender's
//! [`Span`] gives them. Its loss rule is [`DupThresh`], which is not tied to bytes.

use super::dupthresh::DupThresh;
use crate::ranges::RangeSet;
use startlab_units::Time;
use std::collections::{BTreeSet, VecDeque};

/// The sequence space as the sender holds it now: what a scoreboard query needs of the sender.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    /// SND.UNA: the first byte of segment 0.
    pub(super) una: u64,
    /// One past the highest byte sent (`HighData + 1`).
    pub(super) max: u64,
    /// One past the last byte of data (handed over so far, with `app_limited`).
    pub(super) end: u64,
    /// The segment size.
    pub(super) mss: u64,
}

impl Span {
    /// The length of the segment starting at `seq`.
    pub(super) fn seg_len(&self, seq: u64) -> u32 {
        (self.end - seq).min(self.mss) as u32
    }

    /// The index of the segment that contains `seq`.
    pub(super) fn idx(&self, seq: u64) -> usize {
        ((seq - self.una) / self.mss) as usize
    }

    /// The first byte of segment `i`.
    pub(super) fn seq_of(&self, i: usize) -> u64 {
        self.una + i as u64 * self.mss
    }
}

/// What the scoreboard keeps of one sent segment.
#[derive(Clone, Copy, Debug)]
pub(super) struct SegMeta {
    /// Last transmission time.
    pub(super) sent: Time,
    /// Transmissions so far.
    pub(super) tx: u16,
    /// SACKed.
    pub(super) sacked: bool,
    /// The SACK recovery episode ([`Scoreboard::new_episode`]) in which this segment was last
    /// retransmitted; it is "retransmitted in the current episode" (its retransmission counts in
    /// `pipe`) when this equals the scoreboard's current episode, so a new episode clears every
    /// mark in O(1).
    pub(super) rtx_episode: u32,
    /// Sender's `delivered` count and its time when this segment was (last) sent, for rate samples.
    pub(super) delivered_at_send: u64,
    pub(super) delivered_time_at_send: Time,
    /// RACK-TLP: deemed lost (by RACK or a timeout) and not SACKed since.
    pub(super) lost: bool,
    /// RACK-TLP: a retransmission of it is in flight (Linux `TCPCB_SACKED_RETRANS`).
    pub(super) retrans: bool,
}

/// RACK-TLP's marks as counts (Linux `lost_out`, `retrans_out`) and the lost segments waiting to
/// go out again.
#[derive(Clone, Debug, Default)]
struct LossMarks {
    /// First bytes of segments marked lost and not sent again since.
    waiting: BTreeSet<u64>,
    /// Bytes of unSACKed segments marked lost (Linux `lost_out`).
    lost_bytes: u64,
    /// Bytes of retransmissions in flight (Linux `retrans_out`).
    retrans_bytes: u64,
}

impl LossMarks {
    /// Segment `m` at `seq` is delivered (cumulatively or by SACK): its marks go.
    fn on_delivered(&mut self, m: &mut SegMeta, seq: u64, len: u64) {
        if m.lost {
            m.lost = false;
            self.lost_bytes -= len;
            self.waiting.remove(&seq);
        }
        if m.retrans {
            m.retrans = false;
            self.retrans_bytes -= len;
        }
    }
}

/// The scoreboard (RFC 6675 §3's SACKed sequences and the per-segment state beside them).
///
/// In declaration order (`repr(C)`): what every ACK reads first, RACK-TLP's marks (read only
/// with RACK) last.
#[derive(Clone, Debug)]
#[repr(C)]
pub(super) struct Scoreboard {
    /// Per-segment state for `[SND.UNA, SND.MAX)`; `segs[0]` is the segment starting at SND.UNA.
    segs: VecDeque<SegMeta>,
    /// The SACKed segments as maximal runs of bytes (RFC 6675's SACKed sequences), so that
    /// IsLost(), SetPipe() and NextSeg() never walk the window.
    sacked: RangeSet,
    /// RFC 6675 IsLost() for every unSACKed segment at once: IsLost() is monotone (every SACKed
    /// byte or run above a segment is also above every lower one), so the unSACKed segments
    /// starting below this byte are lost and the others are not. Set with `pipe` on every ACK
    /// while SACK blocks exist.
    lost_below: u64,
    /// Highest SACKed byte + 1.
    high_sacked: u64,
    /// Bytes newly SACKed by the ACK being processed (the sender adds them to `delivered`).
    sacked_bytes_pending: u64,
    /// Bytes of unSACKed segments retransmitted in the current episode (the second term of
    /// SetPipe()).
    rtx_unsacked: u64,
    /// With `keep_sacked_rtx` only: bytes of segments retransmitted in the current episode and
    /// SACKed since.
    rtx_sacked: u64,
    /// Current SACK recovery episode (see `SegMeta::rtx_episode`); 0 is never current.
    episode: u32,
    /// ns-3 3.44 (`Ns3Prr`): a segment retransmitted in the episode still counts in `pipe` once
    /// SACKed, until the cumulative ACK covers it (ns-3 issue #1190).
    keep_sacked_rtx: bool,
    /// IsLost()'s rule.
    rule: DupThresh,
    /// RACK-TLP's marks.
    marks: LossMarks,
}

impl Scoreboard {
    /// An empty scoreboard for segments of `mss` bytes.
    pub(super) fn new(mss: u64, dupthresh: u32, keep_sacked_rtx: bool) -> Self {
        Scoreboard {
            segs: VecDeque::new(),
            sacked: RangeSet::default(),
            lost_below: 0,
            episode: 1,
            rtx_unsacked: 0,
            rtx_sacked: 0,
            keep_sacked_rtx,
            high_sacked: 0,
            sacked_bytes_pending: 0,
            rule: DupThresh { dupthresh, unit: mss },
            marks: LossMarks::default(),
        }
    }

    /// Reads, and discards, a value on each cache line of the fields an ACK reads, and the
    /// oldest segment's state ([`Sender::warm`](super::Sender::warm)).
    pub(super) fn warm(&self) -> u64 {
        let head = self.segs.front().map_or(0, |m| m.sent.as_nanos());
        head ^ self.sacked.is_empty() as u64 ^ self.lost_below ^ self.high_sacked ^ self.episode as u64 ^ self.rule.dupthresh as u64
    }

    /// Segments outstanding.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.segs.len()
    }

    /// Segment `i`.
    pub(super) fn seg(&self, i: usize) -> &SegMeta {
        &self.segs[i]
    }

    /// Segment `i`, to record a transmission.
    pub(super) fn seg_mut(&mut self, i: usize) -> &mut SegMeta {
        &mut self.segs[i]
    }

    /// A new segment was sent (at SND.MAX).
    pub(super) fn push(&mut self, m: SegMeta) {
        self.segs.push_back(m);
    }

    /// The SACKed runs.
    pub(super) fn sacked(&self) -> &RangeSet {
        &self.sacked
    }

    /// Highest SACKed byte + 1 (SND.UNA when nothing is SACKed).
    pub(super) fn high_sacked(&self) -> u64 {
        self.high_sacked
    }

    /// The lost bound of the last [`Scoreboard::recompute`].
    pub(super) fn lost_below(&self) -> u64 {
        self.lost_below
    }

    /// The current SACK recovery episode.
    #[cfg(test)]
    pub(super) fn episode(&self) -> u32 {
        self.episode
    }

    /// Segment `i` was retransmitted in the current episode.
    pub(super) fn rtx_in_episode(&self, i: usize) -> bool {
        self.segs[i].rtx_episode == self.episode
    }

    /// Bytes newly SACKed by the ACK being processed.
    pub(super) fn sacked_pending(&self) -> u64 {
        self.sacked_bytes_pending
    }

    /// Bytes newly SACKed by the ACK being processed, taken.
    pub(super) fn take_sacked_pending(&mut self) -> u64 {
        std::mem::take(&mut self.sacked_bytes_pending)
    }

    /// Marks SACKed segments. Only the part of a block not SACKed before is visited, so each
    /// segment is marked once in its life and an ACK costs O(log n) per block in the number of
    /// SACKed runs n. `newly(m, seq, len)` is called for each newly SACKed segment.
    pub(super) fn on_sack(&mut self, span: Span, cum_ack: u64, blocks: &[(u64, u64)], mut newly: impl FnMut(&SegMeta, u64, u64)) {
        let mss = span.mss;
        for &(s, e) in blocks {
            let s = s.max(cum_ack).max(span.una);
            let e = e.min(span.max);
            if s >= e {
                continue;
            }
            // Blocks are unions of whole segments; mark every segment fully inside: from the
            // first segment boundary at or above s to the last segment end at or below e (snd_max
            // is a segment end; below it every segment that ends beyond e is a full one).
            let first = if s == span.una { s } else { s.next_multiple_of(mss) };
            let last = if e == span.max { e } else { e / mss * mss };
            let (una, end, episode, keep) = (span.una, span.end, self.episode, self.keep_sacked_rtx);
            let (segs, rtx_unsacked, rtx_sacked, pending, marks) =
                (&mut self.segs, &mut self.rtx_unsacked, &mut self.rtx_sacked, &mut self.sacked_bytes_pending, &mut self.marks);
            self.sacked.insert(first, last.max(first), |a, b| {
                let mut seq = a;
                while seq < b {
                    let len = (end - seq).min(mss);
                    let m = &mut segs[((seq - una) / mss) as usize];
                    debug_assert!(!m.sacked);
                    m.sacked = true;
                    if m.rtx_episode == episode {
                        *rtx_unsacked -= len;
                        if keep {
                            *rtx_sacked += len;
                        }
                    }
                    marks.on_delivered(m, seq, len);
                    newly(m, seq, len);
                    *pending += len;
                    seq += len;
                }
            });
            self.high_sacked = self.high_sacked.max(e);
        }
    }

    /// The cumulative ACK covers the first `n` segments, up to `ack`: they leave the scoreboard.
    /// `fresh(m, seq, len)` is called for each that was not SACKed. Returns the bytes of those
    /// and whether one of them had been retransmitted in the current episode.
    pub(super) fn on_cum_ack(&mut self, span: Span, ack: u64, n: usize, mut fresh: impl FnMut(&SegMeta, u64, u64)) -> (u64, bool) {
        let (mut bytes, mut rtx_acked) = (0, false);
        for i in 0..n {
            let seq = span.seq_of(i);
            let len = span.seg_len(seq) as u64;
            let m = &mut self.segs[i];
            if m.sacked && m.rtx_episode == self.episode && self.keep_sacked_rtx {
                self.rtx_sacked -= len;
            }
            if !m.sacked {
                bytes += len;
                if m.rtx_episode == self.episode {
                    self.rtx_unsacked -= len;
                    rtx_acked = true;
                }
                self.marks.on_delivered(m, seq, len);
                fresh(m, seq, len);
            }
        }
        self.segs.drain(..n);
        self.sacked.remove_below(ack);
        if self.sacked.is_empty() {
            self.high_sacked = ack;
        }
        (bytes, rtx_acked)
    }

    /// Segment `i` was retransmitted in the current SACK episode: while unSACKed it counts twice
    /// in SetPipe() (once more than an unretransmitted segment).
    pub(super) fn mark_retransmitted_in_episode(&mut self, span: Span, i: usize) {
        let len = span.seg_len(span.seq_of(i)) as u64;
        let m = &mut self.segs[i];
        if m.rtx_episode != self.episode {
            m.rtx_episode = self.episode;
            if !m.sacked {
                self.rtx_unsacked += len;
            }
        }
    }

    /// A new SACK episode (or a timeout): no segment counts as retransmitted in it yet.
    pub(super) fn new_episode(&mut self) {
        self.episode = self.episode.wrapping_add(1).max(1);
        self.rtx_unsacked = 0;
        self.rtx_sacked = 0;
    }

    /// Drops every SACK (ns-2 Sack1's timeout). O(window).
    pub(super) fn clear_sacks(&mut self, una: u64) {
        for m in self.segs.iter_mut() {
            m.sacked = false;
        }
        self.sacked = Default::default();
        self.high_sacked = una;
    }

    /// The lowest unSACKed sequence number at or above `from` (HighRxt) and below the highest
    /// SACKed byte: NextSeg()'s candidate for rules (1) and (3).
    pub(super) fn next_seg_candidate(&self, span: Span, high_rxt: u64) -> Option<u64> {
        let from = high_rxt.max(span.una);
        (from < span.max).then(|| self.sacked.next_gap(from)).filter(|&seq| seq < self.high_sacked)
    }

    /// One past the highest unSACKed byte below `max` (SND.MAX): the end of the segment that
    /// RFC 6675's rescue retransmission and RACK-TLP's loss probe send again.
    pub(super) fn top_unsacked_end(&self, max: u64) -> u64 {
        match self.sacked.last() {
            Some((s, e)) if e == max => s,
            _ => max,
        }
    }

    /// IsLost()'s lost bound over the SACKed bytes above `floor` ([`DupThresh::lost_bound`]).
    pub(super) fn lost_bound(&self, floor: u64) -> Option<(u64, u64)> {
        self.rule.lost_bound(&self.sacked, floor)
    }

    /// RFC 6675 IsLost() for the first segment (used before recovery starts): its own SACK state
    /// aside, whether the bytes strictly above it meet the bound.
    pub(super) fn first_is_lost(&self, span: Span) -> bool {
        self.lost_bound(span.una + span.seg_len(span.una) as u64).is_some()
    }

    /// IsLost() for every segment (kept as the lost bound) and SetPipe() (RFC 6675 §4), returned:
    /// pipe is the unSACKed bytes above the lost bound plus the unSACKed bytes retransmitted in
    /// this episode (and with `keep_sacked_rtx` the SACKed ones).
    pub(super) fn recompute(&mut self, span: Span) -> u64 {
        let pipe;
        (self.lost_below, pipe) = self.lost_and_pipe(span);
        pipe
    }

    /// The lost bound and `pipe` of [`Scoreboard::recompute`], from the scoreboard as it is now,
    /// without keeping them.
    pub(super) fn lost_and_pipe(&self, span: Span) -> (u64, u64) {
        // Nothing lost: every unSACKed byte of the window is above the bound.
        let (bound, sacked_above) = self.lost_bound(span.una).unwrap_or((span.una, self.sacked.bytes()));
        (bound, (span.max - bound - sacked_above) + self.rtx_unsacked + self.rtx_sacked)
    }

    /// RACK-TLP: bytes of unSACKed segments marked lost.
    pub(super) fn lost_bytes(&self) -> u64 {
        self.marks.lost_bytes
    }

    /// RACK-TLP: bytes of retransmissions in flight.
    pub(super) fn retrans_bytes(&self) -> u64 {
        self.marks.retrans_bytes
    }

    /// RACK-TLP: the lowest segment marked lost and not sent again since.
    pub(super) fn first_waiting(&self) -> Option<u64> {
        self.marks.waiting.first().copied()
    }

    /// RACK-TLP: segment `i` at `seq` (of `len` bytes) was retransmitted: it is in flight and no
    /// longer waits.
    pub(super) fn on_retransmit_marks(&mut self, i: usize, seq: u64, len: u64) {
        let m = &mut self.segs[i];
        if !m.retrans {
            m.retrans = true;
            self.marks.retrans_bytes += len;
        }
        self.marks.waiting.remove(&seq);
    }

    /// RACK-TLP: whether the send-order entry `(seq, tx)` still stands for a transmission in
    /// flight (not acknowledged, SACKed, marked lost or sent again since); its end if so.
    pub(super) fn rack_live(&self, span: Span, seq: u64, tx: u16) -> Option<u64> {
        if seq < span.una {
            return None;
        }
        let m = self.segs[span.idx(seq)];
        if m.tx != tx || m.sacked || (m.lost && !m.retrans) {
            return None;
        }
        Some(seq + span.seg_len(seq) as u64)
    }

    /// RACK-TLP: segment `i` at `seq` is lost; true when a retransmission of it in flight was
    /// lost again.
    pub(super) fn mark_lost(&mut self, i: usize, seq: u64, len: u64) -> bool {
        let m = &mut self.segs[i];
        let lost_rtx = m.retrans;
        if m.retrans {
            m.retrans = false;
            self.marks.retrans_bytes -= len;
        }
        if !m.lost {
            m.lost = true;
            self.marks.lost_bytes += len;
        }
        self.marks.waiting.insert(seq);
        lost_rtx
    }

    /// RACK-TLP's timeout: every unSACKed outstanding segment is lost; retransmissions in flight
    /// are forgotten. O(window).
    pub(super) fn mark_all_lost(&mut self, span: Span) {
        for i in 0..self.segs.len() {
            let seq = span.seq_of(i);
            let len = span.seg_len(seq) as u64;
            let m = &mut self.segs[i];
            if m.sacked {
                continue;
            }
            if m.retrans {
                m.retrans = false;
                self.marks.retrans_bytes -= len;
            }
            if !m.lost {
                m.lost = true;
                self.marks.lost_bytes += len;
            }
            self.marks.waiting.insert(seq);
        }
    }

    /// RACK-TLP's counters against the per-segment marks (unit tests, every ACK).
    #[cfg(test)]
    pub(super) fn check_marks(&self, span: Span) {
        let (mut lost, mut retrans, mut waiting) = (0, 0, BTreeSet::new());
        for (i, m) in self.segs.iter().enumerate() {
            let seq = span.seq_of(i);
            let len = span.seg_len(seq) as u64;
            assert!(!(m.sacked && (m.lost || m.retrans)), "a SACKed segment carries no marks");
            lost += if m.lost { len } else { 0 };
            retrans += if m.retrans { len } else { 0 };
            if m.lost && !m.retrans {
                waiting.insert(seq);
            }
        }
        assert_eq!((lost, retrans), (self.marks.lost_bytes, self.marks.retrans_bytes));
        assert_eq!(waiting, self.marks.waiting, "the lost segments waiting to be sent again");
    }
}
