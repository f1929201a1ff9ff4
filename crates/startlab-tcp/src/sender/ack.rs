//! ACK processing: the handshake's SYN-ACK, the scoreboard and delivery counts, the cumulative
//! ACK point's advance (RTT samples under Karn's rule, the controller's growth, each variant's
//! partial and full ACKs), duplicate ACKs, and the per-ACK steps of the recovery variants, ECN
//! and Quick-Start.

use super::*;

impl Sender {
    /// An ACK arrived. Returns the bytes it newly acknowledged cumulatively.
    pub fn on_ack(&mut self, now: Time, ack: &Ack) -> u64 {
        if ack.syn_ack {
            if let Handshake::SynSent { at, retransmitted } = self.handshake {
                self.handshake = Handshake::Established;
                // RFC 3168 §6.1.1: a SYN-ACK with ECE (and not CWR) agrees to ECN; RFC 9768
                // §3.1.1: one whose ACE agrees (Table 2) to AccECN, and one with ECE alone to
                // classic ECN when AccECN was asked for.
                let accecn = ack.accecn.is_some_and(|f| AccEcnFeedback::agrees(f.ace));
                self.ecn.set_mode(match self.cfg.ecn {
                    EcnMode::L4s if accecn => EcnMode::L4s,
                    EcnMode::L4s | EcnMode::Classic if ack.ece => EcnMode::Classic,
                    _ => EcnMode::Off,
                });
                self.rto_deadline = None;
                if let Some(req) = self.qs.take_awaiting() {
                    // Karn: no RTT from a retransmitted SYN, so no Quick-Start window (T unknown).
                    self.quick_start_verdict(req, ack, (!retransmitted).then(|| now - at));
                }
                if retransmitted {
                    // RFC 6298 §5.7: a retransmitted SYN means RTO = 3 s once data flows.
                    self.rtt.raise_to(Dur::from_secs(3));
                } else {
                    self.rtt.on_sample(now - at);
                    // The startup plug-in may size and pace the first flight (Jump-Start) on
                    // the data queued now; an application-limited sender with nothing queued
                    // yet waits for its first response (a server learns the response size when
                    // the request arrives, after the handshake).
                    if !self.cfg.app_limited {
                        self.cc.on_handshake(now - at, self.cfg.size);
                    } else if self.app_limit > self.snd_max {
                        self.first_response_startup(now - at, self.app_limit - self.snd_max);
                    } else {
                        self.handshake_rtt = Some(now - at);
                    }
                }
            }
            return 0;
        }
        if self.handshake != Handshake::Established || ack.ack > self.snd_max {
            return 0;
        }
        self.rwnd = ack.rwnd;
        // RFC 9768 §3.2.3.1: the bytes the ECEB counter newly reports CE-marked.
        let ce_bytes = match ack.accecn {
            Some(f) if self.ecn.mode() == EcnMode::L4s => self.ecn.on_accecn(&f),
            _ => 0,
        };
        if ce_bytes > 0 {
            self.stats.ce_bytes += ce_bytes;
        }
        let flight_before = self.snd_nxt - self.snd_una;
        let delivered_before = self.delivered;
        let was_in_recovery = self.in_recovery;
        self.ns3.begin_ack();
        // The highest SACKed byte before this ACK (Linux `prior_fack`): a segment this ACK
        // covers cumulatively shows reordering only if it lies below what was SACKed before.
        let prior_fack = self.sb.high_sacked();
        self.update_scoreboard(now, ack);
        let newly_sacked = self.sb.sacked_pending() > 0;
        self.update_delivered_by_sack(now, ack);
        let newly_acked = ack.ack.saturating_sub(self.snd_una);
        if newly_acked > 0 {
            self.on_advance(now, ack, flight_before, prior_fack);
        } else if ack.ack == self.snd_una && self.snd_max > self.snd_una && (newly_sacked || self.cfg.recovery != Recovery::Ns3Prr) {
            // ns-3 counts an ACK as a duplicate only when it SACKs new data (RFC 6675 §2).
            self.on_dupack(now);
        }
        let delivered = self.delivered - delivered_before;
        if newly_acked == 0 && delivered > 0 && self.in_recovery && self.cc.rides_out_recovery() {
            // A startup that rides the recovery out (BBRv3) sees the ACKs that SACK new data too.
            let ev = self.ack_event(now, ack, 0, flight_before, None, None);
            self.cc.on_recovery_ack(&ev, self.sb.high_sacked());
        }
        let prr = matches!(self.cfg.recovery, Recovery::Prr(_)) && self.in_recovery;
        let ns3 = self.cfg.recovery == Recovery::Ns3Prr && self.in_recovery;
        let lost_before = self.sb.lost_below();
        if self.cfg.recovery.rfc6675() && (!self.sb.sacked().is_empty() || prr || ns3) {
            self.recompute_lost_and_pipe();
        }
        if prr {
            // Newly lost: an unSACKed segment between the old lost bound and the new one.
            let lost_below = self.sb.lost_below();
            let newly_lost = lost_below > lost_before && self.sb.sacked().next_gap(lost_before.max(self.snd_una)) < lost_below;
            self.prr_on_ack(delivered, self.pipe, newly_acked > 0, newly_lost);
        }
        if ns3 {
            self.ns3_on_ack(delivered, newly_sacked, !was_in_recovery);
        }
        if self.cfg.recovery.rack() {
            self.rack_on_ack(now, delivered, newly_acked > 0);
        }
        self.account_recovery(now);
        if (ack.ece || ce_bytes > 0) && self.ecn.ok() {
            self.on_ece(now);
        }
        // Without a handshake the echo comes with the ACK of the first data segment; an ACK that
        // covers that segment without one means the request never arrived.
        if let Some(req) = self.qs.due(ack) {
            self.quick_start_verdict(req, ack, self.rtt.srtt());
        }
        newly_acked
    }

