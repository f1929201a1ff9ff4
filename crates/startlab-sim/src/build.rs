//! Turns a resolved scenario into nodes, channels, routes, flows and cross sources.

use crate::aqm::codel::{CoDelParams, CoDelQueue};
use crate::aqm::dualpi2::{DualPi2, DualPi2Params};
use crate::aqm::fq_codel::{FqCoDel, FqCoDelParams};
use crate::aqm::pie::{PieParams, PieQueue};
use crate::aqm::Qdisc;
use crate::impair::Impairment;
use crate::net::{Channel, Routes};
use crate::red::{Red, RedParams};
use crate::rng;
use startlab_scenario::{Ends, QueueLimit, QueueSpec, Scenario, Topology};
use startlab_units::{Dur, Rate};

/// Bytes of the "typical packet" whose transmission time is RED's idle-decay unit `s`.
const RED_IDLE_PACKET_BYTES: u64 = 1500;

/// The static network.
pub struct Network {
    /// Node names.
    pub nodes: Vec<String>,
    /// Link directions.
    pub channels: Vec<Channel>,
    /// Routes.
    pub routes: Routes,
    /// Dumbbell: (sender, receiver) node of each pair.
    pub pair_hosts: Vec<(u32, u32)>,
    /// Dumbbell cross hosts, one pair per cross source.
    pub cross_hosts: Vec<(u32, u32)>,
    /// Per node: a host (ends paths, never forwards) rather than a router.
    pub is_host: Vec<bool>,
    /// Link names; link `k` is channels `2k` (forward) and `2k + 1` (reverse).
    pub links: Vec<String>,
}


#[expect(clippy::too_many_arguments, reason = "a link is its two ends, rate, delay and queue (and the seed of RED's streams); a struct would only rename them")]
fn duplex(ch: &mut Vec<Channel>, links: &mut Vec<String>, name: &str, names: &[String], a: u32, b: u32, rate: Rate, delay: Dur, q: &QueueSpec, seed: u64) {
    // Channel 2k is link k's forward direction (first end -> second), 2k + 1 its reverse.
    links.push(name.to_string());
    for (x, y) in [(a, b), (b, a)] {
        let label = format!("{name}:{}->{}", names[x as usize], names[y as usize]);
        let index = ch.len() as u64;
        let mut channel = Channel::new(label, x, y, rate, delay, q.limit());
        if let QueueSpec::Red { min_th, max_th, max_p, w_q, gentle, ecn, ns2_wait, .. } = *q {
            // `s` of the idle decay: the transmission time of a 1500-byte packet at the link rate
            // (docs/QUEUES.md), in packet and byte mode alike.
            let s = rate.tx_time(RED_IDLE_PACKET_BYTES);
            let params = RedParams { w_q, min_th, max_th, max_p, gentle, ns2_wait, ecn, s };
            channel = channel.with_red(Red::new(params), rng::stream(seed, rng::Component::Red, index));
        }
        if let Some(qdisc) = qdisc(q, seed, index) {
            channel = channel.with_qdisc(qdisc, rng::stream(seed, rng::Component::Aqm, index));
        }
        ch.push(channel);
    }
}

/// The dequeue-time discipline of a queue kind that has one (aqm/), for channel `index`.
pub fn qdisc(q: &QueueSpec, seed: u64, index: u64) -> Option<Qdisc> {
    let limit = match q.limit() {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bytes(_) => u64::MAX,
    };
    match *q {
        QueueSpec::Droptail { .. } | QueueSpec::Red { .. } => None,
        QueueSpec::Codel { target, interval, mtu, ecn, .. } => Some(Qdisc::CoDel(CoDelQueue::new(CoDelParams { target, interval, mtu, ecn }, limit))),
        QueueSpec::FqCodel { target, interval, mtu, ecn, flows, quantum, memory_limit, drop_batch, .. } => {
            // The hash salt: fixed per channel and seed, so flows collide the same way every run.
            let salt = seed.rotate_left(17) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            Some(Qdisc::FqCoDel(Box::new(FqCoDel::new(FqCoDelParams {
                codel: CoDelParams { target, interval, mtu, ecn },
                flows: flows as u32,
                quantum: quantum as u32,
                limit,
                memory_limit,
                drop_batch: drop_batch as u32,
                salt,
            }))))
        }
        QueueSpec::Pie { target, t_update, alpha, beta, max_burst, ecn, mark_ecn_th, timestamps, dq_threshold, mtu, derandomize, cap_drop, .. } => {
            let params = PieParams {
                target,
                t_update,
                alpha,
                beta,
                max_burst,
                ecn,
                mark_ecn_th,
                use_timestamps: timestamps,
                dq_threshold_bytes: dq_threshold,
                mtu_bytes: mtu.min(u32::MAX as u64) as u32,
                derandomize,
                cap_drop,
                high_delay_boost: None,
            };
            Some(Qdisc::Pie(Box::new(PieQueue::new(params, limit))))
        }
        QueueSpec::DualPi2 { target, t_update, alpha, beta, k, step_thresh, tshift, ecn, drop_on_overload, .. } => {
            let params = DualPi2Params {
                target,
                t_update,
                alpha,
                beta,
                k,
                step_thresh,
                tshift,
                limit: limit.min(usize::MAX as u64) as usize,
                ecn_classic: ecn,
                drop_on_overload,
                p_cmax: DualPi2Params::p_cmax_for(k),
                ..DualPi2Params::default()
            };
            Some(Qdisc::DualPi2(Box::new(DualPi2::new(params))))
        }
    }
}

