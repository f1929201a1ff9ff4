//! The handshake between a client and a server endpoint over a symmetric path (a fixed one-way
//! delay and rate each way, no queue limit, scripted drops): when data starts, the
//! anti-amplification limit, key discarding, and recovery from lost handshake packets.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use startlab_cc::avoidance::{Avoidance, Reno};
use startlab_cc::startup::{Abc, AbcConfig, Startup};
use startlab_cc::{CcConfig, Controller, Ssthresh};
use startlab_quic::ack::{AckFrequency, AckPolicy, Ecn};
use startlab_quic::endpoint::{Endpoint, EndpointConfig, HandshakeSizes, Role};
use startlab_quic::sender::{initial_window, SenderConfig, Transmit};
use startlab_quic::Space;
use startlab_units::{Dur, Rate, Time};

const MDS: u32 = 1472;

fn cc() -> Controller {
    Controller::new(
        CcConfig { mss: MDS as u64, initial_window: initial_window(MDS), initial_ssthresh: Ssthresh::Infinite, loss_window: 2 * MDS as u64, cwnd_validation: false, linux_ss_clamp: false },
        Startup::Abc(Abc::new(AbcConfig { l: 1 << 30, l_after_timeout: 1 << 30 })),
        Avoidance::Reno(Reno { byte_counting: true, ..Reno::default() }),
    )
}

fn endpoint(role: Role, handshake: bool, sizes: HandshakeSizes, response: u64, window: Option<u64>, frequency: Option<AckFrequency>) -> Endpoint {
    Endpoint::new(
        EndpointConfig {
            role,
            handshake,
            sizes,
            request: 200,
            response: Some(response),
            ack_policy: AckPolicy::default(),
            receive_window: window.filter(|_| role == Role::Client),
            peer_receive_window: window.filter(|_| role == Role::Server),
            request_ack_frequency: frequency,
            sender: SenderConfig { max_datagram_size: MDS, ..SenderConfig::default() },
        },
        cc(),
    )
}

/// What happened, for the assertions.
#[derive(Default)]
struct Log {
    /// (time, from the client?, packet).
    packets: Vec<(Time, bool, Transmit)>,
    /// Server bytes sent and client bytes received by the server, checked at each server send
    /// before the client's address was validated.
    amplification_ok: bool,
    done_at: Option<Time>,
}

/// Runs a client and a server until the client has the whole response (or `limit`). `drop`
/// decides per packet (from the client?, space, packet number, how many times that (space, pn)
/// was seen) whether the path loses it.
fn run(handshake: bool, sizes: HandshakeSizes, response: u64, one_way_ms: u64, drop: impl Fn(bool, Space, u64) -> bool, limit: f64) -> (Endpoint, Endpoint, Log) {
    run_with_window(handshake, sizes, response, one_way_ms, drop, limit, None)
}

fn run_with_window(handshake: bool, sizes: HandshakeSizes, response: u64, one_way_ms: u64, drop: impl Fn(bool, Space, u64) -> bool, limit: f64, window: Option<u64>) -> (Endpoint, Endpoint, Log) {
    run_full(handshake, sizes, response, one_way_ms, drop, limit, window, None)
}

