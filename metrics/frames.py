"""Qrels and runs from where researchers keep them: pandas DataFrames, pyarrow tables,
ir_measures' namedtuples (``Qrel``, ``ScoredDoc``), nested dicts, and files (TREC, TSV or CSV
with a header row, parquet), each as rpdi's :class:`~metrics.trec.Qrels` and
:class:`~metrics.trec.Run`.

Columns are named as ir_measures names them (``query_id``, ``doc_id``, ``relevance`` in qrels,
``score`` in runs; an ``iteration`` column is ignored, except in diversity qrels, where it is the
subtopic unless a ``subtopic`` column is given), as ranx does (``q_id``, ``doc_id`` and
``score``, which in a ranx qrels frame is the grade) or as PyTerrier does (``qid``, ``docno``,
``label``). Ids are strings or integers (read as their decimal text, as a TREC file writes them);
grades and scores are numbers. A run table may hold several runs told apart by a ``run`` column;
a ``rank`` column is ignored, as trec_eval ignores a run file's ranks (documents are ranked by
score). A missing column, ids or values of the wrong type, a missing or infinite value and a
(query, document) pair given twice raise :class:`~metrics.errors.InputError` naming the column
or row, as the file readers name the line.

>>> import pandas as pd
>>> qrels = qrels_from(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]}))
>>> qrels.docno.to_pylist(), qrels.grade.tolist()
(['a', 'b'], [1.0, 0.0])
>>> [r.name for r in runs_from(pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "score": [2.0, 1.0],
...                                          "run": ["bm25", "dense"]}))]
['bm25', 'dense']
"""

from __future__ import annotations

import os
from typing import Mapping

import numpy as np

from rpdi.metrics.diversity import DiversityQrels
from rpdi.metrics.errors import InputError
from rpdi.metrics.trec import Qrels, Run, call_function, encode, qrels_from_dict, read_qrels, read_run
from rpdi.metrics.trec import run_from_dict, run_name, to_numpy

QUERY = ("query_id", "q_id", "qid")  # ir_measures', ranx's and PyTerrier's names of the query column
DOC = ("doc_id", "docno")
GRADE = ("relevance", "label", "score")  # in that order: a ranx qrels frame's grade is its "score"
SCORE = ("score",)
SUBTOPIC = ("subtopic", "iteration")  # of diversity qrels
RUN_COLUMN = "run"
IRDS_PREFIX = "irds:"


def qrels_from(data, source: str | None = None) -> Qrels:
    """Qrels from a :class:`Qrels` (returned as it is), a DiversityQrels (each document's largest
    grade), a DataFrame or pyarrow Table, an iterable of ir_measures ``Qrel`` namedtuples,
    ``{query: {doc: grade}}``, ``irds:DATASET_ID`` (:mod:`metrics.irds`) or a file's path (TSV or
    CSV with a header row naming the columns, parquet, else a TREC qrels file)."""
    if isinstance(data, Qrels):
        return data
    if isinstance(data, DiversityQrels):
        return data.topic_qrels()
    if isinstance(data, Mapping):
        _check_not_nested(data, source or "<qrels>")
        return qrels_from_dict(data, source or "<qrels>")
    if isinstance(data, str) and data.startswith(IRDS_PREFIX):
        from rpdi.metrics.irds import irds_qrels

        return irds_qrels(data[len(IRDS_PREFIX):])
    if isinstance(data, (str, os.PathLike)):
        table = read_table_file(os.fspath(data))
        return read_qrels(data) if table is None else qrels_from_table(table, os.fspath(data))
    return qrels_from_table(data, source or "<qrels>")


def _check_not_nested(data: Mapping, source: str) -> None:
    """InputError if ``{topic: {docno: grade}}`` holds a dict where a grade belongs: diversity
    qrels ``{topic: {subtopic: {docno: grade}}}``, which plain measures alone do not read (as a
    diversity qrels file, read as plain qrels, has a document twice)."""
    for topic, docs in data.items():
        for key, value in docs.items() if isinstance(docs, Mapping) else ():
            if isinstance(value, Mapping):
                raise InputError(f"{source}: topic {topic}: {key!s} holds a dict {{docno: grade}}, as diversity "
                                 f"qrels {{topic: {{subtopic: {{docno: grade}}}}}} do; only with a diversity or "
                                 f"intent-aware measure (alpha-nDCG@20, ERR-IA@20, X-IA) are they read so, the "
                                 f"other measures then seeing each document's largest grade")


def runs_from(data, source: str | None = None) -> list[Run]:
    """The runs of one thing that holds them: a :class:`Run`, a DataFrame or pyarrow Table
    (several runs told apart by a ``run`` column; one without it is named ``run``), an iterable
    of ir_measures ``ScoredDoc`` namedtuples (one run), ``{name: {query: {doc: score}}}`` or one
    run's ``{query: {doc: score}}``, ``{name: DataFrame}``, or a file's path (TSV/CSV with a
    header row, parquet, else a TREC run file). Several of these, in a list:
    :func:`metrics.run_files.load_runs`, which reads each with this function (TREC run files
    together)."""
    if isinstance(data, Run):
        return [data]
    if isinstance(data, Mapping):
        return _runs_from_mapping(data)
    if isinstance(data, (str, os.PathLike)):
        path = os.fspath(data)
        table = read_table_file(path)
        return [read_run(path)] if table is None else runs_from_table(table, run_name(path), path)
    return runs_from_table(data, "run", source)


