//! Paced Start (PaSt) — Hu & Steenkiste, "Improving TCP Startup Performance using Active
//! Measurements", ICNP 2003, §3; resolved in ALGORITHMS.md §7.
//!
//! Instead of growing the window by the ACK clock, PaSt sends **paced trains** whose length
//! doubles every round, and binary-searches the sending rate with the PTR test: a train whose ACKs
//! come back more widely spaced (`g_d`) than it was sent (`g_s`) ran faster than the available
//! bandwidth. Between trains it sends nothing: the next train leaves when the last ACK of the
//! previous one is in (the plug-in holds new data with [`StartupAction::send_limit`]).
//!
//! ```text
//! train 1 (PAIR): 2 back-to-back packets (4 with delayed ACKs)         -> g_B = g_d
//! train 2 (N0):   g_s = 2 g_B                       (tests alpha = 1/2)
//!    not Q -> A:  g_s = 4/3 g_B                     (tests alpha = 3/4)
//!                 not Q -> case 1: g = 8/7 g_B      Q -> case 2: g = g_d(train 3)
//!    Q     -> B:  g1 = g_d(train 2); g_s = 2 g1
//!                 not Q -> case 3: g = g1
//!                 Q     -> B2: g2 = g_d(train 3); g_s = 2 g2
//!                          not Q -> case 4: g = g2   Q -> case 5: g = 2 g_d(train 4)
//! Q  <=>  g_d > g_s (1 + epsilon)
//! rate found: cwnd = floor(RTT / g) packets; one FILL train of cwnd packets at gap g;
//!             startup ends (ssthresh = cwnd, congestion avoidance) when its last packet leaves
//! loss:       the controller's recovery; after a timeout ssthresh = max(train_len / 2, 2) packets
//! ```
//!
//! `g_d` is measured at the sender from the ACKs of the train (§7.7): the gap before an ACK counts
//! only if that ACK was sent at once by the receiver, i.e. it covers one segment (per-packet
//! receivers) or exactly two (delayed ACKs); `g_d = Σ gaps / Σ segments covered`. A delayed-ACK
//! receiver acknowledges a pair with one ACK, so with delayed ACKs the first train is four packets
//! and `g_B = (t(ACK of 4) − t(ACK of 2)) / 2`. `RTT` is the smallest sample taken from the first
//! ACK of each train (option `rtt = "srtt"`: a smoothed RTT of every sample instead).
//!
//! NOTE: §7.7 asks for the *actual* average departure gap of a train as `g_s`; the simulator's pacer
//! releases packets exactly at the nominal gap, so the nominal gap is used.
//! NOTE: a train is not shortened to fit `rwnd` (§7.6): the sender never exceeds `rwnd` anyway and
//! a train cut short still yields its gap measurement.
//! NOTE: a packet pair that yields no valid gap (every ACK of it discarded) leaves PaSt for plain
//! slow start from the current window; the flow reports `past_exit = "no-estimate"`.

use crate::startup::{Detail, SendLimit, SlowStart, StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, ExitReason, Time};

/// How the receiver acknowledges, which decides which ACK gaps PaSt may use (§7.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckCounting {
    /// One ACK per segment: an ACK covering one segment was sent at once.
    PerPacket,
    /// Delayed ACKs: only an ACK covering exactly two segments was sent at once.
    Delayed,
    /// Linux quick-ACK: per-packet at first, then delayed; ACKs covering one or two segments count.
    QuickAck,
}

/// Which RTT turns the exit gap into a window (`cwnd = RTT / g`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PastRtt {
    /// The smallest RTT of the first ACK of each train (§7.6 default).
    Min,
    /// A smoothed RTT (RFC 6298 gain 1/8) of every sample.
    Srtt,
}

/// Configuration of [`PacedStart`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacedStartConfig {
    /// Gap comparison tolerance: queueing is `g_d > g_s (1 + epsilon)` (§7.4; 0 = the idealised tree).
    pub epsilon: f64,
    /// How the receiver acknowledges (decides the first train's length and which gaps count).
    pub acks: AckCounting,
    /// RTT used for the exit window.
    pub rtt: PastRtt,
}

impl Default for PacedStartConfig {
    fn default() -> Self {
        PacedStartConfig { epsilon: 0.05, acks: AckCounting::PerPacket, rtt: PastRtt::Min }
    }
}

