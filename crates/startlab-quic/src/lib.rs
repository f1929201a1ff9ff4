//! Sans-IO QUIC endpoints for startlab (issue 35): RFC 9000's packet-number spaces and ACK frames
//! and RFC 9002's loss detection and congestion control, driving the same
//! [`startlab_cc::Controller`] as TCP so that every startup and avoidance algorithm runs over QUIC
//! unchanged.
//!
//! Like `startlab-tcp`, nothing here reads a clock or touches a socket: time comes in with each
//! call and packets go out as descriptions the driver (the simulator, startlab-udp) carries.
//!
//! - [`rtt`]: RFC 9002 §5's estimator (`latest_rtt`, `min_rtt`, `smoothed_rtt`, `rttvar`, the
//!   ACK delay's adjustment).
//! - [`ack`]: ACK frames with ranges and ECN counts, and the receiver's ACK policy (RFC 9000
//!   §13.2, the ACK-frequency extension's parameters).
//! - [`recovery`]: RFC 9002 §6 / Appendix A loss detection per space: packet and time
//!   thresholds, the probe timeout and its backoff, persistent congestion.
//! - [`sender`]: an endpoint's sending half, per space, driving a [`startlab_cc::Controller`].
//! - [`endpoint`]: the client and the server with the handshake (CRYPTO flights, the
//!   anti-amplification limit, key discarding, HANDSHAKE_DONE) and their ACKs.

#![deny(missing_docs)]

pub mod ack;
pub mod endpoint;
pub mod recovery;
pub mod rtt;
pub mod sender;

/// A packet-number space (RFC 9000 §12.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Space {
    /// Initial packets.
    Initial = 0,
    /// Handshake packets.
    Handshake = 1,
    /// 0-RTT and 1-RTT packets.
    AppData = 2,
}

impl Space {
    /// The three spaces in order.
    pub const ALL: [Space; 3] = [Space::Initial, Space::Handshake, Space::AppData];
}
