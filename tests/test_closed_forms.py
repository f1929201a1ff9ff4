"""The simulator against closed forms where their assumptions hold, and the paper behaviour the
default example must show."""

from __future__ import annotations

from pathlib import Path

import pytest

import startlab
from startlab.models.scharf import t_ss

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "paced-start-default.toml"

SCHARF_PATH = """\
seed = 1
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "200ms"
access_rate = "10Gbps"
queue = {{ kind = "droptail", limit = "100000pkt" }}
[[flows]]
name = "f"
size = "{size}B"
tcp = {{ mss = "1448B", header = "52B", initial_window = {w}, ack = "every-packet" }}
"""


@pytest.mark.parametrize("w", [1, 3, 10])
@pytest.mark.parametrize("size", [10_000, 100_000, 1_000_000, 2_000_000])
def test_a_transfer_takes_scharfs_slow_start_time(size: int, w: int) -> None:
    """Scharf eq. (1)-(2) on his path (10 Mbit/s, 200 ms, MTU 1500, L = 1448, b = 1, no loss).

    T_SS counts from the first data segment and leaves out the propagation of the last byte to the
    receiver and of its ACK back (ALGORITHMS.md §18.1 adds tau for a response time). The simulator's
    completion time ends when that ACK reaches the sender, so completion time = T_SS + tau.
    """
    result = startlab.run(SCHARF_PATH.format(size=size, w=w), progress=False)
    flow = result.flows.iloc[0]
    assert flow.completed and flow.drops == 0
    simulated = flow.completion_time - 0.2
    model = float(t_ss(size, r=10e6, tau=0.2, w=w, b=1))
    assert simulated == pytest.approx(model, rel=0.02), f"simulated {simulated:.4f} s vs T_SS {model:.4f} s"


def test_slow_start_on_the_paced_start_default_path_overflows_the_queue() -> None:
    """The paper's Figure 8 observation for Sack: slow start with a huge initial ssthresh overshoots
    the 1000-packet queue and loses a large share of its startup packets."""
    result = startlab.run(EXAMPLE, progress=False)
    flow = result.flows.iloc[0]
    assert flow.exit_reason == "loss"
    assert flow.su_loss > 0.02, f"startup loss {flow.su_loss:.3%} should be large"
    assert flow.overshoot > 2, "cwnd at exit is several times the BDP"
    assert flow.early_peak_queue >= 500, "the queue builds up within the first RTTs"
    bottleneck = result.links.set_index("link").loc["bottleneck:left->right"]
    assert bottleneck.max_queue == 1000 and bottleneck.drops > 1000
