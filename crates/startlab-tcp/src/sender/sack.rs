//! RFC 6675's NextSeg() (what a SACK recovery sends next, from the scoreboard's answers) and the
//! sender's side of the scoreboard: reading an ACK's SACK blocks into it and keeping `pipe`.

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
        debug_assert!(candidate.is_none_or(|i| !self.sb.rtx_in_episode(i)));
        // (1) the lowest lost, unSACKed segment above HighRxt.
        let mut rule3 = None;
        if let Some(i) = candidate {
            if self.seq_of(i) < self.sb.lost_below() {
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
            let top = self.sb.top_unsacked_end(self.snd_max);
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
        self.sb.next_seg_candidate(self.span(), self.high_rxt)
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

    /// Segment `i` was retransmitted in the current SACK episode.
    pub(super) fn mark_retransmitted_in_episode(&mut self, i: usize) {
        let span = self.span();
        self.sb.mark_retransmitted_in_episode(span, i);
    }

    /// Marks SACKed segments on the scoreboard (only the scoreboard variants read it); RACK
    /// learns of each segment newly SACKed.
    pub(super) fn update_scoreboard(&mut self, now: Time, ack: &Ack) {
        if !self.cfg.recovery.uses_sack() || ack.n_sack == 0 {
            return;
        }
        let (rack_on, fack, span) = (self.cfg.recovery.rack(), self.sb.high_sacked(), self.span());
        let rack = &mut self.rack;
        self.sb.on_sack(span, ack.ack, ack.sack_blocks(), |m, seq, len| {
            if rack_on {
                rack.on_delivered(now, m.sent, m.tx, seq + len, seq + len <= fack);
            }
        });
    }

    /// SACK blocks count as delivery (the scoreboard was updated just before).
    pub(super) fn update_delivered_by_sack(&mut self, now: Time, _ack: &Ack) {
        let pending = self.sb.take_sacked_pending();
        if pending > 0 {
            self.delivered += pending;
            self.delivered_time = now;
        }
    }

    /// RFC 6675 IsLost() for the first segment (used before recovery starts).
    pub(super) fn first_is_lost(&self) -> bool {
        self.sb.first_is_lost(self.span())
    }

    /// IsLost() for every segment and SetPipe() (RFC 6675 §4), from the scoreboard.
    pub(super) fn recompute_lost_and_pipe(&mut self) {
        let span = self.span();
        self.pipe = self.sb.recompute(span);
        #[cfg(test)]
        reference::check(self);
    }

    /// The lost bound and `pipe` of [`Sender::recompute_lost_and_pipe`], without keeping them.
    pub(super) fn lost_and_pipe(&self) -> (u64, u64) {
        self.sb.lost_and_pipe(self.span())
    }
}
