"""MongoDB stores through the real CLI, against a real MongoDB wire-protocol server.

Stores are written by real graphs through the real ``MongoDBSaver`` (tests/support/mongo_server.py).
"""

from __future__ import annotations

import json
import re
import time
from contextlib import contextmanager

import pytest

from tests.support import backends
from tests.support.cli import run, run_process
from tests.conftest import backend_for
from tests.support.mongo_server import database_of, with_database
from tests.support.secantus_server import stop_server
from tests.support.scenarios import SECRET_SENTENCE, scenarios

KEYS = [sc.key for sc in scenarios()]
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
READ_COMMANDS = {
    "hello", "isMaster", "ismaster", "ping", "buildInfo", "find", "getMore", "aggregate", "count",
    "distinct", "listIndexes", "listCollections", "listDatabases", "collStats", "dbStats",
    "connectionStatus", "endSessions", "killCursors", "saslStart", "saslContinue",
}
INSPECTING = [
    ("threads", "list", "-f", "json"),
    ("threads", "list", "--tenant", "acme", "-f", "json"),
    ("threads", "list", "--tenant", "acme", "--sub-tenant", "eu", "--limit", "1", "-f", "json"),
    ("store", "info", "-f", "json"),
    *[("transcript", "show", "-t", key, "-f", "json") for key in KEYS],
    ("transcript", "show", "-t", "acme:_:s-001", "--index", "-1", "--speaker", "user", "-f", "text"),
    ("transcript", "show", "-t", "acme:_:s-001", "--since", "2000-01-01", "--until", "2999-01-01", "-f", "jsonl"),
    ("compat", "report", "-f", "json"),
    ("compat", "report", "--by-thread", "-f", "json"),
    ("compat", "show", "-t", "acme:_:s-001", "-f", "json"),
]


@pytest.fixture(scope="module")
def mongo(request):
    return backend_for("mongodb", request)


@pytest.fixture(scope="module")
def mongo_url(mongo) -> str:
    return mongo.new_store()


@pytest.fixture(scope="module")
def sqlite_url(request) -> str:
    return backend_for("sqlite", request).new_store()


def _json(*args: str) -> object:
    r = run(*args)
    assert r.code == 0, r.err
    return json.loads(r.out)


# -- read-only, proved by command monitoring


class _Commands:
    """pymongo's command monitoring: every command any client of this process sends."""

    active = False
    seen: list[tuple[str, str, dict]] = []

    def started(self, event) -> None:
        if self.active:
            self.seen.append((event.command_name, event.database_name, dict(event.command)))

    def succeeded(self, event) -> None:
        pass

    def failed(self, event) -> None:
        pass


_listener: _Commands | None = None


@contextmanager
def monitored():
    """Listen to the commands of clients created inside the block (listeners are process-wide)."""
    global _listener
    from pymongo import monitoring

    if _listener is None:
        _listener = type("CommandLog", (_Commands, monitoring.CommandListener), {})()
        monitoring.register(_listener)
    _listener.seen = []
    _listener.active = True
    try:
        yield _listener
    finally:
        _listener.active = False


def _writes_in(commands) -> list[str]:
    bad = []
    for name, _db, body in commands:
        if name not in READ_COMMANDS:
            bad.append(name)
        elif name == "aggregate" and any(("$out" in s or "$merge" in s) for s in body.get("pipeline", [])):
            bad.append("aggregate with $out/$merge")
        elif name == "find" and body.get("noCursorTimeout"):
            bad.append("find noCursorTimeout")
    return bad


def _shape(client, db: str) -> dict:
    d = client[db]
    return {
        name: (d[name].count_documents({}), sorted(ix["name"] for ix in d[name].list_indexes()))
        for name in sorted(n for n in d.list_collection_names() if n != "system.profile")
    }


