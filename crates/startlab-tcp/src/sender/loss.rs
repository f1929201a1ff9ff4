//! Loss events: fast retransmit on duplicate ACKs (entering each recovery), leaving recovery, and
//! the retransmission timeout.

use super::*;

impl Sender {
    pub(super) fn exit_recovery(&mut self, now: Time, cwnd: f64) {
        self.in_recovery = false;
        self.partial_acks = 0;
        self.pipe = 0;
        self.ns3.end_episode();
        self.cc.on_recovery_exit(now, cwnd);
    }

    pub(super) fn on_dupack(&mut self, now: Time) {
        self.dupacks += 1;
        if self.in_recovery {
            // Reno and NewReno inflate by one SMSS per further duplicate ACK (RFC 5681 §3.2 step 4).
            if matches!(self.cfg.recovery, Recovery::Reno | Recovery::NewReno) {
                self.cc.set_recovery_cwnd(self.cc.cwnd() + self.mss() as f64);
            }
            if self.cfg.recovery == Recovery::Sack1 {
                self.sack1.on_dupack(self.mss());
            }
            return;
        }
        if self.cfg.recovery.rack() {
            // RACK decides from send times, not from counting duplicate ACKs.
            return;
        }
        let sack_says_lost = self.cfg.recovery.rfc6675() && self.first_is_lost();
        if self.dupacks < self.cfg.dupthresh && !sack_says_lost {
            return;
        }
        // Guard against reacting twice to one window of losses: Tahoe and NewReno use `recover`
        // (RFC 6582: the ACK must cover more than recover), SACK its RecoveryPoint (RFC 6675).
        let allowed = match self.cfg.recovery {
            Recovery::Reno => self.dupacks == self.cfg.dupthresh || sack_says_lost,
            Recovery::Tahoe | Recovery::NewReno => {
                self.dupacks == self.cfg.dupthresh && self.recover.is_none_or(|r| self.snd_una > r)
            }
            Recovery::Sack | Recovery::Prr(_) | Recovery::Ns3Prr => self.recover.is_none_or(|r| self.snd_una >= r),
            Recovery::Sack1 => self.dupacks == self.cfg.dupthresh && self.recover.is_none_or(|r| self.snd_una >= r),
            Recovery::RackTlp | Recovery::Linux => unreachable!("RACK enters recovery on its own"),
        };
        if !allowed {
            return;
        }
        self.stats.fast_retransmits += 1;
        let flight = match self.cfg.recovery {
            Recovery::Ns3Prr => self.ns3_bytes_in_flight(),
            _ => (self.snd_nxt - self.snd_una).saturating_sub(self.lt_sent),
        };
        let tahoe = self.cfg.recovery == Recovery::Tahoe;
        self.cc.on_congestion(&CongestionEvent {
            now,
            kind: CongestionKind::FastRetransmit,
            flight_size: flight,
            enter_recovery: !tahoe,
        });
        self.recover = Some(self.snd_max);
        match self.cfg.recovery {
            Recovery::Tahoe => {
                // Go back to SND.UNA and slow-start again (ALGORITHMS.md §2.2).
                self.snd_nxt = self.snd_una;
                self.rto_loss = true;
            }
            Recovery::Reno | Recovery::NewReno => {
                self.in_recovery = true;
                self.rtx_pending = Some(self.snd_una);
                let inflated = self.ssthresh_bytes() + 3.0 * self.mss() as f64;
                self.cc.set_recovery_cwnd(inflated);
            }
            Recovery::Sack | Recovery::Prr(_) | Recovery::Ns3Prr => {
                self.in_recovery = true;
                self.rescue_rxt = None;
                self.high_rxt = self.snd_una;
                self.sb.new_episode();
                // RFC 6675 §5 step 4.2: retransmit the first segment, not a NextSeg() choice.
                self.rtx_pending = Some(self.snd_una);
                self.mark_retransmitted_in_episode(0);
                self.high_rxt = self.snd_una + self.seg_len(self.snd_una) as u64;
                if self.cfg.recovery == Recovery::Ns3Prr {
                    self.prr = prr::Prr::enter(flight);
                } else {
                    // RFC 6937: RecoverFS = snd.nxt - snd.una.
                    self.prr = prr::Prr::enter(self.snd_nxt - self.snd_una);
                }
            }
            Recovery::Sack1 => self.sack1_enter(),
            Recovery::RackTlp | Recovery::Linux => unreachable!("RACK enters recovery on its own"),
        }
    }

    /// The retransmission timer fired at `now` (the driver calls this at `next_timeout()`).
    pub fn on_timer(&mut self, now: Time) {
        // The pacer releases the sender; the driver polls for segments next.
        self.pacer.on_timer(now);
        if self.cfg.recovery.rack() && self.rack_on_timer(now) {
            // The loss probe took the place of the timeout (the driver polls for it next).
            self.account_recovery(now);
            return;
        }
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => {
                self.account_recovery(now);
                return;
            }
        }
        self.rto_deadline = None;
        if let Handshake::SynSent { at, .. } = self.handshake {
            self.stats.syn_retransmits += 1;
            self.rtt.back_off();
            let _ = at;
            self.handshake = Handshake::Closed; // poll_transmit resends the SYN
            self.syn_retransmitted = true;
            return;
        }
        if self.snd_una >= self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        let flight = match self.cfg.recovery {
            Recovery::RackTlp | Recovery::Linux => self.rack_flight_size(),
            // ns-3's ReTxTimeout halves BytesInFlight() (its pipe), also during recovery.
            Recovery::Ns3Prr => self.lost_and_pipe().1,
            _ => self.snd_nxt - self.snd_una,
        };
        if self.timeout_streak == 0 {
            // First expiry of the episode sets ssthresh from FlightSize (ALGORITHMS.md §2.5).
            self.cc.on_congestion(&CongestionEvent {
                now,
                kind: CongestionKind::Timeout,
                flight_size: flight,
                enter_recovery: false,
            });
        } else {
            self.cc.on_repeated_timeout();
        }
        self.timeout_streak += 1;
        self.rtt.back_off();
        // RFC 6675 §5.1 / RFC 6582: end any recovery episode; no new one before SND.UNA passes
        // everything sent so far. SACK marks are kept (ALGORITHMS.md §2.6 lab choice).
        self.in_recovery = false;
        self.partial_acks = 0;
        self.ns3.end_episode();
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        self.lt_sent = 0;
        self.pipe = 0;
        self.rtx_pending = None;
        match self.cfg.recovery {
            // Every unSACKed segment is lost and goes out again from the lowest.
            Recovery::RackTlp | Recovery::Linux => self.rack_on_timeout(),
            Recovery::Sack1 => {
                self.sack1_on_timeout();
                self.snd_nxt = self.snd_una;
            }
            _ => self.snd_nxt = self.snd_una,
        }
        self.high_rxt = self.snd_una;
        self.sb.new_episode();
        self.rto_loss = true;
        self.arm_timer(now);
        self.account_recovery(now);
    }
}
