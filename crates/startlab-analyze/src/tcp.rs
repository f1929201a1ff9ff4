//! One TCP connection as a capture shows it: the handshake and its options, and per direction the
//! data sent, the ACKs that answer it, the retransmissions and their kind, RTT samples and the
//! flight over time (docs/ANALYZE.md gives the rules; the constants are named below).
//!
//! Sides: side 0 sent the connection's first captured packet, side 1 the other. Each side's data
//! is a [`Half`], acknowledged by the other side's ACKs.
//!
//! Round trips are measured in two halves, because a capture sits somewhere on the path: `rt[i]`
//! is the time from the capture seeing a packet towards side `i` to the capture seeing side `i`'s
//! answer — data → its ACK (Karn's rule), a TSval → its echo, SYN → SYN-ACK and SYN-ACK → ACK. At
//! the data sender `rt[sender]` is about 0 and `rt[receiver]` is the whole RTT; at the receiver the
//! other way round; in the middle each holds its part. The path's RTT is their sum.

use std::collections::VecDeque;
use std::net::SocketAddr;

use serde::Serialize;

use crate::decode::{flags, Segment};
use crate::series::Series;

/// A round's largest flight must be at least this many times the previous round's for the
/// exponential growth of startup to be still under way; the first round below it ends startup
/// (a flight plateau: a delay-based exit such as HyStart's, or a window that stopped growing).
/// Slow start doubles (2.0; 1.5 with delayed ACKs counted per ACK), congestion avoidance adds one
/// segment per round.
pub const PLATEAU_GROWTH: f64 = 1.25;
/// If the plateau round itself still grew by at least this factor over the round before, the
/// exit happened inside it (its largest flight is the exit flight); otherwise the exit flight is
/// the round before's largest.
pub const PARTIAL_GROWTH: f64 = 1.1;
/// Rounds evaluated before the plateau rule applies (the first round carries the initial window
/// and may be short of data).
pub const FIRST_JUDGED_ROUND: usize = 2;
/// The exit time of a plateau is when the flight first came within this fraction (or one MSS,
/// whichever is more) of the plateau's value: the window reached at the exit, before the slow
/// growth of congestion avoidance adds to it.
pub const PLATEAU_NEAR: f64 = 0.05;
/// A retransmission after at least `QUIET_RTT_FRACTION` × the smoothed RTT without an ACK
/// reaching the sender is timer-driven (a retransmission timeout, or a tail-loss probe); one
/// sooner after an ACK is ACK-driven (fast retransmit: duplicate ACKs, SACK, RACK).
pub const QUIET_RTT_FRACTION: f64 = 0.5;
/// Retransmissions remembered for the DSACK test (the oldest are forgotten).
const RETX_MEMORY: usize = 4096;
/// TSvals remembered per side for the echo test.
const TS_MEMORY: usize = 65_536;
/// SACK ranges kept per direction (merged; the furthest are dropped beyond this).
const SACK_RANGES: usize = 64;

/// Which kind of retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetxKind {
    /// ACK-driven: duplicate ACKs, SACK or RACK reordering windows (all retransmissions of the
    /// same recovery episode, until the cumulative ACK passes what was sent before it).
    Fast,
    /// Timer-driven, of the first unacknowledged segment: a retransmission timeout, and the
    /// retransmissions that follow it until the cumulative ACK passes what was sent before it.
    Timeout,
    /// Timer-driven, of the last segment sent while earlier ones are unacknowledged: a tail-loss
    /// probe.
    Probe,
}

/// A round trip's halves, measured from the capture (module documentation).
#[derive(Clone, Copy, Debug, Default)]
struct RoundTrip {
    min: Option<u64>,
    latest: Option<u64>,
    samples: u64,
}

impl RoundTrip {
    fn sample(&mut self, ns: u64) {
        self.min = Some(self.min.map_or(ns, |m| m.min(ns)));
        self.latest = Some(ns);
        self.samples += 1;
    }
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    start: i64,
    end: i64,
    t: u64,
    retransmitted: bool,
}

