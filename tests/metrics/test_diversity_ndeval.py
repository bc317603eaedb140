"""ndeval's diversity measures against pyndeval (ndeval's C code behind a Python interface), on
synthetic collections: ties, documents judged for no subtopic, unjudged documents, a topic whose
relevant documents no run retrieves, a topic with nothing relevant, a topic only the qrels have,
several runs, several alpha and beta; fixed seeds.

The test walks what ndeval prints: every measure of its output (ERR-IA, nERR-IA, alpha-DCG,
alpha-nDCG, P-IA, strec at 5, 10, 20, and NRBP, nNRBP, MAP-IA), every topic of every run, and its
``amean`` line, which pyndeval does not compute: the test makes it from pyndeval's per-topic
values by ndeval's rule (outputMeasures: the sum over the run's topics, divided by the topics the
run shares with the qrels, or with -c by all the qrels' topics). Every other cutoff pyndeval takes
(2 to 20) is compared too.

pyndeval ranks a run by score, ties by docno ascending; rpdi, as trec_eval and ``ndeval
-traditional``, by docno descending. pyndeval is given each run ranked by ndeval -traditional's
comparator, written out here (score descending, then strcmp(b, a)), as scores -rank.
"""

from __future__ import annotations

import math

import numpy as np
import pyndeval
import pytest

from rpdi.metrics import evaluate

NDEVAL_PRINTED = ["ERR-IA@5", "ERR-IA@10", "ERR-IA@20", "nERR-IA@5", "nERR-IA@10", "nERR-IA@20",
                  "alpha-DCG@5", "alpha-DCG@10", "alpha-DCG@20", "alpha-nDCG@5", "alpha-nDCG@10", "alpha-nDCG@20",
                  "NRBP", "nNRBP", "MAP-IA", "P-IA@5", "P-IA@10", "P-IA@20", "strec@5", "strec@10", "strec@20"]
OTHER_CUTOFFS = [f"{name}@{k}" for name in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
                 for k in (2, 3, 7, 13, 19)]
TOL = 1e-12  # far below ndeval's printed precision (%.6f)


def collection(seed: int):
    """Diversity qrels {topic: {subtopic: {docno: grade}}} and runs {name: {topic: {docno: score}}}.

    Topic 1..5: 1-5 subtopics, documents judged for every subtopic of the topic with grades
    0-2 (some judged for none relevant), scores from a few values (ties). Topic 6: relevant
    documents that no run retrieves. Topic 7: nothing relevant. Topic 8: in the qrels only.
    Documents named so that byte order differs from numeric order (d10 < d9)."""
    rng = np.random.default_rng(seed)
    qrels, pools = {}, {}
    for t in range(1, 9):
        n_sub = int(rng.integers(1, 6))
        pool = [f"t{t}d{i}" for i in rng.choice(40, size=int(rng.integers(4, 20)), replace=False)]
        pools[str(t)] = pool
        p_rel = 0.0 if t == 7 else 0.35
        qrels[str(t)] = {str(s): {d: int(rng.choice([1, 2]) if rng.random() < p_rel else 0) for d in pool}
                         for s in sorted(rng.choice(9, size=n_sub, replace=False) + 1)}
    runs = {}
    for r in range(3):
        run = {}
        for t in range(1, 8):
            pool = pools[str(t)]
            judged = [] if t == 6 else list(rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False))
            if t == 6:  # only documents no subtopic finds relevant, and unjudged ones
                judged = [d for d in pool if not any(qrels["6"][s][d] for s in qrels["6"])]
            unjudged = [f"t{t}u{i}" for i in range(int(rng.integers(0, 12)))]
            docs = judged + unjudged
            run[str(t)] = {d: float(rng.integers(0, 6)) for d in docs}
        runs[f"run{r}"] = run
    return qrels, runs


def traditional_order(docs: dict[str, float]) -> list[str]:
    """ndeval -traditional's order (resultCompareByScore): score descending, then docno
    descending by strcmp (Python compares str by code point, which is UTF-8 byte order)."""
    import functools

    def compare(a, b):
        if docs[a] != docs[b]:
            return -1 if docs[a] > docs[b] else 1
        return (b > a) - (b < a)

    return sorted(docs, key=functools.cmp_to_key(compare))


def pyndeval_values(qrels, run, measures, alpha, beta) -> dict[str, dict[str, float]]:
    """pyndeval's per-topic values for the topics the run shares with the qrels. Its qrels are
    given with the subtopics in increasing numeric order (pyndeval numbers subtopics by first
    appearance, ndeval by their number; the order in which it adds a document's gains)."""
    lines = sorted(((t, s, d, g) for t, per in qrels.items() for s, docs in per.items() for d, g in docs.items()),
                   key=lambda x: int(x[1]))
    ranked = [(t, d, -float(rank)) for t, docs in run.items() for rank, d in enumerate(traditional_order(docs))]
    return pyndeval.ndeval(lines, ranked, measures=measures, alpha=alpha, beta=beta)


