"""``startlab analyze`` (docs/ANALYZE.md): the flow table of a capture in ``startlab run``'s columns,
JSON, the figure, the fit, and bad input — never a traceback. The captures are written here, packet
by packet, from a slow-start sender whose window is known (the Rust tests in
crates/startlab-analyze check the measurements themselves in detail)."""

from __future__ import annotations

import heapq
import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

import startlab
from startlab import analyze as an
from startlab.cli import _FLOW_COLUMNS, cli

MSS = 1448
RTT_NS = 40_000_000
#: The bottleneck's time per segment (about 11.6 Mbit/s of payload): the BDP is 40 segments.
SERVICE_NS = 1_000_000
SENDER, RECEIVER = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])


def _frame(src: bytes, dst: bytes, sport: int, dport: int, seq: int, ack: int, flags: int, payload: int, ts: tuple[int, int],
           options: bytes = b"") -> bytes:  # fmt: skip
    opts = options + struct.pack("!BBBBII", 1, 1, 8, 10, *ts)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, (20 + len(opts)) // 4 << 4, flags, 65535, 0, 0) + opts
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + payload, 0, 0x4000, 64, 6, 0, src, dst)
    return b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + tcp + bytes(payload)


def slow_start_capture(path: Path, segments: int = 400, plateau: int | None = 30, drop: int | None = None) -> Path:
    """A capture at the sender of ``segments`` segments: slow start from 10 (two segments per ACK)
    until the window reaches ``plateau`` (then one per ACK), through a 1 ms-per-segment bottleneck on
    a 40 ms path; segment ``drop`` is lost once (three duplicate ACKs, a fast retransmission)."""
    packets: list[tuple[int, bytes]] = []
    isn, rsn = 1000, 90000
    syn_opts = struct.pack("!BBH", 2, 4, 1460) + struct.pack("!BBBB", 1, 3, 3, 7) + struct.pack("!BBBB", 1, 1, 4, 2)
    packets.append((0, _frame(RECEIVER, SENDER, 40000, 5201, rsn, 0, 0x02, 0, (1, 0), syn_opts)))
    packets.append((10_000, _frame(SENDER, RECEIVER, 5201, 40000, isn, rsn + 1, 0x12, 0, (1, 1), syn_opts)))
    packets.append((RTT_NS, _frame(RECEIVER, SENDER, 40000, 5201, rsn + 1, isn + 1, 0x10, 0, (2, 1))))
    seq0 = isn + 1
    cwnd, nxt, una, last_departure, dups, received = 10, 0, 0, 0, 0, set()
    events: list[tuple[int, int, int]] = []  # (time the ACK reaches the sender, order, cumulative ACK)
    order = 0

    def send(i: int, t: int) -> None:
        nonlocal last_departure, order
        packets.append((t, _frame(SENDER, RECEIVER, 5201, 40000, seq0 + i * MSS, rsn + 1, 0x10, MSS, (t // 10**6, 2))))
        last_departure = max(t, last_departure) + SERVICE_NS
        if i == drop and i not in received and drop not in lost_once:
            lost_once.add(i)
            return
        received.add(i)
        expected = 0
        while expected in received:
            expected += 1
        order += 1
        heapq.heappush(events, (last_departure + RTT_NS, order, expected))

    lost_once: set[int] = set()
    t = RTT_NS + 20_000
    while nxt < 10:
        send(nxt, t)
        nxt += 1
    recovering = False
    while events:
        t, _, ack = heapq.heappop(events)
        packets.append((t, _frame(RECEIVER, SENDER, 40000, 5201, rsn + 1, seq0 + ack * MSS, 0x10, 0, (t // 10**6, t // 10**6))))
        if ack > una:
            newly, una, dups = ack - una, ack, 0
            recovering = False
            cwnd = cwnd + newly if plateau is None or cwnd + newly < plateau else (plateau if cwnd < plateau else cwnd)
        else:
            dups += 1
            if dups == 3 and not recovering:
                recovering = True
                cwnd = max(2, cwnd // 2)
                send(una, t + 10_000)
        while nxt < segments and nxt - una < cwnd:
            send(nxt, t + 10_000)
            nxt += 1
        if una >= segments:
            break
    end = max(p[0] for p in packets) + 1_000_000
    packets.append((end, _frame(SENDER, RECEIVER, 5201, 40000, seq0 + segments * MSS, rsn + 1, 0x11, 0, (end // 10**6, 2))))
    packets.append((end + RTT_NS, _frame(RECEIVER, SENDER, 40000, 5201, rsn + 1, seq0 + segments * MSS + 1, 0x10, 0, (3, 3))))
    packets.sort(key=lambda p: p[0])
    with path.open("wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for t, frame in packets:
            t += 1_700_000_000 * 10**9
            out.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(frame), len(frame)) + frame)
    return path


def _run(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, ["analyze", *args])
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return done.exit_code, done.stdout, done.stderr


def test_the_flow_table_has_the_run_tables_columns_and_finds_the_plateau(tmp_path: Path) -> None:
    capture = slow_start_capture(tmp_path / "plateau.pcap", plateau=30)
    result = an.analyze(capture)
    assert len(result.flows) == 1
    missing = [name for name, _, _ in _FLOW_COLUMNS if name not in result.flows.columns]
    assert missing == [], "every column startlab run prints has a value (or null) from the capture"
    f = result.flows.iloc[0]
    assert f["flow"] == "10.0.0.1:5201 -> 10.0.0.2:40000"
    assert f["exit_reason"] == "plateau"
    assert f["exit_cwnd_pkts"] == pytest.approx(30, rel=0.1), "the window stopped at 30 segments"
    assert f["base_rtt"] == pytest.approx(0.041, abs=0.002), "40 ms and one segment's 1 ms at the bottleneck"
    assert f["vantage"] == "sender"
    assert f["completed"] and f["bytes_acked"] == 400 * MSS
    code, out, err = _run(str(capture))
    assert code == 0, err
    for heading in ("su-time", "exit", "overshoot", "exit cwnd", "plateau", "min RTT", "vantage"):
        assert heading in out, f"{heading!r} is printed"


def test_a_loss_is_the_exit_and_a_fast_retransmission(tmp_path: Path) -> None:
    capture = slow_start_capture(tmp_path / "loss.pcap", plateau=None, drop=60)
    f = an.analyze(capture).flows.iloc[0]
    assert f["exit_reason"] == "loss"
    assert f["retransmissions"] == 1 and f["retransmissions_fast"] == 1 and f["timeouts"] == 0
    assert f["t_su"] > f["startup_exit_time"], "startup ends with the recovery"


def test_json_holds_the_flows_with_their_series(tmp_path: Path) -> None:
    capture = slow_start_capture(tmp_path / "j.pcap")
    code, out, _ = _run(str(capture), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["capture"]["format"] == "pcap" and doc["capture"]["error"] is None
    (flow,) = doc["flows"]
    assert flow["exit_reason"] == "plateau"
    assert len(flow["series"]["sent_t"]) == len(flow["series"]["flight"]) == flow["packets_sent"]


def test_plot_writes_the_startup_figure(tmp_path: Path) -> None:
    capture = slow_start_capture(tmp_path / "p.pcap")
    code, _, err = _run(str(capture), "--plot", str(tmp_path / "fig"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == ["flight-0.png", "flight-0.svg"]
    figure = an.analyze(capture).plot()
    startup = figure.axes[0]
    assert any("exit: plateau" in t.get_text() for t in startup.texts), "the exit is marked with its reason"


def test_fit_proposes_a_path_runs_it_and_prints_both_rows(tmp_path: Path) -> None:
    capture = slow_start_capture(tmp_path / "fit.pcap", segments=1200, plateau=80)
    code, out, err = _run(str(capture), "--fit", "--fit-out", str(tmp_path / "fit.toml"))
    assert code == 0, err
    assert "The capture beside the fitted scenario" in out and "capture" in out and "fit:" in out
    scenario = tmp_path / "fit.toml"
    startlab.validate(scenario)
    text = scenario.read_text()
    # A window of 80 segments beyond the 41-segment BDP: the bottleneck delivers one 1448-byte
    # payload per ms, 11.6 Mbit/s.
    rate = an.analyze(capture).flows.iloc[0]["available_rate"]
    assert rate == pytest.approx(MSS * 8 / 1e-3, rel=0.05)
    assert 'initial_window = 10' in text and 'mss = "1448B"' in text and 'algorithm = "hystart-linux"' in text


def test_a_file_that_is_not_a_capture_is_one_error_line(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("not a capture at all")
    code, out, err = _run(str(bad))
    assert code == 2
    assert err.strip().startswith("error: ") and "not a pcap or pcapng file" in err and "Traceback" not in err
    code, _, err = _run(str(tmp_path / "missing.pcap"))
    assert code == 2 and "no such file" in err


def test_a_truncated_capture_reports_what_it_read_and_names_the_packet(tmp_path: Path) -> None:
    capture = slow_start_capture(tmp_path / "whole.pcap")
    data = capture.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) // 2])
    code, out, err = _run(str(cut))
    assert code == 0, "what could be read is still reported"
    assert "warning: the capture could not be read to its end: packet " in err and "truncated" in err
    assert "10.0.0.1:5201 -> 10.0.0.2:40000" in out


def test_a_capture_without_tcp_says_so_and_lists_the_udp(tmp_path: Path) -> None:
    path = tmp_path / "udp.pcap"
    with path.open("wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(3):
            payload = b"\xc0\x00\x00\x00\x01" + bytes(100)
            udp = struct.pack("!HHHH", 4433, 5000, 8 + len(payload), 0) + payload
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, SENDER, RECEIVER)
            frame = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + udp
            out.write(struct.pack("<IIII", 1_700_000_000, i * 1000, len(frame), len(frame)) + frame)
    code, out, err = _run(str(path))
    assert code == 0
    assert "no TCP segment" in err
    assert "UDP" in out and "10.0.0.1:4433" in out
