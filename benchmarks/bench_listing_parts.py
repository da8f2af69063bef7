"""SQLite's listing pass in one part and split across the CPUs, side by side in one process.

    python -m benchmarks.bench_listing_parts STORE.db [--limit 20|all] [--parts 1,2] [--reps 5]

Each round lists the store once per part count (stores/sqlite/listing.py ``PARTS``, forced), in
turn, on a fresh connection; printed per part count: the median wall and CPU seconds (user+sys of
the process, every thread) of ``list_threads``, and the machine's load average before and after.
The split pays only where CPUs are idle: a busy machine's load shows beside the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("--limit", default="20", help="a page's rows, or 'all' (the whole listing)")
    ap.add_argument("--parts", default="1,2")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store
    from symfonic_cli.stores.sqlite import parts as listing

    limit = None if a.limit == "all" else int(a.limit)
    parts = [int(p) for p in a.parts.split(",")]
    walls: dict[int, list[float]] = {p: [] for p in parts}
    cpus: dict[int, list[float]] = {p: [] for p in parts}
    rows: dict[int, int] = {}
    load = os.getloadavg()[0]
    for _ in range(a.reps):
        for p in parts:
            listing.PARTS = p
            with open_store(parse_location(f"sqlite:///{os.path.abspath(a.store)}")) as st:
                t, c = time.perf_counter(), _cpu()
                rows[p] = sum(1 for _ in st.list_threads(limit=limit))
                walls[p].append(time.perf_counter() - t)
                cpus[p].append(_cpu() - c)
    print(f"{a.store}: list_threads(limit={limit}), {a.reps} rounds, load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    for p in parts:
        print(f"  {p} part{'s' if p > 1 else ' '}  wall {statistics.median(walls[p]):6.3f} s  cpu {statistics.median(cpus[p]):6.3f} s  ({rows[p]} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
