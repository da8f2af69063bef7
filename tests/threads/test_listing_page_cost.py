"""A page costs a page (issue #45): ``threads list --limit N`` reads the run state (status, size,
first message) of the rows it prints only, and its order is the whole listing's.

SQLite's statements are counted by a trace callback on the store's own connection: the old
listing read every thread's totals by key (one statement a thread) to print twenty.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import timedelta

import pytest

from tests.support.environment import run_in

COPIES = 40  # the scenario store's threads, copied under suffixed keys: a few hundred threads


@pytest.fixture(scope="module")
def wide_store(run_state_stores, tmp_path_factory):
    """The run-state threads (every status; tests/support/run_state_scenarios.py) copied under
    suffixed keys."""
    _, url, _ = run_state_stores("sqlite")
    path = tmp_path_factory.mktemp("wide") / "wide.db"
    shutil.copyfile(url, path)
    conn = sqlite3.connect(path)
    cols = {t: ", ".join(r[1] for r in conn.execute(f"PRAGMA table_info({t})") if r[1] != "thread_id") for t in ("checkpoints", "writes")}
    for i in range(1, COPIES):
        for table, names in cols.items():
            conn.execute(f"INSERT INTO {table} (thread_id, {names}) SELECT thread_id || ?, {names} FROM {table} "
                         "WHERE instr(thread_id, '-copy') = 0", (f"-copy{i:02d}",))
    conn.commit()
    conn.close()
    return path


def _keys(path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {k for (k,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints") if isinstance(k, str)}
    finally:
        conn.close()


@pytest.fixture
def traced(monkeypatch):
    """Every statement SQLite runs for the command (bound values inlined), on its real connection."""
    statements: list[str] = []
    connect = sqlite3.connect

    def tracing(*args, **kwargs):
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite3, "connect", tracing)
    return statements


def _named(statements: list[str], keys: set[str]) -> set[str]:
    """The keys a statement names: a thread read by key (a bound key inlined as a literal)."""
    return {k for k in keys if any(f"'{k}'" in s for s in statements)}


def _whole(path, *args: str) -> list[dict]:
    r = run_in("threads", "list", "-s", str(path), "-f", "json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("args", [
    ("-f", "table"),  # the default columns: status is one
    ("-f", "json"),  # every field but no run state: no thread read by key but the odd ones
    ("-f", "json", "--columns", "key,status,checkpoints,size_bytes"),
    ("-f", "text", "--with-size"),
    ("-f", "csv", "--columns", "key,status,first"),
])
def test_a_page_reads_the_run_state_of_its_rows_only(wide_store, traced, args):
    keys = _keys(wide_store)
    every = _whole(wide_store, "--columns", "key,status")  # before tracing what the page does
    odd = _odd(wide_store)
    traced.clear()
    r = run_in("threads", "list", "-s", str(wide_store), "--limit", "20", *args)
    assert r.code == 0, r.err
    assert len(keys) > 10 * 20
    printed = [row["key"] for row in every[:20]]
    for key in printed:
        assert key in r.out
    named = _named(traced, keys)
    # Only the printed threads are read by key (and threads whose ids need the exact instant rule,
    # dated checkpoint by checkpoint wherever they are in the listing).
    assert named - odd <= set(printed), sorted(named - odd - set(printed))[:5]
    assert len(traced) < 6 * 20 + 30, len(traced)


def test_a_status_filter_reads_until_its_page_is_full(wide_store, traced):
    every = _whole(wide_store, "--columns", "key,status")
    wanted = [row["key"] for row in every if row["status"] == "interrupted"]
    assert len(wanted) > 3
    traced.clear()
    got = _whole(wide_store, "--status", "interrupted", "--limit", "3")
    assert [row["key"] for row in got] == wanted[:3]
    assert all(row["status"] == "interrupted" for row in got)
    # Read in the listing's order, a batch at a time, stopped once three are kept: never the
    # threads after the last batch it needed.
    from symfonic_cli.listing import STATE_BATCH

    last = max(i for i, row in enumerate(every) if row["key"] == wanted[2])
    read, size = 0, 3  # the batches: the page, then four times as many each, up to STATE_BATCH
    while read <= last:
        read, size = read + size, min(size * 4, STATE_BATCH)
    assert read < len(every)
    named = _named(traced, _keys(wide_store))
    assert named - _odd(wide_store) <= {row["key"] for row in every[:read]}, sorted(named - {row["key"] for row in every[:read]})[:5]


def _odd(path) -> set[str]:
    """Threads with an id not in the ordered form (dated checkpoint by checkpoint, by key)."""
    from symfonic_cli.clock import ORDERED_ID_GLOB

    conn = sqlite3.connect(path)
    try:
        return {k for (k,) in conn.execute(f"SELECT DISTINCT thread_id FROM checkpoints WHERE NOT checkpoint_id GLOB '{ORDERED_ID_GLOB}'")}
    finally:
        conn.close()


OPTIONS = [
    {}, {"limit": 7}, {"statuses": {"done"}}, {"statuses": {"interrupted", "error"}, "limit": 4}, {"with_size": True},
    {"statuses": {"done", "error", "interrupted", "pending"}, "with_size": True, "limit": 30}, {"tenant": "acme"},
    {"session": "s1", "statuses": {"done"}},
]


def _both(store, tenant=None, limit=None, statuses=None, with_size=False, session=None):
    """The streamed records and the records of the listing sorted whole (threadstate/listing.py,
    the path every other --sort takes), through the library on one open store."""
    from symfonic_cli.listing import paged_run_states, run_state_record
    from symfonic_cli.threadkey import tenant_prefix
    from symfonic_cli.threadstate.listing import run_state_rows

    streamed = list(paged_run_states(store, tenant, None, limit, statuses, session=session, with_size=with_size, window=None))
    rows = run_state_rows(store, prefix=tenant_prefix(tenant, None) if tenant else None, session=session, statuses=statuses,
                          sort="last-activity", reverse=False, with_size=with_size, limit=limit)
    return streamed, [run_state_record(r, r.status, r.size_bytes, statuses, with_size) for r in rows]


def _label(options: dict) -> str:
    return ",".join(f"{k}={'+'.join(sorted(v)) if isinstance(v, set) else v}" for k, v in sorted(options.items())) or "plain"


@pytest.mark.parametrize("options", OPTIONS, ids=_label)
def test_the_streamed_listing_is_the_listing_sorted_whole(wide_store, options):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(str(wide_store))) as st:
        streamed, whole = _both(st, **options)
    assert streamed == whole
    assert streamed or options.get("session")


def test_every_kind_streams_the_mixed_id_listing_as_sorted_whole(any_kind):
    """Threads whose ids need the exact instant rule (upper case, ISO 8601, undatable) merged
    into the database's order exactly where the listing sorted whole puts them."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from tests.threads.test_activity_instant import _store

    url = _store(any_kind)
    with open_store(parse_location(url)) as st:
        for options in OPTIONS:
            streamed, whole = _both(st, **options)
            assert streamed == whole, options
        streamed, _ = _both(st)
    assert {r["key"] for r in streamed} >= {"acme:_:upper-now", "acme:_:iso-old", "acme:_:nodate"}


