//! RFC 6937's own example, scripted: one loss in a window of 20 segments with a SACK per
//! segment. RFC 6675 sends nothing until `pipe` has fallen to the halved window and then one
//! segment per ACK; PRR sends one segment every other ACK from the start; both end at ssthresh.

mod common;
use common::{build, MSS};
use startlab_tcp::{Ack, PrrBound, Recovery, Sender};
use startlab_units::Time;

fn sender(recovery: Recovery) -> Sender {
    build(recovery, 20, false, false, false)
}

/// Segment 0 of 20 is lost; segments 1..=19 arrive, each SACKed; then the retransmission's ACK
/// covers everything. Returns the segments sent after each of the 19 duplicate ACKs, and cwnd
/// (segments) after the full ACK.
fn one_loss(recovery: Recovery) -> (Vec<usize>, f64, Sender) {
    let mut s = sender(recovery);
    let first: Vec<_> = std::iter::from_fn(|| s.poll_transmit(Time::ZERO)).collect();
    assert_eq!(first.len(), 20);
    let mut sent = vec![];
    for k in 1..=19u64 {
        let now = Time(100_000_000 + k * 1_000_000);
        let mut a = Ack { ack: 0, rwnd: u64::MAX, ..Ack::default() };
        a.sack[0] = (MSS, (k + 1) * MSS);
        a.n_sack = 1;
        s.on_ack(now, &a);
        sent.push(std::iter::from_fn(|| s.poll_transmit(now)).count());
    }
    let now = Time(200_000_000);
    s.on_ack(now, &Ack { ack: 20 * MSS, rwnd: u64::MAX, segments: 1, ..Ack::default() });
    (sent, s.cc().cwnd() / MSS as f64, s)
}

#[test]
fn rfc_6675_waits_then_sends_one_per_ack() {
    let (sent, cwnd, s) = one_loss(Recovery::Sack);
    // Third duplicate ACK: the fast retransmit only (cwnd = ssthresh = 10 < pipe).
    assert_eq!(sent[2], 1);
    let silent = sent[3..].iter().take_while(|&&n| n == 0).count();
    assert!(silent >= 6, "RFC 6675 waits for pipe to fall to ssthresh: {sent:?}");
    assert!(sent[3 + silent..].iter().all(|&n| n == 1), "then one per ACK: {sent:?}");
    assert_eq!(cwnd, 10.0);
    assert_eq!(s.stats().timeouts, 0);
}

#[test]
fn prr_spreads_the_same_sending_over_the_whole_round() {
    let (sack, _, _) = one_loss(Recovery::Sack);
    for bound in [PrrBound::SlowStart, PrrBound::Conservative] {
        let (sent, cwnd, s) = one_loss(Recovery::Prr(bound));
        // RFC 6937 in bytes: after the fast retransmit, sndcnt = ceil(prr_delivered · 10/20) −
        // prr_out, one segment for every two delivered (the first after four, as the half
        // segment of the second does not make a whole one); from the 14th ACK pipe is down to
        // ssthresh and the bound sends one per ACK delivered.
        assert_eq!(sent, [0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1], "{bound:?}");
        assert_eq!(sent.iter().sum::<usize>(), sack.iter().sum::<usize>(), "{bound:?}: the same data over the round as RFC 6675");
        assert_eq!(cwnd, 10.0, "{bound:?}: the episode ends at ssthresh");
        assert_eq!(s.stats().timeouts, 0);
    }
}

#[test]
fn the_safe_ack_bound_is_conservative_on_duplicate_acks() {
    // RFC 9937: none of these ACKs advances SND.UNA, so the slow-start bound's extra segment is
    // never given; once pipe is at ssthresh each ACK sends what it delivered, as PRR-CRB does.
    let (crb, _, _) = one_loss(Recovery::Prr(PrrBound::Conservative));
    let (sent, cwnd, s) = one_loss(Recovery::Prr(PrrBound::SafeAck));
    assert_eq!(sent, crb, "no ACK of the round is safe");
    assert_eq!(cwnd, 10.0);
    assert_eq!(s.stats().timeouts, 0);
}
