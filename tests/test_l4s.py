"""L4S endpoints (issue 33): examples/l4s.toml, the run's warnings, ``tcp.ecn`` as resolved, and
the startups' declared CE rules as ``startlab algorithms`` lists them."""

from __future__ import annotations

import copy
from pathlib import Path

import startlab

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "l4s.toml"


def _sojourns(result: startlab.Result) -> dict[str, list[float]]:
    """Each flow's data-packet sojourn times (s) at the traced bottleneck, after the first 2 s."""
    p = result.traces.packets
    key = ["flow", "seq", "kind"]
    enq = p[p["event"] == "enqueue"][[*key, "time"]]
    deq = p[p["event"] == "dequeue"][[*key, "time"]]
    both = enq.merge(deq, on=key, suffixes=("_in", "_out"))
    both = both[(both["kind"] == "data") & (both["time_in"] > 2.0)]
    return {flow: list(g["time_out"] - g["time_in"]) for flow, g in both.groupby("flow")}


def test_l4s_ecn_example_keeps_prague_near_the_step_and_cubic_near_the_classic_target() -> None:
    r = startlab.run(EXAMPLE, progress=False)
    assert r.warnings == []
    flows = r.flows.set_index("flow")
    assert (flows["drops"] == 0).all() and (flows["ecn_marks"] > 0).all()
    soj = _sojourns(r)
    median = {f: sorted(s)[len(s) // 2] for f, s in soj.items()}
    p99 = {f: sorted(s)[int(0.99 * len(s))] for f, s in soj.items()}
    # DualPI2's L queue is step-marked above 1 ms; its Classic queue aims at 15 ms.
    assert median["prague"] < 0.001 and p99["prague"] < 0.001, (median, p99)
    assert 0.008 < median["cubic"] < 0.02, median


def test_an_l4s_ecn_flow_behind_red_runs_with_a_warning_naming_it_and_the_queues() -> None:
    doc = startlab.scenario_document(EXAMPLE)
    doc = copy.deepcopy(doc)
    doc["topology"]["queue"] = {"kind": "red", "limit": "300pkt", "ecn": True}
    doc.pop("trace", None)
    doc["duration"] = "2s"
    r = startlab.run(doc, progress=False)
    assert len(r.warnings) == 1
    w = r.warnings[0]
    assert 'flow "prague"' in w and 'tcp.ecn = "l4s"' in w and "bottleneck:left->right red" in w, w


def test_tcp_ecn_resolves_as_written_and_prague_needs_l4s() -> None:
    doc = startlab.scenario_document(EXAMPLE)
    resolved = startlab.normalize(doc)
    assert [f["tcp"]["ecn"] for f in resolved["flows"]] == ["l4s", True]
    doc["flows"][0]["tcp"]["ecn"] = True
    try:
        startlab.validate(doc)
    except startlab.ScenarioError as e:
        assert "flows[0].tcp.ecn" in str(e) and 'must be "l4s"' in str(e), str(e)
    else:
        raise AssertionError("prague with classic ECN must be refused")


def test_every_startup_algorithm_declares_its_ecn_ce_rule() -> None:
    listed = startlab.algorithms()
    rules = {a["name"]: a["on_ce"] for a in listed if a["role"] == "startup" and not a["plugin"]}
    own = {"bbr-startup", "bbrv3"}
    assert {n for n, r in rules.items() if r == "own-rule"} == own
    assert {r for n, r in rules.items() if n not in own} == {"exit-as-loss"}
    assert {a["name"]: a["needs_l4s"] for a in listed if a["role"] == "avoidance"} == {"reno": False, "cubic": False, "prague": True}
    docs = Path(__file__).resolve().parents[1] / "docs" / "algorithms"
    for name, rule in rules.items():
        assert f'`on_ce = "{rule}"`' in (docs / f"{name}.md").read_text(encoding="utf-8"), name
