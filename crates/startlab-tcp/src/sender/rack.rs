//! RACK-TLP (RFC 8985) for `Recovery::RackTlp` and `Recovery::Linux`.
//!
//! **Loss detection.** Each ACK moves `RACK.xmit_ts` to the latest send time among the segments
//! it delivers (cumulatively or by SACK; a retransmitted segment counts only if its RTT is at
//! least the minimum RTT, else the ACK may be for the original). A segment sent before that one
//! is lost once `RACK.rtt + reo_wnd` has passed since it was sent; a segment whose time is not
//! up yet arms the reordering timer. This finds lost retransmissions as well as lost originals,
//! so a retransmission lost again is sent again without a timeout.
//!
//! **Reordering window.** As Linux: 0 while no reordering has been seen and the sender is in
//! recovery or has at least DupThresh segments SACKed (so a burst is detected at once), else
//! `min(min_RTT / 4, SRTT)`. Reordering is seen when a segment sent once is delivered below
//! the highest byte SACKed before the ACK (Linux `prior_fack`): an ACK that SACKs past a hole and
//! also covers a segment its receiver held for a delayed ACK shows no reordering.
//!
//! **Tail loss probe.** Outside recovery, with data outstanding and the window full, each ACK
//! and each new segment arms the probe timeout `PTO = 2·SRTT` (plus 200 ms when one segment is
//! outstanding, as RFC 8985's worst-case delayed ACK; Linux adds two 1 ms jiffies otherwise),
//! never later than the RTO. When it fires, one new segment leaves regardless of cwnd, or, with
//! none to send, the highest unSACKed segment again; the RTO is re-armed. If a retransmitted probe
//! is then covered by an ACK that advances SND.UNA, it repaired a loss: the window is reduced
//! once (enter and leave recovery), as Linux's CWR does.
//!
//! **Timeout.** Every unSACKed outstanding segment is marked lost (Linux `tcp_enter_loss`) and
//! retransmissions in flight are forgotten; the lost segments then go out in sequence order as
//! slow start opens the window, while RACK keeps finding retransmissions lost again.
//!
//! **Cost.** Every transmission enters a queue in send order. Detection walks it from the front,
//! drops entries that are stale (acknowledged, SACKed, marked lost or sent again since) and stops
//! at the first segment sent after `RACK.xmit_ts` or whose time is not up, so each entry is
//! visited a bounded number of times and an ACK costs O(1) amortised plus O(log n) per segment
//! marked lost or SACKed, whatever the window. A timeout walks the window once.
//!
//! **Where this differs from RFC 8985 / Linux** (startlab's choices):
//! - The reordering timer is set for the earliest waiting segment, not the latest: each
//!   segment is marked at its own deadline. This only matters before recovery with fewer than
//!   DupThresh segments SACKed (the window is 0 otherwise).
//! - min_RTT is the minimum over the connection (Linux keeps a 5-minute windowed minimum).
//! - The receiver models send no DSACK: the reordering window never widens, and a
//!   retransmitted probe whose ACK advances SND.UNA always counts as a repaired loss.
//! - Linux pads the reordering timer with two jiffies; the simulator does not.

use super::{Handshake, Recovery, Segment, SegMeta, Sender};
use startlab_cc::{CongestionEvent, CongestionKind};
use startlab_units::{Dur, Time};
use std::collections::{BTreeSet, VecDeque};

/// RFC 8985 §7.2's worst-case delayed-ACK time added to the PTO with one segment outstanding.
const WC_DEL_ACK: Dur = Dur(200_000_000);
/// Linux's `TCP_TIMEOUT_MIN` (two jiffies at HZ = 1000) added to the PTO otherwise.
const LINUX_TIMEOUT_MIN: Dur = Dur(2_000_000);
/// PTO before any RTT sample (RFC 8985 §7.2, Linux `TCP_TIMEOUT_INIT`).
const PTO_INIT: Dur = Dur(1_000_000_000);

