"""A changing run, the pure part: plans -> lines to show, results -> receipt. No I/O."""

from __future__ import annotations

from symfonic_cli.clock import human_duration, iso_utc  # human_duration: the one rule, used as ep.human_duration

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from symfonic_cli.kinds import KINDS
from symfonic_cli.model.erase import ThreadErasePlan

NOT_ERASED = (
    "Not erased: facts the agent extracted into its semantic, episodic or graph memory live "
    "elsewhere and need the tenant privacy erasure; backups and replicas keep copies until they rotate."
)
# What an erase leaves behind, per kind (kinds/).
RESIDUAL = {name: kind.erase_residual for name, kind in KINDS.items()}

ERASED, NOTHING, FAILED = "erased", "nothing-to-erase", "failed"
# A requested key with no row anywhere in the cascade; or one a --receipt file records as erased
# from the same store; or, after the receipt file could not be written, a thread left alone.
NOT_FOUND, ALREADY_ERASED, NOT_ATTEMPTED = "not-found", "already-erased", "not-attempted"
# A retention sweep's thread written after the cut-off: re-checked inside its transaction, left whole.
SKIPPED_ACTIVE = "skipped-active"
BUSY = "busy"  # a lock not had within --lock-timeout: rolled back, nothing changed; a rerun takes it
STATUSES = (ERASED, NOTHING, FAILED, NOT_FOUND, ALREADY_ERASED, NOT_ATTEMPTED, SKIPPED_ACTIVE, BUSY)


def is_recent(plan: ThreadErasePlan, now: datetime, grace: timedelta) -> bool:
    last = plan.last_activity
    return last is not None and now - last <= grace


def to_erase(plans: list[ThreadErasePlan]) -> list[ThreadErasePlan]:
    return [p for p in plans if p.total]


def _iso(dt: datetime | None) -> str | None:
    return iso_utc(dt)


@dataclass
class Miss:
    """Why a requested key has nothing to erase: never in the store, or erased by an earlier run."""

    status: str  # NOT_FOUND or ALREADY_ERASED
    suggestions: list[str] = field(default_factory=list)
    erased_by: dict[str, str] | None = None  # {"receipt_id": ..., "time": ...}

    def fields(self) -> dict[str, Any]:
        """What plans and receipts record. Never the suggestions: they are other people's keys,
        shown on the terminal (stderr) only."""
        if self.status == ALREADY_ERASED:
            return {"erased_by": self.erased_by}
        return {}


def plan_records(plans: list[ThreadErasePlan], now: datetime, grace: timedelta, misses: dict[str, Miss] | None = None) -> list[dict[str, Any]]:
    """One record per thread for display: key, status, rows per table, total, first/last activity,
    recent, and ``messages_retained`` where counted (the messages only older checkpoints hold)."""
    misses = misses or {}
    records = []
    for p in plans:
        miss = misses.get(p.key)
        rec: dict[str, Any] = {
            "key": p.key,
            "status": miss.status if miss else ("erase" if p.total else NOTHING),
            "rows": dict(p.rows),
            "total": p.total,
            "first_activity": _iso(p.first_activity),
            "last_activity": _iso(p.last_activity),
            "recent": is_recent(p, now, grace),
        }
        if p.retained is not None and not miss:
            rec["messages_retained"] = p.retained
        if miss:
            rec.update(miss.fields())
        records.append(rec)
    return records


@dataclass
class ThreadOutcome:
    key: str
    status: str
    rows_deleted: dict[str, int] = field(default_factory=dict)
    remaining: dict[str, int] | None = None  # None: not verified (the erase failed)
    reason: str | None = None
    last_activity: datetime | None = None
    recent: bool = False
    miss: Miss | None = None
    time: datetime | None = None  # when its erase committed (or was given up)
    messages_retained: int | None = None  # erased: the plan's count of messages only older checkpoints held


def outcome(plan: ThreadErasePlan, deleted: dict[str, int], remaining: dict[str, int], now: datetime, grace: timedelta) -> ThreadOutcome:
    """The status of one committed thread erase, from what it deleted and what verification found."""
    left = sum(remaining.values())
    recent = is_recent(plan, now, grace)
    if left:
        tables = ", ".join(f"{t} {n}" for t, n in remaining.items() if n)
        return ThreadOutcome(plan.key, FAILED, deleted, remaining, f"rows remain after commit ({tables}); an application wrote the thread again", plan.last_activity, recent)
    status = ERASED if sum(deleted.values()) else NOTHING
    return ThreadOutcome(plan.key, status, deleted, remaining, None, plan.last_activity, recent,
                         messages_retained=plan.retained if status == ERASED else None)


