"""ACKs per second through a Python startup plug-in (docs/PERFORMANCE.md, docs/OWN-ALGORITHM.md).

One flow on 1 Gbit/s with a 1 ms RTT keeps a fixed window of 80 segments (just under the BDP of
86): it never leaves startup, so every one of its ~85 000 ACKs per simulated second goes through
the plug-in's ``on_ack``. Three plug-ins, each run ``--repeat`` times (the fastest kept):

- ``python-noop``: counts the ACK and returns None (the cost of the hook call itself);
- ``python-delay-check``: a delay-based exit check in the style of HyStart (per-round minimum RTT
  against the previous round's, an Action returned on every ACK);
- ``python-lss-formula``: the tutorial's Limited Slow-Start arithmetic, returning an increase of 0.

and the same path with the built-in ``slow-start`` in congestion avoidance from the start
(``initial_ssthresh`` = the initial window: nearly the same ACKs, no plug-in) as the baseline. The
overhead per ACK is (plug-in run − baseline) / ACKs. Usage::

    python bench/plugin_acks.py [--duration 5s] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import startlab
from startlab import Action

PATH = """\
seed = 1
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck_rate = "1Gbps"
rtt = "1ms"
access_rate = "10Gbps"
queue = {{ kind = "droptail", limit = "100pkt" }}
[trace]
cwnd = false
seq = false
queue = false
[[flows]]
name = "f"
tcp = {{ recovery = "sack", mss = "1448B", header = "52B", ack = "every-packet", initial_window = 80{ssthresh} }}
startup = {{ algorithm = "{algorithm}" }}
size = "infinite"
"""

ACKS = {"n": 0}


@startlab.startup("bench-noop")
class Noop:
    """Counts the ACK, returns None."""

    def on_ack(self, view: Any, ack: Any) -> None:
        ACKS["n"] += 1


@startlab.startup("bench-delay-check")
class DelayCheck:
    """HyStart-style delay check per ACK; never exits on this queue-free path."""

    def __init__(self) -> None:
        self.round = -1
        self.current = math.inf
        self.last = math.inf

    def on_ack(self, view: Any, ack: Any) -> Action:
        ACKS["n"] += 1
        if view.round != self.round:
            self.round, self.last, self.current = view.round, self.current, math.inf
        if ack.rtt is not None and ack.rtt < self.current:
            self.current = ack.rtt
        if self.last < math.inf and self.current > self.last + max(0.004, self.last / 8):
            return Action(exit="delay-increase")
        return Action(increase=0.0)


@startlab.startup("bench-lss-formula")
class LssFormula:
    """The tutorial's Limited Slow-Start arithmetic with a max_ssthresh of 10 segments; grows 0."""

    def on_ack(self, view: Any, ack: Any) -> Action:
        ACKS["n"] += 1
        max_ssthresh = 10 * view.mss
        k = math.floor(view.cwnd / (0.5 * max_ssthresh))
        _ = view.mss // max(k, 1)
        return Action(increase=0.0)


def timed(algorithm: str, duration: str, ssthresh: str = "") -> tuple[float, int, int]:
    """Wall seconds, events and plug-in ACKs of one run."""
    ACKS["n"] = 0
    text = PATH.format(duration=duration, algorithm=algorithm, ssthresh=ssthresh)
    started = time.perf_counter()
    result = startlab.run(text, progress=False)
    wall = time.perf_counter() - started
    flow = result.flows.iloc[0]
    if algorithm != "slow-start" and flow["exit_reason"] != "not-exited":
        raise SystemExit(f"{algorithm} left startup ({flow['exit_reason']}); the benchmark needs every ACK in startup")
    return wall, int(result.stats["events"]), ACKS["n"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", default="5s", help="simulated time per run (default 5s)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; the fastest is kept")
    args = parser.parse_args()
    baseline = min(timed("slow-start", args.duration, ', initial_ssthresh = "80pkt"') for _ in range(args.repeat))
    print("| variant | ACKs through the plug-in | wall s | ACKs/s | overhead µs/ACK | events/s |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| built-in slow-start (CA from the start, baseline) | – | {baseline[0]:.3f} | – | – | {baseline[1] / baseline[0]:,.0f} |")
    for name in ("bench-noop", "bench-delay-check", "bench-lss-formula"):
        wall, events, acks = min(timed(name, args.duration) for _ in range(args.repeat))
        overhead = (wall - baseline[0]) / acks * 1e6
        print(f"| python {name.removeprefix('bench-')} | {acks:,} | {wall:.3f} | {acks / wall:,.0f} | {overhead:.2f} | {events / wall:,.0f} |")


if __name__ == "__main__":
    main()
