"""The default figures tell the startup's story (issue 18): the plotted ranges, the reference lines,
the exit marks and the legends are checked on the figure objects, and every figure is compared with
its baseline image, which catches a change nobody meant.

The baselines are tests/baseline/plots/*.png, drawn by this file's own figure list (``FIGURES``) at
``BASELINE_DPI``. After an intended change of a figure, draw them again and look at every image
before committing it:

    python3 tests/test_plots.py --regenerate

The images are rendered with matplotlib's own settings for text in image tests
(``matplotlib.testing.set_font_settings_for_testing``, within an ``rc_context`` so that the process's
settings are left alone) and compared with ``matplotlib.testing.compare.compare_images`` at ``TOL``,
an RMS of pixel values (0-255).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import matplotlib
import matplotlib.testing
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.testing.compare import compare_images

import startlab
from startlab import _paths, plot

BASELINE = Path(__file__).resolve().parent / "baseline" / "plots"
BASELINE_DPI = 60
#: RMS tolerance of the image comparison. One reference line removed from the cwnd figure gives
#: an RMS of about 9 at this resolution (``test_the_image_comparison_sees_a_missing_line``); text
#: rendered by another FreeType stays well below 1.
TOL = 2.0

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

#: One SACK flow in slow start with the Paced Start paper's huge initial ssthresh (20000 packets,
#: far above anything drawn) through a 50-packet BDP and a 25-packet buffer: it overflows, exits
#: by loss and recovers. The packet trace of the bottleneck holds the drops as the router saw them.
ONE_FLOW = """\
name = "one-flow"
seed = 1
duration = "3s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "100Mbps"
queue = { kind = "droptail", limit = "25pkt" }

[[flows]]
name = "sack"
size = "infinite"
tcp = { recovery = "sack", mss = "1000B", initial_window = 2, initial_ssthresh = "20000pkt", ack = "every-packet" }
startup = { algorithm = "slow-start" }

[trace.packets]
links = ["bottleneck"]
direction = "forward"
"""

#: Six flows, three in slow start and three in HyStart, with an infinite initial ssthresh, started
#: within 300 ms of each other: more than a figure shows at once.
MANY_FLOWS = """\
name = "many-flows"
seed = 1
duration = "3s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
rtt = "40ms"
access_rate = "100Mbps"
queue = { kind = "droptail", limit = "30pkt" }

[[flows]]
name = "ss"
count = 3
start_jitter = "300ms"
size = "infinite"
tcp = { mss = "1000B", initial_window = 2, ack = "every-packet" }
startup = { algorithm = "slow-start" }

[[flows]]
name = "hy"
count = 3
start_jitter = "300ms"
size = "infinite"
tcp = { mss = "1000B", initial_window = 2, ack = "every-packet" }
startup = { algorithm = "hystart" }
"""

#: The buffer of ONE_FLOW's bottleneck, in packets (its ``queue.limit``).
ONE_FLOW_BUFFER = 25


@functools.cache
def one_flow() -> startlab.Result:
    """ONE_FLOW's result (shared: tests must not modify it)."""
    return startlab.run(ONE_FLOW, progress=False)


@functools.cache
def many_flows() -> startlab.Result:
    """MANY_FLOWS' result (shared: tests must not modify it)."""
    return startlab.run(MANY_FLOWS, progress=False)


@functools.cache
def comparison() -> startlab.Comparison:
    """ONE_FLOW under slow start and HyStart (shared: tests must not modify it)."""
    return startlab.compare(ONE_FLOW, ["slow-start", "hystart"], progress=False)


#: Every figure with a baseline image, by the baseline's name.
FIGURES: dict[str, Callable[[], Figure]] = {
    "one-flow-cwnd": lambda: one_flow().plot_cwnd(),
    "one-flow-sequence": lambda: one_flow().plot_sequence(),
    "one-flow-queue": lambda: one_flow().plot_queue(),
    "many-flows-cwnd": lambda: many_flows().plot_cwnd(),
    "many-flows-sequence": lambda: many_flows().plot_sequence(),
    "compare-cwnd": lambda: comparison().plot_cwnd(),
}


@contextlib.contextmanager
def image_test_text() -> Iterator[None]:
    """matplotlib's settings for reproducible text in image tests, for the duration only."""
    with matplotlib.rc_context():
        matplotlib.testing.set_font_settings_for_testing()
        yield


def render(figure: Figure, stem: Path) -> Path:
    """The figure as a PNG at the baselines' resolution, with the test text settings."""
    with image_test_text():
        return plot.save(figure, stem, dpi=BASELINE_DPI)[0]


def draw(name: str) -> Figure:
    """Build a figure of FIGURES with the test text settings."""
    with image_test_text():
        return FIGURES[name]()


