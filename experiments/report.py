"""The output directory of an experiment: tables, analyses, plots, the resolved config, a manifest.

Files (each written atomically): ``results.csv`` and ``results.json`` (run, topic, measure,
aggregation, closed_form, exact, estimate, stderr, z, users; per topic and ``all``),
``summary.md``, ``config.resolved.json``, ``manifest.json`` and ``plots/*.png``.
"""

from __future__ import annotations

import os
import platform
import re
from collections import defaultdict
import dataclasses
from dataclasses import dataclass

import numpy as np

from rpdi.choices import TABLE_II_RANKING
from rpdi.experiments import plots
from rpdi.experiments.config import CAST_SESSIONS, shown_name
from rpdi.experiments.formats import (SIMULATE_FIELDS, align, md_table, number, session_note, to_csv, to_json,
                                      unit_name)
from rpdi.experiments.store import write_atomic
from rpdi.simulate.cells import Cell, ClosedVsExact, Stochastic, ZeroVariance, cell_from_dict
from rpdi.simulate.verdict import Verdict
from rpdi.simulate.verdict_text import verdict_lines


def agreement_table(records: list[dict], cells: list[Cell], verdict: Verdict) -> list[dict]:
    """Per measure (all engines): z-tests made, largest |z|, cells the verdict counts as failures,
    zero-variance checks and their mismatches, and the largest |closed form - exact|."""
    out = []
    for measure in dict.fromkeys(r["measure"] for r in records):
        mine = [c for c in cells if c.measure == measure]
        z = np.array([c.z for c in mine if isinstance(c, Stochastic)])
        zero = [c for c in mine if isinstance(c, ZeroVariance)]
        gaps = [abs(c.closed_form - c.exact) for c in mine if isinstance(c, ClosedVsExact)]
        out.append({"measure": measure, "tests": int(z.size),
                    "max_abs_z": float(np.abs(z).max()) if z.size else None,
                    "failures": sum(c.measure == measure for c in verdict.failures),
                    "zero_variance": len(zero), "zero_variance_mismatches": sum(not c.ok for c in zero),
                    "max_closed_vs_exact": float(max(gaps)) if gaps else None})
    return out


def _system_agreement(records: list[dict]) -> str:
    """Kendall's tau between the system orderings of the measures, and counts of significantly
    different system pairs by paired t-test and Wilcoxon (the shape of the RBP paper's
    Tables III and IV), on the closed-form per-topic values."""
    from itertools import combinations

    from scipy.stats import kendalltau

    from rpdi.metrics.significance import paired_t, wilcoxon

    per = defaultdict(dict)  # measure -> run -> {topic: value}
    for r in records:
        if r["topic"] != "all" and r["closed_form"] is not None:
            per[r["measure"]].setdefault(r["run"], {})[r["topic"]] = r["closed_form"]
    measures = list(per)
    runs = sorted({run for m in per.values() for run in m})
    if len(runs) < 3:
        return "System agreement needs at least three runs.\n"
    means = {m: np.array([np.mean(list(per[m][run].values())) for run in runs]) for m in measures}
    tau = [[m] + [float(kendalltau(means[m], means[o])[0]) for o in measures] for m in measures]
    text = "### Kendall's tau between system orderings\n\n" + md_table(["measure"] + measures, tau)
    rows = []
    for m in measures:
        counts = [0, 0, 0, 0]
        for a, b in combinations(runs, 2):
            topics = sorted(set(per[m][a]) & set(per[m][b]))
            x = np.array([per[m][a][t] for t in topics])
            y = np.array([per[m][b][t] for t in topics])
            if len(topics) < 2 or np.allclose(x, y):
                continue
            d = (x - y)[None]
            p_t, p_w = paired_t(d)[1][0], wilcoxon(d)[1][0]
            counts = [c + int(p <= lvl) for c, p, lvl in zip(counts, (p_t, p_t, p_w, p_w), (0.05, 0.01, 0.05, 0.01))]
        rows.append([m] + counts)
    pairs = len(runs) * (len(runs) - 1) // 2
    return (text + f"\n### Significantly different system pairs (of {pairs})\n\n" +
            md_table(["measure", "t-test 0.05", "t-test 0.01", "Wilcoxon 0.05", "Wilcoxon 0.01"], rows))


