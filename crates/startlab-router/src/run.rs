//! The forwarding threads.

use crate::plan::{PathSummary, Plan};
use crate::LATE_LIMIT;
use nix::time::{clock_gettime, ClockId};
use pnet_datalink::{Channel as Datalink, Config, DataLinkReceiver, DataLinkSender, NetworkInterface};
use serde::Serialize;
use startlab_sim::aqm::{DropCause, Ecn};
use startlab_sim::net::{Channel, Offer};
use startlab_sim::pcap::{CaptureFile, DataLink};
use startlab_units::{Dur, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::io::Read as _;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// One side of the router: its interface and the MAC address of the host behind it.
#[derive(Clone, Debug)]
pub struct Link {
    /// Interface name in the router's namespace (`r0`, `r1`).
    pub iface: String,
    /// MAC address of the host at the other end of the veth pair.
    pub peer_mac: [u8; 6],
}

/// Where the router runs and when it stops.
#[derive(Clone, Debug)]
pub struct RouterSetup {
    /// The data sender's side: frames arriving here take the forward (data) channel.
    pub sender_side: Link,
    /// The data receiver's side: frames arriving here take the reverse (ACK) channel.
    pub receiver_side: Link,
    /// The router's own addresses: frames for them are left to the kernel (ARP, ping).
    pub local_ips: Vec<Ipv4Addr>,
    /// Stop when standard input reaches end of file (the parent closed its pipe or died).
    pub stop_on_stdin_eof: bool,
    /// Stop after this long (None: only on SIGTERM/SIGINT or stdin's end).
    pub max_duration: Option<Dur>,
    /// Called once the sockets are open and the threads run (the caller prints "ready").
    pub ready: Option<fn()>,
    /// Write every forwarded frame of each direction to a capture file (`None`: no capture).
    pub capture: Option<CaptureSetup>,
}

/// Where and how the router captures: `bottleneck-forward` (the data direction) and
/// `bottleneck-reverse` in `dir`, Ethernet frames as they leave, timestamped at their release
/// (nanoseconds since the router started), the same names as the simulator's `[trace.pcap]`.
#[derive(Clone, Debug)]
pub struct CaptureSetup {
    /// The directory (created if missing).
    pub dir: std::path::PathBuf,
    /// pcapng or pcap.
    pub format: startlab_scenario::PcapFormat,
    /// Bytes kept of each frame.
    pub snaplen: u32,
}

/// A failure to start the router.
#[derive(Debug)]
pub struct RouterError(pub String);

impl fmt::Display for RouterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RouterError {}

/// A dropped packet.
#[derive(Clone, Debug, Serialize)]
pub struct DropRecord {
    /// When it arrived at the router, seconds since the router started.
    pub t_s: f64,
    /// Same instant on `CLOCK_MONOTONIC` (seconds), to line up with the endpoints' records.
    pub mono_s: f64,
    /// IP packet bytes.
    pub size: u32,
    /// `queue` (buffer full), `red` (RED's early drop), `aqm` (CoDel's, FQ-CoDel's … control
    /// law), `impairment` (a loss process), `ttl`.
    pub reason: &'static str,
    /// IPv4 source.
    pub src: String,
    /// IPv4 destination.
    pub dst: String,
    /// IP protocol number (6 TCP, 17 UDP).
    pub proto: u8,
    /// Transport source port (0 if not TCP/UDP).
    pub sport: u16,
    /// Transport destination port.
    pub dport: u16,
}

/// Counters and logs of one direction.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DirectionReport {
    /// IPv4 frames offered to the bottleneck.
    pub arrivals: u64,
    /// Frames sent on.
    pub forwarded: u64,
    /// Drops (all reasons).
    pub drops: u64,
    /// Of `drops`, buffer overflow.
    pub queue_drops: u64,
    /// Of `drops`, RED's early drops.
    pub red_drops: u64,
    /// Of `drops`, a dequeue-time discipline's control law (CoDel, FQ-CoDel, …).
    pub aqm_drops: u64,
    /// Of `drops`, an impairment's loss process.
    pub impairment_drops: u64,
    /// Of `drops`, TTL expired.
    pub ttl_drops: u64,
    /// Packets the queue (RED, CoDel, …) marked CE.
    pub marks: u64,
    /// Most packets waiting.
    pub max_queue_pkts: u64,
    /// Most bytes waiting.
    pub max_queue_bytes: u64,
    /// Mean release lateness (send time minus scheduled release), seconds.
    pub lateness_mean_s: f64,
    /// Worst release lateness, seconds.
    pub lateness_worst_s: f64,
    /// Releases more than [`LATE_LIMIT`] late.
    pub late_releases: u64,
    /// Frames not forwarded because the router stopped while they were queued or propagating.
    pub pending_at_stop: u64,
    /// Frames left to the kernel: not IPv4, for the router itself, or the router's own sends.
    pub ignored: u64,
    /// Frames too short or malformed to forward.
    pub malformed: u64,
    /// Socket errors on send.
    pub send_errors: u64,
    /// Every drop, in time order.
    pub drop_log: Vec<DropRecord>,
    /// The capture file of this direction's forwarded frames, if the router captured.
    pub capture_file: Option<String>,
    /// Frames in it.
    pub captured: u64,
    /// Why the capture stopped early, if it did.
    pub capture_error: Option<String>,
}

