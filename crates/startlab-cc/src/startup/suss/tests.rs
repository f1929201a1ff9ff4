//! SUSS on scripted ACK streams (suss.rs).
use super::*;
use crate::avoidance::{Avoidance, Cubic, Reno};
use crate::startup::Startup;
use crate::testkit::{at_ms, flow_ack, ms, MSS};
use crate::{CcConfig, Controller, Phase, Ssthresh};

fn suss_with(cfg: SussConfig) -> Startup {
    Startup::Suss(Suss::new(cfg))
}

fn suss() -> Startup {
    suss_with(SussConfig::new(MSS, 10))
}

fn linux() -> Startup {
    Startup::HyStartLinux(HyStartLinux::new(HyStartLinuxConfig::new(MSS)))
}

fn us(x: u64) -> Dur {
    Dur::from_micros(x)
}

/// A scripted flow over a controller: one ACK per segment unless told otherwise; after every
/// ACK it sends, one segment at a time, what the window allows (telling the controller of each,
/// as the sender does), all at the ACK's time: pacing spaces nothing here, it is read from the
/// controller.
struct Flow {
    c: Controller,
    una: u64,
    nxt: u64,
    /// Pacing starts the controller handed out, in order.
    starts: Vec<Time>,
}

impl Flow {
    fn with(startup: Startup, avoidance: Avoidance) -> Flow {
        let cfg = CcConfig { mss: MSS, initial_window: 10 * MSS, initial_ssthresh: Ssthresh::Infinite, loss_window: MSS, cwnd_validation: false, linux_ss_clamp: false };
        let mut c = Controller::new(cfg, startup, avoidance);
        c.on_first_send(10 * MSS);
        Flow { c, una: 0, nxt: 10 * MSS, starts: vec![] }
    }

    fn new(startup: Startup) -> Flow {
        Flow::with(startup, Avoidance::Reno(Reno::default()))
    }

    fn flight(&self) -> u64 {
        (self.nxt - self.una) / MSS
    }

    fn cwnd(&self) -> f64 {
        self.c.cwnd() / MSS as f64
    }

    fn ack_n(&mut self, t: Time, rtt: Option<Dur>, segments: u64) {
        self.una += segments * MSS;
        self.c.on_ack(&flow_ack(t, rtt, segments, self.una, self.nxt));
        self.send(t);
    }

    fn send(&mut self, t: Time) {
        while (self.nxt + MSS - self.una) as f64 <= self.c.cwnd() {
            self.nxt += MSS;
            self.c.on_data_sent(t, self.nxt);
            self.starts.extend(self.c.take_pacing_start());
        }
    }

    /// The ACKs of one round, one per segment: the first `blue` from `start` at `blue_gap`, the
    /// rest `red_gap` apart after them, with RTT sample `rtt(i)`. The index of the ACK that
    /// ended startup, if one did.
    fn round(&mut self, start: Time, blue: u64, blue_gap: Dur, red_gap: Dur, rtt: impl Fn(u64) -> Option<Dur>) -> Option<u64> {
        let n = self.flight();
        for i in 0..n {
            let t = if i < blue { start + Dur(i * blue_gap.0) } else { start + Dur((blue - 1) * blue_gap.0 + (i - blue + 1) * red_gap.0) };
            self.ack_n(t, rtt(i), 1);
            if self.c.phase() != Phase::SlowStart {
                return Some(i);
            }
        }
        None
    }

    /// Whole flights at `gap`, one every `every` ms from `first` ms, until startup ends.
    fn flights(&mut self, first: u64, every: u64, gap: Dur, rtt: impl Fn(u64) -> Option<Dur> + Copy) -> (Option<u64>, u64) {
        for r in 0..12 {
            let n = self.flight();
            if let Some(i) = self.round(at_ms(first + every * r), n, gap, gap, rtt) {
                return (Some(i), r);
            }
        }
        (None, 12)
    }

    fn exit(&self) -> Option<(ExitReason, f64)> {
        self.c.startup_exit().map(|e| (e.reason, e.cwnd / MSS as f64))
    }

    fn num(&self, key: &str) -> Option<f64> {
        self.c.startup_report().into_iter().find_map(|(k, v)| match v {
            Detail::Num(x) if k == key => Some(x),
            _ => None,
        })
    }

