"""Speed comparison of startlab and ns-3 on the same single-flow dumbbell scenario.

    python bench/ns3_compare.py [--scenario 100M|1G|both] [--duration SECONDS] [--repeat N]
                                [--ns3-timeout SECONDS] [--profile N] [--cc newreno|cubic]
    python bench/ns3_compare.py --scenario past [--duration SECONDS] [--cc cubic|newreno]
                                [--startlab-recovery NAME] [--ns3-recovery classic|prr]
                                [--ns3-timeout SECONDS] [--json] [--events SECONDS]

Needs startlab installed and ns-3's Python bindings (``pip install ns3``, cppyy based; the first
``from ns import ns`` compiles bindings and takes a while). Nothing is downloaded at run time.

For each scenario both simulators simulate one bulk TCP NewReno flow (SACK, MSS 1448 B, initial
window 10, ACK every packet, initial ssthresh infinite) through sender -- access -- router --
bottleneck -- router -- access -- receiver, drop-tail queue at the bottleneck, the whole RTT on the
bottleneck. With ``--cc cubic`` the flow is TCP CUBIC after plain slow start instead (ns-3's
``TcpCubic`` with HyStart off; C 0.4, beta 0.7 and fast convergence on both sides), so slow start
overshoots and loses about a buffer's worth of packets at once. Wall time is measured around the
run only (startlab ``Simulation.run()``, ns-3 ``Simulator.Run()``); building the scenario is
reported separately as setup. "Delivered" counts the data packets that arrive at the receiver
(startlab: engine counter; ns-3: a C++ trace sink on the receiver's PointToPoint device counting
packets larger than 200 B, i.e. data segments, so the counting costs no Python call per packet).

ns-3 can take very long on these scenarios (its SACK scoreboard is a linked list walked from the
head, and slow start overshoots to thousands of segments in flight), so its run has a wall-clock
budget (--ns3-timeout, default 600 s): a C++ watchdog (an event every 10 ms of simulated time, and
a check every 64 delivered packets) stops the run once the budget is spent, and the row is then
marked as partial, with the simulated time it reached.

``--scenario past`` compares results, not speed, on the path of the Paced Start paper's default
setup (examples/paced-start-default.toml, startlab issue 16): the 100M dumbbell above plus 40 Mbit/s
of CBR cross traffic (1000-byte IP packets at constant spacing from t = 0, through the bottleneck
in the direction of the TCP data), and one CUBIC flow (``--cc newreno`` also works) for 50 s. Both
simulators open with a handshake. Loss recovery is chosen on each side (``--startlab-recovery``,
a string put into the startlab flow's ``tcp.recovery``; ``--ns3-recovery``, ns-3's
``TcpClassicRecovery`` or ``TcpPrrRecovery``). It reports, per simulator, the first congestion
reduction (time, and cwnd in segments just before it), the TCP flow's drops at the bottleneck in
the first 10 s and over the run, RTOs, and goodput (bytes delivered to the receiving application
/ duration), as one markdown table (or JSON with ``--json``). ns-3 is counted by C++
trace sinks (no Python call per packet): cwnd, ssthresh and congestion state on the sender's
socket (an RTO is a change of state to ``CA_LOSS``, so backed-off RTOs within one loss episode
count once), and the bottleneck queue's ``Drop`` trace, keeping IPv4 protocol 6 (TCP).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ns3_cpp import _CPP_HELPERS, _CPP_PAST_HELPERS  # noqa: E402  (the C++ trace sinks)

MSS = 1448

SCENARIOS = {
    # name: bottleneck rate, access rate, RTT (ms, all on the bottleneck), bottleneck queue (pkts)
    "100M": {"bottleneck": "100Mbps", "access": "1Gbps", "rtt_ms": 80, "queue": 1000},
    "1G": {"bottleneck": "1Gbps", "access": "10Gbps", "rtt_ms": 50, "queue": 4167},
}
#: ``--cc``: congestion control of both simulators. ns-3 socket type; startlab ``tcp`` keys. CUBIC's
#: C, beta and fast convergence are startlab's defaults and ns-3's (set explicitly on both sides);
#: ns-3's HyStart is turned off, so both start with plain slow start and overshoot.
CUBIC_C, CUBIC_BETA, CUBIC_FAST_CONVERGENCE = 0.4, 0.7, True
CC = {
    "newreno": ("ns3::TcpNewReno", ""),
    "cubic": (
        "ns3::TcpCubic",
        f', congestion_avoidance = "cubic", cubic_c = {CUBIC_C}, cubic_beta = {CUBIC_BETA}, '
        f"cubic_fast_convergence = {str(CUBIC_FAST_CONVERGENCE).lower()}",
    ),
}
#: ``--scenario past``: the 100M path plus CBR cross traffic of ``cross_rate`` bit/s in packets of
#: ``cross_packet`` bytes. startlab's ``packet_size`` is bytes on the wire with no header added,
#: i.e. the IP packet (its TCP packets are likewise MSS + the 52 B TCP/IP header); ns-3 sends UDP
#: payloads of ``cross_packet - UDP_IP_HEADER`` bytes, one every ``cross_packet * 8 / cross_rate``
#: (ns-3's PointToPoint adds 2 B of PPP to every packet on every link, startlab nothing).
PAST = {**SCENARIOS["100M"], "cross_rate": 40_000_000, "cross_packet": 1000}
UDP_IP_HEADER = 28  # 20 B IPv4 + 8 B UDP
PAST_DROP_WINDOW_S = 10.0  # TCP drops are also counted over the first this many simulated seconds
DROPS_EARLY_KEY = f"tcp_drops_first_{PAST_DROP_WINDOW_S:g}s"  # their name in --json
#: ``--ns3-recovery``: ns-3's loss recovery (``ns3::TcpL4Protocol::RecoveryType``).
NS3_RECOVERY = {"classic": "ns3::TcpClassicRecovery", "prr": "ns3::TcpPrrRecovery"}
ACCESS_QUEUE = 100000  # startlab's default access-link queue (packets); never fills here
WATCHDOG_PERIOD_S = 0.01  # simulated seconds between ns-3 watchdog checks

STARTLAB_TOML = """\
seed = 1
duration = "{duration}s"
[topology]
kind = "dumbbell"
bottleneck_rate = "{bottleneck}"
rtt = "{rtt_ms}ms"
access_rate = "{access}"
queue = {{ kind = "droptail", limit = "{queue}pkt" }}
[[flows]]
name = "bulk"
tcp = {{ recovery = "sack", mss = "1448B", header = "52B", initial_window = 10, ack = "every-packet"{extra} }}
size = "infinite"
[trace]
cwnd = false
seq = false
queue = false
"""


@dataclass
class Run:
    setup_s: float
    wall_s: float
    delivered: int  # data packets arrived at the receiver
    app_bytes: int  # bytes delivered to the receiving application
    events: int
    sim_s: float  # simulated time reached (the duration unless the run was stopped early)
    timed_out: bool = False
    # (simulated end of chunk s, wall s of the chunk, data packets delivered so far); with --profile
    chunks: list[tuple[float, float, int]] = field(default_factory=list)

    def throughput(self) -> float:
        """Application-level throughput over the simulated time reached, bit/s."""
        return self.app_bytes * 8 / self.sim_s if self.sim_s > 0 else 0.0

    def rate(self) -> float:
        """Delivered data packets per wall-clock second of the run."""
        return self.delivered / self.wall_s if self.wall_s > 0 else 0.0


#: Extra startlab TCP keys (``--startlab-handshake`` adds ``, handshake = true``, ``--cc cubic``
#: the CUBIC keys).
STARTLAB_TCP_EXTRA = ""


def run_startlab(
    params: dict, duration: float, nchunks: int = 0, stop_s: float | None = None
) -> Run:
    """Run the scenario in startlab; with ``nchunks`` > 0 advance in that many equal steps of
    simulated time and record the wall time of each (a separate, profiling run); with ``stop_s``
    stop at that simulated time (to compare with a partial ns-3 run over the same span)."""
    from startlab import _core

    text = STARTLAB_TOML.format(duration=duration, extra=STARTLAB_TCP_EXTRA, **params)
    t0 = time.perf_counter()
    sim = _core.Simulation(text)
    t1 = time.perf_counter()
    chunks = []
    if nchunks:
        for i in range(1, nchunks + 1):
            c0 = time.perf_counter()
            sim.advance(round(duration * 1e9 * i / nchunks))
            c1 = time.perf_counter()
            chunks.append((duration * i / nchunks, c1 - c0, int(sim.stats()["delivered_packets"])))
    elif stop_s is not None:
        sim.advance(round(stop_s * 1e9))
    else:
        sim.run()
    t2 = time.perf_counter()
    stats = sim.stats()
    if stop_s is not None:
        # results() needs a finished run; the engine counts every delivered data packet as MSS
        # bytes (bytes_delivered == delivered_packets * MSS in a full run)
        app_bytes = int(stats["delivered_packets"]) * MSS
    else:
        app_bytes = int(sim.results()["flows"]["bytes_delivered"][0])
    return Run(
        setup_s=t1 - t0,
        wall_s=t2 - t1,
        delivered=int(stats["delivered_packets"]),
        app_bytes=app_bytes,
        events=int(stats["events"]),
        sim_s=stats["sim_time_ns"] / 1e9,
        chunks=chunks,
    )


#: ``--scenario past``: the speed scenarios' flow with a handshake, the recovery asked for, the
#: CBR cross traffic and the sequence trace (for the drops in the first 10 s).
STARTLAB_PAST_TOML = (
    STARTLAB_TOML.replace('recovery = "sack"', "recovery = {recovery}")
    .replace('ack = "every-packet"{extra}', 'ack = "every-packet", handshake = true{extra}')
    .replace("[trace]\ncwnd = false\nseq = false", '[[cross]]\nkind = "cbr"\nrate = "{cross_rate}bps"\npacket_size = "{cross_packet}B"\n[trace]\ncwnd = true\nseq = true')
)


@dataclass
class Outcome:
    """What ``--scenario past`` reports for one simulator's run."""

    recovery: str  # the loss recovery used, as that simulator names it
    exit_time: float | None  # first congestion reduction, simulated s (None: never reduced)
    exit_cwnd: float | None  # cwnd just before that reduction, segments
    drops_early: int  # the TCP flow's packets dropped at the bottleneck before PAST_DROP_WINDOW_S
    drops: int  # ... over the whole run
    rtos: int
    # bytes delivered to the receiving application: startlab's unique bytes arrived
    # (`bytes_delivered`), ns-3's PacketSink total (in-order bytes); the same over a long run
    goodput_bytes: int
    sim_s: float  # simulated time reached
    wall_s: float
    timed_out: bool = False
    # --events: (time s, kind, value): "ssthresh" (new value, segments), "recovery" and "rto"
    # (entered), "drop" (the dropped segment's first byte / MSS)
    events: list[tuple[float, str, float]] = field(default_factory=list)

    def goodput(self) -> float:
        """Goodput over the simulated time reached, bit/s."""
        return self.goodput_bytes * 8 / self.sim_s if self.sim_s > 0 else 0.0



