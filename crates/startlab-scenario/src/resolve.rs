//! Rules between fields, and the defaults (each documented in docs/SCENARIOS.md).

use crate::raw;
use crate::values::Amount;
use crate::*;
use startlab_units::{Dur, Rate};
use std::collections::BTreeMap;

type R<T> = Result<T, ScenarioError>;

fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> R<T> {
    Err(ScenarioError::new(path, msg))
}

fn positive_rate(path: &str, r: Rate) -> R<Rate> {
    if r.0 == 0 {
        return err(path, "the rate must be positive");
    }
    Ok(r)
}

/// Packet size the RED defaults assume when a byte-mode queue leaves a threshold out (docs/QUEUES.md).
const RED_DEFAULT_PACKET_BYTES: u64 = 1500;

fn queue(path: &str, q: &raw::Queue) -> R<QueueSpec> {
    let limit = match q.limit {
        Amount::Pkts(n) => QueueLimit::Packets(n),
        Amount::Bytes(b) => QueueLimit::Bytes(b),
        Amount::Keyword(k) => {
            return err(format!("{path}.limit"), format!("{k:?} is not a queue limit; expected packets (\"100pkt\") or bytes (\"64KB\")"))
        }
    };
    match q.kind.as_str() {
        "droptail" => {
            let red_keys = [
                ("min_th", q.min_th.is_some()),
                ("max_th", q.max_th.is_some()),
                ("max_p", q.max_p.is_some()),
                ("w_q", q.w_q.is_some()),
                ("gentle", q.gentle.is_some()),
                ("ecn", q.ecn.is_some()),
                ("ns2_wait", q.ns2_wait.is_some()),
            ];
            if let Some((k, _)) = red_keys.iter().find(|(_, given)| *given) {
                return err(format!("{path}.{k}"), format!("{k} is a RED parameter; it needs kind = \"red\" (a \"droptail\" queue takes only limit)"));
            }
            Ok(QueueSpec::Droptail { limit })
        }
        "red" => red(path, q, limit),
        other => err(format!("{path}.kind"), format!("{other:?} is not a known queue; expected \"droptail\" or \"red\"")),
    }
}

/// `kind = "red"`: thresholds in the unit of the limit, lab defaults of ALGORITHMS.md §17.1.
fn red(path: &str, q: &raw::Queue, limit: QueueLimit) -> R<QueueSpec> {
    let (cap, unit, scale) = match limit {
        QueueLimit::Packets(n) => (n, "packets", 1),
        QueueLimit::Bytes(b) => (b, "bytes", RED_DEFAULT_PACKET_BYTES),
    };
    let threshold = |key: &str, given: Option<Amount>, default_pkts: u64| -> R<f64> {
        match (given, limit) {
            (None, _) => Ok((default_pkts * scale) as f64),
            (Some(Amount::Pkts(n)), QueueLimit::Packets(_)) | (Some(Amount::Bytes(n)), QueueLimit::Bytes(_)) => Ok(n as f64),
            (Some(Amount::Keyword(k)), _) => err(format!("{path}.{key}"), format!("{k:?} is not a threshold; expected {unit} like the limit")),
            (Some(_), _) => err(
                format!("{path}.{key}"),
                format!("must be in {unit}, the unit of {path}.limit (RED thresholds and the limit share one unit)"),
            ),
        }
    };
    let min_th = threshold("min_th", q.min_th, 5)?;
    let max_th = threshold("max_th", q.max_th, 15)?;
    if min_th >= max_th {
        return err(format!("{path}.min_th"), format!("min_th ({min_th}) must be below max_th ({max_th})"));
    }
    if max_th > cap as f64 {
        let how = if q.max_th.is_none() { " (the default; set min_th and max_th for a small buffer)" } else { "" };
        return err(format!("{path}.max_th"), format!("max_th ({max_th} {unit}{how}) must be at most the limit ({cap} {unit})"));
    }
    let max_p = q.max_p.unwrap_or(0.1);
    if !(max_p > 0.0 && max_p <= 1.0) {
        return err(format!("{path}.max_p"), format!("{max_p} is not valid; expected a probability greater than 0 and at most 1"));
    }
    let w_q = q.w_q.unwrap_or(0.002);
    if !(w_q > 0.0 && w_q <= 1.0) {
        return err(format!("{path}.w_q"), format!("{w_q} is not valid; expected a weight greater than 0 and at most 1"));
    }
    Ok(QueueSpec::Red {
        limit,
        min_th,
        max_th,
        max_p,
        w_q,
        gentle: q.gentle.unwrap_or(true),
        ecn: q.ecn.unwrap_or(false),
        ns2_wait: q.ns2_wait.unwrap_or(false),
    })
}

/// Checks the raw scenario and fills in every default; files it names are relative to the
/// working directory.
pub fn resolve(s: raw::Scenario) -> R<Scenario> {
    resolve_in(s, None)
}

