"""`[trace] rtt` and `[trace] startup` from Python: the tables, a plug-in's own declared signals,
the signals figure and `startlab algorithms --json`'s declarations."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import startlab

ROOT = Path(__file__).resolve().parents[1]

SCENARIO = {
    "name": "signals",
    "seed": 1,
    "duration": "2s",
    "topology": {"kind": "dumbbell", "bottleneck_rate": "20Mbps", "access_rate": "1Gbps", "rtt": "40ms",
                 "queue": {"kind": "droptail", "limit": "200pkt"}},
    "flows": [{"name": "a", "size": "infinite", "tcp": {"congestion_avoidance": "cubic"}, "startup": {"algorithm": "hystart-linux"}}],
    "trace": {"rtt": True, "startup": True},
}  # fmt: skip


@startlab.startup("gap-start", signals={"rounds_seen": ("rounds", "rounds so far"), "last_rtt": ("s", "the latest RTT sample")})
class GapStart:
    """Slow start that leaves after four rounds, reporting what it counted."""

    def __init__(self) -> None:
        self.rounds = 0
        self.rtt: float | None = None

    def on_ack(self, view, ack):
        self.rounds = view.round
        if ack.rtt is not None:
            self.rtt = ack.rtt
        if view.round >= 4:
            return startlab.Action(exit="estimate")
        return startlab.Action(increase=min(ack.newly_acked, view.mss))

    def signals(self):
        return {"rounds_seen": self.rounds, "last_rtt": self.rtt}


@startlab.startup("bad-signals", signals={"x": ("-", "declared")})
class BadSignals:
    """Reports a signal it did not declare."""

    def on_ack(self, view, ack):
        return startlab.Action(increase=min(ack.newly_acked, view.mss))

    def signals(self):
        return {"y": 1.0}


def test_rtt_and_startup_tables() -> None:
    r = startlab.run(SCENARIO, progress=False)
    rtt = r.traces.rtt
    assert list(rtt.columns) == ["time", "flow", "rtt", "srtt", "rttvar", "min_rtt", "ack"]
    assert len(rtt) > 100 and (rtt["rtt"] >= 0.040).all()
    s = r.traces.startup
    assert set(s["signal"].cat.categories) >= {"hystart-linux.ack_train", "hystart-linux.delay_min"}
    exit_rows = s[s["exit"]]
    assert len(exit_rows) == 6 and (exit_rows["time"] == r.flows.loc[0, "startup_exit_time"]).all()
    assert dict(zip(s["signal"].cat.categories, r.signal_units))["hystart-linux.ack_train"] == "s"


def test_a_plugin_declares_and_reports_its_own_signals(tmp_path: Path) -> None:
    doc = {**SCENARIO, "flows": [{**SCENARIO["flows"][0], "startup": {"algorithm": "gap-start"}}]}
    r = startlab.run(doc, progress=False)
    assert r.flows.loc[0, "exit_reason"] == "estimate"
    s = r.traces.startup
    rounds = s[s["signal"] == "gap-start.rounds_seen"]
    assert rounds["value"].iloc[-1] == 4 and bool(rounds["exit"].iloc[-1])
    rtts = s[s["signal"] == "gap-start.last_rtt"]["value"]
    assert math.isnan(rtts.iloc[0]) or rtts.iloc[0] >= 0.040
    assert rtts.dropna().min() >= 0.040
    written = r.write(tmp_path)
    assert tmp_path / "signals.png" in written and tmp_path / "trace_startup.parquet" in written


def test_an_undeclared_signal_stops_the_run_with_a_clear_error() -> None:
    doc = {**SCENARIO, "flows": [{**SCENARIO["flows"][0], "startup": {"algorithm": "bad-signals"}}]}
    with pytest.raises(startlab.PluginError, match=r"signals: \"y\" is not declared; the plug-in declares \[\"x\"\]"):
        startlab.run(doc, progress=False)


def test_bad_signal_declarations_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unit \"seconds\" is not known"):
        startlab.startup("bad-unit", signals={"x": ("seconds", "h")})(GapStart)
    with pytest.raises(TypeError, match=r"expected \(unit, help\)"):
        startlab.startup("bad-spec", signals={"x": "s"})(GapStart)


def test_signals_figure_and_algorithms_json(tmp_path: Path) -> None:
    r = startlab.run(SCENARIO, progress=False)
    figure = r.plot_signals("a")
    assert len(figure.axes) == 4, "cwnd, RTT, then the seconds and the ACK-count signals"
    with pytest.raises(KeyError, match="flow 'zz' is not in this run"):
        r.plot_signals("zz")
    out = subprocess.run([sys.executable, "-m", "startlab", "algorithms", "--json"], capture_output=True, text=True, check=True)
    decls = {a["name"]: a for a in json.loads(out.stdout)}
    assert [s["name"] for s in decls["search"]["signals"]] == ["bin", "norm_diff", "thresh", "rtt"]
    assert decls["slow-start"]["signals"] == []
