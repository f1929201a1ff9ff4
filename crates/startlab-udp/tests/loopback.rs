//! startlab-udp over the loopback interface: whole transfers with each receiver, and every kind of
//! bad datagram sent at a running server (and at a running client) is dropped and counted.

use startlab_tcp::{Ack, AckPolicy};
use startlab_udp::wire::{self, Body, CloseReason, Datagram, Settings, HEADER_LEN, VERSION};
use startlab_udp::{send, DropCounts, SendConfig, SendReport, ServeConfig, ServeReport, Server};
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::Duration;

const KEY: [u8; 32] = [0x5a; 32];
const MB: u64 = 1_000_000;

fn scenario(tcp: &str, startup: &str, size: &str) -> startlab_scenario::Scenario {
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
        name = "f"
        tcp = {{ mss = "1448B", initial_window = 10, {tcp} }}
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

/// One whole transfer of `size` bytes with the given TCP options and startup.
fn transfer(tcp: &str, startup: &str, size: u64) -> (SendReport, ServeReport) {
    let (addr, handle) = server();
    let mut cfg = SendConfig::new(scenario(tcp, startup, &format!("{size}B")), 0, addr.to_string(), KEY.to_vec());
    cfg.duration_s = Some(20.0);
    let sent = send(&cfg).expect("the transfer runs");
    let received = handle.join().expect("the server thread ends");
    (sent, received)
}

fn assert_complete(tcp: &str, startup: &str, size: u64) -> (SendReport, ServeReport) {
    let (s, r) = transfer(tcp, startup, size);
    let what = format!("tcp = {{ {tcp} }}, startup {startup}");
    assert!(s.completed, "{what}: the transfer completes: {s:?}");
    assert_eq!(s.ended_by, "completed", "{what}");
    assert_eq!(s.bytes_acked, size, "{what}: every byte acknowledged");
    assert_eq!(r.delivered_bytes, size, "{what}: every byte delivered once");
    assert_eq!((r.ended_by.as_str(), r.close_reason.as_deref()), ("close", Some("completed")), "{what}");
    assert!(s.close_acknowledged, "{what}: the CLOSE was confirmed");
    assert_eq!(s.drops, DropCounts::default(), "{what}: the client dropped nothing");
    assert_eq!(r.drops, DropCounts::default(), "{what}: the server dropped nothing");
    assert!(r.address_verified, "{what}: the token echo verified the client");
    assert_eq!(r.amplification_withheld_bytes, 0, "{what}: a well-behaved client is never limited");
    assert_eq!(r.timeline.last().map(|t| t.bytes), Some(size), "{what}: the timeline ends at the size");
    assert!(r.timeline.windows(2).all(|w| w[0].t_s < w[1].t_s && w[0].bytes < w[1].bytes), "{what}: the timeline grows");
    assert!(!s.samples.is_empty() && s.samples.last().map(|x| x.snd_una) == Some(size), "{what}: per-ACK samples up to the end");
    assert!(s.data_segments_sent >= size.div_ceil(1448), "{what}");
    assert!(s.goodput_bps.is_some_and(|g| g > 0.0), "{what}");
    let json = serde_json::to_value(&s).expect("the report serialises");
    assert!(json["samples"][0]["ssthresh"].is_null(), "{what}: an infinite ssthresh is null: {}", json["samples"][0]);
    assert_eq!(json["bytes_acked"], size, "{what}");
    let json = serde_json::to_value(&r).expect("the report serialises");
    assert_eq!(json["timeline"][0]["bytes"], 1448, "{what}: {}", json["timeline"][0]);
    (s, r)
}

#[test]
fn an_every_packet_receiver_gets_every_byte() {
    let (s, r) = assert_complete(r#"ack = "every-packet", recovery = "sack""#, "slow-start", 4 * MB);
    assert_eq!(r.receiver.as_ref().map(|x| x.ack.as_str()), Some("every-packet"));
    // One ACK per data segment that arrived, the last ones perhaps lost with the CLOSE race aside.
    assert!(r.acks_sent as f64 >= 0.9 * s.data_segments_sent as f64, "{} ACKs for {} segments", r.acks_sent, s.data_segments_sent);
}

#[test]
fn a_delayed_ack_receiver_gets_every_byte_with_about_half_the_acks() {
    let (s, r) = assert_complete(r#"ack = "delayed", delack_timeout = "40ms", recovery = "sack""#, "slow-start", 4 * MB);
    assert_eq!(r.receiver.as_ref().and_then(|x| x.ack_timeout_s), Some(0.04), "the INIT carried the timer");
    let ratio = r.acks_sent as f64 / s.data_segments_sent as f64;
    assert!((0.4..0.8).contains(&ratio), "every second segment is ACKed: {} ACKs for {} segments", r.acks_sent, s.data_segments_sent);
}

#[test]
fn a_quickack_receiver_with_a_handshake_and_ecn_gets_every_byte() {
    let (s, r) = assert_complete(r#"ack = "quickack", quickack_segments = 16, handshake = true, ecn = true, recovery = "newreno""#, "slow-start", 3 * MB);
    assert_eq!(r.receiver.as_ref().and_then(|x| x.quickack_segments), Some(16));
    assert!(s.connect_s.is_some() && s.first_data_s >= s.connect_s, "data follows the SYN-ACK");
    assert_eq!(s.syn_retransmits, 0);
}

#[test]
fn paced_start_completes_and_its_pacer_releases_are_measured() {
    let (s, _) = assert_complete(r#"ack = "every-packet", recovery = "sack", pacing = true"#, "paced-start", 3 * MB);
    assert!(s.pacing.count > 0, "the pacer held segments back: {:?}", s.pacing);
    let (mean, max) = (s.pacing.mean_us.unwrap(), s.pacing.max_us.unwrap());
    assert!(mean >= 0.0 && mean <= max, "{:?}", s.pacing);
}

#[test]
fn an_infinite_flow_stops_at_the_duration_limit() {
    let (addr, handle) = server();
    let mut cfg = SendConfig::new(scenario(r#"ack = "every-packet""#, "slow-start", "infinite"), 0, addr.to_string(), KEY.to_vec());
    cfg.duration_s = Some(0.5);
    let s = send(&cfg).expect("runs");
    let r = handle.join().unwrap();
    assert!(!s.completed && s.ended_by == "duration-limit", "{s:?}");
    assert_eq!(r.close_reason.as_deref(), Some("duration-limit"));
    assert!(r.delivered_bytes > 0 && r.delivered_bytes >= s.bytes_acked, "{} delivered, {} acked", r.delivered_bytes, s.bytes_acked);
    let mut brief = s.clone();
    brief.samples.clear();
    assert!(s.duration_s.is_some_and(|d| (0.3..0.6).contains(&d)), "{:?} {brief:?} {r:?}", s.duration_s);
}

#[test]
fn a_missing_server_is_a_clear_connect_error() {
    // A port nobody listens on: ICMP port unreachable comes back.
    let unused = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut cfg = SendConfig::new(scenario(r#"ack = "every-packet""#, "slow-start", "1MB"), 0, unused.to_string(), KEY.to_vec());
    cfg.connect_timeout_s = 0.3;
    let e = send(&cfg).unwrap_err().to_string();
    assert!(e.contains("no answer from") && e.contains("port unreachable"), "{e}");
}

#[test]
fn binding_a_busy_port_says_so() {
    let (addr, handle) = server();
    let e = Server::bind(&ServeConfig::new(addr.to_string(), KEY.to_vec())).unwrap_err().to_string();
    assert!(e.contains("address already in use"), "{e}");
    // End the first server with a CLOSE of a connection it has never seen: it stays until its
    // accept timeout otherwise, so open one and close it.
    let c = RawClient::new(addr);
    c.init();
    c.recv();
    c.send(&Datagram { conn: c.conn, pn: 1, body: Body::Close { reason: CloseReason::Completed } }, &KEY);
    assert_eq!(handle.join().unwrap().ended_by, "close");
}

/// A hand-driven client: crafts datagrams and sends them at a server.
struct RawClient {
    sock: UdpSocket,
    conn: u64,
}

const SETTINGS: Settings = Settings { policy: AckPolicy::EveryPacket, sack: true, max_sack_blocks: 4, rwnd: u64::MAX, mss: 1448 };

impl RawClient {
    fn new(server: SocketAddr) -> RawClient {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(server).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        RawClient { sock, conn: 0x1234_5678_9abc_def0 }
    }

    fn bytes(d: &Datagram<'_>, key: &[u8; 32]) -> Vec<u8> {
        let mut buf = vec![0; wire::MAX_DATAGRAM];
        let n = wire::encode(key, &mut buf, d);
        buf.truncate(n);
        buf
    }

    fn send(&self, d: &Datagram<'_>, key: &[u8; 32]) -> usize {
        self.raw(&Self::bytes(d, key))
    }

    fn raw(&self, bytes: &[u8]) -> usize {
        self.sock.send(bytes).unwrap()
    }

    fn init(&self) -> usize {
        self.send(&Datagram { conn: self.conn, pn: 0, body: Body::Init { syn: false, ece: false, cwr: false, settings: SETTINGS } }, &KEY)
    }

    fn recv(&self) -> Vec<u8> {
        let mut buf = vec![0; 65536];
        let n = self.sock.recv(&mut buf).expect("the server answers");
        buf.truncate(n);
        buf
    }

    fn data<'a>(&self, pn: u64, seq: u64, payload: &'a [u8], token: Option<u64>) -> Datagram<'a> {
        Datagram { conn: self.conn, pn, body: Body::Data { seq, retransmit: false, ect: false, cwr: false, token, payload } }
    }
}

#[test]
fn every_kind_of_bad_datagram_is_dropped_and_counted_by_the_server() {
    let (addr, handle) = server();
    let c = RawClient::new(addr);
    let payload = [0u8; 100];
    // Before any connection: junk of every kind.
    c.raw(&[VERSION, 3, 0]); // truncated
    c.raw(&[]); // empty: truncated
    let mut v = RawClient::bytes(&c.data(0, 0, &payload, None), &KEY);
    v[0] = 9;
    c.raw(&v); // wrong version
    let mut v = RawClient::bytes(&c.data(0, 0, &payload, None), &KEY);
    v[1] = 200;
    c.raw(&v); // unknown type: malformed
    c.send(&c.data(0, 0, &payload, None), &KEY); // DATA before any INIT: unknown connection
    // A spoofed INIT: bad MAC.
    c.send(&Datagram { conn: c.conn, pn: 0, body: Body::Init { syn: false, ece: false, cwr: false, settings: SETTINGS } }, &[1; 32]);
    // Open the connection and learn the token.
    c.init();
    let d = c.recv();
    let token = match wire::decode(&d).map(|x| x.body) {
        Ok(Body::InitAck { token, syn_ack: None }) => token,
        other => panic!("expected an INIT_ACK without SYN-ACK, got {other:?}"),
    };
    assert!(wire::verify(&KEY, &d));
    // On the connection: a good DATA with the token and CE in the IP header...
    nix::sys::socket::setsockopt(&c.sock, nix::sys::socket::sockopt::Ipv4Tos, &3).unwrap();
    let good = RawClient::bytes(&c.data(1, 0, &payload, Some(token)), &KEY);
    c.raw(&good);
    let ack = c.recv();
    match wire::decode(&ack).map(|x| x.body) {
        Ok(Body::Ack { ack, verified, .. }) => {
            assert_eq!(ack.ack, 100, "the good DATA is acknowledged");
            assert!(ack.ece, "CE was echoed");
            assert!(verified, "the token verified the address");
        }
        other => panic!("expected an ACK, got {other:?}"),
    }
    nix::sys::socket::setsockopt(&c.sock, nix::sys::socket::sockopt::Ipv4Tos, &0).unwrap();
    // ...then the bad ones.
    c.raw(&good); // replayed
    c.send(&c.data(0, 100, &payload, None), &KEY); // pn 0 was the INIT's: replayed
    c.send(&c.data(2, 100, &payload, None), &[2; 32]); // bad MAC
    c.send(
        &Datagram { conn: c.conn ^ 1, pn: 3, body: Body::Data { seq: 100, retransmit: false, ect: false, cwr: false, token: None, payload: &payload } },
        &KEY,
    ); // unknown connection
    c.send(&Datagram { conn: c.conn, pn: 4, body: Body::Ack { ack: Ack::default(), verified: false, delay_ns: 0 } }, &KEY); // reflected: unexpected type
    c.send(&Datagram { conn: c.conn, pn: 5, body: Body::CloseAck }, &KEY); // unexpected type
    let big = [0u8; 1449];
    c.send(&c.data(6, 100, &big, None), &KEY); // over the MSS: malformed
    c.send(&c.data(7, 1 << 40, &payload, None), &KEY); // far beyond the window: malformed
    let mut cut = RawClient::bytes(&c.data(8, 100, &payload, None), &KEY);
    cut.truncate(cut.len() - 30);
    c.raw(&cut); // truncated
    let mut extra = RawClient::bytes(&c.data(9, 100, &payload, None), &KEY);
    extra.insert(HEADER_LEN + 10, 0);
    c.raw(&extra); // a byte too many: malformed
    let other = RawClient::new(addr);
    other.send(&c.data(10, 100, &payload, None), &KEY); // from another address: wrong peer
                                                        // The good datagram after all that still works, then CLOSE.
    c.send(&c.data(11, 100, &payload, None), &KEY);
    let a = c.recv();
    assert!(matches!(wire::decode(&a).map(|x| x.body), Ok(Body::Ack { ack: Ack { ack: 200, .. }, .. })), "the next good DATA is acknowledged");
    c.send(&Datagram { conn: c.conn, pn: 12, body: Body::Close { reason: CloseReason::Completed } }, &KEY);
    assert!(matches!(wire::decode(&c.recv()).map(|x| x.body), Ok(Body::CloseAck)));
    let r = handle.join().unwrap();
    let expected =
        DropCounts { truncated: 3, malformed: 4, wrong_version: 1, unknown_connection: 2, bad_mac: 2, replayed: 2, unexpected_type: 2, wrong_peer: 1 };
    assert_eq!(r.drops, expected, "each bad datagram counted once under its reason");
    assert_eq!(r.delivered_bytes, 200);
    assert_eq!(r.ce_received, 1, "the CE mark was read from the IP header");
    assert_eq!((r.ended_by.as_str(), r.close_reason.as_deref()), ("close", Some("completed")));
}

#[test]
fn an_unverified_client_gets_at_most_three_times_what_it_sent() {
    let (addr, handle) = server();
    let c = RawClient::new(addr);
    c.sock.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    // Never echo the token. One-byte segments, each above a new hole, make the server's answers
    // as large as they get (an ACK with four SACK blocks for a 46-byte DATA).
    let mut sent = c.init();
    let one = [0u8; 1];
    for i in 0..200u64 {
        sent += c.send(&c.data(1 + i, 2 + 2 * i, &one, None), &KEY);
    }
    let mut got = 0;
    let mut buf = vec![0; 65536];
    let mut drain = |got: &mut usize| {
        while let Ok(n) = c.sock.recv(&mut buf) {
            *got += n;
        }
    };
    drain(&mut got);
    sent += c.send(&Datagram { conn: c.conn, pn: 1000, body: Body::Close { reason: CloseReason::DurationLimit } }, &KEY);
    drain(&mut got);
    let r = handle.join().unwrap();
    assert!(!r.address_verified);
    assert!(got > 0, "the server answered within its budget");
    assert!(got <= 3 * sent, "the server sent {got} bytes for {sent} received");
    assert_eq!(r.bytes_sent as usize, got, "every byte the server counts as sent arrived");
    assert_eq!(r.bytes_received as usize, sent, "the server counted every byte it received");
    assert_eq!(r.drops, DropCounts::default());
}

#[test]
fn the_client_drops_and_counts_bad_datagrams_from_the_server() {
    // A fake server: answers the INIT with junk of every kind around one valid INIT_ACK, then
    // ignores the data and confirms the CLOSE.
    let fake = UdpSocket::bind("127.0.0.1:0").unwrap();
    fake.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let addr = fake.local_addr().unwrap();
    let mut cfg = SendConfig::new(scenario(r#"ack = "every-packet""#, "slow-start", "1MB"), 0, addr.to_string(), KEY.to_vec());
    cfg.duration_s = Some(0.3);
    let client = thread::spawn(move || send(&cfg).expect("the client runs"));
    let mut buf = vec![0; 65536];
    let (n, peer) = fake.recv_from(&mut buf).unwrap();
    let conn = wire::decode(&buf[..n]).expect("an INIT").conn;
    let to = |b: &[u8]| fake.send_to(b, peer).unwrap();
    let good = RawClient::bytes(&Datagram { conn, pn: 0, body: Body::InitAck { token: 42, syn_ack: None } }, &KEY);
    to(&[VERSION]); // truncated
    let mut v = good.clone();
    v[0] = 0;
    to(&v); // wrong version
    to(&RawClient::bytes(&Datagram { conn: conn ^ 1, pn: 0, body: Body::InitAck { token: 42, syn_ack: None } }, &KEY)); // unknown connection
    to(&RawClient::bytes(&Datagram { conn, pn: 0, body: Body::InitAck { token: 42, syn_ack: None } }, &[3; 32])); // bad MAC
    to(&RawClient::bytes(&Datagram { conn, pn: 1, body: Body::Close { reason: CloseReason::Completed } }, &KEY)); // reflected: unexpected type
    to(&good);
    to(&good); // replayed
    let bad_ack = Ack { ack: 7, rwnd: u64::MAX, ..Ack::default() };
    to(&RawClient::bytes(&Datagram { conn, pn: 2, body: Body::Ack { ack: bad_ack, verified: false, delay_ns: 0 } }, &KEY)); // mid-segment ACK: malformed
    let mut closes = 0;
    let mut data = 0;
    while let Ok((n, _)) = fake.recv_from(&mut buf) {
        match wire::decode(&buf[..n]).map(|d| d.body) {
            Ok(Body::Data { token, .. }) => {
                data += 1;
                assert_eq!(token, Some(42), "the client echoes the token until verified");
            }
            Ok(Body::Close { reason }) => {
                closes += 1;
                assert_eq!(reason, CloseReason::DurationLimit);
                to(&RawClient::bytes(&Datagram { conn, pn: 3, body: Body::CloseAck }, &KEY));
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let s = client.join().unwrap();
    assert_eq!((closes, s.close_acknowledged), (1, true));
    assert!(data > 0 && s.data_segments_sent >= data, "IW sent, then RTO retransmissions");
    let expected =
        DropCounts { truncated: 1, malformed: 1, wrong_version: 1, unknown_connection: 1, bad_mac: 1, replayed: 1, unexpected_type: 1, wrong_peer: 0 };
    assert_eq!(s.drops, expected, "each bad datagram counted once under its reason");
    assert!(!s.completed && s.bytes_acked == 0);
}

#[test]
fn acks_are_timed_by_kernel_arrival_stamps_less_the_delay_they_carry() {
    let (s, r) = assert_complete(r#"ack = "every-packet", recovery = "sack""#, "paced-start", 2 * MB);
    // Every datagram from the server came with the kernel's arrival stamp, and every ACK the
    // server sent carried how long it held it.
    assert_eq!(s.ack_unstamped, 0, "SO_TIMESTAMPNS gave every datagram a stamp");
    assert!(s.ack_lag.count >= r.acks_sent, "{} stamped datagrams for {} ACKs", s.ack_lag.count, r.acks_sent);
    assert_eq!(r.ack_lag.count, r.acks_sent, "each ACK's delay is measured");
    for lag in [s.ack_lag, r.ack_lag] {
        let (mean, max) = (lag.mean_us.unwrap(), lag.max_us.unwrap());
        assert!((0.0..=max).contains(&mean) && max < 5e6, "{lag:?}");
    }
    // The algorithm's own report comes through as the simulator names it.
    assert!(s.startup_details.contains_key("past_g_b"), "{:?}", s.startup_details.keys());
}
