//! The simulation: event loop, packet forwarding, TCP endpoints, cross traffic, measurement hooks.

use crate::build::{network, Network};
use crate::engine::{EventQueue, Source, TimerSlot};
use crate::rng;
use rand::RngExt as _;
use crate::net::{flags, Arena, Offer, Packet, PktKind, QsLink, QueueChange};
use crate::trace::{Gate, PacketRecord, PacketTrace, PacketTracing, Traces, PKT_DEQUEUE, PKT_DROP, PKT_ENQUEUE, PKT_LOST, PKT_MARK, SEQ_ACKED, SEQ_DROPPED, SEQ_RETRANSMITTED, SEQ_SENT};
use startlab_cc::avoidance::Avoidance;
use startlab_cc::startup::{qs_code_for, qs_rate_bps, QsRequest, Startup, INITIAL_IP_TTL, QS_NONCE_BITS, QS_OPTION_BYTES};
use startlab_cc::{CcConfig, CongestionKind, Controller, Ssthresh};
use crate::workload;
use startlab_scenario::{AckSpec, ArrivalEnds, CrossProcess, IdleRestartSpec, PrrBoundSpec, Think, Ends, FlowSpec, RecoverySpec, Scenario, SizeSpec, SsthreshSpec, StartupSpec, Topology};
use startlab_tcp::{Ack, AckPolicy, IdleRestart, PrrBound, Receiver, ReceiverConfig, Recovery, RtoConfig, RtoPolicy, SegmentKind, Sender, SenderConfig};
use startlab_units::{Dur, Time};
use std::collections::VecDeque;

/// A scenario that parses but cannot be built (e.g. no route between a flow's hosts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// Key path of the offending item.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}
impl std::error::Error for BuildError {}

/// Engine counters.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Data packets that reached their receiver.
    pub delivered_packets: u64,
    /// Data packets sent by TCP senders.
    pub sent_packets: u64,
    /// Packets dropped anywhere (all kinds).
    pub dropped_packets: u64,
    /// Simulated time reached, ns.
    pub sim_time_ns: u64,
}

/// Per-flow measurement state (see metrics.rs for the definitions).
#[derive(Debug, Default)]
pub(crate) struct FlowMeter {
    pub sent_startup: u64,
    pub dropped_startup: u64,
    pub dropped: u64,
    /// Of `dropped`, retransmissions.
    pub dropped_retransmissions: u64,
    /// Of `dropped`, data packets an impairment's loss process discarded.
    pub impairment_drops: u64,
    pub delivered_pkts: u64,
    pub early_end: Option<Time>,
    pub early_losses: u64,
    pub early_peak: u64,
    pub t90: Option<Time>,
    pub window: VecDeque<(Time, u64)>,
    pub acked_at_su: Option<u64>,
    /// `snd_max` (payload bytes sent, first transmissions) when startup ended.
    pub sent_at_su: Option<u64>,
    pub last_ack: u64,
    /// Highest cumulative ACK the receiver emitted.
    pub last_ack_sent: u64,
    pub last_cc: (f64, f64),
    /// Congestion events of the connection's controller seen so far.
    pub reductions: u64,
    pub data_sent: u64,
    pub next_forced_drop: usize,
    /// Data packets of this flow a RED queue marked CE (first mark per packet).
    pub ecn_marks: u64,
}

pub(crate) struct FlowState {
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub sender: Sender,
    pub receiver: Receiver,
    stimer: TimerSlot,
    rtimer: TimerSlot,
    pub header: u32,
    pub bottleneck: u32,
    pub base_rtt: Dur,
    /// bit/s; `None` if cross traffic leaves nothing.
    pub available: Option<f64>,
    pub forced_drops: Vec<u64>,
    pub m: FlowMeter,
    /// When the application opened the connection (start plus its jitter).
    pub opened: Time,
    /// A request/response application, if the flow runs one.
    pub app: Option<AppState>,
    /// The slot's current connection (see `Packet::conn`).
    pub conn: u32,
    /// The user running on this slot (`[[users]]`).
    pub user: Option<Box<UserState>>,
}

/// A request/response application: its exchanges drawn at build time (`[[flows]]` apps), read
/// from a vector file (`[[replay]]`), or drawn one at a time (persistent `[[users]]`).
pub(crate) struct AppState {
    /// Response sizes (bytes) of every exchange; empty for a user (see `current`).
    pub sizes: Vec<u64>,
    /// Think time before each request.
    thinks: Vec<Dur>,
    /// Request bytes of each exchange (`[[replay]]`); empty: `request` for every exchange.
    requests: Vec<u64>,
    /// Request size on the wire when `requests` is empty.
    request: u32,
    /// A user's current exchange: (response bytes, think before its request).
    current: Option<(u64, Dur)>,
    /// The exchange in progress or next.
    next: usize,
    /// Requests the server has answered.
    answered: usize,
    /// The current request has left the client (a resend keeps its time).
    pub awaiting: bool,
    /// When its request (first copy) left the client.
    requested_at: Time,
    /// The receiver has the whole response once it has delivered this many bytes.
    end: u64,
    /// The client's retry timer for a lost request is set for this time.
    retry_at: Option<Time>,
    /// Parts of request `answered` the server has (a request longer than one MSS travels as
    /// several packets).
    parts: Vec<bool>,
    /// (request time, response time) of each finished exchange, s (users stream rows instead).
    pub done: Vec<(f64, f64)>,
}

impl AppState {
    fn new(sizes: Vec<u64>, thinks: Vec<Dur>, requests: Vec<u64>, request: u32) -> AppState {
        AppState { sizes, thinks, requests, request, current: None, next: 0, answered: 0, awaiting: false, requested_at: Time::ZERO, end: 0, retry_at: None, parts: Vec::new(), done: Vec::new() }
    }
    /// The think time before request `k`.
    pub fn think(&self, k: usize) -> Dur {
        match self.current {
            Some((_, t)) => t,
            None => self.thinks[k],
        }
    }
    /// Response bytes of exchange `k`.
    pub fn size(&self, k: usize) -> u64 {
        match self.current {
            Some((s, _)) => s,
            None => self.sizes[k],
        }
    }
    /// Exchange `k` exists (a user's exchanges are scheduled one at a time, so it always does).
    fn has(&self, k: usize) -> bool {
        self.current.is_some() || k < self.sizes.len()
    }
    /// Request bytes of exchange `k`.
    fn request_bytes(&self, k: usize) -> u64 {
        self.requests.get(k).copied().unwrap_or(self.request as u64)
    }
}

/// A closed-loop user (`[[users]]`) on its flow slot.
pub(crate) struct UserState {
    /// Index into `scenario.users`.
    pub group: u32,
    /// User number within the group.
    pub user: u32,
    /// One persistent connection (requests) rather than a new connection per transfer.
    pub persistent: bool,
    /// Transfers started.
    pub k: u64,
    sizes: rand_pcg::Pcg64,
    thinks: rand_pcg::Pcg64,
    law: workload::SizeDist,
    think: ThinkDraw,
    /// The current transfer: its size, when it began, the think before it.
    pub size: u64,
    pub began: Time,
    pub think_before: Dur,
    /// The next transfer is scheduled (new-connection users): its size and think time.
    pub scheduled: bool,
    pending: (u64, Dur),
    /// Earlier connections' packets: sent, delivered, dropped (for the conservation check).
    pub past: (u64, u64, u64),
    /// A persistent user's sender counters when the current transfer began (packets sent,
    /// retransmissions, timeouts, drops).
    pub at_start: (u64, u64, u64, u64),
}

impl UserState {
    /// The next transfer, if the user starts one at `now + think` (before the group's stop and
    /// within its transfer limit): (size, think).
    fn draw_next(&mut self, spec: &startlab_scenario::UserSpec, now: Time) -> Option<(u64, Dur)> {
        if spec.transfers.is_some_and(|n| self.k >= n) {
            return None;
        }
        let think = self.think.draw(&mut self.thinks);
        let size = self.law.sample(&mut self.sizes);
        (now + think < Time(spec.stop.as_nanos())).then_some((size, think))
    }
}

/// A think-time law, ready to draw.
pub(crate) struct ThinkDraw {
    law: Think,
    /// Exponential laws: the mean, s.
    mean: f64,
    /// Size laws over nanoseconds.
    sampler: Option<workload::SizeDist>,
}

impl ThinkDraw {
    /// `mean_for_load`: the mean of `Think::Load`'s exponential law.
    fn new(law: &Think, mean_for_load: f64) -> ThinkDraw {
        let mean = match law {
            Think::Mean(d) => d.as_secs_f64(),
            Think::Load(_) => mean_for_load,
            _ => 0.0,
        };
        let sampler = match law {
            Think::Law(s) => Some(size_law(s)),
            _ => None,
        };
        ThinkDraw { law: law.clone(), mean, sampler }
    }
    fn draw(&self, rng: &mut rand_pcg::Pcg64) -> Dur {
        match (&self.law, &self.sampler) {
            (Think::Fixed(d), _) => *d,
            (Think::Uniform { min, max }, _) => Dur(rng.random_range(min.as_nanos()..=max.as_nanos())),
            (_, Some(law)) => Dur(law.sample(rng)),
            _ => exp_dur(rng, self.mean),
        }
    }
}

