"""Running a sweep: plan the runs, execute them on a local process pool or a Dask cluster, and
store every result in a DuckDB file, one transaction per run.

Resumability. Every run has a stable key: a hash of its fully resolved scenario (seed included)
and the startlab version. A run is stored — its ``runs`` row, its ``flows`` and ``links`` rows —
in one transaction, by this process only; workers never touch the database. Killing the sweep at
any moment (SIGKILL included) leaves every committed run in place and no part of another one, and
running the sweep again skips the runs already stored (failed ones too, unless asked to retry).

Determinism. A run's seed derives from the sweep's seed and the run's axis values
(:func:`startlab.sweepfile.derive_seed`) and a run's results depend only on its scenario, so the
tables are the same whatever the backend, the number of workers and the order of completion;
only ``wall_s`` and ``finished_at`` (timings) differ.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from .sweepfile import Column, Limits, RunSpec, Sweep

#: Runs kept in flight per local worker (bounds the memory of queued work).
_IN_FLIGHT_PER_WORKER = 4

#: The per-run memory limit, when none is set, is this share of the machine's memory divided among
#: the workers.
_DEFAULT_MEMORY_SHARE = 0.8

#: Columns of ``runs`` before the axis columns and after them.
_RUN_HEAD = [("key", "VARCHAR PRIMARY KEY"), ("point", "INTEGER"), ("replicate", "INTEGER"), ("seed", "UBIGINT")]
_RUN_TAIL = [
    ("status", "VARCHAR"), ("error", "VARCHAR"), ("wall_s", "DOUBLE"), ("events", "UBIGINT"),
    ("sim_time_s", "DOUBLE"), ("warmup_end", "DOUBLE"), ("version", "VARCHAR"), ("scenario", "VARCHAR"),
    ("finished_at", "TIMESTAMP"),
]  # fmt: skip


@dataclass(frozen=True)
class Task:
    """One run as sent to a worker (picklable)."""

    key: str
    point: int
    replicate: int
    seed: int
    values: dict[str, Any]
    scenario: dict[str, Any]
    base_dir: str | None
    limits: Limits
    trace_dir: str | None
    resolved: str | None  # the normalized scenario (JSON); None when it was refused
    refused: str | None  # the refusal message


@dataclass
class Outcome:
    """What a worker sends back."""

    key: str
    status: str
    error: str | None
    wall_s: float
    events: int | None = None
    sim_time_s: float | None = None
    warmup_end: float | None = None
    flows: Any = None  # pyarrow.Table with the run's key first
    links: Any = None
    traces: dict[str, str] | None = None


@dataclass
class Report:
    """What a call to :func:`run_sweep` did."""

    db: Path
    total: int
    skipped: int
    ran: int
    failed: int
    duplicates: int
    seconds: float
    backend: str
    store_seconds: float = 0.0
    run_seconds: float = 0.0


def run_key(resolved: str, version: str) -> str:
    """The stable key of a run: SHA-256 of the startlab version and the resolved scenario."""
    return hashlib.sha256(f"startlab {version}\n{resolved}".encode()).hexdigest()[:32]


def plan(sweep: Sweep, *, limits: Limits | None = None, trace_dir: Path | None = None) -> list[Task]:
    """Every run of the sweep, resolved and keyed. A scenario the simulator refuses becomes a task
    that is recorded as failed without running."""
    import startlab
    from . import _core

    version = startlab.__version__
    limits = limits or sweep.limits
    tasks = []
    for spec in sweep.runs():
        text = json.dumps(spec.scenario, sort_keys=True)
        try:
            resolved: str | None = json.dumps(json.loads(_core.normalize(text, "json", sweep.base_dir)), sort_keys=True)
            refused = None
            key = run_key(resolved, version)
        except startlab.ScenarioError as e:
            resolved, refused = None, f"ScenarioError: {e}"
            key = run_key("refused\n" + text, version)
        tasks.append(_task(spec, key, sweep.base_dir, limits, trace_dir, resolved, refused))
    return tasks


def _task(spec: RunSpec, key: str, base: str | None, limits: Limits, trace_dir: Path | None, resolved: str | None, refused: str | None) -> Task:
    traces = str(trace_dir / key) if trace_dir is not None else None
    return Task(key, spec.point, spec.replicate, spec.seed, spec.values, spec.scenario, base, limits, traces, resolved, refused)


def execute(task: Task) -> Outcome:
    """Run one task (in a worker): never raises for a failing run; the error is in the outcome."""
    import startlab

    started = time.perf_counter()
    if task.refused is not None:
        return Outcome(task.key, "failed", task.refused, 0.0)
    _tune_malloc()
    try:
        result = startlab.run(
            task.scenario, progress=False, base=task.base_dir, max_events=task.limits.max_events,
            max_sim_time=task.limits.max_sim_time, max_memory=task.limits.max_memory,
        )  # fmt: skip
        traces = _write_traces(result, Path(task.trace_dir)) if task.trace_dir else None
    except MemoryError:
        return Outcome(task.key, "failed", "MemoryError: the run ran out of memory", time.perf_counter() - started)
    except Exception as e:  # recorded with the run; the sweep goes on
        return Outcome(task.key, "failed", f"{type(e).__name__}: {e}", time.perf_counter() - started)
    return Outcome(
        task.key, "ok", None, time.perf_counter() - started,
        events=int(result.stats["events"]), sim_time_s=result.stats["sim_time_ns"] / 1e9,
        warmup_end=result.warmup_end, flows=_arrow(task.key, result.flows), links=_arrow(task.key, result.links),
        traces=traces,
    )  # fmt: skip


def _arrow(key: str, frame: pd.DataFrame) -> Any:
    """A result table as Arrow, the run's key first (built in the worker: the store only scans it)."""
    import pyarrow as pa

    data = _plain_frame(frame)
    data.insert(0, "key", key)
    return pa.Table.from_pandas(data, preserve_index=False)


