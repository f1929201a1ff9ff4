"""``startlab model NAME --param value ...``: evaluate a closed form of :mod:`startlab.models`.

Parameters are the function's own keyword names (the papers' symbols: ``--s 100KB --r 10Mbps
--tau 200ms --w 3``). A value may carry a unit — a size (``B``, ``KB``, ``MB``, ``GB``, ``KiB``,
``MiB``, ``GiB``) becomes bytes, a rate (``bps``, ``Kbps``, ``Mbps``, ``Gbps``) bit/s, a duration
(``ns``, ``us``, ``ms``, ``s``, ``min``) seconds, ``pkt`` a packet count — or be a plain number.
One parameter may be a range ``A..B``: the model is evaluated at ``points`` values (geometric
spacing when B/A ≥ 10, linear otherwise) and printed as a table, optionally plotted.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The model modules, searched in this order for a bare function name.
MODULES = ("scharf", "paced_start", "barakat", "growth")

_UNITS: dict[str, float] = {
    "b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 1024.0, "mib": 1024.0**2, "gib": 1024.0**3,
    "bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12,
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0,
    "pkt": 1.0, "pkts": 1.0,
}  # fmt: skip

_NUMBER = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ]*)\s*$")


class ModelError(ValueError):
    """A model name, parameter or value that cannot be used; the message says what is accepted."""


@dataclass
class Evaluation:
    """The inputs and outputs of one ``startlab model`` call."""

    name: str
    swept: str | None
    xs: list[float]
    values: list[Any]


def functions() -> dict[str, Callable[..., Any]]:
    """Every public model function, as ``module.name``."""
    found: dict[str, Callable[..., Any]] = {}
    for module_name in MODULES:
        try:
            module = importlib.import_module(f"startlab.models.{module_name}")
        except ImportError:
            continue
        for name, obj in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != module.__name__:
                continue
            found[f"{module_name}.{name}"] = obj
    return found


def find(name: str) -> tuple[str, Callable[..., Any]]:
    """The function called ``name`` (``module.function`` or an unambiguous ``function``)."""
    table = functions()
    if name in table:
        return name, table[name]
    matches = [full for full in table if full.split(".", 1)[1] == name]
    if len(matches) == 1:
        return matches[0], table[matches[0]]
    if matches:
        raise ModelError(f"model {name!r} is ambiguous; say one of: {', '.join(matches)}")
    raise ModelError(f"unknown model {name!r}; known: {', '.join(sorted(table))}")


def parse_value(key: str, text: str) -> float | tuple[float, float]:
    """A number with an optional unit, or a range ``A..B``."""
    if ".." in text:
        low, high = text.split("..", 1)
        a, b = parse_value(key, low), parse_value(key, high)
        assert isinstance(a, float) and isinstance(b, float)
        if not b > a:
            raise ModelError(f"--{key} {text}: a range must go up (A..B with B > A)")
        return (a, b)
    m = _NUMBER.match(text)
    if not m:
        raise ModelError(f"--{key} {text!r} is not a number; expected e.g. 100KB, 10Mbps, 200ms, 3 or A..B")
    number, unit = float(m.group(1).replace("_", "")), m.group(2)
    if not unit:
        return number
    scale = _UNITS.get(unit.lower())
    if scale is None or unit == "MBps":
        raise ModelError(f"--{key} {text!r}: unknown unit {unit!r}; accepted: {', '.join(_UNITS)}")
    return number * scale


def parse_bool(key: str, text: str) -> bool:
    """``true``/``false`` (also ``yes``/``no``, ``1``/``0``) for a switch such as ``--exact``."""
    word = text.strip().lower()
    if word in ("true", "yes", "1"):
        return True
    if word in ("false", "no", "0"):
        return False
    raise ModelError(f"--{key} {text!r} is not a switch; expected true or false")


def parse_args(
    args: Sequence[str], text_params: frozenset[str] = frozenset(), bool_params: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """``--name value`` pairs (``--name=value`` too); ``text_params`` take their value as text,
    ``bool_params`` as true or false."""
    out: dict[str, Any] = {}
    it = iter(args)
    for token in it:
        if not token.startswith("--") or len(token) < 3:
            raise ModelError(f"{token!r}: expected --PARAMETER VALUE pairs")
        key, sep, value = token[2:].partition("=")
        if not sep:
            value = next(it, None)
            if value is None:
                raise ModelError(f"--{key} needs a value")
        if key in out:
            raise ModelError(f"--{key} is given twice")
        if key in text_params:
            out[key] = value
        elif key in bool_params:
            out[key] = parse_bool(key, value)
        else:
            out[key] = parse_value(key, value)
    return out


def evaluate(name: str, args: Sequence[str], points: int = 20) -> Evaluation:
    """Evaluate model ``name`` at the parameters in ``args`` (at most one of them a range)."""
    full, func = find(name)
    signature = inspect.signature(func)
    text = frozenset(p.name for p in signature.parameters.values() if isinstance(p.default, str))
    switches = frozenset(p.name for p in signature.parameters.values() if isinstance(p.default, bool))
    params = parse_args(args, text, switches)
    open_keywords = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    for key in params:
        if key not in signature.parameters and not open_keywords:
            accepted = ", ".join(f"--{p}" for p in signature.parameters)
            raise ModelError(f"{full} has no parameter --{key}; it takes {accepted}")
    missing = [
        p.name
        for p in signature.parameters.values()
        if p.default is inspect.Parameter.empty and p.name not in params
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if missing:
        raise ModelError(f"{full} needs {', '.join('--' + m for m in missing)}")
    ranges = [k for k, v in params.items() if isinstance(v, tuple)]
    if len(ranges) > 1:
        raise ModelError(f"only one parameter may be a range; got {', '.join('--' + r for r in ranges)}")
    if not 2 <= points <= 10_000:
        raise ModelError(f"--points {points}: expected 2 to 10000")
    swept = ranges[0] if ranges else None
    if swept is None:
        xs = [float("nan")]
    else:
        low, high = params[swept]  # type: ignore[misc]
        grid = np.geomspace(low, high, points) if low > 0 and high / low >= 10 else np.linspace(low, high, points)
        xs = [float(x) for x in grid]
    values = []
    for x in xs:
        call = {k: v for k, v in params.items() if k != swept}
        if swept is not None:
            call[swept] = x
        values.append(_plain(func(**call)))
    return Evaluation(full, swept, xs, values)


def _plain(value: Any) -> Any:
    """NumPy scalars and 0-d arrays as Python numbers, tuples element-wise."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def plot(evaluation: Evaluation, path: str) -> None:
    """Save the swept curve as an image (PNG, SVG, ... by the file name)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if evaluation.swept is None:
        raise ModelError("--plot needs a range (one parameter given as A..B)")
    ys = [v if not isinstance(v, tuple) else v[0] for v in evaluation.values]
    figure = Figure(figsize=(7, 4), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    ax.plot(evaluation.xs, ys, marker=".")
    xs = evaluation.xs
    if xs[0] > 0 and xs[-1] / xs[0] >= 10:
        ax.set_xscale("log")
    ax.set(title=evaluation.name, xlabel=evaluation.swept, ylabel=evaluation.name.split(".", 1)[1])
    ax.grid(alpha=0.3)
    figure.savefig(path)
