"""What the PostgreSQL backend's sections share: errors, constants and small helpers."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.stores._common import error_translators
from symfonic_cli.threadkey import prefix_upper_bound

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


ITERSIZE = 500

# The ordered form (clock.is_ordered_id) in three tests an id, a fraction of a regex's cost (2.6x
# as much in the page's scan): 36 characters with the dashes and the version 6 where they belong;
# bytes among the lowercase hex digits and "-"; no fifth dash (in a digit's place).
_SHAPE = "________-____-6___-____-____________"
_HEX_DASH = "decode('2d30313233343536373839616263646566', 'hex')"
# "%%": a statement with parameters reads it as "%"; one without keeps "%%", which LIKE reads the same.
_FIVE_DASHES = "%%-%%-%%-%%-%%-%%"


def is_ordered_id(column: str) -> str:
    """SQL true exactly when ``column`` (an id, text) is in the ordered form: the ids
    ``clock.ORDERED_ID_REGEX`` accepts (tests/stores/test_postgres_ordered_id.py), NULL for NULL."""
    c = f'{column} COLLATE "C"'
    return f"({c} LIKE '{_SHAPE}' AND btrim(textsend({c}), {_HEX_DASH}) = ''::bytea AND {c} NOT LIKE '{_FIVE_DASHES}')"

# libc locales whose order is the byte order (code point order in UTF-8).
_C_LOCALES = {"C", "POSIX", "C.UTF-8", "C.utf8"}


def byte_order(coll: dict[str, Any], db: dict[str, Any]) -> bool:
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


def _store_error(location: StoreLocation, exc: BaseException) -> StoreError:
    import psycopg.errors as pe

    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, pe.InsufficientPrivilege):
        return StoreError(
            scrub(f"missing privilege on {location.display}: {text}", location),
            hint="inspecting needs SELECT on checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations",
        )
    if isinstance(exc, pe.LockNotAvailable):  # lock_timeout (--lock-timeout) expired: rolled back
        from symfonic_cli.errors import ThreadBusy

        return ThreadBusy(f"busy: another session held a lock on the thread's rows past the lock timeout on {location.display}; "
                          "rolled back, nothing changed")
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


def _bytes(value: Any) -> Any:
    return bytes(value) if isinstance(value, (memoryview, bytearray)) else value


class PostgresSection:
    """What the PostgreSQL store's sections (read, state, erase, ...) share: the connection and
    the schema facts ``PostgresStore`` sets when it opens, and the helpers built on them."""

    open_warnings: tuple[str, ...] | list[str] = ()  # the driver's warnings while opening

    writes_replay_order = "sorted"  # the saver replays writes in writes_sort_key order
    conn: Any  # psycopg.Connection
    location: StoreLocation
    writable: bool
    schema: str | None  # the schema the checkpoint tables are read from
    has_task_path: bool  # checkpoint_writes.task_path exists
    connect_timeout: float
    _c_collation: bool  # thread_id's collation sorts in byte order (a key range is a prefix)
    _key_equals: str  # the key condition: bytewise under a nondeterministic collation
    _keys_exact: bool = True  # every thread_id column's collation is deterministic: "=" is byte equality
    _cursors: int
    _erased: set[str]  # cascade tables an erase deleted from (for VACUUM)

    def connection_lost(self) -> bool:
        # psycopg marks the connection closed once the server has ended it (pg_terminate_backend,
        # a restart); nothing is sent to find out.
        return bool(self.conn.closed)

    def _roll_back_open(self) -> None:
        """After a failure inside a hand-run transaction (BEGIN sent in a pipeline): roll it back if
        it is still open; a lost connection is the server's to roll back."""
        from psycopg.pq import TransactionStatus

        conn = self.conn
        if not conn.closed and conn.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
            try:
                conn.execute("ROLLBACK")
            except Exception:
                pass  # the connection is gone: the server rolls the transaction back

    def _stream(self, sql: str, params: Any, *, jit: bool = True, itersize: int = ITERSIZE) -> Iterator[tuple]:
        """Rows of a query through a server-side cursor: memory stays flat however many there are.
        ``jit`` False: without the server's JIT compilation for this query (compiling a query of
        many expressions cost seconds more than it gave back, at every store size measured).
        ``itersize``: rows a round trip (small rows of a whole-table pass take more)."""
        self._cursors += 1
        with self.conn.transaction():
            if not jit:
                self.conn.execute("SET LOCAL jit = off")
            with self.conn.cursor(name=f"symfonic_{self._cursors}") as cur:
                cur.itersize = itersize
                cur.execute(sql, params)
                yield from cur

    def _key_is(self, column: str = "thread_id", value: str = "%s") -> str:
        """The one comparison of a key column with a key, byte for byte, that every read of a
        thread uses; its parameters are ``_key_args(key)`` (none when ``value`` is another key
        column, a join). Under a deterministic collation (C, libc, deterministic ICU) "=" is byte
        equality. Under a nondeterministic one (case-insensitive ICU) "=" folds ``acme:_:bob`` into
        ``ACME:_:BOB``: the column's own "=" lets its index find the candidates and COLLATE "C"
        keeps the exact key (COLLATE "C" alone cannot use the column's index: a scan)."""
        if self._keys_exact:
            return f"{column} = {value}"
        return f'({column} = {value} AND {column} COLLATE "C" = {value})'

    def _key_args(self, key: str) -> tuple[str, ...]:
        return (key,) if self._keys_exact else (key, key)

    def _key_grouped(self, column: str = "thread_id") -> str:
        """A key column as GROUP BY, DISTINCT and PARTITION BY take it (and as selected beside
        them): in bytes under a nondeterministic collation, whose groups would merge two people."""
        return column if self._keys_exact else f'{column} COLLATE "C"'

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


