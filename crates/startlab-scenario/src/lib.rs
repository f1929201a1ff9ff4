//! The one scenario schema of startlab, checked strictly.
//!
//! A scenario is TOML (or the same structure as JSON, for the Python API) with written units. It is
//! read in two steps: `serde` with `deny_unknown_fields` turns the text into the raw tables (an
//! unknown key, a wrong type or a bad unit fails here, and `serde_path_to_error` supplies the key
//! path), then [`resolve`] checks the rules between fields and fills in every default, giving a
//! [`Scenario`] with plain typed values. Every refusal is a [`ScenarioError`] naming the key path,
//! what was given and what is accepted. Defaults are documented in `docs/SCENARIOS.md`.

/// A fieldless enum whose every variant has one name in scenarios and results, written once:
/// `ALL` lists the variants, `name()` and `from_name()` convert, and it serializes as its name.
macro_rules! named_enum {
    ($(#[$m:meta])* pub enum $ty:ident { $($(#[$vm:meta])* $var:ident = $text:literal,)+ }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $ty { $($(#[$vm])* $var,)+ }

        impl $ty {
            /// Every variant, in the order the docs list them.
            pub const ALL: &'static [$ty] = &[$($ty::$var),+];

            /// The name a scenario writes.
            pub fn name(self) -> &'static str {
                match self { $($ty::$var => $text,)+ }
            }

            /// The variant a scenario names.
            pub fn from_name(name: &str) -> Option<$ty> {
                $ty::ALL.iter().copied().find(|v| v.name() == name)
            }
        }

        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
    };
}

mod capture;
mod impairments;
mod quic;
pub mod queues;
mod raw;
pub mod registry;
mod resolve;
mod values;
mod workloads;
pub use workloads::{AppSpec, ArrivalEnds, ArrivalSpec, ReplaySpec, SizeSpec, Think, UserSpec, VectorConnection};

pub use quic::{AckFrequencySpec, QuicSpec, UDP_IP_HEADER};
pub use capture::{PcapFormat, PcapSpec};
pub use impairments::{AggregateSpec, CoalesceSpec, ImpairmentSpec, JitterDist, JitterSpec, LossSpec, RateTraceSpec};
pub use resolve::{parse_vectors, resolve, resolve_in, set_parquet_reader, TableReader, VECTOR_COLUMNS};
use serde::Serialize;
use startlab_units::{Dur, Rate};
use std::fmt;

/// A refused scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Key path such as `topology.bottleneck_rate` or `flows[0].tcp.mss`; empty for the whole file.
    pub path: String,
    /// What was wrong and what is accepted.
    pub message: String,
}

impl ScenarioError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn from_value<'de, D: serde::Deserializer<'de>>(d: D, base: Option<&std::path::Path>) -> Result<Scenario, ScenarioError>
where
    D::Error: fmt::Display,
{
    let raw: raw::Scenario = serde_path_to_error::deserialize(d).map_err(|e| {
        let path = e.path().to_string();
        // Keep the first line: serde's messages for nested tables append "in `table`" lines that
        // repeat what the key path already says.
        let msg = e.into_inner().to_string();
        ScenarioError::new(path, msg.lines().next().unwrap_or_default().trim().to_string())
    })?;
    resolve_in(raw, base)
}

/// Reads a scenario from TOML text; files it names (`impairments[].rate_trace`) are relative to
/// the working directory.
pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
    from_toml_in(text, None)
}

/// Reads a scenario from TOML text; files it names are relative to `base` (the scenario file's
/// directory) when given, else to the working directory.
pub fn from_toml_in(text: &str, base: Option<&std::path::Path>) -> Result<Scenario, ScenarioError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| {
            let before = &text[..s.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!(" at line {line}, column {col}")
        });
        let msg = e.message().lines().next().unwrap_or_default().trim().to_string();
        ScenarioError::new("", format!("not valid TOML{}: {msg}", at.unwrap_or_default()))
    })?;
    from_value(toml::Value::Table(table), base)
}

/// Reads a scenario from JSON text (the structure of the TOML file, as the Python API sends dicts).
pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
    from_json_in(text, None)
}

