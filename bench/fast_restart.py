"""Per-response fast startups (tcp.startup_after_idle): the response times docs/algorithms/ and
docs/SCENARIOS.md quote.

    python bench/fast_restart.py

Five 200 KB responses 3 s apart over one persistent connection, 10 Mbit/s, 200 ms, a 50-packet
drop-tail buffer, IW 3, a handshake, the default receiver; each startup with and without
``startup_after_idle`` (the scenario of tests/test_fast_startup_restart.py).
"""

from __future__ import annotations

from typing import Any

import startlab

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("slow-start", {"algorithm": "slow-start"}, {}),
    ("initial-start (IW 30)", {"algorithm": "initial-start", "initial_window": "30pkt"}, {}),
    ("jump-start", {"algorithm": "jump-start"}, {}),
    ("jump-start, after idle", {"algorithm": "jump-start"}, {"startup_after_idle": True}),
    ("quick-start 10 Mb/s", {"algorithm": "quick-start", "rate": "10Mbps"}, {}),
    ("quick-start 10 Mb/s, after idle", {"algorithm": "quick-start", "rate": "10Mbps"}, {"startup_after_idle": True}),
    ("more-start 10 Mb/s", {"algorithm": "more-start", "rate": 10e6}, {}),
    ("more-start 10 Mb/s, after idle", {"algorithm": "more-start", "rate": 10e6}, {"startup_after_idle": True}),
]


def scenario(startup: dict[str, Any], tcp: dict[str, Any]) -> dict[str, Any]:
    iw = {} if startup["algorithm"] == "initial-start" else {"initial_window": 3}
    return {
        "seed": 1,
        "duration": "30s",
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbps", "rtt": "200ms", "access_rate": "1Gbps",
                     "queue": {"kind": "droptail", "limit": "50pkt"}},
        "flows": [{
            "name": "web",
            "tcp": {"mss": "1448B", "handshake": True, **iw, **tcp},
            "startup": startup,
            "app": {"kind": "request-response", "request": "300B", "response": {"dist": "fixed", "value": "200KB"},
                    "think": {"dist": "fixed", "value": "3s"}, "count": 5},
        }],
    }  # fmt: skip


def main() -> None:
    for label, startup, tcp in CASES:
        times = startlab.run(scenario(startup, tcp), progress=False).responses["response_time"]
        print(f"{label:34s}", " ".join(f"{t:.3f}" for t in times), "s")


if __name__ == "__main__":
    main()
