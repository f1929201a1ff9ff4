"""Quick-Start against Scharf's T_QS on his path (10 Mbit/s, 200 ms, MTU 1500, L = 1448, b = 1),
with a buffer large enough that nothing is lost. The request (10 Mbit/s, rounded down to the code
point 5.12 Mbit/s) rides on the SYN and both routers approve it.

T_QS(s) = T_Paced(s) + tau counts the signalling RTT once. The simulated flow's completion time
runs from its first data segment (right after the SYN/SYN-ACK exchange, which is the signalling RTT)
to the ACK of its last byte, i.e. T_Paced(s) plus the last segment's RTT: the same sum, with the
final RTT standing in for the signalling one."""

from __future__ import annotations

import pytest
import startlab
from startlab.check import scharf_path
from startlab.models import t_qs

#: Quick-Start asking for the path rate (the routers approve 5.12 Mb/s on an idle path).
QS = 'algorithm = "quick-start", rate = "10Mbps"'



@pytest.mark.parametrize("size", [20_000, 100_000, 1_000_000, 2_000_000])
def test_quick_start_on_an_idle_path_follows_t_qs(size: int) -> None:
    flow = startlab.run(scharf_path(size, QS), progress=False).flows.iloc[0]
    assert flow.completed and flow.drops == 0
    assert flow.qs_outcome == "approved"
    assert flow.qs_approved == pytest.approx(5.12e6)
    model = float(t_qs(size, r=10e6, tau=0.2, q=5.12e6))
    assert float(flow.completion_time) == pytest.approx(model, rel=0.03)


def test_a_denied_request_is_slow_start() -> None:
    """Behind 9.95 Mbit/s of CBR the request is denied; the flow's completion time is then the
    same as a slow-start flow's on the same path."""
    cross = '[[cross]]\nkind = "cbr"\nrate = "9.95Mbps"\npacket_size = "1500B"\n'
    text = scharf_path(20_000, QS).replace('name = "f"', 'name = "f"\nstart = "2s"') + cross
    qs = startlab.run(text, progress=False).flows.iloc[0]
    assert qs.qs_outcome == "denied" and qs.qs_approved == 0
    ss = startlab.run(text.replace('algorithm = "quick-start", rate = "10Mbps"', 'algorithm = "slow-start"'), progress=False)
    assert float(qs.completion_time) == pytest.approx(float(ss.flows.iloc[0].completion_time), rel=0.02)
