//! A flow's `quic` table, resolved: the flow runs QUIC (RFC 9000 transport, RFC 9002 loss detection
//! and congestion control; the `startlab-quic` crate) instead of TCP. The flow's `tcp` table then
//! gives only what both transports share: the congestion avoidance and its parameters,
//! `initial_ssthresh`, `ecn` and `cwnd_validation` (docs/QUIC.md).

use serde::Serialize;
use startlab_units::Dur;

/// IPv4 and UDP header bytes around a QUIC datagram.
pub const UDP_IP_HEADER: u64 = 28;

/// The QUIC settings of a flow, every default filled in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuicSpec {
    /// Largest UDP payload the endpoints send (RFC 9000 §14; at least 1200 bytes).
    pub max_datagram_size: u64,
    /// The path's IP MTU as the sender knows it: `max_datagram_size` plus 28 bytes of IPv4 and UDP
    /// headers must fit.
    pub path_mtu: u64,
    /// The initial congestion window in bytes (RFC 9002 §7.2's
    /// `min(10·max_datagram_size, max(14720, 2·max_datagram_size))` unless given).
    pub initial_window: u64,
    /// The connection opens with the handshake (else both ends start with 1-RTT keys, as a
    /// resumed connection's 0-RTT would).
    pub handshake: bool,
    /// The ClientHello's bytes (CRYPTO data).
    pub client_hello: u64,
    /// The server's EncryptedExtensions, Certificate, CertificateVerify and Finished (bytes).
    pub server_flight: u64,
    /// The client's request on the stream (bytes); the response starts when all of it is in.
    pub request: u64,
    /// The client acknowledges every this many ack-eliciting packets (RFC 9000 §13.2.2: 2).
    pub ack_eliciting_threshold: u64,
    /// The client's `max_ack_delay` (transport parameter; RFC 9000 default 25 ms).
    pub max_ack_delay: Dur,
    /// The client acknowledges at once a packet that arrives out of order (RFC 9000 §13.2.1).
    pub immediate_ack_on_reorder: bool,
    /// At most this many ranges in an ACK frame (the oldest are left out).
    pub max_ack_ranges: u64,
    /// The ACK_FREQUENCY frame the server sends once the handshake is confirmed
    /// (draft-ietf-quic-ack-frequency); `None`: RFC 9000's ACKs stay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_frequency: Option<AckFrequencySpec>,
    /// The client's receive window on the connection and its one stream (`initial_max_data`,
    /// raised by MAX_DATA as the application reads); `None`: unlimited.
    pub max_data: Option<u64>,
    /// Pace at `pacing_gain · cwnd / smoothed_rtt` (RFC 9002 §7.7) when the startup sets no rate.
    pub pacing: bool,
    /// `N` of RFC 9002 §7.7.
    pub pacing_gain: f64,
    /// RTT before the first sample (RFC 9002 §6.2.2: 333 ms).
    pub initial_rtt: Dur,
    /// `kPacketThreshold` (RFC 9002 §6.1.1: 3).
    pub packet_threshold: u64,
    /// `kTimeThreshold` (RFC 9002 §6.1.2: 9/8), as a number.
    pub time_threshold: f64,
    /// `kGranularity` (RFC 9002 §6.1.2: 1 ms).
    pub granularity: Dur,
    /// `kPersistentCongestionThreshold` (RFC 9002 §7.6.1: 3).
    pub persistent_congestion_threshold: u64,
}

/// `quic.ack_frequency`, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AckFrequencySpec {
    /// Acknowledge every this many ack-eliciting packets (the frame's Ack-Eliciting Threshold is
    /// one less).
    pub threshold: u64,
    /// The Request Max Ack Delay.
    pub max_ack_delay: Dur,
    /// The Reordering Threshold (0: no immediate ACK on reordering).
    pub reordering_threshold: u64,
}

impl QuicSpec {
    /// `kTimeThreshold` as the fraction loss detection uses (eighths, or a finer denominator).
    pub fn time_threshold_fraction(&self) -> (u64, u64) {
        let (mut num, mut den) = ((self.time_threshold * 1024.0).round() as u64, 1024);
        while num % 2 == 0 && den > 1 {
            num /= 2;
            den /= 2;
        }
        (num, den)
    }
}
