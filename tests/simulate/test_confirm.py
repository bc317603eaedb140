"""The confirmation stage of the verdict (simulate/confirm.py) on the dispersion test: users who
share random draws in pairs, planted in the vector engine's streams of both stages, must be
confirmed by the pooled dispersion test at the threshold Holm gives it in the default job
(0.01/6: five cells screened out and the joint hypothesis), where Chebyshev's bound on the same
z-scores, the confirmation before 2026-11-26, did not reach it; without the planting the same
seed confirms nothing. Fixed seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from rpdi.experiments.synthetic import synthetic_collection
from rpdi.metrics.evaluate import load_qrels, load_runs
from rpdi.metrics.rankings import build_rankings
from rpdi.simulate import confirm, three_way, vector
from rpdi.simulate.cells import Dispersion
from rpdi.simulate.verdict import spread_p
from rpdi.usermodels import model_for

THRESHOLD = 0.01 / 6  # Holm's first threshold over five screened-out cells and the joint hypothesis


@pytest.fixture(scope="module")
def first_stage():
    """RBP(p=0.8) on 150 synthetic topics and 2 runs, 1000 users, honest streams: the runs'
    Dispersion cells with what their confirmation needs."""
    qrels, runs = synthetic_collection(topics=150, runs=2, depth=30, seed=3)
    rankings = build_rankings(load_qrels(qrels), load_runs(runs), "qrels")
    model = model_for("RBP(p=0.8)")
    _, (ex,), cells = three_way.three_way(rankings, [model], users=1000, seed=2, engine="vector", per_topic=False,
                                          convention="unknown", target_stderr=None, max_users=1000)
    parts = [c for c in cells if isinstance(c, Dispersion)]
    assert len(parts) == 2
    return rankings, model, ex, parts


def _confirmed_terms(first_stage):
    rankings, model, ex, parts = first_stage
    return [t for c in parts for t in confirm.confirmation(rankings, model, ex, c, seed=2, convention="unknown")]


def test_the_dispersion_confirmation_rejects_users_sharing_draws(first_stage, monkeypatch, pairs_share_draws):
    monkeypatch.setattr(vector._Streams, "take", pairs_share_draws)
    terms = _confirmed_terms(first_stage)
    z2 = np.array([t["z2"] for t in terms])
    assert len(terms) > 150 and z2.mean() > 1.5  # many rankings, each z^2 about twice its mean
    assert spread_p(terms) <= THRESHOLD
    chebyshev = sum(t["bound"] for t in terms) / (z2.sum() - len(z2)) ** 2
    assert chebyshev > THRESHOLD  # the bound this one replaced missed it


def test_the_dispersion_confirmation_accepts_independent_users(first_stage):
    terms = _confirmed_terms(first_stage)
    assert len(terms) > 150 and spread_p(terms) > 0.01


def test_engines_checking_one_measure_draw_independent_users():
    """The agent check of ``rpdi run`` simulates a measure the vector engine simulates too: its
    streams, first stage and confirmation, are keyed by the engine, so that the dispersion test
    and the joint hypothesis, which pool their cells, pool independent samples; the vector
    engine's streams stay keyed by (run, topic, measure) alone."""
    from rpdi.metrics.seeds import stream
    from rpdi.simulate.ranking import block_rng

    def first(seq):
        return int(block_rng(seq, 0).integers(2 ** 63))

    key = (3, "run", "t1", "RBP(p=0.8)")
    draws = {first(confirm.ranking_stream(*key, e, *stage)) for e in ("vector", "agent") for stage in ((), ("confirm",))}
    assert len(draws) == 4
    assert first(confirm.ranking_stream(*key, "vector")) == first(stream(*key))
