"""Every output format of the command line and the reports, in one place: numbers, aligned text
tables, Markdown tables, CSV and JSON of flat records, and the tables of ``rpdi eval`` and
``rpdi compare``.

A number's text depends on what it is (:func:`number`): a value has ``digits`` decimals; a
standard error ``digits`` significant digits (a small one must not print as 0.0000 beside its z);
z two decimals. Example: ``number(0.000123, 4, "significant")`` is ``'0.000123'``, ``number(None)``
is ``'–'``.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap

EVAL_FIELDS = ("run", "topic", "measure", "value", "residual", "method")  # method: closed_form or exact
# users: simulated users per topic, as --users counts them (in a topic "all" row: the mean over
# the topics simulated)
SIMULATE_FIELDS = ("run", "topic", "measure", "aggregation", "closed_form", "exact", "estimate",
                   "stderr", "z", "users")


def number(value, digits: int = 4, style: str = "fixed", none: str = "–") -> str:
    """A table cell: ``none`` for None, str() of anything but a float, else the float with
    ``digits`` decimals (``fixed``), ``digits`` significant digits (``significant``), or
    ``digits`` decimals unless it is a nonzero number below 10^-digits, then as 1.2e-05
    (``compact``)."""
    if value is None:
        return none
    if not isinstance(value, float):
        return str(value)
    if style == "significant":
        return f"{value:.{digits}g}"
    if style == "compact" and value != 0 and abs(value) < 10 ** -digits:
        return f"{value:.1e}"
    return f"{value:.{digits}f}"


def field_cell(value, digits: int, field: str) -> str:
    """A cell of a record table: ``stderr`` with ``digits`` significant digits, ``z`` with 2
    decimals, anything else with ``digits`` decimals; None (undefined) is ``–``, as in every
    table (JSON has null, CSV an empty cell)."""
    if field == "stderr":
        return number(value, digits, "significant")
    return number(value, 2 if field == "z" else digits)


def telling_apart(a, b, digits: int) -> int:
    """The fewest decimals, at least ``digits``, at which two different numbers print differently."""
    if not (isinstance(a, float) and isinstance(b, float)) or a == b:
        return digits
    while digits < 17 and f"{a:.{digits}f}" == f"{b:.{digits}f}":
        digits += 1
    return digits


def align(table: list[list[str]]) -> str:
    """Rows of cells as left-aligned columns two spaces apart."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table) + "\n"


def md_table(header: list[str], rows: list[list]) -> str:
    """A Markdown table; numbers with 4 decimals, None as –."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(number(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(records: list[dict], fields) -> str:
    """CSV with a header line; None becomes an empty cell."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if r[k] is None else r[k]) for k in fields} for r in records)
    return out.getvalue()


def to_json(data) -> str:
    """JSON indented by one space (no final newline)."""
    return json.dumps(data, indent=1)


def format_records(rows: list[dict], fmt: str, fields, digits: int = 4) -> str:
    """json (a list of flat records), csv, or an aligned table of the fields."""
    if fmt == "json":
        return to_json(rows) + "\n"
    if fmt == "csv":
        return to_csv(rows, fields)
    return align([list(fields)] + [[field_cell(r[k], digits, k) for k in fields] for r in rows])


def cap_lines(records: list[dict], target_stderr: float, max_users: int) -> list[str]:
    """A line per measure whose simulation ``--max-users`` stopped on some rankings before their
    standard error reached ``target_stderr``, with the standard errors achieved there (from the
    per-topic records of :func:`rpdi.simulate`)."""
    lines = []
    for measure in dict.fromkeys(r["measure"] for r in records):
        simulated = [r for r in records if r["measure"] == measure and r["topic"] != "all" and r["users"]]
        capped = [r["stderr"] for r in simulated
                  if r["users"] >= max_users and r["stderr"] is not None and r["stderr"] > target_stderr]
        if capped:
            lines.append(f"{measure}: --max-users {max_users} bound on {len(capped)} of {len(simulated)} rankings "
                         f"before --target-stderr {target_stderr:g} was reached; their standard errors are "
                         f"{min(capped):.3g} to {max(capped):.3g}")
    return lines


