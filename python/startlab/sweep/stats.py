"""Statistics, figures and summaries over a parameter sweep's DuckDB database.

A sweep database (written by the sweep runner) holds one row per simulation run in ``runs`` (one
column per sweep axis, in the axis unit, plus ``status``, ``error``, ``wall_s``, ...), the per-flow
results of the successful runs in ``flows`` and the per-link results in ``links``; ``axes`` names
the axes with their unit, ``sweep`` the sweep itself. These tables hold only the runs of the
current sweep definition (older runs are moved to ``archive_*`` tables, which this module ignores).
This module only reads the database: every connection is read-only and has external access
(files, extensions, ``COPY ... TO``, ``ATTACH``) disabled, so ``--sql`` cannot write anything.

Definitions used by :func:`aggregate`:

* **Per-run reduction.** A flows metric ``y`` is first reduced to one value per run: the mean of
  ``y`` over that run's measured flows (``measured = TRUE``), restricted to ``flow = NAME`` when a
  flow is given and to each value of ``by`` when ``by`` is a flows column. NULL and NaN values are
  ignored (``completion_time`` of a flow that did not complete, say); a run with no value left
  contributes nothing. A runs column ``y`` (``wall_s``, ...) is its own per-run value. Failed runs
  (``status <> 'ok'``) are excluded and counted.
* **Across replicates.** For each (``by``, ``x``) group of n per-run values x₁..xₙ: the statistic
  (mean or median), the sample standard deviation ``s`` (ddof = 1) and a confidence interval at
  level ``ci``:

  - mean: the Student t interval ``x̄ ± t(1 - α/2; n - 1) · s / √n`` with α = 1 - ci;
  - median: the distribution-free order-statistics interval ``[x₍l₎, x₍n-l+1₎]`` (1-based ranks of
    the sorted values), where l is the largest rank with ``P(B ≤ l - 1) ≤ α/2`` for
    B ~ Binomial(n, 1/2); its coverage is ``1 - 2·P(B ≤ l - 1) ≥ ci``. When even l = 1 does not
    reach the level (n < log₂(2/α): n < 6 at 95 %) the interval is NaN rather than overstated.

  With n = 1 the interval and ``s`` are NaN.
* **Pooling.** Runs that differ in an axis other than ``x`` and ``by`` fall into the same group
  and are pooled as replicates. The statistic is computed all the same, but such axes (those
  taking more than one value within some group, after ``where``) are reported in
  ``attrs["pooled"]`` (names, in axis order) and ``attrs["pooled_values"]`` (name → the most
  distinct values one group pools), and the ``plot`` command and figures say so.

Column names given by the user are checked against the tables' columns before they reach SQL (and
quoted); flow names are bound as parameters. ``where`` is the exception: a trusted SQL boolean
expression from the command line, applied as is (runs are aliased ``r``, flows ``f``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rich.console import Group, RenderableType
from rich.table import Table
from scipy import stats as _stats


__all__ = [
    "SweepStatsError",
    "aggregate",
    "axis_label",
    "cdf_figure",
    "cdf_table",
    "flow_values",
    "mean_ci",
    "median_ci",
    "one_line",
    "open_db",
    "plot_cdf",
    "plot_lines",
    "render_summary",
    "run_values",
    "summary",
    "value_text",
    "y_unit",
]

#: How every connection is opened: read-only, and no access to files, extensions or the network
#: beyond the database itself (so a ``--sql`` query cannot write or read anything else).
_CONFIG = {"enable_external_access": False}

#: The statistics :func:`aggregate` computes across replicates.
STATS = ("mean", "median")

#: Above this many series a legend hides the plot instead of explaining it.
_MAX_LEGEND = 12
#: Rows kept in the summary's failure and axis-combination tables, values listed per axis.
_MAX_FAILURES = 20
_MAX_COMBINATIONS = 30
_MAX_AXIS_VALUES = 20
#: Flow names listed when an unknown one is asked for.
_MAX_FLOW_NAMES = 20

_NUMERIC_PREFIXES = (
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
    "UBIGINT", "UHUGEINT", "FLOAT", "REAL", "DOUBLE", "DECIMAL", "BOOLEAN",
)


class SweepStatsError(ValueError):
    """A sweep database that cannot be read, or a request it cannot answer (one-line message)."""


# --------------------------------------------------------------------------------------------
# The database


def open_db(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open a sweep database read-only, without external access (files, extensions, network).

    SweepStatsError if it is missing, locked by a writer (a running sweep) or not a sweep database.
    """
    file = Path(path)
    expected = "a startlab sweep database (a DuckDB file with a 'runs' table)"
    if not file.exists():
        raise SweepStatsError(f"{path}: no such file; expected {expected}")
    if not file.is_file():
        raise SweepStatsError(f"{path}: not a file; expected {expected}")
    try:
        con = duckdb.connect(str(file), read_only=True, config=dict(_CONFIG))
    except duckdb.Error as e:
        if _locked(e):
            raise SweepStatsError(
                f"{path} is being written by another process (a running sweep); try again when it ends"
            ) from e
        raise SweepStatsError(f"{path}: cannot open ({one_line(e)}); expected {expected}") from e
    if "runs" not in _tables(con):
        con.close()
        raise SweepStatsError(f"{path}: no 'runs' table; expected {expected}")
    return con


