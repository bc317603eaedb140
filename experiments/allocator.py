"""How ``rpdi eval`` and ``rpdi compare`` have the C library allocate, set once for the process
by the ``rpdi`` command (:func:`experiments.cli.entry`), not by a call from Python."""

from __future__ import annotations

import os


def reuse_freed_memory() -> None:
    """Have the memory of arrays freed serve the next ones, rather than fresh memory from the
    system for each: the kernel zeroes every fresh page, which for runs of millions of lines cost
    more than a third of ``rpdi eval``'s time. pyarrow allocates with the C library's malloc, not its
    mimalloc pool (so that numpy and pyarrow reuse one another's memory); glibc's malloc maps no
    block of its own (by default one of 32 MiB or more, e.g. any column of 4 M lines, is mapped
    on its own and unmapped when freed), keeps up to 1 GiB freed at the top of its heap, and
    serves the threads (the readers', pyarrow's) from no more heaps than there are processors
    (each heap keeps its own freed memory). The peak is then that of the largest batch of runs
    read at once (:func:`~metrics.run_files.run_batches`)."""
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
