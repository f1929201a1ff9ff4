//! Startup algorithms written in Python (docs/OWN-ALGORITHM.md): a class registered with
//! `@startlab.startup(...)` runs inside the simulator as a [`StartupAlgorithm`], hook for hook.
//!
//! Each hook builds the read-only view and event as small frozen Python objects, calls the
//! instance's method of the same name (only the hooks the class defines are called at all), and
//! turns what it returns into the action. A plug-in that raises, or returns something that is not
//! an action, records its failure here (the first one on this thread) and asks the simulator to
//! stop after the current event; every later hook of the run does nothing. The bindings then raise
//! `startlab.PluginError` naming the plug-in, the hook and the simulated time, with the Python
//! exception as its cause (its traceback included).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use startlab_cc::decl::{AlgorithmInfo, FlowContext, ParamInfo, ParamKind, ParamValue, Params, Range};
use startlab_cc::startup::plugin::{self, request_halt};
use startlab_cc::startup::{
    Build, Detail, PluginFactory, QsOutcome, QuickStartEvent, RecoveryWindow, SendLimit, StartupAction, StartupAlgorithm, StartupDecl,
};
use startlab_cc::{AckEvent, CcView, CongestionEvent, CongestionKind, Dur, ExitReason};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// What a plug-in sees of the controller (read-only; windows in bytes, times in seconds).
#[pyclass(module = "startlab._core", name = "View", frozen, get_all)]
pub struct PyView {
    /// Congestion window, bytes.
    cwnd: f64,
    /// Slow-start threshold, bytes (`inf` when infinite).
    ssthresh: f64,
    /// Segment size, bytes.
    mss: u64,
    /// Rounds completed.
    round: u64,
    /// Smallest RTT sample so far, seconds (None before the first).
    min_rtt: Option<f64>,
    /// True on the ACK that ended a round.
    new_round: bool,
}

#[pymethods]
impl PyView {
    fn __repr__(&self) -> String {
        format!(
            "View(cwnd={}, ssthresh={}, mss={}, round={}, min_rtt={:?}, new_round={})",
            self.cwnd, self.ssthresh, self.mss, self.round, self.min_rtt, self.new_round
        )
    }
}

impl From<&CcView> for PyView {
    fn from(v: &CcView) -> Self {
        PyView { cwnd: v.cwnd, ssthresh: v.ssthresh.as_f64(), mss: v.mss, round: v.round, min_rtt: v.min_rtt.map(secs), new_round: v.new_round }
    }
}

/// An ACK that advanced `SND.UNA` (bytes; times in seconds).
#[pyclass(module = "startlab._core", name = "Ack", frozen, get_all)]
pub struct PyAck {
    /// When it arrived.
    now: f64,
    /// Bytes newly acknowledged cumulatively.
    newly_acked: u64,
    /// `SND.UNA` after this ACK.
    ack_seq: u64,
    /// `SND.NXT` when it arrived.
    snd_nxt: u64,
    /// RTT sample (None when Karn's rule forbids one).
    rtt: Option<f64>,
    /// Bytes in flight after it.
    flight_size: u64,
    /// The sender used its whole window recently (growth is suspended by the controller when not).
    cwnd_limited: bool,
    /// Data segments it covers for the first time.
    acked_segments: u32,
    /// The receiver's delayed-ACK timer released it.
    timer_triggered: bool,
    /// Bytes delivered so far.
    delivered: u64,
    /// Delivery-rate sample of the newest segment it acknowledges, bytes/s (None if none).
    delivery_rate: Option<f64>,
}

#[pymethods]
impl PyAck {
    fn __repr__(&self) -> String {
        format!(
            "Ack(now={}, newly_acked={}, ack_seq={}, snd_nxt={}, rtt={:?}, flight_size={}, acked_segments={})",
            self.now, self.newly_acked, self.ack_seq, self.snd_nxt, self.rtt, self.flight_size, self.acked_segments
        )
    }
}

impl From<&AckEvent> for PyAck {
    fn from(a: &AckEvent) -> Self {
        PyAck {
            now: a.now.as_secs_f64(),
            newly_acked: a.newly_acked,
            ack_seq: a.ack_seq,
            snd_nxt: a.snd_nxt,
            rtt: a.rtt.map(secs),
            flight_size: a.flight_size,
            cwnd_limited: a.cwnd_limited,
            acked_segments: a.acked_segments,
            timer_triggered: a.timer_triggered,
            delivered: a.delivered,
            delivery_rate: a.rate_sample.map(|r| r.rate()),
        }
    }
}

/// A congestion signal (`kind`: "fast-retransmit", "timeout" or "ecn").
#[pyclass(module = "startlab._core", name = "Congestion", frozen, get_all)]
pub struct PyCongestion {
    /// When it was detected, seconds.
    now: f64,
    /// Its kind.
    kind: &'static str,
    /// FlightSize at detection, bytes.
    flight_size: u64,
    /// The endpoint enters fast recovery.
    enter_recovery: bool,
}

