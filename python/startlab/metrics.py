"""Aggregates over flows: the per-group summaries and fairness the multi-flow figures report.

Every per-flow figure comes from the Rust core (docs/RESULTS.md); this module only aggregates.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd


def jain(values: Iterable[float]) -> float:
    """Jain's fairness index ``(Σx)² / (n·Σx²)`` of non-negative values; NaN for none."""
    x = np.asarray([v for v in values if pd.notna(v)], dtype=float)
    if len(x) == 0 or not np.any(x):
        return float("nan")
    if np.any(x < 0):
        raise ValueError("Jain's index needs non-negative values")
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))


def summary(flows: pd.DataFrame, by: str = "startup", measured: bool = True) -> pd.DataFrame:
    """One row per value of ``by`` (see :meth:`startlab.Result.summary` for the columns)."""
    if by not in flows.columns:
        raise KeyError(f"{by!r} is not a column of the flows table; try startup, group, src or dst")
    rows = flows[flows["measured"]] if measured and "measured" in flows.columns else flows
    out = []
    for key, g in rows.groupby(by, sort=True, dropna=False):
        tput = g["throughput"].dropna()
        sent = g["packets_sent"].sum()
        lost_in_startup = (g["loss_in_startup"].fillna(0.0) * g["packets_sent"]).sum()
        out.append(
            {
                by: key,
                "flows": len(g),
                "completed": int(g["completed"].sum()),
                "mean": tput.mean(),
                "median": tput.median(),
                "p5": tput.quantile(0.05),
                "p95": tput.quantile(0.95),
                "completion_median": g["completion_time"].median(),
                "with_loss": float((g["drops"] > 0).mean()),
                "loss_in_startup": lost_in_startup / sent if sent else float("nan"),
                "total_loss": g["drops"].sum() / sent if sent else float("nan"),
                "jain": jain(tput),
            }
        )
    return pd.DataFrame(out)
