"""Kernel TCP side by side on the testbed (startlab.kerneltcp): the stack names, the trace parser and
the startup-exit rule everywhere; on a testbed (root) every stack's transfer with its per-ACK
samples from tcp_probe, the TCP_INFO fallback, the initial window, and the global settings — the
tcp_cubic hystart parameter, the congestion-control modules, the tracefs instance — left as they
were after a run, an exception, a SIGTERM and (at the next run) a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from startlab.real import kerneltcp, system, testbed, tracefs
from startlab.real.kerneltcp import KernelRun, KernelSample

REASON = testbed.permitted()
needs_testbed = pytest.mark.skipif(REASON is not None, reason=f"the testbed cannot run here: {REASON}")
HYSTART = Path("/sys/module/tcp_cubic/parameters/hystart")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
PYTHON_PATH = str(Path(kerneltcp.__file__).resolve().parents[2])


# --- without root ------------------------------------------------------------------------------


def test_stack_names_are_canonical_and_an_unknown_one_lists_the_accepted() -> None:
    assert kerneltcp.stack_name("cubic") == "kernel:cubic"
    assert kerneltcp.stack_name("KERNEL:BBR") == "kernel:bbr"
    assert kerneltcp.stack_name("cubic-nohystart") == "kernel:cubic-nohystart"
    with pytest.raises(ValueError, match=r"stack = 'kernel:vegas'.*accepted: kernel:cubic, kernel:cubic-nohystart, kernel:reno, kernel:bbr"):
        kerneltcp.stack_name("kernel:vegas")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give size .* or duration"),
        ({"size": 0}, "size = 0: expected a positive number of bytes"),
        ({"duration": -1.0}, "duration = -1.0"),
        ({"size": 10, "port": 70000}, "port = 70000"),
        ({"size": 10, "initial_window": 0}, "initial_window = 0"),
        ({"size": 10, "source": "pcap"}, "source = 'pcap': expected one of auto, tcp_probe, tcp_info"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs: dict[str, Any], message: str) -> None:
    tb = testbed.Testbed("args")  # never brought up: the arguments are checked first
    with pytest.raises(ValueError, match=message):
        kerneltcp.run(tb, "cubic", **kwargs)


def test_a_congestion_control_the_kernel_lacks_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = tmp_path / "available"
    listed.write_text("reno cubic\n")
    monkeypatch.setattr(system, "AVAILABLE_CC", listed)
    monkeypatch.setenv("PATH", str(tmp_path))  # no modprobe
    with pytest.raises(kerneltcp.KernelTcpError, match=r"this kernel has no bbr congestion control.*available: reno cubic.*no `modprobe`"):
        kerneltcp._Globals().ensure_congestion_control("bbr")


PROBE = (
    "          <idle>-0       [001] ..s2.  {t}: tcp_probe: family=AF_INET src=10.203.2.1:40000 dest=10.203.1.1:5201 mark=0x0 "
    "data_len=0 snd_nxt={nxt:#x} snd_una={una:#x} snd_cwnd={cwnd} ssthresh={ssthresh} snd_wnd=65160 srtt={srtt} rcv_wnd=64256 "
    "sock_cookie=2a skbaddr=00000000a1b2c3d4 skaddr=00000000e5f60718"
)
RETRANSMIT = (
    " python3 -m startlab-1234 [000] b..1.  {t}: tcp_retransmit_skb: skbaddr=0000 skaddr=0000 family=AF_INET sport=40000 dport=5201 "
    "saddr=10.203.2.1 daddr=10.203.1.1 saddrv6=::ffff:10.203.2.1 daddrv6=::ffff:10.203.1.1 state={state} err={err}"
)


def test_trace_lines_are_parsed_robustly() -> None:
    isn = 0xFFFFF000  # the sequence numbers wrap past 2^32 during the trace
    lines = [
        PROBE.format(t="100.000100", nxt=isn + 14480, una=isn, cwnd=10, ssthresh=2147483647, srtt=40000),
        "",
        "CPU:1 [LOST 3 EVENTS]",
        RETRANSMIT.format(t="100.000150", state="TCP_SYN_SENT", err=0),  # the handshake's: not data
        PROBE.format(t="100.040000", nxt=(isn + 43440) % 2**32, una=(isn + 14480) % 2**32, cwnd=20, ssthresh=2147483647, srtt=40100),
        RETRANSMIT.format(t="100.050000", state="TCP_ESTABLISHED", err=-105),  # not sent (queue full)
        RETRANSMIT.format(t="100.060000", state="TCP_ESTABLISHED", err=0),
        PROBE.format(t="100.080000", nxt=(isn + 43440) % 2**32, una=(isn + 28960) % 2**32, cwnd=14, ssthresh=14, srtt=41000),
        "garbage without an event",
        PROBE.format(t="100.090000", nxt=1, una=2, cwnd=15, ssthresh=14, srtt=41000)[:120],  # cut short: no snd_cwnd
        " <...>-77 [000] .....  100.1: sched_switch: prev_comm=x",
    ]
    samples, retransmits, lost, unparsed = kerneltcp._parse_trace(lines, t0=100.0)
    assert [round(s.t_s, 6) for s in samples] == [0.0001, 0.04, 0.08]
    assert [s.snd_una for s in samples] == [0, 14480, 28960], "bytes acknowledged, counted from the first data byte, across the wrap"
    assert [s.snd_nxt for s in samples] == [14480, 43440, 43440]
    assert [s.ssthresh_pkts for s in samples] == [None, None, 14], "0x7fffffff is 'not set'"
    assert samples[0].srtt_s == pytest.approx(0.040) and samples[0].snd_wnd == 65160
    assert retransmits == [pytest.approx(0.06)]
    assert lost == 3 and unparsed == 3
    assert tracefs.parse_trace_line("CPU:1 [LOST 3 EVENTS]") is None
    parsed = tracefs.parse_trace_line(lines[0])
    assert parsed is not None
    event, seconds, fields = parsed
    assert (event, seconds) == ("tcp_probe", 100.0001)
    assert fields["src"] == "10.203.2.1:40000" and fields["snd_cwnd"] == "10" and fields["sock_cookie"] == "2a"


def _run(stack: str, samples: list[tuple[float, int, int | None, float]], retransmits: list[float], **extra: Any) -> KernelRun:
    """A run from (t, cwnd, ssthresh, srtt) samples."""
    return KernelRun(
        stack=stack, congestion_control=kerneltcp.STACKS[stack][0], source=extra.pop("source", "tcp_probe"),
        samples=[KernelSample(t, c, s, 0, r) for t, c, s, r in samples], retransmits=retransmits, timeline=[(1.0, 10)],
        bytes=10, seconds=1.0, goodput_bps=80.0, **extra,
    )  # fmt: skip


def test_startup_ends_at_the_first_finite_ssthresh_with_the_reason_the_trace_gives() -> None:
    # t=0.30: the ACK that detects the loss (cwnd 272, before the cut); its retransmission leaves
    # at once; t=0.31: the next ACK shows ssthresh 136 and the window cut.
    lossy = [(0.2, 200, None, 0.05), (0.3, 272, None, 0.05), (0.31, 190, 136, 0.05)]
    assert _run("kernel:reno", lossy, [0.3001]).startup_exit() == (0.3001, "loss", 272)
    # A retransmission more than one RTT before (a tail-loss probe) is not the cause.
    assert _run("kernel:reno", lossy, [0.2]).startup_exit() == (0.3, "unknown", 272)
    assert _run("kernel:reno", lossy, [0.2], ecn=True).startup_exit()[1] == "ecn"
    # An RTO: the window is 1 segment when the next ACK arrives.
    rto = [(0.3, 272, None, 0.05), (0.6, 1, 136, 0.05)]
    assert _run("kernel:cubic-nohystart", rto, [0.55], hystart=0).startup_exit() == (0.55, "timeout", 272)
    # HyStart sets ssthresh to the window without cutting it; the counters say which detector.
    hystart = [(0.1, 75, None, 0.04), (0.11, 76, 76, 0.04)]
    assert _run("kernel:cubic", hystart, [], hystart=1, hystart_detections={"ack-train": 1, "delay-increase": 0}).startup_exit() == (0.1, "ack-train", 76)
    assert _run("kernel:cubic", hystart, [], hystart=1, hystart_detections={"ack-train": 0, "delay-increase": 1}).startup_exit()[1] == "delay-increase"
    assert _run("kernel:cubic", hystart, [], hystart=1).startup_exit()[1] == "hystart"
    # BBR leaves STARTUP on a bandwidth plateau only, whatever was retransmitted.
    assert _run("kernel:bbr", hystart, [0.105]).startup_exit() == (0.1, "bandwidth-plateau", 76)
    assert _run("kernel:reno", [(0.1, 10, None, 0.04)], []).startup_exit() == (None, "not-exited", None)
    # Polled samples: the change happened since the previous poll; the poll's own time is reported.
    polled = _run("kernel:cubic", hystart, [], hystart=1, source="tcp_info", poll_s=0.002)
    assert polled.startup_exit() == (0.11, "hystart", 76)
    as_json = json.loads(json.dumps(polled.to_dict()))
    assert as_json["startup_exit"] == {"time_s": 0.11, "reason": "hystart", "cwnd_pkts": 76}
    assert as_json["samples"][1]["ssthresh_pkts"] == 76 and as_json["timeline"] == [[1.0, 10]]


# --- on a testbed ------------------------------------------------------------------------------


def _global_state() -> dict[str, Any]:
    return {
        "hystart": HYSTART.read_text().strip() if HYSTART.exists() else None,
        "available": AVAILABLE.read_text().split(),
        "bbr_module": Path("/sys/module/tcp_bbr").exists(),
        "instances": tracefs.tracing_instances(),
        "mounts": tracefs._tracefs_mounts(),
        "journals": sorted(kerneltcp.STATE_DIR.glob("kerneltcp-*.json")),
    }


@pytest.fixture(scope="module")
def tb() -> Iterator[testbed.Testbed]:
    if REASON is not None:
        pytest.skip(f"the testbed cannot run here: {REASON}")
    with testbed.Testbed("ktcp") as made:
        yield made


@pytest.fixture
def untouched() -> Iterator[dict[str, Any]]:
    """The machine's global state before the test, checked unchanged after it."""
    before = _global_state()
    yield before
    assert _global_state() == before, "the hystart parameter, the congestion controls, tracefs instances and mounts are as they were"


