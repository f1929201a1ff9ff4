//! Careful Resume's phase transitions on scripted ACK streams, each from RFC 9959's text (§3.2 to
//! §3.6, Appendix B's examples). Segments of `MSS` = 1000 bytes; the path's RTT is 100 ms.

use super::*;
use crate::startup::Startup;
use crate::testkit::{self, MSS};
use crate::{Controller, Phase};

const SEG: f64 = MSS as f64;

/// A set of saved parameters whose `saved_cwnd` is `segments` segments at a 100 ms RTT.
fn saved(segments: u64) -> SavedPath {
    SavedPath { rate_bps: segments as f64 * SEG * 8.0 / 0.1, rtt: Dur::from_millis(100), saved_at: None }
}

/// What the scripted sender sends after each ACK.
#[derive(Clone, Copy)]
enum Send {
    /// Fill the window (`SND.NXT = SND.UNA + cwnd`).
    Fill,
    /// New data only up to this many segments (an application with no more).
    Upto(u64),
}

/// A scripted connection over a controller running Careful Resume, IW 10, infinite ssthresh.
struct Flow {
    c: Controller,
    una: u64,
    nxt: u64,
}

impl Flow {
    fn new(cfg: CarefulResumeConfig) -> Flow {
        let mut c = testkit::controller(Startup::CarefulResume(CarefulResume::new(cfg)), 10, Ssthresh::Infinite);
        c.on_first_send(10 * MSS);
        Flow { c, una: 0, nxt: 10 * MSS }
    }

    fn with(saved_segments: u64) -> Flow {
        Flow::new(CarefulResumeConfig::rfc(10.0 * SEG, Some(saved(saved_segments))))
    }

    /// One ACK at `t_ms` for `segs` segments with an RTT sample of `rtt_ms`; then the sender sends.
    fn ack_full(&mut self, t_ms: u64, segs: u64, rtt_ms: Option<u64>, send: Send, cwnd_limited: bool) {
        self.una += segs * MSS;
        self.c.on_ack(&AckEvent {
            now: Time(t_ms * 1_000_000),
            newly_acked: segs * MSS,
            ack_seq: self.una,
            snd_nxt: self.nxt,
            rtt: rtt_ms.map(Dur::from_millis),
            flight_size: self.nxt - self.una,
            cwnd_limited,
            acked_segments: segs as u32,
            delivered: self.una,
            ..AckEvent::default()
        });
        let window = self.una + (self.c.cwnd() as u64 / MSS) * MSS;
        self.nxt = self.nxt.max(match send {
            Send::Fill => window,
            Send::Upto(s) => window.min(s * MSS),
        });
    }

    fn ack(&mut self, t_ms: u64, send: Send) {
        self.ack_full(t_ms, 1, Some(100), send, true);
    }

    /// The initial window's ten ACKs, 1 ms apart from `t0_ms`, filling the window.
    fn initial_window(&mut self, t0_ms: u64) {
        for i in 0..10 {
            self.ack(t0_ms + i, Send::Fill);
        }
    }

    fn loss(&mut self, t_ms: u64, kind: CongestionKind) {
        self.c.on_congestion(&CongestionEvent {
            now: Time(t_ms * 1_000_000),
            kind,
            flight_size: self.nxt - self.una,
            enter_recovery: kind == CongestionKind::FastRetransmit,
        });
    }

    fn text(&self, key: &str) -> Option<&'static str> {
        self.c.startup_report().into_iter().find(|(k, _)| *k == key).and_then(|(_, v)| match v {
            Detail::Text(t) => Some(t),
            Detail::Num(_) => None,
        })
    }

    fn num(&self, key: &str) -> Option<f64> {
        self.c.startup_report().into_iter().find(|(k, _)| *k == key).and_then(|(_, v)| match v {
            Detail::Num(x) => Some(x),
            Detail::Text(_) => None,
        })
    }

    fn segs(&self) -> f64 {
        self.c.cwnd() / SEG
    }
}