def startlab_timeline(res: dict, drops: list[tuple[float, str, float]]) -> list[tuple[float, str, float]]:
    """A startlab run's timeline for ``--events``: ``drops`` (time, "drop", segment), each entry
    into recovery and each RTO (from the cwnd trace's ``cause``), and each ssthresh change in
    segments."""
    events = list(drops)
    cw = res["traces"]["cwnd"]
    causes, last = list(res["cwnd_causes"]), None
    for t, ss, cause in zip(cw["time"], cw["ssthresh"], cw["cause"]):
        if causes[cause] == "loss":
            events.append((float(t), "recovery", 0.0))
        elif causes[cause] == "timeout":
            events.append((float(t), "rto", 0.0))
        if ss != last:
            events.append((float(t), "ssthresh", float(ss) / MSS))
            last = ss
    return events

def run_startlab_past(
    params: dict, duration: float, recovery: str, prr_bound: str | None = None
) -> Outcome:
    """Run the ``past`` scenario in startlab (the handshake on, as in ns-3). ``recovery`` (and
    ``prr_bound``, if given) are passed through to ``tcp.recovery`` (``tcp.prr_bound``) unchecked;
    startlab refuses a name it does not know (``_core.ScenarioError``)."""
    import json

    from startlab import _core

    extra = STARTLAB_TCP_EXTRA
    if prr_bound is not None:
        extra += f", prr_bound = {json.dumps(prr_bound)}"
    text = STARTLAB_PAST_TOML.format(
        duration=duration, recovery=json.dumps(recovery), extra=extra, **params
    )
    sim = _core.Simulation(text)
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    res = sim.results()
    flows = res["flows"]
    # The seq trace has a row per data packet dropped (at the time of the drop), for TCP only;
    # the per-flow `drops` column is the same count over the whole run.
    import numpy as np

    seq = res["traces"]["seq"]
    dropped = list(res["seq_kinds"]).index("dropped")
    event, when = np.asarray(seq["event"]), np.asarray(seq["time"])
    early = int(np.count_nonzero((event == dropped) & (when < PAST_DROP_WINDOW_S)))
    exit_cwnd = flows["exit_cwnd_pkts"][0]
    events = startlab_timeline(res, [(float(t), "drop", float(s) / MSS) for t, e, s in zip(when, event, seq["seq"]) if e == dropped])
    return Outcome(
        recovery=str(flows["recovery"][0]) + (f" ({prr_bound})" if prr_bound else ""),
        exit_time=flows["startup_exit_time"][0],
        exit_cwnd=None if exit_cwnd is None else float(exit_cwnd),
        drops_early=early,
        drops=int(flows["drops"][0]),
        rtos=int(flows["timeouts"][0]),
        goodput_bytes=int(flows["bytes_delivered"][0]),
        sim_s=sim.stats()["sim_time_ns"] / 1e9,
        wall_s=wall,
        events=sorted(events),
    )



