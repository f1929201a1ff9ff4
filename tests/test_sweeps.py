"""Parameter sweeps: sweep files, run keys and seeds, the DuckDB store, the local and Dask
backends, resuming after SIGKILL, failures and limits (docs/SWEEPS.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

import startlab
from startlab.cli import cli
from startlab.sweep import file as sweepfile, run as sweeprun

#: Two flows whose start times are drawn from the seed, so replicates differ.
BASE = """\
[base]
seed = 1
duration = "1.5s"
[base.topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = { kind = "droptail", limit = "30pkt" }
[base.trace]
seq = false
queue = false
cwnd = false
[[base.flows]]
name = "a"
size = "infinite"
start_jitter = "200ms"
startup = { algorithm = "slow-start" }
[[base.flows]]
name = "b"
size = "200KB"
start = "0.1s"
start_jitter = "200ms"
startup = { algorithm = "slow-start" }
"""


def sweep_text(replicates: int = 2, extra: str = "") -> str:
    return f"""\
[sweep]
name = "test"
seed = 11
replicates = {replicates}

[[axis]]
name = "algorithm"
key = "flows[*].startup.algorithm"
values = ["slow-start", "hystart", "paced-start"]

[[axis]]
name = "queue"
key = "topology.queue.limit"
range = {{ from = "10pkt", to = "40pkt", step = "15pkt" }}
{extra}
{BASE}"""


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def tables(db: Path) -> dict[str, pd.DataFrame]:
    """Every results table, ordered by key, without the timing columns."""
    with duckdb.connect(str(db), read_only=True) as con:
        runs = con.execute("SELECT * EXCLUDE (wall_s, finished_at) FROM runs ORDER BY key").df()
        flows = con.execute("SELECT * FROM flows ORDER BY key, flow").df()
        links = con.execute("SELECT * FROM links ORDER BY key, link").df()
    return {"runs": runs, "flows": flows, "links": links}


def assert_same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    for name in ("runs", "flows", "links"):
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=True, obj=name)


# --- sweep files ------------------------------------------------------------------------------


def test_the_grid_is_the_product_of_the_axes_with_replicates_innermost() -> None:
    sweep = sweepfile.parse(sweep_text(replicates=3))
    runs = sweep.runs()
    assert sweep.points == 9 and len(runs) == 27
    assert [(r.point, r.replicate) for r in runs[:4]] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert runs[0].values == {"algorithm": "slow-start", "queue": 10.0}
    assert runs[3].values == {"algorithm": "slow-start", "queue": 25.0}
    assert runs[-1].values == {"algorithm": "paced-start", "queue": 40.0}
    # [*] reaches every flow; the range keeps the unit in the scenario and the number in the column.
    last = runs[-1].scenario
    assert [f["startup"]["algorithm"] for f in last["flows"]] == ["paced-start", "paced-start"]
    assert last["topology"]["queue"]["limit"] == "40pkt"
    axis = sweep.columns[1]
    assert (axis.unit, axis.type, axis.kind) == ("pkt", "DOUBLE", "range")


def test_seeds_come_from_the_sweep_seed_and_the_run_not_from_its_position() -> None:
    runs = sweepfile.parse(sweep_text()).runs()
    seeds = [r.seed for r in runs]
    assert len(set(seeds)) == len(seeds), "every run has its own seed"
    # Reordering an axis's values moves the runs but keeps each run's seed.
    swapped = sweep_text().replace('["slow-start", "hystart", "paced-start"]', '["paced-start", "slow-start", "hystart"]')
    by_values = {(r.values["algorithm"], r.values["queue"], r.replicate): r.seed for r in sweepfile.parse(swapped).runs()}
    assert all(by_values[(r.values["algorithm"], r.values["queue"], r.replicate)] == r.seed for r in runs)
    other = sweepfile.parse(sweep_text().replace("seed = 11", "seed = 12")).runs()
    assert not set(seeds) & {r.seed for r in other}


def test_ranges_zips_and_samples() -> None:
    text = sweep_text(
        replicates=1,
        extra="""
[[axis]]
zip = [ { name = "rtt", key = "topology.rtt", values = ["20ms", "80ms"] },
        { name = "rate", key = "topology.bottleneck_rate", range = { from = "1Mbps", to = "100Mbps", count = 2, scale = "log" } } ]

[[axis]]
name = "size"
key = "flows[1].size"
sample = { distribution = "log-uniform", low = "10KB", high = "1MB", count = 3 }
""",
    )
    sweep = sweepfile.parse(text)
    assert sweep.points == 3 * 3 * 2 * 3
    rtt, rate, size = sweep.columns[2:]
    assert rtt.values == ("20ms", "80ms") and rate.values == ("1Mbps", "100Mbps")
    assert len(set(size.values)) == 3 and all(v.endswith("KB") for v in size.values)
    assert all(10 <= float(v[:-2]) <= 1000 for v in size.values)
    # Samples are drawn from the sweep's seed: the same file gives the same values.
    assert sweepfile.parse(text).columns[4].values == size.values
    assert sweepfile.parse(text.replace("seed = 11", "seed = 5")).columns[4].values != size.values
    step = sweepfile.parse(sweep_text().replace('from = "10pkt", to = "40pkt", step = "15pkt"', "from = 0.1, to = 0.3, step = 0.1"))
    assert step.columns[1].values == (0.1, 0.2, 0.3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("[sweep]", "[sweep]\nbogus = 1"), "sweep.bogus: unknown key"),
        (('key = "topology.queue.limit"', 'key = "flows[5].size"'), "flows[5] does not exist; the base scenario has 2"),
        (('key = "topology.queue.limit"', 'key = "topology..x"'), "is not a key"),
        (('step = "15pkt"', 'step = "15ms"'), "step: ms cannot be converted to pkt"),
        (('step = "15pkt"', 'step = "-5pkt"'), "expected a positive step in the unit of from (pkt)"),
        (('to = "40pkt"', 'to = "40ms"'), "ms cannot be converted to pkt"),
        (('to = "40pkt"', "to = 40"), "both have units or both be numbers"),
        (('step = "15pkt"', 'step = "15pkt", count = 3'), "give step or count"),
        (("replicates = 2", "replicates = 0"), "sweep.replicates = 0"),
        (('values = ["slow-start", "hystart", "paced-start"]', 'values = ["a", "a"]'), "a value appears twice"),
        (('name = "queue"', 'name = "algorithm"'), "axis name 'algorithm' is used twice"),
        (('name = "queue"', 'name = "status"'), "is a column of the runs table"),
    ],
)
def test_a_bad_sweep_file_names_the_key_and_what_is_accepted(change: tuple[str, str], message: str) -> None:
    with pytest.raises(sweepfile.SweepError) as info:
        sweepfile.parse(sweep_text().replace(*change, 1))
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[[axis]]\nname = "ALGORITHM"\nkey = "duration"\nvalues = ["1s"]\n', "is used twice (names ignore case)"),
        ('[[axis]]\nname = "Seed"\nkey = "duration"\nvalues = ["1s"]\n', "is a column of the runs table"),
        ('[[axis]]\nname = "q2"\nkey = "topology.queue.limit"\nvalues = ["5pkt"]\n', "axes 'queue' and 'q2' both set 'topology.queue.limit'"),
        ('[[axis]]\nname = "s"\nkey = "seed"\nvalues = [1.5, 2.5]\n', "sets the seed: its values must be integers"),
        ('[[axis]]\nname = "s"\nkey = "seed"\nvalues = [-1, 2]\n', "sets the seed: its values must be integers"),
        ('[[axis]]\nname = "d"\nkey = "duration"\nvalues = [1979-05-27]\n', "a date is not a scenario value"),
    ],
)
def test_axes_that_would_store_wrong_values_are_refused(extra: str, message: str) -> None:
    with pytest.raises(sweepfile.SweepError) as info:
        sweepfile.parse(sweep_text(replicates=1, extra=extra))
    assert message in str(info.value)


def test_set_merges_tables_into_the_base_and_leaves_the_seed_to_the_sweep() -> None:
    text = sweep_text().replace("replicates = 2", 'replicates = 2\nset = { topology.rtt = "20ms", "flows[0].size" = "1MB" }')
    base = sweepfile.parse(text).base
    assert base["topology"]["rtt"] == "20ms" and base["topology"]["kind"] == "dumbbell"
    assert base["flows"][0]["size"] == "1MB"
    with pytest.raises(sweepfile.SweepError, match="sweep.set.seed"):
        sweepfile.parse(sweep_text().replace("replicates = 2", "replicates = 2\nset = { seed = 7 }"))


def test_a_base_file_that_is_not_text_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_bytes(b"seed = 1\n\xff\xfe")
    with pytest.raises(sweepfile.SweepError, match="is not UTF-8 text"):
        sweepfile.parse('[sweep]\nbase = "base.toml"\n', base_dir=tmp_path)


def test_zipped_lists_must_have_one_length() -> None:
    extra = '[[axis]]\nzip = [ { name = "r", key = "topology.rtt", values = ["1ms", "2ms"] }, { name = "s", key = "duration", values = ["1s"] } ]\n'
    with pytest.raises(sweepfile.SweepError, match="one length; got 2, 1"):
        sweepfile.parse(sweep_text(extra=extra))


# --- running and storing ----------------------------------------------------------------------


def test_one_and_two_workers_store_identical_results(tmp_path: Path) -> None:
    sweep = sweepfile.parse(sweep_text())
    one = sweeprun.run_sweep(sweep, tmp_path / "j1.duckdb", jobs=1, progress=False)
    two = sweeprun.run_sweep(sweep, tmp_path / "j2.duckdb", jobs=2, progress=False)
    assert (one.total, one.ran, one.failed) == (18, 18, 0) and (two.ran, two.failed) == (18, 0)
    a, b = tables(tmp_path / "j1.duckdb"), tables(tmp_path / "j2.duckdb")
    assert_same(a, b)
    assert len(a["flows"]) == 36 and set(a["links"]["key"]) == set(a["runs"]["key"])
    # Replicates differ (the flows' start times come from the seed), the grid points differ.
    flows = a["flows"].merge(a["runs"][["key", "point", "replicate"]], on="key")
    starts = flows[flows["flow"] == "a"].pivot(index="point", columns="replicate", values="start")
    assert (starts[0] != starts[1]).all()


def test_results_match_a_single_run_of_the_same_scenario(tmp_path: Path) -> None:
    sweep = sweepfile.parse(sweep_text(replicates=1))
    sweeprun.run_sweep(sweep, tmp_path / "s.duckdb", jobs=1, progress=False)
    spec = sweep.runs()[4]
    alone = startlab.run(spec.scenario, progress=False)
    with startlab.open_sweep(tmp_path / "s.duckdb") as results:
        stored = results.flows()
    row = stored[(stored["point"] == spec.point) & (stored["flow"] == "a")].iloc[0]
    assert row["su_time"] == alone.flows.set_index("flow").loc["a", "su_time"]
    assert row["throughput"] == alone.flows.set_index("flow").loc["a", "throughput"]


def test_a_rerun_skips_stored_runs_and_retries_failed_ones_only_when_asked(tmp_path: Path) -> None:
    # A zero bottleneck rate is refused by the scenario check: those runs fail, the sweep goes on.
    axis = 'name = "queue"\nkey = "topology.queue.limit"\nrange = { from = "10pkt", to = "40pkt", step = "15pkt" }'
    assert axis in sweep_text()
    text = sweep_text(replicates=1).replace(axis, 'name = "rate"\nkey = "topology.bottleneck_rate"\nvalues = ["0Mbps", "10Mbps", "20Mbps"]')
    sweep = sweepfile.parse(text)
    db = tmp_path / "s.duckdb"
    first = sweeprun.run_sweep(sweep, db, jobs=2, progress=False)
    assert (first.total, first.ran, first.failed) == (9, 9, 3)
    again = sweeprun.run_sweep(sweep, db, jobs=2, progress=False)
    assert (again.skipped, again.ran) == (9, 0)
    retry = sweeprun.run_sweep(sweep, db, jobs=2, progress=False, retry_failed=True)
    assert (retry.ran, retry.failed) == (3, 3)
    with startlab.open_sweep(db) as results:
        runs = results.runs()
        failed = results.runs(status="failed")
    assert len(runs) == 9 and runs["key"].is_unique
    assert set(failed["rate"]) == {0.0}
    assert failed["error"].str.startswith("ScenarioError: topology.bottleneck_rate").all()
    assert failed["events"].isna().all()


def test_a_sweep_whose_every_run_is_refused_is_an_error(tmp_path: Path) -> None:
    text = sweep_text(replicates=1).replace('key = "topology.queue.limit"', 'key = "topology.queue_limit"')
    with pytest.raises(sweepfile.SweepError, match="every run of the sweep is refused.*queue_limit"):
        sweeprun.run_sweep(sweepfile.parse(text), tmp_path / "s.duckdb", jobs=1, progress=False)
    assert not (tmp_path / "s.duckdb").exists()


def test_runs_of_an_earlier_sweep_definition_are_archived_and_come_back(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    short = sweepfile.parse(sweep_text(replicates=1))
    sweeprun.run_sweep(short, db, jobs=2, progress=False)
    longer = sweepfile.parse(sweep_text(replicates=1).replace('duration = "1.5s"', 'duration = "2s"'))
    report = sweeprun.run_sweep(longer, db, jobs=2, progress=False)
    assert (report.archived, report.restored, report.ran) == (9, 0, 9)
    with startlab.open_sweep(db) as results:
        assert len(results.runs()) == 9 and (results.flows()["flow"].value_counts() == 9).all()
        assert len(results.sql("SELECT * FROM archive_runs")) == 9
        assert len(results.sql("SELECT * FROM archive_flows")) == 18
    back = sweeprun.run_sweep(short, db, jobs=2, progress=False)
    assert (back.archived, back.restored, back.ran) == (9, 9, 0)
    sweeprun.run_sweep(short, tmp_path / "clean.duckdb", jobs=2, progress=False)
    assert_same(tables(db), tables(tmp_path / "clean.duckdb"))


def test_an_axis_that_changed_type_is_refused_before_anything_runs(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    sweeprun.run_sweep(sweepfile.parse(sweep_text(replicates=1)), db, jobs=1, progress=False)
    text = sweep_text(replicates=1).replace('range = { from = "10pkt", to = "40pkt", step = "15pkt" }', 'values = ["10pkt", "40000B"]')
    with pytest.raises(sweeprun.SweepStoreError, match="axis 'queue' holds VARCHAR values now but the database stores it as DOUBLE"):
        sweeprun.run_sweep(sweepfile.parse(text), db, jobs=1, progress=False)
    assert len(tables(db)["runs"]) == 9


def test_a_run_over_a_resource_limit_is_recorded_as_failed(tmp_path: Path) -> None:
    extra = '[[axis]]\nname = "duration"\nkey = "duration"\nvalues = ["1s", "30s"]\n'
    sweep = sweepfile.parse(sweep_text(replicates=1, extra=extra).replace('values = ["slow-start", "hystart", "paced-start"]', 'values = ["slow-start"]'))
    limits = sweepfile.parse_limits({"max_sim_time": "10s", "max_events": 200_000}, "limits")
    report = sweeprun.run_sweep(sweep, tmp_path / "s.duckdb", jobs=1, progress=False, limits=limits)
    assert (report.ran, report.failed) == (6, 3)
    with startlab.open_sweep(tmp_path / "s.duckdb") as results:
        runs = results.runs()
    too_long = runs[runs["duration"] == 30.0]
    assert (too_long["status"] == "failed").all()
    assert too_long["error"].str.contains("max_sim_time = 10 s").all()
    assert (runs[runs["duration"] == 1.0]["status"] == "ok").all()


def long_and_short_sweep(limits: str = "") -> str:
    """Two runs: 1 s of simulated time (milliseconds of wall time) and 3000 s at 100 Mbit/s (many
    seconds), with the sweep file's ``limits`` line when given."""
    extra = '[[axis]]\nname = "duration"\nkey = "duration"\nvalues = ["1s", "3000s"]\n'
    text = sweep_text(replicates=1, extra=extra).replace('values = ["slow-start", "hystart", "paced-start"]', 'values = ["slow-start"]')
    text = text.replace('range = { from = "10pkt", to = "40pkt", step = "15pkt" }', 'values = ["40pkt"]')
    text = text.replace('bottleneck_rate = "10Mbps"', 'bottleneck_rate = "100Mbps"')
    return text.replace("replicates = 1", f"replicates = 1\n{limits}") if limits else text


def check_the_long_run_failed_on_max_wall(db: Path, limit: str) -> None:
    with startlab.open_sweep(db) as results:
        runs = results.runs()
    assert len(runs) == 2
    short, long = runs[runs["duration"] == 1.0].iloc[0], runs[runs["duration"] == 3000.0].iloc[0]
    assert short["status"] == "ok" and pd.isna(short["error"])
    assert long["status"] == "failed"
    assert long["error"].startswith(f"ResourceLimitError: the run stopped after max_wall = {limit} s of wall time, at ")
    assert "of 3000 s simulated (" in long["error"] and long["error"].endswith(" events)")


def test_a_wall_time_limit_in_the_sweep_file_fails_the_run_that_exceeds_it(tmp_path: Path) -> None:
    sweep = sweepfile.parse(long_and_short_sweep('limits = { max_wall = "0.5s" }'))
    assert sweep.limits == sweepfile.Limits(max_wall=0.5)
    report = sweeprun.run_sweep(sweep, tmp_path / "s.duckdb", jobs=1, progress=False)
    assert (report.ran, report.failed) == (2, 1)
    check_the_long_run_failed_on_max_wall(tmp_path / "s.duckdb", "0.5")


def test_the_command_line_wall_time_limit_wins_over_the_sweep_file(tmp_path: Path) -> None:
    path = write(tmp_path, long_and_short_sweep('limits = { max_wall = "1h", max_events = 1e12 }'))
    done = CliRunner().invoke(cli, ["sweep", str(path), "--max-wall", "400ms", "--no-progress", "-j", "1"])
    assert done.exit_code == 0, done.output
    assert "2 runs: 0 already stored, 2 run (1 failed)" in done.output
    check_the_long_run_failed_on_max_wall(tmp_path / "sweep.duckdb", "0.4")


@pytest.mark.parametrize(
    ("value", "expected"),
    [('"30s"', 30.0), ('"10min"', 600.0), ('"2h"', 7200.0), ("90", 90.0), ("0.25", 0.25), ('"1_500ms"', 1.5)],
)
def test_the_wall_time_limit_takes_a_duration(value: str, expected: float) -> None:
    sweep = sweepfile.parse(sweep_text().replace("replicates = 2", f"replicates = 2\nlimits = {{ max_wall = {value} }}"))
    assert sweep.limits.max_wall == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"30"', 'sweep.limits.max_wall = \'30\': expected a wall-clock duration such as "30s" or "10min" (ns, us, ms, s, min, h)'),
        ('"2GiB"', "sweep.limits.max_wall = '2GiB': expected a wall-clock duration"),
        ('"0s"', "sweep.limits.max_wall = '0s': must be positive"),
        ("-5", "sweep.limits.max_wall = -5: must be positive"),
        ("true", "sweep.limits.max_wall = True: expected a wall-clock duration"),
    ],
)
def test_a_bad_wall_time_limit_is_refused(value: str, message: str) -> None:
    with pytest.raises(sweepfile.SweepError) as info:
        sweepfile.parse(sweep_text().replace("replicates = 2", f"replicates = 2\nlimits = {{ max_wall = {value} }}"))
    assert message in str(info.value)


