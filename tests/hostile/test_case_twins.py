"""Two people whose keys differ only in case (``acme:_:bob`` and ``ACME:_:BOB``) on stores whose
thread_id compares case-insensitively (issue #44, item 1): a SQLite file whose thread_id columns are
declared ``COLLATE NOCASE``, PostgreSQL with thread_id under a nondeterministic ICU collation, and
MongoDB collections with a case-insensitive default collation (applied as a real mongod does).

Each store has a twin holding the same rows under byte-order keys (the file the real saver wrote;
a ``TEMPLATE`` copy of the database taken before the collation changed; the same collections
without the default applied): every reading command and every MCP tool, asked about each person,
answers on the hostile store exactly what it answers on its twin, and never shows the other
person's words."""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import nullcontext
from pathlib import Path

import pytest

from tests.conftest import backend_for
from tests.support.cli import run
from tests.support.mcp_session import in_memory, quoted

BOB, TWIN = "acme:_:bob", "ACME:_:BOB"
WORDS = {BOB: "lowercase bob asks about invoices", TWIN: "UPPERCASE BOB SHARES A MEDICAL SECRET"}
TURNS = {BOB: 2, TWIN: 3}  # different lengths: a merged thread shows more checkpoints


def _write(saver) -> None:
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    graph = agent_graph().compile(checkpointer=saver)
    for key, words in WORDS.items():
        for i in range(TURNS[key]):
            text = f"tool:{words} {i}" if i == 1 else f"{words} {i}"
            graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": key}})


def _sqlite(tmp_path: Path, request) -> tuple[str, str]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    plain = tmp_path / "plain.db"
    conn = sqlite3.connect(str(plain), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        _write(saver)
    finally:
        conn.close()
    # The same rows in tables declared as the saver declares them, thread_id COLLATE NOCASE added
    # (the saver would fold the keys while writing into such tables: the rows are copied).
    hostile = tmp_path / "nocase.db"
    schema = [sql for (sql,) in sqlite3.connect(str(plain)).execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'writes')")]
    conn = sqlite3.connect(str(hostile))
    try:
        for sql in schema:
            assert "thread_id TEXT NOT NULL" in sql
            conn.execute(sql.replace("thread_id TEXT NOT NULL", "thread_id TEXT COLLATE NOCASE NOT NULL"))
        conn.execute("ATTACH DATABASE ? AS src", (str(plain),))
        conn.execute("INSERT INTO checkpoints SELECT * FROM src.checkpoints")
        conn.execute("INSERT INTO writes SELECT * FROM src.writes")
        conn.commit()
        assert conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0] == 1  # NOCASE folds
    finally:
        conn.close()
    return str(plain), str(hostile)


def _postgres(tmp_path: Path, request) -> tuple[str, str]:
    import psycopg

    backend = backend_for("postgres", request)
    plain = backend.new_store(scenarios=False)
    with backend.saver(plain) as saver:
        _write(saver)
    name = f"symfonic_ci_{uuid.uuid4().hex[:12]}"
    with backend.admin() as conn:
        conn.execute(f'CREATE DATABASE {name} TEMPLATE "{backend.db_of(plain)}"')
    backend.created.append(name)
    hostile = backend.url(name)
    with psycopg.connect(hostile, autocommit=True) as conn:
        conn.execute("CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN thread_id TYPE text COLLATE ci")
        assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (BOB,)).fetchone()[0] == \
            conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (TWIN,)).fetchone()[0]  # "=" folds
    return plain, hostile


def _mongodb(tmp_path: Path, request) -> tuple[str, str]:
    from langgraph.checkpoint.mongodb import MongoDBSaver

    from tests.stores.test_mongodb_trust import CI

    mongo = backend_for("mongodb", request)
    db = mongo.new_database()
    for name in ("checkpoints", "checkpoint_writes"):
        mongo.client[db].create_collection(name, collation=CI)
    _write(MongoDBSaver(mongo.client, db_name=db))
    url = mongo.url(db)
    return url, url  # the twin: the same collections without their default collation applied


KINDS = {"sqlite": _sqlite, "postgres": _postgres, "mongodb": _mongodb}


@pytest.fixture(params=list(KINDS))
def twin_stores(request, tmp_path):
    plain, hostile = KINDS[request.param](tmp_path, request)
    if request.param == "mongodb":
        from tests.stores.test_mongodb_trust import default_collations_applied

        return plain, hostile, default_collations_applied
    return plain, hostile, nullcontext


def _reading(key: str) -> list[tuple[str, ...]]:
    tenant = key.split(":")[0]
    return [
        ("transcript", "show", "-t", key, "-f", "json"),
        ("transcript", "show", "-t", key, "--tools", "-f", "csv"),
        ("transcript", "show", "-t", key, "--index", "-1", "-f", "json"),
        ("transcript", "show", "-t", key, "--retained", "-f", "json"),
        ("transcript", "show", "-t", key, "--resume-window", "-f", "json"),
        ("thread", "show", "-t", key, "-f", "json"),
        ("thread", "history", "-t", key, "-f", "json"),
        ("thread", "diff", "-t", key, "-2", "-1", "-f", "json"),
        ("threads", "list", "-f", "json"),
        ("threads", "list", "--tenant", tenant, "-f", "json"),
        ("threads", "list", "--with-size", "-f", "json"),
        ("threads", "list", "--status", "done", "-f", "json"),
        ("threads", "search", "bob", "-f", "json"),
        ("threads", "search", "bob", "--tenant", tenant, "--tools", "-f", "json"),
        ("store", "usage", "-f", "json"),
        ("compat", "report", "-f", "json"),
        ("compat", "report", "--by-thread", "-f", "json"),
        ("compat", "report", "-t", key, "-f", "json"),
        ("compat", "show", "-t", key, "-f", "json"),
        ("thread", "erase", "-t", key, "--dry-run", "-f", "json"),
    ]


