"""MongoDB stores: migrate: export and import of whole threads."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.stores.mongodb._common import (
    _driver_errors,
    _field,
    _loads_metadata,
    _string_literal,
)


class MongoCopy:
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
            for doc in coll.find({"thread_id": key}).sort(sort):
                data = {k: _bson_value(v) for k, v in doc.items() if k not in ("_id", "thread_id", "created_at", *key_fields)}
                rows.append(RawRow(table, tuple(doc.get(f) for f in key_fields), data))
        return ThreadExport("mongodb", key, rows)

    @_driver_errors
    def import_rows(self, key: str, rows) -> None:
        from symfonic_cli.model.copy import MigrationConflict

        key = _string_literal(key, "thread key")
        if any(r.table not in ("checkpoints", "writes") or not isinstance(r.data, dict) for r in rows):
            raise StoreError("rows from a store of another kind cannot be imported as MongoDB documents")
        ttl = self._ttl_stamp()
        docs = {"checkpoints": [], "writes": []}
        for r in rows:
            fields = self._CHECKPOINT_KEY if r.table == "checkpoints" else self._WRITE_KEY
            docs[r.table].append({"thread_id": key, **dict(zip(fields, r.key)), **r.data, **ttl})

        def work(session) -> None:
            for table in ("writes", "checkpoints"):  # checkpoints last: never a complete-looking partial thread
                coll = self.writes if table == "writes" else self.checkpoints
                fields = self._CHECKPOINT_KEY if table == "checkpoints" else self._WRITE_KEY
                for d in docs[table]:
                    if coll.find_one({"thread_id": key, **{f: d[f] for f in fields}}, {"_id": 1}, session=session):
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
        for doc in self.checkpoints.find({"thread_id": _string_literal(key, "thread key")}, {"_id": 0}).sort([("checkpoint_id", 1), ("checkpoint_ns", 1)]):
            cid, ns = _field(doc, "checkpoint_id", str, None), doc.get("checkpoint_ns", "")
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
        for doc in self.writes.find({"thread_id": key}, {"_id": 0}).sort(sort):
            cid, task_id, idx, channel = doc.get("checkpoint_id"), doc.get("task_id"), doc.get("idx"), doc.get("channel")
            what = f"write {cid}/{task_id}/{idx} channel '{channel}'"
            value = doc.get("value")
            with collect_blocked() as blocked:
                decoded = loads(doc.get("type"), bytes(value) if isinstance(value, (bytes, bytearray)) else None, what=what)
            if blocked:
                thread.blocked[what] = sorted(blocked)
            thread.writes.append(DecodedWrite(doc.get("checkpoint_ns", ""), cid, task_id, doc.get("task_path", "") or "", idx, channel, decoded))
        return thread

    @_driver_errors
    def import_decoded(self, key: str, checkpoints, writes, new_versions) -> None:
        from symfonic_cli.model.copy import MigrationConflict, saver_config, write_batches

        key = _string_literal(key, "thread key")
        batches = write_batches(writes)

        def work(session) -> None:
            for cp in checkpoints:
                if self.checkpoints.find_one({"thread_id": key, "checkpoint_ns": cp.checkpoint_ns, "checkpoint_id": cp.checkpoint_id}, {"_id": 1}, session=session):
                    raise MigrationConflict(f"checkpoint {cp.checkpoint_id} appeared in the target")
            for w in writes:
                if self.writes.find_one({"thread_id": key, **dict(zip(self._WRITE_KEY, w.key))}, {"_id": 1}, session=session):
                    raise MigrationConflict(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} appeared in the target")
            saver = self._saver(session)
            for ns, cid, task_id, task_path, batch in batches:  # writes first, checkpoints after
                saver.put_writes(saver_config(key, ns, cid), batch, task_id, task_path)
            for cp, versions in zip(checkpoints, new_versions):
                config = saver_config(key, cp.checkpoint_ns, cp.parent_checkpoint_id)
                saver.put(config, cp.checkpoint, cp.metadata, versions)

        self._in_transaction(work)

    def _saver(self, session):
        """The real MongoDBSaver's writing code on our collections, bound to our session.

        Built without its constructor, which would build indexes (the target has them)."""
        from langgraph.checkpoint.base import BaseCheckpointSaver
        from langgraph.checkpoint.mongodb import MongoDBSaver
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        from symfonic_cli.codec.reuse import target_serializer

        saver = MongoDBSaver.__new__(MongoDBSaver)
        BaseCheckpointSaver.__init__(saver)
        saver.client, saver.db = self.client, self.db
        saver.checkpoint_collection = _InSession(self.checkpoints, session)
        saver.writes_collection = _InSession(self.writes, session)
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

    def _transaction(self, work: Callable[[Any], Any], *, before_commit: Callable[[], None] | None = None) -> Any:
        """``work(session)`` in one multi-document transaction, retried as the driver spec says
        when the server reports a transient conflict (e.g. a concurrent eraser)."""
        from pymongo.errors import PyMongoError

        deadline = time.monotonic() + TRANSACTION_RETRY_SECONDS
        while True:
            with self.client.start_session() as session:
                session.start_transaction()
                try:
                    result = work(session)
                    if before_commit is not None:
                        before_commit()
                    self._commit(session, deadline)
                    return result
                except PyMongoError as exc:
                    _abort(session)
                    if exc.has_error_label("TransientTransactionError") and time.monotonic() < deadline:
                        time.sleep(0.05)
                        continue
                    raise
                except BaseException:
                    _abort(session)
                    raise

    @staticmethod
    def _commit(session, deadline: float) -> None:
        from pymongo.errors import PyMongoError

        while True:
            try:
                session.commit_transaction()
                return
            except PyMongoError as exc:
                if exc.has_error_label("UnknownTransactionCommitResult") and time.monotonic() < deadline:
                    continue
                raise



TRANSACTION_RETRY_SECONDS = 60


def _abort(session) -> None:
    from pymongo.errors import PyMongoError

    if session.in_transaction:
        try:
            session.abort_transaction()
        except PyMongoError:
            pass  # the server drops it when the session ends


class _InSession:
    """A collection whose calls all run in one session (the saver takes no session argument)."""

    def __init__(self, collection, session) -> None:
        self._collection = collection
        self._session = session

    def __getattr__(self, name: str):
        attr = getattr(self._collection, name)
        if callable(attr) and self._session is not None:
            return functools.partial(attr, session=self._session)
        return attr


def _bson_value(value: Any) -> Any:
    """A value as BSON stores it: bytes for any buffer, lists for tuples, recursively."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict):
        return {k: _bson_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_bson_value(v) for v in value]
    return value
