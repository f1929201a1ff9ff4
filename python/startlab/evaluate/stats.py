"""The evaluation's statistics: per-run metrics from the stored tables, paired comparisons of a
contestant with a baseline per region, bootstrap confidence intervals and verdicts.

The test, stated once (the report and docs/EVALUATE.md repeat it):

* **Pairs.** A contestant's run and a baseline's run on the same path, workload item and seed
  form a pair. A pair where either run failed (or a metric is missing) is left out and counted.
* **Effect.** For a time (flow completion, response time, time to 90 %) or a throughput, the
  ratio of geometric means, contestant / baseline: exp(mean over pairs of log(a/b)). For a
  fraction or a delay (loss in startup, overshoot, queueing delay, fairness), the mean difference
  a - b.
* **Interval.** A percentile bootstrap with paths as clusters (a path's seeds are resampled
  together, because they share the path): 2000 resamples of the region's paths with replacement,
  the 2.5th and 97.5th percentiles of the resampled effect, from a random stream fixed by the
  suite's seed and the comparison, so the same runs always give the same interval.
* **Verdict.** "better" only when the whole interval is on the better side of no effect (a ratio
  below 1 for a time, above 1 for the incumbents' throughput; a difference on the better side of
  0), "worse" when it is wholly on the other side, else "no difference at this sample size";
  "too few paths" below 5 paths (``MIN_PATHS``). A contestant compared with itself has every pair's effect exactly
  nil (the runs are identical), so its interval is [1, 1] and the verdict "no difference".
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from .scenarios import REFERENCE
from .suite import stream

#: Bootstrap resamples and the interval's level.
RESAMPLES = 2000
LEVEL = 0.95
#: Fewer paths than this give no verdict: a percentile bootstrap over 3 or 4 clusters has only a
#: handful of distinct resamples, and its interval is far too narrow.
MIN_PATHS = 5

BETTER, WORSE, SAME, FEW = "better", "worse", "no difference at this sample size", "too few paths"

#: The test, as the report states it next to every verdict.
TEST = (f"paired runs (same path, workload and seed); effect = ratio of geometric means (times, throughputs) or mean "
        f"difference (fractions, delays); {int(LEVEL * 100)} % percentile bootstrap with paths as clusters "
        f"({RESAMPLES} resamples, fixed seed); 'better'/'worse' only when the whole interval excludes no effect; "
        f"no verdict below {MIN_PATHS} paths")  # fmt: skip


@dataclass(frozen=True)
class Metric:
    """A per-run metric a region is compared on."""

    name: str
    label: str
    kind: str  # "ratio" or "diff"
    lower_is_better: bool
    unit: str = ""


#: The metrics of each workload; the first is the workload's headline (its verdict is the region's).
METRICS: dict[str, tuple[Metric, ...]] = {
    "transfer": (
        Metric("fct", "flow completion time", "ratio", True),
        Metric("su_loss", "loss in startup", "diff", True, "% points"),
        Metric("su_marked", "CE marks in startup", "diff", True, "% points"),
        Metric("overshoot", "overshoot (x BDP)", "diff", True, "BDP"),
        Metric("time_to_90", "time to 90 % of capacity", "ratio", True),
    ),
    "join": (
        Metric("incumbent_tput", "incumbents' throughput after the join", "ratio", False),
        Metric("harm", "incumbents' throughput lost (share of capacity)", "diff", True, "% points"),
        Metric("queue_delay", "queueing delay added (window mean)", "diff", True, "ms"),
        Metric("queue_p99", "p99 queueing delay (whole run)", "diff", True, "ms"),
        Metric("jain", "Jain fairness after the join", "diff", False),
        Metric("newcomer_t90", "newcomer's time to 90 %", "ratio", True),
        Metric("su_loss", "newcomer's loss in startup", "diff", True, "% points"),
    ),
    "web": (
        Metric("response_time", "mean response time", "ratio", True),
        Metric("su_loss", "loss in startup", "diff", True, "% points"),
    ),
    "many": (
        Metric("fct", "mean flow completion time", "ratio", True),
        Metric("su_loss", "loss in startup (mean)", "diff", True, "% points"),
        Metric("jain", "Jain fairness of throughputs", "diff", False),
        Metric("overshoot", "overshoot (mean, x BDP)", "diff", True, "BDP"),
    ),
}

#: Metrics reported in percentage points or ms are scaled from their stored unit.
_SCALE = {"% points": 100.0, "ms": 1e3}


def _jain(values: np.ndarray) -> float:
    values = np.asarray(values, dtype=float)
    if len(values) == 0 or not np.all(np.isfinite(values)) or np.sum(values**2) == 0:
        return math.nan
    return float(np.sum(values) ** 2 / (len(values) * np.sum(values**2)))


def run_metrics(runs: pd.DataFrame, flows: pd.DataFrame, links: pd.DataFrame, responses: pd.DataFrame, rates: dict[str, float]) -> pd.DataFrame:
    """One row per run: its columns (algorithm, path, path_class, workload, item, replicate, seed,
    status, error, key) and its metrics; ``rates``: path id -> bottleneck rate (bit/s). A transfer not completed by the end of the run has its
    FCT censored at the run's end (``censored`` true): a lower bound, which biases a ratio towards
    1, never away from it."""
    base = runs[["key", "algorithm", "path", "path_class", "workload", "item", "replicate", "seed", "status", "error", "sim_time_s", "scenario"]].copy()
    by_key = {k: g for k, g in flows.groupby("key")} if len(flows) else {}
    link_by_key = {k: g for k, g in links.groupby("key")} if len(links) else {}
    resp_by_key = {k: g for k, g in responses.groupby("key")} if len(responses) else {}
    rows: list[dict[str, Any]] = []
    refs: dict[tuple[str, str, int], dict[str, float]] = {}
    for run in base.itertuples(index=False):
        if run.status != "ok" or run.key not in by_key:
            continue
        f = by_key[run.key]
        bottleneck = link_by_key.get(run.key)
        b = bottleneck[bottleneck["link"] == "bottleneck:left->right"].iloc[0] if bottleneck is not None else None
        if run.algorithm == REFERENCE:
            inc = f[f["flow"].str.startswith("incumbent")]
            refs[(run.path, run.item, run.replicate)] = {
                "bytes": float(inc["bytes_acked"].sum()), "departures": float(b["departures"]) if b is not None else math.nan,
                "sojourn_sum": float(b["sojourn_mean"] * b["departures"]) if b is not None else math.nan, "end": float(run.sim_time_s),
            }  # fmt: skip
            continue
        row: dict[str, Any] = {"key": run.key}
        if run.workload in ("transfer", "many"):
            fct = f["completion_time"].where(f["completed"], run.sim_time_s - f["t0"])
            row["fct"] = float(fct.mean())
            row["censored"] = bool((~f["completed"]).any())
            row["su_loss"] = float(f["su_loss"].mean())
            row["su_marked"] = float(f["su_marked"].mean())
            row["overshoot"] = float(f["overshoot"].mean())
            row["time_to_90"] = float(f["time_to_90"].mean())
            if run.workload == "many":
                row["jain"] = _jain(f["throughput"].to_numpy())
        elif run.workload == "web":
            r = resp_by_key.get(run.key)
            row["response_time"] = float(r["response_time"].mean()) if r is not None and len(r) else math.nan
            row["censored"] = not bool(f["completed"].all())
            row["su_loss"] = float(f["su_loss"].mean())
        elif run.workload == "join":
            new = f[f["flow"] == "newcomer"].iloc[0]
            inc = f[f["flow"].str.startswith("incumbent")]
            row.update(_join_raw(new, inc, b, float(run.sim_time_s)))
        rows.append(row)
    metrics = base.merge(pd.DataFrame(rows), on="key", how="left") if rows else base.assign(fct=math.nan)
    if "incumbent_bytes" in metrics:
        _finish_join(metrics, refs, rates)
    return metrics


def _join_raw(new: Any, inc: pd.DataFrame, link: Any, end: float) -> dict[str, Any]:
    return {
        "incumbent_bytes": float(inc["bytes_acked"].sum()), "incumbents": int(len(inc)),
        "newcomer_bytes": float(new["bytes_acked"]), "end": end,
        "newcomer_t90": float(new["time_to_90"]), "su_loss": float(new["su_loss"]), "overshoot": float(new["overshoot"]),
        "departures": float(link["departures"]) if link is not None else math.nan,
        "sojourn_sum": float(link["sojourn_mean"] * link["departures"]) if link is not None else math.nan,
        "queue_p99": float(link["sojourn_p99"]) if link is not None else math.nan,
    }  # fmt: skip


def _finish_join(metrics: pd.DataFrame, refs: dict[tuple[str, str, int], dict[str, float]], rates: dict[str, float]) -> None:
    """The window metrics of join runs. The reference run (incumbents alone until the join) gives
    what was acknowledged and queued before it; the rest happened in the window, after the join.
    ``harm`` is the share of the bottleneck's capacity the incumbents did not get in the window."""
    out: dict[str, list[float]] = {k: [] for k in ("incumbent_tput", "harm", "queue_delay", "jain")}
    for row in metrics.itertuples(index=False):
        ref = refs.get((row.path, row.item, row.replicate)) if row.workload == "join" else None
        if ref is None or not math.isfinite(getattr(row, "incumbent_bytes", math.nan)):
            for v in out.values():
                v.append(math.nan)
            continue
        window = row.end - ref["end"]
        inc_window = (row.incumbent_bytes - ref["bytes"]) * 8 / window
        new_window = row.newcomer_bytes * 8 / window
        n = int(row.incumbents)
        departures = row.departures - ref["departures"]
        out["incumbent_tput"].append(inc_window)
        out["harm"].append(1 - inc_window / rates[row.path] if row.path in rates else math.nan)
        out["queue_delay"].append((row.sojourn_sum - ref["sojourn_sum"]) / departures if departures > 0 else math.nan)
        # Fairness between the newcomer and the incumbents as one group each taking its share.
        out["jain"].append(_jain(np.array([inc_window / n] * n + [new_window])))
    for k, v in out.items():
        metrics[k] = v


