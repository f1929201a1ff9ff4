"""``startlab analyze`` held against the kernel (issue 37, item 4): kernel TCP (CUBIC with HyStart,
Reno) on issue 15's two real paths, captured with tcpdump at the sender's interface, each capture
analysed and its startup exit compared with tcp_probe's; startlab-udp's likewise with its sender's
own exit. Each transfer is captured at the sender (s0) and at the receiver (c0). Prints one row per run and the JSON of all
(docs/ANALYZE.md holds the figures). Needs root, the testbed, tcpdump and tracefs.

    python bench/analyze_truth.py [--runs 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from startlab.real import capture, testbed

ROOT = Path(__file__).resolve().parents[1]
CASES = (("path-20mbps", 4_000_000), ("path-100mbps", 12_000_000))
STACKS = ("kernel:cubic", "kernel:reno", "udp")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each path and stack")
    parser.add_argument("--out", type=Path, help="keep the captures here")
    args = parser.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="analyze-truth-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    with testbed.Testbed("truth") as tb:
        for path, size in CASES:
            for stack in STACKS:
                for run in range(args.runs):
                    for row in capture.kernel_truth(tb, ROOT / "examples" / "real" / f"{path}.toml", stack, work / f"{run}", size=size, receiver=True):
                        rows.append(row.to_dict())
                        print(f"{path:13} {stack:13} at {row.vantage:9} stack {row.kernel_reason:>14} at {row.kernel_exit_s or float('nan'):.3f} s cwnd {row.kernel_cwnd_pkts or float('nan'):6.1f} | "
                              f"analyze {row.analyze_reason:>8} at {row.analyze_exit_s or float('nan'):.3f} s flight {row.analyze_flight_pkts or float('nan'):6.1f} | "
                              f"{row.time_error_rtts if row.time_error_rtts is not None else float('nan'):.2f} RTT, {100 * (row.flight_error if row.flight_error is not None else float('nan')):+.1f} % "
                              f"{'ok' if row.within() else 'OUTSIDE'}", flush=True)  # fmt: skip
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
