"""As a notebook would: qrels and runs built as pandas DataFrames (ir_measures' column names; the
runs in one frame with a ``run`` column), converted by metrics/frames.py, are the Qrels and Runs
read from the same judgments and scores written as TREC files; given as they are to
rpdi.evaluate, simulate, compare and exact, with ``as_frame``, they give the file-based results
as typed DataFrames (metrics/records.py), and a click log's rows as a DataFrame fit as the same
rows written as a TSV click log do. Wrong columns or dtypes are the one-line errors files get
(exit 2 on the command line for a TSV or parquet file)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import rpdi
from rpdi.experiments.cli import main
from rpdi.metrics.errors import InputError
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


def test_frames_in_frames_out(notebook):
    """Each entry point given the DataFrames themselves, with as_frame, against the files' records."""
    qrels_frame, runs_frame, qpath, paths = notebook
    calls = [
        lambda q, r, **f: rpdi.evaluate(q, r, MEASURES, per_topic=True, **f),
        lambda q, r, **f: rpdi.simulate(q, r, ["RBP(p=0.8)", "rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)@10"],
                                        users=200, seed=1, **f),
        lambda q, r, **f: rpdi.compare(q, r, MEASURES, resamples=500, seed=2, **f),
    ]
    for call in calls:
        from_frames, from_files = call(qrels_frame, runs_frame, as_frame=True), records_frame(call(qpath, paths))
        assert len(from_files) > 0
        assert_frame_equal(from_frames, from_files)
    model = rpdi.model_for("RBP(p=0.8)")
    from_frames = rpdi.exact(model, rpdi.metrics.build_rankings(rpdi.load_qrels(qrels_frame), rpdi.load_runs(runs_frame)),
                             as_frame=True)
    files = rpdi.metrics.build_rankings(read_qrels(qpath), read_runs(paths))
    assert_frame_equal(from_frames, rpdi.exact(model, files, as_frame=True))
    assert from_frames.query("aggregation == 'rate'")["value"].round(12).tolist() == [
        round(r["value"], 12) for r in rpdi.evaluate(qpath, paths, ["RBP(p=0.8)"], per_topic=True) if r["topic"] != "all"]


def test_fit_a_click_log_frame(tmp_path):
    """A click log's rows (session, query, rank, docno, clicked) as a DataFrame fit as the same rows
    written as the TSV click log (rpdi fit's file) do, parameters and held-out records alike."""
    rng = np.random.default_rng(5)
    S, N = 300, 4
    docs = np.array([rng.permutation(6)[:N] for _ in range(S)])
    clicks = rng.random((S, N)) < 0.5 / np.arange(1, N + 1)
    rows = pd.DataFrame({"session": np.repeat(np.arange(S), N), "query": np.repeat(rng.integers(0, 3, S), N),
                         "rank": np.tile(np.arange(1, N + 1), S), "docno": [f"d{d}" for d in docs.ravel()],
                         "clicked": clicks.ravel().astype(int)}).sample(frac=1, random_state=1)  # in any order
    path = tmp_path / "log.tsv"
    rows.to_csv(path, sep="\t", header=False, index=False)
    assert_frame_equal(rpdi.fit("RBP", rows, as_frame=True), rpdi.fit("RBP", str(path), as_frame=True))
    from rpdi.usermodels.clickeval import fit_and_evaluate

    train, test = rows[rows["session"] < 200], rows[rows["session"] >= 200]
    from_frames = fit_and_evaluate(train, test, ["RBP", "DBN"], stderr=False, as_frame=True)
    train.to_csv(tmp_path / "train.tsv", sep="\t", header=False, index=False)
    test.to_csv(tmp_path / "test.tsv", sep="\t", header=False, index=False)
    from_files = fit_and_evaluate(str(tmp_path / "train.tsv"), str(tmp_path / "test.tsv"), ["RBP", "DBN"], stderr=False)
    kept = [c for c in from_frames.columns if c not in ("seconds", "curves", "sessions")]
    assert_frame_equal(from_frames[kept], records_frame(from_files)[kept])
    bad = rows.assign(clicked=rows["clicked"].astype(float) / 2)
    with pytest.raises(InputError, match=r"^<click log>: column clicked holds floats, not integers$"):
        rpdi.fit("RBP", bad)
    with pytest.raises(InputError, match=r"^<click log>: no docno column \(expected one of doc_id, docno; found"):
        rpdi.fit("RBP", rows.drop(columns="docno"))


