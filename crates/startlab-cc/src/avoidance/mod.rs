//! Congestion-avoidance plug-ins: linear growth after startup and the threshold after a loss.
//!
//! Each algorithm lives in its own file next to its declaration (`DECL`: name, summary, source,
//! typed parameters, how it is built), as the startup algorithms do; its parameters are keys of
//! the flow's `tcp` table. [`DECLS`] lists them: the registry, the scenario check and the
//! simulator's construction are derived from it.

mod cubic;
mod prague;
mod reno;

pub use cubic::{cube_root, Cubic, CubicConfig, SsthreshFrom};
pub use prague::{Prague, PragueConfig};
pub use reno::Reno;

use crate::decl::{AlgorithmInfo, FlowContext, Params};
use crate::{AckEvent, CcView, CongestionEvent, Time};

/// How an avoidance algorithm is declared, in its own file next to its state machine: what the
/// registry lists (its parameters are keys of the flow's `tcp` table) and how it is built from
/// them. The scenario check, `startlab algorithms`, the docs table and the simulator's
/// construction are derived from [`DECLS`].
#[derive(Clone, Copy, Debug)]
pub struct AvoidanceDecl {
    /// Name, summary, source and parameters.
    pub info: AlgorithmInfo,
    /// How the algorithm is built for these (checked) parameters on this flow.
    pub build: fn(&Params<'_>, &FlowContext) -> Avoidance,
    /// A scalable congestion control (RFC 9331 §4.3) that reads the CE-marked bytes of every ACK:
    /// its flow must send ECT(1) and get Accurate ECN feedback (`tcp.ecn = "l4s"`, RFC 9331
    /// §4.2), which the scenario check requires.
    pub needs_l4s: bool,
}

impl AvoidanceDecl {
    /// The algorithm for these (checked) parameters on this flow.
    pub fn instantiate(&self, params: &Params<'_>, cx: &FlowContext) -> Avoidance {
        (self.build)(params, cx)
    }
}

/// Every avoidance algorithm's declaration, in registry order.
pub static DECLS: &[&AvoidanceDecl] = &[&reno::DECL, &cubic::DECL, &prague::DECL];

/// The declared avoidance algorithm named `name`.
pub fn decl(name: &str) -> Option<&'static AvoidanceDecl> {
    DECLS.iter().copied().find(|d| d.info.name == name)
}

/// The built-in avoidance algorithms.
#[derive(Clone, Debug)]
pub enum Avoidance {
    /// Reno AIMD (RFC 5681).
    Reno(Reno),
    /// CUBIC (RFC 9438).
    Cubic(Cubic),
    /// Prague (draft-briscoe-iccrg-prague-congestion-control-04), L4S's scalable avoidance.
    Prague(Prague),
}

impl Avoidance {
    /// The name used in scenarios and results.
    pub fn name(&self) -> &'static str {
        match self {
            Avoidance::Reno(_) => reno::DECL.info.name,
            Avoidance::Cubic(_) => cubic::DECL.info.name,
            Avoidance::Prague(_) => prague::DECL.info.name,
        }
    }
    /// New cwnd (bytes) after an ACK in congestion avoidance.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> f64 {
        match self {
            Avoidance::Reno(r) => r.on_ack(view, ack),
            Avoidance::Cubic(c) => c.on_ack(view, ack),
            Avoidance::Prague(p) => p.on_ack(view, ack),
        }
    }
    /// ssthresh (bytes) after a congestion signal; the controller floors it at 2 SMSS.
    pub fn ssthresh_after_loss(&mut self, view: &CcView, ev: &CongestionEvent) -> f64 {
        match self {
            Avoidance::Reno(r) => r.ssthresh_after_loss(view, ev),
            Avoidance::Cubic(c) => c.ssthresh_after_loss(view, ev),
            Avoidance::Prague(p) => p.ssthresh_after_loss(view, ev),
        }
    }
    /// Notification after the controller applied a congestion signal.
    pub fn on_congestion(&mut self, _view: &CcView, ev: &CongestionEvent) {
        if let Avoidance::Prague(p) = self {
            p.on_congestion(ev);
        }
    }
    /// Every ACK the controller sees, in any phase (`in_avoidance`: not in slow start), before
    /// its growth is decided: Prague's EWMA of the CE-marked fraction (draft §2.4.1) runs here.
    pub fn on_feedback(&mut self, view: &CcView, ack: &AckEvent, in_avoidance: bool) {
        if let Avoidance::Prague(p) = self {
            p.on_feedback(view, ack, in_avoidance);
        }
    }
    /// ECN feedback at `now` is to change nothing (Prague's reduced RTT-dependence spaces its
    /// reductions at least a reference RTT apart, draft §2.4.4).
    pub fn suppresses_ecn(&self, now: Time) -> bool {
        match self {
            Avoidance::Prague(p) => p.suppresses_ecn(now),
            Avoidance::Reno(_) | Avoidance::Cubic(_) => false,
        }
    }
}

