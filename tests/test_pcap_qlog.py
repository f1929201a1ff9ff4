"""Capture files (`[trace.pcap]`, `startlab run --pcap DIR`, docs/PCAP.md) read back with tshark:
every packet dissects without a malformed-packet or bad-checksum warning, and what tshark counts
agrees with what the simulator counted; qlog files (docs/QLOG.md) from Python and the CLI."""

from __future__ import annotations

import shutil
import sys
import subprocess
import tomllib
from pathlib import Path

import pytest

import startlab

ROOT = Path(__file__).resolve().parents[1]
TSHARK = shutil.which("tshark")
MERGECAP = shutil.which("mergecap")
needs_tshark = pytest.mark.skipif(
    TSHARK is None or MERGECAP is None,
    reason="tshark and mergecap (Debian package tshark, which .ci/run installs) are not on PATH",
)

# Two TCP flows with the handshake (classic ECN with SACK; L4S with Accurate ECN), UDP cross
# traffic and a QUIC flow, through a 30-packet drop-tail bottleneck that overflows.
MIXED = {
    "name": "pcap-mixed",
    "duration": "4s",
    "seed": 3,
    "topology": {
        "kind": "dumbbell",
        "bottleneck_rate": "20Mbps",
        "access_rate": "1Gbps",
        "rtts": ["40ms", "60ms", "50ms"],
        "queue": {"kind": "droptail", "limit": "30pkt"},
    },
    "flows": [
        {"name": "a", "size": "3MB", "tcp": {"handshake": True, "recovery": "sack", "ecn": True}},
        {"name": "b", "start": "0.5s", "size": "2MB", "tcp": {"handshake": True, "ecn": "l4s"}},
        {"name": "q", "start": "0.2s", "size": "1MB", "quic": {}},
    ],
    "cross": [{"name": "cbr0", "kind": "cbr", "rate": "1Mbps", "packet_size": "500B"}],
    "trace": {"pcap": {"links": ["access-s0", "bottleneck"]}},
}


