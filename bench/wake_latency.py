"""How late a sleeping thread wakes on this machine (docs/REAL.md, Paced Start): the timing the
testbed's router and endpoints get from the kernel, and what a packet pair's gap loses to it.

Each trial idles 3 ms, sleeps to a deadline, then sleeps to a second deadline GAP later: the first
wake is late by the idle wake-up latency, and the pair's gap changes by the difference of the
two; the thread's timer slack is 1 µs, as in the router. --qos holds a CPU-latency request of 0 (/dev/cpu_dma_latency, root) while it measures,
which keeps idle CPUs polling; the request ends with the process.

    python bench/wake_latency.py [--gap-us 120] [--trials 500] [--qos]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import struct
import time


def trial(gap_ns: int) -> tuple[int, int]:
    """(lateness of the first wake, error of the gap between the two wakes), ns."""
    first = time.monotonic_ns() + 3_000_000
    time.sleep((first - time.monotonic_ns()) / 1e9)
    a = time.monotonic_ns()
    time.sleep(max(0, first + gap_ns - time.monotonic_ns()) / 1e9)
    b = time.monotonic_ns()
    return a - first, (b - a) - gap_ns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gap-us", type=float, default=120.0, help="The pair's gap (120 µs: a 1500-byte packet at 100 Mbit/s).")
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--qos", action="store_true", help="Hold /dev/cpu_dma_latency = 0 while measuring (root).")
    args = parser.parse_args()
    # The router's own setting: a 1 µs timer slack (PR_SET_TIMERSLACK) instead of the default 50 µs.
    ctypes.CDLL(None).prctl(29, 1000, 0, 0, 0)
    qos = None
    if args.qos:
        try:
            qos = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
            os.write(qos, struct.pack("i", 0))
        except OSError as e:
            print(f"--qos: cannot hold a CPU-latency request ({e}); it needs root and /dev/cpu_dma_latency")
            return 2
    try:
        results = [trial(int(args.gap_us * 1000)) for _ in range(args.trials)]
    finally:
        if qos is not None:
            os.close(qos)
    late = sorted(r[0] / 1e3 for r in results)
    err = sorted(r[1] / 1e3 for r in results)
    q = statistics.quantiles
    print(f"{args.trials} trials, gap {args.gap_us:g} µs, CPU-latency request {'0 (held)' if args.qos else 'none'}")
    print(f"first wake late (µs): median {statistics.median(late):.1f}, 90th {q(late, n=10)[-1]:.1f}, worst {late[-1]:.1f}")
    print(f"gap error (µs): 5th {q(err, n=20)[0]:.1f}, median {statistics.median(err):.1f}, 95th {q(err, n=20)[-1]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
