"""The SUSS paper's headline result (Arghavani, Zhang, Eyers & Arghavani, "SUSS: Improving TCP
Performance by Speeding Up Slow-Start", ACM SIGCOMM 2024), as an experiment beside the five papers'
checklist, not one of its 51 items (issue 34; docs/REPRODUCTION.md, notes in
docs/reproduction/suss.md).

Every criterion below was written from the paper's claim before looking at startlab's number.
"""

from __future__ import annotations

import json

from ..core import Analysis, Data, experiment, judge

PKT = 1500 * 8  # bits per packet on the wire (MSS 1448 B + 52 B headers)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _paths(data: Data, label: str):
    """Per run key: bottleneck rate (Mbit/s), nominal RTT (ms), buffer in BDPs, from the resolved
    scenario and the bottleneck's link row."""
    links = data.links(label)
    runs = data.runs(label).set_index("key")
    out = {}
    for key, ln in links[links["link"] == "bottleneck:left->right"].set_index("key").iterrows():
        sc = runs.loc[key, "scenario"]
        topo = (json.loads(sc) if isinstance(sc, str) else sc)["topology"]
        rate = float(ln["rate"])
        # the resolved dumbbell gives its pairs' RTTs in ns
        rtt_ms = float(topo["rtts"][0]) / 1e6
        bdp_pkts = rate * rtt_ms / 1e3 / PKT
        out[key] = (rate / 1e6, rtt_ms, float(ln["queue_limit"]) / bdp_pkts, bdp_pkts)
    return out


def _fct_table(data: Data):
    """One row per (path, size): both algorithms' FCT, drops and timeouts, and SUSS's gain."""
    import pandas as pd

    flows = data.flows("fct")
    paths = _paths(data, "fct")
    rows = []
    for _, f in flows.iterrows():
        rate, rtt, buf, bdp = paths[f["key"]]
        rows.append(
            {
                "rate_mbps": rate, "rtt_ms": round(rtt), "buffer_bdp": round(buf, 2), "size_kB": float(f["size"]) / 1e3,
                "size_bdp": float(f["size"]) / 1448 / bdp, "algorithm": f["algorithm"], "fct": f["completion_time"],
                "drops": int(f["drops"]), "timeouts": int(f["timeouts"]), "jumps": f.get("suss_jumps"),
            }
        )  # fmt: skip
    long = pd.DataFrame(rows)
    idx = ["rate_mbps", "rtt_ms", "buffer_bdp", "size_kB", "size_bdp"]
    wide = long.pivot_table(index=idx, columns="algorithm", values=["fct", "drops", "timeouts"], aggfunc="first")
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide.reset_index()
    wide["gain"] = 1 - wide["fct_suss"] / wide["fct_hystart-linux"]
    wide["saved_rtts"] = (wide["fct_hystart-linux"] - wide["fct_suss"]) / (wide["rtt_ms"] / 1e3)
    jumps = long[long["algorithm"] == "suss"].set_index(idx)["jumps"]
    wide["suss_jumps"] = wide.set_index(idx).index.map(jumps).astype(float)
    return wide


