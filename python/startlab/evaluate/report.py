"""The evaluation's outputs: the JSON document (for CI) and one self-contained HTML report (figures
embedded, scenarios downloadable from the page, no server, no network), both from the stored runs."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from . import stats
from .scenarios import REFERENCE
from .suite import Suite

#: Colour-blind-safe colours of the verdicts (Okabe-Ito), as the reproduction report's.
_COLOURS = {stats.BETTER: "#009E73", stats.WORSE: "#D55E00", stats.SAME: "#999999", stats.FEW: "#CCCCCC"}

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
.verdict { color: #fff; border-radius: 0.3em; padding: 0.05em 0.4em; white-space: nowrap; font-weight: 600; }
.v-no { color: #222; }
section { border-top: 2px solid #ddd; margin-top: 2em; padding-top: 0.5em; }
img { max-width: 100%; border: 1px solid #eee; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; max-height: 30em; }
.meta { color: #555; font-size: 0.9em; }
td.num { text-align: right; white-space: nowrap; }
"""

#: Marks the page as rendered for a headless test: figures decoded, no script error.
_SCRIPT = """
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message)); });
window.addEventListener("load", function () {
  var images = document.querySelectorAll("img.figure"), shown = 0;
  images.forEach(function (img) { if (img.complete && img.naturalWidth > 0) { shown += 1; } });
  document.body.dataset.figuresDecoded = String(shown);
  document.body.dataset.figures = String(images.length);
  document.body.dataset.scorecardRows = String(document.querySelectorAll("#scorecard tr.contestant").length);
  document.body.dataset.jsErrors = String(window.__errors.length);
});
"""


def _badge(verdict: str) -> str:
    cls = "verdict" + (" v-no" if verdict in (stats.SAME, stats.FEW) else "")
    return f'<span class="{cls}" style="background:{_COLOURS.get(verdict, "#666")}">{html.escape(verdict)}</span>'


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def effect_text(e: dict[str, Any]) -> str:
    """``x0.95 [0.93, 0.97]`` for a ratio, ``+1.2 [0.4, 2.0] % points`` for a difference."""
    if e["effect"] is None:
        return "–"
    if e["kind"] == "ratio":
        return f"×{_fmt(e['effect'])} [{_fmt(e['low'])}, {_fmt(e['high'])}]"
    unit = f" {e['unit']}" if e["unit"] else ""
    return f"{e['effect']:+.3g} [{_fmt(e['low'])}, {_fmt(e['high'])}]{unit}"


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _img(data: str, alt: str) -> str:
    return f'<p><img class="figure" alt="{html.escape(alt)}" src="data:image/png;base64,{data}"></p>'


def build(suite: Suite, contestants: list[str], baselines: list[str], metrics: pd.DataFrame, meta: dict[str, Any]) -> dict[str, Any]:
    """The evaluation as a JSON-able document: the scorecard, every comparison, failures, worst
    paths, the suite's identity and the paths."""
    comparisons = stats.comparisons(metrics, contestants, baselines, suite.seed)
    workloads = [w.kind for w in suite.workloads]
    scorecard = []
    for a in contestants:
        for b in baselines:
            cells = {}
            for w in workloads:
                est = stats.overall(metrics, a, b, w, suite.seed)
                if est is not None:
                    cells[w] = est.as_dict()
            counted = Counter(c["verdict"] for c in comparisons if c["algorithm"] == a and c["baseline"] == b)
            scorecard.append({"algorithm": a, "baseline": b, "workloads": cells, "regions": dict(counted)})
    runs = metrics[["algorithm", "status"]]
    failed = metrics[metrics["status"] != "ok"]
    failures = [
        {"algorithm": r.algorithm, "path": r.path, "workload": r.workload, "item": r.item, "seed": int(r.seed), "error": str(r.error)}
        for r in failed.itertuples(index=False)
    ]
    return {
        "suite": suite.identity, "suite_file": suite.file, "algorithms": contestants, "baselines": baselines,
        "test": stats.TEST, "min_paths": stats.MIN_PATHS, "resamples": stats.RESAMPLES, "level": stats.LEVEL,
        "runs": {"total": int(len(runs)), "ok": int((runs["status"] == "ok").sum()), "failed": int(len(failed)),
                 "by_algorithm": {k: int(v) for k, v in runs["algorithm"].value_counts().sort_index().items()}},
        "scorecard": scorecard, "comparisons": comparisons, "failures": failures,
        "worst": worst_paths(metrics, contestants, baselines[0] if baselines else None),
        "paths": [{"id": p.id, "class": p.path_class, "rate_bps": p.rate_bps, "rtt_s": p.rtt_s, "buffer_pkts": p.buffer_pkts,
                   "queue": p.queue, "description": p.describe()} for p in suite.paths()],
        **meta,
    }  # fmt: skip


