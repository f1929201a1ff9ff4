//! startlab-udp's QUIC mode over the loopback interface: whole transfers with and without the
//! handshake, the scenario's client rebuilt from the INIT, and bad QUIC datagrams dropped.

use startlab_udp::wire::{self, Body, Datagram, QuicDatagram};
use startlab_udp::{send, DropCounts, SendConfig, SendReport, ServeConfig, ServeReport, Server};
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::Duration;

const KEY: [u8; 32] = [0x3c; 32];
const MB: u64 = 1_000_000;

fn scenario(quic: &str, tcp: &str, startup: &str, size: &str) -> startlab_scenario::Scenario {
    let text = format!(
        r#"
        seed = 1
        duration = "20s"
        [topology]
        kind = "dumbbell"
        bottleneck_rate = "100Mbps"
        rtt = "10ms"
        access_rate = "1Gbps"
        queue = {{ kind = "droptail", limit = "100pkt" }}
        [[flows]]
        name = "q"
        quic = {{ {quic} }}
        tcp = {{ {tcp} }}
        startup = {{ algorithm = "{startup}" }}
        size = "{size}"
        "#
    );
    startlab_scenario::from_toml(&text).unwrap_or_else(|e| panic!("test scenario: {e}"))
}

fn server() -> (SocketAddr, thread::JoinHandle<ServeReport>) {
    let mut cfg = ServeConfig::new("127.0.0.1:0", KEY.to_vec());
    cfg.accept_timeout_s = Some(10.0);
    cfg.idle_timeout_s = 3.0;
    let server = Server::bind(&cfg).expect("bind a loopback server");
    let addr = server.local_addr();
    (addr, thread::spawn(move || server.run().expect("the server runs")))
}

fn transfer(quic: &str, tcp: &str, startup: &str, size: u64) -> (SendReport, ServeReport) {
    let (addr, handle) = server();
    let mut cfg = SendConfig::new(scenario(quic, tcp, startup, &format!("{size}B")), 0, addr.to_string(), KEY.to_vec());
    cfg.duration_s = Some(20.0);
    let sent = send(&cfg).expect("the transfer runs");
    (sent, handle.join().expect("the server thread ends"))
}

fn assert_complete(quic: &str, tcp: &str, startup: &str, size: u64) -> (SendReport, ServeReport) {
    let (s, r) = transfer(quic, tcp, startup, size);
    let what = format!("quic = {{ {quic} }}, tcp = {{ {tcp} }}, startup {startup}");
    assert_eq!(s.transport, "quic", "{what}");
    assert_eq!(r.transport.as_deref(), Some("quic"), "{what}");
    assert!(s.completed && s.ended_by == "completed", "{what}: the transfer completes: {:?}", (s.ended_by.as_str(), s.bytes_acked));
    assert_eq!(s.bytes_acked, size, "{what}: every byte acknowledged");
    assert_eq!(r.delivered_bytes, size, "{what}: every byte delivered");
    assert_eq!((r.ended_by.as_str(), r.close_reason.as_deref()), ("close", Some("completed")), "{what}");
    assert!(s.close_acknowledged, "{what}");
    assert_eq!(s.drops, DropCounts::default(), "{what}: the data sender dropped nothing");
    assert_eq!(r.drops, DropCounts::default(), "{what}: the serving side dropped nothing");
    assert_eq!(r.amplification_withheld_bytes, 0, "{what}: the padded INIT covers the client's Initial");
    assert_eq!(s.mss, 1472, "{what}: the datagram size is the QUIC flow's segment");
    assert!(s.data_segments_sent >= size.div_ceil(1472), "{what}: {} packets for {size} B", s.data_segments_sent);
    assert!(!s.samples.is_empty() && s.samples.last().map(|x| x.snd_una) == Some(size), "{what}: per-ACK samples up to the end");
    assert!(s.samples.iter().all(|x| x.cwnd >= 2.0 * 1472.0), "{what}: the window never falls below two datagrams");
    assert!(r.timeline.last().map(|t| t.bytes) == Some(size), "{what}: the timeline ends at the size");
    assert!(s.goodput_bps.is_some_and(|g| g > 0.0), "{what}");
    (s, r)
}

#[test]
fn a_two_megabyte_response_with_the_handshake() {
    let (s, r) = assert_complete("handshake = true", "", "slow-start", 2 * MB);
    let q = r.quic.as_ref().expect("the serving side reports its QUIC client");
    assert!(q.handshake && q.handshake_complete, "{q:?}");
    assert_eq!(q.request, 100);
    // The handshake comes first: the first stream byte leaves after the client's Finished, at
    // least one round trip after the connection opened.
    assert!(s.first_data_s.unwrap() > s.connect_s.unwrap(), "{:?} {:?}", s.first_data_s, s.connect_s);
    assert!(r.acks_sent > 0 && r.acks_sent < s.data_segments_sent, "ACK every second packet: {} ACKs for {} packets", r.acks_sent, s.data_segments_sent);
}

#[test]
fn a_response_without_the_handshake_with_ecn_and_hystart() {
    let (s, r) = assert_complete("handshake = false, pacing = true", "ecn = true", "hystart++", 2 * MB);
    let q = r.quic.as_ref().unwrap();
    assert!(q.ecn && !q.handshake, "{q:?}");
    assert_eq!(s.startup, "hystart++");
    assert_eq!(s.ce_received + r.ce_received, 0, "loopback marks nothing");
}

