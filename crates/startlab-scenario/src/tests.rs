use super::*;
use std::collections::BTreeMap;

const EXAMPLE: &str = r#"
seed = 1
duration = "50s"

[topology]
kind = "dumbbell"
bottleneck_rate = "100Mbps"
rtt = "80ms"
access_rate = "1Gbps"
queue = { kind = "droptail", limit = "1000pkt" }

[[flows]]
name = "sack"
tcp = { recovery = "sack", mss = "1000B", initial_window = 2, initial_ssthresh = "20000pkt", ack = "every-packet" }
startup = { algorithm = "slow-start" }
start = "0s"
size = "infinite"

[[cross]]
kind = "cbr"
rate = "40Mbps"
packet_size = "1000B"
"#;

fn refused(text: &str) -> ScenarioError {
    from_toml(text).expect_err("the scenario should be refused")
}

#[test]
fn the_paced_start_example_resolves() {
    let s = from_toml(EXAMPLE).unwrap();
    assert_eq!(s.duration, Dur::from_secs(50));
    let Topology::Dumbbell(d) = &s.topology else { panic!("dumbbell expected") };
    assert_eq!(d.rtts, vec![Dur::from_millis(80)]);
    assert_eq!(d.bottleneck_delay, Dur::from_millis(40), "default: the whole RTT on the bottleneck");
    let f = &s.flows[0];
    assert_eq!(f.tcp.initial_ssthresh, SsthreshSpec::Bytes(20_000_000));
    assert_eq!(f.size, None);
    assert_eq!(s.cross[0].rate, Rate(40_000_000));
}

#[test]
fn an_unknown_key_is_named_with_its_path() {
    let e = refused(&EXAMPLE.replace("bottleneck_rate =", "bottleneck_rat ="));
    assert_eq!(e.path, "topology.bottleneck_rat", "{e}");
    assert!(e.message.contains("unknown field"), "{e}");
}

#[test]
fn a_wrong_unit_says_what_is_accepted() {
    let e = refused(&EXAMPLE.replace("\"100Mbps\"", "\"100Mbs\""));
    assert_eq!(e.path, "topology.bottleneck_rate");
    assert!(e.message.contains("Mbps"), "{e}");
    let e = refused(&EXAMPLE.replace("mss = \"1000B\"", "mss = 1000"));
    assert_eq!(e.path, "flows[0].tcp.mss");
    assert!(e.message.contains("size string"), "{e}");
}

#[test]
fn zero_rates_missing_fields_and_impossible_combinations_are_refused() {
    assert_eq!(refused(&EXAMPLE.replace("\"100Mbps\"", "\"0Mbps\"")).path, "topology.bottleneck_rate");
    assert!(refused(&EXAMPLE.replace("\"100Mbps\"", "\"-5Mbps\"")).message.contains("Mbps"));
    let e = refused(&EXAMPLE.replace("duration = \"50s\"", ""));
    assert!(e.message.contains("duration"), "{e}");
    let e = refused(&EXAMPLE.replace("start = \"0s\"", "start = \"60s\""));
    assert_eq!(e.path, "flows[0].start");
    let e = refused(&EXAMPLE.replace("ack = \"every-packet\"", "ack = \"every-packet\", delack_timeout = \"100ms\""));
    assert_eq!(e.path, "flows[0].tcp.delack_timeout");
    let e = refused(&EXAMPLE.replace("algorithm = \"slow-start\"", "algorithm = \"slow-start\", k = 2"));
    assert_eq!(e.path, "flows[0].startup.k");
}

#[test]
fn json_has_the_same_schema() {
    let json = r#"{"seed": 3, "duration": "1s",
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbps", "rtt": "20ms", "access_rate": "100Mbps",
                     "queue": {"kind": "droptail", "limit": "50pkt"}},
        "flows": [{"name": "a", "count": 3, "size": "10pkt"}]}"#;
    let s = from_json(json).unwrap();
    assert_eq!(s.flows.len(), 3);
    assert_eq!(s.flows[2].name, "a-2");
    assert_eq!(s.flows[2].ends, Ends::Pair(2));
    assert_eq!(s.flows[0].size, Some(14_480));
    let e = from_json(&json.replace("\"seed\": 3", "\"seed\": -3")).unwrap_err();
    assert_eq!(e.path, "seed");
}

