//! SEARCH, Slow start Exit At Right CHokepoint — Chung, Kachooei, Li, Claypool,
//! draft-chung-ccwg-search-09 ("SEARCH -- a New Slow Start Algorithm for TCP and QUIC", March 2026);
//! Kachooei et al., "Improving TCP Slow Start Performance in Wireless Networks with SEARCH",
//! WoWMoM 2024. Not in ALGORITHMS.md; this file follows draft-09.
//!
//! The sender determines the congestion point from acknowledged deliveries: "the sender computes
//! the delivered bytes compared to the sent bytes, smoothed to account for link latency variation
//! and normalized to accommodate link capacities" (draft-09, abstract). In slow start everything
//! sent is delivered one RTT later; past the congestion point the bottleneck delivers less than
//! was sent.
//!
//! Time is cut into bins of `BIN_DURATION = INITIAL_RTT · WINDOW_SIZE_FACTOR / W`; at each bin
//! boundary passed by an ACK the cumulative acked and sent byte counts are recorded. Then
//!
//! ```text
//! curr_delv = acked over the last W bins
//! prev_sent = sent over the W bins ending one (current) RTT earlier, interpolated between bins
//! norm_diff = (prev_sent − curr_delv) / prev_sent;   norm_diff >= THRESH  →  leave slow start
//! ```
//!
//! Constants as the draft names them: `WINDOW_SIZE_FACTOR` = 3.5, `W` = 10 bins, `EXTRA_BINS` = 15,
//! `THRESH` = 0.26. Parameter `drain` = true: on exit, cwnd becomes the bytes delivered over the
//! last initial RTT, the draft's drain target (see the NOTE at [`Search::target`]).

use crate::startup::{StartupAction, StartupAlgorithm};
use crate::{AckEvent, CcView, CongestionEvent, Dur, ExitReason, Time};

/// Configuration of [`Search`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchConfig {
    /// On exit, set cwnd to the drain target (bytes delivered over the last initial RTT).
    pub drain: bool,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig { drain: true }
    }
}

/// Bins of acked bytes: the current one and the W before it.
const NUM_ACKED_BINS: usize = Search::W as usize + 1;
/// Bins of sent bytes: the acked window plus EXTRA_BINS to look back one RTT (and one bin more for
/// the interpolation, since a look-back of EXTRA_BINS bins is refused).
const NUM_SENT_BINS: usize = NUM_ACKED_BINS + Search::EXTRA_BINS as usize;

/// SEARCH slow start.
#[derive(Clone, Debug)]
pub struct Search {
    cfg: SearchConfig,
    /// Cumulative bytes delivered at each bin boundary (ring indexed by bin number).
    acked_bins: [u64; NUM_ACKED_BINS],
    /// Cumulative bytes sent at each bin boundary (ring indexed by bin number).
    sent_bins: [u64; NUM_SENT_BINS],
    /// The current bin number, once initialised by the first RTT sample.
    curr_idx: Option<u64>,
    /// End of the current bin.
    bin_end: Time,
    /// `BIN_DURATION`.
    bin_duration: Dur,
    /// `INITIAL_RTT`, the first RTT sample.
    initial_rtt: Dur,
    /// The latest RTT sample.
    rtt: Option<Dur>,
    /// Bytes sent so far: the highest `SND.NXT` seen.
    sent: u64,
    /// The last normalised difference computed (at a bin boundary), for `[trace] startup`.
    last_norm_diff: Option<f64>,
}

impl Search {
    /// "WINDOW_SIZE = INITIAL_RTT × WINDOW_SIZE_FACTOR": the window spans 3.5 initial RTTs.
    pub const WINDOW_SIZE_FACTOR: f64 = 3.5;
    /// Bins per window.
    pub const W: u64 = 10;
    /// Bins beyond the window that let `prev_sent` look back one RTT.
    pub const EXTRA_BINS: u64 = 15;
    /// The normalised difference at which slow start ends.
    pub const THRESH: f64 = 0.26;

    /// A SEARCH slow start with `cfg`.
    pub fn new(cfg: SearchConfig) -> Search {
        Search {
            cfg,
            acked_bins: [0; NUM_ACKED_BINS],
            sent_bins: [0; NUM_SENT_BINS],
            curr_idx: None,
            bin_end: Time::ZERO,
            bin_duration: Dur::ZERO,
            initial_rtt: Dur::ZERO,
            rtt: None,
            sent: 0,
            last_norm_diff: None,
        }
    }

    fn acked(&self, idx: u64) -> u64 {
        self.acked_bins[(idx % NUM_ACKED_BINS as u64) as usize]
    }

    fn sent_at(&self, idx: u64) -> u64 {
        self.sent_bins[(idx % NUM_SENT_BINS as u64) as usize]
    }

