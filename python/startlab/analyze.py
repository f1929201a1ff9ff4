"""``startlab analyze``: a packet capture's TCP flows as startlab's startup table (docs/ANALYZE.md).

The capture is read, reassembled and measured in Rust (``crates/startlab-analyze``, streamed); this
module only reshapes its report into the flow table ``startlab run`` prints (the same columns, as
far as a capture can give them), draws the startup figure in startlab's style, and proposes a
scenario that reproduces a flow (``--fit``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

#: The columns of a flow row that are not series (the report's ``series`` object is kept apart).
_SERIES_KEY = "series"

#: Bytes of TCP/IPv4 header per data packet of a fitted scenario: with timestamps (12 bytes of
#: options) and without.
HEADER_TS, HEADER_PLAIN = 52, 40


class CaptureError(ValueError):
    """The file cannot be read as a capture at all (not pcap/pcapng, unreadable, empty header)."""


@dataclass
class Analysis:
    """What ``startlab analyze`` found in one capture."""

    #: The capture: path, format, link types, packet counts, skipped frames by reason, error.
    capture: dict[str, Any]
    #: One row per TCP direction that carried data: ``startlab run``'s flow columns (those a
    #: capture gives; docs/ANALYZE.md says how each is measured) and the capture's own.
    flows: pd.DataFrame
    #: Per flow (by its ``flow`` name): the series, times in s since the capture's first frame.
    series: dict[str, dict[str, list[Any]]]
    #: One row per UDP direction (datagrams, bytes, times: all a capture shows of QUIC).
    udp: pd.DataFrame
    #: Sentences the user should read (a truncated file, timestamps going back, cut headers...).
    warnings: list[str] = field(default_factory=list)
    #: TCP connections seen, with or without data.
    tcp_connections: int = 0

    def plot(self, flow: str | None = None) -> Figure:
        """The startup figure of one flow (the first when None): flight over time beside the whole
        capture, in startlab's style (docs/RESULTS.md, Figures)."""
        return plot_flight(self, flow)

    def to_json(self) -> str:
        """The flows (with their series), UDP flows, capture summary and warnings as JSON."""
        flows = []
        for row in _records(self.flows):
            row[_SERIES_KEY] = self.series.get(row["flow"], {})
            flows.append(row)
        return json.dumps({"capture": self.capture, "flows": flows, "udp": _records(self.udp), "warnings": self.warnings,
                           "tcp_connections": self.tcp_connections})  # fmt: skip


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for row in frame.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return out


def analyze(path: str | Path, vantage: str | None = None) -> Analysis:
    """Analyse the capture at ``path`` (pcap or pcapng). ``vantage``: ``"sender"``, ``"receiver"``,
    ``"middle"`` or None (inferred per flow from the capture's round trips to each side).

    A file that is no capture at all raises :class:`CaptureError`; a truncated or damaged one gives
    what was read before the damage, with a warning naming the packet."""
    import pandas as pd

    from . import _core

    p = Path(path)
    if not p.exists():
        raise CaptureError(f"{p}: no such file")
    if p.is_dir():
        raise CaptureError(f"{p} is a directory, not a capture file")
    report = json.loads(_core.analyze_capture(str(p), vantage))
    capture = report["capture"]
    if capture["error"] is not None and capture["packets"] == 0:
        raise CaptureError(capture["error"])
    series: dict[str, dict[str, list[Any]]] = {}
    rows = []
    for f in report["flows"]:
        series[f["flow"]] = f.pop(_SERIES_KEY)
        f["wscale"] = "/".join("–" if w is None else str(w) for w in f["wscale"])
        f["round_growths"] = ", ".join(f"{g:.2f}" for g in f["round_growths"])
        # The run table's columns a capture has no value for: the algorithm is unknown, drops are
        # not seen (retransmissions stand for them).
        f.setdefault("startup", None)
        f["drops"] = f["retransmissions"]
        f["measured"] = True
        rows.append(f)
    flows = pd.DataFrame(rows)
    udp = pd.DataFrame(report["udp"])
    return Analysis(capture=capture, flows=flows, series=series, udp=udp, warnings=list(report["warnings"]),
                    tcp_connections=int(report["tcp_connections"]))  # fmt: skip


