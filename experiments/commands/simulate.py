"""``rpdi simulate``: closed form, exact browsing model and simulated users, with the verdict."""

from __future__ import annotations

import sys

from rpdi.experiments.commands.inputs import collection, measure_names
from rpdi.experiments.formats import SIMULATE_FIELDS, format_records
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
    qrels, runs = collection(args)
    try:
        records, verdict = simulate(qrels, runs, names, users=args.users, seed=args.seed,
                                    engine=args.engine, per_topic=args.per_topic, convention=args.convention,
                                    topics=args.topics or "qrels", target_stderr=args.target_stderr,
                                    max_users=args.max_users, progress=True, alpha=args.alpha,
                                    with_verdict=True, force=args.force)
    except MemoryError as exc:  # arrays grow with the depth read: name the deepest measure
        reason = (str(exc).splitlines() or ["out of memory"])[0]
        deepest = max(names, key=lambda m: model_for(m).k or 0)
        raise InputError(f"measure {deepest!r}: too large to simulate ({reason})") from None
    text = format_records(records, args.format, SIMULATE_FIELDS, args.digits)
    lines = "\n".join(verdict_lines(verdict)) + "\n"
    if args.format == "table":
        text += "\n" + lines
    else:  # keep stdout machine-readable
        sys.stderr.write(lines)
    return Summary(text, verdict)
