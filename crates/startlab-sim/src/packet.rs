//! Packets and the arena they live in: the header every hop reads, the flags the measurements
//! and the IP/TCP ECN bits use, and the two pools of reusable slots.

use startlab_cc::startup::QsRequest;
use startlab_tcp::Ack;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PktKind {
    /// TCP data.
    Data,
    /// TCP ACK (or SYN-ACK).
    Ack,
    /// TCP SYN.
    Syn,
    /// UDP cross traffic.
    Cross,
    /// An application request from a flow's receiving host to its sending host.
    Request,
}

/// Packet flags used by the measurements, and the IP ECN field and TCP flags a packet carries.
pub mod flags {
    /// Sent during the startup period (before `t_su`).
    pub const STARTUP: u16 = 1;
    /// Sent within the first `early_rtts` base RTTs after `t0`.
    pub const EARLY: u16 = 2;
    /// IP ECN field ECT(0): a classic ECN-capable transport (new TCP data of an ECN connection).
    pub const ECT: u16 = 4;
    /// IP ECN field CE: a queue marked the packet (replaces ECT(0) or ECT(1); RFC 3168 codepoint
    /// `11`).
    pub const CE: u16 = 8;
    /// TCP CWR flag (data), or with [`ECE`] the ECN-setup SYN.
    pub const CWR: u16 = 16;
    /// TCP ECE flag on a SYN (ECN setup); ACKs carry ECE in `Ack::ece`.
    pub const ECE: u16 = 32;
    /// A data segment sent before (a retransmission), for the results' `retransmissions_lost`.
    pub const RETRANSMIT: u16 = 64;
    /// IP ECN field ECT(1): an L4S transport (RFC 9331 §4; new TCP data of a `tcp.ecn = "l4s"`
    /// connection).
    pub const ECT1: u16 = 128;
    /// TCP AE flag: with [`CWR`] and [`ECE`], a SYN that asks for Accurate ECN (RFC 9768 §3.1.1).
    pub const AE: u16 = 256;

    /// The IP ECN field these flags carry.
    pub fn ip_ecn(flags: u16) -> startlab_tcp::IpEcn {
        use startlab_tcp::IpEcn;
        if flags & CE != 0 {
            IpEcn::Ce
        } else if flags & ECT1 != 0 {
            IpEcn::Ect1
        } else if flags & ECT != 0 {
            IpEcn::Ect0
        } else {
            IpEcn::NotEct
        }
    }

    /// The flags that carry IP ECN field `ecn`.
    pub fn of_ip_ecn(ecn: startlab_tcp::IpEcn) -> u16 {
        use startlab_tcp::IpEcn;
        match ecn {
            IpEcn::NotEct => 0,
            IpEcn::Ect0 => ECT,
            IpEcn::Ect1 => ECT1,
            IpEcn::Ce => CE,
        }
    }
}

/// A packet in the arena: the header every hop reads, one cache line (`align(64)`). An ACK's
/// contents (and a request's part number) are stored beside it ([`Arena::ack`]).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    /// Kind.
    pub kind: PktKind,
    /// Flow (TCP) or cross source index.
    pub flow: u32,
    /// Destination node.
    pub dst: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Data: first byte; ACK: unused.
    pub seq: u64,
    /// Data payload bytes.
    pub len: u32,
    /// [`flags`].
    pub flags: u16,
    /// IP TTL: [`INITIAL_IP_TTL`] at the sending host, decremented by every router hop.
    ///
    /// [`INITIAL_IP_TTL`]: startlab_cc::startup::INITIAL_IP_TTL
    pub ttl: u8,
    /// Quick-Start Rate Request option (RFC 4782) carried by a SYN or first data segment.
    pub qs: Option<QsRequest>,
    /// The connection of the flow slot that sent it (a `[[users]]` slot runs one connection
    /// after another; a packet of an earlier one reaching an endpoint is discarded).
    pub conn: u32,
}

/// A packet with ACK contents (an ACK, or a request whose part number rides in `ack.ack`).
#[derive(Clone, Copy, Debug)]
struct WithAck {
    header: Packet,
    ack: Ack,
}

/// A QUIC packet: the header every hop reads and the packet's frames.
#[derive(Clone, Debug)]
struct WithQuic {
    header: Packet,
    tx: Option<startlab_quic::sender::Transmit>,
}

/// The handle bit of packets stored with ACK contents.
const WITH_ACK: u32 = 1 << 31;
/// With [`WITH_ACK`]: the handle bit of QUIC packets (a third pool).
const QUIC: u32 = 1 << 30;

