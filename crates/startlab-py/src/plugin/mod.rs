//! Startup algorithms written in Python (docs/OWN-ALGORITHM.md): a class registered with
//! `@startlab.startup(...)` runs inside the simulator as a [`StartupAlgorithm`], hook for hook.
//!
//! Each hook builds the read-only view and event as small frozen Python objects
//! (`objects.rs`), calls the instance's method of the same name (only the hooks the class defines
//! are called at all), and turns what it returns into the trait's value. Every method of the
//! trait is a hook ([`HOOKS`]); `keeps_startup_on_loss` may also be a `bool` attribute, read once
//! per flow. A plug-in that raises, or returns something that is not
//! an action, records its failure here (the first one on this thread) and asks the simulator to
//! stop after the current event; every later hook of the run does nothing. The bindings then raise
//! `startlab.PluginError` naming the plug-in, the hook and the simulated time, with the Python
//! exception as its cause (its traceback included).

mod objects;

pub use objects::{PyAck, PyAction, PyCongestion, PyQuickStart, PySavedPath, PyView};

use objects::{secs, to_action, to_applied_action, to_bool, to_bytes, to_memory, to_recovery, to_report};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};
use startlab_cc::decl::{AlgorithmInfo, FlowContext, ParamInfo, ParamKind, ParamValue, Params, Range};
use startlab_cc::startup::plugin::{self, request_halt};
use startlab_cc::startup::{
    Build, Detail, PathMemory, PluginFactory, QuickStartEvent, RecoveryWindow, SavedPath, StartupAction, StartupAlgorithm, StartupDecl,
};
use startlab_cc::{AckEvent, CcView, CongestionEvent, Dur, Time};
use std::cell::RefCell;

/// One failure of a plug-in on this thread, kept until the bindings report it.
pub struct Failure {
    /// The plug-in's registered name.
    pub plugin: &'static str,
    /// The hook that failed (`__init__` for the constructor).
    pub hook: &'static str,
    /// The Python exception.
    pub error: PyErr,
}

thread_local! {
    static FAILURE: RefCell<Option<Failure>> = const { RefCell::new(None) };
}

fn fail(plugin: &'static str, hook: &'static str, error: PyErr) {
    FAILURE.with(|f| {
        let mut f = f.borrow_mut();
        if f.is_none() {
            *f = Some(Failure { plugin, hook, error });
        }
    });
    request_halt();
}

/// The first plug-in failure on this thread since the last call, if any.
pub fn take_failure() -> Option<Failure> {
    FAILURE.with(|f| f.borrow_mut().take())
}

/// Forgets a failure left on this thread (before a new simulation is built).
pub fn clear_failure() {
    FAILURE.with(|f| f.borrow_mut().take());
}

/// Hooks a plug-in class may define, in the order of [`Hooks`] (the `StartupAlgorithm` trait's
/// methods). `keeps_startup_on_loss` may also be a `bool` attribute.
pub const HOOKS: [&str; 18] = [
    "on_ack",
    "on_handshake",
    "on_restart",
    "on_quick_start",
    "on_start",
    "on_congestion",
    "loss_ssthresh",
    "after_recovery",
    "report",
    "reopen",
    "on_send",
    "loss_window",
    "keeps_startup_on_loss",
    "on_recovery_ack",
    "on_retransmit",
    "retained",
    "seed",
    "signals",
];

/// Each hook's index in [`HOOKS`].
mod hook {
    pub const ON_ACK: usize = 0;
    pub const ON_HANDSHAKE: usize = 1;
    pub const ON_RESTART: usize = 2;
    pub const ON_QUICK_START: usize = 3;
    pub const ON_START: usize = 4;
    pub const ON_CONGESTION: usize = 5;
    pub const LOSS_SSTHRESH: usize = 6;
    pub const AFTER_RECOVERY: usize = 7;
    pub const REPORT: usize = 8;
    pub const REOPEN: usize = 9;
    pub const ON_SEND: usize = 10;
    pub const LOSS_WINDOW: usize = 11;
    pub const KEEPS_STARTUP_ON_LOSS: usize = 12;
    pub const ON_RECOVERY_ACK: usize = 13;
    pub const ON_RETRANSMIT: usize = 14;
    pub const RETAINED: usize = 15;
    pub const SEED: usize = 16;
    pub const SIGNALS: usize = 17;
}

