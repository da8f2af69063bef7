"""One writer per ``--format``: a command hands its records (or its one document) and the
format here decides the syntax. A format is for a program (json, jsonl, csv: every word but
``vocabulary.READER_FORMATS``) or for a reader (table, text). A program's format is its writers
here alone, whatever the command: adding one is a writer here (``RECORD_WRITERS`` and
``DOCUMENT_WRITERS``; ``STREAM_WRITERS`` only to stream a document as it is made) and its word in
vocabulary.py, nothing else: tests/cli/test_new_format.py adds one and runs every command with it.
A reader's format has its record writer here too (``_table``, ``_text``: rows of the command's
columns); a command whose answer a person reads in another shape (a transcript's turns, a
history's lanes, a diff, a report's sections, a changing run's plan) lays out its own view for
table and text: those are views, and choosing between the two is the only branch on a format's
word outside render/.

- ``write_records(records, fmt=...)`` (``render.write_records``): rows of the same fields;
- ``write_document(doc, fmt, out)``: one whole document (a report of sections);
- ``write_result(doc, records, fmt, out)``: a result that is a document and its records (JSON
  writes the document, the formats of lines the records);
- ``document_stream(out, fmt)``: a changing run's document written as it goes (its head, an entry
  per thread, its tail);
- ``is_data(fmt)``: the format writes the JSON values for a program, not lines laid out for a
  reader.

CSV is RFC 4180: a header row of the JSON fields, CRLF line ends, a field quoted when it holds a
comma, a quote or a line break; ``null`` is an empty field, true/false and numbers as in JSON, a
nested value as its compact JSON. Text from a store is hostile there too: its controls (but tab
and newline) are escaped as everywhere, and a field starting with one of ``FORMULA_STARTS``
(``=``, ``+``, ``-``, ``@``, Tab, CR: OWASP's list) gets a leading ``'`` so a spreadsheet never
runs it as a formula.
"""

from __future__ import annotations

from symfonic_cli.render.escape import _RecordEncoder, cell, escape_controls, escape_inline, json_dumps, json_value
from symfonic_cli.vocabulary import READER_FORMATS

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TextIO

# A spreadsheet may read a field starting with one of these as a formula (a Tab or CR before
# "=HYPERLINK(...)" too): every CSV field of text starting so is guarded (csv_field).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_data(fmt: str) -> bool:
    """The format is for a program: its writer here writes the command's JSON values (every word
    but vocabulary.READER_FORMATS, which a command may lay out for a reader)."""
    return fmt not in READER_FORMATS


def _jsonl(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, **_layout: Any) -> int:
    dumps = _RecordEncoder(columns).dumps
    n = 0
    for rec in records:
        out.write(dumps(rec) + "\n")
        n += 1
    return n


def _json(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, **_layout: Any) -> int:
    # One document, complete or absent: nothing is written before the last record is made. The
    # document waits in a spool (memory, then a temporary file), so a listing of any size takes
    # a bounded amount of memory.
    dumps = _RecordEncoder(columns).dumps
    add = (spool := _Spool()).add
    n = 0
    with spool:
        sep = "\n  "
        for rec in records:
            add(sep + dumps(rec))
            sep = ",\n  "
            n += 1
        out.write("[")
        spool.copy_to(out)
        out.write("\n]\n" if n else "]\n")
    return n


def _csv(records: Iterable[dict[str, Any]], columns: Sequence[str], out: TextIO, **_layout: Any) -> int:
    # Complete or absent too, spooled as JSON is. The header is the fields the records hold, in
    # their order (what JSON writes); without a record, the columns. A record bringing a field
    # the ones before lacked starts a new part of the spool, whose rows get that field empty.
    fields: dict[str, None] = {}
    parts: list[tuple[int, _Spool]] = []  # (how many fields its rows have, its rows)
    n = 0
    try:
        for rec in records:
            if len(fields) != len(fields.keys() | rec.keys()) or not parts:
                fields.update(dict.fromkeys(rec))
                parts.append((len(fields), _Spool()))
            parts[-1][1].add(_csv_line([csv_field(rec.get(f)) for f in fields]))
            n += 1
        names = list(fields) if n else list(columns)
        if not names:
            return 0  # nothing to say, not even a header
        out.write(_csv_line(names))
        for width, part in parts:
            if width == len(names):
                part.copy_to(out)
            else:  # "\r\n" ends a row only: a field's own carriage return is escaped (csv_field)
                out.write(part.text().replace("\r\n", "," * (len(names) - width) + "\r\n"))
    finally:
        for _, part in parts:
            part.close()
    return n


class _Spool:
    """Text held until it is complete: in memory up to a few MB, then in a temporary file (made,
    and ``tempfile`` imported, only then: most listings never need one)."""

    _MEMORY = 8 << 20
    _BATCH = 512

    def __init__(self) -> None:
        self._file: Any = None
        self._held: list[str] = []  # joined batches, in memory while the file is not made
        self._size = 0
        self._pending: list[str] = []

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, text: str) -> None:
        self._pending.append(text)
        if len(self._pending) >= self._BATCH:
            self._move()

    def _move(self) -> None:
        chunk = "".join(self._pending)
        self._pending = []
        if self._file is None:
            self._held.append(chunk)
            self._size += len(chunk)
            if self._size <= self._MEMORY:
                return
            import tempfile

            self._file = tempfile.TemporaryFile(mode="w+", encoding="utf-8", newline="", errors="surrogatepass")
            chunk, self._held = "".join(self._held), []
        self._file.write(chunk)

    def _chunks(self) -> Any:
        if self._pending:
            self._move()
        if self._file is None:
            return iter(self._held)
        self._file.seek(0)
        return iter(lambda: self._file.read(1 << 20), "")

    def copy_to(self, out: TextIO) -> None:
        for chunk in self._chunks():
            out.write(chunk)

    def text(self) -> str:
        return "".join(self._chunks())

    def close(self) -> None:
        self._held = []
        if self._file is not None:
            self._file.close()


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
    from symfonic_cli.render.tables import is_identifier_column, write_table_pages

    sizes = [is_size(c) for c in columns]
    rows = ([cell(human_size(rec.get(c)) if sizes[i] else rec.get(c)) for i, c in enumerate(columns)] for rec in records)
    return write_table_pages(rows, list(headers), whole=[is_identifier_column(c) for c in columns],
                             title=escape_inline(title) if title else None, environment=environment, stream=out,
                             clip=[c in clip for c in columns])


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
    """One whole document in a format for a program."""
    DOCUMENT_WRITERS[fmt](doc, out)


