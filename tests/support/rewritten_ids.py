"""Checkpoint ids as other writers make them, on stores the real savers wrote.

A thread is written by the real graph and saver first; then its ids are rewritten everywhere a
writer of that form would have put them: the checkpoint rows' ``checkpoint_id`` and
``parent_checkpoint_id``, the pending writes' ``checkpoint_id`` and the ``id`` inside the stored
checkpoint itself (PostgreSQL's JSONB, the serialized blob of SQLite and MongoDB). Forms:

- ``upper``: the UUIDv6 in upper case (a writer formatting its UUIDs with ``%X``);
- ``mixed``: the UUIDv6 with every other hex letter in upper case (ids no string order dates);
- ``iso``: the checkpoint's own ``ts`` (ISO 8601), as very old LangGraph named checkpoints;
- ``undatable``: ``step-0001``, ``step-0002``, ... in time order, and the ``ts`` left out;
- ``between``: lowercase UUIDv6 ids but one, an upper-case-lettered UUIDv6 (``BETWEEN_ID``) that
  sorts between the least and the greatest id as a string and is the latest by its time: only
  a reading by instant finds it.
"""

from __future__ import annotations

from typing import Callable

FORMS = ("upper", "mixed", "iso", "undatable", "between")
BETWEEN_ID = "1fF00000-0000-6000-8000-000000000000"  # 'F' sorts between '0' and 'a'; 0x1ff... is after 0x1fa...
BETWEEN_LAST = "1fa00000-0000-6000-8000-000000000000"  # the greatest id as a string


def _new_ids(rows: list[tuple[str, dict]], form: str) -> dict[str, str]:
    """old id -> new id for one thread's (id, checkpoint) rows."""
    if form == "upper":
        return {cid: cid.upper() for cid, _ in rows}
    if form == "mixed":
        return {cid: _mixed(cid) for cid, _ in rows}
    if form == "iso":
        return {cid: cp["ts"] for cid, cp in rows}
    if form == "between":
        old = sorted(cid for cid, _ in rows)
        new = [f"1f000000-0000-6000-8000-{i:012x}" for i in range(len(old) - 2)] + [BETWEEN_ID, BETWEEN_LAST]
        return dict(zip(old, new))
    assert form == "undatable", form
    return {cid: f"step-{i:04d}" for i, cid in enumerate(sorted(cid for cid, _ in rows), start=1)}


def _mixed(cid: str) -> str:
    letters = iter(range(len(cid)))
    return "".join(c.upper() if c.isalpha() and next(letters) % 2 == 0 else c for c in cid)


def _fixed(cp: dict, new_id: str, form: str) -> dict:
    cp = dict(cp, id=new_id)
    if form == "undatable":
        cp.pop("ts", None)
    return cp


def rewrite_ids(kind: str, url: str, key: str, form: str) -> dict[str, str]:
    """Rewrite every id of thread ``key`` into ``form``; returns the old -> new mapping."""
    return {"sqlite": _sqlite, "postgres": _postgres, "mongodb": _mongodb}[kind](url, key, form)


def _serde():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()


def _sqlite(url: str, key: str, form: str) -> dict[str, str]:
    import sqlite3

    serde = _serde()
    conn = sqlite3.connect(url)
    try:
        rows = conn.execute("SELECT checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints WHERE thread_id = ?", (key,)).fetchall()
        decoded = [(ns, cid, serde.loads_typed((t, blob))) for ns, cid, t, blob in rows]
        mapping = _new_ids([(cid, cp) for _, cid, cp in decoded], form)
        with conn:
            for ns, cid, cp in decoded:
                t, blob = serde.dumps_typed(_fixed(cp, mapping[cid], form))
                conn.execute(
                    "UPDATE checkpoints SET checkpoint_id = ?, type = ?, checkpoint = ? WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (mapping[cid], t, blob, key, ns, cid),
                )
            _each(mapping, lambda old, new: (
                conn.execute("UPDATE checkpoints SET parent_checkpoint_id = ? WHERE thread_id = ? AND parent_checkpoint_id = ?", (new, key, old)),
                conn.execute("UPDATE writes SET checkpoint_id = ? WHERE thread_id = ? AND checkpoint_id = ?", (new, key, old)),
            ))
    finally:
        conn.close()
    return mapping


def _postgres(url: str, key: str, form: str) -> dict[str, str]:
    import psycopg
    from psycopg.types.json import Jsonb

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = %s", (key,)).fetchall()
        mapping = _new_ids([(cid, cp) for _, cid, cp in rows], form)
        for ns, cid, cp in rows:
            conn.execute(
                "UPDATE checkpoints SET checkpoint_id = %s, checkpoint = %s WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s",
                (mapping[cid], Jsonb(_fixed(cp, mapping[cid], form)), key, ns, cid),
            )
        _each(mapping, lambda old, new: (
            conn.execute("UPDATE checkpoints SET parent_checkpoint_id = %s WHERE thread_id = %s AND parent_checkpoint_id = %s", (new, key, old)),
            conn.execute("UPDATE checkpoint_writes SET checkpoint_id = %s WHERE thread_id = %s AND checkpoint_id = %s", (new, key, old)),
        ))
    return mapping


def _mongodb(url: str, key: str, form: str) -> dict[str, str]:
    import pymongo

    serde = _serde()
    client = pymongo.MongoClient(url)
    try:
        db = client.get_default_database()
        docs = list(db.checkpoints.find({"thread_id": key}))
        decoded = [(d, serde.loads_typed((d["type"], d["checkpoint"]))) for d in docs]
        mapping = _new_ids([(d["checkpoint_id"], cp) for d, cp in decoded], form)
        for d, cp in decoded:
            t, blob = serde.dumps_typed(_fixed(cp, mapping[d["checkpoint_id"]], form))
            db.checkpoints.update_one({"_id": d["_id"]}, {"$set": {"checkpoint_id": mapping[d["checkpoint_id"]], "type": t, "checkpoint": blob}})
        _each(mapping, lambda old, new: (
            db.checkpoints.update_many({"thread_id": key, "parent_checkpoint_id": old}, {"$set": {"parent_checkpoint_id": new}}),
            db.checkpoint_writes.update_many({"thread_id": key, "checkpoint_id": old}, {"$set": {"checkpoint_id": new}}),
        ))
    finally:
        client.close()
    return mapping


def _each(mapping: dict[str, str], fn: Callable[[str, str], object]) -> None:
    for old, new in mapping.items():
        fn(old, new)