def test_inspecting_commands_send_only_read_commands(mongo):
    url = mongo.new_store()
    db = database_of(url)
    before = _shape(mongo.client, db)
    mongo.client[db].command("profile", 2)  # the server's own command log: db.system.profile
    try:
        with monitored() as mon:
            for args in INSPECTING:
                r = run(*args, "-s", url)
                assert r.code == 0, (args, r.err)
            assert run("transcript", "show", "-s", url, "-t", "acme:_:nobody").code == 3
        client_side = list(mon.seen)
        # Positive control: the same monitors do see a write.
        mongo.client[db]["canary"].insert_one({"x": 1})
    finally:
        mongo.client[db].command("profile", 0)
    profile = list(mongo.client[db]["system.profile"].find({}, {"op": 1, "command": 1, "ns": 1}))
    server_side = [(next(iter(p.get("command") or {"?": 0})), p.get("ns", ""), p.get("command") or {}) for p in profile]
    names = {n for n, _, _ in client_side}
    assert {"aggregate", "find", "listCollections", "listIndexes"} <= names
    assert _writes_in(client_side) == []
    assert {"aggregate", "find"} <= {n for n, _, _ in server_side}
    assert _writes_in([s for s in server_side if not s[1].endswith(".canary")]) == []
    assert any(n == "insert" for n, ns, _ in server_side if ns.endswith(".canary"))
    mongo.client[db].drop_collection("canary")
    assert _shape(mongo.client, db) == before


# -- the same conversations give the same output on every kind


def _normal_rows(rows: list[dict]) -> list[dict]:
    """Generated ids and times differ between two runs of the graphs: keep their pattern."""
    ranks = {t: i for i, t in enumerate(sorted({r["timestamp"] for r in rows if r["timestamp"]}))}
    ids: dict[str, str] = {}
    out = []
    for r in rows:
        mid = r["message_id"]
        if mid and UUID_RE.match(mid):
            mid = ids.setdefault(mid, f"<generated {len(ids)}>")
        out.append({**r, "message_id": mid, "timestamp": ranks.get(r["timestamp"])})
    return out


def _normal_threads(rows: list[dict]) -> list[dict]:
    for r in rows:
        assert r["first_activity"] and r["last_activity"] and r["first_activity"] <= r["last_activity"]
    return [{k: v for k, v in r.items() if not k.endswith("_activity")} for r in rows]


def _outputs(url: str) -> dict:
    out = {}
    for args in (("threads", "list"), ("threads", "list", "--tenant", "acme"), ("threads", "list", "--tenant", "acme", "--sub-tenant", "_"), ("threads", "list", "--limit", "3")):
        out[args] = _normal_threads(_json(*args, "-s", url, "-f", "json"))
    for key in KEYS:
        for extra in ((), ("--speaker", "user"), ("--index", "-1", "--speaker", "assistant")):
            out[(key, *extra)] = _normal_rows(_json("transcript", "show", "-s", url, "-t", key, *extra, "-f", "json"))
    return out


@pytest.fixture(scope="module")
def sqlite_outputs(sqlite_url) -> dict:
    return _outputs(sqlite_url)


def test_same_output_as_sqlite(any_kind, sqlite_outputs):
    sqlite = sqlite_outputs
    assert sqlite[("acme:_:s-001",)][1]["message_id"] == "u-1"
    assert len(sqlite[("threads", "list")]) == len(KEYS)
    assert _outputs(any_kind.new_store()) == sqlite