/// Where the binary search stands: which probe the current train is (Figure 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    /// The packet pair (or four packets with delayed ACKs) measuring `g_B`.
    Pair,
    /// Train 2, `g_s = 2 g_B`.
    N0,
    /// Train 3 after no queueing at N0, `g_s = 4/3 g_B`.
    A,
    /// Train 3 after queueing at N0, `g_s = 2 g1`.
    B,
    /// Train 4, `g_s = 2 g2`.
    B2,
}

/// What PaSt is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Sending a probe train and collecting its ACKs.
    Probe(Node),
    /// Sending the FILL train; startup ends when its last packet leaves.
    Fill,
    /// PaSt is over (rate found and filled, a loss, or no estimate): plain slow start if still in
    /// startup.
    Done,
}

/// Paced Start as a startup plug-in.
#[derive(Clone, Debug)]
pub struct PacedStart {
    cfg: PacedStartConfig,
    stage: Stage,
    /// Current train: length (packets), first and one-past-last sequence number, source gap (s).
    train_len: u64,
    train_start: u64,
    train_end: u64,
    g_s: f64,
    /// ACKs of the current train: (arrival, segments newly covered).
    acks: Vec<(Time, u64)>,
    /// `g_B`, `g1`, `g2` of Figure 5 (seconds).
    g_b: Option<f64>,
    g1: f64,
    g2: f64,
    rtt_min: Option<f64>,
    srtt: Option<f64>,
    trains: u64,
    case: Option<u8>,
    exit_gap: Option<f64>,
    exit: &'static str,
    /// The last train's destination gap (s), for `[trace] startup`.
    last_g_d: Option<f64>,
}

impl PacedStart {
    /// A Paced Start with `cfg`.
    pub fn new(cfg: PacedStartConfig) -> PacedStart {
        PacedStart {
            cfg,
            stage: Stage::Probe(Node::Pair),
            train_len: 0,
            train_start: 0,
            train_end: 0,
            g_s: 0.0,
            acks: Vec::new(),
            g_b: None,
            g1: 0.0,
            g2: 0.0,
            rtt_min: None,
            srtt: None,
            trains: 0,
            case: None,
            exit_gap: None,
            exit: "in-progress",
            last_g_d: None,
        }
    }

    /// The Table 2 case (1–5) PaSt exited with, once the rate was found.
    pub fn case(&self) -> Option<u8> {
        self.case
    }

    /// The exit gap `g_PaSt` in seconds, once the rate was found.
    pub fn exit_gap(&self) -> Option<f64> {
        self.exit_gap
    }

    /// `g_d` of the collected ACKs (§7.7), `None` if no gap is usable.
    fn destination_gap(&self) -> Option<f64> {
        let mut gaps = 0.0;
        let mut segs = 0;
        for w in self.acks.windows(2) {
            let (prev, (t, n)) = (w[0].0, w[1]);
            let immediate = match self.cfg.acks {
                AckCounting::PerPacket => n == 1,
                AckCounting::Delayed => n == 2,
                AckCounting::QuickAck => n == 1 || n == 2,
            };
            if immediate {
                gaps += (t - prev).as_secs_f64();
                segs += n;
            }
        }
        (segs > 0).then(|| gaps / segs as f64)
    }

    /// Queueing observed: the train came back slower than it was sent.
    fn queued(&self, g_d: f64) -> bool {
        g_d > self.g_s * (1.0 + self.cfg.epsilon)
    }

    /// Sends the next probe train: `len` packets at gap `g_s`, starting at `from`.
    fn train(&mut self, view: &CcView, node: Node, len: u64, g_s: f64, from: u64) -> StartupAction {
        self.stage = Stage::Probe(node);
        self.train_len = len;
        self.train_start = from;
        self.train_end = from + len * view.mss;
        self.g_s = g_s;
        self.acks.clear();
        self.trains += 1;
        StartupAction {
            set_cwnd: Some((len * view.mss) as f64),
            send_limit: Some(SendLimit::Upto(self.train_end)),
            // A gap of 0 (the pair) is back-to-back: no pacing.
            pacing_rate: Some(if g_s > 0.0 { view.mss as f64 / g_s } else { 0.0 }),
            ..StartupAction::default()
        }
    }

