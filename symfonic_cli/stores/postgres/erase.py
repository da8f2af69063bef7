"""PostgreSQL stores: thread erase: plan, cascade, delete and verify."""

from __future__ import annotations

from typing import Any

from symfonic_cli.clock import joined_ordered
from symfonic_cli.errors import StoreError
from symfonic_cli.stores._common import quoted_identifier, refuse_stored_code
from symfonic_cli.stores.postgres._common import (
    PostgresSection,
    _connect_error,
    _conninfo,
    _translate_errors,
    is_ordered_id,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan

# The re-check of a sweep (model/erase.py check_still_idle): the greatest id in the ordered form
# (clock.is_ordered_id), and [id, ts] of every other checkpoint.
_ORDERED = is_ordered_id("checkpoint_id")
_RECHECK = (f"max(checkpoint_id) FILTER (WHERE {_ORDERED}) AS id, "
            f"jsonb_agg(jsonb_build_array(checkpoint_id, checkpoint ->> 'ts')) FILTER (WHERE NOT {_ORDERED}) AS odd")


class _SecondReport:
    """A logging filter: psycopg logs "error ignored terminating <psycopg.Pipeline [BAD]>" when
    a pipeline block fails and closing the pipeline fails as well (the backend was terminated,
    the connection lost). The block's own error is reported (one line, exit 4); this is the same
    failure told again, so it is dropped."""

    def filter(self, record) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith("error ignored terminating"))


class _pipeline_errors_once:
    """The filter on psycopg's logger for the duration of one thread's pipeline, not longer."""

    def __enter__(self) -> None:
        import logging

        self._logger, self._filter = logging.getLogger("psycopg"), _SecondReport()
        self._logger.addFilter(self._filter)

    def __exit__(self, *exc) -> None:
        self._logger.removeFilter(self._filter)