def worst_paths(metrics: pd.DataFrame, contestants: list[str], baseline: str | None, count: int = 5) -> list[dict[str, Any]]:
    """Per contestant, the transfer runs where its FCT was worst against ``baseline`` (the pair's
    ratio, the highest first), with both runs' keys."""
    if baseline is None or "fct" not in metrics:
        return []
    transfers = metrics[(metrics["workload"] == "transfer") & (metrics["status"] == "ok")]
    b = transfers[transfers["algorithm"] == baseline][["path", "item", "replicate", "fct", "key"]]
    out = []
    for a in contestants:
        pairs = transfers[transfers["algorithm"] == a][["path", "path_class", "item", "replicate", "seed", "fct", "key"]].merge(
            b, on=["path", "item", "replicate"], suffixes=("", "_base")
        )
        pairs = pairs[(pairs["fct"] > 0) & (pairs["fct_base"] > 0)]
        pairs = pairs.assign(ratio=pairs["fct"] / pairs["fct_base"]).sort_values(["ratio", "key"], ascending=[False, True]).head(count)
        for r in pairs.itertuples(index=False):
            out.append({"algorithm": a, "baseline": baseline, "path": r.path, "path_class": r.path_class, "item": r.item, "seed": int(r.seed),
                        "fct": float(r.fct), "fct_baseline": float(r.fct_base), "ratio": float(r.ratio), "key": r.key, "key_baseline": r.key_base})  # fmt: skip
    return out


# ----------------------------------------------------------------------------------------------
# Figures


