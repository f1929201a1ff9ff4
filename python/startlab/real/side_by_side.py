"""``startlab compare-real``: one scenario's path run by the simulator, by startlab-udp (the same
sans-IO endpoints on real sockets), by the Linux kernel's TCP and, for a QUIC flow, by the quinn
QUIC stack (startlab's algorithm inside it, or its own) through the testbed's router, with the
startup's figures side by side (docs/REAL.md).

Every time is seconds since the stack's first data packet: the simulator's ``t0``, the UDP
sender's first DATA datagram, the kernel sender's first ``send()`` (startlab.real.kerneltcp), the
quinn server's first response byte written to its stream. Drops are
the bottleneck's: the simulator's drop events, the testbed router's drop log (data direction) on
the same clock as the endpoints (``CLOCK_MONOTONIC``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The stacks compare-real knows: the simulator, startlab-udp, kernel congestion controls, and
#: quinn with startlab's algorithm or its own (a QUIC flow's; startlab.real.quinn).
KERNEL_STACKS = ("kernel:cubic", "kernel:cubic-nohystart", "kernel:reno", "kernel:bbr")
QUINN_STACKS = ("quinn:startlab", "quinn:cubic", "quinn:newreno", "quinn:bbr")
STACKS = ("sim", "udp", *KERNEL_STACKS, *QUINN_STACKS)
#: Drops are counted over this first stretch of each run (issue 15's "drops in the first 5 s").
DROP_WINDOW_S = 5.0


@dataclass
class StackResult:
    """One stack's run on the path."""

    stack: str
    #: Startup exit, seconds since the first data packet (None: it never exited).
    exit_time_s: float | None
    #: Why (the simulator's names: loss, delay-increase, ack-train, rate-found, ...).
    exit_reason: str
    #: cwnd at the exit, segments, before any reduction.
    exit_cwnd_pkts: float | None
    #: The first drop at the bottleneck (data direction), seconds since the first data packet.
    first_drop_s: float | None
    #: Drops at the bottleneck in the first 5 s.
    drops_5s: int
    #: Payload bytes delivered × 8 over the run's time from the first data packet.
    goodput_bps: float | None
    #: Times of the bottleneck's drops (data direction), seconds since the first data packet.
    drop_times: list[float] = field(default_factory=list, repr=False)
    #: (t_s, cwnd in segments): every change (sim, udp) or every ACK (kernel).
    cwnd: list[tuple[float, float]] = field(default_factory=list, repr=False)
    #: The testbed router's lateness (mean, worst, releases over 1 ms, late flag); None for sim.
    router: dict[str, Any] | None = None
    #: Stack-specific figures (samples source, retransmissions and, for sim and kernel, their times
    #: since the first data packet, pacing gap error, ...).
    detail: dict[str, Any] = field(default_factory=dict, repr=False)

    def row(self) -> dict[str, Any]:
        """The ``--json`` row: exactly the keys the issue names."""
        return {
            "stack": self.stack, "exit_time_s": self.exit_time_s, "exit_reason": self.exit_reason,
            "exit_cwnd_pkts": self.exit_cwnd_pkts, "first_drop_s": self.first_drop_s, "drops_5s": self.drops_5s,
            "goodput_bps": self.goodput_bps,
        }  # fmt: skip


def parse_stacks(text: str) -> list[str]:
    """``sim,udp,kernel:cubic`` -> names; a bare kernel name (``cubic``) means ``kernel:cubic``."""
    names = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name = part if part in STACKS or part.startswith(("kernel:", "quinn:")) else f"kernel:{part}"
        if name.startswith("kernel:bpf-"):
            from .kerneltcp import stack_name

            name = stack_name(name)  # a ValueError names the BPF algorithms
        elif name not in STACKS:
            raise ValueError(
                f"--stacks: {part!r} is not a stack; expected a comma-separated list of {', '.join(STACKS)} or kernel:bpf-NAME[+cubic]"
            )
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError(f"--stacks: empty; expected a comma-separated list of {', '.join(STACKS)}")
    return names


