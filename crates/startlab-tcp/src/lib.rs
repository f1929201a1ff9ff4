//! Sans-IO TCP endpoints for startlab.
//!
//! [`Sender`] and [`Receiver`] know no clock or network: the driver passes in arriving segments and
//! ACKs with the current time, asks [`Sender::poll_transmit`] for the next segment to put on the
//! wire, and arms one timer per endpoint at `next_timeout()`. The simulator is one driver; a real
//! user-space transport can be another.
//!
//! Sequence numbers are byte offsets of the application stream starting at 0; the SYN occupies no
//! sequence space here (the handshake is modelled by segment kinds). Every data segment starts at
//! a multiple of the MSS, so segment `i` covers bytes `[i*mss, (i+1)*mss)` (the last may be short).

mod ranges;
mod receiver;
mod rto;
mod sender;

pub use receiver::{AckPolicy, Receiver, ReceiverConfig, SynEcn};
pub use rto::{RtoConfig, RtoEstimator, RtoPolicy};
pub use sender::{IdleRestart, PrrBound, Recovery, Segment, SegmentKind, Sender, SenderConfig, SenderStats};

/// The sender's transport-neutral parts (docs/ARCHITECTURE.md): loss detection and window
/// reduction over plain numbers (packet numbers with unit 1, or TCP's byte segments), byte counts
/// and times, for a second transport (QUIC) to run as TCP does.
pub mod parts {
    pub use crate::ranges::RangeSet;
    pub use crate::sender::dupthresh::DupThresh;
    pub use crate::sender::pacer::Pacer;
    pub use crate::sender::prr::{Prr, PrrRule};
    pub use crate::sender::rack::Rack;
}

/// The ECN field of a segment's IP header (RFC 3168 §5; ECT(1) identifies L4S, RFC 9331 §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IpEcn {
    /// Not-ECT (`00`).
    #[default]
    NotEct,
    /// ECT(0) (`10`): classic ECN.
    Ect0,
    /// ECT(1) (`01`): L4S.
    Ect1,
    /// CE (`11`): a queue marked it.
    Ce,
}

/// How a connection uses ECN: the codepoint of its data and the feedback it asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnMode {
    /// No ECN: Not-ECT data.
    #[default]
    Off,
    /// RFC 3168: ECT(0) data, ECE/CWR feedback, one window reduction per window of data.
    Classic,
    /// L4S (RFC 9330, RFC 9331 §4): ECT(1) data and Accurate ECN feedback (RFC 9768), as RFC 9331
    /// §4.2 asks of an L4S sender: the controller sees the CE-marked bytes of every ACK.
    L4s,
}

impl EcnMode {
    /// ECN is used.
    pub fn on(self) -> bool {
        self != EcnMode::Off
    }

    /// The ECN field of new data (RFC 3168 §6.1.5: never of retransmissions or SYNs).
    pub fn codepoint(self) -> IpEcn {
        match self {
            EcnMode::Off => IpEcn::NotEct,
            EcnMode::Classic => IpEcn::Ect0,
            EcnMode::L4s => IpEcn::Ect1,
        }
    }
}

/// Most SACK blocks an ACK can carry (RFC 2018: 4 without timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// An acknowledgement segment as it travels from receiver to sender.
///
/// In declaration order (`repr(C)`), the SACK blocks last: a simulator that stores an ACK after a
/// 64-byte packet header keeps everything but the blocks on the header's next cache line, and an
/// ACK with no block (the usual case) never touches a third line when it is stored
/// ([`Ack::store`]) and read back ([`Ack::load`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Ack {
    /// Cumulative ACK: the next byte the receiver expects.
    pub ack: u64,
    /// Advertised receive window in bytes (`u64::MAX`: unlimited).
    pub rwnd: u64,
    /// Data segments this ACK acknowledges for the first time (0 for a duplicate ACK).
    pub segments: u32,
    /// Number of valid SACK blocks.
    pub n_sack: u8,
    /// This is the SYN-ACK of the handshake.
    pub syn_ack: bool,
    /// Released by the delayed-ACK timer rather than by a second segment (PaSt §7.7 needs this).
    pub timer_triggered: bool,
    /// ECN-Echo (RFC 3168 §6.1): on a SYN-ACK, the receiver agrees to use ECN; on any other ACK, a
    /// data segment arrived with CE and no CWR has been seen since. Never set on a connection that
    /// uses AccECN, whose ECE bit is part of the ACE field in `accecn`.
    pub ece: bool,
    /// TCP Quick-Start Response option (RFC 4782 §4.2): the echo of a Quick-Start request, carried
    /// by the first ACK (or SYN-ACK) the receiver sends after the request arrived.
    pub qs: Option<startlab_cc::startup::QsReport>,
    /// Accurate ECN feedback (RFC 9768 §3.2): the ACE field and the AccECN option's byte counters,
    /// on every ACK of a connection that uses AccECN (and on the SYN-ACK that agrees to it);
    /// `None` otherwise.
    pub accecn: Option<AccEcnFeedback>,
    /// SACK blocks `[start, end)`, most recent first (RFC 2018 §4); only the first `n_sack` are valid.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
}

