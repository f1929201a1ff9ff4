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

/// What changed cwnd/ssthresh at a row of the cwnd trace (its `cause` column): `update` for any
/// change that is not a congestion event (growth, the recovery's window, its end); `loss`,
/// `timeout` and `ecn` for a congestion event (a reduction: ssthresh set from the window) of that
/// kind in the step the row records. No recovery in startlab undoes a reduction.
pub const CWND_CAUSES: [&str; 4] = ["update", "loss", "timeout", "ecn"];

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
    /// Index into [`CWND_CAUSES`].
    pub cause: Vec<u8>,
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
    /// Seconds the packet whose departure (start of transmission) made the change waited; NaN
    /// for a change made by an arrival or a drop.
    pub sojourn: Vec<f64>,
}

/// Packet-trace event kinds (the `event` column of the packet trace).
pub const PACKET_EVENTS: [&str; 5] = ["enqueue", "dequeue", "drop", "lost", "mark"];
/// A packet entered the link direction (waiting, or straight onto the wire).
pub const PKT_ENQUEUE: u8 = 0;
/// Its transmission started (it left the queue).
pub const PKT_DEQUEUE: u8 = 1;
/// The queue refused it (full, or RED's early drop).
pub const PKT_DROP: u8 = 2;
/// An impairment's loss process discarded it after the queue admitted it.
pub const PKT_LOST: u8 = 3;
/// RED set CE on it (it is also enqueued).
pub const PKT_MARK: u8 = 4;
/// Packet kinds (the `kind` column of the packet trace), indexed by `PktKind as u8`.
pub const PACKET_KINDS: [&str; 5] = ["data", "ack", "syn", "cross", "request"];

/// Per-packet queue events of the traced link directions (`[trace.packets]`), in time order once
/// the run is finished.
#[derive(Debug, Default, Serialize)]
pub struct PacketTrace {
    /// Seconds.
    pub time: Vec<f64>,
    /// Channel index.
    pub link: Vec<u32>,
    /// Index into [`PACKET_EVENTS`].
    pub event: Vec<u8>,
    /// Index into [`PACKET_KINDS`].
    pub kind: Vec<u8>,
    /// Flow index, or number of flows + cross-source index for cross traffic.
    pub flow: Vec<u32>,
    /// First payload byte (0 for ACKs' and cross packets' own sequence; an ACK's is its cumulative ACK).
    pub seq: Vec<u64>,
    /// Payload bytes.
    pub len: Vec<u32>,
    /// Bytes on the wire.
    pub size: Vec<u32>,
    /// Packets waiting after the event (not the one on the wire).
    pub queue_packets: Vec<u64>,
    /// Bytes waiting after the event.
    pub queue_bytes: Vec<u64>,
}

impl PacketTrace {
    /// Appends one event.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push(&mut self, t: Time, link: u32, event: u8, p: &PacketRecord, queue_packets: u64, queue_bytes: u64) {
        self.time.push(t.as_secs_f64());
        self.link.push(link);
        self.event.push(event);
        self.kind.push(p.kind);
        self.flow.push(p.flow);
        self.seq.push(p.seq);
        self.len.push(p.len);
        self.size.push(p.size);
        self.queue_packets.push(queue_packets);
        self.queue_bytes.push(queue_bytes);
    }

    /// Orders the events by time (stable: events at the same instant keep the order they happened
    /// in). Dequeues are recorded when a link's queue is next looked at, so they come late.
    pub(crate) fn sort(&mut self) {
        let mut order: Vec<usize> = (0..self.time.len()).collect();
        order.sort_by(|&a, &b| self.time[a].total_cmp(&self.time[b]));
        fn permute<T: Copy>(v: &mut Vec<T>, order: &[usize]) {
            *v = order.iter().map(|&i| v[i]).collect();
        }
        permute(&mut self.time, &order);
        permute(&mut self.link, &order);
        permute(&mut self.event, &order);
        permute(&mut self.kind, &order);
        permute(&mut self.flow, &order);
        permute(&mut self.seq, &order);
        permute(&mut self.len, &order);
        permute(&mut self.size, &order);
        permute(&mut self.queue_packets, &order);
        permute(&mut self.queue_bytes, &order);
    }
}

/// What the packet trace records of a packet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PacketRecord {
    pub kind: u8,
    pub flow: u32,
    pub seq: u64,
    pub len: u32,
    pub size: u32,
}

/// The packet trace's state while running: which channels and packets are traced, and per traced
/// channel the packets waiting in its queue, in order (`None` for one that is not traced), so that
/// each dequeue the channel reports is matched to its packet.
#[derive(Debug)]
pub(crate) struct PacketTracing {
    pub channels: Vec<bool>,
    /// Per flow, then per cross source.
    pub sources: Vec<bool>,
    pub waiting: Vec<std::collections::VecDeque<Option<PacketRecord>>>,
}

/// Every RTT sample a sender took (`[trace] rtt`).
#[derive(Debug, Default, Serialize)]
pub struct RttTrace {
    /// Seconds: when the ACK that brought the sample arrived.
    pub time: Vec<f64>,
    /// Flow index.
    pub flow: Vec<u32>,
    /// The sample, seconds (the newest newly acknowledged, never retransmitted segment's; QUIC:
    /// the largest newly acknowledged packet's).
    pub rtt: Vec<f64>,
    /// The sender's smoothed RTT after the event, seconds (NaN before its first sample).
    pub srtt: Vec<f64>,
    /// Its RTT variation after the event, seconds (NaN before its first sample).
    pub rttvar: Vec<f64>,
    /// The smallest sample so far, seconds.
    pub min_rtt: Vec<f64>,
    /// The cumulative ACK (bytes) the sample came with.
    pub ack: Vec<u64>,
}

/// The startup algorithms' decision variables after every ACK in startup (`[trace] startup`), one
/// row per ACK and signal.
#[derive(Debug, Default, Serialize)]
pub struct StartupTrace {
    /// Seconds.
    pub time: Vec<f64>,
    /// Flow index.
    pub flow: Vec<u32>,
    /// Index into `names`.
    pub signal: Vec<u32>,
    /// The value (NaN: not known yet), in the signal's unit.
    pub value: Vec<f64>,
    /// This ACK ended startup (the sample that triggered the exit).
    pub exit: Vec<bool>,
    /// `ALGORITHM.SIGNAL` of each signal index, with its unit.
    pub names: Vec<(String, String)>,
    /// The first index of each algorithm's signals in `names`.
    #[serde(skip)]
    pub(crate) first: std::collections::BTreeMap<&'static str, u32>,
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
    /// Packet trace (empty unless `[trace.packets]`).
    pub packets: PacketTrace,
    /// RTT samples (empty unless `[trace] rtt = true`).
    pub rtt: RttTrace,
    /// Startup signals (empty unless `[trace] startup = true`).
    pub startup: StartupTrace,
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
