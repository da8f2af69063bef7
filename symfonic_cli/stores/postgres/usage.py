"""PostgreSQL stores: ``store usage``: where the bytes are, aggregated by the server (no row decoded)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symfonic_cli.stores.postgres._common import PostgresSection, _conninfo, _translate_errors, on_one_snapshot

TASKS = "__pregel_tasks"  # model/prune.py TASKS (not imported: the quick route loads this module)

_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
_CP_BYTES = "pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0)"
# Threads the plain rule (the latest N per namespace) does not describe exactly: a subgraph call's
# namespace, DeltaChannel metadata, pending Sends. They are planned one by one with the full rules.
# ({key}: the key column as PostgresSection._key_grouped gives it; {range}: a key range's conditions.)
_SPECIAL = (
    "SELECT {key} FROM checkpoints WHERE (strpos(checkpoint_ns, ':') > 0 "
    "OR metadata ? 'counters_since_delta_snapshot' OR metadata ? 'delta_writes_versioned'){range} "
    f"UNION SELECT {{key}} FROM checkpoint_writes WHERE channel = '{TASKS}'{{range}}"
)
_VERSIONS_OF = ("CASE WHEN jsonb_typeof(checkpoint -> 'channel_versions') = 'object' "
                "THEN checkpoint -> 'channel_versions' ELSE '{}'::jsonb END")


class PostgresUsage(PostgresSection):
    """store usage."""

    _key_cuts: Callable[[str, list], list[str]]  # PostgresRead's: keys cutting a pass into ranges

    @_translate_errors
    def store_usage(self, *, top: int = 10, keep: int = 1) -> dict:
        # Where the store is large: the reclaimable bytes' pass (most of the time: 3.9 of 4.9 s of
        # server CPU at 200,000 threads) split by key range, the other passes beside its parts, at
        # once in sessions on one snapshot; else all in turn in this session.
        others = self._usage_statements(top)
        done: list[list[tuple]] | None = None
        cuts = self._usage_cuts()
        if cuts:
            edges: list[str | None] = [None, *cuts, None]
            sessions = [[self._reclaimable_statement(keep, lo, hi)] for lo, hi in zip(edges, edges[1:])]
            for i, statement in enumerate(others):  # beside the parts on the other sessions
                sessions[1 + i % (len(sessions) - 1)].append(statement)
            conninfo = _conninfo(self.location, writable=False, connect_timeout=self.connect_timeout)
            found = on_one_snapshot(self.conn, conninfo, sessions)
            if found is not None:
                # Each part's sums over its own threads (no thread in two ranges): their sum is the store's.
                sums = tuple(sum(int(v) for v in col) for col in zip(*(rows[0][0] for rows in found)))
                rest = {id(st): rows for session, results in zip(sessions, found) for st, rows in zip(session[1:], results[1:])}
                done = [[sums], *(rest[id(st)] for st in others)]
        # No JIT for these statements: their estimates (jsonb_each_text's 100 rows a call) pass
        # the JIT thresholds and compiling them cost more than running them (4 of 7 s at 20,000
        # threads). SET LOCAL in one read-only transaction (as _stream does): the session's own
        # setting is untouched, and a transaction-mode pooler keeps it on one server session.
        with self.conn.transaction():
            self.conn.execute("SET LOCAL jit = off")
            if done is None:
                done = [self.conn.execute(sql, params).fetchall() for sql, params in [self._reclaimable_statement(keep), *others]]
            return self._store_usage(done, keep)

    def _usage_cuts(self) -> list[str]:
        """Keys cutting the store into ranges for the reclaimable bytes' parts (_key_cuts); none
        unless the three tables' keys share one collation (else one range would not hold the same
        threads in each)."""
        one = self.conn.execute(
            "SELECT count(DISTINCT attcollation) = 1 FROM pg_attribute WHERE attname = 'thread_id' AND attrelid IN "
            "('checkpoints'::regclass, 'checkpoint_blobs'::regclass, 'checkpoint_writes'::regclass)").fetchone()[0]
        return self._key_cuts("", []) if one else []

    def _usage_statements(self, top: int) -> list[tuple[str, Any]]:
        """The checkpoints' totals, the channels, the largest threads, the threads planned one by one."""
        key = self._key_grouped()  # two people never merge into one row
        return [
            (f"SELECT count(*), coalesce(sum({_CP_BYTES}), 0) FROM checkpoints", None),
            ("SELECT 'checkpoint_blobs', channel, count(*), coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs GROUP BY channel "
             "UNION ALL SELECT 'checkpoint_writes', channel, count(*), coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes GROUP BY channel "
             "ORDER BY 4 DESC, 2, 1", None),
            # One grouping over the three tables' narrow rows (a size and a count each): a group per
            # table first had the planner sort every whole row (blobs, checkpoints) by thread, on disk.
            (f"SELECT thread_id, sum(b), sum(n) FROM (SELECT {key} AS thread_id, {_CP_BYTES} AS b, 1 AS n FROM checkpoints "
             f"UNION ALL SELECT {key}, octet_length(blob), 0 FROM checkpoint_blobs "
             f"UNION ALL SELECT {key}, octet_length(blob), 0 FROM checkpoint_writes) AS u "
             'GROUP BY thread_id ORDER BY 2 DESC, thread_id COLLATE "C" LIMIT %s', (top,)),
            (_SPECIAL.format(key=key, range=""), None),
        ]

    def _store_usage(self, done: list[list[tuple]], keep: int) -> dict:
        c = self.conn
        tables = []
        for name, heap, toast, index, dead, live in c.execute(
            # heap: every fork of the table (main, free-space map, visibility map, init), as
            # pg_table_size counts them, without its TOAST: heap + toast + index = pg_total_relation_size.
            "SELECT t, pg_table_size(k.oid) - coalesce(pg_total_relation_size(nullif(k.reltoastrelid, 0)), 0), "
            "coalesce(pg_total_relation_size(nullif(k.reltoastrelid, 0)), 0), pg_indexes_size(k.oid), "
            "coalesce(s.n_dead_tup, 0), coalesce(s.n_live_tup, 0) FROM unnest(%s::text[]) AS t "
            "JOIN pg_class k ON k.oid = to_regclass(t) LEFT JOIN pg_stat_all_tables s ON s.relid = k.oid", (list(_TABLES),)):
            tables.append({"name": name, "heap_bytes": int(heap), "toast_bytes": int(toast), "index_bytes": int(index),
                           "dead_tuples": int(dead), "live_tuples": int(live)})
        reclaimable, totals, by_channel, by_thread, special = done
        n, b = totals[0]
        channels = [{"channel": ch, "table": table, "rows": int(rows), "bytes": int(size)} for table, ch, rows, size in by_channel]
        # Each table's totals are its channels' (every row is in one group): no second pass over it.
        wn, wb = (sum(ch[f] for ch in channels if ch["table"] == "checkpoint_writes") for f in ("rows", "bytes"))
        bn, bb = (sum(ch[f] for ch in channels if ch["table"] == "checkpoint_blobs") for f in ("rows", "bytes"))
        largest = [{"key": k, "bytes": int(size), "checkpoints": int(cps)} for k, size, cps in by_thread]
        return {
            "tables": tables,
            "checkpoints": {"count": int(n), "bytes": int(b)},
            "writes": {"count": int(wn), "bytes": int(wb)},
            "blobs": {"count": int(bn), "bytes": int(bb)},
            "channels": channels,
            "largest_threads": largest,
            "reclaimable": self._reclaimable(reclaimable[0], [k for (k,) in special], keep),
            "notes": ["dead tuples are the statistics collector's estimate (pg_stat_all_tables)"],
        }

    def _reclaimable_statement(self, keep: int, lo: str | None = None, hi: str | None = None) -> tuple[str, Any]:
        """The reclaimable sums of the threads in the key range [lo, hi) (in the keys' collation:
        the indexes serve it), or of all; the threads planned one by one left out."""
        key = self._key_grouped()
        ranges = {t: "".join(f" AND {t}thread_id {op} %({b})s" for op, b, v in ((">=", "lo", lo), ("<", "hi", hi)) if v is not None)
                  for t in ("", "w.", "b.")}
        special = _SPECIAL.format(key=key, range=ranges[''])  # a part's own threads only: a third of the scan
        # Every checkpoint ranked in its namespace (sizes and channel versions only), and only the
        # namespaces holding more than ``keep``: the rows a prune deletes and the ones it keeps
        # beside them, ranked once (MATERIALIZED) for the three sums of one statement.
        ranked = (
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, b, rn, cv FROM (SELECT {key} AS thread_id, checkpoint_ns, checkpoint_id, "
            f"{_CP_BYTES} AS b, row_number() OVER w AS rn, count(*) OVER w AS n, {_VERSIONS_OF} AS cv FROM checkpoints "
            f"WHERE {key} NOT IN ({special}){ranges['']} "
            f"WINDOW w AS (PARTITION BY {key}, checkpoint_ns ORDER BY checkpoint_id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)) AS w "
            "WHERE n > %(keep)s"
        )
        # A blob is freed when a deleted checkpoint of its namespace names it and no kept one does
        # (PostgresSaver.prune's rule). Over the whole table: one pass over the blobs, semi- and
        # anti-joined with the ranked rows' versions (no DISTINCT of every version, no index read
        # per version). Over a key range the planner read every blob for that and sorted the
        # range's whole rows on disk (2.0 s of server CPU against 1.6 s at 200,000 threads): the
        # versions named only by deleted checkpoints, grouped, then their blobs by key.
        b_key = self._key_grouped("b.thread_id")
        if lo is None and hi is None:
            named = ("SELECT 1 FROM fv WHERE {gone} fv.gone AND fv.thread_id = {b} AND fv.checkpoint_ns = b.checkpoint_ns "
                     "AND fv.key = b.channel AND fv.value = b.version")
            versions = "fv AS MATERIALIZED (SELECT r.thread_id, r.checkpoint_ns, v.key, v.value, r.rn > %(keep)s AS gone FROM r, jsonb_each_text(r.cv) v), "
            freed = ("bl AS (SELECT count(*) AS n, coalesce(sum(octet_length(b.blob)), 0) AS b FROM checkpoint_blobs b "
                     f"WHERE EXISTS ({named.format(gone='', b=b_key)}) AND NOT EXISTS ({named.format(gone='NOT', b=b_key)})) ")
        else:
            versions = ("fv AS (SELECT r.thread_id, r.checkpoint_ns, v.key, v.value FROM r, jsonb_each_text(r.cv) v "
                        "GROUP BY 1, 2, 3, 4 HAVING bool_and(r.rn > %(keep)s)), ")
            freed = ("bl AS (SELECT count(*) AS n, coalesce(sum(octet_length(b.blob)), 0) AS b FROM fv JOIN checkpoint_blobs b "
                     f"ON {b_key} = fv.thread_id AND b.checkpoint_ns = fv.checkpoint_ns AND b.channel = fv.key AND b.version = fv.value{ranges['b.']}) ")
        return (
            f"WITH r AS MATERIALIZED ({ranked}), {versions}"
            "w AS (SELECT count(*) AS n, coalesce(sum(octet_length(w.blob)), 0) AS b FROM r JOIN checkpoint_writes w "
            f"ON {self._key_grouped('w.thread_id')} = r.thread_id AND w.checkpoint_ns = r.checkpoint_ns AND w.checkpoint_id = r.checkpoint_id "
            f"WHERE r.rn > %(keep)s{ranges['w.']}), {freed}"
            "SELECT count(*), coalesce(sum(r.b), 0), count(DISTINCT r.thread_id), (SELECT n FROM w), (SELECT b FROM w), "
            "(SELECT n FROM bl), (SELECT b FROM bl) FROM r WHERE r.rn > %(keep)s", {"keep": keep, "lo": lo, "hi": hi})

    def _reclaimable(self, sums: tuple, special: list[str], keep: int) -> dict:
        cps, size, threads, writes, wsize, blobs, bsize = sums
        out = {"keep": keep, "checkpoints": int(cps), "writes": int(writes), "blobs": int(blobs),
               "bytes": int(size) + int(wsize) + int(bsize), "threads": int(threads), "skipped_threads": 0}
        for thread in special:
            plan = self.prune_plan(thread, keep=keep)  # type: ignore[attr-defined]
            if plan.skipped:
                out["skipped_threads"] += 1
                continue
            out["checkpoints"] += plan.rows.get("checkpoints", 0)
            out["writes"] += plan.rows.get("checkpoint_writes", 0)
            out["blobs"] += plan.rows.get("checkpoint_blobs", 0)
            out["bytes"] += plan.bytes
            out["threads"] += bool(plan.rows.get("checkpoints"))
        return out
