"""Figures of a run's traces.

Drawn with matplotlib's object-oriented API on an Agg canvas: no pyplot, no global state, so they
are safe in scripts, worker processes and notebooks alike. Each function returns a
:class:`matplotlib.figure.Figure`; a trace with no rows gives a figure that says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Union

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: Above this many series a legend hides the plot instead of explaining it.
_MAX_LEGEND = 12

#: How each sequence-trace event is drawn, bottom layer first (drops on top).
_SEQ_STYLE: dict[str, dict[str, Any]] = {
    "acked": {"color": "tab:green", "marker": ".", "markersize": 2},
    "sent": {"color": "tab:blue", "marker": ".", "markersize": 3},
    "retransmitted": {"color": "tab:orange", "marker": ".", "markersize": 4},
    "dropped": {"color": "red", "marker": "x", "markersize": 6},
}

Names = Union[str, Iterable[str], None]


def cwnd(trace: pd.DataFrame, flows: pd.DataFrame, names: Names = None) -> Figure:
    """cwnd (solid) and finite ssthresh (dotted) in segments of each flow's MSS, over time."""
    figure, ax = _figure("Congestion window (dotted: ssthresh)", "segments")
    mss = dict(zip(flows["flow"], flows["mss"]))
    selected = _select(names, trace["flow"].cat.categories, "flow")
    series = [(name, rows) for name, rows in _groups(trace, "flow") if name in selected]
    for name, rows in series:
        (line,) = ax.plot(
            rows["time"], rows["cwnd"] / mss[name], drawstyle="steps-post", label=name
        )
        ssthresh = rows["ssthresh"].where(np.isfinite(rows["ssthresh"])) / mss[name]
        ax.plot(
            rows["time"], ssthresh, drawstyle="steps-post", linestyle=":", color=line.get_color()
        )
    _finish(ax, len(series), "no cwnd trace (enable [trace] cwnd)")
    return figure


def sequence(trace: pd.DataFrame, name: str | None = None) -> Figure:
    """Sequence plot of one flow (the first one traced by default); drops are red crosses."""
    flows = trace["flow"].cat.categories
    if name is None:
        traced = trace["flow"].cat.codes
        name = flows[traced.min()] if len(traced) else None
    else:
        _select(name, flows, "flow")
    figure, ax = _figure(f"Sequence numbers: {name}", "sequence number (B)")
    rows = trace[trace["flow"] == name] if name is not None else trace.iloc[:0]
    kinds = [kind for kind in _SEQ_STYLE if kind in set(rows["event"])]
    kinds += sorted(set(rows["event"]) - set(kinds))
    for kind in kinds:
        points = rows[rows["event"] == kind]
        ax.plot(
            points["time"], points["seq"], linestyle="none", label=kind, **_SEQ_STYLE.get(kind, {})
        )
    _finish(ax, len(kinds), "no sequence trace (enable [trace] seq)")
    return figure


#: How the router sequence plot draws each packet event.
_PACKET_STYLE: dict[str, dict[str, Any]] = {
    "enqueue": {"marker": ".", "markersize": 2, "color": "tab:blue"},
    "dequeue": {"marker": ".", "markersize": 2, "color": "tab:green"},
    "drop": {"marker": "x", "markersize": 5, "color": "tab:red"},
    "lost": {"marker": "+", "markersize": 5, "color": "tab:purple"},
    "mark": {"marker": "^", "markersize": 4, "color": "tab:orange"},
}


def packets(trace: pd.DataFrame, link: str | None = None, flow: str | None = None) -> Figure:
    """Sequence plot at a router (Smooth-start Figs. 8-9): one flow's data packets entering,
    leaving and dropped at one link direction's queue, from the packet trace."""
    data = trace[trace["kind"] == "data"] if len(trace) else trace
    links = [name for name in trace["link"].cat.categories if (trace["link"] == name).any()] if len(trace) else []
    flows = [name for name in trace["flow"].cat.categories if (data["flow"] == name).any()] if len(data) else []
    if link is None:
        link = links[0] if links else None
    elif link not in links:
        raise KeyError(f"link {link!r} has no packet trace; traced: {', '.join(links) or 'none (enable [trace.packets])'}")
    if flow is None:
        flow = flows[0] if flows else None
    elif flow not in flows:
        raise KeyError(f"flow {flow!r} has no data packets in the packet trace; traced: {', '.join(flows) or 'none'}")
    figure, ax = _figure(f"Packets of {flow} at {link}", "sequence number (B)")
    rows = data[(data["link"] == link) & (data["flow"] == flow)] if link is not None and flow is not None else data.iloc[:0]
    kinds = [kind for kind in _PACKET_STYLE if kind in set(rows["event"])]
    for kind in kinds:
        points = rows[rows["event"] == kind]
        ax.plot(points["time"], points["seq"], linestyle="none", label=kind, **_PACKET_STYLE[kind])
    _finish(ax, len(kinds), "no packet trace (enable [trace.packets])")
    return figure


