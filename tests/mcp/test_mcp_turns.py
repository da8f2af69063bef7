"""A slow read leaves the other sessions answered: the real ``symfonic mcp`` over streamable HTTP,
one session's tool call waiting on a store another process holds locked, a second session
connecting and listing the tools meanwhile (the reads run off the event loop)."""

from __future__ import annotations

import sqlite3
import threading
import time

from tests.mcp.test_mcp_server import _env
from tests.support.mcp_session import TOKEN, http_server


def test_a_read_waiting_on_a_locked_store_leaves_other_sessions_answered(sqlite_store, tmp_path):
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with sqlite3.connect(sqlite_store) as conn:  # a rollback-journal file: a writer's lock keeps readers out
        conn.execute("PRAGMA journal_mode = DELETE")
    writer = sqlite3.connect(sqlite_store, isolation_level=None, check_same_thread=False)
    released = threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            writer.execute("COMMIT")

    async def scenario(url: str) -> tuple[float, object, float]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as h1, \
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as h2:
            async with Client(streamable_http_client(url, http_client=h1)) as first:
                writer.execute("BEGIN EXCLUSIVE")
                timer = threading.Timer(6.0, release)  # the slow read ends when the lock goes, well inside busy_timeout
                timer.start()
                slow: dict[str, object] = {}
                started = time.monotonic()
                async with anyio.create_task_group() as tg:
                    async def read() -> None:
                        slow["result"] = await first.call_tool("get_transcript", {"key": "acme:_:s-001"})
                        slow["took"] = time.monotonic() - started

                    tg.start_soon(read)
                    await anyio.sleep(0.5)  # the first session's read now waits on the lock
                    t0 = time.monotonic()
                    async with Client(streamable_http_client(url, http_client=h2)) as second:
                        tools = await second.list_tools()
                    other = time.monotonic() - t0
                    assert {t.name for t in tools.tools} >= {"list_threads", "get_transcript"}
                    release()
                timer.cancel()
                return other, slow["result"], float(slow["took"])  # type: ignore[arg-type]

    try:
        with http_server(sqlite_store, tmp_path, _env(tmp_path)) as (_, url):
            other, result, took = anyio.run(scenario, url)
    finally:
        release()
        writer.close()
    # The second session connected and had its answer while the first one's read still waited.
    assert other < 3.0, f"the second session waited {other:.1f} s behind the first one's read"
    assert not result.is_error and result.structured_content["result"], result  # type: ignore[attr-defined]
    assert took >= other  # the read finished only after the lock went
