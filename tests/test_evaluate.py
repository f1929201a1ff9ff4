"""startlab evaluate (docs/EVALUATE.md): suites, paired runs, verdicts, the report, resumability,
determinism and Dask.

The quick suite runs once (module fixture ``quick``): the deliberately worse plug-in of
examples/plugins/frozen_start.py against the suite's baselines, through the command line, as CI
would. The other tests use a tiny suite of six paths."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import startlab
from startlab.evaluate import core, scenarios, stats, suite as suites, traces
from startlab.evaluate.run import EvaluateError

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "examples" / "plugins"

TINY = """\
[suite]
name = "tiny"
version = "1"
seed = 7
seeds = 1
baselines = ["slow-start"]
max_duration = "60s"

[[paths]]
class = "wired"
count = 6
source = "test paths"
rate = { log-uniform = ["5Mbps", "50Mbps"] }
rtt = { log-uniform = ["10ms", "200ms"] }
buffer = { uniform = [0.5, 2.0] }

[[workloads]]
kind = "transfer"
sizes = ["100KB", "1MB"]
source = "test sizes"

[[workloads]]
kind = "join"
incumbents = [1]
join_after_rtts = 10
min_join = "500ms"
window_rtts = 10
min_window = "1s"
source = "test join"
"""


def env() -> dict[str, str]:
    """The environment of a child process: the startlab this test imported first (an installed
    package, or the source tree of an editable install), the plug-ins' directory next."""
    paths = [str(Path(startlab.__file__).resolve().parent.parent), str(PLUGINS)]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "startlab", *args], capture_output=True, text=True, env=env(), cwd=cwd, timeout=timeout)


def tiny(tmp_path: Path, text: str = TINY) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(text, encoding="utf-8")
    return path


def stored(db: Path) -> dict[str, Any]:
    """The runs and flows of an evaluation database, without the timing columns."""
    con = startlab.sweep.run.connect_db(db, read_only=True)
    try:
        runs = con.execute("SELECT * EXCLUDE (wall_s, finished_at) FROM runs ORDER BY key").df()
        flows = con.execute("SELECT * FROM flows ORDER BY key, flow").df()
    finally:
        con.close()
    return {"runs": runs, "flows": flows}


def verdicts(doc: dict[str, Any]) -> list[str]:
    return [c["verdict"] for c in doc["comparisons"]] + [e["verdict"] for row in doc["scorecard"] for e in row["workloads"].values()]


# --- the quick suite, once --------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], float]:
    out = tmp_path_factory.mktemp("quick")
    started = time.perf_counter()
    done = cli("evaluate", "frozen_start:FrozenStart", "--suite", "quick", "-j", "2", "--report", str(out), "--json", "--no-progress", cwd=PLUGINS)
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    return out, json.loads(done.stdout), seconds


def test_the_quick_suite_finds_a_plugin_that_never_grows_worse_than_every_baseline(quick: tuple[Path, dict[str, Any], float]) -> None:
    # Its time is measured in docs/PERFORMANCE.md (#evaluation-suites), not asserted here.
    out, doc, _ = quick
    assert doc["algorithms"] == ["frozen-start"] and doc["baselines"] == ["slow-start", "hystart-linux", "hystart++", "search", "bbr-startup"]
    assert doc["runs"]["failed"] == 0 and doc["plugins"] == ["frozen_start"]
    for row in doc["scorecard"]:
        fct = row["workloads"]["transfer"]
        assert fct["verdict"] == stats.WORSE and fct["low"] > 1, f"frozen-start against {row['baseline']}: {fct}"
        assert row["workloads"]["web"]["verdict"] == stats.WORSE
    # Per region too: every pooled region of 100 KB and more is worse (10 KB fits in slow start's
    # first window, and a 2-segment window needs several round trips for it: worse as well).
    pooled = [c for c in doc["comparisons"] if c["workload"] == "transfer" and c["path_class"] == stats.ALL]
    assert pooled and all(c["verdict"] == stats.WORSE for c in pooled)
    # The runs behind each interval are stated.
    assert all(e["pairs"] > 0 and e["paths"] > 0 for c in pooled for e in c["estimates"][:1])


