"""Atomic writes: a result file is either absent or complete, never half-written."""

from __future__ import annotations

import os
import tempfile


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str, data: str | bytes) -> None:
    """Write to a temporary file in the same directory, then rename it over ``path``; the file's
    mode follows the umask (0644 under the usual 022)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it (mkstemp makes it 0600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk: name the file
            raise OSError(exc.errno, exc.strerror, path) from None
        raise
