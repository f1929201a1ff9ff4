//! The scenario exactly as written: every table refuses unknown keys. Defaults are filled in and
//! cross-field rules are checked by `resolve`.

use crate::values::{Amount, BytesV, DurV, RateV};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: u64,
    pub duration: DurV,
    pub topology: Topology,
    #[serde(default)]
    pub flows: Vec<Flow>,
    #[serde(default)]
    pub cross: Vec<Cross>,
    #[serde(default)]
    pub arrivals: Vec<Arrivals>,
    pub measure: Option<Measure>,
    pub trace: Option<Trace>,
    pub quick_start: Option<QuickStart>,
    #[serde(default)]
    pub impairments: Vec<Impairment>,
    #[serde(default)]
    pub users: Vec<Users>,
    #[serde(default)]
    pub replay: Vec<Replay>,
    pub plugins: Option<Vec<String>>,
}

/// `[[users]]`: closed-loop users.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Users {
    pub name: String,
    pub count: u64,
    pub size: SizeDist,
    pub think: serde_json::Value,
    pub connection: Option<String>,
    pub request: Option<Amount>,
    pub start: Option<DurV>,
    pub stop: Option<DurV>,
    pub transfers: Option<u64>,
    pub direction: Option<String>,
    pub from: Option<Vec<String>>,
    pub to: Option<Vec<String>>,
    pub tcp: Option<Tcp>,
    pub startup: Option<BTreeMap<String, serde_json::Value>>,
    pub mix: Option<Vec<BTreeMap<String, serde_json::Value>>>,
}

/// `[[replay]]`: a connection-vector file.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    pub name: String,
    pub file: String,
    pub direction: Option<String>,
    pub tcp: Option<Tcp>,
    pub startup: Option<BTreeMap<String, serde_json::Value>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub kind: String,
    // dumbbell
    pub bottleneck_rate: Option<RateV>,
    pub rtt: Option<DurV>,
    pub rtts: Option<Vec<DurV>>,
    pub access_rate: Option<RateV>,
    pub bottleneck_delay: Option<DurV>,
    pub pairs: Option<u64>,
    pub queue: Option<Queue>,
    pub access_queue: Option<Queue>,
    // parking lot
    pub backbone_links: Option<u64>,
    pub backbone_rate: Option<RateV>,
    pub backbone_delay: Option<DurV>,
    pub hosts_per_router: Option<u64>,
    pub access_delay: Option<DurV>,
    // graph
    pub hosts: Option<Vec<String>>,
    pub routers: Option<Vec<String>>,
    pub links: Option<Vec<Link>>,
}

/// A queue table: `kind`, `limit` and the kind's declared parameters (queues.rs), which the
/// resolver checks key by key.
#[derive(Deserialize, Debug, Clone)]
pub struct Queue {
    pub kind: String,
    pub limit: Option<Amount>,
    #[serde(flatten)]
    pub params: BTreeMap<String, serde_json::Value>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub between: [String; 2],
    pub rate: RateV,
    pub delay: DurV,
    pub queue: Option<Queue>,
    pub name: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub name: String,
    pub count: Option<u64>,
    pub pair: Option<u64>,
    pub reverse: Option<bool>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub tcp: Option<Tcp>,
    pub quic: Option<Quic>,
    pub startup: Option<BTreeMap<String, serde_json::Value>>,
    pub start: Option<DurV>,
    pub start_jitter: Option<DurV>,
    pub size: Option<Amount>,
    pub drops: Option<Vec<u64>>,
    pub app: Option<App>,
}