/// [`from_json`] with files relative to `base` when given.
pub fn from_json_in(text: &str, base: Option<&std::path::Path>) -> Result<Scenario, ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| ScenarioError::new("", format!("not valid JSON: {e}").replace('\n', " ")))?;
    from_value(value, base)
}

/// A fully resolved scenario: every default filled in, every unit converted (ns, bit/s, bytes).
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    /// Optional label.
    pub name: Option<String>,
    /// Seed of every random stream.
    pub seed: u64,
    /// Simulated duration.
    pub duration: Dur,
    /// The network.
    pub topology: Topology,
    /// TCP flows, replicated by `count` and numbered in order.
    pub flows: Vec<FlowSpec>,
    /// Cross traffic.
    pub cross: Vec<CrossSpec>,
    /// Measurement options.
    pub measure: MeasureSpec,
    /// What to trace.
    pub trace: TraceSpec,
    /// Quick-Start routers (RFC 4782): which routers take part and how they admit requests.
    pub quick_start: QuickStartSpec,
    /// Seeded path impairments (`[[impairments]]`, docs/IMPAIRMENTS.md), one entry per impaired
    /// link, in file order.
    pub impairments: Vec<ImpairmentSpec>,
    /// Poisson processes of TCP flow arrivals; the simulator draws their flows from the seed.
    pub arrivals: Vec<ArrivalSpec>,
    /// Closed-loop users (`[[users]]`): each starts its next transfer when the previous one is
    /// complete plus a think time. Left out of the resolved scenario when empty (sweep keys of
    /// scenarios without users stay as they were).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<UserSpec>,
    /// Trace-driven request/response (`[[replay]]`): connection vectors replayed over
    /// persistent connections.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<ReplaySpec>,
    /// Python modules that register plug-in startup algorithms the scenario names (`plugins`,
    /// docs/OWN-ALGORITHM.md); left out of the resolved scenario when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<String>,
}

impl Scenario {
    /// Every startup algorithm the scenario may run: its flows', its arrival and user mixes' and
    /// its replays'.
    pub fn startups(&self) -> impl Iterator<Item = &StartupSpec> {
        self.flows
            .iter()
            .map(|f| &f.startup)
            .chain(self.arrivals.iter().flat_map(|a| a.mix.iter().map(|(s, _)| s)))
            .chain(self.users.iter().flat_map(|u| u.mix.iter().map(|(s, _)| s)))
            .chain(self.replay.iter().map(|r| &r.startup))
    }

    /// Whether a plug-in registered at run time (a Python class) runs in this scenario.
    pub fn uses_plugins(&self) -> bool {
        self.startups().any(|s| s.decl().is_plugin())
    }
}

/// Queue limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueLimit {
    /// Packets waiting (the one being transmitted is not counted).
    Packets(u64),
    /// Bytes waiting.
    Bytes(u64),
}

