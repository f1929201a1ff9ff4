//! Property test: on random dumbbells (rates, delays, queues in packets or bytes, every startup
//! algorithm of the registry, Reno and CUBIC, every recovery variant and receiver, handshakes, forced drops, CBR cross traffic, `[[impairments]]` on a random link: loss, jitter with or without reordering, aggregation, a rate schedule;
//! drop-tail, RED, CoDel, FQ-CoDel, PIE or DualPI2 queues, with or without ECN marking and
//! ECN-capable flows) packets are conserved per
//! link and per flow, cumulative ACKs never go back, cwnd stays positive, time never runs back,
//! and every finite transfer completes with the receiver holding every byte exactly once.

mod common;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct FlowCase {
    recovery: &'static str,
    ack: &'static str,
    mss: u64,
    iw: u64,
    ssthresh: Option<u64>,
    size_pkts: u64,
    start_ms: u64,
    handshake: bool,
    drops: Vec<u64>,
    limited_transmit: bool,
    startup: &'static str,
    avoidance: &'static str,
    /// `tcp.ecn` as written: `false`, `true` or `"l4s"` (Prague's flows always the last).
    ecn: &'static str,
}

fn flow_case() -> impl Strategy<Value = FlowCase> {
    (
        prop::sample::select(vec!["tahoe", "reno", "newreno", "sack"]),
        prop::sample::select(vec!["every-packet", "delayed", "quickack"]),
        prop::sample::select(vec![536u64, 1000, 1448]),
        1u64..=10,
        prop::option::of(2u64..200),
        1u64..300,
        0u64..500,
        any::<bool>(),
        prop::collection::vec(1u64..200, 0..6),
        any::<bool>(),
        prop::sample::select(startlab_cc::startup::Startup::NAMES.to_vec()),
        (prop::sample::select(vec!["reno", "cubic", "prague"]), prop::sample::select(vec!["false", "true", "\"l4s\""])),
    )
        .prop_map(|(recovery, ack, mss, iw, ssthresh, size_pkts, start_ms, handshake, drops, limited_transmit, startup, (avoidance, ecn))| FlowCase {
            recovery,
            ack,
            mss,
            iw,
            // Smooth-start and DBC need a finite ssthresh (refused otherwise).
            ssthresh: if matches!(startup, "smooth-start" | "dbc") { Some(ssthresh.unwrap_or(64)) } else { ssthresh },
            startup,
            avoidance,
            size_pkts,
            start_ms,
            handshake,
            drops,
            limited_transmit,
            ecn: if avoidance == "prague" { "\"l4s\"" } else { ecn },
        })
}

/// An `[[impairments]]` table on a random link and direction: loss (random or Gilbert-Elliott),
/// jitter (uniform or normal, reordering or not), aggregation, a rate schedule — any subset.
fn impairment() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["bottleneck", "access-s0", "access-d0"]),
        prop::sample::select(vec!["forward", "reverse", "both"]),
        prop::option::of(prop_oneof![
            (1u64..50).prop_map(|p| format!("loss = {{ kind = \"random\", p = {} }}", p as f64 / 1000.0)),
            // Mean loss 0.5·p_gb/(p_gb + p_bg) stays at or below 5 % (p_bg >= 9·p_gb), like the
            // random losses above: with p_bg down to 0.1 it reached 16 % in each direction, and a
            // 248-packet Reno transfer over 2 Mb/s with 20 % of its packets dropped (34 timeouts,
            // backed off to rto_max) rightly did not complete in the 120 s run.
            (1u64..50, 0u64..450).prop_map(|(gb, extra)| format!("loss = {{ kind = \"gilbert-elliott\", p_gb = {}, p_bg = {}, loss_bad = 0.5 }}", gb as f64 / 1000.0, (9 * gb + extra).min(900) as f64 / 1000.0)),
        ]),
        prop::option::of((0u64..20, any::<bool>(), any::<bool>()).prop_map(|(ms, normal, reorder)| if normal {
            format!("jitter = {{ kind = \"normal\", mean = \"{ms}ms\", sd = \"{}ms\", reorder = {reorder} }}", ms / 2)
        } else {
            format!("jitter = {{ kind = \"uniform\", max = \"{ms}ms\", reorder = {reorder} }}")
        })),
        // max_burst caps releases at max_burst/interval packets/s with an unbounded hold; a cap
        // below the path's packet rate only delays transfers past the run (seen with 1 per 16 ms
        // under 27 Mb/s of CBR), so the drawn caps stay above 1000 packets per 30 ms.
        prop::option::of((1u64..30, prop::option::of(1000u64..2000)).prop_map(|(ms, b)| match b {
            Some(b) => format!("aggregate = {{ interval = \"{ms}ms\", max_burst = {b} }}"),
            None => format!("aggregate = {{ interval = \"{ms}ms\" }}"),
        })),
        prop::option::of((1u64..10, 1u64..100).prop_map(|(t, mbps)| format!("rate = [[\"{t}s\", \"{mbps}Mbps\"], [\"{}s\", \"{}Mbps\"]]", t + 5, mbps * 3))),
    )
        .prop_map(|(link, dir, loss, jitter, agg, rate)| {
            let mut s = format!("[[impairments]]\nlink = \"{link}\"\ndirection = \"{dir}\"\n");
            let parts: Vec<String> = [loss, jitter, agg, rate].into_iter().flatten().collect();
            if parts.is_empty() {
                s += "loss = { kind = \"random\", p = 0.0 }\n";
            }
            for p in parts {
                s += &p;
                s.push('\n');
            }
            s
        })
}

