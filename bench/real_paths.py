"""Issue 15's real-path comparisons (docs/REAL.md): every stack on the two paths of
examples/real/, each startup the issue names, with the agreement the issue asks for computed
from what ran — never tuned. Issue 34's algorithms (SUSS, Careful Resume, BBRv3, HyStart++ as the
QUIC stacks ship it) run with `--issue34`: the simulator, startlab-udp and, where there is one,
the BPF port in the kernel. Needs root (the testbed). Prints Markdown; --out also writes every row.

    python bench/real_paths.py [--paths 20,100] [--only NAME,...] [--issue34] [--out DIR]
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
#: Issue 34's comparisons: (label, startup override, stacks, the BPF stack's compile-time
#: parameters for a path of this many Mbit/s and ms of RTT). The sim and udp stacks run what the
#: parameters stand for (bpfparams.py): a preset, a saved set. Careful Resume's saved set is the
#: path's own capacity and RTT (a good jump, the issue's "saved capacity of an earlier
#: connection on the same path"). Every one runs with the kernel's recovery (`+linux`: RACK-TLP and
#: PRR, issue 16), since the kernel recovers the BPF ports' losses; BBRv3 has no BPF port.
ISSUE34_RUNS = [
    ("suss+linux", "suss+linux", ["sim", "udp", "kernel:bpf-suss+cubic"], lambda mbps, rtt_ms: {}),
    ("careful-resume+linux", "careful-resume+linux", ["sim", "udp", "kernel:bpf-careful-resume+cubic"], lambda mbps, rtt_ms: {"SAVED_RATE": mbps * 1_000_000, "SAVED_RTT_US": rtt_ms * 1000}),
    ("bbrv3+linux", "bbrv3+linux", ["sim", "udp"], lambda mbps, rtt_ms: {}),
    *[(f"hystart++:{p}+linux", "hystart+++linux", ["sim", "udp", "kernel:bpf-hystart+++cubic"], lambda mbps, rtt_ms, n=n: {"PRESET": n}) for n, p in enumerate(("quiche", "msquic", "neqo", "ngtcp2"), 1)],
]
#: Each one's agreement: the issue's targets (exit cwnd within 10 %, drops within 20 %) for
#: startlab-udp and the BPF port against the simulator.
ISSUE34_CLAIMS = {
    label: [(stack, "sim", figure, tol) for stack in stacks if stack != "sim" for figure, tol in (("exit_cwnd_pkts", 0.10), ("drops_5s", 0.20))]
    for label, _, stacks, _ in ISSUE34_RUNS
}
#: The two paths' RTT (ms), as examples/real/ writes them.
RTT_MS = {"20": 40, "100": 100}
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
    parser.add_argument("--issue34", action="store_true", help="Run issue 34's algorithms instead (suss+linux, careful-resume+linux, bbrv3+linux, hystart++:PRESET+linux).")
    args = parser.parse_args()
    rows = []
    for mbps in args.paths.split(","):
        scenario = ROOT / "examples" / "real" / f"path-{mbps}mbps.toml"
        if args.issue34:
            runs = [(label, startup, stacks, params(int(mbps), RTT_MS[mbps]), ISSUE34_CLAIMS[label]) for label, startup, stacks, params in ISSUE34_RUNS]
        else:
            runs = [(startup or "hystart-linux", startup, stacks, {}, CLAIMS[startup]) for startup, stacks in RUNS]
        for label, startup, stacks, bpf_params, claims in runs:
            if args.only and label not in args.only.split(","):
                continue
            name = f"{mbps}mbps-{label.replace(':', '-')}"
            work = (args.out or Path("/tmp")) / name
            # "ALGORITHM+RECOVERY+AVOIDANCE"; hystart++'s own pluses are its name.
            head, _, rest = (startup or "").partition("++") if (startup or "").startswith("hystart++") else ("", "", startup or "")
            algorithm, recovery, avoidance = (rest.split("+") + ["", ""])[:3]
            algorithm = head + "++" if head else algorithm
            results = side_by_side.compare_real(
                scenario, stacks, work, startup=algorithm or None, recovery=recovery or None, avoidance=avoidance or None, bpf_params=bpf_params or None
            )
            if args.out:
                side_by_side.write(results, work, f"{scenario.name} ({label})")
            by = {r.stack: r for r in results}
            params = f" ({', '.join(f'{k}={v}' for k, v in bpf_params.items())})" if bpf_params else ""
            print(f"\n### {mbps} Mbit/s, sim startup `{label}`{params}\n")
            print("| stack | exit (s) | reason | exit cwnd (pkts) | first drop (s) | drops 5 s | goodput (Mbit/s) | router worst late (ms) |")
            print("|---|---|---|---|---|---|---|---|")
            for line in side_by_side.table(results)[1:]:
                print("| " + " | ".join(line) + " |")
            print()
            for stack, against, figure, tol in claims:
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
