"""Browsing models as click models, fitted to click logs by maximum likelihood.

**Every rpdi browsing model is a click model.** Its automaton decides examination: the user
reads rank 1, then ranks in order until the automaton stops (examination is a prefix, as in
every cascade model). An examined document is clicked with its attractiveness alpha, one per
(query, document) pair learnt from the log (or, with qrels, one per grade). The gain the
automaton sees at rank r is the click: g_r = s * c_r, with s = 1 (a click is a relevant
document), s fitted (ERR: the probability that a click satisfies), or s = sigma_qd, a
satisfaction learnt per pair (SDBN, DBN). A user who has stopped clicks with probability NOISE
(default 1e-6), so that a click the model forbids (a second click for the cascade) costs
log(NOISE) instead of making the log-likelihood minus infinity.

Per model (the log's depth is N):

=========  ==================================================================================
P@k        reads exactly k: P(C_r) = alpha_qd for r <= k (P@N is the document-CTR model)
RBP        continues with p after every document: P(E_r) = p^(r-1); p fitted
SDCG@k     continues from r with log2(r+1)/log2(r+2): P(E_r) = 1/log2(r+1); nothing fitted
INSQ, INST continue with ((r+2T-1)/(r+2T))^2, INST with T_r = T - (clicks so far); T fitted
RR         stops at the first click (the cascade model CM)
RR2        stops at the second click
ERR        a click satisfies with probability s (fitted) and the user stops, else reads on:
           DCM with one lambda = 1 - s; with s = 1 it is CM, with s = sigma_qd it is SDBN
RBP2       continues with p1 after a click, p2 after a skip; both fitted
BetaRBP    a population of RBP users, p ~ Beta(a, b); a and b fitted
=========  ==================================================================================

and the standard click models of Chuklin, Markov & de Rijke (2015), from the same machinery:
CM (= RR's user), DCM (continue after a click at rank r with lambda_r), SDBN (ERR's user with
a learnt satisfaction sigma_qd), DBN (SDBN that also gives up with 1 - gamma after every
document), PBM (P(C_r) = epsilon_r alpha_qd, examination independent across ranks), UBM
(epsilon indexed by rank and the rank of the previous click), and the CTR baselines GCTR (one
click probability), RCTR (one per rank) and DCTR (one per pair). Models of one's own
(``path.py:Class(...)``) are fitted the same way, with the parameters named in the class's
``fit_bounds`` free.

Fitting is maximum likelihood by generalised EM: with the automaton's parameters theta fixed, a
scaled forward-backward pass over (rank, automaton state) gives each rank's posterior
examination probability and attractiveness (and satisfaction) are re-estimated in closed form
(with pseudo-counts: one click and one skip per pair); with them fixed, theta maximises the
exact log-likelihood (scipy). Standard errors of theta are from the observed information of the
profile log-likelihood (attractiveness re-fitted at every theta), by central differences.

Held-out evaluation (Chuklin et al. 2015, Section 4.2): the log-likelihood is the mean over
sessions of sum_r log P(C_r = c_r | C_<r) (natural log); the perplexity at rank r is
2^(-mean_s [c log2 q + (1-c) log2(1-q)]) with q = P(C_r = 1) the model's unconditional click
probability, and the perplexity is the mean over ranks. A (query, document) pair not seen in
training gets the mean fitted attractiveness (satisfaction) of the training documents at the
same rank.

>>> import numpy as np
>>> from rpdi.metrics.clicklogs import ClickLog
>>> from rpdi.usermodels.clickmodels import fit
>>> docs = np.array([[0, 1, 2]] * 4)
>>> clicks = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0]], bool)
>>> log = ClickLog(np.zeros(4, int), docs, clicks, np.array(["q"], object), np.array(["a", "b", "c"], object))
>>> m = fit("GCTR", log, prior=(0, 0))
>>> round(float(m.alpha[0]), 4)   # 3 clicks on 12 shown documents
0.25
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from rpdi.metrics.clicklogs import ClickLog
from rpdi.metrics.errors import InputError
from rpdi.usermodels.base import FIT_MARGIN, OPEN_UNIT, BrowsingModel
from rpdi.usermodels.clickpasses import (exam_index, forward, independent_marginal, independent_q, marginal,
                                         sample_automaton)
from rpdi.usermodels.dbn import DBNUser
from rpdi.usermodels.dcm import DCMUser

NOISE = 1e-6
PRIOR = (1.0, 1.0)  # pseudo-counts (clicks, skips) added to every attractiveness estimate
STANDARD = ("GCTR", "RCTR", "DCTR", "PBM", "UBM", "CM", "DCM", "SDBN", "DBN")
METRIC_USERS = ("P@10", "RR", "RR2", "ERR", "RBP", "RBP2", "SDCG@10", "INSQ", "INST")  # and BetaRBP, slow: 64 states


@dataclass
class ClickModel:
    """A click model ready to fit: ``kind`` "automaton" (a browsing model) or "independent"
    (PBM, UBM, CTRs: ``exam`` "none", "rank" or "ubm"; ``attr`` "global", "rank" or "pair")."""

    name: str
    kind: str
    user: BrowsingModel | None = None
    free: dict[str, tuple[float, float]] = field(default_factory=dict)
    gain: str = "click"  # "click" (s = 1), "scaled" (s fitted), "satisfaction" (sigma per pair)
    exam: str = "none"
    attr: str = "pair"
    measure: str | None = None  # the measure text, with {name} placeholders for fitted values

    def set(self, theta: dict[str, float]) -> None:
        for k, v in theta.items():
            if k == "s":
                continue
            if k.startswith("lambda_"):
                self.user.lam[int(k[7:]) - 1] = v
            else:
                setattr(self.user, k, v)


def click_model(text: str, depth: int = 10) -> ClickModel:
    """The click model named ``text``: a standard one (``STANDARD``), a measure with a browsing
    model (its parameters given in the name are held fixed, the others in the model's ``fit_bounds``
    fitted), or ``path.py:Class(...)`` likewise."""
    text = text.strip()
    independent = {"GCTR": ("none", "global"), "RCTR": ("none", "rank"), "DCTR": ("none", "pair"),
                   "PBM": ("rank", "pair"), "UBM": ("ubm", "pair")}
    if text in independent:
        return ClickModel(text, "independent", exam=independent[text][0], attr=independent[text][1])
    if text == "DCM":
        return ClickModel(text, "automaton", DCMUser(depth), {f"lambda_{r}": OPEN_UNIT for r in range(1, depth)})
    if text == "DBN":
        return ClickModel(text, "automaton", DBNUser(), {"gamma": (FIT_MARGIN, 1.0)}, gain="satisfaction")
    from rpdi.usermodels import model_for
    from rpdi.usermodels.ap import RobertsonAP
    from rpdi.usermodels.err import ERR

    if text in ("CM", "SDBN"):
        return ClickModel(text, "automaton", ERR("ERR"), gain="click" if text == "CM" else "satisfaction")
    user = model_for(text)
    if user.halflife is not None or isinstance(user, RobertsonAP):
        raise InputError(f"model {text!r}: {type(user).__name__} needs document times or the number "
                         f"of relevant documents, which a click log does not give; it cannot be fitted")
    given = set(re.findall(r"(\w+)\s*=", text.split("(", 1)[1])) if "(" in text else set()
    free = {k: v for k, v in type(user).fit_bounds.items() if k not in given}
    if isinstance(user, ERR):  # the satisfaction of a click, s, is fitted
        return ClickModel(text, "automaton", user, {"s": (FIT_MARGIN, 1.0)}, gain="scaled", measure=text)
    return ClickModel(text, "automaton", user, free, measure=_measure_text(text, list(free)))


def _measure_text(text: str, free: list[str]) -> str:
    """``text`` with placeholders for the fitted parameters, e.g. "RBP(p={p})"."""
    if not free:
        return text
    head, _, cutoff = text.partition("@")
    slots = ", ".join(f"{k}={{{k}}}" for k in free)
    if "(" in head:
        head = head.rstrip()[:-1] + ", " + slots + ")"
    else:
        head = f"{head}({slots})"
    return head + ("@" + cutoff if cutoff else "")


# -- the fitted model -------------------------------------------------------------------------

@dataclass
class Fitted:
    """A fitted click model: scalar ``params`` and their ``stderr``; attractiveness ``alpha`` (and
    satisfaction ``sigma``) per key of ``keys``, with per-rank back-offs for unseen keys;
    ``exam`` the examination probabilities of PBM/UBM."""

    model: ClickModel
    params: dict[str, float]
    stderr: dict[str, float]
    keys: object  # pandas Index of attractiveness keys
    alpha: np.ndarray
    alpha_rank: np.ndarray
    sigma: np.ndarray | None
    sigma_rank: np.ndarray | None
    exam: np.ndarray | None
    by_grade: bool
    noise: float
    loglik: float  # mean per training session
    iterations: int
    seconds: float = 0.0

    @property
    def measure(self) -> str | None:
        """The fitted browsing model as a measure name for ``rpdi eval``/``simulate``."""
        m = self.model.measure
        return None if m is None else m.format(**{k: f"{v:.4g}" for k, v in self.params.items()})

    def describe(self) -> str:
        """Parameters with standard errors, e.g. "p=0.6213±0.0041"."""
        parts = []
        for k, v in self.params.items():
            se = self.stderr.get(k)
            parts.append(f"{k}={v:.4g}" + ("" if se is None or not np.isfinite(se) else f"±{se:.2g}"))
        return " ".join(parts)

    def arrays(self, log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
        """Per-shown-document attractiveness and gain-of-a-click (S, N) for ``log``."""
        codes, names = _keys(log, self.model.attr, self.by_grade)
        idx = self.keys.get_indexer(names)[codes]
        alpha = np.where(idx >= 0, self.alpha[idx], self.alpha_rank[None, :])
        if self.sigma is not None:
            gain = np.where(idx >= 0, self.sigma[idx], self.sigma_rank[None, :])
        else:
            gain = np.full(log.docs.shape, self.params.get("s", 1.0))
        return alpha, gain

    def conditional(self, log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
        """P(C_r = 1 | C_<r) (S, N) and each session's log-likelihood (S,)."""
        alpha, gain = self.arrays(log)
        if self.model.kind == "independent":
            q = independent_q(self.exam, self.model.exam, log.clicks, alpha, self.noise)
            with np.errstate(divide="ignore"):
                ll = np.where(log.clicks, np.log(q), np.log1p(-q)).sum(1)
            return q, ll
        self.model.set(self.params)
        res = forward(self.model.user, log.clicks, alpha, gain, self.noise)
        return res.q, res.ll

    def marginal(self, log: ClickLog) -> np.ndarray:
        """P(C_r = 1) (S, N), the click probabilities with no clicks observed."""
        alpha, gain = self.arrays(log)
        if self.model.kind == "independent":
            return independent_marginal(self.exam, self.model.exam, alpha, self.noise)
        self.model.set(self.params)
        return marginal(self.model.user, alpha, gain, self.model.gain, self.noise)

    def sample(self, log: ClickLog, rng: np.random.Generator) -> np.ndarray:
        """Clicks (S, N) of simulated users on the sessions' documents."""
        alpha, gain = self.arrays(log)
        S, N = alpha.shape
        if self.model.kind == "independent":
            clicks = np.zeros((S, N), bool)
            for r in range(N):
                q = independent_q(self.exam, self.model.exam, clicks, alpha, self.noise, only=r)
                clicks[:, r] = rng.random(S) < q
            return clicks
        self.model.set(self.params)
        return sample_automaton(self.model.user, alpha, gain, self.noise, rng)


