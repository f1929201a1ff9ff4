//! What the startup and avoidance algorithms' unit tests share (test builds only): a controller
//! over a plug-in, a scripted ACK, a round of ACKs, and a view of the window.

use crate::avoidance::{Avoidance, Reno};
use crate::startup::Startup;
use crate::{AckEvent, CcConfig, CcView, Controller, ExitReason, Phase, Ssthresh, Time};
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
        ce_bytes: 0,
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
        ce_bytes: 0,
    }
}

/// A scripted sender over a [`Controller`]: always cwnd-limited, one ACK per segment unless
/// told otherwise, and after every ACK it fills the window (`SND.NXT = SND.UNA + cwnd`).
pub(crate) struct Sender {
    pub(crate) c: Controller,
    una: u64,
    nxt: u64,
}

impl Sender {
    /// A flow whose initial window of `iw` segments has just left (round 1 begins).
    pub(crate) fn new(startup: Startup, iw: u64) -> Sender {
        let cfg = CcConfig {
            mss: MSS,
            initial_window: iw * MSS,
            initial_ssthresh: Ssthresh::Infinite,
            loss_window: MSS,
            cwnd_validation: false,
            linux_ss_clamp: false,
        };
        let mut c = Controller::new(cfg, startup, Avoidance::Reno(Reno::default()));
        c.on_first_send(iw * MSS);
        Sender { c, una: 0, nxt: iw * MSS }
    }

    /// Segments sent and not yet acknowledged: the next round's ACKs.
    pub(crate) fn flight(&self) -> u64 {
        (self.nxt - self.una) / MSS
    }

    /// cwnd in segments.
    pub(crate) fn cwnd(&self) -> f64 {
        self.c.cwnd() / MSS as f64
    }

    /// An ACK for `segments` segments at `t`, with RTT sample `rtt`.
    pub(crate) fn ack_n(&mut self, t: Time, rtt: Option<Dur>, segments: u64) {
        self.una += segments * MSS;
        self.c.on_ack(&flow_ack(t, rtt, segments, self.una, self.nxt));
        let window = (self.c.cwnd() as u64 / MSS) * MSS;
        self.nxt = self.nxt.max(self.una + window);
    }

    /// The ACKs of the whole flight: the `i`-th arrives at `start + i·spacing` with RTT sample
    /// `rtt(i)`. Returns the index of the ACK after which startup ended, if it did.
    pub(crate) fn flight_acks(&mut self, start: Time, spacing: Dur, rtt: impl Fn(u64) -> Option<Dur>) -> Option<u64> {
        let n = self.flight();
        for i in 0..n {
            self.ack_n(start + Dur(i * spacing.as_nanos()), rtt(i), 1);
            if self.c.phase() != Phase::SlowStart {
                return Some(i);
            }
        }
        None
    }

    /// The recorded exit: reason and cwnd in segments.
    pub(crate) fn exit(&self) -> Option<(ExitReason, f64)> {
        self.c.startup_exit().map(|e| (e.reason, e.cwnd / MSS as f64))
    }
}

/// `x` milliseconds.
pub(crate) fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// The instant `x` milliseconds after the start.
pub(crate) fn at_ms(x: u64) -> Time {
    Time(x * 1_000_000)
}

/// The ACK of `segments` full segments at `t` on a scripted flow that has `una` bytes
/// acknowledged (this ACK included) and `nxt` sent: cwnd-limited, one ACK per `segments`.
pub(crate) fn flow_ack(t: Time, rtt: Option<Dur>, segments: u64, una: u64, nxt: u64) -> AckEvent {
    AckEvent {
        now: t,
        newly_acked: segments * MSS,
        ack_seq: una,
        snd_nxt: nxt,
        rtt,
        flight_size: nxt - una,
        cwnd_limited: true,
        acked_segments: segments as u32,
        timer_triggered: false,
        delivered: una,
        rate_sample: None,
        ce_bytes: 0,
    }
}