def test_a_page_with_odd_threads_is_the_start_of_the_listing_sorted_whole(any_kind):
    """A page's odd threads are met in the same pass as its plain ones (SQLite hands them over as
    it meets them, whatever their number): every kind, each page is the start of the whole listing."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from tests.threads.test_activity_instant import FORMS, _store

    url = _store(any_kind)
    with open_store(parse_location(url)) as st:
        whole = [(t.key, t.first_at, t.last_at, t.checkpoints, t.undatable) for t in st.list_threads()]
        assert len(whole) > len(FORMS)  # plain threads after the odd ones
        for limit in (1, 2, len(FORMS), len(FORMS) + 1, len(whole)):
            page = [(t.key, t.first_at, t.last_at, t.checkpoints, t.undatable) for t in st.list_threads(limit=limit)]
            assert page == whole[:limit], limit


_ID = "1f1f2384-ab91-66cb-bfff-139f4ec94f5a"
_LATER = "1f1f2384-ab94-6624-8000-2804cee6b04b"
# Each thread's ids: a page flags it odd exactly when one of them is not in the ordered form.
_CRAFTED = {
    "c:_:plain": [_ID],
    "c:_:plain-two": [_ID, _LATER],
    "c:_:upper": [_ID.upper()],
    "c:_:mixed": [_ID, _LATER.upper()],
    "c:_:non-hex": [_ID[:20] + "g" + _ID[21:]],
    "c:_:dash-for-hex": [_ID[:10] + "-" + _ID[11:]],
    "c:_:non-ascii": [_ID[:30] + "é" + _ID[31:]],
    "c:_:version-1": [_ID[:14] + "1" + _ID[15:]],
    "c:_:two-in-one": [_ID, f"{_ID[:-1]}0,{_LATER}"],
    "c:_:long": [_ID + "0"],
    "c:_:short-and-plain": [_ID[:35], _LATER],
    "c:_:empty-and-plain": ["", _LATER],
}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_page_flags_odd_exactly_the_threads_with_an_id_not_in_the_ordered_form(kind, request):
    """The page's test of each thread's ids in the database (SQLite: a GLOB or the ids joined;
    PostgreSQL: a LIKE and a regex, or the ids joined) says what clock.is_ordered_id says of
    every id: near misses of every kind are odd, whatever the page's size."""
    from symfonic_cli.clock import is_ordered_id
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from tests.conftest import backend_for
    from tests.support.old_threads import write_aged

    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, {"c:_:seed": timedelta(days=1)})
    cols = "checkpoint_ns, parent_checkpoint_id, type, checkpoint, metadata"
    if kind == "sqlite":
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        mark = "?"
    else:
        import psycopg

        conn = psycopg.connect(url)
        mark = "%s"
    with conn:
        for key, ids in _CRAFTED.items():
            for cid in ids:
                conn.execute(f"INSERT INTO checkpoints (thread_id, checkpoint_id, {cols}) SELECT {mark}, {mark}, {cols} "
                             f"FROM checkpoints WHERE thread_id = 'c:_:seed' LIMIT 1", (key, cid))
    conn.close()
    odd = {k for k, ids in _CRAFTED.items() if not all(is_ordered_id(i) for i in ids)}
    assert odd and odd < set(_CRAFTED)
    with open_store(parse_location(url)) as st:
        rows = list(st._thread_rows(None, None, None, None, None))
        assert {t.key for t in rows[:len(odd)]} == odd and not any(t.odd for t in rows[len(odd):])
        for limit in (1, 20):  # 20: more than the threads, so every odd thread can be on the page
            rows = list(st._thread_rows(None, None, limit, None, None))
            assert {t.key for t in rows if t.odd} <= odd and not odd & {t.key for t in rows if not t.odd}, limit
            assert limit == 1 or {t.key for t in rows if t.odd} == odd
            assert [t.key for t in rows if not t.odd][:1] in (["c:_:plain-two"], ["c:_:seed"])
        whole = [(t.key, t.last_at, t.undatable) for t in st.list_threads()]
        for limit in (1, 3, len(whole)):
            assert [(t.key, t.last_at, t.undatable) for t in st.list_threads(limit=limit)] == whole[:limit]


