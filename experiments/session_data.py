"""The sessions of an experiment's data: a config's session measures checked against its keys,
and the rankings a session measure reads (each session's turns laid end to end)."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from rpdi.experiments.config import Config
from rpdi.metrics.errors import InputError

_CONFIG_KEYS = {"sessions": "data.sessions", "measure": "measures", "ties": "compare.ties", "intents": "data.intents"}


def check_sessions(config: Config, models) -> bool:
    """Whether the config's measures are session measures (then ``data.sessions`` says which
    sessions they read): :func:`metrics.sessions.check_session_call`, its one line re-prefixed
    with the config's key, then InputError for session measures without ``data.sessions`` or
    with residual depths."""
    from rpdi.metrics.sessions import check_session_call

    measures = [m.measure for m in models]
    ties = "trec_eval" if config.compare is None else config.compare.ties
    try:
        if not check_session_call(measures, config.data.sessions, ties, intents=config.data.intents):
            return False
    except InputError as error:
        text = str(error)
        head = re.match(r"measure |\w+( '[^']*')?: ", text).group()
        raise InputError(f"{_CONFIG_KEYS[head.split(' ')[0].rstrip(':')]}: {text[len(head):]}") from None
    session = measures[0].text
    if config.data.sessions is None:
        raise InputError(f"data.sessions: missing: the session measures ({session!r}) read sessions; give a "
                         f"session file ('session position topic' lines) or \"cast\" (the qrels' CAsT topic ids)")
    if config.analysis.residual_depths:
        raise InputError(f"analysis.residual_depths: not with session measures ({session!r}) yet")
    return True


def measure_rankings(source: dict, runs, topics: str, measure):
    """The rankings ``measure`` (a :class:`Measure`) reads of ``runs``: the source's, or for a
    session source each session's turns laid end to end (:func:`metrics.sessions.session_rankings`),
    as wide as ``rpdi simulate --sessions`` lays them out on all the source's runs."""
    from rpdi.experiments.tasks import source_rankings  # tasks imports this module
    from rpdi.metrics.sessions import session_rankings, session_width

    rankings = source_rankings(source, runs, topics)
    if "sessions" not in source:
        return rankings
    sessions, every = source_sessions(json.dumps(source, sort_keys=True), topics)
    return session_rankings(rankings, sessions, session_width(measure, every))


@lru_cache(maxsize=4)
def source_sessions(source_json: str, topics: str):
    """(the sessions, the rankings of all runs) of a session source, once per process."""
    from rpdi.experiments.config import CAST_SESSIONS
    from rpdi.experiments.tasks import load_data, source_rankings  # tasks imports this module
    from rpdi.metrics.run_files import load_runs
    from rpdi.metrics.sessions import given_sessions

    source = json.loads(source_json)
    runs = load_runs(load_data(source)[1])  # every run at once: a session's width is that of all runs' turns
    every = source_rankings(source, runs, topics)
    given = None if source["sessions"] == CAST_SESSIONS else source["sessions"]
    return given_sessions(given, every.topics, runs), every