def test_identical_stores_give_byte_identical_output(mongo, sqlite_url):
    """The SQLite scenario store put checkpoint by checkpoint through MongoDBSaver: same bytes out."""
    url = mongo.new_store(scenarios=False)
    with backends.get("sqlite").saver(sqlite_url) as src, mongo.saver(url) as dst:
        backends.copy_store(src, dst)
    for args in [("threads", "list", "-f", "json"), *[("transcript", "show", "-t", k, "-f", "json") for k in KEYS]]:
        a, b = run(*args, "-s", sqlite_url), run(*args, "-s", url)
        assert a.code == b.code == 0, (a.err, b.err)
        assert b.out == a.out, args
    # The timestamp walk visits the same checkpoints in the same order.
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(sqlite_url)) as s, open_store(parse_location(url)) as m:
        for key in KEYS:
            assert [(x.checkpoint_ns, x.checkpoint_id) for x in m.iter_message_states(key)] == [
                (x.checkpoint_ns, x.checkpoint_id) for x in s.iter_message_states(key)
            ]
            rm, rs = m.read_checkpoint(key), s.read_checkpoint(key)
            assert rm.metadata == rs.metadata and rm.parent_checkpoint_id == rs.parent_checkpoint_id


# -- opening


def test_store_info(mongo_url):
    info = dict(_json("store", "info", "-s", mongo_url, "-f", "json"))
    assert info["kind"] == "mongodb" and info["threads"] == len(KEYS)
    assert info["checkpoints"] > info["threads"] and info["writes"] > 0
    assert info["database"] == database_of(mongo_url)
    assert any(ix.startswith("thread_id_1_checkpoint_ns_1_checkpoint_id_-1 (") for ix in info["checkpoints_indexes"])
    assert info["checkpoints_size"] > 0
    assert "warning" not in info


def test_missing_compound_index_is_warned_and_reads_still_work(mongo, mongo_url):
    db = mongo.new_database()
    src = database_of(mongo_url)
    for name in ("checkpoints", "checkpoint_writes"):
        mongo.client[db][name].insert_many(list(mongo.client[src][name].find()))
    url = with_database(mongo.uri, db)
    info = dict(_json("store", "info", "-s", url, "-f", "json"))
    assert "lacks the saver's index" in info["warning"] and "full collection scan" in info["warning"]
    assert _json("transcript", "show", "-s", url, "-t", "acme:_:s-001", "-f", "json") == _json(
        "transcript", "show", "-s", mongo_url, "-t", "acme:_:s-001", "-f", "json"
    )


def test_no_database_lists_candidates(mongo, mongo_url):
    r = run("threads", "list", "-s", with_database(mongo.uri, "").rstrip("/") + "/")
    assert r.code == 2
    assert "no database in" in r.err and database_of(mongo_url) in r.err
    assert len(r.err.strip().splitlines()) == 1


def test_database_without_collections(mongo):
    r = run("threads", "list", "-s", with_database(mongo.uri, mongo.new_database()))
    assert r.code == 4
    assert "not a LangGraph checkpoint store" in r.err and "checkpoints" in r.err
    assert "Traceback" not in r.err


def test_custom_collection_names(mongo):
    from langgraph.checkpoint.mongodb import MongoDBSaver

    from tests.support.scenarios import write_scenarios

    db = mongo.new_database()
    write_scenarios(MongoDBSaver(mongo.client, db_name=db, checkpoint_collection_name="cp", writes_collection_name="wr"), ["acme:_:s-001"])
    url = with_database(mongo.uri, db)
    assert run("threads", "list", "-s", url).code == 4
    rows = _json("--checkpoint-collection", "cp", "--writes-collection", "wr", "threads", "list", "-s", url, "-f", "json")
    assert [r["key"] for r in rows] == ["acme:_:s-001"]
    env = {"SYMFONIC_CHECKPOINT_COLLECTION": "cp", "SYMFONIC_WRITES_COLLECTION": "wr"}
    r = run("transcript", "show", "-s", url, "-t", "acme:_:s-001", "--index", "0", "--speaker", "user", "-f", "text", env=env)
    assert r.code == 0 and "What is the status of order 1042?" in r.out
    assert run("--checkpoint-collection", "bad$name", "threads", "list", "-s", url).code == 2


