//! Runs a scenario file and prints its results as JSON (for profiling the engine without Python).
//!
//! `cargo run --release -p startlab-sim --example run -- examples/paced-start-default.toml`

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run SCENARIO.toml");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    // Files the scenario names (vector files, rate traces, CDFs) are relative to it.
    let base = std::path::Path::new(&path).parent();
    let scenario = startlab_scenario::from_toml_in(&text, base).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    let mut sim = startlab_sim::Simulation::new(scenario).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    sim.run();
    let r = sim.results();
    if std::env::args().nth(2).as_deref() == Some("--cwnd") {
        let t = &r.traces.cwnd;
        for i in 0..t.time.len() {
            eprintln!("{:.6} {} {:.0} {:.0}", t.time[i], t.flow[i], t.cwnd[i], t.ssthresh[i]);
        }
    }
    println!("{}", serde_json::json!({"flows": r.flows, "links": r.links, "stats": sim.stats()}));
    if let Err(e) = sim.check_invariants() {
        eprintln!("invariant violated: {e}");
        std::process::exit(1);
    }
}
