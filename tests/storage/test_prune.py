"""thread prune's keep rules on stores real graphs wrote: side by side with PostgresSaver.prune, and
LangGraph's own get_tuple/get_state before and after on every store kind."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import backend_for
from tests.support import prune_graphs as pg
from tests.support.scenarios import write_scenarios

KEEP_LATEST_THREADS = None  # every thread but the DeltaChannel one (PostgresSaver.prune refuses it)


def _write_all(saver) -> None:
    write_scenarios(saver)
    pg.write_prune_threads(saver)


def _new_store(kind: str, request) -> tuple[object, str]:
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        _write_all(saver)
    return backend, url


def _open(url: str, *, writable: bool = True):
    from symfonic_cli.location import resolve_store
    from symfonic_cli.stores import open_store

    return open_store(resolve_store(url), writable=writable)


def _keys(url: str) -> list[str]:
    with _open(url, writable=False) as st:
        return st.thread_keys_with_prefix("")


def _prune_all(url: str, **kw) -> dict[str, tuple]:
    out = {}
    with _open(url) as st:
        st.prune_prepare()
        for key in st.thread_keys_with_prefix(""):
            plan = st.prune_plan(key, **kw)
            if plan.skipped:
                out[key] = ("skipped", plan.skipped)
                continue
            deleted, detached = st.prune_thread(key, expected=plan.rows, **kw)
            out[key] = (deleted, detached, plan)
    return out


def _pg_rows(url: str, keys: list[str]) -> dict[str, set]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {
            "checkpoints": set(conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, md5(checkpoint::text), md5(metadata::text) "
                "FROM checkpoints WHERE thread_id = ANY(%s)", (keys,)).fetchall()),
            "blobs": set(conn.execute(
                "SELECT thread_id, checkpoint_ns, channel, version, type, md5(blob) FROM checkpoint_blobs WHERE thread_id = ANY(%s)", (keys,)).fetchall()),
            "writes": set(conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, md5(blob) FROM checkpoint_writes "
                "WHERE thread_id = ANY(%s)", (keys,)).fetchall()),
        }


def _state_of(saver, key: str) -> dict:
    """What LangGraph reads of a thread: get_tuple of every namespace (not the parent pointer)."""
    out = {}
    namespaces = {t.config["configurable"]["checkpoint_ns"] for t in saver.list({"configurable": {"thread_id": key}})}
    for ns in sorted(namespaces):
        t = saver.get_tuple({"configurable": {"thread_id": key, "checkpoint_ns": ns}})
        out[ns] = (t.config, t.checkpoint, t.metadata, sorted(t.pending_writes or [], key=repr))
    return out


def _graph_state(saver, key: str):
    graph = {pg.INTERRUPTED: pg.interrupt_graph, pg.PERSISTENT_SUB: pg.persistent_subgraph_graph, pg.DELTA: pg.delta_graph}.get(key)
    if graph is None:
        from tests.support.scenarios import agent_graph

        g = agent_graph(key == "initech:_:s-sub").compile(checkpointer=saver)
    else:
        g = graph(saver)
    s = g.get_state({"configurable": {"thread_id": key}})
    return s.values, s.next, [t.interrupts for t in s.tasks], s.config


@pytest.mark.postgres  # reached through _new_store("postgres", ...), which the marker rules do not follow
def test_keep_1_leaves_exactly_what_postgres_saver_prune_leaves(request):
    """Two byte-identical PostgreSQL stores: PostgresSaver.prune(keep_latest) on one, symfonic's prune on
    the other; every checkpoint, blob and write row left is the same."""
    backend, url_a = _new_store("postgres", request)
    db_b = f"symfonic_t_{uuid.uuid4().hex[:12]}"
    backend._create(db_b, backend.db_of(url_a))
    url_b = backend.url(db_b)
    keys = [k for k in _keys(url_a) if k != pg.DELTA]
    before = _pg_rows(url_a, keys)
    assert before == _pg_rows(url_b, keys)
    with backend.saver(url_a) as saver:
        with pytest.raises(NotImplementedError):
            saver.prune([pg.DELTA], strategy="keep_latest")  # upstream refuses DeltaChannel threads
        saver.prune(keys, strategy="keep_latest")
    done = _prune_all(url_b)
    after_a, after_b = _pg_rows(url_a, keys), _pg_rows(url_b, keys)
    assert after_a["checkpoints"] == after_b["checkpoints"]
    assert after_a["blobs"] == after_b["blobs"]
    assert after_a["writes"] == after_b["writes"]
    # Something was pruned, subgraph calls included, and some blobs survive for the kept heads.
    assert len(after_b["checkpoints"]) < len(before["checkpoints"]) and len(after_b["blobs"]) < len(before["blobs"])
    assert not any(ns for _, ns, *_ in after_b["checkpoints"] if ns.startswith("specialist:"))
    assert any(ns == "outer" for _, ns, *_ in after_b["checkpoints"])  # the checkpointer=True subgraph keeps its latest
    # The counts the plan predicted are what was deleted.
    for key in keys:
        deleted, _, plan = done[key]
        assert deleted == plan.rows
    # The DeltaChannel thread was not refused: its ancestors back to the snapshot are kept.
    assert done[pg.DELTA][2].delta_ancestors > 0


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "mongodb"])
def test_latest_state_is_what_langgraph_reads_before_and_after(kind, request):
    """get_tuple of every kept namespace and the graph's get_state are the same before and after (the
    DeltaChannel thread rebuilt from its kept ancestors), and the interrupted thread resumes to the
    same result as an unpruned copy; the counts left per namespace match PostgresSaver.prune's rules."""
    backend, url = _new_store(kind, request)
    _, twin = _new_store(kind, request)  # an unpruned store written by the same graphs
    keys = _keys(url)
    with backend.saver(url) as saver:
        before = {k: _state_of(saver, k) for k in keys}
        graph_before = {k: _graph_state(saver, k) for k in keys}
    done = _prune_all(url)
    assert all(v[0] != "skipped" for v in done.values()), done
    with _open(url) as st:  # pruning again finds nothing left to prune
        assert [k for k in keys if st.prune_remaining(k)] == []
    with backend.saver(url) as saver:
        for k in keys:
            after = _state_of(saver, k)
            expected = {ns: v for ns, v in before[k].items() if not ns.startswith("specialist:")}
            assert after == expected, k
            values, nxt, interrupts, _ = _graph_state(saver, k)
            assert (values, nxt, interrupts) == graph_before[k][:3], k
        per_ns = {}
        for t in saver.list(None):
            c = t.config["configurable"]
            per_ns[(c["thread_id"], c["checkpoint_ns"])] = per_ns.get((c["thread_id"], c["checkpoint_ns"]), 0) + 1
        resumed = pg.resume(saver)
    with backend.saver(twin) as saver:
        unpruned = pg.resume(saver)
    # The same conversation (ids of AI replies are random per run, so compared by type and text).
    assert [(type(m), m.content) for m in resumed["messages"]] == [(type(m), m.content) for m in unpruned["messages"]]
    assert "approved: granted" in resumed["messages"][-1].content
    # The keep rules' shape, as PostgresSaver.prune keeps it: one checkpoint per namespace, the
    # subgraph call gone with its root checkpoint, the DeltaChannel thread's chain to its snapshot.
    assert per_ns[("acme:_:s-001", "")] == 1 and per_ns[("acme:_:s-persist", "outer")] == 1
    assert not any(ns.startswith("specialist:") for _, ns in per_ns)
    assert per_ns[(pg.DELTA, "")] == 1 + done[pg.DELTA][2].delta_ancestors > 1


