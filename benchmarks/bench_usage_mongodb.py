"""``store usage``'s reclaimable figures on MongoDB: aggregated by the server against one plan per
thread (how they were computed before), side by side on the same store, in one process.

    python -m benchmarks.bench_usage_mongodb [--threads 2000] [--runs 1]

The store: --threads tiny threads, each one turn of a real graph (MessagesState, one node) through
the real ``MongoDBSaver``. The server is ``SYMFONIC_BENCH_MONGO_URI`` (a real mongod) or a SecantusDB
daemon started here (benchmarks/bench_mongodb.py). Both sides must give the same figures; medians
of --runs interleaved runs, and the whole ``symfonic store usage -f json`` process once.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

from benchmarks.bench_mongodb import start_server  # noqa: E402


def write_threads(uri: str, db: str, threads: int) -> None:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.mongodb import MongoDBSaver
    from langgraph.graph import START, MessagesState, StateGraph
    from pymongo import MongoClient

    client = MongoClient(uri, retryWrites=False)
    if client[db]["symfonic_bench_complete"].count_documents({}) == 1:
        client.close()
        return  # written by an earlier run (the server keeps benchmarks/out/mongo)
    client.drop_database(db)
    b = StateGraph(MessagesState)
    b.add_node("noop", lambda state: {})
    b.add_edge(START, "noop")
    graph = b.compile(checkpointer=MongoDBSaver(client, db_name=db))
    for i in range(threads):
        graph.invoke({"messages": [HumanMessage(content=f"hello {i}")]}, {"configurable": {"thread_id": f"tiny:_:t-{i:05d}"}})
    client[db]["symfonic_bench_complete"].insert_one({"threads": threads})
    client.close()


def per_thread(st, keep: int) -> dict:
    """The former computation: every thread planned with the full rules."""
    out = {"keep": keep, "checkpoints": 0, "writes": 0, "blobs": 0, "bytes": 0, "threads": 0, "skipped_threads": 0}
    for key in st.thread_keys_with_prefix(""):
        plan = st.prune_plan(key, keep=keep)
        if plan.skipped:
            out["skipped_threads"] += 1
            continue
        out["checkpoints"] += plan.rows.get(st.checkpoints_name, 0)
        out["writes"] += plan.rows.get(st.writes_name, 0)
        out["bytes"] += plan.bytes
        out["threads"] += bool(plan.rows.get(st.checkpoints_name))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    uri, proc = start_server()
    db = f"bench_usage_{args.threads}"
    try:
        t0 = time.perf_counter()
        write_threads(uri, db, args.threads)
        print(f"store written in {time.perf_counter() - t0:.0f} s: {args.threads} threads", flush=True)
        from symfonic_cli.location import resolve_store
        from symfonic_cli.stores import open_store

        url = f"{uri}{db}"
        old, new = [], []
        with open_store(resolve_store(url), writable=False) as st:
            for _ in range(args.runs):
                t = time.perf_counter()
                a = per_thread(st, 1)
                old.append(time.perf_counter() - t)
                t = time.perf_counter()
                b = st._reclaimable(1)
                new.append(time.perf_counter() - t)
                assert a == b, (a, b)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "symfonic_cli", "store", "usage", "-s", url, "-f", "json"], check=True,
                       stdout=subprocess.DEVNULL)
        whole = time.perf_counter() - t
        mo, mn = statistics.median(old), statistics.median(new)
        print(f"reclaimable, one plan per thread (before): {mo:.2f} s")
        print(f"reclaimable, aggregated by the server (now): {mn:.2f} s  ({mo / mn:.1f}x faster)")
        print(f"symfonic store usage -f json, a whole process: {whole:.2f} s")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
