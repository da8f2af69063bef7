"""Files a command writes (``thread export --output``, ``--receipt``) must never be the store it
reads or changes: a file store's file or the files its engine keeps beside it (SQLite's -wal, -shm,
-journal: the kind's ``files``, kinds/). A bundle written at
``w.db-wal`` left neither symfonic nor LangGraph able to open the store until it was removed.

Paths are compared resolved (symbolic links, ``..``, relative names; letter case where the file
system folds it), and existing files also by identity (a hard link).

``open_regular`` opens such a file (the receipt, the MCP access log) the one way: never the store
it is given, never through a symbolic link, and never waiting on a FIFO (opened non-blocking, then
anything but a regular file is refused)."""

from __future__ import annotations

import errno
import os
import stat

from symfonic_cli.errors import UsageError
from symfonic_cli.kinds import KINDS
from symfonic_cli.location import StoreLocation


def _forms(path: str) -> set[str]:
    return {os.path.normcase(os.path.realpath(path)), os.path.normcase(os.path.abspath(path))}


def refuse_store_path(output: str, location: StoreLocation | None, option: str, *, why: str = "refusing to write there") -> None:
    """UsageError (exit 2) when writing ``output`` would write the store or one of its files."""
    if location is None or not location.path or not output:  # a server store has no file to write over
        return
    store = os.path.expanduser(location.path)
    targets = _forms(output)
    for suffix in KINDS[location.kind].files:
        for form in _forms(store):
            if form + suffix in targets or _same_file(output, form + suffix):
                what = "the store itself" if not suffix else f"the store's {suffix[1:]} file"
                raise UsageError(f"{option} {output} is {what} ({location.path}{suffix}); {why}",
                                 hint=f"choose another {option}")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


class NotRegularFile(Exception):
    """The path is a FIFO, a device, a socket or a folder: not a file a command writes its records to."""


def open_regular(path: str, flags: int, mode: int = 0o600, *, store: StoreLocation | None = None, option: str = "") -> int:
    """``os.open(path, flags | O_NOFOLLOW, mode)`` of a regular file. Opened with O_NONBLOCK, so a
    FIFO is never waited on (opened to read it blocks until a writer comes; to write, until a
    reader does), then refused with anything else that is not a regular file (NotRegularFile).
    Other failures are the OSError of the open (ELOOP: a symbolic link). ``store``: the store the
    command works on; its file, or one beside it, is refused first (``refuse_store_path``, the
    error naming ``option``)."""
    refuse_store_path(path, store, option)
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO no one reads, opened to write it
            raise NotRegularFile(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(path)
    os.set_blocking(fd, True)
    return fd
