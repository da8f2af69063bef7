"""MongoDB stores written by ``langgraph-checkpoint-mongodb`` (``MongoDBSaver``).

Collections ``checkpoints`` and ``checkpoint_writes`` by default. A checkpoint document holds the
serialized checkpoint as one ``(type, bytes)`` pair and its metadata key by key, each value a
serialized ``[type, bytes]`` pair. The saver is never constructed for reading (its constructor
builds indexes): documents are read with pymongo and decoded as the saver decodes them, with the
strict decoder. Inspecting commands only send read commands (find, aggregate, listIndexes, ...)."""

from __future__ import annotations

import os
import warnings
from typing import Any
from urllib.parse import unquote

from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.location import StoreLocation, is_secret_name, scrub
from symfonic_cli.stores._common import HeldMessages, SupportsWith
from symfonic_cli.stores.activity import ExactActivity
from symfonic_cli.stores.mongodb._common import PASSWORD_ENV, MongoSection, _driver_errors, _error
from symfonic_cli.stores.mongodb.compat import MongoCompat
from symfonic_cli.stores.mongodb.copy import MongoCopy
from symfonic_cli.stores.mongodb.rewind import MongoRewind
from symfonic_cli.stores.mongodb.erase import MongoErase
from symfonic_cli.stores.mongodb.history import MongoHistory
from symfonic_cli.stores.mongodb.prune import MongoPrune
from symfonic_cli.stores.mongodb.usage import MongoUsage
from symfonic_cli.stores.mongodb.read import MongoRead
from symfonic_cli.stores.mongodb.search import MongoSearch
from symfonic_cli.stores.mongodb.state import MongoState

DEFAULT_CHECKPOINTS = "checkpoints"


DEFAULT_WRITES = "checkpoint_writes"


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
        with warnings.catch_warnings():  # what it warns about, MongoClient's own warnings say again, one line each
            warnings.simplefilter("ignore")
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
            shown = "***" if is_secret_name(unquote(name)) else unquote(value)
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
) -> "MongoStore":
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    checkpoints = _collection_name(checkpoint_collection, "--checkpoint-collection", DEFAULT_CHECKPOINTS)
    writes = _collection_name(writes_collection, "--writes-collection", DEFAULT_WRITES)
    if checkpoints == writes:
        raise UsageError(
            f"--checkpoint-collection and --writes-collection name the same collection ({checkpoints!r})",
            hint="the saver keeps checkpoints and pending writes in two collections",
        )
    _bare_url, db_name, user, has_password = split_url(location.url)
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
    from symfonic_cli.render import escape_inline

    store = MongoStore(location, client, db_name, checkpoints, writes, writable=writable, connect_timeout=connect_timeout)
    # One line each (never Python's multi-line warning format), printed by stores.open_store.
    store.open_warnings = [f"MongoDB URL: {escape_inline(scrub(' '.join(str(w.message).split()), location))}" for w in caught]
    try:
        if writable and init_target and db_name:
            store._init_target()
        store._check()
    except BaseException:
        client.close()
        raise
    return store


def _no_wait_at_exit() -> None:
    """pymongo joins its monitor threads when the interpreter exits, and a closed monitor notices
    its close only on its next 0.5 s poll: every command against MongoDB ended half a second after
    its work. A closed client's threads are stopped and hold nothing, so they are not waited for.
    (pymongo's private registry: if it changes, the exit is only slower.)"""
    try:
        from pymongo import periodic_executor

        for ref in list(periodic_executor._EXECUTORS):
            executor = ref()
            if executor is not None and executor._stopped:
                periodic_executor._EXECUTORS.discard(ref)
    except Exception:  # a pymongo without this registry: the exit waits as before
        pass


class MongoStore(ExactActivity, MongoRead, MongoSearch, MongoHistory, MongoCompat, MongoState, MongoErase, MongoRewind, MongoCopy, MongoPrune, MongoUsage, HeldMessages, MongoSection, SupportsWith):
    kind = "mongodb"

    def __init__(self, location: StoreLocation, client: Any, db_name: str | None, checkpoints: str, writes: str, *, writable: bool,
                 connect_timeout: float) -> None:
        self.location = location
        self.client = client
        self.db_name = db_name  # type: ignore[assignment]  # None only until the check below refuses it
        self.checkpoints_name = checkpoints
        self.writes_name = writes
        self.writable = writable
        self.connect_timeout = connect_timeout
        self._transactions: bool | None = None

    def close(self) -> None:
        self.release_run_lock()
        self.client.close()
        _no_wait_at_exit()

    def _collection_options(self, db_name: str, names: list[str]) -> dict[str, dict | None]:
        """Each collection found and its options (None: not readable without the listCollections
        privilege; then a default collation is assumed possible)."""
        from pymongo.errors import OperationFailure

        try:
            res = self.client[db_name].command("listCollections", filter={"name": {"$in": names}})
        except OperationFailure as exc:
            if exc.code != 13:
                raise
            return {n: None for n in self._collection_names(db_name, names)}
        return {c["name"]: c.get("options") or {} for c in res["cursor"]["firstBatch"]}

    @_driver_errors
    def _check(self) -> None:
        if self.db_name is None:
            found = self._databases_with(self.checkpoints_name)
            listed = ", ".join(found) if found else "none found"
            raise UsageError(
                f"no database in {self.location.display}",
                hint=f"add it to the URL (mongodb://host/DATABASE); databases with a '{self.checkpoints_name}' collection: {listed}",
            )
        have = self._collection_options(self.db_name, [self.checkpoints_name, self.writes_name])
        self._plain_collections = frozenset(n for n, o in have.items() if o is not None and not o.get("collation"))
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
