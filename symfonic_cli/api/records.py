"""What the Python API's ``Store`` answers with: a ``Record`` per row (its fields as attributes,
``to_json()`` the command's ``-f json`` record) and the lists and streams of them that carry what
the command says beside its rows (warnings, threads it could not read) as data."""

from __future__ import annotations

from datetime import datetime

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class TranscriptRows(list):
    """``Store.transcript``'s rows (a list), with what ``transcript show`` prints beside them on
    stderr as data: ``.warnings`` (messages shown from their raw fields: a class not on the safe
    list, an odd field) and ``.not_read_by_application`` (why symfonic-core's own get_transcript
    and restart-resume read none of these messages; None: they read them), which every row carries too."""

    def __init__(self, rows: list[Any], *, warnings: list[str], not_read_by_application: str | None) -> None:
        super().__init__(rows)
        self.warnings = list(warnings)
        self.not_read_by_application = not_read_by_application


class Record:
    """One row of an answer: its fields as attributes (``.key``, ``.status``, ...) and, with
    ``to_json()``, the record the command prints with ``-f json``. Time fields are
    timezone-aware datetimes (or None); in ``to_json()`` they are ISO 8601 text in UTC."""

    __slots__ = ("_json", "_values")

    def __init__(self, json: dict[str, Any], values: dict[str, Any] | None = None) -> None:
        self._json = json
        self._values = {**json, **(values or {})}

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def keys(self):
        return self._values.keys()

    def to_json(self) -> dict[str, Any]:
        import copy

        return copy.deepcopy(self._json)

    def json_view(self) -> dict[str, Any]:
        """``to_json()`` without the copy, for a caller inside symfonic that only reads it (the MCP
        server's answers, where the deep copy was an eighth of a listing's time)."""
        return self._json

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and other._values == self._values

    def __repr__(self) -> str:
        return f"Record({self._values!r})"


class ThreadRow(Record):
    """A ``Store.threads()`` row. ``.status`` is there without ``status=``/``with_size``-style
    asking: when the listing did not read it, it is read for this thread when first asked for (as
    ``thread_state(key).status``, on the same open store), so a caller printing a few rows pays
    for those only. ``to_json()`` stays the command's record (status only when asked for)."""

    __slots__ = ("_read_status",)

    def __init__(self, json: dict[str, Any], values: dict[str, Any], read_status: Any) -> None:
        super().__init__(json, values)
        self._read_status = read_status

    def _status(self) -> None:
        if "status" not in self._values:
            self._values["status"] = self._read_status(self._values["key"])

    def __getattr__(self, name: str) -> Any:
        if name == "status":
            self._status()
        return super().__getattr__(name)

    def __getitem__(self, name: str) -> Any:
        if name == "status":
            self._status()
        return super().__getitem__(name)


def _instant(text: str | None) -> datetime | None:
    if text is None:
        return None
    return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)


class Rows(list):
    """A list of rows with what the command says on stderr beside them: ``.warnings`` (one line
    each, unescaped: the front end escapes what it shows)."""

    def __init__(self, rows: Any = (), *, warnings: list[str] | None = None) -> None:
        super().__init__(rows)
        self.warnings = list(warnings or ())


class Recalled(Rows):
    """``Store.resume_window``'s rows, and ``.reason``: why a restart recalls nothing (None: it recalls them)."""

    def __init__(self, rows: Any = (), *, warnings: list[str] | None = None, reason: str | None = None) -> None:
        super().__init__(rows, warnings=warnings)
        self.reason = reason


class Noted(Record):
    """A record with what the command says on stderr beside it: ``.warnings``, a line each."""

    __slots__ = ("warnings",)

    def __init__(self, json: dict[str, Any], values: dict[str, Any] | None = None, *, warnings: list[str] | None = None) -> None:
        super().__init__(json, values)
        self.warnings = list(warnings or ())


class InfoRecord(Record):
    """``Store.info()``: the JSON record, and ``pairs()`` with the names ``store info`` shows in a
    table or text (words with spaces)."""

    __slots__ = ("_shown",)

    def __init__(self, json: dict[str, Any], shown: list[tuple[str, Any]]) -> None:
        super().__init__(json)
        self._shown = shown

    def pairs(self) -> list[tuple[str, Any]]:
        return list(self._shown)


class Stream:
    """Records read as they are iterated (a listing or a search streams: a page costs a page), and
    what the reading found on the way: ``.columns`` (the records' fields, in order), ``.undatable``
    (threads whose activity has no time, counted as they stream; ``.undatable_first``: those
    counted before the first record), ``.status_unknown`` (why a status asked for only if the store
    can tell it is not there), ``.skipped`` (threads that could not be read, a line each with why)."""

    def __init__(self, records: Iterator[Any], *, columns: tuple[str, ...] = (), undatable: list[int] | None = None,
                 skipped: list[str] | None = None, location: str = "") -> None:
        self._records = records
        self.columns = columns
        self._undatable = undatable if undatable is not None else [0]
        self.undatable_first = 0  # counted before the first record (a listing in another order reads every row first)
        self.status_unknown: str | None = None  # a listing asked for the status only if told: why it is not
        self.skipped = skipped if skipped is not None else []
        self.location = location

    @property
    def undatable(self) -> int:
        return self._undatable[0]

    def __iter__(self) -> Iterator[Any]:
        return self._records

    def __next__(self) -> Any:
        return next(self._records)

