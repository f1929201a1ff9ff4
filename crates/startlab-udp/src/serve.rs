//! The receiving side: waits for one connection, runs the receiver its INIT describes, and reports.

use crate::net;
use crate::replay::ReplayWindow;
use crate::timing::{thread_cpu, wait_readable, wait_to_send, Clock, GapStats, TimerSlack};
use crate::wire::{self, Body, CloseReason, Datagram, DropReason, Key, Settings, MAX_DATAGRAM};
use crate::{key_of, random_u64, seconds, DropCounts, NetError, ReceiverReport, ServeConfig, ServeReport, TimelineSample, MAX_SAMPLES};
use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};
use nix::sys::time::TimeSpec;
use startlab_tcp::{Ack, AckPolicy, Receiver};
use startlab_units::{Dur, Time};
use std::io::{self, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

mod quic;

/// An unverified peer gets at most this many times the bytes it has sent.
const AMPLIFICATION_FACTOR: u64 = 3;

/// DATA more than this far beyond the delivered bytes is refused (malformed): it bounds the
/// receiver's out-of-order state whatever an authenticated peer sends.
const MAX_AHEAD: u64 = 1 << 30;

/// The timeline's first sampling interval.
const TIMELINE_INTERVAL: Dur = Dur::from_millis(1);

/// Binds and serves one connection: [`Server::bind`] then [`Server::run`].
pub fn serve(cfg: &ServeConfig) -> Result<ServeReport, NetError> {
    Server::bind(cfg)?.run()
}

/// A bound server that has not started to serve yet (so that the caller can learn the port).
#[derive(Debug)]
pub struct Server {
    sock: UdpSocket,
    key: Key,
    local: SocketAddr,
    idle: Dur,
    accept: Option<Dur>,
}

impl Server {
    /// Checks the configuration and binds the socket.
    pub fn bind(cfg: &ServeConfig) -> Result<Server, NetError> {
        let key = key_of(&cfg.key)?;
        let idle = seconds("idle_timeout_s", cfg.idle_timeout_s)?;
        let accept = cfg.accept_timeout_s.map(|s| seconds("accept_timeout_s", s)).transpose()?;
        let addr = net::resolve("bind", &cfg.bind)?;
        let sock = net::bind(addr, cfg.socket_buffer)?;
        net::enable_receive_info(&sock, addr.is_ipv6())
            .map_err(|e| NetError::Io { context: "asking for the IP TOS of arriving datagrams".into(), source: e.into() })?;
        let local = sock.local_addr().map_err(|source| NetError::Io { context: "reading the bound address".into(), source })?;
        Ok(Server { sock, key, local, idle, accept })
    }

    /// The address the socket is bound to (with the port chosen when the configuration said 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Serves one connection: until its CLOSE, until it has been idle for the idle timeout, or
    /// (without a connection) until the accept timeout.
    pub fn run(self) -> Result<ServeReport, NetError> {
        let cpu0 = thread_cpu();
        let slack = TimerSlack::fine();
        let mut s = State {
            sock: self.sock,
            key: self.key,
            clock: Clock::start(),
            rx: vec![0; 1 << 16],
            tx: vec![0; MAX_DATAGRAM],
            cmsg: nix::cmsg_space!(i32, i32, u32, TimeSpec),
            ack_delay: Dur::ZERO,
            ack_lag: GapStats::new(),
            conn: None,
            closed: None,
            drops: DropCounts::default(),
            datagrams_received: 0,
            bytes_received: 0,
            datagrams_sent: 0,
            bytes_sent: 0,
            withheld_bytes: 0,
            withheld_datagrams: 0,
            acks_sent: 0,
            overflow: 0,
        };
        let ended_by = loop {
            let mut busy = true;
            for _ in 0..crate::send::BATCH {
                let Some((n, src, ecn, stamp)) = s.recv()? else {
                    busy = false;
                    break;
                };
                let now = s.clock.now();
                // An ACK this datagram causes carries how long ago the kernel received it.
                s.ack_delay = stamp.map_or(Dur::ZERO, |t| now.saturating_since(s.clock.time_of_stamp(t)));
                s.on_datagram(now, n, src, ecn)?;
                if s.closed.is_some() {
                    break;
                }
            }
            if s.closed.is_some() {
                break "close";
            }
            let now = s.clock.now();
            let mut deadline = match &s.conn {
                None => self.accept.map(|a| Time::ZERO + a),
                Some(c) => Some(c.last_valid + self.idle),
            };
            if deadline.is_some_and(|d| now >= d) {
                break if s.conn.is_some() { "idle-timeout" } else { "accept-timeout" };
            }
            if let Some(t) = s.conn.as_ref().and_then(|c| c.next_timeout(now)) {
                if t <= now {
                    s.ack_delay = now.saturating_since(t);
                    s.on_timer(now)?;
                }
            }
            if let Some(t) = s.conn.as_ref().and_then(|c| c.next_timeout(now)) {
                deadline = Some(deadline.map_or(t, |d| d.min(t)));
            }
            let timeout = deadline.map(|d| d.saturating_since(s.clock.now()));
            if !busy && timeout != Some(Dur::ZERO) {
                wait_readable(&s.sock, timeout).map_err(|source| NetError::Io { context: "waiting for the socket".into(), source })?;
            }
        };
        let cpu = match (cpu0, thread_cpu()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64()),
            _ => None,
        };
        drop(slack);
        Ok(s.report(ended_by, cpu))
    }
}

