"""Closed-form models from the startup literature, as vectorised NumPy functions.

Each model restates a paper's equations as shared/spec/ALGORITHMS.md §18 reads them; the
worked examples there are tests.
"""

from . import barakat, growth, paced_start, scharf
from .scharf import psi, t_is, t_js, t_ms, t_paced, t_qs, t_ss

__all__ = [
    "barakat",
    "growth",
    "paced_start",
    "psi",
    "scharf",
    "t_is",
    "t_js",
    "t_ms",
    "t_paced",
    "t_qs",
    "t_ss",
]
