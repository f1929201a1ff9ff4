"""Kernel TCP side by side on the testbed (issue 15, part 3): one Linux TCP transfer from the server
namespace's sender to the client namespace's receiver with a congestion control chosen by stack name
(``kernel:cubic``, ``kernel:cubic-nohystart``, ``kernel:reno``, ``kernel:bbr``), its cwnd and
ssthresh per ACK and the receiver's byte timeline.

Sources. The sender's state comes from the ``tcp:tcp_probe`` tracepoint, read from a private
tracefs instance (``instances/startlab-<pid>-<n>``, ``trace_clock`` = ``mono`` so that its times are
CLOCK_MONOTONIC like :func:`time.monotonic`), filtered on the connection's ports and socket cookie;
``tcp:tcp_retransmit_skb`` gives the retransmissions. Where tracefs cannot be used the sender's
``TCP_INFO`` is polled instead (every ``poll`` seconds); :attr:`KernelRun.source` says which.

- ``tcp_probe`` fires when the sender's socket *receives* a segment in the established state (at
  the start of ``tcp_rcv_established``), that is once per ACK, and reports the state *before* that
  ACK is processed: a sample's cwnd and ssthresh are those left by the previous ACK (or timer).
- the tracefs instance, its mount and its clean-up are :mod:`startlab.real.tracefs`'s.

Times. Every time in a :class:`KernelRun` is in seconds since the first data packet: the sender
reads ``time.monotonic()`` immediately before its first ``send()`` system call, and the kernel
transmits the first window's segments inside that call (nothing is in flight and the segments are
full, so neither Nagle nor corking holds them back). The tcp_info fallback's first sample is taken
before that call and so has a slightly negative time.

Settings (per network namespace, so they go with the namespaces): SACK on, timestamps on, ECN off
unless asked, ``tcp_no_metrics_save=1``, no slow start after idle, and ``tcp_wmem``/``tcp_rmem``
maxima of 32 MiB: a 100 Mbit/s × 100 ms path with an 833-packet buffer holds up to 2.5 MB of
payload in flight (about 1730 segments), the kernel charges each segment's ``truesize`` (about
2.3 KB for 1448 bytes) against the buffer and autotuning asks for two (BBR: three) times the
window — about 12 MB — so 32 MiB leaves room. The sockets' buffers are left to autotuning (no
``SO_SNDBUF``/``SO_RCVBUF``), so the global ``net.core.*mem_max`` do not apply and are not touched.
The initial window is the kernel's default (10) unless ``initial_window`` sets ``initcwnd`` on the
sender's default route (restored afterwards). The payload per segment is 1448 bytes: the sender
sets ``TCP_MAXSEG`` to 1460 — measured on Linux 6.18: ``TCP_MAXSEG`` is the MSS *before* the 12
bytes of the timestamp option, so ``TCP_MAXSEG=1448`` gives 1436-byte segments, 1460 gives 1448
(:attr:`KernelRun.mss` is the ``tcpi_snd_mss`` the kernel used).

Global state. ``kernel:cubic`` and ``kernel:cubic-nohystart`` set the ``tcp_cubic`` module parameter
``hystart`` (1 or 0) for the run — it is global: every CUBIC connection of the machine sees it —
and restore the old value in a ``finally``, on SIGTERM, and, after a SIGKILL, at the next run (a
journal in ``/run/startlab``). A congestion control that is not in the kernel is loaded with
``modprobe tcp_<name>`` and unloaded afterwards only if this run loaded it. Runs of this module
take an exclusive lock (``/run/startlab/kerneltcp.lock``) so that two of them never change these
settings under each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import tracefs
from .system import STATE_DIR, alive, available_congestion_controls, write
from .testbed import Testbed, TestbedError
from .tracefs import LOST_EVENTS, Tracer, TracefsError, parse_trace_line, tracing_permitted

#: Accepted stack names: ``kernel:NAME`` → (the ``TCP_CONGESTION`` name, the ``tcp_cubic``
#: ``hystart`` parameter for the run or None when the stack does not use it).
STACKS: dict[str, tuple[str, int | None]] = {
    "kernel:cubic": ("cubic", 1),
    "kernel:cubic-nohystart": ("cubic", 0),
    "kernel:reno": ("reno", None),
    "kernel:bbr": ("bbr", None),
}

#: Payload bytes per segment (with the timestamp option).
MSS = 1448
#: Bytes of the TCP timestamp option (10, padded to 12), which the kernel takes out of TCP_MAXSEG.
TIMESTAMP_OPTION = 12
#: ``TCP_INFINITE_SSTHRESH`` of include/net/tcp.h: ssthresh at or above it means "not set".
INFINITE_SSTHRESH = 0x7FFFFFFF
#: Sources of the per-ACK samples.
SOURCES = ("auto", "tcp_probe", "tcp_info")

_HYSTART = Path("/sys/module/tcp_cubic/parameters/hystart")

#: ``bbr_high_gain`` (2/ln 2 in BBR_UNIT = 256): BBR's pacing gain in STARTUP and only there.
_BBR_HIGH_GAIN = 256 * 2885 // 1000 + 1


class KernelTcpError(TestbedError):
    """A kernel TCP run could not be made; the message says which step and why."""


def stack_name(stack: str) -> str:
    """The canonical name (``kernel:cubic``, ``kernel:bpf-lss+cubic``) of a stack given as
    ``kernel:NAME`` or a bare ``NAME``; an unknown one raises :class:`ValueError` listing the
    accepted names."""
    from . import kernelbpf

    if not isinstance(stack, str):
        raise ValueError(f"stack = {stack!r}: expected a name such as kernel:cubic")
    name = stack.strip().lower()
    if not name.startswith("kernel:"):
        name = f"kernel:{name}"
    if name.startswith("kernel:bpf-"):
        try:
            return f"kernel:{kernelbpf.variant(name).name}"
        except ValueError as e:
            raise ValueError(f"stack = {stack!r}: {e}") from None
    if name not in STACKS:
        accepted = ", ".join(STACKS)
        raise ValueError(
            f"stack = {stack!r}: unknown kernel stack; accepted: {accepted}, kernel:bpf-NAME[+cubic] (startlab kernel list), "
            "or the same without `kernel:`"
        )
    return name


def stack_settings(name: str) -> tuple[str, int | None]:
    """(the ``TCP_CONGESTION`` name, the ``tcp_cubic`` ``hystart`` parameter or None) of a
    canonical stack name; a BPF algorithm's is its kernel name (``sl_lss_r``)."""
    from . import kernelbpf

    if name.startswith("kernel:bpf-"):
        return kernelbpf.variant(name).kernel_name, None
    return STACKS.get(name, ("", None))


