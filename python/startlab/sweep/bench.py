"""``startlab bench --sweep``: sweep throughput and the store's cost per run.

1. The Paced Start Figure 8 sweep (``scenarios/sweeps/paced-start-fig8.toml``: 2 algorithms x 10
   competing rates x 3 replicates = 60 runs of 30 s) into a fresh database, with 1 worker, with
   every core, and (``--dask``) on a Dask ``LocalCluster`` of as many single-threaded worker
   processes on loopback. Reported: runs per minute of wall time (planning, process start and
   storing included), simulation time per run in the workers, and store time per run in the
   parent.
2. The store alone: one stored outcome of that sweep recorded again under 5000 new keys into a
   fresh database, timed per block of 500, to show that the cost of a transaction does not grow
   with the database.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from .._console import stdout_console
from ..bench import SCENARIOS

SWEEP = SCENARIOS / "sweeps" / "paced-start-fig8.toml"


def _throughput(jobs: int, dask: bool, directory: Path) -> dict[str, Any]:
    from . import file as sweepfile, run as sweeprun

    sweep = sweepfile.load(SWEEP)
    db = directory / f"fig8-{'dask' if dask else 'local'}-{jobs}.duckdb"
    if dask:
        import warnings

        from distributed import Client, LocalCluster

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
                report = sweeprun.run_sweep(sweep, db, dask=client, progress=False)
    else:
        report = sweeprun.run_sweep(sweep, db, jobs=jobs, progress=False)
    backend = f"Dask LocalCluster, {jobs} workers" if dask else f"local, {jobs} worker{'s' if jobs > 1 else ''}"
    return {
        "backend": backend, "runs": report.ran, "failed": report.failed, "wall": report.seconds,
        "per_minute": 60 * report.ran / report.seconds, "sim_ms": 1e3 * report.run_seconds / report.ran,
        "store_ms": 1e3 * report.store_seconds / report.ran,
    }  # fmt: skip


def _store_alone(directory: Path, total: int = 5000, block: int = 500) -> list[float]:
    """Milliseconds per recorded run, per block of ``block`` runs."""
    import startlab

    from . import file as sweepfile, run as sweeprun

    sweep = sweepfile.load(SWEEP)
    task = sweeprun.plan(sweep)[3]
    outcome = sweeprun.execute(task)
    store = sweeprun.Store(directory / "store.duckdb", sweep)
    times = []
    try:
        for start in range(0, total, block):
            began = time.perf_counter()
            for i in range(start, start + block):
                key = f"{i:032x}"
                copy = dataclasses.replace(
                    outcome, key=key,
                    flows=outcome.flows.set_column(0, "key", _keys(key, outcome.flows.num_rows)),
                    links=outcome.links.set_column(0, "key", _keys(key, outcome.links.num_rows)),
                )  # fmt: skip
                store.record(dataclasses.replace(task, key=key), copy, sweep.columns, startlab.__version__)
            times.append(1e3 * (time.perf_counter() - began) / block)
    finally:
        store.close()
    return times


def _keys(key: str, n: int) -> Any:
    import pyarrow as pa

    return pa.array([key] * n, pa.string())


def run(dask: bool = False) -> None:
    """Measure and print both tables."""
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="startlab-sweep-bench-") as tmp:
        directory = Path(tmp)
        rows = [_throughput(1, False, directory)]
        if cores > 1:
            rows.append(_throughput(cores, False, directory))
        if dask:
            rows.append(_throughput(cores, True, directory))
        blocks = _store_alone(directory)
    table = Table(title=f"Figure 8 sweep: {rows[0]['runs']} runs of 30 s simulated ({cores} cores)")
    for heading in ("backend", "wall s", "runs/min", "simulating ms/run", "store ms/run", "failed"):
        table.add_column(heading, justify="left" if heading == "backend" else "right")
    for r in rows:
        table.add_row(r["backend"], f"{r['wall']:.1f}", f"{r['per_minute']:.0f}", f"{r['sim_ms']:.0f}", f"{r['store_ms']:.1f}", str(r["failed"]))
    store = Table(title="The store alone: one run's rows recorded under new keys, ms per run")
    for i in range(len(blocks)):
        store.add_column(f"runs {i * 500 + 1}-{(i + 1) * 500}", justify="right")
    store.add_row(*(f"{b:.1f}" for b in blocks))
    console = stdout_console()
    console.print(table)
    console.print(store)
