"""Python startup plug-ins (docs/OWN-ALGORITHM.md): a class registered with
``@startlab.startup`` runs inside the simulator, hook for hook like a Rust algorithm; the
tutorial's Limited Slow-Start gives the built-in ``lss``'s cwnd trace exactly; a plug-in that
fails stops the run with ``PluginError`` naming it, the hook and the simulated time."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import startlab
from startlab import Action, Param
from startlab.cli import cli

from test_sweeps import write

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "examples" / "plugins"

#: A short single-flow path whose slow start overshoots a small buffer (loss, recovery, CA).
PATH = """\
seed = 1
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = { kind = "droptail", limit = "20pkt" }
[[flows]]
name = "f"
tcp = { recovery = "sack", mss = "1000B", initial_window = 2 }
startup = { algorithm = "slow-start" }
size = "infinite"
"""


def with_startup(table: str, extra: str = "") -> str:
    return extra + PATH.replace('startup = { algorithm = "slow-start" }', f"startup = {table}")


@pytest.fixture(scope="module")
def lss_py() -> Any:
    sys.path.insert(0, str(PLUGINS))
    try:
        return importlib.import_module("lss_py")
    finally:
        sys.path.remove(str(PLUGINS))


def test_the_tutorials_limited_slow_start_traces_exactly_as_the_builtin(lss_py: Any) -> None:
    scenario = PLUGINS / "lss-py.toml"
    python = startlab.run(scenario, progress=False)
    rust = startlab.run(scenario, startup={"algorithm": "lss", "max_ssthresh": "100pkt"}, progress=False)
    assert python.flows["startup"].tolist() == ["lss-py"] and rust.flows["startup"].tolist() == ["lss"]
    a, b = python.traces.cwnd, rust.traces.cwnd
    assert len(a) > 10_000
    assert np.array_equal(a["time"].to_numpy(), b["time"].to_numpy())
    assert np.array_equal(a["cwnd"].to_numpy(), b["cwnd"].to_numpy()), "the Python LSS's cwnd differs from the built-in's"
    for column in ("su_time", "exit_reason", "exit_cwnd", "su_loss", "throughput"):
        assert python.flows[column].tolist() == rust.flows[column].tolist(), column
    # Above max_ssthresh, before startup ends, the window grows by less than a segment (1000 B) per
    # ACK: the limited phase ran.
    startup = a[a["time"] < python.flows["su_time"].iloc[0]]
    growth = np.diff(startup["cwnd"].to_numpy())
    assert ((growth > 0) & (growth < 1000)).sum() > 100


def test_a_class_passed_to_run_and_compare_runs_on_every_flow(lss_py: Any) -> None:
    result = startlab.run(PATH, startup=lss_py.LimitedSlowStart, progress=False)
    assert result.flows["startup"].tolist() == ["lss-py"]
    comparison = startlab.compare(PATH, ["lss", lss_py.LimitedSlowStart])
    flows = comparison.flows.set_index("variant")
    assert flows.loc["lss", "su_time"] == flows.loc["lss-py", "su_time"]


def test_same_scenario_same_results() -> None:
    @startlab.startup("test-half-growth")
    class HalfGrowth:
        def on_ack(self, view: Any, ack: Any) -> float:
            return 0.5 * min(ack.newly_acked, view.mss)

    runs = [startlab.run(with_startup('{ algorithm = "test-half-growth" }'), progress=False) for _ in range(2)]
    assert runs[0].flows.equals(runs[1].flows) and runs[0].traces.cwnd.equals(runs[1].traces.cwnd)
    slow = startlab.run(PATH, progress=False)
    assert runs[0].flows["su_time"].iloc[0] > slow.flows["su_time"].iloc[0], "half the growth should leave startup later"


def test_every_hook_is_called_with_its_view_and_event_and_report_adds_columns() -> None:
    calls: dict[str, int] = {}
    seen: dict[str, Any] = {}

    @startlab.startup("test-every-hook", params={"gain": Param.number(1.0, "growth per ACK in segments", between=(0.0, 4.0))})
    class EveryHook:
        """Slow start that records every hook it gets."""

        def __init__(self, params: Any) -> None:
            self.gain = params.gain

        def count(self, hook: str) -> None:
            calls[hook] = calls.get(hook, 0) + 1

        def on_start(self, view: Any) -> None:
            self.count("on_start")
            seen["start_view"] = (view.cwnd, view.mss, view.ssthresh, view.round)

        def on_ack(self, view: Any, ack: Any) -> Action:
            self.count("on_ack")
            seen.setdefault("ack", (ack.newly_acked, ack.ack_seq, ack.rtt, ack.acked_segments, ack.cwnd_limited))
            seen["min_rtt"] = view.min_rtt
            return Action(increase=self.gain * min(ack.newly_acked, view.mss))

        def on_congestion(self, view: Any, congestion: Any) -> None:
            self.count("on_congestion")
            seen.setdefault("congestion", (congestion.kind, congestion.enter_recovery, congestion.flight_size > 0))

        def loss_ssthresh(self, view: Any, congestion: Any, retransmitted: int) -> None:
            self.count("loss_ssthresh")

        def after_recovery(self, view: Any, retransmitted: int) -> None:
            self.count("after_recovery")

        def reopen(self, view: Any, ack: Any) -> None:
            self.count("reopen")

        def report(self) -> dict[str, Any]:
            return {"every_acks": calls.get("on_ack", 0), "every_state": "done"}

    result = startlab.run(with_startup('{ algorithm = "test-every-hook", gain = 1.0 }'), progress=False)
    for hook in ("on_start", "on_ack", "on_congestion", "loss_ssthresh", "after_recovery", "reopen"):
        assert calls.get(hook, 0) > 0, f"{hook} was never called"
    assert calls["on_start"] == 1 and calls["on_congestion"] >= 1
    assert seen["start_view"] == (2000.0, 1000, float("inf"), 0)
    newly, ack_seq, rtt, segments, limited = seen["ack"]
    # The default receiver delays its ACKs: the first covers both segments of the initial window.
    assert newly == 2000 and ack_seq == 2000 and 0.040 < rtt < 0.050 and segments == 2 and limited
    assert 0.040 < seen["min_rtt"] < 0.050
    assert seen["congestion"] == ("fast-retransmit", True, True)
    flow = result.flows.iloc[0]
    assert flow["every_state"] == "done" and flow["every_acks"] == calls["on_ack"]
    # The same gain as slow start's gives slow start's run.
    assert flow["su_time"] == startlab.run(PATH, progress=False).flows["su_time"].iloc[0]


def test_an_action_can_end_startup_and_set_the_window() -> None:
    @startlab.startup("test-exit-at-round-3")
    class ExitAtRound3:
        def on_ack(self, view: Any, ack: Any) -> Action | None:
            if view.round >= 3:
                return Action(exit="estimate", set_ssthresh=8 * view.mss, set_cwnd=8 * view.mss)
            return Action(increase=view.mss)

    flow = startlab.run(with_startup('{ algorithm = "test-exit-at-round-3" }'), progress=False).flows.iloc[0]
    assert flow["exit_reason"] == "estimate" and flow["su_loss"] == 0


def test_an_exception_in_a_hook_stops_the_run_naming_plugin_hook_and_time() -> None:
    @startlab.startup("test-raises")
    class Raises:
        def on_ack(self, view: Any, ack: Any) -> float:
            if view.round >= 4:
                raise ZeroDivisionError("round four")
            return float(view.mss)

    with pytest.raises(startlab.PluginError) as caught:
        startlab.run(with_startup('{ algorithm = "test-raises" }'), progress=False)
    message = str(caught.value)
    assert '"test-raises"' in message and "on_ack" in message and "round four" in message
    t = float(message.split("at t = ")[1].split(" s")[0])
    assert 0.1 < t < 0.5, message  # the fourth round of a 40 ms path
    cause = caught.value.__cause__
    assert isinstance(cause, ZeroDivisionError) and cause.__traceback__ is not None
    assert isinstance(caught.value, RuntimeError)


def test_a_failing_constructor_or_a_wrong_return_stops_the_run() -> None:
    @startlab.startup("test-bad-init", params={"x": Param.integer(1)})
    class BadInit:
        def __init__(self, params: Any) -> None:
            self.y = params.y  # not declared

        def on_ack(self, view: Any, ack: Any) -> None:
            return None

    with pytest.raises(startlab.PluginError, match=r'"test-bad-init" failed in __init__ while the simulation was built') as caught:
        startlab.run(with_startup('{ algorithm = "test-bad-init" }'), progress=False)
    assert isinstance(caught.value.__cause__, AttributeError) and "declares x" in str(caught.value.__cause__)

    @startlab.startup("test-bad-return")
    class BadReturn:
        def on_ack(self, view: Any, ack: Any) -> str:
            return "more"

    with pytest.raises(startlab.PluginError, match=r"on_ack returned 'more'; expected startlab.Action"):
        startlab.run(with_startup('{ algorithm = "test-bad-return" }'), progress=False)


def test_a_failed_simulation_does_not_run_on_and_the_next_run_is_clean() -> None:
    @startlab.startup("test-fails-once")
    class FailsOnce:
        def on_ack(self, view: Any, ack: Any) -> float:
            raise ValueError("always")

    from startlab import _core

    sim = _core.Simulation(with_startup('{ algorithm = "test-fails-once" }'))
    with pytest.raises(startlab.PluginError):
        sim.run()
    with pytest.raises(startlab.PluginError, match="always"):
        sim.run()
    assert not sim.finished
    # A healthy run on the same thread right after is not stopped by the earlier failure.
    assert startlab.run(PATH, progress=False).flows["su_time"].iloc[0] > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"exit": "bored"}, 'exit reason "bored" is not known; expected one of "ssthresh"'),
        ({"increase": float("nan")}, "increase = NaN is not a finite number"),
        ({"send_limit": "closed"}, "send_limit = closed is not valid"),
        ({"pacing_rate": -1.0}, "pacing_rate = -1 is not valid"),
    ],
)
def test_a_bad_action_is_refused_where_it_is_made(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Action(**kwargs)


def test_registration_refuses_what_it_cannot_run() -> None:
    with pytest.raises(ValueError, match='"hystart" is a built-in startup algorithm'):

        @startlab.startup("hystart")
        class Shadow:
            def on_ack(self, view: Any, ack: Any) -> None: ...

    with pytest.raises(TypeError, match="on_acks is not a hook; the hooks are on_ack"):

        @startlab.startup("test-typo")
        class Typo:
            def on_ack(self, view: Any, ack: Any) -> None: ...

            def on_acks(self, view: Any, ack: Any) -> None: ...

    with pytest.raises(TypeError, match="defines no on_ack"):

        @startlab.startup("test-no-on-ack")
        class NoOnAck:
            pass

    with pytest.raises(ValueError, match='parameter "w": the default 5pkt is outside its own range'):

        @startlab.startup("test-bad-default", params={"w": Param.window("5pkt", above=10_000)})
        class BadDefault:
            def on_ack(self, view: Any, ack: Any) -> None: ...


def test_a_scenario_checks_a_plugins_parameters_like_a_builtins() -> None:
    @startlab.startup("test-ranged", params={"gain": Param.number(1.0, between=(0.5, 2.0)), "mode": Param.choice(["a", "b"], "a")})
    class Ranged:
        def on_ack(self, view: Any, ack: Any) -> None: ...

    with pytest.raises(startlab.ScenarioError, match=r"flows\[0\].startup.gain: 3 is out of range; expected from 0.5 to 2"):
        startlab.validate(with_startup('{ algorithm = "test-ranged", gain = 3 }'))
    with pytest.raises(startlab.ScenarioError, match=r"flows\[0\].startup.mode: .* expected one of \"a\", \"b\""):
        startlab.validate(with_startup('{ algorithm = "test-ranged", mode = "c" }'))
    with pytest.raises(startlab.ScenarioError, match=r"flows\[0\].startup.gian: is not a parameter of \"test-ranged\" \(it takes gain, mode\)"):
        startlab.validate(with_startup('{ algorithm = "test-ranged", gian = 1 }'))
    listed = {a["name"]: a for a in startlab.algorithms()}
    assert listed["test-ranged"]["plugin"] and not listed["lss"]["plugin"]
    assert [p["name"] for p in listed["test-ranged"]["params"]] == ["gain", "mode"]


def test_an_unknown_algorithm_points_at_plugins() -> None:
    with pytest.raises(startlab.ScenarioError, match="list it in the scenario's plugins"):
        startlab.validate(with_startup('{ algorithm = "nowhere-start" }'))


def test_a_scenario_imports_its_plugins_from_its_own_directory(tmp_path: Path) -> None:
    (tmp_path / "my_local_start.py").write_text(
        "import startlab\n"
        "@startlab.startup('test-local-start')\n"
        "class Local:\n"
        "    def on_ack(self, view, ack):\n"
        "        return min(ack.newly_acked, view.mss)\n"
    )
    scenario = write(tmp_path, with_startup('{ algorithm = "test-local-start" }', 'plugins = ["my_local_start"]\n'), "s.toml")
    assert startlab.run(scenario, progress=False).flows["startup"].tolist() == ["test-local-start"]
    assert startlab.normalize(scenario)["plugins"] == ["my_local_start"]
    missing = write(tmp_path, with_startup('{ algorithm = "slow-start" }', 'plugins = ["no_such_module_here"]\n'), "m.toml")
    with pytest.raises(startlab.ScenarioError, match=r"plugins\[0\]: cannot import 'no_such_module_here': ModuleNotFoundError"):
        startlab.run(missing, progress=False)
    bad = write(tmp_path, with_startup('{ algorithm = "slow-start" }', 'plugins = ["not a module"]\n'), "b.toml")
    with pytest.raises(startlab.ScenarioError, match=r"plugins\[0\]"):
        startlab.validate(bad)


def test_a_sweep_runs_a_plugin_in_worker_processes(tmp_path: Path) -> None:
    (tmp_path / "sweep_start.py").write_text(
        "import startlab\n"
        "@startlab.startup('test-sweep-start', params={'gain': startlab.Param.number(1.0)})\n"
        "class Gain:\n"
        "    def __init__(self, params):\n"
        "        self.gain = params.gain\n"
        "    def on_ack(self, view, ack):\n"
        "        return self.gain * min(ack.newly_acked, view.mss)\n"
    )
    base = "\n".join(
        line.replace("[", "[base.", 1) if line.startswith("[") and not line.startswith("[[") else line.replace("[[", "[[base.", 1)
        for line in with_startup('{ algorithm = "test-sweep-start" }').splitlines()
    )
    text = f"""\