    fn stop(&self) -> (&'static str, f64) {
        let d = self.c.startup_report();
        let why = d.iter().find_map(|(k, v)| match v {
            Detail::Text(t) if *k == "suss_stop" => Some(*t),
            _ => None,
        });
        (why.expect("suss_stop reported"), self.num("suss_stop_round").expect("suss_stop_round reported"))
    }
}

const RTT: fn(u64) -> Option<Dur> = |_| Some(ms(100));

/// IW 10, RTT 100 ms, blue ACKs 0.1 ms apart (an idle fast path): rounds 2, 3 and 4 grow
/// fourfold, each paced as specified. Returns the flow after round 4.
fn three_jumps() -> Flow {
    let mut f = Flow::new(suss());
    // SUSS round 2: the IW's 10 ACKs, 100.0-100.9 ms. ΔtBAT = 20·900 µs/(2·9) = 1000 µs <
    // 100 ms / 4: red = 20 segments paced over 100 − 50 ms from (50 − 1)/2 ms after the tail,
    // once its two clocked segments are out; cwnd 20 → 40 as they leave.
    assert_eq!(f.round(at_ms(100), 10, us(100), us(100), RTT), None);
    assert_eq!(f.cwnd(), 40.0);
    assert_eq!(f.c.pacing_rate(), Some(20.0 * MSS as f64 / 0.050));
    assert_eq!(f.starts, vec![at_ms(100) + us(900) + us(24_500)]);
    // Round 3: 20 blue ACKs (1.9 ms: ΔtBAT 2000 µs), then the 20 paced red ones 2.5 ms apart.
    // Predicted next train 4000²/1000 = 16 ms ≤ 100 ms: red = 40·3 = 120, red ACKs 20; from 60
    // at the tail cwnd reaches 60 + 120 − 20 = 160; the red ACKs add nothing. Pacing starts
    // (25 − 2)/2 ms after the tail.
    assert_eq!(f.round(at_ms(200), 20, us(100), us(2500), RTT), None);
    assert_eq!(f.cwnd(), 160.0);
    assert_eq!(f.c.pacing_rate(), Some(120.0 * MSS as f64 / 0.075));
    assert_eq!(f.starts[1], at_ms(200) + us(1900) + us(11_500));
    // Round 4: 40 blue ACKs, 120 red ones: 64 ms ≤ 100 ms; red 80·7 = 560, red ACKs 120;
    // cwnd 200 → 640, paced over 87.5 ms.
    assert_eq!(f.round(at_ms(300), 40, us(100), us(625), RTT), None);
    assert_eq!(f.cwnd(), 640.0);
    assert_eq!(f.c.pacing_rate(), Some(560.0 * MSS as f64 / 0.0875));
    assert_eq!(f.num("suss_jumps"), Some(3.0));
    f
}

#[test]
fn a_short_ack_train_grows_fourfold_in_rounds_two_to_four_with_the_extra_paced() {
    three_jumps();
}

#[test]
fn then_the_cap_ends_slow_start_where_the_scaled_train_passes_half_the_rtt() {
    let mut f = three_jumps();
    // Round 5 (= accelerated_rounds + 2): no more speed-up. The first ACK stops the pacing.
    // The blue train, 80 ACKs 0.1 ms apart, counts 2^3 times: 8·(now − round_start) > 50 ms at
    // its 64th ACK (6.3 ms), where cwnd is 703: cap = 703 + 63·7 = 1144 segments; slow start
    // (growth 2) goes on until cwnd exceeds it, at the 506th ACK.
    let exit = f.round(at_ms(500), 80, us(100), us(156), RTT);
    assert_eq!(exit, Some(505));
    assert_eq!(f.c.pacing_rate(), None);
    assert_eq!(f.num("suss_cap"), Some(1144.0 * MSS as f64));
    assert_eq!(f.stop(), ("cap", 5.0));
    // Three jumps: cwnd becomes the data in flight, 1144 segments, and ssthresh with it.
    assert_eq!(f.exit(), Some((ExitReason::AckTrain, 1144.0)));
    assert_eq!(f.c.ssthresh(), Ssthresh::Bytes(1144.0 * MSS as f64));
}