/// What a router run did.
#[derive(Clone, Debug, Serialize)]
pub struct RouterReport {
    /// The emulated path.
    pub path: PathSummary,
    /// `CLOCK_MONOTONIC` at the router's time 0, seconds.
    pub started_mono_s: f64,
    /// How long it ran, seconds.
    pub duration_s: f64,
    /// Why it stopped.
    pub stopped_by: String,
    /// Data direction (sender side to receiver side).
    pub forward: DirectionReport,
    /// ACK direction.
    pub reverse: DirectionReport,
    /// Worst lateness of both directions exceeded [`LATE_LIMIT`].
    pub late: bool,
}

fn mono_ns() -> u64 {
    // CLOCK_MONOTONIC cannot fail on Linux for a valid clock id; 0 would only shift the origin.
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, |t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
}

struct State {
    channel: Channel,
    /// (release, tie-break, slot) of every frame accepted and not yet sent.
    heap: BinaryHeap<Reverse<(Time, u64, u32)>>,
    frames: Vec<Vec<u8>>,
    marked: Vec<bool>,
    free: Vec<u32>,
    seq: u64,
    report: DirectionReport,
    late_sum: f64,
    /// A dequeue-time discipline's next dequeue (its link goes free then).
    dequeue_at: Option<Time>,
}

struct Direction {
    state: Mutex<State>,
    wake: Condvar,
    extra: Dur,
    t0: u64,
}

impl Direction {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A thread that panicked while holding the lock leaves usable counters behind.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the frame parser found in an IPv4 frame.
struct Ipv4Info {
    total_len: usize,
    ect: bool,
    /// The IP header's ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    ecn: u8,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    proto: u8,
    sport: u16,
    dport: u16,
}

const ETH: usize = 14;

fn parse(frame: &[u8]) -> Option<Ipv4Info> {
    if frame.len() < ETH + 20 || frame[12..14] != [0x08, 0x00] {
        return None;
    }
    let ip = &frame[ETH..];
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let total_len = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if ip[0] >> 4 != 4 || ihl < 20 || total_len < ihl || total_len > ip.len() {
        return None;
    }
    let proto = ip[9];
    let (sport, dport) = if (proto == 6 || proto == 17) && total_len >= ihl + 4 {
        (u16::from_be_bytes([ip[ihl], ip[ihl + 1]]), u16::from_be_bytes([ip[ihl + 2], ip[ihl + 3]]))
    } else {
        (0, 0)
    };
    Some(Ipv4Info {
        total_len,
        ect: matches!(ip[1] & 0x03, 1 | 2),
        ecn: ip[1] & 0x03,
        src: Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]),
        dst: Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]),
        proto,
        sport,
        dport,
    })
}

