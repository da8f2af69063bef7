"""MongoDB stores: ``store usage``: where the bytes are, aggregated by the server (no document decoded).

Collection storage comes from ``collStats`` (storageSize, freeStorageSize, totalIndexSize), else the
``$collStats`` stage; a server that offers neither (some wire-protocol servers) gets the documents'
own ``$bsonSize`` sums and a note. What a prune would remove is aggregated by the server: each
namespace's count and bytes and its latest ``keep`` checkpoint ids (sorted, grouped, sliced: no
window functions needed), the writes grouped by checkpoint; only the threads the plain rule does
not describe (a subgraph call's namespace, DeltaChannel metadata, pending Sends) are planned one
by one with the full rules, as on PostgreSQL."""

from __future__ import annotations

from symfonic_cli.stores.mongodb._common import BINARY, MongoSection, _driver_errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pymongo.collection import Collection
    from typing import Any


class MongoUsage(MongoSection):
    """store usage."""

    def _collection_storage(self, name: str) -> tuple[dict, str | None]:
        from pymongo.errors import OperationFailure

        try:
            s = self.db.command("collStats", name)
        except OperationFailure:
            try:
                coll = self.db[name]
                got = list(coll.aggregate([{"$collStats": {"storageStats": {}}}], collation=None))  # no key compared
                s = got[0].get("storageStats", {}) if got else {}
            except OperationFailure as exc:
                return {"name": name}, f"the server reports no storage statistics for '{name}' ({(exc.details or {}).get('errmsg') or exc})"
        out: dict[str, Any] = {"name": name}
        for field, label in (("storageSize", "storage_bytes"), ("freeStorageSize", "free_bytes"), ("totalIndexSize", "index_bytes"),
                             ("size", "data_bytes"), ("count", "documents")):
            value = s.get(field)
            out[label] = int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        missing = [label for label in ("storage_bytes", "free_bytes") if out[label] is None]
        note = f"the server does not report {' or '.join(missing)} of '{name}'" if missing else None
        return out, note

    def _sizes(self, coll: Collection[Any], group: str | None = None) -> list[dict]:
        return list(coll.aggregate([{"$group": {"_id": group, "n": {"$sum": 1}, "b": {"$sum": {"$bsonSize": "$$ROOT"}}}}], collation=BINARY))

    def _special(self) -> set[str]:
        """Threads the plain rule (the latest N per namespace) does not describe exactly."""
        from symfonic_cli.model.prune import TASKS

        found: set[str] = set()
        for coll, flt in ((self.checkpoints, {"$or": [{"checkpoint_ns": {"$regex": ":"}},
                                                       {"metadata.counters_since_delta_snapshot": {"$exists": True}},
                                                       {"metadata.delta_writes_versioned": {"$exists": True}}]}),
                          (self.writes, {"channel": TASKS})):
            for d in coll.aggregate([{"$match": flt}, {"$group": {"_id": "$thread_id"}}], collation=BINARY):
                if isinstance(d["_id"], str):
                    found.add(d["_id"])
        return found

    def _reclaimable(self, keep: int) -> dict:
        """What ``thread prune --keep keep`` would delete, as its plans count it (``$bsonSize`` of the
        documents), aggregated in the database: one pass over each collection."""
        special = self._special()
        reclaim = {"keep": keep, "checkpoints": 0, "writes": 0, "blobs": 0, "bytes": 0, "threads": 0, "skipped_threads": 0}
        kept: dict[tuple[str, str], set[str]] = {}
        threads: set[str] = set()
        size = {"$bsonSize": "$$ROOT"}
        for d in self.checkpoints.aggregate([
            {"$match": {"thread_id": {"$type": "string"}, "checkpoint_id": {"$type": "string"}}},
            {"$sort": {"thread_id": 1, "checkpoint_ns": 1, "checkpoint_id": -1}},  # the saver's order, newest first
            {"$group": {"_id": {"t": "$thread_id", "ns": "$checkpoint_ns"}, "n": {"$sum": 1}, "b": {"$sum": size},
                        "ids": {"$push": "$checkpoint_id"}, "sizes": {"$push": size}}},
            {"$project": {"n": 1, "b": 1, "kept": {"$slice": ["$ids", keep]}, "kept_b": {"$sum": {"$slice": ["$sizes", keep]}}}},
        ], collation=BINARY, allowDiskUse=True):
            t, ns = d["_id"].get("t"), d["_id"].get("ns", "")
            if t in special or not isinstance(ns, str):
                continue
            kept[(t, ns)] = set(d["kept"])
            gone = int(d["n"]) - len(d["kept"])
            if gone > 0:
                reclaim["checkpoints"] += gone
                reclaim["bytes"] += int(d["b"]) - int(d["kept_b"])
                threads.add(t)
        for d in self.writes.aggregate([
            {"$match": {"thread_id": {"$type": "string"}}},
            {"$group": {"_id": {"t": "$thread_id", "ns": "$checkpoint_ns", "c": "$checkpoint_id"}, "n": {"$sum": 1}, "b": {"$sum": size}}},
        ], collation=BINARY, allowDiskUse=True):
            k = d["_id"]
            held = kept.get((k.get("t"), k.get("ns", "")))
            if held is not None and k.get("c") not in held:  # a checkpoint the prune deletes, with its writes
                reclaim["writes"] += int(d["n"])
                reclaim["bytes"] += int(d["b"])
        reclaim["threads"] = len(threads)
        for key in sorted(special):
            plan = self.prune_plan(key, keep=keep)  # type: ignore[attr-defined]
            if plan.skipped:
                reclaim["skipped_threads"] += 1
                continue
            reclaim["checkpoints"] += plan.rows.get(self.checkpoints_name, 0)
            reclaim["writes"] += plan.rows.get(self.writes_name, 0)
            reclaim["bytes"] += plan.bytes
            reclaim["threads"] += bool(plan.rows.get(self.checkpoints_name))
        return reclaim

    @_driver_errors
    def store_usage(self, *, top: int = 10, keep: int = 1) -> dict:
        notes = []
        collections = []
        for name in (self.checkpoints_name, self.writes_name):
            entry, note = self._collection_storage(name)
            collections.append(entry)
            if note:
                notes.append(note)
        totals = {}
        for label, coll in (("checkpoints", self.checkpoints), ("writes", self.writes)):
            got = self._sizes(coll)
            totals[label] = {"count": int(got[0]["n"]), "bytes": int(got[0]["b"])} if got else {"count": 0, "bytes": 0}
        channel_rows: list[dict[str, Any]] = [
            {"channel": d["_id"], "table": self.writes_name, "rows": int(d["n"]), "bytes": int(d["b"])}
            for d in self._sizes(self.writes, "$channel") if isinstance(d["_id"], str)]
        channels = sorted(channel_rows, key=lambda r: (-r["bytes"], r["channel"]))
        threads: dict[str, list[int]] = {}
        for label, coll in (("checkpoints", self.checkpoints), ("writes", self.writes)):
            for d in self._sizes(coll, "$thread_id"):
                if not isinstance(d["_id"], str):
                    continue
                t = threads.setdefault(d["_id"], [0, 0])
                t[0] += int(d["b"])
                if label == "checkpoints":
                    t[1] += int(d["n"])
        largest = [{"key": k, "bytes": b, "checkpoints": n} for k, (b, n) in sorted(threads.items(), key=lambda kv: (-kv[1][0], kv[0]))[:top]]
        reclaim = self._reclaimable(keep)
        notes.append("MongoDBSaver keeps every channel's value inside the checkpoint document: bytes per channel are the writes'")
        return {
            "collections": collections,
            "checkpoints": totals["checkpoints"],
            "writes": totals["writes"],
            "blobs": None,
            "channels": channels,
            "largest_threads": largest,
            "reclaimable": reclaim,
            "notes": notes,
        }
