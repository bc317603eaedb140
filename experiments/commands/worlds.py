"""What ``rpdi eval`` and ``rpdi compare`` do with uncertain grades: qrels with
``grade:probability`` pairs, or several assessors' qrels (``--assessor FILE[:WEIGHT]``), evaluated
over judgment worlds (:mod:`metrics.uncertain_eval`, :mod:`experiments.compare_worlds`)."""

from __future__ import annotations

from rpdi.metrics.errors import InputError


def judgments(args):
    """None when the qrels are an ordinary file read as always (no pairs, no ``--assessor``);
    else the judgments read: :class:`Qrels` if every grade is certain (the command then runs as on
    ordinary qrels), :class:`UncertainQrels` otherwise."""
    from rpdi.metrics.uncertain_eval import has_pairs, judgments as read

    if not args.assessors and not has_pairs(args.qrels):
        return None
    return read(args.qrels, args.assessors or (), args.missing)


def refuse(args, options: dict[str, bool]) -> None:
    """InputError naming the first option given that uncertain grades do not take."""
    for option, given in options.items():
        if given:
            raise InputError(f"{option}: not with uncertain grades (qrels with grade:probability pairs or "
                             f"--assessor), whose scores are taken over judgment worlds")


def evaluate(args, measures, qrels, runs, topics: str) -> str:
    """``rpdi eval`` over judgment worlds, in the format asked for."""
    from rpdi.experiments.formats import format_records, worlds_eval_table
    from rpdi.metrics.uncertain_eval import FIELDS, check_settings, evaluate as evaluate_worlds

    check_settings(args.worlds, args.seed)
    refuse(args, {"--format trec": args.format == "trec", "--average micro": args.average != "macro",
                  "--undefined null": args.undefined != "zero", "--intents": args.intents is not None,
                  "-l": args.relevance_level != 1, "-N": args.num_docs != 0})
    records = evaluate_worlds(qrels, runs, measures, per_topic=args.per_topic, worlds=args.worlds, seed=args.seed,
                              topics=topics, compat=args.compat, max_docs=args.max_docs, judged_only=args.judged_only)
    if args.format == "table":
        return worlds_eval_table(records, args.digits)
    return format_records(records, args.format, FIELDS)


def compare(args, measures, qrels, runs, topics: str, tests: dict) -> str:
    """``rpdi compare`` on the most probable grades and over judgment worlds."""
    from rpdi.experiments.compare import FIELDS
    from rpdi.experiments.compare_worlds import WORLD_FIELDS, compare as compare_worlds
    from rpdi.experiments.formats import compare_table, format_records, worlds_compare_table
    from rpdi.metrics.uncertain_eval import check_settings

    check_settings(args.worlds, args.seed)
    refuse(args, {"--users": args.users is not None, "--discriminative-power": args.discriminative_power,
                  "--intents": args.intents is not None, "--plots": bool(args.plots)})
    records = compare_worlds(qrels, runs, measures, worlds=args.worlds, baseline=args.baseline,
                             topics=topics, **tests)
    if args.format == "table":
        return compare_table(records, args.alpha, args.baseline) + "\n" + worlds_compare_table(records, args.digits)
    return format_records(records, args.format, FIELDS + WORLD_FIELDS)
