"""``symfonic migrate``: real graphs write the source, the real CLI copies, the target reads back equal."""

from __future__ import annotations

import hashlib
import json
import operator
import sqlite3
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from tests.support import backends
from tests.support.cli import run, run_process
from tests.conftest import backend_for
from tests.support.scenarios import scenarios as base_scenarios

FAILED_PARALLEL = "mig:_:failed-parallel"
INTERRUPTED = "mig:_:interrupted"
ENVELOPED = "mig:_:envelope"
CUSTOM_CLASS = "mig:_:custom-class"
EXTRA_KEYS = (FAILED_PARALLEL, INTERRUPTED, ENVELOPED, CUSTOM_CLASS)
SCENARIO_KEYS = tuple(sc.key for sc in base_scenarios())
ALL_KEYS = SCENARIO_KEYS + EXTRA_KEYS


@dataclass
class Order:
    """An application class: not on LangGraph's safe list, so the strict decoder will not build it."""

    number: int
    note: str


class LogState(TypedDict):
    log: Annotated[list, operator.add]


class OrderState(TypedDict):
    log: Annotated[list, operator.add]
    order: Order


def write_extras(saver) -> None:
    """Pending writes of interrupted runs, envelopes in metadata, an application class."""
    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, StateGraph
    from langgraph.types import interrupt

    from tests.support.envelope_saver import EnvelopeSaver, migrated
    from tests.support.scenarios import agent_graph

    # A node fails after its parallel sibling wrote: the sibling's writes and the error stay pending.
    def ok(state):
        return {"log": ["ok wrote this"]}

    def boom(state):
        raise RuntimeError("boom")

    g = StateGraph(LogState)
    g.add_node("ok", ok)
    g.add_node("boom", boom)
    g.add_edge(START, "ok")
    g.add_edge(START, "boom")
    graph = g.compile(checkpointer=saver)
    with pytest.raises(RuntimeError):
        graph.invoke({"log": ["start"]}, {"configurable": {"thread_id": FAILED_PARALLEL}})

    # An interrupt inside a node next to a sibling that finished: an interrupt write (idx -3)
    # and regular writes at the same checkpoint.
    def ask(state):
        answer = interrupt("approve the refund?")
        return {"log": [f"answer {answer}"]}

    g = StateGraph(LogState)
    g.add_node("ok", ok)
    g.add_node("ask", ask)
    g.add_edge(START, "ok")
    g.add_edge(START, "ask")
    graph = g.compile(checkpointer=saver)
    graph.invoke({"log": ["start"]}, {"configurable": {"thread_id": INTERRUPTED}})

    # A migrated writer's envelopes in every checkpoint's metadata.
    env_saver = EnvelopeSaver(saver)
    env_saver.envelope = migrated(boundary_id="b-1", boundary_sequence=3, safe_boundary=True)
    agent = agent_graph().compile(checkpointer=env_saver)
    config = {"configurable": {"thread_id": ENVELOPED}}
    agent.invoke({"messages": [HumanMessage(content="enveloped question", id="e-1")]}, config)
    agent.invoke({"messages": [HumanMessage(content="tool:envelope", id="e-2")]}, config)

    def keep(state):
        return {"log": ["kept"]}

    g = StateGraph(OrderState)
    g.add_node("keep", keep)
    g.add_edge(START, "keep")
    g.compile(checkpointer=saver).invoke(
        {"log": ["start"], "order": Order(1042, "fragile")}, {"configurable": {"thread_id": CUSTOM_CLASS}}
    )


def _supports_migrate(kind: str) -> bool:
    from symfonic_cli.kinds import KINDS

    try:
        module = import_module(KINDS[kind].backend)
    except ImportError:
        return False
    return any(
        isinstance(obj, type) and all(hasattr(obj, m) for m in ("export_thread", "import_rows", "decoded_thread", "import_decoded"))
        for obj in vars(module).values()
    )


_sources: dict[str, str] = {}


def source_store(backend) -> str:
    """One source store per kind for the module: scenarios plus the extras (never written to)."""
    if backend.kind not in _sources:
        url = backend.new_store(scenarios=True)
        with backend.saver(url) as saver:
            write_extras(saver)
        _sources[backend.kind] = url
    return _sources[backend.kind]


