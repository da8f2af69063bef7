"""Output rendering: table, text, json and jsonl, safe for untrusted content.

Table and text output never interpret rich markup and show control characters escaped, so
stored content cannot recolour, retitle or take over the reader's terminal. JSON keeps the
exact content (control characters as JSON escapes).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from datetime import datetime

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, TextIO


# Bidirectional formatting characters reorder what a reader sees ("Trojan Source").
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 controls except tab and newline, DEL, C1 controls, the bidi characters, line and paragraph
# separators, and lone surrogates (UTF-8 cannot write them).
_CONTROL = f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}\ud800-\udfff]"
# Kept exact in JSON, but as escapes: line and paragraph separators, C1 and bidi characters, and
# lone surrogates (a stored "\ud800" decodes to one; UTF-8 cannot encode it, JSON can escape it).
_JSON_UNSAFE = f"[\x7f-\x9f\u2028\u2029{_BIDI}\ud800-\udfff]"


@functools.cache
def _regex(pattern: str) -> re.Pattern:
    # Compiled on first use: a quick listing in JSON never needs them.
    return re.compile(pattern)


def escape_controls(text: str) -> str:
    if text.isprintable():  # holds none of them (each is a Cc or Cf character): checked in C
        return text
    return _regex(_CONTROL).sub(_escape_control, text)


def _escape_control(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


# Printable to str.isprintable() yet blank or invisible: combining grapheme joiner, Hangul
# fillers, Khmer inherent vowels, Mongolian and other variation selectors, braille blank.
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
_INLINE_SHORT = {"\n": "\\n", "\t": "\\t", "\\": "\\\\"}


def escape_inline(text: str) -> str:
    """For one-line cells and keys: every character that is not plainly visible as itself is shown
    as an escape, so two different strings never print the same.

    Newline and tab become ``\\n`` and ``\\t``, a backslash ``\\\\``; controls up to U+00FF
    ``\\xNN``; every other character that is not printable (format, bidi, line and paragraph
    separators, whitespace other than the ASCII space: NBSP, U+2028, U+200B, U+FEFF, ...) and
    the invisible ones above ``\\uNNNN`` (``\\UNNNNNNNN`` beyond the BMP).
    """
    if text.isprintable() and "\\" not in text and (text.isascii() or _INVISIBLE.isdisjoint(text)):
        return text  # the common case, checked in C
    return _regex("[^ -\\[\\]-~]").sub(_escape_inline_char, text)


def _escape_inline_char(match: re.Match) -> str:
    char = match.group()
    short = _INLINE_SHORT.get(char)
    if short is not None:
        return short
    if char.isprintable() and char not in _INVISIBLE:
        return char
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


# Characters escaped in JSON shown to a reader (``json_dumps(..., visible=True)``): what
# escape_inline escapes beyond the controls json_dumps escapes already.
def _escape_json_visible(match: re.Match) -> str:
    char = match.group()
    if char.isprintable() and char not in _INVISIBLE:
        return char
    code = ord(char)
    if code > 0xFFFF:  # JSON escapes astral characters as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        from symfonic_cli.model.times import iso_utc

        return iso_utc(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


# One encoder for every compact dump: json.dumps with options builds a new one per call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, default=_json_default)


def _escape_json_unsafe(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def _json_safe(out: str) -> str:
    if out.isascii() and "\x7f" not in out:  # the common case, checked in C
        return out
    return _regex(_JSON_UNSAFE).sub(_escape_json_unsafe, out)


def json_dumps(value: Any, *, indent: int | None = None, visible: bool = False) -> str:
    """JSON text. ``visible``: for a reader's terminal, also every invisible or blank-looking
    character as a ``\\u`` escape (the same JSON value, so it parses to the same strings)."""
    try:
        if indent is None:
            out = _COMPACT.encode(value)
        else:
            out = json.dumps(value, ensure_ascii=False, indent=indent, default=_json_default)
    except (ValueError, RecursionError):
        # A stored value at the limits (symfonic_cli/codec/metadata_json.py): a long integer, deep nesting.
        from symfonic_cli.codec.metadata_json import deep, int_digits

        with int_digits(), deep():
            out = json.dumps(value, ensure_ascii=False, indent=indent, default=_json_default)
    out = _json_safe(out)
    if visible and not out.isascii():
        out = _regex("[^\\x00-\\x7f]").sub(_escape_json_visible, out)
    return out


class _NotFlat(Exception):
    pass


def _json_scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return json.encoder.encode_basestring(value)
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    raise _NotFlat


class _RecordEncoder:
    """``json_dumps`` for records whose keys are exactly ``columns`` and whose values are str,
    int or None (a listing's rows), about four times faster; anything else goes to json_dumps.
    The text is the same, byte for byte (tests/test_listing.py compares them)."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        keys = [json.encoder.encode_basestring(c).replace("%", "%%") for c in self.columns]
        self.template = "{" + ", ".join(f"{k}: %s" for k in keys) + "}"

    def dumps(self, rec: dict[str, Any]) -> str:
        if tuple(rec) == self.columns:
            try:
                return _json_safe(self.template % tuple(map(_json_scalar, rec.values())))
            except _NotFlat:
                pass
        return json_dumps(rec)


def is_terminal(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def default_format(explicit: str | None) -> str:
    if explicit:
        return explicit
    return "table" if is_terminal() else "text"


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime):
        from symfonic_cli.model.times import iso_utc

        return iso_utc(value)
    if value is True or value is False:  # yes/no in tables and text; true/false in JSON
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):  # a JSON list; one line in a table
        return ", ".join(cell(v) for v in value)
    try:
        text = str(value)
    except (ValueError, RecursionError):  # a long integer or deep nesting (metadata_json limits)
        from symfonic_cli.codec.metadata_json import deep, int_digits

        with int_digits(), deep():
            text = str(value)
    return escape_inline(text)


