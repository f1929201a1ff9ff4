//! QUIC flows (a flow with a `quic` table; docs/QUIC.md): the two `startlab-quic` endpoints of
//! the connection, how their packets travel, and the transport-neutral view of a flow that the
//! measurements read.
//!
//! The server sits at the flow's sending host and sends the response (the flow's `size` on one
//! stream); the client sits at its receiving host, opens the connection when the flow starts and
//! sends the request. Every packet carries its frames in the arena's QUIC pool
//! ([`Arena::alloc_quic`]). For the hops and the measurements a packet has the kind of what it
//! carries: the server's packets with stream bytes are [`PktKind::Data`] (`seq` the stream offset,
//! `len` the bytes), so that every data-packet measurement of a TCP flow (drops, marks, startup
//! losses, the early window, forced drops, the seq trace) counts them the same way; Initial and
//! Handshake packets are [`PktKind::Syn`]; every other packet is [`PktKind::Ack`]. On the wire a
//! packet is its UDP payload plus 28 bytes of IPv4 and UDP headers.
//!
//! The server's timer is the flow's sender timer, the client's its receiver timer.

use super::*;
use startlab_quic::ack::{AckFrequency, AckPolicy as QuicAckPolicy};
use startlab_quic::endpoint::{Endpoint, EndpointConfig, HandshakeSizes, Role};
use startlab_quic::recovery::LossConfig;
use startlab_quic::sender::{SenderConfig as QuicSenderConfig, Transmit};
use startlab_quic::Space;
use startlab_scenario::{QuicSpec, UDP_IP_HEADER};
use startlab_tcp::IpEcn;

/// Which ends of a QUIC flow an event reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QuicSide {
    /// The server (the flow's sending host; its timer is the sender timer).
    Server,
    /// The client.
    Client,
    /// Both (the flow's start).
    Both,
}

impl QuicSide {
    fn includes(self, server: bool) -> bool {
        match self {
            QuicSide::Both => true,
            QuicSide::Server => server,
            QuicSide::Client => !server,
        }
    }
}

/// The two ends of a QUIC flow and what the measurements need beyond them.
#[derive(Debug)]
pub(crate) struct QuicEnds {
    /// At the flow's sending host: sends the response.
    pub server: Endpoint,
    /// At the flow's receiving host: opens the connection, sends the request.
    pub client: Endpoint,
    /// The ECN codepoint every packet of the connection leaves with (`tcp.ecn`).
    ecn: IpEcn,
    /// When the server sent its first stream byte.
    pub first_data: Option<Time>,
    /// When every byte of a sized response was acknowledged.
    pub completed: Option<Time>,
    /// Server packets that carried stream bytes sent before.
    pub retransmissions: u64,
}

/// The controller of a QUIC flow's server: the flow's startup and avoidance over the QUIC
/// initial window, with RFC 9002's minimum window (two datagrams, §7.2) after persistent
/// congestion.
pub(super) fn quic_controller(f: &FlowSpec, q: &QuicSpec) -> Controller {
    let mds = q.max_datagram_size;
    let cfg = CcConfig {
        mss: mds,
        initial_window: q.initial_window,
        initial_ssthresh: match f.tcp.initial_ssthresh {
            SsthreshSpec::Infinite => Ssthresh::Infinite,
            SsthreshSpec::Bytes(b) => Ssthresh::Bytes(b as f64),
        },
        loss_window: 2 * mds,
        cwnd_validation: f.tcp.cwnd_validation,
        linux_ss_clamp: false,
    };
    let startup = f.startup.decl().instantiate(&f.startup.params(), &f.flow_context());
    Controller::new(cfg, startup, endpoints::avoidance_for(&f.tcp))
}

