"""SQLite's listing pass split by key range over several read-only connections, one a thread
(stores/sqlite/listing.py, ``PARTS``): every page and the whole listing are the one-part pass's,
odd threads included, with bounds and tenants too; each connection it opens is read-only."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from symfonic_cli.stores.sqlite import parts as listing
from symfonic_cli.stores.sqlite.parts import key_ranges
from tests.threads.test_listing_page_floor import _id_days, _store


def _odd_store(request) -> str:
    """_store's odd and plain threads, and many one-checkpoint odd threads around them:
    upper-case UUIDv6 ids, ISO 8601 ids dated by the blob's head, undatable ones."""
    import ormsgpack

    from symfonic_cli.clock import UUID_EPOCH
    from tests.support.old_threads import now

    url = _store(request)
    conn = sqlite3.connect(url.removeprefix("sqlite:///"))
    with conn:
        rows = []
        for i in range(300):
            at = now() - timedelta(hours=i % 53, minutes=i)
            ticks = f"{(at - UUID_EPOCH) // timedelta(microseconds=1) * 10:015x}"
            rows.append((f"m:_:upper-{i:04d}", f"{ticks[:8]}-{ticks[8:12]}-6{ticks[12:]}-8000-{i:012d}".upper(), b"\x80"))
            ts = (at - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")
            rows.append((f"z:_:iso-{i:04d}", ts, ormsgpack.packb({"v": 4, "ts": ts, "id": ts, "channel_values": {"messages": []}})))
            if i % 25 == 0:
                rows.append((f"n:_:nodate-{i:04d}", f"step-{i}", ormsgpack.packb({"v": 4, "id": "step", "channel_values": {}})))
        conn.executemany("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) "
                         "VALUES (?, '', ?, 'msgpack', ?, '{}')", rows)
        # Plain threads with the same ids at both ends of the keys (in different parts): a tie
        # on the greatest id, ordered by key across the parts.
        for twin in ("a:_:twin", "zz:_:twin", "p:_:twin"):
            conn.execute("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
                         "SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                         "WHERE thread_id = 'p:_:plain-2'", (twin,))
    conn.close()
    return url


def _listings(st, limits, bounds_list, tenants) -> dict:
    """Every listing compared: pages, the whole listing, the page's rows as the pass hands them."""
    out: dict = {}
    rows = lambda ts: [(t.key, t.checkpoints, t.first_checkpoint_id, t.last_checkpoint_id, t.first_at, t.last_at, t.undatable) for t in ts]  # noqa: E731
    for bounds in bounds_list:
        for tenant in tenants:
            for limit in limits:
                out[(tuple(bounds.items()), tenant, limit)] = rows(st.list_threads(limit=limit, tenant=tenant, **bounds))
                passed = list(st._thread_rows(tenant, None, limit, bounds.get("last_before"), bounds.get("last_from")))
                odd = [t for t in passed if t.odd]
                assert passed[:len(odd)] == odd  # the odd rows first
                out[("pass", tuple(bounds.items()), tenant, limit)] = (sorted(rows(odd)), rows(passed[len(odd):]))
    return out


@pytest.mark.parametrize("parts", [2, 3, 4])
def test_a_split_pass_lists_what_one_pass_lists(request, monkeypatch, parts):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.stores.sqlite.connect import SqliteStore

    url = _odd_store(request)
    opened: list[int] = []
    real = SqliteStore._another_reader

    def reader(self):
        conn = real(self)
        # Opened as the first: read-only, whatever the statement.
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
        with pytest.raises(sqlite3.OperationalError):
            conn.execute("CREATE TABLE symfonic_probe (x)")
        opened.append(1)
        return conn

    monkeypatch.setattr(SqliteStore, "_another_reader", reader)
    with open_store(parse_location(url)) as st:
        monkeypatch.setattr(listing, "PARTS", None)  # a small store: one part
        assert key_ranges(st, None, None) is None
        bounds_list = [{}, {"last_before": _id_days(st, 1.5)}, {"last_from": _id_days(st, 1.2)}]
        limits = (1, 2, 3, 7, 20, 150, 1000, None)
        tenants = (None, "m", "z", "p")
        one = _listings(st, limits, bounds_list, tenants)
        assert not opened
        monkeypatch.setattr(listing, "PARTS", parts)
        ranges = key_ranges(st, None, None)
        assert ranges is not None and len(ranges) == parts
        assert ranges[0][0] is None and ranges[-1][1] is None  # every key is in one range
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        assert sorted(r[1] for r in ranges[:-1]) == [r[1] for r in ranges[:-1]]
        m = key_ranges(st, "m", None)
        assert m is not None and m[0][0] == "m:" and m[-1][1] == "m;"  # the tenant's range, split
        split = _listings(st, limits, bounds_list, tenants)
        assert opened
    assert split.keys() == one.keys()
    for k in one:
        assert split[k] == one[k], k
    whole = one[((), None, None)]
    assert len(whole) > 600 and any(r[6] for r in whole)  # undatable threads are listed too
    keys = [r[0] for r in whole]
    at = keys.index("a:_:twin")
    assert keys[at:at + 4] == ["a:_:twin", "p:_:plain-2", "p:_:twin", "zz:_:twin"]


def test_every_connection_a_split_listing_opens_reads_only(sqlite_store, monkeypatch):
    """The read-only proof of tests/stores/test_sqlite_open.py with the listing in parts: a
    quiescent WAL store (immutable), then one an application has open and writes (mode=ro)."""
    import hashlib
    import json
    from pathlib import Path

    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.stores.test_sqlite_open import snapshot
    from tests.support.cli import run
    from tests.support.scenarios import long_thread

    def listed() -> list:
        res = run("threads", "list", "--format", "json", "--store", str(sqlite_store))
        assert res.code == 0, res.err
        assert run("threads", "list", "--limit", "3", "--store", str(sqlite_store)).code == 0
        return json.loads(res.out)

    monkeypatch.setattr(listing, "PARTS", 3)
    before = snapshot(sqlite_store.parent)
    split = listed()
    assert snapshot(sqlite_store.parent) == before
    monkeypatch.setattr(listing, "PARTS", None)
    assert listed() == split
    conn = sqlite3.connect(str(sqlite_store), check_same_thread=False)
    try:
        long_thread(SqliteSaver(conn), "live:_:writer", 2)  # the application has -wal and -shm open
        wal = Path(f"{sqlite_store}-wal")
        hashes = lambda: [hashlib.sha256(p.read_bytes()).hexdigest() for p in (sqlite_store, wal)]  # noqa: E731
        before_wal = hashes()
        one = listed()
        monkeypatch.setattr(listing, "PARTS", 3)
        assert listed() == one and "live:_:writer" in [t["key"] for t in one]
        assert hashes() == before_wal
    finally:
        conn.close()


def test_the_parts_follow_the_idle_cpus(monkeypatch):
    """A busy machine lists in one part (the parts would only take turns); an idle one in one
    part a usable CPU."""
    import os

    usable = len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "getloadavg", lambda: (1000.0, 1000.0, 1000.0))
    assert listing._idle_cpus() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert listing._idle_cpus() == usable
    monkeypatch.setattr(os, "getloadavg", lambda: ((os.cpu_count() or 1) - 1.0, 0.0, 0.0))
    assert listing._idle_cpus() == min(2, len(os.sched_getaffinity(0)))  # one CPU idle, and this process's
