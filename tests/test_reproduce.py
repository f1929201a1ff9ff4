"""The reproduction suite (``startlab reproduce``, docs/REPRODUCTION.md): every experiment runs in
its reduced form (the CI run of the whole suite), the report holds every experiment's section and
figure as headless Chromium renders it, and the interface is the one scripts depend on."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from startlab import reproduce
from startlab.cli import cli

#: Result rows of each paper in ../shared/spec/REPRODUCTIONS.md (the checklist: 51 items).
CHECKLIST = {"paced-start": 16, "smooth-start": 9, "hystart": 6, "scharf": 9, "barakat": 11}
#: Experiments beside the checklist, not among its 51 items (issue 34: the SUSS paper's result).
BESIDE = {"suss": 1}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float, list[dict]]:
    """``startlab reproduce --all --quick --report DIR``, once for the module."""
    out = tmp_path_factory.mktemp("reproduce")
    began = time.perf_counter()
    got = CliRunner().invoke(cli, ["reproduce", "--all", "--quick", "--report", str(out), "--json", "--no-progress"])
    seconds = time.perf_counter() - began
    assert got.exit_code == 0, got.output
    print(f"\nstartlab reproduce --all --quick: {seconds:.1f} s")
    return out, seconds, json.loads(got.stdout)


def test_the_list_covers_the_checklist() -> None:
    got = CliRunner().invoke(cli, ["reproduce", "--list", "--json"])
    assert got.exit_code == 0, got.output
    listing = json.loads(got.output)
    assert {"name", "paper", "item", "claims", "checklist"} <= set(listing[0])
    names = [e["name"] for e in listing]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", n) for n in names), names
    assert Counter(e["paper"] for e in listing if e["checklist"]) == CHECKLIST
    assert sum(CHECKLIST.values()) == 51
    assert Counter(e["paper"] for e in listing if not e["checklist"]) == BESIDE
    assert all(e["claims"] >= 1 for e in listing)
    # The table says which are which.
    got = CliRunner().invoke(cli, ["reproduce", "--list"])
    assert "51 experiments of the five papers' checklist, 1 beside it" in got.output


def test_every_experiment_gives_a_verdict_per_claim(suite: tuple[Path, float, list[dict]]) -> None:
    _, _, verdicts = suite
    listing = {e.name: e for e in reproduce.experiments()}
    assert [v["name"] for v in verdicts] == list(listing)
    for v in verdicts:
        assert len(v["claims"]) == len(listing[v["name"]].claims), v["name"]
        for c in v["claims"]:
            assert set(c) == {"claim", "paper", "startlab", "verdict", "reason"}
            assert c["verdict"] in reproduce.VERDICTS
            assert c["reason"].strip(), (v["name"], c)
            assert "the analysis failed" not in c["reason"], (v["name"], c["reason"])


def test_every_run_of_the_quick_suite_succeeds(suite: tuple[Path, float, list[dict]]) -> None:
    out, _, _ = suite
    for e in reproduce.experiments():
        outcome = reproduce.load_outcome(out, e.name)
        assert outcome is not None and outcome.quick
        failed = [(r["values"], r["error"]) for r in outcome.runs if r["status"] != "ok"]
        assert not failed, (e.name, failed)


def test_each_experiment_writes_its_figures_as_png_and_svg(suite: tuple[Path, float, list[dict]]) -> None:
    out, _, _ = suite
    for e in reproduce.experiments():
        outcome = reproduce.load_outcome(out, e.name)
        assert outcome is not None
        pngs = [f for f in outcome.figures if f.endswith(".png")]
        assert pngs, f"{e.name} draws no figure"
        for f in pngs:
            assert (out / f).stat().st_size > 1000 and (out / f).with_suffix(".svg").exists()


def test_the_report_renders_every_section_and_figure_in_chromium(suite: tuple[Path, float, list[dict]]) -> None:
    out, _, _ = suite
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium; .ci/run installs it)")
    page = out / "index.html"
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    figures = sum(len([f for f in reproduce.load_outcome(out, e.name).figures if f.endswith(".png")]) for e in reproduce.experiments())  # type: ignore[union-attr]
    body = re.search(r'<body[^>]*data-figures-decoded="(\d+)"[^>]*data-figures="(\d+)"', dom)
    assert body is not None, "the report's script did not run in Chromium"
    assert int(body.group(2)) == figures and int(body.group(1)) == figures, "every figure is decoded"
    for e in reproduce.experiments():
        section = re.search(rf'<section class="experiment" id="{re.escape(e.name)}">(.*?)</section>', dom, re.S)
        assert section is not None, e.name
        assert 'data-decoded="yes"' in section.group(1), f"{e.name}: no figure shown"
        assert e.item.split()[0] in section.group(1)
    # Self-contained: nothing is fetched from anywhere.
    assert not re.search(r'(src|href)="(https?:)?//', page.read_text(encoding="utf-8"))


def test_the_markdown_table_has_a_row_per_claim(suite: tuple[Path, float, list[dict]]) -> None:
    out, _, verdicts = suite
    text = (out / "REPRODUCTION.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == sum(len(v["claims"]) for v in verdicts)
    # The checklist's count stays the 51 items; the SUSS experiment is counted beside it.
    assert text.startswith("51 experiments of the five papers' checklist, ")
    assert "\n\n1 experiment beside the checklist, 3 claims" in text


def test_rewriting_the_report_runs_nothing_again(suite: tuple[Path, float, list[dict]]) -> None:
    out, _, _ = suite
    stored = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*.duckdb")}
    began = time.perf_counter()
    got = CliRunner().invoke(cli, ["reproduce", "--report", str(out)])
    assert got.exit_code == 0, got.output
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*.duckdb")} == stored
    assert time.perf_counter() - began < 60


def test_one_experiment_as_json_reuses_the_stored_runs(suite: tuple[Path, float, list[dict]]) -> None:
    out, _, verdicts = suite
    name = verdicts[0]["name"]
    got = CliRunner().invoke(cli, ["reproduce", name, "--quick", "--json", "--out", str(out), "--no-progress"])
    assert got.exit_code == 0, got.output
    document = json.loads(got.stdout)
    assert document == verdicts[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["reproduce", "no-such-experiment"], "no experiment named 'no-such-experiment'"),
        (["reproduce", "--all"], "--all needs --report DIR"),
        (["reproduce", "--list", "--all"], "give one of NAME, --list and --all"),
        (["reproduce", "--all", "--report", "x", "-j", "2", "--dask", "tcp://127.0.0.1:1"], "not both"),
        (["reproduce"], "give an experiment NAME"),
    ],
)
def test_bad_input_is_refused_with_exit_code_2(args: list[str], message: str) -> None:
    got = CliRunner().invoke(cli, args)
    assert got.exit_code == 2
    assert message in got.output
