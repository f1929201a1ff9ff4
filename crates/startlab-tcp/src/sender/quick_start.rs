//! TCP Quick-Start (RFC 4782) on the sender: which segment carries the Rate Request, and when its
//! echo is judged. The checks of the echo are [`QsRequest::validate`]; the window a verdict grants
//! is the controller's (`startlab-cc`'s Quick-Start startup). The request rides on the SYN, or
//! without a handshake (or with a response-size threshold) on the first data segment of the
//! response; a response that restarts the startup after idle carries a new one on its first
//! segment. A packet-number transport would carry the request in its first packet and judge the
//! echo on the ACK of that packet number; only [`QuickStartState::due`] reads a TCP [`Ack`].

use super::*;

/// Quick-Start's request state.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QuickStartState {
    /// The request has been put on a segment.
    sent: bool,
    /// The request sent, until its echo (or its absence) is judged.
    awaiting: Option<QsRequest>,
    /// The segment that carries the request: 0, or the first byte of a response that restarted
    /// the startup after idle.
    seq: u64,
    /// The pending request belongs to such a restart.
    restart: bool,
}

impl QuickStartState {
    /// A response starting at `seq` restarts the startup after idle: a new request rides on its
    /// first segment.
    pub(super) fn restart_at(&mut self, seq: u64) {
        self.sent = false;
        self.seq = seq;
        self.restart = true;
    }

    /// The pending request belongs to a restart after idle.
    pub(super) fn is_restart(&self) -> bool {
        self.restart
    }

    /// The first byte of the segment that carries the request.
    pub(super) fn carrier(&self) -> u64 {
        self.seq
    }

    /// `request` for the first transmission of the segment that carries it (none on a
    /// retransmission or once sent). `first_too_small`: the first response is too small for
    /// Quick-Start (Scharf's "QS 3"), so the first request is never sent.
    pub(super) fn take(&mut self, retransmit: bool, first_too_small: bool, request: Option<QsRequest>) -> Option<QsRequest> {
        if retransmit || self.sent {
            return None;
        }
        if !self.restart && first_too_small {
            self.sent = true;
            return None;
        }
        self.sent = true;
        self.awaiting = request;
        self.awaiting
    }

    /// The request awaiting its verdict, taken (the SYN-ACK's echo is judged now).
    pub(super) fn take_awaiting(&mut self) -> Option<QsRequest> {
        self.awaiting.take()
    }

    /// The request awaiting its verdict, taken if `ack` settles it: it carries the echo, or it
    /// covers the carrying segment without one (the request never arrived). Without a handshake
    /// the echo comes with the ACK of the first data segment.
    pub(super) fn due(&mut self, ack: &Ack) -> Option<QsRequest> {
        if self.awaiting.is_some() && (ack.qs.is_some() || ack.ack > self.seq) {
            self.awaiting.take()
        } else {
            None
        }
    }
}

impl Sender {
    /// The Quick-Start request for the first transmission of the segment that carries it.
    pub(super) fn take_quick_start(&mut self, retransmit: bool) -> Option<QsRequest> {
        let first_too_small = self.cfg.app_limited && self.cfg.startup_min_response > 0 && self.app_limit <= self.cfg.startup_min_response;
        self.qs.take(retransmit, first_too_small, self.cfg.quick_start)
    }

    /// Judges the Quick-Start echo and hands the verdict to the controller.
    pub(super) fn quick_start_verdict(&mut self, req: QsRequest, ack: &Ack, rtt: Option<Dur>) {
        let outcome = if rtt.is_some() { req.validate(ack.qs.as_ref()) } else { startlab_cc::startup::QsOutcome::NoReport };
        self.cc.on_quick_start(QuickStartEvent {
            outcome,
            rtt,
            queued: if self.qs.is_restart() { Some(self.data_end().saturating_sub(self.snd_max)) } else { self.cfg.size.map(|s| s.saturating_sub(self.snd_max)) },
            snd_max: self.snd_max,
            flight_size: self.snd_nxt - self.snd_una,
            in_startup: true,
        });
    }
}
