//! Random workloads: flow sizes drawn from a distribution and Poisson arrival times.
//!
//! Every draw comes from a stream of [`crate::rng`], so a workload is a pure function of the seed
//! and the component index.

use rand::RngExt as _;
use rand_pcg::Pcg64;
use startlab_units::{Dur, Time};

/// A distribution of transfer sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// Always this many bytes.
    Fixed(u64),
    /// Exponential with this mean (bytes), rounded up to a whole byte.
    Exponential {
        /// Mean in bytes.
        mean: f64,
    },
    /// Pareto with shape `shape`, truncated at `cutoff` bytes (draws above it are redrawn, i.e.
    /// the bounded Pareto law); the scale is chosen so that the *truncated* law has mean `mean`.
    Pareto {
        /// Mean of the truncated law (bytes).
        mean: f64,
        /// Shape α (> 0).
        shape: f64,
        /// Largest size (bytes).
        cutoff: f64,
        /// Scale x_m solved from the mean ([`pareto_scale`]).
        scale: f64,
    },
    /// Zipf over ranks `1..=n` with exponent `s`: size = rank × `unit` bytes, `P(k) ∝ k^-s`.
    Zipf {
        /// Cumulative probabilities of ranks 1..=n.
        cdf: Vec<f64>,
        /// Bytes per rank.
        unit: u64,
    },
    /// Uniform on the whole numbers of bytes in `[min, max]`.
    Uniform {
        /// Bytes.
        min: u64,
        /// Bytes.
        max: u64,
    },
    /// `exp(mu + sigma·Z)` bytes with Z standard normal, rounded up.
    Lognormal {
        /// Mean of ln(bytes).
        mu: f64,
        /// Standard deviation of ln(bytes).
        sigma: f64,
    },
    /// Inverse of a piecewise-linear CDF through `(bytes, probability)` points; below the first
    /// point's probability the first size.
    Empirical {
        /// Non-decreasing points, the last probability 1.
        points: Vec<(u64, f64)>,
    },
}

impl SizeDist {
    /// A Pareto law with the given mean, shape and cutoff; `None` if no scale gives that mean
    /// (the mean must lie strictly between 0 and the cutoff).
    pub fn pareto(mean: f64, shape: f64, cutoff: f64) -> Option<SizeDist> {
        let scale = pareto_scale(mean, shape, cutoff)?;
        Some(SizeDist::Pareto { mean, shape, cutoff, scale })
    }

    /// A Zipf law over `n` ranks of `unit` bytes with exponent `s`.
    pub fn zipf(n: u64, s: f64, unit: u64) -> SizeDist {
        let mut cdf = Vec::with_capacity(n as usize);
        let mut total = 0.0;
        for k in 1..=n {
            total += (k as f64).powf(-s);
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        SizeDist::Zipf { cdf, unit }
    }

    /// The mean of the law in bytes (exact, for tests and load computations).
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(b) => *b as f64,
            SizeDist::Exponential { mean } => *mean,
            SizeDist::Pareto { shape, cutoff, scale, .. } => truncated_pareto_mean(*scale, *shape, *cutoff),
            SizeDist::Zipf { cdf, unit } => {
                let mut prev = 0.0;
                let mut m = 0.0;
                for (i, c) in cdf.iter().enumerate() {
                    m += (c - prev) * (i + 1) as f64;
                    prev = *c;
                }
                m * *unit as f64
            }
            SizeDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            SizeDist::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            SizeDist::Empirical { points } => {
                let mut m = points[0].0 as f64 * points[0].1;
                for w in points.windows(2) {
                    m += (w[1].1 - w[0].1) * (w[0].0 as f64 + w[1].0 as f64) / 2.0;
                }
                m
            }
        }
    }

    /// One size in bytes (at least 1).
    pub fn sample(&self, rng: &mut Pcg64) -> u64 {
        let x = match self {
            SizeDist::Fixed(b) => return (*b).max(1),
            SizeDist::Exponential { mean } => -mean * open01(rng).ln(),
            SizeDist::Pareto { shape, cutoff, scale, .. } => {
                // Inverse CDF of the bounded Pareto on [x_m, c].
                let u = open01(rng);
                let tail = (scale / cutoff).powf(*shape);
                scale / (1.0 - u * (1.0 - tail)).powf(1.0 / shape)
            }
            SizeDist::Zipf { cdf, unit } => {
                let u: f64 = rng.random();
                let rank = cdf.partition_point(|&c| c < u) + 1;
                return rank.min(cdf.len()) as u64 * unit;
            }
            SizeDist::Uniform { min, max } => return rng.random_range(*min..=*max).max(1),
            SizeDist::Lognormal { mu, sigma } => {
                // Box-Muller from two uniform draws.
                let (u1, u2) = (open01(rng), rng.random::<f64>());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (mu + sigma * z).exp()
            }
            SizeDist::Empirical { points } => {
                let u = open01(rng);
                let i = points.partition_point(|&(_, p)| p < u).min(points.len() - 1);
                if i == 0 {
                    points[0].0 as f64
                } else {
                    let ((b0, p0), (b1, p1)) = (points[i - 1], points[i]);
                    b0 as f64 + (u - p0) / (p1 - p0) * (b1 as f64 - b0 as f64)
                }
            }
        };
        (x.ceil() as u64).max(1)
    }
}

