"""Experiments of Hu & Steenkiste, "Improving TCP Startup Performance using Active Measurements"
(Paced Start; docs/REPRODUCTION.md, notes in docs/reproduction/paced-start.md).

Every criterion below was written from the paper's claim before the runs; the numbers it quotes
are the paper's. "Sack" is slow start with SACK recovery, "PaSt" is Paced Start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import Analysis, Data, experiment, judge

if TYPE_CHECKING:
    import pandas as pd

PAPER = "paced-start"
NAMES = {"slow-start": "Sack", "paced-start": "PaSt", "hoe": "NewReno (Hoe)", "vegas": "Vegas"}
COLORS = {"Sack": "#D55E00", "PaSt": "#0072B2", "NewReno (Hoe)": "#009E73", "Vegas": "#CC79A7"}
CASES = ["sack-only", "past-only", "mixed"]

COMMON = [
    "segments of 1000 B payload plus 40 B of TCP/IP headers (the paper counts 1000-B packets)",
    "initial window 2 segments, every packet ACKed (ns-2's default sink), RFC 6298 timers (1 s minimum RTO)",
    "initial ssthresh 20000 packets for Sack (paper §4), PaSt ignores it until it exits",
]


# ----------------------------------------------------------------------------------------------
# helpers


def _mbps(x: float) -> str:
    return f"{x / 1e6:.2f} Mb/s"


def _label(case: str, startup: str) -> str:
    return f"{NAMES.get(startup, startup)} ({'mixed' if case == 'mixed' else 'only'})"


def _groups(flows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Measured flows of a population run set by curve: 'Sack (only)', 'PaSt (only)',
    'Sack (mixed)', 'PaSt (mixed)'."""
    f = flows[flows["measured"].astype(bool)]
    out = {}
    for case in CASES:
        for startup in ("slow-start", "paced-start"):
            part = f[(f["case"] == case) & (f["startup"] == startup)]
            if len(part):
                out[_label(case, startup)] = part
    return out


def _cdf(ax: Any, values: Any, label: str, **kw: Any) -> None:
    import numpy as np

    v = np.sort(np.asarray(values, dtype=float))
    if len(v):
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=label, **kw)


def _style(label: str) -> dict[str, Any]:
    name = label.split(" (")[0]
    return {"color": COLORS.get(name, "k"), "linestyle": "--" if "mixed" in label else "-"}


