//! Every Rust error becomes a Python exception here, and only here.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

create_exception!(_core, ScenarioError, PyValueError, "A scenario was refused; the message names the key path.");
create_exception!(_core, SimulationError, PyRuntimeError, "The simulator failed internally (a bug, never bad input).");

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
