"""quinn on issue 15's two paths (docs/REAL.md, "quinn"): the simulator's QUIC flow beside quinn
running the same startup + avoidance (``quinn:startlab``) and quinn's own controller, with
slow start (Reno avoidance, beside quinn's NewReno) and HyStart++ (CUBIC avoidance, beside
quinn's CUBIC). Needs root (the testbed) and the built binary
(``cargo build --release -p startlab-quinn``). Prints Markdown; --out also writes every row.

    python bench/quinn_paths.py [--paths 20,100] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from startlab.real import side_by_side

ROOT = Path(__file__).resolve().parents[1]
#: (label, startup, avoidance, stacks)
RUNS = [
    ("slow-start + reno", "slow-start", "reno", ["sim", "quinn:startlab", "quinn:newreno"]),
    ("hystart++ + cubic", "hystart++", "cubic", ["sim", "quinn:startlab", "quinn:cubic"]),
]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python bench/quinn_paths.py")
    parser.add_argument("--paths", default="20,100")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    everything = []
    for mbps in args.paths.split(","):
        scenario = ROOT / "examples" / "real" / f"quic-path-{mbps}mbps.toml"
        for label, startup, avoidance, stacks in RUNS:
            with tempfile.TemporaryDirectory() as tmp:
                results = side_by_side.compare_real(scenario, stacks, Path(tmp), startup=startup, avoidance=avoidance, tag="qb")
            print(f"\n### {mbps} Mbit/s, {label}\n")
            rows = side_by_side.table(results)
            print("| " + " | ".join(rows[0] + ["lost pkts", "reductions"]) + " |")
            print("|" + "---|" * (len(rows[0]) + 2))
            for r, row in zip(results, rows[1:]):
                # The simulator's drops; quinn's lost packets; the startlab controller's recovery
                # periods (quinn's own count of congestion events counts every call, many per period).
                lost = r.detail.get("lost_packets", r.detail.get("drops", "-"))
                events = (r.detail.get("controller") or {}).get("congestion_events", "-")
                print("| " + " | ".join([*row, str(lost), str(events)]) + " |")
            everything.append({"path": mbps, "run": label, "stacks": [r.row() | {"router": r.router, "detail": r.detail} for r in results]})
            sys.stdout.flush()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "quinn_paths.json").write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
