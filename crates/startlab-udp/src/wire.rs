//! The datagram format (the table is in the crate documentation): encoding, structural decoding
//! and the keyed check.
//!
//! [`decode`] reads the structure only and never trusts a length it has not checked against the
//! datagram's size: a datagram cut short is [`DropReason::Truncated`], one with bytes left over, an
//! unknown type, a flag a type does not define or a field out of range is
//! [`DropReason::Malformed`]. [`verify`] checks the MAC; the endpoints check the connection id, the
//! MAC and the packet number (anti-replay) in that order after a successful decode.

use startlab_tcp::{Ack, AckPolicy, ReceiverConfig, MAX_SACK_BLOCKS};
use startlab_units::Dur;

mod quic;
pub use quic::{qflags, QuicDatagram, QuicSettings, MAX_ACK_RANGES, QUIC_INIT_LEN, VARINT_MAX};

/// Wire format version (the first byte of every datagram).
pub const VERSION: u8 = 2;
/// Length of the shared key in bytes (a BLAKE3 key).
pub const KEY_LEN: usize = 32;
/// Length of the keyed check at the end of every datagram: BLAKE3 keyed hash truncated to 128 bits.
pub const MAC_LEN: usize = 16;
/// Common header: version (1), type (1), flags (1), connection id (8), packet number (8).
pub const HEADER_LEN: usize = 19;
/// The address-verification token (echoed by DATA until the server confirms the address).
pub const TOKEN_LEN: usize = 8;
/// Bytes a DATA datagram adds to its payload of `len` bytes: header, `seq` (8), `len` (2) and MAC.
/// The UDP payload of a DATA datagram is `len + DATA_OVERHEAD` (plus [`TOKEN_LEN`] while the
/// client echoes the token); an IPv4 packet adds 28 bytes of IP and UDP header to that.
pub const DATA_OVERHEAD: usize = HEADER_LEN + 10 + MAC_LEN;
// MSS 1448 with the token, UDP and IPv4 headers fits the testbed's 1600-byte MTU.
const _: () = assert!(1448 + DATA_OVERHEAD + TOKEN_LEN + 28 <= 1600);

/// The largest UDP payload (IPv4: 65 535 − 20 − 8).
pub const MAX_DATAGRAM: usize = 65_507;
/// The largest MSS the format carries (DATA with token in one UDP datagram).
pub const MAX_MSS: u32 = (MAX_DATAGRAM - DATA_OVERHEAD - TOKEN_LEN) as u32;
/// The longest delayed-ACK timer an INIT may ask for (a longer one is malformed).
pub const MAX_ACK_TIMEOUT: Dur = Dur::from_secs(60);

/// A shared 32-byte key.
pub type Key = [u8; KEY_LEN];

/// Datagram types; each travels in one direction only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Client → server: opens the connection, carries the receiver settings and the TCP SYN.
    Init = 1,
    /// Server → client: the address-verification token and the TCP SYN-ACK.
    InitAck = 2,
    /// Client → server: one TCP data segment.
    Data = 3,
    /// Server → client: one TCP acknowledgement.
    Ack = 4,
    /// Client → server: the transfer is over.
    Close = 5,
    /// Server → client: the CLOSE arrived.
    CloseAck = 6,
    /// Either way: one QUIC packet ([`QuicDatagram`]).
    Quic = 7,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Init,
            2 => Kind::InitAck,
            3 => Kind::Data,
            4 => Kind::Ack,
            5 => Kind::Close,
            6 => Kind::CloseAck,
            7 => Kind::Quic,
            _ => return None,
        })
    }

    /// Sent by the client (the data sender) only. QUIC datagrams travel both ways (false).
    pub fn from_client(self) -> bool {
        matches!(self, Kind::Init | Kind::Data | Kind::Close)
    }
}

