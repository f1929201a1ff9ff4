//! A flow's `tcp` table and its algorithms: the startup with its declared parameters, the avoidance
//! and its keys, and the checks between them.

use super::*;

/// `plugins`: the Python modules that register the scenario's plug-in algorithms (imported by the
/// Python package before the scenario is checked; the scenario crate only checks their form).
pub(super) fn plugin_modules(modules: &[String]) -> R<Vec<String>> {
    for (i, m) in modules.iter().enumerate() {
        let ident = |part: &str| part.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && part.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !m.split('.').all(ident) {
            return err(format!("plugins[{i}]"), format!("{m:?} is not a module path; expected a Python module such as \"my_starts\" or \"lab.starts\""));
        }
    }
    Ok(modules.to_vec())
}

pub(super) fn startup(p: &str, t: Option<&std::collections::BTreeMap<String, serde_json::Value>>, mss: u64) -> R<StartupSpec> {
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
    // A `preset` sets the defaults of the parameters that declare one for it; a key the scenario
    // gives overrides its preset.
    let preset = match info.params.iter().find(|q| q.name == "preset") {
        Some(q) => match param_value(p, q, t.get(q.name), mss)? {
            crate::registry::ParamValue::Choice(c) => Some(c),
            _ => None,
        },
        None => None,
    };
    let default_of = |q: &crate::registry::ParamInfo| match q.presets.iter().find(|(name, _)| Some(*name) == preset.as_deref()) {
        Some((_, default)) => crate::registry::ParamInfo { default, ..*q },
        None => *q,
    };
    let params = info.params.iter().map(|q| Ok((q.name, param_value(p, &default_of(q), t.get(q.name), mss)?))).collect::<R<_>>()?;
    Ok(StartupSpec { algorithm: info.name, params })
}