def format_eval(rows: list[dict], fmt: str, digits: int = 4) -> str:
    """As :func:`format_records`; the table has a column per measure, a value's residual after it."""
    if fmt in ("json", "csv"):
        return format_records(rows, fmt, EVAL_FIELDS + tie_fields(rows))
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    cells: dict[tuple[str, str], dict] = {}
    for r in rows:
        shown = number(r["value"], digits)
        if r["residual"] is not None:
            shown += f" +{number(r['residual'], digits)}"
        cells.setdefault((r["run"], r["topic"]), {})[r["measure"]] = shown + tie_cell(r, digits)
    table = align([["run", "topic"] + measures] +
                  [[run, topic] + [row.get(m, "") for m in measures] for (run, topic), row in cells.items()])
    note = _exact_note(rows, "the exact expectation of the browsing model, + the width of the "
                             "interval that unjudged documents and the unknown tail leave", "\n")
    return table + note + tie_note(rows)


def session_note(rows: list[dict], fmt: str, source: str | None) -> str:
    """The line under an ``rpdi eval`` table of session measures: what its topics are (nothing
    for CSV and JSON, whose ``topic`` field is the session)."""
    if fmt != "table":
        return ""
    sessions = len({r["topic"] for r in rows if r["topic"] != "all"})
    whence = source if source is not None else "the CAsT ids SESSION_TURN of the qrels' topics"
    count = f"{sessions} sessions, " if sessions else ""
    return (f"topic: a session ({count}from {whence}), its turns read end to end; all: the mean over "
            f"the sessions\n")


def worlds_eval_table(rows: list[dict], digits: int = 4) -> str:
    """``rpdi eval`` on uncertain grades: per run, topic and measure the expectation over judgment
    worlds, its standard deviation, the interval and how it was found (a sampled one with its
    Monte Carlo standard error)."""
    table = [["run", "topic", "measure", "expected", "sd", "interval", "path"]]
    for r in rows:
        path = r["path"] + (f" ±{number(r['error'], 2, 'significant')}" if r["path"] == "sampled" else "")
        table.append([r["run"], r["topic"], r["measure"], number(r["value"], digits), number(r["sd"], digits),
                      f"[{number(r['low'], digits)}, {number(r['high'], digits)}]", path])
    return align(table) + ("\nexpected: the mean over judgment worlds (each document's grade drawn from its "
                           "distribution); interval: their central 95%; path: exact (enumeration, linear, "
                           "exact moments) or sampled worlds ± the Monte Carlo standard error\n")


def worlds_compare_table(records: list[dict], digits: int = 4) -> str:
    """``rpdi compare`` over judgment worlds: per pair, the difference on the most probable
    grades, then its expectation over worlds, sd and interval, and P(B beats A)."""
    table = [["run_a", "run_b", "measure", "diff (most probable)", "E[diff]", "sd", "interval", "P(B beats A)",
              "path"]]
    for r in records:
        beats = number(r["p_b_beats"], digits)
        if r["p_error"]:
            beats += f" ±{number(r['p_error'], 2, 'significant')}"
        table.append([r["run_a"], r["run_b"], r["measure"], number(r["diff"], digits),
                      number(r["worlds_diff"], digits), number(r["worlds_sd"], digits),
                      f"[{number(r['worlds_low'], digits)}, {number(r['worlds_high'], digits)}]", beats,
                      r["worlds_path"]])
    return ("over judgment worlds (each document's grade drawn from its distribution; only the judgments' "
            "uncertainty, the topics as given):\n" + align(table) +
            "P(B beats A) from drawn worlds ± its Monte Carlo error; 0 or 1 from N drawn worlds: below 3/N, or "
            "above 1 - 3/N (95%)\n")


def unit_name(session: bool) -> str:
    """What the observations of an evaluation are: ``sessions`` for session measures (each session
    one observation, its turns read end to end), else ``topics``."""
    return "sessions" if session else "topics"


def units(records: list[dict]) -> str:
    """What a comparison's observations are (:func:`unit_name`): ``sessions`` when its pair
    records count sessions."""
    return unit_name(bool(records) and "sessions" in records[0])


_SUPERSCRIPT = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))


def _compact(x, digits: int = 4) -> str:
    return number(x, digits, "compact")