def _plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as text, so that every run's table has the same column types."""
    out = frame.copy()
    for name in out.columns:
        if isinstance(out[name].dtype, pd.CategoricalDtype):
            out[name] = out[name].astype(str)
    return out


def _write_traces(result: Any, directory: Path) -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for kind in ("cwnd", "seq", "queue"):
        frame = getattr(result.traces, kind)
        if frame is None or frame.empty:
            continue
        path = directory / f"{kind}.parquet"
        tmp = path.with_suffix(".parquet.tmp")
        _plain_frame(frame).to_parquet(tmp, index=False)
        os.replace(tmp, path)
        written[kind] = str(path)
    return written


class Store:
    """The sweep's DuckDB database: ``sweep``, ``axes``, ``runs``, ``flows``, ``links`` and
    ``traces`` (see docs/SWEEPS.md)."""

    def __init__(self, path: Path, sweep: Sweep) -> None:
        import duckdb

        import startlab

        self.path = path
        try:
            self.con = duckdb.connect(str(path))
        except duckdb.Error as e:
            raise OSError(f"{path}: cannot open the sweep database ({e})") from None
        self._tables: dict[str, set[str]] = {}
        self._create(sweep, startlab.__version__)

    def close(self) -> None:
        self.con.close()

    def _columns(self, table: str) -> set[str]:
        rows = self.con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()
        return {r[0] for r in rows}

    def _create(self, sweep: Sweep, version: str) -> None:
        con = self.con
        con.execute("BEGIN")
        con.execute(
            "CREATE TABLE IF NOT EXISTS sweep (name VARCHAR, seed UBIGINT, replicates INTEGER, source VARCHAR, version VARCHAR, created TIMESTAMP)"
        )
        con.execute("DELETE FROM sweep")
        con.execute("INSERT INTO sweep VALUES (?, ?, ?, ?, ?, now())", [sweep.name, sweep.seed, sweep.replicates, sweep.source, version])
        con.execute("CREATE TABLE IF NOT EXISTS axes (position INTEGER, name VARCHAR, keys VARCHAR, kind VARCHAR, unit VARCHAR, type VARCHAR)")
        con.execute("DELETE FROM axes")
        for i, c in enumerate(sweep.columns):
            con.execute("INSERT INTO axes VALUES (?, ?, ?, ?, ?, ?)", [i, c.name, json.dumps(list(c.keys)), c.kind, c.unit, c.type])
        columns = ", ".join(f'"{n}" {t}' for n, t in _RUN_HEAD + [(c.name, c.type) for c in sweep.columns] + _RUN_TAIL)
        con.execute(f"CREATE TABLE IF NOT EXISTS runs ({columns})")
        have = self._columns("runs")
        for c in sweep.columns:
            if c.name not in have:
                con.execute(f'ALTER TABLE runs ADD COLUMN "{c.name}" {c.type}')
        con.execute("CREATE TABLE IF NOT EXISTS traces (key VARCHAR, kind VARCHAR, path VARCHAR)")
        con.execute("COMMIT")
        self._tables = {t: self._columns(t) for t in ("runs", "flows", "links")}

    def stored(self) -> dict[str, str]:
        """Key -> status of every stored run."""
        return dict(self.con.execute("SELECT key, status FROM runs").fetchall())

    def record(self, task: Task, outcome: Outcome, columns: list[Column], version: str) -> None:
        """Store one run in one transaction (replacing a failed attempt of the same key)."""
        con = self.con
        con.execute("BEGIN")
        try:
            # Only a failed run is ever stored again (--retry-failed), and a failed run has no
            # flows, links or traces rows: its runs row is all there is to replace.
            con.execute("DELETE FROM runs WHERE key = ?", [task.key])
            names = [n for n, _ in _RUN_HEAD] + [c.name for c in columns] + [n for n, _ in _RUN_TAIL[:-1]]
            values = [task.key, task.point, task.replicate, task.seed]
            values += [task.values[c.name] for c in columns]
            values += [outcome.status, outcome.error, outcome.wall_s, outcome.events, outcome.sim_time_s, outcome.warmup_end, version, task.resolved]
            marks = ", ".join("?" for _ in names)
            quoted = ", ".join(f'"{n}"' for n in names)
            con.execute(f"INSERT INTO runs ({quoted}, finished_at) VALUES ({marks}, now())", values)
            for table, frame in (("flows", outcome.flows), ("links", outcome.links)):
                if frame is not None and frame.num_rows:
                    self._insert(table, frame)
            for kind, path in (outcome.traces or {}).items():
                con.execute("INSERT INTO traces VALUES (?, ?, ?)", [task.key, kind, path])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _insert(self, table: str, data: Any) -> None:
        con = self.con
        # An Arrow table is scanned by DuckDB without a per-column round trip through pandas.
        con.register("incoming", data)
        try:
            if not self._tables[table]:
                con.execute(f"CREATE TABLE {table} AS SELECT * FROM incoming")
                self._tables[table] = set(data.column_names)
                return
            missing = [c for c in data.column_names if c not in self._tables[table]]
            if missing:
                types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM incoming)").fetchall())
                for c in missing:
                    con.execute(f'ALTER TABLE {table} ADD COLUMN "{c}" {types[c]}')
                    self._tables[table].add(c)
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
        finally:
            con.unregister("incoming")