def _population_table(groups: dict[str, pd.DataFrame]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for label, g in groups.items():
        sent = g["packets_sent"].sum()
        rows.append(
            {
                "curve": label, "flows": len(g), "median_mbps": g["throughput"].median() / 1e6,
                "p5_mbps": g["throughput"].quantile(0.05) / 1e6, "p95_mbps": g["throughput"].quantile(0.95) / 1e6,
                "lossy_fraction": float((g["drops"] > 0).mean()),
                "loss_in_startup": float((g["loss_in_startup"] * g["packets_sent"]).sum() / sent) if sent else float("nan"),
                "total_loss": float(g["drops"].sum() / sent) if sent else float("nan"),
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def _active_flows(flows: pd.DataFrame) -> float:
    """Mean number of measured flows active, per run: Σ (completion − start) / span of starts."""
    import numpy as np

    f = flows[flows["measured"].astype(bool)]
    per_run = []
    for _, run in f.groupby("seed"):
        end = run["t0"] + run["completion_time"]
        busy = (end - run["start"]).sum()
        span = run["start"].max() - run["start"].min()
        if span > 0:
            per_run.append(busy / span)
    return float(np.mean(per_run)) if per_run else float("nan")


def _population_figure(groups: dict[str, pd.DataFrame], title: str, loss_panels: bool) -> Any:
    import matplotlib.pyplot as plt
    import numpy as np

    n = 3 if loss_panels else 1
    fig, axes = plt.subplots(n, 1, figsize=(6.4, 3.0 * n))
    axes = np.atleast_1d(axes)
    for label, g in groups.items():
        _cdf(axes[0], g["throughput"] / 1e6, label, **_style(label))
    axes[0].set_xlabel("throughput (Mb/s)")
    axes[0].set_ylabel("cumulative fraction of flows")
    axes[0].legend(fontsize=8)
    axes[0].set_title(title)
    if loss_panels:
        for label, g in groups.items():
            lossy = np.sort(g.loc[g["drops"] > 0, "loss_rate"].to_numpy())
            axes[1].plot(np.arange(1, len(lossy) + 1), lossy, label=label, **_style(label))
        axes[1].set_xlabel("lossy flows, ordered by loss rate")
        axes[1].set_ylabel("loss rate")
        axes[1].legend(fontsize=8)
        table = _population_table(groups)
        x = np.arange(len(table))
        axes[2].bar(x - 0.2, table["loss_in_startup"], 0.4, label="loss in startup", color="#E69F00")
        axes[2].bar(x + 0.2, table["total_loss"], 0.4, label="total loss", color="#56B4E9")
        axes[2].set_xticks(x, table["curve"], fontsize=8)
        axes[2].set_ylabel("lost / sent packets")
        axes[2].legend(fontsize=8)
    fig.tight_layout()
    return fig


def _sent_in_startup(seq: pd.DataFrame, flows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per run: payload bytes first sent in [t0, t_su] (a retransmission counts once), the
    "sent" reading of su-throughput (bytes sent in startup × 8 / su-time)."""
    import pandas as pd

    rows = []
    for key, f in flows.groupby("key"):
        row = f.iloc[0]
        s = seq[(seq["key"] == key) & (seq["event"] == "sent") & (seq["time"] <= row["t_su"] + 1e-12)]
        sent = float(s["len"].sum())
        rows.append({**{k: row[k] for k in keys}, "key": key, "su_time": row["su_time"], "sent_bytes": sent,
                     "su_throughput_sent": sent * 8 / row["su_time"] if row["su_time"] > 0 else float("nan"),
                     "su_throughput": row["su_throughput"]})  # fmt: skip
    return pd.DataFrame(rows)


def _trace_with_key(data: Data, label: str, kind: str) -> pd.DataFrame:
    """A trace of every run of ``label`` with the run's key."""
    import pandas as pd

    runs = data.runs(label)
    frames = []
    for key in runs.loc[runs["status"] == "ok", "key"]:
        t = data.trace(label, kind, f"r.key = '{key}'")
        if len(t):
            t["key"] = key
            frames.append(t)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# ----------------------------------------------------------------------------------------------
# Fig. 1


@experiment(
    name="paced-start-fig1",
    paper=PAPER,
    item="Fig. 1",
    title="PTR packet trains: gap difference and train rate against the source gap (10 Mb/s, 3.6 Mb/s cross traffic)",
    sweeps={"main": "paced-start-fig1.toml"},
    claims=[
        "the gap difference falls as the source gap grows and reaches 0 at the turning point",
        "the train rate at the turning point estimates the available bandwidth (6.8 vs 6.4 Mb/s)",
    ],
    assumptions=[
        "the paper's iperf cross traffic is CBR of 1500-B packets (a TCP flow would react to the trains)",
        "20-packet trains of 1500 B, one every 200 ms; source gaps 0.8-3 ms",
        "40 ms RTT, 100-packet drop-tail queue, 100 Mb/s access links (the testbed's are not given)",
    ],
)
def fig1(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np

    p = data.probes("main")
    p = p[p["source"] == "ptr"].sort_values("source_gap").reset_index(drop=True)
    gap, diff = p["source_gap"].to_numpy(), p["gap_difference"].to_numpy()
    # Criterion: the turning point is the first (smallest) source gap whose gap difference is at
    # most 1 % of the source gap; before it the difference must fall (each step no larger than the
    # previous one by more than that tolerance).
    zero = np.flatnonzero(diff <= 0.01 * gap)
    before = diff[: zero[0] + 1] if len(zero) else diff
    falling = bool(np.all(np.diff(before) <= 0.01 * gap[1 : len(before)]))
    claims = [
        judge(
            "the gap difference falls as the source gap grows and reaches 0 at the turning point",
            "falls to 0 at the turning point",
            (f"from {diff[0] * 1e3:.3f} ms at {gap[0] * 1e3:.1f} ms to ≤ 1 % of the gap at {gap[zero[0]] * 1e3:.2f} ms" if len(zero) else "never reaches 0"),
            bool(len(zero)) and falling,
            "criterion: the gap difference decreases with the source gap (steps up smaller than 1 % of the gap allowed) and reaches ≤ 1 % of the source gap",
        )
    ]
    if len(zero):
        tp = gap[zero[0]]
        estimate = 1500 * 8 / tp
        err = estimate / 6.4e6 - 1
        claims.append(
            judge(
                "the train rate at the turning point estimates the available bandwidth (6.8 vs 6.4 Mb/s)",
                "6.8 Mb/s estimate for 6.4 Mb/s available (+6 %)",
                f"{estimate / 1e6:.2f} Mb/s at the turning point ({err:+.1%} of 6.4 Mb/s); received train rate there {p.loc[zero[0], 'train_rate'] / 1e6:.2f} Mb/s",
                abs(err) <= 0.10,
                "criterion: the source rate of the turning-point train (packet size / source gap) within 10 % of the 6.4 Mb/s available",
            )
        )
    else:
        claims.append(judge("the train rate at the turning point estimates the available bandwidth (6.8 vs 6.4 Mb/s)", "6.8 vs 6.4 Mb/s", "no turning point", False, "the gap difference never reached 0"))
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(6, 5.5), sharex=True)
    a1.plot(gap * 1e3, diff * 1e3, "o-", color="#0072B2")
    a1.axhline(0, color="grey", lw=0.8)
    a1.set_ylabel("dest. gap − source gap (ms)")
    a1.set_title("Paced Start Fig. 1: PTR trains, 10 Mb/s link, 3.6 Mb/s CBR")
    a2.plot(gap * 1e3, p["train_rate"] / 1e6, "s-", color="#D55E00", label="train rate at the receiver")
    a2.plot(gap * 1e3, 1500 * 8 / gap / 1e6, ":", color="grey", label="source rate")
    a2.axhline(6.4, color="k", lw=0.8, ls="--", label="available 6.4 Mb/s")
    if len(zero):
        for a in (a1, a2):
            a.axvline(gap[zero[0]] * 1e3, color="#009E73", lw=0.8, ls="--")
    a2.set_xlabel("source gap (ms)")
    a2.set_ylabel("rate (Mb/s)")
    a2.legend(fontsize=8)
    fig.tight_layout()
    return Analysis(claims, {"fig1": fig}, {"trains": p[["train", "source_gap", "dest_gap", "gap_difference", "train_rate"]]})


# ----------------------------------------------------------------------------------------------
# Fig. 2


def _trains(times: Any, idle: float) -> list[Any]:
    import numpy as np

    t = np.sort(np.asarray(times, dtype=float))
    if not len(t):
        return []
    cuts = np.flatnonzero(np.diff(t) > idle) + 1
    return np.split(t, cuts)


@experiment(
    name="paced-start-fig2",
    paper=PAPER,
    item="Fig. 2",
    title="Sequence plots of Sack and PaSt: 80 ms, 5 Mb/s bottleneck, 3 Mb/s available, no delayed ACKs",
    sweeps={"main": "paced-start-fig2.toml"},
    claims=["PaSt's trains are more stretched out than Sack's", "PaSt's trains are more widely spaced than Sack's"],
    assumptions=COMMON + ["a 50-packet drop-tail queue (about one BDP)", "2 Mb/s CBR of 1000-B packets makes 3 Mb/s available"],
)
def fig2(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    seq = _trace_with_key(data, "main", "seq")
    flows = data.flows("main")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    stats = {}
    rows = []
    for ax, alg in zip(axes, ["slow-start", "paced-start"]):
        f = flows[flows["algorithm"] == alg].iloc[0]
        s = seq[seq["key"] == f["key"]]
        sent = s[s["event"] == "sent"]
        acked = s[s["event"] == "acked"]
        # the startup's trains: first sends before t_su, split where the sender idles > RTT/4
        trains = _trains(sent.loc[sent["time"] <= f["t_su"], "time"], 0.02)
        probe = trains[1:3]  # the 2nd and 3rd trains (4 and 8 packets in both schemes)
        gaps = [float(np.mean(np.diff(t))) for t in probe if len(t) > 1]
        idles = [float(trains[i + 1][0] - trains[i][-1]) for i in range(min(3, len(trains) - 1))]
        stats[alg] = (float(np.mean(gaps)) if gaps else float("nan"), float(np.mean(idles)) if idles else float("nan"))
        for i, t in enumerate(trains[:6]):
            rows.append({"scheme": NAMES[alg], "train": i, "packets": len(t), "start_s": t[0], "span_ms": (t[-1] - t[0]) * 1e3,
                         "mean_gap_ms": float(np.mean(np.diff(t))) * 1e3 if len(t) > 1 else float("nan")})  # fmt: skip
        horizon = min(float(f["t_su"]) + 0.2, 1.2)
        ss = sent[sent["time"] <= horizon]
        aa = acked[acked["time"] <= horizon]
        ax.plot(ss["time"], ss["seq"] / 1000, ".", ms=3, color=COLORS[NAMES[alg]], label="data sent")
        ax.plot(aa["time"], aa["seq"] / 1000, "x", ms=3, color="grey", label="ACK received")
        ax.set_title(f"Paced Start Fig. 2({'a' if alg == 'slow-start' else 'b'}): {NAMES[alg]}")
        ax.set_xlabel("time (s)")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("sequence number (packets)")
    fig.tight_layout()
    (sg, si), (pg, pi) = stats["slow-start"], stats["paced-start"]
    claims = [
        judge(
            "PaSt's trains are more stretched out than Sack's",
            "lower slope within PaSt's trains",
            f"mean packet gap in trains 2-3: PaSt {pg * 1e3:.2f} ms, Sack {sg * 1e3:.2f} ms",
            bool(pg > sg),
            "criterion: PaSt's mean gap between the packets of its 2nd and 3rd trains (4 and 8 packets) larger than Sack's",
        ),
        judge(
            "PaSt's trains are more widely spaced than Sack's",
            "longer pauses between PaSt's trains",
            f"mean pause between the first four trains: PaSt {pi * 1e3:.1f} ms, Sack {si * 1e3:.1f} ms",
            bool(pi > si),
            "criterion: PaSt's mean idle time between consecutive trains (first four) longer than Sack's",
        ),
    ]
    return Analysis(claims, {"fig2": fig}, {"trains": pd.DataFrame(rows)})


# ----------------------------------------------------------------------------------------------
# Fig. 5, Table 2, Fig. 6 (the model)


@experiment(
    name="paced-start-fig5",
    paper=PAPER,
    item="Fig. 5",
    title="The decision tree of PaSt's probe gaps (ideal PTR model)",
    claims=["the binary search reaches its exit gap within 3-4 trains (the packet pair included)"],
    assumptions=["the paper's ideal model g_d = g_B + (1 − α) g_s (startlab.models.paced_start), ε = 0"],
)
def fig5(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from ...models import paced_start as m

    alphas = np.round(np.arange(0.01, 1.0001, 0.01), 4)
    rows = []
    for a in alphas:
        case, g, probes = m.walk(a)
        rows.append({"alpha": a, "case": case, "trains": 1 + len(probes), "probes": ", ".join(f"{x:.3g}" for x in probes), "g_past": g})
    table = pd.DataFrame(rows)
    counts = table.groupby("trains").size().to_dict()
    ok = set(counts) <= {3, 4}
    claims = [
        judge(
            "the binary search reaches its exit gap within 3-4 trains (the packet pair included)",
            "3 or 4 trains",
            f"trains per α in 0.01-1.00: {counts}",
            ok,
            "criterion: every α on a 0.01 grid exits after 3 or 4 trains in the model's tree (packet pair + probes)",
        )
    ]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    reps = {1: 0.9, 2: 0.6, 3: 0.3, 4: 0.12, 5: 0.05}
    for case, a in reps.items():
        _, g, probes = m.walk(a)
        xs = [1] + list(range(2, 2 + len(probes))) + [2 + len(probes)]
        ys = [1.0] + probes + [g]
        ax.plot(xs, ys, "o-", label=f"case {case} (α = {a}): exit g = {g:.3g} g_B")
    ax.set_yscale("log")
    ax.set_xlabel("train (1 = packet pair; last point: the exit gap)")
    ax.set_ylabel("source gap g_s / g_B")
    ax.set_title("Paced Start Fig. 5: probe gaps along the decision tree")
    ax.legend(fontsize=8)
    fig.tight_layout()
    summary = table.groupby("case").agg(alpha_min=("alpha", "min"), alpha_max=("alpha", "max"), trains=("trains", "max")).reset_index()
    return Analysis(claims, {"fig5": fig}, {"exit case per α (0.01 grid)": summary})


def _model_ranges(epsilon: float) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    from ...models import paced_start as m

    alphas = np.linspace(0.005, 1.0, 2000)
    cases = m.exit_case(alphas, epsilon)
    ratio = m.overshoot(alphas, epsilon)
    rows = []
    for c in range(1, 6):
        sel = cases == c
        if sel.any():
            rows.append({"case": c, "alpha_from": alphas[sel].min(), "alpha_to": alphas[sel].max(), "ratio_min": ratio[sel].min(), "ratio_max": ratio[sel].max(),
                         "paper_alpha": str(m.TABLE2[c][0]), "paper_ratio": str(m.TABLE2[c][1])})  # fmt: skip
    return pd.DataFrame(rows)


@experiment(
    name="paced-start-table2",
    paper=PAPER,
    item="Table 2",
    title="PaSt's exit cases: α ranges, exit gaps and overshoot (1/α)/g_PaSt; model and simulation with CBR",
    sweeps={"main": "paced-start-table2.toml"},
    claims=[
        "the five exit cases cover the α ranges and overshoot ranges of Table 2",
        "in the model the exit rate is within a factor 2 of the available rate for α > 0.08",
        "in simulation with CBR, the exit rate is within a factor 2 of the available rate for α > 0.08 (the paper's strict test g_s < g_d, ε = 0)",
        "the same with startlab's default tolerance ε = 0.05",
    ],
    assumptions=COMMON
    + [
        "simulation: one PaSt flow on 100 Mb/s, 80 ms, 1000-packet queue; α = 1 − CBR/100 Mb/s",
        "exit rate = packet size on the wire / past_gap; available = bottleneck rate − CBR",
    ],
)
def table2(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np

    from ...models import paced_start as m

    model0 = _model_ranges(0.0)
    # Criterion 1: each case's α range and overshoot range in the model match the printed ones
    # within 0.01 in α and 0.05 in ratio (the paper rounds to two digits; case 5's upper bound is ∞).
    bad = []
    for _, r in model0.iterrows():
        (alo, ahi), (rlo, rhi) = m.TABLE2[int(r["case"])]
        if abs(r["alpha_from"] - alo) > 0.01 + 0.005 or abs(r["alpha_to"] - ahi) > 0.01:
            bad.append(f"case {int(r['case'])} α")
        if r["ratio_min"] < rlo - 0.05 or (np.isfinite(rhi) and r["ratio_max"] > rhi + 0.05):
            bad.append(f"case {int(r['case'])} ratio")
    shown = "; ".join(f"case {int(r.case)}: α {r.alpha_from:.3f}-{r.alpha_to:.3f}, ratio {r.ratio_min:.3f}-{r.ratio_max:.3f}" for r in model0.itertuples())
    claims = [
        judge(
            "the five exit cases cover the α ranges and overshoot ranges of Table 2",
            "cases 1-5: α (0.75,1), (0.5,0.75), (0.19,0.5), (0.08,0.19), (0,0.08); ratio (0.9,1.2), (1.0,1.2), (1.0,2.0), (1.0,2.0), (0.5,∞)",
            shown,
            not bad,
            "criterion: model (ε = 0, α grid of 2000 points) α ranges within 0.01 and ratio ranges within 0.05 of the printed ones" + (f"; off: {', '.join(bad)}" if bad else ""),
        )
    ]
    alphas = np.linspace(0.0805, 1.0, 2000)
    r0 = m.overshoot(alphas)
    claims.append(
        judge(
            "in the model the exit rate is within a factor 2 of the available rate for α > 0.08",
            "ratio in [0.5, 2] for α > 0.08",
            f"ratio {r0.min():.3f}-{r0.max():.3f} over α in (0.08, 1]",
            bool(r0.min() >= 0.5 and r0.max() <= 2.0),
            "criterion: (1/α)/g_PaSt of the ε = 0 model in [0.5, 2] on a grid of α in (0.0805, 1]",
        )
    )
    flows = data.flows("main")
    flows = flows.assign(alpha=flows["available_rate"] / 100e6, exit_rate=(1040 * 8) / flows["past_gap"])
    flows["ratio"] = flows["exit_rate"] / flows["available_rate"]
    sim_claims = (
        (0.0, "in simulation with CBR, the exit rate is within a factor 2 of the available rate for α > 0.08 (the paper's strict test g_s < g_d, ε = 0)"),
        (0.05, "the same with startlab's default tolerance ε = 0.05"),
    )
    for eps, text in sim_claims:
        f = flows[(np.isclose(flows["epsilon"], eps)) & (flows["alpha"] > 0.08)]
        found = f[f["past_exit"] == "rate-found"]
        worst = found.loc[(found["ratio"] - 1).abs().idxmax()] if len(found) else None
        holds = bool(len(found) == len(f) and len(f) and found["ratio"].between(0.5, 2.0).all())
        claims.append(
            judge(
                text,
                "exit rate / available in [0.5, 2] for α > 0.08",
                (f"{len(found)}/{len(f)} runs found a rate; ratio {found['ratio'].min():.2f}-{found['ratio'].max():.2f}, worst at α = {worst['alpha']:.2f} (case {int(worst['past_case'])})" if worst is not None else "no run found a rate"),
                holds,
                f"criterion: every simulated α > 0.08 exits with a found rate whose ratio is in [0.5, 2] (ε = {eps})"
                + (". With ε = 0 a train slower than the available rate still arrives a little spread when a CBR packet slips in between its packets; "
                   "that counts as queueing and sends the walk one case down (slower exits, e.g. case 5 instead of 4): ratios below 1, and below 0.5 at some α"
                   if eps == 0.0 and holds is False else "")
                + (". With ε = 0.05 the tree's boundaries move to α = 0.024, 0.133, 0.45, 0.70 (models.paced_start.boundaries), so α in (0.133, 0.191) exits in case 3 at G(g_B) = (3 − 2α) g_B, ratio up to 2.6 in the model too: the overshoot past 2 comes from the lab's tolerance, not from the paper's tree" if eps == 0.05 else ""),
            )
        )
    fig, ax = plt.subplots(figsize=(6.4, 4))
    grid = np.linspace(0.03, 1.0, 1000)
    ax.plot(grid, m.overshoot(grid), color="k", lw=1, label="model, ε = 0")
    ax.plot(grid, m.overshoot(grid, 0.05), color="grey", lw=1, ls="--", label="model, ε = 0.05")
    for eps, mk, col in ((0.0, "o", "#0072B2"), (0.05, "s", "#D55E00")):
        f = flows[np.isclose(flows["epsilon"], eps)]
        ax.plot(f["alpha"], f["ratio"], mk, color=col, label=f"simulation, ε = {eps}", mfc="none")
    ax.axhline(2, color="#009E73", lw=0.8, ls=":")
    ax.axhline(0.5, color="#009E73", lw=0.8, ls=":")
    ax.axvline(0.08, color="#009E73", lw=0.8, ls=":")
    ax.set_ylim(0, 4)
    ax.set_xlabel("α (available / capacity)")
    ax.set_ylabel("exit rate / available rate = (1/α)/g_PaSt")
    ax.set_title("Paced Start Table 2: overshoot at PaSt's exit")
    ax.legend(fontsize=8)
    fig.tight_layout()
    sim = flows[["epsilon", "cbw", "alpha", "past_exit", "past_case", "past_gap", "ratio"]].sort_values(["epsilon", "alpha"])
    return Analysis(claims, {"table2": fig}, {"model, ε = 0": model0, "model, ε = 0.05": _model_ranges(0.05), "simulation": sim})


@experiment(
    name="paced-start-fig6",
    paper=PAPER,
    item="Fig. 6",
    title="The ideal gap 1/α against PaSt's exit gap for a 100 Mb/s path (model)",
    claims=[
        "PaSt's exit gap is within a factor 2 of the ideal gap 1/α for α > 0.08",
        "below α ≈ 0.08 (case 5) the exit gap can be far from the ideal one",
    ],
    assumptions=["100 Mb/s, 1000-B packets: g_B = 80 µs", "the ideal PTR model, ε = 0 (startlab.models.paced_start)"],
)
def fig6(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from ...models import paced_start as m

    g_b = 1000 * 8 / 100e6
    alphas = np.linspace(0.01, 1.0, 991)
    g = m.exit_gap(alphas) * g_b
    ideal = g_b / alphas
    ratio = ideal / g
    hi = alphas > 0.0804
    lo = alphas < 0.0803
    claims = [
        judge(
            "PaSt's exit gap is within a factor 2 of the ideal gap 1/α for α > 0.08",
            "within a factor 2",
            f"ideal/exit gap {ratio[hi].min():.3f}-{ratio[hi].max():.3f} for α in (0.08, 1]",
            bool(ratio[hi].min() >= 0.5 and ratio[hi].max() <= 2.0),
            "criterion: ideal gap / exit gap in [0.5, 2] on a 0.001 grid of α above 0.0804",
        ),
        judge(
            "below α ≈ 0.08 (case 5) the exit gap can be far from the ideal one",
            "ratio in (0.5, ∞)",
            f"ideal/exit gap {ratio[lo].min():.3f}-{ratio[lo].max():.3f} for α in [0.01, 0.08)",
            bool(ratio[lo].max() > 2.0 and ratio[lo].min() >= 0.5 - 1e-9),
            "criterion: on α in [0.01, 0.08) the ratio stays at or above 0.5 and exceeds 2 somewhere",
        ),
    ]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(alphas, ideal * 1e6, color="k", label="ideal gap g_B/α")
    ax.plot(alphas, g * 1e6, color="#0072B2", label="PaSt exit gap g_PaSt")
    ax.fill_between(alphas, ideal * 1e6 / 2, ideal * 1e6 * 2, color="grey", alpha=0.15, label="factor 2 around ideal")
    ax.set_yscale("log")
    ax.set_xlabel("α")
    ax.set_ylabel("gap (µs), 100 Mb/s, 1000-B packets")
    ax.set_title("Paced Start Fig. 6: PaSt gap against the ideal gap")
    ax.legend(fontsize=8)
    fig.tight_layout()
    pick = np.isin(np.round(alphas, 3), [0.02, 0.05, 0.08, 0.1, 0.15, 0.19, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0])
    table = pd.DataFrame({"alpha": alphas[pick], "ideal_us": ideal[pick] * 1e6, "g_past_us": g[pick] * 1e6, "ratio": ratio[pick]})
    return Analysis(claims, {"fig6": fig}, {"gaps": table})


# ----------------------------------------------------------------------------------------------
# Fig. 8 and Fig. 9 (single flow against CBR)


@experiment(
    name="paced-start-fig8",
    paper=PAPER,
    item="Fig. 8",
    title="Sack and PaSt against the CBR load: su-throughput, throughput (50 s), su-loss, su-time; 100 Mb/s, 80 ms, 1000-packet queue",
    sweeps={"main": "paced-start-fig8.toml", "startup": "paced-start-fig8-startup.toml"},
    claims=[
        "PaSt has a lower su-throughput than Sack",
        "PaSt rarely loses packets in startup (su-loss about 0)",
        "PaSt's su-time is short and insensitive to the CBR load",
        "over 50 s Sack and PaSt have about the same throughput",
        "Sack's su-time is high and decreases as the CBR load grows",
    ],
    assumptions=COMMON + ["3 runs per point, the flow's start jittered by up to 20 ms; points are means of the runs", "the sent-bytes reading of su-throughput comes from 12-s runs with sequence traces"],
)
def fig8(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    flows = data.flows("main")
    agg = flows.groupby(["algorithm", "cbw"]).agg(
        su_throughput=("su_throughput", "mean"), throughput=("throughput", "mean"), su_loss=("su_loss", "mean"),
        su_time=("su_time", "mean"), timeouts=("timeouts", "mean"), first_loss=("startup_exit_time", "mean"), runs=("seed", "count"),
    ).reset_index()  # fmt: skip
    sack = agg[agg["algorithm"] == "slow-start"].set_index("cbw")
    past = agg[agg["algorithm"] == "paced-start"].set_index("cbw")
    cbw = sorted(set(sack.index) & set(past.index))
    sf = data.flows("startup")
    seq = _trace_with_key(data, "startup", "seq")
    sent = _sent_in_startup(seq, sf, ["algorithm", "cbw"]) if len(seq) else pd.DataFrame()
    claims = []
    lower = all(past.loc[c, "su_throughput"] < sack.loc[c, "su_throughput"] for c in cbw)
    ratio = np.median([past.loc[c, "su_throughput"] / sack.loc[c, "su_throughput"] for c in cbw])
    sent_note = ""
    if len(sent):
        sp = sent.pivot_table(index="cbw", columns="algorithm", values="su_throughput_sent")
        sent_ratio = float(np.median(sp["paced-start"] / sp["slow-start"]))
        sent_note = (f"; read as bytes SENT in startup / su-time (12-s traced runs): PaSt {sp['paced-start'].median() / 1e6:.1f} Mb/s, Sack {sp['slow-start'].median() / 1e6:.1f} Mb/s, median ratio {sent_ratio:.2f} "
                     "(Table 4's ratio is 6.77/21.63 = 0.31: the paper's numbers fit bytes sent, not ALGORITHMS.md §19's bytes ACKed at t_su, which leaves out PaSt's FILL train)")  # fmt: skip
    claims.append(
        judge(
            "PaSt has a lower su-throughput than Sack",
            "PaSt below Sack at every cbw",
            f"§19 su-throughput (ACKed at t_su): PaSt {past['su_throughput'].median() / 1e6:.2f} Mb/s, Sack {sack['su_throughput'].median() / 1e6:.1f} Mb/s (medians over cbw), ratio {ratio:.3f}",
            lower,
            "criterion: PaSt's mean su-throughput below Sack's at every cbw" + sent_note,
        )
    )
    claims.append(
        judge(
            "PaSt rarely loses packets in startup (su-loss about 0)",
            "su-loss ≈ 0",
            f"PaSt su-loss max {past['su_loss'].max():.4f}; Sack {sack['su_loss'].min():.3f}-{sack['su_loss'].max():.3f}",
            bool(past["su_loss"].max() <= 0.001),
            "criterion: PaSt's mean su-loss at most 0.1 % at every cbw",
        )
    )
    pt = past.loc[cbw, "su_time"]
    short = all(past.loc[c, "su_time"] < sack.loc[c, "su_time"] for c in cbw)
    claims.append(
        judge(
            "PaSt's su-time is short and insensitive to the CBR load",
            "short, flat in cbw",
            f"PaSt {pt.min():.2f}-{pt.max():.2f} s; Sack {sack['su_time'].min():.2f}-{sack['su_time'].max():.2f} s",
            bool(short and pt.max() <= 2 * pt.min()),
            "criterion: PaSt's su-time below Sack's at every cbw and its largest at most twice its smallest",
        )
    )
    rel = pd.Series({c: abs(past.loc[c, "throughput"] / sack.loc[c, "throughput"] - 1) for c in cbw})
    within = float((rel <= 0.10).mean())
    claims.append(
        judge(
            "over 50 s Sack and PaSt have about the same throughput",
            "very similar (a Sack dip at 45 Mb/s from timeouts)",
            f"|PaSt/Sack − 1| ≤ 10 % at {within:.0%} of the cbw points (largest {rel.max():.1%} at {rel.idxmax():g} Mb/s)",
            bool(within >= 0.8),
            "criterion: the mean 50-s throughputs within 10 % of each other at ≥ 80 % of the cbw points" + ("" if not data.quick else " (quick: 12-s runs)"),
        )
    )
    st = sack.loc[cbw, "su_time"]
    rho = float(pd.Series(st.to_numpy()).corr(pd.Series(np.asarray(cbw, dtype=float)), method="spearman")) if len(cbw) > 2 else float("nan")
    decreasing = bool(rho <= -0.5)
    fl = sack.loc[cbw, "first_loss"]
    rho_fl = float(pd.Series(fl.to_numpy()).corr(pd.Series(np.asarray(cbw, dtype=float)), method="spearman")) if len(cbw) > 2 else float("nan")
    claims.append(
        judge(
            "Sack's su-time is high and decreases as the CBR load grows",
            "high, decreasing in cbw",
            f"Sack su-time {', '.join(f'{c:g}: {st[c]:.1f} s' for c in cbw)} (Spearman ρ = {rho:.2f}); timeouts per run {', '.join(f'{x:.1f}' for x in sack.loc[cbw, 'timeouts'])}",
            decreasing and short,
            "criterion: Sack's mean su-time above PaSt's at every cbw and falling with cbw (Spearman ρ ≤ −0.5). "
            "Sack's startup ends after recovery: with one fast recovery and no timeout (cbw = 0) it takes about 1.5 s; at cbw ≥ 10 Mb/s "
            "retransmissions sent into the still-full queue are lost again and end in 1-3 RTOs, each followed by a slow start that is still "
            "startup (§19). The number of RTOs, not the time to the first loss, sets su-time, so it does not fall with cbw; "
            f"the time to the first loss itself does fall ({fl.iloc[0]:.2f} s at {cbw[0]:g} to {fl.iloc[-1]:.2f} s at {cbw[-1]:g} Mb/s, ρ = {rho_fl:.2f}), the paper's explanation. "
            "ns-2-era timers (no 1-s floor: rto_min 20 ms, 10-ms clock) give 3.0-3.7 s at every cbw ≥ 20 Mb/s (a separate run, see docs/reproduction/paced-start.md): flatter, still not falling. The paper's ns-2 "
            "Sack agent (its RTO, burst and recovery details) is not given, so which of them avoids the repeated loss cannot be checked",
            shape=False,
        )
    )
    fig, axes = plt.subplots(4, 1, figsize=(6.4, 10), sharex=True)
    for alg, part in agg.groupby("algorithm"):
        name = NAMES[alg]
        axes[0].plot(part["cbw"], part["su_throughput"] / 1e6, "o-", color=COLORS[name], label=f"{name} su-throughput (ACKed)")
        axes[0].plot(part["cbw"], part["throughput"] / 1e6, "s--", color=COLORS[name], label=f"{name} throughput (50 s)")
        axes[1].plot(part["cbw"], part["su_loss"], "o-", color=COLORS[name], label=name)
        axes[2].plot(part["cbw"], part["su_time"], "o-", color=COLORS[name], label=name)
        if len(sent):
            sp_ = sent[sent["algorithm"] == alg].sort_values("cbw")
            axes[3].plot(sp_["cbw"], sp_["su_throughput_sent"] / 1e6, "o-", color=COLORS[name], label=f"{name}: bytes sent in startup / su-time")
            axes[3].plot(sp_["cbw"], sp_["su_throughput"] / 1e6, "x:", color=COLORS[name], label=f"{name}: §19 (ACKed at t_su)")
    axes[0].set_ylabel("Mb/s")
    axes[0].set_title("Paced Start Fig. 8: impact of the competing traffic load")
    axes[1].set_ylabel("su-loss")
    axes[2].set_ylabel("su-time (s)")
    axes[3].set_ylabel("su-throughput (Mb/s)")
    axes[3].set_xlabel("competing CBR load cbw (Mb/s)")
    for a in axes:
        a.legend(fontsize=7)
    fig.tight_layout()
    tables = {"means per point": agg}
    if len(sent):
        tables["su-throughput, two readings (traced runs)"] = sent.drop(columns=["key"])
    return Analysis(claims, {"fig8": fig}, tables)


@experiment(
    name="paced-start-fig9",
    paper=PAPER,
    item="Fig. 9",
    title="PaSt against NewReno (Hoe's packet-pair ssthresh) and Vegas against the CBR load; default path",
    sweeps={"main": "paced-start-fig9.toml"},
    claims=[
        "NewReno (Hoe) loses no packets in startup below 60 Mb/s of CBR and loses packets above",
        "Vegas and PaSt lose no packets in startup",
        "Vegas has the longest su-time",
    ],
    assumptions=COMMON + ["NewReno recovery for Hoe's startup, SACK for Vegas and PaSt", "Vegas gamma = 1, growth every other RTT (startlab defaults)", "20-s runs, one per point"],
)
def fig9(data: Data) -> Analysis:
    import matplotlib.pyplot as plt

    flows = data.flows("main")
    t = flows.pivot_table(index="cbw", columns="algorithm", values=["su_loss", "su_time", "su_throughput"])
    hoe = t["su_loss"]["hoe"]
    low, high = hoe[hoe.index < 60], hoe[hoe.index > 60]
    claims = [
        judge(
            "NewReno (Hoe) loses no packets in startup below 60 Mb/s of CBR and loses packets above",
            "0 below 60 Mb/s, significant above",
            "Hoe su-loss " + ", ".join(f"{c:g}: {v:.3f}" for c, v in hoe.items()),
            bool((low == 0).all() and (high > 0).all()) if len(high) else None,
            "criterion: su-loss 0 at every cbw < 60 Mb/s and > 0 at every cbw > 60 Mb/s (same-shape when it is 0 below 60 Mb/s and > 0 at the highest load only)"
            + ("; startlab's Hoe estimate (capacity × RTT ≈ 960 packets) first overflows a 1000-packet queue in startup between 70 and 80 Mb/s; losses at 60-70 Mb/s come after startup (whole-run drops)" if len(high) else "; no point above 60 Mb/s in this run set"),
            shape=bool(len(high) and (low == 0).all() and hoe.iloc[-1] > 0),
        ),
    ]
    zero = {a: float(t["su_loss"][a].max()) for a in ("vegas", "paced-start")}
    claims.append(
        judge(
            "Vegas and PaSt lose no packets in startup",
            "0 su-loss",
            f"largest su-loss: Vegas {zero['vegas']:.4f}, PaSt {zero['paced-start']:.4f}",
            all(v == 0 for v in zero.values()),
            "criterion: su-loss exactly 0 at every cbw for both",
        )
    )
    st = t["su_time"]
    longest = bool((st["vegas"] > st[["hoe", "paced-start"]].max(axis=1)).all())
    claims.append(
        judge(
            "Vegas has the longest su-time",
            "Vegas > NewReno, PaSt",
            f"median su-time: Vegas {st['vegas'].median():.2f} s, NewReno (Hoe) {st['hoe'].median():.2f} s, PaSt {st['paced-start'].median():.2f} s",
            longest,
            "criterion: Vegas's su-time above both others' at every cbw",
        )
    )
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 8), sharex=True)
    for alg in ("hoe", "vegas", "paced-start"):
        name = NAMES[alg]
        axes[0].plot(t.index, t["su_throughput"][alg] / 1e6, "o-", color=COLORS[name], label=name)
        axes[1].plot(t.index, t["su_loss"][alg], "o-", color=COLORS[name], label=name)
        axes[2].plot(t.index, t["su_time"][alg], "o-", color=COLORS[name], label=name)
    axes[0].set_ylabel("su-throughput (Mb/s)")
    axes[0].set_title("Paced Start Fig. 9: PaSt, NewReno (Hoe) and Vegas")
    axes[1].set_ylabel("su-loss")
    axes[2].set_ylabel("su-time (s)")
    axes[2].set_xlabel("competing CBR load cbw (Mb/s)")
    for a in axes:
        a.legend(fontsize=8)
    fig.tight_layout()
    table = flows[["algorithm", "cbw", "su_time", "su_loss", "su_throughput", "drops", "timeouts", "exit_reason"]].sort_values(["algorithm", "cbw"])
    return Analysis(claims, {"fig9": fig}, {"per run": table})


# ----------------------------------------------------------------------------------------------
# Figs. 11-14 and 16 (flow populations)

POP = COMMON + ["3 runs per case with different seeds, pooled (the paper shows one run)"]


def _median(groups: dict[str, pd.DataFrame], label: str) -> float:
    g = groups.get(label)
    return float(g["throughput"].median()) if g is not None else float("nan")


@experiment(
    name="paced-start-fig11",
    paper=PAPER,
    item="Fig. 11",
    title="Throughput CDFs of short flows (mean 50 packets, 20 flows/s) on a 20 Mb/s, 20 ms dumbbell: Sack only, PaSt only, mixed",
    sweeps={"main": "paced-start-fig11.toml"},
    claims=[
        "PaSt flows get somewhat higher throughput than Sack flows",
        "mixed and only curves are alike (Sack (mixed) ≈ Sack (only), PaSt (mixed) ≈ PaSt (only))",
        "there is almost no packet loss",
        "about 7 flows are active at any time",
    ],
    assumptions=POP,
    reduced=None,
)
def fig11(data: Data) -> Analysis:
    groups = _groups(data.flows("main"))
    table = _population_table(groups)
    med = {k: _median(groups, k) for k in groups}
    claims = [
        judge(
            "PaSt flows get somewhat higher throughput than Sack flows",
            "PaSt's CDF right of Sack's",
            ", ".join(f"{k} {_mbps(v)}" for k, v in med.items()) + " (medians)",
            bool(med["PaSt (only)"] > med["Sack (only)"] and med["PaSt (mixed)"] > med["Sack (mixed)"]),
            "criterion: PaSt's median throughput above Sack's, both in the only and in the mixed runs",
        )
    ]
    d_s = med["Sack (mixed)"] / med["Sack (only)"] - 1
    d_p = med["PaSt (mixed)"] / med["PaSt (only)"] - 1
    claims.append(
        judge(
            "mixed and only curves are alike (Sack (mixed) ≈ Sack (only), PaSt (mixed) ≈ PaSt (only))",
            "similar; PaSt (mixed) slightly ahead",
            f"Sack mixed/only {d_s:+.1%}, PaSt mixed/only {d_p:+.1%} (medians)",
            bool(abs(d_s) <= 0.10 and abs(d_p) <= 0.10),
            "criterion: each scheme's mixed median within 10 % of its only median",
        )
    )
    worst = float(table["total_loss"].max())
    claims.append(judge("there is almost no packet loss", "almost none", f"largest total loss {worst:.4f} ({table.loc[table['total_loss'].idxmax(), 'curve']})", bool(worst < 0.01), "criterion: total loss (drops/sent) below 1 % for every curve"))
    f = data.flows("main")
    act = {case: _active_flows(f[f["case"] == case]) for case in CASES}
    claims.append(
        judge(
            "about 7 flows are active at any time",
            "≈ 7",
            ", ".join(f"{k} {v:.1f}" for k, v in act.items()),
            bool(all(4.9 <= v <= 9.1 for v in act.values())),
            "criterion: mean number of measured flows open (Σ (completion − arrival) / arrival span) within 30 % of 7 in every case",
        )
    )
    fig = _population_figure(groups, "Paced Start Fig. 11: mean flow size 50 packets", loss_panels=False)
    return Analysis(claims, {"fig11": fig}, {"per curve": table})


@experiment(
    name="paced-start-fig12",
    paper=PAPER,
    item="Fig. 12",
    title="Dumbbell with mean 200-packet flows at 10 flows/s: throughput CDF, loss of the lossy flows, loss in startup and total loss",
    sweeps={"main": "paced-start-fig12.toml"},
    claims=[
        "PaSt (only) gets higher throughput than Sack (only)",
        "fewer PaSt flows than Sack flows lose packets",
        "PaSt's loss in startup is much lower than Sack's",
        "PaSt flows help Sack flows and Sack flows hurt PaSt flows in the mixed runs",
    ],
    assumptions=POP,
)
def fig12(data: Data) -> Analysis:
    groups = _groups(data.flows("main"))
    return _analyse_fig12_like(groups, "Paced Start Fig. 12: mean flow size 200 packets", "fig12", mixed_claims=True)


def _analyse_fig12_like(groups: dict[str, pd.DataFrame], title: str, fig_name: str, mixed_claims: bool) -> Analysis:
    table = _population_table(groups).set_index("curve")
    med = {k: _median(groups, k) for k in groups}
    claims = [
        judge(
            "PaSt (only) gets higher throughput than Sack (only)",
            "PaSt (only) systematically above Sack (only)",
            ", ".join(f"{k} {_mbps(v)}" for k, v in med.items()) + " (medians)",
            bool(med["PaSt (only)"] > med["Sack (only)"]),
            "criterion: PaSt (only)'s median throughput above Sack (only)'s"
            + (_mixed_note(groups, med) if "PaSt (mixed)" in med else ""),
        )
    ]
    lossy = table["lossy_fraction"]
    fewer = bool(lossy["PaSt (only)"] < lossy["Sack (only)"] and lossy.get("PaSt (mixed)", 0) < lossy.get("Sack (mixed)", 1))
    claims.append(
        judge(
            "fewer PaSt flows than Sack flows lose packets",
            "significantly fewer lossy PaSt flows",
            ", ".join(f"{k} {v:.1%}" for k, v in lossy.items()) + " of flows lossy",
            fewer,
            "criterion: the fraction of PaSt flows with a drop below Sack's, in the only and in the mixed runs",
        )
    )
    ls = table["loss_in_startup"]
    claims.append(
        judge(
            "PaSt's loss in startup is much lower than Sack's",
            "much lower, especially in startup",
            ", ".join(f"{k} {v:.4f}" for k, v in ls.items()) + " (loss in startup); total " + ", ".join(f"{k} {v:.4f}" for k, v in table["total_loss"].items()),
            bool(ls["PaSt (only)"] <= 0.5 * ls["Sack (only)"]),
            "criterion: PaSt (only)'s loss in startup at most half of Sack (only)'s",
        )
    )
    if mixed_claims:
        helps = med["Sack (mixed)"] > med["Sack (only)"]
        hurts = med["PaSt (mixed)"] < med["PaSt (only)"]
        claims.append(
            judge(
                "PaSt flows help Sack flows and Sack flows hurt PaSt flows in the mixed runs",
                "Sack (mixed) > Sack (only); PaSt (mixed) < PaSt (only)",
                f"Sack mixed/only {med['Sack (mixed)'] / med['Sack (only)'] - 1:+.1%}, PaSt mixed/only {med['PaSt (mixed)'] / med['PaSt (only)'] - 1:+.1%} (medians); "
                f"PaSt total loss mixed {table.loc['PaSt (mixed)', 'total_loss']:.4f} vs only {table.loc['PaSt (only)', 'total_loss']:.4f}",
                bool(helps and hurts),
                "criterion: Sack's median higher in the mixed runs than alone, and PaSt's lower",
            )
        )
    fig = _population_figure(groups, title, loss_panels=True)
    return Analysis(claims, {fig_name: fig}, {"per curve": table.reset_index()})


def _mixed_note(groups: dict[str, pd.DataFrame], med: dict[str, float]) -> str:
    """Why PaSt's median in the mixed runs is where it is: exits by timeout and the rate-found flows."""
    pm, po = groups["PaSt (mixed)"], groups["PaSt (only)"]
    note = f"; in the mixed runs PaSt's median is {'above' if med['PaSt (mixed)'] > med['Sack (mixed)'] else 'below'} Sack's ({_mbps(med['PaSt (mixed)'])} vs {_mbps(med['Sack (mixed)'])})"
    if med["PaSt (mixed)"] <= med["Sack (mixed)"] and "past_exit" in pm:
        tm, to = float((pm["past_exit"] == "timeout").mean()), float((po["past_exit"] == "timeout").mean())
        rf = pm.loc[pm["past_exit"] == "rate-found", "throughput"].median()
        note += (f": {tm:.1%} of the mixed PaSt flows leave startup by a timeout (PaSt only: {to:.1%}) - a packet of a 2-8-packet probe train lost "
                 f"in a queue Sack flows keep full brings no duplicate ACKs, so it waits for the RTO; the mixed PaSt flows that found a rate have a median of {_mbps(rf)}")
    return note


@experiment(
    name="paced-start-fig13",
    paper=PAPER,
    item="Fig. 13",
    title="Fig. 12's dumbbell with an initial ssthresh of 20 packets (ns-2's default)",
    sweeps={"main": "paced-start-fig13.toml"},
    claims=["Sack's throughput levels off around 4 Mb/s", "PaSt, which ignores the initial ssthresh, gets higher throughput than Sack"],
    assumptions=[c for c in POP if "20000" not in c] + ["initial ssthresh 20 packets for every flow (PaSt ignores it until it exits)"],
)
def fig13(data: Data) -> Analysis:
    groups = _groups(data.flows("main"))
    table = _population_table(groups)
    s = groups["Sack (only)"]["throughput"]
    p95 = float(s.quantile(0.95))
    claims = [
        judge(
            "Sack's throughput levels off around 4 Mb/s",
            "≈ 4 Mb/s (20 packets per 40 ms)",
            f"Sack (only): median {_mbps(s.median())}, 95th percentile {_mbps(p95)}, max {_mbps(s.max())}",
            bool(3e6 <= p95 <= 5e6),
            "criterion: the 95th percentile of Sack (only)'s throughput within 25 % of 4 Mb/s (the level its CDF flattens at)",
        ),
        judge(
            "PaSt, which ignores the initial ssthresh, gets higher throughput than Sack",
            "PaSt above Sack",
            f"medians: PaSt (only) {_mbps(_median(groups, 'PaSt (only)'))}, Sack (only) {_mbps(s.median())}",
            bool(_median(groups, "PaSt (only)") > s.median()),
            "criterion: PaSt (only)'s median throughput above Sack (only)'s",
        ),
    ]
    fig = _population_figure(groups, "Paced Start Fig. 13: initial ssthresh 20 packets", loss_panels=False)
    return Analysis(claims, {"fig13": fig}, {"per curve": table})


@experiment(
    name="paced-start-fig14",
    paper=PAPER,
    item="Fig. 14",
    title="Parking lot (10 × 20 Mb/s, 20 ms, 1000-packet queues), mean 200-packet flows at 10 flows/s",
    sweeps={"main": "paced-start-fig14.toml"},
    claims=[
        "PaSt (only) gets higher throughput than Sack (only)",
        "fewer PaSt flows than Sack flows lose packets",
        "PaSt's loss in startup is much lower than Sack's",
        "about 15 flows are active at any time",
    ],
    assumptions=POP + ["zero-delay access links"],
)
def fig14(data: Data) -> Analysis:
    flows = data.flows("main")
    groups = _groups(flows)
    out = _analyse_fig12_like(groups, "Paced Start Fig. 14: parking lot", "fig14", mixed_claims=False)
    table = out.tables["per curve"]
    # A loss claim with no loss at all cannot tell the schemes apart: say so instead of passing it.
    if float(table["total_loss"].max()) == 0.0:
        for c in out.claims[1:3]:
            c.verdict, c.reason = "contradicts", c.reason + "; no flow lost a packet in any case (1000-packet queues never fill), so the loss difference the paper shows does not appear"
    elif float(table["total_loss"].max()) < 0.001:
        for c in out.claims[1:3]:
            c.reason += f"; loss is negligible in every case (largest total loss {float(table['total_loss'].max()):.5f}): the 1000-packet queues almost never fill"
    act = {case: _active_flows(flows[flows["case"] == case]) for case in CASES}
    out.claims.append(
        judge(
            "about 15 flows are active at any time",
            "≈ 15",
            ", ".join(f"{k} {v:.1f}" for k, v in act.items()),
            bool(all(10.5 <= v <= 19.5 for v in act.values())),
            "criterion: mean number of measured flows open within 30 % of 15 in every case",
        )
    )
    return out


BINS = [(0, 50), (50, 100), (100, 150), (150, 200), (200, float("inf"))]


@experiment(
    name="paced-start-fig16a",
    paper=PAPER,
    item="Fig. 16(a)",
    title="Median and 5-95 % throughput by flow length (the flows of Fig. 11)",
    sweeps={"main": "paced-start-fig11.toml"},
    claims=["below 50 packets PaSt and Sack get about the same throughput", "PaSt gets higher throughput for flows of 100 to 200+ packets"],
    assumptions=POP + ["length bins (0,50], (50,100], (100,150], (150,200], >200 packets"],
)
def fig16a(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    groups = _groups(data.flows("main"))
    rows = []
    for label, g in groups.items():
        pk = g["size"] / g["mss"]
        for lo, hi in BINS:
            part = g.loc[(pk > lo) & (pk <= hi), "throughput"]
            rows.append({"curve": label, "bin": f"{lo}-{hi if np.isfinite(hi) else '+'}", "hi": hi, "flows": len(part),
                         "median": part.median() / 1e6 if len(part) else np.nan, "p5": part.quantile(0.05) / 1e6 if len(part) else np.nan,
                         "p95": part.quantile(0.95) / 1e6 if len(part) else np.nan})  # fmt: skip
    t = pd.DataFrame(rows)
    piv = t.pivot_table(index="bin", columns="curve", values="median", sort=False)
    small = piv.iloc[0]
    d_only = small["PaSt (only)"] / small["Sack (only)"] - 1
    d_mix = small["PaSt (mixed)"] / small["Sack (mixed)"] - 1
    claims = [
        judge(
            "below 50 packets PaSt and Sack get about the same throughput",
            "little difference",
            f"PaSt/Sack − 1 in (0,50]: only {d_only:+.1%}, mixed {d_mix:+.1%} (medians)",
            bool(abs(d_only) <= 0.10 and abs(d_mix) <= 0.10),
            "criterion: medians within 10 % in the (0,50] bin, only and mixed",
        )
    ]
    upper = piv.iloc[1:]
    wins = [(b, sc) for b in upper.index for sc in ("only", "mixed") if upper.loc[b, f"PaSt ({sc})"] > upper.loc[b, f"Sack ({sc})"]]
    total = 2 * len(upper)
    claims.append(
        judge(
            "PaSt gets higher throughput for flows of 100 to 200+ packets",
            "significant PaSt gain in every bin above 50",
            f"PaSt's median above Sack's in {len(wins)}/{total} (bin, case) pairs above 50 packets; "
            + "; ".join(f"{b}: only {upper.loc[b, 'PaSt (only)']:.2f}/{upper.loc[b, 'Sack (only)']:.2f}, mixed {upper.loc[b, 'PaSt (mixed)']:.2f}/{upper.loc[b, 'Sack (mixed)']:.2f} Mb/s" for b in upper.index),
            len(wins) == total,
            "criterion: PaSt's median above Sack's in every bin above 50 packets, only and mixed (same-shape when in most but not all)",
            shape=len(wins) * 2 > total,
        )
    )
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = list(piv.index)
    x = np.arange(len(labels))
    for i, curve in enumerate(["Sack (only)", "PaSt (only)", "Sack (mixed)", "PaSt (mixed)"]):
        part = t[t["curve"] == curve].set_index("bin").loc[labels]
        off = (i - 1.5) * 0.18
        ax.errorbar(x + off, part["median"], yerr=[part["median"] - part["p5"], part["p95"] - part["median"]], fmt="s" if "mixed" in curve else "o",
                    mfc="none" if "mixed" in curve else None, capsize=3, label=curve, color=_style(curve)["color"], linestyle="none")
    ax.set_xticks(x, labels)
    ax.set_xlabel("flow length (packets)")
    ax.set_ylabel("throughput (Mb/s): median, 5-95 %")
    ax.set_title("Paced Start Fig. 16(a): throughput by flow length")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return Analysis(claims, {"fig16a": fig}, {"per bin": t.drop(columns=["hi"])})


@experiment(
    name="paced-start-fig16b",
    paper=PAPER,
    item="Fig. 16(b)",
    title="Throughput of the [25 %, 75 %] length flows against the mean flow size (50-250 packets, 10 flows/s)",
    sweeps={"main": "paced-start-fig16b.toml"},
    claims=["PaSt's throughput gain over Sack is largest for intermediate flows (mean 100-150 packets)", "the gain is smaller for long flows"],
    assumptions=[c for c in POP if "3 runs" not in c] + ["2 runs per point, pooled", "only-runs (Sack only and PaSt only)"],
)
def fig16b(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    f = data.flows("main")
    f = f[f["measured"].astype(bool)]
    rows = []
    for (ms, case), g in f.groupby(["mean_size", "case"]):
        lo, hi = g["size"].quantile([0.25, 0.75])
        mid = g[(g["size"] >= lo) & (g["size"] <= hi)]
        rows.append({"mean_size": ms, "case": case, "flows": len(mid), "median_mbps": mid["throughput"].median() / 1e6, "mean_mbps": mid["throughput"].mean() / 1e6})
    t = pd.DataFrame(rows)
    piv = t.pivot_table(index="mean_size", columns="case", values="median_mbps")
    gain = piv["past-only"] / piv["sack-only"]
    best = float(gain.idxmax())
    claims = [
        judge(
            "PaSt's throughput gain over Sack is largest for intermediate flows (mean 100-150 packets)",
            "largest gain at 100-150 packets",
            "PaSt/Sack median: " + ", ".join(f"{k:g}: {v:.3f}" for k, v in gain.items()),
            bool(100 <= best <= 150),
            "criterion: the mean size with the largest ratio of medians is 100 or 150 packets",
        ),
        judge(
            "the gain is smaller for long flows",
            "smaller gain at 200-250 packets",
            f"gain at {gain.index.max():g} packets {gain.iloc[-1]:.3f} against the largest {gain.max():.3f}",
            bool(gain.iloc[-1] < gain.max()),
            "criterion: the ratio at the largest mean size below the largest ratio",
        ),
    ]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(piv.index, piv["sack-only"], "o-", color=COLORS["Sack"], label="Sack (only)")
    ax.plot(piv.index, piv["past-only"], "s-", color=COLORS["PaSt"], label="PaSt (only)")
    ax.set_xlabel("mean flow size (packets)")
    ax.set_ylabel("median throughput of [25 %, 75 %] flows (Mb/s)")
    ax.set_title("Paced Start Fig. 16(b): throughput against flow size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return Analysis(claims, {"fig16b": fig}, {"per mean size": t})


# ----------------------------------------------------------------------------------------------
# Fig. 15


@experiment(
    name="paced-start-fig15",
    paper=PAPER,
    item="Fig. 15",
    title="Instantaneous throughput (0.1 s moving average) of a Sack and a PaSt flow on the default path (cbw = 40 Mb/s)",
    sweeps={"main": "paced-start-fig15.toml"},
    claims=[
        "period 1 (Sack's exponential increase): Sack is ahead",
        "period 2 (Sack's loss recovery): PaSt is ahead",
        "period 3 (congestion avoidance): the two flows are about equal",
    ],
    assumptions=COMMON + ["the two flows run separately, each alone with the CBR", "rates from the cumulative ACKed bytes of the sequence trace"],
)
def fig15(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import numpy as np

    seq = _trace_with_key(data, "main", "seq")
    flows = data.flows("main").set_index("algorithm")
    step = 0.01
    end = float(seq["time"].max())
    grid = np.arange(0, end, step)
    rate, cum = {}, {}
    for alg in ("slow-start", "paced-start"):
        s = seq[(seq["key"] == flows.loc[alg, "key"]) & (seq["event"] == "acked")].sort_values("time")
        # cumulative ACKed bytes: the acked events carry the new cumulative ACK in seq + len
        top = np.maximum.accumulate((s["seq"] + s["len"]).to_numpy(dtype=float))
        c = np.interp(grid, s["time"].to_numpy(), top, left=0.0)
        cum[alg] = c
        w = int(round(0.1 / step))
        r = np.full_like(c, np.nan)
        r[w:] = (c[w:] - c[:-w]) * 8 / 0.1
        rate[alg] = r
    sack_seq = seq[seq["key"] == flows.loc["slow-start", "key"]]
    drops = sack_seq.loc[sack_seq["event"] == "dropped", "time"]
    t1 = float(drops.min()) if len(drops) else float(flows.loc["slow-start", "startup_exit_time"])
    t2 = float(flows.loc["slow-start", "t_su"])
    i1, i2 = int(t1 / step), int(min(t2, end) / step)
    s_b, p_b = cum["slow-start"], cum["paced-start"]
    p1_s, p1_p = s_b[i1] / t1, p_b[i1] / t1
    p2_s, p2_p = (s_b[i2] - s_b[i1]) / (t2 - t1), (p_b[i2] - p_b[i1]) / (t2 - t1)
    ahead = np.nanmax(rate["slow-start"][: i1 + 1] - rate["paced-start"][: i1 + 1]) if i1 > 10 else float("nan")
    claims = [
        judge(
            "period 1 (Sack's exponential increase): Sack is ahead",
            "Sack above PaSt up to T1",
            f"T1 = {t1:.2f} s (Sack's first drop); mean rate up to T1: Sack {_mbps(p1_s * 8)}, PaSt {_mbps(p1_p * 8)}; Sack's 0.1-s rate exceeds PaSt's by at most {_mbps(ahead)}",
            bool(p1_s > p1_p),
            "criterion: Sack's bytes ACKed by T1 (its first drop) exceed PaSt's. PaSt's FILL train at its exit rate starts after 3-4 probe rounds (≈ 0.24-0.32 s), "
            "while Sack needs about log2(1600) ≈ 10 rounds to fill the path, so in startlab PaSt leads from its exit on",
        ),
        judge(
            "period 2 (Sack's loss recovery): PaSt is ahead",
            "PaSt above Sack between T1 and T2",
            f"T2 = {t2:.2f} s (Sack's t_su); mean rate in [T1, T2]: Sack {_mbps(p2_s * 8)}, PaSt {_mbps(p2_p * 8)}",
            bool(p2_p > p2_s),
            "criterion: PaSt's mean rate between T1 and T2 above Sack's",
        ),
    ]
    if t2 + 1.0 < end:
        s3 = (s_b[-1] - s_b[i2]) / (grid[-1] - t2)
        p3 = (p_b[-1] - p_b[i2]) / (grid[-1] - t2)
        claims.append(
            judge(
                "period 3 (congestion avoidance): the two flows are about equal",
                "equal after T2",
                f"mean rate after T2: Sack {_mbps(s3 * 8)}, PaSt {_mbps(p3 * 8)}",
                bool(abs(s3 / p3 - 1) <= 0.10),
                "criterion: the mean rates after T2 within 10 % of each other",
            )
        )
    else:
        claims.append(judge("period 3 (congestion avoidance): the two flows are about equal", "equal after T2", f"T2 = {t2:.2f} s, run ends at {end:.1f} s", None, "the run ends before a second after T2 (quick form): nothing to compare"))
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for alg in ("slow-start", "paced-start"):
        ax.plot(grid, rate[alg] / 1e6, color=COLORS[NAMES[alg]], label=NAMES[alg], lw=1)
    ax.set_ylim(0, 120)  # 1.2 × the bottleneck; a cumulative ACK that fills a recovery hole spikes above
    for t, n in ((t1, "T1"), (t2, "T2")):
        ax.axvline(t, color="grey", ls="--", lw=0.8)
        ax.text(t, 112, n, fontsize=8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput, 0.1 s moving average (Mb/s)")
    ax.set_title("Paced Start Fig. 15: instantaneous throughput of Sack and PaSt")
    ax.legend(fontsize=8)
    fig.tight_layout()
    table = data.flows("main")[["algorithm", "t_su", "su_time", "startup_exit_time", "exit_reason", "drops", "timeouts", "throughput"]]
    return Analysis(claims, {"fig15": fig}, {"flows": table})


# ----------------------------------------------------------------------------------------------
# Table 4 and Fig. 17 (the real-system results, approximated)


@experiment(
    name="paced-start-table4",
    paper=PAPER,
    item="Table 4",
    title="Sack and PaSt, 20 transfers of 10000 packets each: min/median/max of five metrics (Internet path approximated by a dumbbell with Poisson cross traffic)",
    sweeps={"main": "paced-start-table4.toml"},
    claims=[
        "PaSt's startup is faster (lower su-time)",
        "PaSt has a lower su-loss",
        "PaSt has a lower su-throughput",
        "the throughputs over the whole transfer are similar",
    ],
    assumptions=COMMON
    + [
        "the CMU-MIT path is approximated by a 100 Mb/s, 23 ms dumbbell with 50 Mb/s of Poisson cross traffic (1000-B packets) and a 300-packet queue",
        "each of the 20 runs per scheme draws its own cross traffic (the paper's runs alternate on a live path)",
    ],
)
def table4(data: Data) -> Analysis:
    import pandas as pd

    flows = data.flows("main")
    seq = _trace_with_key(data, "main", "seq")
    sent = _sent_in_startup(seq, flows, ["algorithm"]) if len(seq) else pd.DataFrame()
    flows = flows.merge(sent[["key", "su_throughput_sent"]], on="key", how="left") if len(sent) else flows
    metrics = {"su_time": ("su-time (s)", 1.0), "su_throughput": ("su-throughput, §19 (Mb/s)", 1e6), "su_throughput_sent": ("su-throughput, sent (Mb/s)", 1e6),
               "su_loss": ("su-loss", 1.0), "throughput": ("throughput (Mb/s)", 1e6), "loss_rate": ("loss", 1.0)}  # fmt: skip
    rows = []
    for col, (name, unit) in metrics.items():
        if col not in flows:
            continue
        row = {"metric": name}
        for alg in ("slow-start", "paced-start"):
            v = flows.loc[flows["algorithm"] == alg, col] / unit
            row.update({f"{NAMES[alg]} min": v.min(), f"{NAMES[alg]} median": v.median(), f"{NAMES[alg]} max": v.max()})
        rows.append(row)
    t = pd.DataFrame(rows).set_index("metric")
    med = lambda m: (t.loc[m, "Sack median"], t.loc[m, "PaSt median"])  # noqa: E731
    s, p = med("su-time (s)")
    claims = [judge("PaSt's startup is faster (lower su-time)", "median 0.161 vs 0.406 s", f"median PaSt {p:.3f} s, Sack {s:.3f} s", bool(p < s), "criterion: PaSt's median su-time below Sack's")]
    s, p = med("su-loss")
    claims.append(judge("PaSt has a lower su-loss", "median 0.0055 vs 0.0575", f"median PaSt {p:.4f}, Sack {s:.4f}", bool(p < s), "criterion: PaSt's median su-loss below Sack's"))
    s, p = med("su-throughput, §19 (Mb/s)")
    extra = ""
    if "su-throughput, sent (Mb/s)" in t.index:
        s2, p2 = med("su-throughput, sent (Mb/s)")
        extra = f"; read as bytes sent in startup: PaSt {p2:.2f}, Sack {s2:.2f} Mb/s (ratio {p2 / s2:.2f}; the paper's 6.77/21.63 = 0.31)"
    claims.append(
        judge(
            "PaSt has a lower su-throughput",
            "median 6.77 vs 21.63 Mb/s",
            f"§19 median PaSt {p:.2f}, Sack {s:.2f} Mb/s (ratio {p / s:.2f}){extra}",
            bool(p < s),
            "criterion: PaSt's median su-throughput (§19: bytes ACKed at t_su) below Sack's",
        )
    )
    s, p = med("throughput (Mb/s)")
    claims.append(judge("the throughputs over the whole transfer are similar", "median 22.07 vs 22.68 Mb/s", f"median PaSt {p:.2f}, Sack {s:.2f} Mb/s", bool(abs(p / s - 1) <= 0.15), "criterion: medians within 15 % of each other"))
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 5, figsize=(13, 3.2))
    for ax, col in zip(axes, ["su_time", "su_throughput_sent" if "su_throughput_sent" in flows else "su_throughput", "su_loss", "throughput", "loss_rate"]):
        name, unit = metrics[col]
        vals = [flows.loc[flows["algorithm"] == a, col] / unit for a in ("slow-start", "paced-start")]
        ax.boxplot(vals, whis=(0, 100))
        ax.set_xticks([1, 2], ["Sack", "PaSt"])
        ax.set_title(name, fontsize=9)
    fig.suptitle("Paced Start Table 4 (dumbbell approximation): min / quartiles / max over the runs")
    fig.tight_layout()
    return Analysis(claims, {"table4": fig}, {"min / median / max": t.reset_index()})


@experiment(
    name="paced-start-fig17",
    paper=PAPER,
    item="Fig. 17",
    title="Web traffic in both directions over 20 Mb/s, 20 ms, 66-packet buffers; the server under test runs Sack or PaSt",
    sweeps={"main": "paced-start-fig17.toml"},
    claims=["PaSt improves the server's web throughput", "PaSt's server loses far fewer packets (94186 vs 1168 drops)"],
    assumptions=[
        "Surge clients as closed-loop [[users]]: 20 per direction, exponential think time of mean 4 s, a new connection per page",
        "page sizes zipf over 1000 ranks of 2 KB (exponent 1; the paper: zipf, minimum 2 KB)",
        "Linux receivers (quick-ACK), MSS 1460 B + 40 B headers, SACK, Linux RTO (200 ms floor), no handshake",
        "one 500-s run per point",
    ],
)
def fig17(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    tr = data.transfers("main")
    srv = tr[(tr["user"] == "server") & tr["completed"].astype(bool)]
    both = srv[srv["reverse_think"] < 100]
    rows = []
    for (alg, rt), g in tr[tr["user"] == "server"].groupby(["algorithm", "reverse_think"]):
        done = g[g["completed"].astype(bool)]
        rows.append({"server": NAMES[alg], "reverse traffic": "on" if rt < 100 else "off", "transfers": len(g), "median_mbps": done["throughput"].median() / 1e6,
                     "drops": int(g["drops"].sum()), "timeouts": int(g["timeouts"].sum()),
                     "rate-found exits": int((g["exit_reason"] == "rate-found").sum()) if alg == "paced-start" else None,
                     "median exit cwnd (pkts)": g["exit_cwnd_pkts"].median()})  # fmt: skip
    t = pd.DataFrame(rows)
    on = t[t["reverse traffic"] == "on"].set_index("server")
    ms, mp = on.loc["Sack", "median_mbps"], on.loc["PaSt", "median_mbps"]
    ds, dp = on.loc["Sack", "drops"], on.loc["PaSt", "drops"]
    off = t[t["reverse traffic"] == "off"].set_index("server")
    off_note = (f"; without the reverse web traffic: drops Sack {off.loc['Sack', 'drops']}, PaSt {off.loc['PaSt', 'drops']}, medians {off.loc['Sack', 'median_mbps']:.2f} / {off.loc['PaSt', 'median_mbps']:.2f} Mb/s" if len(off) == 2 else "")
    why = ("; PaSt measures g_B and g_d from ACK spacing, and ACKs queued behind the reverse direction's data leave the bottleneck one ACK "
           "serialisation apart (16 µs at 20 Mb/s instead of 600 µs per data packet): PaSt then believes the path is idle, exits with "
           "cwnd = RTT/g of hundreds to tens of thousands of packets and sends its FILL train far above the link rate (see the median exit cwnd in the table)")
    claims = [
        judge("PaSt improves the server's web throughput", "PaSt's distribution clearly to the right", f"median transfer throughput PaSt {mp:.2f}, Sack {ms:.2f} Mb/s", bool(mp > ms), "criterion: PaSt's median transfer throughput above Sack's (reverse traffic on)"),
        judge(
            "PaSt's server loses far fewer packets (94186 vs 1168 drops)",
            "80 times fewer drops",
            f"server's packets dropped: Sack {ds}, PaSt {dp}",
            bool(dp <= 0.5 * ds),
            "criterion: PaSt's server drops at most half of Sack's (reverse traffic on)" + (why if dp > 0.5 * ds else "") + off_note,
        ),
    ]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for alg in ("slow-start", "paced-start"):
        g = both[both["algorithm"] == alg]
        _cdf(ax, g["throughput"] / 1e6, f"{NAMES[alg]} server", color=COLORS[NAMES[alg]])
    ax.set_xscale("log")
    ax.set_xlabel("page download throughput (Mb/s)")
    ax.set_ylabel("cumulative fraction of pages")
    ax.set_title("Paced Start Fig. 17: web throughput, Sack vs PaSt server")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return Analysis(claims, {"fig17": fig}, {"server": t})


