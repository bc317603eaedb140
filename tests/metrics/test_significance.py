"""Comparing systems: paired tests against scipy, the sign-flip test exhaustive and sampled,
bootstrap interval coverage by simulation, corrections, randomised Tukey HSD, the compare API
and command, discriminative power, and what users of two runs experience."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.experiments.cli import main
from rpdi.metrics.significance import (FIELDS, adjust, all_signs, bootstrap_interval, bootstrap_test,
                                       compare_scores, discriminative_power, effect_size, paired_t,
                                       randomization, t_interval, tukey_hsd, wilcoxon)
from rpdi.simulate.stats import holm


def _pairs(P=12, T=20, seed=3):
    rng = np.random.default_rng(seed)
    shift = rng.normal(0, 0.3, size=(P, 1))
    return rng.normal(shift, 1.0, size=(P, T))


# -- paired tests against scipy -------------------------------------------------------------

def test_t_test_equals_scipy():
    x, y = np.random.default_rng(4).random((2, 12, 20))
    x[:6] += 0.3
    d = x - y
    t, p = paired_t(d)
    ref = stats.ttest_rel(x, y, axis=-1)
    np.testing.assert_array_equal(t, ref.statistic)  # exactly
    np.testing.assert_array_equal(p, ref.pvalue)
    lo, hi = t_interval(d, 0.9)
    ci = ref.confidence_interval(0.9)
    np.testing.assert_allclose(lo, ci.low, rtol=1e-12)
    np.testing.assert_allclose(hi, ci.high, rtol=1e-12)
    assert paired_t(np.full((1, 5), 0.2))[1][0] == 0  # the same gain on every topic

def test_wilcoxon_equals_scipy_and_the_exhaustive_signed_rank_distribution():
    rough = np.round(_pairs(P=40, T=30, seed=5), 1)  # zeros and ties, as P@10 or RR give
    rough[0] = 0.0
    for rows in (_pairs(T=11), _pairs(T=60), rough):
        W, p = wilcoxon(rows)
        for row, w, pv in zip(rows, W, p):
            if not row.any():  # no difference at all: scipy gives NaN, rpdi p = 1
                assert (w, pv) == (0.0, 1.0)
                continue
            ref = stats.wilcoxon(row)
            assert (w, pv) == (ref.statistic, ref.pvalue)
    d = _pairs(T=11)
    # an independent route: all 2^T sign flips of the signed ranks give the exact distribution
    ranks = stats.rankdata(np.abs(d), axis=-1) * np.sign(d)
    _, p_flip = randomization(ranks, 1, np.random.default_rng(0), exhaustive=True)
    exact = [stats.wilcoxon(row, method="exact").pvalue for row in d]
    np.testing.assert_allclose(p_flip, exact, rtol=1e-12)


def test_no_difference_at_all_is_p_one():
    d = np.zeros((1, 8))
    assert paired_t(d)[1][0] == 1 and wilcoxon(d)[1][0] == 1
    assert randomization(d, 100, np.random.default_rng(0))[1][0] == 1


# -- the sign-flip test: exhaustive and sampled ----------------------------------------------

def test_exhaustive_sign_flips_equal_scipy_permutation_test():
    d = _pairs(P=6, T=10)
    _, p = randomization(d, 2 ** 10, np.random.default_rng(0))  # 2^T <= resamples: all flips
    for row, pv in zip(d, p):
        ref = stats.permutation_test((row, np.zeros_like(row)), lambda x, y, axis: np.mean(x - y, axis=axis),
                                     permutation_type="samples", vectorized=True, n_resamples=np.inf)
        assert pv == pytest.approx(ref.pvalue, rel=1e-12)
    # by hand: every difference positive, so only the identity and its negation are as extreme
    assert randomization(np.full((1, 10), 0.1), 2 ** 10, None)[1][0] == 2 / 2 ** 10
    assert all_signs(10).shape == (1024, 10) and len({tuple(r) for r in all_signs(10)}) == 1024


def test_sampled_sign_flips_converge_to_the_exhaustive_p():
    d = _pairs(P=10, T=13)
    _, exact = randomization(d, 1, None, exhaustive=True)
    B = 20_000
    _, sampled = randomization(d, B, np.random.default_rng(7), exhaustive=False)
    se = np.sqrt(exact * (1 - exact) / B) + 1 / B
    z = (sampled - exact) / se
    assert np.abs(z).max() < 4, z
    assert (sampled > 0).all()  # (1 + hits) / (1 + B): never 0


class _Recording:
    """A generator that keeps the arrays ``integers`` gives (the sampled test's sign bits)."""

    def __init__(self, seed):
        self.rng, self.drawn = np.random.default_rng(seed), []

    def integers(self, *args, **kwargs):
        self.drawn.append(self.rng.integers(*args, **kwargs))
        return self.drawn[-1]


def _extreme(signs, d) -> bool:
    """|sum s_t d_t| >= |sum d_t|, in integers."""
    return abs(sum(s * x for s, x in zip(signs, d))) >= abs(sum(d))


def test_sampled_p_is_one_plus_hits_over_one_plus_resamples():
    """Phipson & Smyth (2010): over B random sign vectors p = (1 + hits) / (1 + B), never 0. Two
    runs that differ on every topic in the same direction: only the identity and its negation
    are as extreme, which B draws of 2^30 vectors never meet, so p is exactly 1 / (1 + B)."""
    d = np.arange(1.0, 31.0)[None, :] / 100  # T = 30: sampled for any B < 2^30
    for B in (1, 9, 99, 999):
        _, p = randomization(d, B, np.random.default_rng(B))
        assert p[0] == 1 / (1 + B), (B, p)
    X = np.vstack([np.zeros(25), np.linspace(0.1, 0.9, 25)])  # run b better on each of 25 topics
    rec, = compare_scores(X, ["a", "b"], "AP", test="randomization", resamples=99, seed=1)
    assert rec["p"] == rec["p_adjusted"] == 1 / 100 and rec["significant"]


def test_sign_flip_counts_against_brute_force():
    """Integer differences with ties: the exhaustive p is the share of all 2^T sign vectors as
    extreme (enumerated here with itertools), and the sampled p counts exactly the drawn vectors
    that are, plus one, over B + 1."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        T = int(rng.integers(2, 9))
        d = rng.integers(-3, 4, T).astype(float)
        every = list(itertools.product([1, -1], repeat=T))
        _, p = randomization(d[None, :], 2 ** T, None)
        assert p[0] == sum(_extreme(s, d) for s in every) / 2 ** T, d
        B = int(rng.integers(1, 60))
        recording = _Recording(int(rng.integers(2 ** 32)))
        _, p = randomization(d[None, :], B, recording, exhaustive=False)
        bits, = recording.drawn
        hits = sum(_extreme([1 - 2 * int(b) for b in row], d) for row in bits)
        assert bits.shape == (B, T) and p[0] == (1 + hits) / (1 + B), (d, B, hits, p)


# -- bootstrap: coverage by simulation, agreement with scipy ---------------------------------

@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_interval_covers_the_true_mean_95_percent(method):
    rng = np.random.default_rng(11)
    n_sets, T, mu = 1000, 30, 0.2
    d = mu + rng.gamma(2.0, 0.5, size=(n_sets, T)) - 1.0  # skewed, mean mu
    lo, hi = bootstrap_interval(d, 2000, np.random.default_rng(12), 0.95, method)
    covered = ((lo <= mu) & (mu <= hi)).mean()
    se = np.sqrt(0.95 * 0.05 / n_sets)
    assert abs(covered - 0.95) < 3.5 * se, covered
    # and the interval is not trivially wide: about the t-interval's width
    tlo, thi = t_interval(d)
    assert 0.85 < np.median((hi - lo) / (thi - tlo)) < 1.1


def test_bca_interval_agrees_with_scipy():
    d = np.random.default_rng(5).exponential(1.0, size=(1, 40))
    lo, hi = bootstrap_interval(d, 20_000, np.random.default_rng(6), 0.95, "bca")
    ref = stats.bootstrap((d[0],), np.mean, method="BCa", n_resamples=20_000, random_state=1).confidence_interval
    width = ref.high - ref.low
    assert abs(lo[0] - ref.low) < 0.05 * width and abs(hi[0] - ref.high) < 0.05 * width


def test_bootstrap_test_is_calibrated_under_the_null():
    rng = np.random.default_rng(8)
    d = rng.normal(0, 1, size=(400, 25))
    _, p = bootstrap_test(d, 1000, np.random.default_rng(9))
    rejected = (p <= 0.05).mean()
    assert abs(rejected - 0.05) < 3.5 * np.sqrt(0.05 * 0.95 / 400), rejected
    _, p_t = paired_t(d)
    assert np.corrcoef(p, p_t)[0, 1] > 0.95


# -- corrections, Tukey HSD, effect size -----------------------------------------------------

def test_holm_and_bonferroni():
    p = np.random.default_rng(2).uniform(0, 0.05, size=30)
    for alpha in (0.01, 0.05):
        np.testing.assert_array_equal(adjust(p, "holm") <= alpha, holm(p, alpha))
    np.testing.assert_allclose(adjust(np.array([0.01, 0.3, 0.02]), "bonferroni"), [0.03, 0.9, 0.06])
    assert adjust(np.array([0.01, 0.04, 0.03]), "holm").tolist() == pytest.approx([0.03, 0.06, 0.06])


def test_tukey_hsd_with_two_runs_is_the_sign_flip_test():
    rng = np.random.default_rng(1)
    X = rng.random((2, 12))
    X[1] += 0.15
    _, exact = randomization(X[1:] - X[:1], 1, None, exhaustive=True)
    B = 20_000
    p = tukey_hsd(X, [(0, 1)], B, np.random.default_rng(3))
    assert abs(p[0] - exact[0]) < 4 * np.sqrt(exact[0] * (1 - exact[0]) / B) + 2 / B


def test_tukey_hsd_is_more_conservative_than_unadjusted_tests():
    rng = np.random.default_rng(4)
    X = rng.random((6, 30))
    X[5] += 0.25
    recs = compare_scores(X, list("abcdef"), "m", correction="tukey", resamples=3000)
    raw = compare_scores(X, list("abcdef"), "m", correction="none", resamples=3000)
    assert all(r["p_adjusted"] >= q["p"] - 1e-12 for r, q in zip(recs, raw))
    assert all(r["significant"] for r in recs if r["run_b"] == "f")  # the clearly better run stays


def test_effect_size_by_hand():
    assert effect_size(np.array([[1.0, 2.0, 3.0]]))[0] == 2.0  # mean 2, sd 1


def test_records_and_baseline():
    X = np.array([[0.1, 0.2, 0.3, 0.4], [0.2, 0.2, 0.5, 0.4], [0.0, 0.1, 0.2, 0.2]])
    recs = compare_scores(X, ["x", "y", "z"], "AP", baseline="y", test="t")
    assert [(r["run_a"], r["run_b"]) for r in recs] == [("y", "x"), ("y", "z")]
    assert all(tuple(r) == FIELDS for r in recs)
    assert recs[0]["diff"] == pytest.approx(X[0].mean() - X[1].mean())
    assert recs[0]["p"] == stats.ttest_rel(X[0], X[1]).pvalue


# -- compare on the bundled CAsT runs, and the command ---------------------------------------

def test_compare_on_cast_matches_evaluate_and_scipy():
    import rpdi

    runs = cast2021_runs()[:2]
    recs = rpdi.compare(CAST2021_QRELS, runs, ["nDCG@10"], test="t")
    per = rpdi.evaluate(CAST2021_QRELS, runs, ["nDCG@10"], per_topic=True)
    a, b = ([r["value"] for r in per if r["run"] == name and r["topic"] != "all"]
            for name in (recs[0]["run_a"], recs[0]["run_b"]))
    assert recs[0]["mean_a"] == pytest.approx(np.mean(a), abs=1e-12)
    assert recs[0]["p"] == stats.ttest_rel(b, a).pvalue
    assert recs[0]["topics"] == len(a)
    df = rpdi.compare(CAST2021_QRELS, runs, ["RR"], resamples=500, as_frame=True)
    assert list(df.columns) == list(FIELDS) + ["method"] and len(df) == 1 and df["method"][0] == "closed_form"


def test_compare_command_table_json_and_power(tmp_path, capsys):
    runs = cast2021_runs()[2:]  # org_manual_ance, org_manual_ance_bert, org_manual_bm25
    base = ["compare", CAST2021_QRELS, *runs, "-m", "nDCG@10", "-m", "RR", "--resamples", "300"]
    assert main(base + ["--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert len(recs) == 2 * 3 and set(recs[0]) == set(FIELDS) | {"method"}
    assert main(base + ["--baseline", "org_manual_bm25", "--plots", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    line = {name: next(x for x in table.splitlines() if f" {name} " in x or x.endswith(f" {name}"))
            for name in ("org_manual_ance", "org_manual_bm25")}
    assert "†" in line["org_manual_ance"] and "(baseline)" in line["org_manual_bm25"]
    assert "†" not in line["org_manual_bm25"] and "†: significantly better than the baseline" in table
    assert (tmp_path / "forest.png").read_bytes()[:4] == b"\x89PNG"
    assert main(base + ["--discriminative-power", "--format", "json", "--plots", str(tmp_path)]) == 0
    power = json.loads(capsys.readouterr().out)
    for p in power:
        sig = [r["p"] for r in recs if r["measure"] == p["measure"]]
        assert p["pairs"] == 3 and p["significant"] == sum(x <= 0.05 for x in p["asl"])
        assert sorted(sig) == p["asl"]
    assert (tmp_path / "asl.png").exists()


@pytest.mark.parametrize("extra, words", [
    (["--baseline", "nope"], "baseline 'nope'"),
    (["--alpha", "1.5"], "alpha"),
    (["-m", "RBO"], "RBO"),
    (["--users", "-1"], "--users"),
    (["-m", "XYZ@3"], "XYZ"),
    (["--per-topic"], "--per-topic"),
    (["--plots", "/proc/version/x"], "--plots"),
])
def test_compare_bad_input_exits_2_with_one_line(extra, words, capsys):
    code = main(["compare", CAST2021_QRELS, *cast2021_runs()[:2], "-m", "RR", *extra])
    err = capsys.readouterr()
    assert code == 2 and err.out == "" and len(err.err.strip().splitlines()) == 1 and words in err.err


def test_compare_one_run_exits_2(capsys):
    assert main(["compare", CAST2021_QRELS, cast2021_runs()[0], "-m", "RR"]) == 2
    assert "two or more runs" in capsys.readouterr().err


def test_discriminative_power_counts():
    out = discriminative_power([{"measure": "m", "p": p} for p in (0.001, 0.04, 0.05, 0.2)], 0.05)
    assert out[0]["significant"] == 3 and out[0]["discriminative_power"] == 0.75


def test_experiment_compare_section(tmp_path):
    from rpdi.experiments.experiment import run_experiment

    runs = cast2021_runs()[:2]
    config = tmp_path / "c.toml"
    config.write_text(f'[experiment]\nname = "c"\nusers = 0\n[data]\nqrels = "{CAST2021_QRELS}"\n'
                      f'runs = {json.dumps(runs)}\n[[measures]]\nname = "RR"\n'
                      f'[compare]\nresamples = 500\ntest = "t"\nusers = 0\n')
    run_experiment(str(config), out=str(tmp_path / "out"))
    pairs = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert len(pairs) == 1
    import rpdi

    api = rpdi.compare(CAST2021_QRELS, runs, ["RR"], test="t", users=0)
    assert len(pairs) == len(api)
    for got, want in zip(pairs, api):  # the same records as the API: numbers to 1e-9, the rest exactly
        assert got.keys() == want.keys()
        for key, value in want.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, rel=1e-9), key
            else:
                assert got[key] == value, key
    assert "## Comparing systems" in (tmp_path / "out" / "summary.md").read_text()
    assert (tmp_path / "out" / "plots" / "asl.png").exists()


def test_experiment_compare_bad_baseline(tmp_path):
    from rpdi.experiments.experiment import run_experiment
    from rpdi.metrics.errors import InputError

    config = tmp_path / "c.toml"
    config.write_text(f'[experiment]\nname = "c"\nusers = 0\n[data]\nqrels = "{CAST2021_QRELS}"\n'
                      f'runs = {json.dumps(cast2021_runs()[:2])}\n[[measures]]\nname = "RR"\n'
                      f'[compare]\nbaseline = "nope"\n')
    with pytest.raises(InputError, match="compare.baseline"):
        run_experiment(str(config), out=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


# -- what users experience --------------------------------------------------------------------

def _cast_rows(measure, runs=2):
    from rpdi.metrics import build_rankings, load_qrels, load_runs
    from rpdi.metrics.view import View
    from rpdi.simulate.ranking import rankings_for
    from rpdi.usermodels import model_for

    rankings = build_rankings(load_qrels(CAST2021_QRELS), load_runs(cast2021_runs()[:runs]))
    model = model_for(measure)
    return model, rankings, rankings_for(model, View(rankings, model.k), "unknown")


@pytest.mark.parametrize("measure", ["RBP(p=0.8)", "AP", "ERR@20", "P@10", "RR", "DCG@10", "INST(T=2)"])
def test_exact_outcome_distribution_has_the_exact_evaluators_mean(measure):
    """The per-user outcome distribution (atoms) and the exact evaluator (moments) are two
    propagations; the distribution's mean must be the evaluator's expectation of the outcome."""
    from rpdi.simulate.experience import outcome_distributions
    from rpdi.usermodels import exact

    model, rankings, rows = _cast_rows(measure)
    keys = [(s, t) for s in range(2) for t in range(0, len(rankings.topics), 8)]
    dists = outcome_distributions(model, [rows[k] for k in keys])
    assert dists is not None
    ex = exact(model, rankings, "unknown")
    which = "total" if model.aggregation == "total" else "mean_rate"
    expected = ex.values[which]
    if model.normalised:
        expected = expected * ex.ideal[None, :]
    for (s, t), (v, m) in zip(keys, dists):
        assert m.sum() == pytest.approx(1.0, abs=1e-9)
        assert (v * m).sum() == pytest.approx(expected[s, t], abs=1e-9)


def test_users_exact_against_simulated():
    from rpdi.simulate.experience import outcome_distributions, sampled_distributions, superiority
    from rpdi.metrics.seeds import stream

    model, rankings, rows = _cast_rows("RBP(p=0.8)")
    n = 20_000
    topics = (0, 5, 9)
    sampled = sampled_distributions(model, [rows[s, t] for t in topics for s in (0, 1)], n,
                                    [stream(1, run, str(t)) for t in topics for run in ("a", "b")])
    for k, t in enumerate(topics):
        a, b = outcome_distributions(model, [rows[0, t], rows[1, t]])
        exact_pi = superiority(a, b)
        sim_pi = superiority(sampled[2 * k], sampled[2 * k + 1])
        assert abs(sim_pi - exact_pi) < 4 * np.sqrt(0.5 / n), (t, sim_pi, exact_pi)


def test_users_ties_half_and_same_mean_different_experience():
    from rpdi.simulate.experience import superiority

    one = (np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    assert superiority(one, one) == 0.5
    # the same mean outcome (0.5), but every user of B gets 0.5 while A's users get 0 or 1
    assert superiority(one, (np.array([0.5]), np.array([1.0]))) == 0.5
    # B: 0.4 for everyone (mean lower than A's 0.5) beats half of A's users
    assert superiority(one, (np.array([0.4]), np.array([1.0]))) == 0.5
    assert superiority((np.array([0.4]), np.array([1.0])), (np.array([0.0, 1.0]), np.array([0.9, 0.1]))) == 0.1


def test_compare_with_users_on_cast():
    import rpdi

    recs = rpdi.compare(CAST2021_QRELS, cast2021_runs()[:2], ["RR", "RBP(p=0.8)"], users=0, resamples=500)
    for r in recs:
        assert r["user_method"] == "exact" and r["user_outcome"] == "G/N"
        assert r["user_ci_low"] <= r["user_b_better"] <= r["user_ci_high"]
    flipped = rpdi.compare(CAST2021_QRELS, cast2021_runs()[1::-1], ["RR"], users=0, resamples=500)
    assert flipped[0]["user_b_better"] == pytest.approx(1 - recs[0]["user_b_better"], abs=1e-12)


def test_users_of_a_deterministic_model_count_wins_and_ties():
    """RR's user stops at the first relevant document: the outcome is the topic's RR itself, so
    P(B user better) is (topics B wins + half the ties) / topics, from rpdi.evaluate's values."""
    import rpdi

    runs = cast2021_runs()[2:4]
    rec, = rpdi.compare(CAST2021_QRELS, runs, ["RR"], users=0, resamples=100)
    per = rpdi.evaluate(CAST2021_QRELS, runs, ["RR"], per_topic=True)
    a, b = (np.array([r["value"] for r in per if r["run"] == rec[k] and r["topic"] != "all"])
            for k in ("run_a", "run_b"))
    assert rec["user_b_better"] == pytest.approx(((b > a).sum() + 0.5 * (b == a).sum()) / a.size, abs=1e-12)


def test_users_of_a_population_model_are_simulated():
    """BetaRBP draws each user's persistence from a Beta distribution: no finite outcome
    distribution, so users are simulated (and without users it says so)."""
    from rpdi.metrics.significance import t_interval
    from rpdi.simulate.experience import user_preference

    model, rankings, rows = _cast_rows("BetaRBP")
    interval = lambda pi: t_interval(pi)  # noqa: E731
    args = (model, rows, rankings.runs, rankings.topics, [0, 1, 2], [(0, 1)])
    rec, = user_preference(*args, 2000, 0, interval)
    assert rec["user_method"] == "simulated" and 0 <= rec["user_b_better"] <= 1
    again, = user_preference(*args, 2000, 0, interval)
    assert again == rec  # seeded streams: reproducible
    with pytest.raises(ValueError, match="not finite"):
        user_preference(*args, 0, 0, interval)