/// [`resolve`] with files (`impairments[].rate_trace`) relative to `base` when given.
pub fn resolve_in(s: raw::Scenario, base: Option<&std::path::Path>) -> R<Scenario> {
    if s.duration.0 == Dur::ZERO {
        return err("duration", "the run must last longer than 0s");
    }
    if s.flows.is_empty() && s.cross.is_empty() && s.arrivals.is_empty() && s.users.is_empty() && s.replay.is_empty() {
        return err("flows", "a scenario needs at least one flow ([[flows]]), flow arrival process ([[arrivals]]), user group ([[users]]), replayed vector file ([[replay]]) or cross-traffic source");
    }
    // Expand flow replicates first: a dumbbell has one pair per flow unless told otherwise.
    let mut total_flows = 0u64;
    for (i, f) in s.flows.iter().enumerate() {
        match f.count {
            Some(0) => return err(format!("flows[{i}].count"), "must be at least 1"),
            Some(n) if n > 1_000_000 => return err(format!("flows[{i}].count"), "at most 1000000 replicates"),
            _ => total_flows += f.count.unwrap_or(1),
        }
    }
    let topo = topology(&s.topology, total_flows)?;
    let mut flows = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, f) in s.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        let count = f.count.unwrap_or(1);
        let mut tcp = tcp(&format!("{p}.tcp"), f.tcp.clone().unwrap_or_default())?;
        let startup = startup(&format!("{p}.startup"), f.startup.as_ref(), tcp.mss)?;
        classic_startup_checks(&format!("{p}.startup"), f.startup.as_ref(), &startup, &tcp)?;
        if startup.algorithm == "initial-start" {
            // ALGORITHMS.md §10.4: Initial-Start is only a larger IW; it becomes the flow's IW.
            if f.tcp.as_ref().is_some_and(|t| t.initial_window.is_some()) {
                return err(format!("{p}.startup.initial_window"), "\"initial-start\" sets tcp.initial_window from its initial_window parameter; give it only there");
            }
            tcp.initial_window = startup.params().get(&startlab_cc::startup::INITIAL_START_WINDOW).div_ceil(tcp.mss);
        }
        let start = f.start.map_or(Dur::ZERO, |d| d.0);
        if start >= s.duration.0 {
            return err(format!("{p}.start"), format!("{start} is not before the run's duration {}", s.duration.0));
        }
        let start_jitter = f.start_jitter.map_or(Dur::ZERO, |d| d.0);
        if start + start_jitter >= s.duration.0 {
            return err(format!("{p}.start_jitter"), format!("start + start_jitter ({}) must end before the run's duration {}", start + start_jitter, s.duration.0));
        }
        let size = match f.size {
            None | Some(Amount::Keyword("infinite")) => None,
            Some(Amount::Bytes(0)) | Some(Amount::Pkts(0)) => return err(format!("{p}.size"), "must be positive or \"infinite\""),
            Some(Amount::Bytes(b)) => Some(b),
            Some(Amount::Pkts(n)) => Some(n * tcp.mss),
            Some(Amount::Keyword(k)) => {
                return err(format!("{p}.size"), format!("{k:?} is not a size; expected bytes (\"100KB\"), packets (\"50pkt\") or \"infinite\""))
            }
        };
        let app = match &f.app {
            None => None,
            Some(a) => {
                let q = format!("{p}.app");
                if f.size.is_some() {
                    return err(format!("{p}.size"), "a flow with app = { ... } sends the responses it draws; leave size out");
                }
                if a.kind != "request-response" {
                    return err(format!("{q}.kind"), format!("{:?} is not known; expected \"request-response\"", a.kind));
                }
                let request = match a.request {
                    Amount::Bytes(b) if (1..=65_535).contains(&b) => b,
                    _ => return err(format!("{q}.request"), "must be a size between 1B and 65535B (one packet)"),
                };
                let response = size_dist(&format!("{q}.response"), &a.response, tcp.mss, base)?;
                let count = a.count;
                if !(1..=1_000_000).contains(&count) {
                    return err(format!("{q}.count"), "must be between 1 and 1000000");
                }
                let think = match (a.think.as_ref(), a.load) {
                    (Some(_), Some(_)) => return err(format!("{q}.load"), "give either think (the mean think time) or load, not both"),
                    (Some(v), None) => think_law(&format!("{q}.think"), v, base)?,
                    (None, Some(l)) if l > 0.0 && l <= 1.0 => Think::Load(l),
                    (None, Some(l)) => return err(format!("{q}.load"), format!("{l} is not valid; expected a fraction of the bottleneck rate above 0 and at most 1")),
                    (None, None) => return Err(missing(&format!("{q}.think"))),
                };
                Some(AppSpec { request, response, think, count })
            }
        };
        let size = if app.is_some() { None } else { size };
        let drops = f.drops.clone().unwrap_or_default();
        if let Some(pos) = drops.iter().position(|&d| d == 0) {
            return err(format!("{p}.drops[{pos}]"), "packet indices start at 1 (the first data packet sent)");
        }
        if f.name.is_empty() {
            return err(format!("{p}.name"), "must not be empty");
        }
        for k in 0..count {
            let name = if count == 1 { f.name.clone() } else { format!("{}-{k}", f.name) };
            if !names.insert(name.clone()) {
                return err(format!("{p}.name"), format!("flow name {name:?} is used twice"));
            }
            let ends = flow_ends(&p, f, flows.len(), k, &topo)?;
            flows.push(FlowSpec { name, ends, tcp: tcp.clone(), startup: startup.clone(), start, start_jitter, size, drops: drops.clone(), app: app.clone() });
        }
    }
    let mut cross = Vec::new();
    for (j, c) in s.cross.iter().enumerate() {
        let p = format!("cross[{j}]");
        let train_keys = [("packets", c.packets.is_some()), ("gaps", c.gaps.is_some()), ("interval", c.interval.is_some())];
        if c.kind != "train" {
            if let Some(key) = train_keys.iter().find(|k| k.1) {
                return err(format!("{p}.{}", key.0), format!("is a key of kind = \"train\", not {:?}", c.kind));
            }
        }
        let mut gaps = Vec::new();
        let process = match c.kind.as_str() {
            "train" => {
                if let Some(key) = [("on", c.on.is_some()), ("off", c.off.is_some()), ("rate", c.rate.is_some())].iter().find(|k| k.1) {
                    return err(format!("{p}.{}", key.0), "is not a key of kind = \"train\": its gaps set when packets leave");
                }
                let packets = c.packets.ok_or_else(|| missing(&format!("{p}.packets")))?;
                if !(2..=100_000).contains(&packets) {
                    return err(format!("{p}.packets"), format!("{packets} packets per train; expected 2 to 100000 (a train needs two packets for one gap)"));
                }
                let list = c.gaps.as_ref().ok_or_else(|| missing(&format!("{p}.gaps")))?;
                if list.is_empty() {
                    return err(format!("{p}.gaps"), "is empty; expected one source gap per train, such as [\"0.5ms\", \"1ms\"]");
                }
                for (i, g) in list.iter().enumerate() {
                    if g.0 == Dur::ZERO {
                        return err(format!("{p}.gaps[{i}]"), "must be longer than 0s");
                    }
                    gaps.push(g.0);
                }
                let interval = c.interval.map_or(Dur::from_secs(1), |d| d.0);
                let longest = gaps.iter().max().copied().unwrap_or(Dur::ZERO);
                if interval.as_nanos() <= longest.as_nanos() * (packets - 1) {
                    return err(format!("{p}.interval"), format!("{interval} is not longer than the longest train ({packets} packets {longest} apart); trains would overlap"));
                }
                CrossProcess::Train { packets: packets as u32, interval }
            }
            "cbr" | "poisson" => {
                if let Some(key) = [("on", c.on.is_some()), ("off", c.off.is_some())].iter().find(|k| k.1) {
                    return err(format!("{p}.{}", key.0), format!("is a key of kind = \"onoff\", not {:?}", c.kind));
                }
                if c.kind == "cbr" { CrossProcess::Cbr } else { CrossProcess::Poisson }
            }
            "onoff" => {
                let on = c.on.ok_or_else(|| missing(&format!("{p}.on")))?.0;
                let off = c.off.ok_or_else(|| missing(&format!("{p}.off")))?.0;
                if on == Dur::ZERO {
                    return err(format!("{p}.on"), "the mean on period must be longer than 0s");
                }
                CrossProcess::OnOff { on, off }
            }
            other => {
                return err(format!("{p}.kind"), format!("{other:?} is not a known cross-traffic source; expected \"cbr\", \"poisson\", \"onoff\" or \"train\""))
            }
        };
        // A rate of 0 is a source that sends nothing: the zero point of a sweep over cross load.
        let rate = match (&process, c.rate) {
            (CrossProcess::Train { packets, interval }, _) => {
                // The mean rate over the trains (for the flows' available rate).
                startlab_units::Rate(((*packets as u128 * c.packet_size.0 as u128 * 8 * 1_000_000_000 / interval.as_nanos().max(1) as u128) as u64).max(1))
            }
            (_, Some(r)) => r.0,
            (_, None) => return err(p.clone(), "missing field `rate`"),
        };
        if c.packet_size.0 == 0 || c.packet_size.0 > 65_535 {
            return err(format!("{p}.packet_size"), "must be between 1B and 65535B");
        }
        let start = c.start.map_or(Dur::ZERO, |d| d.0);
        if start >= s.duration.0 {
            return err(format!("{p}.start"), format!("{start} is not before the run's duration {}", s.duration.0));
        }
        let stop = c.stop.map_or(s.duration.0, |d| d.0);
        if stop <= start {
            return err(format!("{p}.stop"), "must be after start");
        }
        let ends = match &topo {
            Topology::Dumbbell(_) => {
                if c.from.is_some() || c.to.is_some() {
                    return err(format!("{p}.from"), "a dumbbell gives each cross-traffic source its own hosts; from/to are for kind = \"graph\"");
                }
                Ends::Cross(j)
            }
            Topology::Graph(g) => graph_ends(&p, g, c.from.as_deref(), c.to.as_deref())?,
        };
        // Cross sources and flows share one list of names in the traces and tables (the packet
        // trace's `flow` names either): a repeated name is refused here, not after the run.
        let name = c.name.clone().unwrap_or_else(|| format!("{}{j}", c.kind));
        if name.is_empty() {
            return err(format!("{p}.name"), "must not be empty");
        }
        if !names.insert(name.clone()) {
            let what = if c.name.is_some() { "" } else { " (the default name of this source; give it its own `name`)" };
            return err(format!("{p}.name"), format!("{name:?} is already the name of a flow or cross-traffic source{what}"));
        }
        cross.push(CrossSpec { name, ends, process, rate, packet_size: c.packet_size.0, start, stop, gaps });
    }
    let early_rtts = s.measure.as_ref().and_then(|m| m.early_rtts).unwrap_or(10);
    if early_rtts == 0 {
        return err("measure.early_rtts", "must be at least 1");
    }
    let window = measure_window(s.measure.as_ref(), s.duration.0)?;
    let mut arrivals = Vec::new();
    for (j, a) in s.arrivals.iter().enumerate() {
        arrivals.push(arrival(&format!("arrivals[{j}]"), a, &topo, s.duration.0, &mut names, base)?);
    }
    let mut users = Vec::new();
    for (j, u) in s.users.iter().enumerate() {
        users.push(user_group(&format!("users[{j}]"), u, &topo, s.duration.0, &mut names, base)?);
    }
    let mut replay = Vec::new();
    for (j, r) in s.replay.iter().enumerate() {
        replay.push(replay_group(&format!("replay[{j}]"), r, &topo, s.duration.0, &mut names, base)?);
    }
    let quick_start = quick_start(s.quick_start.as_ref(), &topo)?;
    let impairments = crate::impairments::resolve(&s.impairments, &topo, cross.len(), base)?;
    let packet_trace = match s.trace.as_ref().and_then(|t| t.packets.as_ref()) {
        None => None,
        Some(pt) => {
            // Users and replayed connections by name too: `NAME/k`, `NAME-id`.
            let members: Vec<String> = users
                .iter()
                .flat_map(|u| (0..u.count).map(move |k| format!("{}/{k}", u.name)))
                .chain(replay.iter().flat_map(|r| r.connections.iter().map(move |c| format!("{}-{}", r.name, c.id))))
                .collect();
            let mut names: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
            names.extend(s.flows.iter().map(|f| f.name.as_str()));
            names.extend(arrivals.iter().map(|a| a.name.as_str()));
            names.extend(users.iter().map(|u| u.name.as_str()));
            names.extend(replay.iter().map(|r| r.name.as_str()));
            names.extend(members.iter().map(String::as_str));
            names.extend(cross.iter().map(|c| c.name.as_str()));
            Some(crate::impairments::resolve_packet_trace(pt, &topo, cross.len(), &names)?)
        }
    };
    let t = s.trace.as_ref();
    let plugins = plugin_modules(s.plugins.as_deref().unwrap_or_default())?;
    Ok(Scenario {
        plugins,
        name: s.name,
        seed: s.seed,
        duration: s.duration.0,
        topology: topo,
        flows,
        cross,
        measure: MeasureSpec { early_rtts, window },
        trace: TraceSpec {
            cwnd: t.and_then(|t| t.cwnd).unwrap_or(true),
            seq: t.and_then(|t| t.seq).unwrap_or(true),
            queue: t.and_then(|t| t.queue).unwrap_or(true),
            interval: t.and_then(|t| t.interval).map_or(Dur::ZERO, |d| d.0),
            packets: packet_trace,
        },
        quick_start,
        arrivals,
        impairments,
        users,
        replay,
    })
}

