//! The pacer (ALGORITHMS.md §0.6): each data segment pushes the earliest departure of the next
//! one by `size / rate`, whoever sets the rate (a startup plug-in, or the sender's Linux-like
//! default). It knows nothing of sequence numbers, only times and payload sizes, so any transport
//! that releases packets through a window can use it as it is.

use startlab_units::{Dur, Time};

/// Pacing state: when the next segment may leave, and whether the sender is held until then.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pacer {
    /// Earliest departure of the next data segment (§0.6 `next_send_time`).
    next_send: Time,
    /// Transmission is held by the pacer until this time.
    wait: Option<Time>,
}

impl Pacer {
    /// §0.6: "A segment may leave only if now >= next_send_time and the window allows it." With
    /// a rate in force (`paced`) and the time not come, the sender is held: true, and the release
    /// time is armed as a timer.
    pub fn holds(&mut self, now: Time, paced: bool) -> bool {
        if now < self.next_send && paced {
            self.wait = Some(self.next_send);
            return true;
        }
        false
    }

    /// A segment of `len` payload bytes leaves at `now` with `rate` (bytes per second) in force:
    /// `next_send_time = max(next_send_time, t) + size / rate`.
    pub fn on_send(&mut self, now: Time, len: u32, rate: Option<f64>) {
        if let Some(rate) = rate {
            self.next_send = self.next_send.max(now) + Dur::from_secs_f64(len as f64 / rate);
        }
    }

    /// The next segment leaves no earlier than `t` (a startup plug-in's pacing start).
    pub fn delay_to(&mut self, t: Time) {
        self.next_send = self.next_send.max(t);
    }

    /// The timer fired at `now`: a hold due by then is released (the driver polls next).
    pub fn on_timer(&mut self, now: Time) {
        if self.wait.is_some_and(|t| t <= now) {
            self.wait = None;
        }
    }

    /// The release time of the hold in force, for the driver's timer.
    pub fn deadline(&self) -> Option<Time> {
        self.wait
    }
}