/// The bound methods of one plug-in instance (None: the class does not define the hook).
struct Hooks([Option<Py<PyAny>>; HOOKS.len()]);

/// A Python plug-in's instance for one flow.
pub struct PyStartup {
    name: &'static str,
    instance: Option<Py<PyAny>>,
    hooks: Hooks,
    /// `keeps_startup_on_loss` given as a `bool` attribute (read once, when the instance is built).
    keeps: bool,
    /// The declared signals (`[trace] startup`), in the order their values are given.
    signal_decls: &'static [startlab_cc::startup::Signal],
}

impl std::fmt::Debug for PyStartup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyStartup({:?})", self.name)
    }
}

impl PyStartup {
    /// Calls hook `i` with `args` and converts its result; on failure records it, asks the run to
    /// stop and returns `fallback`. A halted run calls no Python.
    fn call<T>(&self, i: usize, fallback: T, args: impl FnOnce(Python<'_>) -> PyResult<Bound<'_, PyTuple>>, convert: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<T>) -> T {
        let Some(method) = &self.hooks.0[i] else {
            return fallback;
        };
        if plugin::halt_requested() {
            return fallback;
        }
        Python::attach(|py| {
            let result = args(py).and_then(|a| method.bind(py).call1(a)).and_then(|r| convert(&r));
            result.unwrap_or_else(|e| {
                fail(self.name, HOOKS[i], e);
                fallback
            })
        })
    }
}

fn view<'py>(py: Python<'py>, v: &CcView) -> PyResult<Bound<'py, PyView>> {
    Bound::new(py, PyView::from(v))
}

fn congestion<'py>(py: Python<'py>, ev: &CongestionEvent) -> PyResult<Bound<'py, PyCongestion>> {
    Bound::new(py, PyCongestion::from(ev))
}

fn ack<'py>(py: Python<'py>, a: &AckEvent) -> PyResult<Bound<'py, PyAck>> {
    Bound::new(py, PyAck::from(a))
}

