//! Per-flow and per-link results, each metric defined once, as ALGORITHMS.md §19 defines it (see
//! docs/RESULTS.md for the table of columns).

use crate::sim::Simulation;
use crate::trace::{Traces, CWND_CAUSES, SEQ_KINDS};
use serde::Serialize;
use startlab_cc::startup::Detail;
use std::collections::BTreeMap;
use startlab_scenario::{MeasureWindow, QueueLimit};
use startlab_units::Time;

/// One row of the per-flow table. `None` is "does not exist", never zero.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowResult {
    /// Flow name.
    pub flow: String,
    /// The `[[arrivals]]` process that drew the flow; `None` for a `[[flows]]` entry.
    pub group: Option<String>,
    /// Sending host.
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// When the application opened the connection, s.
    pub start: f64,
    /// Inside the measurement window (`[measure]`).
    pub measured: bool,
    /// Startup algorithm.
    pub startup: String,
    /// Avoidance algorithm.
    pub congestion_avoidance: String,
    /// Loss recovery.
    pub recovery: String,
    /// MSS, bytes.
    pub mss: u64,
    /// Transfer size, bytes; `None` for infinite.
    pub size: Option<u64>,
    /// First data segment sent, s.
    pub t0: Option<f64>,
    /// End of startup, s.
    pub t_su: Option<f64>,
    /// Whether the flow entered congestion avoidance.
    pub left_startup: bool,
    /// `t_su - t0`, s.
    pub su_time: Option<f64>,
    /// bit/s.
    pub su_throughput: Option<f64>,
    /// bit/s: payload bytes sent (first transmissions) by `t_su` over su-time, the reading of
    /// su-throughput that the Paced Start paper's Table 4 values fit.
    pub su_throughput_sent: Option<f64>,
    /// Ratio.
    pub su_loss: Option<f64>,
    /// Ratio: data packets sent in startup that a queue marked CE, over those sent (`su_loss`'s
    /// marking counterpart).
    pub su_marked: Option<f64>,
    /// Ratio.
    pub loss_in_startup: Option<f64>,
    /// s.
    pub startup_exit_time: Option<f64>,
    /// Reason.
    pub exit_reason: String,
    /// Bytes.
    pub exit_cwnd: Option<f64>,
    /// Segments.
    pub exit_cwnd_pkts: Option<f64>,
    /// exit_cwnd / bdp.
    pub overshoot: Option<f64>,
    /// Bytes.
    pub bdp: Option<f64>,
    /// s.
    pub base_rtt: f64,
    /// bit/s.
    pub available_rate: Option<f64>,
    /// s.
    pub time_to_90: Option<f64>,
    /// Packets.
    pub early_peak_queue: Option<u64>,
    /// Packets.
    pub early_losses: Option<u64>,
    /// bit/s.
    pub throughput: Option<f64>,
    /// bit/s.
    pub goodput: Option<f64>,
    /// Ratio.
    pub loss_rate: Option<f64>,
    /// Ratio.
    pub retransmission_ratio: Option<f64>,
    /// s.
    pub completion_time: Option<f64>,
    /// Whether the last byte was ACKed.
    pub completed: bool,
    /// Bytes.
    pub bytes_acked: u64,
    /// Bytes.
    pub bytes_delivered: u64,
    /// Packets.
    pub packets_sent: u64,
    /// Packets.
    pub retransmissions: u64,
    /// Packets.
    pub drops: u64,
    /// Packets (of `drops`, discarded by an impairment's loss process).
    pub impairment_drops: u64,
    /// Count.
    pub timeouts: u64,
    /// Count: loss-recovery episodes (fast retransmits, RACK detections, repaired probes).
    pub recovery_episodes: u64,
    /// Packets: retransmissions dropped in the network (lost again).
    pub retransmissions_lost: u64,
    /// Count: tail loss probes sent (RACK-TLP).
    pub tlp_probes: u64,
    /// s: time in loss recovery (fast recovery, or after a timeout until what was sent before it
    /// is ACKed).
    pub recovery_time: f64,
    /// Packets.
    pub ecn_marks: u64,
    /// Count.
    pub ecn_reductions: u64,
    /// Bytes.
    pub final_cwnd: f64,
    /// Segments.
    pub final_cwnd_pkts: f64,
    /// s.
    pub srtt: Option<f64>,
    /// Values the startup plug-in reports, one column each, named with the algorithm's prefix
    /// (e.g. Paced Start's `past_case`, `past_gap`); absent for other algorithms.
    #[serde(flatten)]
    pub startup_details: BTreeMap<String, serde_json::Value>,
}

