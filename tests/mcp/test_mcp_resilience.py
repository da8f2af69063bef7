"""The real ``symfonic mcp`` process when things around it fail (issue #44, item 10): its
PostgreSQL backend terminated by an administrator (``pg_terminate_backend``): the next calls
connect again and answer; its access log unwritable (a file-size limit, as a full disk): no
answer, one line on stderr per call, never a traceback; the HTTP bearer scheme in any case
(RFC 7235)."""

from __future__ import annotations

import json
import resource
import sys

import pytest

from tests.conftest import backend_for
from tests.mcp.test_mcp_server import _env
from tests.support.mcp_session import TOKEN, http_server, quoted


async def _stdio_session(params, errlog, steps):
    """Each step is a list of tool calls, or a callable run between calls (in this process)."""
    from mcp import Client
    from mcp.client.stdio import stdio_client

    results = []
    async with Client(stdio_client(params, errlog=errlog)) as client:
        for step in steps:
            if callable(step):
                step()
                continue
            name, args = step
            results.append(await client.call_tool(name, args))
    return results


def test_a_terminated_postgres_backend_is_connected_again(request, tmp_path):
    import anyio
    from mcp.client.stdio import StdioServerParameters

    backend = backend_for("postgres", request)
    url = backend.new_store()
    db = backend.db_of(url)
    killed: list[int] = []

    def terminate() -> None:
        with backend.admin() as conn:
            sessions = [pid for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = 'symfonic'", (db,))]
            assert len(sessions) == 1, "the server's one session was not found"
            assert conn.execute("SELECT pg_terminate_backend(%s, 5000)", (sessions[0],)).fetchone()[0]
            killed.append(sessions[0])

    params = StdioServerParameters(command=sys.executable, args=["-m", "symfonic_cli", "mcp", "-s", url, "--tenant", "acme"],
                                   env=_env(tmp_path))
    steps = [("list_threads", {}), terminate, ("get_transcript", {"key": "acme:_:s-001", "index": 0}), terminate,
             ("list_threads", {}), ("search_messages", {"text": "order"})]
    with open(tmp_path / "stderr.txt", "w") as errlog:
        first, after, again, search = anyio.run(_stdio_session, params, errlog, steps)
    err = (tmp_path / "stderr.txt").read_text()
    assert not first.is_error and not after.is_error and not again.is_error and not search.is_error, err
    assert quoted(after)["result"][0]["content"] == "You are a helpful support agent."
    assert quoted(again)["result"] == quoted(first)["result"]
    assert err.count("connection to the store was lost") == 2 and "Traceback" not in err
    assert len(set(killed)) == 2  # a new session each time
    log = tmp_path / "state" / "symfonic" / "mcp-access.jsonl"
    assert [json.loads(line)["outcome"] for line in log.read_text().splitlines()] == ["ok"] * 4  # one record per call


def test_an_access_log_that_cannot_be_written_gives_no_answer_and_one_line_each(sqlite_store, tmp_path):
    import anyio
    from mcp.client.stdio import StdioServerParameters

    log = tmp_path / "access.jsonl"
    earlier = b'{"earlier": "records"}\n' * 400  # the log's size when the disk fills up
    log.write_bytes(earlier)
    limit = len(earlier) + 20  # no record fits (a full disk, a quota: writes fail alike)

    def limited() -> None:  # in the server process, before it starts
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    params = StdioServerParameters(command=sys.executable, env=_env(tmp_path),
                                   args=["-m", "symfonic_cli", "mcp", "-s", str(sqlite_store), "--tenant", "acme",
                                         "--access-log", str(log)])
    steps = [("list_threads", {}), ("get_transcript", {"key": "acme:_:s-001"}), ("get_transcript", {"key": "nope:_:x"}),
             ("no_such_tool", {})]
    import subprocess

    original = subprocess.Popen.__init__

    def with_limit(self, *args, **kwargs):  # the SDK starts the server with subprocess: the limit goes with it
        kwargs["preexec_fn"] = limited
        original(self, *args, **kwargs)

    try:
        subprocess.Popen.__init__ = with_limit
        with open(tmp_path / "stderr.txt", "w") as errlog:
            results = anyio.run(_stdio_session, params, errlog, steps)
    finally:
        subprocess.Popen.__init__ = original
    err = (tmp_path / "stderr.txt").read_text()
    assert all(r.is_error for r in results), [r.content for r in results]
    assert all("record" in r.content[0].text and "acme" not in r.content[0].text for r in results[:3])
    lines = [line for line in err.splitlines() if "access log" in line and "cannot be written" in line]
    assert len(lines) == 4, err
    assert "Traceback" not in err and len(err.splitlines()) <= 5, err  # the serving line and one per call
    assert log.read_bytes() == earlier  # nothing half written


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer", "bEaReR"])
def test_the_bearer_scheme_is_case_insensitive(sqlite_store, tmp_path, scheme):
    import anyio
    import httpx2

    with http_server(sqlite_store, tmp_path, _env(tmp_path)) as (_proc, url):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        for wrong in (f"{scheme} {TOKEN}x", f"{scheme}{TOKEN}", f"{scheme} {TOKEN.upper()}", f"Basic {TOKEN}"):
            r = httpx2.post(url, json=body, headers={"Accept": "application/json, text/event-stream", "Authorization": wrong})
            assert r.status_code == 401, wrong

        async def session():
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            async with httpx2.AsyncClient(headers={"Authorization": f"{scheme} {TOKEN}"}) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return await client.call_tool("list_threads", {})

        result = anyio.run(session)
        assert not result.is_error
        assert {r["key"].split(":")[0] for r in result.structured_content["result"]} == {"acme"}