def migratable(kind: str, request):
    backend = backend_for(kind, request)
    if not _supports_migrate(kind):
        pytest.fail(f"the {kind} store does not implement the migrate methods of stores/protocol.py")
    return backend


PAIRS = [(a, b) for a in backends.KINDS for b in backends.KINDS]


def _json(result) -> dict:
    assert result.out, result.err
    return json.loads(result.out)


def _transcript(url: str, key: str) -> str:
    r = run("transcript", "show", "--store", url, "--thread", key, "--format", "json")
    assert r.code == 0, r.err
    return r.out


def _sha(path) -> str:
    h = hashlib.sha256()
    for p in (Path(path), Path(f"{path}-wal")):
        if p.exists():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_copy_every_pair_verifies_and_reads_back_the_same(pair, request):
    src_kind, dst_kind = pair
    src_backend = migratable(src_kind, request)
    dst_backend = migratable(dst_kind, request)
    src = source_store(src_backend)
    dst = dst_backend.new_store(scenarios=False)

    r = run("migrate", "--from", src, "--to", dst, "--all", "--format", "json")
    doc = _json(r)
    by_key = {t["thread"]: t for t in doc["threads"]}
    assert set(by_key) == set(ALL_KEYS)
    copied = set(ALL_KEYS) if src_kind == dst_kind else set(ALL_KEYS) - {CUSTOM_CLASS}
    for key in copied:
        assert by_key[key]["status"] == "copied", by_key[key]
        assert by_key[key]["verified"] is True, by_key[key]
        assert by_key[key]["checkpoints_copied"] > 0
    # Pending writes of the interrupted runs came along.
    assert by_key[FAILED_PARALLEL]["writes_copied"] >= 2
    assert by_key[INTERRUPTED]["writes_copied"] >= 2
    if src_kind == dst_kind:
        assert r.code == 0, r.err
        assert r.err == ""  # piped: no progress bar
    else:
        # An application class is never silently rebuilt between kinds: refused, named.
        refused = by_key[CUSTOM_CLASS]
        assert refused["status"] == "failed" and refused["checkpoints_copied"] == 0
        assert "tests.migrate.test_migrate.Order" in refused["message"]
        assert r.code == 7
        assert "not copied and verified" in r.err and "Traceback" not in r.err
        assert run("transcript", "show", "--store", dst, "--thread", CUSTOM_CLASS).code == 3

    for key in copied:
        assert _transcript(dst, key) == _transcript(src, key), key

    # A rerun copies nothing and still verifies.
    again = _json(run("migrate", "--from", src, "--to", dst, "--all", "--format", "json"))
    for key in copied:
        t = next(t for t in again["threads"] if t["thread"] == key)
        assert (t["status"], t["checkpoints_copied"], t["writes_copied"], t["verified"]) == ("skipped", 0, 0, True)
    assert again["totals"]["checkpoints_copied"] == 0

    check = run("migrate", "--verify-only", "--from", src, "--to", dst, "--thread", ENVELOPED, "--thread", INTERRUPTED, "-f", "json")
    assert check.code == 0, check.err
    assert [(t["status"], t["verified"]) for t in _json(check)["threads"]] == [("verified", True), ("verified", True)]


@pytest.mark.parametrize("other", ["postgres", "mongodb"])
def test_envelopes_and_pending_writes_survive_a_cross_kind_round_trip(other, request):
    """sqlite -> other kind -> sqlite gives back the same decoded thread, metadata envelopes included."""
    sq = migratable("sqlite", request)
    ob = migratable(other, request)
    src = source_store(sq)
    middle = ob.new_store(scenarios=False)
    back = sq.new_store(scenarios=False)
    keys = ["--thread", ENVELOPED, "--thread", INTERRUPTED, "--thread", FAILED_PARALLEL]
    assert run("migrate", "--from", src, "--to", middle, *keys).code == 0
    assert run("migrate", "--from", middle, "--to", back, *keys).code == 0
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(src)) as a, open_store(parse_location(back)) as b:
        for key in (ENVELOPED, INTERRUPTED, FAILED_PARALLEL):
            da, db = a.decoded_thread(key), b.decoded_thread(key)
            assert [c.metadata for c in da.checkpoints] == [c.metadata for c in db.checkpoints]
            assert [(c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint) for c in da.checkpoints] == [
                (c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint) for c in db.checkpoints
            ]
            assert [(w.key, w.task_path, w.channel, w.value) for w in da.writes] == [
                (w.key, w.task_path, w.channel, w.value) for w in db.writes
            ]
        assert da.checkpoints  # the loop saw something
        env = a.decoded_thread(ENVELOPED).checkpoints[-1].metadata["symfonic_envelope"]
        assert env["boundary_id"] == "b-1"


