"""A slow read leaves the other sessions answered: the real ``symfonic mcp`` over streamable HTTP,
one session's tool call waiting on a store another process holds locked, a second session
connecting and listing the tools meanwhile (the reads run off the event loop)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.mcp.test_mcp_server import TOKEN, _env, _free_port


def _serve(store: Path, tmp_path: Path) -> tuple[subprocess.Popen, str]:
    import socket

    port = _free_port()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    argv = [sys.executable, "-m", "symfonic_cli", "mcp", "-s", str(store), "--tenant", "acme",
            "--http", f"127.0.0.1:{port}", "--token-file", str(token_file), "--access-log", str(tmp_path / "log.jsonl")]
    proc = subprocess.Popen(argv, env=_env(tmp_path), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else "no port"
            time.sleep(0.05)


def test_a_read_waiting_on_a_locked_store_leaves_other_sessions_answered(sqlite_store, tmp_path):
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with sqlite3.connect(sqlite_store) as conn:  # a rollback-journal file: a writer's lock keeps readers out
        conn.execute("PRAGMA journal_mode = DELETE")
    proc, url = _serve(sqlite_store, tmp_path)
    writer = sqlite3.connect(sqlite_store, isolation_level=None, check_same_thread=False)
    released = threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            writer.execute("COMMIT")

    async def scenario() -> tuple[float, object, float]:
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
        other, result, took = anyio.run(scenario)
    finally:
        release()
        writer.close()
        proc.terminate()
        proc.communicate(timeout=20)
    # The second session connected and had its answer while the first one's read still waited.
    assert other < 3.0, f"the second session waited {other:.1f} s behind the first one's read"
    assert not result.is_error and result.structured_content["result"], result  # type: ignore[attr-defined]
    assert took >= other  # the read finished only after the lock went