#[derive(Clone, Copy, Debug)]
struct Retx {
    start: i64,
    end: i64,
    spurious: bool,
}

/// One round: one smoothed RTT of the sender's data, from the first data packet on (time windows,
/// not sequence ranges: a paced sender or a receiver whose ACKs come in bursts sends a round's
/// data after the ACK that ends the round by sequence, which would split its growth in two).
#[derive(Clone, Debug, Default)]
struct Round {
    max_flight: i64,
    samples: Vec<(u64, i64)>,
}

/// What the analysis found the startup's end to be.
#[derive(Clone, Debug, Serialize)]
pub struct Exit {
    /// `loss`, `timeout` (the first retransmission and its kind) or `plateau` (the flight stopped
    /// growing), `rwnd` (a plateau at the receiver's advertised window).
    pub reason: &'static str,
    /// When: the first retransmission, or the flight first reaching the plateau's value, ns.
    pub t: u64,
    /// The flight then, bytes: the largest flight in the smoothed RTT before a retransmission, or
    /// the plateau's.
    pub flight: i64,
    /// The round (from 0) the exit was found in.
    pub round: usize,
}

/// The data one side sent and how the other side acknowledged it.
#[derive(Debug, Default)]
pub struct Half {
    /// The sequence number that is relative 0 (the byte after the SYN, or the first seen).
    base: Option<u32>,
    ref_rel: i64,
    /// MSS option of this side's SYN.
    pub mss_option: Option<u16>,
    /// Window scale this side announced (applies to the windows it sends).
    pub wscale: Option<u8>,
    /// SACK-permitted announced by this side.
    pub sack_permitted: bool,
    /// Timestamps option on this side's SYN.
    pub timestamps: bool,
    /// Largest payload seen in one segment, bytes.
    pub max_payload: u32,
    /// Highest sequence sent (relative, exclusive).
    snd_max: i64,
    /// The first data byte (relative).
    start: i64,
    /// Highest cumulative ACK seen (relative).
    una: i64,
    active: bool,
    /// First data packet, last data packet, ns.
    pub t_first: Option<u64>,
    /// Last data packet, ns.
    pub t_last: Option<u64>,
    /// Data packets, retransmissions included.
    pub packets: u64,
    /// Data packets sent again.
    pub retransmissions: u64,
    /// Of `retransmissions`, by kind: fast, timeout, probe.
    pub by_kind: [u64; 3],
    /// Recovery episodes begun by a fast retransmission.
    pub fast_episodes: u64,
    /// Episodes begun by a timeout.
    pub timeout_episodes: u64,
    /// Retransmissions a DSACK showed to be spurious.
    pub spurious: u64,
    /// Segments below the highest sequence whose older TSval shows them to be originals that
    /// arrived out of order (not counted as retransmissions).
    pub reordered: u64,
    /// DSACK blocks received.
    pub dsacks: u64,
    last_new_tsval: Option<u32>,
    out: VecDeque<Sent>,
    retx: VecDeque<Retx>,
    sacked: Vec<(i64, i64)>,
    sacked_bytes: i64,
    dupacks: u32,
    /// Duplicate ACKs received in all.
    pub dupacks_total: u64,
    last_ack_t: Option<u64>,
    recovery: Option<(RetxKind, i64)>,
    /// When the first recovery ended (the cumulative ACK reached what was sent before it), ns.
    pub first_recovery_end: Option<u64>,
    /// The receiver's last advertised window, bytes (scaled when both SYNs were seen).
    rwnd: Option<u64>,
    ack_hist: VecDeque<(u64, i64, i64)>,
    /// Per TSval of the receiver's ACKs (oldest first): the cumulative ACK and SACKed bytes after
    /// the last ACK carrying it.
    ts_acks: VecDeque<(u32, i64, i64)>,
    /// FIN sent (relative sequence of the FIN).
    pub fin: Option<i64>,
    /// When the cumulative ACK covered the FIN (or the last byte), ns.
    pub t_complete: Option<u64>,
    // Startup.
    rounds_done: usize,
    round_end: Option<u64>,
    prev_round: Round,
    cur_round: Round,
    round_growths: Vec<f64>,
    /// The startup's end, once found.
    pub exit: Option<Exit>,
    // Series.
    /// Per data packet: its relative start sequence.
    pub sent: Series<i64>,
    /// Per data packet: the flight after it (bytes), as the sender's state is estimated.
    pub flight: Series<i64>,
    /// Per ACK advancing the cumulative ACK: its relative value.
    pub acked: Series<i64>,
    /// Per ACK: the bytes delivered so far as the ACKs show them, the cumulative ACK plus the
    /// bytes SACKed above it (the delivery rate's count: a cumulative ACK that closes a repaired
    /// hole delivers only the hole).
    pub delivered: Series<i64>,
    /// Full RTT samples (both halves), ns.
    pub rtt: Series<u64>,
    /// Retransmissions: relative sequence, and the kind (0 fast, 1 timeout, 2 probe).
    pub retx_series: Series<(i64, u8)>,
    srtt: Option<f64>,
    /// Smallest full RTT sample, ns.
    pub min_rtt: Option<u64>,
    /// Largest full RTT sample, ns.
    pub max_rtt: Option<u64>,
    /// Full RTT samples taken.
    pub rtt_samples: u64,
}

