//! The registry of algorithms: every startup and avoidance algorithm with a one-line summary, its
//! source, and its parameters with their kinds and defaults. Scenario checking is driven by it
//! (unknown or ill-typed parameters are refused with the key path), `startlab algorithms` prints
//! it, and `startlab.algorithms()` returns it.

use serde::Serialize;
use startlab_units::{parse_bytes, parse_dur, parse_pkts, parse_rate, Dur};

/// How a parameter is written.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
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

/// One parameter of an algorithm.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamInfo {
    /// Key in `startup = { ... }`; for an avoidance algorithm, a key of the flow's `tcp` table.
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
}, AlgorithmInfo {
    name: "lss",
    role: "startup",
    summary: "Limited Slow-Start: standard slow start up to max_ssthresh, then int(SMSS/K) per ACK with K = int(cwnd/(max_ssthresh/2)), about max_ssthresh/2 segments per RTT",
    source: "RFC 3742 (ALGORITHMS.md §4)",
    params: &[
        ParamInfo { name: "max_ssthresh", kind: ParamKind::Window, default: "100pkt", help: "above this window growth is limited to about max_ssthresh/2 segments per RTT; positive (RFC 3742 recommends 100 segments)" },
    ],
}, AlgorithmInfo {
    name: "abc",
    role: "startup",
    summary: "Appropriate Byte Counting: cwnd += min(N, L*SMSS) per ACK in slow start; L = 1 in a slow start after a congestion signal",
    source: "RFC 3465 §2 (ALGORITHMS.md §5.1)",
    params: &[
        ParamInfo { name: "l", kind: ParamKind::Integer, default: "2", help: "L: the most one ACK adds, in segments; at least 1 (RFC 3465: MAY use 2, MUST NOT use more)" },
    ],
}, AlgorithmInfo {
    name: "bc",
    role: "startup",
    summary: "Byte Counting (d = 1): cwnd += N per ACK, uncapped, in the first slow start, so delayed ACKs do not slow it; packet counting after a congestion signal",
    source: "Barakat & Altman, Performance of Short TCP Transfers, §4.2 (ALGORITHMS.md §5.2)",
    params: &[],
}, AlgorithmInfo {
    name: "dbc",
    role: "startup",
    summary: "Decreasing Byte Counting: cwnd += min(N, 2*SMSS)/d(W) per ACK, d(W) = 1 + (d_max - 1)(W - 1)/(W_th - 1) with W_th = ssthresh (needs a finite tcp.initial_ssthresh)",
    source: "Barakat & Altman, Performance of Short TCP Transfers, §4.3 (ALGORITHMS.md §5.3)",
    params: &[
        ParamInfo { name: "d_max", kind: ParamKind::Number, default: "2", help: "d at W = W_th (the slow-start threshold); at least 1; 2 is standard TCP over delayed ACKs" },
    ],
}, AlgorithmInfo {
    name: "smooth-start",
    role: "startup",
    summary: "Smooth-start: slow start up to ssthresh/2^d, then each of the last d doublings over k RTTs (one increment per k+j ACKs in the j-th); needs a finite ssthresh or the packet-pair estimator",
    source: "Wang, Xin, Reeves & Shin, A Simple Refinement of Slow-start of TCP Congestion Control, §4 (ALGORITHMS.md §6)",
    params: &[
        ParamInfo { name: "preset", kind: ParamKind::Choice(&["none", "coarse-2", "fine-2", "coarse-4", "fine-4"]), default: "\"none\"", help: "the paper's strategies (Table 1): coarse-2 (k=2, d=1), fine-2 (k=3, d=1), coarse-4 (k=2, d=2), fine-4 (k=3, d=2); \"none\" uses k and d" },
        ParamInfo { name: "k", kind: ParamKind::Integer, default: "3", help: "grain number: RTTs per smoothed doubling, at least 1 (1 = slow start); not with a preset" },
        ParamInfo { name: "d", kind: ParamKind::Integer, default: "2", help: "depth number: smoothed doublings, separator ssthresh/2^d, 0 to 30 (0 = slow start); not with a preset" },
        ParamInfo { name: "counting", kind: ParamKind::Choice(&["packet", "byte"]), default: "\"packet\"", help: "\"packet\": one increment opportunity per ACK (the paper, per-packet ACKs); \"byte\": the segments an ACK covers, at most 2 (for delayed ACKs)" },
        ParamInfo { name: "ssthresh_estimator", kind: ParamKind::Choice(&["none", "packet-pair"]), default: "\"none\"", help: "\"packet-pair\": lower ssthresh to Hoe's estimate from the first back-to-back pair of ACKs (the paper's Figures 12-13)" },
    ],
}, AlgorithmInfo {
    name: "hoe",
    role: "startup",
    summary: "Hoe's packet-pair ssthresh (ns-2 NewReno startup): ssthresh = (bytes acked / gap of the first back-to-back ACK pair) x min RTT, only ever lowered; then slow start to it",
    source: "Hoe, SIGCOMM 1996; ns-2 tcp-newreno.cc; Paced Start paper Fig. 9 (ALGORITHMS.md §11.2)",
    params: &[],
}, AlgorithmInfo {
    name: "hystart",
    role: "startup",
    summary: "Hybrid Slow Start, the paper's Algorithm 1: ssthresh = cwnd once the round's ACK train spans dMin/2 or its first RTT samples rise by max(2 ms, lastRTT/16) over the previous round's",
    source: "Ha & Rhee, Hybrid Slow Start for High-Bandwidth and Long-Distance Networks, PFLDnet 2008, Algorithm 1 (ALGORITHMS.md §8.2)",
    params: &[
        ParamInfo { name: "low_ssthresh", kind: ParamKind::Window, default: "16pkt", help: "low_ssthresh: a detection sets ssthresh only while cwnd > low_ssthresh" },
        ParamInfo { name: "n_sampling", kind: ParamKind::Integer, default: "8", help: "nSampling: RTT samples per round whose minimum is compared with the previous round's" },
        ParamInfo {
            name: "gate_low_window",
            kind: ParamKind::Bool,
            default: "true",
            help: "skip detection entirely while cwnd <= low_ssthresh (ALGORITHMS.md §20 item 9); false = literal: an early detection latches and the flow runs plain slow start",
        },
    ],
}, AlgorithmInfo {
    name: "hystart-linux",
    role: "startup",
    summary: "Hybrid Slow Start as in Linux tcp_cubic.c: ssthresh = cwnd once an ACK train exceeds delay_min/2 or the round's RTT exceeds delay_min + clamp(delay_min/8, 4 ms, 16 ms); µs clock, cwnd >= 16",
    source: "Linux net/ipv4/tcp_cubic.c hystart_update (ALGORITHMS.md §8.3)",
    params: &[
        ParamInfo { name: "detect", kind: ParamKind::Choice(&["both", "ack-train", "delay"]), default: "both", help: "hystart_detect: which detectors run" },
        ParamInfo { name: "low_window", kind: ParamKind::Window, default: "16pkt", help: "hystart_low_window: detection runs only while cwnd >= low_window" },
        ParamInfo { name: "ack_delta", kind: ParamKind::Duration, default: "2ms", help: "hystart_ack_delta_us: largest gap between two ACKs of a train (<=)" },
        ParamInfo { name: "min_samples", kind: ParamKind::Integer, default: "8", help: "HYSTART_MIN_SAMPLES: RTT samples per round before the delay test" },
        ParamInfo {
            name: "ack_delay",
            kind: ParamKind::Duration,
            default: "0ms",
            help: "hystart_ack_delay(): cushion added to delay_min in the train threshold; the kernel's is about 1ms below 262 MB/s",
        },
        ParamInfo { name: "paced", kind: ParamKind::Bool, default: "false", help: "the flow is paced: the train must exceed delay_min instead of delay_min/2" },
        ParamInfo {
            name: "round_reset",
            kind: ParamKind::Choice(&["ungated", "gated", "every-ack"]),
            default: "ungated",
            help: "ungated: Linux >= 6.14 and stable kernels with commit 25c1a9ca53db (a round starts on every slow-start ACK past the round's end, at any cwnd); gated: Linux 5.16-6.13 (only while cwnd >= low_window); every-ack: Linux 2.6.29-5.15 (in cong_avoid, after the tests)",
        },
    ],
}, AlgorithmInfo {
    name: "hystart++",
    role: "startup",
    summary: "HyStart++: when a round's min RTT rises by clamp(lastRoundMinRTT/8, 4 ms, 16 ms), Conservative Slow Start (growth/4) for 5 rounds, then ssthresh = cwnd; an RTT drop in CSS resumes slow start",
    source: "RFC 9406 §4 (ALGORITHMS.md §8.5)",
    params: &[
        ParamInfo { name: "paced", kind: ParamKind::Bool, default: "false", help: "the sender paces: L = infinity instead of 8 (cwnd += min(N, L*SMSS))" },
        ParamInfo { name: "low_window_gate", kind: ParamKind::Bool, default: "false", help: "do not enter CSS while cwnd < 16 segments (not in RFC 9406; some QUIC stacks)" },
    ],
}, AlgorithmInfo {
    name: "vegas",
    role: "startup",
    summary: "Vegas modified slow start: grow every other round; once per round, when diff = cwnd*(rtt-baseRTT)/rtt exceeds gamma, cwnd = min(cwnd, floor(cwnd*baseRTT/rtt)+1) and ssthresh = cwnd",
    source: "Brakmo & Peterson, TCP Vegas, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c (ALGORITHMS.md §11.1)",
    params: &[
        ParamInfo { name: "gamma", kind: ParamKind::Number, default: "1", help: "gamma, segments: leave slow start when diff > gamma (Linux gamma = 1, ns-2 v_gamma_ 1)" },
        ParamInfo { name: "every_other_rtt", kind: ParamKind::Bool, default: "true", help: "grow only on every other round, holding cwnd in between (the paper); false grows on every ACK (Linux)" },
        ParamInfo {
            name: "diff",
            kind: ParamKind::Choice(&["paper", "linux"]),
            default: "paper",
            help: "diff divisor: the paper's (Expected-Actual)*baseRTT = cwnd*(rtt-baseRTT)/rtt, or Linux's cwnd*(rtt-baseRTT)/baseRTT",
        },
    ],
}, AlgorithmInfo {
    name: "packet-pair",
    role: "startup",
    summary: "packet-pair slow start: C_i = bytes/ACK gap over ACK pairs whose segments left back-to-back; after n_pp samples ssthresh = median(C_i)*RTT_min, and startup ends when cwnd reaches it",
    source: "Hoe, SIGCOMM 1996; ns-2 tcp-newreno.cc; [HyStart] Fig. 2e (ALGORITHMS.md §11.2-11.3)",
    params: &[ParamInfo { name: "n_pp", kind: ParamKind::Integer, default: "3", help: "n_pp: capacity samples before the estimate (0 is taken as 1)" }],
}, AlgorithmInfo {
    name: "astart",
    role: "startup",
    summary: "Westwood+ Adaptive Start: raise a finite ssthresh to rate_estimate*RTT_min whenever it is larger; slow start until cwnd reaches it (reason estimate); with an infinite ssthresh, plain slow start",
    source: "Wang, Pau, Yamada, Sanadidi, Gerla, INFOCOM 2004; Linux net/ipv4/tcp_westwood.c (ALGORITHMS.md §11.4, §20 item 15)",
    params: &[ParamInfo {
        name: "estimator",
        kind: ParamKind::Choice(&["westwood", "ere"]),
        default: "westwood",
        help: "westwood: Westwood+ BWE, one sample per RTT, 7/8 filter; ere: adaptive-interval eligible rate estimate (approximate)",
    }],
}, AlgorithmInfo {
    name: "delay-ss",
    role: "startup",
    summary: "delay-based slow start: when RTT - RTT_min exceeds tau0, switch to Limited Slow Start (RFC 3742) with max_ssthresh = cwnd; startup still ends at ssthresh or loss",
    source: "Leith et al., Delay-based AIMD congestion control, PFLDnet 2007, as summarised by [HyStart] (ALGORITHMS.md §11.5, §20 item 16)",
    params: &[ParamInfo { name: "tau0", kind: ParamKind::Duration, default: "10ms", help: "tau0: the queueing delay that switches to Limited Slow Start (not given by the sources; 10 ms is the lab's default)" }],
}, AlgorithmInfo {
    name: "search",
    role: "startup",
    summary: "SEARCH: 10 bins of 0.35 initial RTT; exit when bytes delivered over the window fall 26% below those sent over the window one RTT earlier",
    source: "draft-chung-ccwg-search-09 (Chung, Kachooei, Li, Claypool, March 2026)",
    params: &[ParamInfo {
        name: "drain",
        kind: ParamKind::Bool,
        default: "true",
        help: "at the exit set cwnd to the bytes delivered over the last initial RTT (the draft's drain target, reached at once); false keeps cwnd",
    }],
}, AlgorithmInfo {
    name: "bbr-startup",
    role: "startup",
    summary: "BBR STARTUP: pace at pacing_gain x max delivery rate (10-round max), grow cwnd by N up to cwnd_gain x BDP; after 3 rounds without 25% growth of the max rate, cwnd = ssthresh = BDP (reason bandwidth-plateau)",
    source: "Linux net/ipv4/tcp_bbr.c (BBRv1); draft-ietf-ccwg-bbr (ALGORITHMS.md §12)",
    params: &[
        ParamInfo { name: "pacing_gain", kind: ParamKind::Number, default: "2.885", help: "high_gain = 2/ln 2: pacing rate over the bandwidth estimate; positive" },
        ParamInfo {
            name: "cwnd_gain",
            kind: ParamKind::Number,
            default: "2.0",
            help: "cwnd target over the BDP estimate; positive (2 as BBRv3's STARTUP; BBRv1 uses 2.885)",
        },
        ParamInfo { name: "full_bw_threshold", kind: ParamKind::Number, default: "1.25", help: "full_bw_thresh: growth per round that counts as still filling the pipe; above 1" },
        ParamInfo { name: "full_bw_rounds", kind: ParamKind::Integer, default: "3", help: "full_bw_cnt: rounds in a row without that growth that fill the pipe; at least 1" },
    ],
}, AlgorithmInfo {
    name: "initial-start",
    role: "startup",
    summary: "Initial-Start: slow start from a large initial window sent back-to-back; the parameter becomes tcp.initial_window",
    source: "Scharf, fast startup schemes (ALGORITHMS.md §10.4)",
    params: &[ParamInfo {
        name: "initial_window",
        kind: ParamKind::Window,
        default: "83pkt",
        help: "the initial window w (Scharf's IS: 83 segments; 10 in his Fig. 10); whole segments, sets tcp.initial_window (do not give both)",
    }],
}, AlgorithmInfo {
    name: "jump-start",
    role: "startup",
    summary: "Jump-Start: after the handshake cwnd = max(D, IW), D = min(queued data, u), paced over the SYN RTT; then unpaced slow start (needs tcp.handshake = true)",
    source: "Liu, Allman, Jin, Wang, PFLDnet 2007; Scharf (ALGORITHMS.md §10.2)",
    params: &[ParamInfo { name: "u", kind: ParamKind::Window, default: "64KiB", help: "cap on the first paced flight (Scharf: 64 KiB); positive" }],
}, AlgorithmInfo {
    name: "more-start",
    role: "startup",
    summary: "More-Start: after the handshake pace the first RTT at an application-given rate q (window (L/MTU)·q·RTT_syn), then unpaced slow start (needs tcp.handshake = true)",
    source: "Scharf, fast startup schemes (ALGORITHMS.md §10.3)",
    params: &[ParamInfo { name: "rate", kind: ParamKind::Number, default: "10000000", help: "q: initial rate in bit/s at the IP layer (Scharf's Fig. 10: the path's 10 Mb/s); positive" }],
}, AlgorithmInfo {
    name: "paced-start",
    role: "startup",
    summary: "Paced Start (PaSt): a packet pair, then paced trains doubling each round with a binary search on the gap (Figure 5); exit at cwnd = RTT/g after a paced FILL train, or on loss",
    source: "Hu & Steenkiste, Improving TCP Startup Performance using Active Measurements, ICNP 2003, §3 (ALGORITHMS.md §7)",
    params: &[
        ParamInfo { name: "epsilon", kind: ParamKind::Number, default: "0.05", help: "gap tolerance: queueing means g_d > g_s·(1 + epsilon); 0 to 1 (0 = the idealised tree)" },
        ParamInfo { name: "rtt", kind: ParamKind::Choice(&["min", "srtt"]), default: "\"min\"", help: "RTT for cwnd = RTT/g: \"min\" = smallest sample of each train's first ACK, \"srtt\" = smoothed RTT" },
    ],
}, AlgorithmInfo {
    name: "quick-start",
    role: "startup",
    summary: "Quick-Start: the SYN asks the routers for a rate (40 kbit/s x 2^N); if every router approves (possibly lower) the first window R*T/(MSS+H) is paced at R, then slow start (qs1) or avoidance at that window (qs2); denied or invalid: slow start from IW",
    source: "RFC 4782 (Floyd, Allman, Jain, Sarolahti); Scharf, fast startup schemes (ALGORITHMS.md §10.1)",
    params: &[
        ParamInfo {
            name: "rate",
            kind: ParamKind::Rate,
            default: "1.31072Gbps",
            help: "the wanted rate at the IP layer, rounded down to a code point 40 kbit/s x 2^N (N = 1..15, 80kbps to 1.31072Gbps); the default asks for the largest and lets the routers lower it",
        },
        ParamInfo {
            name: "variant",
            kind: ParamKind::Choice(&["qs1", "qs2"]),
            default: "qs1",
            help: "after the Quick-Start window: qs1 continues in slow start (Scharf's QS 1), qs2 sets ssthresh = QS_cwnd and enters congestion avoidance (QS 2)",
        },
    ],
}];

