"""``symfonic store usage`` and ``symfonic thread prune``, side by side with raw SQL, in one run.

Store: "many" (benchmarks/stores.py: 2,000 threads x 10 turns through the real agent graph and
SqliteSaver, 34 checkpoints a thread) grown N/2,000-fold with ``INSERT ... SELECT`` (each copy's
thread ids get a suffix; every other byte is the real rows'). Default N = 20,000 (680,000
checkpoints, about 3 GB).

- usage: ``store usage -f json`` (a process) against the raw SQL aggregates it reports (the same
  counts and sums, page statistics, the top-10 GROUP BY and the keep-1 window count) run by
  sqlite3 directly; target: within 2x.
- prune: ``thread prune --all --keep 1 --yes -f jsonl`` (a process) against one raw DELETE per
  table keeping the latest checkpoint per (thread, namespace), on two copies of the same file;
  target: within 3x. Both then hold the same rows (checked).
- memory: the prune's peak RSS (/usr/bin/time -v) at N/10 and at N threads: flat.
- PostgreSQL (``--postgres``): 200 threads written by the real graph and PostgresSaver, grown to
  ``--pg-threads`` as above (cached as a template database); ``thread prune --all`` (a process)
  against PostgresSaver.prune over the same keys; against the floor, per-thread REPEATABLE READ
  transactions in a tight loop without the tool (FLOOR_SQL: one statement each, BEGIN, it and
  COMMIT in one round trip; target within 1.5x); and against the tool's own per-thread
  transactions replayed without its Python (_pg_replay). All then hold the same rows (checked).

Medians of ``--repeat`` runs (default 3; the machine is noisy). Run:
``python benchmarks/bench_storage.py [--threads 20000] [--repeat 3] [--postgres]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import stores  # noqa: E402


# Every column but thread_id, by name (SqliteSaver's writes table has task_path before idx;
# PostgresSaver's checkpoints a type column).
SQLITE_COLUMNS = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "writes": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value",
}
PG_COLUMNS = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
}


def grow(src: Path, dst: Path, threads: int) -> Path:
    """``src`` (2,000 threads) copied, then its rows inserted again with suffixed thread ids."""
    if dst.exists():
        return dst
    tmp = dst.with_suffix(".partial")
    shutil.copyfile(src, tmp)
    conn = sqlite3.connect(tmp)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = OFF")
    base = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
    for copy in range(1, max(1, threads // base)):
        suffix = f"-x{copy}"
        for table, cols in SQLITE_COLUMNS.items():  # named: a column list in the table's order would be a guess
            conn.execute(f"INSERT INTO {table} (thread_id, {cols}) SELECT thread_id || ?, {cols} FROM {table} WHERE instr(thread_id, '-x') = 0",
                         (suffix,))
        conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    _check_copy(conn, conn.execute("SELECT min(thread_id) FROM checkpoints").fetchone()[0], SQLITE_COLUMNS, "?")
    conn.close()
    os.replace(tmp, dst)
    return dst


def _check_copy(conn, key: str, columns: dict[str, str], mark: str) -> None:
    """The first copy of ``key`` holds the original's rows, column by column (``mark``: the driver's placeholder)."""
    for table, cols in columns.items():
        rows = [sorted(conn.execute(f"SELECT {cols} FROM {table} WHERE thread_id = {mark}", (k,)).fetchall(), key=repr)
                for k in (key, key + "-x1")]
        if not rows[0] or rows[0] != rows[1]:
            raise SystemExit(f"the grown copy of {key} does not hold the original's {table} rows")


def shrink(src: Path, dst: Path) -> Path:
    """A tenth of ``src``'s threads (every tenth "many" key and its copies): the memory comparison's small store."""
    shutil.copyfile(src, dst)
    conn = sqlite3.connect(dst)
    for table in ("checkpoints", "writes"):
        conn.execute(f"DELETE FROM {table} WHERE CAST(substr(thread_id, instr(thread_id, ':s-') + 3, 5) AS INTEGER) % 10 != 0")
    conn.commit()
    conn.execute("VACUUM")
    conn.close()
    return dst


def _child(args: list[str]) -> tuple[float, int, str]:
    """Seconds, the child's peak RSS (KiB) and stdout of ``python -m symfonic_cli ARGS``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "symfonic_cli", *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"symfonic {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before), proc.stdout


