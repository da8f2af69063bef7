"""MongoDB stores that hold more than one person apart: collections with a case-insensitive default
collation, documents whose key fields are not strings, and collection options that make no store.

SecantusDB (the suite's server) keeps a collection's default collation but does not apply it; a
real mongod applies it to every operation that names no collation. ``default_collations_applied``
makes the client do what such a server does, so the CLI runs in-process against it."""

from __future__ import annotations

import ast
import json
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import backend_for
from tests.support.cli import run
from tests.support.mongo_server import database_of
from tests.support.secantus_server import stop_server

CI = {"locale": "en", "strength": 2}
KEY, TWIN = "acme:_:s-1", "ACME:_:S-1"  # one key each for two people; equal under CI
MINE, THEIRS = "alpha question from the first person", "BRAVO SECRET OF THE SECOND PERSON"

# pymongo Collection methods that take a collation and run a command filtering, grouping or sorting.
WITH_COLLATION = (
    "find", "aggregate", "count_documents", "distinct", "delete_one", "delete_many", "update_one",
    "update_many", "replace_one", "find_one_and_delete", "find_one_and_replace", "find_one_and_update",
)


@contextmanager
def default_collations_applied():
    """Every operation that names no collation gets its collection's default one, as mongod does."""
    from pymongo.collection import Collection

    defaults: dict[tuple[str, str], dict | None] = {}

    def default_of(coll) -> dict | None:
        k = (coll.database.name, coll.name)
        if k not in defaults:
            batch = coll.database.command("listCollections", filter={"name": coll.name})["cursor"]["firstBatch"]
            defaults[k] = (batch[0].get("options") or {}).get("collation") if batch else None
        return defaults[k]

    def applying(fn):
        def method(self, *args, **kwargs):
            if kwargs.get("collation") is None and default_of(self):
                kwargs["collation"] = default_of(self)
            return fn(self, *args, **kwargs)

        return method

    originals = {name: getattr(Collection, name) for name in WITH_COLLATION}
    for name, fn in originals.items():
        setattr(Collection, name, applying(fn))
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(Collection, name, fn)


@pytest.fixture(scope="module")
def mongo(request):
    return backend_for("mongodb", request)


@pytest.fixture(scope="module")
def standalone(mongo, tmp_path_factory):
    """A standalone server (no replica set, so no transactions): writes take the ordered path."""
    from secantus import SecantusDBServer

    from tests.support.mongo_server import MongoBackend

    server = SecantusDBServer(host="127.0.0.1", port=0, storage_path=str(tmp_path_factory.mktemp("standalone")), replica_set_name=None)
    server.start()
    backend = MongoBackend(server.uri)
    assert "setName" not in backend.client.admin.command("hello")
    yield backend
    backend.client.close()
    stop_server(server)


@pytest.fixture(params=["replica-set", "standalone"])
def any_mongo(request):
    return request.getfixturevalue("mongo" if request.param == "replica-set" else "standalone")


