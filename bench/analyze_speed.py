"""How fast ``startlab analyze`` reads a large capture (issue 37, item 5: 1 GB in under a minute,
streamed, bounded memory): writes a synthetic pcap of at least ``--size`` bytes — one long TCP
transfer captured at its sender, full 1448-byte payloads with timestamps, a window of 200 segments
on a 20 ms path, one loss every 20 000 segments (three duplicate ACKs, a fast retransmission) — then
analyses it in a child process and reports the wall time and the child's peak resident memory.

    python bench/analyze_speed.py [--size 1GB] [--out FILE] [--keep]

The figures go into docs/ANALYZE.md and docs/PERFORMANCE.md. Not a test: nothing here is timed in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MSS = 1448
WINDOW = 200
RTT_NS = 20_000_000
#: One data packet every 30 µs: 1514-byte frames at about 400 Mbit/s.
GAP_NS = 30_000
LOSS_EVERY = 20_000

SENDER = bytes([10, 0, 0, 1])
RECEIVER = bytes([10, 0, 0, 2])
SPORT, DPORT = 5201, 40000


def _ip_tcp(src: bytes, dst: bytes, sport: int, dport: int, seq: int, ack: int, flags: int, payload: int, tsval: int, tsecr: int,
            sack: tuple[int, int] | None = None) -> bytes:  # fmt: skip
    options = struct.pack("!BBBBII", 1, 1, 8, 10, tsval & 0xFFFFFFFF, tsecr & 0xFFFFFFFF)
    if sack is not None:
        options += struct.pack("!BBBBII", 1, 1, 5, 10, sack[0] & 0xFFFFFFFF, sack[1] & 0xFFFFFFFF)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, (20 + len(options)) // 4 << 4, flags, 65535, 0, 0) + options
    total = 20 + len(tcp) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0, src, dst)
    return b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + tcp


def write_capture(path: Path, size: int) -> tuple[int, int]:
    """Writes the synthetic transfer until the file holds ``size`` bytes; (packets, bytes)."""
    zeros = bytes(MSS)
    packets = 0
    with path.open("wb", buffering=8 << 20) as out:
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))  # nanosecond pcap, Ethernet
        written = 24

        def put(t: int, frame: bytes, payload: int) -> None:
            nonlocal written, packets
            out.write(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(frame) + payload, len(frame) + payload))
            out.write(frame)
            if payload:
                out.write(zeros[:payload])
            written += 16 + len(frame) + payload
            packets += 1

        t = 1_700_000_000 * 1_000_000_000
        isn, rsn = 1_000, 7_000
        put(t, _ip_tcp(RECEIVER, SENDER, DPORT, SPORT, rsn, 0, 0x02, 0, 1, 0), 0)
        put(t + 10_000, _ip_tcp(SENDER, RECEIVER, SPORT, DPORT, isn, rsn + 1, 0x12, 0, 1, 1), 0)
        t += RTT_NS
        put(t, _ip_tcp(RECEIVER, SENDER, DPORT, SPORT, rsn + 1, isn + 1, 0x10, 0, 2, 1), 0)
        seq0 = isn + 1
        sent = 0  # segments sent (new data)
        acked = 0
        pending: list[tuple[int, int]] = []  # (time the ACK reaches the sender, segments acked)
        lost: int | None = None
        while written < size:
            # The sender keeps WINDOW segments in flight; each ACK releases the next segment.
            while sent - acked < WINDOW:
                t += GAP_NS
                ms = t // 1_000_000
                put(t, _ip_tcp(SENDER, RECEIVER, SPORT, DPORT, seq0 + sent * MSS, rsn + 1, 0x10, MSS, ms, ms), MSS)
                if sent % LOSS_EVERY == LOSS_EVERY - 1 and lost is None:
                    lost = sent
                else:
                    pending.append((t + RTT_NS, sent + 1))
                sent += 1
            when, upto = pending.pop(0)
            t = max(t, when)
            ms = t // 1_000_000
            if lost is not None and upto > lost:
                # Three duplicate ACKs with SACK, then the retransmission and its ACK.
                for k in range(3):
                    put(t + k * 1000, _ip_tcp(RECEIVER, SENDER, DPORT, SPORT, rsn + 1, seq0 + lost * MSS, 0x10, 0, ms, ms,
                                              (seq0 + (lost + 1) * MSS, seq0 + (lost + 2 + k) * MSS)), 0)  # fmt: skip
                t += 5_000
                put(t, _ip_tcp(SENDER, RECEIVER, SPORT, DPORT, seq0 + lost * MSS, rsn + 1, 0x10, MSS, ms, ms), MSS)
                pending.insert(0, (t + RTT_NS, upto))
                lost = None
                continue
            put(t, _ip_tcp(RECEIVER, SENDER, DPORT, SPORT, rsn + 1, seq0 + upto * MSS, 0x10, 0, ms, ms), 0)
            acked = upto
    return packets, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1GB", help="capture size (e.g. 1GB, 200MB)")
    parser.add_argument("--out", help="where to write the capture (default: a file in the system's temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the capture afterwards")
    args = parser.parse_args()
    units = {"GB": 10**9, "MB": 10**6}
    size = int(float(args.size[:-2]) * units[args.size[-2:].upper()])
    path = Path(args.out) if args.out else Path(tempfile.gettempdir()) / "analyze-speed.pcap"
    t = time.monotonic()
    packets, written = write_capture(path, size)
    made = time.monotonic() - t
    child = ("import json, sys, startlab.analyze as a; r = a.analyze(sys.argv[1]); "
             "print(json.dumps({'flows': len(r.flows), 'packets': r.capture['packets'], 'exit': r.flows.iloc[0]['exit_reason'], "
             "'retransmissions': int(r.flows.iloc[0]['retransmissions'])}))")  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.monotonic()
    out = subprocess.run([sys.executable, "-c", child, str(path)], check=True, capture_output=True, text=True, env=os.environ)
    seconds = time.monotonic() - t
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = json.loads(out.stdout)
    print(json.dumps({
        "capture_bytes": written, "packets": packets, "write_s": round(made, 1), "analyze_s": round(seconds, 2),
        "mb_per_s": round(written / 1e6 / seconds, 1), "peak_rss_mib": round(max(rss, before) / 1024, 1), "found": result,
    }, indent=1))  # fmt: skip
    if not args.keep:
        path.unlink()


if __name__ == "__main__":
    main()
