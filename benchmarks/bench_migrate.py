"""SQLite -> PostgreSQL: ``symfonic migrate`` vs a straightforward copy loop, side by side in one run.

Source: the cached "many" store of benchmarks/stores.py (2,000 threads x 10 turns, written by the
real agent graph through the real SqliteSaver). Target: two fresh databases set up by the real
PostgresSaver on one PostgreSQL server (tests/support/pg_server.py starts a throwaway cluster, or
``SYMFONIC_TEST_POSTGRES_DSN`` names one).

- baseline: ``for t in SqliteSaver.list(None): PostgresSaver.put(...); put_writes(...)`` one
  checkpoint at a time, each call its own transaction (what a hand-written copy does);
- migrate: ``symfonic migrate --from SRC --to PG --all`` as a subprocess, verification included.

Run: ``python benchmarks/bench_migrate.py [--threads N]`` (N < 2000 copies the first N threads).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks.stores import sqlite_store  # noqa: E402
from tests.support.backends import put_tuple  # noqa: E402


def _server(durable: bool = True):
    """A PostgreSQL server: the tests' throwaway cluster, or SYMFONIC_TEST_POSTGRES_DSN.

    The test cluster runs with fsync and synchronous_commit off (test speed); a copy is measured
    against a durable server, as in production, unless ``durable`` is False.
    """
    from tests.support import pg_server

    dsn = os.environ.get(pg_server.DSN_ENV)
    if dsn:
        return pg_server.from_dsn(dsn), None
    cluster = pg_server.LocalCluster()
    cluster.start()
    if durable:
        cluster.restart(pg_server.DURABLE)
    backend = cluster.backend()
    return backend, cluster


def _fresh_db(backend, name: str) -> str:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import sql

    with backend.admin() as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = backend.url(name)
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
    return url


def _counts(url: str) -> tuple[int, int, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return tuple(  # type: ignore[return-value]
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
        )


def baseline(source: Path, url: str, keys: list[str] | None) -> tuple[float, int]:
    """The straightforward loop: list everything, put each checkpoint and its writes."""
    import sqlite3

    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True, check_same_thread=False)
    src = SqliteSaver(conn)
    src.is_setup = True
    n = 0
    start = time.perf_counter()
    # Every checkpoint of the store, or (a partial run) of each chosen thread in turn.
    listing = src.list(None) if keys is None else (t for k in keys for t in src.list({"configurable": {"thread_id": k}}))
    with PostgresSaver.from_conn_string(url) as dst:
        for t in listing:
            put_tuple(dst, t)
            n += 1
    conn.close()
    return time.perf_counter() - start, n


def migrate(source: Path, url: str, key_file: Path | None, jobs: int) -> tuple[float, dict]:
    select = ["--from-file", str(key_file)] if key_file else ["--all"]
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "symfonic_cli", "migrate", "--from", str(source), "--to", url, *select,
         *(["--jobs", str(jobs)] if jobs else []), "--format", "json"],
        capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"migrate failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return elapsed, json.loads(proc.stdout)["totals"]


def main() -> None:
    from benchmarks import byte_compile

    byte_compile()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2000, help="copy the first N threads of the store")
    parser.add_argument("--jobs", type=int, nargs="+", default=[0, 1], help="migrate --jobs values to measure (0: the default)")
    parser.add_argument("--no-fsync", action="store_true", help="keep the test cluster's fsync=off, synchronous_commit=off")
    args = parser.parse_args()

    source = sqlite_store("many")
    import sqlite3

    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as c:
        all_keys = [r[0] for r in c.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")]
    keys = all_keys[: args.threads]
    key_file = None
    if len(keys) < len(all_keys):
        key_file = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_migrate_keys.txt"
        key_file.write_text("\n".join(keys) + "\n")

    backend, cluster = _server(durable=not args.no_fsync)
    try:
        url_base = _fresh_db(backend, "bench_migrate_baseline")
        t_base, n_base = baseline(source, url_base, keys if key_file else None)
        base_rows = _counts(url_base)
        runs = []
        for jobs in args.jobs:
            url_mig = _fresh_db(backend, f"bench_migrate_symfonic_j{jobs}")
            t_mig, totals = migrate(source, url_mig, key_file, jobs)
            runs.append((jobs, t_mig, totals, _counts(url_mig)))
    finally:
        if cluster is not None:
            cluster.stop()

    server = "SYMFONIC_TEST_POSTGRES_DSN" if cluster is None else ("fsync off" if args.no_fsync else "durable: fsync, synchronous_commit on")
    print(f"SQLite -> PostgreSQL ({server}), {len(keys)} threads x 10 turns, {n_base} checkpoints, {os.cpu_count()} CPUs")
    print(f"  baseline loop (list + put/put_writes, one call at a time): {t_base:8.1f} s  {n_base / t_base:8.0f} checkpoints/s  rows {base_rows}")
    for jobs, t_mig, totals, rows in runs:
        label = f"--jobs {jobs}" if jobs else "(default jobs)"
        print(f"  symfonic migrate {label:14} (verified):           {t_mig:8.1f} s  "
              f"{totals['checkpoints_copied'] / t_mig:8.0f} checkpoints/s  rows {rows}  "
              f"speedup {t_base / t_mig:.1f}x  (copied {totals['copied']}, verified {totals['verified']})")


if __name__ == "__main__":
    main()
