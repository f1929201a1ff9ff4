//! Jump-Start — Liu, Allman, Jin, Wang, "Congestion Control Without a Startup Phase", PFLDnet 2007;
//! as summarised and modelled by Scharf (ALGORITHMS.md §10.2, §18.1).
//!
//! "The basic idea is to play out the queued application data during the first RTT using rate
//! pacing" ([Scharf]). With `D = min(queued application data, u)` (whole segments when capped):
//!
//! ```text
//! after the 3-way handshake: cwnd = max(D, IW); pace the D bytes evenly over RTT_syn
//! while the Jump-Start flight is still being paced out: cwnd stays
//! once all D bytes have left: stop pacing; continue in slow start from cwnd (ssthresh unchanged)
//! on loss of Jump-Start data: standard recovery, counting the segments R retransmitted in it;
//!     at its end cwnd = ssthresh = max((D − R)/2, 2) segments ("half of what was delivered")
//! on a timeout while Jump-Start data is unacknowledged: ssthresh = max((D − R)/2, 2) segments
//! ```
//!
//! The plug-in learns `RTT_syn` and the queued data from [`StartupAlgorithm::on_handshake`], which
//! the TCP sender calls when the SYN-ACK of a never-retransmitted SYN arrives. Without that call
//! (no handshake, or a retransmitted SYN: Karn gives no sample) it is plain RFC 5681 slow start.
//!
//! NOTE (ALGORITHMS.md §10.2 / §20 item 14, OPEN in the sources): a loss counts as a loss of
//! Jump-Start data when it is detected while the cumulative ACK point is still inside the first
//! D bytes (the sender cannot tell which segment a duplicate ACK reports without SACK, and this
//! also covers SACK). `R` counts every segment retransmitted from the congestion signal to the end
//! of recovery, Jump-Start data or not, because all of it was sent into the same overload. During
//! recovery the window is the recovery module's (ssthresh from FlightSize, as after any loss); the
//! rule replaces it when recovery ends. A loss after the first D bytes were acknowledged is an
//! ordinary slow-start loss.
//!
//! Parameter: `u`, the cap on the first flight (bytes; [Scharf]: 64 KiB).

use crate::startup::{RecoveryWindow, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, Dur};

/// The first paced flight shared by Jump-Start and More-Start: it ends once all its bytes left.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PacedFlight {
    /// The flight's first byte (0, or where a response's flight starts after a restart).
    from: u64,
    /// Sequence number (data bytes from 0) at which the paced flight ends, once set.
    end: Option<u64>,
    /// The paced flight is over (all sent, or a congestion signal): plain slow start from here.
    done: bool,
    /// Highest cumulative ACK point seen.
    una: u64,
    /// Bytes retransmitted on the connection when a loss of first-flight data was signalled; the
    /// post-recovery rule is pending while set.
    rtx_at_loss: Option<u64>,
}

impl PacedFlight {
    /// Starts a paced flight of `bytes` (> 0) at `rate` bytes/s after the handshake.
    pub(crate) fn start(&mut self, view: &CcView, bytes: u64, rate: f64) -> StartupAction {
        if self.done || self.end.is_some() || bytes == 0 || !(rate > 0.0 && rate.is_finite()) {
            return StartupAction::default();
        }
        self.end = Some(bytes);
        StartupAction { set_cwnd: Some(view.cwnd.max(bytes as f64)), pacing_rate: Some(rate), ..StartupAction::default() }
    }

    /// Starts a paced flight of `bytes` (> 0) at `rate` bytes/s whose first byte is `from` (data
    /// bytes counted from 0) with the window `cwnd`: Quick-Start paces a window that may follow data
    /// already sent (a request carried by the first data segment instead of the SYN).
    pub(crate) fn start_from(&mut self, from: u64, bytes: u64, rate: f64, cwnd: f64) -> StartupAction {
        if self.done || self.end.is_some() || bytes == 0 || !(rate > 0.0 && rate.is_finite()) {
            return StartupAction::default();
        }
        self.from = from;
        self.end = Some(from + bytes);
        StartupAction { set_cwnd: Some(cwnd), pacing_rate: Some(rate), ..StartupAction::default() }
    }

    /// Ends the paced flight now (the caller stops pacing): plain slow start from here.
    pub(crate) fn stop(&mut self) {
        self.done = true;
    }

