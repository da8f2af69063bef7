"""MCP sessions for the tests: the real ``MCPServer`` of ``symfonic mcp`` on a store opened
read-only through the Python API, driven in-process by the SDK's own client.

``Client(server, mode="legacy")`` is the SDK's public way to reach a server in-process over its
in-memory transport: JSON-RPC messages in memory streams after the initialize handshake
(protocol 2025-11-25, the handshake era). ``Client(server)`` (mode "auto") would skip the
JSON-RPC framing for an in-process server (the 2026-07-28 protocol over a direct dispatcher); that
protocol is what the real ``symfonic mcp`` process speaks to the SDK's client over stdio and HTTP
in test_mcp_server.py, and test_mcp_tools.py checks that both eras answer alike in-process."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TAG = re.compile(r"<(untrusted-store-data-[0-9a-f]{16})>\n(.*)\n</\1>\Z", re.S)


@contextmanager
def reader(url: str, *, tenants: tuple[str, ...] = (), sub_tenants: tuple[str, ...] = (), all_tenants: bool = False,
           rows: int | None = None, chars: int | None = None, log: Path | None = None) -> Iterator[Any]:
    import symfonic_cli
    from symfonic_cli.mcp.accesslog import AccessLog
    from symfonic_cli.mcp.answer import Caps
    from symfonic_cli.mcp.scope import build_scope
    from symfonic_cli.mcp.tools import Reader

    caps = Caps(**{k: v for k, v in (("rows", rows), ("chars", chars)) if v is not None})
    access = AccessLog(log) if log is not None else None
    try:
        with symfonic_cli.open_store(url) as store:
            yield Reader(store, build_scope(list(tenants), list(sub_tenants), all_tenants), caps, access)
    finally:
        if access is not None:
            access.close()


def in_memory(url: str, calls: list[tuple[str, dict[str, Any]]], *, mode: str = "legacy", **options: Any) -> list[Any]:
    """Each call's ``CallToolResult``, from one in-process client session (``mode``: the SDK
    client's, see above)."""
    import anyio

    from symfonic_cli.mcp.server import build_server

    with reader(url, **options) as r:
        server = build_server(r)
        return anyio.run(_session, server, calls, mode)


async def _session(server: Any, calls: list[tuple[str, dict[str, Any]]], mode: str) -> list[Any]:
    async with client_of(server, mode) as client:
        return [await client.call_tool(name, args) for name, args in calls]


def client_of(server: Any, mode: str = "legacy") -> Any:
    """The SDK's client on ``server`` in-process (``async with``)."""
    from mcp import Client

    return Client(server, mode=mode)


def quoted(result: Any) -> Any:
    """The JSON inside the text block's untrusted-data tags (checked: named once in the notice,
    then opened once and closed once, at the block's end)."""
    assert len(result.content) == 1
    text = result.content[0].text
    match = TAG.search(text)
    assert match, text[:300]
    assert text.count(f"<{match.group(1)}>") == 2 and text.count(f"</{match.group(1)}>") == 2
    return json.loads(match.group(2))


def error_line(result: Any) -> str:
    assert result.is_error and len(result.content) == 1
    return result.content[0].text


TOKEN = "t0ken-for-the-loopback-test-5c1f"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_server(store: Path, tmp_path: Path, env: dict[str, str], *, port: int | None = None) -> Iterator[tuple[Any, str]]:
    """The real ``symfonic mcp`` process on ``store`` (tenant acme) over streamable HTTP on
    loopback, its token in a 0600 file, its access log in ``tmp_path/log.jsonl``: (the process,
    its URL), once its port answers; terminated on the way out (its output then read)."""
    import socket
    import subprocess
    import sys
    import time

    port = port or free_port()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    argv = [sys.executable, "-m", "symfonic_cli", "mcp", "-s", str(store), "--tenant", "acme",
            "--http", f"127.0.0.1:{port}", "--token-file", str(token_file), "--access-log", str(tmp_path / "log.jsonl")]
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else "no port"
                time.sleep(0.05)
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.out, proc.err = proc.communicate(timeout=20)  # type: ignore[attr-defined]
