"""``startlab reproduce``: the command line of the reproduction suite (docs/REPRODUCTION.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("reproduce")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the experiments (name, paper, item, claims, in the checklist or beside it).")
@click.option("--all", "all_", is_flag=True, help="Run every experiment (with --report DIR).")
@click.option("--quick", is_flag=True, help="The reduced form of each experiment (what CI runs).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("startlab-reproduce"), show_default=True,
              help="Directory of the figures, outcomes and stored runs of a single experiment.")  # fmt: skip
@click.option("--report", type=click.Path(file_okay=False, path_type=Path),
              help="With --all: run into DIR and write DIR/index.html and DIR/REPRODUCTION.md; alone: write them from what DIR holds.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Local worker processes (default: every core).")
@click.option("--dask", help="Run on this Dask scheduler (tcp://HOST:PORT) instead of local workers.")
@click.option("--no-progress", is_flag=True, help="Do not draw progress bars.")
def reproduce_command(
    name: str | None, list_: bool, all_: bool, quick: bool, out: Path, report: Path | None, as_json: bool,
    jobs: int | None, dask: str | None, no_progress: bool,
) -> None:  # fmt: skip
    """Reproduce the papers' results: startlab reproduce --list | NAME | --all --report DIR."""
    from ..cli import _Failure
    from . import core
    from . import report as reports

    if jobs is not None and dask is not None:
        raise _Failure("error: give -j/--jobs or --dask, not both", 2)
    chosen = sum(bool(x) for x in (list_, all_, name))
    if chosen > 1:
        raise _Failure("error: give one of NAME, --list and --all", 2)
    progress = False if no_progress else None
    if list_:
        listing = [e.listing() for e in core.experiments()]
        if as_json:
            click.echo(json.dumps(listing))
            return
        from rich.table import Table

        from .._console import stdout_console

        inside = sum(row["checklist"] for row in listing)
        table = Table(title=f"{inside} experiments of the five papers' checklist, {len(listing) - inside} beside it (startlab reproduce NAME)")
        for heading in ("name", "paper", "item", "claims", "checklist", "title"):
            table.add_column(heading)
        for row in listing:
            table.add_row(row["name"], row["paper"], row["item"], str(row["claims"]), "yes" if row["checklist"] else "beside", row["title"])
        stdout_console().print(table)
        return
    if all_:
        if report is None:
            raise _Failure("error: --all needs --report DIR (where the runs, figures and report go)", 2)
        echo = None if as_json else (lambda line: click.echo(line, err=True))
        outcomes = core.run_all(quick=quick, out=report, jobs=jobs, dask=dask, progress=progress, echo=echo)
        page = reports.write_html(report, core.experiments())
        table = reports.write_markdown(report, core.experiments())
        if as_json:
            click.echo(json.dumps([o.verdict_json() for o in outcomes]))
        click.echo(f"wrote {page} and {table}", err=True)
        return
    if name is None:
        if report is not None:
            page = reports.write_html(report, core.experiments())
            table = reports.write_markdown(report, core.experiments())
            click.echo(f"wrote {page} and {table} from the outcomes stored there", err=True)
            return
        raise _Failure("error: give an experiment NAME, --list, or --all --report DIR (startlab reproduce --help)", 2)
    if report is not None:
        raise _Failure("error: --report goes with --all (or alone, to rewrite a report); a single experiment writes to --out", 2)
    try:
        outcome = core.run(name, quick=quick, out=out, jobs=jobs, dask=dask, progress=progress)
    except core.ReproduceError as e:
        raise _Failure(f"error: {e}", 2) from e
    if as_json:
        click.echo(json.dumps(outcome.verdict_json()))
        return
    from rich.table import Table

    from .._console import stdout_console

    table = Table(title=f"{outcome.name}: {outcome.item} ({'reduced' if outcome.quick else 'full size'}, {outcome.seconds:.1f} s)")
    for heading in ("claim", "paper", "startlab", "verdict", "reason"):
        table.add_column(heading)
    for c in outcome.claims:
        table.add_row(c.claim, c.paper, c.startlab, c.verdict, c.reason)
    stdout_console().print(table)
    click.echo(f"figures: {', '.join(str(out / f) for f in outcome.figures if f.endswith('.png')) or 'none'}", err=True)
