"""``rpdi compare`` over many runs: a batch of runs in memory at a time, the bytes of all at once."""

import json
import sys

import numpy as np
import pytest

from rpdi.experiments.compare import compare

MEASURES = ["AP", "nDCG@10", "nDCG", "RR", "P@10", "RBP(p=0.8)", "ERR@20", "bpref"]


@pytest.fixture
def collection(tmp_path, random_collection, write_trec):
    """Six run files of different depths (ties, empty rankings, a topic not in the qrels)."""
    qrels, runs = random_collection(np.random.default_rng(2026), 6, 12)
    return write_trec(tmp_path, qrels, runs)


def batch_bytes(monkeypatch, size: int) -> None:
    monkeypatch.setattr(sys.modules["rpdi.metrics.evaluate"], "BATCH_BYTES", size)


def test_compare_holds_one_batch_of_runs_at_a_time(collection, monkeypatch, most_alive, run_cli):
    """Each run file a batch of its own: the API and the command have at most one run read alive
    at once, where reading every run first has all six (the runs are read twice, as their
    rankings' depths differ: :func:`experiments.run_scores.run_scores`)."""
    qrels, runs = collection
    batch_bytes(monkeypatch, 1)
    compare(qrels, runs, ["AP", "nDCG@10"], ties="expected")
    assert len(most_alive) >= 6 and max(most_alive) == 1, most_alive
    most_alive.clear()
    status, out, err = run_cli(["compare", qrels, *runs, "-m", "AP", "--baseline", "run2", "--discriminative-power"])
    assert status == 0, err
    assert len(most_alive) >= 12 and max(most_alive) == 1, most_alive  # every pair's power besides: read again


@pytest.mark.parametrize("options", [dict(), dict(topics="intersection", baseline="run3"),
                                     dict(ties="expected"), dict(ties="range", test="t")])
def test_one_batch_at_a_time_gives_the_bytes_of_all_at_once(collection, monkeypatch, options):
    """Runs ranked one by one (rankings of different depths) give the records of all six ranked
    together, to the last bit."""
    qrels, runs = collection
    together = compare(qrels, runs, MEASURES, resamples=200, **options)
    batch_bytes(monkeypatch, 1)
    apart = compare(qrels, runs, MEASURES, resamples=200, **options)
    assert len(together) == (5 if "baseline" in options else 15) * len(MEASURES)
    assert json.dumps(apart) == json.dumps(together)


def test_a_run_read_twice_is_warned_about_once(tmp_path, monkeypatch, run_cli, write_trec):
    """Rankings of different depths in different batches: the runs are read again, deeper; the
    run that shares no topic with the qrels is named once."""
    qrels, runs = write_trec(tmp_path, {"1": {"a": 1, "b": 0}, "2": {"c": 1}},
                             {"a": {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}},
                              "b": {"1": {"b": 2.0}, "2": {"c": 1.0}}, "c": {"9": {"b": 2.0}}})
    batch_bytes(monkeypatch, 1)
    status, out, err = run_cli(["compare", qrels, *runs, "-m", "AP"])
    assert status == 0 and err.count("shares no topic") == 1, err


def test_a_batch_deepened_has_the_arrays_of_all_runs_ranked_at_once(collection):
    """One run ranked alone and padded to the depth of all six ranked together has their arrays
    for it, field by field (document lengths given; the codes of documents the qrels do not
    judge are the batch's own, only where a ranking ends is compared)."""
    from dataclasses import fields

    from rpdi.experiments.run_scores import deepened
    from rpdi.metrics.evaluate import load_qrels, load_runs
    from rpdi.metrics.rankings import build_rankings
    from rpdi.metrics.trec import with_lengths

    qrels, paths = collection
    qrels = load_qrels(qrels)
    runs = [with_lengths(run, {docno: float(len(docno)) for docno in run.docno.dictionary.to_pylist()[::2]})
            for run in load_runs(paths)]
    together = build_rankings(qrels, runs)
    alone = build_rankings(qrels, runs[3:4])
    assert alone.depth < together.depth and together.tie is not None
    alone = deepened(alone, together.depth)
    for f in fields(together):
        value = getattr(together, f.name)
        if isinstance(value, np.ndarray) and value.ndim == 3:  # (runs, topics, ranks)
            mine = getattr(alone, f.name)
            if f.name == "doc":
                mine, value = mine < 0, value < 0
            np.testing.assert_array_equal(mine, value[3:4], err_msg=f.name)