def prepare(
    scenario: str | Path,
    workdir: Path,
    startup: str | None = None,
    recovery: str | None = None,
    avoidance: str | None = None,
    startup_params: dict[str, Any] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """The scenario compare-real runs: the file itself, or with ``startup`` (``recovery``,
    ``avoidance``) a JSON copy in ``workdir`` whose single flow uses that startup algorithm with
    its defaults (that ``tcp.recovery``, that ``tcp.congestion_avoidance``) and
    ``startup_params``; and that flow as resolved (with ``duration_s``, the run's length). Refuses
    a scenario with other than one ``[[flows]]`` entry, or with arrivals, users or replays."""
    import startlab

    path = Path(scenario)
    normal = startlab.normalize(path)
    extra = [k for k in ("arrivals", "users", "replay") if normal.get(k)]
    if len(normal["flows"]) != 1 or extra:
        raise startlab.ScenarioError(
            f"flows: compare-real runs one flow on the testbed's one path; the scenario has {len(normal['flows'])} [[flows]] entries"
            + (f" and {', '.join(extra)}" if extra else "")
        )
    if startup is None and recovery is None and avoidance is None and not startup_params:
        return path, _flow(normal)
    raw = startlab.scenario_document(path)
    if startup is not None:
        raw["flows"][0]["startup"] = {"algorithm": startup}
    if startup_params:
        table = raw["flows"][0].setdefault("startup", {"algorithm": normal["flows"][0]["startup"]["algorithm"]})
        table.update(startup_params)
    if recovery is not None:
        raw["flows"][0].setdefault("tcp", {})["recovery"] = recovery
    if avoidance is not None:
        tcp = raw["flows"][0].setdefault("tcp", {})
        tcp["congestion_avoidance"] = avoidance
        # The other avoidance algorithms' parameters (cubic_growth beside reno) no longer apply.
        foreign = {p["name"] for a in startlab.algorithms() if a["role"] == "avoidance" and a["name"] != avoidance for p in a["params"]}
        for key in foreign & set(tcp):
            del tcp[key]
    for k in ("trace",):
        raw.pop(k, None)
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / ("-".join([path.stem, *(x for x in (startup, recovery, avoidance) if x)]) + ".json")
    out.write_text(json.dumps(raw, indent=1))
    # Files the scenario names are resolved against its own directory: refuse a copy that would
    # break them rather than run something else.
    return out, _flow(startlab.normalize(out))


def _flow(normal: dict[str, Any]) -> dict[str, Any]:
    import startlab

    flow: dict[str, Any] = normal["flows"][0]
    if flow["tcp"]["ecn"] == "l4s":
        raise startlab.ScenarioError(
            'flows[0].tcp.ecn: "l4s" (ECT(1) data, Accurate ECN feedback) has no counterpart in compare-real\'s stacks '
            '(startlab-udp carries RFC 3168 ECN only); use true for classic ECN'
        )
    flow["duration_s"] = normal["duration"] / 1e9 if isinstance(normal["duration"], (int, float)) else None
    return flow


def run_sim(scenario: Path) -> StackResult:
    """The simulator on the scenario."""
    import startlab

    result = startlab.run(scenario, progress=False)
    f = result.flows.iloc[0]
    t0 = float(f["t0"]) if f["t0"] == f["t0"] else 0.0
    seq = result.traces.seq
    drops = sorted(float(t) - t0 for t in seq[(seq.event == "dropped")]["time"])
    cw = result.traces.cwnd
    mss = float(f["mss"])
    exit_time = None if f["startup_exit_time"] != f["startup_exit_time"] or f["startup_exit_time"] is None else float(f["startup_exit_time"]) - t0
    goodput = f["goodput"]
    return StackResult(
        stack="sim", exit_time_s=exit_time, exit_reason=str(f["exit_reason"]),
        exit_cwnd_pkts=None if f["exit_cwnd_pkts"] != f["exit_cwnd_pkts"] else float(f["exit_cwnd_pkts"]),
        first_drop_s=drops[0] if drops else None, drop_times=drops, drops_5s=sum(1 for d in drops if d < DROP_WINDOW_S),
        goodput_bps=None if goodput != goodput else float(goodput),
        cwnd=[(float(t) - t0, float(c) / mss) for t, c in zip(cw["time"], cw["cwnd"])],
        detail={
            "retransmissions": int(f["retransmissions"]), "timeouts": int(f["timeouts"]), "drops": int(f["drops"]),
            "retransmissions_lost": int(f["retransmissions_lost"]),
            "retransmit_times": sorted(float(t) - t0 for t in seq[(seq.event == "retransmitted")]["time"]),
        },
    )  # fmt: skip


def _router_summary(report: dict[str, Any]) -> dict[str, Any]:
    both = (report["forward"], report["reverse"])
    return {
        "lateness_mean_s": max(d["lateness_mean_s"] for d in both),
        "lateness_worst_s": max(d["lateness_worst_s"] for d in both),
        "late_releases": sum(d["late_releases"] for d in both),
        "late": bool(report["late"]),
        "forwarded": sum(d["forwarded"] for d in both),
        # Data packets and ACKs the router carried: their ratio is the receiver's ACKs per packet.
        "data_forwarded": report["forward"]["forwarded"],
        "acks_forwarded": report["reverse"]["forwarded"],
    }


def _drops(report: dict[str, Any], t0_mono: float) -> list[float]:
    return sorted(d["mono_s"] - t0_mono for d in report["forward"]["drop_log"] if d["mono_s"] >= t0_mono - 1.0)


def run_kernel(tb: Any, scenario: Path, flow: dict[str, Any], stack: str, bpf_params: dict[str, int] | None = None) -> StackResult:
    """Linux TCP with the stack's congestion control through the router running the scenario
    (``flow``: its resolved flow, from :func:`prepare`); a BPF stack compiled with
    ``bpf_params``."""
    from . import kerneltcp

    tcp = flow["tcp"]
    tb.start_router(scenario)
    try:
        run = kerneltcp.run(
            tb, stack, size=flow.get("size"), duration=None if flow.get("size") else flow["duration_s"],
            initial_window=int(tcp["initial_window"]), ecn=tcp["ecn"] is True, mss=int(tcp["mss"]),
            bpf_params=bpf_params if stack.startswith("kernel:bpf-") else None,
        )  # fmt: skip
    finally:
        report = tb.stop_router()
    t, reason, cwnd = run.startup_exit()
    drops = _drops(report, run.t0_mono)
    return StackResult(
        stack=stack, exit_time_s=t, exit_reason=reason, exit_cwnd_pkts=None if cwnd is None else float(cwnd),
        first_drop_s=drops[0] if drops else None, drop_times=drops, drops_5s=sum(1 for d in drops if 0 <= d < DROP_WINDOW_S),
        goodput_bps=run.goodput_bps if math.isfinite(run.goodput_bps) else None,
        cwnd=[(s.t_s, float(s.cwnd_pkts)) for s in run.samples], router=_router_summary(report),
        detail={
            "source": run.source, "retransmissions": len(run.retransmits), "retransmit_times": list(run.retransmits),
            "congestion_control": run.congestion_control, "kernel": run.kernel,
        },
    )  # fmt: skip


def run_udp(tb: Any, scenario: Path, flow: dict[str, Any]) -> StackResult:
    """startlab-udp (the scenario's own endpoints) through the router running the scenario."""
    from . import udp

    tb.start_router(scenario)
    try:
        run = udp.testbed_transfer(tb, scenario, duration=None if flow.get("size") else flow["duration_s"])
    finally:
        report = tb.stop_router()
    send = run["sender"]
    exit_ = send.get("startup_exit") or {"reason": send.get("exit_reason", "not-exited")}
    drops = _drops(report, send["t0_mono_s"])
    mss = float(send.get("mss") or flow["tcp"]["mss"])  # a QUIC flow's segment is its datagram size
    return StackResult(
        stack="udp", exit_time_s=exit_.get("time_s"), exit_reason=exit_.get("reason", "not-exited"), exit_cwnd_pkts=exit_.get("cwnd_pkts"),
        first_drop_s=drops[0] if drops else None, drop_times=drops, drops_5s=sum(1 for d in drops if 0 <= d < DROP_WINDOW_S),
        goodput_bps=send.get("goodput_bps"), cwnd=[(s["t_s"], s["cwnd"] / mss) for s in send.get("samples", [])],
        router=_router_summary(report),
        detail={
            "retransmissions": send.get("retransmissions"), "rtos": send.get("rto_count"), "pacing_gap_error": send.get("pacing"), "sender_ack_lag": send.get("ack_lag"), "receiver_ack_lag": run["receiver"].get("ack_lag"), "startup_details": send.get("startup_details"),
            "sender_dropped_datagrams": send.get("drops"), "receiver_dropped_datagrams": run["receiver"].get("drops"), "cpu_s": send.get("cpu_s"),
            "transport": send.get("transport"), "completed": send.get("completed"),
        },
    )  # fmt: skip


def run_quinn(tb: Any, scenario: Path, flow: dict[str, Any], stack: str) -> StackResult:
    """quinn (``quinn:startlab``: startlab's algorithm for the flow inside quinn; ``quinn:NAME``:
    quinn's own controller) through the router running the scenario. Times from the server's
    first response byte; the window in full datagrams."""
    from . import quinn

    if flow.get("quic") is None:
        raise ValueError(f"--stacks {stack}: quinn runs QUIC flows; the scenario's flow is TCP (add `quic = {{}}` to its [[flows]] entry)")
    tb.start_router(scenario)
    try:
        run = quinn.testbed_transfer(tb, scenario, stack)
    finally:
        report = tb.stop_router()
    server, client = run["server"], run["client"]
    t0 = server["first_byte_s"] or 0.0
    mds = float(server["max_datagram_size"])
    drops = _drops(report, server["origin_mono_s"] + t0)
    exit_ = server.get("startup_exit")
    # The client's goodput: the response's bytes over its time from the first byte to the last.
    span = (client.get("completion_s") or 0.0) - (client.get("first_byte_s") or 0.0)
    return StackResult(
        stack=stack, exit_time_s=None if exit_ is None else exit_["time_s"] - t0, exit_reason="not-exited" if exit_ is None else exit_["reason"],
        exit_cwnd_pkts=None if exit_ is None else exit_["cwnd_pkts"],
        first_drop_s=drops[0] if drops else None, drop_times=drops, drops_5s=sum(1 for d in drops if 0 <= d < DROP_WINDOW_S),
        goodput_bps=client["bytes"] * 8 / span if span > 0 else None,
        cwnd=[(s["t_s"] - t0, s["cwnd"] / mds) for s in server["cwnd"]], router=_router_summary(report),
        detail={
            "completed": bool(server["completed"] and client["completed"]), "bytes": client["bytes"], "lost_packets": server["lost_packets"],
            "lost_bytes": server["lost_bytes"], "congestion_events": server["congestion_events"], "sent_packets": server["sent_packets"],
            "completion_s": None if server["completion_s"] is None else server["completion_s"] - t0, "rtt_s": server["rtt_s"],
            "controller": server.get("controller") and {k: v for k, v in server["controller"].items() if k != "cwnd"}, "error": server.get("error"),
        },
    )  # fmt: skip


def compare_real(
    scenario: str | Path,
    stacks: list[str],
    workdir: Path,
    startup: str | None = None,
    tag: str = "cmp",
    recovery: str | None = None,
    avoidance: str | None = None,
    bpf_params: dict[str, int] | None = None,
) -> list[StackResult]:
    """Run each stack on the scenario's path (one testbed for all testbed stacks); results in
    the order asked. ``startup``, ``recovery`` and ``avoidance`` override the flow's (sim and udp
    stacks). ``bpf_params`` compile the BPF stacks (all of one algorithm) and, through what they
    stand for in the Rust version (``real/bpfparams.py``), set the sim and udp stacks' startup
    parameters: ``{"PRESET": 2}`` runs msquic's HyStart++ on every stack."""
    startup_params = None
    if bpf_params:
        from . import bpfparams, kernelbpf

        ported = sorted({kernelbpf.variant(s).algorithm.sim for s in stacks if s.startswith("kernel:bpf-")})
        if len(ported) != 1:
            raise ValueError(f"--bpf-param: needs the stacks to hold BPF versions of one algorithm; they hold {len(ported)} ({', '.join(ported) or 'none'})")
        bpf = next(s for s in stacks if s.startswith("kernel:bpf-"))
        startup_params = bpfparams.rust_params(bpf.removeprefix("kernel:"), bpf_params)
        startup = startup or ported[0]
    path, flow = prepare(scenario, workdir, startup, recovery, avoidance, startup_params)
    results: list[StackResult] = []
    real = [s for s in stacks if s != "sim"]
    if real:
        from .testbed import Testbed, TestbedError, permitted

        if any(s in QUINN_STACKS for s in real):
            from . import quinn

            quinn.binary()  # a missing binary is named before any testbed is built
            if flow.get("quic") is None:
                raise ValueError("--stacks: the quinn stacks run QUIC flows; the scenario's flow is TCP (add `quic = {}` to its [[flows]] entry)")
        reason = permitted()
        if reason is not None:
            raise TestbedError(f"stacks {', '.join(real)} need the testbed, which cannot run here: {reason}")
        with Testbed(tag) as tb:
            for stack in stacks:
                if stack == "sim":
                    results.append(run_sim(path))
                elif stack == "udp":
                    results.append(run_udp(tb, path, flow))
                elif stack in QUINN_STACKS:
                    results.append(run_quinn(tb, path, flow, stack))
                else:
                    results.append(run_kernel(tb, path, flow, stack, bpf_params))
    else:
        results.append(run_sim(path))
    return results


def table(results: list[StackResult]) -> list[list[str]]:
    """Rows of the printed table (header first)."""

    def num(x: float | None, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    rows = [["stack", "exit (s)", "reason", "exit cwnd (pkts)", "first drop (s)", "drops 5 s", "goodput (Mbit/s)", "router worst late (ms)"]]
    for r in results:
        late = "-" if r.router is None else f"{r.router['lateness_worst_s'] * 1e3:.2f}" + (" LATE" if r.router["late"] else "")
        rows.append([
            r.stack, num(r.exit_time_s, ".3f"), r.exit_reason, num(r.exit_cwnd_pkts, ".0f"), num(r.first_drop_s, ".3f"),
            str(r.drops_5s), num(None if r.goodput_bps is None else r.goodput_bps / 1e6, ".2f"), late,
        ])  # fmt: skip
    return rows


def plot(results: list[StackResult], path: Path, title: str) -> None:
    """One overlaid cwnd plot: each stack's cwnd (segments) over the startup and a little after,
    its exit marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exits = [r.exit_time_s for r in results if r.exit_time_s is not None]
    end = max(exits) * 2.5 if exits else 5.0
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9"]
    for k, r in enumerate(results):
        pts = [(t, c) for t, c in r.cwnd if t <= end]
        if pts:
            ax.step([t for t, _ in pts], [c for _, c in pts], where="post", color=palette[k % len(palette)], label=r.stack, lw=1.2)
        if r.exit_time_s is not None and r.exit_cwnd_pkts is not None:
            ax.plot([r.exit_time_s], [r.exit_cwnd_pkts], "o", color=palette[k % len(palette)], ms=6, mfc="none")
    ax.set_xlim(0, end)
    ax.set_xlabel("time since the first data packet (s)")
    ax.set_ylabel("cwnd (segments)")
    ax.set_title(title)
    ax.legend(title="stack (o: startup exit)")
    fig.savefig(path)
    plt.close(fig)


def write(results: list[StackResult], out: Path, title: str) -> None:
    """``--out``: compare.json (rows, drop times and details), cwnd.png, and each stack's cwnd series."""
    out.mkdir(parents=True, exist_ok=True)
    stacks = [r.row() | {"router": r.router, "drop_times": r.drop_times, "detail": r.detail} for r in results]
    (out / "compare.json").write_text(json.dumps({"stacks": stacks}, indent=1))
    (out / "cwnd.json").write_text(json.dumps({r.stack: r.cwnd for r in results}))
    plot(results, out / "cwnd.png", title)