def _compete_table(data: Data):
    """One row per competing run: the incumbent's delivery rate and drops from the newcomer's start
    to the end, the newcomer's FCT and drops."""
    import pandas as pd

    flows = data.flows("compete")
    paths = _paths(data, "compete")
    traces = data.sql("compete", "SELECT t.key, t.path FROM traces t JOIN runs r USING (key) WHERE t.kind = 'seq' AND r.status = 'ok'")
    where = dict(zip(traces["key"], traces["path"]))
    dur = {}
    for _, r in data.runs("compete").iterrows():
        sc = r["scenario"]
        d = (json.loads(sc) if isinstance(sc, str) else sc)["duration"]
        dur[r["key"]] = d / 1e9 if isinstance(d, (int, float)) else float(str(d).rstrip("s"))
    rows = []
    for key, fl in flows.groupby("key"):
        fl = fl.set_index("flow")
        t1 = float(fl.loc["newcomer", "start"])
        seq = pd.read_parquet(where[key], columns=["time", "flow", "event", "seq"])
        inc = seq[seq["flow"] == "incumbent"]
        acked = inc[inc["event"] == "acked"]
        new = seq[seq["flow"] == "newcomer"]
        first_rtt = new[new["event"] == "acked"]["time"].min() - new[new["event"] == "sent"]["time"].min()
        before = acked[acked["time"] <= t1]["seq"].max()
        rate, rtt, buf, bdp = paths[key]
        rows.append(
            {
                "rate_mbps": rate, "rtt_ms": round(rtt), "newcomer_MB": float(fl.loc["newcomer", "size"]) / 1e6,
                "run_seed": int(fl["run_seed"].iloc[0]), "newcomer": fl["newcomer"].iloc[0],
                "incumbent_mbps": (acked["seq"].max() - before) * 8 / (dur[key] - t1) / 1e6,
                "incumbent_drops": int(((inc["event"] == "dropped") & (inc["time"] >= t1)).sum()),
                "newcomer_drops": int(fl.loc["newcomer", "drops"]), "newcomer_fct": fl.loc["newcomer", "completion_time"],
                "newcomer_first_rtt_ms": first_rtt * 1e3, "base_rtt_ms": float(fl.loc["newcomer", "base_rtt"]) * 1e3,
            }
        )  # fmt: skip
    return pd.DataFrame(rows).sort_values(["rate_mbps", "rtt_ms", "newcomer_MB", "run_seed", "newcomer"], ignore_index=True)