def default_memory_limit(workers: int) -> int | None:
    """A share of the machine's memory per worker (None where it cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return int(total * _DEFAULT_MEMORY_SHARE / max(workers, 1))


def run_sweep(
    sweep: Sweep,
    db: Path,
    *,
    jobs: int | None = None,
    dask: Any = None,
    traces: bool | None = None,
    retry_failed: bool = False,
    limits: Limits | None = None,
    progress: bool | None = None,
    log: bool = False,
) -> Report:
    """Run every run of ``sweep`` not yet stored in ``db``.

    ``jobs``: local worker processes (default: every core). ``dask``: a scheduler address or a
    ``distributed.Client``; when given, runs go to that cluster instead. ``traces``: also store
    the traces as Parquet files in ``<db>.traces/`` (default: the sweep file's ``traces``).
    ``limits`` overrides the sweep file's; without a memory limit each run gets a share of the
    machine's memory. ``progress``: a progress bar on stderr (default: when stderr is a terminal).
    ``log``: one line on stderr per stored run (for logs of non-interactive jobs).
    """
    import startlab

    started = time.perf_counter()
    version = startlab.__version__
    jobs = jobs or os.cpu_count() or 1
    if jobs < 1:
        raise ValueError(f"jobs = {jobs}: expected at least 1 worker")
    limits = limits or sweep.limits
    if limits.max_memory is None and dask is None:
        limits = replace(limits, max_memory=default_memory_limit(jobs))
    with_traces = sweep.traces if traces is None else traces
    trace_dir = db.with_name(db.name + ".traces") if with_traces else None
    tasks = plan(sweep, limits=limits, trace_dir=trace_dir)
    unique: dict[str, Task] = {}
    for t in tasks:
        unique.setdefault(t.key, t)
    duplicates = len(tasks) - len(unique)
    store = Store(db, sweep)
    try:
        stored = store.stored()
        todo = [t for k, t in unique.items() if k not in stored or (retry_failed and stored[k] == "failed")]
        skipped = len(unique) - len(todo)
        backend = f"dask {_address(dask)}" if dask is not None else f"local, {jobs} worker{'s' if jobs > 1 else ''}"
        failed = 0
        store_seconds = run_seconds = 0.0
        with _Progress(len(unique), skipped, progress, log) as bar:
            # Refused scenarios are recorded at once; the rest go to the backend.
            ready = [t for t in todo if t.refused is not None]
            runnable = [t for t in todo if t.refused is None]
            outcomes = itertools.chain(((t, execute(t)) for t in ready), _dask(runnable, dask) if dask is not None else _local(runnable, jobs))
            for task, outcome in outcomes:
                before = time.perf_counter()
                store.record(task, outcome, sweep.columns, version)
                store_seconds += time.perf_counter() - before
                run_seconds += outcome.wall_s
                failed += outcome.status != "ok"
                bar.advance(task, outcome)
    finally:
        store.close()
    return Report(db, len(unique), skipped, len(todo), failed, duplicates, time.perf_counter() - started, backend, store_seconds, run_seconds)


def _address(dask: Any) -> str:
    return dask if isinstance(dask, str) else str(getattr(getattr(dask, "scheduler", None), "address", "client"))


def _worker_init() -> None:
    """Local workers ignore Ctrl-C: the parent handles it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: glibc's mallopt parameter M_MMAP_THRESHOLD (malloc.h).
_M_MMAP_THRESHOLD = -3
_malloc_tuned = False


def _tune_malloc() -> None:
    """Fix glibc's mmap threshold at its initial 128 KiB, which turns off its dynamic threshold.
    A worker runs simulation after simulation, each growing and freeing large trace and result
    buffers; with the dynamic threshold (raised as soon as a large block is freed) they come from
    the heap, which grows and is trimmed again run after run. Measured on the Figure 8 sweep:
    8.4 s -> 5.3 s for 24 runs in one process (docs/PERFORMANCE.md). Once per process; nothing
    happens elsewhere than glibc."""
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, 128 * 1024)
    except (OSError, AttributeError):
        pass


