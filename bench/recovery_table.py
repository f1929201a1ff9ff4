"""Every loss recovery after a slow-start overshoot (docs/algorithms/recovery.md), one Markdown
table per path and avoidance: one slow-start flow (IW 10, MSS 1448, a handshake, per-packet ACKs)

- ``paced-start``: the Paced Start paper's path, 100 Mbit/s, 80 ms, a 1000-packet drop-tail buffer
  and 40 Mbit/s of CBR (1000-byte packets), access links 1 Gbit/s;
- ``1g-bdp``: 1 Gbit/s, 100 ms, a one-BDP buffer (8 333 packets of 1500 B: 52-byte headers),
  access links 10 Gbit/s, no cross traffic.

Columns: the flow's drops, retransmission timeouts, recovery episodes, retransmissions lost, time
in recovery, goodput; all from ``startlab.run``.

    python bench/recovery_table.py [--duration SECONDS] [--path paced-start|1g-bdp] [--avoidance reno|cubic]
"""

from __future__ import annotations

import argparse
from typing import Any

import startlab

RECOVERIES: list[tuple[str, dict[str, str]]] = [
    ("sack", {}), ("prr", {}), ("prr", {"prr_bound": "crb"}), ("prr", {"prr_bound": "safe-ack"}), ("rack-tlp", {}),
    ("linux", {}), ("sack1", {}), ("ns3-prr", {}), ("newreno", {}), ("reno", {}), ("tahoe", {}),
]  # fmt: skip
#: name -> (bottleneck, RTT, buffer, access, header, CBR cross traffic or None)
PATHS: dict[str, tuple[str, str, str, str, str, str | None]] = {
    "paced-start": ("100Mbps", "80ms", "1000pkt", "1Gbps", "40B", "40Mbps"),
    "1g-bdp": ("1Gbps", "100ms", "8333pkt", "10Gbps", "52B", None),
}


def scenario(recovery: str, extra: dict[str, str], duration: float, avoidance: str = "cubic", path: str = "paced-start") -> dict[str, Any]:
    """The scenario of one row."""
    rate, rtt, buffer, access, header, cross = PATHS[path]
    tcp = {"recovery": recovery, "mss": "1448B", "header": header, "initial_window": 10, "ack": "every-packet", "handshake": True, "congestion_avoidance": avoidance, **extra}
    s: dict[str, Any] = {
        "seed": 1,
        "duration": f"{duration}s",
        "topology": {"kind": "dumbbell", "bottleneck_rate": rate, "rtt": rtt, "access_rate": access, "queue": {"kind": "droptail", "limit": buffer}},
        "flows": [{"name": "f", "tcp": tcp, "startup": {"algorithm": "slow-start"}, "size": "infinite"}],
    }
    if cross is not None:
        s["cross"] = [{"kind": "cbr", "rate": cross, "packet_size": "1000B"}]
    return s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    parser.add_argument("--path", choices=sorted(PATHS), action="append", help="a path (default: both)")
    parser.add_argument("--avoidance", choices=["reno", "cubic"], action="append", help="the avoidance (default: both)")
    args = parser.parse_args()
    for path in args.path or list(PATHS):
        for avoidance in args.avoidance or ["cubic", "reno"]:
            print(f"\n`{path}`, {avoidance}, {args.duration:g} s:\n")
            print("| recovery | drops | timeouts | episodes | retransmissions lost | time in recovery (s) | goodput (Mbit/s) |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for recovery, extra in RECOVERIES:
                f = startlab.run(scenario(recovery, extra, args.duration, avoidance, path), progress=False).flows.iloc[0]
                name = recovery + "".join(f", {k} = {v}" for k, v in extra.items())
                print(
                    f"| `{name}` | {f.drops} | {f.timeouts} | {f.recovery_episodes} | {f.retransmissions_lost} "
                    f"| {f.recovery_time:.2f} | {f.goodput / 1e6:.1f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
