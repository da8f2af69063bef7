"""One writer per ``--format``: a command hands its records (or its one JSON document) and the
format here decides the syntax. Adding a format is a writer here and its word in vocabulary.py.

- ``write_records(records, fmt=...)`` (``render.write_records``): rows of the same fields;
- ``write_document(doc, fmt, out)``: one whole document (a report of sections);
- ``is_data(fmt)``: the format writes the JSON values for a program (json, jsonl, csv), not lines
  laid out for a reader (table, text, each command's own).

CSV is RFC 4180: a header row of the JSON fields, CRLF line ends, a field quoted when it holds a
comma, a quote or a line break; ``null`` is an empty field, true/false and numbers as in JSON, a
nested value as its compact JSON. Text from a store is hostile there too: its controls (but tab
and newline) are escaped as everywhere, and a field starting with one of ``FORMULA_STARTS``
(``=``, ``+``, ``-``, ``@``, Tab, CR: OWASP's list) gets a leading ``'`` so a spreadsheet never
runs it as a formula.
"""

from __future__ import annotations

from symfonic_cli.render.escape import _RecordEncoder, cell, escape_controls, escape_inline, json_dumps, json_value

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TextIO

DATA_FORMATS = ("json", "jsonl", "csv")

# A spreadsheet may read a field starting with one of these as a formula (a Tab or CR before
# "=HYPERLINK(...)" too): every CSV field of text starting so is guarded (csv_field).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_data(fmt: str) -> bool:
    return fmt in DATA_FORMATS


def _jsonl(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, **_layout: Any) -> int:
    dumps = _RecordEncoder(columns).dumps
    n = 0
    for rec in records:
        out.write(dumps(rec) + "\n")
        n += 1
    return n


def _json(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, **_layout: Any) -> int:
    # One document, complete or absent: nothing is written before the last record is made.
    dumps = _RecordEncoder(columns).dumps
    parts = []
    n = 0
    for rec in records:
        parts.append(("," if n else "") + "\n  " + dumps(rec))
        n += 1
    out.write("[" + "".join(parts) + ("\n]\n" if n else "]\n"))
    return n


def _csv(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, **_layout: Any) -> int:
    # Complete or absent too. The header is the fields the records hold, in their order (what JSON
    # writes); without a record, the columns.
    rows = list(records)
    fields = list(dict.fromkeys(name for rec in rows for name in rec)) if rows else list(columns)
    if not fields:
        return 0  # nothing to say, not even a header
    lines = [_csv_line(fields)] + [_csv_line([csv_field(rec.get(f)) for f in fields]) for rec in rows]
    out.write("".join(lines))
    return len(rows)


def _text(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, *, headers: Sequence[str],
          **_layout: Any) -> int:
    out.write("\t".join(headers) + "\n")
    n = 0
    for rec in records:
        out.write("\t".join(cell(rec.get(c)) for c in columns) + "\n")
        n += 1
    return n


def _table(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, *, headers: Sequence[str],
           title: str | None, environment: Any, clip: Sequence[str] = ()) -> int:
    from symfonic_cli.render.tables import is_identifier_column, write_table

    sizes = [is_size(c) for c in columns]
    rows = [[cell(human_size(rec.get(c)) if sizes[i] else rec.get(c)) for i, c in enumerate(columns)] for rec in records]
    write_table(rows, list(headers), whole=[is_identifier_column(c) for c in columns], title=escape_inline(title) if title else None,
                environment=environment, stream=out, clip=[c in clip for c in columns])
    return len(rows)


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


RECORD_WRITERS: dict[str, Callable[..., int]] = {"json": _json, "jsonl": _jsonl, "csv": _csv, "text": _text, "table": _table}


def write_document(doc: dict[str, Any], fmt: str, out: TextIO) -> None:
    """One whole document: JSON (indented), JSONL (one line), or CSV of its leaves, one a row
    (``field``: the JSON path, ``a.b`` and ``list.0.name``; ``value``)."""
    if fmt == "csv":
        out.write(_csv_line(["field", "value"]) + "".join(_csv_line([csv_field(p), csv_field(v)]) for p, v in _leaves(doc, "")))
        return
    out.write(json_dumps(doc, indent=2 if fmt == "json" else None) + "\n")


def _leaves(value: Any, path: str) -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, (list, tuple)) and value:
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}.{i}" if path else str(i))
    else:
        yield path, value


def csv_field(value: Any) -> str:
    """One CSV field's text (before quoting): the JSON value, a store's text made safe to open."""
    if value is None:
        return ""
    if type(value) is not str:
        value = json_value(value)  # a time as JSON writes it, a set as a list, ...
        if type(value) is not str:
            return json_dumps(value)  # a number, true/false, or a nested value's compact JSON
    text = escape_controls(value)
    return "'" + text if text[:1] in FORMULA_STARTS or value[:1] in FORMULA_STARTS else text


def _csv_line(fields: Sequence[str]) -> str:
    return ",".join(f'"{f.replace(chr(34), chr(34) * 2)}"' if any(c in f for c in ',"\n\r') else f for f in fields) + "\r\n"
