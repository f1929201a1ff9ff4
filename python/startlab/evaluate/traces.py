"""Mahimahi-format link traces: a generator of cellular-like and Wi-Fi-like traces with stated
statistics, and the statistics of any trace file (a user's own included).

A Mahimahi trace has one integer millisecond timestamp per line; each line is an opportunity to
deliver one 1500-byte packet, and the trace repeats with the period of its last timestamp
(docs/IMPAIRMENTS.md, ``rate_trace``).

The generators are simple stochastic models, not measurements. What each one promises:

* ``cellular``: the delivery rate is piecewise constant over 100 ms steps; its logarithm follows an
  AR(1) process with lag-one correlation 0.9 and stationary standard deviation 0.6 (so the rate's
  coefficient of variation over steps is about 0.66), scaled so that the expected rate is the mean
  asked for; with probability 0.01 per step an outage (no delivery) lasts 1-5 steps. Within a step
  the opportunities of each millisecond are Poisson with the step's rate. This is the shape of the
  LTE traces of Winstein et al. (Sprout, NSDI 2013), whose rates vary by an order of magnitude over
  seconds with short outages; the parameters are ours, round numbers, stated here.
* ``wifi``: the medium grants the link a transmission opportunity every 2-8 ms (uniform), and
  each opportunity carries an aggregate of packets (A-MPDU-like) whose expected size keeps the mean
  rate; the aggregates' sizes are Poisson (an empty one makes a longer gap). Delivery is bursty
  on a millisecond scale and steady over a second, as on a contended 802.11n/ac link.

:func:`trace_stats` measures what a file holds: the mean rate, the coefficient of variation of the
rate over 100 ms windows, the share of 100 ms windows with no delivery and the longest gap.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: The kinds :func:`generate` knows.
KINDS = ("cellular", "wifi")

#: The length of the traces an evaluation suite generates (they repeat with this period).
TRACE_SECONDS = 60.0

#: Bytes per opportunity (Mahimahi's MTU).
PACKET_BYTES = 1500

#: The cellular model's constants (see the module's docstring).
CELL_STEP_MS = 100
CELL_PHI = 0.9
CELL_SIGMA = 0.6
CELL_OUTAGE_P = 0.01
CELL_OUTAGE_STEPS = (1, 5)
#: The Wi-Fi model's gap between transmission opportunities, ms (uniform).
WIFI_GAP_MS = (2, 8)


@dataclass(frozen=True)
class TraceStats:
    """What a trace holds, measured from its lines."""

    period_s: float
    opportunities: int
    mean_rate_bps: float
    cv_100ms: float  # standard deviation / mean of the rate over 100 ms windows
    idle_100ms: float  # share of 100 ms windows without a delivery
    longest_gap_s: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def generate(kind: str, mean_rate_bps: float, duration_s: float, seed: int) -> np.ndarray:
    """The millisecond timestamps of a trace of ``kind`` with expected rate ``mean_rate_bps``,
    ``duration_s`` long (its last line is the period), drawn from ``seed`` (NumPy PCG64)."""
    if kind not in KINDS:
        raise ValueError(f"kind = {kind!r}: expected one of {', '.join(KINDS)}")
    if not (mean_rate_bps > 0 and math.isfinite(mean_rate_bps)):
        raise ValueError(f"mean rate = {mean_rate_bps!r}: must be positive")
    if not 1 <= duration_s <= 86_400:
        raise ValueError(f"duration = {duration_s!r} s: expected 1 s to 86400 s")
    rng = np.random.Generator(np.random.PCG64(seed))
    ms = int(round(duration_s * 1000))
    per_ms = mean_rate_bps / 8 / PACKET_BYTES / 1000  # expected opportunities per ms
    if kind == "cellular":
        steps = math.ceil(ms / CELL_STEP_MS)
        x = np.empty(steps)
        x[0] = rng.normal(0.0, CELL_SIGMA)
        noise = rng.normal(0.0, CELL_SIGMA * math.sqrt(1 - CELL_PHI**2), size=steps)
        for k in range(1, steps):
            x[k] = CELL_PHI * x[k - 1] + noise[k]
        factor = np.exp(x - CELL_SIGMA**2 / 2)  # E[factor] = 1
        outage = np.zeros(steps, dtype=bool)
        k = 0
        starts = rng.random(steps) < CELL_OUTAGE_P
        lengths = rng.integers(CELL_OUTAGE_STEPS[0], CELL_OUTAGE_STEPS[1] + 1, size=steps)
        while k < steps:
            if starts[k]:
                outage[k : k + lengths[k]] = True
                k += lengths[k]
            else:
                k += 1
        # Outages remove rate; the rest is scaled up so that the mean stays the one asked for.
        factor = np.where(outage, 0.0, factor / max(1e-9, 1 - CELL_OUTAGE_P * np.mean(CELL_OUTAGE_STEPS)))
        lam = np.repeat(factor * per_ms, CELL_STEP_MS)[:ms]
        counts = rng.poisson(lam)
    else:
        counts = np.zeros(ms, dtype=np.int64)
        t = int(rng.integers(0, WIFI_GAP_MS[1]))
        mean_gap = (WIFI_GAP_MS[0] + WIFI_GAP_MS[1]) / 2
        while t < ms:
            counts[t] = rng.poisson(per_ms * mean_gap)
            t += int(rng.integers(WIFI_GAP_MS[0], WIFI_GAP_MS[1] + 1))
    stamps = np.repeat(np.arange(1, ms + 1), counts)
    if stamps.size == 0 or stamps[-1] != ms:
        stamps = np.append(stamps, ms)  # the last line is the period
    return stamps


def write(path: Path, stamps: np.ndarray, header: str = "") -> None:
    """Write a trace (``#`` comment lines first), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    lines = [f"# {line}" for line in header.splitlines()] + [str(int(s)) for s in stamps]
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)


