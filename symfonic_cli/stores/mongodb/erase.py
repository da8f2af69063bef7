"""MongoDB stores: thread erase: plan, cascade, delete and verify."""

from __future__ import annotations

from collections.abc import Callable

from symfonic_cli.errors import StoreError
from symfonic_cli.stores._common import PerThreadErase
from symfonic_cli.stores.mongodb._common import (
    ORDERED_ID_PCRE,
    A_KEY,
    MongoSection,
    _driver_errors,
    _key_is,
    _string_literal,
    _prefix_range,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pymongo.client_session import ClientSession
    from typing import Any

    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan


class MongoErase(PerThreadErase, MongoSection):
    """Thread erase: plan, cascade, delete and verify."""

    # -- erase

    def _require_writable(self) -> None:
        if not self.writable:
            raise StoreError(f"{self.location.display} is open read-only")

    def _cascade(self, extra: tuple[ExtraTable, ...], key: str) -> list[tuple[str, Any, dict[str, Any] | None]]:
        """``(name, collection, filter or None)`` in delete order: extras, writes, checkpoints."""
        out: list[tuple[str, Any, dict[str, Any] | None]] = []
        for table in extra:
            pairs = table.filters(key)
            # None: a null or absent field (how the deployment stores a missing sub-tenant)
            flt = None if pairs is None else {_string_literal(col, "field"): (None if val is None else _string_literal(val, "value")) for col, val in pairs}
            out.append((table.name, self.db[table.name], flt))
        out.append((self.writes_name, self.writes, _key_is(key)))
        out.append((self.checkpoints_name, self.checkpoints, _key_is(key)))
        return out

    def store_identity(self) -> dict[str, Any]:
        return {"kind": "mongodb", "hosts": _hosts(self.location.url), "database": self.db_name,
                "collections": [self.checkpoints_name, self.writes_name]}

    _run_lock: Any = None  # (the lock document's _id, its token, the renewing thread's stop event) while held

    @_driver_errors
    def take_run_lock(self, operation: str) -> str | None:
        """A lock document in the store's database (collection ``symfonic_run_locks``, one per pair of
        collections) with the holder and an expiry, renewed while the run goes on; a document past its
        expiry is a dead runner's and is taken over."""
        import threading
        import uuid
        from datetime import datetime, timedelta, timezone

        from pymongo.errors import DuplicateKeyError

        from symfonic_cli.stores.runlock import MONGO_COLLECTION, MONGO_RENEW_SECONDS, MONGO_TTL_SECONDS, describe, holder_record

        locks = self.db[MONGO_COLLECTION]
        exact = self._collation(locks)
        lock_id = {"checkpoints": self.checkpoints_name, "writes": self.writes_name}
        token = uuid.uuid4().hex
        now = datetime.now(timezone.utc)
        doc = {"_id": lock_id, "token": token, "holder": holder_record(operation), "expires": now + timedelta(seconds=MONGO_TTL_SECONDS)}
        try:
            locks.insert_one(doc)
        except DuplicateKeyError:
            # Past its expiry: taken over in one step (only if it is still that expired document).
            taken = locks.find_one_and_replace({"_id": lock_id, "expires": {"$lt": now}}, doc, collation=exact)
            if taken is None:
                current = locks.find_one({"_id": lock_id}, collation=exact)
                if not current:
                    return "another symfonic run (it just ended)"
                holder = current.get("holder") if isinstance(current, dict) else None
                # A holder on this host whose process is gone (killed: no release ran) is taken over
                # at once, as a file lock is released by the kernel; elsewhere its expiry decides.
                if not (_dead_here(holder) and locks.find_one_and_replace(
                        {"_id": lock_id, "token": current.get("token")}, doc, collation=exact) is not None):
                    return describe(holder)
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(MONGO_RENEW_SECONDS):
                try:
                    locks.update_one({"_id": lock_id, "token": token},
                                     {"$set": {"expires": datetime.now(timezone.utc) + timedelta(seconds=MONGO_TTL_SECONDS)}},
                                     collation=exact)
                except Exception:  # the run itself reports a lost server; the lock then expires
                    return

        threading.Thread(target=renew, name="symfonic-run-lock", daemon=True).start()
        self._run_lock = (lock_id, token, stop)
        return None

    def release_run_lock(self) -> None:
        held, self._run_lock = self._run_lock, None
        if held is None:
            return
        lock_id, token, stop = held
        stop.set()
        from pymongo.errors import PyMongoError

        from symfonic_cli.stores.runlock import MONGO_COLLECTION

        locks = self.db[MONGO_COLLECTION]
        try:
            locks.delete_one({"_id": lock_id, "token": token}, collation=self._collation(locks))
        except PyMongoError:
            pass  # unreachable now: the document expires on its own

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
    def thread_keys_with_prefix(self, prefix: str, *, limit: int | None = None) -> list[str]:
        match = {"thread_id": _prefix_range(_string_literal(prefix, "prefix")) if prefix else A_KEY}
        keys: set[str] = set()
        for coll in (self.checkpoints, self.writes):
            pipeline = [{"$match": match}, {"$group": {"_id": "$thread_id"}}]
            if limit is not None:
                pipeline += [{"$sort": {"_id": 1}}, {"$limit": limit}]
            keys.update(d["_id"] for d in coll.aggregate(pipeline, collation=self._collation(coll)) if isinstance(d["_id"], str))
        return sorted(keys)[:limit]  # code point order is UTF-8 byte order

    @_driver_errors
    def erase_plan(self, key: str, extra: tuple[ExtraTable, ...]) -> ThreadErasePlan:
        from symfonic_cli.model.erase import ThreadErasePlan

        key = _string_literal(key, "thread key")
        rows = {name: (self._count(coll, flt) if flt is not None else 0) for name, coll, flt in self._cascade(extra, key)}
        summary = self.thread_summary(key)  # every id tested (``odd``), its times by instant (stores/activity.py)
        if summary is None:
            return ThreadErasePlan(key, rows, None, None, odd=False)
        return ThreadErasePlan(key, rows, summary.first_checkpoint_id, summary.last_checkpoint_id, first_at=summary.first_at,
                               last_at=summary.last_at, undatable=summary.undatable, odd=summary.odd)

    def _recheck_activity(self, key: str, session: ClientSession | None) -> tuple:
        """Inside the transaction: the greatest ordered id, and ``(id, ts)`` of every other checkpoint
        (its ``ts`` from the blob's head), for model/erase.py's check_still_idle."""
        from bson.regex import Regex

        from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

        ordered = Regex(ORDERED_ID_PCRE)
        newest = self.checkpoints.find({**_key_is(key), "checkpoint_id": {"$regex": ordered}}, {"checkpoint_id": 1},
                                       session=session, collation=self._collation(self.checkpoints))
        newest_doc: dict[str, Any] = next(iter(newest.sort("checkpoint_id", -1).limit(1)), {})
        last = newest_doc.get("checkpoint_id")
        odd = []
        for doc in self.checkpoints.find({**_key_is(key), "checkpoint_id": {"$not": ordered}}, {"checkpoint_id": 1, "type": 1, "checkpoint": 1},
                                         session=session, collation=self._collation(self.checkpoints)):
            ts = None
            if doc.get("type") == "msgpack" and isinstance(doc.get("checkpoint"), bytes):
                try:
                    ts = checkpoint_blob_head(doc["checkpoint"])[0]
                except (NeedMore, ValueError):
                    ts = None
            odd.append((doc.get("checkpoint_id"), ts))
        return (last if isinstance(last, str) else None), odd

    @_driver_errors
    def erase_thread(
        self,
        key: str,
        extra: tuple[ExtraTable, ...],
        *,
        between: Callable[[str], None] | None = None,
        expected: dict[str, int] | None = None,
        idle_before: str | None = None,
    ) -> dict[str, int]:
        from symfonic_cli.model.erase import check_against_plan, check_still_idle

        self._require_writable()
        key = _string_literal(key, "thread key")
        cascade = self._cascade(extra, key)

        def run(session: ClientSession | None) -> dict[str, int]:
            deleted: dict[str, int] = {}
            if idle_before is not None:
                last, odd = self._recheck_activity(key, session)
                check_still_idle(key, last, idle_before, odd)
            for name, coll, flt in cascade:
                deleted[name] = 0
                if flt is not None:
                    with self._bounded():
                        deleted[name] = coll.delete_many(flt, session=session, collation=self._collation(coll)).deleted_count
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
        key = _string_literal(key, "thread key")
        return {name: (self._count(coll, flt) if flt is not None else 0) for name, coll, flt in self._cascade(extra, key)}

    def erase_finish(self, *, vacuum: bool) -> list[str]:
        if vacuum:
            return ["MongoDB: no vacuum step; WiredTiger reuses the freed space (the 'compact' command returns it to the OS)"]
        return []


def _hosts(url: str) -> list[str]:
    """``host:port`` of every seed as pymongo reads the URL (lower case, default port); the SRV
    name itself for ``mongodb+srv://`` (no DNS lookup)."""
    from symfonic_cli.location import url_scheme

    scheme = (url_scheme(url) or "").lower()
    if scheme == "mongodb+srv":
        rest = url[len(scheme) + 3:].split("/", 1)[0].split("?", 1)[0]
        return [rest.rsplit("@", 1)[-1].lower()]
    import warnings

    from pymongo.uri_parser import parse_uri

    with warnings.catch_warnings():  # the seeds alone: what the options' warnings say, opening the store said
        warnings.simplefilter("ignore")
        nodes = parse_uri(url, validate=False, warn=True)["nodelist"]
    return sorted(f"{host.lower()}:{port}" for host, port in nodes)


def _dead_here(holder: object) -> bool:
    """Whether a run lock's holder is a process of this host that no longer runs."""
    import os
    import socket

    if not isinstance(holder, dict) or holder.get("host") != socket.gethostname():
        return False
    pid = holder.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, another user's
    return False
