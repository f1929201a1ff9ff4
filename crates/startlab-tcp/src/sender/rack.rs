//! RACK (RFC 8985 §6): time-based loss detection, the detector alone. `rack_tlp.rs` runs it on
//! the TCP sender for `Recovery::RackTlp` and `Recovery::Linux`, with the tail loss probe.
//!
//! **Loss detection.** Each ACK moves `RACK.xmit_ts` to the latest send time among the segments
//! it delivers (cumulatively or by SACK; a retransmitted segment counts only if its RTT is at
//! least the minimum RTT, else the ACK may be for the original). A segment sent before that one
//! is lost once `RACK.rtt + reo_wnd` has passed since it was sent; a segment whose time is not
//! up yet arms the reordering timer. This finds lost retransmissions as well as lost originals,
//! so a retransmission lost again is sent again without a timeout.
//!
//! **Reordering window.** As Linux: 0 while no reordering has been seen and the sender is in
//! recovery or has at least DupThresh segments SACKed (so a burst is detected at once), else
//! `min(min_RTT / 4, SRTT)`. Reordering is seen when a segment sent once is delivered below
//! the highest byte SACKed before the ACK (Linux `prior_fack`): an ACK that SACKs past a hole and
//! also covers a segment its receiver held for a delayed ACK shows no reordering.
//!
//! **Cost.** Every transmission enters a queue in send order. Detection walks it from the front,
//! drops entries that are stale (acknowledged, SACKed, marked lost or sent again since) and stops
//! at the first segment sent after `RACK.xmit_ts` or whose time is not up, so each entry is
//! visited a bounded number of times and an ACK costs O(1) amortised plus the caller's cost per
//! segment marked lost.
//!
//! **Transport.** [`Rack`] knows transmissions only as `(send time, id, transmission count)` and
//! deliveries as `(send time, transmission count, order key)`; whether a queued transmission is
//! still in flight, and what "below the highest acknowledged" means, is the caller's answer. TCP
//! passes a segment's first byte as its id, its end byte as its order key (RFC 8985's
//! `RACK.end_seq` breaks ties between segments sent at the same time) and counts transmissions,
//! because a retransmission reuses the sequence number and its ACK is ambiguous (Karn). A
//! packet-number transport (QUIC, RFC 9002 §6.1.2) passes the packet number as both id and order
//! key and a transmission count of 1 (a retransmission is a new packet, so no ACK is ambiguous and
//! the minimum-RTT guard never applies); `below_fack` is "below the largest packet number
//! acknowledged before this ACK"; the reordering window it passes is RFC 9002's
//! `kTimeThreshold · max(smoothed_rtt, latest_rtt)` less `RACK.rtt` if it wants RFC 9002's rule
//! exactly, or Linux's as here.
//!
//! **Where this differs from RFC 8985 / Linux** (startlab's choices):
//! - The reordering timer is set for the earliest waiting segment, not the latest: each
//!   segment is marked at its own deadline. This only matters before recovery with fewer than
//!   DupThresh segments SACKed (the window is 0 otherwise).
//! - min_RTT is the minimum over the connection (Linux keeps a 5-minute windowed minimum).
//! - The receiver models send no DSACK: the reordering window never widens.
//! - Linux pads the reordering timer with two jiffies; the simulator does not.

use startlab_units::{Dur, Time};
use std::collections::VecDeque;

/// RACK's detector state.
#[derive(Debug, Default)]
pub struct Rack {
    /// `RACK.xmit_ts` and `RACK.end_seq` (the order key) of the latest-sent delivered segment.
    xmit: Option<(Time, u64)>,
    /// `RACK.rtt`: the RTT of that segment.
    rtt: Dur,
    /// Minimum RTT seen.
    min_rtt: Option<Dur>,
    /// A segment sent once was delivered below the highest SACKed byte.
    reord_seen: bool,
    /// `RACK.xmit_ts` moved since the last detection.
    advanced: bool,
    /// Every transmission in send order: (time, id, transmission count).
    sent: VecDeque<(Time, u64, u16)>,
    /// The reordering timer.
    reo_deadline: Option<Time>,
}

/// RFC 8985 `RACK_sent_after`: (t1, key1) was sent after (t2, key2).
fn sent_after((t1, s1): (Time, u64), (t2, s2): (Time, u64)) -> bool {
    t1 > t2 || (t1 == t2 && s1 > s2)
}

impl Rack {
    /// A transmission of `id` (its `tx`-th) at `now` enters the send-order queue.
    pub fn on_send(&mut self, now: Time, id: u64, tx: u16) {
        self.sent.push_back((now, id, tx));
    }