/// `[measure]` warm-up / flows / window: which flows the results mark as measured.
fn measure_window(m: Option<&raw::Measure>, duration: Dur) -> R<MeasureWindow> {
    let Some(m) = m else { return Ok(MeasureWindow::All) };
    match (m.window, m.warmup, m.flows) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            err("measure.window", "give either window = [from, to] or warmup (and flows), not both")
        }
        (Some([a, b]), None, None) => {
            if a.0 >= b.0 || b.0 > duration {
                return err("measure.window", format!("[{}, {}] must be an interval within the run (0 to {duration})", a.0, b.0));
            }
            Ok(MeasureWindow::Time { from: a.0, to: b.0 })
        }
        (None, None, None) => Ok(MeasureWindow::All),
        (None, warmup, flows) => {
            if flows == Some(0) {
                return err("measure.flows", "must be at least 1");
            }
            let warmup = match warmup {
                None => Some(Dur::ZERO),
                Some(raw::DurOrKeyword::Keyword(raw::KeywordAuto::Auto)) => None,
                Some(raw::DurOrKeyword::Dur(d)) if d.0 >= duration => {
                    return err("measure.warmup", format!("{} is not before the run's duration {duration}", d.0));
                }
                Some(raw::DurOrKeyword::Dur(d)) => Some(d.0),
            };
            Ok(MeasureWindow::Warmup { warmup, flows })
        }
    }
}

/// One `[[arrivals]]` process.
fn arrival(p: &str, a: &raw::Arrivals, topo: &Topology, duration: Dur, names: &mut std::collections::BTreeSet<String>, base: Option<&std::path::Path>) -> R<ArrivalSpec> {
    if a.name.is_empty() {
        return err(format!("{p}.name"), "must not be empty");
    }
    if !names.insert(a.name.clone()) {
        return err(format!("{p}.name"), format!("{:?} is already the name of a flow or arrival process", a.name));
    }
    if !(a.rate > 0.0 && a.rate.is_finite() && a.rate <= 1e6) {
        return err(format!("{p}.rate"), format!("{} is not valid; expected flows per second, above 0 and at most 1e6", a.rate));
    }
    let start = a.start.map_or(Dur::ZERO, |d| d.0);
    let stop = a.stop.map_or(duration, |d| d.0);
    if start >= duration {
        return err(format!("{p}.start"), format!("{start} is not before the run's duration {duration}"));
    }
    if stop <= start || stop > duration {
        return err(format!("{p}.stop"), format!("{stop} must be after start ({start}) and at most the run's duration {duration}"));
    }
    if a.count == Some(0) {
        return err(format!("{p}.count"), "must be at least 1");
    }
    let expected = a.rate * (stop.as_secs_f64() - start.as_secs_f64());
    if a.count.unwrap_or(u64::MAX) as f64 > 1_000_000.0 && expected > 1_000_000.0 {
        return err(format!("{p}.rate"), format!("about {expected:.0} flows would arrive; at most 1000000 (lower rate or stop, or set count)"));
    }
    let tcp = tcp(&format!("{p}.tcp"), a.tcp.clone().unwrap_or_default())?;
    let size = size_dist(&format!("{p}.size"), &a.size, tcp.mss, base)?;
    let (mix, ends) = mix_and_ends(p, &Picks { startup: a.startup.as_ref(), mix: a.mix.as_ref(), direction: a.direction.as_deref(), from: a.from.as_ref(), to: a.to.as_ref() }, &tcp, topo)?;
    Ok(ArrivalSpec { name: a.name.clone(), rate: a.rate, start, stop, count: a.count, size, ends, tcp, mix })
}

/// How a `[[arrivals]]` or `[[users]]` table picks its startup algorithms and hosts.
struct Picks<'a> {
    startup: Option<&'a BTreeMap<String, serde_json::Value>>,
    mix: Option<&'a Vec<BTreeMap<String, serde_json::Value>>>,
    direction: Option<&'a str>,
    from: Option<&'a Vec<String>>,
    to: Option<&'a Vec<String>>,
}