def test_the_report_renders_in_chromium_with_its_scorecard_and_figures(quick: tuple[Path, dict[str, Any], float]) -> None:
    out, doc, _ = quick
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium)")
    page = out / "index.html"
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    body = re.search(r'<body[^>]*data-figures-decoded="(\d+)"[^>]*data-figures="(\d+)"[^>]*data-scorecard-rows="(\d+)"[^>]*data-js-errors="(\d+)"', dom)
    assert body is not None, "the report's script did not run in Chromium"
    decoded, figures, rows, errors = (int(g) for g in body.groups())
    assert figures == 2 and decoded == 2, "both Pareto figures are decoded"
    assert rows == len(doc["baselines"]), "one scorecard row per contestant and baseline"
    assert errors == 0, "no script error"
    assert 'id="scorecard"' in dom and "frozen-start" in dom and doc["suite"]["sha256"][:16] in dom
    assert "download=" in dom, "the worst paths' scenarios are one click away"
    assert not re.search(r'(src|href)="(https?:)?//', page.read_text(encoding="utf-8")), "self-contained"


def test_a_worst_path_scenario_from_the_report_runs_again_to_the_same_fct(quick: tuple[Path, dict[str, Any], float]) -> None:
    out, doc, _ = quick
    worst = doc["worst"][0]
    html = (out / "index.html").read_text(encoding="utf-8")
    name = f"{worst['path']}-{worst['item']}-{worst['algorithm']}.json"
    link = re.search(rf'download="{re.escape(name)}" href="data:application/json;base64,([^"]+)"', html)
    assert link is not None
    import base64

    scenario = json.loads(base64.b64decode(link.group(1)))
    sys.path.insert(0, str(PLUGINS))
    try:
        result = startlab.run(scenario)
    finally:
        sys.path.remove(str(PLUGINS))
    flow = result.flows.iloc[0]
    fct = flow["completion_time"] if flow["completed"] else result.stats["sim_time_ns"] / 1e9 - flow["t0"]
    assert fct == pytest.approx(worst["fct"], rel=1e-12)


# --- statistics -------------------------------------------------------------------------------


def test_an_algorithm_against_itself_and_a_python_twin_has_no_difference_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PLUGINS)  # as a user would: the plug-in's module in the working directory
    # lss-py is the built-in lss, ACK for ACK (tests/test_plugins.py): separate runs, identical results.
    doc = core.evaluate(["lss_py:LimitedSlowStart", "lss"], tiny(tmp_path), out=tmp_path / "out", baselines=["lss"], jobs=2, progress=False)
    assert doc["runs"]["failed"] == 0
    found = verdicts(doc)
    assert found and set(found) <= {stats.SAME, stats.FEW}
    assert stats.SAME in found
    for c in doc["comparisons"]:
        head = c["estimates"][0]
        assert head["effect"] == pytest.approx(1.0, abs=1e-12), c


def test_the_bootstrap_is_fixed_by_its_seed_and_resamples_paths_not_runs() -> None:
    import numpy as np

    effects = np.array([0.1, 0.12, -0.3, -0.28, 0.05, 0.07])
    clusters = np.array(["a", "a", "b", "b", "c", "c"])
    one = stats.bootstrap(effects, clusters, suites.stream(1, "x"))
    assert one == stats.bootstrap(effects, clusters, suites.stream(1, "x"))
    assert one[1] <= one[0] <= one[2]
    # Three clusters of two identical-ish runs: the interval is as wide as three points allow,
    # much wider than six independent runs would give.
    independent = stats.bootstrap(effects, np.arange(6), suites.stream(1, "x"))
    assert one[2] - one[1] >= independent[2] - independent[1]
    metric = stats.METRICS["transfer"][0]
    assert stats.verdict(metric, -0.2, -0.01, 10) == stats.BETTER
    assert stats.verdict(metric, 0.01, 0.2, 10) == stats.WORSE
    assert stats.verdict(metric, -0.01, 0.2, 10) == stats.SAME
    assert stats.verdict(metric, -0.2, -0.01, stats.MIN_PATHS - 1) == stats.FEW


def test_the_incumbents_alone_run_is_the_join_run_until_the_join() -> None:
    s = suites.parse(TINY)
    work = next(w for w in s.workloads if w.kind == "join")
    path = s.paths()[0]
    join, _ = scenarios.join_times(path, work)
    seed = 11
    runs = {}
    for name in ("search", scenarios.REFERENCE):
        scenario = scenarios.build(s, path, work, work.items[0], name, seed, None, [])
        scenario["trace"] = {"cwnd": True, "seq": False, "queue": False}
        runs[name] = startlab.run(scenario).traces.cwnd
    full, alone = (runs[n].astype({"flow": str, "cause": str}) for n in ("search", scenarios.REFERENCE))
    before = full[(full["flow"] == "incumbent") & (full["time"] < join)].reset_index(drop=True)
    assert len(before) > 10 and (full["flow"] == "newcomer").any()
    assert before.equals(alone[(alone["flow"] == "incumbent") & (alone["time"] < join)].reset_index(drop=True))


