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

Commands run in-process (tests/support/cli.py), after one warm-up call; medians of ``--reps`` (default 3).
Run: ``python benchmarks/bench_retention.py [--copies N] [--sweep N] [--reps N]``.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--sweep", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip", default="", help="comma list of select,sweep,export to skip")
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


if __name__ == "__main__":
    main()
