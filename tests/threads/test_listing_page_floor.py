"""SQLite's page (``_thread_rows`` with a limit): a one-checkpoint odd thread that its blob's
head proves undatable or dated before the page's last plain row is left out, unparsed;
every other odd thread is dated as the whole listing dates it. Each page stays the start of the
whole listing, sorted by instant (issue #45: a page costs a page, the exact instant rule kept)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta


def _ts(days: float) -> str:
    from tests.support.old_threads import now

    return (now() - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")  # LangGraph's 32 characters


def _blobs() -> dict[str, tuple[str, str, bytes]]:
    """key -> (checkpoint id, type, blob) of one-checkpoint odd threads, beside plain threads 1 to 3 days old."""
    import ormsgpack

    old, new = _ts(10), _ts(0.5)
    layout = lambda ts, values=None: ormsgpack.packb(  # noqa: E731 - LangGraph's own layout: v, ts, id, channel_values
        {"v": 4, "ts": ts, "id": ts, "channel_values": {"messages": []} if values is None else values})
    # A map whose "ts" comes twice (no "id" after the first): the whole reading keeps the second.
    twice = (b"\x85\xa1v\x04\xa2ts\xd9\x20" + old.encode() + b"\xa2ts\xd9\x20" + new.encode()
             + b"\xa2id\xa1x\xaechannel_values\x80")
    return {
        "o:_:iso-old": (old, "msgpack", layout(old)),
        "o:_:iso-new": (new, "msgpack", layout(new)),
        "o:_:iso-bad-date": (old, "msgpack", layout(old[:5] + "13" + old[7:])),
        "o:_:iso-old-bad-values": (old, "msgpack", layout(old, values=b"\xc1")),
        "o:_:ts-twice": (old, "msgpack", twice),
        "o:_:no-ts": ("step-1", "msgpack", ormsgpack.packb({"v": 4, "id": "step-1", "channel_values": {}})),
        "o:_:ts-late-new": (new, "msgpack", ormsgpack.packb({"pad": "x" * 2000, "ts": new, "channel_values": {}})),
        "o:_:json-new": (new, "json", ormsgpack.packb({"ts": new})),
    }


def _store(request) -> str:
    from tests.conftest import backend_for
    from tests.support.old_threads import write_aged

    backend = backend_for("sqlite", request)
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, {f"p:_:plain-{d}": timedelta(days=d) for d in (1, 2, 3)}, turns=1)
    conn = sqlite3.connect(url.removeprefix("sqlite:///"))
    with conn:
        for key, (cid, type_, blob) in _blobs().items():
            conn.execute("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) "
                         "VALUES (?, '', ?, ?, ?, '{}')", (key, cid, type_, blob))
        # An upper-case UUIDv6 id, dated by its time: the oldest plain thread's, the newest's.
        for key, plain in (("o:_:upper-old", "p:_:plain-3"), ("o:_:upper-new", "p:_:plain-1")):
            conn.execute("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) "
                         "SELECT ?, checkpoint_ns, upper(checkpoint_id), type, checkpoint, metadata FROM checkpoints "
                         "WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1", (key, plain))
    conn.close()
    return url


def test_a_page_leaves_out_the_odd_threads_its_last_plain_row_proves_after_it(request):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = _store(request)
    with open_store(parse_location(url)) as st:
        whole = [(t.key, t.first_at, t.last_at, t.checkpoints, t.undatable) for t in st.list_threads()]
        by_key = {w[0]: w for w in whole}
        assert by_key["o:_:ts-twice"][2] == by_key["o:_:iso-new"][2] is not None  # the second ts
        assert by_key["o:_:no-ts"][4] and by_key["o:_:iso-bad-date"][4]
        rows = list(st._thread_rows(None, None, None, None, None))  # no limit: every odd thread, first
        odd = {t.key for t in rows if t.odd}
        assert {k for k in by_key if k.startswith("o:")} == odd == {t.key for t in rows[:len(odd)]}
        assert [t.key for t in rows[len(odd):]] == ["p:_:plain-1", "p:_:plain-2", "p:_:plain-3"]
        # A full page of 2 plain rows (1 and 2 days old): what is proved before the second is left out.
        page = {t.key: t for t in st._thread_rows(None, None, 2, None, None) if t.odd}
        # And o:_:upper-new (a day old): two odd threads half a day old come before it.
        assert set(page) == odd - {"o:_:iso-old", "o:_:iso-bad-date", "o:_:iso-old-bad-values", "o:_:no-ts", "o:_:upper-old", "o:_:upper-new"}
        for t in page.values():  # the ones kept are dated as the whole listing dates them, or left to it
            assert t.last_at in (None, by_key[t.key][2])
        # A page larger than the plain rows has no floor: the 4 newest dated odd threads (no
        # undatable one can follow them onto it), and the ones read after; larger than every
        # thread: every odd thread.
        assert {t.key for t in st._thread_rows(None, None, 4, None, None) if t.odd} == {
            "o:_:iso-new", "o:_:ts-twice", "o:_:upper-new", "o:_:upper-old", "o:_:ts-late-new", "o:_:json-new"}
        assert {t.key for t in st._thread_rows(None, None, 20, None, None) if t.odd} == odd
        for limit in range(1, len(whole) + 1):
            got = [(t.key, t.first_at, t.last_at, t.checkpoints, t.undatable) for t in st.list_threads(limit=limit)]
            assert got == whole[:limit], limit
        for bounds in ({"last_before": _id_days(st, 1.5)}, {"last_from": _id_days(st, 2.5)}):
            bounded = [t.key for t in st.list_threads(**bounds)]
            for limit in (1, 2, 3, len(bounded)):
                assert [t.key for t in st.list_threads(limit=limit, **bounds)] == bounded[:limit], (bounds, limit)


def _id_days(st, days: float) -> str:
    from symfonic_cli.clock import id_at
    from tests.support.old_threads import now

    return id_at(now() - timedelta(days=days))


def test_a_page_holds_the_odd_threads_that_can_be_on_it_however_many_there_are(request):
    """Many one-checkpoint odd threads newer than every plain one (upper-case UUIDv6 ids dated by
    the id, ISO 8601 ids dated by the blob's head, more than a batch of heads, and undatable
    ones): a page's pass hands over at most ``limit`` of them (the newest), so its memory is
    the page's; each page is still the start of the whole listing, with bounds too."""
    import ormsgpack

    from symfonic_cli.clock import UUID_EPOCH
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from tests.support.old_threads import now

    url = _store(request)
    conn = sqlite3.connect(url.removeprefix("sqlite:///"))
    with conn:
        rows = []
        for i in range(600):
            at = now() - timedelta(hours=i % 23, minutes=i)
            ticks = f"{(at - UUID_EPOCH) // timedelta(microseconds=1) * 10:015x}"
            rows.append((f"m:_:upper-{i:04d}", f"{ticks[:8]}-{ticks[8:12]}-6{ticks[12:]}-8000-{i:012d}".upper(), b"\x80"))
            ts = (at - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")
            rows.append((f"m:_:iso-{i:04d}", ts, ormsgpack.packb({"v": 4, "ts": ts, "id": ts, "channel_values": {"messages": []}})))
            if i % 50 == 0:
                rows.append((f"m:_:nodate-{i:04d}", f"step-{i}", ormsgpack.packb({"v": 4, "id": "step", "channel_values": {}})))
        conn.executemany("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) "
                         "VALUES (?, '', ?, 'msgpack', ?, '{}')", rows)
    conn.close()
    with open_store(parse_location(url)) as st:
        whole = [(t.key, t.last_at, t.undatable) for t in st.list_threads()]
        assert len(whole) > 1200 and whole[-1][2]
        for limit in (1, 20, 700):
            odd = [t for t in st._thread_rows(None, None, limit, None, None) if t.odd]
            dated = [t.key for t in odd if t.last_at is not None or t.undatable]
            # _store's two odd threads whose blobs are read after, by key, come too.
            assert 0 < len(dated) <= limit and len(odd) - len(dated) == 2, limit
            assert [(t.key, t.last_at, t.undatable) for t in st.list_threads(limit=limit)] == whole[:limit], limit
        assert {t.key for t in st._thread_rows(None, None, 2000, None, None) if t.odd} >= {k for k, _, u in whole if u}
        bounds = {"last_before": _id_days(st, 0.5)}
        bounded = [t.key for t in st.list_threads(**bounds)]
        assert 20 < len(bounded) < len(whole)
        assert len([t for t in st._thread_rows(None, None, 20, bounds["last_before"], None) if t.odd]) <= 20 + 2
        assert [t.key for t in st.list_threads(limit=20, **bounds)] == bounded[:20]