def compare_table(records: list[dict], alpha: float, baseline: str | None = None) -> str:
    """Two tables: the runs' means with significance marks (superscript letters: the runs this
    one is significantly better than; against a baseline, † better and ‡ worse than it), and
    one line per pair with the interval, p-values, effect size and, if computed, the users'
    P(B better). A legend says what the marks mean."""
    runs = list(dict.fromkeys([r["run_a"] for r in records] + [r["run_b"] for r in records]))
    measures = list(dict.fromkeys(r["measure"] for r in records))
    letters = list(_SUPERSCRIPT)
    labels = {run: letters[i] if i < len(letters) else str(i + 1) for i, run in enumerate(runs)}
    means, marks = {}, {(run, m): [] for run in runs for m in measures}
    for r in records:
        means[r["run_a"], r["measure"]] = r["mean_a"]
        means[r["run_b"], r["measure"]] = r["mean_b"]
        if not r["significant"] or r["diff"] == 0:
            continue
        better, worse = (r["run_b"], r["run_a"]) if r["diff"] > 0 else (r["run_a"], r["run_b"])
        if baseline is None:
            marks[better, r["measure"]].append(worse)
        elif r["run_b"] == better:
            marks[better, r["measure"]].append("†")
        else:
            marks[worse, r["measure"]].append("‡")

    def cell(run, m):
        mark = marks[run, m]
        if baseline is None:
            shown = [labels[w] for w in sorted(mark, key=runs.index)]
            text = "".join(_SUPERSCRIPT.get(s, f"^{s}") for s in shown)
        else:
            text = "".join(mark)
        return _compact(means[run, m]) + text

    rows = [["", "run"] + measures]
    rows += [[f"({labels[run]})", run + (" (baseline)" if run == baseline else "")] + [cell(run, m) for m in measures]
             for run in runs]
    first = records[0]
    if baseline is None:
        legend = (f"superscripts: the runs (by letter) this run is significantly better than "
                  f"(adjusted p <= {alpha:g})")
    else:
        legend = (f"†: significantly better than the baseline, ‡: significantly worse "
                  f"(adjusted p <= {alpha:g})")
    header = ["measure", "A", "B", "mean A", "mean B", "B - A", "interval", "p", "p adj", "sig",
              "effect"]
    users = "user_b_better" in first
    if users:
        header += ["P(B user better)", "users' interval", "outcome"]
    lines = []
    for r in records:
        row = [r["measure"], r["run_a"], r["run_b"], _compact(r["mean_a"]), _compact(r["mean_b"]), _compact(r["diff"]),
               f"[{_compact(r['ci_low'])}, {_compact(r['ci_high'])}]", _compact(r["p"]), _compact(r["p_adjusted"]),
               "*" if r["significant"] else "", _compact(r["effect_size"], 2)]
        if users:
            row += [_compact(r["user_b_better"]), f"[{_compact(r['user_ci_low'])}, {_compact(r['user_ci_high'])}]"
                    if r["user_b_better"] is not None else "–",
                    f"{r['user_outcome']} ({r['user_method']})" if r["user_outcome"] else "–"]
        lines.append(row)
    unit = units(records)
    text = align(rows) + legend + f"; {first[unit]} {unit}\n\n" + align([header] + lines)
    text += ("interval: of the mean difference B - A; effect: mean difference / sd of the "
             "differences; *: adjusted p <= alpha\n")
    if users:
        text += ("P(B user better): chance that a user of B ends with a better outcome than a user "
                 f"of A on the same {unit[:-1]} (ties half; 0.5 = no difference), mean over {unit}\n")
    return text + _exact_note(records, "compared on the exact expectations of the browsing model")


def _exact_note(records: list[dict], what: str, before: str = "") -> str:
    """A line under a table naming its measures that have no closed form (``method`` exact), or nothing."""
    exact = list(dict.fromkeys(r["measure"] for r in records if r["method"] == "exact"))
    return f"{before}{', '.join(exact)}: no closed form; {what}\n" if exact else ""


def intent_table(records: list[dict], alpha: float) -> str:
    """Per intent-aware measure, per intent (the j-th most likely of each topic) and pair: which
    run's users with that intent fare better, with the interval over topics and the test of 1/2.
    A legend says what the columns mean."""
    header = ["measure", "intent", "P(i|q)", "topics", "A", "B", "P(B user better)", "interval", "p", "p adj", "sig",
              "better for them"]
    rows = [[r["measure"], str(r["intent"]), _compact(r["probability"], 3), str(r["topics"]), r["run_a"], r["run_b"],
             _compact(r["user_b_better"]), f"[{_compact(r['ci_low'])}, {_compact(r['ci_high'])}]", _compact(r["p"]),
             _compact(r["p_adjusted"]), "*" if r["significant"] else "",
             (r["run_b"] if r["user_b_better"] > 0.5 else r["run_a"]) if r["significant"] else "–"] for r in records]
    return ("Users per intent: intent j is each topic's j-th most likely (1: the majority intent); P(i|q) its mean "
            "probability over the topics that have one\n" + align([header] + rows)
            + f"P(B user better): chance that a user of B with this intent ends with a better outcome than a user of A "
              f"with it (ties half), mean over topics; *: adjusted p <= {alpha:g} against 1/2 (no preference)\n")


