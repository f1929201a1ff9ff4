//! Field types that deserialize from written units and refuse anything else with a message that
//! says what is accepted. The key path is added by `serde_path_to_error`.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use startlab_units::{parse_bytes, parse_dur, parse_pkts, parse_rate, Dur, Rate};
use std::fmt;

macro_rules! unit_field {
    ($name:ident, $inner:ty, $parse:expr, $expect:literal) => {
        #[doc = concat!("A field written as ", $expect, ".")]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(|e| E::custom(e))
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

unit_field!(DurV, Dur, parse_dur, "a duration string such as \"80ms\" or \"1.5s\" (units ns, us, ms, s, min)");
unit_field!(RateV, Rate, parse_rate, "a rate string such as \"100Mbps\" (units bps, Kbps, Mbps, Gbps, Tbps)");
unit_field!(BytesV, u64, parse_bytes, "a size string such as \"1000B\" or \"64KiB\" (units B, KB, MB, GB, KiB, MiB, GiB)");

/// An amount that may be written in bytes ("64KB"), in packets ("20pkt"), or as a keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    /// Bytes.
    Bytes(u64),
    /// Packets (segments of the flow's MSS, or packets at a queue).
    Pkts(u64),
    /// A keyword such as "infinite" or "rwnd"; which keywords are allowed is checked by the field.
    Keyword(&'static str),
}

/// Keywords any [`Amount`] can carry; each field says which it accepts.
const KEYWORDS: [&str; 2] = ["infinite", "rwnd"];

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Amount;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as \"64KB\", a packet count such as \"20pkt\", or a keyword")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Amount, E> {
                if let Some(k) = KEYWORDS.iter().find(|k| **k == s) {
                    return Ok(Amount::Keyword(k));
                }
                if let Some(p) = parse_pkts(s) {
                    return Ok(Amount::Pkts(p));
                }
                parse_bytes(s).map(Amount::Bytes).map_err(|_| {
                    E::custom(format!(
                        "{s:?} is not valid; expected bytes (\"1000B\", \"64KiB\", \"1MB\"), packets (\"20pkt\") or a keyword"
                    ))
                })
            }
        }
        d.deserialize_str(V)
    }
}
