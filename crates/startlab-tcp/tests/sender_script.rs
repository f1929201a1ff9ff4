//! Scripted sender timelines, independent of the simulator: the driver is the test itself.

mod common;
use common::{build, build_ecn, MSS};
use startlab_cc::Ssthresh;
use startlab_tcp::{AccEcnFeedback, Ack, EcnMode, IpEcn, Recovery, Segment, Sender};
use startlab_units::{Dur, Time};

fn ms(t: u64) -> Time {
    Time(t * 1_000_000)
}

fn sender(recovery: Recovery, cwnd_pkts: u64, limited_transmit: bool) -> Sender {
    sender_with(recovery, cwnd_pkts, limited_transmit, false)
}

fn sender_with(recovery: Recovery, cwnd_pkts: u64, limited_transmit: bool, pacing: bool) -> Sender {
    build(recovery, cwnd_pkts, limited_transmit, pacing, false)
}

fn drain(s: &mut Sender, now: Time) -> Vec<Segment> {
    std::iter::from_fn(|| s.poll_transmit(now)).collect()
}

fn ack(n: u64) -> Ack {
    Ack { ack: n * MSS, rwnd: u64::MAX, segments: 1, ..Ack::default() }
}

fn sack(n: u64, blocks: &[(u64, u64)]) -> Ack {
    let mut a = Ack { ack: n * MSS, rwnd: u64::MAX, ..Ack::default() };
    for (i, &(s, e)) in blocks.iter().enumerate() {
        a.sack[i] = (s * MSS, e * MSS);
    }
    a.n_sack = blocks.len() as u8;
    a
}

