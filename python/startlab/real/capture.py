"""Packet captures on the testbed, and the truth check of ``startlab analyze`` (issue 37, item 4):
a kernel TCP transfer captured with tcpdump at the sender's interface, its capture analysed, and
the analysis' startup exit held against the kernel's own (``tcp_probe``'s cwnd and ssthresh,
:meth:`startlab.real.kerneltcp.KernelRun.startup_exit`).

tcpdump runs inside the testbed's namespace, so the testbed's clean-up (which ends every process
left in its namespaces) ends it too, whatever happened to the run.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .testbed import Testbed, TestbedError

#: Bytes kept of each frame: Ethernet, IPv4 and a TCP header with every option fit in 128.
SNAPLEN = 128


class CaptureError(TestbedError):
    """tcpdump is missing, did not start, or dropped packets."""


def tcpdump_missing() -> str | None:
    """Why no capture can be taken here, or None."""
    if shutil.which("tcpdump") is None:
        return "tcpdump is not installed (Debian: apt-get install tcpdump)"
    return None


@contextlib.contextmanager
def tcpdump(tb: Testbed, namespace: str, interface: str, path: Path, snaplen: int = SNAPLEN, expression: str = "tcp or udp") -> Iterator[Path]:
    """Capture ``interface`` of ``namespace`` to ``path`` (pcap) while the block runs; returns once
    tcpdump listens, stops it (SIGINT, so that it writes out its buffer) after the block and raises
    :class:`CaptureError` if it dropped packets."""
    missing = tcpdump_missing()
    if missing is not None:
        raise CaptureError(missing)
    # -U: each packet written as it comes; -B: a 32 MiB kernel buffer (100 Mbit/s bursts);
    # -n: no name look-ups; -Z root: keep the file writable by this process.
    args = ["ip", "netns", "exec", namespace, "tcpdump", "-i", interface, "-s", str(snaplen), "-B", "32768", "-U", "-n", "-Z", "root",
            "-w", str(path), expression]  # fmt: skip
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 10.0
        line = ""
        while "listening on" not in line:
            if time.monotonic() > deadline or process.poll() is not None:
                raise CaptureError(f"tcpdump did not start on {interface} in {namespace}: {line.strip() or process.stderr.read().strip()}")
            line = process.stderr.readline()
        yield path
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        failed = sys.exc_info()[0] is not None
        if failed and process.stderr is not None:
            process.stderr.close()
    rest = ""
    if process.stderr is not None:
        rest = process.stderr.read()
        process.stderr.close()
    for line in rest.splitlines():
        if "dropped by kernel" in line and not line.strip().startswith("0 "):
            raise CaptureError(f"tcpdump: {line.strip()}: the capture is incomplete")


@dataclass
class TruthRow:
    """One transfer: the stack's own startup exit (``kernel_*``: the kernel's tcp_probe, or
    startlab-udp's sender) beside what ``analyze`` found in its capture."""

    path: str
    stack: str
    kernel_exit_s: float | None
    kernel_reason: str
    kernel_cwnd_pkts: float | None
    analyze_exit_s: float | None
    analyze_reason: str
    analyze_flight_pkts: float | None
    base_rtt_s: float | None
    #: |analyze − kernel| exit time in base RTTs.
    time_error_rtts: float | None
    #: analyze's exit flight / the kernel's cwnd − 1.
    flight_error: float | None
    packets: int
    capture: str
    #: Where the capture was taken, as analyze used it.
    vantage: str = "sender"

    def within(self, rtts: float = 1.0, flight: float = 0.10) -> bool:
        """The issue's criterion: exit within ``rtts`` RTT and its flight within ``flight``."""
        return self.time_error_rtts is not None and self.time_error_rtts <= rtts and self.flight_error is not None and abs(self.flight_error) <= flight

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def kernel_truth(tb: Testbed, scenario: Path, stack: str, workdir: Path, size: int | None = None, receiver: bool = False) -> list[TruthRow]:
    """One transfer of ``stack`` through the router running ``scenario``, captured at the sender's
    interface (``s0``), analysed, and compared with the stack's own startup exit: a kernel stack's
    from ``tcp_probe`` (:meth:`~startlab.real.kerneltcp.KernelRun.startup_exit`), ``"udp"``'s
    (startlab-udp) from its sender's report (the controller's own exit, recorded once). ``size``
    bounds a kernel transfer (bytes); startlab-udp runs the scenario's flow as it is. With
    ``receiver`` the receiver's interface (``c0``) is captured too and analysed with the vantage
    inferred: a second row."""
    from .side_by_side import prepare

    workdir.mkdir(parents=True, exist_ok=True)
    path, flow = prepare(scenario, workdir)
    out = workdir / f"{Path(scenario).stem}-{stack.replace(':', '-')}.pcap"
    at_receiver = out.with_name(out.stem + "-receiver.pcap")
    # The whole datagram for startlab-udp: its keyed check closes it, and the decoder reads it whole.
    snaplen, expression = (2048, "udp") if stack == "udp" else (SNAPLEN, "tcp")
    with contextlib.ExitStack() as captures:
        captures.enter_context(tcpdump(tb, tb.server, "s0", out, snaplen=snaplen, expression=expression))
        if receiver:
            captures.enter_context(tcpdump(tb, tb.client, "c0", at_receiver, snaplen=snaplen, expression=expression))
        k_t, k_reason, k_cwnd = _transfer(tb, path, flow, stack, size)
    rows = [compare(out, tb.server_ip, Path(scenario).stem, stack, k_t, k_reason, k_cwnd)]
    if receiver:
        rows.append(compare(at_receiver, tb.server_ip, Path(scenario).stem, stack, k_t, k_reason, k_cwnd, vantage=None))
    return rows


