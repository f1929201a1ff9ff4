//! RACK-TLP (RFC 8985) on the TCP sender, for `Recovery::RackTlp` and `Recovery::Linux`: the
//! detector of `rack.rs` over the scoreboard's segments, the entry into recovery, Linux's PRR, the
//! tail loss probe and the timeout.
//!
//! **Recovery.** RACK marks segments lost on the scoreboard (Linux `lost_out`); the in-flight
//! estimate is outstanding less SACKed less lost plus retransmissions in flight (Linux
//! `tcp_packets_in_flight`), and the lost segments go out in sequence order while it leaves room
//! in cwnd. The first loss found outside a recovery enters one.
//!
//! **Tail loss probe.** Outside recovery, with data outstanding and the window full, each ACK
//! and each new segment arms the probe timeout `PTO = 2·SRTT` (plus 200 ms when one segment is
//! outstanding, as RFC 8985's worst-case delayed ACK; Linux adds two 1 ms jiffies otherwise),
//! never later than the RTO. When it fires, one new segment leaves regardless of cwnd, or, with
//! none to send, the highest unSACKed segment again; the RTO is re-armed. If a retransmitted probe
//! is then covered by an ACK that advances SND.UNA, it repaired a loss: the window is reduced
//! once (enter and leave recovery), as Linux's CWR does. The receiver models send no DSACK, so
//! such a probe always counts as a repaired loss. (QUIC has no TLP: RFC 9002's PTO takes its
//! place, so this part stays TCP's.)
//!
//! **Timeout.** Every unSACKed outstanding segment is marked lost (Linux `tcp_enter_loss`) and
//! retransmissions in flight are forgotten; the lost segments then go out in sequence order as
//! slow start opens the window, while RACK keeps finding retransmissions lost again. A timeout
//! walks the window once.

use super::{Handshake, Recovery, Segment, Sender};
use startlab_cc::{CongestionEvent, CongestionKind};
use startlab_units::{Dur, Time};

/// RFC 8985 §7.2's worst-case delayed-ACK time added to the PTO with one segment outstanding.
const WC_DEL_ACK: Dur = Dur(200_000_000);
/// Linux's `TCP_TIMEOUT_MIN` (two jiffies at HZ = 1000) added to the PTO otherwise.
const LINUX_TIMEOUT_MIN: Dur = Dur(2_000_000);
/// PTO before any RTT sample (RFC 8985 §7.2, Linux `TCP_TIMEOUT_INIT`).
const PTO_INIT: Dur = Dur(1_000_000_000);

/// The tail loss probe's state.
#[derive(Debug, Default)]
pub(super) struct Tlp {
    /// The probe timer.
    pub(super) deadline: Option<Time>,
    /// The probe timer fired: the next transmission is the probe.
    fire: bool,
    /// `TLP.end_seq`: SND.NXT after the probe, until an ACK settles it.
    end: Option<u64>,
    /// The probe was a retransmission.
    retrans: bool,
}

impl Sender {
    /// RACK has seen reordering (a segment sent once delivered below the highest SACKed byte).
    #[cfg(test)]
    pub(super) fn reordering_seen(&self) -> bool {
        self.rack.reordering_seen()
    }

    /// RACK's in-flight estimate (Linux `tcp_packets_in_flight`, in bytes): outstanding, less
    /// SACKed, less lost, plus retransmissions in flight.
    pub(super) fn rack_pipe(&self) -> u64 {
        (self.snd_max - self.snd_una - self.sb.sacked().bytes() - self.sb.lost_bytes()) + self.sb.retrans_bytes()
    }

    /// The next segment under RACK-TLP: a pending probe (regardless of cwnd), the lowest lost
    /// segment, or new data, while the in-flight estimate leaves room for it.
    pub(super) fn rack_next_segment(&mut self, now: Time) -> Option<Segment> {
        if std::mem::take(&mut self.tlp.fire) {
            if let Some(seg) = self.tlp_probe(now) {
                return Some(seg);
            }
        }
        let wnd = self.window_bytes() as u64;
        let pipe = self.rack_pipe();
        if let Some(seq) = self.sb.first_waiting() {
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
            self.sb.on_retransmit_marks(i, seq, len);
        }
        self.rack.on_send(now, seq, self.sb.seg(i).tx);
    }

    /// Marks the segment at `seq` lost; a retransmission of it in flight is lost again.
    fn rack_mark_lost(&mut self, seq: u64) {
        let (i, len) = (self.idx(seq), self.seg_len(seq) as u64);
        if self.sb.mark_lost(i, seq, len) {
            self.stats.lost_retransmits += 1;
        }
    }

