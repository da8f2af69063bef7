"""PostgreSQL stores: thread prune's primitives (stores/_prune.py runs the rules on them).

The statements follow PostgresSaver.prune's (langgraph-checkpoint-postgres 3.2): rows looked up by
primary key, one REPEATABLE READ transaction per thread, writes deleted by the checkpoints deleted,
blobs deleted when a deleted checkpoint referenced them and no kept checkpoint of the namespace does.
"""

from __future__ import annotations

from contextlib import contextmanager
from symfonic_cli.errors import StoreError
from symfonic_cli.stores._prune import RulePrune
from symfonic_cli.stores.postgres._common import PostgresSection, _translate_errors

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.prune import PruneDecision

_TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")


class PostgresPrune(RulePrune, PostgresSection):
    """Thread prune: facts, outline, measure, kept state, apply; compact."""

    def _pr_tables(self) -> tuple[str, ...]:
        return _TABLES

    def _k(self) -> str:
        return self._key_equals  # type: ignore[attr-defined]

    @_translate_errors
    def prune_prepare(self, *, dry_run: bool = False) -> list[str]:
        """erase's checks (writable primary, DELETE on the three tables, no triggers or rules), and
        UPDATE on checkpoints (a kept checkpoint whose parent goes is left with no parent)."""
        self.erase_prepare((), dry_run=dry_run)  # type: ignore[attr-defined]
        if self.writable:  # type: ignore[attr-defined]
            ok = self.conn.execute("SELECT has_table_privilege(to_regclass('checkpoints'), 'UPDATE')").fetchone()[0]  # type: ignore[attr-defined]
            if not ok:
                raise StoreError(f"missing privilege on {self.location.display}: no UPDATE on checkpoints: nothing was deleted")  # type: ignore[attr-defined]
        return []

    @contextmanager
    def _pr_transaction(self):
        with self.conn.transaction():  # type: ignore[attr-defined]
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # type: ignore[attr-defined]
            yield

    @_translate_errors
    def _pr_facts(self, key: str):
        from symfonic_cli.model.prune import TASKS, PruneCheckpoint

        rows = self.conn.execute(  # type: ignore[attr-defined]
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata -> 'parents' ->> '', "
            "CASE WHEN jsonb_typeof(metadata -> 'counters_since_delta_snapshot') = 'object' "
            "THEN ARRAY(SELECT jsonb_object_keys(metadata -> 'counters_since_delta_snapshot')) END, "
            f"metadata ? 'delta_writes_versioned' FROM checkpoints WHERE {self._k()}", (key,), prepare=False).fetchall()
        cps = [PruneCheckpoint(ns, cid, parent, root, frozenset(delta or ()), bool(js)) for ns, cid, parent, root, delta, js in rows]
        sends = {(ns, cid) for ns, cid in self.conn.execute(  # type: ignore[attr-defined]
            f"SELECT DISTINCT checkpoint_ns, checkpoint_id FROM checkpoint_writes WHERE {self._k()} AND channel = %s", (key, TASKS))}
        return cps, sends

    @_translate_errors
    def _pr_outline(self, key: str, ns: str, cid: str):
        # A channel holds a value where get_tuple finds one: inline, or a blob (not 'empty') at its version.
        row = self.conn.execute(  # type: ignore[attr-defined]
            "SELECT CASE WHEN jsonb_typeof(c.checkpoint -> 'v') = 'number' THEN (c.checkpoint ->> 'v')::numeric::int END, "
            "ARRAY(SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_values') = 'object' "
            "THEN c.checkpoint -> 'channel_values' ELSE '{}'::jsonb END)) || ARRAY(SELECT b.channel FROM checkpoint_blobs b, "
            "jsonb_each_text(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' THEN c.checkpoint -> 'channel_versions' "
            "ELSE '{}'::jsonb END) v WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key "
            "AND b.version = v.value AND b.type <> 'empty') "
            f"FROM checkpoints c WHERE c.{self._k()} AND c.checkpoint_ns = %s AND c.checkpoint_id = %s", (key, ns, cid)).fetchone()
        return (row[0], frozenset(row[1] or ())) if row else None

    @_translate_errors
    def _pr_head(self, key: str, cid: str):
        from symfonic_cli.codec.msgpack_head import channel_blob_count

        row = self.conn.execute(  # type: ignore[attr-defined]
            "SELECT c.checkpoint ->> 'ts', (SELECT b.type || ':' FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id "
            "AND b.checkpoint_ns = '' AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'), "
            "(SELECT substring(b.blob from 1 for 9) FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id "
            "AND b.checkpoint_ns = '' AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages') "
            f"FROM checkpoints c WHERE c.{self._k()} AND c.checkpoint_ns = '' AND c.checkpoint_id = %s", (key, cid)).fetchone()
        if not row:
            return None, None
        count = None
        if row[1] == "msgpack:" and row[2] is not None:
            try:
                count = channel_blob_count(bytes(row[2]))
            except Exception:
                count = None
        return row[0], count

    def _garbage(self, key: str, ns: str, deleted: list[str], kept: set[str]) -> dict[str, list[str]]:
        """Blobs a deleted checkpoint references and no kept checkpoint of the namespace does, by channel."""
        versions = self.conn.execute(  # type: ignore[attr-defined]
            "SELECT c.checkpoint_id = ANY(%s), v.key, v.value FROM checkpoints c "
            "CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' "
            "THEN c.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) AS v "
            f"WHERE c.{self._k()} AND c.checkpoint_ns = %s", (deleted, key, ns), prepare=False).fetchall()
        referenced = {(ch, ver) for gone, ch, ver in versions if not gone}
        garbage: dict[str, list[str]] = {}
        for gone, ch, ver in versions:
            if gone and (ch, ver) not in referenced and ver not in garbage.get(ch, ()):
                garbage.setdefault(ch, []).append(ver)
        return garbage

    @_translate_errors
    def _pr_measure(self, key: str, d: PruneDecision):
        c, k = self.conn, self._k()  # type: ignore[attr-defined]
        rows = dict.fromkeys(_TABLES, 0)
        size = 0
        if d.drop:
            calls = list(d.drop)
            for table, measure in (("checkpoint_writes", "octet_length(blob)"), ("checkpoint_blobs", "octet_length(blob)"),
                                   ("checkpoints", "pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0)")):
                n, b = c.execute(f"SELECT count(*), coalesce(sum({measure}), 0) FROM {table} WHERE {k} AND checkpoint_ns = ANY(%s)",
                                 (key, calls), prepare=False).fetchone()
                rows[table] += n
                size += int(b)
        for ns, ids in d.delete.items():
            if not ids:
                continue
            n, b = c.execute(f"SELECT count(*), coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes WHERE {k} "
                             "AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)", (key, ns, ids), prepare=False).fetchone()
            m, s = c.execute("SELECT count(*), coalesce(sum(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0)), 0) "
                             f"FROM checkpoints WHERE {k} AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)", (key, ns, ids), prepare=False).fetchone()
            rows["checkpoint_writes"] += n
            rows["checkpoints"] += m
            size += int(b) + int(s)
            for channel, versions in self._garbage(key, ns, ids, d.keep[ns]).items():
                n, b = c.execute(f"SELECT count(*), coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE {k} "
                                 "AND checkpoint_ns = %s AND channel = %s AND version = ANY(%s)", (key, ns, channel, versions), prepare=False).fetchone()
                rows["checkpoint_blobs"] += n
                size += int(b)
        return rows, size

    @_translate_errors
    def _pr_kept_state(self, key: str, d: PruneDecision):
        # Digests computed by the server: what get_tuple reads of each kept checkpoint, its writes, and
        # the blobs its versions name (the parent pointer left out: it is what a prune may change).
        c, k = self.conn, self._k()  # type: ignore[attr-defined]
        state = []
        for ns, ids in sorted(d.keep.items()):
            if ns in d.drop:
                continue
            ids = sorted(ids)
            state.append(c.execute(
                "SELECT checkpoint_id, md5(checkpoint::text), md5(coalesce(metadata::text, '')), "
                "(SELECT md5(string_agg(b.channel || ':' || b.version || ':' || b.type || ':' || coalesce(md5(b.blob), '-'), ',' ORDER BY b.channel)) "
                " FROM checkpoint_blobs b, jsonb_each_text(CASE WHEN jsonb_typeof(x.checkpoint -> 'channel_versions') = 'object' "
                " THEN x.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) v "
                " WHERE b.thread_id = x.thread_id AND b.checkpoint_ns = x.checkpoint_ns AND b.channel = v.key AND b.version = v.value), "
                "(SELECT md5(string_agg(w.task_id || ':' || w.idx || ':' || w.channel || ':' || coalesce(w.type, '') || ':' || coalesce(md5(w.blob), '-'), ',' "
                " ORDER BY w.task_id, w.idx)) FROM checkpoint_writes w WHERE w.thread_id = x.thread_id AND w.checkpoint_ns = x.checkpoint_ns "
                " AND w.checkpoint_id = x.checkpoint_id) "
                f"FROM checkpoints x WHERE x.{k} AND x.checkpoint_ns = %s AND x.checkpoint_id = ANY(%s) ORDER BY checkpoint_id",
                (key, ns, ids), prepare=False).fetchall())
        return state

    @_translate_errors
    def _pr_apply(self, key: str, d: PruneDecision) -> dict[str, int]:
        c, k = self.conn, self._k()  # type: ignore[attr-defined]
        rows = dict.fromkeys(_TABLES, 0)
        if d.drop:
            for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
                rows[table] += c.execute(f"DELETE FROM {table} WHERE {k} AND checkpoint_ns = ANY(%s)", (key, list(d.drop)), prepare=False).rowcount
        for ns, ids in d.delete.items():
            kept = sorted(d.keep[ns])
            if ids:
                garbage = self._garbage(key, ns, ids, d.keep[ns])
                rows["checkpoint_writes"] += c.execute(
                    f"DELETE FROM checkpoint_writes WHERE {k} AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)", (key, ns, ids), prepare=False).rowcount
                rows["checkpoints"] += c.execute(
                    f"DELETE FROM checkpoints WHERE {k} AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)", (key, ns, ids), prepare=False).rowcount
                for channel, versions in garbage.items():
                    rows["checkpoint_blobs"] += c.execute(
                        f"DELETE FROM checkpoint_blobs WHERE {k} AND checkpoint_ns = %s AND channel = %s AND version = ANY(%s)",
                        (key, ns, channel, versions), prepare=False).rowcount
            if d.detach.get(ns):
                c.execute(f"UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE {k} AND checkpoint_ns = %s "
                          "AND checkpoint_id = ANY(%s) AND parent_checkpoint_id <> ALL(%s)", (key, ns, d.detach[ns], kept), prepare=False)
        return rows

    # -- --compact

    @_translate_errors
    def table_bytes(self) -> dict[str, int]:
        rows = self.conn.execute(  # type: ignore[attr-defined]
            "SELECT t, pg_total_relation_size(to_regclass(t)) FROM unnest(%s::text[]) AS t", (list(_TABLES),)).fetchall()
        return {t: int(n) for t, n in rows}

    def compact_check(self) -> list[str]:
        return ["--compact: VACUUM (ANALYZE) of the three tables after the last thread makes the space reusable by "
                "PostgreSQL; only VACUUM FULL (not run: it locks the tables) gives it back to the operating system"]

    @_translate_errors
    def compact(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        before = self.table_bytes()
        for table in _TABLES:
            self.conn.execute(f"VACUUM (ANALYZE) {table}")  # type: ignore[attr-defined]  # autocommit: outside a transaction
        return before, self.table_bytes(), []