/// RACK-TLP state.
#[derive(Debug, Default)]
pub(super) struct Rack {
    /// `RACK.xmit_ts` and `RACK.end_seq` of the latest-sent delivered segment.
    xmit: Option<(Time, u64)>,
    /// `RACK.rtt`: the RTT of that segment.
    rtt: Dur,
    /// Minimum RTT seen.
    min_rtt: Option<Dur>,
    /// A segment sent once was delivered below the highest SACKed byte.
    reord_seen: bool,
    /// `RACK.xmit_ts` moved since the last detection.
    advanced: bool,
    /// Every transmission in send order: (time, first byte, transmission count).
    sent: VecDeque<(Time, u64, u16)>,
    /// First bytes of segments marked lost and not sent again since.
    lost: BTreeSet<u64>,
    /// Bytes of unSACKed segments marked lost (Linux `lost_out`).
    pub(super) lost_bytes: u64,
    /// Bytes of retransmissions in flight (Linux `retrans_out`).
    pub(super) retrans_bytes: u64,
    /// Segments marked lost by the detection in progress.
    newly_lost: u64,
    /// The reordering timer.
    pub(super) reo_deadline: Option<Time>,
    /// The probe timer.
    pub(super) tlp_deadline: Option<Time>,
    /// The probe timer fired: the next transmission is the probe.
    tlp_fire: bool,
    /// `TLP.end_seq`: SND.NXT after the probe, until an ACK settles it.
    tlp_end: Option<u64>,
    /// The probe was a retransmission.
    tlp_retrans: bool,
}

/// RFC 8985 `RACK_sent_after`: (t1, seq1) was sent after (t2, seq2).
fn sent_after((t1, s1): (Time, u64), (t2, s2): (Time, u64)) -> bool {
    t1 > t2 || (t1 == t2 && s1 > s2)
}

impl Rack {
    /// A segment delivered by the ACK being processed at `now` (cumulatively for the first time,
    /// or newly SACKed); `below_fack` when it lies below the highest byte SACKed before.
    pub(super) fn on_delivered(&mut self, now: Time, m: &mut SegMeta, seq: u64, len: u64, below_fack: bool) {
        if m.lost {
            m.lost = false;
            self.lost_bytes -= len;
            self.lost.remove(&seq);
        }
        if m.retrans {
            m.retrans = false;
            self.retrans_bytes -= len;
        }
        if m.tx == 1 && below_fack {
            self.reord_seen = true;
        }
        let rtt = now - m.sent;
        if m.tx > 1 && self.min_rtt.is_none_or(|min| rtt < min) {
            // Possibly the ACK of an earlier transmission.
            return;
        }
        let cand = (m.sent, seq + len);
        if self.xmit.is_none_or(|x| sent_after(cand, x)) {
            self.xmit = Some(cand);
            self.rtt = rtt;
            self.advanced = true;
        }
    }

    /// An RTT sample of a segment sent once.
    pub(super) fn on_rtt_sample(&mut self, rtt: Dur) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }
}

impl Sender {
    /// RACK has seen reordering (a segment sent once delivered below the highest SACKed byte).
    #[cfg(test)]
    pub(super) fn reordering_seen(&self) -> bool {
        self.rack.reord_seen
    }

    /// RACK's in-flight estimate (Linux `tcp_packets_in_flight`, in bytes): outstanding, less
    /// SACKed, less lost, plus retransmissions in flight.
    pub(super) fn rack_pipe(&self) -> u64 {
        (self.snd_max - self.snd_una - self.sacked.bytes() - self.rack.lost_bytes) + self.rack.retrans_bytes
    }