def test_delta_thread_with_a_missing_ancestor_is_skipped_untouched(tmp_path):
    """A DeltaChannel thread whose chain to a snapshot is broken: skipped with a reason, nothing changed."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "delta.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    pg.delta_graph(SqliteSaver(conn))  # compiles
    saver = SqliteSaver(conn)
    g = pg.delta_graph(saver)
    from langchain_core.messages import HumanMessage

    for i in range(4):
        g.invoke({"messages": [HumanMessage(content=f"q{i}")], "turns": 0}, {"configurable": {"thread_id": "d:_:1"}})
    # Delete the parent of the head: the chain back to a snapshot is broken.
    head, parent = conn.execute("SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1").fetchone()
    conn.execute("DELETE FROM checkpoints WHERE checkpoint_id = ?", (parent,))
    conn.commit()
    rows = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    conn.close()
    with _open(str(path)) as st:
        plan = st.prune_plan("d:_:1")
        assert plan.skipped and parent in plan.skipped and not plan.rows
        from symfonic_cli.stores._prune import ThreadSkipped

        with pytest.raises(ThreadSkipped):
            st.prune_thread("d:_:1")
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == rows
    conn.close()


def test_keep_n_and_older_than(tmp_path, request):
    """--keep 3 keeps three per namespace; --older-than keeps every checkpoint newer than the cut-off."""
    from datetime import datetime, timedelta, timezone

    _, url = _new_store("sqlite", request)
    with _open(url, writable=False) as st:
        plan3 = st.prune_plan("acme:_:s-001", keep=3)
        plan1 = st.prune_plan("acme:_:s-001", keep=1)
        assert plan3.rows["checkpoints"] == plan1.rows["checkpoints"] - 2
        everything_new = st.prune_plan("acme:_:s-001", newer_than=datetime.now(timezone.utc) - timedelta(days=1))
        assert everything_new.rows["checkpoints"] == 0
        nothing_new = st.prune_plan("acme:_:s-001", newer_than=datetime.now(timezone.utc) + timedelta(days=1))
        assert nothing_new.rows == plan1.rows


def test_a_thread_written_after_the_plan_is_rolled_back_whole(request):
    """The plan's rows are compared inside the thread's transaction: a thread the agent wrote since
    the plan (its old latest checkpoint now prunable) is rolled back untouched, with the reason."""
    from langchain_core.messages import HumanMessage

    from symfonic_cli.errors import StoreError
    from tests.support.scenarios import agent_graph

    backend, url = _new_store("sqlite", request)
    key = "globex:_:s-101"
    with _open(url) as st:
        plan = st.prune_plan(key)
    with backend.saver(url) as saver:
        agent_graph().compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="one more")]}, {"configurable": {"thread_id": key}})
        before = _state_of(saver, key), len(list(saver.list({"configurable": {"thread_id": key}})))
    with _open(url) as st:
        with pytest.raises(StoreError, match="changed since the plan"):
            st.prune_thread(key, expected=plan.rows)
    with backend.saver(url) as saver:
        assert (_state_of(saver, key), len(list(saver.list({"configurable": {"thread_id": key}})))) == before


def test_a_change_to_the_kept_state_rolls_back(request):
    """The kept state is read before and after the deletes inside the transaction: here a trigger of
    the store rewrites the kept checkpoint's metadata when an older one is deleted; the prune rolls
    back and the thread is as it was (prune_prepare refuses such triggers; prune_thread checks anyway)."""
    import sqlite3

    from symfonic_cli.errors import StoreError

    backend, url = _new_store("sqlite", request)
    key = "acme:_:s-001"
    conn = sqlite3.connect(url)
    conn.execute("CREATE TRIGGER rewrite AFTER DELETE ON checkpoints BEGIN "
                 "UPDATE checkpoints SET metadata = CAST('{}' AS BLOB) WHERE thread_id = old.thread_id; END")
    conn.commit()
    rows = conn.execute("SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? ORDER BY 1", (key,)).fetchall()
    conn.close()
    with _open(url) as st:
        plan = st.prune_plan(key)
        with pytest.raises(StoreError, match="kept state would change"):
            st.prune_thread(key, expected=plan.rows)
        with pytest.raises(StoreError, match="trigger"):
            st.prune_prepare()
    conn = sqlite3.connect(url)
    assert conn.execute("SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? ORDER BY 1", (key,)).fetchall() == rows
    conn.close()


@pytest.mark.postgres  # reached through _new_store("postgres", ...), which the marker rules do not follow
def test_postgres_a_change_to_a_kept_blob_rolls_back(request):
    """PostgreSQL compares the kept blobs and writes by tuple identity inside the transaction: a
    trigger that rewrites the kept checkpoint's blobs when an older checkpoint is deleted makes the
    prune roll back, and every row of the thread is as it was."""
    import psycopg

    from symfonic_cli.errors import StoreError

    _, url = _new_store("postgres", request)
    key = "acme:_:s-001"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "UPDATE checkpoint_blobs SET blob = blob || '\\x00'::bytea WHERE thread_id = OLD.thread_id; RETURN OLD; END $$")
        conn.execute("CREATE TRIGGER rewrite AFTER DELETE ON checkpoints FOR EACH ROW EXECUTE FUNCTION rewrite()")
    before = _pg_rows(url, [key])
    with _open(url) as st:
        plan = st.prune_plan(key)
        assert plan.rows["checkpoints"] > 0
        with pytest.raises(StoreError, match="kept state would change"):
            st.prune_verified(key, expected=plan.rows)
    assert _pg_rows(url, [key]) == before


@pytest.mark.postgres  # reached through _new_store("postgres", ...), which the marker rules do not follow
def test_postgres_kept_state_is_read_by_the_deleting_and_the_fresh_statement(request):
    """The kept state before the deletes is read by the deleting statement itself, after them by the
    fresh plan's: a trigger that rewrites the kept checkpoint's metadata when an older checkpoint is
    deleted is seen by the second and not the first, and the prune rolls back untouched; without
    it the same thread prunes."""
    import psycopg

    from symfonic_cli.errors import StoreError

    _, url = _new_store("postgres", request)
    key = "acme:_:s-001"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "UPDATE checkpoints SET metadata = metadata || '{\"x\": 1}'::jsonb WHERE thread_id = OLD.thread_id "
                     "AND thread_id = 'acme:_:s-001'; RETURN OLD; END $$")
        conn.execute("CREATE TRIGGER rewrite AFTER DELETE ON checkpoints FOR EACH ROW EXECUTE FUNCTION rewrite()")
    before = _pg_rows(url, [key])
    with _open(url) as st:
        plan = st.prune_plan(key)
        assert plan.rows["checkpoints"] > 0
        with pytest.raises(StoreError, match="kept state would change"):
            st.prune_verified(key, expected=plan.rows)
        plan2 = next(p for p in st.prune_plans([k for k in _keys(url) if k != key]) if p.rows.get("checkpoints") and not p.skipped)
        deleted, _, remaining = st.prune_verified(plan2.key, expected=plan2.rows)
    assert _pg_rows(url, [key]) == before
    assert deleted == plan2.rows and remaining == 0
