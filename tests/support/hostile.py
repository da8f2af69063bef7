"""Hostile stores: real stores written by real graphs, then damaged or crafted row by row.

A base store holds a few threads written by the real agent graph through the real saver of each
kind (tests/support/backends.py), migrated envelopes merged in by tests/support/envelope_saver.py. The functions
here then overwrite ONE stored value of the thread ``TARGET``'s latest root checkpoint the way an
operator's hand edit, a crash or an attacker would: raw metadata text (SQLite), a metadata value
(PostgreSQL JSONB, MongoDB documents), the checkpoint blob, or a document's key fields.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from tests.support.envelope_saver import NO_ENVELOPE, EnvelopeSaver, migrated

TARGET = "hostile:_:target"
THREADS = {
    "hostile:_:legacy": [NO_ENVELOPE],
    TARGET: [migrated(finalized=True), migrated(finalized=True)],
    "hostile:_:other": [migrated(finalized=True)],
}
ENVELOPE_KEY = "symfonic_envelope"


def write_base(backend) -> str:
    """A new store of ``backend``'s kind holding THREADS, written by the real graph and saver."""
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    url = backend.new_store(scenarios=False)
    with backend.saver(url) as inner:
        saver = EnvelopeSaver(inner)
        graph = agent_graph().compile(checkpointer=saver)
        for thread, envelopes in THREADS.items():
            cfg = {"configurable": {"thread_id": thread}}
            for i, env in enumerate(envelopes):
                saver.envelope = env
                graph.invoke({"messages": [HumanMessage(content=f"turn {i} of {thread}", id=f"{thread}-u{i}")]}, cfg)
    return url


# -- the stored bytes of a store, to prove an inspecting command changed nothing


def fingerprint(kind: str, url: str) -> Any:
    if kind == "sqlite":
        import os

        out = {}
        for suffix in ("", "-wal", "-shm", "-journal"):
            path = url + suffix
            if os.path.exists(path):
                with open(path, "rb") as fh:
                    out[suffix] = hashlib.sha256(fh.read()).hexdigest()
        return out
    if kind == "postgres":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            out = {}
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"):
                row = conn.execute(f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')), count(*) FROM {table} AS t").fetchone()
                out[table] = tuple(row)
            return out
    import bson
    import pymongo

    client = pymongo.MongoClient(url)
    try:
        db = client.get_default_database()
        out = {}
        for name in sorted(db.list_collection_names()):
            docs = sorted(bson.encode(d) for d in db[name].find({}))
            out[name] = hashlib.sha256(b"".join(docs)).hexdigest()
            out[name + ".indexes"] = sorted(str(sorted(i.items())) for i in db[name].list_indexes())
        return out
    finally:
        client.close()


# -- SQLite


def sqlite_latest(path: str, thread: str = TARGET) -> tuple[str, str]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
    finally:
        conn.close()


def sqlite_set(path: str, column: str, value: Any, *, thread: str = TARGET, where_id: str | None = None) -> str:
    """Overwrite one column of the thread's latest root checkpoint (or ``where_id``); its id."""
    assert column in ("metadata", "checkpoint", "type", "parent_checkpoint_id")
    ns, cid = sqlite_latest(path, thread) if where_id is None else ("", where_id)
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"UPDATE checkpoints SET {column} = ? WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?", (value, thread, ns, cid))
        conn.commit()
    finally:
        conn.close()
    return cid


def sqlite_metadata(path: str, thread: str = TARGET) -> bytes:
    ns, cid = sqlite_latest(path, thread)
    conn = sqlite3.connect(path)
    try:
        return bytes(conn.execute("SELECT metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", (thread, cid)).fetchone()[0])
    finally:
        conn.close()


def metadata_with_envelope_text(path: str, envelope_json: str, *, thread: str = TARGET) -> bytes:
    """The latest checkpoint's real metadata text with its envelope value replaced by raw JSON text
    (which may hold duplicate keys, NaN, huge numbers, escapes: anything Python's json reads)."""
    meta = json.loads(sqlite_metadata(path, thread))
    meta[ENVELOPE_KEY] = "@@ENV@@"
    return json.dumps(meta, ensure_ascii=False).replace('"@@ENV@@"', envelope_json).encode("utf-8", "surrogatepass")


# -- crafted values for checkpoint blobs


