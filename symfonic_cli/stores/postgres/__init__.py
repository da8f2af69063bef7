"""PostgreSQL backend: connect.py opens the store and composes the sections, one module each
(read.py, history.py, compat.py, state.py, erase.py, copy.py, prune.py, usage.py, search.py), in the
order of stores/protocol.py; each section inherits the backend's base (``_common.py``), which declares what they share."""

from symfonic_cli.stores.postgres.connect import PostgresStore, open_store

__all__ = ['PostgresStore', 'open_store']
