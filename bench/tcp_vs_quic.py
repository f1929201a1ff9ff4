"""The same startup over TCP and over QUIC (issue 35, docs/QUIC.md "TCP against QUIC").

Two paths: the Paced Start paper's default (100 Mbit/s, 80 ms, a 1000-packet drop-tail buffer,
40 Mbit/s of CBR cross traffic) and 1 Gbit/s / 100 ms with a one-BDP buffer. On each, every
startup listed runs a 20 MB transfer (CUBIC after it) once over TCP as Linux runs it (IW 10,
RACK-TLP with PRR, quick-ACK then delayed ACKs, no pacing: CUBIC does not ask for it) and once over QUIC with RFC 9002's defaults
(1472-byte datagrams, handshake, ACK every second packet, pacing at 1.25·cwnd/srtt). Prints a
Markdown table: exit reason, time from the first data byte and window at the exit (in full-size
packets and in MB), the startup's losses, all drops and the completion time.

    python bench/tcp_vs_quic.py [--startups slow-start,hystart++,...]
"""

from __future__ import annotations

import argparse

import startlab

PATHS = {
    "paced-start default (100 Mbit/s, 80 ms, 1000 pkts, 40 Mbit/s CBR)": (
        'bottleneck_rate = "100Mbps"\nrtt = "80ms"\naccess_rate = "1Gbps"\nqueue = { kind = "droptail", limit = "1000pkt" }',
        '[[cross]]\nkind = "cbr"\nrate = "40Mbps"\npacket_size = "1000B"\n',
    ),
    "1 Gbit/s, 100 ms, one BDP (8333 pkts)": (
        'bottleneck_rate = "1Gbps"\nrtt = "100ms"\naccess_rate = "10Gbps"\nqueue = { kind = "droptail", limit = "8333pkt" }',
        "",
    ),
}

#: The transfer on each path: enough to leave startup (about 5 BDPs).
SIZES = {name: size for name, size in zip(PATHS, ("20MB", "200MB"))}

STARTUPS = ("slow-start", "hystart-linux", "hystart++", "search", "suss", "bbrv3")

TCP = 'tcp = { congestion_avoidance = "cubic", recovery = "linux", ack = "linux", initial_window = 10 }'
QUIC = 'quic = {}\ntcp = { congestion_avoidance = "cubic" }'


def scenario(path: str, cross: str, transport: str, startup: str, size: str) -> str:
    return f"""\
seed = 1
duration = "30s"
[topology]
kind = "dumbbell"
{path}
[[flows]]
name = "f"
size = "{size}"
{transport}
startup = {{ algorithm = "{startup}" }}
{cross}
[trace]
cwnd = false
seq = false
queue = false
"""


def row(path: str, cross: str, transport: str, startup: str, size: str) -> dict:
    r = startlab.run(scenario(path, cross, QUIC if transport == "QUIC" else TCP, startup, size), progress=False)
    return r.flows.iloc[0].to_dict()


def fmt(x: float | None, spec: str) -> str:
    return "–" if x is None or x != x else format(x, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--startups", default=",".join(STARTUPS))
    args = ap.parse_args()
    for name, (path, cross) in PATHS.items():
        size = SIZES[name]
        print(f"\n**{name}**, {size} per transfer\n")
        print("| startup | transport | exit | exit at (s after t0) | exit cwnd (1500-B pkts) | startup loss % | drops | completion s |")
        print("|---|---|---|---:|---:|---:|---:|---:|")
        for startup in args.startups.split(","):
            for transport in ("TCP", "QUIC"):
                f = row(path, cross, transport, startup, size)
                exit_at = f["startup_exit_time"] - f["t0"] if f["startup_exit_time"] == f["startup_exit_time"] and f["startup_exit_time"] is not None else None
                # A full packet is 1500 bytes on the wire either way: 1448 + 52 (TCP), 1472 + 28 (QUIC).
                pkts = f["exit_cwnd_pkts"]
                print(
                    f"| {startup} | {transport} | {f['exit_reason']} | {fmt(exit_at, '.3f')} | {fmt(pkts, '.0f')} | "
                    f"{fmt(100 * f['su_loss'] if f['su_loss'] is not None else None, '.2f')} | {f['drops']} | {fmt(f['completion_time'], '.3f')} |"
                )


if __name__ == "__main__":
    main()
