//! `[[impairments]]`: seeded path impairments (random and Gilbert-Elliott loss, jitter with or
//! without reordering, aggregation, a piecewise-constant rate schedule, a Mahimahi-style delivery
//! trace) on one link's directions. Semantics in docs/IMPAIRMENTS.md; keys in docs/SCENARIOS.md.

use crate::raw;
use crate::{ScenarioError, Topology};
use serde::Serialize;
use startlab_units::{Dur, Rate};
use std::path::Path;

type R<T> = Result<T, ScenarioError>;

fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> R<T> {
    Err(ScenarioError::new(path, msg))
}

/// Impairments of one link, applied to its forward and/or reverse direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImpairmentSpec {
    /// Link name (the part of a results `link` before the colon).
    pub link: String,
    /// Impair the direction first end -> second end.
    pub forward: bool,
    /// Impair the direction second end -> first end.
    pub reverse: bool,
    /// Loss decided at link entry.
    pub loss: Option<LossSpec>,
    /// Extra per-packet delay.
    pub jitter: Option<JitterSpec>,
    /// Hold packets at the far end and release them at multiples of an interval.
    pub aggregate: Option<AggregateSpec>,
    /// Interrupt coalescing at the far node (left out of the resolved scenario when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coalesce: Option<CoalesceSpec>,
    /// Capacity schedule: from each time on, the rate (sorted, times strictly increasing). Before
    /// the first point the topology's rate applies. Empty: no schedule.
    pub rate: Vec<(Dur, Rate)>,
    /// Delivery-opportunity trace replacing the link's rate.
    pub rate_trace: Option<RateTraceSpec>,
}

/// A loss process.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LossSpec {
    /// Each packet lost independently with probability `p`.
    Random {
        /// Loss probability, in [0, 1].
        p: f64,
    },
    /// Two-state Markov chain advanced once per packet.
    GilbertElliott {
        /// P(good -> bad) per packet.
        p_gb: f64,
        /// P(bad -> good) per packet.
        p_bg: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
}

/// A jitter distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum JitterDist {
    /// Uniform integer nanoseconds in [0, max].
    Uniform {
        /// Largest extra delay.
        max: Dur,
    },
    /// Approximately normal (Irwin-Hall, 12 uniforms), negative draws become 0.
    Normal {
        /// Mean extra delay.
        mean: Dur,
        /// Standard deviation.
        sd: Dur,
    },
}

/// Jitter on a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct JitterSpec {
    /// The distribution.
    pub dist: JitterDist,
    /// Packets may overtake each other (else arrival = max(previous arrival, own)).
    pub reorder: bool,
}

/// Aggregation on a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AggregateSpec {
    /// Release instants are the multiples of this (> 0).
    pub interval: Dur,
    /// At most this many packets per release instant; the rest wait for the next ones.
    pub max_burst: Option<u64>,
}

/// Interrupt coalescing (a NIC's receive interrupt moderation, `ethtool -C rx-usecs/rx-frames`):
/// the first packet to arrive when no batch is open opens one that the host sees `timeout` later;
/// packets arriving before then join it; a batch holds at most `frames` packets (the next one
/// opens a new batch). Every packet of a batch reaches the far node at the batch's release time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CoalesceSpec {
    /// From a batch's first packet to its release (> 0).
    pub timeout: Dur,
    /// Most packets per batch (`None`: no cap).
    pub frames: Option<u64>,
}

/// A Mahimahi-style delivery trace, read once when the scenario is resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RateTraceSpec {
    /// The file as written in the scenario.
    pub file: String,
    /// Delivery opportunities within one period, ms, non-decreasing.
    #[serde(skip)]
    pub opportunities_ms: Vec<u64>,
    /// The period (the last timestamp), ms, > 0.
    pub period_ms: u64,
    /// Opportunities per period.
    pub count: usize,
}

