"""Opening a store: the backend module is imported only for the kind asked for."""

from __future__ import annotations

from importlib import import_module

from symfonic_cli.location import StoreLocation

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

_BACKENDS = {
    "sqlite": "symfonic_cli.stores.sqlite",
    "postgres": "symfonic_cli.stores.postgres",
    "mongodb": "symfonic_cli.stores.mongodb",
}


def open_store(location: StoreLocation, *, writable: bool = False, **options) -> "Store":
    """Open a store read-only (the default) or, for erase and migrate targets, writable."""
    module = import_module(_BACKENDS[location.kind])
    return module.open_store(location, writable=writable, **options)
