"""PostgreSQL stores written by ``langgraph-checkpoint-postgres``.

Tables ``checkpoints`` (checkpoint as JSONB, primitive channel values inline), ``checkpoint_blobs``
(other channel values, keyed by channel and version), ``checkpoint_writes`` and
``checkpoint_migrations``. Inspecting sessions are read-only on the server's side
(``default_transaction_read_only=on``), need nothing but SELECT on the four tables, and never run
the saver's ``setup()`` or migrations. Counting and listing happen in SQL; long results stream
through server-side cursors.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.stores.base import StoreInfo, SupportsWith, ThreadSummary
from symfonic_cli.stores.translate import error_translators
from symfonic_cli.threadkey import prefix_upper_bound, tenant_prefix

if TYPE_CHECKING:
    from symfonic_cli.stores.checkpoint_rows import CheckpointHead, CheckpointRecord, MessageState, MessageWrite
    from symfonic_cli.stores.erase_rows import ExtraTable, ThreadErasePlan
    from symfonic_cli.threadstate.listing import ThreadRunState
    from symfonic_cli.threadstate.rows import ThreadRunRows
    from symfonic_cli.stores.history_rows import CheckpointFacts, WriteChannel
    from symfonic_cli.stores.thread_copy import DecodedThread, ThreadExport

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
# The last migration of langgraph-checkpoint-postgres (2.x, 3.x): checkpoint_writes.task_path.
MIGRATION_VERSION = 9
ITERSIZE = 500
# libc locales whose order is the byte order (code point order in UTF-8).
_C_LOCALES = {"C", "POSIX", "C.UTF-8", "C.utf8"}


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


def _psycopg_errors() -> tuple[type[BaseException], ...]:
    import psycopg

    return (psycopg.Error,)


# psycopg errors become one-line store errors with the password masked.
_translate_errors, _translate_iter = error_translators(
    _psycopg_errors, lambda store, exc: _store_error(store.location, exc)
)


def _conninfo(location: StoreLocation, *, writable: bool, connect_timeout: float) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(location.url)
    except Exception as exc:
        raise StoreError(scrub(f"malformed PostgreSQL URL {location.display}: {' '.join(str(exc).split())}", location)) from None
    extra: dict[str, Any] = {"connect_timeout": _effective_timeout(connect_timeout)}
    if params.get("options") is None and (params.get("service") or os.environ.get("PGSERVICE")):
        # A service file may hold "options" (a search_path, ...): ours would replace them, so
        # libpq resolves them as usual and _prepare makes the session read-only after connecting.
        pass
    else:
        # Setting "options" would hide PGOPTIONS (libpq reads the variable only as a default).
        options = str(params.get("options") or os.environ.get("PGOPTIONS", "")).strip()
        if not writable:
            options = f"{options} -c default_transaction_read_only=on".strip()
        if options:
            extra["options"] = options
    if not params.get("application_name") and not os.environ.get("PGAPPNAME"):
        extra["application_name"] = "symfonic"
    return make_conninfo(location.url, **extra)


def _effective_timeout(seconds: float) -> int:
    # libpq (and psycopg) count whole seconds, at least 2.
    return max(2, math.ceil(seconds))


def _connect_error(location: StoreLocation, exc: Exception, timeout: float) -> StoreError:
    text = " ".join(str(exc).split())
    if "timeout expired" in text:
        return StoreError(
            scrub(f"no answer from the PostgreSQL server of {location.display} within {_effective_timeout(timeout)} s", location),
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
    if writable and _.get("init_target"):
        _init_target(location, conninfo, pg_schema, connect_timeout)  # migrate --init-target
    try:
        conn = psycopg.connect(conninfo, autocommit=True, prepare_threshold=None)
    except psycopg.Error as exc:
        raise _connect_error(location, exc, connect_timeout) from None
    if not writable:
        # Every transaction psycopg opens (server-side cursors) then starts BEGIN READ ONLY:
        # this holds even where a transaction-mode pooler swaps the server session underneath.
        conn.read_only = True
    store = PostgresStore(location, conn, writable=writable)
    store.connect_timeout = connect_timeout
    try:
        store._prepare(pg_schema)
    except BaseException:
        conn.close()
        raise
    return store


def _init_target(location: StoreLocation, conninfo: str, pg_schema: str | None, timeout: float) -> None:
    """``--init-target``: the PostgresSaver's own setup() (creates its tables, runs its migrations)."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    try:
        with psycopg.connect(conninfo, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            if pg_schema is not None:
                conn.execute("SELECT set_config('search_path', quote_ident(%s), false)", (pg_schema,))
            PostgresSaver(conn).setup()
    except psycopg.OperationalError as exc:
        raise _connect_error(location, exc, timeout) from None
    except psycopg.Error as exc:
        raise _store_error(location, exc) from None


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
        self.connect_timeout: float = 10
        self._key_equals = "thread_id = %s"
        self._cursors = 0
        self._erased: set[str] = set()  # cascade tables an erase deleted from (for VACUUM)

    def close(self) -> None:
        self.conn.close()

    # -- opening

    @_translate_errors
    def _prepare(self, pg_schema: str | None) -> None:
        c = self.conn
        if not self.writable:
            # Startup options can be dropped by a pooler or left to a service file: make sure, or refuse.
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
        # Catalog rows as JSON: their columns differ between versions (datlocprovider since 15).
        coll, db = c.execute(
            "SELECT to_jsonb(k), to_jsonb(d) FROM pg_attribute a JOIN pg_collation k ON k.oid = a.attcollation, "
            "pg_database d WHERE a.attrelid = 'checkpoints'::regclass AND a.attname = 'thread_id' "
            "AND d.datname = current_database()"
        ).fetchone()
        self._c_collation = _byte_order(coll, db)
        # A nondeterministic collation (case- or accent-insensitive ICU) makes "=" match other
        # keys: the erase then compares keys in bytes.
        exact = c.execute(
            "SELECT coalesce(bool_and((to_jsonb(k) ->> 'collisdeterministic')::boolean), true) FROM pg_attribute a JOIN pg_collation k ON k.oid = a.attcollation "
            "WHERE a.attrelid IN ('checkpoints'::regclass, 'checkpoint_blobs'::regclass, 'checkpoint_writes'::regclass) "
            "AND a.attname = 'thread_id'"
        ).fetchone()[0]
        self._key_equals = "thread_id = %s" if exact else 'thread_id COLLATE "C" = %s'
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
        """Exactly the keys starting with ``prefix``. Under a collation in byte order (C, POSIX) the
        key range is exact and the primary key serves it; under any other (ICU, a libc language
        locale) a range selects other keys or none, so the first characters are compared in
        bytes (COLLATE "C": starts_with refuses a nondeterministic collation)."""
        if self._c_collation:
            hi = prefix_upper_bound(prefix)
            if hi is None:
                return "WHERE thread_id >= %s", [prefix]
            return "WHERE thread_id >= %s AND thread_id < %s", [prefix, hi]
        return 'WHERE starts_with(thread_id COLLATE "C", %s)', [prefix]

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
        from symfonic_cli.stores.checkpoint_rows import CheckpointRecord

        select = (
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint ->> 'ts', checkpoint -> 'channel_values', "
            "checkpoint -> 'channel_versions', metadata FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s "
        )
        where, params = ("ORDER BY checkpoint_id DESC LIMIT 1", (key, checkpoint_ns)) if checkpoint_id is None else (
            "AND checkpoint_id = %s", (key, checkpoint_ns, checkpoint_id))
        try:
            row = self.conn.execute(select.replace(", metadata FROM", ", metadata::text FROM") + where, params).fetchone()
        except (ValueError, RecursionError) as exc:
            # psycopg decodes the JSONB with Python's json: a long integer, deep nesting.
            found = self.conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s " + where, params
            ).fetchone()
            raise StoreError(
                f"checkpoint {found[0] if found else '?'} cannot be decoded ({type(exc).__name__}: {str(exc)[:120]})"
            ) from None
        if row is None:
            return None
        cid, parent, ts, inline, versions, metadata_text = row
        from symfonic_cli.metadata_json import MetadataError
        from symfonic_cli.metadata_json import loads as metadata_loads

        try:
            metadata = metadata_loads(metadata_text) if metadata_text is not None else {}
        except MetadataError as exc:
            raise StoreError(f"checkpoint {cid}: {exc.reason}") from None
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
        from symfonic_cli.stores.checkpoint_rows import MessageState

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

    # -- timestamps (protocol docstrings in stores/protocol.py): no message decoded

    @_translate_errors
    def read_message_state(self, key: str, *, checkpoint_id: str | None = None) -> MessageState | None:
        # The messages blob named by the checkpoint's channel_versions; anything unusual (an inline
        # value, an "empty" blob, no blob) gives payload None and the strict path decides.
        from symfonic_cli.stores.checkpoint_rows import MessageState

        sql = (
            "SELECT c.checkpoint_id, c.checkpoint ->> 'ts', c.checkpoint -> 'channel_versions' ->> 'messages', "
            "c.checkpoint -> 'channel_values' ? 'messages', b.type, b.blob "
            "FROM checkpoints c LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            "WHERE c.thread_id = %s AND c.checkpoint_ns = ''"
        )
        if checkpoint_id is None:
            row = self.conn.execute(sql + " ORDER BY c.checkpoint_id DESC LIMIT 1", (key,)).fetchone()
        else:
            row = self.conn.execute(sql + " AND c.checkpoint_id = %s", (key, checkpoint_id)).fetchone()
        if row is None:
            return None
        cid, ts, version, inline, type_, blob = row
        if inline or type_ != "msgpack" or blob is None:
            return MessageState("", cid, ts, version, "channel", None, None)
        return MessageState("", cid, ts, version, "channel", type_, bytes(blob))

    @_translate_iter
    def iter_checkpoint_heads(self, key: str) -> Iterator["CheckpointHead"]:
        from symfonic_cli.stores.checkpoint_rows import CheckpointHead
        from symfonic_cli.timestamps import NeedMore, channel_blob_count

        sql = (
            "SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint ->> 'ts', "
            "CASE WHEN jsonb_typeof(c.metadata -> 'source') = 'string' THEN c.metadata ->> 'source' END, "
            "jsonb_typeof(c.checkpoint -> 'channel_values' -> 'messages'), "
            "b.type, substring(b.blob from 1 for 9) "
            "FROM checkpoints c LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            "WHERE c.thread_id = %s ORDER BY c.checkpoint_id, c.checkpoint_ns"
        )
        for ns, cid, parent, ts, source, inline, type_, head in self._stream(sql, (key,)):
            count: int | None
            if type_ == "msgpack" and head is not None:
                try:
                    count = channel_blob_count(bytes(head))
                except (NeedMore, ValueError):
                    count = None
            elif type_ is not None and type_ != "empty":
                count = None  # another encoding: the resolver takes the exact walk
            elif inline is not None and inline != "null":
                count = None  # an inline value where a list belongs
            else:
                count = 0
            yield CheckpointHead(ns, cid, parent, ts, source, count)

    @_translate_iter
    def iter_message_writes(self, key: str) -> Iterator["MessageWrite"]:
        from symfonic_cli.stores.checkpoint_rows import MessageWrite

        sql = (
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, type, blob FROM checkpoint_writes "
            "WHERE thread_id = %s AND channel = 'messages'"
        )
        for ns, cid, task_id, idx, type_, blob in self._stream(sql, (key,)):
            yield MessageWrite(ns, cid, task_id, idx, type_, bytes(blob) if blob is not None else None)

    # -- history (protocol docstrings in stores/protocol.py): metadata and write channels, no value decoded

    @_translate_iter
    def iter_checkpoint_facts(self, key: str) -> Iterator["CheckpointFacts"]:
        from symfonic_cli.stores.history_rows import CheckpointFacts

        sql = (
            "SELECT checkpoint_ns, checkpoint_id, metadata -> 'source', metadata -> 'step', metadata -> 'writes' "
            "FROM checkpoints WHERE thread_id = %s ORDER BY checkpoint_id, checkpoint_ns"
        )
        for ns, cid, source, step, writes in self._stream(sql, (key,)):
            yield CheckpointFacts(
                ns, cid, source if isinstance(source, str) else None,
                step if isinstance(step, int) and not isinstance(step, bool) else None, writes,
            )

    @_translate_iter
    def iter_write_channels(self, key: str) -> Iterator["WriteChannel"]:
        from symfonic_cli.stores.history_rows import WriteChannel

        path = "task_path" if self.has_task_path else "''"
        sql = f"SELECT checkpoint_ns, checkpoint_id, task_id, {path}, idx, channel FROM checkpoint_writes WHERE thread_id = %s"
        for ns, cid, task_id, task_path, idx, channel in self._stream(sql, (key,)):
            yield WriteChannel(ns, cid, task_id, task_path or "", idx, channel)

    @_translate_errors
    def checkpoint_ids(self, key: str) -> list[tuple[str, str]]:
        rows = self.conn.execute("SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = %s", (key,)).fetchall()
        return [(ns, cid) for ns, cid in rows]

    @_translate_errors
    def read_messages_as_stored(self, key: str, *, checkpoint_ns: str, checkpoint_id: str) -> MessageState | None:
        from symfonic_cli.stores.checkpoint_rows import MessageState

        row = self.conn.execute(
            "SELECT c.checkpoint ->> 'ts', c.checkpoint -> 'channel_versions' ->> 'messages', "
            "c.checkpoint -> 'channel_values' ? 'messages', b.type, b.blob "
            "FROM checkpoints c LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            "WHERE c.thread_id = %s AND c.checkpoint_ns = %s AND c.checkpoint_id = %s",
            (key, checkpoint_ns, checkpoint_id),
        ).fetchone()
        if row is None:
            return None
        ts, version, inline, type_, blob = row
        if inline or type_ != "msgpack" or blob is None:
            return MessageState(checkpoint_ns, checkpoint_id, ts, version, "channel", None, None)
        return MessageState(checkpoint_ns, checkpoint_id, ts, version, "channel", type_, bytes(blob))

    # -- compat (protocol docstrings in stores/protocol.py): JSONB operators over metadata only

    _ENVELOPE_FIELDS = ("format_version", "writer_line", "safe_boundary", "finalized")

    @_translate_iter
    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None):
        from symfonic_cli.stores.envelope_rows import EnvelopeShape

        # Values group by their JSON text, so 1 and 1.0 (equal as jsonb) stay apart.
        inner = []
        for f in self._ENVELOPE_FIELDS:
            inner.append(f"CASE WHEN kind = 'object' THEN {_kind_sql(f'env -> {_lit(f)}')} END AS {f}_t")
            inner.append(
                f"CASE WHEN kind = 'object' AND jsonb_typeof(env -> {_lit(f)}) NOT IN ('object', 'array') "
                f"THEN (env -> {_lit(f)})::text END AS {f}_v"
            )
        inner.append(f"CASE WHEN kind = 'object' THEN {_kind_sql(_lit_path('env', 'boundary_sequence'))} END AS bs_t")
        groups = [f"{f}_{s}" for f in self._ENVELOPE_FIELDS for s in ("t", "v")] + ["bs_t"]
        # Rows Python's json reads differently (see _PYTHON_ONLY) are tested once, in this pass,
        # and come out one per group with their metadata text, to be decoded in Python.
        py = ["py_tid", "py_ns", "py_cid", "py_meta"]
        sql = (
            f"SELECT kind, {', '.join(groups)}, older, count(*), sum(latest::int), {', '.join(py)} FROM ("
            f" SELECT kind, {', '.join(inner)}, older, latest, {', '.join(py)} FROM ("
            f"  SELECT CASE WHEN NOT python_only THEN {_kind_sql('metadata -> %(key)s')} END AS kind,"
            "   CASE WHEN NOT python_only THEN metadata -> %(key)s END AS env, older, latest,"
            "   CASE WHEN python_only THEN thread_id END AS py_tid, CASE WHEN python_only THEN checkpoint_ns END AS py_ns,"
            "   CASE WHEN python_only THEN checkpoint_id END AS py_cid,"
            "   CASE WHEN python_only THEN metadata::text END AS py_meta FROM ("
            "   SELECT thread_id, checkpoint_ns, checkpoint_id, metadata,"
            '    coalesce(checkpoint_id COLLATE "C" < %(older)s, false) AS older,'
            "    (checkpoint_ns = '' AND row_number() OVER ("
            "      PARTITION BY thread_id, checkpoint_ns ORDER BY checkpoint_id DESC) = 1) AS latest,"
            f"    {_PYTHON_ONLY} AS python_only"
            "   FROM checkpoints) AS r) AS m) AS e"
            f" GROUP BY kind, {', '.join(groups)}, older, {', '.join(py)}"
        )
        params = {"key": envelope_key, "older": older_than}
        for row in self._stream(sql, params):
            if row[13] is not None:
                yield self._python_shape(envelope_key, row)
                continue
            kind = row[0] or "absent"
            fields = {}
            if kind == "object":
                for i, f in enumerate(self._ENVELOPE_FIELDS):
                    fields[f] = _typed(row[1 + 2 * i], row[2 + 2 * i])
                fields["boundary_sequence"] = _typed(row[9], None)
            yield EnvelopeShape(kind, **fields, older=bool(row[10]), checkpoints=row[11], latest=row[12] or 0)

    @staticmethod
    def _python_shape(envelope_key: str, row: tuple):
        """One row whose metadata Python's json reads differently from JSONB (see _PYTHON_ONLY)."""
        from symfonic_cli.stores.envelope_rows import ABSENT, EnvelopeShape, row_from_metadata

        tid, ns, cid, meta = row[13:17]
        decoded = row_from_metadata(str(tid), ns, cid, meta, envelope_key)
        return EnvelopeShape(
            "absent" if decoded.envelope is ABSENT else "object",
            older=bool(row[10]), checkpoints=row[11], latest=row[12] or 0,
            metadata={} if decoded.envelope is ABSENT else {envelope_key: decoded.envelope},
            anomalies=decoded.anomalies, error=decoded.error,
        )

    @_translate_iter
    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None):
        from symfonic_cli.stores.envelope_rows import row_from_metadata

        # Each row's metadata decoded as PostgresSaver's driver decodes it (Python json), limits applied.
        where = "WHERE thread_id = %(thread)s" if thread is not None else ""
        sql = (
            "SELECT thread_id, checkpoint_ns, checkpoint_id, metadata::text "
            f'FROM checkpoints {where} ORDER BY thread_id COLLATE "C", checkpoint_id DESC, checkpoint_ns COLLATE "C"'
        )
        for tid, ns, cid, meta in self._stream(sql, {"thread": thread}):
            yield row_from_metadata(str(tid), ns, cid, meta, envelope_key)

    @_translate_errors
    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        sql = (
            "SELECT j.key, count(*) FROM checkpoints, "
            "jsonb_each(CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ELSE '{}'::jsonb END) AS j "
            "WHERE jsonb_typeof(j.value) = 'object' AND j.key <> %s "
            "AND j.value ? 'format_version' AND j.value ? 'writer_line' "
            'GROUP BY j.key ORDER BY count(*) DESC, j.key COLLATE "C" LIMIT %s'
        )
        return [(str(k), n) for k, n in self.conn.execute(sql, (envelope_key, limit))]

    # -- run state (``thread show``; see stores/protocol.py): channel presence from the JSONB and
    # the blobs of the versions the checkpoint names; only Sends and join sets are decoded

    @_translate_errors
    def read_run_rows(self, key: str) -> "ThreadRunRows | None":
        from symfonic_cli.decoding import lean_loads
        from symfonic_cli.threadstate.rows import RawWrite, ThreadRunRows, lean_from_mapping
        from symfonic_cli.timestamps import NeedMore, channel_blob_count

        c = self.conn
        n, namespaces, first, last, size = c.execute(
            "SELECT count(*), count(DISTINCT checkpoint_ns), min(checkpoint_id COLLATE \"C\"), max(checkpoint_id COLLATE \"C\"), "
            "coalesce(sum(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0)), 0) FROM checkpoints WHERE thread_id = %s",
            (key,),
        ).fetchone()
        if not n:
            return None
        size += c.execute(
            "SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %s", (key,)
        ).fetchone()[0]
        size += c.execute(
            "SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes WHERE thread_id = %s", (key,)
        ).fetchone()[0]
        latest_sql = (
            'SELECT DISTINCT ON (checkpoint_ns COLLATE "C") checkpoint_ns, checkpoint_id, checkpoint, metadata '
            'FROM checkpoints WHERE thread_id = %s ORDER BY checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C" DESC'
        )
        try:
            latest_rows = c.execute(latest_sql, (key,)).fetchall()
        except (ValueError, RecursionError) as exc:
            # psycopg decodes JSONB with Python's json: an integer too long, nesting too deep.
            ids = [r[0] for r in c.execute(latest_sql.replace("checkpoint_ns, checkpoint_id, checkpoint, metadata", "checkpoint_id"), (key,))]
            raise StoreError(
                f"checkpoint {' or '.join(ids)} of thread '{key}' cannot be decoded ({type(exc).__name__}: {str(exc)[:100]})"
            ) from None
        wanted = [
            (ns, ch, str(ver))
            for ns, _cid, cp, _meta in latest_rows if isinstance(cp, dict) and isinstance(cp.get("channel_versions"), dict)
            for ch, ver in cp["channel_versions"].items()
        ]
        blobs: dict[tuple[str, str], Any] = {}
        message_counts: dict[str, int | None] = {}
        if wanted:
            for ns, ch, type_, blob, head in c.execute(
                "SELECT b.checkpoint_ns, b.channel, b.type, "
                "CASE WHEN b.channel = '__pregel_tasks' OR b.channel LIKE 'join:%%' THEN b.blob END, "
                "CASE WHEN b.channel = 'messages' THEN substring(b.blob from 1 for 9) END "
                "FROM checkpoint_blobs b JOIN unnest(%s::text[], %s::text[], %s::text[]) AS w(ns, ch, ver) "
                "ON b.checkpoint_ns = w.ns AND b.channel = w.ch AND b.version = w.ver WHERE b.thread_id = %s",
                ([w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted], key),
            ):
                if type_ == "empty":
                    continue
                value = lean_loads(type_, bytes(blob)) if blob is not None else None
                blobs[(ns, ch)] = value
                if ch == "messages":
                    try:
                        message_counts[ns] = channel_blob_count(bytes(head)) if head is not None and type_ == "msgpack" else None
                    except (NeedMore, ValueError):
                        message_counts[ns] = None
        latest = []
        for ns, cid, cp, meta in latest_rows:
            extra = {ch: v for (bns, ch), v in blobs.items() if bns == ns}
            lean = lean_from_mapping(ns, cid, cp, meta, extra_values=extra)
            if ns in message_counts:
                lean.messages = message_counts[ns]
            latest.append(lean)
        latest.sort(key=lambda l: (l.checkpoint_ns != "", l.checkpoint_ns))
        keep = {(l.checkpoint_ns, l.checkpoint_id) for l in latest}
        writes = [
            RawWrite(ns, cid, task_id, task_path, idx, channel, type_, _bytes(blob))
            for ns, cid, task_id, idx, task_path, channel, type_, blob in c.execute(
                "SELECT checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, "
                "CASE WHEN channel IN ('__interrupt__', '__error__') THEN blob END FROM checkpoint_writes "
                'WHERE thread_id = %s ORDER BY checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C", task_id COLLATE "C", idx',
                (key,),
            )
            if (ns, cid) in keep
        ]
        return ThreadRunRows(latest, writes, n, namespaces, size, first, last)

    @_translate_iter
    def iter_run_states(
        self, *, prefix: str | None = None, with_size: bool = False, with_status: bool = True
    ) -> Iterator["ThreadRunState"]:
        """Aggregates in the server, streamed in thread order and merged here; the version maps
        are read as JSONB, never a blob (``threadstate.listing``)."""
        from symfonic_cli.threadstate.listing import ThreadRunState, root_status, status_from_maps

        where, params = "", []
        if prefix:
            where, params = "AND starts_with(thread_id, %s)", [prefix]
        order = 'ORDER BY thread_id COLLATE "C"'
        size_sql = "sum(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0))" if with_size else "0"
        queries = [(
            f'SELECT thread_id, count(*), min(checkpoint_id COLLATE "C"), max(checkpoint_id COLLATE "C"), {size_sql} '
            f"FROM checkpoints WHERE true {where} GROUP BY thread_id {order}", params,
        )]
        if with_size:
            for table in ("checkpoint_blobs", "checkpoint_writes"):
                queries.append((
                    f"SELECT thread_id, sum(octet_length(blob)) FROM {table} WHERE true {where} GROUP BY thread_id {order}", params,
                ))
        latest_sql = (
            'SELECT DISTINCT ON (thread_id COLLATE "C") thread_id, checkpoint_id FROM checkpoints '
            f"WHERE checkpoint_ns = '' {where} ORDER BY thread_id COLLATE \"C\", checkpoint_id COLLATE \"C\" DESC"
        )
        if with_status:
            queries.append((
                f"SELECT c.thread_id, c.checkpoint_id, c.metadata -> 'step', c.checkpoint -> 'v', c.checkpoint -> 'channel_versions', "
                f"c.checkpoint -> 'versions_seen', c.checkpoint -> 'updated_channels' FROM ({latest_sql}) AS l "
                "JOIN checkpoints c ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.checkpoint_id "
                'ORDER BY c.thread_id COLLATE "C"', params,
            ))
            queries.append((
                "SELECT w.thread_id, w.task_id, max(w.task_path), bool_or(w.channel = '__interrupt__'), bool_or(w.channel = '__error__'), "
                "bool_or(w.channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
                f"FROM ({latest_sql}) AS l JOIN checkpoint_writes w ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' "
                'AND w.checkpoint_id = l.checkpoint_id GROUP BY w.thread_id, w.task_id ORDER BY w.thread_id COLLATE "C"', params,
            ))
        # One read-only transaction; its server-side cursors are drained in step, a thread at a time.
        with self.conn.transaction():
            opened = []
            try:
                for sql, args in queries:
                    self._cursors += 1
                    cur = self.conn.cursor(name=f"symfonic_{self._cursors}")
                    cur.itersize = ITERSIZE
                    cur.execute(sql, args)
                    opened.append(cur)
                yield from self._merge_run_states([iter(c) for c in opened], with_size, with_status, ThreadRunState, root_status, status_from_maps)
            finally:
                for cur in opened:
                    cur.close()

    def _merge_run_states(self, cursors, with_size, with_status, ThreadRunState, root_status, status_from_maps):
        summary = cursors[0]
        sizes = cursors[1:3] if with_size else []
        rest = cursors[3:] if with_size else cursors[1:]
        heads = [next(c, None) for c in sizes]
        latest = rest[0] if with_status else None
        flags = rest[1] if with_status else None
        nxt_latest = next(latest, None) if latest is not None else None
        nxt_flag = next(flags, None) if flags is not None else None
        for key, n, first, last, size in summary:
            size = int(size or 0)
            for i, c in enumerate(sizes):
                while heads[i] is not None and heads[i][0] < key:
                    heads[i] = next(c, None)
                if heads[i] is not None and heads[i][0] == key:
                    size += int(heads[i][1] or 0)
                    heads[i] = next(c, None)
            status = None
            if with_status:
                while nxt_latest is not None and nxt_latest[0] < key:
                    nxt_latest = next(latest, None)
                row = None
                if nxt_latest is not None and nxt_latest[0] == key:
                    row, nxt_latest = nxt_latest, next(latest, None)
                task_flags = {}
                while nxt_flag is not None and nxt_flag[0] <= key:
                    if nxt_flag[0] == key:
                        task_flags[str(nxt_flag[1])] = (nxt_flag[2], bool(nxt_flag[3]), bool(nxt_flag[4]), bool(nxt_flag[5]))
                    nxt_flag = next(flags, None)
                if row is not None:
                    _, cid, step, v, versions, seen, updated = row
                    status = status_from_maps(
                        cid, step, v, versions, seen, updated, task_flags,
                        whole=lambda key=key, task_flags=task_flags: root_status(self.read_run_rows(key), task_flags),
                    )
            yield ThreadRunState(str(key), n, first, last, status, size if with_size else None)

    # -- erase (protocol docstrings in stores/protocol.py)

    _ERASE_CORE = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")  # delete order

    def _cascade(self, key: str, extra: tuple["ExtraTable", ...]) -> list[tuple[str, Any, tuple]]:
        """(name, WHERE clause or None, params) per cascade table; None: the table cannot hold ``key``."""
        from psycopg import sql

        out = []
        for table in extra:
            filters = table.filters(key)
            if filters is None:
                out.append((table.name, None, ()))
                continue
            where = sql.SQL(" AND ").join(
                sql.SQL("{} IS NULL" if v is None else "{} = %s").format(sql.Identifier(col)) for col, v in filters
            )
            out.append((table.name, where, tuple(v for _, v in filters if v is not None)))
        for name in self._ERASE_CORE:
            out.append((name, sql.SQL(self._key_equals), (key,)))
        return out

    def _erase_checks(self, c: Any, extra: tuple["ExtraTable", ...]) -> None:
        """What a writable session ``c`` must pass before anything is deleted (real run and dry run)."""
        where = self.location.display
        if c.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
            raise StoreError(f"{where} is a read-only standby: nothing was deleted")
        if c.execute("SHOW default_transaction_read_only").fetchone()[0] == "on":
            raise StoreError(f"{where} is read-only for this session (default_transaction_read_only = on): nothing was deleted")
        denied = []
        for table in extra:
            reg = c.execute("SELECT to_regclass(%s)::oid", (_ident_text(table.name),)).fetchone()[0]
            if reg is None:
                raise StoreError(f"declared erase_extra table '{table.name}' does not exist in {where} (schema '{self.schema}')")
            cols = {r[0] for r in c.execute("SELECT attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped", (reg,))}
            for col, _ in table.match:
                if col not in cols:
                    raise StoreError(f"declared erase_extra column '{col}' does not exist in table '{table.name}'")
            if not c.execute("SELECT has_table_privilege(%s, 'DELETE')", (reg,)).fetchone()[0]:
                denied.append(table.name)
        for name in self._ERASE_CORE:
            if not c.execute("SELECT has_table_privilege(to_regclass(%s), 'DELETE')", (name,)).fetchone()[0]:
                denied.append(name)
        if denied:
            raise StoreError(f"missing privilege on {where}: no DELETE on {', '.join(denied)}: nothing was deleted")

    @_translate_errors
    def erase_prepare(self, extra: tuple["ExtraTable", ...], *, dry_run: bool = False) -> list[str]:
        if self.writable:
            self._erase_checks(self.conn, extra)
            return []
        if not dry_run:
            raise StoreError(f"{self.location.display} was opened read-only; erasing needs a writable store")
        # A dry run reads through the read-only session; the checks need a session such as the
        # real run opens (its read-only setting, its privileges). It runs nothing but the checks.
        import psycopg

        conninfo = _conninfo(self.location, writable=True, connect_timeout=self.connect_timeout)
        try:
            conn = psycopg.connect(conninfo, autocommit=True, prepare_threshold=None)
        except psycopg.Error as exc:
            raise _connect_error(self.location, exc, self.connect_timeout) from None
        try:
            if self.schema is not None:
                conn.execute("SELECT set_config('search_path', quote_ident(%s), false)", (self.schema,))
            self._erase_checks(conn, extra)
        finally:
            conn.close()
        return []

    @_translate_errors
    def thread_keys_with_prefix(self, prefix: str) -> list[str]:
        where, params = self._prefix_where(prefix) if prefix else ("", [])
        rows = self.conn.execute(
            f"SELECT t FROM (SELECT thread_id AS t FROM checkpoints {where} "
            f"UNION SELECT thread_id FROM checkpoint_writes {where}) AS k "
            'ORDER BY t COLLATE "C"',
            params * 2,
        )
        return [str(r[0]) for r in rows]

    def _counts(self, key: str, extra: tuple["ExtraTable", ...]) -> dict[str, int]:
        from psycopg import sql

        counts = {}
        for name, where, params in self._cascade(key, extra):
            if where is None:
                counts[name] = 0
                continue
            stmt = sql.SQL("SELECT count(*) FROM {} WHERE {}").format(_ident(name), where)
            counts[name] = self.conn.execute(stmt, params).fetchone()[0]
        return counts

    @_translate_errors
    def erase_plan(self, key: str, extra: tuple["ExtraTable", ...]) -> "ThreadErasePlan":
        from symfonic_cli.stores.erase_rows import ThreadErasePlan

        counts = self._counts(key, extra)
        first, last = self.conn.execute(
            f"SELECT min(checkpoint_id), max(checkpoint_id) FROM checkpoints WHERE {self._key_equals}", (key,)
        ).fetchone()
        return ThreadErasePlan(key, counts, first, last)

    @_translate_errors
    def erase_thread(self, key: str, extra: tuple["ExtraTable", ...], *, between=None, expected=None) -> dict[str, int]:
        from psycopg import sql

        from symfonic_cli.stores.erase_rows import check_against_plan

        deleted: dict[str, int] = {}
        with self.conn.transaction():  # any exception rolls everything back
            for name, where, params in self._cascade(key, extra):
                if where is None:
                    deleted[name] = 0
                else:
                    cur = self.conn.execute(sql.SQL("DELETE FROM {} WHERE {}").format(_ident(name), where), params)
                    deleted[name] = cur.rowcount
                if between is not None:
                    between(name)
            check_against_plan(expected, deleted, extra)
        self._erased.update(name for name, n in deleted.items() if n)
        return deleted

    @_translate_errors
    def remaining_rows(self, key: str, extra: tuple["ExtraTable", ...]) -> dict[str, int]:
        return self._counts(key, extra)

    @_translate_errors
    def erase_finish(self, *, vacuum: bool) -> list[str]:
        from psycopg import sql

        touched = sorted(self._erased)
        if not vacuum:
            if touched:
                return ["deleted rows stay in the table files until VACUUM (autovacuum, or --vacuum) reclaims them"]
            return []
        for name in touched:
            self.conn.execute(sql.SQL("VACUUM {}").format(_ident(name)))
        return [f"VACUUM ran on {', '.join(touched)}"] if touched else []

    # -- migrate (see the "migrate" section of stores/protocol.py)

    @_translate_errors
    def export_thread(self, key: str) -> "ThreadExport":
        from symfonic_cli.stores.thread_copy import RawRow, ThreadExport

        c = self.conn
        rows = [
            RawRow("checkpoints", (ns, cid), (parent, type_, checkpoint, metadata))
            for ns, cid, parent, type_, checkpoint, metadata in c.execute(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                'FROM checkpoints WHERE thread_id = %s ORDER BY checkpoint_id COLLATE "C", checkpoint_ns COLLATE "C"',
                (key,),
            )
        ]
        rows += [
            RawRow("checkpoint_blobs", (ns, channel, version), (type_, _bytes(blob)))
            for ns, channel, version, type_, blob in c.execute(
                "SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = %s "
                'ORDER BY checkpoint_ns COLLATE "C", channel COLLATE "C", version COLLATE "C"',
                (key,),
            )
        ]
        rows += [
            RawRow("checkpoint_writes", (ns, cid, task_id, idx), (task_path, channel, type_, _bytes(blob)))
            for ns, cid, task_id, idx, task_path, channel, type_, blob in c.execute(
                "SELECT checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob "
                "FROM checkpoint_writes WHERE thread_id = %s "
                'ORDER BY checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C", task_id COLLATE "C", idx',
                (key,),
            )
        ]
        return ThreadExport("postgres", key, rows)

    @_translate_errors
    def import_rows(self, key: str, rows) -> None:
        import psycopg
        from psycopg.types.json import Jsonb

        from symfonic_cli.stores.thread_copy import MigrationConflict, migrate_fault_point

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
        from symfonic_cli.decoding import collect_blocked
        from symfonic_cli.migration import ThreadDecoder
        from symfonic_cli.stores.thread_copy import DecodedCheckpoint, DecodedThread, DecodedWrite

        loads = ThreadDecoder().loads  # each message of the thread decoded once, shared with the source's
        c = self.conn
        thread = DecodedThread(key, [], [])
        # Every blob of the thread once; checkpoints name theirs by (ns, channel, version).
        raw = {
            (ns, ch, ver): (type_, blob)
            for ns, ch, ver, type_, blob in c.execute(
                "SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = %s", (key,)
            )
        }
        decoded: dict[tuple, tuple[Any, set[str]]] = {}
        rows = c.execute(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints WHERE thread_id = %s",
            (key,),
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
                value, blocked = decoded[ident]
                if value is _EMPTY:
                    continue
                values[ch] = value
                if blocked:
                    thread.blocked[f"checkpoint {cid}, ns '{ns}', channel '{ch}'"] = sorted(blocked)
            thread.checkpoints.append(
                DecodedCheckpoint(ns, cid, parent, {**checkpoint, "channel_values": values}, metadata if isinstance(metadata, dict) else {})
            )
        writes = c.execute(
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob "
            "FROM checkpoint_writes WHERE thread_id = %s",
            (key,),
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

        from symfonic_cli.migration import reusing, write_batches
        from symfonic_cli.stores.thread_copy import MigrationConflict, migrate_fault_point

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
            saver.serde = reusing(saver.serde)  # same bytes; each shared message encoded once
            for cp, versions in zip(checkpoints, new_versions):
                config = {"configurable": {"thread_id": key, "checkpoint_ns": cp.checkpoint_ns, "checkpoint_id": cp.parent_checkpoint_id}}
                saver.put(config, cp.checkpoint, cp.metadata, versions)
            for ns, cid, task_id, task_path, batch in write_batches(writes):
                config = {"configurable": {"thread_id": key, "checkpoint_ns": ns, "checkpoint_id": cid}}
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
        """Run the recorded statements. When the target holds no row of the thread, no ON
        CONFLICT clause can fire, so a plain ``INSERT INTO t (cols) VALUES (%s, ...)`` is sent
        as COPY of the very same rows; otherwise (or for any other shape) as executemany."""
        from psycopg import sql as pgsql

        with conn.cursor() as cur:
            for statement, rows in self.statements.items():
                m = _INSERT_RE.match(statement)
                columns = [col.strip() for col in m.group(2).split(",")] if m else []
                if not (fresh and m and rows and len(columns) == m.group(3).count("%s")):
                    cur.executemany(statement, rows)
                    continue
                copy = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
                    pgsql.Identifier(m.group(1)), pgsql.SQL(", ").join(map(pgsql.Identifier, columns))
                )
                with cur.copy(copy) as cp:
                    for row in rows:
                        cp.write_row(row)


_INSERT_RE = re.compile(r"\s*INSERT INTO (\w+) \(([\w\s,]+)\)\s*VALUES \(((?:%s,\s*)*%s)\)", re.I)
_THREAD_PRESENT_SQL = (
    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = %s) "
    "OR EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = %s) "
    "OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = %s)"
)


