"""``rpdi fit``: browsing models and click models fitted to click logs, compared on held-out
sessions by paired tests (:mod:`rpdi.usermodels.clickcompare`), with their calibration per rank."""

from __future__ import annotations

from rpdi.experiments.commands.outputs import PLOT_FORMATS, check_writable
from rpdi.experiments.formats import fit_json, fit_table, format_records
from rpdi.metrics.clicklogs import read_clicklog
from rpdi.metrics.errors import InputError
from rpdi.usermodels.clickcompare import compare
from rpdi.usermodels.clickeval import fit_and_evaluate
from rpdi.usermodels.clickmodels import METRIC_USERS, STANDARD, click_model


def run(args) -> str:
    check_writable(args.plot, "--plot", formats=PLOT_FORMATS)  # before any fitting
    models = args.models or list(METRIC_USERS + STANDARD)
    for m in models:  # unknown models are reported before the logs are read
        click_model(m)
    if not 0 < args.alpha < 1:
        raise InputError(f"--alpha must lie strictly between 0 and 1, not {args.alpha}")
    if args.resamples < 1:
        raise InputError(f"--resamples must be at least 1, not {args.resamples}")
    train, test = _sessions(args)
    records = fit_and_evaluate(train, test, models, by_grade=args.qrels is not None, seed=args.seed,
                               stderr=not args.no_stderr, alpha=args.alpha)
    pairs = compare(records, seed=args.seed, resamples=args.resamples, alpha=args.alpha)
    if args.plot:
        from rpdi.experiments.clickplots import plot_fit

        plot_fit(records, pairs, args.plot, f"{len(train)} training, {len(test)} test sessions", args.alpha)
    for r in records:
        del r["sessions"]
    settings = {"alpha": args.alpha, "resamples": args.resamples, "seed": args.seed}
    if args.format == "table":
        return fit_table(records, settings)
    if args.format == "json":
        return fit_json(records, pairs, settings)
    for r in records:  # csv: the flat records, a list of models as one cell
        del r["curves"]
        r.update({k: "; ".join(v) for k, v in r.items() if isinstance(v, list)})
    return format_records(records, "csv", list(records[0]))


def _sessions(args):
    """The training and test sessions: the logs and --test, or a random --test-fraction of the logs."""
    log = read_clicklog(args.logs, args.qrels)
    if args.test:
        train, test = log, read_clicklog(args.test, args.qrels)
        if test.depth != train.depth:
            raise InputError(f"{args.test}: shows {test.depth} documents per session, {args.logs} {train.depth}")
    else:
        train, test = log.split(args.test_fraction, args.seed)
    if len(train) == 0 or len(test) == 0:
        raise InputError(f"{args.logs}: too few sessions to split into training and test sessions")
    return train, test
