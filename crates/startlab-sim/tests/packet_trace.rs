//! `[trace.packets]`: per-packet queue events of chosen link directions.

mod common;

use startlab_sim::trace::{PACKET_EVENTS, PACKET_KINDS};

const BASE: &str = r#"
seed = 4
duration = "4s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "100Mbps"
queue = { kind = "droptail", limit = "20pkt" }
[[flows]]
name = "f"
count = 2
tcp = { ack = "every-packet" }
[[cross]]
kind = "cbr"
rate = "2Mbps"
packet_size = "1000B"
[[impairments]]
link = "bottleneck"
direction = "forward"
loss = { kind = "random", p = 0.01 }
"#;

fn code(names: &[&str], name: &str) -> u8 {
    names.iter().position(|n| *n == name).unwrap() as u8
}

#[test]
fn every_packet_of_a_traced_link_is_accounted_for_in_fifo_order() {
    let sim = common::run(&format!("{BASE}[trace.packets]\nlinks = [\"bottleneck\"]\ndirection = \"forward\"\n"));
    let r = sim.results();
    let p = &r.traces.packets;
    let fwd = r.link_names.iter().position(|n| n == "bottleneck:left->right").unwrap() as u32;
    assert!(p.link.iter().all(|&l| l == fwd), "only the traced direction");
    assert!(p.time.windows(2).all(|w| w[0] <= w[1]), "in time order");
    let count = |e: &str| p.event.iter().filter(|&&x| x == code(&PACKET_EVENTS, e)).count() as u64;
    let link = r.links.iter().find(|l| l.link == "bottleneck:left->right").unwrap();
    assert_eq!(count("enqueue") + count("drop") + count("lost"), link.arrivals);
    assert_eq!(count("drop") + count("lost"), link.drops);
    assert_eq!(count("lost"), link.impairment_drops);
    assert!(count("lost") > 0 && count("drop") > 0, "the scenario loses and drops packets");
    assert!(p.queue_packets.iter().all(|&q| q <= 20), "never more than the limit waits");
    // The packets leave the queue in the order they entered it: the dequeues are the enqueues,
    // in order, less those still waiting at the end (at most the queue limit).
    let id = |i: usize| (p.kind[i], p.flow[i], p.seq[i], p.size[i]);
    let of = |e: &str| (0..p.time.len()).filter(|&i| p.event[i] == code(&PACKET_EVENTS, e)).map(id).collect::<Vec<_>>();
    let (entered, left) = (of("enqueue"), of("dequeue"));
    assert!(entered.len() - left.len() <= 21);
    assert_eq!(&entered[..left.len()], &left[..]);
    let kinds: std::collections::BTreeSet<u8> = p.kind.iter().copied().collect();
    assert!(kinds.contains(&code(&PACKET_KINDS, "data")) && kinds.contains(&code(&PACKET_KINDS, "cross")));
}

#[test]
fn a_flow_filter_keeps_only_that_flows_packets_and_tracing_changes_no_result() {
    let plain = common::run(BASE);
    let sim = common::run(&format!("{BASE}[trace.packets]\nlinks = [\"bottleneck\", \"access-d0\"]\nflows = [\"f-0\"]\n"));
    let r = sim.results();
    let p = &r.traces.packets;
    assert!(!p.time.is_empty());
    assert!(p.flow.iter().all(|&f| f == 0), "flow f-0 only (ACKs included)");
    let acks = p.kind.iter().filter(|&&k| k == code(&PACKET_KINDS, "ack")).count();
    assert!(acks > 0, "its ACKs on the reverse direction");
    let traced: std::collections::BTreeSet<&str> = p.link.iter().map(|&l| r.link_names[l as usize].as_str()).collect();
    assert!(traced.iter().all(|n| n.starts_with("bottleneck:") || n.starts_with("access-d0:")), "{traced:?}");
    // Tracing observes; it changes nothing.
    let (a, b) = (plain.results(), sim.results());
    assert_eq!(serde_json::to_string(&a.flows).unwrap(), serde_json::to_string(&b.flows).unwrap());
    assert_eq!(serde_json::to_string(&a.links).unwrap(), serde_json::to_string(&b.links).unwrap());
    assert!(a.traces.packets.time.is_empty(), "off by default");
}

#[test]
fn bad_packet_trace_tables_are_refused_with_their_key_path() {
    for (table, wanted) in [
        ("links = [\"bottleneck2\"]", "trace.packets.links[0]: \"bottleneck2\" is not a link"),
        ("links = []", "trace.packets.links: is empty"),
        ("links = [\"bottleneck\"]\ndirection = \"up\"", "trace.packets.direction: \"up\" is not a direction"),
        ("links = [\"bottleneck\"]\nflows = [\"g\"]", "trace.packets.flows[0]: \"g\" names no flow"),
        ("links = [\"bottleneck\", \"bottleneck\"]", "trace.packets.links[1]: \"bottleneck\" is listed twice"),
        ("link = [\"bottleneck\"]", "unknown field `link`"),
    ] {
        let e = startlab_scenario::from_toml(&format!("{BASE}[trace.packets]\n{table}\n")).unwrap_err().to_string();
        assert!(e.contains(wanted), "{e}");
    }
}
