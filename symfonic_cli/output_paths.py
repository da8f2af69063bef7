"""Files a command writes (``thread export --output``, ``--receipt``) must never be the store it
reads or changes: a file store's file or the files its engine keeps beside it (SQLite's -wal, -shm,
-journal: the kind's ``files``, kinds/). A bundle written at
``w.db-wal`` left neither symfonic nor LangGraph able to open the store until it was removed.

Paths are compared resolved (symbolic links, ``..``, relative names; letter case where the file
system folds it), and existing files also by identity (a hard link)."""

from __future__ import annotations

import os

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