[sweep]
name = "plugin"
seed = 3
replicates = 1

[[axis]]
name = "gain"
key = "flows[*].startup.gain"
values = [0.5, 1.0]

[base]
plugins = ["sweep_start"]
{base}
"""
    with startlab.sweep(write(tmp_path, text), jobs=2, progress=False) as results:
        runs = results.runs()
        flows = results.flows()
    assert (runs["status"] == "ok").all(), runs["error"].tolist()
    assert sorted(flows["startup"]) == ["test-sweep-start", "test-sweep-start"]
    by_gain = dict(zip(runs.sort_values("key")["gain"], flows.sort_values("key")["su_time"]))
    assert by_gain[0.5] > by_gain[1.0]


def test_the_cli_runs_a_plugin_module_and_shows_a_failure_with_its_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cli_starts.py").write_text(
        "import startlab\n"
        "@startlab.startup('test-cli-ok')\n"
        "class Ok:\n"
        "    def on_ack(self, view, ack):\n"
        "        return min(ack.newly_acked, view.mss)\n"
        "@startlab.startup('test-cli-fails')\n"
        "class Fails:\n"
        "    def on_ack(self, view, ack):\n"
        "        return helper()\n"
        "def helper():\n"
        "    raise RuntimeError('from the plug-in')\n"
    )
    scenario = write(tmp_path, with_startup('{ algorithm = "test-cli-ok" }'), "s.toml")
    monkeypatch.chdir(tmp_path)
    ok = CliRunner().invoke(cli, ["run", str(scenario), "--plugin", "cli_starts", "--json", "--no-progress"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["flows"][0]["startup"] == "test-cli-ok"
    listed = CliRunner().invoke(cli, ["algorithms", "--plugin", "cli_starts", "--json"])
    assert {"test-cli-ok", "test-cli-fails"} <= {a["name"] for a in json.loads(listed.stdout)}
    failed = CliRunner().invoke(cli, ["run", str(scenario), "--plugin", "cli_starts", "--compare", "test-cli-fails", "--no-progress"])
    assert failed.exit_code == 4
    assert 'startup plug-in "test-cli-fails" failed in on_ack at t = ' in failed.stderr
    assert "in helper" in failed.stderr and "RuntimeError: from the plug-in" in failed.stderr
    assert "Traceback" in failed.stderr and "startlab/cli.py" not in failed.stderr
    missing = CliRunner().invoke(cli, ["algorithms", "--plugin", "no_such_plugin_module"])
    assert missing.exit_code == 2 and "cannot import 'no_such_plugin_module'" in missing.stderr


def test_the_tutorials_code_is_the_example_and_its_new_idea_runs() -> None:
    doc = (ROOT / "docs" / "OWN-ALGORITHM.md").read_text(encoding="utf-8")
    lss = doc.split("```python\n")[1].split("```")[0]
    idea = doc.split("## 4. A new idea")[1].split("```python\n")[1].split("```")[0]
    assert lss in (PLUGINS / "lss_py.py").read_text(encoding="utf-8"), "docs/OWN-ALGORITHM.md's LSS is not examples/plugins/lss_py.py's"
    namespace: dict[str, Any] = {}
    exec(compile(idea, "OWN-ALGORITHM.md", "exec"), namespace)
    comparison = startlab.compare(PATH.replace('"2s"', '"1s"'), ["slow-start", "median-exit"])
    flows = comparison.flows.set_index("variant")
    assert flows.loc["median-exit", "exit_reason"] in ("delay-increase", "loss")
