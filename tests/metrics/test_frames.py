"""Qrels and runs from DataFrames, pyarrow tables, ir_measures' namedtuples, dicts and TSV/CSV/
parquet files (metrics/frames.py) are the Qrels and Runs the TREC readers make of the same
judgments and scores; bad columns, types and values are one-line InputErrors naming the column
or row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rpdi.metrics.errors import InputError
from rpdi.metrics.frames import qrels_from, runs_from
from rpdi.metrics.run_files import load_runs
from rpdi.metrics.trec import read_qrels, read_run

QRELS = {"1": {"d1": 1, "d2": 0, "d3": 2}, "2": {"d1": 1, "d5": 0}}
RUNS = {"bm25": {"1": {"d1": 3.5, "d2": 2.5, "d6": 0.5}, "2": {"d5": 2.0, "d1": 1.0}},
        "dense": {"1": {"d3": 1.25, "d2": 1.0}, "2": {"d9": 4.0}}}


def rows(x) -> list[tuple]:
    """A Qrels' or Run's entries, in a fixed order (the readers keep the input's order)."""
    values = x.grade if hasattr(x, "grade") else x.score
    return sorted(zip(x.topic.to_pylist(), x.docno.to_pylist(), values.tolist()))


def long(nested: dict, value: str, **names) -> pd.DataFrame:
    """``{query: {doc: value}}`` as a long frame with ir_measures' column names (renamed by ``names``)."""
    frame = pd.DataFrame([(q, d, v) for q, docs in nested.items() for d, v in docs.items()],
                         columns=["query_id", "doc_id", value])
    return frame.rename(columns=names)


@pytest.fixture
def files(tmp_path, write_trec):
    qpath, paths = write_trec(tmp_path, QRELS, RUNS)
    return qpath, dict(zip(RUNS, paths))


@pytest.mark.parametrize("names, value", [
    ({}, "relevance"),  # ir_measures
    ({"query_id": "q_id"}, "score"),  # ranx: a qrels frame's grade is its score
    ({"query_id": "qid", "doc_id": "docno"}, "label"),  # PyTerrier
])
def test_qrels_frames_are_the_file_read_qrels(files, names, value):
    frame = long(QRELS, value, **names).assign(iteration="0")
    assert rows(qrels_from(frame)) == rows(read_qrels(files[0]))
    assert rows(qrels_from(pa.Table.from_pandas(frame))) == rows(read_qrels(files[0]))


def test_integer_and_categorical_ids_read_as_their_text(files):
    frame = long(QRELS, "relevance")
    frame["query_id"] = frame["query_id"].astype(int)
    frame["doc_id"] = frame["doc_id"].astype("category")
    assert rows(qrels_from(frame)) == rows(read_qrels(files[0]))


def test_namedtuples_and_dicts(files):
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in RUNS["bm25"].items() for d, s in docs.items()]
    assert rows(qrels_from(qrels)) == rows(read_qrels(files[0]))
    assert rows(qrels_from(QRELS)) == rows(read_qrels(files[0]))
    expected = rows(read_run(files[1]["bm25"]))
    assert [rows(r) for r in runs_from(run)] == [expected]
    assert [rows(r) for r in runs_from(iter(run))] == [expected]
    one = runs_from(RUNS["bm25"])  # one run's {query: {doc: score}}
    assert [r.name for r in one] == ["run"] and rows(one[0]) == expected
    assert [(r.name, rows(r)) for r in runs_from(RUNS)] == [(n, rows(read_run(p))) for n, p in files[1].items()]


def test_runs_from_one_frame_with_a_run_column_and_from_named_frames(files):
    frame = pd.concat([long(run, "score").assign(run=name, rank=0) for name, run in RUNS.items()],
                      ignore_index=True)
    expected = [(n, rows(read_run(p))) for n, p in files[1].items()]
    assert [(r.name, rows(r)) for r in runs_from(frame)] == expected
    assert [(r.name, rows(r)) for r in runs_from(pa.Table.from_pandas(frame))] == expected
    named = {name: long(run, "score") for name, run in RUNS.items()}
    assert [(r.name, rows(r)) for r in runs_from(named)] == expected
    unnamed = load_runs([long(run, "score") for run in RUNS.values()])  # several: run_files reads them
    assert [r.name for r in unnamed] == ["run1", "run2"]
    runs = runs_from(frame)  # split from one table: the runs share its docno dictionary
    assert runs[0].docno.dictionary.equals(runs[1].docno.dictionary)


