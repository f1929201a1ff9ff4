//! Proportional Rate Reduction: RFC 6937 for `Recovery::Prr` and Linux's `tcp_cwnd_reduction`
//! for `Recovery::Linux`.
//!
//! On every ACK of a recovery episode that delivers data, cwnd becomes `pipe + sndcnt`: while
//! `pipe` is above ssthresh, `sndcnt` spreads the reduction over the episode in proportion to the
//! data delivered (`ceil(prr_delivered · ssthresh / RecoverFS) − prr_out`); once `pipe` has fallen
//! to ssthresh, the reduction bound lets it climb back, by no more than was delivered (PRR-CRB) or
//! by one segment more per ACK (PRR-SSRB). Every transmission of the episode counts in `prr_out`.
//!
//! The two flavours differ where Linux departs from RFC 6937: `RecoverFS` is cwnd at the start of
//! the episode (Linux `prior_cwnd`) rather than FlightSize; the extra segment of the slow-start
//! bound is given only on ACKs that advance SND.UNA and mark nothing newly lost (Linux's
//! `FLAG_SND_UNA_ADVANCED && !newly_lost`); and at least one segment may leave until the episode
//! has sent something (Linux forces the fast retransmit that way). RFC 6937's fast retransmit is
//! the RFC 6675 entry retransmission, which the sender sends unconditionally and which counts in
//! `prr_out` from the moment it is queued.

//!
//! `PrrBound::SafeAck` is RFC 9937's choice of bound on RFC 6675's scoreboard: Linux's limit, where
//! "newly lost" means the ACK moved RFC 6675's lost bound over an unSACKed segment.

use super::{PrrBound, Recovery, Sender};

/// PRR's per-episode counters, in bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Prr {
    /// `prr_delivered`: data delivered to the receiver during the episode.
    pub(super) delivered: u64,
    /// `prr_out`: data sent during the episode, retransmissions included.
    pub(super) out: u64,
    /// `RecoverFS`.
    pub(super) recover_fs: u64,
}

impl Sender {
    /// A recovery episode starts; `recover_fs` is RFC 6937's FlightSize or Linux's prior cwnd.
    pub(super) fn prr_enter(&mut self, recover_fs: u64) {
        self.prr = Prr { delivered: 0, out: 0, recover_fs: recover_fs.max(1) };
    }

    /// An ACK (or Linux's reordering timer) delivered `delivered` bytes during the episode, with
    /// `pipe` already recomputed: sets cwnd to `pipe + sndcnt`. `una_advanced` and `newly_lost`
    /// are for Linux's slow-start bound. An ACK that delivers nothing leaves cwnd as it is (as
    /// Linux and ns-3 do).
    pub(super) fn prr_on_ack(&mut self, delivered: u64, pipe: u64, una_advanced: bool, newly_lost: bool) {
        if delivered == 0 {
            return;
        }
        let mss = self.mss() as i64;
        let ssthresh = self.ssthresh_bytes().floor() as i64;
        // The entry retransmission waits in `rtx_pending` but is already committed.
        let pending = self.rtx_pending.map_or(0, |seq| self.seg_len(seq) as u64);
        self.prr.delivered += delivered;
        let (prr_delivered, out, pipe_i) = (self.prr.delivered as i64, (self.prr.out + pending) as i64, pipe as i64);
        let sndcnt = if pipe_i > ssthresh {
            // Proportional part: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out.
            let num = self.prr.delivered as u128 * ssthresh.max(0) as u128;
            num.div_ceil(self.prr.recover_fs as u128) as i64 - out
        } else {
            let limit = match self.cfg.recovery {
                Recovery::Prr(PrrBound::Conservative) => prr_delivered - out,
                Recovery::Linux | Recovery::Prr(PrrBound::SafeAck) => {
                    (prr_delivered - out).max(delivered as i64) + if una_advanced && !newly_lost { mss } else { 0 }
                }
                _ => (prr_delivered - out).max(delivered as i64) + mss,
            };
            (ssthresh - pipe_i).min(limit)
        };
        let floor = if self.cfg.recovery == Recovery::Linux && out == 0 { mss } else { 0 };
        self.cc.set_recovery_cwnd((pipe_i + sndcnt.max(floor)) as f64);
    }
}