def test_unreachable_server_fails_fast_with_password_masked():
    start = time.monotonic()
    r = run("--connect-timeout", "0.5", "threads", "list", "-s", "mongodb://support:Sup3rSecretPw@127.0.0.1:1/agents")
    elapsed = time.monotonic() - start
    assert r.code == 4 and elapsed < 5
    assert "cannot reach" in r.err and "support:***@127.0.0.1:1/agents" in r.err
    assert "Sup3rSecretPw" not in r.err + r.out
    assert len(r.err.strip().splitlines()) == 1
    # The same through the installed entry point, as a separate process.
    p = run_process("--connect-timeout", "0.5", "store", "info", "-s", "mongodb://support:Sup3rSecretPw@127.0.0.1:1/agents")
    assert p.code == 4 and "cannot reach" in p.err and "Traceback" not in p.err and "Sup3rSecretPw" not in p.err


def test_operator_shaped_keys_stay_strings(mongo_url):
    for key in ('{"$ne": ""}', "$where", "acme:_:{$gt:''}"):
        r = run("transcript", "show", "-s", mongo_url, "-t", key)
        assert r.code == 3, r.err
    from symfonic_cli.errors import UsageError
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(mongo_url)) as st:
        with pytest.raises(UsageError):
            st.thread_summary({"$ne": ""})  # type: ignore[arg-type]
        assert st.thread_summary("acme:_:s-001").checkpoints > 0


def test_unexpected_document_shapes_exit_4(mongo):
    url = mongo.new_store(scenarios=False)
    db = mongo.client[database_of(url)]
    db.checkpoints.insert_one({"thread_id": "t:_:s", "checkpoint_ns": "", "checkpoint_id": "1", "type": "msgpack", "checkpoint": "not bytes", "metadata": {}})
    db.checkpoints.insert_one({"thread_id": "u:_:s", "checkpoint_ns": "", "checkpoint_id": "1", "type": "msgpack", "checkpoint": b"\xc1\xc1", "metadata": {}})
    db.checkpoints.insert_one({"thread_id": "v:_:s", "checkpoint_ns": "", "checkpoint_id": "1", "type": "msgpack", "checkpoint": b"\x80", "metadata": {"step": 5}})
    for key, text in (("t:_:s", "unexpected shape"), ("u:_:s", "cannot be decoded"), ("v:_:s", "metadata of checkpoint 1")):
        r = run("transcript", "show", "-s", url, "-t", key)
        assert r.code == 4, (key, r.err)
        assert text in r.err and "Traceback" not in r.err
        assert len(r.err.strip().splitlines()) == 1


# -- authentication (a second, auth-enforcing server)


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory, mongo):
    from pymongo import MongoClient
    from secantus import SecantusDBServer

    from tests.support.scenarios import write_scenarios

    path = str(tmp_path_factory.mktemp("secantus-auth"))
    server = SecantusDBServer(host="127.0.0.1", port=0, storage_path=path)
    server.start()
    try:
        client = MongoClient(server.uri)
        client.admin.command("createUser", "support", pwd="p@ss:w/rd", roles=[{"role": "read", "db": "agents"}])
        client["agents"].command("createUser", "local-reader", pwd="pw-in-agents", roles=[{"role": "read", "db": "agents"}])
        from langgraph.checkpoint.mongodb import MongoDBSaver

        write_scenarios(MongoDBSaver(client, db_name="agents"), ["acme:_:s-001"])
        client.close()
    finally:
        stop_server(server)
    server = SecantusDBServer(host="127.0.0.1", port=0, storage_path=path, require_auth=True)
    server.start()
    yield server
    stop_server(server)


