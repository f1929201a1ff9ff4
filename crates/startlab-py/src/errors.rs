//! Every Rust error becomes a Python exception here, and only here.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::types::PyAnyMethods;
use pyo3::PyErr;

create_exception!(_core, ScenarioError, PyValueError, "A scenario was refused; the message names the key path.");
create_exception!(_core, SimulationError, PyRuntimeError, "The simulator failed internally (a bug, never bad input).");
create_exception!(
    _core,
    PluginError,
    PyRuntimeError,
    "A Python startup plug-in raised (or returned what is not an action): the run stopped; the message names the plug-in, the hook and the simulated time, and the plug-in's exception is the cause."
);

/// The plug-in failure recorded on this thread, as `PluginError` (its cause: the plug-in's own
/// exception, with its traceback); `at`: the simulated time of the event it failed in, `None`
/// while the simulation was built.
pub fn plugin(py: pyo3::Python<'_>, f: crate::plugin::Failure, at: Option<startlab_sim::Time>) -> PyErr {
    let when = match at {
        Some(t) => format!("at t = {:.9} s", t.as_secs_f64()),
        None => "while the simulation was built".to_string(),
    };
    let what = f.error.value(py).repr().map_or_else(|_| "an exception".to_string(), |r| r.to_string());
    let e = PluginError::new_err(format!("startup plug-in {:?} failed in {} {when}: {what}", f.plugin, f.hook));
    e.set_cause(py, Some(f.error));
    e
}

/// A refused scenario.
pub fn scenario(e: startlab_scenario::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// A scenario whose network cannot carry a flow.
pub fn build(e: startlab_sim::BuildError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// A caught panic.
pub fn panic(what: &str, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    SimulationError::new_err(format!("internal error while {what}: {msg} (please report this scenario)"))
}
