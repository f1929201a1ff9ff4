//! The simulation: the event loop that ties the parts together. Each part has its own file:
//! building a simulation from a scenario (`new`), the TCP endpoints of a flow (`endpoints`), the
//! workloads' state (`apps`), cross traffic (`cross`), the packet path (`path`), Quick-Start in the
//! routers (`quick_start`) and per-flow metering (`meter`).

mod apps;
mod aqm;
mod cross;
mod endpoints;
mod meter;
mod new;
mod path;
mod quic;
mod quick_start;

pub use endpoints::{flow_controller, flow_endpoints};
pub use quic::flow_quic_endpoints;
pub(crate) use apps::{AppState, UserState};
pub(crate) use cross::ProbeRecord;
pub(crate) use meter::FlowMeter;
use apps::{arrival_flows, exp_dur, replay_flows, size_law, user_flows, ThinkDraw, REQUEST_RETRY};
use meter::early_settle;
use aqm::queue_recorder;
use path::dequeue_hook;
use cross::CrossState;
use endpoints::endpoints;
use quick_start::QsRouters;
pub(crate) use quic::{QuicEnds, QuicSide};

use crate::build::{network, Network};
use crate::engine::{EventQueue, Source, TimerSlot};
use crate::rng;
use rand::RngExt as _;
use crate::net::{flags, Arena, Offer, Packet, PktKind, QsLink, QueueChange};
use crate::trace::{Gate, PacketRecord, PacketTrace, PacketTracing, Traces, PKT_DEQUEUE, PKT_DROP, PKT_ENQUEUE, PKT_LOST, PKT_MARK, SEQ_ACKED, SEQ_DROPPED, SEQ_RETRANSMITTED, SEQ_SENT};
use startlab_cc::avoidance::Avoidance;
use startlab_cc::startup::{qs_code_for, qs_rate_bps, QsRequest, Startup, INITIAL_IP_TTL, QS_NONCE_BITS, QS_OPTION_BYTES};
use startlab_cc::{CcConfig, CongestionKind, Controller, Ssthresh};
use crate::workload;
use startlab_scenario::{AckSpec, ArrivalEnds, EcnSpec, CrossProcess, IdleRestartSpec, PrrBoundSpec, Think, Ends, FlowSpec, RecoverySpec, Scenario, SizeSpec, SsthreshSpec, StartupSpec, Topology};
use startlab_tcp::{Ack, AckPolicy, EcnMode, SynEcn, IdleRestart, PrrBound, Receiver, ReceiverConfig, Recovery, RtoConfig, RtoPolicy, SegmentKind, Sender, SenderConfig};
use startlab_units::{Dur, Time};
use std::collections::VecDeque;

/// A scenario that parses but cannot be built (e.g. no route between a flow's hosts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// Key path of the offending item.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}
impl std::error::Error for BuildError {}

/// Engine counters.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Data packets that reached their receiver.
    pub delivered_packets: u64,
    /// Data packets sent by TCP senders.
    pub sent_packets: u64,
    /// Packets dropped anywhere (all kinds).
    pub dropped_packets: u64,
    /// Simulated time reached, ns.
    pub sim_time_ns: u64,
}

pub(crate) struct FlowState {
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub sender: Sender,
    pub receiver: Receiver,
    stimer: TimerSlot,
    rtimer: TimerSlot,
    pub header: u32,
    pub bottleneck: u32,
    pub base_rtt: Dur,
    /// bit/s; `None` if cross traffic leaves nothing.
    pub available: Option<f64>,
    pub forced_drops: Vec<u64>,
    pub m: FlowMeter,
    /// When the application opened the connection (start plus its jitter).
    pub opened: Time,
    /// A request/response application, if the flow runs one.
    pub app: Option<AppState>,
    /// The slot's current connection (see `Packet::conn`).
    pub conn: u32,
    /// The user running on this slot (`[[users]]`).
    pub user: Option<Box<UserState>>,
    /// A QUIC flow's endpoints (`sender` and `receiver` then stay unused).
    pub quic: Option<Box<QuicEnds>>,
}

