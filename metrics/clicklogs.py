"""Click logs as arrays: sessions x ranks of query, document and click.

Two formats are read (plain or gzip-compressed), told apart by the file's first line:

- the Yandex Relevance Prediction sample as shipped by PyClick (``experiments/data/README.md``):
  sessions separated by ``;``, each ``query<TAB>doc1,doc2,...,docN : clicked , clicked ...``.
  A clicked id that is not among the shown documents is ignored, a repeated click counts once;
- a plain TSV, one line per shown result: ``session<TAB>query<TAB>rank<TAB>docno<TAB>clicked``
  with rank 1..N (each once per session) and clicked 0 or 1; no header. The same rows as a
  DataFrame (a notebook's log) are read by :func:`clicklog_from_table`.

Every session of a log shows the same number N of results (the models need a common depth).
Optional TREC qrels (``topic 0 docno grade``, topic = the log's query id) attach a grade to
each shown document (NaN where unjudged). Parsing is vectorized: one regular-expression scan
(or pyarrow's CSV reader) and numpy, no loop over documents.

>>> import gzip, os, tempfile
>>> from rpdi.metrics.clicklogs import read_clicklog
>>> path = os.path.join(tempfile.mkdtemp(), "log.txt")
>>> with open(path, "w") as f:
...     _ = f.write("q1\\td1,d2,d3 : d2; q1\\td3,d1,d2 :;")
>>> log = read_clicklog(path)
>>> log.clicks.astype(int).tolist(), log.docnos[log.docs].tolist()
([[0, 1, 0], [0, 0, 0]], [['d1', 'd2', 'd3'], ['d3', 'd1', 'd2']])
"""

from __future__ import annotations

import gzip
import os
import re
from dataclasses import dataclass

import numpy as np

from rpdi.metrics.errors import InputError

_TOKEN = re.compile(rb"[^\s,;:]+|[;:]")


@dataclass(frozen=True)
class ClickLog:
    """S sessions of N ranks: ``query`` (S,) and ``docs`` (S, N) are codes into ``queries`` and
    ``docnos`` (object arrays of str); ``clicks`` (S, N) bool; ``grade`` (S, N) float, NaN where
    unjudged, or None without qrels."""

    query: np.ndarray
    docs: np.ndarray
    clicks: np.ndarray
    queries: np.ndarray
    docnos: np.ndarray
    grade: np.ndarray | None = None
    source: str = "<log>"

    @property
    def depth(self) -> int:
        return self.docs.shape[1]

    def __len__(self) -> int:
        return len(self.query)

    def subset(self, rows: np.ndarray) -> "ClickLog":
        """The sessions ``rows`` (indices or a mask), vocabularies kept."""
        return ClickLog(self.query[rows], self.docs[rows], self.clicks[rows], self.queries,
                        self.docnos, None if self.grade is None else self.grade[rows], self.source)

    def pair_keys(self) -> np.ndarray:
        """(S, N) object array of "query<TAB>docno", the key of a (query, document) pair."""
        q = self.queries[self.query].astype(str)[:, None]
        return np.char.add(np.char.add(q, "\t"), self.docnos[self.docs].astype(str)).astype(object)

    def split(self, test_fraction: float, seed: int) -> tuple["ClickLog", "ClickLog"]:
        """A random train/test split of the sessions (numpy Generator keyed by ``seed``)."""
        if not 0 < test_fraction < 1:
            raise InputError(f"test fraction must lie strictly between 0 and 1, not {test_fraction}")
        rng = np.random.default_rng(np.random.SeedSequence([seed, 14]))
        test = rng.random(len(self)) < test_fraction
        return self.subset(~test), self.subset(test)


def _read_bytes(path: str) -> bytes:
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{path}: not a readable gzip file ({exc})") from None
    if not data.strip():
        raise InputError(f"{path}: empty click log")
    return data


def read_clicklog(path: str, qrels: str | None = None) -> ClickLog:
    """Read a click log (format detected from the first line: five tab-separated fields is the
    TSV, otherwise the Yandex sample format), with grades from ``qrels`` if given."""
    data = _read_bytes(path)
    first = data.lstrip().split(b"\n", 1)[0]
    log = _read_tsv(data, path) if len(first.rstrip(b"\r").split(b"\t")) == 5 else _read_yandex(data, path)
    return attach_qrels(log, qrels) if qrels else log


def _codes(values) -> tuple[np.ndarray, np.ndarray]:
    """Dictionary-encode a list of bytes or a pyarrow array: (codes, names as object array of str)."""
    if isinstance(values, list):
        names, codes = np.unique(np.array(values), return_inverse=True)
        return codes.ravel(), np.array([v.decode() for v in names], dtype=object)
    from rpdi.metrics.trec import to_numpy

    encoded = values.dictionary_encode()
    return to_numpy(encoded.indices).astype(np.int64), np.array(encoded.dictionary.to_pylist(), dtype=object)


