"""SQLite stores written by ``langgraph-checkpoint-sqlite`` (tables ``checkpoints`` and ``writes``).

Inspecting commands open the file through a ``mode=ro`` URI with ``query_only`` on: no DDL,
no write, no file is ever created, and the saver's ``setup()`` is never run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator

from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation
from symfonic_cli.stores.base import StoreInfo, SupportsWith, ThreadSummary
from symfonic_cli.stores.translate import error_translators
from symfonic_cli.threadkey import prefix_upper_bound, tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.stores.checkpoint_rows import CheckpointRecord, MessageState
    from symfonic_cli.stores.erase_rows import ExtraTable, ThreadErasePlan
    from symfonic_cli.threadstate.listing import ThreadRunState
    from symfonic_cli.threadstate.rows import ThreadRunRows
    from symfonic_cli.stores.history_rows import CheckpointFacts, WriteChannel

BUSY_TIMEOUT_MS = 10_000
REQUIRED_TABLES = ("checkpoints", "writes")


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


def _key_text(value: Any) -> str:
    # A thread_id stored as a BLOB of the key's UTF-8 bytes is that key (see _key_match).
    if type(value) is str:
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("utf-8", "backslashreplace")
    return str(value)


def _merged_by_key(rows, limit: int | None) -> list[ThreadSummary]:
    """Listing rows of a store holding BLOB keys: a key's text and BLOB groups as one thread,
    newest activity first, then key (the order of the SQL listing)."""
    merged: dict[str, list] = {}
    for raw, n, first, last in rows:
        key = _key_text(raw)
        m = merged.get(key)
        if m is None:
            merged[key] = [n, first, last]
        else:
            m[0] += n
            m[1] = first if m[1] is None or (first is not None and first < m[1]) else m[1]
            m[2] = last if m[2] is None or (last is not None and last > m[2]) else m[2]
    out = [ThreadSummary(k, n, first, last) for k, (n, first, last) in merged.items()]
    out.sort(key=lambda t: t.key)
    out.sort(key=lambda t: t.last_checkpoint_id or "", reverse=True)
    return out if limit is None else out[:limit]


def _key_match(key: str) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause and parameters selecting every row of ``key``: thread_id stored as text
    (what the saver writes) or as a BLOB of the key's UTF-8 bytes. Under the saver's TEXT column
    a number is stored as its text, so that form is the text one. COLLATE BINARY: a column
    declared NOCASE (a crafted file) must not fold keys; the primary key still serves it."""
    return "thread_id COLLATE BINARY IN (?, ?)", (key, key.encode("utf-8", "surrogatepass"))


def _blob_range(prefix: str) -> tuple[bytes, bytes]:
    # BLOBs compare with memcmp: the UTF-8 bytes of the prefix and that byte string with its
    # last byte raised (UTF-8 never holds 0xff, so it can always be raised).
    lo = prefix.encode("utf-8", "surrogatepass")
    return lo, lo[:-1] + bytes([lo[-1] + 1])


def _uri_path(path: str) -> str:
    # In an SQLite URI "%" starts an escape, "?" the parameters and "#" a fragment.
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def open_store(location: StoreLocation, *, writable: bool = False, **options: Any) -> "SqliteStore":
    path = location.path
    assert path is not None
    if writable and options.get("init_target"):
        if os.path.lexists(path):
            _require_regular_files(os.path.realpath(path))
        init_sqlite_target(path)  # migrate --init-target: the saver's own setup()
    # Everything below looks at the file the data is in: its -wal and -shm sit beside the target
    # of a symlink, not beside the link.
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise StoreError(f"no SQLite file at {path}", hint="check --store; symfonic never creates a store") from None
    except OSError as exc:
        raise StoreError(f"{path} is not reachable: {exc.strerror}") from None
    _require_regular_files(real)
    if not os.access(real, os.R_OK) or (writable and not os.access(real, os.W_OK)):
        raise StoreError(f"{path} is not {'writable' if writable and os.access(real, os.R_OK) else 'readable'} by this user")
    private = None
    if writable:
        uri = f"file:{_uri_path(real)}?mode=rw"
    else:
        params = _read_only_params(location, real)
        if params == PRIVATE_COPY:
            private, copied = _private_copy(real)
            uri = f"file:{_uri_path(copied)}?mode=ro"
        else:
            uri = f"file:{_uri_path(real)}?{params}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        _remove_private(private)
        raise _store_error(location, exc) from None
    store = SqliteStore(location, conn, writable=writable)
    store.private_copy = private
    store.file = real
    try:
        store._check_schema()
    except BaseException:
        store.close()
        raise
    return store


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _require_regular_files(path: str) -> None:
    """The database and the files SQLite opens beside it (a FIFO there would block it forever)."""
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(f"{name} is not reachable: {exc.strerror}") from None
        _require_regular(name, st)


def _require_regular(path: str, st: os.stat_result) -> None:
    """Exit 4 at once for anything but a regular file, before it is opened (a FIFO would block)."""
    if stat.S_ISREG(st.st_mode):
        return
    what = next((name for test, name in _FILE_KINDS if test(st.st_mode)), "not a regular file")
    raise StoreError(f"{path} is {what}, not an SQLite file")


PRIVATE_COPY = "private-copy"
SHM_DMS_BYTE = 128  # SQLite's "dead man switch" lock in the -shm: every connection holds it shared


