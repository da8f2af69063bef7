"""The typed confirmation of a store-changing run (erase requests, sweeps, prune) on the command
line: the step cli/report.py's TextReport supplies (changes/report.py: a run asks its caller; the
Python API asks no one, ``yes=True`` is the way; a dialog would be another Report's step).

API:
- ``open_terminal(env, from_stdin=...)``: where the plan and the prompt are shown and the answer
  is read, a ``Terminal`` (``.writer``, ``.reader``, ``.close()``), or None when there is none:
  standard input and stderr on a terminal; ``/dev/tty`` when standard input held the keys.
- ``confirm(terminal, step)``: asks ``step.question``, reads one line, raises ``NotConfirmedError``
  (exit 6) unless the answer is ``step.expected`` exactly or as the plan shows it (escaped); Ctrl-C
  at the prompt is "not confirmed (interrupted), nothing <erased|pruned>", exit 130. Without a
  terminal it raises at once (``--yes`` is the way). The report shows the plan on
  ``terminal.writer`` first, then calls this. The words are the step's (changes/report.py
  ``Confirmation``: every question and refusal names the run's own action).
"""

from __future__ import annotations

from symfonic_cli.environment import Environment
from symfonic_cli.errors import EXIT_INTERRUPTED, NotConfirmedError, StoppedError
from symfonic_cli.api.runs import Confirmation

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO


class Terminal:
    """Where the plan and the prompt are shown and the answer is read."""

    def __init__(self, reader: TextIO, writer: TextIO, owned: tuple[TextIO, ...] | None = None) -> None:
        self.reader, self.writer, self.owned = reader, writer, owned

    def close(self) -> None:
        for stream in self.owned or ():
            stream.close()


def open_terminal(env: Environment, *, from_stdin: bool = False) -> Terminal | None:
    if from_stdin:
        # Standard input held the keys: the answer can only come from the controlling terminal.
        try:
            reader = open("/dev/tty", encoding="utf-8", errors="replace")
        except OSError:
            return None
        try:
            writer = open("/dev/tty", "w", encoding="utf-8", errors="backslashreplace")
        except OSError:
            reader.close()
            return None
        return Terminal(reader, writer, (reader, writer))
    if not env.stdin_isatty():
        return None
    return Terminal(env.stdin, env.stderr)


def confirm(terminal: Terminal | None, step: Confirmation) -> None:
    from symfonic_cli.render import escape_inline

    if terminal is None:
        raise step.no_terminal()
    expected = step.expected
    try:
        terminal.writer.write(f"{step.question}: ")
        terminal.writer.flush()
        answer = _read_line(terminal.reader)
        _pending_signals()
    except KeyboardInterrupt:  # Ctrl-C at the prompt: a clear no
        terminal.writer.write("\n")
        terminal.writer.flush()
        raise StoppedError(step.refused(" (interrupted)"), EXIT_INTERRUPTED) from None
    if answer.endswith("\n"):
        answer = answer[:-1]
    if answer.endswith("\r"):
        answer = answer[:-1]
    # The key exactly, or as the plan shows it (escaped): never a trimmed or folded look-alike.
    if answer not in (expected, escape_inline(expected)):  # the error line is escaped where it is written
        raise NotConfirmedError(step.refused(f": expected '{expected}'"))


def _read_line(reader: TextIO) -> str:
    """One line from the terminal, a Ctrl-C while waiting for it included. A plain readline misses
    a Ctrl-C whose signal lands after Python last looked for signals and before the read begins
    (under load, right after the prompt is written): the terminal drops the typed keys and the
    read waits for a line no one types. So wait until the terminal holds a line or a signal has
    come (written to a pipe by signal.set_wakeup_fd, whenever it lands), then read."""
    import os
    import select
    import signal

    try:
        fd = reader.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor to wait on: nothing can land between
        return reader.readline()
    woken, wake = os.pipe()
    try:
        os.set_blocking(wake, False)
        os.set_blocking(woken, False)
        try:
            previous = signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
        except ValueError:  # not the main thread, which alone runs signal handlers
            return reader.readline()
        try:
            while fd not in select.select([fd, woken], [], [])[0]:
                os.read(woken, 512)  # a signal came: its handler runs before the next wait (Ctrl-C raises)
        finally:
            signal.set_wakeup_fd(previous)
        return reader.readline()
    finally:
        os.close(woken)
        os.close(wake)


def _pending_signals() -> None:
    """Nothing: calling a Python function runs the signal handlers already due. A Ctrl-C typed
    before the read began returns the line after it (the terminal flushed the rest) and would
    raise KeyboardInterrupt only later, outside the prompt: it is raised here, inside it."""
