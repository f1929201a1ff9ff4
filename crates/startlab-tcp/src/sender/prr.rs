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
//!
//! **Transport.** [`Prr`] holds only byte counts and its arithmetic takes only byte counts: the
//! data an ACK delivered, the data in flight after it (`pipe`), ssthresh, the segment size, and
//! whether the ACK was "safe". It never reads a sequence number, so a packet-number transport
//! (QUIC, RFC 9002) drives it the same way: `enter` with its bytes in flight when a loss starts the
//! congestion recovery period, `on_send` for every packet sent in the period, `on_ack` with the
//! bytes of the newly acknowledged packets, `bytes_in_flight` after the packets newly declared
//! lost are removed, and `safe_ack` when the ACK acknowledged new packets and declared none lost.
//! The caller applies the window it returns.


use super::{PrrBound, Recovery, Sender};

/// PRR's per-episode counters, in bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    /// `prr_delivered`: data delivered to the receiver during the episode.
    pub delivered: u64,
    /// `prr_out`: data sent during the episode, retransmissions included.
    pub out: u64,
    /// `RecoverFS`.
    pub recover_fs: u64,
}

/// The flavour of PRR: RFC 6937 with one of its reduction bounds, or Linux's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrRule {
    /// RFC 6937 (RFC 9937 for `PrrBound::SafeAck`).
    Rfc(PrrBound),
    /// Linux `tcp_cwnd_reduction`: `SafeAck`'s bound, and at least one segment may leave until
    /// the episode has sent something.
    Linux,
}

impl Prr {
    /// A recovery episode starts; `recover_fs` is RFC 6937's FlightSize or Linux's prior cwnd.
    pub fn enter(recover_fs: u64) -> Prr {
        Prr { delivered: 0, out: 0, recover_fs: recover_fs.max(1) }
    }

    /// `bytes` were sent during the episode.
    pub fn on_send(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// An ACK (or Linux's reordering timer) delivered `delivered` bytes during the episode, with
    /// `pipe` the data in flight after it: the new cwnd `pipe + sndcnt` in bytes. `ssthresh` and
    /// `mss` in whole bytes; `committed` are bytes already chosen to go out but not yet sent (they
    /// count in `prr_out`); `safe_ack` is Linux's and RFC 9937's condition for the slow-start
    /// bound's extra segment. An ACK that delivers nothing leaves cwnd as it is (`None`), as
    /// Linux and ns-3 do.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(&mut self, rule: PrrRule, delivered: u64, pipe: u64, ssthresh: i64, mss: i64, committed: u64, safe_ack: bool) -> Option<i64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let (prr_delivered, out, pipe_i) = (self.delivered as i64, (self.out + committed) as i64, pipe as i64);
        let sndcnt = if pipe_i > ssthresh {
            // Proportional part: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out.
            let num = self.delivered as u128 * ssthresh.max(0) as u128;
            num.div_ceil(self.recover_fs as u128) as i64 - out
        } else {
            let limit = match rule {
                PrrRule::Rfc(PrrBound::Conservative) => prr_delivered - out,
                PrrRule::Linux | PrrRule::Rfc(PrrBound::SafeAck) => (prr_delivered - out).max(delivered as i64) + if safe_ack { mss } else { 0 },
                PrrRule::Rfc(PrrBound::SlowStart) => (prr_delivered - out).max(delivered as i64) + mss,
            };
            (ssthresh - pipe_i).min(limit)
        };
        let floor = if rule == PrrRule::Linux && out == 0 { mss } else { 0 };
        Some(pipe_i + sndcnt.max(floor))
    }
}

impl Sender {
    /// PRR's flavour for the sender's recovery variant.
    fn prr_rule(&self) -> PrrRule {
        match self.cfg.recovery {
            Recovery::Prr(bound) => PrrRule::Rfc(bound),
            Recovery::Linux => PrrRule::Linux,
            other => unreachable!("{other:?} runs no PRR of its own"),
        }
    }

    /// PRR's part of an ACK (or of Linux's reordering timer), with `pipe` already recomputed:
    /// sets cwnd to `pipe + sndcnt`. `una_advanced` and `newly_lost` make the ACK "safe" for the
    /// slow-start bound.
    pub fn prr_on_ack(&mut self, delivered: u64, pipe: u64, una_advanced: bool, newly_lost: bool) {
        if delivered == 0 {
            return;
        }
        let ssthresh = self.ssthresh_bytes().floor() as i64;
        // The entry retransmission waits in `rtx_pending` but is already committed.
        let pending = self.rtx_pending.map_or(0, |seq| self.seg_len(seq) as u64);
        let rule = self.prr_rule();
        if let Some(cwnd) = self.prr.on_ack(rule, delivered, pipe, ssthresh, self.mss() as i64, pending, una_advanced && !newly_lost) {
            self.cc.set_recovery_cwnd(cwnd as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte counts only, as a QUIC sender would pass them: 10 000 bytes in flight at the loss,
    /// ssthresh 5 000. While `pipe` is above ssthresh, cwnd follows the proportional part; once
    /// it has fallen to ssthresh, the slow-start bound lets it climb by one segment more than
    /// delivered.
    #[test]
    fn byte_counts_of_a_packet_transport() {
        let mut prr = Prr::enter(10_000);
        let rule = PrrRule::Rfc(PrrBound::SlowStart);
        // 1 000 delivered, 8 000 in flight: ceil(1 000 · 5 000 / 10 000) − 0 = 500.
        assert_eq!(prr.on_ack(rule, 1_000, 8_000, 5_000, 1_000, 0, true), Some(8_500));
        prr.on_send(500);
        // Nothing delivered: cwnd stays.
        assert_eq!(prr.on_ack(rule, 0, 8_000, 5_000, 1_000, 0, true), None);
        // 1 000 more delivered, 4 000 in flight: min(5 000 − 4 000, max(2 000 − 500, 1 000) + 1 000).
        assert_eq!(prr.on_ack(rule, 1_000, 4_000, 5_000, 1_000, 0, true), Some(5_000));
    }
}
