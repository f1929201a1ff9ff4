"""The papers' startup algorithms as BPF congestion controls (startlab.kernelbpf, docs/KERNEL-BPF.md):
names and errors everywhere; where BPF may be loaded (root, clang, bpftool, libbpf-dev, BTF):
build, load, list and unload leaving the kernel as found (also after a failure and after the
loading process was killed), conformance with the sans-IO Rust algorithms on one scripted ACK
sequence (startlab.conformance), and the testbed running them by name beside the simulator."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from startlab.real import conformance, kernelbpf, kerneltcp, side_by_side, testbed
from startlab.cli import cli

ROOT = Path(__file__).resolve().parents[1]
REASON = kernelbpf.permitted() or testbed.permitted()
needs_bpf = pytest.mark.skipif(REASON is not None, reason=f"BPF congestion controls cannot be loaded here: {REASON}")
PYTHON_PATH = str(Path(kernelbpf.__file__).resolve().parents[2])


# --- everywhere --------------------------------------------------------------------------------


def test_names_are_canonical_and_an_unknown_one_lists_the_accepted() -> None:
    assert kernelbpf.variant("bpf-lss").kernel_name == "sl_lss_r"
    assert kernelbpf.variant("kernel:BPF-LSS+cubic").name == "bpf-lss+cubic"
    assert kernelbpf.variant("bpf-lss+reno").name == "bpf-lss"
    assert kernelbpf.variant("bpf-hystart++").kernel_name == "sl_hspp_r"
    assert all(len(kernelbpf.variant(n).kernel_name) < 16 for n in kernelbpf.names())  # TCP_CA_NAME_MAX
    with pytest.raises(ValueError, match=r"'bpf-bbr' is not a BPF algorithm; accepted: bpf-slow-start\[\+cubic\], bpf-lss"):
        kernelbpf.variant("bpf-bbr")
    with pytest.raises(ValueError, match="is not a BPF algorithm"):
        kernelbpf.variant("bpf-lss+vegas")
    assert kerneltcp.stack_name("bpf-lss") == "kernel:bpf-lss"
    assert kerneltcp.stack_settings("kernel:bpf-lss+cubic") == ("sl_lss_c", None)
    assert side_by_side.parse_stacks("sim,bpf-lss") == ["sim", "kernel:bpf-lss"]
    with pytest.raises(ValueError, match="stack = 'kernel:bpf-nope'"):
        kerneltcp.stack_name("kernel:bpf-nope")


def test_every_listed_algorithm_has_its_source_and_ports_a_declared_algorithm() -> None:
    import startlab

    declared = {a["name"] for a in startlab.algorithms() if a["role"] == "startup"}
    for name in kernelbpf.names():
        v = kernelbpf.variant(name)
        assert (kernelbpf.SOURCES / v.algorithm.source).is_file(), name
        assert v.algorithm.sim in declared, name


def test_bad_compile_time_parameters_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="BPF parameter 'max_ssthresh': expected an upper-case C macro name"):
        kernelbpf.build("bpf-lss", {"max_ssthresh": 50})
    with pytest.raises(ValueError, match="BPF parameter MAX_SSTHRESH = -1: expected a non-negative integer"):
        kernelbpf.build("bpf-lss", {"MAX_SSTHRESH": -1})


def _newton_cbrt(x: int) -> int:
    """cubic_avoidance.h's sl_cbrt, step for step."""
    y = 1 << 21
    for _ in range(48):
        nxt = (2 * y + (x // (y * y) if y else 0)) // 3
        y = min(nxt, y)
    if y and y**3 > x:
        y -= 1
    return y


def test_the_bpf_cube_root_is_the_floor_of_the_exact_one() -> None:
    import random

    rng = random.Random(7)
    values = [0, 1, 7, 8, 26, 27, 10**9, 2**62, 2**63 - 1, *(rng.randrange(2**k) for k in range(1, 64) for _ in range(3000))]
    for x in values:
        r = _newton_cbrt(x)
        assert r**3 <= x < (r + 1) ** 3, x


# --- in the kernel -----------------------------------------------------------------------------


def _available() -> list[str]:
    return kernelbpf.available()


@needs_bpf
def test_load_list_and_unload_leave_the_kernel_as_found() -> None:
    before = _available()
    assert "sl_lss_c" not in before
    obj = kernelbpf.build("bpf-lss+cubic")
    assert obj.is_file() and obj == kernelbpf.build("bpf-lss+cubic"), "a second build is the cached object"
    try:
        assert kernelbpf.load("bpf-lss+cubic") is True
        assert "sl_lss_c" in _available()
        assert kernelbpf.load("bpf-lss+cubic") is False, "already loaded: nothing done"
        row = next(r for r in kernelbpf.status() if r["name"] == "bpf-lss+cubic")
        assert row["loaded"] and row["loaded_by"] == os.getpid() and row["ports"] == "lss" and row["avoidance"] == "cubic"
    finally:
        assert kernelbpf.unload("bpf-lss+cubic") is True
    assert _available() == before
    assert kernelbpf.unload("bpf-lss+cubic") is False, "unloading what is not loaded says so"


@needs_bpf
def test_a_run_unloads_after_a_failure_and_a_killed_loader_is_recovered() -> None:
    with pytest.raises(RuntimeError, match="inside"):
        with kernelbpf.loaded("bpf-slow-start") as name:
            assert name in _available()
            raise RuntimeError("inside")
    assert "sl_ss_r" not in _available()
    # A process that registers for a run and is killed: the next run (recover) unregisters it.
    code = "import time\nfrom startlab.real import kernelbpf\nkernelbpf.load('bpf-slow-start')\nprint('loaded', flush=True)\ntime.sleep(60)"
    env = {**os.environ, "PYTHONPATH": PYTHON_PATH}
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "loaded"
        assert "sl_ss_r" in _available()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    done = kernelbpf.recover()
    assert any("sl_ss_r" in d for d in done), done
    assert "sl_ss_r" not in _available()


@needs_bpf
def test_the_cli_loads_lists_and_unloads() -> None:
    runner = CliRunner()
    try:
        loaded = runner.invoke(cli, ["kernel", "load", "bpf-lss", "--param", "MAX_SSTHRESH=50"])
        assert loaded.exit_code == 0 and "loaded as sl_lss_r" in loaded.output, loaded.output
        listed = json.loads(runner.invoke(cli, ["kernel", "list", "--json"]).output)
        row = next(r for r in listed if r["name"] == "bpf-lss")
        assert row["loaded"] and row["loaded_by"] == 0, "kept until unloaded"
        assert kernelbpf.recover() == [], "recover leaves an explicit load alone"
    finally:
        unloaded = runner.invoke(cli, ["kernel", "unload", "bpf-lss"])
    assert unloaded.exit_code == 0 and "unloaded" in unloaded.output
    again = runner.invoke(cli, ["kernel", "unload", "bpf-lss"])
    assert again.exit_code == 0 and "was not loaded" in again.output
    bad = runner.invoke(cli, ["kernel", "load", "bpf-lss", "--param", "MAX_SSTHRESH"])
    assert bad.exit_code == 2 and "expected NAME=INTEGER" in bad.stderr
    assert "sl_lss_r" not in _available()


def _orphans() -> int:
    """TCP sockets orphaned on the machine (closed by their process, still holding data)."""
    for line in Path("/proc/net/sockstat").read_text().splitlines():
        if line.startswith("TCP:"):
            fields = line.split()
            return int(fields[fields.index("orphan") + 1])
    return 0


def _left_nothing(name: str) -> None:
    assert kernelbpf.variant(name).kernel_name not in _available(), "unloaded after the run"
    assert not [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split() if n.startswith("slc")]


@needs_bpf
@pytest.mark.parametrize(("name", "ssthresh", "acks"), conformance.WINDOW_CASES)
def test_a_window_algorithm_gives_the_rust_window_after_every_ack(name: str, ssthresh: int | None, acks: int) -> None:
    orphans = _orphans()
    trace = conformance.conform(name, conformance.Script(acks=acks, initial_ssthresh=ssthresh))
    # the peer resets its connection: no socket is left holding data in the deleted namespace
    assert _orphans() <= orphans
    assert len(trace.acks) == acks and trace.mss == 1460
    if name.endswith("+cubic"):
        assert trace.mismatches(exact=True, startup_only=True) == []
        assert trace.mismatches(exact=False) == []
    else:
        assert trace.mismatches(exact=True) == []
    assert conformance.verdict(trace) == []
    assert len(trace.rounds) >= 4
    assert trace.kernel_cwnd[-1] > trace.kernel_cwnd[0]
    _left_nothing(name)


#: The real kernel's timers decide a few segments run to run (a paced segment leaving before or
#: after an ACK): measured on this idle 2-core VM, Careful Resume's conformance ended a round two
#: segments apart from its Rust version in 1 run of 8 and SUSS's round 2 read 39 instead of 41 in
#: about half. A failing run is run again up to twice; a systematic disagreement still fails.
KERNEL_TIMING = pytest.mark.flaky(reruns=2)


@needs_bpf
@KERNEL_TIMING
@pytest.mark.parametrize(("name", "ssthresh", "acks"), conformance.TIMING_CASES)
def test_a_timing_algorithm_stays_within_a_segment_of_the_rust_window_each_round(name: str, ssthresh: int | None, acks: int) -> None:
    trace = conformance.conform(name, conformance.Script(acks=acks, initial_ssthresh=ssthresh))
    assert trace.mismatches(exact=False) == [] and conformance.verdict(trace) == []
    left = [i for i, s in enumerate(trace.rust_in_startup) if not s]
    assert left, "the Rust version should leave startup on this path"
    assert trace.kernel_ssthresh[-1] < 0x7FFFFFFF, "the kernel version left startup too"
    assert abs(trace.kernel_ssthresh[-1] - int(trace.rust_cwnd[left[0]] + 1e-9)) <= 1, "both set ssthresh to the exit window"
    if "suss" in name:
        # Round 2 grows fourfold on both sides, 10 -> 40, and the next round's first ACK adds one:
        # 41. While the round's extra data is still being paced out, SUSS keeps cwnd two segments
        # ahead of what left (docs/algorithms/suss.md), so when that ACK comes before the last
        # paced segments have left — the kernel's pacing timer decides, run to run — it reads 39.
        # Either way both sides read the same, far above slow start's 21.
        kernel, rust = trace.kernel_cwnd[trace.rounds[0]], int(trace.rust_cwnd[trace.rounds[0]] + 1e-9)
        assert kernel == rust and 39 <= kernel <= 41, (kernel, rust)
    if "paced" in name:
        # the FILL train: cwnd = RTT / g, with g from the trains' ACK gaps (about 58-67 segments
        # here; the kernel's ACK times, which both sides get, decide where in that range)
        assert 40 <= trace.kernel_ssthresh[-1] <= 90, trace.kernel_ssthresh[-1]
        assert trace.clock == "kernel", "Paced Start's gaps need the kernel's own ACK times"
    _left_nothing(name)


@needs_bpf
@pytest.mark.parametrize(("name", "params", "acks"), conformance.PRESET_CASES)
def test_a_hystartpp_preset_in_the_kernel_stays_within_a_segment_of_its_rust_version(name: str, params: dict[str, int], acks: int) -> None:
    from startlab import _core

    trace = conformance.conform(name, conformance.Script(acks=acks), bpf_params=params)
    assert trace.mismatches(exact=False) == [] and conformance.verdict(trace) == []
    left = [i for i, s in enumerate(trace.rust_in_startup) if not s]
    assert left, "the Rust version should leave startup on this path"
    assert trace.kernel_ssthresh[-1] < 0x7FFFFFFF, "the kernel version left startup too"
    assert abs(trace.kernel_ssthresh[-1] - int(trace.rust_cwnd[left[0]] + 1e-9)) <= 1, "both set ssthresh to the exit window"
    # Not vacuous: on the same ACKs, RFC 9406's windows differ from quiche's (its CSS exit ACK
    # grows), msquic's (its first-8 minimum) and ngtcp2's (four CSS rounds). neqo's differences
    # (the count after entry, the baseline) need an RTT drop in CSS, which this path has not.
    rfc = conformance.scenario_text("hystart++", trace.mss, conformance.Script(acks=acks), None, kernelbpf.variant(name).avoidance)
    rfc_cwnd = [c / trace.mss for c, _s, _i in _core.controller_trace(rfc, trace.acks)]
    if params["PRESET"] != 3:
        assert any(abs(a - b) > 1e-9 for a, b in zip(rfc_cwnd, trace.rust_cwnd)), "the preset should change the Rust windows on this path"
    _left_nothing(name)


def test_conform_params_are_the_rust_versions_and_others_are_refused_by_name() -> None:
    from startlab.real import bpfparams

    assert bpfparams.rust_params("bpf-hystart++", {"PRESET": 2, "CSS_ROUNDS": 4, "MIN_RTT_THRESH_US": 2000}) == {"preset": "msquic", "css_rounds": 4, "min_rtt_thresh": "2000us"}
    assert bpfparams.rust_params("bpf-hystart+++cubic", {"ACK_ORDER": 3, "LATER_SLOW_STARTS": 1}) == {"ack_order": "growth-round-sample", "later_slow_starts": "hystart++"}
    assert bpfparams.rust_params("bpf-lss", {"MAX_SSTHRESH": 50}) == {"max_ssthresh": "50pkt"}
    with pytest.raises(ValueError, match=r"--param PRESET=5: expected 0 to 4 \(0 rfc9406, 1 quiche, 2 msquic, 3 neqo, 4 ngtcp2\)"):
        bpfparams.rust_params("bpf-hystart++", {"PRESET": 5})
    with pytest.raises(ValueError, match="--param INITIAL_SSTHRESH: not a parameter bpf-hystart\\+\\+ shares with its Rust version"):
        bpfparams.rust_params("bpf-hystart++", {"INITIAL_SSTHRESH": 20})
    # Every Rust key of the mapping is a declared parameter of the algorithm it ports.
    import startlab

    declared = {a["name"]: {p["name"] for p in a["params"]} for a in startlab.algorithms() if a["role"] == "startup"}
    for sim, mapping in bpfparams.MAPPINGS.items():
        assert {key for key, _ in mapping.values()} <= declared[sim], sim
    result = CliRunner().invoke(cli, ["kernel", "conform", "bpf-hystart++", "--param", "PRESET=9"])
    assert result.exit_code == 2 and "--param PRESET=9: expected 0 to 4" in result.output, result.output


@needs_bpf
def test_the_comparison_would_see_a_different_algorithm() -> None:
    # LSS in the kernel against slow start in Rust: the check is not vacuous.
    trace = conformance.conform("bpf-lss", conformance.Script(acks=2500))
    from startlab import _core

    text = conformance.scenario_text("slow-start", trace.mss, conformance.Script())
    other = [c / trace.mss for c, _s, _i in _core.controller_trace(text, trace.acks)]
    assert any(int(r) != k for k, r in zip(trace.kernel_cwnd, other))


@needs_bpf
def test_compare_real_runs_the_bpf_and_rust_versions_side_by_side(tmp_path: Path) -> None:
    scenario = (ROOT / "examples" / "real" / "path-20mbps.toml").read_text().replace('duration = "5s"', 'duration = "2s"')
    path = tmp_path / "path.toml"
    path.write_text(scenario)
    results = side_by_side.compare_real(path, ["sim", "kernel:bpf-lss"], tmp_path / "out", startup="lss")
    rows = {r.stack: r for r in results}
    assert set(rows) == {"sim", "kernel:bpf-lss"}
    for r in rows.values():
        assert r.exit_reason == "loss" and r.exit_cwnd_pkts is not None and r.goodput_bps is not None and r.goodput_bps > 15e6, (r.stack, r.row(), r.detail)
    assert "sl_lss_r" not in _available()


def test_bpf_params_set_every_stack_of_a_comparison_and_need_one_ported_algorithm(tmp_path: Path) -> None:
    """compare-real --bpf-param: the sim (and udp) stacks run what the compile-time parameters
    stand for; without exactly one BPF algorithm among the stacks it is refused."""
    path, flow = side_by_side.prepare(ROOT / "examples" / "real" / "path-20mbps.toml", tmp_path, "hystart++", startup_params={"preset": "msquic"})
    startup = json.loads(path.read_text())["flows"][0]["startup"]
    assert startup == {"algorithm": "hystart++", "preset": "msquic"} and flow["startup"]["params"]["preset"] == "msquic"
    with pytest.raises(ValueError, match="BPF versions of one algorithm"):
        side_by_side.compare_real(path, ["sim"], tmp_path / "w", bpf_params={"PRESET": 2})
    bad = CliRunner().invoke(cli, ["compare-real", str(path), "--stacks", "sim,kernel:bpf-lss", "--bpf-param", "PRESET=2"])
    assert bad.exit_code == 2 and "PRESET" in bad.output and "MAX_SSTHRESH" in bad.output, bad.output


@needs_bpf
def test_compare_real_compiles_the_bpf_stack_with_a_preset_and_runs_it_in_the_simulator_too(tmp_path: Path) -> None:
    scenario = (ROOT / "examples" / "real" / "path-20mbps.toml").read_text().replace('duration = "5s"', 'duration = "2s"')
    path = tmp_path / "path.toml"
    path.write_text(scenario)
    results = side_by_side.compare_real(path, ["sim", "kernel:bpf-hystart++"], tmp_path / "out", bpf_params={"PRESET": 4})
    rows = {r.stack: r for r in results}
    assert set(rows) == {"sim", "kernel:bpf-hystart++"}
    for r in rows.values():
        assert r.exit_cwnd_pkts is not None and r.goodput_bps is not None and r.goodput_bps > 15e6, (r.stack, r.row())
    assert "sl_hspp_r" not in _available()


#: Careful Resume's compiled-in saved sets on the scripted path (20 Mbit/s, 40 ms: a BDP of 68
#: segments) and the window each sets on the ACK of the initial window (its tenth): half of 20 or
#: 100 Mbit/s x 40 ms, capped by MAX_JUMP, or no jump when the saved RTT is a tenth of the path's
#: (the kernel's first-flight RTT samples include the time before the peer read that flight, so
#: the case that refuses the jump is the one those samples cannot change: a path RTT above ten
#: times the saved one).
CAREFUL_RESUME_CASES = [
    ("bpf-careful-resume", {"SAVED_RATE": 20_000_000, "SAVED_RTT_US": 40_000}, 34),
    ("bpf-careful-resume", {"SAVED_RATE": 100_000_000, "SAVED_RTT_US": 40_000}, 171),
    ("bpf-careful-resume+cubic", {"SAVED_RATE": 20_000_000, "SAVED_RTT_US": 40_000}, 34),
    ("bpf-careful-resume", {"SAVED_RATE": 20_000_000, "SAVED_RTT_US": 40_000, "MAX_JUMP": 25}, 25),
    ("bpf-careful-resume", {"SAVED_RATE": 20_000_000, "SAVED_RTT_US": 3_000}, None),
]


@needs_bpf
@KERNEL_TIMING
@pytest.mark.parametrize(("name", "params", "jump"), CAREFUL_RESUME_CASES)
def test_careful_resume_jumps_as_its_rust_version_on_the_same_acks(name: str, params: dict[str, int], jump: int | None) -> None:
    trace = conformance.conform(name, conformance.Script(acks=600), bpf_params=params)
    assert conformance.verdict(trace) == []
    # The tenth ACK covers the initial window: the jump (or slow start's 20 segments) on both sides.
    assert trace.kernel_cwnd[9] == int(trace.rust_cwnd[9] + 1e-9) == (jump or 20), (trace.kernel_cwnd[:12], trace.rust_cwnd[:12])
    if jump:
        # Validating: the window becomes the flight (below the jump), then slow start on both sides.
        assert min(trace.kernel_cwnd[10:]) < jump < trace.kernel_cwnd[-1]
    assert all(s for s in trace.rust_in_startup), "no loss on the scripted path: startup never ends"
    _left_nothing(name)


@needs_bpf
@KERNEL_TIMING
def test_the_cli_conforms_careful_resume_with_a_compiled_in_saved_set() -> None:
    out = CliRunner().invoke(cli, ["kernel", "conform", "bpf-careful-resume", "--acks", "300", "--param", "SAVED_RATE=20000000", "--param", "SAVED_RTT_US=40000"])
    assert out.exit_code == 0, out.output
    assert "against startlab's careful-resume" in out.output and "within one segment at the end of every round: yes" in out.output
    bad = CliRunner().invoke(cli, ["kernel", "conform", "bpf-careful-resume", "--param", "SAVED_RATE"])
    assert bad.exit_code == 2 and "expected NAME=INTEGER" in bad.output
