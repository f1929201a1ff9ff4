"""Conformance of a BPF startup algorithm with its sans-IO Rust version (issue 19,
docs/KERNEL-BPF.md): one scripted ACK sequence, fed to the kernel's TCP running the BPF congestion
control and to the Rust controller, gives the same cwnd trace.

**The kernel side.** A fresh network namespace holds a TUN device; the kernel's TCP connects
through it to an address behind the device, and this module *is* the peer: it reads every segment
the kernel sends from the TUN, answers the handshake, and writes one ACK per data segment at the
time a scripted path says. The path is a fixed one-way delay each way and a bottleneck of rate
``rate_bps`` with an unlimited buffer (no loss): segment *i* leaves the bottleneck at
``D_i = max(read_i + delay, D_(i-1) + size_i·8/rate)`` and its ACK reaches the sender at
``D_i + delay``, so the RTT grows once the sender outruns the rate, as a queue makes it (a segment
the kernel sent while processing an ACK counts as sent at that ACK's time, the time the kernel
stamps it with). After each
ACK the kernel's window is read with ``TCP_INFO`` (once the kernel has processed that ACK:
``tcpi_bytes_acked`` says so) and the segments the ACK released are read back at once, so the
SND.NXT the ACK met is known.

**The kernel's clock.** A ``tcp_probe`` trace (a private tracefs instance on CLOCK_MONOTONIC)
gives the kernel's own time of each ACK, which may be some tens of µs after the peer wrote it (the
socket's lock, the backlog). Both sides get those times, and RTT samples from them (the ACK's
time less that of the ACK whose processing sent the acknowledged segment); where tracefs cannot
be used, the peer's times stand in (``Trace.clock``).

**The Rust side.** The same ACKs — their times, the bytes each acknowledges, SND.NXT (the data
sent before each, which ends Paced Start's FILL), the RTT sample and the bytes in flight — are
fed to the controller the simulator builds for a scenario with the ported algorithm, the kernel's
segment size, initial window and initial ssthresh (``startlab._core.controller_trace``).

**The comparison.** After every ACK: the kernel's cwnd (segments) against the Rust window in whole
segments. Window algorithms (slow start, Limited Slow-Start, Smooth-start) with Reno avoidance
must agree exactly; where timing enters — HyStart, HyStart++, Paced Start (which also holds data
by its window inside a train), SUSS (whose window in a paced period grows as the data leaves in the
Rust, at once in the kernel) and CUBIC-like avoidance (its clock in ms, its W_est fixed-point) —
the windows must agree within one segment at the end of every round (the issue's "within one
segment per round"), and a window algorithm's startup itself still exactly.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import kernelbpf, tracefs
from .system import SO_COOKIE, run, write

#: Algorithms whose window does not depend on time: their traces must be equal.
WINDOW_ALGORITHMS = frozenset({"slow-start", "lss", "smooth-start"})

#: The comparisons the tests and bench/bpf_conformance.py make on the default path (20 Mbit/s,
#: 40 ms, an unlimited buffer): (BPF algorithm, initial ssthresh in segments or None, ACKs).
#: Window algorithms: past LSS's max_ssthresh of 100 into its limited phase, slow start to 40 then
#: avoidance, Smooth-start's last two doublings below 200. Where timing enters: the queue builds
#: once the window passes the BDP (69 segments), so HyStart's tests fire before any loss, and Paced
#: Start's trains find the rate and leave after the FILL train. SUSS grows fourfold in round 2 (its
#: ACK train of 10 segments takes 6 ms, under a quarter of the RTT) and leaves on its cap.
WINDOW_CASES: list[tuple[str, int | None, int]] = [
    ("bpf-slow-start", None, 600),
    ("bpf-lss", None, 2500),
    ("bpf-lss+cubic", None, 2500),
    ("bpf-slow-start", 40, 2500),
    ("bpf-slow-start+cubic", 40, 2500),
    ("bpf-smooth-start", 200, 2500),
    ("bpf-smooth-start+cubic", 200, 2500),
]
TIMING_CASES: list[tuple[str, int | None, int]] = [
    ("bpf-hystart", None, 1500),
    ("bpf-hystart+cubic", None, 1500),
    ("bpf-hystart++", None, 3000),
    ("bpf-hystart+++cubic", None, 3000),
    ("bpf-paced-start", None, 400),
    ("bpf-paced-start+cubic", None, 400),
    ("bpf-suss", None, 800),
    ("bpf-suss+cubic", None, 800),
]
#: HyStart++ as QUIC stacks deploy it: the kernel compiled with a PRESET (hystartpp.bpf.c), the
#: Rust version with the same preset (1 quiche, 2 msquic, 3 neqo, 4 ngtcp2), and neqo's baseline
#: option: (BPF algorithm, compile-time parameters, ACKs). HyStart++ enters CSS near 160 segments
#: here, or a round later when the kernel's ACK times put a round's minimum under the threshold,
#: and its five CSS rounds take 1300 ACKs (2700 a round later): 3000 ACKs see the exit either way.
PRESET_CASES: list[tuple[str, dict[str, int], int]] = [
    ("bpf-hystart++", {"PRESET": 1}, 3000),
    ("bpf-hystart++", {"PRESET": 2}, 3000),
    ("bpf-hystart++", {"PRESET": 3}, 3000),
    ("bpf-hystart++", {"PRESET": 4}, 3000),
    ("bpf-hystart+++cubic", {"PRESET": 4}, 3000),
    ("bpf-hystart+++cubic", {"PRESET": 3, "CSS_BASELINE": 1}, 3000),
]


def verdict(trace: "Trace") -> list[str]:
    """The conformance rule for ``trace``'s algorithm: a window algorithm with Reno avoidance
    agrees after every ACK; with CUBIC-like avoidance exactly in startup, then within one segment
    at every round's end; where timing enters, within one segment at every round's end. Returns
    the departures (empty: it conforms)."""
    v = kernelbpf.variant(trace.algorithm)
    if v.algorithm.sim in WINDOW_ALGORITHMS and v.avoidance == "reno":
        return trace.mismatches(exact=True)
    startup = trace.mismatches(exact=True, startup_only=True) if v.algorithm.sim in WINDOW_ALGORITHMS else []
    return startup + trace.mismatches(exact=False)


#: Compile-time parameters that make a BPF algorithm match the scripted peer, which acknowledges
#: every segment (the Rust side's ack = "every-packet").
PEER_PARAMS: dict[str, dict[str, int]] = {"paced-start": {"ACK_COUNTING": 0}}


_TUN = "sltun0"
_LOCAL, _PEER, _PORT = "10.77.0.1", "10.77.0.2", 5001
_IFF_TUN, _IFF_NO_PI, _TUNSETIFF = 0x0001, 0x1000, 0x400454CA
_TCP_CONGESTION = 13
_MSS = 1460  # no timestamps: 1460 bytes of payload in a 1500-byte packet
#: Bytes the peer keeps queued in the kernel's socket beyond what is acknowledged: more than any
#: window of the scripted runs plus 256 ACKs' worth, so the sender is never short of data.
_AHEAD = 4 << 20
_WSCALE = 7


@dataclass
class Script:
    """The scripted path and how long to run."""

    rate_bps: float = 20e6
    rtt_s: float = 0.040
    acks: int = 1200
    initial_window: int = 10
    initial_ssthresh: int | None = None  #: segments (compiled into the BPF object); None: infinite


@dataclass
class Trace:
    """The kernel's ACKs and windows, and the Rust controller's windows on the same ACKs."""

    algorithm: str  #: the BPF algorithm, e.g. ``bpf-lss``
    mss: int
    #: Per ACK: (t ns on CLOCK_MONOTONIC, newly acked bytes, ACK point, SND.NXT, RTT sample ns or
    #: -1, bytes in flight).
    acks: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)
    kernel_cwnd: list[int] = field(default_factory=list)  #: segments, after each ACK
    kernel_ssthresh: list[int] = field(default_factory=list)
    rust_cwnd: list[float] = field(default_factory=list)  #: segments (bytes / mss), after each ACK
    rust_in_startup: list[bool] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)  #: indices of the ACKs that ended a round
    clock: str = "peer"  #: whose ACK times both sides got: "kernel" (tcp_probe) or "peer"

    def mismatches(self, exact: bool, startup_only: bool = False) -> list[str]:
        """Where the kernel's window departs from the Rust one: after every ACK (exact; with
        ``startup_only`` up to and including the ACK that ended startup) or at each round's end
        by more than one segment."""
        out = []
        if exact:
            for i, (k, r) in enumerate(zip(self.kernel_cwnd, self.rust_cwnd)):
                if k != int(r + 1e-9):
                    out.append(f"ACK {i} (ACK point {self.acks[i][2]}): kernel cwnd {k}, Rust {r:.3f} segments")
                if startup_only and not self.rust_in_startup[i]:
                    break
        else:
            for i in self.rounds:
                k, r = self.kernel_cwnd[i], self.rust_cwnd[i]
                if abs(k - int(r + 1e-9)) > 1:  # both in whole segments, as the kernel keeps them
                    out.append(f"end of round at ACK {i}: kernel cwnd {k}, Rust {r:.3f} segments")
        return out


# --- packets -----------------------------------------------------------------------------------


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _segment(sport: int, seq: int, ack: int, flags: int, window: int, options: bytes = b"") -> bytes:
    """An IPv4 TCP segment from the peer to the kernel's socket on port ``sport`` (no payload)."""
    src, dst = socket.inet_aton(_PEER), socket.inet_aton(_LOCAL)
    offset = (20 + len(options)) // 4
    header = struct.pack("!HHIIBBHHH", _PORT, sport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, offset << 4, flags, window, 0, 0) + options
    pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(header))
    header = header[:16] + struct.pack("!H", _checksum(pseudo + header)) + header[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(header), 0, 0x4000, 64, socket.IPPROTO_TCP, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    return ip + header


def _parse(packet: bytes) -> tuple[int, int, int, int] | None:
    """(seq, flags, payload length, source port) of a TCP segment from the kernel, or None."""
    if len(packet) < 40 or packet[0] >> 4 != 4 or packet[9] != socket.IPPROTO_TCP:
        return None
    ihl = (packet[0] & 0x0F) * 4
    total = struct.unpack("!H", packet[2:4])[0]
    tcp = packet[ihl:total]
    sport, _dport, seq, _ack, off, flags = struct.unpack("!HHIIBB", tcp[:14])
    return seq, flags, len(tcp) - (off >> 4) * 4, sport


# --- the kernel side (runs inside the namespace) ----------------------------------------------


def _ip(*args: str) -> None:
    run("ip", *args)


def _tcp_info(sock: socket.socket) -> tuple[int, int, int, int, int]:
    """(snd_mss, ssthresh, cwnd, bytes_acked, smoothed RTT µs) from TCP_INFO."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    mss, = struct.unpack_from("I", info, 16)
    srtt, = struct.unpack_from("I", info, 68)
    ssthresh, cwnd = struct.unpack_from("II", info, 76)
    acked, = struct.unpack_from("Q", info, 120)
    return mss, ssthresh, cwnd, acked, srtt


def _peer(config: dict[str, Any]) -> dict[str, Any]:
    """Inside a fresh namespace: the TUN, the kernel's connection and the scripted ACKs."""
    script = Script(**config["script"])
    _ip("link", "set", "lo", "up")
    tun = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(tun, _TUNSETIFF, struct.pack("16sH", _TUN.encode(), _IFF_TUN | _IFF_NO_PI))
    _ip("addr", "add", f"{_LOCAL}/24", "dev", _TUN)
    _ip("link", "set", _TUN, "up", "mtu", "1500")
    # The initial ssthresh is compiled into the BPF object (INITIAL_SSTHRESH, kernel_run): Linux
    # takes a route's only from its metrics cache, never for a first connection.
    _ip("route", "replace", f"{_PEER}/32", "dev", _TUN, "initcwnd", str(script.initial_window))
    for key, value in (
        ("net.ipv4.tcp_timestamps", "0"), ("net.ipv4.tcp_sack", "0"), ("net.ipv4.tcp_no_metrics_save", "1"),
        ("net.ipv4.tcp_autocorking", "0"), ("net.ipv4.tcp_limit_output_bytes", str(64 << 20)),
        ("net.ipv4.tcp_wmem", f"4096 {16 << 20} {64 << 20}"), ("net.ipv4.tcp_slow_start_after_idle", "0"),
    ):  # fmt: skip
        write(Path("/proc/sys") / key.replace(".", "/"), value)
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, _TCP_CONGESTION, config["kernel_name"].encode())
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    try:
        sock.connect((_PEER, _PORT))
    except BlockingIOError:
        pass

    def read(timeout: float) -> list[bytes]:
        out: list[bytes] = []
        if select.select([tun], [], [], timeout)[0]:
            while True:
                try:
                    out.append(os.read(tun, 65536))
                except BlockingIOError:
                    return out
        return out

    # The handshake.
    deadline = time.monotonic() + 5
    isn = sport = None
    while isn is None or sport is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the kernel sent no SYN through the TUN")
        for packet in read(0.5):
            parsed = _parse(packet)
            if parsed and parsed[1] & 0x02:
                isn, sport = parsed[0], parsed[3]
    peer_isn = 1_000_000
    options = struct.pack("!BBH", 2, 4, _MSS) + struct.pack("!BBBB", 1, 3, 3, _WSCALE)
    os.write(tun, _segment(sport, peer_isn, isn + 1, 0x12, 65535, options))
    deadline = time.monotonic() + 5
    while True:
        try:
            sock.getpeername()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("the kernel's connection did not complete") from None
            read(0.01)
    mss = _tcp_info(sock)[0]
    chunk = b"\0" * (1 << 16)
    queued = 0

    def fill(acked: int = 0) -> None:
        """Keep _AHEAD bytes queued beyond what is acknowledged, from this thread and only between
        ACKs: a writer thread inside send() holds the socket's lock, and an ACK arriving then
        waits in the backlog and is processed (and stamped) late."""
        nonlocal queued
        try:
            while queued < acked + _AHEAD:
                queued += sock.send(chunk)
        except BlockingIOError:
            pass

    fill()
    tracer = _kernel_clock(sock, sport)
    try:
        result = _acks(script, tun, sock, isn, sport, peer_isn, read, fill)
    finally:
        kernel_ns = _kernel_times(tracer)
        # Reset, not close: a closed socket with data still queued would live on as an orphan in
        # the deleted namespace, its buffers counted against the machine's TCP memory (enough of
        # them put every TCP connection of the host under memory pressure).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        os.close(tun)
    return {"mss": mss, **result, "kernel_ns": kernel_ns}


