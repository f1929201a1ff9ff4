//! HyStart as Linux runs it today: `net/ipv4/tcp_cubic.c` (`hystart_update`,
//! `bictcp_hystart_reset`, `cubictcp_acked`), µs clock; ALGORITHMS.md §8.3.
//!
//! The same two detectors as the paper ([`HyStart`](super::HyStart)), with the kernel's choices
//! (ALGORITHMS.md §8.4): a µs clock; detection only while `cwnd >= hystart_low_window`; an ACK
//! extends the train when it comes within `hystart_ack_delta_us` (≤, not <) of the previous one, and
//! the train must *exceed* `delay_min/2`; the delay test compares the running minimum of the round
//! (checked once `HYSTART_MIN_SAMPLES` samples were taken) with the connection's `delay_min` plus
//! `clamp(delay_min/8, 4 ms, 16 ms)`. A round starts on the first RTT-sampled slow-start ACK past
//! the previous round's `end_seq`, at any cwnd (Linux ≥ 6.14; [`RoundReset`] gives the earlier
//! kernels). A detection sets `ssthresh = cwnd` (exit reasons `ack-train` and `delay-increase`).
//!
//! Parameters (registry name `hystart-linux`; kernel module parameter in brackets):
//! * `detect` — `"both"` (default), `"ack-train"` or `"delay"` [`hystart_detect` = 3, 1, 2];
//! * `low_window` — default 16 segments [`hystart_low_window`];
//! * `ack_delta` — default 2 ms [`hystart_ack_delta_us` = 2000];
//! * `min_samples` — default 8 [`HYSTART_MIN_SAMPLES`, a constant in the kernel];
//! * `ack_delay` — cushion added to `delay_min` in the train threshold, default 0 (the lab's
//!   simplification); the kernel's `hystart_ack_delay()` is `min(1 ms, 4·GSO size/pacing rate)`,
//!   i.e. 1 ms below about 262 MB/s with 64 KiB GSO, so `"1ms"` reproduces it;
//! * `paced` — default `false`: a paced flow (`sk_pacing_status != SK_PACING_NONE`) compares the
//!   train with the full `delay_min` instead of half of it;
//! * `round_reset` — default `"ungated"` (Linux ≥ 6.14), `"gated"` (5.16–6.13) or `"every-ack"`
//!   (2.6.29–5.15): [`RoundReset`].
//!
//! NOTE: ALGORITHMS.md §8.3 resolves the round reset as the 5.16–6.13 kernels had it (inside the
//! `cwnd >= low_window` gate). Commit 25c1a9ca53db (Linux 6.14, Jan 2025, and the 6.1/6.6/6.12
//! stable series) moved it before the gate, and the testbed's kernel runs it so: with the gated
//! reset the simulator left one round later than kernel CUBIC on the 20 Mbit/s real path
//! (docs/REAL.md). The default follows today's kernel; `round_reset = "gated"` is the spec's.
//!
//! Growth: `tcp_slow_start` credits every newly acknowledged segment (byte counting with no cap,
//! ALGORITHMS.md §0.4).

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, CongestionKind, ExitReason};
use startlab_units::Dur;

/// `HYSTART_DELAY_MIN`: the floor of the delay threshold, µs.
pub const HYSTART_DELAY_MIN: u64 = 4_000;

/// `HYSTART_DELAY_MAX`: the ceiling of the delay threshold, µs.
pub const HYSTART_DELAY_MAX: u64 = 16_000;

/// `HYSTART_MIN_SAMPLES`: samples per round before the delay test runs.
pub const HYSTART_MIN_SAMPLES: u32 = 8;

/// Which detectors run (`hystart_detect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartDetect {
    /// `HYSTART_ACK_TRAIN | HYSTART_DELAY` (3), the default.
    Both,
    /// `HYSTART_ACK_TRAIN` (1).
    AckTrain,
    /// `HYSTART_DELAY` (2).
    Delay,
}

impl HyStartDetect {
    /// From the registry's choice: `"both"`, `"ack-train"` or `"delay"`.
    pub fn from_name(name: &str) -> Option<HyStartDetect> {
        match name {
            "both" => Some(HyStartDetect::Both),
            "ack-train" => Some(HyStartDetect::AckTrain),
            "delay" => Some(HyStartDetect::Delay),
            _ => None,
        }
    }
    fn ack_train(self) -> bool {
        matches!(self, HyStartDetect::Both | HyStartDetect::AckTrain)
    }
    fn delay(self) -> bool {
        matches!(self, HyStartDetect::Both | HyStartDetect::Delay)
    }
}