def ndeval_amean(per_topic: dict[str, dict[str, float]], measure: str, n_topics: int) -> float:
    """ndeval's amean: the total over the run's topics (a topic not in the qrels adds 0) over
    ``n_topics`` (those shared with the qrels, or with -c all the qrels')."""
    return sum(values[measure] for values in per_topic.values()) / n_topics


def _compare(seed, alpha, beta, measures):
    qrels, runs = collection(seed)
    params = f"(alpha={alpha},beta={beta})" if beta is not None else f"(alpha={alpha})"
    ours_names = {m: _with(m, alpha, beta) for m in measures}
    compared, worst, bad = 0, 0.0, []
    for topics in ("qrels", "intersection"):
        ours, undefined = ({(r["run"], r["topic"], r["measure"]): r["value"]
                            for r in evaluate(qrels, runs, list(ours_names.values()), per_topic=True, topics=topics,
                                              undefined=how)} for how in ("zero", "null"))
        for name, run in runs.items():
            theirs = pyndeval_values(qrels, run, measures, alpha, 0.5 if beta is None else beta)
            shared = [t for t in run if t in qrels]
            n_topics = len(qrels) if topics == "qrels" else len(shared)
            for m in measures:
                rows = [(t, theirs[t][m], ours[name, t, ours_names[m]]) for t in shared] if topics == "qrels" else []
                amean = ndeval_amean(theirs, m, n_topics)
                mean = ours[name, "all", ours_names[m]]
                rows.append(("amean" + ("" if topics == "intersection" else " -c"), amean, mean))
                for topic, other, mine in rows:
                    if math.isnan(other):  # ndeval divides 0 by 0 (nNRBP of a topic with nothing relevant):
                        # undefined in rpdi, reported 0 (and its amean is then ndeval's nan)
                        ok = topic.startswith("amean") or (mine == 0 and undefined[name, topic, ours_names[m]] is None)
                    else:
                        ok = mine is not None and abs(mine - other) <= TOL
                        worst = max(worst, abs(mine - other)) if mine is not None else worst
                    compared += 1
                    if not ok:
                        bad.append(f"{name} topic {topic} {m}{params}: rpdi {mine!r} vs pyndeval {other!r}")
    return compared, worst, bad


def _with(measure: str, alpha: float, beta: float | None) -> str:
    """rpdi's name of an ndeval measure with these parameters."""
    name, _, cutoff = measure.partition("@")
    if name in ("P-IA", "strec", "MAP-IA"):
        params = ""
    elif name in ("NRBP", "nNRBP"):
        params = f"(alpha={alpha},beta={beta if beta is not None else 0.5})"
    else:
        params = f"(alpha={alpha})"
    return name + params + (f"@{cutoff}" if cutoff else "")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alpha, beta", [(0.5, 0.5), (0.3, 0.8), (1.0, 0.2), (0.0, 0.9), (0.2, 1.0)])
def test_every_measure_ndeval_prints_equals_pyndeval(seed, alpha, beta):
    compared, worst, bad = _compare(seed, alpha, beta, NDEVAL_PRINTED)
    # 3 runs x 21 measures x (7 topics shared with the qrels + the amean lines of ndeval and ndeval -c)
    assert compared == 3 * 21 * 9 and not bad, f"{len(bad)} of {compared} differ\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("seed", range(3))
def test_other_cutoffs_equal_pyndeval(seed):
    compared, worst, bad = _compare(100 + seed, 0.5, 0.5, OTHER_CUTOFFS)
    assert not bad, f"{len(bad)} of {compared} differ\n" + "\n".join(bad[:20])


def _alpha_dcg(b: np.ndarray, alpha: float, k: int) -> float:
    """alpha-DCG@k of a ranking's 0/1 subtopic relevance (documents x subtopics), uniform over the
    subtopics with a relevant document, normalised as ndeval does: written out rank by rank."""
    actual = [i for i in range(b.shape[1]) if b[:, i].any()]
    seen = {i: 0 for i in actual}
    total = norm = 0.0
    for r in range(k):
        gain = 0.0
        if r < len(b):
            for i in actual:
                if b[r, i]:
                    gain += (1 - alpha) ** seen[i]
                    seen[i] += 1
        total += gain / len(actual) / math.log2(r + 2)
        norm += (1 - alpha) ** r / math.log2(r + 2)
    return total / norm


