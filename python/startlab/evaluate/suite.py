"""Evaluation suites: a population of paths and workloads, written as data (``suites/*.toml``),
checked strictly, and sampled deterministically from the suite's seed.

A suite file::

    [suite]
    name = "quick"
    version = "1"                  # bumped whenever a range or a workload changes
    seed = 36                      # the suite's seed: the same paths on every machine
    seeds = 2                      # runs per path and workload item, each with its own seed
    baselines = ["slow-start", "hystart-linux", "hystart++", "search", "bbr-startup"]
    max_duration = "300s"          # no run simulates longer (a transfer not done by then is censored)
    limits = { max_wall = "10min", max_memory = "2GiB" }   # per-run guards (docs/SWEEPS.md)

    [[paths]]                      # one class of paths (a region of the report)
    class = "wired"
    count = 6                      # paths drawn from the ranges below
    source = "why these ranges, and where they come from"
    rate = { log-uniform = ["1Mbps", "1Gbps"] }     # a value, or uniform / log-uniform / choice
    rtt = { log-uniform = ["5ms", "600ms"] }
    buffer = { uniform = [0.1, 4.0] }                # x BDP
    queue = { choice = ["droptail", "codel", "fq-codel", "pie", "dualpi2"] }
    ecn = false
    loss = 0.0                     # random loss on the bottleneck, a probability
    jitter = "0ms"                 # the receiver's access link: uniform extra delay up to this
    ack_aggregation = "0ms"        # ACKs released every this (Wi-Fi-like), 0: off
    # instead of the ranges: table = [ { rate = "6.25Mbps", rtt = "304ms", buffer = "362pkt", loss = 0.0025 }, ... ]
    # and trace = { kind = "cellular" | "wifi", mean_rate = RANGE } or trace = { dir = "traces/" }

    [[workloads]]
    kind = "transfer"              # one transfer per size bucket: its flow completion time
    sizes = ["10KB", "100KB", "1MB"]
    source = "..."

Every error names the key path (``paths[1].rate.log-uniform``) and what is accepted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..sweep.file import RATE_UNITS, SIZE_UNITS, TIME_UNITS, Limits, SweepError, parse_limits

#: A number with a unit: "10Mbps", "0.5ms", "362pkt".
_QUANTITY = re.compile(r"^\s*([-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z%]*)\s*$")

#: The directory of the suites that ship with startlab.
SUITES_DIR = Path(__file__).parent / "suites"

#: Queue kinds a path may draw (the simulator's, docs/QUEUES.md).
QUEUE_KINDS = ("droptail", "codel", "fq-codel", "pie", "dualpi2")

#: Workload kinds and the keys each takes (besides ``kind`` and ``source``).
WORKLOAD_KEYS: dict[str, set[str]] = {
    "transfer": {"sizes"},
    "join": {"incumbents", "incumbent_startup", "join_after_rtts", "min_join", "window_rtts", "min_window", "max_rate"},
    "web": {"response", "count", "think", "request"},
    "many": {"flows", "size", "max_rate"},
}

_SUITE_KEYS = {"name", "version", "seed", "seeds", "baselines", "description", "max_duration", "limits"}
_PATH_KEYS = {"class", "count", "source", "rate", "rtt", "buffer", "queue", "ecn", "loss", "jitter", "ack_aggregation", "table", "trace"}
_ROW_KEYS = {"rate", "rtt", "buffer", "queue", "ecn", "loss", "jitter", "ack_aggregation", "name"}
_DISTRIBUTIONS = ("uniform", "log-uniform", "choice")


class SuiteError(ValueError):
    """A suite that cannot be used; the message names the key path and what is accepted."""


@dataclass(frozen=True)
class PathSpec:
    """One sampled path: a dumbbell bottleneck with its queue and impairments."""

    id: str  # "<class>-<index>", stable for a suite version and seed
    path_class: str
    rate_bps: int
    rtt_s: float
    buffer_bdp: float | None  # the buffer in BDPs, or None when given in packets
    buffer_pkts: int
    queue: str
    ecn: bool
    loss: float
    jitter_s: float
    aggregation_s: float
    trace: str | None = None  # a Mahimahi trace file for the bottleneck's forward direction
    trace_spec: dict[str, Any] | None = None  # how to generate it (kind, mean rate, seed), or None for a user file

    @property
    def bdp_bytes(self) -> float:
        return self.rate_bps * self.rtt_s / 8

    def describe(self) -> str:
        parts = [f"{self.rate_bps / 1e6:.4g} Mbit/s", f"{self.rtt_s * 1e3:.4g} ms", f"{self.queue} {self.buffer_pkts} pkt"]
        if self.buffer_bdp is not None:
            parts[-1] += f" ({self.buffer_bdp:.2g} BDP)"
        if self.ecn:
            parts.append("ECN")
        if self.loss:
            parts.append(f"loss {self.loss * 100:.3g} %")
        if self.jitter_s:
            parts.append(f"jitter {self.jitter_s * 1e3:.3g} ms")
        if self.aggregation_s:
            parts.append(f"ACKs every {self.aggregation_s * 1e3:.3g} ms")
        if self.trace_spec is not None:
            parts.append(f"{self.trace_spec['kind']} trace")
        elif self.trace is not None:
            parts.append(f"trace {Path(self.trace).name}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Workload:
    """One workload of a suite: its kind, its items (size buckets, incumbent counts...) and options."""

    kind: str
    items: tuple[str, ...]
    options: dict[str, Any]
    source: str


@dataclass
class Suite:
    """A parsed suite file."""

    name: str
    version: str
    seed: int
    seeds: int
    baselines: list[str]
    description: str
    max_duration: float
    path_classes: list[dict[str, Any]]
    workloads: list[Workload]
    text: str
    file: str
    base_dir: Path
    limits: Limits = field(default_factory=Limits)  # per-run guards, as a sweep's (docs/SWEEPS.md)
    _paths: list[PathSpec] | None = field(default=None, repr=False)

    @property
    def identity(self) -> dict[str, Any]:
        """What pins a suite's runs: its name, version, seed and the SHA-256 of its text."""
        return {"name": self.name, "version": self.version, "seed": self.seed, "seeds": self.seeds,
                "sha256": hashlib.sha256(self.text.encode()).hexdigest()}  # fmt: skip

    def paths(self) -> list[PathSpec]:
        """Every path of the suite, drawn from its seed (the same list on every machine)."""
        if self._paths is None:
            self._paths = [p for i, c in enumerate(self.path_classes) for p in _draw_class(c, self.seed, f"paths[{i}]", self.base_dir)]
        return self._paths


