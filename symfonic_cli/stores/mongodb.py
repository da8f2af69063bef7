"""MongoDB stores written by ``langgraph-checkpoint-mongodb`` (``MongoDBSaver``).

Collections ``checkpoints`` and ``checkpoint_writes`` by default. A checkpoint document holds the
serialized checkpoint as one ``(type, bytes)`` pair and its metadata key by key, each value a
serialized ``[type, bytes]`` pair. The saver is never constructed for reading (its constructor
builds indexes): documents are read with pymongo and decoded as the saver decodes them, with the
strict decoder. Inspecting commands only send read commands (find, aggregate, listIndexes, ...).
"""

from __future__ import annotations

import functools
import heapq
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.metadata_json import MetadataError
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.stores.base import StoreInfo, SupportsWith, ThreadSummary
from symfonic_cli.stores.translate import error_translators
from symfonic_cli.threadkey import prefix_upper_bound, tenant_prefix

if TYPE_CHECKING:
    from symfonic_cli.stores.checkpoint_rows import CheckpointRecord, MessageState
    from symfonic_cli.stores.erase_rows import ExtraTable, ThreadErasePlan
    from symfonic_cli.threadstate.listing import ThreadRunState
    from symfonic_cli.threadstate.rows import ThreadRunRows
    from symfonic_cli.stores.history_rows import CheckpointFacts, WriteChannel

