"""A progress line on a terminal for long runs (retention sweeps, exports): ``erased 3,200/10,000
threads, 41 s`` on stderr, rewritten in place at most a few times a second. Only when stderr is
a terminal: never in a pipe, a file or beside JSON output read by a program."""

from __future__ import annotations

import time

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

_EVERY = 0.25  # seconds between redraws


class Progress:
    def __init__(self, err: TextIO, verb: str, total: int, *, enabled: bool | None = None,
                 report: Callable[[str, int, int], None] | None = None) -> None:
        # report: the caller's callback (Environment.on_progress), told every step.
        self.report = report
        if enabled is None:
            try:
                enabled = bool(err.isatty())
            except (AttributeError, ValueError):
                enabled = False
        self.on, self.err, self.verb, self.total = enabled, err, verb, total
        self.start = time.monotonic()
        self._drawn = 0.0
        self._shown = False
        self._width = 0
        self._done = 0

    def step(self, done: int, *, force: bool = False) -> None:
        self._done = done
        if self.report is not None:
            self.report(self.verb, done, self.total)
        if not self.on:
            return
        now = time.monotonic()
        if not force and done != self.total and now - self._drawn < _EVERY:
            return
        self._drawn = now
        # Rewritten in place with \r and spaces over the rest of the last line: no escape sequence
        # at all, so NO_COLOR and TERM=dumb terminals get the same clean line. Narrower than the
        # terminal: a line that wraps is rewritten from its last screen row only, and the rows
        # above stay (at a million threads "... 0 s" was left with the next drawing's "pruned").
        count = f"{done:,}/{self.total:,}"
        line = _fitted(self.err, [f"{self.verb} {count} threads, {now - self.start:.0f} s", f"{self.verb} {count}", count])
        self.err.write("\r" + line + " " * max(0, self._width - len(line)))
        self.err.flush()
        self._width = len(line)
        self._shown = True

    def say(self, line: str) -> None:
        """One line on stderr, a terminal or not (the progress line is drawn again after it)."""
        self.clear()
        self.err.write(line + "\n")
        self.err.flush()

    def waiting(self, text: str | None) -> None:
        """On a terminal, the progress line says why the run waits (None: it goes on)."""
        if not self.on:
            return
        line = f"{self.verb} {self._done:,}/{self.total:,} threads; {text}" if text else ""
        line = _fitted(self.err, [line])  # one screen line: \r redraws it
        self.err.write("\r" + line + " " * max(0, self._width - len(line)))
        self.err.flush()
        self._width, self._shown = len(line), bool(line)

    def clear(self) -> None:
        """Take the line away before other output goes to the same terminal."""
        if self.on and self._shown:
            self.err.write("\r" + " " * self._width + "\r")
            self.err.flush()
            self._shown = False
            self._width = 0

    def end(self, done: int) -> None:
        """The last state stays on screen, on its own line."""
        if self.on:
            self.report = None  # the last step was told already
            self.step(done, force=True)
            self.err.write("\n")
            self.err.flush()
            self._shown = False


def _fitted(err: TextIO, lines: list[str]) -> str:
    """The first of ``lines`` (longest first) narrower than the terminal ``err`` writes to, else
    the last one cut: one screen row, which \r goes back to the start of."""
    import os
    import shutil

    columns = 0
    try:
        columns = os.get_terminal_size(err.fileno()).columns
    except (AttributeError, ValueError, OSError):
        pass
    if columns <= 0:  # not a terminal, or one that gives no size: COLUMNS, else 80
        columns = shutil.get_terminal_size().columns
    room = max(1, columns - 1)
    return next((line for line in lines if len(line) <= room), lines[-1][:room])
