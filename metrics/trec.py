"""Reading TREC qrels and runs as trec_eval 10.0 reads them, exactly and fast.

qrels lines are ``topic iter docno grade``; run lines are ``topic Q0 docno rank score tag``,
and anything after the tag is ignored (as trec_eval does). Fields are separated by white space,
a line whose first non-blank character is ``#`` is a comment, and files may be gzip-compressed
(or ``-``: standard input). Grades are kept as written (trec_eval reads 1.5 as 1: measures named
as trec_eval names them use the integer part, see :mod:`metrics.evaluate`). The rank column and the order of lines are
ignored: ranking order is decided later, from the scores (see :mod:`metrics.rankings`).

Files with single spaces between fields (the common case) are parsed by pyarrow's CSV reader (a
plain run file from the disk itself, a block at a time: :mod:`metrics.plain_text`); files with
tabs, runs of blanks or extra fields by pandas' white-space parser. Whenever a file
fails a check, it is scanned once more line by line, only to name the first offending line: an
error costs time, a good file does not.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import stat
import sys
import zlib
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.plain_text import has_empty_field, plain


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


def encode(values):
    """Strings (a sequence, numpy array or pyarrow array) as a pyarrow dictionary array of
    int32 indices into strings, the one type :mod:`metrics.rankings` joins."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.DictionaryArray):
        if values.type == pa.dictionary(pa.int32(), pa.string()):
            return values
        values = values.dictionary.take(values.indices)  # other index or value types: encoded anew
    if isinstance(values, pa.Array):
        return call_function("dictionary_encode", values.cast(pa.string()))
    try:
        array = pa.array(values, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = pa.array(np.asarray(values).astype(str), type=pa.string())
    return call_function("dictionary_encode", array)


@dataclass(frozen=True)
class Qrels:
    """Relevance judgments as parallel columns, one entry per judged document. ``topic`` and
    ``docno`` are pyarrow dictionary arrays (what :mod:`metrics.rankings` joins on); any
    sequence of strings given is encoded."""

    topic: object
    docno: object
    grade: np.ndarray  # float64; negative means "in the pool but not judged" (trec_eval)
    source: str = "<qrels>"
    # trec_eval's integer grades (strtol's reading of the text: 1e+8 is 1) where they are not
    # the grades' integer parts, i.e. some grade of the file has an exponent; else None
    whole: np.ndarray | None = None
    # the metrics.docnos.hashes of the docno dictionary's entries, where reading computed them
    # (metrics.docnos.encoded), for the join's table of them (metrics.docnos.DocnoTable) to reuse
    docno_hashes: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "topic", encode(self.topic))
        object.__setattr__(self, "docno", encode(self.docno))


@dataclass(frozen=True)
class Run:
    """One system's retrieved documents as parallel columns, in file order (``topic`` and
    ``docno`` as in :class:`Qrels`, but a docno dictionary may repeat an entry: a run read alone
    from a file by pyarrow's reader has an entry per line, a docno retrieved for two topics
    twice, :func:`read_run`). ``tag`` is the run tag of the file's last line (trec_eval's
    ``runid``); ``words`` are document lengths in words, given only by an explicit lengths file
    (:func:`read_lengths`, :func:`with_lengths`). ``docno_hashes``: the
    :func:`metrics.docnos.hashes` of the docno dictionary's entries, where reading computed them
    (a run read alone: its check for duplicates), for the join with the qrels to reuse."""

    name: str
    topic: object
    docno: object
    score: np.ndarray  # float64
    source: str = "<run>"
    words: np.ndarray | None = None
    tag: str | None = None
    docno_hashes: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "topic", encode(self.topic))
        object.__setattr__(self, "docno", encode(self.docno))

    @property
    def runid(self) -> str:
        """The name trec_eval prints as ``runid``: the run tag, else the run's name."""
        return self.tag or self.name


@dataclass(frozen=True)
class Layout:
    """A white-space separated line format: its field names, which fields are read as text and
    which as numbers, and how many fields a line may have (more than ``fields`` are ignored)."""

    kind: str
    fields: tuple[str, ...]
    text: tuple[str, ...]
    numbers: tuple[str, ...]
    max_fields: int | None  # None: any number of trailing fields
    key: tuple[str, ...] = ("topic", "docno")  # the text fields no two lines may share

    def fields_text(self) -> str:
        return " ".join(self.fields) + (" [ignored ...]" if self.max_fields is None else "")


