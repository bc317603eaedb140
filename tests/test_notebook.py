"""As a notebook would: qrels and runs built as pandas DataFrames (ir_measures' column names; the
runs in one frame with a ``run`` column), converted by metrics/frames.py, are the Qrels and Runs
read from the same judgments and scores written as TREC files; evaluated, simulated and compared
they give the file-based results, as typed DataFrames (metrics/records.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import rpdi
from rpdi.metrics.frames import qrels_from, runs_from
from rpdi.metrics.records import records_frame
from rpdi.metrics.trec import read_qrels, read_runs

MEASURES = ["nDCG@10", "RBP(p=0.8)", "AP", "P@5"]


@pytest.fixture(scope="module")
def notebook(random_collection, write_trec, tmp_path_factory):
    """(qrels frame, runs frame, qrels path, run paths) of one seeded collection (ties, unjudged
    documents, negative grades, topics a run misses)."""
    qrels, runs = random_collection(np.random.default_rng(26), 3, 8)
    qpath, paths = write_trec(tmp_path_factory.mktemp("notebook"), qrels, runs)
    qrels_frame = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                               columns=["query_id", "doc_id", "relevance"])
    runs_frame = pd.DataFrame([(name, q, d, s) for name, run in runs.items() for q, docs in run.items()
                               for d, s in docs.items()], columns=["run", "query_id", "doc_id", "score"])
    return qrels_frame, runs_frame, qpath, paths


def entries(x) -> list[tuple]:
    values = x.grade if hasattr(x, "grade") else x.score
    return list(zip(x.topic.to_pylist(), x.docno.to_pylist(), values.tolist()))


def test_frames_are_the_files(notebook):
    qrels_frame, runs_frame, qpath, paths = notebook
    assert entries(qrels_from(qrels_frame)) == entries(read_qrels(qpath))  # in the same order
    runs, files = runs_from(runs_frame), read_runs(paths)
    assert [r.name for r in runs] == [r.name for r in files]
    assert [entries(r) for r in runs] == [entries(r) for r in files]


def test_evaluate_simulate_compare_give_the_file_based_frames(notebook):
    qrels_frame, runs_frame, qpath, paths = notebook
    qrels, runs = qrels_from(qrels_frame), runs_from(runs_frame)
    calls = [
        lambda q, r: rpdi.evaluate(q, r, MEASURES, per_topic=True),
        lambda q, r: rpdi.simulate(q, r, ["RBP(p=0.8)", "rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)@10"],
                                   users=200, seed=1),
        lambda q, r: rpdi.compare(q, r, MEASURES, resamples=500, seed=2),
    ]
    for call in calls:
        from_frames, from_files = records_frame(call(qrels, runs)), records_frame(call(qpath, paths))
        assert len(from_files) > 0
        assert_frame_equal(from_frames, from_files)