# Metadata Python's json cannot read within symfonic's limits (symfonic_cli/metadata_json.py):
# an integer of more digits than MAX_INT_DIGITS (JSONB keeps any number exactly), or nesting
# deeper than MAX_DEPTH (the metadata is level 1). Those rows are decoded in Python, as the
# saver's driver would, so the store-wide report reads them as a thread's report does.
_PYTHON_ONLY = (
    "(jsonb_path_exists(metadata, 'strict $.** ? (@.type() == \"number\" && (@ >= 1e20000 || @ <= -1e20000))') OR "
    "jsonb_path_exists(metadata, 'strict $.**{2000} ? (@.type() == \"array\" || @.type() == \"object\")'))"
)


def _bytes(value: Any) -> Any:
    return bytes(value) if isinstance(value, (memoryview, bytearray)) else value


def _byte_order(coll: dict[str, Any], db: dict[str, Any]) -> bool:
    """Whether text under this collation (a pg_collation row; pg_database for "default") sorts
    in byte order, so that a key range is exactly a key prefix."""
    provider = coll.get("collprovider")
    if provider == "d":  # the database's own collation
        provider = db.get("datlocprovider", "c")
        locale = db.get("datcollate") if provider == "c" else db.get("datlocale") or db.get("daticulocale")
    else:
        locale = coll.get("collcollate") if provider == "c" else coll.get("colllocale") or coll.get("colliculocale")
    if provider == "b":  # PostgreSQL 17's builtin provider: C and C.UTF-8 are code point order
        return locale in ("C", "C.UTF-8")
    return provider == "c" and locale in _C_LOCALES