# --- suites and bad input ---------------------------------------------------------------------


def test_the_same_suite_and_seed_draw_the_same_paths_and_a_new_seed_others() -> None:
    a = [p.describe() for p in suites.load("quick").paths()]
    assert a == [p.describe() for p in suites.load("quick").paths()]
    text = (suites.SUITES_DIR / "quick.toml").read_text(encoding="utf-8").replace("seed = 36", "seed = 37")
    assert a != [p.describe() for p in suites.parse(text).paths()]
    for name in ("quick", "standard", "full"):
        s = suites.load(name)
        assert s.name == name and s.paths()
        assert all(c["source"] for c in s.path_classes) and all(w.source for w in s.workloads)


def test_the_full_suite_holds_at_least_ten_thousand_runs_and_standard_fewer() -> None:
    from startlab.evaluate import run as evaluation

    counts = {}
    for name in ("quick", "standard", "full"):
        s = suites.load(name)
        contestants = evaluation.Contestants(["search"], s.baselines, [], None)
        counts[name] = sum(1 for _ in evaluation.cases(s, contestants))
    assert counts["quick"] < counts["standard"] < counts["full"] and counts["full"] >= 10_000, counts


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('rate = { log-uniform = ["5Mbps", "50Mbps"] }', 'rate = { log-uniform = ["0Mbps", "50Mbps"] }'), "paths[0].rate.log-uniform[0] = '0Mbps': must be positive"),
        (('rate = { log-uniform = ["5Mbps", "50Mbps"] }', 'rate = { log-uniform = ["50Mbps", "5Mbps"] }'), "paths[0].rate.log-uniform = ['50Mbps', '5Mbps']: cannot be sampled, LOW is above HIGH"),
        (('buffer = { uniform = [0.5, 2.0] }', 'buffer = { uniform = [0.5] }'), "paths[0].buffer.uniform = [0.5]: expected [LOW, HIGH], two values"),
        (('buffer = { uniform = [0.5, 2.0] }', 'buffer = { normal = [0.5, 2.0] }'), "paths[0].buffer: expected one of"),
        (('rtt = { log-uniform = ["10ms", "200ms"] }', 'rtt = { log-uniform = ["10ms", "200Mbps"] }'), "paths[0].rtt.log-uniform[1] = '200Mbps': expected an amount with a unit"),
        (('source = "test paths"', 'source = "test paths"\nqueue = { choice = ["droptail", "red-ish"] }'), "paths[0].queue.choice[1] = 'red-ish': expected one of droptail"),
        (('sizes = ["100KB", "1MB"]', 'sizes = []'), "workloads[0].sizes: required"),
        (('count = 6', 'count = 6\nspeed = 3'), "paths[0].speed: unknown key"),
        (('source = "test sizes"', ''), "workloads[0].source: required"),
    ],
)
def test_a_suite_that_cannot_be_sampled_is_refused_with_its_key_path(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    assert change[0] in TINY
    with pytest.raises(suites.SuiteError) as refused:
        suites.parse(TINY.replace(*change, 1))
    assert message in str(refused.value)
    done = cli("evaluate", "search", "--suite", str(tiny(tmp_path, TINY.replace(*change, 1))), "--report", str(tmp_path / "r"))
    assert done.returncode == 2 and done.stderr.startswith("error: ") and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "r" / "evaluate.duckdb").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch"], "error: algorithm 'nosuch': unknown startup algorithm"),
        (["search", "--baseline", "slow-start,nosuch"], "error: baseline 'nosuch': unknown startup algorithm"),
        (["search", "--suite", "nosuch"], "error: unknown suite 'nosuch': expected one of full, quick, standard"),
        (["no_such_module:X"], "error: algorithm 'no_such_module:X': cannot import the plug-in module 'no_such_module'"),
        (["frozen_start:Nope"], "error: algorithm 'frozen_start:Nope': module 'frozen_start' has no attribute 'Nope'"),
        (["search", "search"], "error: an algorithm is given twice"),
        (["search", "-j", "2", "--dask", "tcp://127.0.0.1:1"], "error: give -j/--jobs or --dask, not both"),
    ],
)
def test_bad_input_gives_one_line_and_exit_code_2(tmp_path: Path, args: list[str], message: str) -> None:
    done = cli("evaluate", *args, "--report", str(tmp_path / "r"), cwd=PLUGINS)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(message) and "Traceback" not in done.stderr