/// A uniform draw in (0, 1].
fn open01(rng: &mut Pcg64) -> f64 {
    1.0 - rng.random::<f64>()
}

/// Mean of the Pareto law with scale `xm` and shape `a`, truncated to `[xm, c]`.
fn truncated_pareto_mean(xm: f64, a: f64, c: f64) -> f64 {
    let norm = 1.0 - (xm / c).powf(a);
    if (a - 1.0).abs() < 1e-12 {
        xm * (c / xm).ln() / norm
    } else {
        a * xm.powf(a) * (xm.powf(1.0 - a) - c.powf(1.0 - a)) / ((a - 1.0) * norm)
    }
}

/// The scale `x_m` for which the Pareto law of shape `a` truncated at `c` has mean `mean`.
pub fn pareto_scale(mean: f64, a: f64, c: f64) -> Option<f64> {
    if !(mean > 0.0 && mean < c && a > 0.0 && c.is_finite()) {
        return None;
    }
    // The truncated mean grows monotonically with x_m from 0 (x_m -> 0) to c (x_m -> c).
    let (mut lo, mut hi) = (mean * 1e-9, c);
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if truncated_pareto_mean(mid, a, c) < mean {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo * hi).sqrt())
}

/// Arrival times of a Poisson process of `rate` per second in `[start, stop)`, at most `count`.
pub fn poisson_arrivals(rate: f64, start: Time, stop: Time, count: Option<u64>, rng: &mut Pcg64) -> Vec<Time> {
    let mut out = Vec::new();
    let mut t = start;
    loop {
        if count.is_some_and(|n| out.len() as u64 >= n) {
            break;
        }
        t += Dur::from_secs_f64(-open01(rng).ln() / rate);
        if t >= stop {
            break;
        }
        out.push(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Component};

    fn sample_mean(d: &SizeDist, n: usize) -> (f64, f64) {
        let mut rng = stream(7, Component::FlowStart, 0);
        let xs: Vec<f64> = (0..n).map(|_| d.sample(&mut rng) as f64).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        (m, (var / n as f64).sqrt())
    }

    #[test]
    fn exponential_and_pareto_means_hold_within_sampling_error() {
        for d in [
            SizeDist::Exponential { mean: 50_000.0 },
            SizeDist::pareto(125_000.0, 1.1, 10e6).unwrap(),
            SizeDist::pareto(10_000.0, 1.1, 10e6).unwrap(),
            SizeDist::pareto(20_000.0, 1.0, 1e6).unwrap(),
            SizeDist::zipf(1000, 1.2, 1000),
            SizeDist::Uniform { min: 100_000, max: 1_000_000 },
            // SURGE's body of file sizes.
            SizeDist::Lognormal { mu: 9.357, sigma: 1.318 },
            SizeDist::Empirical { points: vec![(1000, 0.2), (1000, 0.5), (5000, 0.9), (100_000, 1.0)] },
        ] {
            let (m, se) = sample_mean(&d, 200_000);
            let want = d.mean();
            // Four standard errors: fails by chance about once in 16 000 seeds, and the seed is fixed.
            assert!((m - want).abs() < 4.0 * se, "{d:?}: sample mean {m} vs {want} (se {se})");
        }
    }

    #[test]
    fn uniform_lognormal_and_empirical_laws_have_their_shape() {
        let mut rng = stream(3, Component::FlowStart, 0);
        let u = SizeDist::Uniform { min: 100, max: 103 };
        let mut seen = [0u32; 4];
        for _ in 0..4000 {
            seen[(u.sample(&mut rng) - 100) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (900..1100).contains(&n)), "every size of [min, max] about equally often: {seen:?}");
        // Lognormal: the median is exp(mu).
        let l = SizeDist::Lognormal { mu: 9.357, sigma: 1.318 };
        let mut xs: Vec<u64> = (0..20_001).map(|_| l.sample(&mut rng)).collect();
        xs.sort_unstable();
        let median = xs[10_000] as f64;
        assert!((median / 9.357f64.exp() - 1.0).abs() < 0.05, "median {median}");
        // Empirical: 50 % exactly 1000 B (a step), the rest spread linearly between the points.
        let e = SizeDist::Empirical { points: vec![(1000, 0.2), (1000, 0.5), (5000, 0.9), (100_000, 1.0)] };
        let draws: Vec<u64> = (0..10_000).map(|_| e.sample(&mut rng)).collect();
        let at_1000 = draws.iter().filter(|&&x| x == 1000).count() as f64 / 1e4;
        let above_5000 = draws.iter().filter(|&&x| x > 5000).count() as f64 / 1e4;
        assert!((at_1000 - 0.5).abs() < 0.03 && (above_5000 - 0.1).abs() < 0.02, "{at_1000} {above_5000}");
        assert!(draws.iter().all(|&x| (1000..=100_000).contains(&x)));
    }

    #[test]
    fn the_pareto_scale_gives_the_requested_truncated_mean_and_respects_the_cutoff() {
        let d = SizeDist::pareto(125_000.0, 1.1, 10e6).unwrap();
        assert!((d.mean() - 125_000.0).abs() < 1e-6 * 125_000.0);
        let mut rng = stream(1, Component::FlowStart, 3);
        assert!((0..100_000).all(|_| d.sample(&mut rng) <= 10_000_000));
        assert!(SizeDist::pareto(10e6, 1.1, 10e6).is_none(), "the mean must lie below the cutoff");
    }

    #[test]
    fn poisson_arrivals_have_the_configured_rate_and_exponential_gaps() {
        let mut rng = stream(3, Component::FlowStart, 9);
        let t = poisson_arrivals(20.0, Time::ZERO, Time::ZERO + Dur::from_secs(1000), None, &mut rng);
        // 20 000 expected; Poisson sd = sqrt(20 000) = 141.
        assert!((t.len() as f64 - 20_000.0).abs() < 4.0 * 141.0, "{} arrivals", t.len());
        // Exponential gaps: the coefficient of variation is 1.
        let gaps: Vec<f64> = t.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / m - 1.0).abs() < 0.03, "cv {}", sd / m);
        let capped = poisson_arrivals(20.0, Time::ZERO, Time::ZERO + Dur::from_secs(1000), Some(5), &mut rng);
        assert_eq!(capped.len(), 5);
    }
}
