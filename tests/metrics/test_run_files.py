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