    /// The next segment under RACK-TLP: a pending probe (regardless of cwnd), the lowest lost
    /// segment, or new data, while the in-flight estimate leaves room for it.
    pub(super) fn rack_next_segment(&mut self, now: Time) -> Option<Segment> {
        if std::mem::take(&mut self.rack.tlp_fire) {
            if let Some(seg) = self.tlp_probe(now) {
                return Some(seg);
            }
        }
        let wnd = self.window_bytes() as u64;
        let pipe = self.rack_pipe();
        if let Some(&seq) = self.rack.lost.first() {
            let len = self.seg_len(seq) as u64;
            return (pipe + len <= wnd).then(|| self.emit(now, seq, true));
        }
        let seq = self.snd_max;
        if !self.new_data_allowed(seq) || pipe + self.seg_len(seq) as u64 > wnd {
            return None;
        }
        let seg = self.emit(now, seq, false);
        self.rack_arm_tlp(now);
        Some(seg)
    }

    /// New data at `seq` may leave as far as the receiver window and a startup's hold allow.
    fn new_data_allowed(&self, seq: u64) -> bool {
        if seq >= self.data_end() {
            return false;
        }
        let end = seq + self.seg_len(seq) as u64;
        end - self.snd_una <= self.rwnd && self.cc.send_limit().is_none_or(|limit| end <= limit)
    }

    /// A transmission (`emit`) under RACK-TLP: it enters the send-order queue; a retransmission
    /// is in flight and no longer waits.
    pub(super) fn rack_on_send(&mut self, now: Time, seq: u64, retransmit: bool) {
        let (i, len) = (self.idx(seq), self.seg_len(seq) as u64);
        if retransmit {
            let m = &mut self.segs[i];
            if !m.retrans {
                m.retrans = true;
                self.rack.retrans_bytes += len;
            }
            self.rack.lost.remove(&seq);
        }
        self.rack.sent.push_back((now, seq, self.segs[i].tx));
    }

    /// Marks segment `i` lost; a retransmission of it in flight is lost again.
    fn rack_mark_lost(&mut self, i: usize) {
        let seq = self.seq_of(i);
        let len = self.seg_len(seq) as u64;
        let m = &mut self.segs[i];
        if m.retrans {
            m.retrans = false;
            self.rack.retrans_bytes -= len;
            self.stats.lost_retransmits += 1;
        }
        if !m.lost {
            m.lost = true;
            self.rack.lost_bytes += len;
        }
        self.rack.lost.insert(seq);
        self.rack.newly_lost += 1;
    }

    /// RFC 8985 `RACK_update_reo_wnd`, as Linux `tcp_rack_reo_wnd` resolves it.
    fn rack_reo_wnd(&self) -> Dur {
        if !self.rack.reord_seen && (self.in_recovery || self.rto_loss || self.sacked.bytes() >= self.cfg.dupthresh as u64 * self.mss()) {
            return Dur::ZERO;
        }
        let quarter = self.rack.min_rtt.map_or(Dur(u64::MAX), |m| Dur(m.0 / 4));
        quarter.min(self.rtt.srtt().unwrap_or(Dur::ZERO))
    }

    /// RFC 8985 `RACK_detect_loss`: marks the segments whose time is up, arms the reordering
    /// timer for the first that waits.
    fn rack_detect(&mut self, now: Time) {
        self.rack.reo_deadline = None;
        let Some(xmit) = self.rack.xmit else { return };
        let reo = self.rack_reo_wnd();
        while let Some(&(sent, seq, tx)) = self.rack.sent.front() {
            if seq < self.snd_una {
                self.rack.sent.pop_front();
                continue;
            }
            let i = self.idx(seq);
            let m = self.segs[i];
            if m.tx != tx || m.sacked || (m.lost && !m.retrans) {
                self.rack.sent.pop_front();
                continue;
            }
            if !sent_after(xmit, (sent, seq + self.seg_len(seq) as u64)) {
                break;
            }
            let deadline = sent + self.rack.rtt + reo;
            if deadline > now {
                self.rack.reo_deadline = Some(deadline);
                break;
            }
            self.rack.sent.pop_front();
            self.rack_mark_lost(i);
        }
    }

