//! ECN on the sender (RFC 3168, ALGORITHMS.md §17.3): whether the connection uses it, the one
//! reduction per window of data, and the ECT and CWR marks on outgoing segments; with Accurate
//! ECN (RFC 9768), the CE-marked bytes each ACK's ECEB counter newly reports, which go to the
//! controller with the next ACK it sees and, like an ECE, start a reduction once per window. The window of
//! data is delimited by a number that grows with every transmission (`snd_max` here) and the
//! cumulative ACK point; a packet-number transport would pass its largest sent packet number and
//! its largest acknowledged one instead (RFC 9002 §7.3.2: an increase of the ECN-CE count starts
//! a recovery period unless one is in progress, as a loss does). The ECT and CWR marks are TCP's
//! (QUIC marks every packet ECT and has no CWR).

use super::*;

/// ECN state.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct EcnState {
    /// How ECN is used on this connection (asked for, and agreed or no handshake).
    mode: EcnMode,
    /// `snd_max` at the last ECN reduction: no new one before an ACK covers data sent after it.
    recover: Option<u64>,
    /// Put CWR on the next new data segment.
    cwr_pending: bool,
    /// AccECN: the ECEB counter of the newest feedback read (24 bits; `r.ceb` starts at 0, RFC
    /// 9768 §3.2.1).
    eceb: u32,
    /// AccECN: CE-marked bytes reported and not yet handed to the controller.
    ce_pending: u64,
}

/// True while the window of data that a reduction at `recover` covers is not yet acknowledged
/// (`una` at most `recover`).
fn reduced_this_window(recover: Option<u64>, una: u64) -> bool {
    recover.is_some_and(|r| una <= r)
}

impl EcnState {
    /// How ECN is used from now on.
    pub(super) fn set_mode(&mut self, mode: EcnMode) {
        self.mode = mode;
    }

    /// ECN is in use.
    pub(super) fn ok(&self) -> bool {
        self.mode.on()
    }

    /// An echo at cumulative point `una` finds a window that an earlier ECN reduction, or a loss
    /// reduction at `loss_recover`, already reduced.
    pub(super) fn absorbed(&self, una: u64, loss_recover: Option<u64>) -> bool {
        reduced_this_window(self.recover, una) || reduced_this_window(loss_recover, una)
    }

    /// The connection's ECN mode.
    pub(super) fn mode(&self) -> EcnMode {
        self.mode
    }

    /// Reads an ACK's AccECN feedback (RFC 9768 §3.2.3.1): the bytes its ECEB counter newly reports
    /// CE-marked, 0 for an ACK that a later one overtook (its counter is behind the newest read).
    /// They also wait for the controller ([`EcnState::take_ce_bytes`]).
    pub(super) fn on_accecn(&mut self, f: &AccEcnFeedback) -> u64 {
        let d = AccEcnFeedback::delta(f.eceb, self.eceb, AccEcnFeedback::BYTE_FIELD);
        if d <= 0 {
            return 0;
        }
        self.eceb = f.eceb;
        self.ce_pending += d as u64;
        d as u64
    }

    /// The CE-marked bytes reported since the controller last saw an ACK.
    pub(super) fn take_ce_bytes(&mut self) -> u64 {
        std::mem::take(&mut self.ce_pending)
    }

    /// The window was reduced with `max` the highest number sent: CWR goes on the next new data.
    pub(super) fn on_reduction(&mut self, max: u64) {
        self.recover = Some(max);
        self.cwr_pending = true;
    }

    /// The ECN field and CWR mark of a data segment. RFC 3168 §6.1.5: retransmitted segments are
    /// not ECT; CWR goes on the next new data. With AccECN there is no CWR (RFC 9768 §3.1.5: the
    /// flag is part of the ACE field, which a data sender sets only on its ACKs).
    pub(super) fn data_marks(&mut self, retransmit: bool) -> (IpEcn, bool) {
        let ecn = if retransmit { IpEcn::NotEct } else { self.mode.codepoint() };
        let cwr = self.mode == EcnMode::Classic && ecn != IpEcn::NotEct && std::mem::take(&mut self.cwr_pending);
        (ecn, cwr)
    }
}

impl Sender {
    /// An ACK carried ECE (ALGORITHMS.md §17.3, RFC 3168 §6.1.2), or AccECN feedback with newly
    /// CE-marked bytes (RFC 9768 §2.3: the sender's congestion response is its own; this is the
    /// classic one, and a scalable avoidance such as Prague sizes the reduction): reduce once per window of data,
    /// like a fast retransmit's ssthresh but with cwnd = ssthresh, no recovery, no retransmission;
    /// CWR goes on the next new data segment. A loss recovery in progress (or a window that a loss
    /// or an earlier ECE already reduced) absorbs the echo.
    pub(super) fn on_ece(&mut self, now: Time) {
        self.stats.ece_acks += 1;
        if self.in_recovery || self.ecn.absorbed(self.snd_una, self.recover) {
            return;
        }
        let before = self.cc.reductions();
        self.cc.on_congestion(&CongestionEvent {
            now,
            kind: CongestionKind::Ecn,
            flight_size: self.snd_nxt - self.snd_una,
            enter_recovery: false,
        });
        // The controller may leave the window as it is (Prague spacing its reductions); the
        // window of data still counts as answered, as Linux's CWR state does.
        self.stats.ecn_reductions += self.cc.reductions() - before;
        // NOTE: §17.3's "if cwnd is already 1 segment, wait for the retransmit timer" never
        // applies here: the controller keeps ssthresh, and so cwnd, at 2 SMSS or more.
        self.ecn.on_reduction(self.snd_max);
    }
}