    /// RFC 8985 `RACK_update_reo_wnd` for this sender: the window is 0 before reordering is seen
    /// while in recovery (fast, or after a timeout) or with DupThresh segments SACKed.
    fn rack_reo_wnd(&self) -> Dur {
        let eager = self.in_recovery || self.rto_loss || self.sb.sacked().bytes() >= self.cfg.dupthresh as u64 * self.mss();
        self.rack.reo_wnd(eager, self.rtt.srtt())
    }

    /// RFC 8985 `RACK_detect_loss`: marks the segments whose time is up, arms the reordering
    /// timer for the first that waits. Returns how many were marked.
    fn rack_detect(&mut self, now: Time) -> u64 {
        self.rack.begin_detection();
        let reo = self.rack_reo_wnd();
        let mut marked = 0;
        loop {
            let (sb, span) = (&self.sb, self.span());
            let Some(seq) = self.rack.next_lost(now, reo, |seq, tx| sb.rack_live(span, seq, tx)) else { break };
            self.rack_mark_lost(seq);
            marked += 1;
        }
        marked
    }

    /// RACK-TLP's part of an ACK, after the scoreboard and SND.UNA moved: detection, the entry
    /// into recovery, Linux's PRR, and the probe's verdict and re-arming.
    pub(super) fn rack_on_ack(&mut self, now: Time, delivered: u64, una_advanced: bool) {
        let newly_lost = self.rack.take_advanced() && self.rack_detect(now) > 0;
        let entered = self.rack_maybe_enter_recovery(now);
        if self.in_recovery && self.cfg.recovery == Recovery::Linux {
            self.prr_on_ack(delivered, self.rack_pipe(), una_advanced, newly_lost);
        }
        if !entered {
            self.tlp_verdict(now, una_advanced);
        }
        self.rack_arm_tlp(now);
        #[cfg(test)]
        self.sb.check_marks(self.span());
    }

    /// Enters recovery when RACK has marked something lost and no recovery (fast or after a
    /// timeout) is in progress.
    fn rack_maybe_enter_recovery(&mut self, now: Time) -> bool {
        if self.in_recovery || self.rto_loss || self.sb.lost_bytes() == 0 {
            return false;
        }
        let prior_cwnd = self.cc.cwnd();
        self.rack_reduce(now);
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.tlp.end = None;
        self.tlp.deadline = None;
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
        let Some(end) = self.tlp.end else { return };
        if self.snd_una < end && una_advanced {
            return;
        }
        self.tlp.end = None;
        if self.tlp.retrans && una_advanced && self.snd_una >= end {
            self.rack_reduce(now);
            let ssthresh = self.ssthresh_bytes();
            self.cc.on_recovery_exit(now, ssthresh);
        }
    }

    /// Arms (or disarms) the probe timeout after an ACK or a new segment.
    fn rack_arm_tlp(&mut self, now: Time) {
        self.tlp.deadline = None;
        if self.in_recovery || self.rto_loss || self.tlp.end.is_some() || self.snd_una >= self.snd_max || self.handshake != Handshake::Established {
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
        self.tlp.deadline = Some(self.rto_deadline.map_or(at, |rto| rto.min(at)));
    }

    /// The timers of RACK-TLP due at `now`. Returns true when the probe fired (it takes the
    /// place of a retransmission timeout due at the same time, which is re-armed).
    pub(super) fn rack_on_timer(&mut self, now: Time) -> bool {
        if self.rack.reo_deadline().is_some_and(|t| t <= now) {
            self.rack_detect(now);
            if self.rack_maybe_enter_recovery(now) && self.cfg.recovery == Recovery::Linux {
                // Linux `tcp_rack_reo_timeout`: one segment's worth of delivery for PRR.
                self.prr_on_ack(self.mss(), self.rack_pipe(), false, true);
            }
        }
        if self.tlp.deadline.is_some_and(|t| t <= now) {
            self.tlp.deadline = None;
            if !self.in_recovery && !self.rto_loss && self.snd_una < self.snd_max {
                self.tlp.fire = true;
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
            let top = self.sb.top_unsacked_end(self.snd_max);
            if top <= self.snd_una {
                return None;
            }
            let seq = self.seq_of(self.idx(top - 1));
            self.emit(now, seq, true)
        };
        self.tlp.end = Some(self.snd_max);
        self.tlp.retrans = seg.retransmit;
        self.stats.tlp_probes += 1;
        self.arm_timer(now);
        Some(seg)
    }

    /// A retransmission timeout under RACK-TLP: every unSACKed outstanding segment is lost.
    pub(super) fn rack_on_timeout(&mut self) {
        let span = self.span();
        self.sb.mark_all_lost(span);
        self.rack.on_timeout();
        self.tlp.end = None;
        self.tlp.deadline = None;
        self.tlp.fire = false;
    }
}
