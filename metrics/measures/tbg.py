"""Time-biased gain (Smucker & Clarke 2012): gain discounted by the time taken to reach it."""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.registry import REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


TBG_SUMMARY_TIME = 4.4  # seconds to read a snippet (Smucker & Clarke 2012)
TBG_CLICK = (0.39, 0.64)  # P(click | non-relevant), P(click | relevant)
TBG_SAVE = 0.77  # P(save | click, relevant)


def tbg_document_time(words: float) -> float:
    """Seconds to read a document of this many words: 0.018 words + 7.8."""
    return 0.018 * words + 7.8


def tbg(v: View, halflife: float, words: float, rel: float) -> Score:
    """TBG = sum_k g_k D(T(k)): g_k = P(click|rel) P(save|rel) b_k = 0.64 x 0.77 b_k,
    D(t) = exp(-t ln 2 / halflife), T(k) = sum_{i<k} (4.4 + P(click|b_i) (0.018 words + 7.8)),
    the *expected* time to reach rank k; a document's length comes from a lengths file given by
    the user (``rpdi eval --doc-lengths``, :func:`metrics.trec.with_lengths`) where it has one,
    else ``words``.

    User: reads snippets (4.4 s), clicks (0.64 if relevant, 0.39 if not) and reads the document,
    saves a relevant one with probability 0.77, until a time budget with half-life 224 s runs out.
    Reference: Smucker & Clarke (SIGIR 2012), Time-based calibration of effectiveness measures.

    >>> from rpdi.metrics import score
    >>> round(score("TBG", [1]), 4)  # the first document is reached at time 0
    0.4928
    """
    b = v.relevant(rel)
    click = np.where(b > 0, TBG_CLICK[1], TBG_CLICK[0])
    lengths = words if v.words is None else np.where(np.isnan(v.words), words, v.words)
    step = TBG_SUMMARY_TIME + click * tbg_document_time(lengths)
    reach_time = np.cumsum(step, axis=-1) - step
    return Score((TBG_CLICK[1] * TBG_SAVE * b * np.exp(-reach_time * np.log(2) / halflife)).sum(axis=-1))


register(
    MeasureSpec("TBG", tbg, (Param("halflife", float, 224.0, "half-life of the time budget (s)",
                                   lambda x: x > 0, "> 0"),
                             Param("words", float, 1000.0,
                                   "length in words of a document the lengths file (--doc-lengths) does not give",
                                   lambda x: x >= 0, ">= 0"), REL), "none",
                "reads snippets, clicks and saves, until a time budget with this half-life runs out",
                "Smucker & Clarke 2012"),
)
