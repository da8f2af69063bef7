"""SQLite stores: ``store usage``: where the bytes are, aggregated by SQLite (no row decoded)."""

from __future__ import annotations

import os
from itertools import chain

from symfonic_cli.stores.sqlite._common import SqliteSection, _translate_errors

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

TASKS = "__pregel_tasks"  # model/prune.py TASKS (not imported: the quick route loads this module)

# Threads the plain rule (the latest N per namespace) does not describe exactly: a subgraph call's
# namespace (tested once per namespace), DeltaChannel metadata, pending Sends. They are planned one
# by one with the full rules. Each reference to metadata reads the row's overflow pages again
# (SQLite keeps no column cache, and metadata is stored after the checkpoint's bytes): one read
# looks for "delta_", which both markers hold, and only a row holding it is read for the markers.
_MARKERS = "instr(CAST(metadata AS TEXT), 'counters_since_delta_snapshot') > 0 OR instr(CAST(metadata AS TEXT), 'delta_writes_versioned') > 0"
_DELTA_ROW = f"CASE WHEN instr(CAST(metadata AS TEXT), 'delta_') = 0 THEN 0 ELSE {_MARKERS} END"
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
        channels = [
            {"channel": ch, "table": "writes", "rows": rows, "bytes": size}
            for ch, rows, size in c.execute(_CHANNELS)
        ]
        # The table's totals are its channels' (every row is in one group): no second pass over it.
        wn, wb = sum(ch["rows"] for ch in channels), sum(ch["bytes"] for ch in channels)
        n, b, largest, reclaimable = self._per_thread(top, keep)
        return {
            "files": files,
            "checkpoints": {"count": n, "bytes": b},
            "writes": {"count": wn, "bytes": wb},
            "blobs": None,
            "channels": channels,
            "largest_threads": largest,
            "reclaimable": reclaimable,
            "notes": ["SQLite keeps every channel's value inside the checkpoint row: bytes per channel are the writes'"],
        }

    def _per_thread(self, top: int, keep: int) -> tuple[int, int, list[dict], dict]:
        """The checkpoints' count and bytes, the ``top`` largest threads and what a prune would
        give back, from a row per thread (_threads) folded here: memory holds the ``top`` and the
        special threads' keys, which are planned one by one with the full rules (_DELTA_ROW)."""
        import heapq

        rec = {"keep": keep, "checkpoints": 0, "writes": 0, "blobs": 0, "bytes": 0, "threads": 0, "skipped_threads": 0}
        n = size = 0
        heap: list[tuple] = []  # the ``top`` largest, smallest first: (bytes, _Desc(order), key, is BLOB, checkpoints)
        special: list[object] = []
        for tid, blob, cb, cn, wb, sp, pruned in self._threads(keep):
            n += cn
            size += cb
            total = cb + wb
            if top > 0 and (len(heap) < top or total >= heap[0][0]):
                # SQLite's ORDER BY bytes DESC, thread_id: text before BLOB keys, each in byte order.
                item = (total, _Desc((blob, tid)), tid, blob, cn)
                if len(heap) < top:
                    heapq.heappush(heap, item)
                elif item > heap[0]:
                    heapq.heapreplace(heap, item)
            if sp:
                special.append(tid if blob else _decoded(tid))
            elif pruned is not None:
                rec["checkpoints"] += pruned[0]
                rec["writes"] += pruned[2]
                rec["bytes"] += pruned[1] + pruned[3]
                rec["threads"] += 1
        largest = [{"key": _text(tid if blob else _decoded(tid)), "bytes": total, "checkpoints": cn}
                   for total, _, tid, blob, cn in sorted(heap, reverse=True)]
        for key in special:
            key = _text(key)
            if key is None:
                continue
            plan = self.prune_plan(key, keep=keep)  # type: ignore[attr-defined]
            if plan.skipped:
                rec["skipped_threads"] += 1
                continue
            rec["checkpoints"] += plan.rows.get("checkpoints", 0)
            rec["writes"] += plan.rows.get("writes", 0)
            rec["bytes"] += plan.bytes
            rec["threads"] += bool(plan.rows.get("checkpoints"))
        return n, size, largest, rec

    def _threads(self, keep: int) -> Iterator[tuple]:
        """(key as bytes, whether it is a BLOB, checkpoint bytes, checkpoints, write bytes, special,
        pruned) per thread, ``pruned`` None or what a prune of the plain rule deletes (checkpoints,
        bytes, writes, bytes). Two streams in the primary keys' order (SQLite's: text keys before
        BLOB keys, each in byte order; no sort), merged here: every checkpoint row read once (its
        metadata looked into for _DELTA_ROW's markers), every write once; the rows beyond the
        latest ``keep`` are read again only where there are any."""
        writes = _Stream(self.conn.execute(_WRITES_PER_THREAD))
        rows = self.conn.cursor().execute(_cp_per_namespace(self._key_is), {"keep": keep})
        cur: list | None = None  # the thread being summed: [key, is BLOB, bytes, checkpoints, special, pruned]
        for t, cb, cn, rare in chain(rows, (_LAST,)):
            # ``rare``: None for most namespaces (a text key, nothing special, nothing beyond ``keep``)
            blob = sp = False
            gone = None
            if rare is not None:
                blob, sp = rare[0] == "1", rare[1] == "1"
                if len(rare) > 2:  # (checkpoints, bytes, writes, bytes) a prune deletes
                    gone = tuple(map(int, rare[2:].split()))
            if cur is not None:
                if cur[0] == t and cur[1] == blob:  # another namespace of the same thread
                    cur[2] += cb
                    cur[3] += cn
                    cur[4] = cur[4] or sp
                    if gone is not None:
                        cur[5] = gone if cur[5] is None else tuple(a + b for a, b in zip(cur[5], gone))
                    continue
                key, is_blob, size, count, special, pruned = cur
                at = (is_blob, key)
                if writes.at < at:
                    for w in writes.before(at):  # writes of no checkpoint
                        yield w[0], w[1], 0, 0, w[2], w[3], None
                own = writes.take(at)
                if own is None:
                    yield key, is_blob, size, count, 0, special, pruned
                else:
                    yield key, is_blob, size, count, own[2], special or own[3], pruned
            cur = [t, blob, cb, cn, sp, gone]
        for w in writes.before(_ALL):
            yield w[0], w[1], 0, 0, w[2], w[3], None