def tshark(path: Path, *args: str) -> list[str]:
    out = subprocess.run(
        [TSHARK, "-n", "-r", str(path), "-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
         "-o", "ip.check_checksum:TRUE", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in out.stdout.splitlines() if line.strip()]


def count(path: Path, display_filter: str) -> int:
    return len(tshark(path, "-Y", display_filter, "-T", "fields", "-e", "frame.number"))


def merged(tmp: Path, files: list[Path]) -> Path:
    out = tmp / "merged.pcapng"
    subprocess.run([MERGECAP, "-w", str(out), *map(str, files)], check=True)
    return out


@needs_tshark
def test_every_packet_dissects_cleanly_with_valid_checksums(tmp_path: Path) -> None:
    r = startlab.run(MIXED, progress=False, pcap=tmp_path)
    names = sorted(p.name for p, _ in r.pcap_files)
    assert names == [
        "access-s0-forward.pcapng", "access-s0-reverse.pcapng", "bottleneck-forward.pcapng", "bottleneck-reverse.pcapng",
    ]  # fmt: skip
    for path, packets in r.pcap_files:
        assert packets > 0 and count(path, "frame") == packets, path.name
        assert count(path, "_ws.malformed") == 0, path.name
        assert count(path, "_ws.expert.severity == error") == 0, path.name
        bad = "tcp.checksum.status == 0 || udp.checksum.status == 0 || ip.checksum.status == 0"
        assert count(path, bad) == 0, path.name
    bottleneck = tmp_path / "bottleneck-forward.pcapng"
    # Every kind of packet is there, with its own protocol.
    assert count(bottleneck, "udp.port == 9") > 0
    assert count(bottleneck, "quic.header_form == 1") > 0 and count(bottleneck, "quic.header_form == 0") > 0
    assert count(bottleneck, "tcp.flags.syn == 1 && tcp.flags.ae == 1") == 1, "the L4S flow's SYN asks for AccECN"
    assert count(bottleneck, "tcp.flags.syn == 1 && tcp.flags.ece == 1 && tcp.flags.cwr == 1 && tcp.flags.ae == 0") == 1
    assert count(bottleneck, "ip.dsfield.ecn == 1") > 0, "ECT(1) data of the L4S flow"
    assert count(bottleneck, "ip.dsfield.ecn == 2") > 0, "ECT(0) data of the classic ECN flow"
    reverse = tmp_path / "bottleneck-reverse.pcapng"
    assert count(reverse, "tcp.options.sack_le") > 0, "SACK blocks on the ACKs after the overflow"
    assert count(reverse, "tcp.option_kind == 172") > 0, "the AccECN option on the L4S flow's ACKs"


@needs_tshark
def test_sender_side_capture_counts_what_the_sender_sent(tmp_path: Path) -> None:
    r = startlab.run(MIXED, progress=False, pcap=tmp_path)
    flow = r.flows.set_index("flow").loc["a"]
    assert flow["retransmissions"] > 0, "the bottleneck must overflow for this test to mean something"
    both = merged(tmp_path, [tmp_path / "access-s0-forward.pcapng", tmp_path / "access-s0-reverse.pcapng"])
    data = "tcp.srcport == 5001 && tcp.len > 0"
    assert count(both, data) == flow["packets_sent"]
    # tshark calls a segment below the highest one sent a retransmission, or an out-of-order
    # segment when it comes soon after the highest one (Wireshark's heuristic, which a SACK
    # recovery's retransmissions often meet): together they are every segment sent again.
    again = f"{data} && (tcp.analysis.retransmission || tcp.analysis.out_of_order)"
    assert count(both, again) == flow["retransmissions"]
    assert count(both, f"{data} && tcp.analysis.retransmission") > 0
    # The last byte: relative sequence numbers start at 1 after the SYN.
    ends = [int(x) for x in tshark(both, "-Y", data, "-T", "fields", "-e", "tcp.nxtseq")]
    assert max(ends) == 3_000_000 + 1
    # The handshake: SYN out, SYN-ACK back a base RTT later (40 ms plus transmission times).
    rtt = tshark(both, "-Y", "tcp.flags.syn == 1 && tcp.flags.ack == 1", "-T", "fields", "-e", "tcp.analysis.ack_rtt")
    assert 0.040 <= float(rtt[0]) < 0.041


@needs_tshark
def test_ce_marks_in_the_capture_are_the_queues_marks(tmp_path: Path) -> None:
    doc = tomllib.loads((ROOT / "examples" / "red-ecn.toml").read_text())
    doc["duration"] = "5s"
    doc["trace"] = {"pcap": {"links": ["bottleneck"], "direction": "forward", "format": "pcap", "snaplen": "200B"}}
    r = startlab.run(doc, progress=False, pcap=tmp_path)
    [(path, packets)] = r.pcap_files
    assert path.name == "bottleneck-forward.pcap"
    link = r.links[r.links["link"].str.startswith("bottleneck:left")].iloc[0]
    assert link["marks"] > 0
    assert count(path, "ip.dsfield.ecn == 3") == link["marks"]
    caplens = {int(x) for x in tshark(path, "-T", "fields", "-e", "frame.cap_len")}
    assert max(caplens) == 200
    lens = tshark(path, "-Y", "tcp.len > 0", "-T", "fields", "-e", "frame.len")
    assert {int(x) for x in lens} == {1488}, "a full segment: 1448 bytes and 40 of headers"


def test_captures_are_the_same_run_to_run(tmp_path: Path) -> None:
    a = startlab.run(MIXED, progress=False, pcap=tmp_path / "a")
    b = startlab.run(MIXED, progress=False, pcap=tmp_path / "b")
    for (pa, na), (pb, nb) in zip(a.pcap_files, b.pcap_files, strict=True):
        assert na == nb and pa.read_bytes() == pb.read_bytes()


def test_bad_capture_settings_are_refused_with_their_key(tmp_path: Path) -> None:
    def with_pcap(**table: object) -> dict:
        return {**MIXED, "trace": {"pcap": {"links": ["bottleneck"], **table}}}

    with pytest.raises(startlab.ScenarioError, match=r"trace\.pcap\.format: \"pcapx\" is not a capture format"):
        startlab.run(with_pcap(format="pcapx"), progress=False, pcap=tmp_path)
    with pytest.raises(startlab.ScenarioError, match=r"trace\.pcap\.snaplen: 64B is out of range; expected 120B"):
        startlab.run(with_pcap(snaplen="64B"), progress=False, pcap=tmp_path)
    with pytest.raises(startlab.ScenarioError, match=r"trace\.pcap\.links\[0\]: \"nowhere\" is not a link"):
        startlab.run({**MIXED, "trace": {"pcap": {"links": ["nowhere"]}}}, progress=False, pcap=tmp_path)
    with pytest.raises(startlab.ScenarioError, match=r"trace\.pcap: the capture files need a directory"):
        startlab.run(MIXED, progress=False)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(OSError, match="cannot create the capture directory"):
        startlab.run(MIXED, progress=False, pcap=blocker / "sub")


def test_cli_pcap_and_out(tmp_path: Path) -> None:
    import json

    run = subprocess.run(
        [sys.executable, "-m", "startlab", "run", str(ROOT / "examples" / "two-rtts.toml"), "--pcap", str(tmp_path / "cap"), "--no-progress", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "capture files" in run.stderr
    assert sorted(p.name for p in (tmp_path / "cap").iterdir()) == ["bottleneck-forward.pcapng", "bottleneck-reverse.pcapng"]
    json.loads(run.stdout)
    # A scenario with [trace.pcap] and --out: the files go to OUT/pcap.
    doc = tmp_path / "t.toml"
    doc.write_text((ROOT / "examples" / "two-rtts.toml").read_text() + '\n[trace.pcap]\nlinks = ["access-s0"]\ndirection = "forward"\n')
    run = subprocess.run([sys.executable, "-m", "startlab", "run", str(doc), "--out", str(tmp_path / "out"), "--no-progress"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert [p.name for p in (tmp_path / "out" / "pcap").iterdir()] == ["access-s0-forward.pcapng"]
    # Without a directory: a clear error, exit code 2.
    run = subprocess.run([sys.executable, "-m", "startlab", "run", str(doc), "--no-progress"], capture_output=True, text=True)
    assert run.returncode == 2 and "trace.pcap: the capture files need a directory" in run.stdout + run.stderr


def test_qlog_from_python_and_the_cli(tmp_path: Path) -> None:
    import json

    r = startlab.run({**MIXED, "trace": {}}, progress=False, qlog=tmp_path / "q")
    assert sorted(p.name for p, _ in r.qlog_files) == ["a.sqlog", "b.sqlog", "q.sqlog"]
    for path, events in r.qlog_files:
        records = [json.loads(x) for x in path.read_text().split("\x1e") if x.strip()]
        assert records[0]["file_schema"] == "urn:ietf:params:qlog:file:sequential"
        assert len(records) - 1 == events
        exits = [e for e in records[1:] if e["name"] == "startlab:startup_exited"]
        flow = r.flows.set_index("flow").loc[path.stem]
        assert [e["data"]["reason"] for e in exits] == [flow["exit_reason"]]
    doc = tmp_path / "t.toml"
    doc.write_text((ROOT / "examples" / "two-rtts.toml").read_text() + '\n[trace.qlog]\nflows = ["far"]\n')
    run = subprocess.run([sys.executable, "-m", "startlab", "run", str(doc), "--no-progress"], capture_output=True, text=True)
    assert run.returncode == 2 and "trace.qlog: the qlog files need a directory" in run.stdout + run.stderr
    run = subprocess.run([sys.executable, "-m", "startlab", "run", str(doc), "--out", str(tmp_path / "o"), "--no-progress"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert [p.name for p in (tmp_path / "o" / "qlog").iterdir()] == ["far.sqlog"]
    bad = {**MIXED, "trace": {"qlog": {"flows": ["zz"]}}}
    with pytest.raises(startlab.ScenarioError, match=r"trace\.qlog\.flows\[0\]: \"zz\" names no flow"):
        startlab.run(bad, progress=False, qlog=tmp_path)


@needs_tshark
@pytest.mark.parametrize(("algorithm", "reason", "analyzed"), [("slow-start", "loss", "loss"), ("hystart-linux", "ack-train", "plateau")])
def test_analyze_of_a_simulated_capture_finds_the_simulators_startup(tmp_path: Path, algorithm: str, reason: str, analyzed: str) -> None:
    """`startlab analyze` of the sender's access link (both directions merged) against the
    simulator's own table (docs/ANALYZE.md): the same data segments and retransmissions, the exit
    within one base RTT, its window and the overshoot within 10 %."""
    from startlab import analyze as an

    doc = {
        "name": "analyze-sim", "duration": "4s", "seed": 1,
        "topology": {"kind": "dumbbell", "bottleneck_rate": "20Mbps", "access_rate": "1Gbps", "rtt": "40ms",
                     "queue": {"kind": "droptail", "limit": "60pkt"}},
        "flows": [{"name": "a", "size": "4MB", "startup": {"algorithm": algorithm},
                   "tcp": {"handshake": True, "congestion_avoidance": "cubic", "recovery": "sack"}}],
        "trace": {"pcap": {"links": ["access-s0"]}},
    }  # fmt: skip
    r = startlab.run(doc, progress=False, pcap=tmp_path)
    sim = r.flows.iloc[0]
    assert sim["exit_reason"] == reason
    capture = merged(tmp_path, [tmp_path / "access-s0-forward.pcapng", tmp_path / "access-s0-reverse.pcapng"])
    got = an.analyze(capture, None).flows.iloc[0]
    assert got["exit_reason"] == analyzed
    assert (got["packets_sent"], got["retransmissions"]) == (sim["packets_sent"], sim["retransmissions"])
    assert abs(got["startup_exit_time"] - sim["startup_exit_time"]) <= sim["base_rtt"]
    assert got["exit_cwnd_pkts"] == pytest.approx(sim["exit_cwnd_pkts"], rel=0.10)
    assert got["t0"] == pytest.approx(sim["t0"], abs=1e-6)
    assert got["overshoot"] == pytest.approx(sim["overshoot"], rel=0.10)
