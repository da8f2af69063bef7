"""What each checkpoint holds in ``messages`` is the store's read (``message_views``,
``delta_message_views``: stores/messages.py and stores/delta.py behind every backend), and so is
what the stored writes to ``messages`` remove and add (``written_messages``): a feature that counts
messages (prune's lost ones, erase's retained ones) asks the store and imports no reader of
checkpoints, and no decoder, of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import symfonic_cli
from symfonic_cli.stores.mongodb.connect import MongoStore
from symfonic_cli.stores.postgres.connect import PostgresStore
from symfonic_cli.stores.sqlite.connect import SqliteStore

PACKAGE = Path(symfonic_cli.__file__).parent
READERS = {"checkpoint_views", "delta_views", "_plain_checkpoints", "_delta_checkpoints"}


def test_only_the_stores_import_the_checkpoint_readers():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "stores":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                found += [f"{path.relative_to(PACKAGE)}: {a.name}" for a in node.names if a.name in READERS]
    assert found == []


def test_every_backend_offers_the_messages_each_checkpoint_holds():
    for store in (SqliteStore, PostgresStore, MongoStore):
        assert callable(store.message_views) and callable(store.delta_message_views), store.__name__
        assert callable(store.written_messages), store.__name__


def test_the_counting_features_decode_nothing_themselves():
    """prune's lost count and erase's retained count (memory/retained.py, read by ``transcript show
    --retained`` too) decode no stored value: the store's reads do."""
    found = []
    for folder in ("prune", "erase", "memory"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "symfonic_cli.codec.strict":
                    found.append(f"{path.relative_to(PACKAGE)}: {', '.join(a.name for a in node.names)}")
    assert found == []