#[test]
fn hystart_linux_on_the_same_path_needs_three_more_rounds() {
    // The same ACK timing without SUSS: doubling from 10, the train of 640 ACKs 0.1 ms apart
    // exceeds 50 ms at its 502nd ACK (50.1 ms) in the 7th flight, at cwnd 1141: SUSS left at
    // about the same window in its 5th.
    let mut h = Flow::new(linux());
    assert_eq!(h.flights(100, 100, us(100), RTT), (Some(501), 6));
    assert_eq!(h.exit(), Some((ExitReason::AckTrain, 1141.0)));
}

#[test]
fn the_window_grows_only_as_the_paced_data_leaves_and_red_acks_add_nothing() {
    let mut f = Flow::new(suss());
    for i in 0..9 {
        f.ack_n(at_ms(100) + us(100 * i), RTT(0), 1);
    }
    // Before the tail: plain slow start, 19 segments, all sent.
    assert_eq!((f.cwnd(), f.flight(), f.c.pacing_rate()), (19.0, 19, None));
    // The tail: its increase makes 20; the sender sends two clocked segments (the window is
    // full), then the switch to pacing lets cwnd run two segments ahead of each one sent, up to
    // 40. No segment is sent unpaced beyond the two: the pacer holds them until the start.
    f.una += MSS;
    f.c.on_ack(&AckEvent { now: at_ms(100) + us(900), newly_acked: MSS, ack_seq: f.una, snd_nxt: f.nxt, rtt: RTT(0), flight_size: f.nxt - f.una, ..AckEvent::default() });
    assert_eq!((f.cwnd(), f.c.pacing_rate()), (20.0, None), "the ACK itself only grows by one");
    f.nxt += MSS;
    f.c.on_data_sent(at_ms(101), f.nxt);
    assert_eq!((f.cwnd(), f.c.pacing_rate()), (20.0, None), "one segment of room left: no switch");
    f.nxt += MSS;
    f.c.on_data_sent(at_ms(101), f.nxt);
    assert_eq!(f.cwnd(), 22.0, "full: switch, two segments ahead");
    assert_eq!((f.c.pacing_rate(), f.c.take_pacing_start()), (Some(400_000.0), Some(at_ms(125) + us(400))));
    f.send(at_ms(126));
    assert_eq!((f.cwnd(), f.flight()), (40.0, 40));
    // Round 3: the first (blue) ACK stops the pacing and grows by one; blue ACKs each grow by
    // one; the red ACKs of the paced period add nothing.
    f.ack_n(at_ms(200), RTT(0), 1);
    assert_eq!((f.cwnd(), f.c.pacing_rate()), (41.0, None));
    for i in 1..20 {
        f.ack_n(at_ms(200) + us(100 * i), RTT(0), 1);
    }
    assert_eq!(f.cwnd(), 160.0);
    for i in 0..20 {
        f.ack_n(at_ms(202) + us(2500 * i), RTT(0), 1);
        assert_eq!(f.cwnd(), 160.0);
    }
}

/// Where a scripted flow left startup: the ACK's index in its flight, the flight, the exit.
type Left = (Option<u64>, u64, Option<(ExitReason, f64)>);

/// Flights of ACKs `gap` apart, one every `every` ms, until startup ends, for SUSS and for
/// hystart-linux.
fn both(cfg: SussConfig, hcfg: HyStartLinuxConfig, every: u64, gap: Dur, rtt: fn(u64) -> Option<Dur>) -> [Left; 2] {
    [suss_with(cfg), Startup::HyStartLinux(HyStartLinux::new(hcfg))].map(|startup| {
        let mut f = Flow::new(startup);
        let (i, r) = f.flights(every, every, gap, rtt);
        (i, r, f.exit())
    })
}

#[test]
fn a_long_blue_train_in_round_two_turns_suss_off_and_leaves_hystart_linux_alone() {
    // RTT 20 ms, ACKs 1 ms apart: ΔtBAT = 20·9 ms/18 = 10 ms ≥ 20 ms / 4. From there on every
    // ACK is hystart-linux's: the same exit at the same ACK.
    let [s, h] = both(SussConfig::new(MSS, 10), HyStartLinuxConfig::new(MSS), 100, ms(1), |_| Some(ms(20)));
    assert_eq!(s, h);
    assert!(s.0.is_some());
    let mut f = Flow::new(suss());
    f.round(at_ms(100), 10, ms(1), ms(1), |_| Some(ms(20)));
    assert_eq!((f.cwnd(), f.stop(), f.num("suss_jumps")), (20.0, ("slow-train", 2.0), Some(0.0)));
}

