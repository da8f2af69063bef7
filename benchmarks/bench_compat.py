"""``symfonic compat report`` (store-wide) vs a raw SQL aggregate over the same metadata, on SQLite.

The store: a real agent graph writes a few threads through the real SqliteSaver wrapped in
symfonic_cli.demo.savers.EnvelopeSaver (legacy, migrated, unfinalized, a string-typed boolean).
Those rows are then REPLICATED WITH SQL (INSERT ... SELECT) until the store holds 200,000
checkpoints: each copy gets a new thread id and its metadata envelope rewritten with json_set /
json_remove so that the store holds a mix (legacy, migrated v1, newer v2, corrupt). Blobs are
copied as written by the graph, so the rows have realistic sizes. Cached under benchmarks/out/.

- baseline: ``SELECT writer_line, format_version, count(*) ... GROUP BY`` with json_extract over
  ``metadata``, on a plain read-only connection (and, second line, a hand-written aggregate over
  the same envelope fields the report groups on);
- report: ``symfonic compat report --format json`` in-process (store opening, the grouped query
  with per-thread latest and unfinalized ages, decoding of each group, rendering).
Medians of --runs runs, side by side; peak RSS of a subprocess running the report, on the
200,000-checkpoint store and on one a tenth of its size (memory must not grow with the store).

Run: ``python benchmarks/bench_compat.py [--checkpoints N] [--runs R]``.
"""

from __future__ import annotations

import argparse
import json
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

RAW_SQL = (
    "SELECT json_extract(metadata, '$.symfonic_envelope.writer_line') AS line,"
    " json_extract(metadata, '$.symfonic_envelope.format_version') AS version, count(*)"
    " FROM checkpoints GROUP BY line, version"
)
# The same information the report groups on, written by hand straight off the metadata.
RAW_SQL_FULL = (
    "SELECT json_type(metadata, '$.symfonic_envelope'),"
    + ", ".join(
        f"json_type(metadata, '$.symfonic_envelope.{f}'), json_extract(metadata, '$.symfonic_envelope.{f}')"
        for f in ("format_version", "writer_line", "safe_boundary", "finalized")
    )
    + ", json_type(metadata, '$.symfonic_envelope.boundary_sequence'), count(*)"
    " FROM checkpoints GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10"
)


def _seed(path: Path) -> None:
    from datetime import timedelta

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from symfonic_cli.demo.savers import NO_ENVELOPE, EnvelopeSaver, migrated
    from symfonic_cli.demo.graphs import agent_graph

    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = EnvelopeSaver(SqliteSaver(conn))
    graph = agent_graph().compile(checkpointer=saver)
    plan = [
        ("seed:_:legacy", NO_ENVELOPE, None),
        ("seed:_:migrated", migrated(finalized=True, safe_boundary=True, boundary_id="b-1", boundary_sequence=1), None),
        ("seed:_:crashed", migrated(finalized=False), timedelta(hours=-2)),
        ("seed:_:flags", migrated(safe_boundary="false"), None),
    ]
    for key, env, offset in plan:
        saver.envelope, saver.clock_offset = env, offset
        for turn in range(3):
            text = "tool:order 1042" if turn == 1 else f"question {turn}"
            graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": key}})
    conn.close()


def build(path: Path, target: int) -> None:
    if path.exists():
        return
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    _seed(tmp)
    conn = sqlite3.connect(str(tmp))
    seed_rows = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    copies = -(-(target - seed_rows) // seed_rows)
    # Copy k: a new thread id; envelope by k: every 10th legacy, every 97th newer, every 89th corrupt.
    conn.execute(
        """
        WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)
        INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
        SELECT 'copy-' || (n.k % 400) || ':_:' || c.thread_id || '-' || n.k, c.checkpoint_ns, c.checkpoint_id,
               c.parent_checkpoint_id, c.type, c.checkpoint,
               CASE
                 WHEN n.k % 10 = 0 THEN json_remove(c.metadata, '$.symfonic_envelope')
                 WHEN n.k % 97 = 0 AND json_type(c.metadata, '$.symfonic_envelope') = 'object'
                   THEN json_set(c.metadata, '$.symfonic_envelope.format_version', 2)
                 WHEN n.k % 89 = 0 THEN json_set(c.metadata, '$.symfonic_envelope', 'v1')
                 ELSE c.metadata
               END
        FROM checkpoints AS c, n
        WHERE c.thread_id LIKE 'seed:%'
        """,
        (copies,),
    )
    conn.execute(
        "DELETE FROM checkpoints WHERE rowid IN (SELECT rowid FROM checkpoints WHERE thread_id LIKE 'copy-%' "
        "ORDER BY rowid DESC LIMIT (SELECT count(*) - ? FROM checkpoints))",
        (target,),
    )
    conn.commit()
    conn.execute("PRAGMA journal_mode = DELETE")  # the saver set WAL; a plain file leaves no -wal/-shm
    conn.execute("VACUUM")
    conn.close()
    tmp.rename(path)


def _medians(fns: dict, runs: int) -> dict:
    # Interleaved, so that load from elsewhere on the machine hits every contender alike.
    times: dict = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def raw(path: Path, sql: str = RAW_SQL):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def report(path: Path) -> dict:
    from tests.support.cli import run

    r = run("compat", "report", "--store", str(path), "--format", "json", "--fail-on", "")
    assert r.code == 0, r.err
    return json.loads(r.out)


def peak_rss_mb(path: Path) -> float:
    code = (
        "import resource, sys; from symfonic_cli.cli.app import main\n"
        "try: main(['compat', 'report', '--store', sys.argv[1], '--format', 'json', '--fail-on', ''])\n"
        "except SystemExit: pass\n"
        "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return int(proc.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    from benchmarks import byte_compile

    byte_compile()
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoints", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    big = OUT / f"compat-{args.checkpoints}.db"
    small = OUT / f"compat-{args.checkpoints // 10}.db"
    t0 = time.perf_counter()
    build(big, args.checkpoints)
    build(small, args.checkpoints // 10)
    print(f"stores ready in {time.perf_counter() - t0:.1f}s: {big.name} ({big.stat().st_size / 1e6:.0f} MB)")

    data = report(big)
    assert data["checkpoints"] == args.checkpoints, data["checkpoints"]
    raw_total = sum(n for *_, n in raw(big))
    assert raw_total == data["checkpoints"]
    m = _medians({"raw": lambda: raw(big), "report": lambda: report(big), "full": lambda: raw(big, RAW_SQL_FULL)}, args.runs)
    t_raw, t_rep, t_full = m["raw"], m["report"], m["full"]
    rss_big, rss_small = peak_rss_mb(big), peak_rss_mb(small)
    print(f"{'':28}{'raw SQL aggregate':>20}{'compat report':>16}{'ratio':>8}")
    print(f"{'median of ' + str(args.runs) + ' (s)':28}{t_raw:>20.3f}{t_rep:>16.3f}{t_rep / t_raw:>8.2f}")
    print(f"{'raw, same fields as report':28}{t_full:>20.3f}{t_rep:>16.3f}{t_rep / t_full:>8.2f}")
    print(f"peak RSS of the report: {rss_small:.0f} MB at {args.checkpoints // 10:,} checkpoints, "
          f"{rss_big:.0f} MB at {args.checkpoints:,}")
    print("by writer line:", {f"{x['writer_line']} v{x['format_version']}": x["checkpoints"] for x in data["by_writer_line"]})
    print("findings:", data["findings"], "threads:", data["threads"])


if __name__ == "__main__":
    main()
