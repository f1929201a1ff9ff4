"""BBRv3's whole startup (`bbrv3`: STARTUP, DRAIN, hand-over) beside `bbr-startup` and slow start
(docs/algorithms/bbrv3.md, "What to expect").

One flow with 1448-byte segments (1500 on the wire), an ACK per segment and an infinite initial
ssthresh, for 3 s, on three paths:

- deep: 20 Mbit/s, 40 ms, a 1000-packet drop-tail buffer (14 BDP), RFC 6675 SACK recovery;
- shallow: 20 Mbit/s, 40 ms, a 20-packet buffer (0.3 BDP), Linux's recovery (RACK-TLP + PRR);
- l4s: 50 Mbit/s, 2 ms, DualPI2, Accurate ECN (`tcp.ecn = "l4s"`) and Prague avoidance.

For each run: the exit reason, when STARTUP ended (DRAIN's start; the exit itself for the others)
and when startup handed over, DRAIN's rounds, the bottleneck's queue at both moments (packets),
the window handed over over the BDP, drops and timeouts.

    python bench/bbrv3_startup.py [--path deep shallow l4s]
"""

from __future__ import annotations

import argparse
import math

import startlab

PATHS = {
    "deep": ("20Mbps", "40ms", '{ kind = "droptail", limit = "1000pkt" }', 'recovery = "sack"'),
    "shallow": ("20Mbps", "40ms", '{ kind = "droptail", limit = "20pkt" }', 'recovery = "linux"'),
    "l4s": ("50Mbps", "2ms", '{ kind = "dualpi2" }', 'congestion_avoidance = "prague", ecn = "l4s"'),
}

STARTUPS = [
    'algorithm = "bbrv3"',
    'algorithm = "bbrv3", drain_pacing_gain = 0.3466, drain_max_rounds = 0, full_bw_check = "every-ack"',
    'algorithm = "bbrv3", full_loss_cnt = 0',
    'algorithm = "bbr-startup"',
    'algorithm = "slow-start"',
]


def scenario(path: str, startup: str) -> str:
    rate, rtt, queue, tcp = PATHS[path]
    return f"""
seed = 1
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate}"
rtt = "{rtt}"
access_rate = "10Gbps"
queue = {queue}
[[flows]]
name = "f"
tcp = {{ {tcp}, mss = "1448B", header = "52B", ack = "every-packet", initial_ssthresh = "infinite" }}
startup = {{ {startup} }}
"""


def queue_at(queue, t: float) -> int:
    """The bottleneck's queue (packets) at `t` s: its last change at or before it."""
    rows = queue[(queue["link"] == "bottleneck:left->right") & (queue["time"] <= t)]
    return int(rows["packets"].iloc[-1]) if len(rows) else 0


def measure(path: str, startup: str) -> dict[str, object]:
    r = startlab.run(scenario(path, startup), progress=False)
    f = r.flows.iloc[0]
    exit_t = f.startup_exit_time
    drain = f.get("bbrv3_drain_start", math.nan)
    start = exit_t if drain is None or math.isnan(drain) else drain
    rounds = f.get("bbrv3_drain_rounds", math.nan)
    return {
        "reason": f.exit_reason,
        "startup_end": start,
        "handover": exit_t,
        "drain_rounds": rounds,
        "q_startup_end": queue_at(r.traces.queue, start),
        "q_handover": queue_at(r.traces.queue, exit_t),
        "window_bdp": f.overshoot,
        "drops": int(f.drops),
        "timeouts": int(f.timeouts),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--path", nargs="+", choices=list(PATHS), default=list(PATHS))
    args = ap.parse_args()
    print("| path | startup | exit reason | STARTUP ends (s) | hand-over (s) | DRAIN rounds | queue then (pkts) | queue at hand-over | window / BDP | drops | timeouts |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in args.path:
        for startup in STARTUPS:
            m = measure(path, startup)
            rounds = "" if m["drain_rounds"] is None or math.isnan(m["drain_rounds"]) else f"{m['drain_rounds']:.0f}"
            print(
                f"| {path} | `{startup.removeprefix('algorithm = ')}` | {m['reason']} | {m['startup_end']:.3f} | {m['handover']:.3f} | {rounds} "
                f"| {m['q_startup_end']} | {m['q_handover']} | {m['window_bdp']:.2f} | {m['drops']} | {m['timeouts']} |"
            )


if __name__ == "__main__":
    main()
