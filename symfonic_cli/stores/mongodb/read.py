"""MongoDB stores: what is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from symfonic_cli.clock import joined_ordered
from symfonic_cli.codec.msgpack_head import encrypted_blob_head
from symfonic_cli.errors import StoreError
from symfonic_cli.model.listing import StoreInfo, ThreadSummary
from symfonic_cli.stores.mongodb._common import (
    ODD_GROUP,
    A_KEY,
    MongoSection,
    _driver_errors,
    _driver_errors_iter,
    _field,
    _key_is,
    _key_field,
    _keep,
    _Reversed,
    keys_match,
    _leaf,
    _loads_metadata,
    _string_literal,
    _prefix_range,
    _short,
)
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pymongo.collection import Collection
    from symfonic_cli.model.checkpoint import CheckpointHead, CheckpointRecord, MessageState, MessageWrite




def _bounds(last_before: str | None, last_from: str | None) -> dict:
    window: dict = {}
    if last_before is not None:
        window["$lt"] = last_before
    if last_from is not None:
        window["$gte"] = last_from
    return window


class MongoRead(MongoSection):
    """What is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

    # MongoDBSaver's get_tuple lists a checkpoint's writes in the order the server returns them
    # (no sort), and its DeltaChannel rebuild replays them so: iter_message_writes keeps that order.
    writes_replay_order = "stored"

    # -- what is in the store

    # Listing rows, pages and counts by last activity; stores/activity.py makes them exact by instant.

    @_driver_errors_iter
    def _thread_rows(self, tenant: str | None, sub_tenant: str | None, limit: int | None, last_before: str | None, last_from: str | None) -> Iterator[ThreadSummary]:
        # Only string keys are keys: a thread_id of another type (an array matches each of its
        # elements) is no thread's key (store info's anomalies count them).
        keys: dict = dict(A_KEY)
        if tenant is not None:
            keys.update(_prefix_range(tenant_prefix(_string_literal(tenant, "tenant"), sub_tenant)))
        if limit == 0:
            return
        from pymongo.errors import OperationFailure

        # Each thread's ids pushed and tested here (the same order and bounds
        # as SQLite's and PostgreSQL's); a regex per document in the $group cost half again the
        # raw $group (SecantusDB, 2,000 threads). A group too large to push (a thread of hundreds
        # of thousands of checkpoints: a document holds 16 MB) is listed by that regex instead.
        group = {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}
        collation = self._collation(self.checkpoints)
        # Two streamed passes, as on PostgreSQL: the odd threads (only they are kept here), then
        # the others newest first, sorted and bounded by the server, the odd ones skipped.
        # With a limit, the page is also kept here from that pass (a heap of ``limit`` rows):
        # a second $group and $sort cost half the first again on SecantusDB.
        odd: list[ThreadSummary] = []
        page: list[tuple] = []
        try:
            docs = self.checkpoints.aggregate([{"$match": {"thread_id": keys}}, {"$group": {**group, "ids": {"$push": "$checkpoint_id"}}}],
                                              allowDiskUse=True, collation=collation)
            for k, n, first, last, joined in _joined_rows(docs):
                if not (type(first) is str and type(last) is str and joined_ordered(joined, n)):
                    odd.append(ThreadSummary(k, n, first, last, True))
                elif limit is not None and (last_before is None or last < last_before) and (last_from is None or last >= last_from):
                    _keep(page, limit, (last, _Reversed(k), ThreadSummary(k, n, first, last, False)))
        except OperationFailure:
            yield from self._regex_rows(keys, group, limit, last_before, last_from)
            return
        odd.sort(key=lambda t: t.key)
        yield from odd
        if limit is not None:  # newest last id first, then key (code point order is UTF-8's byte order)
            yield from (t for _, _, t in sorted(page, reverse=True))
            return
        pipeline: list[dict] = [{"$match": {"thread_id": keys}}, {"$group": group}]
        window = _bounds(last_before, last_from)
        if window:
            pipeline.append({"$match": {"last": {"$type": "string", **window}}})
        pipeline.append({"$sort": {"last": -1, "_id": 1}})
        if limit is not None:  # the odd ones among these are skipped: room for them all
            pipeline.append({"$limit": int(limit) + len(odd)})
        skip = {t.key for t in odd}
        room = limit
        for doc in self.checkpoints.aggregate(pipeline, allowDiskUse=True, collation=collation):
            if doc["_id"] not in skip and isinstance(doc["_id"], str):
                yield _summary(doc, doc["_id"])._replace(odd=False)
                if room is not None:
                    room -= 1
                    if room <= 0:
                        return

    def _regex_rows(self, keys: dict, group: dict, limit: int | None, last_before: str | None, last_from: str | None) -> Iterator[ThreadSummary]:
        pipeline: list[dict] = [{"$match": {"thread_id": keys}}, {"$group": {**group, "odd": ODD_GROUP}}]
        window = _bounds(last_before, last_from)
        if window:
            pipeline.append({"$match": {"$or": [{"odd": True}, {"last": {"$type": "string", **window}}]}})
        pipeline.append({"$sort": {"odd": -1, "last": -1, "_id": 1}})
        plain = 0  # every odd thread, then ``limit`` others
        for doc in self.checkpoints.aggregate(pipeline, allowDiskUse=True, collation=self._collation(self.checkpoints)):
            if not doc.get("odd"):
                if limit is not None and plain >= limit:
                    return
                plain += 1
            yield _summary(doc, doc["_id"])._replace(odd=bool(doc.get("odd")))

    @_driver_errors  # a list or None, not a generator (activity.py tests for None)
    def _keys_heads(self, keys: list[str]) -> list[tuple] | None:
        """(key, id, ts) of every checkpoint of ``keys`` in one query (stores/activity.py), the
        ``ts`` as iter_checkpoint_heads reads it (only where the id holds no time); None for a
        batch with a document of another shape, so each thread is read alone, as it tells it."""
        from symfonic_cli.clock import checkpoint_id_time

        fields = {"_id": 0, "thread_id": 1, "checkpoint_ns": 1, "checkpoint_id": 1, "type": 1, "checkpoint": 1}
        out = []
        for doc in self.checkpoints.aggregate(keys_match(keys) + [{"$project": fields}], collation=self._collation(self.checkpoints)):
            key, cid = doc.get("thread_id"), doc.get("checkpoint_id")
            if not (isinstance(key, str) and isinstance(cid, str) and isinstance(doc.get("checkpoint_ns"), str)):
                return None
            out.append((key, cid, None if checkpoint_id_time(cid) is not None else _blob_head(doc)[0]))
        return out

    @_driver_errors
    def _window_page(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None, after: str | None, limit: int, odd: bool, upto: str | None = None) -> list[str]:
        """Keyset pagination, binary order."""
        pipeline = self._window_pipeline(tenant, sub_tenant, last_before, last_from, after, odd, upto)
        pipeline += [{"$sort": {"_id": 1}}, {"$limit": int(limit)}, {"$project": {"_id": 1}}]
        # The collation makes $gt and $sort agree in byte order.
        return [doc["_id"] for doc in self.checkpoints.aggregate(pipeline, collation=self._collation(self.checkpoints))]

    @_driver_errors
    def _window_tally(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None) -> int:
        pipeline = self._window_pipeline(tenant, sub_tenant, last_before, last_from, None, False) + [{"$count": "n"}]
        for doc in self.checkpoints.aggregate(pipeline, collation=self._collation(self.checkpoints)):
            return int(doc["n"])
        return 0

    def _window_pipeline(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None, after: str | None, odd: bool, upto: str | None = None) -> list[dict]:
        match: dict = dict(A_KEY)
        if tenant is not None:
            match.update(_prefix_range(tenant_prefix(_string_literal(tenant, "tenant"), sub_tenant)))
        if after is not None:
            lower = _string_literal(after, "thread key")
            if "$gte" in match and match["$gte"] > lower:
                pass  # the prefix's lower end is already above the last key
            else:
                match.pop("$gte", None)
                match["$gt"] = lower
        if upto is not None:
            upper = _string_literal(upto, "thread key")
            if "$lt" in match and match["$lt"] <= upper:
                pass  # the prefix's upper end is already below it
            else:
                match.pop("$lt", None)
                match["$lte"] = upper
        kept: dict = {"odd": True} if odd else {"odd": False, "last": {"$type": "string", **_bounds(last_before, last_from)}}
        return [
            {"$match": {"thread_id": match}},
            {"$group": {"_id": "$thread_id", "last": {"$max": "$checkpoint_id"}, "odd": ODD_GROUP}},
            {"$match": kept},
        ]

    @_driver_errors
    def thread_summary(self, key: str) -> ThreadSummary | None:
        pipeline = [
            {"$match": _key_is(key)},
            {"$group": {"_id": None, "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"},
                        "odd": ODD_GROUP}},
        ]
        for doc in self.checkpoints.aggregate(pipeline, collation=self._collation(self.checkpoints)):
            if doc["n"]:
                return _summary(doc, key)._replace(odd=bool(doc.get("odd")))
        return None

    def _distinct_count(self, collection: Collection[Any], field: str) -> int:
        # Keys are strings: other values (an array thread_id) are no thread's key.
        pipeline: list[dict[str, Any]] = [{"$match": {field: A_KEY}}, {"$group": {"_id": f"${field}"}}, {"$count": "n"}]
        for doc in collection.aggregate(pipeline, collation=self._collation(collection)):
            return int(doc["n"])
        return 0

    def _stats(self, collection: Collection[Any]) -> dict[str, Any]:
        """Sizes through ``$collStats``; the ``collStats`` command when the stage gives no sizes."""
        from pymongo.errors import OperationFailure

        stats: dict[str, Any] = {}
        try:
            for doc in collection.aggregate([{"$collStats": {"storageStats": {}}}], collation=None):  # no key compared
                stats = doc.get("storageStats") or {}
        except OperationFailure:
            stats = {}
        if not stats.get("size") and stats.get("count", 1):
            try:
                stats = self.db.command("collStats", collection.name)
            except OperationFailure:
                pass
        return stats

    @_driver_errors
    def info(self) -> StoreInfo:
        threads = self._distinct_count(self.checkpoints, "thread_id")
        checkpoints = self._count(self.checkpoints)
        writes = self._count(self.writes)
        namespaces = self._distinct_count(self.checkpoints, "checkpoint_ns")
        details: dict[str, Any] = {"database": self.db_name}
        warnings = []
        for role, coll, wanted in (("checkpoints", self.checkpoints, CHECKPOINT_INDEX), ("writes", self.writes, WRITES_INDEX)):
            stats = self._stats(coll)
            indexes = list(coll.list_indexes())
            details[f"{role} collection"] = coll.name
            details[f"{role} size"] = stats.get("size")
            details[f"{role} storage size"] = stats.get("storageSize")
            details[f"{role} index size"] = stats.get("totalIndexSize")
            details[f"{role} indexes"] = [f"{ix['name']} {_key_text(ix['key'])}" for ix in indexes]
            if not any(list(ix["key"].items()) == wanted for ix in indexes):
                warnings.append(
                    f"collection '{coll.name}' lacks the saver's index {_key_text(dict(wanted))}: every read is a full collection scan"
                )
        for role, coll in (("checkpoint", self.checkpoints), ("write", self.writes)):
            keyless = self._count(coll, {"$nor": [{"thread_id": A_KEY}]})
            if keyless:
                warnings.append(
                    f"{keyless} {role} document{'s' if keyless != 1 else ''} in '{coll.name}' "
                    f"{'have' if keyless != 1 else 'has'} a thread_id that is not a string (an array, say): no thread's key, never read as part of a thread"
                )
        details["namespaces"] = namespaces
        details["schema variant"] = "MongoDBSaver (checkpoint blob, metadata key by key)"
        details["server version"] = self.client.admin.command("buildInfo").get("version")
        details["transactions"] = "supported" if self._supports_transactions() else "not supported (standalone server)"
        census = self.encryption_census()
        details["encryption"] = census.describe()
        if census.finding():
            details["finding: plaintext values"] = census.finding()
        if warnings:
            details["warning"] = "; ".join(warnings)
        return StoreInfo("mongodb", self.location.display, threads, checkpoints, writes, details)

    @_driver_errors
    def encryption_census(self):
        """Checkpoints and writes by encryption (``model/encryption.py``), grouped on the server."""
        from symfonic_cli.model.encryption import EncryptionCensus

        is_enc = {"$gte": [{"$indexOfCP": [{"$ifNull": ["$type", ""]}, "+"]}, 0]}
        enc = plain = 0
        for coll in (self.checkpoints, self.writes):
            for row in coll.aggregate([{"$match": {"type": {"$type": "string"}}}, {"$group": {"_id": is_enc, "n": {"$sum": 1}}}],
                                      collation=self._collation(coll)):
                if row["_id"]:
                    enc += row["n"]
                else:
                    plain += row["n"]
        first: set[str] = set()
        if enc and plain:
            for coll in (self.checkpoints, self.writes):
                for row in coll.aggregate([
                    {"$match": {"type": {"$type": "string"}}}, {"$match": {"$expr": {"$not": [is_enc]}}},
                    {"$group": {"_id": "$checkpoint_id"}}, {"$sort": {"_id": 1}}, {"$limit": 5},
                ], collation=self._collation(coll)):
                    if isinstance(row["_id"], str):
                        first.add(row["_id"])
        return EncryptionCensus(enc, plain, tuple(sorted(first)[:5]))

    # -- one thread

    @_driver_errors
    def read_checkpoint(
        self,
        key: str,
        *,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        channels: tuple[str, ...] = ("messages",),
    ) -> CheckpointRecord | None:
        from symfonic_cli.codec.strict import collect_blocked, loads
        from symfonic_cli.model.checkpoint import CheckpointRecord

        query = {**_key_is(key), "checkpoint_ns": _string_literal(checkpoint_ns, "namespace")}
        if checkpoint_id is not None:
            query["checkpoint_id"] = _string_literal(checkpoint_id, "checkpoint id")
        doc = self.checkpoints.find_one(query, _CHECKPOINT_FIELDS, sort=[("checkpoint_id", -1)], collation=self._collation(self.checkpoints))
        if doc is None:
            return None
        cid = _field(doc, "checkpoint_id", str, None)
        with collect_blocked() as blocked:
            checkpoint = loads(_field(doc, "type", str, cid), _field(doc, "checkpoint", bytes, cid), what=f"checkpoint {cid}")
            metadata = _loads_metadata(doc.get("metadata"), cid)
        if not isinstance(checkpoint, dict):
            raise StoreError(f"checkpoint {cid} does not decode to a checkpoint mapping")
        values = checkpoint.get("channel_values") or {}
        parent = doc.get("parent_checkpoint_id")
        return CheckpointRecord(
            thread_id=key,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=cid,
            parent_checkpoint_id=parent if isinstance(parent, str) and parent else None,
            ts=checkpoint.get("ts"),
            metadata=metadata if isinstance(metadata, dict) else {},
            channel_values={ch: values[ch] for ch in channels if ch in values},
            channel_versions=dict(checkpoint.get("channel_versions") or {}),
            blocked=frozenset(blocked),
        )

    @_driver_errors_iter
    def iter_message_states(self, key: str) -> Iterator[MessageState]:
        from symfonic_cli.model.checkpoint import MessageState

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "type": 1, "checkpoint": 1, "parent_checkpoint_id": 1}
        for doc in self._thread_docs(key, fields, descending=True):
            cid = _field(doc, "checkpoint_id", str, None)
            parent = doc.get("parent_checkpoint_id")
            yield MessageState(
                _key_field(doc, "checkpoint_ns"), cid, None, cid, "checkpoint",
                _field(doc, "type", str, cid), _field(doc, "checkpoint", bytes, cid),
                parent if isinstance(parent, str) and parent else None,
            )

    @_driver_errors
    def read_message_state(self, key: str, *, checkpoint_id: str | None = None) -> MessageState | None:
        from symfonic_cli.model.checkpoint import MessageState

        query = {**_key_is(key), "checkpoint_ns": ""}
        if checkpoint_id is not None:
            query["checkpoint_id"] = _string_literal(checkpoint_id, "checkpoint id")
        fields = {"_id": 0, "checkpoint_id": 1, "type": 1, "checkpoint": 1}
        doc = self.checkpoints.find_one(query, fields, sort=[("checkpoint_id", -1)], collation=self._collation(self.checkpoints))
        if doc is None:
            return None
        cid = _field(doc, "checkpoint_id", str, None)
        return MessageState("", cid, None, cid, "checkpoint", _field(doc, "type", str, cid), _field(doc, "checkpoint", bytes, cid))

    # -- timestamps (protocol docstrings in stores/protocol.py): heads from each blob's first bytes

    @_driver_errors_iter
    def iter_checkpoint_heads(self, key: str) -> Iterator["CheckpointHead"]:
        from symfonic_cli.model.checkpoint import CheckpointHead

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "parent_checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata.source": 1, "metadata.step": 1}
        for doc in self._thread_docs(key, fields, descending=False):
            cid = _field(doc, "checkpoint_id", str, None)
            ts, count = _blob_head(doc)
            meta = found if isinstance(found := doc.get("metadata"), dict) else {}
            try:
                source, step = _leaf(meta.get("source"), cid), _leaf(meta.get("step"), cid)
            except StoreError:  # odd metadata: the resolver takes its exact walk
                source = step = None
            parent = doc.get("parent_checkpoint_id")
            yield CheckpointHead(
                _key_field(doc, "checkpoint_ns"), cid, parent if isinstance(parent, str) and parent else None,
                ts, source if isinstance(source, str) else None, count,
                step if isinstance(step, int) and not isinstance(step, bool) else None,
            )

    @_driver_errors_iter
    def iter_message_writes(self, key: str) -> Iterator["MessageWrite"]:
        from symfonic_cli.model.checkpoint import MessageWrite

        fields = {"_id": 0, "thread_id": 1, "checkpoint_ns": 1, "checkpoint_id": 1, "task_id": 1, "idx": 1, "type": 1, "value": 1, "task_path": 1}
        # The saver's own query shape, so the server lists the writes in the order MongoDBSaver's
        # DeltaChannel rebuild replays them (writes_replay_order); a non-string key is no thread's.
        query = {"thread_id": _string_literal(key, "thread key"), "channel": "messages"}
        for doc in self.writes.find(query, fields, collation=self._collation(self.writes)):
            if not isinstance(doc.get("thread_id"), str):
                continue
            value = doc.get("value")
            idx, type_ = doc.get("idx"), doc.get("type")
            yield MessageWrite(
                _key_field(doc, "checkpoint_ns"), _key_field(doc, "checkpoint_id"), _key_field(doc, "task_id"),
                idx if isinstance(idx, int) else None, type_ if isinstance(type_, str) else None,
                bytes(value) if isinstance(value, (bytes, bytearray)) else None,
                doc["task_path"] if isinstance(doc.get("task_path"), str) else "",
            )