def ns3_setup_defaults(ns, cc: str = "newreno", recovery: str = "classic") -> None:
    """TCP configuration matching the startlab flow (set once per process)."""
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(CC[cc][0])))
    if cc == "cubic":
        sd("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
        sd("ns3::TcpCubic::C", ns.DoubleValue(CUBIC_C))
        sd("ns3::TcpCubic::Beta", ns.DoubleValue(CUBIC_BETA))
        sd("ns3::TcpCubic::FastConvergence", ns.BooleanValue(CUBIC_FAST_CONVERGENCE))
    sd(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName(NS3_RECOVERY[recovery])),
    )
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(64 << 20))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 << 20))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    # Timestamps on (ns-3 default): 20 B IP + 32 B TCP = startlab's 52 B header, 1500 B IP packets.
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))


def ns3_dumbbell(ns, params: dict, cross: bool = False):
    """Build the dumbbell: nodes 0 sender, 1 left router, 2 right router, 3 receiver, and with
    ``cross`` 4 cross-traffic sender (on the left router) and 5 its receiver (on the right one), as
    startlab's ``xs0``/``xd0`` with zero-delay access links. Returns the nodes, the devices and
    the interfaces of each link in this order: access-s, bottleneck, access-d[, access-xs,
    access-xd].

    With ``cross`` the bottleneck devices have no flow control, so that a full queue drops the
    arriving packet itself (its ``Drop`` trace fires, with the IP header on the packet). With flow
    control (ns-3's default, kept for the speed scenarios) the device stops its queue when it is
    full and the traffic-control layer drops the packet (``TcDrop``, before the IP header is
    added). Both accept a packet while fewer than ``queue`` packets wait."""
    nodes = ns.NodeContainer()
    nodes.Create(6 if cross else 4)
    ns.InternetStackHelper().Install(nodes)

    def link(a: int, b: int, rate: str, delay: str, queue_pkts: int, flow_control: bool = True):
        p2p = ns.PointToPointHelper()
        if not flow_control:
            p2p.DisableFlowControl()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{queue_pkts}p"))
        return p2p.Install(nodes.Get(a), nodes.Get(b))

    one_way = f"{params['rtt_ms'] / 2}ms"
    devs = [
        link(0, 1, params["access"], "0ms", ACCESS_QUEUE),
        link(1, 2, params["bottleneck"], one_way, params["queue"], flow_control=not cross),
        link(2, 3, params["access"], "0ms", ACCESS_QUEUE),
    ]
    if cross:
        devs.append(link(4, 1, params["access"], "0ms", ACCESS_QUEUE))
        devs.append(link(2, 5, params["access"], "0ms", ACCESS_QUEUE))
    addr = ns.Ipv4AddressHelper()
    ifaces = []
    for i, d in enumerate(devs):
        addr.SetBase(ns.Ipv4Address(f"10.1.{i + 1}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces.append(addr.Assign(d))
        # Assign() installs the default FqCoDel queue disc (on devices with flow control); remove
        # it so the PointToPoint device's drop-tail queue is the only buffer, as in startlab.
        if not (cross and i == 1):
            ns.TrafficControlHelper().Uninstall(d)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return nodes, devs, ifaces


def ns3_bulk_flow(ns, nodes, ifaces):
    """The bulk TCP flow of :func:`ns3_dumbbell`'s nodes 0 -> 3 (sending MSS-sized writes without
    end) and its packet sink, both started at t = 0. Returns (sink apps, bulk-send apps)."""
    port = 5000
    sink_apps = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
    ).Install(nodes.Get(3))
    sink_apps.Start(ns.Seconds(0))
    bulk = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ifaces[2].GetAddress(1), port).ConvertTo()
    )
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(MSS))
    bulk_apps = bulk.Install(nodes.Get(0))
    bulk_apps.Start(ns.Seconds(0))
    return sink_apps, bulk_apps