PASSWORD_ENV = "SYMFONIC_MONGO_PASSWORD"
DEFAULT_CHECKPOINTS = "checkpoints"
DEFAULT_WRITES = "checkpoint_writes"
# The saver's unique compound indexes; without them every thread read is a collection scan.
CHECKPOINT_INDEX = [("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1)]
WRITES_INDEX = CHECKPOINT_INDEX + [("task_id", 1), ("idx", 1)]
TRANSACTION_RETRY_SECONDS = 60
_CHECKPOINT_FIELDS = {"_id": 0, "checkpoint_id": 1, "parent_checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata": 1}


def _plain(value: Any, what: str = "identifier") -> str:
    # A str is always a literal in a query document; anything else could become an operator.
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _error(location: StoreLocation, exc: BaseException, timeout: float | None = None) -> StoreError:
    from pymongo import errors

    where = location.display
    if isinstance(exc, errors.OperationFailure):
        code = exc.code
        if code == 18:
            return StoreError(f"authentication failed for {where}", hint=f"check the user and the password (URL or {PASSWORD_ENV})")
        if code == 13:
            return StoreError(scrub(f"not authorized on {where}: {exc.details.get('errmsg') if exc.details else exc}", location))
        msg = exc.details.get("errmsg") if exc.details else str(exc)
        return StoreError(scrub(f"MongoDB error on {where}: {msg} (code {code})", location))
    if isinstance(exc, (errors.ServerSelectionTimeoutError, errors.ConnectionFailure)):
        within = f" within {timeout:g}s" if timeout else ""
        return StoreError(f"cannot reach the MongoDB server of {where}{within}", hint="check host, port and network; --connect-timeout sets the wait")
    if isinstance(exc, (errors.ConfigurationError, errors.InvalidURI, ValueError, TypeError)):
        return StoreError(scrub(f"bad MongoDB URL {where}: {exc}", location))
    return StoreError(scrub(f"MongoDB error on {where}: {exc}", location))


def _pymongo_errors() -> tuple[type[BaseException], ...]:
    from pymongo.errors import PyMongoError

    return (PyMongoError,)


# pymongo errors become one-line store errors, the password scrubbed.
_driver_errors, _driver_errors_iter = error_translators(
    _pymongo_errors, lambda store, exc: _error(store.location, exc, store.connect_timeout)
)


def split_url(url: str) -> tuple[str, str | None, str | None, bool]:
    """``(url without the database, database, user, has a password)``; no DNS lookup (srv)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise StoreError("malformed MongoDB URL")
    end = len(rest)
    for ch in "/?":
        i = rest.find(ch)
        if i != -1:
            end = min(end, i)
    authority, tail = rest[:end], rest[end:]
    user, has_password = None, False
    if "@" in authority:
        userinfo = authority.rsplit("@", 1)[0]
        user = unquote(userinfo.split(":", 1)[0]) or None
        has_password = ":" in userinfo
    db = None
    query = ""
    if tail.startswith("/"):
        path, _, query = tail[1:].partition("?")
        db = unquote(path) or None
    elif tail.startswith("?"):
        query = tail[1:]
    base = f"{scheme}://{authority}/" + (f"?{query}" if query else "")
    return base, db, user, has_password


def _collection_name(value: Any, option: str, default: str) -> str:
    if value is None:
        return default
    name = value
    if not isinstance(name, str) or not name or "$" in name or "\x00" in name or name.startswith("system."):
        raise UsageError(f"{option} {name!r} is not a valid MongoDB collection name")
    return name


def _check_url_options(location: StoreLocation) -> None:
    """Exit 2 for a URL option pymongo refuses, with its reason on one line. pymongo itself would
    only warn (several lines on stderr) and ignore the option: a typo in readPreference or tls
    must not silently change where and how the tool reads."""
    from pymongo.errors import ConfigurationError
    from pymongo.uri_parser import split_options

    base, _, query = location.url.partition("?")
    if not query:
        return
    try:
        split_options(query, validate=True, warn=False)
        return
    except (ConfigurationError, ValueError, TypeError) as exc:
        reason = " ".join(str(exc).split())
    culprit = None
    for part in query.replace(";", "&").split("&"):
        try:
            split_options(part, validate=True, warn=False)
        except (ConfigurationError, ValueError, TypeError) as exc:
            name, _, value = part.partition("=")
            shown = "***" if "password" in name.lower() else unquote(value)
            culprit, reason = f"{unquote(name)}={shown}", " ".join(str(exc).split())
            break
    what = f"option '{culprit}'" if culprit else "options"
    raise UsageError(scrub(f"invalid MongoDB URL {what} in {location.display}: {reason}", location),
                     hint="see pymongo's URI options")


def open_store(
    location: StoreLocation,
    *,
    writable: bool = False,
    connect_timeout: float = 10,
    checkpoint_collection: str | None = None,
    writes_collection: str | None = None,
    init_target: bool = False,
    **_: Any,
) -> "MongoStore":
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    checkpoints = _collection_name(checkpoint_collection, "--checkpoint-collection", DEFAULT_CHECKPOINTS)
    writes = _collection_name(writes_collection, "--writes-collection", DEFAULT_WRITES)
    _, db_name, user, has_password = split_url(location.url)
    kwargs: dict[str, Any] = {
        "serverSelectionTimeoutMS": int(connect_timeout * 1000),
        "connectTimeoutMS": int(connect_timeout * 1000),
        "appname": "symfonic",
        "retryWrites": False,
    }
    password = os.environ.get(PASSWORD_ENV)
    if user and password and not has_password:
        kwargs["password"] = password
    _check_url_options(location)
    try:
        # The URL as given: its database is also the default authentication database.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            client = MongoClient(location.url, connect=False, **kwargs)
    except (PyMongoError, ValueError, TypeError) as exc:
        raise _error(location, exc, connect_timeout) from None
    for warning in caught:  # one line each, never Python's multi-line warning format
        from symfonic_cli.render import escape_inline

        sys.stderr.write(f"symfonic: warning: MongoDB URL: {escape_inline(scrub(' '.join(str(warning.message).split()), location))}\n")
    store = MongoStore(location, client, db_name, checkpoints, writes, writable=writable, connect_timeout=connect_timeout)
    try:
        if writable and init_target and db_name:
            store._init_target()
        store._check()
    except BaseException:
        client.close()
        raise
    return store


class MongoStore(SupportsWith):
    kind = "mongodb"

    def __init__(self, location, client, db_name, checkpoints, writes, *, writable, connect_timeout) -> None:
        self.location = location
        self.client = client
        self.db_name = db_name
        self.checkpoints_name = checkpoints
        self.writes_name = writes
        self.writable = writable
        self.connect_timeout = connect_timeout
        self._transactions: bool | None = None

    def close(self) -> None:
        self.client.close()

    @property
    def db(self):
        return self.client[self.db_name]

    @property
    def checkpoints(self):
        return self.db[self.checkpoints_name]

    @property
    def writes(self):
        return self.db[self.writes_name]

    def _collection_names(self, db_name: str, names: list[str]) -> set[str]:
        res = self.client[db_name].command(
            "listCollections", filter={"name": {"$in": names}}, nameOnly=True, authorizedCollections=True
        )
        return {c["name"] for c in res["cursor"]["firstBatch"]}

    @_driver_errors
    def _check(self) -> None:
        if self.db_name is None:
            found = self._databases_with(self.checkpoints_name)
            listed = ", ".join(found) if found else "none found"
            raise UsageError(
                f"no database in {self.location.display}",
                hint=f"add it to the URL (mongodb://host/DATABASE); databases with a '{self.checkpoints_name}' collection: {listed}",
            )
        have = self._collection_names(self.db_name, [self.checkpoints_name, self.writes_name])
        missing = [n for n in (self.checkpoints_name, self.writes_name) if n not in have]
        if missing:
            raise StoreError(
                f"database '{self.db_name}' of {self.location.display} is not a LangGraph checkpoint store "
                f"(missing collection{'s' if len(missing) > 1 else ''}: {', '.join(missing)})",
                hint="check the database name, --checkpoint-collection and --writes-collection",
            )

    @_driver_errors
    def _init_target(self) -> None:
        """``migrate --init-target``: the saver's own constructor creates the collections and indexes."""
        from langgraph.checkpoint.mongodb import MongoDBSaver

        MongoDBSaver(self.client, self.db_name, self.checkpoints_name, self.writes_name)

    def _databases_with(self, collection: str) -> list[str]:
        res = self.client.admin.command("listDatabases", nameOnly=True, authorizedDatabases=True)
        names = sorted(d["name"] for d in res.get("databases", []) if d.get("name") not in ("admin", "local", "config"))
        return [n for n in names if collection in self._collection_names(n, [collection])]

    # -- what is in the store

    @_driver_errors_iter
    def list_threads(
        self,
        *,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        limit: int | None = None,
    ) -> Iterator[ThreadSummary]:
        pipeline: list[dict] = []
        if tenant is not None:
            pipeline.append({"$match": {"thread_id": _prefix_range(tenant_prefix(_plain(tenant, "tenant"), sub_tenant))}})
            # only a filtered listing needs it: the unfiltered $group compares nothing
            kwargs = {"collation": BINARY}
        else:
            kwargs = {}
        pipeline += [
            {"$group": {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}},
            {"$sort": {"last": -1, "_id": 1}},
        ]
        if limit is not None:
            if limit == 0:
                return
            pipeline.append({"$limit": int(limit)})
        for doc in self.checkpoints.aggregate(pipeline, **kwargs):
            yield _summary(doc, doc["_id"])

    @_driver_errors
    def thread_summary(self, key: str) -> ThreadSummary | None:
        pipeline = [
            {"$match": {"thread_id": _plain(key, "thread key")}},
            {"$group": {"_id": None, "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}},
        ]
        for doc in self.checkpoints.aggregate(pipeline, collation=BINARY):
            if doc["n"]:
                return _summary(doc, key)
        return None

    def _count(self, collection, match: dict | None = None) -> int:
        pipeline = ([{"$match": match}] if match else []) + [{"$count": "n"}]
        for doc in collection.aggregate(pipeline, collation=BINARY):
            return int(doc["n"])
        return 0

    def _distinct_count(self, collection, field: str) -> int:
        for doc in collection.aggregate([{"$group": {"_id": f"${field}"}}, {"$count": "n"}]):
            return int(doc["n"])
        return 0

    def _stats(self, collection) -> dict[str, Any]:
        """Sizes through ``$collStats``; the ``collStats`` command when the stage gives no sizes."""
        from pymongo.errors import OperationFailure

        stats: dict[str, Any] = {}
        try:
            for doc in collection.aggregate([{"$collStats": {"storageStats": {}}}]):
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
            details[f"{role} indexes"] = ", ".join(f"{ix['name']} {_key_text(ix['key'])}" for ix in indexes)
            if not any(list(ix["key"].items()) == wanted for ix in indexes):
                warnings.append(
                    f"collection '{coll.name}' lacks the saver's index {_key_text(dict(wanted))}: every read is a full collection scan"
                )
        details["namespaces"] = namespaces
        details["schema variant"] = "MongoDBSaver (checkpoint blob, metadata key by key)"
        details["server version"] = self.client.admin.command("buildInfo").get("version")
        details["transactions"] = "supported" if self._supports_transactions() else "not supported (standalone server)"
        if warnings:
            details["warning"] = "; ".join(warnings)
        return StoreInfo("mongodb", self.location.display, threads, checkpoints, writes, details)

    def _supports_transactions(self) -> bool:
        if self._transactions is None:
            hello = self.client.admin.command("hello")
            self._transactions = bool(hello.get("setName") or hello.get("msg") == "isdbgrid") and "logicalSessionTimeoutMinutes" in hello
        return self._transactions

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
        from symfonic_cli.decoding import collect_blocked, loads
        from symfonic_cli.stores.checkpoint_rows import CheckpointRecord

        query = {"thread_id": _plain(key, "thread key"), "checkpoint_ns": _plain(checkpoint_ns, "namespace")}
        if checkpoint_id is not None:
            query["checkpoint_id"] = _plain(checkpoint_id, "checkpoint id")
        doc = self.checkpoints.find_one(query, _CHECKPOINT_FIELDS, sort=[("checkpoint_id", -1)])
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
        from symfonic_cli.stores.checkpoint_rows import MessageState

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "type": 1, "checkpoint": 1}
        for doc in self._thread_docs(key, fields, descending=True):
            cid = _field(doc, "checkpoint_id", str, None)
            yield MessageState(
                _key_field(doc, "checkpoint_ns"), cid, None, cid, "checkpoint",
                _field(doc, "type", str, cid), _field(doc, "checkpoint", bytes, cid),
            )

    @_driver_errors
    def read_message_state(self, key: str, *, checkpoint_id: str | None = None) -> MessageState | None:
        from symfonic_cli.stores.checkpoint_rows import MessageState

        query = {"thread_id": _plain(key, "thread key"), "checkpoint_ns": ""}
        if checkpoint_id is not None:
            query["checkpoint_id"] = _plain(checkpoint_id, "checkpoint id")
        fields = {"_id": 0, "checkpoint_id": 1, "type": 1, "checkpoint": 1}
        doc = self.checkpoints.find_one(query, fields, sort=[("checkpoint_id", -1)])
        if doc is None:
            return None
        cid = _field(doc, "checkpoint_id", str, None)
        return MessageState("", cid, None, cid, "checkpoint", _field(doc, "type", str, cid), _field(doc, "checkpoint", bytes, cid))

    # -- run state (``thread show``; see stores/protocol.py): the latest document per namespace,
    # read lean; sizes are the stored documents' $bsonSize, summed by the server

    @_driver_errors
    def read_run_rows(self, key: str) -> "ThreadRunRows | None":
        from symfonic_cli.threadstate.rows import RawWrite, ThreadRunRows, lean_from_blob

        key = _plain(key, "thread key")
        totals = list(self.checkpoints.aggregate([
            {"$match": {"thread_id": key}},
            {"$group": {"_id": None, "n": {"$sum": 1}, "ns": {"$addToSet": "$checkpoint_ns"}, "first": {"$min": "$checkpoint_id"},
                        "last": {"$max": "$checkpoint_id"}, "size": {"$sum": {"$bsonSize": "$$ROOT"}}}},
        ]))
        if not totals or not totals[0].get("n"):
            return None
        t = totals[0]
        size = int(t.get("size") or 0)
        wsize = list(self.writes.aggregate([
            {"$match": {"thread_id": key}}, {"$group": {"_id": None, "size": {"$sum": {"$bsonSize": "$$ROOT"}}}},
        ]))
        if wsize:
            size += int(wsize[0].get("size") or 0)
        latest = []
        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata": 1}
        for ns in sorted(n for n in t.get("ns") or [] if isinstance(n, str)):
            doc = self.checkpoints.find_one({"thread_id": key, "checkpoint_ns": ns}, fields, sort=[("checkpoint_id", -1)])
            if doc is None:
                continue
            cid = _field(doc, "checkpoint_id", str, None)
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
            try:
                meta = {k: _leaf(meta.get(k), cid) for k in ("step", "source") if k in meta}
            except StoreError:
                meta = {}
            latest.append(lean_from_blob(ns, cid, doc.get("type"), _field(doc, "checkpoint", bytes, cid), meta))
        latest.sort(key=lambda l: (l.checkpoint_ns != "", l.checkpoint_ns))
        writes = []
        for l in latest:
            for doc in self.writes.find(
                {"thread_id": key, "checkpoint_ns": _plain(l.checkpoint_ns, "namespace"), "checkpoint_id": _plain(l.checkpoint_id, "checkpoint id")},
                {"_id": 0, "task_id": 1, "task_path": 1, "idx": 1, "channel": 1, "type": 1, "value": 1},
            ).sort([("task_id", 1), ("idx", 1)]):
                value = doc.get("value")
                channel = doc.get("channel")
                writes.append(RawWrite(
                    l.checkpoint_ns, l.checkpoint_id, str(doc.get("task_id")), doc.get("task_path") if isinstance(doc.get("task_path"), str) else None,
                    doc.get("idx") if isinstance(doc.get("idx"), int) else 0, channel if isinstance(channel, str) else "",
                    doc.get("type") if isinstance(doc.get("type"), str) else None,
                    bytes(value) if isinstance(value, (bytes, bytearray)) else None,
                ))
        return ThreadRunRows(latest, writes, int(t["n"]), len(t.get("ns") or []), size, t.get("first"), t.get("last"))

    _RUN_BATCH = 500

    @_driver_errors_iter
    def iter_run_states(
        self, *, prefix: str | None = None, with_size: bool = False, with_status: bool = True
    ) -> Iterator["ThreadRunState"]:
        """Counts, ids and sizes ($bsonSize) grouped by the server; the latest root documents and
        their writes fetched a batch of threads at a time; each blob's version maps read from its
        tail (``threadstate.listing.status_from_tail``), the blob read whole only when that fails."""
        from symfonic_cli.threadstate.listing import ThreadRunState, status_from_tail

        match = {"thread_id": _prefix_range(_plain(prefix, "prefix"))} if prefix else {}
        group: dict = {"_id": "$thread_id", "n": {"$sum": 1}, "first": {"$min": "$checkpoint_id"}, "last": {"$max": "$checkpoint_id"}}
        if with_size:
            group["size"] = {"$sum": {"$bsonSize": "$$ROOT"}}
        summary = self.checkpoints.aggregate([{"$match": match}, {"$group": group}, {"$sort": {"_id": 1}}], allowDiskUse=True)
        write_sizes = None
        if with_size:
            write_sizes = self.writes.aggregate([
                {"$match": match}, {"$group": {"_id": "$thread_id", "size": {"$sum": {"$bsonSize": "$$ROOT"}}}}, {"$sort": {"_id": 1}},
            ], allowDiskUse=True)
        latest = None
        if with_status:
            latest = self.checkpoints.aggregate([
                {"$match": {**match, "checkpoint_ns": ""}}, {"$group": {"_id": "$thread_id", "cid": {"$max": "$checkpoint_id"}}},
                {"$sort": {"_id": 1}},
            ], allowDiskUse=True)
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
            if latest is not None:
                while nxt_latest is not None and str(nxt_latest["_id"]) < key:
                    nxt_latest = next(latest, None)
                if nxt_latest is not None and nxt_latest["_id"] == key:
                    cid = nxt_latest.get("cid") if isinstance(nxt_latest.get("cid"), str) else None
                    nxt_latest = next(latest, None)
            batch.append((doc, cid))
            if len(batch) >= self._RUN_BATCH:
                yield from self._run_batch(batch, with_size, with_status, ThreadRunState, status_from_tail)
                batch = []
        if batch:
            yield from self._run_batch(batch, with_size, with_status, ThreadRunState, status_from_tail)

    def _run_batch(self, batch, with_size, with_status, ThreadRunState, status_from_tail):
        docs: dict[str, dict] = {}
        flags: dict[str, dict] = {}
        pairs = [{"thread_id": d["_id"], "checkpoint_ns": "", "checkpoint_id": cid} for d, cid in batch if cid is not None]
        if with_status and pairs:
            for doc in self.checkpoints.find({"$or": pairs}, {"_id": 0, "thread_id": 1, "checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata.step": 1}):
                docs[doc.get("thread_id")] = doc
            for w in self.writes.find({"$or": pairs}, {"_id": 0, "thread_id": 1, "task_id": 1, "task_path": 1, "channel": 1}):
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
                meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
                try:
                    step = _leaf(meta.get("step"), cid)
                except StoreError:
                    step = None
                at = blob.find(b"\xb0channel_versions") if blob else -1
                task_flags = {tid: tuple(f) for tid, f in flags.get(key, {}).items()}
                status = status_from_tail(
                    cid, step, doc.get("type"), blob[:4] if blob else None, blob[at:] if at > 0 else None,
                    len(blob) if blob else None, task_flags,
                    whole=lambda doc=doc, blob=blob, step=step: (doc.get("type"), blob, {"step": step}),
                )
            yield ThreadRunState(key, int(d["n"]), d.get("first"), d.get("last"), status, d["size"] if with_size else None)

    # -- erase

    def _require_writable(self) -> None:
        if not self.writable:
            raise StoreError(f"{self.location.display} is open read-only")

    def _cascade(self, extra: tuple[ExtraTable, ...], key: str):
        """``(name, collection, filter or None)`` in delete order: extras, writes, checkpoints."""
        out = []
        for table in extra:
            pairs = table.filters(key)
            # None: a null or absent field (how the deployment stores a missing sub-tenant)
            flt = None if pairs is None else {_plain(col, "field"): (None if val is None else _plain(val, "value")) for col, val in pairs}
            out.append((table.name, self.db[table.name], flt))
        out.append((self.writes_name, self.writes, {"thread_id": key}))
        out.append((self.checkpoints_name, self.checkpoints, {"thread_id": key}))
        return out

    @_driver_errors
    def erase_prepare(self, extra: tuple[ExtraTable, ...], *, dry_run: bool = False) -> list[str]:
        # The same client reads and erases: a dry run makes every check below, deleting nothing.
        if not dry_run:
            self._require_writable()
        hello = self.client.admin.command("hello")
        if not hello.get("isWritablePrimary", hello.get("ismaster", False)):
            raise StoreError(f"{self.location.display} is not a writable primary (read-only member)")
        names = [t.name for t in extra]
        if names:
            have = self._collection_names(self.db_name, names)
            missing = [n for n in names if n not in have]
            if missing:
                raise StoreError(f"declared erase_extra collection{'s' if len(missing) > 1 else ''} missing in '{self.db_name}': {', '.join(missing)}")
        self._check_remove_privilege([self.checkpoints_name, self.writes_name, *names])
        if self._supports_transactions():
            return []
        return ["MongoDB standalone server without multi-document transactions: deleted in a fixed order, writes first, checkpoints last; not atomic"]

    def _check_remove_privilege(self, names: list[str]) -> None:
        auth = self.client.admin.command("connectionStatus", showPrivileges=True).get("authInfo", {})
        if not auth.get("authenticatedUsers"):
            return
        privileges = auth.get("authenticatedUserPrivileges") or []
        roles = {r.get("role") for r in auth.get("authenticatedUserRoles") or []}
        if privileges:
            for name in names:
                if not any(
                    "remove" in p.get("actions", [])
                    and p.get("resource", {}).get("db") in (self.db_name, "")
                    and p.get("resource", {}).get("collection") in (name, "")
                    for p in privileges
                ):
                    raise StoreError(f"the user of {self.location.display} may not remove documents from '{name}'")
        elif roles and roles <= {"read", "readAnyDatabase", "clusterMonitor"}:
            raise StoreError(f"the user of {self.location.display} has only read roles ({', '.join(sorted(roles))})")

    @_driver_errors
    def thread_keys_with_prefix(self, prefix: str) -> list[str]:
        match = {"thread_id": _prefix_range(_plain(prefix, "prefix"))} if prefix else {}
        keys: set[str] = set()
        for coll in (self.checkpoints, self.writes):
            pipeline = ([{"$match": match}] if match else []) + [{"$group": {"_id": "$thread_id"}}]
            keys.update(d["_id"] for d in coll.aggregate(pipeline, collation=BINARY) if isinstance(d["_id"], str))
        return sorted(keys)  # code point order is UTF-8 byte order

    @_driver_errors
    def erase_plan(self, key: str, extra: tuple[ExtraTable, ...]) -> ThreadErasePlan:
        from symfonic_cli.stores.erase_rows import ThreadErasePlan

        key = _plain(key, "thread key")
        rows = {name: (self._count(coll, flt) if flt is not None else 0) for name, coll, flt in self._cascade(extra, key)}
        summary = self.thread_summary(key)
        return ThreadErasePlan(
            key, rows, summary.first_checkpoint_id if summary else None, summary.last_checkpoint_id if summary else None
        )

    @_driver_errors
    def erase_thread(
        self,
        key: str,
        extra: tuple[ExtraTable, ...],
        *,
        between: Callable[[str], None] | None = None,
        expected: dict[str, int] | None = None,
    ) -> dict[str, int]:
        from symfonic_cli.stores.erase_rows import check_against_plan

        self._require_writable()
        key = _plain(key, "thread key")
        cascade = self._cascade(extra, key)

        def run(session) -> dict[str, int]:
            deleted: dict[str, int] = {}
            for name, coll, flt in cascade:
                deleted[name] = coll.delete_many(flt, session=session, collation=BINARY).deleted_count if flt is not None else 0
                if between is not None:
                    between(name)
            check_against_plan(expected, deleted, extra)  # inside the transaction: aborted on a difference
            return deleted

        if self._supports_transactions():
            return self._transaction(run)
        # No transaction to abort: count again right before deleting, and stop on a difference.
        check_against_plan(expected, {name: (self._count(coll, flt) if flt is not None else 0) for name, coll, flt in cascade}, extra)
        expected = None  # compared already: run() reads this variable and now deletes without comparing
        return run(None)

    @_driver_errors
    def remaining_rows(self, key: str, extra: tuple[ExtraTable, ...]) -> dict[str, int]:
        key = _plain(key, "thread key")
        return {name: (self._count(coll, flt) if flt is not None else 0) for name, coll, flt in self._cascade(extra, key)}

    def erase_finish(self, *, vacuum: bool) -> list[str]:
        if vacuum:
            return ["MongoDB: no vacuum step; WiredTiger reuses the freed space (the 'compact' command returns it to the OS)"]
        return []

    # -- timestamps (protocol docstrings in stores/protocol.py): heads from each blob's first bytes

    @_driver_errors_iter
    def iter_checkpoint_heads(self, key: str) -> Iterator["CheckpointHead"]:
        from symfonic_cli.stores.checkpoint_rows import CheckpointHead
        from symfonic_cli.timestamps import NeedMore, checkpoint_blob_head

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "parent_checkpoint_id": 1, "type": 1, "checkpoint": 1, "metadata.source": 1, "metadata.step": 1}
        for doc in self._thread_docs(key, fields, descending=False):
            cid = _field(doc, "checkpoint_id", str, None)
            ts = count = None
            if doc.get("type") == "msgpack" and isinstance(doc.get("checkpoint"), bytes):
                try:
                    ts, count = checkpoint_blob_head(doc["checkpoint"])
                except (NeedMore, ValueError):
                    ts = count = None
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
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
        from symfonic_cli.stores.checkpoint_rows import MessageWrite

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "task_id": 1, "idx": 1, "type": 1, "value": 1}
        for doc in self.writes.find({"thread_id": _plain(key, "thread key"), "channel": "messages"}, fields):
            value = doc.get("value")
            idx, type_ = doc.get("idx"), doc.get("type")
            yield MessageWrite(
                _key_field(doc, "checkpoint_ns"), _key_field(doc, "checkpoint_id"), _key_field(doc, "task_id"),
                idx if isinstance(idx, int) else None, type_ if isinstance(type_, str) else None,
                bytes(value) if isinstance(value, (bytes, bytearray)) else None,
            )

    # -- history (protocol docstrings in stores/protocol.py): metadata and write channels, no value decoded

    @_driver_errors_iter
    def iter_checkpoint_facts(self, key: str) -> Iterator["CheckpointFacts"]:
        from symfonic_cli.stores.history_rows import CheckpointFacts

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "metadata.source": 1, "metadata.step": 1, "metadata.writes": 1}
        for doc in self._thread_docs(key, fields, descending=False):
            cid = _field(doc, "checkpoint_id", str, None)
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
            try:
                source, step, writes = _leaf(meta.get("source"), cid), _leaf(meta.get("step"), cid), _leaf(meta.get("writes"), cid)
            except StoreError:  # odd metadata: shown as unknown
                source = step = writes = None
            yield CheckpointFacts(
                doc.get("checkpoint_ns", ""), cid, source if isinstance(source, str) else None,
                step if isinstance(step, int) and not isinstance(step, bool) else None, writes,
            )

    @_driver_errors_iter
    def iter_write_channels(self, key: str) -> Iterator["WriteChannel"]:
        from symfonic_cli.stores.history_rows import WriteChannel

        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1, "task_id": 1, "task_path": 1, "idx": 1, "channel": 1}
        for doc in self.writes.find({"thread_id": _plain(key, "thread key")}, fields):
            path = doc.get("task_path")
            yield WriteChannel(
                doc.get("checkpoint_ns", ""), doc.get("checkpoint_id"), doc.get("task_id"),
                path if isinstance(path, str) else "", doc.get("idx"), doc.get("channel"),
            )

    @_driver_errors
    def checkpoint_ids(self, key: str) -> list[tuple[str, str]]:
        fields = {"_id": 0, "checkpoint_ns": 1, "checkpoint_id": 1}
        return [
            (doc.get("checkpoint_ns", ""), doc.get("checkpoint_id"))
            for doc in self.checkpoints.find({"thread_id": _plain(key, "thread key")}, fields)
            if isinstance(doc.get("checkpoint_id"), str)
        ]

    @_driver_errors
    def read_messages_as_stored(self, key: str, *, checkpoint_ns: str, checkpoint_id: str) -> MessageState | None:
        from symfonic_cli.stores.checkpoint_rows import MessageState

        query = {
            "thread_id": _plain(key, "thread key"),
            "checkpoint_ns": _plain(checkpoint_ns, "namespace"),
            "checkpoint_id": _plain(checkpoint_id, "checkpoint id"),
        }
        doc = self.checkpoints.find_one(query, {"_id": 0, "type": 1, "checkpoint": 1})
        if doc is None:
            return None
        return MessageState(
            checkpoint_ns, checkpoint_id, None, checkpoint_id, "checkpoint",
            _field(doc, "type", str, checkpoint_id), _field(doc, "checkpoint", bytes, checkpoint_id),
        )

    def _thread_docs(self, key: str, fields: dict, *, descending: bool) -> Iterator[dict]:
        """A thread's checkpoint documents ordered by checkpoint_id over every namespace: one
        index-ordered cursor per namespace, merged here (no server-side sort of whole blobs)."""
        key = _plain(key, "thread key")
        namespaces = sorted(
            _key_field({"checkpoint_ns": d["_id"]}, "checkpoint_ns")
            for d in self.checkpoints.aggregate([{"$match": {"thread_id": key}}, {"$group": {"_id": "$checkpoint_ns"}}])
        )
        order = -1 if descending else 1
        cursors = [
            self.checkpoints.find({"thread_id": key, "checkpoint_ns": _plain(ns, "namespace")}, fields).sort(
                [("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", order)]
            )
            for ns in namespaces
        ]
        try:
            yield from heapq.merge(*cursors, key=lambda d: str(d.get("checkpoint_id")), reverse=descending)
        finally:
            for c in cursors:
                c.close()

    # -- compat (protocol docstrings in stores/protocol.py): metadata only, grouped on the server

    @_driver_errors_iter
    def envelope_shapes(self, envelope_key: str, *, older_than: str | None = None):
        from symfonic_cli.stores.envelope_rows import EnvelopeShape

        env = {"$getField": {"field": {"$literal": _plain(envelope_key, "envelope key")}, "input": "$metadata"}}
        # Metadata that is not a document holds no envelope (as iter_envelopes reads it): missing.
        env = {"$cond": [{"$eq": [{"$type": "$metadata"}, "object"]}, env, "$$REMOVE"]}
        is_obj = {"$eq": [{"$type": "$env"}, "object"]}
        project: dict[str, Any] = {"_id": 0, "kind": {"$type": "$env"}, "raw": {"$cond": [is_obj, None, "$env"]}, "older": 1, "latest": 1}
        for f in _ENVELOPE_FIELDS:
            project[f] = {"$cond": [is_obj, {"$getField": {"field": f, "input": "$env"}}, None]}
        bs = {"$cond": [is_obj, {"$getField": {"field": "boundary_sequence", "input": "$env"}}, None]}
        pipeline = [
            {"$setWindowFields": {
                "partitionBy": {"t": "$thread_id", "ns": "$checkpoint_ns"},
                "sortBy": {"checkpoint_id": -1},
                "output": {"_rank": {"$documentNumber": {}}},
            }},
            {"$project": {
                "_id": 0,
                "env": env,
                "older": {"$lt": ["$checkpoint_id", older_than]} if older_than is not None else {"$literal": False},
                "latest": {"$cond": [{"$and": [{"$eq": ["$checkpoint_ns", ""]}, {"$eq": ["$_rank", 1]}]}, 1, 0]},
            }},
            {"$project": {**project, "bs": bs}},
            {"$project": {
                **{k: 1 for k in project if k != "_id"}, "_id": 0,
                "bs_type": {"$cond": [{"$isArray": "$bs"}, {"$arrayElemAt": ["$bs", 0]}, {"$type": "$bs"}]},
                "bs_bin": {"$cond": [{"$isArray": "$bs"}, {"$arrayElemAt": ["$bs", 1]}, None]},
            }},
            {"$group": {
                "_id": {
                    "kind": "$kind", "raw": "$raw", "older": "$older", "bs_type": "$bs_type",
                    "bs_size": {"$cond": [{"$eq": [{"$type": "$bs_bin"}, "binData"]}, {"$binarySize": "$bs_bin"}, None]},
                    **{f: f"${f}" for f in _ENVELOPE_FIELDS},
                },
                "n": {"$sum": 1}, "latest": {"$sum": "$latest"},
                "bs_min": {"$min": "$bs_bin"}, "bs_max": {"$max": "$bs_bin"},
            }},
        ]
        for doc in self.checkpoints.aggregate(pipeline, allowDiskUse=True):
            g = doc["_id"]
            counts = {"older": bool(g.get("older")), "checkpoints": int(doc["n"]), "latest": int(doc["latest"])}
            try:
                kind, fields = _envelope_kind(g.get("kind"), g.get("raw")), {}
                if kind == "object":
                    for f in _ENVELOPE_FIELDS:
                        fields[f] = _shape_value(g.get(f), f)
                    fields["boundary_sequence"] = _sequence_placeholder(g.get("bs_type"), doc.get("bs_min"), doc.get("bs_max"))
            except MetadataError as exc:  # as iter_envelopes reports the same checkpoints
                yield EnvelopeShape("absent", error=exc.reason, **counts)
                continue
            yield EnvelopeShape(kind, **fields, **counts)

    @_driver_errors_iter
    def iter_envelopes(self, envelope_key: str, *, thread: str | None = None):
        from symfonic_cli.stores.envelope_rows import ABSENT, EnvelopeRow

        query = {} if thread is None else {"thread_id": _plain(thread, "thread key")}
        fields = {"_id": 0, "thread_id": 1, "checkpoint_ns": 1, "checkpoint_id": 1, "metadata": 1}
        cursor = self.checkpoints.find(query, fields).sort([("thread_id", 1), ("checkpoint_id", -1), ("checkpoint_ns", 1)])
        for doc in cursor.allow_disk_use(True):
            tid, ns, cid = (_key_field(doc, f) for f in ("thread_id", "checkpoint_ns", "checkpoint_id"))
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
            env, error = ABSENT, None
            if envelope_key in meta:
                try:
                    env = _envelope_value(meta[envelope_key])
                except MetadataError as exc:
                    env, error = ABSENT, exc.reason
            yield EnvelopeRow(tid, ns, cid, _lenient(meta.get("step")), _lenient(meta.get("source")), env, error=error)

    @_driver_errors
    def envelope_key_candidates(self, envelope_key: str, *, limit: int = 5) -> list[tuple[str, int]]:
        pipeline = [
            {"$project": {"_id": 0, "kv": {"$objectToArray": {"$ifNull": ["$metadata", {}]}}}},
            {"$unwind": "$kv"},
            {"$match": {
                "kv.k": {"$ne": _plain(envelope_key, "envelope key")},
                "kv.v.format_version": {"$exists": True}, "kv.v.writer_line": {"$exists": True},
                "kv.v": {"$type": "object"},
            }},
            {"$group": {"_id": "$kv.k", "n": {"$sum": 1}}},
            {"$sort": {"n": -1, "_id": 1}},
            {"$limit": int(limit)},
        ]
        return [(str(d["_id"]), int(d["n"])) for d in self.checkpoints.aggregate(pipeline)]

    # -- migrate (see the "migrate" section of stores/protocol.py)

    _CHECKPOINT_KEY = ("checkpoint_ns", "checkpoint_id")
    _WRITE_KEY = ("checkpoint_ns", "checkpoint_id", "task_id", "idx")

    @_driver_errors
    def export_thread(self, key: str):
        from symfonic_cli.stores.thread_copy import RawRow, ThreadExport

        key = _plain(key, "thread key")
        rows = []
        for table, coll, key_fields, sort in (
            ("checkpoints", self.checkpoints, self._CHECKPOINT_KEY, [("checkpoint_id", 1), ("checkpoint_ns", 1)]),
            ("writes", self.writes, self._WRITE_KEY, [("checkpoint_ns", 1), ("checkpoint_id", 1), ("task_id", 1), ("idx", 1)]),
        ):
            for doc in coll.find({"thread_id": key}).sort(sort):
                data = {k: _plain_value(v) for k, v in doc.items() if k not in ("_id", "thread_id", "created_at", *key_fields)}
                rows.append(RawRow(table, tuple(doc.get(f) for f in key_fields), data))
        return ThreadExport("mongodb", key, rows)

    @_driver_errors
    def import_rows(self, key: str, rows) -> None:
        from symfonic_cli.stores.thread_copy import MigrationConflict

        key = _plain(key, "thread key")
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
        from symfonic_cli.decoding import collect_blocked, loads
        from symfonic_cli.stores.thread_copy import DecodedCheckpoint, DecodedThread, DecodedWrite

        thread = DecodedThread(key, [], [])
        for doc in self.checkpoints.find({"thread_id": _plain(key, "thread key")}, {"_id": 0}).sort([("checkpoint_id", 1), ("checkpoint_ns", 1)]):
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
        from symfonic_cli.migration import write_batches
        from symfonic_cli.stores.thread_copy import MigrationConflict

        key = _plain(key, "thread key")
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
                saver.put_writes({"configurable": {"thread_id": key, "checkpoint_ns": ns, "checkpoint_id": cid}}, batch, task_id, task_path)
            for cp, versions in zip(checkpoints, new_versions):
                config = {"configurable": {"thread_id": key, "checkpoint_ns": cp.checkpoint_ns, "checkpoint_id": cp.parent_checkpoint_id}}
                saver.put(config, cp.checkpoint, cp.metadata, versions)

        self._in_transaction(work)

    def _saver(self, session):
        """The real MongoDBSaver's writing code on our collections, bound to our session.

        Built without its constructor, which would build indexes (the target has them)."""
        from langgraph.checkpoint.base import BaseCheckpointSaver
        from langgraph.checkpoint.mongodb import MongoDBSaver
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        saver = MongoDBSaver.__new__(MongoDBSaver)
        BaseCheckpointSaver.__init__(saver)
        saver.client, saver.db = self.client, self.db
        saver.checkpoint_collection = _InSession(self.checkpoints, session)
        saver.writes_collection = _InSession(self.writes, session)
        saver.ttl = self._ttl()
        saver.serde = JsonPlusSerializer()
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
        from symfonic_cli.stores.thread_copy import migrate_fault_point

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


