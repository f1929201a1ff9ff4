//! startlab-udp's datagrams (crates/startlab-udp, `wire`): its TCP travels in clear inside UDP
//! (only a keyed check guards it, nothing is encrypted), so a capture of a startlab-udp transfer
//! is read as the TCP connection it carries — the same analysis as kernel TCP. The datagram is
//! decoded by startlab-udp's own structural decoder (the MAC is not checked: the key is not
//! needed to read the headers); a datagram the snapshot length cut cannot be decoded (its MAC
//! closes it) and stays a plain UDP datagram.
//!
//! Mapping: INIT is the client's SYN and INIT-ACK the server's SYN-ACK (with or without the TCP
//! handshake riding on them: their exchange is a round trip either way), DATA a segment
//! `[seq, seq + len)`, ACK the cumulative ACK and its SACK blocks. startlab's TCP numbers data from
//! 0 and its SYN takes no sequence number, so the SYN is given sequence −1 (mod 2^32). There are no
//! timestamps: RTTs come from the handshake and Karn's rule.

use startlab_udp::wire::{self, Body};

use crate::decode::{flags, Datagram, Segment, TcpOptions};

/// The TCP segment a startlab-udp datagram carries, or None when it is not one (another UDP
/// protocol, a cut datagram, CLOSE, QUIC).
pub fn segment(d: &Datagram<'_>) -> Option<Segment> {
    if d.payload.len() != d.payload_len as usize || d.payload.first() != Some(&wire::VERSION) {
        return None;
    }
    let decoded = wire::decode(d.payload).ok()?;
    let mut seg = Segment { src: d.src, dst: d.dst, seq: 0, ack: 0, flags: 0, window: u16::MAX, payload: 0, window_bytes: None, options: TcpOptions::default() };
    match decoded.body {
        Body::Init { .. } => {
            seg.seq = u32::MAX;
            seg.flags = flags::SYN;
            seg.options.sack_permitted = true;
        }
        Body::InitAck { .. } => {
            seg.seq = u32::MAX;
            seg.ack = 0;
            seg.flags = flags::SYN | flags::ACK;
            seg.options.sack_permitted = true;
        }
        Body::Data { seq, payload, .. } => {
            seg.seq = seq as u32;
            seg.payload = payload.len() as u32;
        }
        Body::Ack { ack, .. } => {
            seg.ack = ack.ack as u32;
            seg.flags = flags::ACK;
            seg.window_bytes = Some((ack.rwnd != u64::MAX).then_some(ack.rwnd));
            let n = usize::from(ack.n_sack).min(ack.sack.len()).min(seg.options.sack.len());
            for (i, &(l, r)) in ack.sack.iter().take(n).enumerate() {
                seg.options.sack[i] = (l as u32, r as u32);
            }
            seg.options.sack_count = n as u8;
        }
        _ => return None,
    }
    Some(seg)
}
