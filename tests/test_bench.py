"""The benchmark's scenarios are accepted by the simulator (running them is `startlab bench`)."""

from __future__ import annotations

import pytest

import startlab
from startlab import bench


@pytest.mark.parametrize("name", bench.names(quick=False))
def test_every_benchmark_scenario_is_valid(name: str) -> None:
    startlab.validate(bench.scenario(name, quick=False))


def test_the_dumbbell_buffer_is_one_bdp_in_packets() -> None:
    # 1 Gbit/s × 50 ms / 8 / 1500 B = 4166.7 packets, rounded up.
    assert 'limit = "4167pkt"' in bench.dumbbell(10, "2s")


def test_quick_runs_fewer_flows_for_less_time() -> None:
    assert bench.names(quick=True) == [
        "paced-start-default",
        "paced-start-fig11",
        "paced-start-parking-lot",
        "dumbbell-n10",
        "dumbbell-n100",
    ]
    assert 'duration = "2s"' in bench.scenario("dumbbell-n100", quick=True)
