"""SQLite stores written by ``langgraph-checkpoint-sqlite`` (tables ``checkpoints`` and ``writes``).

Inspecting commands open the file through a ``mode=ro`` URI with ``query_only`` on: no DDL,
no write, no file is ever created, and the saver's ``setup()`` is never run.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from symfonic_cli.errors import StoreError
from symfonic_cli.location import StoreLocation
from symfonic_cli.stores.base import (
    CheckpointRecord,
    MessageState,
    StoreInfo,
    SupportsWith,
    ThreadSummary,
)
from symfonic_cli.threadkey import tenant_prefix

BUSY_TIMEOUT_MS = 10_000
REQUIRED_TABLES = ("checkpoints", "writes")


def _translate_errors(fn):
    """sqlite3 errors become one-line store errors naming the file."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise _store_error(self.location, exc) from None

    return wrapper


def _translate_iter(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            yield from fn(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise _store_error(self.location, exc) from None

    return wrapper


def _store_error(location: StoreLocation, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if "file is not a database" in text:
        return StoreError(f"{location.path} is not an SQLite database")
    if "malformed" in text:
        return StoreError(f"{location.path} is damaged or truncated: {text}")
    if "readonly" in text or "read-only" in text:
        return StoreError(f"{location.path} is read-only: {text}")
    return StoreError(f"SQLite error on {location.path}: {text}")


def _range_for_prefix(prefix: str) -> tuple[str, str]:
    # Keys sort bytewise (BINARY collation), so a prefix is a key range the primary key serves.
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def open_store(location: StoreLocation, *, writable: bool = False, **_: Any) -> "SqliteStore":
    path = location.path
    assert path is not None
    if not path.exists():
        raise StoreError(f"no SQLite file at {path}", hint="check --store; symfonic never creates a store")
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not an SQLite file")
    if not os.access(path, os.R_OK):
        raise StoreError(f"{path} is not readable by this user")
    uri = f"file:{quote(str(path.resolve()))}?" + ("mode=rw" if writable else _read_only_params(location))
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise _store_error(location, exc) from None
    store = SqliteStore(location, conn, writable=writable)
    try:
        store._check_schema()
    except BaseException:
        conn.close()
        raise
    return store


def _read_only_params(location: StoreLocation) -> str:
    """URI parameters that read without creating or changing any file.

    A ``mode=ro`` connection to a WAL database creates the ``-wal``/``-shm`` files when they are
    missing. When they exist (an application has the database open) we share them and see its
    commits; when they do not, nothing is writing, and ``immutable=1`` reads the file as it is.
    """
    path = location.path
    assert path is not None
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        if not header:
            raise StoreError(f"{path} is empty, not an SQLite database")
        raise StoreError(f"{path} is not an SQLite database")
    wal_mode = header[18] == 2 or header[19] == 2
    if not wal_mode:
        return "mode=ro"
    wal = Path(f"{path}-wal")
    shm = Path(f"{path}-shm")
    if wal.exists() and shm.exists():
        return "mode=ro"
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreError(
            f"{path} has a write-ahead log without its -shm index (left by a crash)",
            hint="let the application open it once, or copy the files and read the copy",
        )
    return "mode=ro&immutable=1"


class SqliteStore(SupportsWith):
    kind = "sqlite"

    def __init__(self, location: StoreLocation, conn: sqlite3.Connection, *, writable: bool) -> None:
        self.location = location
        self.conn = conn
        self.writable = writable
        self.has_task_path = True
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not writable:
            conn.execute("PRAGMA query_only = ON")

    def close(self) -> None:
        self.conn.close()

    @_translate_errors
    def _check_schema(self) -> None:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in REQUIRED_TABLES if t not in tables]
        if missing:
            raise StoreError(
                f"{self.location.path} is an SQLite file but not a LangGraph checkpoint store "
                f"(missing table{'s' if len(missing) > 1 else ''}: {', '.join(missing)})"
            )
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(writes)")}
        self.has_task_path = "task_path" in cols
        self.tables = sorted(tables)

    # -- what is in the store

    @_translate_iter
    def list_threads(
        self,
        *,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        limit: int | None = None,
    ) -> Iterator[ThreadSummary]:
        where, params = "", []
        if tenant is not None:
            lo, hi = _range_for_prefix(tenant_prefix(tenant, sub_tenant))
            where, params = "WHERE thread_id >= ? AND thread_id < ?", [lo, hi]
        sql = (
            "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) "
            f"FROM checkpoints {where} GROUP BY thread_id ORDER BY max(checkpoint_id) DESC, thread_id"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        for key, n, first, last in self.conn.execute(sql, params):
            yield ThreadSummary(str(key), n, first, last)

    @_translate_errors
    def thread_summary(self, key: str) -> ThreadSummary | None:
        row = self.conn.execute(
            "SELECT count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints WHERE thread_id = ?",
            (key,),
        ).fetchone()
        if not row or not row[0]:
            return None
        return ThreadSummary(key, row[0], row[1], row[2])

    @_translate_errors
    def info(self) -> StoreInfo:
        c = self.conn
        threads = c.execute("SELECT count(*) FROM (SELECT DISTINCT thread_id FROM checkpoints)").fetchone()[0]
        checkpoints = c.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        writes = c.execute("SELECT count(*) FROM writes").fetchone()[0]
        namespaces = c.execute(
            "SELECT count(*) FROM (SELECT DISTINCT checkpoint_ns FROM checkpoints)"
        ).fetchone()[0]
        path: Path = self.location.path  # type: ignore[assignment]
        wal = Path(str(path) + "-wal")
        details: dict[str, Any] = {
            "file size": path.stat().st_size,
            "wal size": wal.stat().st_size if wal.exists() else None,
            "journal mode": _journal_mode(path, c),
            "page size": c.execute("PRAGMA page_size").fetchone()[0],
            "tables": ", ".join(self.tables),
            "schema variant": "writes.task_path present" if self.has_task_path else "writes without task_path (pre-task_path saver)",
            "namespaces": namespaces,
            "sqlite version": sqlite3.sqlite_version,
        }
        return StoreInfo("sqlite", self.location.display, threads, checkpoints, writes, details)

    # -- one thread

    @_translate_errors
    def read_checkpoint(
        self,
        key: str,
        *,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        channels: tuple[str, ...] = ("messages",),
    ) -> CheckpointRecord | None:
        from symfonic_cli.decoding import collect_blocked, loads

        if checkpoint_id is None:
            row = self.conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                (key, checkpoint_ns),
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (key, checkpoint_ns, checkpoint_id),
            ).fetchone()
        if row is None:
            return None
        cid, parent, type_, blob, metadata = row
        with collect_blocked() as blocked:
            checkpoint = loads(type_, blob, what=f"checkpoint {cid}")
        if not isinstance(checkpoint, dict):
            raise StoreError(f"checkpoint {cid} does not decode to a checkpoint mapping")
        values = checkpoint.get("channel_values") or {}
        return CheckpointRecord(
            thread_id=key,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=cid,
            parent_checkpoint_id=parent,
            ts=checkpoint.get("ts"),
            metadata=_json_metadata(metadata, cid),
            channel_values={ch: values[ch] for ch in channels if ch in values},
            channel_versions=dict(checkpoint.get("channel_versions") or {}),
            blocked=frozenset(blocked),
        )

    @_translate_iter
    def iter_message_states(self, key: str) -> Iterator[MessageState]:
        cur = self.conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints "
            "WHERE thread_id = ? ORDER BY checkpoint_id DESC",
            (key,),
        )
        for ns, cid, type_, blob in cur:
            yield MessageState(ns, cid, None, cid, "checkpoint", type_, blob)


def _journal_mode(path: Path, conn: sqlite3.Connection) -> str:
    # An immutable connection reports "delete"; the file header knows better.
    with open(path, "rb") as fh:
        header = fh.read(20)
    if len(header) == 20 and header[18] == 2:
        return "wal"
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def _json_metadata(raw: Any, checkpoint_id: str) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise StoreError(f"metadata of checkpoint {checkpoint_id} is not JSON") from None
    return value if isinstance(value, dict) else {}
