"""Listings at scale (issue #45): ``threads list`` on a wide SQLite store, beside raw SQL doing the same job.

A wide store is what production holds after ``thread prune --keep 1``: hundreds of thousands of
threads of one checkpoint each. ``wide_store(n)`` writes one real 10-turn conversation through the
agent graph and the real SqliteSaver, then copies its latest checkpoint (and that checkpoint's
writes) under ``n`` keys with one ``INSERT ... SELECT``: each copy gets its own UUIDv6 id (times
spread over a year, not in key order), and a few threads carry ids of the other forms the exact
instant rule dates checkpoint by checkpoint (upper-case UUIDv6, ISO 8601 as very old LangGraph
wrote), so the listing's merge is measured too. Stores are cached in benchmarks/out/wide/.

Each command runs as a whole process beside its raw baseline (``python -c`` with sqlite3 and
json, as a user's script would), alternately; medians of wall time, peak RSS (/usr/bin/time) and
the ratio are printed side by side. ``bench_scale.py`` reuses ``wide_store`` and ``RAW``.

PostgreSQL (``--postgres 200000``): the same store on the benchmark server (benchmarks/pg.py), the
latest checkpoint's rows copied with ``generate_series``; the page beside the raw query through psycopg.

Run: ``python benchmarks/bench_listing_scale.py [--threads 200000,500000] [--postgres 200000] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

OUT = ROOT / "out" / "wide"
SOURCE_KEY = "wide:_:source"
TURNS = 10
# One thread in this many has upper-case UUIDv6 ids, one in ODD_ISO ISO 8601 ids.
ODD_UPPER, ODD_ISO = 25_000, 100_000
# 2025-01-01T00:00:00Z in UUIDv6 ticks (100 ns since 1582-10-15); the copies spread over a year.
_BASE_TICKS = 0x1EFC7D8D3F00000
_YEAR_TICKS = 365 * 86_400 * 10_000_000


def wide_key(i: int) -> str:
    return f"wide-{i % 40:02d}:{'eu' if i % 2 else '_'}:s-{i:07d}"


def _source(path: Path) -> None:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from symfonic_cli.demo.graphs import agent_graph

    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    graph = agent_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": SOURCE_KEY}}
    for t in range(TURNS):
        text = f"tool:item {t}" if t % 4 == 3 else f"question {t} of a wide thread"
        graph.invoke({"messages": [HumanMessage(content=text)]}, config)
    # Only the latest checkpoint of each namespace stays (what prune --keep 1 leaves).
    conn.execute("DELETE FROM writes WHERE checkpoint_id NOT IN (SELECT max(checkpoint_id) FROM checkpoints GROUP BY checkpoint_ns)")
    conn.execute("DELETE FROM checkpoints WHERE checkpoint_id NOT IN (SELECT max(checkpoint_id) FROM checkpoints GROUP BY checkpoint_ns)")
    conn.commit()
    conn.close()


def wide_store(threads: int, out: Path = OUT) -> Path:
    """The cached wide store of ``threads`` threads (generated when missing; about 10 s per 100,000)."""
    path = out / f"wide-{threads}.db"
    if path.exists():
        return path
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    tmp.unlink(missing_ok=True)
    start = time.perf_counter()
    _source(tmp)
    conn = sqlite3.connect(str(tmp))
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    # Ticks of copy i: a permutation of 0..n-1 (a multiplier prime to n), so time is not key order.
    step = 7_919 if threads % 7_919 else 7_927
    ticks = f"({_BASE_TICKS} + ((n.i * {step}) % {threads}) * ({_YEAR_TICKS} / {threads}))"
    ordered = f"printf('%08x-%04x-6%03x-8%03x-%012x', {ticks} >> 28, ({ticks} >> 12) & 65535, {ticks} & 4095, n.i % 4096, n.i)"
    iso = f"strftime('%Y-%m-%dT%H:%M:%f+00:00', ({ticks} - 122192928000000000) / 10000000.0, 'unixepoch')"
    cid = f"CASE WHEN n.i % {ODD_ISO} = 11 THEN {iso} WHEN n.i % {ODD_UPPER} = 7 THEN upper({ordered}) ELSE {ordered} END"
    numbers = f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {threads - 1}) "
    conn.create_function("wide_key", 1, wide_key, deterministic=True)
    # The copies' keys sort as their numbers do (zero-padded), so inserts go in key order.
    conn.execute(
        numbers + "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
        f"SELECT wide_key(n.i), c.checkpoint_ns, {cid}, NULL, c.type, c.checkpoint, c.metadata FROM n, checkpoints c "
        "WHERE c.thread_id = ? ORDER BY wide_key(n.i)", (SOURCE_KEY,))
    conn.execute(
        "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) "
        "SELECT c.thread_id, w.checkpoint_ns, c.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.value "
        "FROM writes w JOIN checkpoints s ON s.thread_id = w.thread_id AND s.checkpoint_ns = w.checkpoint_ns "
        "AND s.checkpoint_id = w.checkpoint_id JOIN checkpoints c ON c.checkpoint_ns = s.checkpoint_ns AND c.thread_id <> ? "
        "WHERE w.thread_id = ?", (SOURCE_KEY, SOURCE_KEY))
    for table in ("writes", "checkpoints"):
        conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (SOURCE_KEY,))
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()
    os.replace(tmp, path)
    print(f"[wide] {threads} threads: {time.perf_counter() - start:.0f} s, {path.stat().st_size / 1e6:.0f} MB", file=sys.stderr)
    return path


def wide_postgres(threads: int, server) -> str:
    """The same wide store on the benchmark PostgreSQL ``server`` (benchmarks/pg.py), generated when missing:
    one conversation through PostgresSaver, its latest checkpoint's rows copied with generate_series."""
    import psycopg
    from psycopg import sql

    db = f"bench_wide_{threads}"
    done_mark = "symfonic wide benchmark store, complete"
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db,)).fetchone()
        if row is not None and row[0] == done_mark:
            return server.url(db)
        if row is not None:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(db)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    url = server.url(db)
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.postgres import PostgresSaver

    from symfonic_cli.demo.graphs import agent_graph

    start = time.perf_counter()
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        graph = agent_graph().compile(checkpointer=saver)
        config = {"configurable": {"thread_id": SOURCE_KEY}}
        for t in range(TURNS):
            graph.invoke({"messages": [HumanMessage(content=f"question {t} of a wide thread")]}, config)
    step = 7_919 if threads % 7_919 else 7_927
    ticks = f"({_BASE_TICKS}::bigint + mod(n.i::bigint * {step}, {threads}) * ({_YEAR_TICKS}::bigint / {threads}))"
    ordered = (f"lpad(to_hex({ticks} >> 28), 8, '0') || '-' || lpad(to_hex(({ticks} >> 12) & 65535), 4, '0') || '-6' || "
               f"lpad(to_hex({ticks} & 4095), 3, '0') || '-8' || lpad(to_hex(mod(n.i, 4096)), 3, '0') || '-' || lpad(to_hex(n.i), 12, '0')")
    cid = f"CASE WHEN mod(n.i, {ODD_UPPER}) = 7 THEN upper({ordered}) ELSE {ordered} END"
    key = "'wide-' || lpad(mod(n.i, 40)::text, 2, '0') || CASE WHEN mod(n.i, 2) = 1 THEN ':eu:' ELSE ':_:' END || 's-' || lpad(n.i::text, 7, '0')"
    with psycopg.connect(url, autocommit=True) as conn:
        latest = "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = %(src)s AND checkpoint_ns = '')"
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
            f"SELECT {key}, c.checkpoint_ns, {cid}, NULL, c.type, c.checkpoint, c.metadata FROM generate_series(0, {threads - 1}) AS n(i), "
            f"checkpoints c WHERE c.thread_id = %(src)s AND c.checkpoint_ns = '' AND c.checkpoint_id = {latest}", {"src": SOURCE_KEY})
        conn.execute(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
            f"SELECT {key}, b.checkpoint_ns, b.channel, b.version, b.type, b.blob FROM generate_series(0, {threads - 1}) AS n(i), "
            "checkpoint_blobs b JOIN checkpoints c ON c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns "
            f"AND c.checkpoint_id = {latest} AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version "
            "WHERE b.thread_id = %(src)s", {"src": SOURCE_KEY})
        for table in ("checkpoint_writes", "checkpoint_blobs", "checkpoints"):
            conn.execute(f"DELETE FROM {table} WHERE thread_id = %s", (SOURCE_KEY,))
        conn.execute("VACUUM ANALYZE")
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(db), sql.Literal(done_mark)))
    print(f"[wide] PostgreSQL {threads} threads: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return url


# The raw baselines (argv[1]: the store): the store's own SQL, then what a user's script writes.
_CONNECT = "import json, sqlite3, sys\nc = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True)\n"
RAW = {
    # A page: the newest 20 threads by their latest id.
    "page": _CONNECT + (
        "for k, n, last in c.execute('SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints "
        "GROUP BY thread_id ORDER BY 3 DESC LIMIT 20'):\n    print(k, n, last)\n"
    ),
    # Every thread: one JSON object a thread, newest first.
    "all": _CONNECT + (
        "out = sys.stdout\nout.write('[')\nfirst = True\n"
        "for k, n, lo, hi in c.execute('SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints "
        "GROUP BY thread_id ORDER BY 4 DESC'):\n"
        "    out.write(('' if first else ',') + '\\n  ' + json.dumps({'key': k, 'checkpoints': n, 'first': lo, 'last': hi}))\n"
        "    first = False\nout.write('\\n]\\n')\n"
    ),
}

_PG_CONNECT = "import json, sys, psycopg\nc = psycopg.connect(sys.argv[1])\n"
RAW_POSTGRES = {
    "page": _PG_CONNECT + (
        "for k, n, last in c.execute('SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints "
        "GROUP BY thread_id ORDER BY 3 DESC LIMIT 20'):\n    print(k, n, last)\n"
    ),
}

COMMANDS = {
    "threads list --limit 20": (["threads", "list", "--limit", "20", "-f", "table"], "page"),
    "threads list -f json --limit 20": (["threads", "list", "--limit", "20", "-f", "json"], "page"),
    "threads list --status done,error --limit 20": (["threads", "list", "--limit", "20", "--status", "done,error", "-f", "json"], "page"),
    "threads list -f json (all)": (["threads", "list", "-f", "json"], "all"),
    "threads list -f csv (all)": (["threads", "list", "-f", "csv"], "all"),
}


def main(argv: list[str] | None = None) -> int:
    from benchmarks.run import PY, measure, use_installed_copy

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--threads", default="200000,500000", help="comma-separated store sizes")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="", help="substring of the command names to run")
    ap.add_argument("--postgres", default="", help="comma-separated sizes of PostgreSQL stores (benchmarks/pg.py's server)")
    a = ap.parse_args(argv)
    use_installed_copy()
    if a.postgres:
        from benchmarks import pg

        server, why = pg.available(ROOT / "out" / "pg")
        if server is None:
            raise SystemExit(why)
        print(f"{'threads':>9}  {'PostgreSQL command':42}{'ours s':>8}{'raw s':>8}{'ratio':>7}{'ours MB':>9}{'raw MB':>8}")
        for n in (int(x) for x in a.postgres.split(",")):
            url = wide_postgres(n, server)
            base = measure([PY, "-c", RAW_POSTGRES["page"], url], a.reps)
            for name, (args, raw) in COMMANDS.items():
                if raw != "page" or (a.only and a.only not in name):
                    continue
                ours = measure([PY, "-m", "symfonic_cli", *args, "-s", url], a.reps)
                print(f"{n:9}  {name:42}{ours.median:8.2f}{base.median:8.2f}{ours.median / base.median:6.2f}x"
                      f"{ours.rss_mb:9.0f}{base.rss_mb:8.0f}", flush=True)
        if not a.threads:
            return 0
    print(f"{'threads':>9}  {'command':42}{'ours s':>8}{'raw s':>8}{'ratio':>7}{'ours MB':>9}{'raw MB':>8}")
    for n in (int(x) for x in a.threads.split(",") if x):
        store = str(wide_store(n))
        raws = {}
        for name, (args, raw) in COMMANDS.items():
            if a.only and a.only not in name:
                continue
            if raw not in raws:
                raws[raw] = measure([PY, "-c", RAW[raw], store], a.reps)
            ours = measure([PY, "-m", "symfonic_cli", *args, "-s", store], a.reps)
            base = raws[raw]
            print(f"{n:9}  {name:42}{ours.median:8.2f}{base.median:8.2f}{ours.median / base.median:6.2f}x"
                  f"{ours.rss_mb:9.0f}{base.rss_mb:8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
