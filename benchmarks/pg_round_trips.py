"""Statements and round trips per thread of ``thread prune --all --keep 1`` on PostgreSQL, and of
``PostgresSaver.prune`` over the same threads, each on its own copy of the benchmark's 200 threads
(bench_storage.py's source database, written by the real graph and PostgresSaver).

Counted in-process by wrapping psycopg: a statement is a ``Cursor.execute``; a round trip is a
statement outside pipeline mode, or a pipeline sync or fetch (a wait for the server's results).
BEGIN and COMMIT sent by ``Connection.transaction()`` are not statements by this count (psycopg
sends them itself); sent as statements, in pipeline mode, they are. Run:
``python benchmarks/pg_round_trips.py``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import bench_storage as bs  # noqa: E402
from benchmarks import pg, stores  # noqa: E402

COUNTS = {"statements": 0, "round_trips": 0}


def _instrument() -> None:
    import psycopg
    import psycopg._pipeline as pp

    execute, sync, fetch = psycopg.Cursor.execute, pp.BasePipeline._sync_gen, pp.BasePipeline._fetch_gen

    def counted_execute(self, *a, **k):
        COUNTS["statements"] += 1
        COUNTS["round_trips"] += self.connection._pipeline is None
        return execute(self, *a, **k)

    def counted_sync(self):
        COUNTS["round_trips"] += 1
        return (yield from sync(self))

    def counted_fetch(self, *, flush):
        COUNTS["round_trips"] += bool(flush)
        return (yield from fetch(self, flush=flush))

    psycopg.Cursor.execute, pp.BasePipeline._sync_gen, pp.BasePipeline._fetch_gen = counted_execute, counted_sync, counted_fetch


def _copy(server, src: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {src}")
    return server.url(name)


def main() -> None:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    from symfonic_cli.cli.app import main as symfonic

    server, why = pg.available(stores.OUT / "pg")
    if server is None:
        raise SystemExit(why)
    try:
        src = bs._pg_source(server, 200)
        tool_url, saver_url = _copy(server, src, "rt_tool"), _copy(server, src, "rt_saver")
        with psycopg.connect(tool_url) as conn:
            keys = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]
        _instrument()
        results = {}
        for label in ("thread prune", "PostgresSaver.prune"):
            COUNTS.update(statements=0, round_trips=0)
            if label == "thread prune":
                with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    symfonic(["thread", "prune", "-s", tool_url, "--all", "--keep", "1", "--yes", "-f", "jsonl"])
            else:
                with PostgresSaver.from_conn_string(saver_url) as saver:
                    COUNTS.update(statements=0, round_trips=0)
                    saver.prune(keys, strategy="keep_latest")
            results[label] = dict(COUNTS)
        same = bs._pg_digest(tool_url) == bs._pg_digest(saver_url)
        for label, c in results.items():
            print(f"{label}: {c['statements'] / len(keys):.1f} statements and {c['round_trips'] / len(keys):.1f} round trips per thread "
                  f"({len(keys)} threads, plans included)")
        print(f"same rows left: {'yes' if same else 'NO'}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
