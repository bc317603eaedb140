"""The verdict's exact checks: each holds or not, outside the stochastic family's error budget.

* closed form vs exact, per ranking: equal to a relative ``RELATIVE``, or equal to what the
  model *declares* instead (its ``declared``: TBG's random reading times, RBP's horizon);
* closed form vs the model's naive oracle (its ``oracle``: the measure rank by rank from its
  definition), for closed forms whose helpers the model shares;
* each run's rankings in trec_eval's order (:func:`reading_cells`);
* each ranking's users drawn from a stream of its own (:func:`streams_cell`).
"""

from __future__ import annotations

from rpdi.simulate.cells import Oracle, Reading, Streams
from rpdi.simulate.ranking import block_rng

RELATIVE = 1e-9  # closed form vs exact: relative tolerance, plus ABSOLUTE (rounding of sums
ABSOLUTE = 1e-12  # of many terms, and the exact evaluator stopping below 1e-15 of mass) near 0


def closed_vs_exact(model, closed: float, exact_value: float, ranking) -> tuple[bool, float, str]:
    """(agrees?, the exact value expected, relation) of one ranking's closed form and exact value
    on ``ranking`` (a :class:`simulate.ranking.Ranking`). Under convention stop the exact value
    compared is the one under ``nonrelevant`` (a closed form's convention)."""
    declared = model.declared
    relation = "exact = closed form" if declared is None else declared.relation
    expected = closed if declared is None else declared.expected(closed, model, ranking)
    ok = abs(exact_value - expected) <= RELATIVE * max(abs(expected), abs(exact_value)) + ABSOLUTE
    return bool(ok), float(expected), relation


def oracle_cell(model, ident: dict, closed: float, ranking, grades, ideal) -> Oracle | None:
    """The check of one ranking's closed form against the model's naive oracle (None: the model
    has none, its cutoff is not the measure's, or the oracle cannot say here)."""
    if model.oracle is None or model.measure.cutoff != model.k:
        return None
    want = model.oracle(ranking, grades, ideal)
    if want is None:
        return None
    ok = abs(closed - want) <= RELATIVE * abs(want) + ABSOLUTE
    return Oracle(**ident, closed_form=closed, expected=want, ok=bool(ok))


def reading_cells(qrels, runs, rankings) -> list[Reading]:
    """One exact check per run that its rankings are trec_eval's order: each topic's documents
    sorted again by a plain sort on (score, docno), both descending (docno in byte order), and
    their grades (0 unjudged) compared with the built rankings'. Independent of the vectorised
    reader, it is the only check that sees a reading bug both the closed forms and the models
    inherit (a reversed tie-break). Topics whose run lists a document twice, or whose qrels
    judge a document twice, are left out (their reading is a convention, not a rule)."""
    judged, twice = {}, set()
    for t, d, g in zip(qrels.topic.tolist(), qrels.docno.tolist(), qrels.grade.tolist()):
        if (t, d) in judged:
            twice.add(t)
        judged[(t, d)] = max(g, 0.0)
    topic_index = {str(t): i for i, t in enumerate(rankings.topics)}
    cells = []
    for s, run in enumerate(runs):
        lines: dict[str, list] = {}
        for t, d, x in zip(run.topic.tolist(), run.docno.tolist(), run.score.tolist()):
            lines.setdefault(t, []).append((x, d))
        wrong = []
        for t, docs in lines.items():
            i = topic_index.get(t)
            if i is None or t in twice or len({d for _, d in docs}) < len(docs):
                continue
            want = [judged.get((t, d), 0.0) for _, d in sorted(docs, reverse=True)]
            have = rankings.grade[s, i, :rankings.length[s, i]].tolist()
            if have != want:
                wrong.append(t)
        cells.append(Reading(run=run.name, topic=wrong[0] if wrong else "all", measure="-", ok=not wrong,
                             wrong_topics=len(wrong)))
    return cells


def first_draw(task) -> int:
    """The first draw of a task's first block of users (:func:`streams_cell`)."""
    return int(block_rng(task, 0).integers(2 ** 63))


def streams_cell(measure: str, idents: list[tuple[str, str]], draws: list[int]) -> Streams:
    """Every test below assumes each ranking's users independent of every other ranking's, so
    each (run, topic) task must draw from its own stream: a deterministic check that the first
    draw of each task's first block of users (:func:`first_draw`, in ``draws``) differs from
    every other task's. A stream shared by the topics of a run makes them all move together,
    which no per-ranking test can see and the test of the mean over topics sees only where the
    topics' rankings are alike. The confirmation stage's streams are among them too (their
    ``idents`` marked): a confirmation drawing the first stage's users again would not be the
    independent test the verdict's error rate rests on."""
    first: dict[int, tuple[str, str]] = {}
    shared = []
    for ident, x in zip(idents, draws):
        if x in first:
            shared.append((first[x], ident))
        first.setdefault(x, ident)
    return Streams(run="all", topic="all", measure=measure, tasks=len(draws), shared=shared, ok=not shared)
