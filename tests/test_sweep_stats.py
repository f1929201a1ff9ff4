"""Statistics, figures, summary and commands over a sweep database (startlab.sweep.stats).

Every test reads a synthetic database built here with DuckDB by the runner's contract, with values
chosen so that each statistic is known exactly.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure
from rich.console import Console
from scipy import stats
from startlab.sweep import commands
from startlab.sweep import stats as sweepstats
from startlab.sweep.stats import SweepStatsError

ALGORITHMS = ("hystart", "slow-start")
CBWS = (10.0, 20.0, 40.0)
#: What replicate r adds to every per-flow su_time (asymmetric, so mean ≠ median).
OFFSETS = (0.0, 1.0, 2.0, 7.0)
#: (algorithm, cbw, replicate) of the failed runs, with their error messages.
FAILED = {
    ("slow-start", 40.0, 3): "simulation panicked: queue index out of range\n   0: backtrace line",
    ("hystart", 10.0, 1): "scenario refused: buffer too small",
}


def base(algorithm: str, cbw: float) -> float:
    return (10.0 if algorithm == "slow-start" else 0.0) + cbw / 10


def offsets(algorithm: str, cbw: float) -> list[float]:
    """The offsets of the ok replicates of one grid point."""
    return [o for r, o in enumerate(OFFSETS) if (algorithm, cbw, r) not in FAILED]


def make_sweep(path: Path) -> Path:
    """2 algorithms × 3 cbw values × 4 replicates, 2 runs failed.

    Each ok run has measured flows ``a`` (su_time = base + offset, completion_time = 1 + offset)
    and ``b`` (su_time one more, not completed: completion_time NaN) and an unmeasured flow
    ``warm`` whose su_time 1000 s must never count.
    """
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE sweep (name VARCHAR, seed UBIGINT, replicates INTEGER, source VARCHAR, "
        "version VARCHAR, created TIMESTAMP)"
    )
    con.execute(
        "INSERT INTO sweep VALUES ('demo', 18446744073709551615, 4, 'name = \"demo\"', '0.9.0', "
        "TIMESTAMP '2025-01-02 03:04:05')"
    )
    con.execute(
        "CREATE TABLE axes (position INTEGER, name VARCHAR, keys VARCHAR, kind VARCHAR, unit VARCHAR, "
        "type VARCHAR)"
    )
    con.execute(
        "INSERT INTO axes VALUES (0, 'algorithm', '[\"flows.*.startup.algorithm\"]', 'values', NULL, 'VARCHAR'), "
        "(1, 'cbw', '[\"topology.bottleneck_rate\"]', 'values', 'Mbps', 'DOUBLE')"
    )
    con.execute(
        "CREATE TABLE runs (key VARCHAR PRIMARY KEY, point INTEGER, replicate INTEGER, seed UBIGINT, "
        "algorithm VARCHAR, cbw DOUBLE, status VARCHAR, error VARCHAR, wall_s DOUBLE, events UBIGINT, "
        "sim_time_s DOUBLE, warmup_end DOUBLE, version VARCHAR, scenario VARCHAR, finished_at TIMESTAMP)"
    )
    con.execute(
        "CREATE TABLE flows (key VARCHAR, flow VARCHAR, startup VARCHAR, measured BOOLEAN, \"group\" VARCHAR, "
        "su_time DOUBLE, su_throughput DOUBLE, su_loss DOUBLE, throughput DOUBLE, goodput DOUBLE, "
        "loss_rate DOUBLE, completion_time DOUBLE, completed BOOLEAN, timeouts BIGINT, drops BIGINT, "
        "exit_reason VARCHAR, exit_cwnd_pkts DOUBLE, overshoot DOUBLE, size DOUBLE, start DOUBLE, "
        "past_case INTEGER)"
    )
    con.execute(
        "CREATE TABLE links (key VARCHAR, link VARCHAR, rate DOUBLE, utilization DOUBLE, drops BIGINT, "
        "mean_queue DOUBLE, max_queue DOUBLE)"
    )
    con.execute("CREATE TABLE traces (key VARCHAR, kind VARCHAR, path VARCHAR)")
    runs, flows, links = [], [], []
    point = 0
    for algorithm in ALGORITHMS:
        for cbw in CBWS:
            for r, offset in enumerate(OFFSETS):
                key = f"p{point:03d}-r{r}"
                error = FAILED.get((algorithm, cbw, r))
                scenario = json.dumps({"topology": {"bottleneck_rate": f"{cbw:g}Mbps"}})
                runs.append(
                    (key, point, r, 1000 + 10 * point + r, algorithm, cbw,
                     "failed" if error else "ok", error, 0.5 * (r + 1),
                     None if error else 1000 * (r + 1), None if error else 10.0, None,
                     "0.9.0", scenario, "2025-01-02 03:05:00")
                )
                if error:
                    continue
                b = base(algorithm, cbw)
                past = 1 if algorithm == "hystart" else None
                for flow, measured, su_time, completion in (
                    ("a", True, b + offset, 1.0 + offset),
                    ("b", True, b + offset + 1, math.nan),
                    ("warm", False, 1000.0, 5.0),
                ):
                    flows.append(
                        (key, flow, algorithm, measured, None, su_time, cbw * 1e6 / 2, 0.01 * offset,
                         cbw * 1e6 * 0.8 + offset * 1e5, cbw * 1e6 * 0.7, 0.001 * offset, completion,
                         not math.isnan(completion), 0, int(offset), "loss", 20.0 + offset, 1.5,
                         1e6, 0.0, past)
                    )
                links.append((key, "bottleneck:r1->r2", cbw * 1e6, 0.9, int(offset), 3.0, 50.0))
            point += 1
    for table, rows in (("runs", runs), ("flows", flows), ("links", links)):
        frame = pd.DataFrame(rows, columns=[c for (c,) in con.execute(f"SELECT name FROM pragma_table_info('{table}')").fetchall()])
        con.register("new_rows", frame)
        con.execute(f"INSERT INTO {table} SELECT * FROM new_rows")
        con.unregister("new_rows")
    con.close()
    return path


@pytest.fixture()
def db_path(tmp_path: Path) -> Path:
    return make_sweep(tmp_path / "demo.duckdb")


@pytest.fixture()
def con(db_path: Path):
    connection = sweepstats.open_db(db_path)
    yield connection
    connection.close()


def per_run_su_time(algorithm: str, cbw: float) -> np.ndarray:
    """Mean of flows a and b: base + offset + 0.5 for each ok replicate."""
    return np.array([base(algorithm, cbw) + o + 0.5 for o in offsets(algorithm, cbw)])


# -------------------------------------------------------------------------------------------
# aggregate


def test_mean_with_student_t_interval(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm")
    assert list(frame.columns) == ["algorithm", "cbw", "n", "su_time", "ci_low", "ci_high", "std"]
    assert list(zip(frame["algorithm"], frame["cbw"])) == [(a, c) for a in ALGORITHMS for c in CBWS]
    assert frame.attrs["excluded_failed"] == 2
    for row in frame.to_dict(orient="records"):
        values = per_run_su_time(row["algorithm"], row["cbw"])
        n = len(values)
        mean = values.sum() / n
        s = math.sqrt(((values - mean) ** 2).sum() / (n - 1))
        half = stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)
        assert row["n"] == n
        assert row["su_time"] == pytest.approx(mean, rel=1e-12)
        assert row["std"] == pytest.approx(s, rel=1e-12)
        assert row["ci_low"] == pytest.approx(mean - half, rel=1e-12)
        assert row["ci_high"] == pytest.approx(mean + half, rel=1e-12)
    full = frame[(frame["algorithm"] == "hystart") & (frame["cbw"] == 20.0)].iloc[0]
    assert (full["n"], full["su_time"]) == (4, 2.0 + 2.5 + 0.5)  # offsets 0, 1, 2, 7: mean 2.5
    assert full["ci_high"] - full["ci_low"] == pytest.approx(
        2 * stats.t.ppf(0.975, 3) * np.std([0, 1, 2, 7], ddof=1) / 2, rel=1e-12
    )


def test_median_with_binomial_order_statistics_interval(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm", stat="median", ci=0.8)
    for row in frame.to_dict(orient="records"):
        values = per_run_su_time(row["algorithm"], row["cbw"])
        assert row["su_time"] == np.median(values)
        if len(values) == 4:  # P(B <= 0) = 1/16 <= 0.1 < P(B <= 1): the extremes, coverage 7/8
            assert (row["ci_low"], row["ci_high"]) == (values.min(), values.max())
        else:  # n = 3: P(B <= 0) = 1/8 > 0.1, no interval reaches 80 %
            assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    full = frame[(frame["algorithm"] == "hystart") & (frame["cbw"] == 10.0)]
    assert full["n"].item() == 3
    point = frame[(frame["algorithm"] == "hystart") & (frame["cbw"] == 20.0)].iloc[0]
    assert point["su_time"] == 2.0 + 1.5 + 0.5  # median of offsets 0, 1, 2, 7 is 1.5
    at95 = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm", stat="median")
    assert at95["ci_low"].isna().all()  # 4 replicates cannot give a 95 % median interval


def test_interval_formulas_by_hand() -> None:
    x = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 10.0, 4.0, 8.0, 6.0]
    # n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024, so ranks 2 and 9
    assert sweepstats.median_ci(x, 0.95) == (2.0, 9.0)
    assert sweepstats.median_ci(x[:6], 0.95) == (1.0, 9.0)  # n = 6: 1/64 <= 0.025, the extremes
    assert all(math.isnan(v) for v in sweepstats.median_ci(x[:5], 0.95))
    assert all(math.isnan(v) for v in sweepstats.median_ci([1.0], 0.5))
    low, high = sweepstats.mean_ci([1.0, 2.0, 3.0], 0.9)
    half = stats.t.ppf(0.95, 2) * 1.0 / math.sqrt(3)
    assert (low, high) == pytest.approx((2 - half, 2 + half), rel=1e-12)
    assert all(math.isnan(v) for v in sweepstats.mean_ci([4.0], 0.95))
    with pytest.raises(SweepStatsError, match=r"\(0, 1\)"):
        sweepstats.mean_ci(x, 1.5)


def test_a_single_replicate_has_no_interval(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm", where="r.replicate = 0")
    assert (frame["n"] == 1).all()
    assert frame[["ci_low", "ci_high", "std"]].isna().all().all()
    assert frame.attrs["excluded_failed"] == 0


def test_by_a_flows_column_equals_by_the_axis(con) -> None:
    by_axis = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm")
    by_flows = sweepstats.aggregate(con, "cbw", "su_time", by="startup")
    pd.testing.assert_frame_equal(
        by_axis.rename(columns={"algorithm": "startup"}), by_flows, check_dtype=False
    )


def test_without_by_pools_the_algorithms(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "su_time")
    assert list(frame.columns) == ["cbw", "n", "su_time", "ci_low", "ci_high", "std"]
    for row in frame.to_dict(orient="records"):
        values = np.concatenate([per_run_su_time(a, row["cbw"]) for a in ALGORITHMS])
        assert row["n"] == len(values)
        assert row["su_time"] == pytest.approx(values.mean(), rel=1e-12)


def test_flow_filter_and_unmeasured_flows(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm", flow="a")
    for row in frame.to_dict(orient="records"):
        values = [base(row["algorithm"], row["cbw"]) + o for o in offsets(row["algorithm"], row["cbw"])]
        assert row["su_time"] == pytest.approx(np.mean(values), rel=1e-12)
    assert sweepstats.aggregate(con, "cbw", "su_time")["su_time"].max() < 100  # warm never counts
    with pytest.raises(SweepStatsError, match="no flow named 'warmup'; flows: a, b, warm"):
        sweepstats.aggregate(con, "cbw", "su_time", flow="warmup")


def test_nan_and_null_values_are_ignored(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "completion_time", by="algorithm")
    for row in frame.to_dict(orient="records"):
        assert row["completion_time"] == pytest.approx(1 + np.mean(offsets(row["algorithm"], row["cbw"])))
    past = sweepstats.aggregate(con, "cbw", "past_case", by="algorithm")  # NULL for slow-start
    assert list(past["algorithm"]) == ["hystart"] * 3
    assert (past["past_case"] == 1.0).all()


def test_a_runs_column_as_y_and_booleans_as_fractions(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "wall_s", by="algorithm")
    row = frame[(frame["algorithm"] == "slow-start") & (frame["cbw"] == 40.0)].iloc[0]
    assert (row["n"], row["wall_s"]) == (3, pytest.approx((0.5 + 1.0 + 1.5) / 3))
    completed = sweepstats.aggregate(con, "algorithm", "completed")
    assert list(completed["completed"]) == [0.5, 0.5]  # a completes, b does not


def test_where_filters_before_aggregating(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm", where="cbw >= 20")
    assert sorted(set(frame["cbw"])) == [20.0, 40.0]
    assert frame.attrs["excluded_failed"] == 1  # only the slow-start 40 Mbps failure matches
    only_a = sweepstats.aggregate(con, "cbw", "su_time", by="algorithm", where="f.flow = 'a'")
    pd.testing.assert_frame_equal(
        only_a, sweepstats.aggregate(con, "cbw", "su_time", by="algorithm", flow="a")
    )
    assert only_a.attrs["excluded_failed"] == 2  # a flows condition cannot select failed runs
    with pytest.raises(SweepStatsError, match="--where"):
        sweepstats.aggregate(con, "cbw", "su_time", where="no_such_column > 1")


def test_other_axes_pooled_are_reported(con) -> None:
    pooled = sweepstats.aggregate(con, "cbw", "su_time")
    assert pooled.attrs["pooled"] == ["algorithm"]
    assert pooled.attrs["pooled_values"] == {"algorithm": 2}
    assert sweepstats.aggregate(con, "algorithm", "su_time").attrs["pooled_values"] == {"cbw": 3}
    assert sweepstats.aggregate(con, "cbw", "su_time", by="algorithm").attrs["pooled"] == []
    assert sweepstats.aggregate(con, "cbw", "su_time", where="algorithm = 'hystart'").attrs["pooled"] == []
    # startup is the algorithm: within each group a single algorithm, nothing pooled
    assert sweepstats.aggregate(con, "cbw", "su_time", by="startup").attrs["pooled"] == []
    # algorithm varies with cbw but never within a cbw group
    diagonal = "(algorithm = 'hystart' AND cbw = 10) OR (algorithm = 'slow-start' AND cbw = 20)"
    assert sweepstats.aggregate(con, "cbw", "su_time", where=diagonal).attrs["pooled"] == []
    # a flows condition leaving only hystart's runs: only the runs entering the result count
    hystart = sweepstats.aggregate(con, "cbw", "su_time", where="f.past_case = 1")
    assert hystart.attrs["pooled"] == [] and len(hystart) == 3
    assert sweepstats.flow_values(con, "su_time").attrs["pooled_values"] == {"algorithm": 2, "cbw": 3}
    assert sweepstats.flow_values(con, "su_time", by="algorithm").attrs["pooled"] == ["cbw"]
    # the statistic itself is unchanged: the pooled mean over both algorithms
    row = pooled[pooled["cbw"] == 10.0].iloc[0]
    values = np.concatenate([per_run_su_time(a, 10.0) for a in ALGORITHMS])
    assert (row["n"], row["su_time"]) == (len(values), pytest.approx(values.mean(), rel=1e-12))


def test_pooling_without_an_axes_table(db_path: Path, tmp_path: Path) -> None:
    copy = tmp_path / "noaxes.duckdb"
    shutil.copy(db_path, copy)
    duckdb.connect(str(copy)).execute("DROP TABLE axes").close()
    connection = sweepstats.open_db(copy)
    try:
        frame = sweepstats.aggregate(connection, "cbw", "su_time")
        assert frame.attrs["pooled"] == [] and frame.attrs["pooled_values"] == {}
        assert len(frame) == 3
    finally:
        connection.close()


def test_aggregate_is_deterministic(con) -> None:
    first = sweepstats.aggregate(con, "cbw", "throughput", by="startup", stat="median")
    pd.testing.assert_frame_equal(first, sweepstats.aggregate(con, "cbw", "throughput", by="startup", stat="median"))


def test_unknown_and_unsuitable_columns(con) -> None:
    with pytest.raises(SweepStatsError) as info:
        sweepstats.aggregate(con, "cbw", "su_tme")
    message = str(info.value)
    assert "'su_tme'" in message and "cbw" in message and "su_time" in message and "wall_s" in message
    assert "\n" not in message
    with pytest.raises(SweepStatsError, match="unknown column 'bw' for x"):
        sweepstats.aggregate(con, "bw", "su_time")
    with pytest.raises(SweepStatsError, match="'startup' is a flows column"):
        sweepstats.aggregate(con, "startup", "su_time")
    with pytest.raises(SweepStatsError, match="not a number"):
        sweepstats.aggregate(con, "cbw", "exit_reason")
    with pytest.raises(SweepStatsError, match="unknown column"):
        sweepstats.aggregate(con, "cbw", "su_time", by='startup" FROM flows; DROP TABLE runs; --')
    with pytest.raises(SweepStatsError, match="unknown statistic"):
        sweepstats.aggregate(con, "cbw", "su_time", stat="mode")
    with pytest.raises(SweepStatsError, match="different"):
        sweepstats.aggregate(con, "cbw", "su_time", by="cbw")


def test_open_db_refuses_what_is_not_a_sweep(tmp_path: Path) -> None:
    with pytest.raises(SweepStatsError, match="missing.duckdb: no such file"):
        sweepstats.open_db(tmp_path / "missing.duckdb")
    text = tmp_path / "notes.duckdb"
    text.write_text("not a database")
    with pytest.raises(SweepStatsError, match="notes.duckdb: cannot open.*'runs' table"):
        sweepstats.open_db(text)
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).execute("CREATE TABLE t (a INTEGER)").close()
    with pytest.raises(SweepStatsError, match="other.duckdb: no 'runs' table"):
        sweepstats.open_db(other)


def test_open_db_is_read_only(con, tmp_path: Path) -> None:
    with pytest.raises(duckdb.Error, match="read-only"):
        con.execute("DELETE FROM runs")
    target = tmp_path / "x.csv"
    for sql in (
        f"COPY (SELECT 1) TO '{target}'",
        f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
        "SELECT * FROM read_csv('/etc/hostname')",
        "SET enable_external_access = true",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(sql)
    assert not target.exists() and not (tmp_path / "other.duckdb").exists()
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (24,)


@pytest.fixture()
def writer(db_path: Path):
    """Another process holding the database open read-write, as a running sweep does."""
    code = "import duckdb, time, sys; c = duckdb.connect(sys.argv[1]); print('ok', flush=True); time.sleep(30)"
    with subprocess.Popen([sys.executable, "-c", code, str(db_path)], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ok"
            yield proc
        finally:
            proc.kill()
            proc.wait()


def test_open_db_says_a_locked_database_is_in_use(db_path: Path, writer) -> None:
    with pytest.raises(SweepStatsError, match="being written by another process") as info:
        sweepstats.open_db(db_path)
    assert "expected" not in str(info.value)


# -------------------------------------------------------------------------------------------
# figures


def test_plot_lines_draws_a_line_and_band_per_group(con) -> None:
    frame = sweepstats.aggregate(con, "cbw", "throughput", by="algorithm")
    figure = sweepstats.plot_lines(frame, "cbw", "throughput", "algorithm")
    assert isinstance(figure, Figure)
    ax = figure.axes[0]
    assert [line.get_label() for line in ax.lines] == list(ALGORITHMS)
    assert len(ax.collections) == 2  # the CI bands
    assert ax.get_xlabel() == "cbw (Mbps)"
    assert ax.get_ylabel() == "mean throughput (Mbit/s)"
    hystart = frame[frame["algorithm"] == "hystart"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), hystart["throughput"] / 1e6)
    loss = sweepstats.aggregate(con, "algorithm", "su_loss", stat="median")
    figure = sweepstats.plot_lines(loss, "algorithm", "su_loss")
    ax = figure.axes[0]
    assert ax.get_ylabel() == "median su_loss (%)"
    assert [t.get_text() for t in ax.get_xticklabels()] == list(ALGORITHMS)


def test_plot_cdf_has_one_curve_per_group(con) -> None:
    figure = sweepstats.plot_cdf(con, "su_time", by="startup")
    ax = figure.axes[0]
    assert [line.get_label() for line in ax.lines] == ["hystart (22)", "slow-start (22)"]
    assert ax.lines[0].get_ydata()[-1] == 1.0
    assert ax.get_xlabel() == "su_time (s)"
    values = sweepstats.flow_values(con, "su_time", by="startup", flow="b")
    assert len(values) == 22 and values.attrs["excluded_failed"] == 2


# -------------------------------------------------------------------------------------------
# summary


def test_summary_counts_axes_and_failures(con) -> None:
    info = sweepstats.summary(con)
    assert (info["name"], info["version"], info["replicates"]) == ("demo", "0.9.0", 4)
    assert info["seed"] == 2**64 - 1
    assert info["runs"] == {"total": 24, "ok": 22, "failed": 2, "other": 0}
    assert info["points"] == 6
    axes = {a["name"]: a for a in info["axes"]}
    assert axes["cbw"]["values"] == list(CBWS) and axes["cbw"]["unit"] == "Mbps"
    assert axes["algorithm"]["values"] == list(ALGORITHMS)
    assert info["failures"] == [
        {"error": "scenario refused: buffer too small", "count": 1},
        {"error": "simulation panicked: queue index out of range", "count": 1},
    ]
    combos = info["combinations"]
    assert len(combos) == info["combinations_total"] == 6
    assert combos[0]["failed"] == 1 and combos[2] == {"algorithm": "hystart", "cbw": 20.0, "runs": 4, "ok": 4, "failed": 0}
    console = Console(width=200, record=True, file=None)
    with console.capture() as captured:
        console.print(sweepstats.render_summary(info))
    text = captured.get()
    for needle in ("demo", "24 runs: 22 ok, 2 failed", "Mbps", "slow-start", "queue index out of range"):
        assert needle in text


# -------------------------------------------------------------------------------------------
# commands


def invoke(command, *args: object):
    return CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)


def assert_one_line_error(result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0]


def test_results_prints_the_summary(db_path: Path) -> None:
    result = invoke(commands.results_command, db_path)
    assert result.exit_code == 0, result.stderr
    for needle in ("24 runs: 22 ok, 2 failed", "simulation panicked: queue index out of range", "cbw", "Mbps"):
        assert needle in result.stdout


def test_results_sql_prints_or_writes_csv(db_path: Path, tmp_path: Path) -> None:
    sql = "SELECT status, count(*) AS runs FROM runs GROUP BY status ORDER BY status"
    result = invoke(commands.results_command, db_path, "--sql", sql)
    assert result.exit_code == 0, result.stderr
    assert "failed" in result.stdout and "22" in result.stdout
    out = tmp_path / "status.csv"
    result = invoke(commands.results_command, db_path, "--sql", sql, "--csv", out)
    assert result.exit_code == 0, result.stderr
    assert pd.read_csv(out).to_dict(orient="records") == [{"status": "failed", "runs": 2}, {"status": "ok", "runs": 22}]
    assert_one_line_error(invoke(commands.results_command, db_path, "--sql", "DELETE FROM runs"), "read-only")
    assert_one_line_error(invoke(commands.results_command, db_path, "--sql", "SELEC 1"), "--sql")
    assert_one_line_error(invoke(commands.results_command, db_path, "--csv", out), "--csv needs --sql")


def test_results_sql_cannot_touch_files(db_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "x.csv"
    for sql in (
        f"COPY (SELECT 1) TO '{target}'",
        f"COPY runs TO '{target}'",
        f"EXPORT DATABASE '{tmp_path / 'export'}'",
        "SELECT * FROM read_csv('/etc/hostname')",
        f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
        "INSTALL httpfs",
    ):
        assert_one_line_error(invoke(commands.results_command, db_path, "--sql", sql), "--sql")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.duckdb"]
    result = invoke(commands.results_command, db_path, "--sql", "SELECT count(*) AS n FROM flows f JOIN runs r USING (key)")
    assert result.exit_code == 0, result.stderr
    assert "66" in result.stdout  # 22 ok runs × 3 flows
    assert invoke(commands.results_command, db_path).exit_code == 0


def test_commands_say_a_locked_database_is_in_use(db_path: Path, writer) -> None:
    expected = f"error: {db_path} is being written by another process (a running sweep); try again when it ends"
    for result in (
        invoke(commands.results_command, db_path),
        invoke(commands.results_command, db_path, "--sql", "SELECT 1"),
        invoke(commands.plot_command, db_path, "--x", "cbw", "--y", "su_time", "--table"),
    ):
        assert_one_line_error(result)
        assert result.stderr.strip() == expected
        assert "sweep database" not in result.stderr


def test_plot_writes_a_png_and_prints_the_table(db_path: Path) -> None:
    result = invoke(commands.plot_command, db_path, "--x", "cbw", "--y", "su_time", "--by", "algorithm")
    assert result.exit_code == 0, result.stderr
    png = db_path.with_name("demo-su_time-vs-cbw.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in result.stderr
    assert "slow-start" in result.stdout and "2 failed runs excluded" in result.stdout
    assert "5.5" in result.stdout  # hystart at 20 Mbps: 2 + 2.5 + 0.5
    assert "note:" not in result.stderr and "pooled" not in result.stdout


def test_plot_notes_the_axes_it_pools(db_path: Path, con) -> None:
    result = invoke(commands.plot_command, db_path, "--x", "cbw", "--y", "su_time")
    assert result.exit_code == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert notes == ["note: pooled over algorithm (2 values); fix them with --where or add --by"]
    assert "pooled over algorithm (2 values)" in result.stdout  # the table's caption
    result = invoke(commands.plot_command, db_path, "--y", "su_time", "--kind", "cdf", "--by", "startup", "--table")
    assert result.exit_code == 0, result.stderr
    # startup is the algorithm, so only cbw is mixed into each curve
    assert result.stderr.strip() == "note: pooled over cbw (3 values); fix them with --where"
    result = invoke(
        commands.plot_command, db_path, "--x", "cbw", "--y", "su_time", "--where", "algorithm = 'hystart'", "--table"
    )
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    figure = sweepstats.plot_lines(sweepstats.aggregate(con, "cbw", "su_time"))
    assert "pooled over algorithm" in figure.axes[0].get_title()
    figure = sweepstats.plot_lines(sweepstats.aggregate(con, "cbw", "su_time", by="algorithm"))
    assert "pooled" not in figure.axes[0].get_title()
    assert "pooled over cbw" in sweepstats.plot_cdf(con, "su_time", by="algorithm").axes[0].get_title()


def test_plot_cdf_and_table_only(db_path: Path, tmp_path: Path) -> None:
    result = invoke(commands.plot_command, db_path, "--y", "throughput", "--kind", "cdf", "--by", "startup")
    assert result.exit_code == 0, result.stderr
    assert db_path.with_name("demo-throughput-cdf.png").read_bytes()[:4] == b"\x89PNG"
    assert "hystart" in result.stdout and "Mbit/s" in result.stdout
    out = tmp_path / "never.png"
    result = invoke(
        commands.plot_command, db_path, "--x", "cbw", "--y", "su_time", "--by", "algorithm", "--stat", "median", "--table",
        "--out", out,
    )
    assert result.exit_code == 0, result.stderr
    assert not out.exists()
    assert "median" in result.stdout and "n ≥ 6" in result.stdout


def test_plot_bad_input_is_one_error_line(db_path: Path, tmp_path: Path) -> None:
    assert_one_line_error(
        invoke(commands.plot_command, db_path, "--x", "cbw", "--y", "su_time", "--ci", "1.5"), "--ci"
    )
    assert_one_line_error(
        invoke(commands.plot_command, tmp_path / "nope.duckdb", "--x", "cbw", "--y", "su_time"), "nope.duckdb"
    )
    assert_one_line_error(invoke(commands.plot_command, db_path, "--x", "cbw", "--y", "su_tme"), "su_tme", "su_time")
    assert_one_line_error(invoke(commands.plot_command, db_path, "--y", "su_time"), "--x")
    assert_one_line_error(
        invoke(commands.plot_command, db_path, "--x", "cbw", "--y", "su_time", "--where", "cbw >"), "--where"
    )
    assert_one_line_error(
        invoke(commands.plot_command, db_path, "--x", "cbw", "--y", "su_time", "--out", tmp_path / "x.nosuchformat"),
        "x.nosuchformat",
    )
