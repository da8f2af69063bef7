"""``threads list --status`` and ``--with-size`` vs the raw SQL they stand for, on SQLite.

The store: real graphs write a few 10-turn agent threads (symfonic_cli.demo.graphs.long_thread) and the
run-state threads of tests/support/run_state_scenarios.py (interrupted, failed, fanned out, finished)
through the real SqliteSaver; those rows (checkpoints AND pending writes) are then REPLICATED WITH
SQL (INSERT ... SELECT) under new thread ids until the store holds --threads threads: nine copies
in ten are of the 10-turn threads, one in ten of the run-state threads. Cached under
benchmarks/out/.

- status baseline: one Python process running the aggregate that joins every thread's latest
  root checkpoint to its pending writes (per thread: any interrupt, any error, any write);
- size baseline: ``sum(length(checkpoint) + length(metadata)) GROUP BY thread_id`` plus
  ``sum(length(value)) GROUP BY thread_id`` over the writes;
- ours: ``symfonic threads list --status interrupted,error,pending --format json`` and
  ``symfonic threads list --with-size --format json``, each a whole process.
Medians of --runs interleaved runs, side by side (wall and CPU seconds: CPU moves less when other
processes share the machine), and peak RSS of our processes.

``--before DIR`` adds both commands run from another checkout's ``symfonic_cli`` (e.g. main's),
in the same interleaved runs, for a before/after comparison on the same machine load.

``--postgres`` times ``threads list --status`` and ``--with-size`` on PostgreSQL instead, against
the same aggregate and ``sum(pg_column_size/octet_length) GROUP BY thread_id`` run through psycopg
(``--before`` works there too): the same seed threads written by the real PostgresSaver into the
benchmark cluster (benchmarks/pg.py, ``SYMFONIC_BENCH_POSTGRES_DSN`` for another server), their
checkpoints, blobs and writes replicated with ``INSERT ... SELECT`` as on SQLite.

Run: ``python benchmarks/bench_status.py [--threads N] [--runs R] [--before DIR] [--postgres]``.
"""

from __future__ import annotations

import argparse
import resource
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

RAW_STATUS = (
    "SELECT l.thread_id, max(w.channel = '__interrupt__'), max(w.channel = '__error__'), count(w.channel) "
    "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) AS l "
    "LEFT JOIN writes w ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.cid "
    "GROUP BY l.thread_id"
)
RAW_SIZE = (
    "SELECT thread_id, sum(length(checkpoint) + length(metadata)) FROM checkpoints GROUP BY thread_id; "
    "SELECT thread_id, sum(length(value)) FROM writes GROUP BY thread_id"
)


