"""The ``rpdi`` command line: a thin layer over the packages' functions.

Bad input of any kind exits with status 2 and one line on stderr naming the file, line, key or
measure at fault; nothing is written to stdout then. Heavy modules are imported lazily so that
start-up stays short.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from rpdi.choices import (AVERAGES, COMPAT, CONVENTIONS, CORRECTIONS, ENGINES, FORMATS, INTERVALS, TESTS, TOPICS,
                          UNDEFINED)
from rpdi.experiments.formats import EVAL_FIELDS, SIMULATE_FIELDS, align, to_csv


PLUGIN_HELP = ("a model of one's own, path/to/model.py:Class(param=value,...)@k: its file is imported "
               "and EXECUTES PYTHON CODE, so name only files you trust")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        self.exit(2, f"{self.prog}: {message}\n")


def _collection_arguments() -> argparse.ArgumentParser:
    """The arguments ``eval``, ``simulate`` (and later commands on qrels and runs) share."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("qrels", help="TREC qrels file (topic iter docno grade), plain or .gz")
    p.add_argument("runs", nargs="+", metavar="run",
                   help="TREC run files (topic Q0 docno rank score tag), each named by its file name "
                        "without extension, or given as NAME=PATH (e.g. a=a/run.txt b=b/run.txt)")
    p.add_argument("-m", "--measure", action="append", required=True, dest="measures",
                   help="measure name as in ir_measures (P@10, nDCG@10, RBP(p=0.8)) or trec_eval "
                        "(P_10, map, ndcg_cut.10,20, all_trec); repeatable. rpdi simulate also takes "
                        + PLUGIN_HELP)
    p.add_argument("-q", "--per-topic", action="store_true", help="also report every topic (trec_eval -q)")
    p.add_argument("--topics", choices=TOPICS, default=None,
                   help="mean over all qrels topics (trec_eval -c; the default, except with --format trec) "
                        "or over those each run retrieved for (plain trec_eval)")
    p.add_argument("--doc-lengths", metavar="FILE",
                   help="document lengths in words ('docno words' lines) for time-based users (TBG)")
    _digits_argument(p)
    return p


def _digits_argument(p) -> None:
    p.add_argument("--digits", type=int, default=4, choices=range(1, 18), metavar="N",
                   help="decimals of the values in tables (default 4); standard errors are shown "
                        "with N significant digits, z with 2 decimals; csv and json are exact")


def _eval_parser(sub, common) -> None:
    p = sub.add_parser("eval", parents=[common], help="evaluate runs with closed-form measures",
                       description="Evaluate TREC runs against qrels with closed-form measures.")
    p.add_argument("--format", choices=FORMATS + ("trec",), default="table")
    p.add_argument("--undefined", choices=UNDEFINED, default="zero",
                   help="report undefined values (R = 0) as 0 (trec_eval, default) or null")
    p.add_argument("--average", choices=AVERAGES, default="macro",
                   help="mean of per-topic values (default) or pooled ratio (P, R, SetP, SetR, Fallout)")
    p.add_argument("--compat", choices=COMPAT, default="trec_eval",
                   help="trec_eval 10.0's numbers (default), or pytrec_eval's: trec_eval 9.x's "
                        "interpolation rule and scores stored as float32")
    p.add_argument("-c", dest="all_topics", action="store_true",
                   help="trec_eval -c: average over every qrels topic (same as --topics qrels)")
    p.add_argument("-M", dest="max_docs", type=int, metavar="N",
                   help="trec_eval -M: evaluate only the first N documents of each topic")
    p.add_argument("-J", dest="judged_only", action="store_true",
                   help="trec_eval -J: remove unjudged documents from the rankings first")
    p.add_argument("-l", dest="relevance_level", type=float, default=1, metavar="LEVEL",
                   help="trec_eval -l: the grade from which a document counts as relevant in "
                        "trec_eval-named measures (default 1)")
    p.add_argument("-N", dest="num_docs", type=float, default=0.0, metavar="N",
                   help="trec_eval -N: documents in the collection (for utility's d parameter)")
    p.set_defaults(handler=_cmd_eval)