/// Context a half needs from its connection at each event.
#[derive(Clone, Copy)]
struct Ctx {
    /// Round trip capture → data sender → capture (latest), ns; 0 when unknown.
    sender_shift: u64,
    /// The path's RTT from the two round trips (the handshake's before any data sample), ns.
    rtt_hint: Option<u64>,
    /// The user said the capture is at the sender: its state is the capture's, no estimate.
    at_sender: bool,
}

impl Half {
    fn rel(&mut self, seq: u32) -> i64 {
        let base = *self.base.get_or_insert(seq);
        let reference = base.wrapping_add(self.ref_rel as u32);
        let r = self.ref_rel + i64::from(seq.wrapping_sub(reference) as i32);
        if r > self.ref_rel {
            self.ref_rel = r;
        }
        r
    }

    fn mss(&self) -> i64 {
        i64::from(if self.max_payload > 0 { self.max_payload } else { u32::from(self.mss_option.unwrap_or(1448)) })
    }

    /// The cumulative ACK and SACKed bytes as the sender knew them `shift` ns before `t`.
    fn sender_view(&mut self, t: u64, shift: u64) -> (i64, i64) {
        let at = t.saturating_sub(shift);
        while self.ack_hist.len() >= 2 && self.ack_hist[1].0 <= at {
            self.ack_hist.pop_front();
        }
        match self.ack_hist.front() {
            Some(&(ta, una, sacked)) if ta <= at => (una, sacked),
            _ => (self.snd_start(), 0),
        }
    }

    /// The cumulative ACK and SACKed bytes after the last ACK seen with TSval `ecr`.
    fn ts_view(&mut self, ecr: u32) -> Option<(i64, i64)> {
        while self.ts_acks.front().is_some_and(|&(v, _, _)| (v.wrapping_sub(ecr) as i32) < 0) {
            self.ts_acks.pop_front();
        }
        match self.ts_acks.front() {
            Some(&(v, una, sacked)) if v == ecr => Some((una, sacked)),
            _ => None,
        }
    }

    fn snd_start(&self) -> i64 {
        self.start
    }

