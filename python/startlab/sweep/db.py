"""Reading a sweep's results: the tables of a sweep database as pandas DataFrames."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

T = TypeVar("T")


class SweepResults:
    """A sweep database, read-only (``startlab.open_sweep``). Each call opens the file and closes
    it again, so a sweep can write the database between two calls. Tables come back ordered by
    grid point, replicate and flow/link, so two databases of the same sweep compare equal."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"sweep database not found: {self.path}")
        with self._open() as con:
            tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "runs" not in tables:
            raise OSError(f"{self.path}: not a startlab sweep database (it has no runs table)")

    def __enter__(self) -> SweepResults:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Nothing stays open between calls; kept for ``with`` blocks."""

    @contextmanager
    def _open(self) -> Iterator[Any]:
        from .run import connect_db

        con = connect_db(self.path, read_only=True)
        try:
            yield con
        finally:
            con.close()

    def _query(self, work: Callable[[Any], T]) -> T:
        with self._open() as con:
            return work(con)

    @property
    def axes(self) -> pd.DataFrame:
        """The sweep's axes: name (the column in ``runs``), scenario keys, kind, unit, type."""
        return self._query(lambda con: con.execute("SELECT * FROM axes ORDER BY position").df())

    def runs(self, status: str | None = None) -> pd.DataFrame:
        """One row per run of the current sweep definition (``status`` "ok" or "failed" to select)."""
        where = "" if status is None else "WHERE status = ?"
        params = [] if status is None else [status]
        return self._query(lambda con: con.execute(f"SELECT * FROM runs {where} ORDER BY point, replicate, key", params).df())

    def flows(self) -> pd.DataFrame:
        """One row per flow of every successful run, with the run's axis values and replicate."""
        return self._joined("flows", "flow")

    def links(self) -> pd.DataFrame:
        """One row per link direction of every successful run, with the run's axis values."""
        return self._joined("links", "link")

    def sql(self, query: str, params: list[Any] | None = None) -> pd.DataFrame:
        """Any read-only SQL query on the tables (sweep, axes, runs, flows, links, traces, and the
        archive_* tables of earlier sweep definitions)."""
        return self._query(lambda con: con.execute(query, params or []).df())

    def aggregate(self, x: str, y: str, by: str | None = None, **options: Any) -> pd.DataFrame:
        """Mean or median of ``y`` over replicates, with a confidence interval, per ``x`` and
        ``by`` (:func:`startlab.sweep.stats.aggregate`)."""
        from . import stats

        return self._query(lambda con: stats.aggregate(con, x, y, by=by, **options))

    def plot(self, x: str, y: str, by: str | None = None, **options: Any) -> Any:
        """The papers' kind of figure: ``y`` against ``x``, a line with its confidence band per
        ``by`` value (:func:`startlab.sweep.stats.plot_lines`)."""
        from . import stats

        return stats.plot_lines(self.aggregate(x, y, by=by, **options))

    def _joined(self, table: str, order: str) -> pd.DataFrame:
        def work(con: Any) -> pd.DataFrame:
            tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            if table not in tables:
                return pd.DataFrame()
            axes = [r[0] for r in con.execute("SELECT name FROM axes ORDER BY position").fetchall()]
            picked = "".join(f'r."{a}", ' for a in axes)
            return con.execute(
                f'SELECT r.point, r.replicate, {picked}t.* FROM {table} t JOIN runs r USING (key) ORDER BY r.point, r.replicate, t."{order}", t.key'
            ).df()

        return self._query(work)