def run_ns3(ns, params: dict, duration: float, budget_s: float, nchunks: int = 0) -> Run:
    """Run the scenario in ns-3 with a wall-clock budget for the run; ``nchunks`` as in
    :func:`run_startlab` (``Simulator.Run()`` once per chunk, each ended by ``Simulator.Stop``)."""
    import cppyy

    h = cppyy.gbl.ns3bench
    t0 = time.perf_counter()
    nodes, devs, ifaces = ns3_dumbbell(ns, params)
    sink_apps, bulk_apps = ns3_bulk_flow(ns, nodes, ifaces)
    h.ConnectRx(devs[2].Get(1))  # the receiver's device

    chunks = []
    t1 = time.perf_counter()
    h.Start(budget_s, WATCHDOG_PERIOD_S)
    if nchunks:
        for i in range(1, nchunks + 1):
            end = duration * i / nchunks
            ns.Simulator.Stop(ns.Seconds(end) - ns.Simulator.Now())
            c0 = time.perf_counter()
            ns.Simulator.Run()
            c1 = time.perf_counter()
            chunks.append((ns.Simulator.Now().GetSeconds(), c1 - c0, int(h.DataRx())))
            if h.TimedOut():
                break
    else:
        ns.Simulator.Stop(ns.Seconds(duration))
        ns.Simulator.Run()
    t2 = time.perf_counter()
    result = Run(
        setup_s=t1 - t0,
        wall_s=t2 - t1,
        delivered=int(h.DataRx()),
        app_bytes=int(h.SinkTotalRx(sink_apps.Get(0))),
        events=int(h.EventCount()),
        sim_s=ns.Simulator.Now().GetSeconds(),
        timed_out=bool(h.TimedOut()),
        chunks=chunks,
    )
    ns.Simulator.Destroy()
    return result


