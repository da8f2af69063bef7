"""Delta-encoded channels (LangGraph ``DeltaChannel``): which checkpoints store a value, which
ones a rebuild reads, and the ``messages`` reducer. Pure logic, no store access.

A ``DeltaChannel`` stores its value only now and then (a ``_DeltaSnapshot`` every
``snapshot_frequency`` updates, or a plain value left by an older channel type); other
checkpoints hold just a version. LangGraph rebuilds the value at checkpoint C
(``BaseCheckpointSaver.get_delta_channel_history``, ``pregel._checkpoint.channels_from_checkpoint``):

- C stores a value: that value (a snapshot's ``.value``);
- C has no version for the channel: empty;
- else walk C's parent chain (same namespace; C itself excluded) to the nearest checkpoint that
  stores a value (the seed; none: start empty, also when a parent is missing) and replay the
  writes of every checkpoint walked, the seed's included, oldest first, each checkpoint's in
  ``writes_sort_key`` order ``(task_path, task_id, idx)``.

``thread prune`` must keep, for every checkpoint it keeps, ``chain_to_seed`` and those
checkpoints' writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Callable, NamedTuple

Where = tuple[str, str]  # (checkpoint_ns, checkpoint_id)


class DeltaNode(NamedTuple):
    """One checkpoint as the rebuild of one channel sees it."""

    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    versioned: bool  # the channel is in channel_versions
    stored: bool  # channel_values holds a value for it (a _DeltaSnapshot or a plain value)

    @property
    def needs_replay(self) -> bool:
        """The value is not stored here and must be rebuilt from the parent chain."""
        return self.versioned and not self.stored


def is_delta_encoded(nodes: Iterable[DeltaNode]) -> bool:
    """Whether any checkpoint holds the channel only as a version (a DeltaChannel wrote it)."""
    return any(n.needs_replay for n in nodes)


def chain_to_seed(nodes: Mapping[Where, DeltaNode], where: Where) -> list[str]:
    """The checkpoint ids whose writes the rebuild at ``where`` replays, nearest first: the parent,
    its parent, ... up to and including the nearest one storing a value (the seed), or up to the
    root or a missing parent. Empty when ``where`` itself stores the value or has no version."""
    node = nodes.get(where)
    if node is None or not node.needs_replay:
        return []
    ns = where[0]
    out: list[str] = []
    seen = {where[1]}
    cur = node.parent_checkpoint_id
    while cur is not None and cur not in seen:
        parent = nodes.get((ns, cur))
        if parent is None:
            break  # LangGraph's walk stops at a missing parent too
        out.append(cur)
        seen.add(cur)
        if parent.stored:
            break
        cur = parent.parent_checkpoint_id
    return out


def nearest_seed(nodes: Mapping[Where, DeltaNode], where: Where) -> str | None:
    """The checkpoint whose stored value the rebuild at ``where`` starts from (``where`` itself
    when it stores one), None when the rebuild starts empty."""
    node = nodes.get(where)
    if node is None:
        return None
    if node.stored:
        return node.checkpoint_id
    chain = chain_to_seed(nodes, where)
    if chain and nodes[(where[0], chain[-1])].stored:
        return chain[-1]
    return None


def topological(nodes: Mapping[Where, DeltaNode]) -> list[Where]:
    """Every checkpoint, each after its parent (id order where that holds, which is nearly always)."""
    order: list[Where] = []
    done: set[Where] = set()
    for where in sorted(nodes, key=lambda w: (w[0], w[1])):
        path = []
        cur: Where | None = where
        while cur is not None and cur not in done and cur in nodes and cur not in path:
            path.append(cur)
            parent = nodes[cur].parent_checkpoint_id
            cur = (cur[0], parent) if parent is not None else None
        for w in reversed(path):
            done.add(w)
            order.append(w)
    return order


# -- the messages reducer (langgraph's _messages_delta_reducer), on any representation of messages

REMOVE_ALL_MESSAGES = "__remove_all__"


class MessageFold:
    """A messages list being rebuilt: ids replace in place, ``RemoveMessage`` removes,
    ``RemoveMessage(REMOVE_ALL_MESSAGES)`` clears, messages without an id are appended; an
    ``Overwrite`` write replaces the whole list. ``id_of(item)`` gives an item's id (None: none),
    ``kind_of(item)`` "remove", "overwrite" (then ``overwritten(item)`` is the new list) or "".
    Folding a write costs its own length, not the list's (the index is kept between writes)."""

    __slots__ = ("items", "index", "id_of", "kind_of", "overwritten", "added")

    def __init__(self, id_of: Callable[[Any], str | None], kind_of: Callable[[Any], str],
                 overwritten: Callable[[Any], list], items: list | None = None) -> None:
        self.id_of, self.kind_of, self.overwritten = id_of, kind_of, overwritten
        self.items: list[Any] = []
        self.index: dict[str, int] = {}
        self.added: list[str] = []  # ids that joined the list since the caller last cleared this
        if items:
            self._reset(items)

    def _reset(self, items: list) -> None:
        self.items = []
        self.index = {}
        for m in items:
            self._put(m)

    def _put(self, m: Any) -> None:
        mid = self.id_of(m)
        if mid is None:
            self.items.append(m)
        elif mid in self.index:
            self.items[self.index[mid]] = m
        else:
            self.index[mid] = len(self.items)
            self.items.append(m)
            self.added.append(mid)

    def copy(self) -> MessageFold:
        new = MessageFold(self.id_of, self.kind_of, self.overwritten)
        new.items, new.index = list(self.items), dict(self.index)
        return new

    def seed(self, items: list) -> None:
        self._reset(list(items))

    def apply(self, value: Any) -> None:
        """Fold one stored write (a list of messages or one message)."""
        kind = self.kind_of(value)
        if kind == "overwrite":
            new = self.overwritten(value)
            self._reset(list(new) if isinstance(new, (list, tuple)) else ([] if new is None else [new]))
            return
        for m in value if isinstance(value, list) else [value]:
            if self.kind_of(m) == "remove":
                mid = self.id_of(m)
                if mid == REMOVE_ALL_MESSAGES:
                    self.items, self.index = [], {}
                elif mid in self.index:
                    self.items[self.index.pop(mid)] = _GONE
                continue
            self._put(m)

    def value(self) -> list:
        return [m for m in self.items if m is not _GONE]

    def ids(self) -> list[str | None]:
        return [self.id_of(m) for m in self.items if m is not _GONE]


_GONE = object()