    /// An ACK in slow start.
    pub(crate) fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.una = self.una.max(ack.ack_seq);
        let grow = StartupAction::grow(ack.newly_acked.min(view.mss) as f64);
        match self.end {
            Some(end) if !self.done => {
                if ack.snd_nxt < end {
                    // Still pacing out the first flight: the window stays.
                    StartupAction::default()
                } else {
                    // All of it left: stop pacing (a rate of 0 clears it) and slow-start on.
                    self.done = true;
                    StartupAction { pacing_rate: Some(0.0), ..grow }
                }
            }
            _ => grow,
        }
    }

    pub(crate) fn on_congestion(&mut self) {
        self.done = true;
    }

    /// `max((D − R)/2, 2)` segments in bytes, `R` = segments retransmitted since the loss.
    fn half_delivered(&self, view: &CcView, retransmitted_since: u64) -> f64 {
        let d = self.end.map_or(0, |e| e - self.from).div_ceil(view.mss);
        let r = retransmitted_since.div_ceil(view.mss);
        (d.saturating_sub(r) / 2).max(2) as f64 * view.mss as f64
    }

    /// Whether the first flight is sent and not yet all acknowledged.
    fn first_flight_outstanding(&self) -> bool {
        self.end.is_some_and(|end| self.una < end)
    }

    /// ssthresh after a congestion signal in startup (Jump-Start loss rule, §10.2).
    pub(crate) fn loss_ssthresh(&mut self, view: &CcView, ev: &CongestionEvent, retransmitted: u64) -> Option<f64> {
        if !self.first_flight_outstanding() {
            return None;
        }
        match ev.kind {
            // Recovery runs with the usual window; the rule applies when it ends.
            CongestionKind::FastRetransmit => {
                self.rtx_at_loss = Some(retransmitted);
                None
            }
            CongestionKind::Timeout => Some(self.half_delivered(view, 0)),
            // NOTE: no recovery follows an ECN echo, so the rule applied when recovery ends has
            // no place to run; the usual FlightSize/2 reduction applies.
            CongestionKind::Ecn => None,
        }
    }

    /// The window at the end of the recovery from a first-flight loss.
    pub(crate) fn after_recovery(&mut self, view: &CcView, retransmitted: u64) -> Option<RecoveryWindow> {
        let at_loss = self.rtx_at_loss.take()?;
        let w = self.half_delivered(view, retransmitted - at_loss);
        Some(RecoveryWindow { cwnd: w, ssthresh: Some(w) })
    }

    #[cfg(test)]
    pub(crate) fn done(&self) -> bool {
        self.done
    }
}

/// Configuration of [`JumpStart`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JumpStartConfig {
    /// Cap on the first paced flight in bytes (`u`).
    pub cap: u64,
}

impl Default for JumpStartConfig {
    fn default() -> Self {
        JumpStartConfig { cap: 65_536 }
    }
}

/// Jump-Start as a startup plug-in.
#[derive(Clone, Debug)]
pub struct JumpStart {
    cfg: JumpStartConfig,
    flight: PacedFlight,
}

impl JumpStart {
    /// A Jump-Start with `cfg`.
    pub fn new(cfg: JumpStartConfig) -> JumpStart {
        JumpStart { cfg, flight: PacedFlight::default() }
    }

    /// `D` in bytes: all queued data if it fits under `u`, else `u` in whole segments (at least one).
    pub fn first_flight(&self, mss: u64, queued: Option<u64>) -> u64 {
        match queued {
            Some(q) if q <= self.cfg.cap => q,
            _ => (self.cfg.cap / mss).max(1) * mss,
        }
    }
}

impl StartupAlgorithm for JumpStart {
    fn on_handshake(&mut self, view: &CcView, rtt: Dur, queued: Option<u64>) -> StartupAction {
        let d = self.first_flight(view.mss, queued);
        let secs = rtt.as_secs_f64();
        if secs <= 0.0 {
            return StartupAction::default();
        }
        // "pace the D segments at interval RTT_syn / D": D bytes over one RTT.
        self.flight.start(view, d, d as f64 / secs)
    }

    fn on_restart(&mut self, view: &CcView, rtt: Dur, queued: Option<u64>, snd_max: u64) -> StartupAction {
        // The response's first flight, paced over the current RTT estimate, as after a handshake.
        self.flight = PacedFlight::default();
        let d = self.first_flight(view.mss, queued);
        let secs = rtt.as_secs_f64();
        if secs <= 0.0 {
            return StartupAction::default();
        }
        self.flight.start_from(snd_max, d, d as f64 / secs, view.cwnd.max(d as f64))
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.flight.on_ack(view, ack)
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.flight.on_congestion();
    }

    fn loss_ssthresh(&mut self, view: &CcView, ev: &CongestionEvent, retransmitted: u64) -> Option<f64> {
        self.flight.loss_ssthresh(view, ev, retransmitted)
    }

    fn after_recovery(&mut self, view: &CcView, retransmitted: u64) -> Option<RecoveryWindow> {
        self.flight.after_recovery(view, retransmitted)
    }
}


use crate::decl::{AlgorithmInfo, Param, Range};

/// `u` of `startup = { algorithm = "jump-start", ... }`.
pub const U: Param<u64> = Param::window("u", "64KiB", "cap on the first paced flight (Scharf: 64 KiB); positive").range(Range::Above(0.0));

