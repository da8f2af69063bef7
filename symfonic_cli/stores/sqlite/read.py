"""SQLite stores: what is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator

from symfonic_cli.errors import StoreError
from symfonic_cli.model.listing import StoreInfo, ThreadSummary
from symfonic_cli.clock import checkpoint_id_time, joined_ordered
from symfonic_cli.stores.sqlite._common import (
    _journal_mode,
    _json_metadata,
    _translate_errors,
    _translate_iter,
)
from symfonic_cli.stores.sqlite.listing import _HEAD, _JOINED, SqliteListing

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


class SqliteRead(SqliteListing):
    """What is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

    # -- what is in the store (the listing's pages and counts: stores/sqlite/listing.py)

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