impl StartupAlgorithm for PyStartup {
    fn on_ack(&mut self, v: &CcView, a: &AckEvent) -> StartupAction {
        self.call(hook::ON_ACK, StartupAction::default(), |py| (view(py, v)?, ack(py, a)?).into_pyobject(py), |r| to_action(r, "on_ack"))
    }
    fn on_handshake(&mut self, v: &CcView, rtt: Dur, queued: Option<u64>) -> StartupAction {
        self.call(hook::ON_HANDSHAKE, StartupAction::default(), |py| (view(py, v)?, secs(rtt), queued).into_pyobject(py), |r| to_action(r, "on_handshake"))
    }
    fn on_restart(&mut self, v: &CcView, rtt: Dur, queued: Option<u64>, snd_max: u64) -> StartupAction {
        self.call(hook::ON_RESTART, StartupAction::default(), |py| (view(py, v)?, secs(rtt), queued, snd_max).into_pyobject(py), |r| to_action(r, "on_restart"))
    }
    fn on_quick_start(&mut self, v: &CcView, ev: &QuickStartEvent) -> StartupAction {
        self.call(hook::ON_QUICK_START, StartupAction::default(), |py| (view(py, v)?, Bound::new(py, PyQuickStart::from(ev))?).into_pyobject(py), |r| to_action(r, "on_quick_start"))
    }
    fn on_start(&mut self, v: &CcView) -> StartupAction {
        self.call(hook::ON_START, StartupAction::default(), |py| (view(py, v)?,).into_pyobject(py), |r| to_action(r, "on_start"))
    }
    fn on_send(&mut self, v: &CcView, now: Time, snd_max: u64, flight: u64) -> StartupAction {
        self.call(hook::ON_SEND, StartupAction::default(), |py| (view(py, v)?, now.as_secs_f64(), snd_max, flight).into_pyobject(py), |r| to_applied_action(r, "on_send"))
    }
    fn on_congestion(&mut self, v: &CcView, ev: &CongestionEvent) {
        self.call(hook::ON_CONGESTION, (), |py| (view(py, v)?, congestion(py, ev)?).into_pyobject(py), |_| Ok(()))
    }
    fn loss_window(&mut self, v: &CcView, ev: &CongestionEvent) -> Option<f64> {
        self.call(hook::LOSS_WINDOW, None, |py| (view(py, v)?, congestion(py, ev)?).into_pyobject(py), |r| to_bytes(r, "loss_window"))
    }
    fn loss_ssthresh(&mut self, v: &CcView, ev: &CongestionEvent, retransmitted: u64) -> Option<f64> {
        self.call(hook::LOSS_SSTHRESH, None, |py| (view(py, v)?, congestion(py, ev)?, retransmitted).into_pyobject(py), |r| to_bytes(r, "loss_ssthresh"))
    }
    fn after_recovery(&mut self, v: &CcView, retransmitted: u64) -> Option<RecoveryWindow> {
        self.call(hook::AFTER_RECOVERY, None, |py| (view(py, v)?, retransmitted).into_pyobject(py), to_recovery)
    }
    fn report(&self) -> Vec<(&'static str, Detail)> {
        self.call(hook::REPORT, Vec::new(), |py| Ok(PyTuple::empty(py)), to_report)
    }
    fn keeps_startup_on_loss(&self) -> bool {
        self.keeps || self.call(hook::KEEPS_STARTUP_ON_LOSS, false, |py| Ok(PyTuple::empty(py)), |r| to_bool(r, "keeps_startup_on_loss"))
    }
    fn on_recovery_ack(&mut self, v: &CcView, a: &AckEvent) -> StartupAction {
        self.call(hook::ON_RECOVERY_ACK, StartupAction::default(), |py| (view(py, v)?, ack(py, a)?).into_pyobject(py), |r| to_applied_action(r, "on_recovery_ack"))
    }
    fn on_retransmit(&mut self, seq: u64, len: u64) {
        self.call(hook::ON_RETRANSMIT, (), |py| (seq, len).into_pyobject(py), |_| Ok(()))
    }
    fn reopen(&mut self, v: &CcView, a: &AckEvent) -> Option<f64> {
        self.call(hook::REOPEN, None, |py| (view(py, v)?, ack(py, a)?).into_pyobject(py), |r| to_bytes(r, "reopen"))
    }
    fn retained(&self) -> Option<PathMemory> {
        self.call(hook::RETAINED, None, |py| Ok(PyTuple::empty(py)), to_memory)
    }
    fn seed(&mut self, saved: Option<SavedPath>) {
        self.call(hook::SEED, (), |py| (saved.as_ref().map(PySavedPath::from),).into_pyobject(py), |_| Ok(()))
    }
    fn signals(&self, out: &mut Vec<f64>) {
        let decls = self.signal_decls;
        let nan = vec![f64::NAN; decls.len()];
        let values = self.call(hook::SIGNALS, nan.clone(), |py| Ok(PyTuple::empty(py)), |r| {
            let d = r.cast::<PyDict>().map_err(|_| PyTypeError::new_err("signals returned something other than a dict; expected {signal: number}"))?;
            for k in d.keys() {
                let k: String = k.extract().map_err(|_| PyTypeError::new_err("signals: a signal name is not a str"))?;
                if !decls.iter().any(|s| s.name == k) {
                    let known: Vec<&str> = decls.iter().map(|s| s.name).collect();
                    return Err(PyTypeError::new_err(format!("signals: {k:?} is not declared; the plug-in declares {known:?} (startlab.startup(..., signals=...))")));
                }
            }
            decls
                .iter()
                .map(|s| match d.get_item(s.name)? {
                    None => Ok(f64::NAN),
                    Some(v) if v.is_none() => Ok(f64::NAN),
                    Some(v) => v.extract::<f64>().map_err(|_| PyTypeError::new_err(format!("signals: {:?} is not a number", s.name))),
                })
                .collect()
        });
        out.extend(values);
    }
}

