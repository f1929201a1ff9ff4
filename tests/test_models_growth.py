"""Slow-start and Smooth-start times against shared/spec/ALGORITHMS.md §6.8 (and §18.4)."""

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


growth = _load("growth")

#: (ssthresh, RTT, k, d, T_SS, T_Smooth, T_Smooth − 3RTT), the table of §6.8.
TABLE = [
    (64, 0.1, 3, 2, 0.6000, 1.0000, 0.7000),
    (64, 0.1, 2, 1, 0.6000, 0.7000, 0.4000),
    (20, 0.1, 3, 2, 0.4322, 0.8322, 0.5322),
]


@pytest.mark.parametrize(("ssthresh", "rtt", "k", "d", "t_ss", "t_smooth", "t_iw"), TABLE)
def test_matches_the_table(
    ssthresh: int, rtt: float, k: int, d: int, t_ss: float, t_smooth: float, t_iw: float
) -> None:
    assert growth.slow_start_time(ssthresh, rtt) == pytest.approx(t_ss, abs=5e-5)
    assert growth.smooth_start_time(ssthresh, rtt, d, k) == pytest.approx(t_smooth, abs=5e-5)
    # The paper's larger-initial-window formula, "− 3RTT", applied literally.
    assert growth.smooth_start_time(ssthresh, rtt, d, k, saved_rtts=3) == pytest.approx(
        t_iw, abs=5e-5
    )


def test_other_slow_start_checks() -> None:
    assert growth.slow_start_time(20000, 0.080) == pytest.approx(1.1430, abs=5e-5)
    assert growth.slow_start_time(20, 0.040) == pytest.approx(0.1729, abs=5e-5)


def test_is_vectorised() -> None:
    ssthresh, rtt, k, d = (np.array(column) for column in list(zip(*TABLE))[:4])
    assert growth.slow_start_time(ssthresh, rtt) == pytest.approx([0.6, 0.6, 0.4322], abs=5e-5)
    assert growth.smooth_start_time(ssthresh, rtt, d, k) == pytest.approx(
        [1.0, 0.7, 0.8322], abs=5e-5
    )


def test_rounds_are_not_rounded_up() -> None:
    # §6.8: 0.1·log2(20) = 0.4322 s, a fractional 4.32 rounds.
    assert growth.slow_start_rounds(20) == pytest.approx(math.log2(20))
    assert growth.slow_start_rounds(64) == 6.0


def test_table_1_extra_rtts() -> None:
    # Coarse-2 (k=2, d=1), Fine-2 (k=3, d=1), Coarse-4 (k=2, d=2), Fine-4 (k=3, d=2).
    assert growth.smooth_start_extra_rtts([1, 1, 2, 2], [2, 3, 2, 3]).tolist() == [
        1,
        2,
        2,
        4,
    ]
    assert growth.smooth_start_extra_rtts(0, 3) == 0, "d = 0 is slow start"
    assert growth.smooth_start_extra_rtts(2, 1) == 0, "k = 1 is slow start"


def test_fluid_trace_of_fine_4() -> None:
    # §6.8: ssthresh 64, k = 3, d = 2: 1, 2, 4, 8, 16, 21.33, 26.67, 32, 42.67, 53.33, 64 → 10 RTTs.
    assert growth.smooth_start_time(64, 1.0, 2, 3) == pytest.approx(10.0)
    assert growth.slow_start_rounds(64) + growth.smooth_start_extra_rtts(2, 3) == 10


def test_smooth_start_degenerates_to_slow_start() -> None:
    thresholds = np.array([4.0, 20.0, 64.0, 20000.0])
    for d, k in [(0, 3), (2, 1)]:
        assert growth.smooth_start_time(thresholds, 0.1, d, k) == pytest.approx(
            growth.slow_start_time(thresholds, 0.1)
        )


def test_larger_initial_window() -> None:
    # w segments save log2(w) RTTs of the pouring sub-phase.
    assert growth.slow_start_time(64, 0.1, w=4) == pytest.approx(0.4)
    assert growth.smooth_start_time(64, 0.1, 2, 3, w=4) == pytest.approx(0.8)
    # w = 8 saves exactly the paper's 3 RTTs while the separator (16 here) is at least 8.
    assert growth.smooth_start_time(64, 0.1, 2, 3, w=8) == pytest.approx(0.7)
    assert growth.smooth_start_time(64, 0.1, 1, 2, w=8) == pytest.approx(0.4)
    # The initial window reaching ssthresh: no slow start.
    assert growth.slow_start_rounds(10, w=16) == 0.0


def test_delayed_acks_grow_by_one_and_a_half() -> None:
    # b = 2: γ = 1 + 1/2, so 1.5^n.
    assert growth.slow_start_rounds(1.5**10, b=2) == pytest.approx(10.0)
    assert growth.slow_start_time(64, 0.1, b=2) == pytest.approx(0.1 * math.log(64) / math.log(1.5))
    assert growth.slow_start_time(64, 0.1, w=4, b=2) == pytest.approx(
        0.1 * math.log(16) / math.log(1.5)
    )
    assert growth.slow_start_time(64, 0.1, b=1) == growth.slow_start_time(64, 0.1)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: growth.slow_start_rounds(0), "ssthresh"),
        (lambda: growth.slow_start_rounds(np.inf), "ssthresh"),
        (lambda: growth.slow_start_rounds(64, w=0), "w"),
        (lambda: growth.slow_start_rounds(64, b=0), "b"),
        (lambda: growth.slow_start_time(64, -0.1), "rtt"),
        (lambda: growth.smooth_start_extra_rtts(-1, 2), "d"),
        (lambda: growth.smooth_start_extra_rtts(1.5, 2), "d"),
        (lambda: growth.smooth_start_extra_rtts(1, 0), "k"),
        (lambda: growth.smooth_start_extra_rtts(1, 2.5), "k"),
        (lambda: growth.smooth_start_time(20, 0.1, 2, 3, w=8), "w"),
        (lambda: growth.smooth_start_time(64, 0.1, 2, 3, saved_rtts=-1), "saved_rtts"),
        (lambda: growth.smooth_start_time(64, np.nan, 2, 3), "rtt"),
    ],
)
def test_bad_input_names_the_parameter(call, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} = "):
        call()
