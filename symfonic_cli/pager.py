"""A pager for reading commands on a terminal, as git does.

When stdout is a terminal and the command only reads (or help is asked for), its output is held until it ends; taller
than the screen, it goes to ``$SYMFONIC_PAGER``, else ``$PAGER``, else ``less -FRX``. Never off a
terminal, never for a command that asks a question or reports progress (erase, migrate), and
never with ``--no-pager`` (or an empty pager, or ``cat``).
"""

from __future__ import annotations

import io
import os

# typing.TYPE_CHECKING without importing typing (every command on a terminal loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO
    from symfonic_cli.environment import Environment

# Commands whose output may be paged: (group,) for every command of a group, else (group, command).
PAGED = {("transcript",), ("threads",), ("compat",), ("store",), ("thread", "show"), ("thread", "history"), ("thread", "diff")}
DEFAULT_PAGER = "less -FRX"


class HeldOutput(io.StringIO):
    """stdout while a command runs: a terminal to the command (format, width, colour), kept in
    memory until the command ends."""

    def __init__(self, real: TextIO) -> None:
        super().__init__()
        from symfonic_cli.render import terminal_size

        self.real = real
        self.paged_width, self.lines = terminal_size(real)

    def isatty(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # StringIO's is an attribute; this one follows the terminal's
        return getattr(self.real, "encoding", None) or "utf-8"


def pageable(words: list[str]) -> bool:
    return bool(words) and ((words[0],) in PAGED or tuple(words[:2]) in PAGED)


def pager_command() -> str:
    for name in ("SYMFONIC_PAGER", "PAGER"):
        value = os.environ.get(name)
        if value is not None:
            return value.strip()
    return DEFAULT_PAGER


def hold(words: list[str], environment: Environment, *, help_asked: bool = False) -> HeldOutput | None:
    """A HeldOutput in place of the Environment's stdout when this command's output may be paged
    (any command's ``--help`` too: ``thread prune --help`` is 100 lines), else None."""
    real = environment.stdout
    if not (help_asked or pageable(words)) or not environment.pager:
        return None
    try:
        if not real.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    held = HeldOutput(real)
    environment.stdout = held
    return held


def release(held: HeldOutput, environment: Environment, *, ok: bool) -> int | None:
    """Put stdout back and show what the command wrote: through the pager when it is taller than
    the screen (and ``ok``: the command ended well or its report is whole, and --no-pager was not
    given), else straight to the terminal. Once: a second call (the error boundary released it
    first) does nothing. Returns the exit status the pager's end calls for (130 after a Ctrl-C
    while it ran, 128 + N when a signal N ended it), else None."""
    if environment.stdout is not held:
        return None
    environment.stdout = held.real
    text = held.getvalue()
    command = pager_command()
    if ok and environment.pager and command not in ("", "cat") and text.count("\n") >= held.lines:
        shown, status = _page(command, text, held.real)
        if shown:
            return status
    held.real.write(text)
    held.real.flush()
    return None


def _page(command: str, text: str, real: TextIO) -> tuple[bool, int | None]:
    """``text`` through the pager, on the terminal behind ``real`` (its file descriptor): (whether
    the pager ran, the exit status its end calls for). As git and psql do, Ctrl-C while it runs is
    the pager's alone: this process notes it, waits for the pager to end and puts the terminal's
    modes back, so no pager is left reading the terminal and no traceback is printed."""
    import signal
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    encoding = getattr(real, "encoding", None) or "utf-8"
    interrupted: list[int] = []
    try:
        # A handler, not SIG_IGN: the pager starts with the default action (an exec resets a
        # handler, while an ignored signal would stay ignored in the pager).
        previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum))
    except ValueError:  # not the main thread (an embedding program's worker)
        previous = None
    modes = _terminal_modes(real)
    try:
        real.flush()
        try:
            proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=real.fileno(), env=env)
        except OSError:
            return False, None
        assert proc.stdin is not None  # stdin=PIPE
        try:
            proc.stdin.write(text.encode(encoding, "replace"))
            proc.stdin.close()
        except OSError:
            pass  # the reader quit early (BrokenPipeError)
        proc.wait()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        _restore_terminal(modes)
    if proc.returncode in (126, 127):  # the shell could not find or run it: show the text
        return False, None
    if interrupted:
        return True, 128 + signal.SIGINT
    if proc.returncode < 0:
        return True, 128 - proc.returncode
    return True, None


def _terminal_modes(real: TextIO) -> tuple[int, list] | None:
    """The terminal's modes (termios) behind ``real``, to put back after the pager."""
    try:
        import termios

        fd = real.fileno()
        return fd, termios.tcgetattr(fd)
    except (ImportError, AttributeError, ValueError, OSError):
        return None


def _restore_terminal(modes: tuple[int, list] | None) -> None:
    if modes is None:
        return
    import termios

    try:
        termios.tcsetattr(modes[0], termios.TCSADRAIN, modes[1])
    except (termios.error, OSError):
        pass
