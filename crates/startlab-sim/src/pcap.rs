//! `[trace.pcap]`: capture files of chosen link directions, readable by Wireshark, tshark,
//! tcptrace and `startlab analyze`.
//!
//! A packet is captured when its transmission onto the link starts — where `tcpdump` on the
//! interface that sends it would see it: after the queue, so a packet the queue drops is not in
//! the file, and its timestamp includes its wait. (A packet an impairment loses after the queue
//! admitted it is not captured either.) Timestamps are the simulation clock in nanoseconds from
//! the run's start (1970-01-01 in a viewer's absolute time).
//!
//! Every packet gets real headers ([`Frame`]): IPv4 (TTL and ECN field as the simulator carries
//! them, DF set, a valid header checksum) and TCP or UDP with a valid checksum over a payload of
//! zero bytes. The simulator itself has no addresses, ports or initial sequence numbers; this
//! module gives them (documented in docs/PCAP.md):
//! - node `n` is `10.0.0.0 + n + 1`;
//! - a TCP flow's data sender listens on port [`SERVER_PORT`]; its receiver (the connection's
//!   active opener in a real client) uses port `1024 + (flow + connection × flows) mod 64512`;
//!   in the simulator the data sender sends the SYN, as it does here;
//! - each connection's initial sequence numbers come from a fixed mix of its flow and connection
//!   numbers (the same in every run);
//! - a QUIC flow's server uses UDP port 443, and its packets carry QUIC's long (Initial,
//!   Handshake) or short (1-RTT) header with the packet number in clear; the rest of the payload
//!   is zeros (a real capture sees it encrypted);
//! - cross traffic is UDP to the discard port 9.

use crate::packet::{flags, Packet, PktKind};
use etherparse::{IpNumber, Ipv4Header, TcpHeader, TcpOptionElement, UdpHeader};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::PcapNgWriter;
pub use pcap_file::DataLink;
use pcap_file::TsResolution;
use startlab_quic::sender::Transmit;
use startlab_quic::Space;
use startlab_scenario::{PcapFormat, PcapSpec};
use startlab_tcp::{AccEcnFeedback, Ack, IpEcn};
use startlab_units::Time;
use std::borrow::Cow;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// The TCP port a flow's data sender uses.
pub const SERVER_PORT: u16 = 5001;
/// The UDP port a QUIC flow's server uses.
pub const QUIC_PORT: u16 = 443;
/// The UDP port cross traffic is sent to (discard, RFC 863) and from.
pub const CROSS_PORT: u16 = 9;
/// Zero payload bytes for the checksums and the captured part of a payload.
static ZEROS: [u8; 65_536] = [0; 65_536];

/// The IPv4 address of node `n`.
pub fn node_address(n: u32) -> [u8; 4] {
    (0x0a00_0000u32 + n + 1).to_be_bytes()
}

/// The client's port of connection `conn` of flow `flow` among `flows`.
pub fn client_port(flow: u32, conn: u32, flows: u32) -> u16 {
    (1024 + (flow as u64 + conn as u64 * flows.max(1) as u64) % 64_512) as u16
}

