"""The results of one run: per-flow and per-link tables, traces, plots and files.

Every number is computed by the native simulator (docs/RESULTS.md lists the columns and their
units); this module only reshapes the columns into pandas DataFrames, names integer ids, and draws.
NumPy and pandas are imported when a result is built, not with this module: ``import startlab`` and
``startlab run --json`` (:func:`native_json`) do without them.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

#: The columns of each trace (docs/RESULTS.md); a trace the scenario disabled is an empty table
#: with these columns.
TRACE_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "cwnd": ("time", "flow", "cwnd", "ssthresh", "cause"),
    "seq": ("time", "flow", "event", "seq", "len"),
    "queue": ("time", "link", "packets", "bytes", "red_avg", "sojourn"),
    "packets": ("time", "link", "event", "kind", "flow", "seq", "len", "size", "queue_packets", "queue_bytes"),
    "rtt": ("time", "flow", "rtt", "srtt", "rttvar", "min_rtt", "ack"),
    "startup": ("time", "flow", "signal", "value", "exit"),
}

#: A column named ``<name>_ns`` holds integer nanoseconds; it becomes ``<name>`` in float seconds.
_NS_SUFFIX = "_ns"


@dataclass(repr=False)
class Traces:
    """Time series recorded during a run, one row per change (decimated by ``[trace] interval``).

    Attributes:
        cwnd: ``time`` (s), ``flow``, ``cwnd`` (B), ``ssthresh`` (B, ``inf`` while infinite),
            ``cause``: ``loss``, ``timeout`` or ``ecn`` where a congestion event of that kind set
            ssthresh in the step the row records, else ``update``.
        seq: ``time`` (s), ``flow``, ``event`` (``sent``, ``retransmitted``, ``acked``,
            ``dropped``), ``seq`` (first byte), ``len`` (B).
        queue: ``time`` (s), ``link``, ``packets``, ``bytes`` waiting (not the one on the wire), ``red_avg`` (RED average queue in the limit's unit; NaN for any other queue),
            ``sojourn`` (s: on a row made by a packet starting transmission, how long it waited;
            NaN on a row made by an arrival or a drop).
        packets: with ``[trace.packets]``, one row per packet event on the traced link
            directions: ``time`` (s), ``link``, ``event`` (``enqueue``, ``dequeue``, ``drop``,
            ``lost``, ``mark``), ``kind`` (``data``, ``ack``, ``syn``, ``cross``, ``request``),
            ``flow`` (flow or cross source), ``seq`` (first byte; an ACK's cumulative ACK),
            ``len`` (payload B), ``size`` (B on the wire), ``queue_packets`` and ``queue_bytes``
            waiting after the event.
        rtt: with ``[trace] rtt = true``, every RTT sample a sender took: ``time`` (s, the ACK's
            arrival), ``flow``, ``rtt`` (s), the sender's ``srtt`` and ``rttvar`` after it (s),
            ``min_rtt`` (s, the smallest sample so far), ``ack`` (the cumulative ACK, B).
        startup: with ``[trace] startup = true``, the startup algorithm's declared decision
            variables after every ACK in startup, one row per ACK and variable: ``time`` (s),
            ``flow``, ``signal`` (``ALGORITHM.NAME``; units in ``startlab algorithms --json``),
            ``value`` (NaN: not known yet), ``exit`` (this ACK ended startup).

    ``flow``, ``link``, ``event`` and ``cause`` are pandas Categoricals. A trace that ``[trace]`` disabled is
    an empty table with the same columns.
    """

    cwnd: pd.DataFrame
    seq: pd.DataFrame
    queue: pd.DataFrame
    packets: pd.DataFrame
    rtt: pd.DataFrame
    startup: pd.DataFrame

    def __repr__(self) -> str:
        rows = ", ".join(f"{kind}={len(getattr(self, kind))} rows" for kind in TRACE_COLUMNS)
        return f"Traces({rows})"


@dataclass(repr=False)
class Result:
    """What one run reports (see docs/RESULTS.md for every column and its unit).

    Attributes:
        flows: one row per flow, ``flow`` holding its name.
        links: one row per link direction, ``link`` holding ``NAME:FROM->TO``.
        traces: the recorded time series.
        scenario: the resolved scenario (every default filled in), the run's provenance.
        stats: engine counters (``events``, ``delivered_packets``, ``sent_packets``,
            ``dropped_packets``, ``sim_time_ns``).
        responses: one row per finished request/response exchange (``flow``, ``index``, ``size``,
            ``request_time``, ``response_time``); empty without ``app`` flows.
        warmup_end: end of the ``[measure]`` warm-up in seconds (fixed or found automatically),
            None without a warm-up or when the number of active flows never settled.
        probes: one row per train of every packet-train probe (``[[cross]] kind = "train"``):
            ``source``, ``train``, ``source_gap``, ``sent``, ``received``, ``dest_gap``,
            ``gap_difference`` (s) and ``train_rate`` (bit/s); empty without probes.
        probe_packets: one row per probe packet: ``source``, ``train``, ``index``, ``sent`` and
            ``received`` (s; NaN if lost).
        transfers: one row per transfer of every ``[[users]]`` user (``user``, ``user_index``,
            ``transfer``, ``size``, ``start``, ``completion_time``, throughput and the startup
            metrics, then the startup's report columns such as ``cr_path``; docs/RESULTS.md);
            empty without users. None when the run streamed them to
            ``transfers_file`` (``startlab.run(..., transfers=PATH)``, ``startlab run --out``).
        transfers_file: the Parquet or CSV file the transfer rows were streamed to, else None.
        pcap_files: the capture files ``run(..., pcap=DIR)`` wrote, with the packets each holds
            (docs/PCAP.md).
        qlog_files: the qlog files ``run(..., qlog=DIR)`` wrote, with the events each holds
            (docs/QLOG.md).
        signal_units: the unit of each startup signal, in the order of
            ``traces.startup["signal"]``'s categories.
        warnings: what the run allowed but the user should know, one sentence each (e.g. an
            L4S flow, ``tcp.ecn = "l4s"``, on a path without an L4S-aware queue); empty if none.
    """

    flows: pd.DataFrame
    links: pd.DataFrame
    traces: Traces
    scenario: dict[str, Any]
    stats: dict[str, int]
    warmup_end: float | None = None
    responses: pd.DataFrame | None = None
    probes: pd.DataFrame | None = None
    probe_packets: pd.DataFrame | None = None
    transfers: pd.DataFrame | None = None
    transfers_file: Path | None = None
    pcap_files: list[tuple[Path, int]] = field(default_factory=list)
    qlog_files: list[tuple[Path, int]] = field(default_factory=list)
    signal_units: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def _from_native(cls, raw: Mapping[str, Any], stats: Mapping[str, int]) -> Result:
        """Build a result from ``Simulation.results()`` and ``Simulation.stats()``."""
        labels = {"flow": raw["flow_names"], "link": raw["link_names"], "event": raw["seq_kinds"]}
        packet_labels = {
            "flow": raw.get("packet_sources", raw["flow_names"]),
            "link": raw["link_names"],
            "event": raw.get("packet_events", ()),
            "kind": raw.get("packet_kinds", ()),
        }
        trace_labels = {
            "cwnd": {**labels, "cause": raw["cwnd_causes"]},
            "packets": packet_labels,
            "startup": {"flow": raw["flow_names"], "signal": raw.get("startup_signals", ())},
        }
        traces = {
            kind: _trace(raw["traces"].get(kind) or {}, columns, trace_labels.get(kind, labels))
            for kind, columns in TRACE_COLUMNS.items()
        }
        return cls(
            flows=_table(raw["flows"]),
            links=_table(raw["links"]),
            traces=Traces(**traces),
            scenario=json.loads(raw["scenario"]),
            stats=dict(stats),
            warmup_end=raw.get("warmup_end"),
            responses=_table(raw["responses"]) if "responses" in raw else None,
            probes=_table(raw["probes"])[list(_PROBE_COLUMNS)] if "probes" in raw else None,
            probe_packets=_table(raw["probe_packets"])[list(_PROBE_PACKET_COLUMNS)] if "probe_packets" in raw else None,
            transfers=_table(_ordered(raw["transfers"], _TRANSFER_COLUMNS)) if "transfers" in raw else None,
            warnings=list(raw.get("warnings", ())),
            signal_units=list(raw.get("startup_units", ())),
        )

    def __repr__(self) -> str:
        return f"Result({len(self.flows)} flows, {len(self.links)} links, {self.traces!r})"

    def to_json(self) -> str:
        """The flow and link tables as JSON ``{"flows": [rows], "links": [rows]}``, null for NaN,
        with ``responses``, ``transfers`` and ``probes`` when the run has rows of them."""
        document = {"flows": json_records(self.flows), "links": json_records(self.links)}
        for name in _JSON_EXTRA:
            frame = getattr(self, name)
            if frame is not None and len(frame):
                document[name] = json_records(frame)
        return json.dumps(document, allow_nan=False)

    def summary(self, by: str = "startup", measured: bool = True) -> pd.DataFrame:
        """Per group of flows (by ``startup``, ``group``, ...): the papers' multi-flow figures.

        Columns: ``flows``, ``completed``, throughput ``mean``/``median``/``p5``/``p95`` (bit/s),
        ``completion_median`` (s), ``with_loss`` (fraction of flows that lost a packet),
        ``loss_in_startup`` (packets lost that were sent in startup / packets sent, summed over
        the group: the Paced Start paper's Fig. 12 bottom), ``total_loss`` (packets lost / sent)
        and ``jain`` (Jain's index of the flows' throughputs within the group). Only flows inside
        the ``[measure]`` window unless ``measured=False``. See :meth:`fairness` for Jain's index
        between groups.
        """
        from .metrics import summary

        return summary(self.flows, by=by, measured=measured)

    def fairness(self, by: str = "startup", measured: bool = True) -> float:
        """Jain's fairness index between the groups' mean throughputs (1 = equal)."""
        from .metrics import jain

        return jain(self.summary(by=by, measured=measured)["mean"])

    def plot_cdf(self, column: str = "throughput", by: str = "startup", measured: bool = True) -> Figure:
        """Empirical CDF of a per-flow column (throughput, completion_time, ...), one line per group."""
        from . import plot

        return plot.cdf(self.flows, column, by, measured, self.scenario)

    def plot_cwnd(self, flows: str | Iterable[str] | None = None) -> Figure:
        """cwnd and ssthresh in segments over the startup and over the whole run, with the path's
        BDP and BDP + buffer and each startup exit marked with its reason (:func:`startlab.plot.cwnd`);
        by default every flow, or for more than four the ones :func:`startlab.plot.pick` chooses."""
        from . import plot

        return plot.cwnd(self.traces.cwnd, plot.startup_facts(self), self.scenario, flows)

    def plot_signals(self, flow: str | None = None) -> Figure:
        """What one flow's startup decided on: cwnd, its RTT samples (``[trace] rtt``) and its
        algorithm's declared signals (``[trace] startup``) on one time axis, the exit marked
        (:func:`startlab.plot.signals`); by default the first flow with signals."""
        from . import plot

        scenario = {**self.scenario, "_signal_units": self.signal_units}
        return plot.signals(self.traces.cwnd, self.traces.rtt, self.traces.startup, plot.startup_facts(self), scenario, flow)

    def plot_sequence(self, flow: str | Iterable[str] | None = None) -> Figure:
        """Sequence plot in segments, one row per flow: sent, cumulative ACK, retransmissions and
        drops at their drop time, over the startup and over the whole run
        (:func:`startlab.plot.sequence`); flows chosen as for :meth:`plot_cwnd`."""
        from . import plot

        return plot.sequence(self.traces.seq, plot.startup_facts(self), self.scenario, flow)

    def plot_queue(self, links: str | Iterable[str] | None = None) -> Figure:
        """Queue occupancy over the startup and over the whole run, with the buffer limit and the
        startup shaded (:func:`startlab.plot.queue`); by default the link(s) with the highest
        ``max_queue``."""
        from . import plot

        return plot.queue(self.traces.queue, self.links, plot.startup_facts(self), self.scenario, links)

    def plot_packets(self, link: str | None = None, flow: str | None = None) -> Figure:
        """Sequence plot at a router from the packet trace (``[trace.packets]``): the data packets
        of ``flow`` (the first traced by default) entering, leaving and dropped at the queue of
        ``link`` (a link direction ``NAME:FROM->TO``, the first traced by default)."""
        from . import plot

        return plot.packets(self.traces.packets, link, flow, self.scenario)

    def plot_probes(self) -> Figure:
        """Gap difference and train rate against the source gap for every packet-train probe (the
        Paced Start paper's Fig. 1)."""
        import pandas as pd

        from . import plot

        return plot.probes(self.probes if self.probes is not None else pd.DataFrame(columns=list(_PROBE_COLUMNS)), self.scenario)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write tables (Parquet and CSV), the resolved scenario, stats and plots (PNG and SVG).

        Files: ``flows``, ``links``, ``trace_{cwnd,seq,queue,packets}`` and (when not empty)
        ``responses``, ``transfers``, ``probes`` and ``probe_packets`` as ``.parquet`` and ``.csv``;
        ``scenario.json``, ``stats.json``; ``cwnd``, ``sequence``, ``queue``, ``packets`` as ``.png`` and
        ``.svg``, and ``cdf_throughput`` for runs of 10 flows or more. A trace the scenario disabled is neither written nor plotted. Returns the paths
        written.
        """
        from . import plot

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        traces = {kind: getattr(self.traces, kind) for kind in TRACE_COLUMNS}
        tables = {"flows": self.flows, "links": self.links}
        tables.update({f"trace_{kind}": frame for kind, frame in traces.items() if not frame.empty})
        for name in ("probes", "probe_packets", "responses", "transfers"):
            frame = getattr(self, name)
            if frame is not None and not frame.empty:
                tables[name] = frame
        written = []
        for name, frame in tables.items():
            written += [out / f"{name}.parquet", out / f"{name}.csv"]
            frame.to_parquet(written[-2], index=False)
            frame.to_csv(written[-1], index=False)
        if self.transfers is None and self.transfers_file is not None and self.transfers_file.exists():
            written += _copy_streamed(self.transfers_file, out / "transfers")
        for name, document in {"scenario": self.scenario, "stats": self.stats}.items():
            written.append(out / f"{name}.json")
            written[-1].write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        plots = {
            "cwnd": (self.traces.cwnd, self.plot_cwnd),
            "sequence": (self.traces.seq, self.plot_sequence),
            "queue": (self.traces.queue, self.plot_queue),
            "packets": (self.traces.packets, self.plot_packets),
            "signals": (self.traces.startup if len(self.traces.startup) else self.traces.rtt, self.plot_signals),
        }
        for name, (frame, draw) in plots.items():
            if not frame.empty:
                written += plot.save(draw(), out / name)
        if self.probes is not None and not self.probes.empty:
            written += plot.save(self.plot_probes(), out / "probes")
        # A scenario of cross traffic alone has an empty flows table without columns.
        if "throughput" in self.flows and self.flows["throughput"].notna().sum() >= _CDF_MIN_FLOWS:
            written += plot.save(self.plot_cdf(), out / "cdf_throughput")
        return written


#: Column order of ``Result.transfers``.
_TRANSFER_COLUMNS = (
    "user", "user_index", "flow", "transfer", "connection", "size", "think", "start", "completion_time",
    "completed", "throughput", "su_time", "su_throughput", "su_loss", "exit_reason", "exit_cwnd_pkts",
    "overshoot", "time_to_90", "packets_sent", "retransmissions", "drops", "timeouts", "loss_rate",
    "retransmission_ratio", "measured",
)

#: Column order of ``Result.probes`` and ``Result.probe_packets``.
_PROBE_COLUMNS = ("source", "train", "source_gap", "sent", "received", "dest_gap", "gap_difference", "train_rate")
_PROBE_PACKET_COLUMNS = ("source", "train", "index", "sent", "received")

#: Column orders ``Result`` imposes on the native tables (``native_json`` follows them).
_EXTRA_ORDER = {"transfers": _TRANSFER_COLUMNS, "probes": _PROBE_COLUMNS}

#: ``write`` adds the throughput CDF for runs with at least this many flows with a throughput.
_CDF_MIN_FLOWS = 10


def _copy_streamed(source: Path, stem: Path) -> list[Path]:
    """A streamed transfers table as ``stem.parquet`` and ``stem.csv``, through DuckDB (out of
    core), leaving ``source`` itself in place."""
    import duckdb

    from ._transfers import file_relation

    paths = []
    with duckdb.connect() as con:
        con.execute("SET enable_progress_bar = false")
        for suffix, options in ((".parquet", "FORMAT parquet"), (".csv", "FORMAT csv, HEADER true")):
            target = stem.with_suffix(suffix)
            paths.append(target)
            if target.resolve() == source.resolve():
                continue
            con.execute(f"COPY (SELECT * FROM {file_relation(source)}) TO '{str(target).replace(chr(39), chr(39) * 2)}' ({options})")
    return paths


def _ordered(columns: Mapping[str, Sequence[Any]], first: Sequence[str]) -> dict[str, Sequence[Any]]:
    """The native ``columns`` with ``first`` in that order, then the others by name (a startup's
    report columns in the transfers table, e.g. Careful Resume's ``cr_path``: a streamed table
    puts them in the same order)."""
    return {**{k: columns[k] for k in first}, **{k: columns[k] for k in sorted(columns) if k not in first}}


def _table(columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """A DataFrame from native columns: ``*_ns`` columns become seconds, nullable numbers floats."""
    import pandas as pd

    return pd.DataFrame(dict(_column(name, values) for name, values in columns.items()))


def _column(name: str, values: Sequence[Any]) -> tuple[str, Any]:
    import numpy as np

    if name.endswith(_NS_SUFFIX):
        return name[: -len(_NS_SUFFIX)], np.asarray(values, dtype=np.float64) / 1e9
    if isinstance(values, list) and any(v is None for v in values) and all(map(_is_number, values)):
        # A numeric column with nulls (a time never reached): NaN, not an object column of None.
        return name, np.asarray(values, dtype=np.float64)
    return name, values


def _is_number(value: Any) -> bool:
    """True for None or a real number (not a bool): what a nullable numeric column holds."""
    return value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool))


def _trace(
    columns: Mapping[str, Sequence[Any]],
    expected: Sequence[str],
    labels: Mapping[str, Sequence[str]],
) -> pd.DataFrame:
    """A trace table with integer ids (flow, link, event code) replaced by their names."""
    import numpy as np
    import pandas as pd

    if columns:
        frame = _table(columns)
    else:
        frame = pd.DataFrame({name: np.zeros(0, dtype=np.int64) for name in expected})
        frame["time"] = frame["time"].astype(np.float64)
    for name, categories in labels.items():
        if name in frame:
            frame[name] = _categorical(frame[name], categories)
    return frame


def _categorical(values: pd.Series, categories: Sequence[str]) -> pd.Categorical:
    """Integer ids as names (id i is ``categories[i]``); names are checked against the list."""
    import pandas as pd

    dtype = pd.CategoricalDtype(list(categories))
    if pd.api.types.is_integer_dtype(values):
        return pd.Categorical.from_codes(values.to_numpy(), dtype=dtype)
    return pd.Categorical(values, dtype=dtype)


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: plain Python scalars, None for NaN, infinities and NA."""
    import numpy as np
    import pandas as pd

    def plain(value: Any) -> Any:
        if isinstance(value, np.generic):
            value = value.item()
        if value is pd.NA or (isinstance(value, float) and not math.isfinite(value)):
            return None
        return value

    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


class ResultError(RuntimeError):
    """The run finished, but building its result tables failed (a startlab bug). ``tables`` keeps
    the finished run's flows and links (and responses, transfers, probes) as the JSON of
    ``startlab run --json``, computed from the native columns without pandas, so nothing already
    simulated is lost; None only if even that failed."""

    def __init__(self, message: str, tables: str | None) -> None:
        super().__init__(message)
        self.tables = tables


def build(raw: Mapping[str, Any], stats: Mapping[str, int]) -> Result:
    """:class:`Result` from ``Simulation.results()`` and ``Simulation.stats()``; a failure while
    building it is a :class:`ResultError` that carries the run's tables."""
    try:
        return Result._from_native(raw, stats)
    except Exception as e:
        try:
            tables: str | None = native_json(raw)
        except Exception:
            tables = None
        kept = "its tables are kept as JSON" if tables is not None else "its tables could not be kept either"
        raise ResultError(f"the run finished, but building its result failed ({type(e).__name__}: {e}); {kept}", tables) from e


def native_json(raw: Mapping[str, Any]) -> str:
    """What :meth:`Result.to_json` gives for the result built from ``raw`` (``Simulation.results()``),
    computed from the native columns directly, without NumPy or pandas (``startlab run --json``)."""
    document = {"flows": _native_records(raw["flows"]), "links": _native_records(raw["links"])}
    for name in _JSON_EXTRA:
        columns = raw.get(name) or {}
        if any(len(v) for v in columns.values()):
            order = _EXTRA_ORDER.get(name)
            document[name] = _native_records(_ordered(columns, order) if order else columns)
    return json.dumps(document, allow_nan=False)


#: Tables ``--json`` adds when a run has rows of them.
_JSON_EXTRA = ("responses", "transfers", "probes")


def _native_records(columns: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The rows of a native table as :func:`json_records` gives them for ``_table(columns)``: the same
    columns in the same order, with the values the DataFrame would hold (``*_ns`` in seconds, a
    numeric column with a null or a float in floats) as plain Python scalars, None for NaN."""
    converted = dict(_native_column(name, values) for name, values in columns.items())
    names = list(converted)
    return [dict(zip(names, row)) for row in zip(*converted.values())]


def _native_column(name: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    """One column as :func:`_column` and pandas' type inference make it, in plain Python."""
    finite = math.isfinite
    if name.endswith(_NS_SUFFIX):
        seconds = (None if v is None else v / 1e9 for v in values)
        return name[: -len(_NS_SUFFIX)], [v if v is not None and finite(v) else None for v in seconds]
    if all(map(_is_number, values)) and any(v is None or isinstance(v, float) for v in values):
        # float64 in the DataFrame: a null or one float makes every value of the column a float.
        return name, [float(v) if v is not None and finite(v) else None for v in values]
    return name, [None if isinstance(v, float) and not finite(v) else v for v in values]
