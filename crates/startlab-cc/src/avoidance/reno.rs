//! Reno congestion avoidance — RFC 5681 §3.1, equations (3) and (4).
//!
//! "cwnd += SMSS*SMSS/cwnd" on every ACK that acknowledges new data (the per-ACK form, with the
//! fractional part kept), and after a loss "ssthresh = max (FlightSize / 2, 2*SMSS)".
//!
//! `SsthreshFrom::Cwnd` halves cwnd instead, as ns-2's Reno agents do (`window()/2`), which is
//! the Reno of the papers' models: Barakat's `W'_th = W_D/8` after three losses counts three
//! halvings of the window. After Reno leaves recovery on a partial ACK, FlightSize still spans
//! the rest of the old window, so RFC 5681's rule halves far less than the window.

use super::SsthreshFrom;
use crate::{AckEvent, CcView, CongestionEvent};

/// Reno AIMD.
#[derive(Clone, Copy, Debug)]
pub struct Reno {
    /// The window halved after a congestion event.
    pub ssthresh_from: SsthreshFrom,
    /// Grow by the acknowledged bytes, `cwnd += SMSS·N/cwnd` (RFC 3465 §2.1's byte counting in
    /// avoidance; RFC 9002 Appendix B.5's `max_datagram_size · sent_bytes / congestion_window`),
    /// instead of RFC 5681's one SMSS·SMSS/cwnd per ACK. The QUIC transport's NewReno.
    pub byte_counting: bool,
}

impl Default for Reno {
    /// RFC 5681: half the FlightSize, per-ACK growth.
    fn default() -> Self {
        Reno { ssthresh_from: SsthreshFrom::FlightSize, byte_counting: false }
    }
}

impl Reno {
    /// RFC 5681 eq. (3): about one SMSS per window of ACKs; with byte counting, one SMSS per
    /// window of acknowledged bytes.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> f64 {
        let mss = view.mss as f64;
        let counted = if self.byte_counting { ack.newly_acked as f64 } else { mss };
        view.cwnd + mss * counted / view.cwnd
    }

    /// RFC 5681 eq. (4): half the flight size, or half of cwnd (the controller applies the
    /// 2 SMSS floor).
    pub fn ssthresh_after_loss(&mut self, view: &CcView, ev: &CongestionEvent) -> f64 {
        match self.ssthresh_from {
            SsthreshFrom::FlightSize => ev.flight_size as f64 / 2.0,
            SsthreshFrom::Cwnd => view.cwnd / 2.0,
        }
    }
}

use crate::decl::{AlgorithmInfo, Param};

/// `tcp.reno_ssthresh_from`: the window halved after a congestion event.
pub const SSTHRESH_FROM: Param<&'static str> = Param::choice(
    "reno_ssthresh_from",
    &["flight-size", "cwnd"],
    "flight-size",
    "tcp.reno_ssthresh_from: ssthresh = FlightSize/2 (RFC 5681 eq. 4) or cwnd/2 (ns-2's window halving, the papers' Reno)",
);

/// The declaration of `congestion_avoidance = "reno"` (its entry in `avoidance::DECLS`; its
/// parameters are keys of the flow's `tcp` table).
pub const DECL: super::AvoidanceDecl = super::AvoidanceDecl {
    info: AlgorithmInfo {
        name: "reno",
        role: "avoidance",
        summary: "Reno AIMD: cwnd += SMSS*SMSS/cwnd per ACK, ssthresh = max(FlightSize/2, 2*SMSS) on loss",
        source: "RFC 5681 §3.1",
        params: &[SSTHRESH_FROM.info],
    },
    build: |p, _| {
        super::Avoidance::Reno(Reno {
            byte_counting: false,
            ssthresh_from: match p.get(&SSTHRESH_FROM) {
                "cwnd" => SsthreshFrom::Cwnd,
                _ => SsthreshFrom::FlightSize,
            },
        })
    },
    needs_l4s: false,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CongestionKind;
    use startlab_units::Time;

    #[test]
    fn halves_flight_size_by_default_and_cwnd_when_asked() {
        let view = CcView { cwnd: 40_000.0, ssthresh: crate::Ssthresh::Infinite, mss: 1000, round: 0, min_rtt: None, new_round: false };
        let ev = CongestionEvent { now: Time::ZERO, kind: CongestionKind::FastRetransmit, flight_size: 60_000, enter_recovery: true };
        assert_eq!(Reno::default().ssthresh_after_loss(&view, &ev), 30_000.0);
        assert_eq!(Reno { ssthresh_from: SsthreshFrom::Cwnd, byte_counting: false }.ssthresh_after_loss(&view, &ev), 20_000.0);
    }
}