def test_a_name_registered_by_a_plugin_module_is_the_same_contestant_as_module_class(tmp_path: Path) -> None:
    suite_file = str(tiny(tmp_path))
    first = cli("evaluate", "frozen_start:FrozenStart", "--suite", suite_file, "--report", str(tmp_path / "r"), "-j", "2", "--json", cwd=PLUGINS)
    again = cli("evaluate", "frozen-start", "--plugin", "frozen_start", "--suite", suite_file, "--report", str(tmp_path / "r"), "-j", "2", "--json", cwd=PLUGINS)
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a["algorithms"] == b["algorithms"] == ["frozen-start"] and b["plugins"] == ["frozen_start"]
    assert b["ran"] == 0 and b["skipped"] == a["runs"]["total"], "the same scenarios: every run is already stored"
    assert a["comparisons"] == b["comparisons"]
    assert all(row["workloads"]["transfer"]["verdict"] == stats.WORSE for row in a["scorecard"])


FLAKY = '''
import startlab
from startlab import Action


@startlab.startup("flaky-start")
class FlakyStart:
    """Slow start that raises on paths with a base RTT above 50 ms."""

    def on_ack(self, view, ack):
        if view.min_rtt is not None and view.min_rtt > 0.05:
            raise RuntimeError("flaky-start cannot handle long paths")
        return Action(increase=min(ack.newly_acked, view.mss))
'''