#[test]
fn a_minimum_rtt_of_ten_ms_or_less_turns_suss_off() {
    for (rtt, on) in [(10, false), (11, true)] {
        let mut f = Flow::new(suss());
        f.round(at_ms(100), 10, us(100), us(100), |_| Some(ms(rtt)));
        assert_eq!(f.cwnd(), if on { 40.0 } else { 20.0 }, "RTT {rtt} ms");
        if !on {
            assert_eq!(f.stop(), ("short-rtt", 2.0));
        }
    }
    // min_rtt is a parameter.
    let mut f = Flow::new(suss_with(SussConfig { min_rtt: ms(150), ..SussConfig::new(MSS, 10) }));
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    assert_eq!((f.cwnd(), f.stop()), (20.0, ("short-rtt", 2.0)));
}

#[test]
fn a_train_predicted_to_fill_the_pipe_stops_the_speed_up_and_slow_start_doubles() {
    let mut f = Flow::new(suss());
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    // Round 3's blue ACKs 1 ms apart: ΔtBAT 20 ms, Δt 40 ms against 1 ms a round earlier:
    // predicted 40²/1 = 1600 ms > 100 ms. No pacing; the red ACKs grow cwnd as slow start.
    assert_eq!(f.round(at_ms(200), 20, ms(1), us(2500), RTT), None);
    assert_eq!((f.cwnd(), f.c.pacing_rate()), (80.0, None));
    assert_eq!(f.stop(), ("prediction", 3.0));
    assert_eq!(f.num("suss_jumps"), Some(1.0));
    // And no later round speeds up, however short its train.
    f.round(at_ms(300), 40, us(100), us(100), RTT);
    assert_eq!(f.cwnd(), 160.0);
}

#[test]
fn a_rising_minimum_rtt_stops_the_speed_up_before_hystart_sees_it() {
    // Round 3's samples at 112 ms: k = 2 rounds since delay_min fell, 3·112 > 3·100 + 2·100/8
    // (the limit is 108.3 ms), while HyStart's delay test needs more than 112.5 ms.
    let mut f = Flow::new(suss());
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    assert_eq!(f.round(at_ms(200), 20, us(100), us(2500), |_| Some(ms(112))), None);
    assert_eq!((f.cwnd(), f.stop()), (80.0, ("delay", 3.0)));
    // 108 ms passes.
    let mut f = Flow::new(suss());
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    f.round(at_ms(200), 20, us(100), us(2500), |_| Some(ms(108)));
    assert_eq!(f.cwnd(), 160.0);
    // delay_margin is a parameter: 0 allows no rise at all.
    let mut f = Flow::new(suss_with(SussConfig { delay_margin: 0.0, ..SussConfig::new(MSS, 10) }));
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    f.round(at_ms(200), 20, us(100), us(2500), |_| Some(ms(101)));
    assert_eq!((f.cwnd(), f.stop()), (80.0, ("delay", 3.0)));
}

#[test]
fn accelerated_rounds_bounds_the_fourfold_rounds() {
    let mut f = Flow::new(suss_with(SussConfig { accelerated_rounds: 1, ..SussConfig::new(MSS, 10) }));
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    f.round(at_ms(200), 20, us(100), us(2500), RTT);
    assert_eq!((f.cwnd(), f.stop()), (80.0, ("max-rounds", 3.0)));
}

#[test]
fn hystarts_delay_exit_after_two_jumps_takes_the_flight_as_the_window() {
    let mut f = Flow::new(suss());
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    f.round(at_ms(200), 20, us(100), us(2500), RTT);
    assert_eq!(f.cwnd(), 160.0);
    // Round 4 at 120 ms: after 8 samples the 9th trips HyStart's delay test (> 112.5 ms). cwnd
    // is then 168 and 167 segments are in flight: the exit window is the flight.
    assert_eq!(f.round(at_ms(300), 40, us(100), us(625), |_| Some(ms(120))), Some(8));
    assert_eq!(f.exit(), Some((ExitReason::DelayIncrease, 167.0)));
    assert_eq!(f.stop(), ("delay-increase", 4.0));
}

