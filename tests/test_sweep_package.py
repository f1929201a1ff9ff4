"""The sweep modules as the package ``startlab.sweep``: calling the package runs a sweep as the
function ``startlab.sweep`` did, its modules and names import, and the modules' old names
(``startlab.sweepfile``, ...), deprecated since the package came, are gone."""

from __future__ import annotations

import importlib
import inspect
import pickle
import sys
from pathlib import Path

import pytest

import startlab

from test_imports import HEAVY, imported_after
from test_sweeps import sweep_text, write

#: Each module's name before the package, its name in it, and a name it defines.
RENAMED = [
    ("sweepfile", "file", "_QUANTITY"),
    ("sweeprun", "run", "connect_db"),
    ("sweepdb", "db", "SweepResults"),
    ("sweepstats", "stats", "aggregate"),
    ("sweepbench", "bench", "SWEEP"),
]

#: One algorithm x three queue limits, one replicate: three runs of 1.5 s.
SMALL = sweep_text(replicates=1).replace('values = ["slow-start", "hystart", "paced-start"]', 'values = ["slow-start"]')


def test_calling_the_package_runs_a_sweep(tmp_path: Path) -> None:
    # Two worker processes: the tasks and the function they run are pickled by their module path.
    with startlab.sweep(write(tmp_path, SMALL), jobs=2, progress=False) as results:
        runs = results.runs()
    assert isinstance(results, startlab.sweep.SweepResults) and results.path == tmp_path / "sweep.duckdb"
    assert len(runs) == 3 and (runs["status"] == "ok").all()
    # As text, with its database; the runs stored are skipped, not run again.
    db = tmp_path / "sweep.duckdb"
    again = startlab.sweep.sweep(SMALL, db, jobs=1, progress=False)
    assert again.runs()[["key", "status"]].equals(runs[["key", "status"]])
    with pytest.raises(ValueError, match="needs the path of its results database"):
        startlab.sweep(SMALL)
    with pytest.raises(ValueError, match="jobs = 0"):
        startlab.sweep(write(tmp_path, SMALL), jobs=0)


def test_the_call_keeps_the_signature_and_docstring_of_the_function() -> None:
    from startlab import sweep

    assert callable(sweep) and sweep is startlab.sweep and "sweep" in startlab.__all__
    expected = ["spec", "db", "jobs", "dask", "traces", "retry_failed", "progress"]
    assert list(inspect.signature(startlab.sweep).parameters) == expected
    assert inspect.signature(startlab.sweep) == inspect.signature(startlab.sweep.sweep)
    assert inspect.getdoc(startlab.sweep.sweep).startswith("Run a parameter sweep (docs/SWEEPS.md)")
    assert "The package is callable" in (startlab.sweep.__doc__ or "")


def test_the_modules_and_names_of_the_package_import() -> None:
    from startlab.sweep import Report, Sweep, SweepError, SweepInterrupted, SweepResults, SweepStoreError, db, file, run, run_sweep

    assert SweepResults is db.SweepResults and SweepResults.__module__ == "startlab.sweep.db"
    assert (Sweep, SweepError) == (file.Sweep, file.SweepError)
    assert (Report, SweepInterrupted, SweepStoreError, run_sweep) == (run.Report, run.SweepInterrupted, run.SweepStoreError, run.run_sweep)
    for name in startlab.sweep.__all__:
        assert getattr(startlab.sweep, name) is not None, name
    for _, new, _ in RENAMED:
        assert importlib.import_module(f"startlab.sweep.{new}") is getattr(startlab.sweep, new)
    assert run.execute.__module__ == "startlab.sweep.run" and pickle.loads(pickle.dumps(run.execute)) is run.execute
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        startlab.sweep.nothing  # noqa: B018


def test_importing_the_package_loads_no_heavy_package() -> None:
    modules, _ = imported_after("import startlab.sweep\nimport startlab\nassert callable(startlab.sweep)")
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


@pytest.mark.parametrize(("old", "new", "name"), RENAMED)
def test_the_old_module_names_are_gone(old: str, new: str, name: str) -> None:
    with pytest.raises(ModuleNotFoundError, match=f"startlab.{old}"):
        importlib.import_module(f"startlab.{old}")
    with pytest.raises(AttributeError, match=f"no attribute {old!r}"):
        getattr(startlab, old)
    assert hasattr(importlib.import_module(f"startlab.sweep.{new}"), name)