/// Configuration of [`HyStartLinux`], with the kernel's defaults from [`HyStartLinuxConfig::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyStartLinuxConfig {
    /// `hystart_detect`.
    pub detect: HyStartDetect,
    /// `hystart_low_window` in bytes: detection runs only while `cwnd >= low_window`.
    pub low_window: f64,
    /// `hystart_ack_delta_us`: the largest gap between two ACKs of a train.
    pub ack_delta: Dur,
    /// `HYSTART_MIN_SAMPLES`.
    pub min_samples: u32,
    /// `hystart_ack_delay()`: cushion added to `delay_min` in the train threshold (0 in the lab).
    pub ack_delay: Dur,
    /// The flow is paced: the train threshold is `delay_min`, not `delay_min/2`.
    pub paced: bool,
    /// Where and when a new round starts: which kernel's `tcp_cubic.c`.
    pub round_reset: RoundReset,
}

/// Where `bictcp_hystart_reset` starts a new round — the one place the kernels since 2.6.29
/// differ (registry parameter `round_reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundReset {
    /// Linux ≥ 6.14 and the stable kernels that took commit 25c1a9ca53db ("tcp_cubic: fix
    /// incorrect HyStart round start detection"; 6.1, 6.6, 6.12 and 6.13 series): `hystart_update`
    /// starts a round on every slow-start ACK with an RTT sample past `end_seq`, at any cwnd,
    /// before that ACK's tests; only the tests wait for `cwnd >= low_window`. Rounds stay on
    /// flight boundaries. The default (`"ungated"`).
    Ungated,
    /// Linux 5.16–6.13 (commit 4e1fddc98d25, "tcp_cubic: fix spurious Hystart ACK train
    /// detections for not-cwnd-limited flows", until 25c1a9ca53db): the reset is inside
    /// `hystart_update`, which runs only while `cwnd >= low_window`, so the first round starts
    /// wherever cwnd reaches `low_window`, mid-flight (`"gated"`).
    Gated,
    /// Linux 2.6.29–5.15: `bictcp_cong_avoid` starts a round on every slow-start ACK past
    /// `end_seq`, at any cwnd, after that ACK's HyStart tests (`"every-ack"`).
    EveryAck,
}

impl RoundReset {
    /// From the registry's choice: `"ungated"`, `"gated"` or `"every-ack"`.
    pub fn from_name(name: &str) -> Option<RoundReset> {
        match name {
            "ungated" => Some(RoundReset::Ungated),
            "gated" => Some(RoundReset::Gated),
            "every-ack" => Some(RoundReset::EveryAck),
            _ => None,
        }
    }
}

impl HyStartLinuxConfig {
    /// The kernel's defaults for segments of `mss` bytes, with the lab's `ack_delay = 0`, unpaced.
    pub fn new(mss: u64) -> HyStartLinuxConfig {
        HyStartLinuxConfig {
            detect: HyStartDetect::Both,
            low_window: 16.0 * mss as f64,
            ack_delta: Dur::from_micros(2000),
            min_samples: HYSTART_MIN_SAMPLES,
            ack_delay: Dur::ZERO,
            paced: false,
            round_reset: RoundReset::Ungated,
        }
    }
}

/// Hybrid Slow Start, current Linux variant. Times and delays in whole µs, as `tcp_mstamp`.
#[derive(Clone, Debug)]
pub struct HyStartLinux {
    cfg: HyStartLinuxConfig,
    found: bool,
    /// `round_start`, µs.
    round_start: u64,
    /// `end_seq`: SND.NXT when the round was reset; `None` before the first reset.
    end_seq: Option<u64>,
    /// `last_ack`, µs: the last ACK of the train.
    last_ack: u64,
    /// `curr_rtt`, µs: running minimum of the round; `None` is "~0U".
    curr_rtt: Option<u64>,
    /// `sample_cnt`.
    sample_cnt: u32,
    /// `delay_min`, µs; `None` is the kernel's 0 ("unset").
    delay_min: Option<u64>,
}