/// The one connection.
struct Conn {
    id: u64,
    peer: SocketAddr,
    ends: Ends,
    next_pn: u64,
    token: u64,
    budget: Budget,
    replay: ReplayWindow,
    /// When the first INIT arrived.
    opened: Time,
    last_valid: Time,
    first_data: Option<Time>,
    last_data: Time,
    timeline: Timeline,
}

/// What runs at this end: the scenario's TCP receiver, or its QUIC client endpoint.
enum Ends {
    Tcp { settings: Settings, receiver: Box<Receiver> },
    Quic(Box<quic::QuicEnd>),
}

impl Conn {
    /// When the receiver's (endpoint's) timer is due.
    fn next_timeout(&self, now: Time) -> Option<Time> {
        match &self.ends {
            Ends::Tcp { receiver, .. } => receiver.next_timeout(),
            Ends::Quic(q) => q.client.next_timeout(now),
        }
    }
}

/// Client-to-server datagrams, owned (the DATA payload is not kept: it is filler).
enum Incoming {
    Init { syn: bool, ecn_setup: bool, settings: Settings },
    Data { seq: u64, len: u32, cwr: bool, token: Option<u64> },
    Close { reason: CloseReason },
}

struct State {
    sock: UdpSocket,
    key: Key,
    clock: Clock,
    rx: Vec<u8>,
    tx: Vec<u8>,
    cmsg: Vec<u8>,
    conn: Option<Conn>,
    closed: Option<CloseReason>,
    drops: DropCounts,
    datagrams_received: u64,
    bytes_received: u64,
    datagrams_sent: u64,
    bytes_sent: u64,
    withheld_bytes: u64,
    withheld_datagrams: u64,
    acks_sent: u64,
    overflow: u64,
    /// The delay to put on the next ACK: from the kernel's arrival stamp of the datagram being
    /// handled, or from the delayed-ACK deadline, to now.
    ack_delay: Dur,
    /// Every ACK's delay.
    ack_lag: GapStats,
}

/// One datagram read into `rx`: its length, source, the ECN bits of its IP header, and the
/// kernel's arrival stamp.
type Received = (usize, Option<SocketAddr>, u8, Option<TimeSpec>);

