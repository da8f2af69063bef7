"""The reference algorithm, as symfonic-core's ``_checkpoint_ts_by_message_id`` runs it.

Walk every checkpoint of the thread through the real saver's ``list`` (newest to oldest, every
namespace), decode each one fully, and keep the oldest ``ts`` per message id. Quadratic on a long
thread; the benchmark's baseline and the tests' oracle. Run as a script it prints the rows of
``transcript show --format json`` (``python -m benchmarks.reference_walk STORE KEY``).
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from datetime import datetime


def reference_ts_map(saver, key: str) -> dict[str, datetime]:
    ts_map: dict[str, datetime] = {}
    for ct in saver.list({"configurable": {"thread_id": key}}):
        checkpoint = ct.checkpoint or {}
        raw = checkpoint.get("ts")
        if not raw:
            continue
        try:
            ts = datetime.fromisoformat(raw)
        except (ValueError, TypeError):
            continue
        for message in checkpoint.get("channel_values", {}).get("messages", []):
            mid = getattr(message, "id", None)
            if mid:
                ts_map[mid] = ts  # newest to oldest: the oldest holding the id wins
    return ts_map


def reference_rows(saver, key: str, *, checkpoint_id: str | None = None, latest_only: bool = False) -> list[dict]:
    """Rows of the root namespace's latest checkpoint (or ``checkpoint_id``) as JSON objects.

    ``latest_only`` skips the walk (timestamps null): the "decode the latest checkpoint" bound.
    """
    from symfonic_cli.transcript import rows as tx

    conf = {"thread_id": key, "checkpoint_ns": ""}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    latest = saver.get_tuple({"configurable": conf})
    messages = latest.checkpoint.get("channel_values", {}).get("messages", []) if latest else []
    ts_map = {} if latest_only else reference_ts_map(saver, key)
    return [r.to_json() for r in tx.build_rows(messages, ts_by_id=ts_map)]


@contextmanager
def saver_for(url: str):
    """The real saver of a store URL (a plain path or sqlite:/// for SQLite, postgresql://)."""
    if url.startswith(("postgresql://", "postgres://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(url) as saver:
            yield saver
        return
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with saver_for(args[0]) as s:
        rows = reference_rows(s, args[1], latest_only="--latest-only" in sys.argv)
    json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