/// `HYSTART_DELAY_THRESH(delay_min >> 3)`: `clamp(delay_min/8, 4 ms, 16 ms)`, µs.
pub(crate) fn delay_thresh_us(delay_min: u64) -> u64 {
    (delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
}

impl HyStartLinux {
    /// `bictcp_reset` + `bictcp_hystart_reset` at connection start.
    pub fn new(cfg: HyStartLinuxConfig) -> HyStartLinux {
        HyStartLinux {
            cfg,
            found: false,
            round_start: 0,
            end_seq: None,
            last_ack: 0,
            curr_rtt: None,
            sample_cnt: 0,
            delay_min: None,
        }
    }

    /// `bictcp_hystart_reset`: "round_start = last_ack = now; end_seq = snd_nxt; curr_rtt = ~0U;
    /// sample_cnt = 0".
    fn reset_round(&mut self, now_us: u64, snd_nxt: u64) {
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = Some(snd_nxt);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }
}

impl StartupAlgorithm for HyStartLinux {
    fn signals(&self, out: &mut Vec<f64>) {
        let us = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64 / 1e6);
        out.push(us(self.delay_min));
        out.push(us(self.curr_rtt));
        out.push(us(self.delay_min.map(delay_thresh_us)));
        out.push(self.sample_cnt as f64);
        // The ACK train so far (last_ack - round_start) and the length that ends startup
        // (delay_min plus the ACK-delay cushion, halved unless paced, as `ack_train` tests it).
        out.push(if self.end_seq.is_some() { self.last_ack.saturating_sub(self.round_start) as f64 / 1e6 } else { f64::NAN });
        let threshold = self.train_threshold_us();
        out.push(us(self.delay_min.map(|_| if self.cfg.paced { threshold } else { threshold >> 1 })));
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        self.on_ack_with(view, ack, &mut |h, now| h.ack_train(now))
    }

    /// `bictcp_state(TCP_CA_Loss)`: an RTO resets every CUBIC variable (found, delay_min) and the
    /// round. A fast retransmit leaves HyStart's state alone.
    fn on_congestion(&mut self, _view: &CcView, ev: &CongestionEvent) {
        if ev.kind == CongestionKind::Timeout {
            // NOTE: the kernel sets end_seq to SND.NXT at the timeout; the event does not carry it,
            // so the next ACK that reaches the reset starts a round.
            *self = HyStartLinux::new(self.cfg);
        }
    }
}

impl HyStartLinux {
    /// One slow-start ACK, with `train` as the ACK-train test (see [`HyStartLinux::acked_with`]).
    pub(crate) fn on_ack_with(&mut self, view: &CcView, ack: &AckEvent, train: &mut dyn FnMut(&mut HyStartLinux, u64) -> Option<StartupAction>) -> StartupAction {
        let action = self.acked_with(view, ack, train);
        // Linux ≤ 5.15 `bictcp_cong_avoid`, which runs after `cubictcp_acked`: "if
        // (tcp_in_slow_start(tp)) { if (hystart && after(ack, ca->end_seq))
        // bictcp_hystart_reset(sk); ...".
        if self.cfg.round_reset == RoundReset::EveryAck && action.exit.is_none() && view.ssthresh.above(view.cwnd) && self.end_seq.is_none_or(|end| ack.ack_seq > end) {
            self.reset_round(ack.now.as_nanos() / 1_000, ack.snd_nxt);
        }
        action
    }