def power_table(power: list[dict]) -> str:
    """Discriminative power per measure as an aligned table."""
    import numpy as np  # here: the command line's start-up imports this module

    rows = [["measure", "pairs", f"significant (p <= {power[0]['alpha']:g})", "discriminative power",
             "median ASL"]]
    rows += [[p["measure"], str(p["pairs"]), str(p["significant"]), _compact(p["discriminative_power"]),
              _compact(float(np.median(p["asl"])))] for p in power]
    return align(rows)


# -- rpdi fit ---------------------------------------------------------------------------------

FIT_FIELDS = ("model", "fitted", "parameters", "loglik", "loglik vs best", "perplexity", "perplexity vs best",
              "train_loglik", "Vuong z vs best", "not told apart from (held out)", "seconds")


def fit_table(records: list[dict], settings: dict) -> str:
    """The models best held-out perplexity first; per criterion the gap to the best model with
    its interval (held out) or Vuong's z (training), ≈ where the data cannot tell the model from
    the best. A legend says how."""
    def gap(r, c, digits):
        if r[f"{c}_vs_best_p_adj"] is None:
            return "best"
        mark = "≈ " if r[f"{c}_tied_best"] else ""
        return (f"{mark}{number(r[f'{c}_vs_best'], digits)} "
                f"[{number(r[f'{c}_vs_best_low'], digits)}, {number(r[f'{c}_vs_best_high'], digits)}]")

    def vuong(r):
        if r["train_loglik_vs_best_p_adj"] is None:
            return "best"
        z = r["train_loglik_vs_best_z"]
        return ("≈ " if r["train_loglik_tied_best"] else "") + ("same" if z is None else f"{z:.1f}")

    def apart(r):
        ll, ppl = r["loglik_not_told_apart"], r["perplexity_not_told_apart"]
        names = [m["model"] for m in records if m["model"] in ll or m["model"] in ppl]
        return ", ".join(n if n in ll and n in ppl else f"{n} ({'loglik' if n in ll else 'perplexity'})"
                         for n in names) or "-"

    rows = [list(FIT_FIELDS)]
    for r in records:
        rows.append([r["model"], number(r["fitted"], none="-"), r["parameters"] or "-", number(r["loglik"]),
                     gap(r, "loglik", 4), number(r["perplexity"]), gap(r, "perplexity", 5),
                     number(r["train_loglik"]), vuong(r), apart(r), number(r["seconds"], 2)])
    first, level = records[0], 1 - settings["alpha"]
    legend = (f"{first['sessions_train']} training, {first['sessions_test']} test sessions. vs best: the gap to "
              f"the best model by that criterion (>= 0), on the test sessions with a {level:.0%} bootstrap "
              f"interval ({settings['resamples']} resamples of the sessions, seed {settings['seed']}); on the "
              f"training sessions Vuong's z (1989) of the paired log-likelihoods. ≈: the data cannot tell this "
              f"model from the best (Holm-adjusted p > {settings['alpha']:g} over the comparisons with the best). "
              f"Not told apart from: the models whose held-out difference to this one has p > "
              f"{settings['alpha']:g} (unadjusted), on both criteria unless one is named. "
              f"Every pair and the calibration per rank: --format json.")
    return align(rows) + textwrap.fill(legend, 100) + "\n"


def fit_json(records: list[dict], pairs: list[dict], settings: dict) -> str:
    """``{"settings", "models", "pairs"}``: every model's record with its calibration per rank
    (observed, predicted and the interval of observed - predicted, for click-through ``ctr`` and
    the last click ``last``), and every pair's tests (:mod:`rpdi.usermodels.clickcompare`).
    ``rpdi eval --measures-from`` reads the ``fitted`` measures back."""
    models = [{**{k: v for k, v in r.items() if k != "curves"}, "calibration": r["curves"]} for r in records]
    return to_json({"settings": settings, "models": models, "pairs": pairs}) + "\n"


