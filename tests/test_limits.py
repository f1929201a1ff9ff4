"""Per-run resource guards of ``startlab.run``: events, simulated time, memory, wall time."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import startlab

SCENARIO = """\
seed = 1
duration = "20s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "50ms"
access_rate = "1Gbps"
queue = { kind = "droptail", limit = "50pkt" }
[[flows]]
name = "f"
size = "infinite"
"""


def test_an_event_limit_stops_the_run_with_a_clear_error() -> None:
    full = startlab.run(SCENARIO, progress=False)
    events = int(full.stats["events"])
    with pytest.raises(startlab.ResourceLimitError, match=r"max_events = 1000 events, at [0-9.]+ s of 20 s"):
        startlab.run(SCENARIO, progress=False, max_events=1000)
    # A limit the run stays within changes nothing.
    same = startlab.run(SCENARIO, progress=False, max_events=events)
    assert same.flows.equals(full.flows)
    with pytest.raises(startlab.ResourceLimitError):
        startlab.run(SCENARIO, progress=False, max_events=events - 1)


def test_a_simulated_time_limit_refuses_the_scenario_before_it_runs() -> None:
    with pytest.raises(startlab.ResourceLimitError, match=r"lasts 20 s .* max_sim_time = 5 s"):
        startlab.run(SCENARIO, progress=False, max_sim_time=5)
    assert len(startlab.run(SCENARIO, progress=False, max_sim_time=20).flows) == 1


def test_a_memory_limit_counts_what_the_run_adds_to_the_process() -> None:
    # In a fresh interpreter: in this one, memory the earlier tests freed stays resident and the
    # allocator hands it out again, so the run's traces need not grow the resident set at all
    # (the CI failure of 2026-11-24: "DID NOT RAISE", with every other test before it).
    import subprocess
    import sys

    traced = SCENARIO.replace('duration = "20s"', 'duration = "60s"')
    code = (
        "import sys, startlab\n"
        "try:\n"
        f"    startlab.run({traced!r}, progress=False, max_memory=2**20)\n"
        "except startlab.ResourceLimitError as e:\n"
        "    print(e); sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    assert re.search("grew the process by [0-9]+ MiB, more than the limit max_memory = 1 MiB", done.stdout), done.stdout
    # The interpreter's own size (well above 64 MiB with NumPy and pandas) does not count.
    assert len(startlab.run(SCENARIO, progress=False, max_memory=64 * 2**20).flows) == 1


@pytest.mark.parametrize("name", ["max_events", "max_sim_time", "max_memory", "max_wall"])
def test_limits_must_be_positive(name: str) -> None:
    with pytest.raises(ValueError, match=name):
        startlab.run(SCENARIO, progress=False, **{name: 0})


#: SCENARIO ten times faster and 150 times longer: many seconds of wall time (some 90 million events).
LONG = SCENARIO.replace('duration = "20s"', 'duration = "3000s"').replace('"10Mbps"', '"100Mbps"')

DEFAULT = Path(__file__).resolve().parent.parent / "examples" / "paced-start-default.toml"


@pytest.mark.parametrize(
    "options",
    [{}, {"max_memory": 2**40}, {"progress": True}, {"max_events": 10**12}],
    ids=["alone", "with-max-memory", "with-progress-bar", "with-max-events"],
)
def test_a_wall_time_limit_stops_a_long_run_with_a_clear_error(options: dict[str, Any]) -> None:
    with pytest.raises(startlab.ResourceLimitError) as info:
        startlab.run(LONG, **{"progress": False, **options}, max_wall=0.2)
    message = str(info.value)
    found = re.fullmatch(
        r"the run stopped after max_wall = 0\.2 s of wall time, at ([0-9.e+]+) s of 3000 s simulated \(([0-9 ]+) events\)", message
    )
    assert found, message
    reached, events = float(found.group(1)), int(found.group(2).replace(" ", ""))
    assert 0 < reached < 1500, "stopped long before the end"
    assert events > 0


def test_a_run_within_its_wall_time_limit_gives_the_same_results() -> None:
    plain = startlab.run(DEFAULT, progress=False)
    for options in ({}, {"max_memory": 2**40}):
        limited = startlab.run(DEFAULT, progress=False, max_wall=1000, **options)
        assert limited.flows.equals(plain.flows) and limited.links.equals(plain.links)
        for kind in ("cwnd", "seq", "queue"):
            assert getattr(limited.traces, kind).equals(getattr(plain.traces, kind)), kind
        assert limited.stats == plain.stats
    # The chunks must not hide the user's event limit: it stops the run at the same event, and is
    # the limit reported.
    events = int(plain.stats["events"])
    assert events > 3 * 200_000, "the run spans several chunks of events"
    same = startlab.run(DEFAULT, progress=False, max_wall=1000, max_events=events)
    assert same.flows.equals(plain.flows)
    for stop in (events - 1, 450_000, 200_000):
        with pytest.raises(startlab.ResourceLimitError, match="max_events") as without:
            startlab.run(DEFAULT, progress=False, max_events=stop)
        with pytest.raises(startlab.ResourceLimitError, match="max_events") as within:
            startlab.run(DEFAULT, progress=False, max_events=stop, max_wall=1000)
        assert str(within.value) == str(without.value)


@pytest.mark.parametrize("value", [0, -1, 0.0, float("nan"), float("inf"), "30s", True, [1]])
def test_a_bad_wall_time_limit_is_refused_naming_what_is_accepted(value: object) -> None:
    with pytest.raises(ValueError, match=r"max_wall = .*: expected a positive, finite number of seconds"):
        startlab.run(SCENARIO, progress=False, max_wall=value)  # type: ignore[arg-type]


def test_startlab_run_stops_at_its_limit_with_exit_code_3_and_says_how_far_it_got(tmp_path: Path) -> None:
    import subprocess
    import sys

    scenario = Path(__file__).resolve().parent.parent / "examples" / "paced-start-default.toml"
    cmd = [sys.executable, "-m", "startlab", "run", str(scenario), "--json", "--no-progress"]
    stopped = subprocess.run([*cmd, "--max-events", "1000"], capture_output=True, text=True, timeout=120)
    assert stopped.returncode == 3, stopped.stderr
    assert "max_events = 1000" in stopped.stderr and "s of 50 s simulated" in stopped.stderr
    assert stopped.stdout == ""
    bad = subprocess.run([*cmd, "--max-wall", "soon"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "max_wall = 'soon'" in bad.stderr and "10min" in bad.stderr, bad.stderr
    within = subprocess.run([*cmd, "--max-wall", "10min", "--max-memory", "8GiB"], capture_output=True, text=True, timeout=120)
    plain = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert within.returncode == 0 and within.stdout == plain.stdout
