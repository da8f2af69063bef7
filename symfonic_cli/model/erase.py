"""The erase cascade's types (``symfonic thread erase``): declared extra tables and a thread's plan."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from symfonic_cli.clock import checkpoint_id_time
from symfonic_cli.threadkey import parse_key

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# A table, column or collection name from the config file: a plain identifier, optionally
# "schema.table" on PostgreSQL. Checked before any backend sees it; backends still quote names.
ERASE_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]{0,62}"
ERASE_KEY_PARTS = ("thread", "tenant", "sub", "session")
# How a deployment's own table stores a missing sub-tenant (the "_" of a key): ``missing_sub``.
# "null" is SQL NULL (MongoDB: a null or absent field), the default; "" and "_" are those strings.
MISSING_SUB_FORMS = ("null", "", "_")


@dataclass(frozen=True)
class ExtraTable:
    """A deployment table (SQL) or collection (MongoDB) whose rows belong to a thread.

    Declared in the config file (``erase_extra`` of the store's entry), never guessed: an
    undeclared table is never touched. ``match`` pairs a column (field) with the part of the
    thread key it holds: ``"thread"`` (the whole key), ``"tenant"``, ``"sub"`` (the sub-tenant) or
    ``"session"``. A row is part of the cascade when every pair matches exactly. The pairs always
    identify one thread (the whole key, or tenant + sub + session), except when the entry says
    ``all_sub_tenants``: then tenant + session rows of every sub-tenant go.
    """

    name: str
    match: tuple[tuple[str, str], ...]  # ((column, part), ...), validated identifiers and parts
    missing_sub: str = "null"  # one of MISSING_SUB_FORMS
    all_sub_tenants: bool = False

    def filters(self, key: str) -> tuple[tuple[str, str | None], ...] | None:
        """``((column, value), ...)`` to AND together for ``key``, a value of None meaning SQL
        NULL (a null or absent MongoDB field); None when the key has no such part (a legacy key
        without three parts and a tenant/sub/session column): then the table holds nothing of it."""
        parts = parse_key(key)
        out: list[tuple[str, str | None]] = []
        for column, part in self.match:
            if part == "thread":
                out.append((column, key))
            elif parts is None:
                return None
            elif part == "tenant":
                out.append((column, parts.tenant))
            elif part == "session":
                out.append((column, parts.session))
            elif parts.sub_tenant is not None:
                out.append((column, parts.sub_tenant))
            else:
                out.append((column, None if self.missing_sub == "null" else self.missing_sub))
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
    # By instant (stores/activity.py sets them; clock.py's rule): the ids' min and max say nothing
    # of time when an id is not in the ordered form. None with ``undatable``: no time at all.
    first_at: datetime | None = None
    last_at: datetime | None = None
    undatable: bool = False
    # Whether some id is not in the ordered form (clock.is_ordered_id), the backend having tested
    # every id; None: not tested (then the plan's times are read checkpoint by checkpoint).
    odd: bool | None = None
    # Message versions the store holds that the conversation no longer shows (compaction or a
    # RemoveMessage took them out of the state; older checkpoints still hold them: memory/retained.py).
    # The erase deletes them with the rest. None: not counted (a sweep; messages not readable).
    retained: int | None = None

    @property
    def first_activity(self) -> datetime | None:
        return self.first_at if self.first_at is not None or self.undatable else checkpoint_id_time(self.first_checkpoint_id)

    @property
    def last_activity(self) -> datetime | None:
        return self.last_at if self.last_at is not None or self.undatable else checkpoint_id_time(self.last_checkpoint_id)

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def check_against_plan(expected: dict[str, int] | None, deleted: dict[str, int], extra: tuple[ExtraTable, ...]) -> None:
    """Inside the erasing transaction, before its commit: the rows deleted must be the rows the
    plan showed, else raise (the caller rolls back). All zeros passes: another eraser got there
    first and nothing is deleted. A table declared for every sub-tenant may hold fewer rows than
    planned (an earlier thread of the same batch shared them)."""
    if expected is None or not any(deleted.values()):
        return
    shared = {t.name for t in extra if t.all_sub_tenants}
    differ = [
        f"{name} {expected.get(name, 0)} planned, {n} found"
        for name, n in deleted.items()
        if n != expected.get(name, 0) and not (name in shared and n <= expected.get(name, 0))
    ]
    if differ:
        from symfonic_cli.errors import StoreError

        raise StoreError(f"changed since the plan ({'; '.join(differ)}): rolled back, nothing deleted")


def check_still_idle(key: str, last_checkpoint_id: str | None, idle_before: str | None,
                     odd: Iterable[tuple[str, Any]] = ()) -> None:
    """Inside the erasing transaction, before any delete: a retention sweep (``--inactive-for``)
    erases a thread only while its last activity, by instant (clock.py), is still before the
    cut-off fixed at the start (``idle_before``, its ``clock.id_at`` bound); a thread written since,
    or holding a checkpoint without a time, is left whole.

    ``last_checkpoint_id``: the greatest of the thread's ids in the ordered form
    (clock.is_ordered_id); ``odd``: ``(checkpoint_id, ts)`` of each of its other checkpoints."""
    if idle_before is None:
        return
    from symfonic_cli import clock

    pairs = list(odd)
    if last_checkpoint_id is not None:
        pairs.append((last_checkpoint_id, None))
    latest, undatable = clock.last_activity(pairs)
    from symfonic_cli.errors import ThreadActiveError

    if undatable:
        raise ThreadActiveError(f"thread '{key}' has a checkpoint without a time (undatable): left as it is")
    cut_off = clock.bound_time(idle_before)
    if cut_off is None:
        raise ValueError(f"not a checkpoint-id bound: {idle_before!r}")
    if latest is not None and not latest < cut_off:
        raise ThreadActiveError(f"thread '{key}' became active after the cut-off (last activity {clock.iso_utc(latest)}): left as it is")
