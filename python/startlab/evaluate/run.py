"""Running a suite: contestants resolved (built-ins, plug-ins), every run planned with its paired
seed, and the runs handed to the sweep machinery (:mod:`startlab.sweep.run`: local workers or
Dask, one DuckDB transaction per run, resumable).

The plan is a :class:`SuiteSweep`, a :class:`startlab.sweep.file.Sweep` whose runs are listed
rather than a grid: the sweep store records the columns ``algorithm``, ``path``, ``path_class``,
``workload`` and ``item`` for each run, and skips the runs already stored when called again.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sweep.file import Column, RunSpec, Sweep, derive_seed
from .scenarios import REFERENCE, applies, build, trace_file
from .suite import PathSpec, Suite, Workload

#: The results columns of an evaluation run (beside the sweep's own: seed, status, error...).
COLUMNS = ("algorithm", "path", "path_class", "workload", "item")


class EvaluateError(ValueError):
    """Bad input to an evaluation (an unknown algorithm, baseline or plug-in)."""


@dataclass
class SuiteSweep(Sweep):
    """A sweep whose runs are given as a list (the suite's paths x workloads x contestants x seeds)."""

    specs: list[RunSpec] = field(default_factory=list)

    def runs(self) -> list[RunSpec]:
        return list(self.specs)

    @property
    def points(self) -> int:
        return len({s.point for s in self.specs})


@dataclass(frozen=True)
class Contestants:
    """The algorithms of an evaluation by the names scenarios use, and the plug-in modules that
    register the Python ones (sweep workers import them from the scenarios' ``plugins``)."""

    algorithms: list[str]
    baselines: list[str]
    modules: list[str]
    base_dir: str | None


def _startup_names() -> set[str]:
    import startlab

    return {a["name"] for a in startlab.algorithms() if a["role"] == "startup"}


def _import_plugin(module: str, where: str) -> Any:
    from .. import plugin

    cwd = str(Path.cwd())
    try:
        plugin.import_modules([module], cwd)
    except Exception as e:  # ScenarioError, or anything the module raised
        raise EvaluateError(f"{where}: cannot import the plug-in module {module!r} ({e})") from None
    return sys.modules[module]


def resolve(algorithms: list[str], baselines: list[str], plugins: list[str]) -> Contestants:
    """Check the contestants and baselines: built-in names, names registered by ``plugins``
    modules, or ``module:Class`` plug-ins (imported here; their names are the registered ones)."""
    from .. import plugin

    modules: list[str] = []
    for m in plugins:
        _import_plugin(m, f"--plugin {m}")
        modules.append(m)

    def one(name: str, where: str) -> str:
        if ":" in name:
            module, _, attr = name.partition(":")
            if not module or not attr:
                raise EvaluateError(f"{where} {name!r}: expected an algorithm name or MODULE:CLASS")
            mod = _import_plugin(module, f"{where} {name!r}")
            cls = getattr(mod, attr, None)
            if cls is None:
                raise EvaluateError(f"{where} {name!r}: module {module!r} has no attribute {attr!r}")
            try:
                registered = plugin.name_of(cls)
            except TypeError as e:
                raise EvaluateError(f"{where} {name!r}: {e}") from None
            if module not in modules:
                modules.append(module)
            return registered
        known = _startup_names()
        if name not in known:
            raise EvaluateError(
                f"{where} {name!r}: unknown startup algorithm; expected one of {', '.join(sorted(known))}, "
                "a name registered by a --plugin module, or a plug-in MODULE:CLASS"
            )
        return name

    algos = [one(a, "algorithm") for a in algorithms]
    bases = [one(b, "baseline") for b in baselines]
    if not algos:
        raise EvaluateError("give at least one algorithm to evaluate")
    if len(set(algos)) != len(algos):
        raise EvaluateError(f"an algorithm is given twice: {', '.join(algos)}")
    if len(set(bases)) != len(bases):
        raise EvaluateError(f"a baseline is given twice: {', '.join(bases)}")
    return Contestants(algos, bases, modules, _module_dir(modules))


def _module_dir(modules: list[str]) -> str | None:
    """Where workers look for the plug-in modules that are not on their ``sys.path`` (the
    directory of the first one's top-level package or file)."""
    for name in modules:
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            path = Path(file).resolve()
            depth = name.count(".") + (1 if path.name == "__init__.py" else 0)
            return str(path.parents[depth])
    return None


def seed_of(suite: Suite, path_id: str, workload: str, item: str, replicate: int) -> int:
    """A run's seed: from the suite's seed, the path, the workload item and the replicate — never
    from the algorithm, so that every contestant meets the same randomness (paired runs)."""
    return derive_seed(suite.seed, {"path": path_id, "workload": workload, "item": item}, replicate)


@dataclass(frozen=True)
class Case:
    """One run of an evaluation before its scenario is built."""

    case: int  # the (path, workload item) it belongs to: the sweep's grid point
    path: PathSpec
    work: Workload
    item: str
    algorithm: str
    replicate: int
    seed: int


def cases(suite: Suite, contestants: Contestants) -> Iterator[Case]:
    """Every run of the evaluation, in a stable order (paths, workloads, items, algorithms, seeds)."""
    everyone = list(dict.fromkeys(contestants.algorithms + contestants.baselines))
    case = 0
    for path in suite.paths():
        for work in suite.workloads:
            if not applies(path, work):
                continue
            for item in work.items:
                names = everyone + ([REFERENCE] if work.kind == "join" else [])
                for algorithm in names:
                    for replicate in range(suite.seeds):
                        yield Case(case, path, work, item, algorithm, replicate, seed_of(suite, path.id, work.kind, item, replicate))
                case += 1


def plan(suite: Suite, contestants: Contestants, trace_dir: Path) -> SuiteSweep:
    """The evaluation as a sweep: every run with its scenario (generated traces are written to
    ``trace_dir``)."""
    specs: list[RunSpec] = []
    files: dict[str, str | None] = {}
    for c in cases(suite, contestants):
        if c.path.id not in files:
            files[c.path.id] = trace_file(c.path, trace_dir)
        scenario = build(suite, c.path, c.work, c.item, c.algorithm, c.seed, files[c.path.id], contestants.modules)
        values = {"algorithm": c.algorithm, "path": c.path.id, "path_class": c.path.path_class, "workload": c.work.kind, "item": c.item}
        specs.append(RunSpec(c.case, c.replicate, c.seed, values, scenario))
    columns = [Column(name, (), (), "evaluate", None, "VARCHAR") for name in COLUMNS]
    source = json.dumps({"suite": suite.identity, "file": suite.file, "text": suite.text,
                         "algorithms": contestants.algorithms, "baselines": contestants.baselines, "plugins": contestants.modules})  # fmt: skip
    sweep = SuiteSweep(
        name=f"evaluate-{suite.name}", seed=suite.seed, replicates=suite.seeds, base={}, base_dir=contestants.base_dir, axes=[],
        limits=suite.limits, traces=False, dask=None, source=source, specs=specs,
    )  # fmt: skip
    sweep.columns = columns
    return sweep


def run(suite: Suite, contestants: Contestants, db: Path, *, jobs: int | None = None, dask: Any = None, progress: bool | None = None,
        log: bool = False) -> Any:  # fmt: skip
    """Run (or resume) every run of the evaluation into ``db``; the sweep's :class:`Report`."""
    from ..sweep.run import run_sweep

    db.parent.mkdir(parents=True, exist_ok=True)
    sweep = plan(suite, contestants, db.parent / "traces")
    return run_sweep(sweep, db, jobs=jobs, dask=dask, progress=progress, log=log)