def run_ns3_past(ns, params: dict, duration: float, budget_s: float, recovery: str) -> Outcome:
    """Run the ``past`` scenario in ns-3 (``ns3_setup_defaults`` already chose the congestion
    control and ``recovery``) with the wall-clock budget of :func:`run_ns3`."""
    import cppyy

    h, hp = cppyy.gbl.ns3bench, cppyy.gbl.ns3past
    nodes, devs, ifaces = ns3_dumbbell(ns, params, cross=True)
    sink_apps, bulk_apps = ns3_bulk_flow(ns, nodes, ifaces)

    # CBR: one UDP packet of cross_packet IP bytes every cross_packet * 8 / cross_rate, from t = 0
    # (UdpClient sends its first packet at its start); a UDP sink takes them, so that the receiver
    # sends no ICMP back. UdpClient's 12 B sequence/timestamp header is part of the payload.
    cross_port = 9
    any_addr = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), cross_port).ConvertTo()
    ns.PacketSinkHelper("ns3::UdpSocketFactory", any_addr).Install(nodes.Get(5)).Start(ns.Seconds(0))
    gap_ns, rest = divmod(params["cross_packet"] * 8 * 10**9, params["cross_rate"])
    assert rest == 0, "the CBR gap must be a whole number of nanoseconds"
    cbr = ns.UdpClientHelper(ifaces[4].GetAddress(1).ConvertTo(), cross_port)
    cbr.SetAttribute("MaxPackets", ns.UintegerValue(0))
    cbr.SetAttribute("Interval", ns.TimeValue(ns.NanoSeconds(gap_ns)))
    cbr.SetAttribute("PacketSize", ns.UintegerValue(params["cross_packet"] - UDP_IP_HEADER))
    cbr.Install(nodes.Get(4)).Start(ns.Seconds(0))

    h.ConnectRx(devs[2].Get(1))  # the TCP receiver's device: the watchdog's packet count
    hp.Setup(devs[1].Get(0), bulk_apps.Get(0), PAST_DROP_WINDOW_S)  # left router -> right router
    h.Start(budget_s, WATCHDOG_PERIOD_S)
    t0 = time.perf_counter()
    ns.Simulator.Stop(ns.Seconds(duration))
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    if hp.TcDrops():
        print(
            f"WARNING: ns-3's traffic-control layer dropped {int(hp.TcDrops())} packets at the "
            "left router; they are not in the drop counts",
            file=sys.stderr,
        )
    out = Outcome(
        recovery=NS3_RECOVERY[recovery].removeprefix("ns3::"),
        exit_time=float(hp.ExitTime()) if hp.Exited() else None,
        exit_cwnd=int(hp.ExitCwnd()) / MSS if hp.Exited() else None,
        drops_early=int(hp.DropsEarly()),
        drops=int(hp.Drops()),
        rtos=int(hp.Rtos()),
        goodput_bytes=int(h.SinkTotalRx(sink_apps.Get(0))),
        sim_s=ns.Simulator.Now().GetSeconds(),
        wall_s=wall,
        timed_out=bool(h.TimedOut()),
    )
    kinds = {0: "ssthresh", 2: "drop"}
    for i in range(int(hp.EvCount())):
        kind, value = int(hp.EvKind(i)), float(hp.EvV(i))
        if kind == 1:  # TcpCongState_t: CA_RECOVERY 3, CA_LOSS 4
            if int(value) in (3, 4):
                out.events.append((float(hp.EvT(i)), "recovery" if int(value) == 3 else "rto", 0.0))
        else:
            out.events.append((float(hp.EvT(i)), kinds[kind], value / MSS))
    ns.Simulator.Destroy()
    return out


def past_report(sl: Outcome, n3: Outcome, duration: float, cc: str, ns3: str = "") -> dict:
    """The ``past`` comparison as one JSON-able dict (what ``--json`` prints)."""

    def row(name: str, o: Outcome) -> dict:
        return {
            "simulator": name,
            "recovery": o.recovery,
            "exit_time_s": o.exit_time,
            "exit_cwnd_segments": o.exit_cwnd,
            DROPS_EARLY_KEY: o.drops_early,
            "tcp_drops": o.drops,
            "rtos": o.rtos,
            "goodput_mbps": o.goodput() / 1e6,
            "simulated_s": o.sim_s,
            "wall_s": o.wall_s,
            "partial": o.timed_out,
        }

    def ratio(a: float, b: float) -> float | None:
        return a / b if b else None

    p = PAST
    return {
        "scenario": {
            "bottleneck": p["bottleneck"],
            "access": p["access"],
            "rtt_ms": p["rtt_ms"],
            "queue_pkts": p["queue"],
            "cross_cbr_bps": p["cross_rate"],
            "cross_packet_ip_bytes": p["cross_packet"],
            "cc": cc,
            "duration_s": duration,
            "drop_window_s": PAST_DROP_WINDOW_S,
        },
        "ns3": ns3,
        "rows": [row("startlab", sl), row("ns-3", n3)],
        "ratio_startlab_over_ns3": {
            DROPS_EARLY_KEY: ratio(sl.drops_early, n3.drops_early),
            "goodput": ratio(sl.goodput(), n3.goodput()),
        },
    }


