"""cwl_eval's economic measures (Azzopardi, Thomas & Moffat, SIGIR 2019): NPV, the net present
value of the gains read (RBP with persistence 1/(1 + rate)), and SET, the user of Azzopardi's
(2014) economic model of search, whose total gain after i documents grows as i^beta."""

from __future__ import annotations


from rpdi.metrics.measures.rbp import rbp
from rpdi.metrics.measures.registry import MAX_REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def npv(v: View, rate: float, max_rel: float | None) -> Score:
    """NPV(rate) = (1 - d) sum_i r_i d^(i-1), d = 1/(1 + rate): each next document's gain
    discounted as money at interest ``rate``; residual as RBP's.

    User: reads on with probability 1/(1 + rate) (RBP's user with p = 1/(1 + rate)); the score
    is the expected rate of gain. Reference: Azzopardi, Thomas & Moffat (SIGIR 2019),
    cwl_eval's NPVCWLMetric(rate).

    >>> from rpdi.metrics import score
    >>> round(score("NPV(rate=1)", [1, 1]), 4)  # RBP(p=0.5): 0.5 + 0.25
    0.75
    """
    return rbp(v, 1.0 / (1.0 + rate), None, max_rel)


def set_measure(v: View, beta: float, max_rel: float | None) -> Score:
    """SET(beta)@k = sum_{i<=k} (i^beta - (i-1)^beta) r_i / k^beta: each rank weighted by the gain
    it adds to the total gain i^beta of an all-relevant list, over that total at k.

    User: reads exactly k documents, each next one worth less (diminishing returns, beta in
    (0, 1]; beta = 1 is P@k). Reference: Azzopardi (SIGIR 2014), the gain function g(i) = i^beta;
    cwl_eval's SETCWLMetric(beta, k).

    >>> from rpdi.metrics import score
    >>> round(score("SET(beta=0.5)@4", [1, 0, 0, 0]), 4)  # 1/sqrt(4)
    0.5
    """
    w = v.ranks ** beta - (v.ranks - 1) ** beta
    return Score((v.scaled(max_rel) * w).sum(axis=-1) / v.k ** beta)


register(
    MeasureSpec("NPV", npv, (Param("rate", float, 0.1, "discount rate of the next document's gain",
                                   lambda x: x > 0, "> 0"), MAX_REL), "none",
                "reads on with probability 1/(1 + rate) after every document",
                "Azzopardi, Thomas & Moffat 2019", residual=True),
    MeasureSpec("SET", set_measure, (Param("beta", float, 0.5, "diminishing returns: total gain i^beta",
                                           lambda x: 0 < x <= 1, "in (0, 1]"), MAX_REL), "required",
                "reads exactly k documents, the gain of rank i weighted by i^beta - (i-1)^beta",
                "Azzopardi 2014; Azzopardi, Thomas & Moffat 2019"),
)
