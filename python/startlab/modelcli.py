"""``startlab model NAME --param value ...``: evaluate a closed form of :mod:`startlab.models`.

Parameters are the function's own keyword names (the papers' symbols: ``--s 100KB --r 10Mbps
--tau 200ms --w 3``), a few also by a longer name (:data:`ALIASES`: ``--size``, ``--rate``,
``--rtt``). A value may carry a unit of the parameter's dimension (:data:`PARAMETERS`) — a size
(``B``, ``KB``, ``MB``, ``GB``, ``KiB``, ``MiB``, ``GiB``) becomes bytes, a rate (``bps``,
``Kbps``, ``Mbps``, ``Gbps``) bit/s (bytes/s for Scharf's ``r0``), a duration (``ns``, ``us``,
``ms``, ``s``, ``min``) seconds, ``pkt`` a packet count — or be a plain number in the base unit.
A unit of another dimension is refused with a message naming what the parameter takes. One parameter may be a range ``A..B``: the model is evaluated at ``points`` values (geometric
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

#: Units by dimension: the factor to the model's base unit (bytes, bit/s, seconds, packets).
_UNITS: dict[str, dict[str, float]] = {
    "size": {"b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 1024.0, "mib": 1024.0**2, "gib": 1024.0**3},
    "rate": {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12},
    "time": {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0},
    "packets": {"pkt": 1.0, "pkts": 1.0},
}  # fmt: skip

#: The units of each dimension as they are written (case does not matter, except MBps is refused).
_SHOWN: dict[str, str] = {"size": "B, KB, MB, GB, TB, KiB, MiB, GiB", "rate": "bps, Kbps, Mbps, Gbps, Tbps", "time": "ns, us, ms, s, min", "packets": "pkt"}

#: What a dimension is called in messages, and its base unit (a plain number is taken in it).
_DIMENSIONS: dict[str, tuple[str, str]] = {
    "size": ("a size", "bytes"),
    "rate": ("a rate", "bit/s"),
    "byte-rate": ("a rate", "bytes/s; a rate unit such as 10Mbps is converted"),
    "time": ("a duration", "seconds"),
    "packets": ("a packet count", "packets"),
    "number": ("a plain number", "no unit"),
}

#: The dimension of every parameter of every model, by module (the units of the model modules'
#: docstrings). A value with a unit of another dimension is refused, never converted: ``--tau
#: 10Mbps`` is an error, not a nonsense time. Every parameter must be listed here (tested).
PARAMETERS: dict[str, dict[str, str]] = {
    "scharf": {
        "s": "size", "r": "rate", "tau": "time", "L": "size", "mtu": "size", "w": "packets", "b": "number",
        "r0": "byte-rate", "q": "rate", "u": "size", "scheme": "text", "params": "text",
    },
    "paced_start": {"g": "number", "alpha": "number", "epsilon": "number"},
    "barakat": {
        "B": "packets", "d": "number", "mu_t": "packets", "n": "packets", "exact": "switch", "w_th": "packets",
        "w_b": "packets", "w_d": "packets", "losses": "text", "W": "packets", "d_max": "number", "S": "packets",
        "T": "time", "rto": "time",
    },
    "growth": {
        "ssthresh": "packets", "w": "packets", "b": "number", "rtt": "time", "d": "number", "k": "number",
        "saved_rtts": "number",
    },
}  # fmt: skip

#: Longer names accepted for the papers' symbols, by module (``--size 1KB..10MB`` for ``--s``).
ALIASES: dict[str, dict[str, str]] = {
    "scharf": {"size": "s", "rate": "r", "rtt": "tau", "mss": "L", "iw": "w"},
    "barakat": {"size": "S", "buffer": "B", "rtt": "T"},
    "growth": {"iw": "w"},
}

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


def parse_value(key: str, text: str, dimension: str = "any") -> float | tuple[float, float]:
    """A number with an optional unit of ``dimension`` (a key of :data:`_DIMENSIONS`, or ``any``
    for any unit), or a range ``A..B``, in the dimension's base unit."""
    if ".." in text:
        low, high = text.split("..", 1)
        a, b = parse_value(key, low, dimension), parse_value(key, high, dimension)
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
    family = next((f for f, units in _UNITS.items() if unit.lower() in units and unit != "MBps"), None)
    if family is None:
        accepted = "; ".join(_SHOWN.values())
        raise ModelError(f"--{key} {text!r}: unknown unit {unit!r}; accepted: {accepted}")
    factor = _UNITS[family][unit.lower()]
    if dimension == "any" or dimension == family:
        return number * factor
    if dimension == "byte-rate" and family == "rate":
        return number * factor / 8
    what, base = _DIMENSIONS.get(dimension, ("a plain number", "no unit"))
    shown = _SHOWN.get("rate" if dimension == "byte-rate" else dimension)
    example = f"a unit {shown} or " if shown else ""
    raise ModelError(f"--{key} {text!r}: {unit} is a unit of {_DIMENSIONS[family][0]}, but --{key} is {what}; expected {example}a plain number ({base})")