_ENVELOPE_FIELDS = ("format_version", "writer_line", "safe_boundary", "finalized")
_JSON_KIND = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string", list: "array", tuple: "array", dict: "object"}
_PLACEHOLDERS = {"null": None, "boolean": False, "integer": 0, "number": 0.0, "string": "", "array": [], "object": {}}
# msgpack's first byte decides the type; each range is contiguous, so min and max in one range
# mean every value between them is of that type.
_MSGPACK_RANGES = [
    (0x00, 0x7F, "integer"), (0x80, 0x8F, "object"), (0x90, 0x9F, "array"), (0xA0, 0xBF, "string"),
    (0xC0, 0xC0, "null"), (0xC2, 0xC3, "boolean"), (0xCA, 0xCB, "number"), (0xCC, 0xD3, "integer"),
    (0xD9, 0xDB, "string"), (0xDC, 0xDD, "array"), (0xDE, 0xDF, "object"), (0xE0, 0xFF, "integer"),
]


def _json_kind(value: Any) -> str:
    return _JSON_KIND.get(type(value), "object" if isinstance(value, dict) else "string" if isinstance(value, str) else "object")


def _leaf(value: Any, cid: str) -> Any:
    """One metadata value as the saver stores it (a serialized pair, or a dict of them), decoded."""
    if value is None:
        return None
    return _loads_metadata(value, cid)


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


