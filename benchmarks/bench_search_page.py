"""A page of ``threads search`` (the MCP tool's, ``--limit``) beside the same page at another commit
and the whole search, in one process, runs alternated (this machine is shared: side by side or not at all).

    python -m benchmarks.bench_search_page STORE PHRASE [--limit 21] [--reps 3] [--before 77f888b]

Prints the medians (seconds) and checks the two pages are the same hits in the same order.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("phrase")
    ap.add_argument("--limit", type=int, default=21)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--before", default="77f888b", help="the commit whose search/run.py is the baseline")
    args = ap.parse_args()
    import symfonic_cli
    from symfonic_cli.search import run as now

    source = subprocess.run(["git", "show", f"{args.before}:symfonic_cli/search/run.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "search_run_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("search_run_before", path)
    assert spec is not None and spec.loader is not None
    before = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = before  # dataclasses look their module up
    spec.loader.exec_module(before)
    times: dict[str, list[float]] = {"before": [], "now": [], "whole": []}
    for _ in range(args.reps):
        pages = {}
        runs: list[tuple[str, Callable[..., Iterable[Any]], int | None]] = [
            ("before", before.search, args.limit), ("now", now.search, args.limit), ("whole", now.search, None)]
        for name, search, limit in runs:
            store = symfonic_cli.open_store(args.store)._store
            t = time.perf_counter()
            pages[name] = [h.to_json() for h in search(store, args.phrase, limit=limit)]
            times[name].append(time.perf_counter() - t)
            store.close()
        if pages["before"] != pages["now"]:
            raise SystemExit("the pages differ")
    print({name: round(statistics.median(v), 2) for name, v in times.items()}, f"{len(pages['now'])} hits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