/// Link names of a topology (dumbbell: `bottleneck`, `access-s{i}`, `access-d{i}`,
/// `access-xs{j}`, `access-xd{j}` as built by startlab-sim's build.rs; graph: the link names).
fn link_names(topo: &Topology, cross: usize) -> Vec<String> {
    match topo {
        Topology::Dumbbell(d) => {
            let mut v = vec!["bottleneck".to_string()];
            for i in 0..d.rtts.len() {
                v.push(format!("access-s{i}"));
                v.push(format!("access-d{i}"));
            }
            for j in 0..cross {
                v.push(format!("access-xs{j}"));
                v.push(format!("access-xd{j}"));
            }
            v
        }
        Topology::Graph(g) => g.links.iter().map(|l| l.name.clone()).collect(),
    }
}

fn prob(path: String, v: Option<f64>, default: Option<f64>) -> R<f64> {
    let Some(x) = v.or(default) else {
        return err(path, "missing: this key is required (a probability between 0 and 1)");
    };
    if !(0.0..=1.0).contains(&x) {
        return err(path, format!("{x} is not a probability; expected a number between 0 and 1"));
    }
    Ok(x)
}

fn loss(p: &str, l: &raw::Loss) -> R<LossSpec> {
    let extra = |ok: &[&str]| -> R<()> {
        for (key, given) in [("p", l.p.is_some()), ("p_gb", l.p_gb.is_some()), ("p_bg", l.p_bg.is_some()), ("loss_good", l.loss_good.is_some()), ("loss_bad", l.loss_bad.is_some())] {
            if given && !ok.contains(&key) {
                return err(format!("{p}.{key}"), format!("is not a key of kind = {:?}; it takes {ok:?}", l.kind));
            }
        }
        Ok(())
    };
    match l.kind.as_str() {
        "random" => {
            extra(&["p"])?;
            Ok(LossSpec::Random { p: prob(format!("{p}.p"), l.p, None)? })
        }
        "gilbert-elliott" => {
            extra(&["p_gb", "p_bg", "loss_good", "loss_bad"])?;
            let p_gb = prob(format!("{p}.p_gb"), l.p_gb, None)?;
            let p_bg = prob(format!("{p}.p_bg"), l.p_bg, None)?;
            if p_bg == 0.0 && p_gb > 0.0 {
                return err(format!("{p}.p_bg"), "must be greater than 0: with p_bg = 0 the bad state is never left");
            }
            Ok(LossSpec::GilbertElliott {
                p_gb,
                p_bg,
                loss_good: prob(format!("{p}.loss_good"), l.loss_good, Some(0.0))?,
                loss_bad: prob(format!("{p}.loss_bad"), l.loss_bad, Some(1.0))?,
            })
        }
        other => err(format!("{p}.kind"), format!("{other:?} is not a known loss model; expected \"random\" or \"gilbert-elliott\"")),
    }
}

fn jitter(p: &str, j: &raw::Jitter) -> R<JitterSpec> {
    let extra = |ok: &[&str]| -> R<()> {
        for (key, given) in [("max", j.max.is_some()), ("mean", j.mean.is_some()), ("sd", j.sd.is_some())] {
            if given && !ok.contains(&key) {
                return err(format!("{p}.{key}"), format!("is not a key of kind = {:?}; it takes {ok:?} and reorder", j.kind));
            }
        }
        Ok(())
    };
    let dist = match j.kind.as_str() {
        "uniform" => {
            extra(&["max"])?;
            let max = j.max.ok_or_else(|| ScenarioError::new(format!("{p}.max"), "missing: this key is required (a duration such as \"5ms\")"))?.0;
            JitterDist::Uniform { max }
        }
        "normal" => {
            extra(&["mean", "sd"])?;
            let mean = j.mean.ok_or_else(|| ScenarioError::new(format!("{p}.mean"), "missing: this key is required (a duration such as \"2ms\")"))?.0;
            let sd = j.sd.ok_or_else(|| ScenarioError::new(format!("{p}.sd"), "missing: this key is required (a duration such as \"1ms\")"))?.0;
            JitterDist::Normal { mean, sd }
        }
        other => return err(format!("{p}.kind"), format!("{other:?} is not a known jitter distribution; expected \"uniform\" or \"normal\"")),
    };
    let bound = match dist {
        JitterDist::Uniform { max } => max.as_nanos(),
        JitterDist::Normal { mean, sd } => mean.as_nanos().saturating_add(sd.as_nanos().saturating_mul(6)),
    };
    if bound > 3_600_000_000_000 {
        return err(p.to_string(), "the jitter may reach more than 60min; expected at most \"60min\" of extra delay");
    }
    Ok(JitterSpec { dist, reorder: j.reorder.unwrap_or(false) })
}

