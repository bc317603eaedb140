"""A conversation's user who asks on when a turn answers it: no closed form, its value is the
model's exact expectation (a session user of rpdi's own, declared by its model)."""

import numpy as np

from rpdi.usermodels.session import SessionUser


class Conversation(SessionUser):
    """At each document it reads, the user is answered with probability its gain r (grade/
    max_rel) and asks the conversation's next question (the next turn's first document); not
    answered, it reads on with probability p or gives up the conversation. Unanswered at a
    turn's last rank k, it gives up. Its value is the expected total gain read. Unlike sRBP's and
    sDCG's users, whose moving on does not depend on what they read, how far into the
    conversation this user gets depends on the system (:func:`usermodels.session.turns_reached`).
    Reference: the cascade of Chapelle, Metzler, Zhang & Grinspan (CIKM 2009) within a turn,
    and a conversation's turns as sessions (TREC CAsT).
    """

    parameters = {"p": 0.8}
    aggregation = "total"
    rule = "answered by a document with probability its gain, then asks the next question; else reads on with p"
    citation = "rpdi; ERR's cascade (Chapelle et al. 2009) turn by turn"

    def moves(self, turn, rank, at):
        answered = np.asarray(at.gain, dtype=float)
        return (1 - answered) * self.p, answered