/// The initial sequence number of one side of a connection (`side` 0: the data sender, 1: the
/// receiver): a fixed mix (SplitMix64's finaliser) of the flow, connection and side.
pub fn initial_seq(flow: u32, conn: u32, side: u32) -> u32 {
    let mut z = ((flow as u64) << 32 | (conn as u64) << 1 | side as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

/// Everything one captured packet's headers are made from.
pub(crate) struct Frame<'a> {
    pub p: &'a Packet,
    /// ACK contents (TCP ACKs, SYN-ACKs; a request's part number).
    pub ack: Ack,
    /// A QUIC packet's frames.
    pub quic: Option<&'a Transmit>,
    /// Sending and receiving nodes.
    pub from: u32,
    pub to: u32,
    /// The packet goes from the flow's data sender towards its receiver.
    pub downstream: bool,
    /// Flows in the run (for the client ports).
    pub flows: u32,
    /// The flow's segment size (the SYN's MSS option).
    pub mss: u32,
    /// The flow's simulated header bytes (a request's payload is its size less these).
    pub header: u32,
    /// The receiver's window scale (from the flow's receive window).
    pub wscale: u8,
    /// The request bytes the client sent before this packet, and the data sender's view of them.
    pub client_bytes: u64,
}

/// The window-scale shift that lets `rwnd` bytes (None: unlimited) be advertised in 16 bits.
pub fn window_scale(rwnd: Option<u64>) -> u8 {
    match rwnd {
        None => 14,
        Some(w) => (0..14u8).find(|&s| w >> s <= 0xffff).unwrap_or(14),
    }
}

fn ip_ecn(fl: u16) -> etherparse::IpEcn {
    match flags::ip_ecn(fl) {
        IpEcn::NotEct => etherparse::IpEcn::NotEct,
        IpEcn::Ect0 => etherparse::IpEcn::Ect0,
        IpEcn::Ect1 => etherparse::IpEcn::Ect1,
        IpEcn::Ce => etherparse::IpEcn::CongestionExperienced,
    }
}

/// A TCP option list's bytes, padded with NOPs to a multiple of four.
fn options(elems: &[TcpOptionElement], raw_tail: &[u8]) -> Vec<u8> {
    let mut h = TcpHeader::default();
    let _ = h.set_options(elems);
    let mut out = h.options.as_slice().to_vec();
    // set_options pads with END; strip the padding before appending raw options.
    while out.last() == Some(&0) {
        out.pop();
    }
    out.extend_from_slice(raw_tail);
    while out.len() % 4 != 0 {
        out.insert(0, 1);
    }
    out
}

/// The AccECN option (RFC 9768 §3.2.3, kind 172 `AccECN0`: EE0B, ECEB, EE1B, 24 bits each).
fn accecn_option(a: &AccEcnFeedback) -> [u8; 11] {
    let mut o = [0u8; 11];
    o[0] = 172;
    o[1] = 11;
    o[2..5].copy_from_slice(&(a.ee0b & 0xff_ffff).to_be_bytes()[1..]);
    o[5..8].copy_from_slice(&(a.eceb & 0xff_ffff).to_be_bytes()[1..]);
    o[8..11].copy_from_slice(&(a.ee1b & 0xff_ffff).to_be_bytes()[1..]);
    o
}

impl Frame<'_> {
    /// The packet's IP length (its headers as written plus its payload) and the bytes of its
    /// headers, appended to `out`.
    pub(crate) fn write_headers(&self, out: &mut Vec<u8>) -> u32 {
        let p = self.p;
        let (src, dst) = (node_address(self.from), node_address(self.to));
        if p.kind == PktKind::Cross {
            let payload = p.size.saturating_sub(28) as usize;
            return udp(out, src, dst, CROSS_PORT, CROSS_PORT, p.flags, p.ttl, &[], payload);
        }
        let cport = client_port(p.flow, p.conn, self.flows);
        if let Some(tx) = self.quic {
            let (sport, dport) = if self.downstream { (QUIC_PORT, cport) } else { (cport, QUIC_PORT) };
            let header = quic_header(tx, p.flow, p.conn, self.downstream);
            let payload = (tx.size as usize).saturating_sub(header.len());
            return udp(out, src, dst, sport, dport, p.flags, p.ttl, &header, payload);
        }
        let (isn_s, isn_r) = (initial_seq(p.flow, p.conn, 0), initial_seq(p.flow, p.conn, 1));
        let client_seq = isn_r.wrapping_add(1).wrapping_add(self.client_bytes as u32);
        let (sport, dport) = if self.downstream { (SERVER_PORT, cport) } else { (cport, SERVER_PORT) };
        let mut t = TcpHeader::new(sport, dport, 0, 0xffff);
        let mut payload = 0usize;
        let opts: Vec<u8>;
        match p.kind {
            PktKind::Syn => {
                t.sequence_number = isn_s;
                t.syn = true;
                t.cwr = p.flags & flags::CWR != 0;
                t.ece = p.flags & flags::ECE != 0;
                t.ns = p.flags & flags::AE != 0;
                opts = self.syn_options();
            }
            PktKind::Data => {
                t.sequence_number = isn_s.wrapping_add(1).wrapping_add(p.seq as u32);
                t.acknowledgment_number = client_seq;
                t.ack = true;
                t.psh = true;
                t.cwr = p.flags & flags::CWR != 0;
                payload = p.len as usize;
                opts = Vec::new();
            }
            PktKind::Request => {
                t.sequence_number = client_seq;
                t.acknowledgment_number = isn_s.wrapping_add(1);
                t.ack = true;
                t.psh = true;
                t.window_size = self.window();
                payload = p.size.saturating_sub(self.header) as usize;
                opts = Vec::new();
            }
            PktKind::Ack => {
                let a = &self.ack;
                t.ack = true;
                t.window_size = self.window();
                if a.syn_ack {
                    t.syn = true;
                    t.sequence_number = isn_r;
                    t.acknowledgment_number = isn_s.wrapping_add(1);
                    opts = self.syn_options();
                } else {
                    t.sequence_number = client_seq;
                    t.acknowledgment_number = isn_s.wrapping_add(1).wrapping_add(a.ack as u32);
                    let mut elems = Vec::new();
                    let mut raw = Vec::new();
                    if a.n_sack > 0 {
                        // At most three blocks beside the AccECN option (40 option bytes).
                        let n = if a.accecn.is_some() { (a.n_sack as usize).min(2) } else { a.n_sack as usize };
                        let b = |k: usize| {
                            let (s, e) = a.sack[k];
                            (isn_s.wrapping_add(1).wrapping_add(s as u32), isn_s.wrapping_add(1).wrapping_add(e as u32))
                        };
                        let mut rest = [None; 3];
                        for (k, slot) in rest.iter_mut().enumerate().take(n - 1) {
                            *slot = Some(b(k + 1));
                        }
                        elems.push(TcpOptionElement::Noop);
                        elems.push(TcpOptionElement::Noop);
                        elems.push(TcpOptionElement::SelectiveAcknowledgement(b(0), rest));
                    }
                    if let Some(acc) = &a.accecn {
                        raw.push(1);
                        raw.extend_from_slice(&accecn_option(acc));
                    }
                    opts = options(&elems, &raw);
                }
                match &a.accecn {
                    Some(acc) => {
                        t.ns = acc.ace & 4 != 0;
                        t.cwr = acc.ace & 2 != 0;
                        t.ece = acc.ace & 1 != 0;
                    }
                    None => t.ece = a.ece,
                }
            }
            PktKind::Cross => unreachable!("handled above"),
        }
        let _ = t.set_options_raw(&opts);
        let tcp_len = t.header_len() + payload;
        let mut ip = Ipv4Header::new(tcp_len.min(0xffff - 20) as u16, p.ttl, IpNumber::TCP, src, dst).expect("checked length");
        ip.dont_fragment = true;
        ip.ecn = ip_ecn(p.flags);
        ip.header_checksum = ip.calc_header_checksum();
        t.checksum = t.calc_checksum_ipv4(&ip, &ZEROS[..payload.min(ZEROS.len() - t.header_len())]).unwrap_or(0);
        out.extend_from_slice(&ip.to_bytes());
        out.extend_from_slice(&t.to_bytes());
        (20 + tcp_len) as u32
    }

    fn syn_options(&self) -> Vec<u8> {
        options(
            &[
                TcpOptionElement::MaximumSegmentSize(self.mss.min(0xffff) as u16),
                TcpOptionElement::Noop,
                TcpOptionElement::WindowScale(self.wscale),
                TcpOptionElement::Noop,
                TcpOptionElement::Noop,
                TcpOptionElement::SelectiveAcknowledgementPermitted,
            ],
            &[],
        )
    }

    fn window(&self) -> u16 {
        if self.ack.rwnd == u64::MAX {
            0xffff
        } else {
            (self.ack.rwnd >> self.wscale).min(0xffff) as u16
        }
    }
}

