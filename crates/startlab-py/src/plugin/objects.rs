//! The Python objects a plug-in's hooks receive (the view, an ACK, a congestion signal, the
//! Quick-Start verdict, a saved path) and return (an action, a saved path), and the conversion of
//! what a hook returns into the trait's types: each refusal names the hook and what it accepts.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};
use startlab_cc::startup::{Detail, PathMemory, QsOutcome, QuickStartEvent, RecoveryWindow, SavedPath, SendLimit, StartupAction};
use startlab_cc::{AckEvent, CcView, CongestionEvent, CongestionKind, Dur, ExitReason, Time};
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

/// A simulated time from seconds (finite, >= 0), to the nearest nanosecond.
fn time(s: f64) -> Time {
    Time((s * 1e9).round() as u64)
}

pub(super) fn secs(d: Dur) -> f64 {
    d.as_secs_f64()
}

/// What a plug-in decided (the Rust `StartupAction`): grow by `increase` bytes, and optionally
/// set cwnd or ssthresh (bytes), end startup with a reason, pace at `pacing_rate` bytes/s (0 stops
/// pacing), hold new data at `send_limit` (a byte offset, or "open"), or end startup once data up
/// to a byte offset was sent (`exit_when_sent=(offset, reason)`); with a pacing rate in force, send
/// the next segment no earlier than `pacing_start` (simulated time, seconds). Checked when it is made.
#[pyclass(module = "startlab._core", name = "Action", frozen)]
pub struct PyAction {
    pub(super) inner: StartupAction,
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
    #[pyo3(signature = (increase = 0.0, *, set_cwnd = None, set_ssthresh = None, exit = None, pacing_rate = None, send_limit = None, exit_when_sent = None, pacing_start = None))]
    #[allow(clippy::too_many_arguments, reason = "the keyword arguments of Action(...)")]
    fn new(
        increase: f64,
        set_cwnd: Option<f64>,
        set_ssthresh: Option<f64>,
        exit: Option<&str>,
        pacing_rate: Option<f64>,
        send_limit: Option<&Bound<'_, PyAny>>,
        exit_when_sent: Option<(u64, String)>,
        pacing_start: Option<f64>,
    ) -> PyResult<Self> {
        let send_limit = match send_limit {
            None => None,
            Some(v) if v.extract::<&str>().is_ok_and(|s| s == "open") => Some(SendLimit::Open),
            Some(v) => match v.extract::<u64>() {
                Ok(seq) if !v.is_instance_of::<PyBool>() => Some(SendLimit::Upto(seq)),
                _ => return Err(PyValueError::new_err(format!("Action: send_limit = {v} is not valid; expected a byte offset (an integer >= 0) or \"open\""))),
            },
        };
        if pacing_rate.is_some_and(|r| !r.is_finite() || r < 0.0) {
            return Err(PyValueError::new_err(format!("Action: pacing_rate = {} is not valid; expected bytes per second >= 0 (0 stops pacing)", pacing_rate.unwrap_or_default())));
        }
        let pacing_start = match pacing_start {
            None => None,
            Some(t) if t.is_finite() && t >= 0.0 => Some(time(t)),
            Some(t) => return Err(PyValueError::new_err(format!("Action: pacing_start = {t} is not valid; expected a simulated time in seconds >= 0"))),
        };
        Ok(PyAction {
            inner: StartupAction {
                increase: finite("increase", increase)?,
                set_cwnd: set_cwnd.map(|x| finite("set_cwnd", x)).transpose()?,
                set_ssthresh: set_ssthresh.map(|x| finite("set_ssthresh", x)).transpose()?,
                exit: exit.map(reason).transpose()?,
                pacing_rate,
                pacing_start,
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
    #[getter]
    fn pacing_start(&self) -> Option<f64> {
        self.inner.pacing_start.map(Time::as_secs_f64)
    }

    fn __repr__(&self) -> String {
        format!("Action({:?})", self.inner)
    }
}

/// Python objects of any type a plug-in may return as an action.
pub(super) fn to_action(v: &Bound<'_, PyAny>, hook: &str) -> PyResult<StartupAction> {
    if v.is_none() {
        return Ok(StartupAction::default());
    }
    if let Ok(a) = v.cast::<PyAction>() {
        return Ok(a.get().inner);
    }
    if !v.is_instance_of::<PyBool>() {
        if let Ok(x) = v.extract::<f64>() {
            if x.is_finite() {
                return Ok(StartupAction::grow(x));
            }
        }
    }
    Err(PyTypeError::new_err(format!("{hook} returned {}; expected startlab.Action, a finite number (the increase in bytes) or None", shown(v))))
}

pub(super) fn to_bytes(v: &Bound<'_, PyAny>, hook: &str) -> PyResult<Option<f64>> {
    if v.is_none() {
        return Ok(None);
    }
    match v.extract::<f64>() {
        Ok(x) if x.is_finite() && !v.is_instance_of::<PyBool>() => Ok(Some(x)),
        _ => Err(PyTypeError::new_err(format!("{hook} returned {}; expected a finite number of bytes or None", shown(v)))),
    }
}

pub(super) fn to_recovery(v: &Bound<'_, PyAny>) -> PyResult<Option<RecoveryWindow>> {
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
            shown(v)
        ))),
    }
}