def _runs_from_mapping(data: Mapping) -> list[Run]:
    first = next(iter(data.values()), None)
    if isinstance(first, Mapping) and not any(isinstance(v, Mapping) for v in first.values()):
        return [run_from_dict("run", data)]  # one run: {query: {doc: score}}
    runs = []
    for name, run in data.items():
        if isinstance(run, Mapping):
            runs.append(run_from_dict(str(name), run))
        else:
            found = runs_from_table(run, str(name), f"<run {name}>")
            if len(found) > 1:
                raise InputError(f"<run {name}>: holds several runs (a {RUN_COLUMN} column); give it alone")
            runs += found
    return runs


def qrels_from_table(data, source: str = "<qrels>") -> Qrels:
    """Qrels from a DataFrame, a pyarrow Table or an iterable of ``Qrel`` namedtuples."""
    table, labels, names = as_table(data, source)
    topic = _ids(table, pick_column(names, QUERY, "query", source), source, labels)
    docno = _ids(table, pick_column(names, DOC, "document", source), source, labels)
    grade = _numbers(table, pick_column(names, GRADE, "relevance", source), source, labels)
    _check_unique(topic, docno, source, labels, np.arange(len(grade)))
    return Qrels(topic, docno, grade, source)


def diversity_qrels_from_table(data, source: str = "<diversity qrels>") -> DiversityQrels:
    """Diversity qrels from a DataFrame, a pyarrow Table or ``Qrel`` namedtuples whose
    ``subtopic`` column (else ``iteration``, which ir_measures' diversity measures read as the
    subtopic) names each judgment's subtopic."""
    table, labels, names = as_table(data, source)
    topic = _ids(table, pick_column(names, QUERY, "query", source), source, labels)
    subtopic = _ids(table, pick_column(names, SUBTOPIC, "subtopic", source), source, labels)
    docno = _ids(table, pick_column(names, DOC, "document", source), source, labels)
    grade = _numbers(table, pick_column(names, GRADE, "relevance", source), source, labels)
    _check_unique(topic, docno, source, labels, np.arange(len(grade)), subtopic)
    return DiversityQrels(topic, subtopic, docno, grade, source)


def runs_from_table(data, name: str = "run", source: str | None = None) -> list[Run]:
    """The runs of a DataFrame, a pyarrow Table or an iterable of ``ScoredDoc`` namedtuples: one
    named ``name``, or one per value of its ``run`` column (in the order first seen)."""
    source = source or f"<run {name}>"
    table, labels, names = as_table(data, source)
    topic = _ids(table, pick_column(names, QUERY, "query", source), source, labels)
    docno = _ids(table, pick_column(names, DOC, "document", source), source, labels)
    score = _numbers(table, pick_column(names, SCORE, "score", source), source, labels)
    if RUN_COLUMN not in names:
        _check_unique(topic, docno, source, labels, np.arange(len(score)))
        return [Run(name, topic, docno, score, source)]
    run = _ids(table, RUN_COLUMN, source, labels)
    codes = to_numpy(run.indices)
    _, first_seen = np.unique(codes, return_index=True)
    runs = []
    for code in codes[np.sort(first_seen)].tolist():  # a loop over the runs, not the rows
        rows = np.flatnonzero(codes == code)
        take = call_function("array_take", topic, rows), call_function("array_take", docno, rows)
        _check_unique(*take, source, labels, rows)
        runs.append(Run(run.dictionary[code].as_py(), *take, score[rows], source))
    return runs


def is_table(data) -> bool:
    return hasattr(data, "column_names") or hasattr(data, "itertuples")


KNOWN = (*QUERY, *DOC, *GRADE, *SUBTOPIC, RUN_COLUMN)  # the columns qrels and runs are read from


