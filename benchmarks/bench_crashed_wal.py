"""What reading a crashed WAL store through a private copy costs (issue #13).

A real graph writes the scenario threads through SqliteSaver; their checkpoints are replicated
with ``INSERT ... SELECT`` under new thread ids until the file reaches ``--size-mb``; an
application process then writes one more thread (it stays in the ``-wal``: autocheckpoint off)
and is killed with SIGKILL. ``threads list`` and ``store info`` run as whole processes on the
crashed store (read through a private copy) and, for comparison, with the application alive
(read in place), medians of ``--reps`` runs. The files' hashes are checked unchanged.

    python benchmarks/bench_crashed_wal.py --size-mb 1024
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = """
import sqlite3, sys, time
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from symfonic_cli.demo.graphs import agent_graph
conn = sqlite3.connect(sys.argv[1], check_same_thread=False)
conn.execute("PRAGMA wal_autocheckpoint = 0")
graph = agent_graph().compile(checkpointer=SqliteSaver(conn))
graph.invoke({"messages": [HumanMessage(content="after the bulk", id="late-1")]}, {"configurable": {"thread_id": "late:_:s-1"}})
print("ready", flush=True)
time.sleep(3600)
"""


def build(path: str, size_mb: int) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    sys.path.insert(0, ROOT)
    from tests.support.scenarios import write_scenarios

    conn = sqlite3.connect(path, check_same_thread=False)
    write_scenarios(SqliteSaver(conn))
    conn.commit()
    n = 0
    while os.path.getsize(path) < size_mb * 1024 * 1024:
        n += 1
        conn.execute(
            "INSERT INTO checkpoints SELECT ? || thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints WHERE thread_id NOT LIKE 'copy%'", (f"copy{n}-",),
        )
        conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def run(args: list[str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "symfonic_cli", *args], capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - t
    assert proc.returncode == 0, proc.stderr
    return elapsed


def hashes(path: str) -> list[str]:
    out = []
    for suffix in ("", "-wal", "-shm"):
        h = hashlib.sha256()
        with open(path + suffix, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        out.append(h.hexdigest())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=3)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.db")
        build(path, opts.size_mb)
        app = subprocess.Popen([sys.executable, "-c", APP, path], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert app.stdout.readline().strip() == "ready"
        commands = [["threads", "list", "--store", path, "--limit", "5"], ["store", "info", "--store", path]]
        live = {c[0]: statistics.median(run(c) for _ in range(opts.reps)) for c in commands}
        app.send_signal(signal.SIGKILL)
        app.wait()
        before = hashes(path)
        crashed = {c[0]: statistics.median(run(c) for _ in range(opts.reps)) for c in commands}
        assert hashes(path) == before, "a file changed"
        print(f"database {os.path.getsize(path) / 2**20:.0f} MB, -wal {os.path.getsize(path + '-wal') / 2**10:.0f} KB, "
              f"-shm {os.path.getsize(path + '-shm') / 2**10:.0f} KB; medians of {opts.reps} whole processes")
        for name in live:
            print(f"{name:8} live (read in place) {live[name]:.2f} s   crashed (private copy) {crashed[name]:.2f} s")
        print("files unchanged after every crashed-store run: yes")


if __name__ == "__main__":
    main()
