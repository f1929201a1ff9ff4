//! The sending side: connects, runs the scenario's [`Sender`], and reports.

use crate::net;
use crate::replay::ReplayWindow;
use crate::timing::{thread_cpu, Clock, GapStats, TimerSlack};
use crate::wire::{self, Body, CloseReason, Datagram, DropReason, Key, Settings, MAX_ACK_TIMEOUT, MAX_MSS};
use crate::{key_of, random_u64, seconds, AckSample, DropCounts, NetError, SendConfig, SendReport, StartupDetail, StartupExitReport, MAX_SAMPLES};
use startlab_cc::Ssthresh;
use startlab_scenario::{AckSpec, TcpSpec};
use startlab_tcp::{Ack, AckPolicy, Segment, SegmentKind, Sender};
use nix::sys::socket::{setsockopt, sockopt};
use startlab_units::{Dur, Time};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

mod link;
mod quic;
use link::Link;
pub(crate) use quic::{ip_ecn, plausible, quic_settings};

/// The payload of every DATA datagram ("any filler").
static ZEROS: [u8; MAX_MSS as usize] = [0; MAX_MSS as usize];

/// What both transports' sending sides start from.
struct Common {
    key: Key,
    conn: u64,
    sock: UdpSocket,
    server: SocketAddr,
    server_text: String,
    limit: Dur,
    connect_timeout: Dur,
    spin: Dur,
    /// The scenario's `drops`, sorted and deduplicated.
    forced: Vec<u64>,
}

/// CLOSE is sent this many times at most while no CLOSE_ACK comes back.
const CLOSE_TRIES: u32 = 5;

/// Datagrams read, and segments sent per event, before the loop looks at its timers again: a
/// window of thousands of segments (or a flood of ACKs) must not hold the RTO, the pacer or the
/// duration limit back.
pub(crate) const BATCH: usize = 64;

/// Runs flow `cfg.flow` of `cfg.scenario` to the server at `cfg.server`: one connection, until
/// the flow's `size` is acknowledged or the duration limit is reached, then CLOSE.
pub fn send(cfg: &SendConfig) -> Result<SendReport, NetError> {
    let key = key_of(&cfg.key)?;
    let scenario = &cfg.scenario;
    let no_flow = || NetError::NoFlow { index: cfg.flow, count: scenario.flows.len() };
    let flow = scenario.flows.get(cfg.flow).ok_or_else(no_flow)?;
    refuse_unsupported(flow)?;
    let limit = seconds("duration_s", cfg.duration_s.unwrap_or(scenario.duration.as_secs_f64()))?;
    let connect_timeout = seconds("connect_timeout_s", cfg.connect_timeout_s)?;
    if cfg.spin_us > 100_000 {
        return Err(NetError::Config { field: "spin_us", message: format!("{} µs is too long; give 0 to 100000 µs (50 is usual)", cfg.spin_us) });
    }
    let server = net::resolve("server", &cfg.server)?;
    let local = match &cfg.bind {
        Some(b) => net::resolve("bind", b)?,
        None if server.is_ipv6() => SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
        None => SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
    };
    let sock = net::bind(local, cfg.socket_buffer)?;
    // The kernel's arrival time of each ACK (see `Client::event_time`). Should the option fail
    // (never on Linux), datagrams come unstamped: they are timed when read and the report counts
    // them.
    let _ = setsockopt(&sock, sockopt::ReceiveTimestampns, &true);
    sock.connect(server).map_err(|source| NetError::Io { context: format!("connecting the UDP socket to {server}"), source })?;
    let mut forced = flow.drops.clone();
    forced.sort_unstable();
    forced.dedup();
    let spin = Dur::from_micros(cfg.spin_us);
    let conn = random_u64("connection id")?;
    if let Some(q) = &flow.quic {
        let (server_ep, _) = startlab_sim::flow_quic_endpoints(scenario, cfg.flow).ok_or_else(no_flow)?;
        let settings = quic_settings(flow, q);
        if let Some((key, accepted)) = settings.out_of_range() {
            return Err(NetError::Unsupported { flow: flow.name.clone(), message: format!("quic.{key}: the INIT carries {accepted}") });
        }
        let common = Common { key, conn, sock, server, server_text: cfg.server.clone(), limit, connect_timeout, spin, forced };
        return quic::run(common, flow, server_ep, settings);
    }
    let settings = check_flow(flow)?;
    let (sender, _) = startlab_sim::flow_endpoints(scenario, cfg.flow).ok_or_else(no_flow)?;
    let client = Client {
        v6: server.is_ipv6(),
        link: Link::new(sock, spin),
        key,
        conn,
        next_pn: 0,
        handshake: flow.tcp.handshake,
        rto_initial: flow.tcp.rto_initial,
        mss: flow.tcp.mss,
        size: flow.size,
        sender,
        settings,
        forced,
        next_forced: 0,
        data_tx: 0,
        forced_drops: 0,
        token: None,
        verified: false,
        connected_at: None,
        started: false,
        ect_on: false,
        backlog: false,
        closing: false,
        replay: ReplayWindow::default(),
        pacer: None,
        gaps: GapStats::new(),
        samples: Vec::with_capacity(1 << 16),
        samples_dropped: 0,
        close_acked: false,
        drops: DropCounts::default(),
    };
    client.run(&flow.name, server, limit, connect_timeout)
}

