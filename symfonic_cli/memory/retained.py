"""Every message the store still holds for a thread (``transcript show --retained``).

symfonic-core's default compaction removes older messages from the state (``RemoveMessage``) and
appends a summary; the checkpoints written before still hold every removed message, verbatim.
This walks each checkpoint of the thread once (every namespace, the store's order: newest first),
plus the stored writes to ``messages``, and returns each message version once: identified by id
and content (a provider reusing an id with other content gives two versions), in order of first
appearance, marked with whether the latest root checkpoint still holds it and, when not, the first
checkpoint without it and what removed it. Stored objects are read from their fields, never built.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from symfonic_cli.clock import iso_utc
from symfonic_cli.stores.protocol import Store
from symfonic_cli.transcript import rows as tx

SUMMARY_MARK = "[Conversation Summary]"  # symfonic-core's compaction summary (core/nodes/context_window.py)
# removed_by: the words, each once.
BY_COMPACTION = "compaction"  # a compaction summary appeared in the same step
BY_REMOVE = "RemoveMessage"  # a RemoveMessage for its id was written in the step
BY_NEW_VERSION = "new version"  # the same id came back with other content
BY_REWRITE = "rewritten"  # the state was replaced otherwise (update_state, a fork)


@dataclass(frozen=True)
class RetainedMessage:
    index: int
    role: str
    content: str
    message_id: str | None
    first_seen: datetime | None  # the oldest checkpoint holding it, as transcript show dates messages
    first_checkpoint: str
    namespace: str
    current: bool  # the latest root checkpoint holds this version
    pending: bool = False  # held only in a pending write (not applied to any checkpoint)
    removed_at: datetime | None = None
    removed_checkpoint: str | None = None
    removed_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "role": self.role, "content": self.content, "message_id": self.message_id,
                "first_seen": iso_utc(self.first_seen), "first_checkpoint": self.first_checkpoint, "namespace": self.namespace,
                "current": self.current, "pending": self.pending, "removed_at": iso_utc(self.removed_at),
                "removed_checkpoint": self.removed_checkpoint, "removed_by": self.removed_by}


class _Checkpoint(NamedTuple):
    ns: str
    cid: str
    parent: str | None
    ts: str | None
    messages: list[Any]  # stored field mappings (or messages the DeltaChannel rebuild decoded)


class _Delta(Exception):
    """The thread's messages are delta-encoded: read them through the rebuild."""


def _fields(item: Any) -> Any:
    from symfonic_cli.codec.strict import LeanObject

    return item.fields if isinstance(item, LeanObject) else item


def version_key(message: Any) -> tuple[str | None, str]:
    """A message version: its id and its stored content (and role), compared exactly."""
    content = tx._field(message, "content", "")
    try:
        text = json.dumps([tx._field(message, "type"), content], sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(content)
    return tx.message_id_of(message), text


def _is_summary(message: Any) -> bool:
    content = tx._field(message, "content", "")
    return tx.role_of(message) == "system" and isinstance(content, str) and SUMMARY_MARK in content


def _plain_checkpoints(store: Store, key: str) -> Iterator[_Checkpoint]:
    """Each checkpoint decoded once, lean (no class built); a PostgreSQL blob version shared by
    consecutive checkpoints decoded once."""
    from symfonic_cli.codec.strict import lean_loads

    last: tuple[Any, list[Any]] | None = None
    for state in store.iter_message_states(key):
        what = f"checkpoint {state.checkpoint_id}"
        ts = state.ts
        if state.encoding == "checkpoint":
            value = lean_loads(state.payload_type, state.payload, what=what)
            values = value.get("channel_values") if isinstance(value, dict) else None
            if ts is None and isinstance(value, dict):
                ts = value.get("ts")
            messages = values.get("messages") if isinstance(values, dict) else None
            if messages is None and isinstance(value, dict) and "messages" in (value.get("channel_versions") or {}):
                raise _Delta
        else:
            if state.version is not None and state.payload is None:
                raise _Delta
            if last is not None and last[0] == (state.checkpoint_ns, state.version):
                messages = last[1]
            else:
                messages = lean_loads(state.payload_type, state.payload, what=what)
        if messages is not None and not isinstance(messages, list):
            raise _Delta  # a DeltaChannel snapshot
        items = [_fields(m) for m in messages or ()]
        if state.encoding != "checkpoint":
            last = ((state.checkpoint_ns, state.version), items)
        yield _Checkpoint(state.checkpoint_ns, state.checkpoint_id, state.parent_checkpoint_id, ts, items)


def _delta_checkpoints(store: Store, key: str) -> Iterator[_Checkpoint]:
    from symfonic_cli.delta.messages import ThreadMessages

    thread = ThreadMessages.read(store, key)
    for where in thread.order:
        node = thread.nodes[where]
        yield _Checkpoint(where[0], where[1], node.parent_checkpoint_id, thread.ts.get(where), thread.value_at(where, plain=True) or [])


def _writes(store: Store, key: str) -> tuple[dict[tuple[str, str], set[str]], dict[tuple[str, str], list[Any]]]:
    """Per checkpoint ``(ns, id)``: the ids its writes remove, and the messages they add."""
    from symfonic_cli.codec.strict import LeanObject, lean_loads

    removes: dict[tuple[str, str], set[str]] = {}
    adds: dict[tuple[str, str], list[Any]] = {}
    for w in store.iter_message_writes(key):
        value = lean_loads(w.payload_type, w.payload, what=f"write {w.checkpoint_id}/{w.task_id}/{w.idx}")
        where = (w.checkpoint_ns, w.checkpoint_id)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, LeanObject) and item[1] == "RemoveMessage" and isinstance(item.fields, dict):
                mid = item.fields.get("id")
                if isinstance(mid, str):
                    removes.setdefault(where, set()).add(mid)
            elif isinstance(item, LeanObject) and isinstance(item.fields, dict) and "content" in item.fields:
                adds.setdefault(where, []).append(item.fields)
    return removes, adds