/// Flag bits (byte 2). Each type allows only its own bits; any other set bit is malformed.
pub mod flags {
    /// INIT: the TCP SYN rides on this INIT (`tcp.handshake = true`).
    pub const SYN: u8 = 0x01;
    /// INIT: the flow runs QUIC; the fields are [`QuicSettings`](super::QuicSettings) and the
    /// datagram is padded to [`QUIC_INIT_LEN`](super::QUIC_INIT_LEN) bytes (no SYN, ECE or CWR).
    pub const QUIC: u8 = 0x08;
    /// INIT: ECE on the SYN; INIT_ACK / ACK: ECN-Echo.
    pub const ECE: u8 = 0x02;
    /// INIT: CWR on the SYN; DATA: CWR.
    pub const CWR: u8 = 0x04;
    /// DATA: a retransmission.
    pub const RETRANSMIT: u8 = 0x08;
    /// DATA: the segment is ECN-capable (ECT(0) is also set in the IP header).
    pub const ECT: u8 = 0x10;
    /// DATA: the token field is present.
    pub const TOKEN: u8 = 0x20;
    /// INIT_ACK: the SYN-ACK's acknowledgement fields follow the token.
    pub const SYN_ACK: u8 = 0x01;
    /// INIT_ACK / ACK: released by the delayed-ACK timer.
    pub const TIMER: u8 = 0x08;
    /// ACK: the server has verified the client's address (stop echoing the token).
    pub const VERIFIED: u8 = 0x10;
}

/// Why a datagram was dropped; each reason has its counter in [`crate::DropCounts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Shorter than its header, its fields or its declared payload.
    Truncated,
    /// Unknown type or flag, a field out of range, or bytes left over.
    Malformed,
    /// The version byte is not [`VERSION`].
    WrongVersion,
    /// Not this endpoint's connection (or a second connection at a busy server).
    UnknownConnection,
    /// The keyed check failed (spoofed or corrupted).
    BadMac,
    /// A packet number seen before, or older than the anti-replay window.
    Replayed,
    /// A type that travels the other way (a reflected datagram).
    UnexpectedType,
    /// At the server: from an address other than the connection's peer.
    WrongPeer,
}

/// The receiver settings an INIT carries: everything the server needs to build the scenario's
/// receiver (the simulator's mapping of `tcp.ack`, `tcp.recovery`, `tcp.sack_blocks`,
/// `tcp.rwnd` and `tcp.mss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// ACK policy with its timers and quick-ACK budget.
    pub policy: AckPolicy,
    /// Report SACK blocks (`tcp.recovery = "sack"`).
    pub sack: bool,
    /// SACK blocks per ACK (0 to 4).
    pub max_sack_blocks: u8,
    /// Advertised window in bytes (`u64::MAX`: unlimited).
    pub rwnd: u64,
    /// Receiver MSS in bytes (1 to [`MAX_MSS`]).
    pub mss: u32,
}

impl Settings {
    /// The receiver configuration these settings build (never AccECN: the datagram format carries
    /// RFC 3168 feedback only, and `send` refuses `tcp.ecn = "l4s"`).
    pub fn receiver_config(&self) -> ReceiverConfig {
        ReceiverConfig { policy: self.policy, sack: self.sack, max_sack_blocks: self.max_sack_blocks as usize, rwnd: self.rwnd, mss: self.mss as u64, accecn: false }
    }

    fn valid(&self) -> bool {
        let timer_ok = |t: Dur| t <= MAX_ACK_TIMEOUT;
        let policy_ok = match self.policy {
            AckPolicy::EveryPacket => true,
            AckPolicy::Delayed { timeout } => timer_ok(timeout),
            AckPolicy::QuickAck { timeout, .. } => timer_ok(timeout),
        };
        policy_ok && self.max_sack_blocks as usize <= MAX_SACK_BLOCKS && self.rwnd > 0 && (1..=MAX_MSS).contains(&self.mss)
    }
}

/// Why the client closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The flow's `size` was acknowledged.
    Completed = 0,
    /// The caller's duration limit ended the flow.
    DurationLimit = 1,
}

