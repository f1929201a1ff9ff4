"""The experiments of the five papers, one module per paper (importing them registers them)."""

from . import barakat, hystart, paced_start, scharf, smooth_start

__all__ = ["barakat", "hystart", "paced_start", "scharf", "smooth_start"]