    /// Rate found with exit gap `g`: the FILL train, then congestion avoidance once it is out.
    fn fill(&mut self, view: &CcView, case: u8, g: f64, from: u64) -> StartupAction {
        let rtt = match self.cfg.rtt {
            PastRtt::Min => self.rtt_min,
            PastRtt::Srtt => self.srtt,
        };
        let Some(rtt) = rtt.filter(|_| g > 0.0) else {
            return self.give_up("no-estimate");
        };
        // §7.10: "cwnd = 416.7 -> 416 pkts"; at least two packets.
        let pkts = ((rtt / g).floor() as u64).max(2);
        self.case = Some(case);
        self.exit_gap = Some(g);
        self.exit = "rate-found";
        self.stage = Stage::Fill;
        self.train_len = pkts;
        self.trains += 1;
        let end = from + pkts * view.mss;
        self.train_start = from;
        self.train_end = end;
        StartupAction {
            set_cwnd: Some((pkts * view.mss) as f64),
            send_limit: Some(SendLimit::Upto(end)),
            pacing_rate: Some(view.mss as f64 / g),
            exit_when_sent: Some((end, ExitReason::RateFound)),
            ..StartupAction::default()
        }
    }

    /// PaSt cannot go on: plain slow start from here.
    fn give_up(&mut self, why: &'static str) -> StartupAction {
        self.stage = Stage::Done;
        self.exit = why;
        StartupAction { send_limit: Some(SendLimit::Open), pacing_rate: Some(0.0), ..StartupAction::default() }
    }

    /// All ACKs of the probe train at `node` are in: step the decision tree (§7.5).
    fn decide(&mut self, view: &CcView, node: Node, from: u64) -> StartupAction {
        let Some(g_d) = self.destination_gap() else {
            return self.give_up("no-estimate");
        };
        self.last_g_d = Some(g_d);
        let next = self.train_len * 2;
        match node {
            Node::Pair => {
                self.g_b = Some(g_d);
                self.train(view, Node::N0, next, 2.0 * g_d, from)
            }
            Node::N0 => {
                let g_b = self.g_b.unwrap_or(g_d);
                if self.queued(g_d) {
                    self.g1 = g_d;
                    self.train(view, Node::B, next, 2.0 * g_d, from)
                } else {
                    self.train(view, Node::A, next, 4.0 / 3.0 * g_b, from)
                }
            }
            Node::A => {
                let g_b = self.g_b.unwrap_or(g_d);
                if self.queued(g_d) {
                    self.fill(view, 2, g_d, from)
                } else {
                    self.fill(view, 1, 8.0 / 7.0 * g_b, from)
                }
            }
            Node::B => {
                if self.queued(g_d) {
                    self.g2 = g_d;
                    self.train(view, Node::B2, next, 2.0 * g_d, from)
                } else {
                    self.fill(view, 3, self.g1, from)
                }
            }
            Node::B2 => {
                if self.queued(g_d) {
                    self.fill(view, 5, 2.0 * g_d, from)
                } else {
                    self.fill(view, 4, self.g2, from)
                }
            }
        }
    }

    fn first_train_len(&self) -> u64 {
        match self.cfg.acks {
            AckCounting::Delayed => 4,
            AckCounting::PerPacket | AckCounting::QuickAck => 2,
        }
    }
}

impl StartupAlgorithm for PacedStart {
    fn signals(&self, out: &mut Vec<f64>) {
        out.push(self.trains as f64);
        out.push(self.g_s);
        out.push(self.last_g_d.unwrap_or(f64::NAN));
        out.push(self.g_b.unwrap_or(f64::NAN));
        out.push(self.case.map_or(f64::NAN, f64::from));
        out.push(self.exit_gap.unwrap_or(f64::NAN));
    }

    fn on_start(&mut self, view: &CcView) -> StartupAction {
        let len = self.first_train_len();
        self.train(view, Node::Pair, len, 0.0, 0)
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        if let Some(rtt) = ack.rtt {
            let r = rtt.as_secs_f64();
            self.srtt = Some(self.srtt.map_or(r, |s| s + (r - s) / 8.0));
        }
        match self.stage {
            Stage::Probe(node) => {
                if ack.ack_seq <= self.train_start {
                    return StartupAction::default();
                }
                if self.acks.is_empty() {
                    // The first ACK of a train sees the least self-induced queueing (§7.6).
                    if let Some(rtt) = ack.rtt {
                        let r = rtt.as_secs_f64();
                        self.rtt_min = Some(self.rtt_min.map_or(r, |m| m.min(r)));
                    }
                }
                self.acks.push((ack.now, ack.newly_acked.div_ceil(view.mss)));
                if ack.ack_seq >= self.train_end {
                    self.decide(view, node, ack.ack_seq.max(ack.snd_nxt))
                } else {
                    StartupAction::default()
                }
            }
            // The FILL train is being paced out: the window stays until its last packet leaves.
            Stage::Fill => StartupAction::default(),
            Stage::Done => SlowStart::default().on_ack(view, ack),
        }
    }

