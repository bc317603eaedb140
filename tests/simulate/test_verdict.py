"""The three-way verdict (simulate/verdict.py and the modules it rests on): each part has a test
that fails when it breaks.

- Holm's step-down against a plain re-implementation from its definition, and the verdict's use
  of it: a planted stochastic disagreement must be caught, a family of chance z-scores not;
- the declared closed-form/exact differences (TBG's random reading times, RBP's horizon),
  checked as formulas, and an undeclared one (an off-by-one closed form); slips in a helper or
  constant shared by closed form and model, caught by the plain rank-by-rank formulas;
- stream keying by topic: identical rankings of different topics draw different users, a
  shared stream is caught by the test of the mean over topics where the topics are alike and by
  the deterministic streams check everywhere;
- the variance check: exact per-user variances 4x too large are caught;
- the rare-event case of issue 11 (RBP(p=0.5), relevant only at rank 20) is not a false alarm;
- Bennett's bound itself: tests/simulate/test_stats.py;
- exit statuses of ``rpdi simulate``: 0 agree, 1 disagree (naming the cell), 2 bad input;
- the blind spots of issue 28: a model undefined everywhere, users sharing random draws (the
  dispersion test), slips in INSQ's and NERR11's continuation and ERR's default max_rel (their
  oracles), the confirmation drawing from the first stage's streams, and many marginal cells
  that disagree together.
Fixed seeds throughout.
"""

from __future__ import annotations

import numpy as np

from rpdi.experiments.cli import main as rpdi_main
from rpdi.experiments.synthetic import synthetic_collection
from rpdi.metrics.evaluate import rankings_from_grades, score
from rpdi.metrics.view import View
from rpdi.simulate import confirm, model_check, three_way
from rpdi.simulate.api import simulate
from rpdi.simulate.cells import Mean
from rpdi.simulate.exact_checks import closed_vs_exact
from rpdi.simulate.verdict import verdict
from rpdi.simulate.verdict_text import verdict_lines
from rpdi.metrics.seeds import stream
from rpdi.simulate.ranking import rankings_for
from rpdi.simulate.stats import holm
from rpdi.usermodels import exact, model_for


def test_holm_matches_its_definition(holm_by_definition):
    rng = np.random.default_rng(11)
    for _ in range(300):
        m = int(rng.integers(1, 12))
        p = rng.choice([rng.uniform(0, 0.02), rng.uniform(0, 1)], size=m).tolist()
        for alpha in (0.01, 0.05):
            assert np.flatnonzero(holm(p, alpha)).tolist() == sorted(holm_by_definition(p, alpha)), (p, alpha)
    # a case where step-down and Bonferroni differ: 0.012 > 0.05/3 but <= 0.05/2 after the first
    assert holm([0.012, 0.0001, 0.3], 0.05).tolist() == [True, True, False]


def _cells(zs):
    return [Mean(run="r", topic=str(i), measure="RBP(p=0.8)", engine="vector", estimate=0.5, exact=0.5, z=float(z),
                 users=1000) for i, z in enumerate(zs)]


def test_verdict_rejects_a_planted_disagreement_and_only_it():
    zs = np.random.default_rng(3).normal(size=200)
    calm = verdict(_cells(zs), 0.01, confirm=lambda c: 0.5)
    assert calm.status == 0 and not calm.failures
    zs[17] = 9.0  # one cell far off, confirmed on the independent stream
    v = verdict(_cells(zs), 0.01, confirm=lambda c: 1e-9 if c.topic == "17" else 0.5)
    assert v.status == 1 and [c.topic for c in v.failures] == ["17"]
    # screened but not confirmed: marginal, not a disagreement, and it says what would settle it
    v = verdict(_cells(zs), 0.01, confirm=lambda c: 0.3)
    assert v.status == 0 and [c.topic for c in v.marginal] == ["17"]
    assert "more users" in "\n".join(verdict_lines(v))


def test_many_marginal_cells_that_disagree_together_fail():
    """Twenty cells screened out, none confirmed one by one (p 0.02 each against Holm's 0.01/21):
    together their confirmations are far from chance (Fisher's combination), a failure; twenty
    marginal cells whose confirmations look like chance (p 0.5) leave the verdict at AGREE."""
    zs = np.random.default_rng(5).normal(size=200)
    zs[:20] = 6.0
    v = verdict(_cells(zs), 0.01, confirm=lambda c: 0.02)
    assert v.status == 1 and len(v.marginal) == 20 and [c.kind for c in v.failures] == ["jointly"], verdict_lines(v)
    assert "disagree together" in "\n".join(verdict_lines(v))
    v = verdict(_cells(zs), 0.01, confirm=lambda c: 0.5)
    assert v.status == 0 and len(v.marginal) == 20 and not v.failures


