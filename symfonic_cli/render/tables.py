"""Tables: rich tables of escaped cells, and psql's expanded record layout when they do not fit."""

from __future__ import annotations

from symfonic_cli.render.terminal import console

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Iterable, Sequence
    from typing import TextIO

    from symfonic_cli.environment import Environment

# Identifiers people copy: never folded, never cut (a key is an exact string).
_WHOLE_NAMES = frozenset({"key", "thread", "ts", "timestamp", "checkpoint", "id", "first", "last"})


def is_identifier_column(name: str) -> bool:
    return name in _WHOLE_NAMES or name.endswith(("_id", "_at", "_activity", "_ts"))


# A table's frame: no outer border (a copied identifier carries no box character), and a rule
# with one space each side between columns.
def _table_frame(ncols: int) -> int:
    return 3 * max(ncols - 1, 0)


def _text_width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.split("\n")), default=0)


# Colour that means something (issue #37): a run state that needs a look stands out. Only where
# colour is on (rich's console drops styles without a colour system: NO_COLOR, --color never, pipes).
STATUS_STYLES = {"error": "red", "interrupted": "yellow", "pending": "cyan",
                 "corrupt": "red", "newer": "red"}  # compat's verdicts no release here can read
# Columns holding a state (threads list's status, compat show's verdict, compat --by-thread's
# latest); columns counting a compat finding, coloured when not 0.
STATE_COLUMNS = frozenset({"status", "latest_status"})
COUNT_STYLES = {"corrupt": "red", "newer": "red", "interrupted": "yellow"}


def cell_style(header: str, value: str) -> str:
    if header in STATE_COLUMNS:
        return STATUS_STYLES.get(value, "")
    if header in COUNT_STYLES and value not in ("0", "-", ""):
        return COUNT_STYLES[header]
    return ""


def write_table(
    rows: Sequence[Sequence[str]],
    headers: Sequence[str],
    *,
    whole: Sequence[bool] | None = None,
    title: str | None = None,
    environment: Environment,
    stream: TextIO | None = None,
    show_lines: bool = False,
    least: Sequence[int] | None = None,
    clip: Sequence[bool] | None = None,
    widths: Sequence[int] | None = None,
    first: int = 1,
) -> None:
    """A table of already-escaped cells. Identifier columns (``whole``) stay on one line; the
    others fold (never below their header's width, nor below ``least``: a caller's widest word,
    so that it wraps between words only); a ``clip`` column stays on one line, cut with ``…`` to
    the room the others leave (a thread's first message: as much as the terminal shows). When the
    identifiers and the other headers do not fit the terminal, each row is printed as a record
    instead (psql's expanded mode). ``widths``: a page of a longer table (write_table_pages): each
    column at that width (an identifier at least), the header on the first page only (``first``:
    the number of the page's first row, as the expanded layout counts them)."""
    out = stream if stream is not None else environment.stdout
    whole = list(whole) if whole is not None else [is_identifier_column(h) for h in headers]
    clipped = [bool(c) for c in clip] if clip is not None else [False] * len(headers)
    fixed = widths
    widths = [max(_text_width(h), (least or ())[i] if i < len(least or ()) else 0) for i, h in enumerate(headers)]
    need = list(widths)
    for row in rows:
        for i, value in enumerate(row):
            if whole[i]:
                need[i] = max(need[i], _text_width(value))
    con = console(environment, out)
    width = con.width
    narrowest = sum(need[i] if whole[i] else max(widths[i], 1) for i in range(len(headers))) + _table_frame(len(headers))
    if fixed is not None:
        need = [max(need[i], fixed[i]) for i in range(len(headers))]
        narrowest = sum(need[i] if whole[i] else max(widths[i], 1) for i in range(len(headers))) + _table_frame(len(headers))
    if narrowest > width or not rows:
        write_record_layout(rows, headers, title=title, environment=environment, stream=out, width=width, con=con, whole=whole,
                            clip=clipped, first=first)
        return
    # The first page's widths hold on every page where they fit the terminal together; else
    # each page folds its own (as one table would).
    settled = fixed is not None and sum(max(need[i], fixed[i]) for i in range(len(headers))) + _table_frame(len(headers)) <= width
    if any(clipped):
        rows = _clipped_rows(rows, headers, clipped, widths, width, natural=fixed)
    from rich.table import Table
    from rich.text import Text

    # A title (a store's path, a key) as wide as the screen allows, not folded to a narrow table.
    table = Table(title=Text(title) if title else None, show_lines=show_lines, show_edge=False, pad_edge=False,
                  min_width=min(_text_width(title), width) if title else None, show_header=first == 1)
    for i, h in enumerate(headers):
        if clipped[i]:
            table.add_column(Text(h), no_wrap=True, overflow="ellipsis")
        elif whole[i]:
            table.add_column(Text(h), no_wrap=True, min_width=need[i], overflow="ignore")
        elif fixed is not None and settled:  # a page of a longer table: the first page's width
            table.add_column(Text(h), overflow="fold", min_width=max(fixed[i], widths[i], 1), max_width=max(fixed[i], widths[i], 1))
        else:
            table.add_column(Text(h), overflow="fold", min_width=max(widths[i], 1))
    for row in rows:
        table.add_row(*(Text(v, style=cell_style(headers[i], v)) for i, v in enumerate(row)))
    con.print(table)