def _watch_hystart(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The hystart parameter's value seen while the run is under way (when it reads the HyStart
    counters, before and after the transfer)."""
    seen: list[str | None] = []
    counters = kerneltcp._netstat

    def watched(tb: testbed.Testbed) -> dict[str, int]:
        seen.append(HYSTART.read_text().strip())
        return counters(tb)

    monkeypatch.setattr(kerneltcp, "_netstat", watched)
    return seen


TRACE = tracefs.tracing_permitted() if REASON is None else REASON


@needs_testbed
@pytest.mark.parametrize("stack", list(kerneltcp.STACKS))
def test_each_stack_transfers_with_per_ack_samples_and_leaves_the_machine_as_it_was(
    stack: str, tb: testbed.Testbed, untouched: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    if TRACE is not None:
        pytest.skip(f"tcp_probe cannot be read here: {TRACE}")
    seen = _watch_hystart(monkeypatch)
    try:
        got = kerneltcp.run(tb, stack, 3_000_000)
    except kerneltcp.KernelTcpError as e:
        if "this kernel has no" in str(e):
            pytest.skip(str(e))
        raise
    cc, hystart = kerneltcp.STACKS[stack]
    assert got.stack == stack and got.congestion_control == cc and got.source == "tcp_probe"
    assert got.bytes == 3_000_000 and got.timeline[-1][1] == 3_000_000, "the receiver got every byte sent"
    assert got.mss == 1448 and got.lost_events == 0 and got.unparsed_lines == 0
    first = got.samples[0]
    assert first.cwnd_pkts == 10 and first.ssthresh_pkts is None and first.snd_una == 0, "the first ACK finds the initial window"
    assert 0 < first.t_s < 0.05, "the trace's mono clock and time.monotonic() agree: the first ACK comes a veth round trip after the first packet"
    times = [s.t_s for s in got.samples]
    assert times == sorted(times)
    # One sample per ACK the socket processed: the kernel merges ACKs that arrive while the sender
    # holds its socket (backlog coalescing, frequent at line rate) and tcp_probe sees the merged one.
    # (Up to 2 more: window updates arriving after the sender's last count, before its FIN.)
    assert got.acks_received is not None and got.acks_coalesced is not None
    assert 0 <= len(got.samples) - (got.acks_received - got.acks_coalesced) <= 2, "tcp_probe fires once per ACK the socket processes"
    # A sample is the state before its ACK: the last one has everything sent, not yet everything acknowledged.
    assert got.samples[-1].snd_nxt == 3_000_000 and got.samples[-1].snd_una < 3_000_000
    assert got.seconds == got.timeline[-1][0] > 0 and got.goodput_bps == pytest.approx(3_000_000 * 8 / got.seconds)
    assert all(t2 - t1 >= 0.001 for (t1, _), (t2, _) in zip(got.timeline[:-2], got.timeline[1:-1])), "at most one point per millisecond"
    expected = str(hystart) if hystart is not None else untouched["hystart"]
    assert seen == [expected, expected], "the hystart parameter during the run"
    assert got.hystart == hystart
    json.dumps(got.to_dict())


@needs_testbed
def test_polling_tcp_info_is_the_fallback(tb: testbed.Testbed, untouched: dict[str, Any]) -> None:
    got = kerneltcp.run(tb, "reno", 2_000_000, source="tcp_info", poll=0.001)
    assert got.source == "tcp_info" and got.poll_s == 0.001 and got.bytes == 2_000_000
    assert got.samples[0].t_s <= 0 and got.samples[0].cwnd_pkts == 10, "polled after connect, before the first send"
    assert got.samples[-1].snd_una == 2_000_000


@needs_testbed
def test_the_initial_window_is_set_on_the_route_for_the_run(tb: testbed.Testbed, untouched: dict[str, Any]) -> None:
    route = tb.exec(tb.server, "ip", "route", "show", "default").stdout
    got = kerneltcp.run(tb, "reno", 1_000_000, initial_window=4)
    assert got.initial_window == 4 and got.samples[0].cwnd_pkts == 4
    assert tb.exec(tb.server, "ip", "route", "show", "default").stdout == route, "the route as it was (advmss kept, no initcwnd)"


@needs_testbed
def test_an_exception_mid_run_restores_everything(tb: testbed.Testbed, untouched: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    stack = "kernel:cubic-nohystart" if untouched["hystart"] != "0" else "kernel:cubic"
    changed = "0" if stack == "kernel:cubic-nohystart" else "1"
    during: list[Any] = []
    finish = kerneltcp._finish

    def failing(process: subprocess.Popen[str], what: str, timeout: float) -> dict[str, Any]:
        during.append((HYSTART.read_text().strip(), len(tracefs.tracing_instances())))
        raise RuntimeError("boom in the middle")

    monkeypatch.setattr(kerneltcp, "_finish", failing)
    with pytest.raises(RuntimeError, match="boom in the middle"):
        kerneltcp.run(tb, stack, 50_000_000)
    assert during == [(changed, 1)], "the parameter was changed and the instance made when it failed"
    for ns in (tb.client, tb.server):
        assert subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.strip() == "", "the receiver and the sender were stopped"
    monkeypatch.setattr(kerneltcp, "_finish", finish)
    assert kerneltcp.run(tb, "reno", 100_000).bytes == 100_000, "and the next run works (the lock was released)"


@needs_testbed
def test_a_port_in_use_is_an_error_and_restores_everything(tb: testbed.Testbed, untouched: dict[str, Any]) -> None:
    holder = subprocess.Popen(
        ["ip", "netns", "exec", tb.client, sys.executable, "-c",
         f"import socket, time; s = socket.socket(); s.bind(({tb.client_ip!r}, 5299)); s.listen(); print('up', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "up"
        with pytest.raises(kerneltcp.KernelTcpError, match="the receiver did not start: cannot listen on 10.203.1.1:5299"):
            kerneltcp.run(tb, "cubic-nohystart", 1_000_000, port=5299)
    finally:
        holder.kill()
        holder.communicate()


def _child(stack: str) -> subprocess.Popen[str]:
    script = (
        "import os; from startlab.real import kerneltcp, testbed; tb = testbed.Testbed('kchild'); tb.up(); print(os.getpid(), flush=True); "
        f"kerneltcp.run(tb, {stack!r}, duration=30.0)"
    )
    env = dict(os.environ, PYTHONPATH=PYTHON_PATH)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _mid_run_child(old: str) -> tuple[subprocess.Popen[str], int, str]:
    stack = "kernel:cubic-nohystart" if old != "0" else "kernel:cubic"
    child = _child(stack)
    assert child.stdout is not None
    pid = int(child.stdout.readline())
    _wait_for(lambda: any(n.startswith(f"startlab-{pid}-") for n in tracefs.tracing_instances()), 20, "the child's run to begin")
    changed = HYSTART.read_text().strip()
    return child, pid, changed


@needs_testbed
def test_sigterm_mid_run_restores_everything(untouched: dict[str, Any]) -> None:
    child, pid, changed = _mid_run_child(untouched["hystart"])
    try:
        assert changed != untouched["hystart"], "the child changed the parameter for its run"
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode != 0
    assert not [n for n in testbed.namespaces() if n.startswith(f"{testbed.PREFIX}{pid}-")]


@needs_testbed
def test_after_a_sigkill_the_next_run_restores_what_the_killed_one_changed(untouched: dict[str, Any]) -> None:
    old = untouched["hystart"]
    child, pid, changed = _mid_run_child(old)
    try:
        assert changed != old
        child.kill()  # SIGKILL: no chance to restore anything
        child.communicate(timeout=30)
        assert HYSTART.read_text().strip() == changed, "left changed by the killed run"
        done = kerneltcp.recover()
        assert any("hystart back to" in d for d in done), done
        testbed.cleanup()
    finally:
        if HYSTART.read_text().strip() != old:  # never leave the machine changed, even if recover() failed
            HYSTART.write_text(old)
