//! What [`crate::send`] and [`crate::serve`] return: plain serde-serialisable structs.

use crate::wire::DropReason;
use serde::Serialize;

/// Datagrams dropped, by reason (see [`DropReason`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DropCounts {
    /// Shorter than the header, the fields or the declared payload.
    pub truncated: u64,
    /// Unknown type or flag, a field out of range, bytes left over, or (authenticated but)
    /// impossible values such as an ACK beyond the data sent.
    pub malformed: u64,
    /// Another wire format version.
    pub wrong_version: u64,
    /// Not this connection's id (or a second connection at a server that has one).
    pub unknown_connection: u64,
    /// The keyed check failed: spoofed or corrupted.
    pub bad_mac: u64,
    /// A packet number seen before or older than the anti-replay window.
    pub replayed: u64,
    /// A type that travels the other way (reflected).
    pub unexpected_type: u64,
    /// At the server: from an address other than the connection's peer.
    pub wrong_peer: u64,
}

impl DropCounts {
    /// Counts one drop.
    pub fn count(&mut self, r: DropReason) {
        let c = match r {
            DropReason::Truncated => &mut self.truncated,
            DropReason::Malformed => &mut self.malformed,
            DropReason::WrongVersion => &mut self.wrong_version,
            DropReason::UnknownConnection => &mut self.unknown_connection,
            DropReason::BadMac => &mut self.bad_mac,
            DropReason::Replayed => &mut self.replayed,
            DropReason::UnexpectedType => &mut self.unexpected_type,
            DropReason::WrongPeer => &mut self.wrong_peer,
        };
        *c += 1;
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.truncated + self.malformed + self.wrong_version + self.unknown_connection + self.bad_mac + self.replayed + self.unexpected_type + self.wrong_peer
    }
}

/// The sender's state after one ACK (and the transmissions it released).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AckSample {
    /// Seconds since the first data segment was sent.
    pub t_s: f64,
    /// Congestion window in bytes.
    pub cwnd: f64,
    /// Slow-start threshold in bytes; `None` (null) while infinite.
    pub ssthresh: Option<f64>,
    /// RFC 5681 FlightSize in bytes.
    pub flight: u64,
    /// Cumulative ACK point (bytes acknowledged).
    pub snd_una: u64,
}

/// One value of the startup algorithm's own report (the simulator's per-flow `past_*`, ...
/// columns).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StartupDetail {
    /// A number.
    Num(f64),
    /// A name.
    Text(String),
}

/// The end of startup as the congestion controller recorded it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StartupExitReport {
    /// Seconds since the first data segment.
    pub time_s: f64,
    /// The reason, named as the simulator names it (`loss`, `ssthresh`, `delay-increase`, ...).
    pub reason: String,
    /// cwnd at that moment, before any reduction (bytes).
    pub cwnd_bytes: f64,
    /// The same in MSS-sized packets.
    pub cwnd_pkts: f64,
}

/// A distribution of delays. As [`SendReport::pacing`]: how late the pacer's releases left (for
/// each data segment the pacer held back, the time it was handed to the socket minus the release
/// time the pacer asked for). As the `ack_lag` of both reports: how long a datagram waited for
/// its host.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PacingReport {
    /// Delays measured (segments released by the pacer; datagrams or ACKs for `ack_lag`).
    pub count: u64,
    /// Mean lateness in µs (`None` without releases).
    pub mean_us: Option<f64>,
    /// 99th percentile in µs, to 1 µs resolution.
    pub p99_us: Option<f64>,
    /// Largest lateness in µs.
    pub max_us: Option<f64>,
}