/// An IPv4 + UDP packet with `head` after the UDP header and `payload` zero bytes after it.
#[allow(clippy::too_many_arguments)]
fn udp(out: &mut Vec<u8>, src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, fl: u16, ttl: u8, head: &[u8], payload: usize) -> u32 {
    let udp_len = 8 + head.len() + payload;
    let udp_len = udp_len.min(0xffff - 20);
    let mut ip = Ipv4Header::new(udp_len as u16, ttl, IpNumber::UDP, src, dst).expect("checked length");
    ip.dont_fragment = true;
    ip.ecn = ip_ecn(fl);
    ip.header_checksum = ip.calc_header_checksum();
    let mut u = UdpHeader { source_port: sport, destination_port: dport, length: udp_len as u16, checksum: 0 };
    u.checksum = udp_checksum(src, dst, &u, head);
    out.extend_from_slice(&ip.to_bytes());
    out.extend_from_slice(&u.to_bytes());
    out.extend_from_slice(head);
    (20 + udp_len) as u32
}

/// RFC 768's checksum of a UDP packet whose payload is `head` and then zero bytes (which add
/// nothing to the sum).
fn udp_checksum(src: [u8; 4], dst: [u8; 4], u: &UdpHeader, head: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut add = |b: &[u8]| {
        for c in b.chunks(2) {
            sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
        }
    };
    add(&src);
    add(&dst);
    add(&[0, 17]);
    add(&u.length.to_be_bytes());
    add(&u.source_port.to_be_bytes());
    add(&u.destination_port.to_be_bytes());
    add(&u.length.to_be_bytes());
    add(head);
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let c = !(sum as u16);
    if c == 0 {
        0xffff
    } else {
        c
    }
}

