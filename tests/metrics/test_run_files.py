"""metrics/run_files.py: when the memory freed by reading runs is handed back to the system."""

import pytest

from rpdi.metrics import run_files
from rpdi.metrics.run_files import run_batches


@pytest.mark.parametrize("size", [1, 1 << 30])  # each run a batch; all six in one
def test_freed_memory_is_handed_back_once_the_last_batch_is_read(batch_bytes, six_run_files, monkeypatch, size):
    """Not after an earlier batch (its parser's freed blocks serve the next batch's), and before
    the last batch is scored."""
    _, runs = six_run_files
    batch_bytes(size)
    yielded, handed_back = [], []
    monkeypatch.setattr(run_files, "return_freed_memory", lambda: handed_back.append(len(yielded)))
    for batch in run_batches(runs):
        yielded.append(len(batch))
    assert sum(yielded) == 6 and len(yielded) == (6 if size == 1 else 1)
    assert handed_back == [len(yielded) - 1]


def test_a_run_is_read_ahead_only_if_a_batch_of_its_own_and_larger_than_what_is_read_meanwhile(
        batch_bytes, six_run_files):
    """RunFile.read_ahead(beside): a run file of BATCH_BYTES or more read on a thread of its own
    if larger than the ``beside`` bytes (the qrels file) read meanwhile; the run it reads is the
    run read without it."""
    import os

    from rpdi.metrics.run_files import RunFile

    _, runs = six_run_files
    run = RunFile(str(runs[0]))
    size = os.path.getsize(run.path)
    batch_bytes(size + 1)
    assert run.read_ahead().ahead is None  # not a batch of its own
    batch_bytes(size)
    assert run.read_ahead(size).ahead is None and run.read_ahead(size + 10).ahead is None
    ahead = run.read_ahead(size - 1)
    assert ahead.ahead is not None
    read, alone = ahead.read(), run.read()
    assert ahead.ahead.take() is None  # handed over once
    assert (read.name, read.topic.to_pylist(), read.docno.to_pylist(), read.score.tolist()) == \
        (alone.name, alone.topic.to_pylist(), alone.docno.to_pylist(), alone.score.tolist())


def test_a_run_read_ahead_is_parsed_on_the_reader_s_thread_alone(six_run_files, monkeypatch):
    """One run a batch: the first run is parsed on every core (nothing else is being done), each
    next one, read while the run before it is scored, on the reader's thread alone."""
    _, runs = six_run_files
    read_run = run_files.read_run

    def reading(path, *args, threads=True, **kwargs):
        threads_of_each.append(threads)
        return read_run(path, *args, threads=threads, **kwargs)

    threads_of_each = []
    monkeypatch.setattr(run_files, "read_run", reading)
    assert [len(batch) for batch in run_batches(runs, together=False)] == [1] * 6
    assert threads_of_each == [True] + [False] * 5