def test_tsv_csv_and_parquet_files(files, tmp_path):
    qframe = long(QRELS, "relevance")
    qframe.to_csv(tmp_path / "qrels.tsv", sep="\t", index=False)
    pq.write_table(pa.Table.from_pandas(qframe.assign(query_id=qframe["query_id"].astype(int))),
                   tmp_path / "qrels.parquet")
    for path in ("qrels.tsv", "qrels.parquet"):
        assert rows(qrels_from(tmp_path / path)) == rows(read_qrels(files[0])), path
    long(RUNS["dense"], "score").to_csv(tmp_path / "dense.csv", index=False)
    pq.write_table(pa.Table.from_pandas(long(RUNS["bm25"], "score")), tmp_path / "bm25.parquet")
    got = load_runs([tmp_path / "bm25.parquet", files[1]["dense"], tmp_path / "dense.csv", files[1]["bm25"]])
    assert [r.name for r in got] == ["bm25", "dense", "dense", "bm25"]
    assert [rows(r) for r in got] == [rows(read_run(files[1][n])) for n in ("bm25", "dense", "dense", "bm25")]
    # a .tsv without a header row is a TREC file
    (tmp_path / "trec.tsv").write_text("1\t0\td1\t1\n")
    assert rows(qrels_from(tmp_path / "trec.tsv")) == [("1", "d1", 1.0)]


def frame_with(**changes) -> pd.DataFrame:
    frame = long(QRELS, "relevance")
    for column, (row, value) in changes.items():
        frame[column] = frame[column].astype(object)
        frame.loc[row, column] = value
    return frame


@pytest.mark.parametrize("frame, fragments", [
    (long(QRELS, "relevance").drop(columns="query_id"), ["no query column", "query_id, q_id, qid", "found doc_id"]),
    (long(QRELS, "grade"), ["no relevance column", "relevance, label, score"]),
    (long(QRELS, "relevance").astype({"relevance": str}), ["column relevance holds text, not numbers"]),
    (long(QRELS, "relevance").astype({"query_id": float}), ["column query_id holds floats, not ids"]),
    (frame_with(relevance=(3, np.nan)).astype({"relevance": float}), ["row 3: relevance is missing"]),
    (frame_with(doc_id=(2, None)), ["row 2: doc_id is missing"]),
    (frame_with(doc_id=(2, "")), ["row 2: doc_id is empty"]),
    (frame_with(doc_id=(4, "d1")).set_axis(list("abcde")),
     ["row e: document d1 appears twice for query 2 (first at row d)"]),
    (frame_with(query_id=(1, 7)), ["mixed types"]),
])
def test_bad_qrels_frames_are_one_line_errors(frame, fragments):
    with pytest.raises(InputError) as error:
        qrels_from(frame)
    message = str(error.value)
    assert message.startswith("<qrels>: ") and "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_bad_run_values_name_the_row_and_the_run():
    run = long(RUNS["bm25"], "score")
    run.loc[1, "score"] = np.inf
    with pytest.raises(InputError, match=r"^<run bm25>: row 1: score inf is not a finite number$"):
        runs_from({"bm25": run})
    table = pa.table({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0],
                      "run": ["x", "y", "x"]})
    with pytest.raises(InputError, match=r"^<run run>: row 2: document a appears twice for query 1 \(first at row 0\)$"):
        runs_from(table)
    with pytest.raises(InputError, match="not a finite number"):
        runs_from(pa.table({"query_id": ["1"], "doc_id": ["a"], "score": [float("nan")]}))
    with pytest.raises(InputError, match="expected namedtuples"):
        runs_from([[("1", "a", 1.0)]])


