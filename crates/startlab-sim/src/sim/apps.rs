//! Workload state: request/response applications, closed-loop users, flow arrivals and replayed
//! connection vectors, the flows they open and the events that drive them.

use super::*;

/// A request/response application: its exchanges drawn at build time (`[[flows]]` apps), read
/// from a vector file (`[[replay]]`), or drawn one at a time (persistent `[[users]]`).
pub(crate) struct AppState {
    /// Response sizes (bytes) of every exchange; empty for a user (see `current`).
    pub sizes: Vec<u64>,
    /// Think time before each request.
    pub(super) thinks: Vec<Dur>,
    /// Request bytes of each exchange (`[[replay]]`); empty: `request` for every exchange.
    pub(super) requests: Vec<u64>,
    /// Request size on the wire when `requests` is empty.
    pub(super) request: u32,
    /// A user's current exchange: (response bytes, think before its request).
    pub(super) current: Option<(u64, Dur)>,
    /// The exchange in progress or next.
    pub(super) next: usize,
    /// Requests the server has answered.
    pub(super) answered: usize,
    /// The current request has left the client (a resend keeps its time).
    pub awaiting: bool,
    /// When its request (first copy) left the client.
    pub(super) requested_at: Time,
    /// The receiver has the whole response once it has delivered this many bytes.
    pub(super) end: u64,
    /// The client's retry timer for a lost request is set for this time.
    pub(super) retry_at: Option<Time>,
    /// Parts of request `answered` the server has (a request longer than one MSS travels as
    /// several packets).
    pub(super) parts: Vec<bool>,
    /// (request time, response time) of each finished exchange, s (users stream rows instead).
    pub done: Vec<(f64, f64)>,
}

