"""The run lock's holder, as every backend records and describes it (issue #38: one runner)."""

from __future__ import annotations

from typing import Any

LOCK_SUFFIX = ".symfonic-lock"  # SQLite: the lock file beside the store
MONGO_COLLECTION = "symfonic_run_locks"  # MongoDB: the lock documents, in the store's database
MONGO_TTL_SECONDS = 120  # a lock document not renewed this long is a dead runner's
MONGO_RENEW_SECONDS = 30


def holder_record(operation: str) -> dict[str, Any]:
    """Who takes the lock: the operation, host, process id and start time. No user, no password."""
    import os
    import socket
    from datetime import datetime, timezone

    from symfonic_cli.clock import iso_utc

    return {"operation": operation, "host": socket.gethostname(), "pid": os.getpid(), "started": iso_utc(datetime.now(timezone.utc))}


def command_of(operation: object) -> str:
    """The command a holder runs: ``thread erase``, ``thread prune``, ``migrate``."""
    return "migrate" if operation == "migrate" else f"thread {operation}"


def describe(record: Any) -> str:
    """A holder as one phrase (read from the store: the caller escapes it where it is shown)."""
    if not isinstance(record, dict):
        return "another symfonic run (holder unknown)"
    return (f"symfonic {command_of(record.get('operation', '?'))} (pid {record.get('pid', '?')} on host {record.get('host', '?')}, "
            f"since {record.get('started', '?')})")