impl State {
    /// Reads one waiting datagram into `rx`: its length, source, its ECN codepoint, and the
    /// kernel's arrival stamp (`CLOCK_REALTIME`).
    fn recv(&mut self) -> Result<Option<Received>, NetError> {
        loop {
            let mut iov = [IoSliceMut::new(&mut self.rx)];
            match recvmsg::<SockaddrStorage>(self.sock.as_raw_fd(), &mut iov, Some(&mut self.cmsg), MsgFlags::empty()) {
                Ok(msg) => {
                    let (mut ecn, mut stamp) = (0, None);
                    if let Ok(cmsgs) = msg.cmsgs() {
                        for c in cmsgs {
                            match c {
                                ControlMessageOwned::Ipv4Tos(tos) => ecn = tos & 0b11,
                                ControlMessageOwned::Ipv6TClass(tc) => ecn = (tc & 0b11) as u8,
                                ControlMessageOwned::RxqOvfl(n) => self.overflow = self.overflow.max(n as u64),
                                ControlMessageOwned::ScmTimestampns(ts) => stamp = Some(ts),
                                _ => {}
                            }
                        }
                    }
                    let src = msg.address.as_ref().and_then(std_addr);
                    let n = msg.bytes;
                    self.datagrams_received += 1;
                    self.bytes_received += n as u64;
                    return Ok(Some((n, src, ecn, stamp)));
                }
                Err(nix::errno::Errno::EAGAIN) => return Ok(None),
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(NetError::Io { context: "receiving a datagram".into(), source: e.into() }),
            }
        }
    }

    /// Checks one datagram in `rx[..n]` and acts on it.
    fn on_datagram(&mut self, now: Time, n: usize, src: Option<SocketAddr>, ecn: u8) -> Result<(), NetError> {
        let ce = ecn == net::CE;
        let bytes = &self.rx[..n];
        let d = match wire::decode(bytes) {
            Ok(d) => d,
            Err(r) => {
                self.drops.count(r);
                return Ok(());
            }
        };
        let (conn_id, pn) = (d.conn, d.pn);
        let incoming = match d.body {
            Body::InitQuic { settings } => return self.on_quic(now, n, src, ecn, (conn_id, pn), quic::QuicIn::Init(settings)),
            Body::Quic(q) => return self.on_quic(now, n, src, ecn, (conn_id, pn), quic::QuicIn::Packet(q)),
            Body::Init { syn, ece, cwr, settings } => Incoming::Init { syn, ecn_setup: ece && cwr, settings },
            Body::Data { seq, cwr, token, payload, .. } => Incoming::Data { seq, len: payload.len() as u32, cwr, token },
            Body::Close { reason } => Incoming::Close { reason },
            Body::InitAck { .. } | Body::Ack { .. } | Body::CloseAck => {
                self.drops.count(DropReason::UnexpectedType);
                return Ok(());
            }
        };
        let Some(src) = src else {
            self.drops.count(DropReason::WrongPeer);
            return Ok(());
        };
        if let Some(r) = self.reject(matches!(incoming, Incoming::Init { .. }), conn_id, src, n) {
            self.drops.count(r);
            return Ok(());
        }
        if self.conn.is_none() {
            let Incoming::Init { settings, .. } = incoming else { unreachable!("only an INIT passes without a connection") };
            self.open(conn_id, src, now, Ends::Tcp { settings, receiver: Box::new(Receiver::new(settings.receiver_config())) })?;
        }
        if !self.accept(pn, n, now) {
            return Ok(());
        }
        if let Incoming::Close { reason } = incoming {
            self.send(Body::CloseAck)?;
            self.closed = Some(reason);
            return Ok(());
        }
        let c = self.conn.as_mut().expect("the connection exists now");
        let Ends::Tcp { settings, receiver } = &mut c.ends else {
            self.drops.count(DropReason::UnexpectedType);
            return Ok(());
        };
        match incoming {
            Incoming::Init { syn, ecn_setup, .. } => {
                // A repeated INIT (a retransmitted SYN) is answered again; its settings are the
                // first INIT's.
                let syn_ack = syn.then(|| receiver.on_syn(ecn_setup));
                let token = c.token;
                self.send(Body::InitAck { token, syn_ack })?;
            }
            Incoming::Data { seq, len, cwr, token } => {
                let end = seq.checked_add(len as u64);
                if len == 0 || len > settings.mss || end.is_none_or(|e| e > receiver.delivered() + MAX_AHEAD) {
                    self.drops.count(DropReason::Malformed);
                    return Ok(());
                }
                if token == Some(c.token) {
                    c.budget.verified = true;
                }
                let t0 = *c.first_data.get_or_insert(now);
                c.last_data = now;
                let ack = receiver.on_segment_ecn(now, seq, len, ce, cwr);
                c.timeline.record(now.saturating_since(t0).as_nanos(), receiver.delivered());
                if let Some(ack) = ack {
                    self.send_ack(ack)?;
                }
            }
            Incoming::Close { .. } => unreachable!("handled above"),
        }
        Ok(())
    }

