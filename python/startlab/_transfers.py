"""Streaming the ``[[users]]`` transfer rows out of a run (``startlab.run(..., transfers=PATH)``,
``startlab run --out DIR``): the engine hands over the transfers that ended between chunks of
events, they go to Parquet parts on disk at once, and at the end DuckDB applies ``[measure]`` to
all of them and writes the final table in the engine's order (group, user, transfer). The run's
memory then grows with its live connections, not with the transfers completed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import _core

#: DuckDB's memory while it sorts and writes the final table (it spills to disk beyond it).
MEMORY_LIMIT = "256MB"

#: Suffixes a streamed transfers file may have, and the DuckDB format each is written in.
FORMATS = {".parquet": "parquet", ".csv": "csv"}


def _schema() -> Any:
    import pyarrow as pa

    s, i, f, b = pa.string(), pa.int64(), pa.float64(), pa.bool_()
    return pa.schema(
        [
            ("user", s), ("user_index", i), ("flow", s), ("transfer", i), ("connection", s), ("size", i),
            ("think", f), ("start", f), ("completion_time", f), ("completed", b), ("throughput", f),
            ("su_time", f), ("su_throughput", f), ("su_loss", f), ("exit_reason", s), ("exit_cwnd_pkts", f),
            ("overshoot", f), ("time_to_90", f), ("packets_sent", i), ("retransmissions", i), ("drops", i),
            ("timeouts", i), ("loss_rate", f), ("retransmission_ratio", f), ("measured", b), ("group", i),
        ]
    )  # fmt: skip


def _report_type(values: Any) -> Any:
    """The Parquet type of a startup report column: text if its values are, else numbers."""
    import pyarrow as pa

    return pa.string() if any(isinstance(v, str) for v in values) else pa.float64()


def check_path(path: str | Path) -> Path:
    """The file the transfers go to; refuses a suffix other than ``.parquet`` or ``.csv`` and a
    missing directory, before anything runs."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise ValueError(f"transfers = {str(path)!r}: expected a file name ending in .parquet or .csv")
    if not p.parent.is_dir():
        raise ValueError(f"transfers = {str(path)!r}: the directory {str(p.parent)!r} does not exist")
    return p


class TransferStream:
    """The transfer rows of one run on their way to ``path`` (see the module's doc)."""

    def __init__(self, sim: _core.Simulation, path: Path) -> None:
        self.sim, self.path = sim, path
        self.parts = path.with_name(f".{path.name}.parts")
        shutil.rmtree(self.parts, ignore_errors=True)
        self.count = 0
        self.rows = 0
        #: The startup's report columns (e.g. Careful Resume's ``cr_path``) over the parts: each
        #: part has those of its own rows.
        self.extra: set[str] = set()

    def drain(self) -> None:
        """Write the transfers that ended since the last call as one Parquet part."""
        self._write(self.sim.drain_transfers())

    def _write(self, columns: dict[str, Any]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        n = len(columns.get("group", ()))
        if n == 0:
            return
        self.parts.mkdir(exist_ok=True)
        schema = _schema()
        extra = [name for name in columns if name not in schema.names]
        self.extra.update(extra)
        for name in extra:
            schema = schema.append(pa.field(name, _report_type(columns[name])))
        table = pa.Table.from_pydict({name: columns[name] for name in schema.names}, schema=schema)
        pq.write_table(table, self.parts / f"{self.count:08d}.parquet")
        self.count += 1
        self.rows += n

    def finish(self, raw: dict[str, Any]) -> int:
        """After the run: the transfers not drained yet (ended or in progress: ``raw``, the
        finished run's ``results()``), then the final table at ``path``; returns its number of
        rows (0: no file is written, as ``Result.write`` writes no empty table)."""
        try:
            live = dict(raw["transfers"])
            order = [u["name"] for u in json.loads(raw["scenario"]).get("users", [])]
            live["group"] = [order.index(name) for name in live.get("user", [])]
            self._write(live)
            if self.rows == 0:
                return 0
            self._combine(json.loads(self.sim.transfer_measure()))
            return self.rows
        finally:
            shutil.rmtree(self.parts, ignore_errors=True)

    def _combine(self, measure: dict[str, Any]) -> None:
        import duckdb

        if measure["kind"] == "all":
            measured = "true"
        elif measure["kind"] == "time":
            measured = f"start >= {float(measure['from'])!r} AND start < {float(measure['to'])!r}"
        elif measure["warmup"] is None:
            measured = "false"
        else:
            measured = f"start >= {float(measure['warmup'])!r}"
        names = [n for n in _schema().names if n not in ("measured", "group")]
        # Every part has the fixed columns; a report column missing from a part is null there. They
        # follow by name, as in ``Result.transfers``.
        report = ", ".join(f'"{n}"' for n in sorted(self.extra))
        first = measure.get("first") if measure["kind"] == "warmup" else None
        # The first n measured transfers by start (ties in the table's order), as the engine does.
        final = "m" if first is None else f"(m AND row_number() OVER (PARTITION BY m ORDER BY start, \"group\", user_index, transfer) <= {int(first)})"
        fmt = FORMATS[self.path.suffix.lower()]
        options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
        source = str(self.parts / "*.parquet").replace("'", "''")
        target = str(self.path).replace("'", "''")
        columns = ", ".join(f'"{n}"' for n in names)
        with duckdb.connect() as con:
            # Sort out of core: beyond this, DuckDB spills to the parts directory.
            con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
            con.execute(f"SET temp_directory = '{str(self.parts / 'spill').replace(chr(39), chr(39) * 2)}'")
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET threads = 1")
            con.execute("SET enable_progress_bar = false")
            con.execute(
                f"""COPY (
                    SELECT {columns}, {final} AS measured{", " + report if report else ""} FROM (
                        SELECT *, ({measured}) AS m FROM read_parquet('{source}', union_by_name = true)
                    ) ORDER BY "group", user_index, transfer
                ) TO '{target}' ({options})"""
            )


def file_relation(path: Path) -> str:
    """The DuckDB table function reading a streamed transfers file (Parquet or CSV)."""
    reader = "read_parquet" if path.suffix.lower() == ".parquet" else "read_csv_auto"
    return f"{reader}('{str(path).replace(chr(39), chr(39) * 2)}')"


def summary(source: Any) -> Any:
    """Per ``[[users]]`` group, over its measured transfers: how many, how many completed, the
    median completion time, the median and 5th/95th percentile throughput and the loss rate
    (``startlab run``'s table). ``source``: ``Result.transfers`` or a streamed transfers file;
    DuckDB reads either without loading a file into memory."""
    import duckdb

    with duckdb.connect() as con:
        con.execute("SET enable_progress_bar = false")
        if isinstance(source, Path):
            relation = file_relation(source)
        else:
            con.register("transfers_frame", source)
            relation = "transfers_frame"
        return con.execute(
            f"""SELECT "user", count(*) AS transfers, count(*) FILTER (completed) AS completed,
                       median(completion_time) FILTER (completed) AS completion_median,
                       median(throughput) AS median, quantile_cont(throughput, 0.05) AS p5,
                       quantile_cont(throughput, 0.95) AS p95,
                       sum(drops) / nullif(sum(packets_sent), 0) AS total_loss
                FROM {relation} WHERE measured GROUP BY "user" ORDER BY 1"""
        ).df()