/// The smallest Quick-Start rate (code N = 1: 40 kbit/s x 2), bit/s.
pub const QS_MIN_RATE_BPS: f64 = 80_000.0;

/// Every avoidance algorithm.
pub static AVOIDANCE: &[AlgorithmInfo] = &[AlgorithmInfo {
    name: "reno",
    role: "avoidance",
    summary: "Reno AIMD: cwnd += SMSS*SMSS/cwnd per ACK, ssthresh = max(FlightSize/2, 2*SMSS) on loss",
    source: "RFC 5681 §3.1",
    params: &[ParamInfo {
        name: "reno_ssthresh_from",
        kind: ParamKind::Choice(&["flight-size", "cwnd"]),
        default: "flight-size",
        help: "tcp.reno_ssthresh_from: ssthresh = FlightSize/2 (RFC 5681 eq. 4) or cwnd/2 (ns-2's window halving, the papers' Reno)",
    }],
}, AlgorithmInfo {
    name: "cubic",
    role: "avoidance",
    summary: "CUBIC: cwnd follows W_cubic(t) = C*(t-K)^3 + W_max, K = cbrt(W_max*(1-beta)/C), at least Reno's W_est; ssthresh = beta*cwnd on loss",
    source: "RFC 9438 §4",
    params: &[
        ParamInfo { name: "cubic_c", kind: ParamKind::Number, default: "0.4", help: "tcp.cubic_c: C, segments/s³ (RFC 9438 §5.1); positive" },
        ParamInfo {
            name: "cubic_beta",
            kind: ParamKind::Number,
            default: "0.7",
            help: "tcp.cubic_beta: β_cubic, the window kept after a loss (RFC 9438 §4.6); between 0 and 1; α_cubic = 3(1-β)/(1+β)",
        },
        ParamInfo {
            name: "cubic_fast_convergence",
            kind: ParamKind::Bool,
            default: "true",
            help: "tcp.cubic_fast_convergence: W_max = cwnd*(1+β)/2 after a loss below the previous W_max (RFC 9438 §4.7)",
        },
        ParamInfo {
            name: "cubic_ssthresh_from",
            kind: ParamKind::Choice(&["cwnd", "flight-size"]),
            default: "cwnd",
            help: "tcp.cubic_ssthresh_from: ssthresh = β*cwnd (Linux) or β*FlightSize (RFC 9438 §4.6)",
        },
    ],
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
