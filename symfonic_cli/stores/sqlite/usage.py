"""SQLite stores: ``store usage``: where the bytes are, aggregated by SQLite (no row decoded)."""

from __future__ import annotations

import os

from symfonic_cli.stores.sqlite._common import SqliteSection, _translate_errors

TASKS = "__pregel_tasks"  # model/prune.py TASKS (not imported: the quick route loads this module)

# Threads the plain rule (the latest N per namespace) does not describe exactly: a subgraph call's
# namespace, DeltaChannel metadata, pending Sends. They are planned one by one with the full rules.
_SPECIAL = (
    "SELECT thread_id COLLATE BINARY FROM checkpoints WHERE instr(checkpoint_ns, ':') > 0 "
    "OR instr(CAST(metadata AS TEXT), 'counters_since_delta_snapshot') > 0 OR instr(CAST(metadata AS TEXT), 'delta_writes_versioned') > 0 "
    f"UNION SELECT thread_id COLLATE BINARY FROM writes WHERE channel = '{TASKS}'"
)
_CP_BYTES = "length(checkpoint) + coalesce(length(metadata), 0)"


class SqliteUsage(SqliteSection):
    """store usage."""

    @_translate_errors
    def store_usage(self, *, top: int = 10, keep: int = 1) -> dict:
        c = self.conn
        path: str = self.file
        page_size = c.execute("PRAGMA page_size").fetchone()[0]
        pages = c.execute("PRAGMA page_count").fetchone()[0]
        free = c.execute("PRAGMA freelist_count").fetchone()[0]
        wal = path + "-wal"
        files = {
            "file_bytes": os.path.getsize(path),
            "wal_bytes": os.path.getsize(wal) if os.path.exists(wal) else 0,
            "page_size": page_size,
            "pages": pages,
            "free_pages": free,
            "free_bytes": free * page_size,
        }
        n, b = c.execute(f"SELECT count(*), coalesce(sum({_CP_BYTES}), 0) FROM checkpoints").fetchone()
        wn, wb = c.execute("SELECT count(*), coalesce(sum(length(value)), 0) FROM writes").fetchone()
        channels = [
            {"channel": ch, "table": "writes", "rows": rows, "bytes": size}
            for ch, rows, size in c.execute(
                "SELECT channel, count(*), coalesce(sum(length(value)), 0) FROM writes GROUP BY channel ORDER BY 3 DESC, 1")
        ]
        largest = [
            {"key": _text(k), "bytes": size, "checkpoints": cps}
            for k, size, cps in c.execute(
                # Keys grouped in bytes: a column declared NOCASE (a crafted file) must not merge two people.
                f"SELECT thread_id, sum(b), sum(n) FROM (SELECT thread_id, sum({_CP_BYTES}) AS b, count(*) AS n FROM checkpoints "
                "GROUP BY thread_id COLLATE BINARY UNION ALL SELECT thread_id, sum(length(value)), 0 FROM writes "
                "GROUP BY thread_id COLLATE BINARY) GROUP BY thread_id COLLATE BINARY "
                "ORDER BY 2 DESC, 1 LIMIT ?", (top,))
        ]
        return {
            "files": files,
            "checkpoints": {"count": n, "bytes": b},
            "writes": {"count": wn, "bytes": wb},
            "blobs": None,
            "channels": channels,
            "largest_threads": largest,
            "reclaimable": self._reclaimable(keep),
            "notes": ["SQLite keeps every channel's value inside the checkpoint row: bytes per channel are the writes'"],
        }

    def _reclaimable(self, keep: int) -> dict:
        c = self.conn
        ranked = (
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, {_CP_BYTES} AS b, "
            "row_number() OVER (PARTITION BY thread_id COLLATE BINARY, checkpoint_ns ORDER BY checkpoint_id DESC) AS rn "
            f"FROM checkpoints WHERE thread_id COLLATE BINARY NOT IN ({_SPECIAL})"
        )
        cps, size, threads = c.execute(
            f"SELECT count(*), coalesce(sum(b), 0), count(DISTINCT thread_id COLLATE BINARY) FROM ({ranked}) WHERE rn > ?", (keep,)).fetchone()
        writes, wsize = c.execute(
            f"SELECT count(*), coalesce(sum(length(w.value)), 0) FROM ({ranked}) AS r JOIN writes AS w "
            f"ON {self._key_is('w.thread_id', 'r.thread_id')} AND w.checkpoint_ns = r.checkpoint_ns AND w.checkpoint_id = r.checkpoint_id WHERE r.rn > ?",
            (keep,)).fetchone()
        out = {"keep": keep, "checkpoints": cps, "writes": writes, "blobs": 0, "bytes": size + wsize, "threads": threads, "skipped_threads": 0}
        for (key,) in c.execute(_SPECIAL).fetchall():
            key = _text(key)
            if key is None:
                continue
            plan = self.prune_plan(key, keep=keep)  # type: ignore[attr-defined]
            if plan.skipped:
                out["skipped_threads"] += 1
                continue
            out["checkpoints"] += plan.rows.get("checkpoints", 0)
            out["writes"] += plan.rows.get("writes", 0)
            out["bytes"] += plan.bytes
            out["threads"] += bool(plan.rows.get("checkpoints"))
        return out


def _text(key: object) -> str | None:
    if isinstance(key, bytes):
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return key if isinstance(key, str) else None