/// The QUIC header of a packet (RFC 9000 §17): long for Initial and Handshake packets, short for
/// 1-RTT; 8-byte connection IDs made from the flow and connection; a 4-byte packet number in clear.
fn quic_header(tx: &Transmit, flow: u32, conn: u32, from_server: bool) -> Vec<u8> {
    let client_cid = ((flow as u64) << 32 | conn as u64 | 1 << 63).to_be_bytes();
    let server_cid = ((flow as u64) << 32 | conn as u64 | 1 << 62).to_be_bytes();
    let (dcid, scid) = if from_server { (client_cid, server_cid) } else { (server_cid, client_cid) };
    let pn = (tx.pn as u32).to_be_bytes();
    let mut h = Vec::with_capacity(48);
    match tx.space {
        Space::Initial | Space::Handshake => {
            let ty = if tx.space == Space::Initial { 0 } else { 2 };
            h.push(0xc0 | ty << 4 | 3);
            h.extend_from_slice(&1u32.to_be_bytes());
            h.push(8);
            h.extend_from_slice(&dcid);
            h.push(8);
            h.extend_from_slice(&scid);
            if tx.space == Space::Initial {
                h.push(0); // token length
            }
            // Length (packet number and payload) as a 2-byte variable-length integer.
            let rest = (tx.size as usize).saturating_sub(h.len() + 2).min(0x3fff);
            h.extend_from_slice(&(0x4000u16 | rest as u16).to_be_bytes());
            h.extend_from_slice(&pn);
        }
        Space::AppData => {
            h.push(0x40 | 3);
            h.extend_from_slice(&dcid);
            h.extend_from_slice(&pn);
        }
    }
    h
}

enum Writer {
    Ng(PcapNgWriter<BufWriter<File>>),
    Legacy(PcapWriter<BufWriter<File>>),
}

/// One capture file (pcapng with one interface, or pcap), written as packets come: what the
/// simulator's `[trace.pcap]` writes per link direction and the testbed's router per direction.
pub struct CaptureFile {
    path: PathBuf,
    writer: Option<Writer>,
    snaplen: u32,
    packets: u64,
}

impl CaptureFile {
    /// Creates `path` for packets of `linktype` (`DataLink::RAW`: IPv4 packets;
    /// `DataLink::ETHERNET`: frames), keeping at most `snaplen` bytes of each; `interface` names
    /// the pcapng interface. Nanosecond timestamps in both formats.
    pub fn create(path: &Path, format: PcapFormat, linktype: DataLink, snaplen: u32, interface: &str) -> Result<CaptureFile, String> {
        let file = File::create(path).map_err(|e| format!("cannot create capture file {}: {e}", path.display()))?;
        let w = BufWriter::with_capacity(1 << 16, file);
        let writer = match format {
            PcapFormat::Pcapng => {
                let mut w = PcapNgWriter::new(w).map_err(|e| format!("{}: {e}", path.display()))?;
                let idb = InterfaceDescriptionBlock {
                    linktype,
                    snaplen,
                    options: vec![InterfaceDescriptionOption::IfName(Cow::Owned(interface.to_string())), InterfaceDescriptionOption::IfTsResol(9)],
                };
                w.write_pcapng_block(idb).map_err(|e| format!("{}: {e}", path.display()))?;
                Writer::Ng(w)
            }
            PcapFormat::Pcap => {
                let header = PcapHeader { snaplen, datalink: linktype, ts_resolution: TsResolution::NanoSecond, ..PcapHeader::default() };
                Writer::Legacy(PcapWriter::with_header(w, header).map_err(|e| format!("{}: {e}", path.display()))?)
            }
        };
        Ok(CaptureFile { path: path.to_path_buf(), writer: Some(writer), snaplen, packets: 0 })
    }