# --- what the figure objects hold -----------------------------------------------------------------


def flow_row(result: startlab.Result, name: str) -> pd.Series:
    return result.flows.set_index("flow").loc[name]


def labelled(ax: Axes, prefix: str) -> list[Line2D]:
    return [line for line in ax.get_lines() if str(line.get_label()).startswith(prefix)]


def legend_texts(figure: Figure) -> list[str]:
    return [text.get_text() for legend in figure.legends for text in legend.get_texts()]


def annotations(ax: Axes) -> list[str]:
    return [text.get_text() for text in ax.texts]


def finite_y(line: Line2D) -> np.ndarray:
    y = np.asarray(line.get_ydata(), dtype=float)
    return y[np.isfinite(y)]


def test_the_cwnd_figure_shows_the_startup_beside_the_whole_run() -> None:
    result = one_flow()
    sack = flow_row(result, "sack")
    figure = result.plot_cwnd()
    startup, whole = figure.axes
    end = sack["startup_exit_time"] + plot.STARTUP_RTTS * sack["base_rtt"]
    assert startup.get_xlim() == pytest.approx((0.0, end)), "the startup panel ends 5 base RTTs past the exit"
    assert whole.get_xlim() == pytest.approx((0.0, 3.0)), "the whole-run panel spans the run"
    assert end < 1.0, "the startup of this run is well inside its first second"
    for ax in (startup, whole):
        assert ax.get_xlabel() == "time (s)" and ax.get_ylabel() == "cwnd (segments)"
    title = figure.get_suptitle()
    assert "one-flow" in title and "slow-start" in title, title


def test_the_cwnd_figure_draws_cwnd_in_segments() -> None:
    result = one_flow()
    figure = result.plot_cwnd()
    (line,) = labelled(figure.axes[0], "sack")
    trace = result.traces.cwnd
    assert np.array_equal(line.get_ydata(), trace["cwnd"] / 1000), "cwnd over the 1000-B MSS"
    assert max(line.get_ydata()) == pytest.approx(flow_row(result, "sack")["exit_cwnd_pkts"]), "slow start peaks at its exit"


def test_the_reference_lines_are_the_bdp_and_the_bdp_plus_the_buffer() -> None:
    result = one_flow()
    bdp = flow_row(result, "sack")["bdp"] / 1000
    figure = result.plot_cwnd()
    for ax in figure.axes:
        (line,) = labelled(ax, "BDP:")
        assert list(line.get_ydata()) == pytest.approx([bdp, bdp]), "a horizontal line at the BDP in segments"
        (line,) = labelled(ax, "BDP + buffer:")
        assert list(line.get_ydata()) == pytest.approx([bdp + ONE_FLOW_BUFFER] * 2), "the BDP plus the bottleneck's 25 packets"
    assert f"BDP: {bdp:.0f} segments" in legend_texts(figure)


def test_a_buffer_in_bytes_counts_packets_of_mss_plus_header() -> None:
    # 26000 B hold 25 packets of 1000 B of payload and 40 B of headers.
    result = startlab.run(ONE_FLOW.replace('limit = "25pkt"', 'limit = "26000B"'), progress=False)
    bdp = flow_row(result, "sack")["bdp"] / 1000
    (line,) = labelled(result.plot_cwnd().axes[0], "BDP + buffer:")
    assert list(line.get_ydata()) == pytest.approx([bdp + 25] * 2)
    queue = result.plot_queue()
    assert queue.axes[0].get_ylabel() == "queue (B)", "the queue in the unit of its limit"
    (limit,) = labelled(queue.axes[0], "buffer of bottleneck:left->right")
    assert list(limit.get_ydata()) == [26000] * 2


def test_a_huge_initial_ssthresh_is_not_drawn_and_the_legend_says_so() -> None:
    result = one_flow()
    figure = result.plot_cwnd()
    assert result.traces.cwnd["ssthresh"].iloc[0] == 20_000_000, "the scenario starts with 20000 packets"
    for ax in figure.axes:
        top = ax.get_ylim()[1]
        assert top < 2 * flow_row(result, "sack")["exit_cwnd_pkts"], "the y-axis is not stretched to 20000"
        assert all(finite_y(line).max(initial=0) <= top for line in ax.get_lines()), "nothing drawn above the plot"
    dotted = [line for line in figure.axes[1].get_lines() if line.get_linestyle() == ":"]
    assert dotted and all(len(finite_y(line)) for line in dotted), "ssthresh after the loss is drawn"
    assert any("initial 20000 segments above the plot: not drawn" in text for text in legend_texts(figure)), legend_texts(figure)


