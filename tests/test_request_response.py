"""Request/response over one persistent connection (Scharf's web model) against T_SS(s) + RTT."""

from __future__ import annotations

import numpy as np
import pytest

import startlab
from startlab.models import scharf


def web(idle_restart: str = "rfc5681", think: str = "3s", count: int = 40) -> dict:
    return {
        "seed": 1,
        "duration": "400s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": "10Mbps",
            "rtt": "200ms",
            "access_rate": "1Gbps",
            "queue": {"kind": "droptail", "limit": "1000pkt"},
        },
        "flows": [
            {
                "name": "web",
                "tcp": {
                    "recovery": "sack",
                    "mss": "1448B",
                    "header": "52B",
                    "ack": "every-packet",
                    "handshake": True,
                    "idle_restart": idle_restart,
                },
                "app": {
                    "kind": "request-response",
                    "request": "300B",
                    "response": {"dist": "pareto", "mean": "125KB", "shape": 1.1, "cutoff": "10MB"},
                    "think": think,
                    "count": count,
                },
            }
        ],
    }


@pytest.fixture(scope="module")
def rfc5681() -> startlab.Result:
    return startlab.run(web(), progress=False)


def test_every_exchange_finishes_without_loss(rfc5681: startlab.Result) -> None:
    flow = rfc5681.flows.iloc[0]
    assert flow["completed"] and flow["drops"] == 0
    responses = rfc5681.responses
    assert list(responses["index"]) == list(range(40))
    assert (np.diff(responses["request_time"]) > 0).all()
    # The connection carried every response, each padded to whole segments.
    padded = (np.ceil(responses["size"] / 1448) * 1448).sum()
    assert flow["bytes_acked"] == padded


def test_after_an_idle_rto_each_response_takes_t_ss_plus_one_rtt(rfc5681: startlab.Result) -> None:
    r = rfc5681.responses
    tau = rfc5681.flows.iloc[0]["base_rtt"]
    model = scharf.response_time(r["size"].to_numpy(), scheme="ss", r=10e6, tau=tau, L=1448, mtu=1500, w=3, b=1)
    error = r["response_time"].to_numpy() / model - 1
    # The RTO is 1 s (RFC 6298's minimum): a longer think restarts from IW = 3 segments (RFC
    # 5681 §4.1), so the transfer is the model's slow start; the first exchange follows the
    # handshake.
    idle = (r["think"].to_numpy() > 1.2) | (r["index"].to_numpy() == 0)
    assert idle.sum() >= 25
    assert np.abs(error[idle]).max() < 0.02, error[idle]
    # A short think keeps the grown window: the response is faster than a fresh slow start.
    warm = (r["think"].to_numpy() < 0.5) & (r["size"].to_numpy() > 60_000)
    assert warm.sum() >= 1 and (error[warm] < -0.1).all(), error[warm]


def test_rfc_2861_keeps_more_of_the_window_than_rfc_5681_and_off_keeps_all() -> None:
    times = {
        policy: startlab.run(web(policy, think="1.5s"), progress=False).responses["response_time"].sum()
        for policy in ("rfc5681", "rfc2861", "off")
    }
    assert times["off"] < times["rfc2861"] < times["rfc5681"], times


def test_bad_app_settings_name_the_key() -> None:
    doc = web()
    doc["flows"][0]["size"] = "1MB"
    with pytest.raises(startlab.ScenarioError, match=r"flows\[0\]\.size: a flow with app"):
        startlab.validate(doc)
    doc = web()
    doc["flows"][0]["app"]["request"] = "100KB"
    with pytest.raises(startlab.ScenarioError, match=r"flows\[0\]\.app\.request"):
        startlab.validate(doc)
    doc = web("sometimes")
    with pytest.raises(startlab.ScenarioError, match=r"idle_restart.*rfc2861"):
        startlab.validate(doc)


def test_a_target_load_sets_the_mean_think_time() -> None:
    # load 0.2 of 10 Mb/s with a mean response of 20 kB: mean think = 20 000 * 8 / 2e6 = 80 ms.
    doc = web(count=400)
    app = doc["flows"][0]["app"]
    del app["think"]
    app["load"] = 0.2
    app["response"] = {"dist": "exponential", "mean": "20KB"}
    r = startlab.run(doc, progress=False).responses
    thinks = r["think"].to_numpy()[1:]
    assert len(thinks) == 399
    assert abs(thinks.mean() - 0.08) < 4 * 0.08 / np.sqrt(len(thinks)), thinks.mean()
    doc["flows"][0]["app"]["think"] = "1s"
    with pytest.raises(startlab.ScenarioError, match=r"app\.load: give either think"):
        startlab.validate(doc)


def test_a_quick_start_response_takes_t_qs_as_the_model_says() -> None:
    # Scharf's T_QS = T_Paced + τ: the Quick-Start request on the SYN is answered within the
    # exchange's own round trip, so the response time is T_QS, not τ + T_QS (the model added a
    # second τ until 2026-11-24). 1 MB over 10 Mbit/s and 200 ms, approved at 5.12 Mbit/s.
    doc = web(count=1)
    doc["flows"][0]["startup"] = {"algorithm": "quick-start", "rate": "10Mbps"}
    doc["flows"][0]["app"]["response"] = {"dist": "fixed", "value": "1MB"}
    doc["duration"] = "20s"
    result = startlab.run(doc, progress=False)
    assert result.flows["qs_approved"].iloc[0] == pytest.approx(5.12e6)
    took = result.responses["response_time"].iloc[0]
    model = scharf.response_time(1_000_000, scheme="qs", r=10e6, tau=0.2, q=5.12e6)
    assert took == pytest.approx(model, rel=0.01), (took, model)