class _Ref(NamedTuple):
    """A checked column: its name, table (``runs`` or ``flows``) and DuckDB type."""

    name: str
    table: str
    type: str

    @property
    def sql(self) -> str:
        return f"{'r' if self.table == 'runs' else 'f'}.{_quote(self.name)}"

    @property
    def numeric(self) -> bool:
        return self.type.upper().startswith(_NUMERIC_PREFIXES)


@dataclass(frozen=True)
class _Schema:
    runs: dict[str, str]
    flows: dict[str, str]
    axes: list[dict[str, Any]]

    @property
    def axis_names(self) -> list[str]:
        return [a["name"] for a in self.axes if a["name"] in self.runs]

    def unit(self, name: str) -> str | None:
        for axis in self.axes:
            if axis["name"] == name:
                return axis["unit"]
        return None

    def column(self, name: str, option: str, tables: Sequence[str]) -> _Ref:
        """The column ``name`` from the first of ``tables`` that has it, else a listing error."""
        for table in tables:
            columns = self.runs if table == "runs" else self.flows
            if name in columns:
                return _Ref(name, table, columns[name])
        if tables == ("runs",) and name in self.flows:
            raise SweepStatsError(
                f"{option} {name!r} is a flows column; {option} must be a runs column "
                f"(an axis: {', '.join(self.axis_names) or 'none'}; or {', '.join(self._others())})"
            )
        known = f"axes: {', '.join(self.axis_names) or 'none'}; runs: {', '.join(self._others())}"
        if "flows" in tables:
            known += f"; flows: {', '.join(c for c in self.flows if c != 'key') or 'none'}"
        raise SweepStatsError(f"unknown column {name!r} for {option}; {known}")

    def _others(self) -> list[str]:
        axes = set(self.axis_names)
        return [c for c in self.runs if c not in axes]


def _schema(con: duckdb.DuckDBPyConnection) -> _Schema:
    tables = _tables(con)
    if "runs" not in tables:
        raise SweepStatsError("not a startlab sweep database: no 'runs' table")
    axes: list[dict[str, Any]] = []
    if "axes" in tables:
        rows = con.execute("SELECT * FROM axes ORDER BY position").df()
        axes = [
            {k: (None if _missing(v) else v) for k, v in row.items()}
            for row in rows.to_dict(orient="records")
        ]
    return _Schema(_columns(con, "runs"), _columns(con, "flows") if "flows" in tables else {}, axes)


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()
    return {name for (name,) in rows}


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return dict(rows)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _locked(error: BaseException) -> bool:
    """Whether DuckDB refused a connection because another process holds the file's lock."""
    text = str(error).lower()
    return "could not set lock" in text or "conflicting lock" in text


def one_line(error: BaseException) -> str:
    """DuckDB's message without its ``LINE 1: ...`` pointer, on one line."""
    text = str(error).strip().split("\n\n")[0]
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


# --------------------------------------------------------------------------------------------
# Confidence intervals


