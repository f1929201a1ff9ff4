//! Loss detection by DupThresh: RFC 6675 §4's IsLost() over the runs of acknowledged data above a
//! hole, as RFC 5681's three duplicate ACKs became with SACK.
//!
//! **Transport.** The rule reads a [`RangeSet`] of acknowledged numbers and two constants, never
//! TCP's segments: a number is lost when DupThresh or more acknowledged runs, or more than
//! `(DupThresh − 1) · unit` acknowledged numbers, lie above it. TCP passes its SACKed byte ranges
//! with `unit` = SMSS. A packet-number transport passes its acknowledged packet-number ranges (the
//! union of its ACK frames' ranges) with `unit` = 1: a packet is then lost once DupThresh packets
//! sent after it are acknowledged, RFC 9002 §6.1.1's `kPacketThreshold` counted over the
//! acknowledged packets above it rather than over the packet-number distance to the largest
//! acknowledged (the two agree when nothing is lost between; RFC 9002's is the looser count, so a
//! QUIC sender wanting RFC 9002 exactly compares `largest_acked − pn ≥ kPacketThreshold` instead).

use crate::ranges::RangeSet;

/// RFC 6675's IsLost() rule: DupThresh and the unit in which acknowledged numbers are counted.
#[derive(Clone, Copy, Debug)]
pub struct DupThresh {
    /// DupThresh (RFC 5681: 3).
    pub dupthresh: u32,
    /// What one segment counts in the acknowledged ranges: SMSS bytes for TCP, 1 for packets.
    pub unit: u64,
}

impl DupThresh {
    /// The lost bound of IsLost() over the acknowledged numbers above `floor`: walking `acked`'s
    /// runs from the highest down (each cut at `floor`), the start of the run at which DupThresh
    /// runs or more than (DupThresh − 1)·unit numbers have been seen, with the acknowledged
    /// numbers walked; `None` when that never happens. Every unacknowledged number below the bound
    /// is lost (what is acknowledged above a number is also above every lower one), none above
    /// it. O(DupThresh) runs.
    pub fn lost_bound(&self, acked: &RangeSet, floor: u64) -> Option<(u64, u64)> {
        let threshold = (self.dupthresh as u64 - 1) * self.unit;
        let (mut runs, mut bytes) = (0, 0);
        for (s, e) in acked.iter_rev() {
            if e <= floor {
                break;
            }
            let s = s.max(floor);
            runs += 1;
            bytes += e - s;
            if runs >= self.dupthresh || bytes > threshold {
                return Some((s, bytes));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packet numbers, as a QUIC sender would pass them: 0 to 9 sent, 5, 7 and 8 acknowledged.
    /// Three acknowledged above 4 (in two runs): 4 and below are lost, 6 (two above it) is not.
    #[test]
    fn packet_numbers_with_unit_one() {
        let mut acked = RangeSet::default();
        for pn in [5, 7, 8] {
            acked.insert(pn, pn + 1, |_, _| {});
        }
        let rule = DupThresh { dupthresh: 3, unit: 1 };
        assert_eq!(rule.lost_bound(&acked, 0), Some((5, 3)));
        // Above 5 only 7 and 8: nothing there is lost.
        assert_eq!(rule.lost_bound(&acked, 6), None);
    }
}
