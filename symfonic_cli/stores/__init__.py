"""Opening a store: the backend module is imported only for the kind asked for."""

from __future__ import annotations

from importlib import import_module

from symfonic_cli.location import StoreLocation

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from typing import TextIO
    from symfonic_cli.stores.protocol import Store

_BACKENDS = {
    "sqlite": "symfonic_cli.stores.sqlite",
    "postgres": "symfonic_cli.stores.postgres",
    "mongodb": "symfonic_cli.stores.mongodb",
}


# The driver packages of each optional kind (pyproject's extras), and how to install them.
_DRIVERS = {
    "postgres": (("psycopg", "psycopg_binary", "langgraph.checkpoint.postgres"), "PostgreSQL", "postgres"),
    "mongodb": (("pymongo", "bson", "gridfs", "langgraph.checkpoint.mongodb"), "MongoDB", "mongodb"),
}


def open_store(location: StoreLocation, *, writable: bool = False, stderr: TextIO | None = None, **options: Any) -> "Store":
    """Open a store read-only (the default) or, for erase and migrate targets, writable. What the
    driver warned about while opening (a MongoDB URL option it ignores) goes to ``stderr``, one
    line each."""
    try:
        module = import_module(_BACKENDS[location.kind])
        store = module.open_store(location, writable=writable, **options)
    except ModuleNotFoundError as exc:
        raise missing_driver(location.kind, exc) from None
    if stderr is not None:
        for line in store.open_warnings:  # only MongoDB's driver warns
            stderr.write(f"symfonic: warning: {line}\n")
    return store


def missing_driver(kind: str, exc: ModuleNotFoundError) -> Exception:
    """Exit 4 with the install command when ``exc`` is a missing driver of ``kind``; else ``exc``."""
    from symfonic_cli.errors import StoreError

    names, label, extra = _DRIVERS.get(kind, ((), "", ""))
    name = exc.name or ""
    if not any(name == n or name.startswith(n + ".") for n in names):
        return exc
    return StoreError(f"{label} support is not installed (no module '{name}')", hint=f'pip install "symfonic[{extra}]"')
