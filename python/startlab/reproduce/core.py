"""The reproduction suite's machinery (docs/REPRODUCTION.md): experiments, their sweeps, claims and
verdicts.

An experiment is one row of the checklist of the five papers' results (or, beside the checklist, a
result of another paper: SUSS, issue 34): a sweep file per run set,
shipped in ``startlab/reproduce/sweeps/`` (data: the paper's setup, with a ``[quick]`` table for
the reduced form), and a small analysis function that reads the stored runs and returns one
:class:`Claim` per claim of the paper, with the paper's number or shape, startlab's, and a verdict
decided by a criterion written in the analysis before the run, never tuned to its outcome.

Runs go through the sweep engine (parallel, resumable, stored in DuckDB): running an experiment
again, or rendering the report again, re-runs nothing already stored.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

#: The four verdicts of a claim.
REPRODUCED = "reproduced"
SAME_SHAPE = "same-shape"
CONTRADICTS = "contradicts"
CANNOT_RUN = "cannot-run"
VERDICTS = (REPRODUCED, SAME_SHAPE, CONTRADICTS, CANNOT_RUN)

#: The papers, by the short name experiments use, with their citation.
PAPERS = {
    "paced-start": "Hu & Steenkiste, Improving TCP Startup Performance using Active Measurements (Paced Start)",
    "smooth-start": "Wang, Xin, Reeves & Shin, A Simple Refinement of Slow-start of TCP Congestion Control (Smooth-start)",
    "hystart": "Ha & Rhee, Hybrid Slow Start for High-Bandwidth and Long-Distance Networks (HyStart)",
    "scharf": "Scharf, Performance Evaluation of Fast Startup Congestion Control Schemes",
    "barakat": "Barakat & Altman, Performance of Short TCP Transfers",
    "suss": "Arghavani, Zhang, Eyers & Arghavani, SUSS: Improving TCP Performance by Speeding Up Slow-Start (ACM SIGCOMM 2024)",
}

#: The five papers whose results are the checklist (shared/spec/REPRODUCTIONS.md: 51 items). The
#: other papers' experiments (issue 34: SUSS) run and report beside the checklist, not in it.
CHECKLIST_PAPERS = ("paced-start", "smooth-start", "hystart", "scharf", "barakat")


class ReproduceError(ValueError):
    """Bad input to the suite (an unknown experiment, a bad option); the message says what is
    accepted."""


@dataclass
class Claim:
    """One claim of a paper's result and what startlab measured."""

    claim: str
    paper: str
    startlab: str
    verdict: str
    reason: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r}: expected one of {', '.join(VERDICTS)}")


def judge(claim: str, paper: str, startlab: str, holds: bool | None, reason: str, shape: bool = False) -> Claim:
    """A :class:`Claim` whose verdict follows from a criterion already evaluated: ``holds`` True
    is reproduced; False is same-shape when ``shape`` (the trend holds, the numbers do not) and
    contradicts otherwise; None is cannot-run."""
    if holds is None:
        verdict = CANNOT_RUN
    elif holds:
        verdict = REPRODUCED
    else:
        verdict = SAME_SHAPE if shape else CONTRADICTS
    return Claim(claim, paper, startlab, verdict, reason)


@dataclass
class Analysis:
    """What an experiment's analysis returns: its claims and its figures (name -> figure)."""

    claims: list[Claim]
    figures: dict[str, Figure] = field(default_factory=dict)
    #: Tables shown in the report (title -> frame), e.g. the measured values per grid point.
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class Experiment:
    """One result of one paper (a row of the checklist)."""

    name: str
    paper: str
    item: str
    title: str
    claims: Sequence[str]
    analyse: Callable[[Data], Analysis]
    #: Run sets: label -> sweep file name in ``startlab/reproduce/sweeps/``. Empty for a result of
    #: the models alone.
    sweeps: Mapping[str, str] = field(default_factory=dict)
    #: Why the full-size form differs from the paper's (None: it is the paper's size).
    reduced: str | None = None
    #: Settings the paper leaves out and the values chosen (shown in the report).
    assumptions: Sequence[str] = ()

    @property
    def checklist(self) -> bool:
        """One of the five papers' 51 checklist items (False: an experiment beside the checklist)."""
        return self.paper in CHECKLIST_PAPERS

    def listing(self) -> dict[str, Any]:
        return {"name": self.name, "paper": self.paper, "item": self.item, "title": self.title, "claims": len(self.claims), "checklist": self.checklist}


