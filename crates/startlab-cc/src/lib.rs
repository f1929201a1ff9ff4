//! Sans-IO congestion control for startlab.
//!
//! This crate knows no clock, socket or event queue. A driver (the simulator's TCP sender, or later a
//! real user-space transport) passes in events with the current time, and reads back the window the
//! [`Controller`] decided. The controller owns `cwnd`, `ssthresh` and the phase; it is generic over
//! two orthogonal plug-ins chosen by configuration:
//!
//! * a **startup** algorithm ([`startup`]) that decides how the window grows while `cwnd < ssthresh`
//!   and may end startup early with a reason, and
//! * an **avoidance** algorithm ([`avoidance`]) for the linear phase and for the window after a
//!   congestion signal.
//!
//! Loss *recovery* (Tahoe, Reno, NewReno, SACK) belongs to the TCP endpoint, which calls
//! [`Controller::on_congestion`], [`Controller::set_recovery_cwnd`] and
//! [`Controller::on_recovery_exit`].
//!
//! Windows are in bytes as `f64` (ALGORITHMS.md §0.1: bytes with a fractional part); "infinite"
//! ssthresh is `None`-free: it is [`Ssthresh::Infinite`], never a sentinel number.

pub mod avoidance;
mod controller;
mod probe;
pub mod decl;
pub mod startup;
#[cfg(test)]
mod testkit;

pub use controller::{Controller, CcConfig, CcView, Phase, Reduction, StartupExit};
pub use probe::Probe;
pub use startlab_units::{Dur, Time};

/// Defines [`ExitReason`] from one list (variant, doc, result name): the enum, [`ExitReason::ALL`]
/// and [`ExitReason::as_str`] cannot disagree.
macro_rules! exit_reasons {
    ($( $(#[doc = $doc:literal])* $variant:ident => $name:literal, )*) => {
        /// Why startup ended. Recorded once per flow, reported in results (`exit_reason`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ExitReason {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl ExitReason {
            /// Every reason, in declaration order.
            pub const ALL: &'static [ExitReason] = &[$(ExitReason::$variant),*];

            /// The name used in results (`exit_reason`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ExitReason::$variant => $name, )*
                }
            }
        }
    };
}

exit_reasons! {
    /// The window reached ssthresh (RFC 5681: congestion avoidance once `cwnd >= ssthresh`).
    Ssthresh => "ssthresh",
    /// Loss detected by duplicate ACKs or SACK.
    Loss => "loss",
    /// A retransmission timeout.
    Timeout => "timeout",
    /// RTT samples rose above a threshold (HyStart delay increase, delay-based slow start).
    DelayIncrease => "delay-increase",
    /// A train of closely spaced ACKs reached the estimated BDP (HyStart ACK train).
    AckTrain => "ack-train",
    /// HyStart++ finished its Conservative Slow Start rounds.
    CssDone => "css-done",
    /// Vegas: expected minus actual rate exceeded gamma.
    VegasDiff => "vegas-diff",
    /// The delivery rate stopped growing (SEARCH, BBR STARTUP).
    BandwidthPlateau => "bandwidth-plateau",
    /// A bandwidth or ssthresh estimate ended startup (packet pair, Westwood ERE).
    Estimate => "estimate",
    /// Paced Start found the target rate and sent its FILL train.
    RateFound => "rate-found",
    /// Quick-Start "QS 2": ssthresh = QS_cwnd once the Quick-Start window is acknowledged.
    QuickStart => "quick-start",
    /// An ACK echoed an ECN Congestion Experienced mark (RFC 3168 ECE): a loss signal without loss.
    Ecn => "ecn",
}

impl ExitReason {
    /// The reason named `name` (as in results), if any.
    pub fn from_name(name: &str) -> Option<ExitReason> {
        ExitReason::ALL.iter().copied().find(|r| r.as_str() == name)
    }
}

/// Bytes below ssthresh that still count as reaching it (floating-point slack; see [`Ssthresh::above`]).
pub const SSTHRESH_TOLERANCE: f64 = 1e-6;

/// The slow-start threshold: a byte count, or infinite (RFC 5681 "arbitrarily high").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ssthresh {
    /// No threshold: only a congestion signal or a startup algorithm ends slow start.
    Infinite,
    /// A threshold in bytes.
    Bytes(f64),
}

impl Ssthresh {
    /// True if a window of `cwnd` bytes is below the threshold (slow start). `cwnd == ssthresh` is
    /// congestion avoidance (ALGORITHMS.md §20 item 1, as Linux `tcp_in_slow_start`).
    ///
    /// NOTE: a window within a millionth of a byte below ssthresh counts as having reached it.
    /// Fractional per-ACK growth (Smooth-start's `+SMSS/n`, ABC) lands on ssthresh in exact
    /// arithmetic but can end an ulp short in floating point; without the tolerance startup would
    /// end one round late, on the next round's first ACK.
    pub fn above(self, cwnd: f64) -> bool {
        match self {
            Ssthresh::Infinite => true,
            Ssthresh::Bytes(s) => cwnd < s - SSTHRESH_TOLERANCE,
        }
    }
    /// The threshold in bytes, `f64::INFINITY` when infinite (for traces and reporting only).
    pub fn as_f64(self) -> f64 {
        match self {
            Ssthresh::Infinite => f64::INFINITY,
            Ssthresh::Bytes(s) => s,
        }
    }
}

