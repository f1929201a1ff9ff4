"""``startlab sweep results`` and ``startlab sweep plot``: the command line over a sweep's database
(the statistics and figures are :mod:`startlab.sweep.stats`'s)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import duckdb
import pandas as pd
from rich.table import Table

from .._cliutil import Failure
from .._console import stdout_console
from .stats import (
    STATS,
    SweepStatsError,
    aggregate,
    axis_label,
    cdf_figure,
    cdf_table,
    flow_values,
    one_line,
    open_db,
    plot_lines,
    render_summary,
    summary,
    value_text,
    y_unit,
)


def _bad_input(message: str) -> Failure:
    """Bad input: one ``error: ...`` line on stderr, exit code 2."""
    return Failure(f"error: {message}", 2)



@contextmanager
def _errors(database: str) -> Iterator[None]:
    try:
        yield
    except SweepStatsError as e:
        raise _bad_input(str(e)) from e
    except duckdb.Error as e:
        raise _bad_input(f"{database}: {one_line(e)}") from e
    except OSError as e:
        raise _bad_input(one_line(e)) from e


def _frame_table(title: str, frame: pd.DataFrame, max_rows: int | None = None, caption: str | None = None) -> Table:
    table = Table(title=title, caption=caption)
    for column in frame.columns:
        numeric = pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column])
        table.add_column(str(column), justify="right" if numeric else "left")
    rows = frame if max_rows is None else frame.head(max_rows)
    for row in rows.itertuples(index=False):
        table.add_row(*(value_text(v) for v in row))
    return table


@click.command("results")
@click.argument("database", metavar="SWEEP.duckdb")
@click.option("--sql", "query", metavar="QUERY", help="Run a read-only SQL query (tables sweep, axes, runs, flows, links, traces); no file access.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the --sql result to this CSV file.")
@click.option("--max-rows", default=100, show_default=True, help="Rows of a --sql result printed.")
def results_command(database: str, query: str | None, csv_path: Path | None, max_rows: int) -> None:
    """Summarize a sweep database, or query it with --sql."""
    if csv_path is not None and query is None:
        raise _bad_input("--csv needs --sql (e.g. --sql 'SELECT * FROM runs')")
    with _errors(database), open_db(database) as con:
        if query is None:
            stdout_console().print(render_summary(summary(con)))
            return
        try:
            frame = con.execute(query).df()
        except duckdb.Error as e:
            raise _bad_input(f"--sql: {one_line(e)}") from e
        if csv_path is not None:
            frame.to_csv(csv_path, index=False)
            click.echo(f"wrote {len(frame)} rows to {csv_path}", err=True)
            return
        caption = None
        if len(frame) > max_rows:
            caption = f"the first {max_rows} of {len(frame)} rows (--csv FILE writes them all)"
        stdout_console().print(_frame_table(f"{len(frame)} rows", frame, max_rows, caption))


@click.command("plot")
@click.argument("database", metavar="SWEEP.duckdb")
@click.option("--x", "x", metavar="COLUMN", help="The x axis: an axis (runs column) of the sweep.")
@click.option("--y", "y", metavar="COLUMN", help="The metric: a flows column (su_time, throughput, ...) or a runs column (wall_s).")
@click.option("--by", "by", metavar="COLUMN", help="One line per value of this axis or flows column (startup).")
@click.option("--stat", type=click.Choice(STATS), default="mean", show_default=True, help="Statistic across replicates.")
@click.option("--ci", type=float, default=0.95, show_default=True, help="Confidence level of the band.")
@click.option("--kind", type=click.Choice(["line", "cdf"]), default="line", show_default=True, help="Lines over x, or the CDF over flows.")
@click.option("--flow", metavar="NAME", help="Only this flow of each run.")
@click.option("--where", metavar="SQL", help="SQL condition on runs (r.) and flows (f.) columns, e.g. \"cbw >= 10\".")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Figure file (PNG, SVG, PDF).")
@click.option("--logx", is_flag=True, help="Logarithmic x axis (line plots).")
@click.option("--table", "table_only", is_flag=True, help="Print the table only; draw no figure.")
def plot_command(
    database: str, x: str | None, y: str | None, by: str | None, stat: str, ci: float, kind: str,
    flow: str | None, where: str | None, out: Path | None, logx: bool, table_only: bool,
) -> None:
    """Plot a metric of a sweep against an axis (mean/median over replicates with a CI band),
    or its CDF over flows (--kind cdf); print the table behind it."""
    if y is None:
        raise _bad_input("--y COLUMN is required (e.g. --y su_time)")
    if kind == "line" and x is None:
        raise _bad_input("--x COLUMN is required for --kind line (e.g. --x cbw)")
    if not 0 < ci < 1:
        raise _bad_input(f"--ci must be in (0, 1), got {ci:g}")
    db = Path(database)
    with _errors(database), open_db(database) as con:
        if kind == "line":
            assert x is not None
            frame = aggregate(con, x, y, by=by, stat=stat, ci=ci, flow=flow, where=where)
            figure = None if table_only else plot_lines(frame, x, y, by, logx=logx)
            target = out or db.with_name(f"{db.stem}-{y}-vs-{x}.png")
            unit, scale = y_unit(y)
            shown = frame.copy()
            for column in (y, "ci_low", "ci_high", "std"):
                shown[column] = shown[column] * scale
            shown = shown.rename(columns={y: f"{stat} {axis_label(y, unit)}", x: axis_label(x, frame.attrs["x_unit"])})
            kind_ci = "t" if stat == "mean" else "order statistics"
            title = f"{stat} {y} over replicates, {100 * ci:g} % CI ({kind_ci})"
            notes = []
            if stat == "median" and len(frame) and frame["ci_low"].isna().any():
                need = math.ceil(math.log2(2 / (1 - ci)) - 1e-9)
                notes.append(f"a median CI at {100 * ci:g} % needs n ≥ {need}")
        else:
            values = flow_values(con, y, by=by, flow=flow, where=where)
            figure = None if table_only else cdf_figure(values, y, by)
            target = out or db.with_name(f"{db.stem}-{y}-cdf.png")
            unit, scale = y_unit(y)
            shown = cdf_table(values, y, by)
            for column in ("mean", "median", "p5", "p95"):
                shown[column] = shown[column] * scale
            title = f"{axis_label(y, unit)} over the {values.attrs['unit']} of ok runs"
            frame = values
            notes = []
        failed = frame.attrs["excluded_failed"]
        if failed:
            notes.append(f"{failed} failed run{'s' if failed != 1 else ''} excluded")
        pooled = frame.attrs.get("pooled_values") or {}
        pooled_list = ", ".join(f"{name} ({count} values)" for name, count in pooled.items())
        if pooled:
            notes.append(f"pooled over {pooled_list}")
        stdout_console().print(_frame_table(title, shown, caption="; ".join(notes) or None))
        if figure is not None:
            try:
                figure.savefig(target, dpi=150)
            except ValueError as e:  # an unknown file format
                raise _bad_input(f"{target}: {one_line(e)}") from e
            click.echo(f"wrote {target}", err=True)
        if pooled:
            fix = "--where" + (" or add --by" if by is None else "")
            click.echo(f"note: pooled over {pooled_list}; fix them with {fix}", err=True)
