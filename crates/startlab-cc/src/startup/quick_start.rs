//! Quick-Start — RFC 4782 (Floyd, Allman, Jain, Sarolahti, Experimental, January 2007), as
//! ALGORITHMS.md §10.1 resolves it; [Scharf]'s "QS 1" and "QS 2" continuations.
//!
//! The sender asks the routers on the path for a rate in its SYN (or first data segment). Every
//! Quick-Start router approves it, lowers it, or denies it; the receiver echoes what arrived; the
//! sender checks the echo and, if the rate is valid, sends its first window paced at that rate:
//!
//! ```text
//! request:   N = largest code with 40 kbit/s · 2^N <= wanted rate; QS TTL, QS nonce random
//! report:    accept iff N > 0, TTL Diff == (IP_TTL − QS_TTL) mod 256 as sent, nonce fields 1..N match
//! approved:  QS_cwnd = R·T/(MSS+H) segments (R bytes/s, T the RTT of the request); use it only if
//!            QS_cwnd > IW; pace it at R (one segment every (MSS+H)/R)
//! first ACK of QS data: cwnd = max(FlightSize, IW) if 1 < FlightSize < cwnd (ns-2 endQuickStart);
//!            stop pacing; "QS 1": slow start on; "QS 2": ssthresh = QS_cwnd, congestion avoidance
//! denied / invalid report / QS_cwnd <= IW: standard slow start from IW
//! loss of QS data: ssthresh = max(FlightSize/2, 2·SMSS); after recovery cwnd = IW, slow start
//! ```
//!
//! This file also holds the wire encoding shared by the TCP endpoints and the simulator's routers
//! ([`QsRequest`], [`QsReport`], [`qs_rate_bps`], [`qs_code_for`], the nonce helpers): the plug-in
//! itself only sees the sender's verdict ([`QsOutcome`]) through [`QuickStartEvent`].
//!
//! Parameters: `rate` (wanted rate, bit/s at the IP layer; rounded down to a code point),
//! `variant` (QS 1 or QS 2), and from the flow's TCP configuration the header size `H` and the
//! initial window.

use crate::startup::jump_start::PacedFlight;
use crate::startup::{Detail, RecoveryWindow, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, Dur, ExitReason};

/// RFC 4782 §3.1: "the rate request is ... K = 40 * 2^N kbps" — the rate of code 1 is 80 kbit/s.
pub const QS_RATE_UNIT_BPS: f64 = 40_000.0;
/// The largest rate code (4 bits; 15 → 1.31072 Gbit/s).
pub const QS_MAX_CODE: u8 = 15;
/// Bits in the QS Nonce: 15 two-bit fields, one per rate code (ALGORITHMS.md §10.1).
pub const QS_NONCE_BITS: u32 = 30;
/// The IP TTL a sender puts on every packet (hosts' default; routers decrement it per hop).
pub const INITIAL_IP_TTL: u8 = 64;
/// Bytes the IPv4 Quick-Start option adds to a request-carrying packet, and the TCP Quick-Start
/// Response option (kind 27, length 8) to the ACK that echoes it.
pub const QS_OPTION_BYTES: u32 = 8;

/// The rate of code `code` in bit/s: `40 kbit/s · 2^N` for 1..=15, 0 for 0 (not approved).
pub fn qs_rate_bps(code: u8) -> f64 {
    match code {
        1..=QS_MAX_CODE => QS_RATE_UNIT_BPS * f64::from(1u32 << code),
        _ => 0.0,
    }
}

/// The largest code whose rate is at most `bps` (rounded down, ALGORITHMS.md §10.1), at most 15;
/// 0 below 80 kbit/s.
pub fn qs_code_for(bps: f64) -> u8 {
    (1..=QS_MAX_CODE).rev().find(|&n| qs_rate_bps(n) <= bps).unwrap_or(0)
}

/// The nonce bits of the fields of codes `1..=code` (field of code k = bits `2(k−1)`, `2(k−1)+1`).
pub fn qs_nonce_mask(code: u8) -> u32 {
    let code = u32::from(code.min(QS_MAX_CODE));
    ((1u64 << (2 * code)) - 1) as u32
}