#[test]
fn reconnaissance_confirms_the_path_then_jumps_to_half_the_saved_cwnd_paced_over_the_current_rtt() {
    // §3.2 "Path confirmed" on the ACK that covers the initial data; §3.3 on entry: PipeSize =
    // flight_size, CWND = jump_cwnd = saved_cwnd/2; §4.3.2: one segment per RTT·MPS/jump_cwnd.
    let mut f = Flow::with(200);
    for i in 0..9 {
        f.ack(100 + i, Send::Fill);
        assert_eq!(f.text("cr_phase"), Some("reconnaissance"), "slow start until the IW is acknowledged");
    }
    assert_eq!(f.segs(), 19.0, "normal CC grows the window in Reconnaissance");
    f.ack(109, Send::Fill);
    assert_eq!(f.text("cr_phase"), Some("unvalidated"));
    assert_eq!(f.text("cr_recon_exit"), Some("jump"));
    assert_eq!(f.segs(), 100.0, "jump_cwnd = 200/2 segments");
    assert_eq!(f.num("cr_pipesize"), Some(18.0 * SEG), "PipeSize = flight_size at the jump");
    assert_eq!(f.c.pacing_rate(), Some(100.0 * SEG / 0.1), "jump_cwnd per current RTT");
    assert_eq!(f.num("cr_t_unvalidated"), Some(0.109));
}

#[test]
fn a_rate_limited_sender_stays_in_reconnaissance_until_it_has_more_to_send() {
    // §4.2: "allowed to remain in the Reconnaissance Phase ... until there is more data".
    let mut f = Flow::with(200);
    for i in 0..9 {
        f.ack(100 + i, Send::Fill);
    }
    f.ack_full(109, 1, Some(100), Send::Fill, false);
    assert_eq!(f.text("cr_phase"), Some("reconnaissance"));
    f.ack_full(110, 1, Some(100), Send::Fill, true);
    assert_eq!(f.text("cr_phase"), Some("unvalidated"));
}

#[test]
fn no_jump_when_the_rtt_check_fails_or_nothing_usable_is_saved() {
    // §3.2 "Minimum RTT too small": at most saved_rtt/2; §4.2.1: more than ten times saved_rtt.
    // "When a path is not confirmed, Careful Resume does not modify the CWND."
    for (rtt_ms, jumps, why) in [(50, false, "rtt-too-small"), (51, true, "jump"), (1000, true, "jump"), (1001, false, "rtt-too-large")] {
        let mut f = Flow::with(200);
        for i in 0..10 {
            f.ack_full(rtt_ms + i, 1, Some(rtt_ms), Send::Fill, true);
        }
        assert_eq!(f.text("cr_recon_exit"), Some(why), "min RTT {rtt_ms} ms against saved 100 ms");
        assert_eq!(f.segs(), if jumps { 100.0 } else { 20.0 }, "min RTT {rtt_ms} ms");
        if !jumps {
            assert_eq!(f.text("cr_path"), Some("reconnaissance>normal"));
            assert_eq!(f.c.pacing_rate(), None);
        }
    }
    // Nothing saved: normal CC from the start.
    let f = Flow::new(CarefulResumeConfig::rfc(10.0 * SEG, None));
    assert_eq!((f.text("cr_phase"), f.text("cr_recon_exit")), (Some("normal"), Some("no-saved-state")));
    // A jump no larger than the window the ACKs already opened is no jump.
    let mut f = Flow::with(40);
    f.initial_window(100);
    assert_eq!((f.text("cr_recon_exit"), f.segs()), (Some("cwnd-above-jump"), 20.0));
    // max_jump caps jump_cwnd (§3.3: min(max_jump, saved_cwnd/2)).
    let mut f = Flow::new(CarefulResumeConfig { max_jump: Some(50.0 * SEG), ..CarefulResumeConfig::rfc(10.0 * SEG, Some(saved(200))) });
    f.initial_window(100);
    assert_eq!(f.segs(), 50.0);
}

#[test]
fn a_saved_set_past_its_lifetime_is_deleted_unused() {
    // §3.2 "Lifetime of saved CC parameters".
    let old = SavedPath { saved_at: Some(Time::ZERO), ..saved(200) };
    let mut f = Flow::new(CarefulResumeConfig::rfc(10.0 * SEG, Some(old)));
    f.initial_window(300_100);
    assert_eq!(f.text("cr_recon_exit"), Some("lifetime-expired"));
    assert_eq!(f.segs(), 20.0);
    assert_eq!(f.c.startup_retained(), Some(PathMemory::Forget));
    let mut f = Flow::new(CarefulResumeConfig::rfc(10.0 * SEG, Some(old)));
    f.initial_window(299_000);
    assert_eq!(f.text("cr_recon_exit"), Some("jump"), "younger than 5 minutes");
}

