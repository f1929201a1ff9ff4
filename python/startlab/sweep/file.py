"""Sweep files: a base scenario, axes and replicates, expanded into the list of runs.

A sweep file is TOML::

    [sweep]
    name = "fig8"                      # default: the file's stem
    base = "../paced-start-past.toml"  # or an inline [base] table
    set = { duration = "20s" }         # fixed changes to the base, any keys (before the axes)
    seed = 1                           # the sweep's seed (default 1)
    replicates = 3                     # runs per grid point, each with its own seed (default 1)
    limits = { max_events = 50_000_000, max_sim_time = "600s", max_memory = "2GiB", max_wall = "10min" }
    traces = false                     # store cwnd/seq/queue traces as Parquet files
    dask = "tcp://10.0.0.1:8786"       # optional: run on this Dask scheduler by default

    [[axis]]                           # a list of values
    name = "algorithm"                 # the column in the results (default: the key's last part)
    key = "flows[0].startup.algorithm" # any scenario key; [*] for every element, or a list of keys
    values = ["paced-start", "slow-start"]

    [[axis]]                           # a range with units: step, or count (linear or log)
    name = "cbw"
    key = "cross[0].rate"
    range = { from = "0Mbps", to = "90Mbps", step = "10Mbps" }

    [[axis]]                           # zipped lists advance together (one axis of the grid)
    zip = [ { name = "rtt", key = "topology.rtt", values = ["20ms", "200ms"] },
            { name = "queue", key = "topology.queue.limit", values = ["250pkt", "2500pkt"] } ]

    [[axis]]                           # random samples, drawn from the sweep's seed
    name = "size"
    key = "flows[0].size"
    sample = { distribution = "log-uniform", low = "10KB", high = "10MB", count = 20 }

The grid is the product of the axes (the first axis varies slowest). Each run's seed derives from
the sweep's seed, the run's axis values and its replicate number (never from the order in which
runs are executed), so any backend and any number of workers give the same results.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np


#: A Dask scheduler address: an optional protocol, a host and a port.
DASK_ADDRESS = re.compile(r"^(?:[a-z]+://)?[^\s:/]+:[0-9]+$")


class SweepError(ValueError):
    """A sweep file that cannot be used; the message names the key and what is accepted."""


#: A number with an optional unit suffix: "10Mbps", "0.5", "200ms", "1e3pkt".
_QUANTITY = re.compile(r"^\s*([-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ%]*)\s*$")

#: Keys of the tables; range and sample ends may mix units of one kind (10KB .. 10MB), and the
#: values are written in the unit of the first end.
_SWEEP_KEYS = {"name", "base", "set", "seed", "replicates", "limits", "traces", "dask"}
_AXIS_KEYS = {"name", "key", "values", "range", "sample", "zip"}
#: The per-run limits, in the order the command line lists them.
LIMIT_KEYS = ("max_events", "max_sim_time", "max_memory", "max_wall")
_LIMIT_KEYS = set(LIMIT_KEYS)
SIZE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
RATE_UNITS = {"bps": 1, "kbps": 10**3, "mbps": 10**6, "gbps": 10**9}
#: max_wall also takes hours.
WALL_UNITS = {**TIME_UNITS, "h": 3600.0}


def _in_unit(number: Decimal, unit: str, target: str, where: str) -> Decimal:
    """``number`` ``unit`` expressed in ``target`` (both sizes, durations or rates)."""
    if unit == target:
        return number
    for family in (SIZE_UNITS, TIME_UNITS, RATE_UNITS):
        if unit.lower() in family and target.lower() in family:
            return number * Decimal(str(family[unit.lower()])) / Decimal(str(family[target.lower()]))
    raise SweepError(f"{where}: {unit or 'no unit'!s} cannot be converted to {target or 'no unit'!s}; use one unit, or sizes, durations or rates")


@dataclass(frozen=True)
class Column:
    """One column of the results that an axis sets: its name, the scenario keys it writes, the
    values in grid order (as written into the scenario) and how they are stored."""

    name: str
    keys: tuple[str, ...]
    values: tuple[Any, ...]
    kind: str  # "values" | "range" | "sample" | "zip"
    unit: str | None
    type: str  # "DOUBLE" | "BIGINT" | "BOOLEAN" | "VARCHAR"

    def stored(self, value: Any) -> Any:
        """The value as stored in the results column (a number in the axis unit for quantities)."""
        if self.type in ("DOUBLE", "BIGINT"):
            number = _number(value)
            return int(number) if self.type == "BIGINT" else float(number)
        if self.type == "BOOLEAN":
            return bool(value)
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: one column, or several zipped columns of equal length."""

    columns: tuple[Column, ...]

    def __len__(self) -> int:
        return len(self.columns[0].values)