/// A router lowering the rate from `from` to `to` overwrites the nonce fields of codes
/// `to+1..=from` with the matching bits of `fresh` (ALGORITHMS.md §10.1), so that a receiver cannot
/// report a higher rate than was approved without guessing them.
pub fn qs_lower_nonce(nonce: u32, from: u8, to: u8, fresh: u32) -> u32 {
    let changed = qs_nonce_mask(from) & !qs_nonce_mask(to);
    (nonce & !changed) | (fresh & changed)
}

/// The Quick-Start Rate Request option as it travels with the SYN (or first data segment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QsRequest {
    /// Rate code `N` (0 = denied on the way).
    pub code: u8,
    /// QS TTL: random at the sender, decremented by every router that processes the option.
    pub qs_ttl: u8,
    /// QS Nonce, 30 bits.
    pub nonce: u32,
}

impl QsRequest {
    /// A participating router that can approve at most rate code `allowed` processes the option:
    /// keeps N if it fits, lowers it (re-randomising the nonce fields above the new code from
    /// `fresh`), or sets it to 0; and "decrement[s] QS TTL by the same amount as IP TTL" (one hop).
    /// A request already at 0 is left alone (nothing to approve). Returns the code passed on.
    pub fn process(&mut self, allowed: u8, fresh: u32) -> u8 {
        if self.code == 0 {
            return 0;
        }
        let approved = allowed.min(self.code);
        if approved < self.code {
            self.nonce = qs_lower_nonce(self.nonce, self.code, approved, fresh);
            self.code = approved;
        }
        self.qs_ttl = self.qs_ttl.wrapping_sub(1);
        approved
    }

    /// What the receiver echoes (TCP Quick-Start Response) for this option arriving with IP TTL
    /// `ip_ttl`: the rate, `TTL Diff = (IP TTL − QS TTL) mod 256`, and the nonce.
    pub fn report(&self, ip_ttl: u8) -> QsReport {
        QsReport { code: self.code, ttl_diff: ip_ttl.wrapping_sub(self.qs_ttl), nonce: self.nonce }
    }

    /// The sender's check of the echo (RFC 4782 §4.2 / ALGORITHMS.md §10.1): rate > 0, TTL Diff
    /// equals `(IP_TTL − QS_TTL) mod 256` as sent, and the nonce fields of codes `1..=N` match. A
    /// reported rate above the requested one is invalid (its nonce check is counted as failed).
    pub fn validate(&self, report: Option<&QsReport>) -> QsOutcome {
        let Some(r) = report else { return QsOutcome::NoReport };
        if r.code == 0 {
            return QsOutcome::Denied;
        }
        if r.ttl_diff != INITIAL_IP_TTL.wrapping_sub(self.qs_ttl) {
            return QsOutcome::TtlMismatch;
        }
        let mask = qs_nonce_mask(r.code);
        if r.code > self.code || (r.nonce ^ self.nonce) & mask != 0 {
            return QsOutcome::NonceMismatch;
        }
        QsOutcome::Approved { code: r.code }
    }
}

/// The TCP Quick-Start Response option (kind 27): what the receiver saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QsReport {
    /// Rate code that arrived.
    pub code: u8,
    /// `(IP TTL − QS TTL) mod 256` of the arriving packet.
    pub ttl_diff: u8,
    /// Nonce that arrived.
    pub nonce: u32,
}

/// The sender's verdict on its Quick-Start request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QsOutcome {
    /// A valid report of rate code `code` (> 0).
    Approved {
        /// The approved code.
        code: u8,
    },
    /// A router set the rate to 0.
    Denied,
    /// The TTL Diff does not match: a router on the path did not process the option.
    TtlMismatch,
    /// The nonce does not match the reported rate.
    NonceMismatch,
    /// No report came back (request lost, retransmitted SYN).
    NoReport,
}

/// The Quick-Start verdict as handed to the startup plug-in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuickStartEvent {
    /// The sender's check of the report.
    pub outcome: QsOutcome,
    /// `T` of `QS_cwnd = R·T/(MSS+H)`: the RTT of the request (SYN to SYN-ACK, or the first data
    /// segment's sample); `None` if there is none (Karn).
    pub rtt: Option<Dur>,
    /// Application data not yet sent (`None`: unlimited).
    pub queued: Option<u64>,
    /// One past the highest byte sent so far: the Quick-Start window starts here.
    pub snd_max: u64,
    /// RFC 5681 FlightSize now, bytes.
    pub flight_size: u64,
    /// The controller is still in startup (filled in by the controller; a report that arrives
    /// after a loss is recorded but not used).
    pub in_startup: bool,
}

