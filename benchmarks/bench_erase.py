"""``symfonic thread erase``: one long thread out of a big store, and a batch of 1,000 threads.

Stores (benchmarks/stores.py, written by the real agent graph through the real savers, cached):
"many" (2,000 threads x 10 turns, 68,000 checkpoints) and "long-2000" (one thread, 7,000
checkpoints). For each run a copy of "many" gets the first 5,000 checkpoints of the long thread
(and their pending writes) copied in with INSERT ... SELECT: real rows, no synthetic blobs.

- one thread: ``symfonic thread erase --thread bench:_:long-2000 --yes`` in-process (plan,
  one-transaction delete, verification, WAL truncation); target under 1 s;
- batch: ``--from-file`` with 1,000 keys of "many" ``--yes``; target at least 100 threads/s.

PostgreSQL the same when its backend can erase (tests/pg_server.py's cluster, as benchmarks/pg.py
starts it): the long thread's rows are copied with COPY from the cached "long-2000" database.

Run: ``python benchmarks/bench_erase.py [--no-postgres] [--batch N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import stores  # noqa: E402

LONG = stores.long_key(2000)
LONG_CHECKPOINTS = 5000


def _cli(*args: str):
    from tests.cli import run

    start = time.perf_counter()
    r = run(*args)
    elapsed = time.perf_counter() - start
    if r.code != 0:
        raise SystemExit(f"symfonic {' '.join(args[:3])} failed ({r.code}): {r.err.strip()}")
    return elapsed, r


def _keys_file(tmpdir: Path, n: int) -> Path:
    f = tmpdir / "batch.txt"
    f.write_text("\n".join(stores.many_key(i) for i in range(n)) + "\n")
    return f


def sqlite_store_with_long(tmpdir: Path) -> Path:
    many, long_ = stores.sqlite_store("many"), stores.sqlite_store("long-2000")
    path = tmpdir / "erase.db"
    shutil.copyfile(many, path)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("ATTACH DATABASE ? AS src", (f"file:{long_}?mode=ro",))
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO checkpoints SELECT * FROM src.checkpoints WHERE thread_id = ? "
        "ORDER BY checkpoint_id LIMIT ?",
        (LONG, LONG_CHECKPOINTS),
    )
    conn.execute(
        "INSERT INTO writes SELECT w.* FROM src.writes w JOIN checkpoints c "
        "ON c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id "
        "WHERE w.thread_id = ?",
        (LONG,),
    )
    conn.execute("COMMIT")
    conn.execute("DETACH DATABASE src")
    conn.close()
    return path


def bench_sqlite(tmpdir: Path, batch: int) -> None:
    path = sqlite_store_with_long(tmpdir)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    threads, checkpoints = conn.execute("SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
    long_rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (LONG,)).fetchone()[0]
    conn.close()
    print(f"SQLite store: {threads} threads, {checkpoints} checkpoints, {path.stat().st_size / 1e6:.0f} MB; long thread {long_rows} checkpoints")
    elapsed, r = _cli("thread", "erase", "-s", str(path), "--thread", LONG, "--yes")
    assert '"status": "erased"' in r.out
    print(f"  erase one thread of {long_rows} checkpoints: {elapsed:.3f} s (target < 1 s)")
    keys = _keys_file(tmpdir, batch)
    elapsed, r = _cli("thread", "erase", "-s", str(path), "--from-file", str(keys), "--yes")
    assert f"erased {batch} thread(s)" in r.out
    print(f"  batch of {batch} threads: {elapsed:.2f} s = {batch / elapsed:.0f} threads/s (target >= 100)")


def bench_postgres(batch: int) -> None:
    from symfonic_cli.stores import postgres as pg_store

    if not hasattr(pg_store.PostgresStore if hasattr(pg_store, "PostgresStore") else object, "erase_thread"):
        print("PostgreSQL: the backend cannot erase yet; skipped")
        return
    import psycopg
    from psycopg import sql

    from benchmarks import pg

    server, why = pg.available()
    if server is None:
        print(f"PostgreSQL: {why}")
        return
    many = stores.postgres_store("many", server)
    long_ = stores.postgres_store("long-2000", server)
    db = "bench_erase_run"
    with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(db), sql.Identifier(many.rsplit("/", 1)[-1])))
    url = server.url(db)
    try:
        with psycopg.connect(long_) as src, psycopg.connect(url) as dst:
            cut = src.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s ORDER BY checkpoint_id LIMIT 1 OFFSET %s",
                (LONG, LONG_CHECKPOINTS - 1),
            ).fetchone()[0]
            for table, where in (
                ("checkpoints", "checkpoint_id <= %s"),
                ("checkpoint_writes", "checkpoint_id <= %s"),
                ("checkpoint_blobs", "%s IS NOT NULL"),
            ):
                query = sql.SQL("COPY (SELECT * FROM {} WHERE thread_id = {} AND " + where.replace("%s", "{}") + ") TO STDOUT").format(
                    sql.Identifier(table), sql.Literal(LONG), sql.Literal(cut)
                )
                with src.cursor().copy(query) as out, dst.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(table))) as into:
                    for data in out:
                        into.write(data)
            dst.execute("ANALYZE")
            threads, checkpoints = dst.execute("SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
            long_rows = dst.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (LONG,)).fetchone()[0]
        print(f"PostgreSQL store: {threads} threads, {checkpoints} checkpoints; long thread {long_rows} checkpoints")
        elapsed, r = _cli("thread", "erase", "-s", url, "--thread", LONG, "--yes")
        assert '"status": "erased"' in r.out
        print(f"  erase one thread of {long_rows} checkpoints: {elapsed:.3f} s (target < 1 s)")
        with tempfile.TemporaryDirectory() as d:
            keys = _keys_file(Path(d), batch)
            elapsed, r = _cli("thread", "erase", "-s", url, "--from-file", str(keys), "--yes")
        assert f"erased {batch} thread(s)" in r.out
        print(f"  batch of {batch} threads: {elapsed:.2f} s = {batch / elapsed:.0f} threads/s (target >= 100)")
    finally:
        with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--no-postgres", action="store_true")
    args = ap.parse_args()
    os.environ.pop("SYMFONIC_STORE", None)
    with tempfile.TemporaryDirectory() as d:
        bench_sqlite(Path(d), args.batch)
    if not args.no_postgres:
        bench_postgres(args.batch)


if __name__ == "__main__":
    main()