impl CloseReason {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::Completed => "completed",
            CloseReason::DurationLimit => "duration-limit",
        }
    }
}

/// The type-specific part of a datagram.
#[derive(Clone, Debug, PartialEq)]
pub enum Body<'a> {
    /// Opens the connection.
    Init {
        /// The TCP SYN rides on it.
        syn: bool,
        /// ECE on the SYN (ECN setup with `cwr`).
        ece: bool,
        /// CWR on the SYN.
        cwr: bool,
        /// The receiver to build.
        settings: Settings,
    },
    /// Opens a QUIC connection (INIT with the `QUIC` flag).
    InitQuic {
        /// The QUIC client to build.
        settings: QuicSettings,
    },
    /// Accepts the connection.
    InitAck {
        /// Random address-verification token the client echoes.
        token: u64,
        /// The TCP SYN-ACK (`syn_ack` set, no SACK, no Quick-Start), when the INIT carried a SYN.
        syn_ack: Option<Ack>,
    },
    /// One data segment `[seq, seq + payload.len())`.
    Data {
        /// First byte.
        seq: u64,
        /// Sent before.
        retransmit: bool,
        /// ECN-capable.
        ect: bool,
        /// CWR.
        cwr: bool,
        /// The echoed token, while the address is unverified.
        token: Option<u64>,
        /// Payload (any bytes; at most [`MAX_MSS`]).
        payload: &'a [u8],
    },
    /// An acknowledgement (never a SYN-ACK; never carries Quick-Start).
    Ack {
        /// The TCP ACK.
        ack: Ack,
        /// The server has verified the client's address.
        verified: bool,
        /// How long the server held this ACK after the event that caused it (the kernel's arrival
        /// stamp of the data, or the delayed-ACK deadline), in ns, saturating: its host's wake-up
        /// and processing delay. The client times the ACK as if sent without it, as a kernel
        /// receiver, ACKing in softirq, would have (QUIC's ACK Delay plays the same part).
        delay_ns: u32,
    },
    /// Ends the connection.
    Close {
        /// Why.
        reason: CloseReason,
    },
    /// Confirms a CLOSE.
    CloseAck,
    /// One QUIC packet.
    Quic(QuicDatagram),
}

impl Body<'_> {
    /// The datagram type of this body.
    pub fn kind(&self) -> Kind {
        match self {
            Body::Init { .. } | Body::InitQuic { .. } => Kind::Init,
            Body::InitAck { .. } => Kind::InitAck,
            Body::Data { .. } => Kind::Data,
            Body::Ack { .. } => Kind::Ack,
            Body::Close { .. } => Kind::Close,
            Body::CloseAck => Kind::CloseAck,
            Body::Quic(_) => Kind::Quic,
        }
    }
}

/// A decoded datagram (structure only: [`verify`] checks the MAC).
#[derive(Clone, Debug, PartialEq)]
pub struct Datagram<'a> {
    /// Connection id (chosen at random by the client).
    pub conn: u64,
    /// Packet number: strictly increasing per direction, never reused.
    pub pn: u64,
    /// Type-specific fields.
    pub body: Body<'a>,
}

/// Bytes [`encode`] writes for `d`.
pub fn encoded_len(d: &Datagram<'_>) -> usize {
    HEADER_LEN
        + MAC_LEN
        + match &d.body {
            Body::Init { .. } => INIT_LEN,
            Body::InitQuic { .. } => QUIC_INIT_LEN - HEADER_LEN - MAC_LEN,
            Body::Quic(q) => quic::body_len(q),
            Body::InitAck { syn_ack, .. } => TOKEN_LEN + syn_ack.as_ref().map_or(0, ack_len),
            Body::Data { token, payload, .. } => 10 + if token.is_some() { TOKEN_LEN } else { 0 } + payload.len(),
            Body::Ack { ack, .. } => ack_len(ack) + 4,
            Body::Close { .. } => 1,
            Body::CloseAck => 0,
        }
}