    fn on_data(&mut self, t: u64, seg: &Segment, ctx: Ctx) {
        if seg.flags & flags::SYN != 0 {
            self.base = Some(seg.seq.wrapping_add(1));
            self.ref_rel = 0;
            self.mss_option = seg.options.mss;
            self.wscale = seg.options.wscale;
            self.sack_permitted = seg.options.sack_permitted;
            self.timestamps = seg.options.timestamps.is_some();
            return;
        }
        let start = self.rel(seg.seq);
        if seg.flags & flags::FIN != 0 {
            self.fin = Some(start + i64::from(seg.payload));
        }
        if seg.payload == 0 {
            return;
        }
        let end = start + i64::from(seg.payload);
        self.max_payload = self.max_payload.max(seg.payload);
        if !self.active {
            self.active = true;
            self.t_first = Some(t);
            self.snd_max = start;
            self.una = start;
            self.start = start;
        }
        self.t_last = Some(t);
        self.packets += 1;
        let tsval = seg.options.timestamps.map(|(v, _)| v);
        if start < self.snd_max {
            let older = match (tsval, self.last_new_tsval) {
                (Some(v), Some(last)) => (v.wrapping_sub(last) as i32) < 0,
                _ => false,
            };
            if older && end > self.una {
                // An original that the network reordered: its TSval predates the newest data's.
                self.reordered += 1;
            } else {
                self.retransmit(t, start, end, ctx);
            }
        }
        if end > self.snd_max {
            self.out.push_back(Sent { start: start.max(self.snd_max), end, t, retransmitted: start < self.snd_max });
            self.snd_max = end;
            if tsval.is_some() {
                self.last_new_tsval = tsval;
            }
        }
        let (mut una, mut sacked) = self.sender_view(t, ctx.sender_shift);
        if !ctx.at_sender {
            // The data's TSecr names the last ACK the sender had processed: what it knew exactly,
            // wherever the capture is (to the TSval's millisecond), where the shift is an estimate.
            if let Some((u, s)) = seg.options.timestamps.and_then(|(_, ecr)| self.ts_view(ecr)) {
                (una, sacked) = (u, s);
            }
        }
        let flight = (self.snd_max - una - sacked).max(0);
        self.sent.push(t, start);
        self.flight.push(t, flight);
        let rtt = self.srtt.map(|s| s as u64).or(ctx.rtt_hint);
        self.round(t, flight, rtt);
    }

    fn retransmit(&mut self, t: u64, start: i64, end: i64, ctx: Ctx) {
        self.retransmissions += 1;
        let from = self.out.partition_point(|s| s.end <= start);
        for s in self.out.iter_mut().skip(from) {
            if s.start >= end {
                break;
            }
            s.retransmitted = true;
        }
        let kind = match self.recovery {
            Some((kind, point)) if start < point => kind,
            _ => {
                let srtt = self.srtt.or(ctx.rtt_hint.map(|h| h as f64)).unwrap_or(0.0);
                let since_ack = self.last_ack_t.map_or(u64::MAX, |a| t.saturating_sub(a).saturating_sub(ctx.sender_shift));
                let quiet = srtt > 0.0 && since_ack as f64 >= QUIET_RTT_FRACTION * srtt;
                let una = self.una;
                let kind = if quiet && start > una && end >= self.snd_max {
                    RetxKind::Probe
                } else if quiet {
                    RetxKind::Timeout
                } else {
                    RetxKind::Fast
                };
                match kind {
                    RetxKind::Fast => self.fast_episodes += 1,
                    RetxKind::Timeout => self.timeout_episodes += 1,
                    RetxKind::Probe => {}
                }
                if kind != RetxKind::Probe {
                    self.recovery = Some((kind, self.snd_max));
                }
                kind
            }
        };
        let code = match kind {
            RetxKind::Fast => 0u8,
            RetxKind::Timeout => 1,
            RetxKind::Probe => 2,
        };
        self.by_kind[usize::from(code)] += 1;
        self.retx_series.push(t, (start, code));
        if self.retx.len() >= RETX_MEMORY {
            self.retx.pop_front();
        }
        self.retx.push_back(Retx { start, end, spurious: false });
        if self.exit.is_none() {
            // A plateau already under way when the loss comes: over the last half smoothed RTT
            // the flight grew less than PLATEAU_GROWTH^½ over the half before (slow start grows
            // 2^½ in that time). A delay-based exit, then the buffer overflowing before the round
            // ends — a round is one queue-swollen RTT long — would otherwise be taken for a loss
            // exit.
            let srtt = self.srtt.unwrap_or(0.0) as u64;
            if self.rounds_done >= FIRST_JUDGED_ROUND && srtt > 0 {
                let half = srtt / 2;
                let recent: Vec<(u64, i64)> =
                    self.prev_round.samples.iter().chain(self.cur_round.samples.iter()).copied().filter(|&(ts, _)| ts + srtt > t).collect();
                let late = recent.iter().filter(|&&(ts, _)| ts + half > t).map(|&(_, f)| f).max().unwrap_or(0);
                let early = recent.iter().filter(|&&(ts, _)| ts + half <= t).map(|&(_, f)| f).max().unwrap_or(0);
                // ...while the sender kept sending (ACK-clocked, a quarter of its window or more in
                // the half RTT): a slow start whose ACKs come in one burst per RTT also holds its
                // flight flat between bursts, but sends nothing then.
                let sent_late = recent.iter().filter(|&&(ts, _)| ts + half > t).count() as i64;
                let busy = sent_late * self.mss() * 4 >= late;
                if early > 0 && busy && (late as f64) < PLATEAU_GROWTH.sqrt() * early as f64 {
                    let value = if late as f64 >= PARTIAL_GROWTH.sqrt() * early as f64 { late } else { early };
                    self.plateau_at(&recent, value);
                }
            }
        }
        if self.exit.is_none() {
            // Startup ends at the first loss the sender acts on: the largest flight in the
            // smoothed RTT before it is the window it reached.
            let window = self.srtt.unwrap_or(0.0) as u64;
            let peak = self
                .cur_round
                .samples
                .iter()
                .chain(self.prev_round.samples.iter())
                .filter(|(ts, _)| ts + window >= t)
                .map(|&(_, f)| f)
                .max()
                .unwrap_or(0);
            let reason = if kind == RetxKind::Fast { "loss" } else { "timeout" };
            self.exit = Some(Exit { reason, t, flight: peak, round: self.rounds_done });
        }
    }

