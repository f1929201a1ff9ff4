//! Time series with a memory bound: every point up to [`FULL_POINTS`], then at most one point per
//! [`THIN_NS`] — the startup (the first tens of thousands of packets) at full resolution, a long
//! transfer's tail thinned, so that a 1 GB capture's series stay a few megabytes.

use serde::Serialize;

/// Points kept at full resolution per series.
pub const FULL_POINTS: usize = 100_000;
/// After [`FULL_POINTS`], the least time between two kept points, ns (1 ms).
pub const THIN_NS: u64 = 1_000_000;

/// One series: times (ns since the capture's first frame) and values.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Series<V: Copy + Serialize> {
    /// Times, ns since the capture's first frame.
    pub t: Vec<u64>,
    /// Values.
    pub v: Vec<V>,
}

impl<V: Copy + Serialize> Series<V> {
    /// Adds a point, unless the series is past [`FULL_POINTS`] and its last point is less than
    /// [`THIN_NS`] old. Returns whether it was kept.
    pub fn push(&mut self, t: u64, v: V) -> bool {
        if self.t.len() >= FULL_POINTS && self.t.last().is_some_and(|&last| t < last + THIN_NS) {
            return false;
        }
        self.t.push(t);
        self.v.push(v);
        true
    }

    /// Number of points kept.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// True when no point was kept.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
}
