"""``rpdi properties``: Moffat's seven numeric properties of measures, with counterexamples."""

from __future__ import annotations

from rpdi.experiments.formats import align, number, telling_apart, to_json
from rpdi.metrics.properties import PROPERTIES
from rpdi.usermodels.properties import properties


def run(args) -> str:
    records = properties(args.measures, model=args.model)
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