/// A queue discipline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueueSpec {
    /// FIFO that drops arrivals when full.
    Droptail {
        /// The limit.
        limit: QueueLimit,
    },
    /// Random Early Detection with the gentle option and ECN marking (ALGORITHMS.md §17,
    /// docs/QUEUES.md). Thresholds are in the unit of `limit` (packets or bytes).
    Red {
        /// The physical buffer: arrivals beyond it are dropped whatever RED decided.
        limit: QueueLimit,
        /// `min_th`, packets or bytes (as `limit`); below it nothing is dropped.
        min_th: f64,
        /// `max_th`, packets or bytes; `min_th < max_th <= limit`.
        max_th: f64,
        /// Drop probability at `max_th`, in (0, 1].
        max_p: f64,
        /// EWMA weight of the average queue, in (0, 1].
        w_q: f64,
        /// Gentle RED (probability from `max_p` to 1 between `max_th` and `2·max_th`).
        gentle: bool,
        /// Mark ECN-capable packets (CE) instead of dropping them in the probabilistic regions.
        ecn: bool,
        /// ns-2's `wait_` spacing of marks instead of the paper's uniform spacing.
        ns2_wait: bool,
    },
    /// CoDel (RFC 8289), dropping or marking at dequeue.
    Codel {
        /// The buffer, packets.
        limit: QueueLimit,
        /// Acceptable standing queue delay.
        target: Dur,
        /// The control law's base interval.
        interval: Dur,
        /// A queue of at most this many bytes is never dropped from.
        mtu: u64,
        /// Mark ECN-capable packets instead of dropping them.
        ecn: bool,
    },
    /// FQ-CoDel (RFC 8290).
    #[serde(rename = "fq-codel")]
    FqCodel {
        /// The buffer, packets, all flow queues together.
        limit: QueueLimit,
        /// Each flow queue's CoDel target.
        target: Dur,
        /// Each flow queue's CoDel interval.
        interval: Dur,
        /// CoDel's MAXPACKET, bytes.
        mtu: u64,
        /// Mark ECN-capable packets instead of dropping them.
        ecn: bool,
        /// Flow queues.
        flows: u64,
        /// Deficit round robin quantum, bytes.
        quantum: u64,
        /// Most bytes in all flow queues.
        memory_limit: u64,
        /// Most packets one overflow drops.
        drop_batch: u64,
    },
    /// PIE (RFC 8033).
    Pie {
        /// The buffer, packets.
        limit: QueueLimit,
        /// Latency target.
        target: Dur,
        /// Update period.
        t_update: Dur,
        /// Integral weight, Hz.
        alpha: f64,
        /// Proportional weight, Hz.
        beta: f64,
        /// Burst allowance.
        max_burst: Dur,
        /// Mark ECN-capable packets below `mark_ecn_th`.
        ecn: bool,
        /// Probability above which ECN-capable packets are dropped too.
        mark_ecn_th: f64,
        /// Delay from timestamps (true) or the departure rate.
        timestamps: bool,
        /// Bytes of a departure-rate measurement cycle.
        dq_threshold: u64,
        /// MEAN_PKTSIZE of the 2-packet safeguard, bytes.
        mtu: u64,
        /// RFC 8033 §5.4.
        derandomize: bool,
        /// RFC 8033 §5.5.
        cap_drop: bool,
    },
    /// DualPI2 (RFC 9332).
    #[serde(rename = "dualpi2")]
    DualPi2 {
        /// The buffer, packets, both queues.
        limit: QueueLimit,
        /// Classic delay target.
        target: Dur,
        /// Update period.
        t_update: Dur,
        /// Integral gain, Hz.
        alpha: f64,
        /// Proportional gain, Hz.
        beta: f64,
        /// Coupling factor.
        k: f64,
        /// L queue step threshold.
        step_thresh: Dur,
        /// Scheduler time shift.
        tshift: Dur,
        /// Classic ECN marking.
        ecn: bool,
        /// RFC 9332 §4.2.3 overload drops.
        drop_on_overload: bool,
    },
}

impl QueueSpec {
    /// The kind's name in scenarios.
    pub fn kind(&self) -> &'static str {
        match self {
            QueueSpec::Droptail { .. } => "droptail",
            QueueSpec::Red { .. } => "red",
            QueueSpec::Codel { .. } => "codel",
            QueueSpec::FqCodel { .. } => "fq-codel",
            QueueSpec::Pie { .. } => "pie",
            QueueSpec::DualPi2 { .. } => "dualpi2",
        }
    }

    /// The queue decides at dequeue (its packets wait in a discipline, not a FIFO).
    pub fn dequeue_time(&self) -> bool {
        !matches!(self, QueueSpec::Droptail { .. } | QueueSpec::Red { .. })
    }

    /// The physical buffer.
    pub fn limit(&self) -> QueueLimit {
        match *self {
            QueueSpec::Droptail { limit }
            | QueueSpec::Red { limit, .. }
            | QueueSpec::Codel { limit, .. }
            | QueueSpec::FqCodel { limit, .. }
            | QueueSpec::Pie { limit, .. }
            | QueueSpec::DualPi2 { limit, .. } => limit,
        }
    }
}