def as_table(data, source: str, known: tuple[str, ...] = KNOWN):
    """A pyarrow Table of the ``known`` columns of ``data`` (the others, a PyTerrier frame's
    text or query_toks say, are not converted), the row labels errors name (a DataFrame's
    index when its labels are unique; else None: positions) and the names of all its columns."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data, None, data.column_names
    if hasattr(data, "itertuples"):  # a pandas DataFrame
        names = [str(c) for c in data.columns]
        data = data[[c for c in data.columns if c in known]]
        try:
            table = pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise InputError(f"{source}: a column holds values of mixed types: {str(exc).splitlines()[0]}") from None
        return table, data.index if data.index.is_unique else None, names
    if isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
        raise InputError(f"{source}: expected a DataFrame, a pyarrow Table, namedtuples, a dict or a path, "
                         f"not {type(data).__name__}")
    import pandas as pd

    rows = list(data)
    if rows and not all(hasattr(r, "_fields") for r in rows[:1]):
        raise InputError(f"{source}: expected namedtuples (ir_measures' Qrel or ScoredDoc), "
                         f"not {type(rows[0]).__name__}")
    return as_table(pd.DataFrame(rows), source, known)


def pick_column(names, choices: tuple[str, ...], what: str, source: str) -> str:
    found = [c for c in choices if c in names]
    if not found:
        raise InputError(f"{source}: no {what} column (expected one of {', '.join(choices)}; "
                         f"found {', '.join(map(str, names)) or 'none'})")
    return found[0]


def row_name(labels, i: int) -> str:
    return f"row {i if labels is None else labels[i]}"


def described_type(kind) -> str:
    """A pyarrow type in a user's words: text, floats, booleans, or pyarrow's name of it."""
    import pyarrow as pa

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    return "floats" if pa.types.is_floating(kind) else "booleans" if pa.types.is_boolean(kind) else str(kind)


def first_null(column) -> int:
    return int(np.flatnonzero(to_numpy(call_function("is_null", column)))[0])


def _ids(table, name: str, source: str, labels):
    """A column of ids as a dictionary array of strings (integers as their decimal text)."""
    import pyarrow as pa

    column = table.column(name).combine_chunks()
    if not len(column):  # pandas types an empty column as it likes (float64, object)
        column = pa.array([], pa.string())
    kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)):
        raise InputError(f"{source}: column {name} holds {described_type(kind)}, not ids (strings or integers)")
    if column.null_count:
        raise InputError(f"{source}: {row_name(labels, first_null(column))}: {name} is missing")
    codes = encode(column)
    empty = np.flatnonzero(to_numpy(call_function("binary_length", codes.dictionary)) == 0)
    if empty.size:
        row = int(np.flatnonzero(to_numpy(codes.indices) == empty[0])[0])
        raise InputError(f"{source}: {row_name(labels, row)}: {name} is empty")
    return codes


def _numbers(table, name: str, source: str, labels) -> np.ndarray:
    import pyarrow as pa

    column = table.column(name).combine_chunks()
    if not len(column):  # pandas types an empty column as it likes (object)
        return np.empty(0)
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        raise InputError(f"{source}: column {name} holds {described_type(column.type)}, not numbers")
    if column.null_count:
        raise InputError(f"{source}: {row_name(labels, first_null(column))}: {name} is missing (NaN or None)")
    values = to_numpy(column).astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise InputError(f"{source}: {row_name(labels, int(bad[0]))}: {name} {values[bad[0]]} is not a finite number")
    return values


def _check_unique(topic, docno, source: str, labels, rows: np.ndarray, subtopic=None) -> None:
    """InputError naming the first row whose (query, [subtopic,] document) an earlier row has;
    ``rows`` are the rows' numbers in the whole table."""
    key = to_numpy(topic.indices).astype(np.int64)
    if subtopic is not None:
        key = key * max(len(subtopic.dictionary), 1) + to_numpy(subtopic.indices)
    key = key * max(len(docno.dictionary), 1) + to_numpy(docno.indices)
    order = np.argsort(key, kind="stable")
    repeated = np.flatnonzero(key[order][1:] == key[order][:-1])
    if not repeated.size:
        return
    second = int(order[repeated + 1].min())
    first = int(np.flatnonzero(key == key[second])[0])
    within = "" if subtopic is None else f" subtopic {subtopic[second].as_py()}"
    raise InputError(f"{source}: {row_name(labels, int(rows[second]))}: document {docno[second].as_py()} appears twice "
                     f"for query {topic[second].as_py()}{within} (first at {row_name(labels, int(rows[first]))})")


_TABLE_SUFFIXES = (".parquet", ".tsv", ".csv")


def read_table_file(path: str, header_only: bool = False):
    """The table of a parquet file or of a TSV/CSV file whose first line names the columns (a
    query column among them); None for any other file (a TREC file). ``header_only``: only
    whether it is such a file (True or None), nothing read but the first line."""
    base = path[:-3] if path.endswith(".gz") else path
    suffix = os.path.splitext(base)[1].lower()
    if suffix not in _TABLE_SUFFIXES:
        return None
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    if suffix == ".parquet":
        if header_only:
            return True
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path)
        except Exception as exc:  # pyarrow's many error types: a file it cannot read as parquet
            raise InputError(f"{path}: cannot be read as parquet: {str(exc).splitlines()[0]}") from None
    import gzip

    with (gzip.open if path.endswith(".gz") else open)(path, "rt", errors="replace") as fh:
        header = fh.readline()
    delimiter = "\t" if suffix == ".tsv" else ","
    if not any(name in QUERY for name in header.rstrip("\r\n").split(delimiter)):
        return None
    if header_only:
        return True
    import pyarrow as pa
    import pyarrow.csv as pcsv

    ids = {name: pa.string() for name in QUERY + DOC + (RUN_COLUMN, "iteration")}
    try:
        return pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter=delimiter),
                             convert_options=pcsv.ConvertOptions(column_types=ids, strings_can_be_null=False))
    except pa.ArrowInvalid as exc:
        raise InputError(f"{path}: {str(exc).splitlines()[0]}") from None
