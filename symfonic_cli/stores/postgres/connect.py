"""PostgreSQL stores written by ``langgraph-checkpoint-postgres``.

Tables ``checkpoints`` (checkpoint as JSONB, primitive channel values inline), ``checkpoint_blobs``
(other channel values, keyed by channel and version), ``checkpoint_writes`` and
``checkpoint_migrations``. Inspecting sessions are read-only on the server's side
(``default_transaction_read_only=on``), need nothing but SELECT on the four tables, and never run
the saver's ``setup()`` or migrations. Counting and listing happen in SQL; long results stream
through server-side cursors."""

from __future__ import annotations

from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation
from symfonic_cli.stores._common import HeldMessages, SupportsWith
from symfonic_cli.stores.activity import ExactActivity
from symfonic_cli.stores.postgres._common import (
    TABLES,
    _connect_error,
    _conninfo,
    _store_error,
    _translate_errors,
    byte_order,
)
from symfonic_cli.stores.postgres.compat import PostgresCompat
from symfonic_cli.stores.postgres.copy import PostgresCopy
from symfonic_cli.stores.postgres.rewind import PostgresRewind
from symfonic_cli.stores.postgres.erase import PostgresErase
from symfonic_cli.stores.postgres.history import PostgresHistory
from symfonic_cli.stores.postgres.prune import PostgresPrune
from symfonic_cli.stores.postgres.usage import PostgresUsage
from symfonic_cli.stores.postgres.read import PostgresRead
from symfonic_cli.stores.postgres.search import PostgresSearch
from symfonic_cli.stores.postgres.state import PostgresState

# The last migration of langgraph-checkpoint-postgres (2.x, 3.x): checkpoint_writes.task_path.
MIGRATION_VERSION = 9


def open_store(
    location: StoreLocation,
    *,
    writable: bool = False,
    connect_timeout: float = 10,
    pg_schema: str | None = None,
    init_target: bool = False,
) -> "PostgresStore":
    try:
        import psycopg
    except ModuleNotFoundError:
        raise StoreError(
            "PostgreSQL support is not installed", hint='pip install "symfonic[postgres]"'
        ) from None

    conninfo = _conninfo(location, writable=writable, connect_timeout=connect_timeout)
    if writable and init_target:
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


class PostgresStore(ExactActivity, PostgresRead, PostgresSearch, PostgresHistory, PostgresCompat, PostgresState, PostgresErase, PostgresRewind, PostgresCopy, PostgresPrune, PostgresUsage, HeldMessages, SupportsWith):
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
        # The run lock is let go before the session ends: the server ends a closed session's locks
        # after close() returns, and a run started right after (a script's next prune) would be refused.
        try:
            if self._run_locked and not self.conn.closed:
                if self.conn.info.transaction_status:  # not idle: a run stopped mid-transaction
                    self.conn.rollback()
                self.release_run_lock()
        except Exception:  # a broken session: it is going anyway, and its lock with it
            pass
        finally:
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
        self._c_collation = byte_order(coll, db)
        # A nondeterministic collation (case- or accent-insensitive ICU) makes "=" match other
        # keys: the erase then compares keys in bytes.
        exact = c.execute(
            "SELECT coalesce(bool_and((to_jsonb(k) ->> 'collisdeterministic')::boolean), true) FROM pg_attribute a JOIN pg_collation k ON k.oid = a.attcollation "
            "WHERE a.attrelid IN ('checkpoints'::regclass, 'checkpoint_blobs'::regclass, 'checkpoint_writes'::regclass) "
            "AND a.attname = 'thread_id'"
        ).fetchone()[0]
        self._keys_exact = bool(exact)
        self._key_equals = "thread_id = %s" if exact else 'thread_id COLLATE "C" = %s'
        self.has_task_path = bool(
            c.execute(
                "SELECT 1 FROM pg_attribute WHERE attrelid = 'checkpoint_writes'::regclass "
                "AND attname = 'task_path' AND NOT attisdropped"
            ).fetchone()
        )
