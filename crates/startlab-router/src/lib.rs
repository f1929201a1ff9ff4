//! The real-path testbed's router (issue 15, docs/TESTBED.md): a user-space process in the router
//! network namespace that forwards live IPv4 frames between two interfaces through the scenario's
//! bottleneck, one [`startlab_sim::net::Channel`] per direction — the simulator's own queue code,
//! so rate (serialisation), drop-tail in packets or bytes, RED/ECN and the `[[impairments]]` of
//! the bottleneck behave exactly as in a simulation run with the same seed.
//!
//! Frames are read and written with `AF_PACKET` sockets (pnet_datalink). Each direction has a
//! reader thread — it timestamps a frame on arrival, offers it to the channel (which decides at
//! once whether it is dropped, and if not when it reaches the far end) and files it by release
//! time — and a writer thread that sleeps until the earliest release, rewrites the Ethernet
//! addresses and the IP TTL (and CE when RED marked it) and sends it. Every drop is logged with
//! its time; every release is timed against its schedule (the *lateness*; a run whose worst
//! lateness exceeds [`LATE_LIMIT`] is flagged by the caller).
//!
//! Time is `CLOCK_MONOTONIC`, the clock of `time.monotonic()` and of the kernel's trace clock
//! `mono`, so the router's drop log lines up with the endpoints' records; the channels see it
//! relative to the router's start.

#![allow(
    clippy::disallowed_methods,
    reason = "a real-time router: the determinism contract (no wall clocks) is for simulation crates"
)]

mod plan;
mod run;

pub use plan::{plan, PathSummary, Plan};
pub use run::{run, CaptureSetup, DirectionReport, DropRecord, Link, RouterError, RouterReport, RouterSetup};

/// Releases later than this are "late": the path was not emulated faithfully then.
pub const LATE_LIMIT: startlab_units::Dur = startlab_units::Dur(1_000_000);
