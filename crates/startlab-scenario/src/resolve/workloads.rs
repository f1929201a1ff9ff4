//! Workloads: flow arrival processes, closed-loop users, replayed connection vectors, and the size
//! and think-time laws they draw from.

use super::*;

/// One `[[arrivals]]` process.
pub(super) fn arrival(p: &str, a: &raw::Arrivals, topo: &Topology, duration: Dur, names: &mut std::collections::BTreeSet<String>, base: Option<&std::path::Path>) -> R<ArrivalSpec> {
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
pub(super) struct Picks<'a> {
    startup: Option<&'a BTreeMap<String, serde_json::Value>>,
    mix: Option<&'a Vec<BTreeMap<String, serde_json::Value>>>,
    direction: Option<&'a str>,
    from: Option<&'a Vec<String>>,
    to: Option<&'a Vec<String>>,
}

/// The startup mix and the host-picking rule of `[[arrivals]]` or `[[users]]` at `p`.
pub(super) fn mix_and_ends(p: &str, w: &Picks<'_>, tcp: &TcpSpec, topo: &Topology) -> R<(Vec<(StartupSpec, f64)>, ArrivalEnds)> {
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
                classic_startup_checks(&q, Some(&table), &s, tcp, false)?;
                if s.decl().sets_initial_window {
                    return err(format!("{q}.algorithm"), format!("{:?} sets the initial window; give it as tcp.initial_window of a separate {group}", s.name()));
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
            classic_startup_checks(&format!("{p}.startup"), *startup_table, &s, tcp, false)?;
            if s.decl().sets_initial_window {
                return err(format!("{p}.startup.algorithm"), format!("{:?} sets the initial window; use tcp.initial_window in {group}", s.name()));
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
pub(super) fn user_group(p: &str, u: &raw::Users, topo: &Topology, duration: Dur, names: &mut std::collections::BTreeSet<String>, base: Option<&std::path::Path>) -> R<UserSpec> {
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
pub(super) const DEFAULT_USER_REQUEST: u64 = 300;

/// One `[[replay]]` table.
pub(super) fn replay_group(p: &str, r: &raw::Replay, topo: &Topology, duration: Dur, names: &mut std::collections::BTreeSet<String>, base: Option<&std::path::Path>) -> R<ReplaySpec> {
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
    classic_startup_checks(&format!("{p}.startup"), r.startup.as_ref(), &startup, &tcp, false)?;
    if startup.decl().sets_initial_window {
        return err(format!("{p}.startup.algorithm"), format!("{:?} sets the initial window; use tcp.initial_window in [[replay]]", startup.name()));
    }
    let at = format!("{p}.file");
    let path = scenario_path(base, &r.file);
    let connections = read_named_table(&at, base, &r.file, parse_vectors)?;
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
pub(super) fn size_dist(p: &str, d: &raw::SizeDist, mss: u64, base: Option<&std::path::Path>) -> R<SizeSpec> {
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
            let points = read_named(&format!("{p}.file"), base, &file, |text| parse_cdf(text, CdfUnit::Bytes))?;
            Ok(SizeSpec::Empirical { file, count: points.len(), points })
        }
        other => err(format!("{p}.dist"), format!("{other:?} is not a known size distribution; expected \"fixed\", \"exponential\", \"pareto\", \"zipf\", \"uniform\", \"lognormal\" or \"empirical\"")),
    }
}

/// `think`: a duration (the mean of an exponential law, Scharf's model) or a table
/// `{ dist = "exponential", mean }`, `{ dist = "fixed", value }`, `{ dist = "uniform", min, max }`.
pub(super) fn think_law(p: &str, v: &serde_json::Value, base: Option<&std::path::Path>) -> R<Think> {
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
            let points = read_named(&format!("{p}.file"), base, &file, |text| parse_cdf(text, CdfUnit::Seconds))?;
            Think::Law(SizeSpec::Empirical { file, count: points.len(), points })
        }
    })
}