from symfonic_cli.environment import COLOR_MODES  # noqa: E402,F401 - --color, kept on the Environment


def color_wanted(stream: TextIO | None = None, environment=None) -> bool | None:
    """False: no escape sequence at all; True: styles even off a terminal; None: rich decides
    (a terminal that is not ``TERM=dumb``). NO_COLOR (any value) beats auto and always."""
    from symfonic_cli.environment import current

    return (environment or current()).color_wanted()


def terminal_size(stream: TextIO | None = None) -> tuple[int, int]:
    """(columns, lines) of the terminal behind ``stream``; COLUMNS/LINES, else 80x24, elsewhere."""
    stream = stream or sys.stdout
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


def console(stream: TextIO | None = None):
    from rich.console import Console

    wanted = color_wanted(stream)
    options: dict[str, Any] = {}
    if wanted is False:
        options["color_system"] = None  # rich writes no style at all, bold included
    elif wanted is True:
        options["force_terminal"] = True
    out = stream or sys.stdout
    if getattr(out, "paged_width", None):
        options["width"] = out.paged_width
        options.setdefault("force_terminal", out.isatty())
    return Console(
        file=out,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=False,
        **options,
    )


# Columns and report lines holding a time: shown in --tz in tables and text (JSON stays UTC).
_TIME_NAMES = frozenset({"ts", "timestamp", "first", "last", "created", "first activity", "last activity"})
_ISO_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)"


def is_time_column(name: str) -> bool:
    return name in _TIME_NAMES or name.endswith(("_at", "_activity", "_ts", " at", " activity"))


def shown_time(value: Any, environment=None) -> Any:
    """A time as a reader at ``--tz`` reads it (ISO 8601 with that zone's offset; UTC with ``Z``
    by default). Takes a datetime or a time as the JSON records hold it; anything else (``None``,
    a value that is not a time) is returned as is."""
    from symfonic_cli.environment import current

    env = environment or current()
    if isinstance(value, datetime):
        dt = value
    elif type(value) is str and _regex(_ISO_TIME).fullmatch(value):
        if env.shows_utc():  # the one form for UTC: Z
            return value[:-6] + "Z" if value.endswith("+00:00") else value
        try:
            dt = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
        except ValueError:
            return value
    else:
        return value
    if env.shows_utc():
        return cell(dt)
    if dt.tzinfo is None:
        from datetime import timezone

        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(env.zone()).isoformat()
    except (OverflowError, ValueError):  # within hours of year 1 or 9999: as stored
        return cell(dt)


def _zoned_records(records: Iterable[dict[str, Any]], columns: Sequence[str], environment) -> Iterable[dict[str, Any]]:
    """Records with their time columns shown in --tz (table and text only)."""
    from symfonic_cli.environment import current

    env = environment or current()
    times = [c for c in columns if is_time_column(c)]
    if not times or env.shows_utc():
        return records
    return ({**rec, **{c: shown_time(rec.get(c), env) for c in times if c in rec}} for rec in records)


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


def write_table(
    rows: Sequence[Sequence[str]],
    headers: Sequence[str],
    *,
    whole: Sequence[bool] | None = None,
    title: str | None = None,
    stream: TextIO | None = None,
    show_lines: bool = False,
) -> None:
    """A table of already-escaped cells. Identifier columns (``whole``) stay on one line; the
    others fold (never below their header's width). When the identifiers and the other headers
    do not fit the terminal, each row is printed as a record instead (psql's expanded mode)."""
    out = stream or sys.stdout
    whole = list(whole) if whole is not None else [is_identifier_column(h) for h in headers]
    widths = [_text_width(h) for h in headers]
    need = list(widths)
    for row in rows:
        for i, value in enumerate(row):
            if whole[i]:
                need[i] = max(need[i], _text_width(value))
    con = console(out)
    width = con.width
    least = sum(need[i] if whole[i] else max(widths[i], 1) for i in range(len(headers))) + _table_frame(len(headers))
    if least > width or not rows:
        write_record_layout(rows, headers, title=title, stream=out, width=width, con=con)
        return
    from rich.table import Table
    from rich.text import Text

    # A title (a store's path, a key) as wide as the screen allows, not folded to a narrow table.
    table = Table(title=Text(title) if title else None, show_lines=show_lines, show_edge=False, pad_edge=False,
                  min_width=min(_text_width(title), width) if title else None)
    for i, h in enumerate(headers):
        if whole[i]:
            table.add_column(Text(h), no_wrap=True, min_width=need[i], overflow="ignore")
        else:
            table.add_column(Text(h), overflow="fold", min_width=max(widths[i], 1))
    for row in rows:
        table.add_row(*(Text(v) for v in row))
    con.print(table)