/// Continuation after the Quick-Start window ([Scharf] "QS 1" / "QS 2").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QsVariant {
    /// Continue in slow start (default, ALGORITHMS.md §10.1 RESOLVED).
    Qs1,
    /// `ssthresh = QS_cwnd`, congestion avoidance.
    Qs2,
}

/// Configuration of [`QuickStart`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuickStartConfig {
    /// The wanted rate in bit/s at the IP layer; the request is its code point, rounded down.
    pub rate_bps: f64,
    /// Continuation.
    pub variant: QsVariant,
    /// Header bytes per segment `H` (the real on-wire header).
    pub header: u64,
    /// The initial window in bytes (`IW`).
    pub initial_window: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// No verdict yet: slow start from IW meanwhile.
    Waiting,
    /// The Quick-Start window `[start, end)` is being sent; `qs_cwnd` in bytes.
    Window { start: u64, end: u64, qs_cwnd: f64 },
    /// The Quick-Start window was acknowledged (or not used): the data up to `end` was QS data.
    Over { end: u64 },
}

/// Quick-Start as a startup plug-in.
#[derive(Clone, Debug)]
pub struct QuickStart {
    cfg: QuickStartConfig,
    /// The requested code.
    requested: u8,
    state: State,
    flight: PacedFlight,
    outcome: Option<&'static str>,
    /// The valid approved rate in bit/s, once reported.
    approved_bps: f64,
    /// `SND.UNA` after the latest ACK seen in slow start.
    acked: u64,
    /// A loss of QS data is being repaired: cwnd = IW when recovery ends.
    restore_iw: bool,
}

impl QuickStart {
    /// A Quick-Start with `cfg`.
    pub fn new(cfg: QuickStartConfig) -> QuickStart {
        QuickStart {
            requested: qs_code_for(cfg.rate_bps),
            cfg,
            state: State::Waiting,
            flight: PacedFlight::default(),
            outcome: None,
            approved_bps: 0.0,
            acked: 0,
            restore_iw: false,
        }
    }

    /// The rate code the sender requests.
    pub fn requested_code(&self) -> u8 {
        self.requested
    }

    /// `QS_cwnd = R·T/(MSS+H)` in whole segments (rounded down) for a rate of `bps` bit/s.
    pub fn qs_cwnd_segments(&self, bps: f64, rtt: Dur, mss: u64) -> u64 {
        (bps / 8.0 * rtt.as_secs_f64() / (mss + self.cfg.header) as f64).floor() as u64
    }

    /// The payload pacing rate (bytes/s) that puts one segment on the wire every `(MSS+H)/R`.
    pub fn payload_rate(&self, bps: f64, mss: u64) -> f64 {
        bps / 8.0 * mss as f64 / (mss + self.cfg.header) as f64
    }

    fn end(&self) -> Option<u64> {
        match self.state {
            State::Waiting => None,
            State::Window { end, .. } | State::Over { end } => Some(end),
        }
    }
}

impl StartupAlgorithm for QuickStart {
    fn on_restart(&mut self, _view: &CcView, _rtt: Dur, _queued: Option<u64>, _snd_max: u64) -> StartupAction {
        // A new request: the earlier verdict and window are forgotten (RFC 4782 §4.6).
        *self = QuickStart::new(self.cfg);
        StartupAction::default()
    }