# --- the figure ---------------------------------------------------------------------------------


def plot_flight(analysis: Analysis, flow: str | None = None) -> Figure:
    """Flight (segments of the flow's MSS) over time: the startup (to 5 base RTTs past the exit)
    beside the whole capture, the exit as a point with its reason, the BDP (delivery rate × min
    RTT) as a dashed line, retransmissions as diamonds — startlab's cwnd figure, from a capture."""
    import matplotlib

    from . import plot as style

    if analysis.flows.empty:
        raise ValueError("the capture has no TCP flow with data to plot")
    row = analysis.flows.iloc[0] if flow is None else analysis.flows.set_index("flow").loc[flow].to_dict() | {"flow": flow}
    row = dict(row)
    s = analysis.series[row["flow"]]
    mss = float(row["mss"] or 1)
    t0 = float(row["t0"])
    with matplotlib.rc_context(style.STYLE):
        base = row.get("base_rtt")
        base = float(base) if base is not None and not _nan(base) else 0.1
        exit_t = row.get("startup_exit_time")
        end_su = (float(exit_t) - t0 if exit_t is not None and not _nan(exit_t) else style.NO_EXIT_RTTS * base) + style.STARTUP_RTTS * base
        times = [t - t0 for t in s["sent_t"]]
        end = max(times[-1] if times else 0.0, 1e-3)
        figure, axes = style._panels(1, "flight (segments)", min(end_su, end), end, sharey=False)
        startup, whole = axes[0]
        flight = [f / mss for f in s["flight"]]
        for ax in (startup, whole):
            ax.plot(times, flight, drawstyle="steps-post", color=style.PALETTE[0], label="flight (as the capture shows the sender's)")
            if s["retx_t"]:
                rt = [t - t0 for t in s["retx_t"]]
                # Each retransmission at the flight just before it.
                import numpy as np

                idx = np.clip(np.searchsorted(times, rt, side="right") - 1, 0, max(len(flight) - 1, 0))
                ax.plot(rt, [flight[i] for i in idx] if flight else [0] * len(rt), marker="D", markersize=3, linestyle="none",
                        color=style.PALETTE[3], label="retransmission")  # fmt: skip
            bdp = row.get("bdp")
            if bdp is not None and not _nan(bdp):
                ax.axhline(float(bdp) / mss, color=style.PALETTE[7], linestyle="--", linewidth=0.8, label=f"BDP (delivery rate × min RTT): {float(bdp) / mss:.0f} segments")
        if exit_t is not None and not _nan(exit_t):
            facts = {"exit_time": float(exit_t) - t0, "exit_cwnd": float(row["exit_cwnd_pkts"]), "exit_reason": row["exit_reason"]}
            style._mark_exit(startup, whole, facts, style.PALETTE[5])  # type: ignore[arg-type]
        startup.set_xlabel("time since the first data packet (s)")
        whole.set_xlabel("time since the first data packet (s)")
        name = Path(str(analysis.capture["path"])).name
        figure.suptitle(f"flight — {name} — {row['flow']} (vantage: {row['vantage']})")
        style._legend(figure, startup, [])
    return figure


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


# --- the fit ------------------------------------------------------------------------------------