    /// RACK-TLP's part of an ACK, after the scoreboard and SND.UNA moved: detection, the entry
    /// into recovery, Linux's PRR, and the probe's verdict and re-arming.
    pub(super) fn rack_on_ack(&mut self, now: Time, delivered: u64, una_advanced: bool) {
        self.rack.newly_lost = 0;
        if std::mem::take(&mut self.rack.advanced) {
            self.rack_detect(now);
        }
        let newly_lost = self.rack.newly_lost > 0;
        let entered = self.rack_maybe_enter_recovery(now);
        if self.in_recovery && self.cfg.recovery == Recovery::Linux {
            self.prr_on_ack(delivered, self.rack_pipe(), una_advanced, newly_lost);
        }
        if !entered {
            self.tlp_verdict(now, una_advanced);
        }
        self.rack_arm_tlp(now);
        #[cfg(test)]
        self.rack_check();
    }

    /// The counters against the per-segment marks (unit tests, every ACK).
    #[cfg(test)]
    fn rack_check(&self) {
        let (mut lost, mut retrans, mut waiting) = (0, 0, BTreeSet::new());
        for (i, m) in self.segs.iter().enumerate() {
            let seq = self.seq_of(i);
            let len = self.seg_len(seq) as u64;
            assert!(!(m.sacked && (m.lost || m.retrans)), "a SACKed segment carries no marks");
            lost += if m.lost { len } else { 0 };
            retrans += if m.retrans { len } else { 0 };
            if m.lost && !m.retrans {
                waiting.insert(seq);
            }
        }
        assert_eq!((lost, retrans), (self.rack.lost_bytes, self.rack.retrans_bytes));
        assert_eq!(waiting, self.rack.lost, "the lost segments waiting to be sent again");
    }

    /// Enters recovery when RACK has marked something lost and no recovery (fast or after a
    /// timeout) is in progress.
    fn rack_maybe_enter_recovery(&mut self, now: Time) -> bool {
        if self.in_recovery || self.rto_loss || self.rack.lost_bytes == 0 {
            return false;
        }
        let prior_cwnd = self.cc.cwnd();
        self.rack_reduce(now);
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.rack.tlp_end = None;
        self.rack.tlp_deadline = None;
        if self.cfg.recovery == Recovery::Linux {
            self.prr = super::prr::Prr::enter(prior_cwnd as u64);
        }
        true
    }

    /// A loss RACK found (or a probe repaired): counted as a fast retransmit, and the controller
    /// reduces its window for the outstanding data.
    fn rack_reduce(&mut self, now: Time) {
        self.stats.fast_retransmits += 1;
        self.cc.on_congestion(&CongestionEvent {
            now,
            kind: CongestionKind::FastRetransmit,
            flight_size: self.rack_flight_size(),
            enter_recovery: true,
        });
    }

    /// The FlightSize a congestion event under RACK-TLP reduces from: `SND.NXT − SND.UNA`, at most
    /// cwnd, i.e. Linux's reduction from cwnd (`tcp_reno_ssthresh`, `bictcp_recalc_ssthresh`; QUIC's
    /// RFC 9002 §7.3.2 likewise). RACK sends while its in-flight estimate leaves room, so behind a
    /// lost retransmission SND.UNA stays put while whole windows of new data go out and are SACKed:
    /// `SND.NXT − SND.UNA` then counts many windows that are no longer in the network, and half of
    /// it *raised* ssthresh at the next episode (1 180 → 1 964 → 5 035 segments on the Paced Start
    /// path). Outside recovery the outstanding data fits in cwnd and this is RFC 5681's FlightSize.
    pub(super) fn rack_flight_size(&self) -> u64 {
        (self.snd_nxt - self.snd_una).min(self.cc.cwnd() as u64)
    }

    /// RFC 8985 §7.4: an ACK after a probe. A retransmitted probe covered by an ACK that
    /// advances SND.UNA repaired a loss: the window is reduced once. A duplicate ACK at or above
    /// the probe (the original and the probe both arrived), or the ACK of a new-data probe, ends
    /// the episode.
    fn tlp_verdict(&mut self, now: Time, una_advanced: bool) {
        let Some(end) = self.rack.tlp_end else { return };
        if self.snd_una < end && una_advanced {
            return;
        }
        self.rack.tlp_end = None;
        if self.rack.tlp_retrans && una_advanced && self.snd_una >= end {
            self.rack_reduce(now);
            let ssthresh = self.ssthresh_bytes();
            self.cc.on_recovery_exit(now, ssthresh);
        }
    }

