"""PostgreSQL stores: thread prune's primitives (stores/_prune.py runs the rules on them).

The statements follow PostgresSaver.prune's (langgraph-checkpoint-postgres 3.2): rows looked up by
primary key, one REPEATABLE READ transaction per thread, writes deleted by the checkpoints deleted,
blobs deleted when a deleted checkpoint referenced them and no kept checkpoint of the namespace does.
"""

from __future__ import annotations

from symfonic_cli.errors import StoreError
from symfonic_cli.stores._prune import RulePrune
from symfonic_cli.stores.postgres._common import PostgresSection, _translate_errors

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.model.prune import PruneDecision

_TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")


class PostgresPrune(RulePrune, PostgresSection):
    """Thread prune: facts, outline, measure, kept state, apply; compact."""

    def _pr_tables(self) -> tuple[str, ...]:
        return _TABLES

    def _k(self) -> str:
        return self._key_equals

    @_translate_errors
    def prune_prepare(self, *, dry_run: bool = False) -> list[str]:
        """erase's checks (writable primary, DELETE on the three tables, no triggers or rules), and
        UPDATE on checkpoints (a kept checkpoint whose parent goes is left with no parent)."""
        self.erase_prepare((), dry_run=dry_run)  # type: ignore[attr-defined]
        if self.writable:
            ok = self.conn.execute("SELECT has_table_privilege(to_regclass('checkpoints'), 'UPDATE')").fetchone()[0]
            if not ok:
                raise StoreError(f"missing privilege on {self.location.display}: no UPDATE on checkpoints: nothing was deleted")
        return []

    def _eq(self, alias: str, rhs: str) -> str:
        """The store's key comparison (exact, or ``COLLATE "C"``) of ``alias.thread_id`` with ``rhs``."""
        return self._k().replace("thread_id", f"{alias}.thread_id").replace("%s", rhs)

    def _facts_sql(self, kept: bool = False) -> str:
        # Every checkpoint of the keys (what the rules need of it), then the (ns, id) holding a
        # __pregel_tasks write: one statement, one round trip, for a page of keys or for one. With
        # ``kept``, one more row (NULL where the others say checkpoint or write) carries the kept
        # state of %(key)s (_kept_sql) read in the same statement. The writes are looked up key by
        # key (LATERAL): no row holds the channel asked for in most stores, so the planner, told it
        # matches one row, would scan every write of the table for a page of keys.
        versions = "jsonb_typeof(c.metadata -> 'counters_since_delta_snapshot') = 'object'"
        tail = f" UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, ({self._kept_sql()}), NULL::text[], NULL::boolean, NULL" if kept else ""
        return (
            "SELECT k.key, true, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.metadata -> 'parents' ->> '', "
            f"CASE WHEN {versions} THEN ARRAY(SELECT jsonb_object_keys(c.metadata -> 'counters_since_delta_snapshot')) END, "
            f"c.metadata ? 'delta_writes_versioned', c.checkpoint ->> 'ts' FROM unnest(%(keys)b::text[]) AS k(key) JOIN checkpoints c ON {self._eq('c', 'k.key')} "
            "UNION ALL SELECT k.key, false, w.checkpoint_ns, w.checkpoint_id, NULL, NULL, NULL::text[], NULL::boolean, NULL "
            "FROM unnest(%(keys)b::text[]) AS k(key) CROSS JOIN LATERAL (SELECT DISTINCT w.checkpoint_ns, w.checkpoint_id "
            f"FROM checkpoint_writes w WHERE {self._eq('w', 'k.key')} AND w.channel = %(tasks)s) AS w" + tail)

    @staticmethod
    def _facts_of(rows, keys: list[str]) -> dict[str, tuple[list, set]]:
        from symfonic_cli.model.prune import PruneCheckpoint

        out: dict[str, tuple[list, set]] = {k: ([], set()) for k in keys}
        for key, is_cp, ns, cid, parent, root, delta, js, ts in rows:
            if is_cp is None:
                continue  # the kept state's row (_facts_sql(kept=True))
            if is_cp:
                out[key][0].append(PruneCheckpoint(ns, cid, parent, root, frozenset(delta or ()), bool(js), ts))
            else:
                out[key][1].add((ns, cid))
        return out

    @_translate_errors
    def _pr_facts_many(self, keys: list[str]) -> dict[str, tuple[list, set]]:
        from symfonic_cli.model.prune import TASKS

        rows = self.conn.execute(self._facts_sql(), {"keys": list(keys), "tasks": TASKS}, prepare=False).fetchall()
        return self._facts_of(rows, keys)

    def _pr_facts(self, key: str):
        return self._pr_facts_many([key])[key]

    def _pr_dated(self, key: str, checkpoints: list) -> list:
        return checkpoints  # the facts' statement reads each checkpoint's ts already

    def _decide_on(self, key: str, facts, keep: int, newer_than, keep_branches: bool = False):
        from symfonic_cli.model.prune import decide

        outlines: dict = {}

        def outline(ns: str, cid: str):
            if (ns, cid) not in outlines:
                outlines[(ns, cid)] = self._pr_outline(key, ns, cid)
            return outlines[(ns, cid)]

        return decide(key, facts[0], facts[1], outline, keep=keep, newer_than=newer_than, keep_branches=keep_branches)

    @_translate_errors
    def _pr_outline(self, key: str, ns: str, cid: str):
        # A channel holds a value where get_tuple finds one: inline, or a blob (not 'empty') at its version.
        row = self.conn.execute(
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

        row = self.conn.execute(
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

    def prune_plans(self, keys: list[str], *, keep: int = 1, newer_than=None, keep_branches: bool = False, times: bool = True, reader=None):
        """The plans of a page of keys: their facts read in one statement and the deletes of all
        their decisions measured in another (the statement the prune deletes with, as a SELECT)."""
        facts = self._pr_facts_many(keys)
        decisions = [self._decide_on(k, facts[k], keep, newer_than, keep_branches) for k in keys]
        measured = self._pr_measure_many([d for d in decisions if not d.skipped and d.changes])
        return [self._pr_plan(d.key, d, ({}, 0) if d.skipped else measured.get(d.key, (dict.fromkeys(_TABLES, 0), 0)), times)
                for d in decisions]

    def prune_plan(self, key: str, *, keep: int = 1, newer_than=None, keep_branches: bool = False, times: bool = True):
        return self.prune_plans([key], keep=keep, newer_than=newer_than, keep_branches=keep_branches, times=times)[0]

    def _pr_measure(self, key: str, d: PruneDecision):
        return self._pr_measure_many([d])[key]

    @staticmethod
    def _targets(decisions) -> dict[str, list]:
        """The decisions as arrays: checkpoints deleted in kept namespaces (d_*), namespaces deleted
        whole (x_*), checkpoints left with no parent (t_*), and what is kept (k_*)."""
        a: dict[str, list] = {n: [] for n in ("keys", "d_k", "d_ns", "d_id", "x_k", "x_ns", "t_k", "t_ns", "t_id", "k_k", "k_ns", "k_id")}
        for d in decisions:
            a["keys"].append(d.key)
            for ns in d.drop:
                a["x_k"].append(d.key)
                a["x_ns"].append(ns)
            for ns, ids in d.delete.items():
                for cid in ids:
                    a["d_k"].append(d.key)
                    a["d_ns"].append(ns)
                    a["d_id"].append(cid)
                for cid in d.detach.get(ns, ()):
                    a["t_k"].append(d.key)
                    a["t_ns"].append(ns)
                    a["t_id"].append(cid)
                for cid in sorted(d.keep[ns]):
                    a["k_k"].append(d.key)
                    a["k_ns"].append(ns)
                    a["k_id"].append(cid)
        return a

    def _rows_sql(self, delete: bool, drops: bool = True, detach: bool = True) -> str:
        """The rows a prune deletes, as one statement: ``delete`` deletes them (and detaches the kept
        checkpoints whose parent goes), else the same rows are counted; either way one
        (key, table, rows, bytes) row per key and table. Blobs go where a deleted checkpoint
        references them and no kept checkpoint of the namespace does (PostgresSaver.prune's rule).
        Without ``drops`` (no namespace deleted whole) or ``detach`` their parts are left out: each
        statement is planned again, and a smaller one is planned sooner. ``delete`` prunes one
        thread, %(key)s: its arrays leave the key out (the key a constant, the index searched for it)."""

        def src(prefix: str, cols: tuple[str, ...], alias: str) -> str:
            # the target arrays %(<prefix>_<col>)b as rows (k, *cols), one key's or a page's
            arrays = ", ".join(f"%({prefix}_{c})b::text[]" for c in cols)
            if delete:
                return f"(SELECT %(key)s::text AS k, u.* FROM unnest({arrays}) AS u({', '.join(cols)})) AS {alias}"
            return f"unnest(%({prefix}_k)b::text[], {arrays}) AS {alias}(k, {', '.join(cols)})"

        def rows(name: str, table: str, src: str, cond: str, size: str) -> str:
            if delete:
                return f"{name} AS (DELETE FROM {table} y USING {src} WHERE {cond} RETURNING s.k, {size} AS b)"
            # OFFSET 0: planned apart, so that only (k, b) reach the sort of the GROUP BY (flattened,
            # every row's blob went with it, sorted on disk)
            return f"{name} AS (SELECT s.k, {size} AS b FROM {table} y, {src} WHERE {cond} OFFSET 0)"

        # Each table's rows also filtered by the keys as an array: the planner knows nothing of the
        # unnest()'s rows and would otherwise scan a whole table to hash-join them.
        keys = "%(key)s" if delete else "ANY(%(keys)b::text[])"
        eq = self._eq("y", "s.k") + " AND " + self._eq("y", keys)
        cp_size = "pg_column_size(y.checkpoint) + coalesce(pg_column_size(y.metadata), 0)"
        versions = ("CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' THEN c.checkpoint -> 'channel_versions' "
                    "ELSE '{}'::jsonb END")
        parts = [
            f"d AS (SELECT * FROM {src('d', ('ns', 'id'), 'd')})",
            "n AS (SELECT DISTINCT k, ns FROM d)",
            # Each (channel, version) a checkpoint of a namespace with deletes names: +1 for every
            # checkpoint of the namespace naming it, -1 for every deleted one: a sum of 0 is a
            # version no kept checkpoint names. One aggregate, no join of the deleted ids with
            # every checkpoint (planned as a nested loop, it grew with the square of a page's).
            f"v AS (SELECT n.k, n.ns, e.key AS channel, e.value AS version, 1 AS x FROM n JOIN checkpoints c ON {self._eq('c', 'n.k')} "
            f"AND c.checkpoint_ns = n.ns AND {self._eq('c', keys)} CROSS JOIN LATERAL jsonb_each_text({versions}) AS e "
            f"UNION ALL SELECT dd.k, dd.ns, e.key, e.value, -1 FROM (SELECT DISTINCT k, ns, id FROM d) AS dd JOIN checkpoints c "
            f"ON {self._eq('c', 'dd.k')} AND c.checkpoint_ns = dd.ns AND c.checkpoint_id = dd.id AND {self._eq('c', keys)} "
            f"CROSS JOIN LATERAL jsonb_each_text({versions}) AS e)",
            "g AS (SELECT k, ns, channel, version FROM v GROUP BY k, ns, channel, version HAVING sum(x) = 0)",
            rows("w1", "checkpoint_writes", "d s", f"{eq} AND y.checkpoint_ns = s.ns AND y.checkpoint_id = s.id", "octet_length(y.blob)"),
            rows("b1", "checkpoint_blobs", "g s", f"{eq} AND y.checkpoint_ns = s.ns AND y.channel = s.channel AND y.version = s.version",
                 "octet_length(y.blob)"),
            rows("c1", "checkpoints", "d s", f"{eq} AND y.checkpoint_ns = s.ns AND y.checkpoint_id = s.id", cp_size),
        ]
        if drops:
            parts += [
                f"x AS (SELECT * FROM {src('x', ('ns',), 'x')})",
                rows("w2", "checkpoint_writes", "x s", f"{eq} AND y.checkpoint_ns = s.ns", "octet_length(y.blob)"),
                rows("b2", "checkpoint_blobs", "x s", f"{eq} AND y.checkpoint_ns = s.ns", "octet_length(y.blob)"),
                rows("c2", "checkpoints", "x s", f"{eq} AND y.checkpoint_ns = s.ns", cp_size),
            ]
        if delete and detach:
            parts.append(
                "p AS (UPDATE checkpoints y SET parent_checkpoint_id = NULL "
                f"FROM {src('t', ('ns', 'id'), 's')} "
                f"WHERE {eq} AND y.checkpoint_ns = s.ns AND y.checkpoint_id = s.id AND y.parent_checkpoint_id IS NOT NULL "
                f"AND NOT EXISTS (SELECT 1 FROM {src('k', ('ns', 'id'), 'kk')} "
                "WHERE kk.k = s.k AND kk.ns = s.ns AND kk.id = y.parent_checkpoint_id) RETURNING 1)")
        total = " UNION ALL ".join(
            f"SELECT k, '{table}', count(*), coalesce(sum(b), 0){', NULL' if delete else ''} FROM "
            + (f"(SELECT * FROM {a} UNION ALL SELECT * FROM {b}) AS u" if drops else a) + " GROUP BY k"
            for table, a, b in (("checkpoint_writes", "w1", "w2"), ("checkpoint_blobs", "b1", "b2"), ("checkpoints", "c1", "c2")))
        if delete:  # and the kept state before the deletes: every part of a statement reads its snapshot
            total += f" UNION ALL SELECT NULL, NULL, 0, 0, ({self._kept_sql()})"
        return "WITH " + ", ".join(parts) + " " + total

    @staticmethod
    def _rows_of(rows, keys) -> dict[str, tuple[dict[str, int], int]]:
        out = {k: (dict.fromkeys(_TABLES, 0), 0) for k in keys}
        for key, table, n, size, *_ in rows:
            if table is None:
                continue  # the kept state's row (_rows_sql(delete=True))
            counts, total = out[key]
            counts[table] += n
            out[key] = (counts, total + int(size))
        return out

    @_translate_errors
    def _pr_measure_many(self, decisions) -> dict[str, tuple[dict[str, int], int]]:
        if not decisions:
            return {}
        t = self._targets(decisions)
        rows = self.conn.execute(self._rows_sql(False, bool(t["x_k"])), t, prepare=False).fetchall()
        return self._rows_of(rows, [d.key for d in decisions])

    def _kept_sql(self) -> str:
        # What get_tuple reads of each kept checkpoint of %(key)s, as one value compared before and
        # after the deletes in one transaction: the checkpoint and metadata by digest (the row is
        # rewritten where its parent pointer, left out, is cleared), and the blob and write rows it
        # reads by tuple identity (ctid, xmin): inside the transaction no row changes, or is deleted
        # and written again, without a new ctid, so equal identities are equal bytes, read without
        # detoasting a blob. Each row's text is a record's (fields quoted where they hold a
        # delimiter), so that different states never read the same.
        return (
            "SELECT string_agg(ROW(x.checkpoint_ns, x.checkpoint_id, md5(x.checkpoint::text), md5(coalesce(x.metadata::text, '')), "
            "(SELECT array_agg(ROW(b.channel, b.version, b.ctid, b.xmin) ORDER BY b.channel, b.version) "
            " FROM checkpoint_blobs b, jsonb_each_text(CASE WHEN jsonb_typeof(x.checkpoint -> 'channel_versions') = 'object' "
            " THEN x.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) v "
            " WHERE b.thread_id = x.thread_id AND b.checkpoint_ns = x.checkpoint_ns AND b.channel = v.key AND b.version = v.value), "
            "(SELECT array_agg(ROW(w.task_id, w.idx, w.ctid, w.xmin) ORDER BY w.task_id, w.idx) "
            " FROM checkpoint_writes w WHERE w.thread_id = x.thread_id AND w.checkpoint_ns = x.checkpoint_ns AND w.checkpoint_id = x.checkpoint_id)"
            ")::text, ',' ORDER BY x.checkpoint_ns, x.checkpoint_id) "
            "FROM unnest(%(k_ns)b::text[], %(k_id)b::text[]) AS kk(ns, id) "
            f"JOIN checkpoints x ON {self._eq('x', '%(key)s')} AND x.checkpoint_ns = kk.ns AND x.checkpoint_id = kk.id")

    def prune_thread(self, key: str, *, keep: int = 1, newer_than=None, keep_branches: bool = False, expected=None):
        deleted, detached, _, _ = self._prune_verified(key, keep, newer_than, expected, keep_branches, verify=False)
        return deleted, detached

    def prune_verified(self, key: str, *, keep: int = 1, newer_than=None, keep_branches: bool = False, expected=None, after_commit=None):
        deleted, detached, remaining, _ = self.prune_piece(key, keep=keep, newer_than=newer_than, keep_branches=keep_branches,
                                                           expected=expected, after_commit=after_commit)
        return deleted, detached, remaining

    def prune_piece(self, key: str, *, keep: int = 1, newer_than=None, keep_branches: bool = False, expected=None, piece=None,
                    after_commit=None):
        done = self._prune_verified(key, keep, newer_than, expected, keep_branches, verify=True, piece=piece)
        if after_commit is not None:
            after_commit()  # verified before the commit here: nothing after it to race
        return done

    @_translate_errors
    def _prune_verified(self, key: str, keep: int, newer_than, expected, keep_branches: bool, *, verify: bool, piece: int | None = None):
        """One thread in one REPEATABLE READ transaction, in three round trips (psycopg pipeline mode):

        1. ``BEGIN``, the thread's facts: the rules decide on this snapshot (a checkpoint's outline,
           where a rule needs one, is one more round trip);
        2. two statements: the one that deletes and detaches (data-modifying CTEs, its rows
           counted per table) and reads the kept state before the deletes (every part of one
           statement reads the same snapshot), and the facts again with the kept state after
           them: here, before the commit, the rows deleted are compared with the plan's, the kept
           state before with after, and the rules decide on the facts after the deletes (the
           fresh plan, with ``verify``): a checkpoint still to prune, like any difference, rolls
           back;
        3. ``COMMIT``.

        With ``piece``, at most that many checkpoints (model/prune.py piece_of): the fresh plan must
        then find exactly the checkpoints left for the later pieces. Returns (rows deleted, checkpoints
        left with no parent, checkpoints still to prune beyond those (0), checkpoints left for later pieces).
        """

        from symfonic_cli.errors import StoreError
        from symfonic_cli.model.prune import TASKS, check_against_plan, check_kept_state, piece_of
        from symfonic_cli.stores._prune import ThreadSkipped
        from symfonic_cli.stores.postgres.erase import _pipeline_errors_once

        conn = self.conn
        facts_sql, facts_args = self._facts_sql(), {"keys": [key], "tasks": TASKS}
        try:
            with _pipeline_errors_once(), conn.pipeline() as pipe:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                facts = conn.execute(facts_sql, facts_args, prepare=False)
                pipe.sync()  # round trip 1
                whole = self._decide_on(key, self._facts_of(facts.fetchall(), [key])[key], keep, newer_than, keep_branches)
                if whole.skipped:
                    raise ThreadSkipped(whole.skipped)
                if not whole.changes:
                    conn.execute("COMMIT")
                    return dict.fromkeys(_TABLES, 0), 0, 0, 0
                d = piece_of(whole, piece) if piece is not None else whole
                left = whole.checkpoints - d.checkpoints
                if left:  # a piece: the plan's rows are those of the whole
                    expected = None
                targets: dict[str, Any] = {**self._targets([d]), "key": key}
                apply = conn.execute(self._rows_sql(True, bool(targets["x_k"]), bool(targets["t_k"])), targets, prepare=False)
                fresh = conn.execute(self._facts_sql(kept=True), {**facts_args, "key": key, "k_ns": targets["k_ns"], "k_id": targets["k_id"]},
                                     prepare=False)
                pipe.sync()  # round trip 2: nothing is committed yet
                applied, fresh_rows = apply.fetchall(), fresh.fetchall()
                deleted = self._rows_of(applied, [key])[key][0]
                check_against_plan(expected, deleted)
                check_kept_state(key, [r[4] for r in applied if r[1] is None], [r[5] for r in fresh_rows if r[1] is None])
                remaining = 0
                if verify:
                    remaining = self._decide_on(key, self._facts_of(fresh_rows, [key])[key], keep, newer_than, keep_branches).checkpoints
                    if remaining != left:
                        raise StoreError(f"thread '{key}': a fresh plan after the deletes finds {remaining} checkpoint(s) "
                                         f"to prune, not {left}: rolled back, nothing deleted")
                conn.execute("COMMIT")  # round trip 3, as the pipeline ends
        except BaseException:
            self._roll_back_open()
            raise
        return deleted, d.kept_detached, 0, left

    # -- --compact

    @_translate_errors
    def table_bytes(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT t, pg_total_relation_size(to_regclass(t)) FROM unnest(%s::text[]) AS t", (list(_TABLES),)).fetchall()
        return {t: int(n) for t, n in rows}

    def compact_check(self) -> list[str]:
        return ["--compact: VACUUM (ANALYZE) of the three tables after the last thread makes the space reusable by "
                "PostgreSQL; only VACUUM FULL (not run: it locks the tables) gives it back to the operating system"]

    @_translate_errors
    def compact(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        before = self.table_bytes()
        for table in _TABLES:
            self.conn.execute(f"VACUUM (ANALYZE) {table}")  # autocommit: outside a transaction
        return before, self.table_bytes(), []