# A table of more rows than this is written a page at a time, each page laid out with the
# column widths of the first (a longer identifier later widens its own page only): memory holds
# one page whatever the number of rows. Up to this many rows, one table as always.
TABLE_PAGE = 1000


def write_table_pages(rows: Iterable[list[str]], headers: Sequence[str], *, whole: Sequence[bool], title: str | None,
                      environment: Environment, stream: TextIO, clip: Sequence[bool]) -> int:
    """``write_table`` of rows that may not all fit in memory; returns how many were written."""
    import itertools

    it = iter(rows)
    page = list(itertools.islice(it, TABLE_PAGE))
    if len(page) < TABLE_PAGE:
        write_table(page, headers, whole=whole, title=title, environment=environment, stream=stream, clip=clip)
        return len(page)
    widths = [max([_text_width(h), *(_text_width(row[i]) for row in page)]) for i, h in enumerate(headers)]
    n = 0
    while page:
        write_table(page, headers, whole=whole, title=title if not n else None, environment=environment, stream=stream,
                    clip=clip, widths=widths, first=n + 1)
        n += len(page)
        page = list(itertools.islice(it, TABLE_PAGE))
    return n


def _clipped_rows(rows: Sequence[Sequence[str]], headers: Sequence[str], clipped: list[bool], widths: list[int],
                  width: int, natural: Sequence[int] | None = None) -> list[list[str]]:
    """The rows with each ``clipped`` column cut to its share of the room the other columns leave
    at their natural width (never below its header's; ``natural``: the widths a longer table's first page set)."""
    from symfonic_cli.render.clip import clip

    if natural is None:
        natural = [max([widths[i], *(_text_width(row[i]) for row in rows)]) for i in range(len(headers))]
    others = sum(natural[i] for i in range(len(headers)) if not clipped[i])
    room = (width - _table_frame(len(headers)) - others) // sum(clipped)
    return [[clip(v, max(room, widths[i])) if clipped[i] else v for i, v in enumerate(row)] for row in rows]


def write_record_layout(rows: Sequence[Sequence[str]], headers: Sequence[str], *, title: str | None = None, environment: Environment,
                        stream: TextIO | None = None, width: int = 80, con: Any = None, whole: Sequence[bool] | None = None,
                        clip: Sequence[bool] | None = None, first: int = 1) -> None:
    """One ``field: value`` line per column, a rule between rows. Values wrap under themselves
    past the terminal's width, between words (a word wider than the line is broken between
    characters); an identifier (``whole``, else by its header's name) longer than the line stays
    whole; a ``clip`` value is cut to the line with ``…``."""
    from symfonic_cli.render.clip import clip as clip_to
    from symfonic_cli.render.fit import fit

    out = stream if stream is not None else environment.stdout
    label = max((_text_width(h) for h in headers), default=0)
    con = con or console(environment, out)
    bold = con.color_system is not None
    lines = []
    if title:
        lines.append(title)
    room = max(width - label - 2, 20)
    for n, row in enumerate(rows, first):
        head = f"-[ RECORD {n} ]"
        lines.append(head + "-" * max(width - len(head), 0))
        for i, (h, value) in enumerate(zip(headers, row)):
            name = (h + ":").ljust(label + 1)
            if bold:
                name = f"\x1b[1m{name}\x1b[0m"
            if clip is not None and i < len(clip) and clip[i]:
                value = clip_to(value, room)
            parts = value.split("\n") or [""]
            folded = []
            for part in parts:
                if (whole[i] if whole is not None else is_identifier_column(h)) or _text_width(part) <= room:
                    folded.append(part)
                else:
                    folded.extend(fit([part], room, hang="").split("\n"))
            style = cell_style(h, value) if bold else ""
            if style:  # a state or a finding's count: coloured as in the table
                from symfonic_cli.render.terminal import _SGR

                folded = [f"\x1b[{_SGR[style]}m{part}\x1b[0m" for part in folded]
            lines.append(f"{name} {folded[0]}".rstrip(" "))
            lines.extend(" " * (label + 2) + more for more in folded[1:])
    if not rows and first == 1:
        lines.append("(0 rows)")  # as psql's expanded mode: never a title alone
    out.write("".join(line + "\n" for line in lines))

