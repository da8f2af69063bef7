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
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.stores.checkpoint_rows import CheckpointRecord, MessageState
    from symfonic_cli.stores.erase_rows import ExtraTable, ThreadErasePlan

BUSY_TIMEOUT_MS = 10_000
REQUIRED_TABLES = ("checkpoints", "writes")


# sqlite3 errors become one-line store errors naming the file.
_translate_errors, _translate_iter = error_translators(
    lambda: (sqlite3.Error,), lambda store, exc: _store_error(store.location, exc)
)


def _store_error(location: StoreLocation, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if "file is not a database" in text:
        return StoreError(f"{location.path} is not an SQLite database")
    if "malformed" in text:
        return StoreError(f"{location.path} is damaged or truncated: {text}")
    if "readonly" in text or "read-only" in text:
        return StoreError(f"{location.path} is read-only: {text}")
    return StoreError(f"SQLite error on {location.path}: {text}")


def _range_for_prefix(prefix: str) -> tuple[str, str]:
    # Keys sort bytewise (BINARY collation), so a prefix is a key range the primary key serves.
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _uri_path(path: str) -> str:
    # In an SQLite URI "%" starts an escape, "?" the parameters and "#" a fragment.
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def open_store(location: StoreLocation, *, writable: bool = False, **options: Any) -> "SqliteStore":
    path = location.path
    assert path is not None
    if writable and options.get("init_target"):
        init_sqlite_target(path)  # migrate --init-target: the saver's own setup()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise StoreError(f"no SQLite file at {path}", hint="check --store; symfonic never creates a store") from None
    except OSError as exc:
        raise StoreError(f"{path} is not reachable: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{path} is a directory, not an SQLite file")
    if not os.access(path, os.R_OK) or (writable and not os.access(path, os.W_OK)):
        raise StoreError(f"{path} is not {'writable' if writable and os.access(path, os.R_OK) else 'readable'} by this user")
    uri = f"file:{_uri_path(os.path.realpath(path))}?" + ("mode=rw" if writable else _read_only_params(location))
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise _store_error(location, exc) from None
    store = SqliteStore(location, conn, writable=writable)
    try:
        store._check_schema()
    except BaseException:
        conn.close()
        raise
    return store


def _read_only_params(location: StoreLocation) -> str:
    """URI parameters that read without creating or changing any file.

    A ``mode=ro`` connection to a WAL database creates the ``-wal``/``-shm`` files when they are
    missing. When they exist (an application has the database open) we share them and see its
    commits; when they do not, nothing is writing, and ``immutable=1`` reads the file as it is.
    """
    path = location.path
    assert path is not None
    try:
        with open(path, "rb") as fh:
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
    wal, shm = f"{path}-wal", f"{path}-shm"
    if os.path.exists(wal) and os.path.exists(shm):
        return "mode=ro"
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
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not writable:
            conn.execute("PRAGMA query_only = ON")

    def close(self) -> None:
        self.conn.close()

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
            lo, hi = _range_for_prefix(tenant_prefix(tenant, sub_tenant))
            where, params = "WHERE thread_id >= ? AND thread_id < ?", [lo, hi]
        sql = (
            "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) "
            f"FROM checkpoints {where} GROUP BY thread_id ORDER BY max(checkpoint_id) DESC, thread_id"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        for key, n, first, last in self.conn.execute(sql, params):
            yield ThreadSummary(str(key), n, first, last)

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
        path: str = self.location.path  # type: ignore[assignment]
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

    # -- erase (protocol docstrings in stores/protocol.py)

    _ERASE_CORE = ("writes", "checkpoints")  # delete order: checkpoints last

    def _cascade(self, key: str, extra: tuple[ExtraTable, ...]) -> list[tuple[str, str, tuple[str, ...]]]:
        """(name, WHERE clause, params) per cascade table; an extra table that cannot hold ``key`` is None."""
        out = []
        for table in extra:
            filters = table.filters(key)
            if filters is None:
                out.append((table.name, "", ()))
                continue
            where = " AND ".join(f"{_quote(col)} = ?" for col, _ in filters)
            out.append((table.name, where, tuple(v for _, v in filters)))
        for name in self._ERASE_CORE:
            out.append((name, "thread_id = ?", (key,)))
        return out

    @_translate_errors
    def erase_prepare(self, extra: tuple[ExtraTable, ...]) -> list[str]:
        path: str = self.location.path  # type: ignore[assignment]
        if not self.writable:
            raise StoreError(f"{path} was opened read-only; erasing needs a writable store")
        if not os.access(path, os.W_OK):
            raise StoreError(f"{path} is read-only for this user: nothing was deleted")
        wal = f"{path}-wal"
        folder = os.path.dirname(os.path.abspath(path))
        if _journal_mode(path, self.conn) == "wal" and not os.path.exists(wal) and not os.access(folder, os.W_OK | os.X_OK):
            raise StoreError(f"{folder} is not writable, so SQLite cannot create {os.path.basename(wal)}: nothing was deleted")
        for table in extra:
            cols = {r[1] for r in self.conn.execute(f"PRAGMA table_info({_quote(table.name)})")}
            if not cols:
                raise StoreError(f"declared erase_extra table '{table.name}' does not exist in {path}")
            for col, _ in table.match:
                if col not in cols:
                    raise StoreError(f"declared erase_extra column '{col}' does not exist in table '{table.name}'")
        self.conn.execute("PRAGMA secure_delete = ON")
        # Take and release the write lock: a read-only file or mount fails here, before any delete.
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("ROLLBACK")
        return []

    @_translate_errors
    def thread_keys_with_prefix(self, prefix: str) -> list[str]:
        lo, hi = _range_for_prefix(prefix)
        rows = self.conn.execute(
            "SELECT thread_id FROM checkpoints WHERE thread_id >= ? AND thread_id < ? "
            "UNION SELECT thread_id FROM writes WHERE thread_id >= ? AND thread_id < ? ORDER BY 1",
            (lo, hi, lo, hi),
        )
        return [str(r[0]) for r in rows]

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
        first, last = self.conn.execute(
            "SELECT min(checkpoint_id), max(checkpoint_id) FROM checkpoints WHERE thread_id = ?", (key,)
        ).fetchone()
        return ThreadErasePlan(key, counts, first, last)

    @_translate_errors
    def erase_thread(self, key: str, extra: tuple[ExtraTable, ...], *, between=None) -> dict[str, int]:
        deleted: dict[str, int] = {}
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for name, where, params in self._cascade(key, extra):
                deleted[name] = self.conn.execute(f"DELETE FROM {_quote(name)} WHERE {where}", params).rowcount if where else 0
                if between is not None:
                    between(name)
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
