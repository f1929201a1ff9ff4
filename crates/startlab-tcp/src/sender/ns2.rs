//! ns-2's `Agent/TCP/Sack1` recovery (`Recovery::Sack1`), the SACK TCP of the Paced Start
//! paper's simulations, as startlab resolves it from ns-2.35's behaviour:
//!
//! - Fast recovery starts on exactly the DupThresh-th duplicate ACK (SACK blocks alone do not
//!   start it), not before the cumulative ACK has passed the previous episode's recovery point.
//!   ssthresh and cwnd come from the congestion controller as for every variant (ns-2 halves
//!   cwnd: use `reno_ssthresh_from = "cwnd"` for ns-2's exact rule).
//! - `pipe` is a counter, not a scoreboard sum: at entry the outstanding data less DupThresh
//!   segments (the lost segment still counts as in flight); every further duplicate ACK takes one
//!   segment out and every partial ACK two; every transmission puts one in. The entry
//!   retransmission is not counted.
//! - While `pipe` leaves a segment's room in cwnd, the next hole above the last retransmitted
//!   one and below the highest SACKed byte is retransmitted, or else new data is sent. Every hole
//!   is retransmitted once, in order, whether or not it is yet deemed lost; there is no rescue
//!   retransmission, so a lost retransmission (or a lost tail) waits for the timeout.
//! - A timeout clears the SACK scoreboard (`ClearScoreBoard()`): everything from SND.UNA goes
//!   out again, SACKed or not, until later ACKs SACK it again.
//!
//! On a loss burst of half a window, `pipe` starts near the whole window and falls by one per
//! ACK: nothing is sent for most of the first round of recovery, the holes then go out one per
//! ACK, and a second loss in the episode ends in a timeout.

use super::{Segment, Sender};
use startlab_units::Time;

/// Sack1's `pipe` counter in bytes during its fast recovery (signed: ns-2 lets it go below 0).
/// It counts segments by their size and never reads a sequence number.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Sack1State {
    pipe: i64,
}

impl Sack1State {
    /// Fast recovery starts with `outstanding` bytes sent and unacknowledged: `pipe` is that
    /// less DupThresh segments of `mss` bytes.
    pub(super) fn enter(&mut self, outstanding: u64, dupthresh: u32, mss: u64) {
        self.pipe = outstanding as i64 - dupthresh as i64 * mss as i64;
    }

    /// A further duplicate ACK takes one segment out.
    pub(super) fn on_dupack(&mut self, mss: u64) {
        self.pipe -= mss as i64;
    }

    /// A partial ACK takes two segments out.
    pub(super) fn on_partial_ack(&mut self, mss: u64) {
        self.pipe -= 2 * mss as i64;
    }

    /// A segment may leave: `pipe` leaves a segment's room in the window of `window` bytes.
    pub(super) fn has_room(&self, window: f64, mss: u64) -> bool {
        self.pipe + mss as i64 <= window as i64
    }

    /// A segment of `len` bytes left.
    pub(super) fn on_send(&mut self, len: u32) {
        self.pipe += len as i64;
    }
}

impl Sender {
    /// Fast recovery starts (the controller has set ssthresh and cwnd).
    pub(super) fn sack1_enter(&mut self) {
        self.in_recovery = true;
        self.sack1.enter(self.snd_max - self.snd_una, self.cfg.dupthresh, self.mss());
        self.rtx_pending = Some(self.snd_una);
        self.high_rxt = self.snd_una + self.seg_len(self.snd_una) as u64;
    }

    /// The next segment of Sack1's fast recovery.
    pub(super) fn sack1_next_segment(&mut self, now: Time) -> Option<Segment> {
        if !self.sack1.has_room(self.window_bytes(), self.mss()) {
            return None;
        }
        // The next hole above the last retransmitted segment (NextSeg()'s candidate).
        let hole = self.next_seg_candidate();
        let seg = if let Some(seq) = hole {
            let seg = self.emit(now, seq, true);
            self.high_rxt = seq + seg.len as u64;
            seg
        } else {
            let seq = self.snd_max;
            if seq >= self.data_end() || seq + self.seg_len(seq) as u64 - self.snd_una > self.rwnd {
                return None;
            }
            self.snd_nxt = self.snd_max;
            self.emit(now, seq, false)
        };
        self.sack1.on_send(seg.len);
        Some(seg)
    }

    /// A timeout: the scoreboard is cleared. O(window) once per timeout.
    pub(super) fn sack1_on_timeout(&mut self) {
        self.sb.clear_sacks(self.snd_una);
    }
}
