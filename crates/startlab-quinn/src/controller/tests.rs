//! The adapter on scripted sequences of quinn's calls: the window must move exactly as
//! `startlab-quic`'s sender moves it (RFC 9002 §7) for the same events.

use super::*;
use std::time::Duration;

/// MDS of the scenarios below (the default: a 1500-byte path MTU less 28 bytes).
const MDS: u64 = 1472;

fn scenario(startup: &str, avoidance: &str) -> startlab_scenario::Scenario {
    let text = format!(
        r#"
seed = 1
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "100pkt" }}
[[flows]]
name = "f"
size = "infinite"
quic = {{}}
tcp = {{ congestion_avoidance = "{avoidance}" }}
startup = {{ algorithm = "{startup}" }}
"#
    );
    match startlab_scenario::from_toml(&text) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// A scripted connection: quinn's calls at times in ms after the controller's origin.
struct Script {
    c: StartlabController,
    origin: Instant,
}

impl Script {
    fn new(startup: &str, avoidance: &str) -> Script {
        // NOTE: an `Instant` cannot be made from a number; the script's times are offsets from it.
        #[allow(clippy::disallowed_methods)]
        let origin = Instant::now();
        let cc = startlab_sim::flow_controller(&scenario(startup, avoidance), 0).expect("flow 0");
        Script { c: StartlabController::new(cc, origin), origin }
    }
    fn at(&self, ms: f64) -> Instant {
        self.origin + Duration::from_nanos((ms * 1e6) as u64)
    }
    /// `n` full datagrams leave at `ms` (one quinn `on_sent` each).
    fn send(&mut self, ms: f64, n: u64) {
        for _ in 0..n {
            self.c.on_sent(self.at(ms), MDS, 0);
        }
    }
    /// One ACK frame at `ms` acknowledging `n` datagrams sent at `sent_ms`, `in_flight` after it.
    fn ack(&mut self, ms: f64, sent_ms: f64, n: u64, in_flight: u64) {
        for _ in 0..n {
            self.c.packet_acked(self.at(ms), self.at(sent_ms), MDS, false);
        }
        self.c.on_end_acks(self.at(ms), in_flight, false, None);
    }
    /// quinn declares packets lost at `ms`, the newest of them sent at `sent_ms`.
    fn lose(&mut self, ms: f64, sent_ms: f64, persistent: bool) {
        self.c.on_congestion_event(self.at(ms), self.at(sent_ms), persistent, MDS);
    }
    fn cwnd(&self) -> u64 {
        self.c.window()
    }
}

#[test]
fn the_window_starts_at_the_quic_initial_window() {
    let s = Script::new("slow-start", "reno");
    assert_eq!(s.cwnd(), 14_720);
    assert_eq!(s.c.initial_window(), 14_720);
    assert_eq!(s.c.handle().trace().cwnd[0].cwnd, 14_720);
}

#[test]
fn slow_start_doubles_the_window_per_round_counting_bytes() {
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 10);
    // One ACK frame for the whole first flight: byte counting adds every acknowledged byte.
    s.ack(40.0, 0.0, 10, 0);
    assert_eq!(s.cwnd(), 2 * 14_720);
    s.send(40.0, 20);
    s.ack(80.0, 40.0, 10, 10 * MDS);
    s.ack(81.0, 40.0, 10, 0);
    assert_eq!(s.cwnd(), 4 * 14_720);
    let t = s.c.handle().trace();
    assert_eq!(t.acks, 3);
    assert_eq!(t.cwnd.iter().map(|p| p.cwnd).collect::<Vec<_>>(), vec![14_720, 29_440, 44_160, 58_880]);
    assert!(s.c.handle().startup_exit().is_none());
}

#[test]
fn an_app_limited_ack_does_not_grow_the_window() {
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 2);
    for _ in 0..2 {
        s.c.packet_acked(s.at(40.0), s.at(0.0), MDS, true);
    }
    s.c.on_end_acks(s.at(40.0), 0, true, None);
    assert_eq!(s.cwnd(), 14_720, "cwnd validation holds the window while not cwnd-limited");
}