@dataclass(frozen=True)
class Limits:
    """Per-run resource guards (None: no limit); ``max_sim_time`` and ``max_wall`` in seconds,
    ``max_memory`` in bytes."""

    max_events: int | None = None
    max_sim_time: float | None = None
    max_memory: int | None = None
    max_wall: float | None = None


@dataclass(frozen=True)
class RunSpec:
    """One run of the sweep: its grid point, replicate, seed, axis values and scenario."""

    point: int
    replicate: int
    seed: int
    values: dict[str, Any]  # column name -> stored value
    scenario: dict[str, Any]


@dataclass
class Sweep:
    """A parsed sweep file."""

    name: str
    seed: int
    replicates: int
    base: dict[str, Any]
    base_dir: str | None
    axes: list[Axis]
    limits: Limits
    traces: bool
    dask: str | None
    source: str
    columns: list[Column] = field(init=False)

    def __post_init__(self) -> None:
        self.columns = [c for a in self.axes for c in a.columns]

    @property
    def points(self) -> int:
        return math.prod(len(a) for a in self.axes) if self.axes else 1

    def runs(self) -> list[RunSpec]:
        """Every run, grid point by grid point (first axis slowest), replicates innermost."""
        out = []
        choices = itertools.product(*(range(len(a)) for a in self.axes))
        for point, picks in enumerate(choices):
            scenario = copy.deepcopy(self.base)
            values: dict[str, Any] = {}
            identity: dict[str, Any] = {}
            for axis, i in zip(self.axes, picks):
                for column in axis.columns:
                    value = column.values[i]
                    for key in column.keys:
                        set_key(scenario, key, value)
                    values[column.name] = column.stored(value)
                    identity[column.name] = value
            explicit_seed = "seed" in (k for c in self.columns for k in c.keys)
            for replicate in range(self.replicates):
                run = copy.deepcopy(scenario) if self.replicates > 1 else scenario
                seed = int(run["seed"]) if explicit_seed else derive_seed(self.seed, identity, replicate)
                run["seed"] = seed
                out.append(RunSpec(point, replicate, seed, dict(values), run))
        return out


def derive_seed(sweep_seed: int, identity: Mapping[str, Any], replicate: int) -> int:
    """A run's seed: a hash of the sweep's seed, the run's axis values (by name) and its
    replicate number, below 2^53 (exact in JSON and in a float column)."""
    text = json.dumps({"seed": sweep_seed, "point": identity, "replicate": replicate}, sort_keys=True, default=str)
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 11


def load(path: str | Path) -> Sweep:
    """Read and check a sweep file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(f"sweep file not found: {file}") from None
    except UnicodeDecodeError as e:
        raise SweepError(f"{file}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return parse(text, base_dir=file.resolve().parent, default_name=file.stem)


def parse(text: str, base_dir: str | Path | None = None, default_name: str = "sweep") -> Sweep:
    """Check a sweep given as TOML text; relative paths resolve against ``base_dir``."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"the sweep file is not valid TOML: {e}") from None
    return parse_document(doc, text, base_dir, default_name)


