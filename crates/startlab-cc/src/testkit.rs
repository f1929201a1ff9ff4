//! What the startup and avoidance algorithms' unit tests share (test builds only): a controller
//! over a plug-in, a scripted ACK, a round of ACKs, and a view of the window.

use crate::avoidance::{Avoidance, Reno};
use crate::startup::Startup;
use crate::{AckEvent, CcConfig, CcView, Controller, Phase, Ssthresh, Time};
use startlab_units::Dur;

/// The segment size of the scripted connections, bytes.
pub(crate) const MSS: u64 = 1000;

/// A controller over `startup` with Reno avoidance, an initial window of `iw` segments and
/// `ssthresh`; no cwnd validation, so scripted ACKs grow it.
pub(crate) fn controller(startup: Startup, iw: u64, ssthresh: Ssthresh) -> Controller {
    Controller::new(
        CcConfig {
            mss: MSS,
            initial_window: iw * MSS,
            initial_ssthresh: ssthresh,
            loss_window: MSS,
            cwnd_validation: false,
            linux_ss_clamp: false,
        },
        startup,
        Avoidance::Reno(Reno::default()),
    )
}

/// An ACK at `now_ms` covering `segments` full segments, cumulative point `ack_seq`.
pub(crate) fn ack(now_ms: u64, segments: u32, ack_seq: u64) -> AckEvent {
    AckEvent {
        now: Time(now_ms * 1_000_000),
        newly_acked: segments as u64 * MSS,
        ack_seq,
        snd_nxt: ack_seq,
        rtt: Some(Dur::from_millis(100)),
        flight_size: 0,
        cwnd_limited: true,
        acked_segments: segments,
        timer_triggered: false,
        delivered: ack_seq,
        rate_sample: None,
    }
}

/// Acknowledges one round: the whole window at its start, `per_ack` segments per ACK.
/// Returns the window at the end of the round in segments.
pub(crate) fn one_round(c: &mut Controller, round: u64, per_ack: u32, seq: &mut u64) -> f64 {
    let segments = (c.cwnd() / MSS as f64).floor() as u64;
    let mut left = segments;
    while left > 0 && c.phase() == Phase::SlowStart {
        let n = left.min(per_ack as u64) as u32;
        *seq += n as u64 * MSS;
        c.on_ack(&ack(round * 100, n, *seq));
        left -= n as u64;
    }
    c.cwnd() / MSS as f64
}

/// The view a plug-in gets of a window of `cwnd` bytes in the first round, ssthresh infinite and no
/// RTT sample yet; set other fields with struct update syntax (`CcView { round: 3, ..view(w) }`).
pub(crate) fn view(cwnd: f64) -> CcView {
    CcView { cwnd, ssthresh: Ssthresh::Infinite, mss: MSS, round: 0, min_rtt: None, new_round: false }
}

/// An ACK at time 0 covering `acked` bytes in all (cumulative point `acked`), with SND.NXT at
/// `snd_nxt` and a 100 ms RTT sample: the first ACKs after a handshake.
pub(crate) fn ack_bytes(acked: u64, snd_nxt: u64) -> AckEvent {
    AckEvent {
        now: Time(0),
        newly_acked: acked,
        ack_seq: acked,
        snd_nxt,
        rtt: Some(Dur::from_millis(100)),
        flight_size: 0,
        cwnd_limited: true,
        acked_segments: 1,
        timer_triggered: false,
        delivered: acked,
        rate_sample: None,
    }
}
