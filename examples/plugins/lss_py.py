"""Limited Slow-Start (RFC 3742) as a Python plug-in: the tutorial of docs/OWN-ALGORITHM.md.

Its cwnd trace is the built-in ``lss``'s, ACK for ACK (tests/test_plugins.py checks it)."""

import math

import startlab
from startlab import Action, Param


@startlab.startup("lss-py", params={"max_ssthresh": Param.window("100pkt", "above this window, about max_ssthresh/2 segments per RTT", above=0)})
class LimitedSlowStart:
    """Limited Slow-Start in Python: slow start up to max_ssthresh, then int(SMSS/K) per ACK."""

    def __init__(self, params):
        self.max_ssthresh = params.max_ssthresh  # bytes

    def on_ack(self, view, ack):
        if view.cwnd <= self.max_ssthresh:
            return Action(increase=min(ack.newly_acked, view.mss))  # standard slow start
        k = math.floor(view.cwnd / (0.5 * self.max_ssthresh))  # K = int(cwnd / (0.5 max_ssthresh))
        return Action(increase=view.mss // max(k, 1))  # cwnd += int(MSS / K)