def on_one_snapshot(conn: Any, conninfo: str, sessions: list[list[tuple[str, Any]]]) -> list[list[list[tuple]]] | None:
    """Each session's statements (in order; their rows fetched whole), the sessions at once and
    all on one snapshot: the first on ``conn`` (idle before, left idle after), the others on new
    read-only sessions in threads, which import the snapshot ``conn`` exports (pg_export_snapshot:
    exactly the rows ``conn`` sees). JIT off in all (see PostgresSection._stream). None when the
    snapshot cannot be exported, or a session cannot be had or cannot take it (too many
    connections, a pooler): the caller reads in ``conn`` alone."""
    import re
    import threading

    import psycopg

    done: list[list[list[tuple]] | None] = [None] * len(sessions)
    failed: list[BaseException] = []
    helpers: list[Any] = []

    def run(c: Any, i: int) -> None:
        c.execute("SET LOCAL jit = off")
        done[i] = [c.execute(sql, params).fetchall() for sql, params in sessions[i]]

    def helper(i: int, snapshot: str, search_path: str) -> None:
        try:
            with psycopg.connect(conninfo, autocommit=True, prepare_threshold=None) as h:
                helpers.append(h)
                h.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                h.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
                h.execute("SELECT set_config('search_path', %s, true)", (search_path,))
                run(h, i)
                h.execute("ROLLBACK")
        except Exception as exc:  # the caller reads in one session
            failed.append(exc)

    try:
        with conn.transaction():
            # The exported snapshot is the one every statement of this transaction reads.
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            try:
                snapshot, search_path = conn.execute("SELECT pg_export_snapshot(), current_setting('search_path')").fetchone()
            except psycopg.Error:
                raise _NoSnapshot from None
            if not re.fullmatch(r"[0-9A-Fa-f-]+", str(snapshot)):
                raise _NoSnapshot
            threads = [threading.Thread(target=helper, args=(i, snapshot, search_path), daemon=True) for i in range(1, len(sessions))]
            for t in threads:
                t.start()
            try:
                run(conn, 0)
            finally:
                if done[0] is None:  # interrupted or failed: the other sessions stop too
                    for h in list(helpers):
                        try:
                            h.cancel()
                        except Exception:  # a session already gone
                            pass
                for t in threads:
                    t.join()
    except _NoSnapshot:  # rolled back: nothing was read
        return None
    if failed:
        return None
    return [d for d in done if d is not None]


class _NoSnapshot(Exception):
    """The server would not export the transaction's snapshot."""