def test_a_plugin_that_fails_on_some_paths_gives_failed_rows_and_the_rest_goes_on(tmp_path: Path) -> None:
    (tmp_path / "flaky_start.py").write_text(FLAKY, encoding="utf-8")
    done = cli("evaluate", "flaky_start:FlakyStart", "--suite", str(tiny(tmp_path)), "--report", str(tmp_path / "r"), "-j", "2", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    failures = doc["failures"]
    # Its min RTT includes queueing: every path of a base RTT above 50 ms fails, some others too.
    long_paths = {p["id"] for p in doc["paths"] if p["rtt_s"] > 0.05}
    failed_paths = {f["path"] for f in failures}
    assert long_paths and long_paths <= failed_paths < {p["id"] for p in doc["paths"]}
    assert all(f["algorithm"] == "flaky-start" and "flaky-start cannot handle long paths" in f["error"] for f in failures)
    assert doc["runs"]["ok"] == doc["runs"]["total"] - len(failures)
    short = [c for c in doc["comparisons"] if c["workload"] == "transfer"]
    assert short and all(c["estimates"][0]["dropped"] == sum(1 for f in failures if f["workload"] == "transfer" and f["item"] == c["item"]) for c in short)
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "flaky-start cannot handle long paths" in page and f"{len(failures)} runs failed" in page


def test_a_plugin_that_fails_everywhere_gives_a_report_of_failures_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "broken_start.py").write_text(FLAKY.replace("flaky-start", "broken-start").replace("view.min_rtt > 0.05", "True"), encoding="utf-8")
    done = cli("evaluate", "broken_start:FlakyStart", "--suite", str(tiny(tmp_path)), "--report", str(tmp_path / "r"), "-j", "2", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["runs"]["failed"] == doc["runs"]["by_algorithm"]["broken-start"] == len(doc["failures"]) > 0
    assert set(verdicts(doc)) == {stats.FEW}
    assert (tmp_path / "r" / "index.html").is_file()


# --- determinism, resumability, Dask -------------------------------------------------------------


def test_one_worker_and_two_give_the_same_runs_and_the_same_verdicts(tmp_path: Path) -> None:
    a = core.evaluate(["search"], tiny(tmp_path), out=tmp_path / "a", jobs=1, progress=False)
    b = core.evaluate(["search"], tiny(tmp_path), out=tmp_path / "b", jobs=2, progress=False)
    one, two = stored(tmp_path / "a" / "evaluate.duckdb"), stored(tmp_path / "b" / "evaluate.duckdb")
    assert one["runs"].equals(two["runs"]) and one["flows"].equals(two["flows"])
    assert a["comparisons"] == b["comparisons"] and a["scorecard"] == b["scorecard"]


def test_a_killed_evaluation_resumes_from_its_database(tmp_path: Path) -> None:
    suite_file = tiny(tmp_path)
    out = tmp_path / "r"
    command = [sys.executable, "-m", "startlab", "evaluate", "search", "--suite", str(suite_file), "--report", str(out), "-j", "1", "--log"]
    child = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env(), start_new_session=True)
    seen = 0
    try:
        assert child.stderr is not None
        for line in child.stderr:
            if re.match(r"\[\d+/\d+\] ok ", line):
                seen += 1
                if seen == 5:
                    break
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
        if child.stderr is not None:
            child.stderr.close()
    assert seen == 5
    again = cli("evaluate", "search", "--suite", str(suite_file), "--report", str(out), "-j", "2", "--json")
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert doc["skipped"] >= 5 and doc["skipped"] + doc["ran"] == doc["runs"]["total"]
    runs = stored(out / "evaluate.duckdb")["runs"]
    assert len(runs) == doc["runs"]["total"] and runs["key"].is_unique
    fresh = core.evaluate(["search"], suite_file, out=tmp_path / "fresh", jobs=2, progress=False)
    assert fresh["comparisons"] == doc["comparisons"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning", "ignore::UserWarning")
def test_a_dask_cluster_of_scheduler_and_worker_processes_gives_the_local_results(tmp_path: Path) -> None:
    dask = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command is not installed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    children = []
    try:
        children.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], cwd=tmp_path,
                                         env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))  # fmt: skip
        children.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard", "--local-directory", str(tmp_path / "w")],
                                         cwd=tmp_path, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))  # fmt: skip
        from distributed import Client

        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(2, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        remote = core.evaluate(["search"], tiny(tmp_path), out=tmp_path / "dask", dask=address, progress=False)
        assert remote["backend"] == f"dask {address}"
    finally:
        for child in children:
            try:
                os.killpg(child.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for child in children:
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait(timeout=20)
    local = core.evaluate(["search"], tiny(tmp_path), out=tmp_path / "local", jobs=2, progress=False)
    a, b = stored(tmp_path / "dask" / "evaluate.duckdb"), stored(tmp_path / "local" / "evaluate.duckdb")
    assert a["runs"].equals(b["runs"]) and a["flows"].equals(b["flows"])
    assert remote["comparisons"] == local["comparisons"]


# --- traces -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", traces.KINDS)
def test_generated_traces_keep_their_stated_statistics(tmp_path: Path, kind: str) -> None:
    stamps = traces.generate(kind, 20e6, 600, seed=3)
    measured = traces.stats(stamps)
    assert measured.period_s == 600
    assert measured.mean_rate_bps == pytest.approx(20e6, rel=0.15)
    if kind == "cellular":
        assert 0.4 < measured.cv_100ms < 1.0 and measured.idle_100ms > 0
    else:
        assert measured.cv_100ms < 0.3 and measured.idle_100ms == 0 and measured.longest_gap_s < 0.05  # an aggregate may be empty
    assert (traces.generate(kind, 20e6, 600, seed=3) == stamps).all()
    file = tmp_path / f"{kind}.down"
    done = cli("traces", "generate", "--kind", kind, "--mean-rate", "20Mbps", "--duration", "600s", "--seed", "3", str(file))
    assert done.returncode == 0, done.stderr
    assert (traces.read(file) == stamps).all()
    assert cli("traces", "stats", str(file)).stdout.strip() == f"{file}: {traces.describe(measured)}"


def test_a_directory_of_user_traces_is_a_path_class(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    for i, rate in enumerate((4e6, 8e6)):
        traces.write(tmp_path / "mine" / f"t{i}.down", traces.generate("wifi", rate, 10, seed=i))
    text = TINY.replace('rate = { log-uniform = ["5Mbps", "50Mbps"] }', 'trace = { dir = "mine" }')
    s = suites.parse(text, base_dir=tmp_path)
    assert {p.trace for p in s.paths()} <= {str((tmp_path / "mine" / f"t{i}.down").resolve()) for i in range(2)}
    assert all(3e6 < p.rate_bps < 9e6 for p in s.paths())
    with pytest.raises(suites.SuiteError, match=r"paths\[0\]\.trace\.dir = 'empty': no trace files"):
        suites.parse(text.replace('dir = "mine"', 'dir = "empty"'), base_dir=tmp_path)


def test_unknown_contestants_are_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(EvaluateError, match="unknown startup algorithm"):
        core.evaluate(["bbr"], tiny(tmp_path), out=tmp_path / "r")
    assert not (tmp_path / "r").exists()