# --- the result --------------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelSample:
    """The sender's state at one ACK (``tcp_probe``, before the ACK is processed) or one poll
    (``tcp_info``)."""

    #: Seconds since the first data packet.
    t_s: float
    #: Congestion window, segments.
    cwnd_pkts: int
    #: Slow-start threshold, segments; None while "infinite" (>= 0x7fffffff, never set).
    ssthresh_pkts: int | None
    #: Bytes acknowledged before this ACK, counted from the first data byte.
    snd_una: int
    #: Smoothed RTT, seconds.
    srtt_s: float
    #: Bytes sent (highest sequence, counted from the first data byte); None from ``tcp_info``.
    snd_nxt: int | None = None
    #: The receiver's advertised window, bytes; None where the kernel does not report it.
    snd_wnd: int | None = None


@dataclass
class KernelRun:
    """One kernel TCP transfer on the testbed: what was asked, what the kernel did, and what the
    receiver got. Times are seconds since the first data packet (the module's documentation says
    how that instant is read)."""

    #: The canonical stack name (``kernel:cubic``).
    stack: str
    #: The congestion control the sender's socket actually used (``TCP_CONGESTION`` read back).
    congestion_control: str
    #: ``"tcp_probe"`` (per ACK, tracefs) or ``"tcp_info"`` (polled).
    source: str
    #: The sender's state per ACK (or poll).
    samples: list[KernelSample]
    #: Times of the sender's retransmissions (one per retransmitted segment).
    retransmits: list[float]
    #: The receiver's (time, total bytes received): at most one point per millisecond, and the last byte's.
    timeline: list[tuple[float, int]]
    #: Bytes the receiver got.
    bytes: int
    #: From the first data packet to the receiver's last byte.
    seconds: float
    #: ``bytes * 8 / seconds``.
    goodput_bps: float
    #: Payload bytes per segment the sender used (``tcpi_snd_mss``).
    mss: int = MSS
    #: The ``initcwnd`` set on the sender's route for the run; None: the kernel's default (10).
    initial_window: int | None = None
    #: Whether ECN was enabled in the namespaces.
    ecn: bool = False
    #: The ``tcp_cubic`` ``hystart`` parameter during the run (CUBIC stacks), else None.
    hystart: int | None = None
    #: HyStart exits in the sender's namespace during the run (``TcpExtTCPHystartTrainDetect`` and
    #: ``...DelayDetect`` of /proc/net/netstat), keyed ``ack-train`` and ``delay-increase``.
    hystart_detections: dict[str, int] = field(default_factory=dict)
    #: BBR: when ``TCP_CC_INFO`` first showed a pacing gain below STARTUP's (polled), else None.
    bbr_startup_exit_s: float | None = None
    #: Seconds from ``connect()`` to the connection being established (the SYN's round trip).
    handshake_s: float = math.nan
    #: Trace events the ring buffer dropped (``[LOST n EVENTS]``); nonzero means missing samples.
    lost_events: int = 0
    #: Trace lines that could not be read as events (counted, skipped).
    unparsed_lines: int = 0
    #: Seconds between TCP_INFO polls when ``source`` is ``tcp_info`` (the samples' resolution).
    poll_s: float = 0.0
    #: Segments the sender received while established, up to its last poll before its FIN
    #: (``tcpi_segs_in`` less the SYN-ACK): the ACKs ``tcp_probe`` should have one sample each of.
    acks_received: int | None = None
    #: ACKs the kernel merged into the one before while the sender's socket was busy
    #: (``TcpExtTCPBacklogCoalesce``): ``tcp_probe`` fires once for such a merged ACK, so it has
    #: ``acks_received - acks_coalesced`` samples. None when not counted.
    acks_coalesced: int | None = None
    #: The kernel that ran it (``uname -r``).
    kernel: str = field(default_factory=lambda: os.uname().release)
    #: Time zero on ``CLOCK_MONOTONIC`` (``time.monotonic()``, the router's ``mono_s``), seconds.
    t0_mono: float = math.nan

    def startup_exit(self) -> tuple[float | None, str, int | None]:
        """(time, reason, cwnd in segments) of the end of startup, or ``(None, "not-exited", None)``.

        Startup ends at the first sample whose ssthresh is finite: the kernel sets ssthresh when
        HyStart exits, when BBR leaves STARTUP (``bbr_check_drain``) and on a loss. The reason is
        ``"loss"`` (``"timeout"`` when the window had collapsed to 1 segment, an RTO) if a
        retransmission happened within one smoothed RTT before that sample, up to it. Why one RTT:
        the ssthresh set when a loss is detected — at the same ACK or timer that sends the
        retransmission — becomes visible only at the next ACK, and after an RTO that is the
        retransmission's own ACK, one RTT later; an older retransmission (a tail-loss probe, which
        leaves ssthresh alone) is not the cause. Otherwise: BBR ``"bandwidth-plateau"`` (BBR v1
        leaves STARTUP only on a plateau: a loss does not set its ssthresh); CUBIC with HyStart
        ``"ack-train"`` or ``"delay-increase"`` when the namespace's HyStart counters say which,
        else ``"hystart"``; with ECN ``"ecn"``; else ``"unknown"``.

        The time is that of the retransmission where there was one in the window after the
        previous sample, else (``tcp_probe``) the previous sample's — the ACK whose processing set
        ssthresh — or (``tcp_info``) the sample's own. The cwnd is the larger of that sample's and
        the previous one's: the window before any reduction (a loss cuts it, HyStart and BBR do not).
        """
        index = next((i for i, s in enumerate(self.samples) if s.ssthresh_pkts is not None), None)
        if index is None:
            return None, "not-exited", None
        seen = self.samples[index]
        before = self.samples[index - 1] if index > 0 else None
        slack = self.poll_s if self.source == "tcp_info" else 0.0
        window = [t for t in self.retransmits if seen.t_s - seen.srtt_s - slack <= t <= seen.t_s]
        cwnd = max(seen.cwnd_pkts, before.cwnd_pkts) if before is not None else seen.cwnd_pkts
        set_at = before.t_s if before is not None and self.source == "tcp_probe" else seen.t_s
        name = stack_settings(self.stack)[0] if self.stack.startswith("kernel:") else ""
        if window and name != "bbr":
            after = [t for t in window if before is None or t >= before.t_s]
            return (after[0] if after else set_at), ("timeout" if seen.cwnd_pkts <= 1 else "loss"), cwnd
        if name == "bbr":
            return set_at, "bandwidth-plateau", cwnd
        if name == "cubic" and self.hystart:
            train, delay = self.hystart_detections.get("ack-train", 0), self.hystart_detections.get("delay-increase", 0)
            reason = "ack-train" if train and not delay else "delay-increase" if delay and not train else "hystart"
            return set_at, reason, cwnd
        return set_at, "ecn" if self.ecn else "unknown", cwnd

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready values (samples as a list of objects, the timeline as pairs),
        with ``startup_exit`` as ``{"time_s", "reason", "cwnd_pkts"}``."""
        out = asdict(self)
        out["timeline"] = [list(p) for p in self.timeline]
        t, reason, cwnd = self.startup_exit()
        out["startup_exit"] = {"time_s": t, "reason": reason, "cwnd_pkts": cwnd}
        for key in ("seconds", "goodput_bps", "handshake_s"):
            if isinstance(out[key], float) and not math.isfinite(out[key]):
                out[key] = None
        return out


def _int(text: str) -> int:
    return int(text, 0)


def _parse_trace(lines: list[str], t0: float) -> tuple[list[KernelSample], list[float], int, int]:
    """Samples, retransmission times, lost events and unparsed lines of a trace, in time order;
    ``snd_una`` and ``snd_nxt`` are counted from the first sample's ``snd_una`` (the first ACK's,
    before it is processed: the first data byte), unwrapped past 2^32."""
    probes: list[tuple[float, dict[str, int]]] = []
    retransmits: list[float] = []
    lost = unparsed = 0
    for line in lines:
        if not line.strip():
            continue
        gone = LOST_EVENTS.search(line)
        if gone:
            lost += int(gone.group(1))
            continue
        event = parse_trace_line(line)
        if event is None:
            unparsed += 1
            continue
        name, seconds, f = event
        try:
            if name == "tcp_retransmit_skb":
                # err != 0: the retransmission was not sent (queue full); SYN_SENT: the handshake's.
                if _int(f.get("err", "0")) == 0 and f.get("state") != "TCP_SYN_SENT":
                    retransmits.append(seconds - t0)
                continue
            probes.append((seconds, {k: _int(f[k]) for k in ("snd_una", "snd_nxt", "snd_cwnd", "ssthresh", "srtt", "snd_wnd")}))
        except (KeyError, ValueError):
            unparsed += 1
    # One socket's ACKs are processed under its lock, so trace_pipe (which merges the CPUs' buffers
    # by time) gives them in order; the sort only guards the sequence unwrapping below.
    probes.sort(key=lambda p: p[0])
    retransmits.sort()
    samples: list[KernelSample] = []
    una = nxt = 0
    last_una = last_nxt = probes[0][1]["snd_una"] if probes else 0
    for seconds, f in probes:
        una += _signed_delta(f["snd_una"], last_una)
        nxt += _signed_delta(f["snd_nxt"], last_nxt)
        last_una, last_nxt = f["snd_una"], f["snd_nxt"]
        ssthresh = None if f["ssthresh"] >= INFINITE_SSTHRESH else f["ssthresh"]
        samples.append(KernelSample(seconds - t0, f["snd_cwnd"], ssthresh, una, f["srtt"] / 1e6, nxt, f["snd_wnd"]))
    return samples, retransmits, lost, unparsed


def _signed_delta(now: int, before: int) -> int:
    delta = (now - before) & 0xFFFFFFFF
    return delta - (1 << 32) if delta >= 1 << 31 else delta


# --- global kernel state -----------------------------------------------------------------------


def _journal() -> Path:
    return STATE_DIR / f"kerneltcp-{os.getpid()}.json"


class _Globals:
    """Global kernel settings changed for one run: each change is undone by :meth:`restore`
    (latest first, each once); module parameters are journaled so that a run killed with SIGKILL
    is undone by the next one (:func:`recover`)."""

    def __init__(self) -> None:
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self._params: dict[str, str] = {}

    def set_param(self, path: Path, value: str) -> None:
        old = path.read_text().strip()
        if old == value:
            return

        def undo() -> None:
            write(path, old)
            self._params.pop(str(path), None)
            if self._params:
                _journal().write_text(json.dumps(self._params))
            else:
                _journal().unlink(missing_ok=True)

        # The undo and the journal first: a signal may interrupt this anywhere.
        self._undo.append((f"{path} back to {old}", undo))
        self._params[str(path)] = old
        _journal().write_text(json.dumps(self._params))
        write(path, value)

    def ensure_congestion_control(self, name: str, stack: str = "", bpf_params: dict[str, int] | None = None) -> None:
        available = available_congestion_controls()
        if name in available:
            if bpf_params:
                # Already registered, maybe compiled otherwise: the run must not guess.
                raise KernelTcpError(f"{stack} is already registered; unload it (startlab kernel unload) to run it with compile-time parameters")
            return
        if stack.startswith("kernel:bpf-"):
            self._load_bpf(stack, bpf_params)
            return
        module = f"tcp_{name}"
        if shutil.which("modprobe") is None:
            raise KernelTcpError(
                f"this kernel has no {name} congestion control: it is neither built in nor loaded (available: {' '.join(available)}), "
                f"and there is no `modprobe` to load {module}"
            )
        done = subprocess.run(["modprobe", module], capture_output=True, text=True)
        if done.returncode != 0 or name not in available_congestion_controls():
            raise KernelTcpError(
                f"this kernel has no {name} congestion control (available: {' '.join(available)}); `modprobe {module}` failed: "
                f"{done.stderr.strip() or 'it loaded nothing'}"
            )

        def undo() -> None:
            gone = subprocess.run(["modprobe", "-r", module], capture_output=True, text=True)
            if gone.returncode != 0:
                raise KernelTcpError(f"`modprobe -r {module}` failed: {gone.stderr.strip()}")

        self._undo.append((f"unload {module}", undo))

    def _load_bpf(self, stack: str, params: dict[str, int] | None = None) -> None:
        """Register a BPF algorithm for the run, compiled with ``params`` (unregistered by
        :meth:`restore`)."""
        from . import kernelbpf

        kernelbpf.recover()
        try:
            loaded = kernelbpf.load(stack, params or {})
        except kernelbpf.KernelBpfError as e:
            raise KernelTcpError(f"{stack}: {e}") from None
        if loaded:
            self._undo.append((f"unload {stack}", lambda: kernelbpf.unload(stack) and None))

    def add(self, what: str, undo: Callable[[], None]) -> None:
        self._undo.append((what, undo))

    def restore(self) -> list[str]:
        """Undo every change (latest first); returns what could not be undone and why."""
        failed = []
        while self._undo:
            what, undo = self._undo.pop()
            try:
                undo()
            except Exception as e:  # noqa: BLE001 - every change gets its chance to be undone
                failed.append(f"{what}: {e}")
        return failed


def recover() -> list[str]:
    """Put back module parameters changed by runs whose process died (SIGKILL, a crash), remove
    their tracefs instances and private tracefs mounts; returns what was done."""
    done = []
    if STATE_DIR.is_dir():
        for journal in STATE_DIR.glob("kerneltcp-*.json"):
            pid = journal.stem.removeprefix("kerneltcp-")
            if not pid.isdigit() or (alive(int(pid)) and int(pid) != os.getpid()):
                continue
            try:
                for path, value in json.loads(journal.read_text()).items():
                    write(Path(path), value)
                    done.append(f"{path} back to {value} (left by process {pid})")
                journal.unlink()
            except (OSError, ValueError, AttributeError) as e:
                done.append(f"could not restore from {journal}: {e}")
    done.extend(tracefs.recover())
    return done


@contextlib.contextmanager
def _exclusive(timeout: float) -> Iterator[None]:
    """The lock that serialises runs of this module (they change global settings)."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    with open(STATE_DIR / "kerneltcp.lock", "a+") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    lock.seek(0)
                    raise KernelTcpError(f"another kernel TCP run (process {lock.read().strip() or '?'}) holds {lock.name}") from None
                time.sleep(0.05)
        try:
            lock.seek(0)
            lock.truncate()
            lock.write(str(os.getpid()))
            lock.flush()
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def _on_sigterm(cleanup: Callable[[], object]) -> Iterator[None]:
    """Run ``cleanup`` on SIGTERM, then what was installed before (the testbed's handler removes
    the namespaces and exits) or exit with status 143, so that the run's ``finally`` finishes the
    clean-up; only where handlers can be set (the main thread) and SIGTERM is not ignored."""
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or previous == signal.SIG_IGN:
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        cleanup()
        if callable(previous):
            previous(signum, frame)
        else:
            raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# --- the namespaces ----------------------------------------------------------------------------


