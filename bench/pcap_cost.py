"""What writing capture files costs (docs/PCAP.md): a scenario run with and without
`pcap=DIR`, alternating, best of N each.

    python bench/pcap_cost.py [SCENARIO] [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import startlab

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", nargs="?", default=str(ROOT / "examples" / "paced-start-default.toml"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    plain, captured = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            t = time.perf_counter()
            startlab.run(args.scenario, progress=False)
            plain.append(time.perf_counter() - t)
            shutil.rmtree(Path(tmp) / "cap", ignore_errors=True)
            t = time.perf_counter()
            r = startlab.run(args.scenario, progress=False, pcap=Path(tmp) / "cap")
            captured.append(time.perf_counter() - t)
            packets = sum(n for _, n in r.pcap_files)
            size = sum(p.stat().st_size for p, _ in r.pcap_files)
    print(f"{args.scenario}: {packets} packets captured in {len(r.pcap_files)} files, {size / 1e6:.0f} MB")
    print(f"run without capture: best {min(plain):.2f} s; with: best {min(captured):.2f} s; ratio {min(captured) / min(plain):.2f}")


if __name__ == "__main__":
    main()
