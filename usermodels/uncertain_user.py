"""Users who meet uncertain grades: any browsing model, its document's grade drawn as it reads.

Over judgment worlds (:mod:`metrics.uncertain_scores`: each judged document's grade drawn
independently from its distribution), a user who reads each document at most once and whose
step reads only the current document's gain meets, at each rank, a grade that is independent of
everything it met before. Its expected outcome averaged over worlds is then exactly the expected
outcome of one user whose step at each rank is the grade-average of the model's steps: every
branch of the step for grade g, its probability times P(grade g) (:class:`GradeAveraged`).
Propagated by the exact evaluator (:func:`usermodels.exact.exact`) this gives, with no
enumeration of worlds,

    E_worlds[E[G]],  E_worlds[E[N]],  E_worlds[E[G/N]]   (``total``, ``depth``, ``mean_rate``)

exactly, and the simulators, which draw each user's branches, simulate users who each meet a
world of their own, drawn grade by grade as they read (a user's world beyond what it read does
not matter to it). For ``rate`` the model's value is E_worlds[E[G]] / E_worlds[E[N]], the rate
of the population of users over worlds, which is NOT E_worlds[E[G] / E[N]], the expectation over
worlds of each world's rate (the closed form's expectation that ``rpdi eval`` prints): the two
differ wherever the depth a user reads depends on the grades (INST, BPM, IFT); for users whose
stopping ignores the gains (P@k, RBP, SDCG) E[N] is one number in every world and they agree.

Not covered (:func:`check_covered` raises InputError; their scores over worlds are sampled
by :mod:`metrics.uncertain_scores`): a step that reads the prefix summaries ``seen`` or ``best``
(Robertson's AP, C/W/L's INST, INSQ and NERR, BPM, IFT, HIT: found when the step reads them), a
start that depends on the grades (AP's target s ~ U{1..R}: its start distribution is compared
in the worlds of every document's lowest and highest grade), normalised users (nDCG: the ideal
ranking depends on the world) and mixtures (X-IA).

>>> from rpdi.metrics.uncertain import uncertain_from_dict
>>> from rpdi.metrics.uncertain_scores import join
>>> from rpdi.usermodels import model_for
>>> j = join(uncertain_from_dict({"q": {"a": {0: 0.5, 1: 0.5}, "b": 1}}), {"r": {"q": {"a": 2.0, "b": 1.0}}})
>>> float(over_worlds(model_for("RR"), j)["mean_rate"][0, 0])  # a relevant: 1; else 1/2
0.75
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.view import View
from rpdi.usermodels.base import At, Branch, BrowsingModel
from rpdi.usermodels.exact import exact
from rpdi.usermodels.mixture import Mixture


class NotCarried(InputError):
    """A model's step read what a grade-averaged user cannot carry (``seen``, ``best``)."""


class _Prefix:
    """Stands for ``seen`` and ``best``: any use of it raises :class:`NotCarried`."""

    def __init__(self, model):
        self.model = model

    def _refuse(self, *args, **kwargs):
        raise NotCarried(f"{self.model!r}: its step reads the ranking's prefix (seen or best), which differs between "
                         f"judgment worlds: its user is not carried exactly over uncertain grades (sampled instead)")

    __array_ufunc__ = __array_function__ = __array__ = __bool__ = __float__ = __index__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __getitem__ = __getattr__ = _refuse
    __hash__ = None


def world_of(j, column: np.ndarray) -> Rankings:
    """The rankings of ``j`` (:class:`metrics.uncertain_scores.Judgments`) in the world where
    entry e has grade ``column[e]``: grades, judged mask, each topic's ideal ranking and count of
    judged documents as :func:`metrics.rankings.build_rankings` gives them, the scale the qrels'."""
    entry = j.ids.grade.astype(np.int64) - 1
    hit = entry >= 0
    g = np.where(hit, column[np.maximum(entry, 0)], 0.0)
    ideal = np.zeros((len(j.entries), max([len(e) for e in j.entries] + [1])))
    for t, e in enumerate(j.entries):  # per topic (not per document)
        judged = np.sort(column[e][column[e] >= 0])[::-1]
        ideal[t, :len(judged)] = judged
    n_judged = np.array([(column[e] >= 0).sum() for e in j.entries], dtype=np.int64)
    return replace(j.ids, grade=np.where(g > 0, g, 0.0), judged=hit & (g >= 0), ideal=ideal, n_judged=n_judged,
                   max_grade=j.scale, pooled=hit)


