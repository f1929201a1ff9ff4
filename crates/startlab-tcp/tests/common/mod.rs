//! The scripted sender the integration tests drive (no simulator: the test is the driver).

#![allow(dead_code)]

use startlab_cc::avoidance::{Avoidance, Reno};
use startlab_cc::startup::{SlowStart, Startup};
use startlab_cc::{CcConfig, Controller, Ssthresh};
use startlab_tcp::{EcnMode, Recovery, RtoConfig, Sender, SenderConfig};

pub const MSS: u64 = 1000;

/// A Reno sender in congestion avoidance at a steady window of `cwnd_pkts` segments (ssthresh =
/// the initial window), an infinite transfer, started at time 0.
pub fn build(recovery: Recovery, cwnd_pkts: u64, limited_transmit: bool, pacing: bool, ecn: bool) -> Sender {
    build_ecn(recovery, cwnd_pkts, limited_transmit, pacing, if ecn { EcnMode::Classic } else { EcnMode::Off })
}

/// As [`build`], with ECN mode `ecn`.
pub fn build_ecn(recovery: Recovery, cwnd_pkts: u64, limited_transmit: bool, pacing: bool, ecn: EcnMode) -> Sender {
    let cc = Controller::new(
        CcConfig {
            mss: MSS,
            initial_window: cwnd_pkts * MSS,
            // ssthresh = initial window: the sender starts in congestion avoidance with a steady window.
            initial_ssthresh: Ssthresh::Bytes((cwnd_pkts * MSS) as f64),
            loss_window: MSS,
            cwnd_validation: false,
            linux_ss_clamp: false,
        },
        Startup::SlowStart(SlowStart::default()),
        Avoidance::Reno(Reno::default()),
    );
    let mut s = Sender::new(
        SenderConfig {
            mss: MSS as u32,
            size: None,
            recovery,
            rto: RtoConfig::default(),
            limited_transmit,
            dupthresh: 3,
            handshake: false,
            newreno_impatient: true,
            pacing,
            quick_start: None,
            app_limited: false,
            idle_restart: startlab_tcp::IdleRestart::Rfc5681,
            startup_after_idle: false,
            startup_min_response: 0,
            ecn,
        },
        cc,
    );
    s.start(startlab_units::Time::ZERO);
    s
}

