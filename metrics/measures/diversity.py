"""ndeval's diversity measures (TREC Web track 2009-2012): alpha-DCG and alpha-nDCG (Clarke et
al. 2008), ERR-IA and nERR-IA (Chapelle et al. 2009 made intent-aware), NRBP and nNRBP (Clarke,
Kolla & Vechtomova 2009), MAP-IA and P-IA (Agrawal et al. 2009), and subtopic recall, under
ndeval's names and parameters.

Notation: intents i of the topic with probabilities w_i = P(i|q) (ndeval: uniform over the
subtopics with a relevant document, :meth:`~metrics.diversity.Intents.probabilities`);
b_ri = [the document at rank r has grade >= rel for intent i] (ndeval binarises its judgments);
c_ri = sum_{s<r} b_si the documents relevant to i before rank r; the novelty gain at rank r

    G_r = sum_i w_i b_ri (1 - alpha)^c_ri,

what a user who has seen r - 1 documents still gains from the r-th. ndeval's "collection
independent" normalisation divides by the gains of a ranking relevant to every intent at every
rank (G_r = (1 - alpha)^(r-1)); its "collection dependent" one (the n- measures) by the gains of
its greedy ideal ranking (:func:`greedy_ideal`): finding the true ideal is NP-hard, and the
greedy one can score below a run, so that alpha-nDCG, nERR-IA and nNRBP can exceed 1 (ndeval's
numbers, reproduced). A topic with no intent (no subtopic with a relevant document) is undefined
(ndeval prints 0, and nan for nNRBP).

The rankings are read in trec_eval's order (score descending, ties by docno descending), which
is ``ndeval -traditional``'s; ndeval without it ranks by the rank column, pyndeval (and so
ir_measures) breaks ties by docno ascending. ndeval's arrays stop at rank 20 and skip the
normalisation at rank 1 (its ERR-IA@1 and alpha-DCG@1 are unnormalised): here any cutoff is
normalised alike.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.kernels import div, log2_discount
from rpdi.metrics.measures.registry import JUDGED_ONLY, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View

_ALPHA = Param("alpha", float, 0.5, "redundancy intolerance: a document's gain for an intent already "
               "met c times is (1 - alpha)^c", lambda x: 0 <= x <= 1, "in [0, 1]")
_BETA = Param("beta", float, 0.5, "patience: probability of reading on (NRBP)", lambda x: 0 <= x <= 1, "in [0, 1]")
_REL = Param("rel", float, 1, "minimum grade counted as relevant to a subtopic (ndeval's judgments are 0/1)",
             lambda x: x > 0, "> 0")


def _intents(v: View):
    from rpdi.metrics.diversity import DiversityRankings

    if not isinstance(v.rankings, DiversityRankings):
        raise InputError("the diversity measures need diversity qrels (topic subtopic docno judgment lines)")
    return v.rankings.intents


def subtopic_relevance(v: View, rel: float) -> np.ndarray:
    """(S, T, k, I) b_ri: 1.0 where the document at rank r (to the view's depth) has grade >= rel
    for intent i."""
    doc = v.rankings.doc[:, :, :v.k]
    if doc.shape[-1] < v.k:
        doc = np.pad(doc, ((0, 0), (0, 0), (0, v.k - doc.shape[-1])), constant_values=-1)
    return (_intents(v).grades(doc) >= rel).astype(np.float64)


def novelty_gains(b: np.ndarray, w: np.ndarray, alpha: float) -> np.ndarray:
    """G_r = sum_i w_i b_ri (1 - alpha)^c_ri over the rank axis (-2) of ``b`` (..., R, I), with
    ``w`` broadcasting against (..., I)."""
    seen = np.cumsum(b, axis=-2) - b
    return (b * (1.0 - alpha) ** seen * w[..., None, :]).sum(axis=-1)


def greedy_ideal(v: View, rel: float, alpha: float) -> np.ndarray:
    """(T, L, I) b_ri of ndeval's greedy ideal ranking of each topic's judged documents: at each
    rank the document of largest gain sum_i w_i b_i g_i (g_i = (1 - alpha)^(times i was met),
    updated as ndeval does, by one multiplication per document; weights scaled so the largest
    is 1, which leaves ndeval's uniform sums unchanged), ties to the larger docno in byte order;
    L the most documents relevant to a weighted intent of a topic (a later one gains nothing).

    Rank by rank with numpy over topics and documents (the ideal is sequential in rank).
    """
    intents = _intents(v)
    key = ("greedy", rel, alpha)
    if key in intents._cache:
        return intents._cache[key]
    w = intents.probabilities(rel)
    top = w.max(axis=1, keepdims=True)
    scale = np.where(top > 0, w / np.where(top > 0, top, 1.0), 0.0)
    valid = intents.row_doc >= 0
    b = ((intents.rows >= rel) & valid[..., None]).astype(np.float64)  # (T, M, I)
    T, M, I = b.shape
    L = max(int(((b * (scale[:, None, :] > 0)).any(axis=-1)).sum(axis=1).max(initial=0)), 1)
    gain = np.ones((T, I))
    taken = ~valid
    ideal = np.zeros((T, L, I))
    topics = np.arange(T)
    for r in range(L):
        score = np.cumsum(b * (scale * gain)[:, None, :], axis=-1)[..., -1]  # in subtopic order, as ndeval adds
        score = np.where(taken, -np.inf, score)
        best = score.max(axis=1)
        pick = np.argmax(np.where(score == best[:, None], intents.row_rank, -1), axis=1)
        left = np.isfinite(best)
        chosen = np.where(left[:, None], b[topics, pick], 0.0)
        ideal[:, r] = chosen
        taken[topics[left], pick[left]] = True
        gain = np.where(chosen > 0, gain * (1.0 - alpha), gain)
    intents._cache[key] = ideal
    return ideal


def _ideal_gains(v: View, rel: float, alpha: float, k: int | None) -> np.ndarray:
    """(T, k) the greedy ideal ranking's novelty gains G_r to rank k (None: all of them)."""
    b = greedy_ideal(v, rel, alpha)
    if k is not None:
        b = b[:, :k] if b.shape[1] >= k else np.pad(b, ((0, 0), (0, k - b.shape[1]), (0, 0)))
    return novelty_gains(b, _intents(v).probabilities(rel), alpha)


def _defined(v: View, rel: float, value: np.ndarray) -> np.ndarray:
    """The values, NaN for a topic without intents."""
    return np.where(_intents(v).probabilities(rel).sum(axis=1)[None] > 0, value, np.nan)


def _run_gains(v: View, rel: float, alpha: float) -> np.ndarray:
    return novelty_gains(subtopic_relevance(v, rel), _intents(v).probabilities(rel)[None], alpha)


def alpha_dcg(v: View, alpha: float, rel: float) -> Score:
    """alpha-DCG@k = sum_{r<=k} G_r / log2(r + 1) over sum_{r<=k} (1 - alpha)^(r-1) / log2(r + 1).

    User (Clarke et al.): reads all k documents with DCG's fading attention, interested in every
    intent in proportion to P(i|q); a document relevant to an intent already met c times is
    worth (1 - alpha)^c as much (the chance that it still holds something new). Normalised by
    a ranking relevant to every intent at every rank (ndeval's "collection independent" one).
    Reference: Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon (SIGIR 2008); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> from math import log2
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}     # intents a and b, 1/2 each
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}          # ranks d1 (a), d2 (a again), d3 (b)
    >>> value = evaluate(q, run, ["alpha-DCG@3"])[0]["value"]
    >>> round(value, 12) == round((1/2 + 1/4 / log2(3) + 1/2 / 2) / (1 + 1/2 / log2(3) + 1/4 / 2), 12)
    True
    """
    g = _run_gains(v, rel, alpha)
    w = log2_discount(v.k)
    return Score(_defined(v, rel, (g * w).sum(axis=-1) / ((1.0 - alpha) ** np.arange(v.k) * w).sum()))


def alpha_ndcg(v: View, alpha: float, rel: float) -> Score:
    """alpha-nDCG@k = sum_{r<=k} G_r / log2(r + 1) over the same sum for the greedy ideal ranking.

    User: alpha-DCG's. The ideal ranking is ndeval's greedy one (:func:`greedy_ideal`), which
    a run can beat: the value can exceed 1. Reference: Clarke et al. (SIGIR 2008); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> from math import log2
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> value = evaluate(q, run, ["alpha-nDCG@3"])[0]["value"]   # the ideal: d3 (b), d2 (a), d1 (a)
    >>> round(value, 12) == round((1/2 + 1/4 / log2(3) + 1/2 / 2) / (1/2 + 1/2 / log2(3) + 1/4 / 2), 12)
    True
    """
    w = log2_discount(v.k)
    ideal = (_ideal_gains(v, rel, alpha, v.k) * w).sum(axis=-1)
    return Score(div((_run_gains(v, rel, alpha) * w).sum(axis=-1), ideal[None]))


def err_ia(v: View, alpha: float, rel: float) -> Score:
    """ERR-IA@k = sum_{r<=k} G_r / r over sum_{r<=k} (1 - alpha)^(r-1) / r.

    User (cascade, Chapelle et al. made intent-aware): draws an intent i with probability
    P(i|q), stops at each document relevant to it with probability alpha, else reads on; the
    expected reciprocal rank of the stop, sum_r alpha (1 - alpha)^c_ri b_ri / r, over that of a
    ranking relevant at every rank (ndeval normalises so; alpha cancels in the ratio).
    Reference: Chapelle, Metzler, Zhang & Grinspan (CIKM 2009); Agrawal et al. (WSDM 2009); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> value = evaluate(q, run, ["ERR-IA@3"])[0]["value"]
    >>> round(value, 12) == round((1/2 + 1/4 / 2 + 1/2 / 3) / (1 + 1/2 / 2 + 1/4 / 3), 12)
    True
    """
    g = _run_gains(v, rel, alpha)
    return Score(_defined(v, rel, (g / v.ranks).sum(axis=-1) / ((1.0 - alpha) ** np.arange(v.k) / v.ranks).sum()))


def nerr_ia(v: View, alpha: float, rel: float) -> Score:
    """nERR-IA@k = sum_{r<=k} G_r / r over the same sum for the greedy ideal ranking.

    User: ERR-IA's. Reference: Chapelle et al. (CIKM 2009); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> value = evaluate(q, run, ["nERR-IA@3"])[0]["value"]
    >>> round(value, 12) == round((1/2 + 1/4 / 2 + 1/2 / 3) / (1/2 + 1/2 / 2 + 1/4 / 3), 12)
    True
    """
    ideal = (_ideal_gains(v, rel, alpha, v.k) / v.ranks).sum(axis=-1)
    return Score(div((_run_gains(v, rel, alpha) / v.ranks).sum(axis=-1), ideal[None]))


def nrbp(v: View, alpha: float, beta: float, rel: float) -> Score:
    """NRBP = (1 - (1 - alpha) beta) sum_r beta^(r-1) G_r, over the whole ranking.

    User (Clarke, Kolla & Vechtomova): RBP's, reading on with probability beta after each
    document, with alpha-nDCG's novelty gains; (1 - (1 - alpha) beta) makes a ranking relevant
    to every intent at every rank score 1. Reference: Clarke, Kolla & Vechtomova (ICTIR 2009); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> value = evaluate(q, run, ["NRBP"])[0]["value"]
    >>> round(value, 12) == round((1 - 1/4) * (1/2 + 1/4 / 2 + 1/2 / 4), 12)
    True
    """
    g = _run_gains(v, rel, alpha)
    return Score(_defined(v, rel, (1 - (1 - alpha) * beta) * (g * beta ** (v.ranks - 1)).sum(axis=-1)))


def nnrbp(v: View, alpha: float, beta: float, rel: float) -> Score:
    """nNRBP = NRBP over NRBP of the greedy ideal ranking of all the topic's judged documents.

    Reference: Clarke, Kolla & Vechtomova (ICTIR 2009); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> value = evaluate(q, run, ["nNRBP"])[0]["value"]
    >>> round(value, 12) == round((1/2 + 1/4 / 2 + 1/2 / 4) / (1/2 + 1/2 / 2 + 1/4 / 4), 12)
    True
    """
    ideal = _ideal_gains(v, rel, alpha, None)
    ideal_nrbp = (ideal * beta ** np.arange(ideal.shape[1])).sum(axis=-1)
    run = (_run_gains(v, rel, alpha) * beta ** (v.ranks - 1)).sum(axis=-1)
    return Score(div(run, ideal_nrbp[None]))


def map_ia(v: View, rel: float) -> Score:
    """MAP-IA = sum_i w_i AP_i, AP_i = (1/R_i) sum_r b_ri (c_ri + 1)/r over the whole ranking.

    R_i is the number of documents judged relevant to intent i; an intent with R_i = 0 (given a
    probability by an intents file) adds 0.

    User: draws an intent, then is Robertson's AP user for it (reads to the s-th relevant
    document, s ~ U{1..R_i}, and reports the precision there). Reference: Agrawal, Gollapudi,
    Halverson & Ieong (WSDM 2009); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> round(evaluate(q, run, ["MAP-IA"])[0]["value"], 12) == round((1/2) * (1/1 + 2/2) / 2 + (1/2) * (1/3), 12)
    True
    """
    b = subtopic_relevance(v, rel)
    intents = _intents(v)
    R = ((intents.rows >= rel) & (intents.row_doc >= 0)[..., None]).sum(axis=1)  # (T, I)
    ap = div(((np.cumsum(b, axis=-2)) * b / v.ranks[:, None]).sum(axis=-2), R[None])
    return Score(_defined(v, rel, (np.nan_to_num(ap) * intents.probabilities(rel)[None]).sum(axis=-1)))


def p_ia(v: View, rel: float) -> Score:
    """P-IA@k = sum_i w_i (1/k) sum_{r<=k} b_ri.

    User: draws an intent, reads k documents and reports the fraction relevant to it.
    Reference: Agrawal et al. (WSDM 2009); ndeval.

    >>> from rpdi.metrics import evaluate
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> evaluate(q, run, ["P-IA@2"])[0]["value"]
    0.5
    """
    b = subtopic_relevance(v, rel)
    return Score(_defined(v, rel, (b.sum(axis=-2) * _intents(v).probabilities(rel)[None]).sum(axis=-1) / v.k))


def subtopic_recall(v: View, rel: float) -> Score:
    """strec@k = sum_i w_i [some document in the top k is relevant to intent i].

    With ndeval's uniform intents, the fraction of the subtopics covered by the top k.

    User: draws an intent, reads k documents, and is satisfied if one of them serves it.
    Reference: Zhai, Cohen & Lafferty (SIGIR 2003), subtopic retrieval; ndeval.

    >>> from rpdi.metrics import evaluate
    >>> q = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d3": 1}}}
    >>> run = {"s": {"1": {"d1": 3, "d2": 2, "d3": 1}}}
    >>> [evaluate(q, run, [f"strec@{k}"])[0]["value"] for k in (2, 3)]
    [0.5, 1.0]
    """
    covered = subtopic_relevance(v, rel).max(axis=-2, initial=0.0)
    return Score(_defined(v, rel, (covered * _intents(v).probabilities(rel)[None]).sum(axis=-1)))


_NDEVAL = "ndeval (TREC Web track)"
register(
    MeasureSpec("alpha-DCG", alpha_dcg, (_ALPHA, _REL, JUDGED_ONLY), "required",
                "reads every document with DCG's attention, a document relevant to an intent met c times "
                "worth (1-alpha)^c", f"Clarke et al. 2008; {_NDEVAL}", intents=True),
    MeasureSpec("alpha-nDCG", alpha_ndcg, (_ALPHA, _REL, JUDGED_ONLY), "required",
                "alpha-DCG's user, scored against ndeval's greedy ideal ranking",
                f"Clarke et al. 2008; {_NDEVAL}", intents=True),
    MeasureSpec("ERR-IA", err_ia, (_ALPHA, _REL, JUDGED_ONLY), "required",
                "draws an intent, stops at a document relevant to it with probability alpha",
                f"Chapelle et al. 2009; Agrawal et al. 2009; {_NDEVAL}", intents=True),
    MeasureSpec("nERR-IA", nerr_ia, (_ALPHA, _REL, JUDGED_ONLY), "required",
                "ERR-IA's user, scored against ndeval's greedy ideal ranking",
                f"Chapelle et al. 2009; {_NDEVAL}", intents=True),
    MeasureSpec("NRBP", nrbp, (_ALPHA, _BETA, _REL), "none",
                "reads on with probability beta, a document relevant to an intent met c times worth (1-alpha)^c",
                f"Clarke, Kolla & Vechtomova 2009; {_NDEVAL}", intents=True),
    MeasureSpec("nNRBP", nnrbp, (_ALPHA, _BETA, _REL), "none",
                "NRBP's user, scored against ndeval's greedy ideal ranking",
                f"Clarke, Kolla & Vechtomova 2009; {_NDEVAL}", intents=True),
    MeasureSpec("MAP-IA", map_ia, (_REL, JUDGED_ONLY), "none",
                "draws an intent, then is AP's user for it", f"Agrawal et al. 2009; {_NDEVAL}", intents=True),
    MeasureSpec("P-IA", p_ia, (_REL, JUDGED_ONLY), "required",
                "draws an intent, reads k documents, reports the fraction relevant to it",
                f"Agrawal et al. 2009; {_NDEVAL}", intents=True),
    MeasureSpec("strec", subtopic_recall, (_REL,), "required",
                "draws an intent, reads k documents, satisfied if one serves it",
                f"Zhai, Cohen & Lafferty 2003; {_NDEVAL}", intents=True),
)