def _keys(log: ClickLog, attr: str, by_grade: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each shown document's attractiveness key: codes (S, N) into an object array of key names
    ("query<TAB>docno", "grade 2.0"/"unjudged", "rank 3" or "all")."""
    S, N = log.docs.shape
    if attr == "global":
        return np.zeros((S, N), np.int64), np.array(["all"], object)
    if attr == "rank":
        return np.broadcast_to(np.arange(N), (S, N)), np.array([f"rank {r}" for r in range(1, N + 1)], object)
    if by_grade:
        if log.grade is None:
            raise InputError(f"{log.source}: attractiveness by grade needs qrels")
        grades, codes = np.unique(np.nan_to_num(log.grade, nan=-1.0), return_inverse=True)
        return codes.reshape(S, N), np.array(["unjudged" if g < 0 else f"grade {g:g}" for g in grades], object)
    nd = len(log.docnos)
    pairs, codes = np.unique(log.query[:, None].astype(np.int64) * nd + log.docs, return_inverse=True)
    names = np.char.add(np.char.add(log.queries[pairs // nd].astype(str), "\t"), log.docnos[pairs % nd].astype(str))
    return codes.reshape(S, N), names.astype(object)


# -- fitting -----------------------------------------------------------------------------------

def fit(model: str | ClickModel, log: ClickLog, *, by_grade: bool = False, noise: float = NOISE,
        prior: tuple[float, float] = PRIOR, tol: float = 1e-6, max_iter: int = 500,
        stderr: bool = True, accelerate: bool = True) -> Fitted:
    """Fit ``model`` to the sessions of ``log`` by maximum likelihood (see the module docstring).

    ``by_grade``: one attractiveness (and satisfaction) per grade of the log's qrels instead of
    one per (query, document) pair. ``prior``: pseudo-counts (clicks, skips) of every
    attractiveness and satisfaction estimate ((0, 0): the plain MLE). Iterates until the mean
    log-likelihood per session rises by less than ``tol`` from one iteration to the next (an
    iteration is one EM step, or with ``accelerate`` one SQUAREM cycle of three).
    """
    import pandas as pd

    t0 = time.perf_counter()
    cm = click_model(model, log.depth) if isinstance(model, str) else model
    codes, uniques = _keys(log, cm.attr, by_grade)
    n_keys = len(uniques)
    N = log.depth
    # identical sessions (same documents, same clicks) are fitted once, with their count as weight
    rows, w = np.unique(np.concatenate([codes, log.clicks], 1), axis=0, return_counts=True)
    idx, clicks = rows[:, :N], rows[:, N:].astype(bool)
    S, W = w.sum(), np.broadcast_to(w[:, None].astype(float), idx.shape)
    alpha = np.full(n_keys, 0.5)
    sigma = np.full(n_keys, 0.5) if cm.gain == "satisfaction" else None
    theta = {k: float(np.clip(getattr(cm.user, k, 0.5) if not k.startswith("lambda_") else 0.5, lo, hi))
             for k, (lo, hi) in cm.free.items()} if cm.kind == "automaton" else {}
    if cm.gain == "scaled":
        theta["s"] = 0.5
    exam = eidx = None
    if cm.kind == "independent" and cm.exam != "none":
        exam = np.full(N * (N + 1) if cm.exam == "ubm" else N, 0.5)
        eidx = np.stack([exam_index(cm.exam, clicks, r) for r in range(N)], 1)
        e_den = np.bincount(eidx.ravel(), W.ravel(), len(exam))

    def em_step() -> float:
        """One EM update; returns the mean log-likelihood before it."""
        nonlocal alpha, sigma, exam
        if cm.kind == "automaton":
            cm.set(theta)
        a = alpha[idx]
        if cm.kind == "independent":
            eps = 1.0 if exam is None else exam[eidx]
            post_e, post_a, q = _independent_posteriors(eps, clicks, a, noise)
            with np.errstate(divide="ignore"):  # np.where computes both branches
                ll = (W * np.where(clicks, np.log(q), np.log1p(-q))).sum() / S
            if exam is not None:
                num = np.bincount(eidx.ravel(), (W * post_e).ravel(), len(exam))
                exam = np.where(e_den > 0, num / np.maximum(e_den, 1), exam)
        else:
            res = forward(cm.user, clicks, a, _gain(sigma, idx, theta, clicks.shape), noise, backward=True)
            ll = float(w @ res.ll) / S
            post_a = clicks * res.exam + (1 - res.exam) * a
            if sigma is not None:
                num = np.bincount(idx.ravel(), (W * clicks * res.satisfied).ravel(), n_keys) + prior[0]
                den = np.bincount(idx.ravel(), (W * clicks * res.exam).ravel(), n_keys) + prior[0] + prior[1]
                sigma = np.where(den > 0, num / np.where(den > 0, den, 1), sigma)
        num = np.bincount(idx.ravel(), (W * post_a).ravel(), n_keys) + prior[0]
        den = np.bincount(idx.ravel(), W.ravel(), n_keys) + prior[0] + prior[1]
        alpha = num / den
        return ll

    def loglik(th=None) -> float:
        th = theta if th is None else th
        a = alpha[idx]
        if cm.kind == "independent":
            eps = 1.0 if exam is None else exam[eidx]
            q = eps * a + (1 - eps) * noise
            with np.errstate(divide="ignore"):
                return float((W * np.where(clicks, np.log(q), np.log1p(-q))).sum() / S)
        cm.set(th)
        return float(w @ forward(cm.user, clicks, a, _gain(sigma, idx, th, clicks.shape), noise).ll) / S

    names = list(theta)
    bounds = [cm.free.get(k, (FIT_MARGIN, 1.0)) for k in names]

    def theta_step():
        nonlocal theta
        if not names:
            return
        def neg(x):
            v = loglik(dict(zip(names, x)))
            return -v if np.isfinite(v) else 1e300
        if len(names) == 1:
            r = optimize.minimize_scalar(lambda x: neg([x]), bounds=bounds[0], method="bounded",
                                         options={"xatol": 1e-5})
            x = [r.x]
        else:
            x = optimize.minimize(neg, [theta[k] for k in names], method="L-BFGS-B", bounds=bounds).x
        if neg(x) <= neg([theta[k] for k in names]):
            theta = dict(zip(names, map(float, x)))

    def pack() -> list[np.ndarray]:
        return [x.copy() for x in (alpha, sigma, exam) if x is not None]

    def unpack(xs: list[np.ndarray]) -> None:
        nonlocal alpha, sigma, exam
        xs = iter(xs)
        alpha = next(xs)
        sigma = None if sigma is None else next(xs)
        exam = None if exam is None else next(xs)

    def squarem_step() -> float:
        """Two EM steps, extrapolated (SQUAREM, Varadhan & Roland 2008), then one EM step from
        the extrapolation if it raised the likelihood, else from the second step."""
        x0 = pack()
        em_step()
        x1 = pack()
        em_step()
        x2 = pack()
        r = [b - a for a, b in zip(x0, x1)]
        v = [c - 2 * b + a for a, b, c in zip(x0, x1, x2)]
        rr, vv = sum(float((d * d).sum()) for d in r), sum(float((d * d).sum()) for d in v)
        if vv <= 0:
            return em_step()
        step = min(-np.sqrt(rr / vv), -1.0)
        ll2 = loglik()
        unpack([np.clip(a - 2 * step * d + step * step * e, 0.0, 1.0) for a, d, e in zip(x0, r, v)])
        ll = em_step()
        if not ll >= ll2:
            unpack(x2)
            ll = em_step()
        return ll

    ll, it = -np.inf, 0
    for it in range(1, max_iter + 1):
        if it <= 3 or it % 4 == 0:
            theta_step()
        new = squarem_step() if accelerate else em_step()
        if abs(new - ll) < tol and it > 5:
            break
        ll = new
    ll = loglik()
    def restore(a, s):
        nonlocal alpha, sigma
        alpha, sigma = a, s

    se = {}
    if stderr and names and len(names) <= 3:
        se = _profile_stderr(names, bounds, theta, loglik, squarem_step if accelerate else em_step,
                             lambda: (alpha, sigma), restore, S)
    cm.set(theta)
    alpha_rank = (W * alpha[idx]).sum(0) / S
    sigma_rank = None
    if sigma is not None:
        s_occ, n_clicks = sigma[idx], (W * clicks).sum(0)
        sigma_rank = np.where(n_clicks > 0, (W * s_occ * clicks).sum(0) / np.maximum(n_clicks, 1), (W * s_occ).sum(0) / S)
    return Fitted(cm, theta, se, pd.Index(uniques), alpha, alpha_rank, sigma, sigma_rank, exam, by_grade,
                  noise, ll, it, time.perf_counter() - t0)


def _gain(sigma, idx, theta, shape):
    if sigma is not None:
        return sigma[idx]
    return np.full(shape, theta.get("s", 1.0))


def _independent_posteriors(eps, clicks, alpha, noise):
    """Posterior P(E_r = 1 | C) and P(A_r = 1 | C) of PBM-like models (with the noise floor),
    and P(C_r = 1 | C_<r)."""
    q = eps * alpha + (1 - eps) * noise
    with np.errstate(divide="ignore", invalid="ignore"):
        post_e = np.where(clicks, eps * alpha / q, eps * (1 - alpha) / (1 - q))
        post_a = np.where(clicks, alpha * (eps + (1 - eps) * noise) / q, alpha * (1 - eps) * (1 - noise) / (1 - q))
    return np.nan_to_num(post_e), np.nan_to_num(post_a), q


def _profile_stderr(names, bounds, theta, loglik, em_step, get, restore, S) -> dict[str, float]:
    """Standard errors from the observed information of the profile log-likelihood: the
    attractiveness is re-fitted (EM from the optimum) at every perturbed theta."""
    saved = get()
    x0 = np.array([theta[k] for k in names])
    base = loglik() * S

    def profile(x) -> float:
        restore(*saved)
        th = dict(zip(names, x))
        prev = -np.inf
        for _ in range(200):
            theta.update(th)
            em_step()
            v = loglik(th) * S
            if abs(v - prev) < 1e-4:  # nats in total; moving theta by h costs about 0.5
                break
            prev = v
        return v

    # step: about one standard error with attractiveness fixed, kept inside the bounds
    h = np.empty(len(names))
    for i, (k, (lo, hi)) in enumerate(zip(names, bounds)):
        e = 1e-4 * max(1.0, abs(x0[i]))
        xp, xm = x0.copy(), x0.copy()
        xp[i] += e
        xm[i] -= e
        curv = -(loglik(dict(zip(names, xp))) * S - 2 * base + loglik(dict(zip(names, xm))) * S) / e ** 2
        h[i] = min(1.0 / np.sqrt(curv) if curv > 0 else 1e-3, (hi - x0[i]) * 0.9, (x0[i] - lo) * 0.9)
    fixed = dict(zip(names, x0))
    theta.update(fixed)
    if np.any(h <= 0):
        restore(*saved)
        return {k: float("nan") for k in names}
    center = profile(x0)  # the centre converged as far as the perturbed points
    H = np.empty((len(names), len(names)))
    for i in range(len(names)):
        for j in range(i, len(names)):
            if i == j:
                xp, xm = x0.copy(), x0.copy()
                xp[i] += h[i]
                xm[i] -= h[i]
                H[i, i] = (profile(xp) - 2 * center + profile(xm)) / h[i] ** 2
            else:
                v = []
                for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                    x = x0.copy()
                    x[i] += si * h[i]
                    x[j] += sj * h[j]
                    v.append(profile(x))
                H[i, j] = H[j, i] = (v[0] - v[1] - v[2] + v[3]) / (4 * h[i] * h[j])
    restore(*saved)
    theta.update(fixed)
    try:
        cov = np.linalg.inv(-H)
        return {k: float(np.sqrt(cov[i, i])) if cov[i, i] > 0 else float("nan") for i, k in enumerate(names)}
    except np.linalg.LinAlgError:
        return {k: float("nan") for k in names}


# -- held-out evaluation -----------------------------------------------------------------------

def evaluate(fitted: Fitted, log: ClickLog, rng: np.random.Generator | None = None, replicas: int = 10) -> dict:
    """Held-out figures: ``loglik`` (mean per session), ``perplexity`` and ``perplexity_rank``;
    observed and predicted click-through per rank, and the distribution of the last click's
    rank (index 0: no click), predicted from ``replicas`` simulated users per session."""
    _, ll = fitted.conditional(log)
    q = np.clip(fitted.marginal(log), 1e-300, 1 - 1e-16)
    c = log.clicks
    ppl_rank = 2.0 ** (-np.where(c, np.log2(q), np.log2(1 - q)).mean(0))
    rng = rng or np.random.default_rng(np.random.SeedSequence([14, len(log)]))
    sims = fitted.sample(log.subset(np.tile(np.arange(len(log)), replicas)), rng)
    return {"loglik": float(ll.mean()), "perplexity": float(ppl_rank.mean()), "perplexity_rank": ppl_rank,
            "ctr_observed": c.mean(0), "ctr_predicted": q.mean(0),
            "last_observed": _last_click(c), "last_predicted": _last_click(sims)}


def _last_click(clicks: np.ndarray) -> np.ndarray:
    """Share of sessions whose last click is at rank r (index 0: no click), (N + 1,)."""
    S, N = clicks.shape
    last = np.where(clicks.any(1), N - np.argmax(clicks[:, ::-1], axis=1), 0)
    return np.bincount(last, minlength=N + 1) / S


def fit_and_evaluate(train: ClickLog, test: ClickLog, models: list[str], *, by_grade: bool = False,
                     seed: int = 0, stderr: bool = True) -> list[dict]:
    """Fit every model on ``train`` and evaluate it on ``test``: one record per model, best held-out
    perplexity first, with ``model``, ``fitted`` (the measure string to pass to ``rpdi eval`` /
    ``simulate``, None for click models that are no metric's user), ``parameters`` (with standard
    errors), ``loglik``, ``perplexity``, ``perplexity_1``..``perplexity_N``, ``train_loglik``,
    ``iterations``, ``seconds``, and the curves of :func:`evaluate` under ``curves``."""
    records = []
    for i, name in enumerate(models):
        f = fit(name, train, by_grade=by_grade, stderr=stderr)
        e = evaluate(f, test, np.random.default_rng(np.random.SeedSequence([seed, 14, i])))
        rec = {"model": name, "fitted": f.measure, "parameters": f.describe(), "loglik": e["loglik"],
               "perplexity": e["perplexity"]}
        rec.update({f"perplexity_{r + 1}": float(v) for r, v in enumerate(e["perplexity_rank"])})
        rec.update({"train_loglik": f.loglik, "iterations": f.iterations, "seconds": f.seconds,
                    "sessions_train": len(train), "sessions_test": len(test),
                    "curves": {k: np.asarray(v).tolist() for k, v in e.items() if k.startswith(("ctr", "last"))}})
        records.append(rec)
    return sorted(records, key=lambda r: r["perplexity"])