    /// `cubictcp_acked` and `hystart_update` for one ACK, with `train` as the ACK-train test: it is
    /// called where the kernel's runs (an RTT sample, nothing found, slow start, past the round
    /// reset and the `low_window` gate, `detect` including the train) with the ACK's time in µs,
    /// and an exit it returns ends startup (`found`). [`HyStartLinux::ack_train`] is the kernel's;
    /// SUSS puts its own there (suss.rs, `suss_cap` in its `tcp_cubic.c`).
    fn acked_with(&mut self, view: &CcView, ack: &AckEvent, train: &mut dyn FnMut(&mut HyStartLinux, u64) -> Option<StartupAction>) -> StartupAction {
        let grow = StartupAction::grow(ack.newly_acked as f64);
        // `cubictcp_acked` runs on RTT samples only: "Some calls are for duplicates without
        // timestamps" / "if (sample->rtt_us < 0) return;".
        let Some(sample) = ack.rtt else { return grow };
        // "delay = sample->rtt_us; if (delay == 0) delay = 1;"
        let delay = (sample.as_nanos() / 1_000).max(1);
        // NOTE: the kernel ignores samples for 1 s after a CUBIC epoch starts (after a loss
        // reduction); this plug-in only sees slow-start ACKs, where no epoch is running.
        // "first time call or link delay decreases"
        let delay_min = self.delay_min.map_or(delay, |d| d.min(delay));
        self.delay_min = Some(delay_min);

        if self.found || !view.ssthresh.above(view.cwnd) {
            return grow;
        }
        let now = ack.now.as_nanos() / 1_000;
        let past_round = self.end_seq.is_none_or(|end| ack.ack_seq > end);
        match self.cfg.round_reset {
            // Linux ≥ 6.14: "if (!ca->found && tcp_in_slow_start(tp) && hystart)
            // hystart_update(sk, delay);" and there "if (after(tp->snd_una, ca->end_seq))
            // bictcp_hystart_reset(sk); /* hystart triggers when cwnd is larger than some
            // threshold */ if (tcp_snd_cwnd(tp) < hystart_low_window) return;".
            RoundReset::Ungated => {
                if past_round {
                    self.reset_round(now, ack.snd_nxt);
                }
                if view.cwnd < self.cfg.low_window {
                    return grow;
                }
            }
            // Linux 5.16–6.13: "if (!ca->found && tcp_in_slow_start(tp) && hystart &&
            // tcp_snd_cwnd(tp) >= hystart_low_window) hystart_update(sk, delay);", whose first
            // line is the reset.
            RoundReset::Gated => {
                if view.cwnd < self.cfg.low_window {
                    return grow;
                }
                if past_round {
                    self.reset_round(now, ack.snd_nxt);
                }
            }
            // Linux ≤ 5.15: the same gate, and the reset in `bictcp_cong_avoid` (see `on_ack`).
            RoundReset::EveryAck => {
                if view.cwnd < self.cfg.low_window {
                    return grow;
                }
            }
        }

        if self.cfg.detect.ack_train() {
            if let Some(exit) = train(self, now) {
                self.found = true;
                return exit;
            }
        }

        if self.cfg.detect.delay() {
            // "obtain the minimum delay of more than sampling packets"
            let curr = self.curr_rtt.map_or(delay, |c| c.min(delay));
            self.curr_rtt = Some(curr);
            if self.sample_cnt < self.cfg.min_samples {
                self.sample_cnt += 1;
            } else if curr > delay_min + delay_thresh_us(delay_min) {
                self.found = true;
                return StartupAction::exit(ExitReason::DelayIncrease);
            }
        }
        grow
    }

    /// The kernel's ACK-train test ("first detection parameter - ack-train detection").
    fn ack_train(&mut self, now: u64) -> Option<StartupAction> {
        if !self.close_ack(now) {
            return None;
        }
        let mut threshold = self.train_threshold_us();
        // "Hystart ack train triggers if we get ack past ca->delay_min/2. Pacing might have
        // delayed packets up to RTT/2 during slow start."
        if !self.cfg.paced {
            threshold >>= 1;
        }
        // NOTE: the deciding ACK adds nothing, so ssthresh is the window the detector saw (the
        // kernel gives that ACK a CUBIC increment, cwnd == ssthresh).
        (now.saturating_sub(self.round_start) > threshold).then(|| StartupAction::exit(ExitReason::AckTrain))
    }

    /// "if ((s32)(now - ca->last_ack) <= hystart_ack_delta_us) { ca->last_ack = now; ...": the ACK
    /// at `now` (µs) extends the train.
    pub(crate) fn close_ack(&mut self, now: u64) -> bool {
        if now.saturating_sub(self.last_ack) <= self.cfg.ack_delta.as_nanos() / 1_000 {
            self.last_ack = now;
            return true;
        }
        false
    }

    /// `delay_min + hystart_ack_delay()`, µs: the train threshold before halving.
    pub(crate) fn train_threshold_us(&self) -> u64 {
        self.delay_min.unwrap_or(0) + self.cfg.ack_delay.as_nanos() / 1_000
    }

    /// `round_start`, µs.
    pub(crate) fn round_start_us(&self) -> u64 {
        self.round_start
    }

    /// `delay_min`, µs (`None` before the first sample).
    pub(crate) fn delay_min_us(&self) -> Option<u64> {
        self.delay_min
    }