def _lenient(value: Any) -> Any:
    """step/source for display: None when they cannot be decoded (the verdict does not use them)."""
    try:
        return None if value is None else _decode_stored(value)
    except MetadataError:
        return None


def _key_field(doc: dict, name: str) -> str:
    value = doc.get(name, "" if name == "checkpoint_ns" else None)
    if isinstance(value, str):
        return value
    raise StoreError(
        f"a checkpoint document has an unexpected shape: '{name}' is {type(value).__name__} "
        f"({_short(value)}), not a string"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# Envelope fields the store-wide report decodes (below) and iter_envelopes decodes first, in this
# order, so a value that cannot be decoded gives both the same finding.
_STRICT_FIELDS = (*_ENVELOPE_FIELDS, "boundary_sequence")


def _envelope_value(stored: Any) -> Any:
    """The envelope as MongoDBSaver's loads_metadata decodes it; MetadataError (no checkpoint id in
    the reason: the store-wide report groups by it) when a value it reads cannot be decoded."""
    if not isinstance(stored, dict):
        try:
            return _decode_stored(stored)
        except MetadataError as exc:
            raise MetadataError(f"envelope cannot be decoded: {exc.reason}") from None
    out = {}
    for f in sorted(stored, key=lambda k: (_STRICT_FIELDS.index(k) if k in _STRICT_FIELDS else len(_STRICT_FIELDS), k)):
        try:
            out[f] = _decode_stored(stored[f])
        except MetadataError as exc:
            if f in _STRICT_FIELDS:
                raise MetadataError(f"envelope field '{f}' cannot be decoded: {exc.reason}") from None
            out[f] = None  # a field the verdict does not read; shown as null
    return {k: out[k] for k in stored}


def _envelope_kind(bson_type: Any, raw: Any) -> str:
    if bson_type in (None, "missing"):
        return "absent"
    if bson_type == "object":
        return "object"
    try:
        return _json_kind(_decode_stored(raw))
    except MetadataError as exc:
        raise MetadataError(f"envelope cannot be decoded: {exc.reason}") from None


def _shape_value(stored: Any, name: str = "") -> Any:
    """A stored envelope field as the protocol's faithful value (nested containers as placeholders)."""
    from symfonic_cli.stores.envelope_rows import ABSENT

    if stored is None:
        return ABSENT
    try:
        value = _decode_stored(stored)
    except MetadataError as exc:
        raise MetadataError(f"envelope field '{name}' cannot be decoded: {exc.reason}") from None
    if isinstance(value, (list, tuple)):
        return []
    if isinstance(value, dict):
        return {}
    return value


def _sequence_placeholder(stored_type: Any, low: Any, high: Any) -> Any:
    """boundary_sequence is grouped by JSON type only: a placeholder of that type."""
    from symfonic_cli.stores.envelope_rows import ABSENT

    if stored_type in (None, "missing", "null"):
        return ABSENT
    if stored_type == "object":
        return {}
    if stored_type != "msgpack" or not isinstance(low, bytes) or not isinstance(high, bytes):
        try:
            return _PLACEHOLDERS[_json_kind(_decode_stored([stored_type, low or b""]))]
        except MetadataError as exc:
            raise MetadataError(f"envelope field 'boundary_sequence' cannot be decoded: {exc.reason}") from None
    kinds = {next((i for i, (a, b, _) in enumerate(_MSGPACK_RANGES) if a <= v[0] <= b), None) for v in (low, high)}
    if len(kinds) == 1 and None not in kinds:
        return _PLACEHOLDERS[_MSGPACK_RANGES[kinds.pop()][2]]
    raise StoreError("boundary_sequence values of mixed types in one stored size; symfonic cannot group them on this server")


def _plain_value(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict):
        return {k: _plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_value(v) for v in value]
    return value


# Strings compare by their UTF-8 bytes under the simple collation, which queries that select
# threads ask for: a collection's own default collation (case-insensitive, say) would make a key
# range or an equality reach other keys.
BINARY = {"locale": "simple"}


def _prefix_range(prefix: str) -> dict[str, str]:
    """Exactly the string keys starting with ``prefix``, under the simple collation (byte order).
    A string bound keeps the comparison to strings (BSON compares within a type bracket)."""
    hi = prefix_upper_bound(prefix)
    return {"$gte": prefix} if hi is None else {"$gte": prefix, "$lt": hi}


def _key_text(key: Any) -> str:
    return "(" + ", ".join(f"{k}: {v}" for k, v in dict(key).items()) + ")"


def _field(doc: dict, name: str, kind: type, cid: str | None) -> Any:
    value = doc.get(name)
    if kind is bytes and isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if not isinstance(value, kind):
        what = f"checkpoint {cid}" if cid else "a checkpoint document"
        raise StoreError(f"{what} has an unexpected shape: '{name}' is {type(value).__name__}, not {kind.__name__}")
    return value


def _loads_metadata(value: Any, cid: str) -> Any:
    """As the saver's ``loads_metadata``: dicts key by key, leaves are ``[type, bytes]`` pairs."""
    try:
        return _decode_stored(value)
    except MetadataError as exc:
        raise StoreError(f"metadata of checkpoint {cid}: {exc.reason}") from None


def _decode_stored(value: Any) -> Any:
    from symfonic_cli.decoding import loads

    if value is None:
        return {}
    if isinstance(value, dict):
        return {k: _decode_stored(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], (bytes, bytearray)):
        try:
            return loads(value[0], bytes(value[1]), what="the value")
        except StoreError as exc:
            raise MetadataError(exc.message) from None
    raise MetadataError(f"a value of an unexpected shape ({type(value).__name__})")
