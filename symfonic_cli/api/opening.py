"""Opening a store: the one opener of every front end (the command line, the browser, the
MCP server) and of ``open_store``; a changing run's store (``open_changing``) too. A store is opened strictly read-only; the root options apply
over its config entry's; what the driver warned about while opening is data (``open_warnings``),
which the front end writes (cli/common.py).
Beside it, what a front end settles before it opens one: the key file (``--aes-key-file``), a
store's connection options, and which one thread the thread options name."""

from __future__ import annotations

from symfonic_cli.api.checks import checked
from symfonic_cli.errors import UsageError

# typing.TYPE_CHECKING without importing typing's names at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.api.store import Store

    from symfonic_cli.location import StoreLocation


def open_backend(location: StoreLocation, options: dict[str, Any]) -> Any:
    """The store at ``location`` opened read-only (the stores' own object: what the API's ``Store``
    reads through); ``.open_warnings``: what the driver warned about while opening (only MongoDB's)."""
    from symfonic_cli.stores import open_read_only

    return open_read_only(location, **options)


def open_changing(location: StoreLocation, options: dict[str, Any], *, writable: bool) -> Any:
    """The store a changing run works on (the stores' own object), opened once for the run's
    driver: writable (a dry run: read-only); the run closes it."""
    from symfonic_cli import stores

    return stores.open_store(location, writable=writable, **options)


def use_key_file(path: str | None) -> None:
    """``--aes-key-file``: the key read and checked now (a UsageError, exit 2); never printed."""
    from symfonic_cli.codec import cipher

    cipher.configure(path)


def store_options(location: StoreLocation, connection: dict[str, Any]) -> dict[str, Any]:
    """Connection options for a store: the config file's entry first, ``connection`` (the command
    line's root options) over it."""
    from symfonic_cli.stores import connection_options

    return connection_options(location, connection)


def one_thread(thread: list[str] | None, tenant: str | None, sub_tenant: str | None, session: str | None) -> str:
    """The one thread ``--thread`` (or KEY) or ``--tenant``/``--sub-tenant``/``--session`` name; a
    UsageError when they name none or several (selection.one_thread)."""
    from symfonic_cli.selection import one_thread as chosen

    return chosen(thread, tenant, sub_tenant, session)


def open_reading(store: str | None, connection: dict[str, Any], *, zone: Any = None, parsed: bool = True) -> Store:
    """``--store`` (None: $SYMFONIC_STORE, a config's default) opened read-only for a front end: the
    run's root options (``connection``) over the config entry's; the Store's ``open_warnings`` are
    the front end's to write. ``zone``: where a time typed without an offset is (a command's ``--tz``; None: UTC).
    ``parsed``: the command line's parser checked the arguments (the browser's and the MCP server's
    calls are checked by the API, as any caller's: False)."""
    from symfonic_cli.location import resolve_store

    from symfonic_cli.api.store import Store

    location = resolve_store(store)
    return Store(open_backend(location, connection), zone=zone, parsed=parsed)


@checked
def open_store(location: Any, **options: Any) -> Store:
    """Open a store strictly read-only: a URL, a SQLite file path (str or Path) or a config name.

    ``options`` are the root options: ``connect_timeout`` (seconds, default 10), ``pg_schema``,
    ``checkpoint_collection``, ``writes_collection``; a config entry's options apply under them."""
    from symfonic_cli.api.store import Store

    return Store(open_backend(store_argument("open_store", location, options), options))


def store_argument(name: str, value: Any, options: dict[str, Any]) -> StoreLocation:
    """A store the Python API is given (a URL, a SQLite file path, str or Path, or a config name)
    and its options, checked: the StoreLocation, or a UsageError naming ``name``."""
    import os

    from symfonic_cli.kinds import CONNECTION_OPTIONS
    from symfonic_cli.location import resolve_store

    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise UsageError(f"{name} needs a store: a URL, a file path or a configured name")
    unknown = sorted(set(options) - set(CONNECTION_OPTIONS))
    if unknown:
        raise UsageError(f"unknown store option '{unknown[0]}'", hint=f"use any of: {', '.join(CONNECTION_OPTIONS)}")
    return resolve_store(value)
