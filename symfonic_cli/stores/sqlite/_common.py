"""What the SQLite backend's sections share: errors, constants and small helpers."""

from __future__ import annotations

import os
import sqlite3

from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation
from symfonic_cli.stores._common import error_translators

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# sqlite3 errors become one-line store errors naming the file.
_translate_errors, _translate_iter = error_translators(
    lambda: (sqlite3.Error,), lambda store, exc: _store_error(store.location, exc)
)


SQLITE_READONLY_ROLLBACK = 776  # a hot journal needs rolling back, which a read-only connection cannot do


JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _hot_journal(location: StoreLocation, exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code == SQLITE_READONLY_ROLLBACK
    try:
        with open(f"{os.path.realpath(location.path)}-journal", "rb") as fh:
            return fh.read(8) == JOURNAL_MAGIC
    except OSError:
        return False


def _store_error(location: StoreLocation, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if ("readonly" in text or "read-only" in text) and _hot_journal(location, exc):
        return StoreError(
            f"{location.path} has a hot rollback journal ({os.path.realpath(location.path)}-journal): a transaction was cut off "
            "by a crash and SQLite must roll it back before the file can be read, which a read-only "
            "inspection never does",
            hint="let the application open the store once, or copy the file and its -journal and inspect the copy",
        )
    if "file is not a database" in text:
        return StoreError(f"{location.path} is not an SQLite database")
    if "malformed" in text:
        return StoreError(f"{location.path} is damaged or truncated: {text}")
    if "readonly" in text or "read-only" in text:
        return StoreError(f"{location.path} is read-only: {text}")
    return StoreError(f"SQLite error on {location.path}: {text}")


def _plain(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def _journal_mode(path: str, conn: sqlite3.Connection) -> str:
    # An immutable connection reports "delete"; the file header knows better.
    with open(path, "rb") as fh:
        header = fh.read(20)
    if len(header) == 20 and header[18] == 2:
        return "wal"
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def _json_metadata(raw: Any, checkpoint_id: str) -> dict[str, Any]:
    from symfonic_cli.codec.metadata_json import MetadataError, loads

    if raw is None:
        return {}
    try:
        value = loads(raw)
    except MetadataError as exc:
        raise StoreError(f"checkpoint {checkpoint_id}: {exc.reason}") from None
    return value if isinstance(value, dict) else {}


class SqliteSection:
    """What the SQLite store's sections (read, state, copy, ...) share: the connection and schema
    facts ``SqliteStore`` sets when it opens, and the helpers built on them."""

    conn: sqlite3.Connection
    location: StoreLocation
    has_task_path: bool  # writes.task_path exists (langgraph-checkpoint-sqlite 2.0.11+)

    def _writes_columns(self) -> str:
        return "task_path, channel, type, value" if self.has_task_path else "'' AS task_path, channel, type, value"