def propose(row: dict[str, Any], series: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """A scenario (as a dict) that should reproduce the flow ``row`` of an analysis: a dumbbell
    whose bottleneck rate is the flow's delivery rate, its RTT the min RTT, its drop-tail buffer
    (max RTT − min RTT) × rate in packets, random loss on the bottleneck at the rate of the
    retransmissions after startup; a Linux-like TCP (the capture's MSS, its initial window, SACK
    when both SYNs offered it), HyStart when startup ended on a plateau, plain slow start when it
    ended on a loss. Every guess is named in the scenario's ``name``. Raises ValueError when the
    flow lacks what a fit needs (no RTT sample, no delivery rate)."""
    rate, base, top = row.get("available_rate"), row.get("base_rtt"), row.get("max_rtt")
    if rate is None or _nan(rate) or base is None or _nan(base):
        raise ValueError(f"flow {row['flow']}: no delivery rate or no RTT sample, so no path can be proposed")
    mss = int(row["mss"]) or 1448
    header = HEADER_TS if row.get("timestamps") else HEADER_PLAIN
    packet_bits = (mss + header) * 8
    top = float(top) if top is not None and not _nan(top) else float(base)
    buffer_pkts = max(1, round((top - float(base)) * float(rate) / packet_bits))
    iw = 10
    if series is not None and series.get("sent_t") and series.get("acked_t"):
        first_ack = series["acked_t"][0]
        iw = max(1, sum(1 for t in series["sent_t"] if t < first_ack))
    # Loss: the retransmissions after startup over the packets sent after it (those of startup
    # come from the buffer's overflow, which the buffer reproduces).
    packets, retx = float(row["packets_sent"]), float(row["retransmissions"])
    t_su = float(row["t_su"])
    startup_retx = float(sum(1 for t in (series or {}).get("retx_t", []) if t <= t_su))
    later = max(0.0, retx - startup_retx)
    after = max(packets - _startup_packets(row, series), 1.0)
    loss = later / after if later > 0 else 0.0
    startup = "hystart-linux" if row["exit_reason"] in ("plateau", "rwnd") else "slow-start"
    size = f"{int(row['bytes_sent'])}B" if row.get("completed") else "infinite"
    span = float(row.get("completion_time") or 0.0) or max((series or {}).get("sent_t", [row["t0"]])[-1] - float(row["t0"]), 0.0)
    duration = max(1.0, math.ceil(span + 2 * top + 1.0))
    scenario: dict[str, Any] = {
        "name": f"fit of {row['flow']}",
        "seed": 1,
        "duration": f"{duration:g}s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": f"{float(rate) / 1e6:.4g}Mbps",
            "rtt": f"{float(base) * 1e3:.4g}ms",
            "access_rate": "10Gbps",
            "queue": {"kind": "droptail", "limit": f"{buffer_pkts}pkt"},
        },
        "flows": [
            {
                "name": "fit",
                "tcp": {"mss": f"{mss}B", "header": f"{header}B", "initial_window": iw, "recovery": "sack" if row.get("sack") else "newreno",
                        "ack": "linux", "congestion_avoidance": "cubic"},
                "startup": {"algorithm": startup},
                "size": size,
            }
        ],
    }  # fmt: skip
    if loss > 0:
        scenario["impairments"] = [{"link": "bottleneck", "direction": "forward", "loss": {"kind": "random", "p": round(loss, 6)}}]
    return scenario


def _startup_packets(row: dict[str, Any], series: dict[str, list[Any]] | None) -> float:
    """Data packets sent until the end of startup."""
    if series is None or not series.get("sent_t"):
        return 0.0
    import bisect

    return float(bisect.bisect_right(series["sent_t"], float(row["t_su"])))


def scenario_toml(scenario: dict[str, Any], comment: str = "") -> str:
    """The scenario dict of :func:`propose` as TOML text."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return json.dumps(str(v))

    lines = [f"# {line}" for line in comment.splitlines()] if comment else []
    for k in ("name", "seed", "duration"):
        lines.append(f"{k} = {value(scenario[k])}")
    lines += ["", "[topology]"]
    lines += [f"{k} = {value(v)}" for k, v in scenario["topology"].items()]
    for f in scenario["flows"]:
        lines += ["", "[[flows]]"] + [f"{k} = {value(v)}" for k, v in f.items()]
    for imp in scenario.get("impairments", []):
        lines += ["", "[[impairments]]"] + [f"{k} = {value(v)}" for k, v in imp.items()]
    return "\n".join(lines) + "\n"
