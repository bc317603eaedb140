"""How ``rpdi eval`` and ``rpdi compare`` have the C library allocate, set once for the process
by the ``rpdi`` command (:func:`experiments.cli.entry`), not by a call from Python."""

from __future__ import annotations

import os
import sys


def no_huge_page_advice() -> None:
    """Have numpy not advise the kernel to back its large arrays with huge pages
    (``NUMPY_MADVISE_HUGEPAGE=0``, numpy's own switch, read when numpy is imported: so before it
    is), unless the variable is set already. Where transparent huge pages are given on advice
    (``/sys/kernel/mm/transparent_hugepage/enabled`` is ``madvise``, the usual default) and the
    kernel compacts memory to find them (``defrag`` ``madvise``, likewise), a page fault in an
    advised array can wait for that compaction: on the benchmark machine an array of 56 MB first
    written took 0.15 s with the advice and 0.025 s without, and ``rpdi eval`` of one MS MARCO-sized
    run 4.0 s instead of 4.5 s (tests/benchmarks/eval_scale.py)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def reuse_freed_memory() -> None:
    """Have the memory of arrays freed serve the next ones, rather than fresh memory from the
    system for each: the kernel zeroes every fresh page, which for runs of millions of lines cost
    more than a third of ``rpdi eval``'s time. pyarrow allocates with the C library's malloc, not its
    mimalloc pool (so that numpy and pyarrow reuse one another's memory); glibc's malloc maps no
    block of its own (by default one of 32 MiB or more, e.g. any column of 4 M lines, is mapped
    on its own and unmapped when freed), keeps up to 1 GiB freed at the top of its heap, and
    serves the threads (the readers', pyarrow's) from no more heaps than there are processors
    (each heap keeps its own freed memory). The peak is then that of the largest batch of runs
    read at once (:func:`~metrics.run_files.run_batches`; for ``eval``, one run and the one
    read ahead)."""
    import ctypes

    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-4, 0)  # M_MMAP_MAX
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
        libc.mallopt(-8, os.cpu_count() or 1)  # M_ARENA_MAX
    except (AttributeError, OSError):  # not glibc
        pass
