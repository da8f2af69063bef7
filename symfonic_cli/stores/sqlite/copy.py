"""SQLite stores: migrate: export and import of whole threads."""

from __future__ import annotations

import re
import sqlite3

from symfonic_cli.errors import StoreError
from symfonic_cli.stores.sqlite._common import SqliteSection, _json_metadata, _plain, _translate_errors


class SqliteCopy(SqliteSection):
    """Migrate: export and import of whole threads."""

    # -- migrate (see the "migrate" section of stores/protocol.py)

    @_translate_errors
    def export_thread(self, key: str):
        from symfonic_cli.model.copy import RawRow, ThreadExport

        rows = [
            RawRow("checkpoints", (ns, cid), (parent, type_, _plain(blob), _plain(meta)))
            for ns, cid, parent, type_, blob, meta in self.conn.execute(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                f"FROM checkpoints WHERE {self._key_is()} ORDER BY checkpoint_id, checkpoint_ns",
                self._key_args(key),
            )
        ]
        rows += [
            RawRow("writes", (ns, cid, task_id, idx), (task_path, channel, type_, _plain(value)))
            for ns, cid, task_id, idx, task_path, channel, type_, value in self.conn.execute(
                f"SELECT checkpoint_ns, checkpoint_id, task_id, idx, {self._writes_columns()} "
                f"FROM writes WHERE {self._key_is()} ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
                self._key_args(key),
            )
        ]
        return ThreadExport("sqlite", key, rows)

    @_translate_errors
    def import_rows(self, key: str, rows) -> None:
        from symfonic_cli.model.copy import MigrationConflict

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
        from symfonic_cli.codec.reuse import ThreadDecoder
        from symfonic_cli.codec.strict import collect_blocked
        from symfonic_cli.model.copy import (
            DecodedCheckpoint,
            DecodedThread,
            DecodedWrite,
        )

        loads = ThreadDecoder().loads
        thread = DecodedThread(key, [], [])
        for ns, cid, parent, type_, blob, meta in self.conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            f"FROM checkpoints WHERE {self._key_is()} ORDER BY checkpoint_id, checkpoint_ns",
            self._key_args(key),
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
            f"WHERE {self._key_is()} ORDER BY checkpoint_ns, checkpoint_id, task_path, task_id, idx",
            self._key_args(key),
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

        from symfonic_cli.codec.reuse import target_serializer
        from symfonic_cli.model.copy import MigrationConflict, saver_config, write_batches

        # The saver commits after every put; held, its writes join our one transaction.
        saver = SqliteSaver(_HeldTransaction(self.conn))  # type: ignore[arg-type]
        saver.serde = target_serializer(saver.serde)  # same bytes; each shared message encoded once
        saver.is_setup = True  # tables checked at open; setup() would commit (executescript)
        saver._has_task_path = self.has_task_path
        with self._migrate_transaction():
            for cp in checkpoints:
                if self.conn.execute(
                    f"SELECT 1 FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (*self._key_args(key), cp.checkpoint_ns, cp.checkpoint_id),
                ).fetchone():
                    raise MigrationConflict(f"checkpoint {cp.checkpoint_id} appeared in the target")
            for w in writes:
                if self.conn.execute(
                    f"SELECT 1 FROM writes WHERE {self._key_is()} AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ?",
                    (*self._key_args(key), *w.key),
                ).fetchone():
                    raise MigrationConflict(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} appeared in the target")
            try:
                for cp, versions in zip(checkpoints, new_versions):
                    config = saver_config(key, cp.checkpoint_ns, cp.parent_checkpoint_id)
                    saver.put(config, cp.checkpoint, cp.metadata, versions)
                for ns, cid, task_id, task_path, batch in write_batches(writes):
                    config = saver_config(key, ns, cid)
                    saver.put_writes(config, batch, task_id, task_path)
            except sqlite3.IntegrityError as exc:  # insert-only: a row the target holds is never replaced
                raise MigrationConflict(f"{exc}; the target already holds a row the saver would write") from None

    def _migrate_transaction(self):
        from contextlib import contextmanager

        from symfonic_cli.model.copy import migrate_fault_point

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
    """An sqlite3 connection whose ``commit()`` waits for ours (the saver commits per call), and
    whose cursors insert only: the saver's ``INSERT OR REPLACE`` / ``INSERT OR IGNORE`` become plain
    ``INSERT``, so a row the target already holds fails the thread instead of being replaced."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def commit(self) -> None:
        pass

    def cursor(self) -> "_InsertOnlyCursor":
        return _InsertOnlyCursor(self._conn.cursor())

    def execute(self, sql: str, *args):
        return self._conn.execute(_insert_only(sql), *args)

    def executemany(self, sql: str, *args):
        return self._conn.executemany(_insert_only(sql), *args)

    def __getattr__(self, name: str):
        return getattr(self._conn, name)


class _InsertOnlyCursor:
    def __init__(self, cur: sqlite3.Cursor) -> None:
        self._cur = cur

    def execute(self, sql: str, *args):
        return self._cur.execute(_insert_only(sql), *args)

    def executemany(self, sql: str, *args):
        return self._cur.executemany(_insert_only(sql), *args)

    def __iter__(self):  # the saver's reads (get_tuple) iterate their cursor
        return iter(self._cur)

    def __getattr__(self, name: str):
        return getattr(self._cur, name)


_OR_CLAUSE = re.compile(r"^\s*INSERT\s+OR\s+(?:REPLACE|IGNORE)\s+", re.I)


def _insert_only(sql: str) -> str:
    if re.match(r"\s*(?:REPLACE|UPDATE|DELETE)\b", sql, re.I):
        raise StoreError("the saver asked to change existing rows; migrate only inserts")
    return _OR_CLAUSE.sub("INSERT ", sql, count=1)
