//! `Recovery::Ns3Prr`, scripted: where ns-3 3.44's recovery departs from RFC 6675 + RFC 6937
//! (`Recovery::Prr`) on the same ACKs (sender/ns3.rs lists the departures).

mod common;
use common::{build, MSS};
use startlab_tcp::{Ack, PrrBound, Recovery, Sender};
use startlab_units::Time;

/// An ACK for `una` that SACKs the given segment ranges `[a, b)` (in segments).
fn ack(una: u64, blocks: &[(u64, u64)]) -> Ack {
    let mut a = Ack { ack: una * MSS, rwnd: u64::MAX, segments: 1, ..Ack::default() };
    for (i, &(s, e)) in blocks.iter().enumerate() {
        a.sack[i] = (s * MSS, e * MSS);
    }
    a.n_sack = blocks.len() as u8;
    a
}

/// The sequence numbers (in segments) sent in answer to an ACK at `now`.
fn answer(s: &mut Sender, now: Time, a: &Ack) -> Vec<u64> {
    s.on_ack(now, a);
    std::iter::from_fn(|| s.poll_transmit(now)).map(|seg| seg.seq / MSS).collect()
}

/// Window of 20; segments 0 and 10 are lost. Segments 1..=9 and 11..=19 are SACKed one by one,
/// which starts the episode (retransmitting 0) and later deems 10 lost; then the retransmission
/// of 10 arrives and is SACKed while the retransmission of 0 is still outstanding. Returns
/// `pipe` (segments) just before that ACK and just after it (before anything is sent in answer),
/// and who was retransmitted.
fn two_holes(recovery: Recovery) -> (u64, u64, Vec<u64>) {
    let mut s = build(recovery, 20, false, false, false);
    let first: Vec<_> = std::iter::from_fn(|| s.poll_transmit(Time::ZERO)).collect();
    assert_eq!(first.len(), 20);
    let mut t = 100_000_000u64;
    let mut rtx = vec![];
    let mut blocks: Vec<(u64, u64)>;
    for k in (1..=9).chain(11..=19) {
        t += 1_000_000;
        blocks = if k < 10 { vec![(1, k + 1)] } else { vec![(11, k + 1), (1, 10)] };
        rtx.extend(answer(&mut s, Time(t), &ack(0, &blocks)).into_iter().filter(|&q| q < 20));
    }
    assert!(rtx.contains(&0) && rtx.contains(&10), "{recovery:?}: both holes retransmitted: {rtx:?}");
    let before = s.pipe().expect("in recovery") / MSS;
    t += 1_000_000;
    s.on_ack(Time(t), &ack(0, &[(1, 20)]));
    let after = s.pipe().expect("still in recovery: segment 0 is not acknowledged") / MSS;
    (before, after, rtx)
}

#[test]
fn ns3_keeps_a_sacked_retransmission_in_pipe_until_the_cumulative_ack() {
    let (before, after, _) = two_holes(Recovery::Prr(PrrBound::SlowStart));
    assert_eq!(before, after + 1, "RFC 6675: the SACKed retransmission of 10 leaves pipe");
    let (before, after, _) = two_holes(Recovery::Ns3Prr);
    assert_eq!(before, after, "ns-3 3.44 (issue #1190): it stays in pipe");
}

#[test]
fn ns3_counts_a_duplicate_ack_only_when_it_sacks_new_data() {
    for (recovery, enters) in [(Recovery::Prr(PrrBound::SlowStart), true), (Recovery::Ns3Prr, false)] {
        let mut s = build(recovery, 20, false, false, false);
        let _: Vec<_> = std::iter::from_fn(|| s.poll_transmit(Time::ZERO)).collect();
        // Three ACKs for 0 that repeat one SACK block: one duplicate ACK with news, two without.
        for k in 0..3 {
            s.on_ack(Time(100_000_000 + k * 1_000_000), &ack(0, &[(1, 2)]));
        }
        assert_eq!(s.in_recovery(), enters, "{recovery:?}");
    }
}

/// A window large enough that ns-3's 32-bit `prr_delivered · ssthresh` wraps (1000 segments of
/// 1000 B: ssthresh 500 kB, so from about 9 segments delivered): one loss, each later segment
/// SACKed. RFC 6937 sends about one segment per two delivered while pipe is above ssthresh;
/// ns-3 3.44's wrapped product lets out far fewer (#1282).
#[test]
fn ns3_prr_arithmetic_wraps_on_large_windows() {
    let sent = |recovery: Recovery| {
        let mut s = build(recovery, 1000, false, false, false);
        let _: Vec<_> = std::iter::from_fn(|| s.poll_transmit(Time::ZERO)).collect();
        let mut n = 0;
        for k in 1..=400u64 {
            n += answer(&mut s, Time(100_000_000 + k * 10_000), &ack(0, &[(1, k + 1)])).len();
        }
        n
    };
    let rfc = sent(Recovery::Prr(PrrBound::SlowStart));
    let ns3 = sent(Recovery::Ns3Prr);
    assert!((195..=205).contains(&rfc), "RFC 6937: about half of the 400 delivered, {rfc}");
    assert!(ns3 < rfc / 2, "ns-3 3.44's wrapped product: {ns3} against {rfc}");
}
