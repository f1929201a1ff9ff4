"""Per-response fast startups after idle (``tcp.startup_after_idle``, ``tcp.startup_min_response``;
Scharf Figs. 14-17): five 200 kB responses 3 s apart on one persistent connection (10 Mbit/s,
200 ms, 50-packet buffer, IW 3, handshake). The RTO is 1 s, so every later response follows an
idle period: RFC 5681's restart sets cwnd = min(IW, cwnd), and only with ``startup_after_idle``
does the fast startup act again."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd
import pytest

import startlab

JUMP = {"algorithm": "jump-start"}
QUICK = {"algorithm": "quick-start", "rate": "10Mbps"}
MORE = {"algorithm": "more-start", "rate": 10e6}
FAST = [pytest.param(JUMP, id="jump-start"), pytest.param(QUICK, id="quick-start"), pytest.param(MORE, id="more-start")]


def scenario(startup: dict[str, Any], handshake: bool = True, **tcp: Any) -> dict[str, Any]:
    return {
        "seed": 1,
        "duration": "30s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": "10Mbps",
            "rtt": "200ms",
            "access_rate": "1Gbps",
            "queue": {"kind": "droptail", "limit": "50pkt"},
        },
        "flows": [
            {
                "name": "web",
                "tcp": {"mss": "1448B", "initial_window": 3, "handshake": handshake, **tcp},
                "startup": copy.deepcopy(startup),
                "app": {
                    "kind": "request-response",
                    "request": "300B",
                    "response": {"dist": "fixed", "value": "200KB"},
                    "think": {"dist": "fixed", "value": "3s"},
                    "count": 5,
                },
            }
        ],
    }


def response_times(doc: dict[str, Any]) -> np.ndarray:
    result = startlab.run(doc, progress=False)
    responses = result.responses
    assert responses is not None and len(responses) == 5
    assert result.flows["drops"].iloc[0] == 0
    return responses["response_time"].to_numpy()


@pytest.mark.parametrize("startup", FAST)
def test_after_idle_each_response_starts_fast_again(startup: dict[str, Any]) -> None:
    without = response_times(scenario(startup))
    with_ = response_times(scenario(startup, startup_after_idle=True))
    # The connection's first startup is the same either way.
    assert with_[0] == pytest.approx(without[0], abs=1e-9)
    # Later responses: a slow start from the restart window without, the fast startup with.
    assert with_[1:].mean() < 0.6 * without[1:].mean(), (with_, without)
    assert np.ptp(with_[1:]) < 0.01, "every restart is alike"


def test_jump_and_more_start_repeat_their_first_response() -> None:
    # Jump-Start paces min(response, 64 KB) over the smoothed RTT, More-Start R0 for one RTT: the
    # same first flight as after the handshake.
    for startup, slack in ((JUMP, 0.03), (MORE, 0.005)):
        times = response_times(scenario(startup, startup_after_idle=True))
        assert np.abs(times[1:] - times[0]).max() < slack, (startup, times)


def test_quick_start_asks_the_routers_again() -> None:
    # A new request on the first data segment of each response: one RTT later than on the SYN.
    times = response_times(scenario(QUICK, startup_after_idle=True))
    without = response_times(scenario({"algorithm": "slow-start"}))
    assert (times[1:] < 0.5 * without[1:]).all()
    assert (times[1:] > times[0]).all()


def test_initial_start_needs_no_restart() -> None:
    # RFC 5681's restart window min(IW, cwnd) is Initial-Start's large IW again.
    doc = scenario({"algorithm": "initial-start", "initial_window": "30pkt"})
    del doc["flows"][0]["tcp"]["initial_window"]
    times = response_times(doc)
    assert np.ptp(times) < 1e-3
    slow = response_times(scenario({"algorithm": "slow-start"}))
    assert times[0] < 0.5 * slow[0]


@pytest.mark.parametrize("startup", FAST)
def test_a_threshold_above_the_response_changes_nothing(startup: dict[str, Any]) -> None:
    # Only responses larger than startup_min_response restart. The threshold also governs the
    # first response: Quick-Start's first request waits for the first data segment, and Jump- and
    # More-Start size their first flight on the response (its size is known then), so a first
    # response below it gets no fast startup at all: it is a slow start.
    off = response_times(scenario(startup, startup_after_idle=False))
    above = response_times(scenario(startup, startup_after_idle=True, startup_min_response="300kB"))
    np.testing.assert_array_equal(above[1:], off[1:])
    slow = response_times(scenario({"algorithm": "slow-start"}))
    assert above[0] == pytest.approx(slow[0], abs=1e-6)
    assert off[0] < 0.8 * slow[0]


@pytest.mark.parametrize("startup", FAST)
def test_a_threshold_below_the_response_restarts(startup: dict[str, Any]) -> None:
    every = response_times(scenario(startup, startup_after_idle=True))
    below = response_times(scenario(startup, startup_after_idle=True, startup_min_response="100kB"))
    # Quick-Start's first request moves from the SYN to the first data segment (one RTT later), so
    # the connection's RTT estimate, and the later responses, differ slightly.
    np.testing.assert_allclose(below[1:], every[1:], rtol=0.01)


def test_without_a_handshake_the_threshold_governs_the_first_quick_start_request() -> None:
    # The request rides on the first data segment, when the response's size is known ("QS 3").
    slow = response_times(scenario({"algorithm": "slow-start"}, handshake=False))
    asked = response_times(scenario(QUICK, handshake=False, startup_min_response="100kB"))
    skipped = response_times(scenario(QUICK, handshake=False, startup_min_response="300kB"))
    assert asked[0] < 0.7 * slow[0]
    assert skipped[0] == pytest.approx(slow[0], abs=1e-6)


@pytest.mark.parametrize(
    ("startup", "tcp", "key"),
    [
        ({"algorithm": "slow-start"}, {"startup_after_idle": True}, "startup_after_idle"),
        ({"algorithm": "hystart"}, {"startup_after_idle": True}, "startup_after_idle"),
        ({"algorithm": "initial-start"}, {"startup_after_idle": True}, "startup_after_idle"),
        ({"algorithm": "slow-start"}, {"startup_min_response": "10kB"}, "startup_min_response"),
        ({"algorithm": "paced-start"}, {"startup_after_idle": False, "startup_min_response": "10kB"}, "startup_min_response"),
    ],
)
def test_the_keys_are_refused_for_other_startups(startup: dict[str, Any], tcp: dict[str, Any], key: str) -> None:
    doc = scenario(startup, **tcp)
    if startup["algorithm"] == "initial-start":
        del doc["flows"][0]["tcp"]["initial_window"]
    with pytest.raises(startlab.ScenarioError, match=rf"^flows\[0\]\.tcp\.{key}: "):
        startlab.validate(doc)


def test_a_flow_without_a_startup_table_is_slow_start_and_refuses_them() -> None:
    doc = scenario(JUMP, startup_after_idle=True)
    del doc["flows"][0]["startup"]
    with pytest.raises(startlab.ScenarioError, match=r"^flows\[0\]\.tcp\.startup_after_idle: "):
        startlab.validate(doc)


@pytest.mark.parametrize("startup", [*FAST, pytest.param({"algorithm": "slow-start"}, id="slow-start")])
def test_leaving_the_keys_out_is_the_same_as_their_defaults(startup: dict[str, Any]) -> None:
    plain = scenario(startup)
    explicit = scenario(startup, startup_after_idle=False)
    if startup["algorithm"] != "slow-start":
        explicit["flows"][0]["tcp"]["startup_min_response"] = "0B"
    assert startlab.normalize(plain) == startlab.normalize(explicit)
    a = startlab.run(plain, progress=False)
    b = startlab.run(explicit, progress=False)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.responses, b.responses)


@pytest.mark.parametrize(("startup", "size"), [(JUMP, "30KB"), (MORE, "100KB")], ids=["jump-start", "more-start"])
def test_a_first_flight_larger_than_the_first_response_does_not_hold_back_the_next(startup: dict[str, Any], size: str) -> None:
    # The response is not known at the handshake; sized then, the first flight would be u (64 KiB)
    # or R0·RTT (241 kB), longer than these responses, and the next response after idle would wait
    # for that flight to be "paced out". The sender keeps the handshake RTT until the first
    # response is handed over, so the flight is the response, and the next response is at worst a
    # slow start from the restart window.
    doc = scenario(startup)
    doc["flows"][0]["app"]["response"]["value"] = size
    slow = scenario({"algorithm": "slow-start"})
    slow["flows"][0]["app"]["response"]["value"] = size
    times, reference = response_times(doc), response_times(slow)
    assert (times[1:] <= reference[1:] + 0.01).all(), (times, reference)


def test_after_a_loss_in_a_restarted_flight_the_window_is_half_of_that_flight() -> None:
    # Jump-Start with u = 400 KB paces each 400 KB response at 16 Mbit/s into a 10 Mbit/s link with
    # a 20-packet buffer: every flight loses packets. Its loss rule sets cwnd = ssthresh =
    # max((D − R)/2, 2) segments after recovery, D = the flight (276 segments), the same for every
    # restart.
    doc = scenario({"algorithm": "jump-start", "u": "400KB"}, startup_after_idle=True)
    doc["topology"]["queue"]["limit"] = "20pkt"
    doc["flows"][0]["app"]["response"]["value"] = "400KB"
    result = startlab.run(doc, progress=False)
    assert result.flows["drops"].iloc[0] > 0
    cwnd = result.traces.cwnd
    finite = cwnd[np.isfinite(cwnd["ssthresh"]) & (cwnd["time"] > 3.0)]
    assert len(finite) > 0
    flight = np.ceil(400_000 / 1448)
    assert (finite["ssthresh"] / 1448 <= flight / 2 + 1).all(), sorted(set(finite["ssthresh"] / 1448))
