"""Careful Resume (RFC 9959): the figures docs/algorithms/careful-resume.md quotes.

    python bench/careful_resume.py

One 5 MB transfer over 20 Mbit/s, 100 ms, an ACK per segment, MSS 1448 (a payload capacity of
19.46 Mbit/s, a BDP of 169 segments), against slow start: a saved rate five times the path's
(100-packet buffer, Safe Retreat), and the path's own rate (200-packet buffer, a validated jump);
then a ``[[users]]`` user with three 2 MB transfers 1 s apart, nothing saved at first (the scenarios
of crates/startlab-sim/tests/algorithms_careful_resume.rs).
"""

from __future__ import annotations

from typing import Any

import startlab

TOPOLOGY = {"kind": "dumbbell", "bottleneck_rate": "20Mbps", "rtt": "100ms", "access_rate": "10Gbps"}
TCP = {"mss": "1448B", "ack": "every-packet"}


def one(queue: str, startup: dict[str, Any]) -> dict[str, Any]:
    return {
        "seed": 1,
        "duration": "20s",
        "topology": {**TOPOLOGY, "queue": {"kind": "droptail", "limit": queue}},
        "flows": [{"name": "f", "size": "5MB", "tcp": TCP, "startup": startup}],
    }


def users(startup: dict[str, Any]) -> dict[str, Any]:
    return {
        "seed": 3,
        "duration": "30s",
        "topology": {**TOPOLOGY, "access_rate": "1Gbps", "queue": {"kind": "droptail", "limit": "100pkt"}},
        "users": [{
            "name": "u", "count": 1, "connection": "new", "transfers": 3,
            "size": {"dist": "fixed", "value": "2MB"}, "think": {"dist": "fixed", "value": "1s"},
            "tcp": {"ack": "every-packet"}, "startup": startup,
        }],
    }


def main() -> None:
    cr = {"algorithm": "careful-resume", "saved_rtt": "100ms"}
    print("one 5 MB transfer           path                                                       jump (seg)  "
          "t90 (s)  done (s)  drops  retreat cwnd (seg)  exit ssthresh (seg)  retained (Mbit/s)")
    for label, queue, startup in [
        ("saved 100 Mbit/s, 100 pkt", "100pkt", {**cr, "saved_rate": "100Mbps"}),
        ("slow start, 100 pkt", "100pkt", {"algorithm": "slow-start"}),
        ("saved 20 Mbit/s, 200 pkt", "200pkt", {**cr, "saved_rate": "20Mbps"}),
        ("slow start, 200 pkt", "200pkt", {"algorithm": "slow-start"}),
    ]:
        f = startlab.run(one(queue, startup), progress=False).flows.iloc[0]

        def get(key: str, scale: float = 1.0) -> str:
            v = f.get(key)
            return "-" if v is None or v != v else f"{v / scale:.1f}"

        print(f"{label:27s} {str(f.get('cr_path', '-')):58s} {get('cr_jump_cwnd', 1448):>10s}  {f.time_to_90:7.3f}  "
              f"{f.completion_time:8.3f}  {f.drops:5d}  {get('cr_retreat_cwnd', 1448):>18s}  {get('cr_exit_ssthresh', 1448):>19s}  "
              f"{get('cr_retained_rate', 1e6):>17s}")
    print("\na user's 2 MB transfers     transfer  t90 (s)  done (s)  drops")
    for label, startup in [("careful-resume", {"algorithm": "careful-resume"}), ("slow-start", {"algorithm": "slow-start"})]:
        for t in startlab.run(users(startup), progress=False).transfers.itertuples():
            print(f"{label:27s} {t.transfer:8d}  {t.time_to_90:7.3f}  {t.completion_time:8.3f}  {t.drops:5d}")


if __name__ == "__main__":
    main()