#[allow(clippy::too_many_arguments)]
fn run_full(
    handshake: bool,
    sizes: HandshakeSizes,
    response: u64,
    one_way_ms: u64,
    drop: impl Fn(bool, Space, u64) -> bool,
    limit: f64,
    window: Option<u64>,
    frequency: Option<AckFrequency>,
) -> (Endpoint, Endpoint, Log) {
    let mut c = endpoint(Role::Client, handshake, sizes, response, window, frequency);
    let mut s = endpoint(Role::Server, handshake, sizes, response, window, frequency);
    let rate = Rate(100_000_000);
    let delay = Dur::from_millis(one_way_ms);
    let mut q: BinaryHeap<Reverse<(Time, u64, bool, usize)>> = BinaryHeap::new();
    let mut busy = [Time::ZERO; 2];
    let mut seq = 0;
    let mut log = Log { amplification_ok: true, ..Log::default() };
    let mut now = Time::ZERO;
    let (mut server_sent, mut server_received) = (0u64, 0u64);
    let mut validated = false;
    let mut timers: Vec<(Time, bool)> = Vec::new();
    loop {
        for from_client in [true, false] {
            loop {
                let e = if from_client { &mut c } else { &mut s };
                let Some(t) = e.poll_transmit(now) else { break };
                if !from_client && !validated {
                    server_sent += t.size as u64;
                    log.amplification_ok &= server_sent <= 3 * server_received;
                }
                let lost = drop(from_client, t.space, t.pn);
                log.packets.push((now, from_client, t.clone()));
                if lost {
                    continue;
                }
                let d = from_client as usize;
                let start = busy[d].max(now);
                busy[d] = start + rate.tx_time(t.size as u64 + 28);
                seq += 1;
                q.push(Reverse((busy[d] + delay, seq, from_client, log.packets.len() - 1)));
            }
        }
        for (e, is_client) in [(&c, true), (&s, false)] {
            if let Some(t) = e.next_timeout(now) {
                if !timers.contains(&(t, is_client)) {
                    timers.push((t, is_client));
                    seq += 1;
                    q.push(Reverse((t, seq, is_client, usize::MAX)));
                }
            }
        }
        if c.stream_received() >= response {
            log.done_at = Some(now);
            break;
        }
        let Some(Reverse((t, _, flag, i))) = q.pop() else { break };
        if t.as_secs_f64() > limit {
            break;
        }
        now = t;
        if i == usize::MAX {
            // A timer of the client (flag) or the server.
            timers.retain(|&(tt, who)| !(tt == t && who == flag));
            if flag { c.on_timeout(now) } else { s.on_timeout(now) }
            continue;
        }
        let p = log.packets[i].2.clone();
        if flag {
            server_received += p.size as u64;
            if p.space == Space::Handshake {
                validated = true;
            }
            s.on_packet(now, &p, Ecn::NotEct);
        } else {
            c.on_packet(now, &p, Ecn::NotEct);
        }
    }
    (c, s, log)
}

fn never(_: bool, _: Space, _: u64) -> bool {
    false
}

#[test]
fn the_response_starts_one_and_a_half_round_trips_after_the_clients_first_packet() {
    let (c, s, log) = run(true, HandshakeSizes::default(), 100_000, 25, never, 10.0);
    assert!(log.done_at.is_some() && c.is_confirmed() && s.is_confirmed());
    // Client Initial at 0; server flight at 25 ms; client Finished + request at 50 ms; the
    // server's first stream byte at 75 ms (plus serialisation).
    let first = log.packets.iter().find(|(_, from_client, t)| !from_client && t.space == Space::AppData && t.data.is_some()).expect("the response").0;
    assert!((0.075..0.0765).contains(&first.as_secs_f64()), "first response byte at {first:?}");
    // Every client Initial is padded to 1200 bytes; the server's first datagrams are not.
    assert!(log.packets.iter().filter(|(_, fc, t)| *fc && t.space == Space::Initial && t.ack_eliciting).all(|(_, _, t)| t.size >= 1200));
    // The server's first RTT sample: its Initial and the client's padded ACK of it, 50 ms of
    // propagation and two serialisations.
    let min = s.sender().loss_detection().rtt().min().as_secs_f64();
    assert!((0.050..0.0502).contains(&min), "{min}");
    // Both discarded their Initial and Handshake keys: nothing is left in flight there.
    for e in [&c, &s] {
        assert_eq!(e.sender().loss_detection().outstanding(Space::Initial).count(), 0);
        assert_eq!(e.sender().loss_detection().outstanding(Space::Handshake).count(), 0);
    }
    assert!(s.completed_at().is_some_and(|t| t.as_secs_f64() > 0.075));
}

#[test]
fn without_a_handshake_the_response_leaves_at_once() {
    let (_, _, log) = run(false, HandshakeSizes::default(), 50_000, 25, never, 10.0);
    let first = log.packets.iter().find(|(_, fc, t)| !fc && t.data.is_some()).expect("data").0;
    assert_eq!(first, Time::ZERO);
    assert!(log.done_at.is_some());
}

#[test]
fn a_large_certificate_waits_for_the_clients_bytes_under_the_amplification_limit() {
    // 9000 bytes of server flight exceed 3 × 1200: the rest waits for the client's ACKs.
    let sizes = HandshakeSizes { server_flight: 9000, ..HandshakeSizes::default() };
    let (_, s, log) = run(true, sizes, 20_000, 25, never, 10.0);
    assert!(log.amplification_ok, "the server sent more than three times what it received");
    assert!(log.done_at.is_some() && s.is_confirmed());
    // Its first burst stops at the limit: at most 3600 bytes leave at 25 ms.
    let at_first: u64 = log.packets.iter().filter(|(t, fc, _)| !fc && t.as_secs_f64() < 0.0251).map(|(_, _, p)| p.size as u64).sum();
    assert!(at_first <= 3600 && at_first > 2400, "{at_first} bytes in the server's first burst");
}