    /// Round bookkeeping at a data packet; `rtt`: the smoothed RTT (or the handshake's) when known.
    fn round(&mut self, t: u64, flight: i64, rtt: Option<u64>) {
        if self.exit.is_some() {
            return;
        }
        if self.round_end.is_none() {
            // Round 0 lasts one RTT from the first data packet, once an RTT is known.
            self.round_end = rtt.filter(|&r| r > 0).map(|r| self.t_first.unwrap_or(t) + r);
        }
        if let (Some(end), Some(r)) = (self.round_end, rtt.filter(|&r| r > 0)) {
            if t >= end && !self.cur_round.samples.is_empty() {
                // The next round starts one RTT after this one's start, or now after an idle gap.
                self.round_end = Some(if t >= end + r { t + r } else { end + r });
                self.close_round();
            }
        }
        self.cur_round.max_flight = self.cur_round.max_flight.max(flight);
        self.cur_round.samples.push((t, flight));
    }

    fn close_round(&mut self) {
        {
            let prev = std::mem::take(&mut self.prev_round);
            let done = std::mem::take(&mut self.cur_round);
            if self.rounds_done >= 1 && prev.max_flight > 0 {
                let growth = done.max_flight as f64 / prev.max_flight as f64;
                self.round_growths.push(growth);
                if self.rounds_done >= FIRST_JUDGED_ROUND && growth < PLATEAU_GROWTH {
                    self.plateau(&prev, &done);
                }
            }
            self.prev_round = done;
            self.rounds_done += 1;
        }
    }

    fn plateau(&mut self, before: &Round, plateau: &Round) {
        let grew = plateau.max_flight as f64 >= PARTIAL_GROWTH * before.max_flight as f64;
        let value = if grew { plateau.max_flight } else { before.max_flight };
        let samples: Vec<(u64, i64)> = before.samples.iter().chain(plateau.samples.iter()).copied().collect();
        self.plateau_at(&samples, value);
    }

    /// A plateau exit at flight `value`: when the flight among `samples` first came near it.
    fn plateau_at(&mut self, samples: &[(u64, i64)], value: i64) {
        let mss = self.mss();
        let near = value - mss.max((PLATEAU_NEAR * value as f64) as i64);
        let t = samples.iter().find(|&&(_, f)| f >= near).map_or(0, |&(t, _)| t);
        let reason = match self.rwnd {
            Some(w) if value as f64 >= 0.95 * w as f64 - mss as f64 => "rwnd",
            _ => "plateau",
        };
        self.exit = Some(Exit { reason, t, flight: value, round: self.rounds_done });
    }

