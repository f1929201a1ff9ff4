"""What a BPF algorithm's compile-time parameters mean for its Rust version: each ``--param NAME=N``
of ``startlab kernel conform`` becomes the Rust algorithm's startup parameter, so that the
conformance run compares the kernel and Rust versions with the same settings (docs/KERNEL-BPF.md).

``rust_params("bpf-hystart++", {"PRESET": 2})`` is ``{"preset": "msquic"}``; a name the algorithm
does not map raises :class:`ValueError` naming it and the accepted ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import kernelbpf


def _choice(options: tuple[str, ...]) -> Callable[[int], str]:
    def value(n: int) -> str:
        if not 0 <= n < len(options):
            raise ValueError(f"expected 0 to {len(options) - 1} ({', '.join(f'{i} {o}' for i, o in enumerate(options))})")
        return options[n]

    return value


def _flag(n: int) -> bool:
    if n not in (0, 1):
        raise ValueError("expected 0 or 1")
    return bool(n)


#: Per ported algorithm (the Rust name): BPF parameter -> (Rust startup key, its value for N).
MAPPINGS: dict[str, dict[str, tuple[str, Callable[[int], Any]]]] = {
    "lss": {"MAX_SSTHRESH": ("max_ssthresh", lambda n: f"{n}pkt")},
    "smooth-start": {"K": ("k", int), "D": ("d", int), "BYTE_COUNTING": ("counting", _choice(("packet", "byte")))},
    "hystart": {"LOW_SSTHRESH": ("low_ssthresh", lambda n: f"{n}pkt"), "N_SAMPLING": ("n_sampling", int), "GATE_LOW_WINDOW": ("gate_low_window", _flag)},
    "hystart++": {
        # The presets in hystartpp.bpf.c's order, which is hystartpp/decl.rs's PRESETS.
        "PRESET": ("preset", _choice(("rfc9406", "quiche", "msquic", "neqo", "ngtcp2"))),
        "PACED": ("paced", _flag),
        "LOW_WINDOW_GATE": ("low_window_gate", _flag),
        "MIN_RTT_THRESH_US": ("min_rtt_thresh", lambda n: f"{n}us"),
        "MAX_RTT_THRESH_US": ("max_rtt_thresh", lambda n: f"{n}us"),
        "MIN_RTT_DIVISOR": ("min_rtt_divisor", int),
        "N_RTT_SAMPLE": ("n_rtt_sample", int),
        "CSS_GROWTH_DIVISOR": ("css_growth_divisor", int),
        "CSS_ROUNDS": ("css_rounds", int),
        "RTT_SAMPLES": ("rtt_samples", _choice(("per-ack", "per-segment"))),
        "ROUND_MIN": ("round_min", _choice(("all-samples", "first-n"))),
        "CSS_CHECK": ("css_check", _choice(("n-samples", "every-sample", "every-nth-sample", "n-after-entry"))),
        "CSS_BASELINE": ("css_baseline", _choice(("entry-min", "entry-threshold"))),
        "ACK_ORDER": ("ack_order", _choice(("round-growth-sample", "growth-sample-round", "sample-round-growth", "growth-round-sample"))),
        "LATER_SLOW_STARTS": ("later_slow_starts", _choice(("standard", "hystart++"))),
    },
    "paced-start": {"EPSILON_PCT": ("epsilon", lambda n: n / 100)},
    # Careful Resume's saved set is the test harness's (docs/KERNEL-BPF.md): compiled in, and the
    # Rust version's saved_rate / saved_rtt (which refuses one without the other).
    "careful-resume": {
        "SAVED_RATE": ("saved_rate", lambda n: f"{n}bps"),
        "SAVED_RTT_US": ("saved_rtt", lambda n: f"{n}us"),
        "MAX_JUMP": ("max_jump", lambda n: f"{n}pkt"),
        "BETA_PCT": ("beta", lambda n: n / 100),
    },
}


def rust_params(name: str, params: Mapping[str, int]) -> dict[str, Any]:
    """The Rust startup parameters that BPF algorithm ``name``'s compile-time ``params`` stand for."""
    sim = kernelbpf.variant(name).algorithm.sim
    known = MAPPINGS.get(sim, {})
    out: dict[str, Any] = {}
    for key, n in params.items():
        if key not in known:
            accepted = ", ".join(known) or "none"
            raise ValueError(f"--param {key}: not a parameter {name} shares with its Rust version (accepted: {accepted}; the initial ssthresh is --initial-ssthresh)")
        rust_key, convert = known[key]
        try:
            out[rust_key] = convert(n)
        except ValueError as e:
            raise ValueError(f"--param {key}={n}: {e}") from None
    return out