def mean_ci(values: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Student t interval ``x̄ ± t(1 - α/2; n - 1)·s/√n`` (α = 1 - level); NaN for n < 2."""
    _check_level(level)
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2:
        return math.nan, math.nan
    mean = float(x.mean())
    half = float(_stats.t.ppf((1 + level) / 2, n - 1)) * float(x.std(ddof=1)) / math.sqrt(n)
    return mean - half, mean + half


def median_ci(values: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Order-statistics interval ``[x₍l₎, x₍n-l+1₎]`` for the median (see the module docstring).

    l is the largest rank with ``P(B ≤ l - 1) ≤ (1 - level)/2``, B ~ Binomial(n, 1/2). NaN when
    n < 2 or when no rank reaches the level (the extremes cover only ``1 - 2^(1-n)``).
    """
    _check_level(level)
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n < 2:
        return math.nan, math.nan
    cdf = _stats.binom.cdf(np.arange(n + 1), n, 0.5)
    rank = int(np.count_nonzero(cdf <= (1 - level) / 2 + 1e-12))
    if rank == 0:
        return math.nan, math.nan
    return float(x[rank - 1]), float(x[n - rank])


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise SweepStatsError(f"the confidence level must be in (0, 1), got {level:g}")


# --------------------------------------------------------------------------------------------
# Aggregation


def run_values(
    con: duckdb.DuckDBPyConnection,
    x: str,
    y: str,
    by: str | None = None,
    flow: str | None = None,
    where: str | None = None,
) -> pd.DataFrame:
    """One row per ok run (and ``by`` value): columns ``key``, [by], x, y (the per-run value).

    ``y`` is the mean over the run's measured flows (restricted to ``flow``; NULL/NaN ignored) for a
    flows column, the run's own value for a runs column; rows whose value is NULL are dropped.
    Rows are ordered by ``by``, ``x`` and run key. ``attrs["excluded_failed"]`` counts the failed
    runs left out (those matching ``where`` when it names only runs columns).
    """
    schema = _schema(con)
    xr = schema.column(x, "x", ("runs",))
    yr = schema.column(y, "y", ("flows", "runs"))
    br = schema.column(by, "by", ("runs", "flows")) if by is not None else None
    names = [n for n in (by, x, y) if n is not None]
    if len(set(names)) != len(names) or set(names) & {"key", "n", "ci_low", "ci_high", "std"}:
        raise SweepStatsError(f"x, y and by must be different columns other than key, got {', '.join(names)}")
    if not yr.numeric:
        raise SweepStatsError(f"y column {y!r} is {yr.type}, not a number")
    join = yr.table == "flows" or (br is not None and br.table == "flows") or flow is not None
    value = f"NULLIF(CAST({yr.sql} AS DOUBLE), 'NaN'::DOUBLE)"
    keys = ["r.key", f"{xr.sql} AS {_quote(x)}"]
    if br is not None:
        keys.insert(1, f"{br.sql} AS {_quote(by)}")  # type: ignore[arg-type]
    order = [_quote(n) for n in (by, x) if n is not None] + ["key"]
    params: list[Any] = []
    if join:
        conditions = ["r.status = 'ok'", "f.measured IS TRUE"]
        if flow is not None:
            _check_flow(con, schema, flow)
            conditions.append("f.flow = ?")
            params.append(flow)
        if where:
            conditions.append(f"({where})")
        sql = (
            f"SELECT {', '.join(keys)}, avg({value} ORDER BY f.flow, {value}) AS {_quote(y)} "
            f"FROM runs r JOIN flows f ON f.key = r.key WHERE {' AND '.join(conditions)} "
            f"GROUP BY ALL ORDER BY {', '.join(order)}"
        )
    else:
        conditions = ["r.status = 'ok'"] + ([f"({where})"] if where else [])
        sql = (
            f"SELECT {', '.join(keys)}, {value} AS {_quote(y)} FROM runs r "
            f"WHERE {' AND '.join(conditions)} ORDER BY {', '.join(order)}"
        )
    frame = _query(con, sql, params, "--where" if where else "query")
    frame = frame[frame[y].notna()].reset_index(drop=True)
    frame.attrs["excluded_failed"] = _failed(con, where)
    return frame


def aggregate(
    con: duckdb.DuckDBPyConnection,
    x: str,
    y: str,
    by: str | None = None,
    stat: str = "mean",
    ci: float = 0.95,
    flow: str | None = None,
    where: str | None = None,
) -> pd.DataFrame:
    """``stat`` of the per-run values of ``y`` per (``by``, ``x``), with its confidence interval.

    Columns: [by], x, ``n`` (runs with a value), y (the mean or median of the per-run values),
    ``ci_low``, ``ci_high`` (the interval at level ``ci``: Student t for the mean, binomial
    order statistics for the median; see the module docstring) and ``std`` (sample standard
    deviation, ddof = 1). Sorted by by, then x. ``attrs``: ``excluded_failed`` (failed runs left
    out), ``x``, ``y``, ``by``, ``stat``, ``ci``, ``x_unit`` (from the ``axes`` table), ``runs``,
    ``pooled`` (the other axes pooled within a group: see the module docstring) and
    ``pooled_values`` (per pooled axis, the most distinct values a group pools).

    ``x`` is a runs column (an axis); ``by`` a runs or flows column (``startup``); ``y`` a flows
    column (a flows metric, reduced per run as in :func:`run_values`) or a runs column. ``where`` is
    a trusted SQL boolean expression over runs (``r.``) and flows (``f.``) columns.
    """
    if stat not in STATS:
        raise SweepStatsError(f"unknown statistic {stat!r}; use {' or '.join(STATS)}")
    _check_level(ci)
    values = run_values(con, x, y, by=by, flow=flow, where=where)
    keys = [by, x] if by is not None else [x]
    interval = mean_ci if stat == "mean" else median_ci
    rows = []
    for key, group in values.groupby(keys, sort=True, dropna=False):
        v = group[y].to_numpy(dtype=float)
        low, high = interval(v, ci)
        row = dict(zip(keys, key))
        row.update(
            {
                "n": len(v),
                y: float(v.mean() if stat == "mean" else np.median(v)),
                "ci_low": low,
                "ci_high": high,
                "std": float(v.std(ddof=1)) if len(v) > 1 else math.nan,
            }
        )
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*keys, "n", y, "ci_low", "ci_high", "std"])
    if len(frame) == 0:
        frame = frame.astype({"n": "int64"})
    schema = _schema(con)
    pooled = _pooled(con, schema, values, keys)
    frame.attrs.update(
        {
            "excluded_failed": values.attrs["excluded_failed"],
            "x": x,
            "y": y,
            "by": by,
            "stat": stat,
            "ci": ci,
            "x_unit": schema.unit(x),
            "runs": int(values["key"].nunique()),
            "pooled": list(pooled),
            "pooled_values": pooled,
        }
    )
    return frame


