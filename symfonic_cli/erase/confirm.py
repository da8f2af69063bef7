"""The typed confirmation of a store-changing run (erase requests, sweeps, prune).

API:
- The caller supplies how a run asks (a request's ``ask``): ``open_terminal`` for the command line,
  ``no_terminal`` (the default: a library never opens a terminal; ``yes=True`` is the way) for the
  Python API; a dialog would give its own ``Terminal``.
- ``open_terminal(env, from_stdin=...)``: where the plan and the prompt are shown and the answer
  is read, a ``Terminal`` (``.writer``, ``.reader``, ``.close()``), or None when there is none:
  standard input and stderr on a terminal; ``/dev/tty`` when standard input held the keys.
- ``confirm(terminal, expected, action, one_thread=False)``: asks for the thread key
  (``one_thread``) or the number of threads, reads one line, raises ``NotConfirmedError``
  (exit 6) unless the answer is ``expected`` exactly or as the plan shows it (escaped); Ctrl-C
  at the prompt is "not confirmed (interrupted), nothing <done>", exit 130. Without a
  terminal it raises at once (``--yes`` is the way). A driver shows its plan on
  ``terminal.writer`` first, then calls this. ``action`` is ``ERASE`` or ``PRUNE``: every
  question and refusal names the run's own action (one wording, here).
- ``confirm_plans(terminal, plans)``: the thread key of one thread, else the number of threads.
- ``confirm_count(terminal, total, action=ERASE)``: the number of threads (a sweep counted in the
  database; prune's plan).
"""

from __future__ import annotations

from symfonic_cli.environment import Environment
from symfonic_cli.errors import EXIT_INTERRUPTED, NotConfirmedError, StoppedError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from symfonic_cli.model.erase import ThreadErasePlan


class Action:
    """What a confirmed run does, as its question and refusals say it."""

    def __init__(self, verb: str, done: str) -> None:
        self.verb, self.done = verb, done


ERASE = Action("erase", "erased")
PRUNE = Action("prune", "pruned")


class Terminal:
    """Where the plan and the prompt are shown and the answer is read."""

    def __init__(self, reader: TextIO, writer: TextIO, owned: tuple[TextIO, ...] | None = None) -> None:
        self.reader, self.writer, self.owned = reader, writer, owned

    def close(self) -> None:
        for stream in self.owned or ():
            stream.close()


def no_terminal(env: Environment, *, from_stdin: bool = False) -> Terminal | None:
    """No one to ask: a run that needs a confirmation stops (NotConfirmedError, exit 6)."""
    return None


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


def confirm(terminal: Terminal | None, expected: str, action: Action, *, one_thread: bool = False) -> None:
    from symfonic_cli.render import escape_inline

    if terminal is None:
        raise NotConfirmedError(f"not confirmed: no terminal to confirm on, nothing {action.done}",
                                hint=f"pass --yes to {action.verb} without a prompt")
    question = (f"Type the thread key to {action.verb} it" if one_thread
                else f"Type the number of threads ({expected}) to {action.verb} them")
    try:
        terminal.writer.write(f"{question}: ")
        terminal.writer.flush()
        answer = terminal.reader.readline()
        _pending_signals()
    except KeyboardInterrupt:  # Ctrl-C at the prompt: a clear no
        terminal.writer.write("\n")
        terminal.writer.flush()
        raise StoppedError(f"not confirmed (interrupted), nothing {action.done}", EXIT_INTERRUPTED) from None
    if answer.endswith("\n"):
        answer = answer[:-1]
    if answer.endswith("\r"):
        answer = answer[:-1]
    # The key exactly, or as the plan shows it (escaped): never a trimmed or folded look-alike.
    if answer not in (expected, escape_inline(expected)):  # the error line is escaped where it is written
        raise NotConfirmedError(f"not confirmed: expected '{expected}', nothing {action.done}")


def _pending_signals() -> None:
    """Nothing: calling a Python function runs the signal handlers already due. A Ctrl-C typed
    before the read began returns the line after it (the terminal flushed the rest) and would
    raise KeyboardInterrupt only later, outside the prompt: it is raised here, inside it."""


def confirm_plans(terminal: Terminal | None, plans: list[ThreadErasePlan]) -> None:
    from symfonic_cli.erase import plan as ep

    nonempty = ep.to_erase(plans)
    if len(nonempty) == 1:
        confirm(terminal, nonempty[0].key, ERASE, one_thread=True)
    else:
        confirm(terminal, str(len(nonempty)), ERASE)


def confirm_count(terminal: Terminal | None, total: int, action: Action = ERASE) -> None:
    confirm(terminal, str(total), action)