def write_record_layout(rows, headers, *, title=None, stream=None, width=80, con=None) -> None:
    """One ``field: value`` line per column, a rule between rows. Values fold under themselves
    past the terminal's width; an identifier longer than the line stays whole."""
    out = stream or sys.stdout
    label = max((_text_width(h) for h in headers), default=0)
    con = con or console(out)
    bold = con.color_system is not None
    lines = []
    if title:
        lines.append(title)
    room = max(width - label - 2, 20)
    for n, row in enumerate(rows, 1):
        head = f"-[ RECORD {n} ]"
        lines.append(head + "-" * max(width - len(head), 0))
        for h, value in zip(headers, row):
            name = (h + ":").ljust(label + 1)
            if bold:
                name = f"\x1b[1m{name}\x1b[0m"
            parts = value.split("\n") or [""]
            folded = []
            for part in parts:
                if is_identifier_column(h) or len(part) <= room:
                    folded.append(part)
                else:
                    folded.extend(part[i:i + room] for i in range(0, len(part), room))
            lines.append(f"{name} {folded[0]}".rstrip(" "))
            lines.extend(" " * (label + 2) + more for more in folded[1:])
    if not rows:
        lines.append("(0 rows)")  # as psql's expanded mode: never a title alone
    out.write("".join(line + "\n" for line in lines))


def human_size(value: Any) -> Any:
    """Bytes as a person reads them in a table (``1.2 MiB``); JSON keeps the byte count."""
    if type(value) is not int or value < 0:
        return value
    if value < 1024:
        return f"{value} B"
    size = float(value)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        size /= 1024
        if size < 1024 or unit == "PiB":
            return f"{size:.1f} {unit}"
    return value


def is_size(name: str) -> bool:
    return name == "size_bytes" or name.endswith((" size", "_size"))


def cut(text: str, limit: int | None) -> str:
    """``text`` up to ``limit`` characters, with a marker saying how much was cut."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def write_records(
    records: Iterable[dict[str, Any]],
    *,
    fmt: str,
    columns: Sequence[str],
    headers: Sequence[str] | None = None,
    title: str | None = None,
    stream: TextIO | None = None,
    environment=None,
) -> int:
    """Write dict records in the chosen format; returns how many were written. Times are UTC in
    JSON and JSONL, in --tz in tables and text."""
    out = stream or sys.stdout
    n = 0
    if fmt in ("json", "jsonl"):
        dumps = _RecordEncoder(columns).dumps
    if fmt == "jsonl":
        for rec in records:
            out.write(dumps(rec) + "\n")
            n += 1
        return n
    if fmt == "json":
        # One document, complete or absent: nothing is written before the last record is made.
        parts = []
        for rec in records:
            parts.append(("," if n else "") + "\n  " + dumps(rec))
            n += 1
        out.write("[" + "".join(parts) + ("\n]\n" if n else "]\n"))
        return n
    heads = list(headers or columns)
    records = _zoned_records(records, columns, environment)
    if fmt == "text":
        out.write("\t".join(heads) + "\n")
        for rec in records:
            out.write("\t".join(cell(rec.get(c)) for c in columns) + "\n")
            n += 1
        return n
    sizes = [is_size(c) for c in columns]
    rows = [[cell(human_size(rec.get(c)) if sizes[i] else rec.get(c)) for i, c in enumerate(columns)] for rec in records]
    write_table(rows, heads, whole=[is_identifier_column(c) for c in columns], title=escape_inline(title) if title else None, stream=out)
    return len(rows)


def write_pairs(
    pairs: Sequence[tuple[str, Any]], *, fmt: str, title: str | None = None, stream: TextIO | None = None, environment=None
) -> None:
    """A key/value report (``store info``); times in --tz in tables and text, UTC in JSON."""
    out = stream or sys.stdout
    if fmt in ("json", "jsonl"):
        out.write(json_dumps({k: v for k, v in pairs}, indent=2 if fmt == "json" else None) + "\n")
        return
    # Labels may carry stored names (a subgraph's namespace): escaped as every value is.
    pairs = [(escape_inline(k), shown_time(v, environment) if is_time_column(k) else v) for k, v in pairs]
    if fmt == "text":
        width = max((len(k) for k, _ in pairs), default=0)
        for k, v in pairs:
            out.write(f"{k.ljust(width)}  {cell(v)}\n")
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(escape_inline(title)) if title else None, show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for k, v in pairs:
        table.add_row(Text(k), Text(cell(human_size(v) if is_size(k) else v)))
    console(out).print(table)