/// RFC 1624 incremental update of the IPv4 header checksum for a changed 16-bit word.
fn checksum_update(ip: &mut [u8], old: u16, new: u16) {
    let sum = u16::from_be_bytes([ip[10], ip[11]]);
    let mut acc = (!sum) as u32 + (!old) as u32 + new as u32;
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    ip[10..12].copy_from_slice(&(!(acc as u16)).to_be_bytes());
}

/// Decrements the TTL (false if it expired) and sets CE if `mark`, keeping the checksum right.
fn rewrite_ip(ip: &mut [u8], mark: bool) -> bool {
    if ip[8] <= 1 {
        return false;
    }
    let old = u16::from_be_bytes([ip[8], ip[9]]);
    ip[8] -= 1;
    checksum_update(ip, old, u16::from_be_bytes([ip[8], ip[9]]));
    if mark {
        let old = u16::from_be_bytes([ip[0], ip[1]]);
        ip[1] |= 0x03;
        checksum_update(ip, old, u16::from_be_bytes([ip[0], ip[1]]));
    }
    true
}

/// An interface with its two socket halves.
type Opened = (NetworkInterface, Box<dyn DataLinkSender>, Box<dyn DataLinkReceiver>);

fn open(iface: &str) -> Result<Opened, RouterError> {
    let all = pnet_datalink::interfaces();
    let Some(ni) = all.iter().find(|i| i.name == iface).cloned() else {
        let names: Vec<_> = all.iter().map(|i| i.name.as_str()).collect();
        return Err(RouterError(format!("no interface {iface:?} in this network namespace (there are: {})", names.join(", "))));
    };
    let config = Config {
        read_timeout: Some(Duration::from_millis(50)),
        write_buffer_size: 1 << 16,
        read_buffer_size: 1 << 16,
        ..Config::default()
    };
    match pnet_datalink::channel(&ni, config) {
        Ok(Datalink::Ethernet(tx, rx)) => Ok((ni, tx, rx)),
        Ok(_) => Err(RouterError(format!("{iface}: not an Ethernet channel"))),
        Err(e) => Err(RouterError(format!("{iface}: cannot open an AF_PACKET socket ({e}); the router needs root (CAP_NET_RAW)"))),
    }
}

fn mac_of(ni: &NetworkInterface) -> Result<[u8; 6], RouterError> {
    ni.mac.map(|m| m.octets()).ok_or_else(|| RouterError(format!("{} has no MAC address", ni.name)))
}

