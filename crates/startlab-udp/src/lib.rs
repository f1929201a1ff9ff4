//! startlab-udp: the simulator's sans-IO TCP and QUIC endpoints over UDP sockets with the real
//! clock.
//!
//! The client ([`send`]) runs exactly the [`startlab_tcp::Sender`] the simulator builds for a
//! scenario's `[[flows]]` entry ([`startlab_sim::flow_endpoints`]): same startup and avoidance
//! plug-ins, same recovery, RTO and pacing. The server ([`serve`]) needs only its bind address
//! and the key: the client's first datagram (INIT) carries the receiver settings of the scenario
//! (ACK policy with its timers and quick-ACK budget, SACK on/off, SACK blocks, rwnd, MSS), so that
//! the server runs the scenario's [`startlab_tcp::Receiver`] too. One datagram carries one TCP
//! segment or one ACK. A flow with a `quic` table runs QUIC instead (see "QUIC" below).
//!
//! # Driving the endpoints
//!
//! As the simulator does (`crates/startlab-sim/src/sim/`): `Sender::start`, then
//! `poll_transmit` until it returns nothing after every event (an ACK, a timer); an ACK goes to
//! `on_ack` the moment it is read; `on_timer` runs when `next_timeout()` has come. The receiver
//! answers a SYN with `on_syn(ECE && CWR)`, a data segment with `on_segment_ecn(now, seq, len,
//! ce, cwr)` (CE is read from the IP header with `IP_RECVTOS`; ECT(0) is set with `IP_TOS` on the
//! client's socket for ECT segments), and its delayed-ACK timer with `on_timer`. The scenario's
//! `drops` (1-based data transmissions the network drops on purpose) are not put on the wire.
//! Quick-Start needs router support that UDP cannot carry, request/response flows
//! (`[flows.app]`) need an application, and `tcp.ecn = "l4s"` needs ECT(1) and Accurate ECN
//! feedback that the datagram format does not carry: a flow with any of them is refused.
//!
//! Time is [`startlab_units::Time`], nanoseconds of the monotonic clock since the connection
//! started (the client's first INIT; at the server, its start). With `tcp.handshake = true` the
//! SYN rides on the INIT and the SYN-ACK on the INIT_ACK, and SYN retransmissions are the
//! sender's own (new INITs); with `handshake = false` (the default) the INIT/INIT_ACK exchange is
//! the transport's alone — retransmitted from `tcp.rto_initial` on, doubling — and the sender
//! starts, without a handshake, when the INIT_ACK arrives.
//!
//! # Timers and pacing
//!
//! One thread per endpoint, one loop: read the datagrams waiting (one `recv` each, the socket
//! is non-blocking; at most 64 before the timers are looked at again, and at most 64 segments
//! sent per event, so that neither a flood of ACKs nor a window of thousands of segments holds
//! the RTO, the pacer or the duration limit back), run the timers that are due, transmit what the
//! sender releases, then wait for the next deadline — the sender's `next_timeout()` (RTO and the
//! pacer's release), a retransmission of INIT or CLOSE, the duration limit — or a datagram,
//! whichever comes first. Once the flow has ended, ACKs still arriving are not given to the
//! sender (the report is its state at the end) and only CLOSE is sent, up to 5 times at twice the
//! smoothed RTT (10–200 ms) until a CLOSE_ACK comes.
//! The wait is `ppoll(2)` (nanosecond timeout) until [`SendConfig::spin_us`] before the deadline,
//! then a spin on non-blocking reads. (`UdpSocket::set_read_timeout` is not used: Linux keeps
//! `SO_RCVTIMEO` in jiffies, 4–8 ms here.) The thread's timer slack is set to 1 µs for the run
//! and restored after. [`SendReport::pacing`] gives the lateness of every release the pacer
//! held back: the time the segment went to the socket minus the release time.
//!
//! # QUIC
//!
//! A flow with a `quic` table runs the two [`startlab_quic::endpoint::Endpoint`]s the simulator
//! builds for it ([`startlab_sim::flow_quic_endpoints`]). Roles: the client ([`send`], the data
//! sender, `startlab net send`) runs the QUIC *server* endpoint, whose controller is the flow's
//! (its startup, avoidance, initial window), and which sends the response of `size` bytes; the
//! server ([`serve`], `startlab net recv`) runs the QUIC *client* endpoint, which opens the QUIC
//! connection, sends the request and acknowledges the response. So the CLI, the reports and
//! compare-real's plumbing stay as they are: `send` still reports the data sender's controller.
//!
//! startlab-udp's own connection comes first: the client's INIT, with the `QUIC` flag, carries
//! what the QUIC client needs ([`wire::QuicSettings`]: the `quic` table as the simulator maps it,
//! and ECN) and is padded to 1200 bytes; the server answers with an INIT_ACK and its QUIC client
//! endpoint starts (the ClientHello's Initial, or without the handshake its request). The 1200
//! bytes make the server's anti-amplification allowance (3× what it received) cover its INIT_ACK
//! and the 1200-byte Initial, as in QUIC. The client's QUIC server endpoint starts when the
//! INIT_ACK (or the first QUIC datagram) arrives; the INIT is retransmitted from `tcp.rto_initial`
//! (1 s) on, doubling. From then on every datagram both ways is one QUIC packet (type 7) until
//! CLOSE / CLOSE_ACK, as for TCP. The token echo of the TCP mode is not used: the server stays
//! under its 3× allowance because it receives far more than it sends.
//!
//! Driving: `poll_transmit(now)` until it returns nothing after every event, `on_packet(now,
//! packet, ecn)` the moment a packet is read (`ecn` is the IP header's codepoint, read with
//! `IP_RECVTOS`), `on_timeout(now)` when `next_timeout(now)` has come. With `tcp.ecn = true` both
//! sockets send ECT(0) (`IP_TOS`), as every packet of the simulated connection is ECT(0). The
//! serving side's packets carry how long it held them (`hold_ns`, as the TCP mode's ACK delay),
//! and the data sender times them by their kernel arrival stamp less that hold. The scenario's
//! `drops` count the server's packets with stream bytes. A QUIC flow with `tcp.ecn = "l4s"` is
//! refused (ECT(1) and the L4S reading of the CE count are not carried). [`SendReport::pacing`]
//! is, for QUIC, the lateness of every release by the endpoint's timer (pacer or loss timer).
//!
//! What is QUIC on the wire and what is not: each datagram carries one packet's *contents* as the
//! endpoint produced it (space, packet number, CRYPTO/STREAM offset and length, the ACK frame with
//! its ranges, ACK delay and ECN counts, HANDSHAKE_DONE, MAX_DATA, ACK_FREQUENCY, the
//! ack-eliciting, probe and retransmission flags), and its UDP payload is exactly the simulator's
//! size for the packet (`Transmit::size`: 1472 bytes for a full packet), zero padding standing for
//! the frames' bytes — except that a packet whose fields, with this format's 35 bytes of header and
//! MAC, do not fit its size is sent at its fields' length and counted
//! ([`QuicClientReport::oversize_datagrams`]): ACK-only packets, about 35 bytes in the simulator,
//! go out 10–20 bytes larger. It is not RFC 9000's encoding: no long or
//! short header, version, connection IDs or token; no header protection and no packet protection
//! (AEAD); no TLS (the handshake is its messages' sizes, the stream's bytes are not sent). The
//! datagram format's keyed MAC and anti-replay window are its integrity and replay protection.
//!
//! # Wire format
//!
//! All integers big-endian. Every datagram:
//!
//! | bytes | field |
//! |---|---|
//! | 1 | version ([`wire::VERSION`] = 2) |
//! | 1 | type: 1 INIT, 2 INIT_ACK, 3 DATA, 4 ACK, 5 CLOSE, 6 CLOSE_ACK, 7 QUIC |
//! | 1 | flags ([`wire::flags`]; a bit a type does not define is malformed) |
//! | 8 | connection id (random, chosen by the client) |
//! | 8 | packet number: per direction, from 0, +1 per datagram (retransmissions too), never reused |
//! | … | type-specific fields, then the payload (DATA) |
//! | 16 | MAC: BLAKE3 keyed hash (32-byte key) of every byte before it, first 16 bytes |
//!
//! Type-specific fields:
//!
//! | type | direction | flags | fields |
//! |---|---|---|---|
//! | INIT | client → server | SYN, ECE, CWR (the SYN's) | ACK policy u8 (0 every-packet, 1 delayed, 2 quick-ACK), SACK u8, SACK blocks u8, quick-ACK budget u32, ACK timer ns u64, rwnd u64 (`u64::MAX` unlimited), MSS u32 |
//! | INIT (QUIC) | client → server | QUIC (0x08) alone | bits u8 (handshake, immediate ACK on reorder, ECN, pacing, max_data present), then varints: ClientHello, ServerHello, server flight and client Finished sizes, request, ack-eliciting threshold, max ACK delay ns, max ACK ranges, max_data (if present), max datagram size, packet threshold, time threshold numerator and denominator, granularity ns, peer max ACK delay ns, persistent congestion threshold, initial RTT ns; pacing gain f64 (8 bytes); initial window varint; zeros to 1200 bytes in all |
//! | INIT_ACK | server → client | SYN_ACK, ECE, TIMER | token u64; with SYN_ACK the ACK fields below |
//! | DATA | client → server | RETRANSMIT, ECT, CWR, TOKEN | seq u64, len u16, token u64 if TOKEN, `len` payload bytes (zeros) |
//! | ACK | server → client | ECE, TIMER, VERIFIED | cumulative ACK u64, rwnd u64, segments u32, SACK block count u8 (≤ 4), blocks as (start u64, end u64) |
//! | CLOSE | client → server | – | reason u8 (0 completed, 1 duration limit) |
//! | CLOSE_ACK | server → client | – | – |
//! | QUIC | both | ACK_ELICITING, PROBE, RETRANSMISSION, HANDSHAKE_DONE, DATA, ACK, ECN, MAX_DATA ([`wire::qflags`]) | space u8 (0 Initial, 1 Handshake, 2 application data; +0x04: ACK_FREQUENCY follows), then varints: hold ns, packet number, size; with DATA offset, length; with ACK largest, ACK delay ns, range count − 1, first range, then (gap, length) pairs as RFC 9000 §19.3; with ECN the ECT(0), ECT(1), CE counts; with MAX_DATA the limit; with ACK_FREQUENCY sequence, threshold, max ACK delay ns, reordering threshold; then zeros until the datagram is `size` bytes |
//!
//! QUIC's varints are RFC 9000 §16's variable-length integers in their shortest form (a longer
//! encoding is malformed). A QUIC datagram with space 3, ECN without ACK, ranges running below
//! packet 0, more than [`wire::MAX_ACK_RANGES`] ranges, size 0, or padding that is not zeros or
//! runs beyond `size` is malformed. Once authenticated, a QUIC packet must also be plausible: its
//! packet number no larger than the datagram's, an ACK only of packets sent, data at most 1 GiB
//! beyond what has arrived in order (else it is counted as malformed).
//!
//! A DATA datagram is its payload plus [`DATA_OVERHEAD`] = 45 bytes (53 while it echoes the
//! token), so MSS 1448 needs an IPv4 MTU of 1521 (the testbed sets 1600).
//!
//! # What a peer cannot do
//!
//! Every datagram that arrives is decoded without trusting any length it declares, then checked
//! for its direction, its connection id, (at the server) its source address, its MAC, and its
//! packet number against an anti-replay window (the highest number and a 1024-bit map below it,
//! [`replay::ReplayWindow`]); the fields must then make sense (an ACK on a segment boundary and
//! within the data sent, a DATA within the MSS and at most 1 GiB beyond the delivered bytes).
//! Whatever fails is dropped and counted by reason in [`DropCounts`]. Nothing panics or blocks
//! on a peer's bytes: waits are bounded by the duration limit, the connect timeout or the idle
//! timeout.
//!
//! Amplification limit: the server's INIT_ACK carries a random token; the client echoes it on
//! every DATA until an ACK says VERIFIED. Until the first DATA with the right token arrives, the
//! server sends at most 3× the bytes of the authenticated datagrams it has received from that
//! address, and counts what it withheld ([`ServeReport::amplification_withheld_bytes`]).
//!
//! # Example
//!
//! ```no_run
//! let key = startlab_udp::random_key().unwrap();
//! let server = startlab_udp::Server::bind(&startlab_udp::ServeConfig::new("127.0.0.1:0", key.clone())).unwrap();
//! let addr = server.local_addr().to_string();
//! let receiving = std::thread::spawn(move || server.run());
//! let scenario = startlab_scenario::from_toml(&std::fs::read_to_string("examples/paced-start-default.toml").unwrap()).unwrap();
//! let mut cfg = startlab_udp::SendConfig::new(scenario, 0, addr, key);
//! cfg.duration_s = Some(5.0);
//! let sent = startlab_udp::send(&cfg).unwrap();
//! let received = receiving.join().unwrap().unwrap();
//! println!("{}", sent.goodput_bps.unwrap_or(0.0));
//! ```

