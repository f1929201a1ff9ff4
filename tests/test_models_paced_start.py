"""Paced Start's model (Table 2, Figure 5) against the worked examples of ALGORITHMS.md §7.10."""

from __future__ import annotations

import math

import numpy as np
import pytest

from startlab.models import paced_start as past

# (alpha, case, probes g_s/g_B, g_PaSt/g_B, (1/alpha)/g_PaSt) from ALGORITHMS.md §7.10.
VECTORS = [
    (0.95, 1, [2, 1.3333], 1.1429, 0.9211),
    (0.80, 1, [2, 1.3333], 1.1429, 1.0938),
    (0.60, 2, [2, 1.3333], 1.5333, 1.0870),
    (0.50, 2, [2, 1.3333], 1.6667, 1.2000),
    (0.40, 3, [2, 4.4], 2.2000, 1.1364),
    (0.30, 3, [2, 4.8], 2.4000, 1.3889),
    (0.15, 4, [2, 5.4, 11.18], 5.5900, 1.1926),
    (0.10, 4, [2, 5.6, 12.08], 6.0400, 1.6556),
    (0.05, 5, [2, 5.8, 13.02], 26.7380, 0.7480),
]


@pytest.mark.parametrize(("alpha", "case", "probes", "gap", "ratio"), VECTORS)
def test_the_tree_reproduces_the_worked_examples(alpha, case, probes, gap, ratio) -> None:
    c, g, seen = past.walk(alpha)
    assert c == case
    assert g == pytest.approx(gap, abs=1e-4)
    assert seen == pytest.approx(probes, abs=1e-2)
    assert past.overshoot(alpha) == pytest.approx(ratio, abs=1e-4)


def test_the_closed_forms_of_table_2() -> None:
    a = np.array([0.6, 0.3, 0.12, 0.05])
    assert past.exit_gap(a[0]) == pytest.approx(7 / 3 - 4 * a[0] / 3)
    assert past.exit_gap(a[1]) == pytest.approx(3 - 2 * a[1])
    assert past.exit_gap(a[2]) == pytest.approx(1 + 2 * (1 - a[2]) * (3 - 2 * a[2]))
    x = a[3]
    assert past.exit_gap(x) == pytest.approx(2 * (1 + 2 * (1 - x) * (1 + 2 * (1 - x) * (3 - 2 * x))))
    assert list(past.exit_case(a)) == [2, 3, 4, 5]


def test_case_boundaries_with_and_without_the_tolerance() -> None:
    b0 = past.boundaries(0.0)
    assert b0 == pytest.approx([0.080357, (6 - math.sqrt(20)) / 8, 0.5, 0.75], abs=1e-5)
    b5 = past.boundaries(0.05)
    assert b5 == pytest.approx([0.024, 0.133, 0.45, 0.70], abs=1e-3)
    # At the case 4|5 boundary the case-5 overshoot ratio is exactly 0.5 (§7.5).
    assert past.overshoot(b0[0] - 1e-9) == pytest.approx(0.5, abs=1e-5)


def test_table_2_ranges_hold_inside_each_case() -> None:
    for case, ((lo, hi), (rlo, rhi)) in past.TABLE2.items():
        alphas = np.linspace(max(lo, 1e-3), hi, 200)[1:-1]
        cases = past.exit_case(alphas)
        ratio = past.overshoot(alphas)
        inside = cases == case
        assert inside.mean() > 0.95, case  # the printed ranges are rounded (0.19 vs 0.191)
        # Case 1's printed lower end 0.9 is rounded: at alpha -> 1 the ratio is 7/8 (§7.10).
        low = 0.875 if case == 1 else rlo
        assert np.all(ratio[inside] >= low - 1e-9) and np.all(ratio[inside] <= rhi + 1e-9), case


def test_bad_alpha_is_refused_with_the_accepted_range() -> None:
    for bad in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(ValueError, match="0 < alpha <= 1"):
            past.exit_case(bad)
