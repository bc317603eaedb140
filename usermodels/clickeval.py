"""Fitted click models evaluated on held-out sessions: log-likelihood, perplexity, click-through
per rank and the rank of the last click.

Held-out evaluation (Chuklin et al. 2015, Section 4.2): the log-likelihood is the mean over
sessions of sum_r log P(C_r = c_r | C_<r) (natural log); the perplexity at rank r is
2^(-mean_s [c log2 q + (1-c) log2(1-q)]) with q = P(C_r = 1) the model's unconditional click
probability, and the perplexity is the mean over ranks. A (query, document) pair not seen in
training gets the mean fitted attractiveness (satisfaction) of the training documents at the
same rank.

>>> import numpy as np
>>> from rpdi.metrics.clicklogs import ClickLog
>>> from rpdi.usermodels.clickfit import fit
>>> from rpdi.usermodels.clickeval import evaluate
>>> docs = np.array([[0, 1, 2]] * 4)
>>> clicks = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0]], bool)
>>> log = ClickLog(np.zeros(4, int), docs, clicks, np.array(["q"], object), np.array(["a", "b", "c"], object))
>>> e = evaluate(fit("GCTR", log, prior=(0, 0)), log)   # every click probability 0.25
>>> round(e["loglik"], 4)   # (3 ln 0.25 + 9 ln 0.75) / 4 sessions
-1.687
>>> round(float(e["perplexity_rank"][0]), 4)   # 2 clicks in 4: 2^-(0.5 log2 0.25 + 0.5 log2 0.75)
2.3094
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.clicklogs import ClickLog, load_clicklog
from rpdi.metrics.records import records_frame
from rpdi.usermodels.clickfit import fit
from rpdi.usermodels.clickmodels import Fitted


def evaluate(fitted: Fitted, log: ClickLog, rng: np.random.Generator | None = None, replicas: int = 10,
             alpha: float = 0.05) -> dict:
    """Held-out figures: ``loglik`` (mean per session), ``perplexity`` and ``perplexity_rank``;
    the calibration per rank: observed and predicted click-through (``ctr_*``) and share of
    sessions whose last click is at rank r (``last_*``, index 0: no click; predicted from
    ``replicas`` simulated users per session), with the ``1 - alpha`` normal interval of the
    mean per-session residual observed - predicted (``*_residual_low``/``_high``); and per
    session (under ``sessions``) the log-likelihood (S,) and log2 P(C_r = c_r) under the
    unconditional click probabilities (S, N), which :mod:`rpdi.usermodels.clickcompare` resamples."""
    from scipy.stats import norm

    _, ll = fitted.conditional(log)
    q = np.clip(fitted.marginal(log), 1e-300, 1 - 1e-16)
    c = log.clicks
    bits = np.where(c, np.log2(q), np.log2(1 - q))
    ppl_rank = 2.0 ** (-bits.mean(0))
    rng = rng or np.random.default_rng(np.random.SeedSequence([14, len(log)]))
    sims = fitted.sample(log.subset(np.tile(np.arange(len(log)), replicas)), rng)
    last_pred = _last_click_onehot(sims).reshape(replicas, len(log), -1).mean(0)
    last_obs = _last_click_onehot(c)
    out = {"loglik": float(ll.mean()), "perplexity": float(ppl_rank.mean()), "perplexity_rank": ppl_rank}
    z = norm.ppf(1 - alpha / 2)
    for name, obs, pred in (("ctr", c.astype(float), q), ("last", last_obs, last_pred)):
        resid = obs - pred
        half = z * resid.std(0, ddof=1) / np.sqrt(len(log)) if len(log) > 1 else np.full(obs.shape[1], np.inf)
        mean = resid.mean(0)
        out.update({f"{name}_observed": obs.mean(0), f"{name}_predicted": pred.mean(0),
                    f"{name}_residual_low": mean - half, f"{name}_residual_high": mean + half})
    out["sessions"] = {"loglik": ll, "bits": bits}
    return out


def _last_click_onehot(clicks: np.ndarray) -> np.ndarray:
    """(S, N + 1): 1 at the rank of each session's last click (index 0: no click)."""
    S, N = clicks.shape
    last = np.where(clicks.any(1), N - np.argmax(clicks[:, ::-1], axis=1), 0)
    return np.eye(N + 1)[last]


def fit_and_evaluate(train, test, models: list[str], *, by_grade: bool = False,
                     seed: int = 0, stderr: bool = True, alpha: float = 0.05, qrels=None, as_frame: bool = False):
    """Fit every model on ``train`` and evaluate it on ``test``: one record per model, best held-out
    perplexity first, with ``model``, ``fitted`` (the measure string to pass to ``rpdi eval`` /
    ``simulate``, None for click models that are no metric's user), ``parameters`` (with standard
    errors), ``loglik``, ``perplexity``, ``perplexity_1``..``perplexity_N``, ``train_loglik``,
    ``iterations``, ``seconds``; the calibration curves of :func:`evaluate` under ``curves``, and
    under ``sessions`` the per-session arrays of :func:`evaluate` and ``train_loglik`` (S_train,),
    each training session's log-likelihood (for :func:`rpdi.usermodels.clickcompare.compare`).
    ``train`` and ``test`` are anything :func:`usermodels.clickfit.fit` takes (ClickLogs, paths,
    DataFrames of shown results), with grades from ``qrels`` if given; with ``as_frame`` the
    records are a DataFrame (:func:`metrics.records.records_frame`; curves and sessions as dicts)."""
    train, test = load_clicklog(train, qrels), load_clicklog(test, qrels)
    records = []
    for i, name in enumerate(models):
        f = fit(name, train, by_grade=by_grade, stderr=stderr)
        e = evaluate(f, test, np.random.default_rng(np.random.SeedSequence([seed, 14, i])), alpha=alpha)
        rec = {"model": name, "fitted": f.measure, "parameters": f.parameters_text(), "loglik": e["loglik"],
               "perplexity": e["perplexity"]}
        rec.update({f"perplexity_{r + 1}": float(v) for r, v in enumerate(e["perplexity_rank"])})
        rec.update({"train_loglik": f.loglik, "iterations": f.iterations, "seconds": f.seconds,
                    "sessions_train": len(train), "sessions_test": len(test),
                    "curves": {k: np.asarray(v).tolist() for k, v in e.items() if k.startswith(("ctr", "last"))},
                    "sessions": {**e["sessions"], "train_loglik": f.conditional(train)[1]}})
        records.append(rec)
    records = sorted(records, key=lambda r: r["perplexity"])
    return records_frame(records) if as_frame else records
