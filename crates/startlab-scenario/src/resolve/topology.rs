//! The network: dumbbell, parking lot and graph topologies, each flow's and source's ends, and the
//! routers that take part in Quick-Start.

use super::*;

/// `[quick_start]`: which routers take part, and their admission rule's share and window.
pub(super) fn quick_start(q: Option<&raw::QuickStart>, topo: &Topology) -> R<QuickStartSpec> {
    let router_names: Vec<String> = match topo {
        // build.rs names the dumbbell's two routers "left" (senders' side) and "right".
        Topology::Dumbbell(_) => vec!["left".into(), "right".into()],
        Topology::Graph(g) => g.nodes[g.hosts..].to_vec(),
    };
    let routers = match q.and_then(|q| q.routers.as_ref()) {
        None => None,
        Some(serde_json::Value::String(s)) if s == "all" => None,
        Some(serde_json::Value::Array(items)) => {
            let mut names = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let at = format!("quick_start.routers[{i}]");
                let Some(name) = item.as_str() else {
                    return err(at, format!("{item} is not a router name; expected a string, one of {router_names:?}"));
                };
                if !router_names.iter().any(|r| r == name) {
                    let what = if matches!(topo, Topology::Graph(g) if g.nodes[..g.hosts].iter().any(|h| h == name)) {
                        "is a host; only routers forward packets and process Quick-Start requests"
                    } else {
                        "is not a router"
                    };
                    return err(at, format!("{name:?} {what}; routers are {router_names:?}"));
                }
                if names.iter().any(|n: &String| n == name) {
                    return err(at, format!("router {name:?} is listed twice"));
                }
                names.push(name.to_string());
            }
            Some(names)
        }
        Some(other) => {
            return err("quick_start.routers", format!("{other} is not valid; expected \"all\" or a list of router names such as [\"left\"] (routers are {router_names:?})"))
        }
    };
    let share = q.and_then(|q| q.share).unwrap_or(1.0);
    if !(share > 0.0 && share <= 1.0) {
        return err("quick_start.share", format!("{share} is not valid; expected a number greater than 0 and at most 1"));
    }
    let window = q.and_then(|q| q.window).map_or(Dur::from_secs(1), |d| d.0);
    if window == Dur::ZERO {
        return err("quick_start.window", "must be longer than 0s");
    }
    Ok(QuickStartSpec { routers, share, window })
}