@pytest.mark.postgres
@pytest.mark.parametrize("collation", ["c", "ci"])
def test_a_page_of_odd_threads_under_a_case_insensitive_key_collation(request, collation):
    """PostgreSQL with thread_id under a nondeterministic (case-insensitive) collation: odd
    threads (upper-case and ISO 8601 ids) are dated thread by thread (no batch read by key
    there), each page is the start of the whole listing, and each odd thread's activity is its
    own (its case twin's checkpoints are not read with it)."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from tests.stores.test_postgres_status_collations import _store
    from tests.support.rewritten_ids import rewrite_ids

    url = _store(request, collation)
    rewrite_ids("postgres", url, "acme:_:f", "upper")
    rewrite_ids("postgres", url, "acme:_:Z", "iso")
    with open_store(parse_location(url)) as st:
        whole = [(t.key, t.last_at, t.undatable) for t in st.list_threads()]
        assert {"acme:_:f", "acme:_:Z", "ACME:_:BOB", "acme:_:bob"} <= {k for k, _, _ in whole}
        for key in ("acme:_:f", "acme:_:Z"):
            assert [at for k, at, _ in whole if k == key] == [st.thread_activity(key)[1]]
        for limit in (1, 2, 5, len(whole)):
            assert [(t.key, t.last_at, t.undatable) for t in st.list_threads(limit=limit)] == whole[:limit], limit


@pytest.mark.parametrize("collation", ["", " COLLATE NOCASE"])
def test_a_page_dates_one_checkpoint_odd_threads_in_its_pass_as_the_whole_listing_does(request, tmp_path, collation):
    """SQLite's page reads the head of a one-checkpoint odd thread's blob in its pass: a ts past
    the head's bytes, no ts, a ts not a string, an empty or text blob, another type, case twins
    under a folding key collation: each thread dated (or undatable) as the whole listing dates it
    checkpoint by checkpoint."""
    import ormsgpack

    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from tests.conftest import backend_for
    from tests.support.old_threads import write_aged

    backend = backend_for("sqlite", request)
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, {"c:_:seed": timedelta(days=1)})
    ts = "2026-11-30T08:24:52.123456+00:00"
    blobs = {
        "c:_:ts-late": ("msgpack", ormsgpack.packb({"pad": "x" * 2000, "ts": ts, "channel_values": {}})),
        "c:_:ts-first": ("msgpack", ormsgpack.packb({"v": 4, "ts": ts, "id": ts, "channel_values": {"messages": []}})),
        "c:_:no-ts": ("msgpack", ormsgpack.packb({"v": 4, "id": "step-1", "channel_values": {}})),
        "c:_:ts-number": ("msgpack", ormsgpack.packb({"v": 4, "ts": 12, "channel_values": {}})),
        "c:_:empty": ("msgpack", b""),
        "c:_:text": ("msgpack", ormsgpack.packb({"ts": ts}).decode("latin-1")),
        "c:_:json": ("json", json.dumps({"ts": ts}).encode()),
        "c:_:cut": ("msgpack", ormsgpack.packb({"pad": "x" * 600})[:520]),
        "c:_:twin": ("msgpack", ormsgpack.packb({"v": 4, "ts": ts.replace("11-30", "11-20"), "channel_values": {}})),
        "c:_:TWIN": ("msgpack", ormsgpack.packb({"v": 4, "ts": ts.replace("11-30", "11-10"), "channel_values": {}})),
    }
    path = url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    with conn:
        for key, (type_, blob) in blobs.items():
            conn.execute("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) "
                         "VALUES (?, '', ?, ?, ?, '{}')", (key, ts if key != "c:_:TWIN" else ts[:-6] + "Z", type_, blob))
    conn.close()
    if collation:  # the same rows in tables whose thread_id folds case
        url = f"sqlite:///{tmp_path / 'folded.db'}"
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        with conn:
            conn.execute("ATTACH DATABASE ? AS src", (path,))
            for (sql,) in conn.execute("SELECT sql FROM src.sqlite_master WHERE type = 'table'").fetchall():
                conn.execute(sql.replace("thread_id TEXT NOT NULL", f"thread_id TEXT{collation} NOT NULL"))
            for table in ("checkpoints", "writes"):
                conn.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")
        conn.close()
    with open_store(parse_location(url)) as st:
        whole = [(t.key, t.first_at, t.last_at, t.undatable) for t in st.list_threads()]
        by_key = {w[0]: w for w in whole}
        assert by_key["c:_:ts-late"][2] == by_key["c:_:ts-first"][2] is not None
        assert by_key["c:_:no-ts"][3] and by_key["c:_:empty"][3]
        assert by_key["c:_:twin"][2].day == 20 and by_key["c:_:TWIN"][2].day == 10
        # A page of 4 (one plain thread: no floor; three odd threads dated in the pass, fewer than
        # 4: the undatable ones can follow them onto it, so every odd thread comes).
        in_pass = {t.key: t for t in st._thread_rows(None, None, 4, None, None) if t.odd}
        assert set(in_pass) == set(blobs)
        assert in_pass["c:_:ts-first"].last_at == by_key["c:_:ts-first"][2] and in_pass["c:_:no-ts"].undatable
        assert in_pass["c:_:ts-late"].last_at is None and not in_pass["c:_:ts-late"].undatable  # read after
        # A page of 2: the two newest dated (November 30th and 20th), no undatable one after them,
        # and the ones read after (no msgpack head to read in the pass).
        in_pass = {t.key: t for t in st._thread_rows(None, None, 2, None, None) if t.odd}
        assert set(in_pass) == {"c:_:ts-first", "c:_:twin", "c:_:ts-late", "c:_:text", "c:_:json", "c:_:empty"}
        for limit in (1, 2, 5, len(whole)):
            assert [(t.key, t.first_at, t.last_at, t.undatable) for t in st.list_threads(limit=limit)] == whole[:limit], limit
