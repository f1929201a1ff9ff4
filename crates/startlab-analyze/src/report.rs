//! The analysis' report: the capture's summary, one row per TCP data direction with the startup
//! columns of `startlab run` (docs/RESULTS.md) as a capture can give them, and their series.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::capture::{CaptureError, Format};
use crate::decode::Skip;
use crate::series::Series;
use crate::tcp::{Connection, Half};
use crate::udp;
use crate::{Options, Vantage};

/// Where a flow's vantage point is inferred to be: the capture's round trip to the sender is at
/// most this fraction of the path's RTT (sender), or to the receiver (receiver); else middle.
pub const VANTAGE_FRACTION: f64 = 0.1;

/// Counts gathered while reading.
#[derive(Default)]
pub struct CaptureState {
    pub packets: u64,
    pub bytes: u64,
    pub tcp: u64,
    pub udp: u64,
    pub startlab_udp: u64,
    pub links: BTreeSet<String>,
    pub skipped: BTreeMap<String, u64>,
    pub named: BTreeMap<String, Vec<String>>,
    pub first_time: Option<u64>,
    pub last_abs: u64,
    pub backwards: u64,
    pub backwards_named: Vec<String>,
}

impl CaptureState {
    pub fn skip(&mut self, number: u64, why: &Skip, limit: usize) {
        let key = why.key();
        *self.skipped.entry(key.to_string()).or_insert(0) += 1;
        let detail = match why {
            Skip::CutHeaders(s) | Skip::Malformed(s) => Some(s.clone()),
            Skip::UnsupportedLink(s) => Some(format!("link type {s} is not read")),
            _ => None,
        };
        if let Some(d) = detail {
            let list = self.named.entry(key.to_string()).or_default();
            if list.len() < limit {
                list.push(format!("packet {number}: {d}"));
            }
        }
    }
}

/// The capture as a whole.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureSummary {
    /// The file.
    pub path: String,
    /// `pcap`, `pcapng`, or null when the file is neither.
    pub format: Option<&'static str>,
    /// Link types seen.
    pub link_types: Vec<String>,
    /// Frames read.
    pub packets: u64,
    /// Bytes on the wire of those frames.
    pub bytes: u64,
    /// TCP segments, UDP datagrams.
    pub tcp_packets: u64,
    /// UDP datagrams.
    pub udp_packets: u64,
    /// Of those, startlab-udp datagrams read as the TCP they carry.
    pub startlab_udp_packets: u64,
    /// Frames not analysed, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// From the first to the last frame, s.
    pub duration: f64,
    /// Frames whose timestamp went backwards.
    pub time_backwards: u64,
    /// Why the reading stopped early (naming the packet), or null when it read to the end.
    pub error: Option<String>,
    /// The first problems, by packet number.
    pub problems: Vec<String>,
}