#[test]
fn syntax_errors_are_one_line_with_a_position() {
    let e = refused("seed = 1\nduration = \n");
    assert!(e.message.starts_with("not valid TOML at line 2"), "{e}");
    assert!(!e.to_string().contains('\n'), "{e}");
    let e = refused(&EXAMPLE.replace("bottleneck_rate =", "bottleneck_rat ="));
    assert!(!e.to_string().contains('\n'), "{e}");
}

/// The resolved avoidance parameters, by key.
fn avoidance_params(text: &str) -> (&'static str, BTreeMap<&'static str, registry::ParamValue>) {
    let tcp = from_toml(text).unwrap().flows.remove(0).tcp;
    (tcp.avoidance.name(), tcp.avoidance.params)
}

/// The declared defaults of avoidance algorithm `name`, as the scenario parses them.
fn declared_defaults(name: &str) -> BTreeMap<&'static str, registry::ParamValue> {
    let info = registry::avoidances().find(|a| a.name == name).expect("registered");
    info.params.iter().map(|p| (p.name, registry::default_value(p, 1000))).collect()
}

#[test]
fn cubic_is_selected_with_the_registry_defaults_and_its_keys_are_checked() {
    use registry::ParamValue::{Bool, Choice, Number};
    let cubic = EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", congestion_avoidance = \"cubic\",");
    let (name, params) = avoidance_params(&cubic);
    assert_eq!(name, "cubic");
    // Every parameter is filled in with the default its declaration documents.
    assert_eq!(params, declared_defaults("cubic"));
    assert_eq!(params["cubic_c"], Number(0.4));
    assert_eq!(params["cubic_beta"], Number(0.7));
    assert_eq!(params["cubic_fast_convergence"], Bool(true));
    assert_eq!(params["cubic_ssthresh_from"], Choice("cwnd".into()));
    assert_eq!(params["cubic_growth"], Choice("rfc9438".into()));
    let (name, params) = avoidance_params(EXAMPLE);
    assert_eq!(name, "reno", "reno by default");
    assert!(!params.contains_key("cubic_c"), "reno has no cubic parameters");

    let set = cubic.replace(
        "congestion_avoidance = \"cubic\",",
        "congestion_avoidance = \"cubic\", cubic_c = 1, cubic_beta = 0.5, cubic_fast_convergence = false, cubic_ssthresh_from = \"flight-size\", cubic_growth = \"linux\",",
    );
    let (_, params) = avoidance_params(&set);
    let got: Vec<_> = params.values().cloned().collect();
    assert_eq!(got, [Number(0.5), Number(1.0), Bool(false), Choice("linux".into()), Choice("flight-size".into())], "in key order: {params:?}");

    let e = refused(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", congestion_avoidance = \"vegas\","));
    assert_eq!(e.path, "flows[0].tcp.congestion_avoidance");
    assert!(e.message.contains("\"reno\", \"cubic\" or \"prague\""), "{e}");
    let e = refused(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", cubic_beta = 0.8,"));
    assert_eq!(e.path, "flows[0].tcp.cubic_beta", "a cubic key with reno is refused");
    assert!(e.message.contains("only applies to congestion_avoidance = \"cubic\""), "{e}");
    for (bad, path, words) in [
        ("cubic_beta = 1.0", "cubic_beta", "1 is out of range; expected between 0 and 1, both excluded"),
        ("cubic_beta = 0", "cubic_beta", "0 is out of range; expected between 0 and 1, both excluded"),
        ("cubic_c = 0", "cubic_c", "0 is out of range; expected positive"),
        ("cubic_c = -0.4", "cubic_c", "-0.4 is out of range; expected positive"),
        ("cubic_ssthresh_from = \"pipe\"", "cubic_ssthresh_from", "expected one of \"cwnd\", \"flight-size\""),
        ("cubic_fast_convergence = 1", "cubic_fast_convergence", "expected true or false"),
        ("cubic_growth = \"bic\"", "cubic_growth", "expected one of \"rfc9438\", \"linux\""),
        ("cubic_c = \"0.4\"", "cubic_c", "\"0.4\" is not valid; expected a number"),
    ] {
        let e = refused(&cubic.replace("congestion_avoidance = \"cubic\",", &format!("congestion_avoidance = \"cubic\", {bad},")));
        assert_eq!(e.path, format!("flows[0].tcp.{path}"), "{bad}: {e}");
        assert!(e.message.contains(words), "{bad}: {e}");
    }
}