def _peak_of(args: list[str]) -> int:
    """The peak RSS of one child alone (/usr/bin/time -v), KiB."""
    if not os.path.exists("/usr/bin/time"):
        return -1
    proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "symfonic_cli", *args], capture_output=True, text=True)
    for line in proc.stderr.splitlines():
        if "Maximum resident set size" in line:
            return int(line.rsplit(":", 1)[1])
    return -1


def raw_usage(path: Path) -> None:
    """The aggregates store usage reports, as plain SQL."""
    # The threads the plain rule does not describe (a subgraph call's namespace, DeltaChannel
    # metadata, pending Sends), as store usage found them row by row until 2026-12-07.
    special = ("SELECT thread_id COLLATE BINARY FROM checkpoints WHERE instr(checkpoint_ns, ':') > 0 "
               "OR instr(CAST(metadata AS TEXT), 'counters_since_delta_snapshot') > 0 OR instr(CAST(metadata AS TEXT), 'delta_writes_versioned') > 0 "
               "UNION SELECT thread_id COLLATE BINARY FROM writes WHERE channel = '__pregel_tasks'")

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for pragma in ("page_size", "page_count", "freelist_count"):
        conn.execute(f"PRAGMA {pragma}").fetchone()
    conn.execute("SELECT count(*), sum(length(checkpoint) + coalesce(length(metadata), 0)) FROM checkpoints").fetchone()
    conn.execute("SELECT count(*), sum(length(value)) FROM writes").fetchone()
    conn.execute("SELECT channel, count(*), sum(length(value)) FROM writes GROUP BY channel").fetchall()
    conn.execute("SELECT thread_id, sum(b) FROM (SELECT thread_id, sum(length(checkpoint) + coalesce(length(metadata), 0)) AS b FROM checkpoints "
                 "GROUP BY thread_id UNION ALL SELECT thread_id, sum(length(value)) FROM writes GROUP BY thread_id) GROUP BY thread_id "
                 "ORDER BY 2 DESC LIMIT 10").fetchall()
    ranked = ("SELECT thread_id, checkpoint_ns, checkpoint_id, length(checkpoint) + coalesce(length(metadata), 0) AS b, "
              "row_number() OVER (PARTITION BY thread_id, checkpoint_ns ORDER BY checkpoint_id DESC) AS rn FROM checkpoints "
              f"WHERE thread_id NOT IN ({special})")
    conn.execute(f"SELECT count(*), sum(b) FROM ({ranked}) WHERE rn > 1").fetchone()
    conn.execute(f"SELECT count(*), sum(length(w.value)) FROM ({ranked}) AS r JOIN writes AS w ON w.thread_id = r.thread_id "
                 "AND w.checkpoint_ns = r.checkpoint_ns AND w.checkpoint_id = r.checkpoint_id WHERE r.rn > 1").fetchone()
    conn.close()