_REGISTRY: dict[str, Experiment] = {}


def experiment(
    name: str, paper: str, item: str, title: str, claims: Sequence[str], sweeps: Mapping[str, str] | None = None,
    reduced: str | None = None, assumptions: Sequence[str] = (),
) -> Callable[[Callable[[Data], Analysis]], Callable[[Data], Analysis]]:  # fmt: skip
    """Registers the decorated analysis function as the experiment ``name``."""
    if paper not in PAPERS:
        raise ValueError(f"experiment {name}: paper {paper!r} is not one of {', '.join(PAPERS)}")

    def register(analyse: Callable[[Data], Analysis]) -> Callable[[Data], Analysis]:
        if name in _REGISTRY:
            raise ValueError(f"experiment {name!r} is defined twice")
        _REGISTRY[name] = Experiment(name, paper, item, title, tuple(claims), analyse, dict(sweeps or {}), reduced, tuple(assumptions))
        return analyse

    return register


def experiments() -> list[Experiment]:
    """Every experiment, paper by paper in the checklist's order."""
    from . import papers  # noqa: F401  (registers the experiments)

    order = list(PAPERS)
    return sorted(_REGISTRY.values(), key=lambda e: (order.index(e.paper), _item_key(e.item), e.name))


def _item_key(item: str) -> tuple[int, str]:
    digits = "".join(c for c in item.split(maxsplit=1)[-1] if c.isdigit())[:3]
    return (int(digits) if digits else 999, item)


def get(name: str) -> Experiment:
    known = {e.name: e for e in experiments()}
    if name not in known:
        close = [n for n in known if n.split("-")[0] == name.split("-")[0]] or list(known)
        raise ReproduceError(f"no experiment named {name!r}; `startlab reproduce --list` lists them (e.g. {', '.join(close[:6])})")
    return known[name]


def sweep_text(file: str) -> str:
    """The text of a shipped sweep file."""
    return resources.files("startlab.reproduce").joinpath("sweeps", file).read_text(encoding="utf-8")


def load_sweep(file: str, quick: bool) -> Any:
    """A shipped sweep file as a :class:`startlab.sweep.file.Sweep`; ``quick`` applies its
    ``[quick]`` table: ``set`` (more fixed changes), ``replicates``, and ``axis`` (axis name ->
    the values to keep)."""
    from ..sweep import file as sweepfile

    text = sweep_text(file)
    doc = tomllib.loads(text)
    reduced = doc.pop("quick", None)
    if quick and reduced:
        doc = copy.deepcopy(doc)
        head = doc.setdefault("sweep", {})
        if "set" in reduced:
            merged = dict(head.get("set", {}))
            merged.update(reduced["set"])
            head["set"] = merged
        if "replicates" in reduced:
            head["replicates"] = reduced["replicates"]
        for axis_name, values in reduced.get("axis", {}).items():
            found = False
            for axis in doc.get("axis", []):
                if axis.get("name") == axis_name:
                    axis.pop("range", None)
                    axis["values"] = values
                    found = True
            if not found:
                raise ReproduceError(f"{file}: [quick].axis.{axis_name} names no axis")
    name = Path(file).stem + (".quick" if quick else "")
    base_dir = resources.files("startlab.reproduce").joinpath("sweeps")
    return sweepfile.parse_document(doc, text + ("\n# [quick] applied\n" if quick else ""), base_dir=str(base_dir), default_name=name)


