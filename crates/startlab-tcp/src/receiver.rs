//! TCP receiver models — ALGORITHMS.md §3: per-packet ACKs, delayed ACKs (RFC 1122 §4.2.3.2 /
//! RFC 5681 §4.2), Linux quick-ACK, and SACK blocks (RFC 2018) reported most recent first.

use crate::ranges::RangeSet;
use crate::{Ack, MAX_SACK_BLOCKS};
use startlab_cc::startup::{QsReport, QsRequest};
use startlab_units::{Dur, Time};

/// When the receiver sends an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPolicy {
    /// ACK every data segment at once (§3.1).
    EveryPacket,
    /// ACK every second full-sized segment, or when `timeout` expires after the first unacknowledged
    /// one (§3.2). Out-of-order segments and segments that fill a hole are ACKed at once.
    Delayed {
        /// The delayed-ACK timer.
        timeout: Dur,
    },
    /// Linux quick-ACK (§3.3): the first `budget` ACKs are sent at once, then delayed ACKs with
    /// `timeout`. The budget is raised again (to at most `budget`) on out-of-order data.
    ///
    /// NOTE: Linux adapts its `ato` from data inter-arrival times; the lab keeps a fixed `timeout`
    /// (40 ms, `TCP_ATO_MIN`, by default) so that runs stay a pure function of the scenario.
    QuickAck {
        /// ACKs sent immediately (Linux: `min(rcv_wnd / (2*mss), 16)`, 0 replaced by 2).
        budget: u32,
        /// The delayed-ACK timer once the budget is spent.
        timeout: Dur,
    },
}

/// Receiver configuration.
#[derive(Clone, Copy, Debug)]
pub struct ReceiverConfig {
    /// ACK policy.
    pub policy: AckPolicy,
    /// Report SACK blocks.
    pub sack: bool,
    /// Blocks per ACK (3 with timestamps, 4 without; RFC 2018).
    pub max_sack_blocks: usize,
    /// Advertised window in bytes (`u64::MAX`: unlimited).
    pub rwnd: u64,
    /// Receiver MSS: segments of at least this size are "full-sized".
    pub mss: u64,
}

/// A TCP receiver with an application that reads everything at once.
#[derive(Clone, Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    rcv_nxt: u64,
    /// Out-of-order ranges `[start, end)` above `rcv_nxt`, disjoint and merged when they touch
    /// (O(log n) per segment however many holes there are).
    ooo: RangeSet,
    /// Sequence numbers of recently received out-of-order segments, most recent first, to order
    /// SACK blocks (RFC 2018 §4).
    recent: Vec<u64>,
    unacked_full: u32,
    unacked_segments: u32,
    delack_deadline: Option<Time>,
    quick: u32,
    started: bool,
    duplicate_bytes: u64,
    /// Quick-Start Response to put on the next ACK.
    qs_echo: Option<QsReport>,
    /// RFC 3168 §6.1.3: set ECE on every ACK until a segment with CWR arrives.
    ece: bool,
    /// CE-marked segments received.
    ce_received: u64,
}

impl Receiver {
    /// A receiver expecting byte 0.
    pub fn new(cfg: ReceiverConfig) -> Self {
        debug_assert!(cfg.max_sack_blocks <= MAX_SACK_BLOCKS);
        Receiver {
            cfg,
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            recent: Vec::new(),
            unacked_full: 0,
            unacked_segments: 0,
            delack_deadline: None,
            quick: 0,
            started: false,
            duplicate_bytes: 0,
            qs_echo: None,
            ece: false,
            ce_received: 0,
        }
    }

    /// Data segments that arrived with the CE codepoint.
    pub fn ce_received(&self) -> u64 {
        self.ce_received
    }

    /// Bytes delivered in order to the application (each exactly once).
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// Bytes that arrived again after they had already been received.
    pub fn duplicate_bytes(&self) -> u64 {
        self.duplicate_bytes
    }

