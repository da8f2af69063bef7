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

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from symfonic_cli.clock import iso_utc
from symfonic_cli.stores.messages import Delta, version_key
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




def _is_summary(message: Any) -> bool:
    content = tx._field(message, "content", "")
    return tx.role_of(message) == "system" and isinstance(content, str) and SUMMARY_MARK in content


def read_retained(store: Store, key: str) -> list[RetainedMessage]:
    """Every message version any checkpoint (or stored write) of ``key`` holds, oldest first."""
    try:
        return _retained(store, key, store.message_views(key))
    except Delta:
        return _retained(store, key, store.delta_message_views(key))


def retained_count(store: Store, key: str) -> int | None:
    """How many message versions of ``read_retained`` the current state no longer holds (what
    ``transcript show --retained`` lists beyond the transcript); None when the messages cannot be
    read (an encrypted store without its key, a checkpoint of an unexpected shape): an erase still
    deletes them, uncounted."""
    from symfonic_cli.errors import SymfonicError

    try:
        return sum(1 for m in read_retained(store, key) if not m.current)
    except SymfonicError:
        return None


@dataclass
class _Seen:
    message: Any
    namespace: str
    checkpoint: str
    ts: datetime | None
    pending: bool = False
    removed: tuple[str, str | None, str] | None = None  # (checkpoint, ts, by what)


def _retained(store: Store, key: str, views: Iterator[Any]) -> list[RetainedMessage]:
    removes, adds = store.written_messages(key)  # what the stored writes remove and add
    walked = []
    current: set | None = None
    removed: dict[tuple[str | None, str | bytes], tuple[str, str | None, str]] = {}
    children: dict[str, list[Any]] = {}  # root checkpoints waiting for their parent, by parent id
    parents: set[tuple[str, str | None]] = set()
    for view in views:  # newest first
        walked.append(view)
        parents.add((view.ns, view.parent))
        if view.ns != "":
            continue
        if current is None:
            current = set(view.keys())
        for child in children.pop(view.cid, ()):
            if child.anchor is view.anchor and view.length <= child.length:
                continue  # the child appended to this checkpoint's list: nothing removed
            _removals(view, child, current, removes, removed)
        if view.parent is not None:
            children.setdefault(view.parent, []).append(view)
    current = current or set()
    seen: dict[tuple[str | None, str | bytes], _Seen] = {}
    untimed: set[tuple[str | None, str | bytes]] = set()
    for view in reversed(walked):  # oldest first: each version's first appearance
        a, ts = view.anchor, tx.parse_checkpoint_ts(view.ts)
        for i in range(a.done, view.length):
            k = a.keys[i]
            if k not in seen:
                seen[k] = _Seen(a.messages[i], view.ns, view.cid, ts)
                if ts is None:
                    untimed.add(k)
        a.done = max(a.done, view.length)
        if untimed and ts is not None:  # a message first held by a checkpoint without a usable ts
            for k in set(view.keys()) & untimed:
                seen[k].ts = ts
                untimed.discard(k)
    # Messages held only in stored writes: never applied (the write's checkpoint has no child),
    # or applied to a checkpoint no longer stored.
    for where, messages in adds.items():
        leaf = (where[0], where[1]) not in parents
        for m in messages:
            k = version_key(m)
            if k in seen or (k[0] is None and not leaf):
                continue
            seen[k] = _Seen(m, where[0], where[1], None, pending=leaf)
    out = []
    for i, (k, s) in enumerate(seen.items()):
        r = removed.get(k)
        out.append(RetainedMessage(
            i, tx.role_of(s.message), _content(s.message), k[0], s.ts, s.checkpoint, s.namespace, k in current, s.pending,
            tx.parse_checkpoint_ts(r[1]) if r else None, r[0] if r else None, r[2] if r else None))
    return out


def _removals(parent: Any, child: Any, current: set, removes: dict, removed: dict) -> None:
    """The versions ``parent`` holds and its child does not: removed in the child's step, and by what."""
    keys, child_keys = set(parent.keys()), child.keys()
    gone = [k for k in keys - set(child_keys) if k not in current and k not in removed]
    if not gone:
        return
    summary = any(_is_summary(m) and k not in keys for k, m in zip(child_keys, child.anchor.messages))
    child_ids = {k[0] for k in child_keys}
    for k in gone:
        if summary:
            by = BY_COMPACTION
        elif k[0] is not None and k[0] in removes.get(("", parent.cid), ()):
            by = BY_REMOVE
        elif k[0] is not None and k[0] in child_ids:
            by = BY_NEW_VERSION
        else:
            by = BY_REWRITE
        removed[k] = (child.cid, child.ts, by)


def _content(message: Any) -> str:
    try:
        return tx.content_of(message)
    except (RecursionError, ValueError):
        return tx.UNPRINTABLE
