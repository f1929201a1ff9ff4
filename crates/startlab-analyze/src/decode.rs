//! A frame's headers: link layer, IPv4/IPv6 and TCP or UDP, parsed by `etherparse` (lax mode, so
//! that a frame the snapshot length cut inside its payload still yields its headers).

use std::net::{IpAddr, SocketAddr};

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket, TcpOptionElement, TcpSlice, TransportSlice, UdpSlice};

use crate::capture::{Frame, Link};

/// TCP flag bits as in the header's flags byte.
pub mod flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// ACK.
    pub const ACK: u8 = 0x10;
    /// ECE.
    pub const ECE: u8 = 0x40;
    /// CWR.
    pub const CWR: u8 = 0x80;
}

/// The TCP options the analysis reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// Maximum segment size (SYN only), bytes.
    pub mss: Option<u16>,
    /// Window scale shift (SYN only).
    pub wscale: Option<u8>,
    /// SACK permitted (SYN only).
    pub sack_permitted: bool,
    /// Timestamps: (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (left edge, right edge), in the order sent; the first `sack_count` are valid.
    pub sack: [(u32, u32); 4],
    /// How many SACK blocks the segment carries.
    pub sack_count: u8,
}

/// One TCP segment as the capture shows it.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// Source address and port.
    pub src: SocketAddr,
    /// Destination address and port.
    pub dst: SocketAddr,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number (valid when `flags` has ACK).
    pub ack: u32,
    /// Flag bits ([`flags`]).
    pub flags: u8,
    /// The window field, unscaled.
    pub window: u16,
    /// Payload bytes on the wire (from the IP length, not from what was captured).
    pub payload: u32,
    /// The advertised window in bytes when the transport says it directly (startlab-udp's ACKs:
    /// None there means unlimited); None for TCP, whose window is `window` scaled.
    pub window_bytes: Option<Option<u64>>,
    /// Options.
    pub options: TcpOptions,
}

/// One UDP datagram as the capture shows it.
#[derive(Clone, Copy, Debug)]
pub struct Datagram<'a> {
    /// Source address and port.
    pub src: SocketAddr,
    /// Destination address and port.
    pub dst: SocketAddr,
    /// Payload bytes on the wire.
    pub payload_len: u32,
    /// The captured payload (may be shorter than `payload_len`).
    pub payload: &'a [u8],
}

/// What a frame was.
#[derive(Debug)]
pub enum Decoded<'a> {
    /// A TCP segment.
    Tcp(Segment),
    /// A UDP datagram.
    Udp(Datagram<'a>),
    /// Not analysed: why (a short key for the counts) and, for the damaged ones, a sentence.
    Skipped(Skip),
}

/// Why a frame was not analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// Not IPv4/IPv6 (ARP, LLDP, ...).
    NotIp,
    /// IP, but neither TCP nor UDP (ICMP, ...).
    OtherProtocol,
    /// A fragment of an IP datagram (not reassembled).
    Fragment,
    /// A link type the analysis does not read.
    UnsupportedLink(String),
    /// The snapshot length cut the frame inside its headers: the sentence says which.
    CutHeaders(String),
    /// A header that cannot be parsed.
    Malformed(String),
}

impl Skip {
    /// A short name for the counts of the report.
    pub fn key(&self) -> &'static str {
        match self {
            Skip::NotIp => "not-ip",
            Skip::OtherProtocol => "not-tcp-or-udp",
            Skip::Fragment => "ip-fragment",
            Skip::UnsupportedLink(_) => "unsupported-link-type",
            Skip::CutHeaders(_) => "headers-cut-by-snaplen",
            Skip::Malformed(_) => "malformed",
        }
    }
}

fn cut(frame: &Frame<'_>, what: &str) -> Skip {
    Skip::CutHeaders(format!("{what} cut by the snapshot length ({} of {} bytes captured)", frame.data.len(), frame.orig_len))
}

