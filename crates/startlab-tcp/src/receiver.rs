//! TCP receiver models — ALGORITHMS.md §3: per-packet ACKs, delayed ACKs (RFC 1122 §4.2.3.2 /
//! RFC 5681 §4.2), Linux quick-ACK, and SACK blocks (RFC 2018) reported most recent first; ECN
//! feedback, classic (RFC 3168 §6.1.3: ECE until CWR) or Accurate (RFC 9768: counters of CE
//! packets and of bytes per codepoint on every ACK).

use crate::ranges::RangeSet;
use crate::{AccEcnFeedback, Ack, IpEcn, MAX_SACK_BLOCKS};
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
    /// The receiver implements Accurate ECN (RFC 9768): it agrees to it when a SYN asks (§3.1.1),
    /// and without a handshake uses it from the first segment (both ends configured for it).
    pub accecn: bool,
}

/// The ECN setup of an arriving SYN: its TCP flags AE, CWR and ECE (RFC 3168 §6.1.1: CWR and ECE
/// ask for classic ECN; RFC 9768 §3.1.1, Table 1: all three ask for AccECN) and its IP-ECN field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynEcn {
    /// AE (formerly the ECN-nonce flag NS).
    pub ae: bool,
    /// CWR.
    pub cwr: bool,
    /// ECE.
    pub ece: bool,
    /// The SYN's IP-ECN field.
    pub ip: IpEcn,
}

/// An AccECN receiver's counters (RFC 9768 §3.2.1), kept whole; an ACK carries them modulo their
/// field sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AccEcnCounters {
    /// `r.cep`: CE-marked packets, from 5.
    cep: u64,
    /// `r.e0b`: payload bytes received with ECT(0), from 1.
    e0b: u64,
    /// `r.ceb`: payload bytes received with CE, from 0.
    ceb: u64,
    /// `r.e1b`: payload bytes received with ECT(1), from 1.
    e1b: u64,
    /// The last data segment was CE-marked (for change-triggered ACKs).
    last_ce: bool,
    /// CE-marked segments since the last ACK (for increment-triggered ACKs).
    ce_unacked: u32,
}

impl AccEcnCounters {
    /// CE marks since the last ACK that send an ACK at once (RFC 9768 §3.2.2.5.1: `n` SHOULD be 2,
    /// in 2 to 6), so that the 3-bit ACE field cannot wrap between ACKs.
    const CE_ACK_THRESHOLD: u32 = 2;

    fn new() -> Self {
        AccEcnCounters {
            cep: AccEcnFeedback::CEP_INIT,
            e0b: AccEcnFeedback::ECT_BYTES_INIT,
            ceb: 0,
            e1b: AccEcnFeedback::ECT_BYTES_INIT,
            last_ce: false,
            ce_unacked: 0,
        }
    }

    /// Counts a data segment of `len` payload bytes with IP-ECN field `ecn`; true if it must be
    /// ACKed at once: a CE mark after a segment without one (change-triggered, §3.2.2.5.1), or the
    /// `CE_ACK_THRESHOLD`-th mark since the last ACK (increment-triggered).
    fn on_segment(&mut self, ecn: IpEcn, len: u64) -> bool {
        let ce = ecn == IpEcn::Ce;
        match ecn {
            IpEcn::Ce => {
                self.cep += 1;
                self.ceb += len;
                self.ce_unacked += 1;
            }
            IpEcn::Ect0 => self.e0b += len,
            IpEcn::Ect1 => self.e1b += len,
            IpEcn::NotEct => {}
        }
        let onset = ce && !self.last_ce;
        self.last_ce = ce;
        onset || self.ce_unacked >= Self::CE_ACK_THRESHOLD
    }

    /// The feedback of the next ACK (RFC 9768 §3.2.2 and §3.2.3).
    fn feedback(&mut self) -> AccEcnFeedback {
        self.ce_unacked = 0;
        let field = |x: u64| (x % AccEcnFeedback::BYTE_FIELD as u64) as u32;
        AccEcnFeedback { ace: (self.cep % 8) as u8, ee0b: field(self.e0b), eceb: field(self.ceb), ee1b: field(self.e1b) }
    }
}

