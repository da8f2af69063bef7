"""PostgreSQL's listing page sends only the threads that can be on it (stores/postgres/page.py):
odd threads ranked (by a bound of their instant) below the rows it asks for are left in the
server, those that may be above it are sent and dated exactly, and each page is the start of the
whole listing, by instant, whatever the ids' forms: the microsecond an upper-case id shares with
the last plain row, a ``ts`` in the same second, no ``ts``, a ``ts`` in another form."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

PLAIN = 100  # more than any page below asks for (2 * limit + 64 rows)


def _id(at: datetime, extra_ticks: int = 0, upper: bool = False) -> str:
    """A UUIDv6 id of ``at`` (plus ``extra_ticks`` of 100 ns inside its microsecond)."""
    from symfonic_cli.clock import UUID_EPOCH

    ticks = (at - UUID_EPOCH) // timedelta(microseconds=1) * 10 + extra_ticks
    h = f"{ticks:015x}"
    cid = f"{h[0:8]}-{h[8:12]}-6{h[12:15]}-8abc-0123456789ab"
    return cid.upper() if upper else cid


def _store(request, threads: dict[str, list[tuple[str, str | None]]]) -> str:
    """A store of ``threads``: key -> [(checkpoint id, ts or None for none)], each row a copy of
    a real checkpoint with its ``ts`` replaced."""
    import psycopg

    from tests.conftest import backend_for
    from tests.support.old_threads import write_aged

    backend = backend_for("postgres", request)
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, {"seed:_:s": timedelta(days=3)}, turns=1)
    with psycopg.connect(url) as conn:
        for key, rows in threads.items():
            for cid, ts in rows:
                conn.execute(
                    "INSERT INTO checkpoints (thread_id, checkpoint_id, checkpoint_ns, type, checkpoint, metadata) "
                    "SELECT %s, %s, checkpoint_ns, type, CASE WHEN %s::text IS NULL THEN checkpoint - 'ts' "
                    "ELSE jsonb_set(checkpoint, '{ts}', to_jsonb(%s::text)) END, metadata "
                    "FROM checkpoints WHERE thread_id = 'seed:_:s' LIMIT 1", (key, cid, ts, ts))
    return url


def _base() -> datetime:
    return (datetime.now(timezone.utc) - timedelta(hours=1)).replace(microsecond=500000)


def test_a_page_leaves_in_the_server_the_odd_threads_ranked_below_it(request):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    base = _base()
    at = [base + timedelta(seconds=i) for i in range(PLAIN)]
    threads = {f"p:_:{i:03d}": [(_id(t, 7), None)] for i, t in enumerate(at)}
    edge = at[95]  # the last plain row of a page of 5
    threads.update({
        "o:_:upper-above": [(_id(edge + timedelta(seconds=2.5), upper=True), None)],
        "o:_:upper-below": [(_id(at[10], upper=True), None)],
        "o:_:upper-same-us": [(_id(edge, 2, upper=True), None)],  # below as 100 ns ticks, level by the microsecond
        "o:_:ts-above": [((edge + timedelta(seconds=1.2)).isoformat(), (edge + timedelta(seconds=1.2)).isoformat())],
        "o:_:ts-below": [("step-1", at[20].isoformat())],
        "o:_:ts-near": [("step-1", (edge - timedelta(seconds=0.3)).isoformat().replace("+00:00", "Z"))],
        "o:_:no-ts": [("step-1", None)],
        "o:_:two-ids": [(_id(at[1]), None), (_id(at[2], upper=True), None)],
        "o:_:ts-offset": [("step-1", (edge - timedelta(seconds=30)).astimezone(timezone(timedelta(hours=5))).isoformat())],
    })
    url = _store(request, threads)
    with open_store(parse_location(url)) as st:
        whole = [(t.key, t.first_at, t.last_at, t.undatable) for t in st.list_threads()]
        assert len(whole) == len(threads) + 1
        for limit in (1, 5, 7, 20):
            page = [(t.key, t.first_at, t.last_at, t.undatable) for t in st.list_threads(limit=limit)]
            assert page == whole[:limit], limit
            sent = {t.key for t in st._thread_rows(None, None, limit, None, None) if t.odd}
            if limit == 20:  # the rows asked for beyond the page reach the threads of at[10] and at[20]
                continue
            # Bounded below the rows asked for (2 * limit + 64 by rank): never sent.
            assert not sent & {"o:_:upper-below", "o:_:ts-below", "o:_:no-ts"}, limit
            # May be above it (rank "~", or a bound above): sent, and dated exactly here.
            assert {"o:_:upper-above", "o:_:ts-above", "o:_:two-ids", "o:_:ts-offset"} <= sent, limit
        keys = [k for k, *_ in whole]
        # The same microsecond as p:_:095 (below it by its 100 ns ticks): before it, by key, and on
        # the page of 7 whose last plain row is p:_:093; a ts 0.3 s before it: after it.
        assert keys.index("o:_:upper-same-us") == keys.index("p:_:095") - 1 == 6
        assert keys.index("o:_:ts-near") == keys.index("p:_:095") + 1
        assert [k for k, *_ in whole[-1:]] == ["o:_:no-ts"] and whole[-1][3]


def test_a_page_whose_rank_is_taken_by_odd_threads_asks_again(request):
    """More odd threads ranked above the page than the rows asked for beyond it: the page is
    asked again for more rows, and is still the start of the whole listing."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    base = _base()
    threads = {f"p:_:{i:03d}": [(_id(base + timedelta(seconds=i)), None)] for i in range(PLAIN)}
    threads.update({f"u:_:{i:03d}": [(_id(base + timedelta(seconds=200 + i), upper=True), None)] for i in range(80)})
    url = _store(request, threads)
    with open_store(parse_location(url)) as st:
        whole = [(t.key, t.last_at) for t in st.list_threads()]
        for limit in (1, 3):
            assert [(t.key, t.last_at) for t in st.list_threads(limit=limit)] == whole[:limit]
        rows = list(st._thread_rows(None, None, 1, None, None))
        assert sum(t.odd for t in rows) == 80 and [t.key for t in rows if not t.odd] == ["p:_:099"]
    assert whole[0][0] == "u:_:079"