/// A transfer of a `[[users]]` user as the engine keeps it (numbers only; names are attached
/// when the results are built).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TransferRow {
    pub group: u32,
    pub user: u32,
    pub flow: u32,
    pub transfer: u64,
    pub persistent: bool,
    pub size: u64,
    pub think: f64,
    pub start: f64,
    pub completion_time: Option<f64>,
    pub completed: bool,
    pub throughput: Option<f64>,
    pub su_time: Option<f64>,
    pub su_throughput: Option<f64>,
    pub su_loss: Option<f64>,
    pub exit_reason: Option<String>,
    pub exit_cwnd_pkts: Option<f64>,
    pub overshoot: Option<f64>,
    pub time_to_90: Option<f64>,
    pub packets_sent: u64,
    pub retransmissions: u64,
    pub drops: u64,
    pub timeouts: u64,
    pub startup_details: BTreeMap<String, serde_json::Value>,
}

/// One transfer of a `[[users]]` user (docs/RESULTS.md). On a new connection per transfer the
/// startup metrics are the connection's, defined as for `flows`; on a persistent connection the
/// counts are the transfer's own and the startup metrics appear on its first transfer only.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TransferResult {
    /// The `[[users]]` group.
    pub user: String,
    /// User number within the group, from 0.
    pub user_index: u64,
    /// The user's flow slot (`group/user`; traces name it).
    pub flow: String,
    /// Transfer number of the user, from 0.
    pub transfer: u64,
    /// `new` (a connection per transfer) or `persistent`.
    pub connection: String,
    /// Bytes (for `persistent`, the response).
    pub size: u64,
    /// The think time before it, s.
    pub think: f64,
    /// When it began (the connection opened, or the request left the client), s.
    pub start: f64,
    /// From `start` to completion (the last byte ACKed for `new`; the last byte at the client for
    /// `persistent`), s.
    pub completion_time: Option<f64>,
    /// Whether it completed before the run ended.
    pub completed: bool,
    /// bit/s: size over the time from the first data segment to completion (`new`, Barakat's
    /// per-transfer throughput) or over `completion_time` (`persistent`).
    pub throughput: Option<f64>,
    /// s.
    pub su_time: Option<f64>,
    /// bit/s.
    pub su_throughput: Option<f64>,
    /// Ratio.
    pub su_loss: Option<f64>,
    /// Startup exit reason.
    pub exit_reason: Option<String>,
    /// Segments.
    pub exit_cwnd_pkts: Option<f64>,
    /// exit_cwnd / bdp.
    pub overshoot: Option<f64>,
    /// s.
    pub time_to_90: Option<f64>,
    /// Packets.
    pub packets_sent: u64,
    /// Packets.
    pub retransmissions: u64,
    /// Packets.
    pub drops: u64,
    /// Count.
    pub timeouts: u64,
    /// Ratio: dropped / sent.
    pub loss_rate: Option<f64>,
    /// Ratio: unique / sent packets (Barakat's retransmission ratio, 1 is best).
    pub retransmission_ratio: Option<f64>,
    /// Inside the measurement window (`[measure]`, by `start`).
    pub measured: bool,
    /// The startup's report for the transfer's connection at its end, as in the flows table (e.g.
    /// Careful Resume's `cr_path`); `persistent`: as the startup metrics, or per response after idle.
    #[serde(flatten)]
    pub startup_details: BTreeMap<String, serde_json::Value>,
}

/// One row of the per-link-direction table.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkResult {
    /// `NAME:FROM->TO`.
    pub link: String,
    /// Sending node.
    pub from: String,
    /// Receiving node.
    pub to: String,
    /// bit/s.
    pub rate: u64,
    /// s.
    pub delay: f64,
    /// Limit value.
    pub queue_limit: u64,
    /// `pkt` or `B`.
    pub queue_limit_unit: String,
    /// Packets.
    pub arrivals: u64,
    /// Packets.
    pub departures: u64,
    /// Packets.
    pub drops: u64,
    /// Packets (of `drops`, discarded by an impairment's loss process).
    pub impairment_drops: u64,
    /// Packets delivered after a packet that entered the link later.
    pub reordered: u64,
    /// `droptail` or `red`.
    pub queue_kind: String,
    /// Packets (of `drops`).
    pub early_drops: u64,
    /// Packets.
    pub marks: u64,
    /// Ratio.
    pub utilization: f64,
    /// Packets.
    pub mean_queue: f64,
    /// Packets.
    pub max_queue: u64,
    /// Bytes.
    pub mean_queue_bytes: f64,
    /// Bytes.
    pub max_queue_bytes: u64,
    /// Mean time a packet waited in the queue before its transmission began, s.
    pub sojourn_mean: f64,
    /// Median of that wait, s (log-histogram, within 9 %).
    pub sojourn_p50: f64,
    /// 99th percentile, s.
    pub sojourn_p99: f64,
    /// Longest wait, s.
    pub sojourn_max: f64,
}

