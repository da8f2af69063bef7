"""PostgreSQL's reads split across sessions on one snapshot (stores/postgres/_common.py
on_one_snapshot), forced on small stores: the listing page by key range (each part's first rows
merged are the one statement's rows, row for row, and every page is the one-part page, with a
tenant prefix and bounds too), ``store usage``'s passes each in a session (the same report); a
session that cannot be had leaves the read to the store's own session."""

from __future__ import annotations

from datetime import timedelta

from tests.stores.test_postgres_page_rank import _base, _id, _store


def _threads() -> dict[str, list[tuple[str, str | None]]]:
    base = _base()
    threads: dict[str, list[tuple[str, str | None]]] = {}
    for i in range(240):  # keys across tenants, their times interleaved across the key ranges
        at = base - timedelta(seconds=(i * 37) % 240)
        threads[f"t{i % 4}:_:s-{i:03d}"] = [(_id(at, i % 7), None)]
    for i in range(12):  # odd threads: upper-case ids, a ts in an ISO id, none, several checkpoints
        at = base - timedelta(seconds=i * 20 + 3)
        threads[f"t{i % 4}:_:odd-u{i:02d}"] = [(_id(at, upper=True), None)]
        threads[f"t{i % 4}:_:odd-ts{i:02d}"] = [(at.isoformat(), at.isoformat())]
        threads[f"t{i % 4}:_:odd-two{i:02d}"] = [(_id(at - timedelta(seconds=1)), None), (_id(at, upper=True), None)]
    threads["t1:_:odd-none"] = [("step-1", None)]
    return threads


def _analyzed(request) -> str:
    import psycopg

    url = _store(request, _threads())
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE checkpoints")  # the statistics the split's key ranges come from
    return url


def _copied(url: str, copies: int = 30) -> None:
    """The store's threads copied under ``copies`` more keys each (every row of the three tables, in the
    search_path's schema): enough keys for the statistics' histogram the key ranges are cut from."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cols = [c for (c,) in conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                                               "AND table_schema = current_schema() ORDER BY ordinal_position", (table,))]
            copied = ", ".join("thread_id || ':copy-' || n" if c == "thread_id" else c for c in cols)
            conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {copied} FROM {table}, generate_series(1, %s) AS n", (copies,))
        conn.execute("ANALYZE")


def _rows(st, where: str, params: list, asked: int, parted: bool) -> list[tuple]:
    from symfonic_cli.stores.postgres.page import page_sql

    key = st._key_grouped()
    if parted:
        cuts = st._key_cuts(where, params)
        assert len(cuts) >= 2, cuts  # three sessions: the server's default two workers and itself
        rows = st._page_parted(key, where, params, "", [], cuts, asked)
        assert rows is not None
        return rows
    return list(st._stream(page_sql(key, where, "", st._keys_exact), [*params, asked], jit=False))


def test_a_split_page_is_the_one_statement_page(request):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = _analyzed(request)
    with open_store(parse_location(url)) as st:
        assert st._key_cuts("", []) == []  # a small store: one statement
        st._split_rows = 0  # forced
        # The merged parts' first rows: the same rows in the same order, for cuts through ties
        # of rank ("~" of the threads of several checkpoints) and through the plain rows.
        for asked in (1, 5, 13, 40, 64, 400):
            assert _rows(st, "", [], asked, True) == _rows(st, "", [], asked, False), asked
        where, params = st._prefix_where("t1:")
        for asked in (3, 30, 200):
            assert _rows(st, where, params, asked, True) == _rows(st, where, params, asked, False), asked

        def pages(**kw) -> list:
            return [[(t.key, t.first_at, t.last_at, t.undatable) for t in st.list_threads(limit=n, **kw)] for n in (1, 7, 20, 300)]

        from symfonic_cli.clock import id_at

        cut = id_at(_base() - timedelta(seconds=100))
        split = [pages(), pages(tenant="t2"), pages(last_before=cut), pages(last_from=cut)]
        st._split_rows = 10**12
        assert split == [pages(), pages(tenant="t2"), pages(last_before=cut), pages(last_from=cut)]
        assert len(split[0][-1]) == len(_threads()) + 1


def test_a_page_whose_sessions_cannot_be_had_is_read_in_one_statement(request):
    """Another session refused (no server where it connects): the page comes whole from the
    store's own session, as without the split."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = _analyzed(request)
    with open_store(parse_location(url)) as st:
        whole = [t.key for t in st.list_threads(limit=20)]
        st._split_rows = 0
        assert st._page_parted(st._key_grouped(), "", [], "", [], st._key_cuts("", []), 104) is not None
        st.location = parse_location(url.replace(f":{st.conn.info.port}/", ":1/"))
        assert st._page_parted(st._key_grouped(), "", [], "", [], st._key_cuts("", []), 104) is None
        assert [t.key for t in st.list_threads(limit=20)] == whole
        assert st.conn.info.transaction_status == 0  # idle: the split's transaction ended


