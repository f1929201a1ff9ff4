//! Per-flow metering: what each sender step adds to the flow's measurements and traces, the early
//! window's peaks, and the run's conservation invariants.

use super::*;

/// Per-flow measurement state (see metrics.rs for the definitions).
#[derive(Debug, Default)]
pub(crate) struct FlowMeter {
    pub sent_startup: u64,
    pub dropped_startup: u64,
    /// Data packets sent during startup that a queue marked CE.
    pub marked_startup: u64,
    pub dropped: u64,
    /// Of `dropped`, retransmissions.
    pub dropped_retransmissions: u64,
    /// Of `dropped`, data packets an impairment's loss process discarded.
    pub impairment_drops: u64,
    pub delivered_pkts: u64,
    pub early_end: Option<Time>,
    pub early_losses: u64,
    pub early_peak: u64,
    pub t90: Option<Time>,
    pub window: VecDeque<(Time, u64)>,
    pub acked_at_su: Option<u64>,
    /// `snd_max` (payload bytes sent, first transmissions) when startup ended.
    pub sent_at_su: Option<u64>,
    pub last_ack: u64,
    /// Highest cumulative ACK the receiver emitted.
    pub last_ack_sent: u64,
    pub last_cc: (f64, f64),
    /// Congestion events of the connection's controller seen so far.
    pub reductions: u64,
    pub data_sent: u64,
    pub next_forced_drop: usize,
    /// Data packets of this flow a RED queue marked CE (first mark per packet).
    pub ecn_marks: u64,
}

/// Brings the peak of every early window watching `ch` up to the occupancy accumulated since the
/// last flush.
pub(super) fn early_flush(ch: &mut crate::net::Channel) {
    if ch.early_acc > 0 {
        for e in &mut ch.early_watch {
            e.2 = e.2.max(ch.early_acc);
        }
        ch.early_acc = 0;
    }
}

/// Flushes `ch`, hands the peaks of the windows `settle` selects to their flows' meters, and drops
/// those for which `settle` says so.
pub(super) fn early_settle(ch: &mut crate::net::Channel, flows: &mut [FlowState], settle: impl Fn(Time, u32) -> Option<bool>) {
    early_flush(ch);
    ch.early_watch.retain(|&(end, f, peak)| match settle(end, f) {
        None => true,
        Some(remove) => {
            let m = &mut flows[f as usize].m;
            m.early_peak = m.early_peak.max(peak);
            !remove
        }
    });
    ch.early_next_end = ch.early_watch.iter().map(|e| e.0).min().unwrap_or(Time(u64::MAX));
}

impl Simulation {
    /// After any sender event: transmit what the window allows, re-arm its timer, trace cwnd.
    pub(super) fn after_sender(&mut self, f: u32) {
        let now = self.now;
        loop {
            let fl = &mut self.flows[f as usize];
            let Some(seg) = fl.sender.poll_transmit(now) else { break };
            let mut fl_flags = 0;
            if fl.sender.cc().entered_ca().is_none() && fl.sender.completed_at().is_none() {
                fl_flags |= flags::STARTUP;
            }
            let (kind, mut size) = match seg.kind {
                SegmentKind::Syn => (PktKind::Syn, fl.header),
                SegmentKind::Data => (PktKind::Data, seg.len + fl.header),
            };
            if seg.qs.is_some() {
                size += QS_OPTION_BYTES;
            }
            fl_flags |= flags::of_ip_ecn(seg.ecn);
            for (on, bit) in [(seg.cwr, flags::CWR), (seg.ece, flags::ECE), (seg.ae, flags::AE)] {
                if on {
                    fl_flags |= bit;
                }
            }
            let mut forced = false;
            if kind == PktKind::Data {
                let t0 = fl.sender.first_data_time();
                let (more, f_forced) = self.meter_data(f, t0, seg.retransmit, fl_flags & flags::STARTUP != 0);
                fl_flags |= more;
                forced = f_forced;
            }
            let fl = &mut self.flows[f as usize];
            let src = fl.src;
            let pkt = self.arena.alloc(Packet {
                kind,
                flow: f,
                dst: fl.dst,
                size,
                seq: seg.seq,
                len: seg.len,
                flags: fl_flags,
                    ttl: INITIAL_IP_TTL,
                qs: seg.qs,
                conn: fl.conn,
            });
            if kind == PktKind::Data {
                let ev = if seg.retransmit { SEQ_RETRANSMITTED } else { SEQ_SENT };
                self.seq_event(f, ev, seg.seq, seg.len);
            }
            if forced {
                self.drop_packet(pkt);
            } else {
                self.forward(src, pkt);
            }
        }
        let fl = &mut self.flows[f as usize];
        fl.stimer.sync(&mut self.q, fl.sender.next_timeout(), Source::SenderTimer(f));
        self.record_cc(f);
    }

