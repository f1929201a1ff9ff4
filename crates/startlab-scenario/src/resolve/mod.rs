//! Rules between fields, and the defaults (each documented in docs/SCENARIOS.md). `resolve_in`
//! ties the parts, each in its own file: queues, topology (with flow ends and Quick-Start
//! routers), workloads (arrivals, users, replay, size and think laws), files named in a scenario,
//! and the `tcp` table with the algorithms.

mod cross;
mod files;
mod queues;
mod quic;
mod tcp;
mod topology;
mod workloads;

pub use files::{parse_vectors, set_parquet_reader, TableReader, VECTOR_COLUMNS};
use files::{parse_cdf, read_named_table, scenario_path, CdfUnit};
pub(crate) use files::read_named;
use queues::queue;
use tcp::{classic_startup_checks, plugin_modules, startup, tcp};
use topology::{flow_ends, graph_ends, quick_start, topology};
use workloads::{arrival, replay_group, size_dist, think_law, user_group};

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
        let mut quic = match &f.quic {
            None => None,
            Some(q) => {
                quic::refuse_tcp_only(&format!("{p}.tcp"), &format!("{p}.quic"), f.tcp.as_ref())?;
                if f.app.is_some() {
                    return err(format!("{p}.app"), "a QUIC flow carries one response of `size` bytes on one stream; request/response applications (app = { ... }) run over TCP only");
                }
                let spec = quic::quic(&format!("{p}.quic"), q)?;
                tcp = quic::controller_tcp(tcp, &spec);
                Some(spec)
            }
        };
        let startup = startup(&format!("{p}.startup"), f.startup.as_ref(), tcp.mss)?;
        if quic.is_some() && startup.decl().router_approval {
            return err(
                format!("{p}.startup.algorithm"),
                format!("{:?} asks the routers with the Quick-Start IP and TCP options (RFC 4782), which a QUIC connection cannot carry; run it over TCP", startup.name()),
            );
        }
        classic_startup_checks(&format!("{p}.startup"), f.startup.as_ref(), &startup, &tcp, quic.is_some())?;
        if startup.decl().sets_initial_window {
            // ALGORITHMS.md §10.4: Initial-Start is only a larger IW; it becomes the flow's IW.
            let given = f.tcp.as_ref().is_some_and(|t| t.initial_window.is_some()) || f.quic.as_ref().is_some_and(|q| q.initial_window.is_some());
            if given {
                let key = if quic.is_some() { "quic.initial_window" } else { "tcp.initial_window" };
                return err(format!("{p}.startup.initial_window"), format!("{:?} sets {key} from its initial_window parameter; give it only there", startup.name()));
            }
            let window = startup.params().get(&startlab_cc::startup::INITIAL_START_WINDOW);
            tcp.initial_window = window.div_ceil(tcp.mss);
            if let Some(q) = quic.as_mut() {
                q.initial_window = window.max(q.max_datagram_size);
            }
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
            flows.push(FlowSpec { name, ends, tcp: tcp.clone(), quic: quic.clone(), startup: startup.clone(), start, start_jitter, size, drops: drops.clone(), app: app.clone() });
        }
    }
    let cross = cross::sources(&s.cross, &topo, s.duration.0, &mut names)?;
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
    let selects = s.trace.as_ref().is_some_and(|t| t.packets.is_some() || t.pcap.is_some() || t.qlog.is_some());
    let (packet_trace, pcap, qlog) = if !selects {
        (None, None, None)
    } else {
        {
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
            let t = s.trace.as_ref().expect("checked");
            let packets = match &t.packets {
                Some(pt) => Some(crate::impairments::resolve_packet_trace("trace.packets", pt, &topo, cross.len(), &names)?),
                None => None,
            };
            let pcap = match &t.pcap {
                Some(pc) => Some(pcap_spec(pc, &topo, cross.len(), &names)?),
                None => None,
            };
            let qlog = match &t.qlog {
                Some(q) => Some(qlog_flows(q, &names)?),
                None => None,
            };
            (packets, pcap, qlog)
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
            rtt: t.and_then(|t| t.rtt).unwrap_or(false),
            startup: t.and_then(|t| t.startup).unwrap_or(false),
            interval: t.and_then(|t| t.interval).map_or(Dur::ZERO, |d| d.0),
            packets: packet_trace,
            pcap,
            qlog,
        },
        quick_start,
        arrivals,
        impairments,
        users,
        replay,
    })
}

/// `[trace.qlog]`: the flows to log (`None`: every flow), each naming a flow, a flow group, an
/// arrival process, a user group or a replay.
fn qlog_flows(q: &raw::QlogTrace, names: &[&str]) -> R<Option<Vec<String>>> {
    let p = "trace.qlog";
    let Some(flows) = &q.flows else { return Ok(None) };
    if flows.is_empty() {
        return err(format!("{p}.flows"), "is empty; leave it out to log every flow, or name flows");
    }
    for (i, f) in flows.iter().enumerate() {
        if !names.iter().any(|n| crate::name_matches(f, n) || n == f) {
            let shown: Vec<&&str> = names.iter().take(12).collect();
            return err(format!("{p}.flows[{i}]"), format!("{f:?} names no flow, arrival process, user group or replay; names are {shown:?}"));
        }
    }
    Ok(Some(flows.clone()))
}

/// `[trace.pcap]`: the selection as `[trace.packets]`'s, the file format and the snap length.
fn pcap_spec(pc: &raw::PcapTrace, topo: &Topology, cross: usize, names: &[&str]) -> R<crate::PcapSpec> {
    use crate::{PcapFormat, PcapSpec};
    let p = "trace.pcap";
    let as_packets = raw::PacketTrace { links: pc.links.clone(), direction: pc.direction.clone(), flows: pc.flows.clone() };
    let select = crate::impairments::resolve_packet_trace(p, &as_packets, topo, cross, names)?;
    let format = match pc.format.as_deref().unwrap_or("pcapng") {
        "pcapng" => PcapFormat::Pcapng,
        "pcap" => PcapFormat::Pcap,
        other => return err(format!("{p}.format"), format!("{other:?} is not a capture format; expected \"pcapng\" (default) or \"pcap\"")),
    };
    let snaplen = match pc.snaplen {
        None => PcapSpec::DEFAULT_SNAPLEN,
        Some(b) if (PcapSpec::MIN_SNAPLEN as u64..=PcapSpec::MAX_SNAPLEN as u64).contains(&b.0) => b.0 as u32,
        Some(b) => {
            return err(
                format!("{p}.snaplen"),
                format!("{}B is out of range; expected {}B (every header startlab writes) to {}B", b.0, PcapSpec::MIN_SNAPLEN, PcapSpec::MAX_SNAPLEN),
            )
        }
    };
    Ok(PcapSpec { select, format, snaplen })
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

fn missing(path: &str) -> ScenarioError {
    ScenarioError::new(path, "missing: this key is required")
}