/// The endpoints of the QUIC flow `f`.
pub(super) fn quic_ends(f: &FlowSpec, q: &QuicSpec) -> QuicEnds {
    let mds = q.max_datagram_size as u32;
    let (num, den) = q.time_threshold_fraction();
    let ecn = match f.tcp.ecn {
        EcnSpec::Off => IpEcn::NotEct,
        EcnSpec::Classic => IpEcn::Ect0,
        EcnSpec::L4s => IpEcn::Ect1,
    };
    let ack_policy = QuicAckPolicy {
        ack_eliciting_threshold: q.ack_eliciting_threshold as u32,
        max_ack_delay: q.max_ack_delay,
        immediate_on_reorder: q.immediate_ack_on_reorder,
        max_ranges: q.max_ack_ranges as usize,
        ecn: ecn != IpEcn::NotEct,
    };
    let sender = |peer_max_ack_delay: Dur| QuicSenderConfig {
        max_datagram_size: mds,
        loss: LossConfig {
            packet_threshold: q.packet_threshold,
            time_threshold: (num, den),
            granularity: q.granularity,
            max_ack_delay: peer_max_ack_delay,
            persistent_congestion_threshold: q.persistent_congestion_threshold as u32,
            initial_rtt: q.initial_rtt,
        },
        pacing: q.pacing,
        pacing_gain: q.pacing_gain,
        size: None,
        l4s: ecn == IpEcn::Ect1,
        pad_initial: false,
    };
    let sizes = HandshakeSizes { client_hello: q.client_hello as u32, server_flight: q.server_flight as u32, ..HandshakeSizes::default() };
    let server = Endpoint::new(
        EndpointConfig {
            role: Role::Server,
            handshake: q.handshake,
            sizes,
            request: q.request,
            response: f.size,
            ack_policy,
            receive_window: None,
            peer_receive_window: q.max_data,
            request_ack_frequency: q.ack_frequency.map(|a| AckFrequency {
                sequence: 0,
                ack_eliciting_threshold: a.threshold.saturating_sub(1) as u32,
                request_max_ack_delay: a.max_ack_delay,
                reordering_threshold: a.reordering_threshold,
            }),
            sender: sender(q.max_ack_delay),
        },
        quic_controller(f, q),
    );
    // The client sends a request and ACKs: RFC 9002's slow start and NewReno.
    let client_cc = Controller::new(
        CcConfig { mss: q.max_datagram_size, initial_window: q.initial_window, initial_ssthresh: Ssthresh::Infinite, loss_window: 2 * q.max_datagram_size, cwnd_validation: false, linux_ss_clamp: false },
        Startup::SlowStart(startlab_cc::startup::SlowStart { byte_counting: true }),
        Avoidance::Reno(startlab_cc::avoidance::Reno::default()),
    );
    let client = Endpoint::new(
        EndpointConfig {
            role: Role::Client,
            handshake: q.handshake,
            sizes,
            request: q.request,
            response: None,
            ack_policy,
            receive_window: q.max_data,
            peer_receive_window: None,
            request_ack_frequency: None,
            sender: sender(q.max_ack_delay),
        },
        client_cc,
    );
    QuicEnds { server, client, ecn, first_data: None, completed: None, retransmissions: 0 }
}

/// The two QUIC endpoints the simulator builds for the scenario's `[[flows]]` entry `i`,
/// `(server, client)`: the server sends the response with the flow's controller, the client
/// opens the connection and sends the request. For a driver other than the simulator
/// (startlab-udp runs exactly these endpoints over UDP). `None` if there is no flow `i` or it has
/// no `quic` table.
pub fn flow_quic_endpoints(scenario: &Scenario, i: usize) -> Option<(Endpoint, Endpoint)> {
    let f = scenario.flows.get(i)?;
    let ends = quic_ends(f, f.quic.as_ref()?);
    Some((ends.server, ends.client))
}

