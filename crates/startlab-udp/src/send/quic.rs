//! The sending side of a QUIC flow: the data sender runs the QUIC *server* endpoint the simulator
//! builds for the flow (`startlab_sim::flow_quic_endpoints`: the flow's controller sends the
//! response), the serving side the QUIC *client* (see the crate documentation, "QUIC").
//!
//! startlab-udp's own connection comes first, as for TCP: a QUIC INIT (the client's settings,
//! padded to 1200 bytes) until an INIT_ACK (or the first QUIC datagram) answers it. Only then does
//! this endpoint run: with `quic.handshake = true` it waits for the client's Initial, without it
//! the response leaves at once.

use super::{Common, Link, BATCH, CLOSE_TRIES};
use crate::net;
use crate::replay::ReplayWindow;
use crate::timing::{thread_cpu, Clock, GapStats, TimerSlack};
use crate::wire::{self, Body, CloseReason, Datagram, DropReason, Key, QuicDatagram, QuicSettings};
use crate::{AckSample, DropCounts, NetError, SendReport, StartupExitReport, MAX_SAMPLES};
use startlab_cc::Ssthresh;
use startlab_quic::endpoint::Endpoint;
use startlab_quic::sender::Transmit;
use startlab_quic::Space;
use startlab_scenario::{EcnSpec, FlowSpec, QuicSpec};
use startlab_tcp::IpEcn;
use startlab_units::{Dur, Time};

/// Stream or CRYPTO bytes more than this far beyond what has arrived in order are refused
/// (malformed), bounding an endpoint's out-of-order state whatever an authenticated peer sends.
pub(crate) const MAX_AHEAD: u64 = 1 << 30;

/// The settings the QUIC INIT carries for flow `f`: its client, as the simulator builds it.
pub(crate) fn quic_settings(f: &FlowSpec, q: &QuicSpec) -> QuicSettings {
    let ecn = f.tcp.ecn == EcnSpec::Classic;
    QuicSettings {
        handshake: q.handshake,
        sizes: startlab_quic::endpoint::HandshakeSizes { client_hello: q.client_hello as u32, server_flight: q.server_flight as u32, ..Default::default() },
        request: q.request,
        ack_policy: startlab_quic::ack::AckPolicy {
            ack_eliciting_threshold: q.ack_eliciting_threshold as u32,
            max_ack_delay: q.max_ack_delay,
            immediate_on_reorder: q.immediate_ack_on_reorder,
            max_ranges: q.max_ack_ranges as usize,
            ecn,
        },
        receive_window: q.max_data,
        max_datagram_size: q.max_datagram_size as u32,
        loss: startlab_quic::recovery::LossConfig {
            packet_threshold: q.packet_threshold,
            time_threshold: q.time_threshold_fraction(),
            granularity: q.granularity,
            max_ack_delay: q.max_ack_delay,
            persistent_congestion_threshold: q.persistent_congestion_threshold as u32,
            initial_rtt: q.initial_rtt,
        },
        pacing: q.pacing,
        pacing_gain: q.pacing_gain,
        initial_window: q.initial_window,
        ecn,
    }
}

/// Runs the QUIC flow with its server endpoint `server`.
pub(super) fn run(c: Common, f: &FlowSpec, server: Endpoint, settings: QuicSettings) -> Result<SendReport, NetError> {
    let v6 = c.server.is_ipv6();
    net::enable_receive_info(&c.sock, v6).map_err(|e| NetError::Io { context: "asking for the IP TOS of arriving datagrams".into(), source: e.into() })?;
    if settings.ecn {
        // tcp.ecn = true: every packet of the connection leaves ECT(0), as in the simulator.
        net::set_ecn(&c.sock, v6, true).map_err(|e| NetError::Io { context: "setting the ECN codepoint".into(), source: e.into() })?;
    }
    let q = QuicClient {
        link: Link::new(c.sock, c.spin),
        key: c.key,
        conn: c.conn,
        next_pn: 0,
        rto_initial: f.tcp.rto_initial,
        settings,
        ep: server,
        mds: settings.max_datagram_size as u64,
        size: f.size,
        forced: c.forced,
        next_forced: 0,
        data_tx: 0,
        forced_drops: 0,
        retransmissions: 0,
        first_data: None,
        completed: None,
        connected_at: None,
        closing: false,
        backlog: false,
        replay: ReplayWindow::default(),
        timer_late: GapStats::new(),
        samples: Vec::with_capacity(1 << 16),
        samples_dropped: 0,
        close_acked: false,
        drops: DropCounts::default(),
        ce_received: 0,
    };
    q.run(&f.name, &c.server_text, c.limit, c.connect_timeout)
}