def _json_document(doc: dict[str, Any], out: TextIO) -> None:
    out.write(json_dumps(doc, indent=2) + "\n")


def _jsonl_document(doc: dict[str, Any], out: TextIO) -> None:
    out.write(json_dumps(doc) + "\n")


def _csv_document(doc: dict[str, Any], out: TextIO) -> None:
    # Its leaves, one a row (``field``: the JSON path, ``a.b`` and ``list.0.name``; ``value``).
    out.write(_csv_line(["field", "value"]) + "".join(_csv_line([csv_field(p), csv_field(v)]) for p, v in _leaves(doc, "")))


DOCUMENT_WRITERS: dict[str, Callable[[dict[str, Any], TextIO], None]] = {
    "json": _json_document, "jsonl": _jsonl_document, "csv": _csv_document}
ONE_DOCUMENT = {"json"}  # a result that is also records is written as its document, not its records


def write_result(doc: dict[str, Any], records: Iterable[dict[str, Any]], fmt: str, out: TextIO) -> None:
    """A result that is both one document and its records (a migration's threads): JSON writes the
    document; the formats of lines (JSONL, CSV) the records."""
    if fmt in ONE_DOCUMENT:
        write_document(doc, fmt, out)
    else:
        RECORD_WRITERS[fmt](records, (), out)


class DocumentStream:
    """A changing run's document, written as it is made: ``begin(head)``, ``item(entry)`` a thread,
    ``end(tail)``; or ``whole(doc)``, made at once. ``end`` closes it; a driver calls it on every
    error Python sees, so stdout never holds half of one (a SIGKILL can cut it: the --receipt file
    is the durable record). This one writes the whole document at ``end`` (any format's
    ``write_document``: ``{head, "threads": [...], tail}``); JSON and JSONL stream."""

    def __init__(self, out: TextIO, fmt: str, record: str = "thread") -> None:
        self.out, self.fmt, self.record = out, fmt, record
        self.head: dict[str, Any] = {}
        self.entries: list[dict[str, Any]] = []
        self.n = 0
        self.open = False

    def begin(self, head: dict[str, Any]) -> None:
        self.head, self.open = head, True

    def item(self, entry: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        self.entries.append(entry)
        self.n += 1

    def whole(self, doc: dict[str, Any]) -> None:
        """A document made at once (not streamed)."""
        write_document(doc, self.fmt, self.out)
        self.out.flush()

    def end(self, tail: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        """``line_head``: fields of the ``end`` line (jsonl) over the head's (its end time)."""
        if not self.open:
            return
        self.open = False
        write_document({**self.head, "threads": self.entries, **tail}, self.fmt, self.out)
        self.out.flush()


class _JsonStream(DocumentStream):
    """One document, its ``threads`` array written element by element."""

    def begin(self, head: dict[str, Any]) -> None:
        self.head, self.open = head, True
        self.out.write("{\n" + "".join(_member(k, v) + ",\n" for k, v in head.items()) + '  "threads": [')
        self.out.flush()

    def item(self, entry: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        text = json_dumps(entry, indent=2).replace("\n", "\n    ")
        self.out.write(("," if self.n else "") + "\n    " + text)
        self.n += 1

    def end(self, tail: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        if not self.open:
            return
        self.open = False
        self.out.write(("\n  ]" if self.n else "]") + "".join(",\n" + _member(k, v) for k, v in tail.items()) + "\n}\n")
        self.out.flush()


class _JsonLinesStream(DocumentStream):
    """A ``start`` line, a line per thread, an ``end`` line: the receipt file's records."""

    def begin(self, head: dict[str, Any]) -> None:
        self.head, self.open = head, True
        self.out.write(json_dumps({"record": "start", **head}) + "\n")
        self.out.flush()

    def item(self, entry: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        self.out.write(json_dumps({"record": self.record, **(line_head or {}), **entry}) + "\n")
        self.n += 1

    def end(self, tail: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        if not self.open:
            return
        self.open = False
        self.out.write(json_dumps({"record": "end", **self.head, **(line_head or {}), **tail}) + "\n")
        self.out.flush()


def _member(name: str, value: Any) -> str:
    return f"  {json_dumps(name)}: " + json_dumps(value, indent=2).replace("\n", "\n  ")


STREAM_WRITERS: dict[str, type[DocumentStream]] = {"json": _JsonStream, "jsonl": _JsonLinesStream}


def document_stream(out: TextIO, fmt: str, record: str = "thread") -> DocumentStream:
    """stdout for a changing run in ``fmt`` (``record``: what a JSONL line of an entry is)."""
    return STREAM_WRITERS.get(fmt, DocumentStream)(out, fmt, record)


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
