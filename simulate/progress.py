"""A progress bar on stderr (tqdm) when asked for and stderr is a terminal; otherwise nothing."""

from __future__ import annotations

import sys


class _Silent:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, wanted: bool, unit: str, initial: int = 0):
    if not wanted or not sys.stderr.isatty():
        return _Silent()
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit=unit, file=sys.stderr, leave=False)