struct QuicClient {
    link: Link,
    key: Key,
    conn: u64,
    next_pn: u64,
    rto_initial: Dur,
    settings: QuicSettings,
    /// The QUIC server endpoint: the flow's controller.
    ep: Endpoint,
    mds: u64,
    size: Option<u64>,
    forced: Vec<u64>,
    next_forced: usize,
    /// Packets with stream bytes handed to the wire (forced drops included).
    data_tx: u64,
    forced_drops: u64,
    retransmissions: u64,
    first_data: Option<Time>,
    completed: Option<Time>,
    connected_at: Option<Time>,
    closing: bool,
    backlog: bool,
    replay: ReplayWindow,
    /// How late each timer-driven release (pacer or loss timer) left.
    timer_late: GapStats,
    samples: Vec<AckSample>,
    samples_dropped: u64,
    close_acked: bool,
    drops: DropCounts,
    ce_received: u64,
}

/// What the data sender reads from the serving side, owned.
enum Incoming {
    InitAck,
    Quic(QuicDatagram),
    CloseAck,
}

impl QuicClient {
    fn run(mut self, flow: &str, server: &str, limit: Dur, connect_timeout: Dur) -> Result<SendReport, NetError> {
        let cpu0 = thread_cpu();
        let slack = TimerSlack::fine();
        self.link.clock = Clock::start();
        let connect_deadline = Time::ZERO + connect_timeout;
        let limit = Time::ZERO + limit;
        self.send_init()?;
        let mut init_retx = Some((Time::ZERO + self.rto_initial, self.rto_initial));
        let mut ended: Option<(Time, CloseReason)> = None;
        let (mut close_tries, mut close_next) = (0, Time::ZERO);
        loop {
            let mut busy = true;
            for _ in 0..BATCH {
                let Some((n, ecn, stamp)) = self.link.recv()? else {
                    busy = false;
                    break;
                };
                let arrived = stamp.map(|ts| self.link.clock.time_of_stamp(ts));
                self.on_datagram(arrived, n, ecn)?;
            }
            let now = self.link.clock.now();
            self.link.floor = now;
            if ended.is_none() {
                if self.connected_at.is_none() {
                    if now >= connect_deadline {
                        return Err(NetError::ConnectTimeout { server: server.to_string(), after_s: connect_timeout.as_secs_f64(), refused: self.link.icmp_unreachable > 0 });
                    }
                    if let Some((_, interval)) = init_retx.filter(|&(at, _)| now >= at) {
                        self.send_init()?;
                        init_retx = Some((now + interval + interval, interval + interval));
                    }
                } else if let Some(t) = self.ep.next_timeout(now).filter(|&t| t <= now) {
                    self.ep.on_timeout(now);
                    let sent = self.link.datagrams_sent;
                    self.pump(now)?;
                    if self.link.datagrams_sent > sent {
                        self.timer_late.record(now - t);
                    }
                } else if self.backlog {
                    self.pump(now)?;
                }
                busy |= self.backlog;
                if self.connected_at.is_some() {
                    if self.completed.is_some() || (self.size == Some(0) && self.ep.is_responding()) {
                        ended = Some((now, CloseReason::Completed));
                    } else if now >= limit {
                        ended = Some((now, CloseReason::DurationLimit));
                    }
                    self.closing = ended.is_some();
                }
            }
            let deadline = match ended {
                Some((_, reason)) => {
                    if self.close_acked || close_tries >= CLOSE_TRIES {
                        break;
                    }
                    if now >= close_next {
                        self.send_close(reason)?;
                        close_tries += 1;
                        let srtt = self.srtt().unwrap_or(Dur::from_millis(100));
                        close_next = now + Dur((2 * srtt.as_nanos()).clamp(10_000_000, 200_000_000));
                    }
                    close_next
                }
                None => {
                    let mut d = if self.connected_at.is_some() { limit } else { connect_deadline };
                    if self.connected_at.is_some() {
                        d = self.ep.next_timeout(now).map_or(d, |t| t.min(d));
                    } else {
                        d = init_retx.map_or(d, |(at, _)| at.min(d));
                    }
                    d
                }
            };
            if !busy {
                self.link.wait(Some(deadline))?;
            }
        }
        let end = ended.map_or(self.link.clock.now(), |(t, _)| t);
        let cpu = match (cpu0, thread_cpu()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64()),
            _ => None,
        };
        let timer_slack_ns = slack.in_force;
        drop(slack);
        Ok(self.report(flow, ended.map(|e| e.1), end, cpu, timer_slack_ns))
    }

    fn srtt(&self) -> Option<Dur> {
        let rtt = self.ep.sender().loss_detection().rtt();
        rtt.has_sample().then(|| rtt.smoothed())
    }

    fn send_body(&mut self, body: Body<'_>) -> Result<(), NetError> {
        let d = Datagram { conn: self.conn, pn: self.next_pn, body };
        self.next_pn += 1;
        let n = wire::encode(&self.key, &mut self.link.tx, &d);
        self.link.transmit(n)
    }

    fn send_init(&mut self) -> Result<(), NetError> {
        self.send_body(Body::InitQuic { settings: self.settings })
    }

    fn send_close(&mut self, reason: CloseReason) -> Result<(), NetError> {
        self.send_body(Body::Close { reason })
    }

    /// Transmits what the endpoint releases at `now`, at most [`BATCH`] packets.
    fn pump(&mut self, now: Time) -> Result<(), NetError> {
        self.backlog = false;
        for _ in 0..BATCH {
            let Some(tx) = self.ep.poll_transmit(now) else { return Ok(()) };
            self.send_packet(now, tx)?;
        }
        self.backlog = true;
        Ok(())
    }

    fn send_packet(&mut self, now: Time, tx: Transmit) -> Result<(), NetError> {
        if tx.space == Space::AppData && tx.data.is_some() {
            self.first_data.get_or_insert(now);
            self.data_tx += 1;
            if tx.retransmission {
                self.retransmissions += 1;
            }
            if self.forced.get(self.next_forced) == Some(&self.data_tx) {
                // The scenario's `drops`: the network loses this transmission on purpose.
                self.next_forced += 1;
                self.forced_drops += 1;
                return Ok(());
            }
        }
        self.send_body(Body::Quic(QuicDatagram { hold_ns: 0, packet: tx }))
    }

    fn on_datagram(&mut self, arrived: Option<Time>, n: usize, ecn_bits: u8) -> Result<(), NetError> {
        let bytes = &self.link.rx[..n];
        let d = match wire::decode(bytes) {
            Ok(d) => d,
            Err(r) => {
                self.drops.count(r);
                return Ok(());
            }
        };
        let (conn, pn) = (d.conn, d.pn);
        let incoming = match d.body {
            Body::InitAck { syn_ack: None, .. } => Incoming::InitAck,
            Body::Quic(q) => Incoming::Quic(q),
            Body::CloseAck => Incoming::CloseAck,
            _ => {
                self.drops.count(DropReason::UnexpectedType);
                return Ok(());
            }
        };
        let reject = if conn != self.conn {
            Some(DropReason::UnknownConnection)
        } else if !wire::verify(&self.key, bytes) {
            Some(DropReason::BadMac)
        } else if !self.replay.accept(pn) {
            Some(DropReason::Replayed)
        } else {
            None
        };
        if let Some(r) = reject {
            self.drops.count(r);
            return Ok(());
        }
        let hold = if let Incoming::Quic(q) = &incoming { Dur(q.hold_ns as u64) } else { Dur::ZERO };
        let now = self.link.event_time(arrived, hold);
        match incoming {
            Incoming::CloseAck => self.close_acked = true,
            Incoming::InitAck => {
                if self.connected_at.is_none() {
                    self.connected_at = Some(now);
                    self.pump(now)?;
                }
            }
            Incoming::Quic(q) => {
                if !plausible(&q.packet, pn, &self.ep) {
                    self.drops.count(DropReason::Malformed);
                    return Ok(());
                }
                // The INIT_ACK may have been lost: the peer's first packet answers the INIT too.
                self.connected_at.get_or_insert(now);
                if self.closing {
                    return Ok(());
                }
                let ecn = ip_ecn(ecn_bits);
                self.ce_received += (ecn == IpEcn::Ce) as u64;
                self.ep.on_packet(now, &q.packet, ecn);
                if self.completed.is_none() && self.ep.is_responding() && self.ep.sender().is_done() {
                    self.completed = Some(now);
                }
                self.pump(now)?;
                if q.packet.ack.is_some() {
                    self.sample(now);
                }
            }
        }
        Ok(())
    }

    fn sample(&mut self, now: Time) {
        let Some(t0) = self.first_data else { return };
        if self.samples.len() >= MAX_SAMPLES {
            self.samples_dropped += 1;
            return;
        }
        let s = self.ep.sender();
        let cc = s.controller();
        self.samples.push(AckSample {
            t_s: now.saturating_since(t0).as_secs_f64(),
            cwnd: cc.cwnd(),
            ssthresh: match cc.ssthresh() {
                Ssthresh::Infinite => None,
                Ssthresh::Bytes(b) => Some(b),
            },
            flight: s.loss_detection().bytes_in_flight(),
            snd_una: s.stream_acked_prefix(),
        });
    }

    fn report(self, flow: &str, reason: Option<CloseReason>, end: Time, cpu_s: Option<f64>, timer_slack_ns: Option<u64>) -> SendReport {
        let s = self.ep.sender();
        let cc = s.controller();
        let t0 = self.first_data;
        let completed = self.completed.is_some() || (self.size == Some(0) && self.ep.is_responding());
        let duration = t0.map(|t0| self.completed.unwrap_or(end).saturating_since(t0).as_secs_f64());
        let exit = cc.startup_exit();
        let stats = s.stats();
        let acked = s.stream_acked_prefix();
        let srtt_s = self.srtt().map(|d| d.as_secs_f64());
        SendReport {
            conn_id: format!("{:016x}", self.conn),
            flow: flow.to_string(),
            transport: "quic".to_string(),
            startup: cc.startup_name().to_string(),
            congestion_avoidance: cc.avoidance_name().to_string(),
            mss: self.mds,
            size: self.size,
            completed,
            ended_by: reason.unwrap_or(CloseReason::DurationLimit).as_str().to_string(),
            connect_s: self.connected_at.map(|t| t.as_secs_f64()),
            first_data_s: t0.map(|t| t.as_secs_f64()),
            t0_mono_s: t0.map(|t| self.link.clock.monotonic_s(t)),
            duration_s: duration,
            samples: self.samples,
            samples_dropped: self.samples_dropped,
            startup_exit: exit.map(|e| StartupExitReport {
                time_s: e.time.saturating_since(t0.unwrap_or(e.time)).as_secs_f64(),
                reason: e.reason.as_str().to_string(),
                cwnd_bytes: e.cwnd,
                cwnd_pkts: e.cwnd / self.mds as f64,
            }),
            startup_details: super::details(cc),
            exit_reason: match (exit, completed) {
                (Some(e), _) => e.reason.as_str().to_string(),
                (None, true) => "completed".to_string(),
                (None, false) => "not-exited".to_string(),
            },
            data_segments_sent: self.data_tx,
            retransmissions: self.retransmissions,
            rto_count: stats.ptos,
            fast_retransmits: stats.congestion_events - stats.ecn_events,
            syn_retransmits: 0,
            forced_drops: self.forced_drops,
            bytes_acked: acked,
            goodput_bps: duration.filter(|&d| d > 0.0).map(|d| acked as f64 * 8.0 / d),
            srtt_s,
            pacing: self.timer_late.report(),
            ack_lag: self.link.ack_lag.report(),
            ack_unstamped: self.link.unstamped,
            timer_slack_ns,
            drops: self.drops,
            datagrams_sent: self.link.datagrams_sent,
            datagrams_received: self.link.datagrams_received,
            bytes_sent: self.link.bytes_sent,
            bytes_received: self.link.bytes_received,
            send_blocked: self.link.send_blocked,
            icmp_unreachable: self.link.icmp_unreachable,
            close_acknowledged: self.close_acked,
            ce_received: self.ce_received,
            cpu_s,
        }
    }
}