#[test]
fn congestion_in_reconnaissance_leaves_careful_resume_to_normal_cc() {
    // §3.2 "Detected congestion": normal CC reacts; Appendix B.3: "the CWND is the same as if
    // Careful Resume had not been attempted".
    let mut f = Flow::with(200);
    for i in 0..5 {
        f.ack(100 + i, Send::Fill);
    }
    f.loss(106, CongestionKind::FastRetransmit);
    assert_eq!(f.text("cr_path"), Some("reconnaissance>normal"));
    assert_eq!(f.text("cr_recon_exit"), Some("congestion"));
    assert_eq!(f.c.ssthresh(), Ssthresh::Bytes(7.5 * SEG), "Reno: FlightSize/2 of 15 segments");
    assert!(matches!(f.c.startup_retained(), Some(PathMemory::Save(p)) if p.rate_bps == saved(200).rate_bps), "the set is kept");
}

#[test]
fn unvalidated_ends_when_the_window_is_full_and_validating_when_the_last_unvalidated_byte_is_acked() {
    // §3.3 "Completed sending all unvalidated packets" -> "CWND MUST be set to the flight_size";
    // §3.4 "Receiving acknowledgement of the unvalidated packets" -> normal CC.
    let mut f = Flow::with(200);
    f.initial_window(100);
    assert_eq!(f.nxt, 110 * MSS, "the jump filled at once (the scripted sender does not pace)");
    f.ack(201, Send::Fill);
    assert_eq!(f.text("cr_phase"), Some("validating"));
    assert_eq!(f.text("cr_unvalidated_exit"), Some("window-full"));
    assert_eq!(f.segs(), 99.0, "CWND = flight_size");
    assert_eq!(f.c.pacing_rate(), None, "pacing ends with the Unvalidated Phase");
    // Validating: slow start; PipeSize counts the unvalidated bytes as they are acknowledged.
    for i in 0..17 {
        f.ack(202 + i, Send::Fill);
    }
    assert_eq!(f.una, 28 * MSS);
    assert_eq!(f.segs(), 99.0 + 17.0);
    assert_eq!(f.num("cr_pipesize"), Some(18.0 * SEG), "no unvalidated byte acknowledged yet");
    for i in 0..81 {
        f.ack(300 + i, Send::Fill);
        assert_eq!(f.text("cr_phase"), Some("validating"));
    }
    assert_eq!(f.una, 109 * MSS);
    f.ack(381, Send::Fill);
    assert_eq!(f.text("cr_path"), Some("reconnaissance>unvalidated>validating>normal"));
    assert_eq!(f.text("cr_normal_cause"), Some("validated"));
    assert_eq!(f.num("cr_pipesize"), Some(100.0 * SEG), "18 + 82 unvalidated segments");
    assert_eq!(f.c.phase(), Phase::SlowStart, "normal CC: slow start below an infinite ssthresh");
}

#[test]
fn unvalidated_ends_when_the_first_unvalidated_packet_is_acked() {
    // §3.3 "Receiving acknowledgement for an unvalidated packet"; Appendix B.2: CWND reset to the
    // flight_size.
    // This sender has only 60 segments to send when it jumps.
    let mut f2 = Flow::with(200);
    for i in 0..9 {
        f2.ack(100 + i, Send::Fill);
    }
    f2.ack(109, Send::Upto(60));
    assert_eq!(f2.nxt, 60 * MSS);
    for i in 0..18 {
        f2.ack(150 + i, Send::Upto(60));
        assert_eq!(f2.text("cr_phase"), Some("unvalidated"), "ACK {i} of pre-jump data");
    }
    assert_eq!(f2.una, 28 * MSS);
    f2.ack(200, Send::Upto(60));
    assert_eq!(f2.text("cr_unvalidated_exit"), Some("first-unvalidated-acked"));
    assert_eq!(f2.text("cr_phase"), Some("validating"));
    assert_eq!(f2.segs(), 31.0, "flight_size 60 - 29 > PipeSize 19");
}

#[test]
fn a_rate_limited_unvalidated_phase_returns_to_normal_cc_at_the_pipesize_after_one_rtt() {
    // §3.3 "Limiting time in the Unvalidated Phase" and "Check flight_size": flight_size <=
    // PipeSize -> CWND = PipeSize and normal CC.
    let mut f = Flow::with(200);
    for i in 0..9 {
        f.ack(100 + i, Send::Fill);
    }
    f.ack(109, Send::Upto(28));
    f.ack(150, Send::Upto(28));
    assert_eq!(f.text("cr_phase"), Some("unvalidated"), "41 ms into the phase");
    f.ack(210, Send::Upto(28));
    assert_eq!(f.text("cr_unvalidated_exit"), Some("rtt-exceeded"));
    assert_eq!(f.text("cr_path"), Some("reconnaissance>unvalidated>normal"));
    assert_eq!(f.text("cr_normal_cause"), Some("rate-limited"));
    assert_eq!(f.segs(), 18.0, "CWND = PipeSize (not below IW)");
}

