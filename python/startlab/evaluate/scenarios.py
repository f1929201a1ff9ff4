"""From a suite's paths and workloads to scenarios (docs/SCENARIOS.md): one scenario per
(path, workload item, contestant, seed), the same path and seed for every contestant, so that
comparisons are paired.

The flows the contestant's startup runs on, per workload:

* ``transfer``: one flow ``transfer`` of the bucket's size, alone on the path; its completion time
  is the FCT.
* ``join``: ``incumbent-0..k-1`` (long-lived, the suite's ``incumbent_startup`` with CUBIC) start
  at 0; the contestant's ``newcomer`` (long-lived) joins at ``join``; the run ends ``window`` later.
  A reference run per path and seed (contestant ``REFERENCE``) has the incumbents alone until
  ``join``: what they had acknowledged at the join, so that their throughput *during the window*
  is known exactly (the runs are identical until the join: the simulator is deterministic and the
  newcomer sends nothing before it).
* ``web``: one persistent connection ``web`` of request/response exchanges (Scharf's web model).
* ``many``: N flows ``start-0..N-1`` of ``size`` each, all with the contestant's startup, starting
  within one RTT of each other.

Every flow runs Linux's TCP (CUBIC, RACK-TLP with PRR, quick-ACKs; ECN where the path's queue marks); traces are off (the tables are what
the evaluation reads).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .suite import PathSpec, Suite, Workload

#: The contestant name of the incumbents-alone reference runs of ``join``.
REFERENCE = "(incumbents alone)"

#: The TCP of every flow, Linux's: CUBIC after the startup, RACK-TLP with PRR, quick-ACKs then
#: delayed ACKs (40 ms timer); classic ECN on the paths that mark.
_TCP = {"congestion_avoidance": "cubic", "recovery": "linux", "ack": "linux"}


def _tcp(path: PathSpec) -> dict[str, Any]:
    return {**_TCP, "ecn": path.ecn}


def _seconds(x: float) -> str:
    return f"{int(round(x * 1e9))}ns"


def _rate(bps: float) -> str:
    return f"{int(round(bps))}bps"


def topology(path: PathSpec, pairs: int) -> dict[str, Any]:
    """The dumbbell of a path: its bottleneck, access links 10x faster (at least 1 Gbit/s)."""
    queue: dict[str, Any] = {"kind": path.queue, "limit": f"{path.buffer_pkts}pkt"}
    if path.queue in ("codel", "fq-codel", "pie", "dualpi2"):
        queue["ecn"] = path.ecn
    return {
        "kind": "dumbbell", "bottleneck_rate": _rate(path.rate_bps), "rtt": _seconds(path.rtt_s), "pairs": pairs,
        "access_rate": _rate(max(1e9, 10 * path.rate_bps)), "queue": queue,
    }  # fmt: skip


def impairments(path: PathSpec, trace_file: str | None) -> list[dict[str, Any]]:
    """The path's impairments: random loss and a rate trace on the bottleneck, jitter on the
    receiver side's access links, ACK aggregation on the bottleneck's reverse direction."""
    out: list[dict[str, Any]] = []
    forward: dict[str, Any] = {}
    if path.loss > 0:
        forward["loss"] = {"kind": "random", "p": path.loss}
    if trace_file is not None:
        forward["rate_trace"] = trace_file
    if forward:
        out.append({"link": "bottleneck", "direction": "forward", **forward})
    if path.aggregation_s > 0:
        out.append({"link": "bottleneck", "direction": "reverse", "aggregate": {"interval": _seconds(path.aggregation_s)}})
    return out


def _jitter(path: PathSpec, pairs: int) -> list[dict[str, Any]]:
    if path.jitter_s <= 0:
        return []
    return [{"link": f"access-d{i}", "jitter": {"kind": "uniform", "max": _seconds(path.jitter_s), "reorder": False}} for i in range(pairs)]


def _startup(algorithm: str) -> dict[str, Any]:
    return {"algorithm": algorithm}


def join_times(path: PathSpec, work: Workload) -> tuple[float, float]:
    """(join, window) of a ``join`` run on ``path``, in seconds."""
    join = max(work.options["min_join"], work.options["join_after_rtts"] * path.rtt_s)
    window = max(work.options["min_window"], work.options["window_rtts"] * path.rtt_s)
    return join, window


def applies(path: PathSpec, work: Workload) -> bool:
    """Whether a workload runs on a path (``join`` and ``many`` skip paths above their ``max_rate``,
    where long-lived flows would cost too much for the suite)."""
    return "max_rate" not in work.options or path.rate_bps <= work.options["max_rate"]


def build(suite: Suite, path: PathSpec, work: Workload, item: str, algorithm: str, seed: int, trace_file: str | None,
          plugins: list[str]) -> dict[str, Any]:  # fmt: skip
    """The scenario of one run."""
    flows: list[dict[str, Any]]
    rtt = path.rtt_s
    if work.kind == "transfer":
        size = work.options["sizes"][item]
        pairs = 1
        flows = [{"name": "transfer", "size": f"{int(size)}B", "startup": _startup(algorithm), "tcp": _tcp(path)}]
        # Enough time for a transfer at a tenth of the path's rate, plus 50 RTTs and 5 s of timeouts.
        duration = 10 * size * 8 / path.rate_bps + 50 * rtt + 5
    elif work.kind == "join":
        n = work.options["counts"][item]
        pairs = n + 1
        join, window = join_times(path, work)
        flows = [{"name": "incumbent", "count": n, "startup": _startup(work.options["incumbent_startup"]), "tcp": _tcp(path)}]
        if algorithm == REFERENCE:
            duration = join
        else:
            flows.append({"name": "newcomer", "pair": n, "start": _seconds(join), "startup": _startup(algorithm), "tcp": _tcp(path)})
            duration = join + window
    elif work.kind == "web":
        pairs = 1
        opts = work.options
        app = {"kind": "request-response", "request": f"{int(opts['request'])}B", "response": opts["response"],
               "think": _seconds(opts["think"]), "count": opts["count"]}  # fmt: skip
        flows = [{"name": "web", "app": app, "startup": _startup(algorithm), "tcp": _tcp(path)}]
        duration = opts["count"] * (opts["think"] * 4 + 100 * rtt) + 10
    elif work.kind == "many":
        n = work.options["counts"][item]
        pairs = n
        size = work.options["size"]
        flows = [{"name": "start", "count": n, "size": f"{int(size)}B", "start_jitter": _seconds(rtt), "startup": _startup(algorithm), "tcp": _tcp(path)}]
        duration = 10 * n * size * 8 / path.rate_bps + 50 * rtt + 5
    else:  # pragma: no cover - the suite's check refuses other kinds
        raise ValueError(work.kind)
    duration = min(duration, suite.max_duration)
    scenario: dict[str, Any] = {
        "name": f"{suite.name}/{path.id}/{work.kind}/{item}/{algorithm}",
        "seed": seed,
        "duration": _seconds(math.ceil(duration * 1000) / 1000),
        "topology": topology(path, pairs),
        "flows": flows,
        "trace": {"cwnd": False, "seq": False, "queue": False},
    }
    impaired = impairments(path, trace_file) + _jitter(path, pairs)
    if impaired:
        scenario["impairments"] = impaired
    if plugins:
        scenario["plugins"] = list(plugins)
    return scenario


def trace_file(path: PathSpec, directory: Path) -> str | None:
    """The trace of a path: a user's file as it is, or a generated one written to ``directory``
    (the same file for the same suite, seed and path, whoever writes it)."""
    if path.trace_spec is None:
        return path.trace
    from . import traces

    spec = path.trace_spec
    file = directory / f"{path.id}-{spec['kind']}-{spec['seed']:x}.down"
    if not file.is_file():
        stamps = traces.generate(spec["kind"], spec["mean_rate_bps"], traces.TRACE_SECONDS, spec["seed"])
        header = f"startlab evaluate: {spec['kind']} trace, asked mean {spec['mean_rate_bps'] / 1e6:.4g} Mbit/s, seed {spec['seed']}\n"
        traces.write(file, stamps, header + traces.describe(traces.stats(stamps)))
    return str(file.resolve())