    /// What sending a data packet of flow `f` adds to its measurements (the first data byte left
    /// at `t0`): the packet's flags for them (early window, retransmission) and whether the
    /// scenario drops it on purpose (`drops`). `startup`: it leaves during startup.
    pub(super) fn meter_data(&mut self, f: u32, t0: Option<Time>, retransmit: bool, startup: bool) -> (u16, bool) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let mut fl_flags = 0;
        let mut forced = false;
        if fl.m.early_end.is_none() {
            let t0 = t0.unwrap_or(now);
            let end = t0 + Dur(fl.base_rtt.as_nanos() * self.scenario.measure.early_rtts);
            fl.m.early_end = Some(end);
            let bottleneck = fl.bottleneck;
            let ch = &mut self.net.channels[bottleneck as usize];
            ch.drain(now, dequeue_hook(self.ptrace.as_deref_mut(), &mut self.traces.packets, bottleneck));
            // Earlier rises are not this flow's.
            early_flush(ch);
            fl.m.early_peak = ch.waiting_pkts();
            ch.early_watch.push((end, f, fl.m.early_peak));
            ch.early_next_end = ch.early_next_end.min(end);
        }
        if fl.m.early_end.is_some_and(|e| now <= e) {
            fl_flags |= flags::EARLY;
        }
        fl.m.data_sent += 1;
        if retransmit {
            fl_flags |= flags::RETRANSMIT;
        }
        if startup {
            fl.m.sent_startup += 1;
        }
        if fl.forced_drops.get(fl.m.next_forced_drop) == Some(&fl.m.data_sent) {
            fl.m.next_forced_drop += 1;
            forced = true;
        }
        self.stats.sent_packets += 1;
        (fl_flags, forced)
    }

    /// Records flow `f`'s controller after a step: the startup's end point, the cwnd trace, and
    /// the checks on the window.
    pub(super) fn record_cc(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let cc = fl.cc();
        if fl.m.acked_at_su.is_none() && cc.entered_ca().is_some() {
            let (una, max) = (fl.snd_una(), fl.snd_max());
            fl.m.acked_at_su = Some(una);
            fl.m.sent_at_su = Some(max);
        }
        let cc = fl.cc();
        let now_cc = (cc.cwnd(), cc.ssthresh().as_f64());
        let (reductions, last_kind) = (cc.reductions(), cc.last_reduction().map(|r| r.kind));
        if now_cc.0.is_nan() || now_cc.0 <= 0.0 {
            self.violations.push(format!("flow {}: cwnd {} is not positive", fl.name, now_cc.0));
        }
        let cause = if reductions == fl.m.reductions {
            0
        } else {
            fl.m.reductions = reductions;
            match last_kind {
                Some(CongestionKind::Timeout) => 2,
                Some(CongestionKind::Ecn) => 3,
                _ => 1,
            }
        };
        if self.qlog.is_some() {
            self.qlog_state(f, cause);
        }
        if self.scenario.trace.rtt || self.scenario.trace.startup {
            self.drain_probe(f);
        }
        let fl = &mut self.flows[f as usize];
        if now_cc != fl.m.last_cc {
            fl.m.last_cc = now_cc;
            if self.scenario.trace.cwnd && self.gate_cwnd.pass(f as usize, now) {
                let t = &mut self.traces.cwnd;
                t.time.push(now.as_secs_f64());
                t.flow.push(f);
                t.cwnd.push(now_cc.0);
                t.ssthresh.push(now_cc.1);
                t.cause.push(cause);
            }
        }
    }

    /// Moves what flow `f`'s controller recorded for the RTT and startup traces into them (and
    /// starts its recording on the first call).
    fn drain_probe(&mut self, f: u32) {
        let (rtt_on, startup_on) = (self.scenario.trace.rtt, self.scenario.trace.startup);
        let fl = &mut self.flows[f as usize];
        let (srtt, rttvar) = match &fl.quic {
            Some(q) => {
                let r = q.server.sender().loss_detection().rtt();
                if r.has_sample() { (Some(r.smoothed()), Some(r.var())) } else { (None, None) }
            }
            None => (fl.sender.srtt(), fl.sender.rttvar()),
        };
        let cc = match fl.quic.as_mut() {
            Some(q) => q.server.sender_mut().controller_mut(),
            None => fl.sender.cc_mut(),
        };
        let decls = cc.startup_signals();
        let algorithm = cc.startup_name();
        let Some(probe) = cc.probe_mut() else {
            cc.keep_probe(rtt_on, startup_on);
            return;
        };
        let secs = |d: Option<Dur>| d.map_or(f64::NAN, |d| d.as_secs_f64());
        let t = &mut self.traces.rtt;
        for (time, rtt, ack, min) in probe.rtt_rows.drain(..) {
            t.time.push(time.as_secs_f64());
            t.flow.push(f);
            t.rtt.push(rtt.as_secs_f64());
            t.srtt.push(secs(srtt));
            t.rttvar.push(secs(rttvar));
            t.min_rtt.push(min.as_secs_f64());
            t.ack.push(ack);
        }
        if probe.startup_rows.is_empty() {
            return;
        }
        let st = &mut self.traces.startup;
        let first = *st.first.entry(algorithm).or_insert_with(|| {
            let at = st.names.len() as u32;
            st.names.extend(decls.iter().map(|d| (format!("{algorithm}.{}", d.name), d.unit.to_string())));
            at
        });
        let n = decls.len();
        if probe.values.len() != probe.startup_rows.len() * n {
            self.violations.push(format!("flow {f}: startup algorithm {algorithm} gave {} signal values for {} rows of {n} declared signals", probe.values.len(), probe.startup_rows.len()));
            probe.startup_rows.clear();
            probe.values.clear();
            return;
        }
        for (k, (time, exit)) in probe.startup_rows.drain(..).enumerate() {
            for (i, &v) in probe.values[k * n..(k + 1) * n].iter().enumerate() {
                st.time.push(time.as_secs_f64());
                st.flow.push(f);
                st.signal.push(first + i as u32);
                st.value.push(v);
                st.exit.push(exit);
            }
        }
        probe.values.clear();
    }

    /// Checks the conservation invariants: per link, arrivals = drops + delivered + in the link;
    /// per flow, data packets sent = delivered + dropped + in the network (counted independently by
    /// walking every link); plus every violation recorded during the run (ACKs going back, time
    /// going back, cwnd not positive).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut errors = self.violations.clone();
        let mut in_net = vec![0u64; self.flows.len()];
        for ch in &self.net.channels {
            let s = &ch.stats;
            if s.arrivals != s.drops + s.delivered + ch.in_flight() as u64 {
                errors.push(format!("{}: {} arrivals != {} drops + {} delivered + {} in the link", ch.name, s.arrivals, s.drops, s.delivered, ch.in_flight()));
            }
            if s.impairment_drops > s.drops {
                errors.push(format!("{}: {} impairment drops > {} drops", ch.name, s.impairment_drops, s.drops));
            }
            for p in ch.packets_in_flight() {
                let p = self.arena.get(p);
                if p.kind == PktKind::Data {
                    in_net[p.flow as usize] += 1;
                }
            }
        }
        for (i, fl) in self.flows.iter().enumerate() {
            // A user's slot: its earlier connections' packets too.
            let past = fl.user.as_ref().map_or((0, 0, 0), |u| u.past);
            let sent = fl.sender_stats().packets_sent + past.0;
            let (delivered, dropped) = (fl.m.delivered_pkts + past.1, fl.m.dropped + past.2);
            if sent != delivered + dropped + in_net[i] {
                errors.push(format!("flow {}: {sent} sent != {delivered} delivered + {dropped} dropped + {} in flight", fl.name, in_net[i]));
            }
            if fl.delivered() < fl.snd_una() {
                errors.push(format!("flow {}: sender saw {} bytes ACKed but the receiver has only {}", fl.name, fl.snd_una(), fl.delivered()));
            }
            if let (Some(size), Some(_)) = (self.specs[i].size, fl.completed_at()) {
                if fl.delivered() != size {
                    errors.push(format!("flow {}: completed but the receiver got {} of {size} bytes", fl.name, fl.delivered()));
                }
            }
        }
        if self.arena.live() as u64 != self.net.channels.iter().map(|c| c.in_flight() as u64).sum::<u64>() {
            errors.push(format!("{} packets alive in the arena but not in any link", self.arena.live()));
        }
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
    }
}