mod net;
pub mod replay;
mod report;
mod send;
mod serve;
mod timing;
pub mod wire;

pub use report::{AckSample, DropCounts, PacingReport, QuicClientReport, ReceiverReport, SendReport, ServeReport, StartupDetail, StartupExitReport, TimelineSample};
pub use send::send;
pub use serve::{serve, Server};
pub use wire::{DATA_OVERHEAD, KEY_LEN, MAX_MSS};

use std::fmt;
use std::io;

/// The most per-ACK samples ([`SendReport::samples`]) and timeline samples
/// ([`ServeReport::timeline`]) a report keeps.
pub const MAX_SAMPLES: usize = 1 << 21;

/// The receive and send buffer size asked for by default (bytes).
pub const DEFAULT_SOCKET_BUFFER: usize = 4 << 20;

/// Everything [`send`] needs, as plain values.
#[derive(Clone, Debug)]
pub struct SendConfig {
    /// The resolved scenario.
    pub scenario: startlab_scenario::Scenario,
    /// Index of the `[[flows]]` entry to run (from 0).
    pub flow: usize,
    /// The server, `host:port` (`10.203.2.1:5000`, `[::1]:5000`, `localhost:5000`).
    pub server: String,
    /// Local address to bind, `host:port`; `None`: any address, any port.
    pub bind: Option<String>,
    /// The shared key, [`KEY_LEN`] bytes.
    pub key: Vec<u8>,
    /// Stop after this many seconds from the connection's start (an infinite flow's length; a
    /// limit for a finite one); `None`: the scenario's `duration`.
    pub duration_s: Option<f64>,
    /// Give up when the server has not answered the INIT after this many seconds.
    pub connect_timeout_s: f64,
    /// Spin on non-blocking reads for the last this-many µs before a deadline instead of sleeping
    /// (0: always sleep in ppoll). Spinning buys pacing accuracy with CPU time.
    pub spin_us: u64,
    /// Socket receive and send buffer size to ask for, bytes (as root beyond `rmem_max`).
    pub socket_buffer: usize,
}

