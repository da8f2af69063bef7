"""A TAB after ``-t``: thread keys read by prefix from a store of 20,000 threads (issue #25 item 7).

The store is benchmarks/stores.py's ``many`` (2,000 threads x 10 turns written by real graphs),
grown ten-fold with ``INSERT ... SELECT`` under new keys (20,000 threads, ~680,000 checkpoints),
cached as benchmarks/out/sqlite/many-x10.db. Each contender is a whole process, interleaved with
the others; the table shows medians and each against the interpreter's own start:

- ``python -c pass``;
- a TAB for ``symfonic transcript show -s STORE -t tenant-0`` (100 keys of 20,000, bash's protocol
  with COMP_LINE): target under 200 ms;
- the same TAB with an empty prefix (the first 100 keys of all);
- ``--postgres``: the same against the PostgreSQL ``many`` store grown the same way.

Run: ``python benchmarks/bench_complete.py [--runs N] [--postgres]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.insert(0, str(REPO))

from benchmarks.stores import OUT, sqlite_store  # noqa: E402

TARGET = 0.200
GROW = 10


def grown_sqlite() -> Path:
    path = OUT / "sqlite" / "many-x10.db"
    if path.exists():
        return path
    base = sqlite_store("many")
    tmp = path.with_suffix(".partial")
    shutil.copyfile(base, tmp)
    conn = sqlite3.connect(tmp)
    for k in range(1, GROW):
        for table in ("checkpoints", "writes"):
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            rest = ", ".join(c for c in cols if c != "thread_id")
            conn.execute(f"INSERT INTO {table} (thread_id, {rest}) SELECT thread_id || '-{k}', {rest} FROM {table} "
                         f"WHERE thread_id NOT LIKE '%-_'")
    conn.commit()
    conn.close()
    os.replace(tmp, path)
    return path


def grown_postgres(server) -> str:
    import psycopg

    from benchmarks.stores import postgres_store

    url = postgres_store("many", server)
    with psycopg.connect(url, autocommit=True) as conn:
        count = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        if count < 20000:
            for k in range(1, GROW):
                for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                    cols = [r[0] for r in conn.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position", (table,))]
                    rest = ", ".join(c for c in cols if c != "thread_id")
                    conn.execute(f"INSERT INTO {table} (thread_id, {rest}) SELECT thread_id || '-{k}', {rest} FROM {table} "
                                 f"WHERE thread_id NOT LIKE '%%-_'")
            conn.execute("ANALYZE")
    return url


def _tab(store: str, prefix: str, cache: str) -> tuple[list[str], dict[str, str]]:
    line = f"symfonic transcript show -s {store} -t {prefix}"
    env = dict(os.environ, _SYMFONIC_COMPLETE="complete_bash", COMP_LINE=line, COMP_POINT=str(len(line)),
               COMP_WORDBREAKS=" \t\n\"'><=;|&(", XDG_CACHE_HOME=cache)
    return [sys.executable, "-m", "symfonic_cli"], env


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=REPO)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed: {argv}: {done.stderr[-500:]}")
    return took, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "symfonic_cli")], check=True)
    stores = {"sqlite": str(grown_sqlite())}
    if args.postgres:
        from benchmarks import pg

        server, why = pg.available(OUT / "pg")
        if server is None:
            raise SystemExit(f"no PostgreSQL: {why}")
        stores["postgres"] = grown_postgres(server)
    with tempfile.TemporaryDirectory() as cache:
        contenders = {"python -c pass": ([sys.executable, "-c", "pass"], dict(os.environ), None)}
        for kind, store in stores.items():
            contenders[f"{kind}: TAB -t tenant-0"] = (*_tab(store, "tenant-0", cache), "tenant-0")
            contenders[f"{kind}: TAB -t (empty)"] = (*_tab(store, "", cache), "tenant-")
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for argv, env, _ in contenders.values():
            _once(argv, env)  # warm-up: page cache, the completion tree cache
        for _ in range(args.runs):
            for name, (argv, env, must) in contenders.items():
                took, out = _once(argv, env)
                if must is not None:
                    keys = out.split("\n")
                    assert len(keys) == 100 and all(k.startswith(must) for k in keys), out[:300]
                times[name].append(took)
    floor = statistics.median(times["python -c pass"])
    print(f"{'contender':34} {'median s':>9} {'minus python':>13} {'target':>7}")
    for name, seconds in times.items():
        med = statistics.median(seconds)
        extra = "" if name == "python -c pass" else f"{med - floor:13.3f}"
        target = "" if name == "python -c pass" else ("ok" if med < TARGET else "MISSED")
        print(f"{name:34} {med:9.3f} {extra:>13} {target:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