    /// The cumulative ACK point moved to `a.ack`; `prior_fack` is the highest SACKed byte before
    /// the ACK's SACK blocks were read.
    fn on_advance(&mut self, now: Time, a: &Ack, flight_before: u64, prior_fack: u64) {
        let ack = a.ack;
        let newly = ack - self.snd_una;
        // Karn: samples only from segments sent once and not SACKed before (ALGORITHMS.md §2.5):
        // the oldest newly acked feeds the RTO estimator (Linux seq_rtt), the newest the
        // congestion controller (Linux ca_rtt).
        let acked_segs = self.idx(ack.min(self.snd_max) - 1) + 1;
        let oldest = *self.sb.seg(0);
        let newest = *self.sb.seg(acked_segs - 1);
        let valid = |m: SegMeta| m.tx == 1 && !m.sacked;
        let (rack_on, span) = (self.cfg.recovery.rack(), self.span());
        // RACK's minimum RTT is read only by RACK: without it, its state stays untouched (cold).
        if valid(oldest) {
            self.rtt.on_sample(now - oldest.sent);
            if rack_on {
                self.rack.on_rtt_sample(now - oldest.sent);
            }
        }
        let ca_rtt = valid(newest).then(|| now - newest.sent);
        if let Some(rtt) = ca_rtt.filter(|_| rack_on) {
            self.rack.on_rtt_sample(rtt);
        }
        let rack = &mut self.rack;
        let (fresh, rtx_acked) = self.sb.on_cum_ack(span, ack, acked_segs, |m, seq, len| {
            if rack_on {
                rack.on_delivered(now, m.sent, m.tx, seq + len, seq + len <= prior_fack);
            }
        });
        if rtx_acked {
            self.ns3.on_rtx_acked();
        }
        // Bytes beyond the last segment boundary (a short last segment) are covered by `newly`.
        self.delivered += fresh.min(newly);
        self.delivered_time = now;
        let rate_sample = (newest.delivered_time_at_send < now).then(|| RateSample {
            delivered: self.delivered - newest.delivered_at_send,
            interval: now - newest.delivered_time_at_send,
        });
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.high_rxt = self.high_rxt.max(ack);
        self.dupacks = 0;
        self.lt_sent = 0;
        self.timeout_streak = 0;
        let mss = self.mss() as f64;
        let mut restart_timer = true;
        if self.in_recovery {
            if self.cc.rides_out_recovery() {
                // A startup that rides the recovery out (BBRv3) sees its ACKs; the window stays
                // the recovery's. A newest segment SACKed earlier was delivered then: no sample
                // (Linux takes a sample only from data this ACK delivers).
                let rate_sample = rate_sample.filter(|_| !newest.sacked);
                let ev = self.ack_event(now, a, newly, flight_before, ca_rtt, rate_sample);
                self.cc.on_recovery_ack(&ev, self.sb.high_sacked());
            }
            match self.cfg.recovery {
                // Tahoe collapses the window instead of entering fast recovery.
                Recovery::Tahoe => debug_assert!(false, "Tahoe never enters fast recovery"),
                Recovery::Reno => self.exit_recovery(now, self.ssthresh_bytes()),
                Recovery::NewReno => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        // RFC 6582 §3.2 step 3, option 1: min(ssthresh, max(FlightSize, SMSS) + SMSS).
                        let flight = (self.snd_nxt - self.snd_una) as f64;
                        let w = self.ssthresh_bytes().min(flight.max(mss) + mss);
                        self.exit_recovery(now, w);
                    } else {
                        // Partial ACK: retransmit the next hole, deflate by the amount acked, add
                        // back one SMSS if at least one SMSS was acked.
                        self.rtx_pending = Some(self.snd_una);
                        let mut w = self.cc.cwnd() - newly as f64;
                        if newly >= self.mss() {
                            w += mss;
                        }
                        self.cc.set_recovery_cwnd(w);
                        self.partial_acks += 1;
                        restart_timer = !self.cfg.newreno_impatient || self.partial_acks == 1;
                    }
                }
                Recovery::Sack | Recovery::Prr(_) | Recovery::RackTlp | Recovery::Linux => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        self.exit_recovery(now, self.ssthresh_bytes());
                    }
                }
                Recovery::Ns3Prr => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        self.exit_recovery(now, self.ssthresh_bytes());
                    } else {
                        self.ns3.on_partial_ack();
                    }
                }
                Recovery::Sack1 => {
                    if self.recover.is_some_and(|r| ack >= r) {
                        self.exit_recovery(now, self.ssthresh_bytes());
                    } else {
                        // ns-2 Sack1: a partial ACK takes two segments out of `pipe`.
                        self.sack1.on_partial_ack(self.mss());
                    }
                }
            }
        } else {
            let ev = self.ack_event(now, a, newly, flight_before, ca_rtt, rate_sample);
            self.cc.on_ack(&ev);
        }
        if self.cfg.size.is_some_and(|s| self.snd_una >= s) {
            self.completed_at = Some(now);
            self.rto_deadline = None;
        } else if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.arm_timer(now);
        }
    }

    /// The controller's view of ACK `a`, whose cumulative point the scoreboard has just taken
    /// (SND.UNA = `a.ack`, `newly` bytes further); `flight_before` is the flight before it. Takes
    /// the CE-marked bytes reported since the last event.
    fn ack_event(&mut self, now: Time, a: &Ack, newly: u64, flight_before: u64, rtt: Option<Dur>, rate_sample: Option<RateSample>) -> AckEvent {
        let cwnd = self.cc.cwnd();
        let mss = self.mss() as f64;
        // RFC 7661 / Linux tcp_is_cwnd_limited: in slow start, growth needs the flight to have
        // used more than half the window; in avoidance, the whole window less one segment.
        let cwnd_limited = if self.cc.phase() == Phase::SlowStart {
            2.0 * flight_before as f64 > cwnd
        } else {
            flight_before as f64 + mss >= cwnd
        };
        AckEvent {
            now,
            newly_acked: newly,
            ack_seq: a.ack,
            snd_nxt: self.snd_nxt,
            rtt,
            flight_size: self.snd_nxt - self.snd_una,
            cwnd_limited,
            acked_segments: a.segments,
            timer_triggered: a.timer_triggered,
            delivered: self.delivered,
            rate_sample,
            ce_bytes: self.ecn.take_ce_bytes(),
        }
    }
}
