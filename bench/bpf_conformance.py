"""Conformance of the BPF startup algorithms with their Rust versions, repeated (docs/KERNEL-BPF.md).

Every comparison of ``startlab.real.conformance.WINDOW_CASES`` and ``TIMING_CASES`` (the ones
tests/test_kernel_bpf.py makes once) is run ``--runs`` times, then those of ``PRESET_CASES`` (the
HyStart++ presets, compile-time parameters instead of an initial ssthresh). Per case it prints:
- in how many runs the windows were equal after every ACK;
- in how many they met the algorithm's rule (``conformance.verdict``);
- the kernel's ssthresh at the end against the Rust window at its exit;
- whose ACK times were used.

Needs root, clang, bpftool and libbpf-dev. Usage::

    python bench/bpf_conformance.py [--runs 5] [--only bpf-hystart,bpf-paced-start]
"""

from __future__ import annotations

import argparse

from startlab.real import conformance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per comparison (default 5)")
    parser.add_argument("--only", help="comma-separated BPF algorithm names (default: every case)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    print("| algorithm | initial ssthresh | ACKs | runs | equal after every ACK | meet the rule | kernel ssthresh at the end | Rust exit window | clock |")
    print("|---|---:|---:|---:|---:|---:|---|---|---|")
    for name, ssthresh, acks in conformance.WINDOW_CASES + conformance.TIMING_CASES:
        if only is not None and name not in only:
            continue
        equal = rule = 0
        kernel_ss, rust_exit, clocks = [], [], set()
        for _ in range(args.runs):
            trace = conformance.conform(name, conformance.Script(acks=acks, initial_ssthresh=ssthresh))
            equal += not trace.mismatches(exact=True)
            rule += not conformance.verdict(trace)
            clocks.add(trace.clock)
            kernel_ss.append(trace.kernel_ssthresh[-1])
            left = next((i for i, s in enumerate(trace.rust_in_startup) if not s), None)
            rust_exit.append("-" if left is None else f"{trace.rust_cwnd[left]:.2f}")
        ss = "-" if ssthresh is None else str(ssthresh)
        print(f"| {name} | {ss} | {acks} | {args.runs} | {equal} | {rule} | {_fmt(kernel_ss)} | {_fmt(rust_exit)} | {_fmt(clocks)} |")
    presets = [c for c in conformance.PRESET_CASES if only is None or c[0] in only]
    if presets:
        print()
        print("| algorithm | compile-time parameters | ACKs | runs | equal after every ACK | meet the rule | kernel ssthresh at the end | Rust exit window | clock |")
        print("|---|---|---:|---:|---:|---:|---|---|---|")
    for name, params, acks in presets:
        equal = rule = 0
        kernel_ss, rust_exit, clocks = [], [], set()
        for _ in range(args.runs):
            trace = conformance.conform(name, conformance.Script(acks=acks), bpf_params=params)
            equal += not trace.mismatches(exact=True)
            rule += not conformance.verdict(trace)
            clocks.add(trace.clock)
            kernel_ss.append(trace.kernel_ssthresh[-1])
            left = next((i for i, s in enumerate(trace.rust_in_startup) if not s), None)
            rust_exit.append("-" if left is None else f"{trace.rust_cwnd[left]:.2f}")
        given = " ".join(f"{k}={v}" for k, v in params.items())
        print(f"| {name} | {given} | {acks} | {args.runs} | {equal} | {rule} | {_fmt(kernel_ss)} | {_fmt(rust_exit)} | {_fmt(clocks)} |")


def _fmt(xs: list) -> str:
    return ", ".join(sorted({str(x) for x in xs}))


if __name__ == "__main__":
    main()
