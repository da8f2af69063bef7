"""The terminal behind a stream: whether it is one, its size, colour, and a rich console on it.

Every function takes the stream (or the run's Environment) it is about: nothing here reads
``sys.stdout``.
"""

from __future__ import annotations

import os

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
from symfonic_cli.environment import COLOR_MODES  # noqa: F401 - --color, kept on the Environment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from symfonic_cli.environment import Environment


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def default_format(explicit: str | None, environment: Environment) -> str:
    """``explicit``, else a table for a reader at a terminal and text for a program."""
    if explicit:
        return explicit
    return "table" if is_terminal(environment.stdout) else "text"


def color_wanted(environment: Environment) -> bool | None:
    """False: no escape sequence at all; True: styles even off a terminal; None: rich decides
    (a terminal that is not ``TERM=dumb``). NO_COLOR (any value) beats auto and always."""
    return environment.color_wanted()


def terminal_size(stream: TextIO) -> tuple[int, int]:
    """(columns, lines) of the terminal behind ``stream``; COLUMNS/LINES, else 80x24, elsewhere."""
    env_cols, env_lines = os.environ.get("COLUMNS", ""), os.environ.get("LINES", "")
    try:
        size = os.get_terminal_size(stream.fileno())
        cols, lines = size.columns, size.lines
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both
        cols, lines = 80, 24
    if env_cols.isdigit() and int(env_cols) > 0:
        cols = int(env_cols)
    if env_lines.isdigit() and int(env_lines) > 0:
        lines = int(env_lines)
    return max(cols, 20), max(lines, 2)


def console(environment: Environment, stream: TextIO | None = None) -> Any:
    """A rich console on ``stream`` (the Environment's stdout by default), never reading markup,
    in the run's colour choice, as wide as the terminal (or the pager's screen) behind it."""
    from rich.console import Console

    wanted = environment.color_wanted()
    options: dict[str, Any] = {}
    if wanted is False:
        options["color_system"] = None  # rich writes no style at all, bold included
    elif wanted is True:
        options["force_terminal"] = True
    out = stream if stream is not None else environment.stdout
    paged_width = getattr(out, "paged_width", None)  # a HeldOutput (pager.py)
    if paged_width:
        options["width"] = paged_width
        options.setdefault("force_terminal", out.isatty())
    elif is_terminal(out):
        options["width"] = terminal_size(out)[0]  # the terminal behind this stream, not sys.stdout's
    return Console(
        file=out,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=False,
        **options,
    )


# SGR codes of the few colours that mean something (issue #37): a finding or state that needs a look.
_SGR = {"red": "31", "yellow": "33", "cyan": "36", "bold": "1"}


def colour_on(environment: Environment, stream: TextIO) -> bool:
    """Whether styles reach ``stream``: --color always, or auto on a terminal that is not
    ``TERM=dumb``; never under NO_COLOR or --color never (rich's console decides the same way)."""
    wanted = environment.color_wanted()
    if wanted is not None:
        return wanted
    return is_terminal(stream) and os.environ.get("TERM", "") != "dumb"


def paint(text: str, colour: str, environment: Environment, stream: TextIO) -> str:
    """``text`` in ``colour`` where colour is on for ``stream``; else as it is."""
    if not colour_on(environment, stream):
        return text
    return f"\x1b[{_SGR[colour]}m{text}\x1b[0m"


def warn(environment: Environment, text: str) -> None:
    """One warning line on the Environment's stderr (``text`` already escaped); ``warning`` in
    yellow where colour is on there."""
    err = environment.stderr
    err.write(f"symfonic: {paint('warning:', 'yellow', environment, err)} {text}\n")