/// The network.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    /// N sender/receiver pairs across one bottleneck.
    Dumbbell(Dumbbell),
    /// Any graph of hosts and routers with static shortest-path routes.
    Graph(Graph),
}

/// Dumbbell: senders `s{i}` — `left` — bottleneck — `right` — receivers `d{i}`; cross-traffic
/// hosts `xs{j}` / `xd{j}` hang on the routers with zero-delay access links.
#[derive(Clone, Debug, Serialize)]
pub struct Dumbbell {
    /// Bottleneck rate (both directions).
    pub bottleneck_rate: Rate,
    /// Bottleneck one-way propagation delay.
    pub bottleneck_delay: Dur,
    /// Access link rate.
    pub access_rate: Rate,
    /// Base (propagation) RTT of each pair.
    pub rtts: Vec<Dur>,
    /// Bottleneck queue (both directions).
    pub queue: QueueSpec,
    /// Access-link queues.
    pub access_queue: QueueSpec,
}

/// A general graph.
#[derive(Clone, Debug, Serialize)]
pub struct Graph {
    /// Node names; hosts first, then routers.
    pub nodes: Vec<String>,
    /// Number of hosts (the first `hosts` nodes).
    pub hosts: usize,
    /// Full-duplex links.
    pub links: Vec<LinkSpec>,
}

/// A full-duplex link between two nodes (indices into `Graph::nodes`).
#[derive(Clone, Debug, Serialize)]
pub struct LinkSpec {
    /// Label.
    pub name: String,
    /// End points.
    pub between: [usize; 2],
    /// Rate of each direction.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Queue of each direction.
    pub queue: QueueSpec,
}

/// Where a flow or a cross-traffic source runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ends {
    /// Dumbbell pair index.
    Pair(usize),
    /// Graph host indices.
    Nodes {
        /// Sender host.
        from: usize,
        /// Receiver host.
        to: usize,
    },
    /// Dumbbell cross-traffic hosts (index of the source).
    Cross(usize),
    /// Dumbbell: sender host `s{from}` to receiver host `d{to}`, or `d{to}` to `s{from}` when
    /// `reverse` (flows drawn by an arrival process).
    Dumbbell {
        /// Index of the `s` host.
        from: usize,
        /// Index of the `d` host.
        to: usize,
        /// Data flows right to left.
        reverse: bool,
    },
}

/// A flow: a TCP connection, or a QUIC one when `quic` is set.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSpec {
    /// Name (replicates get `name-i`).
    pub name: String,
    /// Where it runs.
    pub ends: Ends,
    /// TCP options (for a QUIC flow, the congestion controller's: avoidance, `initial_ssthresh`,
    /// `ecn`, `cwnd_validation`; `mss` is the datagram size and `header` the IPv4 and UDP headers).
    pub tcp: TcpSpec,
    /// The flow runs QUIC with these settings (the `quic` table); `None`: TCP. Left out of the
    /// resolved scenario for a TCP flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicSpec>,
    /// Startup algorithm.
    pub startup: StartupSpec,
    /// When the application opens the connection (before jitter).
    pub start: Dur,
    /// The flow starts at `start + U[0, start_jitter]`, drawn from its own seeded stream.
    pub start_jitter: Dur,
    /// Bytes to send; `None` for an infinite transfer.
    pub size: Option<u64>,
    /// 1-based indices of data packets (in transmission order) the network drops on purpose.
    pub drops: Vec<u64>,
    /// A request/response application instead of one transfer of `size`.
    pub app: Option<AppSpec>,
}

impl FlowSpec {
    /// What the flow's startup and avoidance algorithms are built for: its `tcp` table's context,
    /// with the transport.
    pub fn flow_context(&self) -> startlab_cc::decl::FlowContext {
        startlab_cc::decl::FlowContext { quic: self.quic.is_some(), ..self.tcp.flow_context() }
    }
}

