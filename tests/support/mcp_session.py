"""MCP sessions for the tests and the benchmark: the real ``MCPServer`` of ``symfonic mcp`` on a
store opened read-only through the Python API, driven by the SDK's own client over its in-memory
transport (JSON-RPC messages in memory streams), or by a real ``symfonic mcp`` process over stdio."""

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


def in_memory(url: str, calls: list[tuple[str, dict[str, Any]]], **options: Any) -> list[Any]:
    """Each call's ``CallToolResult``, from one in-memory client session."""
    import anyio

    from symfonic_cli.mcp.server import build_server

    with reader(url, **options) as r:
        server = build_server(r)
        return anyio.run(_session, server, calls)


async def _session(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import Client
    from mcp.client._memory import InMemoryTransport

    async with Client(InMemoryTransport(server)) as client:
        return [await client.call_tool(name, args) for name, args in calls]


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