@experiment(
    name="suss-fct",
    paper="suss",
    item="Abstract (beside the checklist)",
    title="SUSS against CUBIC with HyStart: FCT of flows under 5 MB at RTTs above 50 ms, and a competing CUBIC flow",
    sweeps={"fct": "suss-fct.toml", "compete": "suss-fct-compete.toml"},
    claims=[
        "SUSS lowers the flow completion time by more than 20 % for every flow under 5 MB at RTTs above 50 ms",
        "SUSS has no negative impact on its own flow: it loses no more packets than CUBIC with HyStart",
        "SUSS does not harm a competing flow",
    ],
    assumptions=[
        "not one of the 51 checklist items: the SUSS paper's result beside the five papers (issue 34)",
        "the baseline is CUBIC with Linux's HyStart (startlab's hystart-linux, the kernel SUSS patches); SUSS with the defaults of its Linux 6.8 code",
        "paths: 50, 100, 250 Mbit/s x 60, 100, 200 ms (30 ms as a contrast outside the claim), drop-tail buffers of 1 and 0.25 BDP (the paper's real deployments are not described as paths)",
        "flow sizes 250 kB, 500 kB, 1 MB, 2 MB, 4 MB from an idle path; FCT from the first data segment to the last ACK",
        "Linux TCP: MSS 1448 B + 52 B headers, IW 10, quick then delayed ACKs, CUBIC, SACK, 1 Gbit/s access links",
        "competing flow: a long-running CUBIC flow (HyStart) joined at 5 s by a 1 or 4 MB newcomer, 100 Mbit/s at 100 ms and 50 Mbit/s at 60 ms, one-BDP buffer, three seeds; harm = its delivery rate and drops over the 5 s from the newcomer's start",
    ],
)
def fct(data: Data) -> Analysis:
    plt = _plt()
    wide = _fct_table(data)
    claimed = wide[wide["rtt_ms"] > 50]
    failing = claimed[claimed["gain"] <= 0.20]
    n = len(claimed)
    if n == 0:
        holds, shape, got = None, False, "no run with an RTT above 50 ms"
    else:
        holds = len(failing) == 0
        shape = bool((claimed["gain"] > 0).all() and claimed["gain"].median() > 0.20)
        got = (
            f"gain {claimed['gain'].min():.0%} to {claimed['gain'].max():.0%} (median {claimed['gain'].median():.0%}) over {n} points; "
            f"SUSS saved {claimed['saved_rtts'].min():.1f} to {claimed['saved_rtts'].max():.1f} RTTs"
        )
        if len(failing):
            worst = ", ".join(
                f"{r.rate_mbps:g} Mbit/s {r.rtt_ms} ms {r.buffer_bdp:g} BDP {r.size_kB:g} kB ({r.size_bdp:.1f} BDP): {r.gain:.0%}"
                for r in failing.sort_values("gain").itertuples()
            )
            got += f"; at most 20 % at {len(failing)}/{n}: {worst}"
    contrast = wide[wide["rtt_ms"] <= 50]
    if len(contrast):
        got += f"; at 30 ms (outside the claim) {contrast['gain'].min():.0%} to {contrast['gain'].max():.0%}"
    claims = [
        judge(
            "SUSS lowers the flow completion time by more than 20 % for every flow under 5 MB at RTTs above 50 ms",
            "> 20 % lower FCT than CUBIC+HyStart, every flow < 5 MB, RTT > 50 ms",
            got,
            holds,
            "criterion: 1 - FCT(suss)/FCT(hystart-linux) > 20 % at every point with RTT > 50 ms; same shape if SUSS is faster "
            "at every such point and the median gain exceeds 20 %. SUSS saves a few rounds of startup (its rounds 2-4 grow "
            "fourfold), a time that does not grow with the flow: the gain falls as the flow lasts more rounds after startup "
            "(size in BDPs shown), and with a quarter-BDP buffer both flows overflow it in startup and spend the same kind "
            "of time in recovery. The paper measured real paths whose rates and buffers it does not give; "
            "docs/reproduction/suss.md",
            shape=shape,
        )
    ]
    if n:
        more = claimed[(claimed["drops_suss"] > claimed["drops_hystart-linux"]) | (claimed["timeouts_suss"] > claimed["timeouts_hystart-linux"])]
        claims.append(
            judge(
                "SUSS has no negative impact on its own flow: it loses no more packets than CUBIC with HyStart",
                "no measured negative impact",
                f"drops SUSS {int(claimed['drops_suss'].sum())}, hystart-linux {int(claimed['drops_hystart-linux'].sum())} over {n} points "
                f"(most at one point: {int(claimed['drops_suss'].max())} and {int(claimed['drops_hystart-linux'].max())}); "
                f"timeouts {int(claimed['timeouts_suss'].sum())} and {int(claimed['timeouts_hystart-linux'].sum())}; "
                f"SUSS lost more at {len(more)}/{n} points",
                len(more) == 0,
                "criterion: at every point with RTT > 50 ms the SUSS flow has no more drops and no more timeouts than the "
                "hystart-linux flow",
            )
        )
    else:
        claims.append(judge("SUSS has no negative impact on its own flow: it loses no more packets than CUBIC with HyStart", "no measured negative impact", "no run", None, "no run with an RTT above 50 ms"))
    comp = _compete_table(data)
    claims.append(_harm_claim(comp))

    # Figure: the gain per size, one line per path (1 BDP and 0.25 BDP panels), and the competing flow.
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    colours = {30: "tab:grey", 60: "tab:blue", 100: "tab:green", 200: "tab:red"}
    markers = {50: "o", 100: "s", 250: "^"}
    sizes = sorted(wide["size_kB"].unique())
    for ax, buf in zip(axes[:2], (1.0, 0.25)):
        part = wide[wide["buffer_bdp"] == buf]
        for (rate, rtt), g in part.groupby(["rate_mbps", "rtt_ms"]):
            g = g.sort_values("size_kB")
            ax.plot(g["size_kB"] / 1e3, g["gain"] * 100, marker=markers.get(int(rate), "o"), color=colours.get(int(rtt)),
                    linestyle="--" if rtt <= 50 else "-", label=f"{rate:g} Mbit/s, {rtt} ms")  # fmt: skip
        ax.axhline(20, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xticks([x / 1e3 for x in sizes], [f"{x / 1e3:g}" for x in sizes])
        ax.minorticks_off()
        ax.set_xlabel("flow size (MB)")
        ax.set_title(f"FCT gain over hystart-linux, buffer {buf:g} BDP", fontsize=10)
        if len(part):
            ax.legend(fontsize=6, ncol=2)
    axes[0].set_ylabel("1 - FCT(suss)/FCT(hystart-linux) (%)")
    if len(comp):
        m = comp.groupby(["rate_mbps", "rtt_ms", "newcomer_MB", "newcomer"], as_index=False)[["incumbent_mbps", "incumbent_drops"]].mean()
        labels, xs = [], 0
        for (rate, rtt, size), g in m.groupby(["rate_mbps", "rtt_ms", "newcomer_MB"]):
            for j, alg in enumerate(("hystart-linux", "suss")):
                row = g[g["newcomer"] == alg]
                if len(row):
                    v = float(row["incumbent_mbps"].iloc[0])
                    axes[2].bar(xs + 0.4 * j, v, width=0.4, color=("tab:blue", "tab:orange")[j], label=alg if xs == 0 else None)
                    axes[2].text(xs + 0.4 * j, v, f"{row['incumbent_drops'].iloc[0]:.0f}", ha="center", va="bottom", fontsize=7)
            labels.append(f"{rate:g}M {rtt}ms\n{size:g} MB")
            xs += 1
        axes[2].set_xticks([i + 0.2 for i in range(len(labels))], labels, fontsize=7)
        axes[2].set_ylabel("incumbent's rate (Mbit/s)")
        axes[2].set_title("a CUBIC flow in the 5 s after a newcomer joins\n(bars: its rate; numbers: its drops)", fontsize=10)
        axes[2].legend(fontsize=7, title="newcomer")
    fig.suptitle("SUSS (SIGCOMM 2024) in startlab")
    fig.tight_layout()
    tables = {"FCT per path and size (s)": wide.round(4)}
    if len(comp):
        tables["competing flow, per run"] = comp.round(4)
    return Analysis(claims, {"suss-fct": fig}, tables)


def _harm_claim(comp):
    claim = "SUSS does not harm a competing flow"
    if not len(comp):
        return judge(claim, "no measured negative impact", "no run", None, "the competing run set did not run")
    pairs = comp.pivot_table(index=["rate_mbps", "rtt_ms", "newcomer_MB", "run_seed"], columns="newcomer", values=["incumbent_mbps", "incumbent_drops"])
    rate_ratio = pairs[("incumbent_mbps", "suss")] / pairs[("incumbent_mbps", "hystart-linux")]
    more_drops = pairs[("incumbent_drops", "suss")] > pairs[("incumbent_drops", "hystart-linux")]
    rate_ok = bool((rate_ratio >= 0.95).all())
    parts = []
    for (rate, rtt, size), g in pairs.groupby(level=[0, 1, 2]):
        r = g[("incumbent_mbps", "suss")] / g[("incumbent_mbps", "hystart-linux")]
        parts.append(
            f"{rate:g} Mbit/s {rtt} ms, {size:g} MB newcomer: incumbent's rate x{r.min():.3f} to x{r.max():.3f}, "
            f"its drops {g[('incumbent_drops', 'hystart-linux')].mean():.0f} -> {g[('incumbent_drops', 'suss')].mean():.0f} (mean)"
        )
    return judge(
        claim,
        "no measured negative impact",
        "; ".join(parts) + f" (newcomer with hystart-linux -> with SUSS, {len(pairs)} paired runs)",
        rate_ok and not bool(more_drops.any()),
        "criterion: in every paired run (same seed, same incumbent history until the newcomer starts) the incumbent's "
        "delivery rate over the newcomer's first 5 s with a SUSS newcomer is at least 95 % of that with a hystart-linux "
        "newcomer, and it has no more drops; same shape if the rate holds but it drops more"
        + ("" if rate_ok and not bool(more_drops.any()) else
           ". In a drop-tail FIFO the newcomer's bursts leave the queue back to back whatever the other flow sends, and "
           "its minimum RTT already holds the incumbent's standing queue: SUSS's ACK-train prediction sees a pipe far "
           "from full, grows fourfold into the buffer the incumbent keeps occupied and overflows it; the incumbent's "
           "extra losses cost CUBIC reductions; docs/reproduction/suss.md"),
        shape=rate_ok,
    )
