"""How a loss recovery went, event by event, from a run's traces (docs/algorithms/recovery.md): every
congestion event (what set ssthresh, from which window), every retransmission timeout (first and
backed off, as a segment sent again), the retransmissions the bottleneck dropped (when sent, the
queue they met, when they were sent again).

    python bench/recovery_story.py examples/paced-start-default.toml
    python bench/recovery_story.py --path paced-start --recovery prr [--avoidance cubic] [--header 52B] [--duration 10]

``--path`` takes a path of bench/recovery_table.py (``paced-start``: 100 Mbit/s, 80 ms, 1000-packet
drop-tail, 40 Mbit/s CBR; ``1g-bdp``) with its slow-start flow; a scenario file is run as it is (its
first flow is told).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import startlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recovery_table import PATHS  # noqa: E402
from recovery_table import scenario as table_scenario  # noqa: E402


def story(result: startlab.Result, lost_rows: int) -> list[str]:
    """The lines of the story of the result's first flow."""
    flow = result.flows.iloc[0]
    name, mss = flow["flow"], float(result.scenario["flows"][0]["tcp"]["mss"])
    cwnd = result.traces.cwnd[result.traces.cwnd["flow"] == name]
    seq = result.traces.seq[result.traces.seq["flow"] == name]
    queue = result.traces.queue
    bottleneck = queue[queue["link"] == result.links.iloc[0]["link"]]
    lines = [
        f"flow {name}: {flow['drops']} drops, {flow['timeouts']} timeouts, {flow['recovery_episodes']} recovery episodes, "
        f"{flow['retransmissions_lost']} retransmissions lost, {flow['recovery_time']:.2f} s in recovery, "
        f"goodput {flow['goodput'] / 1e6:.1f} Mbit/s, startup ends at {flow['su_time']:.3f} s"
    ]
    before = cwnd["cwnd"].shift()
    for i, row in cwnd[cwnd["cause"] != "update"].iterrows():
        lines.append(
            f"  {row['time']:8.4f} s  {row['cause']:7s} ssthresh {row['ssthresh'] / mss:7.0f} seg  (cwnd before {before[i] / mss:7.0f}, after {row['cwnd'] / mss:7.0f})"
        )
    collapsed = cwnd[(cwnd["cwnd"] <= mss) & (before > mss)]
    for t in collapsed["time"]:
        lines.append(f"  {t:8.4f} s  cwnd falls to one segment (retransmission timeout)")
    lost = lost_retransmissions(seq)
    resent = seq[seq["event"] == "retransmitted"].groupby("seq", observed=True)["time"].apply(list)
    lines.append(f"  {len(lost)} retransmissions dropped; the first {min(lost_rows, len(lost))}:")
    for segment, sent, dropped in lost[:lost_rows]:
        waiting = bottleneck[bottleneck["time"] <= dropped]["packets"]
        q = int(waiting.iloc[-1]) if len(waiting) else 0
        later = [t for t in resent.get(segment, []) if t > sent]
        again = f"; sent again at {', '.join(f'{t:.4f}' for t in later)} s" if later else ""
        lines.append(f"    segment {segment / mss:8.0f}: retransmitted {sent:.4f} s, dropped {dropped:.4f} s, bottleneck queue {q} packets{again}")
    return lines


def lost_retransmissions(seq: Any) -> list[tuple[int, float, float]]:
    """(first byte, time sent again, time dropped) of every retransmission the network dropped."""
    resent: dict[int, float] = {}
    lost = []
    for row in seq[seq["event"].isin(["retransmitted", "dropped"])].itertuples():
        if row.event == "retransmitted":
            resent[row.seq] = row.time
        elif row.seq in resent:
            lost.append((int(row.seq), resent.pop(row.seq), float(row.time)))
    return lost


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", type=Path, help="a scenario file (else --path)")
    parser.add_argument("--path", choices=sorted(PATHS), help="one of bench/recovery_table.py's paths")
    parser.add_argument("--recovery", default="sack", help="tcp.recovery with --path (default sack)")
    parser.add_argument("--avoidance", default="reno", choices=["reno", "cubic"], help="with --path (default reno)")
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds with --path (default 10)")
    parser.add_argument("--header", help="tcp.header with --path (default: the path's)")
    parser.add_argument("--lost", type=int, default=10, help="lost retransmissions listed (default 10)")
    args = parser.parse_args()
    if (args.scenario is None) == (args.path is None):
        parser.error("give a scenario file or --path")
    if args.scenario is not None:
        result = startlab.run(args.scenario, progress=False)
    else:
        extra = {} if args.header is None else {"header": args.header}
        result = startlab.run(table_scenario(args.recovery, extra, args.duration, args.avoidance, args.path), progress=False)
    print("\n".join(story(result, args.lost)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