def test_bad_files_name_the_file(tmp_path):
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="bad.parquet: cannot be read as parquet"):
        qrels_from(tmp_path / "bad.parquet")
    with pytest.raises(InputError, match="missing.parquet: no such file"):
        runs_from(tmp_path / "missing.parquet")
    (tmp_path / "q.tsv").write_text("query_id\tdoc_id\tgrade\n1\ta\t1\n")
    with pytest.raises(InputError, match=r"q.tsv: no relevance column"):
        qrels_from(tmp_path / "q.tsv")


def test_a_large_frame_is_converted_without_a_loop_over_rows():
    """200,000 judgments convert with a few hundred calls of Python functions, not one or more
    per row: counted, not timed."""
    import sys

    n = 200_000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"query_id": rng.integers(0, 500, n).astype(str),
                          "doc_id": np.arange(n).astype(str), "relevance": rng.integers(0, 3, n)})
    calls = 0

    def count(frame_, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        qrels = qrels_from(frame)
    finally:
        sys.setprofile(None)
    assert len(qrels.grade) == n
    assert calls < 2000, calls


def test_diversity_qrels_read_the_subtopic_or_iteration_column(tmp_path):
    from rpdi.metrics.diversity import read_diversity_qrels
    from rpdi.metrics.frames import diversity_qrels_from_table

    judged = [("1", "a", "d1", 1), ("1", "b", "d1", 0), ("1", "b", "d2", 2), ("2", "a", "d3", 1)]
    path = tmp_path / "div.qrels"
    path.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in judged))
    expected = read_diversity_qrels(path)
    for column in ("subtopic", "iteration"):
        frame = pd.DataFrame(judged, columns=["query_id", column, "doc_id", "relevance"])
        got = diversity_qrels_from_table(frame)
        for field in ("topic", "subtopic", "docno"):
            assert getattr(got, field).to_pylist() == getattr(expected, field).to_pylist(), (column, field)
        assert got.grade.tolist() == expected.grade.tolist()
    twice = pd.DataFrame(judged + [("1", "b", "d2", 1)], columns=["query_id", "subtopic", "doc_id", "relevance"])
    with pytest.raises(InputError, match=r"row 4: document d2 appears twice for query 1 subtopic b \(first at row 2\)$"):
        diversity_qrels_from_table(twice)


def test_pyterrier_columns_are_left_alone_and_empty_columns_of_any_dtype_are_empty(files):
    """A PyTerrier frame's text and query_toks (a column of mixed types, one of dicts) are not
    converted; an empty run frame, whose columns pandas types float64 or object, is an empty run."""
    _, paths = files
    run = long(RUNS["bm25"], "score", query_id="qid", doc_id="docno")
    run["text"] = ["a passage", 3, None, b"bytes", 2.5]
    run["query_toks"] = [{"a": 1.0}] * len(run)
    assert rows(runs_from({"bm25": run})[0]) == rows(read_run(paths["bm25"]))
    for empty in (pd.DataFrame({"query_id": [], "doc_id": [], "score": []}),
                  pd.DataFrame(columns=["query_id", "doc_id", "score"])):
        assert rows(runs_from({"r": empty})[0]) == []
    assert rows(qrels_from(pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}))) == []


def test_rows_are_named_by_position_when_the_index_repeats():
    run = long(RUNS["bm25"], "score")
    joined = pd.concat([run.iloc[:2], run.iloc[:2].assign(doc_id=["d7", "d8"], score=[1.0, np.nan])])
    assert joined.index.tolist() == [0, 1, 0, 1]
    with pytest.raises(InputError, match=r"^<run bm25>: row 3: score is missing \(NaN or None\)$"):
        runs_from({"bm25": joined})
    run.index = [f"r{i}" for i in range(len(run))]  # unique labels name the row
    run.loc["r2", "score"] = np.nan
    with pytest.raises(InputError, match=r"^<run bm25>: row r2: score is missing"):
        runs_from({"bm25": run})