/// Refuses what neither transport can run.
fn refuse_unsupported(flow: &startlab_scenario::FlowSpec) -> Result<(), NetError> {
    let unsupported = |message: String| NetError::Unsupported { flow: flow.name.clone(), message };
    if flow.startup.decl().router_approval {
        return Err(unsupported(
            "Quick-Start (RFC 4782) needs routers that read and answer an IP option, which startlab-udp cannot carry; \
             run it in the simulator or choose another startup algorithm"
                .into(),
        ));
    }
    if flow.app.is_some() {
        return Err(unsupported("a request/response flow ([flows.app]) needs an application; startlab-udp runs one bulk transfer of `size` bytes".into()));
    }
    if flow.tcp.ecn == startlab_scenario::EcnSpec::L4s && flow.quic.is_some() {
        return Err(unsupported(
            "a QUIC flow with tcp.ecn = \"l4s\" sends ECT(1) and hands the CE count to the controller as L4S feedback; \
             startlab-udp's QUIC mode marks ECT(0) only; run it in the simulator, or use tcp.ecn = true"
                .into(),
        ));
    }
    if flow.tcp.ecn == startlab_scenario::EcnSpec::L4s {
        return Err(unsupported(
            "tcp.ecn = \"l4s\" needs ECT(1) data and Accurate ECN feedback (RFC 9768), which the datagram format does not carry \
             (it has RFC 3168's ECT(0), ECE and CWR only); run it in the simulator, or use tcp.ecn = \"classic\""
                .into(),
        ));
    }
    Ok(())
}

/// Refuses what the TCP mode cannot run; the receiver settings the INIT carries.
fn check_flow(flow: &startlab_scenario::FlowSpec) -> Result<Settings, NetError> {
    let unsupported = |message: String| NetError::Unsupported { flow: flow.name.clone(), message };
    let settings = settings_for(&flow.tcp);
    if flow.tcp.mss > MAX_MSS as u64 {
        return Err(unsupported(format!("tcp.mss = {} B does not fit one UDP datagram; at most {MAX_MSS} B", flow.tcp.mss)));
    }
    if let AckPolicy::Delayed { timeout } | AckPolicy::QuickAck { timeout, .. } = settings.policy {
        if timeout > MAX_ACK_TIMEOUT {
            return Err(unsupported(format!("a delayed-ACK timer of {timeout} is longer than the {MAX_ACK_TIMEOUT} the wire format carries")));
        }
    }
    if settings.rwnd == 0 {
        return Err(unsupported("tcp.rwnd = 0 would never let a byte through; give a positive window".into()));
    }
    Ok(settings)
}