    /// Arms (or disarms) the probe timeout after an ACK or a new segment.
    fn rack_arm_tlp(&mut self, now: Time) {
        self.rack.tlp_deadline = None;
        if self.in_recovery || self.rto_loss || self.rack.tlp_end.is_some() || self.snd_una >= self.snd_max || self.handshake != Handshake::Established {
            return;
        }
        let mss = self.mss();
        if self.snd_max < self.data_end() && self.rack_pipe() + mss <= self.window_bytes() as u64 {
            // The window lets new data out: no probe needed (Linux).
            return;
        }
        let pto = match self.rtt.srtt() {
            Some(srtt) => {
                let extra = if self.snd_max - self.snd_una <= mss {
                    WC_DEL_ACK
                } else if self.cfg.recovery == Recovery::Linux {
                    LINUX_TIMEOUT_MIN
                } else {
                    Dur::ZERO
                };
                srtt + srtt + extra
            }
            None => PTO_INIT,
        };
        let at = now + pto;
        self.rack.tlp_deadline = Some(self.rto_deadline.map_or(at, |rto| rto.min(at)));
    }

    /// The timers of RACK-TLP due at `now`. Returns true when the probe fired (it takes the
    /// place of a retransmission timeout due at the same time, which is re-armed).
    pub(super) fn rack_on_timer(&mut self, now: Time) -> bool {
        if self.rack.reo_deadline.is_some_and(|t| t <= now) {
            self.rack.reo_deadline = None;
            self.rack.newly_lost = 0;
            self.rack_detect(now);
            if self.rack_maybe_enter_recovery(now) && self.cfg.recovery == Recovery::Linux {
                // Linux `tcp_rack_reo_timeout`: one segment's worth of delivery for PRR.
                self.prr_on_ack(self.mss(), self.rack_pipe(), false, true);
            }
        }
        if self.rack.tlp_deadline.is_some_and(|t| t <= now) {
            self.rack.tlp_deadline = None;
            if !self.in_recovery && !self.rto_loss && self.snd_una < self.snd_max {
                self.rack.tlp_fire = true;
                self.arm_timer(now);
                return true;
            }
        }
        false
    }

    /// The loss probe: one new segment if one may leave, else the highest unSACKed segment again.
    fn tlp_probe(&mut self, now: Time) -> Option<Segment> {
        let seg = if self.new_data_allowed(self.snd_max) {
            self.emit(now, self.snd_max, false)
        } else {
            let top = match self.sacked.last() {
                Some((s, e)) if e == self.snd_max => s,
                _ => self.snd_max,
            };
            if top <= self.snd_una {
                return None;
            }
            let seq = self.seq_of(self.idx(top - 1));
            self.emit(now, seq, true)
        };
        self.rack.tlp_end = Some(self.snd_max);
        self.rack.tlp_retrans = seg.retransmit;
        self.stats.tlp_probes += 1;
        self.arm_timer(now);
        Some(seg)
    }

    /// A retransmission timeout under RACK-TLP: every unSACKed outstanding segment is lost.
    pub(super) fn rack_on_timeout(&mut self) {
        for i in 0..self.segs.len() {
            let seq = self.seq_of(i);
            let len = self.seg_len(seq) as u64;
            let m = &mut self.segs[i];
            if m.sacked {
                continue;
            }
            if m.retrans {
                m.retrans = false;
                self.rack.retrans_bytes -= len;
            }
            if !m.lost {
                m.lost = true;
                self.rack.lost_bytes += len;
            }
            self.rack.lost.insert(seq);
        }
        self.rack.sent.clear();
        self.rack.tlp_end = None;
        self.rack.tlp_deadline = None;
        self.rack.reo_deadline = None;
        self.rack.tlp_fire = false;
    }
}