class GradeAveraged(BrowsingModel):
    """The browsing model ``user``'s user on the judgments ``j``, each document's grade drawn from its
    distribution as the user reads it (see the module). It reads :meth:`rankings` (each rank's
    "grade" there is the row of its grade distribution), which the exact evaluator and both
    simulators take like any rankings."""

    normalised = False

    def __init__(self, user: BrowsingModel, j):
        check_covered(user, j)
        super().__init__(user.measure)
        self.user, self.j = user, j
        self.aggregation, self.horizon, self.halflife = user.aggregation, user.horizon, user.halflife
        self.rule, self.citation = user.rule, user.citation
        q = j.qrels
        n, K = q.grades.shape
        base = world_of(j, q.grades[:, 0])
        view = View(base, user.k)
        grades = np.concatenate([np.where(q.grades > 0, q.grades, 0.0), np.zeros((1, K)), np.full((1, K), j.scale)])
        flat = Rankings.of_grades(grades.reshape(1, 1, -1), base.ideal[:1], base.n_judged[:1], j.scale)
        # rows: the entries, then "not in the qrels" (gain 0), then "unknown, at its best" (the upper end)
        self.table_gain = user.gains(flat.grade, View(flat)).reshape(n + 2, K)
        self.table_prob = np.concatenate([q.probs, np.eye(1, K), np.eye(1, K)])
        self.base_view = view
        self.prefix = _Prefix(user)

    def rankings(self) -> Rankings:
        """The rankings this user reads: each rank's grade is 1 + its entry's row (0: not in the
        qrels; the largest grade, n + 2, the upper end's "at its best")."""
        return replace(self.j.ids, max_grade=float(len(self.table_gain)))

    def gains(self, grade, view):
        return np.asarray(grade, dtype=float)  # the row + 1; step reads the row's distribution

    def n_states(self, view):
        return self.user.n_states(self.base_view)

    def state_values(self, view):
        return self.user.state_values(self.base_view)

    def initial(self, view):
        return self.user.initial(self.base_view)

    def draw_start(self, rng, users, start, values):
        return self.user.draw_start(rng, users, start, values)

    def absorbed(self, state, rank):
        return self.user.absorbed(state, rank)

    def step(self, state, at: At) -> list[Branch]:
        row = np.asarray(at.gain).astype(np.int64) - 1
        row = np.where(row < 0, len(self.table_gain) - 2, row)  # not in the qrels (and the tail): gain 0
        out = []
        for k in range(self.table_gain.shape[1]):
            p = self.table_prob[row, k]
            if not p.any():
                continue
            for br in self.user.step(state, At(at.rank, self.table_gain[row, k], self.prefix, self.prefix, at.words)):
                out.append(Branch(br.prob * p, br.gain, br.cont, br.state, br.time))
        return out


def check_covered(model: BrowsingModel, j) -> None:
    """InputError unless ``model``'s user can be carried over the worlds of ``j`` exactly (its
    prefix reads are found later, when its step reads them: :class:`NotCarried`)."""
    if isinstance(model, (Mixture, GradeAveraged)):
        raise InputError(f"{model!r}: a mixture of variants is not carried over uncertain grades (sampled instead)")
    if model.normalised:
        raise InputError(f"{model!r}: normalised by the ideal ranking, which differs between judgment worlds: not "
                         f"carried exactly over uncertain grades (sampled instead)")
    q = j.qrels
    lowest = np.where(q.probs > 0, q.grades, np.inf).min(axis=1)
    highest = np.where(q.probs > 0, q.grades, -np.inf).max(axis=1)
    starts = [model.initial(View(world_of(j, g), model.k)) for g in (lowest, highest)]
    if starts[0].shape != starts[1].shape or not np.array_equal(starts[0], starts[1]):
        raise InputError(f"{model!r}: its start depends on the grades (as AP's target on R), which differ between "
                         f"judgment worlds: not carried exactly over uncertain grades (sampled instead)")


def over_worlds(model: BrowsingModel, j, convention: str = "unknown") -> dict[str, np.ndarray]:
    """(S, T) expectations over the judgment worlds of ``j`` of ``model``'s user (see the module):
    ``total`` E[G], ``mean_rate`` E[G/N], ``depth`` E[N], exact; ``rate`` E[G]/E[N] of the users
    over worlds (not the expectation of each world's rate). InputError (:class:`NotCarried`) for
    a model that is not covered."""
    averaged = GradeAveraged(model, j)
    return exact(averaged, averaged.rankings(), convention).values
