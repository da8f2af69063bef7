"""Lines that fit a terminal: the plans and summaries of store-changing runs (erase, sweeps,
prune, export), wrapped by the program instead of cut by the terminal.

A line is a sequence of pieces: free text (a plain ``str``) wraps at its spaces; a ``Whole``
piece (a thread key, a time, an id, a number with its unit, a path) is never broken, however many
spaces it holds. A whole piece wider than the room after the indent starts at the left edge; one
wider than the line itself is broken there, at character boundaries, on lines of its own (it is
still all there, in order, with no indent between its parts). Widths are terminal cells.

API:
- ``Whole(text)``: a piece that stays on one line;
- ``width_of(stream)``: the width to wrap to (the terminal's, or the pager's screen), or None off
  a terminal: a file or a pipe gets one line per record, as before;
- ``glue(piece, text)``: ``text`` (``piece`` with punctuation added) of the same kind as ``piece``;
  ``enclose(pieces, "(", ");")``: the first and last pieces glued to the brackets;
- ``fit(pieces, width, indent="", hang="    ")``: the text (no final newline), continuation lines
  under ``indent + hang``; ``width=None``: the pieces joined by spaces on one line.
"""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing (quick commands load this package).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TextIO


class Whole(str):
    """A piece of a line that is never broken (unless wider than the line)."""


def width_of(stream: TextIO) -> int | None:
    from symfonic_cli.render.terminal import is_terminal, terminal_size

    paged = getattr(stream, "paged_width", None)
    if paged:
        return int(paged)
    return terminal_size(stream)[0] if is_terminal(stream) else None


def _cells(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def _tokens(pieces: Iterable[str]) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, Whole):
            if piece:
                out.append(str(piece))
        else:
            out.extend(w for w in piece.split(" ") if w)
    return out


def _chop(token: str, room: int) -> list[str]:
    """A token wider than ``room`` cells, in runs of at most ``room`` cells (whole characters)."""
    from rich.cells import get_character_cell_size

    runs, run, used = [], "", 0
    for ch in token:
        w = get_character_cell_size(ch)
        if run and used + w > room:
            runs.append(run)
            run, used = "", 0
        run += ch
        used += w
    if run:
        runs.append(run)
    return runs


def fit(pieces: Iterable[str], width: int | None, *, indent: str = "", hang: str = "    ") -> str:
    tokens = _tokens(pieces)
    if width is None:
        return indent + " ".join(tokens)
    lines: list[str] = []
    line, used = indent, _cells(indent)
    start = True  # nothing on the current line yet but its indent
    more = indent + hang
    for token in tokens:
        w = _cells(token)
        if not start and used + 1 + w <= width:
            line += " " + token
            used += 1 + w
            continue
        if not start:
            lines.append(line)
            line, used = more, _cells(more)
        if used + w <= width:
            line += token
            used += w
        else:  # wider than the room after the indent: from the left edge, broken between characters
            runs = _chop(token, width)
            lines.extend(runs[:-1])
            line, used = runs[-1], _cells(runs[-1])
        start = False
    lines.append(line)
    return "\n".join(lines)


def glue(piece: str, text: str) -> str:
    return Whole(text) if isinstance(piece, Whole) else text


def enclose(pieces: list[str], before: str, after: str) -> list[str]:
    if not pieces:
        return [Whole(before + after)]
    pieces = list(pieces)
    pieces[0] = glue(pieces[0], before + pieces[0])
    pieces[-1] = glue(pieces[-1], pieces[-1] + after)
    return pieces