def test_traces_are_parquet_files_listed_in_the_database_when_asked(tmp_path: Path) -> None:
    text = sweep_text(replicates=1).replace("cwnd = false", "cwnd = true").replace('values = ["slow-start", "hystart", "paced-start"]', 'values = ["slow-start"]')
    db = tmp_path / "s.duckdb"
    sweeprun.run_sweep(sweepfile.parse(text), db, jobs=1, progress=False, traces=True)
    with startlab.open_sweep(db) as results:
        listed = results.sql("SELECT * FROM traces")
    assert len(listed) == 3 and set(listed["kind"]) == {"cwnd"}
    frame = pd.read_parquet(listed["path"].iloc[0])
    assert {"time", "flow", "cwnd"} <= set(frame.columns) and len(frame) > 10


# --- Dask -------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning", "ignore::UserWarning")
def test_a_dask_local_cluster_gives_the_same_tables_as_local_workers(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    sweep = sweepfile.parse(sweep_text())
    sweeprun.run_sweep(sweep, tmp_path / "local.duckdb", jobs=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
        report = sweeprun.run_sweep(sweep, tmp_path / "dask.duckdb", dask=client, progress=False)
        # The command line's way: the scheduler's address (half the sweep stored, the rest resumed there).
        half = sweepfile.parse(sweep_text().replace('"slow-start", "hystart", "paced-start"', '"slow-start", "hystart"'))
        sweeprun.run_sweep(half, tmp_path / "address.duckdb", jobs=1, progress=False)
        by_address = sweeprun.run_sweep(sweep, tmp_path / "address.duckdb", dask=cluster.scheduler_address, progress=False)
        # And from a fresh process, where no other client exists.
        cli_db = tmp_path / "cli.duckdb"
        command = [sys.executable, "-m", "startlab", "sweep", str(write(tmp_path, sweep_text())), "--db", str(cli_db), "--dask", cluster.scheduler_address, "--no-progress"]
        finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert finished.returncode == 0, finished.stderr
        assert f"on dask {cluster.scheduler_address}" in finished.stderr
    assert report.backend.startswith("dask") and (report.ran, report.failed) == (18, 0)
    assert (by_address.skipped, by_address.ran) == (12, 6) and by_address.backend == f"dask {cluster.scheduler_address}"
    assert_same(tables(tmp_path / "local.duckdb"), tables(tmp_path / "dask.duckdb"))
    assert_same(tables(tmp_path / "local.duckdb"), tables(tmp_path / "address.duckdb"))
    assert_same(tables(tmp_path / "local.duckdb"), tables(cli_db))


# --- SIGKILL ----------------------------------------------------------------------------------


def _sweep_until(path: Path, db: Path, stored: int) -> int:
    """Start ``startlab sweep --log`` in its own process group, SIGKILL the whole group once it has
    logged ``stored`` runs, return how many it had logged."""
    command = [sys.executable, "-m", "startlab", "sweep", str(path), "--db", str(db), "-j", "2", "--log", "--no-progress"]
    seen = 0
    with subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, start_new_session=True) as proc:
        assert proc.stderr is not None
        deadline = time.monotonic() + 120
        for line in proc.stderr:
            if line.startswith("["):
                seen += 1
            if seen >= stored or time.monotonic() > deadline:
                break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return seen


def test_sigkill_at_any_moment_loses_no_stored_run_and_duplicates_none(tmp_path: Path) -> None:
    path = write(tmp_path, sweep_text(replicates=4))  # 36 runs
    db = tmp_path / "killed.duckdb"
    logged = []
    for stop_after in (5, 9, 4):
        logged.append(_sweep_until(path, db, stop_after))
        with duckdb.connect(str(db), read_only=True) as con:  # readable after every kill
            count = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        assert count < 36, "killed partway"
    assert all(n > 0 for n in logged)
    result = CliRunner().invoke(cli, ["sweep", str(path), "--db", str(db), "-j", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    sweeprun.run_sweep(sweepfile.load(path), tmp_path / "clean.duckdb", jobs=2, progress=False)
    killed, clean = tables(db), tables(tmp_path / "clean.duckdb")
    assert len(killed["runs"]) == 36 and killed["runs"]["key"].is_unique
    assert not killed["flows"].duplicated(["key", "flow"]).any()
    assert_same(killed, clean)


def test_ctrl_c_stores_the_runs_in_flight_and_a_rerun_resumes(tmp_path: Path, sigint_in_child: Callable[[], None]) -> None:
    path = write(tmp_path, sweep_text(replicates=4))
    db = tmp_path / "s.duckdb"
    command = [sys.executable, "-m", "startlab", "sweep", str(path), "--db", str(db), "-j", "2", "--log", "--no-progress"]
    popen = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, preexec_fn=sigint_in_child)
    with popen as proc:
        assert proc.stderr is not None
        logged = 0
        for line in proc.stderr:
            logged += line.startswith("[")
            if logged == 4:
                proc.send_signal(signal.SIGINT)
                break
        rest = proc.stderr.read()
        assert proc.wait() == 130
    # The runs the workers were running when Ctrl-C came are stored too (they are logged).
    assert "interrupted: storing the" in rest and "run the sweep again to resume" in rest
    logged += rest.count("\n[")  + rest.startswith("[")
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert stored == logged and 4 <= stored < 36
    sweeprun.run_sweep(sweepfile.load(path), db, jobs=2, progress=False)
    sweeprun.run_sweep(sweepfile.load(path), tmp_path / "clean.duckdb", jobs=2, progress=False)
    assert_same(tables(db), tables(tmp_path / "clean.duckdb"))



@pytest.mark.usefixtures("sigint_here")
def test_ctrl_c_while_a_run_is_being_stored_waits_for_that_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C arriving inside the store (here: between DuckDB's BEGIN and the rest) used to leave
    # the connection inside a transaction, and the next run's BEGIN failed.
    path = write(tmp_path, sweep_text(replicates=2))
    db = tmp_path / "s.duckdb"
    original = sweeprun.Store.record
    calls = []

    def record(self: sweeprun.Store, *args: object) -> None:
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # raised at the next bytecode, inside the store
        original(self, *args)

    monkeypatch.setattr(sweeprun.Store, "record", record)
    with pytest.raises(sweeprun.SweepInterrupted, match="interrupted: [0-9]+ runs stored"):
        sweeprun.run_sweep(sweepfile.load(path), db, jobs=1, progress=False)
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert stored == len(calls) and 3 <= stored < 18  # the third run and those in flight are stored
    monkeypatch.setattr(sweeprun.Store, "record", original)
    sweeprun.run_sweep(sweepfile.load(path), db, jobs=1, progress=False)
    sweeprun.run_sweep(sweepfile.load(path), tmp_path / "clean.duckdb", jobs=1, progress=False)
    assert_same(tables(db), tables(tmp_path / "clean.duckdb"))


def test_editing_a_file_the_scenario_names_gives_its_runs_new_keys(tmp_path: Path) -> None:
    trace = tmp_path / "traces" / "down.trace"
    trace.parent.mkdir()
    trace.write_text("".join(f"{ms}\n" for ms in range(1, 11)))  # 12 Mb/s in 10 ms periods
    extra = '[[base.impairments]]\nlink = "bottleneck"\nrate_trace = "traces/down.trace"\n'
    path = write(tmp_path, sweep_text(replicates=1).replace('"slow-start", "hystart", "paced-start"', '"slow-start"') + extra)
    db = tmp_path / "s.duckdb"
    first = sweeprun.run_sweep(sweepfile.load(path), db, jobs=1, progress=False)
    assert (first.ran, first.failed) == (3, 0)
    assert sweeprun.run_sweep(sweepfile.load(path), db, jobs=1, progress=False).skipped == 3
    before = {t.key for t in sweeprun.plan(sweepfile.load(path))}
    # The same number of opportunities in the same period (what the resolved scenario shows of the
    # trace), bunched in the second half of each period: only the file's contents changed.
    trace.write_text("".join(f"{ms}\n" for ms in (6, 6, 7, 7, 8, 8, 9, 9, 10, 10)))
    after = {t.key for t in sweeprun.plan(sweepfile.load(path))}
    assert before.isdisjoint(after) and len(after) == 3
    again = sweeprun.run_sweep(sweepfile.load(path), db, jobs=1, progress=False)
    assert (again.skipped, again.ran, again.archived) == (0, 3, 3)
    with duckdb.connect(str(db), read_only=True) as con:
        resolved = {r[0] for r in con.execute("SELECT scenario FROM archive_runs UNION ALL SELECT scenario FROM runs").fetchall()}
        old, new = (con.execute(f"SELECT list(completion_time ORDER BY completion_time) FROM {t}").fetchone()[0] for t in ("archive_flows", "flows"))
    assert len(resolved) == 3  # the resolved scenarios are the same: the key covers the file itself
    assert old != new  # and the runs did use the edited trace

# --- command line and API ---------------------------------------------------------------------


def test_cli_runs_resumes_and_lists(tmp_path: Path) -> None:
    path = write(tmp_path, sweep_text(replicates=1))
    runner = CliRunner()
    dry = runner.invoke(cli, ["sweep", str(path), "--dry-run"])
    assert dry.exit_code == 0 and "9 runs (9 points x 1 replicates)" in dry.output and "to run" in dry.output
    done = runner.invoke(cli, ["sweep", str(path), "-j", "2", "--no-progress"])
    assert done.exit_code == 0, done.output
    assert "9 runs: 0 already stored, 9 run (0 failed)" in done.output
    assert (tmp_path / "sweep.duckdb").is_file()
    again = runner.invoke(cli, ["sweep", str(path), "--no-progress"])
    assert "9 already stored, 0 run" in again.output
    assert "stored (ok)" in runner.invoke(cli, ["sweep", str(path), "--dry-run"]).output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep", "missing.toml"], "error: sweep file not found"),
        (["sweep", "{path}", "--max-memory", "2QB"], "error: limits.max_memory = '2QB'"),
        (["sweep", "{path}", "--max-wall", "soon"], "error: limits.max_wall = 'soon': expected a wall-clock duration such as \"30s\""),
        (["sweep", "{path}", "--max-wall", "0s"], "error: limits.max_wall = '0s': must be positive"),
        (["sweep", "{path}", "-j", "0"], "error: --jobs 0"),
        (["sweep", "{path}", "--dask", "foo"], "error: --dask 'foo': expected a scheduler address"),
        (["sweep", "{path}", "--dry-run", "--db", "{path}"], "cannot open the sweep database"),
    ],
)
def test_cli_bad_input_is_one_line_with_exit_code_2(tmp_path: Path, args: list[str], message: str) -> None:
    path = write(tmp_path, sweep_text(replicates=1))
    result = CliRunner().invoke(cli, [a.format(path=path) for a in args])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_the_python_api_returns_dataframes(tmp_path: Path) -> None:
    path = write(tmp_path, sweep_text(replicates=1))
    with startlab.sweep(path, jobs=2, progress=False) as results:
        runs, flows, links = results.runs(), results.flows(), results.links()
        axes = results.axes
    assert len(runs) == 9 and (runs["status"] == "ok").all()
    assert {"algorithm", "queue", "replicate", "flow", "su_time"} <= set(flows.columns) and len(flows) == 18
    assert len(links) > 0 and list(axes["name"]) == ["algorithm", "queue"]
    with pytest.raises(OSError, match="not found"):
        startlab.open_sweep(tmp_path / "nothing.duckdb")


def crash_on_point_one(task: sweeprun.Task) -> sweeprun.Outcome:
    """A stand-in for a run that kills its worker process (the OOM killer, a crash)."""
    if task.point == 1:
        os._exit(3)
    return sweeprun.execute(task)


def test_a_run_that_kills_its_worker_is_recorded_as_failed_and_the_others_complete() -> None:
    sweep = sweepfile.parse(sweep_text(replicates=1))
    tasks = sweeprun.plan(sweep)[:4]
    outcomes = {task.point: outcome for task, outcome in sweeprun._local(tasks, 2, crash_on_point_one)}
    assert sorted(outcomes) == [0, 1, 2, 3]
    assert outcomes[1].status == "failed" and outcomes[1].error.startswith("WorkerDied")
    assert all(outcomes[p].status == "ok" for p in (0, 2, 3))


def test_aggregates_over_replicates_of_a_real_sweep(tmp_path: Path) -> None:
    with startlab.sweep(write(tmp_path, sweep_text(replicates=3)), jobs=2, progress=False) as results:
        frame = results.aggregate("queue", "throughput", by="algorithm")
        figure = results.plot("queue", "su_time", by="algorithm")
    assert len(frame) == 9 and (frame["n"] == 3).all()
    assert ((frame["ci_low"] <= frame["throughput"]) & (frame["throughput"] <= frame["ci_high"])).all()
    assert figure.axes


def test_the_store_benchmark_records_new_keys(tmp_path: Path) -> None:
    from startlab.sweep import bench as sweepbench

    blocks = sweepbench._store_alone(tmp_path, total=20, block=10)
    assert len(blocks) == 2 and all(b > 0 for b in blocks)
    with duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*), count(DISTINCT key) FROM runs").fetchone() == (20, 20)
        assert con.execute("SELECT count(DISTINCT key) FROM flows").fetchone() == (20,)


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[1] / "examples" / "sweeps").glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_sweep_plans_runs_the_scenario_edge_accepts(path: Path) -> None:
    """Each sweep file under examples/sweeps/ parses and every run it plans is a valid scenario."""
    from startlab.sweep import file as sweepfile
    from startlab.sweep import run as sweeprun

    tasks = sweeprun.plan(sweepfile.load(path))
    assert tasks
    refused = [(task.values, task.error if hasattr(task, "error") else None) for task in tasks if task.resolved is None]
    assert not refused, refused[:3]
