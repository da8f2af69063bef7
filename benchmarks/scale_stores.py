"""Wide stores for bench_scale.py: a few hundred real conversations, replicated to a million threads.

    python -m benchmarks.scale_stores [--kinds sqlite,postgres,mongodb] [--sizes 20000,200000,1000000]

A template of ``TEMPLATE`` threads is written by the real agent graph and saver (10 turns each, a
tool call every fourth turn), then ``symfonic thread prune --keep 1`` prunes all but every
``FULL_EVERY``-th thread (most production threads are one checkpoint after a retention prune),
and a few threads get their ids rewritten into the forms other writers use (upper case, mixed
case, ISO 8601, undatable: tests/support/rewritten_ids.py). A store of N threads is that template
replicated under generated keys, thread n a copy of template thread n % TEMPLATE, in the database
itself (SQLite ``INSERT ... SELECT`` from the attached template, PostgreSQL ``INSERT ... SELECT``
over ``generate_series``, MongoDB ``insert_many``): the bytes stored are the savers' own.

Stores are cached under benchmarks/out/scale/ (PostgreSQL: databases ``scale_N`` in the benchmark
cluster, benchmarks/out/pg; MongoDB: ``scale_N`` on the SecantusDB daemon, benchmarks/out/mongo)
and generation resumes where it stopped: a batch of ``BATCH`` threads is one transaction.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import stores

OUT = stores.OUT / "scale"
TEMPLATE = 250
FULL_EVERY = 25  # template threads 0, 25, 50, ... keep their whole history
TURNS, TOOL_EVERY = 10, 4
# Template threads i with i % 50 == 7 ask about "the refund for order {i}"; PHRASE is thread 7's:
# one template thread in TEMPLATE (0.4% of the threads), the kind of rare text support looks for.
PHRASE = "refund for order 7"
FORMS = {1: "upper", 2: "mixed", 3: "iso", 4: "undatable"}  # template thread i with i % 50 == k
BATCH = 20_000
DONE = "symfonic benchmark store, complete"


def _log(msg: str) -> None:
    print(f"[scale_stores] {time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def key_of(n: int) -> str:
    """Thread n's key: 40 tenants, every other thread with a sub-tenant."""
    return f"tenant-{n % 40:02d}:{'eu' if n % 2 else '_'}:s-{n:07d}"


# The same key in SQL (SQLite printf / PostgreSQL format); n is the column "n".
SQLITE_KEY = "printf('tenant-%02d:%s:s-%07d', n % 40, CASE n % 2 WHEN 1 THEN 'eu' ELSE '_' END, n)"
PG_KEY = "format('tenant-%%s:%%s:s-%%s', lpad(mod(n, 40)::text, 2, '0'), CASE mod(n, 2) WHEN 1 THEN 'eu' ELSE '_' END, lpad(n::text, 7, '0'))"


def template_key(i: int) -> str:
    return f"template:_:t-{i:04d}"


def _text(i: int, turn: int) -> str:
    if turn % TOOL_EVERY == TOOL_EVERY - 1:
        return f"tool:item {turn}"
    if i % 50 == 7:
        return f"question {turn} about the refund for order {i}"
    return f"question {turn} of thread {i}"


def _write_template(saver) -> None:
    from langchain_core.messages import HumanMessage

    from symfonic_cli.demo.graphs import agent_graph

    graph = agent_graph().compile(checkpointer=saver)
    for i in range(TEMPLATE):
        config = {"configurable": {"thread_id": template_key(i)}}
        for turn in range(TURNS):
            graph.invoke({"messages": [HumanMessage(content=_text(i, turn))]}, config)


