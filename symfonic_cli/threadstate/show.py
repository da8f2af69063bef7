"""``thread show``: one thread's run state, assembled from the store's rows (see ``rows.py``)."""

from __future__ import annotations

from symfonic_cli.clock import iso_utc

from typing import Any

from symfonic_cli.errors import NotFoundError
from symfonic_cli.model import nexttasks as nt
from symfonic_cli.model.run_state import LeanCheckpoint, RawWrite
from symfonic_cli.model.run_status import due_of

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

# The JSON keys of ``thread show``, in order.
KEYS = ("key", "status", "next", "interrupts", "errors", "checkpoint_id", "step", "source", "rewound",
        "checkpoints", "namespaces", "messages", "restart_recalls", "size_bytes", "first_activity", "last_activity")


class _Interrupt:
    """What ``thread show`` reads of a stored ``langgraph.types.Interrupt``: its value and id."""

    __slots__ = ("value", "id")

    def __init__(self, value: Any, id: str) -> None:
        self.value, self.id = value, id


def _interrupt(fields: Any, data: bytes) -> Any:
    # Interrupt(value=v, id=s) keeps both as given; any other field set (a pre-0.6 interrupt's
    # ``ns``, no id) is built by LangGraph itself, which derives the id (langgraph.types: 1 s to import).
    if isinstance(fields, dict) and "value" in fields and isinstance(fields.get("id"), str) \
            and set(fields) <= {"value", "id", "response_schema"}:
        return _Interrupt(fields["value"], fields["id"])
    return NotImplemented


_VIEWS = {("langgraph.types", "Interrupt"): _interrupt}


def _decode(w: RawWrite, blocked_out: set[str]) -> Any:
    from symfonic_cli.codec.strict import collect_blocked, loads

    with collect_blocked() as blocked:
        value = loads(w.type, w.value, what=f"write {w.checkpoint_id}/{w.task_id}/{w.idx} channel '{w.channel}'",
                      views=_VIEWS)
    blocked_out.update(blocked)
    return value


def _state_of(cp: LeanCheckpoint, writes: list[RawWrite], blocked: set[str]) -> nt.RunState:
    due = due_of(cp)
    pending = []
    for w in writes:
        value = _decode(w, blocked) if w.channel in (nt.INTERRUPT, nt.ERROR) else None
        if w.channel == nt.ERROR and not isinstance(value, str):
            value = repr(value)
        pending.append(nt.PendingWrite(w.task_id, w.task_path, w.channel, value))
    return nt.run_state(due, pending)


def _delta_count(store: Store, key: str, cp: LeanCheckpoint) -> LeanCheckpoint:
    """A delta-encoded ``messages`` (LangGraph DeltaChannel) counted from its rebuilt list."""
    import dataclasses

    from symfonic_cli.transcript.read import is_delta

    record = store.read_checkpoint(key, checkpoint_id=cp.checkpoint_id, channels=("messages",))
    if record is None or not is_delta(record):
        return cp
    from symfonic_cli.stores.delta import ThreadMessages

    ids = ThreadMessages.read(store, key).ids_at(("", cp.checkpoint_id))
    return dataclasses.replace(cp, messages=len(ids))


def _activity(store: Store, key: str) -> dict[str, str | None]:
    """First and last activity by instant, as threads list reads them (stores/activity.py): every
    id tested, dated by its UUIDv6 time in any case, else its checkpoint's ts; null: undatable."""
    summary = store.thread_summary(key)
    if summary is None:
        return {"first_activity": None, "last_activity": None}
    return {"first_activity": iso_utc(summary.first_at), "last_activity": iso_utc(summary.last_at)}


def thread_state(store: Store, key: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """``(record, namespaces, warnings)``: the root namespace's run state and each subgraph's."""
    rows = store.read_run_rows(key)
    if rows is None:
        raise NotFoundError(f"no thread '{key}'")
    blocked: set[str] = set()
    by_cp: dict[tuple[str, str], list[RawWrite]] = {}
    for w in rows.writes:
        by_cp.setdefault((w.checkpoint_ns, w.checkpoint_id), []).append(w)
    root = None
    namespaces = []
    for cp in rows.latest:
        state = _state_of(cp, by_cp.get((cp.checkpoint_ns, cp.checkpoint_id), []), blocked)
        if cp.checkpoint_ns == "":
            root = (cp, state)
        namespaces.append({
                "namespace": cp.checkpoint_ns, "status": state.status, "next": state.next,
                "interrupts": state.interrupts, "checkpoint_id": cp.checkpoint_id, "step": cp.step,
            })
    record: dict[str, Any] = {"key": key}
    created = None
    if root is None:  # only subgraph checkpoints: nothing to run at the root
        record.update(status="done", next=[], interrupts=[], errors=[], checkpoint_id=None, step=None, source=None, messages=None,
                      rewound=None)
    else:
        cp, state = root
        if "messages" in cp.channel_versions and not cp.messages:
            cp = _delta_count(store, key, cp)
        record.update(
            status=state.status, next=state.next, interrupts=state.interrupts, errors=state.errors,
            checkpoint_id=cp.checkpoint_id, step=cp.step, source=cp.source, messages=cp.messages,
            rewound=_rewound(store, key, cp) if cp.source == "fork" else None,
        )
        created = cp.ts
    record.update(
        checkpoints=rows.checkpoints, namespaces=rows.namespaces, size_bytes=rows.size_bytes,
        **_activity(store, key),
    )
    warnings = list(rows.warnings)
    if blocked:
        warnings.append("not decoded (class not on the safe list, shown from its raw fields): " + ", ".join(sorted(blocked)))
    record["namespaces"] = rows.namespaces
    record["restart_recalls"] = _recalls(store, key)
    out = {k: record[k] for k in KEYS}
    out["created"] = created  # text and table only: the JSON keys are KEYS
    return out, namespaces, warnings


def _rewound(store: Store, key: str, head: LeanCheckpoint) -> dict[str, Any]:
    """When the thread was rewound (its newest checkpoint is a copy LangGraph's ``update_state(...,
    as_node="__copy__")`` or ``thread rewind`` wrote) and to which checkpoint: the sibling whose
    channel versions and versions seen the copy has (none found: null)."""
    from symfonic_cli.clock import checkpoint_time

    heads = [h for h in store.iter_checkpoint_heads(key) if h.checkpoint_ns == ""]
    parent = next((h.parent_checkpoint_id for h in heads if h.checkpoint_id == head.checkpoint_id), None)
    siblings = [h.checkpoint_id for h in heads if h.parent_checkpoint_id == parent and h.checkpoint_id != head.checkpoint_id]
    copy_of = None
    for cid in sorted(siblings, reverse=True):
        lean = store.rewind_target(key, cid)
        if lean is not None and lean.channel_versions == head.channel_versions and lean.versions_seen == head.versions_seen:
            copy_of = cid
            if lean.source != "fork":  # the original rather than an earlier copy of it
                break
    return {"at": iso_utc(checkpoint_time(head.checkpoint_id, head.ts)), "copy_of": copy_of}


def _recalls(store: Store, key: str) -> dict[str, Any]:
    """What symfonic-core's restart-resume would recall (its default window): turns, the last
    one's time, or why nothing."""
    from symfonic_cli.memory.resume import read_resume_window

    window = read_resume_window(store, key)
    last = window.rows[-1].timestamp if window.rows else None
    return {"turns": len(window.rows), "last_at": iso_utc(last), "reason": window.reason}