def _namespace_settings(ecn: bool) -> list[str]:
    return [
        "net.ipv4.tcp_sack=1",
        "net.ipv4.tcp_timestamps=1",
        f"net.ipv4.tcp_ecn={1 if ecn else 0}",
        "net.ipv4.tcp_no_metrics_save=1",
        "net.ipv4.tcp_slow_start_after_idle=0",
        "net.ipv4.tcp_wmem=4096 16384 33554432",
        "net.ipv4.tcp_rmem=4096 131072 33554432",
    ]


def _set_initcwnd(tb: Testbed, window: int) -> Callable[[], None]:
    """``initcwnd`` on the sender's default route, keeping its other attributes (``advmss``);
    returns the undo."""
    shown = tb.exec(tb.server, "ip", "-o", "route", "show", "default").stdout.strip().splitlines()
    if len(shown) != 1:
        raise KernelTcpError(f"expected one default route in {tb.server}, found {len(shown)}: {shown}")
    original = shown[0].split()
    kept = []
    words = iter(original)
    for word in words:
        if word == "initcwnd":
            next(words, None)
        else:
            kept.append(word)
    tb.exec(tb.server, "ip", "route", "change", *kept, "initcwnd", str(window))

    def undo() -> None:
        if tb.exists():
            tb.exec(tb.server, "ip", "route", "change", *original)

    return undo