/// The headers of `frame`.
pub fn decode<'a>(frame: &Frame<'a>) -> Decoded<'a> {
    let data = frame.data;
    let sliced = match frame.link {
        Link::Ethernet => match LaxSlicedPacket::from_ethernet(data) {
            Ok(p) => p,
            Err(_) => return Decoded::Skipped(cut(frame, "the Ethernet header")),
        },
        Link::Raw | Link::Ipv4 | Link::Ipv6 => match LaxSlicedPacket::from_ip(data) {
            Ok(p) => p,
            Err(e) => return Decoded::Skipped(ip_error(frame, &e.to_string())),
        },
        Link::Sll => {
            if data.len() < 16 {
                return Decoded::Skipped(cut(frame, "the Linux cooked (SLL) header"));
            }
            LaxSlicedPacket::from_ether_type(EtherType(u16::from_be_bytes([data[14], data[15]])), &data[16..])
        }
        Link::Sll2 => {
            if data.len() < 20 {
                return Decoded::Skipped(cut(frame, "the Linux cooked v2 (SLL2) header"));
            }
            LaxSlicedPacket::from_ether_type(EtherType(u16::from_be_bytes([data[0], data[1]])), &data[20..])
        }
        Link::Other(_) | Link::Untimed => return Decoded::Skipped(Skip::UnsupportedLink(frame.link.name())),
    };
    let Some(net) = &sliced.net else {
        return Decoded::Skipped(match &sliced.stop_err {
            Some((e, _)) if is_len_error(&e.to_string()) => cut(frame, "the IP header"),
            Some((e, _)) if sliced.link.is_some() && !matches!(frame.link, Link::Ethernet) || ether_is_ip(&sliced) => {
                Skip::Malformed(format!("the IP header cannot be read: {e}"))
            }
            _ => Skip::NotIp,
        });
    };
    let (src_ip, dst_ip, ip_start, ip_wire_end) = match net {
        LaxNetSlice::Ipv4(v4) => {
            let h = v4.header();
            let start = h.slice().as_ptr() as usize;
            (IpAddr::V4(h.source_addr()), IpAddr::V4(h.destination_addr()), start, usize::from(h.total_len()))
        }
        LaxNetSlice::Ipv6(v6) => {
            let h = v6.header();
            let start = h.slice().as_ptr() as usize;
            (IpAddr::V6(h.source_addr()), IpAddr::V6(h.destination_addr()), start, 40 + usize::from(h.payload_length()))
        }
        LaxNetSlice::Arp(_) => return Decoded::Skipped(Skip::NotIp),
    };
    let Some(payload) = net.ip_payload_ref() else { return Decoded::Skipped(Skip::NotIp) };
    if payload.fragmented {
        return Decoded::Skipped(Skip::Fragment);
    }
    // The transport segment's length on the wire: the IP header's length, less the IP header(s).
    let offset = payload.payload.as_ptr() as usize - ip_start;
    let wire_len = if ip_wire_end > offset { ip_wire_end - offset } else { payload.payload.len() };
    let number = payload.ip_number;
    if number == etherparse::IpNumber::TCP {
        let tcp = match TcpSlice::from_slice(payload.payload) {
            Ok(t) => t,
            Err(e) => {
                return Decoded::Skipped(if payload.incomplete || is_len_error(&e.to_string()) {
                    cut(frame, "the TCP header")
                } else {
                    Skip::Malformed(format!("the TCP header cannot be read: {e}"))
                })
            }
        };
        let header = tcp.header_slice().len();
        let mut options = TcpOptions::default();
        for o in tcp.options_iterator() {
            match o {
                Ok(TcpOptionElement::MaximumSegmentSize(m)) => options.mss = Some(m),
                Ok(TcpOptionElement::WindowScale(w)) => options.wscale = Some(w),
                Ok(TcpOptionElement::SelectiveAcknowledgementPermitted) => options.sack_permitted = true,
                Ok(TcpOptionElement::Timestamp(v, e)) => options.timestamps = Some((v, e)),
                Ok(TcpOptionElement::SelectiveAcknowledgement(first, rest)) => {
                    options.sack[0] = first;
                    options.sack_count = 1;
                    for b in rest.iter().flatten() {
                        options.sack[usize::from(options.sack_count)] = *b;
                        options.sack_count += 1;
                    }
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let flag_byte = tcp.header_slice()[13];
        return Decoded::Tcp(Segment {
            src: SocketAddr::new(src_ip, tcp.source_port()),
            dst: SocketAddr::new(dst_ip, tcp.destination_port()),
            seq: tcp.sequence_number(),
            ack: tcp.acknowledgment_number(),
            flags: flag_byte,
            window: tcp.window_size(),
            payload: u32::try_from(wire_len.saturating_sub(header)).unwrap_or(u32::MAX),
            window_bytes: None,
            options,
        });
    }
    if number == etherparse::IpNumber::UDP {
        return match &sliced.transport {
            Some(TransportSlice::Udp(u)) => Decoded::Udp(udp(u, src_ip, dst_ip, wire_len)),
            _ => match UdpSlice::from_slice_lax(payload.payload) {
                Ok(u) => Decoded::Udp(udp(&u, src_ip, dst_ip, wire_len)),
                Err(_) => Decoded::Skipped(cut(frame, "the UDP header")),
            },
        };
    }
    Decoded::Skipped(Skip::OtherProtocol)
}

fn udp<'a>(u: &UdpSlice<'a>, src: IpAddr, dst: IpAddr, wire_len: usize) -> Datagram<'a> {
    Datagram {
        src: SocketAddr::new(src, u.source_port()),
        dst: SocketAddr::new(dst, u.destination_port()),
        payload_len: u32::try_from(wire_len.saturating_sub(8)).unwrap_or(u32::MAX),
        payload: u.payload(),
    }
}

fn is_len_error(message: &str) -> bool {
    message.contains("length") || message.contains("len ") || message.contains("Not enough")
}

fn ether_is_ip(p: &LaxSlicedPacket<'_>) -> bool {
    use etherparse::LinkSlice;
    matches!(&p.link, Some(LinkSlice::Ethernet2(e)) if e.ether_type() == EtherType::IPV4 || e.ether_type() == EtherType::IPV6)
}

fn ip_error(frame: &Frame<'_>, message: &str) -> Skip {
    if frame.data.is_empty() || is_len_error(message) {
        cut(frame, "the IP header")
    } else {
        Skip::Malformed(format!("the IP header cannot be read: {message}"))
    }
}
