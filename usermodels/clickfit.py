"""Click models fitted to click logs by maximum likelihood, with the standard errors of their parameters.

Fitting is maximum likelihood by generalised EM: with the automaton's parameters theta fixed, a
scaled forward-backward pass over (rank, automaton state) gives each rank's posterior
examination probability and attractiveness (and satisfaction: the posterior of the automaton's
satisfying branches; CCM's satisfaction is its attractiveness, and both count for it) are
re-estimated in closed form (with pseudo-counts: one click and one skip per pair); with them fixed, theta maximises the
exact log-likelihood (scipy). Standard errors of theta are from the observed information of the
profile log-likelihood (attractiveness re-fitted at every theta), by central differences.

The click models, and what a fitted one holds: :mod:`rpdi.usermodels.clickmodels`.

>>> import numpy as np
>>> from rpdi.metrics.clicklogs import ClickLog
>>> from rpdi.usermodels.clickfit import fit
>>> docs = np.array([[0, 1, 2]] * 4)
>>> clicks = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0]], bool)
>>> log = ClickLog(np.zeros(4, int), docs, clicks, np.array(["q"], object), np.array(["a", "b", "c"], object))
>>> m = fit("GCTR", log, prior=(0, 0))
>>> round(float(m.alpha[0]), 4)   # 3 clicks on 12 shown documents
0.25
"""

from __future__ import annotations

import time

import numpy as np
from scipy import optimize

from rpdi.metrics.clicklogs import ClickLog, load_clicklog
from rpdi.usermodels.base import FIT_MARGIN
from rpdi.usermodels.clickmodels import NOISE, ClickModel, Fitted, attractiveness_keys, click_model
from rpdi.usermodels.clickpasses import exam_index, forward
from rpdi.usermodels.result_frames import fitted_frame

PRIOR = (1.0, 1.0)  # pseudo-counts (clicks, skips) added to every attractiveness estimate


def fit(model: str | ClickModel, log, *, by_grade: bool = False, noise: float = NOISE,
        prior: tuple[float, float] = PRIOR, tol: float = 1e-6, max_iter: int = 500,
        stderr: bool = True, accelerate: bool = True, qrels=None, as_frame: bool = False) -> Fitted:
    """Fit ``model`` to the sessions of ``log`` by maximum likelihood (see the module docstring).

    ``log``: a :class:`~metrics.clicklogs.ClickLog`, a click log file's path, or a DataFrame of
    shown results (``session``, ``query``, ``rank``, ``docno``, ``clicked``;
    :func:`metrics.clicklogs.load_clicklog`), with grades from ``qrels`` if given.
    ``by_grade``: one attractiveness (and satisfaction) per grade of the log's qrels instead of
    one per (query, document) pair. ``prior``: pseudo-counts (clicks, skips) of every
    attractiveness and satisfaction estimate ((0, 0): the plain MLE). Iterates until the mean
    log-likelihood per session rises by less than ``tol`` from one iteration to the next (an
    iteration is one EM step, or with ``accelerate`` one SQUAREM cycle of three). With
    ``as_frame`` the fitted parameters as a DataFrame (:func:`usermodels.result_frames.fitted_frame`).

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"session": [1, 1, 2, 2, 3, 3], "query": "q", "rank": [1, 2, 1, 2, 1, 2],
    ...                      "docno": ["a", "b", "a", "b", "b", "a"], "clicked": [1, 0, 0, 1, 0, 0]})
    >>> fit("RBP", rows, as_frame=True)[["model", "parameter"]]  # RBP's user: its persistence p
      model parameter
    0   RBP         p
    """
    if as_frame:
        return fitted_frame(fit(model, log, by_grade=by_grade, noise=noise, prior=prior, tol=tol, max_iter=max_iter,
                                stderr=stderr, accelerate=accelerate, qrels=qrels))
    import pandas as pd

    log = load_clicklog(log, qrels)

    t0 = time.perf_counter()
    cm = click_model(model, log.depth) if isinstance(model, str) else model
    codes, uniques = attractiveness_keys(log, cm.attr, by_grade)
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
            res = forward(cm.user, clicks, a, _gain(cm, alpha, sigma, idx, theta), noise, backward=True)
            ll = float(w @ res.ll) / S
            post_a = clicks * res.exam + (1 - res.exam) * a
            if cm.gain in ("satisfaction", "attractiveness"):  # the first branch(es): satisfied
                sat = W * clicks * res.branch[..., :2 if cm.gain == "attractiveness" else 1].sum(-1)
                examined_clicks = W * clicks * res.exam
            if sigma is not None:
                num = np.bincount(idx.ravel(), sat.ravel(), n_keys) + prior[0]
                den = np.bincount(idx.ravel(), examined_clicks.ravel(), n_keys) + prior[0] + prior[1]
                sigma = np.where(den > 0, num / np.where(den > 0, den, 1), sigma)
        num = np.bincount(idx.ravel(), (W * post_a).ravel(), n_keys) + prior[0]
        den = np.bincount(idx.ravel(), W.ravel(), n_keys) + prior[0] + prior[1]
        if cm.gain == "attractiveness":  # CCM: a satisfying click is evidence of attractiveness too
            num += np.bincount(idx.ravel(), sat.ravel(), n_keys)
            den += np.bincount(idx.ravel(), examined_clicks.ravel(), n_keys)
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
        return float(w @ forward(cm.user, clicks, a, _gain(cm, alpha, sigma, idx, th), noise).ll) / S

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


def _gain(cm, alpha, sigma, idx, theta):
    """The gain of a click at every shown document: sigma, alpha (CCM) or s (1 unless fitted)."""
    if sigma is not None:
        return sigma[idx]
    if cm.gain == "attractiveness":
        return alpha[idx]
    return np.full(idx.shape, theta.get("s", 1.0))


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
