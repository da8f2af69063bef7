"""MongoDB stores: ``store usage``: where the bytes are, aggregated by the server (no document decoded).

Collection storage comes from ``collStats`` (storageSize, freeStorageSize, totalIndexSize), else the
``$collStats`` stage; a server that offers neither (some wire-protocol servers) gets the documents'
own ``$bsonSize`` sums and a note. What a prune would remove is planned thread by thread with the
full rules (no window functions needed from the server)."""

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
        reclaim = {"keep": keep, "checkpoints": 0, "writes": 0, "blobs": 0, "bytes": 0, "threads": 0, "skipped_threads": 0}
        for key in sorted(threads):
            plan = self.prune_plan(key, keep=keep)  # type: ignore[attr-defined]
            if plan.skipped:
                reclaim["skipped_threads"] += 1
                continue
            reclaim["checkpoints"] += plan.rows.get(self.checkpoints_name, 0)
            reclaim["writes"] += plan.rows.get(self.writes_name, 0)
            reclaim["bytes"] += plan.bytes
            reclaim["threads"] += bool(plan.rows.get(self.checkpoints_name))
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
