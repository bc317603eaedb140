"""Do the tests between fitted click models (rpdi.usermodels.clickcompare) reject at the rates
they state? Logs are simulated from a known click model, the models are fitted and compared as
``rpdi fit`` does, over many logs with fixed seeds.

Configurations:

  ctr      truth RCTR, click-through (0.5, 0.35, 0.25) at ranks 1-3; the wrong model GCTR (one
           click-through) against the right one, RCTR; 2000 training sessions (the fitted models
           are near their limits) and 135 test sessions. The rate at which the held-out test
           must reject GCTR is known in closed form: per session, the log-likelihood difference
           of the two models (at their limits: RCTR the truth, GCTR the mean click-through g)
           has mean delta = sum_r KL(c_r || g) and variance sigma^2 = sum_r c_r (1 - c_r)
           (logit c_r - logit g)^2, so a two-sided level-alpha test on n sessions rejects with
           probability Phi(m - z) + Phi(-m - z), m = sqrt(n) delta / sigma, z = z_(1 - alpha/2).
           No rate is predicted for Vuong's test here: GCTR is nested in RCTR, and for nested
           models Vuong's z is not normal (its numerator is then half a chi-square, its
           denominator shrinks with it; Vuong 1989 treats nested models apart).
  nested   truth GCTR, click-through 0.3 at every rank; GCTR (right) against RCTR, which nests it
           (also right, with two parameters more). Neither test may call GCTR worse more often
           than alpha.
  browsing (benchmark only: slower) truth an RBP user, p = 0.6, attractiveness per document;
           RBP (right) against RR (wrong: stops at the first click), INSQ (wrong) and RBP2 (nests
           RBP). Rates printed; RBP must not be called worse more often than alpha.

    python tests/benchmarks/click_test_calibration.py [--logs 1000] [--only ctr,nested,browsing]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import binomtest, norm

from rpdi.metrics.clicklogs import ClickLog
from rpdi.metrics.seeds import stream
from rpdi.usermodels.clickcompare import compare
from rpdi.usermodels.clickeval import fit_and_evaluate

ALPHA = 0.05
CTR = (0.5, 0.35, 0.25)
CONFIGS = {  # truth, right model, wrong models, training and test sessions
    "ctr": (("ctr", CTR), "RCTR", ["GCTR"], 2000, 135),  # held-out tests near their limit
    "nested": (("ctr", (0.3, 0.3, 0.3)), "GCTR", ["RCTR"], 1000, 300),
    "browsing": (("rbp", 0.6), "RBP", ["RR", "INSQ", "RBP2"], 1500, 500),
}
TESTS = (("loglik", "loglik_p"), ("perplexity", "perplexity_p"), ("train_loglik", "vuong_p"))


def simulate(truth, sessions: int, rng: np.random.Generator) -> ClickLog:
    """``sessions`` sessions of the truth: ("ctr", rates) clicks independent with those rates per
    rank (one document per rank); ("rbp", p) an RBP user (reads on with p) on 4 of 8 documents
    of one query, each clicked when read with its attractiveness (fixed per seed)."""
    kind, value = truth
    if kind == "ctr":
        N = len(value)
        docs = np.broadcast_to(np.arange(N), (sessions, N))
        clicks = rng.random((sessions, N)) < np.asarray(value)
        names = np.array([f"d{i}" for i in range(N)], object)
    else:
        N, attract = 4, np.linspace(0.15, 0.75, 8)
        docs = np.argsort(rng.random((sessions, 8)), 1)[:, :N]
        read = np.cumprod(np.concatenate([np.ones((sessions, 1)), rng.random((sessions, N - 1)) < value], 1), 1)
        clicks = (read > 0) & (rng.random((sessions, N)) < attract[docs])
        names = np.array([f"d{i}" for i in range(8)], object)
    return ClickLog(np.zeros(sessions, int), np.asarray(docs), clicks, np.array(["q"], object), names)


def outcomes(config: str, log_index: int, seed: int = 0, resamples: int = 500) -> dict:
    """One simulated log of ``config``: per wrong model and test, +1 when the test calls the right
    model significantly better, -1 when it calls it significantly worse, 0 otherwise."""
    truth, right, wrong, n_train, n_test = CONFIGS[config]
    rng = np.random.default_rng(stream(seed, "click test calibration", config, str(log_index)))
    train, test = simulate(truth, n_train, rng), simulate(truth, n_test, rng)
    records = fit_and_evaluate(train, test, [right, *wrong], seed=log_index, stderr=False, alpha=ALPHA)
    pairs = compare(records, seed=log_index, resamples=resamples, alpha=ALPHA)
    out = {}
    for p in pairs:
        if right not in (p["model_a"], p["model_b"]):
            continue
        other = p["model_b"] if p["model_a"] == right else p["model_a"]
        a_is_right = p["model_a"] == right
        for c, p_key in TESTS:
            diff = p[f"{c}_diff"] if a_is_right else -p[f"{c}_diff"]  # right - other
            better = diff > 0 if c != "perplexity" else diff < 0
            out[other, c] = 0 if p[p_key] > ALPHA else (1 if better else -1)
    return out


def predicted_power(config: str = "ctr") -> float:
    """The closed-form rate at which the held-out test rejects GCTR against RCTR under the ctr
    truth (module docstring)."""
    (_, rates), _, _, _, n = CONFIGS[config]
    c = np.asarray(rates)
    g = c.mean()
    delta = float(np.sum(c * np.log(c / g) + (1 - c) * np.log((1 - c) / (1 - g))))
    sigma = float(np.sqrt(np.sum(c * (1 - c) * (np.log(c / (1 - c)) - np.log(g / (1 - g))) ** 2)))
    z, m = norm.ppf(1 - ALPHA / 2), np.sqrt(n) * delta / sigma
    return float(norm.cdf(m - z) + norm.cdf(-m - z))


def rates(config: str, logs: int, seed: int = 0) -> dict:
    """Per (wrong model, test): the share of logs in which the right model is called better, worse."""
    results = [outcomes(config, i, seed) for i in range(logs)]
    return {k: (sum(r[k] == 1 for r in results), sum(r[k] == -1 for r in results)) for k in results[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default=",".join(CONFIGS))
    args = ap.parse_args()
    for config in args.only.split(","):
        expected = {"loglik": predicted_power(config)} if config == "ctr" else {}
        t0 = time.perf_counter()
        counts = rates(config, args.logs, args.seed)
        print(f"{config}: {args.logs} logs, {time.perf_counter() - t0:.0f} s; truth's model {CONFIGS[config][1]}")
        for (other, test), (good, bad) in counts.items():
            lo, hi = binomtest(good, args.logs).proportion_ci(0.95)
            line = (f"  vs {other:5s} {test:13s} right called better {good / args.logs:.3f} [{lo:.3f}, {hi:.3f}]"
                    f"  right called worse {bad / args.logs:.3f} (at most alpha = {ALPHA})")
            if test in expected:
                line += f"  predicted rejection rate {expected[test]:.3f}"
            print(line)


if __name__ == "__main__":
    main()
