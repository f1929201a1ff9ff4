"""DualPI2's coupling against RFC 9332's model (docs/QUEUES.md, issue 33).

RFC 9332 §2.1 couples the L queue's marking probability to the Classic queue's through the base
probability p': p_CL = k·p', p_C = p'². Its model of the steady state takes a Reno-like window
W_C = 1.22/√p_C and a scalable (DCTCP-like) window W_L = 2/p_L, so with p_L = k·√p_C the windows
are W_C / W_L = 1.22·k / 2 = 0.61·k: the coupling factor sets the balance, k ≈ 1.64 evens the
windows for Reno.

One Prague flow and one classic flow (Reno or CUBIC, classic ECN) start together on a 50 Mbit/s,
20 ms dumbbell behind `{ kind = "dualpi2", k = K }`, for 40 s. After the first 10 s, from the
packet trace at the bottleneck, each flow's mean wait in its queue, its window (throughput ×
(base RTT + wait)) and its marking probability (CE marks / packets sent) give the response
constants the model assumes (W_C·√p_C, W_L·p_L) and the window ratio it predicts.

    python bench/dualpi2_coupling.py [--k 1 2 4] [--classic reno cubic] [--ack delayed every-packet] [--duration 40]
"""

from __future__ import annotations

import argparse
import math

import startlab


def scenario(k: float, classic: str, duration: float, ack: str) -> str:
    return f"""
seed = 1
duration = "{duration}s"
[topology]
kind = "dumbbell"
bottleneck_rate = "50Mbps"
rtts = ["20ms", "20ms"]
access_rate = "1Gbps"
queue = {{ kind = "dualpi2", k = {k} }}
[trace]
cwnd = false
seq = false
queue = false
[trace.packets]
links = ["bottleneck"]
[[flows]]
name = "prague"
pair = 0
tcp = {{ congestion_avoidance = "prague", ecn = "l4s", ack = "{ack}" }}
[[flows]]
name = "classic"
pair = 1
tcp = {{ congestion_avoidance = "{classic}", ecn = true, ack = "{ack}" }}
"""


def measure(k: float, classic: str, duration: float, ack: str = "delayed", settle: float = 10.0) -> dict[str, float]:
    """The two flows' figures for one run (see the module's doc)."""
    r = startlab.run(scenario(k, classic, duration, ack), progress=False)
    p = r.traces.packets
    key = ["flow", "seq", "kind"]
    enq = p[p["event"] == "enqueue"][[*key, "time"]]
    deq = p[p["event"] == "dequeue"][[*key, "time"]]
    both = enq.merge(deq, on=key, suffixes=("_in", "_out"))
    both = both[(both["kind"] == "data") & (both["time_in"] > settle)]
    wait = {str(f): float((g["time_out"] - g["time_in"]).mean()) for f, g in both.groupby("flow", observed=True)}
    flows = r.flows.set_index("flow")
    out: dict[str, float] = {"k": k, "drops": float(flows["drops"].sum())}
    for name, tag in (("prague", "L"), ("classic", "C")):
        f = flows.loc[name]
        out[f"rate_{tag}"] = float(f["throughput"]) / 1e6
        out[f"wait_{tag}"] = wait[name] * 1e3
        out[f"W_{tag}"] = float(f["throughput"]) * (float(f["base_rtt"]) + wait[name]) / 8 / float(f["mss"])
        out[f"p_{tag}"] = float(f["ecn_marks"]) / float(f["packets_sent"])
    out["const_C"] = out["W_C"] * math.sqrt(out["p_C"])
    out["const_L"] = out["W_L"] * out["p_L"]
    out["ratio"] = out["W_C"] / out["W_L"]
    out["model"] = 0.61 * k
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    ap.add_argument("--classic", nargs="+", default=["reno", "cubic"])
    ap.add_argument("--duration", type=float, default=40.0)
    ap.add_argument("--ack", nargs="+", default=["delayed"], help="the receivers' tcp.ack policies to run")
    args = ap.parse_args()
    print("| classic | ack | k | Prague Mbit/s | classic Mbit/s | Prague wait ms | classic wait ms | W_L·p_L (model 2) | W_C·√p_C (model 1.22) | W_C/W_L | model 0.61·k |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for classic in args.classic:
        for ack in args.ack:
            for k in args.k:
                m = measure(k, classic, args.duration, ack)
                print(
                    f"| {classic} | {ack} | {k:g} | {m['rate_L']:.1f} | {m['rate_C']:.1f} | {m['wait_L']:.2f} | {m['wait_C']:.1f} | "
                    f"{m['const_L']:.2f} | {m['const_C']:.2f} | {m['ratio']:.2f} | {m['model']:.2f} |"
                )


if __name__ == "__main__":
    main()
