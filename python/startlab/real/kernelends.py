"""The two ends of a kernel TCP run (:mod:`startlab.real.kerneltcp`), each run inside its
namespace as ``python -m startlab.real.kernelends _send|_receive CONFIG``: the sender sets the
congestion control, reports its ports and socket cookie, waits for "go", sends and polls
``TCP_INFO``; the receiver reads and reports its byte timeline. Both print one JSON report."""

from __future__ import annotations

import json
import math
import select
import socket
import struct
import sys
import time
from typing import Any

from .system import SO_COOKIE, TCP_CC_INFO, TCP_NOTSENT_LOWAT

#: Unsent bytes the sender keeps queued in a duration-limited run, so that it stops writing close
#: to the deadline (320 ms at 100 Mbit/s: never the reason the sender waits).
_NOTSENT_LOWAT = 4 << 20



def _info(sock: socket.socket, bbr: bool) -> dict[str, Any]:
    """One TCP_INFO reading (struct tcp_info, include/uapi/linux/tcp.h) and, for BBR, its pacing
    gain (TCP_CC_INFO: struct tcp_bbr_info)."""
    now = time.monotonic()
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    gain = None
    if bbr:
        cc = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 20)
        if len(cc) >= 20:
            gain = struct.unpack_from("<5I", cc)[3]
    return {
        "t": now, "ca_state": raw[1], "mss": struct.unpack_from("<I", raw, 16)[0], "rtt_us": struct.unpack_from("<I", raw, 68)[0],
        "ssthresh": struct.unpack_from("<I", raw, 76)[0], "cwnd": struct.unpack_from("<I", raw, 80)[0],
        "total_retrans": struct.unpack_from("<I", raw, 100)[0], "bytes_acked": struct.unpack_from("<Q", raw, 120)[0],
        "segs_in": struct.unpack_from("<I", raw, 140)[0],
        "snd_wnd": struct.unpack_from("<I", raw, 228)[0] if len(raw) >= 232 else None, "pacing_gain": gain,
    }  # fmt: skip


def _send(config: dict[str, Any]) -> None:
    size, duration, poll, bbr = config["size"], config["duration"], float(config["poll"]), bool(config["bbr"])
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, config["congestion_control"].encode())
    except OSError as e:
        raise SystemExit(f"TCP_CONGESTION = {config['congestion_control']} refused: {e}") from None
    if config["maxseg"]:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, int(config["maxseg"]))
    if duration is not None:
        s.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, _NOTSENT_LOWAT)
    s.bind((config["source"], 0))
    cookie = struct.unpack("<Q", s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8))[0]
    print(json.dumps({"sport": s.getsockname()[1], "cookie": cookie}), flush=True)
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("no go from the parent")
    deadline = time.monotonic() + float(config["timeout"])
    s.settimeout(float(config["timeout"]))
    t_connect = time.monotonic()
    s.connect((config["address"], int(config["port"])))
    t_connected = time.monotonic()
    info = [_info(s, bbr)]
    s.setblocking(False)
    chunk = memoryview(bytes(1 << 18))
    sent, t_first, end = 0, None, None
    next_poll = time.monotonic() + poll
    while size is None or sent < size:
        now = time.monotonic()
        if (end is not None and now >= end) or now > deadline:
            break
        if now >= next_poll:
            info.append(_info(s, bbr))
            next_poll = now + poll
        want = len(chunk) if size is None else min(len(chunk), size - sent)
        before = time.monotonic()
        try:
            sent += s.send(chunk[:want])
        except BlockingIOError:
            wake = next_poll if end is None else min(next_poll, end)
            select.select([], [s], [], max(0.0, wake - time.monotonic()))
            continue
        if t_first is None:
            t_first = before
            end = t_first + duration if duration is not None else None
    t_last = time.monotonic()
    # The FIN waits until every byte is acknowledged: once it is sent the socket leaves the
    # established state and tcp_probe (in tcp_rcv_established) no longer fires for its ACKs.
    while info[-1]["bytes_acked"] < sent and time.monotonic() < deadline:
        time.sleep(poll)
        info.append(_info(s, bbr))
    established_segs_in = info[-1]["segs_in"]
    s.shutdown(socket.SHUT_WR)
    while time.monotonic() < deadline:  # until the receiver, having read everything, closes
        ready, _, _ = select.select([s], [], [], poll)
        info.append(_info(s, bbr))
        if ready:
            try:
                if not s.recv(1 << 12):
                    break
            except BlockingIOError:
                continue
    else:
        raise SystemExit(f"the receiver did not close within {config['timeout']} s")
    used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
    s.close()
    out = {
        "congestion_control": used, "t_connect": t_connect, "t_connected": t_connected, "t_first": t_first, "t_last_send": t_last,
        "sent": sent, "mss": info[-1]["mss"], "segs_in": established_segs_in, "info": info,
    }  # fmt: skip
    print(json.dumps(out), flush=True)


def _receive(config: dict[str, Any]) -> None:
    timeout = float(config["timeout"])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((config["address"], int(config["port"])))
        except OSError as e:
            raise SystemExit(f"cannot listen on {config['address']}:{config['port']}: {e}") from None
        listener.listen(1)
        listener.settimeout(timeout)
        print("ready", flush=True)
        conn, _ = listener.accept()
    buffer = bytearray(1 << 20)
    timeline: list[tuple[float, int]] = []
    total, last_point, last_byte = 0, -math.inf, math.nan
    with conn:
        conn.settimeout(timeout)
        while True:
            n = conn.recv_into(buffer)
            now = time.monotonic()
            if n == 0:
                break
            total, last_byte = total + n, now
            if now - last_point >= 0.001:
                timeline.append((now, total))
                last_point = now
    if total and timeline[-1][1] != total:
        timeline.append((last_byte, total))
    print(json.dumps({"bytes": total, "timeline": timeline}), flush=True)


if __name__ == "__main__":
    role, argument = sys.argv[1], json.loads(sys.argv[2])
    if role == "_send":
        _send(argument)
    elif role == "_receive":
        _receive(argument)
    else:
        raise SystemExit(f"unknown role {role!r}")
