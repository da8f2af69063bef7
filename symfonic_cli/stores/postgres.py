"""PostgreSQL stores written by ``langgraph-checkpoint-postgres``.

Tables ``checkpoints`` (checkpoint as JSONB, primitive channel values inline), ``checkpoint_blobs``
(other channel values, keyed by channel and version), ``checkpoint_writes`` and
``checkpoint_migrations``. Inspecting sessions are read-only on the server's side
(``default_transaction_read_only=on``), need nothing but SELECT on the four tables, and never run
the saver's ``setup()`` or migrations. Counting and listing happen in SQL; long results stream
through server-side cursors.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterator
from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.stores.base import (
    CheckpointRecord,
    MessageState,
    StoreInfo,
    SupportsWith,
    ThreadSummary,
)
from symfonic_cli.threadkey import tenant_prefix

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
# The last migration of langgraph-checkpoint-postgres (2.x, 3.x): checkpoint_writes.task_path.
MIGRATION_VERSION = 9
ITERSIZE = 500
_C_COLLATIONS = {"C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic"}


def _store_error(location: StoreLocation, exc: Exception) -> StoreError:
    import psycopg.errors as pe

    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, pe.InsufficientPrivilege):
        return StoreError(
            scrub(f"missing privilege on {location.display}: {text}", location),
            hint="inspecting needs SELECT on checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations",
        )
    if isinstance(exc, pe.ReadOnlySqlTransaction):
        return StoreError(scrub(f"{location.display} refused a write (read-only session): {text}", location))
    return StoreError(scrub(f"PostgreSQL error on {location.display}: {text}", location))


def _translate_errors(fn):
    """psycopg errors become one-line store errors with the password masked."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        import psycopg

        try:
            return fn(self, *args, **kwargs)
        except psycopg.Error as exc:
            raise _store_error(self.location, exc) from None

    return wrapper