def _rbp_accuracy(measures: list[str], accuracy: float) -> str:
    """The depth d each RBP-like measure needs for p^d < accuracy (the RBP paper, Section 5)."""
    from rpdi.metrics.names import parse_measure

    rows = []
    for name in measures:
        m = parse_measure(name)
        if m.spec.name == "RBP" and m.params["p"] > 0:
            p = m.params["p"]
            rows.append([name, p, int(np.floor(np.log(accuracy) / np.log(p))) + 1])
    if not rows:
        return ""
    return (f"### Depth needed for a residual below {accuracy:g}\n\n"
            + md_table(["measure", "p", "depth d (smallest with p^d < accuracy)"], rows))


RESIDUAL_RANKING = "$$---$----$-??--?---"  # ibid., Section 4.4 ('?' unjudged)


def _worked_examples(measures: list[str]) -> str:
    """The RBP paper's worked examples, computed with the library for the config's RBP p values:
    Table II (each relevant document's contribution p^(i-1), their total, and the total times
    1 - p, which is RBP) and the lower and upper bounds (RBP and RBP + residual) of the ranking
    with unjudged documents."""
    from rpdi.metrics.evaluate import rankings_from_grades, score
    from rpdi.metrics.names import parse_measure
    from rpdi.metrics.view import View

    ps = []
    for name in measures:
        m = parse_measure(name)
        if m.spec.name == "RBP" and 0 < m.params["p"] < 1 and m.params["p"] not in ps:
            ps.append(m.params["p"])
    if not ps:
        return ""
    ps.sort()
    f = lambda x: number(x, 6)  # noqa: E731  (more digits than the paper prints, to compare with it)
    n = len(TABLE_II_RANKING)
    relevant = [i for i, c in enumerate(TABLE_II_RANKING, 1) if c == "$"]
    header = ["document"] + [f"p = {p:g}" for p in ps]
    rows = []
    for i in relevant:  # a ranking with only document i relevant scores (1 - p) p^(i-1)
        alone = "-" * (i - 1) + "$" + "-" * (n - i)
        rows.append([str(i)] + [f(score(f"RBP(p={p})", alone) / (1 - p)) for p in ps])
    rbp = [score(f"RBP(p={p})", TABLE_II_RANKING) for p in ps]
    rows.append(["Total"] + [f(v / (1 - p)) for v, p in zip(rbp, ps)])
    rows.append(["x(1 - p)"] + [f(v) for v in rbp])
    text = (f"### Table II: contributions toward RBP on the ranking \"{TABLE_II_RANKING}\"\n\n"
            + md_table(header, rows))
    rows = []
    rankings = rankings_from_grades(RESIDUAL_RANKING)
    for p in ps:
        m = parse_measure(f"RBP(p={p})")
        s = m.compute(View(rankings, m.depth))
        lower, residual = float(s.value[0, 0]), float(s.residual[0, 0])
        rows.append([f"{p:g}", f(lower), f(lower + residual), f(residual)])
    text += (f"\n### Residual bounds on the ranking \"{RESIDUAL_RANKING}\" ('?' unjudged)\n\n"
             "residual = p^20 + (1 - p)(p^12 + p^13 + p^16)\n\n"
             + md_table(["p", "lower (RBP)", "upper (RBP + residual)", "residual"], rows))
    return text


def _parameter_curves(config, records, results) -> list[tuple]:
    """For each measure grid over one numeric parameter: mean exact value per run against it."""
    extra = []
    residual = {(res["measure"], res["run"]): np.mean([v for v in res["residual"].values() if v is not None] or [0.0])
                for res in results}
    alls = {(r["measure"], r["run"]): r["exact"] for r in records if r["topic"] == "all"}
    for i, entry in enumerate(config.measures):
        if len(entry.grid) != 1:
            continue
        (param, values), = entry.grid.items()
        if not all(isinstance(v, (int, float)) for v in values):
            continue
        names = [shown_name(config, entry.name.format(**{param: v})) for v in values]
        curves = {}
        for run in dict.fromkeys(r["run"] for r in records):
            value = [alls.get((n, run)) for n in names]
            if None in value:
                continue
            curves[run] = (value, [v + residual[(n, run)] for v, n in zip(value, names)])
        written = shown_name(config, entry.name)  # the name's template, as the config wrote it
        safe = re.sub(r"[^A-Za-z0-9]+", "_", written).strip("_")
        extra.append((plots.parameter, (written, param, list(values), curves, f"parameter_{i}_{safe}.png")))
    return extra