/// Packets live here, reused through free lists: no allocation per packet once warm.
///
/// Two pools: packets without ACK contents (data, SYNs, cross traffic: one cache line each) and
/// packets with them (ACKs, requests: three lines, of which an ACK without SACK blocks uses two). Each reuses its most recently freed slot, so a
/// sender's new data packet takes the slot a data packet just delivered left (still in the cache)
/// and never writes the 120 bytes of an ACK it does not carry; a receiver's ACK likewise takes an
/// ACK's slot. A handle with `WITH_ACK` set is in the second pool.
#[derive(Debug, Default)]
pub struct Arena {
    plain: Vec<Packet>,
    plain_free: Vec<u32>,
    acked: Vec<WithAck>,
    acked_free: Vec<u32>,
    quic: Vec<WithQuic>,
    quic_free: Vec<u32>,
}

impl Arena {
    /// Stores a packet without ACK contents, returning its handle.
    pub fn alloc(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.plain_free.pop() {
            self.plain[i as usize] = p;
            i
        } else {
            self.plain.push(p);
            debug_assert!(self.plain.len() < WITH_ACK as usize);
            (self.plain.len() - 1) as u32
        }
    }
    /// Stores a packet that carries ACK contents (an ACK, or a request's part number).
    pub fn alloc_with_ack(&mut self, p: Packet, ack: Ack) -> u32 {
        if let Some(i) = self.acked_free.pop() {
            // Only the valid SACK blocks are written (read back with `Ack::load`): an ACK without
            // blocks stays on two cache lines.
            let slot = &mut self.acked[i as usize];
            slot.header = p;
            slot.ack.store(&ack);
            i | WITH_ACK
        } else {
            self.acked.push(WithAck { header: p, ack });
            debug_assert!(self.acked.len() < WITH_ACK as usize);
            (self.acked.len() - 1) as u32 | WITH_ACK
        }
    }
    /// Stores a QUIC packet (its header for the hops, its frames for the endpoint it reaches).
    pub fn alloc_quic(&mut self, p: Packet, tx: startlab_quic::sender::Transmit) -> u32 {
        let w = WithQuic { header: p, tx: Some(tx) };
        if let Some(i) = self.quic_free.pop() {
            self.quic[i as usize] = w;
            i | WITH_ACK | QUIC
        } else {
            self.quic.push(w);
            debug_assert!(self.quic.len() < QUIC as usize);
            (self.quic.len() - 1) as u32 | WITH_ACK | QUIC
        }
    }
    /// True for a handle of [`Arena::alloc_quic`].
    #[inline]
    pub fn is_quic(i: u32) -> bool {
        i & (WITH_ACK | QUIC) == WITH_ACK | QUIC
    }
    /// Takes a QUIC packet's frames out (once, on delivery).
    pub fn take_quic(&mut self, i: u32) -> Option<startlab_quic::sender::Transmit> {
        debug_assert!(Self::is_quic(i));
        self.quic[(i & !(WITH_ACK | QUIC)) as usize].tx.take()
    }
    /// A QUIC packet's frames, still in flight (`None` for any other packet).
    pub fn quic_tx(&self, i: u32) -> Option<&startlab_quic::sender::Transmit> {
        if Self::is_quic(i) {
            self.quic[(i & !(WITH_ACK | QUIC)) as usize].tx.as_ref()
        } else {
            None
        }
    }
    /// Releases a handle.
    pub fn free(&mut self, i: u32) {
        if i & WITH_ACK != 0 {
            if i & QUIC != 0 {
                let k = i & !(WITH_ACK | QUIC);
                // The frames' memory (an ACK frame's ranges) goes now, not when the slot is reused.
                self.quic[k as usize].tx = None;
                self.quic_free.push(k);
            } else {
                self.acked_free.push(i & !WITH_ACK);
            }
        } else {
            self.plain_free.push(i);
        }
    }
    /// Reads a packet.
    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        if i & WITH_ACK != 0 {
            if i & QUIC != 0 {
                return &self.quic[(i & !(WITH_ACK | QUIC)) as usize].header;
            }
            &self.acked[(i & !WITH_ACK) as usize].header
        } else {
            &self.plain[i as usize]
        }
    }
    /// The ACK contents of a packet stored with [`Arena::alloc_with_ack`] (a default [`Ack`] for
    /// any other).
    pub fn ack(&self, i: u32) -> Ack {
        if i & WITH_ACK != 0 && i & QUIC == 0 {
            self.acked[(i & !WITH_ACK) as usize].ack.load()
        } else {
            Ack::default()
        }
    }
    /// A packet, to change in flight (a router rewriting its TTL and options).
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        if i & WITH_ACK != 0 {
            if i & QUIC != 0 {
                return &mut self.quic[(i & !(WITH_ACK | QUIC)) as usize].header;
            }
            &mut self.acked[(i & !WITH_ACK) as usize].header
        } else {
            &mut self.plain[i as usize]
        }
    }
    /// Packets alive.
    pub fn live(&self) -> usize {
        self.plain.len() - self.plain_free.len() + self.acked.len() - self.acked_free.len() + self.quic.len() - self.quic_free.len()
    }
}