QRELS = Layout("qrels", ("topic", "iter", "docno", "grade"), ("topic", "docno"), ("grade",), 4)
RUN = Layout("run", ("topic", "Q0", "docno", "rank", "score", "tag"), ("topic", "docno"), ("score",), None)
LENGTHS = Layout("document lengths", ("docno", "words"), ("docno",), ("words",), 2, ("docno",))
# diversity qrels as ndeval reads them: the second column is the subtopic (:mod:`metrics.diversity`)
DIVERSITY_QRELS = Layout("diversity qrels", ("topic", "subtopic", "docno", "grade"), ("topic", "subtopic", "docno"),
                         ("grade",), 4, ("topic", "subtopic", "docno"))
INTENTS = Layout("intent probabilities", ("topic", "subtopic", "probability"), ("topic", "subtopic"),
                 ("probability",), 3, ("topic", "subtopic"))


def run_name(path: str | os.PathLike) -> str:
    """The run's name: its file name without directory and extension (``.gz`` included)."""
    base = os.path.basename(os.fspath(path))
    if base.endswith(".gz"):
        base = base[:-3]
    stem, _ = os.path.splitext(base)
    return stem or base


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a TREC qrels file (plain, .gz, or ``-`` for standard input).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
    >>> _ = p.write_text("# judged by hand\\n1 0 d1 2\\n1 0 d2 0.5\\n")
    >>> read_qrels(p).grade.tolist()
    [2.0, 0.5]
    """
    columns, _ = _read_table(os.fspath(path), QRELS)
    return Qrels(columns["topic"], columns["docno"], columns["grade"], source=os.fspath(path),
                 whole=columns.get("whole"), docno_hashes=columns.get("docno_hashes"))


def read_run(path: str | os.PathLike, name: str | None = None, threads: bool = True) -> Run:
    """Read a TREC run file (plain, .gz, or ``-`` for standard input); the name defaults to
    :func:`run_name` (``stdin`` for ``-``). Fields after the tag are ignored."""
    path = os.fspath(path)
    columns, last_line = _read_table(path, RUN, threads)
    return _run(path, columns, last_line, name)


def read_runs(paths: Sequence[str | os.PathLike]) -> list[Run]:
    """Read several TREC run files, named by :func:`run_name`: each parsed on a thread of its own
    (pyarrow releases the GIL) and their docnos dictionary-encoded together, so that the runs
    share one dictionary, which :func:`metrics.rankings.build_rankings` joins with the qrels
    once. The first bad file in the order given is the one reported.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.run").write_text("1 Q0 x 1 2.0 A\\n1 Q0 y 2 1.0 A\\n")
    >>> _ = (d / "b.run").write_text("1 Q0 y 1 2.0 B\\n")
    >>> a, b = read_runs([d / "a.run", d / "b.run"])
    >>> a.docno.dictionary.equals(b.docno.dictionary), b.docno.dictionary.to_pylist(), b.tag
    (True, ['x', 'y'], 'B')
    """
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa

    def attempt(path: str):
        try:
            if path == "-":  # standard input cannot be read again for a diagnosis: checked now
                return read_run(path, threads=False)
            return _read_table(path, RUN, threads=False, shared_docnos=True)
        except InputError as exc:
            return exc

    paths = [os.fspath(p) for p in paths]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        read = list(pool.map(attempt, paths))
    bad = next((i for i, r in enumerate(read) if isinstance(r, InputError)), len(read))
    plain = [r[0]["docno"] for r in read[:bad] if isinstance(r, tuple) and r[0]["docno"].type == pa.string()]
    encoded = iter(call_function("dictionary_encode", pa.chunked_array(plain, pa.string())).chunks if plain else ())
    runs = []
    for path, r in zip(paths, read[:bad]):
        if isinstance(r, Run):
            runs.append(r)
            continue
        columns, last_line = r
        if columns["docno"].type == pa.string():
            columns["docno"] = next(encoded)
        if _has_duplicates(columns["topic"], columns["docno"]):
            raise InputError(_diagnose(path, _load_bytes(path), RUN))
        runs.append(_run(path, columns, last_line))
    if bad < len(read):
        raise read[bad]
    return runs


def every_entry(values):
    """A pyarrow dictionary array of int32 indices that holds each entry of the string array
    ``values`` once, in order (its dictionary is ``values``, repeats and all)."""
    import pyarrow as pa

    # pa.array(numpy) would import pandas: wrap the buffer instead
    codes = pa.py_buffer(np.arange(len(values), dtype=np.int32))
    return pa.DictionaryArray.from_arrays(pa.Array.from_buffers(pa.int32(), len(values), [None, codes]), values)


def _run(path: str, columns: dict, last_line: str, name: str | None = None) -> Run:
    default = "stdin" if path == "-" else run_name(path)
    return Run(name or default, columns["topic"], columns["docno"], columns["score"], source=path,
               tag=last_line.split()[5], docno_hashes=columns.get("docno_hashes"))


def call_function(name: str, *args):
    """The pyarrow compute function ``name`` on ``args``, from pyarrow's registry of them
    (pyarrow._compute): importing pyarrow.compute, which wraps each function in Python, would
    cost every start-up a tenth of a second."""
    try:
        from pyarrow._compute import call_function as call
    except ImportError:  # a pyarrow that keeps it elsewhere: the public, slower module
        from pyarrow.compute import call_function as call
    return call(name, list(args))


def read_lengths(path: str | os.PathLike) -> dict[str, float]:
    """Document lengths in words from a file of ``docno words`` lines (for time-based users
    such as TBG's); the explicit alternative to a default length."""
    columns, _ = _read_table(os.fspath(path), LENGTHS)
    docno = columns["docno"]
    names = docno.dictionary.to_pylist()
    return dict(zip((names[i] for i in to_numpy(docno.indices)), columns["words"].tolist()))


def with_lengths(run: Run, lengths: Mapping[str, float]) -> Run:
    """The run with each document's length in words from ``lengths`` (NaN where it has none)."""
    names = run.docno.dictionary.to_pylist()
    per_name = np.array([lengths.get(n, np.nan) for n in names], dtype=np.float64)
    words = per_name[to_numpy(run.docno.indices)] if len(names) else np.zeros(0)
    return replace(run, words=words)


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
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
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


_COMMENT = re.compile(rb"^[ \t]*#[^\n]*(?:\n|$)", re.MULTILINE)


def _read_table(path: str, layout: Layout, threads: bool = True, shared_docnos: bool = False) -> tuple[dict, str]:
    """The layout's text columns (pyarrow dictionary arrays) and number columns (float64), and
    the file's last line that is not a comment (a run's tag is trec_eval's runid). With
    ``shared_docnos`` the docnos of a file pyarrow's reader takes stay plain strings and no
    file's are checked for duplicates: :func:`read_runs` encodes them with other files' and
    checks them. A plain run file (:func:`metrics.plain_text.plain`) is parsed from the file, a
    block at a time; any other file, or one pyarrow refuses, from its bytes."""
    from_file = _from_file(path, threads) if layout is RUN else None
    columns, last_line, kept = (*from_file, None) if from_file else _from_bytes(path, layout, threads)
    if columns is not None:
        from rpdi.metrics.docnos import encoded, hashes

        # a run read alone keeps a docno per line (:class:`Run`): encoding them would cost more
        # than the rest of reading, and a run's docnos are nearly all distinct
        per_line = layout is RUN and not shared_docnos
        as_strings = ("docno",) if shared_docnos or per_line else ()
        for name in layout.text:
            if name not in as_strings and not hasattr(columns[name], "indices"):
                if name == "docno":  # nearly all distinct
                    columns["docno"], columns["docno_hashes"] = encoded(columns["docno"])
                else:
                    columns[name] = call_function("dictionary_encode", columns[name])
        if per_line and not hasattr(columns["docno"], "indices"):  # for the duplicates and the join
            columns["docno_hashes"] = hashes(columns["docno"])
        if _values_ok(columns, layout, duplicates=not shared_docnos):
            if per_line and not hasattr(columns["docno"], "indices"):
                columns["docno"] = every_entry(columns["docno"])
            return columns, last_line
    raise InputError(_diagnose(path, _load_bytes(path) if kept is None else kept, layout))


def _from_file(path: str, threads: bool) -> tuple[dict, str] | None:
    """A plain run file's columns (:func:`metrics.plain_text.plain`), parsed by pyarrow from the
    file a block at a time, and its last line; None if it is not plain or pyarrow refuses it."""
    import pyarrow as pa

    found = plain(path) if path != "-" else None
    if found is None:
        return None
    try:
        with pa.OSFile(path) as source:
            columns = _csv_columns(source, RUN, found.delimiter, found.first_line, threads)
    except Exception:  # fields unlike the first line's, or the file changed: its bytes are read
        return None
    return columns, found.last_line.decode()


def _from_bytes(path: str, layout: Layout, threads: bool) -> tuple[dict | None, str, bytes | None]:
    """The layout's columns of the file's bytes (None if they are not parsed; pyarrow's text
    columns as plain strings), the file's last line that is not a comment, and the bytes of
    standard input (read again to name a bad line: a file is read again from disk)."""
    data = _load_bytes(path)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(f"{path}:{line}: binary data, not a TREC {layout.kind} file")
    try:
        data.isascii() or data.decode("utf-8")  # ASCII (the usual case) is UTF-8: no copy
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 text, not a TREC {layout.kind} file") from None
    body = _COMMENT.sub(b"", data) if b"#" in data and _COMMENT.search(data) else data
    end = _content_end(body)
    if not end:
        raise InputError(f"{path}: empty {layout.kind} file")
    columns = None
    # fields perhaps separated by single spaces or single tabs, lines ended by LF or CRLF:
    # pyarrow's reader decides
    crlf_only = b"\r" not in body or body.count(b"\r") == body.count(b"\r\n")
    delimiter = None if not crlf_only else " " if b"\t" not in body else "\t" if b" " not in body else None
    if delimiter is not None:
        try:
            columns = _parse_delimited(body, layout, delimiter, threads)
        except Exception:  # fields unlike the first line's, or an empty one: the general parser decides
            columns = None
    if columns is None:
        counts = _field_counts(body)
        n = len(layout.fields)
        fields_ok = np.isin(counts, (0, n)) if layout.max_fields else (counts == 0) | (counts >= n)
        if fields_ok.all():
            try:
                columns = _parse_white_space(body, layout, int(counts.max()))
            except Exception:  # any refusal is diagnosed below
                columns = None
    if columns is not None and layout is QRELS:
        columns["whole"] = _strtol_grades(body, columns["grade"])
    last_line = body[body.rfind(b"\n", 0, end) + 1: end].decode()
    return columns, last_line, data if path == "-" else None  # (the file's bytes freed before the text is encoded)


# a qrels grade written with an exponent (the last field of its line), and its leading integer;
# the exponent alone, which the regular expression engine finds several times faster
_EXPONENT_GRADE = re.compile(rb"(?<![^ \t])([+-]?[0-9]*)[.0-9]*[eE][+-]?[0-9]+[ \t\r]*$", re.MULTILINE)
_EXPONENT = re.compile(rb"[eE][+-]?[0-9]+[ \t\r]*$", re.MULTILINE)


def _strtol_grades(body: bytes, grade: np.ndarray) -> np.ndarray | None:
    """The grades as trec_eval reads them (strtol, base 10: the leading integer) where that is not
    their integer part, i.e. some grade is written with an exponent (``1e+8`` is 1, not 10^8);
    else None. Only those grades are looked at again; ``body`` has no comment lines (its rows are
    its non-blank lines). A grade without leading digits (``.5e1``, which trec_eval refuses)
    keeps its integer part."""
    if (b"e" not in body and b"E" not in body) or not _EXPONENT.search(body):  # (memchr, then the expression)
        return None
    found = [(m.start(), m.group(1)) for m in _EXPONENT_GRADE.finditer(body)]
    if not found:
        return None
    newlines = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == 10)
    row_of_line = np.cumsum(_field_counts(body) > 0) - 1
    rows = row_of_line[np.searchsorted(newlines, [start for start, _ in found])]
    whole = np.trunc(grade)
    for row, digits in zip(rows.tolist(), (d for _, d in found)):
        if digits.lstrip(b"+-"):
            whole[row] = int(digits)
    return whole