/// One finished request/response exchange.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ResponseResult {
    /// Flow name.
    pub flow: String,
    /// Exchange number on the connection, from 0.
    pub index: u64,
    /// Response size as drawn, bytes.
    pub size: u64,
    /// The think time before the request (0 for the first), s.
    pub think: f64,
    /// When the client sent the request, s.
    pub request_time: f64,
    /// From the request leaving the client to the last byte of the response reaching it, s.
    pub response_time: f64,
}

/// One train of a packet-train probe (`[[cross]] kind = "train"`, the Paced Start paper's Fig. 1):
/// the gap it was sent with and the gap it arrived with.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProbeTrainResult {
    /// The cross source's name.
    pub source: String,
    /// Train number, from 0.
    pub train: u64,
    /// Gap between packets at the source, s.
    pub source_gap: f64,
    /// Packets sent.
    pub sent: u64,
    /// Packets that reached the destination.
    pub received: u64,
    /// Mean gap between received packets at the destination, s: from the first received to the
    /// last received packet over the number of gaps between their positions in the train (NaN
    /// with fewer than two received).
    pub dest_gap: f64,
    /// `dest_gap − source_gap`, s (the PTR paper's gap difference).
    pub gap_difference: f64,
    /// The rate the train arrived at: bits of the packets after the first received over the time
    /// from the first to the last received, bit/s (NaN with fewer than two received).
    pub train_rate: f64,
}

/// One packet of a packet-train probe.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProbePacketResult {
    /// The cross source's name.
    pub source: String,
    /// Train number, from 0.
    pub train: u64,
    /// Position in the train, from 0.
    pub index: u64,
    /// When it left the source, s.
    pub sent: f64,
    /// When it reached the destination, s (NaN if it did not).
    pub received: f64,
}

/// Everything a run reports.
#[derive(Debug, Serialize)]
pub struct Results<'a> {
    /// Per flow.
    pub flows: Vec<FlowResult>,
    /// Per link direction.
    pub links: Vec<LinkResult>,
    /// Per finished request/response exchange.
    pub responses: Vec<ResponseResult>,
    /// Per transfer of every `[[users]]` user.
    pub transfers: Vec<TransferResult>,
    /// Per train of every packet-train probe.
    pub probes: Vec<ProbeTrainResult>,
    /// Per packet of every packet-train probe.
    pub probe_packets: Vec<ProbePacketResult>,
    /// Traces (borrowed from the simulation).
    #[serde(skip)]
    pub traces: &'a Traces,
    /// Flow names, indexed by the traces' `flow`.
    pub flow_names: Vec<String>,
    /// Link names, indexed by the traces' `link`.
    pub link_names: Vec<String>,
    /// Names of the seq trace's `event` codes.
    pub seq_kinds: Vec<String>,
    /// Names of the cwnd trace's `cause` codes.
    pub cwnd_causes: Vec<String>,
    /// End of the warm-up of `[measure]` (s): fixed, or found automatically; `None` without a
    /// warm-up or when the number of active flows never settled.
    pub warmup_end: Option<f64>,
    /// What the run allowed but the user should know, one sentence each (an L4S flow on a path
    /// without an L4S-aware queue).
    pub warnings: Vec<String>,
}

impl Simulation {
    /// Sets `measured` on the flows `[measure]` selects; returns the warm-up end.
    fn mark_measured(&self, flows: &mut [FlowResult], end: f64) -> Option<f64> {
        match self.scenario.measure.window {
            MeasureWindow::All => {
                flows.iter_mut().for_each(|f| f.measured = true);
                None
            }
            MeasureWindow::Time { from, to } => {
                let (a, b) = (from.as_secs_f64(), to.as_secs_f64());
                flows.iter_mut().for_each(|f| f.measured = f.start >= a && f.start < b);
                None
            }
            MeasureWindow::Warmup { warmup, flows: n } => {
                let w = match warmup {
                    Some(d) => Some(d.as_secs_f64()),
                    None => {
                        // A flow is active from its opening to its completion (or the end).
                        let spans: Vec<(f64, f64)> =
                            flows.iter().map(|f| (f.start, f.completion_time.zip(f.t0).map_or(end, |(c, t0)| t0 + c))).collect();
                        auto_warmup(&spans, end)
                    }
                };
                if let Some(w) = w {
                    let mut order: Vec<usize> = (0..flows.len()).filter(|&i| flows[i].start >= w).collect();
                    order.sort_by(|&a, &b| flows[a].start.total_cmp(&flows[b].start).then(a.cmp(&b)));
                    for &i in order.iter().take(n.map_or(usize::MAX, |n| n as usize)) {
                        flows[i].measured = true;
                    }
                }
                w
            }
        }
    }
}