/// The startup mix and the host-picking rule of `[[arrivals]]` or `[[users]]` at `p`.
fn mix_and_ends(p: &str, w: &Picks<'_>, tcp: &TcpSpec, topo: &Topology) -> R<(Vec<(StartupSpec, f64)>, ArrivalEnds)> {
    let group = if p.starts_with("users") { "[[users]]" } else { "[[arrivals]]" };
    let mix = match (&w.startup, &w.mix) {
        (Some(_), Some(_)) => return err(format!("{p}.mix"), "give either startup (one algorithm) or mix (several with shares), not both"),
        (None, Some(m)) => {
            if m.is_empty() {
                return err(format!("{p}.mix"), "must list at least one algorithm");
            }
            let mut out = Vec::new();
            for (k, entry) in m.iter().enumerate() {
                let q = format!("{p}.mix[{k}]");
                let mut table = entry.clone();
                let share = match table.remove("share") {
                    Some(serde_json::Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
                    Some(_) => return err(format!("{q}.share"), "must be a number between 0 and 1"),
                    None => return Err(missing(&format!("{q}.share"))),
                };
                if !(share > 0.0 && share <= 1.0) {
                    return err(format!("{q}.share"), format!("{share} is not valid; expected a probability above 0 and at most 1"));
                }
                let s = startup(&q, Some(&table), tcp.mss)?;
                classic_startup_checks(&q, Some(&table), &s, tcp)?;
                if s.algorithm == "initial-start" {
                    return err(format!("{q}.algorithm"), format!("\"initial-start\" sets the initial window; give it as tcp.initial_window of a separate {group}"));
                }
                out.push((s, share));
            }
            let total: f64 = out.iter().map(|x| x.1).sum();
            if (total - 1.0).abs() > 1e-9 {
                return err(format!("{p}.mix"), format!("shares sum to {total}; they must sum to 1"));
            }
            out
        }
        (startup_table, None) => {
            let s = startup(&format!("{p}.startup"), *startup_table, tcp.mss)?;
            classic_startup_checks(&format!("{p}.startup"), *startup_table, &s, tcp)?;
            if s.algorithm == "initial-start" {
                return err(format!("{p}.startup.algorithm"), format!("\"initial-start\" sets the initial window; use tcp.initial_window in {group}"));
            }
            vec![(s, 1.0)]
        }
    };
    let ends = match topo {
        Topology::Dumbbell(_) => {
            if w.from.is_some() || w.to.is_some() {
                return err(format!("{p}.from"), "from/to are for kind = \"graph\"; a dumbbell draws s{i} and d{j} at random (see direction)");
            }
            let (both_directions, reverse) = match w.direction {
                None | Some("forward") => (false, false),
                Some("reverse") => (false, true),
                Some("both") => (true, false),
                Some(other) => return err(format!("{p}.direction"), format!("{other:?} is not valid; expected \"forward\" (s -> d), \"reverse\" (d -> s) or \"both\"")),
            };
            ArrivalEnds::Dumbbell { both_directions, reverse }
        }
        Topology::Graph(g) => {
            if w.direction.is_some() {
                return err(format!("{p}.direction"), "is for kind = \"dumbbell\"; in a graph list the candidate hosts in from and to");
            }
            let hosts = |key: &str, names: Option<&Vec<String>>| -> R<Vec<usize>> {
                let Some(names) = names else { return Ok((0..g.hosts).collect()) };
                if names.is_empty() {
                    return err(format!("{p}.{key}"), "must list at least one host");
                }
                names
                    .iter()
                    .enumerate()
                    .map(|(k, name)| match g.nodes.iter().position(|n| n == name) {
                        Some(i) if i < g.hosts => Ok(i),
                        Some(_) => err(format!("{p}.{key}[{k}]"), format!("{name:?} is a router; flows run between hosts")),
                        None => err(format!("{p}.{key}[{k}]"), format!("{name:?} is not a host of the topology")),
                    })
                    .collect()
            };
            let (from, to) = (hosts("from", w.from)?, hosts("to", w.to)?);
            let attach = |h: usize| -> Option<usize> {
                let mut it = g.links.iter().filter_map(|l| match l.between {
                    [x, y] if x == h => Some(y),
                    [x, y] if y == h => Some(x),
                    _ => None,
                });
                let first = it.next()?;
                it.next().is_none().then_some(first)
            };
            let apart = |x: usize, y: usize| x != y && (attach(x).is_none() || attach(x) != attach(y));
            if !from.iter().any(|&x| to.iter().any(|&y| apart(x, y))) {
                return err(format!("{p}.to"), "no sender/receiver pair in from/to is two distinct hosts behind different routers");
            }
            ArrivalEnds::Graph { from, to }
        }
    };
    Ok((mix, ends))
}

/// One `[[users]]` group.
fn user_group(p: &str, u: &raw::Users, topo: &Topology, duration: Dur, names: &mut std::collections::BTreeSet<String>, base: Option<&std::path::Path>) -> R<UserSpec> {
    if u.name.is_empty() {
        return err(format!("{p}.name"), "must not be empty");
    }
    if !names.insert(u.name.clone()) {
        return err(format!("{p}.name"), format!("{:?} is already the name of a flow, arrival process or user group", u.name));
    }
    if !(1..=100_000).contains(&u.count) {
        return err(format!("{p}.count"), format!("{} is not valid; expected a number of users from 1 to 100000", u.count));
    }
    let start = u.start.map_or(Dur::ZERO, |d| d.0);
    let stop = u.stop.map_or(duration, |d| d.0);
    if start >= duration {
        return err(format!("{p}.start"), format!("{start} is not before the run's duration {duration}"));
    }
    if stop <= start || stop > duration {
        return err(format!("{p}.stop"), format!("{stop} must be after start ({start}) and at most the run's duration {duration}"));
    }
    if u.transfers == Some(0) {
        return err(format!("{p}.transfers"), "must be at least 1 (leave it out for no limit)");
    }
    let tcp = tcp(&format!("{p}.tcp"), u.tcp.clone().unwrap_or_default())?;
    let size = size_dist(&format!("{p}.size"), &u.size, tcp.mss, base)?;
    let think = think_law(&format!("{p}.think"), &u.think, base)?;
    let persistent = match (u.connection.as_deref(), u.request) {
        (None | Some("new"), None) => None,
        (None | Some("new"), Some(_)) => return err(format!("{p}.request"), "only applies to connection = \"persistent\" (a new connection per transfer sends no request)"),
        (Some("persistent"), None) => Some(DEFAULT_USER_REQUEST),
        (Some("persistent"), Some(Amount::Bytes(b))) if (1..=65_535).contains(&b) => Some(b),
        (Some("persistent"), Some(_)) => return err(format!("{p}.request"), "must be a size between 1B and 65535B (one packet)"),
        (Some(other), _) => return err(format!("{p}.connection"), format!("{other:?} is not valid; expected \"new\" (a new connection per transfer) or \"persistent\" (one connection per user, a request per transfer)")),
    };
    let (mix, ends) = mix_and_ends(p, &Picks { startup: u.startup.as_ref(), mix: u.mix.as_ref(), direction: u.direction.as_deref(), from: u.from.as_ref(), to: u.to.as_ref() }, &tcp, topo)?;
    Ok(UserSpec { name: u.name.clone(), count: u.count, start, stop, transfers: u.transfers, size, think, persistent, ends, tcp, mix })
}

/// The request of a persistent user's transfer when `request` is not given (a small HTTP GET).
const DEFAULT_USER_REQUEST: u64 = 300;

/// Reads connection vectors from a Parquet file: registered by the Python package (which reads
/// Parquet with pyarrow) and returning the file as CSV text of the same columns.
pub type TableReader = fn(&std::path::Path) -> Result<String, String>;

static PARQUET_READER: std::sync::OnceLock<TableReader> = std::sync::OnceLock::new();

/// Lets `[[replay]] file = "....parquet"` be read (the Python bindings register pyarrow's reader).
pub fn set_parquet_reader(reader: TableReader) {
    let _ = PARQUET_READER.set(reader);
}

/// The columns of a connection-vector file, in order (docs/REPLAY.md).
pub const VECTOR_COLUMNS: [&str; 6] = ["connection", "start", "rtt_class", "request", "think", "response"];

/// Parses a connection-vector CSV text: a header line of [`VECTOR_COLUMNS`], then one epoch per
/// line; blank and `#` lines skipped. Errors name the line.
pub fn parse_vectors(text: &str) -> Result<Vec<VectorConnection>, String> {
    let mut out: Vec<VectorConnection> = Vec::new();
    let mut header = false;
    let mut seen = std::collections::BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let at = n + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if !header {
            for (k, want) in VECTOR_COLUMNS.iter().enumerate() {
                match cells.get(k) {
                    Some(c) if c == want => {}
                    Some(c) => return Err(format!("line {at}: column {} is {c:?}; expected the header {}", k + 1, VECTOR_COLUMNS.join(","))),
                    None => return Err(format!("line {at}: the header lacks column {want:?}; expected {}", VECTOR_COLUMNS.join(","))),
                }
            }
            if cells.len() > VECTOR_COLUMNS.len() {
                return Err(format!("line {at}: {} columns; expected the {} of {}", cells.len(), VECTOR_COLUMNS.len(), VECTOR_COLUMNS.join(",")));
            }
            header = true;
            continue;
        }
        if cells.len() != VECTOR_COLUMNS.len() {
            return Err(format!("line {at}: {} fields; expected {} ({})", cells.len(), VECTOR_COLUMNS.len(), VECTOR_COLUMNS.join(",")));
        }
        let whole = |k: usize, min: u64| -> Result<u64, String> {
            match cells[k].parse::<u64>() {
                Ok(v) if v >= min => Ok(v),
                _ => Err(format!("line {at}: {} = {:?} is not valid; expected a whole number of at least {min}", VECTOR_COLUMNS[k], cells[k])),
            }
        };
        let secs = |k: usize| -> Result<Dur, String> {
            match cells[k].parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..=1e6).contains(&v) => Ok(Dur((v * 1e9).round() as u64)),
                _ => Err(format!("line {at}: {} = {:?} is not valid; expected seconds from 0 to 1e6", VECTOR_COLUMNS[k], cells[k])),
            }
        };
        let id = whole(0, 0)?;
        let (start, class) = (secs(1)?, whole(2, 0)? as usize);
        let epoch = (whole(3, 1)?, secs(4)?, whole(5, 1)?);
        match out.last_mut() {
            Some(c) if c.id == id => {
                if c.start != start || c.rtt_class != class {
                    return Err(format!("line {at}: connection {id} has start {start} and rtt_class {class} here but {} and {} on its first line; they must agree", c.start, c.rtt_class));
                }
                c.epochs.push(epoch);
            }
            _ => {
                if !seen.insert(id) {
                    return Err(format!("line {at}: connection {id} appeared before; the lines of a connection must be contiguous"));
                }
                out.push(VectorConnection { id, start, rtt_class: class, line: at, epochs: vec![epoch] });
            }
        }
    }
    if !header {
        return Err(format!("has no header; expected {}", VECTOR_COLUMNS.join(",")));
    }
    if out.is_empty() {
        return Err("has no epochs".into());
    }
    Ok(out)
}

