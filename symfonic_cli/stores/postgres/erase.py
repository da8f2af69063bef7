"""PostgreSQL stores: thread erase: plan, cascade, delete and verify."""

from __future__ import annotations

from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.stores._common import quoted_identifier
from symfonic_cli.stores.postgres._common import (
    _connect_error,
    _conninfo,
    _translate_errors,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan


class PostgresErase:
    """Thread erase: plan, cascade, delete and verify."""

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
        if found:
            listed = ", ".join(f"'{n}' on '{t}'" for n, t in found[:5])  # escaped where printed
            more = f" and {len(found) - 5} more" if len(found) > 5 else ""
            raise StoreError(
                f"{self.location.display} has triggers or rules on the tables an erase deletes from ({listed}{more}); "
                "they would run inside the erase and could change other threads: refused, nothing was deleted",
                hint="drop or disable them (the LangGraph saver creates none), or erase with the application's own tooling",
            )

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
        from symfonic_cli.model.erase import ThreadErasePlan

        counts = self._counts(key, extra)
        first, last = self.conn.execute(
            f"SELECT min(checkpoint_id), max(checkpoint_id) FROM checkpoints WHERE {self._key_equals}", (key,)
        ).fetchone()
        return ThreadErasePlan(key, counts, first, last)

    @_translate_errors
    def erase_thread(self, key: str, extra: tuple["ExtraTable", ...], *, between=None, expected=None, idle_before=None) -> dict[str, int]:
        from psycopg import sql

        from symfonic_cli.model.erase import check_against_plan, check_still_idle

        deleted: dict[str, int] = {}
        with self.conn.transaction():  # any exception rolls everything back
            if idle_before is not None:
                # A checkpoint committed after this read is deleted too and fails the plan check.
                last = self.conn.execute(
                    sql.SQL("SELECT max(checkpoint_id) FROM checkpoints WHERE " + self._key_equals), (key,)
                ).fetchone()[0]
                check_still_idle(key, last, idle_before)
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



def _ident(name: str):
    # Names are validated identifiers already (erase_plan); "schema.table" is allowed.
    from psycopg import sql

    return sql.Identifier(*name.split("."))