def flow_values(
    con: duckdb.DuckDBPyConnection,
    y: str,
    by: str | None = None,
    flow: str | None = None,
    where: str | None = None,
) -> pd.DataFrame:
    """Every measured flow's ``y`` of every ok run: columns ``key``, [by], y (NULL/NaN dropped).

    For a runs column ``y`` (and a runs ``by``, no ``flow``) one value per ok run instead.
    ``attrs["excluded_failed"]`` counts the failed runs left out; ``attrs["unit"]`` is
    ``"flows"`` or ``"runs"``; ``attrs["pooled"]`` and ``attrs["pooled_values"]`` name the axes
    other than ``by`` whose values the distribution mixes (as for :func:`aggregate`).
    """
    schema = _schema(con)
    yr = schema.column(y, "y", ("flows", "runs"))
    br = schema.column(by, "by", ("runs", "flows")) if by is not None else None
    if by == y:
        raise SweepStatsError("y and by must be different columns")
    if not yr.numeric:
        raise SweepStatsError(f"y column {y!r} is {yr.type}, not a number")
    join = yr.table == "flows" or (br is not None and br.table == "flows") or flow is not None
    value = f"NULLIF(CAST({yr.sql} AS DOUBLE), 'NaN'::DOUBLE)"
    keys = ["r.key"] + ([f"{br.sql} AS {_quote(by)}"] if br is not None else [])  # type: ignore[arg-type]
    conditions = ["r.status = 'ok'"]
    params: list[Any] = []
    if join:
        conditions.append("f.measured IS TRUE")
        if flow is not None:
            _check_flow(con, schema, flow)
            conditions.append("f.flow = ?")
            params.append(flow)
    if where:
        conditions.append(f"({where})")
    source = "runs r JOIN flows f ON f.key = r.key" if join else "runs r"
    order = ([_quote(by)] if by is not None else []) + ["key"] + (["f.flow"] if join else []) + [_quote(y)]
    sql = (
        f"SELECT {', '.join(keys)}, {value} AS {_quote(y)} FROM {source} "
        f"WHERE {' AND '.join(conditions)} ORDER BY {', '.join(order)}"
    )
    frame = _query(con, sql, params, "--where" if where else "query")
    frame = frame[frame[y].notna()].reset_index(drop=True)
    frame.attrs["excluded_failed"] = _failed(con, where)
    frame.attrs["unit"] = "flows" if join else "runs"
    pooled = _pooled(con, schema, frame, [by] if by is not None else [])
    frame.attrs["pooled"] = list(pooled)
    frame.attrs["pooled_values"] = pooled
    return frame


