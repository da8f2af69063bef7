"""PostgreSQL stores: migrate: export and import of whole threads."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.stores.postgres._common import PostgresSection, _bytes, _translate_errors

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.copy import DecodedThread, ThreadExport


class PostgresCopy(PostgresSection):
    """Migrate: export and import of whole threads."""

    # -- migrate (see the "migrate" section of stores/protocol.py)

    @_translate_errors
    def export_thread(self, key: str) -> "ThreadExport":
        from symfonic_cli.model.copy import RawRow, ThreadExport

        c = self.conn
        rows = [
            RawRow("checkpoints", (ns, cid), (parent, type_, checkpoint, metadata))
            for ns, cid, parent, type_, checkpoint, metadata in c.execute(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                f'FROM checkpoints WHERE {self._key_is()} ORDER BY checkpoint_id COLLATE "C", checkpoint_ns COLLATE "C"',
                self._key_args(key),
            )
        ]
        rows += [
            RawRow("checkpoint_blobs", (ns, channel, version), (type_, _bytes(blob)))
            for ns, channel, version, type_, blob in c.execute(
                f"SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE {self._key_is()} "
                'ORDER BY checkpoint_ns COLLATE "C", channel COLLATE "C", version COLLATE "C"',
                self._key_args(key),
            )
        ]
        rows += [
            RawRow("checkpoint_writes", (ns, cid, task_id, idx), (task_path, channel, type_, _bytes(blob)))
            for ns, cid, task_id, idx, task_path, channel, type_, blob in c.execute(
                "SELECT checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob "
                f"FROM checkpoint_writes WHERE {self._key_is()} "
                'ORDER BY checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C", task_id COLLATE "C", idx',
                self._key_args(key),
            )
        ]
        return ThreadExport("postgres", key, rows)

    @_translate_errors
    def import_rows(self, key: str, rows) -> None:
        import psycopg
        from psycopg.types.json import Jsonb

        from symfonic_cli.model.copy import MigrationConflict, migrate_fault_point

        if not self.writable:
            raise StoreError(f"{self.location.display} was opened read-only")
        if any(r.table not in ("checkpoints", "checkpoint_blobs", "checkpoint_writes") for r in rows):
            raise StoreError("rows from a store of another kind cannot be imported as PostgreSQL rows")
        checkpoints = [
            (key, ns, cid, parent, type_, Jsonb(cp), Jsonb(meta))
            for r in rows if r.table == "checkpoints"
            for (ns, cid), (parent, type_, cp, meta) in [(r.key, r.data)]
        ]
        blobs = [(key, *r.key, *r.data) for r in rows if r.table == "checkpoint_blobs"]
        writes = [(key, *r.key, *r.data) for r in rows if r.table == "checkpoint_writes"]
        with self.conn.transaction():
            try:
                with self.conn.cursor() as cur:
                    # Plain inserts: an existing primary key fails the whole thread (rolled back).
                    cur.executemany(
                        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        checkpoints,
                    )
                    cur.executemany(
                        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
                        "VALUES (%s, %s, %s, %s, %s, %s)",
                        blobs,
                    )
                    cur.executemany(
                        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        writes,
                    )
            except psycopg.errors.UniqueViolation as exc:
                raise MigrationConflict(" ".join(str(exc).split())) from None
            migrate_fault_point("before-commit")

    @_translate_errors
    def decoded_thread(self, key: str) -> "DecodedThread":
        from symfonic_cli.codec.reuse import ThreadDecoder
        from symfonic_cli.codec.strict import collect_blocked
        from symfonic_cli.model.copy import (
            DecodedCheckpoint,
            DecodedThread,
            DecodedWrite,
        )

        loads = ThreadDecoder().loads  # each message of the thread decoded once, shared with the source's
        c = self.conn
        thread = DecodedThread(key, [], [])
        # Every blob of the thread once; checkpoints name theirs by (ns, channel, version).
        raw = {
            (ns, ch, ver): (type_, blob)
            for ns, ch, ver, type_, blob in c.execute(
                f"SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE {self._key_is()}", self._key_args(key)
            )
        }
        decoded: dict[tuple, tuple[Any, set[str]]] = {}
        rows = c.execute(
            f"SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints WHERE {self._key_is()}",
            self._key_args(key),
        ).fetchall()
        for ns, cid, parent, checkpoint, metadata in sorted(rows, key=lambda r: (r[1], r[0])):
            if not isinstance(checkpoint, dict):
                raise StoreError(f"checkpoint {cid} (ns '{ns}') is not a JSON object")
            values = dict(checkpoint.get("channel_values") or {})
            for ch, ver in (checkpoint.get("channel_versions") or {}).items():
                ident = (ns, ch, str(ver))
                if ident not in raw:
                    continue
                if ident not in decoded:
                    type_, blob = raw[ident]
                    if type_ == "empty":
                        decoded[ident] = (_EMPTY, set())
                    else:
                        with collect_blocked() as blocked:
                            value = loads(type_, blob, what=f"checkpoint {cid}, ns '{ns}', channel '{ch}'")
                        decoded[ident] = (value, set(blocked))
                value, blocked_types = decoded[ident]
                if value is _EMPTY:
                    continue
                values[ch] = value
                if blocked_types:
                    thread.blocked[f"checkpoint {cid}, ns '{ns}', channel '{ch}'"] = sorted(blocked_types)
            thread.checkpoints.append(
                DecodedCheckpoint(ns, cid, parent, {**checkpoint, "channel_values": values}, metadata if isinstance(metadata, dict) else {})
            )
        writes = c.execute(
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob "
            f"FROM checkpoint_writes WHERE {self._key_is()}",
            self._key_args(key),
        ).fetchall()
        for ns, cid, task_id, idx, task_path, channel, type_, blob in sorted(writes, key=lambda r: (r[0], r[1], r[4], r[2], r[3])):
            what = f"write {cid}/{task_id}/{idx} channel '{channel}'"
            with collect_blocked() as blocked:
                value = loads(type_, blob, what=what)
            if blocked:
                thread.blocked[what] = sorted(blocked)
            thread.writes.append(DecodedWrite(ns, cid, task_id, task_path, idx, channel, value))
        return thread

    @_translate_errors
    def import_decoded(self, key: str, checkpoints, writes, new_versions) -> None:
        from langgraph.checkpoint.postgres import PostgresSaver

        from symfonic_cli.codec.reuse import target_serializer
        from symfonic_cli.model.copy import (
            MigrationConflict,
            migrate_fault_point,
            saver_config,
            write_batches,
        )

        if not self.writable:
            raise StoreError(f"{self.location.display} was opened read-only")
        c = self.conn
        with c.transaction():
            if checkpoints:
                found = c.execute(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND (checkpoint_ns, checkpoint_id) IN "
                    "(SELECT * FROM unnest(%s::text[], %s::text[])) LIMIT 1",
                    (key, [cp.checkpoint_ns for cp in checkpoints], [cp.checkpoint_id for cp in checkpoints]),
                ).fetchone()
                if found:
                    raise MigrationConflict(f"checkpoint {found[0]} appeared in the target")
            if writes:
                found = c.execute(
                    "SELECT checkpoint_id, task_id, idx FROM checkpoint_writes WHERE thread_id = %s AND "
                    "(checkpoint_ns, checkpoint_id, task_id, idx) IN "
                    "(SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::int[])) LIMIT 1",
                    (key, [w.checkpoint_ns for w in writes], [w.checkpoint_id for w in writes],
                     [w.task_id for w in writes], [w.idx for w in writes]),
                ).fetchone()
                if found:
                    raise MigrationConflict(f"write {found[0]}/{found[1]}/{found[2]} appeared in the target")
            # The saver's own put/put_writes build every statement and row (its serializer, its SQL);
            # they are recorded, then sent as one executemany per statement: a thread costs a few
            # round trips instead of two per checkpoint. Rows of one thread never share a key.
            recorder = _StatementRecorder()
            saver = PostgresSaver(c)
            saver._cursor = recorder.cursor  # type: ignore[method-assign]
            saver.serde = target_serializer(saver.serde)  # same bytes; each shared message encoded once
            for cp, versions in zip(checkpoints, new_versions):
                config = saver_config(key, cp.checkpoint_ns, cp.parent_checkpoint_id)
                saver.put(config, cp.checkpoint, cp.metadata, versions)
            for ns, cid, task_id, task_path, batch in write_batches(writes):
                config = saver_config(key, ns, cid)
                saver.put_writes(config, batch, task_id, task_path)
            recorder.send(c, fresh=not c.execute(_THREAD_PRESENT_SQL, (key, key, key)).fetchone()[0])
            migrate_fault_point("before-commit")



_EMPTY = object()  # a blob of type "empty": the channel had no value


class _StatementRecorder:
    """Stands in for PostgresSaver's cursor: keeps each statement's rows, in first-use order."""

    def __init__(self) -> None:
        self.statements: dict[str, list] = {}

    @contextmanager
    def cursor(self, *args: Any, **kwargs: Any):
        yield self

    def execute(self, sql: str, params: Any = None) -> None:
        self.statements.setdefault(sql, []).append(params)

    def executemany(self, sql: str, rows: Any) -> None:
        self.statements.setdefault(sql, []).extend(rows)

    def send(self, conn: Any, *, fresh: bool) -> None:
        """Run the recorded statements, inserting only: the saver's ``ON CONFLICT`` clause is cut,
        so a row the target already holds fails the thread (MigrationConflict, rolled back)
        instead of being replaced or silently kept; a blob the target holds with the very same
        bytes is left as it is. When the target holds no row of the thread nothing can collide,
        and a plain ``INSERT INTO t (cols) VALUES (%s, ...)`` is sent as COPY of the same rows."""
        import psycopg
        from psycopg import sql as pgsql

        from symfonic_cli.model.copy import MigrationConflict

        with conn.cursor() as cur:
            for statement, rows in self.statements.items():
                m = _INSERT_RE.match(statement)
                if not m:
                    raise StoreError("the saver sent a statement that is not a plain insert; migrate only inserts")
                columns = [col.strip() for col in m.group(2).split(",")]
                if not fresh and m.group(1) == "checkpoint_blobs" and columns == _BLOB_COLUMNS:
                    rows = _blobs_not_held(cur, rows)
                if not rows:
                    continue
                try:
                    if not (fresh and len(columns) == m.group(3).count("%s")):
                        cur.executemany(m.group(0), rows)
                        continue
                    copy = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
                        pgsql.Identifier(m.group(1)), pgsql.SQL(", ").join(map(pgsql.Identifier, columns))
                    )
                    with cur.copy(copy) as cp:
                        for row in rows:
                            cp.write_row(row)
                except psycopg.errors.UniqueViolation as exc:
                    raise MigrationConflict(
                        f"the target already holds a row of {m.group(1)} the saver would write ({' '.join(str(exc).split())})"
                    ) from None


_BLOB_COLUMNS = ["thread_id", "checkpoint_ns", "channel", "version", "type", "blob"]


def _blobs_not_held(cur, rows: list) -> list:
    """The blob rows the target lacks; one it holds with other bytes is a conflict."""
    from symfonic_cli.model.copy import MigrationConflict

    held = {
        (ns, ch, ver): (type_, _bytes(blob))
        for ns, ch, ver, type_, blob in cur.execute(
            "SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = %s AND "
            "(checkpoint_ns, channel, version) IN (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))",
            (rows[0][0], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]),
        ).fetchall()
    } if rows else {}
    out = []
    for row in rows:
        have = held.get((row[1], row[2], row[3]))
        if have is None:
            out.append(row)
        elif have != (row[4], _bytes(row[5])):
            raise MigrationConflict(f"blob of channel '{row[2]}' version {row[3]} (ns '{row[1]}') already in the target with different content")
    return out


_INSERT_RE = re.compile(r"\s*INSERT INTO (\w+) \(([\w\s,]+)\)\s*VALUES \(((?:%s,\s*)*%s)\)", re.I)


_THREAD_PRESENT_SQL = (
    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = %s) "
    "OR EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = %s) "
    "OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = %s)"
)