_LAST = (None,) * 4  # after the last row: no key is None


_END = (2,)  # after every key's place ((is BLOB, bytes)): a stream that is done
_ALL = (3,)  # after _END: before(_ALL) gives every row left


class _Stream:
    """Rows (key bytes, whether it is a BLOB, ...) in the primary key's order, taken by key's place."""

    __slots__ = ("rows", "row", "at")

    def __init__(self, rows: Iterator[tuple]) -> None:
        self.rows = rows
        self.row: tuple = ()
        self.at: tuple = _END
        self._next()

    def _next(self) -> None:
        row = next(self.rows, None)
        self.row, self.at = ((), _END) if row is None else (row, (row[1], row[0]))

    def before(self, at: tuple) -> Iterator[tuple]:
        """The rows before ``at``."""
        while self.at < at and self.at != _END:
            yield self.row
            self._next()

    def take(self, at: tuple) -> tuple | None:
        """The row of ``at``, or None (rows before it are passed over)."""
        while self.at < at:
            self._next()
        if self.at == at:
            row = self.row
            self._next()
            return row
        return None


class _Desc:
    """Reverses an order inside a heap item (the key's ascending order among equal sizes)."""

    __slots__ = ("v",)

    def __init__(self, v: tuple) -> None:
        self.v = v

    def __lt__(self, other: _Desc) -> bool:
        return self.v > other.v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.v == other.v


