//! `[trace.qlog]`: one qlog file per flow (draft-ietf-quic-qlog-main-schema and
//! -quic-events, the JSON-SEQ serialization: `FLOW.sqlog`), for qvis and any qlog tool.
//!
//! The trace is the data sender's (a QUIC flow's server; vantage point `server`). A QUIC flow logs
//! the standard events: `quic:packet_sent` (the server's packets with their frames),
//! `quic:packet_received` (the client's packets as they reach the server), `quic:packet_lost`
//! (each packet the server's loss detection declares lost, with its trigger),
//! `quic:recovery_metrics_updated` (congestion window, bytes in flight, smoothed/min/latest RTT
//! and RTT variance, ssthresh: the fields that changed, after every event that reached the
//! server) and `quic:congestion_state_updated` (`slow_start`, `recovery`,
//! `congestion_avoidance`). A TCP flow logs the same recovery and congestion events under the
//! `startlab` namespace (`startlab:recovery_metrics_updated`,
//! `startlab:congestion_state_updated`), and its segments as `startlab:segment_sent`
//! (`offset`, `length`, `retransmission`) and `startlab:ack_advanced` (`acked`: the new cumulative
//! ACK). Both log the end of startup as `startlab:startup_exited` with its reason and window.
//! Times are milliseconds from the run's start (`reference_time` of the trace's common fields).

use serde_json::{json, Value};
use startlab_cc::Phase;
use startlab_quic::sender::Transmit;
use startlab_quic::Space;
use startlab_units::{Dur, Time};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// What the recovery metrics event reports, in its units (bytes, ms).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Metrics {
    pub cwnd: u64,
    pub ssthresh: Option<u64>,
    pub bytes_in_flight: u64,
    pub smoothed_rtt: Option<Dur>,
    pub min_rtt: Option<Dur>,
    pub latest_rtt: Option<Dur>,
    pub rtt_variance: Option<Dur>,
}

struct FlowLog {
    writer: Option<BufWriter<File>>,
    path: PathBuf,
    quic: bool,
    last: Option<Metrics>,
    phase: Option<Phase>,
    exited: bool,
    events: u64,
}

/// The qlog files while running.
pub(crate) struct QlogTap {
    flows: Vec<Option<FlowLog>>,
    /// The first write error; logging stopped there.
    pub error: Option<String>,
}

fn ms(t: Time) -> f64 {
    t.as_nanos() as f64 / 1e6
}

fn dur_ms(d: Dur) -> f64 {
    d.as_nanos() as f64 / 1e6
}

fn packet_type(space: Space) -> &'static str {
    match space {
        Space::Initial => "initial",
        Space::Handshake => "handshake",
        Space::AppData => "1RTT",
    }
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::SlowStart => "slow_start",
        Phase::Recovery => "recovery",
        Phase::CongestionAvoidance => "congestion_avoidance",
    }
}

/// A packet's frames as qlog writes them.
fn frames(tx: &Transmit) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(a) = &tx.ack {
        let ranges: Vec<Value> = a.ranges.iter().rev().map(|&(lo, hi)| if lo == hi { json!([lo]) } else { json!([lo, hi]) }).collect();
        out.push(json!({"frame_type": "ack", "ack_delay": dur_ms(a.ack_delay), "acked_ranges": ranges}));
    }
    if let Some((offset, len)) = tx.data {
        if tx.space == Space::AppData {
            out.push(json!({"frame_type": "stream", "stream_id": 0, "offset": offset, "raw": {"payload_length": len}}));
        } else {
            out.push(json!({"frame_type": "crypto", "offset": offset, "raw": {"payload_length": len}}));
        }
    }
    if tx.handshake_done {
        out.push(json!({"frame_type": "handshake_done"}));
    }
    if let Some(m) = tx.max_data {
        out.push(json!({"frame_type": "max_data", "maximum": m}));
    }
    if tx.probe && out.is_empty() {
        out.push(json!({"frame_type": "ping"}));
    }
    out
}

