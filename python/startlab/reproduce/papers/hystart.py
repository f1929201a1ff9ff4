"""Experiments of Ha & Rhee, "Hybrid Slow Start for High-Bandwidth and Long-Distance Networks"
(docs/REPRODUCTION.md; notes in docs/reproduction/hystart.md).

Every criterion below was written from the paper's claim before looking at startlab's number.
"""

from __future__ import annotations

import json
import math

from ..core import CANNOT_RUN, Analysis, Claim, Data, experiment, judge

PKT = 1500 * 8  # bits per packet on the wire (MSS 1460 B + 40 B headers), the paper's BDP unit
MSS = 1460


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _scenario(row) -> dict:
    return json.loads(row) if isinstance(row, str) else row


def _duration_s(data: Data, label: str) -> dict:
    """Run key -> duration in seconds (from the resolved scenario stored with each run)."""
    runs = data.runs(label)
    out = {}
    for _, r in runs.iterrows():
        sc = _scenario(r["scenario"])
        d = sc.get("duration")
        out[r["key"]] = d / 1e9 if isinstance(d, (int, float)) else float(str(d).rstrip("s"))
    return out


# --------------------------------------------------------------------------------------------
# Fig. 1


@experiment(
    name="hystart-fig1",
    paper="hystart",
    item="Fig. 1(a,b)",
    title="Slow start on 400 Mbit/s, 360 ms RTT, 100 % BDP buffer: overshoot, drops and recovery",
    sweeps={"main": "hystart-fig1.toml", "drops": "hystart-fig1-drops.toml"},
    claims=[
        "slow start overshoots to a cwnd of about 37000 packets",
        "about 12334 packets (one BDP) are dropped within one RTT",
        "the back-to-back losses leave ssthresh at a very small value",
        "recovery takes more than 20 s with poor utilisation",
    ],
    assumptions=[
        "MSS 1460 B + 40 B headers (BDP 12333 packets of 1460 B)",
        "Linux receiver: 16 quick ACKs, then delayed ACKs (40 ms)",
        "CUBIC avoidance with beta 0.7; SACK recovery (the paper's Linux 2.6 stack); NewReno and Reno as diagnostics",
        "1 Gbit/s access links; 60 s runs",
    ],
)
def fig1(data: Data) -> Analysis:
    import pandas as pd

    plt = _plt()
    flows = data.flows("main")
    links = data.links("main")
    bneck = links[links["link"] == "bottleneck:left->right"].set_index("recovery")
    cw = data.trace("main", "cwnd")
    sq_all = data.trace("main", "seq")
    bdp_pkts = 400e6 * 0.360 / 8 / MSS  # 12329 segments
    dur = _duration_s(data, "main")
    rows = []
    for _, f in flows.iterrows():
        rec = f["recovery"]
        c = cw[cw["recovery"] == rec].sort_values("time")
        t_loss = f["startup_exit_time"]
        after = c[(c["time"] > t_loss) & c["ssthresh"].apply(lambda v: math.isfinite(v))]
        min_ss = after["ssthresh"].min() / MSS if len(after) else float("nan")
        # recovery: the delivery rate (cumulative ACK progress over 1 s, from the sampled sequence
        # trace) after the first loss; the time until it is back at 90 % of the link's payload rate
        sq = sq_all[(sq_all["recovery"] == rec) & (sq_all["event"] == "acked")].sort_values("time")
        prog = sq.groupby((sq["time"] // 1.0).astype(int))["seq"].max()
        rate = prog.diff() * 8  # bit/s per 1-s bin
        later = rate[(rate.index > t_loss)]
        good = later[later >= 0.9 * 400e6 * MSS / 1500]
        t_back = float(good.index[0] + 1 - t_loss) if len(good) else float("inf")
        util20 = float(later[later.index < t_loss + 20].mean() / 400e6) if len(later) else float("nan")
        d = dur[f["key"]]
        rows.append(
            {
                "recovery": rec, "peak_cwnd_pkts": f["exit_cwnd_pkts"], "drops": int(f["drops"]),
                "timeouts": int(f["timeouts"]), "min_ssthresh_pkts": min_ss, "min_ssthresh_bdp": min_ss / bdp_pkts,
                "recovery_s": t_back, "util_20s_after_loss": util20, "utilisation": float(bneck.loc[rec, "utilization"]), "duration_s": d,
            }
        )  # fmt: skip
    table = pd.DataFrame(rows)
    sack = table.set_index("recovery").loc["sack"]

    # drops per RTT (SACK run, sequence trace)
    seq = data.trace("drops", "seq")
    dropped = seq[seq["event"] == "dropped"]
    if len(dropped):
        t0 = dropped["time"].min()
        in_rtt = int((dropped["time"] < t0 + 0.36).sum())
        in_2rtt = int((dropped["time"] < t0 + 0.72).sum())
        spread = dropped["time"].max() - t0
    else:
        in_rtt, in_2rtt, spread = 0, 0, float("nan")

    claims = [
        judge(
            "slow start overshoots to a cwnd of about 37000 packets",
            "cwnd ~37000 packets",
            f"{sack['peak_cwnd_pkts']:.0f} packets at the first loss (SACK run)",
            bool(abs(sack["peak_cwnd_pkts"] - 37000) <= 0.15 * 37000),
            "criterion: peak cwnd within 15 % of 37000. With a Linux receiver (quick ACKs, then delayed) "
            "slow start grows 1.5x per RTT and stops within one growth step above BDP + buffer = 24666",
        ),
        judge(
            "about 12334 packets (one BDP) are dropped within one RTT",
            "~12334 drops in one RTT",
            f"{in_rtt} drops within 360 ms of the first drop, {in_2rtt} within 720 ms (all overshoot drops spread over {spread:.2f} s; "
            f"flow total {sack['drops']})",
            bool(abs(in_rtt - 12334) <= 0.3 * 12334),
            "criterion: drops within one RTT (the base RTT, 360 ms) of the first drop within 30 % of 12334. "
            "While the buffer is full the round trip is 360 ms + 370 ms of queueing, and the loss is seen only "
            "after it: within that 0.72 s the count is the paper's (about 12000), so the difference is the "
            "reading of 'one RTT' rather than the size of the overshoot",
        ),
    ]
    nr = table.set_index("recovery")
    diag = "; ".join(
        f"{r}: smallest ssthresh {nr.loc[r, 'min_ssthresh_pkts']:.0f} pkts ({nr.loc[r, 'min_ssthresh_bdp']:.2f} BDP), "
        f"{nr.loc[r, 'timeouts']} RTO, delivery back at 90 % after {nr.loc[r, 'recovery_s']:.0f} s, utilisation {nr.loc[r, 'util_20s_after_loss']:.2f} over the 20 s after the loss"
        for r in nr.index
    )
    small = bool(sack["min_ssthresh_bdp"] <= 0.25)
    claims.append(
        judge(
            "the back-to-back losses leave ssthresh at a very small value",
            "ssthresh very small",
            diag,
            small,
            "criterion (paper's stack, SACK): the smallest ssthresh after the loss is at most 0.25 BDP. "
            "SACK recovers the whole overshoot in one episode without an RTO, so ssthresh stays at "
            "beta x cwnd. NewReno and Reno (diagnostic rows) time out and lose most of the following 20 s, "
            "but their ssthresh also stays large (beta x the window at the RTO): no recovery here leaves "
            "a very small ssthresh; the paper's value probably comes from repeated reductions in Linux's "
            "recovery of that time (not modelled)",
        )
    )
    slow = bool(sack["recovery_s"] > 20)
    claims.append(
        judge(
            "recovery takes more than 20 s with poor utilisation",
            "> 20 s of recovery, poor utilisation",
            f"SACK: delivery rate back at 90 % of the link {sack['recovery_s']:.0f} s after the first loss, utilisation "
            f"{sack['util_20s_after_loss']:.2f} over the 20 s after it; " + "; ".join(
                f"{r}: {nr.loc[r, 'recovery_s']:.0f} s, {nr.loc[r, 'util_20s_after_loss']:.2f}" for r in nr.index if r != "sack"),
            slow,
            "criterion (paper's stack, SACK): the delivery rate (cumulative ACKs per 1-s bin) needs more than "
            "20 s after the first loss to be back at 90 % of the link's payload rate. The paper also blames the host cost of freeing a BDP of buffers, which is not modelled",
        )
    )

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for rec, c in cw.groupby("recovery"):
        axes[0].plot(c["time"], c["cwnd"] / MSS, label=f"cwnd ({rec})", lw=1)
        ss = c["ssthresh"].where(c["ssthresh"].apply(math.isfinite))
        axes[0].plot(c["time"], ss / MSS, ls="--", lw=0.8, label=f"ssthresh ({rec})")
    axes[0].axhline(2 * 12333, color="grey", lw=0.6, ls=":")
    axes[0].set_xlabel("time (s)")
    axes[0].set_ylabel("packets")
    axes[0].set_title("(a) cwnd and ssthresh")
    axes[0].legend(fontsize=6)
    sent = seq[seq["event"] == "sent"]
    axes[1].plot(sent["time"], sent["seq"] / MSS, ",", color="#0072B2", label="sent")
    axes[1].plot(dropped["time"], dropped["seq"] / MSS, ",", color="#D55E00", label="dropped")
    axes[1].set_xlabel("time (s)")
    axes[1].set_ylabel("packet number")
    axes[1].set_title("(b) packets sent and dropped (SACK)")
    fig.suptitle("HyStart Fig. 1: slow start, 400 Mbit/s, 360 ms, 100 % BDP buffer")
    fig.tight_layout()
    return Analysis(claims, {"fig1": fig}, {"per recovery": table})


# --------------------------------------------------------------------------------------------
# Fig. 2

ALGS = ["slow-start", "lss", "hystart", "astart", "packet-pair", "vegas"]
BDP2 = 883  # packets of 1500 B at 100 Mbit/s x 106 ms


@experiment(
    name="hystart-fig2",
    paper="hystart",
    item="Fig. 2(a–f)",
    title="Two SACK flows with six startup algorithms on 100 Mbit/s, 106 ms, 100 % BDP buffer",
    sweeps={"main": "hystart-fig2.toml", "pp": "hystart-fig2-pp.toml"},
    claims=[
        "slow start bursts and loses many packets",
        "Limited Slow-Start loses fewer packets than slow start",
        "HyStart's first flow leaves slow start at about the BDP (packet 870 of 883) by the ACK train",
        "HyStart's second flow leaves early, by the delay increase the first flow causes",
        "Adaptive Start behaves like slow start",
        "packet-pair over-estimates the capacity (2300 and 2800 packets for an 883-packet BDP)",
        "Vegas leaves slow start prematurely",
    ],
    assumptions=[
        "second flow at 10 s", "Linux receivers (16 quick ACKs then delayed)", "Reno avoidance, SACK",
        "MSS 1460 B + 40 B headers", "algorithm defaults (LSS 100, Astart Westwood+, packet-pair n_pp 3, Vegas gamma 1)",
        "packet-pair under ACK compression: 125 us receive-interrupt coalescing at the receivers",
    ],
)
def fig2(data: Data) -> Analysis:
    plt = _plt()
    flows = data.flows("main")
    f = flows.set_index(["algorithm", "flow"])
    cols = ["exit_reason", "exit_cwnd_pkts", "drops", "timeouts", "su_time", "throughput"]
    table = flows[["algorithm", "flow"] + cols].copy()
    table["exit_bdp"] = table["exit_cwnd_pkts"] * MSS * 8 / (BDP2 * PKT)

    def drops(alg):
        return int(flows[flows["algorithm"] == alg]["drops"].sum())

    claims = [
        judge(
            "slow start bursts and loses many packets", "bursts and high losses",
            f"{drops('slow-start')} drops (two flows); flow 1 exits by {f.loc[('slow-start', 'flow1'), 'exit_reason']} at "
            f"{f.loc[('slow-start', 'flow1'), 'exit_cwnd_pkts']:.0f} packets",
            drops("slow-start") >= 0.1 * BDP2,
            "criterion: the two slow-start flows lose at least 10 % of a BDP (88 packets)",
        ),
        judge(
            "Limited Slow-Start loses fewer packets than slow start", "fewer losses than SS",
            f"LSS {drops('lss')} drops, SS {drops('slow-start')}",
            drops("lss") < drops("slow-start"),
            "criterion: fewer drops over both flows than slow start",
        ),
    ]
    h1, h2 = f.loc[("hystart", "flow1")], f.loc[("hystart", "flow2")]
    ex1 = h1["exit_cwnd_pkts"] * MSS * 8 / PKT  # in 1500-B packets, the paper's unit
    claims.append(
        judge(
            "HyStart's first flow leaves slow start at about the BDP (packet 870 of 883) by the ACK train",
            "ACK train, cwnd ~870 of 883",
            f"{h1['exit_reason']} at {h1['exit_cwnd_pkts']:.0f} segments ({ex1 / BDP2:.2f} BDP), {int(h1['drops'])} drops",
            bool(h1["exit_reason"] == "ack-train" and 0.8 * BDP2 <= ex1 <= 1.2 * BDP2),
            "criterion: exit reason ack-train and exit cwnd within 20 % of the BDP (883 packets of 1500 B). "
            "The train fires on the ACK that makes it span dMin/2, about BDP/2 ACKs into a round, so the exit "
            "window is that round's flight plus BDP/2: between 1 and 1.5 BDP depending on where the doubling "
            "sequence falls (IW 3: flight 768 + 442 = 1210; IW 2 or 4 give 1.04 BDP, IW 10 1.19 BDP; "
            "docs/reproduction/hystart.md)",
            shape=bool(h1["exit_reason"] == "ack-train" and ex1 <= 2 * BDP2),
        )
    )
    claims.append(
        judge(
            "HyStart's second flow leaves early, by the delay increase the first flow causes",
            "delay increase, early exit",
            f"{h2['exit_reason']} at {h2['exit_cwnd_pkts']:.0f} segments (flow 1: {h1['exit_cwnd_pkts']:.0f})",
            bool(h2["exit_reason"] == "delay-increase" and h2["exit_cwnd_pkts"] < h1["exit_cwnd_pkts"]),
            "criterion: flow 2's exit reason is delay-increase and its exit cwnd is below flow 1's",
        )
    )
    a1, s1 = f.loc[("astart", "flow1")], f.loc[("slow-start", "flow1")]
    claims.append(
        judge(
            "Adaptive Start behaves like slow start", "Astart = SS",
            f"Astart flow 1 {a1['exit_reason']} at {a1['exit_cwnd_pkts']:.0f}, {drops('astart')} drops; "
            f"SS {s1['exit_reason']} at {s1['exit_cwnd_pkts']:.0f}, {drops('slow-start')} drops",
            bool(a1["exit_reason"] == s1["exit_reason"] and abs(a1["exit_cwnd_pkts"] - s1["exit_cwnd_pkts"]) <= 0.05 * s1["exit_cwnd_pkts"]),
            "criterion: same exit reason and exit cwnd within 5 % of slow start's (flow 1)",
        )
    )
    # packet-pair: estimates in 1500-B packets over the base RTT
    pp = data.flows("pp")
    runs = data.runs("pp").sort_values("point")
    names = {0: "none", 1: "rx-125us", 2: "rx-125us+uplink-10M"}
    pp["setting"] = pp["point"].map(names)
    pp["estimate_pkts"] = pp["pp_capacity"] * pp["base_rtt"] / PKT
    est = pp.set_index(["setting", "flow"])["estimate_pkts"]
    plain = [est.get(("none", fl), float("nan")) for fl in ("flow1", "flow2")]
    comp = [est.get(("rx-125us", fl), float("nan")) for fl in ("flow1", "flow2")]
    slow_up = [est.get(("rx-125us+uplink-10M", fl), float("nan")) for fl in ("flow1", "flow2")]
    in_range = all(2.0 * BDP2 <= e <= 4.0 * BDP2 for e in comp)
    over = all(e > 1.2 * BDP2 for e in comp)
    claims.append(
        judge(
            "packet-pair over-estimates the capacity (2300 and 2800 packets for an 883-packet BDP)",
            "2300 and 2800 packets (2.6x, 3.2x)",
            f"plain path {plain[0]:.0f}/{plain[1]:.0f}; with 125 us receive coalescing {comp[0]:.0f}/{comp[1]:.0f}; "
            f"with coalescing and 10 Mbit/s return links {slow_up[0]:.0f}/{slow_up[1]:.0f} packets (flows 1/2)",
            in_range,
            "criterion: with receive-interrupt coalescing (the testbed NICs), both estimates within 2-4 BDP. "
            "On the plain path the ACK gap is the bottleneck's and the estimate is exact; coalescing makes "
            "the ACKs of a batch leave back to back, and the estimate is then set by the return path "
            "(1 Gbit/s: tens of times the BDP), not the paper's 2.6-3.2x, which only a slow (~10 Mbit/s) "
            "return link gives",
            shape=over,
        )
    )
    v1, v2 = f.loc[("vegas", "flow1")], f.loc[("vegas", "flow2")]
    v1b = v1["exit_cwnd_pkts"] * MSS * 8 / PKT / BDP2
    claims.append(
        judge(
            "Vegas leaves slow start prematurely", "premature exit",
            f"flow 1 {v1['exit_reason']} at {v1['exit_cwnd_pkts']:.0f} segments ({v1b:.2f} BDP); flow 2 (joining a "
            f"full queue) {v2['exit_reason']} at {v2['exit_cwnd_pkts']:.0f} segments",
            bool(v1["exit_reason"] == "vegas-diff" and v1b < 0.8),
            "criterion (flow 1, alone on the idle path): exit by the Vegas test below 0.8 BDP",
        )
    )

    cw = data.trace("main", "cwnd")
    cwp = data.trace("pp", "cwnd")
    fig, axes = plt.subplots(2, 4, figsize=(15, 6.5), sharey=False)
    panels = [(a, cw[cw["algorithm"] == a]) for a in ALGS] + [
        ("packet-pair, rx-125us", cwp[cwp["coalescing"] == runs.iloc[1]["coalescing"]] if len(runs) > 1 else cwp.iloc[0:0]),
        ("packet-pair, rx-125us+10M", cwp[cwp["coalescing"] == runs.iloc[2]["coalescing"]] if len(runs) > 2 else cwp.iloc[0:0]),
    ]
    for ax, (title, c) in zip(axes.flat, panels):
        for fl, cc in c.groupby("flow"):
            ax.plot(cc["time"], cc["cwnd"] / MSS, lw=0.8, label=f"{fl} cwnd")
            ss = cc["ssthresh"].where(cc["ssthresh"].apply(math.isfinite))
            ax.plot(cc["time"], ss / MSS, lw=0.6, ls="--", label=f"{fl} ssthresh")
        ax.axhline(BDP2 * PKT / (MSS * 8), color="grey", lw=0.5, ls=":")
        ax.set_ylim(0, 3500)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time (s)")
    axes[0, 0].set_ylabel("packets")
    axes[0, 0].legend(fontsize=6)
    fig.suptitle("HyStart Fig. 2: two SACK flows, 100 Mbit/s, 106 ms, 100 % BDP buffer")
    fig.tight_layout()
    ptab = pp[["setting", "flow", "pp_capacity", "estimate_pkts", "exit_reason", "exit_cwnd_pkts", "drops"]]
    return Analysis(claims, {"fig2": fig}, {"per algorithm and flow": table, "packet-pair estimates": ptab.reset_index(drop=True)})


# --------------------------------------------------------------------------------------------
# Fig. 3

BDP3_SEG = 400e6 * 0.160 / 8 / MSS  # 5479 segments of 1460 B (5333 packets of 1500 B)


@experiment(
    name="hystart-fig3",
    paper="hystart",
    item="Fig. 3(a–c)",
    title="Two HyStart flows with background traffic on 400 Mbit/s, 160 ms: quick, quick+delayed, delayed ACKs",
    sweeps={"main": "hystart-fig3.toml"},
    claims=[
        "HyStart works with all three ACK schemes",
        "the delay test detects the other flow",
        "with quick ACKs HyStart over-estimates the BDP by about 10 %",
    ],
    assumptions=[
        "flow 2 at 5 s", "background: Poisson arrivals of bounded-Pareto TCP flows (mean 500 kB), 50 Mbit/s each way",
        "CUBIC, SACK, MSS 1460 B + 40 B headers", "quick ACK = an ACK per segment; quick+delayed = Linux; delayed = 200 ms",
    ],
    reduced="30 s runs (the paper's plot length is not given); quick: 12 s with flow 2 at 4 s",
)
def fig3(data: Data) -> Analysis:
    plt = _plt()
    flows = data.flows("main")
    main = flows[flows["flow"].isin(["flow1", "flow2"])].copy()
    main["exit_bdp"] = main["exit_cwnd_pkts"] / BDP3_SEG
    t = main.set_index(["ack", "flow"])
    schemes = ["every-packet", "linux", "delayed"]
    detectors = {"ack-train", "delay-increase"}
    ok = [(s, fl) for s in schemes for fl in ("flow1", "flow2") if (s, fl) in t.index and t.loc[(s, fl), "exit_reason"] in detectors]
    desc = "; ".join(
        f"{s}: " + ", ".join(f"{fl} {t.loc[(s, fl), 'exit_reason']} at {t.loc[(s, fl), 'exit_bdp']:.2f} BDP" for fl in ("flow1", "flow2") if (s, fl) in t.index)
        for s in schemes
    )
    claims = [
        judge(
            "HyStart works with all three ACK schemes", "both flows leave by a HyStart test under every scheme", desc,
            len(ok) == 6,
            "criterion: for each ACK scheme both flows leave slow start by the ACK train or the delay test (not by a loss)",
            shape=len(ok) >= 3,
        )
    ]
    d2 = [s for s in schemes if (s, "flow2") in t.index and t.loc[(s, "flow2"), "exit_reason"] == "delay-increase"]
    claims.append(
        judge(
            "the delay test detects the other flow", "flow 2 exits by delay increase",
            f"flow 2 exits by delay increase under {', '.join(d2) or 'no scheme'}",
            len(d2) == 3,
            "criterion: flow 2 (starting while flow 1 fills the buffer) leaves by delay-increase under all three schemes",
            shape=len(d2) >= 1,
        )
    )
    q = t.loc[("every-packet", "flow1")] if ("every-packet", "flow1") in t.index else None
    qb = float(q["exit_bdp"]) if q is not None else float("nan")
    claims.append(
        judge(
            "with quick ACKs HyStart over-estimates the BDP by about 10 %", "+10 %",
            f"flow 1 with an ACK per segment: {q['exit_reason'] if q is not None else '-'} at {qb:.2f} BDP",
            bool(q is not None and q["exit_reason"] == "ack-train" and 1.0 <= qb <= 1.25),
            "criterion: flow 1 (alone at first) exits by the ACK train at 1.0-1.25 BDP (BDP = 5479 segments)",
            shape=bool(q is not None and qb > 1.0),
        )
    )
    cw = data.trace("main", "cwnd", "true")
    cw = cw[cw["flow"].isin(["flow1", "flow2"])]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, s in zip(axes, schemes):
        c = cw[cw["ack"] == s]
        for fl, cc in c.groupby("flow"):
            ax.plot(cc["time"], cc["cwnd"] / MSS, lw=0.8, label=f"{fl} cwnd")
            ss = cc["ssthresh"].where(cc["ssthresh"].apply(math.isfinite))
            ax.plot(cc["time"], ss / MSS, lw=0.6, ls="--", label=f"{fl} ssthresh")
        ax.axhline(BDP3_SEG, color="grey", lw=0.5, ls=":")
        ax.set_title({"every-packet": "(a) quick ACK", "linux": "(b) quick + delayed ACK (Linux)", "delayed": "(c) delayed ACK"}[s], fontsize=9)
        ax.set_xlabel("time (s)")
    axes[0].set_ylabel("packets")
    axes[0].legend(fontsize=6)
    fig.suptitle("HyStart Fig. 3: two HyStart flows with background traffic, 400 Mbit/s, 160 ms")
    fig.tight_layout()
    tab = main[["ack", "flow", "exit_reason", "exit_cwnd_pkts", "exit_bdp", "drops", "timeouts"]].reset_index(drop=True)
    return Analysis(claims, {"fig3": fig}, {"HyStart flows": tab})


# --------------------------------------------------------------------------------------------
# Fig. 4 and Fig. 5


def _utilisation(data: Data, label: str, axis: str):
    """Per run: the axis value, algorithm, the bottleneck's utilisation from the first flow's start
    to the end, and the two main flows' drops."""
    import pandas as pd

    links = data.links(label)
    flows = data.flows(label)
    dur = _duration_s(data, label)
    runs = data.runs(label).set_index("key")
    rows = []
    for key, fl in flows.groupby("key"):
        ln = links[(links["key"] == key) & (links["link"] == "bottleneck:left->right")].iloc[0]
        d = dur[key]
        t_first = fl["start"].min()
        sc = _scenario(runs.loc[key, "scenario"])
        topo = sc["topology"]
        rate = float(ln["rate"])
        rtt = fl["base_rtt"].min()
        rows.append(
            {
                "key": key, "algorithm": fl["algorithm"].iloc[0], axis: fl[axis].iloc[0] if axis in fl else None,
                "rate_mbps": rate / 1e6, "rtt_ms": round(_rtt_ms(topo)), "buffer_pkts": float(ln["queue_limit"]),
                "utilisation": float(ln["utilization"]) * d / (d - t_first), "drops": int(fl["drops"].sum()),
                "startup_drops": int(round((fl["loss_in_startup"] * fl["packets_sent"]).sum())),
                "timeouts": int(fl["timeouts"].sum()), "bdp_pkts": rate * _rtt_ms(topo) / 1e3 / PKT, "base_rtt": rtt,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def _rtt_ms(topo: dict) -> float:
    r = topo.get("rtt")
    if isinstance(r, (int, float)):
        return r / 1e6
    if isinstance(r, str):
        return float(r.rstrip("ms")) if r.endswith("ms") else float(r.rstrip("s")) * 1e3
    rtts = topo.get("rtts")
    return rtts[0] / 1e6 if rtts else float("nan")


@experiment(
    name="hystart-fig4",
    paper="hystart",
    item="Fig. 4(a–c)",
    title="Utilisation of two CUBIC flows vs RTT, buffer and bandwidth: HyStart, slow start, LSS",
    sweeps={"a": "hystart-fig4a.toml", "b": "hystart-fig4b.toml", "c": "hystart-fig4c.toml", "newreno": "hystart-fig4-newreno.toml"},
    claims=[
        "HyStart gives consistently better utilisation than slow start and Limited Slow-Start",
        "at high BDP slow start and Limited Slow-Start lose many packets, HyStart does not",
    ],
    assumptions=[
        "400 Mbit/s for the RTT and buffer panels, 160 ms for the bandwidth panel (not stated)",
        "Linux receivers, SACK, CUBIC beta 0.7, MSS 1460 B + 40 B headers, no background traffic",
        "utilisation of the bottleneck from 10 s to 70 s; 3 runs per point (start jitter U[0, 200 ms]), mean shown",
        "diagnostic run set: the 400 Mbit/s, 160 ms, 100 % BDP point with NewReno instead of SACK",
    ],
)
def fig4(data: Data) -> Analysis:
    import pandas as pd

    plt = _plt()
    parts = {}
    for p, x in (("a", "rtt_ms"), ("b", "buffer_pkts"), ("c", "rate_mbps")):
        u = _utilisation(data, p, "path")
        u["panel"] = p
        u["x"] = u[x]
        parts[p] = u
    allu = pd.concat(parts.values(), ignore_index=True)
    piv = allu.pivot_table(index=["panel", "x"], columns="algorithm", values="utilisation")
    gain = piv["hystart"] - piv[["slow-start", "lss"]].max(axis=1)
    nr = _utilisation(data, "newreno", "path").groupby("algorithm")[["utilisation", "drops", "timeouts"]].mean()
    nr_text = "; diagnostic with NewReno at 400 Mbit/s, 160 ms: " + ", ".join(
        f"{a} {nr.loc[a, 'utilisation'] * 100:.1f} % ({nr.loc[a, 'timeouts']:.1f} RTO)" for a in nr.index)
    n_ok = int((gain >= -0.005).sum())
    n = len(gain)
    worst = gain.idxmin()
    claims = [
        judge(
            "HyStart gives consistently better utilisation than slow start and Limited Slow-Start",
            "HyStart better at every point",
            f"HyStart at least as good (within 0.5 point) at {n_ok}/{n} points; its gain over the better of SS/LSS "
            f"ranges {gain.min() * 100:+.1f} to {gain.max() * 100:+.1f} points (worst: panel {worst[0]}, x = {worst[1]:g})" + nr_text,
            n_ok == n,
            "criterion: at every point of the three panels, HyStart's utilisation >= max(SS, LSS) - 0.5 point; "
            "same shape if at two thirds of the points. With SACK the slow-start overshoot is repaired in one "
            "fast recovery (see hystart-fig1), so SS loses little utilisation; the NewReno diagnostic shows "
            "the paper's ordering when the overshoot costs timeouts. Where HyStart loses (10 Mbit/s, 10 % "
            "buffer): no ACK train at 2.4 ms per delayed ACK, and HyStart's byte-counting growth (2x per RTT "
            "behind delayed ACKs, against 1.5x for SS and LSS) gives bigger bursts; docs/reproduction/hystart.md",
            shape=n_ok >= 2 * n / 3,
        )
    ]
    hi = allu[(allu["rate_mbps"] == 400) & (allu["rtt_ms"] == 160) & (allu["panel"].isin(["a", "c"]))]
    hi = hi.groupby("algorithm")[["drops", "startup_drops", "bdp_pkts"]].mean()
    ok = (
        "hystart" in hi.index and "slow-start" in hi.index and "lss" in hi.index
        and hi.loc["slow-start", "drops"] > 0.1 * hi.loc["slow-start", "bdp_pkts"]
        and hi.loc["lss", "drops"] > 0.1 * hi.loc["lss", "bdp_pkts"]
        and hi.loc["hystart", "drops"] * 10 < min(hi.loc["slow-start", "drops"], hi.loc["lss", "drops"])
    )  # fmt: skip
    claims.append(
        judge(
            "at high BDP slow start and Limited Slow-Start lose many packets, HyStart does not",
            "SS and LSS lose many packets at high BDP",
            "400 Mbit/s, 160 ms: " + ", ".join(f"{a} {hi.loc[a, 'drops']:.0f} drops ({hi.loc[a, 'startup_drops']:.0f} sent in startup)" for a in hi.index)
            + f" (BDP {hi['bdp_pkts'].iloc[0]:.0f} packets; mean of the runs)",
            bool(ok),
            "criterion: at 400 Mbit/s and 160 ms, SS and LSS each drop more than 0.1 BDP and HyStart less than a tenth of "
            "either (all drops of the two flows until 70 s; the drops of packets sent during startup are shown too). "
            "LSS grows by 50 packets per RTT above 100 and reaches a 5333-packet BDP only after ~100 RTTs, so it "
            "hardly overshoots",
        )
    )
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    labels = {"a": ("RTT (ms)", "(a) RTT"), "b": ("buffer (packets)", "(b) buffer"), "c": ("bandwidth (Mbit/s)", "(c) bandwidth")}
    for ax, (p, u) in zip(axes, parts.items()):
        for a, g in u.groupby("algorithm"):
            g = g.groupby("x", as_index=False)["utilisation"].mean().sort_values("x")
            ax.plot(g["x"], g["utilisation"] * 100, marker="o", label=a)
        ax.set_xlabel(labels[p][0])
        ax.set_title(labels[p][1])
        if p in ("b", "c"):
            ax.set_xscale("log")
    axes[0].set_ylabel("utilisation (%)")
    axes[0].legend(fontsize=7)
    fig.suptitle("HyStart Fig. 4: two CUBIC flows (10 s, 40 s), utilisation until 70 s")
    fig.tight_layout()
    tab = allu.groupby(["panel", "x", "algorithm"])[["rate_mbps", "rtt_ms", "buffer_pkts", "utilisation", "drops", "startup_drops", "timeouts"]].mean()
    return Analysis(claims, {"fig4": fig}, {"utilisation (mean of the runs)": tab.reset_index(), "NewReno diagnostic": nr.reset_index()})


@experiment(
    name="hystart-fig5",
    paper="hystart",
    item="Fig. 5",
    title="Utilisation with Linux, FreeBSD and Windows receivers (RTT 100 ms): HyStart, slow start, LSS",
    sweeps={"main": "hystart-fig5.toml"},
    claims=[
        "Linux receivers (quick ACKs) obtain more throughput than FreeBSD and Windows receivers",
        "slow start with FreeBSD and Windows receivers is much worse, with blackouts of more than 20 s",
        "HyStart works well with all three receivers",
    ],
    assumptions=[
        "400 Mbit/s, buffer 100 % BDP (3333 packets), as Fig. 4", "receivers = their ACK policies (linux, freebsd, windows)",
        "SACK, CUBIC beta 0.7, MSS 1460 B + 40 B headers",
        "utilisation of the bottleneck from 10 s to 70 s; 3 runs per point (start jitter U[0, 200 ms]), mean shown",
    ],
)
def fig5(data: Data) -> Analysis:
    plt = _plt()
    u = _utilisation(data, "main", "receiver")
    piv = u.pivot_table(index="receiver", columns="algorithm", values="utilisation")
    algs = list(piv.columns)
    better = {a: bool(piv.loc["linux", a] > piv.loc["freebsd", a] + 0.005 and piv.loc["linux", a] > piv.loc["windows", a] + 0.005) for a in algs}
    show = "; ".join(f"{a}: " + ", ".join(f"{r} {piv.loc[r, a] * 100:.1f} %" for r in piv.index) for a in algs)
    claims = [
        judge(
            "Linux receivers (quick ACKs) obtain more throughput than FreeBSD and Windows receivers",
            "Linux > FreeBSD, Windows", show, all(better.values()),
            "criterion: for every algorithm, utilisation with the Linux receiver exceeds both others by more than 0.5 point",
            shape=any(better.values()),
        ),
        Claim(
            "slow start with FreeBSD and Windows receivers is much worse, with blackouts of more than 20 s",
            "much worse, blackouts > 20 s",
            "slow start: " + ", ".join(f"{r} {piv.loc[r, 'slow-start'] * 100:.1f} %" for r in piv.index) + "; "
            + ", ".join(f"{r} {u[(u.receiver == r) & (u.algorithm == 'slow-start')]['timeouts'].mean():.1f} RTO per run" for r in piv.index),
            CANNOT_RUN,
            "the paper attributes the blackouts to the FreeBSD and Windows receivers, suspecting their SACK "
            "implementations; startlab models their ACK policies (delayed ACKs, 100 ms and 200 ms timers), "
            "not those bugs, so the blackouts cannot be reproduced (the measured values are shown)",
        ),
    ]
    hs = piv["hystart"]
    ok = bool(all(hs[r] >= piv.loc[r, "slow-start"] - 0.005 for r in piv.index) and hs.max() - hs.min() <= 0.05)
    claims.append(
        judge(
            "HyStart works well with all three receivers", "HyStart fine with all receivers",
            "HyStart: " + ", ".join(f"{r} {hs[r] * 100:.1f} %" for r in piv.index),
            ok,
            "criterion: for every receiver HyStart's utilisation >= slow start's - 0.5 point, and HyStart's spread across receivers <= 5 points",
        )
    )
    fig, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.8 / len(algs)
    for i, a in enumerate(algs):
        ax.bar([j + i * width for j in range(len(piv.index))], piv[a] * 100, width, label=a)
    ax.set_xticks([j + width * (len(algs) - 1) / 2 for j in range(len(piv.index))], list(piv.index))
    ax.set_ylabel("utilisation (%)")
    ax.legend(fontsize=7)
    ax.set_title("HyStart Fig. 5: receivers, 400 Mbit/s, 100 ms")
    fig.tight_layout()
    return Analysis(claims, {"fig5": fig}, {"utilisation": u[["receiver", "algorithm", "utilisation", "drops", "timeouts"]]})


# --------------------------------------------------------------------------------------------
# footnote


@experiment(
    name="hystart-footnote",
    paper="hystart",
    item="footnote",
    title="Limited Slow-Start (max_ssthresh 100) from 1 to 5000 packets at 200 ms",
    sweeps={"main": "hystart-footnote.toml"},
    claims=["LSS takes about 105 RTT rounds, about 21 s at 200 ms, to grow from 1 to 5000 packets"],
    assumptions=["an ACK per segment, initial window 1, MSS 1460 B, an idle 1 Gbit/s path that never queues"],
)
def footnote(data: Data) -> Analysis:
    import pandas as pd

    plt = _plt()
    cw = data.trace("main", "cwnd").sort_values("time")
    fl = data.flows("main").iloc[0]
    t0 = float(fl["t0"])
    rtt = float(fl["base_rtt"])
    hit = cw[cw["cwnd"] >= 5000 * MSS]
    t = float(hit["time"].iloc[0] - t0) if len(hit) else float("nan")
    rounds = t / rtt
    model = math.log2(100) + (5000 - 100) / 50
    claims = [
        judge(
            "LSS takes about 105 RTT rounds, about 21 s at 200 ms, to grow from 1 to 5000 packets",
            "105 rounds, ~21 s (model log2(100) + 4900/50 = 104.6)",
            f"{t:.2f} s = {rounds:.1f} base RTTs ({rtt * 1e3:.1f} ms)",
            bool(100 <= rounds <= 110 and 19 <= t <= 23),
            "criterion: 100-110 rounds and 19-23 s from the first segment to cwnd >= 5000 segments",
        )
    ]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.plot(cw["time"] - t0, cw["cwnd"] / MSS, lw=1, label="LSS cwnd (startlab)")
    ax.axhline(5000, color="grey", lw=0.6, ls=":")
    ax.axvline(model * 0.2, color="#D55E00", lw=0.8, ls="--", label=f"model {model:.1f} rounds")
    ax.set_xlabel("time since the first segment (s)")
    ax.set_ylabel("cwnd (packets)")
    ax.set_ylim(0, 6000)
    ax.legend(fontsize=7)
    ax.set_title("HyStart footnote: LSS (max_ssthresh 100), 200 ms", fontsize=10)
    fig.tight_layout()
    return Analysis(claims, {"footnote": fig}, {"LSS": pd.DataFrame([{"seconds": t, "rounds": rounds, "model_rounds": model}])})