def _kernel_clock(sock: socket.socket, sport: int) -> Any:
    """A tcp_probe trace of the connection (None where tracefs cannot be used): the kernel's own
    time of each ACK, on CLOCK_MONOTONIC."""
    if tracefs.tracing_permitted() is not None:
        return None
    tracer = tracefs.Tracer()
    try:
        tracer.open()
        cookie = struct.unpack("<Q", sock.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8))[0]
        tracer.start(sport, _PORT, cookie)
    except (OSError, tracefs.TracefsError):
        tracer.close()
        return None
    return tracer


def _kernel_times(tracer: Any) -> list[int] | None:
    """The times (ns) of the tcp_probe events, one per ACK the socket received in order."""
    if tracer is None:
        return None
    lines = tracer.stop()
    tracer.close()
    times = []
    for line in lines:
        parsed = tracefs.parse_trace_line(line)
        if parsed is not None and parsed[0] == "tcp_probe":
            times.append(round(parsed[1] * 1e9))
    return times


def _acks(script: Script, tun: int, sock: socket.socket, isn: int, sport: int, peer_isn: int, read: Any, fill: Any) -> dict[str, Any]:
    """The scripted ACKs (see the module's doc): per ACK the peer's record and the kernel's
    window after it."""
    delay, rate = script.rtt_s / 2, script.rate_bps
    base = isn + 1
    sent: deque[tuple[float, int, float, int]] = deque()  # (ACK due, ACK point, read time, releasing ACK or -1)
    last_leave = 0.0
    snd_nxt = 0
    acked = 0
    acks, cwnds, ssthreshes, srtts = [], [], [], []

    def take(packets: list[bytes], now: float, source: int = -1) -> None:
        nonlocal last_leave, snd_nxt
        for packet in packets:
            parsed = _parse(packet)
            if not parsed or parsed[2] == 0:
                continue
            end = (parsed[0] - base) % (1 << 32) + parsed[2]
            if end <= snd_nxt:
                continue  # a retransmission: there is no loss on this path
            snd_nxt = end
            leave = max(now + delay, last_leave + (parsed[2] + 40) * 8 / rate)
            last_leave = leave
            sent.append((leave + delay, end, now, source))

    take(read(1.0), time.monotonic())
    while len(acks) < script.acks:
        if not sent:
            take(read(1.0), time.monotonic())
            if not sent:
                raise RuntimeError(f"the kernel stopped sending after {len(acks)} ACKs")
            continue
        due, point, read_at, source = sent[0]
        wait = due - time.monotonic()
        if wait > 0.0003:
            take(read(wait - 0.0002), time.monotonic())
            continue
        while time.monotonic() < due:
            pass
        sent.popleft()
        now = time.monotonic()
        os.write(tun, _segment(sport, peer_isn + 1, base + point, 0x10, 65535))
        # The ACK is processed once tcpi_bytes_acked says so; the segments it released are read
        # at once, so that SND.NXT for the next ACK is known.
        spin = time.monotonic() + 1.0
        while True:
            _mss, ssthresh, cwnd, bytes_acked, srtt = _tcp_info(sock)
            if bytes_acked >= point or time.monotonic() > spin:
                break
        newly = point - acked
        # The ACK's time on CLOCK_MONOTONIC (time.monotonic's clock and the kernel's tcp_mstamp's),
        # so that whole milliseconds (HyStart's jiffies) fall where the kernel's fall.
        acks.append((int(now * 1e9), newly, point, snd_nxt, int((now - read_at) * 1e9), snd_nxt - point, source))
        acked = point
        cwnds.append(cwnd)
        ssthreshes.append(ssthresh)
        srtts.append(srtt)
        # What the kernel sent in answer left while it processed the ACK: its send time is the
        # ACK's, so the RTT sample of the segment's own ACK later is the kernel's to a microsecond
        # or two (not the later moment the peer got to read it).
        take(read(0), now, len(acks) - 1)
        if len(acks) % 256 == 0:
            fill(point)
    return {"acks": acks, "cwnd": cwnds, "ssthresh": ssthreshes, "srtt_us": srtts}


