"""An example of a browsing model of one's own: the user who gives up after n consecutive
non-relevant documents ("two strikes and out" for n = 2).

Use it without changing rpdi:

    rpdi simulate QRELS RUN -m "usermodels/examples/two_strikes.py:TwoStrikes(n=2)" --users 10000
    rpdi properties -m "usermodels/examples/two_strikes.py:TwoStrikes(n=2)@10"

The state counts the non-relevant documents read in a row; a relevant one (gain 1) resets it.
The user is scored by the expected rate of gain E[G]/E[N], like RBP.
"""

import numpy as np

from rpdi.usermodels.base import Branch, BrowsingModel


class TwoStrikes(BrowsingModel):
    parameters = {"n": 2}  # non-relevant documents in a row that make the user stop
    aggregation = "rate"
    rule = "reads until n non-relevant documents in a row (or rank k)"
    citation = "rpdi example"

    def gains(self, grade, view):
        return (grade >= 1).astype(float)

    def n_states(self, view):
        return self.n

    def step(self, state, at):
        misses = np.where(at.gain > 0, 0, state + 1)
        return [Branch(1.0, at.gain, (misses < self.n) & self.before_cutoff(at.rank), np.minimum(misses, self.n - 1))]
