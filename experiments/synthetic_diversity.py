"""A synthetic diversity collection: topics with intents of uneven probability, and systems that
serve some intents more than others.

Each topic has 1-4 subtopics (intents) with probabilities drawn from a Dirichlet (so uneven; the
first, "majority" intent the most likely), and a pool of candidate documents, each relevant
(grade 1 or 2) to a random set of the subtopics or to none; a share of topics has one more
subtopic that only non-relevant judgments name, and a share of candidates is never judged. A
system scores every candidate by how well it serves each intent (``focus``: weights over
"majority" and "others") plus noise, rounded to two decimals (ties), and retrieves the top
``depth``. Everything follows from the seed.

>>> qrels, runs, intents = synthetic_diversity(topics=3, seed=1)
>>> sorted({r.name for r in runs}), len(set(qrels.topic.to_pylist()))
(['majority', 'mixed', 'others'], 3)
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.diversity import DiversityQrels, IntentProbabilities
from rpdi.metrics.trec import Run

FOCUS = {"majority": (1.0, 0.0), "others": (0.0, 1.0), "mixed": (0.5, 0.5)}  # weights on intent 1, the rest


def synthetic_diversity(topics: int = 20, depth: int = 20, seed: int = 1, focus: dict | None = None,
                        candidates: int = 40, unjudged: float = 0.2,
                        noise: float = 0.6) -> tuple[DiversityQrels, list[Run], IntentProbabilities]:
    """Diversity qrels, runs and intent probabilities (in memory); see the module docstring."""
    rng = np.random.default_rng(seed)
    focus = FOCUS if focus is None else focus
    q_rows, p_rows, scores = [], [], {name: [] for name in focus}
    for t in range(topics):
        topic = f"{t + 1:02d}"
        n_int = int(rng.integers(1, 5))
        prob = np.maximum(np.round(np.sort(rng.dirichlet(np.full(n_int, 0.8)))[::-1], 3), 0.001)
        prob[0] = round(1 - prob[1:].sum(), 3)  # three decimals summing to 1, as a file writes them
        rel = (rng.random((candidates, n_int)) < 0.12) * rng.integers(1, 3, (candidates, n_int))
        judged = rng.random(candidates) >= unjudged
        judged |= rel.any(1)  # every relevant document found by the assessors
        docs = [f"{topic}-d{c:03d}" for c in range(candidates)]
        for c in np.flatnonzero(judged):
            named = np.flatnonzero(rel[c]) if rel[c].any() else [int(rng.integers(n_int))]
            q_rows += [(topic, str(i + 1), docs[c], float(rel[c, i])) for i in named]
        if rng.random() < 0.3:  # a subtopic that only non-relevant judgments name
            q_rows.append((topic, str(n_int + 1), docs[int(rng.integers(candidates))], 0.0))
        p_rows += [(topic, str(i + 1), float(p)) for i, p in enumerate(prob)]
        served = (rel > 0).astype(float)
        for name, (first, rest) in focus.items():
            weight = np.r_[first, np.full(n_int - 1, rest)]
            x = np.round(served @ weight + rng.normal(0.0, noise, candidates), 2)
            top = np.argsort(-x, kind="stable")[:depth]
            scores[name] += [(topic, docs[c], float(x[c])) for c in top]
    qrels = DiversityQrels(*[[r[k] for r in q_rows] for k in range(3)], np.array([r[3] for r in q_rows]),
                           source="<synthetic diversity qrels>")
    runs = [Run(name, np.array([r[0] for r in rows], dtype=object), np.array([r[1] for r in rows], dtype=object),
                np.array([r[2] for r in rows]), "<synthetic>") for name, rows in scores.items()]
    intents = IntentProbabilities(np.array([r[0] for r in p_rows], dtype=object),
                                  np.array([r[1] for r in p_rows], dtype=object),
                                  np.array([r[2] for r in p_rows]), "<synthetic intents>")
    return qrels, runs, intents


def write_diversity(directory, qrels: DiversityQrels, runs: list[Run], intents: IntentProbabilities) -> dict:
    """Write the collection as files into ``directory`` (made if need be): ``div.qrels`` (``topic subtopic docno
    judgment``), ``intents.txt`` (``topic subtopic probability``) and ``NAME.run`` per run (TREC
    run lines, scores to two decimals); returns {"qrels", "intents", "runs": [paths]}."""
    import os

    os.makedirs(directory, exist_ok=True)

    def write(name, lines):
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.writelines(lines)
        return path

    grades = qrels.grade.tolist()
    out = {"qrels": write("div.qrels", [f"{t} {s} {d} {g:g}\n" for t, s, d, g in zip(
               qrels.topic.to_pylist(), qrels.subtopic.to_pylist(), qrels.docno.to_pylist(), grades)]),
           "intents": write("intents.txt", [f"{t} {s} {p:g}\n" for t, s, p in zip(
               intents.topic.tolist(), intents.subtopic.tolist(), intents.probability.tolist())]),
           "runs": []}
    for run in runs:
        topics, docs = run.topic.to_pylist(), run.docno.to_pylist()
        first = {t: j for j, t in reversed(list(enumerate(topics)))}  # a topic's lines are together, best first
        rank = [j - first[t] + 1 for j, t in enumerate(topics)]
        out["runs"].append(write(f"{run.name}.run", [f"{t} Q0 {d} {r} {x:.2f} {run.name}\n" for t, d, r, x in zip(
            topics, docs, rank, run.score.tolist())]))
    return out