/// The fields of a dropped packet its accounting needs.
#[derive(Clone, Copy)]
struct Dropped {
    conn: u32,
    kind: PktKind,
    flow: u32,
    flags: u8,
    seq: u64,
    len: u32,
}

/// The client's retry time for a lost request (RFC 6298's initial RTO).
const REQUEST_RETRY: Dur = Dur::from_secs(1);

/// Quick-Start support in the routers (built only when a flow uses Quick-Start).
struct QsRouters {
    /// Per node: it processes Quick-Start requests.
    participates: Vec<bool>,
    /// Per channel leaving a participating router: its admission state.
    links: Vec<Option<QsLink>>,
    /// Per participating node: its stream of fresh nonce bits.
    rng: Vec<Option<rand_pcg::Pcg64>>,
    share: f64,
}

struct CrossState {
    src: u32,
    dst: u32,
    size: u32,
    bits_ns: u128,
    rate: u128,
    start: Time,
    stop: Time,
    k: u64,
    process: CrossProcess,
    /// Poisson and on/off sources: their own random stream.
    rng: Option<rand_pcg::Pcg64>,
    /// On/off: the current on period ends here.
    on_until: Time,
    /// Packet trains: each train's source gap.
    gaps: Vec<Dur>,
}

/// One packet of a packet-train probe (`[[cross]] kind = "train"`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProbeRecord {
    pub source: u32,
    pub train: u32,
    pub index: u32,
    pub sent: Time,
    pub received: Option<Time>,
}

/// Brings the peak of every early window watching `ch` up to the occupancy accumulated since the
/// last flush.
fn early_flush(ch: &mut crate::net::Channel) {
    if ch.early_acc > 0 {
        for e in &mut ch.early_watch {
            e.2 = e.2.max(ch.early_acc);
        }
        ch.early_acc = 0;
    }
}

/// Flushes `ch`, hands the peaks of the windows `settle` selects to their flows' meters, and drops
/// those for which `settle` says so.
fn early_settle(ch: &mut crate::net::Channel, flows: &mut [FlowState], settle: impl Fn(Time, u32) -> Option<bool>) {
    early_flush(ch);
    ch.early_watch.retain(|&(end, f, peak)| match settle(end, f) {
        None => true,
        Some(remove) => {
            let m = &mut flows[f as usize].m;
            m.early_peak = m.early_peak.max(peak);
            !remove
        }
    });
    ch.early_next_end = ch.early_watch.iter().map(|e| e.0).min().unwrap_or(Time(u64::MAX));
}

/// An exponential duration of mean `mean`, from a uniform draw in (0, 1].
fn exp_dur(rng: &mut rand_pcg::Pcg64, mean: f64) -> Dur {
    Dur::from_secs_f64(-mean * (1.0 - rng.random::<f64>()).ln())
}

/// One simulation of one scenario.
pub struct Simulation {
    pub(crate) scenario: Scenario,
    now: Time,
    end: Time,
    /// Stop once this many events were processed (a resource guard for sweeps); `None`: no limit.
    event_limit: Option<u64>,
    /// A plug-in registered at run time runs in this scenario: check its stop request after every
    /// event (`startlab_cc::startup::plugin::request_halt`).
    plugins: bool,
    /// A plug-in asked to stop during the event at this time; the run goes no further.
    halted: Option<Time>,
    q: EventQueue,
    arena: Arena,
    pub(crate) net: Network,
    pub(crate) flows: Vec<FlowState>,
    cross: Vec<CrossState>,
    pub(crate) traces: Traces,
    gate_cwnd: Gate,
    gate_seq: Gate,
    gate_queue: Gate,
    pub(crate) stats: EngineStats,
    pub(crate) violations: Vec<String>,
    finished: bool,
    pub(crate) link_bits: Vec<f64>,
    qs: Option<QsRouters>,
    /// Some channel lets packets overtake each other (jitter with `reorder = true`).
    reordering: bool,
    /// Every flow: the scenario's `[[flows]]`, then those the `[[arrivals]]` processes drew.
    pub(crate) specs: Vec<FlowSpec>,
    /// The group of each flow (index into `group_names`), `None` for `[[flows]]`.
    pub(crate) groups: Vec<Option<u32>>,
    /// Names of the arrival processes, then the user groups, then the replays.
    pub(crate) group_names: Vec<String>,
    /// The transfers of `[[users]]` users that ended (finished, or replaced by the next one).
    pub(crate) transfers: Vec<crate::metrics::TransferRow>,
    /// The active time of every transfer that ended, per warm-up window (drained or not).
    pub(crate) transfer_busy: crate::metrics::BusyWindows,
    /// `[trace.packets]`: which channels and packets, and the traced queues' contents.
    ptrace: Option<Box<PacketTracing>>,
    /// Every packet of the packet-train probes, in the order sent.
    pub(crate) probe: Vec<ProbeRecord>,
}

/// The channel's dequeue reports matched to the packet trace's copy of its queue: each report is
/// the head of the queue starting transmission. Does nothing for a channel that is not traced.
fn dequeue_hook<'a>(ptrace: Option<&'a mut PacketTracing>, packets: &'a mut PacketTrace, c: u32) -> impl FnMut(QueueChange) + 'a {
    let mut waiting = ptrace.filter(|p| p.channels[c as usize]).map(|p| &mut p.waiting[c as usize]);
    move |(t, pk, b, _)| {
        if let Some(Some(r)) = waiting.as_mut().and_then(|w| w.pop_front()) {
            packets.push(t, c, PKT_DEQUEUE, &r, pk, b);
        }
    }
}

/// Draws the flows of every `[[arrivals]]` process from the seed: Poisson arrival times, then per
/// flow its size, hosts and startup algorithm, each from its own stream (so changing, say, the size
/// law leaves the arrival times as they were).
fn arrival_flows(scenario: &Scenario) -> (Vec<FlowSpec>, Vec<u32>) {
    let (mut flows, mut groups) = (Vec::new(), Vec::new());
    for (j, a) in scenario.arrivals.iter().enumerate() {
        let j64 = j as u64;
        let mut times = rng::stream(scenario.seed, rng::Component::ArrivalTimes, j64);
        let mut sizes = rng::stream(scenario.seed, rng::Component::ArrivalSizes, j64);
        let mut ends = rng::stream(scenario.seed, rng::Component::ArrivalEnds, j64);
        let mut mix = rng::stream(scenario.seed, rng::Component::ArrivalMix, j64);
        let law = size_law(&a.size);
        let at = workload::poisson_arrivals(a.rate, Time(a.start.as_nanos()), Time(a.stop.as_nanos()), a.count, &mut times);
        for (k, t) in at.into_iter().enumerate() {
            let size = law.sample(&mut sizes);
            let flow_ends = pick_ends(&a.ends, scenario, &mut ends);
            let startup = pick_startup(&a.mix, mix.random());
            flows.push(FlowSpec {
                name: format!("{}-{k}", a.name),
                ends: flow_ends,
                tcp: a.tcp.clone(),
                startup,
                start: Dur(t.as_nanos()),
                start_jitter: Dur::ZERO,
                size: Some(size),
                drops: Vec::new(),
                app: None,
            });
            groups.push(j as u32);
        }
    }
    (flows, groups)
}

/// The hosts of one `[[arrivals]]` flow or `[[users]]` user.
fn pick_ends(rule: &ArrivalEnds, scenario: &Scenario, ends: &mut rand_pcg::Pcg64) -> Ends {
    match rule {
        ArrivalEnds::Dumbbell { both_directions, reverse: all_reverse } => {
            let Topology::Dumbbell(d) = &scenario.topology else { unreachable!("checked by the scenario") };
            let n = d.rtts.len();
            let from = ends.random_range(0..n);
            let to = ends.random_range(0..n);
            // Forward and reverse-only draw no direction, so each keeps the streams of the other settings.
            let reverse = *all_reverse || (*both_directions && ends.random::<bool>());
            Ends::Dumbbell { from, to, reverse }
        }
        ArrivalEnds::Graph { from, to } => {
            let Topology::Graph(g) = &scenario.topology else { unreachable!("checked by the scenario") };
            // Redraw until the two hosts are distinct and not behind the same router (the
            // scenario checked that such a pair exists).
            loop {
                let x = from[ends.random_range(0..from.len())];
                let y = to[ends.random_range(0..to.len())];
                if x != y && (graph_router(g, x).is_none() || graph_router(g, x) != graph_router(g, y)) {
                    break Ends::Nodes { from: x, to: y };
                }
            }
        }
    }
}

/// The startup algorithm of a mix for a uniform draw `u` in [0, 1).
fn pick_startup(mix: &[(StartupSpec, f64)], u: f64) -> StartupSpec {
    let mut acc = 0.0;
    mix.iter()
        .find(|(_, share)| {
            acc += share;
            u < acc
        })
        .unwrap_or_else(|| mix.last().expect("a mix has at least one algorithm"))
        .0
        .clone()
}

