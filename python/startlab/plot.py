"""Figures of a run that tell its startup's story, in the manner of the papers' own (Paced Start
Fig. 2, HyStart Fig. 1, Scharf Fig. 10).

The per-flow figures (:func:`cwnd`, :func:`sequence`, :func:`queue`) put two panels side by side:
the startup, from 0 to :data:`STARTUP_RTTS` base RTTs past the latest startup exit of the flows
shown, and the whole run. A flow that never exits ends its startup when it completes, or is given
:data:`NO_EXIT_RTTS` base RTTs from its first segment. Up to :data:`ALL_FLOWS` flows are all
shown; a run of more shows the ones worth looking at (:func:`pick`): each algorithm's median flow
by ``su_throughput`` and the flow with the worst ``su_loss``, each named with the reason it was
picked.

One style for every figure (:data:`STYLE`): Okabe and Ito's colour-blind-safe palette, DejaVu Sans
(shipped with matplotlib), a unit on every axis, the scenario's name in every title (and in the
per-flow figures' the algorithms of the flows shown). Figures are drawn with matplotlib's object-oriented API on an Agg canvas, without pyplot,
so they are safe in scripts, worker processes and notebooks alike; the style is applied with
``matplotlib.rc_context`` while a figure is built and while :func:`save` writes it (rc parameters
are process-wide: build figures in one thread at a time). Each function returns a
:class:`matplotlib.figure.Figure`; a trace with no rows gives a figure that says so.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, Union

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import cycler
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from . import _paths

if TYPE_CHECKING:
    from .result import Result

#: Okabe and Ito's colour-blind-safe palette (B. Wong, "Color blindness", Nature Methods 8, 441,
#: 2011): blue, orange, bluish green, reddish purple, sky blue, vermillion, yellow, black.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

#: Series take the first six colours in turn; yellow is too pale for a thin line on white, and
#: black is kept for reference lines.
_SERIES = PALETTE[:6]
_REFERENCE = PALETTE[7]

#: The rc parameters of every figure, applied while it is built and while it is saved.
STYLE: dict[str, Any] = {
    "axes.prop_cycle": cycler(color=_SERIES),
    "axes.grid": True,
    "grid.alpha": 0.3,
    # matplotlib's default font and size: tick labels made while a figure is drawn outside this
    # style (shown in a notebook) look the same.
    "font.family": "DejaVu Sans",
    "font.size": 10.0,
    "axes.titlesize": 10.0,
    "figure.titlesize": 12.0,
    "legend.fontsize": 9.0,
    "lines.linewidth": 1.2,
    "savefig.dpi": 150,
    # Reproducible SVG: ids from this salt, not random, and text as paths, not fonts.
    "svg.hashsalt": "startlab",
    "svg.fonttype": "path",
}

#: Base RTTs the startup panel shows past the latest startup exit.
STARTUP_RTTS = 5
#: Base RTTs from its first segment given to the startup of a flow that never exits nor completes.
NO_EXIT_RTTS = 20
#: Up to this many flows a per-flow figure shows them all; above it, :func:`pick` chooses.
ALL_FLOWS = 4

#: Above this many series a legend hides the plot instead of explaining it.
_MAX_LEGEND = 12

#: ``exit_reason`` values that say startup did not end while the flow ran.
_NO_EXIT = frozenset({"completed", "not-exited"})

#: How :func:`sequence` draws each sequence-trace event (the ACK line is a line), bottom first.
_SEQ_STYLE: dict[str, dict[str, Any]] = {
    "sent": {"color": PALETTE[0], "marker": ".", "markersize": 2.5, "linestyle": "none", "label": "sent"},
    "acked": {"color": PALETTE[2], "drawstyle": "steps-post", "linewidth": 1.0, "label": "cumulative ACK"},
    "retransmitted": {"color": PALETTE[3], "marker": "D", "markersize": 3, "linestyle": "none", "label": "retransmitted"},
    "dropped": {"color": PALETTE[5], "marker": "x", "markersize": 4, "markeredgewidth": 1.0, "linestyle": "none",
                "label": "dropped (when the network dropped it)"},
}  # fmt: skip

#: How the router sequence plot draws each packet event.
_PACKET_STYLE: dict[str, dict[str, Any]] = {
    "enqueue": {"marker": ".", "markersize": 2, "color": PALETTE[0]},
    "dequeue": {"marker": ".", "markersize": 2, "color": PALETTE[2]},
    "drop": {"marker": "x", "markersize": 5, "color": PALETTE[5]},
    "lost": {"marker": "+", "markersize": 5, "color": PALETTE[3]},
    "mark": {"marker": "^", "markersize": 4, "color": PALETTE[1]},
}

#: Units of the per-flow columns a CDF is commonly drawn of (docs/RESULTS.md), for its x-axis.
_UNITS = {
    **dict.fromkeys(("throughput", "goodput", "su_throughput", "su_throughput_sent", "available_rate"), "bit/s"),
    **dict.fromkeys(("completion_time", "su_time", "time_to_90", "startup_exit_time", "recovery_time", "srtt", "base_rtt"), "s"),
    **dict.fromkeys(("su_loss", "loss_in_startup", "loss_rate", "overshoot", "retransmission_ratio"), "ratio"),
    **dict.fromkeys(("exit_cwnd_pkts", "final_cwnd_pkts", "packets_sent", "retransmissions", "drops", "early_losses",
                     "early_peak_queue"), "packets"),
    **dict.fromkeys(("exit_cwnd", "final_cwnd", "bdp", "size", "bytes_acked", "bytes_delivered"), "B"),
}  # fmt: skip

Names = Union[str, Iterable[str], None]
_P = ParamSpec("_P")


def _styled(draw: Callable[_P, Figure]) -> Callable[_P, Figure]:
    """Build the figure under :data:`STYLE`."""

    @functools.wraps(draw)
    def styled(*args: _P.args, **kwargs: _P.kwargs) -> Figure:
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    return styled


def save(figure: Figure, stem: str | Path, dpi: float | None = None) -> list[Path]:
    """Save a figure as ``stem.png`` (``dpi``, default :data:`STYLE`'s) and ``stem.svg`` under
    :data:`STYLE`, without time stamps or random ids; returns both paths."""
    stem = Path(stem)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    with matplotlib.rc_context(STYLE):
        figure.savefig(paths[0], **({} if dpi is None else {"dpi": dpi}))
        figure.savefig(paths[1], metadata={"Date": None})
    return paths


# --- what the figures mark ------------------------------------------------------------------------


def startup_facts(result: Result) -> pd.DataFrame:
    """What the figures mark for each flow of a run, one row per flow (and per ``[[users]]`` slot).

    Columns: ``flow``; ``startup`` (algorithm); ``mss`` (B); ``t0`` (s); ``exit_time`` (s),
    ``exit_reason`` and ``exit_cwnd`` (segments) of a startup that ended by an exit (NaN for a
    flow whose ``exit_reason`` is ``completed`` or ``not-exited``); ``startup_end`` (s): the exit,
    else the completion, else :data:`NO_EXIT_RTTS` base RTTs after ``t0``; ``base_rtt`` (s);
    ``bdp`` (segments: the ``bdp`` column over the MSS, as ``overshoot`` compares them);
    ``buffer`` (segments: the limit of the queue of the flow's bottleneck, the slowest link
    direction of its path, :mod:`startlab._paths`; a limit in bytes counts packets of MSS plus
    header); ``su_throughput`` and ``su_loss``; ``measured``. Every value comes from the result's
    tables and resolved scenario. A ``[[users]]`` slot (``NAME/k``, which has no row in
    ``result.flows``) has its MSS and algorithm only.
    """
    rows = []
    flows = result.flows
    if len(flows):
        routes = _paths.Routes(result.links, _paths.hosts(result.scenario))
        tcp = _tcp_tables(result.scenario)
        for flow in flows.itertuples(index=False):
            exited = flow.exit_reason not in _NO_EXIT and math.isfinite(flow.startup_exit_time)
            if exited:
                end = flow.startup_exit_time
            elif math.isfinite(flow.completion_time):
                end = flow.t0 + flow.completion_time
            else:
                end = flow.t0 + NO_EXIT_RTTS * flow.base_rtt
            rows.append(
                {
                    "flow": str(flow.flow), "startup": str(flow.startup), "mss": float(flow.mss), "t0": flow.t0,
                    "exit_time": flow.startup_exit_time if exited else math.nan,
                    "exit_reason": flow.exit_reason if exited else None,
                    "exit_cwnd": flow.exit_cwnd / flow.mss if exited else math.nan,
                    "startup_end": end, "base_rtt": flow.base_rtt, "bdp": flow.bdp / flow.mss,
                    "buffer": _buffer(result.links, routes, flow, tcp.get(str(flow.flow)) or tcp.get(str(flow.group))),
                    "su_throughput": flow.su_throughput, "su_loss": flow.su_loss, "measured": bool(flow.measured),
                }
            )  # fmt: skip
    for users in result.scenario.get("users") or ():
        algorithms = "/".join(dict.fromkeys(entry[0]["algorithm"] for entry in users.get("mix") or ()))
        for k in range(users["count"]):
            rows.append({"flow": f"{users['name']}/{k}", "startup": algorithms, "mss": float(users["tcp"]["mss"])})
    return pd.DataFrame(rows, columns=list(_FACT_COLUMNS)).astype(_FACT_TYPES)


_FACT_COLUMNS = (
    "flow", "startup", "mss", "t0", "exit_time", "exit_reason", "exit_cwnd", "startup_end", "base_rtt", "bdp",
    "buffer", "su_throughput", "su_loss", "measured",
)  # fmt: skip
_FACT_TYPES = {
    **dict.fromkeys(("flow", "startup", "exit_reason"), object),
    **dict.fromkeys(("mss", "t0", "exit_time", "exit_cwnd", "startup_end", "base_rtt", "bdp", "buffer", "su_throughput",
                     "su_loss"), float),
    "measured": "boolean",
}  # fmt: skip


def _tcp_tables(scenario: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The resolved ``tcp`` table of every ``[[flows]]`` entry (replicates are resolved to their own
    names) and of every ``[[arrivals]]`` and ``[[replay]]`` group, by name."""
    return {entry["name"]: entry["tcp"] for key in ("flows", "arrivals", "replay") for entry in scenario.get(key) or () if "tcp" in entry}


def _buffer(links: pd.DataFrame, routes: _paths.Routes, flow: Any, tcp: Mapping[str, Any] | None) -> float:
    """The buffer of ``flow``'s bottleneck in segments (NaN without a route or a header to count
    a byte limit in packets)."""
    path = routes.path(str(flow.src), str(flow.dst))
    if not path:
        return math.nan
    link = links.iloc[_paths.bottleneck(links, path)]
    if link["queue_limit_unit"] == "pkt":
        return float(link["queue_limit"])
    return float(link["queue_limit"]) / (flow.mss + tcp["header"]) if tcp is not None else math.nan


def pick(facts: pd.DataFrame, candidates: Sequence[str], names: Names = None, known: Iterable[str] | None = None) -> dict[str, str]:
    """The flows a per-flow figure shows, in order, each with the reason it was chosen.

    ``names`` (checked against ``known``, default ``candidates``) are shown as asked, without a
    reason. Otherwise every candidate when there are at most :data:`ALL_FLOWS`; else, among the
    measured candidates (all of them when none is measured), each algorithm's median flow by
    ``su_throughput`` (the lower median; a flow of an algorithm none of whose flows has one: its
    first) and the flow with the worst ``su_loss`` when a flow lost anything in startup (the first
    among equals).
    """
    if names is not None:
        wanted = _select(names, known if known is not None else candidates, "flow")
        return {name: "" for name in (known if known is not None else candidates) if name in wanted}
    if len(candidates) <= ALL_FLOWS:
        return dict.fromkeys(candidates, "")
    rows = facts[facts["flow"].isin(candidates)]
    if rows["measured"].fillna(False).any():
        rows = rows[rows["measured"].fillna(False)]
    shown: dict[str, str] = {}
    for algorithm, group in rows.groupby("startup", sort=False):
        ranked = group.dropna(subset=["su_throughput"]).sort_values("su_throughput", kind="stable")
        if len(ranked):
            shown[ranked["flow"].iloc[(len(ranked) - 1) // 2]] = f"median su_throughput of {algorithm}"
        else:
            shown[group["flow"].iloc[0]] = f"first flow of {algorithm}"
    losses = rows.dropna(subset=["su_loss"])
    if len(losses) and losses["su_loss"].max() > 0:
        worst = losses.loc[losses["su_loss"].idxmax()]
        reason = f"worst su_loss, {worst['su_loss']:.3g}"
        shown[worst["flow"]] = f"{shown[worst['flow']]}; {reason}" if worst["flow"] in shown else reason
    return shown


def _facts_of(facts: pd.DataFrame, shown: Iterable[str]) -> pd.DataFrame:
    """The facts of the shown flows, indexed by flow (NaN for a flow without facts)."""
    return facts.set_index("flow").reindex(list(shown))


def _window(facts: pd.DataFrame, end: float) -> float:
    """End of the startup panel (s): :data:`STARTUP_RTTS` base RTTs past the latest startup end
    of ``facts``, within the run; the whole run without facts."""
    ends = (facts["startup_end"] + STARTUP_RTTS * facts["base_rtt"]).dropna()
    return float(min(end, ends.max())) if len(ends) else end


# --- the per-flow figures -------------------------------------------------------------------------


@_styled
def cwnd(trace: pd.DataFrame, facts: pd.DataFrame, scenario: Mapping[str, Any], names: Names = None) -> Figure:
    """cwnd (solid) and ssthresh (dotted) in segments of each flow's MSS, over the startup and
    over the whole run, with the path's BDP and BDP + buffer as horizontal lines and each startup
    exit marked with its reason. ssthresh is not drawn where it lies above the plotted range (an
    initial ``infinite`` or huge ssthresh); the legend says so. ``facts`` is
    :func:`startup_facts`; ``names`` selects flows (default: :func:`pick`)."""
    categories = [str(name) for name in trace["flow"].cat.categories]
    shown = pick(facts, _traced(trace, "flow"), names, categories)
    info = _facts_of(facts, shown)
    end = _duration(scenario)
    figure, axes = _panels(1, "cwnd (segments)", _window(info, end), end, sharey=True)
    startup, whole = axes[0]
    figure.suptitle(_title("Congestion window", scenario, info))
    series = _rows(trace, "flow", shown)
    if not series:
        _say(startup, "no cwnd trace (enable [trace] cwnd)")
        return figure
    references = _references(info)
    peak = max([float(rows["cwnd"].max()) / info.at[flow, "mss"] for flow, rows in series.items()] + [v for _, v, _ in references])
    top = 1.08 * peak
    hidden = []
    for k, (flow, rows) in enumerate(series.items()):
        colour, mss = _SERIES[k % len(_SERIES)], info.at[flow, "mss"]
        ssthresh = rows["ssthresh"] / mss
        if not ssthresh.iloc[0] <= top:
            hidden.append("∞" if math.isinf(ssthresh.iloc[0]) else f"{ssthresh.iloc[0]:.0f} segments")
        for ax in (startup, whole):
            ax.plot(rows["time"], rows["cwnd"] / mss, drawstyle="steps-post", color=colour, label=_label(flow, shown[flow]))
            ax.plot(rows["time"], ssthresh.where(ssthresh <= top), drawstyle="steps-post", linestyle=":", color=colour)
        _mark_exit(startup, whole, info.loc[flow], colour)
    for label, value, style in references:
        for ax in (startup, whole):
            ax.axhline(value, color=_REFERENCE, linestyle=style, linewidth=0.9, label=label)
    startup.set_ylim(0, top)
    ssthresh_label = "ssthresh (dotted)"
    if hidden:
        ssthresh_label += f"; initial {', '.join(dict.fromkeys(hidden))} above the plot: not drawn"
    extra = [(Line2D([], [], color="grey", linestyle=":"), ssthresh_label)]
    if info["exit_time"].notna().any():
        extra.append((Line2D([], [], color="grey", marker="o", markeredgecolor=_REFERENCE, linestyle="none"), "startup exit (reason beside it)"))
    _legend(figure, startup, extra)
    return figure


@_styled
def sequence(trace: pd.DataFrame, facts: pd.DataFrame, scenario: Mapping[str, Any], names: Names = None) -> Figure:
    """Sequence plot in segments, one row per flow shown: data sent, the cumulative ACK line,
    retransmissions, and drops marked at the time the network dropped them (the trace's
    ``dropped`` events, recorded by the queue or impairment that discarded the packet), over the
    startup and over the whole run; the exit is a dotted vertical line with its reason. ``facts``
    is :func:`startup_facts`; ``names`` selects flows (default: :func:`pick`)."""
    categories = [str(name) for name in trace["flow"].cat.categories]
    shown = pick(facts, _traced(trace, "flow"), names, categories)
    info = _facts_of(facts, shown)
    end = _duration(scenario)
    window = _window(info, end)
    figure, axes = _panels(max(1, len(shown)), "sequence number (segments)", window, end, sharey=False)
    figure.suptitle(_title("Sequence numbers", scenario, info))
    kinds = [kind for kind in _SEQ_STYLE if kind in set(trace["event"])]
    traced = _rows(trace, "flow", shown)
    for (flow, reason), (startup, whole) in zip(shown.items(), axes):
        rows = traced.get(flow, trace.iloc[:0])
        mss = info.at[flow, "mss"]
        for ax in (startup, whole):
            ax.set_title(f"{_label(flow, reason)}: {ax.get_title()}")
            for kind in kinds:
                points = rows[rows["event"] == kind]
                # The whole run's dense points are one image in the SVG, not a path per point.
                ax.plot(points["time"], points["seq"] / mss, rasterized=ax is whole, **_SEQ_STYLE[kind])
        if not len(rows):
            _say(startup, "no sequence trace (enable [trace] seq)")
            continue
        early = rows[rows["time"] <= window]
        if len(early):
            startup.set_ylim(0, 1.05 * float(early["seq"].max()) / mss + 1)
        _mark_exit(startup, whole, info.loc[flow], _REFERENCE, vertical=True)
    if not shown:
        _say(axes[0][0], "no sequence trace (enable [trace] seq)")
    _legend(figure, axes[0][0], [])
    return figure


@_styled
def queue(
    trace: pd.DataFrame, links: pd.DataFrame, facts: pd.DataFrame, scenario: Mapping[str, Any], names: Names = None
) -> Figure:
    """Packets waiting (bytes, when every link shown limits its buffer in bytes) over the startup
    and over the whole run, by default on the link(s) whose ``max_queue`` is highest; each
    buffer limit is a dashed line and the startup of the flows :func:`pick` chooses is shaded."""
    if names is None and len(links):
        names = links.loc[links["max_queue"] == links["max_queue"].max(), "link"]
    selected = _select(names, trace["link"].cat.categories, "link")
    chosen = links[links["link"].isin(selected)] if len(links) else links
    in_bytes = len(chosen) > 0 and bool((chosen["queue_limit_unit"] == "B").all())
    column, unit = ("bytes", "B") if in_bytes else ("packets", "packets")
    info = _facts_of(facts, pick(facts, list(facts["flow"])))
    end = _duration(scenario)
    figure, axes = _panels(1, f"queue ({unit})", _window(info, end), end, sharey=True)
    startup, whole = axes[0]
    figure.suptitle(_title("Queue occupancy", scenario, info))
    series = list(_rows(trace, "link", [str(name) for name in trace["link"].cat.categories if name in selected]).items())
    # A limit is drawn on axes of its own unit only.
    same_unit = chosen[chosen["queue_limit_unit"] == ("B" if in_bytes else "pkt")] if len(chosen) else chosen
    limits = dict(zip(same_unit["link"], same_unit["queue_limit"])) if len(same_unit) else {}
    for k, (name, rows) in enumerate(series):
        colour = _SERIES[k % len(_SERIES)]
        for ax in (startup, whole):
            ax.plot(rows["time"], rows[column], drawstyle="steps-post", color=colour, label=str(name))
            if name in limits:
                ax.axhline(limits[name], color=colour, linestyle="--", linewidth=0.9, label=f"buffer of {name}: {limits[name]:.0f} {unit}")
    spans = info.dropna(subset=["t0", "startup_end"])
    for ax in (startup, whole):
        for flow, row in spans.iterrows():
            ax.axvspan(row["t0"], row["startup_end"], color="grey", alpha=0.15, linewidth=0,
                       label=f"startup of {', '.join(spans.index)}" if flow == spans.index[0] else None)  # fmt: skip
    if not series:
        _say(startup, "no queue trace (enable [trace] queue)")
    else:
        startup.set_ylim(0, 1.08 * max([float(rows[column].max()) for _, rows in series] + list(limits.values())))
    _legend(figure, startup, [])
    return figure


# --- the other figures ----------------------------------------------------------------------------


@_styled
def packets(trace: pd.DataFrame, link: str | None = None, flow: str | None = None, scenario: Mapping[str, Any] | None = None) -> Figure:
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
    figure, ax = _figure(f"Packets of {flow} at {link}{_named(scenario)}", "sequence number (B)")
    rows = data[(data["link"] == link) & (data["flow"] == flow)] if link is not None and flow is not None else data.iloc[:0]
    kinds = [kind for kind in _PACKET_STYLE if kind in set(rows["event"])]
    for kind in kinds:
        points = rows[rows["event"] == kind]
        ax.plot(points["time"], points["seq"], linestyle="none", label=kind, **_PACKET_STYLE[kind])
    _finish(ax, len(kinds), "no packet trace (enable [trace.packets])")
    return figure


@_styled
def signals(
    cwnd_trace: pd.DataFrame, rtt_trace: pd.DataFrame, startup_trace: pd.DataFrame, facts: pd.DataFrame,
    scenario: Mapping[str, Any], flow: str | None = None,
) -> Figure:  # fmt: skip
    """What one flow's startup decided on, over its startup: cwnd on top, its RTT samples (with the
    smoothed and minimum RTT) below, then one panel per unit of its algorithm's declared signals
    (``[trace] startup``), all on the same time axis; the exit is a dotted line on every panel and
    the values of the ACK that triggered it are marked."""
    facts = facts.set_index("flow") if "flow" in facts else facts
    traced = [str(f) for f in facts.index]
    if flow is None:
        with_signals = [f for f in traced if len(startup_trace) and (startup_trace["flow"] == f).any()]
        flow = (with_signals or traced or [None])[0]
    elif flow not in traced:
        raise KeyError(f"flow {flow!r} is not in this run; flows: {', '.join(traced)}")
    rows = startup_trace[startup_trace["flow"] == flow] if len(startup_trace) else startup_trace
    units = dict(zip(rows["signal"].cat.categories, scenario.get("_signal_units", ()))) if len(rows) else {}
    names = [name for name in rows["signal"].cat.categories if (rows["signal"] == name).any()] if len(rows) else []
    by_unit: dict[str, list[str]] = {}
    for name in names:
        by_unit.setdefault(units.get(name, "-"), []).append(name)
    info = facts.loc[flow] if flow is not None else None
    exit_time = float(info["exit_time"]) if info is not None and math.isfinite(info["exit_time"]) else math.nan
    end = _duration(scenario)
    window = exit_time * 1.5 if math.isfinite(exit_time) and exit_time > 0 else end
    figure = Figure(figsize=(9, 2.2 * (2 + len(by_unit)) + 0.8), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(2 + len(by_unit), 1, sharex=True, squeeze=False)[:, 0]
    figure.suptitle(f"Startup signals of {flow}{_named(scenario)}")
    cw = cwnd_trace[cwnd_trace["flow"] == flow] if len(cwnd_trace) else cwnd_trace
    mss = float(info["mss"]) if info is not None and "mss" in info and info["mss"] else 1.0
    axes[0].step(cw["time"], cw["cwnd"] / mss, where="post", label="cwnd")
    axes[0].set(ylabel="cwnd (segments)")
    rt = rtt_trace[rtt_trace["flow"] == flow] if len(rtt_trace) else rtt_trace
    axes[1].plot(rt["time"], rt["rtt"] * 1e3, linestyle="none", marker=".", markersize=3, label="sample")
    axes[1].plot(rt["time"], rt["srtt"] * 1e3, label="srtt")
    axes[1].plot(rt["time"], rt["min_rtt"] * 1e3, linestyle="--", label="min RTT")
    axes[1].set(ylabel="RTT (ms)")
    if not len(rt):
        _say(axes[1], "no RTT trace (enable [trace] rtt = true)")
    else:
        axes[1].legend(loc="best")
    for ax, (unit, group) in zip(axes[2:], by_unit.items()):
        scale, label = (1e3, "ms") if unit == "s" else (1.0, unit)
        for name in group:
            points = rows[rows["signal"] == name]
            line = ax.step(points["time"], points["value"] * scale, where="post", label=name.split(".", 1)[-1])[0]
            hit = points[points["exit"]]
            if len(hit):
                ax.plot(hit["time"], hit["value"] * scale, marker="o", color=line.get_color(), markeredgecolor=_REFERENCE, linestyle="none", zorder=5)
        ax.set(ylabel=label)
        ax.legend(loc="best", fontsize="small")
    if not by_unit:
        axes[0].text(0.5, 0.1, "no startup signals (enable [trace] startup = true; the algorithm must declare some)",
                     transform=axes[0].transAxes, ha="center")  # fmt: skip
    for ax in axes:
        if math.isfinite(exit_time):
            ax.axvline(exit_time, color=_REFERENCE, linestyle=":", linewidth=1.0)
    if math.isfinite(exit_time) and info is not None:
        axes[0].annotate(f"exit: {info['exit_reason']}", (exit_time, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -12), textcoords="offset points")
    axes[-1].set(xlabel="time (s)", xlim=(0, window))
    return figure


@_styled
def probes(trains: pd.DataFrame, scenario: Mapping[str, Any] | None = None) -> Figure:
    """The Paced Start paper's Fig. 1 from packet-train probes: gap difference (destination gap −
    source gap) and train rate against the source gap, one line per probe source."""
    figure = Figure(figsize=(8, 6), layout="constrained")
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1, sharex=True)
    top.set(title=f"Packet-train probes{_named(scenario)}", ylabel="gap difference (ms)")
    bottom.set(xlabel="source gap (ms)", ylabel="train rate (Mbit/s)")
    names = list(dict.fromkeys(trains["source"])) if len(trains) else []
    for name in names:
        rows = trains[trains["source"] == name].sort_values("source_gap")
        top.plot(rows["source_gap"] * 1e3, rows["gap_difference"] * 1e3, marker="o", label=name)
        bottom.plot(rows["source_gap"] * 1e3, rows["train_rate"] / 1e6, marker="o", label=name)
    top.axhline(0.0, color="grey", linewidth=0.8)
    _finish(top, len(names), 'no packet-train probe (a [[cross]] of kind = "train")')
    return figure


@_styled
def cdf(flows: pd.DataFrame, column: str, by: str, measured: bool = True, scenario: Mapping[str, Any] | None = None) -> Figure:
    """Empirical CDF of ``column`` per group of ``by`` (the papers' Figure 11 kind)."""
    for key in (column, by):
        if key not in flows.columns:
            raise KeyError(f"{key!r} is not a column of the flows table")
    rows = flows[flows["measured"]] if measured and "measured" in flows.columns else flows
    figure, ax = _figure(f"CDF of {column}{_named(scenario)}", "fraction of flows")
    series = 0
    for key, group in rows.groupby(by, sort=True):
        values = np.sort(group[column].dropna().to_numpy(dtype=float))
        if len(values):
            ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post", label=f"{key} ({len(values)})")
            series += 1
    ax.set_xlabel(f"{column} ({_UNITS[column]})" if column in _UNITS else column)
    _finish(ax, series, f"no {column} values")
    return figure


# --- shared parts ---------------------------------------------------------------------------------


def _panels(rows: int, ylabel: str, window: float, end: float, *, sharey: bool) -> tuple[Figure, np.ndarray]:
    """A figure of ``rows`` rows of two panels: the startup (0 to ``window`` s) and the whole run
    (0 to ``end`` s)."""
    figure = Figure(figsize=(11, 1.4 + 3.0 * rows), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 2, squeeze=False, sharey="row" if sharey else False)
    for startup, whole in axes:
        startup.set(xlim=(0, window), title=f"startup: 0 to {window:.3g} s", xlabel="time (s)", ylabel=ylabel)
        whole.set(xlim=(0, end), title="whole run", xlabel="time (s)", ylabel=ylabel)
    return figure, axes


def _figure(title: str, ylabel: str) -> tuple[Figure, Axes]:
    """A figure of one panel over time."""
    figure = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    ax.set(title=title, xlabel="time (s)", ylabel=ylabel)
    return figure, ax


def _references(info: pd.DataFrame) -> list[tuple[str, float, str]]:
    """The BDP (dashed) and BDP + buffer (dash-dotted) lines of the shown flows' paths: label,
    value (segments), line style; one line per distinct value, naming its flows when they differ."""
    lines = []
    for what, values, style in (("BDP", info["bdp"], "--"), ("BDP + buffer", info["bdp"] + info["buffer"], "-.")):
        by_value: dict[float, list[str]] = {}
        for flow, value in values.dropna().items():
            by_value.setdefault(round(float(value), 6), []).append(str(flow))
        for value, flows in by_value.items():
            whose = f" of {', '.join(flows)}" if len(by_value) > 1 else ""
            lines.append((f"{what}{whose}: {value:.0f} segments", value, style))
    return lines


def _mark_exit(startup: Axes, whole: Axes, facts: pd.Series, colour: str, vertical: bool = False) -> None:
    """Mark a flow's startup exit on both panels, the reason written beside it on the startup
    panel: a point at the exit cwnd, or (``vertical``) a dotted line at the exit time."""
    if not math.isfinite(facts["exit_time"]):
        return
    time, reason = float(facts["exit_time"]), f"exit: {facts['exit_reason']}"
    for ax in (startup, whole):
        if vertical:
            ax.axvline(time, color=colour, linestyle=":", linewidth=1.0)
        else:
            ax.plot([time], [facts["exit_cwnd"]], marker="o", markersize=6, color=colour, markeredgecolor=_REFERENCE, linestyle="none", zorder=5)
    # On a white ground, so that the reason stays legible across the lines it lies on.
    ground = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}
    if vertical:
        startup.annotate(reason, (time, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -12), textcoords="offset points",
                         color=colour, bbox=ground)  # fmt: skip
    else:
        startup.annotate(reason, (time, facts["exit_cwnd"]), xytext=(6, 2), textcoords="offset points", color=colour, bbox=ground)


def _legend(figure: Figure, ax: Axes, extra: list[tuple[Any, str]]) -> None:
    """One legend below the panels, from ``ax``'s labelled artists and ``extra`` (handle, label)."""
    handles, labels = ax.get_legend_handles_labels()
    handles += [handle for handle, _ in extra]
    labels += [label for _, label in extra]
    if labels and len(labels) <= _MAX_LEGEND + len(extra):
        figure.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)))