def raw_prune(path: Path) -> None:
    """One DELETE per table keeping the latest checkpoint per (thread, namespace), and their writes
    (the latest ids in a temporary table keyed by (thread, namespace): each row's test is one index
    seek, so the baseline grows linearly with the store)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("CREATE TEMP TABLE latest (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, PRIMARY KEY (thread_id, checkpoint_ns)) WITHOUT ROWID")
    conn.execute("INSERT INTO latest SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints GROUP BY 1, 2")
    older = ("{t}.checkpoint_id < (SELECT l.checkpoint_id FROM latest l WHERE l.thread_id = {t}.thread_id "
             "AND l.checkpoint_ns = {t}.checkpoint_ns)")
    conn.execute(f"DELETE FROM writes WHERE {older.format(t='writes')} AND EXISTS (SELECT 1 FROM checkpoints c "
                 "WHERE c.thread_id = writes.thread_id AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)")
    conn.execute(f"DELETE FROM checkpoints WHERE {older.format(t='checkpoints')}")
    conn.execute("UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE parent_checkpoint_id IS NOT NULL")
    conn.execute("COMMIT")
    conn.close()


def _digest(path: Path) -> tuple:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return (conn.execute("SELECT count(*), total(length(checkpoint)), count(parent_checkpoint_id) FROM checkpoints").fetchone(),
                conn.execute("SELECT count(*), total(length(value)) FROM writes").fetchone())
    finally:
        conn.close()


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def bench_sqlite(threads: int, repeat: int, work: Path) -> None:
    many = stores.sqlite_store("many")
    grown = grow(many, stores.OUT / "sqlite" / f"grown2-{threads}.db", threads) if threads > 2000 else many  # cached beside "many"
    small = shrink(grown, work / "tenth.db")
    print(f"SQLite store: {threads:,} threads ({grown.stat().st_size / 1e9:.1f} GB); the memory comparison's tenth: {small.stat().st_size / 1e6:.0f} MB")
    tool_u, raw_u = [], []
    for _ in range(repeat):
        t, _, _ = _child(["store", "usage", "-s", str(grown), "-f", "json"])
        tool_u.append(t)
        start = time.perf_counter()
        raw_usage(grown)
        raw_u.append(time.perf_counter() - start)
    print(f"  store usage: {_median(tool_u):.2f} s; raw SQL aggregates {_median(raw_u):.2f} s; ratio {_median(tool_u) / _median(raw_u):.2f} (target <= 2)")
    tool_p, raw_p = [], []
    for _ in range(repeat):
        a, b = work / "a.db", work / "b.db"
        shutil.copyfile(grown, a)
        shutil.copyfile(grown, b)
        t, _, _ = _child(["thread", "prune", "-s", str(a), "--all", "--keep", "1", "--yes", "-f", "jsonl"])
        tool_p.append(t)
        start = time.perf_counter()
        raw_prune(b)
        raw_p.append(time.perf_counter() - start)
        same = _digest(a) == _digest(b)
        a.unlink()
        b.unlink()
        if not same:
            raise SystemExit("the prune and the raw DELETEs left different rows")
    print(f"  thread prune --all --keep 1: {_median(tool_p):.2f} s; raw DELETE per table {_median(raw_p):.2f} s; "
          f"ratio {_median(tool_p) / _median(raw_p):.2f} (target <= 3); same rows left: yes")
    peaks = {}
    for label, src in ((f"{threads // 10:,}", small), (f"{threads:,}", grown)):
        a = work / "peak.db"
        shutil.copyfile(src, a)
        peaks[label] = _peak_of(["thread", "prune", "-s", str(a), "--all", "--keep", "1", "--yes", "-f", "jsonl"])
        a.unlink()
    (l1, p1), (l2, p2) = peaks.items()
    print(f"  peak RSS of the prune (/usr/bin/time -v): {l1} threads {p1 / 1024:.0f} MiB, {l2} threads {p2 / 1024:.0f} MiB; "
          f"ratio {p2 / p1:.2f} (flat: ~1)")


# The floor: the same per-thread transactions without the tool, one statement each (keep the latest
# checkpoint per namespace, their writes, the blobs only deleted checkpoints reference, the kept
# parent pointers cleared), BEGIN + the statement + COMMIT in one round trip (pipeline mode).
FLOOR_SQL = """
WITH latest AS (SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, checkpoint_id FROM checkpoints
                WHERE thread_id = %(k)s ORDER BY checkpoint_ns, checkpoint_id DESC),
gone AS (SELECT c.checkpoint_ns, c.checkpoint_id, c.checkpoint FROM checkpoints c WHERE c.thread_id = %(k)s
         AND (c.checkpoint_ns, c.checkpoint_id) NOT IN (SELECT * FROM latest)),