/// One direction of a TCP connection that carried data.
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    /// `SRC -> DST` (the data's direction).
    pub flow: String,
    /// Data sender address:port.
    pub src: String,
    /// Data receiver address:port.
    pub dst: String,
    /// Frame number of the connection's first packet.
    pub first_packet: u64,
    /// Where the capture sits for this flow: given, or inferred.
    pub vantage: &'static str,
    /// How the vantage was decided.
    pub vantage_basis: String,
    /// The handshake: both SYNs seen.
    pub handshake: bool,
    /// Options of the sender's SYN (null without the SYN).
    pub mss_option: Option<u16>,
    /// The receiver's SYN's MSS option.
    pub receiver_mss_option: Option<u16>,
    /// Window scale of the sender's and the receiver's SYN.
    pub wscale: (Option<u8>, Option<u8>),
    /// SACK permitted on both SYNs.
    pub sack: bool,
    /// Timestamps on the sender's SYN (or seen on data).
    pub timestamps: bool,
    /// Largest payload seen, bytes (the MSS as used).
    pub mss: u32,
    /// First data packet, s since the capture's first frame.
    pub t0: f64,
    /// End of startup, s.
    pub t_su: f64,
    /// Startup ended (false: the flow completed or the capture ended first).
    pub left_startup: bool,
    /// `t_su - t0`.
    pub su_time: f64,
    /// Bytes cumulatively ACKed at `t_su` × 8 / `su_time`.
    pub su_throughput: Option<f64>,
    /// Bytes first sent by `t_su` × 8 / `su_time`.
    pub su_throughput_sent: Option<f64>,
    /// Retransmissions in [t0, t_su] / data packets in [t0, t_su] (the capture's loss estimate).
    pub su_loss: Option<f64>,
    /// Retransmissions sent in startup / all data packets.
    pub loss_in_startup: Option<f64>,
    /// Exit time, s (null when startup never ended).
    pub startup_exit_time: Option<f64>,
    /// `loss`, `timeout`, `plateau`, `rwnd`, or `completed` / `not-exited`.
    pub exit_reason: String,
    /// The flight at the exit, bytes.
    pub exit_cwnd: Option<f64>,
    /// `exit_cwnd / mss`.
    pub exit_cwnd_pkts: Option<f64>,
    /// `exit_cwnd / bdp`.
    pub overshoot: Option<f64>,
    /// `available_rate × base_rtt / 8`, bytes.
    pub bdp: Option<f64>,
    /// The smallest full RTT sample, s.
    pub base_rtt: Option<f64>,
    /// The delivery rate: the largest rate of cumulatively ACKed bytes over one `base_rtt`, bit/s.
    pub available_rate: Option<f64>,
    /// From t0 until the ACKed bytes over one base RTT first reach 90 % of `available_rate`, s.
    pub time_to_90: Option<f64>,
    /// Bytes ACKed × 8 / (last ACK or completion − t0), bit/s.
    pub throughput: Option<f64>,
    /// Same as throughput (the receiver's in-order bytes are the ACKed ones).
    pub goodput: Option<f64>,
    /// Retransmissions / data packets.
    pub loss_rate: Option<f64>,
    /// Unique data packets / all data packets.
    pub retransmission_ratio: Option<f64>,
    /// Completion (the ACK of the FIN) − t0, s.
    pub completion_time: Option<f64>,
    /// The FIN was acknowledged.
    pub completed: bool,
    /// Bytes cumulatively ACKed.
    pub bytes_acked: i64,
    /// Bytes sent (highest sequence).
    pub bytes_sent: i64,
    /// Data packets, retransmissions included.
    pub packets_sent: u64,
    /// Data packets sent again.
    pub retransmissions: u64,
    /// Of those: fast (ACK-driven), timeout, probe.
    pub retransmissions_fast: u64,
    /// Timer-driven of the first unacked segment.
    pub retransmissions_timeout: u64,
    /// Tail-loss probes.
    pub retransmissions_probe: u64,
    /// Retransmissions a DSACK showed to be spurious.
    pub retransmissions_spurious: u64,
    /// Segments taken as reordered originals (older TSval), not retransmissions.
    pub reordered: u64,
    /// Episodes begun by a timeout.
    pub timeouts: u64,
    /// Episodes begun by a fast retransmission.
    pub recovery_episodes: u64,
    /// Duplicate ACKs.
    pub dupacks: u64,
    /// DSACK blocks.
    pub dsacks: u64,
    /// Largest full RTT sample, s.
    pub max_rtt: Option<f64>,
    /// Smoothed RTT at the end, s.
    pub srtt: Option<f64>,
    /// Full RTT samples.
    pub rtt_samples: u64,
    /// The capture's round trip to the sender and to the receiver (smallest), s.
    pub rt_sender: Option<f64>,
    /// To the receiver.
    pub rt_receiver: Option<f64>,
    /// Each round's growth of its largest flight over the round before, until the exit.
    pub round_growths: Vec<f64>,
    /// The round the exit was found in.
    pub exit_round: Option<usize>,
    /// The flow's series (times in s since the capture's first frame).
    pub series: FlowSeries,
}