#[test]
fn every_declared_avoidance_parameter_is_a_key_of_the_tcp_table() {
    // raw::Tcp lists the avoidance keys; a parameter declared but missing there would be an
    // unknown field. Each is accepted with its algorithm and refused with the others.
    // A scalable avoidance needs tcp.ecn = "l4s"; the others take it too.
    let l4s = |text: String| text.replace("recovery = \"sack\",", "recovery = \"sack\", ecn = \"l4s\",");
    for d in startlab_cc::avoidance::DECLS {
        for p in d.info.params {
            let text = l4s(EXAMPLE.replace("recovery = \"sack\",", &format!("recovery = \"sack\", congestion_avoidance = \"{}\", {} = {},", d.info.name, p.name, p_toml(p))));
            let (_, params) = avoidance_params(&text);
            assert_eq!(params[p.name], registry::default_value(p, 1000), "{}.{}", d.info.name, p.name);
            for other in startlab_cc::avoidance::DECLS.iter().filter(|o| !o.info.params.iter().any(|q| q.name == p.name)) {
                let text = l4s(EXAMPLE.replace("recovery = \"sack\",", &format!("recovery = \"sack\", congestion_avoidance = \"{}\", {} = {},", other.info.name, p.name, p_toml(p))));
                let e = refused(&text);
                assert_eq!(e.path, format!("flows[0].tcp.{}", p.name));
                assert_eq!(e.message, format!("only applies to congestion_avoidance = \"{}\"", d.info.name));
            }
        }
    }
}

/// A parameter's default as a TOML value.
fn p_toml(p: &registry::ParamInfo) -> String {
    match p.kind {
        registry::ParamKind::Number | registry::ParamKind::Integer | registry::ParamKind::Bool => p.default.to_string(),
        _ => format!("{:?}", p.default.trim_matches('"')),
    }
}

#[test]
fn the_resolved_tcp_table_writes_the_avoidance_parameters_as_its_keys() {
    let cubic = EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", congestion_avoidance = \"cubic\", cubic_beta = 0.5,");
    let v = serde_json::to_value(&from_toml(&cubic).unwrap().flows[0].tcp).unwrap();
    assert_eq!(v["congestion_avoidance"], "cubic");
    assert_eq!((v["cubic_c"].as_f64(), v["cubic_beta"].as_f64()), (Some(0.4), Some(0.5)));
    assert_eq!((&v["cubic_fast_convergence"], &v["cubic_ssthresh_from"]), (&serde_json::json!(true), &serde_json::json!("cwnd")));
    assert!(v.get("reno_ssthresh_from").is_none());
    let v = serde_json::to_value(&from_toml(EXAMPLE).unwrap().flows[0].tcp).unwrap();
    assert_eq!((&v["congestion_avoidance"], &v["reno_ssthresh_from"]), (&serde_json::json!("reno"), &serde_json::json!("flight-size")));
    assert!(v.get("cubic_c").is_none());
}

