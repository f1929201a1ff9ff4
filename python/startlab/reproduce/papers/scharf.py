"""Experiments of Scharf, "Performance Evaluation of Fast Startup Congestion Control Schemes"
(docs/REPRODUCTION.md; notes in docs/reproduction/scharf.md).

Common setting, from the paper's text (Sect. 3.1 and 4.2): the Linux stack with L = 1448 B of
payload in a 1500-B MTU (52 B of TCP/IP header), the Quick-ACK mechanism always on (b = 1, an ACK
per segment), CUBIC, on a 10 Mbit/s, 200 ms dumbbell with B = 50 packets unless stated otherwise.
Every criterion below was written from the paper's claim before the runs; the reasons say it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import Analysis, Data, experiment, judge

#: Path and stack of the paper's simulations (Sect. 3.1, 4.2).
R_BPS = 10e6
TAU = 0.2
L = 1448
MTU = 1500
B_ACK = 1
IW = 3
QS_RATE = 5.12e6  # 10 Mbit/s requested, rounded down to the code 40 kbit/s * 2^7
U_JS = 65536

_COMMON = [
    "L = 1448 B of payload + 52 B of TCP/IP header (the paper's MTU 1500 B, Linux with timestamps)",
    "an ACK per segment (b = 1: the paper's Quick-ACK always on); CUBIC; SACK recovery; IW 3 (RFC 3390)",
    "1 Gbit/s access links; a handshake before the request (Quick-Start's request rides on the SYN)",
]


def _scheme_of(frame: Any) -> Any:
    return frame["scheme"].astype(str)


def _size_col(frame: Any) -> str:
    return "size_1" if "size_1" in frame.columns else "size"


def _model_response(scheme: str, s: Any, r: float = R_BPS, tau: float = TAU, q: float = QS_RATE, w_is: int = 10) -> Any:
    """The paper's minimum response time of one exchange: tau + T_x(s) (the request's half RTT
    and the last byte's half RTT), and T_QS = T_Paced + tau for Quick-Start with the request on
    the SYN (Sect. 3.2), which already is a response time."""
    from ...models import scharf as m

    kw = dict(r=r, tau=tau, L=L, mtu=MTU, b=B_ACK)
    if scheme == "SS":
        return tau + m.t_ss(s, w=IW, **kw)
    if scheme.startswith("QS"):
        rate = float(scheme.split()[1]) * 1e6 if " " in scheme else q
        return m.t_qs(s, q=rate, **kw)
    if scheme == "JS":
        return tau + m.t_js(s, u=U_JS, **kw)
    if scheme == "MS":
        return tau + m.t_ms(s, q=r, **kw)
    if scheme.startswith("IS"):
        return tau + m.t_is(s, w=w_is, **kw)
    raise ValueError(scheme)


def _rate_series(seq: Any, flow: str, bin_s: float = 0.2) -> Any:
    """Goodput (Mbit/s) of ``flow`` per ``bin_s`` from its cumulative ACKs (seq trace)."""
    import pandas as pd

    acked = seq[(seq["flow"] == flow) & (seq["event"] == "acked")][["time", "seq"]]
    if acked.empty:
        return pd.Series(dtype=float)
    bins = np.floor(acked["time"] / bin_s).astype(int)
    top = acked.groupby(bins)["seq"].max()
    full = top.reindex(range(int(top.index.min()) - 1, int(top.index.max()) + 1)).ffill().fillna(0)
    rate = full.diff().dropna() * 8 / bin_s / 1e6
    rate.index = rate.index * bin_s + bin_s
    return rate


def _acked_between(seq: Any, flow: str, t1: float, t2: float) -> float:
    acked = seq[(seq["flow"] == flow) & (seq["event"] == "acked")]
    before = acked[acked["time"] <= t1]["seq"]
    upto = acked[acked["time"] <= t2]["seq"]
    return float((upto.max() if len(upto) else 0) - (before.max() if len(before) else 0))


# ----------------------------------------------------------------------------------------------
# eqs. (1)-(4)


@experiment(
    name="scharf-eqs1-4",
    paper="scharf",
    item="eqs. (1)–(4)",
    title="Closed forms T_SS, ψ, T_Paced, Ψ (and T_QS, T_JS, T_MS, T_IS) against loss-free simulation",
    sweeps={"main": "scharf-eqs1-4.toml"},
    claims=[
        "eqs. (1)-(2) give the slow-start transfer time (T_SS + τ is the minimum response time)",
        "eqs. (3)-(4) give the paced schemes' times: T_QS = T_Paced + τ (R0 = (L/MTU)·q), T_JS (R0 = min(s, u)/τ), T_MS",
        "T_IS follows from eq. (1) with a larger initial window",
    ],
    assumptions=_COMMON + ["B = 1000 packets (Fig. 12's large buffer: the models neglect loss)", "Quick-Start approved at 5.12 Mbit/s, More-Start at 10 Mbit/s, Initial-Start w = 10"],
)
def eqs1_4(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    from ...models import scharf as m

    resp = data.responses("main")
    resp["scheme"] = _scheme_of(resp)
    s = resp[_size_col(resp)].astype(float)
    resp["model"] = [float(_model_response(k, x)) for k, x in zip(resp["scheme"], s)]
    resp["error"] = resp["response_time"] / resp["model"] - 1
    table = resp[["scheme", _size_col(resp), "response_time", "model", "error"]].rename(columns={_size_col(resp): "bytes"})
    # the closed forms themselves against the worked values of ALGORITHMS.md §18.1
    kw = dict(r=R_BPS, tau=TAU, L=L, mtu=MTU)
    worked = [
        ("T_SS(100 kB, w=3, b=1)", float(m.t_ss(1e5, w=3, b=1, **kw)), 0.833673),
        ("T_SS(1 MB, w=3, b=1)", float(m.t_ss(1e6, w=3, b=1, **kw)), 1.809129),
        ("T_SS(100 kB, w=3, b=2)", float(m.t_ss(1e5, w=3, b=2, **kw)), 1.215260),
        ("T_IS(1 MB, w=83)", float(m.t_is(1e6, w=83, b=1, **kw)), 0.932329),
        ("T_QS(1 MB, q=5.12M)", float(m.t_qs(1e6, q=QS_RATE, b=1, **kw)), 1.126329),
        ("T_JS(100 kB)", float(m.t_js(1e5, b=1, **kw)), 0.252588),
        ("T_MS(1 MB, q=10M)", float(m.t_ms(1e6, q=R_BPS, b=1, **kw)), 0.828729),
    ]
    formulas = pd.DataFrame(worked, columns=["quantity", "startlab.models.scharf", "worked value (s)"])
    formulas_ok = bool(np.allclose(formulas.iloc[:, 1], formulas.iloc[:, 2], atol=2e-6))
    # what startlab.models.scharf.response_time gives for Quick-Start, against the paper's T_QS
    rt_qs = float(m.response_time(1e6, scheme="qs", r=R_BPS, tau=TAU, q=QS_RATE, L=L, mtu=MTU, b=1))

    tol = 0.10

    def verdict(keys: list[str], text: str) -> Any:
        part = table[table["scheme"].isin(keys)]
        worst = part.loc[part["error"].abs().idxmax()]
        shown = "; ".join(f"{r.scheme} {int(r.bytes)} B: {r.response_time:.3f} s vs {r.model:.3f} s" for r in part.itertuples())
        ok = bool((part["error"].abs() <= tol).all())
        return shown, ok, f"worst {worst.scheme} {int(worst.bytes)} B {worst.error:+.1%}"

    claims = []
    shown, ok, worst = verdict(["SS"], "")
    claims.append(judge(
        "eqs. (1)-(2) give the slow-start transfer time (T_SS + τ is the minimum response time)",
        "T_SS(s) + τ (e.g. 1 MB: %.3f s)" % float(_model_response("SS", 1e6)),
        shown,
        ok and formulas_ok,
        f"criterion: every simulated slow-start response time (no loss, B = 1000) within {tol:.0%} of τ + T_SS, and the "
        f"code's T_SS equal to ALGORITHMS.md §18.1's worked values (to 2 µs: {formulas_ok}); {worst}",
    ))
    shown, ok, worst = verdict(["QS", "JS", "MS"], "")
    claims.append(judge(
        "eqs. (3)-(4) give the paced schemes' times: T_QS = T_Paced + τ (R0 = (L/MTU)·q), T_JS (R0 = min(s, u)/τ), T_MS",
        "T_QS = T_Paced + τ; τ + T_JS; τ + T_MS",
        shown,
        ok,
        f"criterion: every simulated response time within {tol:.0%} of the paper's equation (T_QS = T_Paced + τ with the "
        f"request on the SYN; τ + T_JS, τ + T_MS); {worst}. Note: startlab.models.scharf.response_time(scheme='qs') "
        f"returns τ + T_QS = 2τ + T_Paced = {rt_qs:.3f} s for 1 MB, one τ more than the paper's T_QS = "
        f"{float(m.t_qs(1e6, q=QS_RATE, b=1, **kw)):.3f} s, which the simulator follows (a model-code bug reported to the lead)",
    ))
    shown, ok, worst = verdict(["IS"], "")
    claims.append(judge(
        "T_IS follows from eq. (1) with a larger initial window",
        "τ + T_SS with w = 10",
        shown,
        ok,
        f"criterion: every simulated Initial-Start (w = 10) response time within {tol:.0%} of τ + T_SS(w = 10); {worst}",
    ))

    fig, ax = plt.subplots(figsize=(6.4, 4))
    colors = dict(zip(["SS", "QS", "JS", "MS", "IS"], ["k", "#D55E00", "#0072B2", "#009E73", "#CC79A7"]))
    grid = np.logspace(3.5, 6.5, 200)
    for k, c in colors.items():
        ax.plot(grid, _model_response(k, grid), color=c, lw=1, label=f"{k} model")
        part = table[table["scheme"] == k]
        ax.plot(part["bytes"], part["response_time"], "o", color=c, ms=5, label=f"{k} simulated")
    ax.set_xscale("log")
    ax.set_xlabel("response size s (bytes)")
    ax.set_ylabel("response time (s)")
    ax.set_title("Scharf eqs. (1)–(4): models vs simulation (10 Mbit/s, 200 ms, B = 1000)")
    ax.legend(ncol=2, fontsize=7)
    fig.tight_layout()
    return Analysis(claims, {"eqs1-4": fig}, {"response times, simulated vs model": table, "closed forms vs worked values": formulas})


# ----------------------------------------------------------------------------------------------
# Fig. 10


@experiment(
    name="scharf-fig10",
    paper="scharf",
    item="Fig. 10",
    title="One startup of each scheme: a 2-MB response over 10 Mbit/s, 200 ms, B = 50",
    sweeps={"main": "scharf-fig10.toml"},
    claims=[
        "slow start needs more than 1 s to fill the path",
        "every fast startup fills the path sooner than slow start",
        "every fast startup finishes the response sooner than slow start",
    ],
    assumptions=_COMMON + [
        "the paper's b = 1 decides the verdicts; runs with delayed ACKs (b ~ 2) are shown as a sensitivity check",
        "'fill the path': time_to_90, the first base RTT whose ACKed bytes reach 90 % of 10 Mbit/s",
    ],
)
def fig10(data: Data) -> Analysis:
    import matplotlib.pyplot as plt

    flows = data.flows("main")
    responses = data.responses("main")
    times = responses[["key", "response_time"]].merge(flows[["key", "ack", "startup", "drops", "timeouts", "time_to_90", "t0"]], on="key")
    paper = times[times["ack"] == "every-packet"].set_index("startup", drop=False)
    slow = paper.loc["slow-start"]
    fill = slow["time_to_90"]
    claims = [
        judge(
            "slow start needs more than 1 s to fill the path",
            "> 1 s",
            f"{fill:.2f} s to 90 % of the path's rate",
            bool(fill > 1.0),
            "criterion: time_to_90 of the slow-start flow (from its first data segment) above the paper's 1 s",
        )
    ]
    others = paper.drop(index="slow-start")
    late = [n for n, r in others.iterrows() if not r["time_to_90"] < fill]
    claims.append(judge(
        "every fast startup fills the path sooner than slow start",
        "all fast startups reach the path's rate earlier",
        f"slow start {fill:.2f} s; " + ", ".join(f"{n} {r['time_to_90']:.2f} s" for n, r in others.iterrows()),
        not late,
        "criterion: time_to_90 of each scheme below slow start's" + (f"; not earlier: {', '.join(late)}" if late else ""),
    ))
    worse = [n for n, r in others.iterrows() if not r["response_time"] < slow["response_time"]]
    delayed = times[times["ack"] == "delayed"].set_index("startup", drop=False)
    dworse = [n for n, r in delayed.drop(index="slow-start").iterrows() if not r["response_time"] < delayed.loc["slow-start", "response_time"]]
    claims.append(judge(
        "every fast startup finishes the response sooner than slow start",
        "all schemes faster than slow start",
        f"slow start {slow['response_time']:.2f} s; " + ", ".join(f"{n} {r['response_time']:.2f} s ({int(r['drops'])} drops, {int(r['timeouts'])} RTO)" for n, r in others.iterrows()),
        not worse,
        "criterion: response time of each scheme below slow start's, with the paper's b = 1"
        + (
            f"; slower: {', '.join(worse)}. Cause: with an ACK per segment the slow start that follows the paced first RTT "
            "doubles cwnd per RTT and, since the paced round leaves no queue, the first overflow comes only when cwnd is near "
            "twice the pipe (BDP 167 + B 50 packets); loss is detected an RTT later at about 2.5 x BDP, hundreds of packets "
            "are lost and a lost retransmission costs an RTO. With delayed ACKs (b ~ 2, the sensitivity runs) the growth is "
            "about 1.5 x per RTT and every fast startup beats slow start"
            + (f" except {', '.join(dworse)}" if dworse else "")
            + ": " + ", ".join(f"{n} {r['response_time']:.2f} s" for n, r in delayed.iterrows())
            + ". The paper states b = 1 (Quick-ACK always on), so the contradiction stands for its setup; its Linux 2.6.18 "
            "stack (not modelled: e.g. its recovery details) evidently did not overshoot this way"
            if worse else ""
        ),
    ))
    seq = data.trace("main", "seq", "ack = 'every-packet'")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [2, 1]})
    for (name, row), color in zip(paper.iterrows(), ["k", "#D55E00", "#0072B2", "#009E73", "#CC79A7"]):
        part = seq[seq["seed"] == int(flows.loc[flows["key"] == row["key"], "seed"].iloc[0])]
        rate = _rate_series(part, "response")
        ax.step(rate.index, rate.values, where="post", color=color, label=name)
    ax.set_xlim(0, 6)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("downlink goodput per 200 ms (Mbit/s)")
    ax.legend(fontsize=8)
    labels = list(paper.index)
    x = np.arange(len(labels))
    bx.bar(x - 0.2, paper["response_time"], 0.4, label="b = 1 (paper)", color="#0072B2")
    bx.bar(x + 0.2, delayed.reindex(labels)["response_time"], 0.4, label="delayed ACKs", color="#BBBBBB")
    bx.set_xticks(x, [n.replace("-start", "") for n in labels], rotation=30, fontsize=8)
    bx.set_ylabel("response time (s)")
    bx.legend(fontsize=7)
    fig.suptitle("Scharf Fig. 10: 2 MB over 10 Mbit/s, 200 ms, B = 50")
    fig.tight_layout()
    return Analysis(claims, {"fig10": fig}, {"response times": times.drop(columns=["key"])})


# ----------------------------------------------------------------------------------------------
# Fig. 11


@experiment(
    name="scharf-fig11",
    paper="scharf",
    item="Fig. 11",
    title="A new flow (2-MB response) starting 10 s after a long-lived one, N = 2, 10 Mbit/s, 200 ms, B = 50",
    sweeps={"main": "scharf-fig11.toml"},
    claims=[
        "with slow start the new short flow cannot reach its 5 Mbit/s fair share",
        "Quick-Start is denied by the router's admission control and falls back to slow start",
        "Jump-Start and More-Start speed up the new flow at the expense of the established one",
    ],
    assumptions=_COMMON + [
        "the new flow is Fig. 10's exchange (100-B request, 2-MB response); the old one an infinite CUBIC transfer from t = 0",
        "routers: [quick_start] share 1.0, window 1 s (admission that does not over-commit)",
        "'at the expense': the old flow's goodput in the 3 s after the newcomer's request below its goodput then with a slow-start newcomer",
        "5 runs per scheme, the new flow opening at 10, 10.2, ..., 10.8 s; verdicts on the medians",
    ],
)
def fig11(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    flows = data.flows("main")
    resp = data.responses("main")
    seq = data.trace("main", "seq")
    new = flows[flows["flow"] == "new"]
    rows = []
    for _, row in new.iterrows():
        part = seq[seq["seed"] == row["seed"]]
        r = resp[resp["key"] == row["key"]]
        rt = float(r["response_time"].iloc[0]) if len(r) else float("nan")
        t_req = float(r["request_time"].iloc[0]) if len(r) else float(row["start"])
        peak = _rate_series(part, "new", 1.0)
        rows.append({
            "startup": row["startup"], "replicate": float(row["start"]), "start": float(row["start"]), "response_time": rt,
            "new_mean_mbps": 2e6 * 8 / rt / 1e6 if rt == rt else float("nan"),
            "new_peak_1s_mbps": float(peak.max()) if len(peak) else 0.0,
            # the old flow's goodput in the first 3 s after the newcomer's request
            "old_mbps_3s": _acked_between(part, "old", t_req, t_req + 3) * 8 / 3 / 1e6,
            "qs_outcome": row.get("qs_outcome"), "new_drops": int(row["drops"]), "new_timeouts": int(row["timeouts"]),
        })
    table = pd.DataFrame(rows)
    med = table.groupby("startup")[["response_time", "new_mean_mbps", "new_peak_1s_mbps", "old_mbps_3s"]].median()
    n = table.groupby("startup").size().min()
    ss = med.loc["slow-start"]
    ss_rep = table[table["startup"] == "slow-start"]
    below = int((ss_rep["new_peak_1s_mbps"] < 5.0).sum())
    claims = [judge(
        "with slow start the new short flow cannot reach its 5 Mbit/s fair share",
        "stays below 5 Mbit/s",
        f"median over {n} runs: mean {ss['new_mean_mbps']:.2f} Mbit/s over its response ({ss['response_time']:.2f} s), "
        f"best 1-s goodput {ss['new_peak_1s_mbps']:.2f} Mbit/s; below 5 Mbit/s in {below} of {len(ss_rep)} runs",
        bool(ss["new_peak_1s_mbps"] < 5.0),
        "criterion: the median (over the runs) of the slow-start newcomer's best 1-s goodput during its response below 5 Mbit/s",
    )]
    qs_rep = table[table["startup"] == "quick-start"].sort_values("replicate")
    denied = int((qs_rep["qs_outcome"] == "denied").sum())
    pair = qs_rep.merge(ss_rep, on="replicate", suffixes=("", "_ss"))
    same = bool(((pair["response_time"] / pair["response_time_ss"] - 1).abs() <= 0.05).all())
    claims.append(judge(
        "Quick-Start is denied by the router's admission control and falls back to slow start",
        "request denied; behaves as slow start",
        f"denied in {denied} of {len(qs_rep)} runs; median response {med.loc['quick-start', 'response_time']:.2f} s vs slow start {ss['response_time']:.2f} s",
        bool(denied == len(qs_rep) and same),
        "criterion: qs_outcome = denied in every run and each run's response time within 5 % of the slow-start run with the same start time",
    ))
    js, ms = med.loc["jump-start"], med.loc["more-start"]
    gains = [bool(med.loc[k, "response_time"] < ss["response_time"] and med.loc[k, "old_mbps_3s"] < ss["old_mbps_3s"]) for k in ("jump-start", "more-start")]
    per = {k: int(sum(
        (a.response_time < b.response_time) and (a.old_mbps_3s < b.old_mbps_3s)
        for a, b in zip(table[table.startup == k].sort_values("replicate").itertuples(), ss_rep.sort_values("replicate").itertuples())
    )) for k in ("jump-start", "more-start")}
    claims.append(judge(
        "Jump-Start and More-Start speed up the new flow at the expense of the established one",
        "new flow faster, old flow slower than with slow start",
        f"medians over {n} runs: new flow's response JS {js['response_time']:.2f} s, MS {ms['response_time']:.2f} s vs SS {ss['response_time']:.2f} s; "
        f"old flow in the newcomer's first 3 s: JS {js['old_mbps_3s']:.2f}, MS {ms['old_mbps_3s']:.2f} vs SS {ss['old_mbps_3s']:.2f} Mbit/s; "
        f"both hold in JS {per['jump-start']}/{n}, MS {per['more-start']}/{n} runs",
        all(gains),
        "criterion: for each of JS and MS, the median response time below slow start's and the median goodput of the old flow in "
        "the 3 s after the newcomer's request below its value with a slow-start newcomer. (With Reno instead of the paper's "
        "CUBIC, Jump-Start did not help in a single run: see docs/reproduction/scharf.md)",
        shape=any(gains),
    ))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    first = new[new["start"] == new["start"].min()]
    for (_, row), color in zip(first.iterrows(), ["k", "#D55E00", "#0072B2", "#009E73", "#CC79A7"]):
        part = seq[seq["seed"] == row["seed"]]
        for ax, fl in zip(axes, ("new", "old")):
            rate = _rate_series(part, fl, 0.2)
            ax.step(rate.index, rate.values, where="post", color=color, lw=1, label=row["startup"])
    for ax, fl in zip(axes, ("new flow", "long-lived flow")):
        ax.set_xlim(9.5, 18)
        ax.axhline(5, color="grey", ls=":", lw=1)
        ax.set_title(f"{fl} (new flow opening at 10 s)", fontsize=9)
        ax.set_xlabel("time (s)")
    axes[0].set_ylabel("goodput per 200 ms (Mbit/s)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Scharf Fig. 11: startup of a new flow against a long-lived one (N = 2)")
    fig.tight_layout()
    return Analysis(claims, {"fig11": fig}, {"new flow and old flow, per run": table, "medians": med.reset_index()})


# ----------------------------------------------------------------------------------------------
# Fig. 12


@experiment(
    name="scharf-fig12",
    paper="scharf",
    item="Fig. 12",
    title="Response time against response size, models and simulation, 10 Mbit/s, 200 ms, B = 1000",
    sweeps={"main": "scharf-fig12.toml"},
    claims=[
        "fast startups improve the response time most for mid-sized responses",
        "the Jump-Start implementation is faster than the model for s << u (coarse pacing timers)",
    ],
    assumptions=_COMMON + ["Quick-Start request rates 1.28, 2.56, 5.12 Mbit/s; Initial-Start w = 10", "the paper's testbed curve has no counterpart"],
)
def fig12(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    resp = data.responses("main")
    resp["scheme"] = _scheme_of(resp)
    resp["bytes"] = resp[_size_col(resp)].astype(float)
    resp["model"] = [float(_model_response(k, x)) for k, x in zip(resp["scheme"], resp["bytes"])]
    table = resp[["scheme", "bytes", "response_time", "model"]].sort_values(["scheme", "bytes"])
    ss = table[table["scheme"] == "SS"].set_index("bytes")["response_time"]
    table["speedup"] = [ss.get(b, np.nan) / t for b, t in zip(table["bytes"], table["response_time"])]
    rows = []
    for k in ["QS 1.28", "QS 2.56", "QS 5.12", "JS", "IS"]:
        part = table[table["scheme"] == k].set_index("bytes")["speedup"].sort_index()
        peak_at = part.idxmax()
        rows.append({"scheme": k, "peak_speedup": part.max(), "peak_at_bytes": peak_at, "at_smallest": part.iloc[0], "at_largest": part.iloc[-1],
                     "interior": bool(part.index[0] < peak_at < part.index[-1] and part.iloc[0] < 0.9 * part.max() and part.iloc[-1] < 0.9 * part.max())})
    peaks = pd.DataFrame(rows)
    claims = [judge(
        "fast startups improve the response time most for mid-sized responses",
        "largest speedup at mid sizes, little at the smallest and largest",
        "; ".join(f"{r.scheme}: peak x{r.peak_speedup:.2f} at {int(r.peak_at_bytes)} B (x{r.at_smallest:.2f} at the smallest, x{r.at_largest:.2f} at the largest)" for r in peaks.itertuples()),
        bool(peaks["interior"].all()),
        "criterion: for every fast scheme, the simulated speedup over slow start peaks at a size strictly inside the range, and "
        "is below 0.9 x the peak at both the smallest and the largest size",
    )]
    js = table[(table["scheme"] == "JS") & (table["bytes"] <= 10_000)]
    dev = js["response_time"] / js["model"] - 1
    below = dev < -0.05
    claims.append(judge(
        "the Jump-Start implementation is faster than the model for s << u (coarse pacing timers)",
        "implementation below T_JS for s << 64 KiB",
        "; ".join(f"{int(r.bytes)} B: {r.response_time:.3f} s vs model {r.model:.3f} s" for r in js.itertuples()),
        bool(below.all()),
        "criterion: every simulated Jump-Start response time for s <= 10 kB (s < u/6) more than 5 % below the model's "
        f"tau + T_JS (measured {dev.min():+.1%} to {dev.max():+.1%}). The paper's cause (a limited number of pacing timers) is "
        "not modelled: startlab paces exactly. It is faster for two reasons of its own: a response of at most IW = 3 segments "
        "leaves unpaced (cwnd = max(D, IW)), and D paced segments leave RTT/D apart, the last one (D - 1)/D of an RTT after the "
        "first, where the model spends a whole τ; from about u/4 up the two agree within 1 %",
        shape=bool(below.any()),
    ))
    fig, ax = plt.subplots(figsize=(6.6, 4.2))
    grid = np.logspace(3, 7, 300)
    for k, c in zip(["SS", "QS 1.28", "QS 2.56", "QS 5.12", "JS", "IS"], ["k", "#E69F00", "#F0A0A0", "#D55E00", "#0072B2", "#CC79A7"]):
        ax.plot(grid, _model_response(k, grid), color=c, lw=1, label=f"{k}")
        part = table[table["scheme"] == k]
        ax.plot(part["bytes"], part["response_time"], "o", color=c, ms=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("response size (bytes)")
    ax.set_ylabel("response time (s)")
    ax.set_title("Scharf Fig. 12: lines = model, dots = simulation (B = 1000)", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return Analysis(claims, {"fig12": fig}, {"response times": table, "speedup peaks": peaks})


# ----------------------------------------------------------------------------------------------
# Fig. 13


@experiment(
    name="scharf-fig13",
    paper="scharf",
    item="Fig. 13",
    title="Quick-Start speedup on a 1 Gbit/s, 233 ms path",
    sweeps={"main": "scharf-fig13.toml"},
    claims=["Quick-Start speeds transfers up by up to a factor of 10 on the high-speed path"],
    reduced="a simulated dumbbell instead of the paper's real long-distance path; sizes up to 30 MB",
    assumptions=_COMMON[:2] + ["10 Gbit/s access links, a 20000-packet buffer (no loss)", "request 1 Gbit/s, approved at the code 655.36 Mbit/s"],
)
def fig13(data: Data) -> Analysis:
    import matplotlib.pyplot as plt

    resp = data.responses("main")
    resp["scheme"] = _scheme_of(resp)
    resp["bytes"] = resp[_size_col(resp)].astype(float)
    flows = data.flows("main")
    wide = resp.pivot_table(index="bytes", columns="scheme", values="response_time")
    wide["speedup"] = wide["SS"] / wide["QS"]
    q = flows[flows["scheme"].astype(str) == "QS"]
    approved = float(q["qs_approved"].max()) if "qs_approved" in q else float("nan")
    wide["model_speedup"] = [float(_model_response("SS", b, r=1e9, tau=0.233) / _model_response("QS", b, r=1e9, tau=0.233, q=approved)) for b in wide.index]
    peak = wide["speedup"].max()
    claims = [judge(
        "Quick-Start speeds transfers up by up to a factor of 10 on the high-speed path",
        "up to x10",
        f"peak x{peak:.1f} at {int(wide['speedup'].idxmax())} B (model x{wide['model_speedup'].max():.1f}); approved {approved / 1e6:.2f} Mbit/s",
        bool(7 <= peak <= 13),
        "criterion (set before the runs): the largest simulated speedup T_SS/T_QS over the sizes between 7 and 13 (a factor of about 10)",
        shape=bool(peak >= 3),
    )]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    grid = np.logspace(4, 7.6, 200)
    ax.plot(grid, _model_response("SS", grid, r=1e9, tau=0.233) / _model_response("QS", grid, r=1e9, tau=0.233, q=approved), "k-", lw=1, label="model")
    ax.plot(wide.index, wide["speedup"], "o", color="#D55E00", label="simulation")
    ax.set_xscale("log")
    ax.set_xlabel("transfer size (bytes)")
    ax.set_ylabel("speedup T_SS / T_QS")
    ax.set_title("Scharf Fig. 13: Quick-Start speedup, 1 Gbit/s, 233 ms", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return Analysis(claims, {"fig13": fig}, {"speedup": wide.reset_index()})


# ----------------------------------------------------------------------------------------------
# Figs. 14 and 15: persistent request/response connections with Pareto responses

_WARMUP_S = 20.0


def _load_tables(data: Data) -> tuple[Any, Any]:
    """Per (scheme, load point): mean response time after the warm-up, and loss rate per group."""
    resp = data.responses("main")
    resp = resp[resp["request_time"] >= _WARMUP_S].copy()
    flows = data.flows("main")
    for f in (resp, flows):
        f["scheme"] = _scheme_of(f) if "scheme" in f else None
    return resp, flows


@experiment(
    name="scharf-fig14",
    paper="scharf",
    item="Fig. 14",
    title="Mean response time against the bottleneck load, N = 50 persistent connections, Pareto responses (m = 125 kB)",
    sweeps={"main": "scharf-fig14.toml"},
    claims=[
        "as the load increases, Quick-Start performs like Slow-Start (admission control, signalling RTT)",
        "Initial-Start with w = 83 and More-Start at full link speed overshoot",
        "Jump-Start keeps the response time low even at high load",
    ],
    assumptions=_COMMON + [
        "load per connection rho/50 via app.load (exponential think times); loads rho = 0.1, 0.3, 0.5, 0.7",
        "fast startups again after every idle period (tcp.startup_after_idle); IS w = 83 comes back by RFC 5681's restart",
        "connections open over the first 10 s (start_jitter); 600 s per run, responses requested in the first 20 s left out; seeds 1-3 for every scheme (the same draws), pooled",
    ],
)
def fig14(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    resp, flows = _load_tables(data)
    resp["rho"] = (resp["conn_load"].astype(float) * 50).round(3)
    flows["rho"] = (flows["conn_load"].astype(float) * 50).round(3)
    mean = resp.groupby(["scheme", "rho"])["response_time"].mean().unstack("scheme")
    loss = flows.groupby(["scheme", "rho"]).apply(lambda f: f["drops"].sum() / max(f["packets_sent"].sum(), 1)).unstack("scheme")
    count = resp.groupby(["scheme", "rho"]).size().unstack("scheme")
    lo, hi = mean.index.min(), mean.index.max()
    gain = 1 - mean["QS"] / mean["SS"]
    claims = [judge(
        "as the load increases, Quick-Start performs like Slow-Start (admission control, signalling RTT)",
        "QS's gain over SS shrinks to little at high load",
        f"QS gain over SS: {gain[lo]:+.0%} at rho = {lo}, {gain[hi]:+.0%} at rho = {hi} (mean response {mean.loc[hi, 'QS']:.2f} vs {mean.loc[hi, 'SS']:.2f} s)",
        bool(abs(gain[hi]) < 0.20 and gain[hi] < 0.5 * gain[lo]),
        "criterion: at the highest load QS's relative gain 1 - T_QS/T_SS is below 20 % in size and below half its gain at the "
        "lowest load (the trend alone, a smaller gain at the highest load than at the lowest, is same-shape)",
        shape=bool(gain[hi] < gain[lo]),
    )]
    over = [k for k in ("IS 83", "MS") if loss.loc[hi, k] > 2 * loss.loc[hi, "SS"] and mean.loc[hi, k] > mean.loc[hi, "JS"]]
    claims.append(judge(
        "Initial-Start with w = 83 and More-Start at full link speed overshoot",
        "IS 83 and MS: heavy loss, long response times",
        f"at rho = {hi}: loss SS {loss.loc[hi, 'SS']:.2%}, IS 83 {loss.loc[hi, 'IS 83']:.2%}, MS {loss.loc[hi, 'MS']:.2%}, JS {loss.loc[hi, 'JS']:.2%}; "
        f"mean response IS 83 {mean.loc[hi, 'IS 83']:.2f}, MS {mean.loc[hi, 'MS']:.2f}, JS {mean.loc[hi, 'JS']:.2f}, SS {mean.loc[hi, 'SS']:.2f} s",
        len(over) == 2,
        "criterion: at the highest load, IS 83 and MS each lose more than twice SS's share of packets and respond slower than JS"
        + "".join(
            f"; note: {k} responds only {mean.loc[hi, k] / mean.loc[hi, 'JS'] - 1:+.1%} slower than JS and "
            f"{1 - mean.loc[hi, k] / mean.loc[hi, 'SS']:.0%} faster than SS (loss {loss.loc[hi, k]:.1%} vs JS {loss.loc[hi, 'JS']:.1%}), "
            "so the paper's 'detrimental' is not seen for it in response time"
            for k in ("IS 83", "MS") if mean.loc[hi, k] < mean.loc[hi, "SS"] and mean.loc[hi, k] < 1.05 * mean.loc[hi, "JS"]
        ),
        shape=len(over) == 1,
    ))
    best = mean.loc[hi].min()
    claims.append(judge(
        "Jump-Start keeps the response time low even at high load",
        "JS lowest at high load",
        f"at rho = {hi}: JS {mean.loc[hi, 'JS']:.2f} s, best {mean.loc[hi].idxmin()} {best:.2f} s, SS {mean.loc[hi, 'SS']:.2f} s; JS at rho = {lo}: {mean.loc[lo, 'JS']:.2f} s",
        bool(mean.loc[hi, "JS"] <= 1.05 * best and mean.loc[hi, "JS"] <= 0.8 * mean.loc[hi, "SS"]),
        "criterion: at the highest load JS's mean response time is within 5 % of the lowest of all schemes and at least 20 % below SS's",
    ))
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, c in zip(["SS", "QS", "JS", "MS", "IS 83"], ["k", "#D55E00", "#0072B2", "#009E73", "#CC79A7"]):
        if k in mean:
            ax.plot(mean.index, mean[k], "o-", color=c, label=k)
    ax.set_xlabel("bottleneck load rho")
    ax.set_ylabel("mean response time (s)")
    ax.set_title("Scharf Fig. 14: N = 50, Pareto responses (m = 125 kB), B = 50", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    tab = pd.concat({"mean_response_s": mean, "loss": loss, "responses": count}, axis=1).reset_index()
    tab.columns = [" ".join(str(x) for x in c if x != "").strip() for c in tab.columns]
    return Analysis(claims, {"fig14": fig}, {"mean response time and loss per load": tab})


@experiment(
    name="scharf-fig15",
    paper="scharf",
    item="Fig. 15",
    title="Response times of N/2 default stacks against N/2 fast-startup stacks",
    sweeps={"main": "scharf-fig15.toml"},
    claims=[
        "Quick-Start and Jump-Start are rather fair to the default stacks",
        "the other variants (More-Start, Initial-Start) significantly slow down the default stacks",
    ],
    assumptions=_COMMON + [
        "workloads (m = 125 kB, N = 50) and (m = 10 kB, N = 400) at rho = 0.05 and 0.3 (load per connection rho/N)",
        "fast startups again after every idle period; Initial-Start w = 83 (Fig. 14's)",
        "connections open over the first 10 s (start_jitter); 1200 s per run, responses requested in the first 20 s left out; seeds 1-3 for every scheme (the same draws), pooled; 'significantly' = the default group's mean response time more than 20 % above the all-Slow-Start reference",
    ],
)
def fig15(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    resp, _ = _load_tables(data)
    resp["group"] = np.where(resp["flow"].str.startswith("default"), "default", "fast")
    mean = resp.groupby(["workload", "scheme", "group"])["response_time"].mean().unstack("group")
    rows = []
    for (w, k), r in mean.iterrows():
        ref = mean.loc[(w, "SS")]  # the same flows and seeds (same draws) when every stack slow-starts
        rows.append({"workload": w, "scheme": k, "default_s": r["default"], "fast_s": r["fast"], "ref_default_s": ref["default"],
                     "ref_fast_s": ref["fast"], "default_rel": r["default"] / ref["default"], "fast_rel": r["fast"] / ref["fast"]})
    tab = pd.DataFrame(rows)
    fair = tab[tab["scheme"].isin(["QS", "JS"])]
    harsh = tab[tab["scheme"].isin(["MS", "IS 83"])]
    claims = [judge(
        "Quick-Start and Jump-Start are rather fair to the default stacks",
        "default stacks barely slowed",
        "; ".join(f"{r.scheme} {r.workload}: default x{r.default_rel:.2f}, fast x{r.fast_rel:.2f}" for r in fair.itertuples()),
        bool((fair["default_rel"] <= 1.2).all()),
        "criterion: with QS or JS in the fast group, the default group's mean response time at most 20 % above the same "
        "group's mean in the all-Slow-Start reference run, in every workload",
        shape=bool((fair["default_rel"] <= 1.2).mean() >= 0.5),
    )]
    hit = harsh.groupby("scheme")["default_rel"].max()
    claims.append(judge(
        "the other variants (More-Start, Initial-Start) significantly slow down the default stacks",
        "default stacks clearly slower",
        "; ".join(f"{r.scheme} {r.workload}: default x{r.default_rel:.2f}" for r in harsh.itertuples()),
        bool((hit > 1.2).all()),
        "criterion: for each of MS and IS 83, the default group's mean response time more than 20 % above the reference in at least one workload",
        shape=bool((hit > 1.2).any()),
    ))
    fig, ax = plt.subplots(figsize=(5.6, 5))
    markers = dict(zip(sorted(tab["workload"].unique()), "os^D"))
    for k, c in zip(["SS", "QS", "JS", "MS", "IS 83"], ["k", "#D55E00", "#0072B2", "#009E73", "#CC79A7"]):
        part = tab[tab["scheme"] == k]
        for r in part.itertuples():
            ax.plot(r.default_rel, r.fast_rel, markers[r.workload], color=c, ms=7, label=k if r.workload == part["workload"].iloc[0] else None)
    for w, mk in markers.items():
        ax.plot([], [], mk, color="grey", label=w)
    ax.axvline(1, color="grey", lw=0.8, ls=":")
    ax.axhline(1, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("default stacks' mean response time / reference")
    ax.set_ylabel("fast stacks' mean response time / reference")
    ax.set_title("Scharf Fig. 15: default vs fast-startup stacks", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return Analysis(claims, {"fig15": fig}, {"response times relative to all-Slow-Start": tab})


# ----------------------------------------------------------------------------------------------
# Figs. 16 and 17: replayed request/response vectors (synthetic: the paper's traces are not available)

_NO_TRACES = (
    "the paper's traces (its ref. [21], WAN-in-Lab tmix vectors) are not available: the runs replay a synthetic set with "
    "the paper's stated parameters (scharf-vectors.csv: 450 connections, nine RTTs 4-200 ms, rho = 0.3, bounded-Pareto "
    "responses of mean 10 kB), so the numbers are those of a workload like Fig. 16's, not of its traces"
)
_REPLAY_ASSUMPTIONS = _COMMON[:2] + [
    "SYNTHETIC vectors (startlab.replay.generate, seed 1, 120 s; command in the sweep file): the paper's traces are not available",
    "fast startups on every response after an idle period (tcp.startup_after_idle); QS 3 only for responses > 10 kB (tcp.startup_min_response)",
    "Quick-Start asks for 10 Mbit/s (code 5.12 Mbit/s); handshakes; 1 Gbit/s access links",
]


def _epochs(data: Data) -> tuple[Any, Any]:
    resp = data.responses("main")
    resp["scheme"] = _scheme_of(resp)
    flows = data.flows("main")
    flows["scheme"] = _scheme_of(flows)
    return resp, flows


@experiment(
    name="scharf-fig16",
    paper="scharf",
    item="Fig. 16",
    title="CDF of epoch completion times, replayed request/response vectors, N = 450, nine RTTs, rho ~ 0.3",
    sweeps={"main": "scharf-fig16.toml"},
    claims=[
        "Jump-Start improves epochs of several hundred milliseconds, but the overall benefit is small",
        "Quick-Start by default (QS 1) performs worse than Slow-Start, since many requests are denied",
        "Quick-Start used only for transfers > 10 kB (QS 3) is better than QS 1",
    ],
    reduced="synthetic vectors instead of the paper's traces (not available); 120 s of vectors",
    assumptions=_REPLAY_ASSUMPTIONS,
)
def fig16(data: Data) -> Analysis:
    import matplotlib.pyplot as plt

    resp, flows = _epochs(data)
    stats = resp.groupby("scheme")["response_time"].agg(
        epochs="size", mean="mean", median="median", q90=lambda x: x.quantile(0.9), q05=lambda x: x.quantile(0.05)
    )
    ss, js, q1, q3 = (stats.loc[k] for k in ("SS", "JS", "QS 1", "QS 3"))
    note = "; " + _NO_TRACES
    claims = [judge(
        "Jump-Start improves epochs of several hundred milliseconds, but the overall benefit is small",
        "JS: shorter long epochs, small overall gain",
        f"90 % quantile JS {js['q90']:.3f} s vs SS {ss['q90']:.3f} s; median JS {js['median']:.3f} vs {ss['median']:.3f} s; mean JS {js['mean']:.3f} vs {ss['mean']:.3f} s",
        bool(js["q90"] < ss["q90"] and abs(js["median"] / ss["median"] - 1) <= 0.2),
        "criterion: JS's 90 % quantile (epochs of some hundred ms) below SS's, and its median within 20 % of SS's" + note,
    )]
    claims.append(judge(
        "Quick-Start by default (QS 1) performs worse than Slow-Start, since many requests are denied",
        "QS 1 worse than SS",
        f"mean QS 1 {q1['mean']:.3f} s vs SS {ss['mean']:.3f} s (median {q1['median']:.3f} vs {ss['median']:.3f} s); first requests "
        + ", ".join(f"{k} {v}" for k, v in flows[flows['scheme'] == 'QS 1']['qs_outcome'].value_counts().items()),
        bool(q1["mean"] > ss["mean"]),
        "criterion: QS 1's mean epoch completion time above SS's. In startlab a request after idle rides on the response's "
        "first data segment while the restart window leaves, so a denial costs no extra round trip" + note,
    ))
    claims.append(judge(
        "Quick-Start used only for transfers > 10 kB (QS 3) is better than QS 1",
        "QS 3 better than QS 1",
        f"mean QS 3 {q3['mean']:.3f} s vs QS 1 {q1['mean']:.3f} s (SS {ss['mean']:.3f} s)",
        bool(q3["mean"] < q1["mean"]),
        "criterion: QS 3's mean epoch completion time below QS 1's" + note,
    ))
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, c in zip(["SS", "JS", "QS 1", "QS 3"], ["k", "#0072B2", "#D55E00", "#E69F00"]):
        x = np.sort(resp[resp["scheme"] == k]["response_time"].to_numpy())
        ax.plot(x, np.arange(1, len(x) + 1) / len(x), color=c, label=k)
    ax.set_xscale("log")
    ax.set_xlim(1e-3, 30)
    ax.set_xlabel("epoch completion time (s)")
    ax.set_ylabel("CDF")
    ax.set_title("Scharf Fig. 16 (SYNTHETIC vectors, not the paper's traces)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return Analysis(claims, {"fig16": fig}, {"epoch completion times (s)": stats.reset_index()})


@experiment(
    name="scharf-fig17",
    paper="scharf",
    item="Fig. 17",
    title="Packet loss against the 5 %-quantile of epoch time, same replay setup",
    sweeps={"main": "scharf-fig17.toml"},
    claims=[
        "with default stacks the packet loss probability is of the order of 1 %",
        "Quick-Start, Jump-Start and a limited larger initial window only moderately raise the loss",
        "the other variants (More-Start, a large initial window) are more aggressive",
    ],
    reduced="synthetic vectors instead of the paper's traces (not available); 120 s of vectors",
    assumptions=_REPLAY_ASSUMPTIONS + ["'limited larger initial window': IW 10; 'large': IW 83 (Fig. 14's); More-Start at 10 Mbit/s", "'moderately': at most twice Slow-Start's loss"],
)
def fig17(data: Data) -> Analysis:
    import matplotlib.pyplot as plt
    import pandas as pd

    resp, flows = _epochs(data)
    q05 = resp.groupby("scheme")["response_time"].quantile(0.05)
    loss = flows.groupby("scheme").apply(lambda f: f["drops"].sum() / max(f["packets_sent"].sum(), 1))
    tab = pd.DataFrame({"q05_s": q05, "loss": loss}).reset_index()
    tab = tab.set_index("scheme", drop=False)
    note = "; " + _NO_TRACES
    ss = tab.loc["SS", "loss"]
    claims = [judge(
        "with default stacks the packet loss probability is of the order of 1 %",
        "about 1 %",
        f"Slow-Start loss {ss:.2%}",
        bool(0.003 <= ss <= 0.03),
        "criterion: SS's share of data packets dropped between 0.3 % and 3 %" + note,
    )]
    mod = ["QS 1", "QS 3", "JS", "IS 10"]
    ok = [k for k in mod if tab.loc[k, "loss"] <= 2 * ss]
    claims.append(judge(
        "Quick-Start, Jump-Start and a limited larger initial window only moderately raise the loss",
        "loss moderately above SS's",
        ", ".join(f"{k} {tab.loc[k, 'loss']:.2%}" for k in mod) + f" (SS {ss:.2%})",
        len(ok) == len(mod),
        "criterion: each of QS 1, QS 3, JS and IS 10 loses at most twice SS's share" + (f"; above: {', '.join(k for k in mod if k not in ok)}" if len(ok) < len(mod) else "") + note,
        shape=len(ok) >= 2,
    ))
    top = max(tab.loc[k, "loss"] for k in mod)
    agg = [k for k in ("MS", "IS 83") if tab.loc[k, "loss"] > top]
    claims.append(judge(
        "the other variants (More-Start, a large initial window) are more aggressive",
        "MS and a large IW lose more",
        ", ".join(f"{k} {tab.loc[k, 'loss']:.2%}" for k in ("MS", "IS 83")) + f"; highest of the moderate ones {top:.2%}",
        len(agg) == 2,
        "criterion: MS and IS 83 each lose a larger share than every one of QS 1, QS 3, JS and IS 10" + note,
        shape=len(agg) == 1,
    ))
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in tab.itertuples():
        ax.plot(r.q05_s, r.loss * 100, "o", color="#0072B2")
        ax.annotate(r.scheme, (r.q05_s, r.loss * 100), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("5 %-quantile of the epoch completion time (s)")
    ax.set_ylabel("packet loss (%)")
    ax.set_title("Scharf Fig. 17 (SYNTHETIC vectors, not the paper's traces)", fontsize=10)
    fig.tight_layout()
    return Analysis(claims, {"fig17": fig}, {"loss and 5 %-quantile": tab.reset_index(drop=True)})
