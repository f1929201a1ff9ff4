"""startlab: a laboratory for TCP startup congestion control.

The simulator is native (``startlab._core``, built from ``crates/startlab-py``); this package
turns a scenario into a run and the run's columns into pandas tables and plots::

    import startlab
    result = startlab.run("examples/paced-start-default.toml")
    result.flows[["flow", "su_time", "su_throughput"]]

A scenario is given as a path to a TOML (or ``.json``) file, as TOML text, or as a dict with the
same structure as the TOML document. The native side checks it strictly and raises
:class:`ScenarioError` naming the offending key path.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from . import _core
from ._core import ScenarioError, SimulationError
from .result import Result, Traces

# Imported last: compare builds on run() and _source() above (resolved at call time).
from .compare import Comparison, compare  # noqa: E402

__all__ = [
    "Comparison",
    "Result",
    "ScenarioError",
    "SimulationError",
    "Traces",
    "__version__",
    "algorithms",
    "compare",
    "normalize",
    "run",
    "validate",
]

__version__: str = _core.__version__

#: What :func:`run`, :func:`validate` and :func:`normalize` accept as a scenario.
Scenario = Union[str, os.PathLike[str], Mapping[str, Any]]

#: The progress bar advances the simulation in this many chunks of simulated time.
_PROGRESS_STEPS = 200


def _source(scenario: Scenario) -> tuple[str, str, str | None]:
    """The scenario's text, its format (``"toml"`` or ``"json"``) and, for a file, its directory
    (files the scenario names, such as ``rate_trace``, are relative to it) for the native side."""
    if isinstance(scenario, Mapping):
        return json.dumps(scenario), "json", None
    if isinstance(scenario, os.PathLike):
        return _read(Path(scenario))
    if not isinstance(scenario, str):
        raise TypeError(f"a scenario is a path, TOML text or a dict, not {type(scenario).__name__}")
    if os.path.isfile(scenario):
        return _read(Path(scenario))
    if "\n" not in scenario and scenario.strip().endswith((".toml", ".json")):
        raise ScenarioError(f"scenario file not found: {scenario.strip()}")
    return scenario, "toml", None


def _read(path: Path) -> tuple[str, str, str | None]:
    """Read a scenario file; its format follows the suffix (``.json``, otherwise TOML)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"scenario file not found: {path}") from None
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return text, "json" if path.suffix.lower() == ".json" else "toml", str(path.resolve().parent)


def algorithms() -> list[dict[str, Any]]:
    """Every startup and avoidance algorithm: name, role, one-line summary, source, and
    parameters (name, kind, default, help), in registry order."""
    listed: list[dict[str, Any]] = json.loads(_core.algorithms())
    return listed


def validate(scenario: Scenario) -> None:
    """Check a scenario without running it; raise :class:`ScenarioError` if it is refused."""
    _core.validate(*_source(scenario))


def normalize(scenario: Scenario) -> dict[str, Any]:
    """The fully resolved scenario, with every default filled in, as a dict."""
    result: dict[str, Any] = json.loads(_core.normalize(*_source(scenario)))
    return result


def run(scenario: Scenario, *, progress: bool | None = None) -> Result:
    """Simulate a scenario to its end and collect the results.

    Args:
        scenario: a path to a scenario file, TOML text, or a dict shaped like the TOML document.
        progress: show a progress bar of simulated time on stderr; ``None`` shows it when stderr is
            a terminal.

    Raises:
        ScenarioError: the scenario was refused (a ``ValueError``).
        SimulationError: the simulator failed internally (a ``RuntimeError``).
    """
    sim = _core.Simulation(*_source(scenario))
    if progress is None:
        progress = sys.stderr.isatty()
    if progress:
        _run_with_progress(sim)
    else:
        sim.run()
    return Result._from_native(sim.results(), sim.stats())


def _run_with_progress(sim: _core.Simulation) -> None:
    """Advance ``sim`` in chunks of simulated time, drawing a progress bar on stderr."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    total = sim.duration_ns
    step = max(total // _PROGRESS_STEPS, 1)
    columns = (
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.fields[now]:.3f} / {task.fields[end]:.3f} s simulated"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("run", total=total, now=0.0, end=total / 1e9)
        until = sim.now_ns
        finished = sim.finished
        while not finished:
            until = min(until + step, total)
            # `until >= total` guards the loop should the engine not report the end it reached.
            finished = sim.advance(until) or until >= total
            bar.update(task, completed=sim.now_ns, now=sim.now_ns / 1e9)