# ----------------------------------------------------------------------------------------------
# Paired comparisons


@dataclass(frozen=True)
class Estimate:
    """A paired comparison's effect, interval and verdict."""

    metric: str
    label: str
    kind: str
    unit: str
    effect: float
    low: float
    high: float
    pairs: int
    paths: int
    dropped: int
    censored: int
    verdict: str

    def as_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}


def bootstrap(effects: np.ndarray, clusters: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float]:
    """Mean of ``effects`` and its percentile interval, resampling whole clusters."""
    labels, index = np.unique(clusters, return_inverse=True)
    sums = np.bincount(index, weights=effects, minlength=len(labels))
    counts = np.bincount(index, minlength=len(labels)).astype(float)
    point = float(effects.mean())
    if len(labels) < 2:
        return point, math.nan, math.nan
    weights = rng.multinomial(len(labels), np.full(len(labels), 1 / len(labels)), size=RESAMPLES)
    resampled = (weights @ sums) / (weights @ counts)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(resampled, [tail, 100 - tail])
    # All effects equal (an algorithm against itself): the interval is that value, exactly.
    if np.all(effects == effects[0]):
        low = high = point
    return point, float(low), float(high)


def verdict(metric: Metric, low: float, high: float, paths: int) -> str:
    if paths < MIN_PATHS or not (math.isfinite(low) and math.isfinite(high)):
        return FEW
    # Effects are on the log scale for ratios, so "no effect" is 0 for both kinds.
    if high < 0:
        return BETTER if metric.lower_is_better else WORSE
    if low > 0:
        return WORSE if metric.lower_is_better else BETTER
    return SAME