#: Counters of the sender's namespace (/proc/net/netstat, TcpExt) a run reports the change of.
_COUNTERS = {"ack-train": "TCPHystartTrainDetect", "delay-increase": "TCPHystartDelayDetect", "backlog-coalesce": "TCPBacklogCoalesce"}


def _netstat(tb: Testbed) -> dict[str, int]:
    """The :data:`_COUNTERS` of the sender's namespace now (0 where the kernel lacks one)."""
    text = tb.exec(tb.server, "cat", "/proc/net/netstat", check=False).stdout.splitlines()
    counters: dict[str, int] = {}
    for names, values in zip(text[::2], text[1::2]):
        if names.startswith("TcpExt:") and values.startswith("TcpExt:"):
            counters = dict(zip(names.split()[1:], (int(v) for v in values.split()[1:])))
    return {key: counters.get(name, 0) for key, name in _COUNTERS.items()}


# --- the run -----------------------------------------------------------------------------------


def _check(size: int | None, duration: float | None, port: int, initial_window: int | None, mss: int | None, source: str, poll: float) -> None:
    if size is None and duration is None:
        raise ValueError("give size (bytes) or duration (seconds), or both: the transfer needs an end")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ValueError(f"size = {size!r}: expected a positive number of bytes")
    if duration is not None and not (isinstance(duration, int | float) and math.isfinite(duration) and duration > 0):
        raise ValueError(f"duration = {duration!r}: expected a positive number of seconds")
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port = {port!r}: expected 1 to 65535")
    if initial_window is not None and (not isinstance(initial_window, int) or not 1 <= initial_window <= 1000):
        raise ValueError(f"initial_window = {initial_window!r}: expected 1 to 1000 segments")
    if mss is not None and (not isinstance(mss, int) or not 88 <= mss <= 9000):
        raise ValueError(f"mss = {mss!r}: expected 88 to 9000 payload bytes, or None for the route's")
    if source not in SOURCES:
        raise ValueError(f"source = {source!r}: expected one of {', '.join(SOURCES)}")
    if not (math.isfinite(poll) and 0 < poll <= 1):
        raise ValueError(f"poll = {poll!r}: expected 0 < poll <= 1 seconds")