# -- SQLite specifics: bytes, safety, selection, crashes


@pytest.fixture
def sq(request):
    return backend_for("sqlite", request)


def _rows(path) -> tuple[list, list]:
    conn = sqlite3.connect(path)
    try:
        return (
            sorted(conn.execute("SELECT * FROM checkpoints").fetchall()),
            sorted(conn.execute("SELECT * FROM writes").fetchall()),
        )
    finally:
        conn.close()


def test_same_kind_copy_is_byte_verbatim_and_source_untouched(sq):
    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    before = _sha(src)
    r = run("migrate", "--from", src, "--to", dst, "--all")
    assert r.code == 0, r.err
    assert _rows(src) == _rows(dst)
    assert _sha(src) == before
    assert "copied" in r.out and "verified 12" in r.out


def test_init_target_creates_the_savers_tables(sq, tmp_path):
    src = source_store(sq)
    fresh = tmp_path / "new.db"
    r = run("migrate", "--from", src, "--to", str(fresh), "--thread", "acme:_:s-001")
    assert r.code == 4 and "no SQLite file" in r.err and not fresh.exists()
    r = run("migrate", "--from", src, "--to", str(fresh), "--thread", "acme:_:s-001", "--init-target")
    assert r.code == 0, r.err
    assert _transcript(str(fresh), "acme:_:s-001") == _transcript(src, "acme:_:s-001")


def test_dry_run_writes_nothing_and_says_what_would_happen(sq):
    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    assert run("migrate", "--from", src, "--to", dst, "--thread", "acme:_:s-001").code == 0
    before = _sha(dst)
    r = run("migrate", "--dry-run", "--from", src, "--to", dst, "--tenant", "acme", "-f", "json")
    assert r.code == 0, r.err
    status = {t["thread"]: t["status"] for t in _json(r)["threads"]}
    assert status == {
        "acme:_:s-001": "skip", "acme:eu:s-002": "copy", "acme:eu:s-003": "copy", "acme:_:s-rewrite": "copy",
    }
    assert _sha(dst) == before


def test_conflicting_target_thread_is_left_unchanged(sq):
    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    key = "acme:_:s-001"
    assert run("migrate", "--from", src, "--to", dst, "--thread", key, "--thread", "globex:_:s-101").code == 0
    conn = sqlite3.connect(dst)
    # Same checkpoint id, different content; and one checkpoint gone, so a copy would write.
    cid = conn.execute("SELECT min(checkpoint_id) FROM checkpoints WHERE thread_id = ?", (key,)).fetchone()[0]
    conn.execute("UPDATE checkpoints SET metadata = ? WHERE thread_id = ? AND checkpoint_id = ?", (b'{"source": "forged"}', key, cid))
    conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?)", (key, key))
    conn.commit()
    conn.close()
    before = _rows(dst)

    dry = run("migrate", "--dry-run", "--from", src, "--to", dst, "--thread", key, "-f", "json")
    assert _json(dry)["threads"][0]["status"] == "conflict" and dry.code == 7

    r = run("migrate", "--from", src, "--to", dst, "--tenant", "acme", "--session", "s-001", "--format", "json")
    assert r.code == 7
    t = _json(r)["threads"][0]
    assert t["status"] == "conflict" and t["checkpoints_copied"] == 0
    assert cid in t["message"] and "left unchanged" in t["message"]
    assert _rows(dst) == before
    assert r.err.count("\n") == 1 and r.err.startswith("symfonic: error:")


