//! startlab's congestion control inside a real QUIC stack: [`StartlabController`] runs any
//! startlab startup + avoidance (the `startlab_cc::Controller` the simulator builds for a QUIC
//! flow, `startlab_sim::flow_controller`) as [quinn]'s congestion controller, so that quinn and
//! the simulator can be compared running the same algorithm (docs/REAL.md, "quinn").
//!
//! - [`controller`]: the adapter from quinn's per-packet calls to startlab's per-ACK events.
//! - [`transfer`]: a one-connection server and client (the `startlab-quinn` binary) with their
//!   JSON reports.
//!
//! [quinn]: https://docs.rs/quinn

pub mod controller;
pub mod transfer;

pub use controller::{ControllerHandle, ControllerTrace, CwndSample, StartlabController, StartlabFactory};
