"""symfonic: safe, read-only-by-default tools for symfonic-core checkpoint stores.

The Python API (docs/python-api.md) is loaded on first use (PEP 562), so the command line stays
quick: ``symfonic_cli.open_store`` here, the changing operations as ``symfonic_cli.api.erase``,
``.export`` and ``.migrate`` (as alembic's ``command``; ``symfonic_cli.erase`` is the erase package). It is loaded by name: the package's own modules import ``__version__`` from here, never the
API (tests/project/test_layout.py checks that), so the root package is no link in an import cycle.
"""

from symfonic_cli.errors import NotFoundError, StoreError, SymfonicError, UsageError

__version__ = "0.1.0"

API = ("open_store", "Store", "Record")
__all__ = ["SymfonicError", "UsageError", "NotFoundError", "StoreError", *API]


def __getattr__(name: str) -> object:
    if name in API:
        from importlib import import_module

        return getattr(import_module("symfonic_cli.api"), name)
    raise AttributeError(f"module 'symfonic_cli' has no attribute {name!r}")
