"""Fast startups against Scharf's paced models on his path (10 Mbit/s, 200 ms, MTU 1500, L = 1448,
b = 1), with a buffer large enough that nothing is lost: the completion time (first data segment
to the ACK of the last byte) is the model's transfer time plus one RTT, as for T_SS."""

from __future__ import annotations

import pytest
import startlab
from startlab.check import scharf_path
from startlab.models import t_is, t_js, t_ms


def completion(size: int, startup: str) -> float:
    flow = startlab.run(scharf_path(size, startup), progress=False).flows.iloc[0]
    assert flow.completed and flow.drops == 0
    return float(flow.completion_time)


@pytest.mark.parametrize("size", [20_000, 65_536, 200_000, 1_000_000])
def test_jump_start_follows_t_js(size: int) -> None:
    """The model's first RTT is a fluid of rate min(s, u)/tau; the simulator sends whole segments
    one pacing gap (tau·L/min(s, u)) apart starting at once, so the last one leaves a gap before
    the fluid would end: the tolerance is that gap (14 ms for s = 20 kB) plus 5 ms."""
    simulated = completion(size, 'algorithm = "jump-start", u = "64KiB"') - 0.2
    model = float(t_js(size, r=10e6, tau=0.2, u=65_536))
    gap = 0.2 * 1448 / min(size, 65_536)
    assert simulated == pytest.approx(model, rel=0.03, abs=gap + 0.005)


@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_more_start_at_the_path_rate_follows_t_ms(size: int) -> None:
    simulated = completion(size, 'algorithm = "more-start", rate = 10000000') - 0.2
    model = float(t_ms(size, r=10e6, tau=0.2, q=10e6))
    assert simulated == pytest.approx(model, rel=0.03, abs=0.005)


@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_initial_start_with_83_segments_follows_t_is(size: int) -> None:
    simulated = completion(size, 'algorithm = "initial-start", initial_window = "83pkt"') - 0.2
    model = float(t_is(size, r=10e6, tau=0.2, w=83))
    assert simulated == pytest.approx(model, rel=0.03, abs=0.005)
