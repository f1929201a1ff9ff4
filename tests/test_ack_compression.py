"""Interrupt coalescing (``coalesce``) compresses ACKs: packet-pair capacity estimates go up (the
HyStart paper's Fig. 2e, 2.6-3x on a real path) or down, depending on where the batching is."""

from __future__ import annotations

import pytest

import startlab

BASE = """
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

#: The bottleneck's payload rate: 1448 B every 1500 B of wire time at 100 Mb/s.
PAYLOAD_RATE = 100e6 * 1448 / 1500


def capacity(impairments: str) -> float:
    flow = startlab.run(BASE + impairments, progress=False).flows.iloc[0]
    return float(flow["pp_capacity"])


def test_without_impairments_packet_pair_measures_the_bottleneck() -> None:
    assert capacity("") == pytest.approx(PAYLOAD_RATE, rel=0.01)


def test_coalescing_at_the_receiver_over_estimates_by_the_ack_paths_speed() -> None:
    coalesce = '[[impairments]]\nlink = "access-d0"\ncoalesce = { timeout = "150us" }\n'
    # Batched segments are ACKed back to back: 52-byte ACKs 0.416 us apart at 1 Gb/s.
    assert capacity(coalesce) > 10 * PAYLOAD_RATE
    # A 10 Mb/s uplink spaces them 41.6 us apart: 1448 B / 41.6 us = 2.9x (the paper's 2.6-3x).
    slow_uplink = '[[impairments]]\nlink = "access-d0"\ndirection = "reverse"\nrate = [["0s", "10Mbps"]]\n'
    ratio = capacity(coalesce + slow_uplink) / PAYLOAD_RATE
    assert ratio == pytest.approx(1448 * 8 / (52 * 8 / 10e6) / PAYLOAD_RATE, rel=0.02)
    assert 2.6 <= ratio <= 3.0
    # The uplink alone does not compress anything.
    assert capacity(slow_uplink) == pytest.approx(PAYLOAD_RATE, rel=0.01)


def test_batching_acks_at_the_sender_or_jitter_under_estimates() -> None:
    at_sender = '[[impairments]]\nlink = "access-s0"\ndirection = "reverse"\ncoalesce = { timeout = "150us" }\n'
    assert capacity(at_sender) < 0.7 * PAYLOAD_RATE
    jitter = '[[impairments]]\nlink = "access-d0"\njitter = { kind = "uniform", max = "300us", reorder = false }\n'
    assert capacity(jitter) < 0.9 * PAYLOAD_RATE


def test_batches_open_with_the_traffic_and_a_frames_cap_splits_them() -> None:
    # A probe train of 10 packets 10 us apart into a receiver that coalesces for 1 ms: every packet
    # of a batch arrives at the batch's release, first arrival + 1 ms; frames = 3 caps each batch.
    text = """
seed = 1
duration = "1s"
[topology]
kind = "dumbbell"
bottleneck_rate = "1Gbps"
rtt = "10ms"
access_rate = "10Gbps"
queue = { kind = "droptail", limit = "100pkt" }
[[cross]]
name = "probe"
kind = "train"
packets = 10
packet_size = "100B"
gaps = ["10us"]
[[impairments]]
link = "access-xd0"
coalesce = { timeout = "1ms", frames = FRAMES }
"""
    for frames, sizes in ((3, [3, 3, 3, 1]), (100, [10])):
        packets = startlab.run(text.replace("FRAMES", str(frames)), progress=False).probe_packets
        batches = packets.groupby("received", sort=True)["index"].apply(list).tolist()
        assert [len(b) for b in batches] == sizes
        assert sum(batches, []) == list(range(10)), "in order"
        first = packets.groupby("received")["sent"].min()
        # Released 1 ms after its first packet reached the far node (one-way trip ~5 ms).
        assert ((first.index - first.to_numpy()) > 0.001).all()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('coalesce = { timeout = "0s" }', r"impairments\[0\]\.coalesce\.timeout: must be longer than 0s"),
        ('coalesce = { timeout = "1ms", frames = 0 }', r"impairments\[0\]\.coalesce\.frames: must be at least 1 packet"),
        ('coalesce = { timeout = "1ms" }\naggregate = { interval = "1ms" }', r"impairments\[0\]\.coalesce: give aggregate or coalesce"),
        ('coalesce = { after = "1ms" }', r"unknown field `after`"),
    ],
)
def test_bad_coalescing_is_refused(table: str, message: str) -> None:
    with pytest.raises(startlab.ScenarioError, match=message):
        startlab.validate(BASE + f'[[impairments]]\nlink = "access-d0"\n{table}\n')