/// Series of one flow, decimated as [`crate::series`] says.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSeries {
    /// Per data packet: time, relative start sequence, flight after it (bytes).
    pub sent_t: Vec<f64>,
    /// Relative start sequence.
    pub sent_seq: Vec<i64>,
    /// Flight after the packet, bytes.
    pub flight: Vec<i64>,
    /// Per ACK advancing the cumulative ACK: time and value.
    pub acked_t: Vec<f64>,
    /// The cumulative ACK (relative).
    pub acked: Vec<i64>,
    /// Full RTT samples: time and RTT, s.
    pub rtt_t: Vec<f64>,
    /// The RTT, s.
    pub rtt: Vec<f64>,
    /// Retransmissions: time, relative sequence, kind.
    pub retx_t: Vec<f64>,
    /// Relative sequence.
    pub retx_seq: Vec<i64>,
    /// `fast`, `timeout` or `probe`.
    pub retx_kind: Vec<&'static str>,
}

/// What a UDP flow shows.
pub type UdpReport = udp::UdpFlow;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The capture.
    pub capture: CaptureSummary,
    /// One row per TCP direction that carried data, in the order of the connections' first packets.
    pub flows: Vec<FlowReport>,
    /// TCP connections seen (with or without data).
    pub tcp_connections: usize,
    /// UDP directions.
    pub udp: Vec<UdpReport>,
    /// Sentences the user should read.
    pub warnings: Vec<String>,
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then_some(a / b)
}

/// The last value of `s` at or before `t` (the first when none is).
fn at<V: Copy + serde::Serialize>(s: &Series<V>, t: u64) -> Option<V> {
    let i = s.t.partition_point(|&x| x <= t);
    if i == 0 {
        None
    } else {
        Some(s.v[i - 1])
    }
}

pub fn build(
    path: &Path,
    format: Option<Format>,
    error: Option<CaptureError>,
    state: CaptureState,
    conns: Vec<Connection>,
    udp: udp::Flows,
    options: &Options,
) -> Report {
    let mut problems: Vec<String> = state.named.values().flatten().cloned().collect();
    problems.extend(state.backwards_named.iter().cloned());
    let mut warnings = Vec::new();
    if let Some(e) = &error {
        warnings.push(format!("the capture could not be read to its end: {e}; {} packets before it were analysed", state.packets));
    }
    if state.backwards > 0 {
        warnings.push(format!(
            "{} packets have a timestamp earlier than the packet before (the first: {}); each was taken at the previous packet's time",
            state.backwards,
            state.backwards_named.first().map_or("?", |s| s.split(':').next().unwrap_or("?"))
        ));
    }
    if let Some(cut) = state.skipped.get("headers-cut-by-snaplen") {
        warnings.push(format!("{cut} packets had their headers cut by the snapshot length and were not analysed ({})", state.named.get("headers-cut-by-snaplen").and_then(|v| v.first()).map_or("", |s| s.as_str())));
    }
    let mut flows = Vec::new();
    for c in &conns {
        for side in 0..2 {
            if c.half[side].active() {
                flows.push(flow(c, side, options));
            }
        }
    }
    if state.packets > 0 && state.tcp == 0 && state.startlab_udp == 0 && error.is_none() {
        warnings.push(format!("the capture has no TCP segment ({} packets: {})", state.packets, summary_of(&state)));
    } else if state.tcp > 0 && flows.is_empty() {
        warnings.push(format!("{} TCP connections, none carried data", conns.len()));
    }
    if state.packets == 0 && error.is_none() {
        warnings.push("the capture holds no packet".to_string());
    }
    let duration = state.first_time.map_or(0.0, |f| secs(state.last_abs.saturating_sub(f)));
    Report {
        capture: CaptureSummary {
            path: path.display().to_string(),
            format: format.map(Format::name),
            link_types: state.links.iter().cloned().collect(),
            packets: state.packets,
            bytes: state.bytes,
            tcp_packets: state.tcp,
            udp_packets: state.udp,
            startlab_udp_packets: state.startlab_udp,
            skipped: state.skipped.clone(),
            duration,
            time_backwards: state.backwards,
            error: error.map(|e| e.to_string()),
            problems,
        },
        flows,
        tcp_connections: conns.len(),
        udp: udp.flows,
        warnings,
    }
}

fn summary_of(state: &CaptureState) -> String {
    let mut parts: Vec<String> = state.skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
    if state.udp > 0 {
        parts.insert(0, format!("{} UDP", state.udp));
    }
    parts.join(", ")
}

