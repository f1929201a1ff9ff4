"""Experiments of Scharf, "Performance Evaluation of Fast Startup Congestion Control Schemes"
(docs/REPRODUCTION.md)."""

from __future__ import annotations

from ..core import Analysis, Data, experiment, judge


@experiment(
    name="scharf-fig10",
    paper="scharf",
    item="Fig. 10",
    title="One startup of each scheme: a 2-MB response over 10 Mbit/s, 200 ms, B = 50",
    sweeps={"main": "scharf-fig10.toml"},
    claims=["slow start needs more than 1 s to fill the path", "every fast startup finishes the response sooner than slow start"],
    assumptions=["MSS 1460 B, 40 B headers (MTU 1500 B)", "no delayed ACKs (ns-2's default sink)", "a handshake before the request"],
)
def fig10(data: Data) -> Analysis:
    import matplotlib.pyplot as plt

    flows = data.flows("main")
    responses = data.responses("main")
    times = responses.merge(flows[["key", "startup", "drops", "timeouts"]], on="key").set_index("startup")
    slow = times.loc["slow-start"]
    fill = flows.set_index("startup").loc["slow-start", "time_to_90"]
    claims = [
        judge(
            "slow start needs more than 1 s to fill the path",
            "> 1 s",
            f"{fill:.2f} s to 90 % of the path's rate",
            bool(fill > 1.0),
            "time_to_90 of the slow-start flow (from its first data segment) against the paper's 1 s",
        )
    ]
    faster = {name: row["response_time"] for name, row in times.iterrows() if name != "slow-start"}
    worse = [n for n, t in faster.items() if not t < slow["response_time"]]
    shown = ", ".join(f"{n} {t:.2f} s" for n, t in faster.items())
    claims.append(
        judge(
            "every fast startup finishes the response sooner than slow start",
            "all schemes faster than slow start",
            f"slow start {slow['response_time']:.2f} s; {shown}",
            not worse,
            "response time of each scheme against slow start's"
            + ("" if not worse else f"; slower: {', '.join(worse)} (drops: " + ", ".join(f"{n} {int(times.loc[n, 'drops'])}" for n in worse) + ")"),
        )
    )
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar(list(times.index), times["response_time"], color="#0072B2")
    ax.set_ylabel("response time (s)")
    ax.set_title("Scharf Fig. 10: 2 MB over 10 Mbit/s, 200 ms, B = 50")
    fig.tight_layout()
    return Analysis(claims, {"fig10": fig}, {"response times": times.reset_index()[["startup", "response_time", "drops", "timeouts"]]})