/// One `[[replay]]` table.
fn replay_group(p: &str, r: &raw::Replay, topo: &Topology, duration: Dur, names: &mut std::collections::BTreeSet<String>, base: Option<&std::path::Path>) -> R<ReplaySpec> {
    if r.name.is_empty() {
        return err(format!("{p}.name"), "must not be empty");
    }
    if !names.insert(r.name.clone()) {
        return err(format!("{p}.name"), format!("{:?} is already the name of a flow, arrival process, user group or replay", r.name));
    }
    let Topology::Dumbbell(d) = topo else {
        return err(format!("{p}.file"), "replays a vector file over a dumbbell (its rtt_class is the pair index); use kind = \"dumbbell\" with rtts = [...]");
    };
    let reverse = match r.direction.as_deref() {
        None | Some("forward") => false,
        Some("reverse") => true,
        Some(other) => return err(format!("{p}.direction"), format!("{other:?} is not valid; expected \"forward\" (servers at s{{i}}) or \"reverse\" (servers at d{{i}})")),
    };
    let tcp = tcp(&format!("{p}.tcp"), r.tcp.clone().unwrap_or_default())?;
    let startup = startup(&format!("{p}.startup"), r.startup.as_ref(), tcp.mss)?;
    classic_startup_checks(&format!("{p}.startup"), r.startup.as_ref(), &startup, &tcp)?;
    if startup.algorithm == "initial-start" {
        return err(format!("{p}.startup.algorithm"), "\"initial-start\" sets the initial window; use tcp.initial_window in [[replay]]");
    }
    let path = match base {
        Some(b) => b.join(&r.file),
        None => std::path::PathBuf::from(&r.file),
    };
    let at = format!("{p}.file");
    let text = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => std::fs::read_to_string(&path).map_err(|e| ScenarioError::new(&at, format!("cannot read {}: {e}", path.display())))?,
        Some("parquet") => match PARQUET_READER.get() {
            Some(read) => read(&path).map_err(|m| ScenarioError::new(&at, format!("{}: {m}", path.display())))?,
            None => return err(at, format!("{}: Parquet vector files are read through the Python package (startlab.replay); give a .csv file here", path.display())),
        },
        _ => return err(at, format!("{:?} is not a vector file; expected a .csv or .parquet file (docs/REPLAY.md)", r.file)),
    };
    let connections = parse_vectors(&text).map_err(|m| ScenarioError::new(&at, format!("{}: {m}", path.display())))?;
    for c in &connections {
        if c.rtt_class >= d.rtts.len() {
            return err(at, format!("{}: line {}: connection {} has rtt_class {}, but the dumbbell has {} pairs (rtt_class 0 to {})", path.display(), c.line, c.id, c.rtt_class, d.rtts.len(), d.rtts.len() - 1));
        }
        if c.start >= duration {
            return err(at, format!("{}: line {}: connection {} starts at {}, not before the run's duration {duration}", path.display(), c.line, c.id, c.start));
        }
        if c.epochs.len() > 1_000_000 {
            return err(at, format!("{}: connection {} has {} epochs; at most 1000000", path.display(), c.id, c.epochs.len()));
        }
    }
    let epochs = connections.iter().map(|c| c.epochs.len()).sum();
    Ok(ReplaySpec { name: r.name.clone(), file: r.file.clone(), count: (connections.len(), epochs), connections, reverse, tcp, startup })
}

/// `size = { dist = ..., ... }` of an arrival process; packets are segments of `mss` bytes.
fn size_dist(p: &str, d: &raw::SizeDist, mss: u64, base: Option<&std::path::Path>) -> R<SizeSpec> {
    let bytes = |key: &str, a: Option<Amount>| -> R<u64> {
        match a {
            None => Err(missing(&format!("{p}.{key}"))),
            Some(Amount::Bytes(0)) | Some(Amount::Pkts(0)) => err(format!("{p}.{key}"), "must be positive"),
            Some(Amount::Bytes(b)) => Ok(b),
            Some(Amount::Pkts(n)) => Ok(n.saturating_mul(mss)),
            Some(Amount::Keyword(k)) => err(format!("{p}.{key}"), format!("{k:?} is not a size; expected bytes (\"100KB\") or packets (\"50pkt\")")),
        }
    };
    let given: [(&str, bool); 12] = [
        ("value", d.value.is_some()),
        ("mean", d.mean.is_some()),
        ("shape", d.shape.is_some()),
        ("cutoff", d.cutoff.is_some()),
        ("exponent", d.exponent.is_some()),
        ("ranks", d.ranks.is_some()),
        ("unit", d.unit.is_some()),
        ("min", d.min.is_some()),
        ("max", d.max.is_some()),
        ("mu", d.mu.is_some()),
        ("sigma", d.sigma.is_some()),
        ("file", d.file.is_some()),
    ];
    let only = |ok: &[&str]| -> R<()> {
        match given.iter().find(|(k, present)| *present && !ok.contains(k)) {
            Some((k, _)) => err(format!("{p}.{k}"), format!("is not a key of dist = {:?}; it takes {}", d.dist, ok.join(", "))),
            None => Ok(()),
        }
    };
    match d.dist.as_str() {
        "fixed" => {
            only(&["value"])?;
            Ok(SizeSpec::Fixed { value: bytes("value", d.value)? })
        }
        "exponential" => {
            only(&["mean"])?;
            Ok(SizeSpec::Exponential { mean: bytes("mean", d.mean)? })
        }
        "pareto" => {
            only(&["mean", "shape", "cutoff"])?;
            let mean = bytes("mean", d.mean)?;
            let shape = d.shape.ok_or_else(|| missing(&format!("{p}.shape")))?;
            if !(shape > 0.0 && shape.is_finite()) {
                return err(format!("{p}.shape"), format!("{shape} is not valid; expected a positive number (Scharf: 1.1)"));
            }
            let cutoff = bytes("cutoff", d.cutoff)?;
            if mean >= cutoff {
                return err(format!("{p}.cutoff"), format!("must be above the mean ({mean} B)"));
            }
            Ok(SizeSpec::Pareto { mean, shape, cutoff })
        }
        "zipf" => {
            only(&["exponent", "ranks", "unit"])?;
            let exponent = d.exponent.ok_or_else(|| missing(&format!("{p}.exponent")))?;
            if !(exponent > 0.0 && exponent.is_finite()) {
                return err(format!("{p}.exponent"), format!("{exponent} is not valid; expected a positive number"));
            }
            let ranks = d.ranks.ok_or_else(|| missing(&format!("{p}.ranks")))?;
            if !(1..=1_000_000).contains(&ranks) {
                return err(format!("{p}.ranks"), "must be between 1 and 1000000");
            }
            Ok(SizeSpec::Zipf { exponent, ranks, unit: bytes("unit", d.unit)? })
        }
        "uniform" => {
            only(&["min", "max"])?;
            let (min, max) = (bytes("min", d.min)?, bytes("max", d.max)?);
            if max < min {
                return err(format!("{p}.max"), format!("{max} B is below min = {min} B; expected max >= min"));
            }
            Ok(SizeSpec::Uniform { min, max })
        }
        "lognormal" => {
            only(&["mu", "sigma"])?;
            let mu = d.mu.ok_or_else(|| missing(&format!("{p}.mu")))?;
            if !(mu.is_finite() && (0.0..=40.0).contains(&mu)) {
                return err(format!("{p}.mu"), format!("{mu} is not valid; expected the mean of ln(bytes), 0 to 40 (SURGE: 9.357)"));
            }
            let sigma = d.sigma.ok_or_else(|| missing(&format!("{p}.sigma")))?;
            if !(sigma.is_finite() && sigma > 0.0 && sigma <= 10.0) {
                return err(format!("{p}.sigma"), format!("{sigma} is not valid; expected a standard deviation of ln(bytes) above 0, at most 10 (SURGE: 1.318)"));
            }
            Ok(SizeSpec::Lognormal { mu, sigma })
        }
        "empirical" => {
            only(&["file"])?;
            let file = d.file.clone().ok_or_else(|| missing(&format!("{p}.file")))?;
            let path = match base {
                Some(b) => b.join(&file),
                None => std::path::PathBuf::from(&file),
            };
            let text = std::fs::read_to_string(&path).map_err(|e| ScenarioError::new(format!("{p}.file"), format!("cannot read {}: {e}", path.display())))?;
            let points = parse_cdf(&text, CdfUnit::Bytes).map_err(|m| ScenarioError::new(format!("{p}.file"), format!("{}: {m}", path.display())))?;
            Ok(SizeSpec::Empirical { file, count: points.len(), points })
        }
        other => err(format!("{p}.dist"), format!("{other:?} is not a known size distribution; expected \"fixed\", \"exponential\", \"pareto\", \"zipf\", \"uniform\", \"lognormal\" or \"empirical\"")),
    }
}