    fn on_congestion(&mut self, _view: &CcView, ev: &CongestionEvent) {
        if self.stage != Stage::Done {
            self.exit = match ev.kind {
                CongestionKind::FastRetransmit => "loss",
                CongestionKind::Timeout => "timeout",
                CongestionKind::Ecn => "ecn",
            };
        }
        self.stage = Stage::Done;
    }

    fn loss_ssthresh(&mut self, view: &CcView, ev: &CongestionEvent, _retransmitted: u64) -> Option<f64> {
        // §7.6: after a timeout "ssthresh = half of the last train length"; a fast retransmit uses
        // FlightSize / 2, which is at most half the train.
        (ev.kind == CongestionKind::Timeout).then(|| ((self.train_len / 2).max(2) * view.mss) as f64)
    }

    fn report(&self) -> Vec<(&'static str, Detail)> {
        let mut out = vec![("past_exit", Detail::Text(self.exit)), ("past_trains", Detail::Num(self.trains as f64))];
        if let Some(g_b) = self.g_b {
            out.push(("past_g_b", Detail::Num(g_b)));
        }
        if let (Some(case), Some(g)) = (self.case, self.exit_gap) {
            out.push(("past_case", Detail::Num(case as f64)));
            out.push(("past_gap", Detail::Num(g)));
        }
        out
    }
}


use crate::decl::{AlgorithmInfo, Param, Range, no_check};

/// `epsilon` of `startup = { algorithm = "paced-start", ... }`.
pub const EPSILON: Param<f64> = Param::number("epsilon", "0.05", "gap tolerance: queueing means g_d > g_s·(1 + epsilon); 0 to 1 (0 = the idealised tree)").range(Range::Between(0.0, 1.0));

/// `rtt` of `startup = { algorithm = "paced-start", ... }`.
pub const RTT: Param<&'static str> = Param::choice("rtt", &["min", "srtt"], "\"min\"", "RTT for cwnd = RTT/g: \"min\" = smallest sample of each train's first ACK, \"srtt\" = smoothed RTT");

/// The variables Paced Start decides on (§7.4-7.5), in [`StartupAlgorithm::signals`]' order.
pub const SIGNALS: &[super::Signal] = &[
    super::Signal::new("trains", "-", "probe trains sent so far"),
    super::Signal::new("g_s", "s", "the source gap of the train being sent"),
    super::Signal::new("g_d", "s", "the destination gap of the last train whose ACKs are all in (queueing: g_d > g_s (1 + epsilon))"),
    super::Signal::new("g_b", "s", "g_B: the packet pair's gap (the bottleneck's)"),
    super::Signal::new("case", "-", "the decision tree's case (1 to 5) once decided"),
    super::Signal::new("exit_gap", "s", "the gap the FILL train is paced at (the rate estimate)"),
];