kv AS (SELECT c.checkpoint_ns, e.key, e.value FROM checkpoints c JOIN latest l USING (checkpoint_ns, checkpoint_id)
       CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') e WHERE c.thread_id = %(k)s),
gv AS (SELECT g.checkpoint_ns, e.key, e.value FROM gone g CROSS JOIN LATERAL jsonb_each_text(g.checkpoint -> 'channel_versions') e
       EXCEPT SELECT * FROM kv),
w AS (DELETE FROM checkpoint_writes y USING gone g WHERE y.thread_id = %(k)s AND y.checkpoint_ns = g.checkpoint_ns
      AND y.checkpoint_id = g.checkpoint_id),
b AS (DELETE FROM checkpoint_blobs y USING gv WHERE y.thread_id = %(k)s AND y.checkpoint_ns = gv.checkpoint_ns
      AND y.channel = gv.key AND y.version = gv.value),
c AS (DELETE FROM checkpoints y USING gone g WHERE y.thread_id = %(k)s AND y.checkpoint_ns = g.checkpoint_ns
      AND y.checkpoint_id = g.checkpoint_id),
p AS (UPDATE checkpoints y SET parent_checkpoint_id = NULL FROM latest l WHERE y.thread_id = %(k)s
      AND y.checkpoint_ns = l.checkpoint_ns AND y.checkpoint_id = l.checkpoint_id AND y.parent_checkpoint_id IS NOT NULL)
SELECT 1
"""


def _pg_floor(url: str, keys: list[str]) -> float:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        start = time.perf_counter()
        for k in keys:
            with conn.pipeline():
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                conn.execute(FLOOR_SQL, {"k": k}, prepare=False)
                conn.execute("COMMIT")
        return time.perf_counter() - start


def _pg_replay(url: str, keys: list[str]) -> float:
    """The tool's own per-thread transactions (symfonic_cli/stores/postgres/prune.py's statements,
    the same three round trips in pipeline mode), their parameters computed before the clock starts:
    what is left of the tool's time once its Python (rules, records, receipt) is taken away."""
    from symfonic_cli.location import resolve_store
    from symfonic_cli.model.prune import TASKS
    from symfonic_cli.stores import open_store

    st = open_store(resolve_store(url), writable=True)
    try:
        facts_sql, fresh_sql = st._facts_sql(), st._facts_sql(kept=True)
        work = []
        facts = st._pr_facts_many(keys)
        for k in keys:
            t = st._targets([st._decide_on(k, facts[k], 1, None)])
            t["key"] = k
            fresh = {"keys": [k], "tasks": TASKS, "key": k, "k_ns": t["k_ns"], "k_id": t["k_id"]}
            work.append((k, t, fresh, st._rows_sql(True, bool(t["x_k"]), bool(t["t_k"]))))
        conn = st.conn
        start = time.perf_counter()
        for k, t, fresh, delete in work:
            with conn.pipeline() as pipe:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                conn.execute(facts_sql, {"keys": [k], "tasks": TASKS}, prepare=False)
                pipe.sync()
                conn.execute(delete, t, prepare=False)
                conn.execute(fresh_sql, fresh, prepare=False)
                pipe.sync()
                conn.execute("COMMIT")
        return time.perf_counter() - start
    finally:
        st.close()


def _pg_saver(url: str, keys: list[str]) -> float:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        start = time.perf_counter()
        saver.prune(keys, strategy="keep_latest")
        return time.perf_counter() - start


def _pg_digest(url: str) -> tuple:
    import psycopg

    with psycopg.connect(url) as conn:
        return tuple(conn.execute(q).fetchone() for q in (
            "SELECT count(*), count(parent_checkpoint_id), md5(string_agg(thread_id || '|' || checkpoint_ns || '|' || checkpoint_id || '|' || md5(checkpoint::text), ',' ORDER BY thread_id, checkpoint_ns, checkpoint_id)) FROM checkpoints",
            "SELECT count(*), md5(string_agg(thread_id || '|' || checkpoint_ns || '|' || channel || '|' || version, ',' ORDER BY thread_id, checkpoint_ns, channel, version)) FROM checkpoint_blobs",
            "SELECT count(*), md5(string_agg(thread_id || '|' || checkpoint_id || '|' || task_id || '|' || idx, ',' ORDER BY thread_id, checkpoint_id, task_id, idx)) FROM checkpoint_writes"))


