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

import importlib
import json
import math
import os
import sys
import time
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Union

from . import _core, _transfers
from ._core import PluginError, ScenarioError, SimulationError
from .plugin import Action, Param, SavedPath, startup

# result and compare import NumPy, pandas and matplotlib only when a result is built or drawn, so
# that ``import startlab`` (and the command line) stays fast. compare builds on run() and
# read_scenario() below, resolved at call time.
from .result import Result, ResultError, Traces
from .result import build as _build_result
from .compare import Comparison, compare

__all__ = [
    "Action",
    "Comparison",
    "Param",
    "PluginError",
    "ResultError",
    "ResourceLimitError",
    "Result",
    "SavedPath",
    "ScenarioError",
    "SimulationError",
    "Traces",
    "__version__",
    "algorithms",
    "compare",
    "normalize",
    "open_sweep",
    "queues",
    "read_scenario",
    "run",
    "scenario_document",
    "startup",
    "sweep",
    "validate",
]

#: Submodules imported on first use as attributes (``startlab.plot``, ``startlab.models``, ...),
#: not by ``import startlab``: most of them import pandas, matplotlib, SciPy or DuckDB.
#: ``startlab.sweep`` is the sweep package, callable: ``startlab.sweep(spec, ...)`` runs a sweep.
_SUBMODULES = frozenset({"bench", "check", "cli", "metrics", "modelcli", "models", "plot", "replay", "sweep"})

def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__: str = _core.__version__

#: What :func:`run`, :func:`validate` and :func:`normalize` accept as a scenario.
Scenario = Union[str, os.PathLike[str], Mapping[str, Any]]

#: The progress bar advances the simulation in this many chunks of simulated time.
_PROGRESS_STEPS = 200


def read_scenario(scenario: Scenario) -> tuple[str, str, str | None]:
    """The scenario's text, its format (``"toml"`` or ``"json"``) and, for a file, its directory
    (files the scenario names, such as ``rate_trace``, are relative to it): the one reader of
    scenarios, for the native side and every module (the testbed's router and startlab-udp
    included). A missing file or a file that is not UTF-8 raises :class:`ScenarioError`."""
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


def scenario_document(scenario: Scenario) -> dict[str, Any]:
    """A scenario as a document (dict) before any checks: from a mapping, a TOML/JSON file or TOML
    text; a syntax error raises :class:`ScenarioError`."""
    if isinstance(scenario, Mapping):
        return dict(scenario)
    text, fmt, _directory = read_scenario(scenario)
    try:
        document = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise ScenarioError(f"not valid {fmt.upper()}: {e}") from None
    if not isinstance(document, dict):
        raise ScenarioError(f"a scenario is a table of keys, not {type(document).__name__}")
    return document