/// `think`: a duration (the mean of an exponential law, Scharf's model) or a table
/// `{ dist = "exponential", mean }`, `{ dist = "fixed", value }`, `{ dist = "uniform", min, max }`.
fn think_law(p: &str, v: &serde_json::Value, base: Option<&std::path::Path>) -> R<Think> {
    let dur = |key: &str, x: Option<&serde_json::Value>| -> R<Dur> {
        let at = if key.is_empty() { p.to_string() } else { format!("{p}.{key}") };
        match x {
            None => Err(missing(&at)),
            Some(serde_json::Value::String(t)) => startlab_units::parse_dur(t).map_err(|e| ScenarioError::new(at, format!("{t:?} is not valid; {e}"))),
            Some(other) => err(at, format!("{other} is not a duration; expected a string such as \"3s\"")),
        }
    };
    let num = |key: &str, x: Option<&serde_json::Value>| -> R<f64> {
        let at = format!("{p}.{key}");
        match x {
            None => Err(missing(&at)),
            Some(serde_json::Value::Number(n)) => Ok(n.as_f64().unwrap_or(f64::NAN)),
            Some(other) => err(at, format!("{other} is not a number")),
        }
    };
    let table = match v {
        serde_json::Value::String(_) => return Ok(Think::Mean(dur("", Some(v))?)),
        serde_json::Value::Object(t) => t,
        other => return err(p, format!("{other} is not valid; expected a duration such as \"3s\" (exponential mean) or a table such as {{ dist = \"uniform\", min = \"0s\", max = \"5s\" }}")),
    };
    let dist = match table.get("dist") {
        Some(serde_json::Value::String(d)) => d.as_str(),
        _ => return Err(missing(&format!("{p}.dist"))),
    };
    let keys: &[&str] = match dist {
        "exponential" => &["mean"],
        "fixed" => &["value"],
        "uniform" => &["min", "max"],
        "pareto" => &["mean", "shape", "cutoff"],
        "lognormal" => &["mu", "sigma"],
        "zipf" => &["exponent", "ranks", "unit"],
        "empirical" => &["file"],
        other => {
            return err(
                format!("{p}.dist"),
                format!("{other:?} is not a known think-time law; expected \"exponential\", \"fixed\", \"uniform\", \"pareto\", \"lognormal\", \"zipf\" or \"empirical\""),
            )
        }
    };
    if let Some(k) = table.keys().find(|k| *k != "dist" && !keys.contains(&k.as_str())) {
        return err(format!("{p}.{k}"), format!("is not a key of dist = {dist:?}; it takes {}", keys.join(", ")));
    }
    let positive = |key: &str| -> R<u64> {
        let d = dur(key, table.get(key))?;
        if d == Dur::ZERO {
            return err(format!("{p}.{key}"), "must be above 0s");
        }
        Ok(d.as_nanos())
    };
    // The laws other than exponential, fixed and uniform are size laws over nanoseconds.
    Ok(match dist {
        "exponential" => Think::Mean(dur("mean", table.get("mean"))?),
        "fixed" => Think::Fixed(dur("value", table.get("value"))?),
        "uniform" => {
            let (min, max) = (dur("min", table.get("min"))?, dur("max", table.get("max"))?);
            if max < min {
                return err(format!("{p}.max"), format!("{max} is below min = {min}; expected max >= min"));
            }
            Think::Uniform { min, max }
        }
        "pareto" => {
            let mean = positive("mean")?;
            let shape = num("shape", table.get("shape"))?;
            if !(shape > 0.0 && shape.is_finite()) {
                return err(format!("{p}.shape"), format!("{shape} is not valid; expected a positive number"));
            }
            let cutoff = positive("cutoff")?;
            if mean >= cutoff {
                return err(format!("{p}.cutoff"), format!("must be above the mean ({})", Dur(mean)));
            }
            Think::Law(SizeSpec::Pareto { mean, shape, cutoff })
        }
        "lognormal" => {
            let mu = num("mu", table.get("mu"))?;
            if !(mu.is_finite() && (-20.0..=10.0).contains(&mu)) {
                return err(format!("{p}.mu"), format!("{mu} is not valid; expected the mean of ln(seconds), -20 to 10"));
            }
            let sigma = num("sigma", table.get("sigma"))?;
            if !(sigma.is_finite() && sigma > 0.0 && sigma <= 10.0) {
                return err(format!("{p}.sigma"), format!("{sigma} is not valid; expected a standard deviation of ln(seconds) above 0, at most 10"));
            }
            // ln(ns) = ln(s) + ln(1e9).
            Think::Law(SizeSpec::Lognormal { mu: mu + 1e9f64.ln(), sigma })
        }
        "zipf" => {
            let exponent = num("exponent", table.get("exponent"))?;
            if !(exponent > 0.0 && exponent.is_finite()) {
                return err(format!("{p}.exponent"), format!("{exponent} is not valid; expected a positive number"));
            }
            let ranks = num("ranks", table.get("ranks"))?;
            if !(ranks.fract() == 0.0 && (1.0..=1e6).contains(&ranks)) {
                return err(format!("{p}.ranks"), "must be a whole number between 1 and 1000000");
            }
            Think::Law(SizeSpec::Zipf { exponent, ranks: ranks as u64, unit: positive("unit")? })
        }
        _ => {
            let file = match table.get("file") {
                Some(serde_json::Value::String(f)) => f.clone(),
                Some(other) => return err(format!("{p}.file"), format!("{other} is not a file name")),
                None => return Err(missing(&format!("{p}.file"))),
            };
            let path = match base {
                Some(b) => b.join(&file),
                None => std::path::PathBuf::from(&file),
            };
            let text = std::fs::read_to_string(&path).map_err(|e| ScenarioError::new(format!("{p}.file"), format!("cannot read {}: {e}", path.display())))?;
            let points = parse_cdf(&text, CdfUnit::Seconds).map_err(|m| ScenarioError::new(format!("{p}.file"), format!("{}: {m}", path.display())))?;
            Think::Law(SizeSpec::Empirical { file, count: points.len(), points })
        }
    })
}

/// What the first column of an empirical CDF file holds.
#[derive(Clone, Copy, PartialEq)]
enum CdfUnit {
    /// Whole bytes.
    Bytes,
    /// Seconds (a decimal number), kept as nanoseconds.
    Seconds,
}

/// An empirical CDF file: one `bytes,probability` point per line (blank lines and `#` comments
/// skipped), bytes a whole number, both non-decreasing, probabilities in [0, 1] and the last 1.
fn parse_cdf(text: &str, unit: CdfUnit) -> Result<Vec<(u64, f64)>, String> {
    let (what, example) = match unit {
        CdfUnit::Bytes => ("bytes", "1500,0.25"),
        CdfUnit::Seconds => ("seconds", "0.5,0.25"),
    };
    let mut points: Vec<(u64, f64)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = n + 1;
        let (b, q) = line.split_once(',').ok_or_else(|| format!("line {at}: {line:?} is not a point; expected \"{what},probability\" such as \"{example}\""))?;
        let bytes: u64 = match unit {
            CdfUnit::Bytes => b.trim().parse().map_err(|_| format!("line {at}: {:?} is not a whole number of bytes", b.trim()))?,
            CdfUnit::Seconds => match b.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=1e6).contains(&x) => (x * 1e9).round() as u64,
                _ => return Err(format!("line {at}: {:?} is not a number of seconds (0 to 1e6)", b.trim())),
            },
        };
        let p: f64 = q.trim().parse().map_err(|_| format!("line {at}: {:?} is not a probability", q.trim()))?;
        if !(0.0..=1.0).contains(&p) {
            return Err(format!("line {at}: probability {p} is outside 0 to 1"));
        }
        if let Some(&(pb, pp)) = points.last() {
            if bytes < pb || p < pp {
                let show = |v: u64| if unit == CdfUnit::Seconds { format!("{}", v as f64 / 1e9) } else { v.to_string() };
                return Err(format!("line {at}: ({}, {p}) goes back from ({}, {pp}); {what} and probabilities must not decrease (a CDF is monotone)", show(bytes), show(pb)));
            }
        }
        points.push((bytes, p));
    }
    match points.last() {
        None => Err(format!("has no points; expected \"{what},probability\" lines")),
        Some(&(_, p)) if p != 1.0 => Err(format!("its last probability is {p}; a CDF must end at 1")),
        Some(&(0, _)) if unit == CdfUnit::Bytes => Err("its largest size is 0 bytes; sizes must reach at least 1".into()),
        Some(_) => Ok(points),
    }
}

