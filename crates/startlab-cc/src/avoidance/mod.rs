//! Congestion-avoidance plug-ins: linear growth after startup and the threshold after a loss.

mod cubic;
mod reno;

pub use cubic::{cube_root, Cubic, CubicConfig, SsthreshFrom};
pub use reno::Reno;

use crate::decl::AlgorithmInfo;
use crate::{AckEvent, CcView, CongestionEvent};

/// Every avoidance algorithm's registry entry, declared next to its state machine.
pub static INFOS: &[&AlgorithmInfo] = &[&reno::INFO, &cubic::INFO];

/// The built-in avoidance algorithms.
#[derive(Clone, Debug)]
pub enum Avoidance {
    /// Reno AIMD (RFC 5681).
    Reno(Reno),
    /// CUBIC (RFC 9438).
    Cubic(Cubic),
}

impl Avoidance {
    /// The name used in scenarios and results.
    pub fn name(&self) -> &'static str {
        match self {
            Avoidance::Reno(_) => Reno::NAME,
            Avoidance::Cubic(_) => Cubic::NAME,
        }
    }
    /// New cwnd (bytes) after an ACK in congestion avoidance.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> f64 {
        match self {
            Avoidance::Reno(r) => r.on_ack(view, ack),
            Avoidance::Cubic(c) => c.on_ack(view, ack),
        }
    }
    /// ssthresh (bytes) after a congestion signal; the controller floors it at 2 SMSS.
    pub fn ssthresh_after_loss(&mut self, view: &CcView, ev: &CongestionEvent) -> f64 {
        match self {
            Avoidance::Reno(r) => r.ssthresh_after_loss(view, ev),
            Avoidance::Cubic(c) => c.ssthresh_after_loss(view, ev),
        }
    }
    /// Notification after the controller applied a congestion signal.
    pub fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {}
}
