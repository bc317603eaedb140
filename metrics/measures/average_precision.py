"""Average precision and its relatives: SP and SN-AP (Moffat 2013), interpolated precision
(IPrec, AP11pt), and the trec_eval-only GMAP (AP's geometric mean) and YAAP (smoothed AP).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import div, sum_in_order
from rpdi.metrics.measures.registry import JUDGED_ONLY, REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def _precision_terms(v: View, rel: float) -> np.ndarray:
    """b_i Prec@i at every rank i, a new array (AP's, SP's and YAAP's terms)."""
    return v.relevant(rel) * v.precisions(rel)


def average_precision(v: View, rel: float) -> Score:
    """AP@k = (1/R) sum_{i<=k} b_i Prec@i; undefined when R = 0.

    User (Robertson 2008): draws a target s ~ U{1..R}, reads until the s-th relevant document
    and reports precision there (0 if it is never found).
    Reference: trec_eval ``map`` / ``map_cut_k``; Moffat & Zobel (2008) Section 2.

    >>> from rpdi.metrics import score
    >>> round(score("AP", "$$---$----$-----$---", R=5), 4)
    0.6316
    """
    return Score(div(sum_in_order(_precision_terms(v, rel), overwrite=True), v.R(rel)))


register(
    MeasureSpec("AP", average_precision, (REL, JUDGED_ONLY), "optional",
                "draws a target s ~ U{1..R}, reads to the s-th relevant document, reports the "
                "precision there (0 if never found)", "Robertson 2008; trec_eval map"),
)


def sum_precision(v: View, rel: float) -> Score:
    """SP@k = sum_{i<=k} b_i Prec@i (AP without the division by R).

    Reference: Aslam, Pavlu & Yilmaz (2006); Moffat (2013) Section 3.

    >>> from rpdi.metrics import score
    >>> score("SP@3", [1, 0, 1])
    1.6666666666666665
    """
    return Score(_precision_terms(v, rel).sum(axis=-1))


register(
    MeasureSpec("SP", sum_precision, (REL,), "required",
                "AP's user without the division by R", "Aslam, Pavlu & Yilmaz 2006; Moffat 2013"),
)


def sn_ap(v: View, rel: float) -> Score:
    """SN-AP@k = SP@k / R_k, R_k the relevant documents within the top k; undefined if R_k = 0.

    Reference: Moffat (2013) Section 3 (self-normalised AP; the RBP paper's AP*).

    >>> from rpdi.metrics import score
    >>> score("SN-AP@5", [1, 0, 0, 0, 1])
    0.7
    """
    return Score(div(_precision_terms(v, rel).sum(axis=-1), v.relevant(rel).sum(axis=-1)))


register(
    MeasureSpec("SN-AP", sn_ap, (REL,), "required",
                "AP's user with R replaced by the relevant documents in the top k", "Moffat 2013"),
)


def recall_cutoff(level, R, compat: str = "trec_eval"):
    """How many relevant documents make recall ``level``: trec_eval 10.0 takes lround(level R)
    (its CHANGELOG: "change uses of int truncation to round"); trec_eval 9.x and pytrec_eval
    took floor(level R + 0.9), in float64 (so 0.7 R for R = 3 gives 2)."""
    x = np.asarray(level, dtype=np.float64) * R
    return np.floor(x + 0.5) if compat == "trec_eval" else np.floor(x + 0.9)


def interpolated_precision(v: View, rel: float, level: float) -> np.ndarray:
    """Interpolated precision at a recall level: max Prec@i over the relevant ranks i at or past
    the c-th relevant document, c = :func:`recall_cutoff` (level, R); 0 if c is never reached."""
    b = v.relevant(rel)
    R = np.broadcast_to(v.R(rel), b.shape[:-1])[..., None]
    needed = recall_cutoff(level, R, v.compat)
    reached = (v.found(rel) >= needed) & (b > 0) & (R > 0)
    return np.where(reached, v.precisions(rel), 0.0).max(axis=-1, initial=0.0)


def iprec(v: View, rel: float, level: float) -> Score:
    """IPrec@r = max{Prec@i : i at or past the c-th relevant document}, c = lround(r R)
    (trec_eval 10.0; 9.x and pytrec_eval: floor(r R + 0.9)); 0 if c is never reached.

    Reference: trec_eval ``iprec_at_recall_r``.

    >>> from rpdi.metrics import score
    >>> round(score("IPrec@0.5", [0, 1, 1, 0], R=2), 4)
    0.6667
    >>> score("IPrec@0.2", [1, 0, 0, 1], R=7)  # lround(1.4) = 1 relevant document
    1.0
    """
    return Score(interpolated_precision(v, rel, level))


register(
    MeasureSpec("IPrec", iprec, (REL, JUDGED_ONLY), "required",
                "interpolated precision at a recall level (lround(r R) relevant documents, trec_eval "
                "10.0; floor(r R + 0.9) under --compat pytrec_eval)", "trec_eval iprec_at_recall",
                cutoff_kind=float, passes_cutoff=True),
)


def eleven_point_ap(v: View, rel: float, levels: str) -> Score:
    """AP11pt = the mean of IPrec@r over the recall levels r (default 0, 0.1, ..., 1).

    ``levels`` is a comma-separated list as trec_eval's ``11pt_avg`` parameters take it.
    Reference: trec_eval ``11pt_avg``; the IR:VIII lecture chapter (Alternative 2).

    >>> from rpdi.metrics import score
    >>> round(score("AP11pt", [1, 1], R=2), 4)
    1.0
    """
    points = sorted(parse_levels(levels), reverse=True)  # added from the highest level down, as trec_eval does
    values = np.stack([interpolated_precision(v, rel, x) for x in points], axis=-1)
    return Score(sum_in_order(values) / len(points))


def parse_levels(levels: str) -> list[float]:
    """Recall levels from a comma-separated list (empty: 0, 0.1, ..., 1)."""
    if not levels.strip():
        return [i / 10 for i in range(11)]
    return [float(x) for x in levels.split(",")]


def _levels_ok(text: str) -> bool:
    try:
        return all(0 <= x <= 1 for x in parse_levels(text))
    except ValueError:
        return False


register(
    MeasureSpec("AP11pt", eleven_point_ap,
                (REL, Param("levels", str, "", "comma-separated recall levels (default 0, 0.1, ..., 1)",
                           _levels_ok, "numbers in [0, 1]")), "none",
                "mean interpolated precision at recall 0, 0.1, ..., 1", "trec_eval 11pt_avg"),
)


register(
    MeasureSpec("GMAP", average_precision, (REL,), "none",
                "AP's user; the geometric mean over topics (each AP at least 0.00001)",
                "Robertson 2006; trec_eval gm_map", average="geometric", model=False),
)


def yaap(v: View, rel: float) -> Score:
    """YAAP = log((1 + SP) / (1 + R - SP)), SP = sum over relevant retrieved i of Prec@i (AP
    without the division by R): AP smoothed so that it averages over topics.

    No browsing model: a transform of AP for averaging. Reference: Robertson, "On Smoothing
    Average Precision" (ECIR 2012); trec_eval ``yaap``.

    >>> from rpdi.metrics import score
    >>> round(score("YAAP", [1, 0], R=1), 4)  # log(2 / 1)
    0.6931
    """
    sp = sum_in_order(_precision_terms(v, rel), overwrite=True)
    return Score(np.log((1.0 + sp) / (1.0 + v.R(rel) - sp)))


register(
    MeasureSpec("YAAP", yaap, (REL,), "none",
                "no browsing model: AP smoothed for averaging over topics", "Robertson 2012; trec_eval yaap",
                model=False),
)
