"""PostgreSQL's batched erase path (issue #16, sweep speed): a batch planned in one statement
(``erase_plans``) and a thread erased and verified in two round trips (``erase_verified``) keep
every guarantee of the per-statement path: the same plans (exact keys under a case-insensitive
collation, declared extra tables), the deletes compared with the plan inside the transaction, the
last activity re-checked before any delete, a rollback that leaves the thread whole and the
connection usable, and a verification that reads the committed state. Stores written by the real
PostgresSaver."""

from __future__ import annotations

import psycopg
import pytest

from symfonic_cli.errors import StoreError, ThreadActiveError
from symfonic_cli.erase.extra import parse_extra
from symfonic_cli.location import parse_location
from symfonic_cli.stores import open_store
from tests.conftest import backend_for
from tests.support.cli import run
from tests.support.pg_server import case_twins_under_a_folding_collation
from tests.support.scenarios import long_thread
from tests.erase.test_erase import saved

KEYS = ["acme:_:s-001", "acme:eu:s-002", "globex:_:s-003", "legacy-thread"]
EXTRA = [
    {"table": "conversations", "column": "thread_id"},
    {"table": "pause_tokens", "match": {"tenant_id": "tenant", "sub_id": "sub", "session_id": "session"}},
]
# After every id LangGraph makes: every thread is idle before it.
FAR_FUTURE = "f" * 8


@pytest.fixture
def pg(request):
    return backend_for("postgres", request)


def _store_with_extras(pg) -> str:
    url = pg.new_store(scenarios=False)
    with pg.saver(url) as saver:
        for n, key in enumerate(KEYS):
            long_thread(saver, key, 1 + n % 2)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE conversations (thread_id text, body text)")
        conn.execute("CREATE TABLE pause_tokens (tenant_id text, sub_id text, session_id text)")
        for key in KEYS:
            conn.execute("INSERT INTO conversations VALUES (%s, 'x'), (%s, 'y')", (key, key))
        conn.execute("INSERT INTO pause_tokens VALUES ('acme', NULL, 's-001'), ('acme', 'eu', 's-002'), ('acme', NULL, 's-002')")
    return url


def _open(url: str):
    store = open_store(parse_location(url), writable=True)
    return store


def test_batch_plan_is_the_per_thread_plan(pg):
    url = _store_with_extras(pg)
    extra = parse_extra({"erase_extra": EXTRA})
    keys = KEYS + ["acme:_:absent", "ACME:_:S-001"]
    with _open(url) as store:
        store.erase_prepare(extra)
        batched = store.erase_plans(keys, extra)
        single = [store.erase_plan(k, extra) for k in keys]
        assert store.erase_plans([], extra) == []
    assert batched == single
    assert [p.key for p in batched] == keys
    assert list(batched[0].rows) == ["conversations", "pause_tokens", "checkpoint_writes", "checkpoint_blobs", "checkpoints"]
    assert batched[0].rows["pause_tokens"] == 1 and batched[1].rows["pause_tokens"] == 1
    assert batched[3].rows["pause_tokens"] == 0  # a legacy key has no tenant part
    assert batched[4].total == 0 and batched[5].total == 0
    assert all(p.rows["checkpoints"] > 0 and p.last_checkpoint_id for p in batched[:4])


def test_erase_verified_rolls_back_a_thread_changed_since_the_plan(pg):
    url = _store_with_extras(pg)
    extra = parse_extra({"erase_extra": EXTRA})
    key = "acme:_:s-001"
    with _open(url) as store:
        store.erase_prepare(extra)
        (plan,) = store.erase_plans([key], extra)
        with pg.saver(url) as saver:  # the agent writes the thread again meanwhile
            long_thread(saver, key, 1)
        grown = saved(pg, url, key)
        with pytest.raises(StoreError, match="changed since the plan"):
            store.erase_verified(key, extra, expected=plan.rows, idle_before=FAR_FUTURE)
        assert saved(pg, url, key) == grown  # rolled back: the thread is whole
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM conversations WHERE thread_id = %s", (key,)).fetchone()[0] == 2
        # The connection is usable: the new plan erases the thread, verified after the commit.
        (again,) = store.erase_plans([key], extra)
        deleted, remaining = store.erase_verified(key, extra, expected=again.rows, idle_before=FAR_FUTURE)
        assert deleted == again.rows and remaining == dict.fromkeys(again.rows, 0)
    assert saved(pg, url, key)[0] == 0
    assert saved(pg, url, "acme:eu:s-002")[0] > 0