    fn on_ack(&mut self, t: u64, seg: &Segment, receiver_wscale: Option<u8>, both_syns: bool) -> Option<u64> {
        if !self.active {
            return None;
        }
        let a = self.rel(seg.ack);
        self.last_ack_t = Some(t);
        let shift = if both_syns { receiver_wscale.unwrap_or(0) } else { 0 };
        self.rwnd = match seg.window_bytes {
            Some(w) => w,
            None => Some(u64::from(seg.window) << shift.min(14)),
        };
        let mut sample = None;
        if a > self.una {
            let mut last = None;
            let mut any_retransmitted = false;
            while let Some(s) = self.out.front() {
                if s.end <= a {
                    any_retransmitted |= s.retransmitted;
                    last = self.out.pop_front();
                } else {
                    break;
                }
            }
            // Karn's rule, as Linux applies it (tcp_clean_rtx_queue): an ACK that covers any
            // retransmitted segment gives no sample — it may answer the retransmission.
            if let Some(s) = last.filter(|_| !any_retransmitted) {
                sample = Some(t.saturating_sub(s.t));
            }
            self.una = a;
            self.dupacks = 0;
            self.acked.push(t, a);
            if let Some((_, point)) = self.recovery {
                if a >= point {
                    self.recovery = None;
                    if self.first_recovery_end.is_none() {
                        self.first_recovery_end = Some(t);
                    }
                }
            }
            let done = self.fin.is_some_and(|f| a > f);
            if done && self.t_complete.is_none() {
                self.t_complete = Some(t);
            }
        } else if a == self.una && seg.payload == 0 && self.snd_max > self.una && seg.flags & (flags::SYN | flags::FIN) == 0 {
            self.dupacks += 1;
            self.dupacks_total += 1;
        }
        // SACK blocks: a DSACK (RFC 2883: the first block below the cumulative ACK or inside the
        // second) reports a duplicate; the others extend the scoreboard.
        let n = usize::from(seg.options.sack_count);
        for i in 0..n {
            let (l, r) = seg.options.sack[i];
            let (l, r) = (self.rel(l), self.rel(r));
            if r <= l {
                continue;
            }
            let dsack = i == 0 && (r <= a || (n > 1 && {
                let (l2, r2) = seg.options.sack[1];
                let (l2, r2) = (self.rel(l2), self.rel(r2));
                l >= l2 && r <= r2
            }));
            if dsack {
                self.dsacks += 1;
                for x in self.retx.iter_mut().filter(|x| !x.spurious && x.start < r && l < x.end) {
                    x.spurious = true;
                    self.spurious += 1;
                }
            } else {
                self.add_sack(l, r);
            }
        }
        self.prune_sacks();
        let delivered = self.una + self.sacked_bytes;
        if self.delivered.v.last().is_none_or(|&d| delivered > d) {
            self.delivered.push(t, delivered);
        }
        if self.ack_hist.len() >= (1 << 20) {
            self.ack_hist.pop_front();
        }
        self.ack_hist.push_back((t, self.una, self.sacked_bytes));
        if let Some((v, _)) = seg.options.timestamps {
            match self.ts_acks.back_mut() {
                Some(last) if last.0 == v => *last = (v, self.una, self.sacked_bytes),
                _ => {
                    if self.ts_acks.len() >= TS_MEMORY {
                        self.ts_acks.pop_front();
                    }
                    self.ts_acks.push_back((v, self.una, self.sacked_bytes));
                }
            }
        }
        sample
    }

    fn add_sack(&mut self, l: i64, r: i64) {
        let mut l = l.max(self.una);
        let mut r = r;
        if r <= l {
            return;
        }
        self.sacked.retain(|&(a, b)| {
            if b < l || a > r {
                true
            } else {
                l = l.min(a);
                r = r.max(b);
                false
            }
        });
        let at = self.sacked.partition_point(|&(a, _)| a < l);
        self.sacked.insert(at, (l, r));
        if self.sacked.len() > SACK_RANGES {
            self.sacked.pop();
        }
    }

