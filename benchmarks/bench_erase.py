"""``symfonic thread erase``: one long thread out of a big store, and a batch of 1,000 threads.

Stores (benchmarks/stores.py, written by the real agent graph through the real savers, cached):
"many" (2,000 threads x 10 turns, 68,000 checkpoints) and "long-2000" (one thread, 7,000
checkpoints). For each run a copy of "many" gets the first 5,000 checkpoints of the long thread
(and their pending writes) copied in with INSERT ... SELECT: real rows, no synthetic blobs.

- one thread: ``symfonic thread erase --thread bench:_:long-2000 --yes`` in-process (plan,
  one-transaction delete, verification, WAL truncation); target under 1 s;
- batch: ``--from-file`` with 1,000 keys of "many" ``--yes``; target at least 100 threads/s.

PostgreSQL the same when its backend can erase (tests/support/pg_server.py's cluster, as benchmarks/pg.py
starts it, fsync off): a copy of the cached "many" database, the thread replicated in SQL.

``--real-long`` also erases, on SQLite, 5,000 real checkpoints of the long-2000 thread (2 GB of
blobs, as each holds the whole conversation so far): secure_delete zeroes all of it.

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
    from tests.support.cli import run

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


def _fresh_many(tmpdir: Path, name: str) -> Path:
    path = tmpdir / name
    shutil.copyfile(stores.sqlite_store("many"), path)
    return path


def sqlite_store_with_long(tmpdir: Path) -> Path:
    """"many" plus the first 5,000 checkpoints of the real long-2000 thread (~2 GB: every checkpoint
    holds the whole conversation so far)."""
    long_ = stores.sqlite_store("long-2000")
    path = _fresh_many(tmpdir, "erase-long.db")
    conn = sqlite3.connect(str(path), isolation_level=None, uri=True)
    conn.execute("ATTACH DATABASE ? AS src", (f"file:{long_}?mode=ro&immutable=1",))
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


def sqlite_store_with_replicated(tmpdir: Path) -> Path:
    """"many" plus a thread of 5,000 checkpoints replicated with INSERT ... SELECT from one real
    10-turn thread (34 checkpoints): each copy gets new checkpoint ids (the last 5 hex digits)."""
    path = _fresh_many(tmpdir, "erase-replicated.db")
    src = stores.many_key(0)
    conn = sqlite3.connect(str(path), isolation_level=None)
    per_copy = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (src,)).fetchone()[0]
    new_id = "substr({0}, 1, 31) || printf('%05x', ?)"
    conn.execute("BEGIN")
    for n in range(-(-LONG_CHECKPOINTS // per_copy)):
        conn.execute(
            f"INSERT INTO checkpoints SELECT ?, checkpoint_ns, {new_id.format('checkpoint_id')}, "
            f"CASE WHEN parent_checkpoint_id IS NULL THEN NULL ELSE {new_id.format('parent_checkpoint_id')} END, "
            "type, checkpoint, metadata FROM checkpoints WHERE thread_id = ?",
            (LONG, n, n, src),
        )
        conn.execute(
            f"INSERT INTO writes SELECT ?, checkpoint_ns, {new_id.format('checkpoint_id')}, task_id, task_path, idx, "
            "channel, type, value FROM writes WHERE thread_id = ?",
            (LONG, n, src),
        )
    # Exactly 5,000: drop the newest surplus copies.
    conn.execute(
        "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id IN (SELECT checkpoint_id FROM checkpoints "
        "WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT (SELECT count(*) - ? FROM checkpoints WHERE thread_id = ?))",
        (LONG, LONG, LONG_CHECKPOINTS, LONG),
    )
    conn.execute("COMMIT")
    conn.close()
    return path


def _describe(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    threads, checkpoints = conn.execute("SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
    n, mb = conn.execute("SELECT count(*), sum(length(checkpoint)) / 1e6 FROM checkpoints WHERE thread_id = ?", (LONG,)).fetchone()
    writes = conn.execute("SELECT count(*) FROM writes WHERE thread_id = ?", (LONG,)).fetchone()[0]
    conn.close()
    return f"{threads} threads, {checkpoints} checkpoints; the thread: {n} checkpoints ({mb:.0f} MB of blobs), {writes} writes"


def bench_sqlite(tmpdir: Path, batch: int, long_too: bool) -> None:
    builds = [("replicated", sqlite_store_with_replicated)]
    if long_too:
        builds.append(("real long", sqlite_store_with_long))
    path = None
    for label, build in builds:
        path = build(tmpdir)
        print(f"SQLite, {label}: {_describe(path)}")
        plan_s, _ = _cli("thread", "erase", "-s", str(path), "--thread", LONG, "--dry-run")  # warms imports too
        plan_s, _ = _cli("thread", "erase", "-s", str(path), "--thread", LONG, "--dry-run")
        print(f"  plan only (--dry-run): {plan_s:.3f} s")
        elapsed, r = _cli("thread", "erase", "-s", str(path), "--thread", LONG, "--yes")
        assert '"status": "erased"' in r.out
        print(f"  erase the thread: {elapsed:.3f} s (target < 1 s)")
        if label != "replicated":
            path.unlink()
    path = tmpdir / "erase-replicated.db"
    keys = _keys_file(tmpdir, batch)
    elapsed, r = _cli("thread", "erase", "-s", str(path), "--from-file", str(keys), "--yes")
    assert f"erased {batch} thread(s)" in r.out
    print(f"  batch of {batch} threads: {elapsed:.2f} s = {batch / elapsed:.0f} threads/s (target >= 100)")


PG_REPLICATE = """
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT %(dst)s, checkpoint_ns, left(checkpoint_id, 31) || lpad(to_hex(n), 5, '0'),
       left(parent_checkpoint_id, 31) || lpad(to_hex(n), 5, '0'), type, checkpoint, metadata
