"""Scharf eqs. (1)-(2) against the worked examples of shared/spec/ALGORITHMS.md §18.1."""

from __future__ import annotations

import numpy as np
import pytest

from startlab.models import psi, scharf, t_ss

#: r = 10 Mbit/s, τ = 0.2 s, L = 1448 B, MTU = 1500 B (R = 1 206 666.67 B/s, BDP = 166.7 segments).
PATH = {"r": 10e6, "tau": 0.2, "L": 1448, "mtu": 1500}

#: (s in bytes, w, b, ψ, T_SS in s), the table of §18.1; w = 83 is Initial-Start.
WORKED_EXAMPLES = [
    (10_000, 3, 1, 1, 0.205887),
    (100_000, 3, 1, 4, 0.833673),
    (100_000, 3, 2, 6, 1.215260),
    (1_000_000, 3, 1, 6, 1.809129),
    (1_000_000, 10, 1, 5, 1.462729),
    (2_000_000, 3, 1, 6, 2.637859),
    (100_000, 83, 1, 0, 0.082873),
    (1_000_000, 83, 1, 2, 0.932329),
]


@pytest.mark.parametrize(("s", "w", "b", "expected_psi", "expected_t"), WORKED_EXAMPLES)
def test_matches_the_worked_example(
    s: int, w: int, b: int, expected_psi: int, expected_t: float
) -> None:
    assert psi(s, w=w, b=b, **PATH) == expected_psi
    assert t_ss(s, w=w, b=b, **PATH) == pytest.approx(expected_t, abs=5e-7)


def test_is_vectorised_over_the_transfer_size() -> None:
    sizes = np.array([10_000, 100_000, 1_000_000, 2_000_000])
    expected = [0.205887, 0.833673, 1.809129, 2.637859]
    assert t_ss(sizes, **PATH) == pytest.approx(expected, abs=5e-7)
    assert psi(sizes, **PATH).tolist() == [1, 4, 6, 6]
    assert psi(sizes, **PATH).dtype.kind == "i", "ψ counts rounds"


def test_a_transfer_that_fits_in_the_initial_window_takes_s_over_r() -> None:
    # ⌈s/L⌉ = w = 3 segments: no round is completely used (ψ = 0), and eq. (1), which counts from
    # the first transmission and leaves out τ for the request, reduces to s/R.
    assert psi(3 * 1448, **PATH) == 0
    assert t_ss(3 * 1448, **PATH) == pytest.approx(3 * 1448 / (1448 / 1500 * 10e6 / 8))


def test_an_exact_power_of_gamma_is_not_pushed_up_a_round() -> None:
    # 21 segments with w = 3, b = 1: rounds of 3, 6, 12 carry exactly 21, so log2(21/3 + 1) - 1 = 2.
    assert psi(21 * 1448, **PATH) == 2


@pytest.mark.parametrize("bad", [{"r": 0}, {"tau": -1.0}, {"w": 0}, {"b": 0}, {"L": -1}])
def test_impossible_parameters_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        t_ss(10_000, **{**PATH, **bad})


# ALGORITHMS.md §18.1 worked examples of the paced schemes (r = 10 Mb/s, tau = 0.2 s, L = 1448,
# MTU = 1500, b = 1).
PATH = {"r": 10e6, "tau": 0.2}


@pytest.mark.parametrize(
    ("size", "paced", "quick_start"),
    [
        (10_000, 0.016186, 0.216186),
        (100_000, 0.161861, 0.361861),
        (1_000_000, 0.926329, 1.126329),
        (2_000_000, 1.755059, 1.955059),
    ],
)
def test_quick_start_at_5_12_mbps_matches_the_worked_examples(size, paced, quick_start):
    from startlab.models import t_paced, t_qs

    r0 = (1448 / 1500) * 5.12e6 / 8
    assert float(t_paced(size, r0=r0, **PATH)) == pytest.approx(paced, abs=1e-6)
    assert float(t_qs(size, q=5.12e6, **PATH)) == pytest.approx(quick_start, abs=1e-6)


@pytest.mark.parametrize(
    ("size", "expected"), [(10_000, 0.2), (65_536, 0.2), (100_000, 0.252588), (1_000_000, 1.065794)]
)
def test_jump_start_with_u_64_kib_matches_the_worked_examples(size, expected):
    from startlab.models import t_js

    assert float(t_js(size, u=65_536, **PATH)) == pytest.approx(expected, abs=1e-6)


def test_more_start_at_the_path_rate_and_initial_start_match_the_worked_examples():
    from startlab.models import t_is, t_ms

    q = 10e6  # R0 = R
    assert float(t_ms(100_000, q=q, **PATH)) == pytest.approx(0.082873, abs=1e-6)
    assert float(t_ms(1_000_000, q=q, **PATH)) == pytest.approx(0.828729, abs=1e-6)
    assert float(t_is(100_000, w=83, **PATH)) == pytest.approx(0.082873, abs=1e-6)
    assert float(t_is(1_000_000, w=83, **PATH)) == pytest.approx(0.932329, abs=1e-6)


def test_paced_models_are_vectorised_over_the_size():
    from startlab.models import t_js

    sizes = np.array([10_000, 100_000, 1_000_000])
    assert np.allclose(t_js(sizes, **PATH), [0.2, 0.252588, 1.065794], atol=1e-6)


def test_the_response_time_adds_the_request_rtt_to_each_scheme() -> None:
    # ALGORITHMS.md §18.1: response time = tau + T_x(s); e.g. 100 000 B by slow start, w = 3:
    # 0.2 + 0.833673 s. Quick-Start's T_QS = T_Paced + tau already holds the request's round trip:
    # 1 MB at 5.12 Mb/s takes T_QS = 1.126329 s (the simulator: 1.130 s), not tau + T_QS.
    assert scharf.response_time(100_000, scheme="ss", r=10e6, tau=0.2, w=3) == pytest.approx(1.033673, abs=1e-6)
    assert scharf.response_time(1_000_000, scheme="qs", r=10e6, tau=0.2, q=5.12e6) == pytest.approx(1.126329, abs=1e-6)
    assert scharf.response_time(65_536, scheme="js", r=10e6, tau=0.2) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="scheme 'x' is not known"):
        scharf.response_time(1, scheme="x", r=1e6, tau=0.1)
