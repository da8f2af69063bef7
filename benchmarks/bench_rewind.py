"""``symfonic thread rewind`` on a long thread (benchmarks/stores.py's long-N: N user turns of the demo
agent, a tool call every 4 turns), side by side with LangGraph's own copy, at two history lengths.

Each run is a whole process (start-up included), on a private copy of the cached store:
- rewind: ``thread rewind --to TARGET --idle-for 0 --yes -f json`` (plan, one transaction, the
  check after it, the receipt);
- baseline: the same job as an application does it: ``graph.update_state(config_of_X, None,
  as_node="__copy__")`` with the demo agent's graph on ``SqliteSaver``.
Two targets: near the head (``-5``: the copied checkpoint holds the whole conversation) and early
(``--before-message 3``: the walk back over the head's branch); each rewind is undone (unmeasured)
before the next. Medians of ``--reps``; peak RSS is the process's own (``wait4``), so what grows with
the thread shows between the two lengths.

Run: ``python benchmarks/bench_rewind.py [--sizes 250,2000] [--reps 3]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks import stores  # noqa: E402

BASELINE = """
import sqlite3, sys
from langgraph.checkpoint.sqlite import SqliteSaver
from symfonic_cli.demo.graphs import agent_graph
path, key, back = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = sqlite3.connect(path, check_same_thread=False)
saver = SqliteSaver(conn)
ids = [r[0] for r in conn.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
                                  "ORDER BY checkpoint_id DESC LIMIT ?", (key, back))]
graph = agent_graph().compile(checkpointer=saver)
graph.update_state({"configurable": {"thread_id": key, "checkpoint_ns": "", "checkpoint_id": ids[-1]}}, None, as_node="__copy__")
"""


def _measured(argv: list[str], path: str | None = None) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one process; a rewind (``path``: its store) is then undone,
    unmeasured, so each run starts from the same conversation."""
    import json

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(argv)}: {err}")
    if path is not None:
        undo = json.loads(out)["threads"][0]["undo"].split()
        subprocess.run([sys.executable, "-m", "symfonic_cli", *undo[1:], "-s", path, "--idle-for", "0", "--yes"],
                       check=True, capture_output=True)
    return took, usage.ru_maxrss / 1024


def _row(name: str, runs: list[tuple[float, float]], base: list[tuple[float, float]] | None = None) -> str:
    t, rss = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    line = f"    {name:<34} {t:6.2f} s  peak RSS {rss:6.0f} MB"
    if base:
        bt, brss = statistics.median(r[0] for r in base), statistics.median(r[1] for r in base)
        line += f"   (x{t / bt:.2f} time, x{rss / brss:.2f} RSS of the baseline)"
    return line


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="250,2000")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    figures: dict[int, dict[str, float]] = {}
    for turns in (int(s) for s in args.sizes.split(",")):
        cached, key = stores.sqlite_store(f"long-{turns}"), stores.long_key(turns)
        with tempfile.TemporaryDirectory(dir=cached.parent) as scratch:
            path = str(Path(scratch) / "store.db")
            shutil.copyfile(cached, path)
            print(f"SQLite long-{turns} ({os.path.getsize(path) / 1e9:.2f} GB), medians of {args.reps}")
            base = [_measured([sys.executable, "-c", BASELINE, path, key, "5"]) for _ in range(args.reps)]
            print(_row("baseline: update_state __copy__", base))
            cli = [sys.executable, "-m", "symfonic_cli", "thread", "rewind", "-s", path, key, "--idle-for", "0", "--yes", "-f", "json"]
            near = [_measured([*cli, "--to", "-5"], path) for _ in range(args.reps)]
            print(_row("thread rewind --to -5", near, base))
            early = [_measured([*cli, "--before-message", "3"], path) for _ in range(args.reps)]
            print(_row("thread rewind --before-message 3", early))
            figures[turns] = {"near": statistics.median(r[1] for r in near), "early": statistics.median(r[1] for r in early),
                              "base": statistics.median(r[1] for r in base)}
    if len(figures) == 2:
        (a, fa), (b, fb) = sorted(figures.items())
        print(f"peak RSS at {b} turns / at {a} turns: rewind --to -5 x{fb['near'] / fa['near']:.2f}, "
              f"--before-message x{fb['early'] / fa['early']:.2f}, baseline x{fb['base'] / fa['base']:.2f}")


if __name__ == "__main__":
    main()