impl FlowState {
    /// The flow's congestion controller (a QUIC flow's: the server's).
    pub(crate) fn cc(&self) -> &Controller {
        match &self.quic {
            Some(q) => q.server.sender().controller(),
            None => self.sender.cc(),
        }
    }
    /// Bytes acknowledged in order (TCP's `SND.UNA`; QUIC: the stream's acknowledged prefix).
    pub(crate) fn snd_una(&self) -> u64 {
        match &self.quic {
            Some(q) => q.server.sender().stream_acked_prefix(),
            None => self.sender.snd_una(),
        }
    }
    /// Bytes sent at least once (TCP's `SND.MAX`; QUIC: the stream's).
    pub(crate) fn snd_max(&self) -> u64 {
        match &self.quic {
            Some(q) => q.server.sender().stream_sent(),
            None => self.sender.snd_max(),
        }
    }
    /// When the first data byte left.
    pub(crate) fn first_data_time(&self) -> Option<Time> {
        match &self.quic {
            Some(q) => q.first_data,
            None => self.sender.first_data_time(),
        }
    }
    /// When a sized transfer's last byte was acknowledged.
    pub(crate) fn completed_at(&self) -> Option<Time> {
        match &self.quic {
            Some(q) => q.completed,
            None => self.sender.completed_at(),
        }
    }
    /// Bytes the receiving application has, in order.
    pub(crate) fn delivered(&self) -> u64 {
        match &self.quic {
            Some(q) => q.client.stream_received(),
            None => self.receiver.delivered(),
        }
    }
    /// The sender's smoothed RTT, once it has a sample.
    pub(crate) fn srtt(&self) -> Option<Dur> {
        match &self.quic {
            Some(q) => {
                let ld = q.server.sender().loss_detection();
                ld.rtt().has_sample().then(|| ld.rtt().smoothed())
            }
            None => self.sender.srtt(),
        }
    }
    /// Time spent in loss recovery up to `end`.
    pub(crate) fn recovery_time(&self, end: Time) -> Dur {
        match &self.quic {
            Some(q) => q.server.sender().recovery_time(end),
            None => self.sender.recovery_time(end),
        }
    }
    /// The sender's counters, in TCP's terms (docs/RESULTS.md): for QUIC, data packets are the
    /// server's packets with stream bytes, timeouts are probe timeouts, recovery episodes the
    /// congestion events that loss started, ECN reductions those that a CE count started.
    pub(crate) fn sender_stats(&self) -> startlab_tcp::SenderStats {
        match &self.quic {
            Some(q) => {
                let s = q.server.sender().stats();
                startlab_tcp::SenderStats {
                    packets_sent: self.m.data_sent,
                    retransmissions: q.retransmissions,
                    timeouts: s.ptos,
                    fast_retransmits: s.congestion_events - s.ecn_events,
                    ecn_reductions: s.ecn_events,
                    recovery_time: s.recovery_time,
                    ..startlab_tcp::SenderStats::default()
                }
            }
            None => self.sender.stats(),
        }
    }
}

impl Simulation {
    /// After an event of the QUIC flow `f` at the ends in `ends`: each of them sends what it
    /// may and its timer is re-armed, and the controller's state is recorded if the server's
    /// changed. An event at one end leaves the other as it was (its pacer's releases have timer
    /// events of their own), so only the ends it reached are polled.
    pub(super) fn after_quic(&mut self, f: u32, ends: QuicSide) {
        let now = self.now;
        for server in [true, false] {
            if !ends.includes(server) {
                continue;
            }
            loop {
                let q = self.flows[f as usize].quic.as_mut().expect("a QUIC flow");
                let end = if server { &mut q.server } else { &mut q.client };
                let Some(tx) = end.poll_transmit(now) else { break };
                self.emit_quic(f, tx, server);
            }
        }
        let fl = &mut self.flows[f as usize];
        let q = fl.quic.as_ref().expect("a QUIC flow");
        // A deadline already past (a probe timeout counted from a packet sent long ago, RFC 9002
        // A.8's "timer in the past") is due now.
        if ends.includes(true) {
            fl.stimer.sync(&mut self.q, q.server.next_timeout(now).map(|t| t.max(now)), Source::SenderTimer(f));
        }
        if ends.includes(false) {
            fl.rtimer.sync(&mut self.q, q.client.next_timeout(now).map(|t| t.max(now)), Source::ReceiverTimer(f));
        }
        if ends.includes(true) {
            self.record_cc(f);
        }
    }