def _row(model, rankings, horizon=None):
    return rankings_for(model, View(rankings, model.k), "unknown", horizon)[0, 0]


def test_declared_differences_are_checked_not_exempted():
    grades = "$$---$----$-----$---"
    rankings = rankings_from_grades(grades)
    tbg = model_for("TBG")
    closed, e = score("TBG", grades), float(exact(tbg, rankings).value[0, 0])
    assert e - closed > 1e-4  # the random reading times give more than the closed form (Jensen) ...
    assert closed_vs_exact(tbg, closed, e, _row(tbg, rankings))[0]  # ... exactly the declared formula
    assert not closed_vs_exact(tbg, closed, e * 1.001, _row(tbg, rankings))[0]  # above closed, yet wrong
    assert not closed_vs_exact(tbg, closed, closed, _row(tbg, rankings))[0]
    model = model_for("RBP(p=0.99)")
    closed = score("RBP(p=0.99)", grades)
    e = float(exact(model, rankings, horizon=300).value[0, 0])  # users stop at rank 300
    assert abs(e - closed) > 1e-3  # the horizon's factor 1/(1 - p^H) is visible here ...
    assert closed_vs_exact(model, closed, e, _row(model, rankings, 300))[0]  # ... and declared
    assert not closed_vs_exact(model, closed, e * (1 + 1e-8), _row(model, rankings, 300))[0]
    # an undeclared difference: RBP's closed form with p^i for p^(i-1)
    p, b = 0.8, np.array([1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0], float)
    off_by_one = (1 - p) * (b * p ** np.arange(1, 21)).sum()
    rbp = model_for("RBP(p=0.8)")
    good = float(exact(rbp, rankings).value[0, 0])
    assert closed_vs_exact(rbp, (1 - p) * (b * p ** np.arange(20)).sum(), good, _row(rbp, rankings))[0]
    assert not closed_vs_exact(rbp, off_by_one, good, _row(rbp, rankings))[0]


def test_a_tbg_model_slip_the_jensen_direction_allowed_is_caught(monkeypatch):
    """A model-only slip that makes TBG's user read faster raises the exact value: above the
    closed form, as Jensen's gap is, so a check of the direction alone let it pass; the declared
    formula does not."""
    from rpdi.usermodels import tbg

    qrels, runs = _identical_topics(2)
    assert simulate(qrels, runs, ["TBG"], users=0, with_verdict=True)[1].status == 0
    monkeypatch.setattr(tbg, "TBG_SUMMARY_TIME", 4.0)  # the paper's 4.4 s, in the model only
    _, v = simulate(qrels, runs, ["TBG"], users=0, with_verdict=True)
    assert v.status == 1 and {c.kind for c in v.failures} == {"closed_vs_exact"}, verdict_lines(v)
    assert all(c.exact > c.closed_form for c in v.failures)


def _identical_topics(topics: int, runs: int = 1):
    grades = [2, 0, 1, 0, 0, 2, 0, 1, 0, 0]
    qrels = {f"q{t}": {f"d{i}": g for i, g in enumerate(grades) if g} for t in range(topics)}
    ranked = {f"q{t}": {f"d{i}": 10.0 - i for i in range(len(grades))} for t in range(topics)}
    return qrels, {f"sys{s}": ranked for s in range(runs)}


def test_streams_are_keyed_by_topic():
    qrels, runs = _identical_topics(3)
    records = simulate(qrels, runs, ["RBP(p=0.8)"], users=2000, seed=5, per_topic=True)
    estimates = [r["estimate"] for r in records if r["topic"] != "all"]
    assert len(set(estimates)) == 3, estimates  # the same ranking, three topics, three samples
    assert stream(5, "sys0", "q0", "m").entropy != stream(5, "sys0", "q1", "m").entropy


def test_a_stream_shared_by_topics_is_caught(monkeypatch):
    qrels, runs = _identical_topics(40, runs=4)
    measures = ["RBP(p=0.8)", "AP"]
    _, v = simulate(qrels, runs, measures, users=1000, seed=2, with_verdict=True)
    assert v.status == 0, verdict_lines(v)
    keyed = confirm.stream  # both stages' streams are made there
    monkeypatch.setattr(confirm, "stream", lambda seed, run, topic, *rest: keyed(seed, run, "same", *rest))
    _, v = simulate(qrels, runs, measures, users=1000, seed=2, with_verdict=True)
    means = [c for c in v.failures if c.kind == "mean"]  # the statistical test sees it here
    assert v.status == 1 and means and {c.topic for c in means} == {"all"}, verdict_lines(v)