# --- the driver --------------------------------------------------------------------------------


def _namespace() -> str:
    return f"slc{os.getpid()}-conform"


def kernel_run(name: str, script: Script, bpf_params: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The kernel side of the conformance run of BPF algorithm ``name`` (registered for the run
    and unregistered after it, compiled with ``bpf_params``) in a namespace made for it and removed
    after it."""
    from .testbed import permitted

    reason = permitted() or kernelbpf.permitted()
    if reason is not None:
        raise kernelbpf.KernelBpfError(f"the conformance run cannot be made here: {reason}")
    ns = _namespace()
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    # A finite initial ssthresh is compiled in (INITIAL_SSTHRESH): Linux takes a route's ssthresh
    # only from its metrics cache, never for a first connection.
    params = {**(bpf_params or {}), **PEER_PARAMS.get(kernelbpf.variant(name).algorithm.sim, {})}
    if kernelbpf.variant(name).algorithm.sim == "suss":
        params["INITIAL_WINDOW"] = script.initial_window  # SUSS counts its rounds' blue parts from it
    if script.initial_ssthresh is not None:
        params["INITIAL_SSTHRESH"] = script.initial_ssthresh
    with kernelbpf.loaded(name, params) as kernel_name:
        _ip("netns", "add", ns)
        try:
            config = {"kernel_name": kernel_name, "script": script.__dict__}
            done = subprocess.run(
                ["ip", "netns", "exec", ns, sys.executable, "-m", "startlab.real.conformance", "_peer", json.dumps(config)],
                capture_output=True, text=True, timeout=120 + script.acks * 0.01,
            )  # fmt: skip
        finally:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    if done.returncode != 0:
        raise kernelbpf.KernelBpfError(f"the conformance peer failed: {done.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def scenario_text(sim: str, mss: int, script: Script, params: dict[str, Any] | None = None, avoidance: str = "reno") -> str:
    """The scenario whose first flow's controller is the Rust side of the comparison."""
    tcp = f'mss = "{mss}B", initial_window = {script.initial_window}, ack = "every-packet", congestion_avoidance = "{avoidance}"'
    if script.initial_ssthresh is not None:
        tcp += f', initial_ssthresh = "{script.initial_ssthresh}pkt"'
    startup = ", ".join([f'algorithm = "{sim}"', *(f"{k} = {json.dumps(v)}" for k, v in (params or {}).items())])
    return f"""\
seed = 1
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck_rate = "{script.rate_bps:.0f}bps"
rtt = "{script.rtt_s * 1e3:g}ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "100000pkt" }}
[[flows]]
name = "f"
tcp = {{ {tcp} }}
startup = {{ {startup} }}
size = "infinite"
"""


def _kernel_clocked(kernel: dict[str, Any]) -> list[tuple[int, int, int, int, int, int]]:
    """The ACKs as the kernel saw them: where the tcp_probe trace gave one time per ACK, each ACK's
    time is the kernel's (the ACK may be processed some tens of µs after the peer wrote it), and
    the RTT sample is the kernel's time of the ACK less the kernel's time of the ACK whose
    processing sent the acknowledged segment (the peer's own RTT, moved by the same offset, for
    segments of the first flight); else the peer's times."""
    peer = [tuple(int(x) for x in a) for a in kernel["acks"]]
    times = kernel.get("kernel_ns")
    if not times or len(times) != len(peer):
        return [a[:6] for a in peer]  # type: ignore[misc]
    out = []
    for i, (t, newly, point, nxt, rtt, flight, source) in enumerate(peer):
        k = times[i]
        rtt = k - times[source] if 0 <= source < i else rtt + (k - t)
        out.append((k, newly, point, nxt, rtt, flight))
    return out


def conform(name: str, script: Script | None = None, params: dict[str, Any] | None = None, bpf_params: Mapping[str, int] | None = None) -> Trace:
    """Run BPF algorithm ``name`` on the scripted path and its Rust version on the same ACKs; the
    kernel's compile-time ``bpf_params`` (``{"PRESET": 2}``) become the Rust version's startup
    parameters (startlab.real.bpfparams), beside ``params`` given to the Rust version only."""
    from .. import _core
    from .bpfparams import rust_params

    script = script or Script()
    v = kernelbpf.variant(name)
    rust_startup = {**rust_params(v.name, bpf_params or {}), **(params or {})}
    kernel = kernel_run(v.name, script, bpf_params)
    mss = int(kernel["mss"])
    acks = _kernel_clocked(kernel)
    text = scenario_text(v.algorithm.sim, mss, script, rust_startup, v.avoidance)
    rust = _core.controller_trace(text, acks)
    trace = Trace(v.name, mss, acks, list(kernel["cwnd"]), list(kernel["ssthresh"]))  # type: ignore[arg-type]
    trace.clock = "kernel" if kernel.get("kernel_ns") and len(kernel["kernel_ns"]) == len(acks) else "peer"
    trace.rust_cwnd = [c / mss for c, _ss, _in in rust]
    trace.rust_in_startup = [s for _c, _ss, s in rust]
    # §0.3 rounds, as both sides count them: the first ACK fixes the first round's end.
    end = None
    for i, (_t, _n, point, nxt, _r, _f) in enumerate(acks):
        if end is None:
            end = nxt
        elif point > end:
            trace.rounds.append(i)
            end = nxt
    return trace


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "_peer":
        print(json.dumps(_peer(json.loads(argv[1]))))
        return
    raise SystemExit("usage: python -m startlab.real.conformance _peer CONFIG (internal; use `startlab kernel conform NAME`)")


if __name__ == "__main__":
    main(sys.argv[1:])