#[test]
fn fast_startups_set_the_iw_or_need_the_handshake() {
    let with = |tcp: &str, startup: &str| {
        EXAMPLE
            .replace(
                "tcp = { recovery = \"sack\", mss = \"1000B\", initial_window = 2, initial_ssthresh = \"20000pkt\", ack = \"every-packet\" }",
                &format!("tcp = {{ {tcp} }}"),
            )
            .replace("startup = { algorithm = \"slow-start\" }", &format!("startup = {{ {startup} }}"))
    };
    let s = from_toml(&with("mss = \"1000B\"", "algorithm = \"initial-start\"")).unwrap();
    assert_eq!(s.flows[0].tcp.initial_window, 83, "initial-start's window becomes tcp.initial_window");
    let e = refused(&with("mss = \"1000B\", initial_window = 4", "algorithm = \"initial-start\""));
    assert_eq!(e.path, "flows[0].startup.initial_window");
    let e = refused(&with("mss = \"1000B\"", "algorithm = \"jump-start\""));
    assert_eq!(e.path, "flows[0].startup.algorithm");
    let e = refused(&with("mss = \"1000B\", handshake = false", "algorithm = \"more-start\""));
    assert_eq!(e.path, "flows[0].startup.algorithm");
    assert!(from_toml(&with("mss = \"1000B\", handshake = true", "algorithm = \"jump-start\", u = \"30pkt\"")).is_ok());
    let e = refused(&with("mss = \"1000B\", handshake = true", "algorithm = \"more-start\", rate = 0"));
    assert_eq!(e.path, "flows[0].startup.rate");
}