def _ident(name: str):
    # Names are validated identifiers already (erase_plan); "schema.table" is allowed.
    from psycopg import sql

    return sql.Identifier(*name.split("."))


def _ident_text(name: str) -> str:
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


def _lit(text: str) -> str:
    # Field names here are our own constants, never user input.
    assert text.isidentifier()
    return f"'{text}'"


def _lit_path(base: str, field: str) -> str:
    return f"{base} -> {_lit(field)}"


def _kind_sql(expr: str) -> str:
    """The protocol's JSON kind of a jsonb expression (NULL when absent); integers told from numbers by their text."""
    return (
        f"CASE jsonb_typeof({expr}) WHEN 'number' THEN "
        f"CASE WHEN ({expr})::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'number' END "
        f"ELSE jsonb_typeof({expr}) END"
    )


_PLACEHOLDER = {"null": None, "boolean": False, "integer": 0, "number": 0.0, "string": "", "array": [], "object": {}}


def _typed(kind: str | None, text: str | None) -> Any:
    """A (kind, JSON text) pair as the faithful Python value; placeholders for nested values."""

    from symfonic_cli.stores.envelope_rows import ABSENT

    if kind is None:
        return ABSENT
    if kind in ("array", "object") or text is None:
        return _PLACEHOLDER[kind]
    from symfonic_cli.metadata_json import loads

    return loads(text)  # rows beyond its limits never get here (_PYTHON_ONLY)
