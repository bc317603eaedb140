"""Time-biased gain: the user whose patience is measured in seconds."""

import numpy as np

from rpdi.metrics.measures.tbg import TBG_CLICK, TBG_SAVE, TBG_SUMMARY_TIME, tbg_document_time
from rpdi.usermodels.base import Branch, BrowsingModel


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

    def step(self, state, at):
        relevant = at.gain > 0
        click = np.where(relevant, TBG_CLICK[1], TBG_CLICK[0])
        save = np.where(relevant, TBG_SAVE, 0.0)
        words = np.where(np.isnan(at.words), self.words, at.words)
        read = TBG_SUMMARY_TIME + tbg_document_time(words)
        return [Branch(click * save, 1.0, True, time=read),
                Branch(click * (1 - save), 0.0, True, time=read),
                Branch(1 - click, 0.0, True, time=TBG_SUMMARY_TIME)]
