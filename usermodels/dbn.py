"""DBN's user, the dynamic Bayesian network click model's: a click model of rpdi fit, not a measure.

A clicked document satisfies the user with probability sigma (its gain: a satisfaction learnt
per query-document pair), who then stops; otherwise the user reads on with probability gamma
(fitted) and gives up with 1 - gamma. With gamma = 1 it is the simplified DBN (ERR's user with
learnt satisfactions). Reference: Chapelle & Zhang, "A dynamic Bayesian network click model for
web search ranking" (WWW 2009).

>>> import numpy as np
>>> from rpdi.usermodels.base import At
>>> [round(float(b.prob), 2) for b in DBNUser().step(0, At(1, np.array(0.5), 0.5, 0.5))]
[0.5, 0.45, 0.05]
"""

from __future__ import annotations

import numpy as np

from rpdi.usermodels.base import Branch, BrowsingModel


class DBNUser(BrowsingModel):
    """DBN's user: satisfied by a clicked document with probability sigma (its gain) and stops;
    else reads on with probability gamma (Chapelle & Zhang 2009). The first branch is the
    satisfaction."""

    measure_name, aggregation, rule, citation = "DBN", "total", "satisfied with sigma, else on with gamma", "Chapelle & Zhang 2009"

    def __init__(self):
        self.k, self.measure = None, None
        self.gamma = 0.9

    def step(self, state, at):
        g = np.asarray(at.gain, float)
        return [Branch(g, g, False), Branch((1 - g) * self.gamma, 0.0, True),
                Branch((1 - g) * (1 - self.gamma), 0.0, False)]
