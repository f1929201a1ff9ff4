"""The real-path testbed (issue 15, docs/TESTBED.md): a client, a router and a server network
namespace joined by two veth pairs, offloads off so that every packet is wire-sized, and in the
router namespace either the kernel forwarding at line rate or the user-space Rust router
(:mod:`startlab.real.router`, crates/startlab-router) applying a scenario's bottleneck — rate, delay,
drop-tail or RED/ECN queue, impairments — per direction. Data flows from the server namespace
(the sender side, ``s0`` <-> ``r1``) to the client namespace (``c0`` <-> ``r0``).

Only namespaces this module creates are touched; they are named ``sl<pid>-<tag>-client`` (and
``-router``, ``-server``) after the process that made them, so that leftovers of a process that
died (a crash, ``kill -9``) are found and removed — with any process still running inside them —
by the next :func:`cleanup` (``startlab testbed down``) or testbed. Requires root
(``CAP_NET_ADMIN``) and iproute2; ``ethtool`` turns the offloads off where installed (otherwise
GSO is limited to one segment per packet with ``ip link ... gso_max_segs 1``).

The veth MTU is 1600 so that a startlab-udp datagram carrying a 1448-byte segment fits; kernel TCP
is held to the 1500-byte packets of an Ethernet path by ``advmss 1460`` on the routes (1448 bytes
of payload with timestamps).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .system import RealSystemError, alive, run

#: Prefix of every namespace the testbed creates.
PREFIX = "sl"
_NAME = re.compile(rf"^{PREFIX}(\d+)-([a-z0-9]+)-(client|router|server)$")

#: Addresses: the client's side and the server's side of the router.
CLIENT_NET, SERVER_NET = "10.203.1", "10.203.2"
#: The veth MTU and the MSS kernel TCP advertises (1448 bytes of payload with timestamps).
MTU, ADVMSS = 1600, 1460


class TestbedError(RealSystemError):
    """The testbed could not be built or used; the message says which step and why."""


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(*args, check=check, error=TestbedError)


def permitted() -> str | None:
    """None when namespaces can be made here; else why not (for a test's skip message)."""
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is not installed"
    if os.geteuid() != 0:
        return "creating network namespaces needs root (CAP_NET_ADMIN)"
    probe = f"{PREFIX}{os.getpid()}-probe-client"
    made = _run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` is not permitted here: {made.stderr.strip()}"
    _run("ip", "netns", "del", probe, check=False)
    return None


def namespaces() -> list[str]:
    """The testbed namespaces that exist now (of any process)."""
    listed = _run("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in listed.splitlines() if line and _NAME.match(line.split()[0])]


def cleanup(all_processes: bool = False) -> list[str]:
    """Remove testbed namespaces whose process is gone (all of them with ``all_processes``);
    returns the names removed."""
    removed = []
    for name in namespaces():
        match = _NAME.match(name)
        assert match is not None
        pid = int(match.group(1))
        if all_processes or pid == os.getpid() or not alive(pid):
            _kill_inside(name)
            if _run("ip", "netns", "del", name, check=False).returncode == 0:
                removed.append(name)
    return removed


def _kill_inside(namespace: str) -> None:
    """Stop the processes still running in a namespace (a router whose owner died): deleting the
    namespace's name would leave them running in it."""
    pids = _run("ip", "netns", "pids", namespace, check=False).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


@dataclass
class TcpSample:
    """One reading of ``TCP_INFO`` (struct tcp_info of include/uapi/linux/tcp.h)."""

    time: float  # s since the transfer began
    state: int
    cwnd: int  # segments (tcpi_snd_cwnd)
    ssthresh: int  # segments (tcpi_snd_ssthresh)
    rtt: float  # s (tcpi_rtt)
    retransmits: int  # tcpi_total_retrans
    bytes_acked: int


#: Offsets in struct tcp_info (stable since Linux 4.x; bytes_acked since 4.1).
_TCP_INFO_LEN = 232


def tcp_info(sock: socket.socket, since: float) -> TcpSample:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_LEN)
    state = raw[0]
    rtt_us, _rttvar = struct.unpack_from("<II", raw, 68)
    ssthresh, cwnd = struct.unpack_from("<II", raw, 76)
    total_retrans = struct.unpack_from("<I", raw, 100)[0]
    bytes_acked = struct.unpack_from("<Q", raw, 120)[0] if len(raw) >= 128 else 0
    return TcpSample(time.monotonic() - since, state, cwnd, ssthresh, rtt_us / 1e6, total_retrans, bytes_acked)


class Testbed:
    """Three namespaces (client, router, server) and two veth pairs; a context manager that always
    removes them. ``tag`` tells testbeds of one process apart."""

    def __init__(self, tag: str = "tb") -> None:
        if not re.fullmatch(r"[a-z0-9]{1,8}", tag):
            raise ValueError(f"tag = {tag!r}: expected 1 to 8 lower-case letters or digits")
        base = f"{PREFIX}{os.getpid()}-{tag}"
        self.client, self.router, self.server = f"{base}-client", f"{base}-router", f"{base}-server"
        self.client_ip, self.server_ip = f"{CLIENT_NET}.1", f"{SERVER_NET}.1"
        self._up = False
        self._router: subprocess.Popen[str] | None = None

    def __enter__(self) -> Testbed:
        self.up()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.down()

    def exec(self, namespace: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run("ip", "netns", "exec", namespace, *args, check=check)

    def up(self) -> None:
        """Build the namespaces (removing leftovers of dead processes first)."""
        reason = permitted()
        if reason is not None:
            raise TestbedError(f"cannot build the testbed: {reason}")
        cleanup()
        _register(self)
        try:
            for ns in (self.client, self.router, self.server):
                _run("ip", "netns", "add", ns)
                self.exec(ns, "ip", "link", "set", "lo", "up")
                # IPv6 neighbour discovery and router solicitations would be the only other traffic.
                self.exec(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1", check=False)
            _run("ip", "link", "add", "name", "c0", "netns", self.client, "type", "veth", "peer", "name", "r0", "netns", self.router)
            _run("ip", "link", "add", "name", "s0", "netns", self.server, "type", "veth", "peer", "name", "r1", "netns", self.router)
            for ns, dev in ((self.client, "c0"), (self.router, "r0"), (self.router, "r1"), (self.server, "s0")):
                self._wire_sized(ns, dev)
                self.exec(ns, "ip", "link", "set", dev, "mtu", str(MTU), "up")
            self.exec(self.client, "ip", "addr", "add", f"{self.client_ip}/24", "dev", "c0")
            self.exec(self.router, "ip", "addr", "add", f"{CLIENT_NET}.2/24", "dev", "r0")
            self.exec(self.router, "ip", "addr", "add", f"{SERVER_NET}.2/24", "dev", "r1")
            self.exec(self.server, "ip", "addr", "add", f"{self.server_ip}/24", "dev", "s0")
            self.exec(self.client, "ip", "route", "add", "default", "via", f"{CLIENT_NET}.2", "advmss", str(ADVMSS))
            self.exec(self.server, "ip", "route", "add", "default", "via", f"{SERVER_NET}.2", "advmss", str(ADVMSS))
            self.exec(self.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            self._up = True
        except BaseException:
            self.down()
            raise

    def _wire_sized(self, ns: str, dev: str) -> None:
        """Offloads off: every packet the stack hands the link is one wire-sized segment."""
        if shutil.which("ethtool"):
            self.exec(ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off", check=False)
        self.exec(ns, "ip", "link", "set", "dev", dev, "gso_max_segs", "1", check=False)

    def down(self) -> None:
        """Remove this testbed's namespaces (the veth pairs go with them, and the router with
        its namespace); safe to call twice."""
        if self._router is not None:
            self._router.kill()
            self._router.wait()
            self._router = None
        for ns in (self.client, self.router, self.server):
            _kill_inside(ns)
            _run("ip", "netns", "del", ns, check=False)
        self._up = False
        _unregister(self)

    def mac(self, namespace: str, dev: str) -> str:
        return self.exec(namespace, "cat", f"/sys/class/net/{dev}/address").stdout.strip()

    def start_router(self, scenario: str | os.PathLike[str], max_seconds: float | None = None, pcap: str | os.PathLike[str] | None = None) -> None:
        """Replace the kernel's forwarding by the user-space router applying ``scenario``'s
        bottleneck (a dumbbell with one RTT and no cross traffic); returns once it forwards.
        A bad scenario raises :class:`startlab.ScenarioError` naming the key. ``pcap``: a
        directory the router writes ``bottleneck-forward`` and ``bottleneck-reverse`` capture
        files to (every frame it forwards, as it leaves; the scenario's ``[trace.pcap]`` gives
        the format and snap length; docs/PCAP.md); the report's ``capture_file`` names them."""
        if not self._up:
            raise TestbedError("the testbed is not up")
        if shutil.which("ethtool") is None:
            # Measured: without it the veths keep checksum offload, the router forwards TCP
            # segments as captured (checksum not yet filled in) and the receiver drops every one.
            raise TestbedError(
                "the router needs ethtool to turn the veths' offloads off (otherwise every forwarded TCP segment "
                "arrives with an unfinished checksum and is dropped); Debian: apt-get install ethtool"
            )
        if self._router is not None:
            self.stop_router()
        setup = {
            "sender_iface": "r1", "sender_peer_mac": self.mac(self.server, "s0"),
            "receiver_iface": "r0", "receiver_peer_mac": self.mac(self.client, "c0"),
            "local_ips": [f"{CLIENT_NET}.2", f"{SERVER_NET}.2"],
            "stop_on_stdin_eof": True, "max_seconds": max_seconds,
            "pcap_dir": None if pcap is None else os.path.abspath(os.fspath(pcap)),
        }  # fmt: skip
        self.exec(self.router, "sysctl", "-qw", "net.ipv4.ip_forward=0")
        # Real-time priority (util-linux's chrt) keeps the releases on time while the endpoints
        # compete for the same two cores; without chrt the router runs at normal priority.
        priority = ["chrt", "--fifo", "50"] if shutil.which("chrt") else []
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.router, *priority, sys.executable, "-m", "startlab.real.router", "--scenario", os.fspath(scenario), "--setup", json.dumps(setup)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        ready = process.stdout.readline() if process.stdout else ""
        if ready.strip() != "ready":
            process.kill()
            _, err = process.communicate()
            self.exec(self.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            message = err.strip()
            if message.startswith("scenario-error: "):
                from .. import ScenarioError

                raise ScenarioError(message.removeprefix("scenario-error: "))
            raise TestbedError(f"the router did not start: {message.removeprefix('error: ') or ready}")
        self._router = process

    def stop_router(self) -> dict[str, Any]:
        """Stop the router (its input pipe closes) and return its report; the kernel forwards
        again."""
        process, self._router = self._router, None
        if process is None:
            raise TestbedError("no router is running")
        try:
            out, err = process.communicate(input="", timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        self.exec(self.router, "sysctl", "-qw", "net.ipv4.ip_forward=1", check=False)
        if process.returncode != 0 or not out.strip():
            raise TestbedError(f"the router failed (exit {process.returncode}): {err.strip()}")
        report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return report

    def exists(self) -> bool:
        present = set(namespaces())
        return all(ns in present for ns in (self.client, self.router, self.server))

    def transfer(self, size: int, congestion_control: str = "cubic", port: int = 5201, poll: float = 0.005, timeout: float = 60.0) -> dict[str, Any]:
        """Linux TCP from the server namespace to the client: ``size`` bytes with
        ``congestion_control`` (``TCP_CONGESTION``); the sender's ``TCP_INFO`` is read every
        ``poll`` seconds. Returns ``{"bytes", "seconds", "goodput", "samples": [TcpSample...]}``."""
        if not self._up:
            raise TestbedError("the testbed is not up")
        receiver = subprocess.Popen(
            ["ip", "netns", "exec", self.client, sys.executable, "-m", "startlab.real.testbed", "_receive", self.client_ip, str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            ready = receiver.stdout.readline() if receiver.stdout else ""
            if ready.strip() != "ready":
                raise TestbedError(f"the receiver did not start: {ready}{receiver.stderr.read() if receiver.stderr else ''}")
            sender = self.exec(
                self.server, sys.executable, "-m", "startlab.real.testbed", "_send", self.client_ip, str(port), str(size), congestion_control, str(poll),
            )  # fmt: skip
            out, err = receiver.communicate(timeout=timeout)
        except BaseException:
            receiver.kill()
            raise
        if receiver.returncode != 0:
            raise TestbedError(f"the receiver failed: {err.strip()}")
        sent = json.loads(sender.stdout)
        received = json.loads(out)
        return {
            "bytes": received["bytes"], "seconds": received["seconds"],
            "goodput": received["bytes"] * 8 / received["seconds"] if received["seconds"] > 0 else float("nan"),
            "congestion_control": sent["congestion_control"],
            "samples": [TcpSample(**s) for s in sent["samples"]],
        }  # fmt: skip


# Testbeds of this process, removed on exit and on SIGINT/SIGTERM even if the caller forgets.
_LIVE: list[Testbed] = []
_HANDLERS_SET = False


def _register(tb: Testbed) -> None:
    global _HANDLERS_SET
    if tb not in _LIVE:
        _LIVE.append(tb)
    if not _HANDLERS_SET:
        atexit.register(_remove_all)
        for sig in (signal.SIGTERM,):
            previous = signal.getsignal(sig)

            def handler(signum: int, frame: Any, previous: Any = previous) -> None:
                _remove_all()
                if callable(previous):
                    previous(signum, frame)
                else:
                    raise SystemExit(128 + signum)

            signal.signal(sig, handler)
        _HANDLERS_SET = True


def _unregister(tb: Testbed) -> None:
    if tb in _LIVE:
        _LIVE.remove(tb)


def _remove_all() -> None:
    for tb in list(_LIVE):
        tb.down()


def _receive(address: str, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, port))
        listener.listen(1)
        print("ready", flush=True)
        conn, _ = listener.accept()
        with conn:
            began, total = None, 0
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                if began is None:
                    began = time.monotonic()
                total += len(chunk)
            seconds = time.monotonic() - began if began is not None else 0.0
    print(json.dumps({"bytes": total, "seconds": seconds}), flush=True)


def _send(address: str, port: int, size: int, congestion_control: str, poll: float) -> None:
    samples = []
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion_control.encode())
        s.connect((address, port))
        s.setblocking(False)
        began = time.monotonic()
        payload = memoryview(bytes(1 << 16))
        left, next_poll = size, began
        while left > 0:
            now = time.monotonic()
            if now >= next_poll:
                samples.append(tcp_info(s, began).__dict__)
                next_poll = now + poll
            try:
                left -= s.send(payload[: min(left, len(payload))])
            except BlockingIOError:
                time.sleep(min(poll, 0.001))
        s.setblocking(True)
        s.shutdown(socket.SHUT_WR)
        while True:
            samples.append(tcp_info(s, began).__dict__)
            if samples[-1]["bytes_acked"] >= size or time.monotonic() - began > 60:
                break
            time.sleep(poll)
        used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
    print(json.dumps({"congestion_control": used, "samples": samples}), flush=True)


def _hold(scenario: str, tag: str, pcap: str | None = None) -> None:
    """``startlab testbed up``: keep a testbed with its router up until SIGTERM/SIGINT (``startlab
    testbed down``), then take it down. The first line printed is the namespaces as JSON, or
    ``error: ...``."""
    tb = Testbed(tag)
    try:
        tb.up()
        tb.start_router(scenario, pcap=pcap)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which prints it
        tb.down()
        print(f"error: {e}", flush=True)
        return
    stop = False

    def request_stop(signum: int, frame: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    print(json.dumps({"client": tb.client, "router": tb.router, "server": tb.server, "client_ip": tb.client_ip, "server_ip": tb.server_ip}), flush=True)
    while not stop and tb._router is not None and tb._router.poll() is None:
        time.sleep(0.2)
    if tb._router is not None:
        # A stop by its input's end lets the router close its capture files.
        try:
            tb.stop_router()
        except TestbedError:
            pass
    tb.down()


def held() -> list[int]:
    """Processes holding a testbed up (``startlab testbed up``)."""
    pids = []
    for ns in namespaces():
        match = _NAME.match(ns)
        assert match is not None
        pid = int(match.group(1))
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"startlab.real.testbed" in cmdline and b"_hold" in cmdline and pid not in pids:
            pids.append(pid)
    return pids


def release(timeout: float = 10.0) -> list[int]:
    """Stop every ``startlab testbed up`` holder (SIGTERM) and wait for its namespaces to go."""
    pids = held()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    if command == "_hold":
        _hold(rest[0], rest[1], rest[2] if len(rest) > 2 else None)
    elif command == "_receive":
        _receive(rest[0], int(rest[1]))
    elif command == "_send":
        _send(rest[0], int(rest[1]), int(rest[2]), rest[3], float(rest[4]))
    else:
        raise SystemExit(f"unknown command {command!r}")
