//! Algorithm declarations: each plug-in states, in its own file next to its state machine, its
//! name, summary, source and typed parameters (kind, default, help, valid range) and how it is
//! built from them. The scenario check, `startlab algorithms`, the docs table and the simulator's
//! construction are all derived from these declarations (`startup::DECLS`, `avoidance::DECLS`).
//!
//! A parameter is a typed constant ([`Param`]): the declaration lists it and the builder reads it
//! with [`Params::get`], so a name is written once and a builder cannot read a parameter under a
//! misspelt name or as the wrong type.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use startlab_units::Dur;

/// How a parameter is written.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum ParamKind {
    /// A window: segments ("100pkt") or bytes ("64KiB"), resolved to bytes with the flow's MSS.
    Window,
    /// A duration ("2ms").
    Duration,
    /// A rate ("10Mbps"), resolved to bit/s as a number.
    Rate,
    /// A TOML float or integer.
    Number,
    /// A TOML integer >= 0.
    Integer,
    /// A TOML boolean.
    Bool,
    /// One of a fixed set of strings.
    Choice(&'static [&'static str]),
}

/// The values a number, integer, rate or window (in bytes) parameter accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum Range {
    /// Any value of the kind.
    Any,
    /// At least this.
    AtLeast(f64),
    /// More than this.
    Above(f64),
    /// From the first to the second, both included.
    Between(f64, f64),
    /// Between the first and the second, both excluded (CUBIC's `β_cubic`, in (0, 1)).
    StrictlyBetween(f64, f64),
}

impl Range {
    /// Whether `x` is in the range.
    pub fn contains(self, x: f64) -> bool {
        match self {
            Range::Any => true,
            Range::AtLeast(lo) => x >= lo,
            Range::Above(lo) => x > lo,
            Range::Between(lo, hi) => (lo..=hi).contains(&x),
            Range::StrictlyBetween(lo, hi) => lo < x && x < hi,
        }
    }

    /// The range in words ("at least 1"), `None` for [`Range::Any`].
    pub fn describe(self) -> Option<String> {
        self.describe_with(|x| x.to_string())
    }

    /// The range in words with its bounds written by `value` (e.g. as a rate, "80kbps").
    pub fn describe_with(self, value: impl Fn(f64) -> String) -> Option<String> {
        match self {
            Range::Any => None,
            Range::AtLeast(lo) => Some(format!("at least {}", value(lo))),
            Range::Above(lo) => Some(if lo == 0.0 { "positive".into() } else { format!("above {}", value(lo)) }),
            Range::Between(lo, hi) => Some(format!("from {} to {}", value(lo), value(hi))),
            Range::StrictlyBetween(lo, hi) => Some(format!("between {} and {}, both excluded", value(lo), value(hi))),
        }
    }
}

/// One parameter of an algorithm.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ParamInfo {
    /// Key in `startup = { ... }`; for an avoidance algorithm, a key of the flow's `tcp` table.
    pub name: &'static str,
    /// How it is written.
    pub kind: ParamKind,
    /// Default, written as in a scenario file ("100pkt", "8", "2ms", "true", "\"coarse\"").
    pub default: &'static str,
    /// What it means.
    pub help: &'static str,
    /// The values it accepts (windows: in bytes), checked when the scenario is read.
    pub range: Range,
    /// Its default under a named preset of the algorithm, as (preset, default written as
    /// `default` is): a scenario that chooses that `preset` and does not give this key gets this
    /// default instead. Empty for most parameters.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "<[_]>::is_empty", serialize_with = "presets_as_map"))]
    pub presets: &'static [(&'static str, &'static str)],
}

/// `ParamInfo::presets` as a JSON object, preset -> default.
#[cfg(feature = "serde")]
fn presets_as_map<S: serde::Serializer>(presets: &&'static [(&'static str, &'static str)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(presets.iter().map(|(k, v)| (k, v)))
}

/// One algorithm.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
pub enum ParamValue {
    /// Bytes (for [`ParamKind::Window`]).
    Bytes(u64),
    /// Nanoseconds (for [`ParamKind::Duration`]).
    Dur(Dur),
    /// A number (also a rate, in bit/s).
    Number(f64),
    /// An integer.
    Integer(u64),
    /// A boolean.
    Bool(bool),
    /// A choice.
    Choice(String),
}

