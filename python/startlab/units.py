"""Rates and durations as people write them — ``"10Mbps"``, ``"10 Mbit/s"``, ``"250ms"``,
``"5min"`` — turned into bit/s and seconds for the Python side's own inputs (the replay
generator, the command line). Scenario files are read by the native side, which has its own
unit parser (crates/startlab-scenario/src/values.rs)."""

from __future__ import annotations

import math
import re
from typing import Union

#: What a rate may be given as: a number of bit/s, or text such as "10Mbps" or "10 Mbit/s".
Rate = Union[str, float, int]

#: Rate units (lower-case; decimal prefixes) in bit/s.
RATE_UNITS = {
    "bps": 1.0, "bit/s": 1.0, "b/s": 1.0,
    "kbps": 1e3, "kbit/s": 1e3, "kb/s": 1e3,
    "mbps": 1e6, "mbit/s": 1e6, "mb/s": 1e6,
    "gbps": 1e9, "gbit/s": 1e9, "gb/s": 1e9,
    "tbps": 1e12, "tbit/s": 1e12, "tb/s": 1e12,
}  # fmt: skip
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_QUANTITY = re.compile(r"\s*([0-9_]*\.?[0-9_]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµ/]*)\s*\Z")


def rate_bps(rate: Rate) -> float:
    """A rate in bit/s from a number (bit/s) or text: ``"10Mbps"``, ``"10 Mbit/s"``, ``"1.5Gbps"``
    (decimal prefixes; ``MBps``, bytes per second, is refused)."""
    if isinstance(rate, bool):
        raise ValueError(f"rate: {rate!r} is not a rate")
    if isinstance(rate, (int, float)):
        value = float(rate)
    else:
        match = _QUANTITY.match(str(rate))
        unit = match.group(2) if match else ""
        if not match or "B" in unit or (unit and unit.lower() not in RATE_UNITS):
            raise ValueError(f"rate: {rate!r} is not a rate; expected bit/s or e.g. '10Mbps', '10Mbit/s', '1.5Gbps'")
        value = float(match.group(1).replace("_", "")) * (RATE_UNITS[unit.lower()] if unit else 1.0)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"rate: {rate!r}; expected a positive rate")
    return value


def duration_s(duration: float | str) -> float:
    """A duration in seconds from a number (seconds) or text: ``"300s"``, ``"5min"``, ``"250ms"``."""
    if isinstance(duration, bool):
        raise ValueError(f"duration: {duration!r} is not a duration")
    if isinstance(duration, (int, float)):
        value = float(duration)
    else:
        match = _QUANTITY.match(str(duration))
        unit = match.group(2) if match else ""
        if not match or (unit and unit not in TIME_UNITS):
            raise ValueError(f"duration: {duration!r} is not a duration; expected seconds or e.g. '300s', '5min'")
        value = float(match.group(1).replace("_", "")) * (TIME_UNITS[unit] if unit else 1.0)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"duration: {duration!r}; expected a positive duration")
    return value
