"""``startlab reproduce``: every result of the five papers as an experiment with a verdict per
claim (docs/REPRODUCTION.md)."""

from .core import (
    CANNOT_RUN,
    CHECKLIST_PAPERS,
    CONTRADICTS,
    PAPERS,
    REPRODUCED,
    SAME_SHAPE,
    VERDICTS,
    Analysis,
    Claim,
    Data,
    Experiment,
    Outcome,
    ReproduceError,
    experiment,
    experiments,
    get,
    judge,
    load_outcome,
    run,
)

__all__ = [
    "CANNOT_RUN", "CHECKLIST_PAPERS", "CONTRADICTS", "PAPERS", "REPRODUCED", "SAME_SHAPE", "VERDICTS", "Analysis", "Claim", "Data",
    "Experiment", "Outcome", "ReproduceError", "experiment", "experiments", "get", "judge", "load_outcome", "run",
]  # fmt: skip
