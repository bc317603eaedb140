"""What every command that writes files checks before it starts working: that it can write them.

A command that would fit, simulate or compare for minutes and only then find that its plot
cannot be written (a read-only folder, a file where a folder should be) loses the work; each
output path is checked first, by :func:`check_writable`, and a bad one is one line naming the
option and the path (exit status 2).
"""

from __future__ import annotations

import os
import tempfile

from rpdi.metrics.errors import InputError

PLOT_FORMATS = ("png", "svg")  # what the commands' plots are written as


def check_writable(path: str | None, option: str, directory: bool = False, formats: tuple[str, ...] = ()) -> None:
    """InputError naming ``option`` and ``path`` unless the command can write there: a file (or
    with ``directory``, a folder) whose nearest existing folder accepts a new file (tried: a
    file is made there and removed, which also sees read-only file systems and what
    ``os.access`` misjudges), and whose extension is one of ``formats`` if given. The folders
    missing on the way are left for the command to make. None: nothing to check.

    >>> check_writable("/dev/null/plot.png", "--plot")
    Traceback (most recent call last):
    ...
    rpdi.metrics.errors.InputError: --plot /dev/null/plot.png: cannot write there: /dev/null is not a directory
    """
    if path is None:
        return
    where = f"{option} {path}"
    extension = os.path.splitext(path)[1].lower().lstrip(".")
    if formats and extension not in formats:
        raise InputError(f"{where}: expected a {' or '.join('.' + f for f in formats)} file")
    full = os.path.abspath(path)
    if os.path.isdir(full) != directory and os.path.exists(full):
        raise InputError(f"{where}: cannot write there: " + ("is a file, not a directory" if directory
                                                               else "is a directory"))
    existing = full if directory else os.path.dirname(full)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise InputError(f"{where}: cannot write there: {existing} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".rpdi-probe-")
    except OSError as exc:
        raise InputError(f"{where}: cannot write there: {existing}: {exc.strerror or exc}") from None
    os.close(fd)
    os.remove(probe)
