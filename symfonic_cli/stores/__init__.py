"""Opening a store: the backend module is imported only for the kind asked for."""

from __future__ import annotations

from importlib import import_module

from symfonic_cli.kinds import KINDS, KNOWN_OPTIONS, backend_options
from symfonic_cli.location import StoreLocation

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from symfonic_cli.stores.protocol import Store


def open_store(location: StoreLocation, *, writable: bool = False, **options: Any) -> "Store":
    """Open a store read-only (the default) or, for erase and migrate targets, writable. What the
    driver warned about while opening (a MongoDB URL option it ignores) is the store's
    ``open_warnings``, for the caller to show (cli/common.py). The backend gets the options its kind declares (kinds/); one no kind takes is a
    usage error (exit 2), an option of another kind (--pg-schema for a SQLite file) is not passed."""
    from symfonic_cli.errors import UsageError

    try:
        taken = backend_options(location.kind, options)
    except ValueError as exc:  # a config entry's key or an option no store takes: never ignored
        raise UsageError(f"unknown store option '{exc}' for {location.display}", hint=f"use any of: {', '.join(KNOWN_OPTIONS)}") from None
    try:
        module = import_module(KINDS[location.kind].backend)
        store = module.open_store(location, writable=writable, **taken)
    except ModuleNotFoundError as exc:
        raise missing_driver(location.kind, exc) from None
    return store


def connection_options(location: StoreLocation, options: dict[str, Any]) -> dict[str, Any]:
    """What every front end opens ``location`` with: the default connect timeout, the config
    entry's options over it, the caller's (the root options, the API's keywords) over those."""
    from symfonic_cli.limits import DEFAULT_CONNECT_TIMEOUT

    return {"connect_timeout": DEFAULT_CONNECT_TIMEOUT, **location.options, **options}


def open_read_only(location: StoreLocation, **options: Any) -> "Store":
    """The one read-only opener of every front end (the CLI, the browser, the MCP server and the
    Python API's ``open_store``): ``location`` opened strictly read-only with ``connection_options``."""
    return open_store(location, writable=False, **connection_options(location, options))


def missing_driver(kind: str, exc: ModuleNotFoundError) -> Exception:
    """Exit 4 with the install command when ``exc`` is a missing driver of ``kind``; else ``exc``."""
    from symfonic_cli.errors import StoreError

    k = KINDS[kind]
    names, label, extra = k.drivers, k.label, k.extra
    name = exc.name or ""
    if not any(name == n or name.startswith(n + ".") for n in names):
        return exc
    return StoreError(f"{label} support is not installed (no module '{name}')", hint=f'pip install "symfonic[{extra}]"')
