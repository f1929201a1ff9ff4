//! PyO3 bindings of startlab: a scenario goes in, columns come out. No logic lives here; every Rust
//! error becomes a Python exception in [`errors`], and a Rust panic is caught and re-raised as
//! `SimulationError` so that it never crosses into Python as a `PanicException`.

mod analyze;
mod errors;
mod net;
mod plugin;
mod router;

use errors::{PluginError, ScenarioError, SimulationError};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;
use startlab_sim::Simulation as Sim;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `base`: the scenario file's directory, against which the files it names are resolved.
fn parse(text: &str, format: &str, base: Option<&str>) -> PyResult<startlab_scenario::Scenario> {
    let base = base.map(std::path::Path::new);
    let parsed = match format {
        "toml" => startlab_scenario::from_toml_in(text, base),
        "json" => startlab_scenario::from_json_in(text, base),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "format {other:?} is not known; expected \"toml\" or \"json\""
            )))
        }
    };
    parsed.map_err(errors::scenario)
}

/// Reads a Parquet connection-vector file through `startlab.replay` (pyarrow) as CSV text: the
/// scenario crate reads CSV itself and asks this for `[[replay]] file = "....parquet"`.
fn parquet_vectors(path: &std::path::Path) -> Result<String, String> {
    Python::attach(|py| {
        let module = py.import("startlab.replay").map_err(|e| format!("cannot load startlab.replay to read Parquet: {e}"))?;
        module
            .call_method1("parquet_to_csv_text", (path.to_string_lossy().into_owned(),))
            .and_then(|v| v.extract::<String>())
            .map_err(|e| e.value(py).to_string())
    })
}

/// Runs `f`, turning a panic into `SimulationError` with its message.
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| errors::panic(what, p))
}

/// Parse and check a scenario; raise ScenarioError if it is refused.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", base = None))]
fn validate(py: Python<'_>, text: &str, format: &str, base: Option<&str>) -> PyResult<()> {
    build(py, text, format, base).map(|_| ())
}

/// Parses, checks and builds a simulation; a plug-in that fails while it is built (its
/// constructor, or its `on_start`) raises `PluginError`.
fn build(py: Python<'_>, text: &str, format: &str, base: Option<&str>) -> PyResult<Sim> {
    let s = parse(text, format, base)?;
    plugin::clear_failure();
    let sim = guarded("building the simulation", || Sim::new(s))?.map_err(errors::build)?;
    match plugin::take_failure() {
        Some(f) => Err(errors::plugin(py, f, None)),
        None => Ok(sim),
    }
}

