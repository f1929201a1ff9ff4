"""Issue 15's real-path comparisons (docs/REAL.md): every stack on the two paths of
examples/real/, each startup the issue names, with the agreement the issue asks for computed
from what ran — never tuned. Needs root (the testbed). Prints Markdown; --json writes every row.

    python bench/real_paths.py [--paths 20,100] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from startlab.real import side_by_side

ROOT = Path(__file__).resolve().parents[1]
#: (startup override or None for the scenario's hystart-linux, stacks) per comparison; "abc+linux"
#: is ABC with the flow's recovery set to "linux" (RACK-TLP + PRR, the kernel's; issue 16),
#: "abc+linux+reno" that with Reno's avoidance (the scenario's is CUBIC) beside kernel Reno, and
#: "hystart-linux+linux" the scenario's HyStart with the kernel's recovery (issue 31).
RUNS = [
    (None, ["sim", "udp", "kernel:cubic"]),
    ("hystart-linux+linux", ["sim", "kernel:cubic"]),
    ("abc", ["sim", "udp", "kernel:cubic-nohystart", "kernel:reno"]),
    ("abc+linux", ["sim", "kernel:cubic-nohystart"]),
    ("abc+linux+reno", ["sim", "kernel:reno"]),
    ("slow-start", ["sim", "udp"]),
    ("paced-start", ["sim", "udp"]),
]
#: What the issue asks to agree, and within what: (stack, against, figure, tolerance).
CLAIMS = {
    None: [("kernel:cubic", "sim", "exit_time_s", 0.15), ("kernel:cubic", "sim", "exit_cwnd_pkts", 0.15), ("udp", "sim", "exit_cwnd_pkts", 0.10), ("udp", "sim", "drops_5s", 0.20)],
    "abc": [
        ("kernel:cubic-nohystart", "sim", "exit_cwnd_pkts", 0.10), ("kernel:cubic-nohystart", "sim", "drops_5s", 0.20),
        ("kernel:reno", "sim", "exit_cwnd_pkts", 0.10), ("kernel:reno", "sim", "drops_5s", 0.20),
        ("udp", "sim", "exit_cwnd_pkts", 0.10), ("udp", "sim", "drops_5s", 0.20),
    ],
    "abc+linux": [("kernel:cubic-nohystart", "sim", "drops_5s", 0.20)],
    # Issue 31: what follows a HyStart exit, with the kernel's recovery and CUBIC's growth.
    "hystart-linux+linux": [("kernel:cubic", "sim", "first_drop_s", 0.10), ("kernel:cubic", "sim", "drops_5s", 0.20)],
    "abc+linux+reno": [("kernel:reno", "sim", "exit_cwnd_pkts", 0.10), ("kernel:reno", "sim", "drops_5s", 0.20)],
    "slow-start": [("udp", "sim", "exit_cwnd_pkts", 0.10), ("udp", "sim", "drops_5s", 0.20)],
    "paced-start": [("udp", "sim", "exit_cwnd_pkts", 0.10), ("udp", "sim", "drops_5s", 0.20)],
}  # fmt: skip


def rel(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0:
        return 0.0 if a == 0 else float("inf")
    return abs(a - b) / abs(b)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paths", default="20,100", help="Which paths: 20 and/or 100 (Mbit/s).")
    parser.add_argument("--only", help="Comma-separated runs to do (hystart-linux, hystart-linux+linux, abc, abc+linux, abc+linux+reno, slow-start, paced-start).")
    parser.add_argument("--out", type=Path, help="Write each comparison's compare.json and cwnd.png under this directory.")
    args = parser.parse_args()
    rows = []
    for mbps in args.paths.split(","):
        scenario = ROOT / "examples" / "real" / f"path-{mbps}mbps.toml"
        for startup, stacks in RUNS:
            if args.only and (startup or "hystart-linux") not in args.only.split(","):
                continue
            name = f"{mbps}mbps-{startup or 'hystart-linux'}"
            work = (args.out or Path("/tmp")) / name
            algorithm, recovery, avoidance = ((startup or "").split("+") + ["", ""])[:3]
            results = side_by_side.compare_real(scenario, stacks, work, startup=algorithm or None, recovery=recovery or None, avoidance=avoidance or None)
            if args.out:
                side_by_side.write(results, work, f"{scenario.name} ({startup or 'hystart-linux'})")
            by = {r.stack: r for r in results}
            print(f"\n### {mbps} Mbit/s, sim startup `{startup or 'hystart-linux'}`\n")
            print("| stack | exit (s) | reason | exit cwnd (pkts) | first drop (s) | drops 5 s | goodput (Mbit/s) | router worst late (ms) |")
            print("|---|---|---|---|---|---|---|---|")
            for line in side_by_side.table(results)[1:]:
                print("| " + " | ".join(line) + " |")
            print()
            for stack, against, figure, tol in CLAIMS[startup]:
                a, b = getattr(by[stack], figure), getattr(by[against], figure)
                err = rel(a, b)
                verdict = "n/a" if err is None else ("agrees" if err <= tol else "differs")
                print(f"- {stack} vs {against}, {figure}: {a} vs {b} ({'-' if err is None else f'{100 * err:.1f} %'}; within {100 * tol:.0f} %: {verdict})")
                rows.append({"path": name, "stack": stack, "against": against, "figure": figure, "value": a, "reference": b, "rel_error": err, "tolerance": tol, "verdict": verdict})
            sys.stdout.flush()
    if args.out:
        (args.out / "claims.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
