//! Transmission: what the sender puts on the wire next (the handshake's SYN, a pending
//! retransmission, the variant's choice in recovery, go-back-N after a timeout, new data within
//! cwnd and the receiver window, RFC 3042 Limited Transmit), held by the pacer, and the
//! bookkeeping of every data segment sent.

use super::*;

impl Sender {
    /// The next segment to put on the wire now, if the window, the receiver window and the
    /// recovery state allow one. Call repeatedly until it returns `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        if !self.started || self.completed_at.is_some() {
            return None;
        }
        match self.handshake {
            Handshake::Closed => {
                self.handshake = Handshake::SynSent { at: now, retransmitted: self.syn_retransmitted };
                self.arm_timer(now);
                let retransmit = self.syn_retransmitted;
                // With a size threshold the request waits for the first data segment, when the
                // first response's size is known.
                let qs = if self.cfg.app_limited && self.cfg.startup_min_response > 0 { None } else { self.take_quick_start(retransmit) };
                // RFC 3168 §6.1.1: ECE and CWR ask for ECN; RFC 9768 §3.1.1: with AE, for AccECN.
                let setup = self.cfg.ecn.on();
                let ae = self.cfg.ecn == EcnMode::L4s;
                return Some(Segment { kind: SegmentKind::Syn, seq: 0, len: 0, retransmit, qs, ecn: IpEcn::NotEct, ece: setup, cwr: setup, ae });
            }
            Handshake::SynSent { .. } => return None,
            Handshake::Established => {}
        }
        if let Some(t) = self.cc.take_pacing_start() {
            self.pacer.delay_to(t);
        }
        // §0.6: "A segment may leave only if now >= next_send_time and the window allows it."
        if self.pacer.holds(now, self.pacing_rate().is_some()) {
            return None;
        }
        if self.cfg.recovery.rack() {
            return self.rack_next_segment(now);
        }
        if let Some(seq) = self.rtx_pending.take() {
            if seq >= self.snd_una && seq < self.snd_max {
                return Some(self.emit(now, seq, true));
            }
        }
        if self.in_recovery && self.cfg.recovery.rfc6675() {
            return self.sack_next_segment(now);
        }
        if self.in_recovery && self.cfg.recovery == Recovery::Sack1 {
            return self.sack1_next_segment(now);
        }
        // Go-back-N after a timeout or Tahoe: resend from snd_nxt, skipping SACKed segments.
        if self.snd_nxt < self.snd_max {
            self.snd_nxt = self.sb.sacked().next_gap(self.snd_nxt);
        }
        if self.snd_nxt >= self.data_end() {
            return None;
        }
        let seq = self.snd_nxt;
        let len = self.seg_len(seq) as u64;
        if seq >= self.snd_max && self.cc.send_limit().is_some_and(|limit| seq + len > limit) {
            // The startup plug-in holds new data (Paced Start between trains).
            return None;
        }
        let flight = self.snd_nxt - self.snd_una;
        let wnd = (self.window_bytes() as u64).min(self.rwnd);
        let rwnd_ok = flight + len <= self.rwnd;
        if flight + len <= wnd {
            return Some(self.emit(now, seq, seq < self.snd_max));
        }
        // RFC 3042: one new segment per duplicate ACK (the first two), FlightSize <= cwnd + 2*SMSS.
        let lt_allow = self.dupacks.min(2) as u64 * self.mss();
        if self.cfg.limited_transmit
            && !self.in_recovery
            && self.dupacks > 0
            && seq == self.snd_max
            && rwnd_ok
            && flight + len <= self.window_bytes() as u64 + lt_allow
        {
            self.lt_sent += len;
            return Some(self.emit(now, seq, false));
        }
        None
    }

    pub(super) fn emit(&mut self, now: Time, seq: u64, retransmit: bool) -> Segment {
        let len = self.seg_len(seq);
        self.pacer.on_send(now, len, self.pacing_rate());
        let end = seq + len as u64;
        if end > self.snd_max {
            debug_assert_eq!(seq, self.snd_max, "new data is sent in order");
            if self.snd_una == self.snd_max {
                // Nothing in flight: the rate interval starts now, not at the last delivery.
                self.delivered_time = now;
            }
            self.sb.push(SegMeta {
                sent: now,
                tx: 1,
                sacked: false,
                rtx_episode: 0,
                delivered_at_send: self.delivered,
                delivered_time_at_send: self.delivered_time,
                lost: false,
                retrans: false,
            });
            self.snd_max = end;
            if self.first_data.is_none() {
                self.first_data = Some(now);
            }
            self.cc.on_data_sent(now, end);
        } else {
            let i = self.idx(seq);
            let (delivered, delivered_time) = (self.delivered, self.delivered_time);
            let m = self.sb.seg_mut(i);
            m.sent = now;
            m.tx = m.tx.saturating_add(1);
            m.delivered_at_send = delivered;
            m.delivered_time_at_send = delivered_time;
        }
        if seq == self.snd_nxt {
            self.snd_nxt = end;
        }
        if self.in_recovery {
            self.prr.on_send(len as u64);
        }
        if self.cfg.recovery.rack() {
            self.rack_on_send(now, seq, retransmit);
        }
        self.last_send = now;
        self.packets_sent += 1;
        if retransmit {
            self.retransmissions += 1;
            self.cc.on_retransmit(seq, len as u64);
        }
        if self.rto_deadline.is_none() {
            self.arm_timer(now);
        }
        let on_syn = self.cfg.handshake && !self.qs.is_restart() && !(self.cfg.app_limited && self.cfg.startup_min_response > 0);
        let qs = if on_syn || seq != self.qs.carrier() { None } else { self.take_quick_start(retransmit) };
        let (ecn, cwr) = self.ecn.data_marks(retransmit);
        Segment { kind: SegmentKind::Data, seq, len, retransmit, qs, ecn, ece: false, cwr, ae: false }
    }
}
