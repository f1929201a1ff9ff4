//! The startlab simulator: a deterministic discrete-event engine on integer nanoseconds, a network
//! of hosts, routers and full-duplex links with their queues (drop-tail, RED, and the dequeue-time
//! disciplines of `aqm`: CoDel, FQ-CoDel, PIE, DualPI2) and impairments, the sans-IO TCP endpoints
//! of `startlab-tcp` driven packet by packet, cross traffic (CBR, Poisson, on/off, trains),
//! workloads, and the measurements of ALGORITHMS.md §19.
//!
//! ```
//! let scenario = startlab_scenario::from_toml(r#"
//!     seed = 1
//!     duration = "2s"
//!     [topology]
//!     kind = "dumbbell"
//!     bottleneck_rate = "10Mbps"
//!     rtt = "20ms"
//!     access_rate = "100Mbps"
//!     queue = { kind = "droptail", limit = "50pkt" }
//!     [[flows]]
//!     name = "a"
//!     size = "100KB"
//! "#).unwrap();
//! let mut sim = startlab_sim::Simulation::new(scenario).unwrap();
//! sim.run();
//! let results = sim.results();
//! assert!(results.flows[0].completed);
//! ```

pub mod aqm;
pub mod build;
pub mod engine;
pub mod impair;
mod metrics;
pub mod net;
pub mod packet;
pub mod pcap;
pub mod pipe;
mod qlog;
pub mod red;
pub mod rng;
pub mod sojourn;
mod sim;
pub mod trace;
pub mod workload;

pub use metrics::{FlowResult, LinkResult, ProbePacketResult, ProbeTrainResult, ResponseResult, Results, TransferResult};
pub use sim::{flow_controller, flow_endpoints, flow_quic_endpoints, BuildError, EngineStats, Simulation};
pub use startlab_units::{Dur, Time};
