"""What the MongoDB backend's sections share: errors, constants and small helpers."""

from __future__ import annotations

import heapq
import time
from contextlib import contextmanager
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from symfonic_cli.clock import ORDERED_ID_REGEX
from symfonic_cli.codec.metadata_json import MetadataError
from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.stores._common import error_translators
from symfonic_cli.threadkey import prefix_upper_bound

if TYPE_CHECKING:
    from pymongo.client_session import ClientSession
    from pymongo.collection import Collection

PASSWORD_ENV = "SYMFONIC_MONGO_PASSWORD"


def _string_literal(value: Any, what: str = "identifier") -> str:
    # A str is always a literal in a query document; anything else could become an operator.
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _error(location: StoreLocation, exc: BaseException, timeout: float | None = None) -> StoreError:
    from pymongo import errors

    where = location.display
    if isinstance(exc, errors.OperationFailure) and exc.code in (MAX_TIME_EXPIRED, WRITE_CONFLICT):
        from symfonic_cli.errors import ThreadBusy

        return ThreadBusy(f"busy: another session was writing the thread on {where} past the lock timeout "
                          f"(code {exc.code}); aborted, nothing changed")
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


def _leaf(value: Any, cid: str) -> Any:
    """One metadata value as the saver stores it (a serialized pair, or a dict of them), decoded."""
    if value is None:
        return None
    return _loads_metadata(value, cid)


