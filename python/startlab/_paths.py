"""Each flow's path through the network, for the reference lines of the figures.

The simulator reports a flow's BDP and base RTT (docs/RESULTS.md) but not which link direction is
its bottleneck, whose buffer the cwnd figure draws above the BDP. This module follows the
simulator's routing rule (docs/SCENARIOS.md, "Routing"; ``Routes::shortest`` in
crates/startlab-sim/src/net.rs) over the links table, and picks the bottleneck as the simulator
does when it computes ``available_rate``: the slowest direction of the forward path, the
lowest-numbered among equals. tests/test_plots.py holds the two together: the base RTT summed
along every path found equals the flow's ``base_rtt`` column.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def hosts(scenario: Mapping[str, Any]) -> set[str]:
    """The nodes that end paths but never forward: a graph's hosts (a resolved graph lists its
    ``hosts`` first among ``nodes``). A dumbbell's hosts are leaves, which no path can cross, so
    the empty set serves it."""
    topology = scenario.get("topology", {})
    if topology.get("kind") == "graph":
        return set(topology["nodes"][: topology["hosts"]])
    return set()


class Routes:
    """The routes of the network of a links table (the results' ``links``, in the simulator's
    direction order), computed per destination on first use."""

    def __init__(self, links: pd.DataFrame, hosts: Collection[str]) -> None:
        self._hosts = set(hosts)
        # Integer nanoseconds, as the simulator sums them (the table holds seconds).
        self._delay = [round(d * 1e9) for d in links["delay"]]
        self._from, self._to = list(links["from"]), list(links["to"])
        self._incoming: dict[str, list[int]] = defaultdict(list)
        for c, node in enumerate(self._to):
            self._incoming[node].append(c)
        self._towards: dict[str, dict[str, int]] = {}

    def path(self, src: str, dst: str) -> list[int] | None:
        """Positions in the links table of the directions a packet from ``src`` to ``dst``
        crosses, None without a route."""
        via = self._towards.get(dst)
        if via is None:
            via = self._towards[dst] = self._next_hops(dst)
        path, at = [], src
        while at != dst:
            if at not in via or len(path) > len(self._to):
                return None
            path.append(via[at])
            at = self._to[via[at]]
        return path

    def _next_hops(self, dst: str) -> dict[str, int]:
        """The direction each node sends on towards ``dst``: the least total propagation delay,
        then the fewest hops, then the lowest-numbered direction; hosts other than ``dst`` do not
        forward."""
        best: dict[str, tuple[int, int]] = {dst: (0, 0)}
        via: dict[str, int] = {}
        heap = [((0, 0), dst)]
        while heap:
            distance, node = heapq.heappop(heap)
            if distance > best[node] or (node != dst and node in self._hosts):
                continue
            for c in self._incoming[node]:
                before = self._from[c]
                candidate = (distance[0] + self._delay[c], distance[1] + 1)
                if before not in best or candidate < best[before] or (candidate == best[before] and c < via[before]):
                    best[before], via[before] = candidate, c
                    heapq.heappush(heap, (candidate, before))
        return via


def bottleneck(links: pd.DataFrame, path: list[int]) -> int:
    """The position in ``links`` of the slowest direction of ``path`` (the lowest-numbered among
    equally slow ones): the simulator's bottleneck of a flow."""
    rates = list(links["rate"])
    return min(path, key=lambda c: (rates[c], c))