/// The flow slot of every `[[users]]` user, with its state: hosts and startup drawn per user, the
/// first think time and size from the user's own streams.
fn user_flows(scenario: &Scenario) -> Vec<(FlowSpec, UserState)> {
    let mut out = Vec::new();
    for (j, u) in scenario.users.iter().enumerate() {
        let mut ends = rng::stream(scenario.seed, rng::Component::UserEnds, j as u64);
        let mut mix = rng::stream(scenario.seed, rng::Component::UserMix, j as u64);
        for k in 0..u.count {
            let id = (j as u64) << 32 | k;
            let flow_ends = pick_ends(&u.ends, scenario, &mut ends);
            let startup = pick_startup(&u.mix, mix.random());
            let mut state = UserState {
                group: j as u32,
                user: k as u32,
                persistent: u.persistent.is_some(),
                k: 0,
                sizes: rng::stream(scenario.seed, rng::Component::UserSizes, id),
                thinks: rng::stream(scenario.seed, rng::Component::UserThink, id),
                law: size_law(&u.size),
                think: ThinkDraw::new(&u.think, 0.0),
                size: 0,
                began: Time::ZERO,
                think_before: Dur::ZERO,
                scheduled: false,
                pending: (0, Dur::ZERO),
                past: (0, 0, 0),
                at_start: (0, 0, 0, 0),
            };
            // The first transfer starts one think time after the group's start.
            let (size, think) = state.draw_next(u, Time(u.start.as_nanos())).unwrap_or((0, Dur(u64::MAX / 4)));
            state.size = size;
            state.think_before = think;
            let spec = FlowSpec {
                name: format!("{}/{k}", u.name),
                ends: flow_ends,
                tcp: u.tcp.clone(),
                startup,
                start: u.start + think,
                start_jitter: Dur::ZERO,
                size: if state.persistent { None } else { Some(size.max(1)) },
                drops: Vec::new(),
                app: None,
            };
            out.push((spec, state));
        }
    }
    out
}

/// The flow of every connection of every `[[replay]]` file, with its exchanges.
fn replay_flows(scenario: &Scenario) -> Vec<(FlowSpec, AppState, u32)> {
    let mut out = Vec::new();
    for (j, r) in scenario.replay.iter().enumerate() {
        for c in &r.connections {
            let spec = FlowSpec {
                name: format!("{}-{}", r.name, c.id),
                ends: Ends::Dumbbell { from: c.rtt_class, to: c.rtt_class, reverse: r.reverse },
                tcp: r.tcp.clone(),
                startup: r.startup.clone(),
                start: c.start,
                start_jitter: Dur::ZERO,
                size: None,
                drops: Vec::new(),
                app: None,
            };
            let app = AppState::new(
                c.epochs.iter().map(|e| e.2).collect(),
                c.epochs.iter().map(|e| e.1).collect(),
                c.epochs.iter().map(|e| e.0).collect(),
                0,
            );
            out.push((spec, app, j as u32));
        }
    }
    out
}

/// The sampler of a size distribution.
fn size_law(s: &SizeSpec) -> workload::SizeDist {
    match s {
        SizeSpec::Fixed { value } => workload::SizeDist::Fixed(*value),
        SizeSpec::Exponential { mean } => workload::SizeDist::Exponential { mean: *mean as f64 },
        SizeSpec::Pareto { mean, shape, cutoff } => {
            workload::SizeDist::pareto(*mean as f64, *shape, *cutoff as f64).expect("the scenario checked that the mean lies below the cutoff")
        }
        SizeSpec::Zipf { exponent, ranks, unit } => workload::SizeDist::zipf(*ranks, *exponent, *unit),
        SizeSpec::Uniform { min, max } => workload::SizeDist::Uniform { min: *min, max: *max },
        SizeSpec::Lognormal { mu, sigma } => workload::SizeDist::Lognormal { mu: *mu, sigma: *sigma },
        SizeSpec::Empirical { points, .. } => workload::SizeDist::Empirical { points: points.clone() },
    }
}

/// The router a host hangs on, if it has exactly one link.
fn graph_router(g: &startlab_scenario::Graph, host: usize) -> Option<usize> {
    let mut it = g.links.iter().filter_map(|l| match l.between {
        [x, y] if x == host => Some(y),
        [x, y] if y == host => Some(x),
        _ => None,
    });
    let first = it.next()?;
    it.next().is_none().then_some(first)
}

fn cc_for(spec: &startlab_scenario::TcpSpec, startup: &StartupSpec) -> Controller {
    let mss = spec.mss;
    let cfg = CcConfig {
        mss,
        initial_window: spec.initial_window * mss,
        initial_ssthresh: match spec.initial_ssthresh {
            SsthreshSpec::Infinite => Ssthresh::Infinite,
            SsthreshSpec::Bytes(b) => Ssthresh::Bytes(b as f64),
        },
        loss_window: mss,
        cwnd_validation: spec.cwnd_validation,
        linux_ss_clamp: spec.linux_ss_clamp,
    };
    let startup = startup_for(startup, spec);
    Controller::new(cfg, startup, avoidance_for(spec))
}

/// The avoidance plug-in a scenario names (`tcp.congestion_avoidance`), built by its declaration
/// from its resolved parameters (`startlab_cc::avoidance::DECLS`).
fn avoidance_for(spec: &startlab_scenario::TcpSpec) -> Avoidance {
    spec.avoidance.decl().instantiate(&spec.avoidance.params(), &spec.flow_context())
}

/// The startup plug-in a scenario names, built by its declaration from its resolved parameters
/// (`startlab_cc::startup::DECLS`).
fn startup_for(spec: &StartupSpec, tcp: &startlab_scenario::TcpSpec) -> Startup {
    spec.decl().instantiate(&spec.params(), &tcp.flow_context())
}

/// The sender and receiver the simulator builds for the scenario's `[[flows]]` entry `i` (its own
/// TCP, startup and avoidance settings, its `size`), for a driver other than the simulator: the
/// real-clock UDP transport (startlab-udp) runs exactly these endpoints. `None` if there is no
/// flow `i`.
pub fn flow_endpoints(scenario: &Scenario, i: usize) -> Option<(Sender, Receiver)> {
    let f = scenario.flows.get(i)?;
    Some(endpoints(scenario, f, i, 0, f.size, false))
}

/// The congestion controller (startup and avoidance algorithms, initial window and ssthresh) the
/// simulator builds for the scenario's `[[flows]]` entry `i`, for a driver that feeds it ACKs
/// itself: the BPF conformance test (docs/KERNEL-BPF.md) replays a kernel's ACKs through it.
/// `None` if there is no flow `i`.
pub fn flow_controller(scenario: &Scenario, i: usize) -> Option<Controller> {
    let f = scenario.flows.get(i)?;
    Some(cc_for(&f.tcp, &f.startup))
}

/// The sender and receiver of flow `i`'s connection `conn` (a `[[users]]` slot opens one
/// connection per transfer; each draws its own Quick-Start nonce).
fn endpoints(scenario: &Scenario, f: &FlowSpec, i: usize, conn: u32, size: Option<u64>, app_limited: bool) -> (Sender, Receiver) {
    let t = &f.tcp;
    let recovery = match t.recovery {
        RecoverySpec::Tahoe => Recovery::Tahoe,
        RecoverySpec::Reno => Recovery::Reno,
        RecoverySpec::Newreno => Recovery::NewReno,
        RecoverySpec::Sack => Recovery::Sack,
        RecoverySpec::Prr => Recovery::Prr(match t.prr_bound {
            PrrBoundSpec::Ssrb => PrrBound::SlowStart,
            PrrBoundSpec::Crb => PrrBound::Conservative,
            PrrBoundSpec::SafeAck => PrrBound::SafeAck,
        }),
        RecoverySpec::RackTlp => Recovery::RackTlp,
        RecoverySpec::Linux => Recovery::Linux,
        RecoverySpec::Sack1 => Recovery::Sack1,
        RecoverySpec::Ns3Prr => Recovery::Ns3Prr,
    };
    let sender = Sender::new(
        SenderConfig {
            mss: t.mss as u32,
            size,
            recovery,
            rto: RtoConfig {
                initial: t.rto_initial,
                min: t.rto_min,
                max: t.rto_max,
                granularity: t.clock_granularity,
                policy: if t.rto_linux { RtoPolicy::Linux } else { RtoPolicy::Rfc6298 },
            },
            limited_transmit: t.limited_transmit,
            dupthresh: t.dupthresh as u32,
            handshake: t.handshake,
            newreno_impatient: t.newreno_impatient,
            pacing: t.pacing,
            app_limited,
            idle_restart: match t.idle_restart {
                IdleRestartSpec::Rfc5681 => IdleRestart::Rfc5681,
                IdleRestartSpec::Rfc2861 => IdleRestart::Rfc2861,
                IdleRestartSpec::Off => IdleRestart::Off,
            },
            startup_after_idle: t.startup_after_idle,
            startup_min_response: t.startup_min_response,
            ecn: t.ecn,
            quick_start: (f.startup.name() == "quick-start").then(|| {
                // RFC 4782 §3.1: QS TTL and QS Nonce are random, from the flow's own stream.
                let mut rng = rng::stream(scenario.seed, rng::Component::QuickStartRequest, (conn as u64) << 32 | i as u64);
                QsRequest {
                    code: qs_code_for(f.startup.params().get(&startlab_cc::startup::QUICK_START_RATE)),
                    qs_ttl: rng.random::<u8>(),
                    nonce: rng.random::<u32>() & ((1 << QS_NONCE_BITS) - 1),
                }
            }),
        },
        cc_for(t, &f.startup),
    );
    let policy = match t.ack {
        AckSpec::EveryPacket => AckPolicy::EveryPacket,
        AckSpec::Delayed { timeout } => AckPolicy::Delayed { timeout },
        AckSpec::Quickack { segments, timeout } => AckPolicy::QuickAck { budget: segments as u32, timeout },
    };
    let receiver = Receiver::new(ReceiverConfig {
        policy,
        sack: recovery.uses_sack(),
        max_sack_blocks: t.sack_blocks as usize,
        rwnd: t.rwnd.unwrap_or(u64::MAX),
        mss: t.mss,
    });
    (sender, receiver)
}

