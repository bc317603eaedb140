"""The tests between fitted click models: their statistics by definition, their rates on logs
simulated from a known model (a small version of tests/benchmarks/click_test_calibration.py),
and the calibration intervals."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from rpdi.metrics.clicklogs import ClickLog
from rpdi.usermodels.clickcompare import compare
from rpdi.usermodels.clickeval import evaluate
from rpdi.usermodels.clickfit import fit


def _benchmark():
    path = Path(__file__).parents[1] / "benchmarks" / "click_test_calibration.py"
    spec = importlib.util.spec_from_file_location("click_test_calibration", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(name, ll, bits, train):
    return {"model": name, "loglik": float(ll.mean()), "perplexity": float((2.0 ** -bits.mean(0)).mean()),
            "sessions": {"loglik": ll, "bits": bits, "train_loglik": train}}


def test_vuong_and_the_bootstrap_by_their_definitions():
    rng = np.random.default_rng(5)
    S, T, N = 300, 400, 4
    recs = [_record(f"m{i}", rng.normal(-3 + 0.02 * i, 1, S), np.log2(rng.uniform(0.2, 0.9, (S, N))),
                    rng.normal(-3 + 0.05 * i, 1, T)) for i in range(3)]
    pairs = compare(recs, seed=3, resamples=4000)
    assert [(p["model_a"], p["model_b"]) for p in pairs] == [("m0", "m1"), ("m0", "m2"), ("m1", "m2")]
    for p in pairs:
        a, b = (next(r for r in recs if r["model"] == p[k]) for k in ("model_a", "model_b"))
        d = a["sessions"]["train_loglik"] - b["sessions"]["train_loglik"]
        z = d.sum() / np.sqrt(sum((x - d.mean()) ** 2 for x in d) / T) / np.sqrt(T)  # Vuong 1989, Eq. 5.6
        assert p["vuong_z"] == pytest.approx(z) and p["vuong_p"] == pytest.approx(2 * norm.sf(abs(z)))
        dh = a["sessions"]["loglik"] - b["sessions"]["loglik"]
        assert p["loglik_diff"] == pytest.approx(dh.mean())
        se = dh.std(ddof=1) / np.sqrt(S)  # the bootstrap interval is near the normal one for 300 sessions
        assert p["loglik_low"] == pytest.approx(dh.mean() - 1.96 * se, abs=0.15 * se)
        assert p["loglik_high"] == pytest.approx(dh.mean() + 1.96 * se, abs=0.15 * se)
        assert p["loglik_p"] == pytest.approx(2 * norm.sf(abs(dh.mean()) / se), abs=0.02)
        for c, p_key in (("loglik", "loglik_p"), ("perplexity", "perplexity_p"), ("train_loglik", "vuong_p")):
            assert (b["model"] in a[f"{c}_not_told_apart"]) == (p[p_key] > 0.05) == (a["model"] in b[f"{c}_not_told_apart"])
    # the same seed gives the same resamples; the gap to the best is >= 0 and the best tied with itself
    assert compare([dict(r) for r in recs], seed=3, resamples=4000) == pairs
    best = max(recs, key=lambda r: r["loglik"])
    assert best["loglik_tied_best"] and best["loglik_vs_best_p_adj"] is None
    assert all(r["loglik_vs_best"] >= 0 and r["perplexity_vs_best"] >= 0 for r in recs)


def test_the_same_model_twice_is_no_difference():
    rng = np.random.default_rng(1)
    ll, bits, train = rng.normal(-3, 1, 50), np.log2(rng.uniform(0.2, 0.9, (50, 3))), rng.normal(-3, 1, 80)
    recs = [_record("RR", ll, bits, train), _record("CM", ll, bits, train + 1e-13)]
    (p,) = compare(recs, resamples=200)
    assert p["vuong_z"] is None and p["vuong_p"] == 1.0 and p["loglik_p"] == 1.0
    assert all(r[f"{c}_tied_best"] for r in recs for c in ("loglik", "perplexity", "train_loglik"))


def test_held_out_test_rejects_the_wrong_model_at_the_predicted_rate_and_the_right_one_rarely():
    """Done-when test of issue 27, small: 200 logs per configuration (the benchmark runs 1000)."""
    bench = _benchmark()
    logs = 200
    counts = bench.rates("ctr", logs)
    better, worse = counts["GCTR", "loglik"]
    expected = bench.predicted_power("ctr")  # 0.589
    assert binomtest(better, logs, expected).pvalue > 0.001, (better / logs, expected)
    assert worse <= binomtest(0, logs).proportion_ci(0.999).high * logs
    nested = bench.rates("nested", logs)  # GCTR true; RCTR nests it
    for test in ("loglik", "perplexity", "train_loglik"):
        calls_right_worse = nested["RCTR", test][1]
        assert binomtest(calls_right_worse, logs, bench.ALPHA, alternative="greater").pvalue > 0.001


def test_calibration_intervals_cover_a_true_model():
    """Logs from a GCTR user: the fitted GCTR's residual intervals of click-through and last-click
    share hold 0 at about 1 - alpha of the ranks; RR's (cascade) miss at every rank past 1."""
    rng = np.random.default_rng(11)
    S, N = 3000, 5
    docs = np.broadcast_to(np.arange(N), (S, N))
    names = np.array([f"d{i}" for i in range(N)], object)
    log = ClickLog(np.zeros(S, int), docs, rng.random((S, N)) < 0.3, np.array(["q"], object), names)
    test = ClickLog(np.zeros(S, int), docs, rng.random((S, N)) < 0.3, np.array(["q"], object), names)
    e = evaluate(fit("GCTR", log), test, np.random.default_rng(2), replicas=20)
    holds = [lo <= 0 <= hi for c in ("ctr", "last") for lo, hi in zip(e[f"{c}_residual_low"], e[f"{c}_residual_high"])]
    assert sum(holds) >= len(holds) - 2
    assert np.allclose(e["ctr_observed"], test.clicks.mean(0))
    assert e["last_observed"].sum() == pytest.approx(1) and e["last_predicted"].sum() == pytest.approx(1)
    rr = evaluate(fit("RR", log), test, np.random.default_rng(2))
    assert all(lo > 0 for lo in rr["ctr_residual_low"][1:])  # the cascade predicts too few clicks below rank 1