def _read_yandex(data: bytes, path: str) -> ClickLog:
    tokens = _TOKEN.findall(data)
    codes, names = _codes(tokens)
    semi = np.flatnonzero(names == ";")
    colon = np.flatnonzero(names == ":")
    is_semi = codes == (semi[0] if len(semi) else -1)
    is_colon = codes == (colon[0] if len(colon) else -1)
    session = np.cumsum(is_semi) - is_semi  # a ';' belongs to the session it ends
    keep = ~is_semi
    codes, is_colon, session = codes[keep], is_colon[keep], session[keep]
    if len(codes) == 0:
        raise InputError(f"{path}: no sessions")
    session = np.unique(session, return_inverse=True)[1]  # empty sessions (';;') vanish
    S = session[-1] + 1
    start = np.searchsorted(session, np.arange(S))
    pos = np.arange(len(codes)) - start[session]
    n_colons = np.bincount(session, weights=is_colon, minlength=S)
    colon_pos = np.full(S, -1)
    colon_pos[session[is_colon]] = pos[is_colon]
    bad = np.flatnonzero((n_colons != 1) | (colon_pos < 2))
    if len(bad):
        raise InputError(f"{path}: session {bad[0] + 1}: expected 'query<TAB>doc,...,doc : clicks' "
                         f"with exactly one ':'")
    N = colon_pos[0] - 1
    bad = np.flatnonzero(colon_pos != N + 1)
    if len(bad):
        raise InputError(f"{path}: session {bad[0] + 1}: shows {colon_pos[bad[0]] - 1} documents, "
                         f"the first session {N}; every session must show the same number")
    shown = (pos >= 1) & (pos <= N)
    query_codes = codes[start]
    doc_codes = codes[shown].reshape(S, N)
    after = pos > N + 1  # the colon stands at N + 1; the clicks follow it
    click_session, click_code = session[after], codes[after]
    hit = doc_codes[click_session] == click_code[:, None]  # (clicks, N)
    clicks = np.zeros((S, N), bool)
    rows, ranks = np.nonzero(hit)
    clicks[click_session[rows], ranks] = True
    queries, query = np.unique(names[query_codes].astype(str), return_inverse=True)
    used, docs = np.unique(doc_codes, return_inverse=True)
    return ClickLog(query, docs.reshape(S, N), clicks, queries.astype(object), names[used], None, path)


def _read_tsv(data: bytes, path: str) -> ClickLog:
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = ["session", "query", "rank", "docno", "clicked"]
    types = {"session": pa.string(), "query": pa.string(), "rank": pa.int64(), "docno": pa.string(),
             "clicked": pa.int64()}
    try:
        table = pacsv.read_csv(io.BytesIO(data), pacsv.ReadOptions(column_names=names),
                               pacsv.ParseOptions(delimiter="\t", quote_char=False),
                               pacsv.ConvertOptions(column_types=types, strings_can_be_null=False))
    except pa.ArrowInvalid:  # scan once more, only to name the first bad line
        for i, line in enumerate(data.decode(errors="replace").splitlines(), 1):
            fields = line.split("\t")
            if len(fields) != 5:
                raise InputError(f"{path}:{i}: expected 5 tab-separated fields "
                                 f"(session query rank docno clicked), found {len(fields)}")
            for name, value in (("rank", fields[2]), ("clicked", fields[4])):
                if not value.strip().lstrip("-").isdigit():
                    raise InputError(f"{path}:{i}: {name} {value!r} is not an integer")
        raise InputError(f"{path}: cannot be read as a click-log TSV")
    return _from_columns(table, lambda i: f"{path}:{i + 1}", path)


def clicklog_from_table(data, source: str = "<click log>") -> ClickLog:
    """A click log from a DataFrame or pyarrow Table with the TSV's columns, one row per shown
    result: ``session``, ``query`` (or ``query_id``, ``q_id``, ``qid``), ``rank`` (1..N),
    ``doc_id`` (or ``docno``) and ``clicked`` (0/1 or bool); ids strings or integers. Errors
    name the column or the row (a DataFrame's index label) as the TSV reader names the line.

    >>> import pandas as pd
    >>> log = clicklog_from_table(pd.DataFrame({"session": [1, 1, 2, 2], "query": "q1", "rank": [1, 2, 1, 2],
    ...                                         "docno": ["d1", "d2", "d2", "d1"], "clicked": [0, 1, 0, 0]}))
    >>> log.clicks.astype(int).tolist(), log.docnos[log.docs].tolist()
    ([[0, 1], [0, 0]], [['d1', 'd2'], ['d2', 'd1']])
    """
    import pyarrow as pa

    from rpdi.metrics import frames

    if not (isinstance(data, pa.Table) or hasattr(data, "itertuples")):
        raise InputError(f"{source}: expected a click log's path, a DataFrame or a pyarrow Table, not {type(data).__name__}")
    wanted = (("session", ("session",), True), ("query", ("query", *frames.QUERY), True), ("rank", ("rank",), False),
              ("docno", frames.DOC, True), ("clicked", ("clicked",), False))
    data, labels, names = frames.as_table(data, source, tuple(c for _, choices, _ in wanted for c in choices))
    columns = {}
    for name, choices, ids in wanted:
        found = frames.pick_column(names, choices, name, source)
        column = data.column(found).combine_chunks()
        kind = column.type
        fits = pa.types.is_integer(kind) or (pa.types.is_string(kind) or pa.types.is_large_string(kind) if ids
                                             else name == "clicked" and pa.types.is_boolean(kind))
        if not fits:
            raise InputError(f"{source}: column {found} holds {frames.described_type(kind)}, not "
                             f"{'ids (strings or integers)' if ids else 'integers'}")
        if column.null_count:
            raise InputError(f"{source}: {frames.row_name(labels, frames.first_null(column))}: {found} is missing")
        columns[name] = column.cast(pa.string() if ids else pa.int64())
    table = pa.table(columns)
    return _from_columns(table, lambda i: f"{source}: {frames.row_name(labels, i)}", source)