    /// The delayed-ACK deadline, if armed.
    pub fn next_timeout(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// A SYN arrived: answer with a SYN-ACK. `ecn_setup`: the SYN carried ECE and CWR (RFC 3168
    /// §6.1.1); this receiver always agrees, answering with ECE.
    pub fn on_syn(&mut self, ecn_setup: bool) -> Ack {
        Ack { syn_ack: true, ece: ecn_setup, ..self.make_ack(false, 0) }
    }

    /// A Quick-Start Rate Request arrived (with the SYN or a data segment, before that segment is
    /// handed to [`Receiver::on_syn`] / [`Receiver::on_segment`]) with IP TTL `ip_ttl`. The next
    /// ACK echoes the rate, `(IP TTL − QS TTL) mod 256` and the nonce (RFC 4782 §4.2).
    pub fn on_quick_start_request(&mut self, request: &QsRequest, ip_ttl: u8) {
        self.qs_echo = Some(request.report(ip_ttl));
    }

    /// A data segment `[seq, seq+len)` arrived; returns the ACK to send now, if any.
    pub fn on_segment(&mut self, now: Time, seq: u64, len: u32) -> Option<Ack> {
        self.on_segment_ecn(now, seq, len, false, false)
    }

    /// A data segment `[seq, seq+len)` arrived, `ce`: with the CE codepoint, `cwr`: with the CWR
    /// flag; returns the ACK to send now, if any (ALGORITHMS.md §17.3).
    pub fn on_segment_ecn(&mut self, now: Time, seq: u64, len: u32, ce: bool, cwr: bool) -> Option<Ack> {
        // RFC 3168 §6.1.3: CWR ends the echo; a CE on the same segment starts it again.
        if cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
            self.ce_received += 1;
        }
        let end = seq + len as u64;
        if !self.started {
            self.started = true;
            if let AckPolicy::QuickAck { budget, .. } = self.cfg.policy {
                self.quick = budget;
            }
        }
        let was_hole = !self.ooo.is_empty();
        let immediate;
        if end <= self.rcv_nxt || self.covered_by_ooo(seq, end) {
            // Entirely old data: a duplicate (a spurious retransmission). ACK at once (RFC 5681 §4.2).
            self.duplicate_bytes += len as u64;
            immediate = true;
        } else if seq <= self.rcv_nxt {
            // In order (possibly overlapping old data): advance, absorbing out-of-order ranges.
            self.duplicate_bytes += self.rcv_nxt - seq;
            self.rcv_nxt = end;
            while let Some((_, e)) = self.ooo.pop_first_if_at_or_below(self.rcv_nxt) {
                self.rcv_nxt = self.rcv_nxt.max(e);
            }
            let rcv_nxt = self.rcv_nxt;
            self.recent.retain(|&r| r >= rcv_nxt);
            immediate = was_hole; // it filled (part of) a hole: ACK at once (§3.2 rule iv)
            self.unacked_segments += 1;
            if len as u64 >= self.cfg.mss {
                self.unacked_full += 1;
            }
        } else {
            // Above a hole: record it and send an immediate duplicate ACK (§3.2 rule iii).
            self.ooo.insert(seq, end, |_, _| {});
            self.recent.retain(|&r| r != seq);
            self.recent.insert(0, seq);
            self.recent.truncate(2 * MAX_SACK_BLOCKS);
            if let AckPolicy::QuickAck { budget, .. } = self.cfg.policy {
                self.quick = self.quick.max(budget);
            }
            immediate = true;
        }
        // ALGORITHMS.md §17.3 RESOLVED: a CE mark is ACKed at once, even with delayed ACKs.
        let send_now = immediate
            || ce
            || match self.cfg.policy {
                AckPolicy::EveryPacket => true,
                AckPolicy::Delayed { .. } => self.unacked_full >= 2,
                AckPolicy::QuickAck { .. } => self.quick > 0 || self.unacked_full >= 2,
            };
        if send_now {
            let newly_acked_segments = std::mem::take(&mut self.unacked_segments);
            self.unacked_full = 0;
            self.delack_deadline = None;
            if self.quick > 0 && newly_acked_segments > 0 {
                self.quick -= 1;
            }
            Some(self.make_ack(false, newly_acked_segments))
        } else {
            if self.delack_deadline.is_none() {
                let timeout = match self.cfg.policy {
                    AckPolicy::Delayed { timeout } | AckPolicy::QuickAck { timeout, .. } => timeout,
                    AckPolicy::EveryPacket => Dur::ZERO,
                };
                self.delack_deadline = Some(now + timeout);
            }
            None
        }
    }

    /// The delayed-ACK timer fired at `now`.
    pub fn on_timer(&mut self, now: Time) -> Option<Ack> {
        match self.delack_deadline {
            Some(d) if d <= now => {
                self.delack_deadline = None;
                self.unacked_full = 0;
                let segs = std::mem::take(&mut self.unacked_segments);
                Some(self.make_ack(true, segs))
            }
            _ => None,
        }
    }

    fn covered_by_ooo(&self, seq: u64, end: u64) -> bool {
        seq < end && self.ooo.covers(seq, end)
    }