    fn prune_sacks(&mut self) {
        let una = self.una;
        self.sacked.retain(|&(_, b)| b > una);
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(una);
        }
        self.sacked_bytes = self.sacked.iter().map(|&(a, b)| b - a).sum();
    }

    fn rtt_sample(&mut self, t: u64, full: u64) {
        self.rtt.push(t, full);
        self.rtt_samples += 1;
        self.min_rtt = Some(self.min_rtt.map_or(full, |m| m.min(full)));
        self.max_rtt = Some(self.max_rtt.map_or(full, |m| m.max(full)));
        let f = full as f64;
        self.srtt = Some(self.srtt.map_or(f, |s| s + (f - s) / 8.0));
    }

    /// The smoothed RTT (1/8 gain over the full samples), ns; 0 before any sample.
    pub fn srtt_ns(&self) -> u64 {
        self.srtt.unwrap_or(0.0) as u64
    }

    /// Highest sequence sent, relative.
    pub fn snd_max(&self) -> i64 {
        self.snd_max
    }

    /// Highest cumulative ACK, relative.
    pub fn una(&self) -> i64 {
        self.una
    }

    /// Whether this side sent data.
    pub fn active(&self) -> bool {
        self.active
    }

    /// Each closed round's growth of its largest flight over the round before.
    pub fn round_growths(&self) -> &[f64] {
        &self.round_growths
    }
}

/// One connection (a 4-tuple) and its two directions.
#[derive(Debug)]
pub struct Connection {
    /// Address and port of side 0 (the first packet's source) and side 1.
    pub addr: [SocketAddr; 2],
    /// Frame number of the connection's first packet.
    pub first_packet: u64,
    /// Time of the first packet, ns.
    pub t_first: u64,
    /// Packets seen, per side.
    pub packets: [u64; 2],
    /// SYN seen from each side (time of the first), ns.
    pub syn: [Option<u64>; 2],
    syn_count: [u32; 2],
    synack_t: Option<u64>,
    synack_side: Option<usize>,
    handshake_acked: bool,
    /// The data each side sent.
    pub half: [Half; 2],
    rt: [RoundTrip; 2],
    ts: [VecDeque<(u32, u64)>; 2],
    /// RST seen.
    pub reset: bool,
    /// The vantage point given by the user, if any.
    forced_sender_vantage: bool,
}

impl Connection {
    /// A connection whose first packet is `seg` (frame `number`, at `t`).
    pub fn new(seg: &Segment, number: u64, t: u64, forced_sender_vantage: bool) -> Connection {
        Connection {
            addr: [seg.src, seg.dst],
            first_packet: number,
            t_first: t,
            packets: [0; 2],
            syn: [None; 2],
            syn_count: [0; 2],
            synack_t: None,
            synack_side: None,
            handshake_acked: false,
            half: [Half::default(), Half::default()],
            rt: [RoundTrip::default(); 2],
            ts: [VecDeque::new(), VecDeque::new()],
            reset: false,
            forced_sender_vantage,
        }
    }

    /// Round trip capture → side `i` → capture: (smallest, latest, samples), ns.
    pub fn round_trip(&self, i: usize) -> (Option<u64>, Option<u64>, u64) {
        (self.rt[i].min, self.rt[i].latest, self.rt[i].samples)
    }

