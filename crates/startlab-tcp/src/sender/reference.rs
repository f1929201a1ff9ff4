//! The scoreboard as RFC 6675 words it, one pass over every segment (the sender's code before it
//! kept runs): every unit test of this crate checks the run-based answers against it on every ACK
//! and every NextSeg() retransmission.

use super::Sender;

/// RFC 6675 IsLost(i) from the per-segment flags.
pub(super) fn is_lost(s: &Sender, i: usize) -> bool {
    let (mut bytes, mut runs, mut prev) = (0, 0, false);
    for j in (i + 1)..s.sb.len() {
        let sacked = s.sb.seg(j).sacked;
        if sacked {
            bytes += s.seg_len(s.seq_of(j)) as u64;
            runs += u32::from(!prev);
        }
        prev = sacked;
    }
    runs >= s.cfg.dupthresh || bytes > (s.cfg.dupthresh as u64 - 1) * s.mss()
}

/// SetPipe(), IsLost() and the flags against the runs, after `recompute_lost_and_pipe`.
pub(super) fn check(s: &Sender) {
    let mut pipe = 0;
    let mut sacked_bytes = 0;
    for i in 0..s.sb.len() {
        let m = *s.sb.seg(i);
        let (seq, len) = (s.seq_of(i), s.seg_len(s.seq_of(i)) as u64);
        assert_eq!(m.sacked, s.sb.sacked().containing(seq).is_some(), "flag and runs agree at {seq}");
        if m.sacked {
            sacked_bytes += len;
            if s.cfg.recovery == super::Recovery::Ns3Prr && m.rtx_episode == s.sb.episode() {
                pipe += len;
            }
            continue;
        }
        let lost = is_lost(s, i);
        assert_eq!(lost, seq < s.sb.lost_below(), "IsLost({seq}) with lost_below {}", s.sb.lost_below());
        pipe += if lost { 0 } else { len } + if m.rtx_episode == s.sb.episode() { len } else { 0 };
    }
    assert_eq!(sacked_bytes, s.sb.sacked().bytes());
    assert_eq!(pipe, s.pipe, "SetPipe()");
    if s.sb.len() > 0 {
        assert_eq!(is_lost(s, 0), s.first_is_lost());
    }
}

/// NextSeg() rules (1) and (3) as a scan from HighRxt: the segment chosen is the one the scan
/// picks (the lowest lost one, else the lowest not lost, both unSACKed and not retransmitted).
pub(super) fn check_next_seg(s: &Sender, chosen: usize) {
    let first = if s.high_rxt > s.snd_una { s.idx(s.high_rxt.min(s.snd_max)) } else { 0 };
    let mut rule3 = None;
    let mut rule1 = None;
    for i in first..s.sb.len() {
        if s.seq_of(i) >= s.sb.high_sacked() {
            break;
        }
        let m = *s.sb.seg(i);
        if m.sacked || m.rtx_episode == s.sb.episode() {
            continue;
        }
        if is_lost(s, i) {
            rule1 = Some(i);
            break;
        }
        rule3 = rule3.or(Some(i));
    }
    assert_eq!(Some(chosen), rule1.or(rule3), "NextSeg() rule 1 or 3");
}