def test_usage_split_across_sessions_is_the_same_report(request, monkeypatch):
    """The passes of ``store usage`` at once in sessions on one snapshot: the same report as in
    one session, reclaimable bytes and all; and in one session when the others cannot be had."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.stores.postgres import usage
    from tests.conftest import backend_for

    url = backend_for("postgres", request).new_store()
    _copied(url)
    split: list[bool] = []
    real = usage.on_one_snapshot

    def watched(*args):  # the real function, its outcome noted
        found = real(*args)
        split.append(found is not None)
        return found

    monkeypatch.setattr(usage, "on_one_snapshot", watched)

    def report(st) -> dict:
        out = st.store_usage(top=5, keep=1)
        # The tables' sizes and tuple estimates are the catalog's (autovacuum may add a map's
        # page between two reports): not what the split reads.
        assert sorted(t["name"] for t in out.pop("tables")) == ["checkpoint_blobs", "checkpoint_writes", "checkpoints"]
        return out

    with open_store(parse_location(url)) as st:
        one = report(st)
        assert split == []  # a small store: one session
        assert one["reclaimable"]["checkpoints"] > 0 and one["largest_threads"]
        st._split_rows = 0
        assert report(st) == one and split == [True]
        st.location = parse_location(url.replace(f":{st.conn.info.port}/", ":1/"))
        assert report(st) == one and split == [True, False]


def test_the_other_sessions_read_the_stores_schema(request):
    """A store in a schema of its own (--pg-schema): the other sessions read its tables too (the
    search_path of the store's session), where a public schema holds other checkpoints."""
    import uuid
    from urllib.parse import quote

    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from tests.conftest import backend_for
    from tests.support.scenarios import write_scenarios

    pg = backend_for("postgres", request)
    name = f"split_{uuid.uuid4().hex[:8]}"
    pg._create(name)
    with pg.admin(name) as conn:
        conn.execute('CREATE SCHEMA "agents"')
    in_agents = pg.url(name, query="options=" + quote("-csearch_path=agents", safe=""))
    for url, keys in ((in_agents, ["acme:_:s-001", "globex:_:s-101"]), (pg.url(name), ["initech:_:s-201"])):
        with pg.saver(url) as saver:
            saver.setup()
            write_scenarios(saver, keys)
        _copied(url, 150)  # more keys than the statistics' most common values hold
    with open_store(parse_location(pg.url(name)), pg_schema="agents") as st:
        one = [(t.key, t.last_at) for t in st.list_threads(limit=40)]
        assert len(one) == 40 and not [k for k, _ in one if k.startswith("initech")]
        st._split_rows = 0
        assert _rows(st, "", [], 104, True) == _rows(st, "", [], 104, False)
        assert [(t.key, t.last_at) for t in st.list_threads(limit=40)] == one