impl Simulation {
    /// The `[[users]]` transfers still held by the engine (all of them unless
    /// [`Simulation::drain_transfers`] took some), then those in progress, ordered by group, user
    /// and transfer; `measured` by `[measure]` applied to their start times. Also returns the
    /// warm-up end of a `[[users]]`-only run with an automatic warm-up (over every transfer,
    /// drained or not).
    fn transfer_results(&self, end: Time, flows_warmup: Option<f64>) -> (Vec<TransferResult>, Option<f64>) {
        let mut rows: Vec<&TransferRow> = self.transfers.iter().collect();
        let live: Vec<TransferRow> = (0..self.flows.len()).filter_map(|i| self.transfer_row(i, end, true)).collect();
        rows.extend(live.iter());
        rows.sort_by_key(|r| (r.group, r.user, r.transfer));
        let warmup = self.transfer_warmup_with(&live, end, flows_warmup);
        let mut out: Vec<TransferResult> = rows
            .into_iter()
            .map(|r| {
                let measured = match self.scenario.measure.window {
                    MeasureWindow::All => true,
                    MeasureWindow::Time { from, to } => r.start >= from.as_secs_f64() && r.start < to.as_secs_f64(),
                    MeasureWindow::Warmup { .. } => warmup.is_some_and(|w| r.start >= w),
                };
                self.transfer_result(r, measured)
            })
            .collect();
        if let MeasureWindow::Warmup { flows: Some(n), .. } = self.scenario.measure.window {
            // The first n measured transfers by start.
            let mut order: Vec<usize> = (0..out.len()).filter(|&i| out[i].measured).collect();
            order.sort_by(|&a, &b| out[a].start.total_cmp(&out[b].start).then(a.cmp(&b)));
            for &i in order.iter().skip(n as usize) {
                out[i].measured = false;
            }
        }
        let users_only = !self.flows.is_empty() && self.flows.iter().all(|f| f.user.is_some());
        (out, if users_only { warmup } else { None })
    }

    /// The warm-up end that decides the transfers' `measured` (`[measure]`): fixed, found from the
    /// transfers' active spans (runs of `[[users]]` alone), or the flows' own (`flows_warmup`).
    fn transfer_warmup_with(&self, live: &[TransferRow], end: Time, flows_warmup: Option<f64>) -> Option<f64> {
        match self.scenario.measure.window {
            MeasureWindow::Warmup { warmup: None, .. } if self.flows.iter().all(|f| f.user.is_some()) => {
                let mut busy = self.transfer_busy.clone();
                for r in live {
                    busy.add_row(r, end);
                }
                busy.warmup(end)
            }
            MeasureWindow::Warmup { warmup: Some(w), .. } => Some(w.as_secs_f64()),
            MeasureWindow::Warmup { warmup: None, .. } => flows_warmup,
            _ => None,
        }
    }

    /// How `measured` is decided for the transfers of this run, once it finished: the window kind
    /// (`all`, `time` with `from`/`to`, `warmup` with its end), and `first` (the first n by start
    /// among the others). A program that streams the transfers out
    /// ([`Simulation::drain_transfers`]) applies it to all of them at the end.
    pub fn transfer_measure(&self) -> serde_json::Value {
        let end = self.now();
        let live: Vec<TransferRow> = (0..self.flows.len()).filter_map(|i| self.transfer_row(i, end, true)).collect();
        match self.scenario.measure.window {
            MeasureWindow::All => serde_json::json!({"kind": "all"}),
            MeasureWindow::Time { from, to } => serde_json::json!({"kind": "time", "from": from.as_secs_f64(), "to": to.as_secs_f64()}),
            MeasureWindow::Warmup { flows: first, .. } => {
                let mut flows: Vec<FlowResult> = (0..self.flows.len()).filter(|&i| self.flows[i].user.is_none()).map(|i| self.flow_row(i, end)).collect();
                let flows_warmup = self.mark_measured(&mut flows, end.as_secs_f64());
                serde_json::json!({"kind": "warmup", "warmup": self.transfer_warmup_with(&live, end, flows_warmup), "first": first})
            }
        }
    }

    /// Takes the transfers that ended since the last call (in the order they ended) out of the
    /// engine, so that a long run's memory stays with its live connections: the caller writes
    /// them out and applies [`Simulation::transfer_measure`] at the end (`measured` is false
    /// here). [`Simulation::results`] then reports only the transfers not drained.
    pub fn drain_transfers(&mut self) -> Vec<TransferResult> {
        let rows = std::mem::take(&mut self.transfers);
        rows.iter().map(|r| self.transfer_result(r, false)).collect()
    }

