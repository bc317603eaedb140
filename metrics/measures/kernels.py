"""Numeric kernels that several families of measures share: division that gives NaN for an
undefined value, sums in trec_eval's order, ranks of relevant documents, the log discount,
exp-log2 gains, and trec_eval's ``level=gain`` pairs.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.view import View


def div(num, den):
    """num / den, NaN where den == 0."""
    num, den = np.broadcast_arrays(np.asarray(num, float), np.asarray(den, float))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def sum_in_order(x: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """Sum over the last axis left to right, as trec_eval's loops add: numpy's pairwise sum can
    differ in the last bit, which shows at 4 decimals when the value lies on a rounding edge.
    With ``overwrite`` the running sums are written into ``x`` (a float array of the caller's)."""
    if not x.shape[-1]:
        return x.sum(axis=-1)
    return np.cumsum(x, axis=-1, out=x if overwrite else None)[..., -1]


def first_rank(b: np.ndarray, nth: int = 1) -> np.ndarray:
    """1-based rank of the nth relevant document (0 where there are fewer than nth)."""
    hits = np.cumsum(b, axis=-1) >= nth
    found = hits.any(axis=-1)
    return np.where(found, hits.argmax(axis=-1) + 1, 0)


def discount(rank, b: int | None = None) -> np.ndarray:
    """w_i = 1/log2(i + 1), or Järvelin-Kekäläinen's 1 up to rank b and 1/log_b(i) after."""
    i = np.asarray(rank, dtype=np.float64)
    if b is None:
        return 1.0 / np.log2(i + 1)
    return np.where(i <= b, 1.0, np.log(b) / np.log(np.maximum(i, 2)))


def log2_discount(k: int) -> np.ndarray:
    """w_1 .. w_k of the log discount."""
    return discount(np.arange(1, k + 1))


EXP_TOP = 500  # normalised measures scale exp-log2 gains to at most 2^EXP_TOP: squares stay finite


def scaled_exp_gains(grade: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """(2^grade - 1) / 2^shift, computed without forming 2^grade (exact where no shift is needed:
    shift 0 gives 2^grade - 1). A ratio of such gains with one shift per topic is unchanged."""
    return np.exp2(grade - shift) - np.exp2(-shift)


def parse_gains(gains: str) -> dict[float, float]:
    """trec_eval's ``level=gain`` pairs (``"1=3,2=9"``) as a dict; empty: every grade is its gain."""
    pairs = {}
    for item in filter(None, (x.strip() for x in gains.split(","))):
        level, _, gain = item.partition("=")
        pairs[float(level)] = float(gain)
    return pairs


def mapped_gains(grades: np.ndarray, pairs: dict[float, float]) -> np.ndarray:
    """Grades with the given levels replaced by their gains (others keep their grade)."""
    out = grades.copy()
    for level, gain in pairs.items():
        out[grades == level] = gain
    return out


def judged_gains(v: View, pairs: dict) -> np.ndarray:
    """The retrieved documents' gains under the ``level=gain`` pairs, 0 where unjudged."""
    return np.where(v.judged, mapped_gains(v.grade, pairs), 0.0)


def ideal_gains(v: View, pairs: dict) -> np.ndarray:
    """(T, M) the topic's judged gains sorted descending (trec_eval's ideal ordering), >= 0."""
    judged = np.arange(v.ideal.shape[1]) < v.n_judged[:, None]
    return -np.sort(-np.where(judged, mapped_gains(v.ideal, pairs), 0.0), axis=-1)