/// The fully resolved scenario (defaults filled in, SI units) as JSON.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", base = None))]
fn normalize(text: &str, format: &str, base: Option<&str>) -> PyResult<String> {
    let s = parse(text, format, base)?;
    serde_json::to_string(&s).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// The algorithm registry as JSON: `[{name, role, summary, source, params: [...], plugin}, ...]`
/// (`plugin`: registered at run time, a Python class); a startup also has `on_ce` (what a CE mark
/// does in startup: `"exit-as-loss"` or `"own-rule"`) and `signals` (its decision variables for
/// `[trace] startup`: name, unit, help), an avoidance `needs_l4s` (it requires
/// `tcp.ecn = "l4s"`).
#[pyfunction]
fn algorithms() -> PyResult<String> {
    use startlab_scenario::registry::{avoidances, startups};
    let all = startups().chain(avoidances()).map(|a| {
        let startup = if a.role == "startup" { startlab_cc::startup::decl(a.name) } else { None };
        let mut v = serde_json::to_value(a)?;
        v["plugin"] = startup.is_some_and(|d| d.is_plugin()).into();
        if let Some(d) = startup {
            v["on_ce"] = d.on_ce.name().into();
            v["signals"] = d.signals.iter().map(|s| serde_json::json!({"name": s.name, "unit": s.unit, "help": s.help})).collect::<Vec<_>>().into();
        }
        if let Some(d) = startlab_cc::avoidance::decl(a.name).filter(|_| a.role == "avoidance") {
            v["needs_l4s"] = d.needs_l4s.into();
        }
        Ok(v)
    });
    let all: Vec<serde_json::Value> = all.collect::<Result<_, serde_json::Error>>().map_err(|e| SimulationError::new_err(e.to_string()))?;
    serde_json::to_string(&all).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// The queue kinds as JSON: `[{name, role: "queue", summary, source, params: [...], limit}, ...]`
/// (`limit`: the default buffer, or null when a scenario must give it).
#[pyfunction]
fn queues() -> PyResult<String> {
    let all = startlab_scenario::queues::DECLS.iter().map(|d| {
        let mut v = serde_json::to_value(d.info)?;
        v["limit"] = d.default_limit.into();
        v["byte_limit"] = d.byte_limit.into();
        Ok(v)
    });
    let all: Vec<serde_json::Value> = all.collect::<Result<_, serde_json::Error>>().map_err(|e| SimulationError::new_err(e.to_string()))?;
    serde_json::to_string(&all).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// One ACK fed to [`controller_trace`]: (time ns, bytes newly acknowledged, ACK point, SND.NXT,
/// RTT sample ns or -1, bytes in flight after the ACK).
type ScriptedAck = (u64, u64, u64, u64, i64, u64);

/// Feeds `acks` to the congestion controller the simulator builds for the scenario's first flow
/// (each ACK preceded by the data sent up to its SND.NXT)
/// (its startup and avoidance algorithms, initial window, initial ssthresh) and returns, after
/// each ACK, (cwnd bytes, ssthresh bytes or inf, still in startup). The BPF conformance test
/// (startlab.real.conformance) compares a kernel's window on the same ACKs with this.
#[pyfunction]
#[pyo3(signature = (text, acks, format = "toml"))]
fn controller_trace(text: &str, acks: Vec<ScriptedAck>, format: &str) -> PyResult<Vec<(f64, f64, bool)>> {
    let scenario = parse(text, format, None)?;
    let Some(mut cc) = guarded("building the controller", || startlab_sim::flow_controller(&scenario, 0))? else {
        return Err(ScenarioError::new_err("flows: the scenario needs a [[flows]] entry (its first flow's controller is traced)"));
    };
    let mut out = Vec::with_capacity(acks.len());
    for (now, newly_acked, ack_seq, snd_nxt, rtt, flight_size) in acks {
        let ack = startlab_cc::AckEvent {
            now: startlab_sim::Time(now),
            newly_acked,
            ack_seq,
            snd_nxt,
            rtt: u64::try_from(rtt).ok().map(startlab_sim::Dur),
            flight_size,
            cwnd_limited: true,
            acked_segments: 1,
            timer_triggered: false,
            delivered: ack_seq,
            rate_sample: None,
            // The kernel's ACKs are replayed without ECN feedback.
            ce_bytes: 0,
        };
        // Data sent up to SND.NXT before this ACK (ends startup for an algorithm that leaves once
        // some data is out: Paced Start's FILL train).
        guarded("feeding the controller", || {
            cc.on_data_sent(ack.now, snd_nxt);
            cc.on_ack(&ack)
        })?;
        out.push((cc.cwnd(), cc.ssthresh().as_f64(), cc.phase() == startlab_cc::Phase::SlowStart && cc.startup_exit().is_none()));
    }
    Ok(out)
}

/// One simulation of one scenario.
#[pyclass(module = "startlab._core")]
struct Simulation {
    sim: Sim,
    /// A plug-in failed: the message raised again by every later call that would run.
    failed: Option<String>,
}

fn json_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// Rows (serialised structs) pivoted into `{column: list}`, columns in field order.
fn columns<'py, T: serde::Serialize>(py: Python<'py>, rows: &[T], template: Option<&T>) -> PyResult<Bound<'py, PyDict>> {
    // Row by row (each row's JSON value is dropped before the next), so that a table of a million
    // rows never exists twice in memory. Every key of every row, in order of first appearance:
    // plug-in columns (e.g. `past_case`) exist only on the flows that ran that plug-in; other
    // rows get null.
    let mut names: Vec<String> = Vec::new();
    let mut lists: Vec<Bound<'py, PyList>> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let Value::Object(o) = serde_json::to_value(row).map_err(|e| SimulationError::new_err(e.to_string()))? else {
            continue;
        };
        for k in o.keys() {
            if !names.contains(k) {
                names.push(k.clone());
                let l = PyList::empty(py);
                for _ in 0..i {
                    l.append(py.None())?;
                }
                lists.push(l);
            }
        }
        for (name, l) in names.iter().zip(&lists) {
            match o.get(name) {
                Some(v) => l.append(json_to_py(py, v)?)?,
                None => l.append(py.None())?,
            }
        }
    }
    if rows.is_empty() {
        if let Some(Ok(Value::Object(o))) = template.map(serde_json::to_value) {
            for k in o.keys() {
                names.push(k.clone());
                lists.push(PyList::empty(py));
            }
        }
    }
    let d = PyDict::new(py);
    for (name, l) in names.into_iter().zip(lists) {
        d.set_item(name, l)?;
    }
    Ok(d)
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, format = "toml", base = None))]
    fn new(py: Python<'_>, text: &str, format: &str, base: Option<&str>) -> PyResult<Self> {
        let sim = build(py, text, format, base)?;
        Ok(Simulation { sim, failed: None })
    }

    #[getter]
    fn duration_ns(&self) -> u64 {
        self.sim.end().as_nanos()
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now().as_nanos()
    }

    #[getter]
    fn finished(&self) -> bool {
        self.sim.finished()
    }

    /// Stop after `limit` events in all (None: no limit); see `event_limit_reached`.
    #[pyo3(signature = (limit = None))]
    fn set_event_limit(&mut self, limit: Option<u64>) {
        self.sim.set_event_limit(limit);
    }

    /// True when the event limit stopped the run before its end.
    #[getter]
    fn event_limit_reached(&self) -> bool {
        self.sim.event_limit_reached()
    }

    /// Run events up to `until_ns`; returns True once the run is finished.
    fn advance(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<bool> {
        if let Some(m) = &self.failed {
            return Err(PluginError::new_err(m.clone()));
        }
        let sim = &mut self.sim;
        let until = startlab_sim::Time(until_ns);
        let finished = if sim.uses_plugins() {
            // Python plug-ins' hooks run on this thread with the GIL, which it already holds.
            guarded("running the simulation", || sim.run_until(until))?
        } else {
            // The simulation holds no Python objects; release the GIL while it runs.
            py.detach(|| guarded("running the simulation", || sim.run_until(until)))?
        };
        if let Some(at) = self.sim.halted() {
            let e = match plugin::take_failure() {
                Some(f) => errors::plugin(py, f, Some(at)),
                None => SimulationError::new_err("a plug-in stopped the run without a recorded failure (please report this scenario)"),
            };
            self.failed = Some(e.value(py).to_string());
            return Err(e);
        }
        Ok(finished)
    }

    /// Capture packets to pcap/pcapng files in `directory` (`[trace.pcap]`'s links, or the
    /// default ones); call before the run.
    fn capture_pcap(&mut self, directory: &str) -> PyResult<()> {
        self.sim.capture_pcap(std::path::Path::new(directory)).map_err(pyo3::exceptions::PyOSError::new_err)
    }

    /// Whether the scenario has a `[trace.pcap]` table.
    #[getter]
    fn has_pcap_table(&self) -> bool {
        self.sim.scenario().trace.pcap.is_some()
    }

    /// Write a qlog file per flow to `directory` (`[trace.qlog]`'s flows, or every flow); call
    /// before the run.
    fn capture_qlog(&mut self, directory: &str) -> PyResult<()> {
        self.sim.capture_qlog(std::path::Path::new(directory)).map_err(pyo3::exceptions::PyOSError::new_err)
    }

    /// Whether the scenario has a `[trace.qlog]` table.
    #[getter]
    fn has_qlog_table(&self) -> bool {
        self.sim.scenario().trace.qlog.is_some()
    }

    /// The qlog files a finished run wrote: `[(path, events), ...]`.
    fn qlog_files(&self) -> Vec<(String, u64)> {
        self.sim.qlog_files().iter().map(|(p, n)| (p.display().to_string(), *n)).collect()
    }

    /// The capture files a finished run wrote: `[(path, packets), ...]`.
    fn pcap_files(&self) -> Vec<(String, u64)> {
        self.sim.pcap_files().iter().map(|(p, n)| (p.display().to_string(), *n)).collect()
    }

    /// Advance to the end.
    fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        let end = self.sim.end().as_nanos();
        self.advance(py, end).map(|_| ())
    }

    /// Engine counters.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &serde_json::to_value(self.sim.stats()).map_err(|e| SimulationError::new_err(e.to_string()))?)
    }

    /// Results as columns (see _core.pyi).
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if !self.sim.finished() {
            return Err(SimulationError::new_err("results() needs a finished run; call run() or advance() to the end first"));
        }
        plugin::clear_failure();
        let r = guarded("collecting results", || self.sim.results())?;
        if let Some(f) = plugin::take_failure() {
            // A plug-in's report() failed.
            return Err(errors::plugin(py, f, Some(self.sim.now())));
        }
        let out = PyDict::new(py);
        out.set_item("flows", columns(py, &r.flows, None)?)?;
        out.set_item("links", columns(py, &r.links, None)?)?;
        let empty = startlab_sim::ResponseResult { flow: String::new(), index: 0, size: 0, think: 0.0, request_time: 0.0, response_time: 0.0 };
        out.set_item("responses", columns(py, &r.responses, Some(&empty))?)?;
        let empty = startlab_sim::ProbeTrainResult { source: String::new(), train: 0, source_gap: 0.0, sent: 0, received: 0, dest_gap: 0.0, gap_difference: 0.0, train_rate: 0.0 };
        out.set_item("probes", columns(py, &r.probes, Some(&empty))?)?;
        let empty = startlab_sim::ProbePacketResult { source: String::new(), train: 0, index: 0, sent: 0.0, received: 0.0 };
        out.set_item("probe_packets", columns(py, &r.probe_packets, Some(&empty))?)?;
        out.set_item("transfers", columns(py, &r.transfers, Some(&startlab_sim::TransferResult::default()))?)?;
        let traces = PyDict::new(py);
        let t = r.traces;
        let cwnd = PyDict::new(py);
        cwnd.set_item("time", t.cwnd.time.clone().into_pyarray(py))?;
        cwnd.set_item("flow", t.cwnd.flow.clone().into_pyarray(py))?;
        cwnd.set_item("cwnd", t.cwnd.cwnd.clone().into_pyarray(py))?;
        cwnd.set_item("ssthresh", t.cwnd.ssthresh.clone().into_pyarray(py))?;
        cwnd.set_item("cause", t.cwnd.cause.clone().into_pyarray(py))?;
        traces.set_item("cwnd", cwnd)?;
        let seq = PyDict::new(py);
        seq.set_item("time", t.seq.time.clone().into_pyarray(py))?;
        seq.set_item("flow", t.seq.flow.clone().into_pyarray(py))?;
        seq.set_item("event", t.seq.event.clone().into_pyarray(py))?;
        seq.set_item("seq", t.seq.seq.clone().into_pyarray(py))?;
        seq.set_item("len", t.seq.len.clone().into_pyarray(py))?;
        traces.set_item("seq", seq)?;
        let queue = PyDict::new(py);
        queue.set_item("time", t.queue.time.clone().into_pyarray(py))?;
        queue.set_item("link", t.queue.link.clone().into_pyarray(py))?;
        queue.set_item("packets", t.queue.packets.clone().into_pyarray(py))?;
        queue.set_item("bytes", t.queue.bytes.clone().into_pyarray(py))?;
        queue.set_item("red_avg", t.queue.red_avg.clone().into_pyarray(py))?;
        queue.set_item("sojourn", t.queue.sojourn.clone().into_pyarray(py))?;
        traces.set_item("queue", queue)?;
        let p = &t.packets;
        let packets = PyDict::new(py);
        packets.set_item("time", p.time.clone().into_pyarray(py))?;
        packets.set_item("link", p.link.clone().into_pyarray(py))?;
        packets.set_item("event", p.event.clone().into_pyarray(py))?;
        packets.set_item("kind", p.kind.clone().into_pyarray(py))?;
        packets.set_item("flow", p.flow.clone().into_pyarray(py))?;
        packets.set_item("seq", p.seq.clone().into_pyarray(py))?;
        packets.set_item("len", p.len.clone().into_pyarray(py))?;
        packets.set_item("size", p.size.clone().into_pyarray(py))?;
        packets.set_item("queue_packets", p.queue_packets.clone().into_pyarray(py))?;
        packets.set_item("queue_bytes", p.queue_bytes.clone().into_pyarray(py))?;
        traces.set_item("packets", packets)?;
        let rt = &t.rtt;
        let rtt = PyDict::new(py);
        rtt.set_item("time", rt.time.clone().into_pyarray(py))?;
        rtt.set_item("flow", rt.flow.clone().into_pyarray(py))?;
        rtt.set_item("rtt", rt.rtt.clone().into_pyarray(py))?;
        rtt.set_item("srtt", rt.srtt.clone().into_pyarray(py))?;
        rtt.set_item("rttvar", rt.rttvar.clone().into_pyarray(py))?;
        rtt.set_item("min_rtt", rt.min_rtt.clone().into_pyarray(py))?;
        rtt.set_item("ack", rt.ack.clone().into_pyarray(py))?;
        traces.set_item("rtt", rtt)?;
        let su = &t.startup;
        let startup = PyDict::new(py);
        startup.set_item("time", su.time.clone().into_pyarray(py))?;
        startup.set_item("flow", su.flow.clone().into_pyarray(py))?;
        startup.set_item("signal", su.signal.clone().into_pyarray(py))?;
        startup.set_item("value", su.value.clone().into_pyarray(py))?;
        startup.set_item("exit", su.exit.clone().into_pyarray(py))?;
        traces.set_item("startup", startup)?;
        out.set_item("startup_signals", su.names.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>())?;
        out.set_item("startup_units", su.names.iter().map(|(_, u)| u.clone()).collect::<Vec<_>>())?;
        out.set_item("traces", traces)?;
        // The packet trace's `flow` indexes the flows, then the cross sources.
        let sources: Vec<String> = r.flow_names.iter().cloned().chain(self.sim.scenario().cross.iter().map(|c| c.name.clone())).collect();
        out.set_item("packet_sources", sources)?;
        out.set_item("packet_events", startlab_sim::trace::PACKET_EVENTS.to_vec())?;
        out.set_item("packet_kinds", startlab_sim::trace::PACKET_KINDS.to_vec())?;
        out.set_item("flow_names", r.flow_names.clone())?;
        out.set_item("link_names", r.link_names.clone())?;
        out.set_item("seq_kinds", r.seq_kinds.clone())?;
        out.set_item("cwnd_causes", r.cwnd_causes.clone())?;
        out.set_item("warmup_end", r.warmup_end)?;
        out.set_item("warnings", r.warnings.clone())?;
        let scenario = serde_json::to_string(self.sim.scenario()).map_err(|e| SimulationError::new_err(e.to_string()))?;
        out.set_item("scenario", scenario)?;
        Ok(out)
    }

    /// The `[[users]]` transfers that ended since the last call, as columns (`measured` false),
    /// plus `group`: each row's `[[users]]` group index (the order of the final table).
    fn drain_transfers<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let rows = self.sim.drain_transfers();
        let index: std::collections::BTreeMap<&str, usize> = self.sim.scenario().users.iter().enumerate().map(|(i, u)| (u.name.as_str(), i)).collect();
        let groups: Vec<usize> = rows.iter().map(|r| index.get(r.user.as_str()).copied().unwrap_or(usize::MAX)).collect();
        let out = columns(py, &rows, Some(&startlab_sim::TransferResult::default()))?;
        out.set_item("group", groups)?;
        Ok(out)
    }

    /// How `measured` is decided for the transfers of the finished run (JSON text).
    fn transfer_measure(&self) -> PyResult<String> {
        if !self.sim.finished() {
            return Err(SimulationError::new_err("transfer_measure() needs a finished run"));
        }
        Ok(self.sim.transfer_measure().to_string())
    }

    /// Conservation and monotonicity checks (raises SimulationError naming each violation).
    fn check_invariants(&self) -> PyResult<()> {
        self.sim.check_invariants().map_err(SimulationError::new_err)
    }
}

/// The native module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    startlab_scenario::set_parquet_reader(parquet_vectors);
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("PluginError", m.py().get_type::<PluginError>())?;
    m.add_function(wrap_pyfunction!(plugin::register_startup, m)?)?;
    m.add("PLUGIN_HOOKS", plugin::HOOKS.to_vec())?;
    m.add_class::<plugin::PyAction>()?;
    m.add_class::<plugin::PyView>()?;
    m.add_class::<plugin::PyAck>()?;
    m.add_class::<plugin::PyCongestion>()?;
    m.add_class::<plugin::PyQuickStart>()?;
    m.add_class::<plugin::PySavedPath>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(queues, m)?)?;
    m.add_function(wrap_pyfunction!(controller_trace, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(router::router_run, m)?)?;
    m.add_function(wrap_pyfunction!(net::udp_key, m)?)?;
    m.add_function(wrap_pyfunction!(net::udp_send, m)?)?;
    m.add_function(wrap_pyfunction!(net::udp_serve, m)?)?;
    m.add_function(wrap_pyfunction!(analyze::analyze_capture, m)?)?;
    Ok(())
}
