//! [`StartlabController`]: quinn's `congestion::Controller` driven by a startlab
//! [`Controller`] (any startup + avoidance), exactly as `startlab-quic`'s sender drives it.
//!
//! How quinn's calls become startlab's events:
//! - **ACKs.** quinn calls `on_ack` once per newly acknowledged ack-eliciting packet (in packet
//!   number order) and then `on_end_acks` once per ACK frame; the adapter gathers the frame's
//!   packets into one [`AckEvent`]: `newly_acked` their bytes (only those sent after the current
//!   recovery period began count, none while in recovery: RFC 9002 §7.3.2), `acked_segments` their
//!   number, `flight_size` quinn's bytes in flight after the frame, `cwnd_limited = !app_limited`,
//!   the RTT sample `now − sent` of the newest packet the frame acknowledges, and `ack_seq` /
//!   `snd_nxt` positions in the bytes sent (ALGORITHMS.md §0.3 rounds: a round ends when a packet
//!   sent after it began is acknowledged), as `startlab-quic` numbers them.
//! - **Order.** quinn reports the frame's ACKs *before* the losses and ECN-CE increase the same
//!   frame reveals, `startlab-quic` the other way round. The adapter therefore holds the frame's
//!   [`AckEvent`] until the stack next does anything else (sends, asks for the window, reports
//!   another frame): congestion events with the same `now` are applied first, as in the
//!   simulator, so the ACK that reveals a loss does not grow the window it halves.
//! - **Congestion events** (`on_congestion_event`): a new recovery period unless the signalling
//!   packet was sent before the current one began (quinn already filters ACK-only losses); the
//!   controller reduces once from its window (`on_congestion` with the window as the flight size;
//!   `enter_recovery` for a loss, not for ECN — quinn reports ECN-CE with `lost_bytes = 0`); the
//!   period ends when a packet sent after it began is acknowledged (`on_recovery_exit`).
//!   Persistent congestion collapses the window to the minimum window (`on_repeated_timeout`;
//!   the controller's loss window is `2·max_datagram_size`) and ends the period.
//! - **Time** is [`Time`]: nanoseconds since the connection's controller was built (quinn builds
//!   it when the connection is created).
//!
//! - **Delivery rate** (BBR-style startups): each send instant is stamped with the bytes delivered
//!   so far and when they last grew; an ACK frame's sample is what was delivered since its newest
//!   packet left, over that time, as `startlab-quic` samples it.
//!
//! What quinn does not let a controller do, and the adapter therefore leaves out: a startup's
//! own pacing rate, paced first flight and hold on new data (quinn's pacer always paces at
//! `1.25 · cwnd / smoothed_rtt`), retransmission counts per stream offset and Accurate ECN byte
//! counts. The RTT sample is the adapter's own because quinn updates its
//! `RttEstimator` only after the ACK's `on_ack` calls (and does not expose its latest sample).

use quinn::congestion::{Controller as QuinnController, ControllerFactory, ControllerMetrics};
use serde::Serialize;
use startlab_cc::{AckEvent, CongestionEvent, CongestionKind, Controller, Phase, RateSample};
use startlab_units::{Dur, Time};
use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// One point of the controller's trace.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CwndSample {
    /// Seconds since the controller was built.
    pub t_s: f64,
    /// The window after the event (bytes).
    pub cwnd: u64,
}

/// What the controller saw and did, for the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ControllerTrace {
    /// The startup and avoidance algorithms.
    pub startup: String,
    /// The avoidance algorithm.
    pub avoidance: String,
    /// The controller's segment size (the QUIC datagram size, bytes).
    pub mss: u64,
    /// The initial window (bytes).
    pub initial_window: u64,
    /// The window after every ACK frame and congestion event, and at the start.
    pub cwnd: Vec<CwndSample>,
    /// ACK frames handed to the controller.
    pub acks: u64,
    /// Recovery periods begun (losses and ECN).
    pub congestion_events: u64,
    /// Of those, by ECN-CE.
    pub ecn_events: u64,
    /// Persistent congestion declared.
    pub persistent_congestion: u64,
    /// Bytes quinn declared lost.
    pub lost_bytes: u64,
    /// Path MTU changes quinn reported (the controller keeps its segment size).
    pub mtu_updates: u64,
    /// Rounds the controller counted.
    pub rounds: u64,
    /// The startup algorithm's own report (the simulator's per-flow columns of the same names).
    pub startup_details: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The state behind a [`StartlabController`], shared with its [`ControllerHandle`].
