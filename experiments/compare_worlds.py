"""``rpdi compare`` on uncertain grades: each pair of runs on the most probable grades, as any
comparison, and over the judgment worlds (:mod:`metrics.uncertain_scores`).

The fixed-grade comparison (:func:`experiments.compare.compare`, its test, correction and
interval over topics) is taken on each document's **most probable** grade
(:func:`metrics.uncertain_eval.most_probable`): that is one possible world, so every measure is
defined on it as on any qrels (expected grades would be fractional, which trec_eval's names
truncate, and are no world at all). Beside it, over the worlds: the expected difference of the
runs' mean scores (B - A), its standard deviation and central interval, P(B beats A) and P(tie),
counting only the judgments' uncertainty (the topics are the ones given, not a sample).

>>> q = {"q1": {"a": {0: 0.5, 1: 0.5}, "b": {0: 0.25, 1: 0.75}}, "q2": {"c": 1}}
>>> runs = {"A": {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, "B": {"q1": {"b": 1.0}, "q2": {"c": 1.0}}}
>>> r, = compare(q, runs, ["P@1"])
>>> r["diff"], r["worlds_diff"], r["p_b_beats"], r["p_tie"]
(0.5, 0.125, 0.375, 0.5)
"""

from __future__ import annotations

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.names import parse_measure
from rpdi.metrics.uncertain import load_uncertain_qrels
from rpdi.metrics.uncertain_eval import most_probable
from rpdi.metrics.uncertain_scores import EXACT_WORLDS, LEVEL, compare as compare_runs, join, spread
from rpdi.usermodels import resolve

WORLD_FIELDS = ("grades", "worlds_diff", "worlds_sd", "worlds_low", "worlds_high", "p_b_beats", "p_tie",
                "p_error", "worlds_path")


def compare(qrels, runs, measures, *, worlds: int = 1000, seed: int = 0, topics: str = "qrels",
            exact_worlds: int = EXACT_WORLDS, users: int | None = None, **tests) -> list[dict]:
    """Records of :func:`experiments.compare.compare` on the most probable grades (``tests``: its
    test options, ``seed`` too), each with :data:`WORLD_FIELDS` over the judgment worlds of
    ``qrels`` (``worlds`` drawn where they are not enumerated, seeded by ``seed``)."""
    from rpdi.experiments.compare import compare as fixed_compare

    if users is not None:
        raise InputError("users: what the users experience is not yet taken over judgment worlds; "
                         "compare uncertain grades without --users")
    u = load_uncertain_qrels(qrels)
    records = fixed_compare(most_probable(u), runs, measures, seed=seed, topics=topics, **tests)
    j = join(u, runs, "intersection" if topics == "intersection" else "qrels")
    level = tests.get("level", LEVEL)
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in map(resolve, measures)]  # as compare's
    by_measure = {m.text: spread(j, m, samples=worlds, seed=seed, exact_worlds=exact_worlds, level=level)
                  for m in parsed}
    for r in records:
        c = compare_runs(by_measure[r["measure"]], r["run_a"], r["run_b"], level)
        r.update(grades="most probable", worlds_diff=float(c.difference.mean), worlds_sd=float(c.difference.sd),
                 worlds_low=float(c.difference.low), worlds_high=float(c.difference.high),
                 p_b_beats=c.p_beats, p_tie=c.p_tie, p_error=c.p_error, worlds_path=c.path)
    return records