def _finish(ax: Axes, series: int, empty: str) -> None:
    """Add a legend when it helps, or say why the axes are empty."""
    if series == 0:
        _say(ax, empty)
    elif series <= _MAX_LEGEND:
        ax.legend(loc="best")


def _say(ax: Axes, text: str) -> None:
    """Say on empty axes why they are empty."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center")


def _title(what: str, scenario: Mapping[str, Any], info: pd.DataFrame) -> str:
    """``what — scenario — algorithms`` of the flows shown."""
    algorithms = ", ".join(dict.fromkeys(str(a) for a in info["startup"].dropna())) or "no flow"
    return f"{what} — {_name(scenario)} — {algorithms}"


def _named(scenario: Mapping[str, Any] | None) -> str:
    """`` — scenario`` for a title, empty without a scenario."""
    return "" if scenario is None else f" — {_name(scenario)}"


def _name(scenario: Mapping[str, Any]) -> str:
    """The scenario's ``name``, or that it has none."""
    return str(scenario.get("name") or "unnamed scenario")


def _duration(scenario: Mapping[str, Any]) -> float:
    """The run's duration (s; the resolved scenario holds integer nanoseconds)."""
    return float(scenario["duration"]) / 1e9


def _label(flow: str, reason: str) -> str:
    """A flow's name, with why it was picked."""
    return f"{flow} ({reason})" if reason else flow


def _rows(trace: pd.DataFrame, key: str, names: Iterable[str]) -> dict[str, pd.DataFrame]:
    """The rows of each of ``names`` (in their order) that has rows in ``trace``."""
    groups = {str(name): rows for name, rows in trace.groupby(key, observed=True)}
    return {name: groups[name] for name in names if name in groups}


def _traced(trace: pd.DataFrame, key: str) -> list[str]:
    """The names of ``key`` that have rows in ``trace``, in category (scenario) order."""
    present = set(trace[key].unique()) if len(trace) else set()
    return [str(name) for name in trace[key].cat.categories if name in present]


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