impl Drop for PyStartup {
    fn drop(&mut self) {
        // The instance and its bound methods are released with the GIL held.
        if self.instance.is_some() || self.hooks.0.iter().any(Option::is_some) {
            Python::attach(|_| {
                self.instance.take();
                for h in &mut self.hooks.0 {
                    h.take();
                }
            });
        }
    }
}

/// Builds a Python plug-in's instance per flow: `factory(params)` with the flow's parameters as a
/// dict (windows in bytes, durations in seconds, rates in bit/s).
#[derive(Debug)]
struct PyFactory {
    name: &'static str,
    factory: Py<PyAny>,
    signals: &'static [startlab_cc::startup::Signal],
}

fn param_to_py<'py>(py: Python<'py>, v: &ParamValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ParamValue::Bytes(b) | ParamValue::Integer(b) => b.into_pyobject(py)?.into_any(),
        ParamValue::Dur(d) => secs(*d).into_pyobject(py)?.into_any(),
        ParamValue::Number(x) => x.into_pyobject(py)?.into_any(),
        ParamValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        ParamValue::Choice(c) => c.into_pyobject(py)?.into_any(),
    })
}

impl PluginFactory for PyFactory {
    fn build(&self, params: &Params<'_>, _cx: &FlowContext) -> Box<dyn StartupAlgorithm + Send + Sync> {
        let name = self.name;
        let signal_decls = self.signals;
        let inert = || PyStartup { name, instance: None, hooks: Hooks(Default::default()), keeps: false, signal_decls };
        if plugin::halt_requested() {
            return Box::new(inert());
        }
        Python::attach(|py| {
            let built = (|| {
                let d = PyDict::new(py);
                for (k, v) in params.iter() {
                    d.set_item(k, param_to_py(py, v)?)?;
                }
                let instance = self.factory.bind(py).call1((d,))?;
                let mut hooks = Hooks(Default::default());
                let mut keeps = false;
                for (i, (slot, name)) in hooks.0.iter_mut().zip(HOOKS).enumerate() {
                    let Some(m) = instance.getattr_opt(name)? else { continue };
                    if i == hook::KEEPS_STARTUP_ON_LOSS && m.is_instance_of::<PyBool>() {
                        // A constant: no call per fast retransmit.
                        keeps = m.is_truthy()?;
                        continue;
                    }
                    if !m.is_callable() {
                        let accepted = if i == hook::KEEPS_STARTUP_ON_LOSS { "True, False or a method" } else { "a method" };
                        return Err(PyTypeError::new_err(format!("{name} = {} is not {accepted}", m.repr()?)));
                    }
                    *slot = Some(m.unbind());
                }
                if hooks.0[hook::ON_ACK].is_none() {
                    return Err(PyTypeError::new_err("the plug-in defines no on_ack(view, ack) method"));
                }
                Ok(PyStartup { name, instance: Some(instance.unbind()), hooks, keeps, signal_decls })
            })();
            let startup: Box<dyn StartupAlgorithm + Send + Sync> = match built {
                Ok(s) => Box::new(s),
                Err(e) => {
                    fail(name, "__init__", e);
                    Box::new(inert())
                }
            };
            startup
        })
    }
}