def _pooled(
    con: duckdb.DuckDBPyConnection, schema: _Schema, values: pd.DataFrame, groups: Sequence[str]
) -> dict[str, int]:
    """Axes other than ``groups`` taking several values among the runs of one group of ``values``.

    ``values`` has a ``key`` column (the runs that enter the result) and the ``groups`` columns.
    Maps each such axis, in axis order, to the most distinct values (NULL counting as one) that one
    group holds. Checked within groups, so an axis that merely varies along x is not reported.
    """
    axes = [a for a in schema.axis_names if a not in groups and a != "key"]
    if not axes or values.empty:
        return {}
    runs = con.execute(f"SELECT key, {', '.join(_quote(a) for a in axes)} FROM runs").df()
    runs = runs.drop_duplicates("key")
    for axis in axes:
        if runs[axis].dtype == object:  # lists or structs would not hash
            runs[axis] = runs[axis].map(lambda v: None if _missing(v) else repr(v))
    merged = values[["key", *groups]].merge(runs, on="key", how="inner")
    if merged.empty:
        return {}
    if groups:
        counts = merged.groupby(list(groups), sort=False, dropna=False)[axes].nunique(dropna=False).max()
    else:
        counts = merged[axes].nunique(dropna=False)
    return {a: int(counts[a]) for a in axes if int(counts[a]) > 1}


def _pooled_text(pooled: Sequence[str]) -> str:
    return f"pooled over {', '.join(pooled)}" if pooled else ""


def _check_flow(con: duckdb.DuckDBPyConnection, schema: _Schema, flow: str) -> None:
    if "flow" not in schema.flows:
        raise SweepStatsError("the flows table has no 'flow' column to select a flow by")
    (found,) = con.execute("SELECT count(*) FROM flows WHERE flow = ?", [flow]).fetchone()  # type: ignore[misc]
    if not found:
        names = [
            n for (n,) in con.execute(
                f"SELECT DISTINCT flow FROM flows ORDER BY flow LIMIT {_MAX_FLOW_NAMES + 1}"
            ).fetchall()
        ]
        listed = ", ".join(map(str, names[:_MAX_FLOW_NAMES])) + (", ..." if len(names) > _MAX_FLOW_NAMES else "")
        raise SweepStatsError(f"no flow named {flow!r}; flows: {listed or 'none'}")


def _query(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any], what: str) -> pd.DataFrame:
    try:
        return con.execute(sql, params).df()
    except duckdb.Error as e:
        raise SweepStatsError(f"{what}: {one_line(e)}") from e


def _failed(con: duckdb.DuckDBPyConnection, where: str | None) -> int:
    """Failed runs, those matching ``where`` if it can be evaluated on runs alone."""
    sql = "SELECT count(*) FROM runs r WHERE r.status IS DISTINCT FROM 'ok'"
    if where:
        try:
            return int(con.execute(f"{sql} AND ({where})").fetchone()[0])  # type: ignore[index]
        except duckdb.Error:
            pass  # names flows columns, which failed runs do not have
    return int(con.execute(sql).fetchone()[0])  # type: ignore[index]


# --------------------------------------------------------------------------------------------
# Units and figures

_BITRATES = {"throughput", "su_throughput", "su_throughput_sent", "goodput", "available_rate", "qs_requested", "qs_approved", "rate"}
_RATIOS = {"su_loss", "loss_rate", "loss_in_startup"}
_SECONDS = {"srtt", "base_rtt", "t0", "t_su", "start", "past_g_b", "past_gap", "warmup_end"}
_PACKETS = {"exit_cwnd_pkts", "final_cwnd_pkts", "drops", "retransmissions", "packets_sent",
            "early_losses", "early_peak_queue", "impairment_drops", "ecn_marks"}
_BYTES = {"size", "mss", "bdp", "bytes_acked", "bytes_delivered", "exit_cwnd", "final_cwnd"}


def y_unit(name: str) -> tuple[str | None, float]:
    """(unit label, scale) for plotting a results column: bit/s → Mbit/s, ratios → %, ..."""
    if name in _BITRATES or name.endswith("_throughput"):
        return "Mbit/s", 1e-6
    if name in _RATIOS or name.endswith("_loss"):
        return "%", 100.0
    if name in _SECONDS or name.endswith(("_time", "_s")):
        return "s", 1.0
    if name in _PACKETS:
        return "pkts", 1.0
    if name in _BYTES:
        return "B", 1.0
    if name == "overshoot":
        return "×BDP", 1.0
    return None, 1.0


