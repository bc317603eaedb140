"""``rpdi properties``: Moffat's seven numeric properties of measures, with counterexamples."""

from __future__ import annotations

from rpdi.experiments.formats import align, number, telling_apart, to_json
from rpdi.metrics import parse_measure
from rpdi.metrics.errors import InputError
from rpdi.metrics.properties import PROPERTIES, analyse, closed_form_scorer, grades_for
from rpdi.usermodels import model_for
from rpdi.usermodels.plugin import is_plugin
from rpdi.usermodels.properties import analyse_model


def run(args) -> str:
    records = []
    for text in args.measures:
        try:
            if args.model or is_plugin(text):
                analysis = analyse_model(model_for(text))
            else:
                m = parse_measure(text)
                analysis = analyse(closed_form_scorer(m), k=int(m.cutoff or 10), grades=grades_for(m))
        except MemoryError as exc:
            reason = (str(exc).splitlines() or ["out of memory"])[0]
            raise InputError(f"measure {text!r}: its depth is too large to analyse ({reason})") from None
        records.append(analysis.record(text))
    if args.format == "json":
        return to_json(records) + "\n"
    return _text(records, args.digits)


def _text(records: list[dict], digits: int) -> str:
    """A yes/no table of the properties, then a line per counterexample."""
    header = ["measure"] + list(PROPERTIES)
    rows = [[r["measure"]] + ["yes" if r[p] else "no" for p in PROPERTIES] for r in records]
    lines = [align([header] + rows)]

    def show(case, digits):
        if "ranking" not in case:
            return ""
        return (f"{case['ranking']}" + (f" (R={case['R']})" if "R" in case else "")
                + f" scores {number(case['score'], digits, none='null')}")

    for r in records:
        if r["search"].startswith("sampled"):
            lines.append(f"{r['measure']}: {r['search']}")
        for prop, ex in r["counterexamples"].items():
            shown_digits = digits
            if "versus" in ex:  # enough decimals to show the two scores differ (e.g. by 5e-9)
                shown_digits = telling_apart(ex.get("score"), ex["versus"].get("score"), digits)
            shown = show(ex, shown_digits) + (f" vs {show(ex['versus'], shown_digits)}" if "versus" in ex else "")
            lines.append(f"{r['measure']}: not {prop}: {ex['why']}" + (f": {shown}" if shown else ""))
    return "\n".join(lines) + "\n"
