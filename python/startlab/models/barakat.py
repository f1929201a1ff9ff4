"""Barakat & Altman's model of the first slow start through a drop-tail bottleneck: the overflow
window (Theorem 1, eqs. 1-4), the window at detection and the threshold after recovery (eq. 5),
the multi-flow overflow window (eqs. 6-7), the buffer thresholds, Decreasing Byte Counting, and a
transfer-time model built on them.

Source: C. Barakat and E. Altman, "Performance of Short TCP Transfers", §2.2 (Theorem 1,
eqs. 1-4), §3, §4.1 (eq. 5), §4.3 (DBC) and §5.1 (eqs. 6-7), as restated in
shared/spec/ALGORITHMS.md §18.2, §5.2-§5.4.

Symbols (the paper's names; windows and buffers in packets):

- ``B``: the drop-tail buffer of the bottleneck (packets), ``B >= 1`` here.
- ``d``: slow-start aggressiveness, the window grows by ``W/d`` per RTT (``d = 1``: every packet
  ACKed or Byte Counting; ``d = 2``: delayed ACKs, "STCP"); ``d >= 1`` (the paper's range).
- ``α = (d + 1)/d``: the per-mini-cycle growth factor, ``W(n) = α^n`` (eq. 1, ``W(0) = 1``).
- ``mu_t``: μT, the bandwidth-delay product (packets); ``μ`` is the bottleneck rate (packets/s)
  and ``T`` the constant part of the RTT (s).
- ``n_B``: the integer with ``α^(n_B − 1) < B(d + 1) <= α^(n_B)``.
- ``W_B``: the overflow window; ``W_th``: the slow-start threshold; ``W_D``: the window when the
  overflow is detected; ``W'_th``: the threshold after recovery; ``N``: packets of the other
  flows in the network (multi-flow case).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Union

import numpy as np
import numpy.typing as npt

ArrayLike = Union[float, npt.ArrayLike]

#: Above this exponent :func:`n_b` compares logarithms in floating point instead of exact
#: rational powers, which grow to impractical sizes when α is very close to 1 (large d).
_EXACT_MAX_EXPONENT = 4096

#: Recovery outcomes of eq. (5)'s discussion -> the factor dividing W_D.
_RECOVERY_DIVISOR = {"many": 8.0, "second-rto": 4.0}


def alpha(d: ArrayLike) -> np.ndarray | np.float64:
    """α = (d + 1)/d, the growth factor of a slow-start mini-cycle (eq. 1)."""
    dd = _d(d)
    return ((dd + 1.0) / dd)[()]


def n_b(B: ArrayLike, d: ArrayLike) -> np.ndarray | np.int64:
    """n_B of Theorem 1: the integer with ``α^(n_B − 1) < B(d + 1) <= α^(n_B)``.

    The comparisons are exact: ``B`` and ``d`` are converted to rationals (the exact value of the
    floats given) and compared with exact rational powers of α, so that a boundary case such as
    ``B(d + 1) = α^n`` (e.g. B = 32, d = 1 gives 64 = 2^6, n_B = 6) cannot fall on the wrong side
    through rounding. Only when the exponent exceeds 4096 (α very close to 1) are logarithms
    compared in floating point. Vectorised over ``B`` and ``d``.
    """
    bb, dd = np.broadcast_arrays(_buffer(B), _d(d))
    out = np.vectorize(_n_b_scalar, otypes=[np.int64])(bb, dd)
    return out[()]


def w_b(B: ArrayLike, d: ArrayLike, mu_t: ArrayLike) -> np.ndarray | np.float64:
    """W_B of Theorem 1: ``W_B = B + min(μT, α^(n_B − 1))``, the window at which the buffer
    overflows if slow start is not ended first (the exact form of eqs. 2-3)."""
    bb, dd, mt = np.broadcast_arrays(_buffer(B), _d(d), _mu_t(mu_t))
    n = np.asarray(n_b(bb, dd))
    burst = ((dd + 1.0) / dd) ** (n - 1)
    return (bb + np.minimum(mt, burst))[()]


def w_b_approx(B: ArrayLike, d: ArrayLike, mu_t: ArrayLike) -> np.ndarray | np.float64:
    """W_B of eq. (4): Theorem 1 with ``α^(n_B) ≈ B(d + 1)``, i.e. ``W_B = B + min(μT, B·d)``."""
    bb, dd, mt = _buffer(B), _d(d), _mu_t(mu_t)
    return (bb + np.minimum(mt, bb * dd))[()]


def w_b_multi(
    B: ArrayLike, d: ArrayLike, mu_t: ArrayLike, n: ArrayLike, *, exact: bool = False
) -> np.ndarray | np.float64:
    """W_B of eq. (6) for a flow that finds ``n`` (N) packets of other flows in the network:
    ``W_B = B + min(μT − N, B·d)``.

    Eq. (6) carries eq. (4)'s approximation ``α^(n_B) ≈ B(d + 1)``. With ``exact=True`` the burst
    term is Theorem 1's, ``W_B = B + min(μT − N, α^(n_B − 1))``: the other flows' N packets take
    part of the pipe, and the burst that overflows the buffer is the same as for one flow. The
    simulator agrees with the exact form (``startlab check models --only barakat``; docs/MODELS.md).

    When ``N > μT`` the flow sees a full link and a buffer of ``B + μT − N`` places, which the
    formula gives (the min picks the negative ``μT − N``). ``N`` must lie in ``[0, B + μT]``, where
    ``W_B`` goes from its single-flow value down to 0.
    """
    bb, dd, mt = _buffer(B), _d(d), _mu_t(mu_t)
    others = np.asarray(n, dtype=np.float64)
    if np.any(~np.isfinite(others)) or np.any(others < 0) or np.any(others > bb + mt):
        raise ValueError(f"n = {n}: expected the packets of other flows, 0 <= N <= B + mu_t")
    if exact:
        bb, dd = np.broadcast_arrays(bb, dd)
        burst = ((dd + 1.0) / dd) ** (np.asarray(n_b(bb, dd)) - 1)
    else:
        burst = bb * dd
    return (bb + np.minimum(mt - others, burst))[()]


def w_b_max(B: ArrayLike, d: ArrayLike, mu_t: ArrayLike) -> np.ndarray | np.float64:
    """W_B^max of eq. (7): eq. (6) at ``N = (B + μT)/2``, ``W_B^max = B + min((μT − B)/2, B·d)``
    (the other flows' windows oscillate between half the pipe and the pipe)."""
    bb, dd, mt = _buffer(B), _d(d), _mu_t(mu_t)
    return (bb + np.minimum((mt - bb) / 2.0, bb * dd))[()]


def w_d(w_th: ArrayLike, w_b: ArrayLike, d: ArrayLike) -> np.ndarray | np.float64:
    """W_D of eq. (5): ``W_D = min(W_th, α·W_B)``, the window when the overflow is detected one
    RTT after it happens (slow start may end at ``W_th`` during that RTT).

    Meaningful when ``W_th >= W_B`` (otherwise slow start ends before any overflow, Corollary 1);
    ``w_th`` may be ``inf`` (the paper's "high threshold" of §4).
    """
    th = np.asarray(w_th, dtype=np.float64)
    if np.any(np.isnan(th)) or np.any(th <= 0):
        raise ValueError(
            f"w_th = {w_th}: expected a slow-start threshold > 0 packets (inf allowed)"
        )
    wb = np.asarray(w_b, dtype=np.float64)
    if np.any(~np.isfinite(wb)) or np.any(wb <= 0):
        raise ValueError(f"w_b = {w_b}: expected an overflow window, 0 < W_B < inf packets")
    dd = _d(d)
    return np.minimum(th, (dd + 1.0) / dd * wb)[()]


def w_th_after(w_d: ArrayLike, losses: str = "many") -> np.ndarray | np.float64:
    """W'_th, the threshold after Reno recovers from the overflow (§4.1).

    ``losses="many"``: three or more losses; the first two are halved by fast retransmit and the
    third needs a timeout, so ``W'_th = W_D/8`` (the paper's working assumption).
    ``losses="second-rto"``: the second loss already needs the timeout, ``W'_th = W_D/4``.
    """
    if losses not in _RECOVERY_DIVISOR:
        raise ValueError(f"losses = {losses!r}: expected one of {sorted(_RECOVERY_DIVISOR)}")
    wd = np.asarray(w_d, dtype=np.float64)
    if np.any(~np.isfinite(wd)) or np.any(wd <= 0):
        raise ValueError(f"w_d = {w_d}: expected a detection window, 0 < W_D < inf packets")
    return (wd / _RECOVERY_DIVISOR[losses])[()]


def overflows_in_slow_start(
    w_th: ArrayLike,
    B: ArrayLike,
    d: ArrayLike,
    mu_t: ArrayLike,
) -> np.ndarray | np.bool_:
    """Corollary 1 read as an equivalence: slow start overflows the buffer iff ``W_th >= W_B``
    (Theorem 1's W_B)."""
    th = np.asarray(w_th, dtype=np.float64)
    if np.any(np.isnan(th)) or np.any(th <= 0):
        raise ValueError(
            f"w_th = {w_th}: expected a slow-start threshold > 0 packets (inf allowed)"
        )
    return (th >= w_b(B, d, mu_t))[()]


def early_overflow(B: ArrayLike, d: ArrayLike, mu_t: ArrayLike) -> np.ndarray | np.bool_:
    """Whether slow start overflows the buffer before filling the pipe (eq. 4): ``B < μT/d``."""
    bb, dd, mt = _buffer(B), _d(d), _mu_t(mu_t)
    return (bb < mt / dd)[()]


def bdp_threshold_works(B: ArrayLike, d: ArrayLike, mu_t: ArrayLike) -> np.ndarray | np.bool_:
    """Whether ``W_th = μT`` (Hoe's BDP threshold) avoids losses (§3, from eq. 4):
    ``B > μT/(d + 1)``."""
    bb, dd, mt = _buffer(B), _d(d), _mu_t(mu_t)
    return (bb > mt / (dd + 1.0))[()]


def multi_flow_no_early_overflow(
    B: ArrayLike, d: ArrayLike, mu_t: ArrayLike
) -> np.ndarray | np.bool_:
    """Whether a new flow never overflows early in the multi-flow case (§5.1): ``B·d > μT − N`` at
    ``N = (B + μT)/2``, i.e. ``B > μT/(2d + 1)``."""
    bb, dd, mt = _buffer(B), _d(d), _mu_t(mu_t)
    return (bb > mt / (2.0 * dd + 1.0))[()]


def dbc_d(W: ArrayLike, d_max: float, w_th: float) -> np.ndarray | np.float64:
    """Decreasing Byte Counting (§4.3): ``d(W) = 1 + (d_max − 1)(W − 1)/(W_th − 1)``, rising
    linearly from 1 at ``W = 1`` to ``d_max`` at ``W = W_th``.

    ``W >= 1`` is the current window (packets), ``d_max >= 1`` and ``1 < W_th < inf`` (DBC is
    undefined without a finite threshold, ALGORITHMS.md §5.3 (d)). Vectorised over ``W``.
    """
    win = np.asarray(W, dtype=np.float64)
    if np.any(~np.isfinite(win)) or np.any(win < 1):
        raise ValueError(f"W = {W}: expected a window of at least 1 packet")
    if not (math.isfinite(d_max) and d_max >= 1):
        raise ValueError(f"d_max = {d_max}: expected d_max >= 1")
    if not (math.isfinite(w_th) and w_th > 1):
        raise ValueError(f"w_th = {w_th}: expected a finite threshold, 1 < W_th < inf packets")
    return (1.0 + (d_max - 1.0) * (win - 1.0) / (w_th - 1.0))[()]


def transfer_time(
    S: ArrayLike,
    B: ArrayLike,
    d: ArrayLike,
    mu_t: ArrayLike,
    T: ArrayLike,
    *,
    w_th: ArrayLike = np.inf,
    losses: str = "many",
    rto: float = 1.0,
    exact: bool = True,
) -> np.ndarray | np.float64:
    """The time (s) to deliver a transfer of ``S`` packets, from the first transmission until the
    last packet is acknowledged, in the paper's sequence slow start → overflow → Reno recovery →
    slow start to ``W'_th`` → congestion avoidance.

    The paper gives no closed form for this time (its throughput figures are simulations); this is
    our model, built from its pieces. It is a fluid model in packets, with rounds of one RTT:

    * Slow start from window ``w0`` (network empty): each acknowledged packet adds ``1/d`` to the
      window, so ``d(w − w0)`` packets are delivered while the window grows from ``w0`` to ``w``.
      While ``w <= μT`` a round lasts ``T`` and multiplies the window by α, taking
      ``T·log_α(w/w0)``; above ``μT`` the link is busy and delivers ``μ = μT/T`` packets/s, taking
      ``d·Δw/μ``. (From ``w0 = 1``, one packet takes ``T``, three take ``2T`` with ``d = 1``.)
    * Congestion avoidance from window ``w1``: the window grows by one per round and a round with
      window ``w`` delivers ``w`` packets, so ``(w² − w1²)/2`` packets take ``T·(w − w1)`` below
      ``μT``; above it packets are delivered at ``μ``. No loss is modelled in this phase.
    * Overflow: with ``W_th >= W_B`` (Theorem 1's W_B, or eq. 4's with ``exact=False``) the first
      packet is dropped when the window reaches ``W_B``, after ``(d + 1)·W_B − d`` packets were sent
      (``d(W_B − 1)`` delivered plus ``W_B`` in flight), all of which are delivered. If ``S`` is at
      most that count, no loss touches the transfer and it ends in slow start/CA as without loss.
    * Otherwise the loss is detected when the window reaches ``W_D = min(W_th, α·W_B)`` (eq. 5).
      Reno's fast retransmits and the timeout together take ``rto`` seconds from the detection
      (the paper's assumption that the third loss needs a timeout; default 1 s, RFC 6298's minimum
      RTO). Then, go-back-N from the first loss: the ``S − ((d + 1)W_B − d)`` remaining packets are
      sent from window 1 in slow start up to ``W'_th`` (:func:`w_th_after` with ``losses``) and in
      congestion avoidance after it, the queue having drained.
    * Without overflow (``W_th < W_B``, Corollary 1): slow start to ``W_th``, then congestion
      avoidance.

    Assumptions: one loss episode, at most one timeout, SACK-less Reno, no receive-window limit,
    no handshake; ``S > 0``, ``T > 0``, ``rto >= 0``. Vectorised over ``S``, ``B``, ``d``, ``mu_t``,
    ``T`` and ``w_th``.
    """
    if losses not in _RECOVERY_DIVISOR:
        raise ValueError(f"losses = {losses!r}: expected one of {sorted(_RECOVERY_DIVISOR)}")
    if not (math.isfinite(rto) and rto >= 0):
        raise ValueError(f"rto = {rto}: expected a recovery time >= 0 s")
    size = np.asarray(S, dtype=np.float64)
    if np.any(~np.isfinite(size)) or np.any(size <= 0):
        raise ValueError(f"S = {S}: expected a transfer of 0 < S < inf packets")
    rtt = np.asarray(T, dtype=np.float64)
    if np.any(~np.isfinite(rtt)) or np.any(rtt <= 0):
        raise ValueError(f"T = {T}: expected a constant RTT component, 0 < T < inf s")
    th = np.asarray(w_th, dtype=np.float64)
    if np.any(np.isnan(th)) or np.any(th < 1):
        raise ValueError(
            f"w_th = {w_th}: expected a slow-start threshold >= 1 packet (inf allowed)"
        )
    bb, dd, mt = _buffer(B), _d(d), _mu_t(mu_t)
    size, bb, dd, mt, rtt, th = np.broadcast_arrays(size, bb, dd, mt, rtt, th)
    a = (dd + 1.0) / dd
    mu = mt / rtt
    overflow = w_b(bb, dd, mt) if exact else w_b_approx(bb, dd, mt)
    overflow = np.asarray(overflow, dtype=np.float64)

    clean = _deliver(size, np.ones_like(size), th, dd, a, mt, rtt, mu)

    sent_before_drop = (dd + 1.0) * overflow - dd
    detect = np.minimum(th, a * overflow)
    restart_th = detect / _RECOVERY_DIVISOR[losses]
    remaining = np.maximum(size - sent_before_drop, 0.0)
    after = _deliver(remaining, np.ones_like(size), restart_th, dd, a, mt, rtt, mu)
    lossy = _ss_time(np.ones_like(size), detect, a, dd, mt, rtt, mu) + rto + after

    lost = (th >= overflow) & (size > sent_before_drop)
    return np.where(lost, lossy, clean)[()]


def _deliver(
    packets: np.ndarray,
    w0: np.ndarray,
    th: np.ndarray,
    d: np.ndarray,
    a: np.ndarray,
    mt: np.ndarray,
    rtt: np.ndarray,
    mu: np.ndarray,
) -> np.ndarray:
    """Time to deliver ``packets`` from window ``w0``: slow start up to ``th``, then CA."""
    th = np.maximum(th, w0)
    in_ss = np.where(np.isfinite(th), d * (th - w0), np.inf)
    ss_only = _ss_time(w0, w0 + np.minimum(packets, in_ss) / d, a, d, mt, rtt, mu)
    finite_th = np.where(np.isfinite(th), th, w0)
    ca = _ca_time(finite_th, np.maximum(packets - in_ss, 0.0), mt, rtt, mu)
    return np.where(packets <= in_ss, ss_only, ss_only + ca)


def _ss_time(
    w0: np.ndarray,
    w: np.ndarray,
    a: np.ndarray,
    d: np.ndarray,
    mt: np.ndarray,
    rtt: np.ndarray,
    mu: np.ndarray,
) -> np.ndarray:
    """Slow-start time for the window to grow from ``w0`` to ``w``: rounds of ``T`` below ``μT``,
    ``d·Δw/μ`` above it."""
    below = np.maximum(np.minimum(w, mt), w0)
    rounds = np.log(below / w0) / np.log(a)
    busy = np.maximum(w - np.maximum(w0, mt), 0.0)
    return rtt * rounds + d * busy / mu


def _ca_time(
    w1: np.ndarray, packets: np.ndarray, mt: np.ndarray, rtt: np.ndarray, mu: np.ndarray
) -> np.ndarray:
    """Congestion-avoidance time to deliver ``packets`` from window ``w1`` (+1 packet per round)."""
    below_capacity = np.maximum(mt**2 - w1**2, 0.0) / 2.0  # packets delivered before w reaches μT
    w_end = np.sqrt(w1**2 + 2.0 * np.minimum(packets, below_capacity))
    slow = rtt * (w_end - w1)
    return slow + np.maximum(packets - below_capacity, 0.0) / mu


def _n_b_scalar(B: float, d: float) -> int:
    target = Fraction(B) * (Fraction(d) + 1)
    growth = (Fraction(d) + 1) / Fraction(d)
    n = max(1, math.ceil(math.log(float(target)) / math.log(float(growth))))
    if n > _EXACT_MAX_EXPONENT:
        # NOTE: floating point only here, where α is within ~1e-3 of 1 and exact powers explode.
        log_target, log_growth = math.log(float(target)), math.log(float(growth))
        while (n - 1) * log_growth >= log_target:
            n -= 1
        while n * log_growth < log_target:
            n += 1
        return n
    while growth**n < target:
        n += 1
    while growth ** (n - 1) >= target:
        n -= 1
    return n


def _buffer(B: ArrayLike) -> np.ndarray:
    bb = np.asarray(B, dtype=np.float64)
    if np.any(~np.isfinite(bb)) or np.any(bb < 1):
        raise ValueError(f"B = {B}: expected a buffer of 1 <= B < inf packets")
    return bb


def _d(d: ArrayLike) -> np.ndarray:
    dd = np.asarray(d, dtype=np.float64)
    if np.any(~np.isfinite(dd)) or np.any(dd < 1):
        raise ValueError(f"d = {d}: expected a slow-start aggressiveness 1 <= d < inf")
    return dd


def _mu_t(mu_t: ArrayLike) -> np.ndarray:
    mt = np.asarray(mu_t, dtype=np.float64)
    if np.any(~np.isfinite(mt)) or np.any(mt <= 0):
        raise ValueError(f"mu_t = {mu_t}: expected a bandwidth-delay product 0 < muT < inf packets")
    return mt