def test_a_stream_shared_by_unlike_topics_is_caught_by_the_streams_check(monkeypatch):
    """Where the topics' rankings differ, the mean over topics barely moves when they share a
    stream (issue 11's planted bug on the default job): the deterministic streams check names it."""
    qrels, runs = synthetic_collection(topics=8, runs=2, depth=30, seed=3)
    _, v = simulate(qrels, runs, ["RBP(p=0.8)"], users=500, seed=2, with_verdict=True)
    assert v.status == 0 and v.counts["streams"] == 1, verdict_lines(v)
    keyed = confirm.stream  # both stages' streams are made there
    monkeypatch.setattr(confirm, "stream", lambda seed, run, topic, *rest: keyed(seed, run, "same", *rest))
    _, v = simulate(qrels, runs, ["RBP(p=0.8)"], users=500, seed=2, with_verdict=True)
    streams = [c for c in v.failures if c.kind == "streams"]
    assert v.status == 1 and len(streams) == 1 and len(streams[0].shared) == 2 * 2 * 7, verdict_lines(v)  # both stages
    assert "not keyed by the task" in "\n".join(verdict_lines(v))


def test_users_sharing_random_draws_are_caught_by_the_dispersion_test(monkeypatch, pairs_share_draws):
    """Two users per uniform: every mean stays unbiased and every user's outcome has the model's
    distribution, so neither the tests of the mean nor the variance test see it; the z-scores of
    the rankings are over-dispersed, which the family's dispersion test sees (and confirms on
    the independent stream, where the engine shares draws as well)."""
    from rpdi.simulate import vector

    qrels, runs = synthetic_collection(topics=100, runs=3, depth=30, seed=3)
    measures = ["RBP(p=0.8)", "RBP(p=0.5)"]
    _, v = simulate(qrels, runs, measures, users=1000, seed=2, with_verdict=True)
    assert v.status == 0 and v.counts["dispersion"] > 250, verdict_lines(v)

    monkeypatch.setattr(vector._Streams, "take", pairs_share_draws)
    _, v = simulate(qrels, runs, measures, users=1000, seed=2, with_verdict=True)
    assert v.status == 1 and [c.kind for c in v.failures] == ["spread"], verdict_lines(v)
    assert "over-dispersed" in "\n".join(verdict_lines(v))


def test_the_confirmation_stage_draws_from_streams_of_its_own(monkeypatch):
    """The confirmation's error-rate guarantee rests on its users being independent of the first
    stage's: every ranking is confirmed here, and no stream the confirmation draws from may be
    one the first stage drew from (first draws of each stream's first block compared)."""
    from rpdi.metrics.evaluate import load_qrels, load_runs
    from rpdi.metrics.rankings import build_rankings
    from rpdi.simulate.ranking import block_rng

    first_draws = {"first": [], "confirm": []}
    for module, stage in ((model_check, "first"), (confirm, "confirm")):
        def recording(model, rankings, users, tasks, *args, _real=module.simulate_rankings, _stage=stage, **kwargs):
            first_draws[_stage] += [int(block_rng(t, 0).integers(2 ** 63)) for t in tasks]
            return _real(model, rankings, users, tasks, *args, **kwargs)
        monkeypatch.setattr(module, "simulate_rankings", recording)
    qrels, runs = _identical_topics(3, runs=2)
    rankings = build_rankings(load_qrels(qrels), load_runs(runs), "qrels")
    model = model_for("RBP(p=0.8)")
    _, (ex,), cells = three_way.three_way(rankings, [model], users=200, seed=4, engine="vector", per_topic=True,
                                          convention="unknown", target_stderr=None, max_users=200)
    means = [c for c in cells if isinstance(c, Mean)]
    assert len(means) == 2 * 3 + 2
    for c in means:
        confirm.confirmation(rankings, model, ex, c, seed=4, convention="unknown")
    assert len(first_draws["first"]) == 6 and len(first_draws["confirm"]) == 6 + 2 * 3  # each topic, each run
    assert not set(first_draws["first"]) & set(first_draws["confirm"])