    /// Puts packet `tx` of flow `f` on the wire at its end's host.
    fn emit_quic(&mut self, f: u32, tx: Transmit, from_server: bool) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let q = fl.quic.as_mut().expect("a QUIC flow");
        let stream = if from_server && tx.space == Space::AppData { tx.data } else { None };
        let kind = match (stream, tx.space) {
            (Some(_), _) => PktKind::Data,
            (None, Space::Initial | Space::Handshake) => PktKind::Syn,
            (None, Space::AppData) => PktKind::Ack,
        };
        let mut pflags = flags::of_ip_ecn(q.ecn);
        let mut forced = false;
        let (seq, len) = stream.unwrap_or((0, 0));
        if stream.is_some() {
            if q.first_data.is_none() {
                q.first_data = Some(now);
            }
            if tx.retransmission {
                q.retransmissions += 1;
            }
            let t0 = q.first_data;
            let startup = q.server.sender().controller().entered_ca().is_none() && q.completed.is_none();
            if startup {
                pflags |= flags::STARTUP;
            }
            let (more, f_forced) = self.meter_data(f, t0, tx.retransmission, startup);
            pflags |= more;
            forced = f_forced;
        }
        let fl = &self.flows[f as usize];
        let (from, to) = if from_server { (fl.src, fl.dst) } else { (fl.dst, fl.src) };
        let header = Packet { kind, flow: f, dst: to, size: tx.size + UDP_IP_HEADER as u32, seq, len, flags: pflags, ttl: INITIAL_IP_TTL, qs: None, conn: fl.conn };
        let retransmit = tx.retransmission;
        if let Some(tap) = self.qlog.as_deref_mut().filter(|t| from_server && t.logs(f)) {
            tap.packet_sent(f, now, &tx);
        }
        let pkt = self.arena.alloc_quic(header, tx);
        if stream.is_some() {
            self.seq_event(f, if retransmit { SEQ_RETRANSMITTED } else { SEQ_SENT }, seq, len);
        }
        if forced {
            self.drop_packet(pkt);
        } else {
            self.forward(from, pkt);
        }
    }

    /// A QUIC packet reached its end.
    pub(super) fn deliver_quic(&mut self, pkt: u32) {
        let now = self.now;
        let p = *self.arena.get(pkt);
        let tx = self.arena.take_quic(pkt);
        self.arena.free(pkt);
        let Some(tx) = tx else {
            self.violations.push(format!("flow {}: a QUIC packet arrived without its frames", self.flows[p.flow as usize].name));
            return;
        };
        let f = p.flow;
        let fl = &mut self.flows[f as usize];
        if p.kind == PktKind::Data {
            self.stats.delivered_packets += 1;
            fl.m.delivered_pkts += 1;
        }
        let una = fl.snd_una();
        let fl_dst = fl.dst;
        let q = fl.quic.as_mut().expect("a QUIC flow");
        let ecn = flags::ip_ecn(p.flags);
        if p.dst == fl.dst {
            q.client.on_packet(now, &tx, ecn);
        } else {
            if let Some(tap) = self.qlog.as_deref_mut().filter(|t| t.logs(f)) {
                tap.packet_received(f, now, &tx);
            }
            q.server.on_packet(now, &tx, ecn);
            if q.completed.is_none() && q.server.is_responding() && q.server.sender().is_done() {
                q.completed = Some(now);
            }
        }
        let newly = fl.snd_una() - una;
        if newly > 0 {
            self.on_progress(f, newly);
        }
        self.after_quic(f, if p.dst == fl_dst { QuicSide::Client } else { QuicSide::Server });
    }
}