/// INIT fields: policy (1), sack (1), max SACK blocks (1), quick-ACK budget (4), ACK timer in ns
/// (8), rwnd (8), MSS (4).
const INIT_LEN: usize = 27;

/// ACK fields: cumulative ACK (8), rwnd (8), segments (4), SACK block count (1), then the blocks
/// as (start, end) pairs of 8 bytes each (an ACK datagram then adds its delay, 4).
fn ack_len(a: &Ack) -> usize {
    21 + 16 * a.n_sack as usize
}

/// Writes `d` into `buf` with its MAC under `key`; returns the datagram's length.
///
/// Panics if `buf` is shorter than [`encoded_len`] or a DATA payload is longer than [`MAX_MSS`]
/// (both are the caller's bugs, never a peer's doing).
pub fn encode(key: &Key, buf: &mut [u8], d: &Datagram<'_>) -> usize {
    let n = encoded_len(d);
    let mut w = Writer { buf: &mut buf[..n], at: 0 };
    w.u8(VERSION);
    w.u8(d.body.kind() as u8);
    let bit = |on: bool, b: u8| if on { b } else { 0 };
    let fl = match &d.body {
        Body::Init { syn, ece, cwr, .. } => bit(*syn, flags::SYN) | bit(*ece, flags::ECE) | bit(*cwr, flags::CWR),
        Body::InitAck { syn_ack, .. } => match syn_ack {
            Some(a) => flags::SYN_ACK | bit(a.ece, flags::ECE) | bit(a.timer_triggered, flags::TIMER),
            None => 0,
        },
        Body::Data { retransmit, ect, cwr, token, .. } => {
            bit(*retransmit, flags::RETRANSMIT) | bit(*ect, flags::ECT) | bit(*cwr, flags::CWR) | bit(token.is_some(), flags::TOKEN)
        }
        Body::Ack { ack, verified, .. } => bit(ack.ece, flags::ECE) | bit(ack.timer_triggered, flags::TIMER) | bit(*verified, flags::VERIFIED),
        Body::InitQuic { .. } => flags::QUIC,
        Body::Quic(q) => quic::flags_of(q),
        Body::Close { .. } | Body::CloseAck => 0,
    };
    w.u8(fl);
    w.u64(d.conn);
    w.u64(d.pn);
    match &d.body {
        Body::Init { settings: s, .. } => {
            let (policy, budget, timeout) = match s.policy {
                AckPolicy::EveryPacket => (0, 0, Dur::ZERO),
                AckPolicy::Delayed { timeout } => (1, 0, timeout),
                AckPolicy::QuickAck { budget, timeout } => (2, budget, timeout),
            };
            w.u8(policy);
            w.u8(s.sack as u8);
            w.u8(s.max_sack_blocks);
            w.u32(budget);
            w.u64(timeout.as_nanos());
            w.u64(s.rwnd);
            w.u32(s.mss);
        }
        Body::InitAck { token, syn_ack } => {
            w.u64(*token);
            if let Some(a) = syn_ack {
                w.ack(a);
            }
        }
        Body::Data { seq, token, payload, .. } => {
            assert!(payload.len() <= MAX_MSS as usize, "DATA payload of {} bytes is over MAX_MSS", payload.len());
            w.u64(*seq);
            w.u16(payload.len() as u16);
            if let Some(t) = token {
                w.u64(*t);
            }
            w.bytes(payload);
        }
        Body::Ack { ack, delay_ns, .. } => {
            w.ack(ack);
            w.u32(*delay_ns);
        }
        Body::Close { reason } => w.u8(*reason as u8),
        Body::CloseAck => {}
        Body::InitQuic { settings } => {
            assert!(quic::settings_fit(settings), "QUIC settings longer than an INIT");
            quic::write_settings(&mut w, settings, n - MAC_LEN - HEADER_LEN);
        }
        Body::Quic(q) => quic::write_packet(&mut w, q, n - MAC_LEN - HEADER_LEN),
    }
    let mac = mac(key, &w.buf[..n - MAC_LEN]);
    w.bytes(&mac);
    debug_assert_eq!(w.at, n);
    n
}

