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

pub use receiver::{AckPolicy, Receiver, ReceiverConfig};
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
    /// L4S (RFC 9330, RFC 9331 §4): ECT(1) data.
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Cumulative ACK: the next byte the receiver expects.
    pub ack: u64,
    /// SACK blocks `[start, end)`, most recent first (RFC 2018 §4); only the first `n_sack` are valid.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    /// Number of valid SACK blocks.
    pub n_sack: u8,
    /// Advertised receive window in bytes (`u64::MAX`: unlimited).
    pub rwnd: u64,
    /// This is the SYN-ACK of the handshake.
    pub syn_ack: bool,
    /// Released by the delayed-ACK timer rather than by a second segment (PaSt §7.7 needs this).
    pub timer_triggered: bool,
    /// Data segments this ACK acknowledges for the first time (0 for a duplicate ACK).
    pub segments: u32,
    /// TCP Quick-Start Response option (RFC 4782 §4.2): the echo of a Quick-Start request, carried
    /// by the first ACK (or SYN-ACK) the receiver sends after the request arrived.
    pub qs: Option<startlab_cc::startup::QsReport>,
    /// ECN-Echo (RFC 3168 §6.1): on a SYN-ACK, the receiver agrees to use ECN; on any other ACK, a
    /// data segment arrived with CE and no CWR has been seen since.
    pub ece: bool,
}

impl Ack {
    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.n_sack as usize]
    }
}