/// Names and texts a plug-in reports live as long as the process; each distinct one is kept once.
static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

pub(super) fn intern(s: &str) -> &'static str {
    let mut set = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(x) = set.get(s) {
        return x;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

pub(super) fn to_report(v: &Bound<'_, PyAny>) -> PyResult<Vec<(&'static str, Detail)>> {
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


/// What a hook returned, as Python writes it (for the messages).
fn shown(v: &Bound<'_, PyAny>) -> String {
    v.repr().map_or_else(|_| "an object".into(), |r| r.to_string())
}

/// An action from a hook whose `increase` means nothing (`on_send`, `on_recovery_ack`): an
/// `Action` or `None`, not the bare number `on_ack` takes as its increase.
pub(super) fn to_applied_action(v: &Bound<'_, PyAny>, hook: &str) -> PyResult<StartupAction> {
    if v.is_none() {
        return Ok(StartupAction::default());
    }
    match v.cast::<PyAction>() {
        Ok(a) => Ok(a.get().inner),
        Err(_) => Err(PyTypeError::new_err(format!("{hook} returned {}; expected startlab.Action or None", shown(v)))),
    }
}

/// `True` or `False` (`keeps_startup_on_loss`).
pub(super) fn to_bool(v: &Bound<'_, PyAny>, hook: &str) -> PyResult<bool> {
    match v.cast::<PyBool>() {
        Ok(b) => Ok(b.is_true()),
        Err(_) => Err(PyTypeError::new_err(format!("{hook} returned {}; expected True or False", shown(v)))),
    }
}

/// A set of saved congestion-control parameters (Careful Resume's, RFC 9959 §3.1) that a
/// connection leaves for the next connection of its `[[users]]` user: the path's capacity `rate`
/// (bits of payload per second), its minimum `rtt` (s) and when it was observed (`saved_at`,
/// simulated time in s; `None`: fresh when the next connection starts). `cwnd` is the saved window
/// in bytes (`rate / 8 * rtt`).
#[pyclass(module = "startlab._core", name = "SavedPath", frozen, get_all, eq)]
#[derive(PartialEq)]
pub struct PySavedPath {
    /// bit/s.
    rate: f64,
    /// s.
    rtt: f64,
    /// s, or None.
    saved_at: Option<f64>,
}

#[pymethods]
impl PySavedPath {
    #[new]
    #[pyo3(signature = (rate, rtt, saved_at = None))]
    fn new(rate: f64, rtt: f64, saved_at: Option<f64>) -> PyResult<Self> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(PyValueError::new_err(format!("SavedPath: rate = {rate} is not valid; expected bits per second > 0")));
        }
        if !(rtt.is_finite() && rtt > 0.0) {
            return Err(PyValueError::new_err(format!("SavedPath: rtt = {rtt} is not valid; expected seconds > 0")));
        }
        if saved_at.is_some_and(|t| !(t.is_finite() && t >= 0.0)) {
            return Err(PyValueError::new_err(format!("SavedPath: saved_at = {} is not valid; expected a simulated time in seconds >= 0, or None", saved_at.unwrap_or_default())));
        }
        Ok(PySavedPath { rate, rtt, saved_at })
    }

    /// The saved window, bytes.
    #[getter]
    fn cwnd(&self) -> f64 {
        self.rate / 8.0 * self.rtt
    }

    fn __repr__(&self) -> String {
        format!("SavedPath(rate={}, rtt={}, saved_at={:?})", self.rate, self.rtt, self.saved_at)
    }
}

impl From<&SavedPath> for PySavedPath {
    fn from(p: &SavedPath) -> Self {
        PySavedPath { rate: p.rate_bps, rtt: p.rtt.as_secs_f64(), saved_at: p.saved_at.map(Time::as_secs_f64) }
    }
}

impl From<&PySavedPath> for SavedPath {
    fn from(p: &PySavedPath) -> Self {
        SavedPath { rate_bps: p.rate, rtt: Dur::from_secs_f64(p.rtt), saved_at: p.saved_at.map(time) }
    }
}

/// What `retained()` returned: `None` (the plug-in keeps nothing across connections), a
/// `SavedPath`, or `"forget"` (no saved set: the next connection is seeded with `None`).
pub(super) fn to_memory(v: &Bound<'_, PyAny>) -> PyResult<Option<PathMemory>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(p) = v.cast::<PySavedPath>() {
        return Ok(Some(PathMemory::Save(SavedPath::from(p.get()))));
    }
    if v.extract::<&str>().is_ok_and(|s| s == "forget") {
        return Ok(Some(PathMemory::Forget));
    }
    Err(PyTypeError::new_err(format!("retained returned {}; expected startlab.SavedPath, \"forget\" or None", shown(v))))
}
