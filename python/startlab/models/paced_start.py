"""Paced Start's gap-estimation model: the PTR response F, G, the binary-search tree of Figure 5
and the five exit cases of Table 2.

Source: N. Hu and P. Steenkiste, "Improving TCP Startup Performance using Active Measurements",
ICNP 2003, §3.2.3, Table 2 and Figure 5, as made explicit in shared/spec/ALGORITHMS.md §7.5 and
§7.10.

Symbols (the paper's Table 1; gaps are in units of ``g_B``):

- ``alpha``: α, the available bandwidth as a fraction of the capacity ``B``, ``0 < α ≤ 1``.
- ``g_B = packetLen / B``: the bottleneck gap of one packet (1 here).
- ``g_s``, ``g_d``: source and destination gaps of a train.
- ``F(g) = g_B + (1 − α)·g``: the destination gap of a train sent at gap ``g`` faster than the
  available rate (when ``F(g) ≤ g`` the train is not slowed: ``g_d = g``); ``G(g) = F(2g)``.
- ``epsilon``: ε, the lab's tolerance (ALGORITHMS.md §7.4): queueing is ``g_d > g_s·(1 + ε)``;
  ε = 0 is the paper's idealised tree.

The exit gap ``g_PaSt`` and the overshoot ratio ``(1/α)/g_PaSt`` (the sending rate over the
available rate when PaSt switches to congestion avoidance) follow from the tree.
"""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

ArrayLike = Union[float, npt.ArrayLike]

#: Table 2: case -> (α range, ``(1/α)/g_PaSt`` range) as the paper prints them.
TABLE2 = {
    1: ((0.75, 1.0), (0.9, 1.2)),
    2: ((0.5, 0.75), (1.0, 1.2)),
    3: ((0.19, 0.5), (1.0, 2.0)),
    4: ((0.08, 0.19), (1.0, 2.0)),
    5: ((0.0, 0.08), (0.5, np.inf)),
}


def f(g: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """``g_d`` of a train sent at gap ``g`` (units of ``g_B``): ``max(g, 1 + (1 − α)·g)``."""
    g, a = np.asarray(g, dtype=float), _alpha(alpha)
    return np.maximum(g, 1.0 + (1.0 - a) * g)


def walk(alpha: float, epsilon: float = 0.0) -> tuple[int, float, list[float]]:
    """The decision tree of Figure 5 for one α: (exit case, ``g_PaSt``, probe gaps ``g_s``).

    Train 1 (the pair) measures ``g_B = 1``; trains 2–4 probe at the gaps returned.
    """
    a = float(_alpha(alpha))
    if epsilon < 0:
        raise ValueError(f"epsilon = {epsilon}: expected a tolerance of at least 0")

    def queued(g_s: float) -> tuple[bool, float]:
        g_d = float(f(g_s, a))
        return g_d > g_s * (1.0 + epsilon), g_d

    probes = [2.0]
    q, g1 = queued(2.0)
    if not q:
        probes.append(4.0 / 3.0)
        q, g_d = queued(4.0 / 3.0)
        return (2, g_d, probes) if q else (1, 8.0 / 7.0, probes)
    probes.append(2.0 * g1)
    q, g2 = queued(2.0 * g1)
    if not q:
        return 3, g1, probes
    probes.append(2.0 * g2)
    q, g_d = queued(2.0 * g2)
    return (5, 2.0 * g_d, probes) if q else (4, g2, probes)


def exit_case(alpha: ArrayLike, epsilon: float = 0.0) -> np.ndarray:
    """Table 2's exit case (1–5) for each α."""
    return np.vectorize(lambda a: walk(a, epsilon)[0], otypes=[int])(alpha)


def exit_gap(alpha: ArrayLike, epsilon: float = 0.0) -> np.ndarray:
    """``g_PaSt / g_B`` for each α (Table 2's closed forms when ε = 0)."""
    return np.vectorize(lambda a: walk(a, epsilon)[1], otypes=[float])(alpha)


def overshoot(alpha: ArrayLike, epsilon: float = 0.0) -> np.ndarray:
    """``(1/α) / g_PaSt``: the exit sending rate over the available rate."""
    return 1.0 / _alpha(alpha) / exit_gap(alpha, epsilon)


def boundaries(epsilon: float = 0.0) -> list[float]:
    """The α where the exit case changes (case 5|4, 4|3, 3|2, 2|1), by bisection on the tree.

    ε = 0 gives 0.080357, (6 − √20)/8 = 0.190983, 0.5 and 0.75; ε = 0.05 gives 0.024, 0.133,
    0.45 and 0.70.
    """
    out = []
    for case in (5, 4, 3, 2):
        lo, hi = 1e-9, 1.0
        # exit_case decreases as α grows; find the last α still in `case` or below.
        for _ in range(80):
            mid = (lo + hi) / 2
            if walk(mid, epsilon)[0] >= case:
                lo = mid
            else:
                hi = mid
        out.append(hi)
    return out


def _alpha(alpha: ArrayLike) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a <= 0) or np.any(a > 1):
        raise ValueError(f"alpha = {alpha}: expected the available fraction of the capacity, 0 < alpha <= 1")
    return a
