//! Bindings of the testbed's router (startlab-router): one blocking call that runs it.

use pyo3::prelude::*;
use serde::Deserialize;
use startlab_router::{CaptureSetup, Link, RouterSetup};
use startlab_units::Dur;

/// What python/startlab/real/router.py passes, as JSON.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Setup {
    sender_iface: String,
    sender_peer_mac: String,
    receiver_iface: String,
    receiver_peer_mac: String,
    local_ips: Vec<String>,
    stop_on_stdin_eof: bool,
    max_seconds: Option<f64>,
    /// Capture the forwarded frames here (the scenario's `[trace.pcap]` gives format and snap
    /// length).
    #[serde(default)]
    pcap_dir: Option<String>,
}

fn mac(what: &str, text: &str) -> PyResult<[u8; 6]> {
    let parts: Vec<_> = text.split(':').map(|p| u8::from_str_radix(p, 16)).collect();
    match parts.iter().map(|p| p.clone().ok()).collect::<Option<Vec<u8>>>() {
        Some(v) if v.len() == 6 => Ok([v[0], v[1], v[2], v[3], v[4], v[5]]),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!("{what} = {text:?}: expected a MAC address like 02:00:00:00:00:01"))),
    }
}

fn print_ready() {
    use std::io::Write as _;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
}

/// Runs the router in this process's network namespace until SIGTERM/SIGINT, the end of standard
/// input (if asked) or the time limit; prints `ready` once it forwards; returns the report as JSON.
#[pyfunction]
#[pyo3(signature = (scenario, format, base, setup))]
pub fn router_run(py: Python<'_>, scenario: &str, format: &str, base: Option<&str>, setup: &str) -> PyResult<String> {
    let s = crate::parse(scenario, format, base)?;
    let plan = startlab_router::plan(&s).map_err(crate::errors::ScenarioError::new_err)?;
    let raw: Setup = serde_json::from_str(setup).map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("router setup: {e}")))?;
    let local_ips = raw
        .local_ips
        .iter()
        .map(|ip| ip.parse().map_err(|_| pyo3::exceptions::PyValueError::new_err(format!("local_ips: {ip:?} is not an IPv4 address"))))
        .collect::<PyResult<Vec<_>>>()?;
    let setup = RouterSetup {
        sender_side: Link { iface: raw.sender_iface, peer_mac: mac("sender_peer_mac", &raw.sender_peer_mac)? },
        receiver_side: Link { iface: raw.receiver_iface, peer_mac: mac("receiver_peer_mac", &raw.receiver_peer_mac)? },
        local_ips,
        stop_on_stdin_eof: raw.stop_on_stdin_eof,
        max_duration: raw.max_seconds.map(|s| Dur((s * 1e9) as u64)),
        ready: Some(print_ready),
        capture: raw.pcap_dir.map(|dir| {
            let (format, snaplen) = s.trace.pcap.as_ref().map_or((startlab_scenario::PcapFormat::Pcapng, startlab_scenario::PcapSpec::DEFAULT_SNAPLEN), |p| (p.format, p.snaplen));
            CaptureSetup { dir: dir.into(), format, snaplen }
        }),
    };
    let report = py.detach(|| startlab_router::run(plan, &setup)).map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    serde_json::to_string(&report).map_err(|e| crate::errors::SimulationError::new_err(e.to_string()))
}
