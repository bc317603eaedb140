"""Fitted click models compared by tests: which of them the click log can tell apart.

Three criteria, each with a paired test over sessions (the sessions are the independent units):

- ``loglik``, held out: d_s = l_a(s) - l_b(s), the difference of the log-likelihoods model a and
  model b give test session s. Its mean, with a percentile bootstrap interval over the test
  sessions, and the p-value of "no difference" from the bootstrap distribution moved to the null,
  p = (1 + #{b: |D*_b - D| >= |D|}) / (B + 1). Every model is resampled with the same B
  resamples, drawn from ``rpdi.metrics.seeds.stream(seed, "rpdi fit", "bootstrap")``.
- ``perplexity``, held out: the difference of the perplexities (mean over ranks r of
  2^-(mean_s log2 P(C_r = c_sr))), a smooth function of per-rank means over sessions, from the
  same resamples.
- ``train_loglik``: Vuong's (1989) test of non-nested models on the training sessions,
  z = sum_s d_s / (sqrt(n) omega) with omega^2 the variance of d_s over the n training sessions;
  under H0 (a and b equally close to the truth in Kullback-Leibler divergence) z ~ N(0, 1). The
  statistic is not corrected for the number of parameters (the held-out criteria are what tell
  over-fitting). Where one model nests the other, z is not normal (Vuong treats nested models
  apart): with the smaller model true it rejects less often than alpha, and with the larger true
  more often than a normal z would predict (tests/benchmarks/click_test_calibration.py). The
  interval is mean(d) +- z_(1 - alpha/2) omega / sqrt(n).

The best model under a criterion is the one with the best point estimate; a model is tied with it
when the Holm-adjusted p (over the M - 1 comparisons with the best) exceeds ``alpha``. The best
is chosen on the same data, which favours rejection a little; Holm's correction works against it.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> S, N = 400, 3
>>> def record(name, q):   # a model predicting click probability q at every rank, on clicks c
...     c = np.random.default_rng(1).random((S, N)) < 0.3
...     bits = np.where(c, np.log2(q), np.log2(1 - q))
...     ll = bits.sum(1) * np.log(2)
...     return {"model": name, "loglik": ll.mean(), "perplexity": 2 ** -bits.mean(),
...             "sessions": {"loglik": ll, "bits": bits, "train_loglik": ll}}
>>> recs = [record("right", 0.3), record("wrong", 0.5), record("close", 0.31)]
>>> pairs = compare(recs, resamples=500)
>>> [(r["model"], r["loglik_tied_best"]) for r in recs]
[('right', True), ('wrong', False), ('close', True)]
>>> pairs[0]["model_a"], pairs[0]["model_b"], pairs[0]["loglik_diff"] > 0, pairs[0]["vuong_p"] < 0.05
('right', 'wrong', True, True)
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from rpdi.metrics.seeds import stream
from rpdi.metrics.significance import adjust

CRITERIA = ("loglik", "perplexity", "train_loglik")
HIGHER_IS_BETTER = {"loglik": True, "perplexity": False, "train_loglik": True}
CHUNK = 100  # bootstrap resamples drawn at once
SAME = 1e-9  # per-session log-likelihoods closer than this are the same


def compare(records: list[dict], *, seed: int = 0, resamples: int = 2000, alpha: float = 0.05) -> list[dict]:
    """Every pair of models (a before b in ``records``' order), with for each criterion the
    difference a - b (``loglik_diff``, ``perplexity_diff``, ``train_loglik_diff``), its
    ``1 - alpha`` interval (``_low``, ``_high``) and p-value (``_p``; ``vuong_z`` and
    ``vuong_p`` for the training log-likelihood). Sets on every record, per criterion,
    ``{c}_vs_best`` (its difference to the best, best - this for log-likelihoods, this - best for
    perplexity: >= 0), its interval, ``{c}_vs_best_p_adj`` (Holm; None for the best),
    ``{c}_tied_best`` (True for the best), ``{c}_not_told_apart`` (the models whose pair with
    this one has p > alpha, unadjusted) and ``train_loglik_vs_best_z``, Vuong's z of the best
    against this model (None for the best and for a model identical to it). The records need the per-session arrays of
    :func:`rpdi.usermodels.clickeval.fit_and_evaluate` under ``sessions``."""
    boot = _bootstrap(records, seed, resamples)
    point = {"loglik": np.array([r["loglik"] for r in records]),
             "perplexity": np.array([r["perplexity"] for r in records])}
    train = np.array([r["sessions"]["train_loglik"] for r in records])  # (M, S_train)
    M = len(records)

    def pair(i: int, j: int) -> dict:
        out = {"model_a": records[i]["model"], "model_b": records[j]["model"]}
        for c in ("loglik", "perplexity"):
            d, db = point[c][i] - point[c][j], boot[c][:, i] - boot[c][:, j]
            low, high = np.quantile(db, [alpha / 2, 1 - alpha / 2])
            p = (1 + np.count_nonzero(np.abs(db - d) >= abs(d))) / (len(db) + 1) if d != 0 else 1.0
            out.update({f"{c}_diff": float(d), f"{c}_low": float(low), f"{c}_high": float(high), f"{c}_p": float(p)})
        out.update(_vuong(train[i] - train[j], alpha))
        return out

    pairs = {(i, j): pair(i, j) for i in range(M) for j in range(i + 1, M)}
    for c, p_key in (("loglik", "loglik_p"), ("perplexity", "perplexity_p"), ("train_loglik", "vuong_p")):
        for i, r in enumerate(records):
            r[f"{c}_not_told_apart"] = [records[j]["model"] for j in range(M)
                                        if j != i and pairs[min(i, j), max(i, j)][p_key] > alpha]
    for c in CRITERIA:
        values = point[c] if c in point else train.mean(1)
        best = int(np.argmax(values) if HIGHER_IS_BETTER[c] else np.argmin(values))
        others = [i for i in range(M) if i != best]
        p_key = "vuong_p" if c == "train_loglik" else f"{c}_p"
        p_adj = adjust(np.array([pairs[min(i, best), max(i, best)][p_key] for i in others]), "holm")
        for i, r in enumerate(records):
            if i == best:
                r.update({f"{c}_vs_best": 0.0, f"{c}_vs_best_low": 0.0, f"{c}_vs_best_high": 0.0,
                          f"{c}_vs_best_p_adj": None, f"{c}_tied_best": True})
                if c == "train_loglik":
                    r["train_loglik_vs_best_z"] = None
                continue
            pr = pairs[min(i, best), max(i, best)]
            # pr holds (first - second); the gap to the best has the sign that makes it >= 0
            sign = (1 if i > best else -1) * (1 if HIGHER_IS_BETTER[c] else -1)
            low, high = sorted((sign * pr[f"{c}_low"], sign * pr[f"{c}_high"]))
            pa = float(p_adj[others.index(i)])
            r.update({f"{c}_vs_best": sign * pr[f"{c}_diff"], f"{c}_vs_best_low": low, f"{c}_vs_best_high": high,
                      f"{c}_vs_best_p_adj": pa, f"{c}_tied_best": bool(pa > alpha)})
            if c == "train_loglik":
                r["train_loglik_vs_best_z"] = None if pr["vuong_z"] is None else sign * pr["vuong_z"]
    return list(pairs.values())


def _bootstrap(records: list[dict], seed: int, resamples: int) -> dict[str, np.ndarray]:
    """Held-out log-likelihood and perplexity of every model (B, M) on ``resamples`` bootstrap
    resamples of the test sessions, the same resamples for every model."""
    ll = np.stack([r["sessions"]["loglik"] for r in records], 1)  # (S, M)
    bits = np.stack([r["sessions"]["bits"] for r in records], 1)  # (S, M, N)
    S, M, N = bits.shape
    rng = np.random.default_rng(stream(seed, "rpdi fit", "bootstrap"))
    out_ll, out_ppl = [], []
    for start in range(0, resamples, CHUNK):
        counts = rng.multinomial(S, np.full(S, 1.0 / S), size=min(CHUNK, resamples - start)).astype(float)
        out_ll.append(counts @ ll / S)
        per_rank = (counts @ bits.reshape(S, M * N) / S).reshape(-1, M, N)
        out_ppl.append((2.0 ** -per_rank).mean(2))
    return {"loglik": np.concatenate(out_ll), "perplexity": np.concatenate(out_ppl)}


def _vuong(d: np.ndarray, alpha: float) -> dict:
    """Vuong's z and two-sided p for per-session differences ``d`` (None and 1 when no session's
    log-likelihood differs by more than rounding: the same model by two code paths, RR and CM)."""
    n, mean, omega = len(d), float(d.mean()), float(d.std())
    if np.all(np.abs(d) <= SAME):
        return {"train_loglik_diff": mean, "train_loglik_low": mean, "train_loglik_high": mean,
                "vuong_z": None, "vuong_p": 1.0}
    z = mean * np.sqrt(n) / omega
    half = norm.ppf(1 - alpha / 2) * omega / np.sqrt(n)
    return {"train_loglik_diff": mean, "train_loglik_low": mean - half, "train_loglik_high": mean + half,
            "vuong_z": float(z), "vuong_p": float(2 * norm.sf(abs(z)))}
