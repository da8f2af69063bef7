"""``transcript show --resume-window``, ``--retained`` and ``thread export`` (with its retained
file) on the cached long threads (benchmarks/stores.py), side by side with the raw work they
are bound by: ``transcript show`` (one latest checkpoint) for the resume window, and a raw read of
every stored byte of the thread (benchmarks/raw_queries.py ``bytes``) for ``--retained`` and the
export, which read each checkpoint of the thread once. Medians of ``--reps`` runs, wall time and
peak RSS, each command a whole process.

Run: ``python benchmarks/bench_memory.py [--sizes 250,2000] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import stores  # noqa: E402
from benchmarks.run import PY, side_by_side, symfonic  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="250,2000")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    for turns in (int(s) for s in args.sizes.split(",")):
        url, key = str(stores.sqlite_store(f"long-{turns}")), stores.long_key(turns)
        size = Path(url).stat().st_size
        out = Path(tempfile.mkdtemp(prefix="bench-memory-"))
        try:
            cmds = {
                "transcript show": symfonic("transcript", "show", "-s", url, "-t", key, "-f", "json"),
                "--resume-window": symfonic("transcript", "show", "-s", url, "-t", key, "--resume-window", "-f", "json"),
                "raw bytes": [PY, "-m", "benchmarks.raw_queries", "bytes", url, key],
                "--retained": symfonic("transcript", "show", "-s", url, "-t", key, "--retained", "-f", "json"),
                "export": symfonic("thread", "export", "-s", url, "-t", key, "-o", str(out / "b"), "--force"),
            }
            results = dict(zip(cmds, side_by_side(list(cmds.values()), args.reps)))
        finally:
            shutil.rmtree(out, ignore_errors=True)
        print(f"SQLite long-{turns} ({size / 1e6:.0f} MB), medians of {args.reps}:")
        for name, m in results.items():
            print(f"    {name:16} {m.median:7.2f} s   peak RSS {m.rss_mb:6.0f} MB")
        tx, raw = results["transcript show"].median, results["raw bytes"].median
        print(f"    --resume-window / transcript show: {results['--resume-window'].median / tx:.2f}x")
        print(f"    --retained / raw bytes: {results['--retained'].median / raw:.2f}x; export / raw bytes: {results['export'].median / raw:.2f}x")


if __name__ == "__main__":
    main()