/// The ECN codepoint of an IP header's two ECN bits.
pub(crate) fn ip_ecn(bits: u8) -> IpEcn {
    match bits & 0b11 {
        0b10 => IpEcn::Ect0,
        0b01 => IpEcn::Ect1,
        0b11 => IpEcn::Ce,
        _ => IpEcn::NotEct,
    }
}

/// What an endpoint may be handed from an authenticated peer: a packet number no larger than the
/// datagram's (each QUIC packet is one datagram, so a space's numbers never run ahead of the
/// datagram count), an ACK of packets `ep` has sent only, and bytes at most [`MAX_AHEAD`] beyond
/// what has arrived in order.
pub(crate) fn plausible(p: &Transmit, datagram_pn: u64, ep: &Endpoint) -> bool {
    let acked_ok = p.ack.as_ref().is_none_or(|a| a.largest() < ep.sender().loss_detection().next_pn(p.space));
    let base = if p.space == Space::AppData { ep.stream_received() } else { 0 };
    let data_ok = p.data.is_none_or(|(off, len)| off + len as u64 <= base + MAX_AHEAD);
    p.pn <= datagram_pn && acked_ok && data_ok && p.size as u64 >= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The INIT's settings build the client the simulator builds (compared through their Debug
    /// form: the endpoint's whole state), for several `quic` tables.
    #[test]
    fn init_settings_build_the_simulators_client() {
        for (quic, ecn) in [
            ("", "false"),
            (r#"handshake = false, pacing = false, max_data = "1MB""#, "true"),
            (r#"ack_eliciting_threshold = 10, max_ack_delay = "5ms", immediate_ack_on_reorder = false, max_ack_ranges = 4, request = "2KB""#, "false"),
            (r#"packet_threshold = 5, time_threshold = 1.5, granularity = "2ms", initial_rtt = "100ms", max_datagram_size = "1350B", pacing_gain = 2.0"#, "true"),
        ] {
            let text = format!(
                r#"
                seed = 1
                duration = "10s"
                [topology]
                kind = "dumbbell"
                bottleneck_rate = "100Mbps"
                rtt = "20ms"
                access_rate = "1Gbps"
                queue = {{ kind = "droptail", limit = "100pkt" }}
                [[flows]]
                name = "f"
                size = "1MB"
                quic = {{ {quic} }}
                tcp = {{ ecn = {ecn} }}
                "#
            );
            let s = startlab_scenario::from_toml(&text).unwrap_or_else(|e| panic!("{quic}: {e}"));
            let (_, expected) = startlab_sim::flow_quic_endpoints(&s, 0).unwrap();
            let f = &s.flows[0];
            let ours = quic_settings(f, f.quic.as_ref().unwrap()).client_endpoint();
            assert_eq!(format!("{ours:?}"), format!("{expected:?}"), "quic = {{ {quic} }}");
        }
    }
}
