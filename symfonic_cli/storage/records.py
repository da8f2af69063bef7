"""``thread prune``, the pure part: plans and outcomes as the records the plan, stdout and the
``--receipt`` file hold (erase's record format: a header, a line per thread, an end). No I/O.
Records hold keys, counts, ids and times: never message content."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from symfonic_cli.model.prune import BUSY, FAILED, NOT_ATTEMPTED, NOT_FOUND, NOTHING, PRUNED, SKIPPED, STATUSES, ThreadPrunePlan
from symfonic_cli.clock import iso_utc
from symfonic_cli.kinds import KINDS

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# What a prune leaves behind, per kind (kinds/).
RESIDUAL = {name: kind.prune_residual for name, kind in KINDS.items()}
TIMESTAMPS = ("a transcript dates each message by the oldest checkpoint holding it: after the prune, messages first "
              "seen in a deleted checkpoint are dated by the oldest kept one")


@dataclass
class PruneOutcome:
    key: str
    status: str
    rows_deleted: dict[str, int] = field(default_factory=dict)
    detached: int = 0
    remaining: int | None = None  # checkpoints a fresh plan would still delete; None: not verified
    reason: str | None = None
    time: datetime | None = None
    messages_only_in_deleted: int | None = None  # counted before the deletes (storage/lost.py)
    pieces: int = 0  # transactions the thread took (a huge thread: more than one, storage/pieces.py)


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


def plan_line(r: dict[str, Any], esc: Callable[[str], str], width: int | None = None) -> str:
    """One planned thread, wrapped under its key to ``width`` (None: one line): the key, counts,
    sizes and the time messages will be dated by stay whole; so does the count of messages
    whose transcript time moves."""
    from symfonic_cli.render.fit import Whole, enclose, fit, glue

    key = Whole(esc(r["key"]) + ":")
    if r["status"] == NOT_FOUND:
        pieces = [key, "not found"]
    elif r["status"] == SKIPPED:
        pieces = [key, "skipped:", esc(r["reason"])]
    elif r["status"] == NOTHING:
        pieces = [key, "nothing to prune", Whole(f"({r['checkpoints_before']} checkpoint(s))")]
    else:
        tables: list[str] = [Whole(f"{esc(t)} {n}") for t, n in r["rows"].items()]
        tables = [glue(p, p + ",") for p in tables[:-1]] + tables[-1:] + [Whole(_size(r["bytes"]))]
        if len(tables) > 1:
            tables[-2] = glue(tables[-2], tables[-2] + ";")
        pieces = [key, Whole(f"{r['rows'].get('checkpoints', 0)} of {r['checkpoints_before']} checkpoint(s)"), "to go",
                  *enclose(tables, "(", ")")]
        if r.get("delta_ancestors_kept"):
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += [Whole(str(r["delta_ancestors_kept"])), "kept for a DeltaChannel"]
        br = r.get("branches")
        if br:
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += ["forked:", Whole(f"{br['heads_deleted']} of {br['heads']} branch head(s)"), "go"]
        if r.get("messages_only_in_deleted"):
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += [Whole(f"{r['messages_only_in_deleted']} message(s)"), "held only in deleted checkpoints"]
        ts = r.get("timestamps_change")
        if ts:
            pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
            pieces += [Whole(f"{ts['messages']} message(s)"), "will be dated", Whole(esc(str(ts["to"])))]
    return fit(pieces, width, indent="  ", hang="    ")


def _size(n: int) -> str:
    from symfonic_cli.render import human_size

    return str(human_size(n))


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


def summary_line(s: dict[str, Any]) -> str:
    line = f"pruned {s['pruned']} thread(s), {s['nothing_to_prune']} with nothing to prune, {s['failed']} failed"
    for name, label in (("skipped", "skipped"), ("not_found", "not found"), ("not_attempted", "not attempted"),
                        ("busy", "busy (a lock not had within --lock-timeout; nothing changed, rerun to take them)")):
        if s[name]:
            line += f", {s[name]} {label}"
    rows = s.get("rows_deleted") or {}
    if rows:
        line += "; deleted " + ", ".join(f"{n} {t}" for t, n in rows.items())
    return line


def totals_line(to_prune: int, checkpoints: int, size: int, redated: int, width: int | None) -> str:
    """The plan's totals, with the count of messages whose transcript time moves and why."""
    from symfonic_cli.render.fit import Whole, fit

    return fit(["to prune:", Whole(f"{to_prune:,} thread(s),"), Whole(f"{checkpoints:,} checkpoint(s),"), Whole(_size(size) + ";"),
                Whole(f"{redated:,} message(s)"), f"will be dated by a newer kept checkpoint ({TIMESTAMPS})"],
               width, indent="  ", hang="    ")


def detail(o: PruneOutcome, esc: Callable[[str], str]) -> str:
    if o.reason:
        return f": {esc(o.reason)}"
    if o.status == PRUNED:
        pieces = f"; in {o.pieces} transactions (--piece-size)" if o.pieces > 1 else ""
        return " (" + ", ".join(f"{n} {esc(t)}" for t, n in o.rows_deleted.items()) + pieces + ")"
    return ""


def thread_line(o: PruneOutcome, esc: Callable[[str], str], width: int | None = None) -> str:
    """``<status> <key><detail>``, wrapped to ``width``: the key whole, a reason between words."""
    from symfonic_cli.render.fit import Whole, fit

    more = detail(o, esc)
    if width is None:
        return f"{o.status} {esc(o.key)}{more}"
    if more.startswith(": "):
        return fit([o.status, Whole(esc(o.key) + ":"), more[2:]], width)
    return fit([o.status, Whole(esc(o.key)), more], width)


LOST = ("held only in the checkpoints deleted (compaction had removed them from the conversation): "
        "after the prune no copy is left")


def lost_line(lost: int, width: int | None) -> str:
    """The plan's count of messages the prune removes for good."""
    from symfonic_cli.render.fit import Whole, fit

    return fit(["gone for good:", Whole(f"{lost:,} message(s)"), LOST], width, indent="  ", hang="    ")