/// Reads frames arriving on `rx`, offers them to the direction's channel and files the accepted.
fn reader(dir: &Direction, mut rx: Box<dyn DataLinkReceiver>, own_mac: [u8; 6], local: &[Ipv4Addr], stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let frame = match rx.next() {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => continue,
            Err(_) => continue,
        };
        let mono = mono_ns();
        if frame.len() < ETH || frame[6..12] == own_mac || frame[0..6] != own_mac {
            dir.lock().report.ignored += 1;
            continue;
        }
        let Some(info) = parse(frame) else {
            let mut s = dir.lock();
            if frame.len() > ETH && frame[12..14] == [0x08, 0x00] {
                s.report.malformed += 1;
            } else {
                s.report.ignored += 1;
            }
            continue;
        };
        if local.contains(&info.dst) {
            dir.lock().report.ignored += 1;
            continue;
        }
        let now = Time(mono.saturating_sub(dir.t0));
        let mut guard = dir.lock();
        let s = &mut *guard;
        s.report.arrivals += 1;
        s.channel.drain(now, |_| {});
        let slot = match s.free.pop() {
            Some(k) => k,
            None => {
                s.frames.push(Vec::with_capacity(1600));
                s.marked.push(false);
                (s.frames.len() - 1) as u32
            }
        };
        s.seq += 1;
        let seq = s.seq;
        if s.channel.is_aqm() {
            let buf = &mut s.frames[slot as usize];
            buf.clear();
            buf.extend_from_slice(&frame[..ETH + info.total_len]);
            let ecn = match info.ecn {
                0 => Ecn::NotEct,
                1 => Ecn::Ect1,
                2 => Ecn::Ect0,
                _ => Ecn::Ce,
            };
            match s.channel.aqm_enqueue(now, info.total_len as u32, slot, flow_key(&info), ecn, |_| {}) {
                Offer::Queued { dequeue_at } => {
                    s.report.max_queue_pkts = s.report.max_queue_pkts.max(s.channel.waiting_pkts());
                    s.report.max_queue_bytes = s.report.max_queue_bytes.max(s.channel.waiting_bytes());
                    aqm_drops(s, now, dir.t0);
                    if dequeue_at.is_some() {
                        s.dequeue_at = dequeue_at;
                    }
                    drop(guard);
                    dir.wake.notify_one();
                }
                _ => {
                    s.free.push(slot);
                    log_drop(&mut s.report, now, mono, &info, "impairment");
                }
            }
            continue;
        }
        let early_before = s.channel.stats.early_drops;
        let drop_reason = match s.channel.offer(now, info.total_len as u32, seq, slot, info.ect, |_| {}) {
            Offer::Accepted { arrival, marked, .. } => {
                let buf = &mut s.frames[slot as usize];
                buf.clear();
                buf.extend_from_slice(&frame[..ETH + info.total_len]);
                s.marked[slot as usize] = marked;
                s.heap.push(Reverse((arrival + dir.extra, seq, slot)));
                s.report.max_queue_pkts = s.report.max_queue_pkts.max(s.channel.waiting_pkts());
                s.report.max_queue_bytes = s.report.max_queue_bytes.max(s.channel.waiting_bytes());
                None
            }
            Offer::Dropped if s.channel.stats.early_drops > early_before => Some("red"),
            Offer::Dropped => Some("queue"),
            Offer::Lost => Some("impairment"),
            Offer::Queued { .. } => unreachable!("a FIFO channel answers at once"),
        };
        match drop_reason {
            None => {
                drop(guard);
                dir.wake.notify_one();
            }
            Some(reason) => {
                s.free.push(slot);
                log_drop(&mut s.report, now, mono, &info, reason);
            }
        }
    }
}

/// The flow key a discipline hashes: the IPv4 5-tuple.
fn flow_key(info: &Ipv4Info) -> u64 {
    let addrs = (u32::from(info.src) as u64) << 32 | u32::from(info.dst) as u64;
    let ports = (info.proto as u64) << 32 | (info.sport as u64) << 16 | info.dport as u64;
    addrs ^ ports.rotate_left(23)
}

/// Logs and frees what a dequeue-time discipline dropped.
fn aqm_drops(s: &mut State, now: Time, t0: u64) {
    for (slot, cause) in s.channel.take_aqm_drops() {
        if let Some(info) = parse(&s.frames[slot as usize]) {
            let reason = match cause {
                DropCause::Aqm => "aqm",
                DropCause::Overflow => "queue",
                DropCause::Impairment => "impairment",
            };
            log_drop(&mut s.report, now, now.as_nanos() + t0, &info, reason);
        }
        s.free.push(slot);
    }
}

fn log_drop(r: &mut DirectionReport, now: Time, mono: u64, info: &Ipv4Info, reason: &'static str) {
    r.drops += 1;
    match reason {
        "red" => r.red_drops += 1,
        "aqm" => r.aqm_drops += 1,
        "impairment" => r.impairment_drops += 1,
        "ttl" => r.ttl_drops += 1,
        _ => r.queue_drops += 1,
    }
    r.drop_log.push(DropRecord {
        t_s: now.as_secs_f64(),
        mono_s: mono as f64 / 1e9,
        size: info.total_len as u32,
        reason,
        src: info.src.to_string(),
        dst: info.dst.to_string(),
        proto: info.proto,
        sport: info.sport,
        dport: info.dport,
    });
}

