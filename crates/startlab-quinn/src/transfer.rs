//! One quinn connection carrying one response: the server (the data sender, whose congestion
//! controller is startlab's or quinn's own) and the client, each returning a JSON-ready report.
//!
//! - The server binds a UDP address, accepts one connection, reads the client's request on the
//!   first bidirectional stream and answers on it with `size` bytes (or for `duration` seconds),
//!   then waits for the client to close the connection.
//! - The client connects, sends a small request, reads the response to its end, closes.
//! - TLS: the server makes a self-signed certificate for the name `startlab` at start-up and
//!   writes it (DER) where it is told; the client trusts that certificate alone.
//! - Transport settings come from the scenario's `quic` table when one is given (datagram size
//!   without path-MTU discovery, initial RTT, loss-detection thresholds, initial window for quinn's
//!   own controllers too), and the flow-control windows are large enough never to limit a lab
//!   path (64 MiB receive windows, an 8 MiB send buffer).
//!
//! Times in the server report are seconds since the connection's creation (the controller's time
//! zero); `origin_mono_s` is that instant on `CLOCK_MONOTONIC` (the testbed router's clock).

use crate::controller::{ControllerHandle, ControllerTrace, CwndSample, StartlabFactory};
use quinn::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use quinn::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde::Serialize;
use startlab_scenario::Scenario;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The server's name in its certificate and the client's connect call.
pub const SERVER_NAME: &str = "startlab";
/// Flow-control windows (connection and stream receive windows): no lab path's BDP reaches them.
const WINDOW: u32 = 64 << 20;
/// The server's send buffer (unacknowledged and unsent bytes): above the largest window the lab's
/// paths reach (a 100 Mbit/s, 100 ms path with an 833-packet buffer overshoots to about 5 MB in
/// slow start), and small enough that a `duration` run ends soon after its deadline (what was
/// written before it still goes out: at most this much).
const SEND_BUFFER: u64 = 8 << 20;

/// Whose congestion control the server runs.
#[derive(Clone, Debug)]
pub enum Cc {
    /// startlab's controller for the scenario's flow (`startlab_sim::flow_controller`).
    Startlab {
        /// The scenario.
        scenario: Box<Scenario>,
        /// Its `[[flows]]` entry.
        flow: usize,
    },
    /// quinn's CUBIC.
    Cubic,
    /// quinn's NewReno.
    NewReno,
    /// quinn's BBR.
    Bbr,
}

impl Cc {
    /// The name in reports: `startlab`, `cubic`, `newreno`, `bbr`.
    pub fn name(&self) -> &'static str {
        match self {
            Cc::Startlab { .. } => "startlab",
            Cc::Cubic => "cubic",
            Cc::NewReno => "newreno",
            Cc::Bbr => "bbr",
        }
    }
}

/// The path settings a scenario's QUIC flow gives quinn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathSettings {
    /// UDP payload bytes of a full datagram.
    pub max_datagram_size: u16,
    /// The initial window (bytes), for quinn's own controllers.
    pub initial_window: u64,
    /// RTT before the first sample.
    pub initial_rtt: Duration,
    /// RFC 9002 `kPacketThreshold`, `kTimeThreshold`, `kPersistentCongestionThreshold`.
    pub packet_threshold: u32,
    /// As a number.
    pub time_threshold: f32,
    /// In PTOs.
    pub persistent_congestion_threshold: u32,
}

impl PathSettings {
    /// The settings of the scenario's flow `flow`; an error names what does not fit (no such
    /// flow, a TCP flow).
    pub fn of(scenario: &Scenario, flow: usize) -> Result<PathSettings, String> {
        let f = scenario.flows.get(flow).ok_or_else(|| format!("flows: the scenario has no flow {flow}; its [[flows]] has {} entries, numbered from 0", scenario.flows.len()))?;
        let q = f.quic.as_ref().ok_or_else(|| format!("flows[{flow}].quic: startlab-quinn runs QUIC flows; this flow is TCP (add `quic = {{}}` to it)"))?;
        Ok(PathSettings {
            max_datagram_size: q.max_datagram_size.min(u16::MAX as u64) as u16,
            initial_window: q.initial_window,
            initial_rtt: Duration::from_nanos(q.initial_rtt.as_nanos()),
            packet_threshold: q.packet_threshold.min(u32::MAX as u64) as u32,
            time_threshold: q.time_threshold as f32,
            persistent_congestion_threshold: q.persistent_congestion_threshold.min(u32::MAX as u64) as u32,
        })
    }
}

