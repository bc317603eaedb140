"""``rpdi eval``: measures on TREC runs (closed forms; a model of one's own by its exact
expectation), as a table, CSV, JSON or trec_eval's lines."""

from __future__ import annotations

from rpdi.experiments.commands import worlds
from rpdi.experiments.commands.inputs import collection, measure_names, resolved_measures
from rpdi.experiments.formats import format_eval, session_note
from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import evaluate, expand
from rpdi.metrics.trec_report import trec_report
from rpdi.metrics.uncertain import UncertainQrels


def run(args) -> str:
    names = measure_names(args)
    measures = resolved_measures(names)
    parsed = expand(measures, args.relevance_level)  # malformed measures are reported before the files are read
    topics = "qrels" if args.all_topics else args.topics or ("intersection" if args.format == "trec" else "qrels")
    judged = worlds.judgments(args)  # uncertain grades: over judgment worlds
    # intents given: diversity qrels, even if no measure reads them (evaluate then says so)
    qrels, runs = collection(args, topics, diversity=any(m.spec.intents for m in parsed) or args.intents is not None,
                             qrels=judged, lazy=True)
    session = any(m.spec.session for m in parsed) or args.sessions is not None
    if session and (args.format == "trec" or isinstance(judged, UncertainQrels)):
        raise InputError("session measures: " + ("trec_eval has none; give --format table, csv or json"
                                                 if args.format == "trec" else "not with uncertain grades yet"))
    if isinstance(judged, UncertainQrels):
        if args.ties != "trec_eval":
            raise InputError(f"--ties {args.ties}: not with uncertain grades yet")
        return worlds.evaluate(args, measures, qrels, runs, topics)
    options = dict(topics=topics, compat=args.compat, max_docs=args.max_docs, judged_only=args.judged_only,
                   relevance_level=args.relevance_level, intents=args.intents, ties=args.ties)
    if session:
        records = evaluate(qrels, runs, measures, per_topic=args.per_topic, undefined=args.undefined,
                           average=args.average, sessions=args.sessions, **options)
        return format_eval(records, args.format, args.digits) + session_note(records, args.format, args.sessions)
    try:
        if args.format == "trec":
            return trec_report(qrels, runs, measures, per_topic=args.per_topic, docs=args.num_docs, **options)
        records = evaluate(qrels, runs, measures, per_topic=args.per_topic, undefined=args.undefined,
                           average=args.average, **options)
    except (MemoryError, OverflowError) as exc:  # a huge cutoff or parameter, e.g. P@100000000000
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        for text, m in zip(names, measures):  # name the measure at fault
            reads_intents = any(x.spec.intents for x in expand([m], args.relevance_level))
            try:
                evaluate(qrels, runs, [m], **{**options, "intents": args.intents if reads_intents else None})
            except (MemoryError, OverflowError):
                raise InputError(f"measure {text!r}: too large to evaluate ({reason})") from None
        raise InputError(f"too large to evaluate ({reason})") from None
    return format_eval(records, args.format, args.digits)
