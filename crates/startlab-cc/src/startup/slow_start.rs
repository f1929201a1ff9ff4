//! Standard slow start — RFC 5681 §3.1.
//!
//! "During slow start, a TCP increments cwnd by at most SMSS bytes for each ACK received that
//! cumulatively acknowledges new data." The lab's default increase is `min(N, SMSS)` per ACK
//! (ALGORITHMS.md §1.4), i.e. packet counting: an ACK covering two segments still adds one SMSS,
//! which is why delayed ACKs make the window grow by about 1.5x per round instead of 2x.
//!
//! Over QUIC the standard is RFC 9002 §7.3.1's: the window grows by every byte an ACK frame
//! acknowledges (a QUIC ACK covers as many packets as the receiver's ACK policy lets arrive), so a
//! QUIC flow's `slow-start` counts bytes (docs/QUIC.md).
//!
//! Parameters: none. The initial window and initial ssthresh belong to the TCP configuration.

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView};

/// Standard slow start.
#[derive(Clone, Copy, Debug, Default)]
pub struct SlowStart {
    /// QUIC's standard slow start (RFC 9002 §7.3.1: "the congestion window increases by the number
    /// of bytes acknowledged when each acknowledgment is processed"): every byte counts, whatever
    /// the ACK covers. Set for a QUIC flow ([`FlowContext::quic`](crate::decl::FlowContext)).
    pub byte_counting: bool,
}

impl StartupAlgorithm for SlowStart {
    /// RFC 5681: `cwnd += min(N, SMSS)`; RFC 9002: `cwnd += N`. Slow start itself never ends
    /// startup early.
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let n = if self.byte_counting { ack.newly_acked } else { ack.newly_acked.min(view.mss) };
        StartupAction::grow(n as f64)
    }
}

use crate::decl::{AlgorithmInfo, no_check};

/// The declaration of `slow-start` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "slow-start",
        role: "startup",
        summary: "standard slow start: cwnd += min(N, SMSS) per ACK until ssthresh or loss",
        source: "RFC 5681 §3.1",
        params: &[],
    },
    build: super::Build::Native(|_, cx| super::Startup::SlowStart(SlowStart { byte_counting: cx.quic })),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};