def axis_label(name: str, unit: str | None) -> str:
    return f"{name} ({unit})" if unit else name


def plot_lines(
    frame: pd.DataFrame,
    x: str | None = None,
    y: str | None = None,
    by: str | None = None,
    *,
    x_unit: str | None = None,
    logx: bool = False,
    title: str | None = None,
) -> Figure:
    """One line with markers per ``by`` value over ``x``, the CI band shaded (an aggregate frame).

    ``x``, ``y`` and ``by`` default to those :func:`aggregate` recorded in ``frame.attrs``; the x
    unit to the axis unit it recorded; y is scaled to its unit (:func:`y_unit`).
    """
    x = x or frame.attrs.get("x")
    y = y or frame.attrs.get("y")
    if by is None:
        by = frame.attrs.get("by")
    if x is None or y is None:
        raise SweepStatsError("plot_lines needs x and y")
    for name in (x, y, by, "ci_low", "ci_high"):
        if name is not None and name not in frame.columns:
            raise SweepStatsError(f"{name!r} is not a column of the aggregated frame")
    unit, scale = y_unit(y)
    x_unit = x_unit if x_unit is not None else frame.attrs.get("x_unit") or y_unit(x)[0]
    stat, ci = frame.attrs.get("stat", "mean"), frame.attrs.get("ci")
    figure, ax = _figure(axis_label(x, x_unit), axis_label(f"{stat} {y}" if stat else y, unit))
    if title is None:
        title = f"{stat} {y} vs {x}" + (f" by {by}" if by else "")
        if ci is not None:
            kind = "t" if stat == "mean" else "order statistics"
            title += f", {100 * ci:g} % CI ({kind})"
        if len(frame):
            low, high = int(frame["n"].min()), int(frame["n"].max())
            title += f", n = {low}" if low == high else f", n = {low}–{high}"
        if frame.attrs.get("pooled"):
            title += "\n" + _pooled_text(frame.attrs["pooled"])
    ax.set_title(title)
    numeric = pd.api.types.is_numeric_dtype(frame[x]) and not pd.api.types.is_bool_dtype(frame[x])
    ticks: list[Any] = [] if numeric else _sorted(set(frame[x]))
    groups: list[tuple[Any, pd.DataFrame]] = (
        list(frame.groupby(by, sort=True, dropna=False)) if by else [(None, frame)]
    )
    for key, rows in groups:
        xs = rows[x].to_numpy(dtype=float) if numeric else np.array([ticks.index(v) for v in rows[x]], dtype=float)
        (line,) = ax.plot(xs, rows[y].to_numpy(dtype=float) * scale, marker="o", label=None if by is None else str(key))
        low = rows["ci_low"].to_numpy(dtype=float) * scale
        high = rows["ci_high"].to_numpy(dtype=float) * scale
        if np.isfinite(low).any():
            ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if not numeric:
        ax.set_xticks(range(len(ticks)), [str(t) for t in ticks])
    elif logx and len(frame) and (frame[x] > 0).all():
        ax.set_xscale("log")
    _finish(ax, len(groups) if by else 0, f"no {y} values", legend_title=by)
    return figure


def plot_cdf(
    con: duckdb.DuckDBPyConnection,
    y: str,
    by: str | None = None,
    flow: str | None = None,
    where: str | None = None,
) -> Figure:
    """Empirical CDF of ``y`` over all measured flows of all ok runs, one curve per ``by`` value."""
    values = flow_values(con, y, by=by, flow=flow, where=where)
    return cdf_figure(values, y, by)


def _sorted(values: set[Any]) -> list[Any]:
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def cdf_figure(values: pd.DataFrame, y: str, by: str | None) -> Figure:
    unit, scale = y_unit(y)
    what = values.attrs.get("unit", "flows")
    figure, ax = _figure(axis_label(y, unit), f"fraction of {what}")
    title = f"CDF of {y}" + (f" by {by}" if by else "") + f" over {what} of ok runs"
    if values.attrs.get("pooled"):
        title += "\n" + _pooled_text(values.attrs["pooled"])
    ax.set_title(title)
    groups: list[tuple[Any, pd.DataFrame]] = (
        list(values.groupby(by, sort=True, dropna=False)) if by else [("all", values)]
    )
    series = 0
    for key, rows in groups:
        v = np.sort(rows[y].to_numpy(dtype=float)) * scale
        if len(v):
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=f"{key} ({len(v)})")
            series += 1
    ax.set_ylim(0, 1.02)
    _finish(ax, series, f"no {y} values", legend_title=by)
    return figure