impl Simulation {
    /// Builds a simulation; fails only for scenarios whose network cannot carry a flow.
    pub fn new(scenario: Scenario) -> Result<Simulation, BuildError> {
        // A stop request left on this thread by another run is not this run's.
        startlab_cc::startup::plugin::clear_halt();
        let net = network(&scenario);
        let mut q = EventQueue::default();
        let (drawn, drawn_groups) = arrival_flows(&scenario);
        let static_flows = scenario.flows.len();
        let mut specs = scenario.flows.clone();
        specs.extend(drawn);
        let mut groups: Vec<Option<u32>> = vec![None; static_flows];
        groups.extend(drawn_groups.into_iter().map(Some));
        // Group names: arrival processes, then user groups, then replays.
        let mut group_names: Vec<String> = scenario.arrivals.iter().map(|a| a.name.clone()).collect();
        let (na, nu) = (scenario.arrivals.len() as u32, scenario.users.len() as u32);
        group_names.extend(scenario.users.iter().map(|u| u.name.clone()));
        group_names.extend(scenario.replay.iter().map(|r| r.name.clone()));
        let mut extra_users = Vec::new();
        for (spec, user) in user_flows(&scenario) {
            groups.push(Some(na + user.group));
            extra_users.push((specs.len(), user));
            specs.push(spec);
        }
        let mut extra_apps = Vec::new();
        for (spec, app, j) in replay_flows(&scenario) {
            groups.push(Some(na + nu + j));
            extra_apps.push((specs.len(), app));
            specs.push(spec);
        }
        let mut extra_users = extra_users.into_iter().peekable();
        let mut extra_apps = extra_apps.into_iter().peekable();
        let mut flows = Vec::with_capacity(specs.len());
        let mut cross = Vec::new();
        let mut cross_paths = Vec::new();
        for (j, c) in scenario.cross.iter().enumerate() {
            let (src, dst) = net.ends(&c.ends);
            let path = net.path(src, dst).ok_or_else(|| BuildError {
                path: format!("cross[{j}]"),
                message: format!("no route from {} to {}", net.nodes[src as usize], net.nodes[dst as usize]),
            })?;
            cross_paths.push(path);
            cross.push(CrossState {
                src,
                dst,
                size: c.packet_size as u32,
                bits_ns: c.packet_size as u128 * 8 * 1_000_000_000,
                rate: c.rate.bps() as u128,
                start: Time(c.start.as_nanos()),
                stop: Time(c.stop.as_nanos()),
                k: 0,
                process: c.process,
                rng: matches!(c.process, CrossProcess::Poisson | CrossProcess::OnOff { .. }).then(|| rng::stream(scenario.seed, rng::Component::Cross, j as u64)),
                on_until: Time::ZERO,
                gaps: c.gaps.clone(),
            });
            let st = cross.last_mut().expect("just pushed");
            if let (CrossProcess::OnOff { on, .. }, Some(rng)) = (st.process, st.rng.as_mut()) {
                // The source starts in an on period of random length.
                st.on_until = st.start + exp_dur(rng, on.as_secs_f64());
            }
            if c.rate.bps() > 0 {
                q.push(Time(c.start.as_nanos()), Source::Cross(j as u32));
            }
        }
        let mut paths = Vec::new();
        for (i, f) in specs.iter().enumerate() {
            let (src, dst) = net.ends(&f.ends);
            let no_route = |a: u32, b: u32| BuildError {
                path: format!("flows[{i}]"),
                message: format!("no route from {} to {}", net.nodes[a as usize], net.nodes[b as usize]),
            };
            let fwd = net.path(src, dst).ok_or_else(|| no_route(src, dst))?;
            let rev = net.path(dst, src).ok_or_else(|| no_route(dst, src))?;
            paths.push((fwd, rev));
        }
        // Available rate of a flow: its bottleneck's rate minus the CBR load crossing it, shared
        // equally among the `[[flows]]` crossing it. A flow drawn by an arrival process counts
        // itself and those `[[flows]]`, not the other drawn flows (how many of them overlap is
        // random).
        let mut tcp_on = vec![0u64; net.channels.len()];
        for (fwd, _) in &paths[..static_flows] {
            for &c in fwd {
                tcp_on[c as usize] += 1;
            }
        }
        let mut cbr_on = vec![0f64; net.channels.len()];
        for (path, c) in cross_paths.iter().zip(&scenario.cross) {
            for &ch in path {
                cbr_on[ch as usize] += c.rate.bps() as f64 * c.process.duty();
            }
        }
        for (i, f) in specs.iter().enumerate() {
            let (src, dst) = net.ends(&f.ends);
            let (fwd, rev) = paths[i].clone();
            let t = &f.tcp;
            let data_size = t.mss + t.header;
            let base_rtt = fwd.iter().chain(&rev).fold(Dur::ZERO, |acc, &c| {
                let ch = &net.channels[c as usize];
                let bytes = if fwd.contains(&c) { data_size } else { t.header };
                acc + ch.delay + ch.rate.tx_time(bytes)
            });
            let bottleneck = *fwd
                .iter()
                .min_by_key(|&&c| (net.channels[c as usize].rate, c))
                .expect("a path between two distinct hosts has a channel");
            let bc = bottleneck as usize;
            let left = net.channels[bc].rate.bps() as f64 - cbr_on[bc];
            let sharing = tcp_on[bc] + u64::from(i >= static_flows);
            let available = (left > 0.0).then(|| left / sharing as f64);
            let app = f.app.as_ref().map(|a| {
                let mut sizes_rng = rng::stream(scenario.seed, rng::Component::AppSizes, i as u64);
                let mut think_rng = rng::stream(scenario.seed, rng::Component::AppThink, i as u64);
                let law = size_law(&a.response);
                let sizes: Vec<u64> = (0..a.count).map(|_| law.sample(&mut sizes_rng)).collect();
                // The offered load of one connection is E[response] / (think + transfer time);
                // neglecting the transfer time gives E[response]·8 / (load · rate).
                let mean_for_load = match a.think {
                    Think::Load(load) => law.mean() * 8.0 / (load * net.channels[bottleneck as usize].rate.bps() as f64),
                    _ => 0.0,
                };
                let draw = ThinkDraw::new(&a.think, mean_for_load);
                // The first request leaves when the connection opens; each later one after a think.
                let thinks: Vec<Dur> = (0..a.count).map(|k| if k == 0 { Dur::ZERO } else { draw.draw(&mut think_rng) }).collect();
                AppState::new(sizes, thinks, Vec::new(), a.request as u32)
            });
            let mut user = extra_users.next_if(|(at, _)| *at == i).map(|(_, u)| Box::new(u));
            let app = match (app, extra_apps.next_if(|(at, _)| *at == i)) {
                (Some(a), _) => Some(a),
                (None, Some((_, a))) => Some(a),
                (None, None) => user.as_mut().filter(|u| u.persistent).map(|u| {
                    let mut a = AppState::new(Vec::new(), Vec::new(), Vec::new(), scenario.users[u.group as usize].persistent.unwrap_or(0) as u32);
                    a.current = Some((u.size, Dur::ZERO));
                    a
                }),
            };
            let total = app.as_ref().filter(|a| a.current.is_none()).map(|a| a.sizes.iter().map(|s| s.div_ceil(t.mss) * t.mss).sum::<u64>());
            let (sender, receiver) = endpoints(&scenario, f, i, 0, total.or(f.size), app.is_some());
            let mut forced_drops = f.drops.clone();
            forced_drops.sort_unstable();
            forced_drops.dedup();
            let cc = sender.cc();
            let last_cc = (cc.cwnd(), cc.ssthresh().as_f64());
            flows.push(FlowState {
                name: f.name.clone(),
                src,
                dst,
                sender,
                receiver,
                stimer: TimerSlot::default(),
                rtimer: TimerSlot::default(),
                header: t.header as u32,
                bottleneck,
                base_rtt,
                available,
                forced_drops,
                m: FlowMeter { last_cc: (f64::NAN, last_cc.1), ..FlowMeter::default() },
                opened: Time::ZERO,
                app,
                conn: 0,
                user,
            });
            let mut start = Time(f.start.as_nanos());
            if f.start_jitter > Dur::ZERO {
                let mut rng = rng::stream(scenario.seed, rng::Component::FlowStart, i as u64);
                start += Dur(rng.random_range(0..=f.start_jitter.as_nanos()));
            }
            flows.last_mut().expect("just pushed").opened = start;
            q.push(start, Source::FlowStart(i as u32));
        }
        let qs = specs.iter().any(|f| f.startup.name() == "quick-start").then(|| {
            let spec = &scenario.quick_start;
            let participates: Vec<bool> = (0..net.nodes.len())
                .map(|v| !net.is_host[v] && spec.routers.as_ref().is_none_or(|names| names.contains(&net.nodes[v])))
                .collect();
            QsRouters {
                links: net.channels.iter().map(|ch| participates[ch.from as usize].then(|| QsLink::new(spec.window))).collect(),
                rng: (0..net.nodes.len())
                    .map(|v| participates[v].then(|| rng::stream(scenario.seed, rng::Component::QuickStartRouter, v as u64)))
                    .collect(),
                participates,
                share: spec.share,
            }
        });
        let interval = scenario.trace.interval;
        let nf = flows.len();
        let nc = net.channels.len();
        let ptrace = scenario.trace.packets.as_ref().map(|spec| {
            let mut channels = vec![false; nc];
            for (name, fwd, rev) in &spec.links {
                if let Some(k) = net.links.iter().position(|l| l == name) {
                    channels[2 * k] = *fwd;
                    channels[2 * k + 1] = *rev;
                }
            }
            let names = flows.iter().map(|f| f.name.as_str()).chain(scenario.cross.iter().map(|c| c.name.as_str()));
            Box::new(PacketTracing {
                sources: names.map(|n| spec.selects(n)).collect(),
                waiting: vec![Default::default(); nc],
                channels,
            })
        });
        Ok(Simulation {
            end: Time(scenario.duration.as_nanos()),
            now: Time::ZERO,
            event_limit: None,
            plugins: scenario.uses_plugins(),
            halted: startlab_cc::startup::plugin::halt_requested().then_some(Time::ZERO),
            q,
            arena: Arena::default(),
            flows,
            cross,
            traces: Traces::default(),
            gate_cwnd: Gate::new(interval, nf),
            gate_seq: Gate::new(interval, nf),
            gate_queue: Gate::new(interval, nc),
            stats: EngineStats::default(),
            violations: Vec::new(),
            finished: false,
            link_bits: Vec::new(),
            qs,
            reordering: net.channels.iter().any(|c| c.imp.as_ref().is_some_and(|i| i.reorders())),
            net,
            scenario,
            specs,
            groups,
            group_names,
            transfers: Vec::new(),
            transfer_busy: crate::metrics::BusyWindows::default(),
            ptrace,
            probe: Vec::new(),
        })
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }
    /// End of the run.
    pub fn end(&self) -> Time {
        self.end
    }
    /// True once the run reached its end (results are available).
    pub fn finished(&self) -> bool {
        self.finished
    }
    /// Engine counters.
    pub fn stats(&self) -> EngineStats {
        EngineStats { sim_time_ns: self.now.as_nanos(), ..self.stats }
    }
    /// The resolved scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Stop processing events once `limit` events were processed in all (`None`: no limit).
    /// A run stopped by the limit is not finished: [`Simulation::event_limit_reached`] tells.
    pub fn set_event_limit(&mut self, limit: Option<u64>) {
        self.event_limit = limit;
    }