def _key_field(doc: dict, name: str, what: str = "a checkpoint document") -> str:
    value = doc.get(name, "" if name == "checkpoint_ns" else None)
    if isinstance(value, str):
        return value
    raise StoreError(
        f"{what} has an unexpected shape: '{name}' is {type(value).__name__} "
        f"({_short(value)}), not a string"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# Strings compare by their UTF-8 bytes under the simple collation, which every operation that
# filters, groups or sorts by a key field asks for (MongoSection._collation): a collection's own default
# collation (case-insensitive, say) would make a key range or an equality reach other keys.
BINARY = {"locale": "simple"}

TRANSACTION_RETRY_SECONDS = 60
MAX_TIME_EXPIRED, WRITE_CONFLICT = 50, 112  # a write's maxTimeMS ran out; another transaction holds the document


class MongoSection:
    """What the section mixins (read, history, compat, state, erase, copy) share; ``MongoStore``
    (connect.py) composes them and sets the attributes declared here."""

    open_warnings: tuple[str, ...] | list[str] = ()  # the driver's warnings while opening

    location: StoreLocation
    client: Any  # pymongo.MongoClient
    db_name: str  # the URL's database (open_store refuses a URL without one)
    checkpoints_name: str
    writes_name: str
    writable: bool
    connect_timeout: float
    _transactions: bool | None = None
    # --lock-timeout (set_lock_timeout): each write's maxTimeMS and the retries of a transient conflict.
    _lock_timeout: float | None = None
    # Collections known to have no default collation (read from listCollections at open).
    _plain_collections: frozenset[str] = frozenset()

    # A protocol method erase.py calls, defined in read.py.
    thread_summary: Callable[..., Any]

    @property
    def db(self):
        return self.client[self.db_name]

    @property
    def checkpoints(self):
        return self.db[self.checkpoints_name]

    @property
    def writes(self):
        return self.db[self.writes_name]

    def _collation(self, collection: Collection[Any]) -> dict | None:
        """The ``collation`` argument that makes ``collection`` compare strings in bytes: none
        where it is known to have no default collation (the default is then already simple, and
        some wire-compatible servers sort case-insensitively when "simple" is named), else the
        simple collation. Every find, aggregate, count, distinct, delete and update passes it."""
        return None if collection.name in self._plain_collections else BINARY

    def _collection_names(self, db_name: str, names: list[str]) -> set[str]:
        res = self.client[db_name].command(
            "listCollections", filter={"name": {"$in": names}}, nameOnly=True, authorizedCollections=True
        )
        return {c["name"] for c in res["cursor"]["firstBatch"]}

    def _thread_docs(self, key: str, fields: dict, *, descending: bool) -> Iterator[dict]:
        """A thread's checkpoint documents ordered by checkpoint_id over every namespace: one
        index-ordered cursor per namespace, merged here (no server-side sort of whole blobs)."""
        match = _key_is(key)
        exact = self._collation(self.checkpoints)
        namespaces = sorted(
            _key_field({"checkpoint_ns": d["_id"]}, "checkpoint_ns")
            for d in self.checkpoints.aggregate([{"$match": match}, {"$group": {"_id": "$checkpoint_ns"}}], collation=exact)
        )
        order = -1 if descending else 1
        cursors = [
            self.checkpoints.find({**match, "checkpoint_ns": _string_literal(ns, "namespace")}, fields, collation=exact).sort(
                [("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", order)]
            )
            for ns in namespaces
        ]
        try:
            yield from heapq.merge(*cursors, key=lambda d: str(d.get("checkpoint_id")), reverse=descending)
        finally:
            for c in cursors:
                c.close()

    def _count(self, collection: Collection[Any], match: dict | None = None) -> int:
        pipeline = ([{"$match": match}] if match else []) + [{"$count": "n"}]
        for doc in collection.aggregate(pipeline, collation=self._collation(collection)):
            return int(doc["n"])
        return 0

    def _supports_transactions(self) -> bool:
        if self._transactions is None:
            hello = self.client.admin.command("hello")
            self._transactions = bool(hello.get("setName") or hello.get("msg") == "isdbgrid") and "logicalSessionTimeoutMinutes" in hello
        return self._transactions

    def set_lock_timeout(self, seconds: float) -> None:
        self._lock_timeout = seconds

    def replica_lag(self) -> tuple[float, str] | None:
        """The most lagging secondary's lag behind the primary in seconds (``replSetGetStatus``: the
        primary's optimeDate less the secondary's), and its name; None where the server is no replica
        set or does not report it (a standalone mongod, SecantusDB)."""
        from pymongo.errors import PyMongoError

        try:
            status = self.client.admin.command("replSetGetStatus")
        except PyMongoError:
            return None
        import math

        members = [m for m in status.get("members") or [] if isinstance(m, dict)]
        primary = next((m.get("optimeDate") for m in members if m.get("stateStr") == "PRIMARY"), None)
        if primary is None:
            return None
        secondaries = {str(m.get("name") or "secondary"): m for m in members if m.get("stateStr") == "SECONDARY"}
        if self._secondaries is None:  # the run's first look: the secondaries it waits for if they go
            self._secondaries = set(secondaries)
        gone = sorted(self._secondaries - set(secondaries))
        lags = [(math.inf, f"{gone[0]} is not a reachable secondary (it was when the run started)")] if gone else []
        lags += [((primary - m["optimeDate"]).total_seconds(), name) if m.get("optimeDate") is not None
                 else (math.inf, f"{name} does not report its position") for name, m in secondaries.items()]
        return max(lags, default=None)

    _secondaries: set[str] | None = None  # the secondaries replica_lag first saw (None: not asked yet)

    @contextmanager
    def _bounded(self) -> Iterator[None]:
        """One write inside a transaction, sent with maxTimeMS (pymongo.timeout) when --lock-timeout
        is set: a write kept waiting past it fails and the transaction is aborted (ThreadBusy)."""
        if self._lock_timeout is None or not self._supports_transactions():
            yield  # without a transaction a write cut off by the client could still complete: not bounded
            return
        import pymongo
        from pymongo.errors import PyMongoError

        try:
            with pymongo.timeout(self._lock_timeout):
                yield
        except PyMongoError as exc:
            if exc.timeout:
                from symfonic_cli.errors import ThreadBusy

                raise ThreadBusy(f"busy: a write on {self.location.display} waited past the lock timeout; "
                                 "aborted, nothing changed") from None
            raise

    def _transaction(self, work: Callable[[Any], Any], *, before_commit: Callable[[], None] | None = None) -> Any:
        """``work(session)`` in one multi-document transaction, retried as the driver spec says
        when the server reports a transient conflict (e.g. a concurrent eraser)."""
        from pymongo.errors import PyMongoError

        deadline = time.monotonic() + (TRANSACTION_RETRY_SECONDS if self._lock_timeout is None else self._lock_timeout)
        while True:
            with self.client.start_session() as session:
                session.start_transaction()
                try:
                    result = work(session)
                    if before_commit is not None:
                        before_commit()
                    _commit(session, deadline)
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


def _commit(session: ClientSession, deadline: float) -> None:
    from pymongo.errors import PyMongoError

    while True:
        try:
            session.commit_transaction()
            return
        except PyMongoError as exc:
            if exc.has_error_label("UnknownTransactionCommitResult") and time.monotonic() < deadline:
                continue
            raise


def _abort(session: ClientSession) -> None:
    from pymongo.errors import PyMongoError

    if session.in_transaction:
        try:
            session.abort_transaction()
        except PyMongoError:
            pass  # the server drops it when the session ends


# A query condition on an array field holds when one of its elements meets it: a document whose
# thread_id is an array would belong to every key it holds. Keys are strings, never arrays.
NOT_ARRAY = {"$not": {"$type": "array"}}

# Documents that are a thread's: a string key (an array of strings is none).
A_KEY = {"$type": "string", **NOT_ARRAY}


def _key_is(value: Any, what: str = "thread key") -> dict:
    """The query fields of exactly the documents whose key is the string ``value``: the key's
    equality alone on its field, so that the index finds them (SecantusDB's planner scans the
    collection for a field holding more operators, such as NOT_ARRAY's), and no element 0 on
    its path (an array holding ``value`` meets the equality; a string has no elements)."""
    return {"thread_id": _string_literal(value, what), "thread_id.0": {"$exists": False}}


def keys_match(keys: list[str]) -> list[dict]:
    """$match stages for exactly the documents whose key is one of ``keys`` (strings): the plain
    $in first, alone, so that a server whose planner gives up on an index for a field with more
    operators (SecantusDB scans the collection for $in beside $type) finds them by the index."""
    return [{"$match": {"thread_id": {"$in": [_string_literal(k, "key") for k in keys]}}}, {"$match": {"thread_id": A_KEY}}]


def _prefix_range(prefix: str) -> dict:
    """Exactly the string keys starting with ``prefix``, under the simple collation (byte order).
    A string bound keeps the comparison to strings (BSON compares within a type bracket)."""
    hi = prefix_upper_bound(prefix)
    return {"$gte": prefix, **NOT_ARRAY} if hi is None else {"$gte": prefix, "$lt": hi, **NOT_ARRAY}


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
    from symfonic_cli.codec.strict import loads

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


# The ordered form (clock.is_ordered_id) as the server's regex: PCRE's "$" also matches before a
# final newline, "\z" only at the very end.
ORDERED_ID_PCRE = ORDERED_ID_REGEX.removesuffix("$") + "\\z"

# True for a group holding an id that is not in the ordered form: the listing's and the run states' $group.
ODD_GROUP = {"$max": {"$cond": [
    {"$and": [{"$eq": [{"$type": "$checkpoint_id"}, "string"]}, {"$regexMatch": {"input": "$checkpoint_id", "regex": ORDERED_ID_PCRE}}]},
    False, True,
]}}


class _Reversed:
    """A key that sorts backwards: in the page's heap the worst row is the oldest, then the greatest key."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key


def _keep(heap: list[tuple], limit: int, row: tuple) -> None:
    """``row`` into a min-heap of the ``limit`` greatest rows seen."""
    if len(heap) < limit:
        heapq.heappush(heap, row)
    elif heap[0] < row:
        heapq.heapreplace(heap, row)
