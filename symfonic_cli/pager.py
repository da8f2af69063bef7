"""A pager for reading commands on a terminal, as git does.

When stdout is a terminal and the command only reads, its output is held until it ends; taller
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


def hold(words: list[str], environment: Environment) -> HeldOutput | None:
    """A HeldOutput in place of the Environment's stdout when this command's output may be paged,
    else None."""
    real = environment.stdout
    if not pageable(words) or not environment.pager:
        return None
    try:
        if not real.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    held = HeldOutput(real)
    environment.stdout = held
    return held


def release(held: HeldOutput, environment: Environment, *, ok: bool) -> None:
    """Put stdout back and show what the command wrote: through the pager when it is taller than
    the screen (and the command ended well, and --no-pager was not given), else straight to the
    terminal. Once: a second call (the error boundary released it first) does nothing."""
    if environment.stdout is not held:
        return
    environment.stdout = held.real
    text = held.getvalue()
    command = pager_command()
    if ok and environment.pager and command not in ("", "cat") and text.count("\n") >= held.lines:
        if _page(command, text, held.real):
            return
    held.real.write(text)
    held.real.flush()


def _page(command: str, text: str, real: TextIO) -> bool:
    """``text`` through the pager, on the terminal behind ``real`` (its file descriptor)."""
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    encoding = getattr(real, "encoding", None) or "utf-8"
    try:
        real.flush()
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=real.fileno(), env=env)
    except OSError:
        return False
    assert proc.stdin is not None  # stdin=PIPE
    try:
        proc.stdin.write(text.encode(encoding, "replace"))
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the reader quit early
    proc.wait()
    if proc.returncode in (126, 127):  # the shell could not find or run it: show the text
        return False
    return True
