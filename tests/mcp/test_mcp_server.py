"""The real ``symfonic mcp`` process: over stdio driven by the SDK's client (start time, answers,
the default access log, the store's bytes), over streamable HTTP on loopback with a bearer token,
and its refusals: one line on stderr, a documented exit code, never a traceback."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run, run_process
from tests.support.hostile import fingerprint
from tests.support.mcp_session import TOKEN, http_server, quoted

def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_") or k.startswith("SYMFONIC_TEST_")}
    env.update({"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "home")}, **extra)
    return env


async def _stdio(params, calls: list[tuple[str, dict]], errlog):
    from mcp import Client
    from mcp.client.stdio import stdio_client

    # errlog given explicitly: the SDK's default is the sys.stderr of its import, which pytest's
    # capture of an earlier test may have closed.
    async with Client(stdio_client(params, errlog=errlog)) as client:
        return [await client.call_tool(name, args) for name, args in calls]


def test_stdio_process_answers_and_records(sqlite_store, tmp_path):
    import anyio
    from mcp.client.stdio import StdioServerParameters

    path = str(sqlite_store)
    before = fingerprint("sqlite", path)
    calls = [("list_threads", {}), ("get_transcript", {"key": "acme:_:s-001", "index": 0}),
             ("get_transcript", {"key": "globex:_:s-100"})]
    params = StdioServerParameters(command=sys.executable, args=["-m", "symfonic_cli", "mcp", "-s", path, "--tenant", "acme"],
                                   env=_env(tmp_path))
    with open(tmp_path / "server-stderr.txt", "w") as errlog:
        results = anyio.run(_stdio, params, calls, errlog)
    assert "Traceback" not in (tmp_path / "server-stderr.txt").read_text()
    keys = {row["key"] for row in results[0].structured_content["result"]}
    assert keys and all(k.startswith("acme:") for k in keys)
    assert quoted(results[1])["result"][0]["content"] == "You are a helpful support agent."
    assert results[2].is_error
    log = tmp_path / "state" / "symfonic" / "mcp-access.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["tool"], r["outcome"]) for r in records] == [("list_threads", "ok"), ("get_transcript", "ok"), ("get_transcript", "not-found")]
    assert stat.S_IMODE(log.stat().st_mode) == 0o600 and stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert fingerprint("sqlite", path) == before


def test_http_on_loopback_needs_the_bearer_token(sqlite_store, tmp_path):
    import anyio
    import httpx2

    with http_server(sqlite_store, tmp_path, _env(tmp_path)) as (proc, url):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        for headers in ({}, {"Authorization": "Bearer wrong-token-of-some-length"}, {"Authorization": TOKEN},
                        {"Authorization": f"Bearer {TOKEN}x"}):
            r = httpx2.post(url, json=body, headers={"Accept": "application/json, text/event-stream", **headers})
            assert r.status_code == 401, headers
            assert TOKEN not in r.text

        # With the token but another Host (DNS rebinding) or a web page's Origin: refused by the SDK's guard.
        for headers in ({"Host": "attacker.example:80"}, {"Origin": "http://attacker.example"}):
            r = httpx2.post(url, json=body, headers={"Accept": "application/json, text/event-stream",
                                                     "Authorization": f"Bearer {TOKEN}", **headers})
            assert r.status_code in (400, 403, 421), (headers, r.status_code)

        async def session():
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return await client.call_tool("list_threads", {})

        result = anyio.run(session)
        assert not result.is_error
        assert {r["key"].split(":")[0] for r in result.structured_content["result"]} == {"acme"}
    assert TOKEN.encode() not in proc.out + proc.err
    records = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["tool"] for r in records] == ["list_threads"]


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        ((), {}, "no tenant granted"),
        (("--all-tenants", "--tenant", "acme"), {}, "leave out --tenant"),
        (("--tenant", "acme:eu"), {}, "is not a tenant id"),
        (("--tenant", ""), {}, "is not a tenant id"),
        (("--sub-tenant", "eu", "--all-tenants"), {}, "leave out --tenant"),
        (("--tenant", "acme", "--http", "0.0.0.0:8765"), {}, "only a loopback address"),
        (("--tenant", "acme", "--http", "192.168.1.1:8765"), {}, "only a loopback address"),
        (("--tenant", "acme", "--http", "127.0.0.2:8765"), {}, "only a loopback address"),  # no rebinding guard there
        (("--tenant", "acme", "--http", "[::ffff:127.0.0.1]:8765"), {}, "only a loopback address"),
        (("--tenant", "acme", "--http", "127.0.0.1"), {}, "is not HOST:PORT"),
        (("--tenant", "acme", "--http", "127.0.0.1:99999"), {}, "is not HOST:PORT"),
        (("--tenant", "acme", "--http", "127.0.0.1:8765"), {}, "needs a bearer token"),
        (("--tenant", "acme", "--http", "127.0.0.1:8765"), {"SYMFONIC_MCP_TOKEN": "short"}, "at least 16"),
        (("--tenant", "acme", "--token-file", "x"), {}, "goes with --http"),
        (("--tenant", "acme", "--token", TOKEN), {}, "No such option"),
        (("--tenant", "acme", "--max-rows", "0"), {}, "--max-rows"),
        (("--tenant", "acme", "--max-chars", "nan"), {}, "--max-chars"),
    ],
)
def test_bad_arguments_are_one_line_exit_2(args, env, words, sqlite_store):
    r = run("mcp", "-s", str(sqlite_store), *args, env=env)
    assert r.code == 2, (r.code, r.err)
    assert r.out == "" and "Traceback" not in r.err and words in r.err
    assert TOKEN not in r.err
    if not args or args[0] != "--tenant" or "--token" not in args:
        assert len(r.err.strip().splitlines()) == 1, r.err


def test_check_says_what_it_would_serve_and_exits(sqlite_store, tmp_path):
    log = tmp_path / "log.jsonl"
    r = run("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--sub-tenant", "eu", "--access-log", str(log), "--check")
    assert r.code == 0, r.err
    assert r.out.splitlines()[:2] == ["scope: acme (sub-tenant eu) (2 threads now)", "transport: stdio"]
    assert "get_transcript" in r.out and log.exists() and stat.S_IMODE(log.stat().st_mode) == 0o600
    assert log.read_text() == ""  # no tool was called


def test_a_port_in_use_is_one_line_exit_2(sqlite_store, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--http", f"127.0.0.1:{port}",
                "--access-log", str(tmp_path / "log.jsonl"), env={"SYMFONIC_MCP_TOKEN": TOKEN})
    assert r.code == 2 and r.out == "" and "cannot listen" in r.err and len(r.err.strip().splitlines()) == 1, r.err


def test_a_token_file_others_may_read_is_refused(sqlite_store, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o644)
    r = run("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--http", "127.0.0.1:8765", "--token-file", str(token_file))
    assert r.code == 2 and "readable by others" in r.err and TOKEN not in r.err


def test_store_and_access_log_problems_are_exit_4(tmp_path, sqlite_store):
    missing = run("mcp", "-s", str(tmp_path / "nope.db"), "--tenant", "acme", "--access-log", str(tmp_path / "a.jsonl"))
    assert missing.code == 4 and len(missing.err.strip().splitlines()) == 1
    folder = tmp_path / "dir"
    folder.mkdir()
    log_is_dir = run("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--access-log", str(folder))
    assert log_is_dir.code == 4 and "access log" in log_is_dir.err and len(log_is_dir.err.strip().splitlines()) == 1
    target = tmp_path / "elsewhere"
    target.write_text("")
    (tmp_path / "link.jsonl").symlink_to(target)
    via_link = run("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--access-log", str(tmp_path / "link.jsonl"))
    assert via_link.code == 4 and "access log" in via_link.err


BLOCK_SDK = """
import sys
class NoSdk:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp" or name.startswith("mcp."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, NoSdk())
from symfonic_cli.cli.app import main
main(sys.argv[1:])
"""


def test_without_the_extra_it_names_the_pip_command_exit_4(sqlite_store):
    from tests.support.markers import require

    require("slow")
    proc = subprocess.run([sys.executable, "-c", BLOCK_SDK, "mcp", "-s", str(sqlite_store), "--tenant", "acme"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "pip install 'symfonic[mcp]'" in proc.stderr
    # The rest of the tool works without it.
    assert run_process("threads", "list", "-s", str(sqlite_store), "-f", "json").code == 0
