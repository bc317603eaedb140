"""Reading TREC qrels and runs, exactly and fast.

qrels lines are ``topic iter docno grade``; run lines are ``topic Q0 docno rank score tag``;
fields are separated by white space and files may be gzip-compressed. The rank column and the
order of lines are ignored: ranking order is decided later, from the scores (see
:mod:`metrics.rankings`).

The fast path hands the bytes to pyarrow's CSV reader (single-space separated files, the
common case) or to pandas' C parser (any other white space). Whenever either of them refuses
the file or the parsed values fail a check, the file is scanned once more line by line, only to
name the first offending line: an error costs time, a good file does not.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import stat
import zlib
from dataclasses import dataclass
from typing import Mapping

import numpy as np


class InputError(ValueError):
    """Bad input: the message is one line naming the file, line, key or measure at fault."""


class _Columns:
    """Qrels and runs read from a file keep ``topic`` and ``docno`` as pyarrow dictionary arrays
    (what :mod:`metrics.rankings` joins on); the object arrays of str are built on first use."""

    def __getattr__(self, attr):
        arrow = self.__dict__.get("_arrow")
        if arrow is None or attr not in arrow:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
        column = arrow[attr]
        values = np.array(column.dictionary.to_pylist(), dtype=object)[to_numpy(column.indices)]
        object.__setattr__(self, attr, values)
        return values

    @classmethod
    def _from_columns(cls, topic, docno, **fields):
        obj = object.__new__(cls)
        for name, value in fields.items():
            object.__setattr__(obj, name, value)
        object.__setattr__(obj, "_arrow", {"topic": topic, "docno": docno})
        return obj


def encoded_columns(table: "Qrels | Run"):
    """``topic`` and ``docno`` of qrels or a run as pyarrow dictionary arrays (made if need be)."""
    arrow = table.__dict__.get("_arrow")
    if arrow is not None:
        return arrow["topic"], arrow["docno"]
    return _encode(table.topic), _encode(table.docno)


def to_numpy(array) -> np.ndarray:
    """A pyarrow array of numbers without nulls as numpy, zero-copy (``Array.to_numpy`` would
    import pandas, a third of a second)."""
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "combine_chunks"):
        array = array.combine_chunks()
    dtype = np.dtype(_NUMERIC.get(str(array.type), object))
    if dtype == object or array.null_count:
        return array.to_numpy(zero_copy_only=False)
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array),
                         offset=array.offset * dtype.itemsize)


_NUMERIC = {"double": "float64", "float": "float32", "int8": "int8", "int16": "int16", "int32": "int32",
            "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64"}


def _encode(values):
    import pyarrow as pa

    try:
        array = pa.array(values, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = pa.array(np.asarray(values).astype(str), type=pa.string())
    return array.dictionary_encode()


@dataclass(frozen=True)
class Qrels(_Columns):
    """Relevance judgments as flat parallel arrays (one entry per judged document)."""

    topic: np.ndarray  # object array of str
    docno: np.ndarray  # object array of str
    grade: np.ndarray  # float64; negative means "in the pool but not judged" (trec_eval)
    source: str = "<qrels>"


@dataclass(frozen=True)
class Run(_Columns):
    """One system's retrieved documents as flat parallel arrays, in file order."""

    name: str
    topic: np.ndarray  # object array of str
    docno: np.ndarray  # object array of str
    score: np.ndarray  # float64
    source: str = "<run>"
    words: np.ndarray | None = None  # float64 document lengths in words, if the run gives them


# (kind, fields per line, number columns, their names, the layout named in messages)
_QRELS = ("qrels", 4, (3,), ("grade",), "topic iter docno grade")
_RUN = ("run", 6, (4,), ("score",), "topic Q0 docno rank score tag")
_RUN_WORDS = ("run", 7, (4, 6), ("score", "document length"), "topic Q0 docno rank score tag words")


