//! Reno congestion avoidance — RFC 5681 §3.1, equations (3) and (4).
//!
//! "cwnd += SMSS*SMSS/cwnd" on every ACK that acknowledges new data (the per-ACK form, with the
//! fractional part kept), and after a loss "ssthresh = max (FlightSize / 2, 2*SMSS)".

use crate::{AckEvent, CcView, CongestionEvent};

/// Reno AIMD.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl Reno {
    /// Scenario name.
    pub const NAME: &'static str = "reno";

    /// RFC 5681 eq. (3): about one SMSS per window of ACKs.
    pub fn on_ack(&mut self, view: &CcView, _ack: &AckEvent) -> f64 {
        let mss = view.mss as f64;
        view.cwnd + mss * mss / view.cwnd
    }

    /// RFC 5681 eq. (4): half the flight size (the controller applies the 2 SMSS floor).
    pub fn ssthresh_after_loss(&mut self, _view: &CcView, ev: &CongestionEvent) -> f64 {
        ev.flight_size as f64 / 2.0
    }
}