#[pymethods]
impl PyCongestion {
    fn __repr__(&self) -> String {
        format!("Congestion(now={}, kind={:?}, flight_size={}, enter_recovery={})", self.now, self.kind, self.flight_size, self.enter_recovery)
    }
}

impl From<&CongestionEvent> for PyCongestion {
    fn from(e: &CongestionEvent) -> Self {
        let kind = match e.kind {
            CongestionKind::FastRetransmit => "fast-retransmit",
            CongestionKind::Timeout => "timeout",
            CongestionKind::Ecn => "ecn",
        };
        PyCongestion { now: e.now.as_secs_f64(), kind, flight_size: e.flight_size, enter_recovery: e.enter_recovery }
    }
}

/// The sender's verdict on its Quick-Start request (RFC 4782): `outcome` is "approved",
/// "denied", "ttl-mismatch", "nonce-mismatch" or "no-report"; `rate_code` the approved code.
#[pyclass(module = "startlab._core", name = "QuickStartVerdict", frozen, get_all)]
pub struct PyQuickStart {
    outcome: &'static str,
    rate_code: Option<u8>,
    rtt: Option<f64>,
    queued: Option<u64>,
    snd_max: u64,
    flight_size: u64,
    in_startup: bool,
}

impl From<&QuickStartEvent> for PyQuickStart {
    fn from(e: &QuickStartEvent) -> Self {
        let (outcome, rate_code) = match e.outcome {
            QsOutcome::Approved { code } => ("approved", Some(code)),
            QsOutcome::Denied => ("denied", None),
            QsOutcome::TtlMismatch => ("ttl-mismatch", None),
            QsOutcome::NonceMismatch => ("nonce-mismatch", None),
            QsOutcome::NoReport => ("no-report", None),
        };
        PyQuickStart { outcome, rate_code, rtt: e.rtt.map(secs), queued: e.queued, snd_max: e.snd_max, flight_size: e.flight_size, in_startup: e.in_startup }
    }
}

fn secs(d: Dur) -> f64 {
    d.as_secs_f64()
}

/// What a plug-in decided (the Rust `StartupAction`): grow by `increase` bytes, and optionally
/// set cwnd or ssthresh (bytes), end startup with a reason, pace at `pacing_rate` bytes/s (0 stops
/// pacing), hold new data at `send_limit` (a byte offset, or "open"), or end startup once data up
/// to a byte offset was sent (`exit_when_sent=(offset, reason)`). Checked when it is made.
#[pyclass(module = "startlab._core", name = "Action", frozen)]
pub struct PyAction {
    inner: StartupAction,
}

fn finite(what: &str, x: f64) -> PyResult<f64> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(PyValueError::new_err(format!("Action: {what} = {x} is not a finite number of bytes")))
    }
}

fn reason(name: &str) -> PyResult<ExitReason> {
    ExitReason::from_name(name).ok_or_else(|| {
        let known: Vec<_> = ExitReason::ALL.iter().map(|r| format!("{:?}", r.as_str())).collect();
        PyValueError::new_err(format!("Action: exit reason {name:?} is not known; expected one of {}", known.join(", ")))
    })
}

#[pymethods]
impl PyAction {
    #[new]
    #[pyo3(signature = (increase = 0.0, *, set_cwnd = None, set_ssthresh = None, exit = None, pacing_rate = None, send_limit = None, exit_when_sent = None))]
    fn new(
        increase: f64,
        set_cwnd: Option<f64>,
        set_ssthresh: Option<f64>,
        exit: Option<&str>,
        pacing_rate: Option<f64>,
        send_limit: Option<&Bound<'_, PyAny>>,
        exit_when_sent: Option<(u64, String)>,
    ) -> PyResult<Self> {
        let send_limit = match send_limit {
            None => None,
            Some(v) if v.extract::<&str>().is_ok_and(|s| s == "open") => Some(SendLimit::Open),
            Some(v) => match v.extract::<u64>() {
                Ok(seq) if !v.is_instance_of::<pyo3::types::PyBool>() => Some(SendLimit::Upto(seq)),
                _ => return Err(PyValueError::new_err(format!("Action: send_limit = {v} is not valid; expected a byte offset (an integer >= 0) or \"open\""))),
            },
        };
        if pacing_rate.is_some_and(|r| !r.is_finite() || r < 0.0) {
            return Err(PyValueError::new_err(format!("Action: pacing_rate = {} is not valid; expected bytes per second >= 0 (0 stops pacing)", pacing_rate.unwrap_or_default())));
        }
        Ok(PyAction {
            inner: StartupAction {
                increase: finite("increase", increase)?,
                set_cwnd: set_cwnd.map(|x| finite("set_cwnd", x)).transpose()?,
                set_ssthresh: set_ssthresh.map(|x| finite("set_ssthresh", x)).transpose()?,
                exit: exit.map(reason).transpose()?,
                pacing_rate,
                pacing_start: None,
                send_limit,
                exit_when_sent: exit_when_sent.map(|(seq, r)| reason(&r).map(|r| (seq, r))).transpose()?,
            },
        })
    }