    /// True when the event limit stopped the run before the time asked for.
    pub fn event_limit_reached(&self) -> bool {
        !self.finished && self.event_limit.is_some_and(|n| self.stats.events >= n)
    }

    /// Processes every event up to and including `until` (capped at the end of the run), or until
    /// the event limit is reached. Returns true when the run is finished.
    pub fn run_until(&mut self, until: Time) -> bool {
        if self.finished || self.halted.is_some() {
            return self.finished;
        }
        if self.plugins {
            startlab_cc::startup::plugin::clear_halt();
        }
        let limit = until.min(self.end);
        let budget = self.event_limit.unwrap_or(u64::MAX);
        while let Some(t) = self.q.peek_time() {
            if t > limit {
                break;
            }
            if self.stats.events >= budget {
                return false;
            }
            let (t, src) = self.q.pop().expect("peeked");
            if t < self.now {
                self.violations.push(format!("event time went back from {} to {}", self.now, t));
            }
            self.now = t;
            self.stats.events += 1;
            self.dispatch(src);
            if self.plugins && startlab_cc::startup::plugin::halt_requested() {
                self.halted = Some(t);
                return false;
            }
        }
        self.now = self.now.max(limit);
        if limit >= self.end || self.q.peek_time().is_none() {
            self.finish();
        }
        self.finished
    }

    /// Whether a plug-in registered at run time (a Python class) runs in this simulation: its
    /// driver must let the plug-in's hooks run on the thread that advances it.
    pub fn uses_plugins(&self) -> bool {
        self.plugins
    }

    /// When a plug-in asked to stop (`startlab_cc::startup::plugin::request_halt`): the time of
    /// the event it failed in (zero: while the simulation was built). A halted run is not
    /// finished and runs no further; its driver reports the plug-in's failure.
    pub fn halted(&self) -> Option<Time> {
        self.halted
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.now = self.end;
        let end = self.end;
        let trace_q = self.scenario.trace.queue;
        for (c, ch) in self.net.channels.iter_mut().enumerate() {
            let traces = &mut self.traces.queue;
            let gate = &mut self.gate_queue;
            let mut dequeued = dequeue_hook(self.ptrace.as_deref_mut(), &mut self.traces.packets, c as u32);
            ch.drain(end, |(t, p, b, avg)| {
                dequeued((t, p, b, avg));
                if trace_q && gate.pass(c, t) {
                    traces.time.push(t.as_secs_f64());
                    traces.link.push(c as u32);
                    traces.packets.push(p);
                    traces.bytes.push(b);
                    traces.red_avg.push(avg);
                }
            });
        }
        for ch in self.net.channels.iter_mut() {
            early_settle(ch, &mut self.flows, |_, _| Some(true));
        }
        self.link_bits = self.net.channels.iter_mut().map(|ch| ch.finish(end)).collect();
        self.traces.packets.sort();
        self.finished = true;
    }