#[test]
fn a_loss_halves_the_window_with_reno_once_per_recovery_period() {
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 10);
    s.ack(40.0, 0.0, 10, 0);
    s.send(40.0, 20);
    s.ack(80.0, 40.0, 19, MDS);
    s.send(80.0, 38);
    let before = s.cwnd();
    assert_eq!(before, 14_720 + 29 * MDS);
    s.lose(90.0, 40.0, false);
    assert_eq!(s.cwnd(), before / 2, "Reno halves the window the loss found");
    let (t, reason, cwnd) = s.c.handle().startup_exit().expect("the loss ends slow start");
    assert_eq!((reason, cwnd as u64), ("loss", before));
    assert!((t - 0.090).abs() < 1e-9, "{t}");
    // A loss of a packet sent before the period began: no second reduction.
    s.lose(95.0, 80.0, false);
    assert_eq!(s.cwnd(), before / 2);
    // ACKs of packets sent before the period: no growth.
    s.ack(120.0, 80.0, 30, 8 * MDS);
    assert_eq!(s.cwnd(), before / 2);
    // A packet sent after the period began is acknowledged: recovery ends, Reno grows by
    // MDS·acked/cwnd.
    s.send(125.0, 1);
    s.ack(165.0, 125.0, 1, 0);
    let after = s.cwnd();
    assert!(after > before / 2 && after <= before / 2 + MDS * MDS / (before / 2) + 1, "{after}");
    let t = s.c.handle().trace();
    assert_eq!((t.congestion_events, t.lost_bytes, t.persistent_congestion), (1, 2 * MDS, 0));
}

#[test]
fn the_loss_an_ack_reveals_is_applied_before_that_ack() {
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 10);
    // quinn: the frame's ACKs, then the losses it reveals, with the same `now`.
    s.ack(40.0, 0.0, 5, 5 * MDS);
    s.lose(40.0, 0.0, false);
    assert_eq!(s.cwnd(), 14_720 / 2, "halved from the window the loss found, not grown first");
    // A loss found by the timer later: an ACK frame still waiting is applied before it.
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 10);
    s.ack(40.0, 0.0, 9, MDS);
    s.lose(50.0, 0.0, false);
    assert_eq!(s.cwnd(), (14_720 + 9 * MDS) / 2);
}

#[test]
fn persistent_congestion_collapses_to_the_minimum_window() {
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 10);
    s.ack(40.0, 0.0, 10, 0);
    s.send(40.0, 20);
    s.c.on_congestion_event(s.at(1500.0), s.at(40.0), true, 20 * MDS);
    assert_eq!(s.cwnd(), 2 * MDS);
    let t = s.c.handle().trace();
    assert_eq!((t.congestion_events, t.persistent_congestion), (1, 1));
    // The period ended: the next loss reduces again.
    s.send(1500.0, 2);
    s.ack(1540.0, 1500.0, 1, MDS);
    s.lose(1541.0, 1500.0, false);
    assert_eq!(s.c.handle().trace().congestion_events, 2);
}

#[test]
fn an_ecn_ce_increase_reduces_without_a_recovery() {
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 10);
    s.ack(40.0, 0.0, 10, 0);
    s.send(40.0, 20);
    // quinn reports ECN-CE as a congestion event with no lost bytes.
    s.c.on_congestion_event(s.at(80.0), s.at(40.0), false, 0);
    assert_eq!(s.cwnd(), 14_720);
    let (_, reason, _) = s.c.handle().startup_exit().expect("exit");
    assert_eq!(reason, "ecn");
    assert_eq!(s.c.handle().trace().ecn_events, 1);
}

#[test]
fn hystart_plus_plus_runs_inside_the_adapter() {
    // Every round 10 ms more RTT than the last: HyStart++ sees the delay increase, enters its
    // conservative slow start and leaves when that ends.
    let mut s = Script::new("hystart++", "cubic");
    let (mut sent_at, mut n) = (0.0, 10u64);
    s.send(sent_at, n);
    for round in 0..12 {
        let t = sent_at + 40.0 + 10.0 * round as f64;
        for k in 0..n {
            let now = s.at(t + k as f64 * 0.01);
            s.c.packet_acked(now, s.at(sent_at), MDS, false);
            s.c.on_end_acks(now, (n - k - 1) * MDS, false, None);
        }
        sent_at = t + n as f64 * 0.01;
        n = s.cwnd() / MDS;
        s.send(sent_at, n);
        if s.c.handle().startup_exit().is_some() {
            break;
        }
    }
    let (_, reason, cwnd) = s.c.handle().startup_exit().expect("a delay increase ends slow start");
    assert_eq!(reason, "css-done");
    assert!(cwnd as u64 > 14_720, "{cwnd}");
}

#[test]
fn each_ack_frame_carries_a_delivery_rate_sample() {
    let mut s = Script::new("slow-start", "reno");
    s.send(0.0, 10);
    s.ack(40.0, 0.0, 10, 0);
    // The first flight left with nothing delivered, its interval starting at the first send.
    let r = s.c.last_rate().expect("a sample");
    assert_eq!((r.delivered, r.interval), (10 * MDS, Dur(40_000_000)));
    s.send(40.0, 20);
    s.ack(80.0, 40.0, 10, 10 * MDS);
    // Delivered since the newest packet left (at 40 ms, after 10 datagrams were delivered at 40 ms).
    let r = s.c.last_rate().expect("a sample");
    assert_eq!((r.delivered, r.interval), (10 * MDS, Dur(40_000_000)));
    assert!((r.rate() - 10.0 * MDS as f64 / 0.040).abs() < 1e-6);
}
