"""``symfonic demo``'s store for a front end: its size limits, whether a file is one already, its key
file, and the write itself into a new SQLite file. What the run says (progress, the summary) is
the front end's; LangGraph is imported only when a store is written."""

from __future__ import annotations

from symfonic_cli.demo import (
    DEFAULT_TURNS, MAX_THREADS, MAX_TOTAL_TURNS, MAX_TURNS, MIN_THREADS, MIN_TURNS, is_demo_store, new_aes_key,
    write_key_file,
)

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["DEFAULT_TURNS", "MAX_THREADS", "MAX_TOTAL_TURNS", "MAX_TURNS", "MIN_THREADS", "MIN_TURNS", "encryption_missing",
           "is_demo_store", "new_aes_key", "write_demo_store", "write_key_file"]


def encryption_missing() -> str | None:
    """The hint to install the encrypted extra when pycryptodome (what LangGraph's
    EncryptedSerializer encrypts with) is missing; None when it is there."""
    try:
        import Crypto.Cipher.AES  # noqa: F401
    except ImportError:
        from symfonic_cli.codec.cipher import EXTRA_HINT

        return EXTRA_HINT
    return None


def write_demo_store(path: Path, *, threads: int, turns: int, progress: Callable[[int, int], None] | None = None,
                     aes_key: bytes | None = None) -> list[str]:
    """The demo store written into the new file ``path`` (never one that exists); returns its thread
    keys. A write that fails leaves no file behind (a StoreError for SQLite's own errors)."""
    import sqlite3

    from symfonic_cli.demo import create_demo_store
    from symfonic_cli.errors import StoreError
    from symfonic_cli.stores.sqlite.connect import create_new_file, remove_new_file

    create_new_file(str(path), "the demo store")  # exit 2 or 4 here, before anything is written
    try:
        return create_demo_store(path, threads=threads, turns=turns, progress=progress, aes_key=aes_key)
    except BaseException as exc:
        remove_new_file(str(path))  # no half-written store that the next run calls "already exists"
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"cannot write the demo store {path}: {exc}; nothing was left behind") from None
        raise
