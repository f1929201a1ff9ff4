//! Bindings of startlab-udp: blocking calls (the GIL released) that return their report as JSON.

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use startlab_udp::{key_from_hex, random_key, key_to_hex, SendConfig, Server, ServeConfig};

fn os_error(e: impl std::fmt::Display) -> PyErr {
    PyOSError::new_err(e.to_string())
}

/// A fresh random 32-byte key, as 64 hex digits.
#[pyfunction]
pub fn udp_key() -> PyResult<String> {
    random_key().map(|k| key_to_hex(&k)).map_err(os_error)
}

/// Sends the scenario's flow `flow` to `server` (`HOST:PORT`); returns the sender's report.
#[pyfunction]
#[pyo3(signature = (scenario, format, base, flow, server, key, duration_s=None, spin_us=50, connect_timeout_s=10.0))]
#[expect(clippy::too_many_arguments, reason = "one keyword argument per option of `startlab net send`")]
pub fn udp_send(
    py: Python<'_>,
    scenario: &str,
    format: &str,
    base: Option<&str>,
    flow: usize,
    server: &str,
    key: &str,
    duration_s: Option<f64>,
    spin_us: u64,
    connect_timeout_s: f64,
) -> PyResult<String> {
    let s = crate::parse(scenario, format, base)?;
    if flow >= s.flows.len() {
        return Err(crate::errors::ScenarioError::new_err(format!(
            "flows: the scenario has no flow {flow}; its [[flows]] has {} entries, numbered from 0",
            s.flows.len()
        )));
    }
    let key = key_from_hex(key).map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("key: {e}")))?;
    let mut cfg = SendConfig::new(s, flow, server, key);
    cfg.duration_s = duration_s.or(cfg.duration_s);
    cfg.spin_us = spin_us;
    cfg.connect_timeout_s = connect_timeout_s;
    let report = py.detach(|| startlab_udp::send(&cfg)).map_err(os_error)?;
    serde_json::to_string(&report).map_err(os_error)
}

/// Binds `bind` (`HOST:PORT`), prints `ready HOST:PORT` (the bound address), serves one
/// connection and returns the receiver's report.
#[pyfunction]
#[pyo3(signature = (bind, key, idle_timeout_s=5.0, accept_timeout_s=None))]
pub fn udp_serve(py: Python<'_>, bind: &str, key: &str, idle_timeout_s: f64, accept_timeout_s: Option<f64>) -> PyResult<String> {
    let key = key_from_hex(key).map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("key: {e}")))?;
    let mut cfg = ServeConfig::new(bind, key);
    cfg.idle_timeout_s = idle_timeout_s;
    cfg.accept_timeout_s = accept_timeout_s;
    let server = Server::bind(&cfg).map_err(os_error)?;
    {
        use std::io::Write as _;
        let mut out = std::io::stdout();
        let _ = writeln!(out, "ready {}", server.local_addr());
        let _ = out.flush();
    }
    let report = py.detach(|| server.run()).map_err(os_error)?;
    serde_json::to_string(&report).map_err(os_error)
}