    fn dispatch(&mut self, src: Source) {
        match src {
            Source::Channel(c) => {
                let ch = &mut self.net.channels[c as usize];
                let Some((pkt, next)) = ch.pop_arrival() else {
                    self.violations.push(format!("{}: an arrival event found no packet in flight", ch.name));
                    return;
                };
                if let Some((t, seq)) = next {
                    self.q.push_with_seq(t, seq, Source::Channel(c));
                }
                let to = ch.to;
                self.arrive(to, pkt);
            }
            Source::SenderTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.stimer.take(self.now) {
                    fl.sender.on_timer(self.now);
                    self.after_sender(f);
                }
            }
            Source::ReceiverTimer(f) => {
                let now = self.now;
                let fl = &mut self.flows[f as usize];
                if fl.rtimer.take(now) {
                    if let Some(ack) = fl.receiver.on_timer(now) {
                        self.send_ack(f, ack);
                    }
                    let fl = &mut self.flows[f as usize];
                    fl.rtimer.sync(&mut self.q, fl.receiver.next_timeout(), Source::ReceiverTimer(f));
                }
            }
            Source::FlowStart(f) => {
                let now = self.now;
                let fl = &mut self.flows[f as usize];
                if let Some(u) = fl.user.as_mut() {
                    u.k = 1;
                    u.began = now;
                }
                fl.sender.start(now);
                self.after_sender(f);
                if !self.specs[f as usize].tcp.handshake {
                    // Without a handshake the client asks at once (after its first think, for a
                    // replayed vector); with one, when the SYN reaches it (the request then
                    // travels with the SYN-ACK's timing, as after a real handshake the request
                    // follows the client's ACK).
                    if let Some(app) = self.flows[f as usize].app.as_ref() {
                        self.q.push(now + app.think(0), Source::Request(f));
                    }
                }
            }
            Source::Cross(j) => self.cross_emit(j),
            Source::Request(f) => self.send_request(f),
            Source::UserNext(f) => self.next_connection(f),
        }
    }

    /// The client of a request/response flow sends (or resends) its current request: one packet
    /// of `request` bytes, or for a replayed vector one packet per MSS of the request's bytes.
    fn send_request(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let (from, to, header, conn) = (fl.dst, fl.src, fl.header, fl.conn);
        let mss = fl.sender.cc().mss();
        let Some(app) = fl.app.as_mut() else { return };
        if !app.has(app.next) || app.answered > app.next {
            // Everything asked for, or the server already has this request (a late retry).
            return;
        }
        if !app.awaiting {
            app.awaiting = true;
            app.requested_at = now;
            if let Some(u) = fl.user.as_mut() {
                let s = fl.sender.stats();
                u.began = now;
                u.at_start = (s.packets_sent, s.retransmissions, s.timeouts, fl.m.dropped);
            }
        }
        let index = app.next as u64;
        let single = app.requests.is_empty();
        let bytes = app.request_bytes(app.next);
        let parts = if single { 1 } else { bytes.div_ceil(mss) };
        for part in 0..parts {
            let len = if single { bytes } else { (bytes - part * mss).min(mss) };
            // The part number rides in the (otherwise unused) ACK field of a request packet.
            let ack = Ack { ack: part, ..Ack::default() };
            let pkt = self.arena.alloc(Packet { kind: PktKind::Request, flow: f, dst: to, size: len as u32 + header, seq: index, len: 0, flags: 0, ack, ttl: INITIAL_IP_TTL, qs: None, conn });
            self.forward(from, pkt);
        }
    }

    fn cross_emit(&mut self, j: u32) {
        let c = &mut self.cross[j as usize];
        let (src, dst, size) = (c.src, c.dst, c.size);
        let mut seq = 0;
        if let CrossProcess::Train { packets, .. } = c.process {
            // The packet carries its record's index to the receiver.
            seq = self.probe.len() as u64;
            let k = c.k;
            self.probe.push(ProbeRecord { source: j, train: (k / packets as u64) as u32, index: (k % packets as u64) as u32, sent: self.now, received: None });
        }
        let gap = Dur((c.bits_ns / c.rate) as u64);
        let next = match (c.process, c.rng.as_mut()) {
            (CrossProcess::Train { packets, interval }, _) => {
                // Exact schedule: packet i of train t leaves at start + t·interval + i·gaps[t].
                c.k += 1;
                let (t, i) = ((c.k / packets as u64) as usize, c.k % packets as u64);
                match c.gaps.get(t) {
                    Some(g) => c.start + Dur(t as u64 * interval.as_nanos() + i * g.as_nanos()),
                    None => Time(u64::MAX), // the last train was sent
                }
            }
            (CrossProcess::Poisson, Some(rng)) => self.now + exp_dur(rng, gap.as_secs_f64()),
            (CrossProcess::OnOff { on, off }, Some(rng)) => {
                let mut next = self.now + gap;
                while next >= c.on_until {
                    // The on period ended: an off period, then the next on period.
                    next = c.on_until + exp_dur(rng, off.as_secs_f64());
                    c.on_until = next + exp_dur(rng, on.as_secs_f64());
                }
                next
            }
            _ => {
                // Exact schedule: packet k leaves at start + k * size / rate, no drift.
                c.k += 1;
                c.start + Dur((c.k as u128 * c.bits_ns / c.rate) as u64)
            }
        };
        if next < c.stop {
            self.q.push(next, Source::Cross(j));
        }
        let pkt = self.arena.alloc(Packet {
            kind: PktKind::Cross,
            flow: j,
            dst,
            size,
            seq,
            len: 0,
            flags: 0,
            ack: Ack::default(),
            ttl: INITIAL_IP_TTL,
            qs: None,
            conn: 0,
        });
        self.forward(src, pkt);
    }

    fn arrive(&mut self, node: u32, pkt: u32) {
        if self.arena.get(pkt).dst == node {
            self.deliver(pkt);
        } else {
            // A router (hosts never forward): one IP hop.
            let p = self.arena.get_mut(pkt);
            p.ttl = p.ttl.saturating_sub(1);
            if p.qs.is_some() {
                self.quick_start_hop(node, pkt);
            }
            self.forward(node, pkt);
        }
    }

    /// A Quick-Start router processes a Rate Request on the link it forwards it to (ALGORITHMS.md
    /// §10.1 RESOLVED): approve N iff `share·capacity − utilisation over the window − Σ rates
    /// approved in the window >= rate(N)`, else lower N to the largest code that fits (fresh nonce
    /// bits above it), else N = 0; QS TTL drops by one with the IP TTL. Non-participating routers
    /// leave the option untouched.
    fn quick_start_hop(&mut self, node: u32, pkt: u32) {
        let Some(qs) = self.qs.as_mut() else { return };
        if !qs.participates[node as usize] {
            return;
        }
        let p = self.arena.get_mut(pkt);
        let (Some(mut req), Some(c)) = (p.qs, self.net.routes.next(node, p.dst)) else { return };
        if req.code == 0 {
            return;
        }
        let capacity = self.net.channels[c as usize].rate.bps() as f64;
        let (Some(link), Some(rng)) = (qs.links[c as usize].as_mut(), qs.rng[node as usize].as_mut()) else { return };
        let allowed = qs_code_for(link.available(self.now, capacity, qs.share));
        let approved = req.process(allowed, rng.random::<u32>());
        if approved > 0 {
            link.approve(self.now, qs_rate_bps(approved));
        }
        p.qs = Some(req);
    }

    fn forward(&mut self, node: u32, pkt: u32) {
        // Only the header fields: copying the whole packet (with its ACK and SACK blocks) per hop
        // costs a memcpy call.
        let (dst, size, pflags, kind, flow, conn) = {
            let p = self.arena.get(pkt);
            (p.dst, p.size, p.flags, p.kind, p.flow, p.conn)
        };
        let Some(c) = self.net.routes.next(node, dst) else {
            // Paths are checked when the simulation is built; this is a bug if it happens.
            self.violations.push(format!("no route from node {node} to {}", dst));
            self.drop_packet(pkt);
            return;
        };
        let now = self.now;
        let seq = self.q.next_seq();
        let trace_q = self.scenario.trace.queue;
        // The packet trace: None when this channel is not traced, else whether this packet is.
        let nf = self.flows.len() as u32;
        let traced = self.ptrace.as_ref().filter(|p| p.channels[c as usize]).map(|p| {
            let source = if kind == PktKind::Cross { nf + flow } else { flow };
            p.sources[source as usize].then(|| {
                let q = self.arena.get(pkt);
                let seq = if kind == PktKind::Ack { q.ack.ack } else { q.seq };
                PacketRecord { kind: kind as u8, flow: source, seq, len: q.len, size, }
            })
        });
        let ch = &mut self.net.channels[c as usize];
        let traces = &mut self.traces.queue;
        let gate = &mut self.gate_queue;
        let mut record = |(t, pk, b, avg): (Time, u64, u64, f64)| {
            if trace_q && gate.pass(c as usize, t) {
                traces.time.push(t.as_secs_f64());
                traces.link.push(c);
                traces.packets.push(pk);
                traces.bytes.push(b);
                traces.red_avg.push(avg);
            }
        };
        {
            let mut dequeued = dequeue_hook(self.ptrace.as_deref_mut(), &mut self.traces.packets, c);
            ch.drain(now, |change| {
                dequeued(change);
                record(change);
            });
        }
        let before = ch.waiting_pkts();
        let ect = pflags & flags::ECT != 0;
        let offer = ch.offer(now, size, seq, pkt, ect, &mut record);
        if let Some(rec) = traced {
            let (queued, qp, qb) = (ch.waiting_pkts() > before, ch.waiting_pkts(), ch.waiting_bytes());
            let pt = self.ptrace.as_deref_mut().expect("traced");
            let out = &mut self.traces.packets;
            match (&offer, rec) {
                (Offer::Accepted { marked, .. }, rec) => {
                    if queued {
                        // Its dequeue is reported when the channel drains it.
                        pt.waiting[c as usize].push_back(rec);
                    }
                    if let Some(r) = rec {
                        out.push(now, c, PKT_ENQUEUE, &r, qp, qb);
                        if *marked {
                            out.push(now, c, PKT_MARK, &r, qp, qb);
                        }
                        if !queued {
                            out.push(now, c, PKT_DEQUEUE, &r, qp, qb);
                        }
                    }
                }
                (Offer::Dropped, Some(r)) => out.push(now, c, PKT_DROP, &r, qp, qb),
                (Offer::Lost, Some(r)) => out.push(now, c, PKT_LOST, &r, qp, qb),
                _ => {}
            }
        }
        match offer {
            Offer::Accepted { arrival, first, marked } => {
                if marked && pflags & flags::CE == 0 {
                    self.arena.get_mut(pkt).flags |= flags::CE;
                    if kind == PktKind::Data && conn == self.flows[flow as usize].conn {
                        self.flows[flow as usize].m.ecn_marks += 1;
                    }
                }
                let ch = &mut self.net.channels[c as usize];
                if first {
                    self.q.push_with_seq(arrival, seq, Source::Channel(c));
                }
                if let Some(link) = self.qs.as_mut().and_then(|qs| qs.links[c as usize].as_mut()) {
                    link.add(now, size as u64);
                }
                let occ = ch.waiting_pkts();
                if occ > before && !ch.early_watch.is_empty() {
                    if now > ch.early_next_end {
                        // Every rise held in the accumulator came before the earliest window
                        // ended: it counts for every watching flow; then the ended windows go.
                        early_settle(ch, &mut self.flows, |end, _| (now > end).then_some(true));
                    }
                    ch.early_acc = ch.early_acc.max(occ);
                }
            }
            Offer::Dropped => self.drop_packet(pkt),
            Offer::Lost => {
                if kind == PktKind::Data && conn == self.flows[flow as usize].conn {
                    self.flows[flow as usize].m.impairment_drops += 1;
                }
                self.drop_packet(pkt);
            }
        }
    }

    fn drop_packet(&mut self, pkt: u32) {
        let p = {
            let q = self.arena.get(pkt);
            Dropped { kind: q.kind, flow: q.flow, flags: q.flags, seq: q.seq, len: q.len, conn: q.conn }
        };
        self.stats.dropped_packets += 1;
        if p.kind != PktKind::Cross && p.conn != self.flows[p.flow as usize].conn {
            // A packet of the slot's earlier connection.
            if let (PktKind::Data, Some(u)) = (p.kind, self.flows[p.flow as usize].user.as_mut()) {
                u.past.2 += 1;
            }
            self.arena.free(pkt);
            return;
        }
        if p.kind == PktKind::Request {
            // The client's timer resends a lost request (it would have heard nothing back); one
            // timer for the request's lost parts.
            if let Some(app) = self.flows[p.flow as usize].app.as_mut() {
                if app.retry_at.is_none_or(|t| t <= self.now) {
                    app.retry_at = Some(self.now + REQUEST_RETRY);
                    self.q.push(self.now + REQUEST_RETRY, Source::Request(p.flow));
                }
            }
        }
        if p.kind == PktKind::Data {
            let fl = &mut self.flows[p.flow as usize];
            fl.m.dropped += 1;
            if p.flags & flags::RETRANSMIT != 0 {
                fl.m.dropped_retransmissions += 1;
            }
            if p.flags & flags::STARTUP != 0 {
                fl.m.dropped_startup += 1;
            }
            if p.flags & flags::EARLY != 0 {
                fl.m.early_losses += 1;
            }
            self.seq_event(p.flow, SEQ_DROPPED, p.seq, p.len);
        }
        self.arena.free(pkt);
    }

    #[inline]
    fn seq_event(&mut self, flow: u32, kind: u8, seq: u64, len: u32) {
        if self.scenario.trace.seq && self.gate_seq.pass(flow as usize, self.now) {
            let t = &mut self.traces.seq;
            t.time.push(self.now.as_secs_f64());
            t.flow.push(flow);
            t.event.push(kind);
            t.seq.push(seq);
            t.len.push(len);
        }
    }

    fn deliver(&mut self, pkt: u32) {
        let now = self.now;
        if self.arena.get(pkt).kind == PktKind::Ack {
            // The common case copies only the ACK, not the whole packet.
            let (flow, ack, conn) = {
                let p = self.arena.get(pkt);
                (p.flow, p.ack, p.conn)
            };
            self.arena.free(pkt);
            if conn == self.flows[flow as usize].conn {
                self.on_ack(flow, &ack);
            }
            return;
        }
        let p = *self.arena.get(pkt);
        self.arena.free(pkt);
        if p.kind != PktKind::Cross {
            let fl = &mut self.flows[p.flow as usize];
            if p.conn != fl.conn {
                // A packet of the slot's earlier connection: that socket is closed.
                if p.kind == PktKind::Data {
                    self.stats.delivered_packets += 1;
                    if let Some(u) = fl.user.as_mut() {
                        u.past.1 += 1;
                    }
                }
                return;
            }
        }
        match p.kind {
            PktKind::Cross => {
                if matches!(self.cross[p.flow as usize].process, CrossProcess::Train { .. }) {
                    self.probe[p.seq as usize].received = Some(self.now);
                }
            }
            PktKind::Data => {
                self.stats.delivered_packets += 1;
                let fl = &mut self.flows[p.flow as usize];
                fl.m.delivered_pkts += 1;
                if let Some(req) = &p.qs {
                    fl.receiver.on_quick_start_request(req, p.ttl);
                }
                let (ce, cwr) = (p.flags & flags::CE != 0, p.flags & flags::CWR != 0);
                let ack = fl.receiver.on_segment_ecn(now, p.seq, p.len, ce, cwr);
                fl.rtimer.sync(&mut self.q, fl.receiver.next_timeout(), Source::ReceiverTimer(p.flow));
                let delivered = fl.receiver.delivered();
                let mut user_done = None;
                if let Some(app) = fl.app.as_mut() {
                    if app.answered > app.next && delivered >= app.end {
                        // The whole response is at the client: the exchange is done.
                        let took = now - app.requested_at;
                        app.next += 1;
                        app.awaiting = false;
                        if fl.user.is_some() {
                            user_done = Some(took);
                        } else {
                            app.done.push((app.requested_at.as_secs_f64(), took.as_secs_f64()));
                            if app.has(app.next) {
                                self.q.push(now + app.think(app.next), Source::Request(p.flow));
                            }
                        }
                    }
                }
                if let Some(ack) = ack {
                    self.send_ack(p.flow, ack);
                }
                if let Some(took) = user_done {
                    self.user_response_done(p.flow, took);
                }
            }
            PktKind::Syn => {
                let receiver = &mut self.flows[p.flow as usize].receiver;
                if let Some(req) = &p.qs {
                    receiver.on_quick_start_request(req, p.ttl);
                }
                let ack = receiver.on_syn(p.flags & (flags::ECE | flags::CWR) == flags::ECE | flags::CWR);
                self.send_ack(p.flow, ack);
                let fl = &self.flows[p.flow as usize];
                if let Some(a) = fl.app.as_ref().filter(|a| a.next == 0 && !a.awaiting) {
                    self.q.push(now + a.think(0), Source::Request(p.flow));
                }
            }
            PktKind::Ack => self.on_ack(p.flow, &p.ack),
            PktKind::Request => {
                // The server's application answers request `seq` (a resent copy of a request
                // already answered is ignored).
                let fl = &mut self.flows[p.flow as usize];
                if let Some(app) = fl.app.as_mut() {
                    if p.seq as usize == app.answered && !app.requests.is_empty() {
                        // A request of several packets is answered once all its parts are in.
                        let mss = fl.sender.cc().mss();
                        if app.parts.is_empty() {
                            app.parts = vec![false; app.request_bytes(app.answered).div_ceil(mss) as usize];
                        }
                        if let Some(got) = app.parts.get_mut(p.ack.ack as usize) {
                            *got = true;
                        }
                        if !app.parts.iter().all(|&g| g) {
                            return;
                        }
                        app.parts.clear();
                    }
                    if p.seq as usize == app.answered {
                        let bytes = app.size(app.answered);
                        app.answered += 1;
                        let mss = fl.sender.cc().mss();
                        app.end += bytes.div_ceil(mss) * mss;
                        fl.sender.push(now, bytes);
                        self.after_sender(p.flow);
                    }
                }
            }
        }
    }

    fn send_ack(&mut self, f: u32, ack: Ack) {
        let fl = &mut self.flows[f as usize];
        if !ack.syn_ack {
            if ack.ack < fl.m.last_ack_sent {
                self.violations.push(format!("flow {}: the receiver's cumulative ACK went back from {} to {}", fl.name, fl.m.last_ack_sent, ack.ack));
            }
            fl.m.last_ack_sent = fl.m.last_ack_sent.max(ack.ack);
        }
        let (from, to, mut size, conn) = (fl.dst, fl.src, fl.header, fl.conn);
        if ack.qs.is_some() {
            size += QS_OPTION_BYTES;
        }
        let pkt = self.arena.alloc(Packet { kind: PktKind::Ack, flow: f, dst: to, size, seq: 0, len: 0, flags: 0, ack, ttl: INITIAL_IP_TTL, qs: None, conn });
        self.forward(from, pkt);
    }

    fn on_ack(&mut self, f: u32, ack: &Ack) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        // A reordering impairment may deliver an older ACK after a newer one (the sender ignores
        // it); the receiver's own emissions are checked in `send_ack` either way.
        if !ack.syn_ack && !self.reordering {
            if ack.ack < fl.m.last_ack {
                self.violations.push(format!("flow {}: cumulative ACK went back from {} to {}", fl.name, fl.m.last_ack, ack.ack));
            }
            fl.m.last_ack = fl.m.last_ack.max(ack.ack);
        }
        let newly = fl.sender.on_ack(now, ack);
        if newly > 0 {
            let una = fl.sender.snd_una();
            // Time to 90 % of the available rate: bytes newly ACKed over the last base RTT.
            if let (None, Some(avail), Some(t0)) = (fl.m.t90, fl.available, fl.sender.first_data_time()) {
                let rtt = fl.base_rtt;
                let w = &mut fl.m.window;
                if w.is_empty() {
                    w.push_back((t0, 0));
                }
                w.push_back((now, una));
                let from = Time(now.as_nanos().saturating_sub(rtt.as_nanos()));
                while w.len() >= 2 && w[1].0 <= from {
                    w.pop_front();
                }
                if now.as_nanos() >= t0.as_nanos() + rtt.as_nanos() && w[0].0 <= from {
                    let rate = (una - w[0].1) as f64 * 8.0 / rtt.as_secs_f64();
                    if rate >= 0.9 * avail {
                        fl.m.t90 = Some(now);
                        w.clear();
                        w.shrink_to_fit();
                    }
                }
            }
            self.seq_event(f, SEQ_ACKED, una, newly as u32);
            let fl = &self.flows[f as usize];
            if fl.user.as_ref().is_some_and(|u| !u.persistent && !u.scheduled) && fl.sender.completed_at().is_some() {
                self.user_connection_done(f);
            }
        }
        self.after_sender(f);
    }

    /// A new-connection user's transfer is complete (its last byte ACKed): the next one starts
    /// after a think time, on a new connection of the same slot.
    fn user_connection_done(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let Some(u) = fl.user.as_mut() else { return };
        u.scheduled = true;
        if let Some((size, think)) = u.draw_next(&self.scenario.users[u.group as usize], now) {
            u.pending = (size, think);
            self.q.push(now + think, Source::UserNext(f));
        }
    }

    /// A new-connection user starts its next transfer: the slot's finished connection becomes a
    /// transfer row, and a fresh sender and receiver (a new connection: handshake, initial window,
    /// startup from the beginning) take its place.
    fn next_connection(&mut self, f: u32) {
        let now = self.now;
        let bottleneck = self.flows[f as usize].bottleneck as usize;
        early_settle(&mut self.net.channels[bottleneck], &mut self.flows, |_, g| (g == f).then_some(true));
        let row = self.transfer_row(f as usize, now, false);
        if let Some(r) = &row {
            self.transfer_busy.add_row(r, now);
        }
        self.transfers.extend(row);
        let i = f as usize;
        let fl = &mut self.flows[i];
        let Some(u) = fl.user.as_mut() else { return };
        let s = fl.sender.stats();
        u.past.0 += s.packets_sent;
        u.past.1 += fl.m.delivered_pkts;
        u.past.2 += fl.m.dropped;
        u.k += 1;
        u.began = now;
        u.scheduled = false;
        (u.size, u.think_before) = u.pending;
        let size = u.size.max(1);
        fl.conn += 1;
        self.specs[i].size = Some(size);
        let (sender, receiver) = endpoints(&self.scenario, &self.specs[i], i, fl.conn, Some(size), false);
        let ssthresh = sender.cc().ssthresh().as_f64();
        fl.sender = sender;
        fl.receiver = receiver;
        fl.stimer = TimerSlot::default();
        fl.rtimer = TimerSlot::default();
        fl.m = FlowMeter { last_cc: (f64::NAN, ssthresh), ..FlowMeter::default() };
        fl.opened = now;
        let fl = &mut self.flows[i];
        fl.sender.start(now);
        self.after_sender(f);
    }

    /// A persistent user's response is complete: its transfer row, then the next request after a
    /// think time (unless the group stops).
    fn user_response_done(&mut self, f: u32, took: Dur) {
        let now = self.now;
        let bottleneck = self.flows[f as usize].bottleneck as usize;
        early_settle(&mut self.net.channels[bottleneck], &mut self.flows, |_, g| (g == f).then_some(false));
        let row = self.transfer_row(f as usize, now, false).map(|mut r| {
            r.completion_time = Some(took.as_secs_f64());
            r.completed = true;
            r
        });
        if let Some(r) = &row {
            self.transfer_busy.add_row(r, now);
        }
        self.transfers.extend(row);
        let fl = &mut self.flows[f as usize];
        let (Some(u), Some(app)) = (fl.user.as_mut(), fl.app.as_mut()) else { return };
        match u.draw_next(&self.scenario.users[u.group as usize], now) {
            Some((size, think)) => {
                u.k += 1;
                u.size = size;
                u.think_before = think;
                app.current = Some((size, think));
                self.q.push(now + think, Source::Request(f));
            }
            None => app.current = None,
        }
    }

    /// After any sender event: transmit what the window allows, re-arm its timer, trace cwnd.
    fn after_sender(&mut self, f: u32) {
        let now = self.now;
        loop {
            let fl = &mut self.flows[f as usize];
            let Some(seg) = fl.sender.poll_transmit(now) else { break };
            let mut fl_flags = 0;
            if fl.sender.cc().entered_ca().is_none() && fl.sender.completed_at().is_none() {
                fl_flags |= flags::STARTUP;
            }
            let (kind, mut size) = match seg.kind {
                SegmentKind::Syn => (PktKind::Syn, fl.header),
                SegmentKind::Data => (PktKind::Data, seg.len + fl.header),
            };
            if seg.qs.is_some() {
                size += QS_OPTION_BYTES;
            }
            for (on, bit) in [(seg.ect, flags::ECT), (seg.cwr, flags::CWR), (seg.ece, flags::ECE)] {
                if on {
                    fl_flags |= bit;
                }
            }
            let mut forced = false;
            if kind == PktKind::Data {
                if fl.m.early_end.is_none() {
                    let t0 = fl.sender.first_data_time().unwrap_or(now);
                    let end = t0 + Dur(fl.base_rtt.as_nanos() * self.scenario.measure.early_rtts);
                    fl.m.early_end = Some(end);
                    let bottleneck = fl.bottleneck;
                    let ch = &mut self.net.channels[bottleneck as usize];
                    ch.drain(now, dequeue_hook(self.ptrace.as_deref_mut(), &mut self.traces.packets, bottleneck));
                    // Earlier rises are not this flow's.
                    early_flush(ch);
                    fl.m.early_peak = ch.waiting_pkts();
                    ch.early_watch.push((end, f, fl.m.early_peak));
                    ch.early_next_end = ch.early_next_end.min(end);
                }
                if fl.m.early_end.is_some_and(|e| now <= e) {
                    fl_flags |= flags::EARLY;
                }
                fl.m.data_sent += 1;
                if seg.retransmit {
                    fl_flags |= flags::RETRANSMIT;
                }
                if fl_flags & flags::STARTUP != 0 {
                    fl.m.sent_startup += 1;
                }
                if fl.forced_drops.get(fl.m.next_forced_drop) == Some(&fl.m.data_sent) {
                    fl.m.next_forced_drop += 1;
                    forced = true;
                }
                self.stats.sent_packets += 1;
            }
            let src = fl.src;
            let pkt = self.arena.alloc(Packet {
                kind,
                flow: f,
                dst: fl.dst,
                size,
                seq: seg.seq,
                len: seg.len,
                flags: fl_flags,
                ack: Ack::default(),
                ttl: INITIAL_IP_TTL,
                qs: seg.qs,
                conn: fl.conn,
            });
            if kind == PktKind::Data {
                let ev = if seg.retransmit { SEQ_RETRANSMITTED } else { SEQ_SENT };
                self.seq_event(f, ev, seg.seq, seg.len);
            }
            if forced {
                self.drop_packet(pkt);
            } else {
                self.forward(src, pkt);
            }
        }
        let fl = &mut self.flows[f as usize];
        fl.stimer.sync(&mut self.q, fl.sender.next_timeout(), Source::SenderTimer(f));
        let cc = fl.sender.cc();
        if fl.m.acked_at_su.is_none() && cc.entered_ca().is_some() {
            fl.m.acked_at_su = Some(fl.sender.snd_una());
            fl.m.sent_at_su = Some(fl.sender.snd_max());
        }
        let now_cc = (cc.cwnd(), cc.ssthresh().as_f64());
        if now_cc.0.is_nan() || now_cc.0 <= 0.0 {
            self.violations.push(format!("flow {}: cwnd {} is not positive", fl.name, now_cc.0));
        }
        let cause = if cc.reductions() == fl.m.reductions {
            0
        } else {
            fl.m.reductions = cc.reductions();
            match cc.last_reduction().map(|r| r.kind) {
                Some(CongestionKind::Timeout) => 2,
                Some(CongestionKind::Ecn) => 3,
                _ => 1,
            }
        };
        if now_cc != fl.m.last_cc {
            fl.m.last_cc = now_cc;
            if self.scenario.trace.cwnd && self.gate_cwnd.pass(f as usize, now) {
                let t = &mut self.traces.cwnd;
                t.time.push(now.as_secs_f64());
                t.flow.push(f);
                t.cwnd.push(now_cc.0);
                t.ssthresh.push(now_cc.1);
                t.cause.push(cause);
            }
        }
    }

    /// Checks the conservation invariants: per link, arrivals = drops + delivered + in the link;
    /// per flow, data packets sent = delivered + dropped + in the network (counted independently by
    /// walking every link); plus every violation recorded during the run (ACKs going back, time
    /// going back, cwnd not positive).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut errors = self.violations.clone();
        let mut in_net = vec![0u64; self.flows.len()];
        for ch in &self.net.channels {
            let s = &ch.stats;
            if s.arrivals != s.drops + s.delivered + ch.in_flight() as u64 {
                errors.push(format!("{}: {} arrivals != {} drops + {} delivered + {} in the link", ch.name, s.arrivals, s.drops, s.delivered, ch.in_flight()));
            }
            if s.impairment_drops > s.drops {
                errors.push(format!("{}: {} impairment drops > {} drops", ch.name, s.impairment_drops, s.drops));
            }
            for p in ch.packets_in_flight() {
                let p = self.arena.get(p);
                if p.kind == PktKind::Data {
                    in_net[p.flow as usize] += 1;
                }
            }
        }
        for (i, fl) in self.flows.iter().enumerate() {
            // A user's slot: its earlier connections' packets too.
            let past = fl.user.as_ref().map_or((0, 0, 0), |u| u.past);
            let sent = fl.sender.stats().packets_sent + past.0;
            let (delivered, dropped) = (fl.m.delivered_pkts + past.1, fl.m.dropped + past.2);
            if sent != delivered + dropped + in_net[i] {
                errors.push(format!("flow {}: {sent} sent != {delivered} delivered + {dropped} dropped + {} in flight", fl.name, in_net[i]));
            }
            if fl.receiver.delivered() < fl.sender.snd_una() {
                errors.push(format!("flow {}: sender saw {} bytes ACKed but the receiver has only {}", fl.name, fl.sender.snd_una(), fl.receiver.delivered()));
            }
            if let (Some(size), Some(_)) = (self.specs[i].size, fl.sender.completed_at()) {
                if fl.receiver.delivered() != size {
                    errors.push(format!("flow {}: completed but the receiver got {} of {size} bytes", fl.name, fl.receiver.delivered()));
                }
            }
        }
        if self.arena.live() as u64 != self.net.channels.iter().map(|c| c.in_flight() as u64).sum::<u64>() {
            errors.push(format!("{} packets alive in the arena but not in any link", self.arena.live()));
        }
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
    }
}
