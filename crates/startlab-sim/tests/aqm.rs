//! Dequeue-time queue disciplines (CoDel, FQ-CoDel, PIE, DualPI2; docs/QUEUES.md) in whole
//! simulations: the conservation invariants hold with packets waiting in a discipline, each one
//! keeps a slow-start flow's standing queue near its target where drop-tail lets it grow to the
//! buffer, ECN marks replace drops, and FQ-CoDel serves a newcomer ahead of a bulk flow.

mod common;
use common::bottleneck;


/// One slow-start CUBIC flow, 20 Mbit/s, 40 ms, behind `queue`, for `duration`.
fn one_flow(queue: &str, ecn: bool, duration: &str) -> String {
    common::behind("20Mbps", "40ms", queue, &format!("congestion_avoidance = \"cubic\", ecn = {ecn}"), duration)
}

#[test]
fn every_discipline_keeps_the_standing_queue_far_below_drop_tails() {
    let tail = common::run(&one_flow("kind = \"droptail\", limit = \"1000pkt\"", false, "10s"));
    let fifo = bottleneck(&tail);
    for q in ["kind = \"codel\"", "kind = \"fq-codel\"", "kind = \"pie\"", "kind = \"dualpi2\""] {
        let sim = common::run(&one_flow(q, false, "10s"));
        let l = bottleneck(&sim);
        assert_eq!(l.queue_kind, q.split('"').nth(1).unwrap());
        assert!(l.drops > 0, "{q}: the discipline dropped nothing");
        assert!(l.mean_queue * 5.0 < fifo.mean_queue, "{q}: mean queue {} packets against drop-tail's {}", l.mean_queue, fifo.mean_queue);
        // A timeout after the startup's losses costs up to a second of the 10 (RFC 6298's 1 s floor).
        assert!(l.utilization > 0.6, "{q}: utilization {}", l.utilization);
        let f = common::flow(&sim, 0);
        assert!(f.exit_cwnd_pkts.unwrap() < common::flow(&tail, 0).exit_cwnd_pkts.unwrap(), "{q}: the startup left later than behind drop-tail");
    }
}

#[test]
fn with_ecn_the_codel_family_marks_instead_of_dropping() {
    for q in ["kind = \"codel\", ecn = true", "kind = \"fq-codel\""] {
        let sim = common::run(&one_flow(q, true, "10s"));
        let l = bottleneck(&sim);
        let f = common::flow(&sim, 0);
        assert!(l.marks > 0 && f.ecn_marks > 0, "{q}: no marks");
        assert_eq!(l.drops, 0, "{q}: an ECN flow under a marking CoDel lost packets");
    }
}

#[test]
fn fq_codel_lets_a_newcomer_start_beside_a_bulk_flow_without_waiting_behind_its_queue() {
    let scenario = |queue: &str| {
        format!(
            r#"
seed = 2
duration = "6s"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
rtts = ["40ms", "40ms"]
access_rate = "1Gbps"
queue = {{ {queue} }}
[[flows]]
name = "bulk"
pair = 0
tcp = {{ congestion_avoidance = "reno" }}
startup = {{ algorithm = "slow-start" }}
[[flows]]
name = "late"
pair = 1
start = "3s"
size = "60KB"
tcp = {{ congestion_avoidance = "reno" }}
"#
        )
    };
    let fifo = common::run(&scenario("kind = \"droptail\", limit = \"1000pkt\""));
    let fq = common::run(&scenario("kind = \"fq-codel\""));
    let (slow, fast) = (common::flow(&fifo, 1), common::flow(&fq, 1));
    assert!(fast.completion_time.is_some() && slow.completion_time.is_some());
    let (a, b) = (fast.completion_time.unwrap(), slow.completion_time.unwrap());
    // Behind a drop-tail queue the newcomer's packets wait behind the bulk flow's standing queue;
    // FQ-CoDel's new-flow list sends them at once: slow start's RTTs for 60 KB, nothing more.
    assert!(a < 0.6 && a * 3.0 < b, "fq-codel {a} s, drop-tail {b} s");
}