# The saver's unique compound indexes; without them every thread read is a collection scan.
CHECKPOINT_INDEX = [("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1)]


WRITES_INDEX = CHECKPOINT_INDEX + [("task_id", 1), ("idx", 1)]


_CHECKPOINT_FIELDS = {"_id": 0, "checkpoint_id": 1, "parent_checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata": 1}


def _blob_head(doc: dict) -> tuple:
    """``(ts, message count)`` from a checkpoint document's blob; Nones where it cannot tell."""
    from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

    blob = doc.get("checkpoint")
    if doc.get("type") == "msgpack+aes" and isinstance(blob, bytes):
        return encrypted_blob_head(doc["type"], blob)
    if doc.get("type") == "msgpack" and isinstance(blob, bytes):
        try:
            return checkpoint_blob_head(blob)
        except (NeedMore, ValueError):
            pass
    return None, None


def _joined_rows(docs: Iterator[dict]) -> Iterator[tuple]:
    """``(key, count, min id, max id, ids joined)`` of each $group document;
    None for the joined ids when one is not a string."""
    for doc in docs:
        t = _summary(doc, doc["_id"])
        ids = doc["ids"]
        yield t.key, t.checkpoints, t.first_checkpoint_id, t.last_checkpoint_id, ",".join(ids) if all(type(i) is str for i in ids) else None


def _summary(doc: dict, key: Any) -> ThreadSummary:
    # Ids sort as strings only when every one is a string (BSON orders numbers before strings).
    for name, value in (("thread_id", key), ("checkpoint_id", doc.get("first")), ("checkpoint_id", doc.get("last"))):
        if not isinstance(value, str):
            where = f" of thread '{key}'" if isinstance(key, str) else ""
            raise StoreError(
                f"a checkpoint document{where} has an unexpected shape: '{name}' is {type(value).__name__} "
                f"({_short(value)}), not a string"
            )
    return ThreadSummary(key, int(doc["n"]), doc["first"], doc["last"])


def _key_text(key: Any) -> str:
    return "(" + ", ".join(f"{k}: {v}" for k, v in dict(key).items()) + ")"