    fn make_ack(&mut self, timer_triggered: bool, segments: u32) -> Ack {
        let mut ack = Ack {
            ack: self.rcv_nxt,
            rwnd: self.cfg.rwnd,
            timer_triggered,
            segments,
            qs: self.qs_echo.take(),
            ece: self.ece,
            ..Ack::default()
        };
        if self.cfg.sack {
            // RFC 2018 §4: the first block holds the most recently received segment; the others
            // repeat the most recently reported blocks.
            for &r in &self.recent {
                if ack.n_sack as usize >= self.cfg.max_sack_blocks {
                    break;
                }
                if let Some(block) = self.ooo.containing(r) {
                    if !ack.sack_blocks().contains(&block) {
                        ack.sack[ack.n_sack as usize] = block;
                        ack.n_sack += 1;
                    }
                }
            }
        }
        ack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn receiver(policy: AckPolicy) -> Receiver {
        Receiver::new(ReceiverConfig { policy, sack: true, max_sack_blocks: 3, rwnd: u64::MAX, mss: MSS })
    }

    fn seg(r: &mut Receiver, ms: u64, i: u64) -> Option<Ack> {
        r.on_segment(Time(ms * 1_000_000), i * MSS, MSS as u32)
    }

    #[test]
    fn delayed_acks_cover_two_segments_or_fire_on_the_timer() {
        let mut r = receiver(AckPolicy::Delayed { timeout: Dur::from_millis(200) });
        assert_eq!(seg(&mut r, 0, 0), None, "first segment waits");
        assert_eq!(r.next_timeout(), Some(Time(200_000_000)));
        let a = seg(&mut r, 1, 1).expect("second segment is ACKed");
        assert_eq!((a.ack, a.segments, a.timer_triggered), (2 * MSS, 2, false));
        assert_eq!(seg(&mut r, 2, 2), None);
        let t = r.on_timer(Time(202_000_000)).expect("timer releases the ACK");
        assert_eq!((t.ack, t.segments, t.timer_triggered), (3 * MSS, 1, true));
    }

    #[test]
    fn out_of_order_segments_get_immediate_duplicate_acks_with_recent_block_first() {
        let mut r = receiver(AckPolicy::Delayed { timeout: Dur::from_millis(200) });
        seg(&mut r, 0, 0);
        let d1 = seg(&mut r, 1, 2).expect("immediate dup ack");
        assert_eq!(
            (d1.ack, d1.segments, d1.sack_blocks()),
            (MSS, 1, &[(2 * MSS, 3 * MSS)][..]),
            "the immediate ACK also covers the in-order segment that was waiting"
        );
        let d2 = seg(&mut r, 2, 5).unwrap();
        assert_eq!(d2.sack_blocks(), &[(5 * MSS, 6 * MSS), (2 * MSS, 3 * MSS)]);
        let d3 = seg(&mut r, 3, 3).unwrap();
        assert_eq!(d3.sack_blocks(), &[(2 * MSS, 4 * MSS), (5 * MSS, 6 * MSS)], "merged block leads");
        let fill = seg(&mut r, 4, 1).expect("filling a hole is ACKed at once");
        assert_eq!(fill.ack, 4 * MSS);
        assert_eq!(fill.sack_blocks(), &[(5 * MSS, 6 * MSS)]);
        assert_eq!(r.delivered(), 4 * MSS);
    }

    #[test]
    fn quick_ack_answers_the_first_budget_segments_at_once() {
        let mut r = receiver(AckPolicy::QuickAck { budget: 3, timeout: Dur::from_millis(40) });
        for i in 0..3 {
            assert!(seg(&mut r, i, i).is_some(), "segment {i} is quick-ACKed");
        }
        assert!(seg(&mut r, 3, 3).is_none(), "budget spent: delayed again");
        assert!(seg(&mut r, 4, 4).is_some());
    }

    #[test]
    fn the_next_ack_echoes_a_quick_start_request_once() {
        let mut r = receiver(AckPolicy::Delayed { timeout: Dur::from_millis(200) });
        let req = QsRequest { code: 7, qs_ttl: 195, nonce: 12345 };
        r.on_quick_start_request(&req, 59);
        let syn_ack = r.on_syn(false);
        assert_eq!(syn_ack.qs, Some(QsReport { code: 7, ttl_diff: 120, nonce: 12345 }));
        seg(&mut r, 0, 0);
        assert_eq!(seg(&mut r, 1, 1).and_then(|a| a.qs), None, "echoed once");
    }

    #[test]
    fn ece_is_echoed_at_once_and_on_every_ack_until_cwr() {
        let mut r = receiver(AckPolicy::Delayed { timeout: Dur::from_millis(200) });
        assert!(r.on_syn(true).ece, "the SYN-ACK agrees to ECN");
        assert_eq!(seg(&mut r, 0, 0), None, "an unmarked first segment waits for a second");
        let a = r.on_segment_ecn(Time(1_000_000), MSS, MSS as u32, true, false).expect("CE is ACKed at once");
        assert!(a.ece && a.ack == 2 * MSS);
        let b = seg(&mut r, 2, 2);
        let c = seg(&mut r, 3, 3).expect("second segment");
        assert!(b.is_none() && c.ece, "ECE stays on until CWR");
        assert_eq!(r.on_segment_ecn(Time(4_000_000), 4 * MSS, MSS as u32, false, true), None);
        let d = seg(&mut r, 5, 5).expect("second segment");
        assert!(!d.ece, "CWR ended the echo");
        assert_eq!(r.ce_received(), 1);
    }

    #[test]
    fn duplicates_are_counted_not_delivered_twice() {
        let mut r = receiver(AckPolicy::EveryPacket);
        seg(&mut r, 0, 0);
        seg(&mut r, 1, 0);
        assert_eq!((r.delivered(), r.duplicate_bytes()), (MSS, MSS));
    }
}