/// The IW's ACKs at 0.1 ms with 22 segments sent after them (the paced period has begun), then
/// a congestion signal of `kind` with them in flight, over CUBIC (ssthresh = 0.7·cwnd, as
/// Linux). The ssthresh it sets, in segments.
fn loss_after_round_two(startup: Startup, kind: CongestionKind) -> f64 {
    let mut f = Flow::with(startup, Avoidance::Cubic(Cubic::default()));
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    f.c.on_congestion(&CongestionEvent { now: at_ms(205), kind, flight_size: 22 * MSS, enter_recovery: kind != CongestionKind::Timeout });
    f.c.ssthresh().as_f64() / MSS as f64
}

#[test]
fn a_loss_in_startup_reduces_from_the_flight() {
    // The scripted flow sent the whole paced period at once (cwnd 40); the loss is found with
    // 22 out: CUBIC's 0.7·cwnd is taken from 22 (the source sets cwnd to the packets in flight
    // first), for a fast retransmit and an ECN echo.
    for kind in [CongestionKind::FastRetransmit, CongestionKind::Ecn] {
        assert!((loss_after_round_two(suss(), kind) - 0.7 * 22.0).abs() < 1e-9, "{kind:?}");
    }
    // A timeout (the source: no such rule) and hystart-linux (cwnd 20) reduce from cwnd.
    assert!((loss_after_round_two(suss(), CongestionKind::Timeout) - 0.7 * 40.0).abs() < 1e-9);
    assert!((loss_after_round_two(linux(), CongestionKind::FastRetransmit) - 14.0).abs() < 1e-9);
}

#[test]
fn after_a_congestion_signal_suss_is_off_for_the_connection() {
    let mut f = Flow::new(suss());
    f.round(at_ms(100), 10, us(100), us(100), RTT);
    f.c.on_congestion(&CongestionEvent { now: at_ms(150), kind: CongestionKind::Timeout, flight_size: 40 * MSS, enter_recovery: false });
    assert_eq!(f.stop(), ("timeout", 2.0));
    let mut s = Suss::new(SussConfig::new(MSS, 10));
    let view = CcView { cwnd: 20.0 * MSS as f64, ssthresh: Ssthresh::Infinite, mss: MSS, round: 1, min_rtt: None, new_round: false };
    let ev = CongestionEvent { now: at_ms(10), kind: CongestionKind::FastRetransmit, flight_size: 12 * MSS, enter_recovery: true };
    assert_eq!(s.loss_window(&view, &ev), Some(12.0 * MSS as f64), "on: the flight");
    s.on_congestion(&view, &ev);
    assert_eq!(s.loss_window(&view, &ev), None, "off: cwnd");
}

#[test]
fn a_paced_flow_runs_plain_hystart_linux() {
    let paced = HyStartLinuxConfig { paced: true, ..HyStartLinuxConfig::new(MSS) };
    let [s, h] = both(SussConfig { hystart: paced, ..SussConfig::new(MSS, 10) }, paced, 100, us(100), RTT);
    assert_eq!(s, h);
    assert!(s.0.is_some());
}

#[test]
fn an_initial_window_acknowledged_at_once_has_no_train_to_time() {
    let mut f = Flow::new(suss());
    f.ack_n(at_ms(100), RTT(0), 10);
    assert_eq!((f.cwnd(), f.stop()), (20.0, ("no-train", 2.0)));
}

#[test]
fn the_declaration_lists_every_parameter_with_the_sources_defaults() {
    let names: Vec<_> = DECL.info.params.iter().map(|p| (p.name, p.default)).collect();
    assert_eq!(
        names,
        vec![
            ("accelerated_rounds", "3"),
            ("min_rtt", "10ms"),
            ("delay_margin", "0.125"),
            ("detect", "both"),
            ("low_window", "16pkt"),
            ("ack_delta", "2ms"),
            ("min_samples", "8"),
            ("ack_delay", "0ms"),
            ("paced", "false"),
            ("round_reset", "ungated"),
        ]
    );
    assert_eq!(DECL.on_ce, crate::startup::CeRule::ExitAsLoss);
    assert!(!ACCELERATED_ROUNDS.info.range.contains(0.0) && !DELAY_MARGIN.info.range.contains(1.5));
}
