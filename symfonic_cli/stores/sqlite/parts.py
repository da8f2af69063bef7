"""SQLite's listing pass in parts: a large store's keys split into ranges, each part's pass on
its own read-only connection in its own thread (sqlite3 lets the GIL go while SQLite steps, so
the parts run on as many CPUs), merged exactly by stores/sqlite/listing.py."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.stores.sqlite._common import SqliteSection
from symfonic_cli.stores.sqlite.blobkeys import _key_bytes
from symfonic_cli.threadkey import prefix_upper_bound, tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A listing's pass in parts (key_ranges): at most this many, one an idle CPU, and only from this
# many checkpoints (estimated by the greatest rowid): below, the connections and threads cost
# more than the other CPUs give back. PARTS set (the tests): that many parts, whatever the size.
MAX_PARTS = 4
SPLIT_FROM_ROWS = 100_000
PARTS: int | None = None
_SAMPLES = 32  # rows sampled a part to place the split points


def _idle_cpus() -> int:
    """The CPUs this process may use that the machine leaves idle (this one counted in): on a
    busy machine the parts only take turns, each connection's cost for nothing. The load
    average is the whole machine's, so it is set against the machine's CPUs."""
    import os

    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not told: the usable CPUs
        return usable
    return max(1, min(usable, round((os.cpu_count() or usable) - load) + 1))


def _range_where(lo: Any, hi: Any) -> tuple[str, Any]:
    conds = [f"thread_id COLLATE BINARY {op} ?" for op, edge in ((">=", lo), ("<", hi)) if edge is not None]
    return ("WHERE " + " AND ".join(conds) if conds else ""), [edge for edge in (lo, hi) if edge is not None]


def merged_listing(streams: list[Any]) -> Iterator[tuple]:
    """The parts' rows (each part's odd rows first, then its others by max id DESC, key) as one
    pass orders them: every odd row first (list_threads orders those), then the others merged by
    max id DESC; a tie goes to the earlier part, whose keys are the lesser (heapq.merge breaks
    ties by stream order, reversed or not). Memory: a row a part."""
    import heapq
    from itertools import chain
    from operator import itemgetter

    plain = []
    for stream in streams:
        for row in stream:
            if not row[4]:
                plain.append(chain((row,), stream))
                break
            yield row
    yield from heapq.merge(*plain, key=itemgetter(3), reverse=True)


def close_all(conns: list[Any]) -> None:
    for conn in conns:
        conn.close()


def key_ranges(store: SqliteSection, tenant: str | None, sub_tenant: str | None) -> list[tuple[Any, Any]] | None:
    """``[lo, hi)`` key ranges (None: unbounded) splitting a large listing's pass into parts
    of about as many checkpoints, one an idle CPU (_idle_cpus); None: one part (a small store; a writable
    or non-UTF-8 one, or one declaring a collation: there a key range is no byte range of the
    index). The split points are the keys of rows sampled by rowid: they only balance the
    work, any points give the same listing."""
    if store.writable or store.uri is None or store.keys_folded or not store.utf8:
        return None
    n = min(MAX_PARTS, PARTS if PARTS is not None else _idle_cpus())
    if n < 2:
        return None
    top = store.conn.execute("SELECT max(rowid) FROM checkpoints").fetchone()[0]
    if type(top) is not int or PARTS is None and top < SPLIT_FROM_ROWS:
        return None
    lo: Any = None
    hi: Any = None
    if tenant is not None:
        lo = tenant_prefix(tenant, sub_tenant)
        hi = prefix_upper_bound(lo)
        hi = b"" if hi is None else hi  # above every text (no key here is a BLOB)
    low = None if lo is None else _key_bytes(lo)
    high = None if type(hi) is not str else _key_bytes(hi)
    count = _SAMPLES * n
    sql = ("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?) "
           "SELECT (SELECT CASE WHEN typeof(thread_id) = 'text' THEN CAST(thread_id AS BLOB) END FROM checkpoints "
           "WHERE rowid >= 1 + s.i * ? / ? ORDER BY rowid LIMIT 1) FROM s")
    keys = sorted({k for (k,) in store.conn.execute(sql, (count, top, count))
                   if type(k) is bytes and (low is None or k >= low) and (high is None or k < high)})
    if PARTS is None and len(keys) * top < SPLIT_FROM_ROWS * count:  # a tenant too small to split
        return None
    points: list[str] = []
    for i in range(1, n):
        if not keys:
            break
        point = keys[len(keys) * i // n]
        if (low is None or point > low) and (not points or point > _key_bytes(points[-1])):
            try:
                points.append(point.decode("utf-8"))
            except UnicodeDecodeError:  # not a key sqlite3 can hand back: no split there
                continue
    if not points:
        return None
    edges = [lo, *points, hi]
    return list(zip(edges, edges[1:]))


def in_parts(store: SqliteSection, ranges: list[tuple[Any, Any]], job: Any) -> tuple[list[Any], list[Any]]:
    """``job(conn, where, params)`` for each key range at once: the first on the store's connection,
    the others each on a read-only connection of its own, in a thread (sqlite3 lets the GIL
    go while SQLite steps: the parts' passes run on as many cores). Their results in range
    order, and the connections opened, for the caller to close once it has read their rows.

    A writer committing meanwhile: each part reads the snapshot its own pass starts in, so
    one part may show its threads before a commit and another its threads after it. The
    ranges are disjoint and cover the keys: no thread is shown twice or lost."""
    import threading  # not concurrent.futures: its import (logging) costs a small page's pass

    done: list[Any] = [None] * len(ranges)
    failed: list[BaseException] = []

    def part(i: int, conn: Any) -> None:
        try:
            done[i] = job(conn, *_range_where(*ranges[i]))
        except BaseException as exc:  # raised in the caller's thread, once every part is done
            failed.append(exc)

    readers: list[Any] = []
    threads: list[threading.Thread] = []
    try:
        for i in range(1, len(ranges)):
            readers.append(store._another_reader())
            threads.append(threading.Thread(target=part, args=(i, readers[-1]), name="symfonic-listing-part", daemon=True))
            threads[-1].start()
        done[0] = job(store.conn, *_range_where(*ranges[0]))
        for t in threads:
            t.join()
    except BaseException:  # Ctrl-C: the other parts stop now, before their connections close
        for conn in readers:
            conn.interrupt()
        for t in threads:
            t.join()
        close_all(readers)
        raise
    if failed:
        close_all(readers)
        raise failed[0]
    return done, readers
