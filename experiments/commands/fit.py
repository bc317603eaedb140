"""``rpdi fit``: browsing models and click models fitted to click logs, compared on held-out sessions."""

from __future__ import annotations

from rpdi.experiments.commands.outputs import PLOT_FORMATS, check_writable
from rpdi.experiments.formats import align, format_records, number
from rpdi.metrics.clicklogs import read_clicklog
from rpdi.metrics.errors import InputError
from rpdi.usermodels.clickeval import fit_and_evaluate
from rpdi.usermodels.clickmodels import METRIC_USERS, STANDARD, click_model

FIELDS = ("model", "fitted", "parameters", "loglik", "perplexity", "train_loglik", "seconds")


def run(args) -> str:
    check_writable(args.plot, "--plot", formats=PLOT_FORMATS)  # before any fitting
    models = args.models or list(METRIC_USERS + STANDARD)
    for m in models:  # unknown models are reported before the logs are read
        click_model(m)
    train, test = _sessions(args)
    records = fit_and_evaluate(train, test, models, by_grade=args.qrels is not None, seed=args.seed,
                               stderr=not args.no_stderr)
    if args.plot:
        from rpdi.experiments.clickplots import plot_fit

        plot_fit(records, args.plot, f"{len(train)} training, {len(test)} test sessions")
    for r in records:
        del r["curves"]
    if args.format == "table":
        return align([list(FIELDS)] + [[number(r[k], none="-") for k in FIELDS] for r in records])
    return format_records(records, args.format, list(records[0]))


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
