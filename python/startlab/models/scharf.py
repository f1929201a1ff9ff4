"""Scharf's transfer-time models: slow start (eqs. 1-2), paced fast startups (eqs. 3-4) and the
schemes built on them (Quick-Start, Jump-Start, More-Start, Initial-Start).

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

- ``r0``: R0, the initial rate of a paced scheme (B/s); ``q``: a Quick-Start or More-Start rate
  (bit/s, IP layer), ``R0 = (L/MTU)·q/8``; ``u``: Jump-Start's first-RTT limit (B),
  ``R0 = min(s, u)/τ``.
- ``Ψ``: the number of rounds a paced scheme spends growing its rate by γ per RTT.

The models neglect loss, the receive window, a small initial ssthresh, one-way latencies and the
connection setup: time runs from the first data transmission to the arrival of the last byte.
A response time adds one τ for the request (ALGORITHMS.md §18.1); Quick-Start's own signalling
round trip is already in :func:`t_qs`.
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


def t_paced(
    s: ArrayLike,
    *,
    r: float,
    tau: float,
    r0: ArrayLike,
    L: float = 1448,  # noqa: N803 - the paper's symbol
    mtu: float = 1500,
    b: float = 1,
) -> np.ndarray | np.float64:
    """T_Paced of eq. (3): the time (s) to transfer ``s`` bytes starting at rate ``r0`` (B/s).

    ``T_Paced(s) = τ·Ψ + (s − M(Ψ)) / min(R, R0·γ^Ψ)`` with ``M(i) = R0·τ·(γ^i − 1)/(γ − 1)``
    (bytes sent in the first i rounds) and
    ``Ψ = max(min(⌈log_γ(R/R0)⌉, ⌈log_γ(s(γ − 1)/(R0·τ) + 1) − 1⌉), 0)`` (eq. 4).
    Vectorised over ``s`` (and ``r0``, which may depend on ``s``).
    """
    size, rate, gamma = _check(s, r, tau, L, mtu, 1, b)
    start = np.asarray(r0, dtype=np.float64)
    if np.any(start <= 0) or tau <= 0:
        raise ValueError("r0 must be > 0 B/s and tau > 0 s for a paced start")
    to_capacity = _ceil(_log(rate / start, gamma))
    to_completion = _ceil(_log(size * (gamma - 1) / (start * tau) + 1, gamma) - 1)
    rounds = np.maximum(np.minimum(to_capacity, to_completion), 0)
    sent = start * tau * (gamma**rounds - 1) / (gamma - 1)
    return (tau * rounds + (size - sent) / np.minimum(rate, start * gamma**rounds))[()]


def t_qs(
    s: ArrayLike,
    *,
    r: float,
    tau: float,
    q: float,
    L: float = 1448,
    mtu: float = 1500,
    b: float = 1,
) -> np.ndarray | np.float64:  # noqa: N803
    """T_QS: Quick-Start at the approved rate ``q`` (bit/s): one τ of signalling, then paced at
    ``R0 = (L/MTU)·q/8`` exactly as More-Start (:func:`t_ms`)."""
    return t_ms(s, r=r, tau=tau, q=q, L=L, mtu=mtu, b=b) + tau


def t_js(
    s: ArrayLike,
    *,
    r: float,
    tau: float,
    u: float = 65536,
    L: float = 1448,
    mtu: float = 1500,
    b: float = 1,
) -> np.ndarray | np.float64:  # noqa: N803
    """T_JS: Jump-Start, the first RTT plays out ``min(s, u)`` bytes: ``R0 = min(s, u)/τ``."""
    size = np.asarray(s, dtype=np.float64)
    return t_paced(size, r=r, tau=tau, r0=np.minimum(size, u) / tau, L=L, mtu=mtu, b=b)


def t_ms(
    s: ArrayLike,
    *,
    r: float,
    tau: float,
    q: float,
    L: float = 1448,
    mtu: float = 1500,
    b: float = 1,
) -> np.ndarray | np.float64:  # noqa: N803
    """T_MS: More-Start at the application's rate ``q`` (bit/s): ``R0 = (L/MTU)·q/8``."""
    return t_paced(s, r=r, tau=tau, r0=(L / mtu) * q / 8, L=L, mtu=mtu, b=b)


def t_is(
    s: ArrayLike,
    *,
    r: float,
    tau: float,
    w: float,
    L: float = 1448,
    mtu: float = 1500,
    b: float = 1,
) -> np.ndarray | np.float64:  # noqa: N803
    """T_IS: Initial-Start is slow start with a large initial window ``w`` (segments)."""
    return t_ss(s, r=r, tau=tau, L=L, mtu=mtu, w=w, b=b)


_SCHEMES = ("ss", "qs", "js", "ms", "is")


def response_time(
    s: ArrayLike,
    *,
    scheme: str = "ss",
    r: float,
    tau: float,
    **params: float,
) -> np.ndarray | np.float64:
    """The minimum response time of a request/response exchange for scheme ``x``: ``τ + T_x(s)``,
    and ``T_QS(s)`` itself for Quick-Start.

    The request takes τ (half an RTT there, and the response's last byte half an RTT back, which
    ``T_x`` leaves out); ``scheme`` is ``"ss"`` (slow start; ``w``, ``b``), ``"js"`` (``u``),
    ``"ms"`` (``q``), ``"is"`` (``w``) or ``"qs"`` (``q``). Quick-Start's T_QS = T_Paced + τ
    already holds that τ: its request rides with the exchange's own round trip, so the response
    time is T_QS (the paper's equation; the simulator agrees: 1 MB at 5.12 Mb/s over 10 Mb/s and
    τ = 0.2 s takes 1.130 s, T_QS = 1.126 s; `startlab reproduce scharf-eqs1-4`). Until 2026-11-24
    this function added another τ. Extra keyword arguments go to the scheme's ``t_x``.
    """
    funcs = {"ss": t_ss, "qs": t_qs, "js": t_js, "ms": t_ms, "is": t_is}
    if scheme not in funcs:
        raise ValueError(f"scheme {scheme!r} is not known; expected one of {', '.join(_SCHEMES)}")
    t = funcs[scheme](s, r=r, tau=tau, **params)
    return t if scheme == "qs" else tau + t


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