#[test]
fn quick_start_defaults_and_its_router_table_are_checked() {
    let with = |table: &str, startup: &str| EXAMPLE.replace(r#"startup = { algorithm = "slow-start" }"#, startup).replace("[[cross]]", &format!("{table}\n[[cross]]"));
    let qs = r#"startup = { algorithm = "quick-start" }"#;
    let s = from_toml(&with("", qs)).unwrap();
    assert_eq!(s.quick_start, QuickStartSpec { routers: None, share: 1.0, window: Dur::from_secs(1) });
    assert_eq!(s.flows[0].startup.params().get(&startlab_cc::startup::QUICK_START_RATE), 1.31072e9, "default: the largest code point");
    assert_eq!(s.flows[0].startup.params().get(&startlab_cc::startup::QUICK_START_VARIANT), "qs1");
    let s = from_toml(&with("[quick_start]\nrouters = [\"right\"]\nshare = 0.5\nwindow = \"200ms\"", r#"startup = { algorithm = "quick-start", rate = "10Mbps", variant = "qs2" }"#)).unwrap();
    assert_eq!(s.quick_start.routers, Some(vec!["right".to_string()]));
    assert_eq!((s.quick_start.share, s.quick_start.window), (0.5, Dur::from_millis(200)));
    assert_eq!(s.flows[0].startup.params().get(&startlab_cc::startup::QUICK_START_RATE), 10e6);
    let cases = [
        ("[quick_start]\nrouters = [\"s0\"]", qs, "quick_start.routers[0]", "is not a router"),
        ("[quick_start]\nrouters = [\"left\", \"left\"]", qs, "quick_start.routers[1]", "listed twice"),
        ("[quick_start]\nrouters = \"some\"", qs, "quick_start.routers", "expected \"all\" or a list"),
        ("[quick_start]\nrouters = [3]", qs, "quick_start.routers[0]", "not a router name"),
        ("[quick_start]\nshare = 0.0", qs, "quick_start.share", "greater than 0 and at most 1"),
        ("[quick_start]\nshare = 1.5", qs, "quick_start.share", "greater than 0 and at most 1"),
        ("[quick_start]\nwindow = \"0s\"", qs, "quick_start.window", "longer than 0s"),
        ("[quick_start]\nwindows = \"1s\"", qs, "quick_start", "unknown field"),
        ("", r#"startup = { algorithm = "quick-start", rate = "50kbps" }"#, "flows[0].startup.rate", "80kbps"),
        ("", r#"startup = { algorithm = "quick-start", rate = 10000000 }"#, "flows[0].startup.rate", "a rate such as \"10Mbps\""),
        ("", r#"startup = { algorithm = "quick-start", variant = "qs3" }"#, "flows[0].startup.variant", "\"qs1\", \"qs2\""),
    ];
    for (table, startup, path, message) in cases {
        let e = refused(&with(table, startup));
        assert!(e.path.starts_with(path) && e.message.contains(message), "{table} {startup}: got {e}");
    }
}

#[test]
fn red_queues_take_the_lab_defaults_and_refuse_mixed_units_and_bad_values() {
    let red = |q: &str| EXAMPLE.replace("queue = { kind = \"droptail\", limit = \"1000pkt\" }", &format!("queue = {{ {q} }}"));
    let s = from_toml(&red("kind = \"red\", limit = \"100pkt\"")).unwrap();
    let Topology::Dumbbell(d) = &s.topology else { panic!("dumbbell expected") };
    assert_eq!(
        d.queue,
        QueueSpec::Red { limit: QueueLimit::Packets(100), min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true, ecn: false, ns2_wait: false },
        "ALGORITHMS.md §17.1 lab defaults"
    );
    let s = from_toml(&red("kind = \"red\", limit = \"150KB\", min_th = \"30KB\", max_th = \"90KB\", ecn = true")).unwrap();
    let Topology::Dumbbell(d) = &s.topology else { panic!("dumbbell expected") };
    assert!(matches!(d.queue, QueueSpec::Red { limit: QueueLimit::Bytes(150_000), min_th: 30_000.0, max_th: 90_000.0, ecn: true, .. }));
    for (q, path, words) in [
        ("kind = \"red\", limit = \"100pkt\", min_th = \"5KB\"", "topology.queue.min_th", "unit of topology.queue.limit"),
        ("kind = \"red\", limit = \"100pkt\", min_th = \"20pkt\"", "topology.queue.min_th", "below max_th"),
        ("kind = \"red\", limit = \"10pkt\"", "topology.queue.max_th", "at most the limit"),
        ("kind = \"red\", limit = \"100pkt\", max_p = 0.0", "topology.queue.max_p", "greater than 0"),
        ("kind = \"red\", limit = \"100pkt\", w_q = 1.5", "topology.queue.w_q", "from 0 to 1"),
        ("kind = \"droptail\", limit = \"100pkt\", ecn = true", "topology.queue.ecn", "kind = \"red\""),
        ("kind = \"blue\", limit = \"100pkt\"", "topology.queue.kind", "\"red\", \"codel\", \"fq-codel\", \"pie\" or \"dualpi2\""),
    ] {
        let e = refused(&red(q));
        assert_eq!(e.path, path, "{q}: {e}");
        assert!(e.message.contains(words), "{q}: {e}");
    }
    let s = from_toml(&EXAMPLE.replace("ack = \"every-packet\"", "ack = \"every-packet\", ecn = true")).unwrap();
    assert_eq!(s.flows[0].tcp.ecn, EcnSpec::Classic);
}

#[test]
fn codel_and_fq_codel_take_their_declared_defaults_and_refuse_what_cannot_work() {
    let with = |q: &str| EXAMPLE.replace("queue = { kind = \"droptail\", limit = \"1000pkt\" }", &format!("queue = {{ {q} }}"));
    let s = from_toml(&with("kind = \"codel\"")).unwrap();
    let Topology::Dumbbell(d) = &s.topology else { panic!("dumbbell expected") };
    assert_eq!(
        d.queue,
        QueueSpec::Codel { limit: QueueLimit::Packets(1000), target: Dur::from_millis(5), interval: Dur::from_millis(100), mtu: 1500, ecn: false }
    );
    let s = from_toml(&with("kind = \"fq-codel\", quantum = 3000, flows = 64, ecn = false")).unwrap();
    let Topology::Dumbbell(d) = &s.topology else { panic!("dumbbell expected") };
    assert!(matches!(
        d.queue,
        QueueSpec::FqCodel { limit: QueueLimit::Packets(10240), flows: 64, quantum: 3000, ecn: false, memory_limit: 33_554_432, drop_batch: 64, .. }
    ));
    for (q, path, words) in [
        ("kind = \"codel\", target = \"200ms\"", "topology.queue.target", "below interval"),
        ("kind = \"codel\", target = \"0ms\"", "topology.queue.target", "longer than 0s"),
        ("kind = \"codel\", limit = \"64KB\"", "topology.queue.limit", "in packets"),
        ("kind = \"codel\", limit = \"0pkt\"", "topology.queue.limit", "at least one packet"),
        ("kind = \"codel\", quantum = 1500", "topology.queue.quantum", "belongs to kind = \"fq-codel\""),
        ("kind = \"fq-codel\", quantum = 1000", "topology.queue.quantum", "below mtu"),
        ("kind = \"fq-codel\", flows = 0", "topology.queue.flows", "from 1 to 65536"),
        ("kind = \"fq-codel\", min_th = \"5pkt\"", "topology.queue.min_th", "belongs to kind = \"red\""),
        ("kind = \"droptail\", limit = \"100pkt\", target = \"5ms\"", "topology.queue.target", "takes only limit"),
        ("kind = \"droptail\"", "topology.queue.limit", "missing"),
    ] {
        let e = refused(&with(q));
        assert_eq!(e.path, path, "{q}: {e}");
        assert!(e.message.contains(words), "{q}: {e}");
    }
    assert_eq!(from_toml(EXAMPLE).unwrap().flows[0].tcp.ecn, EcnSpec::Off, "ECN is off by default");
}

#[test]
fn reno_ssthresh_from_defaults_to_flight_size_and_is_checked() {
    let (_, params) = avoidance_params(EXAMPLE);
    assert_eq!(params, declared_defaults("reno"));
    assert_eq!(params["reno_ssthresh_from"], registry::ParamValue::Choice("flight-size".into()));
    let cwnd = EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", reno_ssthresh_from = \"cwnd\",");
    assert_eq!(avoidance_params(&cwnd).1["reno_ssthresh_from"], registry::ParamValue::Choice("cwnd".into()));
    let e = refused(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", reno_ssthresh_from = \"pipe\","));
    assert_eq!(e.path, "flows[0].tcp.reno_ssthresh_from");
    assert!(e.message.contains("\"pipe\" is not valid; expected one of \"flight-size\", \"cwnd\""), "{e}");
    let e = refused(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", congestion_avoidance = \"cubic\", reno_ssthresh_from = \"cwnd\","));
    assert_eq!(e.path, "flows[0].tcp.reno_ssthresh_from", "a reno key with cubic is refused");
    assert!(e.message.contains("only applies to congestion_avoidance = \"reno\""), "{e}");
    let cubic = EXAMPLE.replace("recovery = \"sack\",", "recovery = \"sack\", congestion_avoidance = \"cubic\",");
    assert!(!avoidance_params(&cubic).1.contains_key("reno_ssthresh_from"));
}

#[test]
fn recoveries_and_the_prr_bound_are_checked() {
    for (name, spec) in [("prr", RecoverySpec::Prr), ("rack-tlp", RecoverySpec::RackTlp), ("linux", RecoverySpec::Linux), ("sack1", RecoverySpec::Sack1), ("ns3-prr", RecoverySpec::Ns3Prr)] {
        let s = from_toml(&EXAMPLE.replace("recovery = \"sack\",", &format!("recovery = \"{name}\","))).unwrap();
        assert_eq!((s.flows[0].tcp.recovery, s.flows[0].tcp.recovery.name(), s.flows[0].tcp.sack()), (spec, name, true));
    }
    let crb = from_toml(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"prr\", prr_bound = \"crb\",")).unwrap();
    assert_eq!(crb.flows[0].tcp.prr_bound, PrrBoundSpec::Crb);
    let safe = from_toml(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"prr\", prr_bound = \"safe-ack\",")).unwrap();
    assert_eq!(safe.flows[0].tcp.prr_bound, PrrBoundSpec::SafeAck);
    let e = refused(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"rack\","));
    assert_eq!(e.path, "flows[0].tcp.recovery");
    assert!(e.message.contains("\"rack-tlp\"") && e.message.contains("\"ns3-prr\""), "{e}");
    let e = refused(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"prr\", prr_bound = \"fast\","));
    assert_eq!(e.path, "flows[0].tcp.prr_bound");
    assert!(e.message.contains("\"crb\""), "{e}");
    let e = refused(&EXAMPLE.replace("recovery = \"sack\",", "recovery = \"linux\", prr_bound = \"crb\","));
    assert_eq!(e.path, "flows[0].tcp.prr_bound");
    assert!(e.message.contains("applies only to recovery = \"prr\""), "{e}");
}