#[test]
fn a_lost_client_initial_is_sent_again_after_the_first_probe_timeout() {
    let (c, _, log) = run(true, HandshakeSizes::default(), 20_000, 25, |fc, sp, pn| fc && sp == Space::Initial && pn == 0, 10.0);
    assert!(log.done_at.is_some());
    // RFC 9002 §6.2.2: 333 ms + 4 · 166.5 ms = 999 ms without a sample.
    let second = log.packets.iter().filter(|(_, fc, t)| *fc && t.space == Space::Initial && t.ack_eliciting).nth(1).expect("a probe").0;
    assert_eq!(second, Time(999_000_000));
    assert!(c.sender().stats().ptos >= 1);
}

#[test]
fn lost_server_handshake_packets_and_a_lost_finished_are_recovered() {
    // The server's second Handshake packet, and the client's third — its Finished when nothing
    // is lost (two ACK-only Handshake packets go first).
    let drop = |fc: bool, sp: Space, pn: u64| sp == Space::Handshake && pn == if fc { 2 } else { 1 };
    let (c, s, log) = run(true, HandshakeSizes::default(), 200_000, 25, drop, 20.0);
    assert!(log.done_at.is_some() && c.is_confirmed() && s.is_confirmed());
    assert!(s.sender().stats().retransmissions + s.sender().stats().ptos >= 1);
    let finished_sends = log.packets.iter().filter(|(_, fc, t)| *fc && t.space == Space::Handshake && t.data.is_some()).count();
    assert!(finished_sends >= 2, "the client's Finished went {finished_sends} time(s)");
}


#[test]
fn a_small_receive_window_limits_the_rate_to_a_window_per_round_trip() {
    let size = 2_000_000;
    let (_, s, free) = run_with_window(true, HandshakeSizes::default(), size, 25, never, 30.0, None);
    let (_, sw, held) = run_with_window(true, HandshakeSizes::default(), size, 25, never, 30.0, Some(64 * 1024));
    let (t_free, t_held) = (free.done_at.expect("done").as_secs_f64(), held.done_at.expect("done").as_secs_f64());
    assert!(!s.sender().flow_blocked() && sw.sender().flow_blocked());
    // At most a window (64 KiB) per 50 ms round trip: 2 MB take at least 1.5 s.
    assert!(t_held > 1.5 && t_held > 2.0 * t_free, "{t_held} s with the window, {t_free} s without");
    // The client raised the limit as it read: MAX_DATA frames went.
    assert!(held.packets.iter().filter(|(_, fc, t)| *fc && t.max_data.is_some()).count() > 20);
}

#[test]
fn an_ack_frequency_request_thins_the_clients_acks_and_sets_the_pto_delay() {
    let ask = AckFrequency { sequence: 0, ack_eliciting_threshold: 9, request_max_ack_delay: Dur::from_millis(10), reordering_threshold: 1 };
    let size = 3_000_000;
    let (_, sp, plain) = run_full(true, HandshakeSizes::default(), size, 25, never, 30.0, None, None);
    let (_, s, thin) = run_full(true, HandshakeSizes::default(), size, 25, never, 30.0, None, Some(ask));
    assert!(plain.done_at.is_some() && thin.done_at.is_some());
    let acks = |log: &Log| log.packets.iter().filter(|(_, fc, t)| *fc && t.space == Space::AppData && t.ack.is_some()).count();
    let (a_plain, a_thin) = (acks(&plain), acks(&thin));
    // Every second packet against every tenth: about five times fewer ACKs.
    assert!(a_thin * 4 < a_plain, "{a_thin} ACKs with the request, {a_plain} without");
    assert!(thin.packets.iter().filter(|(_, fc, t)| !fc && t.ack_frequency.is_some()).count() == 1);
    // Once the frame was acknowledged the server's PTO and ACK-delay cap use the new delay.
    assert_eq!(s.sender().loss_detection().max_ack_delay(), Dur::from_millis(10));
    assert_eq!(sp.sender().loss_detection().max_ack_delay(), Dur::from_millis(25));
}
