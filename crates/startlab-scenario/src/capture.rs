//! What `[trace.pcap]` resolves to: which link directions are captured, and how.

use crate::PacketTraceSpec;
use serde::Serialize;

/// `[trace.pcap]`: every packet that starts transmission on the chosen link directions, written
/// with real IPv4 and TCP (or UDP) headers to one capture file per direction.
#[derive(Clone, Debug, Serialize)]
pub struct PcapSpec {
    /// Which links, directions and flows, checked as `[trace.packets]` checks them.
    pub select: PacketTraceSpec,
    /// File format.
    pub format: PcapFormat,
    /// Bytes of each packet kept in the file (its headers first, then zero payload bytes); the
    /// record's original length is the packet's whole length.
    pub snaplen: u32,
}

/// A capture file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PcapFormat {
    /// pcapng (nanosecond timestamps declared by the interface block's `if_tsresol`).
    Pcapng,
    /// The classic libpcap format with nanosecond timestamps (magic `a1b23c4d`).
    Pcap,
}

impl PcapSpec {
    /// Default `snaplen`: the headers of every packet startlab writes and a little payload, as
    /// `tcpdump -s 128` keeps.
    pub const DEFAULT_SNAPLEN: u32 = 128;
    /// Largest `snaplen` (tcpdump's default, 256 KiB).
    pub const MAX_SNAPLEN: u32 = 262_144;
    /// Smallest `snaplen`: IPv4 and TCP headers with the longest options (60 + 60 bytes).
    pub const MIN_SNAPLEN: u32 = 120;
}