named_enum! {
    /// Loss recovery (`tcp.recovery`).
    pub enum RecoverySpec {
        /// Tahoe.
        Tahoe = "tahoe",
        /// Reno.
        Reno = "reno",
        /// NewReno (RFC 6582).
        Newreno = "newreno",
        /// SACK (RFC 6675).
        Sack = "sack",
        /// RFC 6675 with Proportional Rate Reduction (RFC 6937); the bound is `TcpSpec::prr_bound`.
        Prr = "prr",
        /// RACK-TLP (RFC 8985) loss detection, cwnd as RFC 6675.
        RackTlp = "rack-tlp",
        /// RACK-TLP with Linux's PRR: Linux's defaults.
        Linux = "linux",
        /// ns-2's Agent/TCP/Sack1.
        Sack1 = "sack1",
        /// ns-3 3.44's SACK recovery with TcpPrrRecovery, as released.
        Ns3Prr = "ns3-prr",
    }
}

named_enum! {
    /// RFC 6937's reduction bound for `recovery = "prr"` (`tcp.prr_bound`).
    pub enum PrrBoundSpec {
        /// PRR-SSRB (slow-start reduction bound), RFC 6937's recommendation.
        Ssrb = "ssrb",
        /// PRR-CRB (conservative reduction bound).
        Crb = "crb",
        /// RFC 9937's choice per ACK: the slow-start bound on an ACK that advances SND.UNA and
        /// marks nothing newly lost, else `max(prr_delivered - prr_out, DeliveredData)`.
        SafeAck = "safe-ack",
    }
}

/// Initial ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SsthreshSpec {
    /// Infinite.
    Infinite,
    /// Bytes.
    Bytes(u64),
}

/// Receiver ACK policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AckSpec {
    /// Every segment.
    EveryPacket,
    /// Every second full-sized segment or the timer.
    Delayed {
        /// Delayed-ACK timer.
        timeout: Dur,
    },
    /// Linux quick-ACK then delayed.
    Quickack {
        /// Segments ACKed at once.
        segments: u64,
        /// Delayed-ACK timer afterwards.
        timeout: Dur,
    },
}

/// TCP options of a flow.
#[derive(Clone, Debug, Serialize)]
pub struct TcpSpec {
    /// Loss recovery.
    pub recovery: RecoverySpec,
    /// PRR's reduction bound (used with `recovery = "prr"`).
    pub prr_bound: PrrBoundSpec,
    /// The avoidance algorithm (`tcp.congestion_avoidance`) and its parameters (its keys of the
    /// `tcp` table); written into the resolved `tcp` table as those keys.
    #[serde(flatten)]
    pub avoidance: AvoidanceSpec,
    /// Payload bytes per segment.
    pub mss: u64,
    /// TCP/IP header bytes added on the wire to each segment; an ACK is `header` bytes.
    pub header: u64,
    /// Initial window in segments.
    pub initial_window: u64,
    /// Initial ssthresh (bytes).
    pub initial_ssthresh: SsthreshSpec,
    /// Receiver policy.
    pub ack: AckSpec,
    /// Receiver window in bytes; `None` = unlimited.
    pub rwnd: Option<u64>,
    /// Three-way handshake before data.
    pub handshake: bool,
    /// Pace every transmission (Linux-like rate, ALGORITHMS.md §0.6).
    pub pacing: bool,
    /// RTO rule: true = Linux (floor on the variance term), false = RFC 6298 (floor on the RTO).
    pub rto_linux: bool,
    /// RTO floor.
    pub rto_min: Dur,
    /// RTO before the first sample.
    pub rto_initial: Dur,
    /// RTO ceiling.
    pub rto_max: Dur,
    /// Clock granularity G of RFC 6298.
    pub clock_granularity: Dur,
    /// RFC 3042.
    pub limited_transmit: bool,
    /// Duplicate-ACK threshold.
    pub dupthresh: u64,
    /// SACK blocks per ACK.
    pub sack_blocks: u64,
    /// RFC 7661-style growth only when cwnd-limited.
    pub cwnd_validation: bool,
    /// Linux clamp of slow start at ssthresh.
    pub linux_ss_clamp: bool,
    /// NewReno RTO restart: true = Impatient (RFC 6582 §4.1 default).
    pub newreno_impatient: bool,
    /// ECN (`tcp.ecn`): off, classic (RFC 3168: ECT(0) data, ECE/CWR, window reduction on ECE;
    /// ALGORITHMS.md §17.3) or L4S (RFC 9331: ECT(1) data). Written into the resolved scenario as
    /// a scenario writes it: `false`, `true` or `"l4s"`.
    #[serde(serialize_with = "EcnSpec::serialize_as_written")]
    pub ecn: EcnSpec,
    /// The window after idle periods longer than the RTO.
    pub idle_restart: IdleRestartSpec,
    /// Per-response fast startups: Quick-Start, Jump-Start and More-Start act again when a
    /// response starts after an idle period (docs/algorithms/quick-start.md, jump-start.md, more-start.md). Left out of the
    /// resolved scenario when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub startup_after_idle: bool,
    /// The fast startup applies only to responses larger than this (bytes; Scharf's "QS 3": 10 kB).
    /// Left out of the resolved scenario when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub startup_min_response: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

named_enum! {
    /// ECN of a flow (`tcp.ecn`; `false` is `"off"`, `true` is `"classic"`).
    pub enum EcnSpec {
        /// Not ECN-capable: Not-ECT packets, no feedback.
        Off = "off",
        /// RFC 3168 classic ECN: ECT(0) data, ECE/CWR feedback, one reduction per window.
        Classic = "classic",
        /// L4S (RFC 9330, RFC 9331 §4): ECT(1) data, so that an L4S queue (DualPI2, RFC 9332 §2.3)
        /// classifies it into its low-latency queue.
        L4s = "l4s",
    }
}

impl EcnSpec {
    /// ECN is used (classic or L4S).
    pub fn on(self) -> bool {
        self != EcnSpec::Off
    }

