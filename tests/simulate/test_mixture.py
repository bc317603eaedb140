"""Simulated users who draw a variant of the ranking (an intent) at the start: they agree with
the exact expectation through the verdict, draw the same sessions however the rankings are
batched, and a slip in the variants' probabilities is caught."""

from __future__ import annotations

import numpy as np
import pytest

from rpdi.experiments.synthetic_diversity import synthetic_diversity
from rpdi.metrics.diversity import diversity_rankings
from rpdi.metrics.seeds import stream
from rpdi.metrics.view import View
from rpdi.simulate.api import simulate
from rpdi.simulate.batch import simulate_rankings
from rpdi.simulate.cells import ClosedVsExact, Mean
from rpdi.simulate.ranking import Mixed, rankings_for
from rpdi.usermodels import model_for
from rpdi.usermodels.mixture import Mixture


@pytest.fixture(scope="module")
def collection():
    return synthetic_diversity(topics=10, seed=3)


def test_intent_aware_users_agree(collection):
    qrels, runs, intents = collection
    measures = ["ERR-IA@20", "RBP-IA(p=0.8)", "INST-IA", "AP-IA", "nDCG-IA@10", "TBG-IA"]
    records, v = simulate(qrels, runs, measures, users=2000, seed=4, with_verdict=True, intents=intents)
    assert v.status == 0, [c.text() for c in v.failures]
    assert v.counts["closed_vs_exact"] > 0 and v.counts["mean"] > 0 and v.counts["dispersion"] > 0
    for r in records:  # every mean over topics close to its exact value
        assert abs(r["estimate"] - r["exact"]) <= 5 * r["stderr"] + 1e-12


@pytest.mark.parametrize("uneven", [False, True])
def test_ndevals_users_agree(collection, uneven):
    """alpha-nDCG's, ERR-IA's, nERR-IA's, NRBP's, ... users: closed form (ndeval's), exact and
    simulated agree."""
    qrels, runs, intents = collection
    measures = ["alpha-nDCG@10", "alpha-DCG@20", "NRBP", "nNRBP", "ERR-IA@20", "nERR-IA@20", "P-IA@10", "MAP-IA"]
    _, v = simulate(qrels, runs, measures, users=2000, seed=5, with_verdict=True, intents=intents if uneven else None)
    assert v.status == 0, [c.text() for c in v.failures]
    assert v.counts["closed_vs_exact"] == len(measures) * 3 * 10


def test_agent_engine_agrees(collection):
    qrels, runs, intents = collection
    _, v = simulate(qrels, runs[:1], ["ERR-IA@10", "P-IA@5"], users=300, seed=2, engine="agent",
                    with_verdict=True, intents=intents)
    assert v.status == 0, [c.text() for c in v.failures]


def test_sessions_do_not_depend_on_batching(collection):
    """A mixed ranking's users (their variants and sessions) are the same simulated alone or with
    other rankings: every variant's moments are equal."""
    qrels, runs, intents = collection
    rankings = diversity_rankings(qrels, runs, intents=intents)
    model = model_for("RBP-IA(p=0.8)")
    rows = rankings_for(model, View(rankings, model.k), "unknown")
    keys = list(rows)[:5]
    assert all(isinstance(rows[k], Mixed) for k in keys)
    tasks = [stream(1, str(k), "RBP-IA") for k in keys]
    together = simulate_rankings(model, [rows[k] for k in keys], 20_000, tasks)
    alone = simulate_rankings(model, [rows[keys[3]]], 20_000, [tasks[3]])[0]
    for a, b in zip(together[3].parts, alone.parts):
        assert (a.users, a.s1, a.s2) == (b.users, b.s1, b.s2)
    shares = np.array([p.users for p in alone.parts]) / alone.users
    np.testing.assert_allclose(shares, rows[keys[3]].shares, atol=0.02)  # users drew P(i|q)


def test_unnormalised_probabilities_are_caught(collection, monkeypatch):
    """Weights not divided by their sum: the exact value is off by their sum, while simulated
    users still draw in proportion to them; the verdict's simulated-vs-exact cells catch it,
    whatever the closed form says."""
    qrels, runs, intents = collection
    monkeypatch.setattr(Mixture, "shares", lambda self, weights, shape: 1.2 * np.broadcast_to(weights, shape))
    _, v = simulate(qrels, runs, ["ERR-IA@20"], users=2000, seed=4, with_verdict=True, intents=intents)
    assert v.status == 1
    assert any(isinstance(c, Mean) for c in v.failures)
    assert any(isinstance(c, ClosedVsExact) for c in v.failures)


def test_rpdi_simulate_reads_diversity_qrels_and_intents(collection, tmp_path, run_cli):
    from rpdi.experiments.synthetic_diversity import write_diversity

    paths = write_diversity(tmp_path, *collection)
    status, out, err = run_cli(["simulate", paths["qrels"], *paths["runs"], "-m", "alpha-nDCG@10", "-m", "ERR-IA@20",
                                "--intents", paths["intents"], "--users", "1000"])
    assert status == 0, err
    assert "verdict: AGREE" in out and "alpha-nDCG@10" in out
    status, _, err = run_cli(["simulate", paths["qrels"], *paths["runs"], "-m", "RBP-IA", "--intents",
                              tmp_path / "missing.txt", "--users", "0"])
    assert status == 2 and "missing.txt" in err