# what --ties adds to rpdi eval's records (metrics.tie_scores), after EVAL_FIELDS
TIE_FIELDS = {"expected": ("ties", "stderr"), "range": ("low", "high", "ties")}
TIE_WORDS = {"expected": "each value is its expectation over uniformly random orders of the tied documents "
                         "(equal scores), ± the standard error where orders were sampled; for a rate "
                         "(E[G]/E[N]) the mean over orders of each order's rate (rpdi simulate --ties expected "
                         "also gives the rate of the whole population of users whose orders are random)",
             "range": "each value in trec_eval's order (equal scores by docno, descending), [lowest, highest] "
                      "over every order of the tied documents"}


def _tie_kind(rows: list[dict]) -> str | None:
    """"expected" or "range" if the records carry --ties' fields, else None."""
    first = rows[0] if rows else {}
    return None if "ties" not in first else "expected" if "stderr" in first else "range"


def tie_fields(rows: list[dict]) -> tuple[str, ...]:
    """The fields --ties adds to the records (none without it)."""
    kind = _tie_kind(rows)
    return () if kind is None else TIE_FIELDS[kind]


def tie_cell(r: dict, digits: int) -> str:
    """What a table cell shows after a value under --ties: `` ±se`` for sampled orders, `` [low,
    high]`` for a range; nothing otherwise."""
    if "low" in r:
        return f" [{number(r['low'], digits)}, {number(r['high'], digits)}]"
    if r.get("stderr"):
        return f" ±{number(r['stderr'], 2, 'significant')}"
    return ""


def tie_note(rows: list[dict]) -> str:
    """Under a table of values over tie orders: what they are, and per measure how they were found
    (:mod:`metrics.tie_scores`)."""
    kind = _tie_kind(rows)
    if kind is None:
        return ""
    how: dict[str, set] = {}
    for r in rows:
        how.setdefault(r["measure"], set()).update(r["ties"].split("+"))
    paths = "; ".join(f"{m}: {', '.join(sorted(p - {'unchanged'} or p))}" for m, p in how.items())
    return f"\nties {kind}: {TIE_WORDS[kind]}. How: {paths}\n"


COMPARE_TIE_WORDS = {"expected": "the values compared are each topic's expectation over uniformly random orders "
                                 "of the tied documents (equal scores)",
                     "range": "the values compared are trec_eval's order's (docno descending); diff_low and "
                              "diff_high are the lowest and highest mean difference (b - a) over every order "
                              "of both runs' tied documents"}


def compare_tie_table(records: list[dict]) -> str:
    """Under rpdi compare's table with --ties: for a range, each pair's difference and its lowest
    and highest over the tie orders; what the values are, and per measure how they were found."""
    if not records or "ties" not in records[0]:
        return ""
    kind = "range" if "diff_low" in records[0] else "expected"
    text = ""
    if kind == "range":
        keys = ("diff", "diff_low", "diff_high")
        text = "\n" + align([["measure", "run_a", "run_b", *keys]] +
                            [[r["measure"], r["run_a"], r["run_b"]] + [number(r[k]) for k in keys] for r in records])
    how: dict[str, set] = {}
    for r in records:
        how.setdefault(r["measure"], set()).update(r["ties"].split("+"))
    paths = "; ".join(f"{m}: {', '.join(sorted(p - {'unchanged'} or p))}" for m, p in how.items())
    return text + f"\nties {kind}: {COMPARE_TIE_WORDS[kind]}. How: {paths}\n"


def tie_rate_lines(records: list[dict], digits: int = 4) -> list[str]:
    """Under rpdi simulate --ties expected: what the columns are, and for each rate measure and run
    where they differ, the mean over orders of each order's rate (``exact``, what the closed form's
    expectation is) beside the rate of the whole population whose orders are random
    (``population_rate``: E[G]/E[N] over users and orders; :mod:`usermodels.tie_orders`)."""
    lines = ["ties expected: every user reads each group of tied documents in a random order; closed_form and "
             "exact are expectations over the orders"]
    for r in records:
        p, e = r.get("population_rate"), r["exact"]
        if r["topic"] == "all" and p is not None and e is not None and abs(p - e) > 1e-9 * max(abs(p), abs(e), 1):
            lines.append(f"{r['measure']}, run {r['run']}: the mean over orders of each order's rate (exact) is "
                         f"{number(e, digits)}; the whole population's rate E[G]/E[N] over random orders is "
                         f"{number(p, digits)}")
    return lines
