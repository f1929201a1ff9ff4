//! The loss-recovery variants a sender runs (`tcp.recovery`) and PRR's reduction bound.

/// Loss-recovery variant (ALGORITHMS.md §2; docs/algorithms/recovery.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment (go-back-N).
    Tahoe,
    /// Fast retransmit and fast recovery with window inflation; leaves recovery on the first ACK
    /// that advances.
    Reno,
    /// RFC 6582: stays in recovery until the ACK covers `recover`, one hole per partial ACK.
    NewReno,
    /// RFC 6675: scoreboard, `pipe`, `NextSeg()`; cwnd = ssthresh for the whole episode.
    Sack,
    /// RFC 6675 loss detection and `NextSeg()`, with RFC 6937 Proportional Rate Reduction setting
    /// cwnd on every ACK of the episode.
    Prr(PrrBound),
    /// RFC 8985 RACK-TLP: time-based loss detection (lost retransmissions included), the
    /// reordering window and the tail loss probe; cwnd = ssthresh for the episode (as RFC 6675).
    RackTlp,
    /// Linux's defaults (since 4.18): RACK-TLP with Linux's PRR (`tcp_cwnd_reduction`).
    Linux,
    /// ns-2's `Agent/TCP/Sack1`: halve on the third duplicate ACK, a `pipe` counter set at entry
    /// and decreased per ACK, every hole retransmitted in order, SACK state dropped on a timeout.
    Sack1,
    /// ns-3 3.44's SACK recovery with `TcpPrrRecovery` (its default), as that release runs it:
    /// RFC 6675's detection and NextSeg() without the rescue retransmission, a `pipe` that keeps
    /// a retransmitted segment after it is SACKed (ns-3 issue #1190), and ns-3's PRR. See
    /// `sender/ns3.rs`.
    Ns3Prr,
}

/// RFC 6937's reduction bound, used once `pipe` has fallen to ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrBound {
    /// PRR-SSRB: at most one segment more than delivered per ACK (slow start's pace).
    SlowStart,
    /// PRR-CRB: never more than delivered (packet conservation).
    Conservative,
    /// RFC 9937: PRR-SSRB on an ACK that advances SND.UNA and marks nothing newly lost (a "safe"
    /// ACK), else `max(prr_delivered - prr_out, DeliveredData)`; Linux's and ns-3-dev's rule.
    SafeAck,
}

impl Recovery {
    /// The receiver must send SACK blocks: every variant with a scoreboard.
    pub fn uses_sack(self) -> bool {
        !matches!(self, Recovery::Tahoe | Recovery::Reno | Recovery::NewReno)
    }

    /// RFC 6675's IsLost()/SetPipe()/NextSeg() machinery (with or without PRR).
    pub(super) fn rfc6675(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::Prr(_) | Recovery::Ns3Prr)
    }

    /// RACK-TLP loss detection.
    pub(super) fn rack(self) -> bool {
        matches!(self, Recovery::RackTlp | Recovery::Linux)
    }
}