    /// Writes one packet of `original_len` bytes seen at `ns` nanoseconds; `data` is cut to the
    /// snap length.
    pub fn write(&mut self, ns: u64, original_len: u32, data: &[u8]) -> Result<(), String> {
        let data = &data[..data.len().min(self.snaplen as usize)];
        let ts = std::time::Duration::from_nanos(ns);
        let res = match self.writer.as_mut() {
            Some(Writer::Ng(w)) => w
                .write_pcapng_block(EnhancedPacketBlock { interface_id: 0, timestamp: ts, original_len, data: Cow::Borrowed(data), options: vec![] })
                .map(|_| ()),
            Some(Writer::Legacy(w)) => w.write_packet(&PcapPacket::new(ts, original_len, data)).map(|_| ()),
            None => Ok(()),
        };
        match res {
            Ok(()) => {
                self.packets += 1;
                Ok(())
            }
            Err(e) => Err(format!("writing {}: {e}; the capture stops at packet {}", self.path.display(), self.packets + 1)),
        }
    }

    /// Flushes and closes the file; its path and the packets written.
    pub fn finish(&mut self) -> Result<(PathBuf, u64), String> {
        use std::io::Write;
        let flushed = match self.writer.take() {
            Some(Writer::Ng(w)) => w.into_inner().flush(),
            Some(Writer::Legacy(w)) => w.into_writer().flush(),
            None => Ok(()),
        };
        flushed.map_err(|e| format!("writing {}: {e}", self.path.display()))?;
        Ok((self.path.clone(), self.packets))
    }
}

/// The capture's state while running.
pub(crate) struct PcapTap {
    /// Per channel: index into `files`, or `u32::MAX` when not captured.
    channels: Vec<u32>,
    /// Per flow, then per cross source: captured.
    sources: Vec<bool>,
    files: Vec<CaptureFile>,
    snaplen: u32,
    /// Per flow: the client's request bytes seen so far, and the connection they belong to.
    client_bytes: Vec<(u32, u64)>,
    /// The first write error; capturing stopped there.
    pub error: Option<String>,
    buf: Vec<u8>,
}