def parse_document(doc: Mapping[str, Any], text: str, base_dir: str | Path | None = None, default_name: str = "sweep") -> Sweep:
    """Check a sweep given as the parsed TOML document ``doc``; ``text`` is the source stored
    with its runs."""
    unknown = set(doc) - {"sweep", "axis", "base"}
    if unknown:
        raise SweepError(f"unknown top-level key {sorted(unknown)[0]!r}; expected [sweep], [base] and [[axis]]")
    head = doc.get("sweep")
    if not isinstance(head, dict):
        raise SweepError("[sweep]: missing; it names the base scenario (base = \"file.toml\" or a [base] table)")
    _only(head, _SWEEP_KEYS, "sweep")
    name = head.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise SweepError("sweep.name: expected a non-empty string")
    seed = head.get("seed", 1)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise SweepError(f"sweep.seed = {seed!r}: expected an integer from 0 to 2^63 - 1")
    replicates = head.get("replicates", 1)
    if not isinstance(replicates, int) or isinstance(replicates, bool) or not 1 <= replicates <= 100_000:
        raise SweepError(f"sweep.replicates = {replicates!r}: expected an integer from 1 to 100000")
    base, base_from = _base(head, doc, base_dir)
    fixed = _plain(head.get("set", {}), "sweep.set")
    if not isinstance(fixed, dict):
        raise SweepError("sweep.set: expected a table of scenario keys and values, such as { duration = \"20s\", \"flows[0].start_jitter\" = \"10ms\" }")
    for key, value in _flatten(fixed):
        if key == "seed":
            raise SweepError("sweep.set.seed: the runs' seeds derive from sweep.seed; set that (or make seed an axis)")
        try:
            set_key(base, key, value)
        except SweepError as e:
            raise SweepError(f"sweep.set: {e}") from None
    axes = _axes(doc.get("axis", []), seed, base)
    if replicates > 1 and any("seed" in c.keys for a in axes for c in a.columns):
        raise SweepError("sweep.replicates: an axis sets the seed, so replicates must be 1")
    traces = head.get("traces", False)
    if not isinstance(traces, bool):
        raise SweepError(f"sweep.traces = {traces!r}: expected true or false")
    dask = head.get("dask")
    if dask is not None and (not isinstance(dask, str) or not DASK_ADDRESS.match(dask)):
        raise SweepError(f"sweep.dask = {dask!r}: expected a scheduler address such as \"tcp://127.0.0.1:8786\"")
    sweep = Sweep(
        name=name, seed=seed, replicates=replicates, base=base, base_dir=base_from, axes=axes,
        limits=parse_limits(head.get("limits", {}), "sweep.limits"), traces=traces, dask=dask, source=text,
    )  # fmt: skip
    if sweep.points * replicates > 10_000_000:
        raise SweepError(f"the sweep has {sweep.points * replicates} runs; at most 10000000 are accepted")
    return sweep