impl SendConfig {
    /// The defaults: the scenario's duration, a 10 s connect timeout, a 50 µs spin, 4 MiB buffers.
    pub fn new(scenario: startlab_scenario::Scenario, flow: usize, server: impl Into<String>, key: Vec<u8>) -> SendConfig {
        SendConfig {
            scenario,
            flow,
            server: server.into(),
            bind: None,
            key,
            duration_s: None,
            connect_timeout_s: 10.0,
            spin_us: 50,
            socket_buffer: DEFAULT_SOCKET_BUFFER,
        }
    }
}

/// Everything [`serve`] needs, as plain values.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Address to bind, `host:port` (port 0: any free port, see [`Server::local_addr`]).
    pub bind: String,
    /// The shared key, [`KEY_LEN`] bytes.
    pub key: Vec<u8>,
    /// Return when no valid datagram of the connection has arrived for this many seconds.
    pub idle_timeout_s: f64,
    /// Return when no connection has been opened after this many seconds; `None`: wait.
    pub accept_timeout_s: Option<f64>,
    /// Socket receive and send buffer size to ask for, bytes (as root beyond `rmem_max`).
    pub socket_buffer: usize,
}

impl ServeConfig {
    /// The defaults: a 5 s idle timeout, no accept timeout, 4 MiB buffers.
    pub fn new(bind: impl Into<String>, key: Vec<u8>) -> ServeConfig {
        ServeConfig { bind: bind.into(), key, idle_timeout_s: 5.0, accept_timeout_s: None, socket_buffer: DEFAULT_SOCKET_BUFFER }
    }
}