def bench_postgres(threads: int, repeat: int, work: Path) -> None:
    import psycopg

    from benchmarks import pg

    server, why = pg.available(stores.OUT / "pg")
    if server is None:
        print(f"  PostgreSQL: {why}")
        return
    try:
        base = 200
        grown = _pg_grown(server, _pg_source(server, base), threads // base)
        with psycopg.connect(server.url(grown)) as conn:
            keys = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]
        arms = {
            "tool": lambda url: _child(["thread", "prune", "-s", url, "--all", "--keep", "1", "--yes", "-f", "jsonl"])[0],
            "saver": lambda url: _pg_saver(url, keys),
            "floor": lambda url: _pg_floor(url, keys),
            "replay": lambda url: _pg_replay(url, keys),
        }
        times: dict[str, list[float]] = {a: [] for a in arms}
        for r in range(repeat):
            digests = {}
            order = list(arms)[r % len(arms):] + list(arms)[:r % len(arms)]  # the arms in turn, each first once
            for arm in order:
                name = f"bench_prune_{arm}"
                with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                    conn.execute(f"CREATE DATABASE {name} TEMPLATE {grown}")
                times[arm].append(arms[arm](server.url(name)))
                digests[arm] = _pg_digest(server.url(name))
            if len(set(digests.values())) != 1:
                raise SystemExit(f"the prunes left different rows: {digests}")
        tool, saver, floor, replay = (_median(times[a]) for a in arms)
        print(f"PostgreSQL store: {len(keys):,} threads x 34 checkpoints (grown from {base} written by the graph); runs {times}")
        print(f"  thread prune --all --keep 1 (a process): {tool:.2f} s; PostgresSaver.prune over the same threads {saver:.2f} s "
              f"(ratio {tool / saver:.2f}); the raw per-thread transactions in a tight loop {floor:.2f} s (ratio {tool / floor:.2f}; "
              f"target <= 1.5); the tool's own per-thread transactions replayed without its Python {replay:.2f} s "
              f"(ratio {tool / replay:.2f}); same rows left: yes")
    finally:
        server.stop()


def cached_database(server, db: str, mark: str, make: Callable[[str], None], template: str | None = None) -> str:
    """``db`` made once by ``make(url)`` (on a copy of ``template`` when given) and marked complete
    (a comment on the database): a run killed while making it starts it again."""
    import psycopg

    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db,)).fetchone()
        if row is not None and row[0] == mark:
            return db
        conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {db}" + (f" TEMPLATE {template}" if template else ""))
    make(server.url(db))
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        conn.execute(f"COMMENT ON DATABASE {db} IS '{mark}'")
    return db


def written_by_saver(threads: int, turns: int = stores.MANY_TURNS) -> Callable[[str], None]:
    """A ``make`` for ``cached_database``: ``threads`` chats written by the real graph through PostgresSaver."""

    def make(url: str) -> None:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            stores._write_many(saver, threads=threads, turns=turns)

    return make


def _pg_grown(server, src: str, factor: int) -> str:
    """``src`` grown ``factor``-fold (cached as a template database, marked complete)."""
    return cached_database(server, f"{src}_grown2_x{factor}", "symfonic prune benchmark grown store, complete",
                           lambda url: _grow_pg(url, factor), template=src)


def _pg_source(server, threads: int) -> str:
    return cached_database(server, f"bench_prune_src_{threads}", "symfonic prune benchmark source, complete", written_by_saver(threads))


def _grow_pg(url: str, factor: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for copy in range(1, factor):
            s = f"-x{copy}"
            for table, cols in PG_COLUMNS.items():
                conn.execute(f"INSERT INTO {table} (thread_id, {cols}) SELECT thread_id || %s, {cols} FROM {table} "
                             "WHERE strpos(thread_id, '-x') = 0", (s,))
        conn.execute("VACUUM ANALYZE")
        if factor > 1:
            _check_copy(conn, conn.execute("SELECT min(thread_id) FROM checkpoints").fetchone()[0], PG_COLUMNS, "%s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--pg-threads", type=int, default=2_000)
    ap.add_argument("--no-sqlite", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="symfonic-bench-storage-", dir=str(stores.OUT)))
    try:
        if not args.no_sqlite:
            bench_sqlite(args.threads, args.repeat, work)
        if args.postgres:
            bench_postgres(args.pg_threads, args.repeat, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