def _wal_in_use(shm: str) -> bool | None:
    """Whether a live process has the WAL open: a read lock on the -shm's DMS byte, which every
    SQLite connection holds while it has the database open (unix VFS). None where we cannot tell."""
    import struct
    import sys

    try:
        import fcntl
    except ImportError:  # Windows
        return None
    if sys.platform.startswith("linux"):
        layout = "hhqqi4x"  # l_type, l_whence, l_start, l_len, l_pid
        query = struct.pack(layout, fcntl.F_WRLCK, os.SEEK_SET, SHM_DMS_BYTE, 1, 0)
    elif sys.platform == "darwin" or "bsd" in sys.platform:
        layout = "qqihh"  # l_start, l_len, l_pid, l_type, l_whence
        query = struct.pack(layout, SHM_DMS_BYTE, 1, 0, fcntl.F_WRLCK, os.SEEK_SET)
    else:
        return None
    try:
        fd = os.open(shm, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        answer = struct.unpack(layout, fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except OSError:
        return None
    finally:
        os.close(fd)
    lock_type = answer[0] if layout.startswith("hh") else answer[3]
    return lock_type != fcntl.F_UNLCK


def _private_copy(path: str) -> tuple[str, str]:
    """Copy the database and its -wal into a private temporary directory; (directory, copy).

    A WAL database whose application died must not be opened in place: the first connection
    rebuilds the -shm index from the WAL, rewriting that file. The copy is rebuilt instead.
    """
    import shutil
    import tempfile

    directory = tempfile.mkdtemp(prefix="symfonic-")
    copy = os.path.join(directory, "store.db")
    try:
        shutil.copyfile(path, copy)
        shutil.copyfile(path + "-wal", copy + "-wal")
    except OSError as exc:
        _remove_private(directory)
        raise StoreError(
            f"{path} was left by a crashed application (its -wal is not in use) and must be read "
            f"through a private copy, which failed: {exc.strerror}",
            hint="free space in the temporary directory (TMPDIR), or let the application open the store once",
        ) from None
    return directory, copy


def _remove_private(directory: str | None) -> None:
    if directory:
        import shutil

        shutil.rmtree(directory, ignore_errors=True)


def _read_only_params(location: StoreLocation, real: str) -> str:
    """URI parameters that read without creating or changing any file.

    A ``mode=ro`` connection to a WAL database creates the ``-wal``/``-shm`` files when they are
    missing. When they exist (an application has the database open) we share them and see its
    commits; when they do not, nothing is writing, and ``immutable=1`` reads the file as it is.
    """
    path = location.path
    try:
        with open(real, "rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        if not header:
            raise StoreError(f"{path} is empty, not an SQLite database")
        raise StoreError(f"{path} is not an SQLite database")
    wal_mode = header[18] == 2 or header[19] == 2
    if not wal_mode:
        return "mode=ro"
    wal, shm = f"{real}-wal", f"{real}-shm"
    if os.path.exists(wal) and os.path.exists(shm):
        if _wal_in_use(shm) is False:
            # Left by a crashed (or killed) application: opening it in place would rebuild,
            # that is rewrite, the -shm. An empty log holds nothing: read the file as it is;
            # else read a private copy of the database and its log.
            return "mode=ro&immutable=1" if os.path.getsize(wal) == 0 else PRIVATE_COPY
        return "mode=ro"  # an application has it open: share its index and see its commits
    if os.path.exists(wal) and os.path.getsize(wal) > 0:
        raise StoreError(
            f"{path} has a write-ahead log without its -shm index (left by a crash)",
            hint="let the application open it once, or copy the files and read the copy",
        )
    return "mode=ro&immutable=1"


class SqliteStore(SupportsWith):
    kind = "sqlite"

    def __init__(self, location: StoreLocation, conn: sqlite3.Connection, *, writable: bool) -> None:
        self.location = location
        self.conn = conn
        self.writable = writable
        self.has_task_path = True
        self.file = location.path  # the resolved file (open_store sets it)
        self._blob_keys: bool | None = None
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not writable:
            conn.execute("PRAGMA query_only = ON")

    private_copy: str | None = None  # the temporary directory of a private copy, removed on close

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            _remove_private(self.private_copy)
            self.private_copy = None

    @_translate_errors
    def _check_schema(self) -> None:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in REQUIRED_TABLES if t not in tables]
        if missing:
            raise StoreError(
                f"{self.location.path} is an SQLite file but not a LangGraph checkpoint store "
                f"(missing table{'s' if len(missing) > 1 else ''}: {', '.join(missing)})"
            )
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(writes)")}
        self.has_task_path = "task_path" in cols
        self.tables = sorted(tables)
        # A key range compares stored bytes: in code point order only when the text is UTF-8.
        self.utf8 = self.conn.execute("PRAGMA encoding").fetchone()[0] == "UTF-8"

    def _prefix_where(self, prefix: str) -> tuple[str, list[Any]]:
        """A WHERE condition selecting exactly the rows whose key starts with ``prefix``: text keys,
        and BLOB keys holding UTF-8 bytes (which sort after every text)."""
        blob_lo, blob_hi = _blob_range(prefix)
        if self.utf8:
            # Text sorts by its UTF-8 bytes (BINARY): a range of the primary key. b"" stands for
            # "above every text" when no string bounds the prefix from above.
            hi = prefix_upper_bound(prefix)
            text = "(thread_id COLLATE BINARY >= ? AND thread_id COLLATE BINARY < ?)", [prefix, b"" if hi is None else hi]
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

    # -- what is in the store

    @_translate_iter
    def list_threads(
        self,
        *,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        limit: int | None = None,
    ) -> Iterator[ThreadSummary]:
        where, params = "", []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            where = "WHERE " + cond
        sql = (
            "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) "
            f"FROM checkpoints {where} GROUP BY thread_id ORDER BY max(checkpoint_id) DESC, thread_id"
        )
        if self._has_blob_keys():
            yield from _merged_by_key(self.conn.execute(sql, params), limit)
            return
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        for key, n, first, last in self.conn.execute(sql, params):
            yield ThreadSummary(key, n, first, last)

    @_translate_errors
    def thread_summary(self, key: str) -> ThreadSummary | None:
        row = self.conn.execute(
            "SELECT count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints WHERE thread_id = ?",
            (key,),
        ).fetchone()
        if not row or not row[0]:
            return None
        return ThreadSummary(key, row[0], row[1], row[2])

    @_translate_errors
    def info(self) -> StoreInfo:
        c = self.conn
        threads = c.execute("SELECT count(*) FROM (SELECT DISTINCT thread_id FROM checkpoints)").fetchone()[0]
        checkpoints = c.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        writes = c.execute("SELECT count(*) FROM writes").fetchone()[0]
        namespaces = c.execute(
            "SELECT count(*) FROM (SELECT DISTINCT checkpoint_ns FROM checkpoints)"
        ).fetchone()[0]
        path: str = self.file  # type: ignore[assignment]
        wal = f"{path}-wal"
        details: dict[str, Any] = {
            "file size": os.path.getsize(path),
            "wal size": os.path.getsize(wal) if os.path.exists(wal) else None,
            "journal mode": _journal_mode(path, c),
            "page size": c.execute("PRAGMA page_size").fetchone()[0],
            "tables": ", ".join(self.tables),
            "schema variant": "writes.task_path present" if self.has_task_path else "writes without task_path (pre-task_path saver)",
            "namespaces": namespaces,
            "sqlite version": sqlite3.sqlite_version,
        }
        return StoreInfo("sqlite", self.location.display, threads, checkpoints, writes, details)

    # -- one thread

    @_translate_errors
    def read_checkpoint(
        self,
        key: str,
        *,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        channels: tuple[str, ...] = ("messages",),
    ) -> CheckpointRecord | None:
        from symfonic_cli.decoding import collect_blocked, loads
        from symfonic_cli.stores.checkpoint_rows import CheckpointRecord

        if checkpoint_id is None:
            row = self.conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                (key, checkpoint_ns),
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (key, checkpoint_ns, checkpoint_id),
            ).fetchone()
        if row is None:
            return None
        cid, parent, type_, blob, metadata = row
        with collect_blocked() as blocked:
            checkpoint = loads(type_, blob, what=f"checkpoint {cid}")
        if not isinstance(checkpoint, dict):
            raise StoreError(f"checkpoint {cid} does not decode to a checkpoint mapping")
        values = checkpoint.get("channel_values") or {}
        return CheckpointRecord(
            thread_id=key,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=cid,
            parent_checkpoint_id=parent,
            ts=checkpoint.get("ts"),
            metadata=_json_metadata(metadata, cid),
            channel_values={ch: values[ch] for ch in channels if ch in values},
            channel_versions=dict(checkpoint.get("channel_versions") or {}),
            blocked=frozenset(blocked),
        )

    @_translate_iter
    def iter_message_states(self, key: str) -> Iterator[MessageState]:
        from symfonic_cli.stores.checkpoint_rows import MessageState

        cur = self.conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints "
            "WHERE thread_id = ? ORDER BY checkpoint_id DESC",
            (key,),
        )
        for ns, cid, type_, blob in cur:
            yield MessageState(ns, cid, None, cid, "checkpoint", type_, blob)

    # -- timestamps (protocol docstrings in stores/protocol.py): heads from a blob's first bytes

    @_translate_iter
    def iter_checkpoint_heads(self, key: str) -> Iterator["CheckpointHead"]:
        from symfonic_cli.stores.checkpoint_rows import CheckpointHead

        cur = self.conn.execute(
            "SELECT rowid, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, length(checkpoint) "
            "FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
            (key,),
        )
        for rowid, ns, cid, parent, type_, size in cur.fetchall():
            # metadata is left unread: it sits after the blob in the row (see CheckpointHead.source)
            ts, count = self._blob_head(rowid, type_, size)
            yield CheckpointHead(ns, cid, parent, ts, None, count)

    def _blob_head(self, rowid: int, type_: str | None, size: int | None) -> tuple[str | None, int | None]:
        # Incremental blob I/O (Python 3.11+) reads only the first pages of a blob that may be
        # megabytes long; before 3.11, ``substr`` in SQL gives the same bytes.
        from symfonic_cli.timestamps import NeedMore, checkpoint_blob_head

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

    @_translate_errors
    def read_message_state(self, key: str, *, checkpoint_id: str | None = None) -> MessageState | None:
        from symfonic_cli.stores.checkpoint_rows import MessageState

        sql = "SELECT checkpoint_id, type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
        if checkpoint_id is None:
            row = self.conn.execute(sql + " ORDER BY checkpoint_id DESC LIMIT 1", (key,)).fetchone()
        else:
            row = self.conn.execute(sql + " AND checkpoint_id = ?", (key, checkpoint_id)).fetchone()
        if row is None:
            return None
        cid, type_, blob = row
        return MessageState("", cid, None, cid, "checkpoint", type_, blob)

    @_translate_iter
    def iter_message_writes(self, key: str) -> Iterator["MessageWrite"]:
        from symfonic_cli.stores.checkpoint_rows import MessageWrite

        cur = self.conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, type, value FROM writes "
            "WHERE thread_id = ? AND channel = 'messages'",
            (key,),
        )
        for ns, cid, task_id, idx, type_, value in cur:
            yield MessageWrite(ns, cid, task_id, idx, type_, value)

    # -- history (protocol docstrings in stores/protocol.py): metadata and write channels, no value decoded

    @_translate_iter
    def iter_checkpoint_facts(self, key: str) -> Iterator["CheckpointFacts"]:
        # The metadata sits after the checkpoint blob in the row: reading it walks the blob's
        # overflow pages, but decodes nothing (about 0.2 s per GB of a thread's blobs, cached).
        from symfonic_cli.stores.history_rows import CheckpointFacts

        cur = self.conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
            (key,),
        )
        for ns, cid, raw in cur:
            try:
                meta = _json_metadata(raw, cid)
            except StoreError:
                meta = {}
            source, step = meta.get("source"), meta.get("step")
            yield CheckpointFacts(
                ns, cid, source if isinstance(source, str) else None,
                step if isinstance(step, int) and not isinstance(step, bool) else None, meta.get("writes"),
            )

    @_translate_iter
    def iter_write_channels(self, key: str) -> Iterator["WriteChannel"]:
        from symfonic_cli.stores.history_rows import WriteChannel

        path = "task_path" if self.has_task_path else "''"
        cur = self.conn.execute(
            f"SELECT checkpoint_ns, checkpoint_id, task_id, {path}, idx, channel FROM writes WHERE thread_id = ?",
            (key,),
        )
        for ns, cid, task_id, task_path, idx, channel in cur:
            yield WriteChannel(ns, cid, task_id, task_path or "", idx, channel)

    @_translate_errors
    def checkpoint_ids(self, key: str) -> list[tuple[str, str]]:
        return [tuple(r) for r in self.conn.execute(
            "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?", (key,)
        )]

    @_translate_errors
    def read_messages_as_stored(self, key: str, *, checkpoint_ns: str, checkpoint_id: str) -> MessageState | None:
        from symfonic_cli.stores.checkpoint_rows import MessageState

        row = self.conn.execute(
            "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (key, checkpoint_ns, checkpoint_id),
        ).fetchone()
        if row is None:
            return None
        return MessageState(checkpoint_ns, checkpoint_id, None, checkpoint_id, "checkpoint", row[0], row[1])

    # -- compat (protocol docstrings in stores/protocol.py): json_type/json_extract over metadata only
    # (the saver stores metadata as a BLOB of JSON text; newer SQLite would read a BLOB as JSONB)

    _ENVELOPE_FIELDS = ("format_version", "writer_line", "safe_boundary", "finalized")

    @_translate_iter
    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None):
        from symfonic_cli.stores.envelope_rows import ABSENT, EnvelopeShape

        # The big metadata text is parsed once per row to cut the envelope out (LIMIT -1 keeps
        # SQLite from flattening the subquery, which would re-parse it for every field). The small
        # envelope text is then parsed three times: one json_extract of four paths (a JSON array,
        # so type and value travel together; absent reads as null there, which decodes alike for
        # those four), the type of boundary_sequence, and the type of safe_boundary (absent and
        # null differ for it). An envelope text starting with '{' is an object: no parse for that.
        # Latest checkpoints are counted by a second query over the (thread, max id) index groups:
        # a window over all rows would walk the table in index order, one random read per row.
        fields = [
            "CASE WHEN kind = 'object' THEN json_extract(env, "
            + ", ".join(f"'$.{f}'" for f in self._ENVELOPE_FIELDS)
            + ") END",
            "CASE WHEN kind = 'object' THEN json_type(env, '$.boundary_sequence') END",
            "CASE WHEN kind = 'object' THEN json_type(env, '$.safe_boundary') END",
        ]
        keys = ", ".join(f"k{i}" for i in range(len(fields)))

        def grouped(source: str) -> str:
            return (
                f"SELECT kind, {keys}, older, rid, count(*) FROM ("
                f" SELECT kind, {', '.join(f'{e} AS k{i}' for i, e in enumerate(fields))}, older, rid FROM ("
                f"  SELECT CASE WHEN substr(env, 1, 1) = '{{' THEN 'object' ELSE json_type(env) END AS kind,"
                f"   env, older, rid FROM ({source} LIMIT -1) LIMIT -1))"
                f" GROUP BY kind, {keys}, older, rid"
            )

        # Rows whose metadata SQLite's JSON functions could read differently from the saver's
        # Python json (see _python_only) keep their rowid as a group of their own, and are then
        # decoded in Python; the test runs once per row, in the same pass.
        def flagged(rows: str) -> str:
            return (
                "SELECT CASE WHEN py THEN NULL ELSE m -> :path END AS env, older, CASE WHEN py THEN rid END AS rid"
                f" FROM (SELECT rid, older, m, {_python_only('metadata', envelope_key, text='m')} AS py"
                f"  FROM (SELECT c.rowid AS rid, c.metadata AS metadata, CAST(c.metadata AS TEXT) AS m,"
                f"   coalesce(c.checkpoint_id < :older, 0) AS older FROM {rows} LIMIT -1) LIMIT -1)"
            )

        every = flagged("checkpoints AS c")
        latest = flagged(
            "(SELECT thread_id, max(checkpoint_id) AS last FROM checkpoints WHERE checkpoint_ns = ''"
            "  GROUP BY thread_id) AS l"
            " JOIN checkpoints AS c ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.last"
        )
        params = {"path": _json_path(envelope_key), "older": older_than, **_python_only_params(envelope_key)}
        latest_counts = {tuple(r[:-2]): r[-1] for r in self.conn.execute(grouped(latest), params) if r[-2] is None}
        python_rows = []
        for row in self.conn.execute(grouped(every), params):
            if row[5] is not None:
                python_rows.append(row[5])
                continue
            kind = _KIND.get(row[0], "absent")
            shape = {}
            if kind == "object":
                values = [v if not isinstance(v, (dict, list)) else type(v)() for v in json.loads(row[1])]
                shape = dict(zip(self._ENVELOPE_FIELDS, values))
                if row[3] is None:
                    shape["safe_boundary"] = ABSENT
                shape["boundary_sequence"] = _typed(row[2], _PLACEHOLDER.get(row[2]))
            n_latest = latest_counts.get(tuple(row[:5]), 0)
            yield EnvelopeShape(kind, **shape, older=bool(row[4]), checkpoints=row[6], latest=n_latest)
        yield from self._python_shapes(envelope_key, python_rows, older_than)

    def _python_shapes(self, envelope_key: str, rowids: list[int], older_than: str | None):
        from symfonic_cli.stores.envelope_rows import ABSENT, EnvelopeShape, row_from_metadata

        sql = (
            "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.metadata, coalesce(c.checkpoint_id < :older, 0),"
            " c.checkpoint_ns = '' AND c.checkpoint_id = (SELECT max(m.checkpoint_id) FROM checkpoints AS m"
            "  WHERE m.thread_id = c.thread_id AND m.checkpoint_ns = '')"
            " FROM checkpoints AS c WHERE c.rowid = :rid"
        )
        for rid in rowids:
            found = self.conn.execute(sql, {"rid": rid, "older": older_than}).fetchone()
            if found is None:  # deleted by a writer since the pass
                continue
            tid, ns, cid, meta, older, latest = found
            row = row_from_metadata(str(tid), ns, cid, meta, envelope_key)
            yield EnvelopeShape(
                "absent" if row.envelope is ABSENT else "object",
                older=bool(older), checkpoints=1, latest=int(bool(latest)),
                metadata={} if row.envelope is ABSENT else {envelope_key: row.envelope},
                anomalies=row.anomalies, error=row.error,
            )

    @_translate_iter
    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None):
        from symfonic_cli.stores.envelope_rows import row_from_metadata

        # One thread (or one at a time): each row's metadata decoded as SqliteSaver decodes it.
        where = "WHERE thread_id = :thread" if thread is not None else ""
        sql = (
            "SELECT thread_id, checkpoint_ns, checkpoint_id, metadata FROM checkpoints "
            f"{where} ORDER BY thread_id, checkpoint_id DESC, checkpoint_ns"
        )
        for tid, ns, cid, meta in self.conn.execute(sql, {"thread": thread}):
            yield row_from_metadata(str(tid), ns, cid, meta, envelope_key)

    @_translate_errors
    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        sql = (
            "SELECT j.key, count(*) FROM (SELECT CAST(metadata AS TEXT) AS m FROM checkpoints"
            "  WHERE json_valid(CAST(metadata AS TEXT)) LIMIT -1) AS c, json_each(c.m) AS j"
            " WHERE j.type = 'object' AND j.key != ?"
            " AND json_type(j.value, '$.format_version') IS NOT NULL"
            " AND json_type(j.value, '$.writer_line') IS NOT NULL"
            " GROUP BY j.key ORDER BY count(*) DESC, j.key LIMIT ?"
        )
        return [(str(k), n) for k, n in self.conn.execute(sql, (envelope_key, limit))]

    # -- run state (``thread show``, ``threads list --status/--with-size``; see stores/protocol.py)

    _RUN_LATEST = (
        "SELECT c.checkpoint_ns, c.checkpoint_id, c.type, c.checkpoint, c.metadata FROM checkpoints c "
        "WHERE c.thread_id = ? AND c.checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints "
        "WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns) ORDER BY c.checkpoint_ns"
    )

    @_translate_errors
    def read_run_rows(self, key: str) -> "ThreadRunRows | None":
        from symfonic_cli.threadstate.rows import RawWrite, ThreadRunRows, lean_from_blob

        n, namespaces, first, last, size = self.conn.execute(
            "SELECT count(*), count(DISTINCT checkpoint_ns), min(checkpoint_id), max(checkpoint_id), "
            "coalesce(sum(length(checkpoint) + coalesce(length(metadata), 0)), 0) FROM checkpoints WHERE thread_id = ?",
            (key,),
        ).fetchone()
        if not n:
            return None
        size += self.conn.execute(
            "SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?", (key,)
        ).fetchone()[0]
        latest = [
            lean_from_blob(ns, cid, type_, blob, _json_metadata(meta, cid))
            for ns, cid, type_, blob, meta in self.conn.execute(self._RUN_LATEST, (key,))
        ]
        latest.sort(key=lambda c: (c.checkpoint_ns != "", c.checkpoint_ns))
        wanted = {(c.checkpoint_ns, c.checkpoint_id) for c in latest}
        writes = [
            RawWrite(ns, cid, task_id, task_path, idx, channel, type_, _plain(value))
            for ns, cid, task_id, idx, task_path, channel, type_, value in self.conn.execute(
                f"SELECT checkpoint_ns, checkpoint_id, task_id, idx, {self._writes_columns()} FROM writes "
                "WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
                (key,),
            )
            if (ns, cid) in wanted
        ]
        return ThreadRunRows(latest, writes, n, namespaces, size, first, last)

    # The latest root checkpoint of every thread with the end of its blob from the channel_versions
    # key on (``instr`` finds it without leaving SQLite), and the version maps decoded from there.
    _VERSIONS_KEY = b"\xb0channel_versions"

    @_translate_iter
    def iter_run_states(
        self, *, prefix: str | None = None, with_size: bool = False, with_status: bool = True
    ) -> Iterator["ThreadRunState"]:
        from symfonic_cli.threadstate.listing import ThreadRunState, status_from_tail

        where, params = "", []
        if prefix:
            cond, params = self._prefix_where(prefix)
            where = f"AND {cond}"
        summary = self.conn.execute(
            "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), "
            + ("sum(length(checkpoint) + coalesce(length(metadata), 0)) " if with_size else "0 ")
            + f"FROM checkpoints WHERE 1 {where} GROUP BY thread_id ORDER BY thread_id",
            params,
        )
        if not with_status:
            write_sizes = None
            if with_size:
                write_sizes = self.conn.cursor().execute(
                    f"SELECT thread_id, sum(length(value)) FROM writes WHERE 1 {where} GROUP BY thread_id ORDER BY thread_id", params
                )
            nxt_size = next(write_sizes, None) if write_sizes is not None else None
            for key, n, first, last, size in summary:
                if write_sizes is not None:
                    while nxt_size is not None and nxt_size[0] < key:
                        nxt_size = next(write_sizes, None)
                    if nxt_size is not None and nxt_size[0] == key:
                        size += nxt_size[1] or 0
                        nxt_size = next(write_sizes, None)
                yield ThreadRunState(str(key), n, first, last, None, size if with_size else None)
            return
        latest = self.conn.cursor().execute(
            "SELECT c.thread_id, c.checkpoint_id, json_extract(CAST(c.metadata AS TEXT), '$.step'), c.type, substr(c.checkpoint, 1, 4), "
            "substr(c.checkpoint, instr(c.checkpoint, ?)), length(c.checkpoint), c.rowid "
            "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id) AS l "
            "JOIN checkpoints c ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.cid "
            "ORDER BY c.thread_id",
            [self._VERSIONS_KEY, *params],
        )
        flags = self.conn.cursor().execute(
            "SELECT w.thread_id, w.task_id, max(w.task_path), max(w.channel = '__interrupt__'), max(w.channel = '__error__'), "
            "max(w.channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
            "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id) AS l "
            "JOIN writes w ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.cid "
            "GROUP BY w.thread_id, w.task_id ORDER BY w.thread_id"
            if self.has_task_path else
            "SELECT w.thread_id, w.task_id, NULL, max(w.channel = '__interrupt__'), max(w.channel = '__error__'), "
            "max(w.channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
            "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id) AS l "
            "JOIN writes w ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.cid "
            "GROUP BY w.thread_id, w.task_id ORDER BY w.thread_id",
            params,
        )
        write_sizes = None
        if with_size:
            write_sizes = self.conn.cursor().execute(
                f"SELECT thread_id, sum(length(value)) FROM writes WHERE 1 {where} GROUP BY thread_id ORDER BY thread_id", params
            )
        # Four cursors in thread_id order, merged: one thread in memory at a time.
        nxt_latest = next(latest, None)
        nxt_flag = next(flags, None)
        nxt_size = next(write_sizes, None) if write_sizes is not None else None
        for key, n, first, last, size in summary:
            while nxt_latest is not None and nxt_latest[0] < key:
                nxt_latest = next(latest, None)
            row = None
            if nxt_latest is not None and nxt_latest[0] == key:
                row, nxt_latest = nxt_latest, next(latest, None)
            task_flags = {}
            while nxt_flag is not None and nxt_flag[0] <= key:
                if nxt_flag[0] == key:
                    task_flags[nxt_flag[1]] = (nxt_flag[2], bool(nxt_flag[3]), bool(nxt_flag[4]), bool(nxt_flag[5]))
                nxt_flag = next(flags, None)
            if write_sizes is not None:
                while nxt_size is not None and nxt_size[0] < key:
                    nxt_size = next(write_sizes, None)
                if nxt_size is not None and nxt_size[0] == key:
                    size += nxt_size[1] or 0
                    nxt_size = next(write_sizes, None)
            status = None
            if row is not None:
                _, cid, step, type_, head, tail, length, rowid = row
                status = status_from_tail(
                    cid, step, type_, head, tail, length, task_flags,
                    whole=lambda rowid=rowid: self.conn.execute(
                        "SELECT type, checkpoint, metadata FROM checkpoints WHERE rowid = ?", (rowid,)
                    ).fetchone(),
                )
            yield ThreadRunState(str(key), n, first, last, status, size if with_size else None)

    # -- erase (protocol docstrings in stores/protocol.py)

    _ERASE_CORE = ("writes", "checkpoints")  # delete order: checkpoints last

    def _cascade(self, key: str, extra: tuple[ExtraTable, ...]) -> list[tuple[str, str, tuple[Any, ...]]]:
        """(name, WHERE clause, params) per cascade table; an extra table that cannot hold ``key`` is ''."""
        out = []
        for table in extra:
            filters = table.filters(key)
            if filters is None:
                out.append((table.name, "", ()))
                continue
            conds, params = [], []
            for col, value in filters:
                if value is None:
                    conds.append(f"{_quote(col)} IS NULL")
                else:
                    # as in the saver's tables: the value as text, or as a BLOB of its UTF-8 bytes
                    conds.append(f"{_quote(col)} COLLATE BINARY IN (?, ?)")
                    params += [value, value.encode("utf-8", "surrogatepass")]
            out.append((table.name, " AND ".join(conds), tuple(params)))
        where, params = _key_match(key)
        for name in self._ERASE_CORE:
            out.append((name, where, params))
        return out

    @_translate_errors
    def erase_prepare(self, extra: tuple[ExtraTable, ...], *, dry_run: bool = False) -> list[str]:
        shown: str = self.location.path  # type: ignore[assignment]
        path: str = self.file  # type: ignore[assignment]
        if not self.writable and not dry_run:
            raise StoreError(f"{shown} was opened read-only; erasing needs a writable store")
        if not os.access(path, os.W_OK):
            raise StoreError(f"{shown} is read-only for this user: nothing was deleted")
        # SQLite creates its -wal (WAL mode) or -journal (rollback modes) beside the file.
        folder = os.path.dirname(path)
        mode = _journal_mode(path, self.conn)
        side = f"{path}-wal" if mode == "wal" else f"{path}-journal"
        needs_side = mode in ("wal", "delete", "truncate", "persist")
        if needs_side and (mode == "delete" or not os.path.exists(side)) and not os.access(folder, os.W_OK | os.X_OK):
            raise StoreError(f"{folder} is not writable, so SQLite cannot create {os.path.basename(side)}: nothing was deleted")
        for table in extra:
            cols = {r[1] for r in self.conn.execute(f"PRAGMA table_info({_quote(table.name)})")}
            if not cols:
                raise StoreError(f"declared erase_extra table '{table.name}' does not exist in {shown}")
            for col, _ in table.match:
                if col not in cols:
                    raise StoreError(f"declared erase_extra column '{col}' does not exist in table '{table.name}'")
        if dry_run:
            return []  # the checks above are the real run's; nothing below may change a thing
        self.conn.execute("PRAGMA secure_delete = ON")
        # Take and release the write lock: a read-only file or mount fails here, before any delete.
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("ROLLBACK")
        return []

    @_translate_errors
    def thread_keys_with_prefix(self, prefix: str) -> list[str]:
        if prefix:
            cond, params = self._prefix_where(prefix)
        else:
            cond, params = "1", []
        rows = self.conn.execute(
            f"SELECT thread_id FROM checkpoints WHERE {cond} UNION SELECT thread_id FROM writes WHERE {cond}",
            params * 2,
        )
        keys = set()
        for (raw,) in rows:
            if isinstance(raw, bytes):
                try:
                    raw = raw.decode("utf-8")
                except UnicodeDecodeError:
                    continue  # not the UTF-8 bytes of any key
            if isinstance(raw, str) and raw.startswith(prefix):
                keys.add(raw)
        return sorted(keys)  # code point order, the UTF-8 byte order

    def _counts(self, key: str, extra: tuple[ExtraTable, ...]) -> dict[str, int]:
        counts = {}
        for name, where, params in self._cascade(key, extra):
            if not where:
                counts[name] = 0
                continue
            counts[name] = self.conn.execute(f"SELECT count(*) FROM {_quote(name)} WHERE {where}", params).fetchone()[0]
        return counts

    @_translate_errors
    def erase_plan(self, key: str, extra: tuple[ExtraTable, ...]) -> ThreadErasePlan:
        from symfonic_cli.stores.erase_rows import ThreadErasePlan

        counts = self._counts(key, extra)
        where, params = _key_match(key)
        first, last = self.conn.execute(
            f"SELECT min(checkpoint_id), max(checkpoint_id) FROM checkpoints WHERE {where}", params
        ).fetchone()
        return ThreadErasePlan(key, counts, first, last)

    @_translate_errors
    def erase_thread(self, key: str, extra: tuple[ExtraTable, ...], *, between=None, expected=None) -> dict[str, int]:
        from symfonic_cli.stores.erase_rows import check_against_plan

        deleted: dict[str, int] = {}
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for name, where, params in self._cascade(key, extra):
                deleted[name] = self.conn.execute(f"DELETE FROM {_quote(name)} WHERE {where}", params).rowcount if where else 0
                if between is not None:
                    between(name)
            check_against_plan(expected, deleted, extra)
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        return deleted

    @_translate_errors
    def remaining_rows(self, key: str, extra: tuple[ExtraTable, ...]) -> dict[str, int]:
        return self._counts(key, extra)

    @_translate_errors
    def erase_finish(self, *, vacuum: bool) -> list[str]:
        notes = []
        if vacuum:
            self.conn.execute("VACUUM")
            notes.append("VACUUM rewrote the database file")
        busy, log, done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            notes.append(
                "the write-ahead log could not be truncated (another connection was reading); "
                "erased text may stay in the -wal file until the application's next checkpoint"
            )
        return notes

    # -- migrate (see the "migrate" section of stores/protocol.py)

    def _writes_columns(self) -> str:
        return "task_path, channel, type, value" if self.has_task_path else "'' AS task_path, channel, type, value"

    @_translate_errors
    def export_thread(self, key: str):
        from symfonic_cli.stores.thread_copy import RawRow, ThreadExport

        rows = [
            RawRow("checkpoints", (ns, cid), (parent, type_, _plain(blob), _plain(meta)))
            for ns, cid, parent, type_, blob, meta in self.conn.execute(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                "FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id, checkpoint_ns",
                (key,),
            )
        ]
        rows += [
            RawRow("writes", (ns, cid, task_id, idx), (task_path, channel, type_, _plain(value)))
            for ns, cid, task_id, idx, task_path, channel, type_, value in self.conn.execute(
                f"SELECT checkpoint_ns, checkpoint_id, task_id, idx, {self._writes_columns()} "
                "FROM writes WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
                (key,),
            )
        ]
        return ThreadExport("sqlite", key, rows)

    @_translate_errors
    def import_rows(self, key: str, rows) -> None:
        from symfonic_cli.stores.thread_copy import MigrationConflict

        checkpoints = [(key, *r.key, *r.data) for r in rows if r.table == "checkpoints"]
        writes = [(key, *r.key, *r.data) for r in rows if r.table == "writes"]
        if any(r.table not in ("checkpoints", "writes") for r in rows):
            raise StoreError("rows from a store of another kind cannot be imported as SQLite rows")
        if not self.has_task_path and any(w[5] for w in writes):
            raise StoreError(f"{self.location.path} has the writes table without task_path; run with --init-target to upgrade it")
        write_sql = (
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            if self.has_task_path
            else "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        if not self.has_task_path:
            writes = [w[:5] + w[6:] for w in writes]
        with self._migrate_transaction():
            try:
                # Plain inserts: an existing primary key fails the whole thread (rolled back).
                self.conn.executemany(
                    "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    checkpoints,
                )
                self.conn.executemany(write_sql, writes)
            except sqlite3.IntegrityError as exc:
                raise MigrationConflict(str(exc)) from None

    @_translate_errors
    def decoded_thread(self, key: str):
        from symfonic_cli.decoding import collect_blocked
        from symfonic_cli.migration import ThreadDecoder
        from symfonic_cli.stores.thread_copy import DecodedCheckpoint, DecodedThread, DecodedWrite

        loads = ThreadDecoder().loads
        thread = DecodedThread(key, [], [])
        for ns, cid, parent, type_, blob, meta in self.conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id, checkpoint_ns",
            (key,),
        ):
            what = f"checkpoint {cid} (ns '{ns}')"
            with collect_blocked() as blocked:
                checkpoint = loads(type_, blob, what=what)
            if blocked:
                thread.blocked[what] = sorted(blocked)
            if not isinstance(checkpoint, dict):
                raise StoreError(f"{what} does not decode to a checkpoint mapping")
            thread.checkpoints.append(DecodedCheckpoint(ns, cid, parent, checkpoint, _json_metadata(meta, cid)))
        for ns, cid, task_id, idx, task_path, channel, type_, value in self.conn.execute(
            f"SELECT checkpoint_ns, checkpoint_id, task_id, idx, {self._writes_columns()} FROM writes "
            "WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id, task_path, task_id, idx",
            (key,),
        ):
            what = f"write {cid}/{task_id}/{idx} channel '{channel}'"
            with collect_blocked() as blocked:
                decoded = loads(type_, value, what=what)
            if blocked:
                thread.blocked[what] = sorted(blocked)
            thread.writes.append(DecodedWrite(ns, cid, task_id, task_path, idx, channel, decoded))
        return thread

    @_translate_errors
    def import_decoded(self, key: str, checkpoints, writes, new_versions) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        from symfonic_cli.migration import reusing, write_batches
        from symfonic_cli.stores.thread_copy import MigrationConflict

        # The saver commits after every put; held, its writes join our one transaction.
        saver = SqliteSaver(_HeldTransaction(self.conn))  # type: ignore[arg-type]
        saver.serde = reusing(saver.serde)  # same bytes; each shared message encoded once
        saver.is_setup = True  # tables checked at open; setup() would commit (executescript)
        saver._has_task_path = self.has_task_path
        with self._migrate_transaction():
            for cp in checkpoints:
                if self.conn.execute(
                    "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (key, cp.checkpoint_ns, cp.checkpoint_id),
                ).fetchone():
                    raise MigrationConflict(f"checkpoint {cp.checkpoint_id} appeared in the target")
            for w in writes:
                if self.conn.execute(
                    "SELECT 1 FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ?",
                    (key, *w.key),
                ).fetchone():
                    raise MigrationConflict(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} appeared in the target")
            for cp, versions in zip(checkpoints, new_versions):
                config = {"configurable": {"thread_id": key, "checkpoint_ns": cp.checkpoint_ns, "checkpoint_id": cp.parent_checkpoint_id}}
                saver.put(config, cp.checkpoint, cp.metadata, versions)
            for ns, cid, task_id, task_path, batch in write_batches(writes):
                config = {"configurable": {"thread_id": key, "checkpoint_ns": ns, "checkpoint_id": cid}}
                saver.put_writes(config, batch, task_id, task_path)

    def _migrate_transaction(self):
        from contextlib import contextmanager

        from symfonic_cli.stores.thread_copy import migrate_fault_point

        @contextmanager
        def tx():
            if not self.writable:
                raise StoreError(f"{self.location.path} was opened read-only")
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                migrate_fault_point("before-commit")
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

        return tx()


