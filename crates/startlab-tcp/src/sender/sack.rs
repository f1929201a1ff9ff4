//! The RFC 6675 scoreboard (SACKed runs, IsLost(), SetPipe()) and NextSeg(): what a SACK recovery
//! sends next.

use super::*;

impl Sender {
    /// RFC 6675 §5 NextSeg() while in SACK recovery, gated by `cwnd - pipe >= SMSS`. Each rule
    /// is a lookup in the scoreboard's runs, not a scan of the window.
    pub(super) fn sack_next_segment(&mut self, now: Time) -> Option<Segment> {
        if self.ns3.take_forced_new() && self.sack_new_data_ok() {
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
    pub(super) fn next_seg_candidate(&self) -> Option<u64> {
        let from = self.high_rxt.max(self.snd_una);
        (from < self.snd_max).then(|| self.sacked.next_gap(from)).filter(|&seq| seq < self.high_sacked)
    }

    /// NextSeg() rule (2): unsent data exists and the receiver's window takes one more segment.
    pub(super) fn sack_new_data_ok(&self) -> bool {
        let seq = self.snd_max;
        seq < self.data_end() && seq + self.seg_len(seq) as u64 - self.snd_una <= self.rwnd
    }

    /// Sends the next new segment in SACK recovery; it enters `pipe` at once.
    pub(super) fn sack_send_new(&mut self, now: Time) -> Segment {
        let seq = self.snd_max;
        self.snd_nxt = seq;
        let seg = self.emit(now, seq, false);
        self.pipe += seg.len as u64;
        seg
    }

    pub(super) fn sack_retransmit(&mut self, now: Time, i: usize) -> Segment {
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
    pub(super) fn mark_retransmitted_in_episode(&mut self, i: usize) {
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
    pub(super) fn new_episode(&mut self) {
        self.episode = self.episode.wrapping_add(1).max(1);
        self.rtx_unsacked = 0;
        self.rtx_sacked = 0;
    }

    /// Marks SACKed segments (RFC 6675 scoreboard); only SACK recovery reads it. Only the part
    /// of a block not SACKed before is visited, so each segment is marked once in its life and an
    /// ACK costs O(log n) per block in the number of SACKed runs n.
    pub(super) fn update_scoreboard(&mut self, now: Time, ack: &Ack) {
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

    /// SACK blocks count as delivery (the scoreboard was updated just before).
    pub(super) fn update_delivered_by_sack(&mut self, now: Time, _ack: &Ack) {
        if self.sacked_bytes_pending > 0 {
            self.delivered += std::mem::take(&mut self.sacked_bytes_pending);
            self.delivered_time = now;
        }
    }

    /// The lost bound of RFC 6675 IsLost() over the SACKed bytes above `floor`: walking the
    /// scoreboard's runs from the highest down (each cut at `floor`), the start of the run at which
    /// DupThresh runs or more than (DupThresh − 1)·SMSS bytes have been seen, with the SACKed bytes
    /// walked; `None` when that never happens. Every unSACKed segment below the bound is lost (what
    /// is SACKed above a segment is also above every lower one), none above it. O(DupThresh) runs.
    pub(super) fn lost_bound(&self, floor: u64) -> Option<(u64, u64)> {
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
    pub(super) fn first_is_lost(&self) -> bool {
        self.lost_bound(self.snd_una + self.seg_len(self.snd_una) as u64).is_some()
    }

    /// IsLost() for every segment (`lost_below`) and SetPipe() (RFC 6675 §4): pipe is the unSACKed
    /// bytes above the lost bound plus the unSACKed bytes retransmitted in this episode.
    pub(super) fn recompute_lost_and_pipe(&mut self) {
        (self.lost_below, self.pipe) = self.lost_and_pipe();
        #[cfg(test)]
        reference::check(self);
    }

    /// The lost bound and `pipe` of [`Sender::recompute_lost_and_pipe`], from the scoreboard as it
    /// is now, without keeping them.
    pub(super) fn lost_and_pipe(&self) -> (u64, u64) {
        // Nothing lost: every unSACKed byte of the window is above the bound.
        let (bound, sacked_above) = self.lost_bound(self.snd_una).unwrap_or((self.snd_una, self.sacked.bytes()));
        (bound, (self.snd_max - bound - sacked_above) + self.rtx_unsacked + self.rtx_sacked)
    }
}
