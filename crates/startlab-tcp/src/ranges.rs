//! A set of byte ranges of the sequence space: the sender's SACK scoreboard and the receiver's
//! out-of-order queue. Ranges are half-open `[start, end)`, kept disjoint and never adjacent (a
//! range that touches another is merged with it), so each range is one maximal run: a "SACKed
//! sequence" of RFC 6675 or one SACK block of RFC 2018. Every operation costs O(log n) in the
//! number of ranges, plus O(k) for the k ranges it merges or walks; nothing walks bytes or segments.
//!
//! A set of at most [`SMALL`] ranges (the usual case: a few holes) is a sorted vector, one
//! allocation that a binary search reads in a cache line or two; a larger one (a burst of losses
//! can leave thousands of holes) a B-tree, so that an insert never moves more than [`SMALL`]
//! ranges. The set switches to the tree when it grows past [`SMALL`] ranges and back when it
//! shrinks to half of that; both hold the same ranges in the same order.

use std::collections::BTreeMap;

/// Most ranges kept in the sorted vector.
pub const SMALL: usize = 32;

/// The ranges, sorted by start.
#[derive(Clone, Debug)]
enum Repr {
    /// At most [`SMALL`] ranges as `(start, end)`.
    Small(Vec<(u64, u64)>),
    /// start -> end.
    Large(BTreeMap<u64, u64>),
}

/// Disjoint, non-adjacent half-open ranges with the total bytes they cover.
#[derive(Clone, Debug)]
pub struct RangeSet {
    repr: Repr,
    bytes: u64,
}

impl Default for RangeSet {
    fn default() -> Self {
        RangeSet { repr: Repr::Small(Vec::new()), bytes: 0 }
    }
}

impl PartialEq for RangeSet {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.iter_rev().eq(other.iter_rev())
    }
}

impl Eq for RangeSet {}

impl RangeSet {
    /// True when nothing is covered.
    pub fn is_empty(&self) -> bool {
        match &self.repr {
            Repr::Small(v) => v.is_empty(),
            Repr::Large(m) => m.is_empty(),
        }
    }

