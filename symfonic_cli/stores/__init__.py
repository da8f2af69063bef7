"""Opening a store: the backend module is imported only for the kind asked for."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from symfonic_cli.location import StoreLocation

if TYPE_CHECKING:
    from symfonic_cli.stores.base import Store

_BACKENDS = {
    "sqlite": "symfonic_cli.stores.sqlite",
    "postgres": "symfonic_cli.stores.postgres",
    "mongodb": "symfonic_cli.stores.mongodb",
}


def open_store(location: StoreLocation, *, writable: bool = False, **options) -> "Store":
    """Open a store read-only (the default) or, for erase and migrate targets, writable."""
    module = import_module(_BACKENDS[location.kind])
    return module.open_store(location, writable=writable, **options)