/// A queue's inline table: a FIFO one (`fifo_queue_case`) or a dequeue-time discipline with a
/// small buffer, tight targets and (FQ-CoDel) few flow queues, so that its drops, marks, overflow
/// and hash collisions all happen.
fn queue_case() -> impl Strategy<Value = String> {
    let aqm = (0usize..4, 2u64..300, any::<bool>(), 1u64..30, 1u64..64, 1u64..20).prop_map(|(kind, limit, ecn, target_ms, flows, batch)| match kind {
        0 => format!("kind = \"codel\", limit = \"{limit}pkt\", target = \"{target_ms}ms\", interval = \"{}ms\", ecn = {ecn}", target_ms * 10),
        1 => format!("kind = \"fq-codel\", limit = \"{limit}pkt\", target = \"{target_ms}ms\", flows = {flows}, drop_batch = {batch}, ecn = {ecn}"),
        2 => format!("kind = \"pie\", limit = \"{limit}pkt\", target = \"{target_ms}ms\", ecn = {ecn}, estimator = \"{}\"", if flows % 2 == 0 { "timestamps" } else { "departure-rate" }),
        _ => format!("kind = \"dualpi2\", limit = \"{limit}pkt\", target = \"{}ms\", ecn = {ecn}, drop_on_overload = {}", target_ms + 1, flows % 2 == 0),
    });
    prop_oneof![3 => fifo_queue_case(), 1 => aqm]
}

/// A FIFO queue's inline table: drop-tail, or RED with thresholds inside the limit (same unit),
/// random `max_p`, `w_q`, gentle, ECN marking and ns-2 wait.
fn fifo_queue_case() -> impl Strategy<Value = String> {
    let limit = prop_oneof![(2u64..300).prop_map(|p| (p, "pkt")), (3000u64..400_000).prop_map(|b| (b, "B"))];
    (limit, any::<bool>(), 1u32..=100, prop::sample::select(vec![0.002, 0.02, 0.2, 1.0]), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |((n, unit), red, max_p_pct, w_q, gentle, ecn, ns2_wait)| {
            if red {
                let (min, max) = (n / 5, (n / 2).max(n / 5 + 1));
                format!(
                    "kind = \"red\", limit = \"{n}{unit}\", min_th = \"{min}{unit}\", max_th = \"{max}{unit}\", max_p = {}, w_q = {w_q}, gentle = {gentle}, ecn = {ecn}, ns2_wait = {ns2_wait}",
                    max_p_pct as f64 / 100.0
                )
            } else {
                format!("kind = \"droptail\", limit = \"{n}{unit}\"")
            }
        },
    )
}

fn scenario(rate_mbps: u64, rtt_ms: u64, queue: &str, cbr_share: Option<u64>, flows: &[FlowCase]) -> String {
    let mut s = format!(
        r#"
seed = 7
duration = "120s"
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate_mbps}Mbps"
rtt = "{rtt_ms}ms"
access_rate = "{}Mbps"
queue = {{ {queue} }}
"#,
        rate_mbps * 10
    );
    for (i, f) in flows.iter().enumerate() {
        let ss = f.ssthresh.map_or("\"infinite\"".to_string(), |p| format!("\"{p}pkt\""));
        // Initial-Start sets the initial window itself; Jump-Start and More-Start need the
        // handshake's RTT sample (both refuse otherwise).
        let iw = if f.startup == "initial-start" { String::new() } else { format!("initial_window = {}, ", f.iw) };
        let handshake = f.handshake || matches!(f.startup, "jump-start" | "more-start");
        s += &format!(
            r#"
[[flows]]
name = "f{i}"
start = "{}ms"
size = "{}pkt"
drops = {:?}
startup = {{ algorithm = "{}" }}
tcp = {{ recovery = "{}", ack = "{}", mss = "{}B", {iw}initial_ssthresh = {ss}, handshake = {handshake}, limited_transmit = {}, rto_max = "4s", congestion_avoidance = "{}", pacing = {}, ecn = {} }}
"#,
            f.start_ms, f.size_pkts, f.drops, f.startup, f.recovery, f.ack, f.mss, f.limited_transmit, f.avoidance, f.handshake ^ f.limited_transmit, f.ecn
        );
    }
    if let Some(share) = cbr_share {
        s += &format!("[[cross]]\nkind = \"cbr\"\nrate = \"{}Kbps\"\npacket_size = \"1000B\"\nstop = \"20s\"\n", rate_mbps * 10 * share);
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_finite_transfers_complete(
        rate in 1u64..50,
        rtt in 2u64..300,
        queue in queue_case(),
        cbr in prop::option::of(1u64..90),
        flows in prop::collection::vec(flow_case(), 1..4),
        imp in prop::option::of(impairment()),
    ) {
        let toml = scenario(rate, rtt, &queue, cbr, &flows) + &imp.unwrap_or_default();
        // common::run checks the invariants and panics with the scenario text if one fails.
        let sim = common::run(&toml);
        let r = sim.results();
        for (f, case) in r.flows.iter().zip(&flows) {
            let size = case.size_pkts * case.mss;
            prop_assert!(f.completed, "flow {} did not complete:\n{}", f.flow, toml);
            prop_assert_eq!(f.bytes_delivered, size, "the receiver holds every byte once");
            prop_assert!(f.retransmission_ratio.unwrap() <= 1.0);
            prop_assert!(f.su_time.unwrap() >= 0.0);
        }
    }
}
