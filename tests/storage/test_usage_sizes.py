"""store usage's figures (issue 33 item 9): PostgreSQL table sizes add up to what
``pg_total_relation_size`` counts (the free-space and visibility-map forks included), and MongoDB's
reclaimable figures, now aggregated by the server, equal the per-thread plans of the full rules
(what thread prune deletes), on stores real graphs wrote."""

from __future__ import annotations

import json

import pytest

from tests.conftest import backend_for
from tests.support import prune_graphs as pg
from tests.support.cli import run
from tests.support.scenarios import write_scenarios


def _new_store(kind: str, request) -> tuple[object, str]:
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write_scenarios(saver)
        pg.write_prune_threads(saver)
    return backend, url


def _usage(url: str, *args: str) -> dict:
    r = run("store", "usage", "-s", url, "-f", "json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.postgres  # reached through _new_store("postgres", ...), which the marker rules do not follow
def test_postgres_table_sizes_are_pg_total_relation_size(request):
    import psycopg

    _, url = _new_store("postgres", request)
    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            conn.execute(f"VACUUM {table}")  # writes the free-space and visibility maps
        forks = conn.execute("SELECT sum(pg_relation_size('checkpoints', 'fsm') + pg_relation_size('checkpoints', 'vm'))").fetchone()[0]
        assert forks > 0
        total = dict(conn.execute(
            "SELECT t, pg_total_relation_size(to_regclass(t)) FROM unnest(ARRAY['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) AS t"
        ).fetchall())
    tables = {t["name"]: t for t in _usage(url)["tables"]}
    for name, size in total.items():
        t = tables[name]
        assert t["heap_bytes"] + t["toast_bytes"] + t["index_bytes"] == size, (name, t, size)


@pytest.mark.parametrize("keep", [1, 2, 3])
@pytest.mark.mongodb  # reached through _new_store("mongodb", ...), which the marker rules do not follow
def test_mongodb_reclaimable_equals_the_plans_of_every_thread(request, keep):
    _reclaimable_equals_the_plans("mongodb", request, keep, writes="checkpoint_writes")


@pytest.mark.parametrize("keep", [1, 2, 3])
@pytest.mark.postgres  # reached through _new_store("postgres", ...), which the marker rules do not follow
def test_postgres_reclaimable_equals_the_plans_of_every_thread(request, keep):
    # One statement ranks each namespace's checkpoints once (stores/postgres/usage.py): its sums,
    # blobs included, equal every thread's plan.
    report = _reclaimable_equals_the_plans("postgres", request, keep, writes="checkpoint_writes")
    assert report["reclaimable"]["blobs"] > 0


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_sqlite_reclaimable_and_largest_equal_the_plans_and_sizes_of_every_thread(request, keep):
    # SQLite's usage is one pass per table grouped by thread (stores/sqlite/usage.py): the
    # reclaimable figures equal every thread's plan (subgraphs, DeltaChannel, pending Sends and
    # ids of every form among them), and the largest threads their own byte sums.
    import sqlite3

    from tests.support.delta_scenarios import write_delta_scenarios
    from tests.support.rewritten_ids import FORMS, rewrite_ids

    backend, url = _new_store("sqlite", request)
    with backend.saver(url) as saver:
        write_delta_scenarios(saver, 2)
    path = url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    keys = [k for (k,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]
    conn.close()
    for key, form in zip(keys, FORMS):
        rewrite_ids("sqlite", path, key, form)
    conn = sqlite3.connect(path)
    sizes = conn.execute(
        "SELECT thread_id, sum(b), sum(n) FROM (SELECT thread_id, sum(length(checkpoint) + coalesce(length(metadata), 0)) AS b, "
        "count(*) AS n FROM checkpoints GROUP BY thread_id UNION ALL SELECT thread_id, sum(length(value)), 0 FROM writes "
        "GROUP BY thread_id) GROUP BY thread_id ORDER BY 2 DESC, 1 LIMIT 10").fetchall()
    totals = conn.execute("SELECT count(*), sum(length(checkpoint) + coalesce(length(metadata), 0)) FROM checkpoints").fetchone()
    conn.close()
    report = _reclaimable_equals_the_plans("sqlite", request, keep, writes="writes", url=url)
    assert report["largest_threads"] == [{"key": k, "bytes": b, "checkpoints": n} for k, b, n in sizes]
    assert [report["checkpoints"]["count"], report["checkpoints"]["bytes"]] == list(totals)


def _reclaimable_equals_the_plans(kind: str, request, keep: int, *, writes: str, url: str | None = None) -> dict:
    from symfonic_cli.location import resolve_store
    from symfonic_cli.stores import open_store

    if url is None:
        _, url = _new_store(kind, request)
    want = {"keep": keep, "checkpoints": 0, "writes": 0, "blobs": 0, "bytes": 0, "threads": 0, "skipped_threads": 0}
    with open_store(resolve_store(url), writable=False) as st:
        for key in st.thread_keys_with_prefix(""):
            plan = st.prune_plan(key, keep=keep)
            if plan.skipped:
                want["skipped_threads"] += 1
                continue
            want["checkpoints"] += plan.rows["checkpoints"]
            want["writes"] += plan.rows[writes]
            want["blobs"] += plan.rows.get("checkpoint_blobs", 0)  # PostgreSQL's only
            want["bytes"] += plan.bytes
            want["threads"] += bool(plan.rows["checkpoints"])
    assert want["checkpoints"] > 0 and want["writes"] > 0
    report = _usage(url, "--keep", str(keep))
    assert report["reclaimable"] == want
    pruned = run("thread", "prune", "-s", url, "--all", "--keep", str(keep), "--yes", "-f", "json")
    deleted = {writes: want["writes"], "checkpoints": want["checkpoints"], **({"checkpoint_blobs": want["blobs"]} if want["blobs"] else {})}
    assert json.loads(pruned.out)["summary"]["rows_deleted"] == deleted
    return report