    #[getter]
    fn increase(&self) -> f64 {
        self.inner.increase
    }
    #[getter]
    fn set_cwnd(&self) -> Option<f64> {
        self.inner.set_cwnd
    }
    #[getter]
    fn set_ssthresh(&self) -> Option<f64> {
        self.inner.set_ssthresh
    }
    #[getter]
    fn exit(&self) -> Option<&'static str> {
        self.inner.exit.map(ExitReason::as_str)
    }
    #[getter]
    fn pacing_rate(&self) -> Option<f64> {
        self.inner.pacing_rate
    }

    fn __repr__(&self) -> String {
        format!("Action({:?})", self.inner)
    }
}

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

/// Hooks a plug-in class may define, in the order of [`Hooks`].
pub const HOOKS: [&str; 10] = ["on_ack", "on_handshake", "on_restart", "on_quick_start", "on_start", "on_congestion", "loss_ssthresh", "after_recovery", "report", "reopen"];

/// The bound methods of one plug-in instance (None: the class does not define the hook).
struct Hooks([Option<Py<PyAny>>; 10]);

/// A Python plug-in's instance for one flow.
pub struct PyStartup {
    name: &'static str,
    instance: Option<Py<PyAny>>,
    hooks: Hooks,
}

impl std::fmt::Debug for PyStartup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyStartup({:?})", self.name)
    }
}

/// Python objects of any type a plug-in may return as an action.
fn to_action(v: &Bound<'_, PyAny>, hook: &str) -> PyResult<StartupAction> {
    if v.is_none() {
        return Ok(StartupAction::default());
    }
    if let Ok(a) = v.cast::<PyAction>() {
        return Ok(a.get().inner);
    }
    if !v.is_instance_of::<pyo3::types::PyBool>() {
        if let Ok(x) = v.extract::<f64>() {
            if x.is_finite() {
                return Ok(StartupAction::grow(x));
            }
        }
    }
    Err(PyTypeError::new_err(format!("{hook} returned {}; expected startlab.Action, a finite number (the increase in bytes) or None", v.repr().map_or_else(|_| "an object".into(), |r| r.to_string()))))
}

fn to_bytes(v: &Bound<'_, PyAny>, hook: &str) -> PyResult<Option<f64>> {
    if v.is_none() {
        return Ok(None);
    }
    match v.extract::<f64>() {
        Ok(x) if x.is_finite() && !v.is_instance_of::<pyo3::types::PyBool>() => Ok(Some(x)),
        _ => Err(PyTypeError::new_err(format!("{hook} returned {}; expected a finite number of bytes or None", v.repr().map_or_else(|_| "an object".into(), |r| r.to_string())))),
    }
}

fn to_recovery(v: &Bound<'_, PyAny>) -> PyResult<Option<RecoveryWindow>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        if t.len() == 2 {
            let cwnd = to_bytes(&t.get_item(0)?, "after_recovery")?;
            let ssthresh = to_bytes(&t.get_item(1)?, "after_recovery")?;
            if let Some(cwnd) = cwnd {
                return Ok(Some(RecoveryWindow { cwnd, ssthresh }));
            }
        }
    }
    match to_bytes(v, "after_recovery") {
        Ok(Some(cwnd)) => Ok(Some(RecoveryWindow { cwnd, ssthresh: None })),
        _ => Err(PyTypeError::new_err(format!(
            "after_recovery returned {}; expected None, cwnd (bytes) or (cwnd, ssthresh or None)",
            v.repr().map_or_else(|_| "an object".into(), |r| r.to_string())
        ))),
    }
}

/// Names and texts a plug-in reports live as long as the process; each distinct one is kept once.
static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