class PostgresErase(PostgresSection):
    """Thread erase: plan, cascade, delete and verify."""

    # -- erase (protocol docstrings in stores/protocol.py)

    _ERASE_CORE = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")  # delete order

    def _cascade(self, key: str, extra: tuple["ExtraTable", ...]) -> list[tuple[str, Any, tuple]]:
        """(name, WHERE clause or None, params) per cascade table; None: the table cannot hold ``key``."""
        from psycopg import sql

        out: list[tuple[str, Any, tuple]] = []
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
            reg = c.execute("SELECT to_regclass(%s)::oid", (quoted_identifier(table.name),)).fetchone()[0]
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
        self._refuse_triggers(c, [quoted_identifier(t.name) for t in extra] + list(self._ERASE_CORE))

    def _refuse_triggers(self, c: Any, regclasses: list[str]) -> None:
        """Triggers (not disabled) and rewrite rules on a table the erase deletes from would run the
        store's own code inside each thread's transaction and could delete another thread's rows,
        unseen by the plan check (it counts the statement's own rows): refused before anything is
        deleted. Turning them off needs a superuser (session_replication_role); the saver creates none.
        Foreign keys' own triggers (tgisinternal) are the schema's declared cascades and stay."""
        found = c.execute(
            "SELECT t.tgname::text, c.relname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND t.tgenabled <> 'D' AND t.tgrelid = ANY(%s::regclass[]) "
            "UNION ALL SELECT r.rulename::text, c.relname::text FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class "
            "WHERE r.rulename <> '_RETURN' AND r.ev_class = ANY(%s::regclass[]) ORDER BY 1",
            (regclasses, regclasses),
        ).fetchall()
        refuse_stored_code(self.location.display, found, "triggers or rules",
                           "drop or disable them (the LangGraph saver creates none), or erase with the application's own tooling")

    _run_locked = False
    # The run lock: a session advisory lock on (symfonic's key, the schema), held until released or disconnected.
    _RUN_KEYS = ("hashtext('symfonic run lock')", "hashtext(coalesce(%(schema)s, current_schema()))")

    @_translate_errors
    def take_run_lock(self, operation: str) -> str | None:
        """A session advisory lock for the run (one per database and schema); the holder names itself
        in ``application_name``, which a second runner reads from pg_stat_activity."""
        from symfonic_cli.stores.runlock import holder_record

        args = {"schema": self.schema}
        k1, k2 = self._RUN_KEYS
        if self.conn.execute(f"SELECT pg_try_advisory_lock({k1}, {k2})", args).fetchone()[0]:
            r = holder_record(operation)
            from symfonic_cli.stores.runlock import command_of

            name = f"symfonic {command_of(operation)} pid {r['pid']} on {r['host']}"[:63]  # NAMEDATALEN
            self.conn.execute("SELECT set_config('application_name', %s, false)", (name,))
            self._run_locked = True
            return None
        row = self.conn.execute(
            "SELECT a.application_name, a.pid, a.backend_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            f"AND l.classid = ({k1})::oid AND l.objid = ({k2})::oid", args).fetchone()
        if row is None:  # let go meanwhile: the caller tries again
            return "another session holding symfonic's run lock (it just ended)"
        name, pid, since = row
        return f"{name or 'a session'} (server pid {pid}, connected since {since.isoformat() if since else '?'})"

    @_translate_errors
    def release_run_lock(self) -> None:
        if self._run_locked and not self.conn.closed:
            self._run_locked = False
            self.conn.execute(f"SELECT pg_advisory_unlock({', '.join(self._RUN_KEYS)})", {"schema": self.schema})

    @_translate_errors
    def set_lock_timeout(self, seconds: float) -> None:
        # The session's lock_timeout: every statement of every thread's transaction waits at most this long.
        self.conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{max(1, round(seconds * 1000))}ms",))

    _wal_seen: list[tuple[float, float]] | None = None  # (monotonic time, WAL position) as replica_lag saw them

    _standbys: set[str] | None = None  # the standbys streaming when the run first asked (None: not asked yet)

    @_translate_errors
    def replica_lag(self) -> tuple[float, str] | None:
        """The most lagging standby's replay lag in seconds, and its name; None without standbys.
        Measured from the primary: ``pg_stat_replication.replay_lag``, and since that stays at its
        last value while a standby's replay is paused or stuck, also from WAL positions: the time
        since this run first saw the primary at a position (``pg_current_wal_lsn``, sampled at each
        call, right after each commit) the standby has not replayed (``replay_lsn``). A standby that
        was streaming at the first call and is gone, or whose replay position is not reported, has
        no lag to read: ``inf``, with what is wrong (the run waits for it)."""
        import math
        import time

        from symfonic_cli.errors import StoreError

        rows = self.conn.execute(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8, r.application_name, r.client_addr::text, "
            "pg_wal_lsn_diff(r.replay_lsn, '0/0')::float8, extract(epoch FROM r.replay_lag)::float8, r.pid IS NULL, r.state IS NULL "
            "FROM (SELECT 1) AS one LEFT JOIN pg_stat_replication r ON true").fetchall()
        now = time.monotonic()
        seen = self._wal_seen = self._wal_seen or []
        if not seen or rows[0][0] > seen[-1][1]:
            seen.append((now, rows[0][0]))
        standbys = {} if rows[0][5] else {f"{r[1] or 'standby'} at {r[2] or 'a local socket'}": r for r in rows}
        if self._standbys is None:
            self._standbys = set(standbys)
        worst: tuple[float, str] | None = None
        gone = sorted(self._standbys - set(standbys))
        if gone:
            worst = (math.inf, f"{gone[0]} is not connected (it was streaming when the run started)")
        for name, (_, _, _, replayed, lag, _, hidden) in standbys.items():
            if hidden:
                raise StoreError(f"{self.location.display}: the role cannot read its standbys' positions in pg_stat_replication",
                                 hint="grant it pg_monitor, or run without --max-replica-lag")
            if replayed is None:
                lag = math.inf
                name = f"{name} does not report its replay position"
            else:
                behind = next((now - t for t, lsn in seen if lsn > replayed), 0.0)
                lag = max(lag or 0.0, behind)
            if worst is None or lag > worst[0]:
                worst = (lag, name)
        oldest = min((r[3] for r in standbys.values() if r[3] is not None), default=None)
        if oldest is not None:  # positions every standby replayed are no longer needed
            self._wal_seen = [s for s in seen[:-1] if s[1] > oldest] + seen[-1:]
        return worst

    def store_identity(self) -> dict[str, Any]:
        info = self.conn.info
        return {"kind": "postgres", "host": info.host, "port": int(info.port), "database": info.dbname, "schema": self.schema}

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
    def thread_keys_with_prefix(self, prefix: str, *, limit: int | None = None) -> list[str]:
        where, params = self._prefix_where(prefix) if prefix else ("", [])
        if limit is not None:
            # Each table's first keys in its own index order (any matching keys will do for a
            # TAB), then the union in byte order: a bounded index walk, not every key.
            rows = self.conn.execute(
                f"SELECT t FROM ((SELECT DISTINCT thread_id AS t FROM checkpoints {where} ORDER BY 1 LIMIT %s) "
                f"UNION (SELECT DISTINCT thread_id FROM checkpoint_writes {where} ORDER BY 1 LIMIT %s)) AS k "
                'ORDER BY t COLLATE "C" LIMIT %s',
                [*params, limit, *params, limit, limit],
            )
            return [str(r[0]) for r in rows]
        rows = self.conn.execute(
            f"SELECT t FROM (SELECT thread_id AS t FROM checkpoints {where} "
            f"UNION SELECT thread_id FROM checkpoint_writes {where}) AS k "
            'ORDER BY t COLLATE "C"',
            params * 2,
        )
        return [str(r[0]) for r in rows]

    def _counts(self, key: str, extra: tuple["ExtraTable", ...], *, extra_only: bool = False) -> dict[str, int]:
        from psycopg import sql

        counts = {}
        cascade = self._cascade(key, extra)
        for name, where, params in cascade[: len(extra)] if extra_only else cascade:
            if where is None:
                counts[name] = 0
                continue
            stmt = sql.SQL("SELECT count(*) FROM {} WHERE {}").format(_ident(name), where)
            counts[name] = self.conn.execute(stmt, params).fetchone()[0]
        return counts

    @_translate_errors
    def erase_plan(self, key: str, extra: tuple["ExtraTable", ...]) -> "ThreadErasePlan":
        from symfonic_cli.model.erase import ThreadErasePlan

        counts = self._counts(key, extra)
        # Every id tested, not the least and greatest alone (stores/activity.py reads the times).
        n, first, last, joined = self.conn.execute(
            f"SELECT count(*), min(checkpoint_id), max(checkpoint_id), string_agg(checkpoint_id, ',') FROM checkpoints WHERE {self._key_equals}",
            (key,),
        ).fetchone()
        return ThreadErasePlan(key, counts, first, last, odd=bool(n) and not joined_ordered(joined, n))

    @_translate_errors
    def erase_plans(self, keys: list[str], extra: tuple["ExtraTable", ...]) -> list["ThreadErasePlan"]:
        """``erase_plan`` of each key, the checkpoint tables of the whole batch counted in ONE
        statement (an index seek per key and table, one round trip); declared extra tables, whose
        filters differ per key, are counted per key as ``erase_plan`` does."""
        from symfonic_cli.model.erase import ThreadErasePlan

        if not keys:
            return []
        equals = self._key_equals.replace("%s", "k.key")
        writes, blobs, _ = self._ERASE_CORE
        rows = self.conn.execute(
            f"SELECT (SELECT count(*) FROM {writes} WHERE {equals}), (SELECT count(*) FROM {blobs} WHERE {equals}), "
            "c.n, c.lo, c.hi, c.ids FROM unnest(%s::text[]) WITH ORDINALITY AS k(key, i) CROSS JOIN LATERAL "
            f"(SELECT count(*) AS n, min(checkpoint_id) AS lo, max(checkpoint_id) AS hi, string_agg(checkpoint_id, ',') AS ids "
            f"FROM checkpoints WHERE {equals}) AS c "
            "ORDER BY k.i",
            (list(keys),),
        ).fetchall()
        plans = []
        for key, (n_writes, n_blobs, n_checkpoints, first, last, joined) in zip(keys, rows, strict=True):
            counts = self._counts(key, extra, extra_only=True) if extra else {}
            counts.update({writes: n_writes, blobs: n_blobs, "checkpoints": n_checkpoints})
            plans.append(ThreadErasePlan(key, counts, first, last, odd=bool(n_checkpoints) and not joined_ordered(joined, n_checkpoints)))
        return plans

    @_translate_errors
    def erase_thread(self, key: str, extra: tuple["ExtraTable", ...], *, between=None, expected=None, idle_before: str | None = None) -> dict[str, int]:
        from psycopg import sql

        from symfonic_cli.model.erase import check_against_plan, check_still_idle

        deleted: dict[str, int] = {}
        with self.conn.transaction():  # any exception rolls everything back
            if idle_before is not None:
                # A checkpoint committed after this read is deleted too and fails the plan check.
                last, odd = self.conn.execute(
                    sql.SQL(f"SELECT {_RECHECK} FROM checkpoints WHERE " + self._key_equals), (key,)
                ).fetchone()
                check_still_idle(key, last, idle_before, odd or ())
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
    def erase_verified(self, key: str, extra: tuple["ExtraTable", ...], *, expected=None, idle_before: str | None = None) -> tuple[dict[str, int], dict[str, int]]:
        """``erase_thread`` then ``remaining_rows`` with the same guarantees, in two round trips
        (psycopg pipeline mode) and four statements instead of about ten:

        1. ``BEGIN``, then one statement whose CTEs read the thread's greatest checkpoint id and
           delete its rows from the three checkpoint tables (declared extra tables first, each
           with its own DELETE in the declared order, the re-check then a statement of its own
           before them). Its CTEs share one snapshot: the re-check reads the rows before any is
           deleted. Nothing is committed yet; here the last activity is checked against the
           cut-off (ThreadActiveError) and the rows deleted against the plan (StoreError
           "changed since the plan"): either rolls the thread back.
        2. ``COMMIT``, then the verification counts: a statement after the COMMIT in the same
           round trip, so it reads the committed state; it is not run when the COMMIT fails.
        """
        from psycopg import sql

        from symfonic_cli.model.erase import check_against_plan, check_still_idle

        conn = self.conn
        core = self._core_statements()
        extras = self._cascade(key, extra)[: len(extra)] if extra else []
        recheck_alone = idle_before is not None and bool(extra)
        verify_sql, verify_params = core["verify"], [key] * 3
        if extras:
            counts = [sql.SQL("0") if where is None else sql.SQL("(SELECT count(*) FROM {} WHERE {})").format(_ident(name), where)
                      for name, where, _ in extras]
            verify_sql = sql.SQL("SELECT {}, ").format(sql.SQL(", ").join(counts)).as_string(conn) + verify_sql[len("SELECT "):]
            verify_params = [v for _, where, params in extras if where is not None for v in params] + verify_params
        deleted: dict[str, int] | None = None
        try:
            with _pipeline_errors_once(), conn.pipeline() as pipe:
                conn.execute("BEGIN")
                recheck = conn.execute(core["recheck"], (key,)) if recheck_alone else None
                cursors = [(name, None if where is None else conn.execute(sql.SQL("DELETE FROM {} WHERE {}").format(_ident(name), where), params))
                           for name, where, params in extras]
                with_last = idle_before is not None and not recheck_alone
                erase = conn.execute(core["erase_recheck" if with_last else "erase"], [key] * (4 if with_last else 3))
                pipe.sync()  # round trip 1: nothing is committed yet
                last, odd, n_writes, n_blobs, n_checkpoints = erase.fetchone()
                if recheck is not None:
                    last, odd = recheck.fetchone()
                if idle_before is not None:
                    check_still_idle(key, last, idle_before, odd or ())
                rows = {name: (0 if cur is None else cur.rowcount) for name, cur in cursors}
                rows.update({"checkpoint_writes": n_writes, "checkpoint_blobs": n_blobs, "checkpoints": n_checkpoints})
                check_against_plan(expected, rows, extra)
                deleted = rows
                conn.execute("COMMIT")
                verify = conn.execute(verify_sql, verify_params)
                pipe.sync()  # round trip 2: the commit, then the fresh counts
                remaining = dict(zip(deleted, verify.fetchone(), strict=True))
        except BaseException:
            if deleted is not None:  # the COMMIT was sent: VACUUM may have rows to reclaim
                self._erased.update(name for name, n in deleted.items() if n)
            self._roll_back_open()
            raise
        self._erased.update(name for name, n in deleted.items() if n)
        return deleted, remaining

    def _core_statements(self) -> dict[str, str]:
        """The checkpoint tables' erase statements, built once per store (the key comparison
        depends on the store's collation); psycopg prepares each on the server once."""
        cached = getattr(self, "_core_sql", None)
        if cached is not None and cached[0] == self._key_equals:
            return cached[1]
        eq = self._key_equals
        writes, blobs, checkpoints = self._ERASE_CORE
        deletes = (f"w AS (DELETE FROM {writes} WHERE {eq} RETURNING 1), b AS (DELETE FROM {blobs} WHERE {eq} RETURNING 1), "
                   f"c AS (DELETE FROM {checkpoints} WHERE {eq} RETURNING 1) ")
        counts = "(SELECT count(*) FROM w), (SELECT count(*) FROM b), (SELECT count(*) FROM c)"
        statements = {
            "recheck": f"SELECT {_RECHECK} FROM {checkpoints} WHERE {eq}",
            "erase": f"WITH {deletes}SELECT NULL::text, NULL::jsonb, {counts}",
            "erase_recheck": f"WITH last AS (SELECT {_RECHECK} FROM {checkpoints} WHERE {eq}), {deletes}"
                             f"SELECT (SELECT id FROM last), (SELECT odd FROM last), {counts}",
            "verify": f"SELECT (SELECT count(*) FROM {writes} WHERE {eq}), (SELECT count(*) FROM {blobs} WHERE {eq}), (SELECT count(*) FROM {checkpoints} WHERE {eq})",
        }
        self._core_sql = (eq, statements)
        return statements

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


def _ident(name: str):
    # Names are validated identifiers already (erase_plan); "schema.table" is allowed.
    from psycopg import sql

    return sql.Identifier(*name.split("."))