impl ParamValue {
    /// The value as a number, for range checks (`None` for booleans, choices and durations).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Bytes(b) => Some(*b as f64),
            ParamValue::Number(x) => Some(*x),
            ParamValue::Integer(i) => Some(*i as f64),
            ParamValue::Dur(_) | ParamValue::Bool(_) | ParamValue::Choice(_) => None,
        }
    }
}

/// A typed parameter: its declaration, and the Rust type a builder reads it as.
#[derive(Debug)]
pub struct Param<T> {
    /// What the registry lists.
    pub info: ParamInfo,
    kind: PhantomData<fn() -> T>,
}

impl<T> Param<T> {
    const fn new(name: &'static str, kind: ParamKind, default: &'static str, help: &'static str) -> Self {
        Param { info: ParamInfo { name, kind, default, help, range: Range::Any, presets: &[] }, kind: PhantomData }
    }

    /// The same parameter with other defaults under the algorithm's presets: (preset, default).
    pub const fn presets(mut self, presets: &'static [(&'static str, &'static str)]) -> Self {
        self.info.presets = presets;
        self
    }

    /// The same parameter accepting only `range`.
    pub const fn range(mut self, range: Range) -> Self {
        self.info.range = range;
        self
    }
}

impl Param<u64> {
    /// A window, read in bytes.
    pub const fn window(name: &'static str, default: &'static str, help: &'static str) -> Self {
        Self::new(name, ParamKind::Window, default, help)
    }
    /// A non-negative integer.
    pub const fn integer(name: &'static str, default: &'static str, help: &'static str) -> Self {
        Self::new(name, ParamKind::Integer, default, help)
    }
}

impl Param<f64> {
    /// A number.
    pub const fn number(name: &'static str, default: &'static str, help: &'static str) -> Self {
        Self::new(name, ParamKind::Number, default, help)
    }
    /// A rate, read in bit/s.
    pub const fn rate(name: &'static str, default: &'static str, help: &'static str) -> Self {
        Self::new(name, ParamKind::Rate, default, help)
    }
}

impl Param<Dur> {
    /// A duration.
    pub const fn duration(name: &'static str, default: &'static str, help: &'static str) -> Self {
        Self::new(name, ParamKind::Duration, default, help)
    }
}

impl Param<bool> {
    /// A boolean.
    pub const fn flag(name: &'static str, default: &'static str, help: &'static str) -> Self {
        Self::new(name, ParamKind::Bool, default, help)
    }
}

impl Param<&'static str> {
    /// One of `options` (the default is written with its quotes: "\"none\"").
    pub const fn choice(name: &'static str, options: &'static [&'static str], default: &'static str, help: &'static str) -> Self {
        Self::new(name, ParamKind::Choice(options), default, help)
    }
}

/// A Rust type a parameter value is read as.
pub trait FromParam: Sized {
    /// The value, if it is of this type.
    fn from_param(v: &ParamValue, info: &ParamInfo) -> Option<Self>;
}

impl FromParam for u64 {
    fn from_param(v: &ParamValue, _: &ParamInfo) -> Option<Self> {
        match v {
            ParamValue::Bytes(x) | ParamValue::Integer(x) => Some(*x),
            _ => None,
        }
    }
}

impl FromParam for f64 {
    fn from_param(v: &ParamValue, _: &ParamInfo) -> Option<Self> {
        match v {
            ParamValue::Number(x) => Some(*x),
            ParamValue::Integer(i) => Some(*i as f64),
            _ => None,
        }
    }
}

impl FromParam for Dur {
    fn from_param(v: &ParamValue, _: &ParamInfo) -> Option<Self> {
        match v {
            ParamValue::Dur(d) => Some(*d),
            _ => None,
        }
    }
}