def _simulate_parser(sub, common) -> None:
    p = sub.add_parser("simulate", parents=[common],
                       help="closed form vs exact browsing model vs simulated users",
                       description="For every measure: its closed form, the exact expectation of its "
                                   "browsing model, and simulated users with a standard error and z-score.")
    p.add_argument("--users", type=int, default=10_000,
                   help="simulated users per (run, topic, measure); 0: closed form and exact only")
    p.add_argument("--target-stderr", type=float, default=None,
                   help="simulate until the standard error is this small (instead of --users)")
    p.add_argument("--max-users", type=int, default=10_000_000, help="cap for --target-stderr")
    p.add_argument("--seed", type=int, default=0, help="root of the random streams (>= 0)")
    p.add_argument("--force", action="store_true",
                   help="simulate even when the estimated work exceeds the limit (see README)")
    p.add_argument("--engine", choices=ENGINES, default="vector")
    p.add_argument("--convention", choices=CONVENTIONS, default="unknown",
                   help="what a user meets beyond the ranking (default: unknown, valued as non-relevant)")
    p.add_argument("--alpha", type=float, default=0.01,
                   help="family-wise error rate of the verdict (exit 0 agree, 1 disagree, 2 bad input)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(handler=_cmd_simulate)


def _compare_parser(sub, common) -> None:
    p = sub.add_parser("compare", parents=[common], help="paired significance tests between runs",
                       description="Compare runs pairwise (or against a baseline) on each measure: means, "
                                   "difference with an interval, test statistic, p and adjusted p, effect "
                                   "size; optionally the discriminative power of the measures and what "
                                   "their users experience.")
    p.add_argument("--baseline", help="compare every other run against this one (a run name)")
    p.add_argument("--test", choices=TESTS, default="randomization",
                   help="paired test (default: randomization, Fisher's sign flips)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiple comparisons over each measure's pairs (tukey: randomised Tukey HSD)")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--resamples", "--permutations", type=int, default=10_000, dest="resamples",
                   help="sign flips / bootstrap resamples / Tukey permutations (default 10000)")
    p.add_argument("--interval", choices=INTERVALS, default=None,
                   help="interval of the difference (default: t for the t-test, else bootstrap BCa)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--discriminative-power", action="store_true",
                   help="report each measure's discriminative power (Sakai 2006) over all run pairs")
    p.add_argument("--users", type=int, default=None,
                   help="add P(a user of B fares better than a user of A); N simulated users per "
                        "ranking where the exact outcome distribution is not finite")
    p.add_argument("--force", action="store_true",
                   help="simulate even when the estimated work exceeds the limit (see rpdi simulate --force)")
    p.add_argument("--convention", choices=CONVENTIONS, default="unknown",
                   help="what a user meets beyond the ranking (for --users)")
    p.add_argument("--plots", metavar="DIR", help="write forest.png (and asl.png) into DIR")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(handler=_cmd_compare)


def _run_parser(sub) -> None:
    p = sub.add_parser("run", help="run an experiment described in a TOML config",
                       description="Run an experiment config (a path, or the name of a shipped one: "
                                   "validate_core (default), rbp_paper, metric_agreement, template). "
                                   "A config naming a model of one's own (path/to/model.py:Class) "
                                   "EXECUTES PYTHON CODE from that file: run only configs you trust.")
    p.add_argument("config", nargs="?", default="validate_core")
    p.add_argument("--out", help="output directory (default: the config's output.dir, else results/NAME)")
    p.add_argument("--workers", type=int, default=1, help="local worker processes")
    p.add_argument("--scheduler", help="address of a Dask distributed scheduler (rpdi[distributed])")
    p.add_argument("--fresh", action="store_true", help="discard stored task results and start over")
    p.add_argument("--force", action="store_true",
                   help="simulate even when a task's estimated work exceeds the limit (config: force)")
    p.set_defaults(handler=_cmd_run)