def read(path: Path) -> np.ndarray:
    """The timestamps of a Mahimahi trace file (blank lines and ``#`` comments skipped)."""
    stamps = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read the trace ({e})") from None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not line.isdigit():
            raise ValueError(f"{path}: line {n}: expected a whole number of milliseconds, got {line!r}")
        stamps.append(int(line))
    if not stamps or stamps[-1] <= 0:
        raise ValueError(f"{path}: no positive timestamp (the last line is the trace's period)")
    if any(b < a for a, b in zip(stamps, stamps[1:])):
        raise ValueError(f"{path}: timestamps go backwards")
    return np.asarray(stamps, dtype=np.int64)


def stats(stamps: np.ndarray) -> TraceStats:
    """The statistics of a trace's timestamps (see :class:`TraceStats`)."""
    period_ms = int(stamps[-1])
    windows = max(1, period_ms // 100)
    per_window = np.bincount(np.minimum((stamps - 1) // 100, windows - 1).clip(0), minlength=windows)[:windows]
    rates = per_window * PACKET_BYTES * 8 / 0.1
    mean = len(stamps) * PACKET_BYTES * 8 / (period_ms / 1000)
    gaps = np.diff(np.concatenate([[0], stamps]))
    return TraceStats(
        period_s=period_ms / 1000, opportunities=int(len(stamps)), mean_rate_bps=float(mean),
        cv_100ms=float(np.std(rates) / np.mean(rates)) if np.mean(rates) > 0 else math.inf,
        idle_100ms=float(np.mean(per_window == 0)), longest_gap_s=float(gaps.max()) / 1000,
    )  # fmt: skip


def trace_stats(path: Path) -> TraceStats:
    """:func:`stats` of a trace file."""
    return stats(read(path))


def describe(s: TraceStats) -> str:
    return (f"{s.opportunities} opportunities over {s.period_s:g} s: mean {s.mean_rate_bps / 1e6:.3f} Mbit/s, "
            f"CV over 100 ms {s.cv_100ms:.2f}, idle 100 ms windows {100 * s.idle_100ms:.1f} %, longest gap {1e3 * s.longest_gap_s:.0f} ms")  # fmt: skip
