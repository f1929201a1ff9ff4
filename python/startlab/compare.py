"""Side-by-side runs of one scenario under several startup algorithms.

``startlab.compare(scenario, ["slow-start", "hystart"])`` runs the scenario once per algorithm,
each time with every flow's ``startup`` replaced by that algorithm (its defaults), and gathers one
comparison table and overlaid cwnd plots. The runs are independent: the algorithms do not share
the network (for competing flows, name them on separate ``[[flows]]`` of one scenario instead).
pandas and matplotlib are imported when a comparison is built, not with this module (which
``import startlab`` imports).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from .result import Result


class Comparison:
    """The results of one scenario under several startup algorithms."""

    def __init__(self, results: Mapping[str, Result]) -> None:
        import pandas as pd

        #: One result per algorithm, in the order given.
        self.results: dict[str, Result] = dict(results)
        frames = []
        for name, result in self.results.items():
            frame = result.flows.copy()
            frame.insert(0, "variant", name)
            frames.append(frame)
        #: Every flow of every run, with the algorithm in column ``variant``.
        self.flows: pd.DataFrame = pd.concat(frames, ignore_index=True)

    def __repr__(self) -> str:
        return f"Comparison({', '.join(self.results)})"

    def plot_cwnd(self) -> Figure:
        """cwnd of every run overlaid, over the startup and over the whole run, each flow labelled
        ``algorithm: flow`` with its startup exit marked with the reason, and its path's BDP and
        BDP + buffer (:func:`startlab.plot.cwnd`); with more than four flows in all, each
        algorithm's median flow and the worst su_loss (:func:`startlab.plot.pick`)."""
        import pandas as pd
        from pandas.api.types import union_categoricals

        from . import plot

        traces, facts = [], []
        for name, result in self.results.items():
            fact = plot.startup_facts(result)
            fact["flow"] = f"{name}: " + fact["flow"]
            facts.append(fact)
            trace = result.traces.cwnd.copy()
            trace["flow"] = trace["flow"].cat.rename_categories(lambda flow, name=name: f"{name}: {flow}")
            traces.append(trace)
        trace = pd.concat(traces, ignore_index=True)
        trace["flow"] = union_categoricals([t["flow"] for t in traces])
        scenario = next(iter(self.results.values())).scenario
        return plot.cwnd(trace, pd.concat(facts, ignore_index=True), scenario)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write the comparison table (Parquet, CSV) and the overlaid cwnd plot (PNG, SVG)."""
        from . import plot

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.flows.to_parquet(out / "compare.parquet", index=False)
        self.flows.to_csv(out / "compare.csv", index=False)
        written = [out / "compare.parquet", out / "compare.csv"]
        return written + plot.save(self.plot_cwnd(), out / "compare_cwnd")


def with_startup(scenario: Mapping[str, Any], algorithm: str | type) -> dict[str, Any]:
    """A copy of a scenario document with every flow's startup set to ``algorithm`` (a name, or a
    registered plug-in class, whose module then joins the scenario's ``plugins`` so that sweep
    workers import it)."""
    from .plugin import module_of, name_of

    document = copy.deepcopy(dict(scenario))
    for flow in document.get("flows", []):
        flow["startup"] = {"algorithm": name_of(algorithm)}
    module = None if isinstance(algorithm, str) else module_of(algorithm)
    if module is not None and module not in document.get("plugins", []):
        document["plugins"] = [*document.get("plugins", []), module]
    return document


def compare(
    scenario: str | Path | Mapping[str, Any],
    algorithms: Sequence[str | type],
    *,
    progress: bool | None = None,
) -> Comparison:
    """Run ``scenario`` once per startup algorithm (every flow switched to it): names, or
    registered plug-in classes (:func:`startlab.startup`)."""
    from . import ScenarioError, read_scenario, run, scenario_document
    from .plugin import name_of

    if not algorithms:
        raise ScenarioError("compare needs at least one startup algorithm")
    names = [name_of(a) for a in algorithms]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ScenarioError(f"compare: {', '.join(twice)} named more than once")
    doc = scenario_document(scenario)
    base = None if isinstance(scenario, Mapping) else read_scenario(scenario)[2]
    if not doc.get("flows"):
        raise ScenarioError("flows: compare needs a scenario with at least one [[flows]]")
    return Comparison(
        {name_of(a): run(with_startup(doc, a), progress=progress, base=base) for a in algorithms}
    )