    /// The value as `tcp.ecn` writes it, so that a scenario without L4S resolves as before:
    /// `false`, `true`, or the name (`"l4s"`).
    fn serialize_as_written<S: serde::Serializer>(v: &EcnSpec, s: S) -> Result<S::Ok, S::Error> {
        match v {
            EcnSpec::Off => s.serialize_bool(false),
            EcnSpec::Classic => s.serialize_bool(true),
            EcnSpec::L4s => s.serialize_str(v.name()),
        }
    }
}

named_enum! {
    /// The window after idle periods (`tcp.idle_restart`).
    pub enum IdleRestartSpec {
        /// RFC 5681 §4.1: cwnd = min(IW, cwnd).
        Rfc5681 = "rfc5681",
        /// RFC 2861: halve per idle RTO, not below min(IW, cwnd).
        Rfc2861 = "rfc2861",
        /// Keep cwnd.
        Off = "off",
    }
}

impl TcpSpec {
    /// What a startup or avoidance algorithm may read of these settings
    /// (`startlab_cc::decl::FlowContext`).
    pub fn flow_context(&self) -> startlab_cc::decl::FlowContext {
        startlab_cc::decl::FlowContext {
            mss: self.mss,
            header: self.header,
            initial_window: self.initial_window,
            acks: match self.ack {
                AckSpec::EveryPacket => startlab_cc::startup::AckCounting::PerPacket,
                AckSpec::Delayed { .. } => startlab_cc::startup::AckCounting::Delayed,
                AckSpec::Quickack { .. } => startlab_cc::startup::AckCounting::QuickAck,
            },
            handshake: self.handshake,
            infinite_ssthresh: self.initial_ssthresh == SsthreshSpec::Infinite,
            quic: false,
        }
    }
    /// The receiver sends SACK blocks (every recovery with a scoreboard).
    pub fn sack(&self) -> bool {
        !matches!(self.recovery, RecoverySpec::Tahoe | RecoverySpec::Reno | RecoverySpec::Newreno)
    }
}

/// Startup algorithm and its parameters, checked against its declaration (`startlab_cc::startup::DECLS`), every default
/// filled in.
#[derive(Clone, Debug, Serialize)]
pub struct StartupSpec {
    /// Scenario name of the algorithm.
    pub algorithm: &'static str,
    /// Every parameter of the algorithm, by name.
    pub params: std::collections::BTreeMap<&'static str, registry::ParamValue>,
}

impl StartupSpec {
    /// Scenario name of the algorithm.
    pub fn name(&self) -> &'static str {
        self.algorithm
    }
    /// The parameters, read by their typed declarations (`startlab_cc::decl::Param`).
    pub fn params(&self) -> startlab_cc::decl::Params<'_> {
        startlab_cc::decl::Params::new(&self.params)
    }
    /// The algorithm's declaration.
    pub fn decl(&self) -> &'static startlab_cc::startup::StartupDecl {
        registry::startup(self.algorithm).expect("a resolved startup is declared")
    }
}

