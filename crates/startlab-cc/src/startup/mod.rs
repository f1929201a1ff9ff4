//! Startup plug-ins: how the window grows while `cwnd < ssthresh`, and whether startup ends early.
//!
//! Each algorithm lives in its own file, implements [`StartupAlgorithm`] and is listed once in the
//! `startups!` table below, which generates the [`Startup`] enum and its dispatch. A plug-in owns
//! only its private state, sees a read-only [`CcView`], and *returns* a [`StartupAction`]; it never
//! writes cwnd or ssthresh. Time comes in with each event; plug-ins read no clock.

mod slow_start;

pub use slow_start::SlowStart;

use crate::{AckEvent, CcView, CongestionEvent, ExitReason};

/// What a startup plug-in decided on one ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StartupAction {
    /// Bytes to add to cwnd (suspended by the controller while the sender is not cwnd-limited).
    pub increase: f64,
    /// Replace cwnd (bytes) after the increase, e.g. Vegas shrinking the window when it exits.
    pub set_cwnd: Option<f64>,
    /// Set ssthresh (bytes) without ending startup by itself (e.g. Hoe's packet-pair estimate);
    /// startup then ends normally once `cwnd >= ssthresh`.
    pub set_ssthresh: Option<f64>,
    /// End startup now with this reason; ssthresh becomes `set_ssthresh` if given, else cwnd.
    pub exit: Option<ExitReason>,
}

impl StartupAction {
    /// Grow by `bytes`, nothing else.
    pub fn grow(bytes: f64) -> Self {
        StartupAction { increase: bytes, ..Self::default() }
    }
    /// End startup with `reason` (ssthresh = cwnd).
    pub fn exit(reason: ExitReason) -> Self {
        StartupAction { exit: Some(reason), ..Self::default() }
    }
}

/// The interface every startup algorithm implements. Only `on_ack` is required.
pub trait StartupAlgorithm: std::fmt::Debug {
    /// An ACK that advanced `SND.UNA` while in slow start. `view.new_round` is true on the ACK that
    /// ended a round (ALGORITHMS.md §0.3); the round counter has already advanced.
    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction;

    /// A congestion signal arrived (after which the controller leaves startup).
    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {}
}

macro_rules! startups {
    ($($(#[$doc:meta])* $variant:ident($ty:ty) = $name:literal,)*) => {
        /// The built-in startup algorithms.
        #[derive(Debug)]
        pub enum Startup {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Startup {
            /// Every algorithm's scenario name, in registry order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The name used in scenarios and results.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Startup::$variant(_) => $name,)*
                }
            }

            /// The plug-in behind the enum.
            fn inner(&mut self) -> &mut dyn StartupAlgorithm {
                match self {
                    $(Startup::$variant(a) => a,)*
                }
            }
        }
    };
}

startups! {
    /// Standard slow start (RFC 5681).
    SlowStart(SlowStart) = "slow-start",
}

impl Startup {
    /// Dispatches an ACK.
    pub fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.inner().on_ack(view, ack)
    }
    /// Dispatches a congestion signal.
    pub fn on_congestion(&mut self, view: &CcView, ev: &CongestionEvent) {
        self.inner().on_congestion(view, ev)
    }
}