def cdf_table(values: pd.DataFrame, y: str, by: str | None) -> pd.DataFrame:
    """n, mean, median, p5 and p95 of the values per ``by`` value."""
    groups = values.groupby(by, sort=True, dropna=False) if by else [("all", values)]
    rows = []
    for key, g in groups:
        v = g[y].to_numpy(dtype=float)
        rows.append(
            {by or "values": key, "n": len(v), "mean": v.mean(), "median": np.median(v),
             "p5": np.quantile(v, 0.05), "p95": np.quantile(v, 0.95)}
        )
    return pd.DataFrame(rows, columns=[by or "values", "n", "mean", "median", "p5", "p95"])


def _figure(xlabel: str, ylabel: str) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    return figure, ax


def _finish(ax: Axes, series: int, empty: str, legend_title: str | None = None) -> None:
    if not ax.lines:
        ax.text(0.5, 0.5, empty, transform=ax.transAxes, ha="center", va="center")
    elif 0 < series <= _MAX_LEGEND:
        ax.legend(loc="best", fontsize="small", title=legend_title)


# --------------------------------------------------------------------------------------------
# Summary


def summary(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """What a sweep database holds, compactly.

    Keys: ``name``, ``seed``, ``replicates``, ``created``, ``version`` (the sweep's),
    ``run_versions`` (distinct versions of the runs), ``runs`` ({total, ok, failed, other}),
    ``points`` (distinct grid points), ``wall_s`` (total), ``axes`` (per axis: name, kind, unit,
    type, keys, distinct, values — the first 20 distinct values), ``failures`` (the 20 most
    frequent first lines of the error messages with their counts), ``failure_kinds`` (distinct
    first lines), ``combinations`` (run counts per combination of axis values: runs, ok, failed;
    the 30 with most failures, then in axis order), ``combinations_total`` and ``traces``.
    """
    schema = _schema(con)
    tables = _tables(con)
    info: dict[str, Any] = {"name": None, "seed": None, "replicates": None, "created": None, "version": None}
    if "sweep" in tables:
        cursor = con.execute("SELECT * FROM sweep LIMIT 1")
        names = [d[0] for d in cursor.description or ()]
        row = cursor.fetchone()
        if row is not None:
            info.update({k: v for k, v in zip(names, row) if k in info})
    status = "status" in schema.runs
    total, ok, failed = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'failed') FROM runs"
        if status else "SELECT count(*), count(*), 0 FROM runs"
    ).fetchone()  # type: ignore[misc]
    info["runs"] = {"total": total, "ok": ok, "failed": failed, "other": total - ok - failed}
    info["run_versions"] = (
        [v for (v,) in con.execute("SELECT DISTINCT version FROM runs WHERE version IS NOT NULL ORDER BY 1").fetchall()]
        if "version" in schema.runs else []
    )
    info["points"] = (
        con.execute("SELECT count(DISTINCT point) FROM runs").fetchone()[0]  # type: ignore[index]
        if "point" in schema.runs else None
    )
    info["wall_s"] = (
        con.execute("SELECT sum(wall_s) FROM runs").fetchone()[0]  # type: ignore[index]
        if "wall_s" in schema.runs else None
    )
    axes = []
    for axis in schema.axes:
        name = axis["name"]
        entry = {k: axis.get(k) for k in ("name", "kind", "unit", "type", "keys")}
        if name in schema.runs:
            column = _quote(name)
            entry["distinct"] = con.execute(f"SELECT count(DISTINCT {column}) FROM runs").fetchone()[0]  # type: ignore[index]
            entry["values"] = [
                v for (v,) in con.execute(
                    f"SELECT DISTINCT {column} FROM runs ORDER BY 1 NULLS LAST LIMIT {_MAX_AXIS_VALUES}"
                ).fetchall()
            ]
        else:
            entry["distinct"], entry["values"] = 0, []
        axes.append(entry)
    info["axes"] = axes
    info["failures"], info["failure_kinds"] = [], 0
    if status and "error" in schema.runs:
        first_line = "coalesce(nullif(trim(split_part(error, chr(10), 1)), ''), '(no message)')"
        failed_rows = "FROM runs WHERE status IS DISTINCT FROM 'ok'"
        info["failure_kinds"] = con.execute(f"SELECT count(DISTINCT {first_line}) {failed_rows}").fetchone()[0]  # type: ignore[index]
        info["failures"] = [
            {"error": message, "count": count}
            for message, count in con.execute(
                f"SELECT {first_line} AS message, count(*) AS n {failed_rows} "
                f"GROUP BY message ORDER BY n DESC, message LIMIT {_MAX_FAILURES}"
            ).fetchall()
        ]
    names = schema.axis_names
    info["combinations"], info["combinations_total"] = [], 0
    if names:
        columns = ", ".join(_quote(n) for n in names)
        ok_sql = "count(*) FILTER (WHERE status = 'ok')" if status else "count(*)"
        grouped = f"SELECT {columns}, count(*) AS runs, {ok_sql} AS ok FROM runs GROUP BY ALL"
        info["combinations_total"] = con.execute(f"SELECT count(*) FROM ({grouped})").fetchone()[0]  # type: ignore[index]
        frame = con.execute(
            f"SELECT *, runs - ok AS failed FROM ({grouped}) "
            f"ORDER BY failed DESC, {', '.join(f'{_quote(n)} NULLS LAST' for n in names)} LIMIT {_MAX_COMBINATIONS}"
        ).fetchall()
        info["combinations"] = [dict(zip([*names, "runs", "ok", "failed"], row)) for row in frame]
    info["traces"] = (
        con.execute("SELECT count(*) FROM traces").fetchone()[0]  # type: ignore[index]
        if "traces" in tables else 0
    )
    return info


