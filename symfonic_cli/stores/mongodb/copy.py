"""MongoDB stores: migrate: export and import of whole threads."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from symfonic_cli.errors import StoreError
from symfonic_cli.stores.mongodb._common import (
    MongoSection,
    _driver_errors,
    _field,
    _key_is,
    _key_field,
    _loads_metadata,
    _short,
    _string_literal,
)

if TYPE_CHECKING:
    from pymongo.client_session import ClientSession


class MongoCopy(MongoSection):
    """Migrate: export and import of whole threads."""

    # -- migrate (see the "migrate" section of stores/protocol.py)

    _CHECKPOINT_KEY = ("checkpoint_ns", "checkpoint_id")
    _WRITE_KEY = ("checkpoint_ns", "checkpoint_id", "task_id", "idx")

    @_driver_errors
    def export_thread(self, key: str):
        from symfonic_cli.model.copy import RawRow, ThreadExport

        key = _string_literal(key, "thread key")
        rows = []
        for table, coll, key_fields, sort in (
            ("checkpoints", self.checkpoints, self._CHECKPOINT_KEY, [("checkpoint_id", 1), ("checkpoint_ns", 1)]),
            ("writes", self.writes, self._WRITE_KEY, [("checkpoint_ns", 1), ("checkpoint_id", 1), ("task_id", 1), ("idx", 1)]),
        ):
            for doc in coll.find(_key_is(key), collation=self._collation(coll)).sort(sort):
                data = {k: _bson_value(v) for k, v in doc.items() if k not in ("_id", "thread_id", "created_at", *key_fields)}
                rows.append(RawRow(table, _stored_key(doc, key_fields, f"a {table[:-1]} document of thread '{key}'"), data))
        return ThreadExport("mongodb", key, rows)

    @_driver_errors
    def import_rows(self, key: str, rows) -> None:
        from symfonic_cli.model.copy import MigrationConflict

        key = _string_literal(key, "thread key")
        if any(r.table not in ("checkpoints", "writes") or not isinstance(r.data, dict) for r in rows):
            raise StoreError("rows from a store of another kind cannot be imported as MongoDB documents")
        ttl = self._ttl_stamp()
        docs: dict[str, list[dict[str, Any]]] = {"checkpoints": [], "writes": []}
        for r in rows:
            fields = self._CHECKPOINT_KEY if r.table == "checkpoints" else self._WRITE_KEY
            docs[r.table].append({"thread_id": key, **dict(zip(fields, r.key)), **r.data, **ttl})

        def work(session: ClientSession) -> None:
            for table in ("writes", "checkpoints"):  # checkpoints last: never a complete-looking partial thread
                coll = self.writes if table == "writes" else self.checkpoints
                fields = self._CHECKPOINT_KEY if table == "checkpoints" else self._WRITE_KEY
                for d in docs[table]:
                    if coll.find_one({"thread_id": key, **{f: d[f] for f in fields}}, {"_id": 1}, session=session, collation=self._collation(coll)):
                        raise MigrationConflict(f"{table[:-1]} {d['checkpoint_id']} of thread '{key}' already exists in the target")
                if docs[table]:
                    coll.insert_many(docs[table], ordered=True, session=session)

        self._in_transaction(work)

    @_driver_errors
    def decoded_thread(self, key: str):
        from symfonic_cli.codec.reuse import ThreadDecoder
        from symfonic_cli.codec.strict import collect_blocked
        from symfonic_cli.model.copy import (
            DecodedCheckpoint,
            DecodedThread,
            DecodedWrite,
        )

        loads = ThreadDecoder().loads  # as SQLite and PostgreSQL: each stored message decoded once
        thread = DecodedThread(key, [], [])
        key = _string_literal(key, "thread key")
        found = self.checkpoints.find(_key_is(key), {"_id": 0}, collation=self._collation(self.checkpoints))
        for doc in found.sort([("checkpoint_id", 1), ("checkpoint_ns", 1)]):
            ns, cid = _stored_key(doc, self._CHECKPOINT_KEY, f"a checkpoint document of thread '{key}'")
            what = f"checkpoint {cid} (ns '{ns}')"
            with collect_blocked() as blocked:
                checkpoint = loads(_field(doc, "type", str, cid), _field(doc, "checkpoint", bytes, cid), what=what)
                metadata = _loads_metadata(doc.get("metadata"), cid)
            if blocked:
                thread.blocked[what] = sorted(blocked)
            if not isinstance(checkpoint, dict):
                raise StoreError(f"{what} does not decode to a checkpoint mapping")
            thread.checkpoints.append(DecodedCheckpoint(ns, cid, doc.get("parent_checkpoint_id") or None, checkpoint, metadata if isinstance(metadata, dict) else {}))
        sort = [("checkpoint_ns", 1), ("checkpoint_id", 1), ("task_path", 1), ("task_id", 1), ("idx", 1)]
        for doc in self.writes.find(_key_is(key), {"_id": 0}, collation=self._collation(self.writes)).sort(sort):
            ns, cid, task_id, idx = _stored_key(doc, self._WRITE_KEY, f"a write document of thread '{key}'")
            channel = doc.get("channel")
            what = f"write {cid}/{task_id}/{idx} channel '{channel}'"
            value = doc.get("value")
            with collect_blocked() as blocked:
                decoded = loads(doc.get("type"), bytes(value) if isinstance(value, (bytes, bytearray)) else None, what=what)
            if blocked:
                thread.blocked[what] = sorted(blocked)
            thread.writes.append(DecodedWrite(ns, cid, task_id, doc.get("task_path", "") or "", idx, channel, decoded))
        return thread

    @_driver_errors
    def import_decoded(self, key: str, checkpoints, writes, new_versions) -> None:
        from symfonic_cli.model.copy import MigrationConflict, saver_config, write_batches

        key = _string_literal(key, "thread key")
        batches = write_batches(writes)

        def work(session: ClientSession) -> None:
            exact = self._collation(self.checkpoints)
            for cp in checkpoints:
                if self.checkpoints.find_one({"thread_id": key, "checkpoint_ns": cp.checkpoint_ns, "checkpoint_id": cp.checkpoint_id}, {"_id": 1}, session=session, collation=exact):
                    raise MigrationConflict(f"checkpoint {cp.checkpoint_id} appeared in the target")
            for w in writes:
                if self.writes.find_one({"thread_id": key, **dict(zip(self._WRITE_KEY, w.key))}, {"_id": 1}, session=session, collation=self._collation(self.writes)):
                    raise MigrationConflict(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} appeared in the target")
            saver = self._saver(session)
            for ns, cid, task_id, task_path, batch in batches:  # writes first, checkpoints after
                saver.put_writes(saver_config(key, ns, cid), batch, task_id, task_path)
            for cp, versions in zip(checkpoints, new_versions):
                config = saver_config(key, cp.checkpoint_ns, cp.parent_checkpoint_id)
                saver.put(config, cp.checkpoint, cp.metadata, versions)

        self._in_transaction(work)

    def _saver(self, session):
        """The real MongoDBSaver's writing code on our collections, bound to our session, its
        upserts turned into checked inserts (``_InsertOnly``).

        Built without its constructor, which would build indexes (the target has them)."""
        from langgraph.checkpoint.base import BaseCheckpointSaver
        from langgraph.checkpoint.mongodb import MongoDBSaver
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        from symfonic_cli.codec.reuse import target_serializer

        saver = MongoDBSaver.__new__(MongoDBSaver)
        BaseCheckpointSaver.__init__(saver)
        saver.client, saver.db = self.client, self.db
        # _InsertOnly stands in for pymongo's Collection: only the calls the saver makes.
        saver.checkpoint_collection = _InsertOnly(self.checkpoints, session, ("thread_id", *self._CHECKPOINT_KEY), self._collation(self.checkpoints))  # type: ignore[assignment]  # see above
        saver.writes_collection = _InsertOnly(self.writes, session, ("thread_id", *self._WRITE_KEY), self._collation(self.writes))  # type: ignore[assignment]  # see above
        saver.ttl = self._ttl()
        saver.serde = target_serializer(JsonPlusSerializer())  # as SQLite and PostgreSQL: same bytes, shared messages encoded once
        return saver

    def _ttl(self) -> int | None:
        for ix in self.checkpoints.list_indexes():
            if list(ix["key"].items()) == [("created_at", 1)] and ix.get("expireAfterSeconds") is not None:
                return int(ix["expireAfterSeconds"])
        return None

    def _ttl_stamp(self) -> dict:
        from datetime import datetime, timezone

        return {"created_at": datetime.now(tz=timezone.utc)} if self._ttl() else {}

    def _in_transaction(self, work: Callable[[Any], None]) -> None:
        from symfonic_cli.model.copy import migrate_fault_point

        if not self.writable:
            raise StoreError(f"{self.location.display} was opened read-only")
        if not self._supports_transactions():
            work(None)  # best effort, documented: writes first, checkpoints last
            migrate_fault_point("before-commit")
            return
        self._transaction(work, before_commit=lambda: migrate_fault_point("before-commit"))


class _InsertOnly:
    """The saver's collection for migrate: its upserts (``update_one``, ``bulk_write`` of
    ``UpdateOne``) become inserts of the very documents they would create, each first looked up
    by its unique key in the session, so a document the target holds fails the thread
    (MigrationConflict) instead of being replaced. Nothing else of the collection is reachable."""

    def __init__(self, collection, session: ClientSession, key_fields: tuple[str, ...], collation: dict | None) -> None:
        self._collection = collection
        self._session = session
        self._key_fields = key_fields
        self._collation = collation

    def update_one(self, filter: dict, update: dict, upsert: bool = False, **_: Any) -> None:
        self._insert([(filter, update, upsert)])

    def bulk_write(self, operations, **_: Any) -> None:
        from pymongo.operations import UpdateOne

        if not all(isinstance(op, UpdateOne) for op in operations):
            raise StoreError("the saver asked for a write that is not an upsert; migrate only inserts")
        # pymongo keeps an operation's parts in these attributes (no public accessor).
        self._insert([(op._filter, op._doc, op._upsert) for op in operations])

    def _insert(self, upserts) -> None:
        from pymongo.errors import BulkWriteError, DuplicateKeyError

        from symfonic_cli.model.copy import MigrationConflict

        docs, keys = [], []
        for flt, update, upsert in upserts:
            if not upsert or not isinstance(update, dict) or set(update) - {"$set", "$setOnInsert"}:
                raise StoreError("the saver asked for a write that is not an upsert; migrate only inserts")
            keys.append({f: flt[f] for f in self._key_fields if f in flt})
            doc = dict(flt)
            for part in update.values():
                doc.update(part)
            docs.append(doc)
        if keys:  # one look-up for the call's documents
            fields = {"_id": 0, **{f: 1 for f in self._key_fields}}
            held = self._collection.find_one({"$or": keys}, fields, session=self._session, collation=self._collation)
            if held is not None:
                raise MigrationConflict(
                    f"the target already holds the document the saver would write under "
                    f"{', '.join(f'{f} {v!r}' for f, v in held.items() if f != 'thread_id')}"
                )
        if docs:
            try:
                self._collection.insert_many(docs, ordered=True, session=self._session)
            except (DuplicateKeyError, BulkWriteError) as exc:
                if isinstance(exc, BulkWriteError) and not any(e.get("code") == 11000 for e in exc.details.get("writeErrors", [])):
                    raise
                raise MigrationConflict("the target already holds a document the saver would write") from None


def _stored_key(doc: dict, fields: tuple[str, ...], what: str) -> tuple:
    """A document's key fields as the saver writes them (strings, an integer ``idx``); any other
    shape fails the thread, naming the document, before it can be hashed or compared."""
    cid = doc.get("checkpoint_id")
    if isinstance(cid, str):
        what += f" at checkpoint {cid}"
    out: list[str | int] = []
    for f in fields:
        if f == "idx":
            idx = doc.get("idx")
            if not isinstance(idx, int) or isinstance(idx, bool):
                raise StoreError(f"{what} has an unexpected shape: 'idx' is {type(idx).__name__} ({_short(idx)}), not an integer")
            out.append(idx)
        else:
            out.append(_key_field(doc, f, what))
    return tuple(out)


def _bson_value(value: Any) -> Any:
    """A value as BSON stores it: bytes for any buffer, lists for tuples, recursively."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict):
        return {k: _bson_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_bson_value(v) for v in value]
    return value
