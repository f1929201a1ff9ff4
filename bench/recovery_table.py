"""Every loss recovery on the Paced Start paper's path (docs/algorithms/recovery.md): one CUBIC
flow after plain slow start (IW 10, MSS 1448, a handshake) on 100 Mbit/s, 80 ms, a 1000-packet
drop-tail buffer and 40 Mbit/s of CBR; prints one Markdown row per recovery.

    python bench/recovery_table.py [--duration SECONDS]
"""

from __future__ import annotations

import argparse

import startlab

RECOVERIES = [("sack", {}), ("prr", {}), ("prr", {"prr_bound": "crb"}), ("prr", {"prr_bound": "safe-ack"}), ("rack-tlp", {}), ("linux", {}), ("sack1", {}), ("ns3-prr", {}), ("newreno", {})]


def scenario(recovery: str, extra: dict, duration: float) -> dict:
    tcp = {"recovery": recovery, "mss": "1448B", "initial_window": 10, "ack": "every-packet", "handshake": True, "congestion_avoidance": "cubic", **extra}
    return {
        "seed": 1,
        "duration": f"{duration}s",
        "topology": {"kind": "dumbbell", "bottleneck_rate": "100Mbps", "rtt": "80ms", "access_rate": "1Gbps", "queue": {"kind": "droptail", "limit": "1000pkt"}},
        "flows": [{"name": "f", "tcp": tcp, "startup": {"algorithm": "slow-start"}, "size": "infinite"}],
        "cross": [{"kind": "cbr", "rate": "40Mbps", "packet_size": "1000B"}],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    args = parser.parse_args()
    for recovery, extra in RECOVERIES:
        f = startlab.run(scenario(recovery, extra, args.duration), progress=False).flows.iloc[0]
        name = recovery + "".join(f", {k} = {v}" for k, v in extra.items())
        print(
            f"| `{name}` | {f.drops} | {f.timeouts} | {f.recovery_episodes} | {f.retransmissions_lost} "
            f"| {f.recovery_time:.2f} | {f.goodput / 1e6:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
