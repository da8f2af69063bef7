"""Output rendering in every --format, safe for untrusted content.

Escaping and JSON are in ``escape.py``, tables in ``tables.py``, the terminal (size, colour,
console) in ``terminal.py``, one writer per format in ``writers.py``; this module writes records
and reports in a chosen format (times in --tz for a reader's formats). Every writer takes the
run's Environment, and writes to its stdout unless given another stream.
"""

from __future__ import annotations

from datetime import datetime

from symfonic_cli.render.escape import (  # noqa: F401 - the names every command uses
    _CONTROL,
    _RecordEncoder,
    _escape_control,
    _regex,
    cell,
    escape_controls,
    escape_inline,
    json_dumps,
    json_value,
)
from symfonic_cli.render.writers import human_size, is_data, is_size, write_document, write_result  # noqa: F401
from symfonic_cli.render.tables import _text_width, is_identifier_column, write_record_layout, write_table  # noqa: F401
from symfonic_cli.render.terminal import (  # noqa: F401
    COLOR_MODES,
    color_wanted,
    console,
    default_format,
    is_terminal,
    paint,
    terminal_size,
    warn,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, TextIO

    from symfonic_cli.environment import Environment


# Columns and report lines holding a time: shown in --tz in tables and text (JSON stays UTC).
_TIME_NAMES = frozenset({"ts", "timestamp", "first", "last", "created", "first activity", "last activity"})
_ISO_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)"


def is_time_column(name: str) -> bool:
    return name in _TIME_NAMES or name.endswith(("_at", "_activity", "_ts", " at", " activity"))


def _instant(value: Any) -> datetime | None:
    """A datetime, or a time as the JSON records hold it (ISO 8601 with Z or an offset), as a
    datetime; None for anything else."""
    if isinstance(value, datetime):
        return value
    if type(value) is str and _regex(_ISO_TIME).fullmatch(value):
        try:
            return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
        except ValueError:
            return None
    return None


def shown_time(value: Any, environment: Environment) -> Any:
    """A time as a reader at ``--tz`` reads it (ISO 8601 with that zone's offset; UTC with ``Z``
    by default). Takes a datetime or a time as the JSON records hold it; anything else (``None``,
    a value that is not a time) is returned as is."""
    env = environment
    if type(value) is str and env.shows_utc() and _regex(_ISO_TIME).fullmatch(value):  # the one form for UTC: Z
        return value[:-6] + "Z" if value.endswith("+00:00") else value
    dt = _instant(value)
    if dt is None:
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


def time_heading(environment: Environment) -> str:
    """The heading of a table's column of ``shown_age`` cells: named for what they show."""
    return "time" if environment.absolute_time else "age"


def shown_age(value: Any, environment: Environment) -> Any:
    """A time in a table: its age (``45s``, ``3h``, ``12d``: clock.age) unless --absolute-time,
    then as ``shown_time``. Anything that is not a time is returned as is. Text and JSON keep the
    instants (a program reads them)."""
    if environment.absolute_time:
        return shown_time(value, environment)
    dt = _instant(value)
    if dt is None:
        return value
    from datetime import timezone

    from symfonic_cli.clock import age

    return age(dt, datetime.now(timezone.utc))


def _zoned_records(records: Iterable[dict[str, Any]], columns: Sequence[str], environment: Environment) -> Iterable[dict[str, Any]]:
    """Records with their time columns shown in --tz (table and text only)."""
    env = environment
    times = [c for c in columns if is_time_column(c)]
    if not times or env.shows_utc():
        return records
    return ({**rec, **{c: shown_time(rec.get(c), env) for c in times if c in rec}} for rec in records)


def cut(text: str, limit: int | None) -> str:
    """``text`` up to ``limit`` characters, with a marker saying how much was cut."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def tool_lines(row: Any) -> list[str]:
    """A transcript row's tool calls and tool answer, a line each (the CLI's transcript and the browser show the same)."""
    lines = []
    for call in row.tool_calls or ():
        lines.append(f"-> call {call.get('name')} id={call.get('id')} args={json_dumps(call.get('args'))}")
    if row.role == "tool" and (row.name is not None or row.tool_call_id is not None):
        lines.append(f"<- tool {row.name} answers {row.tool_call_id}")
    return lines


def write_records(
    records: Iterable[dict[str, Any]],
    *,
    fmt: str,
    columns: Sequence[str],
    headers: Sequence[str] | None = None,
    title: str | None = None,
    environment: Environment,
    stream: TextIO | None = None,
    clip: Sequence[str] = (),
) -> int:
    """Write dict records in the chosen format to ``stream`` (the Environment's stdout by
    default); returns how many were written. Times are UTC in JSON and JSONL, in --tz in tables
    and text. ``clip``: columns a table keeps on one line, cut with ``…`` to the room there is."""
    from symfonic_cli.render.writers import RECORD_WRITERS

    out = stream if stream is not None else environment.stdout
    if not is_data(fmt):
        records = _zoned_records(records, columns, environment)
    if fmt == "table" and not environment.absolute_time:
        # Ages (kubectl's AGE) in a table unless --absolute-time (issue #37); text, CSV and JSON keep the instants.
        times = [c for c in columns if is_time_column(c)]
        if times:
            records = ({**rec, **{c: shown_age(rec[c], environment) for c in times if c in rec}} for rec in records)
    layout: dict[str, Any] = {"clip": tuple(clip)} if fmt == "table" else {}
    return RECORD_WRITERS[fmt](records, columns, out, headers=list(headers or columns), title=title, environment=environment, **layout)


def write_pairs(
    pairs: Sequence[tuple[str, Any]], *, fmt: str, environment: Environment, title: str | None = None, stream: TextIO | None = None,
    styles: Sequence[str] | None = None,
) -> None:
    """A key/value report (``store info``); times in --tz in tables and text, UTC in JSON.
    ``styles``: each pair's value style in a table (``red``: a finding), where colour is on."""
    out = stream if stream is not None else environment.stdout
    if is_data(fmt):
        write_document({k: v for k, v in pairs}, fmt, out)
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

    # The frame of every other table: no outer border, a rule between the columns.
    table = Table(title=Text(escape_inline(title)) if title else None, show_header=False, show_edge=False, pad_edge=False)
    table.add_column(style="bold", overflow="fold")  # a label holding a stored name may be long
    table.add_column(overflow="fold")
    for n, (k, v) in enumerate(pairs):
        style = styles[n] if styles is not None and n < len(styles) else ""
        table.add_row(Text(k), Text(cell(human_size(v) if is_size(k) else v), style=style or ""))
    console(environment, out).print(table)
