//! Anti-replay window on packet numbers (the IPsec / DTLS sliding window, RFC 4303 §3.4.3): the
//! highest number accepted and a bitmap of the [`ReplayWindow::SIZE`] numbers below it. A number
//! is accepted once; one older than the window is refused, since it can no longer be told apart
//! from a replay. Only authenticated datagrams reach [`ReplayWindow::accept`].

const WORDS: usize = 16;

/// Which packet numbers have been seen.
#[derive(Clone, Debug, Default)]
pub struct ReplayWindow {
    highest: Option<u64>,
    /// Bit `i` (word `i / 64`, bit `i % 64`): number `highest - i` was accepted.
    bits: [u64; WORDS],
}

impl ReplayWindow {
    /// Packet numbers remembered below the highest one.
    pub const SIZE: u64 = (WORDS * 64) as u64;

    /// Accepts `pn` if it was never accepted and is not older than the window; records it.
    pub fn accept(&mut self, pn: u64) -> bool {
        let Some(h) = self.highest else {
            self.highest = Some(pn);
            self.bits = [0; WORDS];
            self.bits[0] = 1;
            return true;
        };
        if pn > h {
            self.shift(pn - h);
            self.highest = Some(pn);
            self.bits[0] |= 1;
            return true;
        }
        let age = h - pn;
        if age >= Self::SIZE {
            return false;
        }
        let (w, b) = ((age / 64) as usize, age % 64);
        if self.bits[w] & (1 << b) != 0 {
            return false;
        }
        self.bits[w] |= 1 << b;
        true
    }

    /// Ages every bit by `by` numbers (a left shift of the 1024-bit map).
    fn shift(&mut self, by: u64) {
        if by >= Self::SIZE {
            self.bits = [0; WORDS];
            return;
        }
        let (words, bits) = ((by / 64) as usize, (by % 64) as u32);
        for i in (0..WORDS).rev() {
            let hi = i.checked_sub(words).map_or(0, |j| self.bits[j]);
            let lo = match i.checked_sub(words + 1) {
                Some(j) if bits > 0 => self.bits[j] >> (64 - bits),
                _ => 0,
            };
            self.bits[i] = (hi << bits) | lo;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn a_number_is_accepted_once_and_old_ones_are_refused() {
        let mut w = ReplayWindow::default();
        assert!(w.accept(5));
        assert!(!w.accept(5), "a replay of 5");
        assert!(w.accept(3), "late but new");
        assert!(w.accept(5000));
        assert!(!w.accept(5000 - ReplayWindow::SIZE), "outside the window");
        assert!(w.accept(5000 - ReplayWindow::SIZE + 1), "the oldest number inside the window");
        assert!(!w.accept(5000 - ReplayWindow::SIZE + 1));
    }

    proptest! {
        /// Against a model that remembers every number: accepted iff new and within the window.
        #[test]
        fn the_window_matches_a_model_of_every_number(steps in prop::collection::vec((0u64..3000, 0u64..40), 1..400)) {
            let mut w = ReplayWindow::default();
            let mut seen = BTreeSet::new();
            let mut highest: Option<u64> = None;
            let mut base = 0u64;
            for (jump, back) in steps {
                // The base moves forward by up to 299; the number is up to 1443 below it, so that
                // both sides of the window's edge are exercised.
                base += jump / 10;
                let pn = base.saturating_sub(back * 37);
                let expect = !seen.contains(&pn) && highest.is_none_or(|h| pn > h || h - pn < ReplayWindow::SIZE);
                prop_assert_eq!(w.accept(pn), expect, "pn {} with highest {:?}", pn, highest);
                if expect {
                    seen.insert(pn);
                    highest = Some(highest.map_or(pn, |h| h.max(pn)));
                }
            }
        }
    }
}
