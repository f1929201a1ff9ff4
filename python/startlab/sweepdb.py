"""Reading a sweep's results: the tables of a sweep database as pandas DataFrames."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd


class SweepResults:
    """A sweep database opened read-only (``startlab.open_sweep``). Tables come back ordered by
    grid point, replicate and flow/link, so two databases of the same sweep compare equal."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import duckdb

        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"sweep database not found: {self.path}")
        try:
            self.con = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error as e:
            raise OSError(f"{self.path}: cannot open the sweep database ({e})") from None
        tables = {r[0] for r in self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "runs" not in tables:
            self.con.close()
            raise OSError(f"{self.path}: not a startlab sweep database (it has no runs table)")
        self._tables = tables

    def __enter__(self) -> SweepResults:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    @property
    def axes(self) -> pd.DataFrame:
        """The sweep's axes: name (the column in ``runs``), scenario keys, kind, unit, type."""
        return self.con.execute("SELECT * FROM axes ORDER BY position").df()

    def runs(self, status: str | None = None) -> pd.DataFrame:
        """One row per run (``status`` "ok" or "failed" to select)."""
        where = "" if status is None else "WHERE status = ?"
        return self.con.execute(f"SELECT * FROM runs {where} ORDER BY point, replicate, key", [] if status is None else [status]).df()

    def flows(self) -> pd.DataFrame:
        """One row per flow of every successful run, with the run's axis values and replicate."""
        return self._joined("flows", "flow")

    def links(self) -> pd.DataFrame:
        """One row per link direction of every successful run, with the run's axis values."""
        return self._joined("links", "link")

    def sql(self, query: str, params: list[Any] | None = None) -> pd.DataFrame:
        """Any read-only SQL query on the tables (sweep, axes, runs, flows, links, traces)."""
        return self.con.execute(query, params or []).df()

    def aggregate(self, x: str, y: str, by: str | None = None, **options: Any) -> pd.DataFrame:
        """Mean or median of ``y`` over replicates, with a confidence interval, per ``x`` and
        ``by`` (:func:`startlab.sweepstats.aggregate`)."""
        from . import sweepstats

        return sweepstats.aggregate(self.con, x, y, by=by, **options)

    def plot(self, x: str, y: str, by: str | None = None, **options: Any) -> Any:
        """The papers' kind of figure: ``y`` against ``x``, a line with its confidence band per
        ``by`` value (:func:`startlab.sweepstats.plot_lines`)."""
        from . import sweepstats

        return sweepstats.plot_lines(self.aggregate(x, y, by=by, **options))

    def _joined(self, table: str, order: str) -> pd.DataFrame:
        if table not in self._tables:
            return pd.DataFrame()
        axes = [r[0] for r in self.con.execute("SELECT name FROM axes ORDER BY position").fetchall()]
        picked = ", ".join(f'r."{a}"' for a in axes)
        head = f"r.point, r.replicate, {picked}, " if axes else "r.point, r.replicate, "
        return self.con.execute(
            f'SELECT {head}t.* FROM {table} t JOIN runs r USING (key) ORDER BY r.point, r.replicate, t."{order}", t.key'
        ).df()