def past_markdown(rep: dict) -> str:
    """The ``past`` comparison as one markdown table: a row per simulator and the ratio row."""

    def num(v, fmt: str) -> str:
        return "–" if v is None else format(v, fmt)

    w = rep["scenario"]["drop_window_s"]
    lines = [
        f"| simulator | recovery | first reduction s | cwnd before, seg | TCP drops in {w:g} s | "
        "TCP drops | RTOs | goodput Mbit/s |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rep["rows"]:
        mark = f" (partial, to {r['simulated_s']:.3f} s)" if r["partial"] else ""
        lines.append(
            f"| {r['simulator']}{mark} | {r['recovery']} | {num(r['exit_time_s'], '.3f')} | "
            f"{num(r['exit_cwnd_segments'], '.0f')} | {r[DROPS_EARLY_KEY]:,} | "
            f"{r['tcp_drops']:,} | {r['rtos']} | {r['goodput_mbps']:.2f} |"
        )
    q = rep["ratio_startlab_over_ns3"]
    lines.append(
        f"| **startlab / ns-3** | | | | {num(q[DROPS_EARLY_KEY], '.3f')} | | | "
        f"{num(q['goodput'], '.3f')} |"
    )
    return "\n".join(lines)


def past_timeline(sl: Outcome, n3: Outcome, until: float, out) -> None:
    """``--events``: both runs side by side up to ``until`` s: every ssthresh change, recovery
    entry and RTO, the drops per 50 ms, and the first dropped segment one simulator has and the
    other not (where they part)."""

    def lines(o: Outcome) -> list[str]:
        rows = [f"{t:8.4f} s  {k:8s} {'' if k in ('recovery', 'rto') else f'{v:.0f} seg'}" for t, k, v in o.events if k != "drop" and t <= until]
        return rows

    for name, o in (("startlab", sl), ("ns-3", n3)):
        print(f"\n{name} ({o.recovery}): ssthresh changes, recovery entries, RTOs", file=out)
        print("\n".join(lines(o)), file=out)
    bins: dict[int, list[int]] = {}
    for col, o in enumerate((sl, n3)):
        for t, k, _ in o.events:
            if k == "drop" and t <= until:
                bins.setdefault(int(t / 0.05), [0, 0])[col] += 1
    print("\ndrops per 50 ms: start s | startlab | ns-3", file=out)
    for b in sorted(bins):
        print(f"  {b * 0.05:6.2f} | {bins[b][0]:5d} | {bins[b][1]:5d}", file=out)
    dropped = [sorted(round(v) for t, k, v in o.events if k == "drop" and t <= until) for o in (sl, n3)]
    for i, (a, b) in enumerate(zip(*dropped)):
        if a != b:
            print(f"\nthe drop lists part at drop #{i + 1}: startlab segment {a}, ns-3 segment {b}", file=out)
            break
    else:
        print(f"\nthe first {min(map(len, dropped))} drops are the same segments", file=out)


def median_run(runs: list[Run]) -> Run:
    """The run with the median wall time (the simulations are deterministic; only time varies)."""
    return sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]