/// What the sending side ([`crate::send`]) measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SendReport {
    /// The connection id, 16 hex digits.
    pub conn_id: String,
    /// The flow's name in the scenario.
    pub flow: String,
    /// `tcp`, or `quic` for a flow with a `quic` table (its QUIC server endpoint's figures: data
    /// segments are packets with stream bytes, `rto_count` probe timeouts, `fast_retransmits` the
    /// congestion events loss started, `mss` the datagram size).
    pub transport: String,
    /// Startup algorithm.
    pub startup: String,
    /// Congestion-avoidance algorithm.
    pub congestion_avoidance: String,
    /// MSS in bytes.
    pub mss: u64,
    /// Bytes to send (`None`: infinite).
    pub size: Option<u64>,
    /// The flow's `size` was acknowledged.
    pub completed: bool,
    /// `completed` or `duration-limit`.
    pub ended_by: String,
    /// Seconds from the first INIT to its INIT_ACK.
    pub connect_s: Option<f64>,
    /// Seconds from the connection's start to the first data segment.
    pub first_data_s: Option<f64>,
    /// The first data segment's `CLOCK_MONOTONIC` time (seconds), to line up with the router's
    /// drop log.
    pub t0_mono_s: Option<f64>,
    /// Seconds from the first data segment to completion or to the end.
    pub duration_s: Option<f64>,
    /// One sample per ACK after the first data segment.
    pub samples: Vec<AckSample>,
    /// Samples not kept beyond [`crate::MAX_SAMPLES`].
    pub samples_dropped: u64,
    /// The controller's startup exit, if it happened.
    pub startup_exit: Option<StartupExitReport>,
    /// The startup algorithm's own report, as the simulator's result columns name it (Paced
    /// Start: `past_g_b`, `past_gap`, `past_case`, ...).
    pub startup_details: std::collections::BTreeMap<String, StartupDetail>,
    /// As the simulator reports it: the exit reason, else `completed` or `not-exited`.
    pub exit_reason: String,
    /// Data segments the sender emitted, retransmissions included (forced drops included).
    pub data_segments_sent: u64,
    /// Data segments sent again.
    pub retransmissions: u64,
    /// Retransmission timer expiries with data outstanding.
    pub rto_count: u64,
    /// Loss-recovery episodes entered by duplicate ACKs or SACK.
    pub fast_retransmits: u64,
    /// SYN retransmissions (each a new INIT).
    pub syn_retransmits: u64,
    /// Data transmissions not put on the wire because the scenario's `drops` lists them.
    pub forced_drops: u64,
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// `bytes_acked` in bit/s over `duration_s`.
    pub goodput_bps: Option<f64>,
    /// Smoothed RTT at the end, seconds.
    pub srtt_s: Option<f64>,
    /// The pacer's release lateness (QUIC: of every release by the endpoint's timer, pacer or
    /// loss detection).
    pub pacing: PacingReport,
    /// For each datagram from the server, how long after the kernel received it the sender acted
    /// on it: the sender times an ACK by that arrival stamp (`SO_TIMESTAMPNS`) less the delay the
    /// ACK carries (the server's own lag), so this host delay stays out of the algorithm's
    /// measurements (`count` = stamped datagrams).
    pub ack_lag: PacingReport,
    /// Datagrams with no arrival stamp, timed when read.
    pub ack_unstamped: u64,
    /// The thread's timer slack during the run (ns), if known.
    pub timer_slack_ns: Option<u64>,
    /// Datagrams dropped on arrival, by reason.
    pub drops: DropCounts,
    /// Datagrams sent (INIT, DATA, CLOSE).
    pub datagrams_sent: u64,
    /// Datagrams received (valid or not).
    pub datagrams_received: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// Times a send found the socket buffer full and waited.
    pub send_blocked: u64,
    /// ICMP port-unreachable reports (connection refused) seen on the socket.
    pub icmp_unreachable: u64,
    /// The server confirmed the CLOSE.
    pub close_acknowledged: bool,
    /// QUIC: datagrams from the serving side that arrived with CE in the IP header (TCP: 0, its
    /// CE marks are counted where the data arrives).
    pub ce_received: u64,
    /// CPU time (user + system) of the sending thread, seconds.
    pub cpu_s: Option<f64>,
}

/// The receiver's delivered bytes at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TimelineSample {
    /// Seconds since the first data segment arrived.
    pub t_s: f64,
    /// Bytes delivered in order to the application.
    pub bytes: u64,
}

/// The receiving side's settings as the INIT gave them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReceiverReport {
    /// `every-packet`, `delayed` or `quickack` (the scenario's `tcp.ack` names).
    pub ack: String,
    /// Delayed-ACK timer in seconds (delayed and quick-ACK).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_timeout_s: Option<f64>,
    /// Quick-ACK budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quickack_segments: Option<u32>,
    /// SACK blocks reported.
    pub sack: bool,
    /// SACK blocks per ACK.
    pub sack_blocks: u8,
    /// Advertised window in bytes (`None`: unlimited).
    pub rwnd: Option<u64>,
    /// MSS in bytes.
    pub mss: u32,
}

