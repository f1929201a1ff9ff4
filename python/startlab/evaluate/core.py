"""``startlab.evaluate``'s entry point: load the suite, check the contestants, run (or resume) the
runs, and write the report and the JSON from what the database holds."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import report, stats
from .scenarios import REFERENCE, build, trace_file
from .run import Contestants, EvaluateError, resolve, run
from .suite import Suite, SuiteError, load

__all__ = ["EvaluateError", "SuiteError", "collect", "evaluate"]


def evaluate(
    algorithms: Sequence[str],
    suite: str | os.PathLike[str] = "quick",
    *,
    out: str | os.PathLike[str],
    baselines: Sequence[str] | None = None,
    plugins: Sequence[str] = (),
    db: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    dask: Any = None,
    progress: bool | None = None,
    log: bool = False,
    command: str = "",
) -> dict[str, Any]:
    """Evaluate ``algorithms`` (names, or plug-ins as ``module:Class``) on a suite against its
    baselines (or ``baselines``); write ``out/index.html`` and ``out/evaluate.json`` and return the
    JSON document. Runs are stored in ``db`` (default ``out/evaluate.duckdb``); calling again
    with the same database runs only what is missing.

    Raises:
        SuiteError: the suite is unknown or refused (key path and what is accepted).
        EvaluateError: an unknown algorithm or baseline, a plug-in that cannot be imported.
        startlab.sweep.SweepInterrupted: Ctrl-C or a lost Dask cluster (stored runs stay).
    """
    import startlab

    chosen = load(suite)
    contestants = resolve(list(algorithms), list(baselines) if baselines is not None else chosen.baselines, list(plugins))
    out_dir = Path(out)
    database = Path(db) if db is not None else out_dir / "evaluate.duckdb"
    done = run(chosen, contestants, database, jobs=jobs, dask=dask, progress=progress, log=log)
    meta = {"version": startlab.__version__, "command": command, "backend": done.backend, "seconds": round(done.seconds, 3),
            "db": str(database.resolve()), "plugins": contestants.modules,
            "skipped": done.skipped, "ran": done.ran}  # fmt: skip
    return collect(chosen, contestants, database, out_dir, meta)


def collect(suite: Suite, contestants: Contestants, db: Path, out: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The report and JSON of what ``db`` holds for this suite and these contestants."""
    from ..sweep.db import SweepResults

    results = SweepResults(db)
    runs = results.runs()
    names = set(contestants.algorithms) | set(contestants.baselines) | {REFERENCE}
    runs = runs[runs["algorithm"].isin(names)]
    tables = {r[0] for r in results.sql("SELECT table_name FROM information_schema.tables").itertuples(index=False)}
    flows = results.sql("SELECT * FROM flows") if "flows" in tables else _empty()
    links = results.sql("SELECT * FROM links WHERE link = 'bottleneck:left->right'") if "links" in tables else _empty()
    responses = results.sql("SELECT key, response_time FROM responses") if "responses" in tables else _empty()
    rates = {p.id: float(p.rate_bps) for p in suite.paths()}
    metrics = stats.run_metrics(runs, flows, links, responses, rates)
    doc = report.build(suite, contestants.algorithms, contestants.baselines, metrics, meta)
    out.mkdir(parents=True, exist_ok=True)
    report.write_json(out, doc)
    wanted = {w[k] for w in doc["worst"] for k in ("key", "key_baseline")}
    report.write_html(out, doc, suite, metrics, _scenarios(suite, contestants, metrics[metrics["key"].isin(wanted)], db.parent / "traces"))
    return doc


def _scenarios(suite: Suite, contestants: Contestants, rows: Any, trace_dir: Path) -> dict[str, str]:
    """The scenario files (JSON text) of some runs, built again as they were run: the report lets
    a reader download them and run them with ``startlab run``."""
    paths = {p.id: p for p in suite.paths()}
    works = {w.kind: w for w in suite.workloads}
    out = {}
    for r in rows.itertuples(index=False):
        path = paths[r.path]
        scenario = build(suite, path, works[r.workload], r.item, r.algorithm, int(r.seed), trace_file(path, trace_dir), contestants.modules)
        out[r.key] = json.dumps(scenario, indent=1)
    return out


def _empty() -> Any:
    import pandas as pd

    return pd.DataFrame({"key": pd.Series(dtype=str)})
