"""What trec_eval prints, line for line, for one run or several: the report behind
``rpdi eval --format trec``."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import _aggregate, compute, preparer
from rpdi.metrics.run_files import run_batches, run_items
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.tie_scores import check_ties, tie_scores
from rpdi.metrics.trec_names import TrecFamily, TrecLine, trec_eval_selection, trec_lines


def trec_report(qrels, runs, names: Sequence[str | Measure], *, per_topic: bool = False, topics: str = "intersection",
                compat: str = "trec_eval", max_docs: int | None = None, judged_only: bool = False,
                relevance_level: float = 1, docs: float = 0.0, intents=None, ties: str = "trec_eval") -> str:
    """What ``trec_eval [-q] [-c] [-M n] [-J] [-l n] [-N n] -m NAME ... QRELS RUN`` prints, line for
    line: per topic (with ``per_topic``, topics in byte order, each the measures in trec_eval's
    order), then ``all``; ``%-22s\t%s\t%s`` lines, values to 4 decimals (the diversity and
    intent-aware measures to 6, as ndeval prints them), counts as integers. Names may be rpdi's
    too. ``topics="qrels"`` is trec_eval -c; ``intents`` as in :func:`evaluate`.

    Several runs give one block each, in the order given, headed by the run's ``runid all TAG``
    line (trec_eval's ``runid`` measure: the run's tag), so that the blocks can be told apart
    and each diffed against trec_eval's output for its run: without ``per_topic`` a block is
    what ``trec_eval -m runid -m ...`` prints for the run, line for line; with it, the runid line
    heads the block instead of following the topics' lines. A ``runid`` asked for is not
    repeated. One run's output is trec_eval's, unchanged. ``ties="expected"`` prints each value's
    expectation over the orders of tied documents (:mod:`metrics.tie_scores`) in the same lines;
    a range (two values a line) is not given in trec_eval's lines."""
    if ties == "range":
        raise InputError("ties range: gives two values a measure, not trec_eval's one a line (--format trec); "
                         "use a table, csv or json")
    check_ties(ties)
    texts = [name for name in names if isinstance(name, str)]
    chosen, rest = trec_eval_selection(texts)  # what trec_eval prints for its -m arguments, in its order
    lines = [line for name in chosen for line in trec_lines(name, relevance_level, docs)]
    for name in rest + [m for m in names if isinstance(m, Measure)]:
        found = None if isinstance(name, Measure) else trec_lines(name, relevance_level, docs, strict=False)
        if found is None:
            measure = name if isinstance(name, Measure) else parse_measure(name)
            found = [TrecLine(measure.text, TrecFamily("", "single"), measure)]
        lines += found
    diversity = any(line.measure is not None and line.measure.spec.intents for line in lines)
    prepared = preparer(qrels, topics, compat, max_docs, judged_only, diversity, intents)
    runs = run_items(runs)
    headed = len(runs) > 1  # each run's block starts with its runid line
    out, done = [], set()  # (a run compared with the first is ranked with it: the first's block once)
    for batch in run_batches(runs, [line.measure for line in lines if line.measure is not None], together=False):
        rankings, integer_rankings = prepared(batch)
        runids = [run.runid for run in batch]
        del batch  # the runs' lines freed before the measures are computed
        which = [s for s, name in enumerate(rankings.runs) if name not in done]
        out += _block(rankings, integer_rankings, runids, which, lines, headed, per_topic, topics, compat, ties)
        done.update(rankings.runs)
        del rankings, integer_rankings  # freed before the next batch is read
    return "\n".join(out) + "\n"


def _block(rankings: Rankings, integer_rankings: Rankings | None, runids: list[str], which: list[int],
           lines: list[TrecLine], headed: bool, per_topic: bool, topics: str, compat: str, ties: str) -> list[str]:
    """The lines :func:`trec_report` prints for the runs ``which`` (indices) of ``rankings``."""
    measured = [line for line in lines if line.measure is not None]
    # trec_eval -c sums num_rel as the judgments of grade > 0 in every qrels topic, whatever -l says
    # (its m_num_rel.c); per topic it stays the count at the -l level
    totals = {id(line): parse_measure("NumRel(rel=1)") for line in measured
              if topics == "qrels" and line.name == "num_rel"}
    computed = compute(rankings, [line.measure for line in measured] + list(totals.values()), compat,
                       integer_rankings)
    if ties == "expected":
        computed[:len(measured)] = [tie.score for tie in tie_scores(
            rankings, [line.measure for line in measured], ties, compat, integer_rankings, computed)]
    scores = dict(zip(map(id, measured), computed))
    summed = {**scores, **dict(zip(totals, computed[len(measured):]))}
    summaries = {id(line): _aggregate(summed[id(line)].value, rankings.present, line.measure.spec.average)
                 for line in measured}
    out = []
    for s in which:
        present = rankings.present[s]
        if headed:
            out.append(f"{'runid':<22}\tall\t{runids[s]}")
        if per_topic:
            shown = [line for line in lines if line.family.per_topic]
            texts = [None if line.measure is None else  # the run's values as printed, topic by topic
                     [_trec_value(x, line.family.integer, _decimals(line)) for x in scores[id(line)].value[s].tolist()]
                     for line in shown]
            for t in np.flatnonzero(present).tolist():  # also a topic -J leaves empty, and with -c every qrels topic
                topic = rankings.topics[t]
                for line, text in zip(shown, texts):
                    text = _relstring(rankings, s, t, line.length) if text is None else text[t]
                    out.append(f"{line.name:<22}\t{topic}\t{text}")
        for line in lines:
            if not line.family.summary:
                continue
            if line.measure is None:  # runid
                if not headed:
                    out.append(f"{line.name:<22}\tall\t{runids[s]}")
                continue
            value = _trec_value(summaries[id(line)][s], line.family.integer, _decimals(line))
            out.append(f"{line.name:<22}\tall\t{value}")
    return out


def _decimals(line: TrecLine) -> int:
    """trec_eval's 4 decimals; ndeval's 6 for the measures of diversity qrels."""
    return 6 if line.measure is not None and line.measure.spec.intents else 4


def _trec_value(value: float, integer: bool, decimals: int = 4) -> str:
    value = 0.0 if math.isnan(value) else float(value)
    return str(int(round(value))) if integer else f"{value:.{decimals}f}"


def _relstring(rankings: Rankings, s: int, t: int, length: int) -> str:
    """trec_eval's relstring: a character per retrieved document of the top ``length``: its
    grade (``>`` above 9), ``.`` in the pool but unjudged, ``-`` not in the pool."""
    n = min(length, int(rankings.length[s, t]))
    judged, grade = rankings.judged[s, t, :n], rankings.grade[s, t, :n]
    pooled = judged if rankings.pooled is None else rankings.pooled[s, t, :n]
    chars = np.where(judged, np.where(grade > 9, ">", np.char.mod("%d", np.minimum(grade, 9).astype(int))),
                     np.where(pooled, ".", "-"))
    return "'" + "".join(chars.tolist()) + "'"
