"""sRBP: the session user of Lipani, Carterette & Yilmaz (2019)."""

from rpdi.usermodels.session import SessionUser


class SessionRBP(SessionUser):
    """After each document reads on with probability p (else stops); reading on, goes down with
    probability b or to the next query's first document with 1 - b. Below a turn's last rank k
    the ranking counts as nothing: there the user would read zero-gain documents until it moves
    on (with probability p(1 - b)/(1 - b p) in all) or stops, so at rank k it moves on with that
    probability at once. Rank i of turn q is then read with probability x^(q-1) (b p)^(i-1),
    x = p(1 - b)/(1 - b p), and with gains (1 - p) r the expected total gain is sRBP.
    Reference: Lipani, Carterette & Yilmaz (ICTIR 2019).
    """

    measure_name = "sRBP"
    aggregation = "total"

    def gains(self, grade, view):
        return (1 - self.p) * super().gains(grade, view)

    def moves(self, turn, rank, at):
        p, b = self.p, self.b
        if rank < self.width:
            return b * p, (1 - b) * p
        return 0.0, p * (1 - b) / (1 - b * p)