    /// Bytes covered.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The range that contains byte `x`.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let below = match &self.repr {
            // At or above the highest range (a receiver's next packet, a sender's next ACK) the
            // answer is the highest range's, without the search's cache lines.
            Repr::Small(v) if v.last().is_some_and(|&(s, _)| s <= x) => v.last().copied(),
            Repr::Small(v) => v.partition_point(|&(s, _)| s <= x).checked_sub(1).map(|i| v[i]),
            Repr::Large(m) => m.range(..=x).next_back().map(|(&s, &e)| (s, e)),
        };
        below.filter(|&(_, e)| x < e)
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
        match &self.repr {
            Repr::Small(v) => v.first().copied(),
            Repr::Large(m) => m.first_key_value().map(|(&s, &e)| (s, e)),
        }
    }

    /// The highest range.
    pub fn last(&self) -> Option<(u64, u64)> {
        match &self.repr {
            Repr::Small(v) => v.last().copied(),
            Repr::Large(m) => m.last_key_value().map(|(&s, &e)| (s, e)),
        }
    }

    /// The ranges from the highest down.
    pub fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let (small, large) = match &self.repr {
            Repr::Small(v) => (Some(v.iter().rev().copied()), None),
            Repr::Large(m) => (None, Some(m.iter().rev().map(|(&s, &e)| (s, e)))),
        };
        small.into_iter().flatten().chain(large.into_iter().flatten())
    }

    /// Adds `[s, e)`, merging with every range it overlaps or touches, and calls `newly(a, b)`
    /// for each part `[a, b)` of it that no range covered before, in increasing order.
    pub fn insert(&mut self, s: u64, e: u64, mut newly: impl FnMut(u64, u64)) {
        if s >= e {
            return;
        }
        match &mut self.repr {
            // At or above the highest range's start (the usual case: data arriving in order,
            // ACKs moving up) the new range extends the highest or follows it, as the general
            // code below would find after its search.
            Repr::Small(v) if v.last().is_some_and(|&(a, _)| a <= s) => {
                let last = v.last_mut().expect("checked");
                if s > last.1 {
                    newly(s, e);
                    self.bytes += e - s;
                    v.push((s, e));
                    if v.len() > SMALL {
                        self.repr = Repr::Large(v.iter().copied().collect());
                    }
                } else if e > last.1 {
                    newly(last.1, e);
                    self.bytes += e - last.1;
                    last.1 = e;
                }
            }
            Repr::Large(map) if map.last_key_value().is_some_and(|(&a, _)| a <= s) => {
                let mut last = map.last_entry().expect("checked");
                let b = *last.get();
                if s > b {
                    newly(s, e);
                    self.bytes += e - s;
                    map.insert(s, e);
                } else if e > b {
                    newly(b, e);
                    self.bytes += e - b;
                    *last.get_mut() = e;
                }
            }
            Repr::Small(v) => {
                // The ranges from the first that reaches `s` to the last that starts by `e`
                // overlap or touch `[s, e)`.
                let lo = v.partition_point(|&(_, b)| b < s);
                let (mut start, mut cur, mut j) = (s, s, lo);
                if let Some(&(a, b)) = v.get(lo).filter(|&&(a, _)| a <= s) {
                    if b >= e {
                        return; // already covered
                    }
                    (start, cur, j) = (a, b, lo + 1);
                }
                while let Some(&(a, b)) = v.get(j).filter(|&&(a, _)| a <= e) {
                    if a > cur {
                        newly(cur, a);
                    }
                    cur = b;
                    j += 1;
                }
                if cur < e {
                    newly(cur, e);
                }
                let end = cur.max(e);
                let merged: u64 = v[lo..j].iter().map(|&(a, b)| b - a).sum();
                self.bytes = self.bytes - merged + (end - start);
                v.splice(lo..j, [(start, end)]);
                if v.len() > SMALL {
                    self.repr = Repr::Large(v.iter().copied().collect());
                }
            }
            Repr::Large(map) => {
                let (mut start, mut cur) = (s, s);
                if let Some((&a, &b)) = map.range(..=s).next_back() {
                    if b >= s {
                        if b >= e {
                            return; // already covered
                        }
                        map.remove(&a);
                        self.bytes -= b - a;
                        start = a;
                        cur = b;
                    }
                }
                // Ranges starting in (cur, e] overlap or touch [s, e); none starts in (s, cur].
                while cur <= e {
                    let Some((&a, &b)) = map.range(cur..=e).next() else { break };
                    if a > cur {
                        newly(cur, a);
                    }
                    map.remove(&a);
                    self.bytes -= b - a;
                    cur = b;
                }
                if cur < e {
                    newly(cur, e);
                }
                let end = cur.max(e);
                map.insert(start, end);
                self.bytes += end - start;
            }
        }
    }

    /// Forgets everything below `x` (a range that straddles `x` is cut at it).
    pub fn remove_below(&mut self, x: u64) {
        match &mut self.repr {
            Repr::Small(v) => {
                let gone = v.partition_point(|&(_, e)| e <= x);
                self.bytes -= v.drain(..gone).map(|(s, e)| e - s).sum::<u64>();
                if let Some(first) = v.first_mut().filter(|r| r.0 < x) {
                    self.bytes -= x - first.0;
                    first.0 = x;
                }
            }
            Repr::Large(map) => {
                while let Some((&s, &e)) = map.first_key_value() {
                    if s >= x {
                        break;
                    }
                    map.remove(&s);
                    self.bytes -= e - s;
                    if e > x {
                        map.insert(x, e);
                        self.bytes += e - x;
                        break;
                    }
                }
                self.shrink();
            }
        }
    }

    /// Removes `[s, e)`: ranges it covers go, ranges it cuts keep their parts outside it.
    pub fn remove(&mut self, s: u64, e: u64) {
        if s >= e {
            return;
        }
        match &mut self.repr {
            Repr::Small(v) => {
                // v[lo..hi] overlap [s, e): they end after s and start before e.
                let lo = v.partition_point(|&(_, b)| b <= s);
                let hi = v.partition_point(|&(a, _)| a < e);
                if lo >= hi {
                    return;
                }
                let (first, last) = (v[lo].0, v[hi - 1].1);
                let covered: u64 = v[lo..hi].iter().map(|&(a, b)| b.min(e) - a.max(s)).sum();
                self.bytes -= covered;
                let kept = [(first < s).then_some((first, s)), (last > e).then_some((e, last))];
                v.splice(lo..hi, kept.into_iter().flatten());
            }
            Repr::Large(map) => {
                // A range starting below s that reaches past it is cut at s (and at e).
                if let Some((&a, &b)) = map.range(..s).next_back() {
                    if b > s {
                        map.insert(a, s);
                        self.bytes -= b - s;
                        if b > e {
                            map.insert(e, b);
                            self.bytes += b - e;
                            return;
                        }
                    }
                }
                while let Some((&a, &b)) = map.range(s..e).next() {
                    map.remove(&a);
                    self.bytes -= b - a;
                    if b > e {
                        map.insert(e, b);
                        self.bytes += b - e;
                        break;
                    }
                }
                self.shrink();
            }
        }
    }

    /// The start of the first range that starts in `[x, e)`, if any.
    fn next_start_in(&self, x: u64, e: u64) -> Option<u64> {
        match &self.repr {
            Repr::Small(v) => v.get(v.partition_point(|&(a, _)| a < x)).map(|&(a, _)| a).filter(|&a| a < e),
            Repr::Large(map) => map.range(x..e).next().map(|(&a, _)| a),
        }
    }

    /// The parts of `[s, e)` no range covers, in increasing order.
    pub fn gaps_in(&self, s: u64, e: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut x = self.next_gap(s);
        while x < e {
            let next = self.next_start_in(x, e).unwrap_or(e);
            out.push((x, next));
            x = self.next_gap(next);
        }
        out
    }

    /// Removes and returns the lowest range if it starts at or below `x`.
    pub fn pop_first_if_at_or_below(&mut self, x: u64) -> Option<(u64, u64)> {
        let (s, e) = self.first().filter(|&(s, _)| s <= x)?;
        match &mut self.repr {
            Repr::Small(v) => {
                v.remove(0);
            }
            Repr::Large(map) => {
                map.remove(&s);
            }
        }
        self.bytes -= e - s;
        self.shrink();
        Some((s, e))
    }

    /// Back to the sorted vector once a tree holds half of [`SMALL`] ranges or fewer.
    fn shrink(&mut self) {
        if let Repr::Large(map) = &self.repr {
            if map.len() <= SMALL / 2 {
                self.repr = Repr::Small(map.iter().map(|(&s, &e)| (s, e)).collect());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The same set as a bitmap over a small space.
    fn model(ops: &[(u64, u64)]) -> Vec<bool> {
        let mut bits = vec![false; SPACE];
        for &(s, e) in ops {
            for b in bits.iter_mut().take(e as usize).skip(s as usize) {
                *b = true;
            }
        }
        bits
    }

    /// Bytes of the space the property test uses: room for more than [`SMALL`] ranges, so that
    /// sets cross from the vector to the tree and back.
    const SPACE: usize = 256;

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
            ops in prop::collection::vec((0u64..SPACE as u64, 0u64..6), 0..160),
            cut in 0u64..SPACE as u64,
        ) {
            let n = SPACE as u64;
            let ops: Vec<(u64, u64)> = ops.into_iter().map(|(s, l)| (s, (s + l).min(n))).collect();
            let mut set = RangeSet::default();
            let mut before = vec![false; SPACE];
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
            for x in 0..n {
                let gap = (x..n).find(|&y| !before[y as usize]).unwrap_or(n);
                prop_assert_eq!(set.next_gap(x), gap);
            }
            set.remove_below(cut);
            let mut kept = before.clone();
            for b in kept.iter_mut().take(cut as usize) {
                *b = false;
            }
            prop_assert_eq!(set.iter_rev().collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>(), runs_of(&kept));
            prop_assert_eq!(set.bytes(), kept.iter().filter(|&&b| b).count() as u64);
            // Taking the lowest ranges one by one (the tree shrinks back to the vector).
            let mut runs = runs_of(&kept);
            while let Some(&(s, e)) = runs.first() {
                prop_assert_eq!(set.pop_first_if_at_or_below(s), Some((s, e)));
                runs.remove(0);
                prop_assert_eq!(set.first(), runs.first().copied());
                prop_assert_eq!(set.last(), runs.last().copied());
            }
            prop_assert!(set.is_empty() && set.bytes() == 0);
        }
    }

    #[test]
    fn a_set_of_many_ranges_is_the_same_set_in_the_tree() {
        // Every other byte: past SMALL ranges, then cut back below half of it.
        let mut set = RangeSet::default();
        for k in 0..(3 * SMALL as u64) {
            set.insert(2 * k, 2 * k + 1, |_, _| {});
        }
        assert!(matches!(set.repr, Repr::Large(_)));
        let mut small = RangeSet::default();
        for k in (3 * SMALL as u64 - 4)..(3 * SMALL as u64) {
            small.insert(2 * k, 2 * k + 1, |_, _| {});
        }
        set.remove_below(2 * (3 * SMALL as u64 - 4));
        assert!(matches!(set.repr, Repr::Small(_)));
        assert_eq!(set, small);
        assert_eq!((set.bytes(), set.first(), set.last()), (4, Some((2 * (3 * SMALL as u64 - 4), 2 * (3 * SMALL as u64 - 4) + 1)), Some((2 * (3 * SMALL as u64) - 2, 2 * (3 * SMALL as u64) - 1))));
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

    #[test]
    fn remove_and_gaps_in_a_set_large_enough_for_the_tree() {
        let mut set = RangeSet::default();
        let mut bits = vec![false; 400];
        for i in 0..100u64 {
            set.insert(3 * i, 3 * i + 2, |_, _| {});
            bits[3 * i as usize] = true;
            bits[3 * i as usize + 1] = true;
        }
        assert!(matches!(set.repr, Repr::Large(_)));
        let gaps: Vec<(u64, u64)> = runs_of(&bits.iter().enumerate().map(|(i, &b)| !b && (10..250).contains(&i)).collect::<Vec<_>>());
        assert_eq!(set.gaps_in(10, 250), gaps);
        set.remove(50, 200);
        for b in bits.iter_mut().take(200).skip(50) {
            *b = false;
        }
        let got: Vec<(u64, u64)> = set.iter_rev().collect::<Vec<_>>().into_iter().rev().collect();
        assert_eq!(got, runs_of(&bits));
        assert_eq!(set.bytes(), bits.iter().filter(|&&b| b).count() as u64);
    }
}