def _field_counts(data: bytes) -> np.ndarray:
    """The number of white-space separated fields on every line."""
    b = np.frombuffer(data, dtype=np.uint8)
    blank = b <= 32  # space, tab, CR, LF (and other control bytes)
    starts = np.flatnonzero(~blank[1:] & blank[:-1]) + 1  # a non-blank byte after a blank one
    if len(b) and not blank[0]:
        starts = np.concatenate(([0], starts))
    newlines = np.flatnonzero(b == 10)
    return np.bincount(np.searchsorted(newlines, starts), minlength=len(newlines) + 1)


def _content_end(data: bytes) -> int:
    """``len(data.rstrip())`` (0 for a blank file) from a copy of the tail alone, not of the file."""
    size = 4096
    while size < len(data) and not data[-size:].strip():
        size *= 16
    return len(data[-size:].rstrip()) + max(len(data) - size, 0)


def _parse_delimited(data: bytes, layout: Layout, delimiter: str, threads: bool) -> dict:
    """The columns of a file whose fields are separated by single ``delimiter`` characters (a
    space or a tab), read by pyarrow's CSV reader; ValueError (the general parser then decides)
    if a line has another number of fields than the first, or an empty field: a delimiter
    doubled, or starting or ending a line (:func:`metrics.plain_text.has_empty_field`, on the
    bytes). The file's bytes are read in place (:func:`_csv_columns`)."""
    import pyarrow as pa

    if has_empty_field(data, delimiter.encode()):
        raise ValueError("an empty field")
    first = data[:data.find(b"\n")] if b"\n" in data else data
    return _csv_columns(pa.BufferReader(data), layout, delimiter, first, threads)


