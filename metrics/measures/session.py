"""Session measures: a session's turns read end to end, on :class:`metrics.sessions.SessionRankings`.

Notation: g(q, i) the grade at rank i of turn q (q, i from 1), k the ranks read per turn (the
cutoff, else the rankings' width), Q the session's turns. What is not known (an unjudged
document, a rank past a turn's ranking, a turn nobody judged: see :mod:`metrics.sessions`) is
0 in the value and maximal in the residual. Ranks below k count as nothing.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.kernels import discount, div
from rpdi.metrics.measures.registry import MAX_REL, MeasureSpec, Param, persistence, register
from rpdi.metrics.view import Score, View, scaled_gains


def session_grid(view: View, cutoff: int | None, name: str):
    """(grades, unknown, turn exists), each (S, Σ, Q, k), of the session rankings in ``view``;
    InputError if the view's rankings are not sessions'."""
    from rpdi.metrics.sessions import SessionRankings

    r = view.rankings
    if not isinstance(r, SessionRankings):
        raise InputError(f"measure {name}: a session measure; give the sessions (a session file, or CAsT's "
                         f"SESSION_TURN topic ids)")
    if cutoff is not None and cutoff != r.width:
        raise InputError(f"measure {name}@{cutoff}: the session rankings were laid out {r.width} ranks per turn")
    grade, judged = r.grid(r.grade), r.grid(r.judged)
    exists = (np.arange(grade.shape[2]) < r.turns[:, None])[None, :, :, None]
    return grade, exists & ~judged, np.broadcast_to(exists, grade.shape)


def query_discount(Q: int, bq: float) -> np.ndarray:
    """(Q,) 1 / (1 + log_bq q) for turns q = 1..Q (sDCG's)."""
    return 1.0 / (1.0 + np.log(np.arange(1, Q + 1)) / np.log(bq))


def sdcg(v: View, b: float, bq: float, cutoff: int | None) -> Score:
    """sDCG = sum_q sum_{i<=k} g(q, i) / ((1 + log_bq q) max(1, log_b i)); residual: the same
    sum over unknown ranks at the largest grade.

    Gains are the grades. User: reads rank i of turn q with probability
    1 / ((1 + log_bq q) max(1, log_b i)), the rank discount within a turn, the query discount
    across turns; the value is the expected total gain. Reference: Järvelin, Price, Delcambre &
    Nielsen, "Discounted cumulated gain based evaluation of multiple-query IR sessions" (ECIR
    2008).

    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.metrics.rankings import Rankings
    >>> r = Rankings.of_grades(np.array([[[2.0, 1.0], [0.0, 3.0]]]), np.zeros((2, 1)), [2, 2], 3.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> s = session_rankings(r, sessions_from_ids(r.topics))
    >>> round(float(sdcg(View(s), 2, 4, None).value[0, 0]), 6)  # 2 + 1 + (0 + 3) / (1 + log_4 2)
    5.0
    """
    grade, unknown, exists = session_grid(v, cutoff, "sDCG")
    w = sdcg_weights(*grade.shape[2:], b, bq)
    value = (np.maximum(grade, 0.0) * w * exists).sum((-2, -1))
    return Score(value, residual=(unknown * w).sum((-2, -1)) * v.max_grade)


def nsdcg(v: View, b: float, bq: float, cutoff: int | None) -> Score:
    """nsDCG = sDCG / sDCG of the ideal session, in which every turn is its own ideal ranking
    (its judged grades, best first, cut at k); undefined if that is 0. The residual is sDCG's
    over the same ideal.

    User: sDCG's, its expected total gain divided by the same user's on the ideal session (a
    constant per session). Reference: Järvelin, Price, Delcambre & Nielsen (ECIR 2008) for sDCG;
    normalised by the ideal session as Kanoulas, Carterette, Clough & Sanderson (SIGIR 2011) and
    Jiang & Allan (CHIIR 2016) do, with one ideal ranking per turn (CAsT judges each turn apart).

    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.metrics.rankings import Rankings
    >>> r = Rankings.of_grades(np.array([[[0.0, 2.0], [1.0, 0.0]]]), np.array([[2.0, 0.0], [1.0, 0.0]]), [2, 2], 2.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> s = session_rankings(r, sessions_from_ids(r.topics))
    >>> round(float(nsdcg(View(s), 2, 2, None).value[0, 0]), 6)  # (2 + 1/2) / (2 + 1/2)
    1.0
    """
    score = sdcg(v, b, bq, cutoff)
    r = v.rankings
    ideal = r.grid(r.turn_ideal[None])
    best = (ideal * sdcg_weights(*ideal.shape[2:], b, bq)).sum((-2, -1))
    return Score(div(score.value, best), residual=div(score.residual, best))


def sdcg_weights(Q: int, k: int, b: float, bq: float) -> np.ndarray:
    """(Q, k) sDCG's weight of rank i of turn q: the turn's discount times the rank's."""
    return query_discount(Q, bq)[:, None] * discount(np.arange(1, k + 1), b)


def srbp_weights(Q: int, k: int, p: float, b: float) -> np.ndarray:
    """(Q, k) sRBP's weights (1 - p) x^(q-1) (b p)^(i-1), x = (p - b p) / (1 - b p): the
    probability that the user reads rank i of turn q, times 1 - p."""
    x = (p - b * p) / (1 - b * p)
    return (1 - p) * x ** np.arange(Q)[:, None] * (b * p) ** np.arange(k)


def srbp(v: View, p: float, b: float, rel: float | None, max_rel: float | None, cutoff: int | None) -> Score:
    """sRBP = (1 - p) sum_q ((p - b p)/(1 - b p))^(q-1) sum_{i<=k} (b p)^(i-1) r(q, i); residual:
    the same sum over unknown ranks (r = 1).

    Gains r are binary (grade >= rel) with ``rel``, else grade / max_rel. User: after each
    document reads on with probability p, else stops; reading on, goes down the ranking with
    probability b, or to the next query's first document with 1 - b. Reference: Lipani,
    Carterette & Yilmaz, "From a user model for query sessions to session rank biased precision
    (sRBP)" (ICTIR 2019).

    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.metrics.rankings import Rankings
    >>> r = Rankings.of_grades(np.array([[[1.0], [1.0]]]), np.ones((2, 1)), [1, 1], 1.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> s = session_rankings(r, sessions_from_ids(r.topics))
    >>> round(float(srbp(View(s), 0.5, 0.5, None, None, None).value[0, 0]), 6)  # 0.5 (1 + 1/3)
    0.666667
    """
    grade, unknown, exists = session_grid(v, cutoff, "sRBP")
    gains = (grade >= rel).astype(float) if rel is not None else scaled_gains(
        grade, v.max_grade if max_rel is None else max_rel)
    w = srbp_weights(grade.shape[2], grade.shape[3], p, b)
    return Score((gains * w * exists).sum((-2, -1)), residual=(unknown * w).sum((-2, -1)))


def unseen(doc: np.ndarray, p_down: float) -> np.ndarray:
    """(S, Σ, Q, k) the probability that a user of Kanoulas et al.'s model who reads the document
    at rank i of turn q of ``doc`` (document codes, -1: none) has not read it before: 0 if it
    stands higher in turn q, else the product over earlier turns q' holding it (at rank j, its
    first there) of P(the user stopped above j in q') = 1 - p_down^(j - 1). The stopping ranks
    of the turns read are independent of each other and of reaching turn q, hence the product.

    >>> unseen(np.array([[[[7, 8], [8, 7]]]]), 0.5).tolist()  # 7 and 8 again: read before w.p. 1 and 1/2
    [[[[1.0, 1.0], [0.5, 0.0]]]]
    """
    Q, k = doc.shape[-2:]
    flat = doc.reshape(-1, Q, k)
    keys = (np.arange(len(flat))[:, None, None] * (int(flat.max(initial=0)) + 2) + flat + 1).ravel()
    rank, turn = np.arange(1, k + 1), np.arange(Q)[:, None]
    out = np.ones(flat.shape)
    for q in range(Q):  # where each document stands in turn q: one search over every session
        row = keys.reshape(flat.shape)[:, q].ravel()
        order = np.argsort(row, kind="stable")  # a document's first rank first
        at = np.searchsorted(row[order], keys).clip(max=len(row) - 1)
        found = ((row[order][at] == keys) & (flat.ravel() >= 0)).reshape(flat.shape)
        j = (order[at] % k + 1).reshape(flat.shape)
        out *= np.where(found & (turn > q), 1.0 - p_down ** (j - 1.0), 1.0)
        out *= np.where(found & (turn == q) & (j < rank), 0.0, 1.0)
    return out.reshape(doc.shape)


def escg(v: View, p_reform: float, p_down: float, cutoff: int | None) -> Score:
    """esCG = sum_q sum_{i<=k} g(q, i) p_reform^(q-1) p_down^(i-1) u(q, i), u = P(not read before)
    (:func:`unseen`); residual: the same sum over unknown ranks at the largest grade, u taken as
    1 (at its best a document not yet known is new).

    Gains are the grades. User (the model of Kanoulas, Carterette, Clough & Sanderson's
    model-based session measures): reads down a turn's ranking, after each document going on
    with probability p_down, else stopping there (at rank k for sure); having stopped, moves to
    the next query with probability p_reform (after the last, the session ends). A path is the
    stopping ranks (r_1, ..., r_m) of the turns read, with probability
    prod_{q<m} P(r_q) p_reform * P(r_m) (1 - p_reform [m < Q]), P(r) = p_down^(r-1)(1 - p_down)
    (p_down^(k-1) at r = k); esCG is the expectation over paths of the cumulated gain of what the
    path read, a document read before counting nothing. Reference: Kanoulas, Carterette, Clough
    & Sanderson, "Evaluating multi-query sessions" (SIGIR 2011), their expected session measure
    with M the cumulated gain (Jiang & Allan's esnDCG without its path discount, before its
    normalisation).

    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.metrics.rankings import Rankings
    >>> r = Rankings.of_grades(np.array([[[1.0, 2.0], [2.0, 1.0]]]), np.array([[2.0, 1.0], [2.0, 1.0]]), [2, 2], 2.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> s = session_rankings(r, sessions_from_ids(r.topics))
    >>> round(float(escg(View(s), 0.5, 0.5, None).value[0, 0]), 6)  # 1 + 2/2 + (2 + 1/2)/2
    3.25
    """
    grade, unknown, exists = session_grid(v, cutoff, "esCG")
    r = v.rankings
    w = p_reform ** np.arange(grade.shape[2])[:, None] * p_down ** np.arange(grade.shape[3])
    value = (np.maximum(grade, 0.0) * unseen(r.grid(r.doc), p_down) * w * exists).sum((-2, -1))
    return Score(value, residual=(unknown * w).sum((-2, -1)) * v.max_grade)


def turn_stops(k: int, p_down: float) -> np.ndarray:
    """(k,) P(the user of Kanoulas et al.'s model stops a turn at rank r), r = 1..k:
    p_down^(r-1) (1 - p_down), and p_down^(k-1) at r = k."""
    stops = p_down ** np.arange(k) * (1 - p_down)
    stops[-1] = p_down ** (k - 1)
    return stops


MAX_PATH_CELLS = 2 ** 27  # floats (1 GiB) esnDCG's worth of one session's documents may take


def path_budget(name: str, cells: int, k: int) -> None:
    """InputError if ``cells`` floats of a path measure's work exceed :data:`MAX_PATH_CELLS`."""
    if cells > MAX_PATH_CELLS:
        raise InputError(f"measure {name}: {k} ranks a turn would take {cells * 8 / 2 ** 30:.1f} GiB of path "
                         f"weights (at most {MAX_PATH_CELLS * 8 / 2 ** 30:.0f} GiB); give a smaller cutoff")


def path_entries(Q: int, k: int, p_reform: float, p_down: float) -> np.ndarray:
    """(Q, Q k + 1) P(the user of Kanoulas et al.'s model enters turn q having read j documents):
    entering turn q + 1 having read j + r is entering turn q having read j, stopping it at rank r
    and moving on (p_reform); the turns' stopping ranks are independent."""
    N = Q * k
    enter = np.zeros((Q, N + 1))
    enter[0, 0] = 1.0
    for q in range(1, Q):
        enter[q, 1:] = p_reform * np.convolve(enter[q - 1], turn_stops(k, p_down))[:N]
    return enter


def path_rest(Q: int, k: int, p_reform: float, p_down: float) -> np.ndarray:
    """(Q, k, Q k + 1) P(the user reads m more documents after rank i of a turn with t turns left
    after it): those below it in its turn (it goes down with p_down) and those of the turns it
    moves on to (with p_reform each)."""
    N = Q * k
    stops = turn_stops(k, p_down)
    after = np.zeros((Q, N + 1))  # documents read in t more turns, each entered with p_reform
    after[0, 0] = 1.0
    for t in range(1, Q):
        after[t] = (1 - p_reform) * after[0]
        after[t, 1:] += p_reform * np.convolve(after[t - 1], stops)[:N]
    rest = np.zeros((Q, k, N + 1))
    for i in range(1, k + 1):
        below = turn_stops(k - i + 1, p_down)  # the ranks read from i on, i itself first
        for t in range(Q):
            rest[t, i - 1] = np.convolve(below, after[t])[:N + 1]
    return rest


def session_path_factors(turns: int, ideal: np.ndarray, rest: np.ndarray, b: float) -> np.ndarray:
    """(Q, k, Q k) esnDCG's worth of a document at rank i of turn q of one session of ``turns``
    turns, per document read before it on the path, n: its path discount d(n + 1) (Järvelin &
    Kekäläinen's, 1/max(1, log_b j) at path position j) times E[1/I(L) | the user reads it at
    position n + 1], L the path's final length and I(L) the DCG at L of the session's ideal ranking
    (``ideal``, best first); ``rest`` from :func:`path_rest`. Given where the user reads, the rest
    of its path is independent of how it got there. NaN if the ideal gains nothing."""
    Q, k, N = rest.shape[0], rest.shape[1], rest.shape[2] - 1
    d = discount(np.arange(1, N + 1), b)
    best = np.cumsum(np.pad(ideal, (0, max(N - len(ideal), 0)))[:N] * d)
    inverse = np.zeros(2 * N + 2)
    inverse[1:N + 1] = div(1.0, best)  # 1/I(L), L = 1..N
    windows = np.lib.stride_tricks.sliding_window_view(inverse, N + 1)[1:N + 1]  # [n, m]: 1/I(n + 1 + m)
    left = turns - 1 - np.arange(Q)  # turns after turn q
    R = np.where((left >= 0)[:, None, None], rest[left.clip(0)], 0.0)
    return (R.reshape(Q * k, N + 1) @ windows.T).reshape(Q, k, N) * d


def path_factors(turns: np.ndarray, ideal: np.ndarray, Q: int, k: int, p_reform: float, p_down: float, b: float,
                 normalise: bool) -> np.ndarray:
    """(Σ, Q, k, Q k) what a document at rank i of turn q of each session (of ``turns`` (Σ,)) is
    worth, per document read before it on the path, n: esDCG's d(n + 1), with ``normalise``
    esnDCG's (:func:`session_path_factors`). For the exact users; InputError past
    :data:`MAX_PATH_CELLS`."""
    N = Q * k
    if not normalise:
        return np.broadcast_to(discount(np.arange(1, N + 1), b), (len(turns), Q, k, N))
    path_budget("esnDCG", len(turns) * Q * k * (N + 1), k)
    rest = path_rest(Q, k, p_reform, p_down)
    return np.stack([session_path_factors(t, row, rest, b) for t, row in zip(turns, ideal)])


def esdcg_weights(Q: int, k: int, p_reform: float, p_down: float, b: float) -> np.ndarray:
    """(Q, k) esDCG's W(q, i) = p_down^(i-1) sum_j P(enter turn q having read j) d(j + i), the
    expected path discount of reading rank i of turn q (:func:`path_entries`)."""
    N = Q * k
    d = discount(np.arange(1, N + 1), b)
    enter = path_entries(Q, k, p_reform, p_down)[:, :N - k + 1]  # at most (Q - 1) k read before a turn
    return np.array([np.correlate(d, e, "valid") for e in enter]) * p_down ** np.arange(k)


def esndcg_weights(turns: np.ndarray, ideal: np.ndarray, Q: int, k: int, p_reform: float, p_down: float,
                   b: float) -> np.ndarray:
    """(Σ, Q, k) esnDCG's W(q, i): sum over the documents read before turn q, j, of
    P(enter turn q having read j) p_down^(i-1) times its worth (:func:`session_path_factors`) at
    n = j + i - 1; one session at a time, InputError past :data:`MAX_PATH_CELLS`."""
    N = Q * k
    path_budget("esnDCG", 3 * Q * k * (N + 1) + N * (N + 1), k)
    enter = path_entries(Q, k, p_reform, p_down)[:, :N - k + 1]  # at most (Q - 1) k read before a turn
    rest = path_rest(Q, k, p_reform, p_down)
    out = np.zeros((len(turns), Q, k))
    for s, (t, row) in enumerate(zip(turns, ideal)):
        worth = session_path_factors(t, row, rest, b)
        step = worth.strides
        diagonal = np.lib.stride_tricks.as_strided(worth, (Q, k, N - k + 1), (step[0], step[1] + step[2], step[2]),
                                                   writeable=False)
        out[s] = np.einsum("qij,qj->qi", diagonal, enter)  # [q, i, j]: the worth at n = j + i - 1
    return out * p_down ** np.arange(k)


def expected_path_dcg(v: View, p_reform: float, p_down: float, b: float, cutoff: int | None, normalise: bool,
                      name: str) -> Score:
    """esDCG's and esnDCG's closed forms: sum_q sum_i g(q, i) W(q, i), W from
    :func:`esdcg_weights` or :func:`esndcg_weights`; residual the same sum over unknown ranks at
    the largest grade."""
    grade, unknown, exists = session_grid(v, cutoff, name)
    r = v.rankings
    Q, k = grade.shape[2:]
    w = (esndcg_weights(r.turns, r.ideal, Q, k, p_reform, p_down, b) if normalise
         else esdcg_weights(Q, k, p_reform, p_down, b))
    value = (np.maximum(grade, 0.0) * w * exists).sum((-2, -1))
    return Score(value, residual=(unknown * w).sum((-2, -1)) * v.max_grade)


def esdcg(v: View, p_reform: float, p_down: float, b: float, cutoff: int | None) -> Score:
    """esDCG = E_paths[sum_j g(ω_j) / max(1, log_b j)], ω the path's documents in the order read
    (concatenated); residual: the same over unknown ranks at the largest grade.

    Gains are the grades; a document read again counts again (the path's DCG is the DCG of the
    concatenated list). User: Kanoulas et al.'s (esCG's, :func:`escg`): reads down a turn with
    p_down, else stops it (at rank k for sure), then moves to the next query with p_reform. Its
    j-th document on the path counts at Järvelin & Kekäläinen's discount of position j. Closed
    form: rank i of turn q entered having read j documents is at position j + i, read with
    probability P(enter q having read j) p_down^(i-1); P(enter q, j) by dynamic programming over
    turns (the turns' stopping ranks are independent). Reference: Kanoulas, Carterette, Clough &
    Sanderson, "Evaluating multi-query sessions" (SIGIR 2011), their expected session measure
    with M the path's DCG.

    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.metrics.rankings import Rankings
    >>> r = Rankings.of_grades(np.array([[[1.0, 0.0], [0.0, 2.0]]]), np.array([[2.0, 1.0], [2.0, 0.0]]), [2, 2], 2.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> s = session_rankings(r, sessions_from_ids(r.topics))
    >>> # turn 2's rank 2 read w.p. 1/8 at path position 3, 1/8 at 4: 1 + 2 (1/8 / log2 3 + 1/8 / log2 4)
    >>> round(float(esdcg(View(s), 0.5, 0.5, 2, None).value[0, 0]), 6)
    1.282732
    """
    return expected_path_dcg(v, p_reform, p_down, b, cutoff, False, "esDCG")


def esndcg(v: View, p_reform: float, p_down: float, b: float, cutoff: int | None) -> Score:
    """esnDCG = E_paths[DCG(ω) / IDCG(|ω|)], IDCG(L) the session's ideal DCG at the path's length L
    (undefined if it gains nothing). Residual: the same over unknown ranks at the largest grade.

    esDCG's path DCG (:func:`esdcg`, a document read again counting again), each path divided by
    the ideal DCG at its own length: the session's judged grades of all its turns, best first.
    Closed form: a document read at position j of a path of final length L counts
    g d(j) / IDCG(L); given that it is read at j (rank i of turn q), L - j is independent of the
    path before it, so its worth is g d(j) E[1/IDCG(L) | read at j] (:func:`path_factors`),
    summed as esDCG's. Reference: Kanoulas, Carterette, Clough & Sanderson (SIGIR 2011), their
    esnDCG; Jiang & Allan (CHIIR 2016) sample its paths.

    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.metrics.rankings import Rankings
    >>> r = Rankings.of_grades(np.array([[[1.0], [1.0]]]), np.array([[1.0], [1.0]]), [1, 1], 1.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> s = session_rankings(r, sessions_from_ids(r.topics))
    >>> round(float(esndcg(View(s), 0.5, 0.5, 2, None).value[0, 0]), 6)  # both paths read only relevant documents
    1.0
    """
    return expected_path_dcg(v, p_reform, p_down, b, cutoff, True, "esnDCG")


_LOG_BASE = "> 1"
_PROBABILITY = "in [0, 1]"
_SDCG_PARAMS = (Param("b", float, 2.0, "log base of the rank discount", lambda x: x > 1, _LOG_BASE),
                Param("bq", float, 4.0, "log base of the query discount", lambda x: x > 1, _LOG_BASE))
_ESCG_PARAMS = (Param("p_reform", float, 0.8, "having stopped in a turn, the probability of moving to the next query",
                      lambda x: 0 <= x <= 1, _PROBABILITY),
                Param("p_down", float, 0.7, "the probability of reading on down a turn's ranking",
                      lambda x: 0 <= x <= 1, _PROBABILITY))
_PATH_PARAMS = _ESCG_PARAMS + (Param("b", float, 2.0, "log base of the path discount", lambda x: x > 1, _LOG_BASE),)
register(
    MeasureSpec("sDCG", sdcg, _SDCG_PARAMS,
                "optional", "reads rank i of turn q with probability 1/((1 + log_bq q) max(1, log_b i))",
                "Järvelin, Price, Delcambre & Nielsen 2008", passes_cutoff=True, residual=True, session=True),
    MeasureSpec("nsDCG", nsdcg, _SDCG_PARAMS,
                "optional", "sDCG's user, divided by its value on the ideal session (each turn its ideal ranking)",
                "Järvelin et al. 2008; normalised as Kanoulas et al. 2011", passes_cutoff=True, residual=True,
                session=True),
    MeasureSpec("esCG", escg, _ESCG_PARAMS,
                "optional", "reads down with p_down, else stops the turn and moves to the next query with p_reform; "
                "a document read before gains nothing", "Kanoulas, Carterette, Clough & Sanderson 2011",
                passes_cutoff=True, residual=True, session=True),
    MeasureSpec("esDCG", esdcg, _PATH_PARAMS, "optional",
                "esCG's path; the j-th document it reads counts at 1/max(1, log_b j), read again counting again",
                "Kanoulas, Carterette, Clough & Sanderson 2011", passes_cutoff=True, residual=True, session=True),
    MeasureSpec("esnDCG", esndcg, _PATH_PARAMS, "optional",
                "esDCG's path, its DCG divided by the session's ideal DCG at the path's length",
                "Kanoulas, Carterette, Clough & Sanderson 2011", passes_cutoff=True, residual=True, session=True),
    MeasureSpec("sRBP", srbp, (persistence("p", "probability of reading on after a document"),
                               Param("b", float, 0.6, "reading on, the probability of going down (else: next query)",
                                     lambda x: 0 <= x <= 1, _PROBABILITY),
                               Param("rel", float, None, "binary gains at this grade (default: grade/max_rel)",
                                     lambda x: x > 0, "> 0", optional=True), MAX_REL),
                "optional", "reads on with probability p, down with b or to the next query with 1 - b",
                "Lipani, Carterette & Yilmaz 2019", passes_cutoff=True, residual=True, session=True),
)
