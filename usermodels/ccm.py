"""CCM's user, the click chain model's: a click model of rpdi fit, not a measure.

After a skip the user reads on with probability tau1. A clicked document (attractiveness alpha,
which is also the probability that the click satisfies) satisfies the user with probability
alpha, who then reads on with tau3; an unsatisfied user reads on with tau2. The gain the
automaton sees is c_r alpha_r (zero for a skip), so the continuation after a click is
tau2 (1 - alpha) + tau3 alpha, the paper's alpha_2 (1 - R) + alpha_3 R. The first two branches
are the satisfaction (EM counts them as evidence for alpha). Reference: Guo, Liu, Kannan,
Minka, Taylor, Wang & Faloutsos, "Click chain model in web search" (WWW 2009); Chuklin, Markov &
de Rijke, "Click Models for Web Search" (2015), Section 3.7.

>>> import numpy as np
>>> from rpdi.usermodels.base import At
>>> user = CCMUser()
>>> [round(float(b.prob), 3) for b in user.step(0, At(1, np.array(0.4), 0.4, 0.0))]  # a click, alpha 0.4
[0.2, 0.2, 0.3, 0.3]
>>> [round(float(b.prob), 3) for b in user.step(0, At(1, np.array(0.0), 0.0, 0.0))]  # a skip
[0.0, 0.0, 0.5, 0.5]
"""

from __future__ import annotations

import numpy as np

from rpdi.usermodels.base import Branch, BrowsingModel


class CCMUser(BrowsingModel):
    """CCM's user: on with tau1 after a skip; after a click satisfied with the document's
    attractiveness and on with tau3, else on with tau2 (Guo et al. 2009)."""

    measure_name, aggregation = "CCM", "total"
    rule, citation = "on with tau1 after a skip; after a click on with tau3 if satisfied, else tau2", "Guo et al. 2009"

    def __init__(self):
        self.k, self.measure = None, None
        self.tau1 = self.tau2 = self.tau3 = 0.5

    def step(self, state, at):
        g = np.asarray(at.gain, float)
        clicked = g > 0
        on = np.where(clicked, (1 - g) * self.tau2, self.tau1)
        off = np.where(clicked, (1 - g) * (1 - self.tau2), 1 - self.tau1)
        return [Branch(g * self.tau3, 0.0, True), Branch(g * (1 - self.tau3), 0.0, False),
                Branch(on, 0.0, True), Branch(off, 0.0, False)]