class _HeldTransaction:
    """An sqlite3 connection whose ``commit()`` waits for ours (the saver commits per call)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def commit(self) -> None:
        pass

    def __getattr__(self, name: str):
        return getattr(self._conn, name)


def _plain(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def init_sqlite_target(path: str) -> None:
    """``--init-target``: the SqliteSaver's own setup() (creates the file and its tables)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        conn = sqlite3.connect(str(path), check_same_thread=False)
        try:
            SqliteSaver(conn).setup()
            conn.commit()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise _store_error(StoreLocation("sqlite", path, path, None, {}), exc) from None


def _quote(name: str) -> str:
    # Names are validated identifiers already (erase_plan.parse_extra); quoting is the second fence.
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


def _journal_mode(path: str, conn: sqlite3.Connection) -> str:
    # An immutable connection reports "delete"; the file header knows better.
    with open(path, "rb") as fh:
        header = fh.read(20)
    if len(header) == 20 and header[18] == 2:
        return "wal"
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def _json_metadata(raw: Any, checkpoint_id: str) -> dict[str, Any]:
    from symfonic_cli.metadata_json import MetadataError, loads

    if raw is None:
        return {}
    try:
        value = loads(raw)
    except MetadataError as exc:
        raise StoreError(f"checkpoint {checkpoint_id}: {exc.reason}") from None
    return value if isinstance(value, dict) else {}