@pytest.mark.parametrize("suffix", [".tsv", ".parquet"])
def test_wrong_columns_and_dtypes_are_one_line_errors(notebook, tmp_path, capsys, suffix):
    """A frame with a text score or without its query column: InputError in one line, the same
    sentence the command line prints (exit 2) for the frame saved as a TSV or parquet file (a
    TSV whose header names no query column is read as a TREC run file, and told so in one line)."""
    qrels_frame, runs_frame, qpath, _ = notebook
    run = runs_frame[runs_frame["run"] == "run0"].drop(columns="run")  # a file holds one run on the command line
    cases = [(run.assign(score=[f"s{v}" for v in run["score"]]), "column score holds text, not numbers"),
             (run.rename(columns={"query_id": "topic"}), "no query column (expected one of query_id, q_id, qid; "
                                                         "found topic, doc_id, score)")]
    for frame, said in cases:
        with pytest.raises(InputError) as raised:
            rpdi.evaluate(qrels_frame, frame, ["AP"])
        assert str(raised.value) == f"<run run>: {said}"
        path = tmp_path / f"bad{suffix}"
        if suffix == ".tsv":
            frame.to_csv(path, sep="\t", index=False)
        else:
            frame.to_parquet(path, index=False)
        assert main(["eval", str(qpath), str(path), "-m", "AP"]) == 2
        printed = capsys.readouterr().err.strip().splitlines()
        if suffix == ".tsv" and said.startswith("no query column"):  # a header naming no query column: a TREC file
            assert len(printed) == 1 and printed[0].startswith(f"rpdi eval: {path}:1: expected at least 6 fields")
            continue
        assert printed == [f"rpdi eval: {path}: {said}"]
        qrels_path = tmp_path / f"qrels{suffix}"
        (qrels_frame.to_csv(qrels_path, sep="\t", index=False) if suffix == ".tsv"
         else qrels_frame.to_parquet(qrels_path, index=False))
        with pytest.raises(InputError) as from_file:
            rpdi.evaluate(str(qrels_path), frame, ["AP"])
        assert str(from_file.value) == str(raised.value)


def test_diversity_qrels_and_table_files_with_colons(tmp_path):
    """Diversity qrels as a DataFrame (a subtopic column) evaluate as the same judgments in ndeval's file;
    a TSV qrels file with a header row whose fourth column holds a colon is plain qrels (no
    grade:probability pairs looked for), as is its parquet."""
    judged = {"q1": {"1": {"a": 1, "c": 1}, "2": {"b": 1}}, "q2": {"1": {"d": 1}}}
    frame = pd.DataFrame([(q, s, d, g) for q, subs in judged.items() for s, docs in subs.items() for d, g in docs.items()],
                         columns=["query_id", "subtopic", "doc_id", "relevance"])
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"e": 2.0, "d": 1.0}}
    names = ["alpha_nDCG@3", "ERR-IA@3"]
    path = tmp_path / "diversity.qrels"  # ndeval's lines: topic subtopic docno judgment
    path.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in frame.itertuples(index=False)))
    from_frame = rpdi.evaluate(frame, {"r": run}, names, per_topic=True, as_frame=True)
    assert len(from_frame) == 6 and from_frame["value"].gt(0).all()
    assert_frame_equal(from_frame, rpdi.evaluate(str(path), {"r": run}, names, per_topic=True, as_frame=True))
    plain = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0], "note": ["x:1", "y:2"]})
    tsv, parquet = tmp_path / "qrels.tsv", tmp_path / "qrels.parquet"
    plain.to_csv(tsv, sep="\t", index=False)
    plain.to_parquet(parquet, index=False)
    want = rpdi.evaluate(plain, {"r": run}, ["P@2", "AP"])
    assert want[0]["value"] == 0.5 and "sd" not in want[0]  # not evaluated over judgment worlds
    assert rpdi.evaluate(str(tsv), {"r": run}, ["P@2", "AP"]) == rpdi.evaluate(str(parquet), {"r": run}, ["P@2", "AP"]) == want


def test_one_measure_is_a_list_of_one_and_a_non_measure_a_one_line_error(notebook):
    """A single name (or Measure, model) as ``measures`` is that one measure, as a notebook user
    writes ``rpdi.evaluate(qrels, runs, "AP")``; 5 or [5] is an InputError naming it."""
    qrels, runs, _, _ = notebook
    calls = {"evaluate": lambda m: rpdi.evaluate(qrels, runs, m),
             "simulate": lambda m: rpdi.simulate(qrels, runs, m, users=50, seed=1),
             "compare": lambda m: rpdi.compare(qrels, runs, m, resamples=20),
             "properties": lambda m: rpdi.properties(m)}
    for name, call in calls.items():
        assert call("P@5") == call(["P@5"]), name
        assert call(rpdi.parse_measure("P@5")) == call(["P@5"]), name
        with pytest.raises(InputError, match="not int"):
            call(5)
        with pytest.raises(InputError, match="measure 5: .* not int"):
            call([5])