fn intern(s: &str) -> &'static str {
    let mut set = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(x) = set.get(s) {
        return x;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

fn to_report(v: &Bound<'_, PyAny>) -> PyResult<Vec<(&'static str, Detail)>> {
    if v.is_none() {
        return Ok(Vec::new());
    }
    let d = v.cast::<PyDict>().map_err(|_| PyTypeError::new_err("report returned something other than a dict; expected {column: number or str}"))?;
    let mut out = Vec::new();
    for (k, x) in d.iter() {
        let k: String = k.extract().map_err(|_| PyTypeError::new_err("report: a column name is not a str"))?;
        let detail = if let Ok(s) = x.extract::<String>() {
            Detail::Text(intern(&s))
        } else {
            match x.extract::<f64>() {
                Ok(n) => Detail::Num(n),
                Err(_) => return Err(PyTypeError::new_err(format!("report: {k:?} is neither a number nor a str"))),
            }
        };
        out.push((intern(&k), detail));
    }
    Ok(out)
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

impl StartupAlgorithm for PyStartup {
    fn on_ack(&mut self, v: &CcView, ack: &AckEvent) -> StartupAction {
        self.call(0, StartupAction::default(), |py| (view(py, v)?, Bound::new(py, PyAck::from(ack))?).into_pyobject(py), |r| to_action(r, "on_ack"))
    }
    fn on_handshake(&mut self, v: &CcView, rtt: Dur, queued: Option<u64>) -> StartupAction {
        self.call(1, StartupAction::default(), |py| (view(py, v)?, secs(rtt), queued).into_pyobject(py), |r| to_action(r, "on_handshake"))
    }
    fn on_restart(&mut self, v: &CcView, rtt: Dur, queued: Option<u64>, snd_max: u64) -> StartupAction {
        self.call(2, StartupAction::default(), |py| (view(py, v)?, secs(rtt), queued, snd_max).into_pyobject(py), |r| to_action(r, "on_restart"))
    }
    fn on_quick_start(&mut self, v: &CcView, ev: &QuickStartEvent) -> StartupAction {
        self.call(3, StartupAction::default(), |py| (view(py, v)?, Bound::new(py, PyQuickStart::from(ev))?).into_pyobject(py), |r| to_action(r, "on_quick_start"))
    }
    fn on_start(&mut self, v: &CcView) -> StartupAction {
        self.call(4, StartupAction::default(), |py| (view(py, v)?,).into_pyobject(py), |r| to_action(r, "on_start"))
    }
    fn on_congestion(&mut self, v: &CcView, ev: &CongestionEvent) {
        self.call(5, (), |py| (view(py, v)?, Bound::new(py, PyCongestion::from(ev))?).into_pyobject(py), |_| Ok(()))
    }
    fn loss_ssthresh(&mut self, v: &CcView, ev: &CongestionEvent, retransmitted: u64) -> Option<f64> {
        self.call(6, None, |py| (view(py, v)?, Bound::new(py, PyCongestion::from(ev))?, retransmitted).into_pyobject(py), |r| to_bytes(r, "loss_ssthresh"))
    }
    fn after_recovery(&mut self, v: &CcView, retransmitted: u64) -> Option<RecoveryWindow> {
        self.call(7, None, |py| (view(py, v)?, retransmitted).into_pyobject(py), to_recovery)
    }
    fn report(&self) -> Vec<(&'static str, Detail)> {
        self.call(8, Vec::new(), |py| Ok(PyTuple::empty(py)), to_report)
    }
    fn reopen(&mut self, v: &CcView, ack: &AckEvent) -> Option<f64> {
        self.call(9, None, |py| (view(py, v)?, Bound::new(py, PyAck::from(ack))?).into_pyobject(py), |r| to_bytes(r, "reopen"))
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
        let inert = || PyStartup { name, instance: None, hooks: Hooks(Default::default()) };
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
                for (slot, hook) in hooks.0.iter_mut().zip(HOOKS) {
                    if let Some(m) = instance.getattr_opt(hook)? {
                        if !m.is_callable() {
                            return Err(PyTypeError::new_err(format!("{hook} is not a method")));
                        }
                        *slot = Some(m.unbind());
                    }
                }
                if hooks.0[0].is_none() {
                    return Err(PyTypeError::new_err("the plug-in defines no on_ack(view, ack) method"));
                }
                Ok(PyStartup { name, instance: Some(instance.unbind()), hooks })
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
#[pyo3(signature = (name, summary, source, params, per_response, factory))]
pub fn register_startup(name: String, summary: String, source: String, params: Vec<ParamSpec>, per_response: bool, factory: Py<PyAny>) -> PyResult<()> {
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
    let name = leak(name);
    let decl = StartupDecl {
        info: AlgorithmInfo { name, role: "startup", summary: leak(summary), source: leak(source), params: Box::leak(infos.into_boxed_slice()) },
        build: Build::Plugin(Box::leak(Box::new(PyFactory { name, factory }))),
        check: startlab_cc::decl::no_check,
        per_response,
        // A Python plug-in cannot talk to routers or set the initial window.
        router_approval: false,
        sets_initial_window: false,
        // Its hooks do not see CE-marked bytes: a CE mark ends its startup as a loss would.
        on_ce: startlab_cc::startup::CeRule::ExitAsLoss,
    };
    plugin::register(decl).map(|_| ()).map_err(PyValueError::new_err)
}