def test_model_variance_too_large_is_caught(monkeypatch):
    qrels, runs = _identical_topics(10)
    _, v = simulate(qrels, runs, ["RR", "RBP(p=0.8)"], users=2000, seed=4, with_verdict=True)
    assert v.status == 0, verdict_lines(v)

    def inflated(*args, **kwargs):
        ex = exact(*args, **kwargs)
        ex.variance = {k: 4 * x for k, x in ex.variance.items()}
        return ex

    monkeypatch.setattr(three_way, "exact", inflated)
    _, v = simulate(qrels, runs, ["RR", "RBP(p=0.8)"], users=2000, seed=4, with_verdict=True)
    assert v.status == 1 and {c.kind for c in v.failures} == {"variance"}, verdict_lines(v)


def test_a_model_undefined_wherever_its_closed_form_is_defined_fails(monkeypatch):
    """A slip that leaves the exact values undefined everywhere used to remove the model's checks
    (fewer checks, AGREE); now each run's "defined" cell fails."""
    qrels, runs = _identical_topics(3, runs=2)
    _, v = simulate(qrels, runs, ["RBP(p=0.8)"], users=200, seed=1, with_verdict=True)
    assert v.status == 0 and v.counts["defined"] == 2, verdict_lines(v)

    def undefined(*args, **kwargs):
        ex = exact(*args, **kwargs)
        ex.values = {k: np.full_like(x, np.nan) for k, x in ex.values.items()}
        return ex

    monkeypatch.setattr(three_way, "exact", undefined)
    _, v = simulate(qrels, runs, ["RBP(p=0.8)"], users=200, seed=1, with_verdict=True)
    assert v.status == 1 and [c.kind for c in v.failures] == ["defined", "defined"], verdict_lines(v)
    assert "undefined on all 3 rankings" in "\n".join(verdict_lines(v))


def test_rare_event_is_not_a_false_alarm():
    """Issue 11: RBP(p=0.5), each topic's only relevant document at rank 20, 5000 users: the
    first stage screens out the topics where a user reached rank 20 (|z| ~ 10); the
    confirmation on an independent stream, with Bennett's bound, does not confirm them."""
    qrels = {f"t{i}": {"rel": 1} for i in range(100)}
    run = {f"t{i}": {**{f"d{j}": 100.0 - j for j in range(1, 20)}, "rel": 80.0} for i in range(100)}
    _, v = simulate(qrels, {"r": run}, ["RBP(p=0.5)"], users=5000, seed=2, with_verdict=True)
    assert v.counts["screened"] >= 1 and max(abs(c.z) for c in v.marginal) > 8
    assert v.status == 0