    /// Feeds one segment of this connection, at `t` ns.
    pub fn on_segment(&mut self, seg: &Segment, t: u64) {
        let s = usize::from(seg.src != self.addr[0]);
        let o = 1 - s;
        self.packets[s] += 1;
        if seg.flags & flags::RST != 0 {
            self.reset = true;
        }
        // The handshake's two round trips.
        if seg.flags & flags::SYN != 0 {
            self.syn_count[s] += 1;
            if self.syn[s].is_none() {
                self.syn[s] = Some(t);
            }
            if seg.flags & flags::ACK != 0 {
                if let (Some(t_syn), 1) = (self.syn[o], self.syn_count[o]) {
                    if self.syn_count[s] == 1 {
                        self.rt[s].sample(t.saturating_sub(t_syn));
                    }
                }
                if self.syn_count[s] == 1 {
                    self.synack_t = Some(t);
                    self.synack_side = Some(s);
                }
            }
        } else if !self.handshake_acked && self.synack_side == Some(o) && self.syn[s].is_some() {
            // The opener's first packet after the SYN-ACK (TCP's ACK; startlab-udp's first DATA).
            self.handshake_acked = true;
            if let (Some(t_sa), 1) = (self.synack_t, self.syn_count[o]) {
                self.rt[s].sample(t.saturating_sub(t_sa));
            }
        }
        // Timestamps: this side's TSval, and its echo of the other side's.
        let mut ts_sample = None;
        if let Some((val, ecr)) = seg.options.timestamps {
            let q = &mut self.ts[s];
            if q.back().is_none_or(|&(last, _)| (val.wrapping_sub(last) as i32) > 0) {
                if q.len() >= TS_MEMORY {
                    q.pop_front();
                }
                q.push_back((val, t));
            }
            if seg.flags & flags::ACK != 0 && seg.flags & flags::SYN == 0 {
                let q = &mut self.ts[o];
                while q.front().is_some_and(|&(v, _)| (v.wrapping_sub(ecr) as i32) < 0) {
                    q.pop_front();
                }
                if let Some(&(v, t_val)) = q.front() {
                    if v == ecr {
                        q.pop_front();
                        // The echo of the other side's TSval: a sample of this side's round trip.
                        // Data echoing the receiver's ACK: the data sender's round trip. A pure ACK
                        // counts only when it acknowledges new data (a duplicate ACK echoes an old
                        // TSval), and only where Karn's rule gives no sample (TSvals tick in
                        // milliseconds, the capture in microseconds).
                        let acks_new = self.half[o].active() && self.half[o].rel_peek(seg.ack) > self.half[o].una();
                        if seg.payload > 0 {
                            self.rt[s].sample(t.saturating_sub(t_val));
                        } else if acks_new {
                            ts_sample = Some(t.saturating_sub(t_val));
                        }
                    }
                }
            }
        }
        let sender_shift = if self.forced_sender_vantage { 0 } else { self.rt[s].latest.unwrap_or(0) };
        let rtt_hint = self.rt[o].latest.map(|r| r + sender_shift);
        let ctx = Ctx { sender_shift, rtt_hint, at_sender: self.forced_sender_vantage };
        self.half[s].on_data(t, seg, ctx);
        if seg.flags & flags::ACK != 0 && seg.flags & flags::SYN == 0 {
            let both = self.syn[0].is_some() && self.syn[1].is_some();
            let wscale = self.half[s].wscale;
            if let Some(sample) = self.half[o].on_ack(t, seg, wscale, both).or(ts_sample) {
                // s acknowledges o's data: its round trip, and with the sender's a full RTT.
                self.rt[s].sample(sample);
                self.full_sample(o, t);
            }
        }
    }

    /// A full RTT sample for the data of side `d`, at `t`: the receiver's round trip plus the
    /// sender's (0 at the sender, or when the sender's is not known).
    fn full_sample(&mut self, d: usize, t: u64) {
        let r = 1 - d;
        let Some(receiver) = self.rt[r].latest else { return };
        let sender = if self.forced_sender_vantage { 0 } else { self.rt[d].latest.unwrap_or(0) };
        self.half[d].rtt_sample(t, receiver + sender);
    }
}

impl Half {
    /// The relative value of `seq` without moving the reference.
    fn rel_peek(&self, seq: u32) -> i64 {
        match self.base {
            None => 0,
            Some(base) => {
                let reference = base.wrapping_add(self.ref_rel as u32);
                self.ref_rel + i64::from(seq.wrapping_sub(reference) as i32)
            }
        }
    }
}
