//! Flow arrival processes (`[[arrivals]]`) and measurement windows (`[measure]`).

mod common;
use common::run;
use startlab_sim::FlowResult;

fn dumbbell(arrivals: &str, measure: &str, duration: &str) -> String {
    format!(
        r#"
seed = 3
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
bottleneck_delay = "20ms"
rtt = "40ms"
access_rate = "50Mbps"
pairs = 102
queue = {{ kind = "droptail", limit = "100pkt" }}
[trace]
cwnd = false
seq = false
queue = false
{arrivals}
{measure}
"#
    )
}

const WEB: &str = r#"
[[arrivals]]
name = "web"
rate = 20
size = { dist = "exponential", mean = "50pkt" }
direction = "both"
tcp = { recovery = "sack", mss = "1000B", initial_window = 2, initial_ssthresh = "20000pkt", ack = "every-packet" }
mix = [{ algorithm = "paced-start", share = 0.5 }, { algorithm = "slow-start", share = 0.5 }]
"#;

fn mean(x: impl Iterator<Item = f64>) -> (f64, f64, usize) {
    let v: Vec<f64> = x.collect();
    let n = v.len();
    let m = v.iter().sum::<f64>() / n as f64;
    let sd = (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    (m, sd / (n as f64).sqrt(), n)
}

#[test]
fn arrivals_sizes_hosts_and_the_mix_match_the_configuration_within_sampling_error() {
    // 400 s at 20 flows/s: 8000 expected arrivals, Poisson sd sqrt(8000) = 89.
    let sim = run(&dumbbell(WEB, "", "400s"));
    let r = sim.results();
    let flows: Vec<&FlowResult> = r.flows.iter().filter(|f| f.group.as_deref() == Some("web")).collect();
    let n = flows.len() as f64;
    assert!((n - 8000.0).abs() < 4.0 * 89.0, "{n} arrivals in 400 s at 20/s");
    // Inter-arrival times are exponential: mean 1/20 s and coefficient of variation 1.
    let mut starts: Vec<f64> = flows.iter().map(|f| f.start).collect();
    starts.sort_by(f64::total_cmp);
    let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    let (g, g_se, _) = mean(gaps.iter().copied());
    assert!((g - 0.05).abs() < 4.0 * g_se, "mean gap {g}");
    let sd = (gaps.iter().map(|x| (x - g).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / g - 1.0).abs() < 0.05, "cv of the gaps {}", sd / g);
    // Sizes: exponential with mean 50 packets of 1000 B.
    let (m, se, _) = mean(flows.iter().map(|f| f.size.unwrap() as f64));
    assert!((m - 50_000.0).abs() < 4.0 * se, "mean size {m} (se {se})");
    // Offered load per direction = rate x mean size / 2 directions; carried = bytes delivered.
    let delivered: f64 = flows.iter().map(|f| f.bytes_delivered as f64).sum();
    let offered = 20.0 * 50_000.0 * 400.0;
    assert!((delivered / offered - 1.0).abs() < 0.05, "delivered {delivered} of about {offered} offered bytes");
    // Mix 0.5 / 0.5 (binomial sd = sqrt(n/4)).
    let past = flows.iter().filter(|f| f.startup == "paced-start").count() as f64;
    assert!((past - n / 2.0).abs() < 4.0 * (n / 4.0).sqrt(), "{past} of {n} flows chose paced-start");
    // Hosts: random on each side, both directions about equally often.
    let reverse = flows.iter().filter(|f| f.src.starts_with('d')).count() as f64;
    assert!((reverse - n / 2.0).abs() < 4.0 * (n / 4.0).sqrt(), "{reverse} right-to-left flows");
    let senders: std::collections::BTreeSet<&str> = flows.iter().map(|f| f.src.as_str()).collect();
    assert!(senders.len() > 190, "flows come from most of the 204 hosts: {}", senders.len());
    assert!(flows.iter().all(|f| f.src[..1] != f.dst[..1]), "every flow crosses the bottleneck");
}

#[test]
fn the_same_seed_draws_the_same_flows_and_another_seed_different_ones() {
    let a = run(&dumbbell(WEB, "", "20s")).results().flows;
    let b = run(&dumbbell(WEB, "", "20s")).results().flows;
    assert_eq!(a, b);
    let c = run(&dumbbell(WEB, "", "20s").replace("seed = 3", "seed = 4")).results().flows;
    assert_ne!(a.iter().map(|f| f.start).collect::<Vec<_>>(), c.iter().map(|f| f.start).collect::<Vec<_>>());
}

#[test]
fn the_paced_start_figure_11_setup_yields_2000_measured_flows_after_an_automatic_warm_up() {
    let sim = run(&dumbbell(WEB, "[measure]\nwarmup = \"auto\"\nflows = 2000", "130s"));
    let r = sim.results();
    let measured: Vec<&FlowResult> = r.flows.iter().filter(|f| f.measured).collect();
    assert_eq!(measured.len(), 2000);
    let w = r.warmup_end.expect("20 flows/s of 0.4 s each settle quickly");
    assert!((5.0..=30.0).contains(&w), "warm-up {w} s");
    assert!(measured.iter().all(|f| f.start >= w));
    // They are the first 2000 to arrive after the warm-up.
    let first_unmeasured_after = r.flows.iter().filter(|f| !f.measured && f.start >= w).map(|f| f.start).fold(f64::INFINITY, f64::min);
    assert!(measured.iter().all(|f| f.start < first_unmeasured_after));
    assert!(measured.iter().filter(|f| f.completed).count() > 1990, "nearly all complete before the end");
}

#[test]
fn a_time_window_marks_the_flows_that_start_inside_it() {
    let sim = run(&dumbbell(WEB, "[measure]\nwindow = [\"5s\", \"10s\"]", "12s"));
    let r = sim.results();
    assert!(r.flows.iter().any(|f| f.measured) && r.flows.iter().any(|f| !f.measured));
    assert!(r.flows.iter().all(|f| f.measured == (f.start >= 5.0 && f.start < 10.0)));
    assert_eq!(r.warmup_end, None);
}

#[test]
fn graph_arrivals_never_pair_two_hosts_of_one_router() {
    let toml = r#"
seed = 1
duration = "30s"
[topology]
kind = "graph"
hosts = ["a1", "a2", "b1", "b2"]
routers = ["ra", "rb"]
links = [
  { between = ["a1", "ra"], rate = "50Mbps", delay = "1ms", queue = { kind = "droptail", limit = "1000pkt" } },
  { between = ["a2", "ra"], rate = "50Mbps", delay = "1ms", queue = { kind = "droptail", limit = "1000pkt" } },
  { between = ["b1", "rb"], rate = "50Mbps", delay = "1ms", queue = { kind = "droptail", limit = "1000pkt" } },
  { between = ["b2", "rb"], rate = "50Mbps", delay = "1ms", queue = { kind = "droptail", limit = "1000pkt" } },
  { between = ["ra", "rb"], rate = "10Mbps", delay = "10ms", queue = { kind = "droptail", limit = "50pkt" } },
]
[[arrivals]]
name = "x"
rate = 10
size = { dist = "pareto", mean = "20KB", shape = 1.2, cutoff = "1MB" }
"#;
    let sim = run(toml);
    let r = sim.results();
    assert!(r.flows.len() > 200);
    assert!(r.flows.iter().all(|f| f.src[..1] != f.dst[..1]), "every flow crosses ra-rb");
}

mod property {
    use super::common;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Random arrival processes on random dumbbells: every invariant holds and every flow that
        /// arrived in the first 10 s completes by 200 s.
        #[test]
        fn invariants_hold_with_random_arrival_processes(
            rate_mbps in 1u64..30,
            queue in 2u64..200,
            arrivals in 1u64..30,
            dist in prop::sample::select(vec![
                r#"{ dist = "exponential", mean = "20pkt" }"#,
                r#"{ dist = "pareto", mean = "30KB", shape = 1.1, cutoff = "2MB" }"#,
                r#"{ dist = "fixed", value = "7pkt" }"#,
                r#"{ dist = "zipf", exponent = 1.1, ranks = 100, unit = "2pkt" }"#,
            ]),
            a in prop::sample::select(startlab_cc::startup::Startup::NAMES.to_vec()),
            b in prop::sample::select(startlab_cc::startup::Startup::NAMES.to_vec()),
            both in any::<bool>(),
            recovery in prop::sample::select(vec!["reno", "newreno", "sack"]),
            cross in prop::sample::select(vec!["", "cbr", "poisson", "onoff"]),
            cross_kbps in 100u64..20_000,
            app in any::<bool>(),
            idle in prop::sample::select(vec!["rfc5681", "rfc2861", "off"]),
            ecn in any::<bool>(),
        ) {
            // Initial-Start is not allowed in a mix; smooth-start and dbc need a finite ssthresh.
            let pick = |x: &str| if x == "initial-start" { "slow-start".to_string() } else { x.to_string() };
            let (a, b) = (pick(a), pick(b));
            let mix = if a == b {
                format!(r#"startup = {{ algorithm = "{a}" }}"#)
            } else {
                format!(r#"mix = [{{ algorithm = "{a}", share = 0.3 }}, {{ algorithm = "{b}", share = 0.7 }}]"#)
            };
            let toml = format!(
                r#"
seed = 11
duration = "200s"
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate_mbps}Mbps"
rtt = "60ms"
access_rate = "100Mbps"
pairs = 5
queue = {{ kind = "droptail", limit = "{queue}pkt" }}
[trace]
seq = false
[[arrivals]]
name = "w"
rate = {arrivals}
stop = "10s"
size = {dist}
direction = "{}"
tcp = {{ recovery = "{recovery}", handshake = true, initial_ssthresh = "64pkt", rto_max = "4s" }}
{mix}
"#,
                if both { "both" } else { "forward" }
            ) + &match cross {
                "" => String::new(),
                "onoff" => format!("[[cross]]\nkind = \"onoff\"\nrate = \"{cross_kbps}Kbps\"\npacket_size = \"500B\"\non = \"300ms\"\noff = \"700ms\"\nstop = \"15s\"\n"),
                kind => format!("[[cross]]\nkind = \"{kind}\"\nrate = \"{cross_kbps}Kbps\"\npacket_size = \"500B\"\nstop = \"15s\"\n"),
            } + &if app {
                // A request/response connection on pair 4 beside the arrivals, with ECN maybe.
                format!(
                    "[[flows]]\nname = \"rr\"\npair = 4\ntcp = {{ recovery = \"{recovery}\", idle_restart = \"{idle}\", ecn = {ecn}, rto_max = \"4s\" }}\napp = {{ kind = \"request-response\", request = \"200B\", response = {{ dist = \"pareto\", mean = \"20KB\", shape = 1.2, cutoff = \"300KB\" }}, think = \"1s\", count = 10 }}\n"
                )
            } else {
                String::new()
            };
            let sim = common::run(&toml);
            let r = sim.results();
            for f in &r.flows {
                prop_assert!(f.completed, "flow {} did not complete:\n{}", f.flow, toml);
                if f.flow != "rr" {
                    prop_assert_eq!(Some(f.bytes_delivered), f.size);
                }
            }
            if app {
                prop_assert_eq!(r.responses.len(), 10, "every exchange finishes:\n{}", toml);
                prop_assert!(r.responses.iter().all(|x| x.response_time > 0.0));
            }
        }
    }
}

fn cross_only(kind: &str, extra: &str) -> String {
    format!(
        r#"
seed = 5
duration = "200s"
[topology]
kind = "dumbbell"
bottleneck_rate = "100Mbps"
rtt = "20ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "10000pkt" }}
[trace]
seq = false
cwnd = false
[[cross]]
kind = "{kind}"
rate = "10Mbps"
packet_size = "1000B"
{extra}
"#
    )
}

#[test]
fn poisson_and_on_off_sources_carry_their_mean_rate() {
    let delivered = |toml: &str| {
        let sim = run(toml);
        let r = sim.results();
        let l = r.links.iter().find(|l| l.link == "bottleneck:left->right").unwrap().clone();
        (l.departures, l.utilization)
    };
    // CBR: exactly 10 Mb/s = 1250 packets/s for 200 s.
    let (cbr, _) = delivered(&cross_only("cbr", ""));
    assert!((cbr as f64 - 250_000.0).abs() <= 1.0, "{cbr}");
    // Poisson: the same mean (sd sqrt(250 000) = 500 packets).
    let (poisson, _) = delivered(&cross_only("poisson", ""));
    assert!((poisson as f64 - 250_000.0).abs() < 4.0 * 500.0, "{poisson}");
    assert_ne!(poisson, cbr);
    // On/off, mean on 1 s and off 3 s: a quarter of the time at 10 Mb/s; about 50 cycles, so the
    // on fraction has sd about 0.25 * sqrt(2/50) x ... allow 25 %.
    let (onoff, _) = delivered(&cross_only("onoff", "on = \"1s\"\noff = \"3s\""));
    assert!((onoff as f64 / 62_500.0 - 1.0).abs() < 0.25, "{onoff}");
}

#[test]
fn a_parking_lot_has_flows_over_one_to_ten_backbone_links() {
    let toml = r#"
seed = 2
duration = "60s"
[topology]
kind = "parking-lot"
backbone_links = 10
backbone_rate = "20Mbps"
backbone_delay = "20ms"
queue = { kind = "droptail", limit = "1000pkt" }
hosts_per_router = 12
access_rate = "50Mbps"
[trace]
seq = false
cwnd = false
[[arrivals]]
name = "p"
rate = 10
stop = "40s"
size = { dist = "exponential", mean = "200pkt" }
tcp = { recovery = "sack", mss = "1000B", initial_window = 2, initial_ssthresh = "20000pkt", ack = "every-packet" }
startup = { algorithm = "paced-start" }
"#;
    let sim = run(toml);
    let r = sim.results();
    let router = |h: &str| h[1..h.find('_').unwrap()].parse::<i64>().unwrap();
    let hops: std::collections::BTreeSet<i64> = r.flows.iter().map(|f| (router(&f.src) - router(&f.dst)).abs()).collect();
    assert!(!hops.contains(&0), "every flow crosses a backbone link");
    assert!(hops.len() >= 8, "paths of many lengths: {hops:?}");
    // The base RTT is 40 ms of propagation per backbone link crossed, plus serialisation: a
    // 1040-byte segment and a 40-byte ACK at 20 Mb/s per backbone link (0.432 ms) and at 50 Mb/s
    // on the two access links (0.346 ms).
    for f in &r.flows {
        let k = (router(&f.src) - router(&f.dst)).abs() as f64;
        let want = k * (0.04 + 1080.0 * 8.0 / 20e6) + 2.0 * 1080.0 * 8.0 / 50e6;
        assert!((f.base_rtt - want).abs() < 1e-6, "{} over {k} links: base RTT {} vs {want}", f.flow, f.base_rtt);
    }
    assert_eq!(r.links.iter().filter(|l| l.link.starts_with("backbone")).count(), 20);
}

#[test]
fn a_reverse_flow_runs_right_to_left_and_its_data_shares_the_path_of_the_forward_acks() {
    let toml = r#"
seed = 1
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "50ms"
access_rate = "100Mbps"
queue = { kind = "droptail", limit = "50pkt" }
[[flows]]
name = "fwd"
pair = 0
[[flows]]
name = "rev"
pair = 0
reverse = true
"#;
    let sim = run(toml);
    let r = sim.results();
    assert_eq!((r.flows[1].src.as_str(), r.flows[1].dst.as_str()), ("d0", "s0"));
    let util = |name: &str| r.links.iter().find(|l| l.link == name).unwrap().utilization;
    let (a, b) = (util("bottleneck:left->right"), util("bottleneck:right->left"));
    assert!(a > 0.5 && b > 0.5, "both directions carry data: {a} {b}");
}

#[test]
fn a_cross_source_of_rate_zero_sends_nothing_and_changes_nothing() {
    let base = |cross: &str| {
        format!(
            "seed = 1\nduration = \"2s\"\n[topology]\nkind = \"dumbbell\"\nbottleneck_rate = \"10Mbps\"\nrtt = \"40ms\"\naccess_rate = \"1Gbps\"\nqueue = {{ kind = \"droptail\", limit = \"50pkt\" }}\n[[flows]]\nname = \"f\"\nsize = \"infinite\"\n{cross}"
        )
    };
    let zero = run(&base("[[cross]]\nkind = \"cbr\"\nrate = \"0bps\"\npacket_size = \"1000B\"\n"));
    let none = run(&base(""));
    let (a, b) = (zero.results(), none.results());
    assert_eq!(a.flows[0].bytes_delivered, b.flows[0].bytes_delivered);
    assert_eq!(a.flows[0].su_time, b.flows[0].su_time);
    let arrivals = |r: &startlab_sim::Results| r.links.iter().map(|l| l.arrivals).sum::<u64>();
    assert_eq!(arrivals(&a), arrivals(&b), "the zero-rate source sent no packet");
}

#[test]
fn reverse_arrivals_all_run_right_to_left_with_the_forward_processes_times_and_sizes() {
    let forward = run(&dumbbell(&WEB.replace("direction = \"both\"", "direction = \"forward\""), "", "20s"));
    let reverse = run(&dumbbell(&WEB.replace("direction = \"both\"", "direction = \"reverse\""), "", "20s"));
    let (f, r) = (forward.results().flows, reverse.results().flows);
    assert!(r.len() > 300);
    assert!(r.iter().all(|x| x.src.starts_with('d') && x.dst.starts_with('s')), "every flow from a d host to an s host");
    assert!(f.iter().all(|x| x.src.starts_with('s') && x.dst.starts_with('d')));
    // The direction draws nothing: arrival times, sizes, hosts (mirrored) and algorithms are the forward process's.
    assert_eq!(f.len(), r.len());
    for (a, b) in f.iter().zip(&r) {
        assert_eq!((a.start, a.size, &a.startup), (b.start, b.size, &b.startup));
        assert_eq!((&a.src[1..], &a.dst[1..]), (&b.dst[1..], &b.src[1..]));
    }
    let bad = startlab_scenario::from_toml(&dumbbell(&WEB.replace("direction = \"both\"", "direction = \"backward\""), "", "20s")).unwrap_err().to_string();
    assert!(bad.contains("arrivals[0].direction: \"backward\" is not valid; expected \"forward\" (s -> d), \"reverse\" (d -> s) or \"both\""), "{bad}");
}

#[test]
fn uniform_and_empirical_sizes_and_their_refusals() {
    // Barakat & Altman Figs. 10-12: files of U[100 KB, 1 MB].
    let uniform = WEB.replace(r#"size = { dist = "exponential", mean = "50pkt" }"#, r#"size = { dist = "uniform", min = "100KB", max = "1MB" }"#);
    let sim = run(&dumbbell(&uniform, "", "20s"));
    let sizes: Vec<u64> = sim.results().flows.iter().filter_map(|f| f.size).collect();
    assert!(sizes.len() > 300 && sizes.iter().all(|&s| (100_000..=1_000_000).contains(&s)));
    let (m, se, _) = mean(sizes.iter().map(|&s| s as f64));
    assert!((m - 550_000.0).abs() < 4.0 * se, "mean {m}");

    let dir = std::env::temp_dir().join(format!("startlab-cdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sizes.csv"), "# bytes,probability\n1448,0.5\n14480,1\n").unwrap();
    std::fs::write(dir.join("bad.csv"), "1448,0.5\n1000,0.7\n14480,1\n").unwrap();
    let empirical = WEB.replace(r#"size = { dist = "exponential", mean = "50pkt" }"#, r#"size = { dist = "empirical", file = "sizes.csv" }"#);
    let scenario = startlab_scenario::from_toml_in(&dumbbell(&empirical, "", "20s"), Some(&dir)).expect("accepted");
    let mut sim = startlab_sim::Simulation::new(scenario).unwrap();
    sim.run();
    let sizes: Vec<u64> = sim.results().flows.iter().filter_map(|f| f.size).collect();
    let small = sizes.iter().filter(|&&s| s == 1448).count() as f64 / sizes.len() as f64;
    assert!((small - 0.5).abs() < 0.08 && sizes.iter().all(|&s| (1448..=14480).contains(&s)), "{small}");

    let refused = |size: &str| {
        let text = dumbbell(&WEB.replace(r#"size = { dist = "exponential", mean = "50pkt" }"#, size), "", "20s");
        startlab_scenario::from_toml_in(&text, Some(&dir)).unwrap_err().to_string()
    };
    let e = refused(r#"size = { dist = "empirical", file = "bad.csv" }"#);
    assert!(e.starts_with("arrivals[0].size.file: ") && e.contains("bad.csv: line 2: (1000, 0.7) goes back from (1448, 0.5)"), "{e}");
    let e = refused(r#"size = { dist = "uniform", min = "1MB", max = "100KB" }"#);
    assert!(e.contains("arrivals[0].size.max: 100000 B is below min = 1000000 B"), "{e}");
    let e = refused(r#"size = { dist = "lognormal", mu = 9.357 }"#);
    assert!(e.contains("arrivals[0].size.sigma: missing"), "{e}");
    let e = refused(r#"size = { dist = "uniform", min = "1KB", max = "2KB", mu = 1.0 }"#);
    assert!(e.contains("arrivals[0].size.mu: is not a key of dist = \"uniform\""), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
