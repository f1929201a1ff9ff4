"""Careful Resume (RFC 9959, docs/algorithms/careful-resume.md) through the Python API: its keys
refused with their paths, its phase columns in ``result.flows``, and a ``[[users]]`` user's
connections carrying the saved rate and RTT from one to the next."""

from __future__ import annotations

import math
from typing import Any

import pytest

import startlab

TOPOLOGY = {"kind": "dumbbell", "bottleneck_rate": "20Mbps", "rtt": "100ms", "access_rate": "1Gbps", "queue": {"kind": "droptail", "limit": "100pkt"}}


def flow_scenario(startup: dict[str, Any], tcp: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "seed": 1,
        "duration": "10s",
        "topology": TOPOLOGY,
        "flows": [{"name": "f", "size": "2MB", "tcp": {"ack": "every-packet", **(tcp or {})}, "startup": startup}],
    }


def users_scenario(startup: dict[str, Any]) -> dict[str, Any]:
    return {
        "seed": 3,
        "duration": "30s",
        "topology": TOPOLOGY,
        "users": [{
            "name": "u", "count": 1, "connection": "new", "transfers": 3,
            "size": {"dist": "fixed", "value": "2MB"}, "think": {"dist": "fixed", "value": "1s"},
            "tcp": {"ack": "every-packet"}, "startup": startup,
        }],
    }