#[test]
fn a_lone_drop_is_retransmitted_on_the_third_duplicate_ack() {
    for recovery in [Recovery::Reno, Recovery::NewReno, Recovery::Sack, Recovery::Tahoe] {
        let mut s = sender(recovery, 10, false);
        // t=0: ten segments leave; segment 0 is lost, 1..9 arrive and each produces a dup ACK.
        assert_eq!(drain(&mut s, ms(0)).len(), 10);
        for k in 1..=3u64 {
            let a = if recovery == Recovery::Sack { sack(0, &[(1, 1 + k)]) } else { ack(0) };
            s.on_ack(ms(100 + k), &a);
            let out = drain(&mut s, ms(100 + k));
            if k < 3 {
                assert!(out.is_empty(), "{recovery:?}: nothing may leave on dup ACK {k} without limited transmit");
            } else {
                assert!(!out.is_empty(), "{recovery:?}: the third dup ACK triggers fast retransmit");
                assert_eq!((out[0].seq, out[0].retransmit), (0, true), "{recovery:?}: segment 0 goes first");
            }
        }
        assert_eq!(s.stats().fast_retransmits, 1, "{recovery:?}");
        assert_eq!(s.stats().timeouts, 0);
    }
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dup_acks() {
    let mut s = sender(Recovery::NewReno, 10, true);
    drain(&mut s, ms(0));
    s.on_ack(ms(100), &ack(0));
    let first = drain(&mut s, ms(100));
    assert_eq!(first.iter().map(|g| g.seq / MSS).collect::<Vec<_>>(), [10]);
    s.on_ack(ms(101), &ack(0));
    assert_eq!(drain(&mut s, ms(101)).iter().map(|g| g.seq / MSS).collect::<Vec<_>>(), [11]);
}

#[test]
fn newreno_retransmits_the_next_hole_on_each_partial_ack() {
    let mut s = sender(Recovery::NewReno, 10, false);
    // Segments 0, 3 and 6 are lost.
    drain(&mut s, ms(0));
    for k in 0..3 {
        s.on_ack(ms(100 + k), &ack(0));
    }
    let out = drain(&mut s, ms(103));
    assert_eq!(out[0].seq, 0);
    // t=200: the retransmission of 0 arrives; the ACK stops at the next hole, segment 3.
    s.on_ack(ms(200), &ack(3));
    let out = drain(&mut s, ms(200));
    assert_eq!((out[0].seq, out[0].retransmit), (3 * MSS, true), "partial ACK: retransmit the next hole at once");
    assert!(s.in_recovery(), "still in recovery until the ACK covers `recover`");
    s.on_ack(ms(300), &ack(6));
    let out = drain(&mut s, ms(300));
    assert_eq!(out[0].seq, 6 * MSS, "one hole per RTT");
    s.on_ack(ms(400), &ack(10));
    assert!(!s.in_recovery(), "the full ACK ends recovery");
    assert_eq!(s.stats().timeouts, 0);
    assert_eq!(s.stats().fast_retransmits, 1, "one reduction for one window of losses");
}

#[test]
fn sack_retransmits_every_hole_the_scoreboard_shows_lost_in_one_rtt() {
    let mut s = sender(Recovery::Sack, 10, false);
    drain(&mut s, ms(0));
    // Segments 0, 3 and 6 lost; the rest arrive, SACKed.
    let blocks = [
        vec![(1, 2)],
        vec![(1, 3)],
        vec![(4, 5), (1, 3)],
        vec![(4, 6), (1, 3)],
        vec![(7, 8), (4, 6), (1, 3)],
        vec![(7, 9), (4, 6), (1, 3)],
        vec![(7, 10), (4, 6), (1, 3)],
    ];
    let mut sent = vec![];
    for (k, b) in blocks.iter().enumerate() {
        let now = ms(100 + k as u64);
        s.on_ack(now, &sack(0, b));
        sent.extend(drain(&mut s, now).into_iter().filter(|g| g.retransmit).map(|g| g.seq / MSS));
    }
    assert_eq!(sent, [0, 3, 6], "all three holes are repaired within the first RTT of recovery");
    s.on_ack(ms(200), &ack(10));
    assert!(!s.in_recovery());
    assert_eq!(s.stats().timeouts, 0);
}

#[test]
fn the_rto_doubles_on_successive_timeouts_and_collapses_the_window_once() {
    let mut s = sender(Recovery::Sack, 10, false);
    drain(&mut s, ms(0));
    let mut expiries = vec![];
    let mut now = ms(0);
    for _ in 0..4 {
        let deadline = s.next_timeout().expect("data is outstanding");
        expiries.push((deadline.as_nanos() - now.as_nanos()) / 1_000_000);
        now = deadline;
        s.on_timer(now);
        let out = drain(&mut s, now);
        assert_eq!(out.len(), 1, "after a timeout only the loss window (1 segment) may leave");
        assert_eq!(out[0].seq, 0, "go back to SND.UNA");
        assert_eq!(s.cc().cwnd(), MSS as f64);
    }
    assert_eq!(expiries, [1000, 2000, 4000, 8000], "RFC 6298 §5.5 backoff from the 1 s initial RTO");
    assert_eq!(s.cc().ssthresh(), Ssthresh::Bytes(5.0 * MSS as f64), "ssthresh from the first expiry's FlightSize only");
    assert_eq!(s.stats().timeouts, 4);
    // A valid sample (a segment sent once) ends the backoff.
    let _ = Dur::ZERO;
}

#[test]
fn karn_rule_takes_no_sample_from_a_retransmitted_segment() {
    let mut s = sender(Recovery::Sack, 2, false);
    drain(&mut s, ms(0));
    s.on_timer(s.next_timeout().unwrap());
    drain(&mut s, ms(1000));
    // t=1100: ACK of the retransmitted segment 0: ambiguous, no sample, backoff kept.
    s.on_ack(ms(1100), &ack(1));
    assert_eq!(s.srtt(), None, "no RTT sample from a retransmission");
    assert_eq!(s.rto(), Dur::from_secs(2), "the backed-off RTO stays until a valid sample");
    // Segment 1 was sent once at t=0: its ACK is a valid sample of 1.2 s.
    s.on_ack(ms(1200), &ack(2));
    assert_eq!(s.srtt(), Some(Dur::from_millis(1200)));
}

#[test]
fn a_paced_sender_spaces_segments_exactly_by_size_over_rate() {
    let mut s = sender_with(Recovery::Sack, 10, false, true);
    // t=0: no RTT sample yet, so no pacing rate: the initial window leaves at once.
    assert_eq!(drain(&mut s, ms(0)).len(), 10);
    assert_eq!(s.pacing_rate(), None);
    // t=100ms: one ACK for segments 0-4 gives srtt = 100 ms and room for five new segments, which
    // the pacer now spaces out.
    s.on_ack(ms(100), &ack(5));
    let rate = s.pacing_rate().expect("pacing with an RTT sample");
    // Congestion avoidance (cwnd = ssthresh): Linux's ratio 1.2 × cwnd / srtt.
    assert!((rate - 1.2 * s.cc().cwnd() / 0.1).abs() < 1e-6);
    let mut departures = vec![];
    let mut now = ms(100);
    for _ in 0..5 {
        let out = drain(&mut s, now);
        assert!(out.len() <= 1, "a paced sender releases one segment at a time");
        if out.len() == 1 {
            departures.push(now);
        }
        let Some(next) = s.next_timeout() else { break };
        now = next;
        s.on_timer(now);
    }
    let gap = Dur::from_secs_f64(MSS as f64 / rate);
    let gaps: Vec<u64> = departures.windows(2).map(|w| w[1].as_nanos() - w[0].as_nanos()).collect();
    assert_eq!(departures.len(), 5, "the five segments the window allows all leave: {departures:?}");
    assert!(gaps.iter().all(|&g| g == gap.as_nanos()), "gaps {gaps:?} ns, requested {} ns", gap.as_nanos());
}

fn ece(n: u64) -> Ack {
    Ack { ece: true, ..ack(n) }
}

#[test]
fn an_ecn_echo_halves_the_window_once_per_window_without_retransmitting() {
    // 10 segments in flight, ssthresh = cwnd = 10 (avoidance), ECN agreed (no handshake).
    let mut s = build(Recovery::Sack, 10, false, false, true);
    let first = drain(&mut s, ms(0));
    assert_eq!(first.len(), 10);
    assert!(first.iter().all(|g| g.ecn == IpEcn::Ect0 && !g.cwr), "new data is ECT(0), no CWR yet");
    // t=100ms: ACK of segment 1 echoes a CE mark: ssthresh = max(FlightSize/2, 2) = 4.5 segments.
    s.on_ack(ms(100), &ece(1));
    assert_eq!(s.cc().cwnd(), 4.5 * MSS as f64, "cwnd = ssthresh = FlightSize/2");
    assert_eq!((s.stats().ecn_reductions, s.stats().retransmissions), (1, 0));
    assert!(!s.in_recovery(), "an ECN echo is not a loss recovery");
    // Further echoes for data sent before the reduction do not reduce again.
    for k in 2..=9 {
        s.on_ack(ms(100 + k), &ece(k));
    }
    assert_eq!(s.stats().ecn_reductions, 1, "one reduction per window");
    let next = drain(&mut s, ms(110));
    assert!(!next.is_empty() && next[0].cwr && next[0].ecn == IpEcn::Ect0, "CWR on the first new data segment");
    assert!(next[1..].iter().all(|g| !g.cwr), "and only on it");
    // The ACK covering data sent after the reduction may reduce again.
    let beyond = next[0].seq / MSS + 1;
    s.on_ack(ms(200), &ece(beyond));
    assert_eq!(s.stats().ecn_reductions, 2, "a new window, a new reduction");
}

/// An ACK of segments `[0, n)` whose AccECN option reports `ceb` CE-marked bytes so far.
fn accecn(n: u64, ceb: u64) -> Ack {
    Ack { accecn: Some(AccEcnFeedback { ace: ((5 + ceb / MSS) % 8) as u8, ee0b: 1, eceb: ceb as u32, ee1b: (1 + n * MSS) as u32 }), ..ack(n) }
}

#[test]
fn accecn_hands_the_newly_ce_marked_bytes_of_each_ack_to_the_controller_and_reduces_once_per_window() {
    let mut s = build_ecn(Recovery::Sack, 10, false, false, EcnMode::L4s);
    let first = drain(&mut s, ms(0));
    assert!(first.iter().all(|g| g.ecn == IpEcn::Ect1 && !g.cwr), "L4S data is ECT(1), with no CWR");
    s.on_ack(ms(100), &accecn(1, 0));
    assert_eq!((s.cc().ce_bytes(), s.stats().ecn_reductions), (0, 0), "no marks, no reduction");
    // Segment 1 arrived CE-marked: ECEB rises by one segment, the controller sees it on this ACK,
    // and the window is reduced as for an ECE (Reno: FlightSize/2).
    s.on_ack(ms(101), &accecn(2, MSS));
    assert_eq!((s.cc().ce_bytes(), s.stats().ce_bytes, s.stats().ecn_reductions), (MSS, MSS, 1));
    assert_eq!(s.cc().cwnd(), 4.0 * MSS as f64, "cwnd = ssthresh = FlightSize/2");
    // Two more marked segments on one ACK: 2 MSS newly; still the same window: no new reduction.
    s.on_ack(ms(102), &accecn(4, 3 * MSS));
    assert_eq!((s.cc().ce_bytes(), s.stats().ecn_reductions), (3 * MSS, 1));
    // An ACK overtaken by a later one reports nothing new (its counter is behind).
    s.on_ack(ms(103), &accecn(4, 2 * MSS));
    assert_eq!(s.stats().ce_bytes, 3 * MSS);
    // A duplicate ACK's marks wait for the next ACK the controller sees.
    s.on_ack(ms(104), &accecn(4, 4 * MSS));
    assert_eq!((s.stats().ce_bytes, s.cc().ce_bytes()), (4 * MSS, 3 * MSS), "held back from the controller");
    s.on_ack(ms(105), &accecn(5, 4 * MSS));
    assert_eq!(s.cc().ce_bytes(), 4 * MSS, "and handed over with the next advance");
    let next = drain(&mut s, ms(106));
    assert!(next.iter().all(|g| !g.cwr && g.ecn == IpEcn::Ect1), "AccECN sets no CWR");
    // The counter wraps at 2^24 bytes: the increase is read modulo the field.
    let mut s = build_ecn(Recovery::Sack, 10, false, false, EcnMode::L4s);
    drain(&mut s, ms(0));
    let near = (1u64 << 24) - 500;
    for (k, eceb) in [6_000_000, 12_000_000, near, 1000].into_iter().enumerate() {
        let k = k as u64 + 1;
        s.on_ack(ms(100 + k), &Ack { accecn: Some(AccEcnFeedback { eceb: eceb as u32, ..accecn(k, 0).accecn.unwrap() }), ..ack(k) });
    }
    assert_eq!(s.stats().ce_bytes, near + 1500);
}

#[test]
fn prague_on_accecn_cuts_by_alpha_over_two_once_per_window() {
    use startlab_cc::avoidance::{Avoidance, Prague};
    use startlab_cc::startup::{SlowStart, Startup};
    use startlab_cc::{CcConfig, Controller};
    use startlab_tcp::{RtoConfig, SenderConfig};
    let cc = Controller::new(
        CcConfig { mss: MSS, initial_window: 10 * MSS, initial_ssthresh: Ssthresh::Bytes(10.0 * MSS as f64), loss_window: MSS, cwnd_validation: false, linux_ss_clamp: false },
        Startup::SlowStart(SlowStart::default()),
        Avoidance::Prague(Prague::default()),
    );
    let cfg = SenderConfig {
        mss: MSS as u32,
        size: None,
        recovery: Recovery::Sack,
        rto: RtoConfig::default(),
        limited_transmit: false,
        dupthresh: 3,
        handshake: false,
        newreno_impatient: true,
        pacing: false,
        quick_start: None,
        app_limited: false,
        idle_restart: startlab_tcp::IdleRestart::Rfc5681,
        startup_after_idle: false,
        startup_min_response: 0,
        ecn: EcnMode::L4s,
    };
    let mut s = Sender::new(cfg, cc);
    s.start(ms(0));
    drain(&mut s, ms(0));
    // The first mark: alpha is still 1 (no round ended since a mark), so the cut is a halving.
    s.on_ack(ms(100), &accecn(1, MSS));
    assert_eq!((s.cc().cwnd(), s.stats().ecn_reductions), (5.0 * MSS as f64, 1));
    assert!(!s.in_recovery());
    // Every later segment of the window marked too: no second cut in the same window.
    for k in 2..=9 {
        s.on_ack(ms(100 + k), &accecn(k, k * MSS));
    }
    assert_eq!(s.stats().ecn_reductions, 1, "once per window");
    assert_eq!(s.cc().ce_bytes(), 9 * MSS);
}