@dataclass
class _Seen:
    message: Any
    namespace: str
    checkpoint: str
    position: int  # in the walk (newest first): the largest is the first appearance
    offset: int  # within that checkpoint's list
    ts: datetime | None
    pending: bool = False
    removed: tuple[str, str | None, str] | None = None  # (checkpoint, ts, by what)


def read_retained(store: Store, key: str) -> list[RetainedMessage]:
    """Every message version any checkpoint (or stored write) of ``key`` holds, oldest first."""
    try:
        return _retained(store, key, _plain_checkpoints(store, key))
    except _Delta:
        return _retained(store, key, _delta_checkpoints(store, key))


def _retained(store: Store, key: str, checkpoints: Iterator[_Checkpoint]) -> list[RetainedMessage]:
    removes, adds = _writes(store, key)
    seen: dict[tuple[str | None, str], _Seen] = {}
    current: set[tuple[str | None, str]] | None = None
    # Root checkpoints visited, waiting for their parent: parent id -> [(child id, ts, keys, summary keys)].
    children: dict[str, list[tuple[str, str | None, set, set]]] = {}
    parents: set[tuple[str, str | None]] = set()
    where_pos: dict[tuple[str, str], int] = {}
    position = 0
    for position, cp in enumerate(checkpoints):
        ts = tx.parse_checkpoint_ts(cp.ts)
        keys = set()
        summaries = set()
        for offset, m in enumerate(cp.messages):
            k = version_key(m)
            keys.add(k)
            if _is_summary(m):
                summaries.add(k)
            s = seen.get(k)
            if s is None:
                seen[k] = _Seen(m, cp.ns, cp.cid, position, offset, ts)
            else:
                s.namespace, s.checkpoint, s.position, s.offset = cp.ns, cp.cid, position, offset
                if ts is not None:
                    s.ts = ts
        parents.add((cp.ns, cp.parent))
        if (cp.ns, cp.cid) in adds:
            where_pos[(cp.ns, cp.cid)] = position
        if cp.ns != "":
            continue
        if current is None:
            current = keys
        for child, child_ts, child_keys, child_summaries in children.pop(cp.cid, ()):
            for k in keys - child_keys:
                s = seen[k]
                if s.removed is not None or k in current:
                    continue
                if child_summaries - keys:
                    by = BY_COMPACTION
                elif k[0] is not None and k[0] in removes.get(("", cp.cid), ()):
                    by = BY_REMOVE
                elif k[0] is not None and any(c[0] == k[0] for c in child_keys):
                    by = BY_NEW_VERSION
                else:
                    by = BY_REWRITE
                s.removed = (child, child_ts, by)
        if cp.parent is not None:
            children.setdefault(cp.parent, []).append((cp.cid, cp.ts, keys, summaries))
    current = current or set()
    # Messages held only in stored writes: never applied (the write's checkpoint has no child),
    # or applied to a checkpoint no longer stored.
    for where, messages in adds.items():
        leaf = (where[0], where[1]) not in parents
        for offset, m in enumerate(messages):
            k = version_key(m)
            if k in seen or (k[0] is None and not leaf):
                continue
            seen[k] = _Seen(m, where[0], where[1], where_pos.get(where, position + 1), 1_000_000 + offset, None, pending=leaf)
    ordered = sorted(seen.items(), key=lambda kv: (-kv[1].position, kv[1].offset))
    out = []
    for i, (k, s) in enumerate(ordered):
        removed = s.removed
        out.append(RetainedMessage(
            i, tx.role_of(s.message), _content(s.message), k[0], s.ts, s.checkpoint, s.namespace, k in current, s.pending,
            tx.parse_checkpoint_ts(removed[1]) if removed else None, removed[0] if removed else None, removed[2] if removed else None))
    return out


def _content(message: Any) -> str:
    try:
        return tx.content_of(message)
    except (RecursionError, ValueError):
        return tx.UNPRINTABLE
