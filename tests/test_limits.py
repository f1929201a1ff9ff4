"""Per-run resource guards of ``startlab.run``: events, simulated time, memory."""

from __future__ import annotations

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
    traced = SCENARIO.replace('duration = "20s"', 'duration = "60s"')
    with pytest.raises(startlab.ResourceLimitError, match="grew the process by [0-9]+ MiB, more than the limit max_memory = 1 MiB"):
        startlab.run(traced, progress=False, max_memory=2**20)
    # The interpreter's own size (well above 64 MiB with NumPy and pandas) does not count.
    assert len(startlab.run(SCENARIO, progress=False, max_memory=64 * 2**20).flows) == 1


@pytest.mark.parametrize("name", ["max_events", "max_sim_time", "max_memory"])
def test_limits_must_be_positive(name: str) -> None:
    with pytest.raises(ValueError, match=name):
        startlab.run(SCENARIO, progress=False, **{name: 0})