def _residual_depths(config, measures, depths, qrels, runs) -> tuple[str, list[tuple]]:
    """Mean lower/upper bounds of the measures with a residual, cut at each depth (Figure 5)."""
    from rpdi.metrics.evaluate import evaluate
    from rpdi.metrics.names import parse_measure

    chosen = [m for m in measures if parse_measure(m).spec.residual and parse_measure(m).cutoff is None]
    if not chosen or not depths:
        return "", []
    names = [f"{m}@{d}" for m in chosen for d in depths]
    intents = config.data.intents if any(parse_measure(n).spec.intents for n in names) else None
    recs = [r for r in evaluate(qrels, runs, names, topics=config.experiment.topics, intents=intents)
            if r["topic"] == "all"]
    curves = {}
    rows = []
    for m in chosen:
        lower = [float(np.mean([r["value"] for r in recs if r["measure"] == f"{m}@{d}"])) for d in depths]
        upper = [lo + float(np.mean([r["residual"] for r in recs if r["measure"] == f"{m}@{d}"]))
                 for lo, d in zip(lower, depths)]
        curves[m] = (lower, upper)
        rows += [[m, d, lo, up] for d, lo, up in zip(depths, lower, upper)]
    text = ("### Score bounds against evaluation depth (mean over runs and topics)\n\n"
            + md_table(["measure", "depth", "lower", "upper"], rows))
    return text, [(plots.residual_depth, (list(depths), curves, "residual_depth.png"))]


@dataclass(frozen=True)
class Summary:
    """The terminal text of a check (``rpdi run``, ``rpdi simulate``) and its verdict
    (:func:`rpdi.simulate.verdict.verdict`); ``status`` is the exit status, 0 when simulation,
    model and closed form agree, 1 on an undeclared disagreement. ``str()`` is the text;
    ``notes``, lines for standard error, written after it (the verdict when stdout carries CSV or
    JSON), so that nothing is said before the command is known to have succeeded."""

    text: str
    verdict: Verdict
    notes: str = ""

    @property
    def status(self) -> int:
        return self.verdict.status

    def __str__(self) -> str:
        return self.text


MEANS_LEGEND = """\
*closed form*: the measure's formula; *exact*: the expectation of its browsing model, by
probability propagation (*aggregation*: which one equals the measure: `rate` = E[G]/E[N], the
expected gain over the expected number of documents read; `mean_rate` = E[G/N], the mean of
each user's own rate; `total` = E[G]); *estimate*: the mean over simulated users, *stderr* its
standard error; *z* = (estimate - exact) / stderr. All are means over {units}; – is undefined.
"""

AGREEMENT_LEGEND = """\
Per measure, over its (run, {unit}) cells: *z-tests*, the z-tests made (of the mean, and of the
variance); *max abs z*; *failing cells*, those the verdict above counts as failures (0 when
simulation, model and closed form agree); *zero-variance*, the cells where every user has the
same outcome, so no z-test is possible and the estimate must equal the exact value;
*mismatches*, those where it does not; *max abs(closed - exact)*, the largest gap between the
closed form and the exact expectation (0 up to rounding when the model is the measure).
"""


def _as_written(config, results: list[dict], verdict: Verdict) -> tuple[list[dict], Verdict]:
    """Task results and verdict with every measure named as the config wrote it."""
    def named(item: dict) -> dict:
        return {**item, "measure": shown_name(config, item["measure"])} if "measure" in item else item

    results = [{**named(res), "records": [named(r) for r in res["records"]],
                "cells": [named(c) for c in res.get("cells", [])]} for res in results]
    def renamed(cells: list) -> list:
        return [dataclasses.replace(c, measure=shown_name(config, c.measure)) for c in cells]

    return results, dataclasses.replace(verdict, failures=renamed(verdict.failures), marginal=renamed(verdict.marginal))