/// Sends each filed frame at its release time out of `tx`, addressed to `next_hop`.
fn writer(dir: &Direction, mut tx: Box<dyn DataLinkSender>, egress_mac: [u8; 6], next_hop: [u8; 6], stop: &AtomicBool, mut capture: Option<CaptureFile>) {
    // Wake-ups as close to the release as the kernel allows (the default slack is 50 µs).
    let _ = nix::sys::prctl::set_timerslack(1_000);
    let mut out: Vec<u8> = Vec::with_capacity(1600);
    let mut guard = dir.lock();
    loop {
        if stop.load(Ordering::Relaxed) {
            guard.report.pending_at_stop = guard.heap.len() as u64;
            if let Some(mut c) = capture.take() {
                match c.finish() {
                    Ok((path, n)) => (guard.report.capture_file, guard.report.captured) = (Some(path.display().to_string()), n),
                    Err(e) => guard.report.capture_error = Some(e),
                }
            }
            return;
        }
        // A discipline's periodic updates (PIE, DualPI2) that came due while the queue was idle.
        guard.channel.aqm_timer(Time(mono_ns().saturating_sub(dir.t0)));
        if let Some(due) = guard.dequeue_at {
            let now = Time(mono_ns().saturating_sub(dir.t0));
            if now >= due {
                let s = &mut *guard;
                s.seq += 1;
                let seq = s.seq;
                // The link went free at `due`: the discipline's choice starts transmission then.
                let (dep, next) = s.channel.aqm_dequeue(due, seq, |_| {});
                aqm_drops(s, due, dir.t0);
                if let Some(d) = dep {
                    if d.ce {
                        s.report.marks += 1;
                    }
                    s.marked[d.pkt as usize] = d.ce;
                    s.heap.push(Reverse((d.arrival + dir.extra, seq, d.pkt)));
                }
                s.dequeue_at = next;
                continue;
            }
        }
        let wake_for_dequeue = guard.dequeue_at;
        let Some(&Reverse((release, _, slot))) = guard.heap.peek() else {
            let wait = wake_for_dequeue.map_or(Duration::from_millis(20), |due| Duration::from_nanos(due.as_nanos().saturating_sub(mono_ns().saturating_sub(dir.t0))).min(Duration::from_millis(20)));
            guard = dir.wake.wait_timeout(guard, wait).unwrap_or_else(|e| e.into_inner()).0;
            continue;
        };
        let now = Time(mono_ns().saturating_sub(dir.t0));
        if let Some(due) = wake_for_dequeue.filter(|&due| due < release && now < due) {
            let wait = Duration::from_nanos((due - now).as_nanos());
            guard = dir.wake.wait_timeout(guard, wait).unwrap_or_else(|e| e.into_inner()).0;
            continue;
        }
        if now < release {
            let wait = Duration::from_nanos((release - now).as_nanos());
            guard = dir.wake.wait_timeout(guard, wait).unwrap_or_else(|e| e.into_inner()).0;
            continue;
        }
        guard.heap.pop();
        let _ = guard.channel.pop_arrival();
        std::mem::swap(&mut out, &mut guard.frames[slot as usize]);
        let mark = guard.marked[slot as usize];
        drop(guard);
        out[0..6].copy_from_slice(&next_hop);
        out[6..12].copy_from_slice(&egress_mac);
        let alive = rewrite_ip(&mut out[ETH..], mark);
        let sent = if alive { tx.send_to(&out, None) } else { None };
        let capture_failed = match (alive, capture.as_mut()) {
            (true, Some(c)) => c.write(release.as_nanos(), out.len() as u32, &out).err(),
            _ => None,
        };
        let done = Time(mono_ns().saturating_sub(dir.t0));
        guard = dir.lock();
        let s = &mut *guard;
        std::mem::swap(&mut out, &mut s.frames[slot as usize]);
        s.free.push(slot);
        if let Some(e) = capture_failed {
            // The capture stops; forwarding goes on.
            s.report.capture_error = Some(e);
            capture = None;
        }
        if !alive {
            if let Some(info) = parse(&s.frames[slot as usize]) {
                log_drop(&mut s.report, release, release.as_nanos() + dir.t0, &info, "ttl");
            }
            continue;
        }
        if !matches!(sent, Some(Ok(()))) {
            s.report.send_errors += 1;
        }
        s.report.forwarded += 1;
        let late = done.saturating_since(release);
        s.late_sum += late.as_secs_f64();
        s.report.lateness_worst_s = s.report.lateness_worst_s.max(late.as_secs_f64());
        if late > LATE_LIMIT {
            s.report.late_releases += 1;
        }
    }
}