/// The transport settings of both ends: the path's (if any), large windows, no GSO (every
/// packet leaves as its own datagram, as on the testbed's wire).
fn transport(path: Option<&PathSettings>, factory: Option<Arc<dyn ControllerFactory + Send + Sync>>) -> quinn::TransportConfig {
    let mut t = quinn::TransportConfig::default();
    t.stream_receive_window(WINDOW.into()).receive_window(WINDOW.into()).send_window(SEND_BUFFER);
    t.max_idle_timeout(Some(Duration::from_secs(10).try_into().expect("10 s fits a VarInt")));
    t.enable_segmentation_offload(false);
    if let Some(p) = path {
        // A fixed datagram size: no path-MTU discovery, and no black-hole fallback below it.
        t.initial_mtu(p.max_datagram_size).min_mtu(p.max_datagram_size).mtu_discovery_config(None);
        t.initial_rtt(p.initial_rtt).packet_threshold(p.packet_threshold).time_threshold(p.time_threshold);
        t.persistent_congestion_threshold(p.persistent_congestion_threshold);
    }
    if let Some(f) = factory {
        t.congestion_controller_factory(f);
    }
    t
}

/// The monotonic clock (quinn's `Instant` is `CLOCK_MONOTONIC` on Linux).
#[allow(clippy::disallowed_methods)] // a real transport reads the real clock (as startlab-udp's timing.rs does)
fn now() -> Instant {
    Instant::now()
}

/// `CLOCK_MONOTONIC` at `at`, seconds.
fn mono_s(at: Instant) -> f64 {
    let (i, m) = (now(), nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC));
    let m = m.map_or(0.0, |t| t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9);
    m - i.saturating_duration_since(at).as_secs_f64()
}

/// The server's options.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// The address to bind (port 0: any).
    pub bind: SocketAddr,
    /// Bytes to send (`None`: until `duration`).
    pub size: Option<u64>,
    /// Stop sending after this long from the first byte (seconds).
    pub duration: Option<f64>,
    /// The congestion control.
    pub cc: Cc,
    /// The scenario flow's path settings, if any.
    pub path: Option<PathSettings>,
    /// Where to write the certificate (DER) for the client.
    pub cert_out: PathBuf,
    /// Give up when no connection comes within this long (seconds).
    pub accept_timeout: f64,
}

/// Startup exit as the report gives it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exit {
    /// Seconds since the connection's creation.
    pub time_s: f64,
    /// Why (the simulator's names; `loss` for quinn's own controllers: the window's first fall).
    pub reason: String,
    /// The window before any reduction (bytes).
    pub cwnd: f64,
    /// In full datagrams.
    pub cwnd_pkts: f64,
}

/// What the server reports.
#[derive(Clone, Debug, Serialize)]
pub struct ServerReport {
    /// `startlab`, `cubic`, `newreno` or `bbr`.
    pub cc: String,
    /// The peer.
    pub peer: String,
    /// The connection's time zero on `CLOCK_MONOTONIC` (seconds).
    pub origin_mono_s: f64,
    /// The handshake completed (seconds since the connection's creation).
    pub handshake_s: f64,
    /// The first response byte went to the stream (seconds).
    pub first_byte_s: Option<f64>,
    /// The client closed the connection after reading everything (seconds).
    pub completion_s: Option<f64>,
    /// The response was sent whole and the client closed cleanly.
    pub completed: bool,
    /// Response bytes written.
    pub bytes: u64,
    /// Datagram size (bytes).
    pub max_datagram_size: u64,
    /// Per ACK (startlab) or per millisecond's change (quinn's own): the window.
    pub cwnd: Vec<CwndSample>,
    /// The startup's end.
    pub startup_exit: Option<Exit>,
    /// quinn's path statistics.
    pub lost_packets: u64,
    /// quinn's count of lost bytes.
    pub lost_bytes: u64,
    /// quinn's count of congestion events.
    pub congestion_events: u64,
    /// Packets quinn sent.
    pub sent_packets: u64,
    /// quinn's smoothed RTT at the end (seconds).
    pub rtt_s: f64,
    /// The startlab controller's own record (startlab only).
    pub controller: Option<ControllerTrace>,
    /// Why the transfer did not complete, if it did not.
    pub error: Option<String>,
}

/// What the client reports.
#[derive(Clone, Debug, Serialize)]
pub struct ClientReport {
    /// Response bytes read.
    pub bytes: u64,
    /// The handshake completed (seconds since the client began to connect).
    pub handshake_s: f64,
    /// The first response byte arrived (seconds).
    pub first_byte_s: Option<f64>,
    /// The last byte arrived (seconds).
    pub completion_s: Option<f64>,
    /// The stream ended cleanly.
    pub completed: bool,
    /// The client's connection start on `CLOCK_MONOTONIC` (seconds).
    pub origin_mono_s: f64,
}

fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// A self-signed certificate for [`SERVER_NAME`].
fn certificate() -> io::Result<(CertificateDer<'static>, PrivateKeyDer<'static>)> {
    let c = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()]).map_err(err)?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(c.signing_key.serialize_der()));
    Ok((c.cert.der().clone(), key))
}

/// A bound server endpoint and what [`serve`] needs to know of its controllers.
#[derive(Debug)]
pub struct Bound {
    /// The endpoint.
    pub endpoint: quinn::Endpoint,
    /// With `--cc startlab`, the factory holding handles on the controllers it built.
    pub startlab: Option<Arc<StartlabFactory>>,
    /// The controllers' initial window (bytes).
    pub initial_window: u64,
}

/// The server end's endpoint, bound (writes the certificate; prints nothing).
pub fn bind_server(o: &ServerOptions) -> io::Result<Bound> {
    let (cert, key) = certificate()?;
    std::fs::write(&o.cert_out, cert.as_ref()).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", o.cert_out.display())))?;
    let mut cfg = quinn::ServerConfig::with_single_cert(vec![cert], key).map_err(err)?;
    let (factory, startlab): (Arc<dyn ControllerFactory + Send + Sync>, _) = match &o.cc {
        Cc::Startlab { scenario, flow } => {
            let (scenario, flow) = (scenario.clone(), *flow);
            startlab_sim::flow_controller(&scenario, flow).ok_or_else(|| err(format!("flows: no flow {flow}")))?;
            let f = StartlabFactory::new(move || startlab_sim::flow_controller(&scenario, flow).expect("checked above"));
            (f.clone(), Some(f))
        }
        own => {
            let iw = o.path.map(|p| p.initial_window);
            let f: Arc<dyn ControllerFactory + Send + Sync> = match own {
                Cc::Cubic => Arc::new(iw.map_or_else(CubicConfig::default, |w| CubicConfig::default().initial_window(w).clone())),
                Cc::NewReno => Arc::new(iw.map_or_else(NewRenoConfig::default, |w| NewRenoConfig::default().initial_window(w).clone())),
                _ => Arc::new(iw.map_or_else(BbrConfig::default, |w| BbrConfig::default().initial_window(w).clone())),
            };
            (f, None)
        }
    };
    let mtu = o.path.map_or(1200, |p| p.max_datagram_size);
    let initial_window = factory.clone().build(now(), mtu).initial_window();
    cfg.transport_config(Arc::new(transport(o.path.as_ref(), Some(factory))));
    let endpoint = quinn::Endpoint::server(cfg, o.bind)?;
    Ok(Bound { endpoint, startlab, initial_window })
}

/// Serves one connection on the endpoint [`bind_server`] bound, and reports.
pub async fn serve(bound: Bound, o: &ServerOptions) -> io::Result<ServerReport> {
    let Bound { endpoint, startlab, initial_window } = bound;
    if let Some(f) = &startlab {
        // The window read above built one controller: only the connection's count.
        f.forget();
    }
    let incoming = tokio::time::timeout(Duration::from_secs_f64(o.accept_timeout), endpoint.accept())
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, format!("no connection within {} s", o.accept_timeout)))?
        .ok_or_else(|| err("the endpoint closed"))?;
    let accepted = now();
    let conn = incoming.await.map_err(err)?;
    let handle: Option<ControllerHandle> = startlab.as_ref().and_then(|f| f.built().pop());
    let origin = handle.as_ref().map_or(accepted, |h| h.origin());
    let since = move |t: Instant| t.saturating_duration_since(origin).as_secs_f64();
    let handshake_s = since(now());
    // quinn's own controllers: the window as quinn reports it, read every millisecond.
    let sampler = handle.is_none().then(|| {
        let c = conn.clone();
        tokio::spawn(async move {
            let mut samples = vec![CwndSample { t_s: 0.0, cwnd: initial_window }];
            let mut tick = tokio::time::interval(Duration::from_millis(1));
            loop {
                tick.tick().await;
                let cwnd = c.stats().path.cwnd;
                if samples.last().is_none_or(|s| s.cwnd != cwnd) {
                    samples.push(CwndSample { t_s: since(now()), cwnd });
                }
                if c.close_reason().is_some() {
                    return samples;
                }
            }
        })
    });
    let mut report = ServerReport {
        cc: o.cc.name().to_string(),
        peer: conn.remote_address().to_string(),
        origin_mono_s: mono_s(origin),
        handshake_s,
        first_byte_s: None,
        completion_s: None,
        completed: false,
        bytes: 0,
        max_datagram_size: o.path.map_or(1200, |p| p.max_datagram_size as u64),
        cwnd: Vec::new(),
        startup_exit: None,
        lost_packets: 0,
        lost_bytes: 0,
        congestion_events: 0,
        sent_packets: 0,
        rtt_s: 0.0,
        controller: None,
        error: None,
    };
    if let Err(e) = respond(&conn, o, &handle, &mut report, since).await {
        report.error = Some(e.to_string());
    }
    let stats = conn.stats();
    report.lost_packets = stats.path.lost_packets;
    report.lost_bytes = stats.path.lost_bytes;
    report.congestion_events = stats.path.congestion_events;
    report.sent_packets = stats.path.sent_packets;
    report.rtt_s = stats.path.rtt.as_secs_f64();
    conn.close(0u32.into(), b"done");
    let mds = report.max_datagram_size as f64;
    if let Some(h) = &handle {
        let trace = h.trace();
        report.cwnd = trace.cwnd.clone();
        report.controller = Some(trace);
        report.startup_exit = h.startup_exit().map(|(time_s, reason, cwnd)| Exit { time_s, reason: reason.to_string(), cwnd, cwnd_pkts: cwnd / mds });
    } else if let Some(s) = sampler {
        report.cwnd = s.await.map_err(err)?;
        // quinn's own controllers leave slow start at the first congestion event: the window's first fall.
        report.startup_exit = report.cwnd.windows(2).find(|w| w[1].cwnd < w[0].cwnd).map(|w| Exit {
            time_s: w[1].t_s,
            reason: "loss".to_string(),
            cwnd: w[0].cwnd as f64,
            cwnd_pkts: w[0].cwnd as f64 / mds,
        });
    }
    endpoint.wait_idle().await;
    Ok(report)
}

