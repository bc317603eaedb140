"""Time-biased gain: the user whose patience is measured in seconds."""

import math

import numpy as np

from rpdi.metrics.measures.tbg import TBG_CLICK, TBG_SAVE, TBG_SUMMARY_TIME, tbg_document_time
from rpdi.usermodels.base import Branch, BrowsingModel, Declared


class TBG(BrowsingModel):
    """Reads each snippet (4.4 s); clicks with probability 0.64 (relevant) or 0.39 (not) and
    then reads the document (0.018 words + 7.8 s); saves a relevant one with probability 0.77
    (gain 1). A time budget B ~ Exponential(ln 2 / halflife) ends the session. A document's
    length comes from the user's lengths file (rpdi eval --doc-lengths) where it gives one, else
    the measure's ``words``.

    E[G] = sum_k g_k E[exp(-lambda T_k)] with the *random* time T_k to reach rank k, while the
    closed form uses exp(-lambda E[T_k]); by Jensen's inequality the model's expected gain is at
    least TBG's, and the difference is what the closed form's use of expected time makes.
    Reference: Smucker & Clarke (SIGIR 2012).

    Example: one relevant document: E[G] = 0.64 x 0.77 = 0.4928, reached at time 0.
    """

    measure_name = "TBG"
    aggregation = "total"
    declared = Declared("random reading times: the model discounts each gain by E[exp(-lambda T_k)] over "
                        "the random time T_k to reach rank k, the closed form by exp(-lambda E[T_k]), which "
                        "is never larger (Jensen)", "exact = sum_k g_k prod_{i<k} E[exp(-lambda t_i)] >= closed form",
                        lambda closed, model, ranking: _random_time(model, ranking))

    def oracle(self, ranking, grades, ideal) -> float:
        """TBG = sum_k 0.64 x 0.77 b_k exp(-lambda T(k)), T(k) = sum_{i<k} (4.4 + P(click | b_i)
        (0.018 words + 7.8)) the expected time to reach rank k, b_k = grade >= rel (Smucker & Clarke
        2012), rank by rank with the paper's constants."""
        lam, total, reach_time = math.log(2) / self.halflife, 0.0, 0.0
        for i, g in enumerate(grades):
            relevant = bool(g >= self.rel)
            words = _words(self, ranking, i)
            total += (0.64 * 0.77 if relevant else 0.0) * math.exp(-lam * reach_time)
            reach_time += 4.4 + (0.64 if relevant else 0.39) * (0.018 * words + 7.8)
        return total

    def step(self, state, at):
        relevant = at.gain > 0
        click = np.where(relevant, TBG_CLICK[1], TBG_CLICK[0])
        save = np.where(relevant, TBG_SAVE, 0.0)
        words = np.where(np.isnan(at.words), self.words, at.words)
        read = TBG_SUMMARY_TIME + tbg_document_time(words)
        return [Branch(click * save, 1.0, True, time=read),
                Branch(click * (1 - save), 0.0, True, time=read),
                Branch(1 - click, 0.0, True, time=TBG_SUMMARY_TIME)]


def _words(model, ranking, i: int) -> float:
    """The length in words of the document at rank i + 1: the user's lengths file, else TBG's words."""
    return model.words if ranking.words is None or math.isnan(ranking.words[i]) else float(ranking.words[i])


def _random_time(model, ranking) -> float:
    """E[G] = sum_k g_k prod_{i<k} E[exp(-lambda t_i)]: the user reaches rank k if the budget
    outlasts the time t_i spent at every rank before it, independent of each other, each the
    snippet's 4.4 s plus, with probability 0.64 (relevant) or 0.39 (not), the document's
    0.018 words + 7.8 s; g_k = 0.64 x 0.77 for a relevant document (Smucker & Clarke 2012,
    rank by rank with the paper's constants)."""
    lam = math.log(2) / model.halflife
    total, reach = 0.0, 1.0
    for i in range(min(len(ranking.gains), ranking.horizon)):
        relevant = ranking.gains[i] > 0
        words = _words(model, ranking, i)
        click = 0.64 if relevant else 0.39
        total += reach * (0.64 * 0.77 if relevant else 0.0)
        reach *= math.exp(-lam * 4.4) * (click * math.exp(-lam * (0.018 * words + 7.8)) + 1 - click)
    return total