    fn transfer_result(&self, r: &TransferRow, measured: bool) -> TransferResult {
        TransferResult {
            user: self.scenario.users[r.group as usize].name.clone(),
            user_index: r.user as u64,
            flow: self.flows[r.flow as usize].name.clone(),
            transfer: r.transfer,
            connection: if r.persistent { "persistent" } else { "new" }.to_string(),
            size: r.size,
            think: r.think,
            start: r.start,
            completion_time: r.completion_time,
            completed: r.completed,
            throughput: r.throughput.or_else(|| r.completion_time.filter(|&c| r.persistent && c > 0.0).map(|c| r.size as f64 * 8.0 / c)),
            su_time: r.su_time,
            su_throughput: r.su_throughput,
            su_loss: r.su_loss,
            exit_reason: r.exit_reason.clone(),
            exit_cwnd_pkts: r.exit_cwnd_pkts,
            overshoot: r.overshoot,
            time_to_90: r.time_to_90,
            packets_sent: r.packets_sent,
            retransmissions: r.retransmissions,
            drops: r.drops,
            timeouts: r.timeouts,
            loss_rate: ratio(r.drops, r.packets_sent),
            retransmission_ratio: ratio(r.packets_sent - r.retransmissions, r.packets_sent),
            measured,
            startup_details: r.startup_details.clone(),
        }
    }
}

/// Active time of the `[[users]]` transfers per `WARMUP_WINDOW`, in nanoseconds (integer sums:
/// the same whatever order the transfers are added in), kept as transfers end so that the
/// automatic warm-up needs no per-transfer memory.
#[derive(Clone, Debug, Default)]
pub(crate) struct BusyWindows {
    busy: Vec<u64>,
}

impl BusyWindows {
    /// Adds a transfer's span from its start to its completion (the run's `end` if none).
    pub(crate) fn add_row(&mut self, r: &TransferRow, end: Time) {
        let ns = |s: f64| (s.max(0.0) * 1e9).round() as u64;
        let a = ns(r.start);
        let b = r.completion_time.map_or(end.as_nanos(), |c| ns(r.start + c)).min(end.as_nanos());
        if b <= a {
            return;
        }
        let width = (WARMUP_WINDOW * 1e9) as u64;
        let mut lo = a / width * width;
        while lo < b {
            let hi = lo + width;
            let w = (lo / width) as usize;
            if self.busy.len() <= w {
                self.busy.resize(w + 1, 0);
            }
            self.busy[w] += b.min(hi) - a.max(lo);
            lo = hi;
        }
    }

    /// The automatic warm-up end for a run that ended at `end`: as [`auto_warmup`].
    pub(crate) fn warmup(&self, end: Time) -> Option<f64> {
        let windows = (end.as_secs_f64() / WARMUP_WINDOW).floor() as usize;
        let width = WARMUP_WINDOW * 1e9;
        let mean: Vec<f64> = (0..windows).map(|w| self.busy.get(w).copied().unwrap_or(0) as f64 / width).collect();
        settled(&mean)
    }
}

/// Seconds per sample of the active-flow count when finding the warm-up automatically.
const WARMUP_WINDOW: f64 = 5.0;

/// The end of the automatic warm-up: the end of the first `WARMUP_WINDOW` whose mean number of
/// active flows is within 10 % (or one flow) of the previous window's. `spans` are the (open,
/// close) times of every flow, s.
pub fn auto_warmup(spans: &[(f64, f64)], end: f64) -> Option<f64> {
    let windows = (end / WARMUP_WINDOW).floor() as usize;
    // Mean active count per window = total active time inside the window / window length.
    let mut busy = vec![0.0f64; windows];
    for &(a, b) in spans {
        let (a, b) = (a.max(0.0), b.min(end));
        if b <= a {
            continue;
        }
        let (first, last) = ((a / WARMUP_WINDOW) as usize, ((b / WARMUP_WINDOW) as usize).min(windows.saturating_sub(1)));
        for (w, slot) in busy.iter_mut().enumerate().take(last + 1).skip(first) {
            let (lo, hi) = (w as f64 * WARMUP_WINDOW, (w + 1) as f64 * WARMUP_WINDOW);
            *slot += (b.min(hi) - a.max(lo)).max(0.0);
        }
    }
    let mean: Vec<f64> = busy.iter().map(|b| b / WARMUP_WINDOW).collect();
    settled(&mean)
}