def test_authentication(auth_server):
    host = auth_server.uri.split("//")[1].rstrip("/")
    bad = run("threads", "list", "-s", f"mongodb://support:WrongPassw0rd@{host}/agents?authSource=admin")
    assert bad.code == 4 and "authentication failed" in bad.err
    assert "WrongPassw0rd" not in bad.err + bad.out and "support:***@" in bad.err
    # Password from the environment; a user with the read role only is enough for every command.
    env = {"SYMFONIC_MONGO_PASSWORD": "p@ss:w/rd"}
    url = f"mongodb://support@{host}/agents?authSource=admin"
    r = run("threads", "list", "-s", url, "-f", "json", env=env)
    assert r.code == 0, r.err
    assert [x["key"] for x in json.loads(r.out)] == ["acme:_:s-001"]
    for args in (("store", "info"), ("transcript", "show", "-t", "acme:_:s-001")):
        r = run(*args, "-s", url, env=env)
        assert r.code == 0 and "p@ss" not in r.out + r.err, r.err
    # A read-only user cannot erase: refused before anything is deleted, exit 4.
    r = run("thread", "erase", "-s", url, "--thread", "acme:_:s-001", "--yes", env=env)
    assert r.code == 4 and "read roles" in r.err, r.err
    assert run("transcript", "show", "-s", url, "-t", "acme:_:s-001", "-f", "json", env=env).out.count('"index"') > 3
    # Without authSource the URL's database is the authentication database, as in every driver.
    r = run("threads", "list", "-s", f"mongodb://local-reader:pw-in-agents@{host}/agents", "-f", "json")
    assert r.code == 0, r.err


# -- erase (store protocol): one multi-document transaction


def test_erase_is_one_transaction(mongo):
    from symfonic_cli.errors import StoreError
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = mongo.new_store()
    with open_store(parse_location(url)) as ro:
        with pytest.raises(StoreError):
            ro.erase_prepare(())
    with open_store(parse_location(url), writable=True) as st:
        assert st.erase_prepare(()) == []  # transactions supported: nothing to note
        assert st.thread_keys_with_prefix("globex:") == ["globex:_:s-100", "globex:_:s-101"]
        plan = st.erase_plan("globex:_:s-100", ())
        assert list(plan.rows) == ["checkpoint_writes", "checkpoints"] and plan.rows["checkpoints"] > 0
        assert plan.first_checkpoint_id <= plan.last_checkpoint_id

        def crash(table: str) -> None:
            if table == "checkpoint_writes":
                raise RuntimeError("killed between the two deletes")

        with pytest.raises(RuntimeError):
            st.erase_thread("globex:_:s-100", (), between=crash)
        assert st.remaining_rows("globex:_:s-100", ()) == plan.rows  # rolled back: still whole
        assert st.erase_thread("globex:_:s-100", ()) == plan.rows
        assert st.remaining_rows("globex:_:s-100", ()) == {"checkpoint_writes": 0, "checkpoints": 0}
        assert st.erase_thread("globex:_:s-100", ()) == {"checkpoint_writes": 0, "checkpoints": 0}
    assert SECRET_SENTENCE not in run("transcript", "show", "-s", url, "-t", "globex:_:s-100").out
    assert [r["key"] for r in _json("threads", "list", "-s", url, "--tenant", "globex", "-f", "json")] == ["globex:_:s-101"]


# -- migrate targets: --init-target runs the saver's own constructor (collections and indexes)


def test_migrate_into_a_new_database(mongo, mongo_url):
    target = with_database(mongo.uri, mongo.new_database())
    r = run("migrate", "--from", mongo_url, "--to", target, "--thread", "acme:_:s-001", "--init-target")
    assert r.code == 0, r.err
    db = mongo.client[database_of(target)]
    # The saver's two collections, and the run lock's (one changing run per target), left empty.
    assert sorted(db.list_collection_names()) == ["checkpoint_writes", "checkpoints", "symfonic_run_locks"]
    assert db.symfonic_run_locks.count_documents({}) == 0
    assert any(ix["name"] == "thread_id_1_checkpoint_ns_1_checkpoint_id_-1" for ix in db.checkpoints.list_indexes())
    assert run("transcript", "show", "-s", target, "-t", "acme:_:s-001", "-f", "json").out == run(
        "transcript", "show", "-s", mongo_url, "-t", "acme:_:s-001", "-f", "json"
    ).out
