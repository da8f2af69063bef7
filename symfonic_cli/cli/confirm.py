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
        answer = terminal.reader.readline()
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


def _pending_signals() -> None:
    """Nothing: calling a Python function runs the signal handlers already due. A Ctrl-C typed
    before the read began returns the line after it (the terminal flushed the rest) and would
    raise KeyboardInterrupt only later, outside the prompt: it is raised here, inside it."""