def _tools(key: str) -> list[tuple[str, dict]]:
    return [
        ("list_threads", {}),
        ("list_threads", {"with_size": True, "status": ["done"]}),
        ("search_messages", {"text": "bob"}),
        ("search_messages", {"text": "bob", "tools": True}),
        ("get_transcript", {"key": key}),
        ("get_transcript", {"key": key, "tools": True, "index": -1}),
        ("get_transcript", {"key": key, "resume_window": True}),
        ("get_thread_state", {"key": key}),
        ("get_history", {"key": key}),
        ("diff_checkpoints", {"key": key}),
        ("compat_report", {"key": key}),
        ("compat_report", {}),
        ("store_usage", {}),
    ]


def _comparable(args: tuple[str, ...], out: str, url: str, plain: str) -> object:
    """What must be equal on the two stores: the output with the store's name as the twin's; of
    ``store usage``, all but the tables' physical sizes and the server's statistics."""
    out = out.replace(url, plain).replace(_name(url), _name(plain))
    if args[:2] == ("store", "usage"):
        doc = json.loads(out)
        doc.pop("tables", None)
        doc.pop("files", None)
        return doc
    return out


def _name(url: str) -> str:
    return url.rsplit("/", 1)[-1].split("?")[0]


def _bundle_text(url: str, key: str, out: Path) -> str:
    r = run("thread", "export", "-s", url, "-t", key, "--with-state", "-o", str(out))
    assert r.code == 0, r.err
    return "\n".join(p.read_text() for p in sorted(out.rglob("*.json")) if p.name != "manifest.json")


def test_every_reading_command_and_tool_keeps_case_twins_apart(twin_stores, tmp_path):
    plain, hostile, applied = twin_stores
    wrong: list[object] = []  # every command and tool that answered otherwise, named
    for key, other in ((BOB, TWIN), (TWIN, BOB)):
        for args in _reading(key):
            truth = run(*args[:2], "-s", plain, *args[2:])
            assert truth.code == 0, (args, truth.err)
            assert WORDS[other] not in truth.out or args[0] not in ("transcript", "thread"), args
            with applied():
                got = run(*args[:2], "-s", hostile, *args[2:])
            if (got.code, _comparable(args, got.out, hostile, plain)) != (truth.code, _comparable(args, truth.out, plain, plain)):
                wrong.append((args, got.err.strip()[-200:]))
        with applied():
            got_bundle = _bundle_text(hostile, key, tmp_path / f"hostile-{key}")
        want_bundle = _bundle_text(plain, key, tmp_path / f"plain-{key}")
        assert WORDS[key] in want_bundle and WORDS[other] not in want_bundle
        if got_bundle != want_bundle:
            wrong.append(("thread export", key))

        tenant = key.split(":")[0]
        truth_answers = in_memory(plain, _tools(key), tenants=(tenant,))
        with applied():
            answers = in_memory(hostile, _tools(key), tenants=(tenant,))
        for (tool, args), want, got_answer in zip(_tools(key), truth_answers, answers, strict=True):
            assert not want.is_error, (tool, want.content[0].text)
            assert WORDS[other] not in json.dumps(quoted(want)), (tool, args)
            if got_answer.is_error or quoted(got_answer) != quoted(want):
                wrong.append((tool, args, key))
    info = run("store", "info", "-s", plain, "-f", "json")
    with applied():
        got_info = run("store", "info", "-s", hostile, "-f", "json")
    assert info.code == 0, info.err
    assert json.loads(info.out)["threads"] == 2
    if got_info.code != 0 or json.loads(got_info.out)["threads"] != 2:
        wrong.append(("store info", got_info.out[:300], got_info.err))
    assert not wrong, "\n".join(map(repr, wrong))


def test_exact_key_reads_keep_the_index_under_a_nondeterministic_collation(request, tmp_path):
    """PostgreSQL: ``thread_id COLLATE "C" = $1`` alone cannot use the column's (case-insensitive)
    index; the read rule lets the index find the candidates and keeps the exact key."""
    import symfonic_cli

    _, hostile = _postgres(tmp_path, request)
    with symfonic_cli.open_store(hostile) as store:
        backend = store._store  # the PostgreSQL backend under the API's Store
        conn = backend.conn
        assert backend._key_is() != "thread_id = %s"  # the nondeterministic form is in use
        conn.execute("SET enable_seqscan = off")

        def plan(where: str, args: tuple) -> str:
            return "\n".join(r[0] for r in conn.execute(f"EXPLAIN SELECT checkpoint_id FROM checkpoints WHERE {where}", args))

        exact = plan(backend._key_is(), backend._key_args(BOB))
        assert "Index" in exact and "Index Cond: (thread_id = " in exact, exact
        assert "Filter: ((thread_id)::text = " in exact, exact  # the exact comparison, after the index
        assert "Index Cond" not in plan('thread_id COLLATE "C" = %s', (BOB,))  # the form the rule avoids
        assert [r[0] for r in conn.execute(f"SELECT DISTINCT thread_id FROM checkpoints WHERE {backend._key_is()}",
                                           backend._key_args(TWIN))] == [TWIN]