impl FromParam for bool {
    fn from_param(v: &ParamValue, _: &ParamInfo) -> Option<Self> {
        match v {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl FromParam for &'static str {
    fn from_param(v: &ParamValue, info: &ParamInfo) -> Option<Self> {
        match (v, info.kind) {
            (ParamValue::Choice(c), ParamKind::Choice(options)) => options.iter().find(|o| **o == c.as_str()).copied(),
            _ => None,
        }
    }
}

/// An algorithm's resolved parameters, every default filled in.
#[derive(Clone, Copy, Debug)]
pub struct Params<'a> {
    values: &'a BTreeMap<&'static str, ParamValue>,
}

impl<'a> Params<'a> {
    /// The parameters in `values` (the scenario checked them against the declaration).
    pub fn new(values: &'a BTreeMap<&'static str, ParamValue>) -> Self {
        Params { values }
    }

    /// Every parameter and its value, in name order (for plug-ins outside this crate, which
    /// read them by name).
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &'a ParamValue)> + use<'a> {
        self.values.iter().map(|(k, v)| (*k, v))
    }

    /// The value of `p`. Panics if the algorithm's declaration does not list `p` (a programming
    /// error the every-algorithm-builds test catches), never on user input.
    pub fn get<T: FromParam>(&self, p: &Param<T>) -> T {
        self.values
            .get(p.info.name)
            .and_then(|v| T::from_param(v, &p.info))
            .unwrap_or_else(|| panic!("parameter {:?} is not in the algorithm's declaration (or has another kind)", p.info.name))
    }
}

/// What an algorithm (startup or avoidance) may need from its flow's TCP settings to be checked
/// and built.
#[derive(Clone, Copy, Debug)]
pub struct FlowContext {
    /// Segment size, bytes.
    pub mss: u64,
    /// TCP/IP header bytes per segment.
    pub header: u64,
    /// The initial window, segments.
    pub initial_window: u64,
    /// How the receiver acknowledges.
    pub acks: crate::startup::AckCounting,
    /// The flow opens with a handshake (a SYN RTT sample).
    pub handshake: bool,
    /// `tcp.initial_ssthresh` is infinite.
    pub infinite_ssthresh: bool,
    /// The flow runs QUIC (RFC 9002): acknowledgments are ACK frames that count bytes, and standard
    /// slow start is §7.3.1's (the window grows by every byte acknowledged).
    pub quic: bool,
}

impl FlowContext {
    /// Refuses `algorithm` unless the flow opens with a handshake: Jump-Start and More-Start size
    /// their first flight from the handshake RTT.
    pub fn require_handshake(&self, algorithm: &str) -> Result<(), ParamError> {
        if self.handshake {
            return Ok(());
        }
        let key = if self.quic { "quic.handshake" } else { "tcp.handshake" };
        Err(ParamError::new("algorithm", format!("{algorithm:?} sizes its first flight from the handshake RTT; it needs {key} = true")))
    }
}

/// A refusal of a startup table: the key (a parameter, or `algorithm`) and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// The offending key of `startup = { ... }`.
    pub key: &'static str,
    /// What is wrong and what is accepted.
    pub message: String,
}

impl ParamError {
    /// A refusal of `key`.
    pub fn new(key: &'static str, message: impl Into<String>) -> Self {
        ParamError { key, message: message.into() }
    }
}

/// The checks a declaration's ranges cannot say (between parameters, or against the TCP
/// settings); `given` tells which keys the scenario wrote.
pub type Check = fn(&Params<'_>, &FlowContext, given: &dyn Fn(&str) -> bool) -> Result<(), ParamError>;

/// No further checks.
pub fn no_check(_: &Params<'_>, _: &FlowContext, _: &dyn Fn(&str) -> bool) -> Result<(), ParamError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_interval_excludes_both_bounds() {
        let r = Range::StrictlyBetween(0.0, 1.0);
        assert!(r.contains(0.7) && r.contains(1e-9));
        assert!(!r.contains(0.0) && !r.contains(1.0) && !r.contains(-0.1) && !r.contains(1.5));
        assert_eq!(r.describe().as_deref(), Some("between 0 and 1, both excluded"));
        assert!(Range::Between(0.0, 1.0).contains(1.0), "a closed interval keeps its bounds");
    }
}