fn flow(c: &Connection, side: usize, options: &Options) -> FlowReport {
    let h: &Half = &c.half[side];
    let other: &Half = &c.half[1 - side];
    let (rs_min, _, rs_n) = c.round_trip(side);
    let (rr_min, _, rr_n) = c.round_trip(1 - side);
    let (vantage, basis) = match options.vantage {
        Some(v) => (v, "given".to_string()),
        None => match (rs_min, rr_min) {
            (Some(s), Some(r)) if (s + r) > 0 => {
                let total = (s + r) as f64;
                let v = if s as f64 <= VANTAGE_FRACTION * total {
                    Vantage::Sender
                } else if r as f64 <= VANTAGE_FRACTION * total {
                    Vantage::Receiver
                } else {
                    Vantage::Middle
                };
                (v, format!("round trips from the capture: {:.3} ms to the sender ({rs_n} samples), {:.3} ms to the receiver ({rr_n})", s as f64 / 1e6, r as f64 / 1e6))
            }
            _ => (Vantage::Sender, "assumed: no round trip to the sender could be measured (no handshake, no timestamps)".to_string()),
        },
    };
    let t0 = h.t_first.unwrap_or(0);
    let end = h.t_last.unwrap_or(t0).max(h.acked.t.last().copied().unwrap_or(0));
    let mss = f64::from(h.max_payload.max(1));
    let min_rtt = h.min_rtt;
    // Delivery rate: the largest rate of delivered bytes (cumulatively ACKed or SACKed) over one
    // min RTT.
    let rate = min_rtt.filter(|&w| w > 0).and_then(|w| {
        let (ts, vs) = (&h.delivered.t, &h.delivered.v);
        let mut best: Option<f64> = None;
        let mut j = 0;
        for i in 0..ts.len() {
            while j + 1 < i && ts[j + 1] + w <= ts[i] {
                j += 1;
            }
            if ts[j] + w <= ts[i] {
                let r = (vs[i] - vs[j]) as f64 * 8e9 / (ts[i] - ts[j]) as f64;
                best = Some(best.map_or(r, |b: f64| b.max(r)));
            }
        }
        best
    });
    let bdp = match (rate, min_rtt) {
        (Some(r), Some(m)) => Some(r * secs(m) / 8.0),
        _ => None,
    };
    let completed = h.t_complete.is_some();
    let (exit_time, reason, exit_flight, exit_round) = match &h.exit {
        Some(e) => (Some(e.t), e.reason.to_string(), Some(e.flight as f64), Some(e.round)),
        None => (None, if completed { "completed".to_string() } else { "not-exited".to_string() }, None, None),
    };
    // End of startup: the exit, or after a loss the end of its recovery.
    let t_su = match (&h.exit, exit_time) {
        (Some(e), Some(t)) if e.reason == "loss" || e.reason == "timeout" => h.first_recovery_end.unwrap_or(end).max(t),
        (_, Some(t)) => t,
        _ => h.t_complete.unwrap_or(end),
    };
    let su_time = secs(t_su.saturating_sub(t0));
    let start_seq = h.sent.v.first().copied().unwrap_or(0).min(0);
    let acked_su = at(&h.acked, t_su).map_or(0, |a| a - start_seq);
    let sent_idx = h.sent.t.partition_point(|&x| x <= t_su);
    let sent_max_su = h.sent.v[..sent_idx].iter().max().map_or(0, |&s| s + i64::from(h.max_payload) - start_seq);
    let retx_su = h.retx_series.t.partition_point(|&x| x <= t_su) as u64;
    let packets_su = sent_idx as u64;
    // The FIN takes one sequence number: its ACK is not a byte.
    let bytes_acked = h.fin.map_or(h.una(), |f| h.una().min(f)) - start_seq;
    let t_tput = h.t_complete.unwrap_or(end);
    let throughput = ratio(bytes_acked as f64 * 8.0, secs(t_tput.saturating_sub(t0)));
    let time_to_90 = match (rate, min_rtt) {
        (Some(r), Some(w)) if w > 0 => {
            let (ts, vs) = (&h.acked.t, &h.acked.v);
            let mut j = 0;
            let mut found = None;
            for i in 0..ts.len() {
                while j + 1 < i && ts[j + 1] + w <= ts[i] {
                    j += 1;
                }
                if ts[j] + w <= ts[i] && (vs[i] - vs[j]) as f64 * 8e9 / (ts[i] - ts[j]) as f64 >= 0.9 * r {
                    found = Some(secs(ts[i].saturating_sub(t0)));
                    break;
                }
            }
            found
        }
        _ => None,
    };
    let packets = h.packets as f64;
    let kinds = ["fast", "timeout", "probe"];
    let s = FlowSeries {
        sent_t: h.sent.t.iter().map(|&t| secs(t)).collect(),
        sent_seq: h.sent.v.clone(),
        flight: h.flight.v.clone(),
        acked_t: h.acked.t.iter().map(|&t| secs(t)).collect(),
        acked: h.acked.v.clone(),
        rtt_t: h.rtt.t.iter().map(|&t| secs(t)).collect(),
        rtt: h.rtt.v.iter().map(|&v| secs(v)).collect(),
        retx_t: h.retx_series.t.iter().map(|&t| secs(t)).collect(),
        retx_seq: h.retx_series.v.iter().map(|&(s, _)| s).collect(),
        retx_kind: h.retx_series.v.iter().map(|&(_, k)| kinds[usize::from(k)]).collect(),
    };
    let exit_pkts = exit_flight.map(|f| f / mss);
    FlowReport {
        flow: format!("{} -> {}", c.addr[side], c.addr[1 - side]),
        src: c.addr[side].to_string(),
        dst: c.addr[1 - side].to_string(),
        first_packet: c.first_packet,
        vantage: vantage.name(),
        vantage_basis: basis,
        handshake: c.syn[0].is_some() && c.syn[1].is_some(),
        mss_option: h.mss_option,
        receiver_mss_option: other.mss_option,
        wscale: (h.wscale, other.wscale),
        sack: h.sack_permitted && other.sack_permitted,
        timestamps: h.timestamps,
        mss: h.max_payload,
        t0: secs(t0),
        t_su: secs(t_su),
        left_startup: h.exit.is_some(),
        su_time,
        su_throughput: ratio(acked_su as f64 * 8.0, su_time),
        su_throughput_sent: ratio(sent_max_su as f64 * 8.0, su_time),
        su_loss: ratio(retx_su as f64, packets_su as f64),
        loss_in_startup: ratio(retx_su as f64, packets),
        startup_exit_time: exit_time.map(secs),
        exit_reason: reason,
        exit_cwnd: exit_flight,
        exit_cwnd_pkts: exit_pkts,
        overshoot: match (exit_flight, bdp) {
            (Some(f), Some(b)) if b > 0.0 => Some(f / b),
            _ => None,
        },
        bdp,
        base_rtt: min_rtt.map(secs),
        available_rate: rate,
        time_to_90,
        throughput,
        goodput: throughput,
        loss_rate: ratio(h.retransmissions as f64, packets),
        retransmission_ratio: ratio((h.packets - h.retransmissions) as f64, packets),
        completion_time: h.t_complete.map(|t| secs(t.saturating_sub(t0))),
        completed,
        bytes_acked,
        bytes_sent: h.snd_max() - start_seq,
        packets_sent: h.packets,
        retransmissions: h.retransmissions,
        retransmissions_fast: h.by_kind[0],
        retransmissions_timeout: h.by_kind[1],
        retransmissions_probe: h.by_kind[2],
        retransmissions_spurious: h.spurious,
        reordered: h.reordered,
        timeouts: h.timeout_episodes,
        recovery_episodes: h.fast_episodes,
        dupacks: h.dupacks_total,
        dsacks: h.dsacks,
        max_rtt: h.max_rtt.map(secs),
        srtt: h.rtt.v.last().map(|_| secs(h.srtt_ns())),
        rtt_samples: h.rtt_samples,
        rt_sender: rs_min.map(secs),
        rt_receiver: rr_min.map(secs),
        round_growths: h.round_growths().to_vec(),
        exit_round,
        series: s,
    }
}