def _flatten(table: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{ topology = { rtt = "20ms" } }`` (also TOML's dotted ``topology.rtt``) -> [("topology.rtt",
    "20ms")]: tables in ``set`` merge into the base instead of replacing its tables."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            out.extend(_flatten(value, f"{prefix}{key}."))
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _plain(value: Any, where: str) -> Any:
    """A TOML value a scenario can hold: no dates or times."""
    if isinstance(value, dict):
        return {k: _plain(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (str, int, float, bool)):
        return value
    raise SweepError(f"{where} = {value!r}: a {type(value).__name__} is not a scenario value; write it as text (\"10ms\") or a number")


def parse_limits(table: Any, where: str) -> Limits:
    """``max_events`` (a count), ``max_sim_time`` (seconds or "600s"), ``max_memory`` (bytes or
    "2GiB") and ``max_wall`` (seconds of wall time or "10min")."""
    if not isinstance(table, dict):
        raise SweepError(f"{where}: expected a table such as {{ max_events = 1e8, max_memory = \"2GiB\", max_wall = \"10min\" }}")
    _only(table, _LIMIT_KEYS, where)
    events = table.get("max_events")
    if events is not None:
        if isinstance(events, bool) or not isinstance(events, (int, float)) or not 1 <= events < 2**63:
            raise SweepError(f"{where}.max_events = {events!r}: expected a positive number of events")
        events = int(events)
    time = table.get("max_sim_time")
    if time is not None:
        time = parse_amount(time, TIME_UNITS, f"{where}.max_sim_time", "a duration such as \"600s\"")
    memory = table.get("max_memory")
    if memory is not None:
        memory = int(parse_amount(memory, SIZE_UNITS, f"{where}.max_memory", "a size such as \"2GiB\""))
    wall = table.get("max_wall")
    if wall is not None:
        wall = parse_amount(wall, WALL_UNITS, f"{where}.max_wall", "a wall-clock duration such as \"30s\" or \"10min\"")
    return Limits(max_events=events, max_sim_time=time, max_memory=memory, max_wall=wall)


def parse_amount(value: Any, units: Mapping[str, float], where: str, expected: str) -> float:
    """A positive number, or a number with one of ``units`` (case-insensitive)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and (m := _QUANTITY.match(value)) and m.group(2).lower() in units:
        number = float(m.group(1).replace("_", "")) * units[m.group(2).lower()]
    else:
        raise SweepError(f"{where} = {value!r}: expected {expected} ({', '.join(units)})")
    if not (math.isfinite(number) and number > 0):
        raise SweepError(f"{where} = {value!r}: must be positive")
    return number


def _base(head: Mapping[str, Any], doc: Mapping[str, Any], base_dir: str | Path | None) -> tuple[dict[str, Any], str | None]:
    here = Path(base_dir) if base_dir is not None else None
    inline = doc.get("base")
    if ("base" in head) == (inline is not None):
        raise SweepError("sweep.base: give exactly one base scenario, a file (base = \"file.toml\") or a [base] table")
    if inline is not None:
        if not isinstance(inline, dict):
            raise SweepError("[base]: expected a table holding a scenario")
        return copy.deepcopy(inline), str(here) if here else None
    ref = head["base"]
    if not isinstance(ref, str) or not ref:
        raise SweepError(f"sweep.base = {ref!r}: expected the path of a scenario file")
    path = Path(ref)
    if not path.is_absolute() and here is not None:
        path = here / path
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        raise SweepError(f"sweep.base: scenario file not found: {path}") from None
    except UnicodeDecodeError as e:
        raise SweepError(f"sweep.base: {path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        scenario = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise SweepError(f"sweep.base: {path} cannot be read: {e}") from None
    return scenario, str(path.resolve().parent)


def _axes(raw: Any, seed: int, base: dict[str, Any]) -> list[Axis]:
    if not isinstance(raw, list):
        raise SweepError("axis: expected [[axis]] tables")
    axes: list[Axis] = []
    for i, table in enumerate(raw):
        where = f"axis[{i}]"
        if not isinstance(table, dict):
            raise SweepError(f"{where}: expected a table")
        _only(table, _AXIS_KEYS, where)
        if "zip" in table:
            extra = set(table) - {"zip"}
            if extra:
                raise SweepError(f"{where}.{sorted(extra)[0]}: a zip axis holds only zip = [ {{ name, key, values | range | sample }}, ... ]")
            members = table["zip"]
            if not isinstance(members, list) or len(members) < 2:
                raise SweepError(f"{where}.zip: expected a list of at least two {{ name, key, values }} tables")
            columns = []
            for j, member in enumerate(members):
                if not isinstance(member, dict):
                    raise SweepError(f"{where}.zip[{j}]: expected a table")
                _only(member, _AXIS_KEYS - {"zip"}, f"{where}.zip[{j}]")
                columns.append(_column(member, f"{where}.zip[{j}]", seed, "zip"))
            lengths = {len(c.values) for c in columns}
            if len(lengths) != 1:
                raise SweepError(f"{where}.zip: the zipped lists must have one length; got {', '.join(str(len(c.values)) for c in columns)}")
            rows = [json.dumps(row, sort_keys=True) for row in zip(*(c.values for c in columns))]
            if len(set(rows)) != len(rows):
                raise SweepError(f"{where}.zip: a row of zipped values appears twice")
            axes.append(Axis(tuple(columns)))
        else:
            axes.append(Axis((_column(table, where, seed, None),)))
    # Column names in DuckDB ignore case.
    names = [c.name.lower() for a in axes for c in a.columns]
    reserved = {"key", "point", "replicate", "seed", "status", "error", "wall_s", "events", "sim_time_s", "warmup_end", "version", "scenario", "finished_at"}
    for column in (c for a in axes for c in a.columns):
        name = column.name
        if names.count(name.lower()) > 1:
            raise SweepError(f"axis name {name!r} is used twice (names ignore case); give each axis its own name = \"...\"")
        if name.lower() in reserved:
            raise SweepError(f"axis name {name!r} is a column of the runs table; choose another name = \"...\"")
    # Two axes writing one key would store values the run did not use.
    written: dict[str, str] = {}
    for column in (c for a in axes for c in a.columns):
        for key in column.keys:
            canonical = key.replace(" ", "")
            if canonical in written and written[canonical] != column.name:
                raise SweepError(f"axes {written[canonical]!r} and {column.name!r} both set {key!r}; one key, one axis")
            written[canonical] = column.name
        if "seed" in column.keys and not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 for v in column.values):
            raise SweepError(f"axis {column.name!r} sets the seed: its values must be integers from 0 to 2^63 - 1")
    for axis in axes:
        for column in axis.columns:
            for key in column.keys:
                probe = copy.deepcopy(base)
                try:
                    set_key(probe, key, column.values[0])
                except SweepError as e:
                    raise SweepError(f"axis {column.name!r}: {e}") from None
    return axes


def _column(table: Mapping[str, Any], where: str, seed: int, zipped: str | None) -> Column:
    keys = table.get("key")
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise SweepError(f"{where}.key: expected a scenario key such as \"topology.rtt\" or \"flows[0].startup.algorithm\", or a list of them")
    for key in keys:
        parse_key(key)
    name = table.get("name", _default_name(keys[0]))
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise SweepError(f"{where}.name = {name!r}: expected an identifier (letters, digits, _), used as a column name")
    given = [k for k in ("values", "range", "sample") if k in table]
    if len(given) != 1:
        raise SweepError(f"{where}: give exactly one of values = [...], range = {{ from, to, step | count }} or sample = {{ distribution, low, high, count }}")
    kind = given[0]
    if kind == "values":
        values = table["values"]
        if not isinstance(values, list) or not values:
            raise SweepError(f"{where}.values: expected a non-empty list")
        values = _plain(values, f"{where}.values")
        if zipped is None and len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
            raise SweepError(f"{where}.values: a value appears twice")
    elif kind == "range":
        values = _range(table["range"], f"{where}.range")
    else:
        values = _sample(table["sample"], f"{where}.sample", seed, name)
    unit, kind_type = _storage(values)
    return Column(name, tuple(keys), tuple(values), zipped or kind, unit, kind_type)


def _default_name(key: str) -> str:
    last = parse_key(key)[-1][0]
    return re.sub(r"[^A-Za-z0-9_]", "_", last)


def _storage(values: Sequence[Any]) -> tuple[str | None, str]:
    """The unit and column type of an axis's values."""
    if all(isinstance(v, bool) for v in values):
        return None, "BOOLEAN"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None, "BIGINT"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None, "DOUBLE"
    if all(isinstance(v, str) for v in values):
        matches = [_QUANTITY.match(v) for v in values]
        if all(matches):
            units = {m.group(2) for m in matches if m}
            if len(units) == 1:
                unit = units.pop()
                return unit or None, "DOUBLE"
    return None, "VARCHAR"


def _number(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    m = _QUANTITY.match(str(value))
    if not m:
        raise SweepError(f"{value!r} is not a number")
    return float(m.group(1).replace("_", ""))


def _split(value: Any, where: str) -> tuple[Decimal, str]:
    """A range end or step as (number, unit)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(repr(value)), ""
    if isinstance(value, str) and (m := _QUANTITY.match(value)):
        return Decimal(m.group(1).replace("_", "")), m.group(2)
    raise SweepError(f"{where} = {value!r}: expected a number, optionally with a unit (\"10Mbps\", \"20ms\", \"100pkt\")")


def _join(number: Decimal | float, unit: str, as_text: bool) -> Any:
    """A generated value: text with the unit when the range was written as text ("10Mbps"), else
    a plain number (an integer when it is whole and the range was given in decimals)."""
    exact = Decimal(str(number)) if not isinstance(number, Decimal) else number
    if as_text:
        return f"{format(exact.normalize(), 'f')}{unit}"
    whole = isinstance(number, Decimal) and exact == exact.to_integral_value()
    return int(exact) if whole else float(exact)


def _range(spec: Any, where: str) -> list[Any]:
    if not isinstance(spec, dict):
        raise SweepError(f"{where}: expected {{ from = ..., to = ..., step = ... }} or {{ from, to, count, scale = \"linear\" | \"log\" }}")
    _only(spec, {"from", "to", "step", "count", "scale"}, where)
    for k in ("from", "to"):
        if k not in spec:
            raise SweepError(f"{where}.{k}: missing")
    low, unit = _split(spec["from"], f"{where}.from")
    high, unit_to = _split(spec["to"], f"{where}.to")
    as_text = isinstance(spec["from"], str)
    if isinstance(spec["to"], str) != as_text:
        raise SweepError(f"{where}: from and to must both have units or both be numbers; got {spec['from']!r} and {spec['to']!r}")
    high = _in_unit(high, unit_to, unit, f"{where}.to")
    if high < low:
        raise SweepError(f"{where}: to ({spec['to']!r}) is below from ({spec['from']!r})")
    if ("step" in spec) == ("count" in spec):
        raise SweepError(f"{where}: give step or count, not both or neither")
    if "step" in spec:
        if "scale" in spec:
            raise SweepError(f"{where}.scale: only with count")
        step, unit_step = _split(spec["step"], f"{where}.step")
        if isinstance(spec["step"], str) != as_text:
            raise SweepError(f"{where}.step = {spec['step']!r}: expected a step with a unit, as from")
        step = _in_unit(step, unit_step, unit, f"{where}.step")
        if step <= 0:
            raise SweepError(f"{where}.step = {spec['step']!r}: expected a positive step in the unit of from ({unit or 'none'})")
        n = int((high - low) / step) + 1
        if n > 1_000_000:
            raise SweepError(f"{where}: {n} values; at most 1000000")
        return [_join(low + i * step, unit, as_text) for i in range(n)]
    count = spec["count"]
    if not isinstance(count, int) or isinstance(count, bool) or not 2 <= count <= 1_000_000:
        raise SweepError(f"{where}.count = {count!r}: expected an integer from 2 to 1000000")
    scale = spec.get("scale", "linear")
    if scale == "linear":
        grid = np.linspace(float(low), float(high), count)
    elif scale == "log":
        if low <= 0:
            raise SweepError(f"{where}: a log scale needs from > 0")
        grid = np.geomspace(float(low), float(high), count)
    else:
        raise SweepError(f"{where}.scale = {scale!r}: expected \"linear\" or \"log\"")
    values = [_join(float(f"{x:.12g}"), unit, as_text) for x in grid]
    if len({json.dumps(v) for v in values}) != len(values):
        raise SweepError(f"{where}: the {count} values are not distinct at 12 significant digits")
    return values


def _sample(spec: Any, where: str, seed: int, name: str) -> list[Any]:
    if not isinstance(spec, dict):
        raise SweepError(f"{where}: expected {{ distribution = \"uniform\" | \"log-uniform\" | \"integer\" | \"choice\", low, high | values, count }}")
    _only(spec, {"distribution", "low", "high", "values", "count"}, where)
    count = spec.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1_000_000:
        raise SweepError(f"{where}.count = {count!r}: expected an integer from 1 to 1000000")
    # Each sampled axis has its own stream: the sweep's seed and the axis name.
    entropy = int.from_bytes(hashlib.blake2b(f"{seed}/{name}".encode(), digest_size=16).digest(), "big")
    rng = np.random.Generator(np.random.PCG64(entropy))
    dist = spec.get("distribution", "uniform")
    if dist == "choice":
        choices = spec.get("values")
        if not isinstance(choices, list) or not choices:
            raise SweepError(f"{where}.values: a choice sample needs a non-empty list of values")
        return [choices[int(i)] for i in rng.integers(0, len(choices), size=count)]
    if dist not in ("uniform", "log-uniform", "integer"):
        raise SweepError(f"{where}.distribution = {dist!r}: expected \"uniform\", \"log-uniform\", \"integer\" or \"choice\"")
    for k in ("low", "high"):
        if k not in spec:
            raise SweepError(f"{where}.{k}: missing")
    low, unit = _split(spec["low"], f"{where}.low")
    high, unit_high = _split(spec["high"], f"{where}.high")
    as_text = isinstance(spec["low"], str)
    if isinstance(spec["high"], str) != as_text:
        raise SweepError(f"{where}: low and high must both have units or both be numbers; got {spec['low']!r} and {spec['high']!r}")
    high = _in_unit(high, unit_high, unit, f"{where}.high")
    if high <= low:
        raise SweepError(f"{where}: high must be above low")
    if dist == "integer":
        if low != low.to_integral_value() or high != high.to_integral_value():
            raise SweepError(f"{where}: an integer sample needs whole low and high")
        draws = rng.integers(int(low), int(high), size=count, endpoint=True)
        return [_join(Decimal(int(x)), unit, as_text) for x in draws]
    if dist == "log-uniform":
        if low <= 0:
            raise SweepError(f"{where}: a log-uniform sample needs low > 0")
        draws = np.exp(rng.uniform(math.log(float(low)), math.log(float(high)), size=count))
    else:
        draws = rng.uniform(float(low), float(high), size=count)
    return [_join(float(f"{x:.9g}"), unit, as_text) for x in draws]


_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[(?:[0-9]+|\*)\])*)$")


def parse_key(key: str) -> list[tuple[str, list[int | None]]]:
    """``flows[0].startup.algorithm`` -> [("flows", [0]), ("startup", []), ("algorithm", [])];
    ``[*]`` is None (every element)."""
    parts = []
    for segment in key.split("."):
        m = _SEGMENT.match(segment)
        if not m:
            raise SweepError(f"key {key!r}: {segment!r} is not a key; expected names joined by dots, with [N] or [*] after a list")
        indexes = [None if i == "*" else int(i) for i in re.findall(r"\[([0-9]+|\*)\]", m.group(2))]
        parts.append((m.group(1), indexes))
    return parts


def set_key(doc: dict[str, Any], key: str, value: Any) -> None:
    """Write ``value`` at ``key`` in a scenario dict (tables are created as needed; list
    elements must exist)."""
    _set(doc, parse_key(key), copy.deepcopy(value), key)


def _set(node: Any, parts: list[tuple[str, list[int | None]]], value: Any, key: str) -> None:
    name, indexes = parts[0]
    if not isinstance(node, dict):
        raise SweepError(f"key {key!r}: {name!r} is inside something that is not a table")
    last = len(parts) == 1
    if not indexes:
        if last:
            node[name] = copy.deepcopy(value)
        else:
            _set(node.setdefault(name, {}), parts[1:], value, key)
        return
    targets = [node.get(name)]
    for depth, index in enumerate(indexes):
        nxt = []
        for t in targets:
            if not isinstance(t, list):
                raise SweepError(f"key {key!r}: the base scenario has no list {name!r}" + ("" if depth == 0 else " at this depth"))
            if index is None:
                nxt.extend((t, i) for i in range(len(t)))
            elif index < len(t):
                nxt.append((t, index))
            else:
                raise SweepError(f"key {key!r}: {name}[{index}] does not exist; the base scenario has {len(t)} element(s) in {name!r}")
        if depth == len(indexes) - 1:
            for t, i in nxt:
                if last:
                    t[i] = copy.deepcopy(value)
                else:
                    _set(t[i], parts[1:], value, key)
            return
        targets = [t[i] for t, i in nxt]


def _only(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for k in table:
        if k not in allowed:
            raise SweepError(f"{where}.{k}: unknown key; expected {', '.join(sorted(allowed))}")
