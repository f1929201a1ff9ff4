//! ns-3 3.44's SACK loss recovery with its default `TcpPrrRecovery` (`Recovery::Ns3Prr`), as that
//! release runs it, so that a startlab run can be set beside an ns-3 one and differ only where
//! the paths differ. startlab's `Recovery::Prr` is RFC 6937 on RFC 6675; ns-3 3.44 departs from
//! both in ways that its later development fixed (ns-3-dev, 2026; no release had them at the time
//! of writing), and this variant keeps each of them:
//!
//! - **pipe keeps SACKed retransmissions** (ns-3 issue #1190, fixed by ns-3-dev 380573ef1):
//!   `TcpTxBuffer` counts a retransmitted segment in `BytesInFlight()` until the cumulative ACK
//!   covers it, even once it is SACKed. After a loss burst whose first retransmissions are lost
//!   again, the cumulative ACK stalls and the SACKed retransmissions fill `pipe`: the sender stays
//!   far below cwnd until the timeout.
//! - **32-bit PRR arithmetic** (#1282, fixed by 25f76649d): `prr_delivered · ssthresh` is a
//!   32-bit product, which wraps once the two exceed 4 GiB (from a few segments on with a window
//!   of a few MB), and `prr_delivered − prr_out` is an unsigned difference, which wraps to a
//!   negative limit when more was sent than delivered.
//! - **one segment more per duplicate ACK** (#1350, fixed by 05c9099bb): an ACK with new SACK
//!   information adds one SMSS to `prr_delivered` on top of the SACKed bytes while
//!   `prr_delivered < RecoverFS`; a partial ACK with new SACK information is counted twice.
//! - **RecoverFS is pipe** (#1351, fixed by 6523c1aad): at the start of the episode, after the
//!   first segment is marked lost, instead of FlightSize.
//!
//! and ns-3's own choices: the slow-start bound's extra segment only on an ACK that cumulatively
//! acknowledges retransmitted data (otherwise PRR-CRB on `max(prr_delivered − prr_out,
//! DeliveredData)`); one segment forced out while `prr_out` is 0; on a partial ACK, unless the
//! new first segment is an outstanding retransmission, one retransmission outside the window (the
//! lowest lost segment not yet retransmitted, or else the first segment again); no rescue
//! retransmission (RFC 6675 rule 4). Not modelled: ns-3 keeps the retransmitted mark across
//! recovery episodes until a timeout (here it is per episode, which differs only when an episode
//! starts with retransmissions of the previous one outstanding).
//!
//! **Transport.** [`Ns3State::do_recovery`] is ns-3's PRR arithmetic over byte counts and
//! [`Prr`]'s counters, like RFC 6937's in `prr.rs`; the rest (the partial-ACK retransmission,
//! `BytesInFlight()`) is ns-3's TCP and reads the scoreboard.

use super::prr::Prr;
use super::{Recovery, Sender};

/// ns-3's per-ACK and per-episode flags beside PRR's counters (`Recovery::Ns3Prr`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ns3State {
    /// The ACK being processed cumulatively acknowledged a segment retransmitted in this episode
    /// and not SACKed before (ns-3's `m_isRetransDataAcked`).
    rtx_acked: bool,
    /// The ACK being processed is a partial ACK of the episode.
    partial_ack: bool,
    /// A partial ACK lets one segment of new data out whatever the window.
    forced_new: bool,
}

impl Ns3State {
    /// An ACK arrives: its flags start clear.
    pub(super) fn begin_ack(&mut self) {
        self.rtx_acked = false;
        self.partial_ack = false;
    }

    /// The ACK cumulatively acknowledges a segment retransmitted in the episode, unSACKed before.
    pub(super) fn on_rtx_acked(&mut self) {
        self.rtx_acked = true;
    }

    /// The ACK is a partial ACK of the episode.
    pub(super) fn on_partial_ack(&mut self) {
        self.partial_ack = true;
    }

    /// The episode ends (or a timeout): no forced segment is owed.
    pub(super) fn end_episode(&mut self) {
        self.forced_new = false;
    }

    /// One segment of new data is owed, taken.
    pub(super) fn take_forced_new(&mut self) -> bool {
        std::mem::take(&mut self.forced_new)
    }