    /// Why a datagram that decoded is refused before its packet number is looked at: `init` it
    /// may open a connection; `n` its length.
    fn reject(&self, init: bool, conn: u64, src: SocketAddr, n: usize) -> Option<DropReason> {
        match &self.conn {
            None if !init => Some(DropReason::UnknownConnection),
            Some(c) if c.id != conn => Some(DropReason::UnknownConnection),
            Some(c) if c.peer != src => Some(DropReason::WrongPeer),
            _ if !wire::verify(&self.key, &self.rx[..n]) => Some(DropReason::BadMac),
            _ => None,
        }
    }

    /// Opens the connection.
    fn open(&mut self, id: u64, peer: SocketAddr, now: Time, ends: Ends) -> Result<(), NetError> {
        self.conn = Some(Conn {
            id,
            peer,
            ends,
            next_pn: 0,
            token: random_u64("address-verification token")?,
            budget: Budget::default(),
            replay: ReplayWindow::default(),
            opened: now,
            last_valid: now,
            first_data: None,
            last_data: now,
            timeline: Timeline::new(),
        });
        Ok(())
    }

    /// Checks an authenticated datagram's packet number (anti-replay) and counts its `n` bytes;
    /// false (counted as replayed) if it is refused.
    fn accept(&mut self, pn: u64, n: usize, now: Time) -> bool {
        let c = self.conn.as_mut().expect("a connection");
        if !c.replay.accept(pn) {
            self.drops.count(DropReason::Replayed);
            return false;
        }
        c.budget.received += n as u64;
        c.last_valid = now;
        true
    }

    /// The receiver's (endpoint's) timer came due.
    fn on_timer(&mut self, now: Time) -> Result<(), NetError> {
        let c = self.conn.as_mut().expect("a timer belongs to a connection");
        match &mut c.ends {
            Ends::Tcp { receiver, .. } => {
                if let Some(ack) = receiver.on_timer(now) {
                    self.send_ack(ack)?;
                }
                Ok(())
            }
            Ends::Quic(_) => self.quic_timer(now),
        }
    }

    /// Sends `ack`, `ack_delay` after the event that caused it.
    fn send_ack(&mut self, ack: Ack) -> Result<(), NetError> {
        let verified = self.conn.as_ref().is_some_and(|c| c.budget.verified);
        self.acks_sent += 1;
        let delay = std::mem::take(&mut self.ack_delay);
        self.ack_lag.record(delay);
        self.send(Body::Ack { ack, verified, delay_ns: delay.as_nanos().min(u32::MAX as u64) as u32 })
    }

