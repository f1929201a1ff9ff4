//! The registry of algorithms: every startup and avoidance algorithm with a one-line summary, its
//! source, and its parameters with their kinds, defaults and ranges. Each algorithm declares
//! itself next to its state machine in startlab-cc (`startup::DECLS`, `avoidance::DECLS`); this
//! module reads those declarations. Scenario checking is driven by them (unknown, ill-typed or
//! out-of-range parameters are refused with the key path), `startlab algorithms` prints them, and
//! `startlab.algorithms()` returns them.

use startlab_units::{parse_bytes, parse_dur, parse_pkts, parse_rate};

pub use startlab_cc::decl::{AlgorithmInfo, ParamInfo, ParamKind, ParamValue, Range};
pub use startlab_cc::avoidance::AvoidanceDecl;
pub use startlab_cc::startup::{StartupDecl, DECLS, QS_MIN_RATE_BPS};

/// Every startup algorithm's registry entry, in registry order (declared next to each state
/// machine: `startlab_cc::startup::DECLS`), then the plug-ins registered in this process, in name
/// order (`startlab_cc::startup::plugin`).
pub fn startups() -> impl Iterator<Item = &'static AlgorithmInfo> {
    DECLS.iter().copied().chain(startlab_cc::startup::plugin::all()).map(|d| &d.info)
}

/// Every avoidance algorithm's registry entry, in registry order (declared next to each state
/// machine: `startlab_cc::avoidance::DECLS`).
pub fn avoidances() -> impl Iterator<Item = &'static AlgorithmInfo> {
    startlab_cc::avoidance::DECLS.iter().map(|d| &d.info)
}

/// The avoidance algorithm named `name`.
pub fn avoidance(name: &str) -> Option<&'static AvoidanceDecl> {
    startlab_cc::avoidance::decl(name)
}

/// The startup algorithm named `name`.
pub fn startup(name: &str) -> Option<&'static StartupDecl> {
    startlab_cc::startup::decl(name)
}

/// Parses a value of `kind` from a JSON value (TOML and JSON scenarios both arrive as JSON
/// values); `mss` turns segments into bytes. `Err` says what is accepted.
pub fn parse_param(kind: ParamKind, v: &serde_json::Value, mss: u64) -> Result<ParamValue, String> {
    use serde_json::Value as V;
    match (kind, v) {
        (ParamKind::Window, V::String(s)) => {
            if let Some(p) = parse_pkts(s) {
                return Ok(ParamValue::Bytes(p * mss));
            }
            parse_bytes(s).map(ParamValue::Bytes).map_err(|_| format!("{s:?} is not a window; expected segments (\"100pkt\") or bytes (\"64KiB\")"))
        }
        (ParamKind::Duration, V::String(s)) => parse_dur(s).map(ParamValue::Dur).map_err(|e| e.to_string()),
        (ParamKind::Rate, V::String(s)) => parse_rate(s).map(|r| ParamValue::Number(r.bps() as f64)).map_err(|e| e.to_string()),
        (ParamKind::Number, V::Number(n)) => n
            .as_f64()
            .filter(|x| x.is_finite())
            .map(ParamValue::Number)
            .ok_or_else(|| format!("{n} is not a finite number")),
        (ParamKind::Integer, V::Number(n)) => n.as_u64().map(ParamValue::Integer).ok_or_else(|| format!("{n} is not a non-negative integer")),
        (ParamKind::Bool, V::Bool(b)) => Ok(ParamValue::Bool(*b)),
        (ParamKind::Choice(options), V::String(s)) if options.contains(&s.as_str()) => Ok(ParamValue::Choice(s.clone())),
        (kind, v) => Err(format!("{v} is not valid; expected {}", describe(kind))),
    }
}

