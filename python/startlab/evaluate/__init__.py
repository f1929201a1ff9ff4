"""``startlab evaluate``: the standard benchmark of startup algorithms (docs/EVALUATE.md).

A suite (``suites/*.toml``: a population of paths and workloads, :mod:`.suite`) is sampled from
its seed; every contestant and baseline runs on the same paths with the same seeds (paired runs,
:mod:`.scenarios`, :mod:`.run`) through the sweep machinery (local workers or Dask, DuckDB,
resumable); :mod:`.stats` compares each contestant with each baseline per region with a paired
bootstrap, and :mod:`.report` writes the HTML report and the JSON.
"""

from __future__ import annotations