/// Congestion-avoidance algorithm and its parameters, checked against its declaration
/// (`startlab_cc::avoidance::DECLS`), every default filled in. Its parameters are keys of the
/// flow's `tcp` table, and the resolved scenario writes them there, beside
/// `congestion_avoidance = NAME`, as a scenario does.
#[derive(Clone, Debug, Serialize)]
pub struct AvoidanceSpec {
    /// Scenario name of the algorithm (`tcp.congestion_avoidance`).
    #[serde(rename = "congestion_avoidance")]
    pub algorithm: &'static str,
    /// Every parameter of the algorithm, by key (`cubic_c`, `reno_ssthresh_from`, ...).
    #[serde(flatten)]
    pub params: std::collections::BTreeMap<&'static str, registry::ParamValue>,
}

impl AvoidanceSpec {
    /// Scenario name of the algorithm.
    pub fn name(&self) -> &'static str {
        self.algorithm
    }
    /// The parameters, read by their typed declarations (`startlab_cc::decl::Param`).
    pub fn params(&self) -> startlab_cc::decl::Params<'_> {
        startlab_cc::decl::Params::new(&self.params)
    }
    /// The algorithm's declaration.
    pub fn decl(&self) -> &'static startlab_cc::avoidance::AvoidanceDecl {
        registry::avoidance(self.algorithm).expect("a resolved avoidance is declared")
    }
}

/// Cross traffic.
#[derive(Clone, Debug, Serialize)]
pub struct CrossSpec {
    /// Label.
    pub name: String,
    /// Where it runs.
    pub ends: Ends,
    /// How packets are spaced.
    pub process: CrossProcess,
    /// Constant bit rate (of whole packets on the wire); the mean rate of a Poisson source; the
    /// rate while "on" of an on/off source.
    pub rate: Rate,
    /// Packet size on the wire.
    pub packet_size: u64,
    /// First packet.
    pub start: Dur,
    /// No packet at or after this time.
    pub stop: Dur,
    /// `kind = "train"`: the source gap of each train, in order (empty for the other kinds, and
    /// then left out of the resolved scenario).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<Dur>,
}

/// The packet process of a `[[cross]]` source.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CrossProcess {
    /// Exactly one packet every `packet_size / rate`.
    Cbr,
    /// Exponential gaps of mean `packet_size / rate`.
    Poisson,
    /// Exponential on and off periods; constant rate while on.
    OnOff {
        /// Mean on period.
        on: Dur,
        /// Mean off period.
        off: Dur,
    },
    /// A packet-train probe (the Paced Start paper's Fig. 1): train `t` starts at
    /// `start + t·interval` and its packet `k` leaves `k·gaps[t]` later; each packet's receive time
    /// is recorded (`Results::probes`). `rate` is the mean rate over the trains.
    Train {
        /// Packets per train (at least 2).
        packets: u32,
        /// From one train's start to the next.
        interval: Dur,
    },
}

impl CrossProcess {
    /// The long-run fraction of time the source sends at its rate (1 for CBR and Poisson).
    pub fn duty(&self) -> f64 {
        match *self {
            CrossProcess::Cbr | CrossProcess::Poisson | CrossProcess::Train { .. } => 1.0,
            CrossProcess::OnOff { on, off } => on.as_secs_f64() / (on.as_secs_f64() + off.as_secs_f64()),
        }
    }
}

