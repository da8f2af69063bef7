"""The erase cascade's types (``symfonic thread erase``): declared extra tables and a thread's plan."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from symfonic_cli.stores.base import checkpoint_id_time
from symfonic_cli.threadkey import parse_key

# A table, column or collection name from the config file: a plain identifier, optionally
# "schema.table" on PostgreSQL. Checked before any backend sees it; backends still quote names.
ERASE_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]{0,62}"
ERASE_KEY_PARTS = ("thread", "tenant", "session")


@dataclass(frozen=True)
class ExtraTable:
    """A deployment table (SQL) or collection (MongoDB) whose rows belong to a thread.

    Declared in the config file (``erase_extra`` of the store's entry), never guessed: an
    undeclared table is never touched. ``match`` pairs a column (field) with the part of the
    thread key it holds: ``"thread"`` (the whole key), ``"tenant"`` or ``"session"``. A row is
    part of the cascade when every pair matches by equality.
    """

    name: str
    match: tuple[tuple[str, str], ...]  # ((column, part), ...), validated identifiers and parts

    def filters(self, key: str) -> tuple[tuple[str, str], ...] | None:
        """``((column, value), ...)`` to AND together for ``key``; None when the key has no such
        part (a two-part legacy key and a "session" column): then the table holds nothing of it."""
        parts = parse_key(key)
        out = []
        for column, part in self.match:
            if part == "thread":
                out.append((column, key))
            elif parts is None:
                return None
            else:
                out.append((column, parts.tenant if part == "tenant" else parts.session))
        return tuple(out)


@dataclass(frozen=True)
class ThreadErasePlan:
    """What erasing one thread would delete now, read without deleting anything."""

    key: str
    # table/collection name -> rows (documents) that would go. Every table of the cascade is
    # listed, zeros included, in delete order: extra tables first, checkpoint tables last.
    rows: dict[str, int]
    first_checkpoint_id: str | None  # min checkpoint_id over every namespace, None if none
    last_checkpoint_id: str | None  # max checkpoint_id over every namespace

    @property
    def first_activity(self) -> datetime | None:
        return checkpoint_id_time(self.first_checkpoint_id)

    @property
    def last_activity(self) -> datetime | None:
        return checkpoint_id_time(self.last_checkpoint_id)

    @property
    def total(self) -> int:
        return sum(self.rows.values())
