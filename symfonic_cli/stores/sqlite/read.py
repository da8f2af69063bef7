"""SQLite stores: what is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator

from symfonic_cli.errors import StoreError
from symfonic_cli.model.listing import StoreInfo, ThreadSummary
from symfonic_cli.clock import ORDERED_ID_GLOB, checkpoint_id_time, checkpoint_time, joined_ordered, joined_ordered_bytes
from symfonic_cli.stores.activity import in_window, odd_having
from symfonic_cli.stores.sqlite._common import (
    SqliteSection,
    _journal_mode,
    _json_metadata,
    _translate_errors,
    _translate_iter,
)
from symfonic_cli.stores.sqlite.blobkeys import _key_bytes, _merged_by_key, _utf8
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.model.checkpoint import (
        CheckpointHead,
        CheckpointRecord,
        MessageState,
        MessageWrite,
    )


class SqliteRead(SqliteSection):
    """What is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

    # -- what is in the store

    # Listing rows, pages and counts by last activity; stores/activity.py makes them exact by instant.
    _ODD = f"max(NOT (checkpoint_id GLOB '{ORDERED_ID_GLOB}'))"
    # The same test on a UTF-8 file, a fifth of its cost: the group's ids joined and tested once
    # (a GLOB per row cost more than the GROUP BY); NULL ids are left out as max() leaves them.
    _ODD_JOINED = ("CASE WHEN count(checkpoint_id) THEN NOT symfonic_ordered_bytes("
                   "CAST(group_concat(checkpoint_id, ',') AS BLOB), count(checkpoint_id)) END")

    def _odd_test(self) -> str:
        """The aggregate that is true when a group holds an id not in the ordered form."""
        if not self.utf8:
            return self._ODD
        self.conn.create_function("symfonic_ordered_bytes", 2, _ordered_bytes, deterministic=True)
        return self._ODD_JOINED

    @_translate_iter
    def _thread_rows(self, tenant: str | None, sub_tenant: str | None, limit: int | None, last_before: str | None, last_from: str | None) -> Iterator[ThreadSummary]:
        where = ""
        params: list[Any] = []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            where = "WHERE " + cond
        if self._has_blob_keys():
            # A key's text and BLOB groups merge first; the window applies to the merged thread.
            sql = "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), {} FROM checkpoints " + where + " GROUP BY thread_id COLLATE BINARY"
            merged = _merged_by_key(self.conn.execute(sql.format(self._ODD), params), None)
            kept = [t for t in merged if t.odd or in_window(t.last_at, False, last_before, last_from)]
            odd = sum(t.odd for t in kept)
            yield from (kept if limit is None else kept[:odd + limit])
            return
        # One pass, ordered and bounded by SQLite (a top-N sort with a limit; else its sorter,
        # which spills to disk): the odd threads first, then the others newest max(id) first.
        # Each group's ids are tested once, joined (clock.joined_ordered, a function of the
        # connection; a one-checkpoint thread's id by GLOB): a GLOB per row cost more than the
        # whole GROUP BY. Only text ids give a text min and max (SQLite orders NULL, numbers,
        # text, BLOBs).
        self.conn.create_function("symfonic_ordered", 2, _ordered, deterministic=True)
        if limit is None:
            first, text_ids = "min(checkpoint_id)", "typeof(min(checkpoint_id)) = 'text' AND typeof(max(checkpoint_id)) = 'text'"
        else:
            # A page reads no min() (a fifth of the pass): its rows' least ids are read after, by
            # key. Text ids only: a BLOB sorts after text (the max), a number or NULL fails the
            # GLOB or the joined ids' length and shape (clock.joined_ordered), NULL the coalesce.
            first, text_ids = "NULL", "max(checkpoint_id) < x''"
        odd = (f"NOT coalesce({text_ids} AND CASE WHEN count(*) = 1 THEN max(checkpoint_id) GLOB '{ORDERED_ID_GLOB}' "
               f"ELSE symfonic_ordered({_JOINED}, count(*)) END, 0)")
        having, bounds = odd_having("odd", "last", "?", last_before, last_from, "rows")
        if limit is None:
            groups = (f"(SELECT thread_id, count(*) AS n, {first} AS first, max(checkpoint_id) AS last, {odd} AS odd "
                      f"FROM checkpoints {where} GROUP BY thread_id COLLATE BINARY)")
            sql = f"SELECT thread_id, n, first, last, odd FROM {groups} {having.replace('HAVING', 'WHERE', 1)} ORDER BY odd DESC, last DESC, thread_id COLLATE BINARY"
            for key, n, first, last, odd in self.conn.execute(sql, [*params, *bounds]):
                yield ThreadSummary(str(key), n, first, last, bool(odd))
            return
        # A page: one pass. The odd threads are handed over as the pass meets them (a function
        # called for them only) and the plain ones inside the bounds go to SQLite's top-N sort:
        # no second pass and no sort of every thread, however many threads are odd. The tests
        # sit in HAVING: a subquery handing each group on to a WHERE cost a tenth of the pass.
        # A one-checkpoint odd thread whose id holds no time comes with its blob's head, read in
        # the pass, and is dated here.
        seen: dict[Any, tuple] = {}

        def odd_seen(key: Any, n: int, last: Any, head: Any) -> int:
            if key not in seen:  # the head read at once: its ts kept, not its bytes
                seen[key] = (n, last, _pass_ts(head) if n == 1 and type(head) is bytes else _UNDECIDED)
            return 0

        self.conn.create_function("symfonic_odd_seen", 4, odd_seen)
        latest = "max(checkpoint_id)"
        # A one-row group's rowid is its row's (from the index the pass scans): read by it.
        head = (f"CASE WHEN count(*) = 1 AND NOT (length({latest}) = 36 AND substr({latest}, 15, 1) = '6') THEN (SELECT {_PASS_HEAD} "
                "FROM checkpoints AS h WHERE h.rowid = c.rowid) END")
        inside = "".join(f" AND {latest} {op} ?" for op, bound in (("<", last_before), (">=", last_from)) if bound is not None)
        sql = (f"SELECT thread_id, count(*), {latest} FROM checkpoints AS c {where} GROUP BY thread_id COLLATE BINARY "
               f"HAVING CASE WHEN {odd} THEN symfonic_odd_seen(thread_id, count(*), {latest}, {head}) ELSE 1{inside} END "
               "ORDER BY 3 DESC, thread_id COLLATE BINARY LIMIT ?")
        page = self.conn.execute(sql, [*params, *bounds, limit]).fetchall()
        for key in sorted(seen, key=_key_bytes):
            n, last, ts = seen[key]
            # thread_activity's rule for its one checkpoint: the id's time, else its ts
            at = checkpoint_id_time(last) if n == 1 else None
            if at is None and ts is _UNDECIDED:
                yield ThreadSummary(str(key), n, last if n == 1 else self._least_id(key), last, True)
                continue
            at = at or checkpoint_time(last, ts)
            yield ThreadSummary(str(key), n, last, last, True, at, at, at is None)
        for key, n, last in page:
            yield ThreadSummary(str(key), n, last if n == 1 else self._least_id(key), last, False)

    def _least_id(self, key: str) -> Any:
        row = self.conn.execute(f"SELECT min(checkpoint_id) FROM checkpoints WHERE {self._key_is()}", self._key_args(key)).fetchone()
        return row[0] if row is not None else None

    @_translate_errors
    def _window_page(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None, after: str | None, limit: int, odd: bool, upto: str | None = None) -> list[str]:
        """Keyset pagination: the primary key's order serves the GROUP BY and the LIMIT stops the scan."""
        if self._has_blob_keys():
            # Keys stored as BLOBs sort apart from text: the merged listing, sliced (not streamed).
            rows = self._thread_rows(tenant, sub_tenant, None, last_before, last_from)
            keys = sorted((t.key for t in rows if t.odd == odd), key=_utf8)
            return [k for k in keys if (after is None or _utf8(k) > _utf8(after)) and (upto is None or _utf8(k) <= _utf8(upto))][:limit]
        where, params = self._window_where(tenant, sub_tenant, after, upto)
        having, bounds = odd_having(self._odd_test(), "max(checkpoint_id)", "?", last_before, last_from, "odd" if odd else "plain")
        # Byte order, named: a column declared with another collation (NOCASE) must not fold keys.
        sql = f"SELECT thread_id FROM checkpoints {where} GROUP BY thread_id COLLATE BINARY {having} ORDER BY thread_id COLLATE BINARY LIMIT ?"
        return [k for (k,) in self.conn.execute(sql, [*params, *bounds, limit])]

    @_translate_errors
    def _window_tally(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None) -> int:
        if self._has_blob_keys():
            return sum(1 for t in self._thread_rows(tenant, sub_tenant, None, last_before, last_from) if not t.odd)
        where, params = self._window_where(tenant, sub_tenant, None)
        having, bounds = odd_having(self._odd_test(), "max(checkpoint_id)", "?", last_before, last_from, "plain")
        sql = f"SELECT count(*) FROM (SELECT 1 FROM checkpoints {where} GROUP BY thread_id COLLATE BINARY {having})"
        return self.conn.execute(sql, [*params, *bounds]).fetchone()[0]

    def _window_where(self, tenant: str | None, sub_tenant: str | None, after: str | None, upto: str | None = None) -> tuple[str, list]:
        conds: list[str] = []
        params: list[Any] = []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            conds.append(cond)
        if after is not None:
            conds.append("thread_id COLLATE BINARY > ?")
            params = [*params, after]
        if upto is not None:
            conds.append("thread_id COLLATE BINARY <= ?")
            params = [*params, upto]
        return ("WHERE " + " AND ".join(conds) if conds else ""), list(params)

    @_translate_errors
    def thread_summary(self, key: str) -> ThreadSummary | None:
        row = self.conn.execute(
            f"SELECT count(*), min(checkpoint_id), max(checkpoint_id), {_JOINED} FROM checkpoints WHERE {self._key_is()}",
            self._key_args(key),
        ).fetchone()
        if not row or not row[0]:
            return None
        return ThreadSummary(key, row[0], row[1], row[2], not joined_ordered(row[3], row[0]))

    @_translate_errors
    def info(self) -> StoreInfo:
        c = self.conn
        threads = c.execute("SELECT count(*) FROM (SELECT DISTINCT thread_id COLLATE BINARY FROM checkpoints)").fetchone()[0]
        checkpoints = c.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        writes = c.execute("SELECT count(*) FROM writes").fetchone()[0]
        namespaces = c.execute(
            "SELECT count(*) FROM (SELECT DISTINCT checkpoint_ns FROM checkpoints)"
        ).fetchone()[0]
        path: str = self.file
        wal = f"{path}-wal"
        details: dict[str, Any] = {
            "file size": os.path.getsize(path),
            "wal size": os.path.getsize(wal) if os.path.exists(wal) else None,
            "journal mode": _journal_mode(path, c),
            "page size": c.execute("PRAGMA page_size").fetchone()[0],
            "tables": list(self.tables),
            "schema variant": "writes.task_path present" if self.has_task_path else "writes without task_path (pre-task_path saver)",
            "namespaces": namespaces,
            "sqlite version": sqlite3.sqlite_version,
        }
        census = self.encryption_census()
        details["encryption"] = census.describe()
        if census.finding():
            details["finding: plaintext values"] = census.finding()
        return StoreInfo("sqlite", self.location.display, threads, checkpoints, writes, details)

    @_translate_errors
    def encryption_census(self):
        """Serialized values by encryption (``model/encryption.py``), counted in the database."""
        from symfonic_cli.model.encryption import EncryptionCensus

        values = "SELECT checkpoint_id, type FROM checkpoints UNION ALL SELECT checkpoint_id, type FROM writes"
        counted = self._take_pass("_pass_census")  # the checkpoints' counts, when compat's pass made them
        enc, plain = self.conn.execute(
            f"SELECT coalesce(sum(instr(type, '+') > 0), 0), coalesce(sum(instr(type, '+') = 0), 0) "
            f"FROM ({values if counted is None else 'SELECT type FROM writes'})"
        ).fetchone()
        if counted is not None:
            enc, plain = enc + counted[0], plain + counted[1]
        first: tuple[str, ...] = ()
        if enc and plain:
            first = tuple(r[0] for r in self.conn.execute(
                f"SELECT DISTINCT checkpoint_id FROM ({values}) WHERE instr(type, '+') = 0 ORDER BY checkpoint_id LIMIT 5"))
        return EncryptionCensus(enc, plain, first)

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
        from symfonic_cli.codec.strict import collect_blocked, loads
        from symfonic_cli.model.checkpoint import CheckpointRecord

        if checkpoint_id is None:
            row = self.conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                f"WHERE {self._key_is()} AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                (*self._key_args(key), checkpoint_ns),
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                f"WHERE {self._key_is()} AND checkpoint_ns = ? AND checkpoint_id = ?",
                (*self._key_args(key), checkpoint_ns, checkpoint_id),
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
        from symfonic_cli.model.checkpoint import MessageState

        # One namespace (most threads): the primary key's order is the order asked for, so one
        # query streams the rows, a checkpoint in memory at a time, with no sort.
        low, high = self.conn.execute(
            f"SELECT min(checkpoint_ns), max(checkpoint_ns) FROM checkpoints WHERE {self._key_is()}", self._key_args(key)).fetchone()
        if low is not None and low == high and type(low) is str:
            for ns, cid, parent, type_, blob in self.conn.execute(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints "
                f"WHERE {self._key_is()} AND checkpoint_ns = ? ORDER BY checkpoint_id DESC", (*self._key_args(key), low)):
                yield MessageState(ns, cid, None, cid, "checkpoint", type_, blob, parent)
            return
        # Several: the order first (ids only: SQLite sorts them, not the blobs, which it would hold
        # in memory to sort), then each blob by its rowid: memory is one checkpoint, not the thread.
        order = self.conn.execute(
            "SELECT rowid, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints "
            f"WHERE {self._key_is()} ORDER BY checkpoint_id DESC",
            self._key_args(key),
        ).fetchall()
        for rowid, ns, cid, parent in order:
            row = self.conn.execute("SELECT type, checkpoint FROM checkpoints WHERE rowid = ?", (rowid,)).fetchone()
            if row is not None:  # rows are never rewritten; one a prune or erase deleted meanwhile is left out
                yield MessageState(ns, cid, None, cid, "checkpoint", row[0], row[1], parent)

    # -- timestamps (protocol docstrings in stores/protocol.py): heads from a blob's first bytes

    @_translate_iter
    def iter_checkpoint_heads(self, key: str) -> Iterator["CheckpointHead"]:
        return self._heads(self._key_is(), self._key_args(key))

    @_translate_iter
    def _every_form_heads(self, key: str) -> Iterator["CheckpointHead"]:
        """The heads that date a thread (stores/activity.py): of its rows with the key stored as
        text and as a BLOB of its bytes, the rows an erase or prune of it touches (``_key_match``)."""
        if not self._has_blob_keys():
            return self._heads(self._key_is(), self._key_args(key))
        from symfonic_cli.stores.sqlite.erase import _key_match

        where, params = _key_match(key)
        return self._heads(where, params)

    def _keys_heads(self, keys: list[str]) -> list[tuple] | None:
        """(key, id, ts) of every checkpoint of ``keys`` in one query (stores/activity.py); a
        checkpoint's blob is read only when its id holds no time. None with keys not compared
        as plain text (BLOB keys, a folding collation): each thread is read alone then."""
        if self._has_blob_keys() or self.keys_folded:
            return None
        marks = ", ".join("?" * len(keys))
        try:  # any error: thread by thread, where thread_activity tells it as it does
            # The heads of plain msgpack blobs come with the ids, in the one query (an id of 36
            # characters with a 6 where a UUIDv6 has its version may hold a time: no head read);
            # x'' for a blob without the bytes "ts" anywhere: no key "ts", so no time. A value
            # stored as text is read whole after (substr would count characters).
            rows = self.conn.execute(
                "SELECT thread_id, rowid, checkpoint_id, type, length(checkpoint), CASE WHEN type = 'msgpack' AND typeof(checkpoint) = 'blob' AND NOT "
                "(length(checkpoint_id) = 36 AND substr(checkpoint_id, 15, 1) = '6') THEN CASE WHEN instr(checkpoint, x'7473') = 0 "
                f"THEN x'' ELSE substr(checkpoint, 1, {_HEAD}) END END FROM checkpoints WHERE thread_id IN ({marks})",
                keys,
            ).fetchall()
            return [(key, cid, None if checkpoint_id_time(cid) is not None else self._head_ts(rowid, type_, size, head))
                    for key, rowid, cid, type_, size, head in rows]
        except sqlite3.Error:
            return None

    def _head_ts(self, rowid: int, type_: str | None, size: int | None, head: bytes | None) -> str | None:
        """A checkpoint's ts as ``_blob_head`` reads it, from the head read with its id
        (``_keys_heads``: the bytes it reads first), else from the whole blob read once."""
        from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

        if head is None or not size:
            return self._blob_head(rowid, type_, size)[0]
        if not head:  # no key "ts" in any encoding: what a parse to the end finds (undatable ids)
            return None
        try:
            return checkpoint_blob_head(bytes(head))[0]
        except NeedMore:
            if len(head) >= size:
                return None
        except ValueError:
            return None
        row = self.conn.execute("SELECT checkpoint FROM checkpoints WHERE rowid = ?", (rowid,)).fetchone()
        blob = bytes(row[0]) if row is not None and isinstance(row[0], bytes) else b""
        try:
            return checkpoint_blob_head(blob)[0]
        except (NeedMore, ValueError):
            return None

    def _heads(self, where: str, params: tuple[Any, ...]) -> Iterator["CheckpointHead"]:
        from symfonic_cli.model.checkpoint import CheckpointHead

        cur = self.conn.execute(
            "SELECT rowid, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, length(checkpoint) "
            f"FROM checkpoints WHERE {where} ORDER BY checkpoint_id",
            params,
        )
        for rowid, ns, cid, parent, type_, size in cur.fetchall():
            # metadata is left unread: it sits after the blob in the row (see CheckpointHead.source)
            ts, count = self._blob_head(rowid, type_, size)
            yield CheckpointHead(ns, cid, parent, ts, None, count)

    @_translate_errors
    def read_message_state(self, key: str, *, checkpoint_id: str | None = None) -> MessageState | None:
        from symfonic_cli.model.checkpoint import MessageState

        sql = f"SELECT checkpoint_id, type, checkpoint FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = ''"
        if checkpoint_id is None:
            row = self.conn.execute(sql + " ORDER BY checkpoint_id DESC LIMIT 1", self._key_args(key)).fetchone()
        else:
            row = self.conn.execute(sql + " AND checkpoint_id = ?", (*self._key_args(key), checkpoint_id)).fetchone()
        if row is None:
            return None
        cid, type_, blob = row
        return MessageState("", cid, None, cid, "checkpoint", type_, blob)

    @_translate_iter
    def iter_message_writes(self, key: str) -> Iterator["MessageWrite"]:
        from symfonic_cli.model.checkpoint import MessageWrite

        path = "task_path" if self.has_task_path else "''"
        cur = self.conn.execute(
            f"SELECT checkpoint_ns, checkpoint_id, task_id, idx, type, value, {path} FROM writes "
            f"WHERE {self._key_is()} AND channel = 'messages'",
            self._key_args(key),
        )
        for ns, cid, task_id, idx, type_, value, task_path in cur:
            yield MessageWrite(ns, cid, task_id, idx, type_, value, task_path or "")