def test_simulate_exit_status(tmp_path, capsys, monkeypatch):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.run"
    qrels.write_text("".join(f"{t} 0 d{i} {g}\n" for t in (1, 2) for i, g in enumerate([1, 0, 2, 0, 1])))
    run.write_text("".join(f"{t} Q0 d{i} {i + 1} {5 - i} x\n" for t in (1, 2) for i in range(5)))
    argv = ["simulate", str(qrels), str(run), "-m", "RBP(p=0.8)", "-m", "P@3", "--users", "500"]
    assert rpdi_main(argv) == 0
    assert "verdict: AGREE" in capsys.readouterr().out
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 five x\n")
    assert rpdi_main(argv[:2] + [str(bad)] + argv[3:]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    from rpdi.usermodels.rbp import RBP
    from rpdi.usermodels.base import geometric
    monkeypatch.setattr(RBP, "step", lambda self, state, at: geometric(0.99 * self.p, at.gain))
    assert rpdi_main(argv + ["--format", "json"]) == 1
    err = capsys.readouterr().err
    assert "FAIL run r, topic 1, RBP(p=0.8): closed form vs exact" in err


def test_a_slip_in_a_helper_shared_by_closed_form_and_model_is_caught(monkeypatch):
    """The log discount is shared by SDCG's and nDCG's closed forms and their user: a slip there
    moves both, so closed form and exact still agree; the plain rank-by-rank formula does not."""
    from rpdi.metrics.measures import kernels
    from rpdi.usermodels import logdiscount

    qrels, runs = _identical_topics(2)
    measures = ["SDCG@5", "nDCG@5", "nDCG(dcg='exp-log2')"]
    for m in measures:
        assert simulate(qrels, runs, [m], users=0, with_verdict=True)[1].status == 0
    slip = lambda rank, b=None: 1.0 / np.log2(np.asarray(rank, dtype=float) + 2)  # noqa: E731
    monkeypatch.setattr(kernels, "discount", slip)
    monkeypatch.setattr(logdiscount, "discount", slip)
    for m in measures:
        _, v = simulate(qrels, runs, [m], users=0, with_verdict=True)
        assert v.status == 1 and {c.kind for c in v.failures} == {"oracle"}, (m, verdict_lines(v))


def test_a_slip_in_the_c_w_l_continuation_shared_by_closed_form_and_model_is_caught(monkeypatch):
    """INSQ's and NERR11's closed forms and users share cwl_continuation: a slip there (2T read
    as 2T + 1) moves both alike; their plain rank-by-rank formulas do not."""
    from rpdi.metrics.measures import cwl as cwl_measures
    from rpdi.usermodels import cwl

    grades = [1, 0, 1, 0, 0, 2, 0, 1]  # r_1 = 0.5: NERR11's user may read past rank 1
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades) if g}}
    runs = {"sys": {"q": {f"d{i}": 10.0 - i for i in range(len(grades))}}}
    measures = ["INSQ", "NERR11", "INST"]
    for m in measures:
        assert simulate(qrels, runs, [m], users=0, with_verdict=True)[1].status == 0
    right = cwl_measures.cwl_continuation

    def slip(name, i, g, seen, T=3.0, **kwargs):
        return right(name, i, g, seen, T=T + 0.5 if name in ("INSQ", "NERR11") else T, **kwargs)

    monkeypatch.setattr(cwl_measures, "cwl_continuation", slip)
    monkeypatch.setattr(cwl, "cwl_continuation", slip)
    for m in measures[:2]:
        _, v = simulate(qrels, runs, [m], users=0, with_verdict=True)
        assert v.status == 1 and {c.kind for c in v.failures} == {"oracle"}, (m, verdict_lines(v))
    assert simulate(qrels, runs, ["INST"], users=0, with_verdict=True)[1].status == 0


def test_a_wrong_default_of_err_s_max_rel_is_caught(monkeypatch):
    """ERR's default max_rel (4, the paper's grades 0-4) is read by closed form and model alike
    from the measure's declaration: a wrong default there moves both; the oracle's own does not."""
    import dataclasses

    from rpdi.metrics.measures import registry as declarations

    qrels, runs = _identical_topics(2)
    assert simulate(qrels, runs, ["ERR@10", "ERR(max_rel=3)@10"], users=0, with_verdict=True)[1].status == 0
    spec = declarations.MEASURES["ERR"]
    wrong = dataclasses.replace(spec, params=tuple(dataclasses.replace(p, default=3.0) for p in spec.params))
    monkeypatch.setitem(declarations.MEASURES, "ERR", wrong)
    _, v = simulate(qrels, runs, ["ERR@10"], users=0, with_verdict=True)
    assert v.status == 1 and {c.kind for c in v.failures} == {"oracle"}, verdict_lines(v)
    assert simulate(qrels, runs, ["ERR(max_rel=3)@10"], users=0, with_verdict=True)[1].status == 0


def test_a_slip_in_tbg_s_shared_reading_time_is_caught(monkeypatch):
    """TBG's closed form and its user share the document reading time: a slip there moves both
    alike, but neither the plain rank-by-rank closed form nor the declared formula of the
    model's exact value, both written with the paper's constants."""
    from rpdi.metrics.measures import tbg as tbg_measure
    from rpdi.usermodels import tbg

    qrels, runs = _identical_topics(2)
    slip = lambda words: 0.018 * words + 78.0  # noqa: E731  (7.8 s)
    monkeypatch.setattr(tbg_measure, "tbg_document_time", slip)
    monkeypatch.setattr(tbg, "tbg_document_time", slip)
    _, v = simulate(qrels, runs, ["TBG"], users=0, with_verdict=True)
    assert v.status == 1 and {c.kind for c in v.failures} == {"oracle", "closed_vs_exact"}, verdict_lines(v)


def test_every_planted_bug_of_the_mutation_benchmark_still_applies(mutations_benchmark):
    """tests/benchmarks/mutations.py edits the sources by exact text: each edit's text must still
    occur exactly once in the file it names, or the benchmark stops (a refactor moved it)."""
    from pathlib import Path

    mutations = mutations_benchmark
    for name in mutations.MUTATIONS:
        for file, edits in mutations.plantings(name):
            text = (Path(mutations.ROOT) / file).read_text()
            for old, _ in edits:
                assert text.count(old) == 1, (name, file, old)