#[derive(Debug)]
struct State {
    cc: Controller,
    origin: Instant,
    initial_window: u64,
    /// Bytes sent so far (every datagram quinn reports), and per send instant the position after it.
    sent_bytes: u64,
    sends: VecDeque<Sent>,
    first_send: bool,
    /// When `delivered` last grew (the delivery-rate samples' clock), and whether quinn last
    /// reported nothing in flight (a rate interval then starts at the next send).
    delivered_time: Time,
    idle: bool,
    /// The last delivery-rate sample handed to the controller.
    last_rate: Option<RateSample>,
    /// The ACK frame being reported (`on_ack` calls so far) and the frame waiting to be applied.
    open: Option<Batch>,
    pending: Option<Batch>,
    recovery_start: Option<Time>,
    ack_pos: u64,
    delivered: u64,
    trace: ControllerTrace,
}

/// A send instant: the position in the bytes sent after it, and the delivery state then (the
/// delivery-rate sample's start, as `startlab-quic` stamps each packet).
#[derive(Clone, Copy, Debug)]
struct Sent {
    at: Time,
    pos: u64,
    delivered: u64,
    delivered_time: Time,
}

/// One ACK frame's packets.
#[derive(Clone, Copy, Debug, Default)]
struct Batch {
    now: Time,
    newly: u64,
    after_recovery: u64,
    packets: u32,
    newest_sent: Time,
    newest_pos: u64,
    in_flight: u64,
    app_limited: bool,
}

impl State {
    fn t(&self, i: Instant) -> Time {
        Time(i.saturating_duration_since(self.origin).as_nanos().min(u64::MAX as u128) as u64)
    }

    fn record(&mut self, now: Time) {
        let cwnd = self.cc.cwnd() as u64;
        if self.trace.cwnd.last().is_some_and(|s| s.cwnd == cwnd) {
            return;
        }
        self.trace.cwnd.push(CwndSample { t_s: now.as_nanos() as f64 / 1e9, cwnd });
    }

    /// The last send at or before `sent` (the oldest kept if none).
    fn send_at(&self, sent: Time) -> Option<Sent> {
        let i = self.sends.partition_point(|e| e.at <= sent);
        self.sends.get(i.saturating_sub(1)).copied()
    }

    /// Applies the ACK frame waiting (`startlab-quic`'s `Sender::on_ack` after its losses).
    fn flush(&mut self) {
        let Some(b) = self.pending.take() else { return };
        self.delivered += b.newly;
        if b.newly > 0 {
            self.delivered_time = b.now;
        }
        // The delivery rate since the newest packet acknowledged left (draft-cheng-iccrg-delivery-
        // rate-estimation): what was delivered meanwhile, over the time.
        let rate_sample = self
            .send_at(b.newest_sent)
            .filter(|e| e.delivered_time < b.now)
            .map(|e| RateSample { delivered: self.delivered - e.delivered, interval: Dur(b.now.as_nanos() - e.delivered_time.as_nanos()) });
        self.ack_pos = self.ack_pos.max(b.newest_pos);
        if b.newly == 0 {
            return;
        }
        if self.cc.phase() == Phase::Recovery && self.recovery_start.is_some_and(|r| b.newest_sent > r) {
            // RFC 9002 §7.3.2: a packet sent during the period is acknowledged: recovery ends.
            let cwnd = self.cc.cwnd();
            self.cc.on_recovery_exit(b.now, cwnd);
        }
        let counted = if self.cc.phase() == Phase::Recovery { 0 } else { b.after_recovery };
        let ev = AckEvent {
            now: b.now,
            newly_acked: counted,
            ack_seq: self.ack_pos,
            snd_nxt: self.sent_bytes,
            rtt: Some(Dur(b.now.as_nanos().saturating_sub(b.newest_sent.as_nanos()).max(1))),
            flight_size: b.in_flight,
            cwnd_limited: !b.app_limited,
            acked_segments: b.packets,
            timer_triggered: false,
            delivered: self.delivered,
            rate_sample,
            ce_bytes: 0,
        };
        self.last_rate = rate_sample;
        if self.cc.phase() == Phase::Recovery && self.cc.rides_out_recovery() {
            // A startup that rides the recovery out (BBRv3) sees its ACKs; the window stays the
            // recovery's.
            self.cc.on_recovery_ack(&AckEvent { newly_acked: b.after_recovery, ..ev }, self.ack_pos);
        }
        self.cc.on_ack(&ev);
        self.trace.acks += 1;
        self.record(b.now);
        // Send positions older than any packet still likely to be acknowledged are dropped.
        let keep_from = b.newest_sent.as_nanos().saturating_sub(10_000_000_000);
        while self.sends.len() > 1 && self.sends[1].at.as_nanos() <= keep_from {
            self.sends.pop_front();
        }
    }