def _plugins(text: str, fmt: str, directory: str | None) -> None:
    """Import the modules the scenario's ``plugins`` lists (their plug-ins register themselves)
    before the native side reads it."""
    if "plugins" not in text:
        return
    try:
        document = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        return  # the native side reports the syntax error with its position
    if isinstance(document, dict) and "plugins" in document:
        from .plugin import import_modules

        import_modules(document["plugins"], directory)


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
    parameters (name, kind, default, help), in registry order; a startup's ``on_ce`` (what a CE
    mark does in startup: ``"exit-as-loss"`` or ``"own-rule"``) and an avoidance's ``needs_l4s``
    (it requires ``tcp.ecn = "l4s"``)."""
    listed: list[dict[str, Any]] = json.loads(_core.algorithms())
    return listed


def queues() -> list[dict[str, Any]]:
    """Every queue kind (``[topology] queue``, a link's ``queue``): name, summary, source, default
    ``limit`` and parameters (name, kind, default, help, range), in the order the docs list them."""
    listed: list[dict[str, Any]] = json.loads(_core.queues())
    return listed


def validate(scenario: Scenario) -> None:
    """Check a scenario without running it; raise :class:`ScenarioError` if it is refused."""
    source = read_scenario(scenario)
    _plugins(*source)
    _core.validate(*source)


def normalize(scenario: Scenario) -> dict[str, Any]:
    """The fully resolved scenario, with every default filled in, as a dict."""
    source = read_scenario(scenario)
    _plugins(*source)
    result: dict[str, Any] = json.loads(_core.normalize(*source))
    return result


def open_sweep(db: str | os.PathLike[str]) -> Any:
    """The results of a sweep database, read-only (:class:`startlab.sweep.db.SweepResults`)."""
    from .sweep.db import SweepResults

    return SweepResults(db)


class ResourceLimitError(RuntimeError):
    """A run exceeded one of the limits given to :func:`run` (events, simulated time, memory,
    wall time)."""


def run(
    scenario: Scenario,
    *,
    progress: bool | None = None,
    max_events: int | None = None,
    max_sim_time: float | None = None,
    max_memory: int | None = None,
    max_wall: float | None = None,
    base: str | os.PathLike[str] | None = None,
    transfers: str | os.PathLike[str] | None = None,
    startup: str | type | Mapping[str, Any] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    qlog: str | os.PathLike[str] | None = None,
) -> Result:
    """Simulate a scenario to its end and collect the results.

    Args:
        scenario: a path to a scenario file, TOML text, or a dict shaped like the TOML document.
        progress: show a progress bar of simulated time on stderr; ``None`` shows it when stderr is
            a terminal.
        max_events: stop with :class:`ResourceLimitError` after this many engine events.
        max_sim_time: refuse (:class:`ResourceLimitError`) a scenario longer than this many
            simulated seconds, before it runs.
        max_memory: stop with :class:`ResourceLimitError` when the process's resident memory
            has grown by more than this many bytes since the run began (checked every 1/200 of
            the simulated time and between chunks of 200 000 events).
        max_wall: stop with :class:`ResourceLimitError` when the run has taken more than this many
            seconds of wall time since the call (a positive number; the clock is read between
            chunks of 200 000 events, a few tens of milliseconds each, so a run may overshoot by
            about that much). A run that stays within it gives exactly the results of a run
            without it.
        base: for a dict scenario, the directory its relative file names (``rate_trace``)
            resolve against; a file scenario uses its own directory.
        transfers: a ``.parquet`` or ``.csv`` file to stream the ``[[users]]`` transfer rows to:
            the rows leave the engine as transfers end, so memory grows with the live connections,
            not with the transfers completed. ``Result.transfers`` is then None and
            ``Result.transfers_file`` names the file (not written when there are no transfers).
        startup: run every ``[[flows]]`` entry with this startup algorithm instead of its own: a
            name, a plug-in class registered with :func:`startup`, or a table
            (``{"algorithm": NAME, PARAM: VALUE}``).
        pcap: a directory to write capture files to (docs/PCAP.md): the links the scenario's
            ``[trace.pcap]`` table names, or without one, both directions of a dumbbell's
            bottleneck or of every link of a graph. A scenario with ``[trace.pcap]`` needs it.
            ``Result.pcap_files`` lists the files.
        qlog: a directory to write one qlog file per flow to (docs/QLOG.md): the flows the
            scenario's ``[trace.qlog]`` table names, or every flow. A scenario with
            ``[trace.qlog]`` needs it. ``Result.qlog_files`` lists the files.

    Raises:
        ScenarioError: the scenario was refused (a ``ValueError``).
        SimulationError: the simulator failed internally (a ``RuntimeError``).
        ResourceLimitError: a limit was exceeded (a ``RuntimeError``).
        PluginError: a Python plug-in raised (a ``RuntimeError``; the plug-in's exception is its
            cause).
        ResultError: the run finished but its result could not be built (a ``RuntimeError``; its
            ``tables`` keep the flows and links as JSON).
    """
    if startup is not None:
        scenario, base = _with_startup(scenario, startup, base)
    sim, stream = _simulate(
        scenario, progress=progress, max_events=max_events, max_sim_time=max_sim_time,
        max_memory=max_memory, max_wall=max_wall, base=base, transfers=transfers, pcap=pcap, qlog=qlog,
    )  # fmt: skip
    raw = sim.results()
    if stream is None:
        result = _build_result(raw, sim.stats())
    else:
        stream.finish(raw)
        result = _build_result({k: v for k, v in raw.items() if k != "transfers"}, sim.stats())
        result.transfers, result.transfers_file = None, stream.path
    result.pcap_files = [(Path(p), n) for p, n in sim.pcap_files()]
    result.qlog_files = [(Path(p), n) for p, n in sim.qlog_files()]
    return result


def _with_startup(
    scenario: Scenario, startup: str | type | Mapping[str, Any], base: str | os.PathLike[str] | None
) -> tuple[dict[str, Any], str | os.PathLike[str] | None]:
    """``scenario`` as a document with every flow's startup replaced (``run(startup=...)``), and
    the directory its file names resolve against."""
    from .compare import with_startup

    if not isinstance(scenario, Mapping):
        base = base if base is not None else read_scenario(scenario)[2]
    if isinstance(startup, Mapping):
        doc = with_startup(scenario_document(scenario), str(startup.get("algorithm", "")))
        for flow in doc.get("flows", []):
            flow["startup"] = dict(startup)
        return doc, base
    if not isinstance(startup, (str, type)):
        raise TypeError(f"startup: expected an algorithm name, a registered plug-in class or a table, not {type(startup).__name__}")
    return with_startup(scenario_document(scenario), startup), base


def _simulate(
    scenario: Scenario,
    *,
    progress: bool | None = None,
    max_events: int | None = None,
    max_sim_time: float | None = None,
    max_memory: int | None = None,
    max_wall: float | None = None,
    base: str | os.PathLike[str] | None = None,
    transfers: str | os.PathLike[str] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    pcap_fallback: str | os.PathLike[str] | None = None,
    qlog: str | os.PathLike[str] | None = None,
    qlog_fallback: str | os.PathLike[str] | None = None,
) -> tuple[_core.Simulation, _transfers.TransferStream | None]:
    """:func:`run` up to its results: the finished native simulation (``startlab run --json``
    turns its columns into JSON without building a :class:`Result`), and the stream of its
    transfer rows when ``transfers`` names a file (its ``finish`` completes the file).
    ``pcap_fallback``, ``qlog_fallback``: where a ``[trace.pcap]`` or ``[trace.qlog]`` table's
    files go when ``pcap`` or ``qlog`` is None (``startlab run --out DIR``: DIR/pcap, DIR/qlog)."""
    started = time.monotonic()
    target = None if transfers is None else _transfers.check_path(transfers)
    for name, value in (("max_events", max_events), ("max_sim_time", max_sim_time), ("max_memory", max_memory)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} = {value!r}: expected a positive number or None")
    if max_wall is not None and (
        isinstance(max_wall, bool) or not isinstance(max_wall, (int, float)) or not math.isfinite(max_wall) or max_wall <= 0
    ):
        raise ValueError(f"max_wall = {max_wall!r}: expected a positive, finite number of seconds (an int or a float) or None")
    text, fmt, directory = read_scenario(scenario)
    if base is not None and isinstance(scenario, Mapping):
        directory = str(base)
    _plugins(text, fmt, directory)
    sim = _core.Simulation(text, fmt, directory)
    for kind, given, fallback, what in (("pcap", pcap, pcap_fallback, "capture files"), ("qlog", qlog, qlog_fallback, "qlog files")):
        where = given if given is not None else fallback if getattr(sim, f"has_{kind}_table") else None
        if where is not None:
            getattr(sim, f"capture_{kind}")(os.fspath(where))
        elif getattr(sim, f"has_{kind}_table"):
            raise ScenarioError(
                f"trace.{kind}: the {what} need a directory; pass startlab.run(..., {kind}=DIR) or "
                f"`startlab run --{kind} DIR` (or `--out DIR`, which writes them to DIR/{kind})"
            )
    if max_sim_time is not None and sim.duration_ns > max_sim_time * 1e9:
        raise ResourceLimitError(
            f"the scenario lasts {sim.duration_ns / 1e9:g} s of simulated time, more than the limit "
            f"max_sim_time = {max_sim_time:g} s"
        )
    if max_events is not None:
        sim.set_event_limit(int(max_events))
    if progress is None:
        progress = sys.stderr.isatty()
    baseline = _resident_bytes() or 0
    stream = None if target is None else _transfers.TransferStream(sim, target)
    wall = None
    if max_wall is not None or max_memory is not None or stream is not None:
        # Both limits are looked at between chunks of events, so that no stretch of simulated
        # time, however dense, runs unchecked; the transfer rows leave the engine there too.
        def between_chunks() -> None:
            _check_memory(sim, max_memory, baseline)
            if stream is not None:
                stream.drain()

        wall = _Wall(sim, max_wall, started, None if max_events is None else int(max_events), between_chunks)
    if progress:
        _run_with_progress(sim, max_memory, baseline, wall)
    elif max_memory is not None:
        _advance_in_steps(sim, lambda: _check_memory(sim, max_memory, baseline), wall)
    elif wall is not None:
        _advance_in_steps(sim, lambda: None, wall, steps=1)
    else:
        sim.run()
    if sim.event_limit_reached:
        raise ResourceLimitError(
            f"the run stopped after max_events = {max_events} events, at {sim.now_ns / 1e9:g} s of "
            f"{sim.duration_ns / 1e9:g} s simulated"
        )
    return sim, stream


#: With a wall-time limit the engine runs chunks of at most this many events, and the clock is read
#: between them (and after every chunk of simulated time of the progress bar and the memory check):
#: 20–40 ms of engine time at the 5–10 million events per second the examples run at.
_WALL_CHUNK_EVENTS = 200_000


class _Wall:
    """The wall-time and memory limits of one run: advances ``sim`` in chunks of events, reading
    the clock (and calling ``memory``, the memory check) between them. ``max_events`` (the user's
    event limit, already set on ``sim``) still stops the run at the same event, and is still
    reported as such."""

    def __init__(
        self, sim: _core.Simulation, limit: float | None, started: float, max_events: int | None, memory: Callable[[], None]
    ) -> None:
        self.sim, self.limit, self.max_events, self.memory = sim, limit, max_events, memory
        self.deadline = None if limit is None else started + limit

    def advance(self, until_ns: int) -> bool:
        """``sim.advance(until_ns)`` in chunks; returns as it does, or with the user's event limit
        reached; raises :class:`ResourceLimitError` once past the deadline."""
        sim = self.sim
        while True:
            cap = int(sim.stats()["events"]) + _WALL_CHUNK_EVENTS
            users = self.max_events is not None and cap >= self.max_events
            sim.set_event_limit(self.max_events if users else cap)
            if sim.advance(until_ns):
                return True
            if users and sim.event_limit_reached:
                return False
            self.check()
            if not sim.event_limit_reached:
                return False  # until_ns reached

    def check(self) -> None:
        self.memory()
        if self.deadline is not None and time.monotonic() > self.deadline:
            sim = self.sim
            events = f"{int(sim.stats()['events']):,}".replace(",", " ")
            raise ResourceLimitError(
                f"the run stopped after max_wall = {self.limit:g} s of wall time, at {sim.now_ns / 1e9:g} s of "
                f"{sim.duration_ns / 1e9:g} s simulated ({events} events)"
            )


def _advance_in_steps(sim: _core.Simulation, after_step: Callable[[], None], wall: _Wall | None = None, steps: int = _PROGRESS_STEPS) -> None:
    """Advance ``sim`` to its end in ``steps`` chunks of simulated time, calling ``after_step()``
    after each (each chunk in chunks of events under a wall-time limit); stops early when the
    event limit is reached."""
    total = sim.duration_ns
    step = max(total // steps, 1)
    until = sim.now_ns
    finished = sim.finished
    while not finished and not sim.event_limit_reached:
        until = min(until + step, total)
        # `until >= total` guards the loop should the engine not report the end it reached.
        finished = (wall.advance(until) if wall is not None else sim.advance(until)) or until >= total
        after_step()


def _resident_bytes() -> int | None:
    """The process's resident memory now (Linux ``/proc/self/statm``); None where unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _check_memory(sim: _core.Simulation, limit: int | None, baseline: int) -> None:
    if limit is None:
        return
    used = _resident_bytes()
    if used is not None and used - baseline > limit:
        raise ResourceLimitError(
            f"the run grew the process by {(used - baseline) / 2**20:.0f} MiB, more than the limit "
            f"max_memory = {limit / 2**20:.0f} MiB, at {sim.now_ns / 1e9:g} s of {sim.duration_ns / 1e9:g} s simulated"
        )


def _run_with_progress(sim: _core.Simulation, max_memory: int | None = None, baseline: int = 0, wall: _Wall | None = None) -> None:
    """Advance ``sim`` in chunks of simulated time, drawing a progress bar on stderr."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    total = sim.duration_ns
    columns = (
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.fields[now]:.3f} / {task.fields[end]:.3f} s simulated"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("run", total=total, now=0.0, end=total / 1e9)

        def step() -> None:
            bar.update(task, completed=sim.now_ns, now=sim.now_ns / 1e9)
            _check_memory(sim, max_memory, baseline)

        _advance_in_steps(sim, step, wall)