def render_summary(info: dict[str, Any]) -> RenderableType:
    """The summary as rich tables: the sweep, its axes, its failures, runs per axis combination."""
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    runs = info["runs"]
    counts = f"{runs['total']} runs: {runs['ok']} ok, {runs['failed']} failed"
    if runs.get("other"):
        counts += f", {runs['other']} other"
    versions = [v for v in [info.get("version")] if v]
    versions += [v for v in info.get("run_versions", []) if v not in versions]
    for key, value in (
        ("sweep", info.get("name")),
        ("version", ", ".join(map(str, versions)) or None),
        ("seed", info.get("seed")),
        ("replicates", info.get("replicates")),
        ("created", info.get("created")),
        ("runs", counts),
        ("grid points", info.get("points")),
        ("run time (sum)", None if info.get("wall_s") is None else f"{info['wall_s']:.1f} s"),
        ("traces", info.get("traces") or None),
    ):
        if value is not None:
            head.add_row(key, str(value))
    parts: list[RenderableType] = [head]
    if info["axes"]:
        axes = Table(title="Axes")
        for heading in ("axis", "kind", "unit", "values"):
            axes.add_column(heading)
        for axis in info["axes"]:
            values = ", ".join(value_text(v) for v in axis["values"])
            if axis["distinct"] > len(axis["values"]):
                values += f", ... ({axis['distinct']} distinct)"
            axes.add_row(axis["name"], value_text(axis["kind"]), value_text(axis["unit"]), values)
        parts.append(axes)
    if info["failures"]:
        title = "Failures"
        if info["failure_kinds"] > len(info["failures"]):
            title += f" (the {len(info['failures'])} most frequent of {info['failure_kinds']} messages)"
        failures = Table(title=title)
        failures.add_column("runs", justify="right")
        failures.add_column("error")
        for f in info["failures"]:
            failures.add_row(str(f["count"]), f["error"])
        parts.append(failures)
    if info["combinations"]:
        title = "Runs per axis combination"
        if info["combinations_total"] > len(info["combinations"]):
            title += f" ({len(info['combinations'])} of {info['combinations_total']}, most failures first)"
        combos = Table(title=title)
        names = [k for k in info["combinations"][0] if k not in ("runs", "ok", "failed")]
        first = info["combinations"][0]
        for heading in (*names, "runs", "ok", "failed"):
            text = isinstance(first[heading], str)
            combos.add_column(heading, justify="left" if text else "right")
        for row in info["combinations"]:
            combos.add_row(*(value_text(row[k]) for k in (*names, "runs", "ok", "failed")))
        parts.append(combos)
    return Group(*parts)


def value_text(value: Any, fmt: str = ".6g") -> str:
    if _missing(value):
        return "–"
    if isinstance(value, (float, np.floating)):
        return format(float(value), fmt)
    return str(value)
