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
