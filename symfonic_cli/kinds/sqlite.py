"""How a SQLite location is written: ``sqlite:///relative.db``, ``sqlite:////absolute.db``, or a plain
file path (any location without a scheme that no other kind claims)."""

from __future__ import annotations

import os
from collections.abc import Callable

from symfonic_cli.errors import StoreError


def url_path(raw: str, scheme: str, mask: Callable[[str], str]) -> str:
    """The file a ``sqlite://`` URL names (user-expanded)."""
    rest = raw[len(scheme) + 3:]
    # sqlite:///relative.db -> "relative.db"; sqlite:////abs.db -> "/abs.db"
    if not rest.startswith("/"):
        raise StoreError(
            f"malformed SQLite URL {raw!r}",
            hint="use sqlite:///relative.db or sqlite:////absolute/path.db",
        )
    from urllib.parse import unquote

    path = unquote(rest[1:].split("?", 1)[0])
    if not path:
        raise StoreError(f"SQLite URL {raw!r} names no file")
    return os.path.expanduser(path)


def bare_path(raw: str, mask: Callable[[str], str]) -> str:
    """A plain path is a SQLite file."""
    return os.path.expanduser(raw)
