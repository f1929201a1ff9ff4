//! UDP flows: what a capture shows of a transport it cannot read. QUIC encrypts its packet numbers
//! and frames (RFC 9001 §5.4), so without the keys only datagrams, their sizes and times are
//! visible: counts and rates, no flight, no ACKs, no retransmissions.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use serde::Serialize;

use crate::decode::Datagram;

/// One direction of UDP traffic between two ports.
#[derive(Clone, Debug, Serialize)]
pub struct UdpFlow {
    /// Source and destination (address:port).
    pub src: String,
    /// Destination.
    pub dst: String,
    /// Frame number of the first datagram.
    pub first_packet: u64,
    /// Datagrams.
    pub datagrams: u64,
    /// UDP payload bytes.
    pub bytes: u64,
    /// First and last datagram, s since the capture's first frame.
    pub t_first: f64,
    /// Last datagram.
    pub t_last: f64,
    /// Largest payload, bytes.
    pub max_payload: u32,
    /// Datagrams that look like QUIC long headers (first byte's top two bits set, version field
    /// nonzero): the handshake's, in clear.
    pub quic_long_headers: u64,
}

/// Every UDP direction of the capture, in the order first seen.
#[derive(Default)]
pub struct Flows {
    index: BTreeMap<(SocketAddr, SocketAddr), usize>,
    /// The flows.
    pub flows: Vec<UdpFlow>,
}

impl Flows {
    /// Counts one datagram seen at `t` ns.
    pub fn on_datagram(&mut self, d: &Datagram<'_>, number: u64, t: u64) {
        let secs = t as f64 / 1e9;
        let flows = &mut self.flows;
        let i = *self.index.entry((d.src, d.dst)).or_insert_with(|| {
            flows.push(UdpFlow {
                src: d.src.to_string(),
                dst: d.dst.to_string(),
                first_packet: number,
                datagrams: 0,
                bytes: 0,
                t_first: secs,
                t_last: secs,
                max_payload: 0,
                quic_long_headers: 0,
            });
            flows.len() - 1
        });
        let f = &mut self.flows[i];
        f.datagrams += 1;
        f.bytes += u64::from(d.payload_len);
        f.t_last = secs;
        f.max_payload = f.max_payload.max(d.payload_len);
        if d.payload.len() >= 5 && d.payload[0] & 0xC0 == 0xC0 && d.payload[1..5] != [0, 0, 0, 0] {
            f.quic_long_headers += 1;
        }
    }
}
