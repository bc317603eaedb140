"""sDCG: a session user of Järvelin, Price, Delcambre & Nielsen's (2008) discounts."""

import numpy as np

from rpdi.metrics.measures.kernels import discount
from rpdi.metrics.measures.session import query_discount
from rpdi.usermodels.session import SessionUser


class SessionDCG(SessionUser):
    """Reads on from rank i of a turn with probability d(i + 1)/d(i), d Järvelin & Kekäläinen's
    rank discount 1/max(1, log_b i); a user who does not moves to the next query with
    probability w(q + 1)/w(q), w the query discount 1/(1 + log_bq q), else stops. Every user who
    enters turn q leaves it, so turn q is entered with probability w(q) and its rank i read with
    w(q) d(i): with the grades as gains the expected total gain is sDCG.
    Reference: Järvelin, Price, Delcambre & Nielsen (ECIR 2008).
    """

    measure_name = "sDCG"
    aggregation = "total"

    def gains(self, grade, view):
        return np.maximum(grade, 0.0)

    def moves(self, turn, rank, at):
        d = discount(np.arange(1, rank + 2), self.b)  # Järvelin & Kekäläinen's, ranks 1..rank+1
        w = query_discount(turn + 1, self.bq)
        down = d[rank] / d[rank - 1] if rank < self.width else 0.0
        return down, (1 - down) * w[turn] / w[turn - 1]
