"""thread rewind's plan, read from the store and nothing changed: which checkpoint the thread goes
back to (``--to ID``, ``--to -N``, ``--before-message INDEX``), what the conversation is after it,
what the application runs next, the branch left behind, and the documents a dry run and a receipt
hold. The write itself is the store's (stores/_rewind.py: LangGraph's own copy)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from symfonic_cli.clock import checkpoint_time, human_duration, iso_utc
from symfonic_cli.errors import NotFoundError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

SHOWN_MESSAGES = 3  # the last messages of the conversation after the rewind the plan shows


@dataclass(frozen=True)
class Point:
    """A root checkpoint as the plan names it."""

    checkpoint_id: str
    written: datetime | None  # by instant: its UUIDv6 time, else its ts
    step: int | None
    source: str | None  # metadata["source"]: input, loop, update, fork
    writers: tuple[str, ...]  # the nodes whose writes made it (the tasks run on its parent)
    messages: int  # transcript messages it holds

    def to_json(self) -> dict[str, Any]:
        return {"checkpoint_id": self.checkpoint_id, "written": iso_utc(self.written), "step": self.step, "source": self.source, "written_by": list(self.writers), "messages": self.messages}


@dataclass(frozen=True)
class RewindView:
    """The plan: shown, confirmed, kept as the dry run's document."""

    store_name: str
    key: str
    target: Point
    head: Point
    now: datetime
    last_messages: tuple[dict[str, Any], ...]  # the conversation's last rows after the rewind (index, role, content)
    set_aside: int  # messages of the head's conversation not in the target's: they stay in the store
    head_status: str | None  # what the thread does now (thread show's status) ...
    head_waits: tuple[str, ...]  # ... and the nodes it waits on or runs next
    next_tasks: tuple[str, ...]  # what the application runs next after the rewind (no pending write is copied)
    branch: int  # root checkpoints of the head's branch after the fork point: left behind, kept
    last_write: datetime | None
    idle_for: timedelta
    undo: str  # the command that undoes the rewind: a rewind to the old head
    notes: list[str] = field(default_factory=list)

    @property
    def recent(self) -> bool:
        """Written within --idle-for (0: never)."""
        return bool(self.idle_for) and self.last_write is not None and self.now - self.last_write < self.idle_for

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "target": self.target.to_json(),
            "head": self.head.to_json(),
            "after": {"messages": self.target.messages, "last_messages": list(self.last_messages),
                      "messages_set_aside": self.set_aside, "next": list(self.next_tasks)},
            "now": {"status": self.head_status, "next": list(self.head_waits)},
            "branch_left": {"head": self.head.checkpoint_id, "checkpoints": self.branch},
            "last_write": iso_utc(self.last_write),
            "idle_for": human_duration(self.idle_for) if self.idle_for else "0",
            "undo": self.undo,
        }


def undo_command(key: str, head_id: str) -> str:
    """A rewind back to the old head: the same conversation as before, on a new checkpoint."""
    return f"symfonic thread rewind {shlex.quote(key)} --to {head_id}"


def resolve_target(store: Store, key: str, *, to: str | None, before_message: int | None) -> str:
    """The root checkpoint a rewind copies: ``to`` (an id, or ``-N`` as ``thread diff`` counts), or
    the newest one on the head's branch that does not yet hold transcript message ``before_message``."""
    from symfonic_cli.history.diff import resolve_ref

    if (to is None) == (before_message is None):
        raise UsageError("give the checkpoint to go back to: --to ID, --to -N or --before-message INDEX (one of them)")
    if to is not None:
        return resolve_ref(store, key, to, namespace="")[1]
    assert before_message is not None
    return _before_message(store, key, before_message)


def _message_ids(store: Store, key: str, checkpoint_id: str | None) -> list[str | None]:
    """The transcript's message ids at a root checkpoint (None: the head), no timestamp resolved."""
    from symfonic_cli.transcript.read import read_transcript

    ids: list[str | None] = []

    def note(row: Any) -> bool:
        ids.append(row.message_id)
        return False  # no row kept: no timestamp resolved

    read_transcript(store, key, checkpoint_id=checkpoint_id, keep=note)
    return ids


def _before_message(store: Store, key: str, index: int) -> str:
    from symfonic_cli.history.diff import resolve_ref

    ids = _message_ids(store, key, None)
    n = len(ids)
    position = index + n if index < 0 else index
    if not 0 <= position < n:
        raise NotFoundError(f"thread '{key}' has {n} message{'s' if n != 1 else ''}; there is no message {index}",
                            hint="list them with: symfonic transcript show")
    wanted = ids[position]
    if wanted is None:
        raise UsageError(f"message {index} of thread '{key}' has no id: give the checkpoint with --to")
    chain = _root_chain(store, key, resolve_ref(store, key, "-1", namespace="")[1])
    # Walk the head's branch back; a checkpoint holding fewer messages than the message's place
    # cannot hold it, so the walk skips reading those (checked exactly once found).
    for cid, count in chain:
        if count is not None and count > position:
            continue
        if wanted not in _message_ids(store, key, cid):
            return cid
    raise NotFoundError(f"every checkpoint of thread '{key}' holds message {index}: there is no checkpoint before it")