/// A TCP receiver with an application that reads everything at once.
///
/// Starts on a cache line (`align(64)`): every segment reads most of it, and with many flows it
/// is cold each time, so it spans four lines rather than five.
#[derive(Clone, Debug)]
#[repr(align(64))]
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
    /// The connection uses AccECN (RFC 9768): its counters; `None` for classic or no ECN.
    accecn: Option<AccEcnCounters>,
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
            accecn: cfg.accecn.then(AccEcnCounters::new),
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

    /// Reads, and discards, a value on each cache line of the receiver's state, so that a driver
    /// that knows a segment comes next can start these cache misses early. The result means
    /// nothing: pass it to `std::hint::black_box`.
    pub fn warm(&self) -> u64 {
        self.rcv_nxt ^ self.cfg.mss ^ self.ooo.is_empty() as u64 ^ self.recent.len() as u64 ^ self.delack_deadline.map_or(0, Time::as_nanos) ^ self.ce_received ^ self.accecn.is_some() as u64
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
        self.on_syn_ecn(SynEcn { ae: false, cwr: ecn_setup, ece: ecn_setup, ip: IpEcn::NotEct })
    }

    /// A SYN with ECN setup `syn` arrived: answer with a SYN-ACK. RFC 9768 §3.1.1 (Table 1, and
    /// §3.1.2: AE, CWR, ECE other than `000` or `011` ask for AccECN as `111` does): a receiver that
    /// implements AccECN agrees to it with the ACE of Table 2 (the SYN's IP-ECN field); asked for
    /// AccECN without implementing it, or asked for classic ECN, it agrees to classic ECN (RFC 3168
    /// §6.1.1: ECE alone); a SYN without ECE and CWR asks for no ECN.
    pub fn on_syn_ecn(&mut self, syn: SynEcn) -> Ack {
        let flags = (syn.ae as u8) << 2 | (syn.cwr as u8) << 1 | syn.ece as u8;
        let wants_accecn = flags != 0b000 && flags != 0b011;
        self.accecn = (wants_accecn && self.cfg.accecn).then(AccEcnCounters::new);
        let ack = self.make_ack(false, 0);
        match self.accecn {
            Some(_) => Ack { syn_ack: true, accecn: Some(AccEcnFeedback { ace: AccEcnFeedback::syn_ack_ace(syn.ip), ..ack.accecn.unwrap_or_default() }), ..ack },
            None => Ack { syn_ack: true, ece: flags != 0b000, ..ack },
        }
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
        self.on_segment_ip(now, seq, len, if ce { IpEcn::Ce } else { IpEcn::NotEct }, cwr)
    }

    /// A data segment `[seq, seq+len)` arrived with IP-ECN field `ecn` and, `cwr`, the CWR flag;
    /// returns the ACK to send now, if any. Classic ECN (ALGORITHMS.md §17.3, RFC 3168 §6.1.3):
    /// ECE from a CE mark until a CWR, and a CE segment is ACKed at once. AccECN (RFC 9768): the
    /// codepoint is counted (§3.2.1; CWR is part of no echo) and a CE onset, or the second CE mark
    /// since the last ACK, is ACKed at once (§3.2.2.5.1).
    pub fn on_segment_ip(&mut self, now: Time, seq: u64, len: u32, ecn: IpEcn, cwr: bool) -> Option<Ack> {
        let ce = ecn == IpEcn::Ce;
        let accecn_now = self.accecn.as_mut().map(|a| a.on_segment(ecn, len as u64));
        if accecn_now.is_none() {
            // RFC 3168 §6.1.3: CWR ends the echo; a CE on the same segment starts it again.
            if cwr {
                self.ece = false;
            }
            if ce {
                self.ece = true;
            }
        }
        if ce {
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
        // ALGORITHMS.md §17.3 RESOLVED: a CE mark is ACKed at once, even with delayed ACKs; with
        // AccECN, a CE onset or the second mark since the last ACK.
        let send_now = immediate
            || accecn_now.unwrap_or(ce)
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
            ece: self.ece && self.accecn.is_none(),
            accecn: self.accecn.as_mut().map(AccEcnCounters::feedback),
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
        Receiver::new(ReceiverConfig { policy, sack: true, max_sack_blocks: 3, rwnd: u64::MAX, mss: MSS, accecn: false })
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

    fn accecn_receiver(policy: AckPolicy) -> Receiver {
        Receiver::new(ReceiverConfig { policy, sack: true, max_sack_blocks: 3, rwnd: u64::MAX, mss: MSS, accecn: true })
    }

    fn seg_ip(r: &mut Receiver, ms: u64, i: u64, ecn: IpEcn) -> Option<Ack> {
        r.on_segment_ip(Time(ms * 1_000_000), i * MSS, MSS as u32, ecn, false)
    }

    #[test]
    fn accecn_counts_ce_packets_in_ace_and_bytes_per_codepoint_on_every_ack() {
        let mut r = accecn_receiver(AckPolicy::EveryPacket);
        // RFC 9768 §3.2.1: r.cep = 5, r.e0b = r.e1b = 1, r.ceb = 0 before any segment.
        let a = seg_ip(&mut r, 0, 0, IpEcn::Ect1).unwrap();
        assert_eq!(a.accecn, Some(AccEcnFeedback { ace: 5, ee0b: 1, eceb: 0, ee1b: 1 + MSS as u32 }));
        assert!(!a.ece, "no classic echo with AccECN");
        let b = seg_ip(&mut r, 1, 1, IpEcn::Ce).unwrap();
        assert_eq!(b.accecn, Some(AccEcnFeedback { ace: 6, ee0b: 1, eceb: MSS as u32, ee1b: 1 + MSS as u32 }));
        assert!(!b.ece);
        for i in 2..5 {
            seg_ip(&mut r, i, i, IpEcn::Ce);
        }
        let c = seg_ip(&mut r, 5, 5, IpEcn::Ect0).unwrap();
        // Four CE packets: r.cep = 9, which ACE carries modulo 8.
        assert_eq!(c.accecn, Some(AccEcnFeedback { ace: 1, ee0b: 1 + MSS as u32, eceb: 4 * MSS as u32, ee1b: 1 + MSS as u32 }));
        assert_eq!(r.ce_received(), 4);
    }

    #[test]
    fn accecn_acks_a_ce_onset_and_every_second_mark_at_once_with_delayed_acks() {
        let mut r = accecn_receiver(AckPolicy::Delayed { timeout: Dur::from_millis(200) });
        assert_eq!(seg_ip(&mut r, 0, 0, IpEcn::Ect1), None, "an unmarked first segment waits");
        let onset = seg_ip(&mut r, 1, 1, IpEcn::Ce).expect("a CE onset is ACKed at once (change-triggered)");
        assert_eq!(onset.accecn.unwrap().eceb, MSS as u32);
        assert_eq!(seg_ip(&mut r, 2, 2, IpEcn::Ce), None, "a second CE in a run waits for a second segment");
        let two = seg_ip(&mut r, 3, 3, IpEcn::Ce).expect("the second mark since the last ACK (increment-triggered)");
        assert_eq!((two.ack, two.accecn.unwrap().eceb, two.accecn.unwrap().ace), (4 * MSS, 3 * MSS as u32, 0));
        assert_eq!(seg_ip(&mut r, 4, 4, IpEcn::Ect1), None, "the end of a CE run follows the ACK policy");
        assert!(seg_ip(&mut r, 5, 5, IpEcn::Ect1).is_some());
    }

    #[test]
    fn accecn_is_agreed_on_a_syn_that_asks_and_classic_ecn_otherwise() {
        let ask = SynEcn { ae: true, cwr: true, ece: true, ip: IpEcn::NotEct };
        let mut r = accecn_receiver(AckPolicy::EveryPacket);
        let syn_ack = r.on_syn_ecn(ask);
        // RFC 9768 Table 2: a Not-ECT SYN is answered with ACE 010.
        assert_eq!((syn_ack.syn_ack, syn_ack.ece, syn_ack.accecn.map(|f| f.ace)), (true, false, Some(0b010)));
        assert!(seg_ip(&mut r, 0, 0, IpEcn::Ce).unwrap().accecn.is_some());
        // A classic SYN (CWR, ECE) gets classic ECN from an AccECN receiver...
        let mut r = accecn_receiver(AckPolicy::EveryPacket);
        let syn_ack = r.on_syn_ecn(SynEcn { ae: false, ..ask });
        assert!(syn_ack.ece && syn_ack.accecn.is_none());
        let a = seg_ip(&mut r, 0, 0, IpEcn::Ce).unwrap();
        assert!(a.ece && a.accecn.is_none(), "classic echo");
        // ... and an AccECN SYN gets classic ECN from a receiver without AccECN (Table 2: 001).
        let mut r = receiver(AckPolicy::EveryPacket);
        let syn_ack = r.on_syn_ecn(ask);
        assert!(syn_ack.ece && syn_ack.accecn.is_none());
        // No ECN asked: none given.
        let mut r = accecn_receiver(AckPolicy::EveryPacket);
        let syn_ack = r.on_syn_ecn(SynEcn::default());
        assert!(!syn_ack.ece && syn_ack.accecn.is_none());
        assert!(seg_ip(&mut r, 0, 0, IpEcn::Ce).unwrap().accecn.is_none());
    }

    #[test]
    fn duplicates_are_counted_not_delivered_twice() {
        let mut r = receiver(AckPolicy::EveryPacket);
        seg(&mut r, 0, 0);
        seg(&mut r, 1, 0);
        assert_eq!((r.delivered(), r.duplicate_bytes()), (MSS, MSS));
    }
}
