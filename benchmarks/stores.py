"""The benchmark stores: real LangGraph graphs run through the real savers, cached under benchmarks/out/.

A store is generated once (long threads are quadratic to write: every checkpoint holds the whole
list) and reused by later runs; delete benchmarks/out/ to regenerate. Other benchmarks
(bench_compat.py, bench_erase.py, bench_migrate.py) use the same stores through ``sqlite_store``
and ``postgres_store``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "out"
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

LONG_TURNS = (250, 500, 1000, 2000)
MANY_THREADS, MANY_TURNS = 2000, 10
TOOL_EVERY = 4
LONG_KEY = "bench:_:long-{turns}"


def long_key(turns: int) -> str:
    return LONG_KEY.format(turns=turns)


def many_key(i: int) -> str:
    # 40 tenants, every other one with a sub-tenant, as listings filter on both.
    return f"tenant-{i % 40:02d}:{'eu' if i % 2 else '_'}:s-{i:05d}"


def _write_long(saver, turns: int) -> None:
    from symfonic_cli.demo.graphs import long_thread

    long_thread(saver, long_key(turns), turns, tool_every=TOOL_EVERY)


def _write_many(saver, threads: int = MANY_THREADS, turns: int = MANY_TURNS) -> None:
    from langchain_core.messages import HumanMessage

    from symfonic_cli.demo.graphs import agent_graph

    graph = agent_graph().compile(checkpointer=saver)
    for i in range(threads):
        config = {"configurable": {"thread_id": many_key(i)}}
        for t in range(turns):
            text = f"tool:item {t}" if t % TOOL_EVERY == TOOL_EVERY - 1 else f"question {t} of thread {i}"
            graph.invoke({"messages": [HumanMessage(content=text)]}, config)


def _writer(spec: str):
    if spec == "many":
        return _write_many
    turns = int(spec.split("-", 1)[1])
    return lambda saver: _write_long(saver, turns)


def _log(msg: str) -> None:
    print(f"[stores] {msg}", file=sys.stderr, flush=True)


def sqlite_store(spec: str) -> Path:
    """The cached SQLite store ``spec`` ("long-250" ... "long-2000", "many"), generated when missing."""
    path = OUT / "sqlite" / f"{spec}.db"
    if path.exists():
        return path
    # Imported only to generate: the runner's own RSS is the floor of its children's max RSS.
    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    _log(f"generating SQLite store {spec} (once; cached in {path.parent}) ...")
    start = time.perf_counter()
    conn = sqlite3.connect(str(tmp), check_same_thread=False)
    conn.execute("PRAGMA synchronous = OFF")  # generation speed only; the data written is the same
    saver = SqliteSaver(conn)
    saver.setup()
    _writer(spec)(saver)
    conn.close()
    os.replace(tmp, path)
    _log(f"  {spec}: {time.perf_counter() - start:.0f} s, {path.stat().st_size / 1e6:.0f} MB")
    return path


def postgres_store(spec: str, server) -> str:
    """The database for ``spec`` on the benchmark PostgreSQL ``server`` (a url), generated when missing."""
    import psycopg
    from psycopg import sql

    db = "bench_" + spec.replace("-", "_")
    done_mark = "symfonic benchmark store, complete"
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db,)
        ).fetchone()
        if row is not None and row[0] == done_mark:
            return server.url(db)
        if row is not None:  # an interrupted generation
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(db)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    url = server.url(db)
    from langgraph.checkpoint.postgres import PostgresSaver

    _log(f"generating PostgreSQL store {spec} (once; kept in the benchmark cluster) ...")
    start = time.perf_counter()
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        _writer(spec)(saver)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(db), sql.Literal(done_mark)))
    _log(f"  {spec}: {time.perf_counter() - start:.0f} s")
    return url


if __name__ == "__main__":
    # python -m benchmarks.stores [--postgres] long-250 many ...: pre-generate stores
    specs = [a for a in sys.argv[1:] if not a.startswith("--")] or [f"long-{n}" for n in LONG_TURNS] + ["many"]
    if "--postgres" in sys.argv:
        from benchmarks import pg

        server, why = pg.available(OUT / "pg")
        if server is None:
            sys.exit(why)
        try:
            for spec in specs:
                print(postgres_store(spec, server).rsplit("@", 1)[-1])
        finally:
            server.stop()
    else:
        for spec in specs:
            print(sqlite_store(spec))
