"""The testbed's user-space router process: ``python -m startlab.real.router`` runs the Rust router
(crates/startlab-router) inside the router namespace, applying a scenario's bottleneck between two
interfaces. :class:`startlab.real.testbed.Testbed` starts and stops it; the report (JSON on standard
output when it stops) counts every arrival, drop and release, with the drop log and the release
lateness."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m startlab.real.router", description=__doc__)
    parser.add_argument("--scenario", required=True, help="Scenario file (TOML or JSON).")
    parser.add_argument("--setup", required=True, help="Interfaces and stop conditions, as JSON.")
    parser.add_argument("--report", help="Also write the report to this file.")
    args = parser.parse_args(argv)
    from .. import _core, read_scenario

    try:
        text, fmt, directory = read_scenario(Path(args.scenario))
        report = _core.router_run(text, fmt, directory, args.setup)
    except _core.ScenarioError as e:
        print(f"scenario-error: {e}", file=sys.stderr, flush=True)
        return 2
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 2
    if args.report:
        Path(args.report).write_text(report)
    print(report, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
