"""Test store backends: one per store kind, all behind the same small interface.

A backend makes new real stores (empty with the saver's tables, or with the scenarios written
by real graphs) and hands out the real saver for a store, so any test can run on every kind.
PostgreSQL and MongoDB register theirs from their pytest plugins (tests/support/pg_server.py,
tests/support/mongo_server.py).
"""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Protocol

from tests.support.scenarios import write_scenarios

KINDS = ("sqlite", "postgres", "mongodb")


class TestBackend(Protocol):
    kind: str

    def new_store(self, *, scenarios: bool = True, only: list[str] | None = None) -> str:
        """A new store (its URL); empty but with the saver's tables when ``scenarios`` is False."""

    @contextmanager
    def saver(self, url: str) -> Iterator[object]:
        """The real LangGraph saver writing into ``url``."""


_registry: dict[str, TestBackend] = {}


def put_tuple(target, t) -> None:
    """Put one listed CheckpointTuple and its pending writes into ``target`` through the saver's
    own ``put``/``put_writes``: what a straightforward copy loop does, one checkpoint at a time."""
    conf = t.config["configurable"]
    parent = t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
    put_conf = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": conf["checkpoint_ns"], "checkpoint_id": parent}}
    target.put(put_conf, t.checkpoint, t.metadata, t.checkpoint["channel_versions"])
    by_task: dict[str, list] = {}
    for task_id, channel, value in t.pending_writes or []:
        by_task.setdefault(task_id, []).append((channel, value))
    for task_id, writes in by_task.items():
        target.put_writes(t.config, writes, task_id)


def copy_store(src_saver, dst_saver) -> None:
    """Every checkpoint and pending write of one saver put into another, oldest first."""
    for t in reversed(list(src_saver.list(None))):
        put_tuple(dst_saver, t)


def register(backend: TestBackend) -> None:
    _registry[backend.kind] = backend


def get(kind: str) -> TestBackend | None:
    return _registry.get(kind)


class SqliteBackend:
    kind = "sqlite"

    def __init__(self, root: Path) -> None:
        self.root = root
        self._master: Path | None = None

    def master(self) -> Path:
        """The scenario store, written once by real graphs; never write to it, copy it."""
        if self._master is None:
            self._master = self.root / "master.db"
            with self.saver(str(self._master)) as saver:
                write_scenarios(saver)
        return self._master

    def _path(self) -> Path:
        return self.root / f"{uuid.uuid4().hex[:12]}.db"

    def new_store(self, *, scenarios: bool = True, only: list[str] | None = None) -> str:
        path = self._path()
        if scenarios and only is None:
            # A byte copy of the master is the same store, made once.
            src = sqlite3.connect(str(self.master()))
            dst = sqlite3.connect(str(path))
            src.backup(dst)
            src.close()
            dst.close()
            return str(path)
        with self.saver(str(path)) as saver:
            saver.setup()
            if scenarios:
                write_scenarios(saver, only)
        return str(path)

    @contextmanager
    def saver(self, url: str):
        from langgraph.checkpoint.sqlite import SqliteSaver

        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()
