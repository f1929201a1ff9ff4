"""QUIC flows from Python (issue 35): examples/quic-hystart++.toml, the resolved ``quic`` table,
the refusals of the other transport's keys, and the CLI's messages for them."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

import startlab

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "quic-hystart++.toml"


def test_the_example_runs_the_same_startup_over_quic_and_tcp() -> None:
    r = startlab.run(EXAMPLE, progress=False)
    flows = r.flows.set_index("flow")
    assert list(flows["recovery"]) == ["rfc9002", "linux"]
    assert list(flows["startup"]) == ["hystart++", "hystart++"]
    assert flows["completed"].all() and (flows["bytes_delivered"] == 5_000_000).all()
    # The QUIC controller's segment is the 1472-byte datagram; its first data byte leaves after
    # the handshake's round trip and a half (80 ms RTT).
    q = flows.loc["quic"]
    assert q["mss"] == 1472
    assert 0.12 < q["t0"] < 0.125, q["t0"]
    # The seq trace holds the QUIC flow's stream offsets like TCP's sequence numbers.
    seq = r.traces.seq
    sent = seq[(seq["flow"] == "quic") & (seq["event"] == "sent")]
    assert sent["seq"].min() == 0 and (sent["seq"] + sent["len"]).max() == 5_000_000


def test_the_resolved_scenario_holds_the_quic_table_only_for_the_quic_flow() -> None:
    resolved = startlab.normalize(EXAMPLE)
    quic, tcp = resolved["flows"]
    assert quic["quic"]["initial_window"] == 14720 and quic["quic"]["max_datagram_size"] == 1472
    assert quic["quic"]["handshake"] is True and quic["quic"]["pacing"] is True
    assert quic["tcp"]["mss"] == 1472 and quic["tcp"]["header"] == 28
    assert "quic" not in tcp


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (lambda f: f["tcp"].update(recovery="sack"), "flows[0].tcp.recovery", "runs QUIC"),
        (lambda f: f["tcp"].update(rwnd="64KB"), "flows[0].tcp.rwnd", "flows[0].quic.max_data"),
        (lambda f: f["quic"].update(max_datagram_size="1480B"), "flows[0].quic.max_datagram_size", "path MTU"),
        (lambda f: f["quic"].update(ack_eliciting_threshold=0), "flows[0].quic.ack_eliciting_threshold", "between 1"),
        (lambda f: f["quic"].update(pacing=False, pacing_gain=2.0), "flows[0].quic.pacing_gain", "pacing = true"),
        (lambda f: f["quic"].update(congestion_avoidance="cubic"), "congestion_avoidance", "unknown field"),
    ],
)
def test_keys_of_the_other_transport_and_bad_values_are_refused_with_their_path(change, path: str, words: str) -> None:
    doc = copy.deepcopy(startlab.scenario_document(EXAMPLE))
    change(doc["flows"][0])
    with pytest.raises(startlab.ScenarioError) as e:
        startlab.validate(doc)
    assert path in str(e.value) and words in str(e.value), str(e.value)


def test_the_cli_names_the_key_and_the_quic_counterpart(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'seed = 1\nduration = "1s"\n[topology]\nkind = "dumbbell"\nbottleneck_rate = "10Mbps"\nrtt = "40ms"\naccess_rate = "1Gbps"\nqueue = { kind = "droptail", limit = "100pkt" }\n'
        '[[flows]]\nname = "q"\nquic = {}\ntcp = { mss = "1448B" }\n'
    )
    out = subprocess.run([sys.executable, "-m", "startlab", "validate", str(bad)], capture_output=True, text=True)
    assert out.returncode != 0
    assert "flows[0].tcp.mss" in out.stderr and "flows[0].quic.max_datagram_size" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
