"""HyStart++'s presets from Python: the registry lists the new parameters with each preset's
defaults, a scenario's preset fills them in the resolved scenario (a key given overrides it), and
a bad preset or a contradiction is refused with its key path (docs/algorithms/hystart++.md)."""

from __future__ import annotations

import pytest

import startlab

SCENARIO = """\
seed = 1
duration = "1s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "100pkt" }}
[[flows]]
name = "f"
size = "infinite"
startup = {{ algorithm = "hystart++"{extra} }}
"""


def _startup(extra: str) -> dict:
    resolved = startlab.normalize(SCENARIO.format(extra=extra))
    startup: dict = resolved["flows"][0]["startup"]
    return startup["params"]


def test_the_registry_lists_the_presets_and_each_parameters_value_under_them() -> None:
    (hspp,) = [a for a in startlab.algorithms() if a["name"] == "hystart++"]
    params = {p["name"]: p for p in hspp["params"]}
    assert params["preset"]["kind"] == {"choice": ["rfc9406", "quiche", "msquic", "neqo", "ngtcp2"]}
    assert params["preset"]["default"] == '"rfc9406"'
    assert params["css_rounds"]["default"] == "5" and params["css_rounds"]["presets"] == {"ngtcp2": "4"}
    assert params["paced"]["presets"] == {"quiche": "true", "msquic": "true", "neqo": "true", "ngtcp2": "true"}
    assert params["ack_order"]["presets"]["msquic"] == '"sample-round-growth"'
    assert "presets" not in params["css_baseline"], "no preset changes neqo's default baseline"
    for name in ("min_rtt_thresh", "max_rtt_thresh", "min_rtt_divisor", "n_rtt_sample", "css_growth_divisor", "rtt_samples", "round_min", "css_check", "later_slow_starts"):
        assert params[name]["help"], name
    # no other algorithm gained a "presets" key
    assert all("presets" not in p for a in startlab.algorithms() if a["name"] != "hystart++" for p in a["params"])


def test_the_resolved_scenario_holds_the_presets_values_and_the_keys_given() -> None:
    rfc = _startup("")
    assert (rfc["preset"], rfc["css_rounds"], rfc["round_min"], rfc["paced"]) == ("rfc9406", 5, "all-samples", False)
    msquic = _startup(', preset = "msquic"')
    assert (msquic["round_min"], msquic["ack_order"], msquic["paced"], msquic["later_slow_starts"]) == ("first-n", "sample-round-growth", True, "standard")
    mixed = _startup(', preset = "msquic", round_min = "all-samples", css_check = "every-sample"')
    assert (mixed["round_min"], mixed["css_check"], mixed["ack_order"]) == ("all-samples", "every-sample", "sample-round-growth")


@pytest.mark.parametrize(
    ("extra", "path", "words"),
    [
        (', preset = "picoquic"', "flows[0].startup.preset", 'one of "rfc9406", "quiche", "msquic", "neqo", "ngtcp2"'),
        (', preset = "msquic", css_check = "n-after-entry"', "flows[0].startup.css_check", 'round_min = "first-n"'),
        (', min_rtt_thresh = "20ms"', "flows[0].startup.min_rtt_thresh", "is above max_rtt_thresh"),
        (', css_rounds = 0', "flows[0].startup.css_rounds", "expected at least 1"),
    ],
)
def test_a_bad_preset_or_combination_is_refused_with_its_key(extra: str, path: str, words: str) -> None:
    with pytest.raises(startlab.ScenarioError) as e:
        startlab.validate(SCENARIO.format(extra=extra))
    assert path in str(e.value) and words in str(e.value), str(e.value)


def test_every_preset_runs_and_ngtcp2_leaves_css_a_round_earlier() -> None:
    deep = SCENARIO.replace('limit = "100pkt"', 'limit = "2000pkt"').replace('duration = "1s"', 'duration = "3s"')
    exits = {}
    for preset in ("rfc9406", "quiche", "msquic", "neqo", "ngtcp2"):
        flow = startlab.run(deep.format(extra=f', preset = "{preset}"')).flows.iloc[0]
        assert flow["exit_reason"] == "css-done", (preset, flow["exit_reason"])
        exits[preset] = float(flow["exit_cwnd_pkts"])
    assert 0.75 <= exits["ngtcp2"] / exits["rfc9406"] <= 0.85, exits