    fn record(&mut self, idx: u64, acked: u64, sent: u64) {
        self.acked_bins[(idx % NUM_ACKED_BINS as u64) as usize] = acked;
        self.sent_bins[(idx % NUM_SENT_BINS as u64) as usize] = sent;
    }

    /// Initialisation on the first RTT sample: "BIN_DURATION = WINDOW_SIZE / W", the first bin
    /// holds the counts now and ends one bin duration later.
    fn initialize(&mut self, now: Time, rtt: Dur, delivered: u64) {
        let bin = (rtt.as_nanos() as f64 * Self::WINDOW_SIZE_FACTOR / Self::W as f64).round() as u64;
        if bin == 0 {
            return;
        }
        self.initial_rtt = rtt;
        self.bin_duration = Dur(bin);
        self.bin_end = now + self.bin_duration;
        self.curr_idx = Some(0);
        self.record(0, delivered, self.sent);
    }

    /// Forget everything; the next ACK with an RTT sample initialises again.
    fn reset(&mut self) {
        self.curr_idx = None;
    }

    /// `update_bins`: move to the bin containing `now`. Skipped bins repeat the last counts.
    /// Returns false when the state was reset.
    fn update_bins(&mut self, now: Time, delivered: u64) -> bool {
        let Some(curr) = self.curr_idx else { return false };
        let bin = self.bin_duration.as_nanos();
        let passed = now.saturating_since(self.bin_end).as_nanos() / bin + 1;
        // Handling missed bins (optional in draft-09): after more than a window of bins without
        // an ACK (an idle or application-limited sender) the history is stale; start over.
        if passed > Self::W {
            self.reset();
            return false;
        }
        let (last_acked, last_sent) = (self.acked(curr), self.sent_at(curr));
        for i in curr + 1..curr + passed {
            self.record(i, last_acked, last_sent);
        }
        let curr = curr + passed;
        self.curr_idx = Some(curr);
        self.bin_end += Dur(bin * passed);
        self.record(curr, delivered, self.sent);
        true
    }

    /// Bytes sent over the W bins ending at `prev_idx`, shifted `fraction` of a bin further back:
    /// linear interpolation between the windows ending at `prev_idx` and `prev_idx − 1`.
    /// NOTE: draft-09's pseudocode interpolates towards `prev_idx + 1`; like mozilla/neqo (which
    /// discussed it with the authors) we interpolate backwards, where the true point one RTT ago
    /// lies (the RTT is rounded down to whole bins).
    fn prev_sent(&self, prev_idx: u64, fraction: f64) -> f64 {
        let high = self.sent_at(prev_idx).saturating_sub(self.sent_at(prev_idx - Self::W)) as f64;
        let low = self.sent_at(prev_idx - 1).saturating_sub(self.sent_at(prev_idx - Self::W - 1)) as f64;
        high * (1.0 - fraction) + low * fraction
    }

    /// The normalised difference at the current bin, when there is enough history.
    fn norm_diff(&self, curr: u64, rtt: Dur) -> Option<f64> {
        let bin = self.bin_duration.as_nanos();
        let back = rtt.as_nanos() / bin;
        let fraction = (rtt.as_nanos() % bin) as f64 / bin as f64;
        let prev_idx = curr.checked_sub(back)?;
        // Warming up: a window one RTT back, and the bin before it for interpolation.
        if prev_idx <= Self::W {
            return None;
        }
        // RTT inflated beyond what the sent bins remember.
        if curr - prev_idx >= Self::EXTRA_BINS {
            return None;
        }
        // "curr_delv = acked bytes over the last W bins", "prev_sent = sent bytes over W bins one
        // RTT earlier"
        let curr_delv = self.acked(curr).saturating_sub(self.acked(curr - Self::W)) as f64;
        let prev_sent = self.prev_sent(prev_idx, fraction);
        if prev_sent <= 0.0 {
            return None;
        }
        // "norm_diff = (prev_sent − curr_delv) / prev_sent"
        Some(((prev_sent - curr_delv) / prev_sent).max(0.0))
    }

    /// The drain target: bytes delivered over the last initial RTT (`ceil(INITIAL_RTT / BIN_DURATION)`
    /// bins), the draft's estimate of the pipe without a queue.
    /// NOTE: draft-09 drains cwnd towards this target gradually while still in slow start; the
    /// controller ends startup once, so we set cwnd to the target at the exit (as Vegas does);
    /// the sender then stays silent until the flight falls below it, which drains the queue.
    fn target(&self, curr: u64) -> u64 {
        let bins = self.initial_rtt.as_nanos().div_ceil(self.bin_duration.as_nanos()).min(Self::W);
        self.acked(curr).saturating_sub(self.acked(curr.saturating_sub(bins)))
    }