def _prune_and_rewrite(kind: str, url: str) -> None:
    """``symfonic thread prune --keep 1`` on all but every FULL_EVERY-th thread, then the id forms."""
    from tests.support.rewritten_ids import rewrite_ids

    keys = OUT / f"prune-{kind}.txt"
    keys.write_text("".join(template_key(i) + "\n" for i in range(TEMPLATE) if i % FULL_EVERY))
    env = dict(os.environ, PYTHONPATH=str(stores.ROOT.parent))
    env.pop("SYMFONIC_STORE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", url, "--from-file", str(keys),
         "--keep", "1", "--yes", "-f", "json"],
        capture_output=True, text=True, env=env, cwd=stores.ROOT.parent,
    )
    if proc.returncode != 0:
        raise SystemExit(f"prune of the template failed ({proc.returncode}): {proc.stderr[-2000:]}")
    for i in range(TEMPLATE):
        form = FORMS.get(i % 50)
        if form:
            rewrite_ids(kind, url.removeprefix("sqlite:///"), template_key(i), form)


# --- SQLite -------------------------------------------------------------------------------------

def sqlite_template() -> Path:
    path = OUT / "template.db"
    if path.exists():
        return path
    from langgraph.checkpoint.sqlite import SqliteSaver

    OUT.mkdir(parents=True, exist_ok=True)
    tmp = OUT / "template.partial"
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    _log(f"writing the SQLite template ({TEMPLATE} threads x {TURNS} turns, real graph) ...")
    conn = sqlite3.connect(str(tmp), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    _write_template(saver)
    conn.close()
    _prune_and_rewrite("sqlite", f"sqlite:///{tmp}")
    os.replace(tmp, path)
    return path


def _progress(path: Path) -> int:
    try:
        return int(path.read_text())
    except (FileNotFoundError, ValueError):
        return 0


def _columns(conn, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA main.table_info({table})")]


def sqlite_store(n_threads: int) -> Path:
    """The cached SQLite store of ``n_threads`` threads (generated, or resumed, when missing)."""
    path = OUT / f"sqlite-{n_threads}.db"
    if path.exists():
        return path
    template = sqlite_template()
    from langgraph.checkpoint.sqlite import SqliteSaver

    tmp = OUT / f"sqlite-{n_threads}.partial"
    mark = OUT / f"sqlite-{n_threads}.progress"
    done = _progress(mark) if tmp.exists() else 0
    conn = sqlite3.connect(str(tmp), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")  # generation speed only; the bytes written are the same
    conn.execute("PRAGMA journal_mode = WAL")
    SqliteSaver(conn).setup()
    conn.execute("ATTACH DATABASE ? AS tmpl", (str(template),))
    conn.execute("CREATE TEMP TABLE tk (i INTEGER PRIMARY KEY, thread_id TEXT NOT NULL)")
    conn.executemany("INSERT INTO temp.tk VALUES (?, ?)", [(i, template_key(i)) for i in range(TEMPLATE)])
    start, first = time.perf_counter(), done
    _log(f"generating SQLite {n_threads:,} threads from {done:,} ...")
    while done < n_threads:
        hi = min(done + BATCH, n_threads)
        conn.execute("BEGIN")
        for table in ("checkpoints", "writes"):
            cols = [c for c in _columns(conn, table) if c != "thread_id"]
            conn.execute(
                f"INSERT OR IGNORE INTO main.{table} (thread_id, {', '.join(cols)}) "
                f"SELECT {SQLITE_KEY}, {', '.join('c.' + c for c in cols)} "
                f"FROM (WITH RECURSIVE s(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM s WHERE n + 1 < ?) SELECT n FROM s) "
                f"JOIN temp.tk ON tk.i = n % {TEMPLATE} JOIN tmpl.{table} c ON c.thread_id = tk.thread_id",
                (done, hi),
            )
        conn.execute("COMMIT")
        done = hi
        mark.write_text(str(done))
        rate = (done - first) / max(time.perf_counter() - start, 1e-9)
        _log(f"  sqlite {done:,}/{n_threads:,} ({time.perf_counter() - start:.0f} s, ~{rate:.0f} threads/s)")
    conn.execute("DETACH DATABASE tmpl")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")  # no ANALYZE: the savers never run it, so real stores have no statistics
    conn.close()
    os.replace(tmp, path)
    mark.unlink(missing_ok=True)
    _log(f"  sqlite {n_threads:,}: {path.stat().st_size / 1e9:.2f} GB")
    return path


# --- PostgreSQL ---------------------------------------------------------------------------------

def _pg_done(conn, db: str) -> bool | None:
    row = conn.execute(
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db,)
    ).fetchone()
    return None if row is None else row[0] == DONE


def postgres_template(server) -> str:
    import psycopg
    from psycopg import sql

    db = "scale_template"
    url = server.url(db)
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        state = _pg_done(conn, db)
        if state:
            return url
        if state is not None:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(db)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    from langgraph.checkpoint.postgres import PostgresSaver

    OUT.mkdir(parents=True, exist_ok=True)
    _log(f"writing the PostgreSQL template ({TEMPLATE} threads x {TURNS} turns, real graph) ...")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        _write_template(saver)
    _prune_and_rewrite("postgres", url)
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(db), sql.Literal(DONE)))
    return url


PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def postgres_store(n_threads: int, server, db: str | None = None) -> str:
    """The database ``scale_N`` (or ``db``) on the benchmark cluster (generated, or resumed, when missing)."""
    import psycopg
    from psycopg import sql

    db = db or f"scale_{n_threads}"
    url = server.url(db)
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        state = _pg_done(conn, db)
        if state:
            return url
        if state is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    template = postgres_template(server)
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('tmpl.progress')").fetchone()[0] is None:
            conn.execute("DROP SCHEMA IF EXISTS tmpl CASCADE")
            conn.execute("CREATE SCHEMA tmpl")
            conn.execute("CREATE TABLE tmpl.tk (i int PRIMARY KEY, thread_id text NOT NULL)")
            with conn.cursor().copy("COPY tmpl.tk FROM STDIN") as cp:
                for i in range(TEMPLATE):
                    cp.write_row((i, template_key(i)))
            with psycopg.connect(template) as src:
                for table in PG_TABLES:
                    conn.execute(f"CREATE TABLE tmpl.{table} (LIKE public.{table})")
                    with src.cursor().copy(f"COPY {table} TO STDOUT (FORMAT binary)") as out, \
                            conn.cursor().copy(f"COPY tmpl.{table} FROM STDIN (FORMAT binary)") as into:
                        for chunk in out:
                            into.write(chunk)
                    conn.execute(f"CREATE INDEX ON tmpl.{table} (thread_id)")
            conn.execute("CREATE TABLE tmpl.progress (done int NOT NULL)")
            conn.execute("INSERT INTO tmpl.progress VALUES (0)")
        done = conn.execute("SELECT done FROM tmpl.progress").fetchone()[0]
        start = time.perf_counter()
        _log(f"generating PostgreSQL {n_threads:,} threads from {done:,} ...")
        first = done
        while done < n_threads:
            hi = min(done + BATCH, n_threads)
            with conn.transaction():
                for table in PG_TABLES:
                    cols = [r[0] for r in conn.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' "
                        "AND table_name = %s AND column_name <> 'thread_id' ORDER BY ordinal_position", (table,))]
                    conn.execute(
                        f"INSERT INTO public.{table} (thread_id, {', '.join(cols)}) "
                        f"SELECT {PG_KEY}, {', '.join('c.' + c for c in cols)} "
                        f"FROM generate_series(%s::int, %s::int - 1) n JOIN tmpl.tk ON tk.i = mod(n, {TEMPLATE}) "
                        f"JOIN tmpl.{table} c ON c.thread_id = tk.thread_id",
                        (done, hi),
                    )
                conn.execute("UPDATE tmpl.progress SET done = %s", (hi,))
            done = hi
            rate = (done - first) / max(time.perf_counter() - start, 1e-9)
            _log(f"  postgres {done:,}/{n_threads:,} ({time.perf_counter() - start:.0f} s, ~{rate:.0f} threads/s)")
        conn.execute("DROP SCHEMA tmpl CASCADE")
        conn.execute("VACUUM ANALYZE")
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(db), sql.Literal(DONE)))
    return url


# --- MongoDB ------------------------------------------------------------------------------------

MONGO_DONE = "symfonic_bench_complete"