def _translate_iter(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        import psycopg

        try:
            yield from fn(self, *args, **kwargs)
        except psycopg.Error as exc:
            raise _store_error(self.location, exc) from None

    return wrapper


def _conninfo(location: StoreLocation, *, writable: bool, connect_timeout: float) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(location.url)
    except Exception as exc:
        raise StoreError(scrub(f"malformed PostgreSQL URL {location.display}: {' '.join(str(exc).split())}", location)) from None
    # Setting "options" would hide PGOPTIONS (libpq reads the variable only as a default).
    options = str(params.get("options") or os.environ.get("PGOPTIONS", "")).strip()
    if not writable:
        options = f"{options} -c default_transaction_read_only=on".strip()
    extra: dict[str, Any] = {"options": options, "connect_timeout": max(1, math.ceil(connect_timeout))}
    if not params.get("application_name") and not os.environ.get("PGAPPNAME"):
        extra["application_name"] = "symfonic"
    return make_conninfo(location.url, **extra)


def _connect_error(location: StoreLocation, exc: Exception, timeout: float) -> StoreError:
    text = " ".join(str(exc).split())
    if "timeout expired" in text:
        return StoreError(
            scrub(f"no answer from the PostgreSQL server of {location.display} within {timeout:g} s", location),
            hint="check host and port, or raise --connect-timeout",
        )
    if "password authentication failed" in text or "no password supplied" in text:
        return StoreError(
            scrub(f"PostgreSQL refused the credentials for {location.display}: {text}", location),
            hint="check the user and password (PGPASSWORD, ~/.pgpass, PGSERVICE)",
        )
    return StoreError(scrub(f"cannot connect to {location.display}: {text}", location))


def open_store(
    location: StoreLocation,
    *,
    writable: bool = False,
    connect_timeout: float = 10,
    pg_schema: str | None = None,
    **_: Any,
) -> "PostgresStore":
    try:
        import psycopg
    except ModuleNotFoundError:
        raise StoreError(
            "PostgreSQL support is not installed", hint='pip install "symfonic[postgres]"'
        ) from None

    conninfo = _conninfo(location, writable=writable, connect_timeout=connect_timeout)
    try:
        conn = psycopg.connect(conninfo, autocommit=True, prepare_threshold=None)
    except psycopg.Error as exc:
        raise _connect_error(location, exc, connect_timeout) from None
    store = PostgresStore(location, conn, writable=writable)
    try:
        store._prepare(pg_schema)
    except BaseException:
        conn.close()
        raise
    return store


class PostgresStore(SupportsWith):
    kind = "postgres"

    def __init__(self, location: StoreLocation, conn: Any, *, writable: bool) -> None:
        self.location = location
        self.conn = conn
        self.writable = writable
        self.schema: str | None = None
        self.has_task_path = True
        self.migration_version: int | None = None
        self._c_collation = False
        self._cursors = 0

    def close(self) -> None:
        self.conn.close()

    # -- opening

    @_translate_errors
    def _prepare(self, pg_schema: str | None) -> None:
        c = self.conn
        if not self.writable:
            # Startup options can be dropped by a pooler: make sure, or refuse.
            if c.execute("SHOW default_transaction_read_only").fetchone()[0] != "on":
                c.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                if c.execute("SHOW transaction_read_only").fetchone()[0] != "on":
                    raise StoreError(f"{self.location.display}: could not make the session read-only")
        if pg_schema is not None:
            if not c.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (pg_schema,)).fetchone():
                raise StoreError(f"no schema '{pg_schema}' in {self.location.display}", hint="check --pg-schema")
            if not c.execute("SELECT has_schema_privilege(%s, 'USAGE')", (pg_schema,)).fetchone()[0]:
                raise StoreError(f"missing privilege on {self.location.display}: no USAGE on schema '{pg_schema}'")
            c.execute("SELECT set_config('search_path', quote_ident(%s), false)", (pg_schema,))
        self.schema = c.execute("SELECT current_schema()").fetchone()[0]
        if self.schema is None:
            raise StoreError(
                f"{self.location.display}: no schema of the search_path exists or is usable",
                hint="check options=-csearch_path=... or --pg-schema",
            )
        rows = c.execute(
            "SELECT t, to_regclass(t) IS NOT NULL, "
            "CASE WHEN to_regclass(t) IS NULL THEN false ELSE has_table_privilege(to_regclass(t), 'SELECT') END "
            "FROM unnest(%s::text[]) AS t",
            (list(TABLES),),
        ).fetchall()
        missing = [t for t, exists, _ in rows if not exists]
        if missing:
            raise StoreError(
                f"{self.location.display} (schema '{self.schema}') is not a LangGraph checkpoint store "
                f"(missing table{'s' if len(missing) > 1 else ''}: {', '.join(missing)})",
                hint="wrong database or schema? see --pg-schema",
            )
        denied = [t for t, _, ok in rows if not ok]
        if denied:
            raise StoreError(
                f"missing privilege on {self.location.display}: no SELECT on {', '.join(denied)}",
                hint="GRANT SELECT ON " + ", ".join(TABLES) + " TO the role you connect as",
            )
        self.migration_version = c.execute("SELECT max(v) FROM checkpoint_migrations").fetchone()[0]
        if self.migration_version is None or self.migration_version < MIGRATION_VERSION:
            raise StoreError(
                f"{self.location.display} has checkpoint tables at migration version "
                f"{self.migration_version if self.migration_version is not None else 'none'}, older than the "
                f"{MIGRATION_VERSION} symfonic reads",
                hint="let the application's PostgresSaver.setup() migrate it; symfonic never migrates",
            )
        row = c.execute(
            "SELECT a.attcollation, d.datcollate FROM pg_attribute a, pg_database d "
            "WHERE a.attrelid = 'checkpoints'::regclass AND a.attname = 'thread_id' "
            "AND d.datname = current_database()"
        ).fetchone()
        coll = c.execute("SELECT collname FROM pg_collation WHERE oid = %s", (row[0],)).fetchone()
        name = coll[0] if coll and coll[0] != "default" else row[1]
        self._c_collation = name in _C_COLLATIONS
        self.has_task_path = bool(
            c.execute(
                "SELECT 1 FROM pg_attribute WHERE attrelid = 'checkpoint_writes'::regclass "
                "AND attname = 'task_path' AND NOT attisdropped"
            ).fetchone()
        )

    def _stream(self, sql: str, params: Any) -> Iterator[tuple]:
        """Rows of a query through a server-side cursor: memory stays flat however many there are."""
        self._cursors += 1
        with self.conn.transaction():
            with self.conn.cursor(name=f"symfonic_{self._cursors}") as cur:
                cur.itersize = ITERSIZE
                cur.execute(sql, params)
                yield from cur

    def _prefix_where(self, prefix: str) -> tuple[str, list[Any]]:
        # starts_with is right under any collation; under a C collation a key range also uses the index.
        if self._c_collation:
            hi = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            return "WHERE thread_id >= %s AND thread_id < %s AND starts_with(thread_id, %s)", [prefix, hi, prefix]
        return "WHERE starts_with(thread_id, %s)", [prefix]

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
            where, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
        # Ties broken bytewise, as SQLite does.
        sql = (
            "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) "
            f"FROM checkpoints {where} GROUP BY thread_id "
            'ORDER BY max(checkpoint_id) DESC, thread_id COLLATE "C"'
        )
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        for key, n, first, last in self._stream(sql, params):
            yield ThreadSummary(str(key), n, first, last)

    @_translate_errors
    def thread_summary(self, key: str) -> ThreadSummary | None:
        row = self.conn.execute(
            "SELECT count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints WHERE thread_id = %s",
            (key,),
        ).fetchone()
        if not row or not row[0]:
            return None
        return ThreadSummary(key, row[0], row[1], row[2])

    @_translate_errors
    def info(self) -> StoreInfo:
        row = self.conn.execute(
            "SELECT (SELECT count(DISTINCT thread_id) FROM checkpoints), "
            "(SELECT count(*) FROM checkpoints), "
            "(SELECT count(*) FROM checkpoint_writes), "
            "(SELECT count(*) FROM checkpoint_blobs), "
            "(SELECT count(DISTINCT checkpoint_ns) FROM checkpoints), "
            "(SELECT max(v) FROM checkpoint_migrations), "
            "pg_total_relation_size('checkpoints'::regclass), "
            "pg_total_relation_size('checkpoint_blobs'::regclass), "
            "pg_total_relation_size('checkpoint_writes'::regclass), "
            "pg_total_relation_size('checkpoint_migrations'::regclass), "
            "current_database(), current_setting('server_version'), current_setting('transaction_read_only')"
        ).fetchone()
        threads, checkpoints, writes, blobs, namespaces, version, *sizes, database, server, read_only = row
        details: dict[str, Any] = {
            "database": database,
            "schema": self.schema,
            "tables": ", ".join(TABLES),
            "migration version": version,
            "schema variant": "checkpoint_writes.task_path present" if self.has_task_path else "checkpoint_writes without task_path",
            "blobs": blobs,
            "namespaces": namespaces,
        }
        for table, size in zip(TABLES, sizes):
            details[f"{table} size"] = size
        details["server version"] = server
        details["read-only session"] = read_only
        return StoreInfo("postgres", self.location.display, threads, checkpoints, writes, details)

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

        select = (
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint ->> 'ts', checkpoint -> 'channel_values', "
            "checkpoint -> 'channel_versions', metadata FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s "
        )
        if checkpoint_id is None:
            row = self.conn.execute(select + "ORDER BY checkpoint_id DESC LIMIT 1", (key, checkpoint_ns)).fetchone()
        else:
            row = self.conn.execute(select + "AND checkpoint_id = %s", (key, checkpoint_ns, checkpoint_id)).fetchone()
        if row is None:
            return None
        cid, parent, ts, inline, versions, metadata = row
        inline = inline if isinstance(inline, dict) else {}
        versions = versions if isinstance(versions, dict) else {}
        wanted = [ch for ch in channels if ch in versions]
        values: dict[str, Any] = {ch: inline[ch] for ch in channels if ch in inline}
        blocked: set[str] = set()
        if wanted:
            blobs = self.conn.execute(
                "SELECT b.channel, b.type, b.blob FROM checkpoint_blobs b "
                "JOIN unnest(%s::text[], %s::text[]) AS w(channel, version) "
                "ON b.channel = w.channel AND b.version = w.version "
                "WHERE b.thread_id = %s AND b.checkpoint_ns = %s",
                ([str(ch) for ch in wanted], [str(versions[ch]) for ch in wanted], key, checkpoint_ns),
            ).fetchall()
            with collect_blocked() as blocked:
                for ch, type_, blob in blobs:
                    if type_ == "empty":
                        values.pop(ch, None)
                        continue
                    # A blob wins over an inline value (a delta snapshot leaves a `true` marker inline).
                    values[ch] = loads(type_, blob, what=f"channel '{ch}' of checkpoint {cid}")
        return CheckpointRecord(
            thread_id=key,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=cid,
            parent_checkpoint_id=parent,
            ts=ts,
            metadata=metadata if isinstance(metadata, dict) else {},
            channel_values=values,
            channel_versions=dict(versions),
            blocked=frozenset(blocked),
        )

    @_translate_iter
    def iter_message_states(self, key: str) -> Iterator[MessageState]:
        # Each distinct (namespace, version) of `messages` ships its blob once, on its newest
        # checkpoint (the first the reader sees); the reader caches by version for the rest.
        sql = (
            "SELECT c.checkpoint_ns, c.checkpoint_id, c.ts, c.ver, "
            "CASE WHEN b.type = 'empty' THEN NULL ELSE b.type END, "
            "CASE WHEN b.type = 'empty' THEN NULL ELSE b.blob END "
            "FROM (SELECT checkpoint_ns, checkpoint_id, checkpoint ->> 'ts' AS ts, "
            "checkpoint -> 'channel_versions' ->> 'messages' AS ver, "
            "row_number() OVER (PARTITION BY checkpoint_ns, checkpoint -> 'channel_versions' ->> 'messages' "
            "ORDER BY checkpoint_id DESC) AS rn "
            "FROM checkpoints WHERE thread_id = %s) AS c "
            "LEFT JOIN checkpoint_blobs b ON c.rn = 1 AND b.thread_id = %s AND b.checkpoint_ns = c.checkpoint_ns "
            "AND b.channel = 'messages' AND b.version = c.ver "
            "ORDER BY c.checkpoint_id DESC"
        )
        for ns, cid, ts, ver, type_, blob in self._stream(sql, (key, key)):
            yield MessageState(ns, cid, ts, ver, "channel", type_, bytes(blob) if blob is not None else None)
