"""``symfonic mcp``: each tool through the SDK's client vs the same read through the Python API,
and the server's start.

The store: ``--threads`` threads of ``--turns`` turns each over four tenants (a hundred written
by the real agent graph, symfonic_cli/demo/graphs.py, through the real SqliteSaver, the rest SQL
copies of them under new keys) and one thread of ``--long`` turns that the one-thread tools read;
cached under benchmarks/out/. Per tool, in one process: the same read through ``symfonic_cli.open_store`` (the
records, ``to_json()``), and the tool called through an in-memory SDK client session on the real
``MCPServer`` (``Client(server, mode="legacy")``: JSON-RPC over memory streams, the scope,
escaping, caps, the text block and the fsync'd access-log record included, the log in
``--log-dir``); the two interleaved, medians of ``--runs``, and the ratio (target: at most 1.5). Start: a real ``symfonic mcp`` process over stdio, from spawn to the SDK
client's finished initialisation (target: 1 s), median of ``--starts``.

Run: ``python benchmarks/bench_mcp.py [--threads 800] [--turns 12] [--long 150] [--runs 15] [--starts 5] [--log-dir D]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "out"
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

TENANTS = ("acme", "globex", "initech", "umbrella")
TARGET_RATIO = 1.5
TARGET_START = 1.0


def key_of(i: int) -> str:
    return f"{TENANTS[i % len(TENANTS)]}:{'eu' if i % 3 == 0 else '_'}:s-{i:04d}"


LONG = "acme:_:long"


def build(threads: int, turns: int, long_turns: int) -> Path:
    """``threads`` threads: a hundred written by the graph, the rest SQL copies of them under new
    keys of the same tenants (as bench_search.py does); and LONG, ``long_turns`` turns."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from symfonic_cli.demo.graphs import long_thread

    path = OUT / f"mcp-{threads}-{turns}-{long_turns}.db"
    if path.exists():
        return path
    OUT.mkdir(exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(str(tmp), check_same_thread=False)  # the saver writes from LangGraph's threads
    saver = SqliteSaver(conn)
    written = min(threads, 100)
    for i in range(written):
        long_thread(saver, key_of(i), turns)
    copies = threads // written - 1
    for table, cols in (
        ("checkpoints", "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"),
        ("writes", "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path"),
    ):
        conn.execute(
            f"""WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)
            INSERT INTO {table} (thread_id, {cols}) SELECT t.thread_id || '-c' || n.k, {cols} FROM {table} AS t, n""",
            (copies,),
        )
    conn.commit()
    long_thread(saver, LONG, long_turns)
    conn.commit()
    conn.close()
    tmp.rename(path)
    return path


def _pairs(store, key: str) -> list[tuple[str, dict, object]]:
    """(tool, arguments, the same read through the API) for a session granted tenant acme."""
    rows = 201  # the server's default row cap, plus the one that tells it was cut
    return [
        ("list_threads", {}, lambda: [t.to_json() for t in store.threads(tenant="acme", limit=rows)]),
        ("search_messages", {"text": "question number 7"},
         lambda: [h.to_json() for h in store.search("question number 7", tenant="acme", limit=rows)]),
        ("get_transcript", {"key": key}, lambda: [r.to_json() for r in store.transcript(key, limit=rows)]),
        ("get_thread_state", {"key": key}, lambda: store.thread_state(key).to_json()),
        ("get_history", {"key": key}, lambda: [e.to_json() for e in store.history(key, limit=rows)]),
        ("diff_checkpoints", {"key": key}, lambda: store.diff(key, -2, -1).to_json()),
        ("compat_report", {"key": key}, lambda: store.compat_report(thread=key).to_json()),
        ("store_usage", {}, lambda: [t.to_json() for t in store.threads(tenant="acme", with_size=True)]),
    ]


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


async def _measure(server, bare, pairs, runs: int) -> dict[str, list[tuple[float, float]]]:
    """Per tool: the medians (wall, CPU) of the API read, the tool call, and the tool call on a
    server without the access log (what the fsync'd record costs)."""
    from mcp import Client

    out = {}
    # The SDK's public in-process client over its in-memory transport: JSON-RPC messages in memory
    # streams after the initialize handshake (mode "auto" would skip the framing in-process).
    async with Client(server, mode="legacy") as client, Client(bare, mode="legacy") as unlogged:
        for tool, args, direct in pairs:
            times: list[list[tuple[float, float]]] = [[], [], []]
            await client.call_tool(tool, args)  # warm: first-use imports on both sides
            await unlogged.call_tool(tool, args)
            direct()
            for _ in range(runs):
                w, c = _clocks()
                direct()
                w2, c2 = _clocks()
                times[0].append((w2 - w, c2 - c))
                for i, session in ((1, client), (2, unlogged)):
                    w, c = _clocks()
                    result = await session.call_tool(tool, args)
                    w2, c2 = _clocks()
                    times[i].append((w2 - w, c2 - c))
                    assert not result.is_error, (tool, result.content)
            out[tool] = [(statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts)) for ts in times]
    return out