    /// Sends to the peer unless the amplification limit withholds it.
    fn send(&mut self, body: Body<'_>) -> Result<(), NetError> {
        let c = self.conn.as_mut().expect("the server sends only on a connection");
        let d = Datagram { conn: c.id, pn: c.next_pn, body };
        c.next_pn += 1;
        let n = wire::encode(&self.key, &mut self.tx, &d);
        if !c.budget.take(n as u64) {
            self.withheld_bytes += n as u64;
            self.withheld_datagrams += 1;
            return Ok(());
        }
        loop {
            match self.sock.send_to(&self.tx[..n], c.peer) {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    wait_to_send(&self.sock, "the client")?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(NetError::Io { context: format!("sending to {}", c.peer), source }),
            }
        }
        self.datagrams_sent += 1;
        self.bytes_sent += n as u64;
        Ok(())
    }

    fn report(self, ended_by: &str, cpu_s: Option<f64>) -> ServeReport {
        let c = self.conn;
        let address_verified = c.as_ref().is_some_and(|c| c.budget.verified);
        ServeReport {
            conn_id: c.as_ref().map(|c| format!("{:016x}", c.id)),
            peer: c.as_ref().map(|c| c.peer.to_string()),
            ended_by: ended_by.to_string(),
            close_reason: self.closed.map(|r| r.as_str().to_string()),
            transport: c.as_ref().map(|c| if matches!(c.ends, Ends::Quic(_)) { "quic" } else { "tcp" }.to_string()),
            receiver: c.as_ref().and_then(|c| match &c.ends {
                Ends::Tcp { settings, .. } => Some(receiver_report(settings)),
                Ends::Quic(_) => None,
            }),
            quic: c.as_ref().and_then(|c| match &c.ends {
                Ends::Quic(q) => Some(q.report()),
                Ends::Tcp { .. } => None,
            }),
            delivered_bytes: c.as_ref().map_or(0, |c| match &c.ends {
                Ends::Tcp { receiver, .. } => receiver.delivered(),
                Ends::Quic(q) => q.client.stream_received(),
            }),
            duplicate_bytes: c.as_ref().map_or(0, |c| match &c.ends {
                Ends::Tcp { receiver, .. } => receiver.duplicate_bytes(),
                Ends::Quic(_) => 0,
            }),
            ce_received: c.as_ref().map_or(0, |c| match &c.ends {
                Ends::Tcp { receiver, .. } => receiver.ce_received(),
                Ends::Quic(q) => q.ce_received,
            }),
            first_data_s: c.as_ref().and_then(|c| c.first_data.map(|t| t.saturating_since(c.opened).as_secs_f64())),
            data_duration_s: c.as_ref().and_then(|c| c.first_data.map(|t| c.last_data.saturating_since(t).as_secs_f64())),
            timeline_interval_s: c.as_ref().map_or(TIMELINE_INTERVAL, |c| Dur(c.timeline.interval_ns)).as_secs_f64(),
            timeline: c.map(|c| c.timeline.finish()).unwrap_or_default(),
            address_verified,
            acks_sent: self.acks_sent,
            ack_lag: self.ack_lag.report(),
            drops: self.drops,
            datagrams_received: self.datagrams_received,
            bytes_received: self.bytes_received,
            datagrams_sent: self.datagrams_sent,
            bytes_sent: self.bytes_sent,
            amplification_withheld_bytes: self.withheld_bytes,
            amplification_withheld_datagrams: self.withheld_datagrams,
            socket_overflow_drops: self.overflow,
            cpu_s,
        }
    }
}

/// The amplification limit's account of one peer (QUIC's rule, RFC 9000 §8.1, with the token
/// as the address validation): until the peer has echoed the token, the bytes sent to it stay
/// within [`AMPLIFICATION_FACTOR`] times the bytes of authenticated datagrams received from it.
#[derive(Debug, Default)]
struct Budget {
    received: u64,
    sent: u64,
    verified: bool,
}

impl Budget {
    /// True if `n` more bytes may go to the peer now; they are then counted as sent.
    fn take(&mut self, n: u64) -> bool {
        if !self.verified && self.sent + n > AMPLIFICATION_FACTOR * self.received {
            return false;
        }
        self.sent += n;
        true
    }
}