def _pareto(doc: dict[str, Any], metrics: pd.DataFrame, suite_seed: int) -> list[tuple[str, str]]:
    """Speed-up against harm and against loss in startup, every algorithm against the first
    baseline (the reference), with 95 % intervals as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not doc["baselines"]:
        return []
    reference = doc["baselines"][0]
    everyone = list(dict.fromkeys(doc["algorithms"] + doc["baselines"]))
    points = []
    speed_metric = stats.METRICS["transfer"][0]
    harm_metric = next(m for m in stats.METRICS["join"] if m.name == "harm")
    loss_metric = next(m for m in stats.METRICS["transfer"] if m.name == "su_loss")
    for name in everyone:
        a = metrics[metrics["algorithm"] == name]
        b = metrics[metrics["algorithm"] == reference]
        transfer = (a[a["workload"] == "transfer"], b[b["workload"] == "transfer"])
        join = (a[a["workload"] == "join"], b[b["workload"] == "join"])
        speed = stats.compare(*transfer, speed_metric, (suite_seed, "pareto", name)) if len(transfer[0]) else None
        harm = stats.compare(*join, harm_metric, (suite_seed, "pareto", name)) if len(join[0]) else None
        loss = stats.compare(*transfer, loss_metric, (suite_seed, "pareto", name)) if len(transfer[0]) else None
        points.append((name, speed, harm, loss))
    figures = []
    for title, pick, xlabel in (
        ("speed-up against harm", lambda p: p[2], f"incumbents' capacity share lost vs {reference} (% points)"),
        ("speed-up against loss", lambda p: p[3], f"loss in startup vs {reference} (% points)"),
    ):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        drawn = 0
        for p in points:
            speed, x = p[1], pick(p)
            if speed is None or x is None or not math.isfinite(speed.effect) or not math.isfinite(x.effect):
                continue
            y = 1 / speed.effect  # a speed-up: the FCT ratio's reciprocal, its interval's ends swapped
            yerr = [[max(0.0, y - 1 / speed.high)], [max(0.0, 1 / speed.low - y)]] if math.isfinite(speed.low) and math.isfinite(speed.high) else None
            xerr = [[max(0.0, x.effect - x.low)], [max(0.0, x.high - x.effect)]] if math.isfinite(x.low) else None
            marker = "o" if p[0] in doc["algorithms"] else "s"
            ax.errorbar([x.effect], [y], xerr=xerr, yerr=yerr, fmt=marker, capsize=3, label=p[0])
            ax.annotate(p[0], (x.effect, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
            drawn += 1
        ax.axhline(1, color="#999", lw=0.8)
        ax.axvline(0, color="#999", lw=0.8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"speed-up: 1 / FCT ratio vs {reference}")
        ax.set_title(f"{title} (up and left is better; circles: contestants, squares: baselines)", fontsize=9)
        if drawn:
            ax.legend(fontsize=7, loc="best")
        figures.append((title, _png(fig)))
    return figures


# ----------------------------------------------------------------------------------------------
# HTML


def _scorecard_html(doc: dict[str, Any]) -> str:
    workloads = sorted({w for row in doc["scorecard"] for w in row["workloads"]}, key=lambda w: list(stats.METRICS).index(w))
    head = "".join(f"<th>{html.escape(w)}: {html.escape(stats.METRICS[w][0].label)}</th>" for w in workloads)
    rows = []
    for row in doc["scorecard"]:
        cells = []
        for w in workloads:
            e = row["workloads"].get(w)
            if e is None:
                cells.append("<td>–</td>")
                continue
            cells.append(f"<td>{html.escape(effect_text(e))}<br>{_badge(e['verdict'])}<br><span class='meta'>{e['pairs']} pairs, {e['paths']} paths"
                         + (f", {e['dropped']} left out" if e["dropped"] else "") + (f", {e['censored']} censored" if e["censored"] else "") + "</span></td>")  # fmt: skip
        regions = ", ".join(f"{n} {html.escape(v)}" for v, n in sorted(row["regions"].items()))
        rows.append(f"<tr class='contestant'><td><b>{html.escape(row['algorithm'])}</b></td><td>{html.escape(row['baseline'])}</td>{''.join(cells)}<td>{regions}</td></tr>")
    return f"<table id='scorecard'><tr><th>algorithm</th><th>against</th>{head}<th>regions</th></tr>{''.join(rows)}</table>"


def _regions_html(doc: dict[str, Any]) -> str:
    parts = []
    for a in doc["algorithms"]:
        for b in doc["baselines"]:
            rows = [c for c in doc["comparisons"] if c["algorithm"] == a and c["baseline"] == b]
            if not rows:
                continue
            body = []
            for c in rows:
                head, *rest = c["estimates"]
                others = "; ".join(f"{html.escape(e['label'])} {html.escape(effect_text(e))}" for e in rest)
                cls = " style='font-weight:600'" if c["path_class"] == stats.ALL else ""
                body.append(f"<tr{cls}><td>{html.escape(c['workload'])}</td><td>{html.escape(c['item'])}</td><td>{html.escape(c['path_class'])}</td>"
                            f"<td class='num'>{html.escape(effect_text(head))}</td><td>{_badge(c['verdict'])}</td><td class='num'>{head['pairs']} / {head['paths']}</td>"
                            f"<td class='meta'>{others}</td></tr>")  # fmt: skip
            parts.append(f"<details><summary><b>{html.escape(a)}</b> against <b>{html.escape(b)}</b> ({len(rows)} regions)</summary>"
                         "<table><tr><th>workload</th><th>item</th><th>paths</th><th>headline effect [95 % CI]</th><th>verdict</th>"
                         f"<th>pairs / paths</th><th>other metrics</th></tr>{''.join(body)}</table></details>")  # fmt: skip
    return "\n".join(parts)


def _download(scenario: str, name: str) -> str:
    data = base64.b64encode(scenario.encode()).decode("ascii")
    return f'<a download="{html.escape(name)}.json" href="data:application/json;base64,{data}">{html.escape(name)}.json</a>'


def _worst_html(doc: dict[str, Any], scenarios: dict[str, str]) -> str:
    if not doc["worst"]:
        return "<p>No transfer runs to rank.</p>"
    described = {p["id"]: p["description"] for p in doc["paths"]}
    rows = []
    for w in doc["worst"]:
        links = []
        for key, who in ((w["key"], w["algorithm"]), (w["key_baseline"], w["baseline"])):
            if key in scenarios:
                links.append(_download(scenarios[key], f"{w['path']}-{w['item']}-{who}"))
        rows.append(f"<tr><td>{html.escape(w['algorithm'])}</td><td>{html.escape(w['path'])}</td><td>{html.escape(described.get(w['path'], ''))}</td>"
                    f"<td>{html.escape(w['item'])}</td><td class='num'>{w['seed']}</td><td class='num'>{_fmt(w['fct'])} s</td>"
                    f"<td class='num'>{_fmt(w['fct_baseline'])} s</td><td class='num'>×{_fmt(w['ratio'])}</td><td>{' '.join(links)}</td></tr>")  # fmt: skip
    return ("<p>Each scenario downloads as JSON; <code>startlab run FILE.json</code> runs it again (the same seed, the same result).</p>"
            "<table><tr><th>algorithm</th><th>path</th><th>what it is</th><th>size</th><th>seed</th><th>FCT</th>"
            f"<th>FCT of {html.escape(doc['baselines'][0])}</th><th>ratio</th><th>scenarios</th></tr>{''.join(rows)}</table>")  # fmt: skip


def _failures_html(doc: dict[str, Any]) -> str:
    if not doc["failures"]:
        return "<p>No run failed.</p>"
    rows = "".join(
        f"<tr><td>{html.escape(f['algorithm'])}</td><td>{html.escape(f['path'])}</td><td>{html.escape(f['workload'])} {html.escape(f['item'])}</td>"
        f"<td class='num'>{f['seed']}</td><td><code>{html.escape(f['error'][:400])}</code></td></tr>"
        for f in doc["failures"][:500]
    )
    more = f"<p>… and {len(doc['failures']) - 500} more (the JSON lists them all).</p>" if len(doc["failures"]) > 500 else ""
    return f"<p>{len(doc['failures'])} runs failed; they are left out of every comparison (pairs counted as left out).</p><table><tr><th>algorithm</th><th>path</th><th>workload</th><th>seed</th><th>error</th></tr>{rows}</table>{more}"


def write_html(out: Path, doc: dict[str, Any], suite: Suite, metrics: pd.DataFrame, scenarios: dict[str, str]) -> Path:
    """Write ``out/index.html``: scorecard, Pareto plots, regions, worst paths (``scenarios``: run
    key -> its scenario file's text, to download), failures, the suite."""
    figures = _pareto(doc, metrics[metrics["algorithm"] != REFERENCE], suite.seed)
    ident = doc["suite"]
    runs = doc["runs"]
    paths = "".join(f"<tr><td>{html.escape(p['id'])}</td><td>{html.escape(p['description'])}</td></tr>" for p in doc["paths"])
    classes = "".join(f"<tr><td>{html.escape(c['class'])}</td><td>{html.escape(c['source'])}</td></tr>" for c in suite.path_classes)
    works = "".join(f"<tr><td>{html.escape(w.kind)}</td><td>{html.escape(', '.join(w.items))}</td><td>{html.escape(w.source)}</td></tr>" for w in suite.workloads)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>startlab evaluate: {html.escape(", ".join(doc["algorithms"]))} on {html.escape(ident["name"])}</title>
<style>{_STYLE}</style><script>{_SCRIPT}</script></head>
<body>
<h1>startlab evaluate: {html.escape(", ".join(doc["algorithms"]))}</h1>
<p class="meta">Suite <b>{html.escape(ident["name"])}</b> version {html.escape(ident["version"])}, seed {ident["seed"]}, {ident["seeds"]} seeds per path and item,
SHA-256 of the suite file <code>{ident["sha256"][:16]}…</code>; startlab {html.escape(doc.get("version", ""))}; {runs["total"]} runs ({runs["ok"]} ok, {runs["failed"]} failed);
baselines {html.escape(", ".join(doc["baselines"]))}. Command: <code>{html.escape(doc.get("command", ""))}</code></p>
<section><h2>Scorecard</h2>
<p>Each cell: the workload's headline metric, contestant against baseline, pooled over every path and item; the effect with its 95 % interval, the verdict and the runs behind it.
The last column counts the per-region verdicts below. <b>The test</b>: {html.escape(doc["test"])}.</p>
{_scorecard_html(doc)}</section>
<section><h2>Speed-up against harm and against loss</h2>
{"".join(_img(data, title) for title, data in figures)}</section>
<section><h2>Per region</h2>
<p>Regions are a workload item (a size bucket, a number of incumbents…) on one class of paths, or on all of them (bold). Ratios below 1 are faster for times;
for the incumbents' throughput above 1 is less harm. pairs / paths: the runs behind the interval.</p>
{_regions_html(doc)}</section>
<section><h2>Worst paths</h2>
{_worst_html(doc, scenarios)}</section>
<section><h2>Failed runs</h2>
{_failures_html(doc)}</section>
<section><h2>The suite</h2>
<table><tr><th>path class</th><th>why these ranges, and their source</th></tr>{classes}</table>
<table><tr><th>workload</th><th>items</th><th>why, and the source</th></tr>{works}</table>
<details><summary>{len(doc["paths"])} paths drawn from seed {ident["seed"]}</summary><table><tr><th>path</th><th>what it is</th></tr>{paths}</table></details>
<details><summary>The suite file ({html.escape(doc["suite_file"])})</summary><pre>{html.escape(suite.text)}</pre></details>
</section>
</body></html>
"""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)
    return path


def write_json(out: Path, doc: dict[str, Any]) -> Path:
    path = out / "evaluate.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=False, default=_plain) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _plain(x: Any) -> Any:
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(type(x).__name__)