def _mongo_template_docs() -> tuple[list[dict], list[dict]]:
    """The SQLite template's rows as the documents MongoDBSaver writes (same serialized bytes)."""
    from langgraph.checkpoint.mongodb.utils import dumps_metadata
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    src = sqlite3.connect(str(sqlite_template()))
    cps = [
        {"thread_id": tid, "checkpoint_ns": ns, "checkpoint_id": cid, "parent_checkpoint_id": parent,
         "type": type_, "checkpoint": bytes(blob), "metadata": dumps_metadata(serde, json.loads(meta))}
        for tid, ns, cid, parent, type_, blob, meta in src.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints")
    ]
    writes = [
        {"thread_id": tid, "checkpoint_ns": ns, "checkpoint_id": cid, "task_id": task_id, "task_path": task_path,
         "idx": idx, "channel": channel, "type": type_, "value": bytes(value)}
        for tid, ns, cid, task_id, task_path, idx, channel, type_, value in src.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value FROM writes")
    ]
    src.close()
    return cps, writes


def mongodb_store(n_threads: int, uri: str) -> str:
    """The database ``scale_N`` on the MongoDB server at ``uri`` (generated, or resumed, when missing)."""
    from pymongo import MongoClient

    db_name = f"scale_{n_threads}"
    client = MongoClient(uri)
    try:
        db = client[db_name]
        names = db.list_collection_names()
        if MONGO_DONE in names:
            return uri + db_name
        cps, writes = _mongo_template_docs()
        by_thread: dict[str, tuple[list[dict], list[dict]]] = {}
        for d in cps:
            by_thread.setdefault(d["thread_id"], ([], []))[0].append(d)
        for d in writes:
            by_thread.setdefault(d["thread_id"], ([], []))[1].append(d)
        db.checkpoints.create_index([("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1)], unique=True)
        db.checkpoint_writes.create_index(
            [("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1), ("task_id", 1), ("idx", 1)], unique=True)
        progress = db["symfonic_bench_progress"].find_one({"_id": "done"})
        done = progress["n"] if progress else 0
        _log(f"generating MongoDB {n_threads:,} threads from {done:,} ...")
        start = time.perf_counter()
        step = 2_000
        while done < n_threads:
            hi = min(done + step, n_threads)
            # A batch cut short by a crash is re-inserted: drop its remains first.
            keys = [key_of(n) for n in range(done, hi)]
            db.checkpoints.delete_many({"thread_id": {"$in": keys}})
            db.checkpoint_writes.delete_many({"thread_id": {"$in": keys}})
            cp_batch, w_batch = [], []
            for n, key in zip(range(done, hi), keys):
                tcps, tws = by_thread.get(template_key(n % TEMPLATE), ([], []))
                cp_batch += [dict(d, thread_id=key) for d in tcps]
                w_batch += [dict(d, thread_id=key) for d in tws]
            if cp_batch:
                db.checkpoints.insert_many(cp_batch, ordered=False)
            if w_batch:
                db.checkpoint_writes.insert_many(w_batch, ordered=False)
            db["symfonic_bench_progress"].replace_one({"_id": "done"}, {"_id": "done", "n": hi}, upsert=True)
            done = hi
            _log(f"  mongodb {done:,}/{n_threads:,} ({time.perf_counter() - start:.0f} s)")
        db.drop_collection("symfonic_bench_progress")
        db.create_collection(MONGO_DONE)
        return uri + db_name
    finally:
        client.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="sqlite")
    ap.add_argument("--sizes", default="20000,200000,1000000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for kind in args.kinds.split(","):
        if kind == "sqlite":
            for n in sizes:
                print(sqlite_store(n), flush=True)
        elif kind == "postgres":
            from benchmarks import pg

            server, why = pg.available(stores.OUT / "pg")
            if server is None:
                raise SystemExit(why)
            try:
                for n in sizes:
                    print(postgres_store(n, server).rsplit("@", 1)[-1], flush=True)
            finally:
                server.stop()
        elif kind == "mongodb":
            from benchmarks.bench_mongodb import start_server

            uri, proc = start_server()
            try:
                for n in sizes:
                    print(mongodb_store(n, uri), flush=True)
            finally:
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=60)
        else:
            raise SystemExit(f"unknown kind {kind!r} (sqlite, postgres, mongodb)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