def _transfer(tb: Testbed, path: Path, flow: dict[str, Any], stack: str, size: int | None) -> tuple[float | None, str, float | None]:
    """Runs the transfer; the stack's own exit (time since its first data packet, reason, cwnd)."""
    from . import kerneltcp
    from .side_by_side import run_udp

    tcp = flow["tcp"]
    if stack == "udp":
        result = run_udp(tb, path, flow)
        return result.exit_time_s, result.exit_reason, result.exit_cwnd_pkts
    tb.start_router(path)
    try:
        run = kerneltcp.run(
            tb, stack, size=size if size is not None else flow.get("size"), duration=None if (size or flow.get("size")) else flow["duration_s"],
            initial_window=int(tcp["initial_window"]), ecn=tcp["ecn"] is True, mss=int(tcp["mss"]), source="tcp_probe",
        )  # fmt: skip
    finally:
        tb.stop_router()
    t, reason, cwnd = run.startup_exit()
    return t, reason, None if cwnd is None else float(cwnd)


def compare(capture_path: Path, sender_ip: str, path: str, stack: str, k_t: float | None, k_reason: str, k_cwnd: float | None,
            vantage: str | None = "sender") -> TruthRow:  # fmt: skip
    """The data flow from ``sender_ip`` in the capture, analysed at ``vantage`` (None: inferred),
    beside the stack's own exit (time since its first data packet, reason, cwnd in segments)."""
    from .. import analyze as an

    result = an.analyze(capture_path, vantage=vantage)
    data = result.flows[result.flows["src"].str.startswith(sender_ip + ":")] if len(result.flows) else result.flows
    if data.empty:
        raise CaptureError(f"{capture_path}: no data flow from {sender_ip} in the capture")
    f = data.iloc[0].to_dict()
    a_t = None if _null(f["startup_exit_time"]) else float(f["startup_exit_time"]) - float(f["t0"])
    a_flight = None if _null(f["exit_cwnd_pkts"]) else float(f["exit_cwnd_pkts"])
    base = None if _null(f["base_rtt"]) else float(f["base_rtt"])
    return TruthRow(
        path=path, stack=stack, kernel_exit_s=k_t, kernel_reason=k_reason, kernel_cwnd_pkts=k_cwnd,
        analyze_exit_s=a_t, analyze_reason=str(f["exit_reason"]), analyze_flight_pkts=a_flight, base_rtt_s=base,
        time_error_rtts=abs(a_t - k_t) / base if a_t is not None and k_t is not None and base else None,
        flight_error=a_flight / k_cwnd - 1 if a_flight is not None and k_cwnd else None,
        packets=int(result.capture["packets"]), capture=str(capture_path), vantage=str(f["vantage"]),
    )  # fmt: skip


def _null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))