/// The end of the first window whose mean active count is within 10 % (or one) of the previous.
fn settled(mean: &[f64]) -> Option<f64> {
    (1..mean.len()).find(|&w| mean[w] > 0.0 && (mean[w] - mean[w - 1]).abs() <= (0.1 * mean[w - 1]).max(1.0)).map(|w| (w + 1) as f64 * WARMUP_WINDOW)
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

fn secs(t: Time) -> f64 {
    t.as_secs_f64()
}

impl Simulation {
    /// The per-flow row of flow `i`, the run taken to end at `end` where it has not finished.
    pub(crate) fn flow_row(&self, i: usize, end: Time) -> FlowResult {
        let fl = &self.flows[i];
        let spec = &self.specs[i];
        let s = fl.sender_stats();
        let cc = fl.cc();
        let mss = spec.tcp.mss;
        let t0 = fl.first_data_time();
        let complete = fl.completed_at();
        // t_su: first entry into CA outside recovery; a flow that completes (or whose run ends)
        // before then gets t_su = t_complete (or the end) and left_startup = false.
        let (t_su, left) = match (cc.entered_ca(), complete) {
            (Some(ca), Some(c)) if c < ca => (Some(c), false),
            (Some(ca), _) => (Some(ca.max(t0.unwrap_or(ca))), true),
            (None, Some(c)) => (Some(c), false),
            (None, None) => (t0.map(|_| end), false),
        };
        let su_time = match (t0, t_su) {
            (Some(a), Some(b)) => Some((b - a).as_secs_f64()),
            _ => None,
        };
        let acked_at_su = if left { fl.m.acked_at_su.unwrap_or(0) } else { fl.snd_una() };
        let su_throughput = su_time.filter(|&t| t > 0.0).map(|t| acked_at_su as f64 * 8.0 / t);
        let sent_at_su = if left { fl.m.sent_at_su.unwrap_or(0) } else { fl.snd_max() };
        let su_throughput_sent = su_time.filter(|&t| t > 0.0).map(|t| sent_at_su as f64 * 8.0 / t);
        let exit = cc.startup_exit();
        let exit_reason = match (exit, complete) {
            (Some(e), _) => e.reason.as_str().to_string(),
            (None, Some(_)) => "completed".to_string(),
            (None, None) => "not-exited".to_string(),
        };
        let bdp = fl.available.map(|a| a / 8.0 * fl.base_rtt.as_secs_f64());
        let exit_cwnd = exit.map(|e| e.cwnd);
        let elapsed_end = complete.unwrap_or(end);
        let elapsed = t0.map(|t| (elapsed_end - t).as_secs_f64()).filter(|&e| e > 0.0);
        let throughput = match (complete, spec.size) {
            (Some(_), Some(size)) => elapsed.map(|e| size as f64 * 8.0 / e),
            _ => elapsed.map(|e| fl.snd_una() as f64 * 8.0 / e),
        };
        let goodput = elapsed.map(|e| fl.delivered().min(spec.size.unwrap_or(u64::MAX)) as f64 * 8.0 / e);
        let unique = s.packets_sent - s.retransmissions;
        FlowResult {
            flow: fl.name.clone(),
            group: self.groups[i].map(|g| self.group_names[g as usize].clone()),
            src: self.net.nodes[fl.src as usize].clone(),
            dst: self.net.nodes[fl.dst as usize].clone(),
            start: secs(fl.opened),
            measured: false,
            startup: cc.startup_name().to_string(),
            congestion_avoidance: cc.avoidance_name().to_string(),
            recovery: if spec.quic.is_some() { "rfc9002".to_string() } else { spec.tcp.recovery.name().to_string() },
            mss,
            size: spec.size,
            t0: t0.map(secs),
            t_su: t_su.map(secs),
            left_startup: left,
            su_time,
            su_throughput,
            su_throughput_sent,
            su_loss: ratio(fl.m.dropped_startup, fl.m.sent_startup),
            su_marked: ratio(fl.m.marked_startup, fl.m.sent_startup),
            loss_in_startup: ratio(fl.m.dropped_startup, s.packets_sent),
            startup_exit_time: exit.map(|e| secs(e.time)),
            exit_reason,
            exit_cwnd,
            exit_cwnd_pkts: exit_cwnd.map(|c| c / mss as f64),
            overshoot: match (exit_cwnd, bdp) {
                (Some(c), Some(b)) if b > 0.0 => Some(c / b),
                _ => None,
            },
            bdp,
            base_rtt: fl.base_rtt.as_secs_f64(),
            available_rate: fl.available,
            time_to_90: match (fl.m.t90, t0) {
                (Some(t), Some(t0)) => Some((t - t0).as_secs_f64()),
                _ => None,
            },
            early_peak_queue: t0.map(|_| fl.m.early_peak),
            early_losses: t0.map(|_| fl.m.early_losses),
            throughput,
            goodput,
            loss_rate: ratio(fl.m.dropped, s.packets_sent),
            retransmission_ratio: ratio(unique, s.packets_sent),
            completion_time: match (complete, t0) {
                (Some(c), Some(t0)) => Some((c - t0).as_secs_f64()),
                _ => None,
            },
            completed: complete.is_some(),
            bytes_acked: fl.snd_una(),
            bytes_delivered: fl.delivered(),
            packets_sent: s.packets_sent,
            retransmissions: s.retransmissions,
            drops: fl.m.dropped,
            impairment_drops: fl.m.impairment_drops,
            timeouts: s.timeouts,
            recovery_episodes: s.fast_retransmits,
            retransmissions_lost: fl.m.dropped_retransmissions,
            tlp_probes: s.tlp_probes,
            recovery_time: fl.recovery_time(end).as_secs_f64(),
            ecn_marks: fl.m.ecn_marks,
            ecn_reductions: s.ecn_reductions,
            final_cwnd: cc.cwnd(),
            final_cwnd_pkts: cc.cwnd() / mss as f64,
            srtt: fl.srtt().map(|d| d.as_secs_f64()),
            startup_details: cc
                .startup_report()
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        Detail::Num(x) => serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number),
                        Detail::Text(t) => serde_json::Value::String(t.to_string()),
                    };
                    (k.to_string(), v)
                })
                .collect(),
        }
    }

    /// The row of user slot `i`'s current transfer (`None` when it has none in progress or
    /// finished since the last row: a persistent user thinking, or a user that never started).
    /// `live`: for the results of the run so far (a persistent user's row only while its request
    /// is outstanding); otherwise the transfer just finished.
    pub(crate) fn transfer_row(&self, i: usize, end: Time, live: bool) -> Option<TransferRow> {
        let fl = &self.flows[i];
        let u = fl.user.as_ref()?;
        if u.k == 0 {
            return None;
        }
        let r = self.flow_row(i, end);
        let began = u.began.as_secs_f64();
        let mut row = TransferRow {
            group: u.group,
            user: u.user,
            flow: i as u32,
            transfer: u.k - 1,
            persistent: u.persistent,
            size: u.size,
            think: u.think_before.as_secs_f64(),
            start: began,
            completion_time: None,
            completed: false,
            throughput: None,
            su_time: r.su_time,
            su_throughput: r.su_throughput,
            su_loss: r.su_loss,
            exit_reason: Some(r.exit_reason),
            exit_cwnd_pkts: r.exit_cwnd_pkts,
            overshoot: r.overshoot,
            time_to_90: r.time_to_90,
            packets_sent: r.packets_sent,
            retransmissions: r.retransmissions,
            drops: r.drops,
            timeouts: r.timeouts,
            startup_details: r.startup_details,
        };
        if u.persistent {
            let app = fl.app.as_ref()?;
            // The request in progress (or the response just completed: the caller fills in its
            // completion time).
            if live && !app.awaiting {
                return None;
            }
            let (sent, rtx, rto, drops) = u.at_start;
            row.packets_sent -= sent;
            row.retransmissions -= rtx;
            row.timeouts -= rto;
            row.drops -= drops;
            if u.k > 1 {
                // The connection's startup ran during its first transfer.
                (row.su_time, row.su_throughput, row.su_loss, row.exit_reason, row.exit_cwnd_pkts, row.overshoot, row.time_to_90) = (None, None, None, None, None, None, None);
                // Its report too, unless the startup may run again per response.
                if !self.specs[i].tcp.startup_after_idle { row.startup_details.clear() }
            }
        } else {
            row.completed = r.completed;
            row.completion_time = r.completion_time.zip(r.t0).map(|(c, t0)| c + t0 - began);
            row.throughput = if r.completed { r.throughput } else { None };
        }
        Some(row)
    }

    /// The results. Call after the run finished ([`Simulation::run`]); before that the figures
    /// describe the run so far with its end at the current time.
    pub fn results(&self) -> Results<'_> {
        let end = self.now();
        let dur = self.end().as_secs_f64();
        let flows_built: Vec<FlowResult> = (0..self.flows.len()).filter(|&i| self.flows[i].user.is_none()).map(|i| self.flow_row(i, end)).collect();
        let mut flows = flows_built;
        let links = self
            .net
            .channels
            .iter()
            .enumerate()
            .map(|(c, ch)| {
                let st = &ch.stats;
                let soj = st.sojourns();
                let (limit, unit) = match ch.limit {
                    QueueLimit::Packets(n) => (n, "pkt"),
                    QueueLimit::Bytes(b) => (b, "B"),
                };
                let bits = self.link_bits.get(c).copied().unwrap_or(st.accepted_bytes as f64 * 8.0);
                let span = end.as_nanos() as f64;
                LinkResult {
                    link: ch.name.clone(),
                    from: self.net.nodes[ch.from as usize].clone(),
                    to: self.net.nodes[ch.to as usize].clone(),
                    rate: ch.rate.bps(),
                    delay: ch.delay.as_secs_f64(),
                    queue_limit: limit,
                    queue_limit_unit: unit.to_string(),
                    arrivals: st.arrivals,
                    departures: st.accepted,
                    drops: st.drops,
                    impairment_drops: st.impairment_drops,
                    reordered: st.reordered,
                    queue_kind: ch.queue_kind().to_string(),
                    early_drops: st.early_drops,
                    marks: st.marks,
                    utilization: if dur > 0.0 { bits / (ch.rate.bps() as f64 * dur) } else { 0.0 },
                    mean_queue: if span > 0.0 { st.q_area_pkts as f64 / span } else { 0.0 },
                    max_queue: st.max_pkts,
                    mean_queue_bytes: if span > 0.0 { st.q_area_bytes as f64 / span } else { 0.0 },
                    max_queue_bytes: st.max_bytes,
                    sojourn_mean: soj.mean_s(),
                    sojourn_p50: soj.quantile_s(0.5),
                    sojourn_p99: soj.quantile_s(0.99),
                    sojourn_max: soj.max_ns as f64 / 1e9,
                }
            })
            .collect();
        let warmup_end = self.mark_measured(&mut flows, end.as_secs_f64());
        let responses = self
            .flows
            .iter()
            .filter_map(|fl| fl.app.as_ref().map(|a| (fl, a)))
            .flat_map(|(fl, a)| {
                a.done.iter().enumerate().map(move |(k, &(at, took))| ResponseResult {
                    flow: fl.name.clone(),
                    index: k as u64,
                    size: a.sizes[k],
                    think: a.think(k).as_secs_f64(),
                    request_time: at,
                    response_time: took,
                })
            })
            .collect();
        let probe_packets: Vec<ProbePacketResult> = self
            .probe
            .iter()
            .map(|r| ProbePacketResult {
                source: self.scenario.cross[r.source as usize].name.clone(),
                train: r.train as u64,
                index: r.index as u64,
                sent: r.sent.as_secs_f64(),
                received: r.received.map_or(f64::NAN, |t| t.as_secs_f64()),
            })
            .collect();
        let mut probes: Vec<ProbeTrainResult> = Vec::new();
        // Two probes' trains may interleave in time: group each train's packets.
        let mut records = self.probe.clone();
        records.sort_by_key(|r| (r.source, r.train, r.index));
        for train in records.chunk_by(|a, b| a.source == b.source && a.train == b.train) {
            let first = train[0];
            let spec = &self.scenario.cross[first.source as usize];
            let source_gap = spec.gaps[first.train as usize].as_secs_f64();
            let got: Vec<(u32, Time)> = train.iter().filter_map(|r| r.received.map(|t| (r.index, t))).collect();
            let (dest_gap, train_rate) = match (got.first(), got.last()) {
                (Some(&(i0, t0)), Some(&(i1, t1))) if i1 > i0 => {
                    let span = (t1 - t0).as_secs_f64();
                    let gap = span / (i1 - i0) as f64;
                    let bits = (got.len() - 1) as f64 * spec.packet_size as f64 * 8.0;
                    (gap, if span > 0.0 { bits / span } else { f64::INFINITY })
                }
                _ => (f64::NAN, f64::NAN),
            };
            probes.push(ProbeTrainResult {
                source: spec.name.clone(),
                train: first.train as u64,
                source_gap,
                sent: train.len() as u64,
                received: got.len() as u64,
                dest_gap,
                gap_difference: dest_gap - source_gap,
                train_rate,
            });
        }
        let (transfers, users_warmup) = self.transfer_results(end, warmup_end);
        let warmup_end = warmup_end.or(users_warmup);
        Results {
            transfers,
            probes,
            probe_packets,
            responses,
            warmup_end,
            flows,
            links,
            traces: &self.traces,
            flow_names: self.flows.iter().map(|f| f.name.clone()).collect(),
            link_names: self.net.channels.iter().map(|c| c.name.clone()).collect(),
            seq_kinds: SEQ_KINDS.iter().map(|s| s.to_string()).collect(),
            cwnd_causes: CWND_CAUSES.iter().map(|s| s.to_string()).collect(),
            warnings: self.warnings.clone(),
        }
    }
}