/// One parameter as the Python side declares it: name, kind ("window", "duration", "rate",
/// "number", "integer", "bool", "choice"), default as written in a scenario, help, range
/// ("any", "at_least", "above", "between") with its bounds, and a choice's options.
type ParamSpec = (String, String, String, String, String, f64, f64, Vec<String>);

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn param_info(algorithm: &str, spec: ParamSpec) -> PyResult<ParamInfo> {
    let (name, kind, default, help, range, lo, hi, options) = spec;
    let bad = |m: String| PyValueError::new_err(format!("plug-in {algorithm:?}, parameter {name:?}: {m}"));
    let ident = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident || name == "algorithm" {
        return Err(bad("a parameter name is lower-case letters, digits and '_', and not \"algorithm\"".into()));
    }
    let kind = match kind.as_str() {
        "window" => ParamKind::Window,
        "duration" => ParamKind::Duration,
        "rate" => ParamKind::Rate,
        "number" => ParamKind::Number,
        "integer" => ParamKind::Integer,
        "bool" => ParamKind::Bool,
        "choice" if !options.is_empty() => ParamKind::Choice(Box::leak(options.into_iter().map(leak).collect::<Vec<_>>().into_boxed_slice())),
        "choice" => return Err(bad("a choice needs at least one option".into())),
        other => return Err(bad(format!("kind {other:?} is not known; expected window, duration, rate, number, integer, bool or choice"))),
    };
    let range = match range.as_str() {
        "any" => Range::Any,
        "at_least" => Range::AtLeast(lo),
        "above" => Range::Above(lo),
        "between" if lo <= hi => Range::Between(lo, hi),
        "between" => return Err(bad(format!("the range from {lo} to {hi} is empty"))),
        other => return Err(bad(format!("range {other:?} is not known"))),
    };
    let json: serde_json::Value = serde_json::from_str(&default).unwrap_or_else(|_| serde_json::Value::String(default.clone()));
    // The default's range is checked with a 1000-byte segment, as the registry's own test does.
    let value = startlab_scenario::registry::parse_param(kind, &json, 1000).map_err(|m| bad(format!("the default {default}: {m}")))?;
    if value.as_f64().is_some_and(|x| !range.contains(x)) {
        return Err(bad(format!("the default {default} is outside its own range")));
    }
    Ok(ParamInfo { name: leak(name), kind, default: leak(default), help: leak(help), range, presets: &[] })
}

/// Registers a Python startup plug-in: `factory(params: dict)` returns an instance with an
/// `on_ack(view, ack)` method and any of the other hooks.
#[pyfunction]
#[pyo3(signature = (name, summary, source, params, per_response, factory, signals = Vec::new()))]
pub fn register_startup(name: String, summary: String, source: String, params: Vec<ParamSpec>, per_response: bool, factory: Py<PyAny>, signals: Vec<(String, String, String)>) -> PyResult<()> {
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        return Err(PyValueError::new_err(format!("plug-in name {name:?} is not valid; expected letters, digits, '-' and '_' (e.g. \"my-start\")")));
    }
    let mut infos = Vec::with_capacity(params.len());
    for p in params {
        if infos.iter().any(|i: &ParamInfo| i.name == p.0) {
            return Err(PyValueError::new_err(format!("plug-in {name:?}: parameter {:?} is declared twice", p.0)));
        }
        infos.push(param_info(&name, p)?);
    }
    const UNITS: [&str; 7] = ["s", "bytes", "bytes/s", "pkts", "acks", "rounds", "-"];
    let mut decls = Vec::with_capacity(signals.len());
    for (signal, unit, help) in signals {
        let ident = signal.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_') && signal.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            return Err(PyValueError::new_err(format!("plug-in {name:?}, signal {signal:?}: a signal name is lower-case letters, digits and '_'")));
        }
        if decls.iter().any(|d: &startlab_cc::startup::Signal| d.name == signal) {
            return Err(PyValueError::new_err(format!("plug-in {name:?}: signal {signal:?} is declared twice")));
        }
        if !UNITS.contains(&unit.as_str()) {
            return Err(PyValueError::new_err(format!("plug-in {name:?}, signal {signal:?}: unit {unit:?} is not known; expected one of {UNITS:?}")));
        }
        decls.push(startlab_cc::startup::Signal::new(leak(signal), leak(unit), leak(help)));
    }
    let signals: &'static [startlab_cc::startup::Signal] = Box::leak(decls.into_boxed_slice());
    let name = leak(name);
    let decl = StartupDecl {
        info: AlgorithmInfo { name, role: "startup", summary: leak(summary), source: leak(source), params: Box::leak(infos.into_boxed_slice()) },
        build: Build::Plugin(Box::leak(Box::new(PyFactory { name, factory, signals }))),
        check: startlab_cc::decl::no_check,
        per_response,
        // A Python plug-in cannot talk to routers or set the initial window.
        router_approval: false,
        sets_initial_window: false,
        // Its hooks do not see CE-marked bytes: a CE mark ends its startup as a loss would.
        on_ce: startlab_cc::startup::CeRule::ExitAsLoss,
        signals,
    };
    plugin::register(decl).map(|_| ()).map_err(PyValueError::new_err)
}
