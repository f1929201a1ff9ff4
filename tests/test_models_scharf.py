"""Scharf eqs. (1)-(2) against the worked examples of shared/spec/ALGORITHMS.md §18.1."""

from __future__ import annotations

import numpy as np
import pytest

from startlab.models import psi, t_ss

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
