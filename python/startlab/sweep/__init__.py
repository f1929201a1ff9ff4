"""Parameter sweeps (docs/SWEEPS.md): a sweep file expanded into runs, run on local processes or a
Dask cluster, stored in a DuckDB database, and read back, aggregated and plotted.

The package is callable: ``startlab.sweep(spec, db=None, *, jobs=None, dask=None, traces=None,
retry_failed=False, progress=None)`` runs a sweep and returns its results, a
:class:`SweepResults` (see :func:`sweep` for the arguments)::

    import startlab
    results = startlab.sweep("examples/sweeps/paced-start-fig8.toml", jobs=4)
    results.aggregate("cbw", "su_time", by="algorithm")

Its modules, each imported on first use (they import NumPy, pandas, DuckDB, SciPy or matplotlib;
``import startlab.sweep`` imports none of them):

* :mod:`startlab.sweep.file`: the sweep file and its expansion into runs (axes, replicates, seeds);
* :mod:`startlab.sweep.run`: planning, the local and Dask backends, and the store;
* :mod:`startlab.sweep.db`: a sweep database as pandas DataFrames (:class:`SweepResults`);
* :mod:`startlab.sweep.stats`: aggregation over replicates, confidence intervals, figures, and the
  ``startlab results`` and ``startlab plot`` commands;
* :mod:`startlab.sweep.bench`: ``startlab bench --sweep``.

The classes and functions most used are also attributes of the package
(``startlab.sweep.run_sweep``, ``from startlab.sweep import SweepResults``).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .db import SweepResults
    from .file import Sweep, SweepError
    from .run import Report, SweepInterrupted, SweepStoreError, run_sweep

__all__ = [
    "Report",
    "Sweep",
    "SweepError",
    "SweepInterrupted",
    "SweepResults",
    "SweepStoreError",
    "bench",
    "db",
    "file",
    "run",
    "run_sweep",
    "stats",
    "sweep",
]

#: The modules of the package, imported on first use as attributes (``startlab.sweep.stats``).
_SUBMODULES = frozenset({"bench", "db", "file", "run", "stats"})

#: Names the package lends from its modules: name -> the module defining it.
_EXPORTS = {
    "Report": "run",
    "Sweep": "file",
    "SweepError": "file",
    "SweepInterrupted": "run",
    "SweepResults": "db",
    "SweepStoreError": "run",
    "run_sweep": "run",
}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sweep(
    spec: str | os.PathLike[str],
    db: str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    dask: Any = None,
    traces: bool | None = None,
    retry_failed: bool = False,
    progress: bool | None = None,
) -> SweepResults:
    """Run a parameter sweep (docs/SWEEPS.md) and return its results (:class:`SweepResults`).
    ``startlab.sweep(...)``, calling the package, calls this function.

    Args:
        spec: a sweep file, or its TOML text (then ``db`` is required and relative paths resolve
            against the working directory).
        db: the results database; default: the sweep file with the suffix ``.duckdb``. Runs
            already stored there are skipped.
        jobs: local worker processes (default: every core).
        dask: a Dask scheduler address or ``distributed.Client`` to run on instead.
        traces: also store traces as Parquet files (default: the sweep file's ``traces``).
        retry_failed: run again the runs stored as failed.
        progress: a progress bar on stderr (default: when stderr is a terminal).

    Raises:
        SweepError: the sweep file was refused (a ``ValueError``).
    """
    from .db import SweepResults
    from .file import load, parse
    from .run import run_sweep

    if isinstance(spec, str) and "\n" in spec:
        parsed = parse(spec, base_dir=Path.cwd())
        if db is None:
            raise ValueError("db: a sweep given as text needs the path of its results database")
    else:
        parsed = load(spec)
    path = Path(db) if db is not None else Path(spec).with_suffix(".duckdb")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs = {jobs}: expected at least 1 worker (None: every core)")
    run_sweep(parsed, path, jobs=jobs, dask=dask or parsed.dask, traces=traces, retry_failed=retry_failed, progress=progress)
    return SweepResults(path)


class _CallableModule(ModuleType):
    """The class of this package's module object: ``startlab.sweep(...)`` calls :func:`sweep`
    (it was a function before the sweep modules became this package), and the package's modules
    and names are attributes as in any package."""

    def __call__(self, *args: Any, **kwargs: Any) -> SweepResults:
        """Run a parameter sweep and return its results: :func:`startlab.sweep.sweep`."""
        return sweep(*args, **kwargs)

    # inspect.signature(startlab.sweep) is sweep's (after the bound module).
    __call__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *inspect.signature(sweep).parameters.values()],
        return_annotation=inspect.signature(sweep).return_annotation,
    )


sys.modules[__name__].__class__ = _CallableModule