def suite_names() -> list[str]:
    """The suites that ship with startlab (``quick``, ``standard``, ``full``)."""
    return sorted(p.stem for p in SUITES_DIR.glob("*.toml"))


def load(name_or_file: str | Path) -> Suite:
    """A shipped suite by name, or a suite file by path."""
    text_name = str(name_or_file)
    path = SUITES_DIR / f"{text_name}.toml" if text_name in suite_names() else Path(text_name)
    if not path.is_file():
        raise SuiteError(f"unknown suite {text_name!r}: expected one of {', '.join(suite_names())} or a suite file (.toml)")
    text = path.read_text(encoding="utf-8")
    return parse(text, file=str(path), base_dir=path.resolve().parent)


def parse(text: str, *, file: str = "<suite>", base_dir: Path | None = None) -> Suite:
    """Parse and check a suite's TOML text; draw nothing yet (``Suite.paths`` does)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SuiteError(f"{file}: not valid TOML ({e})") from None
    _only(doc, {"suite", "paths", "workloads"}, "")
    head = doc.get("suite")
    if not isinstance(head, dict):
        raise SuiteError("suite: required, a table with name, version, seed, seeds, baselines")
    _only(head, _SUITE_KEYS, "suite")
    name = _text(head, "name", "suite", required=True)
    version = str(head.get("version", "")).strip()
    if not version:
        raise SuiteError("suite.version: required, text (bump it whenever a range or a workload changes)")
    seed = head.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise SuiteError(f"suite.seed = {seed!r}: expected a non-negative integer")
    seeds = head.get("seeds", 1)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 1000:
        raise SuiteError(f"suite.seeds = {seeds!r}: expected an integer from 1 to 1000 (runs per path and workload item)")
    baselines = head.get("baselines", [])
    if not isinstance(baselines, list) or not baselines or not all(isinstance(b, str) and b for b in baselines):
        raise SuiteError(f"suite.baselines = {baselines!r}: expected a non-empty list of algorithm names")
    max_duration = amount(head.get("max_duration", "600s"), TIME_UNITS, "suite.max_duration", positive=True)
    limits = Limits()
    if "limits" in head:
        if not isinstance(head["limits"], dict):
            raise SuiteError("suite.limits: expected a table such as { max_wall = \"10min\", max_memory = \"2GiB\" }")
        try:
            limits = parse_limits(head["limits"], "suite.limits")
        except SweepError as e:
            raise SuiteError(str(e)) from None
    raw_paths = doc.get("paths")
    if not isinstance(raw_paths, list) or not raw_paths:
        raise SuiteError("paths: required, a list of [[paths]] tables (path classes)")
    classes = []
    seen: set[str] = set()
    for i, table in enumerate(raw_paths):
        where = f"paths[{i}]"
        checked = _check_class(table, where, base_dir or Path.cwd())
        if checked["class"] in seen:
            raise SuiteError(f"{where}.class = {checked['class']!r}: another path class has this name")
        seen.add(checked["class"])
        classes.append(checked)
    raw_work = doc.get("workloads")
    if not isinstance(raw_work, list) or not raw_work:
        raise SuiteError("workloads: required, a list of [[workloads]] tables")
    workloads = [_workload(t, f"workloads[{i}]") for i, t in enumerate(raw_work)]
    kinds = [w.kind for w in workloads]
    if len(set(kinds)) != len(kinds):
        raise SuiteError(f"workloads: each kind at most once (got {', '.join(kinds)})")
    suite = Suite(
        name=name, version=version, seed=seed, seeds=seeds, baselines=list(baselines), description=str(head.get("description", "")),
        max_duration=max_duration, path_classes=classes, workloads=workloads, text=text, file=file,
        base_dir=base_dir or Path.cwd(), limits=limits,
    )  # fmt: skip
    # Draw now: a range that cannot be sampled is refused before anything runs.
    suite.paths()
    return suite


# ----------------------------------------------------------------------------------------------
# Checking


def _only(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            path = f"{where}.{key}" if where else key
            raise SuiteError(f"{path}: unknown key; expected one of {', '.join(sorted(allowed))}")


def _text(table: Mapping[str, Any], key: str, where: str, required: bool = False) -> str:
    value = table.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise SuiteError(f"{where}.{key}: required, non-empty text")
    return value.strip()


def amount(value: Any, units: Mapping[str, float], where: str, positive: bool = False) -> float:
    """A number with one of ``units`` ("10Mbps", "20ms"), in the base unit; 0 allowed unless ``positive``."""
    if isinstance(value, str) and (m := _QUANTITY.match(value)) and m.group(2).lower() in units:
        number = float(m.group(1).replace("_", "")) * units[m.group(2).lower()]
    else:
        raise SuiteError(f"{where} = {value!r}: expected an amount with a unit ({', '.join(units)})")
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        raise SuiteError(f"{where} = {value!r}: must be {'positive' if positive else 'at least 0'}")
    return number


def _number(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not low <= value <= high:
        raise SuiteError(f"{where} = {value!r}: expected a number from {low:g} to {high:g}")
    return float(value)


#: How each path field is read: a function (value, where) -> number or text.
def _field_reader(name: str) -> Any:
    return {
        "rate": lambda v, w: amount(v, RATE_UNITS, w, positive=True),
        "rtt": lambda v, w: amount(v, TIME_UNITS, w, positive=True),
        "buffer": lambda v, w: _number(v, w, 1e-3, 1e3),
        "loss": lambda v, w: _number(v, w, 0.0, 0.5),
        "jitter": lambda v, w: amount(v, TIME_UNITS, w),
        "ack_aggregation": lambda v, w: amount(v, TIME_UNITS, w),
        "queue": _queue,
        "ecn": _flag,
    }[name]


def _queue(value: Any, where: str) -> str:
    if value not in QUEUE_KINDS:
        raise SuiteError(f"{where} = {value!r}: expected one of {', '.join(QUEUE_KINDS)}")
    return str(value)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise SuiteError(f"{where} = {value!r}: expected true or false")
    return value


#: A field's default when a class does not give it.
_DEFAULTS: dict[str, Any] = {"queue": "droptail", "ecn": False, "loss": 0.0, "jitter": "0ms", "ack_aggregation": "0ms"}


def _range(value: Any, name: str, where: str) -> dict[str, Any]:
    """A field of a path class as {"fixed": v} or {"dist": d, "values": [...]}, each value read."""
    read = _field_reader(name)
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in _DISTRIBUTIONS:
            raise SuiteError(f"{where}: expected one of {{ uniform = [LOW, HIGH] }}, {{ log-uniform = [LOW, HIGH] }}, {{ choice = [...] }}, or a value")
        dist, spec = next(iter(value.items()))
        at = f"{where}.{dist}"
        if not isinstance(spec, list) or not spec:
            raise SuiteError(f"{at} = {spec!r}: expected a non-empty list")
        values = [read(v, f"{at}[{j}]") for j, v in enumerate(spec)]
        if dist != "choice":
            if name in ("queue", "ecn"):
                raise SuiteError(f"{at}: {name} is drawn with choice = [...], not a continuous range")
            if len(values) != 2:
                raise SuiteError(f"{at} = {spec!r}: expected [LOW, HIGH], two values")
            low, high = values
            if not low <= high:
                raise SuiteError(f"{at} = {spec!r}: cannot be sampled, LOW is above HIGH")
            if dist == "log-uniform" and low <= 0:
                raise SuiteError(f"{at} = {spec!r}: cannot be sampled log-uniformly, LOW must be above 0")
        return {"dist": dist, "values": values}
    return {"fixed": read(value, where)}


def _check_class(table: Any, where: str, base_dir: Path) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise SuiteError(f"{where}: expected a table")
    _only(table, _PATH_KEYS, where)
    out: dict[str, Any] = {"class": _text(table, "class", where, required=True), "source": _text(table, "source", where, required=True)}
    if "table" in table:
        rows = table["table"]
        if not isinstance(rows, list) or not rows:
            raise SuiteError(f"{where}.table: expected a non-empty list of paths")
        clash = sorted(k for k in ("rate", "rtt", "buffer", "count", "trace") if k in table)
        if clash:
            raise SuiteError(f"{where}.{clash[0]}: not with table (each row gives its own)")
        checked_rows = []
        for j, row in enumerate(rows):
            at = f"{where}.table[{j}]"
            if not isinstance(row, dict):
                raise SuiteError(f"{at}: expected a table")
            _only(row, _ROW_KEYS, at)
            for need in ("rate", "rtt", "buffer"):
                if need not in row:
                    raise SuiteError(f"{at}.{need}: required in a table row")
            checked = {"rate": _field_reader("rate")(row["rate"], f"{at}.rate"), "rtt": _field_reader("rtt")(row["rtt"], f"{at}.rtt")}
            checked["buffer_pkts"] = _packets(row["buffer"], f"{at}.buffer")
            for key in ("queue", "ecn", "loss", "jitter", "ack_aggregation"):
                checked[key] = _field_reader(key)(row.get(key, table.get(key, _DEFAULTS[key])), f"{at}.{key}")
            checked["name"] = str(row.get("name", ""))
            checked_rows.append(checked)
        out["table"] = checked_rows
        return out
    count = table.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 100_000:
        raise SuiteError(f"{where}.count = {count!r}: expected the number of paths to draw, 1 to 100000")
    out["count"] = count
    trace = table.get("trace")
    if trace is not None:
        out["trace"] = _trace(trace, f"{where}.trace", base_dir)
        if "rate" in table:
            raise SuiteError(f"{where}.rate: not with trace (the trace's mean rate is the path's rate)")
    elif "rate" not in table:
        raise SuiteError(f"{where}.rate: required (or table, or trace)")
    for key in ("rtt", "buffer"):
        if key not in table:
            raise SuiteError(f"{where}.{key}: required")
    for key in ("rate", "rtt", "buffer", "queue", "ecn", "loss", "jitter", "ack_aggregation"):
        if key in table or key in _DEFAULTS:
            out[key] = _range(table.get(key, _DEFAULTS.get(key)), key, f"{where}.{key}")
    return out


def _packets(value: Any, where: str) -> int:
    if isinstance(value, str) and (m := _QUANTITY.match(value)) and m.group(2) == "pkt":
        number = float(m.group(1).replace("_", ""))
        if number >= 0 and number == int(number):
            return int(number)
    raise SuiteError(f"{where} = {value!r}: expected a whole number of packets such as \"362pkt\"")


def _trace(trace: Any, where: str, base_dir: Path) -> dict[str, Any]:
    if not isinstance(trace, dict):
        raise SuiteError(f"{where}: expected {{ kind = \"cellular\" | \"wifi\", mean_rate = RANGE }} or {{ dir = \"DIRECTORY\" }}")
    if "dir" in trace:
        _only(trace, {"dir"}, where)
        directory = Path(str(trace["dir"]))
        directory = directory if directory.is_absolute() else base_dir / directory
        files = sorted(p for p in directory.glob("*") if p.is_file()) if directory.is_dir() else []
        if not files:
            raise SuiteError(f"{where}.dir = {trace['dir']!r}: no trace files in {directory}")
        return {"files": [str(p.resolve()) for p in files]}
    _only(trace, {"kind", "mean_rate"}, where)
    from .traces import KINDS

    if trace.get("kind") not in KINDS:
        raise SuiteError(f"{where}.kind = {trace.get('kind')!r}: expected one of {', '.join(KINDS)}")
    if "mean_rate" not in trace:
        raise SuiteError(f"{where}.mean_rate: required (a rate or a range of rates)")
    return {"kind": trace["kind"], "mean_rate": _range(trace["mean_rate"], "rate", f"{where}.mean_rate")}


def _workload(table: Any, where: str) -> Workload:
    if not isinstance(table, dict):
        raise SuiteError(f"{where}: expected a table")
    kind = table.get("kind")
    if kind not in WORKLOAD_KEYS:
        raise SuiteError(f"{where}.kind = {kind!r}: expected one of {', '.join(WORKLOAD_KEYS)}")
    _only(table, WORKLOAD_KEYS[kind] | {"kind", "source"}, where)
    source = _text(table, "source", where, required=True)
    opts: dict[str, Any] = {}
    if kind == "transfer":
        sizes = table.get("sizes")
        if not isinstance(sizes, list) or not sizes:
            raise SuiteError(f"{where}.sizes: required, a list of sizes such as [\"10KB\", \"1MB\"] (one bucket each)")
        values = [amount(s, SIZE_UNITS, f"{where}.sizes[{j}]", positive=True) for j, s in enumerate(sizes)]
        if len(set(values)) != len(values):
            raise SuiteError(f"{where}.sizes: a size is repeated")
        opts["sizes"] = dict(zip((str(s) for s in sizes), values))
        items = tuple(str(s) for s in sizes)
    elif kind == "join":
        counts = table.get("incumbents", [1])
        if not isinstance(counts, list) or not counts or not all(isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= 64 for c in counts):
            raise SuiteError(f"{where}.incumbents = {counts!r}: expected a list of incumbent counts, each 1 to 64")
        opts["incumbent_startup"] = table.get("incumbent_startup", "hystart-linux")
        if not isinstance(opts["incumbent_startup"], str):
            raise SuiteError(f"{where}.incumbent_startup: expected an algorithm name")
        opts["join_after_rtts"] = _number(table.get("join_after_rtts", 30), f"{where}.join_after_rtts", 1, 10_000)
        opts["window_rtts"] = _number(table.get("window_rtts", 20), f"{where}.window_rtts", 1, 10_000)
        opts["min_join"] = amount(table.get("min_join", "1s"), TIME_UNITS, f"{where}.min_join")
        opts["min_window"] = amount(table.get("min_window", "2s"), TIME_UNITS, f"{where}.min_window", positive=True)
        opts["max_rate"] = amount(table.get("max_rate", "10Gbps"), RATE_UNITS, f"{where}.max_rate", positive=True)
        items = tuple(f"{c} incumbent{'s' if c > 1 else ''}" for c in counts)
        opts["counts"] = dict(zip(items, counts))
    elif kind == "web":
        response = table.get("response", {"dist": "pareto", "mean": "50KB", "shape": 1.2, "cutoff": "10MB"})
        if not isinstance(response, dict) or "dist" not in response:
            raise SuiteError(f"{where}.response: expected a size law such as {{ dist = \"pareto\", mean = \"50KB\", shape = 1.2, cutoff = \"10MB\" }}")
        count = table.get("count", 20)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10_000:
            raise SuiteError(f"{where}.count = {count!r}: expected the exchanges per connection, 1 to 10000")
        opts.update(response=response, count=count, think=amount(table.get("think", "500ms"), TIME_UNITS, f"{where}.think", positive=True),
                    request=amount(table.get("request", "300B"), SIZE_UNITS, f"{where}.request", positive=True))  # fmt: skip
        items = ("web",)
    else:  # many
        counts = table.get("flows", [10])
        if not isinstance(counts, list) or not counts or not all(isinstance(c, int) and not isinstance(c, bool) and 2 <= c <= 1000 for c in counts):
            raise SuiteError(f"{where}.flows = {counts!r}: expected a list of flow counts, each 2 to 1000")
        opts["size"] = amount(table.get("size", "1MB"), SIZE_UNITS, f"{where}.size", positive=True)
        opts["max_rate"] = amount(table.get("max_rate", "10Gbps"), RATE_UNITS, f"{where}.max_rate", positive=True)
        items = tuple(f"{c} flows" for c in counts)
        opts["counts"] = dict(zip(items, counts))
    return Workload(str(kind), items, opts, source)


# ----------------------------------------------------------------------------------------------
# Drawing


def stream(*parts: Any) -> np.random.Generator:
    """A random stream named by ``parts`` (the suite's seed first): NumPy's PCG64 seeded by a
    BLAKE2b digest, so the same names give the same numbers on every machine and worker."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return np.random.Generator(np.random.PCG64(int.from_bytes(hashlib.blake2b(text.encode(), digest_size=16).digest(), "big")))


def _draw(spec: dict[str, Any], count: int, rng: np.random.Generator) -> list[Any]:
    if "fixed" in spec:
        return [spec["fixed"]] * count
    values = spec["values"]
    if spec["dist"] == "choice":
        return [values[int(i)] for i in rng.integers(0, len(values), size=count)]
    low, high = values
    if spec["dist"] == "uniform":
        return [float(x) for x in rng.uniform(low, high, size=count)]
    return [float(x) for x in np.exp(rng.uniform(math.log(low), math.log(high), size=count))]


def _round(x: float, digits: int = 4) -> float:
    """``x`` to ``digits`` significant digits (paths read well in the report, and stay exact in text)."""
    return float(f"{x:.{digits}g}")


def _draw_class(spec: dict[str, Any], seed: int, where: str, base_dir: Path) -> list[PathSpec]:
    name = spec["class"]
    if "table" in spec:
        return [
            PathSpec(id=f"{name}-{i}", path_class=name, rate_bps=int(round(r["rate"])), rtt_s=r["rtt"], buffer_bdp=None,
                     buffer_pkts=max(1, r["buffer_pkts"]), queue=r["queue"], ecn=r["ecn"], loss=r["loss"], jitter_s=r["jitter"],
                     aggregation_s=r["ack_aggregation"])  # fmt: skip
            for i, r in enumerate(spec["table"])
        ]
    count = spec["count"]
    drawn = {key: _draw(spec[key], count, stream(seed, name, key)) for key in ("rtt", "buffer", "queue", "ecn", "loss", "jitter", "ack_aggregation")}
    trace = spec.get("trace")
    traces: list[str | None] = [None] * count
    trace_specs: list[dict[str, Any] | None] = [None] * count
    if trace is None:
        rates = [float(r) for r in _draw(spec["rate"], count, stream(seed, name, "rate"))]
    elif "files" in trace:
        from .traces import trace_stats

        picks = _draw({"dist": "choice", "values": trace["files"]}, count, stream(seed, name, "trace"))
        traces = list(picks)
        rates = []
        for file in picks:
            try:
                rates.append(trace_stats(Path(file)).mean_rate_bps)
            except ValueError as e:
                raise SuiteError(f"{where}.trace.dir: {e}") from None
    else:
        from .traces import TRACE_SECONDS, generate, stats

        asked = [_round(float(r)) for r in _draw(trace["mean_rate"], count, stream(seed, name, "trace-rate"))]
        trace_specs = [{"kind": trace["kind"], "mean_rate_bps": r, "seed": int(stream(seed, name, "trace-seed", i).integers(0, 2**53))}
                       for i, r in enumerate(asked)]  # fmt: skip
        # The path's rate is what its trace delivers on average (measured), not the rate asked for.
        rates = [stats(generate(t["kind"], t["mean_rate_bps"], TRACE_SECONDS, t["seed"])).mean_rate_bps for t in trace_specs]
    out = []
    for i in range(count):
        rate = int(round(_round(rates[i])))
        rtt = _round(drawn["rtt"][i])
        buffer = _round(drawn["buffer"][i], 3)
        if rate < 10_000:
            raise SuiteError(f"{where}.rate: drew {rate} bit/s; a path needs at least 10 kbit/s")
        pkts = max(1, int(round(buffer * rate * rtt / 8 / 1500)))
        out.append(PathSpec(
            id=f"{name}-{i}", path_class=name, rate_bps=rate, rtt_s=rtt, buffer_bdp=buffer, buffer_pkts=pkts, queue=drawn["queue"][i],
            ecn=drawn["ecn"][i], loss=_round(drawn["loss"][i], 3), jitter_s=_round(drawn["jitter"][i], 3),
            aggregation_s=_round(drawn["ack_aggregation"][i], 3), trace=traces[i], trace_spec=trace_specs[i],
        ))  # fmt: skip
    return out