/// What an AccECN receiver feeds back on an ACK (RFC 9768 §3.2): the 3-bit ACE field (the TCP
/// header's AE, CWR and ECE flags) and the three 24-bit byte counters of the AccECN option
/// (§3.2.3), each the receiver's running count modulo its field size. The lab's receiver sends the
/// option on every ACK, so a sender never has to infer bytes from ACE alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccEcnFeedback {
    /// ACE (AE·4 + CWR·2 + ECE): on the SYN-ACK, the IP-ECN field the SYN arrived with (§3.1.1,
    /// Table 2: Not-ECT `010`, ECT(1) `011`, ECT(0) `100`, CE `110`); on every later ACK, the
    /// count of CE-marked packets received `r.cep` (initialized to 5, §3.2.1) modulo 8 (§3.2.2).
    pub ace: u8,
    /// EE0B: payload bytes received with ECT(0), `r.e0b` (initialized to 1), modulo 2^24.
    pub ee0b: u32,
    /// ECEB: payload bytes received with CE, `r.ceb` (initialized to 0), modulo 2^24.
    pub eceb: u32,
    /// EE1B: payload bytes received with ECT(1), `r.e1b` (initialized to 1), modulo 2^24.
    pub ee1b: u32,
}

impl AccEcnFeedback {
    /// The AccECN option's byte counters are 24 bits wide (RFC 9768 §3.2.3).
    pub const BYTE_FIELD: u32 = 1 << 24;
    /// `r.cep`'s initial value (RFC 9768 §3.2.1), so that a zeroed ACE field is detectable.
    pub const CEP_INIT: u64 = 5;
    /// `r.e0b`'s and `r.e1b`'s initial value (RFC 9768 §3.2.1); `r.ceb` starts at 0.
    pub const ECT_BYTES_INIT: u64 = 1;
    /// Bytes the AccECN option adds to an ACK on the wire: kind, length and three 3-byte fields
    /// (RFC 9768 §3.2.3, 11 bytes), padded to a 4-byte boundary.
    pub const OPTION_BYTES: u32 = 12;

    /// The ACE value of a SYN-ACK that agrees to AccECN for a SYN that arrived with IP-ECN field
    /// `syn` (RFC 9768 §3.1.1, Table 2).
    pub fn syn_ack_ace(syn: IpEcn) -> u8 {
        match syn {
            IpEcn::NotEct => 0b010,
            IpEcn::Ect1 => 0b011,
            IpEcn::Ect0 => 0b100,
            IpEcn::Ce => 0b110,
        }
    }

    /// Whether a SYN-ACK's ACE agrees to AccECN (RFC 9768 §3.1.1, Table 2: `010`, `011`, `100` or
    /// `110`; `001` is a classic ECN server, `000` no ECN, `111` broken).
    pub fn agrees(ace: u8) -> bool {
        matches!(ace, 0b010 | 0b011 | 0b100 | 0b110)
    }

    /// The increase from `old` to `new` of a counter of `modulus` (a power of two): the difference
    /// modulo it, read as signed so that an ACK overtaken by a later one gives a negative answer
    /// (RFC 9768 §3.2.3.1; a byte counter wraps every 16 MiB).
    pub fn delta(new: u32, old: u32, modulus: u32) -> i64 {
        let d = new.wrapping_sub(old) & (modulus - 1);
        if d >= modulus / 2 { d as i64 - modulus as i64 } else { d as i64 }
    }
}

impl Ack {
    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.n_sack as usize]
    }

    /// Copies `ack` into `self` (a stored ACK), writing only its valid SACK blocks: the blocks
    /// beyond `n_sack` keep whatever they held, so read a stored ACK with [`Ack::load`].
    pub fn store(&mut self, ack: &Ack) {
        let Ack { ack: cum, rwnd, segments, n_sack, syn_ack, timer_triggered, ece, qs, accecn, sack } = ack;
        (self.ack, self.rwnd, self.segments, self.n_sack) = (*cum, *rwnd, *segments, *n_sack);
        (self.syn_ack, self.timer_triggered, self.ece, self.qs, self.accecn) = (*syn_ack, *timer_triggered, *ece, *qs, *accecn);
        let n = *n_sack as usize;
        self.sack[..n].copy_from_slice(&sack[..n]);
    }

    /// A copy of an ACK written with [`Ack::store`], reading only its valid SACK blocks; the
    /// others are zero, as in every ACK a receiver makes.
    pub fn load(&self) -> Ack {
        let Ack { ack, rwnd, segments, n_sack, syn_ack, timer_triggered, ece, qs, accecn, sack } = self;
        let mut out = Ack { ack: *ack, rwnd: *rwnd, segments: *segments, n_sack: *n_sack, syn_ack: *syn_ack, timer_triggered: *timer_triggered, ece: *ece, qs: *qs, accecn: *accecn, sack: Default::default() };
        let n = *n_sack as usize;
        out.sack[..n].copy_from_slice(&sack[..n]);
        out
    }
}
