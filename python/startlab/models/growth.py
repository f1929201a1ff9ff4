"""Slow-start and Smooth-start times to reach ssthresh, without loss.

Sources: Wang, Xin, Reeves and Shin, "A Simple Refinement of Slow-start of TCP Congestion
Control" (Smooth-start), §3 (slow-start time), §4 (ExtraRTTs, Table 1) and §5 (the larger
initial window remark), as restated in shared/spec/ALGORITHMS.md §6.8; the delayed-ACK growth
factor ``γ = 1 + 1/b`` is the one of Scharf's models (§18.1).

Symbols (windows in segments, times in seconds):

- ``ssthresh``: the slow-start threshold; ``w``: the initial window; ``rtt``: the round-trip
  time, taken constant.
- ``b``: segments acknowledged per ACK (1: every segment, 2: delayed ACKs); ``γ = 1 + 1/b`` is
  the per-RTT growth factor of slow start.
- ``k``: Smooth-start's grain number (RTTs per smoothed doubling, ``k − 1`` lag points);
  ``d``: its depth number (doublings smoothed, separator ``smsthresh = ssthresh/2^d``).

These are fluid round counts: ``log`` is not rounded up (ALGORITHMS.md §6.8 gives
``0.1·log2(20) = 0.4322`` s), so a threshold that is not a power of the growth factor takes a
fractional number of rounds. A real, integer window can take one more round (§6.7).
"""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

ArrayLike = Union[float, npt.ArrayLike]


def slow_start_rounds(
    ssthresh: ArrayLike, w: ArrayLike = 1, b: ArrayLike = 1
) -> np.ndarray | np.float64:
    """Rounds of slow start for the window to grow from ``w`` to ``ssthresh``:
    ``log_γ(ssthresh/w)`` with ``γ = 1 + 1/b``, and 0 when ``w >= ssthresh``.

    With ``w = b = 1`` this is the paper's ``log2(ssthresh)``. Vectorised over all arguments.
    """
    thresh, init, gamma = _slow_start_args(ssthresh, w, b)
    return np.maximum(np.log(thresh / init) / np.log(gamma), 0.0)[()]


def slow_start_time(
    ssthresh: ArrayLike, rtt: ArrayLike, w: ArrayLike = 1, b: ArrayLike = 1
) -> np.ndarray | np.float64:
    """Slow-start time (s) to reach ``ssthresh``: ``RTT·log_γ(ssthresh/w)``, γ = 1 + 1/b.

    ``w = b = 1`` gives the paper's ``RTT·log2(ssthresh)`` (per-packet ACKs, IW = 1, no loss).
    """
    return (_rtt(rtt) * slow_start_rounds(ssthresh, w, b))[()]


def smooth_start_extra_rtts(d: ArrayLike, k: ArrayLike) -> np.ndarray | np.int64:
    """ExtraRTTs of Smooth-start over slow start: ``d·(k − 1)`` (each of the ``d`` smoothed
    doublings takes ``k`` RTTs instead of one). Table 1: Coarse-2 (k=2, d=1) 1, Fine-2 (k=3, d=1)
    2, Coarse-4 (k=2, d=2) 2, Fine-4 (k=3, d=2) 4; ``k = 1`` or ``d = 0`` is slow start."""
    depth, grain = _smooth_args(d, k)
    return (depth * (grain - 1))[()]


def smooth_start_time(
    ssthresh: ArrayLike,
    rtt: ArrayLike,
    d: ArrayLike,
    k: ArrayLike,
    w: ArrayLike = 1,
    *,
    saved_rtts: ArrayLike = 0,
) -> np.ndarray | np.float64:
    """Smooth-start time (s) to reach ``ssthresh`` with per-packet ACKs and no loss:
    ``RTT·log2(ssthresh/w) + d·(k − 1)·RTT − saved_rtts·RTT`` (floored at 0).

    With ``w = 1`` and ``saved_rtts = 0`` this is the paper's
    ``RTT·log2(ssthresh) + d(k − 1)RTT``. ``saved_rtts = 3`` is the paper's literal §5 formula
    ``… − 3RTT`` for a 4 KB initial window (the saving, "up to 3 RTTs", is quoted from Allman et
    al.'s measurements rather than derived). A larger initial window can instead be modelled by
    ``w``: it saves ``log2(w)`` RTTs of the pouring sub-phase, so ``w = 8`` equals
    ``saved_rtts = 3`` whenever ``8 <= ssthresh/2^d``.

    The initial window must not exceed the separator, ``w <= ssthresh/2^d`` (the pouring sub-phase
    is not negative); above it the probing sub-phase starts part-way through a doubling and
    ``d(k − 1)`` no longer counts the extra RTTs. Vectorised over all arguments.
    """
    thresh, init, _ = _slow_start_args(ssthresh, w, 1)
    depth, grain = _smooth_args(d, k)
    if np.any(init > thresh / 2.0**depth):
        raise ValueError(f"w = {w}: expected an initial window w <= ssthresh/2^d (the separator)")
    saved = np.asarray(saved_rtts, dtype=np.float64)
    if np.any(~np.isfinite(saved)) or np.any(saved < 0):
        raise ValueError(
            f"saved_rtts = {saved_rtts}: expected a saving of 0 <= saved_rtts < inf RTTs"
        )
    rounds = np.log2(thresh / init) + depth * (grain - 1) - saved
    return (_rtt(rtt) * np.maximum(rounds, 0.0))[()]


def _slow_start_args(
    ssthresh: ArrayLike, w: ArrayLike, b: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    thresh = np.asarray(ssthresh, dtype=np.float64)
    if np.any(~np.isfinite(thresh)) or np.any(thresh <= 0):
        raise ValueError(
            f"ssthresh = {ssthresh}: expected a finite threshold, 0 < ssthresh < inf segments"
        )
    init = np.asarray(w, dtype=np.float64)
    if np.any(~np.isfinite(init)) or np.any(init <= 0):
        raise ValueError(f"w = {w}: expected an initial window, 0 < w < inf segments")
    acked = np.asarray(b, dtype=np.float64)
    if np.any(~np.isfinite(acked)) or np.any(acked <= 0):
        raise ValueError(f"b = {b}: expected segments per ACK, 0 < b < inf")
    return thresh, init, 1.0 + 1.0 / acked


def _smooth_args(d: ArrayLike, k: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    depth = np.asarray(d)
    if depth.dtype.kind not in "iu" and not (
        depth.dtype.kind == "f" and np.all(np.isfinite(depth)) and np.all(depth == np.round(depth))
    ):
        raise ValueError(f"d = {d}: expected a depth number, an integer d >= 0")
    if np.any(depth < 0):
        raise ValueError(f"d = {d}: expected a depth number, an integer d >= 0")
    grain = np.asarray(k)
    if grain.dtype.kind not in "iu" and not (
        grain.dtype.kind == "f" and np.all(np.isfinite(grain)) and np.all(grain == np.round(grain))
    ):
        raise ValueError(f"k = {k}: expected a grain number, an integer k >= 1")
    if np.any(grain < 1):
        raise ValueError(f"k = {k}: expected a grain number, an integer k >= 1")
    return depth.astype(np.int64), grain.astype(np.int64)


def _rtt(rtt: ArrayLike) -> np.ndarray:
    r = np.asarray(rtt, dtype=np.float64)
    if np.any(~np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"rtt = {rtt}: expected a round-trip time, 0 <= rtt < inf s")
    return r