impl PcapTap {
    /// Opens one file per captured direction in `dir`: `LINK-forward.pcapng` and
    /// `LINK-reverse.pcapng` (or `.pcap`). `links` are the network's link names (channel `2k` is
    /// link `k`'s forward direction, `2k + 1` its reverse); `names` the flows' then the cross
    /// sources' names.
    pub(crate) fn open(spec: &PcapSpec, dir: &Path, links: &[String], names: &[&str], flows: usize) -> Result<PcapTap, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the capture directory {}: {e}", dir.display()))?;
        let mut channels = vec![u32::MAX; links.len() * 2];
        let mut files = Vec::new();
        let ext = match spec.format {
            PcapFormat::Pcapng => "pcapng",
            PcapFormat::Pcap => "pcap",
        };
        for (name, fwd, rev) in &spec.select.links {
            let Some(k) = links.iter().position(|l| l == name) else { continue };
            for (on, c, dirname) in [(*fwd, 2 * k, "forward"), (*rev, 2 * k + 1, "reverse")] {
                if !on {
                    continue;
                }
                let path = dir.join(format!("{name}-{dirname}.{ext}"));
                let file = CaptureFile::create(&path, spec.format, DataLink::RAW, spec.snaplen, &format!("{name}-{dirname}"))?;
                channels[c] = files.len() as u32;
                files.push(file);
            }
        }
        Ok(PcapTap {
            channels,
            sources: names.iter().map(|n| spec.select.selects(n)).collect(),
            files,
            snaplen: spec.snaplen,
            client_bytes: vec![(0, 0); flows],
            error: None,
            buf: Vec::with_capacity(256),
        })
    }

    /// Whether channel `c` is captured.
    #[inline]
    pub(crate) fn captures(&self, c: u32) -> bool {
        self.channels.get(c as usize).is_some_and(|&i| i != u32::MAX)
    }

    /// Whether packets of `source` (a flow, or flows + a cross source) are captured.
    pub(crate) fn selects(&self, source: u32) -> bool {
        self.sources.get(source as usize).copied().unwrap_or(false)
    }

    /// The request bytes flow `flow`'s client sent before, on connection `conn`.
    pub(crate) fn client_bytes(&self, flow: u32, conn: u32) -> u64 {
        match self.client_bytes.get(flow as usize) {
            Some(&(c, b)) if c == conn => b,
            _ => 0,
        }
    }

    /// Writes one packet starting transmission on channel `c` at `t`.
    pub(crate) fn write(&mut self, c: u32, t: Time, frame: &Frame<'_>) {
        if self.error.is_some() {
            return;
        }
        let i = self.channels[c as usize] as usize;
        self.buf.clear();
        let len = frame.write_headers(&mut self.buf);
        let p = frame.p;
        if p.kind == PktKind::Request {
            let slot = &mut self.client_bytes[p.flow as usize];
            if slot.0 != p.conn {
                *slot = (p.conn, 0);
            }
            slot.1 += p.size.saturating_sub(frame.header) as u64;
        }
        let cap = (len.min(self.snaplen) as usize).max(self.buf.len().min(self.snaplen as usize));
        if cap > self.buf.len() {
            let more = cap - self.buf.len();
            self.buf.extend_from_slice(&ZEROS[..more]);
        }
        self.buf.truncate(cap);
        if let Err(e) = self.files[i].write(t.as_nanos(), len, &self.buf) {
            self.error = Some(e);
        }
    }

    /// Flushes and closes every file; returns each file's path and packet count.
    pub(crate) fn close(&mut self) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        for f in &mut self.files {
            let (path, packets) = (f.path.clone(), f.packets);
            if let Err(e) = f.finish() {
                self.error.get_or_insert(e);
            }
            out.push((path, packets));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    fn packet(kind: PktKind, seq: u64, len: u32, fl: u16) -> Packet {
        Packet { kind, flow: 3, dst: 7, size: len + 40, seq, len, flags: fl, ttl: 62, qs: None, conn: 0 }
    }

    fn frame<'a>(p: &'a Packet, ack: Ack, downstream: bool) -> Frame<'a> {
        Frame { p, ack, quic: None, from: if downstream { 6 } else { 7 }, to: if downstream { 7 } else { 6 }, downstream, flows: 10, mss: 1448, header: 40, wscale: 7, client_bytes: 0 }
    }

    fn build(f: &Frame<'_>) -> (Vec<u8>, u32) {
        let mut out = Vec::new();
        let len = f.write_headers(&mut out);
        // The payload as a capture with a large snap length holds it.
        let mut full = out.clone();
        full.resize(len as usize, 0);
        (full, len)
    }

    #[test]
    fn data_segment_headers_map_the_simulator_fields() {
        let p = packet(PktKind::Data, 14_480, 1448, flags::ECT | flags::CE | flags::CWR);
        let (bytes, len) = build(&frame(&p, Ack::default(), true));
        assert_eq!(len, 20 + 20 + 1448);
        let s = SlicedPacket::from_ip(&bytes).expect("parses");
        let Some(NetSlice::Ipv4(ip)) = &s.net else { panic!("not IPv4") };
        let h = ip.header();
        assert_eq!(h.source(), node_address(6));
        assert_eq!(h.destination(), node_address(7));
        assert_eq!(h.ttl(), 62);
        assert_eq!(h.ecn(), etherparse::IpEcn::CongestionExperienced);
        assert_eq!(h.to_header().calc_header_checksum(), h.header_checksum());
        let Some(TransportSlice::Tcp(t)) = &s.transport else { panic!("not TCP") };
        assert_eq!(t.source_port(), SERVER_PORT);
        assert_eq!(t.destination_port(), client_port(3, 0, 10));
        assert_eq!(t.sequence_number(), initial_seq(3, 0, 0).wrapping_add(1 + 14_480));
        assert!(t.cwr() && t.ack() && !t.syn());
        assert_eq!(t.payload().len(), 1448);
        let sum = t.to_header().calc_checksum_ipv4_raw(h.source(), h.destination(), t.payload()).unwrap();
        assert_eq!(sum, t.checksum());
    }

    #[test]
    fn ack_carries_sack_blocks_and_accecn() {
        let p = packet(PktKind::Ack, 0, 0, 0);
        let mut a = Ack { ack: 2896, rwnd: 1 << 20, n_sack: 2, ..Ack::default() };
        a.sack[0] = (5792, 7240);
        a.sack[1] = (10_136, 11_584);
        let (bytes, _) = build(&frame(&p, a, false));
        let s = SlicedPacket::from_ip(&bytes).expect("parses");
        let Some(TransportSlice::Tcp(t)) = &s.transport else { panic!("not TCP") };
        let base = initial_seq(3, 0, 0).wrapping_add(1);
        assert_eq!(t.acknowledgment_number(), base + 2896);
        assert_eq!(t.window_size(), ((1u64 << 20) >> 7) as u16);
        let sack: Vec<_> = t
            .options_iterator()
            .filter_map(|o| match o {
                Ok(TcpOptionElement::SelectiveAcknowledgement(first, rest)) => Some((first, rest)),
                _ => None,
            })
            .collect();
        assert_eq!(sack.len(), 1);
        assert_eq!(sack[0].0, (base + 5792, base + 7240));
        assert_eq!(sack[0].1[0], Some((base + 10_136, base + 11_584)));
        assert_eq!(sack[0].1[1], None);

        let acc = AccEcnFeedback { ace: 6, ee0b: 1, eceb: 0x12_3456, ee1b: 0x01_0000 };
        let a = Ack { ack: 2896, accecn: Some(acc), ..Ack::default() };
        let (bytes, _) = build(&frame(&p, a, false));
        let s = SlicedPacket::from_ip(&bytes).expect("parses");
        let Some(TransportSlice::Tcp(t)) = &s.transport else { panic!("not TCP") };
        assert!(t.ns() && t.cwr() && !t.ece(), "ACE 6 is AE and CWR");
        let opts = t.options();
        let at = opts.iter().position(|&b| b == 172).expect("AccECN option");
        assert_eq!(&opts[at..at + 11], &[172, 11, 0, 0, 1, 0x12, 0x34, 0x56, 0x01, 0, 0]);
    }

    #[test]
    fn syn_and_syn_ack_open_the_connection() {
        let syn = packet(PktKind::Syn, 0, 0, flags::ECE | flags::CWR);
        let (bytes, _) = build(&frame(&syn, Ack::default(), true));
        let s = SlicedPacket::from_ip(&bytes).expect("parses");
        let Some(TransportSlice::Tcp(t)) = &s.transport else { panic!("not TCP") };
        assert!(t.syn() && !t.ack() && t.ece() && t.cwr());
        assert_eq!(t.sequence_number(), initial_seq(3, 0, 0));
        let has = |want: &dyn Fn(&TcpOptionElement) -> bool| t.options_iterator().any(|o| o.as_ref().is_ok_and(want));
        assert!(has(&|o| matches!(o, TcpOptionElement::MaximumSegmentSize(1448))));
        assert!(has(&|o| matches!(o, TcpOptionElement::WindowScale(7))));
        assert!(has(&|o| matches!(o, TcpOptionElement::SelectiveAcknowledgementPermitted)));

        let p = packet(PktKind::Ack, 0, 0, 0);
        let (bytes, _) = build(&frame(&p, Ack { syn_ack: true, ece: true, rwnd: u64::MAX, ..Ack::default() }, false));
        let s = SlicedPacket::from_ip(&bytes).expect("parses");
        let Some(TransportSlice::Tcp(t)) = &s.transport else { panic!("not TCP") };
        assert!(t.syn() && t.ack() && t.ece());
        assert_eq!(t.sequence_number(), initial_seq(3, 0, 1));
        assert_eq!(t.acknowledgment_number(), initial_seq(3, 0, 0).wrapping_add(1));
    }

    #[test]
    fn udp_checksum_covers_the_zero_payload() {
        let p = Packet { kind: PktKind::Cross, flow: 0, dst: 9, size: 1000, seq: 0, len: 0, flags: 0, ttl: 64, qs: None, conn: 0 };
        let f = Frame { p: &p, ack: Ack::default(), quic: None, from: 8, to: 9, downstream: true, flows: 1, mss: 0, header: 0, wscale: 0, client_bytes: 0 };
        let (bytes, len) = build(&f);
        assert_eq!(len, 1000);
        let s = SlicedPacket::from_ip(&bytes).expect("parses");
        let Some(TransportSlice::Udp(u)) = &s.transport else { panic!("not UDP") };
        let sum = u.to_header().calc_checksum_ipv4_raw(node_address(8), node_address(9), u.payload()).unwrap();
        assert_eq!(sum, u.checksum());
    }

    #[test]
    fn window_scale_fits_the_window() {
        assert_eq!(window_scale(None), 14);
        assert_eq!(window_scale(Some(65_535)), 0);
        assert_eq!(window_scale(Some(65_536)), 1);
        assert_eq!(window_scale(Some(1 << 30)), 14);
    }
}