def compare(a: pd.DataFrame, b: pd.DataFrame, metric: Metric, seed_parts: tuple[Any, ...]) -> Estimate:
    """Contestant rows ``a`` against baseline rows ``b`` (the same region) on ``metric``."""
    on = ["path", "item", "replicate"]
    if metric.name not in a or metric.name not in b:  # no successful run measured it
        dropped = len(a.merge(b, on=on))
        return Estimate(metric.name, metric.label, metric.kind, metric.unit, math.nan, math.nan, math.nan, 0, 0, dropped, 0, FEW)
    cols = on + [metric.name] + (["censored"] if "censored" in a else [])
    left = a[[c for c in cols if c in a]]
    right = b[[c for c in cols if c in b]]
    pairs = left.merge(right, on=on, suffixes=("_a", "_b"))
    total = len(pairs)
    va = pairs[f"{metric.name}_a"].to_numpy(dtype=float) if total else np.array([])
    vb = pairs[f"{metric.name}_b"].to_numpy(dtype=float) if total else np.array([])
    ok = np.isfinite(va) & np.isfinite(vb)
    if metric.kind == "ratio":
        ok &= (va > 0) & (vb > 0)
    censored = 0
    if "censored_a" in pairs:
        censored = int((pairs["censored_a"].eq(True) | pairs["censored_b"].eq(True)).to_numpy()[ok].sum())
    va, vb, clusters = va[ok], vb[ok], pairs["path"].to_numpy()[ok]
    scale = _SCALE.get(metric.unit, 1.0)
    if len(va) == 0:
        return Estimate(metric.name, metric.label, metric.kind, metric.unit, math.nan, math.nan, math.nan, 0, 0, total, censored, FEW)
    effects = np.log(va) - np.log(vb) if metric.kind == "ratio" else (va - vb) * scale
    point, low, high = bootstrap(effects, clusters, stream(*seed_parts, metric.name))
    paths = len(set(clusters))
    v = verdict(metric, low, high, paths)
    if metric.kind == "ratio":
        point, low, high = math.exp(point), math.exp(low) if math.isfinite(low) else low, math.exp(high) if math.isfinite(high) else high
    return Estimate(metric.name, metric.label, metric.kind, metric.unit, point, low, high, int(len(va)), paths, total - int(len(va)), censored, v)