/// The receiver the simulator builds for a flow's TCP options (`startlab_sim::flow_endpoints`),
/// as INIT settings. A test checks that both give the same receiver.
pub(crate) fn settings_for(t: &TcpSpec) -> Settings {
    let policy = match t.ack {
        AckSpec::EveryPacket => AckPolicy::EveryPacket,
        AckSpec::Delayed { timeout } => AckPolicy::Delayed { timeout },
        AckSpec::Quickack { segments, timeout } => AckPolicy::QuickAck { budget: segments.min(u32::MAX as u64) as u32, timeout },
    };
    Settings {
        policy,
        sack: t.sack(),
        max_sack_blocks: t.sack_blocks.min(startlab_tcp::MAX_SACK_BLOCKS as u64) as u8,
        rwnd: t.rwnd.unwrap_or(u64::MAX),
        mss: t.mss.min(MAX_MSS as u64) as u32,
    }
}

/// What the client reads: the server-to-client datagrams, owned.
enum Incoming {
    InitAck { token: u64, syn_ack: Option<Ack> },
    Ack { ack: Ack, verified: bool, delay: Dur },
    CloseAck,
}

struct Client {
    link: Link,
    v6: bool,
    key: Key,
    conn: u64,
    next_pn: u64,
    handshake: bool,
    rto_initial: Dur,
    mss: u64,
    size: Option<u64>,
    sender: Sender,
    settings: Settings,
    /// The scenario's `drops`, sorted: 1-based data transmissions not put on the wire.
    forced: Vec<u64>,
    next_forced: usize,
    data_tx: u64,
    forced_drops: u64,
    token: Option<u64>,
    verified: bool,
    connected_at: Option<Time>,
    started: bool,
    /// The socket currently marks datagrams ECT(0).
    ect_on: bool,
    /// The last `pump` stopped at [`BATCH`] segments with more to send.
    backlog: bool,
    /// The flow has ended: ACKs still arriving are not given to the sender (the report is the
    /// state at the end) and nothing more is sent but CLOSE.
    closing: bool,
    replay: ReplayWindow,
    /// The pacer's release time when it holds the sender back, with the count of timer expiries
    /// then (a release that turns out to be the RTO's is not the pacer's).
    pacer: Option<(Time, u64)>,
    gaps: GapStats,
    samples: Vec<AckSample>,
    samples_dropped: u64,
    close_acked: bool,
    drops: DropCounts,
}

