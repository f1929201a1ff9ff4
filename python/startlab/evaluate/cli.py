"""``startlab evaluate`` and ``startlab traces``: the command lines of the benchmark
(docs/EVALUATE.md) and of its link-trace generator."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click


def _split(values: tuple[str, ...]) -> list[str]:
    """Repeated options and comma-separated lists alike: ``--baseline a,b --baseline c``."""
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


@click.command("evaluate")
@click.argument("algorithms", nargs=-1, required=True)
@click.option("--suite", default="quick", show_default=True, help="quick, standard, full, or a suite file (.toml).")
@click.option("--baseline", "baselines", multiple=True, help="A baseline (repeat it, or a comma-separated list); default: the suite's.")
@click.option("--plugin", "plugins", multiple=True, help="A Python module that registers startup plug-ins (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Local worker processes (default: every core).")
@click.option("--dask", help="Run on this Dask scheduler (tcp://HOST:PORT) instead of local workers.")
@click.option("--report", "report_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory of the report (index.html), the JSON (evaluate.json) and the runs (evaluate.duckdb).")  # fmt: skip
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help="The runs' database (default: REPORT/evaluate.duckdb).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document on stdout (for CI).")
@click.option("--progress/--no-progress", default=None, help="A progress bar on stderr (default: when stderr is a terminal).")
@click.option("--log", is_flag=True, help="One line on stderr per stored run.")
def evaluate_command(
    algorithms: tuple[str, ...], suite: str, baselines: tuple[str, ...], plugins: tuple[str, ...], jobs: int | None, dask: str | None,
    report_dir: Path, db: Path | None, as_json: bool, progress: bool | None, log: bool,
) -> None:  # fmt: skip
    """Evaluate startup algorithms on a suite of paths and workloads against baselines: verdicts
    with confidence intervals, the harm to other flows, an HTML report (docs/EVALUATE.md)."""
    from ..cli import _Failure
    from ..sweep.file import DASK_ADDRESS
    from ..sweep.run import SweepInterrupted, SweepStoreError
    from .core import evaluate
    from .run import EvaluateError
    from .suite import SuiteError

    if jobs is not None and dask is not None:
        raise _Failure("error: give -j/--jobs or --dask, not both", 2)
    if dask is not None and not DASK_ADDRESS.match(dask):
        raise _Failure(f"error: --dask {dask!r}: expected a scheduler address such as tcp://10.0.0.1:8786", 2)
    command = "startlab evaluate " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if sys.argv[1:2] == ["evaluate"] else ""
    try:
        doc = evaluate(list(algorithms), suite, out=report_dir, baselines=_split(baselines) or None, plugins=_split(plugins), db=db,
                       jobs=jobs, dask=dask, progress=progress, log=log, command=command)  # fmt: skip
    except (SuiteError, EvaluateError, SweepStoreError) as e:
        raise _Failure(f"error: {e}", 2) from e
    except SweepInterrupted as e:
        raise _Failure(str(e), 130) from e
    runs = doc["runs"]
    click.echo(f"{runs['total']} runs ({runs['ok']} ok, {runs['failed']} failed; {doc['skipped']} already stored, {doc['ran']} run now) "
               f"on {doc['backend']} in {doc['seconds']:.1f} s; "
               f"wrote {report_dir / 'index.html'} and {report_dir / 'evaluate.json'}", err=True)  # fmt: skip
    if as_json:
        click.echo(json.dumps(doc, default=str))
        return
    from rich.table import Table

    from .._console import stdout_console

    table = Table(title=f"startlab evaluate on {doc['suite']['name']} v{doc['suite']['version']} (headline metric per workload, 95 % CI)")
    table.add_column("algorithm")
    table.add_column("against")
    workloads = sorted({w for row in doc["scorecard"] for w in row["workloads"]})
    for w in workloads:
        table.add_column(w)
    from .report import effect_text

    for row in doc["scorecard"]:
        cells = []
        for w in workloads:
            e = row["workloads"].get(w)
            cells.append("–" if e is None else f"{effect_text(e)}\n{e['verdict']} ({e['pairs']} pairs)")
        table.add_row(row["algorithm"], row["baseline"], *cells)
    stdout_console().print(table)


@click.group("traces")
def traces_command() -> None:
    """Mahimahi link traces: generate cellular-like or Wi-Fi-like ones, or measure a file."""


@traces_command.command("generate")
@click.option("--kind", type=click.Choice(["cellular", "wifi"]), required=True, help="The model (docs/EVALUATE.md states its statistics).")
@click.option("--mean-rate", required=True, help="The expected delivery rate, e.g. 12Mbps.")
@click.option("--duration", default="60s", show_default=True, help="The trace's period.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True)
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
def generate_command(kind: str, mean_rate: str, duration: str, seed: int, out: Path) -> None:
    """Write a generated trace to OUT and print its measured statistics."""
    from ..cli import _Failure
    from ..sweep.file import RATE_UNITS, TIME_UNITS
    from . import traces
    from .suite import SuiteError, amount

    try:
        rate = amount(mean_rate, RATE_UNITS, "--mean-rate", positive=True)
        seconds = amount(duration, TIME_UNITS, "--duration", positive=True)
        stamps = traces.generate(kind, rate, seconds, seed)
    except (SuiteError, ValueError) as e:
        raise _Failure(f"error: {e}", 2) from e
    measured = traces.stats(stamps)
    traces.write(out, stamps, f"startlab traces generate --kind {kind} --mean-rate {mean_rate} --duration {duration} --seed {seed}\n" + traces.describe(measured))
    click.echo(f"{out}: {traces.describe(measured)}")


@traces_command.command("stats")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of text.")
def stats_command(files: tuple[Path, ...], as_json: bool) -> None:
    """Measure Mahimahi trace files: mean rate, variability, idle time, longest gap."""
    from ..cli import _Failure
    from . import traces

    for f in files:
        try:
            s = traces.trace_stats(f)
        except ValueError as e:
            raise _Failure(f"error: {e}", 2) from e
        click.echo(json.dumps({"file": str(f), **s.as_dict()}) if as_json else f"{f}: {traces.describe(s)}")