    fn on_quick_start(&mut self, view: &CcView, ev: &QuickStartEvent) -> StartupAction {
        if self.outcome.is_some() {
            return StartupAction::default();
        }
        let code = match ev.outcome {
            QsOutcome::Approved { code } => code,
            QsOutcome::Denied => return self.fallback("denied"),
            QsOutcome::TtlMismatch => return self.fallback("ttl-mismatch"),
            QsOutcome::NonceMismatch => return self.fallback("nonce-mismatch"),
            QsOutcome::NoReport => return self.fallback("no-report"),
        };
        self.approved_bps = qs_rate_bps(code);
        let Some(rtt) = ev.rtt else { return self.fallback("no-report") };
        if !ev.in_startup {
            return self.fallback("not-in-startup");
        }
        let segments = self.qs_cwnd_segments(self.approved_bps, rtt, view.mss);
        // ns-2 rule (ALGORITHMS.md §10.1): "Only use Quick-Start if QS_cwnd > IW".
        if segments * view.mss <= self.cfg.initial_window {
            return self.fallback("window-too-small");
        }
        self.outcome = Some(if code == self.requested { "approved" } else { "reduced" });
        let window = segments * view.mss;
        let bytes = ev.queued.map_or(window, |q| q.min(window));
        self.state = State::Window { start: ev.snd_max, end: ev.snd_max + bytes, qs_cwnd: window as f64 };
        if bytes == 0 {
            self.state = State::Over { end: ev.snd_max };
            return StartupAction::default();
        }
        let cwnd = ((ev.flight_size + bytes) as f64).max(self.cfg.initial_window as f64);
        self.flight.start_from(ev.snd_max, bytes, self.payload_rate(self.approved_bps, view.mss), cwnd)
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.acked = ack.ack_seq;
        let State::Window { start, end, qs_cwnd } = self.state else {
            return self.flight.on_ack(view, ack);
        };
        if ack.ack_seq <= start {
            // ACKs of data sent before the report (request in the first data segment).
            return self.flight.on_ack(view, ack);
        }
        // The first ACK of Quick-Start data: the Quick-Start window is over.
        self.state = State::Over { end };
        self.flight.stop();
        let mss = view.mss as f64;
        let flight = ack.flight_size as f64;
        // ns-2 endQuickStart: "cwnd = FlightSize if 1 < FlightSize < cwnd", not below IW.
        let cwnd = if flight > mss && flight < view.cwnd { flight.max(self.cfg.initial_window as f64) } else { view.cwnd };
        let stop = StartupAction { pacing_rate: Some(0.0), ..StartupAction::default() };
        match self.cfg.variant {
            QsVariant::Qs1 => {
                // "continue with ACK-clocked slow start": this ACK already counts.
                let grow = if ack.cwnd_limited { ack.newly_acked.min(view.mss) as f64 } else { 0.0 };
                StartupAction { set_cwnd: Some(cwnd + grow), ..stop }
            }
            QsVariant::Qs2 => StartupAction {
                set_cwnd: Some(cwnd),
                set_ssthresh: Some(qs_cwnd),
                exit: Some(ExitReason::QuickStart),
                ..stop
            },
        }
    }

    fn on_congestion(&mut self, _view: &CcView, ev: &CongestionEvent) {
        self.flight.stop();
        // The hole is at SND.UNA: Quick-Start data was lost if SND.UNA is still inside the window.
        let lost = self.approved_used() && self.end().is_some_and(|end| self.acked < end);
        if let State::Window { end, .. } = self.state {
            self.state = State::Over { end };
        }
        if lost {
            self.outcome = Some("lost");
            // NOTE: a timeout (or Tahoe) already collapses cwnd to the loss window; only a fast
            // recovery needs the window put back to IW when it ends.
            self.restore_iw = ev.kind == CongestionKind::FastRetransmit && ev.enter_recovery;
        }
    }

    fn loss_ssthresh(&mut self, view: &CcView, ev: &CongestionEvent, _retransmitted: u64) -> Option<f64> {
        // ns-2 lossQuickStart, ALGORITHMS.md §10.1 ("we halve"): ssthresh = max(FlightSize/2, 2·SMSS).
        (self.outcome == Some("lost")).then(|| (ev.flight_size as f64 / 2.0).max(2.0 * view.mss as f64))
    }

    fn after_recovery(&mut self, _view: &CcView, _retransmitted: u64) -> Option<RecoveryWindow> {
        // "cwnd = IW, slow start" once the lost Quick-Start data is repaired.
        std::mem::take(&mut self.restore_iw).then_some(RecoveryWindow { cwnd: self.cfg.initial_window as f64, ssthresh: None })
    }

    fn report(&self) -> Vec<(&'static str, Detail)> {
        vec![
            ("qs_requested", Detail::Num(qs_rate_bps(self.requested))),
            ("qs_approved", Detail::Num(self.approved_bps)),
            ("qs_outcome", Detail::Text(self.outcome.unwrap_or("no-report"))),
        ]
    }
}

impl QuickStart {
    /// Records why Quick-Start is not used; the flow runs standard slow start from IW.
    fn fallback(&mut self, why: &'static str) -> StartupAction {
        self.outcome = Some(why);
        if !matches!(why, "window-too-small" | "not-in-startup") {
            self.approved_bps = 0.0;
        }
        StartupAction::default()
    }

    /// The Quick-Start window was actually sent.
    fn approved_used(&self) -> bool {
        matches!(self.outcome, Some("approved" | "reduced" | "lost"))
    }
}


