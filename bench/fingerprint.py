"""Determinism fingerprint: one digest per scenario over every result table and trace.

Run it before and after an engine change that must not change results, and compare:

    python bench/fingerprint.py > before.txt      # on the old build
    python bench/fingerprint.py > after.txt       # on the new build
    diff before.txt after.txt                     # empty: byte-identical results

The scenarios are every shipped example plus ``--random N`` (default 200) seeded random dumbbells
that exercise every recovery variant, receiver, MSS, dupthresh, a short last segment, receive
windows, random loss and reordering, pacing and the startup algorithms; ``--aqm N`` (default 60)
seeded random dumbbells behind the dequeue-time disciplines and RED with classic and L4S ECN and
the startups of issue 34 (printed after the others, so the first lines compare with an older
build's output); ``--quic N`` (default 40) seeded random dumbbells with QUIC flows (issue 35:
handshake or not, pacing, ACK policies, flow control, ECN, drop-tail or an AQM, beside a TCP flow),
printed last; and ``--heavy`` adds the single-flow large-window paths of docs/PERFORMANCE.md
(slow, minutes on an old build). Scenario files given as arguments are fingerprinted too.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path
from typing import Any

import startlab

ROOT = Path(__file__).resolve().parent.parent
ALGORITHMS = [
    "slow-start", "lss", "abc", "bc", "hoe", "hystart", "hystart-linux", "hystart++", "vegas",
    "packet-pair", "astart", "delay-ss", "search", "bbr-startup", "paced-start",
]


def random_scenario(i: int) -> dict[str, Any]:
    """A random but valid dumbbell scenario, a pure function of ``i``."""
    rng = random.Random(1000 + i)
    flows = []
    for k in range(rng.choice([1, 1, 2, 3])):
        mss = rng.choice([100, 536, 1000, 1448])
        tcp: dict[str, Any] = {
            "recovery": rng.choice(["tahoe", "reno", "newreno", "sack", "sack", "sack", "prr", "rack-tlp", "linux", "sack1", "ns3-prr"]),
            "mss": f"{mss}B",
            "ack": rng.choice(["every-packet", "delayed", "quickack"]),
            "dupthresh": rng.choice([3, 3, 3, 1, 2, 5]),
            "limited_transmit": rng.random() < 0.7,
            "congestion_avoidance": rng.choice(["reno", "cubic"]),
            "pacing": rng.random() < 0.2,
            "initial_window": rng.choice([1, 2, 3, 10, 40]),
            "sack_blocks": rng.choice([1, 3, 4]),
        }
        if rng.random() < 0.2:
            tcp["rwnd"] = f"{rng.choice([20, 64, 300])}pkt"
        if rng.random() < 0.3:
            tcp["handshake"] = True
        size = rng.choice(["infinite", f"{rng.randint(1, 3000) * mss + rng.randint(1, mss - 1)}B", "2MB"])
        flows.append({
            "name": f"f{k}",
            "size": size,
            "start": f"{rng.randint(0, 500)}ms",
            "tcp": tcp,
            "startup": {"algorithm": rng.choice(ALGORITHMS)},
        })
    scenario: dict[str, Any] = {
        "seed": i,
        "duration": f"{rng.choice([3, 6, 10])}s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": rng.choice(["2Mbps", "10Mbps", "100Mbps", "300Mbps"]),
            "rtt": rng.choice(["2ms", "20ms", "80ms", "200ms"]),
            "access_rate": "1Gbps",
            "queue": {"kind": "droptail", "limit": rng.choice(["0pkt", "5pkt", "30pkt", "200pkt", "2000pkt", "64KB"])},
        },
        "flows": flows,
        "trace": {"cwnd": True, "seq": True, "queue": True},
    }
    impairments = []
    if rng.random() < 0.3:
        impairments.append({"link": "bottleneck", "direction": "forward", "loss": {"kind": "random", "p": rng.choice([0.001, 0.01, 0.05])}})
    if rng.random() < 0.15:
        impairments.append({"link": "access-d0", "jitter": {"kind": "uniform", "max": "3ms", "reorder": True}})
    if impairments:
        scenario["impairments"] = impairments
    if rng.random() < 0.3:
        scenario["cross"] = [{"kind": "cbr", "rate": "1Mbps", "packet_size": "1000B", "start": "100ms"}]
    return scenario


#: The startups the AQM scenarios draw from (issue 34's among them), as startup tables.
AQM_STARTUPS: list[dict[str, Any]] = [
    {"algorithm": "slow-start"}, {"algorithm": "hystart-linux"}, {"algorithm": "hystart++"},
    {"algorithm": "hystart++", "preset": "quiche"}, {"algorithm": "hystart++", "preset": "ngtcp2"},
    {"algorithm": "search"}, {"algorithm": "bbr-startup"}, {"algorithm": "bbrv3"}, {"algorithm": "suss"},
    {"algorithm": "careful-resume", "saved_rate": "40Mbps", "saved_rtt": "40ms"},
]  # fmt: skip


def aqm_scenario(i: int) -> dict[str, Any]:
    """A random dumbbell behind a dequeue-time discipline or RED, a pure function of ``i``."""
    rng = random.Random(5000 + i)
    queue = rng.choice([
        {"kind": "codel"}, {"kind": "codel", "ecn": True}, {"kind": "fq-codel"}, {"kind": "fq-codel", "ecn": False},
        {"kind": "pie"}, {"kind": "pie", "ecn": True}, {"kind": "dualpi2"}, {"kind": "dualpi2", "k": 4},
        {"kind": "red", "limit": "300pkt", "ecn": True},
    ])  # fmt: skip
    flows = []
    for k in range(rng.choice([1, 2, 3])):
        ecn = rng.choice([False, True, "l4s"])
        tcp: dict[str, Any] = {
            "recovery": rng.choice(["sack", "rack-tlp", "linux", "prr"]),
            "ack": rng.choice(["delayed", "linux", "every-packet"]),
            "ecn": ecn,
            "congestion_avoidance": "prague" if ecn == "l4s" else rng.choice(["reno", "cubic"]),
        }
        flows.append({
            "name": f"f{k}",
            "size": rng.choice(["infinite", "300KB", "3MB"]),
            "start": f"{rng.randint(0, 800)}ms",
            "tcp": tcp,
            "startup": dict(rng.choice(AQM_STARTUPS)),
        })  # fmt: skip
    return {
        "seed": i,
        "duration": f"{rng.choice([3, 5])}s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": rng.choice(["10Mbps", "40Mbps", "100Mbps"]),
            "rtt": rng.choice(["10ms", "40ms", "100ms"]),
            "access_rate": "1Gbps",
            "queue": queue,
        },
        "flows": flows,
        "trace": {"cwnd": True, "seq": True, "queue": True},
    }


def quic_scenario(i: int) -> dict[str, Any]:
    """A random dumbbell with QUIC flows (and sometimes a TCP one), a pure function of ``i``."""
    rng = random.Random(9000 + i)
    queue = rng.choice([
        {"kind": "droptail", "limit": "50pkt"}, {"kind": "droptail", "limit": "400pkt"},
        {"kind": "codel", "ecn": True}, {"kind": "fq-codel"}, {"kind": "pie"},
    ])  # fmt: skip
    flows: list[dict[str, Any]] = []
    for k in range(rng.choice([1, 2, 3])):
        quic: dict[str, Any] = {
            "handshake": rng.choice([True, False]),
            "pacing": rng.choice([True, False]),
            "ack_eliciting_threshold": rng.choice([1, 2, 10]),
            "max_ack_delay": rng.choice(["5ms", "25ms"]),
        }
        if rng.random() < 0.3:
            quic["max_data"] = rng.choice(["64KB", "1MB"])
        if rng.random() < 0.3:
            quic["ack_frequency"] = {"threshold": rng.choice([4, 20])}
        flows.append({
            "name": f"q{k}",
            "size": rng.choice(["infinite", "200KB", "2MB"]),
            "start": f"{rng.randint(0, 500)}ms",
            "quic": quic,
            "tcp": {"congestion_avoidance": rng.choice(["reno", "cubic"]), "ecn": rng.choice([False, True])},
            "startup": {"algorithm": rng.choice(["slow-start", "hystart++", "hystart-linux", "search", "bbrv3", "suss"])},
        })  # fmt: skip
    if rng.random() < 0.4:
        flows.append({"name": "tcp", "size": "1MB", "tcp": {"recovery": "linux", "ack": "linux"}})
    return {
        "seed": i,
        "duration": f"{rng.choice([2, 4])}s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": rng.choice(["10Mbps", "50Mbps"]),
            "rtt": rng.choice(["20ms", "80ms"]),
            "access_rate": "1Gbps",
            "queue": queue,
        },
        "impairments": [{"link": "bottleneck", "loss": {"kind": "random", "p": 0.002}, "jitter": {"kind": "uniform", "max": "1ms", "reorder": True}}] if rng.random() < 0.25 else [],
        "flows": flows,
        "trace": {"cwnd": True, "seq": True, "queue": True},
    }


def heavy() -> dict[str, dict[str, Any]]:
    """Single slow-start flows with a one-BDP buffer: the large windows of docs/PERFORMANCE.md."""
    from startlab.bench import large_window_scenarios

    return large_window_scenarios(quick=False)


def digest(result: Any, drop: tuple[str, ...] = ()) -> str:
    """SHA-256 over the flows and links tables and the cwnd, sequence and queue traces, without
    the columns in ``drop`` (to compare builds across an added or renamed column)."""
    h = hashlib.sha256()
    for frame in (result.flows, result.links, result.traces.cwnd, result.traces.seq, result.traces.queue):
        frame = frame.drop(columns=[c for c in drop if c in frame.columns])
        h.update(frame.to_csv(index=False, float_format="%r").encode())
    return h.hexdigest()[:24]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--random", type=int, default=200, help="random scenarios (default 200)")
    parser.add_argument("--aqm", type=int, default=60, help="random scenarios behind AQMs (default 60)")
    parser.add_argument("--quic", type=int, default=40, help="random scenarios with QUIC flows (default 40)")
    parser.add_argument("--heavy", action="store_true", help="add the large-window benchmark paths")
    parser.add_argument("--no-examples", action="store_true", help="skip the shipped examples")
    parser.add_argument(
        "--drop", default="", help="comma-separated result columns left out of the digests (columns one build lacks)"
    )
    parser.add_argument("files", nargs="*", type=Path, help="more scenario files")
    args = parser.parse_args(argv)
    cases: list[tuple[str, Any]] = [] if args.no_examples else [(p.name, p) for p in sorted((ROOT / "examples").glob("*.toml"))]
    cases += [(p.name, p) for p in args.files]
    cases += [(f"random-{i}", random_scenario(i)) for i in range(args.random)]
    cases += [(f"aqm-{i}", aqm_scenario(i)) for i in range(args.aqm)]
    cases += [(f"quic-{i}", quic_scenario(i)) for i in range(args.quic)]
    if args.heavy:
        cases += list(heavy().items())
    for name, scenario in cases:
        try:
            drop = tuple(c for c in args.drop.split(",") if c)
            out = digest(startlab.run(scenario, progress=False, base=str(ROOT / "examples")), drop)
        except Exception as exc:  # a refused random scenario is part of the fingerprint too
            out = f"error: {type(exc).__name__}: {exc}"
        print(f"{name} {out}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
