//! `startlab-quinn server|client`: one quinn connection whose server runs startlab's congestion
//! control for a scenario's QUIC flow (`--cc startlab`) or quinn's own (`--cc cubic|newreno|bbr`).
//! Each end prints its JSON report on stdout (the server first prints `ready ADDR` once bound).

use clap::{Parser, Subcommand, ValueEnum};
use startlab_quinn::transfer::{self, Cc, PathSettings, ServerOptions};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "startlab-quinn", about = "startlab's congestion control inside quinn: a one-connection QUIC server and client")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CcName {
    Startlab,
    Cubic,
    Newreno,
    Bbr,
}

#[derive(Subcommand)]
enum Command {
    /// Accept one connection, read the request, send the response (the data sender).
    Server {
        /// UDP address to bind (port 0: any; the bound one is printed as `ready ADDR`).
        #[arg(long)]
        bind: SocketAddr,
        /// Where to write the self-signed certificate (DER) the client must trust.
        #[arg(long)]
        cert_out: PathBuf,
        /// Congestion control: startlab's for the scenario's flow, or quinn's own.
        #[arg(long, value_enum, default_value = "startlab")]
        cc: CcName,
        /// The scenario (its flow's `quic` table sets the datagram size, initial window and loss
        /// detection; with `--cc startlab`, its startup and avoidance run).
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// The scenario's `[[flows]]` entry.
        #[arg(long, default_value_t = 0)]
        flow: usize,
        /// Response bytes (default: the flow's size).
        #[arg(long)]
        size: Option<u64>,
        /// Send for this many seconds (default for an infinite flow: the scenario's duration).
        #[arg(long)]
        duration: Option<f64>,
        /// Give up when no client comes within this many seconds.
        #[arg(long, default_value_t = 30.0)]
        accept_timeout: f64,
    },
    /// Connect, send a request, read the whole response.
    Client {
        /// The server's UDP address.
        #[arg(long)]
        server: SocketAddr,
        /// The server's certificate (DER), the only one trusted.
        #[arg(long)]
        cert: PathBuf,
        /// The scenario (its flow's datagram size and loss detection).
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// The scenario's `[[flows]]` entry.
        #[arg(long, default_value_t = 0)]
        flow: usize,
        /// Give up when the handshake has not completed within this many seconds.
        #[arg(long, default_value_t = 10.0)]
        connect_timeout: f64,
    },
}

fn read_scenario(path: &Path) -> Result<startlab_scenario::Scenario, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let base = path.parent();
    let parsed = if path.extension().is_some_and(|e| e == "json") { startlab_scenario::from_json_in(&text, base) } else { startlab_scenario::from_toml_in(&text, base) };
    parsed.map_err(|e| format!("{}: {e}", path.display()))
}

fn run(args: Args) -> Result<String, String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    match args.command {
        Command::Server { bind, cert_out, cc, scenario, flow, size, duration, accept_timeout } => {
            let scenario = scenario.as_deref().map(read_scenario).transpose()?;
            let path = scenario.as_ref().map(|s| PathSettings::of(s, flow)).transpose()?;
            let cc = match cc {
                CcName::Startlab => Cc::Startlab { scenario: Box::new(scenario.clone().ok_or("--cc startlab needs --scenario FILE (the QUIC flow whose startup and avoidance run)")?), flow },
                CcName::Cubic => Cc::Cubic,
                CcName::Newreno => Cc::NewReno,
                CcName::Bbr => Cc::Bbr,
            };
            let f = scenario.as_ref().and_then(|s| s.flows.get(flow));
            let size = size.or(f.and_then(|f| f.size));
            let duration = duration.or_else(|| size.is_none().then(|| scenario.as_ref().map(|s| s.duration.as_nanos() as f64 / 1e9)).flatten());
            if size.is_none() && duration.is_none() {
                return Err("the server needs --size or --duration (or a scenario that gives either)".into());
            }
            let o = ServerOptions { bind, size, duration, cc, path, cert_out, accept_timeout };
            rt.block_on(async {
                let bound = transfer::bind_server(&o).map_err(|e| format!("server: {e}"))?;
                let addr = bound.endpoint.local_addr().map_err(|e| e.to_string())?;
                println!("ready {addr}");
                let report = transfer::serve(bound, &o).await.map_err(|e| format!("server: {e}"))?;
                serde_json::to_string(&report).map_err(|e| e.to_string())
            })
        }
        Command::Client { server, cert, scenario, flow, connect_timeout } => {
            let scenario = scenario.as_deref().map(read_scenario).transpose()?;
            let path = scenario.as_ref().map(|s| PathSettings::of(s, flow)).transpose()?;
            rt.block_on(async {
                let report = transfer::fetch(server, &cert, path.as_ref(), connect_timeout).await.map_err(|e| format!("client: {e}"))?;
                serde_json::to_string(&report).map_err(|e| e.to_string())
            })
        }
    }
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