def test_an_infinite_initial_ssthresh_is_named_in_the_legend() -> None:
    texts = legend_texts(many_flows().plot_cwnd())
    assert any("initial ∞" in text and "not drawn" in text for text in texts), texts


def test_each_exit_is_marked_at_its_cwnd_with_its_reason() -> None:
    result = one_flow()
    sack = flow_row(result, "sack")
    figure = result.plot_cwnd()
    for ax in figure.axes:
        marks = [line for line in ax.get_lines() if line.get_marker() == "o"]
        assert [(list(m.get_xdata()), list(m.get_ydata())) for m in marks] == [([sack["startup_exit_time"]], [sack["exit_cwnd_pkts"]])]
    assert annotations(figure.axes[0]) == [f"exit: {sack['exit_reason']}"] and sack["exit_reason"] == "loss"


def test_the_sequence_figure_is_in_segments_with_drops_at_their_drop_times() -> None:
    result = one_flow()
    figure = result.plot_sequence()
    startup, whole = figure.axes
    assert startup.get_xlim() == figure_of_cwnd_xlim(result), "the same startup window as the cwnd figure"
    assert startup.get_ylabel() == "sequence number (segments)"
    seq = result.traces.seq
    for kind, label in (("sent", "sent"), ("retransmitted", "retransmitted"), ("acked", "cumulative ACK")):
        (line,) = labelled(startup, label)
        rows = seq[seq["event"] == kind]
        assert np.array_equal(line.get_ydata(), rows["seq"] / 1000), f"{kind} in segments"
    (drops,) = labelled(startup, "dropped")
    # The router's own record of the drops, from the packet trace of the bottleneck.
    packets = result.traces.packets
    dropped = packets[(packets["event"] == "drop") & (packets["kind"] == "data")]
    assert len(dropped) > 0
    assert np.array_equal(drops.get_xdata(), dropped["time"]), "each drop at the time the queue dropped it"
    assert np.array_equal(drops.get_ydata(), dropped["seq"] / 1000)
    early = seq[seq["time"] <= startup.get_xlim()[1]]
    assert startup.get_ylim()[1] < 1.1 * early["seq"].max() / 1000 + 1, "the startup panel's y-range is the startup's"
    assert whole.get_ylim()[1] >= seq["seq"].max() / 1000


def figure_of_cwnd_xlim(result: startlab.Result) -> tuple[float, float]:
    return result.plot_cwnd().axes[0].get_xlim()


def test_the_queue_figure_draws_the_buffer_and_shades_the_startup() -> None:
    result = one_flow()
    sack = flow_row(result, "sack")
    figure = result.plot_queue()
    startup, whole = figure.axes
    assert startup.get_ylabel() == "queue (packets)"
    assert startup.get_xlim() == figure_of_cwnd_xlim(result)
    for ax in (startup, whole):
        (limit,) = labelled(ax, "buffer of bottleneck:left->right")
        assert list(limit.get_ydata()) == [ONE_FLOW_BUFFER] * 2
        (span,) = ax.patches
        left, right = span.get_x(), span.get_x() + span.get_width()
        assert (left, right) == pytest.approx((sack["t0"], sack["startup_exit_time"])), "the startup, from t0 to the exit"
    assert "startup of sack" in legend_texts(figure)
    assert "one-flow" in figure.get_suptitle()


