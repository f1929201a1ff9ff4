//! Initial-Start — Scharf (ALGORITHMS.md §10.4): "just increasing the initial congestion window to
//! a larger value, without any further modifications of the TCP congestion control".
//!
//! The window is the flow's `tcp.initial_window`: scenario resolution sets it from this plug-in's
//! `initial_window` parameter ([Scharf] §18.1: w = 83; w = 10 in Fig. 10), so the controller, the
//! idle restart (`min(IW, cwnd)`) and the results all see one initial window. The first flight
//! leaves back-to-back (unpaced) and the rest is RFC 5681 slow start.

use crate::startup::{SlowStart, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView};

/// Initial-Start: slow start from a large initial window set by the TCP configuration.
#[derive(Clone, Copy, Debug, Default)]
pub struct InitialStart;

impl StartupAlgorithm for InitialStart {
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        SlowStart::default().on_ack(view, ack)
    }
}

use crate::decl::{AlgorithmInfo, FlowContext, Param, ParamError, Params};

/// `initial_window` of `startup = { algorithm = "initial-start", ... }`.
pub const INITIAL_WINDOW: Param<u64> = Param::window("initial_window", "83pkt", "the initial window w (Scharf's IS: 83 segments; 10 in his Fig. 10); whole segments, sets tcp.initial_window (do not give both)");

/// The window is whole segments, 1 to 100 000.
fn check(p: &Params<'_>, cx: &FlowContext, _: &dyn Fn(&str) -> bool) -> Result<(), ParamError> {
    if !(1..=100_000).contains(&p.get(&INITIAL_WINDOW).div_ceil(cx.mss)) {
        return Err(ParamError::new("initial_window", "must be between 1 and 100000 segments"));
    }
    Ok(())
}

/// The declaration of `initial-start` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "initial-start",
        role: "startup",
        summary: "Initial-Start: slow start from a large initial window sent back-to-back; the parameter becomes tcp.initial_window",
        source: "Scharf, fast startup schemes (ALGORITHMS.md §10.4)",
        params: &[INITIAL_WINDOW.info],
    },
    build: super::Build::Native(|_, _| super::Startup::InitialStart(InitialStart)),
    check,
    per_response: false,
    router_approval: false,
    sets_initial_window: true,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};