/// An acknowledgement as the controller sees it. A struct, so that events can gain fields without
/// touching every algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// When the ACK arrived.
    pub now: Time,
    /// Bytes newly acknowledged cumulatively by this ACK (`N` of ALGORITHMS.md §0.2).
    pub newly_acked: u64,
    /// The new cumulative ACK point (`SND.UNA` after this ACK).
    pub ack_seq: u64,
    /// `SND.NXT` when the ACK arrived (for round accounting, §0.3).
    pub snd_nxt: u64,
    /// RTT sample from the newest newly acknowledged, never retransmitted segment (Linux `ca_rtt`);
    /// `None` when Karn's rule forbids a sample.
    pub rtt: Option<Dur>,
    /// Bytes in flight after this ACK (RFC 5681 FlightSize).
    pub flight_size: u64,
    /// Whether the sender used its whole window recently (RFC 7661): growth is suspended when not.
    pub cwnd_limited: bool,
    /// Data segments the receiver says this ACK covers for the first time (2 for a delayed ACK of
    /// two segments, 1 for a timer-released delayed ACK or a per-packet ACK).
    pub acked_segments: u32,
    /// The receiver's delayed-ACK timer released this ACK (not a second segment).
    pub timer_triggered: bool,
    /// Bytes delivered so far (cumulatively ACKed or SACKed), after this ACK.
    pub delivered: u64,
    /// Delivery-rate sample of the newest segment this ACK acknowledges (BBR-style), if any.
    pub rate_sample: Option<RateSample>,
    /// Payload bytes newly reported CE-marked by Accurate ECN feedback (RFC 9768 §3.2.3.1: the
    /// increase of the ECEB counter), with those reported by ACKs that did not reach the
    /// controller (duplicate ACKs, ACKs during loss recovery). Always 0 for a flow without AccECN:
    /// a classic ECN flow's signal is the ECE echo ([`CongestionKind::Ecn`]).
    pub ce_bytes: u64,
}

impl Default for AckEvent {
    /// A neutral ACK for tests and drivers that fill in only what they know: nothing acknowledged,
    /// no RTT sample, one segment covered, and the sender cwnd-limited (so growth is not suspended).
    fn default() -> Self {
        AckEvent {
            now: Time::ZERO,
            newly_acked: 0,
            ack_seq: 0,
            snd_nxt: 0,
            rtt: None,
            flight_size: 0,
            cwnd_limited: true,
            acked_segments: 1,
            timer_triggered: false,
            delivered: 0,
            rate_sample: None,
            ce_bytes: 0,
        }
    }
}

/// A delivery-rate sample: bytes delivered between the newest acknowledged segment's send and its
/// ACK, over that interval (draft-cheng-iccrg-delivery-rate-estimation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Bytes delivered in the interval.
    pub delivered: u64,
    /// The interval.
    pub interval: Dur,
}

impl RateSample {
    /// Bytes per second.
    pub fn rate(&self) -> f64 {
        if self.interval == Dur::ZERO {
            0.0
        } else {
            self.delivered as f64 / self.interval.as_secs_f64()
        }
    }
}

/// What kind of congestion signal the endpoint saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionKind {
    /// Three duplicate ACKs or SACK loss detection: entering fast recovery.
    FastRetransmit,
    /// Retransmission timer expiry (first expiry of an episode; backoffs do not call again).
    Timeout,
    /// An ACK with ECE (RFC 3168 §6.1.2, ALGORITHMS.md §17.3), or with Accurate ECN feedback that
    /// reports newly CE-marked bytes (RFC 9768), at most once per window of data: ssthresh as for
    /// a fast retransmit (a scalable avoidance: its own reduction), cwnd = ssthresh, no recovery
    /// and no retransmission (`enter_recovery` is false). Startup plug-ins treat it as a loss
    /// signal.
    Ecn,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    /// When it was detected.
    pub now: Time,
    /// Its kind.
    pub kind: CongestionKind,
    /// RFC 5681 FlightSize at detection, in bytes (Limited Transmit segments excluded).
    pub flight_size: u64,
    /// True when the endpoint enters fast recovery (Reno, NewReno, SACK): cwnd becomes ssthresh
    /// and the endpoint drives it until recovery ends. False for a timeout and for Tahoe's fast
    /// retransmit, which both collapse cwnd to the loss window and slow-start again.
    pub enter_recovery: bool,
}
