//! Traces kept in memory as columns, optionally decimated.

use serde::Serialize;
use startlab_units::{Dur, Time};

/// Sequence-event kinds (the `event` column of the seq trace).
pub const SEQ_KINDS: [&str; 4] = ["sent", "retransmitted", "acked", "dropped"];
/// `sent`.
pub const SEQ_SENT: u8 = 0;
/// `retransmitted`.
pub const SEQ_RETRANSMITTED: u8 = 1;
/// `acked`.
pub const SEQ_ACKED: u8 = 2;
/// `dropped`.
pub const SEQ_DROPPED: u8 = 3;

/// cwnd/ssthresh on every change.
#[derive(Debug, Default, Serialize)]
pub struct CwndTrace {
    /// Seconds.
    pub time: Vec<f64>,
    /// Flow index.
    pub flow: Vec<u32>,
    /// Bytes.
    pub cwnd: Vec<f64>,
    /// Bytes (`inf` while infinite).
    pub ssthresh: Vec<f64>,
}

/// Sequence events.
#[derive(Debug, Default, Serialize)]
pub struct SeqTrace {
    /// Seconds.
    pub time: Vec<f64>,
    /// Flow index.
    pub flow: Vec<u32>,
    /// Index into [`SEQ_KINDS`].
    pub event: Vec<u8>,
    /// First byte (for `acked`: the new cumulative ACK).
    pub seq: Vec<u64>,
    /// Bytes (for `acked`: bytes newly acknowledged).
    pub len: Vec<u32>,
}

/// Queue length at each change.
#[derive(Debug, Default, Serialize)]
pub struct QueueTrace {
    /// Seconds.
    pub time: Vec<f64>,
    /// Channel index.
    pub link: Vec<u32>,
    /// Packets waiting.
    pub packets: Vec<u64>,
    /// Bytes waiting.
    pub bytes: Vec<u64>,
    /// RED's average queue (unit of the link's limit) after the change; NaN for drop-tail.
    pub red_avg: Vec<f64>,
}

/// All traces of a run.
#[derive(Debug, Default, Serialize)]
pub struct Traces {
    /// cwnd trace.
    pub cwnd: CwndTrace,
    /// Sequence trace.
    pub seq: SeqTrace,
    /// Queue trace.
    pub queue: QueueTrace,
}

/// Decimation: keep a point of a series only if `interval` passed since its last kept point.
#[derive(Debug)]
pub struct Gate {
    interval: Dur,
    last: Vec<Option<Time>>,
}

impl Gate {
    /// A gate for `series` series.
    pub fn new(interval: Dur, series: usize) -> Gate {
        Gate { interval, last: vec![None; if interval == Dur::ZERO { 0 } else { series }] }
    }
    /// Whether to keep a point of `series` at `t`.
    #[inline]
    pub fn pass(&mut self, series: usize, t: Time) -> bool {
        if self.interval == Dur::ZERO {
            return true;
        }
        let slot = &mut self.last[series];
        if slot.is_none_or(|l| t.saturating_since(l) >= self.interval) {
            *slot = Some(t);
            true
        } else {
            false
        }
    }
}