def _decoded(raw: bytes) -> str | bytes:
    """A text key read as its bytes (CAST AS BLOB: a key that is not UTF-8 must not stop the pass)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


# Per thread and namespace, in the primary key's order (no sort): the key (as bytes), checkpoint
# bytes and count, and one more column, NULL for most namespaces: else "BS" (the key is a BLOB,
# the namespace is special: a subgraph call's, or a row with _DELTA_ROW's markers; each 0 or 1),
# then, where there are more than ``keep`` checkpoints, " count bytes writes bytes" of those a
# prune deletes (the saver's ORDER BY checkpoint_id DESC: every id before the keep-th newest),
# each an index range of its own (the writes' one subquery). A column a row carries costs as
# much as a row's tenth, NULL or not: what most rows do not need travels in that one.
def _cp_per_namespace(key_is: Callable[[str, str], str]) -> str:
    """The query; ``key_is``: SqliteSection._key_is (keys compared byte for byte, grouped with
    COLLATE BINARY: a file declaring NOCASE must not merge two people). One level: a level over
    the groups copied every group's values once more (4% of the statement)."""
    in_ns = f"{key_is('k.thread_id', 'c.thread_id')} AND k.checkpoint_ns IS c.checkpoint_ns"
    # The keep-th newest id (read where there are more than ``keep``, by each subquery needing it).
    bound = f"(SELECT k.checkpoint_id FROM checkpoints AS k WHERE {in_ns} ORDER BY k.checkpoint_id DESC LIMIT 1 OFFSET :keep - 1)"
    # Their writes' count and bytes in one read of them: one value, "count bytes".
    writes_gone = (f"(SELECT count(*) || ' ' || coalesce(sum(length(w.value)), 0) FROM writes AS w "
                   f"WHERE {key_is('w.thread_id', 'c.thread_id')} AND w.checkpoint_ns IS c.checkpoint_ns AND w.checkpoint_id < {bound} "
                   f"AND EXISTS (SELECT 1 FROM checkpoints AS k WHERE {in_ns} AND k.checkpoint_id = w.checkpoint_id))")
    # (their bytes: the namespace's less the kept ones', so only ``keep`` rows are read again)
    gone = (f"' ' || (count(*) - :keep) || ' ' || (sum({_CP_BYTES}) - (SELECT coalesce(sum({_CP_BYTES}), 0) FROM checkpoints AS k "
            f"WHERE {in_ns} AND k.checkpoint_id >= {bound})) || ' ' || {writes_gone}")
    special = f"(coalesce(max({_DELTA_ROW}), 0) OR instr(c.checkpoint_ns, ':') > 0)"
    return (
        f"SELECT CAST(c.thread_id AS BLOB), sum({_CP_BYTES}), count(*), "
        f"CASE WHEN count(*) <= :keep AND typeof(c.thread_id) = 'text' AND NOT {special} THEN NULL "
        f"ELSE (typeof(c.thread_id) = 'blob') || {special} || CASE WHEN count(*) <= :keep THEN '' ELSE {gone} END END "
        "FROM checkpoints AS c GROUP BY c.thread_id COLLATE BINARY, c.checkpoint_ns ORDER BY c.thread_id COLLATE BINARY, c.checkpoint_ns"
    )


# Rows and bytes per channel. The lengths are taken before the grouping (LIMIT -1 keeps the
# subquery whole): else the grouping's sort carries every value, not its length.
_CHANNELS = ("SELECT channel, count(*), coalesce(sum(n), 0) FROM (SELECT channel, length(value) AS n FROM writes LIMIT -1) "
             "GROUP BY channel ORDER BY 3 DESC, 1")

# The writes per thread, in the same order: bytes, and whether one holds pending Sends (special).
_WRITES_PER_THREAD = (
    f"SELECT CAST(thread_id AS BLOB), typeof(thread_id) = 'blob', coalesce(sum(length(value)), 0), coalesce(max(channel = '{TASKS}'), 0) "
    "FROM writes GROUP BY thread_id COLLATE BINARY ORDER BY thread_id COLLATE BINARY"
)


def _text(key: object) -> str | None:
    if isinstance(key, bytes):
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return key if isinstance(key, str) else None
