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
        SlowStart.on_ack(view, ack)
    }
}