class Data:
    """The stored runs of one experiment, for its analysis: one DuckDB database per run set."""

    def __init__(self, experiment: Experiment, databases: Mapping[str, Path], quick: bool) -> None:
        self.experiment, self.databases, self.quick = experiment, dict(databases), quick

    def sql(self, label: str, query: str) -> pd.DataFrame:
        """``query`` on run set ``label``'s database (tables as docs/SWEEPS.md)."""
        from ..sweep import run as sweeprun

        con = sweeprun.connect_db(self._db(label), read_only=True)
        try:
            return con.execute(query).df()
        finally:
            con.close()

    def _db(self, label: str) -> Path:
        if label not in self.databases:
            raise KeyError(f"{self.experiment.name}: no run set {label!r}; it has {', '.join(self.databases) or 'none'}")
        return self.databases[label]

    def _has(self, label: str, table: str) -> bool:
        found = self.sql(label, f"SELECT count(*) AS n FROM information_schema.tables WHERE table_name = '{table}'")
        return bool(found["n"].iloc[0])

    def table(self, label: str, table: str) -> pd.DataFrame:
        """Rows of ``table`` (flows, links, responses, transfers, probes, probe_packets) of every
        successful run of ``label``, with the run's axis values, seed and replicate."""
        import pandas as pd

        if not self._has(label, table):
            return pd.DataFrame()
        axes = list(self.sql(label, "SELECT name FROM axes ORDER BY position")["name"])
        picked = ", ".join(["r.seed", "r.replicate", "r.point"] + [f'r."{a}"' for a in axes])
        return self.sql(label, f"SELECT {picked}, t.* FROM {table} t JOIN runs r USING (key) WHERE r.status = 'ok' ORDER BY r.point, r.replicate")

    def flows(self, label: str) -> pd.DataFrame:
        return self.table(label, "flows")

    def links(self, label: str) -> pd.DataFrame:
        return self.table(label, "links")

    def responses(self, label: str) -> pd.DataFrame:
        return self.table(label, "responses")

    def transfers(self, label: str) -> pd.DataFrame:
        return self.table(label, "transfers")

    def probes(self, label: str) -> pd.DataFrame:
        return self.table(label, "probes")

    def runs(self, label: str) -> pd.DataFrame:
        return self.sql(label, "SELECT * FROM runs ORDER BY point, replicate")

    def trace(self, label: str, kind: str, where: str = "true") -> pd.DataFrame:
        """The ``kind`` trace (cwnd, seq, queue, packets) of the runs matching ``where`` (SQL on
        ``runs``), with the run's axis values; the sweep file must set ``traces = true``."""
        import pandas as pd

        axes = list(self.sql(label, "SELECT name FROM axes ORDER BY position")["name"])
        rows = self.sql(label, f"SELECT r.*, t.path FROM runs r JOIN traces t USING (key) WHERE t.kind = '{kind}' AND r.status = 'ok' AND ({where}) ORDER BY r.point, r.replicate")
        frames = []
        for _, row in rows.iterrows():
            frame = pd.read_parquet(row["path"])
            for a in axes:
                frame[a] = row[a]
            frame["seed"] = row["seed"]
            frames.append(frame)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@dataclass
class Outcome:
    """One experiment's run: its claims, figures written and provenance."""

    name: str
    paper: str
    item: str
    title: str
    quick: bool
    claims: list[Claim]
    figures: list[str]
    tables: dict[str, Any]
    runs: list[dict[str, Any]]
    version: str
    seconds: float
    reduced: str | None
    assumptions: list[str]
    error: str | None = None
    #: Run set -> the text of its sweep file (as run: ``[quick]`` applied where marked).
    sweeps: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def verdict_json(self) -> dict[str, Any]:
        """The interface of ``startlab reproduce NAME --json``."""
        return {"name": self.name, "claims": [asdict(c) for c in self.claims]}