def _properties_parser(sub) -> None:
    p = sub.add_parser("properties", help="decide the seven numeric properties of measures",
                       description="Decide boundedness, monotonicity, convergence, top-weightedness, "
                                   "localization, completeness and realizability (Moffat 2013) by "
                                   "search, with a counterexample for every 'no'.")
    p.add_argument("-m", "--measure", action="append", required=True, dest="measures",
                   help="measure name (its cutoff is the depth studied, default 10), or " + PLUGIN_HELP)
    p.add_argument("--model", action="store_true",
                   help="analyse the browsing model's exact expectation instead of the closed form")
    p.add_argument("--format", choices=["table", "json"], default="table")
    _digits_argument(p)
    p.set_defaults(handler=_cmd_properties)


def _fit_parser(sub) -> None:
    p = sub.add_parser("fit", help="fit browsing models to click logs as click models",
                       description="Fit every browsing model (and the standard click models) to click "
                                   "logs by maximum likelihood and compare them on held-out sessions.")
    p.add_argument("logs", help="click log: the Yandex sample format or a TSV (session query rank docno clicked)")
    p.add_argument("-m", "--model", action="append", dest="models",
                   help="a measure with a browsing model (RBP, INST, ERR, SDCG@10, ...; parameters given "
                        "are held fixed), a click model (CM, PBM, UBM, DCM, DBN, SDBN, GCTR, RCTR, DCTR) "
                        "or path.py:Class(...); repeatable; default: all metric users and click models")
    p.add_argument("--test", help="held-out click log (default: a random --test-fraction of LOGS)")
    p.add_argument("--test-fraction", type=float, default=0.25)
    p.add_argument("--qrels", help="TREC qrels (topic = query id): one attractiveness per grade")
    p.add_argument("--seed", type=int, default=0, help="seed of the train/test split and of simulated users")
    p.add_argument("--no-stderr", action="store_true", help="skip the standard errors (faster)")
    p.add_argument("--plot", help="write the perplexity / CTR / last-click figure here (.png or .svg)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(handler=_cmd_fit)


def _models_parser(sub) -> None:
    p = sub.add_parser("models", help="list the browsing models")
    p.set_defaults(handler=_cmd_models)


def _measures_parser(sub) -> None:
    p = sub.add_parser("measures", help="list the closed-form measures and their parameters")
    p.set_defaults(handler=_cmd_measures)


def _collection(args):
    """The qrels and runs named on the command line, read once (with lengths if given)."""
    from rpdi.metrics import load_runs
    from rpdi.metrics.trec import read_lengths, read_qrels, with_lengths

    qrels = read_qrels(args.qrels)
    runs = load_runs(_named_runs(args.runs))
    if args.doc_lengths:
        lengths = read_lengths(args.doc_lengths)
        runs = [with_lengths(run, lengths) for run in runs]
    return qrels, runs


def _cmd_eval(args) -> str:
    from rpdi.metrics.evaluate import evaluate, expand, trec_report
    from rpdi.metrics.errors import InputError

    _refuse_models_of_ones_own(args.measures)
    expand(args.measures, args.relevance_level)  # malformed measures are reported before the files are read
    qrels, runs = _collection(args)
    topics = "qrels" if args.all_topics else args.topics or ("intersection" if args.format == "trec" else "qrels")
    options = dict(topics=topics, compat=args.compat, max_docs=args.max_docs, judged_only=args.judged_only,
                   relevance_level=args.relevance_level)
    try:
        if args.format == "trec":
            return trec_report(qrels, runs, args.measures, per_topic=args.per_topic, docs=args.num_docs, **options)
        records = evaluate(qrels, runs, args.measures, per_topic=args.per_topic, undefined=args.undefined,
                           average=args.average, **options)
    except (MemoryError, OverflowError) as exc:  # a huge cutoff or parameter, e.g. P@100000000000
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        for m in args.measures:  # name the measure at fault
            try:
                evaluate(qrels, runs, [m], **options)
            except (MemoryError, OverflowError):
                raise InputError(f"measure {m!r}: too large to evaluate ({reason})") from None
        raise InputError(f"too large to evaluate ({reason})") from None
    return _format_eval(records, args.format, args.digits)


def _refuse_models_of_ones_own(measures) -> None:
    """A model of one's own has no closed form: say so before any file is read."""
    from rpdi.metrics.errors import InputError
    from rpdi.usermodels.plugin import is_plugin

    for m in measures:
        if is_plugin(m):
            raise InputError(f"measure {m!r}: a model of one's own has no closed form; "
                             f"use rpdi simulate (exact and simulated values) or rpdi properties")


def _cmd_simulate(args) -> str:
    from rpdi.experiments.report import Summary
    from rpdi.metrics.errors import InputError
    from rpdi.simulate.api import simulate
    from rpdi.simulate.settings import check_settings
    from rpdi.simulate.verdict_text import describe
    from rpdi.usermodels import model_for

    check_settings(dict(users=args.users, seed=args.seed, target_stderr=args.target_stderr,
                        max_users=args.max_users), prefix="--")
    qrels, runs = _collection(args)
    try:
        records, verdict = simulate(qrels, runs, args.measures, users=args.users, seed=args.seed,
                                    engine=args.engine, per_topic=args.per_topic, convention=args.convention,
                                    topics=args.topics or "qrels", target_stderr=args.target_stderr,
                                    max_users=args.max_users, progress=True, alpha=args.alpha,
                                    with_verdict=True, force=args.force)
    except MemoryError as exc:  # arrays grow with the depth read: name the deepest measure
        reason = (str(exc).splitlines() or ["out of memory"])[0]
        deepest = max(args.measures, key=lambda m: model_for(m).k or 0)
        raise InputError(f"measure {deepest!r}: too large to simulate ({reason})") from None
    text = _format_records(records, args.format, SIMULATE_FIELDS, args.digits)
    lines = "\n".join(describe(verdict)) + "\n"
    if args.format == "table":
        text += "\n" + lines
    else:  # keep stdout machine-readable
        sys.stderr.write(lines)
    text = Summary(text)
    text.verdict, text.status = verdict, verdict.status
    return text


def _named_runs(items: list[str]) -> list:
    """Run arguments as paths, or as runs read under their given name for NAME=PATH (a file
    whose own name contains '=' is taken as a path)."""
    import os

    from rpdi.metrics.trec import read_run

    out = []
    for item in items:
        name, sep, path = item.partition("=")
        out.append(read_run(path, name) if sep and name and not os.path.exists(item) else item)
    return out


def _cmd_compare(args) -> str:
    import os

    from rpdi.experiments import compare_plots
    from rpdi.experiments.compare import (FIELDS, POWER_FIELDS, USER_FIELDS, compare, discriminative_power,
                                          format_power, format_table)
    from rpdi.metrics.errors import InputError
    from rpdi.simulate.settings import check_settings

    from rpdi.metrics.evaluate import expand

    _refuse_models_of_ones_own(args.measures)
    expand(args.measures)  # malformed measures are reported before the files are read
    check_settings(dict(seed=args.seed, users=args.users or 0), prefix="--")
    if args.per_topic:
        raise InputError("--per-topic: compare reports pairs of runs over all topics, not single topics")
    if args.discriminative_power and args.baseline:
        raise InputError("--discriminative-power compares all pairs of runs; drop --baseline")
    records = compare(args.qrels, args.runs, args.measures, baseline=args.baseline, test=args.test,
                      correction=args.correction, alpha=args.alpha, resamples=args.resamples,
                      seed=args.seed, interval=args.interval, topics=args.topics or "qrels", users=args.users,
                      convention=args.convention, force=args.force)
    power = discriminative_power(records, args.alpha) if args.discriminative_power else None
    if args.plots:
        interval = args.interval or ("t" if args.test == "t" else "bca")
        what = f"{args.test} test, {args.correction} correction, {interval} interval"
        try:
            compare_plots.forest(records, os.path.join(args.plots, "forest.png"), what)
            if power:
                compare_plots.asl_curves(power, os.path.join(args.plots, "asl.png"), f"{args.test} test")
        except OSError as exc:
            raise InputError(f"--plots {args.plots}: cannot write there: {exc.strerror or exc}") from None
    if power is not None:
        if args.format == "table":
            return format_table(records, args.alpha, args.baseline) + "\n" + format_power(power)
        return _format_records(power, args.format, POWER_FIELDS)
    fields = FIELDS + (USER_FIELDS if args.users is not None else ())
    if args.format == "table":
        return format_table(records, args.alpha, args.baseline)
    return _format_records(records, args.format, fields)


def _cmd_run(args) -> str:
    from rpdi.experiments.run import run_experiment

    return run_experiment(args.config, out=args.out, workers=args.workers, scheduler=args.scheduler,
                          fresh=args.fresh, progress=True, force=args.force)


def _cmd_properties(args) -> str:
    from rpdi.metrics import parse_measure
    from rpdi.metrics.properties import PROPERTIES, analyse, closed_form_scorer, grades_for
    from rpdi.usermodels import model_for
    from rpdi.usermodels.plugin import is_plugin
    from rpdi.usermodels.properties import analyse_model

    from rpdi.metrics.errors import InputError

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
        import json

        return json.dumps(records, indent=1) + "\n"
    header = ["measure"] + list(PROPERTIES)
    rows = [[r["measure"]] + ["yes" if r[p] else "no" for p in PROPERTIES] for r in records]
    lines = [align([header] + rows)]

    def show(case, digits):
        if "ranking" not in case:
            return ""
        return (f"{case['ranking']}" + (f" (R={case['R']})" if "R" in case else "")
                + f" scores {_fmt(case['score'], digits)}")

    for r in records:
        if r["search"].startswith("sampled"):
            lines.append(f"{r['measure']}: {r['search']}")
        for prop, ex in r["counterexamples"].items():
            digits = args.digits
            if "versus" in ex:  # enough decimals to show the two scores differ (e.g. by 5e-9)
                digits = _telling_apart(ex.get("score"), ex["versus"].get("score"), digits)
            shown = show(ex, digits) + (f" vs {show(ex['versus'], digits)}" if "versus" in ex else "")
            lines.append(f"{r['measure']}: not {prop}: {ex['why']}" + (f": {shown}" if shown else ""))
    return "\n".join(lines) + "\n"


FIT_FIELDS = ("model", "fitted", "parameters", "loglik", "perplexity", "train_loglik", "seconds")


def _cmd_fit(args) -> str:
    from rpdi.metrics.clicklogs import read_clicklog
    from rpdi.metrics.errors import InputError
    from rpdi.usermodels.clickmodels import METRIC_USERS, STANDARD, click_model, fit_and_evaluate

    models = args.models or list(METRIC_USERS + STANDARD)
    for m in models:  # unknown models are reported before the logs are read
        click_model(m)
    log = read_clicklog(args.logs, args.qrels)
    if args.test:
        train, test = log, read_clicklog(args.test, args.qrels)
        if test.depth != train.depth:
            raise InputError(f"{args.test}: shows {test.depth} documents per session, {args.logs} {train.depth}")
    else:
        train, test = log.split(args.test_fraction, args.seed)
    if len(train) == 0 or len(test) == 0:
        raise InputError(f"{args.logs}: too few sessions to split into training and test sessions")
    records = fit_and_evaluate(train, test, models, by_grade=args.qrels is not None, seed=args.seed,
                               stderr=not args.no_stderr)
    if args.plot:
        from rpdi.experiments.clickplots import plot_fit

        plot_fit(records, args.plot, f"{len(train)} training, {len(test)} test sessions")
    for r in records:
        del r["curves"]
    if args.format == "table":
        fields = FIT_FIELDS
        return align([list(fields)] + [[_fmt(r[k]) if r[k] is not None else "-" for k in fields] for r in records])
    return _format_records(records, args.format, list(records[0]))


def _telling_apart(a, b, digits: int) -> int:
    """The fewest decimals, at least ``digits``, at which two different numbers print differently."""
    if not (isinstance(a, float) and isinstance(b, float)) or a == b:
        return digits
    while digits < 17 and f"{a:.{digits}f}" == f"{b:.{digits}f}":
        digits += 1
    return digits


def _cmd_models(args) -> str:
    from rpdi.usermodels import MODELS

    lines = []
    from rpdi.metrics import MEASURES

    for name, cls in MODELS.items():
        lines.append(f"{MEASURES[name].describe()}  [{cls.aggregation}]\n    user: {cls.rule}\n"
                     f"    ref:  {cls.citation}")
    closed_only = [name for name, spec in MEASURES.items() if not spec.model]
    lines.append("no browsing model (closed form only, `rpdi eval`): " + ", ".join(closed_only))
    return "\n".join(lines) + "\n"


def _cmd_measures(args) -> str:
    from rpdi.metrics import MEASURES

    lines = []
    for spec in MEASURES.values():
        cutoff = {"required": "@k", "optional": "[@k]", "none": ""}[spec.cutoff]
        lines.append(f"{spec.describe()}{cutoff}\n    {spec.formula}\n    user: {spec.user_model}\n"
                     f"    ref:  {spec.citation}")
    from rpdi.metrics.measures import TREC_FAMILIES

    lines.append("trec_eval 10.0 names (aliases, with trec_eval's parameters, e.g. P_10, P.5,10, "
                 "ndcg.1=3,2=9; all_trec, official): " + ", ".join(TREC_FAMILIES))
    return "\n".join(lines) + "\n"


def _fmt(value, digits: int = 4, field: str = "") -> str:
    """A table cell: a value with ``digits`` decimals; a standard error with ``digits``
    significant digits (a small one must not print as 0.0000 beside its z); z with 2 decimals."""
    if value is None:
        return "null"
    if not isinstance(value, float):
        return str(value)
    if field == "stderr":
        return f"{value:.{digits}g}"
    return f"{value:.2f}" if field == "z" else f"{value:.{digits}f}"


def _format_records(records: list[dict], fmt: str, fields, digits: int = 4) -> str:
    """json (a list of flat records), csv, or an aligned table of the fields."""
    if fmt == "json":
        import json

        return json.dumps(records, indent=1) + "\n"
    if fmt == "csv":
        return to_csv(records, fields)
    return align([list(fields)] + [[_fmt(r[k], digits, k) for k in fields] for r in records])


def _format_eval(records: list[dict], fmt: str, digits: int = 4) -> str:
    """As _format_records; the table has a column per measure (trec lines: trec_report)."""
    if fmt in ("json", "csv"):
        return _format_records(records, fmt, EVAL_FIELDS)
    measures = list(dict.fromkeys(r["measure"] for r in records))
    rows: dict[tuple[str, str], dict] = {}
    for r in records:
        cell = _fmt(r["value"], digits) + ("" if r["residual"] is None else f" +{_fmt(r['residual'], digits)}")
        rows.setdefault((r["run"], r["topic"]), {})[r["measure"]] = cell
    return align([["run", "topic"] + measures] +
                  [[run, topic] + [cells.get(m, "") for m in measures] for (run, topic), cells in rows.items()])


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (importlib.metadata
    would cost every command's start-up)."""

    def __call__(self, parser, namespace, values, option_string=None):
        import rpdi

        print(f"rpdi {rpdi.__version__}")
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="rpdi", description="Effectiveness metrics as explicit stochastic users.")
    parser.add_argument("--version", action=_Version, nargs=0, default=argparse.SUPPRESS,
                        help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    common = _collection_arguments()
    _eval_parser(sub, common)
    _simulate_parser(sub, common)
    _compare_parser(sub, common)
    _run_parser(sub)
    _properties_parser(sub)
    _models_parser(sub)
    _measures_parser(sub)
    _fit_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "eval" and "numpy" not in sys.modules:
        # no linear algebra in eval: OpenBLAS, loaded with numpy, would start a thread per core
        # for nothing (30 ms of wall time and 50 ms of CPU time on 2 cores, more on more)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from rpdi.metrics.errors import InputError

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            text = args.handler(args)
        _numeric_warnings(caught)
    except InputError as exc:
        print(f"rpdi {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        finished = "; finished tasks are kept, rerun to resume" if args.command == "run" else ""
        print(f"rpdi {args.command}: interrupted{finished}", file=sys.stderr)
        return 130
    except ArithmeticError as exc:  # a numeric warning, or an overflow no closer code named
        print(f"rpdi {args.command}: numeric error: {exc}", file=sys.stderr)
        return 1
    except MemoryError as exc:  # what was too big: the message of whoever raised it, else the command
        what = (str(exc).splitlines() or [""])[0] or f"the input or settings of rpdi {args.command}"
        print(f"rpdi {args.command}: out of memory: {what}", file=sys.stderr)
        return 1
    except Exception as exc:  # never a traceback (set RPDI_DEBUG=1 to see one)
        if os.environ.get("RPDI_DEBUG"):
            raise
        if isinstance(exc, OSError) and exc.filename is not None:  # a full disk while writing results
            print(f"rpdi {args.command}: {exc.filename}: {exc.strerror}", file=sys.stderr)
            return 1
        reason = (str(exc).splitlines() or [""])[0]
        print(f"rpdi {args.command}: internal error: {type(exc).__name__}: {reason}", file=sys.stderr)
        return 1
    # rpdi run and rpdi simulate: 1 on an undeclared disagreement
    return _write_stdout(args.command, text) or getattr(text, "status", 0)


def _numeric_warnings(caught) -> None:
    """A numeric warning (overflow, NaN, division by zero) means a result may be wrong: none is
    printed then, but one line naming where it happened (set RPDI_DEBUG=1 to see them all)."""
    numeric = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    if numeric:
        w = numeric[0]
        raise ArithmeticError(f"{w.message} ({os.path.basename(w.filename)}:{w.lineno}); no result is given, "
                              f"as it may be wrong")


def _write_stdout(command: str, text: str) -> int:
    """Write the result: a closed pipe (rpdi ... | head) ends quietly, as Unix tools do; any
    other failure (a full disk) is one line naming where the output went, and status 1."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    except BrokenPipeError:
        error = None
    except OSError as exc:
        error = exc.strerror
    where = "standard output"
    with contextlib.suppress(OSError, ValueError):
        fd = sys.stdout.fileno()
        if os.path.exists(f"/proc/self/fd/{fd}"):
            where += f" ({os.path.realpath(f'/proc/self/fd/{fd}')})"
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)  # the interpreter's flush at exit must not fail again
    if error is None:
        return 0
    print(f"rpdi {command}: cannot write the result to {where}: {error}", file=sys.stderr)
    return 1


def entry() -> None:
    """The ``rpdi`` command: :func:`main`, then the process ends at once with its status.

    The interpreter's own teardown is skipped: pyarrow's thread pool, started by a threaded read,
    can abort it ("terminate called without an active exception", status 134; apache/arrow
    #34314) when the process ends soon after the read, as on a bad input found just after the
    qrels were read (seen in about 1 run in 15 on a loaded machine). Everything rpdi writes is
    flushed and closed by then: results atomically, worker pools and Dask clients explicitly."""
    try:
        status = main()
    except SystemExit as exc:  # argparse: --help, --version, a bad option
        status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    entry()
