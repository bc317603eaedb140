"""``rpdi simulate``: closed form, exact browsing model and simulated users, with the verdict."""

from __future__ import annotations

from rpdi.experiments.commands import worlds
from rpdi.experiments.commands.inputs import collection, measure_names
from rpdi.experiments.formats import SIMULATE_FIELDS, cap_lines, format_records, session_note, tie_rate_lines
from rpdi.experiments.report import Summary
from rpdi.metrics.errors import InputError
from rpdi.simulate.api import simulate
from rpdi.simulate.verdict_text import verdict_lines
from rpdi.simulate.settings import check_settings
from rpdi.usermodels import model_for


def run(args) -> Summary:
    check_settings(dict(users=args.users, seed=args.seed, target_stderr=args.target_stderr,
                        max_users=args.max_users), prefix="--")
    names = measure_names(args)
    topics = args.topics or "qrels"
    diversity = args.intents is not None or any(model_for(m).measure.spec.intents for m in names)
    judged = worlds.judgments(args)  # uncertain grades: users over judgment worlds (rpdi.simulate takes them)
    qrels, runs = collection(args, topics, diversity=diversity, qrels=judged, lazy=True)  # read a batch at a time
    capped = args.target_stderr is not None  # the per-topic records say where --max-users bound
    try:
        records, verdict = simulate(qrels, runs, names, users=args.users, seed=args.seed,
                                    engine=args.engine, per_topic=args.per_topic or capped,
                                    convention=args.convention, topics=topics,
                                    target_stderr=args.target_stderr, max_users=args.max_users, progress=True,
                                    alpha=args.alpha, with_verdict=True, force=args.force, intents=args.intents,
                                    ties=args.ties, sessions=args.sessions)
    except MemoryError as exc:  # arrays grow with the depth read: name the deepest measure
        reason = (str(exc).splitlines() or ["out of memory"])[0]
        deepest = max(names, key=lambda m: model_for(m).k or 0)
        raise InputError(f"measure {deepest!r}: too large to simulate ({reason})") from None
    notes = cap_lines(records, args.target_stderr, args.max_users) if capped else []
    fields = SIMULATE_FIELDS
    if args.ties == "expected":
        notes += tie_rate_lines(records, args.digits)
        fields += ("population_rate",)
    if any(model_for(m).measure.spec.session for m in names) and args.format == "table":
        notes.append(session_note(records, args.format, args.sessions).rstrip("\n"))
    if not args.per_topic:
        records = [r for r in records if r["topic"] == "all"]
    text = format_records(records, args.format, fields, args.digits)
    lines = "\n".join(notes + verdict_lines(verdict)) + "\n"
    if args.format == "table":
        return Summary(text + "\n" + lines, verdict)
    return Summary(text, verdict, notes=lines)  # stdout stays machine-readable