/// Quick-Start support in the routers (`[quick_start]`, ALGORITHMS.md §10.1). Only matters when a
/// flow uses the `quick-start` startup algorithm.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuickStartSpec {
    /// Router names that process Quick-Start requests; `None` = every router. A router not listed
    /// forwards requests untouched (the sender's TTL check then fails).
    pub routers: Option<Vec<String>>,
    /// Share of each output link's capacity the router may hand out: it approves a rate iff
    /// `share·capacity − utilisation − rates approved in the window >= rate`; in (0, 1].
    pub share: f64,
    /// Window over which utilisation and approved rates are summed.
    pub window: Dur,
}

/// Measurement options.
#[derive(Clone, Debug, Serialize)]
pub struct MeasureSpec {
    /// Base RTTs after `t0` covered by `early_peak_queue` and `early_losses`.
    pub early_rtts: u64,
    /// Which flows the per-flow table marks as `measured`.
    pub window: MeasureWindow,
}

/// The measurement window over flows (the Paced Start paper's method or a fixed time window).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeasureWindow {
    /// Every flow is measured.
    All,
    /// Flows starting in `[from, to)`.
    Time {
        /// Start.
        from: Dur,
        /// End.
        to: Dur,
    },
    /// After the warm-up (fixed, or `None` = automatic: until the number of active flows is
    /// stable), the next `flows` flows to start (all of them if `None`).
    Warmup {
        /// Warm-up length; `None` = automatic.
        warmup: Option<Dur>,
        /// How many flows to collect.
        flows: Option<u64>,
    },
}

/// Trace selection.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSpec {
    /// cwnd/ssthresh changes.
    pub cwnd: bool,
    /// Sequence events.
    pub seq: bool,
    /// Queue lengths.
    pub queue: bool,
    /// Every RTT sample (off by default: one row per ACK).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rtt: bool,
    /// The startup algorithm's declared signals after every ACK in startup (off by default).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub startup: bool,
    /// At most one point per series per interval (0 keeps everything).
    pub interval: Dur,
    /// Per-packet queue events of chosen link directions (off: `None`).
    pub packets: Option<PacketTraceSpec>,
    /// Capture files of chosen link directions (`[trace.pcap]`; off: `None`). The files go to the
    /// directory the run is given (`startlab run --pcap DIR`); the scenario says only what to capture.
    pub pcap: Option<PcapSpec>,
    /// qlog files of chosen flows (`[trace.qlog]`; off: `None`; `Some(None)`: every flow). The
    /// files go to the directory the run is given (`startlab run --qlog DIR`).
    pub qlog: Option<Option<Vec<String>>>,
}


/// `[trace.packets]`: enqueue, dequeue, drop, loss and ECN-mark events of every packet on the
/// chosen link directions (the role of an ns-3 ascii or pcap trace at a router).
#[derive(Clone, Debug, Serialize)]
pub struct PacketTraceSpec {
    /// Links by name (as `[[impairments]]` names them), each with its directions: forward (first
    /// end to second, the data direction of a dumbbell's links) and reverse.
    pub links: Vec<(String, bool, bool)>,
    /// Only these flows and cross sources (a `[[flows]]` or `[[arrivals]]` name covers its
    /// replicates `NAME-k`); `None`: every packet.
    pub flows: Option<Vec<String>>,
}

impl PacketTraceSpec {
    /// Whether the flow or cross source `name` is traced.
    pub fn selects(&self, name: &str) -> bool {
        self.flows.as_ref().is_none_or(|list| list.iter().any(|f| name_matches(f, name)))
    }
}

/// Whether a selection entry (a `flows` list's item in `[trace.packets]`, `[trace.pcap]` or
/// `[trace.qlog]`) picks the flow or source `name`.
pub fn name_selects(entry: &str, name: &str) -> bool {
    name_matches(entry, name)
}

/// `entry` names `name` itself, one of its replicates or replayed connections (`entry-k`), or one
/// of its users (`entry/k`).
pub(crate) fn name_matches(entry: &str, name: &str) -> bool {
    name == entry
        || name
            .strip_prefix(entry)
            .and_then(|r| r.strip_prefix('-').or_else(|| r.strip_prefix('/')))
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests;