@pytest.mark.parametrize(
    ("startup", "path", "message"),
    [
        ({"saved_rate": "100Mbps", "saved_rtt": "0s"}, "flows[0].startup.saved_rtt", '"0s" is not a saved RTT'),
        ({"saved_rate": "100Mbps"}, "flows[0].startup.saved_rtt", "is required with saved_rate"),
        ({"saved_rtt": "100ms"}, "flows[0].startup.saved_rate", "is required with saved_rtt"),
        ({"saved_rate": 100}, "flows[0].startup.saved_rate", 'a rate such as "10Mbps"'),
        ({"beta": 0.4}, "flows[0].startup.beta", "from 0.5 to 1"),
        ({"jump_fraction": 0.6}, "flows[0].startup.jump_fraction", "from 0 to 0.5"),
        ({"lifetime": "0s"}, "flows[0].startup.lifetime", "must be positive"),
    ],
)
def test_bad_saved_parameters_are_refused_with_their_key_path(startup: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(startlab.ScenarioError) as e:
        startlab.validate(flow_scenario({"algorithm": "careful-resume", **startup}))
    assert path in str(e.value) and message in str(e.value), str(e.value)


def test_a_users_bad_saved_rtt_names_the_users_table() -> None:
    with pytest.raises(startlab.ScenarioError, match=r"users\[0\]\.startup\.saved_rtt"):
        startlab.validate(users_scenario({"algorithm": "careful-resume", "saved_rate": "10Mbps", "saved_rtt": "0s"}))


def test_the_per_response_keys_are_accepted_and_the_refusal_lists_it() -> None:
    startlab.validate(flow_scenario({"algorithm": "careful-resume"}, {"startup_after_idle": True}))
    with pytest.raises(startlab.ScenarioError, match="careful-resume"):
        startlab.validate(flow_scenario({"algorithm": "slow-start"}, {"startup_after_idle": True}))


def test_the_flow_table_shows_which_phases_ran_and_why() -> None:
    jumped = startlab.run(flow_scenario({"algorithm": "careful-resume", "saved_rate": "20Mbps", "saved_rtt": "100ms"}), progress=False).flows.iloc[0]
    assert jumped.cr_path == "reconnaissance>unvalidated>validating>normal"
    assert jumped.cr_recon_exit == "jump" and jumped.cr_jump_cwnd == 125_000
    refused = startlab.run(flow_scenario({"algorithm": "careful-resume", "saved_rate": "20Mbps", "saved_rtt": "300ms"}), progress=False).flows.iloc[0]
    assert refused.cr_path == "reconnaissance>normal" and refused.cr_recon_exit == "rtt-too-small"
    retreat = startlab.run(flow_scenario({"algorithm": "careful-resume", "saved_rate": "100Mbps", "saved_rtt": "100ms"}), progress=False).flows.iloc[0]
    assert retreat.cr_retreat_cause == "loss" and retreat.cr_normal_cause == "retreat-done"
    assert retreat.cr_exit_ssthresh == retreat.cr_pipesize * 0.5


def test_a_users_later_connections_resume_from_the_first() -> None:
    cr = startlab.run(users_scenario({"algorithm": "careful-resume"}), progress=False).transfers
    ss = startlab.run(users_scenario({"algorithm": "slow-start"}), progress=False).transfers
    assert list(cr.transfer) == [0, 1, 2]
    assert cr.time_to_90[0] == ss.time_to_90[0], "nothing saved before the first connection"
    for k in (1, 2):
        assert cr.time_to_90[k] < 0.6 * ss.time_to_90[k], (k, cr.time_to_90[k], ss.time_to_90[k])


def test_each_transfer_row_carries_its_connections_careful_resume_report() -> None:
    rows = startlab.run(users_scenario({"algorithm": "careful-resume"}), progress=False).transfers
    assert rows is not None
    first, second = rows.iloc[0], rows.iloc[1]
    # The first connection found nothing saved: Reconnaissance, then normal CC, no jump.
    assert first.cr_path == "reconnaissance>normal" and first.cr_recon_exit == "no-saved-state"
    assert first.cr_jumps == 0 and math.isnan(first.cr_jump_cwnd) and math.isnan(first.cr_saved_rate)
    assert first.cr_retained == "observed"
    # The second resumed from what the first observed: the jump to half the saved window.
    assert second.cr_path == "reconnaissance>unvalidated>validating>normal" and second.cr_recon_exit == "jump"
    assert second.cr_jumps == 1 and second.cr_saved_rate == first.cr_retained_rate and second.cr_saved_rtt == first.cr_retained_rtt
    assert second.cr_jump_cwnd == pytest.approx(second.cr_saved_rate / 8 * second.cr_saved_rtt / 2)
    assert second.cr_t_unvalidated > second.start and second.cr_unvalidated_exit in ("window-full", "first-unvalidated-acked", "rtt-exceeded")
    # Columns follow the table's own, by name; a startup without a report adds none.
    assert list(rows.columns[:25]) == list(startlab.result._TRANSFER_COLUMNS)
    assert list(rows.columns[25:]) == sorted(rows.columns[25:]) and "cr_path" in rows.columns
    plain = startlab.run(users_scenario({"algorithm": "slow-start"}), progress=False).transfers
    assert plain is not None and list(plain.columns) == list(startlab.result._TRANSFER_COLUMNS)


def test_a_persistent_connection_reports_with_its_startup_metrics() -> None:
    doc = users_scenario({"algorithm": "careful-resume"})
    doc["users"][0]["connection"] = "persistent"
    rows = startlab.run(doc, progress=False).transfers
    assert rows is not None and len(rows) == 3
    # Its startup ran during its first transfer: the report is there, as su_time is.
    assert rows.cr_path[0] == "reconnaissance>normal" and rows.su_time[0] > 0
    assert rows.cr_path[1:].isna().all() and rows.su_time[1:].isna().all()
    # With a startup per response after idle, each row has the report as the response ended.
    doc["users"][0]["tcp"]["startup_after_idle"] = True
    again = startlab.run(doc, progress=False).transfers
    assert again is not None and again.cr_path.notna().all()
    assert again.cr_attempts.tolist() == sorted(again.cr_attempts) and again.cr_attempts.iloc[-1] >= 2


def test_the_json_of_the_transfers_carries_the_report_columns() -> None:
    import json

    from startlab import _core
    from startlab.result import build, native_json

    sim = _core.Simulation(json.dumps(users_scenario({"algorithm": "careful-resume"})), "json", None)
    sim.run()
    raw = sim.results()
    # `startlab run --json` (from the native columns) gives what Result.to_json gives.
    text = native_json(raw)
    assert text == build(raw, sim.stats()).to_json()
    rows = json.loads(text)["transfers"]
    assert [r["cr_recon_exit"] for r in rows] == ["no-saved-state", "jump", "jump"]
    assert rows[0]["cr_jump_cwnd"] is None and rows[1]["cr_jump_cwnd"] > 0
