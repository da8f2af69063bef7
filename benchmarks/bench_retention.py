"""Retention sweeps and access exports (issue #16), SQLite, each against its raw lower bound.

Stores: the cached "many" store (benchmarks/stores.py: 2,000 threads x 10 turns written by the
real agent graph through the real SqliteSaver, 68,000 checkpoints). ``--copies N`` (default 10)
replicates it with INSERT ... SELECT under new thread ids, copy ``n`` moved ``n`` x 31 days into
the past (its checkpoint ids' time field shifted, the rest of each row as written): N x 68,000
checkpoints of real rows with a spread of last activity.

- select: ``threads list --inactive-for 90d -f jsonl`` against the raw aggregate ``SELECT
  thread_id, count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints GROUP BY thread_id
  HAVING max(checkpoint_id) < ?`` (Python driver, rows fetched); target within 2x.
- sweep: ``thread erase --inactive-for D --yes`` erasing ``--sweep`` threads (default 2,000)
  against one ``DELETE ... WHERE thread_id IN (...)`` per table over the same threads, both with
  ``secure_delete`` on, each on a fresh copy of the store; target within 3x.
- export: ``thread export --from-file`` of the 2,000 threads of "many" to a .zip against the
  transcript reads alone (``read_transcript`` for each thread on one open store, rows rendered as
  JSON and dropped); target within 2x.

- rss: the peak RSS of ``thread erase --inactive-for 30d --yes -f json`` (a subprocess, stdout to
  /dev/null, ``wait4``'s ``ru_maxrss``) sweeping ``--rss-small`` (default 10,000) and
  ``--rss-large`` (default 100,000) threads: copies of one real 2-turn thread (written by the real
  agent graph through SqliteSaver with LangGraph's clock 400 days back) under new keys. A streamed
  sweep's peak RSS is flat: the ratio is the figure (target ~1).
- postgres: on the benchmark PostgreSQL (benchmarks/pg.py), the cached "many" database replicated
  ``--pg-copies`` times (default 6: 12,000 threads, copy n n x 31 days older, the three tables'
  rows copied in SQL under new keys with shifted checkpoint ids): selecting the idle threads
  against the raw aggregate, and a sweep of ``--pg-sweep`` (default 10,000) threads against one
  ``DELETE ... WHERE thread_id IN (...)`` per table; targets 2x and 3x. The cluster runs with
  fsync, synchronous_commit and full_page_writes off (tests/support/pg_server.py ``FAST``), so
  neither side pays a disk flush per commit, and the sweep runs without ``--receipt`` (no fsync
  per thread): the ratio measures statements, round trips and the tool's own work. Measured
  11.9x to 14.9x after the batched plan and the two-round-trip transaction (12.1x and 12.3x run
  alternately with the code before, which gave 19.2x and 12.7x on a loaded machine): see README
  "Benchmarks" for what each part costs.

Commands run in-process (tests/support/cli.py), after one warm-up call; medians of ``--reps`` (default 3).
Run: ``python benchmarks/bench_retention.py [--copies N] [--sweep N] [--reps N] [--skip select,sweep,export,rss,postgres]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import stores  # noqa: E402

MONTH_UNITS = 100_000  # of time_high (2**28 ticks of 100 ns, 26.8 s): about 31 days


def _shift_id(checkpoint_id, copy: int):
    if not isinstance(checkpoint_id, str) or len(checkpoint_id) != 36:
        return checkpoint_id
    high = int(checkpoint_id[:8], 16) - copy * MONTH_UNITS
    return f"{high:08x}" + checkpoint_id[8:]


def build_aged(tmpdir: Path, copies: int) -> Path:
    """"many" replicated ``copies`` times, copy n under keys '<key>#n' and n x 31 days older."""
    many = stores.sqlite_store("many")
    path = tmpdir / f"aged-{copies}.db"
    shutil.copyfile(many, path)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.create_function("shift_id", 2, _shift_id, deterministic=True)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    for n in range(1, copies):
        conn.execute(
            "INSERT INTO checkpoints SELECT thread_id || '#' || ?1, checkpoint_ns, shift_id(checkpoint_id, ?1), "
            "shift_id(parent_checkpoint_id, ?1), type, checkpoint, metadata FROM main.checkpoints "
            "WHERE thread_id NOT LIKE '%#%'",
            (n,),
        )
        conn.execute(
            "INSERT INTO writes SELECT thread_id || '#' || ?1, checkpoint_ns, shift_id(checkpoint_id, ?1), task_id, task_path, "
            "idx, channel, type, value FROM main.writes WHERE thread_id NOT LIKE '%#%'",
            (n,),
        )
    conn.execute("COMMIT")
    conn.close()
    return path


def _median(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cli(*args: str):
    from tests.support.cli import run

    r = run(*args)
    if r.code != 0:
        raise SystemExit(f"symfonic {' '.join(args[:3])} failed ({r.code}): {r.err.strip()[:300]}")
    return r


def _bound(days: int) -> str:
    from datetime import datetime, timedelta, timezone

    from symfonic_cli.retention.window import id_bound

    return id_bound(datetime.now(timezone.utc) - timedelta(days=days))


def bench_select(path: Path, reps: int) -> None:
    bound = _bound(90)

    def raw():
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = conn.execute(
            "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints "
            "GROUP BY thread_id HAVING max(checkpoint_id) < ? ORDER BY max(checkpoint_id) DESC, thread_id",
            (bound,),
        ).fetchall()
        conn.close()
        return rows

    expected = len(raw())
    r = _cli("threads", "list", "-s", str(path), "--inactive-for", "90d", "-f", "jsonl")
    assert r.out.count("\n") == expected, (r.out.count("\n"), expected)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    conn.close()
    tool = _median(lambda: _cli("threads", "list", "-s", str(path), "--inactive-for", "90d", "-f", "jsonl"), reps)
    base = _median(raw, reps)
    print(f"select idle threads ({checkpoints} checkpoints, {expected} idle of 90 days): "
          f"threads list {tool:.3f} s, raw aggregate {base:.3f} s, ratio {tool / base:.2f} (target <= 2)")


def _idle_keys(path: Path, days: int) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    keys = [k for (k,) in conn.execute(
        "SELECT thread_id FROM checkpoints GROUP BY thread_id HAVING max(checkpoint_id) < ?", (_bound(days),))]
    conn.close()
    return keys


def bench_sweep(tmpdir: Path, path: Path, sweep: int) -> None:
    # Copy n is n x 31 days old: pick the age that makes about ``sweep`` threads idle.
    copies_needed = max(1, -(-sweep // stores.MANY_THREADS))
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    copies = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0] // stores.MANY_THREADS
    conn.close()
    days = 31 * (copies - copies_needed) - 15
    keys = _idle_keys(path, days)
    print(f"sweep: {len(keys)} threads idle for {days} days")

    tool_copy = tmpdir / "sweep-tool.db"
    shutil.copyfile(path, tool_copy)
    start = time.perf_counter()
    r = _cli("thread", "erase", "-s", str(tool_copy), "--inactive-for", f"{days}d", "--yes", "-f", "json")
    tool = time.perf_counter() - start
    assert f'"erased": {len(keys)}' in r.out, r.out[-500:]

    raw_copy = tmpdir / "sweep-raw.db"
    shutil.copyfile(path, raw_copy)
    start = time.perf_counter()
    conn = sqlite3.connect(str(raw_copy), isolation_level=None)
    conn.execute("PRAGMA secure_delete = ON")
    marks = ",".join("?" * len(keys))
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(f"DELETE FROM writes WHERE thread_id IN ({marks})", keys)
    conn.execute(f"DELETE FROM checkpoints WHERE thread_id IN ({marks})", keys)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    base = time.perf_counter() - start
    print(f"  thread erase --inactive-for (plan, per-thread transaction, verification, receipt) {tool:.2f} s; "
          f"one DELETE per table {base:.2f} s; ratio {tool / base:.2f} (target <= 3)")
    tool_copy.unlink()
    raw_copy.unlink()


def bench_export(tmpdir: Path, reps: int) -> None:
    from symfonic_cli.location import resolve_store
    from symfonic_cli.stores import open_store
    from symfonic_cli.transcript.read import read_transcript

    from symfonic_cli.export.run import transcript_bytes

    many = stores.sqlite_store("many")
    keys = [stores.many_key(i) for i in range(stores.MANY_THREADS)]
    keys_file = tmpdir / "keys.txt"
    keys_file.write_text("\n".join(keys) + "\n")

    def tool():
        out = tmpdir / "export.zip"
        if out.exists():
            out.unlink()
        _cli("thread", "export", "-s", str(many), "--from-file", str(keys_file), "-o", str(out))

    def reads():
        with open_store(resolve_store(str(many)), writable=False) as st:
            for k in keys:
                transcript_bytes(read_transcript(st, k).rows, False)

    tool()
    t = _median(tool, reps)
    b = _median(reads, reps)
    size = (tmpdir / "export.zip").stat().st_size / 1e6
    print(f"export {len(keys)} threads x {stores.MANY_TURNS} turns to a .zip ({size:.1f} MB): {t:.2f} s; "
          f"transcript reads alone {b:.2f} s; ratio {t / b:.2f} (target <= 2)")


def build_copies(tmpdir: Path, threads: int) -> Path:
    """``threads`` idle threads: one real 2-turn thread written 400 days ago, copied under new keys."""
    from datetime import timedelta

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.old_threads import clock_moved_back
    from symfonic_cli.demo.graphs import agent_graph

    path = tmpdir / f"copies-{threads}.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    graph = agent_graph().compile(checkpointer=saver)
    with clock_moved_back(timedelta(days=400)):
        for turn in range(2):
            graph.invoke({"messages": [HumanMessage(content=f"question {turn}")]}, {"configurable": {"thread_id": "src"}})
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    numbers = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) "
    conn.execute(numbers + "INSERT INTO checkpoints SELECT printf('rss-%02d:_:s-%07d', i % 40, i), checkpoint_ns, checkpoint_id, "
                 "parent_checkpoint_id, type, checkpoint, metadata FROM n, checkpoints WHERE thread_id = 'src'", (threads,))
    conn.execute(numbers + "INSERT INTO writes SELECT printf('rss-%02d:_:s-%07d', i % 40, i), checkpoint_ns, checkpoint_id, task_id, "
                 "task_path, idx, channel, type, value FROM n, writes WHERE thread_id = 'src'", (threads,))
    conn.execute("DELETE FROM checkpoints WHERE thread_id = 'src'")
    conn.execute("DELETE FROM writes WHERE thread_id = 'src'")
    conn.execute("COMMIT")
    conn.close()
    return path


def _peak_rss(argv: list[str]) -> tuple[float, int, float]:
    """(seconds, peak RSS in KiB, exit code) of a subprocess."""
    import subprocess

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[3:6])} failed ({proc.returncode}): {err.decode()[-300:]}")
    return time.perf_counter() - start, usage.ru_maxrss, proc.returncode


def bench_rss(tmpdir: Path, small: int, large: int) -> None:
    peaks = {}
    for n in (small, large):
        start = time.perf_counter()
        path = build_copies(tmpdir, n)
        built = time.perf_counter() - start
        argv = [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", str(path), "--inactive-for", "30d", "--yes", "-f", "json"]
        seconds, peak, _ = _peak_rss(argv)
        conn = sqlite3.connect(str(path))
        left = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        conn.close()
        assert left == 0, left
        peaks[n] = peak
        print(f"rss: sweep of {n:,} threads (store built in {built:.0f} s): {seconds:.1f} s, peak RSS {peak / 1024:.1f} MiB")
        path.unlink()
    print(f"  peak RSS {large:,} / {small:,} threads: ratio {peaks[large] / peaks[small]:.2f} (target ~1: memory does not grow with the count)")


PG_REPLICATE = """
CREATE OR REPLACE FUNCTION pg_temp.shift_id(id text, n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN id IS NULL OR length(id) <> 36 THEN id ELSE
    lpad(to_hex(('x' || lpad(substr(id, 1, 8), 16, '0'))::bit(64)::bigint - n::bigint * 100000), 8, '0') || substr(id, 9) END
$$;
INSERT INTO checkpoints SELECT thread_id || '#' || n, checkpoint_ns, pg_temp.shift_id(checkpoint_id, n), pg_temp.shift_id(parent_checkpoint_id, n), type, checkpoint, metadata
  FROM checkpoints, generate_series(1, %(copies)s - 1) AS n WHERE position('#' in thread_id) = 0;
INSERT INTO checkpoint_blobs SELECT thread_id || '#' || n, checkpoint_ns, channel, version, type, blob
  FROM checkpoint_blobs, generate_series(1, %(copies)s - 1) AS n WHERE position('#' in thread_id) = 0;
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
  SELECT thread_id || '#' || n, checkpoint_ns, pg_temp.shift_id(checkpoint_id, n), task_id, idx, channel, type, blob, task_path
  FROM checkpoint_writes, generate_series(1, %(copies)s - 1) AS n WHERE position('#' in thread_id) = 0
"""


def bench_postgres(copies: int, sweep: int, reps: int) -> None:
    import psycopg
    from psycopg import sql

    from benchmarks import pg

    server, why = pg.available(stores.OUT / "pg")
    if server is None:
        print(f"PostgreSQL: {why}")
        return
    many = stores.postgres_store("many", server)
    db = "bench_retention_run"

    def fresh() -> str:
        with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))
            admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(db), sql.Identifier(template)))
        return server.url(db)

    template = "bench_retention_aged"
    try:
        with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(template)))
            admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(template), sql.Identifier(many.rsplit("/", 1)[-1])))
        start = time.perf_counter()
        with psycopg.connect(server.url(template)) as conn:
            for statement in PG_REPLICATE.split(";\n"):
                if statement.strip():
                    conn.execute(statement, {"copies": copies})
        with psycopg.connect(server.url(template), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            threads, checkpoints = conn.execute("SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
        print(f"PostgreSQL aged store: {threads} threads, {checkpoints} checkpoints ({copies} copies of 'many', {time.perf_counter() - start:.0f} s)")
        url = server.url(template)
        bound = _bound(90)

        def raw():
            with psycopg.connect(url) as conn:
                return conn.execute(
                    "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints GROUP BY thread_id "
                    'HAVING max(checkpoint_id) COLLATE "C" < %s ORDER BY max(checkpoint_id) DESC, thread_id COLLATE "C"', (bound,)).fetchall()

        expected = len(raw())
        r = _cli("threads", "list", "-s", url, "--inactive-for", "90d", "-f", "jsonl")
        assert r.out.count("\n") == expected, (r.out.count("\n"), expected)
        tool = _median(lambda: _cli("threads", "list", "-s", url, "--inactive-for", "90d", "-f", "jsonl"), reps)
        base = _median(raw, reps)
        print(f"  select idle threads ({checkpoints} checkpoints, {expected} idle of 90 days): threads list {tool:.3f} s, "
              f"raw aggregate {base:.3f} s, ratio {tool / base:.2f} (target <= 2)")

        days = 31 * (copies - max(1, -(-sweep // stores.MANY_THREADS))) - 15
        with psycopg.connect(url) as conn:
            keys = [k for (k,) in conn.execute(
                'SELECT thread_id FROM checkpoints GROUP BY thread_id HAVING max(checkpoint_id) COLLATE "C" < %s', (_bound(days),))]
        print(f"  sweep: {len(keys)} threads idle for {days} days")
        run_url = fresh()
        start = time.perf_counter()
        r = _cli("thread", "erase", "-s", run_url, "--inactive-for", f"{days}d", "--yes", "-f", "json")
        tool = time.perf_counter() - start
        assert f'"erased": {len(keys)}' in r.out, r.out[-500:]
        run_url = fresh()
        start = time.perf_counter()
        with psycopg.connect(run_url) as conn:
            for table in ("checkpoint_writes", "checkpoint_blobs", "checkpoints"):
                conn.execute(sql.SQL("DELETE FROM {} WHERE thread_id = ANY(%s)").format(sql.Identifier(table)), (keys,))
        base = time.perf_counter() - start
        print(f"  thread erase --inactive-for {tool:.2f} s; one DELETE per table {base:.2f} s; ratio {tool / base:.2f} (target <= 3)")
    finally:
        with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
            for name in (db, template):
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--sweep", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rss-small", type=int, default=10_000)
    ap.add_argument("--rss-large", type=int, default=100_000)
    ap.add_argument("--pg-copies", type=int, default=6)
    ap.add_argument("--pg-sweep", type=int, default=10_000)
    ap.add_argument("--skip", default="", help="comma list of select,sweep,export,rss,postgres to skip")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as d:
        tmpdir = Path(d)
        if not {"select", "sweep"} <= skip:
            start = time.perf_counter()
            path = build_aged(tmpdir, args.copies)
            print(f"aged store: {args.copies} copies of 'many' in {time.perf_counter() - start:.0f} s, {path.stat().st_size / 1e6:.0f} MB")
            if "select" not in skip:
                bench_select(path, args.reps)
            if "sweep" not in skip:
                bench_sweep(tmpdir, path, args.sweep)
        if "export" not in skip:
            bench_export(tmpdir, args.reps)
        if "rss" not in skip:
            bench_rss(tmpdir, args.rss_small, args.rss_large)
        if "postgres" not in skip:
            bench_postgres(args.pg_copies, args.pg_sweep, args.reps)


if __name__ == "__main__":
    main()
