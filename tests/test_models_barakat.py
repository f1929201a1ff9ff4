"""Barakat & Altman's model against the worked examples of shared/spec/ALGORITHMS.md §18.2 and
§5.4 (DBC), and the transfer-time model built on it."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load(name: str):
    """Load one models module from its file: no startlab package, no compiled extension."""
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "python/startlab/models" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


barakat = _load("barakat")

#: (B, d, μT, α, n_B, α^(n_B−1), W_B Theorem 1, W_B eq. 4, W_D = αW_B, W'_th = W_D/8), the table
#: of §18.2 (W_th infinite, so W_D = α·W_B).
WORKED_EXAMPLES = [
    (20, 1, 70, 2.0, 6, 32.0, 52.0, 40.0, 104.0, 13.0),
    (20, 2, 70, 1.5, 11, 57.665, 77.665, 60.0, 116.498, 14.562),
    (70, 1, 70, 2.0, 8, 128.0, 140.0, 140.0, 280.0, 35.0),
    (30, 2, 350, 1.5, 12, 86.498, 116.498, 90.0, 174.746, 21.843),
]
#: The eq. (4) versions of W_D/8 for the same rows.
EQ4_W_TH_AFTER = [10.0, 11.25, 35.0, 16.875]


@pytest.mark.parametrize(
    ("B", "d", "mu_t", "a", "n", "burst", "wb", "wb4", "wd", "after"), WORKED_EXAMPLES
)
def test_matches_the_worked_example(
    B: int,
    d: int,
    mu_t: int,
    a: float,
    n: int,
    burst: float,
    wb: float,
    wb4: float,
    wd: float,
    after: float,
) -> None:
    assert barakat.alpha(d) == a
    assert barakat.n_b(B, d) == n
    assert a ** (n - 1) == pytest.approx(burst, abs=5e-4)
    assert barakat.w_b(B, d, mu_t) == pytest.approx(wb, abs=5e-4)
    assert barakat.w_b_approx(B, d, mu_t) == wb4
    detected = barakat.w_d(np.inf, barakat.w_b(B, d, mu_t), d)
    assert detected == pytest.approx(wd, abs=5e-4)
    assert barakat.w_th_after(detected) == pytest.approx(after, abs=5e-4)


def test_eq4_versions_of_the_threshold_after_recovery() -> None:
    rows = np.array([row[:3] for row in WORKED_EXAMPLES], dtype=float)
    B, d, mu_t = rows.T
    detected = barakat.w_d(np.inf, barakat.w_b_approx(B, d, mu_t), d)
    assert barakat.w_th_after(detected, losses="many").tolist() == EQ4_W_TH_AFTER


def test_is_vectorised() -> None:
    rows = np.array([row[:3] for row in WORKED_EXAMPLES], dtype=float)
    B, d, mu_t = rows.T
    assert barakat.n_b(B, d).tolist() == [6, 11, 8, 12]
    assert barakat.n_b(B, d).dtype.kind == "i"
    assert barakat.w_b(B, d, mu_t) == pytest.approx([52.0, 77.665, 140.0, 116.498], abs=5e-4)
    assert barakat.w_b(20, 1, [10, 32, 70]).tolist() == [30.0, 52.0, 52.0], "min(μT, α^(n_B−1))"


def test_n_b_is_exact_on_a_power_of_alpha() -> None:
    # B(d + 1) = α^n exactly: the upper inequality is "<=", so n_B = n, not n + 1.
    assert barakat.n_b(32, 1) == 6  # 64 = 2^6
    assert barakat.n_b(33, 1) == 7  # 66 > 64
    for B, d in [(9, 2), (27, 2), (81, 2), (243, 2), (100, 3), (1, 1)]:
        n = int(barakat.n_b(B, d))
        a = (d + 1) / d
        target = B * (d + 1)
        # exact check in integers: α^(n−1) < B(d+1) <= α^n  ⇔  (d+1)^(n−1) < B(d+1)·d^(n−1), ...
        assert (d + 1) ** (n - 1) < target * d ** (n - 1)
        assert target * d**n <= (d + 1) ** n
        assert a ** (n - 1) < target * (1 + 1e-12)


def test_n_b_for_alpha_near_one_uses_logarithms() -> None:
    # d = 10 000: the exponent is far above the exact-power limit.
    n = int(barakat.n_b(100, 10_000))
    a = 1 + 1 / 10_000
    assert (n - 1) * math.log(a) < math.log(100 * 10_001) <= n * math.log(a)


def test_w_d_is_capped_by_the_threshold() -> None:
    # W_B < W_th < αW_B: slow start ends at W_th during the detection RTT.
    assert barakat.w_d(60, 52, 1) == 60
    assert barakat.w_d([60, 200, np.inf], 52, 1).tolist() == [60.0, 104.0, 104.0]


def test_second_loss_timeout_quarters_the_window() -> None:
    assert barakat.w_th_after(104, losses="second-rto") == 26.0
    assert barakat.w_th_after(104) == 13.0


@pytest.mark.parametrize(
    ("d", "early", "bdp", "multi"),
    [(1, 350.0, 175.0, 350.0 / 3.0), (2, 175.0, 350.0 / 3.0, 70.0)],
)
def test_buffer_thresholds_for_a_350_packet_bdp(
    d: int, early: float, bdp: float, multi: float
) -> None:
    # §18.2: μT = 350, d = 1 → early overflow iff B < 350, BDP threshold needs B > 175, multi-flow
    # needs B > 116.7; d = 2 → 175, 116.7, 70.
    below, above = early - 0.5, early + 0.5
    assert barakat.early_overflow([below, early, above], d, 350).tolist() == [
        True,
        False,
        False,
    ]
    assert barakat.bdp_threshold_works([bdp - 0.5, bdp + 0.5], d, 350).tolist() == [
        False,
        True,
    ]
    assert barakat.multi_flow_no_early_overflow([multi - 0.5, multi + 0.5], d, 350).tolist() == [
        False,
        True,
    ]
    assert not barakat.bdp_threshold_works(bdp, d, 350), "strict inequality at the boundary"


def test_early_overflow_means_w_b_below_the_pipe() -> None:
    B = np.arange(1, 400)
    for d in (1, 2):
        early = barakat.early_overflow(B, d, 350)
        assert np.array_equal(barakat.w_b_approx(B, d, 350) < B + 350, early)


def test_corollary_1() -> None:
    # W_B = 52 for B = 20, d = 1, μT = 70: a threshold of 50 avoids the overflow, 52 does not.
    assert barakat.overflows_in_slow_start([50, 51.9, 52, np.inf], 20, 1, 70).tolist() == [
        False,
        False,
        True,
        True,
    ]
    # The paper's Figure 4: W_th = 50 with B = 70, d = 1 has no loss; B = 20, d = 2 neither
    # (W_B = 77.7); B = 20, d = 1 overflows (W_B = 52 > 50 only by Theorem 1's rounding; eq. 4's
    # 40 also says so).
    assert not barakat.overflows_in_slow_start(50, 70, 1, 70)
    assert not barakat.overflows_in_slow_start(50, 20, 2, 70)
    assert barakat.w_b_approx(20, 1, 70) < 50


def test_eq7_examples() -> None:
    # μT = 350, 512-byte packets.
    maxima = barakat.w_b_max([70, 20, 70], [1, 1, 2], 350)
    assert maxima.tolist() == [140.0, 40.0, 210.0]
    kbytes = maxima * 512 / 1000
    assert kbytes == pytest.approx([71.68, 20.48, 107.52])
    # OPEN (ALGORITHMS.md §18.2): the paper quotes W_B^max = 106 kB for B = 70, d = 1 and 21 kB for
    # B = 20, d = 1. 21 kB matches the formula (20.5 kB); 106 kB does not (the formula gives
    # 140 packets = 71.7 kB) and is close only to the d = 2 value, 210 packets = 107.5 kB. We test
    # what eq. (7) gives.


def test_eq7_is_eq6_at_half_way() -> None:
    B, mu_t = np.array([20.0, 70.0, 300.0, 500.0]), 350.0
    for d in (1, 2):
        assert barakat.w_b_max(B, d, mu_t) == pytest.approx(
            barakat.w_b_multi(B, d, mu_t, (B + mu_t) / 2)
        )


def test_eq6_example() -> None:
    # B = 20, d = 1, μT = 350, N = 300 → 20 + min(50, 20) = 40.
    assert barakat.w_b_multi(20, 1, 350, 300) == 40.0
    assert barakat.w_b_multi(20, 1, 350, [0, 300, 340, 360, 370]).tolist() == [
        40,
        40,
        30,
        10,
        0,
    ]


def test_dbc_vectors() -> None:
    # §5.4: d_max = 2, W_th = 350.
    got = barakat.dbc_d([1, 50, 100, 175, 350], 2, 350)
    assert got == pytest.approx([1.0, 1.1404, 1.2837, 1.4986, 2.0], abs=5e-5)


# The transfer-time model: a fluid model in packets (see the docstring); values are recomputed here
# from its stated rules with math.log, not from the module.
T, MU_T = 0.1, 70.0
MU = MU_T / T


def test_transfer_time_first_rounds() -> None:
    # From window 1 with d = 1: one packet takes one RTT, three take two.
    assert barakat.transfer_time([1, 3, 7], 20, 1, MU_T, T) == pytest.approx([0.1, 0.2, 0.3])
    # d = 2: α = 1.5, one packet grows the window to 1.5; 2.5 packets (a fluid count) take 2 RTTs.
    assert barakat.transfer_time([1, 2.5], 20, 2, MU_T, T) == pytest.approx([0.1, 0.2])


def test_transfer_time_with_overflow() -> None:
    # B = 20, d = 1, μT = 70: W_B = 52, the first drop after 2·52 − 1 = 103 packets, detection at
    # W_D = 104, W'_th = 13.
    s = 200
    to_detection = T * math.log2(MU_T) + (104 - MU_T) / MU
    restart_ss = T * math.log2(13)  # 12 packets delivered
    ca_packets = (s - 103) - 12
    ca = T * (math.sqrt(13**2 + 2 * ca_packets) - 13)
    expected = to_detection + 1.0 + restart_ss + ca
    assert barakat.transfer_time(s, 20, 1, MU_T, T) == pytest.approx(expected, rel=1e-12)
    assert barakat.transfer_time(s, 20, 1, MU_T, T, rto=3.0) == pytest.approx(expected + 2.0)
    # No loss touches a transfer that ends before the first drop; acknowledging its 103 packets
    # takes the window to 104 = W_D, the same time as the detection above.
    assert barakat.transfer_time(103, 20, 1, MU_T, T) == pytest.approx(to_detection, rel=1e-12)


def test_transfer_time_without_overflow() -> None:
    # B = 70, d = 1, W_th = 50 < W_B = 140 (Figure 4): slow start to 50, then CA, no loss.
    s = 200
    expected = T * math.log2(50) + T * (math.sqrt(50**2 + 2 * (s - 49)) - 50)
    assert barakat.transfer_time(s, 70, 1, MU_T, T, w_th=50) == pytest.approx(expected, rel=1e-12)
    # A long transfer reaches the capacity: CA to μT, then μ packets/s.
    s = 10_000
    below = (MU_T**2 - 50**2) / 2
    expected = T * math.log2(50) + T * (MU_T - 50) + (s - 49 - below) / MU
    assert barakat.transfer_time(s, 70, 1, MU_T, T, w_th=50) == pytest.approx(expected, rel=1e-12)


def test_transfer_time_properties() -> None:
    sizes = np.geomspace(1, 1e5, 60)
    for B, d in [(20, 1), (20, 2), (70, 1), (30, 2)]:
        times = barakat.transfer_time(sizes, B, d, MU_T, T)
        assert np.all(np.diff(times) > 0), "more packets take longer"
        assert np.all(times >= sizes / MU), "never faster than the link"
    # The quarter threshold recovers faster than the eighth.
    assert barakat.transfer_time(5000, 20, 1, MU_T, T, losses="second-rto") < barakat.transfer_time(
        5000, 20, 1, MU_T, T, losses="many"
    )
    # eq. (4)'s smaller W_B (40 instead of 52) drops earlier.
    assert barakat.transfer_time(90, 20, 1, MU_T, T, exact=False) > barakat.transfer_time(
        90, 20, 1, MU_T, T
    )
    # Vectorised over the buffer too.
    got = barakat.transfer_time(200, [20, 70], 1, MU_T, T, w_th=50)
    assert got[1] == pytest.approx(barakat.transfer_time(200, 70, 1, MU_T, T, w_th=50))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: barakat.alpha(0.5), "d"),
        (lambda: barakat.n_b(0, 1), "B"),
        (lambda: barakat.n_b(10, np.nan), "d"),
        (lambda: barakat.w_b(20, 1, 0), "mu_t"),
        (lambda: barakat.w_b_approx(-1, 1, 70), "B"),
        (lambda: barakat.w_b_multi(20, 1, 350, 400), "n"),
        (lambda: barakat.w_b_multi(20, 1, 350, -1), "n"),
        (lambda: barakat.w_b_max(20, 0, 350), "d"),
        (lambda: barakat.w_d(0, 52, 1), "w_th"),
        (lambda: barakat.w_d(np.inf, -1, 1), "w_b"),
        (lambda: barakat.w_th_after(104, losses="few"), "losses"),
        (lambda: barakat.w_th_after(0), "w_d"),
        (lambda: barakat.early_overflow(20, 1, -5), "mu_t"),
        (lambda: barakat.dbc_d(0.5, 2, 350), "W"),
        (lambda: barakat.dbc_d(10, 0.5, 350), "d_max"),
        (lambda: barakat.dbc_d(10, 2, np.inf), "w_th"),
        (lambda: barakat.dbc_d(10, 2, 1), "w_th"),
        (lambda: barakat.transfer_time(0, 20, 1, 70, 0.1), "S"),
        (lambda: barakat.transfer_time(10, 20, 1, 70, 0), "T"),
        (lambda: barakat.transfer_time(10, 20, 1, 70, 0.1, rto=-1), "rto"),
        (lambda: barakat.transfer_time(10, 20, 1, 70, 0.1, losses="x"), "losses"),
        (lambda: barakat.transfer_time(10, 20, 1, 70, 0.1, w_th=0.5), "w_th"),
    ],
)
def test_bad_input_names_the_parameter(call, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} = "):
        call()


def test_multi_flow_exact_form_uses_theorem_1_burst() -> None:
    # B = 20, d = 1: alpha^(n_B - 1) = 32 where eq. (6) has B*d = 20.
    exact = barakat.w_b_multi(20, 1, 70, [0, 40, 50, 60], exact=True).tolist()
    assert exact == [52.0, 50.0, 40.0, 30.0]
    assert barakat.w_b_multi(20, 1, 70, [0, 40, 50, 60]).tolist() == [40.0, 40.0, 40.0, 30.0]
    # N = 0 is the single-flow Theorem 1.
    assert barakat.w_b_multi(30, 2, 350, 0, exact=True) == pytest.approx(barakat.w_b(30, 2, 350))