/// The declaration of `paced-start` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "paced-start",
        role: "startup",
        summary: "Paced Start (PaSt): a packet pair, then paced trains doubling each round with a binary search on the gap (Figure 5); exit at cwnd = RTT/g after a paced FILL train, or on loss",
        source: "Hu & Steenkiste, Improving TCP Startup Performance using Active Measurements, ICNP 2003, §3 (ALGORITHMS.md §7)",
        params: &[EPSILON.info, RTT.info],
    },
    build: super::Build::Native(|p, cx| super::Startup::PacedStart(PacedStart::new(PacedStartConfig {
            epsilon: p.get(&EPSILON),
            acks: cx.acks,
            rtt: match p.get(&RTT) {
                "srtt" => PastRtt::Srtt,
                _ => PastRtt::Min,
            },
        }))),
    check: no_check,
    per_response: false,
    router_approval: false,
    sets_initial_window: false,
    on_ce: super::CeRule::ExitAsLoss,
    signals: SIGNALS,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dur, Ssthresh};

    const MSS: u64 = 1000;
    /// g_B of 1000-byte packets at 100 Mb/s.
    const G_B: f64 = 80e-6;
    /// The idealised tree's tolerance: zero up to the nanosecond rounding of ACK arrival times.
    const IDEAL: f64 = 1e-6;

    fn view(cwnd: f64) -> CcView {
        CcView { cwnd, ssthresh: Ssthresh::Infinite, mss: MSS, round: 0, min_rtt: None, new_round: false }
    }

    /// Feeds the ACKs of the current train, one per segment, spaced `g_d`, first at `t0` with `rtt`.
    fn ack_train(p: &mut PacedStart, t0: f64, g_d: f64, rtt: f64) -> StartupAction {
        let (start, len) = (p.train_start, p.train_len);
        let mut last = StartupAction::default();
        for i in 0..len {
            let seq = start + (i + 1) * MSS;
            let ack = AckEvent {
                now: Time::ZERO + Dur::from_secs_f64(t0 + i as f64 * g_d),
                newly_acked: MSS,
                ack_seq: seq,
                snd_nxt: start + len * MSS,
                rtt: (i == 0).then(|| Dur::from_secs_f64(rtt)),
                ..AckEvent::default()
            };
            last = p.on_ack(&view((len * MSS) as f64), &ack);
            if i + 1 < len {
                assert_eq!(last, StartupAction::default(), "nothing changes before the train is in");
            }
        }
        last
    }

    /// The idealised PTR response: `g_d = g_B + (1 − alpha) g_s` when that exceeds `g_s`.
    fn f(alpha: f64, g_s: f64) -> f64 {
        (G_B + (1.0 - alpha) * g_s).max(g_s)
    }

    /// Runs the idealised tree for `alpha` with epsilon 0 and returns (case, g / g_B, probes).
    fn run_ideal(alpha: f64) -> (u8, f64, Vec<f64>) {
        let mut p = PacedStart::new(PacedStartConfig { epsilon: IDEAL, ..PacedStartConfig::default() });
        let a = p.on_start(&view(3000.0));
        assert_eq!((a.set_cwnd, a.send_limit), (Some(2000.0), Some(SendLimit::Upto(2000))), "a packet pair");
        let mut probes = Vec::new();
        let mut t = 0.0;
        let mut a = ack_train(&mut p, t, G_B, 0.08);
        while let Stage::Probe(_) = p.stage {
            probes.push(p.g_s / G_B);
            t += 1.0;
            let g_d = f(alpha, p.g_s);
            a = ack_train(&mut p, t, g_d, 0.08);
        }
        assert_eq!(p.stage, Stage::Fill);
        assert_eq!(a.exit_when_sent.map(|e| e.1), Some(ExitReason::RateFound));
        (p.case.unwrap(), p.exit_gap.unwrap() / G_B, probes)
    }

    #[test]
    fn the_idealised_tree_matches_the_test_vectors_of_section_7_10() {
        // (alpha, case, probes g_s/g_B, g_PaSt/g_B) from ALGORITHMS.md §7.10.
        let vectors: &[(f64, u8, &[f64], f64)] = &[
            (0.95, 1, &[2.0, 1.3333], 1.1429),
            (0.80, 1, &[2.0, 1.3333], 1.1429),
            (0.60, 2, &[2.0, 1.3333], 1.5333),
            (0.50, 2, &[2.0, 1.3333], 1.6667),
            (0.40, 3, &[2.0, 4.4], 2.2),
            (0.30, 3, &[2.0, 4.8], 2.4),
            (0.15, 4, &[2.0, 5.4, 11.18], 5.59),
            (0.10, 4, &[2.0, 5.6, 12.08], 6.04),
            (0.05, 5, &[2.0, 5.8, 13.02], 26.738),
        ];
        for &(alpha, case, probes, g) in vectors {
            let (c, got, seen) = run_ideal(alpha);
            assert_eq!(c, case, "alpha {alpha}");
            assert!((got - g).abs() < 1e-3 * g, "alpha {alpha}: g = {got} g_B, want {g}");
            assert_eq!(seen.len(), probes.len(), "alpha {alpha}: probes {seen:?}");
            for (s, p) in seen.iter().zip(probes) {
                assert!((s - p).abs() < 1e-3 * p, "alpha {alpha}: probes {seen:?}, want {probes:?}");
            }
        }
    }

    #[test]
    fn exit_window_is_rtt_over_gap_and_the_fill_train_is_paced_at_the_gap() {
        // §7.10 concrete: alpha = 0.3, g_B = 80 us, RTT 80 ms -> g = 192 us, cwnd = 416 packets.
        let mut p = PacedStart::new(PacedStartConfig { epsilon: IDEAL, ..PacedStartConfig::default() });
        p.on_start(&view(3000.0));
        let mut a = ack_train(&mut p, 0.0, G_B, 0.08);
        while let Stage::Probe(_) = p.stage {
            let g_d = f(0.3, p.g_s);
            a = ack_train(&mut p, 1.0, g_d, 0.08);
        }
        assert_eq!(p.case, Some(3));
        assert_eq!(a.set_cwnd, Some(416_000.0));
        let gap = MSS as f64 / a.pacing_rate.unwrap();
        assert!((gap - 192e-6).abs() < 1e-9, "{gap}");
        let (end, _) = a.exit_when_sent.unwrap();
        assert_eq!(a.send_limit, Some(SendLimit::Upto(end)));
        assert_eq!(end - p.train_start, 416 * MSS, "the FILL train is exactly cwnd packets");
    }

    #[test]
    fn trains_double_and_hold_new_data_until_all_acks_are_back() {
        let mut p = PacedStart::new(PacedStartConfig::default());
        p.on_start(&view(3000.0));
        let a = ack_train(&mut p, 0.0, G_B, 0.08);
        assert_eq!(a.set_cwnd, Some(4000.0), "train 2 is four packets");
        assert_eq!(a.send_limit, Some(SendLimit::Upto(2000 + 4000)), "and nothing beyond it may leave");
        let gap = MSS as f64 / a.pacing_rate.unwrap();
        assert!((gap - 2.0 * G_B).abs() < 1e-12, "at twice g_B");
        let a = ack_train(&mut p, 1.0, 2.0 * G_B, 0.08);
        assert_eq!(a.set_cwnd, Some(8000.0));
        assert_eq!(a.send_limit, Some(SendLimit::Upto(6000 + 8000)));
    }

    #[test]
    fn delayed_acks_use_four_packets_and_only_acks_of_two_segments() {
        let mut p = PacedStart::new(PacedStartConfig { acks: AckCounting::Delayed, ..PacedStartConfig::default() });
        assert_eq!(p.on_start(&view(3000.0)).set_cwnd, Some(4000.0));
        // ACKs covering 2 at t = 0 and t = 2 g_B: g_B = (t(ACK of 4) − t(ACK of 2)) / 2.
        let at = |t: f64| Time::ZERO + Dur::from_secs_f64(t);
        let ev = |t: f64, seq: u64| AckEvent { now: at(t), newly_acked: 2 * MSS, ack_seq: seq, snd_nxt: 4 * MSS, ..AckEvent::default() };
        p.on_ack(&view(4000.0), &ev(0.0, 2 * MSS));
        let a = p.on_ack(&view(4000.0), &ev(2.0 * G_B, 4 * MSS));
        assert!((p.g_b.unwrap() - G_B).abs() < 1e-12);
        assert_eq!(a.set_cwnd, Some(8000.0));
        // A timer-released ACK of one segment does not count: the gap before it is ignored.
        p.acks = vec![(at(0.0), 2), (at(0.2), 1), (at(0.2005), 2)];
        assert!((p.destination_gap().unwrap() - 0.00025).abs() < 1e-12);
    }

    #[test]
    fn a_timeout_sets_ssthresh_to_half_the_last_train() {
        let mut p = PacedStart::new(PacedStartConfig::default());
        p.on_start(&view(3000.0));
        ack_train(&mut p, 0.0, G_B, 0.08);
        ack_train(&mut p, 1.0, 2.0 * G_B, 0.08);
        assert_eq!(p.train_len, 8);
        let ev = CongestionEvent { now: Time(5), kind: CongestionKind::Timeout, flight_size: 8 * MSS, enter_recovery: false };
        p.on_congestion(&view(8000.0), &ev);
        assert_eq!(p.loss_ssthresh(&view(8000.0), &ev, 0), Some(4000.0));
        let fr = CongestionEvent { kind: CongestionKind::FastRetransmit, enter_recovery: true, ..ev };
        assert_eq!(p.loss_ssthresh(&view(8000.0), &fr, 0), None, "fast retransmit: FlightSize / 2");
        assert!(matches!(p.report()[0], ("past_exit", Detail::Text("timeout"))));
    }
}