def run(
    name: str, *, quick: bool = False, out: str | Path = "startlab-reproduce", jobs: int | None = None,
    dask: str | None = None, progress: bool | None = None,
) -> Outcome:  # fmt: skip
    """Run experiment ``name`` (its sweeps, then its analysis) and write its figures (PNG and
    SVG) and ``result.json`` to ``out/NAME/``; runs stored in ``out/runs/`` are not run again."""
    from ..sweep import run as sweeprun

    exp = get(name)
    began = time.perf_counter()
    out = Path(out)
    directory = out / exp.name
    directory.mkdir(parents=True, exist_ok=True)
    (out / "runs").mkdir(exist_ok=True)
    databases = {}
    for label, file in exp.sweeps.items():
        sweep = load_sweep(file, quick)
        db = out / "runs" / f"{exp.name}.{label}{'.quick' if quick else ''}.duckdb"
        sweeprun.run_sweep(sweep, db, jobs=jobs, dask=dask, progress=progress, retry_failed=True)
        databases[label] = db
    data = Data(exp, databases, quick)
    import startlab

    error = None
    try:
        analysis = exp.analyse(data)
    except Exception as e:  # an analysis that fails is reported, not hidden
        analysis = Analysis([Claim(c, "-", "-", CANNOT_RUN, f"the analysis failed: {type(e).__name__}: {e}") for c in exp.claims])
        error = f"{type(e).__name__}: {e}"
    figures = []
    for figure_name, figure in analysis.figures.items():
        figures += _save(figure, directory / figure_name)
    runs = []
    sources = {}
    for label, db in databases.items():
        stored = data.sql(label, "SELECT * FROM runs ORDER BY point, replicate")
        axes = list(data.sql(label, "SELECT name FROM axes ORDER BY position")["name"])
        sources[label] = str(data.sql(label, "SELECT source FROM sweep")["source"].iloc[0])
        for i, row in stored.iterrows():
            # Every run's scenario is its sweep file with its axis values and seed: the resolved
            # scenario is kept for the first run of each set only (the report stays small).
            runs.append(
                {
                    "set": label, "key": row["key"], "seed": int(row["seed"]), "status": row["status"], "error": row["error"],
                    "values": {a: _plain(row[a]) for a in axes}, "scenario": row["scenario"] if i == 0 else None,
                }
            )  # fmt: skip
    outcome = Outcome(
        exp.name, exp.paper, exp.item, exp.title, quick, analysis.claims, [str(Path(f).relative_to(out)) for f in figures],
        {title: json.loads(frame.to_json(orient="split", index=False)) for title, frame in analysis.tables.items()},
        runs, startlab.__version__, time.perf_counter() - began, exp.reduced, list(exp.assumptions), error, sources,
    )  # fmt: skip
    (directory / "result.json").write_text(json.dumps(outcome.to_json(), indent=1, default=_plain) + "\n", encoding="utf-8")
    return outcome


def load_outcome(out: str | Path, name: str) -> Outcome | None:
    """The stored outcome of experiment ``name`` in ``out`` (None if it never ran there)."""
    path = Path(out) / name / "result.json"
    if not path.exists():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["claims"] = [Claim(**c) for c in raw["claims"]]
    return Outcome(**raw)


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def _save(figure: Figure, stem: Path) -> list[Path]:
    """``stem.png`` and ``stem.svg`` as ``Result.write`` saves its figures; the figure is closed."""
    import matplotlib.pyplot as plt

    from ..plot import save

    try:
        return save(figure, stem)
    finally:
        plt.close(figure)


def run_all(
    *, quick: bool = False, out: str | Path = "startlab-reproduce", jobs: int | None = None, dask: str | None = None,
    progress: bool | None = None, names: Sequence[str] | None = None, echo: Callable[[str], None] | None = None,
) -> list[Outcome]:  # fmt: skip
    """Run every experiment (or those of ``names``) into ``out``; local runs share one pool of
    worker processes. ``echo`` is told each experiment's name and time as it finishes."""
    import os

    from ..sweep import run as sweeprun

    chosen = [get(n) for n in names] if names else experiments()
    workers = jobs or os.cpu_count() or 1
    outcomes = []
    with sweeprun.shared_workers(workers) if dask is None else contextlib.nullcontext():
        for exp in chosen:
            outcome = run(exp.name, quick=quick, out=out, jobs=workers, dask=dask, progress=progress)
            outcomes.append(outcome)
            if echo is not None:
                counts = ", ".join(f"{sum(c.verdict == v for c in outcome.claims)} {v}" for v in VERDICTS if any(c.verdict == v for c in outcome.claims))
                echo(f"{exp.name}: {outcome.seconds:.1f} s, {counts}")
    return outcomes