impl QlogTap {
    /// Opens `DIR/NAME.sqlog` for every selected flow (`flows`: name, QUIC or not, selected) and
    /// writes each file's header.
    pub(crate) fn open(dir: &Path, flows: &[(&str, bool, bool)], scenario: &str) -> Result<QlogTap, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the qlog directory {}: {e}", dir.display()))?;
        let mut out = Vec::with_capacity(flows.len());
        for &(name, quic, selected) in flows {
            if !selected {
                out.push(None);
                continue;
            }
            // A flow name is a file name here: keep it to what every file system takes.
            let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
            let path = dir.join(format!("{safe}.sqlog"));
            let file = File::create(&path).map_err(|e| format!("cannot create qlog file {}: {e}", path.display()))?;
            let mut writer = BufWriter::with_capacity(1 << 16, file);
            let schemas: Vec<&str> = if quic { vec!["urn:ietf:params:qlog:events:quic", "urn:startlab:qlog:events"] } else { vec!["urn:startlab:qlog:events"] };
            let header = json!({
                "file_schema": "urn:ietf:params:qlog:file:sequential",
                "serialization_format": "application/qlog+json-seq",
                "title": format!("startlab: {scenario}"),
                "description": format!("flow {name} ({}) as its data sender sees it", if quic { "QUIC" } else { "TCP" }),
                "trace": {
                    "title": name,
                    "vantage_point": {"name": "startlab", "type": "server"},
                    "common_fields": {"reference_time": {"clock_type": "monotonic", "epoch": "unknown"}, "time_format": "relative_to_epoch", "protocol_types": [if quic { "QUIC" } else { "TCP" }]},
                    "event_schemas": schemas,
                },
            });
            record(&mut writer, &header).map_err(|e| format!("writing {}: {e}", path.display()))?;
            out.push(Some(FlowLog { writer: Some(writer), path, quic, last: None, phase: None, exited: false, events: 0 }));
        }
        Ok(QlogTap { flows: out, error: None })
    }

    /// Whether flow `f` is logged.
    #[inline]
    pub(crate) fn logs(&self, f: u32) -> bool {
        matches!(self.flows.get(f as usize), Some(Some(_)))
    }

    fn event(&mut self, f: u32, t: Time, name: &str, data: Value) {
        if self.error.is_some() {
            return;
        }
        let Some(Some(log)) = self.flows.get_mut(f as usize) else { return };
        let Some(w) = log.writer.as_mut() else { return };
        match record(w, &json!({"time": ms(t), "name": name, "data": data})) {
            Ok(()) => log.events += 1,
            Err(e) => self.error = Some(format!("writing {}: {e}; the log stops at event {}", log.path.display(), log.events + 1)),
        }
    }

    fn namespace(&self, f: u32) -> &'static str {
        match self.flows.get(f as usize) {
            Some(Some(l)) if l.quic => "quic",
            _ => "startlab",
        }
    }

    /// The server sent QUIC packet `tx`.
    pub(crate) fn packet_sent(&mut self, f: u32, t: Time, tx: &Transmit) {
        let data = json!({"header": {"packet_type": packet_type(tx.space), "packet_number": tx.pn}, "raw": {"length": tx.size}, "frames": frames(tx)});
        self.event(f, t, "quic:packet_sent", data);
    }

    /// QUIC packet `tx` from the client reached the server.
    pub(crate) fn packet_received(&mut self, f: u32, t: Time, tx: &Transmit) {
        let data = json!({"header": {"packet_type": packet_type(tx.space), "packet_number": tx.pn}, "raw": {"length": tx.size}, "frames": frames(tx)});
        self.event(f, t, "quic:packet_received", data);
    }

    /// The server declared these packets lost (RFC 9002 §6.1: by the packet or the time
    /// threshold; the trigger is not told apart, so the event has none).
    pub(crate) fn packets_lost(&mut self, f: u32, t: Time, lost: &[(Space, u64, bool)]) {
        for &(space, pn, _) in lost {
            self.event(f, t, "quic:packet_lost", json!({"header": {"packet_type": packet_type(space), "packet_number": pn}}));
        }
    }

    /// A TCP flow's data segment left (`retransmission`: sent before).
    pub(crate) fn segment_sent(&mut self, f: u32, t: Time, offset: u64, length: u32, retransmission: bool) {
        self.event(f, t, "startlab:segment_sent", json!({"offset": offset, "length": length, "retransmission": retransmission}));
    }

    /// A TCP flow's cumulative ACK advanced to `acked`.
    pub(crate) fn ack_advanced(&mut self, f: u32, t: Time, acked: u64) {
        self.event(f, t, "startlab:ack_advanced", json!({"acked": acked}));
    }

    /// The sender's state after an event: the metrics that changed, a new congestion state, the
    /// end of startup.
    pub(crate) fn state(&mut self, f: u32, t: Time, m: Metrics, phase: Phase, trigger: Option<&'static str>, exit: Option<(&'static str, f64)>) {
        let ns = self.namespace(f);
        let Some(Some(log)) = self.flows.get(f as usize) else { return };
        let (last, old_phase, exited) = (log.last, log.phase, log.exited);
        if last != Some(m) {
            let mut data = serde_json::Map::new();
            let prev = last.unwrap_or(Metrics { cwnd: u64::MAX, bytes_in_flight: u64::MAX, ..Metrics::default() });
            if m.cwnd != prev.cwnd {
                data.insert("congestion_window".into(), json!(m.cwnd));
            }
            if m.bytes_in_flight != prev.bytes_in_flight {
                data.insert("bytes_in_flight".into(), json!(m.bytes_in_flight));
            }
            if m.ssthresh != prev.ssthresh || last.is_none() {
                // An infinite ssthresh (before the first congestion event) is left out.
                if let Some(s) = m.ssthresh {
                    data.insert("ssthresh".into(), json!(s));
                }
            }
            for (key, v, p) in [
                ("smoothed_rtt", m.smoothed_rtt, prev.smoothed_rtt),
                ("min_rtt", m.min_rtt, prev.min_rtt),
                ("latest_rtt", m.latest_rtt, prev.latest_rtt),
                ("rtt_variance", m.rtt_variance, prev.rtt_variance),
            ] {
                if let Some(v) = v.filter(|&v| Some(v) != p || last.is_none()) {
                    data.insert(key.into(), json!(dur_ms(v)));
                }
            }
            if let Some(Some(log)) = self.flows.get_mut(f as usize) {
                log.last = Some(m);
            }
            if !data.is_empty() {
                self.event(f, t, &format!("{ns}:recovery_metrics_updated"), Value::Object(data));
            }
        }
        if old_phase != Some(phase) {
            let mut data = json!({"new": phase_name(phase)});
            if let Some(o) = old_phase {
                data["old"] = json!(phase_name(o));
            }
            if let Some(tr) = trigger.filter(|_| phase == Phase::Recovery) {
                data["trigger"] = json!(tr);
            }
            if let Some(Some(log)) = self.flows.get_mut(f as usize) {
                log.phase = Some(phase);
            }
            self.event(f, t, &format!("{ns}:congestion_state_updated"), data);
        }
        if let (false, Some((reason, cwnd))) = (exited, exit) {
            if let Some(Some(log)) = self.flows.get_mut(f as usize) {
                log.exited = true;
            }
            self.event(f, t, "startlab:startup_exited", json!({"reason": reason, "congestion_window": cwnd.round() as u64}));
        }
    }

    /// Flushes and closes every file; returns each file's path and event count.
    pub(crate) fn close(&mut self) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        for log in self.flows.iter_mut().flatten() {
            if let Some(mut w) = log.writer.take() {
                if let Err(e) = w.flush() {
                    self.error.get_or_insert_with(|| format!("writing {}: {e}", log.path.display()));
                }
            }
            out.push((log.path.clone(), log.events));
        }
        out
    }
}

/// One JSON-SEQ record (RFC 7464): the record separator, the JSON text, a line feed.
fn record(w: &mut impl Write, v: &Value) -> std::io::Result<()> {
    w.write_all(&[0x1e])?;
    serde_json::to_writer(&mut *w, v)?;
    w.write_all(b"\n")
}
