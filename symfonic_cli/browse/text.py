"""What the browser shows, as rich ``Text`` (never markup): store text escaped by the CLI's rules.

``inline`` (keys, node names, one-line cells) is ``escape_inline``; ``block`` (a message, wrapped,
never cut) is ``escape_controls``, which keeps newlines and tabs. A ``Text`` is drawn as it is:
``[bold]`` in a message stays those six characters, it is never read as Rich or Textual markup.
"""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import Any

from rich.text import Text

from symfonic_cli.clock import age
from symfonic_cli.render.escape import escape_controls, escape_inline, json_dumps

# A light red: 4.5:1 or more on the browser's dark backgrounds in colour and as the grey NO_COLOR
# draws it (Textual's monochrome filter keeps only a colour's luminance; plain red gave 1.7:1).
ERROR_COLOUR = "#ff8080"
ERROR_STYLE = f"bold {ERROR_COLOUR}"
STATUS_STYLE = {"error": ERROR_STYLE, "interrupted": "bold yellow", "pending": "cyan", "done": "green"}
ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "tool": "magenta", "system": "dim"}


def inline(value: Any) -> str:
    """One line, every invisible or control character as an escape (``escape_inline``)."""
    return escape_inline(value if isinstance(value, str) else json_dumps(value, visible=True))


def block(value: str) -> str:
    """A message's text: controls escaped, newlines kept (``escape_controls``)."""
    return escape_controls(value)


def plain(*parts: str | tuple[str, str]) -> Text:
    """A Text from parts already escaped: a str, or (str, style)."""
    out = Text(end="", no_wrap=True)
    for part in parts:
        if isinstance(part, tuple):
            out.append(part[0], style=part[1])
        else:
            out.append(part)
    return out


def first_line(text: str | None, width: int) -> str:
    """The first user message on one line, cut to ``width`` cells with an ellipsis."""
    if not text:
        return ""
    flat = inline(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def shown_age(then: datetime | None, now: datetime) -> str:
    return age(then, now)


def command_line(words: list[str]) -> str:
    """A command as a shell reads it (quoted), shown escaped: what ``x`` shows and ``y`` copies there."""
    return inline(" ".join(shlex.quote(w) for w in ["symfonic", *words]))


def pairs(rows: list[tuple[str, Any]], *, width: int = 18) -> Text:
    """``name   value`` lines, values escaped (JSON for anything that is not text)."""
    out = Text(end="")
    for i, (name, value) in enumerate(rows):
        if i:
            out.append("\n")
        out.append(f"{name:<{width}} ", style="bold")
        out.append(inline(value) if value is not None else "-")
    return out
