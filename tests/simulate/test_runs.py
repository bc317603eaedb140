"""``simulate`` over many runs: a batch of runs in memory at a time, the bytes of all at once."""

import json
from pathlib import Path

import numpy as np
import pytest

from rpdi.metrics.errors import InputError
from rpdi.simulate import simulate
from rpdi.usermodels import exact, model_for
from rpdi.usermodels.mixture import Mixture

# sums over padded ranks (RBP, RBP2 without a cutoff), users who read on past the ranking while
# those of other rankings do (INST, IFT-C2, NERR10, AP's), a diversity of aggregations and cutoffs
MEASURES = ["AP", "RBP(p=0.8)", "RBP2", "RR", "P@10", "INST", "IFT-C2", "NERR10(p=0.9)", "ERR@20"]


def as_json(result) -> str:
    records, verdict = result
    return json.dumps([records, verdict.as_dict()])


@pytest.mark.parametrize("options", [dict(users=40), dict(users=0, convention="nonrelevant"),
                                     dict(users=40, convention="stop", per_topic=False),
                                     dict(users=0, target_stderr=0.2, max_users=300, topics="intersection")])
def test_one_batch_at_a_time_gives_the_bytes_of_all_at_once(batch_bytes, six_run_files, options):
    """Runs read, ranked and simulated one by one (rankings of different depths, users reading
    on for different lengths) give the records and the verdict of all six at once, to the last bit."""
    qrels, runs = six_run_files
    options = dict(dict(seed=5, per_topic=True, with_verdict=True), **options)
    together = simulate(qrels, runs, MEASURES, **options)
    batch_bytes(1)
    apart = simulate(qrels, runs, MEASURES, **options)
    assert len(together[0]) >= 6 * len(MEASURES)
    assert as_json(apart) == as_json(together)


def test_a_confirmation_reads_its_run_again_and_confirms_as_all_at_once(batch_bytes, six_run_files, monkeypatch):
    """A model whose variance is four times too large: the first stage flags the variance cells,
    and the confirmation stage, run by run on each one read again, gives the verdict of all at once."""
    qrels, runs = six_run_files

    def inflated(*args, **kwargs):
        ex = exact(*args, **kwargs)
        ex.variance = {k: 4 * x for k, x in ex.variance.items()}
        return ex

    monkeypatch.setattr("rpdi.simulate.three_way.exact", inflated)
    together = simulate(qrels, runs, ["RBP(p=0.8)"], users=2000, seed=4, with_verdict=True)
    assert together[1].status == 1 and {c.kind for c in together[1].failures} == {"variance"}
    batch_bytes(1)
    assert as_json(simulate(qrels, runs, ["RBP(p=0.8)"], users=2000, seed=4, with_verdict=True)) == as_json(together)


def test_simulate_holds_one_batch_of_runs_at_a_time(batch_bytes, six_run_files, most_alive, run_cli):
    """Each run file a batch of its own: the API and the command have at most one run read alive
    at once (each run read twice: once to find the depth and the exact evaluator's extent of all,
    once to simulate), where reading every run first has all six."""
    qrels, runs = six_run_files
    batch_bytes(1)
    simulate(qrels, runs, ["AP", "RBP(p=0.8)"], users=20)
    assert len(most_alive) == 12 and max(most_alive) == 1, most_alive
    most_alive.clear()
    status, out, err = run_cli(["simulate", qrels, *runs, "-m", "nDCG@10", "--users", "20"])
    assert status == 0, err
    assert len(most_alive) == 12 and max(most_alive) == 1, most_alive


def test_work_beyond_the_limit_is_refused_before_any_user_is_simulated(batch_bytes, six_run_files, monkeypatch,
                                                                       most_alive):
    """The refusal comes after every run is read once (its exact E[N]), before any is simulated."""
    qrels, runs = six_run_files
    batch_bytes(1)
    simulated = []
    monkeypatch.setattr("rpdi.simulate.model_check.simulate_rankings", lambda *args, **kwargs: simulated.append(1))
    with pytest.raises(InputError, match="simulation too large"):
        simulate(qrels, runs, ["RBP(p=0.8)"], users=10 ** 9)
    assert simulated == [] and len(most_alive) == 6 and max(most_alive) == 1, most_alive


def test_diversity_measures_one_batch_at_a_time(batch_bytes):
    """The intent-aware users (a mixture of one user per intent: each intent's propagation as
    far as on all runs) and alpha-nDCG's, run by run, give the bytes of all at once."""
    data = Path(__file__).parents[1] / "data" / "diversity"  # (the tests' data: not installed with the package)
    runs = [str(data / name) for name in ("diverse.run", "majority.run", "small.run")]
    options = dict(users=50, seed=1, per_topic=True, with_verdict=True, intents=str(data / "intents.txt"))
    measures = ["alpha-nDCG@10", "ERR-IA@5", "RBP-IA", "INST-IA", "AP-IA"]
    together = simulate(str(data / "qrels.txt"), runs, measures, **options)
    batch_bytes(1)
    assert as_json(simulate(str(data / "qrels.txt"), runs, measures, **options)) == as_json(together)


class OnePerRank(Mixture):
    """A user of a mixture of as many copies of the rankings as they are deep: its number of
    variants depends on the runs."""

    def variants(self, rankings):
        return [rankings] * rankings.depth, np.ones(rankings.depth)


def test_a_mixture_whose_variants_depend_on_the_runs_is_refused_a_batch_at_a_time(batch_bytes, six_run_files):
    qrels, runs = six_run_files
    rr = model_for("RR")
    records = simulate(qrels, runs, [OnePerRank(rr, rr.measure)], users=0)  # all at once: one collection
    assert records and all(r["exact"] == pytest.approx(r["closed_form"], abs=1e-12)  # copies of RR's user: RR
                           for r in records if r["exact"] is not None)
    batch_bytes(1)
    with pytest.raises(InputError, match=r"RR: a mixture whose number of variants depends on the runs \(\d+ for "):
        simulate(qrels, runs, [OnePerRank(rr, rr.measure)], users=0)


def test_the_survey_lets_a_batch_s_rankings_go_before_the_next_is_ranked(batch_bytes, six_run_files):
    """Each run a batch: when a batch is ranked, no earlier batch's rankings (nor their exact
    values) are alive; the last one's are kept only when it is the only batch."""
    import gc
    import weakref

    from rpdi.metrics.evaluate import load_qrels
    from rpdi.metrics.run_files import run_batches
    from rpdi.simulate.api import rankings_of
    from rpdi.simulate.runs import survey

    qrels, runs = six_run_files
    qrels = load_qrels(qrels)
    batch_bytes(1)
    made, alive = [], []

    def rank(batch):
        gc.collect()
        alive.append(sum(ref() is not None for ref in made))
        rankings = rankings_of(qrels, batch, "qrels", False)
        made.append(weakref.ref(rankings))
        return rankings

    found = survey(qrels, run_batches(runs), rank, [model_for("AP")], ties="trec_eval", seed=1,
                   convention="unknown", work=None)
    assert found.batches == 6 and found.only is None and alive == [0] * 6, alive