def _root_chain(store: Store, key: str, head_id: str) -> list[tuple[str, int | None]]:
    """The head's branch of the root namespace, newest first: (id, message count where cheap;
    None: read when the walk reaches it), by parent pointers."""
    parent: dict[str, tuple[str | None, int | None]] = {}
    for h in store.iter_checkpoint_heads(key):
        if h.checkpoint_ns == "":
            parent[h.checkpoint_id] = (h.parent_checkpoint_id, h.message_count)
    chain: list[tuple[str, int | None]] = []
    at: str | None = head_id
    while at is not None and at in parent and len(chain) <= len(parent):
        up, count = parent[at]
        chain.append((at, count))
        at = up
    return chain


def _point(store: Store, key: str, checkpoint_id: str, messages: int) -> Point:
    record = store.read_checkpoint(key, checkpoint_id=checkpoint_id, channels=())
    if record is None:
        raise NotFoundError(f"thread '{key}' has no checkpoint '{checkpoint_id}' in the root namespace")
    meta = record.metadata
    step = meta.get("step") if isinstance(meta.get("step"), int) else None
    source = meta.get("source") if isinstance(meta.get("source"), str) else None
    writers = () if source == "fork" else _writers(store, key, record.parent_checkpoint_id)  # a copy: no node wrote it
    return Point(checkpoint_id, checkpoint_time(checkpoint_id, record.ts), step, source, writers, messages)


def _writers(store: Store, key: str, parent: str | None) -> tuple[str, ...]:
    """The nodes whose writes, stored on the parent, made a checkpoint (as thread history names them)."""
    from symfonic_cli.history.history import node_of

    if parent is None:
        return ()
    nodes: list[str] = []
    for w in store.iter_write_channels(key):
        if w.checkpoint_ns == "" and w.checkpoint_id == parent:
            node = node_of(w.task_path)
            if node is not None and node not in nodes:
                nodes.append(node)
    return tuple(sorted(nodes))


def build_view(store: Store, key: str, *, store_name: str, to: str | None, before_message: int | None,
               now: datetime, idle_for: timedelta) -> RewindView:
    """Everything the plan says, read from the open store (read-only reads)."""
    from symfonic_cli.history.diff import resolve_ref
    from symfonic_cli.model.run_status import due_of
    from symfonic_cli.suggestions import require_thread
    from symfonic_cli.threadstate.show import thread_state
    from symfonic_cli.transcript.read import read_transcript

    summary = require_thread(store, key)
    try:
        head_id = resolve_ref(store, key, "-1", namespace="")[1]
    except NotFoundError:
        raise NotFoundError(f"thread '{key}' has no checkpoint in the root namespace: nothing to rewind") from None
    target_id = resolve_target(store, key, to=to, before_message=before_message)
    lean = store.rewind_target(key, target_id)
    if lean is None:
        raise NotFoundError(f"thread '{key}' has no checkpoint '{target_id}' in the root namespace")
    after = read_transcript(store, key, checkpoint_id=target_id)
    kept = {r.message_id for r in after.rows}
    head_ids = _message_ids(store, key, None)
    state, _, _ = thread_state(store, key)
    chain = [cid for cid, _ in _root_chain(store, key, head_id)]
    branch = chain.index(target_id) if target_id in chain else len(chain)
    return RewindView(
        store_name=store_name, key=key,
        target=_point(store, key, target_id, len(after.rows)),
        head=_point(store, key, head_id, len(head_ids)),
        now=now,
        last_messages=tuple({"index": r.index, "role": r.role, "content": r.content} for r in after.rows[-SHOWN_MESSAGES:]),
        set_aside=sum(1 for m in head_ids if m is None or m not in kept),
        head_status=state.get("status"), head_waits=tuple(state.get("next") or ()),
        next_tasks=tuple(t.name for t in due_of(lean)),
        branch=branch, last_write=summary.last_at, idle_for=idle_for, undo=undo_command(key, head_id),
    )


def plan_document(view: RewindView, *, kind: str, selection: dict[str, Any]) -> dict[str, Any]:
    """A dry run's document (``-f json``; the API's plan)."""
    return {"dry_run": True, "store": view.store_name, "store_kind": kind, "selection": selection,
            "threads": [{"key": view.key, "status": "rewind", **view.to_json()}]}


REWOUND, WRITTEN_AGAIN, NOT_WRITTEN, BUSY = "rewound", "written-again", "not-written", "busy"


def receipt(header: dict[str, Any], view: RewindView, *, status: str, new_id: str | None,
            reason: str | None = None) -> dict[str, Any]:
    """The receipt: who, when, the store, from which head to a copy of which checkpoint, the copy's id."""
    entry: dict[str, Any] = {"key": view.key, "status": status, "from_head": view.head.checkpoint_id,
                             "copy_of": view.target.checkpoint_id, "new_checkpoint_id": new_id,
                             "messages_set_aside": view.set_aside, "undo": view.undo}
    if reason:
        entry["reason"] = reason
    return {**header, "threads": [entry]}