    /// `curr_rtt`, µs: the running minimum of the round (`None` is the kernel's `~0U`).
    pub(crate) fn curr_rtt_us(&self) -> Option<u64> {
        self.curr_rtt
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// `detect` of `startup = { algorithm = "hystart-linux", ... }`.
pub const DETECT: Param<&'static str> = Param::choice("detect", &["both", "ack-train", "delay"], "both", "hystart_detect: which detectors run");

/// `low_window` of `startup = { algorithm = "hystart-linux", ... }`.
pub const LOW_WINDOW: Param<u64> = Param::window("low_window", "16pkt", "hystart_low_window: detection runs only while cwnd >= low_window");

/// `ack_delta` of `startup = { algorithm = "hystart-linux", ... }`.
pub const ACK_DELTA: Param<Dur> = Param::duration("ack_delta", "2ms", "hystart_ack_delta_us: largest gap between two ACKs of a train (<=)");

/// `min_samples` of `startup = { algorithm = "hystart-linux", ... }`.
pub const MIN_SAMPLES: Param<u64> = Param::integer("min_samples", "8", "HYSTART_MIN_SAMPLES: RTT samples per round before the delay test");

/// `ack_delay` of `startup = { algorithm = "hystart-linux", ... }`.
pub const ACK_DELAY: Param<Dur> = Param::duration("ack_delay", "0ms", "hystart_ack_delay(): cushion added to delay_min in the train threshold; the kernel's is about 1ms below 262 MB/s");

/// `paced` of `startup = { algorithm = "hystart-linux", ... }`.
pub const PACED: Param<bool> = Param::flag("paced", "false", "the flow is paced: the train must exceed delay_min instead of delay_min/2");

/// `round_reset` of `startup = { algorithm = "hystart-linux", ... }`.
pub const ROUND_RESET: Param<&'static str> = Param::choice("round_reset", &["ungated", "gated", "every-ack"], "ungated", "ungated: Linux >= 6.14 and stable kernels with commit 25c1a9ca53db (a round starts on every slow-start ACK past the round's end, at any cwnd); gated: Linux 5.16-6.13 (only while cwnd >= low_window); every-ack: Linux 2.6.29-5.15 (in cong_avoid, after the tests)");

/// The variables `hystart-linux` decides on, in [`StartupAlgorithm::signals`]' order.
pub const SIGNALS: &[super::Signal] = &[
    super::Signal::new("delay_min", "s", "delay_min: the smallest RTT of the connection"),
    super::Signal::new("round_min_rtt", "s", "curr_rtt: the minimum of this round's first samples"),
    super::Signal::new("delay_thresh", "s", "clamp(delay_min / 8, 4 ms, 16 ms): curr_rtt above delay_min + this ends startup (delay)"),
    super::Signal::new("sample_cnt", "acks", "RTT samples this round (the delay test needs hystart_min_samples)"),
    super::Signal::new("ack_train", "s", "the ACK train so far: last_ack - round_start"),
    super::Signal::new("train_thresh", "s", "(delay_min + ack_delay) / 2 (not halved when paced): a longer train ends startup (ack train)"),
];

/// The declaration of `hystart-linux` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "hystart-linux",
        role: "startup",
        summary: "Hybrid Slow Start as in Linux tcp_cubic.c: ssthresh = cwnd once an ACK train exceeds delay_min/2 or the round's RTT exceeds delay_min + clamp(delay_min/8, 4 ms, 16 ms); µs clock, cwnd >= 16",
        source: "Linux net/ipv4/tcp_cubic.c hystart_update (ALGORITHMS.md §8.3)",
        params: &[DETECT.info, LOW_WINDOW.info, ACK_DELTA.info, MIN_SAMPLES.info, ACK_DELAY.info, PACED.info, ROUND_RESET.info],
    },
    build: super::Build::Native(|p, _| super::Startup::HyStartLinux(HyStartLinux::new(HyStartLinuxConfig {
            detect: HyStartDetect::from_name(p.get(&DETECT)).expect("the registry lists the choices"),
            low_window: p.get(&LOW_WINDOW) as f64,
            ack_delta: p.get(&ACK_DELTA),
            min_samples: p.get(&MIN_SAMPLES).min(u32::MAX as u64) as u32,
            ack_delay: p.get(&ACK_DELAY),
            paced: p.get(&PACED),
            round_reset: RoundReset::from_name(p.get(&ROUND_RESET)).expect("the registry lists the choices"),
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
    use crate::startup::hystart::tests::paper;
    use crate::testkit::{at_ms, ms, Sender, MSS};
    use crate::startup::{HyStartConfig, Startup};
    use crate::{Phase, Ssthresh};
    use startlab_units::Time;

    fn linux(cfg: HyStartLinuxConfig) -> Startup {
        Startup::HyStartLinux(HyStartLinux::new(cfg))
    }

    fn default_linux() -> Startup {
        linux(HyStartLinuxConfig::new(MSS))
    }

    #[test]
    fn the_delay_threshold_is_an_eighth_of_delay_min_clamped_to_4_and_16_ms() {
        // ALGORITHMS.md §8.7: 2 → 4, 20 → 4, 80 → 10, 128 → 16, 200 → 16 (ms).
        for (min, thresh) in [(2, 4), (20, 4), (80, 10), (128, 16), (200, 16)] {
            assert_eq!(delay_thresh_us(min * 1000), thresh * 1000, "delay_min {min} ms");
        }
    }

    #[test]
    fn the_train_must_exceed_half_the_minimum_rtt_where_the_paper_only_reaches_it() {
        // The timeline of the paper's ACK-train test: IW 20, RTT 100 ms, ACKs 1 ms apart; round 3
        // (80 ACKs) starts at t=300 ms. The paper fires at t=350 ms (50 ms ≥ dMin/2); Linux needs
        // now − round_start > 50 000 µs and fires one ACK later, at t=351 ms.
        let mut runs = vec![];
        for startup in [paper(HyStartConfig::new(MSS)), default_linux()] {
            let mut s = Sender::new(startup, 20);
            assert_eq!(s.flight_acks(at_ms(100), ms(1), |_| Some(ms(100))), None);
            assert_eq!(s.flight_acks(at_ms(200), ms(1), |_| Some(ms(100))), None);
            runs.push((s.flight_acks(at_ms(300), ms(1), |_| Some(ms(100))), s.exit()));
        }
        assert_eq!(runs[0], (Some(50), Some((ExitReason::AckTrain, 130.0))), "paper: ≥ dMin/2");
        assert_eq!(runs[1], (Some(51), Some((ExitReason::AckTrain, 131.0))), "Linux: > delay_min/2");
    }

    #[test]
    fn acks_exactly_two_milliseconds_apart_form_a_train_for_linux_but_not_for_the_paper() {
        // IW 20, RTT 100 ms, ACKs 2 ms apart. Round 2 (40 ACKs from t=1000 ms): Linux's `≤ 2000 µs`
        // keeps the train going and it passes 50 ms at the 27th ACK (52 ms); the paper's `< 2 ms`
        // never sees a train, and the flat RTT gives it nothing else.
        let mut l = Sender::new(default_linux(), 20);
        let mut p = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        for s in [&mut l, &mut p] {
            assert_eq!(s.flight_acks(at_ms(100), ms(2), |_| Some(ms(100))), None, "round 1 spans 38 ms");
        }
        assert_eq!(l.flight_acks(at_ms(1000), ms(2), |_| Some(ms(100))), Some(26));
        assert_eq!(l.exit(), Some((ExitReason::AckTrain, 66.0)));
        for round in 2..=5 {
            assert_eq!(p.flight_acks(at_ms(1000 * round), ms(2), |_| Some(ms(100))), None);
        }
        assert_eq!(p.c.phase(), Phase::SlowStart);
    }

    #[test]
    fn a_five_ms_rise_is_a_delay_increase_for_the_paper_but_not_for_linux() {
        // RTT 80 ms in round 1, 85 ms in round 2, ACKs 3 ms apart (no trains). Paper: 85 ≥ lastRTT
        // 80 + η 5 on the 8th sample. Linux: 85 > delay_min 80 + 10 ms is false.
        let mut p = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        let mut l = Sender::new(default_linux(), 20);
        for s in [&mut p, &mut l] {
            assert_eq!(s.flight_acks(at_ms(100), ms(3), |_| Some(ms(80))), None);
        }
        assert_eq!(p.flight_acks(at_ms(300), ms(3), |_| Some(ms(85))), Some(7));
        assert_eq!(p.exit(), Some((ExitReason::DelayIncrease, 47.0)));
        assert_eq!(l.flight_acks(at_ms(300), ms(3), |_| Some(ms(85))), None);
    }

    #[test]
    fn a_slow_rise_trips_linux_against_delay_min_but_never_the_paper_against_the_last_round() {
        // RTT 80, 83, 86, 89, 92 ms in rounds 1-5 (3 ms a round), ACKs 3 ms apart. The paper's
        // baseline is the previous round (+3 < η = 5 or 6 every round); Linux's is delay_min = 80 ms:
        // round 5's 92 ms > 90 ms on its 9th sample (the first tested after 8), at cwnd 320 + 8.
        let mut p = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        let mut l = Sender::new(default_linux(), 20);
        for round in 0..4 {
            let rtt = ms(80 + 3 * round);
            for s in [&mut p, &mut l] {
                assert_eq!(s.flight_acks(at_ms(1000 * (round + 1)), ms(3), |_| Some(rtt)), None, "round {}", round + 1);
            }
        }
        assert_eq!(l.flight_acks(at_ms(5000), ms(3), |_| Some(ms(92))), Some(8));
        assert_eq!(l.exit(), Some((ExitReason::DelayIncrease, 328.0)));
        assert_eq!(p.flight_acks(at_ms(5000), ms(3), |_| Some(ms(92))), None);
    }

    #[test]
    fn linux_keeps_a_running_minimum_and_a_late_low_sample_saves_the_round() {
        // Round 1 at 80 ms (delay_min 80, threshold 90 ms). Round 2: eight samples at 100 ms, then
        // 85 ms: the running minimum drops to 85 before the first test, and nothing fires. The paper
        // takes the first eight only and fires on the 8th.
        let rtt = |i: u64| Some(ms(if i < 8 { 100 } else { 85 }));
        let mut l = Sender::new(default_linux(), 20);
        let mut p = Sender::new(paper(HyStartConfig::new(MSS)), 20);
        for s in [&mut l, &mut p] {
            assert_eq!(s.flight_acks(at_ms(100), ms(3), |_| Some(ms(80))), None);
        }
        assert_eq!(l.flight_acks(at_ms(300), ms(3), rtt), None, "Linux: min(100, 85) = 85 ≤ 90");
        assert_eq!(p.flight_acks(at_ms(300), ms(3), rtt), Some(7), "paper: min of the first 8 = 100 ≥ 85");
        // Same round with the 9th sample at 95 ms: Linux's first test sees 95 > 90.
        let mut l = Sender::new(default_linux(), 20);
        assert_eq!(l.flight_acks(at_ms(100), ms(3), |_| Some(ms(80))), None);
        assert_eq!(l.flight_acks(at_ms(300), ms(3), |i| Some(ms(if i < 8 { 100 } else { 95 }))), Some(8));
    }

    #[test]
    fn today_rounds_start_on_flight_boundaries_below_the_gate_too() {
        // Linux ≥ 6.14. IW 10, RTT 20 ms (train threshold 10 ms), ACKs 1 ms apart, one per segment.
        let mut s = Sender::new(default_linux(), 10);
        // Flight 1, t=20..29 ms: its first ACK starts a round (end_seq = SND.NXT = segment 10) though
        // cwnd is 10 < 16; no test runs below 16.
        assert_eq!(s.flight_acks(at_ms(20), ms(1), |_| Some(ms(20))), None);
        // Flight 2, t=40..59 ms: its first ACK (segment 11) passes end_seq, so the round starts at
        // the flight's start, and the train passes 10 ms at t=51 ms, its 12th ACK, cwnd 20 + 11.
        assert_eq!(s.flight_acks(at_ms(40), ms(1), |_| Some(ms(20))), Some(11));
        assert_eq!(s.exit(), Some((ExitReason::AckTrain, 31.0)));
    }

    #[test]
    fn linux_5_16_to_6_13_gate_opens_at_sixteen_segments_and_the_lazy_reset_starts_rounds_mid_flight() {
        // IW 10, RTT 20 ms (train threshold 10 ms), ACKs 1 ms apart, one per segment.
        let mut s = Sender::new(linux(HyStartLinuxConfig { round_reset: RoundReset::Gated, ..HyStartLinuxConfig::new(MSS) }), 10);
        // Flight 1, t=20..29 ms, cwnd 10 → 20: the ACKs at cwnd 10..15 are not looked at; the ACK at
        // t=26 ms (cwnd 16, ≥ 16) opens the gate and resets the round there (end_seq = SND.NXT =
        // segment 22). The train t=26..29 spans 3 ms.
        assert_eq!(s.flight_acks(at_ms(20), ms(1), |_| Some(ms(20))), None);
        // Flight 2, t=40..59 ms: its first ACK is 11 ms after last_ack, so no train; the ACK of
        // segment 23 (t=52 ms) passes end_seq and starts Linux's next round (end_seq = segment 54).
        // The train t=52..59 spans 7 ms.
        assert_eq!(s.flight_acks(at_ms(40), ms(1), |_| Some(ms(20))), None);
        // Flight 3, t=100..139 ms: the round starts at the ACK of segment 55 (t=124 ms) and passes
        // 10 ms at t=135 ms, the 36th ACK of the flight, cwnd 40 + 35.
        assert_eq!(s.flight_acks(at_ms(100), ms(1), |_| Some(ms(20))), Some(35));
        assert_eq!(s.exit(), Some((ExitReason::AckTrain, 75.0)));
        // The paper's rounds follow the flights (§0.3): flight 2's round starts at its first ACK
        // (t=40 ms, cwnd 20 > 16) and its train reaches 10 ms at t=50 ms, a whole round earlier.
        let mut p = Sender::new(paper(HyStartConfig::new(MSS)), 10);
        assert_eq!(p.flight_acks(at_ms(20), ms(1), |_| Some(ms(20))), None);
        assert_eq!(p.flight_acks(at_ms(40), ms(1), |_| Some(ms(20))), Some(10));
    }

    #[test]
    fn the_detect_choice_switches_each_detector_off() {
        let train_only = HyStartLinuxConfig { detect: HyStartDetect::AckTrain, ..HyStartLinuxConfig::new(MSS) };
        let delay_only = HyStartLinuxConfig { detect: HyStartDetect::Delay, ..HyStartLinuxConfig::new(MSS) };
        // A train timeline (flat RTT, 1 ms spacing): only a train detector fires.
        let train = |cfg| {
            let mut s = Sender::new(linux(cfg), 20);
            s.flight_acks(at_ms(100), ms(1), |_| Some(ms(40)));
            s.flight_acks(at_ms(200), ms(1), |_| Some(ms(40)));
            s.exit()
        };
        assert_eq!(train(train_only), Some((ExitReason::AckTrain, 61.0)), "round 2 passes 20 ms at its 22nd ACK");
        assert_eq!(train(delay_only), None);
        // A delay timeline (3 ms spacing, 80 → 100 ms): only a delay detector fires.
        let delay = |cfg| {
            let mut s = Sender::new(linux(cfg), 20);
            s.flight_acks(at_ms(100), ms(3), |_| Some(ms(80)));
            s.flight_acks(at_ms(300), ms(3), |_| Some(ms(100)));
            s.exit()
        };
        assert_eq!(delay(delay_only), Some((ExitReason::DelayIncrease, 48.0)), "the 9th sample of round 2");
        assert_eq!(delay(train_only), None);
    }

    #[test]
    fn a_paced_flow_needs_a_train_of_the_whole_minimum_rtt_and_the_cushion_adds_to_it() {
        // RTT 40 ms, ACKs 1 ms apart, IW 20; round 2 has 40 ACKs from t=200 ms, round 3 80 from t=300.
        let exit_at = |cfg: HyStartLinuxConfig| {
            let mut s = Sender::new(linux(cfg), 20);
            let mut fired = vec![];
            for start in [100, 200, 300] {
                let f = s.flight_acks(at_ms(start), ms(1), |_| Some(ms(40)));
                fired.push(f);
                if f.is_some() {
                    break;
                }
            }
            (fired, s.exit())
        };
        let base = HyStartLinuxConfig::new(MSS);
        // Unpaced: > 20 ms at the 22nd ACK of round 2.
        assert_eq!(exit_at(base).0, vec![None, Some(21)]);
        // With the kernel's 1 ms cushion: > 20.5 ms, still the 22nd ACK (21 ms).
        assert_eq!(exit_at(HyStartLinuxConfig { ack_delay: ms(1), ..base }).0, vec![None, Some(21)]);
        // Paced: > 40 ms: round 2 spans 39 ms, round 3 passes at its 42nd ACK.
        assert_eq!(exit_at(HyStartLinuxConfig { paced: true, ..base }), (vec![None, None, Some(41)], Some((ExitReason::AckTrain, 121.0))));
    }

    #[test]
    fn a_timeout_resets_found_and_delay_min() {
        let mut h = HyStartLinux::new(HyStartLinuxConfig::new(MSS));
        let view = CcView { cwnd: 40.0 * MSS as f64, ssthresh: Ssthresh::Infinite, mss: MSS, round: 3, min_rtt: None, new_round: false };
        let ack = |us: u64| AckEvent {
            now: Time(us * 1000),
            newly_acked: MSS,
            ack_seq: us,
            snd_nxt: 1_000_000,
            rtt: Some(ms(20)),
            flight_size: 40 * MSS,
            delivered: us,
            ..AckEvent::default()
        };
        // t=100 ms: the first ACK resets the round; ACKs every 500 µs; > 10 ms at t=110.5 ms.
        for k in 0..21 {
            assert_eq!(h.on_ack(&view, &ack(100_000 + 500 * k)).exit, None, "k={k}");
        }
        assert_eq!(h.on_ack(&view, &ack(110_500)).exit, Some(ExitReason::AckTrain));
        h.on_congestion(&view, &CongestionEvent { now: at_ms(300), kind: CongestionKind::FastRetransmit, flight_size: 0, enter_recovery: true });
        assert!(h.found, "a fast retransmit leaves found");
        h.on_congestion(&view, &CongestionEvent { now: at_ms(900), kind: CongestionKind::Timeout, flight_size: 0, enter_recovery: false });
        assert!(!h.found && h.delay_min.is_none() && h.end_seq.is_none(), "TCP_CA_Loss resets everything");
    }
}