def run_name(path: str | os.PathLike) -> str:
    """The run's name: its file name without directory and extension (``.gz`` included)."""
    base = os.path.basename(os.fspath(path))
    if base.endswith(".gz"):
        base = base[:-3]
    stem, _ = os.path.splitext(base)
    return stem or base


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a TREC qrels file (plain or .gz).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
    >>> _ = p.write_text("1 0 d1 2\\n1 0 d2 0\\n")
    >>> read_qrels(p).grade.tolist()
    [2.0, 0.0]
    """
    topic, docno, (grade,) = _read_table(os.fspath(path), _QRELS)
    return Qrels._from_columns(topic, docno, grade=grade, source=os.fspath(path))


def read_run(path: str | os.PathLike, name: str | None = None, threads: bool = True) -> Run:
    """Read a TREC run file (plain or .gz); the name defaults to :func:`run_name`.

    A seventh column, on every line, gives each document's length in words (for time-based
    users such as TBG's); its first line decides.
    """
    topic, docno, values = _read_table(os.fspath(path), _RUN, threads)
    return Run._from_columns(topic, docno, name=name or run_name(path), score=values[0],
                             words=values[1] if len(values) > 1 else None, source=os.fspath(path))


def qrels_from_dict(judgments: Mapping[str, Mapping[str, float]], source: str = "<qrels>") -> Qrels:
    """Qrels from ``{topic: {docno: grade}}``, the form pytrec_eval and ir_measures accept."""
    topic, docno, grade = _flatten(judgments, source, "grade")
    return Qrels(topic, docno, grade, source)


def run_from_dict(name: str, scores: Mapping[str, Mapping[str, float]]) -> Run:
    """A run from ``{topic: {docno: score}}``."""
    topic, docno, score = _flatten(scores, name, "score")
    return Run(name, topic, docno, score, name)


def _flatten(nested, source, what):
    if not isinstance(nested, Mapping):
        raise InputError(f"{source}: expected a dict of dicts {{topic: {{docno: {what}}}}}")
    topics, docnos, values = [], [], []
    for t, docs in nested.items():
        if not isinstance(docs, Mapping):
            raise InputError(f"{source}: topic {t}: expected a dict {{docno: {what}}}")
        for d, v in docs.items():
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise InputError(f"{source}: topic {t} document {d}: {what} {v!r} is not a number") from None
            if not math.isfinite(v):
                raise InputError(f"{source}: topic {t} document {d}: {what} {v!r} is not finite")
            topics.append(str(t))
            docnos.append(str(d))
            values.append(v)
    if not values:
        raise InputError(f"{source}: empty")
    return (np.array(topics, dtype=object), np.array(docnos, dtype=object),
            np.array(values, dtype=np.float64))


def _load_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            if stat.S_ISCHR(os.fstat(fh.fileno()).st_mode):  # /dev/zero, a terminal: no end to read
                raise InputError(f"{path}: is a device, not a file")
            data = fh.read()
    except MemoryError:
        raise InputError(f"{path}: too large to read into memory") from None
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except MemoryError:
            raise InputError(f"{path}: too large to decompress into memory") from None
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: broken gzip data: {exc}") from None
    return data


def _read_table(path: str, layout, threads: bool = True):
    kind = layout[0]
    data = _load_bytes(path)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(f"{path}:{line}: binary data, not a TREC {kind} file")
    try:
        data.isascii() or data.decode("utf-8")  # ASCII (the usual case) is UTF-8: no copy
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 text, not a TREC {kind} file") from None
    if not data or data.isspace():  # data.strip() would copy the file
        raise InputError(f"{path}: empty {kind} file")
    if layout is _RUN and _first_line_fields(data) == 7:
        layout = _RUN_WORDS
    _, ncols, value_cols, value_names, fields = layout
    # pyarrow's single-space parser refuses lines with the wrong number of fields itself
    checked = b"\t" not in data and b"\r" not in data
    try:
        try:
            topic, docno, values = _parse_fast(data, ncols, value_cols, threads)
        except Exception:  # runs of spaces or leading blanks: retry with the white-space parser
            checked = False
            topic, docno, values = _parse_fast(data.replace(b" ", b"\t"), ncols, value_cols, threads)
        ok = (all(np.isfinite(v).all() for v in values) and all((v >= 0).all() for v in values[1:])
              and (checked or _fields_ok(data, ncols))
              and not _has_duplicates(topic, docno))
    except Exception:  # any refusal by the fast parsers is diagnosed below
        ok = False
    if ok:
        return topic, docno, values
    raise InputError(_diagnose(path, data, ncols, value_cols, value_names, fields))


def _fields_ok(data: bytes, ncols: int) -> bool:
    """Every non-blank line has exactly ncols white-space separated fields (the white-space
    parser pads short lines and folds long ones instead of refusing them)."""
    b = np.frombuffer(data, dtype=np.uint8)
    blank = b <= 32  # space, tab, CR, LF (and other control bytes)
    starts = np.flatnonzero(~blank[1:] & blank[:-1]) + 1  # a non-blank byte after a blank one
    if len(b) and not blank[0]:
        starts = np.concatenate(([0], starts))
    newlines = np.flatnonzero(b == 10)
    counts = np.bincount(np.searchsorted(newlines, starts), minlength=len(newlines) + 1)
    return bool(np.isin(counts, (0, ncols)).all())


def _first_line_fields(data: bytes) -> int:
    """How many white-space separated fields the first non-blank line has."""
    import re

    start = re.search(rb"\S", data)
    if start is None:
        return 0
    end = data.find(b"\n", start.start())
    return len(data[start.start(): end if end >= 0 else len(data)].split())


def _parse_fast(data: bytes, ncols: int, value_cols: tuple, threads: bool = True):
    names = [f"c{i}" for i in range(ncols)]
    if b"\t" not in data and b"\r" not in data:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(column_names=names, use_threads=threads),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(
                include_columns=["c0", "c2"] + [f"c{c}" for c in value_cols],
                column_types={"c0": pa.string(), "c2": pa.string(), **{f"c{c}": pa.float64() for c in value_cols}},
                strings_can_be_null=False,
            ),
        )
        topic, docno = (table.column(c).combine_chunks().dictionary_encode() for c in ("c0", "c2"))
        values = [to_numpy(table.column(f"c{c}")) for c in value_cols]
    else:
        import pandas as pd  # only here: irregular white space needs pandas' C parser

        frame = pd.read_csv(
            io.BytesIO(data), sep=r"\s+", header=None, names=names, usecols=[0, 2, *value_cols],
            dtype={0: object, 2: object, **{c: np.float64 for c in value_cols}}, engine="c", na_filter=False,
            quoting=3,
        )
        topic, docno = (_encode(frame[names[i]].to_numpy()) for i in (0, 2))
        values = [frame[names[c]].to_numpy() for c in value_cols]
    return topic, docno, [np.asarray(v, dtype=np.float64) for v in values]


def _has_duplicates(topic, docno) -> bool:
    """Whether a (topic, docno) pair occurs twice; both are pyarrow dictionary arrays."""
    n, n_docs = len(docno), len(docno.dictionary)
    if n_docs == n:  # every docno occurs once
        return False
    key = to_numpy(topic.indices).astype(np.int64) * n_docs + to_numpy(docno.indices)
    size = len(topic.dictionary) * n_docs
    if size <= 8 * n + 1024:
        return bool(np.count_nonzero(np.bincount(key, minlength=size)) < n)
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def _diagnose(path, data: bytes, ncols, value_cols, value_names, fields) -> str:
    """Scan line by line for the first problem; only runs once the fast path refused."""
    seen: dict[tuple[str, str], int] = {}
    for lineno, raw in enumerate(data.decode("utf-8").split("\n"), 1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != ncols:
            return f"{path}:{lineno}: expected {ncols} fields ({fields}), found {len(parts)}"
        for col, name in zip(value_cols, value_names):
            text = parts[col]
            try:
                if "_" in text:  # float() accepts 1_000, the fast parsers do not
                    raise ValueError(text)
                value = float(text)
            except ValueError:
                return f"{path}:{lineno}: {name} {text!r} is not a number"
            if not math.isfinite(value):
                return f"{path}:{lineno}: {name} {text!r} is not a finite number"
            if col != value_cols[0] and value < 0:
                return f"{path}:{lineno}: {name} {text!r} is negative"
        key = (parts[0], parts[2])
        if key in seen:
            return (f"{path}:{lineno}: document {parts[2]} appears twice for topic {parts[0]}"
                    f" (first at line {seen[key]})")
        seen[key] = lineno
    return f"{path}: cannot be parsed as a TREC file ({fields})"
