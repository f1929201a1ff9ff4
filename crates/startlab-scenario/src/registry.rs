//! The registry of algorithms: every startup and avoidance algorithm with a one-line summary, its
//! source, and its parameters with their kinds and defaults. Scenario checking is driven by it
//! (unknown or ill-typed parameters are refused with the key path), `startlab algorithms` prints
//! it, and `startlab.algorithms()` returns it.

use serde::Serialize;
use startlab_units::{parse_bytes, parse_dur, parse_pkts, Dur};

/// How a parameter is written.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// A window: segments ("100pkt") or bytes ("64KiB"), resolved to bytes with the flow's MSS.
    Window,
    /// A duration ("2ms").
    Duration,
    /// A TOML float or integer.
    Number,
    /// A TOML integer >= 0.
    Integer,
    /// A TOML boolean.
    Bool,
    /// One of a fixed set of strings.
    Choice(&'static [&'static str]),
}

/// One parameter of an algorithm.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamInfo {
    /// Key in `startup = { ... }`.
    pub name: &'static str,
    /// How it is written.
    pub kind: ParamKind,
    /// Default, written as in a scenario file ("100pkt", "8", "2ms", "true", "\"coarse\"").
    pub default: &'static str,
    /// What it means.
    pub help: &'static str,
}

/// One algorithm.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct AlgorithmInfo {
    /// Scenario name.
    pub name: &'static str,
    /// `startup` or `avoidance`.
    pub role: &'static str,
    /// One line.
    pub summary: &'static str,
    /// RFC or paper.
    pub source: &'static str,
    /// Parameters.
    pub params: &'static [ParamInfo],
}

/// A resolved parameter value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// Bytes (for [`ParamKind::Window`]).
    Bytes(u64),
    /// Nanoseconds (for [`ParamKind::Duration`]).
    Dur(Dur),
    /// A number.
    Number(f64),
    /// An integer.
    Integer(u64),
    /// A boolean.
    Bool(bool),
    /// A choice.
    Choice(String),
}

/// Every startup algorithm.
pub static STARTUP: &[AlgorithmInfo] = &[AlgorithmInfo {
    name: "slow-start",
    role: "startup",
    summary: "standard slow start: cwnd += min(N, SMSS) per ACK until ssthresh or loss",
    source: "RFC 5681 §3.1",
    params: &[],
}];

/// Every avoidance algorithm.
pub static AVOIDANCE: &[AlgorithmInfo] = &[AlgorithmInfo {
    name: "reno",
    role: "avoidance",
    summary: "Reno AIMD: cwnd += SMSS*SMSS/cwnd per ACK, ssthresh = max(FlightSize/2, 2*SMSS) on loss",
    source: "RFC 5681 §3.1",
    params: &[],
}];

/// The startup algorithm named `name`.
pub fn startup(name: &str) -> Option<&'static AlgorithmInfo> {
    STARTUP.iter().find(|a| a.name == name)
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
        for a in STARTUP.iter().chain(AVOIDANCE) {
            for p in a.params {
                let v: serde_json::Value = serde_json::from_str(p.default).unwrap_or_else(|_| serde_json::Value::String(p.default.to_string()));
                assert!(parse_param(p.kind, &v, 1000).is_ok(), "{}.{} default {:?} does not parse", a.name, p.name, p.default);
            }
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = STARTUP.iter().chain(AVOIDANCE).map(|a| (a.role, a.name)).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