#[test]
fn a_loss_while_validating_enters_safe_retreat_and_its_recovery_ends_it() {
    // Appendix B.4 with this sender's numbers: a loss after 34 unvalidated segments were ACKed.
    // §3.5: CWND <= PipeSize/2, not increased; on leaving, ssthresh = PipeSize x Beta.
    let mut f = Flow::with(300);
    f.initial_window(100);
    assert_eq!(f.segs(), 150.0);
    for i in 0..(18 + 34) {
        f.ack(200 + i, Send::Fill);
    }
    assert_eq!(f.text("cr_phase"), Some("validating"));
    assert_eq!(f.num("cr_pipesize"), Some((18.0 + 34.0) * SEG));
    let flight = f.nxt - f.una;
    f.loss(260, CongestionKind::FastRetransmit);
    assert_eq!(f.text("cr_phase"), Some("safe-retreat"));
    assert_eq!(f.text("cr_retreat_cause"), Some("loss"));
    assert_eq!(f.c.phase(), Phase::Recovery);
    assert_eq!((f.segs(), f.c.ssthresh()), (26.0, Ssthresh::Bytes(26.0 * SEG)), "PipeSize/2 = 52/2");
    assert_eq!(f.c.startup_retained(), Some(PathMemory::Forget), "the saved set is deleted");
    // The recovery retransmits one segment and ends when everything outstanding is ACKed.
    f.c.on_retransmit(0, MSS);
    f.c.on_recovery_exit(Time(400_000_000), 26.0 * SEG);
    let pipesize = 52.0 * SEG + flight as f64 - SEG;
    assert_eq!(f.num("cr_pipesize"), Some(pipesize));
    assert_eq!(f.c.ssthresh(), Ssthresh::Bytes(pipesize * 0.5), "PipeSize x Beta");
    assert_eq!(f.segs(), 26.0, "CWND is not increased in Safe Retreat");
    assert_eq!(f.c.phase(), Phase::SlowStart, "normal CC slow-starts up to the new ssthresh");
    assert_eq!(f.text("cr_path"), Some("reconnaissance>unvalidated>validating>safe-retreat>normal"));
    assert_eq!(f.text("cr_normal_cause"), Some("retreat-done"));
    // The next ACK is normal CC's.
    f.ack(401, Send::Fill);
    assert_eq!(f.segs(), 27.0);
    assert_eq!(f.num("cr_t_normal"), Some(0.401));
}

#[test]
fn a_loss_while_unvalidated_enters_safe_retreat() {
    // §3.3 "Detected congestion": the Safe Retreat Phase MUST be entered.
    let mut f = Flow::with(200);
    for i in 0..9 {
        f.ack(100 + i, Send::Fill);
    }
    f.ack(109, Send::Upto(60));
    f.ack(150, Send::Upto(60));
    f.loss(151, CongestionKind::FastRetransmit);
    assert_eq!(f.text("cr_path"), Some("reconnaissance>unvalidated>safe-retreat"));
    assert_eq!(f.segs(), 9.0, "PipeSize/2 = 18/2");
}

#[test]
fn a_ce_echo_while_validating_retreats_without_recovery_and_reopens_slow_start_at_its_end() {
    // §3.4 "Detected congestion (... ECN-CE marking)" -> Safe Retreat; its end by the ACK of the
    // last byte sent before it (§3.5).
    let mut f = Flow::with(200);
    f.initial_window(100);
    for i in 0..(18 + 20) {
        f.ack(200 + i, Send::Fill);
    }
    let end = f.nxt;
    f.loss(240, CongestionKind::Ecn);
    assert_eq!(f.text("cr_retreat_cause"), Some("ecn"));
    assert_eq!((f.segs(), f.c.phase()), (19.0, Phase::CongestionAvoidance), "cwnd = ssthresh = PipeSize/2 = 38/2");
    while f.una + MSS < end {
        f.ack(300, Send::Fill);
        assert_eq!(f.text("cr_phase"), Some("safe-retreat"));
        assert_eq!(f.c.phase(), Phase::CongestionAvoidance);
    }
    f.ack(301, Send::Fill);
    let pipesize = (end - 28 * MSS) as f64 + 18.0 * SEG;
    assert_eq!(f.num("cr_pipesize"), Some(pipesize));
    assert_eq!(f.text("cr_normal_cause"), Some("retreat-done"));
    assert_eq!(f.c.ssthresh(), Ssthresh::Bytes(pipesize * 0.5));
    assert_eq!(f.c.phase(), Phase::SlowStart, "slow start re-opened up to PipeSize x Beta");
}