/// The declaration of `jump-start` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "jump-start",
        role: "startup",
        summary: "Jump-Start: after the handshake cwnd = max(D, IW), D = min(queued data, u), paced over the SYN RTT; then unpaced slow start (needs tcp.handshake = true)",
        source: "Liu, Allman, Jin, Wang, PFLDnet 2007; Scharf (ALGORITHMS.md §10.2)",
        params: &[U.info],
    },
    build: super::Build::Native(|p, _| super::Startup::JumpStart(JumpStart::new(JumpStartConfig { cap: p.get(&U) }))),
    check: |_, cx, _| cx.require_handshake("jump-start"),
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
    fn pacing_interval_for_30_segments_over_100ms_is_3_33ms() {
        // ALGORITHMS.md §10.2 test: D = 30, RTT 100 ms -> one segment every 3.33 ms.
        let mut js = JumpStart::new(JumpStartConfig::default());
        let a = js.on_handshake(&view(3000.0), Dur::from_millis(100), Some(30 * MSS));
        assert_eq!(a.set_cwnd, Some(30_000.0));
        let interval = MSS as f64 / a.pacing_rate.unwrap();
        assert!((interval - 0.003333).abs() < 1e-5, "{interval}");
    }

    #[test]
    fn the_first_flight_is_capped_at_u_in_whole_segments_and_never_below_iw() {
        let js = JumpStart::new(JumpStartConfig { cap: 65_536 });
        assert_eq!(js.first_flight(1448, Some(10_000)), 10_000);
        assert_eq!(js.first_flight(1448, Some(1_000_000)), 45 * 1448);
        assert_eq!(js.first_flight(1448, None), 45 * 1448);
        let mut js = JumpStart::new(JumpStartConfig::default());
        let a = js.on_handshake(&view(3000.0), Dur::from_millis(200), Some(1000));
        assert_eq!(a.set_cwnd, Some(3000.0), "cwnd = max(D, IW)");
        assert_eq!(a.pacing_rate, Some(5000.0), "D / RTT");
    }

    #[test]
    fn cwnd_holds_while_pacing_then_slow_start_resumes_unpaced() {
        let mut js = JumpStart::new(JumpStartConfig::default());
        js.on_handshake(&view(3000.0), Dur::from_millis(100), Some(100 * MSS));
        // D = 65 segments. An ACK before the flight is all out changes nothing.
        assert_eq!(js.on_ack(&view(65_000.0), &ack(MSS, 40 * MSS)), StartupAction::default());
        let a = js.on_ack(&view(65_000.0), &ack(MSS, 65 * MSS));
        assert_eq!((a.increase, a.pacing_rate, a.exit), (MSS as f64, Some(0.0), None));
        assert!(js.flight.done());
        assert_eq!(js.on_ack(&view(66_000.0), &ack(MSS, 70 * MSS)), StartupAction::grow(MSS as f64));
    }

    #[test]
    fn after_recovery_from_a_first_flight_loss_the_window_is_half_of_what_was_delivered() {
        // §10.2 test vector: D = 30, R = 6 -> cwnd = ssthresh = 12 segments.
        let mut js = JumpStart::new(JumpStartConfig::default());
        js.on_handshake(&view(3000.0), Dur::from_millis(100), Some(30 * MSS));
        js.on_ack(&view(30_000.0), &ack(MSS, 30 * MSS));
        let fr = CongestionEvent { now: crate::Time(1), kind: CongestionKind::FastRetransmit, flight_size: 29 * MSS, enter_recovery: true };
        js.on_congestion(&view(30_000.0), &fr);
        assert_eq!(js.loss_ssthresh(&view(30_000.0), &fr, 0), None, "recovery keeps the usual window");
        assert_eq!(js.after_recovery(&view(15_000.0), 6 * MSS), Some(RecoveryWindow { cwnd: 12_000.0, ssthresh: Some(12_000.0) }));
        assert_eq!(js.after_recovery(&view(15_000.0), 9 * MSS), None, "once per loss");
        // A timeout while first-flight data is outstanding: ssthresh = D / 2.
        let mut js = JumpStart::new(JumpStartConfig::default());
        js.on_handshake(&view(3000.0), Dur::from_millis(100), Some(30 * MSS));
        let rto = CongestionEvent { kind: CongestionKind::Timeout, enter_recovery: false, ..fr };
        assert_eq!(js.loss_ssthresh(&view(30_000.0), &rto, 0), Some(15_000.0));
        // Once the first flight is all acknowledged, a loss is an ordinary one.
        let mut js = JumpStart::new(JumpStartConfig::default());
        js.on_handshake(&view(3000.0), Dur::from_millis(100), Some(30 * MSS));
        js.on_ack(&view(30_000.0), &AckEvent { ack_seq: 30 * MSS, ..ack(30 * MSS, 40 * MSS) });
        assert_eq!(js.loss_ssthresh(&view(40_000.0), &fr, 0), None);
        assert_eq!(js.after_recovery(&view(20_000.0), 4 * MSS), None);
    }

    #[test]
    fn without_a_handshake_sample_it_is_slow_start() {
        let mut js = JumpStart::new(JumpStartConfig::default());
        assert_eq!(js.on_ack(&view(3000.0), &ack(2 * MSS, 3 * MSS)), StartupAction::grow(MSS as f64));
    }
}