#[test]
fn cross_sources_need_names_of_their_own() {
    let cross = "\n[[cross]]\nkind = \"cbr\"\nrate = \"1Mbps\"\npacket_size = \"1000B\"\n";
    let named = |name: &str| format!("{cross}name = \"{name}\"\n");
    // Two sources of the same name: refused at the second, with its key path.
    let e = refused(&format!("{EXAMPLE}{}{}", named("probe"), named("probe")));
    assert_eq!(e.path, "cross[2].name");
    assert!(e.message.contains("\"probe\" is already the name"), "{}", e.message);
    // A source named like a flow.
    let e = refused(&format!("{EXAMPLE}{}", named("sack")));
    assert_eq!(e.path, "cross[1].name");
    // A default name (kind and position: "cbr2") taken by an earlier source: the message says so.
    let e = refused(&format!("{EXAMPLE}{}{cross}", named("cbr2")));
    assert_eq!(e.path, "cross[2].name");
    assert!(e.message.contains("give it its own `name`"), "{}", e.message);
    // Distinct names pass.
    assert!(from_toml(&format!("{EXAMPLE}{}{}", named("a"), named("b"))).is_ok());
}

#[test]
fn tcp_ecn_takes_a_flag_or_a_name_and_resolves_as_written() {
    let with = |v: &str| from_toml(&EXAMPLE.replace("ack = \"every-packet\"", &format!("ack = \"every-packet\", ecn = {v}")));
    for (v, spec, written) in [
        ("false", EcnSpec::Off, serde_json::json!(false)),
        ("true", EcnSpec::Classic, serde_json::json!(true)),
        ("\"off\"", EcnSpec::Off, serde_json::json!(false)),
        ("\"classic\"", EcnSpec::Classic, serde_json::json!(true)),
        ("\"l4s\"", EcnSpec::L4s, serde_json::json!("l4s")),
    ] {
        let s = with(v).unwrap();
        assert_eq!(s.flows[0].tcp.ecn, spec, "{v}");
        assert_eq!(serde_json::to_value(&s.flows[0].tcp).unwrap()["ecn"], written, "{v}: a scenario without L4S resolves as before");
    }
    for (v, words) in [("\"L4S\"", "\"L4S\" is not known; expected true, false or \"off\", \"classic\" or \"l4s\""), ("1", "1 is not valid")] {
        let e = with(v).unwrap_err();
        assert_eq!(e.path, "flows[0].tcp.ecn", "{v}: {e}");
        assert!(e.message.contains(words), "{v}: {e}");
    }
}

#[test]
fn prague_needs_an_l4s_flow() {
    let with = |tcp: &str| EXAMPLE.replace("recovery = \"sack\",", &format!("recovery = \"sack\", {tcp},"));
    for (tcp, given) in [("congestion_avoidance = \"prague\"", "not given (false)"), ("congestion_avoidance = \"prague\", ecn = true", "true"), ("congestion_avoidance = \"prague\", ecn = \"classic\"", "\"classic\"")] {
        let e = refused(&with(tcp));
        assert_eq!(e.path, "flows[0].tcp.ecn", "{tcp}: {e}");
        assert!(e.message.contains("tcp.ecn must be \"l4s\"") && e.message.ends_with(&format!("it is {given}")), "{tcp}: {e}");
    }
    let s = from_toml(&with("congestion_avoidance = \"prague\", ecn = \"l4s\", prague_rtt_target = \"10ms\"")).unwrap();
    let v = serde_json::to_value(&s.flows[0].tcp).unwrap();
    assert_eq!((&v["congestion_avoidance"], &v["ecn"], &v["prague_rtt_target"]), (&serde_json::json!("prague"), &serde_json::json!("l4s"), &serde_json::json!(10_000_000)));
}