def main_past(ns, args, sl: Outcome, out) -> int:
    """``--scenario past``: run ns-3 (startlab already ran) and print the comparison."""
    import cppyy

    cppyy.cppdef(_CPP_PAST_HELPERS)
    p = PAST
    print(
        f"\n== past: bottleneck {p['bottleneck']}, access {p['access']}, RTT {p['rtt_ms']} ms (all "
        f"on the bottleneck), drop-tail {p['queue']} pkt, CBR {p['cross_rate'] / 1e6:g} Mbit/s in "
        f"{p['cross_packet']} B IP packets, {args.cc}, handshake in both, {args.duration:g} s "
        f"simulated; recovery: startlab {args.startlab_recovery!r}, ns-3 "
        f"{NS3_RECOVERY[args.ns3_recovery]}",
        file=out,
        flush=True,
    )
    n3 = run_ns3_past(ns, p, args.duration, args.ns3_timeout, args.ns3_recovery)
    partial = f" (PARTIAL: stopped by --ns3-timeout at {n3.sim_s:.3f} s simulated)"
    print(
        f"wall s: startlab {sl.wall_s:.3f}, ns-3 {n3.wall_s:.1f}{partial if n3.timed_out else ''}",
        file=out,
    )
    rep = past_report(sl, n3, args.duration, args.cc, args.ns3_origin)
    if args.events:
        past_timeline(sl, n3, args.events, out)
    if args.json:
        import json

        print(json.dumps(rep, indent=2))
    else:
        print("\nsummary (markdown):")
        print(past_markdown(rep))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--scenario",
        choices=["100M", "1G", "both", "past"],
        default="both",
        help="speed on 100M, 1G or both (default); past: compare results (slow-start exit, drops, "
        "RTOs, goodput) on the 100M path with 40 Mbit/s of CBR cross traffic",
    )
    ap.add_argument(
        "--duration",
        type=float,
        default=None,
        help="simulated seconds (default 10; 50 with --scenario past)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per simulator; median wall time")
    ap.add_argument(
        "--ns3-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="wall-clock budget of one ns-3 run (default 600); a run stopped by it is reported as "
        "partial",
    )
    ap.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also run each simulator once more in N equal chunks of simulated time and print the "
        "wall time of each chunk (shows where the time goes)",
    )
    ap.add_argument(
        "--startlab-handshake",
        action="store_true",
        help="give the startlab flow a three-way handshake before data, as ns-3's TCP always has "
        "(off by default: the startlab flow sends from t = 0)",
    )
    ap.add_argument(
        "--cc",
        choices=list(CC),
        default=None,
        help="congestion control of both simulators (default newreno; cubic with --scenario past); "
        "cubic: CUBIC with plain slow start (ns-3 TcpCubic with HyStart off), C 0.4, beta 0.7, "
        "fast convergence",
    )
    ap.add_argument(
        "--startlab-recovery",
        default=None,
        metavar="NAME",
        help="--scenario past only: startlab's loss recovery, passed as tcp.recovery = NAME "
        "(default prr)",
    )
    ap.add_argument(
        "--startlab-prr-bound",
        choices=["ssrb", "crb", "safe-ack"],
        default=None,
        help="--scenario past only: tcp.prr_bound of the startlab flow (with --startlab-recovery "
        "prr; default: startlab's, ssrb)",
    )
    ap.add_argument(
        "--ns3-recovery",
        choices=list(NS3_RECOVERY),
        default=None,
        help="--scenario past only: ns-3's loss recovery, TcpClassicRecovery or TcpPrrRecovery "
        "(default prr, ns-3's own default)",
    )
    ap.add_argument(
        "--json", action="store_true", help="--scenario past only: print the comparison as JSON"
    )
    ap.add_argument(
        "--events", type=float, metavar="SECONDS",
        help="--scenario past only: both runs' ssthresh changes, recovery entries, RTOs and drops "
        "per 50 ms up to SECONDS, and the first dropped segment where they part",
    )  # fmt: skip
    args = ap.parse_args()
    past = args.scenario == "past"
    if past:
        if args.repeat != 1 or args.profile:
            ap.error("--repeat and --profile time runs; --scenario past compares results only")
        args.cc = args.cc or "cubic"
        args.startlab_recovery = args.startlab_recovery or "prr"
        args.ns3_recovery = args.ns3_recovery or "prr"
        args.duration = 50.0 if args.duration is None else args.duration
    else:
        if args.startlab_recovery or args.startlab_prr_bound or args.ns3_recovery or args.json or args.events:
            ap.error(
                "--startlab-recovery, --startlab-prr-bound, --ns3-recovery and --json need "
                "--scenario past"
            )
        args.cc = args.cc or "newreno"
        args.duration = 10.0 if args.duration is None else args.duration
    global STARTLAB_TCP_EXTRA
    if args.startlab_handshake and not past:  # past always has the handshake
        STARTLAB_TCP_EXTRA += ", handshake = true"
    STARTLAB_TCP_EXTRA += CC[args.cc][1]
    # With --json, stdout carries the JSON only; the notes go to stderr.
    out = sys.stderr if args.json else sys.stdout

    try:
        import startlab
    except ImportError:
        print("startlab is not importable: build it with `maturin develop --release`")
        return 2
    sl_past = None
    if past:
        # startlab first: it takes a second, and refuses an unknown recovery name before ns-3 runs.
        try:
            sl_past = run_startlab_past(
                PAST, args.duration, args.startlab_recovery, args.startlab_prr_bound
            )
        except startlab._core.ScenarioError as e:
            name = args.startlab_recovery
            print(f"startlab refused the scenario (--startlab-recovery {name!r}, --startlab-prr-bound?): {e}")
            return 2
    t_import = time.perf_counter()
    try:
        from ns import ns
    except ImportError:
        print("ns-3 Python bindings not found: `pip install ns3` is needed")
        return 2
    t_import = time.perf_counter() - t_import
    import cppyy

    cppyy.cppdef(_CPP_HELPERS)
    ns3_setup_defaults(ns, args.cc, args.ns3_recovery or "classic")

    from importlib.metadata import PackageNotFoundError, version

    # The bindings imported: PyPI's ns3 package, or a source build's (PYTHONPATH=<build>/bindings/python).
    bindings = os.path.dirname(os.path.abspath(sys.modules["ns"].__file__))
    try:
        dist = version("ns3")
    except PackageNotFoundError:
        dist = None
    from_pypi = dist is not None and "site-packages" in bindings
    args.ns3_origin = f"PyPI ns3 {dist}" if from_pypi else f"ns-3 built from source, bindings {bindings}"
    print(
        f"startlab {startlab.__version__}; {args.ns3_origin}; "
        f"ns-3 import took {t_import:.1f} s (not counted); ns-3 budget {args.ns3_timeout:g} s per run",
        file=out,
    )
    if past:
        return main_past(ns, args, sl_past, out)

    names = ["100M", "1G"] if args.scenario == "both" else [args.scenario]
    dur = args.duration
    cc_note = ", TCP CUBIC without HyStart" if args.cc == "cubic" else ""
    rows = []
    for name in names:
        p = SCENARIOS[name]
        print(
            f"\n== {name}: bottleneck {p['bottleneck']}, access {p['access']}, RTT {p['rtt_ms']} ms "
            f"(all on the bottleneck), drop-tail {p['queue']} pkt, {dur:g} s simulated, "
            f"repeat {args.repeat}, startlab handshake {'on' if args.startlab_handshake else 'off'} "
            f"(ns-3: always){cc_note}",
            flush=True,
        )
        sl = median_run([run_startlab(p, dur) for _ in range(args.repeat)])
        n3 = median_run([run_ns3(ns, p, dur, args.ns3_timeout) for _ in range(args.repeat)])
        # If ns-3 was stopped early, also run startlab over the span ns-3 reached: the start
        # (slow-start overshoot and its recovery) is the expensive part for both simulators.
        same = run_startlab(p, dur, stop_s=n3.sim_s) if n3.timed_out else None
        ref = same or sl
        runs = [("startlab", sl)]
        if same:
            runs.append((f"startlab to {n3.sim_s:.3f} s", same))
        runs.append(("ns-3", n3))
        print(
            f"{'':22}{'setup s':>9}{'wall s':>10}{'sim. s':>8}{'delivered':>11}{'pkts/wall-s':>13}"
            f"{'events':>11}{'throughput':>16}"
        )
        for label, r in runs:
            note = "  PARTIAL: stopped by --ns3-timeout" if r.timed_out else ""
            print(
                f"{label:22}{r.setup_s:9.3f}{r.wall_s:10.3f}{r.sim_s:8.3f}{r.delivered:11d}"
                f"{r.rate():13,.0f}{r.events:11d}{r.throughput() / 1e6:11.2f} Mbps{note}"
            )
        speed = ref.rate() / n3.rate() if n3.rate() > 0 else float("inf")
        if same:
            # Compare delivered packets, not throughput: ns-3's sink counts in-order bytes only,
            # which lag far behind during a recovery; startlab's partial count is all arrivals.
            tput = same.delivered / n3.delivered if n3.delivered else float("inf")
            print(
                f"ratio startlab/ns-3 over the first {n3.sim_s:.3f} s simulated (ns-3 was stopped "
                f"after {n3.wall_s:.0f} s wall, at {n3.sim_s:.3f} of {dur:g} s simulated): "
                f"delivered pkts per wall-second x{speed:,.1f}, delivered pkts {tput:.3f}"
            )
        else:
            tput = sl.throughput() / n3.throughput() if n3.throughput() > 0 else float("inf")
            print(
                f"ratio startlab/ns-3: delivered pkts per wall-second x{speed:,.1f}, "
                f"throughput {tput:.3f}"
            )
            if not 0.85 <= tput <= 1.15:
                print(
                    f"WARNING: throughputs differ by more than 15% ({tput:.3f}); the two runs "
                    "may not simulate the same thing"
                )
        label = f"{name} CUBIC" if args.cc == "cubic" else name
        rows.append((label, runs, speed, tput, same is not None))
        if args.profile:
            psl = run_startlab(p, dur, args.profile)
            pn3 = run_ns3(ns, p, dur, args.ns3_timeout, args.profile)
            print(f"profile ({args.profile} chunks; a separate run of each):")
            print(
                f"{'sim. time s':>12}{'startlab wall s':>17}{'delivered':>11}"
                f"{'ns-3 wall s':>13}{'delivered':>11}"
            )
            for i, (end, w1, d1) in enumerate(psl.chunks):
                n3c = (
                    f"{pn3.chunks[i][1]:13.3f}{pn3.chunks[i][2]:11d}" if i < len(pn3.chunks) else ""
                )
                print(f"{end:12g}{w1:17.3f}{d1:11d}{n3c}")
            if pn3.timed_out:
                print(f"(ns-3 profile run stopped by --ns3-timeout at {pn3.sim_s:.3f} s simulated)")
        sys.stdout.flush()

    print("\nsummary (markdown):")
    print(
        "| scenario | simulator | wall s | simulated s | delivered pkts | pkts / wall-s | "
        "throughput Mbps |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, runs, speed, tput, partial in rows:
        for label, r in runs:
            mark = " (partial)" if r.timed_out else ""
            print(
                f"| {name} | {label}{mark} | {r.wall_s:.3f} | {r.sim_s:.3f} | {r.delivered:,} | "
                f"{r.rate():,.0f} | {r.throughput() / 1e6:.1f} |"
            )
        what = "delivered pkts" if partial else "throughput"
        span = " (same span)" if partial else ""
        print(
            f"| {name} | **startlab / ns-3**{span} | | | | **x{speed:,.0f}** | {what} {tput:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