def _spawn(tb: Testbed, namespace: str, role: str, config: dict[str, Any]) -> subprocess.Popen[str]:
    env = dict(os.environ)
    package_parent = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    return subprocess.Popen(
        ["ip", "netns", "exec", namespace, sys.executable, "-m", "startlab.real.kernelends", role, json.dumps(config)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _first_line(process: subprocess.Popen[str], what: str) -> str:
    line = process.stdout.readline() if process.stdout else ""
    if not line.strip():
        process.kill()
        _, err = process.communicate()
        raise KernelTcpError(f"the {what} did not start: {err.strip().splitlines()[-1] if err.strip() else f'exit {process.returncode}'}")
    return line


def _finish(process: subprocess.Popen[str], what: str, timeout: float) -> dict[str, Any]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise KernelTcpError(f"the {what} did not finish within {timeout:.0f} s") from None
    if process.returncode != 0 or not out.strip():
        detail = err.strip().splitlines()[-1] if err.strip() else f"exit {process.returncode}"
        raise KernelTcpError(f"the {what} failed: {detail}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


class _Live:
    """What one run holds (processes, tracer, global changes), released once by :meth:`cleanup` —
    from the ``finally`` or the SIGTERM handler, whichever comes first."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[str]] = []
        self.tracer: Tracer | None = None
        self.globals = _Globals()

    def release(self) -> list[str]:
        """Stop the processes and undo the global changes; returns what could not be undone. The
        SIGTERM handler does this at once; the tracefs instance is left to :meth:`cleanup` in the
        ``finally``, after the interrupted code has closed its files (an open file of the instance
        keeps it from being removed)."""
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            with contextlib.suppress(Exception):
                process.communicate(timeout=5)
        self.processes.clear()
        return self.globals.restore()

    def cleanup(self) -> list[str]:
        """:meth:`release`, and remove the tracer; returns what could not be done (a later call
        retries what is left)."""
        failures = self.release()
        if self.tracer is not None:
            try:
                left = self.tracer.close()
            except Exception as e:  # noqa: BLE001 - reported with the rest
                left = [f"removing the tracefs instance: {e}"]
            if left:
                failures.extend(left)
            else:
                self.tracer = None
        return failures


def run(
    tb: Testbed,
    stack: str,
    size: int | None = None,
    duration: float | None = None,
    port: int = 5201,
    *,
    initial_window: int | None = None,
    ecn: bool = False,
    mss: int | None = MSS,
    source: str = "auto",
    poll: float = 0.002,
    timeout: float | None = None,
    bpf_params: dict[str, int] | None = None,
) -> KernelRun:
    """One Linux TCP transfer on the testbed ``tb`` (up) from the server namespace's sender to the
    client namespace's receiver listening on ``port``, with the congestion control of ``stack``
    (``kernel:cubic``, ``kernel:cubic-nohystart``, ``kernel:reno``, ``kernel:bbr``, a BPF startup
    algorithm ``kernel:bpf-NAME[+cubic]`` (registered for the run and unregistered after it,
    docs/KERNEL-BPF.md), or a bare name). It ends after ``size`` bytes or after ``duration`` seconds of sending, whichever comes
    first (at least one of them is needed).

    ``initial_window`` sets ``initcwnd`` on the sender's route (None: the kernel's 10); ``ecn``
    enables ECN in both namespaces; ``mss`` is the payload per segment (``TCP_MAXSEG`` = mss + 12
    for the timestamp option; None: the route's); ``source`` = ``"auto"`` reads ``tcp_probe`` where
    tracefs allows and polls ``TCP_INFO`` every ``poll`` seconds otherwise, ``"tcp_probe"`` or
    ``"tcp_info"`` insist on one. ``timeout`` bounds the transfer (default 60 s plus
    ``duration``). ``bpf_params`` are a BPF algorithm's compile-time parameters (docs/KERNEL-BPF.md). A stack the kernel lacks raises :class:`KernelTcpError` saying so; bad
    arguments raise :class:`ValueError` naming the argument.
    """
    name = stack_name(stack)
    congestion_control, hystart = stack_settings(name)
    _check(size, duration, port, initial_window, mss, source, poll)
    limit = timeout if timeout is not None else 60.0 + (duration or 0.0)
    if not tb.exists():
        raise KernelTcpError("the testbed is not up")
    use_probe = source == "tcp_probe"
    if source == "auto":
        use_probe = tracing_permitted() is None
    live = _Live()
    with _exclusive(limit), _on_sigterm(live.release):
        recover()
        try:
            result = _transfer(tb, live, name, congestion_control, hystart, size, duration, port, initial_window, ecn, mss, use_probe, poll, limit, bpf_params)
        except BaseException:
            failures = live.cleanup()
            if failures:
                print(f"startlab: could not restore after a failed kernel TCP run: {'; '.join(failures)}", file=sys.stderr)
            raise
        failures = live.cleanup()
        if failures:
            raise KernelTcpError(f"the run finished but could not restore: {'; '.join(failures)}")
    return result


def _transfer(
    tb: Testbed, live: _Live, name: str, congestion_control: str, hystart: int | None, size: int | None, duration: float | None, port: int,
    initial_window: int | None, ecn: bool, mss: int | None, use_probe: bool, poll: float, limit: float,
    bpf_params: dict[str, int] | None = None,
) -> KernelRun:  # fmt: skip
    live.globals.ensure_congestion_control(congestion_control, name, bpf_params)
    if hystart is not None:
        if not _HYSTART.exists():
            raise KernelTcpError(f"{_HYSTART} does not exist: this kernel's CUBIC has no HyStart switch")
        live.globals.set_param(_HYSTART, str(hystart))
    for ns in (tb.client, tb.server):
        tb.exec(ns, "sysctl", "-qw", *_namespace_settings(ecn))
    if initial_window is not None:
        live.globals.add(f"initcwnd on {tb.server}'s route", _set_initcwnd(tb, initial_window))
    counters = _netstat(tb)

    receiver = _spawn(tb, tb.client, "_receive", {"address": tb.client_ip, "port": port, "timeout": limit})
    live.processes.append(receiver)
    _first_line(receiver, "receiver")
    sender = _spawn(tb, tb.server, "_send", {
        "source": tb.server_ip, "address": tb.client_ip, "port": port, "congestion_control": congestion_control,
        "maxseg": mss + TIMESTAMP_OPTION if mss is not None else None, "size": size, "duration": duration, "poll": poll,
        "timeout": limit, "bbr": congestion_control == "bbr",
    })  # fmt: skip
    live.processes.append(sender)
    bound = json.loads(_first_line(sender, "sender"))
    if use_probe:
        live.tracer = Tracer()
        try:
            live.tracer.open()
            live.tracer.start(bound["sport"], port, bound["cookie"])
        except TracefsError as e:
            raise KernelTcpError(str(e)) from None
    assert sender.stdin is not None
    sender.stdin.write("go\n")
    sender.stdin.flush()
    sent = _finish(sender, "sender", limit)
    received = _finish(receiver, "receiver", 10.0)
    lines = live.tracer.stop() if live.tracer is not None else []
    trace_error = live.tracer.error if live.tracer is not None else None
    if trace_error:
        raise KernelTcpError(trace_error)
    changes = {k: v - counters[k] for k, v in _netstat(tb).items()}
    return _result(name, sent, received, lines if use_probe else None, initial_window, ecn, hystart, changes, poll)


def _result(
    name: str, sent: dict[str, Any], received: dict[str, Any], lines: list[str] | None, initial_window: int | None, ecn: bool,
    hystart: int | None, changes: dict[str, int], poll: float,
) -> KernelRun:  # fmt: skip
    t0 = float(sent["t_first"])
    lost = unparsed = 0
    if lines is not None:
        samples, retransmits, lost, unparsed = _parse_trace(lines, t0)
    else:
        samples, retransmits = [], []
        previous_retrans = 0
        for i in sent["info"]:
            ssthresh = i["ssthresh"]
            # tcpi_bytes_acked counts the SYN (and at the end the FIN) as one byte each.
            acked = min(max(0, i["bytes_acked"] - 1), int(sent["sent"]))
            samples.append(
                KernelSample(i["t"] - t0, i["cwnd"], None if ssthresh >= INFINITE_SSTHRESH else ssthresh, acked, i["rtt_us"] / 1e6, None, i["snd_wnd"])
            )
            retransmits.extend([i["t"] - t0] * max(0, i["total_retrans"] - previous_retrans))
            previous_retrans = max(previous_retrans, i["total_retrans"])
    bbr_exit = _bbr_startup_exit(sent["info"], t0)
    timeline = [(t - t0, b) for t, b in received["timeline"]]
    seconds = timeline[-1][0] if timeline else math.nan
    total = int(received["bytes"])
    return KernelRun(
        stack=name, congestion_control=sent["congestion_control"], source="tcp_probe" if lines is not None else "tcp_info",
        samples=samples, retransmits=retransmits, timeline=timeline, bytes=total, seconds=seconds,
        goodput_bps=total * 8 / seconds if seconds > 0 else math.nan, mss=int(sent["mss"]), initial_window=initial_window, ecn=ecn,
        hystart=hystart, hystart_detections={k: changes[k] for k in ("ack-train", "delay-increase")}, bbr_startup_exit_s=bbr_exit,
        handshake_s=sent["t_connected"] - sent["t_connect"], lost_events=lost, unparsed_lines=unparsed, poll_s=poll if lines is None else 0.0,
        acks_received=int(sent["segs_in"]) - 1, acks_coalesced=changes["backlog-coalesce"], t0_mono=t0,
    )  # fmt: skip


def _bbr_startup_exit(info: list[dict[str, Any]], t0: float) -> float | None:
    """The first poll showing a pacing gain below STARTUP's after one showing STARTUP's (the gain
    is 0 until BBR's first ACK sets it)."""
    startup = False
    for i in info:
        gain = i["pacing_gain"]
        if gain == _BBR_HIGH_GAIN:
            startup = True
        elif startup and gain is not None and 0 < gain < _BBR_HIGH_GAIN:
            return float(i["t"]) - t0
    return None
