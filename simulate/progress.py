"""Progress with an ETA on stderr (tqdm) when asked for: a bar on a terminal, a widget in
Jupyter, and elsewhere (a log file, a pipe) one line every few seconds."""

from __future__ import annotations

import sys

LOG_INTERVAL = 5.0  # seconds between progress lines when stderr is not a terminal


class _Silent:
    """What ``tqdm(disable=True)`` gives, without importing tqdm (about 50 ms on every quiet command)."""

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


class _Lines:
    """A file for tqdm that turns its carriage-return redraws into whole lines."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.strip("\r\n\x1b[A")
        if text.strip():
            self.stream.write(text.rstrip() + "\n")

    def flush(self) -> None:
        self.stream.flush()


def progress_bar(total: int, wanted: bool, unit: str, initial: int = 0):
    if not wanted:
        return _Silent()
    from tqdm import tqdm
    from tqdm.autonotebook import tqdm as auto  # tqdm's notebook widget in Jupyter, else tqdm

    if sys.stderr.isatty() or auto is not tqdm:  # a terminal, or Jupyter's widget
        return auto(total=total, initial=initial, unit=unit, file=sys.stderr, leave=False)
    return tqdm(total=total, initial=initial, unit=unit, file=_Lines(sys.stderr), mininterval=LOG_INTERVAL,
                maxinterval=LOG_INTERVAL, delay=LOG_INTERVAL, ascii=True, ncols=100, leave=False)
