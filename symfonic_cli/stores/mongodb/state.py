"""MongoDB stores: run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.clock import joined_ordered
from symfonic_cli.errors import StoreError
from symfonic_cli.stores.mongodb._common import (
    ODD_GROUP,
    A_KEY,
    MongoSection,
    _driver_errors,
    _driver_errors_iter,
    _field,
    _key_is,
    _leaf,
    _string_literal,
    _prefix_range,
    keys_match,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.model.run_state import ThreadRunState
    from symfonic_cli.model.run_state import ThreadRunRows


class MongoState(MongoSection):
    """Run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

    # -- run state (``thread show``; see stores/protocol.py): the latest document per namespace,
    # read lean; sizes are the stored documents' $bsonSize, summed by the server

    @_driver_errors
    def read_run_rows(self, key: str) -> "ThreadRunRows | None":
        from symfonic_cli.model.run_state import (
            RawWrite,
            ThreadRunRows,
            lean_from_blob,
        )

        key = _string_literal(key, "thread key")
        exact = self._collation(self.checkpoints)
        totals = list(self.checkpoints.aggregate([
            {"$match": _key_is(key)},
            {"$group": {"_id": None, "n": {"$sum": 1}, "ns": {"$addToSet": "$checkpoint_ns"}, "first": {"$min": "$checkpoint_id"},
                        "last": {"$max": "$checkpoint_id"}, "size": {"$sum": {"$bsonSize": "$$ROOT"}}}},
        ], collation=exact))
        if not totals or not totals[0].get("n"):
            return None
        t = totals[0]
        size = int(t.get("size") or 0)
        wsize = list(self.writes.aggregate([
            {"$match": _key_is(key)}, {"$group": {"_id": None, "size": {"$sum": {"$bsonSize": "$$ROOT"}}}},
        ], collation=self._collation(self.writes)))
        if wsize:
            size += int(wsize[0].get("size") or 0)
        latest = []
        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata": 1}
        for ns in sorted(n for n in t.get("ns") or [] if isinstance(n, str)):
            doc = self.checkpoints.find_one({**_key_is(key), "checkpoint_ns": ns}, fields, sort=[("checkpoint_id", -1)], collation=exact)
            if doc is None:
                continue
            cid = _field(doc, "checkpoint_id", str, None)
            meta = found if isinstance(found := doc.get("metadata"), dict) else {}
            try:
                meta = {k: _leaf(meta.get(k), cid) for k in ("step", "source") if k in meta}
            except StoreError:
                meta = {}
            latest.append(lean_from_blob(ns, cid, doc.get("type"), _field(doc, "checkpoint", bytes, cid), meta))
        latest.sort(key=lambda lean: (lean.checkpoint_ns != "", lean.checkpoint_ns))
        writes = []
        for lean in latest:
            for doc in self.writes.find(
                {**_key_is(key), "checkpoint_ns": _string_literal(lean.checkpoint_ns, "namespace"), "checkpoint_id": _string_literal(lean.checkpoint_id, "checkpoint id")},
                {"_id": 0, "task_id": 1, "task_path": 1, "idx": 1, "channel": 1, "type": 1, "value": 1}, collation=self._collation(self.writes),
            ).sort([("task_id", 1), ("idx", 1)]):
                value = doc.get("value")
                channel = doc.get("channel")
                writes.append(RawWrite(
                    lean.checkpoint_ns, lean.checkpoint_id, str(doc.get("task_id")), doc.get("task_path") if isinstance(doc.get("task_path"), str) else None,
                    doc.get("idx") if isinstance(doc.get("idx"), int) else 0, channel if isinstance(channel, str) else "",
                    doc.get("type") if isinstance(doc.get("type"), str) else None,
                    bytes(value) if isinstance(value, (bytes, bytearray)) else None,
                ))
        return ThreadRunRows(latest, writes, int(t["n"]), len(t.get("ns") or []), size, t.get("first"), t.get("last"))

    _RUN_BATCH = 500

    @_driver_errors_iter
    def iter_run_states(
        self,
        *,
        prefix: str | None = None,
        with_size: bool = False,
        with_status: bool = True,
        statuses: "set[str] | None" = None,
        keys: "list[str] | None" = None,
        totals: bool = True,
    ) -> Iterator["ThreadRunState"]:
        """Counts, ids and sizes ($bsonSize) grouped by the server; the latest root documents and
        their writes fetched a batch of threads at a time; each blob's version maps read from its
        tail (``model.run_status.status_from_tail``), the blob read whole only when that fails."""
        from symfonic_cli.model.run_state import ThreadRunState
        from symfonic_cli.model.run_status import status_from_tail

        if keys is not None and not keys:
            return
        # A listing's page: those keys only (the simple collation: exact), by the index (keys_match).
        first = keys_match(keys)[:1] if keys is not None else []
        match: dict = ({"thread_id": A_KEY} if keys is not None else
                       {"thread_id": _prefix_range(_string_literal(prefix, "prefix")) if prefix else A_KEY})
        # In byte order (a default collation would fold and reorder keys): the merges below
        # compare keys in Python, as the server sorted them.
        cp_exact, w_exact = self._collation(self.checkpoints), self._collation(self.writes)
        group: dict = {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}
        if with_size:
            group["size"] = {"$sum": {"$bsonSize": "$$ROOT"}}
        summary = self._summaries(match, group, cp_exact, first=first)
        write_sizes = None
        if with_size:
            write_sizes = self.writes.aggregate([
                *first, {"$match": match}, {"$group": {"_id": "$thread_id", "size": {"$sum": {"$bsonSize": "$$ROOT"}}}}, {"$sort": {"_id": 1}},
            ], allowDiskUse=True, collation=w_exact)
        latest = None
        if with_status:
            latest = self.checkpoints.aggregate([
                *first, {"$match": {**match, "checkpoint_ns": ""}}, {"$group": {"_id": "$thread_id", "cid": {"$max": "$checkpoint_id"}}},
                {"$sort": {"_id": 1}},
            ], allowDiskUse=True, collation=cp_exact)
        nxt_size = next(write_sizes, None) if write_sizes is not None else None
        nxt_latest = next(latest, None) if latest is not None else None
        batch: list[tuple[dict, str | None]] = []
        for doc in summary:
            key = doc["_id"]
            if not isinstance(key, str):
                continue
            size = int(doc.get("size") or 0)
            if write_sizes is not None:
                while nxt_size is not None and str(nxt_size["_id"]) < key:
                    nxt_size = next(write_sizes, None)
                if nxt_size is not None and nxt_size["_id"] == key:
                    size += int(nxt_size.get("size") or 0)
                    nxt_size = next(write_sizes, None)
            doc["size"] = size
            cid = None
            if latest is not None:  # its keys are some of summary's, in the same order
                if nxt_latest is not None and nxt_latest["_id"] == key:
                    cid = nxt_latest.get("cid") if isinstance(nxt_latest.get("cid"), str) else None
                    nxt_latest = next(latest, None)
            batch.append((doc, cid))
            if len(batch) >= self._RUN_BATCH:
                yield from self._run_batch(batch, with_size, with_status, ThreadRunState, status_from_tail)
                batch = []
        if batch:
            yield from self._run_batch(batch, with_size, with_status, ThreadRunState, status_from_tail)

    def _summaries(self, match: dict, group: dict, collation: Any, *, pushed: bool = True, first: list[dict] | None = None) -> Iterator[dict]:
        """The threads' $group documents in key order, ``odd`` set: each thread's ids pushed and
        tested here (clock.joined_ordered, as the listing: no regex per document); from a group
        too large to push on (a document holds 16 MB), the rest tested by the server's regex."""
        from pymongo.errors import OperationFailure

        last = None
        if pushed:
            try:
                for doc in self.checkpoints.aggregate([*(first or []), {"$match": match}, {"$group": {**group, "ids": {"$push": "$checkpoint_id"}}},
                                                       {"$sort": {"_id": 1}}], allowDiskUse=True, collation=collation):
                    ids = doc.pop("ids")
                    doc["odd"] = not (all(type(i) is str for i in ids) and joined_ordered(",".join(ids), int(doc["n"])))
                    last = doc["_id"]
                    yield doc
                return
            except OperationFailure:
                pass
        rest = match if last is None else {"$and": [match, {"thread_id": {"$gt": last}}]}
        yield from self.checkpoints.aggregate([*(first or []), {"$match": rest}, {"$group": {**group, "odd": ODD_GROUP}}, {"$sort": {"_id": 1}}],
                                              allowDiskUse=True, collation=collation)

    def _run_batch(self, batch, with_size, with_status, ThreadRunState, status_from_tail):
        from symfonic_cli.model.thread_row import told_run_state

        docs: dict[str, dict] = {}
        flags: dict[str, dict] = {}
        pairs = {d["_id"]: cid for d, cid in batch if cid is not None}
        if with_status and pairs:
            fields = {"_id": 0, "thread_id": 1, "checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata.step": 1}
            # The batch's keys found by the index first (keys_match), then each key's latest id
            # tested here: a $or of the pairs cost SecantusDB seconds a batch.
            stages = keys_match(list(pairs))[:1] + [{"$match": {"checkpoint_ns": "", "checkpoint_id": {"$in": list(set(pairs.values()))}}}]
            for doc in self.checkpoints.aggregate([*stages, {"$project": fields}], collation=self._collation(self.checkpoints)):
                if _latest(pairs, doc):
                    docs[doc["thread_id"]] = doc
            wfields = {"_id": 0, "thread_id": 1, "checkpoint_id": 1, "task_id": 1, "task_path": 1, "channel": 1}
            for w in self.writes.aggregate([*stages, {"$project": wfields}], collation=self._collation(self.writes)):
                if not _latest(pairs, w):
                    continue
                f = flags.setdefault(w.get("thread_id"), {}).setdefault(str(w.get("task_id")), [None, False, False, False])
                if isinstance(w.get("task_path"), str):
                    f[0] = w["task_path"]
                channel = w.get("channel")
                if channel == "__interrupt__":
                    f[1] = True
                elif channel == "__error__":
                    f[2] = True
                elif channel not in ("__resume__", "__error_source_node__"):
                    f[3] = True
        for d, cid in batch:
            key = d["_id"]
            status = None
            doc = docs.get(key)
            if doc is not None:
                blob = doc.get("checkpoint") if isinstance(doc.get("checkpoint"), (bytes, bytearray)) else None
                blob = bytes(blob) if blob is not None else None
                meta = found if isinstance(found := doc.get("metadata"), dict) else {}
                try:
                    step = _leaf(meta.get("step"), cid)
                except StoreError:
                    step = None
                at = blob.find(b"\xb0channel_versions") if blob else -1
                task_flags = {tid: tuple(f) for tid, f in flags.get(key, {}).items()}
                status = status_from_tail(
                    cid, step, doc.get("type"), blob[:4] if blob else None, blob[at:] if blob and at > 0 else None,
                    len(blob) if blob else None, task_flags,
                    whole=lambda doc=doc, blob=blob, step=step: (doc.get("type"), blob, {"step": step}),
                )
            yield told_run_state(key, int(d["n"]), d.get("first"), d.get("last"), bool(d.get("odd", True)), status,
                                 d["size"] if with_size else None)


def _latest(pairs: dict, doc: dict) -> bool:
    """Whether ``doc`` is of a batch thread's latest root checkpoint (a string key: exactly)."""
    key = doc.get("thread_id")
    return isinstance(key, str) and key in pairs and doc.get("checkpoint_id") == pairs[key]
