"""``thread prune``, the pure part: plans and outcomes as the records the plan, stdout and the
``--receipt`` file hold (erase's record format: a header, a line per thread, an end), and the plan
as its caller is told it (``PruneView``; cli/prune_text.py renders it). No I/O.
Records hold keys, counts, ids and times: never message content."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from symfonic_cli.model.prune import BUSY, FAILED, NOT_ATTEMPTED, NOT_FOUND, NOTHING, PRUNED, SKIPPED, STATUSES, ThreadPrunePlan
from symfonic_cli.clock import iso_utc
from symfonic_cli.kinds import KINDS

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

# What a prune leaves behind, per kind (kinds/).
RESIDUAL = {name: kind.prune_residual for name, kind in KINDS.items()}
TIMESTAMPS = ("a transcript dates each message by the oldest checkpoint holding it: after the prune, messages first "
              "seen in a deleted checkpoint are dated by the oldest kept one")


@dataclass(frozen=True)
class PruneTotals:
    """A prune plan's totals, counted as its threads are planned."""

    to_prune: int = 0
    checkpoints: int = 0
    bytes: int = 0
    redated: int = 0  # messages whose transcript time moves
    lost: int = 0  # messages held only in the checkpoints deleted
    forked: int = 0  # forked threads losing branch heads
    heads_deleted: int = 0


@dataclass(frozen=True)
class PruneView:
    """A prune's plan as its caller is told it (changes/report.py): what is kept, the selection, the
    count, the notes; ``sample``, the first threads' plan records (a confirmation's); ``totals``
    once every thread is planned (None while a dry run streams them)."""

    store_name: str
    keep: int
    older_than: timedelta | None
    selection: dict[str, Any]
    total: int
    undatable: int
    notes: list[str]
    sample: list[dict[str, Any]] = field(default_factory=list)
    totals: PruneTotals | None = None


@dataclass
class PruneOutcome:
    key: str
    status: str
    rows_deleted: dict[str, int] = field(default_factory=dict)
    detached: int = 0
    remaining: int | None = None  # checkpoints a fresh plan would still delete; None: not verified
    reason: str | None = None
    time: datetime | None = None
    messages_only_in_deleted: int | None = None  # counted before the deletes (prune/lost.py)
    pieces: int = 0  # transactions the thread took (a huge thread: more than one, prune/pieces.py)


def plan_record(p: ThreadPrunePlan, *, found: bool = True) -> dict[str, Any]:
    if not found:
        return {"key": p.key, "status": NOT_FOUND}
    status = SKIPPED if p.skipped else ("prune" if p.changes else NOTHING)
    rec: dict[str, Any] = {
        "key": p.key, "status": status, "checkpoints_before": p.checkpoints_before, "rows": dict(p.rows),
        "bytes": p.bytes, "parents_detached": p.detached, "delta_ancestors_kept": p.delta_ancestors,
        "last_activity": iso_utc(p.last_at),  # by instant, as threads list dates it (null: undatable)
    }
    if p.skipped:
        rec["reason"] = p.skipped
    if p.branch_heads:  # forked (time travel): the branch heads, and how many of them go
        rec["branches"] = {"heads": p.branch_heads, "heads_deleted": p.branch_heads_deleted}
    if p.redated:
        rec["timestamps_change"] = {"messages": p.redated, "to": p.redated_to}
    return rec


def thread_entry(o: PruneOutcome, kind: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"key": o.key, "status": o.status}
    if o.time is not None:
        entry["time"] = iso_utc(o.time)
    if o.status in (NOT_FOUND, NOT_ATTEMPTED, BUSY):
        if o.reason:
            entry["reason"] = o.reason
        return entry
    entry["rows_deleted"] = o.rows_deleted
    if o.messages_only_in_deleted is not None:
        entry["messages_only_in_deleted"] = o.messages_only_in_deleted  # a count: never the content
    entry["parents_detached"] = o.detached
    if o.pieces > 1:
        entry["pieces"] = o.pieces
    entry["verification"] = ({"checked": False} if o.remaining is None
                             else {"checked": True, "checkpoints_left_to_prune": o.remaining, "ok": o.remaining == 0})
    if o.status == PRUNED:
        entry["residual_copies"] = RESIDUAL[kind]
    if o.reason:
        entry["reason"] = o.reason
    return entry


def written_again(deleted: dict[str, int], remaining: int) -> str:
    """The reason of a prune that committed and then found the thread written by an application."""
    rows = ", ".join(f"{t} {n}" for t, n in deleted.items() if n) or "no rows"
    return (f"committed ({rows} deleted), then written again by an application: {remaining} checkpoint(s) "
            "to prune after the commit; stop the application and prune again")


def empty_counts() -> dict[str, int]:
    return dict.fromkeys(STATUSES, 0)


def summary(counts: dict[str, int], planned: int, done: int, stopped: bool, rows: dict[str, int]) -> dict[str, Any]:
    return {
        "planned": planned, "threads": done, "pruned": counts[PRUNED], "nothing_to_prune": counts[NOTHING],
        "skipped": counts[SKIPPED], "failed": counts[FAILED], "not_found": counts[NOT_FOUND],
        "not_attempted": planned - done if stopped else 0, "busy": counts[BUSY], "rows_deleted": rows,
    }
