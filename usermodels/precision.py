"""Prec@k: the user who reads exactly k documents."""


from rpdi.usermodels.base import Branch, BrowsingModel


class Precision(BrowsingModel):
    """Reads ranks 1..k, every one, then stops; gains are binary (grade >= rel).

    E[G]/E[N] = (1/k) sum_{i<=k} b_i = P@k, and since N = k always, E[G/N] is the same.
    Reference: Moffat (2013), "Seven numeric properties", Section 2.

    Example: b = 1, 0, 1 and k = 2: G = 1, N = 2, rate 0.5.
    """

    measure_name = "P"
    aggregation = "rate"


    def step(self, state, at):
        return [Branch(1.0, at.gain, self.before_cutoff(at.rank))]