/// Parses a Mahimahi-style trace: one integer millisecond timestamp per line (blank lines and
/// lines starting with `#` are skipped), non-decreasing, the last one > 0.
pub(crate) fn parse_trace(text: &str) -> Result<Vec<u64>, String> {
    let mut v = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let t: u64 = l.parse().map_err(|_| format!("line {}: {l:?} is not a timestamp; expected a whole number of milliseconds", n + 1))?;
        if v.last().is_some_and(|&prev| t < prev) {
            return Err(format!("line {}: timestamp {t} is before the previous one; timestamps must not decrease", n + 1));
        }
        if t > 86_400_000 {
            return Err(format!("line {}: timestamp {t} ms is more than a day; expected at most 86400000", n + 1));
        }
        v.push(t);
    }
    match v.last() {
        None => Err("has no timestamps; expected one millisecond timestamp per line".into()),
        Some(0) => Err("its last timestamp (the period) is 0; expected a last timestamp greater than 0".into()),
        Some(_) => Ok(v),
    }
}

/// Checks `[[impairments]]` against the topology and reads trace files.
pub(crate) fn resolve(items: &[raw::Impairment], topo: &Topology, cross: usize, base: Option<&Path>) -> R<Vec<ImpairmentSpec>> {
    let names = link_names(topo, cross);
    let mut out: Vec<ImpairmentSpec> = Vec::new();
    for (k, it) in items.iter().enumerate() {
        let p = format!("impairments[{k}]");
        if !names.contains(&it.link) {
            let shown: Vec<&String> = names.iter().take(12).collect();
            let more = if names.len() > 12 { format!(" (and {} more)", names.len() - 12) } else { String::new() };
            return err(format!("{p}.link"), format!("{:?} is not a link; links are {shown:?}{more}", it.link));
        }
        let (forward, reverse) = match it.direction.as_deref().unwrap_or("forward") {
            "forward" => (true, false),
            "reverse" => (false, true),
            "both" => (true, true),
            other => return err(format!("{p}.direction"), format!("{other:?} is not a direction; expected \"forward\", \"reverse\" or \"both\"")),
        };
        if let Some(prev) = out.iter().position(|o| o.link == it.link && ((o.forward && forward) || (o.reverse && reverse))) {
            return err(format!("{p}.link"), format!("{:?} in this direction is already impaired by impairments[{prev}]; give each direction one table", it.link));
        }
        let loss = it.loss.as_ref().map(|l| loss(&format!("{p}.loss"), l)).transpose()?;
        let jitter = it.jitter.as_ref().map(|j| jitter(&format!("{p}.jitter"), j)).transpose()?;
        let aggregate = match &it.aggregate {
            None => None,
            Some(a) => {
                if a.interval.0 == Dur::ZERO {
                    return err(format!("{p}.aggregate.interval"), "must be longer than 0s");
                }
                if a.max_burst == Some(0) {
                    return err(format!("{p}.aggregate.max_burst"), "must be at least 1 packet");
                }
                Some(AggregateSpec { interval: a.interval.0, max_burst: a.max_burst })
            }
        };
        let coalesce = match &it.coalesce {
            None => None,
            Some(c) => {
                if c.timeout.0 == Dur::ZERO {
                    return err(format!("{p}.coalesce.timeout"), "must be longer than 0s");
                }
                if c.frames == Some(0) {
                    return err(format!("{p}.coalesce.frames"), "must be at least 1 packet");
                }
                if aggregate.is_some() {
                    return err(format!("{p}.coalesce"), "give aggregate or coalesce on one direction, not both");
                }
                Some(CoalesceSpec { timeout: c.timeout.0, frames: c.frames })
            }
        };
        let mut rate = Vec::new();
        if let Some(points) = &it.rate {
            if points.is_empty() {
                return err(format!("{p}.rate"), "is empty; expected a list of [time, rate] pairs such as [[\"0s\", \"100Mbps\"], [\"10s\", \"20Mbps\"]]");
            }
            for (i, (t, r)) in points.iter().enumerate() {
                if r.0 .0 == 0 {
                    return err(format!("{p}.rate[{i}]"), "the rate must be positive");
                }
                if rate.last().is_some_and(|&(prev, _): &(Dur, Rate)| t.0 <= prev) {
                    return err(format!("{p}.rate[{i}]"), format!("time {} is not after the previous change point; times must increase", t.0));
                }
                rate.push((t.0, r.0));
            }
        }
        let rate_trace = match &it.rate_trace {
            None => None,
            Some(file) => {
                if !rate.is_empty() {
                    return err(format!("{p}.rate_trace"), "give either rate (a schedule) or rate_trace (a delivery trace), not both");
                }
                let ops = crate::resolve::read_named(&format!("{p}.rate_trace"), base, file, parse_trace)?;
                let period_ms = *ops.last().unwrap_or(&1);
                Some(RateTraceSpec { file: file.clone(), count: ops.len(), opportunities_ms: ops, period_ms })
            }
        };
        if loss.is_none() && jitter.is_none() && aggregate.is_none() && coalesce.is_none() && rate.is_empty() && rate_trace.is_none() {
            return err(p, "impairs nothing; give at least one of loss, jitter, aggregate, coalesce, rate, rate_trace");
        }
        out.push(ImpairmentSpec { link: it.link.clone(), forward, reverse, loss, jitter, aggregate, coalesce, rate, rate_trace });
    }
    Ok(out)
}