def failed(plan: ThreadErasePlan, reason: str, now: datetime, grace: timedelta) -> ThreadOutcome:
    return ThreadOutcome(plan.key, FAILED, {}, None, reason, plan.last_activity, is_recent(plan, now, grace))


def missed(plan: ThreadErasePlan, miss: Miss) -> ThreadOutcome:
    return ThreadOutcome(plan.key, miss.status, {}, None, None, miss=miss)


def skipped_active(plan: ThreadErasePlan, reason: str) -> ThreadOutcome:
    return ThreadOutcome(plan.key, SKIPPED_ACTIVE, {}, None, reason, plan.last_activity)


def busy(plan: ThreadErasePlan, reason: str) -> ThreadOutcome:
    return ThreadOutcome(plan.key, BUSY, {}, None, reason, plan.last_activity)


def not_attempted(plan: ThreadErasePlan, reason: str) -> ThreadOutcome:
    return ThreadOutcome(plan.key, NOT_ATTEMPTED, {}, None, reason, plan.last_activity)


def thread_entry(o: ThreadOutcome, kind: str, grace: timedelta) -> dict[str, Any]:
    """A thread's part of the receipt (also, with the run's header, its line in the receipt file)."""
    entry: dict[str, Any] = {"key": o.key, "status": o.status}
    if o.time is not None:
        entry["time"] = _iso(o.time)
    if o.miss is not None:
        entry.update(o.miss.fields())
        return entry
    entry["rows_deleted"] = o.rows_deleted
    if o.messages_retained is not None:  # a count, never content
        entry["messages_retained"] = o.messages_retained
    entry["verification"] = (
        {"checked": False}
        if o.remaining is None
        else {"checked": True, "rows_remaining": sum(o.remaining.values()), "ok": not sum(o.remaining.values())}
    )
    if o.status not in (NOT_ATTEMPTED, SKIPPED_ACTIVE, BUSY):
        entry["residual_copies"] = RESIDUAL[kind]
    if o.reason:
        entry["reason"] = o.reason
    if o.recent and o.status not in (NOTHING, NOT_ATTEMPTED, SKIPPED_ACTIVE, BUSY):
        entry["warning"] = f"activity in the last {human_duration(grace)} (last at {_iso(o.last_activity)}): a running agent that still holds the session can write the thread again"
    return entry


def summary(outcomes: list[ThreadOutcome]) -> dict[str, int]:
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in STATUSES}
    return {
        "threads": len(outcomes),
        "erased": counts[ERASED],
        "nothing_to_erase": counts[NOTHING],
        "failed": counts[FAILED],
        "not_found": counts[NOT_FOUND],
        "already_erased": counts[ALREADY_ERASED],
        "not_attempted": counts[NOT_ATTEMPTED],
        "skipped_active": counts[SKIPPED_ACTIVE],
        "busy": counts[BUSY],
    }


def build_receipt(header: dict[str, Any], outcomes: list[ThreadOutcome], *, kind: str, notes: list[str], grace: timedelta) -> dict[str, Any]:
    """The JSON receipt of one run: who, when, where, and per thread what went. No message content."""
    return {
        **header,
        "summary": summary(outcomes),
        "threads": [thread_entry(o, kind, grace) for o in outcomes],
        "not_erased": NOT_ERASED,
        "notes": notes,
    }


def plan_document(*, store_name: str, kind: str, selection: dict[str, Any], plans: list[ThreadErasePlan],
                  misses: dict[str, Miss], now: datetime, grace: timedelta) -> dict[str, Any]:
    """A request's dry run as one document (what ``-f json`` prints, what the API's plan holds)."""
    records = plan_records(plans, now, grace, misses)
    counts = {s: sum(1 for r in records if r["status"] == s) for s in ("erase", NOT_FOUND, ALREADY_ERASED, NOTHING)}
    return {
        "dry_run": True,
        "store": store_name,
        "store_kind": kind,
        "selection": selection,
        "summary": {
            "threads": len(records), "to_erase": counts["erase"], "not_found": counts[NOT_FOUND],
            "already_erased": counts[ALREADY_ERASED], "nothing_to_erase": counts[NOTHING],
        },
        "threads": records,
        "not_erased": NOT_ERASED,
    }