pub(super) fn topology(t: &raw::Topology, flows: u64) -> R<Topology> {
    let only = |ok: &[&str]| -> R<()> {
        let given: [(&str, bool); 16] = [
            ("backbone_links", t.backbone_links.is_some()),
            ("backbone_rate", t.backbone_rate.is_some()),
            ("backbone_delay", t.backbone_delay.is_some()),
            ("hosts_per_router", t.hosts_per_router.is_some()),
            ("access_delay", t.access_delay.is_some()),
            ("bottleneck_rate", t.bottleneck_rate.is_some()),
            ("rtt", t.rtt.is_some()),
            ("rtts", t.rtts.is_some()),
            ("access_rate", t.access_rate.is_some()),
            ("bottleneck_delay", t.bottleneck_delay.is_some()),
            ("pairs", t.pairs.is_some()),
            ("queue", t.queue.is_some()),
            ("access_queue", t.access_queue.is_some()),
            ("hosts", t.hosts.is_some()),
            ("routers", t.routers.is_some()),
            ("links", t.links.is_some()),
        ];
        for (key, present) in given {
            if present && !ok.contains(&key) {
                return err(format!("topology.{key}"), format!("is not a key of kind = {:?}", t.kind));
            }
        }
        Ok(())
    };
    match t.kind.as_str() {
        "dumbbell" => {
            only(&["bottleneck_rate", "rtt", "rtts", "access_rate", "bottleneck_delay", "pairs", "queue", "access_queue"])?;
            let bottleneck_rate = positive_rate("topology.bottleneck_rate", t.bottleneck_rate.ok_or_else(|| missing("topology.bottleneck_rate"))?.0)?;
            let access_rate = positive_rate("topology.access_rate", t.access_rate.ok_or_else(|| missing("topology.access_rate"))?.0)?;
            let pairs = match t.pairs {
                Some(0) => return err("topology.pairs", "must be at least 1"),
                Some(p) => p,
                // Without [[flows]] (users, arrivals or a replay only), one pair per listed RTT.
                None if flows == 0 => t.rtts.as_ref().map_or(1, |v| v.len().max(1) as u64),
                None => flows,
            } as usize;
            if pairs > 1_000_000 {
                return err("topology.pairs", "at most 1000000 pairs");
            }
            let rtts: Vec<Dur> = match (&t.rtt, &t.rtts) {
                (Some(_), Some(_)) => return err("topology.rtts", "give either rtt (every pair) or rtts (one per pair), not both"),
                (Some(r), None) => vec![r.0; pairs],
                (None, Some(v)) if v.len() == pairs => v.iter().map(|d| d.0).collect(),
                (None, Some(v)) => return err("topology.rtts", format!("has {} entries but there are {pairs} pairs", v.len())),
                (None, None) => return Err(missing("topology.rtt")),
            };
            let min_rtt = rtts.iter().copied().min().unwrap_or(Dur::ZERO);
            let bottleneck_delay = t.bottleneck_delay.map_or(Dur(min_rtt.0 / 2), |d| d.0);
            if bottleneck_delay.0 * 2 > min_rtt.0 {
                return err("topology.bottleneck_delay", format!("{bottleneck_delay} is more than half the smallest RTT {min_rtt}; access links cannot have negative delay"));
            }
            let queue = queue("topology.queue", t.queue.as_ref().ok_or_else(|| missing("topology.queue"))?)?;
            let access_queue = match &t.access_queue {
                Some(q) => self::queue("topology.access_queue", q)?,
                None => QueueSpec::Droptail { limit: QueueLimit::Packets(100_000) },
            };
            Ok(Topology::Dumbbell(Dumbbell { bottleneck_rate, bottleneck_delay, access_rate, rtts, queue, access_queue }))
        }
        "graph" => {
            only(&["hosts", "routers", "links"])?;
            let hosts = t.hosts.clone().ok_or_else(|| missing("topology.hosts"))?;
            let routers = t.routers.clone().unwrap_or_default();
            let mut nodes: Vec<String> = hosts.clone();
            nodes.extend(routers);
            for (i, n) in nodes.iter().enumerate() {
                let at = if i < hosts.len() { format!("topology.hosts[{i}]") } else { format!("topology.routers[{}]", i - hosts.len()) };
                if n.is_empty() {
                    return err(at, "node names must not be empty");
                }
                if nodes[..i].contains(n) {
                    return err(at, format!("node name {n:?} is used twice"));
                }
            }
            let raw_links = t.links.as_ref().ok_or_else(|| missing("topology.links"))?;
            let mut links = Vec::new();
            for (i, l) in raw_links.iter().enumerate() {
                let p = format!("topology.links[{i}]");
                let find = |name: &str| nodes.iter().position(|n| n == name).ok_or_else(|| ScenarioError::new(format!("{p}.between"), format!("{name:?} is not a node; nodes are {nodes:?}")));
                let a = find(&l.between[0])?;
                let b = find(&l.between[1])?;
                if a == b {
                    return err(format!("{p}.between"), "a link needs two different nodes");
                }
                let q = match &l.queue {
                    Some(q) => queue(&format!("{p}.queue"), q)?,
                    None => return Err(missing(&format!("{p}.queue"))),
                };
                let name = l.name.clone().unwrap_or_else(|| format!("{}-{}", l.between[0], l.between[1]));
                if links.iter().any(|x: &LinkSpec| x.name == name) {
                    return err(format!("{p}.name"), format!("link name {name:?} is used twice; give each link its own `name`"));
                }
                links.push(LinkSpec {
                    name,
                    between: [a, b],
                    rate: positive_rate(&format!("{p}.rate"), l.rate.0)?,
                    delay: l.delay.0,
                    queue: q,
                });
            }
            Ok(Topology::Graph(Graph { nodes, hosts: hosts.len(), links }))
        }
        "parking-lot" => {
            // The Paced Start paper's Fig. 10: routers r0..rK in a chain of K backbone links, each
            // router with its own hosts h{r}_{k} on access links. Resolved into a graph.
            only(&["backbone_links", "backbone_rate", "backbone_delay", "hosts_per_router", "access_rate", "access_delay", "queue", "access_queue"])?;
            let k = t.backbone_links.ok_or_else(|| missing("topology.backbone_links"))?;
            if !(1..=1000).contains(&k) {
                return err("topology.backbone_links", "must be between 1 and 1000");
            }
            let per = t.hosts_per_router.ok_or_else(|| missing("topology.hosts_per_router"))?;
            if !(1..=10_000).contains(&per) || per * (k + 1) > 1_000_000 {
                return err("topology.hosts_per_router", "must be between 1 and 10000, and at most 1000000 hosts in all");
            }
            let rate = positive_rate("topology.backbone_rate", t.backbone_rate.ok_or_else(|| missing("topology.backbone_rate"))?.0)?;
            let delay = t.backbone_delay.ok_or_else(|| missing("topology.backbone_delay"))?.0;
            let access_rate = positive_rate("topology.access_rate", t.access_rate.ok_or_else(|| missing("topology.access_rate"))?.0)?;
            let access_delay = t.access_delay.map_or(Dur::ZERO, |d| d.0);
            let q = queue("topology.queue", t.queue.as_ref().ok_or_else(|| missing("topology.queue"))?)?;
            let access_q = match &t.access_queue {
                Some(q) => queue("topology.access_queue", q)?,
                None => QueueSpec::Droptail { limit: QueueLimit::Packets(100_000) },
            };
            let hosts = ((k + 1) * per) as usize;
            let mut nodes: Vec<String> = (0..=k).flat_map(|r| (0..per).map(move |h| format!("h{r}_{h}"))).collect();
            nodes.extend((0..=k).map(|r| format!("r{r}")));
            let mut links = Vec::new();
            for r in 0..=k as usize {
                for h in 0..per as usize {
                    let host = r * per as usize + h;
                    let link = LinkSpec { name: format!("access-{}", nodes[host]), between: [host, hosts + r], rate: access_rate, delay: access_delay, queue: access_q };
                    links.push(link);
                }
            }
            for i in 0..k as usize {
                links.push(LinkSpec { name: format!("backbone{i}"), between: [hosts + i, hosts + i + 1], rate, delay, queue: q });
            }
            Ok(Topology::Graph(Graph { nodes, hosts, links }))
        }
        other => err("topology.kind", format!("{other:?} is not a known topology; expected \"dumbbell\", \"parking-lot\" or \"graph\"")),
    }
}

