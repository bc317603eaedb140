"""Runs as they are given (files, tables, dicts, Run objects), and run files read a batch at
a time when their turn comes (one run a batch for ``rpdi eval``), so that memory is bounded by a
batch, not by the number of runs: what :func:`metrics.evaluate.evaluate`, ``rpdi eval``, ``rpdi
compare`` and ``rpdi simulate`` read runs with."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Mapping, Sequence

from rpdi.metrics.errors import InputError
from rpdi.metrics.frames import RUN_COLUMN, is_table, read_table_file, runs_from, runs_from_table
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.trec import Run, read_run, read_runs, run_name


class ReadAhead:
    """A function's result computed on a thread of its own, handed over once: :meth:`take` waits
    for it (raising what it raised) and lets go of it, so that a run read ahead is not kept
    alive by the :class:`RunFile` that names it; later, None."""

    def __init__(self, read: Callable[[], Run]):
        pool = ThreadPoolExecutor(max_workers=1)
        self._future = pool.submit(read)
        pool.shutdown(wait=False)

    def take(self) -> Run | None:
        future, self._future = self._future, None
        return None if future is None else future.result()


@dataclass(frozen=True)
class RunFile:
    """A run file read only when its turn comes (:func:`run_batches`): its path (a TREC run file,
    or a TSV/CSV file with a header row or a parquet file holding one run), its name (default:
    :func:`~metrics.trec.run_name`, ``stdin`` for ``-``) and what is done to the run read
    (``then``: the command line's check of its topics, its document lengths)."""

    path: str
    name: str | None = None
    then: Callable[[Run], Run] | None = None
    ahead: ReadAhead | None = None  # the file being read on a thread of its own (read_ahead)

    @property
    def run_name(self) -> str:
        return self.name or ("stdin" if self.path == "-" else run_name(self.path))

    def read(self, threads: bool = True) -> Run:
        """The run (a TREC run file parsed on every core, or with ``threads`` False on this thread
        alone)."""
        run = self.ahead.take() if self.ahead is not None else None
        return self.done(self._read(threads) if run is None else run)

    def read_ahead(self, beside: int = 0) -> RunFile:
        """This run file, from now on read on a thread of its own if it is of :data:`BATCH_BYTES`
        or more (a batch of its own, which :func:`run_batches` does not read ahead) and larger
        than the ``beside`` bytes read meanwhile, to be taken by the first :meth:`read` (a run
        read while the qrels file is: the reader releases the GIL for most of its time). The
        peak of reading a file is a few times its size: the qrels' reading then adds little to
        the run's, where a run no larger than the qrels would add its reading to theirs (at 10 x
        6,980 x 100, 40-70 MB to the peak of ``rpdi eval``, in no less time; at 1 x 6,980 x
        1000, 0.3 s less time)."""
        size = _file_size(self)
        if self.path == "-" or size < BATCH_BYTES or size <= beside:
            return self
        return replace(self, ahead=ReadAhead(self._read))

    def _read(self, threads: bool = True) -> Run:
        table = read_table_file(self.path)
        if table is None:
            return read_run(self.path, threads=threads)
        runs = runs_from_table(table, self.run_name, self.path)
        if len(runs) > 1:
            raise InputError(f"{self.path}: holds {len(runs)} runs (a {RUN_COLUMN} column); give one run a file")
        return runs[0]

    def done(self, run: Run) -> Run:
        """The run read from the file, named and treated as given."""
        run = run if self.name is None else replace(run, name=self.name)
        return run if self.then is None else self.then(run)


def return_freed_memory() -> None:
    """Hand the pages of freed memory back to the system (glibc's ``malloc_trim``; elsewhere,
    nothing). Once the last batch of runs is read, the parser's blocks lie freed in pieces too
    small for the arrays that follow, which the allocator would otherwise take from fresh memory
    beside them (``rpdi`` keeps freed memory for the next batch, :mod:`experiments.allocator`):
    at 1 x 6,980 x 1000 the peak was 80-230 MB higher without. After an earlier batch the pieces
    serve the next one's parser, and handing them back cost time (0.3 s at 10 x 6,980 x 100)."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):  # not glibc
        pass


def run_items(runs) -> list:
    """The runs given, in order: TREC run files as :class:`RunFile` objects (paths wrapped), not
    read yet; :class:`Run` objects; and, read into Runs (:func:`metrics.frames.runs_from`): runs in
    memory (DataFrames or pyarrow Tables, several runs in one told apart by a ``run`` column;
    ir_measures ``ScoredDoc`` namedtuples; ``{name: {topic: {docno: score}}}``) and TSV/CSV
    (header row) or parquet files."""
    if isinstance(runs, Mapping) or is_table(runs):
        return runs_from(runs)
    if isinstance(runs, (str, os.PathLike, Run, RunFile)):
        runs = [runs]
    items = list(runs)
    if items and hasattr(items[0], "_fields"):  # ScoredDoc namedtuples: one run
        return runs_from(items)
    out = []
    for i, item in enumerate(items):
        if isinstance(item, (Run, RunFile)):
            out.append(item)
        elif isinstance(item, (str, os.PathLike)) and read_table_file(os.fspath(item), header_only=True) is None:
            out.append(RunFile(os.fspath(item)))
        elif isinstance(item, (str, os.PathLike, Mapping)):
            out += runs_from(item)
        else:  # a table among others: named by its place, as runs_from names it
            out += runs_from_table(item, "run" if len(items) == 1 else f"run{i + 1}")
    return out


def items_read_once(runs) -> list:
    """:func:`run_items`, a run from standard input read now: it cannot be read a second time
    (by commands that read a batch of runs again)."""
    return [r.read() if isinstance(r, RunFile) and r.path == "-" else r for r in run_items(runs)]


def load_runs(runs, threads: bool = True) -> list[Run]:
    """Every run of :func:`run_items` read (TREC run files concurrently, sharing one docno
    dictionary; a run file being read ahead, :meth:`RunFile.read_ahead`, taken as read; one
    TREC run file alone parsed on every core, or with ``threads`` False on this thread)."""
    runs = run_items(runs)
    files = [r for r in runs if isinstance(r, RunFile) and r.ahead is None
             and read_table_file(r.path, header_only=True) is None]
    if len(files) < 2:
        return [r.read(threads) if isinstance(r, RunFile) else r for r in runs]
    read = dict(zip(map(id, files), read_runs([f.path for f in files])))
    return [r if isinstance(r, Run) else r.done(read[id(r)]) if id(r) in read else r.read() for r in runs]


BATCH_BYTES = 16 << 20  # runs read and ranked together up to this many bytes of files (run_batches, together),
# so that compare and simulate read the usual collection once; a run file smaller than this is read ahead while
# the batch before it is scored, a larger one is a batch of its own


def run_batches(runs, measures: Sequence[Measure] = (), together: bool = True) -> Iterator[list[Run]]:
    """The runs, in the order given, in the batches ranked together, each batch read when its
    turn comes, so that memory is bounded by the largest run plus two batches and not by their
    number: ``together``, consecutive run files until their bytes reach :data:`BATCH_BYTES` (a
    run in memory or from standard input alone), for commands that read the runs a second time
    unless they are in one batch (``rpdi compare`` if they are not all as deep, ``rpdi
    simulate``'s survey); else one run a batch (``rpdi eval``: a run's values do not depend on
    the runs ranked with it). If a measure compares each run with the first (RBO): all at once
    (``together``), else the other runs in batches of BATCH_BYTES, the first run read once, kept,
    and ranked at the head of every batch.
    Two runs of one name are an InputError before any is read. A batch of files each smaller
    than BATCH_BYTES is read on a thread of its own while the batch before it is scored (the
    reader releases the GIL for most of its time); one with a larger file, once the batch before
    it is done with. (A file's size is its size on disk: a compressed run counts as small as it
    is there.) Once the last batch is read, the memory freed on the way is handed back
    (:func:`return_freed_memory`).

    >>> [[r.name for r in batch] for batch in run_batches({"a": {"1": {"x": 1}}, "b": {"1": {"y": 1}}})]
    [['a'], ['b']]
    """
    items = run_items(runs)
    names = [(item_name(r), r.source if isinstance(r, Run) else r.path) for r in items]
    seen = [name for name, _ in names]
    dup = next((n for n in seen if seen.count(n) > 1), None)
    if dup is not None:
        sources = " and ".join(source for name, source in names if name == dup)
        raise InputError(f"runs {sources} have the same name {dup!r}; name them NAME=PATH")
    between = any(m.spec.between_runs for m in measures)
    at_once = len(items) < 2 or (between and together)
    first = [items[0]] if between and not at_once else []  # read once, kept, at the head of every batch
    rest = items[len(first):]
    batches = [items] if at_once else _batched(rest) if together or first else [[item] for item in rest]
    with ThreadPoolExecutor(max_workers=1) as reader:
        ahead = None
        for batch, after in zip(batches, batches[1:] + [None]):
            read = [load_runs(first + batch) if ahead is None else first + ahead.result()]
            first = read[0][:1] if first else []
            if after is None:
                return_freed_memory()
            small = after is not None and max(map(_file_size, after)) < BATCH_BYTES
            # (a run alone parsed on the reader's thread only: the other cores score the batch before,
            # and pyarrow's threads would hold memory of their own, 8-14 MiB at the peak of rpdi eval)
            ahead = reader.submit(load_runs, after, False) if small else None
            yield read.pop()  # not kept here: freed as soon as the caller lets go of it


def item_name(item) -> str:
    """The name of one of :func:`run_items`'s runs, read (a :class:`Run`) or not (a :class:`RunFile`)."""
    return item.name if isinstance(item, Run) else item.run_name


def _batched(items: list) -> list[list]:
    """The items in consecutive batches of :data:`BATCH_BYTES` or more bytes of files (the last
    one perhaps fewer)."""
    batches, batch, size = [], [], 0
    for item in items:
        batch.append(item)
        size += _file_size(item)
        if size >= BATCH_BYTES:
            batches.append(batch)
            batch, size = [], 0
    return batches + [batch] if batch else batches


def _file_size(item) -> int:
    """Bytes of a run file (:func:`file_bytes`); a run in memory or standard input counts as a
    whole batch."""
    return file_bytes(item.path) if isinstance(item, RunFile) and item.path != "-" else BATCH_BYTES


def file_bytes(path) -> int:
    """The size of the file at ``path`` on disk (compressed or not); 0 for standard input, a
    dataset's id or a file that cannot be read (its reader names it)."""
    try:
        return os.path.getsize(path) if path != "-" else 0
    except (OSError, TypeError, ValueError):
        return 0
