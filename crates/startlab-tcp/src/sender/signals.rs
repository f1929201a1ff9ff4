//! Signals from the network: ECN echoes (RFC 3168) and Quick-Start verdicts (RFC 4782).

use super::*;

impl Sender {
    /// The Quick-Start request for the first transmission of the segment that carries it.
    pub(super) fn take_quick_start(&mut self, retransmit: bool) -> Option<QsRequest> {
        if retransmit || self.qs_sent {
            return None;
        }
        if !self.qs_restart && self.cfg.app_limited && self.cfg.startup_min_response > 0 && self.app_limit <= self.cfg.startup_min_response {
            // The first response is too small for Quick-Start (Scharf's "QS 3").
            self.qs_sent = true;
            return None;
        }
        self.qs_sent = true;
        self.qs_awaiting = self.cfg.quick_start;
        self.qs_awaiting
    }

    /// Judges the Quick-Start echo and hands the verdict to the controller.
    pub(super) fn quick_start_verdict(&mut self, req: QsRequest, ack: &Ack, rtt: Option<Dur>) {
        let outcome = if rtt.is_some() { req.validate(ack.qs.as_ref()) } else { startlab_cc::startup::QsOutcome::NoReport };
        self.cc.on_quick_start(QuickStartEvent {
            outcome,
            rtt,
            queued: if self.qs_restart { Some(self.data_end().saturating_sub(self.snd_max)) } else { self.cfg.size.map(|s| s.saturating_sub(self.snd_max)) },
            snd_max: self.snd_max,
            flight_size: self.snd_nxt - self.snd_una,
            in_startup: true,
        });
    }

    /// An ACK carried ECE (ALGORITHMS.md §17.3, RFC 3168 §6.1.2): reduce once per window of data,
    /// like a fast retransmit's ssthresh but with cwnd = ssthresh, no recovery, no retransmission;
    /// CWR goes on the next new data segment. A loss recovery in progress (or a window that a loss
    /// or an earlier ECE already reduced) absorbs the echo.
    pub(super) fn on_ece(&mut self, now: Time) {
        self.stats.ece_acks += 1;
        let reduced_this_window = |r: Option<u64>, una: u64| r.is_some_and(|r| una <= r);
        if self.in_recovery || reduced_this_window(self.ecn_recover, self.snd_una) || reduced_this_window(self.recover, self.snd_una) {
            return;
        }
        self.stats.ecn_reductions += 1;
        self.cc.on_congestion(&CongestionEvent {
            now,
            kind: CongestionKind::Ecn,
            flight_size: self.snd_nxt - self.snd_una,
            enter_recovery: false,
        });
        // NOTE: §17.3's "if cwnd is already 1 segment, wait for the retransmit timer" never
        // applies here: the controller keeps ssthresh, and so cwnd, at 2 SMSS or more.
        self.ecn_recover = Some(self.snd_max);
        self.cwr_pending = true;
    }
}
