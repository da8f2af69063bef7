"""``threads list --status/--with-size`` on PostgreSQL under every kind of key collation (issue #14,
section 4: the speed of the status listing).

Under a byte-order collation (C, C.UTF-8) the listing finds each thread's latest root checkpoint
and its pending writes by index probes, never sorting every checkpoint (checked with EXPLAIN);
under an ICU database (deterministic, not byte order) and under a nondeterministic
(case-insensitive) thread_id collation it must give exactly the same rows. Stores are written by
real graphs through the real PostgresSaver: the run-state threads (their statuses are checked
against LangGraph's ``get_state`` in tests/thread/test_thread_show.py) and keys that differ only in case
or that sort differently in bytes and in a language's order.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.conftest import backend_for
from tests.support import run_state_scenarios as rs
from tests.support.cli import run
from tests.support.scenarios import long_thread

# Case twins (a case-insensitive "=" would fold them) and keys whose byte order is not en-US order.
EXTRA = {"acme:_:bob": 1, "ACME:_:BOB": 2, "acme:_:\u00e9t\u00e9": 1, "acme:_:f": 3, "acme:_:Z": 1}


def _store(request, collation: str) -> str:
    import psycopg

    backend = backend_for("postgres", request)
    if collation == "icu":
        name = f"symfonic_icu_{uuid.uuid4().hex[:12]}"
        with backend.admin() as conn:
            conn.execute(f"CREATE DATABASE {name} LOCALE_PROVIDER icu ICU_LOCALE 'en-US' TEMPLATE template0")
        backend.created.append(name)
        url = backend.url(name)
    else:
        url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        saver.setup()
        rs.write_states(saver)
        for key, turns in EXTRA.items():
            long_thread(saver, key, turns)
    if collation == "ci":
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                conn.execute(f"ALTER TABLE {table} ALTER COLUMN thread_id TYPE text COLLATE ci")
    return url


def _truth(url: str) -> dict[str, tuple[int, str, str]]:
    """Per key, count and first and last id, read bytewise straight from the table."""
    import psycopg

    with psycopg.connect(url) as conn:
        return {
            k: (n, first, last)
            for k, n, first, last in conn.execute(
                'SELECT thread_id COLLATE "C", count(*), min(checkpoint_id COLLATE "C"), max(checkpoint_id COLLATE "C") '
                'FROM checkpoints GROUP BY thread_id COLLATE "C"'
            )
        }


def _listed(url: str, *args: str) -> list[dict]:
    r = run("threads", "list", "-s", url, "-f", "json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("collation", ["c", "icu", "ci"])
def test_status_listing_is_exact_under_every_collation(request, collation):
    url = _store(request, collation)
    truth = _truth(url)
    expected = {k: s for k, s in rs.EXPECTED_STATUS.items() if k in truth}
    expected.update(dict.fromkeys(EXTRA, "done"))
    assert set(truth) == set(expected) and len(expected) == 11 + len(EXTRA)

    rows = _listed(url, "--status", "interrupted,error,pending,done", "--with-size")
    assert {r["key"]: r["status"] for r in rows} == expected
    for r in rows:
        assert (r["checkpoints"], r["first_activity"] is not None) == (truth[r["key"]][0], True)
    for status in ("interrupted", "error", "pending"):
        got = {r["key"] for r in _listed(url, "--status", status)}
        assert got == {k for k, s in expected.items() if s == status}, status
    # sizes and totals agree with the one-thread view, with and without the status
    by_key = {r["key"]: r for r in rows}
    plain = {r["key"]: r for r in _listed(url, "--with-size")}
    assert set(plain) == set(by_key)
    for key in ("ACME:_:BOB", "acme:_:bob", "acme:_:boom", "acme:_:sub-ask"):
        show = json.loads(run("thread", "show", "-s", url, "-t", key, "-f", "json").out)
        assert by_key[key]["size_bytes"] == plain[key]["size_bytes"] == show["size_bytes"] > 0
        assert by_key[key]["checkpoints"] == plain[key]["checkpoints"] == show["checkpoints"]
    # a tenant prefix: exact keys only (the case twin and "acme:" lookalikes stay out)
    acme = {r["key"]: r["status"] for r in _listed(url, "--tenant", "acme", "--status", "interrupted,error,pending,done")}
    assert acme == {k: s for k, s in expected.items() if k.startswith("acme:")}


def _plan(store, sql: str, params: list) -> str:
    with store.conn.transaction():
        store.conn.execute("SET LOCAL enable_seqscan = off")  # the test tables are small: as on a big store
        return "\n".join(r[0] for r in store.conn.execute(f"EXPLAIN {sql}", params))


@pytest.mark.parametrize("collation", ["c", "icu"])
def test_status_listing_never_sorts_every_checkpoint(request, collation):
    """The query behind ``--status``: each thread by index seeks and probes, no Sort of the
    checkpoints; under ICU only a thread's own root ids are sorted bytewise (by the key's probe)."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = _store(request, collation)
    store = open_store(parse_location(url))
    try:
        exact, ids_in_byte_order = store._run_state_collations()
        assert (exact, ids_in_byte_order, store._c_collation) == (True, collation == "c", collation == "c")
        for prefix in (None, "acme:"):
            cond, params = "true", []
            if prefix:
                where, params = store._prefix_where(prefix)
                cond = where.removeprefix("WHERE ")
            sql = store._LATEST_ROOT.format(cond=cond, collate="" if ids_in_byte_order else ' COLLATE "C"')
            plan = _plan(store, sql, [*params, *params])
            assert "Seq Scan" not in plan, plan
            assert "Index Cond: ((thread_id = t.thread_id) AND (checkpoint_ns = ''::text))" in plan, plan
            # Sorts only inside one thread's probes: its pending writes by task, and under ICU its
            # root checkpoint ids in bytes (the ids' collation is not byte order there).
            sort_keys = {line.split("Sort Key:", 1)[1].strip() for line in plan.splitlines() if "Sort Key:" in line}
            allowed = {"w.task_id"} | (set() if collation == "c" else {'x.checkpoint_id COLLATE "C" DESC'})
            assert sort_keys <= allowed, plan
            if collation == "c":
                assert "Index Scan Backward using checkpoints_pkey" in plan, plan
                if prefix:
                    assert "thread_id >=" in plan, plan
    finally:
        store.close()


def test_version_maps_too_deep_for_python_are_a_clear_error(request):
    """A crafted latest root checkpoint whose versions_seen nests deeper than Python's json goes:
    exit 4 naming the checkpoint, nothing on stdout; the other threads still list without it."""
    import psycopg

    url = _store(request, "c")
    deep = "[" * 5000 + "]" * 5000
    with psycopg.connect(url, autocommit=True) as conn:
        (cid,) = conn.execute(
            "UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{versions_seen,x}', %s::jsonb) "
            "WHERE thread_id = 'acme:_:f' AND checkpoint_ns = '' AND checkpoint_id = "
            "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'acme:_:f' AND checkpoint_ns = '') RETURNING checkpoint_id",
            (deep,),
        ).fetchone()
    r = run("threads", "list", "-s", url, "-f", "json", "--status", "done")
    assert (r.code, r.out) == (4, ""), r.err
    assert f"checkpoint {cid} of thread 'acme:_:f' cannot be decoded" in r.err
    others = _listed(url, "--tenant", "globex", "--status", "done")
    assert [row["key"] for row in others] == ["globex:_:react-2"]