#[test]
fn flow_control_and_ack_frequency_travel_and_are_honoured() {
    let (s, r) = assert_complete(r#"max_data = "256KB", ack_frequency = { threshold = 10, max_ack_delay = "5ms" }"#, "", "slow-start", 2 * MB);
    assert_eq!(r.quic.as_ref().unwrap().max_data, Some(256_000));
    // A window of 256 KB: the flight never exceeds it.
    assert!(s.samples.iter().all(|x| x.flight <= 256_000 + 2 * 1472), "flight beyond the receive window");
}

#[test]
fn a_quic_flow_with_l4s_is_refused_with_a_reason() {
    let s = scenario("", r#"ecn = "l4s""#, "slow-start", "1MB");
    let e = send(&SendConfig::new(s, 0, "127.0.0.1:9", KEY.to_vec())).unwrap_err().to_string();
    assert!(e.contains("QUIC") && e.contains("l4s") && e.contains("flow \"q\""), "{e}");
}

#[test]
fn quic_settings_the_init_cannot_carry_are_refused_before_connecting() {
    let s = scenario("max_ack_ranges = 5000", "", "slow-start", "1MB");
    let e = send(&SendConfig::new(s, 0, "127.0.0.1:9", KEY.to_vec())).unwrap_err().to_string();
    assert!(e.contains("quic.max_ack_ranges") && e.contains("1 to 1024"), "{e}");
}

/// Bad QUIC datagrams at a running QUIC server: forged, replayed, implausible.
#[test]
fn bad_quic_datagrams_are_dropped_and_counted() {
    let (addr, handle) = server();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let conn = 77;
    let settings = startlab_udp::wire::QuicSettings {
        handshake: true,
        sizes: Default::default(),
        request: 100,
        ack_policy: Default::default(),
        receive_window: None,
        max_datagram_size: 1472,
        loss: Default::default(),
        pacing: false,
        pacing_gain: 1.25,
        initial_window: 14720,
        ecn: true,
    };
    let send_d = |d: &Datagram<'_>, key: &[u8; 32]| {
        let mut buf = vec![0; wire::MAX_DATAGRAM];
        let n = wire::encode(key, &mut buf, d);
        sock.send(&buf[..n]).unwrap();
        n
    };
    assert_eq!(send_d(&Datagram { conn, pn: 0, body: Body::InitQuic { settings } }, &KEY), wire::QUIC_INIT_LEN);
    // INIT_ACK, then the client's Initial (1200 bytes: within 3x the padded INIT).
    let mut buf = vec![0; 65536];
    let mut sizes = vec![];
    for _ in 0..2 {
        let n = sock.recv(&mut buf).expect("the server answers");
        sizes.push(n);
        let d = wire::decode(&buf[..n]).expect("a valid datagram");
        assert!(wire::verify(&KEY, &buf[..n]));
        if let Body::Quic(q) = d.body {
            assert_eq!(q.packet.space, startlab_quic::Space::Initial);
            assert_eq!(n, q.packet.size as usize, "the Initial is exactly its simulated size");
        }
    }
    assert!(sizes.contains(&1200), "{sizes:?}");
    let packet = |pn: u64| startlab_quic::sender::Transmit {
        space: startlab_quic::Space::Initial,
        pn,
        size: 200,
        data: None,
        ack: Some(startlab_quic::ack::AckFrame { space: startlab_quic::Space::Initial, ranges: vec![(0, 5)], ack_delay: startlab_units::Dur::ZERO, ecn: None }),
        handshake_done: false,
        max_data: None,
        ack_frequency: None,
        ack_eliciting: false,
        probe: false,
        retransmission: false,
    };
    // An ACK of packets the client never sent: authenticated, but implausible.
    send_d(&Datagram { conn, pn: 1, body: Body::Quic(QuicDatagram { hold_ns: 0, packet: packet(0) }) }, &KEY);
    // Under another key.
    send_d(&Datagram { conn, pn: 2, body: Body::Quic(QuicDatagram { hold_ns: 0, packet: packet(1) }) }, &[1; 32]);
    // A QUIC packet number beyond the datagram's.
    let mut p = packet(50);
    p.ack = None;
    send_d(&Datagram { conn, pn: 3, body: Body::Quic(QuicDatagram { hold_ns: 0, packet: p.clone() }) }, &KEY);
    // Replayed datagram number.
    p.pn = 0;
    send_d(&Datagram { conn, pn: 3, body: Body::Quic(QuicDatagram { hold_ns: 0, packet: p }) }, &KEY);
    send_d(&Datagram { conn, pn: 4, body: Body::Close { reason: wire::CloseReason::DurationLimit } }, &KEY);
    let r = handle.join().unwrap();
    assert_eq!(r.ended_by, "close");
    assert_eq!(r.drops.malformed, 2, "{:?}", r.drops);
    assert_eq!(r.drops.bad_mac, 1, "{:?}", r.drops);
    assert_eq!(r.drops.replayed, 1, "{:?}", r.drops);
}
