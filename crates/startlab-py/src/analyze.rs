//! `startlab analyze`: the capture analysis of `startlab-analyze`, its report as JSON text.

use pyo3::prelude::*;

use crate::errors::SimulationError;
use crate::guarded;

/// Analyses the capture at `path` (pcap or pcapng) and returns the report as JSON: `capture`,
/// `flows`, `tcp_connections`, `udp`, `warnings` (docs/ANALYZE.md). `vantage`: `"sender"`,
/// `"receiver"`, `"middle"`, or None to infer it per flow. A file that cannot be read is not an
/// exception: the report's `capture.error` says why and names the packet.
#[pyfunction]
#[pyo3(signature = (path, vantage = None))]
pub fn analyze_capture(py: Python<'_>, path: &str, vantage: Option<&str>) -> PyResult<String> {
    let vantage = match vantage {
        None => None,
        Some(v) => Some(startlab_analyze::Vantage::parse(v).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!("vantage {v:?} is not known; expected \"sender\", \"receiver\" or \"middle\""))
        })?),
    };
    let options = startlab_analyze::Options { vantage };
    let path = std::path::PathBuf::from(path);
    let report = py.detach(|| guarded("analysing a capture", || startlab_analyze::analyze(&path, &options)))?;
    serde_json::to_string(&report).map_err(|e| SimulationError::new_err(e.to_string()))
}
