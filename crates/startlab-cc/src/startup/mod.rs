//! Startup plug-ins: how the window grows while `cwnd < ssthresh`, and whether startup ends early.
//!
//! Each algorithm lives in its own file and is dispatched through the [`Startup`] enum. A plug-in
//! owns only its private state, sees a read-only [`CcView`], and *returns* a [`StartupAction`]; it
//! never writes cwnd or ssthresh.

mod slow_start;

pub use slow_start::SlowStart;

use crate::{AckEvent, CcView, ExitReason};

/// What a startup plug-in decided on one ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StartupAction {
    /// Bytes to add to cwnd.
    pub increase: f64,
    /// End startup now with this reason (ssthresh becomes the current cwnd).
    pub exit: Option<ExitReason>,
}

/// The built-in startup algorithms.
#[derive(Clone, Debug)]
pub enum Startup {
    /// Standard slow start (RFC 5681).
    SlowStart(SlowStart),
}

impl Startup {
    /// The name used in scenarios and results.
    pub fn name(&self) -> &'static str {
        match self {
            Startup::SlowStart(_) => SlowStart::NAME,
        }
    }

    /// An ACK that advanced `SND.UNA` while in slow start.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        match self {
            Startup::SlowStart(s) => s.on_ack(view, ack),
        }
    }
}
