//! Building a simulation from a scenario: network, flows, workloads, cross traffic, traces.

use super::*;

impl Simulation {
    /// Builds a simulation; fails only for scenarios whose network cannot carry a flow.
    pub fn new(scenario: Scenario) -> Result<Simulation, BuildError> {
        // A stop request left on this thread by another run is not this run's.
        startlab_cc::startup::plugin::clear_halt();
        let net = network(&scenario);
        let mut q = EventQueue::default();
        // Queue disciplines with a periodic update (PIE, DualPI2) run it from the start, busy or
        // idle.
        for (c, ch) in net.channels.iter().enumerate() {
            if let Some(t) = ch.aqm_next_timer() {
                q.push(t, Source::QueueTimer(c as u32));
            }
        }
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
        let mut warnings: Vec<String> = Vec::new();
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
            if let Some(w) = l4s_path_warning(&net, f, &fwd, groups[i].map(|g| group_names[g as usize].as_str())) {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
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
            let quic = f.quic.as_ref().map(|q| Box::new(quic::quic_ends(f, q)));
            let cc = quic.as_ref().map_or(sender.cc(), |q| q.server.sender().controller());
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
                quic,
            });
            let mut start = Time(f.start.as_nanos());
            if f.start_jitter > Dur::ZERO {
                let mut rng = rng::stream(scenario.seed, rng::Component::FlowStart, i as u64);
                start += Dur(rng.random_range(0..=f.start_jitter.as_nanos()));
            }
            flows.last_mut().expect("just pushed").opened = start;
            q.push(start, Source::FlowStart(i as u32));
        }
        let qs = specs.iter().any(|f| f.startup.decl().router_approval).then(|| {
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
            pcap: None,
            pcap_written: Vec::new(),
            qlog: None,
            qlog_written: Vec::new(),
            probe: Vec::new(),
            warnings,
        })
    }
}

/// The warning for flow `f` (of arrival, user or replay group `group`, if any) when it sends ECT(1)
/// (`tcp.ecn = "l4s"`) on a data path `fwd` without an L4S-aware queue (`QueueDecl::l4s`, RFC 9330
/// §2): allowed, its packets are marked or dropped as an ECT(0) flow's are, but it is told.
fn l4s_path_warning(net: &Network, f: &FlowSpec, fwd: &[u32], group: Option<&str>) -> Option<String> {
    if f.tcp.ecn != EcnSpec::L4s {
        return None;
    }
    let kind = |c: u32| net.channels[c as usize].queue_kind();
    if fwd.iter().any(|&c| startlab_scenario::queues::decl(kind(c)).is_some_and(|d| d.l4s)) {
        return None;
    }
    let queues: Vec<String> = fwd.iter().map(|&c| format!("{} {}", net.channels[c as usize].name, kind(c))).collect();
    let who = group.map_or_else(|| format!("flow {:?}", f.name), |g| format!("the flows of {g:?}"));
    Some(format!(
        "{who}: tcp.ecn = \"l4s\" on a path with no L4S-aware queue (no dualpi2; queues on its data path: {}): its ECT(1) packets are marked or dropped as classic ECN-capable ones",
        queues.join(", ")
    ))
}
