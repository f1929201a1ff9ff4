//! More-Start — Scharf, "Performance Evaluation of Fast Startup Congestion Control Schemes"
//! (ALGORITHMS.md §10.3): "the applications could explicitly choose a 'reasonable' initial rate
//! ... Unlike Quick-Start, this rate is just used without asking routers for approval, in
//! combination with a careful reaction to packet loss like Jump-Start."
//!
//! ```text
//! R0 = (L/MTU) · q                          # q: the application's rate (IP layer), MTU = L + H
//! after the handshake: cwnd = max(QS_cwnd, IW), QS_cwnd = R0 · RTT_syn in whole segments
//!                      (capped by the queued data); pace at R0
//! then as Jump-Start: cwnd stays while the first flight is paced out, then unpaced slow start
//! ```
//!
//! Parameters: `rate` (q, bit/s at the IP layer; [Scharf] Fig. 10 uses the path's 10 Mb/s) and the
//! header size `H` from the flow's TCP configuration. Loss handling as Jump-Start (see its NOTE on
//! the OPEN post-recovery window). Without a handshake RTT sample it is plain slow start.

use crate::startup::jump_start::PacedFlight;
use crate::startup::{RecoveryWindow, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, Dur};

/// Configuration of [`MoreStart`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoreStartConfig {
    /// The application's initial rate `q` in bit/s at the IP layer (payload plus headers).
    pub rate_bps: f64,
    /// Header bytes per segment `H` (MTU = MSS + H), to turn `q` into a payload rate.
    pub header: u64,
}

/// More-Start as a startup plug-in.
#[derive(Clone, Debug)]
pub struct MoreStart {
    cfg: MoreStartConfig,
    flight: PacedFlight,
}

impl MoreStart {
    /// A More-Start with `cfg`.
    pub fn new(cfg: MoreStartConfig) -> MoreStart {
        MoreStart { cfg, flight: PacedFlight::default() }
    }

    /// `R0 = (L/MTU)·q` in payload bytes per second.
    pub fn payload_rate(&self, mss: u64) -> f64 {
        self.cfg.rate_bps / 8.0 * mss as f64 / (mss + self.cfg.header) as f64
    }
}

impl StartupAlgorithm for MoreStart {
    fn on_handshake(&mut self, view: &CcView, rtt: Dur, queued: Option<u64>) -> StartupAction {
        let r0 = self.payload_rate(view.mss);
        // QS_cwnd = q·T/(MSS+H) segments, rounded down (RFC 4782's rule, §10.1), at least one.
        let segments = ((r0 * rtt.as_secs_f64() / view.mss as f64).floor() as u64).max(1);
        let d = queued.map_or(segments * view.mss, |q| q.min(segments * view.mss));
        self.flight.start(view, d, r0)
    }

    fn on_restart(&mut self, view: &CcView, rtt: Dur, queued: Option<u64>, snd_max: u64) -> StartupAction {
        // R0 for one RTT again, from the response's first byte.
        self.flight = PacedFlight::default();
        let r0 = self.payload_rate(view.mss);
        let segments = ((r0 * rtt.as_secs_f64() / view.mss as f64).floor() as u64).max(1);
        let d = queued.map_or(segments * view.mss, |q| q.min(segments * view.mss));
        self.flight.start_from(snd_max, d, r0, view.cwnd.max(d as f64))
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.flight.on_ack(view, ack)
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.flight.on_congestion();
    }

    // "Loss handling as Jump-Start" (ALGORITHMS.md §10.3).
    fn loss_ssthresh(&mut self, view: &CcView, ev: &CongestionEvent, retransmitted: u64) -> Option<f64> {
        self.flight.loss_ssthresh(view, ev, retransmitted)
    }

    fn after_recovery(&mut self, view: &CcView, retransmitted: u64) -> Option<RecoveryWindow> {
        self.flight.after_recovery(view, retransmitted)
    }
}


use crate::decl::{AlgorithmInfo, Param, Range};

/// `rate` of `startup = { algorithm = "more-start", ... }`.
pub const RATE: Param<f64> = Param::number("rate", "10000000", "q: initial rate in bit/s at the IP layer (Scharf's Fig. 10: the path's 10 Mb/s); positive").range(Range::Above(0.0));

/// The declaration of `more-start` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "more-start",
        role: "startup",
        summary: "More-Start: after the handshake pace the first RTT at an application-given rate q (window (L/MTU)·q·RTT_syn), then unpaced slow start (needs tcp.handshake = true)",
        source: "Scharf, fast startup schemes (ALGORITHMS.md §10.3)",
        params: &[RATE.info],
    },
    build: super::Build::Native(|p, cx| super::Startup::MoreStart(MoreStart::new(MoreStartConfig {
            rate_bps: p.get(&RATE),
            header: cx.header,
        }))),
    check: |_, cx, _| cx.require_handshake("more-start"),
    per_response: true,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{ack_bytes as ack, view, MSS};

    #[test]
    fn quick_start_example_window_85_segments_one_every_2_344ms() {
        // ALGORITHMS.md §10.1 example with H = 52 (MSS 1448, MTU 1500): q = 5.12 Mb/s, T = 200 ms.
        let mut ms = MoreStart::new(MoreStartConfig { rate_bps: 5.12e6, header: 52 });
        let v = CcView { mss: 1448, ..view(3.0 * 1448.0) };
        let a = ms.on_handshake(&v, Dur::from_millis(200), None);
        assert_eq!(a.set_cwnd, Some(85.0 * 1448.0));
        let interval = 1448.0 / a.pacing_rate.unwrap();
        assert!((interval - 0.0023437).abs() < 1e-6, "{interval}");
    }

    #[test]
    fn a_short_transfer_sends_only_its_data_at_the_given_rate() {
        let mut ms = MoreStart::new(MoreStartConfig { rate_bps: 8e6, header: 0 });
        let a = ms.on_handshake(&view(3000.0), Dur::from_millis(100), Some(20 * MSS));
        assert_eq!((a.set_cwnd, a.pacing_rate), (Some(20_000.0), Some(1e6)));
        assert_eq!(ms.on_ack(&view(20_000.0), &ack(MSS, 10 * MSS)), StartupAction::default());
        assert_eq!(ms.on_ack(&view(20_000.0), &ack(MSS, 20 * MSS)).pacing_rate, Some(0.0));
    }
}
