"""``threads search`` vs a raw SQL scan of every thread's latest root checkpoint, bytes fetched.

The store: benchmarks/stores.py's "many" store (real graphs, 2000 threads x 10 agent turns with
tool calls) REPLICATED WITH SQL (INSERT ... SELECT, checkpoints and writes, blobs on PostgreSQL)
under new thread ids until it holds --threads threads, plus --planted threads written by the real
saver whose fifth turn says "Please refund ORDER 1042" (the echo model repeats it). Cached under
benchmarks/out/ (SQLite) or in the benchmark cluster (PostgreSQL, benchmarks/pg.py).

- baseline: one Python process running the query that joins each thread's latest root checkpoint
  (max(checkpoint_id) GROUP BY thread_id) to its bytes (SQLite: the checkpoint blob; PostgreSQL:
  the messages blob named by channel_versions) and fetches every one;
- ours: ``symfonic threads search NEEDLE --format json`` as a whole process, for a needle of
  fold-safe letters ("order 1042"), one with letters other characters fold to ("refund order
  1042") and one with --case-sensitive. Each run checks it found exactly the planted threads.
Medians of --runs interleaved runs, side by side (wall and CPU seconds), and peak RSS.

Run: ``python benchmarks/bench_search.py [--threads N] [--planted P] [--runs R] [--postgres]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "out"
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks.bench_status import _proc  # noqa: E402 - wall and CPU seconds of one process

PHRASE = "Please refund ORDER 1042"
NEEDLES = (("order 1042",), ("refund order 1042",), ("refund ORDER 1042", "--case-sensitive"))
LATEST = "(SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) m"
RAW_SQLITE = (
    f"SELECT m.thread_id, c.checkpoint FROM {LATEST} "
    "JOIN checkpoints c ON c.thread_id = m.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid"
)
RAW_PG = (
    f"SELECT m.thread_id, b.blob FROM {LATEST} "
    "JOIN checkpoints c ON c.thread_id = m.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid "
    "LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = '' AND b.channel = 'messages' "
    "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'"
)


def planted_key(i: int) -> str:
    return f"planted-{i % 3}:_:p-{i:03d}"


def _plant(saver, planted: int) -> None:
    from langchain_core.messages import HumanMessage

    from symfonic_cli.demo.graphs import agent_graph

    graph = agent_graph().compile(checkpointer=saver)
    for i in range(planted):
        config = {"configurable": {"thread_id": planted_key(i)}}
        for t in range(10):
            text = PHRASE if t == 5 else (f"tool:item {t}" if t % 4 == 3 else f"question {t} of planted {i}")
            graph.invoke({"messages": [HumanMessage(content=text)]}, config)


def build_sqlite(threads: int, planted: int) -> Path:
    from benchmarks.stores import MANY_THREADS, sqlite_store

    path = OUT / f"search-{threads}-{planted}.db"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    shutil.copyfile(sqlite_store("many"), tmp)
    conn = sqlite3.connect(str(tmp), check_same_thread=False)  # the saver writes from LangGraph's threads
    copies = threads // MANY_THREADS - 1
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
    from langgraph.checkpoint.sqlite import SqliteSaver

    _plant(SqliteSaver(conn), planted)
    conn.commit()
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    tmp.rename(path)
    return path


def build_postgres(server, threads: int, planted: int) -> str:
    import psycopg
    from psycopg import sql

    from benchmarks.stores import MANY_THREADS, postgres_store

    many = postgres_store("many", server)
    db = f"bench_search_{threads}_{planted}"
    done_mark = "symfonic search benchmark store, complete"
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db,)).fetchone()
        if row is not None and row[0] == done_mark:
            return server.url(db)
        if row is not None:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(db)))
        template = many.rsplit("/", 1)[-1].split("?", 1)[0]
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(db), sql.Identifier(template)))
    url = server.url(db)
    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cols = [r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND column_name <> 'thread_id' "
                "ORDER BY ordinal_position", (table,),
            )]
            conn.execute(
                f"INSERT INTO {table} (thread_id, {', '.join(cols)}) SELECT t.thread_id || '-c' || k, {', '.join('t.' + c for c in cols)} "
                f"FROM {table} AS t, generate_series(1, %s) AS k",
                (threads // MANY_THREADS - 1,),
            )
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        _plant(saver, planted)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(db), sql.Literal(done_mark)))
    return url


def _check(args: list[str], planted: int) -> None:
    proc = subprocess.run(args, capture_output=True, text=True, cwd=str(ROOT.parent))
    assert proc.returncode == 0, proc.stderr[-1000:]
    keys = {h["key"] for h in json.loads(proc.stdout)}
    assert keys == {planted_key(i) for i in range(planted)}, sorted(keys)[:5]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=20_000)
    ap.add_argument("--planted", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--postgres", action="store_true")
    a = ap.parse_args()
    py = sys.executable
    server = None
    t0 = time.perf_counter()
    if a.postgres:
        from benchmarks import pg

        server, why = pg.available(OUT / "pg")
        if server is None:
            raise SystemExit(why)
        store = build_postgres(server, a.threads, a.planted)
        raw = [py, "-c", f"import psycopg\nwith psycopg.connect({store!r}) as c:\n n = 0\n cur = c.cursor(name='scan')\n cur.execute({RAW_PG!r})\n"
               " for _, b in cur: n += len(b or b'')\n print(n)"]
    else:
        OUT.mkdir(exist_ok=True)
        store = str(build_sqlite(a.threads, a.planted))
        raw = [py, "-c", f"import sqlite3\nc = sqlite3.connect('file:{store}?mode=ro', uri=True)\nn = 0\n"
               f"for _, b in c.execute({RAW_SQLITE!r}): n += len(b or b'')\nprint(n)"]
    try:
        print(f"store ready in {time.perf_counter() - t0:.0f} s: {a.threads} + {a.planted} threads")
        subprocess.run([py, "-m", "compileall", "-q", str(ROOT.parent / "symfonic_cli")], check=True)
        contenders = {"raw scan of the latest checkpoints' bytes": raw}
        for needle in NEEDLES:
            args = [py, "-m", "symfonic_cli", "threads", "search", "-s", store, *needle, "-f", "json"]
            _check(args, a.planted)
            contenders["search " + " ".join(needle)] = args
        times: dict[str, list[float]] = {k: [] for k in contenders}
        cpu: dict[str, list[float]] = {k: [] for k in contenders}
        for _ in range(a.runs):
            for name, args in contenders.items():
                dt, dc = _proc(args, str(ROOT.parent))
                times[name].append(dt)
                cpu[name].append(dc)
        med = {k: statistics.median(v) for k, v in times.items()}
        mcpu = {k: statistics.median(v) for k, v in cpu.items()}
        base = next(iter(contenders))
        for name in contenders:
            print(f"{name:45s} {med[name]:7.3f} s  ratio {med[name] / med[base]:.2f}x   (client CPU {mcpu[name]:.3f} s)")
        for name, args in contenders.items():
            code = f"import resource, subprocess; subprocess.run({args!r}, capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
            rss = int(subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=str(ROOT.parent)).stdout.strip() or 0)
            print(f"peak RSS {name}: {rss / 1024:.0f} MB")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