/// One simulation of one scenario.
pub struct Simulation {
    pub(crate) scenario: Scenario,
    now: Time,
    end: Time,
    /// Stop once this many events were processed (a resource guard for sweeps); `None`: no limit.
    event_limit: Option<u64>,
    /// A plug-in registered at run time runs in this scenario: check its stop request after every
    /// event (`startlab_cc::startup::plugin::request_halt`).
    plugins: bool,
    /// A plug-in asked to stop during the event at this time; the run goes no further.
    halted: Option<Time>,
    q: EventQueue,
    arena: Arena,
    pub(crate) net: Network,
    pub(crate) flows: Vec<FlowState>,
    cross: Vec<CrossState>,
    pub(crate) traces: Traces,
    gate_cwnd: Gate,
    gate_seq: Gate,
    gate_queue: Gate,
    pub(crate) stats: EngineStats,
    pub(crate) violations: Vec<String>,
    finished: bool,
    pub(crate) link_bits: Vec<f64>,
    qs: Option<QsRouters>,
    /// Some channel lets packets overtake each other (jitter with `reorder = true`).
    reordering: bool,
    /// Every flow: the scenario's `[[flows]]`, then those the `[[arrivals]]` processes drew.
    pub(crate) specs: Vec<FlowSpec>,
    /// The group of each flow (index into `group_names`), `None` for `[[flows]]`.
    pub(crate) groups: Vec<Option<u32>>,
    /// Names of the arrival processes, then the user groups, then the replays.
    pub(crate) group_names: Vec<String>,
    /// The transfers of `[[users]]` users that ended (finished, or replaced by the next one).
    pub(crate) transfers: Vec<crate::metrics::TransferRow>,
    /// The active time of every transfer that ended, per warm-up window (drained or not).
    pub(crate) transfer_busy: crate::metrics::BusyWindows,
    /// `[trace.packets]`: which channels and packets, and the traced queues' contents.
    ptrace: Option<Box<PacketTracing>>,
    /// `[trace.pcap]` (or `capture_pcap`'s default): the open capture files.
    pcap: Option<Box<crate::pcap::PcapTap>>,
    /// The capture files a finished run wrote, with their packet counts.
    pcap_written: Vec<(std::path::PathBuf, u64)>,
    /// `[trace.qlog]` (or `capture_qlog`'s default): the open qlog files.
    qlog: Option<Box<crate::qlog::QlogTap>>,
    /// The qlog files a finished run wrote, with their event counts.
    qlog_written: Vec<(std::path::PathBuf, u64)>,
    /// Every packet of the packet-train probes, in the order sent.
    pub(crate) probe: Vec<ProbeRecord>,
    /// What the run allows but the user should know (an L4S flow on a path without an L4S-aware
    /// queue), each once.
    pub(crate) warnings: Vec<String>,
}