def parse_bool(key: str, text: str) -> bool:
    """``true``/``false`` (also ``yes``/``no``, ``1``/``0``) for a switch such as ``--exact``."""
    word = text.strip().lower()
    if word in ("true", "yes", "1"):
        return True
    if word in ("false", "no", "0"):
        return False
    raise ModelError(f"--{key} {text!r} is not a switch; expected true or false")


def parse_args(
    args: Sequence[str], text_params: frozenset[str] = frozenset(), bool_params: frozenset[str] = frozenset(),
    dimensions: dict[str, str] | None = None, aliases: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``--name value`` pairs (``--name=value`` too); ``text_params`` take their value as text,
    ``bool_params`` as true or false, the others as numbers with units of their ``dimensions``
    entry (any unit when there is none). ``aliases`` maps longer names to the parameters'."""
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    it = iter(args)
    for token in it:
        if not token.startswith("--") or len(token) < 3:
            raise ModelError(f"{token!r}: expected --PARAMETER VALUE pairs")
        name, sep, value = token[2:].partition("=")
        if not sep:
            value = next(it, None)
            if value is None:
                raise ModelError(f"--{name} needs a value")
        key = (aliases or {}).get(name, name)
        if key in out:
            if given[key] == name:
                raise ModelError(f"--{name} is given twice")
            raise ModelError(f"--{given[key]} and --{name} are the same parameter; give one")
        given[key] = name
        if key in text_params:
            out[key] = value
        elif key in bool_params:
            out[key] = parse_bool(name, value)
        else:
            out[key] = parse_value(name, value, (dimensions or {}).get(key, "any"))
    return out


def evaluate(name: str, args: Sequence[str], points: int = 20) -> Evaluation:
    """Evaluate model ``name`` at the parameters in ``args`` (at most one of them a range)."""
    full, func = find(name)
    signature = inspect.signature(func)
    module = full.split(".", 1)[0]
    text = frozenset(p.name for p in signature.parameters.values() if isinstance(p.default, str))
    switches = frozenset(p.name for p in signature.parameters.values() if isinstance(p.default, bool))
    aliases = {a: p for a, p in ALIASES.get(module, {}).items() if p in signature.parameters}
    params = parse_args(args, text, switches, PARAMETERS.get(module, {}), aliases)
    open_keywords = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    for key in params:
        if key not in signature.parameters and not (open_keywords and key in PARAMETERS.get(module, {})):
            accepted = ", ".join(f"--{p}" for p in signature.parameters if signature.parameters[p].kind != inspect.Parameter.VAR_KEYWORD)
            also = f" (also {', '.join(f'--{a} for --{p}' for a, p in aliases.items())})" if aliases else ""
            extra = f", and the scheme's own: {', '.join('--' + k for k in PARAMETERS.get(module, {}) if k not in signature.parameters)}" if open_keywords else ""
            raise ModelError(f"{full} has no parameter --{key}; it takes {accepted}{extra}{also}")
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