def test_many_flows_show_each_algorithms_median_and_the_worst_su_loss() -> None:
    result = many_flows()
    flows = result.flows
    expected = {}
    for algorithm, group in flows.groupby("startup", sort=False):
        ordered = group.sort_values("su_throughput")
        expected[algorithm] = ordered["flow"].iloc[(len(ordered) - 1) // 2]
    worst = flows.loc[flows["su_loss"].idxmax(), "flow"]
    assert flows["su_loss"].max() > 0, "some flow lost packets in its startup"
    texts = legend_texts(result.plot_cwnd())
    for algorithm, name in expected.items():
        assert any(t.startswith(f"{name} (median su_throughput of {algorithm}") for t in texts), (algorithm, texts)
    assert any(t.startswith(worst) and "worst su_loss" in t for t in texts), texts
    shown = [t for t in texts if t.split(" ")[0] in set(flows["flow"])]
    assert len(shown) == len({*expected.values(), worst}), "only the picked flows are drawn"
    sequence = result.plot_sequence()
    assert len(sequence.axes) == 2 * len(shown), "one row of two panels per picked flow"
    assert any("worst su_loss" in ax.get_title() for ax in sequence.axes)


def test_asked_flows_are_shown_as_asked() -> None:
    figure = many_flows().plot_cwnd(flows=["ss-1", "hy-2"])
    texts = legend_texts(figure)
    assert "ss-1" in texts and "hy-2" in texts and not any("median" in t for t in texts)
    with pytest.raises(ValueError, match="ss-0"):
        many_flows().plot_cwnd(flows="nobody")


def test_compare_overlays_the_algorithms_with_their_exits() -> None:
    figure = comparison().plot_cwnd()
    texts = legend_texts(figure)
    assert "slow-start: sack" in texts and "hystart: sack" in texts
    flows = comparison().flows.set_index("variant")
    reasons = [f"exit: {flows.loc[name, 'exit_reason']}" for name in ("slow-start", "hystart")]
    assert sorted(annotations(figure.axes[0])) == sorted(reasons)
    assert len({*reasons}) == 2, "the two algorithms leave for different reasons here"
    title = figure.get_suptitle()
    assert "one-flow" in title and "slow-start" in title and "hystart" in title


def test_every_axis_has_a_unit_and_every_title_the_scenario() -> None:
    for name in FIGURES:
        figure = draw(name)
        assert "one-flow" in figure.get_suptitle() or "many-flows" in figure.get_suptitle(), name
        for ax in figure.axes:
            for label in (ax.get_xlabel(), ax.get_ylabel()):
                assert label.endswith(")") and "(" in label, f"{name}: {label!r} has no unit"


def test_the_bottleneck_buffer_is_on_the_flows_path() -> None:
    # The path found by startlab._paths, summed as the simulator sums a base RTT (propagation plus
    # one data segment's serialisation forward and one header's back, per direction), must give
    # the simulator's own base_rtt for every flow: otherwise the buffer drawn is not the flow's.
    for file in ("two-rtts.toml", "graph-two-routers.toml", "paced-start-parking-lot.toml"):
        result = startlab.run(EXAMPLES / file, progress=False)
        links = result.links
        routes = _paths.Routes(links, _paths.hosts(result.scenario))
        tcp = {entry["name"]: entry["tcp"] for key in ("flows", "arrivals") for entry in result.scenario.get(key) or ()}
        for flow in result.flows.head(200).itertuples():
            header = (tcp.get(flow.flow) or tcp[flow.group])["header"]
            forward, backward = routes.path(flow.src, flow.dst), routes.path(flow.dst, flow.src)
            assert forward and backward, (file, flow.flow)
            nanoseconds = 0
            for c in set(forward) | set(backward):
                size = flow.mss + header if c in forward else header
                nanoseconds += round(links["delay"][c] * 1e9) + math.ceil(size * 8 * 1e9 / links["rate"][c])
            assert nanoseconds / 1e9 == pytest.approx(flow.base_rtt, abs=1e-9), (file, flow.flow)


# --- the same figures everywhere, and the images --------------------------------------------------


def test_the_cli_draws_the_figures_result_plot_draws(tmp_path: Path) -> None:
    scenario = tmp_path / "one-flow.toml"
    scenario.write_text(ONE_FLOW, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "startlab", "run", str(scenario), "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("cwnd", "sequence", "queue"):
        figure = getattr(one_flow(), f"plot_{name}")()
        here = plot.save(figure, tmp_path / f"here-{name}")
        assert compare_images(str(tmp_path / "out" / f"{name}.png"), str(here[0]), tol=0) is None, name
        cli_svg = (tmp_path / "out" / f"{name}.svg").read_bytes()
        assert cli_svg == here[1].read_bytes(), f"{name}.svg: the same bytes, without dates or random ids"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_each_figure_matches_its_baseline_image(name: str, tmp_path: Path) -> None:
    baseline = BASELINE / f"{name}.png"
    assert baseline.is_file(), f"no baseline {baseline}: draw it with `python3 tests/test_plots.py --regenerate`"
    failure = compare_images(str(baseline), str(render(draw(name), tmp_path / name)), tol=TOL)
    assert failure is None, f"{failure}\n(if the change is intended: python3 tests/test_plots.py --regenerate)"


def test_the_image_comparison_sees_a_missing_line(tmp_path: Path) -> None:
    figure = draw("one-flow-cwnd")
    for ax in figure.axes:
        for line in labelled(ax, "BDP:"):
            line.remove()
    failure = compare_images(str(BASELINE / "one-flow-cwnd.png"), str(render(figure, tmp_path / "altered")), tol=TOL)
    assert failure is not None, "a figure without its BDP line must not match the baseline"


def regenerate() -> None:
    """Draw every baseline image again."""
    BASELINE.mkdir(parents=True, exist_ok=True)
    for name in sorted(FIGURES):
        path = render(draw(name), BASELINE / name)
        path.with_suffix(".svg").unlink()
        print(f"wrote {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--regenerate", action="store_true", help=f"draw the baseline images in {BASELINE}")
    if parser.parse_args().regenerate:
        regenerate()
    else:
        parser.print_help()