@pytest.mark.parametrize("with_extra", [False, True])
def test_erase_verified_leaves_a_thread_active_since_the_cut_off_whole(pg, with_extra):
    url = _store_with_extras(pg)
    extra = parse_extra({"erase_extra": EXTRA}) if with_extra else ()
    key = "acme:eu:s-002"
    before = saved(pg, url, key)
    with _open(url) as store:
        store.erase_prepare(extra)
        (plan,) = store.erase_plans([key], extra)
        # A bound no later than the thread's last checkpoint id: it is active since the cut-off.
        with pytest.raises(ThreadActiveError, match="became active after the cut-off"):
            store.erase_verified(key, extra, expected=plan.rows, idle_before=plan.last_checkpoint_id)
        assert saved(pg, url, key) == before
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM pause_tokens WHERE sub_id = 'eu'").fetchone()[0] == 1
        deleted, remaining = store.erase_verified(key, extra, expected=plan.rows, idle_before=FAR_FUTURE)
    assert deleted == plan.rows and not any(remaining.values())
    assert saved(pg, url, key)[0] == 0
    with psycopg.connect(url) as conn:
        # acme:_:s-002's token (no sub-tenant) is another thread's: never reached.
        tokens = conn.execute("SELECT tenant_id, sub_id, session_id FROM pause_tokens ORDER BY 1, 2, 3").fetchall()
    kept = [("acme", None, "s-001"), ("acme", None, "s-002")]
    assert tokens == (kept if with_extra else [("acme", "eu", "s-002"), *kept])


def test_a_failing_statement_rolls_the_thread_back_and_the_next_thread_is_erased(pg):
    url = _store_with_extras(pg)
    extra = parse_extra({"erase_extra": EXTRA})
    first, second = "acme:_:s-001", "globex:_:s-003"
    with _open(url) as store:
        store.erase_prepare(extra)
        plans = store.erase_plans([first, second], extra)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE conversations RENAME TO conversations_gone")
        with pytest.raises(StoreError):
            store.erase_verified(first, extra, expected=plans[0].rows)
        assert saved(pg, url, first)[0] == plans[0].rows["checkpoints"]  # nothing deleted
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE conversations_gone RENAME TO conversations")
        deleted, remaining = store.erase_verified(second, extra, expected=plans[1].rows)
        assert deleted == plans[1].rows and not any(remaining.values())


def test_sweep_under_a_case_insensitive_collation_erases_exact_keys(pg):
    """The batch plan and the one-statement erase compare keys in bytes where "=" folds case."""
    url = case_twins_under_a_folding_collation(pg)
    def exact(key: str) -> list[int]:  # the saver's own "=" folds case here: count in bytes
        with psycopg.connect(url) as conn:
            return [conn.execute(f'SELECT count(*) FROM {t} WHERE thread_id COLLATE "C" = %s', (key,)).fetchone()[0]
                    for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")]

    before = exact("ACME:_:BOB")
    assert before[0] > 0 and exact("acme:_:bob")[0] > 0
    with _open(url) as store:
        store.erase_prepare(())
        plans = store.erase_plans(["acme:_:bob"], ())
        assert plans == [store.erase_plan("acme:_:bob", ())]
        deleted, remaining = store.erase_verified("acme:_:bob", (), expected=plans[0].rows, idle_before=FAR_FUTURE)
    assert deleted == plans[0].rows and not any(remaining.values())
    assert exact("ACME:_:BOB") == before and exact("acme:_:bob") == [0, 0, 0]
    # The whole sweep: both threads are idle before a bound in the future, both are erased, each alone.
    r = run("thread", "erase", "-s", url, "--inactive-since", "2999-01-01", "--yes", "-f", "json")
    assert r.code == 0, r.err
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 0