    #[cfg(test)]
    fn bin_duration(&self) -> Dur {
        self.bin_duration
    }
}

impl StartupAlgorithm for Search {
    fn signals(&self, out: &mut Vec<f64>) {
        out.push(self.curr_idx.map_or(f64::NAN, |c| c as f64));
        out.push(self.last_norm_diff.unwrap_or(f64::NAN));
        out.push(Self::THRESH);
        out.push(self.rtt.map_or(f64::NAN, |r| r.as_secs_f64()));
    }

    fn on_ack(&mut self, view: &CcView, ack: &AckEvent) -> StartupAction {
        let grow = StartupAction::grow(ack.newly_acked.min(view.mss) as f64);
        // NOTE: sent bytes are read from SND.NXT as the ACK arrives (the draft counts bytes as they
        // are sent; at the ACK both agree). Retransmissions are not counted; in slow start before
        // the first loss there are none.
        self.sent = self.sent.max(ack.snd_nxt);
        if let Some(rtt) = ack.rtt {
            self.rtt = Some(rtt);
        }
        let Some(rtt) = self.rtt else { return grow };
        if self.curr_idx.is_none() {
            self.initialize(ack.now, rtt, ack.delivered);
            return grow;
        }
        // SEARCH acts only when an ACK passes the current bin's end.
        if ack.now <= self.bin_end || !self.update_bins(ack.now, ack.delivered) {
            return grow;
        }
        let curr = self.curr_idx.expect("bins were just updated");
        let norm_diff = self.norm_diff(curr, rtt);
        self.last_norm_diff = norm_diff;
        match norm_diff {
            Some(norm_diff) if norm_diff >= Self::THRESH => {
                let set_cwnd = self.cfg.drain.then(|| (self.target(curr) as f64).min(view.cwnd));
                StartupAction { set_cwnd, exit: Some(ExitReason::BandwidthPlateau), ..Default::default() }
            }
            _ => grow,
        }
    }

    fn on_congestion(&mut self, _view: &CcView, _ev: &CongestionEvent) {
        self.reset();
    }
}


use crate::decl::{AlgorithmInfo, Param, no_check};

/// The variables SEARCH decides on, in [`StartupAlgorithm::signals`]' order.
pub const SIGNALS: &[super::Signal] = &[
    super::Signal::new("bin", "-", "the current bin's index (bins of initial RTT x 3.5 / 10)"),
    super::Signal::new("norm_diff", "-", "(prev_sent - curr_delv) / prev_sent at the last bin boundary (NaN while warming up)"),
    super::Signal::new("thresh", "-", "THRESH: a norm_diff at or above it ends startup"),
    super::Signal::new("rtt", "s", "the RTT SEARCH looks back by (the latest sample)"),
];

/// `drain` of `startup = { algorithm = "search", ... }`.
pub const DRAIN: Param<bool> = Param::flag("drain", "true", "at the exit set cwnd to the bytes delivered over the last initial RTT (the draft's drain target, reached at once); false keeps cwnd");