#[test]
fn a_timeout_during_a_ce_echos_retreat_ends_it_with_normal_cc() {
    // The retreat runs in congestion avoidance, where the controller does not hand the plug-in a
    // timeout; the slow start after it must not be held at the retreat's window.
    let mut f = Flow::with(200);
    f.initial_window(100);
    for i in 0..(18 + 20) {
        f.ack(200 + i, Send::Fill);
    }
    f.loss(240, CongestionKind::Ecn);
    f.ack(250, Send::Fill);
    f.loss(1300, CongestionKind::Timeout);
    assert_eq!((f.segs(), f.c.phase()), (1.0, Phase::SlowStart));
    f.ack(1400, Send::Fill);
    assert_eq!(f.text("cr_normal_cause"), Some("timeout"));
    assert_eq!(f.segs(), 2.0, "normal slow start after the timeout");
}

#[test]
fn an_rtt_drop_after_the_jump_is_a_path_change_and_the_retreat_ends_with_the_unvalidated_data() {
    // §3.3 "Confirming the path during transmission"; §4.2.1: a sample under half saved_rtt.
    let mut f = Flow::with(200);
    f.initial_window(100);
    let end = f.nxt;
    f.ack_full(201, 1, Some(40), Send::Fill, true);
    assert_eq!(f.text("cr_retreat_cause"), Some("path-changed"));
    assert_eq!(f.segs(), 9.0);
    assert_eq!(f.c.pacing_rate(), None);
    while f.una + MSS < end {
        f.ack(250, Send::Fill);
        assert_eq!(f.segs(), 9.0, "not increased in Safe Retreat");
    }
    f.ack(260, Send::Fill);
    assert_eq!(f.text("cr_normal_cause"), Some("retreat-done"));
    assert_eq!(f.c.ssthresh(), Ssthresh::Bytes((18.0 + 82.0) * SEG * 0.5));
    assert_eq!(f.c.phase(), Phase::SlowStart);
    assert_eq!(f.c.startup_retained(), Some(PathMemory::Forget));
}

#[test]
fn a_timeout_after_the_jump_ends_careful_resume_with_normal_cc() {
    // §3.6: persistent congestion -> normal CC (here Reno: ssthresh = FlightSize/2, cwnd = 1).
    let mut f = Flow::with(200);
    f.initial_window(100);
    f.ack(201, Send::Fill);
    f.loss(1200, CongestionKind::Timeout);
    assert_eq!(f.text("cr_normal_cause"), Some("timeout"));
    assert_eq!(f.c.ssthresh(), Ssthresh::Bytes(49.5 * SEG), "FlightSize/2 of 99 segments");
    assert_eq!(f.segs(), 1.0);
    assert_eq!(f.c.startup_retained(), Some(PathMemory::Forget));
}

#[test]
fn observing_saves_the_delivery_rate_and_minimum_rtt_unless_below_four_initial_windows() {
    // §3.1: saved_cwnd from the data acknowledged per RTT, saved_rtt the minimum RTT; "If the
    // measured CWND is less than four times the IW, the sender can choose to not save".
    let mut s = testkit::Sender::new(Startup::CarefulResume(CarefulResume::new(CarefulResumeConfig::rfc(10.0 * SEG, None))), 10);
    // A bottleneck of one segment per ms: 8 Mbit/s.
    for i in 0..400 {
        s.ack_n(testkit::at_ms(100 + i), Some(testkit::ms(100 + i % 7)), 1);
    }
    let Some(PathMemory::Save(p)) = s.c.startup_retained() else { panic!("an observation of 100 segments is saved") };
    assert!((p.rate_bps - 8e6).abs() < 1e-3, "{}", p.rate_bps);
    assert_eq!(p.rtt, testkit::ms(100));
    assert!(p.saved_at.is_some());
    // The same rate at a 4 ms RTT is a saved_cwnd of 4 segments, under 4 IW: nothing saved.
    let mut s = testkit::Sender::new(Startup::CarefulResume(CarefulResume::new(CarefulResumeConfig::rfc(10.0 * SEG, None))), 10);
    for i in 0..400 {
        s.ack_n(testkit::at_ms(100 + i), Some(testkit::ms(4)), 1);
    }
    assert_eq!(s.c.startup_retained(), Some(PathMemory::Forget));
}

