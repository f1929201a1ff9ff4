"""The experiments of the five papers, one module per paper (importing them registers them), and
beside them the SUSS paper's (issue 34), which is not one of the checklist's 51 items."""

from . import barakat, hystart, paced_start, scharf, smooth_start, suss

__all__ = ["barakat", "hystart", "paced_start", "scharf", "smooth_start", "suss"]
