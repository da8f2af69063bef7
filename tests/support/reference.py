"""The references the suite and the benchmarks compare against.

``reference_transcript``: symfonic-core's own ``get_transcript``, run over a real async saver.
``SymfonicAgent.get_transcript`` is called unbound on a minimal host object that carries exactly
the attributes it reads (the checkpointer and the two helper methods), so the code under
comparison is symfonic-core's own, unmodified.

``reference_ts_map`` / ``reference_rows``: the algorithm as symfonic-core's
``_checkpoint_ts_by_message_id`` runs it. Walk every checkpoint of the thread through the real
saver's ``list`` (newest to oldest, every namespace), decode each one fully, and keep the oldest
``ts`` per message id. Quadratic on a long thread; the benchmark's baseline and the tests' oracle.
Run as a script it prints the rows of ``transcript show --format json``
(``python -m tests.support.reference STORE KEY``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from types import SimpleNamespace


def reference_transcript(db_path, tenant, sub_tenant, session, **kwargs) -> list[dict]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from symfonic.agent.engine import SymfonicAgent

    async def go():
        async with AsyncSqliteSaver.from_conn_string(str(db_path)) as saver:
            host = SimpleNamespace(_checkpointer=saver)

            async def ready():
                return None

            host._ensure_checkpointer_ready = ready
            host._thread_id_for = SymfonicAgent._thread_id_for
            host._checkpoint_ts_by_message_id = lambda config: SymfonicAgent._checkpoint_ts_by_message_id(host, config)
            scope = SimpleNamespace(tenant_id=tenant, sub_tenant_id=sub_tenant)
            rows = await SymfonicAgent.get_transcript(host, scope, session, **kwargs)
            return [
                {
                    "index": r.index,
                    "role": r.role,
                    "content": r.content,
                    "message_id": r.message_id,
                    "timestamp": r.timestamp.isoformat() if r.timestamp else None,
                }
                for r in rows
            ]

    return asyncio.run(go())


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
    rows = tx.build_rows(messages)
    return [replace(r, timestamp=ts_map.get(r.message_id) if r.message_id else None).to_json() for r in rows]


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