impl Client {
    fn run(mut self, flow: &str, server: SocketAddr, limit: Dur, connect_timeout: Dur) -> Result<SendReport, NetError> {
        let cpu0 = thread_cpu();
        let slack = TimerSlack::fine();
        self.link.clock = Clock::start();
        let connect_deadline = Time::ZERO + connect_timeout;
        let limit = Time::ZERO + limit;
        // Without a handshake the INIT is the transport's own, retransmitted from rto_initial on.
        let mut init_retx = None;
        if self.handshake {
            self.sender.start(Time::ZERO);
            self.started = true;
            self.pump(Time::ZERO)?; // the SYN, on an INIT
        } else {
            self.send_init(false, false, false)?;
            init_retx = Some((Time::ZERO + self.rto_initial, self.rto_initial));
        }
        let mut ended: Option<(Time, CloseReason)> = None;
        // CLOSE goes out at once when the flow ends, then again while no CLOSE_ACK comes.
        let (mut close_tries, mut close_next) = (0, Time::ZERO);
        loop {
            let mut busy = true;
            for _ in 0..BATCH {
                let Some((n, _, stamp)) = self.link.recv()? else {
                    busy = false;
                    break;
                };
                let arrived = stamp.map(|ts| self.link.clock.time_of_stamp(ts));
                self.on_datagram(arrived, n)?;
            }
            let now = self.link.clock.now();
            self.link.floor = now;
            if ended.is_none() {
                if self.connected_at.is_none() {
                    if now >= connect_deadline {
                        return Err(NetError::ConnectTimeout {
                            server: server.to_string(),
                            after_s: connect_timeout.as_secs_f64(),
                            refused: self.link.icmp_unreachable > 0,
                        });
                    }
                    if let Some((_, interval)) = init_retx.filter(|&(at, _)| now >= at) {
                        self.send_init(false, false, false)?;
                        let next = interval + interval;
                        init_retx = Some((now + next, next));
                    }
                }
                if self.started && self.sender.next_timeout().is_some_and(|t| t <= now) {
                    self.sender.on_timer(now);
                    self.pump(now)?;
                } else if self.backlog {
                    self.pump(now)?;
                }
                busy |= self.backlog;
                if self.connected_at.is_some() {
                    let done = self.sender.completed_at().is_some() || (self.started && self.size == Some(0));
                    if done {
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
                        // Twice the smoothed RTT, within 10–200 ms.
                        let srtt = self.sender.srtt().unwrap_or(Dur::from_millis(100));
                        close_next = now + Dur((2 * srtt.as_nanos()).clamp(10_000_000, 200_000_000));
                    }
                    Some(close_next)
                }
                None => {
                    let mut d = if self.connected_at.is_some() { limit } else { connect_deadline };
                    if self.started {
                        d = self.sender.next_timeout().map_or(d, |t| t.min(d));
                    }
                    if self.connected_at.is_none() {
                        d = init_retx.map_or(d, |(at, _)| at.min(d));
                    }
                    Some(d)
                }
            };
            if !busy {
                self.link.wait(deadline)?;
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

    fn take_pn(&mut self) -> u64 {
        let pn = self.next_pn;
        self.next_pn += 1;
        pn
    }

    fn send_init(&mut self, syn: bool, ece: bool, cwr: bool) -> Result<(), NetError> {
        let d = Datagram { conn: self.conn, pn: self.take_pn(), body: Body::Init { syn, ece, cwr, settings: self.settings } };
        let n = wire::encode(&self.key, &mut self.link.tx, &d);
        self.link.transmit(n)
    }

    fn send_close(&mut self, reason: CloseReason) -> Result<(), NetError> {
        let d = Datagram { conn: self.conn, pn: self.take_pn(), body: Body::Close { reason } };
        let n = wire::encode(&self.key, &mut self.link.tx, &d);
        self.link.transmit(n)
    }

    /// Transmits what the sender releases now (as the simulator's `after_sender`), at most
    /// [`BATCH`] segments (`backlog` says the sender has more), then notes the pacer's release
    /// time if it holds the sender back.
    fn pump(&mut self, now: Time) -> Result<(), NetError> {
        self.backlog = false;
        for _ in 0..BATCH {
            let Some(seg) = self.sender.poll_transmit(now) else {
                self.pacer = match self.sender.pacing_rate() {
                    Some(_) => self.sender.next_timeout().filter(|&t| t > now).map(|t| (t, self.expiries())),
                    None => None,
                };
                return Ok(());
            };
            match seg.kind {
                SegmentKind::Syn => self.send_init(true, seg.ece, seg.cwr)?,
                SegmentKind::Data => self.send_data(&seg)?,
            }
        }
        self.backlog = true;
        self.pacer = None;
        Ok(())
    }

    /// Timer expiries so far (RTO with data outstanding, SYN retransmissions).
    fn expiries(&self) -> u64 {
        let s = self.sender.stats();
        s.timeouts + s.syn_retransmits
    }

    fn send_data(&mut self, seg: &Segment) -> Result<(), NetError> {
        self.data_tx += 1;
        if self.forced.get(self.next_forced) == Some(&self.data_tx) {
            // The scenario's `drops`: the network loses this transmission on purpose.
            self.next_forced += 1;
            self.forced_drops += 1;
            return Ok(());
        }
        // `check_flow` refuses L4S, so an ECN-capable segment here is ECT(0).
        let ect = seg.ecn != startlab_tcp::IpEcn::NotEct;
        if ect != self.ect_on {
            net::set_ecn(&self.link.sock, self.v6, ect).map_err(|e| NetError::Io { context: "setting the ECN codepoint".into(), source: e.into() })?;
            self.ect_on = ect;
        }
        let token = if self.verified { None } else { self.token };
        let payload = &ZEROS[..seg.len as usize];
        let body = Body::Data { seq: seg.seq, retransmit: seg.retransmit, ect, cwr: seg.cwr, token, payload };
        let d = Datagram { conn: self.conn, pn: self.take_pn(), body };
        let n = wire::encode(&self.key, &mut self.link.tx, &d);
        let t_send = self.link.clock.now();
        if let Some((release, expiries)) = self.pacer.take() {
            if release <= t_send && expiries == self.expiries() {
                self.gaps.record(t_send - release);
            }
        }
        self.link.transmit(n)
    }

    /// Checks one datagram in `rx[..n]` and acts on it.
    fn on_datagram(&mut self, arrived: Option<Time>, n: usize) -> Result<(), NetError> {
        let bytes = &self.link.rx[..n];
        let d = match wire::decode(bytes) {
            Ok(d) => d,
            Err(r) => {
                self.drops.count(r);
                return Ok(());
            }
        };
        let incoming = match d.body {
            Body::InitAck { token, syn_ack } => Incoming::InitAck { token, syn_ack },
            Body::Ack { ack, verified, delay_ns } => Incoming::Ack { ack, verified, delay: Dur(delay_ns as u64) },
            Body::CloseAck => Incoming::CloseAck,
            Body::Init { .. } | Body::Data { .. } | Body::Close { .. } | Body::InitQuic { .. } | Body::Quic(_) => {
                self.drops.count(DropReason::UnexpectedType);
                return Ok(());
            }
        };
        let reject = if d.conn != self.conn {
            Some(DropReason::UnknownConnection)
        } else if !wire::verify(&self.key, bytes) {
            Some(DropReason::BadMac)
        } else if !self.replay.accept(d.pn) {
            Some(DropReason::Replayed)
        } else {
            None
        };
        if let Some(r) = reject {
            self.drops.count(r);
            return Ok(());
        }
        let now = self.link.event_time(arrived, if let Incoming::Ack { delay, .. } = incoming { delay } else { Dur::ZERO });
        match incoming {
            Incoming::InitAck { token, syn_ack } => {
                self.token.get_or_insert(token);
                self.connected_at.get_or_insert(now);
                if let Some(a) = syn_ack.filter(|_| self.handshake) {
                    self.sender.on_ack(now, &a);
                    self.pump(now)?;
                }
                if !self.started {
                    self.started = true;
                    self.sender.start(now);
                    self.pump(now)?;
                }
            }
            Incoming::Ack { ack, verified, .. } => {
                // The sender trusts an ACK to end on a segment boundary within the data sent.
                let aligned = ack.ack % self.mss == 0 || Some(ack.ack) == self.size;
                if ack.ack > self.sender.snd_max() || !aligned {
                    self.drops.count(DropReason::Malformed);
                    return Ok(());
                }
                self.verified |= verified;
                if self.closing {
                    return Ok(());
                }
                self.sender.on_ack(now, &ack);
                self.pump(now)?;
                self.sample(now);
            }
            Incoming::CloseAck => self.close_acked = true,
        }
        Ok(())
    }

    fn sample(&mut self, now: Time) {
        let Some(t0) = self.sender.first_data_time() else { return };
        if self.samples.len() >= MAX_SAMPLES {
            self.samples_dropped += 1;
            return;
        }
        let cc = self.sender.cc();
        self.samples.push(AckSample {
            t_s: now.saturating_since(t0).as_secs_f64(),
            cwnd: cc.cwnd(),
            ssthresh: match cc.ssthresh() {
                Ssthresh::Infinite => None,
                Ssthresh::Bytes(b) => Some(b),
            },
            flight: self.sender.flight_size(),
            snd_una: self.sender.snd_una(),
        });
    }

    fn report(self, flow: &str, reason: Option<CloseReason>, end: Time, cpu_s: Option<f64>, timer_slack_ns: Option<u64>) -> SendReport {
        let s = &self.sender;
        let cc = s.cc();
        let t0 = s.first_data_time();
        let completed = s.completed_at().is_some() || (self.size == Some(0) && self.started);
        let duration = t0.map(|t0| s.completed_at().unwrap_or(end).saturating_since(t0).as_secs_f64());
        let exit = cc.startup_exit();
        let stats = s.stats();
        SendReport {
            conn_id: format!("{:016x}", self.conn),
            flow: flow.to_string(),
            transport: "tcp".to_string(),
            startup: cc.startup_name().to_string(),
            congestion_avoidance: cc.avoidance_name().to_string(),
            mss: self.mss,
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
                cwnd_pkts: e.cwnd / self.mss as f64,
            }),
            startup_details: details(cc),
            exit_reason: match (exit, completed) {
                (Some(e), _) => e.reason.as_str().to_string(),
                (None, true) => "completed".to_string(),
                (None, false) => "not-exited".to_string(),
            },
            data_segments_sent: stats.packets_sent,
            retransmissions: stats.retransmissions,
            rto_count: stats.timeouts,
            fast_retransmits: stats.fast_retransmits,
            syn_retransmits: stats.syn_retransmits,
            forced_drops: self.forced_drops,
            bytes_acked: s.snd_una(),
            goodput_bps: duration.filter(|&d| d > 0.0).map(|d| s.snd_una() as f64 * 8.0 / d),
            srtt_s: s.srtt().map(|d| d.as_secs_f64()),
            pacing: self.gaps.report(),
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
            ce_received: 0,
            cpu_s,
        }
    }
}

/// The startup algorithm's own report, as the simulator's columns name it.
fn details(cc: &startlab_cc::Controller) -> std::collections::BTreeMap<String, StartupDetail> {
    cc.startup_report()
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                startlab_cc::startup::Detail::Num(x) => StartupDetail::Num(x),
                startlab_cc::startup::Detail::Text(t) => StartupDetail::Text(t.to_string()),
            };
            (k.to_string(), v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(tcp: &str, startup: &str) -> startlab_scenario::Scenario {
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
            tcp = {{ {tcp} }}
            startup = {{ algorithm = "{startup}" }}
            size = "1MB"
            "#
        );
        startlab_scenario::from_toml(&text).unwrap_or_else(|e| panic!("test scenario: {e}"))
    }