def test_a_rank_is_never_below_its_instant(request):
    """The bounds themselves, in the server: an id of any letter case in the same microsecond as an
    ordered id ranks above it whatever their 100 ns ticks, one a microsecond later ranks above,
    one a microsecond earlier below; a strict ``ts`` ranks above every id of its second."""
    import psycopg

    from symfonic_cli.stores.postgres.page import _id_ticks, _rank_of_ticks, _ts_ticks
    from tests.conftest import backend_for

    backend = backend_for("postgres", request)
    at = _base()
    with psycopg.connect(backend.new_store(scenarios=False)) as conn:
        def rank(sql: str, value: str) -> str:
            return conn.execute(f"SELECT {_rank_of_ticks(sql)} FROM (SELECT %s::text AS v) AS s", (value,)).fetchone()[0]

        plain = _id(at, 5)
        assert rank(_id_ticks("v"), _id(at, 0, upper=True)) > plain
        assert rank(_id_ticks("v"), _id(at + timedelta(microseconds=1), upper=True)) > _id(at + timedelta(microseconds=1), 9)
        assert rank(_id_ticks("v"), _id(at - timedelta(microseconds=1), 9, upper=True)) < plain
        second = at.replace(microsecond=0)
        for ts in (second.isoformat(), (second + timedelta(microseconds=999999)).isoformat().replace("+00:00", "Z")):
            assert _id(second + timedelta(microseconds=999999), 9) < rank(_ts_ticks("v"), ts) < _id(second + timedelta(seconds=1), 1)
