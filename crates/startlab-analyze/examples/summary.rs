//! `cargo run --example summary -- CAPTURE [sender|receiver|middle]`: each flow's startup in one
//! line (the crate without Python, for a quick look at a capture).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: summary CAPTURE [sender|receiver|middle]");
        std::process::exit(2);
    };
    let vantage = args.get(2).and_then(|v| startlab_analyze::Vantage::parse(v));
    let r = startlab_analyze::analyze(std::path::Path::new(path), &startlab_analyze::Options { vantage });
    if let Some(e) = &r.capture.error {
        eprintln!("error: {e}");
    }
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    for f in &r.flows {
        let exit = f.startup_exit_time.map(|t| t - f.t0);
        println!(
            "{} vantage {} exit {} at {:?} s flight {:?} pkts; min RTT {:?} s; rounds {:?}",
            f.flow, f.vantage, f.exit_reason, exit, f.exit_cwnd_pkts, f.base_rtt, f.round_growths
        );
    }
}
