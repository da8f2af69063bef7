"""``symfonic thread history`` and ``thread diff`` on the cached long threads (benchmarks/stores.py).

Each command runs as a whole process (start-up included), medians of ``--reps`` runs, side by
side with the straightforward way of getting the same facts: the real saver's ``list()`` over
the thread (every checkpoint decoded, as ``graph.get_state_history`` does), run once, up to
``--reference-max`` turns. Also prints how many checkpoints history read messages of.

Run: ``python benchmarks/bench_history.py [--sizes 1000,2000] [--reps 3] [--postgres]`` (PostgreSQL
stores are generated in the benchmark cluster when missing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import stores  # noqa: E402


def _timed(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "symfonic_cli", *args], capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}: {proc.stderr}")
    return took, proc.stdout


def _reference(url: str, key: str) -> float:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    start = time.perf_counter()
    conn = sqlite3.connect(f"file:{url}?mode=ro", uri=True, check_same_thread=False)
    n = sum(1 for _ in SqliteSaver(conn).list({"configurable": {"thread_id": key}}))
    conn.close()
    took = time.perf_counter() - start
    print(f"    reference saver.list(): {took:.2f} s ({n} checkpoints)")
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,2000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--reference-max", type=int, default=1000)
    ap.add_argument("--postgres", action="store_true", help="also the same threads on PostgreSQL (benchmarks/pg.py)")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT.parent / "symfonic_cli")], check=False)
    for turns in (int(s) for s in args.sizes.split(",")):
        url, key = str(stores.sqlite_store(f"long-{turns}")), stores.long_key(turns)
        print(f"SQLite long-{turns} ({os.path.getsize(url) / 1e9:.1f} GB)")
        times = []
        for _ in range(args.reps):
            took, out = _timed(["thread", "history", "-s", url, "-t", key, "-f", "json"])
            times.append(took)
        rows = json.loads(out)
        print(f"    thread history -f json: median {statistics.median(times):.2f} s over {args.reps} "
              f"(min {min(times):.2f}, max {max(times):.2f}); {len(rows)} checkpoints")
        from symfonic_cli.history.history import build_history
        from symfonic_cli.location import resolve_store
        from symfonic_cli.stores import open_store

        with open_store(resolve_store(url), writable=False) as st:
            print(f"    messages read of {build_history(st, key).decoded} checkpoint(s)")
        times = [_timed(["thread", "diff", "-s", url, "-t", key, "-2", "-1", "-f", "json"])[0] for _ in range(args.reps)]
        print(f"    thread diff -2 -1 -f json: median {statistics.median(times):.2f} s")
        if turns <= args.reference_max:
            _reference(url, key)
    if args.postgres:
        from benchmarks import pg

        server, why = pg.available()
        if server is None:
            sys.exit(why)
        try:
            for turns in (int(s) for s in args.sizes.split(",")):
                url, key = stores.postgres_store(f"long-{turns}", server), stores.long_key(turns)
                print(f"PostgreSQL long-{turns}")
                times = [_timed(["thread", "history", "-s", url, "-t", key, "-f", "json"])[0] for _ in range(args.reps)]
                print(f"    thread history -f json: median {statistics.median(times):.2f} s over {args.reps}")
                times = [_timed(["thread", "diff", "-s", url, "-t", key, "-2", "-1", "-f", "json"])[0] for _ in range(args.reps)]
                print(f"    thread diff -2 -1 -f json: median {statistics.median(times):.2f} s")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