    /// A segment delivered by the ACK being processed at `now` (cumulatively for the first time,
    /// or newly SACKed): last sent at `sent`, its `tx`-th transmission, with order key `key`;
    /// `below_fack` when it lies below the highest byte SACKed before.
    pub fn on_delivered(&mut self, now: Time, sent: Time, tx: u16, key: u64, below_fack: bool) {
        if tx == 1 && below_fack {
            self.reord_seen = true;
        }
        let rtt = now - sent;
        if tx > 1 && self.min_rtt.is_none_or(|min| rtt < min) {
            // Possibly the ACK of an earlier transmission.
            return;
        }
        let cand = (sent, key);
        if self.xmit.is_none_or(|x| sent_after(cand, x)) {
            self.xmit = Some(cand);
            self.rtt = rtt;
            self.advanced = true;
        }
    }

    /// An RTT sample of a segment sent once.
    pub fn on_rtt_sample(&mut self, rtt: Dur) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// Reordering has been seen.
    #[cfg(test)]
    pub fn reordering_seen(&self) -> bool {
        self.reord_seen
    }

    /// `RACK.xmit_ts` moved since the last call: a detection is due.
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// RFC 8985 `RACK_update_reo_wnd`, as Linux `tcp_rack_reo_wnd` resolves it: 0 while no
    /// reordering has been seen and `eager` (in recovery, or DupThresh segments acknowledged
    /// above a hole), else `min(min_RTT / 4, srtt)`.
    pub fn reo_wnd(&self, eager: bool, srtt: Option<Dur>) -> Dur {
        if !self.reord_seen && eager {
            return Dur::ZERO;
        }
        let quarter = self.min_rtt.map_or(Dur(u64::MAX), |m| Dur(m.0 / 4));
        quarter.min(srtt.unwrap_or(Dur::ZERO))
    }

    /// The reordering timer.
    pub fn reo_deadline(&self) -> Option<Time> {
        self.reo_deadline
    }

    /// A detection starts (on an ACK, or because the reordering timer fired): the timer is
    /// disarmed until the detection arms it again.
    pub fn begin_detection(&mut self) {
        self.reo_deadline = None;
    }

    /// RFC 8985 `RACK_detect_loss`, one transmission at a time: the id of the next one found lost
    /// (it leaves the queue), or `None` when the walk stops. `live(id, tx)` gives the order key
    /// of a queued transmission still in flight, or `None` for a stale one (dropped). The walk
    /// stops at the first transmission sent after `RACK.xmit_ts`, or whose `RACK.rtt + reo_wnd`
    /// is not up at `now` (the reordering timer is armed for it).
    pub fn next_lost(&mut self, now: Time, reo_wnd: Dur, mut live: impl FnMut(u64, u16) -> Option<u64>) -> Option<u64> {
        let xmit = self.xmit?;
        while let Some(&(sent, id, tx)) = self.sent.front() {
            let Some(key) = live(id, tx) else {
                self.sent.pop_front();
                continue;
            };
            if !sent_after(xmit, (sent, key)) {
                return None;
            }
            let deadline = sent + self.rtt + reo_wnd;
            if deadline > now {
                self.reo_deadline = Some(deadline);
                return None;
            }
            self.sent.pop_front();
            return Some(id);
        }
        None
    }

    /// A retransmission timeout: every transmission in the queue is forgotten (the caller marks
    /// what is outstanding lost) and the reordering timer disarmed.
    pub fn on_timeout(&mut self) {
        self.sent.clear();
        self.reo_deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_millis(n)
    }

    /// Packet numbers as ids and order keys, each sent once (a QUIC sender's use): packets 0 to
    /// 5 sent 1 ms apart, packet 3 acknowledged at 100 ms. 0, 1 and 2 were sent before it and
    /// their RACK.rtt is up: lost, in send order; 4 was sent after it and the walk stops there.
    #[test]
    fn packet_numbers_sent_once() {
        let mut rack = Rack::default();
        for pn in 0..6 {
            rack.on_send(ms(pn), pn, 1);
        }
        rack.on_rtt_sample(ms(100) - ms(3));
        rack.on_delivered(ms(100), ms(3), 1, 3, false);
        assert!(rack.take_advanced());
        let reo = rack.reo_wnd(true, None);
        assert_eq!(reo, Dur::ZERO);
        let live = |pn: u64, _tx: u16| (pn != 3).then_some(pn);
        let lost: Vec<u64> = std::iter::from_fn(|| rack.next_lost(ms(100), reo, live)).collect();
        assert_eq!(lost, vec![0, 1, 2]);
        assert_eq!(rack.reo_deadline(), None);
        // With a reordering window of 2 ms, the time of packets 0 and 1 is up at 100 ms; packet 2
        // arms the reordering timer for its deadline (sent at 2 ms + RACK.rtt 97 ms + 2 ms).
        let mut rack = Rack::default();
        for pn in 0..6 {
            rack.on_send(ms(pn), pn, 1);
        }
        rack.on_delivered(ms(100), ms(3), 1, 3, false);
        let lost: Vec<u64> = std::iter::from_fn(|| rack.next_lost(ms(100), Dur::from_millis(2), live)).collect();
        assert_eq!(lost, vec![0, 1]);
        assert_eq!(rack.reo_deadline(), Some(ms(101)));
    }
}
