//! A set of byte ranges of the sequence space: the sender's SACK scoreboard and the receiver's
//! out-of-order queue. Ranges are half-open `[start, end)`, kept disjoint and never adjacent (a
//! range that touches another is merged with it), so each range is one maximal run: a "SACKed
//! sequence" of RFC 6675 or one SACK block of RFC 2018. Every operation costs O(log n) in the
//! number of ranges, plus O(k) for the k ranges it merges or walks; nothing walks bytes or segments.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open ranges with the total bytes they cover.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    /// start -> end.
    map: BTreeMap<u64, u64>,
    bytes: u64,
}

impl RangeSet {
    /// True when nothing is covered.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Bytes covered.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The range that contains byte `x`.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        self.map.range(..=x).next_back().map(|(&s, &e)| (s, e)).filter(|&(_, e)| x < e)
    }

    /// True when `[s, e)` (non-empty) lies inside one range.
    pub fn covers(&self, s: u64, e: u64) -> bool {
        self.containing(s).is_some_and(|(_, end)| e <= end)
    }

    /// The first byte at or after `x` that no range covers.
    pub fn next_gap(&self, x: u64) -> u64 {
        self.containing(x).map_or(x, |(_, e)| e)
    }

    /// The lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.map.first_key_value().map(|(&s, &e)| (s, e))
    }

    /// The highest range.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.map.last_key_value().map(|(&s, &e)| (s, e))
    }

    /// The ranges from the highest down.
    pub fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.map.iter().rev().map(|(&s, &e)| (s, e))
    }

    /// Adds `[s, e)`, merging with every range it overlaps or touches, and calls `newly(a, b)`
    /// for each part `[a, b)` of it that no range covered before, in increasing order.
    pub fn insert(&mut self, s: u64, e: u64, mut newly: impl FnMut(u64, u64)) {
        if s >= e {
            return;
        }
        let (mut start, mut cur) = (s, s);
        if let Some((&a, &b)) = self.map.range(..=s).next_back() {
            if b >= s {
                if b >= e {
                    return; // already covered
                }
                self.map.remove(&a);
                self.bytes -= b - a;
                start = a;
                cur = b;
            }
        }
        // Ranges starting in (cur, e] overlap or touch [s, e); none starts in (s, cur].
        while cur <= e {
            let Some((&a, &b)) = self.map.range(cur..=e).next() else { break };
            if a > cur {
                newly(cur, a);
            }
            self.map.remove(&a);
            self.bytes -= b - a;
            cur = b;
        }
        if cur < e {
            newly(cur, e);
        }
        let end = cur.max(e);
        self.map.insert(start, end);
        self.bytes += end - start;
    }

    /// Forgets everything below `x` (a range that straddles `x` is cut at it).
    pub fn remove_below(&mut self, x: u64) {
        while let Some((s, e)) = self.first() {
            if s >= x {
                break;
            }
            self.map.remove(&s);
            self.bytes -= e - s;
            if e > x {
                self.map.insert(x, e);
                self.bytes += e - x;
                break;
            }
        }
    }

    /// Removes `[s, e)`: ranges it covers go, ranges it cuts keep their parts outside it.
    pub fn remove(&mut self, s: u64, e: u64) {
        if s >= e {
            return;
        }
        // A range starting below s that reaches past it is cut at s (and at e).
        if let Some((&a, &b)) = self.map.range(..s).next_back() {
            if b > s {
                self.map.insert(a, s);
                self.bytes -= b - s;
                if b > e {
                    self.map.insert(e, b);
                    self.bytes += b - e;
                    return;
                }
            }
        }
        while let Some((&a, &b)) = self.map.range(s..e).next() {
            self.map.remove(&a);
            self.bytes -= b - a;
            if b > e {
                self.map.insert(e, b);
                self.bytes += b - e;
                break;
            }
        }
    }

    /// The parts of `[s, e)` no range covers, in increasing order.
    pub fn gaps_in(&self, s: u64, e: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut x = self.next_gap(s);
        while x < e {
            let next = self.map.range(x..e).next().map_or(e, |(&a, _)| a);
            out.push((x, next));
            x = self.next_gap(next);
        }
        out
    }

    /// Removes and returns the lowest range if it starts at or below `x`.
    pub fn pop_first_if_at_or_below(&mut self, x: u64) -> Option<(u64, u64)> {
        let (s, e) = self.first()?;
        (s <= x).then(|| {
            self.map.remove(&s);
            self.bytes -= e - s;
            (s, e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The same set as a bitmap over a small space.
    fn model(ops: &[(u64, u64)]) -> Vec<bool> {
        let mut bits = vec![false; 64];
        for &(s, e) in ops {
            for b in bits.iter_mut().take(e as usize).skip(s as usize) {
                *b = true;
            }
        }
        bits
    }

    fn runs_of(bits: &[bool]) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bits.len() {
            if bits[i] {
                let s = i;
                while i < bits.len() && bits[i] {
                    i += 1;
                }
                out.push((s as u64, i as u64));
            } else {
                i += 1;
            }
        }
        out
    }

    proptest! {
        #[test]
        fn insert_keeps_maximal_runs_and_reports_exactly_the_new_bytes(
            ops in prop::collection::vec((0u64..64, 0u64..16), 0..24),
            cut in 0u64..64,
        ) {
            let ops: Vec<(u64, u64)> = ops.into_iter().map(|(s, l)| (s, (s + l).min(64))).collect();
            let mut set = RangeSet::default();
            let mut before = vec![false; 64];
            for (k, &(s, e)) in ops.iter().enumerate() {
                let mut fresh = Vec::new();
                set.insert(s, e, |a, b| fresh.push((a, b)));
                let after = model(&ops[..=k]);
                let expected: Vec<(u64, u64)> =
                    runs_of(&after.iter().zip(&before).map(|(&x, &y)| x && !y).collect::<Vec<_>>());
                prop_assert_eq!(fresh, expected);
                prop_assert_eq!(set.iter_rev().collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>(), runs_of(&after));
                prop_assert_eq!(set.bytes(), after.iter().filter(|&&b| b).count() as u64);
                before = after;
            }
            for x in 0..64u64 {
                let gap = (x..64).find(|&y| !before[y as usize]).unwrap_or(64);
                prop_assert_eq!(set.next_gap(x), gap);
            }
            set.remove_below(cut);
            let mut kept = before.clone();
            for b in kept.iter_mut().take(cut as usize) {
                *b = false;
            }
            prop_assert_eq!(set.iter_rev().collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>(), runs_of(&kept));
            prop_assert_eq!(set.bytes(), kept.iter().filter(|&&b| b).count() as u64);
        }
    }

    #[test]
    fn pop_first_takes_only_a_range_that_starts_low_enough() {
        let mut set = RangeSet::default();
        set.insert(10, 20, |_, _| {});
        set.insert(30, 40, |_, _| {});
        assert_eq!(set.pop_first_if_at_or_below(9), None);
        assert_eq!(set.pop_first_if_at_or_below(10), Some((10, 20)));
        assert_eq!((set.iter_rev().count(), set.bytes()), (1, 10));
        assert!(set.covers(31, 40) && !set.covers(29, 31));
    }

    proptest! {
        #[test]
        fn remove_and_gaps_agree_with_a_bitmap(ops in proptest::collection::vec((0u64..60, 1u64..8), 0..12), cut in (0u64..60, 1u64..30)) {
            let ops: Vec<(u64, u64)> = ops.into_iter().map(|(s, l)| (s, (s + l).min(64))).collect();
            let mut set = RangeSet::default();
            for &(s, e) in &ops {
                set.insert(s, e, |_, _| {});
            }
            let (cs, ce) = (cut.0, (cut.0 + cut.1).min(64));
            let mut bits = model(&ops);
            let gaps: Vec<(u64, u64)> = runs_of(&bits[..].iter().enumerate().map(|(i, &b)| !b && (i as u64) >= cs && (i as u64) < ce).collect::<Vec<_>>());
            prop_assert_eq!(set.gaps_in(cs, ce), gaps);
            set.remove(cs, ce);
            for b in bits.iter_mut().take(ce as usize).skip(cs as usize) {
                *b = false;
            }
            let want = runs_of(&bits);
            let got: Vec<(u64, u64)> = set.iter_rev().collect::<Vec<_>>().into_iter().rev().collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(set.bytes(), bits.iter().filter(|&&b| b).count() as u64);
        }
    }
}