/// An application on a flow (`app = { kind = "request-response", ... }`).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct App {
    pub kind: String,
    pub request: Amount,
    pub response: SizeDist,
    /// A duration (the mean of an exponential law) or a law `{ dist = ..., ... }`; checked by
    /// `resolve`.
    pub think: Option<serde_json::Value>,
    pub load: Option<f64>,
    pub count: u64,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct Tcp {
    pub recovery: Option<String>,
    pub prr_bound: Option<String>,
    pub congestion_avoidance: Option<String>,
    // The avoidance algorithms' parameters (`startlab_cc::avoidance::DECLS`), as written: `resolve`
    // parses each by its declared kind. Every declared parameter is a key here (a test checks it);
    // `avoidance_params` lists them.
    pub cubic_c: Option<serde_json::Value>,
    pub cubic_beta: Option<serde_json::Value>,
    pub cubic_fast_convergence: Option<serde_json::Value>,
    pub cubic_ssthresh_from: Option<serde_json::Value>,
    pub cubic_growth: Option<serde_json::Value>,
    pub reno_ssthresh_from: Option<serde_json::Value>,
    pub prague_g: Option<serde_json::Value>,
    pub prague_rtt_target: Option<serde_json::Value>,
    pub prague_rtt_transition: Option<serde_json::Value>,
    pub mss: Option<BytesV>,
    pub header: Option<BytesV>,
    pub initial_window: Option<u64>,
    pub initial_ssthresh: Option<Amount>,
    pub ack: Option<String>,
    pub delack_timeout: Option<DurV>,
    pub quickack_segments: Option<u64>,
    pub rwnd: Option<Amount>,
    pub handshake: Option<bool>,
    pub pacing: Option<bool>,
    pub rto_policy: Option<String>,
    pub rto_min: Option<DurV>,
    pub rto_initial: Option<DurV>,
    pub rto_max: Option<DurV>,
    pub clock_granularity: Option<DurV>,
    pub limited_transmit: Option<bool>,
    pub dupthresh: Option<u64>,
    pub sack_blocks: Option<u64>,
    pub cwnd_validation: Option<bool>,
    pub linux_ss_clamp: Option<bool>,
    pub newreno_timer: Option<String>,
    pub idle_restart: Option<String>,
    // `true`/`false` or a name ("off", "classic", "l4s"): `resolve` reads it.
    pub ecn: Option<serde_json::Value>,
    pub startup_after_idle: Option<bool>,
    pub startup_min_response: Option<Amount>,
}

impl Tcp {
    /// The avoidance parameters this table writes, by key (checked against the declarations by
    /// `resolve`).
    pub fn avoidance_params(&self) -> BTreeMap<&'static str, &serde_json::Value> {
        [
            ("cubic_c", &self.cubic_c),
            ("cubic_beta", &self.cubic_beta),
            ("cubic_fast_convergence", &self.cubic_fast_convergence),
            ("cubic_ssthresh_from", &self.cubic_ssthresh_from),
            ("cubic_growth", &self.cubic_growth),
            ("reno_ssthresh_from", &self.reno_ssthresh_from),
            ("prague_g", &self.prague_g),
            ("prague_rtt_target", &self.prague_rtt_target),
            ("prague_rtt_transition", &self.prague_rtt_transition),
        ]
        .into_iter()
        .filter_map(|(key, v)| Some((key, v.as_ref()?)))
        .collect()
    }
}

/// A flow's `quic` table: the flow runs QUIC (RFC 9000/9002) instead of TCP.
#[derive(Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct Quic {
    pub max_datagram_size: Option<BytesV>,
    pub path_mtu: Option<BytesV>,
    pub initial_window: Option<Amount>,
    pub handshake: Option<bool>,
    pub client_hello: Option<BytesV>,
    pub server_flight: Option<BytesV>,
    pub request: Option<BytesV>,
    pub ack_eliciting_threshold: Option<u64>,
    pub max_ack_delay: Option<DurV>,
    pub immediate_ack_on_reorder: Option<bool>,
    pub max_ack_ranges: Option<u64>,
    pub ack_frequency: Option<AckFrequency>,
    pub max_data: Option<Amount>,
    pub pacing: Option<bool>,
    pub pacing_gain: Option<f64>,
    pub initial_rtt: Option<DurV>,
    pub packet_threshold: Option<u64>,
    pub time_threshold: Option<f64>,
    pub granularity: Option<DurV>,
    pub persistent_congestion_threshold: Option<u64>,
}