def _seed(path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.run_state_scenarios import write_states
    from symfonic_cli.demo.graphs import long_thread

    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    for i in range(3):
        long_thread(saver, f"seed:_:long-{i}", 10)
    write_states(saver)
    conn.execute("UPDATE checkpoints SET thread_id = 'state:' || thread_id WHERE thread_id NOT LIKE 'seed:%'")
    conn.execute("UPDATE writes SET thread_id = 'state:' || thread_id WHERE thread_id NOT LIKE 'seed:%'")
    conn.commit()
    conn.close()


def build(path: Path, threads: int) -> None:
    if path.exists():
        return
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    _seed(tmp)
    conn = sqlite3.connect(str(tmp))
    long_seeds = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE 'seed:%'")]
    state_seeds = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE 'state:%'")]
    # copy k of seed s: long seeds for nine in ten copies, run-state seeds for the tenth
    n_state = threads // 10 // len(state_seeds)
    n_long = (threads - n_state * len(state_seeds)) // len(long_seeds)
    for seeds, n in ((long_seeds, n_long), (state_seeds, n_state)):
        for table, cols in (
            ("checkpoints", "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"),
            ("writes", "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path"),
        ):
            conn.execute(
                f"""
                WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)
                INSERT INTO {table} (thread_id, {cols})
                SELECT 'copy-' || (n.k % 400) || ':_:' || t.thread_id || '-' || n.k, {cols}
                FROM {table} AS t, n WHERE t.thread_id IN ({','.join('?' * len(seeds))})
                """,
                (n, *seeds),
            )
        conn.commit()
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("VACUUM")
    conn.close()
    tmp.rename(path)


RAW_STATUS_PG = (
    "SELECT l.thread_id, bool_or(w.channel = '__interrupt__'), bool_or(w.channel = '__error__'), count(w.channel) "
    "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) AS l "
    "LEFT JOIN checkpoint_writes w ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.cid "
    "GROUP BY l.thread_id"
)
RAW_SIZE_PG = (
    "SELECT thread_id, sum(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0)) FROM checkpoints GROUP BY thread_id; "
    "SELECT thread_id, sum(octet_length(blob)) FROM checkpoint_blobs GROUP BY thread_id; "
    "SELECT thread_id, sum(octet_length(blob)) FROM checkpoint_writes GROUP BY thread_id"
)
PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def build_postgres(server, threads: int) -> str:
    """The PostgreSQL store of ``threads`` threads in the benchmark cluster, built when missing."""
    import psycopg
    from psycopg import sql

    db = f"bench_status_{threads}"
    done_mark = "symfonic status benchmark store, complete"
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db,)).fetchone()
        if row is not None and row[0] == done_mark:
            return server.url(db)
        if row is not None:  # an interrupted build
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(db)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    url = server.url(db)
    from langgraph.checkpoint.postgres import PostgresSaver

    from tests.support.run_state_scenarios import write_states
    from symfonic_cli.demo.graphs import long_thread

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        for i in range(3):
            long_thread(saver, f"seed:_:long-{i}", 10)
        write_states(saver)
    with psycopg.connect(url, autocommit=True) as conn:
        for table in PG_TABLES:
            conn.execute(f"UPDATE {table} SET thread_id = 'state:' || thread_id WHERE thread_id NOT LIKE 'seed:%'")
        long_seeds = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE 'seed:%'")]
        state_seeds = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE 'state:%'")]
        n_state = threads // 10 // len(state_seeds)
        n_long = (threads - n_state * len(state_seeds)) // len(long_seeds)
        for seeds, n in ((long_seeds, n_long), (state_seeds, n_state)):
            for table in PG_TABLES:
                cols = [r[0] for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND column_name <> 'thread_id' "
                    "ORDER BY ordinal_position", (table,),
                )]
                listed = ", ".join(cols)
                conn.execute(
                    f"INSERT INTO {table} (thread_id, {listed}) "
                    f"SELECT 'copy-' || mod(k, 400) || ':_:' || t.thread_id || '-' || k, {', '.join('t.' + c for c in cols)} "
                    f"FROM {table} AS t, generate_series(1, %s) AS k WHERE t.thread_id = ANY(%s)",
                    (n, seeds),
                )
        conn.execute("VACUUM ANALYZE")
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(db), sql.Literal(done_mark)))
    return url