FROM checkpoints, generate_series(0, %(copies)s - 1) AS n WHERE thread_id = %(src)s;
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT %(dst)s, checkpoint_ns, left(checkpoint_id, 31) || lpad(to_hex(n), 5, '0'), task_id, task_path, idx, channel, type, blob
FROM checkpoint_writes, generate_series(0, %(copies)s - 1) AS n WHERE thread_id = %(src)s;
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT %(dst)s, checkpoint_ns, channel, version || '.' || n, type, blob
FROM checkpoint_blobs, generate_series(0, %(copies)s - 1) AS n WHERE thread_id = %(src)s;
DELETE FROM checkpoints WHERE thread_id = %(dst)s AND checkpoint_id IN (
  SELECT checkpoint_id FROM checkpoints WHERE thread_id = %(dst)s ORDER BY checkpoint_id DESC
  LIMIT (SELECT count(*) - %(want)s FROM checkpoints WHERE thread_id = %(dst)s));
"""


def bench_postgres(batch: int) -> None:
    """On a copy of the cached "many" database; the 5,000-checkpoint thread is replicated in SQL
    from one real thread (new checkpoint ids; blob versions suffixed so copies do not collide)."""
    from symfonic_cli.stores import postgres as pg_store

    if not hasattr(getattr(pg_store, "PostgresStore", object), "erase_thread"):
        print("PostgreSQL: the backend cannot erase yet; skipped")
        return
    import psycopg
    from psycopg import sql

    from benchmarks import pg

    server, why = pg.available(stores.OUT / "pg")
    if server is None:
        print(f"PostgreSQL: {why}")
        return
    many = stores.postgres_store("many", server)
    db = "bench_erase_run"
    with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(db), sql.Identifier(many.rsplit("/", 1)[-1])))
    url = server.url(db)
    try:
        src = stores.many_key(0)
        with psycopg.connect(url) as conn:
            per_copy = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (src,)).fetchone()[0]
            params = {"dst": LONG, "src": src, "copies": -(-LONG_CHECKPOINTS // per_copy), "want": LONG_CHECKPOINTS}
            for statement in PG_REPLICATE.split(";"):
                if statement.strip():
                    conn.execute(statement, params)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ANALYZE")
            threads, checkpoints = conn.execute("SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
            rows = [conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE thread_id = %s").format(sql.Identifier(t)), (LONG,)).fetchone()[0]
                    for t in ("checkpoints", "checkpoint_writes", "checkpoint_blobs")]
        print(f"PostgreSQL: {threads} threads, {checkpoints} checkpoints; the thread: {rows[0]} checkpoints, {rows[1]} writes, {rows[2]} blobs")
        _cli("thread", "erase", "-s", url, "--thread", LONG, "--dry-run")  # warm imports and the driver
        plan_s, _ = _cli("thread", "erase", "-s", url, "--thread", LONG, "--dry-run")
        print(f"  plan only (--dry-run): {plan_s:.3f} s")
        elapsed, r = _cli("thread", "erase", "-s", url, "--thread", LONG, "--yes")
        assert '"status": "erased"' in r.out
        print(f"  erase the thread: {elapsed:.3f} s (target < 1 s)")
        with tempfile.TemporaryDirectory() as d:
            keys = _keys_file(Path(d), batch)
            elapsed, r = _cli("thread", "erase", "-s", url, "--from-file", str(keys), "--yes")
        assert f"erased {batch} thread(s)" in r.out
        print(f"  batch of {batch} threads: {elapsed:.2f} s = {batch / elapsed:.0f} threads/s (target >= 100)")
    finally:
        with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))


def main() -> None:
    from benchmarks import byte_compile

    byte_compile()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--real-long", action="store_true", help="also erase 5,000 real checkpoints of long-2000 (2 GB)")
    args = ap.parse_args()
    os.environ.pop("SYMFONIC_STORE", None)
    with tempfile.TemporaryDirectory() as d:
        bench_sqlite(Path(d), args.batch, args.real_long)
    if not args.no_postgres:
        bench_postgres(args.batch)


if __name__ == "__main__":
    main()