@pytest.mark.parametrize("alpha", [0.5, 0.3])
def test_the_greedy_ideal_is_ndevals_and_never_above_the_true_ideal(alpha):
    """On small topics (3 to 6 judged documents, 2 to 4 subtopics): the ideal alpha-DCG@k that
    rpdi's alpha-nDCG@k divides by (alpha-DCG@k / alpha-nDCG@k of a run) is pyndeval's, and it is
    at most the best alpha-DCG@k over every order of the topic's documents (found by
    enumeration), for every k from 2 to the number of documents; it is below it somewhere (the
    declared difference: rpdi's and ndeval's alpha-nDCG can exceed 1)."""
    import itertools

    rng = np.random.default_rng(7)
    below = 0
    for topic in range(60):
        m, n_sub = int(rng.integers(3, 7)), int(rng.integers(2, 5))
        b = rng.random((m, n_sub)) < 0.45
        if not b.any():
            continue
        docs = [f"d{j}" for j in range(m)]
        qrels = {"1": {str(i + 1): {d: int(b[j, i]) for j, d in enumerate(docs)} for i in range(n_sub)}}
        run = {"1": {d: float(m - j) for j, d in enumerate(docs)}}  # the documents in order d0, d1, ...
        for k in range(2, m + 1):
            names = [f"alpha-DCG(alpha={alpha})@{k}", f"alpha-nDCG(alpha={alpha})@{k}"]
            ours = {r["measure"]: r["value"] for r in evaluate(qrels, {"s": run}, names)}
            theirs = pyndeval_values(qrels, run, [f"alpha-DCG@{k}", f"alpha-nDCG@{k}"], alpha, 0.5)["1"]
            dcg = ours[f"alpha-DCG(alpha={alpha})@{k}"]
            if dcg == 0:
                continue
            greedy = dcg / ours[f"alpha-nDCG(alpha={alpha})@{k}"]
            assert abs(greedy - theirs[f"alpha-DCG@{k}"] / theirs[f"alpha-nDCG@{k}"]) <= TOL
            assert abs(dcg - _alpha_dcg(b, alpha, k)) <= TOL
            best = max(_alpha_dcg(b[list(order)], alpha, k) for order in itertools.permutations(range(m)))
            assert greedy <= best + TOL, (topic, k)
            below += greedy < best - TOL
    assert below > 0


def test_the_readmes_collection_equals_pyndeval():
    """tests/data/diversity (docs/diversity.md's example, read from its files) against pyndeval."""
    from pathlib import Path

    data = Path(__file__).parents[1] / "data" / "diversity"
    qrels = {}
    for line in (data / "qrels.txt").read_text().splitlines():
        t, s, d, g = line.split()
        qrels.setdefault(t, {}).setdefault(s, {})[d] = int(g)
    for name in ("majority", "diverse"):
        run = {}
        for line in (data / f"{name}.run").read_text().splitlines():
            t, _, d, _, score, _ = line.split()
            run.setdefault(t, {})[d] = float(score)
        theirs = pyndeval_values(qrels, run, NDEVAL_PRINTED, 0.5, 0.5)
        ours = {(r["measure"], r["topic"]): r["value"]
                for r in evaluate(data / "qrels.txt", [data / f"{name}.run"], NDEVAL_PRINTED, per_topic=True)}
        for m in NDEVAL_PRINTED:
            for t in qrels:
                assert abs(ours[m, t] - theirs[t][m]) <= TOL, (name, m, t)
            assert abs(ours[m, "all"] - ndeval_amean(theirs, m, len(qrels))) <= TOL


@pytest.mark.parametrize("seed", range(2))
def test_judged_only_and_max_docs_equal_pyndeval_on_the_cut_runs(seed):
    """``judged_only=True`` (ir_measures' parameter) and ``max_docs`` (ndeval's -M) against
    pyndeval on each run without its unjudged documents, or cut to its first 6."""
    qrels, runs = collection(200 + seed)
    names = ["alpha-nDCG@10", "ERR-IA@5", "nERR-IA@20", "MAP-IA", "P-IA@10"]
    judged = {(t, d) for t, per in qrels.items() for docs in per.values() for d in docs}
    for name, run in runs.items():
        kept = {t: {d: x for d, x in docs.items() if (t, d) in judged} for t, docs in run.items()}
        kept = {t: docs for t, docs in kept.items() if docs}
        cut = {t: {d: -float(r) for r, d in enumerate(traditional_order(docs)[:6])} for t, docs in run.items()}
        for given, options, renamed in ((kept, {}, lambda m: m.replace("@", "(judged_only=True)@") if "@" in m
                                         else m + "(judged_only=True)"),
                                        (cut, {"max_docs": 6}, lambda m: m)):
            theirs = pyndeval_values(qrels, given, names, 0.5, 0.5)
            ours = {(r["measure"], r["topic"]): r["value"]
                    for r in evaluate(qrels, {name: run}, [renamed(m) for m in names], per_topic=True, **options)}
            for m in names:
                for t in theirs:
                    assert abs(ours[renamed(m), t] - theirs[t][m]) <= TOL, (name, m, t, options)