async def _start(path: Path, log: Path) -> tuple[float, float]:
    """(wall seconds from spawn to the client's finished initialisation, the server process's
    CPU seconds for its whole life: start, one call, end)."""
    import resource

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "symfonic_cli", "mcp", "-s", str(path), "--tenant", "acme",
                                                                 "--access-log", str(log)])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter() - t
        await client.call_tool("list_threads", {"limit": 1})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ready, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    import anyio

    import symfonic_cli
    from symfonic_cli.mcp.accesslog import AccessLog
    from symfonic_cli.mcp.answer import Caps
    from symfonic_cli.mcp.scope import build_scope
    from symfonic_cli.mcp.server import build_server
    from symfonic_cli.mcp.tools import Reader

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--threads", type=int, default=800)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--long", type=int, default=150, help="turns of the thread the one-thread tools read")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--log-dir", help="where the access log is written (default: a temporary folder); its disk's "
                        "fsync is most of a cheap tool's cost over its read")
    opts = parser.parse_args()
    path = build(opts.threads, opts.turns, opts.long)
    key = LONG
    with tempfile.TemporaryDirectory(dir=opts.log_dir) as tmp, symfonic_cli.open_store(str(path)) as store:
        log = AccessLog(Path(tmp) / "access.jsonl")
        scope = build_scope(["acme"], [], False)
        server = build_server(Reader(store, scope, Caps(), log))
        bare = build_server(Reader(store, scope, Caps(), None))
        figures = anyio.run(_measure, server, bare, _pairs(store, key), opts.runs)
        log.close()
        starts = [anyio.run(_start, path, Path(tmp) / "start.jsonl") for _ in range(opts.starts)]
    print(f"store: {opts.threads} threads x {opts.turns} turns and one of {opts.long} (SQLite), tenant acme; "
          f"medians of {opts.runs} runs; wall clock, and CPU time (the process's, unaffected by other load)")
    print(f"{'tool':<18}{'API ms':>8}{'MCP ms':>8}{'ratio':>6}{'no log':>8}{'ratio':>6}   "
          f"{'API cpu':>8}{'MCP cpu':>8}{'ratio':>6}{'no log':>8}{'ratio':>6}")
    worst = worst_cpu = 0.0
    for tool, ((api_w, api_c), (mcp_w, mcp_c), (bare_w, bare_c)) in figures.items():
        worst, worst_cpu = max(worst, mcp_w / api_w), max(worst_cpu, mcp_c / api_c)
        print(f"{tool:<18}{api_w * 1e3:>8.2f}{mcp_w * 1e3:>8.2f}{mcp_w / api_w:>6.2f}{bare_w * 1e3:>8.2f}{bare_w / api_w:>6.2f}"
              f"   {api_c * 1e3:>8.2f}{mcp_c * 1e3:>8.2f}{mcp_c / api_c:>6.2f}{bare_c * 1e3:>8.2f}{bare_c / api_c:>6.2f}")
    start = statistics.median(s for s, _ in starts)
    cpu = statistics.median(c for _, c in starts)
    print(f"server start (spawn to initialised, stdio): median {start:.3f} s wall of {opts.starts} "
          f"({', '.join(f'{s:.2f}' for s, _ in starts)}); the server's CPU for start, one call and exit: median {cpu:.3f} s")
    ok = worst <= TARGET_RATIO and start <= TARGET_START
    print(f"worst ratio {worst:.2f} wall, {worst_cpu:.2f} CPU (target {TARGET_RATIO}); start {start:.3f} s "
          f"(target {TARGET_START} s): {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