pub(super) fn graph_ends(p: &str, g: &Graph, from: Option<&str>, to: Option<&str>) -> R<Ends> {
    let host = |key: &str, name: Option<&str>| -> R<usize> {
        let name = name.ok_or_else(|| missing(&format!("{p}.{key}")))?;
        match g.nodes.iter().position(|n| n == name) {
            Some(i) if i < g.hosts => Ok(i),
            Some(_) => err(format!("{p}.{key}"), format!("{name:?} is a router; flows run between hosts")),
            None => err(format!("{p}.{key}"), format!("{name:?} is not a host; hosts are {:?}", &g.nodes[..g.hosts])),
        }
    };
    let (a, b) = (host("from", from)?, host("to", to)?);
    if a == b {
        return err(format!("{p}.to"), "must differ from `from`");
    }
    Ok(Ends::Nodes { from: a, to: b })
}

pub(super) fn flow_ends(p: &str, f: &raw::Flow, index: usize, replicate: u64, topo: &Topology) -> R<Ends> {
    match topo {
        Topology::Dumbbell(d) => {
            if f.from.is_some() || f.to.is_some() {
                return err(format!("{p}.from"), "from/to are for kind = \"graph\"; in a dumbbell use pair = N");
            }
            let pair = match f.pair {
                Some(base) => (base + replicate) as usize,
                None => index,
            };
            if pair >= d.rtts.len() {
                return err(format!("{p}.pair"), format!("pair {pair} does not exist; the dumbbell has {} pairs (0..{})", d.rtts.len(), d.rtts.len()));
            }
            if f.reverse == Some(true) {
                // Reverse-direction traffic: the pair's d host sends to its s host.
                return Ok(Ends::Dumbbell { from: pair, to: pair, reverse: true });
            }
            Ok(Ends::Pair(pair))
        }
        Topology::Graph(g) => {
            if f.pair.is_some() {
                return err(format!("{p}.pair"), "pair is for kind = \"dumbbell\"; in a graph use from/to");
            }
            if f.reverse.is_some() {
                return err(format!("{p}.reverse"), "reverse is for kind = \"dumbbell\"; in a graph swap from and to");
            }
            graph_ends(p, g, f.from.as_deref(), f.to.as_deref())
        }
    }
}
