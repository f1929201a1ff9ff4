"""``[trace.packets]``: the per-packet router trace through the Python API (columns, names, the
sequence plot at a router, files), on the shipped example."""

from __future__ import annotations

from pathlib import Path

import pytest

import startlab

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "router-trace.toml"


@pytest.fixture(scope="module")
def result() -> startlab.Result:
    return startlab.run(EXAMPLE, progress=False)


def test_the_packet_trace_names_links_flows_events_and_kinds(result: startlab.Result) -> None:
    p = result.traces.packets
    assert list(p.columns) == ["time", "link", "event", "kind", "flow", "seq", "len", "size", "queue_packets", "queue_bytes"]
    assert set(p["link"]) == {"bottleneck:left->right"}
    assert set(p["kind"]) == {"data"}, "the forward direction carries data only"
    assert p["time"].is_monotonic_increasing
    counts = p.groupby(["flow", "event"], observed=True).size()
    # Slow start overruns the 8-packet buffer (the paper's Fig. 8); Fine-4 does not.
    assert counts[("slow-start", "drop")] == result.flows.set_index("flow").loc["slow-start", "drops"] > 0
    assert ("fine-4", "drop") not in counts
    assert counts[("fine-4", "enqueue")] == counts[("fine-4", "dequeue")]
    assert p["queue_packets"].max() == 8
    data = p[p["event"] == "enqueue"]
    assert (data["size"] == data["len"] + 40).all()


def test_the_router_sequence_plot_and_the_files(result: startlab.Result, tmp_path: Path) -> None:
    figure = result.plot_packets(flow="fine-4")
    ax = figure.axes[0]
    assert "fine-4" in ax.get_title() and "bottleneck:left->right" in ax.get_title()
    assert {line.get_label() for line in ax.get_lines()} == {"enqueue", "dequeue"}
    with pytest.raises(KeyError, match="traced: bottleneck:left->right"):
        result.plot_packets(link="bottleneck:right->left")
    with pytest.raises(KeyError, match="'nobody' has no data packets"):
        result.plot_packets(flow="nobody")
    written = {p.name for p in result.write(tmp_path)}
    assert {"trace_packets.parquet", "trace_packets.csv", "packets.png", "packets.svg"} <= written


def test_without_the_table_the_trace_is_empty_and_nothing_else_changes(result: startlab.Result) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").split("[trace.packets]")[0]
    plain = startlab.run(text, progress=False, base=EXAMPLE.parent)
    assert plain.traces.packets.empty and list(plain.traces.packets.columns) == list(result.traces.packets.columns)
    assert plain.flows.equals(result.flows) and plain.links.equals(result.links)
    assert plain.traces.seq.equals(result.traces.seq) and plain.traces.queue.equals(result.traces.queue)


def test_a_bad_flow_name_is_refused_with_its_key_path() -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace('direction = "forward"', 'flows = ["slowstart"]')
    with pytest.raises(startlab.ScenarioError, match=r'trace\.packets\.flows\[0\]: "slowstart" names no flow'):
        startlab.validate(text)