ALL = "all classes"


def regions(metrics: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(workload, item, path class) of every region, with each item's pooled region (``ALL``) first."""
    out = []
    ok = metrics[metrics["algorithm"] != REFERENCE]
    for (workload, item), group in ok.groupby(["workload", "item"], sort=False):
        out.append((workload, item, ALL))
        for c in sorted(group["path_class"].unique()):
            out.append((workload, item, c))
    return out


def comparisons(metrics: pd.DataFrame, contestants: list[str], baselines: list[str], suite_seed: int) -> list[dict[str, Any]]:
    """Every (contestant, baseline, region) comparison on every metric of the region's workload."""
    out = []
    for workload, item, path_class in regions(metrics):
        region = metrics[(metrics["workload"] == workload) & (metrics["item"] == item)]
        if path_class != ALL:
            region = region[region["path_class"] == path_class]
        groups = {name: g for name, g in region.groupby("algorithm")}
        for a in contestants:
            for b in baselines:
                if a not in groups or b not in groups:
                    continue
                estimates = [compare(groups[a], groups[b], m, (suite_seed, "bootstrap", a, b, workload, item, path_class)) for m in METRICS[workload]]
                out.append({"algorithm": a, "baseline": b, "workload": workload, "item": item, "path_class": path_class,
                            "verdict": estimates[0].verdict, "estimates": [e.as_dict() for e in estimates]})  # fmt: skip
    return out


def overall(metrics: pd.DataFrame, contestant: str, baseline: str, workload: str, suite_seed: int) -> Estimate | None:
    """The headline metric of ``workload`` pooled over its items and every path: the scorecard's cell."""
    region = metrics[metrics["workload"] == workload]
    a, b = region[region["algorithm"] == contestant], region[region["algorithm"] == baseline]
    if a.empty or b.empty:
        return None
    return compare(a, b, METRICS[workload][0], (suite_seed, "overall", contestant, baseline, workload))


def summary(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm and workload: runs, failures, and the medians of the main metrics (unpaired)."""
    rows = []
    for (algorithm, workload), g in metrics[metrics["algorithm"] != REFERENCE].groupby(["algorithm", "workload"], sort=True):
        ok = g[g["status"] == "ok"]
        row: dict[str, Any] = {"algorithm": algorithm, "workload": workload, "runs": len(g), "failed": int((g["status"] != "ok").sum())}
        for m in METRICS[workload]:
            if m.name in ok:
                values = ok[m.name].astype(float)
                row[f"median {m.name}"] = float(values.median()) if values.notna().any() else None
        rows.append(row)
    return pd.DataFrame(rows)