#[test]
fn the_next_attempt_starts_from_what_the_previous_left() {
    // A new connection seeded by the previous one; a persistent connection's response after idle.
    let mut c = testkit::controller(Startup::CarefulResume(CarefulResume::new(CarefulResumeConfig::rfc(10.0 * SEG, None))), 10, Ssthresh::Infinite);
    c.seed_startup(Some(saved(200)));
    assert_eq!(c.startup_report().iter().find(|(k, _)| *k == "cr_phase").map(|(_, v)| v.clone()), Some(Detail::Text("reconnaissance")));
    c.seed_startup(None);
    assert_eq!(c.startup_report().iter().find(|(k, _)| *k == "cr_recon_exit").map(|(_, v)| v.clone()), Some(Detail::Text("no-saved-state")));
    // Observe 8 Mbit/s, then restart after idle: Reconnaissance with the observation.
    let mut s = testkit::Sender::new(Startup::CarefulResume(CarefulResume::new(CarefulResumeConfig::rfc(10.0 * SEG, None))), 10);
    for i in 0..400 {
        s.ack_n(testkit::at_ms(100 + i), Some(testkit::ms(100)), 1);
    }
    s.c.on_idle_restart();
    s.c.restart_startup(Some(testkit::ms(100)), Some(1_000_000), 1_000_000);
    let report = s.c.startup_report();
    let get = |k: &str| report.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    assert_eq!(get("cr_phase"), Some(Detail::Text("reconnaissance")));
    assert!(matches!(get("cr_saved_rate"), Some(Detail::Num(r)) if (r - 8e6).abs() < 1e-3));
    assert_eq!(get("cr_attempts"), Some(Detail::Num(2.0)));
}

#[test]
fn the_declaration_refuses_a_zero_or_lone_saved_rtt_and_a_rate_without_one() {
    use crate::decl::{FlowContext, ParamValue, Params};
    use std::collections::BTreeMap;
    let cx = FlowContext { mss: 1000, header: 40, initial_window: 10, acks: crate::startup::AckCounting::PerPacket, handshake: false, infinite_ssthresh: true, quic: false };
    let check = |rate: f64, rtt: Dur, given: &[&str]| {
        let mut values: BTreeMap<&'static str, ParamValue> = BTreeMap::new();
        for p in DECL.info.params {
            values.insert(p.name, default_of(p.name));
        }
        values.insert("saved_rate", ParamValue::Number(rate));
        values.insert("saved_rtt", ParamValue::Dur(rtt));
        (DECL.check)(&Params::new(&values), &cx, &|k| given.contains(&k)).map_err(|e| e.key)
    };
    assert_eq!(check(0.0, Dur::ZERO, &[]), Ok(()), "nothing saved");
    assert_eq!(check(1e8, Dur::from_millis(50), &["saved_rate", "saved_rtt"]), Ok(()));
    assert_eq!(check(1e8, Dur::ZERO, &["saved_rate", "saved_rtt"]), Err("saved_rtt"));
    assert_eq!(check(1e8, Dur::ZERO, &["saved_rate"]), Err("saved_rtt"));
    assert_eq!(check(0.0, Dur::from_millis(50), &["saved_rtt"]), Err("saved_rate"));
}

/// The declared default of parameter `name`, as the scenario crate parses it.
fn default_of(name: &str) -> crate::decl::ParamValue {
    use crate::decl::ParamValue;
    match name {
        "saved_rate" | "jump_fraction" | "rtt_low" | "beta" => ParamValue::Number(0.5),
        "rtt_high" => ParamValue::Number(10.0),
        "save_min_iw" => ParamValue::Number(4.0),
        "max_jump" => ParamValue::Bytes(0),
        "saved_rtt" => ParamValue::Dur(Dur::ZERO),
        "lifetime" => ParamValue::Dur(Dur::from_secs(300)),
        other => panic!("unknown parameter {other}"),
    }
}