# Bytes of a blob read with its id when the id holds no time (``_keys_heads``): _blob_head's first read.
_HEAD = 512

# The head the listing's pass reads of a one-checkpoint odd thread: as ``_keys_heads`` reads it,
# for a plain msgpack blob only (NULL: the thread is dated after, as before).
_PASS_HEAD = (f"CASE WHEN type = 'msgpack' AND typeof(checkpoint) = 'blob' AND length(checkpoint) > 0 THEN CASE WHEN "
              f"instr(checkpoint, x'7473') = 0 THEN x'' ELSE substr(checkpoint, 1, {_HEAD}) END END")
_UNDECIDED = object()


def _pass_ts(head: bytes) -> Any:
    """A checkpoint's ts from the head the pass read (``_head_ts``'s reading of it), or
    ``_UNDECIDED`` when the head is cut short of it (the blob is read after)."""
    from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

    if not head:  # no bytes "ts": no key "ts"
        return None
    try:
        return checkpoint_blob_head(head)[0]
    except NeedMore:
        return None if len(head) < _HEAD else _UNDECIDED
    except ValueError:
        return None


# The listing's one pass: each thread's ids joined, tested by ``symfonic_ordered`` (clock.joined_ordered).
_JOINED = "group_concat(checkpoint_id, ',')"


def _ordered(joined: Any, n: int) -> int:
    return 1 if joined_ordered(joined, n) else 0


def _ordered_bytes(joined: Any, n: int) -> int:
    return 1 if joined_ordered_bytes(joined, n) else 0
