"""Pytest plugin: a real MongoDB wire-protocol server for the tests.

``SYMFONIC_TEST_MONGO_URI`` (e.g. ``mongodb://127.0.0.1:27017/``) points the suite at a real
mongod; otherwise SecantusDB (``secantusdb``, a MongoDB wire-protocol server over WiredTiger)
is started in a process of its own (one per xdist worker) on a free loopback port, with its
data in a temporary directory. No server: the MongoDB tests fail when
``SYMFONIC_REQUIRE_MONGO`` is set (CI), else they skip.
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from tests.support import backends
from tests.support.scenarios import write_scenarios

URI_ENV = "SYMFONIC_TEST_MONGO_URI"
REQUIRE_ENV = "SYMFONIC_REQUIRE_MONGO"
DB_PREFIX = "symfonic_test_"


def with_database(uri: str, db: str) -> str:
    """``uri`` with its database path replaced by ``db`` (query options kept)."""
    scheme, _, rest = uri.partition("://")
    end = min([i for i in (rest.find("/"), rest.find("?")) if i != -1] or [len(rest)])
    authority, tail = rest[:end], rest[end:]
    query = tail.partition("?")[2]
    return f"{scheme}://{authority}/{db}" + (f"?{query}" if query else "")


def database_of(url: str) -> str:
    rest = url.partition("://")[2]
    path = rest.partition("/")[2].partition("?")[0]
    assert path, f"no database in {url}"
    return path


class ServerProcess:
    """SecantusDB in a process of its own (one per xdist worker). In the worker's process its
    threads shared one interpreter lock with the tests and the savers' background writes, and each
    reply waited for a turn: most of a MongoDB test's time. It ends with the worker's pipe."""

    def __init__(self, storage_path: str) -> None:
        import subprocess
        import sys

        root = Path(__file__).resolve().parents[2]
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.support.secantus_server", storage_path], cwd=root,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.uri = self.proc.stdout.readline().strip()
        if not self.uri.startswith("mongodb://"):
            self.proc.kill()
            raise RuntimeError(f"SecantusDB did not start (exit {self.proc.wait()})")

    def stop(self) -> None:
        import subprocess

        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class MongoBackend:
    kind = "mongodb"

    def __init__(self, uri: str) -> None:
        from pymongo import MongoClient

        self.uri = uri
        # The suite's own writes (the savers filling test stores) are not retryable writes: the
        # suite's SecantusDB keeps up to 10,000 retryable-write records and sorts them on every
        # write once full, which made a late write of a session ~10x slower than an early one.
        # Retrying does not change what is written; the commands under test keep the default.
        self.client = MongoClient(uri, serverSelectionTimeoutMS=10_000, retryWrites=False)
        self.client.admin.command("ping")
        self.created: list[str] = []
        self._master: str | None = None

    def new_database(self) -> str:
        name = f"{DB_PREFIX}{uuid.uuid4().hex[:12]}"
        self.created.append(name)
        return name

    def url(self, db: str) -> str:
        return with_database(self.uri, db)

    def new_store(self, *, scenarios: bool = True, only: list[str] | None = None) -> str:
        db = self.new_database()
        if scenarios and only is None:
            if self._master is None:
                self._master = self.new_database()
                with self.saver(self.url(self._master)) as saver:
                    write_scenarios(saver)
            self._copy(self._master, db)
            return self.url(db)
        with self.saver(self.url(db)) as saver:  # the constructor creates collections and indexes
            if scenarios:
                write_scenarios(saver, only)
        return self.url(db)

    def copy_of(self, url: str) -> str:
        """A new store holding the documents and indexes of ``url``'s (a store a test may change)."""
        db = self.new_database()
        self._copy(database_of(url), db)
        return self.url(db)

    def _copy(self, src: str, dst: str) -> None:
        # The same documents and indexes: the same store, written once by the graphs.
        for name in self.client[src].list_collection_names():
            source, target = self.client[src][name], self.client[dst][name]
            for ix in source.list_indexes():
                if ix["name"] != "_id_":
                    target.create_index(list(ix["key"].items()), name=ix["name"], unique=ix.get("unique", False))
            docs = list(source.find())
            if docs:
                target.insert_many(docs, ordered=True)

    @contextmanager
    def saver(self, url: str) -> Iterator[object]:
        from langgraph.checkpoint.mongodb import MongoDBSaver

        yield MongoDBSaver(self.client, db_name=database_of(url))

    def cleanup(self) -> None:
        for name in self.created:
            try:
                self.client.drop_database(name)
            except Exception:
                pass
        self.client.close()


@pytest.fixture(scope="session")
def mongodb_backend(tmp_path_factory) -> Iterator[MongoBackend]:
    uri = os.environ.get(URI_ENV)
    server = None
    try:
        if not uri:
            server = ServerProcess(str(tmp_path_factory.mktemp("secantus")))
            uri = server.uri
        backend = MongoBackend(uri)
    except Exception as exc:  # no package, no port, no answer
        if server is not None:
            server.stop()
        message = f"no MongoDB test server ({type(exc).__name__}: {exc})"
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{message}; {REQUIRE_ENV} is set", pytrace=False)
        pytest.skip(message)
    backend.server = server  # type: ignore[attr-defined]
    backends.register(backend)
    yield backend
    if server is not None:
        # The suite's own server keeps its data in a temporary folder: stopping it is the cleanup
        # (dropping hundreds of databases one by one took ~30 s).
        backend.client.close()
        server.stop()
    else:
        backend.cleanup()