def test_selection_by_tenant_sub_tenant_and_file(sq, tmp_path):
    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    r = run("migrate", "--from", src, "--to", dst, "--tenant", "acme", "--sub-tenant", "eu", "-f", "json")
    assert sorted(t["thread"] for t in _json(r)["threads"]) == ["acme:eu:s-002", "acme:eu:s-003"]
    keys = tmp_path / "keys.txt"
    keys.write_text("# threads to move\nglobex:_:s-100\n\nlegacy-thread-id\nno:_:such-thread\n")
    r = run("migrate", "--from", src, "--to", dst, "--from-file", str(keys), "-f", "json")
    status = {t["thread"]: t["status"] for t in _json(r)["threads"]}
    assert status == {"globex:_:s-100": "copied", "legacy-thread-id": "copied", "no:_:such-thread": "failed"}
    assert r.code == 7


@pytest.mark.parametrize(
    "args, message",
    [
        (("--all", "--tenant", "acme"), "exactly one of"),
        ((), "exactly one of"),
        (("--all", "--session", "s-1"), "need --tenant"),
        (("--tenant", "acme", "--dry-run", "--verify-only"), "mutually exclusive"),
    ],
)
def test_usage_errors(sq, args, message):
    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    r = run("migrate", "--from", src, "--to", dst, *args)
    assert r.code == 2 and message in r.err and "Traceback" not in r.err


def test_same_store_is_refused(sq):
    src = source_store(sq)
    r = run("migrate", "--from", src, "--to", f"sqlite:///{src}", "--all")
    assert r.code == 2 and "same store" in r.err


def test_killed_mid_copy_leaves_threads_whole_or_absent_and_rerun_completes(sq):
    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    keys = [a for k in ("acme:_:s-001", "acme:eu:s-002", FAILED_PARALLEL, INTERRUPTED) for a in ("--thread", k)]
    # SIGKILL inside the third thread's transaction, after its rows were written.
    killed = run_process("migrate", "--from", src, "--to", dst, *keys, env={"SYMFONIC_TEST_MIGRATE_KILL": "before-commit:3"})
    assert killed.code == -9, killed.err
    result = run("migrate", "--verify-only", "--from", src, "--to", dst, *keys, "-f", "json")
    assert result.code == 7
    verified = {t["thread"]: (t["status"], t["verified"]) for t in _json(result)["threads"]}
    assert verified == {
        "acme:_:s-001": ("verified", True), "acme:eu:s-002": ("verified", True),
        FAILED_PARALLEL: ("differs", False), INTERRUPTED: ("differs", False),
    }
    conn = sqlite3.connect(dst)
    for key in (FAILED_PARALLEL, INTERRUPTED):  # absent, not half there
        assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (key,)).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM writes WHERE thread_id = ?", (key,)).fetchone() == (0,)
    conn.close()
    rerun = _json(run("migrate", "--from", src, "--to", dst, *keys, "-f", "json"))
    assert [t["status"] for t in rerun["threads"]] == ["skipped", "skipped", "copied", "copied"]
    assert all(t["verified"] for t in rerun["threads"])


def test_write_batches_put_every_write_back_at_its_index():
    from langgraph.checkpoint.base import WRITES_IDX_MAP

    from symfonic_cli.model.copy import UnrebuildableWrites, write_batches
    from symfonic_cli.model.copy import DecodedWrite

    def w(idx, channel):
        return DecodedWrite("", "c1", "t1", "", idx, channel, f"v{idx}")

    # Interrupt written first by the task: its regular write landed at index 1.
    (batch,) = write_batches([w(-3, "__interrupt__"), w(1, "log")])
    ns, cid, task, path, items = batch
    assert [WRITES_IDX_MAP.get(ch, i) for i, (ch, _) in enumerate(items)] == [-3, 1]
    with pytest.raises(UnrebuildableWrites):
        write_batches([w(0, "log"), w(2, "log")])


