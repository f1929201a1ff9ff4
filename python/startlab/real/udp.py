"""startlab-udp from Python: the simulator's own sans-IO TCP endpoints over UDP with the real
clock (crates/startlab-udp, docs/REAL.md).

- :func:`serve` binds a UDP address, serves one connection (the data receiver: it ACKs with the
  receiver the sender's scenario describes) and returns its report;
- :func:`send` sends a scenario's flow to a server and returns the sender's report (per-ACK cwnd
  samples, startup exit, pacing gap error, datagrams dropped by reason, ...);
- :func:`testbed_transfer` runs both in the testbed's namespaces (sender in the server
  namespace, receiver in the client namespace).

Both ends share a 32-byte key (64 hex digits, :func:`key`): every datagram carries a keyed MAC, and
datagrams that are malformed, truncated, replayed, spoofed or for another connection are dropped
and counted, never fatal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from .. import _core, read_scenario


def key() -> str:
    """A fresh random key (64 hex digits)."""
    return str(_core.udp_key())


def send(
    scenario: str | os.PathLike[str], server: str, key: str, *, flow: int = 0, duration: float | None = None, spin_us: int = 50, connect_timeout: float = 10.0
) -> dict[str, Any]:
    """Send ``scenario``'s ``[[flows]]`` entry ``flow`` to ``server`` (``HOST:PORT``) until its
    size is acknowledged or ``duration`` seconds (default: the scenario's ``duration``) pass.
    Raises :class:`startlab.ScenarioError` for a bad scenario, ``ValueError`` for a bad key and
    ``OSError`` for a network failure, each naming what was wrong."""
    if flow < 0:
        raise ValueError(f"flow = {flow}: expected the index of a [[flows]] entry, from 0")
    text, fmt, base = read_scenario(scenario)
    report: dict[str, Any] = json.loads(_core.udp_send(text, fmt, base, flow, server, key, duration, spin_us, connect_timeout))
    return report


def serve(bind: str, key: str, *, idle_timeout: float = 5.0, accept_timeout: float | None = None) -> dict[str, Any]:
    """Bind ``bind`` (``HOST:PORT``; port 0 picks one, printed as ``ready HOST:PORT``), receive one
    connection until the sender closes it or ``idle_timeout`` seconds pass without a datagram, and
    return the receiver's report."""
    report: dict[str, Any] = json.loads(_core.udp_serve(bind, key, idle_timeout, accept_timeout))
    return report


def testbed_transfer(tb: Any, scenario: str | os.PathLike[str], *, duration: float | None = None, port: int = 5301, flow: int = 0) -> dict[str, Any]:
    """One startlab-udp transfer across a :class:`startlab.real.testbed.Testbed`: ``{"sender": ...,
    "receiver": ...}`` reports."""
    secret = key()
    bind = f"{tb.client_ip}:{port}"
    receiver = subprocess.Popen(
        ["ip", "netns", "exec", tb.client, sys.executable, "-m", "startlab.real.udp", "_serve", bind, "--accept-timeout", "30"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert receiver.stdin is not None and receiver.stdout is not None
        receiver.stdin.write(secret + "\n")
        receiver.stdin.close()
        ready = receiver.stdout.readline()
        if not ready.startswith("ready "):
            raise OSError(f"the startlab-udp receiver did not start: {ready}{receiver.stderr.read() if receiver.stderr else ''}".strip())
        args = [sys.executable, "-m", "startlab.real.udp", "_send", os.fspath(scenario), bind, "--flow", str(flow)]
        if duration is not None:
            args += ["--duration", repr(duration)]
        sender = subprocess.run(["ip", "netns", "exec", tb.server, *args], input=secret + "\n", capture_output=True, text=True)
        if sender.returncode != 0:
            raise OSError(f"the startlab-udp sender failed: {sender.stderr.strip()}")
        # The receiver ends on the sender's CLOSE (or its idle timeout): read until it exits.
        out = receiver.stdout.read()
        err = receiver.stderr.read() if receiver.stderr else ""
        receiver.wait(timeout=60)
    except BaseException:
        receiver.kill()
        receiver.wait()
        raise
    finally:
        for pipe in (receiver.stdout, receiver.stderr):
            if pipe is not None:
                pipe.close()
    if receiver.returncode != 0:
        raise OSError(f"the startlab-udp receiver failed: {err.strip()}")
    return {"sender": json.loads(sender.stdout), "receiver": json.loads(out)}


def _main(argv: list[str]) -> int:
    """``python -m startlab.real.udp _serve BIND`` / ``_send SCENARIO SERVER``: the key on stdin (never
    on the command line, where other users could read it); the report as JSON on stdout."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m startlab.real.udp")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("_serve")
    s.add_argument("bind")
    s.add_argument("--accept-timeout", type=float)
    s.add_argument("--idle-timeout", type=float, default=5.0)
    c = sub.add_parser("_send")
    c.add_argument("scenario")
    c.add_argument("server")
    c.add_argument("--flow", type=int, default=0)
    c.add_argument("--duration", type=float)
    args = parser.parse_args(argv)
    secret = sys.stdin.readline().strip()
    try:
        if args.command == "_serve":
            report = serve(args.bind, secret, idle_timeout=args.idle_timeout, accept_timeout=args.accept_timeout)
        else:
            report = send(args.scenario, args.server, secret, flow=args.flow, duration=args.duration)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 2
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