def _twins_store(mongo) -> str:
    """Two threads whose keys differ only in case, in collections created with a CI default."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.mongodb import MongoDBSaver

    from tests.support.scenarios import agent_graph

    db = mongo.new_database()
    for name in ("checkpoints", "checkpoint_writes"):
        mongo.client[db].create_collection(name, collation=CI)
    graph = agent_graph().compile(checkpointer=MongoDBSaver(mongo.client, db_name=db))
    graph.invoke({"messages": [HumanMessage(content=MINE)]}, {"configurable": {"thread_id": KEY}})
    for text in (THEIRS, THEIRS + " again"):
        graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": TWIN}})
    return mongo.url(db)


def _counts(mongo, url: str) -> dict[str, int]:
    db = mongo.client[database_of(url)]
    return {k: db.checkpoints.count_documents({"thread_id": k}) for k in (KEY, TWIN)}


def test_every_command_keeps_case_twins_apart_under_a_case_insensitive_default_collation(any_mongo, request, tmp_path):
    mongo = any_mongo
    url = _twins_store(mongo)
    counts = _counts(mongo, url)  # SecantusDB itself applies no default: the exact counts
    assert counts[KEY] != counts[TWIN] and all(counts.values())
    reading = [
        ("transcript", "show", "-t", KEY, "-f", "json"),
        ("transcript", "show", "-t", KEY, "--index", "-1", "-f", "json"),
        ("threads", "list", "-f", "json"),
        ("threads", "list", "--tenant", "acme", "-f", "json"),
        ("threads", "list", "--status", "done", "-f", "json"),
        ("threads", "list", "--with-size", "-f", "json"),
        ("threads", "list", "--active-within", "3650d", "-f", "json"),  # a window whose answer cannot change between the runs
        ("store", "info", "-f", "json"),
        ("thread", "show", "-t", KEY, "-f", "json"),
        ("thread", "history", "-t", KEY, "-f", "json"),
        ("thread", "diff", "-t", KEY, "-2", "-1", "-f", "json"),
        ("compat", "report", "-f", "json"),
        ("compat", "report", "--by-thread", "-f", "json"),
        ("compat", "show", "-t", KEY, "-f", "json"),
        ("thread", "erase", "-t", KEY, "--dry-run", "-f", "json"),
    ]
    exact = {args: run(*args[:2], "-s", url, *args[2:]) for args in reading}
    with default_collations_applied():
        applied = {args: run(*args[:2], "-s", url, *args[2:]) for args in reading}
    for args in reading:
        assert exact[args].code == 0, (args, exact[args].err)
        assert (applied[args].code, applied[args].out) == (exact[args].code, exact[args].out), args
    assert THEIRS not in exact[reading[0]].out and MINE in exact[reading[0]].out
    listed = {r["key"]: r["checkpoints"] for r in json.loads(exact[("threads", "list", "-f", "json")].out)}
    assert listed == counts

    target = backend_for("sqlite", request).new_store(scenarios=False)
    bundle = tmp_path / "bundle"
    with default_collations_applied():
        exported = run("thread", "export", "-s", url, "-t", KEY, "-o", str(bundle))
        migrated = run("migrate", "--from", url, "--to", target, "--all", "-f", "json")
        erased = run("thread", "erase", "-s", url, "-t", KEY, "--yes", "-f", "json")
    assert exported.code == 0, exported.err
    text = "".join(p.read_text() for p in bundle.rglob("*.json"))
    assert MINE in text and THEIRS not in text and TWIN not in text
    assert migrated.code == 0, migrated.err
    rows = {r["thread"]: r for r in json.loads(migrated.out)["threads"]}
    assert {k: rows[k]["checkpoints_copied"] for k in (KEY, TWIN)} == counts
    mine = run("transcript", "show", "-s", target, "-t", KEY, "-f", "json")
    assert MINE in mine.out and THEIRS not in mine.out
    assert erased.code == 0, erased.err
    assert _counts(mongo, url) == {KEY: 0, TWIN: counts[TWIN]}  # the twin is untouched


# The receivers in stores/mongodb that are collections; anything else calling find() & co. must
# be added here or to NOT_COLLECTIONS, so no new call site escapes the check.
COLLECTIONS = {"self.checkpoints", "self.writes", "coll", "collection", "self._collection", "locks"}
NOT_COLLECTIONS = {"blob", "rest"}  # bytes.find, str.find


def _call_sites():
    root = Path(__file__).resolve().parents[2] / "symfonic_cli" / "stores" / "mongodb"
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (*WITH_COLLATION, "find_one"):
                yield path.name, node.lineno, ast.unparse(node.func.value), node


def test_every_mongodb_call_that_filters_groups_or_sorts_passes_a_collation():
    sites = list(_call_sites())
    assert len(sites) > 20  # the walk finds the backend's reads
    missing, unknown = [], []
    for name, line, receiver, node in sites:
        if receiver in NOT_COLLECTIONS:
            continue
        if receiver not in COLLECTIONS:
            unknown.append(f"{name}:{line} {receiver}")
        elif not any(k.arg == "collation" for k in node.keywords):
            missing.append(f"{name}:{line} {receiver}.{node.func.attr}")
    assert not unknown, f"calls on receivers this check does not know: {unknown}"
    assert not missing, f"no collation passed: {missing}"


def test_secantusdb_applies_an_explicit_collation_but_not_a_collection_default(mongo):
    """What the test above relies on: the server keeps defaults apart, and honours what is named."""
    db = mongo.client[mongo.new_database()]
    db.create_collection("c", collation=CI)
    db.c.insert_many([{"k": KEY}, {"k": TWIN}])
    assert db.c.count_documents({"k": KEY}) == 1
    assert db.c.count_documents({"k": KEY}, collation=CI) == 2
    assert db.c.count_documents({"k": KEY}, collation={"locale": "simple"}) == 1
    with default_collations_applied():
        assert db.c.count_documents({"k": KEY}) == 2


# -- key fields that are not strings: findings, failed threads or exit 4, never exit 1


def _copy_of(mongo, url: str, key: str, **changes) -> dict:
    """A stored document of ``key`` (the newest checkpoint's write, or the checkpoint) changed."""
    db = mongo.client[database_of(url)]
    coll = db.checkpoint_writes if changes.pop("write", False) else db.checkpoints
    doc = coll.find_one({"thread_id": key}, sort=[("checkpoint_id", -1)])
    doc.pop("_id")
    doc.update(changes)
    coll.insert_one(doc)
    return doc


def test_an_array_thread_id_belongs_to_no_thread(mongo):
    url = mongo.new_store()
    before = json.loads(run("threads", "list", "-s", url, "--with-size", "-f", "json").out)
    # another id: the saver's unique index holds an entry for each element of an array
    other = "ffffffff-0000-0000-0000-000000000000"
    # a write at the thread's latest root checkpoint: the run-state reads match it by that id
    latest = mongo.client[database_of(url)].checkpoints.find_one(
        {"thread_id": "globex:_:s-100", "checkpoint_ns": ""}, sort=[("checkpoint_id", -1)])["checkpoint_id"]
    _copy_of(mongo, url, "globex:_:s-100", thread_id=["globex:_:s-100"], checkpoint_id=latest, task_id="other-task", write=True)
    for args in (("--status", "done"), ("--with-size",)):
        r = run("threads", "list", "-s", url, *args, "-f", "json")
        assert r.code == 0 and len(json.loads(r.out)) == len(before), (args, r.err)
    _copy_of(mongo, url, "acme:_:s-001", thread_id=["acme:_:s-001", "globex:_:s-100"], checkpoint_id=other)
    for args in (("--status", "done"), ("--with-size",), ("--status", "done", "--with-size"), ("--tenant", "acme"), ()):
        r = run("threads", "list", "-s", url, *args, "-f", "json")
        assert r.code == 0, (args, r.err)
        rows = {t["key"]: t for t in json.loads(r.out)}
        assert rows and all(isinstance(k, str) for k in rows)
        for t in before:
            if t["key"] in rows:
                assert rows[t["key"]]["checkpoints"] == t["checkpoints"], args
                if "--with-size" in args:
                    assert rows[t["key"]]["size_bytes"] == t["size_bytes"]
    info = run("store", "info", "-s", url, "-f", "json")
    assert info.code == 0 and "not a string (an array, say)" in info.out
    assert json.loads(info.out)["threads"] == len(before)
    t = run("transcript", "show", "-s", url, "-t", "acme:_:s-001", "-f", "json")
    assert t.code == 0, t.err
    plan = run("thread", "erase", "-s", url, "-t", "globex:_:s-100", "--dry-run", "-f", "json")
    assert plan.code == 0, plan.err


def test_one_thread_is_read_by_its_key_alone_and_exactly(mongo):
    """A thread's reads filter on the key's equality alone, which the index answers (SecantusDB
    scans the whole collection for a key field holding more operators), and still leave out every
    document whose key is not that string: arrays holding it, other types, case twins."""
    from symfonic_cli.stores.mongodb._common import _key_is

    query = _key_is(KEY)
    assert query["thread_id"] == KEY  # the equality alone on the indexed field
    db = mongo.client[mongo.new_database()]
    db.c.create_index([("thread_id", 1), ("checkpoint_ns", 1)])
    shapes = [KEY, [KEY], [KEY, "x"], ["x", KEY], [[KEY]], {"0": KEY}, [], TWIN, KEY + " ", 5, None, {"thread_id": KEY}]
    db.c.insert_many([{"thread_id": v, "checkpoint_ns": "", "n": i} for i, v in enumerate(shapes)])
    assert [d["n"] for d in db.c.find(query)] == [0]
    assert [d["n"] for d in db.c.find({**query, "checkpoint_ns": ""})] == [0]
    assert [d["n"] for d in db.c.aggregate([{"$match": query}])] == [0]
    assert db.c.count_documents(query) == 1

    # A newer checkpoint under an array holding the key changes nothing a thread's command shows.
    url = mongo.new_store()
    shown = [("thread", "show", "-s", url, "acme:_:s-001", "-f", "json"), ("transcript", "show", "-s", url, "acme:_:s-001", "-f", "json")]
    before = [run(*args) for args in shown]
    assert all(r.code == 0 for r in before), [r.err for r in before]
    _copy_of(mongo, url, "acme:_:s-001", thread_id=["acme:_:s-001"], checkpoint_id="ffffffff-0000-0000-0000-000000000000")
    _copy_of(mongo, url, "acme:_:s-001", thread_id=["acme:_:s-001"], checkpoint_id="ffffffff-0000-0000-0000-000000000000",
             task_id="array-task", write=True)
    assert [(r.code, r.out) for r in (run(*args) for args in shown)] == [(r.code, r.out) for r in before]


def test_migrate_fails_the_threads_whose_documents_have_odd_keys_and_prints_the_summary(mongo, request):
    url = mongo.new_store()
    _copy_of(mongo, url, "acme:_:s-001", checkpoint_ns=["", "x"], checkpoint_id="ffffffff-0000-0000-0000-000000000000")
    _copy_of(mongo, url, "acme:eu:s-002", write=True, idx="0")
    _copy_of(mongo, url, "acme:eu:s-003", write=True, idx=0.5)
    _copy_of(mongo, url, "globex:_:s-100", write=True, task_id={"$gt": ""})
    odd = {"acme:_:s-001": "checkpoint_ns", "acme:eu:s-002": "idx", "acme:eu:s-003": "idx", "globex:_:s-100": "task_id"}
    for kind in ("sqlite", "mongodb"):
        target = backend_for(kind, request).new_store(scenarios=False)
        r = run("migrate", "--from", url, "--to", target, "--all", "-f", "json")
        assert r.code == 7, r.err
        rows = {t["thread"]: t for t in json.loads(r.out)["threads"]}
        for key, field in odd.items():
            assert rows[key]["status"] == "failed" and f"'{field}'" in rows[key]["message"], rows[key]
        assert all(t["status"] == "copied" and t["verified"] for k, t in rows.items() if k not in odd)
        assert r.err.startswith("symfonic: error:") and r.err.count("\n") == 1
    h = run("thread", "history", "-s", url, "-t", "globex:_:s-100")
    assert h.code == 4 and "'task_id' is dict" in h.err and h.err.count("\n") == 1
    h = run("thread", "history", "-s", url, "-t", "acme:eu:s-003")
    assert h.code == 4 and "'idx' is float" in h.err


def test_an_odd_index_in_a_sqlite_source_fails_its_thread(request):
    import sqlite3

    src = backend_for("sqlite", request).new_store()
    conn = sqlite3.connect(src)
    conn.execute("UPDATE writes SET idx = 0.5 WHERE thread_id = 'acme:_:s-001' AND idx = 0")
    conn.commit()
    conn.close()
    target = backend_for("sqlite", request).new_store(scenarios=False)
    r = run("migrate", "--from", src, "--to", target, "--thread", "acme:_:s-001", "--thread", "globex:_:s-101", "-f", "json")
    assert r.code == 7, r.err
    rows = {t["thread"]: t for t in json.loads(r.out)["threads"]}
    assert rows["acme:_:s-001"]["status"] == "failed" and "0.5" in rows["acme:_:s-001"]["message"]
    assert rows["globex:_:s-101"]["status"] == "copied"


def test_the_same_collection_for_checkpoints_and_writes_is_refused(mongo):
    url = mongo.new_store()
    for args in (("--checkpoint-collection", "checkpoints", "--writes-collection", "checkpoints"),
                 ("--writes-collection", "checkpoints"), ("--checkpoint-collection", "checkpoint_writes")):
        r = run(*args, "threads", "list", "-s", url)
        assert r.code == 2 and "same collection" in r.err, (args, r.err)


def test_a_standalone_target_inserts_only_too(standalone):
    """No transaction to roll back: the checked inserts refuse before anything is written."""
    from symfonic_cli.location import parse_location
    from symfonic_cli.model.copy import DecodedCheckpoint, MigrationConflict
    from symfonic_cli.stores import open_store

    key = "acme:_:s-001"
    url = standalone.new_store(scenarios=True, only=[key])
    with open_store(parse_location(url), writable=True) as st:
        assert not st._supports_transactions()
        before = st.export_thread(key).rows
        held = [c for c in st.decoded_thread(key).checkpoints if c.checkpoint_ns == ""][-1]
        forged = DecodedCheckpoint("", held.checkpoint_id[:-6] + "ffffff", None, held.checkpoint, {**held.metadata, "source": "forged"})
        with pytest.raises(MigrationConflict):
            st.import_decoded(key, [forged], [], [{}])
        assert st.export_thread(key).rows == before