def probes(trains: pd.DataFrame) -> Figure:
    """The Paced Start paper's Fig. 1 from packet-train probes: gap difference (destination gap −
    source gap) and train rate against the source gap, one line per probe source."""
    figure = Figure(figsize=(8, 6), layout="constrained")
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1, sharex=True)
    top.set(title="Packet-train probes", ylabel="gap difference (ms)")
    bottom.set(xlabel="source gap (ms)", ylabel="train rate (Mbit/s)")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    names = list(dict.fromkeys(trains["source"])) if len(trains) else []
    for name in names:
        rows = trains[trains["source"] == name].sort_values("source_gap")
        top.plot(rows["source_gap"] * 1e3, rows["gap_difference"] * 1e3, marker="o", label=name)
        bottom.plot(rows["source_gap"] * 1e3, rows["train_rate"] / 1e6, marker="o", label=name)
    top.axhline(0.0, color="grey", linewidth=0.8)
    _finish(top, len(names), 'no packet-train probe (a [[cross]] of kind = "train")')
    return figure


def queue(trace: pd.DataFrame, links: pd.DataFrame, names: Names = None) -> Figure:
    """Packets waiting over time; by default on the link(s) whose ``max_queue`` is highest."""
    if names is None and len(links):
        names = links.loc[links["max_queue"] == links["max_queue"].max(), "link"]
    figure, ax = _figure("Queue occupancy", "packets waiting")
    selected = _select(names, trace["link"].cat.categories, "link")
    series = [(name, rows) for name, rows in _groups(trace, "link") if name in selected]
    for name, rows in series:
        ax.plot(rows["time"], rows["packets"], drawstyle="steps-post", label=name)
    _finish(ax, len(series), "no queue trace (enable [trace] queue)")
    return figure


def cdf(flows: pd.DataFrame, column: str, by: str, measured: bool = True) -> Figure:
    """Empirical CDF of ``column`` per group of ``by`` (the papers' Figure 11 kind)."""
    for key in (column, by):
        if key not in flows.columns:
            raise KeyError(f"{key!r} is not a column of the flows table")
    rows = flows[flows["measured"]] if measured and "measured" in flows.columns else flows
    fig, ax = _figure(f"CDF of {column}", "fraction of flows")
    series = 0
    for key, group in rows.groupby(by, sort=True):
        values = np.sort(group[column].dropna().to_numpy(dtype=float))
        if len(values):
            ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post", label=f"{key} ({len(values)})")
            series += 1
    ax.set_xlabel(column)
    _finish(ax, series, f"no {column} values")
    return fig


def _figure(title: str, ylabel: str) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    ax.set(title=title, xlabel="time (s)", ylabel=ylabel)
    ax.grid(alpha=0.3)
    return figure, ax


def _finish(ax: Axes, series: int, empty: str) -> None:
    """Add a legend when it helps, or say why the axes are empty."""
    if series == 0:
        ax.text(0.5, 0.5, empty, transform=ax.transAxes, ha="center", va="center")
    elif series <= _MAX_LEGEND:
        ax.legend(loc="best", fontsize="small")


def _groups(trace: pd.DataFrame, key: str) -> Iterator[tuple[str, pd.DataFrame]]:
    """Rows of each named series, in category (scenario) order."""
    for name, rows in trace.groupby(key, observed=True, sort=True):
        yield str(name), rows


def _select(names: Names, known: Iterable[str], what: str) -> set[str]:
    """The requested names (all if None); an unknown one is a ValueError listing the known ones."""
    known = list(known)
    if names is None:
        return set(known)
    wanted = {names} if isinstance(names, str) else set(names)
    unknown = sorted(wanted - set(known))
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(unknown)}; known: {', '.join(known)}")
    return wanted
