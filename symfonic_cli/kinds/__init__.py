"""One description per store kind: its URL schemes and how its locations are written (the grammar:
sqlite.py, postgres.py, server.py here), its backend and driver extra, the options it takes, and
what an erase or a prune leaves behind in it. Location parsing, opening a store, the receipts'
notes and the Python API read this table instead of switching on the kind; adding a store kind is
an entry here (with its grammar, when it has one of its own) and its backend package (stores/<kind>/).

The lowest floor but one: imports nothing of the package but the errors (the quick route reads it).
"""

from __future__ import annotations

from collections import namedtuple

from symfonic_cli.kinds import postgres as _postgres
from symfonic_cli.kinds import server as _server
from symfonic_cli.kinds import sqlite as _sqlite

# server: a database server (concurrent writers, worth migrate's worker processes) rather than a
# file; jsonb: metadata and inline channel values are JSONB, which folds -0.0 into 0 and cannot
# hold every value another kind stores (migrate checks and compares accordingly).
# The grammar: url_path(raw, scheme, mask) checks a URL of the kind's schemes and gives the file it
# names (None for a server); claims(raw) says whether a location without a scheme is written in the
# kind's own form (None: it has none), bare_path(raw, mask) checks that form, pairs(raw) reads a
# key/value form (the masking of secrets reads it). ``mask`` shows a location without its secrets.
StoreKind = namedtuple(
    "StoreKind", "name label schemes backend drivers extra options server jsonb erase_residual prune_residual "
    "url_path claims bare_path pairs files",
    defaults=(None, None, None, ()),
)
# files: a file store's suffixes of the files that are the store (its own, "", and what its engine
# writes beside it); a command never writes its output at one of them (output_paths.py).

# The options a store entry of the config file, the root options or the Python API may give,
# beyond each kind's own: read above the backend (erase_extra: erase's extra tables) or by migrate.
COMMON_OPTIONS = ("erase_extra", "init_target")
# The root options that reach a store: each kind takes those of them it declares (--pg-schema means
# nothing to a SQLite file and is not passed to it).
CONNECTION_OPTIONS = ("connect_timeout", "pg_schema", "checkpoint_collection", "writes_collection")

KINDS = {
    "sqlite": StoreKind(
        name="sqlite", label="SQLite", schemes=("sqlite",), backend="symfonic_cli.stores.sqlite", drivers=(), extra=None,
        options=("init_target",), server=False, jsonb=False,
        erase_residual=(
            "Deleted with secure_delete on: no erased text remains in the database file's pages. The -wal file "
            "keeps copies until the write-ahead log is truncated at the end of the run: the run's notes say whether "
            "it was. Backups and copies of the file keep it until they rotate."
        ),
        prune_residual="Deleted pages are free space inside the file until --compact (VACUUM) rewrites it; backups keep old copies.",
        url_path=_sqlite.url_path, bare_path=_sqlite.bare_path,  # a path no other kind claims: PATH_KIND
        files=("", "-wal", "-shm", "-journal"),  # the database file and what SQLite writes beside it
    ),
    "postgres": StoreKind(
        name="postgres", label="PostgreSQL", schemes=("postgresql", "postgres"), backend="symfonic_cli.stores.postgres",
        drivers=("psycopg", "psycopg_binary", "langgraph.checkpoint.postgres"), extra="postgres",
        options=("connect_timeout", "pg_schema", "init_target"), server=True, jsonb=True,
        erase_residual=(
            "Deleted rows remain as dead tuples until VACUUM (run with --vacuum), and in the WAL, replicas "
            "and backups until they are recycled or rotate."
        ),
        prune_residual="Deleted rows are dead tuples until VACUUM (--compact runs VACUUM (ANALYZE)); VACUUM FULL shrinks the files.",
        url_path=_server.url_path, claims=_postgres.claims, bare_path=_postgres.bare_path, pairs=_postgres.pairs,
    ),
    "mongodb": StoreKind(
        name="mongodb", label="MongoDB", schemes=("mongodb", "mongodb+srv"), backend="symfonic_cli.stores.mongodb",
        drivers=("pymongo", "bson", "gridfs", "langgraph.checkpoint.mongodb"), extra="mongodb",
        options=("connect_timeout", "checkpoint_collection", "writes_collection", "init_target"), server=True, jsonb=False,
        erase_residual=(
            "Deleted documents may remain in the storage engine's free space, the oplog, replicas and "
            "backups until they are compacted, rolled over or rotate."
        ),
        prune_residual="Deleted documents leave free space in the storage engine until 'compact' (--compact, where allowed).",
        url_path=_server.url_path,
    ),
}
# The kind of a location without a scheme that no kind's own form claims: a file path.
PATH_KIND = "sqlite"
# URL scheme -> kind name.
SCHEMES = {scheme: kind.name for kind in KINDS.values() for scheme in kind.schemes}
# Every option name a store may be given (any kind's, the connection ones, the common ones).
KNOWN_OPTIONS = tuple(dict.fromkeys((*CONNECTION_OPTIONS, *COMMON_OPTIONS, *(o for k in KINDS.values() for o in k.options))))


def backend_options(kind: str, options: dict) -> dict:
    """The options the backend of ``kind`` takes, from ``options``; a name no kind takes (a typo in
    the config file, an API keyword) is a ValueError naming it (the caller says where it came from)."""
    unknown = sorted(set(options) - set(KNOWN_OPTIONS))
    if unknown:
        raise ValueError(unknown[0])
    own = KINDS[kind].options
    return {k: v for k, v in options.items() if k in own}


def bare_kind(raw: str) -> StoreKind | None:
    """The kind whose own scheme-less form ``raw`` is written in (a libpq key/value string), or None
    for a plain path (``PATH_KIND``)."""
    for kind in KINDS.values():
        if kind.claims is not None and kind.claims(raw):
            return kind
    return None