def message_ext(cls_name: str, **fields: Any):
    """A msgpack ext of a langchain message as the serializer writes it, with ``fields`` forced
    into its stored field mapping (types the class would refuse included)."""
    import ormsgpack
    from langchain_core import messages as lc

    real = getattr(lc, cls_name)(content="x", id="m-1")
    dumped = real.model_dump()
    dumped.update(fields)
    payload = ormsgpack.packb((real.__class__.__module__, cls_name, dumped, "model_validate_json"))
    return ormsgpack.Ext(5, payload)  # EXT_PYDANTIC_V2


def checkpoint_blob_with_messages(saver_serde, original: tuple[str, bytes], messages: list[Any]) -> tuple[str, bytes]:
    """The stored checkpoint re-encoded with its ``messages`` channel replaced by ``messages``
    (each an object or a raw msgpack ext)."""
    import ormsgpack

    type_, blob = original
    assert type_ == "msgpack"
    raw = ormsgpack.unpackb(blob, ext_hook=lambda code, data: ormsgpack.Ext(code, data), option=ormsgpack.OPT_NON_STR_KEYS)
    raw["channel_values"]["messages"] = messages
    return "msgpack", ormsgpack.packb(raw, option=ormsgpack.OPT_NON_STR_KEYS)


def nested_blocks(depth: int) -> Any:
    node: Any = {"type": "text", "text": "deep"}
    for _ in range(depth):
        node = {"type": "group", "content": [node]}
    return [node]


# -- copies of a base store, and one crafted value in each kind


def clone(backend, base: str) -> str:
    """A private copy of the store at ``base`` (same bytes, rows or documents)."""
    import shutil
    import uuid

    if backend.kind == "sqlite":
        path = str(backend.root / f"h-{uuid.uuid4().hex[:12]}.db")
        shutil.copyfile(base, path)
        return path
    if backend.kind == "postgres":
        name = f"symfonic_h_{uuid.uuid4().hex[:12]}"
        backend._create(name, backend.db_of(base))
        return backend.url(name)
    from tests.support.mongo_server import database_of

    db = backend.new_database()
    backend._copy(database_of(base), db)
    return backend.url(db)


def latest_id(backend, url: str, thread: str = TARGET) -> str:
    with backend.saver(url) as saver:
        return saver.get_tuple({"configurable": {"thread_id": thread}}).config["configurable"]["checkpoint_id"]


def pg_execute(backend, url: str, sql: str, params: tuple = ()) -> None:
    with backend.admin(backend.db_of(url)) as conn:
        conn.execute(sql, params)


def pg_set_envelope_text(backend, url: str, envelope_json: str, *, thread: str = TARGET) -> str:
    """The latest checkpoint's JSONB metadata with its envelope replaced by ``envelope_json``
    (parsed by PostgreSQL: duplicate keys keep the last, as in jsonb)."""
    cid = latest_id(backend, url, thread)
    pg_execute(
        backend, url,
        "UPDATE checkpoints SET metadata = jsonb_set(metadata, '{symfonic_envelope}', %s::jsonb) "
        "WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s",
        (envelope_json, thread, cid),
    )
    return cid


def pg_set_messages_blob(backend, url: str, type_: str, blob: bytes, *, thread: str = TARGET) -> None:
    """Overwrite the ``messages`` channel blob the latest checkpoint points at."""
    cid = latest_id(backend, url, thread)
    pg_execute(
        backend, url,
        "UPDATE checkpoint_blobs AS b SET type = %s, blob = %s FROM checkpoints AS c "
        "WHERE c.thread_id = %s AND c.checkpoint_ns = '' AND c.checkpoint_id = %s AND b.thread_id = c.thread_id "
        "AND b.checkpoint_ns = '' AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'",
        (type_, blob, thread, cid),
    )


def mongo_collection(backend, url: str, name: str = "checkpoints"):
    from tests.support.mongo_server import database_of

    return backend.client[database_of(url)][name]


def mongo_update(backend, url: str, update: dict, *, thread: str = TARGET) -> str:
    cid = latest_id(backend, url, thread)
    mongo_collection(backend, url).update_one({"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cid}, update)
    return cid


def typed(value: Any) -> list:
    """A metadata value as MongoDBSaver stores it: the serializer's [type, bytes] pair."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    t, b = JsonPlusSerializer().dumps_typed(value)
    return [t, b]


def messages_blob(messages: list[Any]) -> bytes:
    import ormsgpack

    return ormsgpack.packb(messages, option=ormsgpack.OPT_NON_STR_KEYS)