def main_postgres(a) -> None:
    from benchmarks import pg

    server, why = pg.available(OUT / "pg")
    if server is None:
        raise SystemExit(why)
    try:
        t0 = time.perf_counter()
        url = build_postgres(server, a.threads)
        import psycopg

        with psycopg.connect(url) as conn:
            n_threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
            n_cp = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
            n_w = conn.execute("SELECT count(*) FROM checkpoint_writes").fetchone()[0]
        print(f"PostgreSQL store: {n_threads} threads, {n_cp} checkpoints, {n_w} writes (ready in {time.perf_counter() - t0:.0f} s)")
        # As on SQLite: the byte code is written once, not compiled by every timed process.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT.parent / "symfonic_cli")], check=True)
        if a.before is not None:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(a.before / "symfonic_cli")], check=True)
        py = sys.executable

        def raw(sql: str) -> list[str]:
            return [py, "-c", f"import psycopg\nwith psycopg.connect({url!r}) as c:\n for q in {sql.split('; ')!r}: c.execute(q).fetchall()"]

        contenders = {
            "raw status aggregate (psycopg)": raw(RAW_STATUS_PG),
            "threads list --status": [py, "-m", "symfonic_cli", "threads", "list", "-s", url, "--status", "interrupted,error,pending", "-f", "json"],
            "raw sum(size) GROUP BY (psycopg)": raw(RAW_SIZE_PG),
            "threads list --with-size": [py, "-m", "symfonic_cli", "threads", "list", "-s", url, "--with-size", "-f", "json"],
        }
        cwds: dict[str, str] = dict.fromkeys(contenders, str(ROOT.parent))
        pairs = [("threads list --status", "raw status aggregate (psycopg)"), ("threads list --with-size", "raw sum(size) GROUP BY (psycopg)")]
        if a.before is not None:
            for ours, base in list(pairs):
                contenders[f"{ours} (before)"] = contenders[ours]
                cwds[f"{ours} (before)"] = str(a.before.resolve())
                pairs.append((f"{ours} (before)", base))
        times: dict[str, list[float]] = {k: [] for k in contenders}
        cpu: dict[str, list[float]] = {k: [] for k in contenders}
        for _ in range(a.runs):
            for name, args in contenders.items():
                dt, dc = _proc(args, cwds[name])
                times[name].append(dt)
                cpu[name].append(dc)
        med = {k: statistics.median(v) for k, v in times.items()}
        mcpu = {k: statistics.median(v) for k, v in cpu.items()}
        for ours, base in pairs:
            print(
                f"{ours:37s} {med[ours]:7.3f} s   {base:32s} {med[base]:7.3f} s   ratio {med[ours] / med[base]:.2f}x"
                f"   (client CPU {mcpu[ours]:.3f} s vs {mcpu[base]:.3f} s; the server's work is not in it)"
            )
        for name, _ in pairs:
            code = f"import resource, subprocess, sys; subprocess.run({contenders[name]!r}, capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
            rss = int(subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=cwds[name]).stdout.strip() or 0)
            print(f"peak RSS {name}: {rss / 1024:.0f} MB")
    finally:
        server.stop()


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _proc(args: list[str], cwd: str | None = None) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one process: CPU moves less on a shared machine."""
    t0, c0 = time.perf_counter(), _cpu()
    proc = subprocess.run(args, capture_output=True, cwd=cwd)
    dt, dc = time.perf_counter() - t0, _cpu() - c0
    assert proc.returncode == 0, proc.stderr.decode()[-1000:]
    return dt, dc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before", type=Path, help="another checkout whose symfonic_cli to time as well")
    ap.add_argument("--postgres", action="store_true", help="time the listing on PostgreSQL instead")
    a = ap.parse_args()
    if a.postgres:
        main_postgres(a)
        return
    OUT.mkdir(exist_ok=True)
    path = OUT / f"status-{a.threads}.db"
    t0 = time.perf_counter()
    build(path, a.threads)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n_threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
    n_cp = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    n_w = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    conn.close()
    print(f"store {path}: {n_threads} threads, {n_cp} checkpoints, {n_w} writes, {path.stat().st_size / 1e6:.0f} MB (ready in {time.perf_counter() - t0:.0f} s)")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT.parent / "symfonic_cli")], check=True)
    py = sys.executable

    def raw(sql: str) -> list[str]:
        return [py, "-c", f"import sqlite3; c = sqlite3.connect('file:{path}?mode=ro', uri=True)\nfor q in {sql.split('; ')!r}: c.execute(q).fetchall()"]

    contenders = {
        "raw status aggregate": raw(RAW_STATUS),
        "threads list --status": [py, "-m", "symfonic_cli", "threads", "list", "-s", str(path), "--status", "interrupted,error,pending", "-f", "json"],
        "raw sum(length) GROUP BY": raw(RAW_SIZE),
        "threads list --with-size": [py, "-m", "symfonic_cli", "threads", "list", "-s", str(path), "--with-size", "-f", "json"],
    }
    # ``python -m`` imports from its working directory first: each checkout runs its own code.
    cwds: dict[str, str] = dict.fromkeys(contenders, str(ROOT.parent))
    pairs = [("threads list --status", "raw status aggregate"), ("threads list --with-size", "raw sum(length) GROUP BY")]
    if a.before is not None:
        before = str(a.before.resolve())
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(a.before / "symfonic_cli")], check=True)
        for ours, base in list(pairs):
            contenders[f"{ours} (before)"] = contenders[ours]
            cwds[f"{ours} (before)"] = before
            pairs.append((f"{ours} (before)", base))
    times: dict[str, list[float]] = {k: [] for k in contenders}
    cpu: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(a.runs):
        for name, args in contenders.items():
            dt, dc = _proc(args, cwds[name])
            times[name].append(dt)
            cpu[name].append(dc)
    med = {k: statistics.median(v) for k, v in times.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    for ours, base in pairs:
        print(
            f"{ours:37s} {med[ours]:7.3f} s   {base:28s} {med[base]:7.3f} s   ratio {med[ours] / med[base]:.2f}x"
            f"   (CPU {mcpu[ours]:.3f} s vs {mcpu[base]:.3f} s, {mcpu[ours] / mcpu[base]:.2f}x)"
        )
    for name, _ in pairs:
        code = f"import resource, subprocess, sys; subprocess.run({contenders[name]!r}, capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        rss = int(subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=cwds[name]).stdout.strip() or 0)
        print(f"peak RSS {name}: {rss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