fn std_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    a.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
}

fn receiver_report(s: &Settings) -> ReceiverReport {
    let (ack, timeout, budget) = match s.policy {
        AckPolicy::EveryPacket => ("every-packet", None, None),
        AckPolicy::Delayed { timeout } => ("delayed", Some(timeout), None),
        AckPolicy::QuickAck { budget, timeout } => ("quickack", Some(timeout), Some(budget)),
    };
    ReceiverReport {
        ack: ack.to_string(),
        ack_timeout_s: timeout.map(|t| t.as_secs_f64()),
        quickack_segments: budget,
        sack: s.sack,
        sack_blocks: s.max_sack_blocks,
        rwnd: (s.rwnd != u64::MAX).then_some(s.rwnd),
        mss: s.mss,
    }
}

/// Delivered bytes over time with bounded memory: at most one sample per interval; when
/// [`MAX_SAMPLES`] is reached the interval doubles and every other sample is dropped.
struct Timeline {
    /// (ns since the first data segment, delivered bytes).
    samples: Vec<(u64, u64)>,
    interval_ns: u64,
    /// The newest state not yet sampled (kept for the final sample).
    pending: Option<(u64, u64)>,
}

impl Timeline {
    fn new() -> Timeline {
        Timeline { samples: Vec::with_capacity(1 << 14), interval_ns: TIMELINE_INTERVAL.as_nanos(), pending: None }
    }

    fn record(&mut self, t_ns: u64, bytes: u64) {
        let last = self.samples.last().copied();
        if last.is_some_and(|(_, b)| b == bytes) {
            return;
        }
        let s = (t_ns, bytes);
        if last.is_some_and(|(t, _)| t_ns < t + self.interval_ns) {
            self.pending = Some(s);
            return;
        }
        self.pending = None;
        self.samples.push(s);
        if self.samples.len() >= MAX_SAMPLES {
            self.interval_ns *= 2;
            let mut i = 0;
            self.samples.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
    }

    fn finish(mut self) -> Vec<TimelineSample> {
        self.samples.extend(self.pending.take());
        self.samples.iter().map(|&(t, bytes)| TimelineSample { t_s: t as f64 / 1e9, bytes }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unverified_peer_gets_at_most_three_times_its_bytes() {
        let mut b = Budget::default();
        assert!(!b.take(1), "nothing received, nothing sent");
        b.received = 100;
        assert!(b.take(250));
        assert!(b.take(50), "exactly 3x is allowed");
        assert!(!b.take(1), "one byte more is withheld");
        assert_eq!(b.sent, 300, "withheld bytes are not counted as sent");
        b.verified = true;
        assert!(b.take(10_000), "a verified peer has no limit");
    }

    #[test]
    fn the_timeline_samples_at_most_once_per_interval_and_keeps_the_last_point() {
        let mut t = Timeline::new();
        t.record(0, 1448);
        t.record(100_000, 2896); // 0.1 ms later: held back
        t.record(200_000, 4344);
        t.record(1_000_000, 5792); // 1 ms after the first: sampled
        t.record(1_500_000, 7240);
        let v = t.finish();
        let pairs: Vec<_> = v.iter().map(|s| (s.t_s, s.bytes)).collect();
        assert_eq!(pairs, vec![(0.0, 1448), (0.001, 5792), (0.0015, 7240)]);
    }

    #[test]
    fn a_full_timeline_halves_and_doubles_its_interval() {
        let mut t = Timeline::new();
        for i in 0..MAX_SAMPLES as u64 {
            t.record(i * 1_000_000, i + 1);
        }
        assert_eq!(t.interval_ns, 2_000_000);
        assert_eq!(t.samples.len(), MAX_SAMPLES / 2);
        assert!(t.samples.windows(2).all(|w| w[1].0 - w[0].0 == 2_000_000), "every other sample is kept");
    }
}