def write_report(out_dir: str, config, config_path: str, measures: list[str], results: list[dict],
                 manifest: dict, verdict: Verdict, data: tuple) -> Summary:
    """Write every output file; return the summary for the terminal. ``data`` is the (qrels,
    runs) the experiment ran on, for the analyses that go back to them. The main engine's records
    go to results.csv/json, the agent engine's check (``agent_check``) to agent_check.csv, the
    verdict to verdict.json. A model of one's own is named as the config wrote it (relative to
    the config) in every table, CSV and plot name."""
    results, verdict = _as_written(config, results, verdict)
    measures = [shown_name(config, m) for m in measures]
    main = [res for res in results if res.get("role", "main") == "main"]
    records = [r for res in main for r in res["records"]]
    agent_records = [r for res in results if res not in main for r in res["records"]]
    write_atomic(os.path.join(out_dir, "results.csv"), to_csv(records, SIMULATE_FIELDS))
    write_atomic(os.path.join(out_dir, "results.json"), to_json(records))
    if agent_records:
        write_atomic(os.path.join(out_dir, "agent_check.csv"), to_csv(agent_records, SIMULATE_FIELDS))
    write_atomic(os.path.join(out_dir, "verdict.json"), to_json(verdict.as_dict()))
    write_atomic(os.path.join(out_dir, "config.resolved.json"),
                 to_json({"source": os.path.abspath(config_path), "measures": measures, **config.model_dump()}))
    cells = [cell_from_dict(c) for res in results for c in res.get("cells", [])]
    table = agreement_table(records + agent_records, cells, verdict)
    summary_rows = [[r["run"], r["measure"], r["aggregation"], r["closed_form"], r["exact"], r["estimate"],
                     number(r["stderr"], 4, "significant"), number(r["z"], 2)] for r in records if r["topic"] == "all"]
    header = ["run", "measure", "aggregation", "closed form", "exact", "estimate", "stderr", "z"]
    verdict_rows = [[v["measure"], v["tests"], v["max_abs_z"], v["failures"], v["zero_variance"],
                     v["zero_variance_mismatches"], v["max_closed_vs_exact"]] for v in table]
    verdict_header = ["measure", "z-tests", "max abs z", "failing cells", "zero-variance",
                      "mismatches", "max abs(closed - exact)"]
    lines = verdict_lines(verdict)
    sessions = config.data.sessions
    unit = unit_name(sessions is not None)[:-1]  # one topic or session
    md = [f"# {config.experiment.name}\n",
          f"seed {config.experiment.seed}, {config.experiment.users} users per (run, {unit}, measure), "
          f"engine {config.experiment.engine}, convention {config.experiment.convention}\n"]
    if sessions is not None:  # what a session is, and whence
        md.append(session_note(records, "table", None if sessions == CAST_SESSIONS else os.path.basename(sessions)))
    md += ["## Verdict\n", "\n".join(lines) + "\n",
           f"## Means over {unit}s\n", md_table(header, summary_rows), MEANS_LEGEND.format(units=f"{unit}s"),
           "## Agreement\n", md_table(verdict_header, verdict_rows), AGREEMENT_LEGEND.format(unit=unit)]
    extra = _parameter_curves(config, records, main)
    analysis = config.analysis
    if analysis.agreement:
        md += ["## System orderings\n", _system_agreement(records)]
    if analysis.worked_examples:
        md += ["## Worked examples of the RBP paper\n", _worked_examples(measures)]
    if analysis.accuracy:
        md += ["## Residuals\n", _rbp_accuracy(measures, analysis.accuracy)]
    if analysis.residual_depths:
        text, more = _residual_depths(config, measures, analysis.residual_depths, *data)
        md.append(text)
        extra += more
    compared = None
    if config.compare is not None:  # paired tests and discriminative power (experiments/compare.py)
        from rpdi.experiments.compare import report_section

        compared = report_section(out_dir, config, records, data)
        md += ["## Comparing systems\n", compared[0]]
    if config.output.plots:
        extra = [(fn, args[:-1] + (os.path.join(out_dir, "plots", args[-1]),)) for fn, args in extra]
        written = plots.all_plots(out_dir, records, main, extra) + (compared[1] if compared else [])
        manifest["plots"] = [os.path.relpath(p, out_dir) for p in written]
        md += ["## Plots\n", _plot_links(manifest["plots"])]
    write_atomic(os.path.join(out_dir, "summary.md"), "\n".join(md))
    manifest["versions"] = _versions()
    write_atomic(os.path.join(out_dir, "manifest.json"), to_json(manifest))
    return Summary(_terminal(header, summary_rows, lines, out_dir), verdict)


def _plot_links(paths: list[str]) -> str:
    """A Markdown list linking each plot (relative to summary.md), with its SVG twin if any."""
    lines = []
    for p in paths:
        svg = os.path.splitext(p)[0] + ".svg"
        if p != svg:
            lines.append(f"- [{os.path.basename(p)}]({p})" + (f" ([SVG]({svg}))" if svg in paths else ""))
    return "\n".join(lines) + "\n"


def _versions() -> dict:
    import importlib.metadata as md

    versions = {"python": platform.python_version()}
    for pkg in ("rpdi", "numpy", "scipy", "simpy", "matplotlib", "pyarrow", "pandas", "pydantic"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    return versions


def _terminal(header, rows, verdict_lines, out_dir) -> str:
    lines = align([header] + [[number(c) for c in row] for row in rows]).splitlines()
    lines += [""] + verdict_lines + [f"results in {out_dir}"]
    return "\n".join(lines) + "\n"
