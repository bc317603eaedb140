"""The ``rpdi`` command line: a thin layer over the packages' functions.

Bad input of any kind exits with status 2 and one line on stderr naming the file, line, key or
measure at fault; nothing is written to stdout then. Heavy modules are imported lazily so that
start-up stays short.
"""

from __future__ import annotations

import argparse
import sys


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        self.exit(2, f"{self.prog}: {message}\n")


def _eval_parser(sub) -> None:
    p = sub.add_parser("eval", help="evaluate runs with closed-form measures",
                       description="Evaluate TREC runs against qrels with closed-form measures.")
    p.add_argument("qrels", help="TREC qrels file (topic iter docno grade), plain or .gz")
    p.add_argument("runs", nargs="+", metavar="run", help="TREC run files (topic Q0 docno rank score tag)")
    p.add_argument("-m", "--measure", action="append", required=True, dest="measures",
                   help="measure name as in ir_measures, e.g. P@10, nDCG@10, RBP(p=0.8); repeatable")
    p.add_argument("--per-topic", action="store_true", help="also report every topic")
    p.add_argument("--format", choices=["table", "csv", "json", "trec"], default="table")
    p.add_argument("--topics", choices=["qrels", "intersection"], default="qrels",
                   help="mean over all qrels topics (trec_eval -c, default) or those each run retrieved for")
    p.add_argument("--undefined", choices=["zero", "null"], default="zero",
                   help="report undefined values (R = 0) as 0 (trec_eval, default) or null")
    p.add_argument("--average", choices=["macro", "micro"], default="macro",
                   help="mean of per-topic values (default) or pooled ratio (P, R, SetP, SetR, Fallout)")
    p.add_argument("--float32-scores", action="store_true",
                   help="round scores to float32 before ranking, as trec_eval and pytrec_eval store them")
    p.set_defaults(handler=_cmd_eval)


def _measures_parser(sub) -> None:
    p = sub.add_parser("measures", help="list the closed-form measures and their parameters")
    p.set_defaults(handler=_cmd_measures)


def _cmd_eval(args) -> str:
    from metrics import evaluate

    records = evaluate(args.qrels, args.runs, args.measures, per_topic=args.per_topic,
                       topics=args.topics, undefined=args.undefined, average=args.average,
                       float32_scores=args.float32_scores)
    return _format_eval(records, args.format)


def _cmd_measures(args) -> str:
    from metrics import MEASURES

    lines = []
    for spec in MEASURES.values():
        cutoff = {"required": "@k", "optional": "[@k]", "none": ""}[spec.cutoff]
        lines.append(f"{spec.describe()}{cutoff}\n    user: {spec.user_model}\n    ref:  {spec.citation}")
    return "\n".join(lines) + "\n"


def _fmt(value) -> str:
    return "null" if value is None else f"{value:.4f}"


def _format_eval(records: list[dict], fmt: str) -> str:
    if fmt == "json":
        import json

        return json.dumps(records, indent=1) + "\n"
    if fmt == "csv":
        import csv
        import io

        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["run", "topic", "measure", "value", "residual"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in records)
        return out.getvalue()
    if fmt == "trec":
        runs = list(dict.fromkeys(r["run"] for r in records))
        lines = []
        for run in runs:
            if len(runs) > 1:
                lines.append(f"{'runid':<22}\tall\t{run}")
            lines += [f"{r['measure']:<22}\t{r['topic']}\t{_fmt(r['value'])}" for r in records if r["run"] == run]
        return "\n".join(lines) + "\n"
    measures = list(dict.fromkeys(r["measure"] for r in records))
    rows: dict[tuple[str, str], dict] = {}
    for r in records:
        cell = _fmt(r["value"]) + ("" if r["residual"] is None else f" +{r['residual']:.4f}")
        rows.setdefault((r["run"], r["topic"]), {})[r["measure"]] = cell
    header = ["run", "topic"] + measures
    table = [header] + [[run, topic] + [cells.get(m, "") for m in measures] for (run, topic), cells in rows.items()]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="rpdi", description="Effectiveness metrics as explicit stochastic users.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _eval_parser(sub)
    _measures_parser(sub)
    args = parser.parse_args(argv)
    from metrics.trec import InputError

    try:
        text = args.handler(args)
    except InputError as exc:
        print(f"rpdi {args.command}: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