impl Simulation {

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }
    /// End of the run.
    pub fn end(&self) -> Time {
        self.end
    }
    /// True once the run reached its end (results are available).
    pub fn finished(&self) -> bool {
        self.finished
    }
    /// Engine counters.
    pub fn stats(&self) -> EngineStats {
        EngineStats { sim_time_ns: self.now.as_nanos(), ..self.stats }
    }
    /// The resolved scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Stop processing events once `limit` events were processed in all (`None`: no limit).
    /// A run stopped by the limit is not finished: [`Simulation::event_limit_reached`] tells.
    pub fn set_event_limit(&mut self, limit: Option<u64>) {
        self.event_limit = limit;
    }

    /// True when the event limit stopped the run before the time asked for.
    pub fn event_limit_reached(&self) -> bool {
        !self.finished && self.event_limit.is_some_and(|n| self.stats.events >= n)
    }

    /// Processes every event up to and including `until` (capped at the end of the run), or until
    /// the event limit is reached. Returns true when the run is finished.
    pub fn run_until(&mut self, until: Time) -> bool {
        if self.finished || self.halted.is_some() {
            return self.finished;
        }
        if self.plugins {
            startlab_cc::startup::plugin::clear_halt();
        }
        let limit = until.min(self.end);
        let budget = self.event_limit.unwrap_or(u64::MAX);
        while let Some(t) = self.q.peek_time() {
            if t > limit {
                break;
            }
            if self.stats.events >= budget {
                return false;
            }
            let (t, src) = self.q.pop().expect("peeked");
            self.warm_next();
            if t < self.now {
                self.violations.push(format!("event time went back from {} to {}", self.now, t));
            }
            self.now = t;
            self.stats.events += 1;
            self.dispatch(src);
            if self.plugins && startlab_cc::startup::plugin::halt_requested() {
                self.halted = Some(t);
                return false;
            }
        }
        self.now = self.now.max(limit);
        if limit >= self.end || self.q.peek_time().is_none() {
            self.finish();
        }
        self.finished
    }

    /// Whether a plug-in registered at run time (a Python class) runs in this simulation: its
    /// driver must let the plug-in's hooks run on the thread that advances it.
    pub fn uses_plugins(&self) -> bool {
        self.plugins
    }

    /// When a plug-in asked to stop (`startlab_cc::startup::plugin::request_halt`): the time of
    /// the event it failed in (zero: while the simulation was built). A halted run is not
    /// finished and runs no further; its driver reports the plug-in's failure.
    pub fn halted(&self) -> Option<Time> {
        self.halted
    }

    /// Captures packets to files in `dir` (created if missing): the links `[trace.pcap]` selects,
    /// or without that table, both directions of a dumbbell's bottleneck or of every link of a
    /// graph. Call before the run; the files are complete once it is finished
    /// ([`Simulation::pcap_files`]). Err: the directory or a file cannot be created.
    pub fn capture_pcap(&mut self, dir: &std::path::Path) -> Result<(), String> {
        use startlab_scenario::{PacketTraceSpec, PcapFormat, PcapSpec, Topology};
        if self.now > Time::ZERO || self.stats.events > 0 {
            return Err("capture_pcap must be called before the run starts".into());
        }
        let spec = match &self.scenario.trace.pcap {
            Some(s) => s.clone(),
            None => {
                let links = match &self.scenario.topology {
                    Topology::Dumbbell(_) => vec![("bottleneck".to_string(), true, true)],
                    _ => self.net.links.iter().map(|l| (l.clone(), true, true)).collect(),
                };
                PcapSpec { select: PacketTraceSpec { links, flows: None }, format: PcapFormat::Pcapng, snaplen: PcapSpec::DEFAULT_SNAPLEN }
            }
        };
        let names: Vec<&str> = self.flows.iter().map(|f| f.name.as_str()).chain(self.scenario.cross.iter().map(|c| c.name.as_str())).collect();
        let tap = crate::pcap::PcapTap::open(&spec, dir, &self.net.links, &names, self.flows.len())?;
        self.pcap = Some(Box::new(tap));
        Ok(())
    }

    /// The capture files of a finished run and the packets each holds (empty without a capture).
    pub fn pcap_files(&self) -> &[(std::path::PathBuf, u64)] {
        &self.pcap_written
    }

    /// Writes a qlog file per flow to `dir` (created if missing): the flows `[trace.qlog]`
    /// selects, or without that table every flow. Call before the run; the files are complete
    /// once it is finished ([`Simulation::qlog_files`]). Err: the directory or a file cannot be
    /// created.
    pub fn capture_qlog(&mut self, dir: &std::path::Path) -> Result<(), String> {
        if self.now > Time::ZERO || self.stats.events > 0 {
            return Err("capture_qlog must be called before the run starts".into());
        }
        let select = self.scenario.trace.qlog.clone().flatten();
        let picks = |name: &str| select.as_ref().is_none_or(|list| list.iter().any(|s| startlab_scenario::name_selects(s, name)));
        let flows: Vec<(&str, bool, bool)> = self.flows.iter().map(|f| (f.name.as_str(), f.quic.is_some(), picks(&f.name))).collect();
        let tap = crate::qlog::QlogTap::open(dir, &flows, self.scenario.name.as_deref().unwrap_or("unnamed scenario"))?;
        for (f, fl) in self.flows.iter_mut().enumerate() {
            if let (true, Some(q)) = (tap.logs(f as u32), fl.quic.as_mut()) {
                q.server.sender_mut().keep_lost_log();
            }
        }
        self.qlog = Some(Box::new(tap));
        Ok(())
    }

    /// The qlog files of a finished run and the events each holds (empty without qlog output).
    pub fn qlog_files(&self) -> &[(std::path::PathBuf, u64)] {
        &self.qlog_written
    }

    /// Logs flow `f`'s sender state after an event (qlog output on).
    pub(super) fn qlog_state(&mut self, f: u32, cause: u8) {
        let Some(tap) = self.qlog.as_deref_mut() else { return };
        if !tap.logs(f) {
            return;
        }
        let fl = &mut self.flows[f as usize];
        if let Some(q) = fl.quic.as_mut() {
            let lost = q.server.sender_mut().take_lost();
            if !lost.is_empty() {
                tap.packets_lost(f, self.now, &lost);
            }
        }
        let fl = &self.flows[f as usize];
        let cc = fl.cc();
        let ssthresh = cc.ssthresh().as_f64();
        let mut m = crate::qlog::Metrics {
            cwnd: cc.cwnd().round() as u64,
            ssthresh: ssthresh.is_finite().then(|| ssthresh.round() as u64),
            bytes_in_flight: fl.snd_max().saturating_sub(fl.snd_una()),
            smoothed_rtt: fl.srtt(),
            ..Default::default()
        };
        if let Some(q) = &fl.quic {
            let ld = q.server.sender().loss_detection();
            m.bytes_in_flight = ld.bytes_in_flight();
            let rtt = ld.rtt();
            if rtt.has_sample() {
                (m.min_rtt, m.latest_rtt, m.rtt_variance) = (Some(rtt.min()), Some(rtt.latest()), Some(rtt.var()));
            }
        }
        let trigger = (cause == 3).then_some("ecn");
        let exit = cc.startup_exit().map(|e| (e.reason.as_str(), e.cwnd));
        tap.state(f, self.now, m, cc.phase(), trigger, exit);
    }

    /// Writes packet `pkt`, starting transmission on channel `c` at `t`, to the capture.
    pub(super) fn capture(&mut self, c: u32, t: Time, pkt: u32) {
        use crate::pcap::{window_scale, Frame};
        let Some(tap) = self.pcap.as_deref_mut() else { return };
        if !tap.captures(c) || t > self.end {
            return;
        }
        let p = self.arena.get(pkt);
        let nf = self.flows.len() as u32;
        let source = if p.kind == PktKind::Cross { nf + p.flow } else { p.flow };
        if !tap.selects(source) {
            return;
        }
        let frame = if p.kind == PktKind::Cross {
            let x = &self.cross[p.flow as usize];
            Frame { p, ack: Ack::default(), quic: None, from: x.src, to: x.dst, downstream: true, flows: nf, mss: 0, header: 0, wscale: 0, client_bytes: 0 }
        } else {
            let fl = &self.flows[p.flow as usize];
            let downstream = p.dst == fl.dst;
            let (from, to) = if downstream { (fl.src, fl.dst) } else { (fl.dst, fl.src) };
            let tcp = &self.specs[p.flow as usize].tcp;
            Frame {
                p,
                ack: self.arena.ack(pkt),
                quic: self.arena.quic_tx(pkt),
                from,
                to,
                downstream,
                flows: nf,
                mss: tcp.mss as u32,
                header: fl.header,
                wscale: window_scale(tcp.rwnd),
                client_bytes: tap.client_bytes(p.flow, p.conn),
            }
        };
        tap.write(c, t, &frame);
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.now = self.end;
        let end = self.end;
        let trace_q = self.scenario.trace.queue;
        for (c, ch) in self.net.channels.iter_mut().enumerate() {
            let mut record = queue_recorder(trace_q, &mut self.traces.queue, &mut self.gate_queue, c as u32);
            let mut dequeued = dequeue_hook(self.ptrace.as_deref_mut(), &mut self.traces.packets, c as u32);
            ch.drain(end, |change| {
                dequeued(change);
                record(change);
            });
        }
        for ch in self.net.channels.iter_mut() {
            early_settle(ch, &mut self.flows, |_, _| Some(true));
        }
        self.link_bits = self.net.channels.iter_mut().map(|ch| ch.finish(end)).collect();
        self.traces.packets.sort();
        if let Some(mut tap) = self.qlog.take() {
            self.qlog_written = tap.close();
            if let Some(e) = tap.error.take() {
                self.warnings.push(format!("trace.qlog: {e}"));
            }
        }
        if let Some(mut tap) = self.pcap.take() {
            self.pcap_written = tap.close();
            if let Some(e) = tap.error.take() {
                self.warnings.push(format!("trace.pcap: {e}"));
            }
        }
        self.finished = true;
    }

    /// Reads, without using it, the memory the next event will start with, so that its cache
    /// misses overlap this event's work instead of following it: with many flows, an arrival finds
    /// its link, the packet and the flow's state cold, each read waiting for the one before.
    /// For a packet arriving next: its link's FIFO and the packet; at a router, the next link on
    /// its path; at its host, or at the router whose next link ends at its host, the flow's
    /// endpoint there and the link the answer leaves by. (The arrival at the host, over an access
    /// link, is scheduled by the router's event and comes right after it: too late to be warmed
    /// as the next event.) Only reads; a guess that turns out wrong (an event scheduled in
    /// between comes first) costs nothing but the reads.
    #[inline]
    fn warm_next(&self) {
        let Some(Source::Channel(c)) = self.q.peek_source() else { return };
        let ch = &self.net.channels[c as usize];
        let Some((_, _, pkt)) = ch.pipe.front() else { return };
        let p = self.arena.get(pkt);
        let mut touched = 0;
        if p.dst != ch.to {
            let Some(n) = self.net.routes.next(ch.to, p.dst) else { return };
            let next = &self.net.channels[n as usize];
            touched = next.warm();
            if next.to != p.dst {
                std::hint::black_box(touched);
                return;
            }
        }
        if let Some(fl) = self.flows.get(p.flow as usize).filter(|_| p.kind != PktKind::Cross) {
            let back = if p.dst == fl.dst { fl.src } else { fl.dst };
            let out = self.net.routes.next(p.dst, back).map_or(0, |n| self.net.channels[n as usize].warm());
            // A QUIC flow's TCP ends are never used: warming them would only take cache lines
            // (told by the packet's handle, not by a read of the flow).
            let endpoint = if Arena::is_quic(pkt) {
                0
            } else if p.dst == fl.src {
                fl.sender.warm()
            } else {
                fl.receiver.warm()
            };
            touched ^= endpoint ^ fl.conn as u64 ^ out;
        }
        std::hint::black_box(touched);
    }

    fn dispatch(&mut self, src: Source) {
        match src {
            Source::Channel(c) => {
                let ch = &mut self.net.channels[c as usize];
                let Some((pkt, next)) = ch.pop_arrival() else {
                    self.violations.push(format!("{}: an arrival event found no packet in flight", ch.name));
                    return;
                };
                if let Some((t, seq)) = next {
                    self.q.push_with_seq(t, seq, Source::Channel(c));
                }
                let to = ch.to;
                self.arrive(to, pkt);
            }
            Source::SenderTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.stimer.take(self.now) {
                    if let Some(q) = fl.quic.as_mut() {
                        q.server.on_timeout(self.now);
                        return self.after_quic(f, QuicSide::Server);
                    }
                    fl.sender.on_timer(self.now);
                    self.after_sender(f);
                }
            }
            Source::ReceiverTimer(f) => {
                let now = self.now;
                let fl = &mut self.flows[f as usize];
                if fl.rtimer.take(now) {
                    if let Some(q) = fl.quic.as_mut() {
                        q.client.on_timeout(now);
                        return self.after_quic(f, QuicSide::Client);
                    }
                    if let Some(ack) = fl.receiver.on_timer(now) {
                        self.send_ack(f, ack);
                    }
                    let fl = &mut self.flows[f as usize];
                    fl.rtimer.sync(&mut self.q, fl.receiver.next_timeout(), Source::ReceiverTimer(f));
                }
            }
            Source::FlowStart(f) => {
                let now = self.now;
                let fl = &mut self.flows[f as usize];
                if let Some(u) = fl.user.as_mut() {
                    u.k = 1;
                    u.began = now;
                }
                if fl.quic.is_some() {
                    return self.after_quic(f, QuicSide::Both);
                }
                fl.sender.start(now);
                self.after_sender(f);
                if !self.specs[f as usize].tcp.handshake {
                    // Without a handshake the client asks at once (after its first think, for a
                    // replayed vector); with one, when the SYN reaches it (the request then
                    // travels with the SYN-ACK's timing, as after a real handshake the request
                    // follows the client's ACK).
                    if let Some(app) = self.flows[f as usize].app.as_ref() {
                        self.q.push(now + app.think(0), Source::Request(f));
                    }
                }
            }
            Source::Dequeue(c) => self.aqm_service(c),
            Source::QueueTimer(c) => {
                if let Some(t) = self.net.channels[c as usize].aqm_timer(self.now) {
                    self.q.push(t, Source::QueueTimer(c));
                }
            }
            Source::Cross(j) => self.cross_emit(j),
            Source::Request(f) => self.send_request(f),
            Source::UserNext(f) => self.next_connection(f),
        }
    }
}
