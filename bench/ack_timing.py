"""The figures of docs/IMPAIRMENTS.md ("ACK compression and packet-pair estimates") and of
docs/SCENARIOS.md ("Receivers of the HyStart paper's era"): ``python bench/ack_timing.py``.

1. The ``packet-pair`` startup's capacity estimate (``pp_capacity``) on 100 Mb/s, 40 ms, 1 Gb/s
   access links, IW 10, an ACK per segment, with and without ACK-compressing impairments.
2. cwnd at 1 s of one CUBIC slow start behind a Linux, FreeBSD or Windows receiver (100 Mb/s,
   100 ms, one-BDP buffer).

tests/test_ack_compression.py and crates/startlab-sim/tests/receivers.rs assert what these show.
"""

from __future__ import annotations

import startlab

PACKET_PAIR = """
seed = 1
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "100Mbps"
rtt = "40ms"
access_rate = "1Gbps"
queue = { kind = "droptail", limit = "1000pkt" }
[[flows]]
name = "f"
tcp = { ack = "every-packet", initial_window = 10, mss = "1448B", header = "52B" }
startup = { algorithm = "packet-pair" }
[trace]
cwnd = false
seq = false
queue = false
"""

IMPAIRMENTS = {
    "none": "",
    "coalesce at the receiver, 150 us": '[[impairments]]\nlink = "access-d0"\ncoalesce = { timeout = "150us" }\n',
    "the same, 10 Mb/s receiver uplink": '[[impairments]]\nlink = "access-d0"\ncoalesce = { timeout = "150us" }\n'
    '[[impairments]]\nlink = "access-d0"\ndirection = "reverse"\nrate = [["0s", "10Mbps"]]\n',
    "coalesce ACKs at the sender, 150 us": '[[impairments]]\nlink = "access-s0"\ndirection = "reverse"\ncoalesce = { timeout = "150us" }\n',
    "uniform jitter on the data path, 300 us": '[[impairments]]\nlink = "access-d0"\njitter = { kind = "uniform", max = "300us", reorder = false }\n',
}

RECEIVER = """
seed = 1
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck_rate = "100Mbps"
rtt = "100ms"
access_rate = "1Gbps"
queue = {{ kind = "droptail", limit = "833pkt" }}
[[flows]]
name = "f"
tcp = {{ ack = "{ack}", congestion_avoidance = "cubic", mss = "1448B", header = "52B" }}
[trace]
seq = false
queue = false
"""


def main() -> None:
    payload = 100e6 * 1448 / 1500
    print("packet-pair capacity estimate (bottleneck payload rate 96.5 Mb/s)")
    for label, impairment in IMPAIRMENTS.items():
        estimate = float(startlab.run(PACKET_PAIR + impairment, progress=False).flows.iloc[0]["pp_capacity"])
        print(f"  {label:42s} {estimate / 1e6:8.1f} Mb/s  {estimate / payload:5.2f}x")
    print("cwnd at 1 s behind each receiver (segments)")
    for ack in ("linux", "freebsd", "windows"):
        cwnd = startlab.run(RECEIVER.format(ack=ack), progress=False).traces.cwnd
        print(f"  {ack:8s} {cwnd[cwnd['time'] <= 1.0]['cwnd'].iloc[-1] / 1448:6.0f}")


if __name__ == "__main__":
    main()