/// Builds the network of a scenario.
pub fn network(s: &Scenario) -> Network {
    let mut nodes = Vec::new();
    let mut channels = Vec::new();
    let mut links: Vec<String> = Vec::new();
    let mut pair_hosts = Vec::new();
    let mut cross_hosts = Vec::new();
    let is_host: Vec<bool>;
    match &s.topology {
        Topology::Dumbbell(d) => {
            // The two routers; `[quick_start] routers` names them (docs/SCENARIOS.md).
            nodes.push("left".to_string());
            nodes.push("right".to_string());
            for i in 0..d.rtts.len() {
                nodes.push(format!("s{i}"));
                nodes.push(format!("d{i}"));
            }
            for j in 0..s.cross.len() {
                nodes.push(format!("xs{j}"));
                nodes.push(format!("xd{j}"));
            }
            duplex(&mut channels, &mut links, "bottleneck", &nodes, 0, 1, d.bottleneck_rate, d.bottleneck_delay, &d.queue, s.seed);
            for (i, rtt) in d.rtts.iter().enumerate() {
                // Each access link carries a quarter of what the bottleneck leaves of the RTT.
                let access = Dur((rtt.as_nanos() - 2 * d.bottleneck_delay.as_nanos()) / 4);
                let (s_node, d_node) = (2 + 2 * i as u32, 3 + 2 * i as u32);
                duplex(&mut channels, &mut links, &format!("access-s{i}"), &nodes, s_node, 0, d.access_rate, access, &d.access_queue, s.seed);
                duplex(&mut channels, &mut links, &format!("access-d{i}"), &nodes, 1, d_node, d.access_rate, access, &d.access_queue, s.seed);
                pair_hosts.push((s_node, d_node));
            }
            let base = 2 + 2 * d.rtts.len() as u32;
            for j in 0..s.cross.len() as u32 {
                let (a, b) = (base + 2 * j, base + 2 * j + 1);
                duplex(&mut channels, &mut links, &format!("access-xs{j}"), &nodes, a, 0, d.access_rate, Dur::ZERO, &d.access_queue, s.seed);
                duplex(&mut channels, &mut links, &format!("access-xd{j}"), &nodes, 1, b, d.access_rate, Dur::ZERO, &d.access_queue, s.seed);
                cross_hosts.push((a, b));
            }
            is_host = (0..nodes.len()).map(|i| i >= 2).collect();
        }
        Topology::Graph(g) => {
            nodes = g.nodes.clone();
            is_host = (0..nodes.len()).map(|i| i < g.hosts).collect();
            for l in &g.links {
                duplex(&mut channels, &mut links, &l.name, &nodes, l.between[0] as u32, l.between[1] as u32, l.rate, l.delay, &l.queue, s.seed);
            }
        }
    }
    // `[[impairments]]`: the scenario checked every link name against the same naming.
    for imp in &s.impairments {
        if let Some(k) = links.iter().position(|l| *l == imp.link) {
            for (on, c) in [(imp.forward, 2 * k), (imp.reverse, 2 * k + 1)] {
                if on {
                    let stream = rng::stream(s.seed, rng::Component::Impairment, c as u64);
                    channels[c].imp = Some(Box::new(Impairment::new(imp, stream)));
                }
            }
        }
    }
    let routes = Routes::shortest(nodes.len(), &channels, &is_host);
    Network { nodes, channels, routes, pair_hosts, cross_hosts, is_host, links }
}

impl Network {
    /// Source and destination nodes of a flow or cross source.
    pub fn ends(&self, e: &Ends) -> (u32, u32) {
        match *e {
            Ends::Pair(i) => self.pair_hosts[i],
            Ends::Cross(j) => self.cross_hosts[j],
            Ends::Nodes { from, to } => (from as u32, to as u32),
            Ends::Dumbbell { from, to, reverse: false } => (self.pair_hosts[from].0, self.pair_hosts[to].1),
            Ends::Dumbbell { from, to, reverse: true } => (self.pair_hosts[to].1, self.pair_hosts[from].0),
        }
    }

    /// The channels from `src` to `dst`, or `None` if there is no route.
    pub fn path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let mut path = Vec::new();
        let mut at = src;
        while at != dst {
            let c = self.routes.next(at, dst)?;
            path.push(c);
            at = self.channels[c as usize].to;
            if path.len() > self.nodes.len() {
                return None;
            }
        }
        Some(path)
    }
}