/// Reads the request, answers, waits for the client's close.
async fn respond(conn: &quinn::Connection, o: &ServerOptions, handle: &Option<ControllerHandle>, report: &mut ServerReport, since: impl Fn(Instant) -> f64) -> io::Result<()> {
    let (mut send, mut recv) = conn.accept_bi().await.map_err(err)?;
    recv.read_to_end(1 << 16).await.map_err(err)?;
    if let Some(h) = handle {
        h.on_handshake(conn.rtt(), o.size);
    }
    let chunk = vec![0u8; 64 << 10];
    let start = now();
    report.first_byte_s = Some(since(start));
    let deadline = o.duration.map(|d| start + Duration::from_secs_f64(d));
    loop {
        let left = o.size.map_or(chunk.len() as u64, |s| s - report.bytes);
        if left == 0 || deadline.is_some_and(|d| now() >= d) {
            break;
        }
        let n = left.min(chunk.len() as u64) as usize;
        send.write_all(&chunk[..n]).await.map_err(err)?;
        report.bytes += n as u64;
    }
    send.finish().map_err(err)?;
    // The client closes once it has read the end of the stream.
    let reason = conn.closed().await;
    report.completion_s = Some(since(now()));
    match reason {
        quinn::ConnectionError::ApplicationClosed(c) if c.error_code == 0u32.into() => report.completed = true,
        other => return Err(err(format!("the connection ended: {other}"))),
    }
    Ok(())
}

/// Connects to `server`, trusting only the certificate in `cert` (DER), sends a request, reads the
/// response to its end, closes.
pub async fn fetch(server: SocketAddr, cert: &Path, path: Option<&PathSettings>, connect_timeout: f64) -> io::Result<ClientReport> {
    let der = std::fs::read(cert).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", cert.display())))?;
    let mut roots = quinn::rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(der)).map_err(err)?;
    let mut cfg = quinn::ClientConfig::with_root_certificates(Arc::new(roots)).map_err(err)?;
    cfg.transport_config(Arc::new(transport(path, None)));
    let bind: SocketAddr = if server.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    let mut endpoint = quinn::Endpoint::client(bind)?;
    endpoint.set_default_client_config(cfg);
    let origin = now();
    let since = |t: Instant| t.saturating_duration_since(origin).as_secs_f64();
    let connecting = endpoint.connect(server, SERVER_NAME).map_err(err)?;
    let conn = tokio::time::timeout(Duration::from_secs_f64(connect_timeout), connecting)
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, format!("no handshake with {server} within {connect_timeout} s")))?
        .map_err(err)?;
    let mut report = ClientReport { bytes: 0, handshake_s: since(now()), first_byte_s: None, completion_s: None, completed: false, origin_mono_s: mono_s(origin) };
    let (mut send, mut recv) = conn.open_bi().await.map_err(err)?;
    send.write_all(b"GET /startlab\r\n").await.map_err(err)?;
    send.finish().map_err(err)?;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match recv.read(&mut buf).await.map_err(err)? {
            Some(n) => {
                if report.first_byte_s.is_none() && n > 0 {
                    report.first_byte_s = Some(since(now()));
                }
                report.bytes += n as u64;
            }
            None => {
                report.completed = true;
                break;
            }
        }
    }
    report.completion_s = Some(since(now()));
    conn.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
    Ok(report)
}
