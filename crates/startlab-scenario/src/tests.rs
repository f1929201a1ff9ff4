use super::*;

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