PARSE_THREADS_BYTES = 64 << 20  # a file this large or larger is parsed on every core (_csv_columns)


def _csv_columns(source, layout: Layout, delimiter: str, first_line: bytes, threads: bool) -> dict:
    """The layout's columns of ``source`` (a pyarrow buffer reader, or a file opened by pyarrow:
    read a block at a time) by pyarrow's CSV reader, its fields separated by single ``delimiter`` characters as
    on its first line and checked for empty fields already; ValueError (the general parser then
    decides) if a line has another number of fields than the first. Only the layout's text (as
    plain strings, encoded by the caller once the file's bytes are freed) and number columns are
    converted. On every core (``threads``) only if the source holds :data:`PARSE_THREADS_BYTES`
    or more: pyarrow's threads parse blocks ahead into heaps of their own, whose freed memory
    stays with them. At 10 x 6,980 x 100 (qrels of 31 MB, runs of 26 MB) that held 15-35 MiB
    more at the peak of ``rpdi eval``, to save about 0.05 s a run file (0.5-1 s of the command's
    6-7 s on a 2-core machine); a run of 290 MB (1 x 6,980 x 1000) they parse 0.3 s faster."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    width = first_line.count(delimiter.encode()) + 1
    if width < len(layout.fields) or (layout.max_fields and width > layout.max_fields):
        raise ValueError(f"{width} fields on the first line")
    names = list(layout.fields) + [f"extra{i}" for i in range(width - len(layout.fields))]
    # text read as strings (a dictionary column of the CSV reader costs more)
    kept = list(layout.text + layout.numbers)
    types = {name: pa.float64() if name in layout.numbers else pa.string() for name in kept}
    table = pcsv.read_csv(
        source,
        read_options=pcsv.ReadOptions(column_names=names, use_threads=threads and source.size() >= PARSE_THREADS_BYTES),
        parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False),
        # (the bytes were checked as UTF-8, or ASCII, already: _read_table, metrics.plain_text)
        convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False, include_columns=kept,
                                            check_utf8=False),
    )
    if any(table.column(name).null_count for name in kept):
        raise ValueError("an empty field")
    columns = {name: to_numpy(table.column(name)).astype(np.float64, copy=False) for name in layout.numbers}
    for name in layout.text:  # one column at a time, its chunks freed once combined
        column = table.column(name)
        table = table.drop_columns([name])
        columns[name] = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        del column
    return columns


def _parse_white_space(data: bytes, layout: Layout, width: int) -> dict:
    import pandas as pd  # only here: irregular white space needs pandas' C parser

    names = list(layout.fields) + [f"extra{i}" for i in range(width - len(layout.fields))]
    index = {name: i for i, name in enumerate(layout.fields)}
    frame = pd.read_csv(
        io.BytesIO(data), sep=r"\s+", header=None, names=names,
        usecols=[index[n] for n in layout.text + layout.numbers],
        dtype={**{index[n]: object for n in layout.text}, **{index[n]: np.float64 for n in layout.numbers}},
        engine="c", na_filter=False, quoting=3,
    )
    columns = {name: encode(frame[name].to_numpy()) for name in layout.text}
    columns.update({name: frame[name].to_numpy(dtype=np.float64) for name in layout.numbers})
    return columns


def _values_ok(columns: dict, layout: Layout, duplicates: bool = True) -> bool:
    numbers = [columns[n] for n in layout.numbers]
    if not all(np.isfinite(v).all() for v in numbers):
        return False
    if layout is LENGTHS:
        return bool((columns["words"] >= 0).all()) and len(columns["docno"].dictionary) == len(columns["docno"])
    if layout is INTENTS and not (columns["probability"] >= 0).all():
        return False
    if duplicates and len(layout.key) == 3:  # (topic, subtopic) as one column of codes
        topic, subtopic = (to_numpy(columns[f].indices).astype(np.int64) for f in layout.key[:2])
        return not _has_duplicates(topic * len(columns["subtopic"].dictionary) + subtopic, columns["docno"])
    return not (duplicates and _has_duplicates(columns[layout.key[0]], columns[layout.key[-1]],
                                               columns.get("docno_hashes")))


def _has_duplicates(topic, docno, docno_hashes: np.ndarray | None = None) -> bool:
    """Whether a (topic, docno) pair occurs twice; ``topic`` a pyarrow dictionary array or integer
    codes, ``docno`` a pyarrow dictionary array whose entries are distinct, or a string array
    (:func:`_has_duplicate_strings`, with its hashes if known)."""
    if not hasattr(docno, "indices"):
        return _has_duplicate_strings(topic, docno, docno_hashes)
    n, n_docs = len(docno), len(docno.dictionary)
    doc = to_numpy(docno.indices)
    if not n or np.bincount(doc).max() <= 1:  # every docno occurs once
        return False
    codes = topic if isinstance(topic, np.ndarray) else to_numpy(topic.indices)
    key = codes.astype(np.int64) * n_docs + doc
    size = (int(codes.max()) + 1 if len(codes) else 0) * n_docs
    if size <= 8 * n + 1024:
        return bool(np.count_nonzero(np.bincount(key, minlength=size)) < n)
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def _has_duplicate_strings(topic, docno, docno_hashes: np.ndarray | None = None) -> bool:
    """Whether a (topic, docno) pair occurs twice, ``docno`` a pyarrow string array: by a 64-bit
    hash of the pair (``docno_hashes``, :func:`metrics.docnos.hashes` of the docnos, computed if
    not given, mixed with the topic's code), sorted; the pairs whose hashes meet are compared as
    strings."""
    from rpdi.metrics.docnos import hashes

    codes = topic if isinstance(topic, np.ndarray) else to_numpy(topic.indices)
    key = (hashes(docno) if docno_hashes is None else docno_hashes) ^ (codes.astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93))
    ordered = np.sort(key)
    met = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(met):
        return False
    suspects = np.flatnonzero(np.isin(key, met)).tolist()
    pairs = zip(codes[suspects].tolist(), docno.take(suspects).to_pylist())
    return len(set(pairs)) < len(suspects)


def _diagnose(path, data: bytes, layout: Layout) -> str:
    """Scan line by line for the first problem; only runs once the fast path refused."""
    seen: dict[tuple[str, ...], int] = {}
    n_fields = len(layout.fields)
    key_fields = [layout.fields.index(f) for f in layout.key]
    for lineno, raw in enumerate(data.decode("utf-8").split("\n"), 1):
        parts = raw.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) < n_fields or (layout.max_fields and len(parts) > layout.max_fields):
            expected = n_fields if layout.max_fields else f"at least {n_fields}"
            return f"{path}:{lineno}: expected {expected} fields ({layout.fields_text()}), found {len(parts)}"
        for name in layout.numbers:
            text = parts[layout.fields.index(name)]
            try:
                if "_" in text:  # float() accepts 1_000, the fast parsers do not
                    raise ValueError(text)
                value = float(text)
            except ValueError:
                return f"{path}:{lineno}: {name} {text!r} is not a number"
            if not math.isfinite(value):
                return f"{path}:{lineno}: {name} {text!r} is not a finite number"
            if layout in (LENGTHS, INTENTS) and value < 0:
                return f"{path}:{lineno}: {name} {text!r} is negative"
        key = tuple(parts[i] for i in key_fields)
        if key in seen:
            last = "document" if layout.key[-1] == "docno" else layout.key[-1]
            what = (f"{last} {key[-1]} appears twice for topic {key[0]}"
                    + (f" subtopic {key[1]}" if len(key) == 3 else "") if len(key) >= 2
                    else f"document {key[0]} appears twice")
            return f"{path}:{lineno}: {what} (first at line {seen[key]})"
        seen[key] = lineno
    return f"{path}: cannot be parsed as a TREC {layout.kind} file ({layout.fields_text()})"
