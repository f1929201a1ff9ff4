//! A stand-alone driver of startlab-udp for measurements before `startlab net send|recv` exists:
//!
//! ```text
//! udp-perf recv BIND KEY_HEX                                   # serve one connection, print the report
//! udp-perf send SERVER KEY_HEX SCENARIO.toml FLOW SECONDS SPIN_US   # run flow FLOW, print the report
//! udp-perf key                                                 # print a random key
//! ```
//!
//! Reports are JSON on stdout without the per-ACK samples and the timeline (their counts instead).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("udp-perf: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<String, String> {
    let usage = "usage: udp-perf recv BIND KEY_HEX | send SERVER KEY_HEX SCENARIO.toml FLOW SECONDS SPIN_US | key";
    match args.first().map(String::as_str) {
        Some("key") => startlab_udp::random_key().map(|k| startlab_udp::key_to_hex(&k)).map_err(|e| e.to_string()),
        Some("recv") if args.len() == 3 => {
            let key = startlab_udp::key_from_hex(&args[2]).map_err(|e| e.to_string())?;
            let mut r = startlab_udp::serve(&startlab_udp::ServeConfig::new(args[1].clone(), key)).map_err(|e| e.to_string())?;
            let samples = r.timeline.len();
            r.timeline.clear();
            let mut v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            v["timeline_samples"] = samples.into();
            Ok(v.to_string())
        }
        Some("send") if args.len() == 7 => {
            let key = startlab_udp::key_from_hex(&args[2]).map_err(|e| e.to_string())?;
            let text = std::fs::read_to_string(&args[3]).map_err(|e| format!("{}: {e}", args[3]))?;
            let scenario = startlab_scenario::from_toml(&text).map_err(|e| e.to_string())?;
            let flow = args[4].parse().map_err(|_| format!("FLOW {:?} is not a number", args[4]))?;
            let mut cfg = startlab_udp::SendConfig::new(scenario, flow, args[1].clone(), key);
            cfg.duration_s = Some(args[5].parse().map_err(|_| format!("SECONDS {:?} is not a number", args[5]))?);
            cfg.spin_us = args[6].parse().map_err(|_| format!("SPIN_US {:?} is not a number", args[6]))?;
            let mut r = startlab_udp::send(&cfg).map_err(|e| e.to_string())?;
            let samples = r.samples.len();
            r.samples.clear();
            let mut v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            v["ack_samples"] = samples.into();
            Ok(v.to_string())
        }
        _ => Err(usage.to_string()),
    }
}