/// A declared parameter's value: `given` (written under `{p}.{name}`) parsed by its kind and
/// checked against its range, else its default.
pub(super) fn param_value(p: &str, q: &crate::registry::ParamInfo, given: Option<&serde_json::Value>, mss: u64) -> R<crate::registry::ParamValue> {
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
pub(super) fn quoted_alternatives(names: impl IntoIterator<Item = &'static str>) -> String {
    let quoted: Vec<_> = names.into_iter().map(|n| format!("{n:?}")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// The variant of a named enum (`RecoverySpec`, …) that key `at` gives, or `default`.
fn named<T: Copy>(at: &str, given: Option<&str>, default: T, all: &[T], name: fn(T) -> &'static str) -> R<T> {
    match given {
        None => Ok(default),
        Some(g) => all.iter().copied().find(|v| name(*v) == g).map_or_else(|| err(at, format!("{g:?} is not known; expected {}", quoted_alternatives(all.iter().map(|v| name(*v))))), Ok),
    }
}

/// A rate in bit/s as a scenario writes it: "80kbps", "1.5Mbps".
pub(super) fn rate_text(bps: f64) -> String {
    let (scale, unit) = [(1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps")].into_iter().find(|(s, _)| bps >= *s).unwrap_or((1.0, "bps"));
    format!("\"{}{unit}\"", bps / scale)
}

/// The checks of the startup's declaration that need the flow's TCP settings or compare
/// parameters, and the per-response keys only fast startups take. `t` is the flow's `startup`
/// table as written.
pub(super) fn classic_startup_checks(p: &str, t: Option<&std::collections::BTreeMap<String, serde_json::Value>>, s: &StartupSpec, tcp: &TcpSpec, quic: bool) -> R<()> {
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
    let cx = startlab_cc::decl::FlowContext { quic, ..tcp.flow_context() };
    (decl.check)(&s.params(), &cx, &given).map_err(|e| ScenarioError::new(format!("{p}.{}", e.key), e.message))
}

/// `tcp.congestion_avoidance` and the avoidance parameters of the `tcp` table `p`, checked against
/// the declarations (`startlab_cc::avoidance::DECLS`): a parameter of another algorithm is refused,
/// the chosen algorithm's are parsed by their kinds and checked against their ranges as a
/// startup's are, and its defaults filled in.
pub(super) fn avoidance(p: &str, t: &raw::Tcp, mss: u64) -> R<AvoidanceSpec> {
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

/// `tcp.ecn` (at key `at`): `false`/`true` as before L4S (`true` is classic ECN), or a name of
/// [`EcnSpec`].
fn ecn(at: &str, given: Option<&serde_json::Value>) -> R<EcnSpec> {
    let expected = || format!("expected true, false or {}", quoted_alternatives(EcnSpec::ALL.iter().map(|e| e.name())));
    match given {
        None | Some(serde_json::Value::Bool(false)) => Ok(EcnSpec::Off),
        Some(serde_json::Value::Bool(true)) => Ok(EcnSpec::Classic),
        Some(serde_json::Value::String(name)) => EcnSpec::from_name(name).map_or_else(|| err(at, format!("{name:?} is not known; {}", expected())), Ok),
        Some(other) => err(at, format!("{other} is not valid; {}", expected())),
    }
}

pub(super) fn tcp(p: &str, t: raw::Tcp) -> R<TcpSpec> {
    let recovery = named(&format!("{p}.recovery"), t.recovery.as_deref(), RecoverySpec::Sack, RecoverySpec::ALL, RecoverySpec::name)?;
    let prr_bound = named(&format!("{p}.prr_bound"), t.prr_bound.as_deref(), PrrBoundSpec::Ssrb, PrrBoundSpec::ALL, PrrBoundSpec::name)?;
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
    let idle_restart = named(&format!("{p}.idle_restart"), t.idle_restart.as_deref(), IdleRestartSpec::Rfc5681, IdleRestartSpec::ALL, IdleRestartSpec::name)?;
    let ecn = ecn(&format!("{p}.ecn"), t.ecn.as_ref())?;
    if avoidance.decl().needs_l4s && ecn != EcnSpec::L4s {
        let given = t.ecn.as_ref().map_or_else(|| "not given (false)".to_string(), |v| v.to_string());
        return err(
            format!("{p}.ecn"),
            format!(
                "congestion_avoidance = {:?} is a scalable congestion control that needs ECT(1) data and Accurate ECN feedback (RFC 9331 §4.2): tcp.ecn must be \"l4s\"; it is {given}",
                avoidance.algorithm
            ),
        );
    }
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
        ecn,
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

#[cfg(test)]
mod tests {
    use crate::registry::ParamValue::{Bool, Choice, Integer};

    /// One flow with `startup = { <startup> }`.
    fn scenario(startup: &str) -> String {
        format!(
            "seed = 1\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nbottleneck_rate = \"10Mbps\"\nrtt = \"40ms\"\naccess_rate = \"1Gbps\"\nqueue = {{ kind = \"droptail\", limit = \"100pkt\" }}\n[[flows]]\nname = \"f\"\nsize = \"infinite\"\nstartup = {{ {startup} }}\n"
        )
    }

    fn params(startup: &str) -> std::collections::BTreeMap<&'static str, crate::registry::ParamValue> {
        crate::from_toml(&scenario(startup)).unwrap_or_else(|e| panic!("{startup}: {e}")).flows.remove(0).startup.params
    }

    #[test]
    fn a_preset_sets_the_defaults_and_a_given_key_overrides_it() {
        let rfc = params(r#"algorithm = "hystart++""#);
        assert_eq!((&rfc["preset"], &rfc["css_rounds"], &rfc["ack_order"], &rfc["paced"]), (&Choice("rfc9406".into()), &Integer(5), &Choice("round-growth-sample".into()), &Bool(false)));
        let ngtcp2 = params(r#"algorithm = "hystart++", preset = "ngtcp2""#);
        assert_eq!((&ngtcp2["css_rounds"], &ngtcp2["css_check"], &ngtcp2["ack_order"], &ngtcp2["paced"]), (&Integer(4), &Choice("every-sample".into()), &Choice("growth-round-sample".into()), &Bool(true)));
        assert_eq!(ngtcp2["n_rtt_sample"], Integer(8), "a key no preset sets keeps its default");
        let mixed = params(r#"algorithm = "hystart++", preset = "ngtcp2", css_rounds = 5, paced = false"#);
        assert_eq!((&mixed["css_rounds"], &mixed["paced"], &mixed["css_check"]), (&Integer(5), &Bool(false), &Choice("every-sample".into())));
        // The resolved table read back gives the same parameters (the preset's values are written out).
        let again: Vec<String> = mixed.iter().map(|(k, v)| format!("{k} = {}", serde_json::to_string(v).unwrap())).collect();
        let text = again.join(", ").replace("min_rtt_thresh = 4000000", "min_rtt_thresh = \"4ms\"").replace("max_rtt_thresh = 16000000", "max_rtt_thresh = \"16ms\"");
        assert_eq!(params(&format!("algorithm = \"hystart++\", {text}")), mixed);
    }

    #[test]
    fn a_bad_preset_or_a_contradiction_is_refused_with_its_key() {
        let refused = |startup: &str| crate::from_toml(&scenario(startup)).expect_err(startup);
        let e = refused(r#"algorithm = "hystart++", preset = "picoquic""#);
        assert_eq!(e.path, "flows[0].startup.preset");
        assert!(e.message.contains(r#"one of "rfc9406", "quiche", "msquic", "neqo", "ngtcp2""#), "{e}");
        let e = refused(r#"algorithm = "hystart++", preset = "msquic", css_check = "every-sample""#);
        assert_eq!(e.path, "flows[0].startup.css_check");
        assert!(e.message.contains("round_min = \"first-n\""), "{e}");
        let e = refused(r#"algorithm = "hystart++", max_rtt_thresh = "3ms""#);
        assert_eq!(e.path, "flows[0].startup.max_rtt_thresh");
        let e = refused(r#"algorithm = "hystart++", preset = "quiche", css_growth_divisor = 1.5"#);
        assert_eq!((e.path.as_str(), e.message.as_str()), ("flows[0].startup.css_growth_divisor", "1.5 is out of range; expected at least 2"));
    }
}
