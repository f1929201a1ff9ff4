"""Scharf's transfer-time model of standard slow start, eqs. (1)-(2).

Source: M. Scharf, "Performance Evaluation of Fast Startup Congestion Control Schemes", §3.1,
eqs. (1) and (2), as restated (with the garbled fraction of eq. (1) resolved) in
shared/spec/ALGORITHMS.md §18.1.

Symbols (the paper's names; units are SI with sizes in bytes):

- ``s``: transfer size (B).
- ``r``: IP-layer bottleneck rate (bit/s).
- ``tau``: τ, the minimum round-trip time (s).
- ``L``: the MSS, TCP payload per segment (B); 1448 for Linux.
- ``mtu``: the IP packet size (B); ``R = (L/MTU)·r/8`` is the TCP path capacity in B/s.
- ``w``: the initial window (segments).
- ``b``: segments acknowledged per ACK (1 with quick-ACK, 2 with delayed ACKs); ``γ = 1 + 1/b``.
- ``ψ``: the index of the last slow-start round that is completely used.

The model neglects loss, the receive window, a small initial ssthresh, one-way latencies and the
connection setup: time runs from the first data transmission to the arrival of the last byte.
"""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

ArrayLike = Union[float, npt.ArrayLike]

#: Decimals kept before taking a ceiling, so that a logarithm that is an integer in exact
#: arithmetic (e.g. log2(8)) is not pushed up a round by floating-point error.
_CEIL_DECIMALS = 9


def psi(
    s: ArrayLike,
    *,
    r: float,
    tau: float,
    L: float = 1448,  # noqa: N803 - the paper's symbol
    mtu: float = 1500,
    w: float = 3,
    b: float = 1,
) -> np.ndarray | np.int64:
    """ψ of eq. (2): the number of slow-start rounds that are completely used.

    ``ψ = max(min(⌈log_γ((1/w)(R·τ/L + 1))⌉, ⌈log_γ(⌈s/L⌉(γ − 1)/w + 1) − 1⌉), 0)``: the first
    term counts the rounds until the window exceeds the BDP, the second those until the transfer
    completes. Vectorised over ``s``; see the module docstring for the symbols.
    """
    size, rate, gamma = _check(s, r, tau, L, mtu, w, b)
    window_exceeds_bdp = _ceil(_log(((rate * tau / L) + 1) / w, gamma))
    transfer_completes = _ceil(_log(np.ceil(size / L) * (gamma - 1) / w + 1, gamma) - 1)
    rounds = np.maximum(np.minimum(window_exceeds_bdp, transfer_completes), 0)
    return rounds.astype(np.int64)[()]


def t_ss(
    s: ArrayLike,
    *,
    r: float,
    tau: float,
    L: float = 1448,  # noqa: N803 - the paper's symbol
    mtu: float = 1500,
    w: float = 3,
    b: float = 1,
) -> np.ndarray | np.float64:
    """T_SS of eq. (1): the time (s) to transfer ``s`` bytes in slow start.

    ``T_SS(s) = s/R + (τ + L/R)·ψ − (L·w/R)·(γ^ψ − 1)/(γ − 1)`` with ψ from :func:`psi`.
    Vectorised over ``s``; see the module docstring for the symbols.
    """
    size, rate, gamma = _check(s, r, tau, L, mtu, w, b)
    rounds = psi(size, r=r, tau=tau, L=L, mtu=mtu, w=w, b=b)
    sent_in_rounds = (L * w / rate) * (gamma**rounds - 1) / (gamma - 1)
    return (size / rate + (tau + L / rate) * rounds - sent_in_rounds)[()]


def _check(
    s: ArrayLike,
    r: float,
    tau: float,
    L: float,  # noqa: N803 - the paper's symbol
    mtu: float,
    w: float,
    b: float,
) -> tuple[np.ndarray, float, float]:
    """Refuse impossible parameters; return sizes as an array, ``R`` (B/s) and ``γ``."""
    size = np.asarray(s, dtype=np.float64)
    if np.any(size < 0):
        raise ValueError("transfer size s must be >= 0 bytes")
    if tau < 0:
        raise ValueError(f"tau must be >= 0 s, got {tau}")
    for name, value in {"r": r, "L": L, "mtu": mtu, "w": w, "b": b}.items():
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    return size, (L / mtu) * r / 8, 1 + 1 / b


def _log(x: npt.ArrayLike, base: float) -> np.ndarray:
    return np.log(x) / np.log(base)


def _ceil(x: np.ndarray) -> np.ndarray:
    # NOTE: rounding before the ceiling departs from exact arithmetic only within 1e-9 of an
    # integer, where the exact value is that integer.
    return np.ceil(np.round(x, _CEIL_DECIMALS))