# -- compat helpers: SQLite's json_type names to the protocol's, values made faithful

_KIND = {"null": "null", "true": "boolean", "false": "boolean", "integer": "integer", "real": "number",
         "text": "string", "array": "array", "object": "object"}
_PLACEHOLDER = {"null": None, "true": True, "false": False, "integer": 0, "real": 0.0, "text": "",
                "array": [], "object": {}}


def _json_path(key: str) -> str:
    # A quoted label takes any key but one holding '"' (SQLite has no escape for it).
    if '"' in key:
        raise StoreError(f"an envelope key holding '\"' cannot be read from SQLite: {key!r}")
    return f'$."{key}"'


# Envelope fields whose repetition inside the metadata sends the row to Python (see _python_only).
_READ_FIELDS = ("format_version", "writer_line", "safe_boundary", "finalized", "boundary_sequence",
                "boundary_id", "package_version")


def _python_only(column: str, key: str, *, text: str | None = None) -> str:
    """SQL: true for rows whose metadata SQLite's JSON functions could read differently from the
    saver's ``json.loads`` (these are decoded in Python, exactly as the saver does):

    - not valid JSON to SQLite: NaN, Infinity, nesting deeper than SQLite reads, other encodings;
    - not a BLOB or TEXT, or holding a NUL byte (Python detects UTF-16/32 by them);
    - longer than 20,000 bytes (it may hold an integer beyond metadata_json.MAX_INT_DIGITS);
    - any backslash escape (an escaped key is the same key to Python), any multi-byte UTF-8
      sequence (lone surrogates among them: SQLite counts fewer characters than bytes);
    - the envelope key, or a field the report reads, written twice: SQLite reads the FIRST of
      duplicate keys, Python the LAST.
    Numbers need no test: json_extract of several paths returns each value's text verbatim, and
    Python parses it. Not caught: bytes that are not UTF-8 inside a JSON string where SQLite's
    character count still equals the byte count (stray continuation bytes); a GLOB over every
    character would find them but costs several times the whole report.
    """
    m = text or f"CAST({column} AS TEXT)"
    repeated = " OR ".join(
        f"instr(substr({m}, instr({m}, :q{i}) + 1), :q{i}) > 0" for i in range(len(_READ_FIELDS) + 1)
    )
    return (
        f"({column} IS NOT NULL AND (typeof({column}) NOT IN ('blob', 'text')"
        f" OR instr(CAST({column} AS BLOB), x'00') > 0 OR length(CAST({column} AS BLOB)) > 20000"
        f" OR NOT json_valid({m}) OR instr({m}, '\\') > 0 OR length({m}) != length(CAST({column} AS BLOB))"
        f" OR {repeated}))"
    )


def _python_only_params(key: str) -> dict[str, str]:
    return {f"q{i}": json.dumps(name) for i, name in enumerate((key, *_READ_FIELDS))}


def _typed(json_type: str | None, value: Any) -> Any:
    """A json_type/json_extract pair as the faithful Python value (booleans come back as 1/0)."""
    from symfonic_cli.stores.envelope_rows import ABSENT

    if json_type is None:
        return ABSENT
    if json_type in ("true", "false"):
        return json_type == "true"
    if json_type in ("array", "object"):
        return [] if json_type == "array" else {}
    if json_type == "null":
        return None
    return value
