"""The reproduction report: one self-contained HTML file (figures embedded, no server, no network)
and the verdict table of docs/REPRODUCTION.md, both from the outcomes stored in a results
directory (nothing is run again)."""

from __future__ import annotations

import base64
import datetime
import html
import json
from collections import Counter
from pathlib import Path
from typing import Any

from .core import CANNOT_RUN, CHECKLIST_PAPERS, CONTRADICTS, PAPERS, REPRODUCED, SAME_SHAPE, VERDICTS, Experiment, Outcome, load_outcome

#: Colour-blind-safe colours of the verdicts (Okabe-Ito).
_COLOURS = {REPRODUCED: "#009E73", SAME_SHAPE: "#E69F00", CONTRADICTS: "#D55E00", CANNOT_RUN: "#999999"}

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
.verdict { color: #fff; border-radius: 0.3em; padding: 0.05em 0.4em; white-space: nowrap; font-weight: 600; }
section.experiment { border-top: 2px solid #ddd; margin-top: 2em; padding-top: 0.5em; }
img { max-width: 100%; border: 1px solid #eee; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; max-height: 24em; }
.meta { color: #555; font-size: 0.9em; }
"""

#: Counts the figures Chromium decoded, so that a headless test can read it from the DOM.
_SCRIPT = """
window.addEventListener("load", function () {
  var images = document.querySelectorAll("img.figure"), shown = 0;
  images.forEach(function (img) { if (img.complete && img.naturalWidth > 0) { shown += 1; img.dataset.decoded = "yes"; } });
  document.body.dataset.figuresDecoded = String(shown);
  document.body.dataset.figures = String(images.length);
});
"""


def _badge(verdict: str) -> str:
    return f'<span class="verdict" style="background:{_COLOURS.get(verdict, "#666")}">{html.escape(verdict)}</span>'


def _figure(out: Path, relative: str) -> str:
    path = out / relative
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<p><img class="figure" alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}"></p>'


def _frame_html(split: dict[str, Any]) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in split.get("columns", []))
    rows = []
    for row in split.get("data", []):
        cells = "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _experiment_html(exp: Experiment, outcome: Outcome | None, out: Path) -> str:
    anchor = html.escape(exp.name)
    parts = [f'<section class="experiment" id="{anchor}">', f"<h3>{html.escape(exp.item)} — {html.escape(exp.title)} <code>{anchor}</code></h3>"]
    if outcome is None:
        parts.append(f"<p>{_badge(CANNOT_RUN)} not run in this report's directory.</p></section>")
        return "\n".join(parts)
    form = "reduced (--quick)" if outcome.quick else "full size"
    parts.append(f'<p class="meta">Run {form} in {outcome.seconds:.1f} s with startlab {html.escape(outcome.version)}. '
                 f"Command: <code>startlab reproduce {anchor}{' --quick' if outcome.quick else ''}</code></p>")  # fmt: skip
    if outcome.reduced:
        parts.append(f"<p><b>Reduced from the paper's size:</b> {html.escape(outcome.reduced)}</p>")
    if outcome.assumptions:
        items = "".join(f"<li>{html.escape(a)}</li>" for a in outcome.assumptions)
        parts.append(f"<p><b>Settings the paper leaves out, as chosen:</b></p><ul>{items}</ul>")
    if outcome.error:
        parts.append(f"<p><b>The analysis failed:</b> <code>{html.escape(outcome.error)}</code></p>")
    claims = [[html.escape(c.claim), html.escape(c.paper), html.escape(c.startlab), _badge(c.verdict), html.escape(c.reason)] for c in outcome.claims]
    parts.append(_html_table(["claim", "paper", "startlab", "verdict", "reason"], claims))
    for relative in outcome.figures:
        if relative.endswith(".png"):
            parts.append(_figure(out, relative))
    for title, split in outcome.tables.items():
        parts.append(f"<p><b>{html.escape(title)}</b></p>{_frame_html(split)}")
    failed = [r for r in outcome.runs if r["status"] != "ok"]
    if failed:
        items = "".join(f"<li><code>{html.escape(r['key'][:12])}</code> {html.escape(json.dumps(r['values']))}: {html.escape(str(r['error']))}</li>" for r in failed)
        parts.append(f"<p><b>Failed runs:</b></p><ul>{items}</ul>")
    if outcome.runs:
        blocks = []
        for label, source in outcome.sweeps.items():
            blocks.append(f"<p>Run set <b>{html.escape(label)}</b>, its sweep file (the base scenario and its axes):</p><pre>{html.escape(source)}</pre>")
            first = next((r for r in outcome.runs if r["set"] == label and r["scenario"]), None)
            if first is not None:
                blocks.append(f"<details><summary>the resolved scenario of its first run</summary><pre>{html.escape(_pretty(first['scenario']))}</pre></details>")
        runs = [[html.escape(r["set"]), str(r["seed"]), html.escape(json.dumps(r["values"])), html.escape(r["status"]), f"<code>{html.escape(r['key'][:16])}</code>"] for r in outcome.runs]
        blocks.append(_html_table(["set", "seed", "axis values", "status", "key"], runs))
        parts.append(
            f"<details><summary>The {len(outcome.runs)} runs: each is its sweep file with these axis values and this seed</summary>{''.join(blocks)}</details>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def _html_table(headings: list[str], rows: list[list[str]]) -> str:
    """A table of cells already escaped (or HTML)."""
    head = "".join(f"<th>{h}</th>" for h in headings)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _pretty(scenario: str) -> str:
    try:
        return json.dumps(json.loads(scenario), indent=1, sort_keys=True)
    except (TypeError, ValueError):
        return scenario


def outcomes(out: Path, experiments: list[Experiment]) -> dict[str, Outcome | None]:
    return {e.name: load_outcome(out, e.name) for e in experiments}


def write_html(out: Path, experiments: list[Experiment], target: Path | None = None) -> Path:
    """``out/index.html`` (or ``target``) from the outcomes stored in ``out``."""
    import startlab

    found = outcomes(out, experiments)
    counts = Counter(c.verdict for e in experiments if e.checklist and found[e.name] for c in found[e.name].claims)  # type: ignore[union-attr]
    beside = Counter(c.verdict for e in experiments if not e.checklist and found[e.name] for c in found[e.name].claims)  # type: ignore[union-attr]
    summary = " ".join(f"{_badge(v)} {counts.get(v, 0)}" for v in VERDICTS)
    if beside:
        summary += "; beside the checklist: " + " ".join(f"{_badge(v)} {beside.get(v, 0)}" for v in VERDICTS)
    inside = sum(e.checklist for e in experiments)
    quick = {o.quick for o in found.values() if o}
    form = "reduced (--quick)" if quick == {True} else "full size" if quick == {False} else "mixed"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', "<title>startlab reproduction report</title>",
        f"<style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>",
        "<h1>startlab: the five papers, reproduced</h1>",
        f'<p class="meta">startlab {html.escape(startlab.__version__)}, {inside} experiments of the five papers\' checklist'
        f"{f' and {len(experiments) - inside} beside it' if len(experiments) > inside else ''}, {form}, written {now}. "
        "Every verdict is what the run showed; the reasons give the criterion and the evidence.</p>",
        f"<p>Claims of the checklist: {summary}</p>",
        "<table><tr><th>experiment</th><th>paper</th><th>item</th><th>claims</th></tr>",
    ]  # fmt: skip
    for e in experiments:
        o = found[e.name]
        verdicts = " ".join(_badge(c.verdict) for c in o.claims) if o else _badge(CANNOT_RUN) + " not run"
        parts.append(f'<tr><td><a href="#{html.escape(e.name)}">{html.escape(e.name)}</a></td><td>{html.escape(e.paper)}</td>'
                     f"<td>{html.escape(e.item)}</td><td>{verdicts}</td></tr>")  # fmt: skip
    parts.append("</table>")
    for paper, citation in PAPERS.items():
        chosen = [e for e in experiments if e.paper == paper]
        if not chosen:
            continue
        beside = "" if paper in CHECKLIST_PAPERS else "Beside the checklist (not one of its 51 items): "
        parts.append(f'<h2 id="paper-{paper}">{beside}{html.escape(citation)}</h2>')
        parts += [_experiment_html(e, found[e.name], out) for e in chosen]
    parts.append("</body></html>")
    target = target or out / "index.html"
    target.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return target


def write_markdown(out: Path, experiments: list[Experiment], target: Path | None = None) -> Path:
    """``out/REPRODUCTION.md``: one table row per claim of every experiment."""
    found = outcomes(out, experiments)
    lines = [
        "| experiment | item | claim | paper | startlab | verdict | reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in experiments:
        o = found[e.name]
        if o is None:
            lines.append(f"| `{e.name}` | {e.item} | – | – | – | not run | – |")
            continue
        for c in o.claims:
            cells = [f"`{e.name}`", e.item, c.claim, c.paper, c.startlab, f"**{c.verdict}**", c.reason]
            lines.append("| " + " | ".join(_md(x) for x in cells) + " |")
    quick = {o.quick for o in found.values() if o}
    form = "reduced (`--quick`)" if quick == {True} else "full size" if quick == {False} else "mixed"
    heads = []
    for inside, what in ((True, "of the five papers' checklist"), (False, "beside the checklist")):
        chosen = [e for e in experiments if e.checklist == inside]
        if not chosen:
            continue
        counts = Counter(c.verdict for e in chosen if found[e.name] for c in found[e.name].claims)  # type: ignore[union-attr]
        heads.append(f"{len(chosen)} experiment{'' if len(chosen) == 1 else 's'} {what}, {sum(counts.values())} claims ({form}): " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS) + ".")
    head = "\n\n".join(heads)
    target = target or out / "REPRODUCTION.md"
    target.write_text(head + "\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return target


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
