"""Memory of a long closed-loop run with and without streaming the transfer rows out
(docs/PERFORMANCE.md, "Memory with many transfers"): 2000 users of 20 kB transfers and 0.1 s
think times on the users-1000 path, for DURATION simulated seconds (default 200). Each mode runs
in its own process; prints the transfers, the wall time, the resident memory when the engine
finished and the peak resident memory of the whole call (the streamed mode's final sort included).

    python bench/transfer_memory.py [DURATION]
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, tempfile, time, pathlib
import startlab
from startlab import bench

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

doc = bench.users(2000, sys.argv[1] + "s")
doc = doc.replace('size = { dist = "pareto", mean = "1MB", shape = 1.2, cutoff = "100MB" }', 'size = { dist = "fixed", value = "20kB" }')
doc = doc.replace('think = "1s"', 'think = "0.1s"')
stream = sys.argv[2] == "stream"
began = time.perf_counter()
with tempfile.TemporaryDirectory() as d:
    sim, sink = startlab._simulate(doc, progress=False, transfers=pathlib.Path(d) / "t.parquet" if stream else None)
    engine = resident()
    raw = sim.results()
    if stream:
        n = sink.finish(raw)
    else:
        n = len(startlab.Result._from_native(raw, sim.stats()).transfers)
    wall = time.perf_counter() - began
print(json.dumps({"mode": sys.argv[2], "transfers": n, "wall": wall, "engine_mib": engine,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    duration = sys.argv[1] if len(sys.argv) > 1 else "200"
    for mode in ("memory", "stream"):
        out = subprocess.run([sys.executable, "-c", CHILD, duration, mode], check=True, capture_output=True, text=True)
        row = json.loads(out.stdout)
        print(
            f"{row['mode']:>7}: {row['transfers']:>9,} transfers  {row['wall']:6.1f} s  "
            f"engine done {row['engine_mib']:5.0f} MiB  peak {row['peak_mib']:6.0f} MiB"
        )


if __name__ == "__main__":
    main()