/// `[quick_start]`: which routers take part, and their admission rule's share and window.
fn quick_start(q: Option<&raw::QuickStart>, topo: &Topology) -> R<QuickStartSpec> {
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

fn topology(t: &raw::Topology, flows: u64) -> R<Topology> {
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

fn missing(path: &str) -> ScenarioError {
    ScenarioError::new(path, "missing: this key is required")
}

fn graph_ends(p: &str, g: &Graph, from: Option<&str>, to: Option<&str>) -> R<Ends> {
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

fn flow_ends(p: &str, f: &raw::Flow, index: usize, replicate: u64, topo: &Topology) -> R<Ends> {
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

/// `plugins`: the Python modules that register the scenario's plug-in algorithms (imported by the
/// Python package before the scenario is checked; the scenario crate only checks their form).
fn plugin_modules(modules: &[String]) -> R<Vec<String>> {
    for (i, m) in modules.iter().enumerate() {
        let ident = |part: &str| part.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && part.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !m.split('.').all(ident) {
            return err(format!("plugins[{i}]"), format!("{m:?} is not a module path; expected a Python module such as \"my_starts\" or \"lab.starts\""));
        }
    }
    Ok(modules.to_vec())
}

fn startup(p: &str, t: Option<&std::collections::BTreeMap<String, serde_json::Value>>, mss: u64) -> R<StartupSpec> {
    let empty = std::collections::BTreeMap::new();
    let t = t.unwrap_or(&empty);
    let name = match t.get("algorithm") {
        Some(serde_json::Value::String(s)) => s.as_str(),
        Some(_) => return err(format!("{p}.algorithm"), "must be a string such as \"slow-start\""),
        None if t.is_empty() => "slow-start",
        None => return Err(missing(&format!("{p}.algorithm"))),
    };
    let Some(decl) = crate::registry::startup(name) else {
        let known: Vec<_> = crate::registry::startups().map(|a| format!("{:?}", a.name)).collect();
        return err(
            format!("{p}.algorithm"),
            format!("{name:?} is not a known startup algorithm; expected one of: {} (a Python plug-in is known once its module is imported: list it in the scenario's plugins)", known.join(", ")),
        );
    };
    let info = &decl.info;
    for key in t.keys().filter(|k| *k != "algorithm") {
        if !info.params.iter().any(|q| q.name == key) {
            let accepted: Vec<_> = info.params.iter().map(|q| q.name).collect();
            let hint = if accepted.is_empty() { "it takes none".to_string() } else { format!("it takes {}", accepted.join(", ")) };
            return err(format!("{p}.{key}"), format!("is not a parameter of {name:?} ({hint})"));
        }
    }
    let params = info.params.iter().map(|q| Ok((q.name, param_value(p, q, t.get(q.name), mss)?))).collect::<R<_>>()?;
    Ok(StartupSpec { algorithm: info.name, params })
}

/// A declared parameter's value: `given` (written under `{p}.{name}`) parsed by its kind and
/// checked against its range, else its default.
fn param_value(p: &str, q: &crate::registry::ParamInfo, given: Option<&serde_json::Value>, mss: u64) -> R<crate::registry::ParamValue> {
    let value = match given {
        Some(v) => crate::registry::parse_param(q.kind, v, mss).map_err(|m| ScenarioError::new(format!("{p}.{}", q.name), m))?,
        None => crate::registry::default_value(q, mss),
    };
    // Windows in bytes, rates as written in scenarios ("80kbps").
    let written = |x: f64| match q.kind {
        crate::registry::ParamKind::Window => format!("{x} bytes"),
        crate::registry::ParamKind::Rate => rate_text(x),
        _ => x.to_string(),
    };
    if let (Some(x), Some(range)) = (value.as_f64(), q.range.describe_with(written)) {
        if !q.range.contains(x) {
            return err(format!("{p}.{}", q.name), format!("{} is out of range; expected {range}", written(x)));
        }
    }
    Ok(value)
}

/// `names` quoted and joined: `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn quoted_alternatives(names: impl IntoIterator<Item = &'static str>) -> String {
    let quoted: Vec<_> = names.into_iter().map(|n| format!("{n:?}")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// A rate in bit/s as a scenario writes it: "80kbps", "1.5Mbps".
fn rate_text(bps: f64) -> String {
    let (scale, unit) = [(1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps")].into_iter().find(|(s, _)| bps >= *s).unwrap_or((1.0, "bps"));
    format!("\"{}{unit}\"", bps / scale)
}

/// The checks of the startup's declaration that need the flow's TCP settings or compare
/// parameters, and the per-response keys only fast startups take. `t` is the flow's `startup`
/// table as written.
fn classic_startup_checks(p: &str, t: Option<&std::collections::BTreeMap<String, serde_json::Value>>, s: &StartupSpec, tcp: &TcpSpec) -> R<()> {
    let decl = s.decl();
    // Per-response fast startups (docs/algorithms/quick-start.md, jump-start.md, more-start.md).
    let tcp_path = p.strip_suffix(".startup").or_else(|| p.rsplit_once(".mix[").map(|(head, _)| head)).unwrap_or(p);
    if (tcp.startup_after_idle || tcp.startup_min_response > 0) && !decl.per_response {
        let key = if tcp.startup_after_idle { "startup_after_idle" } else { "startup_min_response" };
        let fast: Vec<_> = crate::registry::DECLS.iter().filter(|d| d.per_response).map(|d| d.info.name).collect();
        let listed = match fast.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => fast.join(""),
        };
        return err(
            format!("{tcp_path}.tcp.{key}"),
            format!("applies to the fast startups {listed}, not {:?} (Initial-Start's window returns after idle by the RFC 5681 restart, min(IW, cwnd))", s.algorithm),
        );
    }
    let given = |k: &str| t.is_some_and(|t| t.contains_key(k));
    (decl.check)(&s.params(), &tcp.flow_context(), &given).map_err(|e| ScenarioError::new(format!("{p}.{}", e.key), e.message))
}

/// `tcp.congestion_avoidance` and the avoidance parameters of the `tcp` table `p`, checked against
/// the declarations (`startlab_cc::avoidance::DECLS`): a parameter of another algorithm is refused,
/// the chosen algorithm's are parsed by their kinds and checked against their ranges as a
/// startup's are, and its defaults filled in.
fn avoidance(p: &str, t: &raw::Tcp, mss: u64) -> R<AvoidanceSpec> {
    let decls = startlab_cc::avoidance::DECLS;
    let name = t.congestion_avoidance.as_deref().unwrap_or("reno");
    let Some(decl) = crate::registry::avoidance(name) else {
        let known = quoted_alternatives(decls.iter().map(|d| d.info.name));
        return err(format!("{p}.congestion_avoidance"), format!("{name:?} is not known; expected {known}"));
    };
    let given = t.avoidance_params();
    for key in given.keys() {
        if !decl.info.params.iter().any(|q| q.name == *key) {
            let owners = quoted_alternatives(decls.iter().filter(|d| d.info.params.iter().any(|q| q.name == *key)).map(|d| d.info.name));
            if owners.is_empty() {
                return err(format!("{p}.{key}"), format!("is not a parameter of any avoidance algorithm ({:?} takes none of that name)", decl.info.name));
            }
            return err(format!("{p}.{key}"), format!("only applies to congestion_avoidance = {owners}"));
        }
    }
    let params = decl.info.params.iter().map(|q| Ok((q.name, param_value(p, q, given.get(q.name).copied(), mss)?))).collect::<R<_>>()?;
    Ok(AvoidanceSpec { algorithm: decl.info.name, params })
}

fn tcp(p: &str, t: raw::Tcp) -> R<TcpSpec> {
    let recovery = match t.recovery.as_deref().unwrap_or("sack") {
        "tahoe" => RecoverySpec::Tahoe,
        "reno" => RecoverySpec::Reno,
        "newreno" => RecoverySpec::Newreno,
        "sack" => RecoverySpec::Sack,
        "prr" => RecoverySpec::Prr,
        "rack-tlp" => RecoverySpec::RackTlp,
        "linux" => RecoverySpec::Linux,
        "sack1" => RecoverySpec::Sack1,
        "ns3-prr" => RecoverySpec::Ns3Prr,
        other => {
            return err(
                format!("{p}.recovery"),
                format!("{other:?} is not known; expected \"tahoe\", \"reno\", \"newreno\", \"sack\", \"prr\", \"rack-tlp\", \"linux\", \"sack1\" or \"ns3-prr\""),
            )
        }
    };
    let prr_bound = match (t.prr_bound.as_deref(), recovery) {
        (None | Some("ssrb"), _) => PrrBoundSpec::Ssrb,
        (Some("crb"), _) => PrrBoundSpec::Crb,
        (Some("safe-ack"), _) => PrrBoundSpec::SafeAck,
        (Some(other), _) => return err(format!("{p}.prr_bound"), format!("{other:?} is not known; expected \"ssrb\", \"crb\" or \"safe-ack\"")),
    };
    if t.prr_bound.is_some() && recovery != RecoverySpec::Prr {
        return err(format!("{p}.prr_bound"), "applies only to recovery = \"prr\" (\"linux\" has Linux's own bound)");
    }
    let mss = t.mss.map_or(1448, |b| b.0);
    if !(1..=65_535).contains(&mss) {
        return err(format!("{p}.mss"), "must be between 1B and 65535B");
    }
    let avoidance = avoidance(p, &t, mss)?;
    let header = t.header.map_or(40, |b| b.0);
    if header > 65_535 {
        return err(format!("{p}.header"), "must be at most 65535B");
    }
    // RFC 5681 §3.1 whole-segment initial window (ALGORITHMS.md §1.3).
    let rfc_iw = if mss <= 1095 { 4 } else if mss <= 2190 { 3 } else { 2 };
    let initial_window = t.initial_window.unwrap_or(rfc_iw);
    if initial_window == 0 || initial_window > 100_000 {
        return err(format!("{p}.initial_window"), "must be between 1 and 100000 segments");
    }
    let rwnd = match t.rwnd {
        None | Some(Amount::Keyword("infinite")) => None,
        Some(Amount::Bytes(b)) => Some(b),
        Some(Amount::Pkts(n)) => Some(n * mss),
        Some(Amount::Keyword(k)) => return err(format!("{p}.rwnd"), format!("{k:?} is not valid; expected bytes, packets or \"infinite\"")),
    };
    if rwnd.is_some_and(|w| w < mss) {
        return err(format!("{p}.rwnd"), "must hold at least one segment");
    }
    let initial_ssthresh = match t.initial_ssthresh {
        None | Some(Amount::Keyword("infinite")) => SsthreshSpec::Infinite,
        Some(Amount::Bytes(b)) => SsthreshSpec::Bytes(b),
        Some(Amount::Pkts(n)) => SsthreshSpec::Bytes(n * mss),
        Some(Amount::Keyword(_)) => match rwnd {
            Some(w) => SsthreshSpec::Bytes(w),
            None => return err(format!("{p}.initial_ssthresh"), "\"rwnd\" needs a finite tcp.rwnd"),
        },
    };
    if initial_ssthresh == SsthreshSpec::Bytes(0) {
        return err(format!("{p}.initial_ssthresh"), "must be positive");
    }
    let ack = match t.ack.as_deref().unwrap_or("delayed") {
        "every-packet" => {
            if t.delack_timeout.is_some() {
                return err(format!("{p}.delack_timeout"), "only applies to ack = \"delayed\" or \"quickack\"");
            }
            AckSpec::EveryPacket
        }
        "delayed" => AckSpec::Delayed { timeout: t.delack_timeout.map_or(Dur::from_millis(200), |d| d.0) },
        // Receivers of the HyStart paper's era (Fig. 5; docs/SCENARIOS.md "Receivers"): FreeBSD 7's
        // TCPTV_DELACK = hz/10 (later releases: hz/25), Windows' TcpDelAckTicks = 2 (200 ms) and
        // TcpAckFrequency = 2; both ACK every second full-sized segment with no quick-ACK start.
        "freebsd" => AckSpec::Delayed { timeout: t.delack_timeout.map_or(Dur::from_millis(100), |d| d.0) },
        "windows" => AckSpec::Delayed { timeout: t.delack_timeout.map_or(Dur::from_millis(200), |d| d.0) },
        // Linux: quick-ACK at the start, then delayed ACKs (the `quickack` policy below).
        "quickack" | "linux" => {
            // Linux tcp_incr_quickack: min(rcv_wnd / (2*mss), 16), a zero quotient becomes 2.
            let from_rwnd = rwnd.map_or(16, |w| match w / (2 * mss) { 0 => 2, q => q.min(16) });
            AckSpec::Quickack {
                segments: t.quickack_segments.unwrap_or(from_rwnd),
                timeout: t.delack_timeout.map_or(Dur::from_millis(40), |d| d.0),
            }
        }
        other => return err(format!("{p}.ack"), format!("{other:?} is not known; expected \"every-packet\", \"delayed\", \"quickack\", or a receiver of the HyStart paper's era: \"linux\", \"freebsd\", \"windows\"")),
    };
    if t.quickack_segments.is_some() && !matches!(ack, AckSpec::Quickack { .. }) {
        return err(format!("{p}.quickack_segments"), "only applies to ack = \"quickack\" (or \"linux\")");
    }
    if let AckSpec::Delayed { timeout } | AckSpec::Quickack { timeout, .. } = ack {
        if timeout == Dur::ZERO {
            return err(format!("{p}.delack_timeout"), "must be longer than 0s");
        }
    }
    let rto_linux = match t.rto_policy.as_deref().unwrap_or("rfc6298") {
        "rfc6298" => false,
        "linux" => true,
        other => return err(format!("{p}.rto_policy"), format!("{other:?} is not known; expected \"rfc6298\" or \"linux\"")),
    };
    // RFC 6298 recommends a 1 s floor; Linux uses TCP_RTO_MIN = 200 ms.
    let rto_min = t.rto_min.map_or(if rto_linux { Dur::from_millis(200) } else { Dur::from_secs(1) }, |d| d.0);
    let rto_initial = t.rto_initial.map_or(Dur::from_secs(1), |d| d.0);
    let rto_max = t.rto_max.map_or(Dur::from_secs(60), |d| d.0);
    if rto_max < rto_min || rto_max == Dur::ZERO {
        return err(format!("{p}.rto_max"), format!("{rto_max} must be positive and at least rto_min {rto_min}"));
    }
    if rto_initial == Dur::ZERO {
        return err(format!("{p}.rto_initial"), "must be longer than 0s");
    }
    let dupthresh = t.dupthresh.unwrap_or(3);
    if !(1..=1000).contains(&dupthresh) {
        return err(format!("{p}.dupthresh"), "must be between 1 and 1000");
    }
    let sack_blocks = t.sack_blocks.unwrap_or(3);
    if !(1..=4).contains(&sack_blocks) {
        return err(format!("{p}.sack_blocks"), "must be between 1 and 4 (RFC 2018)");
    }
    let newreno_impatient = match t.newreno_timer.as_deref().unwrap_or("impatient") {
        "impatient" => true,
        "slow-but-steady" => false,
        other => return err(format!("{p}.newreno_timer"), format!("{other:?} is not known; expected \"impatient\" or \"slow-but-steady\"")),
    };
    let idle_restart = match t.idle_restart.as_deref().unwrap_or("rfc5681") {
        "rfc5681" => IdleRestartSpec::Rfc5681,
        "rfc2861" => IdleRestartSpec::Rfc2861,
        "off" => IdleRestartSpec::Off,
        other => return err(format!("{p}.idle_restart"), format!("{other:?} is not known; expected \"rfc5681\", \"rfc2861\" or \"off\"")),
    };
    Ok(TcpSpec {
        recovery,
        prr_bound,
        avoidance,
        mss,
        header,
        initial_window,
        initial_ssthresh,
        ack,
        rwnd,
        handshake: t.handshake.unwrap_or(false),
        ecn: t.ecn.unwrap_or(false),
        pacing: t.pacing.unwrap_or(false),
        rto_linux,
        rto_min,
        rto_initial,
        rto_max,
        clock_granularity: t.clock_granularity.map_or(Dur::ZERO, |d| d.0),
        limited_transmit: t.limited_transmit.unwrap_or(true),
        dupthresh,
        sack_blocks,
        cwnd_validation: t.cwnd_validation.unwrap_or(true),
        linux_ss_clamp: t.linux_ss_clamp.unwrap_or(false),
        newreno_impatient,
        idle_restart,
        startup_after_idle: t.startup_after_idle.unwrap_or(false),
        startup_min_response: match t.startup_min_response {
            None => 0,
            Some(Amount::Bytes(b)) => b,
            Some(Amount::Pkts(n)) => n.saturating_mul(mss),
            Some(Amount::Keyword(k)) => return err(format!("{p}.startup_min_response"), format!("{k:?} is not a size; expected bytes (\"10kB\") or packets (\"7pkt\")")),
        },
    })
}
