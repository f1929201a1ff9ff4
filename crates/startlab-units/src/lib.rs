//! Units for startlab: instants and durations in integer nanoseconds, byte counts, and rates in bits
//! per second, plus the parser for the written units of scenario files ("100Mbps", "80ms", "64KiB").
//!
//! Integer nanoseconds keep simulations exact and deterministic: no floating-point clock drifts and
//! two runs of the same scenario see the same event times on every machine.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct Time(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct Dur(pub u64);

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct Rate(pub u64);

/// Nanoseconds in one second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

impl Time {
    /// The start of the run.
    pub const ZERO: Time = Time(0);
    /// Nanoseconds since the start.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start, for reporting.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// No time at all.
    pub const ZERO: Dur = Dur(0);
    /// A duration of `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    /// A duration of `us` microseconds.
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    /// A duration of `s` seconds.
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * NS_PER_SEC)
    }
    /// A duration from floating seconds, rounded to the nearest nanosecond (negative gives zero).
    pub fn from_secs_f64(s: f64) -> Dur {
        if s <= 0.0 || s.is_nan() {
            Dur(0)
        } else {
            Dur((s * NS_PER_SEC as f64).round() as u64)
        }
    }
    /// Nanoseconds.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds, for reporting and for floating-point model arithmetic.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
}

impl Rate {
    /// Bits per second.
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialise `bytes` at this rate, rounded up to the next nanosecond so that a link
    /// never transmits faster than its rate.
    pub fn tx_time(self, bytes: u64) -> Dur {
        debug_assert!(self.0 > 0, "rates are checked positive at the scenario edge");
        let bits = bytes as u128 * 8 * NS_PER_SEC as u128;
        Dur(bits.div_ceil(self.0 as u128) as u64)
    }
    /// Bytes per second as a float, for models and reporting.
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, other: Time) -> Dur {
        debug_assert!(self >= other, "time subtraction would go negative");
        Dur(self.0.saturating_sub(other.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.as_secs_f64())
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.as_secs_f64())
    }
}

/// A parse failure; `accepted` lists what the parser would take, for the error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// The text that was given.
    pub given: String,
    /// What is accepted, in words.
    pub accepted: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not valid; expected {}", self.given, self.accepted)
    }
}

impl std::error::Error for UnitError {}

/// Splits "12.5ms" into (12.5, "ms"). The number must be a plain non-negative decimal.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .map_or(t.len(), |(i, _)| i);
    let (num, unit) = t.split_at(end);
    let num: String = num.chars().filter(|&c| c != '_').collect();
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') {
        return None;
    }
    let value: f64 = num.parse().ok()?;
    value.is_finite().then_some((value, unit.trim()))
}

const DUR_ACCEPTED: &str =
    "a non-negative number followed by a time unit: ns, us, ms, s, min (e.g. \"80ms\", \"1.5s\")";
const RATE_ACCEPTED: &str =
    "a number followed by a rate unit: bps, Kbps, Mbps, Gbps, Tbps (decimal, e.g. \"100Mbps\", \"1.5Gbps\")";
const BYTES_ACCEPTED: &str =
    "a number followed by a size unit: B, KB, MB, GB (decimal) or KiB, MiB, GiB (binary), e.g. \"64KiB\"";

/// Parses a written duration: "80ms", "1.5s", "250us", "10ns", "2min".
pub fn parse_dur(text: &str) -> Result<Dur, UnitError> {
    let err = || UnitError { given: text.to_string(), accepted: DUR_ACCEPTED };
    let (v, unit) = split_number(text).ok_or_else(err)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        _ => return Err(err()),
    };
    let ns = v * scale;
    if ns > u64::MAX as f64 / 4.0 {
        return Err(err());
    }
    Ok(Dur(ns.round() as u64))
}

/// Parses a written rate: "100Mbps", "1Gbps", "64Kbps", "9600bps". Decimal prefixes (1 Mbps = 10^6 bit/s).
pub fn parse_rate(text: &str) -> Result<Rate, UnitError> {
    let err = || UnitError { given: text.to_string(), accepted: RATE_ACCEPTED };
    let (v, unit) = split_number(text).ok_or_else(err)?;
    let scale = match unit {
        "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        _ => return Err(err()),
    };
    let bps = v * scale;
    if bps > u64::MAX as f64 / 4.0 || bps.fract() != 0.0 && bps < 1.0 {
        return Err(err());
    }
    Ok(Rate(bps.round() as u64))
}

/// Parses a written byte count: "1000B", "64KiB", "1.5MB". Fractions of a byte are refused.
pub fn parse_bytes(text: &str) -> Result<u64, UnitError> {
    let err = || UnitError { given: text.to_string(), accepted: BYTES_ACCEPTED };
    let (v, unit) = split_number(text).ok_or_else(err)?;
    let scale = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(err()),
    };
    let b = v * scale;
    if b.fract() != 0.0 || b > u64::MAX as f64 / 4.0 {
        return Err(err());
    }
    Ok(b as u64)
}

/// Parses a packet count written "1000pkt" (or "1000pkts"); whole packets only.
pub fn parse_pkts(text: &str) -> Option<u64> {
    let (v, unit) = split_number(text)?;
    (matches!(unit, "pkt" | "pkts") && v.fract() == 0.0).then_some(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_written_durations() {
        assert_eq!(parse_dur("80ms").unwrap(), Dur::from_millis(80));
        assert_eq!(parse_dur("1.5s").unwrap(), Dur(1_500_000_000));
        assert_eq!(parse_dur("250us").unwrap(), Dur::from_micros(250));
        assert_eq!(parse_dur("0s").unwrap(), Dur::ZERO);
        assert_eq!(parse_dur("2min").unwrap(), Dur::from_secs(120));
        for bad in ["80", "ms", "-1s", "80 parsecs", "1e3ms", ".5s", ""] {
            assert!(parse_dur(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn parses_written_rates_in_decimal_prefixes() {
        assert_eq!(parse_rate("100Mbps").unwrap(), Rate(100_000_000));
        assert_eq!(parse_rate("1Gbps").unwrap(), Rate(1_000_000_000));
        assert_eq!(parse_rate("1.5Mbps").unwrap(), Rate(1_500_000));
        assert!(parse_rate("100Mbs").is_err());
        assert!(parse_rate("100MBps").is_err(), "bytes per second is not a rate unit we accept");
    }

    #[test]
    fn parses_written_sizes_with_binary_and_decimal_prefixes() {
        assert_eq!(parse_bytes("1000B").unwrap(), 1000);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65536);
        assert_eq!(parse_bytes("100KB").unwrap(), 100_000);
        assert!(parse_bytes("0.5B").is_err());
        assert_eq!(parse_pkts("1000pkt"), Some(1000));
        assert_eq!(parse_pkts("1000B"), None);
    }

    #[test]
    fn serialisation_time_rounds_up() {
        // 1000 B at 100 Mbps = 80 us exactly; 1 B at 3 bps = 2.666.. s, rounded up.
        assert_eq!(Rate(100_000_000).tx_time(1000), Dur::from_micros(80));
        assert_eq!(Rate(3).tx_time(1), Dur(2_666_666_667));
    }
}