    /// The INIT's settings build the receiver `flow_endpoints` builds, for every ACK policy and
    /// with and without SACK (compared through their Debug form: the receiver's whole state).
    #[test]
    fn init_settings_build_the_simulators_receiver() {
        for tcp in [
            r#"ack = "every-packet", recovery = "sack", sack_blocks = 4, mss = "1448B""#,
            r#"ack = "delayed", delack_timeout = "40ms", recovery = "newreno", rwnd = "64KB""#,
            r#"ack = "quickack", quickack_segments = 8, recovery = "sack", sack_blocks = 2"#,
        ] {
            let s = scenario(tcp, "slow-start");
            let (_, expected) = startlab_sim::flow_endpoints(&s, 0).unwrap();
            let ours = startlab_tcp::Receiver::new(settings_for(&s.flows[0].tcp).receiver_config());
            assert_eq!(format!("{ours:?}"), format!("{expected:?}"), "tcp = {{ {tcp} }}");
        }
    }

    #[test]
    fn quick_start_and_missing_flows_are_refused_with_a_reason() {
        let key = vec![0; 32];
        let s = scenario(r#"handshake = true"#, "quick-start");
        let e = send(&SendConfig::new(s.clone(), 0, "127.0.0.1:9", key.clone())).unwrap_err().to_string();
        assert!(e.contains("Quick-Start") && e.contains("flow \"f\""), "{e}");
        let e = send(&SendConfig::new(s, 3, "127.0.0.1:9", key.clone())).unwrap_err().to_string();
        assert!(e.contains("no flow 3") && e.contains("1 entries"), "{e}");
        let s = scenario(r#"ecn = "l4s""#, "slow-start");
        let e = send(&SendConfig::new(s, 0, "127.0.0.1:9", key.clone())).unwrap_err().to_string();
        assert!(e.contains("tcp.ecn = \"l4s\"") && e.contains("Accurate ECN") && e.contains("flow \"f\""), "{e}");
        let s = scenario("", "slow-start");
        let e = send(&SendConfig::new(s.clone(), 0, "127.0.0.1:9", vec![1; 5])).unwrap_err().to_string();
        assert!(e.contains("5 bytes"), "{e}");
        let e = send(&SendConfig::new(s, 0, "not an address", key)).unwrap_err().to_string();
        assert!(e.starts_with("server address \"not an address\""), "{e}");
    }
}