/// Why [`send`] or [`serve`] could not run; the message says what was wrong and what is accepted.
#[derive(Debug)]
pub enum NetError {
    /// The key is not [`KEY_LEN`] bytes (or not hex).
    Key(String),
    /// An address that does not parse or resolve.
    Address {
        /// Which setting (`server`, `bind`).
        what: &'static str,
        /// What was given.
        given: String,
        /// Why it was refused.
        message: String,
    },
    /// The socket could not be bound.
    Bind {
        /// The address.
        addr: String,
        /// The operating system's answer.
        source: io::Error,
    },
    /// The scenario has no such flow.
    NoFlow {
        /// The index asked for.
        index: usize,
        /// How many `[[flows]]` entries the scenario has.
        count: usize,
    },
    /// The flow uses something this transport cannot do.
    Unsupported {
        /// The flow's name.
        flow: String,
        /// What and why.
        message: String,
    },
    /// A setting out of range.
    Config {
        /// The setting.
        field: &'static str,
        /// What was wrong and what is accepted.
        message: String,
    },
    /// The server never answered the INIT.
    ConnectTimeout {
        /// The server address.
        server: String,
        /// Seconds waited.
        after_s: f64,
        /// ICMP port-unreachable came back (nothing listens there).
        refused: bool,
    },
    /// A socket operation failed.
    Io {
        /// What was being done.
        context: String,
        /// The operating system's answer.
        source: io::Error,
    },
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetError::Key(m) => write!(f, "{m}"),
            NetError::Address { what, given, message } => write!(f, "{what} address {given:?}: {message}"),
            NetError::Bind { addr, source } => {
                let why = match source.kind() {
                    io::ErrorKind::AddrInUse => "address already in use (is another server on this port?)".to_string(),
                    io::ErrorKind::AddrNotAvailable => "this machine (or network namespace) has no such address".to_string(),
                    io::ErrorKind::PermissionDenied => "permission denied (ports below 1024 need root)".to_string(),
                    _ => source.to_string(),
                };
                write!(f, "cannot bind a UDP socket to {addr}: {why}")
            }
            NetError::NoFlow { index, count } => {
                write!(f, "the scenario has no flow {index}: its [[flows]] has {count} entries, numbered from 0")
            }
            NetError::Unsupported { flow, message } => write!(f, "flow {flow:?}: {message}"),
            NetError::Config { field, message } => write!(f, "{field}: {message}"),
            NetError::ConnectTimeout { server, after_s, refused } => {
                write!(f, "no answer from {server} after {after_s} s")?;
                if *refused {
                    write!(f, " (ICMP port unreachable: is `startlab net recv` running there?)")
                } else {
                    write!(f, " (is the server running, reachable, and using the same key?)")
                }
            }
            NetError::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for NetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NetError::Bind { source, .. } | NetError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Checks a key's length.
fn key_of(bytes: &[u8]) -> Result<wire::Key, NetError> {
    bytes.try_into().map_err(|_| NetError::Key(format!("the key is {} bytes; it must be exactly {KEY_LEN} bytes ({} hex digits)", bytes.len(), 2 * KEY_LEN)))
}

/// A key from its hex form ([`KEY_LEN`] bytes = 64 hex digits; surrounding whitespace ignored).
pub fn key_from_hex(text: &str) -> Result<Vec<u8>, NetError> {
    let t = text.trim();
    if t.len() != 2 * KEY_LEN {
        return Err(NetError::Key(format!("the key has {} characters; it must be {} hex digits ({KEY_LEN} bytes)", t.len(), 2 * KEY_LEN)));
    }
    (0..KEY_LEN)
        .map(|i| {
            t.get(2 * i..2 * i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(|| {
                NetError::Key(format!(
                    "the key is not hex: {:?} at position {} is not two hex digits (0-9, a-f)",
                    t.get(2 * i..2 * i + 2).unwrap_or("?"),
                    2 * i
                ))
            })
        })
        .collect()
}

/// The hex form of a key (or any bytes).
pub fn key_to_hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new random key from the operating system.
pub fn random_key() -> Result<Vec<u8>, NetError> {
    let mut k = vec![0; KEY_LEN];
    getrandom::fill(&mut k).map_err(|e| NetError::Io { context: "drawing a random key".into(), source: io::Error::other(e.to_string()) })?;
    Ok(k)
}

/// A random u64 from the operating system (connection ids, tokens).
fn random_u64(what: &str) -> Result<u64, NetError> {
    getrandom::u64().map_err(|e| NetError::Io { context: format!("drawing a random {what}"), source: io::Error::other(e.to_string()) })
}

/// Seconds from a configuration value, checked.
fn seconds(field: &'static str, v: f64) -> Result<startlab_units::Dur, NetError> {
    if !v.is_finite() || v <= 0.0 || v > 1e6 {
        return Err(NetError::Config { field, message: format!("{v} s is not accepted; give a positive number of seconds up to 1e6") });
    }
    Ok(startlab_units::Dur::from_secs_f64(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_for_length_and_hex() {
        assert!(key_of(&[0; 32]).is_ok());
        let e = key_of(&[0; 31]).unwrap_err().to_string();
        assert!(e.contains("31 bytes") && e.contains("exactly 32"), "{e}");
        let k = random_key().unwrap();
        assert_eq!(key_from_hex(&format!(" {} \n", key_to_hex(&k))).unwrap(), k);
        let e = key_from_hex("abc").unwrap_err().to_string();
        assert!(e.contains("64 hex digits"), "{e}");
        let e = key_from_hex(&"zz".repeat(32)).unwrap_err().to_string();
        assert!(e.contains("not hex"), "{e}");
        assert!(key_from_hex(&"é".repeat(32)).is_err(), "multi-byte characters are refused, not sliced");
    }

    #[test]
    fn durations_must_be_positive_and_finite() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = seconds("duration_s", bad).unwrap_err().to_string();
            assert!(e.starts_with("duration_s:"), "{e}");
        }
        assert_eq!(seconds("x", 1.5).unwrap(), startlab_units::Dur::from_millis(1500));
    }
}