/// The declaration of `search` (its entry in `startup::DECLS`).
pub const DECL: super::StartupDecl = super::StartupDecl {
    info: AlgorithmInfo {
        name: "search",
        role: "startup",
        summary: "SEARCH: 10 bins of 0.35 initial RTT; exit when bytes delivered over the window fall 26% below those sent over the window one RTT earlier",
        source: "draft-chung-ccwg-search-09 (Chung, Kachooei, Li, Claypool, March 2026)",
        params: &[DRAIN.info],
    },
    build: super::Build::Native(|p, _| super::Startup::Search(Search::new(SearchConfig { drain: p.get(&DRAIN) }))),
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
    use crate::Ssthresh;

    const MSS: u64 = 1000;

    fn view() -> CcView {
        CcView { cwnd: 200_000.0, ssthresh: Ssthresh::Infinite, mss: MSS, round: 0, min_rtt: None, new_round: false }
    }

    fn ack(now: Time, rtt_ms: u64, delivered: u64, snd_nxt: u64) -> AckEvent {
        AckEvent {
            now,
            newly_acked: MSS,
            ack_seq: delivered,
            snd_nxt,
            rtt: Some(Dur::from_millis(rtt_ms)),
            flight_size: snd_nxt - delivered,
            cwnd_limited: true,
            acked_segments: 1,
            timer_triggered: false,
            delivered,
            rate_sample: None,
            ce_bytes: 0,
        }
    }

    /// Feeds one ACK per bin, just after each bin boundary: bin k has sent `sent(k)` and delivered
    /// `delivered(k)` bytes in total. The first ACK's RTT (100 ms) sets 35 ms bins; later samples
    /// are 70 ms, exactly two bins. Returns the bin at which SEARCH ended slow start, and the action.
    fn run(sent: impl Fn(u64) -> u64, delivered: impl Fn(u64) -> u64, bins: u64) -> Option<(u64, StartupAction)> {
        let mut s = Search::new(SearchConfig::default());
        s.on_ack(&view(), &ack(Time::ZERO, 100, delivered(0), sent(0)));
        assert_eq!(s.bin_duration(), Dur::from_millis(35), "100 ms · 3.5 / 10");
        for k in 1..bins {
            let now = Time(k * 35_000_000 + 1_000);
            let a = s.on_ack(&view(), &ack(now, 70, delivered(k), sent(k)));
            if a.exit.is_some() {
                return Some((k, a));
            }
        }
        None
    }

    #[test]
    fn delivering_what_was_sent_one_rtt_earlier_never_exits() {
        // 10 kB sent per bin, each byte delivered two bins (one RTT) later: norm_diff = 0.
        assert!(run(|k| 10_000 * k, |k| 10_000 * k.saturating_sub(2), 60).is_none());
    }

    #[test]
    fn exits_on_the_bin_where_the_delivered_bytes_stop_growing() {
        // Bins 0..=15 deliver what was sent two bins before; from bin 16 on nothing more is
        // delivered (D = 130 kB). From bin 13 (the first with prev_idx = 11 > W) prev_sent is
        // S(k−2) − S(k−12) = 100 kB, and curr_delv = D(k) − D(k−10):
        //   bin 16: 130 − 40 = 90 kB → 0.10;  bin 17: 80 kB → 0.20;  bin 18: 70 kB → 0.30 ≥ 0.26.
        let (bin, a) = run(|k| 10_000 * k, |k| 10_000 * k.min(15).saturating_sub(2), 60).expect("SEARCH exits");
        assert_eq!(bin, 18, "the third bin after the plateau crosses THRESH");
        assert_eq!(a.exit, Some(ExitReason::BandwidthPlateau));
        assert_eq!(a.increase, 0.0);
        // Drain target: delivered over ceil(100/35) = 3 bins = 0: cwnd to nothing (the controller
        // keeps one segment).
        assert_eq!(a.set_cwnd, Some(0.0));
    }

    #[test]
    fn a_halved_delivery_rate_exits_later_with_the_delivered_rtt_as_target() {
        // From bin 15, 5 kB per bin are delivered instead of 10 kB: norm_diff = 0.05 per bin since,
        // 0.25 at bin 20 (below THRESH), 0.30 at bin 21.
        let delivered = |k: u64| if k <= 15 { 10_000 * k.saturating_sub(2) } else { 130_000 + 5_000 * (k - 15) };
        let (bin, a) = run(|k| 10_000 * k, delivered, 60).expect("SEARCH exits");
        assert_eq!(bin, 21);
        // Target: D(21) − D(18) = 15 kB, below cwnd.
        assert_eq!(a.set_cwnd, Some(15_000.0));
    }

    #[test]
    fn prev_sent_interpolates_back_between_bins() {
        // Quadratic cumulative sends S(k) = 1000 k²: the window ending half a bin before bin p
        // holds S(p − 0.5) − S(p − 10.5) = 1000 (20p − 110) bytes, which linear interpolation of
        // the windows ending at p and p − 1 gives exactly.
        let mut s = Search::new(SearchConfig::default());
        s.bin_duration = Dur::from_millis(35);
        for k in 0..NUM_SENT_BINS as u64 {
            s.record(k, 0, 1000 * k * k);
        }
        let p = 20;
        assert_eq!(s.prev_sent(p, 0.5), 1000.0 * (20.0 * p as f64 - 110.0));
        assert_eq!(s.prev_sent(p, 0.0), 1000.0 * (p * p - (p - 10) * (p - 10)) as f64);
    }

    #[test]
    fn more_than_a_window_of_missed_bins_starts_over() {
        let mut s = Search::new(SearchConfig::default());
        s.on_ack(&view(), &ack(Time::ZERO, 100, 0, 10_000));
        s.on_ack(&view(), &ack(Time(36_000_000), 100, 1_000, 20_000));
        assert_eq!(s.curr_idx, Some(1));
        // Silence for 12 bins (> W): the history is dropped and rebuilt from the next sample.
        s.on_ack(&view(), &ack(Time(36_000_000 + 12 * 35_000_000), 100, 2_000, 30_000));
        assert_eq!(s.curr_idx, None);
        s.on_ack(&view(), &ack(Time(500_000_000), 100, 3_000, 40_000));
        assert_eq!(s.curr_idx, Some(0));
    }
}
