"""Runs per minute per worker of ``startlab evaluate`` on local workers and on a Dask cluster
started as users start one (a ``dask scheduler`` process and a ``dask worker`` process with N
single-threaded worker processes), on a sample of the full suite; checks that both give the same
stored tables; reports the workers' peak memory. docs/PERFORMANCE.md#evaluation-suites.

    python bench/evaluate_dask.py [--paths 6] [--workers 2] [--repeat 2]

The sample: the full suite's file with each drawn class cut to its first ``--paths`` paths (the
same paths the full suite draws first: each class draws from its own stream), one seed, one
contestant (search) against the five default baselines."""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from startlab.evaluate import core, suite as suites  # noqa: E402
from startlab.sweep.run import connect_db  # noqa: E402


def sample(paths: int) -> str:
    text = (suites.SUITES_DIR / "full.toml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^count = \d+$", f"count = {paths}", text)  # path classes only: workloads have no count key
    return text.replace("seeds = 3", "seeds = 1")


#: What identifies a run across two report directories (a run's key and resolved scenario name
#: its generated trace by absolute path, which differs between them).
_RUN = "algorithm, path, workload, item, replicate"


def tables(db: Path) -> tuple[object, object]:
    con = connect_db(db, read_only=True)
    try:
        return (con.execute(f"SELECT * EXCLUDE (key, scenario, wall_s, finished_at) FROM runs ORDER BY {_RUN}").df(),
                con.execute(f"SELECT {_RUN}, f.* EXCLUDE (key) FROM flows f JOIN runs USING (key) ORDER BY {_RUN}, flow").df())  # fmt: skip
    finally:
        con.close()


def peak_rss_mib(root: int) -> float:
    """The largest VmHWM among ``root``'s descendant processes (the Dask worker processes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    peak, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            status = (Path("/proc") / str(pid) / "status").read_text()
        except OSError:
            continue
        m = re.search(r"VmHWM:\s+(\d+) kB", status)
        if m and pid != root:
            peak = max(peak, int(m.group(1)))
    return peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=6, help="paths per drawn class of the full suite")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="rounds of local then Dask")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        suite_file = tmp / "full-sample.toml"
        suite_file.write_text(sample(args.paths), encoding="utf-8")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        address = f"tcp://127.0.0.1:{port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
        dask = str(Path(sys.executable).parent / "dask")
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True, "env": env, "cwd": tmp}
        children = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **quiet)]  # type: ignore[call-overload]
        children.append(subprocess.Popen([dask, "worker", address, "--nworkers", str(args.workers), "--nthreads", "1", "--no-dashboard",
                                          "--local-directory", str(tmp / "dask")], **quiet))  # type: ignore[call-overload]  # fmt: skip
        measured: list[tuple[str, float, dict]] = []
        try:
            from distributed import Client

            for _ in range(120):
                try:
                    with Client(address, timeout="5s") as client:
                        client.wait_for_workers(args.workers, timeout=60)
                    break
                except OSError:
                    time.sleep(0.5)
            # Alternate the backends: this VM's load from other jobs varies by the minute.
            for round_ in range(args.repeat):
                for name, where in (("local -j", {"jobs": args.workers}), ("dask", {"dask": address})):
                    started = time.perf_counter()
                    doc = core.evaluate(["search"], suite_file, out=tmp / f"{name.split()[0]}-{round_}", progress=False, **where)
                    measured.append((name, time.perf_counter() - started, doc))
            peak = peak_rss_mib(children[1].pid)
        finally:
            for child in children:
                os.killpg(child.pid, signal.SIGTERM)
            for child in children:
                child.wait(timeout=30)
        runs = measured[0][2]["runs"]["total"]
        same = all(a.equals(b) for a, b in zip(tables(tmp / "local-0" / "evaluate.duckdb"), tables(tmp / "dask-0" / "evaluate.duckdb")))
        print(f"{runs} runs ({args.paths} paths per drawn class of the full suite, 1 seed, search + 5 baselines)")
        for name, seconds, doc in measured:
            per_min = 60 * doc["ran"] / doc["seconds"]
            print(f"{name:8} {args.workers} workers: {seconds:6.1f} s in all, runs {doc['seconds']:.1f} s: {per_min:.0f} runs/min, {per_min / args.workers:.0f} per worker")
        print(f"identical tables: {same}; Dask workers' peak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