def test_verify_only_names_what_differs(sq):
    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    assert run("migrate", "--from", src, "--to", dst, "--thread", FAILED_PARALLEL).code == 0
    conn = sqlite3.connect(dst)
    # A pending write changed behind the tool's back (same key, other value).
    task, idx = conn.execute("SELECT task_id, idx FROM writes WHERE thread_id = ? AND channel = 'log'", (FAILED_PARALLEL,)).fetchone()
    import ormsgpack

    conn.execute(
        "UPDATE writes SET value = ? WHERE thread_id = ? AND task_id = ? AND idx = ?",
        (ormsgpack.packb(["forged"]), FAILED_PARALLEL, task, idx),
    )
    conn.commit()
    conn.close()
    r = run("migrate", "--verify-only", "--from", src, "--to", dst, "--thread", FAILED_PARALLEL, "-f", "json")
    assert r.code == 7
    t = _json(r)["threads"][0]
    assert t["status"] == "differs" and f"/{task}/{idx}" in t["message"] and "differs" in t["message"]


def test_target_password_never_shown(sq):
    src = source_store(sq)
    secret = "Sup3r-s3cret-pw"
    r = run("--connect-timeout", "2", "migrate", "--from", src, "--to", f"postgresql://someone:{secret}@127.0.0.1:1/agents", "--all")
    assert r.code == 4, r.err
    assert secret not in r.err + r.out and "someone:***@" in r.err


def test_jobs_copy_in_worker_processes_with_the_same_outcome(sq):
    src = source_store(sq)
    one, two = sq.new_store(scenarios=False), sq.new_store(scenarios=False)
    a = run("migrate", "--from", src, "--to", one, "--all", "-f", "json")
    b = run_process("migrate", "--from", src, "--to", two, "--all", "--jobs", "3", "-f", "json")
    assert a.code == b.code == 0, b.err
    assert _json(a)["threads"] == _json(b)["threads"]
    assert _rows(one) == _rows(two) == _rows(src)


def test_writing_through_the_saver_gives_the_bytes_the_saver_wrote(sq):
    """The cross-kind path (decoded values through SqliteSaver.put/put_writes, with each shared
    object encoded once) into SQLite reproduces the source's stored bytes exactly."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.migrate.copy import Migrator
    from symfonic_cli.stores import open_store

    src = source_store(sq)
    dst = sq.new_store(scenarios=False)
    keys = [k for k in ALL_KEYS if k != CUSTOM_CLASS]
    with open_store(parse_location(src)) as a, open_store(parse_location(dst), writable=True) as b:
        migrator = Migrator(a, b)
        migrator.same_kind = False  # force the decoded path
        outcomes = [migrator.copy(k) for k in keys]
    assert [(o.status, o.verified) for o in outcomes] == [("copied", True)] * len(keys)
    conn = sqlite3.connect(src)
    expected = (
        sorted(r for r in conn.execute("SELECT * FROM checkpoints") if r[0] != CUSTOM_CLASS),
        sorted(r for r in conn.execute("SELECT * FROM writes") if r[0] != CUSTOM_CLASS),
    )
    conn.close()
    assert _rows(dst) == expected


def test_cross_kind_copy_into_postgres_holds_what_the_saver_itself_writes(request):
    """SQLite -> PostgreSQL through migrate's batched path gives row for row what a loop over the
    source calling PostgresSaver.put/put_writes one checkpoint at a time writes."""
    import psycopg
    from langgraph.checkpoint.sqlite import SqliteSaver

    src = backend_for("sqlite", request).new_store()
    pg = backend_for("postgres", request)
    ours, theirs = pg.new_store(scenarios=False), pg.new_store(scenarios=False)
    res = run("migrate", "--from", src, "--to", ours, "--all", "--format", "json")
    assert res.code == 0, res.err

    conn = sqlite3.connect(src, check_same_thread=False)
    try:
        with pg.saver(theirs) as target:
            backends.copy_store(SqliteSaver(conn), target)
    finally:
        conn.close()

    def dump(url):
        with psycopg.connect(url) as c:
            return (
                c.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints ORDER BY 1, 2, 3").fetchall(),
                c.execute("SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs ORDER BY 1, 2, 3, 4").fetchall(),
                c.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes ORDER BY 1, 2, 3, 4, 5").fetchall(),
            )

    a, b = dump(ours), dump(theirs)
    assert len(a[0]) == len(b[0]) > 50
    assert a[0] == b[0]  # checkpoints: JSONB checkpoint and metadata identical
    assert a[1] == b[1]  # blobs: byte for byte
    assert a[2] == b[2]  # pending writes
