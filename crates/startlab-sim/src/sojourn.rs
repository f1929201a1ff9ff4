//! How long packets waited in a queue: count, sum, maximum and a log-linear histogram for the link
//! table's `sojourn_*` columns (docs/RESULTS.md).

use startlab_units::Dur;

/// Sojourn times of a queue's packets: count, sum and maximum, and a log-linear histogram (8
/// buckets per octave from 1 µs, so a percentile is within 1/8 of an octave, about 9 %) made on
/// the first packet that waits at all.
///
/// `repr(C)`: the fields every packet updates first, on one cache line (a link's per-packet
/// counters, see `net::Channel`).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct Sojourns {
    /// Σ sojourn, ns.
    pub sum_ns: u128,
    /// Packets counted.
    pub count: u64,
    /// Longest, ns.
    pub max_ns: u64,
    /// Packets that waited under 1 µs (not in the histogram).
    zero: u64,
    /// Bucket `8·e + s`: sojourns in `[2^(10+e)·(1 + s/8), 2^(10+e)·(1 + (s+1)/8))` ns.
    hist: Vec<u64>,
}

impl Sojourns {
    const SUB: u64 = 8;

    /// Counts one packet that waited `d`.
    #[inline]
    pub fn add(&mut self, d: Dur) {
        let ns = d.as_nanos();
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
        if ns < 1024 {
            self.zero += 1;
            return;
        }
        let e = 63 - ns.leading_zeros() as u64; // 2^e <= ns
        let s = (ns >> (e - 3)) & (Self::SUB - 1);
        let bucket = ((e - 10) * Self::SUB + s) as usize;
        if self.hist.len() <= bucket {
            self.hist.resize(bucket + 1, 0);
        }
        self.hist[bucket] += 1;
    }

    /// These sojourns and `n` more of 0 ns.
    pub fn with_zeros(&self, n: u64) -> Sojourns {
        Sojourns { count: self.count + n, zero: self.zero + n, ..self.clone() }
    }

    /// Mean sojourn, seconds (0 without packets).
    pub fn mean_s(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum_ns as f64 / self.count as f64 / 1e9 }
    }

    /// The `q`-quantile (0 < q <= 1), seconds: the midpoint of the bucket holding it (0 for
    /// packets that did not wait), never above the maximum.
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank <= self.zero {
            return 0.0;
        }
        let mut seen = self.zero;
        for (i, &n) in self.hist.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (e, s) = (i as u64 / Self::SUB + 10, i as u64 % Self::SUB);
                let lo = (1u64 << e) as f64 * (1.0 + s as f64 / Self::SUB as f64);
                let hi = (1u64 << e) as f64 * (1.0 + (s + 1) as f64 / Self::SUB as f64);
                return ((lo + hi) / 2.0).min(self.max_ns as f64) / 1e9;
            }
        }
        self.max_ns as f64 / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_fall_within_a_bucket_of_the_exact_ones() {
        let mut s = Sojourns::default();
        for us in 1..=1000u64 {
            s.add(Dur::from_micros(us));
        }
        for (q, exact) in [(0.5, 500e-6), (0.99, 990e-6)] {
            let got = s.quantile_s(q);
            assert!((got / exact - 1.0).abs() < 0.07, "q {q}: {got} against {exact}");
        }
        assert_eq!(s.max_ns, 1_000_000);
        assert!((s.mean_s() - 500.5e-6).abs() < 1e-12);
        assert!(s.quantile_s(1.0) <= 1e-3);
    }

    #[test]
    fn packets_that_did_not_wait_are_zeros() {
        let mut s = Sojourns::default();
        for _ in 0..60 {
            s.add(Dur::ZERO);
        }
        for _ in 0..40 {
            s.add(Dur::from_millis(5));
        }
        assert_eq!(s.quantile_s(0.5), 0.0);
        assert!((s.quantile_s(0.9) / 5e-3 - 1.0).abs() < 0.07);
        assert_eq!(Sojourns::default().quantile_s(0.5), 0.0);
    }
}
