"""MongoDB stores: thread prune's primitives (stores/_prune.py runs the rules on them).

One multi-document transaction per thread where the server has them; on a standalone server
(SecantusDB, a single mongod) the deletes run in a fixed order, writes before their checkpoints,
and the kept state is still compared after them (a difference is reported, not rolled back)."""

from __future__ import annotations

from contextlib import contextmanager

from symfonic_cli.errors import StoreError
from symfonic_cli.stores._prune import RulePrune
from symfonic_cli.stores.mongodb._common import BINARY, MongoSection, _driver_errors, _leaf, _string_literal

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.prune import PruneDecision


def _thread(key: str) -> dict:
    return {"$eq": _string_literal(key, "thread key"), "$type": "string"}


class MongoPrune(RulePrune, MongoSection):
    """Thread prune: facts, outline, measure, kept state, apply; compact."""

    _pr_session = None

    def _pr_atomic(self) -> bool:
        return bool(self._supports_transactions())

    def _pr_tables(self) -> tuple[str, ...]:
        return (self.writes_name, self.checkpoints_name)

    @_driver_errors
    def prune_prepare(self, *, dry_run: bool = False) -> list[str]:
        notes = self.erase_prepare((), dry_run=dry_run)  # type: ignore[attr-defined]
        if notes:  # no transactions: say how pruning runs instead
            return ["MongoDB server without multi-document transactions: each thread's writes are deleted before its "
                    "checkpoints, in one fixed order; not atomic"]
        return []

    @contextmanager
    def _pr_transaction(self):
        if not self._supports_transactions():
            yield
            return
        with self.client.start_session() as session:
            session.start_transaction()
            self._pr_session = session
            try:
                yield
                session.commit_transaction()
            except BaseException:
                if session.in_transaction:
                    session.abort_transaction()
                raise
            finally:
                self._pr_session = None

    def _find(self, coll, flt: dict, fields: dict, sort=None):
        cursor = coll.find(flt, fields, session=self._pr_session, collation=BINARY)
        return cursor.sort(sort) if sort else cursor

    @_driver_errors
    def _pr_facts(self, key: str):
        from symfonic_cli.model.prune import TASKS, PruneCheckpoint

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "parent_checkpoint_id": 1, "metadata.parents": 1,
                  "metadata.counters_since_delta_snapshot": 1, "metadata.delta_writes_versioned": 1}
        cps = []
        for doc in self._find(self.checkpoints, {"thread_id": _thread(key)}, fields):
            ns, cid, parent = doc.get("checkpoint_ns", ""), doc.get("checkpoint_id"), doc.get("parent_checkpoint_id")
            if not isinstance(ns, str) or not isinstance(cid, str):
                raise StoreError(f"a checkpoint document of thread '{key}' has an unexpected shape (checkpoint_ns or checkpoint_id not a string)")
            meta = found if isinstance(found := doc.get("metadata"), dict) else {}
            parents = found if isinstance(found := meta.get("parents"), dict) else {}
            root = _leaf(parents.get(""), cid) if "" in parents else None
            counters = meta.get("counters_since_delta_snapshot")
            delta = frozenset(k for k in counters if isinstance(k, str)) if isinstance(counters, dict) else frozenset()
            cps.append(PruneCheckpoint(ns, cid, parent if isinstance(parent, str) else None,
                                       root if isinstance(root, str) else None, delta, "delta_writes_versioned" in meta))
        sends = set()
        for doc in self._find(self.writes, {"thread_id": _thread(key), "channel": TASKS}, {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1}):
            sends.add((doc.get("checkpoint_ns", ""), doc.get("checkpoint_id")))
        return cps, sends

    def _doc(self, key: str, ns: str, cid: str, fields: dict):
        return next(iter(self._find(self.checkpoints, {"thread_id": _thread(key), "checkpoint_ns": ns, "checkpoint_id": cid}, fields).limit(1)), None)

    @_driver_errors
    def _pr_outline(self, key: str, ns: str, cid: str):
        from symfonic_cli.codec.outline import checkpoint_outline

        doc = self._doc(key, ns, cid, {"_id": 0, "type": 1, "checkpoint": 1})
        return checkpoint_outline(doc.get("type"), doc.get("checkpoint")) if doc else None

    @_driver_errors
    def _pr_head(self, key: str, cid: str):
        from symfonic_cli.codec.msgpack_head import checkpoint_blob_head, encrypted_blob_head

        doc = self._doc(key, "", cid, {"_id": 0, "type": 1, "checkpoint": 1})
        if doc and doc.get("type") == "msgpack+aes" and isinstance(doc.get("checkpoint"), bytes):
            return encrypted_blob_head(doc["type"], doc["checkpoint"])
        if not doc or doc.get("type") != "msgpack" or not isinstance(doc.get("checkpoint"), bytes):
            return None, None
        try:
            return checkpoint_blob_head(doc["checkpoint"])
        except Exception:
            return None, None

    def _pr_filters(self, key: str, d: PruneDecision):
        for ns, ids in d.delete.items():
            if ids:
                yield {"thread_id": _thread(key), "checkpoint_ns": ns, "checkpoint_id": {"$in": ids}}
        if d.drop:
            yield {"thread_id": _thread(key), "checkpoint_ns": {"$in": list(d.drop)}}

    def _measure(self, coll, flt: dict) -> tuple[int, int]:
        got = list(coll.aggregate([{"$match": flt}, {"$group": {"_id": None, "n": {"$sum": 1}, "b": {"$sum": {"$bsonSize": "$$ROOT"}}}}],
                                  session=self._pr_session, collation=BINARY))
        return (int(got[0]["n"]), int(got[0]["b"])) if got else (0, 0)

    @_driver_errors
    def _pr_measure(self, key: str, d: PruneDecision):
        rows = dict.fromkeys(self._pr_tables(), 0)
        size = 0
        for flt in self._pr_filters(key, d):
            for name, coll in ((self.writes_name, self.writes), (self.checkpoints_name, self.checkpoints)):
                n, b = self._measure(coll, flt)
                rows[name] += n
                size += b
        return rows, size

    @_driver_errors
    def _pr_kept_state(self, key: str, d: PruneDecision):
        state = []
        for ns, ids in sorted(d.keep.items()):
            if ns in d.drop or not ids:
                continue
            flt = {"thread_id": _thread(key), "checkpoint_ns": ns, "checkpoint_id": {"$in": sorted(ids)}}
            docs = [(doc.get("checkpoint_id"), doc.get("type"), doc.get("checkpoint"), repr(doc.get("metadata")))
                    for doc in self._find(self.checkpoints, flt, {"_id": 0, "parent_checkpoint_id": 0}, sort=[("checkpoint_id", 1)])]
            writes = sorted(repr(sorted(doc.items())) for doc in self._find(self.writes, flt, {"_id": 0}))
            state.append((ns, docs, writes))
        return state

    @_driver_errors
    def _pr_apply(self, key: str, d: PruneDecision) -> dict[str, int]:
        rows = dict.fromkeys(self._pr_tables(), 0)
        s = self._pr_session
        for flt in self._pr_filters(key, d):
            rows[self.writes_name] += self.writes.delete_many(flt, session=s, collation=BINARY).deleted_count
            rows[self.checkpoints_name] += self.checkpoints.delete_many(flt, session=s, collation=BINARY).deleted_count
        for ns, ids in d.detach.items():
            if ids:
                self.checkpoints.update_many(
                    {"thread_id": _thread(key), "checkpoint_ns": ns, "checkpoint_id": {"$in": ids}},
                    {"$set": {"parent_checkpoint_id": None}}, session=s, collation=BINARY)
        return rows

    # -- --compact

    @_driver_errors
    def collection_bytes(self) -> dict[str, int]:
        out = {}
        for name in (self.checkpoints_name, self.writes_name):
            try:
                stats = self.db.command("collStats", name)
                out[name] = int(stats.get("storageSize") or 0)
            except Exception:
                out[name] = 0
        return out

    def compact_check(self) -> list[str]:
        return ["--compact: MongoDB 'compact' of the two collections after the last thread, where the server allows it"]

    @_driver_errors
    def compact(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        from pymongo.errors import OperationFailure

        before = self.collection_bytes()
        notes = []
        for name in (self.checkpoints_name, self.writes_name):
            try:
                self.db.command("compact", name)
            except OperationFailure as exc:
                msg = (exc.details or {}).get("errmsg") or str(exc)
                notes.append(f"compact of '{name}' refused by the server: {msg}")
        return before, self.collection_bytes(), notes
