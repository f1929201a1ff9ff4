//! Shared helpers for the simulator's integration tests.

#![allow(dead_code)]

use startlab_sim::{FlowResult, Simulation};

/// Runs a TOML scenario to the end, checks every invariant, returns the simulation.
pub fn run(toml: &str) -> Simulation {
    let scenario = startlab_scenario::from_toml(toml).unwrap_or_else(|e| panic!("scenario refused: {e}\n{toml}"));
    let mut sim = Simulation::new(scenario).expect("scenario builds");
    sim.run();
    if let Err(e) = sim.check_invariants() {
        panic!("invariants violated: {e}\n{toml}");
    }
    sim
}

/// The first flow's results.
pub fn flow(sim: &Simulation, i: usize) -> FlowResult {
    sim.results().flows[i].clone()
}

/// A single-flow dumbbell; `tcp` is the inline table body, `extra` more flow keys.
pub fn single(rate: &str, rtt: &str, queue: &str, tcp: &str, size: &str, duration: &str, extra: &str) -> String {
    format!(
        r#"
seed = 1
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate}"
rtt = "{rtt}"
access_rate = "10Gbps"
queue = {{ kind = "droptail", limit = "{queue}" }}
[[flows]]
name = "f"
tcp = {{ {tcp} }}
size = "{size}"
{extra}
"#
    )
}

/// cwnd of flow 0 in segments at time `t` (s): the last change at or before it, from the trace.
pub fn cwnd_at(sim: &Simulation, t: f64) -> f64 {
    let r = sim.results();
    let tr = &r.traces.cwnd;
    let last = (0..tr.time.len()).rev().find(|&i| tr.flow[i] == 0 && tr.time[i] <= t);
    last.map_or(f64::NAN, |i| tr.cwnd[i]) / r.flows[0].mss as f64
}

/// A flow's BDP (available rate × base RTT) in segments.
pub fn bdp_pkts(f: &FlowResult) -> f64 {
    f.bdp.expect("the path has an available rate") / f.mss as f64
}

/// One slow-start flow named `bulk` (inline `tcp` table body) on a dumbbell of `rate` and `rtt`
/// with 1 Gbit/s access links behind `queue` (inline table body), for `duration`.
pub fn behind(rate: &str, rtt: &str, queue: &str, tcp: &str, duration: &str) -> String {
    format!(
        r#"
seed = 1
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate}"
rtt = "{rtt}"
access_rate = "1Gbps"
queue = {{ {queue} }}
[[flows]]
name = "bulk"
tcp = {{ {tcp} }}
startup = {{ algorithm = "slow-start" }}
"#
    )
}

/// The dumbbell's bottleneck direction that carries the data (`bottleneck:left->right`).
pub fn bottleneck(sim: &Simulation) -> startlab_sim::LinkResult {
    sim.results().links.into_iter().find(|l| l.link == "bottleneck:left->right").expect("a dumbbell has a bottleneck")
}