use crate::decl::{AlgorithmInfo, Param, Range, no_check};

/// The smallest Quick-Start rate (code N = 1: 40 kbit/s x 2), bit/s.
pub const QS_MIN_RATE_BPS: f64 = 80_000.0;

/// `rate` of `startup = { algorithm = "quick-start", ... }`.
pub const RATE: Param<f64> = Param::rate("rate", "1.31072Gbps", "the wanted rate at the IP layer, rounded down to a code point 40 kbit/s x 2^N (N = 1..15, 80kbps to 1.31072Gbps); the default asks for the largest and lets the routers lower it").range(Range::AtLeast(QS_MIN_RATE_BPS));

/// `variant` of `startup = { algorithm = "quick-start", ... }`.
pub const VARIANT: Param<&'static str> = Param::choice("variant", &["qs1", "qs2"], "qs1", "after the Quick-Start window: qs1 continues in slow start (Scharf's QS 1), qs2 sets ssthresh = QS_cwnd and enters congestion avoidance (QS 2)");

/// The declaration of `quick-start` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "quick-start",
        role: "startup",
        summary: "Quick-Start: the SYN asks the routers for a rate (40 kbit/s x 2^N); if every router approves (possibly lower) the first window R*T/(MSS+H) is paced at R, then slow start (qs1) or avoidance at that window (qs2); denied or invalid: slow start from IW",
        source: "RFC 4782 (Floyd, Allman, Jain, Sarolahti); Scharf, fast startup schemes (ALGORITHMS.md §10.1)",
        params: &[RATE.info, VARIANT.info],
    },
    build: super::Build::Native(|p, cx| super::Startup::QuickStart(QuickStart::new(QuickStartConfig {
            rate_bps: p.get(&RATE),
            variant: match p.get(&VARIANT) {
                "qs2" => QsVariant::Qs2,
                _ => QsVariant::Qs1,
            },
            header: cx.header,
            initial_window: cx.initial_window * cx.mss,
        }))),
    check: no_check,
    per_response: true,
    router_approval: true,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::view;
    use crate::Time;

    const MSS: u64 = 1448;

    fn qs(variant: QsVariant) -> QuickStart {
        QuickStart::new(QuickStartConfig { rate_bps: 10e6, variant, header: 52, initial_window: 3 * MSS })
    }

    fn v(cwnd_pkts: f64) -> CcView {
        CcView { mss: MSS, ..view(cwnd_pkts * MSS as f64) }
    }

    fn approved(code: u8, rtt_ms: u64) -> QuickStartEvent {
        QuickStartEvent {
            outcome: QsOutcome::Approved { code },
            rtt: Some(Dur::from_millis(rtt_ms)),
            queued: None,
            snd_max: 0,
            flight_size: 0,
            in_startup: true,
        }
    }

    fn ack(acked_to: u64, flight: u64, snd_nxt: u64) -> AckEvent {
        AckEvent { now: Time(0), newly_acked: MSS, ack_seq: acked_to, snd_nxt, flight_size: flight, ..AckEvent::default() }
    }

    #[test]
    fn rate_codes_are_40_kbps_times_two_to_the_n_and_requests_round_down() {
        assert_eq!(qs_rate_bps(0), 0.0);
        assert_eq!(qs_rate_bps(1), 80e3);
        assert_eq!(qs_rate_bps(7), 5.12e6);
        assert_eq!(qs_rate_bps(8), 10.24e6);
        assert_eq!(qs_rate_bps(15), 1.31072e9);
        assert_eq!(qs_code_for(10e6), 7, "10 Mb/s rounds down to 5.12 Mb/s");
        assert_eq!(qs_code_for(10.24e6), 8, "an exact code point is kept");
        assert_eq!(qs_code_for(79_999.0), 0, "below 80 kb/s nothing can be requested");
        assert_eq!(qs_code_for(1e12), 15, "above 1.31 Gb/s the largest code");
    }

    #[test]
    fn ttl_check_accepts_five_approving_routers_and_rejects_one_that_skipped() {
        // ALGORITHMS.md §10.1: IP TTL 64, QS TTL 200 -> expected (64 - 200) mod 256 = 120.
        let sent = QsRequest { code: 7, qs_ttl: 200, nonce: 0x2aaa_aaaa & ((1 << QS_NONCE_BITS) - 1) };
        let mut req = sent;
        let mut ip_ttl = INITIAL_IP_TTL;
        for _ in 0..5 {
            ip_ttl -= 1;
            req.process(QS_MAX_CODE, 0);
        }
        let report = req.report(ip_ttl);
        assert_eq!((ip_ttl, req.qs_ttl, report.ttl_diff), (59, 195, 120));
        assert_eq!(sent.validate(Some(&report)), QsOutcome::Approved { code: 7 });
        // One router forwards (IP TTL 59) without processing: QS TTL stays 196 -> 119.
        let mut skipped = sent;
        for _ in 0..4 {
            skipped.process(QS_MAX_CODE, 0);
        }
        let report = skipped.report(59);
        assert_eq!(report.ttl_diff, 119);
        assert_eq!(sent.validate(Some(&report)), QsOutcome::TtlMismatch);
    }

    #[test]
    fn a_router_that_lowers_the_rate_rerandomises_the_nonce_fields_above_it() {
        let sent = QsRequest { code: 11, qs_ttl: 10, nonce: 0 };
        let mut req = sent;
        assert_eq!(req.process(7, u32::MAX), 7);
        // Fields of codes 8..=11 (bits 14..22) now come from the fresh bits; 1..=7 are untouched.
        assert_eq!(req.nonce, 0b1111_1111 << 14);
        let honest = req.report(INITIAL_IP_TTL - 1);
        assert_eq!(sent.validate(Some(&honest)), QsOutcome::Approved { code: 7 });
        // A receiver that claims the requested rate must guess the overwritten fields.
        let lying = QsReport { code: 11, ..honest };
        assert_eq!(sent.validate(Some(&lying)), QsOutcome::NonceMismatch);
        // Denial and absence.
        let mut denied = sent;
        assert_eq!(denied.process(0, 0), 0);
        assert_eq!(sent.validate(Some(&denied.report(63))), QsOutcome::Denied);
        assert_eq!(sent.validate(None), QsOutcome::NoReport);
        assert_eq!(qs_lower_nonce(0x3fff_ffff, 15, 0, 0), 0, "all 15 fields replaced when lowered to 0");
    }

    #[test]
    fn example_window_is_85_segments_paced_one_every_2_344ms() {
        // ALGORITHMS.md §10.1: N = 7 (640 000 B/s), T = 200 ms, MSS + H = 1500 -> 85 segments.
        let mut q = qs(QsVariant::Qs1);
        assert_eq!(q.requested_code(), 7);
        let a = q.on_quick_start(&v(3.0), &approved(7, 200));
        assert_eq!(a.set_cwnd, Some(85.0 * MSS as f64));
        let gap = MSS as f64 / a.pacing_rate.expect("paced");
        assert!((gap - 0.0023437).abs() < 1e-6, "one segment every {gap} s");
        assert_eq!(q.report()[2], ("qs_outcome", Detail::Text("approved")));
        assert_eq!(q.report()[1], ("qs_approved", Detail::Num(5.12e6)));
    }

    #[test]
    fn a_lower_code_is_reported_as_reduced_and_a_small_window_is_not_used() {
        let mut q = qs(QsVariant::Qs1);
        q.on_quick_start(&v(3.0), &approved(5, 200));
        assert_eq!(q.report()[2].1, Detail::Text("reduced"));
        // N = 1 (80 kb/s) over 200 ms is 1 segment: not more than IW = 3.
        let mut q = qs(QsVariant::Qs1);
        assert_eq!(q.on_quick_start(&v(3.0), &approved(1, 200)), StartupAction::default());
        assert_eq!(q.report()[2].1, Detail::Text("window-too-small"));
    }

    #[test]
    fn invalid_reports_fall_back_to_slow_start() {
        for (outcome, name) in [
            (QsOutcome::Denied, "denied"),
            (QsOutcome::TtlMismatch, "ttl-mismatch"),
            (QsOutcome::NonceMismatch, "nonce-mismatch"),
            (QsOutcome::NoReport, "no-report"),
        ] {
            let mut q = qs(QsVariant::Qs1);
            let a = q.on_quick_start(&v(3.0), &QuickStartEvent { outcome, ..approved(7, 200) });
            assert_eq!(a, StartupAction::default(), "{name}: no window, no pacing");
            assert_eq!(q.on_ack(&v(3.0), &ack(MSS, 2 * MSS, 3 * MSS)), StartupAction::grow(MSS as f64), "{name}: slow start");
            assert_eq!(q.report(), vec![("qs_requested", Detail::Num(5.12e6)), ("qs_approved", Detail::Num(0.0)), ("qs_outcome", Detail::Text(name))]);
        }
    }

    #[test]
    fn first_ack_of_qs_data_cuts_cwnd_to_flight_size_and_slow_start_goes_on() {
        let mut q = qs(QsVariant::Qs1);
        q.on_quick_start(&v(3.0), &approved(7, 200));
        // t = T: the first ACK covers one segment; 84 are in flight, cwnd was 85.
        let a = q.on_ack(&v(85.0), &ack(MSS, 84 * MSS, 85 * MSS));
        assert_eq!(a.pacing_rate, Some(0.0), "pacing stops");
        assert_eq!(a.set_cwnd, Some(85.0 * MSS as f64), "FlightSize 84 plus this ACK's slow-start growth");
        assert_eq!(a.exit, None);
        assert_eq!(q.on_ack(&v(85.0), &ack(2 * MSS, 84 * MSS, 86 * MSS)), StartupAction::grow(MSS as f64));
    }

    #[test]
    fn qs2_sets_ssthresh_to_the_quick_start_window_and_enters_avoidance() {
        let mut q = qs(QsVariant::Qs2);
        q.on_quick_start(&v(3.0), &approved(7, 200));
        let a = q.on_ack(&v(85.0), &ack(MSS, 60 * MSS, 61 * MSS));
        assert_eq!(a.set_cwnd, Some(60.0 * MSS as f64), "only 61 segments were sent: cwnd = FlightSize");
        assert_eq!(a.set_ssthresh, Some(85.0 * MSS as f64), "ssthresh = QS_cwnd");
        assert_eq!(a.exit, Some(ExitReason::QuickStart));
    }

    #[test]
    fn a_short_transfer_sends_only_its_data_and_cwnd_never_drops_below_iw() {
        let mut q = qs(QsVariant::Qs1);
        let a = q.on_quick_start(&v(3.0), &QuickStartEvent { queued: Some(5 * MSS), ..approved(7, 200) });
        assert_eq!(a.set_cwnd, Some(5.0 * MSS as f64));
        let a = q.on_ack(&v(5.0), &ack(3 * MSS, 2 * MSS, 5 * MSS));
        assert_eq!(a.set_cwnd, Some(4.0 * MSS as f64), "max(FlightSize 2, IW 3) plus one segment");
    }

    #[test]
    fn loss_of_quick_start_data_halves_flight_and_restarts_from_iw_after_recovery() {
        let mut q = qs(QsVariant::Qs1);
        q.on_quick_start(&v(3.0), &approved(7, 200));
        let ev = CongestionEvent { now: Time(0), kind: CongestionKind::FastRetransmit, flight_size: 80 * MSS, enter_recovery: true };
        q.on_congestion(&v(85.0), &ev);
        assert_eq!(q.loss_ssthresh(&v(85.0), &ev, 0), Some(40.0 * MSS as f64));
        assert_eq!(q.after_recovery(&v(40.0), 0).map(|w| w.cwnd), Some(3.0 * MSS as f64), "cwnd = IW after recovery");
        assert_eq!(q.after_recovery(&v(40.0), 0), None, "once");
        assert_eq!(q.report()[2].1, Detail::Text("lost"));
        assert_eq!(q.report()[1].1, Detail::Num(5.12e6), "the approved rate stays reported");
    }

    #[test]
    fn a_loss_after_the_quick_start_data_was_acknowledged_is_an_ordinary_loss() {
        let mut q = qs(QsVariant::Qs1);
        q.on_quick_start(&v(3.0), &QuickStartEvent { queued: Some(10 * MSS), ..approved(7, 200) });
        q.on_ack(&v(10.0), &ack(MSS, 9 * MSS, 10 * MSS));
        q.on_ack(&v(11.0), &ack(10 * MSS, 2 * MSS, 12 * MSS));
        let ev = CongestionEvent { now: Time(0), kind: CongestionKind::FastRetransmit, flight_size: 10 * MSS, enter_recovery: true };
        q.on_congestion(&v(20.0), &ev);
        assert_eq!(q.loss_ssthresh(&v(20.0), &ev, 0), None);
        assert_eq!(q.after_recovery(&v(10.0), 0), None);
        assert_eq!(q.report()[2].1, Detail::Text("approved"));
    }
}
