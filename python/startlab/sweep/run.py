"""Running a sweep: plan the runs, execute them on a local process pool or a Dask cluster, and
store every result in a DuckDB file, one transaction per run.

Resumability. Every run has a stable key: a hash of its fully resolved scenario (seed included)
and the startlab version. A run is stored — its ``runs`` row, its ``flows`` and ``links`` rows —
in one transaction, by this process only; workers never touch the database. Killing the sweep at
any moment (SIGKILL included) leaves every committed run in place and no part of another one, and
running the sweep again skips the runs already stored (failed ones too, unless asked to retry).

Determinism. A run's seed derives from the sweep's seed and the run's axis values
(:func:`startlab.sweep.file.derive_seed`) and a run's results depend only on its scenario, so the
tables are the same whatever the backend, the number of workers and the order of completion;
only ``wall_s`` and ``finished_at`` (timings) differ.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from .file import Column, Limits, RunSpec, Sweep

#: Runs kept in flight per local worker (bounds the memory of queued work).
_IN_FLIGHT_PER_WORKER = 4

#: The per-run memory limit, when none is set: this share of the machine's memory.
_DEFAULT_MEMORY_SHARE = 0.5

#: Columns of ``runs`` before the axis columns and after them.
_RUN_HEAD = [("key", "VARCHAR PRIMARY KEY"), ("point", "INTEGER"), ("replicate", "INTEGER"), ("seed", "UBIGINT")]
_RUN_TAIL = [
    ("status", "VARCHAR"), ("error", "VARCHAR"), ("wall_s", "DOUBLE"), ("events", "UBIGINT"),
    ("sim_time_s", "DOUBLE"), ("warmup_end", "DOUBLE"), ("version", "VARCHAR"), ("scenario", "VARCHAR"),
    ("finished_at", "TIMESTAMP"),
]  # fmt: skip


class SweepStoreError(OSError):
    """The database cannot hold this sweep (in use, not a sweep database, an axis changed type)."""


class SweepInterrupted(RuntimeError):
    """Ctrl-C, or the Dask cluster went away: the runs stored so far stay; rerunning resumes."""


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def connect_db(path: Path, read_only: bool = False) -> Any:
    """Open the database, with one-line errors for the usual reasons it cannot be."""
    import duckdb

    if read_only and not path.is_file():
        raise SweepStoreError(f"sweep database not found: {path}")
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as e:
        text = str(e)
        if "lock" in text.lower():
            raise SweepStoreError(f"{path} is in use by another process (a running sweep?); try again when it ends") from None
        raise SweepStoreError(f"{path}: cannot open the sweep database ({_first_line(e)})") from None


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
    #: ``responses``, ``transfers``, ``probes``, ``probe_packets`` of the runs that have rows.
    tables: dict[str, Any] | None = None


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
    archived: int = 0
    restored: int = 0


def run_key(resolved: str, version: str, files: dict[str, str] | None = None) -> str:
    """The stable key of a run: SHA-256 of the startlab version, the resolved scenario and the
    SHA-256 of each file the scenario names (``files``: name -> digest, see ``named_files``)."""
    named = "".join(f"\nfile {name} sha256 {digest}" for name, digest in sorted((files or {}).items()))
    return hashlib.sha256(f"startlab {version}\n{resolved}{named}".encode()).hexdigest()[:32]


def named_files(resolved: Any, base_dir: Path | None) -> dict[str, str]:
    """The SHA-256 of every file a resolved scenario names (a ``file`` key anywhere in it, such as
    an impairment's ``rate_trace.file``), read relative to ``base_dir``: editing a trace gives its
    runs new keys, so they are run again. A file that cannot be read is left out (the scenario
    check has then refused the scenario already)."""
    found: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "file" and isinstance(value, str) and value not in found:
                    try:
                        found[value] = hashlib.sha256((Path(base_dir or ".") / value).read_bytes()).hexdigest()
                    except OSError:
                        pass
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(resolved)
    return found


def plan(sweep: Sweep, *, limits: Limits | None = None, trace_dir: Path | None = None) -> list[Task]:
    """Every run of the sweep, resolved and keyed. A scenario the simulator refuses becomes a task
    that is recorded as failed without running."""
    import startlab
    from .. import _core

    version = startlab.__version__
    limits = limits or sweep.limits
    tasks = []
    for spec in sweep.runs():
        text = json.dumps(spec.scenario, sort_keys=True)
        try:
            startlab._plugins(text, "json", sweep.base_dir)  # the modules that register its plug-ins
            tree = json.loads(_core.normalize(text, "json", sweep.base_dir))
            resolved: str | None = json.dumps(tree, sort_keys=True)
            refused = None
            key = run_key(resolved, version, named_files(tree, sweep.base_dir))
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
            max_sim_time=task.limits.max_sim_time, max_memory=task.limits.max_memory, max_wall=task.limits.max_wall,
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
        traces=traces, tables=_extra_tables(task.key, result),
    )  # fmt: skip


#: Result tables a sweep stores beside ``flows`` and ``links`` when a run has rows of them.
EXTRA_TABLES = ("responses", "transfers", "probes", "probe_packets")


def _extra_tables(key: str, result: Any) -> dict[str, Any]:
    out = {}
    for name in EXTRA_TABLES:
        frame = getattr(result, name, None)
        if frame is not None and len(frame):
            out[name] = _arrow(key, frame)
    return out


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
    for kind in ("cwnd", "seq", "queue", "packets"):
        frame = getattr(result.traces, kind)
        if frame is None or frame.empty:
            continue
        path = directory / f"{kind}.parquet"
        tmp = path.with_suffix(".parquet.tmp")
        _plain_frame(frame).to_parquet(tmp, index=False)
        os.replace(tmp, path)
        written[kind] = str(path)
    return written


#: Tables holding rows of stored runs (by ``key``).
_STORED = ("runs", "flows", "links", "traces", *EXTRA_TABLES)


class Store:
    """The sweep's DuckDB database: ``sweep``, ``axes``, ``runs``, ``flows``, ``links``,
    ``traces`` and, when runs have rows of them, ``responses``, ``transfers``, ``probes`` and
    ``probe_packets`` (see docs/SWEEPS.md)."""

    def __init__(self, path: Path, sweep: Sweep) -> None:
        import duckdb

        import startlab

        self.path = path
        self.con = connect_db(path)
        self._tables: dict[str, dict[str, str]] = {}
        try:
            self._create(sweep, startlab.__version__)
        except SweepStoreError:
            self.con.close()
            raise
        except duckdb.Error as e:
            self.con.close()
            raise SweepStoreError(f"{path}: not a startlab sweep database, or a damaged one ({_first_line(e)})") from None

    def close(self) -> None:
        self.con.close()

    def _columns(self, table: str) -> dict[str, str]:
        """Column name -> type of ``table`` (empty when it does not exist)."""
        rows = self.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [table]
        ).fetchall()
        return dict(rows)

    def _create(self, sweep: Sweep, version: str) -> None:
        con = self.con
        have = self._columns("runs")
        for c in sweep.columns:
            stored = have.get(c.name)
            if stored is not None and stored != c.type:
                raise SweepStoreError(
                    f"{self.path}: axis {c.name!r} holds {c.type} values now but the database stores it as {stored}; "
                    "rename the axis, or give the sweep its own --db"
                )
        con.execute("BEGIN")
        con.execute(
            "CREATE TABLE IF NOT EXISTS sweep (name VARCHAR, seed UBIGINT, replicates INTEGER, source VARCHAR, version VARCHAR, created TIMESTAMP)"
        )
        created = con.execute("SELECT min(created) FROM sweep").fetchone()
        con.execute("DELETE FROM sweep")
        con.execute(
            "INSERT INTO sweep VALUES (?, ?, ?, ?, ?, coalesce(?, now()))",
            [sweep.name, sweep.seed, sweep.replicates, sweep.source, version, created[0] if created else None],
        )
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
        self._tables = {t: self._columns(t) for t in _STORED}

    def keep_only(self, keys: Iterable[str]) -> tuple[int, int]:
        """Make ``runs``, ``flows``, ``links`` and ``traces`` hold the runs of ``keys`` (the current
        sweep) only: other stored runs move to ``archive_*`` tables, and archived runs whose key is
        back move home. Nothing is deleted. One transaction. Returns (archived, restored) runs."""
        import pyarrow as pa

        con = self.con
        con.register("plan_keys", pa.table({"key": pa.array(sorted(set(keys)), pa.string())}))
        moved = [0, 0]
        con.execute("BEGIN")
        try:
            for table in _STORED:
                home = self._tables.get(table) or {}
                archive = f"archive_{table}"
                if not home:
                    continue
                stored = self._columns(archive)
                if not stored:
                    con.execute(f"CREATE TABLE {archive} AS SELECT * FROM {table} LIMIT 0")
                    stored = dict(home)
                for name, kind in home.items():
                    if name not in stored:
                        con.execute(f'ALTER TABLE {archive} ADD COLUMN "{name}" {kind}')
                for name, kind in stored.items():
                    if name not in home:
                        con.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {kind}')
                        home[name] = kind
                back = f"{archive} WHERE key IN (SELECT key FROM plan_keys)"
                away = f"{table} WHERE key NOT IN (SELECT key FROM plan_keys)"
                if table == "runs":
                    moved[1] = con.execute(f"SELECT count(*) FROM {back}").fetchone()[0]  # type: ignore[index]
                    moved[0] = con.execute(f"SELECT count(*) FROM {away}").fetchone()[0]  # type: ignore[index]
                con.execute(f"CREATE TEMP TABLE restoring AS SELECT * FROM {back}")
                con.execute(f"DELETE FROM {back}")
                con.execute(f"INSERT INTO {archive} BY NAME SELECT * FROM {away}")
                con.execute(f"DELETE FROM {away}")
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM restoring")
                con.execute("DROP TABLE restoring")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            con.unregister("plan_keys")
        return moved[0], moved[1]

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
            for table, frame in (("flows", outcome.flows), ("links", outcome.links), *(outcome.tables or {}).items()):
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
                self._tables[table] = self._columns(table)
                return
            missing = [c for c in data.column_names if c not in self._tables[table]]
            if missing:
                types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM incoming)").fetchall())
                for c in missing:
                    con.execute(f'ALTER TABLE {table} ADD COLUMN "{c}" {types[c]}')
                    self._tables[table][c] = types[c]
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
        finally:
            con.unregister("incoming")


def default_memory_limit() -> int | None:
    """How much a run may grow by default: half the machine's memory (None where it cannot be
    read). The same for every worker count, so that the limit cannot change a sweep's results
    with ``-j``."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return int(total * _DEFAULT_MEMORY_SHARE)


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

    ``jobs``: local worker processes (default: every core; ignored with ``dask``). ``dask``: a
    scheduler address or a ``distributed.Client``; when given, runs go to that cluster instead.
    ``traces``: also store the traces as Parquet files in ``<db>.traces/`` (default: the sweep
    file's ``traces``). ``limits`` overrides the sweep file's; without a memory limit each run may
    grow by half the machine's memory. ``progress``: a progress bar on stderr (default: when stderr
    is a terminal). ``log``: one line on stderr per stored run (for logs of non-interactive jobs).

    Raises:
        SweepError: every run of the sweep is refused by the scenario check (a typo in a key).
        SweepStoreError: the database is in use, is not a sweep database, or an axis changed type.
        SweepInterrupted: Ctrl-C, or the Dask cluster was lost; every stored run stays.
    """
    import startlab

    from .file import SweepError

    started = time.perf_counter()
    version = startlab.__version__
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs = {jobs}: expected at least 1 worker")
    jobs = jobs or os.cpu_count() or 1
    limits = limits or sweep.limits
    if limits.max_memory is None:
        limits = replace(limits, max_memory=default_memory_limit())
    with_traces = sweep.traces if traces is None else traces
    db = db.resolve()
    trace_dir = db.with_name(db.name + ".traces") if with_traces else None
    tasks = plan(sweep, limits=limits, trace_dir=trace_dir)
    if tasks and all(t.refused is not None for t in tasks):
        raise SweepError(f"every run of the sweep is refused by the scenario check; the first: {tasks[0].refused}")
    unique: dict[str, Task] = {}
    for t in tasks:
        unique.setdefault(t.key, t)
    duplicates = len(tasks) - len(unique)
    store = Store(db, sweep)
    done = 0
    try:
        with _deferred_interrupt():
            archived, restored = store.keep_only(unique)
        stored = store.stored()
        todo = [t for k, t in unique.items() if k not in stored or (retry_failed and stored[k] == "failed")]
        skipped = len(unique) - len(todo)
        backend = f"dask {_address(dask)}" if dask is not None else f"local, {jobs} worker{'s' if jobs > 1 else ''}"
        failed = 0
        store_seconds = run_seconds = 0.0
        with _Progress(len(unique), skipped, progress, log) as bar:

            def keep(task: Task, outcome: Outcome) -> None:
                nonlocal store_seconds, run_seconds, failed, done
                with _deferred_interrupt():
                    before = time.perf_counter()
                    store.record(task, outcome, sweep.columns, version)
                    store_seconds += time.perf_counter() - before
                    run_seconds += outcome.wall_s
                    failed += outcome.status != "ok"
                    done += 1
                    bar.advance(task, outcome)

            # Refused scenarios are recorded at once; the rest go to the backend.
            ready = [t for t in todo if t.refused is not None]
            runnable = [t for t in todo if t.refused is None]
            source = _chain(((t, execute(t)) for t in ready), _dask(runnable, dask) if dask is not None else _local(runnable, jobs))
            try:
                for task, outcome in source:
                    keep(task, outcome)
            except KeyboardInterrupt:
                # Ctrl-C while a run was being stored: the backend still stores its runs in flight.
                try:
                    item = source.throw(KeyboardInterrupt())
                    while True:
                        keep(*item)
                        item = next(source)
                except (KeyboardInterrupt, StopIteration):
                    pass
                raise
    except KeyboardInterrupt:
        raise SweepInterrupted(f"interrupted: {done} runs stored by this call; run the sweep again to resume") from None
    except _ClusterLost as e:
        raise SweepInterrupted(f"{e}; {done} runs stored by this call; run the sweep again to resume") from None
    finally:
        store.close()
    return Report(db, len(unique), skipped, len(todo), failed, duplicates, time.perf_counter() - started, backend, store_seconds, run_seconds, archived, restored)


@contextmanager
def _deferred_interrupt() -> Iterator[None]:
    """Hold Ctrl-C back while a run is stored (and logged), then raise it. Python raises
    ``KeyboardInterrupt`` wherever the main thread happens to be, including just after DuckDB has
    begun a transaction and before the code that would end it; held back, it can only come between
    two runs, so that a stored run is always a logged one and the connection is never left inside a
    transaction. Only the main thread receives Ctrl-C, and only there can the handler be changed;
    elsewhere (or under a handler that is not Python's default) this does nothing."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if held:
        raise KeyboardInterrupt


def _chain(*parts: Iterator[tuple[Task, Outcome]]) -> Iterator[tuple[Task, Outcome]]:
    """``itertools.chain`` as a generator, so that Ctrl-C can be passed on with ``throw``."""
    for part in parts:
        yield from part


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


#: Worker pools lent to every local sweep run inside :func:`shared_workers` (innermost last).
_SHARED: list[tuple[int, cf.ProcessPoolExecutor]] = []


@contextmanager
def shared_workers(jobs: int) -> Iterator[None]:
    """Local sweeps run inside this block with ``jobs`` workers use one pool of worker processes,
    started once (``startlab reproduce --all`` runs dozens of small sweeps: starting a pool for
    each would cost more than their runs). A pool a crashed worker broke is dropped, and the
    sweeps after it start their own."""
    pool = _pool(jobs)
    entry = (jobs, pool)
    _SHARED.append(entry)
    try:
        yield
    finally:
        if entry in _SHARED:
            _SHARED.remove(entry)
        pool.shutdown()


def _lent(jobs: int) -> cf.ProcessPoolExecutor | None:
    return next((pool for n, pool in reversed(_SHARED) if n == jobs), None)


def _local(tasks: list[Task], jobs: int, work: Callable[[Task], Outcome] = execute) -> Iterator[tuple[Task, Outcome]]:
    """Runs on a pool of ``jobs`` processes, yielding each outcome as it completes. A worker that
    dies (a crash, the kernel's OOM killer) breaks the pool: the runs that were in flight are
    retried one at a time in a fresh process, and the one that kills its process again is recorded
    as failed."""
    pending = list(reversed(tasks))
    while pending:
        suspects: list[Task] = []
        workers = min(jobs, len(pending))
        lent = _lent(jobs)
        with nullcontext(lent) if lent is not None else _pool(workers) as pool:
            flying: dict[cf.Future[Outcome], Task] = {}
            try:
                broken = False
                while (pending or flying) and not broken:
                    while pending and len(flying) < workers * _IN_FLIGHT_PER_WORKER:
                        task = pending.pop()
                        flying[pool.submit(work, task)] = task
                    done = _wait(flying)
                    for future in done:
                        try:
                            outcome = future.result()
                        except cf.process.BrokenProcessPool:
                            broken = True  # every run still in flight is a suspect
                            _SHARED[:] = [e for e in _SHARED if e[1] is not pool]
                            continue
                        yield flying.pop(future), outcome
                suspects = list(flying.values())
            except KeyboardInterrupt:
                # Finish what the workers are running (they ignore Ctrl-C), drop the rest, so
                # that the time already spent on a run is not lost; Ctrl-C again drops those too.
                for future in flying:
                    future.cancel()
                running = {f: t for f, t in flying.items() if not f.cancelled()}
                print(f"interrupted: storing the {len(running)} runs in flight (Ctrl-C again to drop them)", file=sys.stderr, flush=True)
                try:
                    while running:
                        for future in _wait(running):
                            task = running.pop(future)
                            try:
                                outcome = future.result()
                            except cf.process.BrokenProcessPool:
                                continue
                            yield task, outcome
                except KeyboardInterrupt:
                    for child in multiprocessing.active_children():
                        child.terminate()
                raise
        for task in suspects:
            yield task, _isolated(task, work)


def _wait(futures: Mapping[cf.Future[Outcome], Task] | set[cf.Future[Outcome]]) -> set[cf.Future[Outcome]]:
    """The futures of ``futures`` that are done, once at least one is. Ctrl-C is held back while
    ``cf.wait`` runs and raised between two short waits: raised inside it, while it holds some of
    the futures' locks, it left them held, and the pool's manager thread then waited on them for
    ever (a sweep hung after Ctrl-C in ``test_ctrl_c_stores_the_runs_in_flight_and_a_rerun_resumes``
    on 2026-11-26)."""
    while True:
        with _deferred_interrupt():
            done, _ = cf.wait(futures, timeout=0.2, return_when=cf.FIRST_COMPLETED)
        if done:
            return done


def _isolated(task: Task, work: Callable[[Task], Outcome] = execute) -> Outcome:
    """Run one task alone in a fresh process; if that process dies too, the run failed."""
    with _pool(1) as pool:
        try:
            return pool.submit(work, task).result()
        except cf.process.BrokenProcessPool:
            return Outcome(task.key, "failed", "WorkerDied: the worker process ended abruptly while running this run (killed, out of memory or crashed)", 0.0)


class _ClusterLost(Exception):
    """The Dask scheduler or the connection to it went away."""


def _dask(tasks: list[Task], dask: Any) -> Iterator[tuple[Task, Outcome]]:
    """Runs on a Dask distributed cluster (a scheduler address or a Client). A task that killed
    its workers (``KilledWorker``) is a failed run; a lost cluster stops the sweep."""
    from distributed import Client, as_completed
    from distributed.scheduler import KilledWorker

    if isinstance(dask, str):
        try:
            client = Client(dask, set_as_default=False, timeout="20s")
        except (OSError, TimeoutError, ValueError) as e:
            raise _ClusterLost(f"cannot reach the Dask scheduler at {dask} ({_first_line(e)})") from None
    else:
        client = dask
    try:
        with client.as_current():
            futures = {client.submit(execute, t, key=f"startlab-run-{t.key}", pure=False): t for t in tasks}
            for future in as_completed(futures):
                task = futures[future]
                try:
                    outcome = future.result()
                except KilledWorker as e:
                    outcome = Outcome(task.key, "failed", f"KilledWorker: {_first_line(e)}", 0.0)
                except Exception as e:  # cancelled, the scheduler lost: not the run's fault
                    for other in futures:
                        other.cancel()
                    raise _ClusterLost(f"the Dask cluster failed ({type(e).__name__}: {_first_line(e)})") from None
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
    if report.archived or report.restored:
        parts.append(f"{report.archived} runs of other sweep definitions moved to archive_runs, {report.restored} brought back")
    return "; ".join(parts) + f" -> {report.db}"


__all__ = ["Outcome", "Report", "Store", "SweepInterrupted", "SweepStoreError", "Task", "describe", "execute", "named_files", "plan", "run_key", "run_sweep"]
