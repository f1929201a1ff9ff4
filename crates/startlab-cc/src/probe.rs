//! What a controller records for the simulator's `[trace] rtt` and `[trace] startup`.

use startlab_units::{Dur, Time};

/// What a controller records for the simulator's traces, taken by the simulator after each event.
#[derive(Debug, Default)]
pub struct Probe {
    /// Record RTT samples.
    pub rtt: bool,
    /// Record the startup algorithm's signals after every ACK in startup.
    pub startup: bool,
    /// RTT samples: when, the sample, the cumulative ACK that brought it, the minimum RTT after it.
    pub rtt_rows: Vec<(Time, Dur, u64, Dur)>,
    /// Startup rows: when, and whether this ACK ended startup; each row's signal values are the
    /// next `signals().len()` entries of `values`.
    pub startup_rows: Vec<(Time, bool)>,
    /// The signal values of `startup_rows`, row after row.
    pub values: Vec<f64>,
}