/// What a kind accepts, in words.
pub fn describe(kind: ParamKind) -> String {
    match kind {
        ParamKind::Window => "segments (\"100pkt\") or bytes (\"64KiB\")".into(),
        ParamKind::Duration => "a duration such as \"2ms\"".into(),
        ParamKind::Rate => "a rate such as \"10Mbps\"".into(),
        ParamKind::Number => "a number".into(),
        ParamKind::Integer => "a non-negative integer".into(),
        ParamKind::Bool => "true or false".into(),
        ParamKind::Choice(o) => format!("one of {}", o.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ")),
    }
}

/// The default of a parameter, parsed (defaults are checked by a unit test).
pub fn default_value(p: &ParamInfo, mss: u64) -> ParamValue {
    let v: serde_json::Value = serde_json::from_str(p.default)
        .or_else(|_| serde_json::from_str(&format!("{:?}", p.default)))
        .expect("registry defaults are valid JSON or plain strings");
    parse_param(p.kind, &v, mss).expect("registry defaults parse (tested)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_in_the_registry_parses() {
        for a in startups().chain(avoidances()) {
            for p in a.params {
                let v: serde_json::Value = serde_json::from_str(p.default).unwrap_or_else(|_| serde_json::Value::String(p.default.to_string()));
                assert!(parse_param(p.kind, &v, 1000).is_ok(), "{}.{} default {:?} does not parse", a.name, p.name, p.default);
            }
        }
    }

    #[test]
    fn every_preset_default_parses_in_range_and_names_an_option_of_its_preset() {
        for a in startups().chain(avoidances()) {
            let options = match a.params.iter().find(|p| p.name == "preset").map(|p| p.kind) {
                Some(ParamKind::Choice(o)) => o,
                _ => &[],
            };
            for p in a.params {
                for (preset, default) in p.presets {
                    assert!(options.contains(preset), "{}.{}: {preset:?} is not an option of {}.preset", a.name, p.name, a.name);
                    let v = parse_param(p.kind, &serde_json::from_str(default).unwrap_or_else(|_| serde_json::Value::String(default.to_string())), 1000);
                    let v = v.unwrap_or_else(|e| panic!("{}.{} under {preset}: {e}", a.name, p.name));
                    assert!(v.as_f64().is_none_or(|x| p.range.contains(x)), "{}.{} under {preset}: out of its own range", a.name, p.name);
                }
            }
        }
    }

    #[test]
    fn every_declared_startup_builds_from_its_defaults_under_its_own_name() {
        let cx = startlab_cc::decl::FlowContext {
            mss: 1448,
            header: 52,
            initial_window: 10,
            acks: startlab_cc::startup::AckCounting::PerPacket,
            handshake: true,
            infinite_ssthresh: false,
            quic: false,
        };
        for d in DECLS {
            let values: std::collections::BTreeMap<_, _> = d.info.params.iter().map(|p| (p.name, default_value(p, cx.mss))).collect();
            let params = startlab_cc::decl::Params::new(&values);
            for p in d.info.params {
                let x = values[p.name].as_f64();
                assert!(x.is_none_or(|x| p.range.contains(x)), "{}.{}: the default is out of its own range", d.info.name, p.name);
            }
            assert_eq!((d.check)(&params, &cx, &|_| false), Ok(()), "{}: its defaults fail its own check", d.info.name);
            assert_eq!(d.instantiate(&params, &cx).name(), d.info.name, "{} builds another algorithm", d.info.name);
        }
    }

    #[test]
    fn every_declared_avoidance_builds_from_its_defaults_under_its_own_name() {
        use startlab_cc::avoidance::{Avoidance, CubicConfig, PragueConfig, Reno};
        let cx = startlab_cc::decl::FlowContext {
            mss: 1448,
            header: 52,
            initial_window: 10,
            acks: startlab_cc::startup::AckCounting::PerPacket,
            handshake: false,
            infinite_ssthresh: true,
            quic: false,
        };
        for d in startlab_cc::avoidance::DECLS {
            assert_eq!(d.info.role, "avoidance");
            let values: std::collections::BTreeMap<_, _> = d.info.params.iter().map(|p| (p.name, default_value(p, cx.mss))).collect();
            for p in d.info.params {
                let x = values[p.name].as_f64();
                assert!(x.is_none_or(|x| p.range.contains(x)), "{}.{}: the default is out of its own range", d.info.name, p.name);
            }
            let built = d.instantiate(&startlab_cc::decl::Params::new(&values), &cx);
            assert_eq!(built.name(), d.info.name, "{} builds another algorithm", d.info.name);
            // The declared defaults are the state machines' own (RFC 5681, RFC 9438, the Prague draft).
            match built {
                Avoidance::Reno(r) => assert_eq!(r.ssthresh_from, Reno::default().ssthresh_from),
                Avoidance::Cubic(c) => assert_eq!(*c.config(), CubicConfig::default()),
                Avoidance::Prague(p) => assert_eq!(*p.config(), PragueConfig::default()),
            }
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = startups().chain(avoidances()).map(|a| (a.role, a.name)).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