    /// `OnCongestionEvent(sent_time)` of RFC 9002 B.6: once per recovery period.
    fn congestion(&mut self, now: Time, sent: Time, kind: CongestionKind) {
        if self.recovery_start.is_some_and(|r| sent <= r) {
            return;
        }
        self.recovery_start = Some(now);
        self.trace.congestion_events += 1;
        self.trace.ecn_events += u64::from(kind == CongestionKind::Ecn);
        let flight_size = self.cc.cwnd() as u64;
        self.cc.on_congestion(&CongestionEvent { now, kind, flight_size, enter_recovery: kind == CongestionKind::FastRetransmit });
    }
}

/// A handle on a [`StartlabController`]'s state that stays with the application (quinn owns the
/// controller): the startup's exit, the trace, the handshake call.
#[derive(Clone, Debug)]
pub struct ControllerHandle(Arc<Mutex<State>>);

impl ControllerHandle {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves a state that is still consistent enough to report.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The startup's end as the controller recorded it: (seconds since the controller was built,
    /// reason, cwnd in bytes before any reduction).
    pub fn startup_exit(&self) -> Option<(f64, &'static str, f64)> {
        self.lock().cc.startup_exit().map(|e| (e.time.as_nanos() as f64 / 1e9, e.reason.as_str(), e.cwnd))
    }

    /// The trace so far.
    pub fn trace(&self) -> ControllerTrace {
        let mut s = self.lock();
        s.flush();
        let mut t = s.trace.clone();
        t.rounds = s.cc.round();
        for (name, value) in s.cc.startup_report() {
            let v = match value {
                startlab_cc::startup::Detail::Num(x) => serde_json::json!(x),
                startlab_cc::startup::Detail::Text(x) => serde_json::json!(x),
            };
            t.startup_details.insert(name.to_string(), v);
        }
        t
    }

    /// The window now (bytes).
    pub fn cwnd(&self) -> u64 {
        let mut s = self.lock();
        s.flush();
        s.cc.cwnd() as u64
    }

    /// The instant the controller was built (its time zero).
    pub fn origin(&self) -> Instant {
        self.lock().origin
    }

    /// The handshake completed with RTT sample `rtt` and `queued` bytes of response to send
    /// (`None`: unlimited), as `startlab-quic`'s server tells its controller.
    pub fn on_handshake(&self, rtt: std::time::Duration, queued: Option<u64>) {
        let rtt = Dur(rtt.as_nanos().clamp(1, u64::MAX as u128) as u64);
        self.lock().cc.on_handshake(rtt, queued);
    }
}

/// quinn's congestion controller running a startlab [`Controller`].
#[derive(Debug)]
pub struct StartlabController(ControllerHandle);

impl StartlabController {
    /// Wraps `cc`, whose time zero is `origin`.
    pub fn new(cc: Controller, origin: Instant) -> StartlabController {
        let initial_window = cc.cwnd() as u64;
        let trace = ControllerTrace {
            startup: cc.startup_name().to_string(),
            avoidance: cc.avoidance_name().to_string(),
            mss: cc.mss(),
            initial_window,
            cwnd: vec![CwndSample { t_s: 0.0, cwnd: initial_window }],
            ..ControllerTrace::default()
        };
        StartlabController(ControllerHandle(Arc::new(Mutex::new(State {
            cc,
            origin,
            initial_window,
            sent_bytes: 0,
            sends: VecDeque::new(),
            first_send: true,
            delivered_time: Time::ZERO,
            idle: true,
            last_rate: None,
            open: None,
            pending: None,
            recovery_start: None,
            ack_pos: 0,
            delivered: 0,
            trace,
        }))))
    }

    /// The handle on this controller's state.
    pub fn handle(&self) -> ControllerHandle {
        self.0.clone()
    }

    #[cfg(test)]
    fn last_rate(&self) -> Option<RateSample> {
        let mut s = self.0.lock();
        s.flush();
        s.last_rate
    }

    /// quinn's `on_ack` without its `RttEstimator` (which only quinn can make; the adapter takes
    /// its own RTT sample): the ack-eliciting packet sent at `sent` and `bytes` long was newly
    /// acknowledged at `now`.
    pub fn packet_acked(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool) {
        let mut s = self.0.lock();
        s.flush();
        let (now, sent) = (s.t(now), s.t(sent));
        let pos = s.send_at(sent).map_or(0, |e| e.pos);
        let after = s.recovery_start.is_none_or(|r| sent > r);
        let b = s.open.get_or_insert(Batch { now, app_limited, ..Batch::default() });
        b.newly += bytes;
        if after {
            b.after_recovery += bytes;
        }
        b.packets += 1;
        if sent >= b.newest_sent {
            b.newest_sent = sent;
        }
        b.newest_pos = b.newest_pos.max(pos);
    }
}

