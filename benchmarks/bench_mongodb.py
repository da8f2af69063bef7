"""``threads list`` on MongoDB (2,000 threads x 10 turns) against the raw ``$group`` through pymongo.

    python -m benchmarks.bench_mongodb [--reps N]

Both sides are whole processes (start-up included), as a support engineer runs them; peak memory
is each process's max RSS. The server is ``SYMFONIC_BENCH_MONGO_URI`` (a real mongod) or a
SecantusDB daemon (``secantusd-py``) started here in its own process, data under benchmarks/out/.

The store is the cached SQLite "many" store (real graphs, benchmarks/stores.py) turned into the
documents ``MongoDBSaver.put``/``put_writes`` write (same serialized bytes; metadata key by key
through the saver's own ``dumps_metadata``), inserted in bulk: putting 80,000 checkpoints one by
one through a Python wire server would take most of an hour and change nothing that is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time

from benchmarks import stores
from benchmarks.run import PY, Measure, Report, measure, symfonic

DB = "bench_many"
SMALL_DB = "bench_small"
DONE = "symfonic_bench_complete"
RAW_PIPELINE = [
    {"$group": {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}},
    {"$sort": {"last": -1, "_id": 1}},
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server():
    uri = os.environ.get("SYMFONIC_BENCH_MONGO_URI")
    if uri:
        return uri.rstrip("/") + "/", None
    port = _free_port()
    data = stores.OUT / "mongo"
    data.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(PY), "secantusd-py"), "--host", "127.0.0.1", "--port", str(port), "--storage-path", str(data)],
        stdout=subprocess.DEVNULL, stderr=open(stores.OUT / "mongo.log", "ab"),
    )
    from pymongo import MongoClient

    uri = f"mongodb://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while True:
        try:
            MongoClient(uri, serverSelectionTimeoutMS=1000).admin.command("ping")
            return uri, proc
        except Exception:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit("secantusd-py did not start (see benchmarks/out/mongo.log)") from None
            time.sleep(0.3)


def load(uri: str, db_name: str, threads: int | None = None) -> None:
    """The SQLite "many" store as MongoDBSaver documents (skipped when already loaded)."""
    from langgraph.checkpoint.mongodb.utils import dumps_metadata
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from pymongo import MongoClient

    client = MongoClient(uri)
    db = client[db_name]
    if DONE in db.list_collection_names():
        return
    client.drop_database(db_name)
    serde = JsonPlusSerializer()
    db.checkpoints.create_index([("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1)], unique=True)
    db.checkpoint_writes.create_index(
        [("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1), ("task_id", 1), ("idx", 1)], unique=True
    )
    src = sqlite3.connect(str(stores.sqlite_store("many")))
    keys = None
    if threads is not None:
        keys = [r[0] for r in src.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id LIMIT ?", (threads,))]
    where = f"WHERE thread_id IN ({','.join('?' * len(keys))})" if keys else ""
    print(f"[bench_mongodb] loading {db_name} ...", file=sys.stderr, flush=True)
    batch = []
    for tid, ns, cid, parent, type_, blob, meta in src.execute(
        f"SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints {where}", keys or []
    ):
        batch.append({
            "thread_id": tid, "checkpoint_ns": ns, "checkpoint_id": cid, "parent_checkpoint_id": parent,
            "type": type_, "checkpoint": bytes(blob), "metadata": dumps_metadata(serde, json.loads(meta)),
        })
        if len(batch) >= 2000:
            db.checkpoints.insert_many(batch, ordered=False)
            batch = []
    if batch:
        db.checkpoints.insert_many(batch, ordered=False)
    batch = []
    for row in src.execute(
        f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value FROM writes {where}", keys or []
    ):
        tid, ns, cid, task_id, task_path, idx, channel, type_, value = row
        batch.append({
            "thread_id": tid, "checkpoint_ns": ns, "checkpoint_id": cid, "task_id": task_id, "task_path": task_path,
            "idx": idx, "channel": channel, "type": type_, "value": bytes(value),
        })
        if len(batch) >= 5000:
            db.checkpoint_writes.insert_many(batch, ordered=False)
            batch = []
    if batch:
        db.checkpoint_writes.insert_many(batch, ordered=False)
    db.create_collection(DONE)
    client.close()


def raw(url: str) -> None:
    """The bound: the same aggregation through pymongo, rows printed as JSON lines."""
    from pymongo import MongoClient

    base, _, db = url.rstrip("/").rpartition("/")
    client = MongoClient(base + "/")
    for d in client[db].checkpoints.aggregate(RAW_PIPELINE):
        sys.stdout.write(json.dumps([d["_id"], d["n"], d["first"], d["last"]]) + "\n")


def main() -> int:
    from benchmarks import byte_compile

    byte_compile()
    if len(sys.argv) > 2 and sys.argv[1] == "raw":
        raw(sys.argv[2])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    uri, proc = start_server()
    try:
        load(uri, DB)
        load(uri, SMALL_DB, threads=100)
        rep = Report()
        rep.header()
        results = {}
        for db, label in ((DB, "many"), (SMALL_DB, "100 thr")):
            url = uri + db
            ours_cmd = symfonic("threads", "list", "--store", url, "--format", "jsonl")
            raw_cmd = [PY, "-m", "benchmarks.bench_mongodb", "raw", url]
            measure(raw_cmd, 1)  # warm the server's cache, then alternate: a busy machine hits both alike
            ours, bound = Measure(), Measure()
            for _ in range(args.reps):
                for total, cmd in ((ours, ours_cmd), (bound, raw_cmd)):
                    m = measure(cmd, 1)
                    total.seconds += m.seconds
                    total.cpu += m.cpu
                    total.rss_mb = max(total.rss_mb, m.rss_mb)
                    total.out = m.out
            n = len(ours.out.splitlines())
            assert n == len(bound.out.splitlines()), "threads list and the raw $group disagree"
            rep.row("mongodb", label, f"threads list ({n} threads)", ours, f"ours/raw {ours.median / bound.median:.2f}")
            rep.row("mongodb", label, "bound: raw $group through pymongo", bound)
            results[label] = (ours, bound)
        ours, bound = results["many"]
        rep.target("threads list within 2x of the raw $group (2,000 threads x 10 turns)", ours.median <= 2 * bound.median,
                   f"{ours.median:.3f} s vs {bound.median:.3f} s ({ours.median / bound.median:.2f}x)")
        small = results["100 thr"][0]
        rep.target("memory does not grow with the store", ours.rss_mb <= small.rss_mb * 1.25 + 5,
                   f"{ours.rss_mb:.0f} MB for 2,000 threads vs {small.rss_mb:.0f} MB for 100")
        return rep.finish()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    raise SystemExit(main())
