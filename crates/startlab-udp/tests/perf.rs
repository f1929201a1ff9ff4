//! What the transport sustains on loopback (a measurement, not a check: run it with
//! `cargo test --release -p startlab-udp --test perf -- --ignored --nocapture`).

use startlab_udp::{send, SendConfig, ServeConfig, Server};
use std::thread;

#[test]
#[ignore = "a measurement; run with --release -- --ignored --nocapture"]
fn loopback_datagram_rate_and_cpu() {
    let key = vec![0x33; 32];
    let text = r#"
        seed = 1
        duration = "5s"
        [topology]
        kind = "dumbbell"
        bottleneck_rate = "100Mbps"
        rtt = "20ms"
        access_rate = "1Gbps"
        queue = { kind = "droptail", limit = "166pkt" }
        [[flows]]
        name = "bulk"
        tcp = { mss = "1448B", initial_window = 10, recovery = "sack", ack = "every-packet" }
        startup = { algorithm = "slow-start" }
        size = "infinite"
    "#;
    let scenario = startlab_scenario::from_toml(text).unwrap();
    for spin_us in [0, 50] {
        let server = Server::bind(&ServeConfig::new("127.0.0.1:0", key.clone())).unwrap();
        let addr = server.local_addr().to_string();
        let receiving = thread::spawn(move || server.run().unwrap());
        let mut cfg = SendConfig::new(scenario.clone(), 0, addr, key.clone());
        cfg.duration_s = Some(5.0);
        cfg.spin_us = spin_us;
        let s = send(&cfg).unwrap();
        let r = receiving.join().unwrap();
        let secs = s.duration_s.unwrap();
        println!(
            "spin {spin_us} µs: {secs:.2} s, sender {:.0} datagrams/s ({:.1} Mbit/s of payload acked), {:.0} ACKs/s received; \
             CPU: sender {:.2} s ({:.1} µs/datagram), receiver {:.2} s ({:.1} µs/datagram); retransmissions {}, RTOs {}, \
             receiver socket overflows {}, pacing {:?}",
            s.datagrams_sent as f64 / secs,
            s.goodput_bps.unwrap_or(0.0) / 1e6,
            s.datagrams_received as f64 / secs,
            s.cpu_s.unwrap_or(f64::NAN),
            s.cpu_s.unwrap_or(f64::NAN) * 1e6 / (s.datagrams_sent + s.datagrams_received) as f64,
            r.cpu_s.unwrap_or(f64::NAN),
            r.cpu_s.unwrap_or(f64::NAN) * 1e6 / (r.datagrams_sent + r.datagrams_received) as f64,
            s.retransmissions,
            s.rto_count,
            r.socket_overflow_drops,
            s.pacing,
        );
    }
}