/// `quic.ack_frequency`: what the server asks of the client once the handshake is confirmed
/// (draft-ietf-quic-ack-frequency).
#[derive(Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct AckFrequency {
    pub threshold: Option<u64>,
    pub max_ack_delay: Option<DurV>,
    pub reordering_threshold: Option<u64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Cross {
    pub kind: String,
    pub on: Option<DurV>,
    pub off: Option<DurV>,
    pub rate: Option<RateV>,
    pub packets: Option<u64>,
    pub gaps: Option<Vec<DurV>>,
    pub interval: Option<DurV>,
    pub packet_size: BytesV,
    pub start: Option<DurV>,
    pub stop: Option<DurV>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub name: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    pub early_rtts: Option<u64>,
    pub warmup: Option<DurOrKeyword>,
    pub flows: Option<u64>,
    pub window: Option<[DurV; 2]>,
}

/// A duration or a keyword such as "auto".
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(untagged)]
pub enum DurOrKeyword {
    Dur(DurV),
    Keyword(KeywordAuto),
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum KeywordAuto {
    Auto,
}

/// A Poisson process of TCP flow arrivals.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Arrivals {
    pub name: String,
    pub rate: f64,
    pub start: Option<DurV>,
    pub stop: Option<DurV>,
    pub count: Option<u64>,
    pub size: SizeDist,
    pub direction: Option<String>,
    pub from: Option<Vec<String>>,
    pub to: Option<Vec<String>>,
    pub tcp: Option<Tcp>,
    pub startup: Option<BTreeMap<String, serde_json::Value>>,
    pub mix: Option<Vec<BTreeMap<String, serde_json::Value>>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct SizeDist {
    pub dist: String,
    pub value: Option<Amount>,
    pub mean: Option<Amount>,
    pub shape: Option<f64>,
    pub cutoff: Option<Amount>,
    pub exponent: Option<f64>,
    pub ranks: Option<u64>,
    pub unit: Option<Amount>,
    pub min: Option<Amount>,
    pub max: Option<Amount>,
    pub mu: Option<f64>,
    pub sigma: Option<f64>,
    pub file: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    pub cwnd: Option<bool>,
    pub seq: Option<bool>,
    pub queue: Option<bool>,
    pub rtt: Option<bool>,
    pub startup: Option<bool>,
    pub interval: Option<DurV>,
    pub packets: Option<PacketTrace>,
    pub pcap: Option<PcapTrace>,
    pub qlog: Option<QlogTrace>,
}

/// `[trace.qlog]`: qlog files of chosen flows (docs/QLOG.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct QlogTrace {
    pub flows: Option<Vec<String>>,
}

/// `[trace.pcap]`: capture files of chosen link directions (docs/SCENARIOS.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct PcapTrace {
    pub links: Vec<String>,
    pub direction: Option<String>,
    pub flows: Option<Vec<String>>,
    pub format: Option<String>,
    pub snaplen: Option<BytesV>,
}

/// `[trace.packets]`: per-packet queue events of chosen links (docs/SCENARIOS.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct PacketTrace {
    pub links: Vec<String>,
    pub direction: Option<String>,
    pub flows: Option<Vec<String>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct QuickStart {
    /// "all" or a list of router names; checked by `resolve`.
    pub routers: Option<serde_json::Value>,
    pub share: Option<f64>,
    pub window: Option<DurV>,
}

/// `[[impairments]]`: seeded path impairments on one link's directions (docs/IMPAIRMENTS.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Impairment {
    pub link: String,
    pub direction: Option<String>,
    pub loss: Option<Loss>,
    pub jitter: Option<Jitter>,
    pub aggregate: Option<Aggregate>,
    pub coalesce: Option<Coalesce>,
    pub rate: Option<Vec<(DurV, RateV)>>,
    pub rate_trace: Option<String>,
}

/// `coalesce = { timeout = "50us", frames = 16 }`: interrupt coalescing at the far node.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Coalesce {
    pub timeout: DurV,
    pub frames: Option<u64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Loss {
    pub kind: String,
    pub p: Option<f64>,
    pub p_gb: Option<f64>,
    pub p_bg: Option<f64>,
    pub loss_good: Option<f64>,
    pub loss_bad: Option<f64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Jitter {
    pub kind: String,
    pub max: Option<DurV>,
    pub mean: Option<DurV>,
    pub sd: Option<DurV>,
    pub reorder: Option<bool>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Aggregate {
    pub interval: DurV,
    pub max_burst: Option<u64>,
}
