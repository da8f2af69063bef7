"""An MCP session changes nothing: every tool, through the SDK's client, leaves a SQLite store's
bytes as they were, works under a PostgreSQL role that may only SELECT (and logs no statement that
changes anything), and sends MongoDB only read commands."""

from __future__ import annotations

import json

from tests.support.hostile import fingerprint
from tests.support.mcp_session import in_memory

EVERY_TOOL = [
    ("list_threads", {}),
    ("list_threads", {"tenant": "acme", "status": ["done", "interrupted"], "with_size": True, "inactive_for": "1s"}),
    ("search_messages", {"text": "order", "tools": True}),
    ("get_transcript", {"key": "acme:_:s-001", "tools": True}),
    ("get_transcript", {"key": "acme:_:s-001", "since": "2000-01-01", "until": "2999-01-01", "speaker": "user"}),
    ("get_transcript", {"key": "initech:_:s-sub"}),
    ("get_thread_state", {"key": "initech:_:s-sub"}),
    ("get_history", {"key": "acme:_:s-rewrite"}),
    ("diff_checkpoints", {"key": "acme:_:s-001", "a": "-3", "b": "-1"}),
    ("compat_report", {}),
    ("compat_report", {"key": "acme:_:s-001"}),
    ("store_usage", {"top": 3}),
    ("get_transcript", {"key": "acme:_:nobody"}),
]


def _all_answered(results) -> None:
    assert [r.is_error for r in results] == [False] * (len(EVERY_TOOL) - 1) + [True]


def test_sqlite_bytes_unchanged(request):
    from tests.conftest import backend_for

    path = backend_for("sqlite", request).new_store()
    before = fingerprint("sqlite", path)
    _all_answered(in_memory(path, EVERY_TOOL, all_tenants=True))
    assert fingerprint("sqlite", path) == before


def test_postgres_select_only_role_and_no_change_logged(postgres_backend):
    from tests.stores.test_postgres import _catalog, _log_mark, _logged_changes

    pg = postgres_backend
    url = pg.new_store()
    db = pg.db_of(url)
    password = "Mcp-Reader-Secret-5521"
    reader_url = pg.create_role(db, password)
    before, mark = _catalog(pg, db), _log_mark(pg)
    results = in_memory(reader_url, EVERY_TOOL, all_tenants=True)
    _all_answered(results)
    for r in results:
        assert password not in r.content[0].text
    assert _catalog(pg, db) == before
    assert _logged_changes(pg, mark, db) == []


def test_mongodb_only_read_commands(mongodb_backend):
    from tests.stores.test_mongodb import _shape, _writes_in, monitored
    from tests.support.mongo_server import database_of

    mongo = mongodb_backend
    url = mongo.new_store()
    db = database_of(url)
    before = _shape(mongo.client, db)
    with monitored() as mon:
        results = in_memory(url, EVERY_TOOL, all_tenants=True)
        seen = list(mon.seen)
    _all_answered(results)
    assert {"aggregate", "find"} <= {name for name, _, _ in seen}
    assert _writes_in(seen) == []
    assert _shape(mongo.client, db) == before


def test_every_tool_is_announced_read_only(request):
    import anyio

    from symfonic_cli.mcp.server import build_server
    from symfonic_cli.mcp.tools import TOOLS
    from tests.conftest import backend_for
    from tests.support.mcp_session import client_of, reader

    async def listed(server):
        async with client_of(server) as client:
            return (await client.list_tools()).tools

    path = backend_for("sqlite", request).new_store()
    with reader(path, all_tenants=True) as r:
        server = build_server(r)
        tools = {t.name: t for t in anyio.run(listed, server)}
    # Nothing the client is told about the tools names the store.
    told = json.dumps([t.model_dump(mode="json") for t in tools.values()]) + (server.instructions or "")
    assert path not in told and path.rsplit("/", 1)[-1] not in told
    # The eight reading tools and no other: nothing erases, prunes, exports or migrates.
    assert sorted(tools) == sorted(TOOLS) == sorted({name for name, _ in EVERY_TOOL})
    for t in tools.values():
        assert t.annotations.read_only_hint is True and t.annotations.destructive_hint is False
        assert t.output_schema["required"] == ["result", "truncated"]