/// The keyed check of `bytes`: BLAKE3 keyed hash truncated to [`MAC_LEN`] bytes.
fn mac(key: &Key, bytes: &[u8]) -> [u8; MAC_LEN] {
    let full = blake3::keyed_hash(key, bytes);
    let mut out = [0; MAC_LEN];
    out.copy_from_slice(&full.as_bytes()[..MAC_LEN]);
    out
}

/// True if the datagram's last [`MAC_LEN`] bytes are the keyed check of the bytes before them
/// (compared in constant time). Any input is safe: a datagram too short to hold a MAC fails.
pub fn verify(key: &Key, datagram: &[u8]) -> bool {
    let Some(split) = datagram.len().checked_sub(MAC_LEN) else { return false };
    let expected = mac(key, &datagram[..split]);
    let diff = expected.iter().zip(&datagram[split..]).fold(0u8, |acc, (a, b)| acc | (a ^ b));
    diff == 0
}

/// Reads a datagram's structure. Never panics, whatever the bytes; allocates only a QUIC ACK frame's
/// ranges (at most [`MAX_ACK_RANGES`]).
pub fn decode(datagram: &[u8]) -> Result<Datagram<'_>, DropReason> {
    match datagram.first() {
        None => return Err(DropReason::Truncated),
        Some(&v) if v != VERSION => return Err(DropReason::WrongVersion),
        Some(_) => {}
    }
    if datagram.len() < HEADER_LEN + MAC_LEN {
        return Err(DropReason::Truncated);
    }
    let mut r = Reader { buf: &datagram[..datagram.len() - MAC_LEN], at: 1 };
    let kind = Kind::from_u8(r.u8()?).ok_or(DropReason::Malformed)?;
    let fl = r.u8()?;
    let conn = r.u64()?;
    let pn = r.u64()?;
    let allowed = match kind {
        Kind::Init => flags::SYN | flags::ECE | flags::CWR | flags::QUIC,
        Kind::InitAck => flags::SYN_ACK | flags::ECE | flags::TIMER,
        Kind::Data => flags::RETRANSMIT | flags::ECT | flags::CWR | flags::TOKEN,
        Kind::Ack => flags::ECE | flags::TIMER | flags::VERIFIED,
        Kind::Close | Kind::CloseAck => 0,
        Kind::Quic => 0xff,
    };
    if fl & !allowed != 0 {
        return Err(DropReason::Malformed);
    }
    let has = |b: u8| fl & b != 0;
    let body = match kind {
        Kind::Init if has(flags::QUIC) => {
            if has(flags::SYN | flags::ECE | flags::CWR) {
                return Err(DropReason::Malformed);
            }
            Body::InitQuic { settings: quic::read_settings(&mut r)? }
        }
        Kind::Quic => Body::Quic(quic::read_packet(&mut r, fl)?),
        Kind::Init => {
            let (policy, sack, blocks, budget, timeout, rwnd, mss) = (r.u8()?, r.u8()?, r.u8()?, r.u32()?, Dur(r.u64()?), r.u64()?, r.u32()?);
            let policy = match (policy, budget, timeout) {
                (0, 0, Dur::ZERO) => AckPolicy::EveryPacket,
                (1, 0, timeout) => AckPolicy::Delayed { timeout },
                (2, budget, timeout) => AckPolicy::QuickAck { budget, timeout },
                _ => return Err(DropReason::Malformed),
            };
            let sack = match sack {
                0 => false,
                1 => true,
                _ => return Err(DropReason::Malformed),
            };
            let settings = Settings { policy, sack, max_sack_blocks: blocks, rwnd, mss };
            // ECE and CWR belong to the SYN.
            if !settings.valid() || (!has(flags::SYN) && has(flags::ECE | flags::CWR)) {
                return Err(DropReason::Malformed);
            }
            Body::Init { syn: has(flags::SYN), ece: has(flags::ECE), cwr: has(flags::CWR), settings }
        }
        Kind::InitAck => {
            let token = r.u64()?;
            let syn_ack = if has(flags::SYN_ACK) {
                let mut a = r.ack()?;
                a.syn_ack = true;
                a.ece = has(flags::ECE);
                a.timer_triggered = has(flags::TIMER);
                Some(a)
            } else if has(flags::ECE | flags::TIMER) {
                return Err(DropReason::Malformed);
            } else {
                None
            };
            Body::InitAck { token, syn_ack }
        }
        Kind::Data => {
            let seq = r.u64()?;
            let len = r.u16()? as usize;
            let token = if has(flags::TOKEN) { Some(r.u64()?) } else { None };
            if len > MAX_MSS as usize {
                return Err(DropReason::Malformed);
            }
            let payload = r.bytes(len)?;
            Body::Data { seq, retransmit: has(flags::RETRANSMIT), ect: has(flags::ECT), cwr: has(flags::CWR), token, payload }
        }
        Kind::Ack => {
            let mut ack = r.ack()?;
            ack.ece = has(flags::ECE);
            ack.timer_triggered = has(flags::TIMER);
            Body::Ack { ack, verified: has(flags::VERIFIED), delay_ns: r.u32()? }
        }
        Kind::Close => Body::Close {
            reason: match r.u8()? {
                0 => CloseReason::Completed,
                1 => CloseReason::DurationLimit,
                _ => return Err(DropReason::Malformed),
            },
        },
        Kind::CloseAck => Body::CloseAck,
    };
    if r.at != r.buf.len() {
        return Err(DropReason::Malformed);
    }
    Ok(Datagram { conn, pn, body })
}

struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn bytes(&mut self, b: &[u8]) {
        self.buf[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }
    fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_be_bytes());
    }
    fn ack(&mut self, a: &Ack) {
        self.u64(a.ack);
        self.u64(a.rwnd);
        self.u32(a.segments);
        self.u8(a.n_sack);
        for &(s, e) in a.sack_blocks() {
            self.u64(s);
            self.u64(e);
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], DropReason> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or(DropReason::Truncated)?;
        let b = &self.buf[self.at..end];
        self.at = end;
        Ok(b)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DropReason> {
        let mut out = [0; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, DropReason> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, DropReason> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, DropReason> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, DropReason> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    /// The ACK fields; SACK blocks must be non-empty ranges, at most [`MAX_SACK_BLOCKS`].
    fn ack(&mut self) -> Result<Ack, DropReason> {
        let mut a = Ack { ack: self.u64()?, rwnd: self.u64()?, segments: self.u32()?, n_sack: self.u8()?, ..Ack::default() };
        if a.n_sack as usize > MAX_SACK_BLOCKS {
            return Err(DropReason::Malformed);
        }
        for i in 0..a.n_sack as usize {
            let (s, e) = (self.u64()?, self.u64()?);
            if s >= e {
                return Err(DropReason::Malformed);
            }
            a.sack[i] = (s, e);
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: Key = [7; KEY_LEN];

    fn arb_dur() -> impl Strategy<Value = Dur> {
        (0..=MAX_ACK_TIMEOUT.as_nanos()).prop_map(Dur)
    }

    fn arb_settings() -> impl Strategy<Value = Settings> {
        let policy = prop_oneof![
            Just(AckPolicy::EveryPacket),
            arb_dur().prop_map(|timeout| AckPolicy::Delayed { timeout }),
            (any::<u32>(), arb_dur()).prop_map(|(budget, timeout)| AckPolicy::QuickAck { budget, timeout }),
        ];
        (policy, any::<bool>(), 0..=MAX_SACK_BLOCKS as u8, 1..=u64::MAX, 1..=MAX_MSS).prop_map(|(policy, sack, max_sack_blocks, rwnd, mss)| Settings {
            policy,
            sack,
            max_sack_blocks,
            rwnd,
            mss,
        })
    }

    fn arb_ack() -> impl Strategy<Value = Ack> {
        let block = (0..u64::MAX - 1).prop_flat_map(|s| (Just(s), s + 1..=u64::MAX));
        (any::<u64>(), any::<u64>(), any::<u32>(), prop::collection::vec(block, 0..=MAX_SACK_BLOCKS), any::<bool>(), any::<bool>()).prop_map(
            |(ack, rwnd, segments, blocks, ece, timer_triggered)| {
                let mut a = Ack { ack, rwnd, segments, ece, timer_triggered, n_sack: blocks.len() as u8, ..Ack::default() };
                a.sack[..blocks.len()].copy_from_slice(&blocks);
                a
            },
        )
    }

    /// The ingredients of any valid datagram (the DATA payload owned here).
    #[derive(Debug)]
    struct Parts {
        conn: u64,
        pn: u64,
        kind: u8,
        payload: Vec<u8>,
        settings: Settings,
        ack: Ack,
        b: [bool; 5],
        token: Option<u64>,
        seq: u64,
    }

    fn arb_parts() -> impl Strategy<Value = Parts> {
        (
            (any::<u64>(), any::<u64>(), 1u8..=6, prop::collection::vec(any::<u8>(), 0..1600)),
            (arb_settings(), arb_ack(), any::<[bool; 5]>(), any::<Option<u64>>(), any::<u64>()),
        )
            .prop_map(|((conn, pn, kind, payload), (settings, ack, b, token, seq))| Parts { conn, pn, kind, payload, settings, ack, b, token, seq })
    }

    impl Parts {
        fn datagram(&self) -> Datagram<'_> {
            let (b, ack) = (self.b, self.ack);
            let body = match self.kind {
                1 => Body::Init { syn: b[0], ece: b[0] && b[1], cwr: b[0] && b[2], settings: self.settings },
                2 => Body::InitAck { token: self.seq, syn_ack: b[0].then_some(Ack { syn_ack: true, ..ack }) },
                3 => Body::Data { seq: self.seq, retransmit: b[0], ect: b[1], cwr: b[2], token: self.token, payload: &self.payload },
                4 => Body::Ack { ack, verified: b[3], delay_ns: self.seq as u32 },
                5 => Body::Close { reason: if b[4] { CloseReason::Completed } else { CloseReason::DurationLimit } },
                _ => Body::CloseAck,
            };
            Datagram { conn: self.conn, pn: self.pn, body }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Arbitrary bytes never panic the decoder or the MAC check; whatever decodes re-encodes
        /// to the same bytes (the format is canonical) except for the MAC.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
            let ok = verify(&KEY, &bytes);
            if let Ok(d) = decode(&bytes) {
                let mut buf = vec![0; MAX_DATAGRAM];
                let n = encode(&KEY, &mut buf, &d);
                prop_assert_eq!(&buf[..n - MAC_LEN], &bytes[..bytes.len() - MAC_LEN], "decoding is canonical");
                prop_assert!(!ok || buf[..n] == bytes[..]);
            }
        }

        /// The same with a valid header, so that the type-specific parsers see random fields.
        #[test]
        fn random_fields_after_a_valid_header_never_panic(kind in 0u8..8, fl in any::<u8>(), rest in prop::collection::vec(any::<u8>(), 0..200)) {
            let mut bytes = vec![VERSION, kind, fl];
            bytes.extend(rest);
            let _ = decode(&bytes);
            let _ = verify(&KEY, &bytes);
        }

        /// Every valid datagram round-trips, passes the MAC, fails it under another key, fails it
        /// with any one byte changed, and every strict prefix of it is truncated.
        #[test]
        fn every_valid_datagram_round_trips(parts in arb_parts(), flip in any::<prop::sample::Index>()) {
            let d = parts.datagram();
            let mut buf = vec![0; MAX_DATAGRAM];
            let n = encode(&KEY, &mut buf, &d);
            prop_assert_eq!(n, encoded_len(&d));
            let bytes = &buf[..n];
            prop_assert_eq!(decode(bytes), Ok(d));
            prop_assert!(verify(&KEY, bytes));
            prop_assert!(!verify(&[8; KEY_LEN], bytes), "another key fails");
            let mut changed = bytes.to_vec();
            changed[flip.index(n)] ^= 0x40;
            prop_assert!(decode(&changed).is_err() || !verify(&KEY, &changed), "a changed byte is caught");
            for cut in [0, 1, HEADER_LEN, n / 2, n - 1] {
                prop_assert_eq!(decode(&bytes[..cut]), Err(DropReason::Truncated), "prefix of {} bytes", cut);
            }
        }
    }

    #[test]
    fn data_overhead_fits_mss_1448_in_a_1600_byte_mtu() {
        let payload = [0; 1448];
        let d = Datagram { conn: 1, pn: 2, body: Body::Data { seq: 0, retransmit: false, ect: false, cwr: false, token: Some(3), payload: &payload } };
        assert_eq!(encoded_len(&d), 1448 + DATA_OVERHEAD + TOKEN_LEN);
    }

    #[test]
    fn each_structural_fault_has_its_reason() {
        let payload = [9; 100];
        let d = Datagram { conn: 1, pn: 2, body: Body::Data { seq: 0, retransmit: false, ect: true, cwr: false, token: None, payload: &payload } };
        let mut buf = vec![0; MAX_DATAGRAM];
        let n = encode(&KEY, &mut buf, &d);
        let good = buf[..n].to_vec();
        assert_eq!(decode(&[]), Err(DropReason::Truncated));
        let mut v = good.clone();
        v[0] = VERSION + 1;
        assert_eq!(decode(&v), Err(DropReason::WrongVersion));
        let mut v = good.clone();
        v[1] = 9;
        assert_eq!(decode(&v), Err(DropReason::Malformed), "unknown type");
        let mut v = good.clone();
        v[2] |= 0x80;
        assert_eq!(decode(&v), Err(DropReason::Malformed), "undefined flag");
        let mut v = good.clone();
        v.insert(HEADER_LEN + 10, 0);
        assert_eq!(decode(&v), Err(DropReason::Malformed), "a byte left over");
        assert_eq!(decode(&good[..n - 1]), Err(DropReason::Truncated));
        let mut v = good.clone();
        v[HEADER_LEN + 8..HEADER_LEN + 10].copy_from_slice(&u16::MAX.to_be_bytes());
        assert_eq!(decode(&v), Err(DropReason::Malformed), "len over MAX_MSS");
    }

    #[test]
    fn init_settings_out_of_range_are_malformed() {
        let base = Settings { policy: AckPolicy::Delayed { timeout: Dur::from_millis(40) }, sack: true, max_sack_blocks: 3, rwnd: u64::MAX, mss: 1448 };
        let bad = [
            Settings { max_sack_blocks: 5, ..base },
            Settings { mss: 0, ..base },
            Settings { mss: MAX_MSS + 1, ..base },
            Settings { rwnd: 0, ..base },
            Settings { policy: AckPolicy::Delayed { timeout: Dur::from_secs(61) }, ..base },
        ];
        let mut buf = vec![0; MAX_DATAGRAM];
        for s in bad {
            let n = encode(&KEY, &mut buf, &Datagram { conn: 1, pn: 0, body: Body::Init { syn: true, ece: false, cwr: false, settings: s } });
            assert_eq!(decode(&buf[..n]), Err(DropReason::Malformed), "{s:?} is refused");
        }
    }
}