def _from_columns(table, at, source: str) -> ClickLog:
    """The click log of a table with columns session, query, docno (strings), rank and clicked
    (integers); ``at(i)`` names row i in an error."""
    from rpdi.metrics.trec import to_numpy

    rank = to_numpy(table["rank"]).astype(np.int64)
    clicked = to_numpy(table["clicked"])
    session, _ = _codes(table["session"].combine_chunks())
    order = np.lexsort((rank, session))
    bad = np.flatnonzero((clicked != 0) & (clicked != 1))
    if len(bad):
        raise InputError(f"{at(bad[0])}: clicked must be 0 or 1, not {clicked[bad[0]]}")
    bad = np.flatnonzero(rank < 1)
    if len(bad):
        raise InputError(f"{at(bad[0])}: rank must be at least 1, not {rank[bad[0]]}")
    counts = np.bincount(session)
    N = int(counts[0]) if len(counts) else 0
    s_sorted, r_sorted = session[order], rank[order]
    start = np.searchsorted(s_sorted, s_sorted)
    expected = np.arange(len(order)) - start + 1
    wrong = np.flatnonzero((counts[s_sorted] != N) | (r_sorted != expected))
    if len(wrong):
        raise InputError(f"{at(int(order[wrong[0]]))}: session {table['session'][int(order[wrong[0]])].as_py()!r} must "
                         f"show ranks 1..{N} once each (as its first session does)")
    S = len(counts)
    if S == 0:
        raise InputError(f"{source}: empty click log")
    query_col, queries = _codes(table["query"].combine_chunks())
    q = query_col[order].reshape(S, N)
    bad = np.flatnonzero((q != q[:, :1]).any(1))
    if len(bad):
        raise InputError(f"{source}: session {bad[0] + 1}: more than one query in a session")
    doc_col, docnos = _codes(table["docno"].combine_chunks())
    return ClickLog(q[:, 0], doc_col[order].reshape(S, N), clicked[order].reshape(S, N).astype(bool),
                    queries, docnos, None, source)


def load_clicklog(log, qrels=None) -> ClickLog:
    """A click log from a :class:`ClickLog`, a file's path (:func:`read_clicklog`) or a table
    (:func:`clicklog_from_table`), with the grades of ``qrels`` (a path, or anything
    :func:`metrics.evaluate.load_qrels` takes) if given."""
    if isinstance(log, (str, os.PathLike)):
        log = read_clicklog(os.fspath(log))
    elif not isinstance(log, ClickLog):
        log = clicklog_from_table(log)
    return attach_qrels(log, qrels) if qrels is not None else log


def attach_qrels(log: ClickLog, qrels) -> ClickLog:
    """The log with the grade of every shown document from qrels (NaN where unjudged): a TREC
    qrels path, or anything :func:`metrics.evaluate.load_qrels` takes (a DataFrame, a dict)."""
    import pandas as pd

    from rpdi.metrics.evaluate import load_qrels

    q = load_qrels(qrels)
    keys = pd.Index(np.char.add(np.char.add(np.asarray(q.topic, dtype=str), "\t"),
                                np.asarray(q.docno, dtype=str)))
    if not keys.is_unique:
        keys, first = np.unique(keys, return_index=True)
        grades = np.asarray(q.grade, float)[first]
        keys = pd.Index(keys)
    else:
        grades = np.asarray(q.grade, float)
    where = keys.get_indexer(log.pair_keys().ravel()).reshape(log.docs.shape)
    grade = np.where(where >= 0, grades[where], np.nan)
    grade = np.where(grade < 0, np.nan, grade)
    return ClickLog(log.query, log.docs, log.clicks, log.queries, log.docnos, grade, log.source)