/// Checks `[trace.packets]`: every link exists, the direction is one of three, every flow name
/// names a flow, a flow group, an arrival process or a cross source (`names`).
///
/// `[trace.pcap]` selects with the same three keys (`p` is the table's key path).
pub(crate) fn resolve_packet_trace(p: &str, pt: &raw::PacketTrace, topo: &Topology, cross: usize, names: &[&str]) -> R<crate::PacketTraceSpec> {
    let known = link_names(topo, cross);
    if pt.links.is_empty() {
        return err(format!("{p}.links"), "is empty; expected at least one link name such as \"bottleneck\"");
    }
    let (forward, reverse) = match pt.direction.as_deref().unwrap_or("both") {
        "forward" => (true, false),
        "reverse" => (false, true),
        "both" => (true, true),
        other => return err(format!("{p}.direction"), format!("{other:?} is not a direction; expected \"forward\", \"reverse\" or \"both\"")),
    };
    let mut links: Vec<(String, bool, bool)> = Vec::new();
    for (i, l) in pt.links.iter().enumerate() {
        if !known.contains(l) {
            let shown: Vec<&String> = known.iter().take(12).collect();
            let more = if known.len() > 12 { format!(" (and {} more)", known.len() - 12) } else { String::new() };
            return err(format!("{p}.links[{i}]"), format!("{l:?} is not a link; links are {shown:?}{more}"));
        }
        if links.iter().any(|(n, _, _)| n == l) {
            return err(format!("{p}.links[{i}]"), format!("{l:?} is listed twice"));
        }
        links.push((l.clone(), forward, reverse));
    }
    if let Some(flows) = &pt.flows {
        if flows.is_empty() {
            return err(format!("{p}.flows"), "is empty; leave it out to trace every packet, or name flows or cross sources");
        }
        for (i, f) in flows.iter().enumerate() {
            if !names.iter().any(|n| crate::name_matches(f, n) || n == f) {
                let shown: Vec<&&str> = names.iter().take(12).collect();
                return err(format!("{p}.flows[{i}]"), format!("{f:?} names no flow, arrival process, user group, replay or cross source; names are {shown:?}"));
            }
        }
    }
    Ok(crate::PacketTraceSpec { links, flows: pt.flows.clone() })
}

#[cfg(test)]
mod tests {
    use super::parse_trace;

    #[test]
    fn traces_parse_and_bad_ones_are_refused_with_the_line() {
        assert_eq!(parse_trace("1\n1\n# c\n\n5\n").unwrap(), vec![1, 1, 5]);
        assert!(parse_trace("3\n2\n").unwrap_err().contains("line 2"));
        assert!(parse_trace("x\n").unwrap_err().contains("line 1"));
        assert!(parse_trace("0\n").unwrap_err().contains("period"));
        assert!(parse_trace("").unwrap_err().contains("no timestamps"));
    }
}
