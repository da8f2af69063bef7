"""What the SQLite backend's sections share: errors, constants and small helpers."""

from __future__ import annotations

import os
import sqlite3

from symfonic_cli.codec.msgpack_head import encrypted_blob_head
from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation
from symfonic_cli.stores._common import error_translators
from symfonic_cli.threadkey import prefix_upper_bound

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# sqlite3 errors become one-line store errors naming the file.
_translate_errors, _translate_iter = error_translators(
    lambda: (sqlite3.Error,), lambda store, exc: _store_error(store.location, exc)
)


REQUIRED_TABLES = ("checkpoints", "writes")


SQLITE_READONLY_ROLLBACK = 776  # a hot journal needs rolling back, which a read-only connection cannot do


JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _hot_journal(location: StoreLocation, exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code == SQLITE_READONLY_ROLLBACK
    try:
        with open(f"{os.path.realpath(location.path)}-journal", "rb") as fh:
            return fh.read(8) == JOURNAL_MAGIC
    except OSError:
        return False


SQLITE_BUSY, SQLITE_LOCKED = 5, 6


def _is_busy(exc: BaseException) -> bool:
    """SQLITE_BUSY (another connection holds the lock past the busy timeout) or SQLITE_LOCKED."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+; extended codes keep the primary in the low byte
    if code is not None:
        return code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED)
    return "database is locked" in str(exc) or "database table is locked" in str(exc)


def _store_error(location: StoreLocation, exc: BaseException) -> StoreError:
    text = str(exc)
    if _is_busy(exc):
        from symfonic_cli.errors import ThreadBusy

        return ThreadBusy(f"busy: another connection held the write lock of {location.path} past the lock timeout; "
                          "rolled back, nothing changed")
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
    # An immutable connection reports "delete"; the file header knows better. The header is read
    # only then: closing a descriptor of the database file drops every POSIX lock this process
    # holds on it, the connection's WAL-mode SHARED lock among them, after which an application's
    # last connection to close checkpoints and deletes the -wal under ours (SQLite's "how to
    # corrupt" 2.2): this process then read a stale snapshot. An immutable connection holds none.
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    if mode != "delete":
        return mode
    with open(path, "rb") as fh:
        header = fh.read(20)
    return "wal" if len(header) == 20 and header[18] == 2 else mode


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

    open_warnings: tuple[str, ...] | list[str] = ()  # the driver's warnings while opening

    writes_replay_order = "sorted"  # the saver replays writes in writes_sort_key order
    conn: sqlite3.Connection
    location: StoreLocation
    file: str  # the resolved file
    writable: bool
    has_task_path: bool  # writes.task_path exists (langgraph-checkpoint-sqlite 2.0.11+)
    tables: list[str]  # every table of the file
    utf8: bool  # the file's text encoding is UTF-8 (a key range is then a byte range)
    keys_folded: bool = False  # a checkpoint table declares a collation (NOCASE, say): "=" may fold keys
    _blob_keys: bool | None = None
    # What compat's pass over every row (SqliteCompat.envelope_shapes) counted on the way, for the
    # two reads compat report makes next: each row's page is read once, not three times. Taken
    # (and cleared) by the first read that uses it; None: no such pass.
    _pass_census: tuple[int, int] | None = None  # the checkpoints' values: (encrypted, plain)
    _pass_candidates: int | None = None  # rows that could hold another envelope key

    def _take_pass(self, name: str) -> Any:
        return self.__dict__.pop(name, None)

    def _writes_columns(self) -> str:
        return "task_path, channel, type, value" if self.has_task_path else "'' AS task_path, channel, type, value"

    def _key_is(self, column: str = "thread_id", value: str = "?") -> str:
        """The one comparison of a key column with a key, byte for byte, that every read of one
        thread uses; its parameters are ``_key_args(key)``. The saver's columns compare in bytes
        (BINARY): ``column = ?``. A file declaring another collation (NOCASE folds ``acme:_:bob``
        into ``ACME:_:BOB``): the column's own "=" lets its index find the candidates and COLLATE
        BINARY keeps the exact key (COLLATE BINARY alone would scan the table). ``value``: another
        key column (a join), which takes no parameters."""
        if self.keys_folded:
            return f"({column} = {value} AND {column} = {value} COLLATE BINARY)"
        return f"{column} = {value}"

    def _key_args(self, key: str) -> tuple[str, ...]:
        return (key, key) if self.keys_folded else (key,)

    def _prefix_where(self, prefix: str) -> tuple[str, list[Any]]:
        """A WHERE condition selecting exactly the rows whose key starts with ``prefix``: text keys,
        and BLOB keys holding UTF-8 bytes (which sort after every text)."""
        blob_lo, blob_hi = _blob_range(prefix)
        if self.utf8:
            # Text sorts by its UTF-8 bytes (BINARY): a range of the primary key. b"" stands for
            # "above every text" when no string bounds the prefix from above.
            hi = prefix_upper_bound(prefix)
            text: tuple[str, list[Any]] = "(thread_id COLLATE BINARY >= ? AND thread_id COLLATE BINARY < ?)", [prefix, b"" if hi is None else hi]
        else:
            # UTF-16 text compares as UTF-16 code units, not in code point order: compare the
            # first characters themselves (substr counts characters of text).
            text = "substr(thread_id, 1, ?) = ?", [len(prefix), prefix]
        if not self._has_blob_keys():
            return text[0], text[1]  # the range alone: the primary key's order serves the GROUP BY
        return f"({text[0]} OR (thread_id >= ? AND thread_id < ?))", [*text[1], blob_lo, blob_hi]

    def _has_blob_keys(self) -> bool:
        # BLOBs sort after every text: one index seek per table says whether any key is one.
        if self._blob_keys is None:
            self._blob_keys = any(
                self.conn.execute(f"SELECT 1 FROM {t} WHERE thread_id >= x'' LIMIT 1").fetchone() for t in REQUIRED_TABLES
            )
        return self._blob_keys

    def _blob_head(self, rowid: int, type_: str | None, size: int | None) -> tuple[str | None, int | None]:
        # Incremental blob I/O (Python 3.11+) reads only the first pages of a blob that may be
        # megabytes long; before 3.11, ``substr`` in SQL gives the same bytes.
        from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

        if type_ == "msgpack+aes" and size:
            row = self.conn.execute("SELECT checkpoint FROM checkpoints WHERE rowid = ?", (rowid,)).fetchone()
            return encrypted_blob_head(type_, row[0] if row is not None else None)
        if type_ != "msgpack" or not size:
            return None, None
        blob = None
        if hasattr(self.conn, "blobopen"):
            try:
                blob = self.conn.blobopen("checkpoints", "checkpoint", rowid, readonly=True)
            except sqlite3.OperationalError:  # the row went away under a concurrent writer
                return None, None
        want = 512
        try:
            while True:
                head = blob[0:min(want, size)] if blob is not None else self._blob_prefix(rowid, min(want, size))
                if head is None:
                    return None, None
                try:
                    return checkpoint_blob_head(head)
                except NeedMore:
                    if want >= size:
                        return None, None
                    want *= 4
                except ValueError:
                    return None, None
        finally:
            if blob is not None:
                blob.close()

    def _blob_prefix(self, rowid: int, n: int) -> bytes | None:
        row = self.conn.execute("SELECT substr(checkpoint, 1, ?) FROM checkpoints WHERE rowid = ?", (n, rowid)).fetchone()
        return bytes(row[0]) if row is not None and row[0] is not None else None


def _blob_range(prefix: str) -> tuple[bytes, bytes]:
    # BLOBs compare with memcmp: the UTF-8 bytes of the prefix and that byte string with its
    # last byte raised (UTF-8 never holds 0xff, so it can always be raised).
    lo = prefix.encode("utf-8", "surrogatepass")
    return lo, lo[:-1] + bytes([lo[-1] + 1])


def _try_write_lock(conn: sqlite3.Connection) -> None:
    """Take and release the write lock: a read-only file or mount fails here, before any delete.
    Busy (another connection writes) proves the file writable: each thread's transaction then
    waits for the lock again, bounded by the lock timeout, and reports the thread busy."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            return
        raise
    conn.execute("ROLLBACK")