def _pool(workers: int) -> cf.ProcessPoolExecutor:
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init)


def _local(tasks: list[Task], jobs: int, work: Callable[[Task], Outcome] = execute) -> Iterator[tuple[Task, Outcome]]:
    """Runs on a pool of ``jobs`` processes, yielding each outcome as it completes. A worker that
    dies (a crash, the kernel's OOM killer) breaks the pool: the runs that were in flight are
    retried one at a time in a fresh process, and the one that kills its process again is recorded
    as failed."""
    pending = list(reversed(tasks))
    while pending:
        suspects: list[Task] = []
        workers = min(jobs, len(pending))
        with _pool(workers) as pool:
            flying: dict[cf.Future[Outcome], Task] = {}
            try:
                broken = False
                while (pending or flying) and not broken:
                    while pending and len(flying) < workers * _IN_FLIGHT_PER_WORKER:
                        task = pending.pop()
                        flying[pool.submit(work, task)] = task
                    done, _ = cf.wait(flying, return_when=cf.FIRST_COMPLETED)
                    for future in done:
                        try:
                            outcome = future.result()
                        except cf.process.BrokenProcessPool:
                            broken = True  # every run still in flight is a suspect
                            continue
                        yield flying.pop(future), outcome
                suspects = list(flying.values())
            except BaseException:
                for future in flying:
                    future.cancel()
                raise
        for task in suspects:
            yield task, _isolated(task, work)