    /// `TcpPrrRecovery::DoRecovery` of ns-3 3.44, with its 32-bit arithmetic: the new cwnd in
    /// bytes, or `None` when nothing counts as delivered. `pipe`, `ssthresh` and `mss` in bytes.
    pub(super) fn do_recovery(&self, prr: &mut Prr, delivered: u64, dupack: bool, pipe: u64, ssthresh: u32, mss: u32) -> Option<f64> {
        let mut delivered = delivered as u32;
        if dupack && (prr.delivered as u32) < prr.recover_fs as u32 {
            delivered = delivered.wrapping_add(mss);
        }
        if delivered == 0 {
            return None;
        }
        prr.delivered = (prr.delivered as u32).wrapping_add(delivered) as u64;
        let (prr_delivered, prr_out, recover_fs) = (prr.delivered as u32, prr.out as u32, prr.recover_fs as u32);
        let pipe = pipe as u32;
        let send_count: i32 = if pipe > ssthresh {
            // ceil(m_prrDelivered * m_ssThresh * 1.0 / m_recoveryFlightSize) - m_prrOut, the
            // product in 32 bits; the double is converted to int when assigned.
            let quotient = (prr_delivered.wrapping_mul(ssthresh) as f64 / recover_fs as f64).ceil() - prr_out as f64;
            quotient as i32
        } else {
            // int limit = std::max(m_prrDelivered - m_prrOut, deliveredBytes): unsigned.
            let mut limit = prr_delivered.wrapping_sub(prr_out).max(delivered) as i32;
            if self.rtx_acked {
                limit = limit.wrapping_add(mss as i32);
            }
            limit.min(ssthresh.wrapping_sub(pipe) as i32)
        };
        let send_count = send_count.max(if prr_out > 0 { 0 } else { mss as i32 });
        Some(pipe.wrapping_add(send_count as u32) as f64)
    }
}

impl Sender {
    /// ns-3's `BytesInFlight()` as `TcpSocketBase::EnterRecovery` reads it, before the entry
    /// retransmission: `pipe` with the first segment counted as lost. It is both what ns-3's
    /// congestion control halves (`GetSsThresh(tcb, bytesInFlight)`: NewReno's FlightSize/2 is
    /// half of this, not of SND.NXT − SND.UNA) and `TcpPrrRecovery`'s RecoverFS (#1351).
    pub(super) fn ns3_bytes_in_flight(&self) -> u64 {
        debug_assert_eq!(self.cfg.recovery, Recovery::Ns3Prr);
        let (lost_below, pipe) = self.lost_and_pipe();
        let head = self.seg_len(self.snd_una) as u64;
        // The head is in pipe unless it is already below the lost bound.
        let counted = if lost_below > self.snd_una { 0 } else { head };
        pipe.saturating_sub(counted)
    }

    /// An ACK of the episode (after `recompute_lost_and_pipe`), in ns-3's order: the duplicate-ACK
    /// path when it brought new SACK information (or started the episode), then the partial-ACK
    /// path, then the partial ACK's retransmission.
    pub(super) fn ns3_on_ack(&mut self, delivered: u64, newly_sacked: bool, started_here: bool) {
        let mss = self.mss();
        if newly_sacked || started_here {
            self.ns3_do_recovery(delivered, true);
        }
        if self.ns3.partial_ack && !started_here {
            if delivered >= mss {
                self.ns3_do_recovery(delivered, false);
            }
            self.ns3_partial_retransmit();
        }
    }

    /// ns-3's PRR step: cwnd from [`Ns3State::do_recovery`].
    fn ns3_do_recovery(&mut self, delivered: u64, dupack: bool) {
        let (ssthresh, mss) = (self.ssthresh_bytes().floor() as u32, self.mss() as u32);
        if let Some(cwnd) = self.ns3.do_recovery(&mut self.prr, delivered, dupack, self.pipe, ssthresh, mss) {
            self.cc.set_recovery_cwnd(cwnd);
        }
    }

    /// ns-3's `DoRetransmit()` on a partial ACK: unless the new first segment is a retransmission
    /// still outstanding, one segment goes out whatever the window: NextSeg() without rule 3,
    /// i.e. the lowest lost segment not retransmitted in the episode, or else new data, or else
    /// the first segment again.
    fn ns3_partial_retransmit(&mut self) {
        if self.snd_una >= self.snd_max || self.sb.rtx_in_episode(0) {
            return;
        }
        let lost = self.next_seg_candidate().filter(|&seq| seq < self.sb.lost_below());
        if lost.is_none() && self.sack_new_data_ok() {
            self.ns3.forced_new = true;
            return;
        }
        let seq = lost.unwrap_or(self.snd_una);
        let i = self.idx(seq);
        let len = self.seg_len(seq) as u64;
        self.rtx_pending = Some(seq);
        if !self.sb.rtx_in_episode(i) {
            self.mark_retransmitted_in_episode(i);
            self.pipe += len;
        }
        self.high_rxt = self.high_rxt.max(seq + len);
    }
}