impl QuinnController for StartlabController {
    fn on_sent(&mut self, now: Instant, bytes: u64, _last_packet_number: u64) {
        let mut s = self.0.lock();
        s.flush();
        let t = s.t(now);
        s.sent_bytes += bytes;
        let pos = s.sent_bytes;
        if s.idle {
            // Nothing in flight: the rate interval starts now, not at the last delivery.
            s.idle = false;
            s.delivered_time = t;
        }
        let (delivered, delivered_time) = (s.delivered, s.delivered_time);
        match s.sends.back_mut() {
            Some(last) if last.at == t => last.pos = pos,
            _ => s.sends.push_back(Sent { at: t, pos, delivered, delivered_time }),
        }
        if s.first_send {
            s.first_send = false;
            s.cc.on_first_send(pos);
        }
        s.cc.on_data_sent(t, pos);
    }

    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, _rtt: &quinn_proto::RttEstimator) {
        self.packet_acked(now, sent, bytes, app_limited);
    }

    fn on_end_acks(&mut self, _now: Instant, in_flight: u64, app_limited: bool, _largest_packet_num_acked: Option<u64>) {
        let mut s = self.0.lock();
        s.flush();
        s.idle = in_flight == 0;
        if let Some(mut b) = s.open.take() {
            b.in_flight = in_flight;
            b.app_limited = app_limited;
            s.pending = Some(b);
        }
    }

    fn on_congestion_event(&mut self, now: Instant, sent: Instant, is_persistent_congestion: bool, lost_bytes: u64) {
        let mut s = self.0.lock();
        let (now, sent) = (s.t(now), s.t(sent));
        if s.pending.is_some_and(|b| b.now != now) {
            // Not revealed by the frame waiting (a timer's loss detection): that frame first.
            s.flush();
        }
        s.trace.lost_bytes += lost_bytes;
        let kind = if lost_bytes == 0 { CongestionKind::Ecn } else { CongestionKind::FastRetransmit };
        s.congestion(now, sent, kind);
        if is_persistent_congestion {
            s.trace.persistent_congestion += 1;
            s.cc.on_repeated_timeout();
            s.recovery_start = None;
        }
        s.record(now);
    }

    fn on_mtu_update(&mut self, _new_mtu: u16) {
        self.0.lock().trace.mtu_updates += 1;
    }

    fn window(&self) -> u64 {
        let mut s = self.0.lock();
        s.flush();
        s.cc.cwnd() as u64
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut m = ControllerMetrics::default();
        m.congestion_window = self.window();
        m.ssthresh = match self.0.lock().cc.ssthresh() {
            startlab_cc::Ssthresh::Bytes(b) => Some(b as u64),
            startlab_cc::Ssthresh::Infinite => None,
        };
        m
    }

    /// NOTE: the copy shares its state with the original: quinn copies a controller only for a
    /// path migration (the old path's controller is kept to fall back on), which the lab's
    /// connections never do; a second independent `Controller` could not be made from a running
    /// one (a startup plug-in is not `Clone`).
    fn clone_box(&self) -> Box<dyn QuinnController> {
        Box::new(StartlabController(self.0.clone()))
    }

    fn initial_window(&self) -> u64 {
        self.0.lock().initial_window
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Builds a [`StartlabController`] for each connection quinn opens, keeping a handle on each.
pub struct StartlabFactory {
    make: Box<dyn Fn() -> Controller + Send + Sync>,
    built: Mutex<Vec<ControllerHandle>>,
}

impl std::fmt::Debug for StartlabFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartlabFactory").finish_non_exhaustive()
    }
}

impl StartlabFactory {
    /// A factory whose controllers `make` builds (for a scenario's flow:
    /// `startlab_sim::flow_controller`).
    pub fn new(make: impl Fn() -> Controller + Send + Sync + 'static) -> Arc<StartlabFactory> {
        Arc::new(StartlabFactory { make: Box::new(make), built: Mutex::new(Vec::new()) })
    }

    /// Forgets the controllers built so far.
    pub fn forget(&self) {
        self.built.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Handles on the controllers built so far, oldest first.
    pub fn built(&self) -> Vec<ControllerHandle> {
        self.built.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl ControllerFactory for StartlabFactory {
    fn build(self: Arc<Self>, now: Instant, _current_mtu: u16) -> Box<dyn QuinnController> {
        let c = StartlabController::new((self.make)(), now);
        self.built.lock().unwrap_or_else(|e| e.into_inner()).push(c.handle());
        Box::new(c)
    }
}

#[cfg(test)]
mod tests;
