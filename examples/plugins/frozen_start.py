"""A deliberately bad startup, for docs/EVALUATE.md and tests/test_evaluate.py: two segments, and
no growth at all until a loss or a timeout ends the startup. ``startlab evaluate`` must find it
worse than slow start; if it did not, the benchmark would be broken.

    startlab evaluate frozen_start:FrozenStart --suite quick --report frozen-report
"""

import startlab
from startlab import Action


@startlab.startup("frozen-start", summary="IW 2 and no growth in startup (a deliberately worse contestant)", source="docs/EVALUATE.md")
class FrozenStart:
    """Two segments, and no growth until a loss or a timeout ends the startup."""

    def on_start(self, view):
        return Action(set_cwnd=2 * view.mss)  # an initial window of 2 segments

    def on_ack(self, view, ack):
        return Action(increase=0)  # never grows