impl AppState {
    pub(super) fn new(sizes: Vec<u64>, thinks: Vec<Dur>, requests: Vec<u64>, request: u32) -> AppState {
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
    pub(super) fn has(&self, k: usize) -> bool {
        self.current.is_some() || k < self.sizes.len()
    }
    /// Request bytes of exchange `k`.
    pub(super) fn request_bytes(&self, k: usize) -> u64 {
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
    pub(super) sizes: rand_pcg::Pcg64,
    pub(super) thinks: rand_pcg::Pcg64,
    pub(super) law: workload::SizeDist,
    pub(super) think: ThinkDraw,
    /// The current transfer: its size, when it began, the think before it.
    pub size: u64,
    pub began: Time,
    pub think_before: Dur,
    /// The next transfer is scheduled (new-connection users): its size and think time.
    pub scheduled: bool,
    pub(super) pending: (u64, Dur),
    /// Earlier connections' packets: sent, delivered, dropped (for the conservation check).
    pub past: (u64, u64, u64),
    /// A persistent user's sender counters when the current transfer began (packets sent,
    /// retransmissions, timeouts, drops).
    pub at_start: (u64, u64, u64, u64),
    /// What the user's last connection left for the next on the same path (Careful Resume's
    /// saved CC parameters, RFC 9959 §3.1); `None` until a connection of an algorithm that keeps
    /// such state has ended.
    pub(super) memory: Option<startlab_cc::startup::PathMemory>,
}

impl UserState {
    /// The next transfer, if the user starts one at `now + think` (before the group's stop and
    /// within its transfer limit): (size, think).
    pub(super) fn draw_next(&mut self, spec: &startlab_scenario::UserSpec, now: Time) -> Option<(u64, Dur)> {
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
    pub(super) law: Think,
    /// Exponential laws: the mean, s.
    pub(super) mean: f64,
    /// Size laws over nanoseconds.
    pub(super) sampler: Option<workload::SizeDist>,
}

impl ThinkDraw {
    /// `mean_for_load`: the mean of `Think::Load`'s exponential law.
    pub(super) fn new(law: &Think, mean_for_load: f64) -> ThinkDraw {
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
    pub(super) fn draw(&self, rng: &mut rand_pcg::Pcg64) -> Dur {
        match (&self.law, &self.sampler) {
            (Think::Fixed(d), _) => *d,
            (Think::Uniform { min, max }, _) => Dur(rng.random_range(min.as_nanos()..=max.as_nanos())),
            (_, Some(law)) => Dur(law.sample(rng)),
            _ => exp_dur(rng, self.mean),
        }
    }
}

/// The client's retry time for a lost request (RFC 6298's initial RTO).
pub(super) const REQUEST_RETRY: Dur = Dur::from_secs(1);

/// An exponential duration of mean `mean`, from a uniform draw in (0, 1].
pub(super) fn exp_dur(rng: &mut rand_pcg::Pcg64, mean: f64) -> Dur {
    Dur::from_secs_f64(-mean * (1.0 - rng.random::<f64>()).ln())
}

/// Draws the flows of every `[[arrivals]]` process from the seed: Poisson arrival times, then per
/// flow its size, hosts and startup algorithm, each from its own stream (so changing, say, the size
/// law leaves the arrival times as they were).
pub(super) fn arrival_flows(scenario: &Scenario) -> (Vec<FlowSpec>, Vec<u32>) {
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
                quic: None,
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
pub(super) fn pick_ends(rule: &ArrivalEnds, scenario: &Scenario, ends: &mut rand_pcg::Pcg64) -> Ends {
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
pub(super) fn pick_startup(mix: &[(StartupSpec, f64)], u: f64) -> StartupSpec {
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
pub(super) fn user_flows(scenario: &Scenario) -> Vec<(FlowSpec, UserState)> {
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
                memory: None,
            };
            // The first transfer starts one think time after the group's start.
            let (size, think) = state.draw_next(u, Time(u.start.as_nanos())).unwrap_or((0, Dur(u64::MAX / 4)));
            state.size = size;
            state.think_before = think;
            let spec = FlowSpec {
                name: format!("{}/{k}", u.name),
                ends: flow_ends,
                tcp: u.tcp.clone(),
                quic: None,
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
pub(super) fn replay_flows(scenario: &Scenario) -> Vec<(FlowSpec, AppState, u32)> {
    let mut out = Vec::new();
    for (j, r) in scenario.replay.iter().enumerate() {
        for c in &r.connections {
            let spec = FlowSpec {
                name: format!("{}-{}", r.name, c.id),
                ends: Ends::Dumbbell { from: c.rtt_class, to: c.rtt_class, reverse: r.reverse },
                tcp: r.tcp.clone(),
                quic: None,
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
pub(super) fn size_law(s: &SizeSpec) -> workload::SizeDist {
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
pub(super) fn graph_router(g: &startlab_scenario::Graph, host: usize) -> Option<usize> {
    let mut it = g.links.iter().filter_map(|l| match l.between {
        [x, y] if x == host => Some(y),
        [x, y] if y == host => Some(x),
        _ => None,
    });
    let first = it.next()?;
    it.next().is_none().then_some(first)
}

impl Simulation {
    /// The client of a request/response flow sends (or resends) its current request: one packet
    /// of `request` bytes, or for a replayed vector one packet per MSS of the request's bytes.
    pub(super) fn send_request(&mut self, f: u32) {
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
            let pkt = self.arena.alloc_with_ack(Packet { kind: PktKind::Request, flow: f, dst: to, size: len as u32 + header, seq: index, len: 0, flags: 0, ttl: INITIAL_IP_TTL, qs: None, conn }, ack);
            self.forward(from, pkt);
        }
    }

    /// A new-connection user's transfer is complete (its last byte ACKed): the next one starts
    /// after a think time, on a new connection of the same slot.
    pub(super) fn user_connection_done(&mut self, f: u32) {
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
    pub(super) fn next_connection(&mut self, f: u32) {
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
        // The finished connection's saved CC parameters go to the next one on the path: the user
        // keeps its two hosts, so the user is the path (RFC 9959 §2.2's Remote Endpoint).
        if let Some(m) = fl.sender.cc().startup_retained() {
            u.memory = Some(m);
        }
        let memory = u.memory;
        u.k += 1;
        u.began = now;
        u.scheduled = false;
        (u.size, u.think_before) = u.pending;
        let size = u.size.max(1);
        fl.conn += 1;
        self.specs[i].size = Some(size);
        let (mut sender, receiver) = endpoints(&self.scenario, &self.specs[i], i, fl.conn, Some(size), false);
        if let Some(m) = memory {
            sender.seed_startup(match m {
                startlab_cc::startup::PathMemory::Save(p) => Some(p),
                startlab_cc::startup::PathMemory::Forget => None,
            });
        }
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
    pub(super) fn user_response_done(&mut self, f: u32, took: Dur) {
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
}