/// The QUIC client endpoint at the serving side: its settings (from the INIT) and counters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuicClientReport {
    /// `quic.handshake`.
    pub handshake: bool,
    /// The handshake completed at the client.
    pub handshake_complete: bool,
    /// `quic.request`, bytes.
    pub request: u64,
    /// `quic.max_datagram_size`.
    pub max_datagram_size: u32,
    /// Ack-eliciting packets per ACK (before any ACK_FREQUENCY).
    pub ack_eliciting_threshold: u32,
    /// `quic.max_ack_delay`, seconds.
    pub max_ack_delay_s: f64,
    /// `quic.max_data` (`None`: unlimited).
    pub max_data: Option<u64>,
    /// Packets sent ECT(0) with ECN counts in their ACK frames.
    pub ecn: bool,
    /// Packets the client's sender counted (the ack-eliciting ones: its ClientHello, Finished and
    /// request; packets with ACK frames are counted in [`ServeReport::acks_sent`]).
    pub packets_sent: u64,
    /// The client's probe timeouts.
    pub ptos: u64,
    /// Datagrams larger than the simulator's size for their packet (the fields of a small packet,
    /// with the datagram format's header and MAC, do not fit in it).
    pub oversize_datagrams: u64,
}

/// What the receiving side ([`crate::serve`]) measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServeReport {
    /// The connection id, 16 hex digits (`None` if none was accepted).
    pub conn_id: Option<String>,
    /// The client's address.
    pub peer: Option<String>,
    /// `close`, `idle-timeout` or `accept-timeout`.
    pub ended_by: String,
    /// The client's reason in its CLOSE: `completed` or `duration-limit`.
    pub close_reason: Option<String>,
    /// `tcp` or `quic` (`None` if no connection was accepted).
    pub transport: Option<String>,
    /// The receiver the INIT asked for (TCP).
    pub receiver: Option<ReceiverReport>,
    /// The QUIC client endpoint the INIT asked for, and what it did (QUIC).
    pub quic: Option<QuicClientReport>,
    /// Bytes delivered in order.
    pub delivered_bytes: u64,
    /// Bytes that arrived again.
    pub duplicate_bytes: u64,
    /// Data segments that arrived with CE in the IP header.
    pub ce_received: u64,
    /// Delivered bytes over time: a sample when delivery advanced, at most one per
    /// `timeline_interval_s` (1 ms, doubled whenever [`crate::MAX_SAMPLES`] is reached, keeping
    /// every other sample), and the last one.
    pub timeline: Vec<TimelineSample>,
    /// The timeline's sampling interval at the end, seconds.
    pub timeline_interval_s: f64,
    /// Seconds from the INIT to the first data segment.
    pub first_data_s: Option<f64>,
    /// Seconds from the first data segment to the last one.
    pub data_duration_s: Option<f64>,
    /// ACKs sent (the SYN-ACK not included; QUIC: packets with an ACK frame).
    pub acks_sent: u64,
    /// For each ACK, the time from the event that caused it (the kernel's arrival stamp of the
    /// data, or the delayed-ACK deadline) to its send: the host's wake-up and processing delay,
    /// which a kernel TCP receiver (ACKing in softirq) does not add. Each ACK carries it and the
    /// sender takes it off the ACK's arrival time (`count` = ACKs).
    pub ack_lag: PacingReport,
    /// Datagrams dropped on arrival, by reason.
    pub drops: DropCounts,
    /// Datagrams received (valid or not).
    pub datagrams_received: u64,
    /// UDP payload bytes received (valid or not).
    pub bytes_received: u64,
    /// Datagrams sent.
    pub datagrams_sent: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// The client echoed the token, so its address is verified.
    pub address_verified: bool,
    /// Bytes not sent because the peer was unverified and they would have exceeded 3× the bytes
    /// received from it (the amplification limit).
    pub amplification_withheld_bytes: u64,
    /// Datagrams not sent for the same reason.
    pub amplification_withheld_datagrams: u64,
    /// Datagrams the kernel dropped because the socket's receive buffer was full (SO_RXQ_OVFL).
    pub socket_overflow_drops: u64,
    /// CPU time (user + system) of the serving thread, seconds.
    pub cpu_s: Option<f64>,
}