def _isolated(task: Task, work: Callable[[Task], Outcome] = execute) -> Outcome:
    """Run one task alone in a fresh process; if that process dies too, the run failed."""
    with _pool(1) as pool:
        try:
            return pool.submit(work, task).result()
        except cf.process.BrokenProcessPool:
            return Outcome(task.key, "failed", "WorkerDied: the worker process ended abruptly while running this run (killed, out of memory or crashed)", 0.0)


def _dask(tasks: list[Task], dask: Any) -> Iterator[tuple[Task, Outcome]]:
    """Runs on a Dask distributed cluster (a scheduler address or a Client)."""
    from distributed import Client, as_completed

    client = Client(dask, set_as_default=False) if isinstance(dask, str) else dask
    try:
        futures = {client.submit(execute, t, key=f"startlab-run-{t.key}", pure=False): t for t in tasks}
        for future in as_completed(futures):
            task = futures[future]
            try:
                outcome = future.result()
            except Exception as e:  # the worker died (KilledWorker) or the cluster lost the task
                outcome = Outcome(task.key, "failed", f"{type(e).__name__}: {e}", 0.0)
            future.release()
            yield task, outcome
    finally:
        if isinstance(dask, str):
            client.close()


class _Progress:
    """A progress bar of runs done / total, failures and ETA on stderr; silent when stderr is not a
    terminal (unless forced on)."""

    def __init__(self, total: int, already: int, show: bool | None, log: bool = False) -> None:
        self.total, self.done = total, already
        self.show = sys.stderr.isatty() if show is None else show
        self.log = log
        self.failed = 0
        self.bar: Any = None

    def __enter__(self) -> _Progress:
        if self.show:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                TextColumn("[red]{task.fields[failed]} failed"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(stderr=True), transient=False,
            )  # fmt: skip
            self.bar.__enter__()
            self.task = self.bar.add_task("sweep", total=self.total, completed=self.done, failed=0)
        return self

    def advance(self, task: Task, outcome: Outcome) -> None:
        failed = outcome.status != "ok"
        self.failed += failed
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, failed=self.failed)
        if self.log:
            line = f"[{self.done}/{self.total}] {outcome.status} {task.key} point {task.point} replicate {task.replicate} ({outcome.wall_s:.2f} s)"
            print(line + (f": {outcome.error}" if outcome.error else ""), file=sys.stderr, flush=True)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def describe(report: Report) -> str:
    """One line about what a sweep call did."""
    per_minute = 60 * report.ran / report.seconds if report.seconds > 0 and report.ran else math.nan
    parts = [
        f"{report.total} runs: {report.skipped} already stored, {report.ran} run ({report.failed} failed)",
        f"in {report.seconds:.1f} s" + (f" ({per_minute:.0f} runs/min)" if math.isfinite(per_minute) else ""),
        f"on {report.backend}",
    ]
    if report.ran:
        parts.append(f"store {1e3 * report.store_seconds / report.ran:.1f} ms/run against {1e3 * report.run_seconds / report.ran:.0f} ms/run simulating")
    if report.duplicates:
        parts.append(f"{report.duplicates} duplicate grid points (same scenario and seed) run once")
    return "; ".join(parts) + f" -> {report.db}"


__all__ = ["Outcome", "Report", "Store", "Task", "describe", "execute", "plan", "run_key", "run_sweep"]