#[test]
fn sojourn_times_agree_with_the_queue_length_by_littles_law() {
    // Mean packets waiting = departures per second × mean wait when every packet that enters the
    // queue leaves by transmission: drop-tail and RED drop at arrival; the dequeue-time
    // disciplines run with ECN-capable flows and marking on, so none drops at dequeue. Over 30 s
    // the end effects (a FIFO wait is counted whole at admission, a dequeue-time one when the
    // packet leaves, the queue area stops at the end) stay under 1.5 %. The percentiles are
    // ordered and within the maximum.
    let cases = [
        ("kind = \"droptail\", limit = \"1000pkt\"", false),
        ("kind = \"red\", limit = \"300pkt\", min_th = \"30pkt\", max_th = \"100pkt\"", false),
        ("kind = \"codel\", ecn = true", true),
        ("kind = \"fq-codel\"", true),
        ("kind = \"pie\", ecn = true", true),
        ("kind = \"dualpi2\"", true),
    ];
    for (q, ecn) in cases {
        let sim = common::run(&one_flow(q, ecn, "30s"));
        let l = bottleneck(&sim);
        let at_dequeue = l.drops - l.early_drops.min(l.drops);
        let little = l.departures as f64 / 30.0 * l.sojourn_mean;
        let mq = l.mean_queue;
        if ecn && l.early_drops > 0 {
            // PIE drops even ECN-capable packets above mark_ecn_th: the law needs their waits too.
            assert!(q.contains("pie"), "{q}: {} drops with ECN marking on", l.early_drops);
            continue;
        }
        assert!((little - mq).abs() <= 0.015 * mq + 0.05, "{q}: λ·W = {little} packets, mean queue {mq} ({at_dequeue} overflow drops)");
        assert!(0.0 < l.sojourn_p50 && l.sojourn_p50 <= l.sojourn_p99 && l.sojourn_p99 <= l.sojourn_max, "{q}: {} {} {}", l.sojourn_p50, l.sojourn_p99, l.sojourn_max);
    }
}

#[test]
fn the_queue_traces_sojourn_column_holds_every_departing_packets_wait() {
    // The trace's `sojourn` rows are the link table's samples one by one. A dequeue-time
    // discipline counts both at the departure. A FIFO counts a packet's wait when it is admitted
    // and the trace shows it when it starts transmission, and a packet that finds the link idle
    // changes no queue length (no row, a wait of 0): the packets still waiting at the end and those
    // few are the difference. The trace's mean and maximum are the table's.
    for (q, ecn) in [("kind = \"droptail\", limit = \"1000pkt\"", false), ("kind = \"codel\"", false), ("kind = \"fq-codel\"", true), ("kind = \"dualpi2\"", false)] {
        let sim = common::run(&one_flow(q, ecn, "8s"));
        let l = bottleneck(&sim);
        let r = sim.results();
        let c = r.links.iter().position(|x| x.link == l.link).unwrap() as u32;
        let t = &r.traces.queue;
        let rows: Vec<usize> = (0..t.time.len()).filter(|&i| t.link[i] == c).collect();
        let waits: Vec<f64> = rows.iter().map(|&i| t.sojourn[i]).filter(|s| !s.is_nan()).collect();
        let departures_in_trace = rows.windows(2).filter(|w| t.packets[w[1]] < t.packets[w[0]] && !t.sojourn[w[1]].is_nan()).count();
        let still_waiting = rows.last().map_or(0, |&i| t.packets[i]);
        assert!(!waits.is_empty(), "{q}: no sojourn in the trace");
        assert!(waits.len() >= departures_in_trace, "{q}");
        if q.contains("droptail") {
            let seen = waits.len() as u64 + still_waiting;
            assert!(seen <= l.departures && seen * 1000 >= l.departures * 999, "{q}: {seen} waits in the trace, {} departures", l.departures);
        } else {
            assert_eq!(waits.len() as u64, l.departures, "{q}");
        }
        let mean = waits.iter().sum::<f64>() / waits.len() as f64;
        let max = waits.iter().cloned().fold(0.0, f64::max);
        assert!((mean - l.sojourn_mean).abs() <= 0.01 * l.sojourn_mean, "{q}: trace mean {mean}, table {}", l.sojourn_mean);
        assert!(max <= l.sojourn_max + 1e-9 && max >= 0.99 * l.sojourn_max, "{q}: trace max {max}, table {}", l.sojourn_max);
        // An arrival's row carries no wait.
        let arrivals = rows.windows(2).filter(|w| t.packets[w[1]] > t.packets[w[0]]).map(|w| w[1]);
        assert!(arrivals.into_iter().all(|i| t.sojourn[i].is_nan()), "{q}: an arrival row has a sojourn");
    }
}