/// Runs the router until SIGTERM/SIGINT, standard input's end (if asked) or the time limit, and
/// reports what it did. Fails before forwarding anything if an interface cannot be opened.
pub fn run(plan: Plan, setup: &RouterSetup) -> Result<RouterReport, RouterError> {
    let (fwd_ni, fwd_tx, fwd_rx_unused) = open(&setup.receiver_side.iface)?;
    let (rev_ni, rev_tx, rev_rx_unused) = open(&setup.sender_side.iface)?;
    // Reads on one interface, writes on the other: the forward direction reads the sender side.
    let (sender_mac, receiver_mac) = (mac_of(&rev_ni)?, mac_of(&fwd_ni)?);
    let (fwd_rx, rev_rx) = (rev_rx_unused, fwd_rx_unused);
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&signalled)).map_err(|e| RouterError(format!("cannot install the signal handler: {e}")))?;
    }
    let t0 = mono_ns();
    let direction = |channel: Channel, extra: Dur| Direction {
        state: Mutex::new(State {
            channel,
            heap: BinaryHeap::new(),
            frames: Vec::new(),
            marked: Vec::new(),
            free: Vec::new(),
            seq: 0,
            report: DirectionReport::default(),
            late_sum: 0.0,
            dequeue_at: None,
        }),
        wake: Condvar::new(),
        extra,
        t0,
    };
    let mut captures = [None, None];
    if let Some(c) = &setup.capture {
        std::fs::create_dir_all(&c.dir).map_err(|e| RouterError(format!("cannot create the capture directory {}: {e}", c.dir.display())))?;
        let ext = match c.format {
            startlab_scenario::PcapFormat::Pcapng => "pcapng",
            startlab_scenario::PcapFormat::Pcap => "pcap",
        };
        for (slot, name) in captures.iter_mut().zip(["bottleneck-forward", "bottleneck-reverse"]) {
            let path = c.dir.join(format!("{name}.{ext}"));
            *slot = Some(CaptureFile::create(&path, c.format, DataLink::ETHERNET, c.snaplen, name).map_err(RouterError)?);
        }
    }
    let [fwd_capture, rev_capture] = captures;
    let summary = plan.summary.clone();
    let forward = direction(plan.forward, plan.extra_forward);
    let reverse = direction(plan.reverse, plan.extra_reverse);
    let eof = Arc::new(AtomicBool::new(false));
    if setup.stop_on_stdin_eof {
        let eof = Arc::clone(&eof);
        // Detached: it blocks in read(2) until the parent closes the pipe or exits.
        thread::spawn(move || {
            let mut sink = [0u8; 64];
            let mut stdin = std::io::stdin();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            eof.store(true, Ordering::Relaxed);
        });
    }
    let stopped_by = thread::scope(|scope| {
        let local = &setup.local_ips;
        let stop_ref = &*stop;
        scope.spawn(|| reader(&forward, fwd_rx, sender_mac, local, stop_ref));
        scope.spawn(|| reader(&reverse, rev_rx, receiver_mac, local, stop_ref));
        scope.spawn(|| writer(&forward, fwd_tx, receiver_mac, setup.receiver_side.peer_mac, stop_ref, fwd_capture));
        scope.spawn(|| writer(&reverse, rev_tx, sender_mac, setup.sender_side.peer_mac, stop_ref, rev_capture));
        if let Some(ready) = setup.ready {
            ready();
        }
        let why = loop {
            thread::sleep(Duration::from_millis(10));
            if signalled.load(Ordering::Relaxed) {
                break "signal";
            }
            if eof.load(Ordering::Relaxed) {
                break "stdin closed";
            }
            if setup.max_duration.is_some_and(|d| mono_ns() - t0 >= d.as_nanos()) {
                break "time limit";
            }
        };
        stop.store(true, Ordering::Relaxed);
        forward.wake.notify_all();
        reverse.wake.notify_all();
        why
    });
    let finish = |d: Direction| {
        let mut s = d.state.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut r = std::mem::take(&mut s.report);
        r.marks = s.channel.stats.marks;
        r.lateness_mean_s = if r.forwarded > 0 { s.late_sum / r.forwarded as f64 } else { 0.0 };
        r
    };
    let (forward, reverse) = (finish(forward), finish(reverse));
    let late = forward.lateness_worst_s.max(reverse.lateness_worst_s) > LATE_LIMIT.as_secs_f64();
    Ok(RouterReport {
        path: summary,
        started_mono_s: t0 as f64 / 1e9,
        duration_s: (mono_ns() - t0) as f64 / 1e9,
        stopped_by: stopped_by.to_string(),
        forward,
        reverse,
        late,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ttl: u8, tos: u8) -> Vec<u8> {
        let mut f = vec![0u8; ETH + 28];
        f[12] = 0x08;
        let ip = &mut f[ETH..];
        ip[0] = 0x45;
        ip[1] = tos;
        ip[2..4].copy_from_slice(&28u16.to_be_bytes());
        ip[8] = ttl;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&[10, 203, 2, 1]);
        ip[16..20].copy_from_slice(&[10, 203, 1, 1]);
        ip[20..22].copy_from_slice(&5000u16.to_be_bytes());
        ip[22..24].copy_from_slice(&6000u16.to_be_bytes());
        let sum = full_checksum(&ip[..20]);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        f
    }

    fn full_checksum(h: &[u8]) -> u16 {
        let mut acc: u32 = 0;
        for (k, w) in h.chunks(2).enumerate() {
            if k != 5 {
                acc += u16::from_be_bytes([w[0], w[1]]) as u32;
            }
        }
        while acc >> 16 != 0 {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        !(acc as u16)
    }

    #[test]
    fn parses_addresses_ports_and_ecn() {
        let f = frame(64, 0x02);
        let info = parse(&f).unwrap();
        assert_eq!((info.total_len, info.proto, info.sport, info.dport), (28, 17, 5000, 6000));
        assert_eq!(info.src, Ipv4Addr::new(10, 203, 2, 1));
        assert!(info.ect);
        assert!(parse(&f[..ETH + 10]).is_none(), "a truncated frame is refused");
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(parse(&arp).is_none(), "not IPv4");
    }

    #[test]
    fn rewrite_keeps_the_checksum_right() {
        let mut f = frame(64, 0x02);
        assert!(rewrite_ip(&mut f[ETH..], true));
        let ip = &f[ETH..];
        assert_eq!(ip[8], 63);
        assert_eq!(ip[1] & 3, 3, "CE set");
        assert_eq!(u16::from_be_bytes([ip[10], ip[11]]), full_checksum(&ip[..20]));
        let mut dying = frame(1, 0);
        assert!(!rewrite_ip(&mut dying[ETH..], false), "TTL 1 expires here");
    }
}
