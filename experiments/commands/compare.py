"""``rpdi compare``: paired tests between runs, discriminative power, the users' preference."""

from __future__ import annotations

import os

from rpdi.experiments import compare_plots
from rpdi.experiments.commands import worlds
from rpdi.experiments.commands.inputs import collection, measure_names, resolved_measures
from rpdi.experiments.commands.outputs import check_writable
from rpdi.experiments.compare import (FIELDS, INTENT_FIELDS, POWER_FIELDS, TIE_FIELDS, USER_FIELDS, compare,
                                      discriminative_power, unit_fields)
from rpdi.experiments.formats import (compare_table, compare_tie_table, format_records, intent_table, power_table,
                                      to_json)
from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import expand
from rpdi.metrics.uncertain import UncertainQrels
from rpdi.simulate.settings import check_settings


def run(args) -> str:
    measures = resolved_measures(measure_names(args))
    parsed = expand(measures)  # malformed measures are reported before the files are read
    check_settings(dict(seed=args.seed, users=args.users or 0), prefix="--")
    if args.per_topic:
        raise InputError("--per-topic: compare reports pairs of runs over all topics, not single topics")
    check_writable(args.plots, "--plots", directory=True)
    topics = args.topics or "qrels"
    diversity = args.intents is not None or any(m.spec.intents for m in parsed)
    judged = worlds.judgments(args)  # uncertain grades: over judgment worlds
    # the runs read a batch at a time (rpdi.compare, once for the pairs shown and every pair's power), but all at
    # once for judgment worlds
    lazy = not isinstance(judged, UncertainQrels)
    qrels, runs = collection(args, topics, diversity=diversity, qrels=judged, lazy=lazy)
    tests = dict(test=args.test, correction=args.correction, alpha=args.alpha, resamples=args.resamples,
                 seed=args.seed, interval=args.interval, topics=topics, intents=args.intents, ties=args.ties)
    if isinstance(judged, UncertainQrels):
        if args.sessions is not None or any(m.spec.session for m in parsed):
            raise InputError("session measures: not with uncertain grades yet")
        if args.ties != "trec_eval":
            raise InputError(f"--ties {args.ties}: not with uncertain grades yet")
        return worlds.compare(args, measures, qrels, runs, topics,
                              {k: v for k, v in tests.items() if k not in ("topics", "intents", "ties")})
    # a measure's power over all pairs of runs, whichever pairs are shown
    records, per_intent, *every = compare(qrels, runs, measures, baseline=args.baseline, users=args.users,
                                          convention=args.convention, force=args.force, by_intent=True,
                                          sessions=args.sessions, every=args.discriminative_power, **tests)
    power = discriminative_power(every[0], args.alpha) if every else None
    if args.plots:
        interval = args.interval or ("t" if args.test == "t" else "bca")
        what = f"{args.test} test, {args.correction} correction, {interval} interval"
        try:
            compare_plots.forest(records, os.path.join(args.plots, "forest.png"), what)
            if power:
                compare_plots.asl_curves(power, os.path.join(args.plots, "asl.png"), f"{args.test} test")
            if per_intent:
                compare_plots.intents(per_intent, os.path.join(args.plots, "intents.png"), what)
        except OSError as exc:
            raise InputError(f"--plots {args.plots}: cannot write there: {exc.strerror or exc}") from None
    if power is not None:
        if args.format == "table":
            return (compare_table(records, args.alpha, args.baseline) + compare_tie_table(records) + "\n"
                    + power_table(power))
        return format_records(power, args.format, POWER_FIELDS)
    fields = unit_fields(FIELDS + (USER_FIELDS if args.users is not None else ()) + TIE_FIELDS.get(args.ties, ()),
                         any(m.spec.session for m in parsed))
    if args.format == "table":
        text = compare_table(records, args.alpha, args.baseline) + compare_tie_table(records)
        return text + ("\n" + intent_table(per_intent, args.alpha) if per_intent else "")
    if per_intent and args.format == "json":  # the pairs and, per intent, the users' preferences
        return to_json({"pairs": records, "intents": per_intent}) + "\n"
    text = format_records(records, args.format, fields)
    return text + ("\n" + format_records(per_intent, args.format, INTENT_FIELDS) if per_intent else "")
