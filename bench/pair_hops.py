"""Where a real path squeezes Paced Start's packet pair (docs/REAL.md, issue 15): one startlab-udp
transfer through the testbed while every interface of it is captured with the kernel's receive
and transmit stamps, then the first data packets and their ACKs timed at each hop.

PaSt's window comes from the ACK gap of its first pair (`past_g_b`); the bottleneck spaces the pair
by one packet's serialization, and the simulator measures exactly that. This shows, hop by hop,
how far the real hosts move it. Needs root (the testbed).

    python bench/pair_hops.py [--path 100] [--runs 3] [--startup paced-start]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
#: (label, namespace role, interface, outgoing?) along the data path, then along the ACK path.
DATA_HOPS = [("sender out (s0)", "server", "s0", True), ("router in (r1)", "router", "r1", False), ("router out (r0)", "router", "r0", True), ("receiver in (c0)", "client", "c0", False)]
ACK_HOPS = [("receiver out (c0)", "client", "c0", True), ("router in (r0)", "router", "r0", False), ("router out (r1)", "router", "r1", True), ("sender in (s0)", "server", "s0", False)]


def capture() -> None:
    """Inside a namespace: every UDP frame's interface, direction, kernel stamp and IP length,
    until standard input closes; JSON on standard output."""
    import threading

    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.settimeout(0.1)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    frames: list[tuple[str, bool, int, int]] = []
    print("ready", flush=True)
    while not done.is_set() and len(frames) < 20000:
        try:
            data, anc, _, addr = sock.recvmsg(64, 256)
        except TimeoutError:
            continue
        if len(data) < 34 or data[12:14] != b"\x08\x00" or data[23] != 17:
            continue
        stamps = [a[2] for a in anc if a[1] == SO_TIMESTAMPNS]
        if not stamps:
            continue
        sec, nsec = struct.unpack("qq", stamps[0][:16])
        frames.append((addr[0], addr[2] == PACKET_OUTGOING, sec * 1_000_000_000 + nsec, struct.unpack("!H", data[16:18])[0]))
    print(json.dumps(frames))


def one_run(scenario: Path, startup: str) -> dict:
    from startlab.real import side_by_side, udp
    from startlab.real.testbed import Testbed

    with tempfile.TemporaryDirectory() as work:
        path, _ = side_by_side.prepare(scenario, Path(work), startup, None, None)
        with Testbed("hops") as tb:
            names = {"client": tb.client, "router": tb.router, "server": tb.server}
            caps = {
                role: subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, __file__, "_capture"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                for role, ns in names.items()
            }  # fmt: skip
            try:
                for p in caps.values():
                    assert p.stdout is not None
                    if p.stdout.readline().strip() != "ready":
                        raise SystemExit("a capture did not start")
                tb.start_router(path)
                try:
                    run = udp.testbed_transfer(tb, path, duration=1.0)
                finally:
                    report = tb.stop_router()
                frames = {role: json.loads(p.communicate(input="", timeout=30)[0]) for role, p in caps.items()}
            finally:
                for p in caps.values():
                    if p.poll() is None:
                        p.kill()
    send = run["sender"]
    return {"frames": frames, "details": send.get("startup_details") or {}, "exit": send.get("startup_exit") or {}, "router": report}


def pair_times(frames: dict, hops: list, data: bool, n: int, after: int | None) -> list[list[int]]:
    """The first ``n`` data frames (or ACK-sized frames sent after ``after``) at each hop."""
    out = []
    for _, role, iface, outgoing in hops:
        ts = sorted(t for (i, o, t, size) in frames[role] if i == iface and o == outgoing and (size > 1000) == data and (after is None or t > after))
        out.append(ts[:n])
    return out


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_capture":
        capture()
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", default="100", choices=["20", "100"], help="Which example path (Mbit/s).")
    parser.add_argument("--runs", type=int, default=3, help="Transfers to time (each on a fresh testbed).")
    parser.add_argument("--startup", default="paced-start", help="The flow's startup (its first two data packets are the pair).")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    from startlab.real.testbed import permitted

    reason = permitted()
    if reason is not None:
        print(f"pair_hops needs the testbed, which cannot run here: {reason}", file=sys.stderr)
        return 2
    scenario = ROOT / "examples" / "real" / f"path-{args.path}mbps.toml"
    rate = float(args.path) * 1e6
    size = 0
    gaps: dict[str, list[float]] = {}
    for k in range(args.runs):
        r = one_run(scenario, args.startup)
        data = pair_times(r["frames"], DATA_HOPS, True, 2, None)
        size = max((f[3] for f in r["frames"]["router"] if f[3] > 1000), default=size)
        # The pair's ACKs: the first two ACK-sized datagrams the receiver sends after the pair.
        acks = pair_times(r["frames"], ACK_HOPS, False, 2, data[3][0] if len(data[3]) else None)
        print(f"run {k + 1}: past_g_b {r['details'].get('past_g_b', float('nan')) * 1e6:.1f} µs, exit cwnd {r['exit'].get('cwnd_pkts')}, "
              f"router lateness mean fwd {r['router']['forward']['lateness_mean_s'] * 1e6:.1f} µs rev {r['router']['reverse']['lateness_mean_s'] * 1e6:.1f} µs")  # fmt: skip
        for (label, *_), ts in zip(DATA_HOPS + ACK_HOPS, data + acks):
            if len(ts) == 2:
                gaps.setdefault(label, []).append((ts[1] - ts[0]) / 1e3)
        if len(data[3]) == 2 and all(len(a) == 2 for a in acks):
            # What startlab-udp's sender measures: its ACK arrival stamps less the time the
            # receiver held each ACK (carried in the ACK), i.e. less the change in that hold.
            hold = [(acks[0][i] - data[3][i]) / 1e3 for i in range(2)]
            for (label, *_), ts in zip(ACK_HOPS[1:], acks[1:]):
                gaps.setdefault(f"{label}, less the receiver's hold", []).append((ts[1] - ts[0]) / 1e3 - (hold[1] - hold[0]))
        time.sleep(0.5)
    print(
        f"\nPacket-pair gap at each hop, µs ({args.path} Mbit/s): the bottleneck spaces these {size}-byte datagrams {size * 8 / rate * 1e6:.0f} µs apart "
        f"(the simulator's 1500-byte packets {1500 * 8 / rate * 1e6:.0f} µs, and its ACKs keep that gap)\n"
    )
    print("| hop | " + " | ".join(f"run {k + 1}" for k in range(args.runs)) + " | median |")
    print("|---|" + "---|" * (args.runs + 1))
    for label in gaps:
        g = gaps[label]
        print(f"| {label} | " + " | ".join(f"{x:.1f}" for x in g) + f" | {statistics.median(g):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
