"""A thread's checkpoints newest first, built from ids, metadata and write channels.

What each checkpoint shows, and where it comes from (no checkpoint is decoded in full unless
noted):

- id, parent, namespace, ``ts`` and message count: ``Store.iter_checkpoint_heads`` (the first
  bytes of a blob, or SQL), as for transcript timestamps;
- step and source: ``metadata["step"]``/``["source"]`` (``Store.iter_checkpoint_facts``); the
  step falls back to the one LangGraph encodes in the checkpoint id;
- which node wrote which channels: the writes stored on the PARENT, i.e. the tasks that ran on
  the parent and whose writes made this checkpoint (``Store.iter_write_channels``; the node is
  the task path's node for pull tasks). A parent with several children gives its update-task
  writes (``update_state``) to its "update" children and its other writes to the rest. Writes
  stored on a checkpoint that no child took are its ``pending_writes`` (an interrupt, an error,
  a step that did not finish). LangGraph before 0.3 kept ``{node: values}`` in
  ``metadata["writes"]``; that is used when no write row is stored;
- forked: the checkpoint is the parent of several checkpoints of its namespace;
- copy: ``source`` "fork" (LangGraph's ``__copy__`` update, ``thread rewind``): no parent write made it;
  branch end: nothing continues it and it is not its namespace's newest (a branch left behind);
- rewrote: the messages of the checkpoint are not its parent's messages plus new ones: some
  were removed, reordered or edited in place (same id, other content). Message ids come from
  ``symfonic_cli.transcript.timestamps``'s anchors (proven appends need no decoding); only a transition
  that is not a proven append and whose parent writes could have replaced a message has both
  checkpoints' messages decoded (strictly) and compared.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from symfonic_cli.model.checkpoint import CheckpointHead
from symfonic_cli.model.history import CheckpointFacts, WriteChannel
from symfonic_cli.stores.protocol import Store
from symfonic_cli.transcript import rows as tx
from symfonic_cli.transcript import timestamps

_PULL = "~__pregel_pull, "
_UPDATE = "~__interrupt__"  # update_state's tasks: path (INTERRUPT, i)

Where = tuple  # (checkpoint_ns, checkpoint_id)


@dataclass(frozen=True)
class TaskWrites:
    """The channels one task wrote."""

    node: str | None  # None when the store does not say (a Send task, an update, no task_path)
    task_id: str | None
    task_path: str
    channels: tuple[str, ...]

    @property
    def label(self) -> str:
        if self.node is not None:
            return self.node
        if self.task_path.startswith(_UPDATE):
            return "(update)"
        return self.task_path or (self.task_id or "?")

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "task_id": self.task_id, "task_path": self.task_path, "channels": list(self.channels)}


@dataclass
class HistoryEntry:
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    step: int | None
    source: str | None
    ts: str | None
    messages: int | None
    writes: list[TaskWrites] = field(default_factory=list)
    pending_writes: list[TaskWrites] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    rewrote: bool = False
    removed_messages: list[str] = field(default_factory=list)
    edited_messages: list[str] = field(default_factory=list)
    branch_end: bool = False

    @property
    def forked(self) -> bool:
        return len(self.children) > 1

    copy = property(lambda self: self.source == "fork")  # LangGraph's __copy__ update (thread rewind)

    @property
    def marks(self) -> list[str]:
        out = []
        if self.forked:
            out.append(f"fork({len(self.children)})")
        if self.copy:
            out.append("copy")
        if self.branch_end:
            out.append("branch-end")
        if self.rewrote:
            out.append("rewrite")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint_id": self.checkpoint_id,
            "checkpoint_ns": self.checkpoint_ns,
            "parent_checkpoint_id": self.parent_checkpoint_id,
            "step": self.step,
            "source": self.source,
            "ts": self.ts,
            "messages": self.messages,
            "writes": [w.to_json() for w in self.writes],
            "pending_writes": [w.to_json() for w in self.pending_writes],
            "children": list(self.children),
            "forked": self.forked,
            "copy": self.copy,
            "branch_end": self.branch_end,
            "rewrote": self.rewrote,
            "removed_messages": list(self.removed_messages),
            "edited_messages": list(self.edited_messages),
        }


@dataclass
class HistoryResult:
    entries: list[HistoryEntry]
    warnings: list[str] = field(default_factory=list)
    decoded: int = 0  # checkpoints whose messages were read (cost, for tests and benchmarks)


def step_from_id(checkpoint_id: str) -> int | None:
    """LangGraph's ``uuid6(clock_seq=step)``: the step modulo 2**14, with -1 stored as 0x3fff."""
    step = timestamps.step_of(checkpoint_id)
    if step < 0:
        return None
    return -1 if step == 0x3FFF else step


def node_of(task_path: str) -> str | None:
    return task_path[len(_PULL):] if task_path.startswith(_PULL) else None


def build_history(store: Store, key: str, *, namespace: str | None = None, limit: int | None = None) -> HistoryResult:
    heads = list(store.iter_checkpoint_heads(key))
    facts = {(f.checkpoint_ns, f.checkpoint_id): f for f in store.iter_checkpoint_facts(key)}
    written = _writes_by_checkpoint(store.iter_write_channels(key))
    added = timestamps._added_by_writes(store.iter_message_writes(key))
    by_where = {(h.checkpoint_ns, h.checkpoint_id): h for h in heads}
    children: dict[Where, list[str]] = {}
    for h in heads:
        if h.parent_checkpoint_id and (h.checkpoint_ns, h.parent_checkpoint_id) in by_where:
            children.setdefault((h.checkpoint_ns, h.parent_checkpoint_id), []).append(h.checkpoint_id)

    thread = _delta_thread(store, key, heads)
    if thread is not None:  # a DeltaChannel's messages: counts and ids from the rebuilt lists
        heads = [h._replace(message_count=None) for h in heads]
        by_where = {(h.checkpoint_ns, h.checkpoint_id): h for h in heads}
        ids: _MessageIds = _DeltaMessageIds(store, key, thread)
    else:
        ids = _MessageIds(store, key, heads, added)
    entries: dict[Where, HistoryEntry] = {}
    taken: dict[Where, set[int]] = {}  # write groups of a checkpoint that a child took
    for h in heads:
        where = (h.checkpoint_ns, h.checkpoint_id)
        f = facts.get(where) or CheckpointFacts(h.checkpoint_ns, h.checkpoint_id, h.source, h.step)
        e = HistoryEntry(
            checkpoint_ns=h.checkpoint_ns,
            checkpoint_id=h.checkpoint_id,
            parent_checkpoint_id=h.parent_checkpoint_id,
            step=f.step if f.step is not None else step_from_id(h.checkpoint_id),
            source=f.source if f.source is not None else h.source,
            ts=h.ts,
            messages=h.message_count,
            children=sorted(children.get(where, ())),
        )
        parent_where = (h.checkpoint_ns, h.parent_checkpoint_id)
        if h.parent_checkpoint_id and parent_where in by_where:
            groups = written.get(parent_where, [])
            siblings = len(children.get(parent_where, ()))
            for i, g in enumerate(groups if not e.copy else ()):  # a copy: no write of the parent made it
                if siblings == 1 or g.task_path.startswith(_UPDATE) == (e.source == "update"):
                    e.writes.append(g)
                    taken.setdefault(parent_where, set()).add(i)
            _mark_rewrite(e, by_where[parent_where], h, ids, added.get(parent_where, (0, set())), siblings)
        if not e.writes:
            e.writes = _metadata_writes(f.writes)
        if e.messages is None:
            own = ids.get(h)
            e.messages = len(own) if own is not None else None
        entries[where] = e
    for where, groups in written.items():
        if where in entries:
            entries[where].pending_writes = [g for i, g in enumerate(groups) if i not in taken.get(where, set())]
    newest: dict[str, str] = {}
    for ns, cid in sorted(entries, key=lambda w: (w[1], w[0]), reverse=True):  # the list's order, as below
        newest.setdefault(ns, cid)
        entries[(ns, cid)].branch_end = not entries[(ns, cid)].children and cid != newest[ns]

    chosen = [e for e in entries.values() if namespace is None or e.checkpoint_ns == namespace]
    chosen.sort(key=lambda e: (e.checkpoint_id, e.checkpoint_ns), reverse=True)
    if limit is not None:
        chosen = chosen[:limit]
    return HistoryResult(chosen, sorted(ids.warnings), ids.decoded)


def _writes_by_checkpoint(rows: Iterable[WriteChannel]) -> dict[Where, list[TaskWrites]]:
    """Per checkpoint, one TaskWrites per task (channels in write order), tasks by path then id."""
    tasks: dict[Where, dict[tuple[str, str], list[tuple[int, str]]]] = {}
    for w in rows:
        if not isinstance(w.checkpoint_id, str):
            continue
        per = tasks.setdefault((w.checkpoint_ns, w.checkpoint_id), {})
        per.setdefault((w.task_path or "", w.task_id or ""), []).append((w.idx if isinstance(w.idx, int) else 0, str(w.channel)))
    out: dict[Where, list[TaskWrites]] = {}
    for where, per in tasks.items():
        groups = []
        for (path, task_id), chans in sorted(per.items()):
            chans.sort()
            seen: dict[str, None] = {}
            for _, ch in chans:
                seen.setdefault(ch, None)
            groups.append(TaskWrites(node_of(path), task_id or None, path, tuple(seen)))
        out[where] = groups
    return out


def _metadata_writes(value: Any) -> list[TaskWrites]:
    if not isinstance(value, dict):
        return []
    out = []
    for node, update in value.items():
        if isinstance(update, dict):
            chans = tuple(str(k) for k in update)
        elif isinstance(update, list):  # several updates of one node
            chans = tuple(dict.fromkeys(str(k) for u in update if isinstance(u, dict) for k in u))
        else:
            chans = ()
        out.append(TaskWrites(str(node), None, "", chans))
    return out


def _raw_hook(code: int, data: bytes) -> tuple[int, bytes]:
    return code, data


def _stored_messages(store: Store, key: str, ns: str, cid: str, *, raw: bool = False) -> list[Any] | None:
    """A checkpoint's messages from the stored fields, no message built (``decoding.lean_loads``:
    each standard or application message is a LeanObject ``(module, class, fields)``; with
    ``raw`` each stays its serialized bytes ``(ext code, bytes)``); None when the store or the
    value does not allow it (the strict decoder then decides)."""
    from symfonic_cli.codec.strict import lean_loads

    def unpack(type_, payload):
        if not raw:
            return lean_loads(type_, payload)
        import ormsgpack

        return ormsgpack.unpackb(bytes(payload), ext_hook=_raw_hook, option=ormsgpack.OPT_NON_STR_KEYS)

    try:
        state = store.read_messages_as_stored(key, checkpoint_ns=ns, checkpoint_id=cid)
        if state is None or state.payload_type != "msgpack" or not state.payload:
            return None
        value = unpack(state.payload_type, state.payload)
    except Exception:  # the strict decoder names what is wrong
        return None
    if state.encoding == "checkpoint":
        if not isinstance(value, dict) or not isinstance(value.get("channel_values"), dict):
            return None
        value = value["channel_values"].get("messages", [])
    return value if isinstance(value, list) else None


def _lean_id(m: Any) -> str | None:
    fields = m.fields if hasattr(m, "fields") else m
    mid = fields.get("id") if isinstance(fields, dict) else None
    return mid if isinstance(mid, str) else None


class _LeanIds(dict):
    """Message ids read from the stored fields for the resolver's anchors (``known``)."""

    def __init__(self, store: Store, key: str) -> None:
        super().__init__()
        self.store, self.key = store, key
        self.read = 0

    def get(self, where, default=None):
        msgs = _stored_messages(self.store, self.key, *where)
        if msgs is None:
            return default
        self.read += 1
        return [_lean_id(m) for m in msgs]


class _MessageIds:
    """Each checkpoint's message ids: anchors proven by message writes, else read once each."""

    def __init__(self, store: Store, key: str, heads: list[CheckpointHead], added) -> None:
        self.store, self.key = store, key
        self.anchors: dict[Where, list[str | None]] | None = None
        self.decoded_ids: dict[Where, list[str | None]] = {}
        self.recent: dict[tuple[Where, bool], list[Any] | None] = {}  # the last few lists read
        self.warnings: set[str] = set()
        self.decoded = 0
        if heads and all(h.message_count is not None for h in heads):
            try:
                lean = _LeanIds(store, key)
                resolution = timestamps.Resolution()
                self.anchors = timestamps._anchors(store, key, heads, added, lean, resolution)
                # strict decodes (counted by the resolver) plus lean reads
                self.decoded = (resolution.decoded or 0) + lean.read
            except timestamps._Unproven:
                self.anchors = None

    def get(self, h: CheckpointHead) -> list[str | None] | None:
        where = (h.checkpoint_ns, h.checkpoint_id)
        if self.anchors is not None and where in self.anchors and h.message_count is not None:
            return self.anchors[where][: h.message_count]
        if where not in self.decoded_ids:
            msgs, lean = self.messages(h)
            if msgs is None:
                self.decoded_ids[where] = []
            else:
                self.decoded_ids[where] = [_lean_id(m) if lean else tx.message_id_of(m) for m in msgs]
        return self.decoded_ids[where]

    def same_anchor(self, parent: CheckpointHead, child: CheckpointHead) -> bool:
        if self.anchors is None:
            return False
        a = self.anchors.get((parent.checkpoint_ns, parent.checkpoint_id))
        return a is not None and a is self.anchors.get((child.checkpoint_ns, child.checkpoint_id))

    def messages(self, h: CheckpointHead, *, strict: bool = False) -> tuple[list[Any] | None, bool]:
        """``(messages, lean)``: from the stored fields unless ``strict`` or they cannot be read so."""
        where = (h.checkpoint_ns, h.checkpoint_id)
        if not strict and (where, True) in self.recent:
            return self.recent[(where, True)], True
        if (where, False) in self.recent:
            return self.recent[(where, False)], False
        msgs = None if strict else _stored_messages(self.store, self.key, *where)
        lean = msgs is not None
        if msgs is None:
            record = self.store.read_checkpoint(
                self.key, checkpoint_ns=h.checkpoint_ns, checkpoint_id=h.checkpoint_id, channels=("messages",)
            )
            value = record.channel_values.get("messages") if record is not None else None
            if record is not None and record.blocked:
                self.warnings.update(record.blocked)
            msgs = value if isinstance(value, list) else None
        self.decoded += 1
        # Parent and child are compared, then the child becomes a parent: keep only a few lists.
        while len(self.recent) >= 4:
            self.recent.pop(next(iter(self.recent)))
        self.recent[(where, lean)] = msgs
        return msgs, lean

    def pair(self, parent: CheckpointHead, child: CheckpointHead) -> tuple[list[Any] | None, list[Any] | None, bool]:
        """Both lists read the same way (both from stored fields, else both strictly)."""
        old, lean_old = self.messages(parent)
        new, lean_new = self.messages(child)
        if old is not None and new is not None and lean_old != lean_new:
            old, _ = self.messages(parent, strict=True)
            new, _ = self.messages(child, strict=True)
            return old, new, False
        return old, new, lean_old and lean_new


def _delta_thread(store: Store, key: str, heads: list[CheckpointHead]):
    """The thread's rebuilt messages when its latest root checkpoint holds them delta-encoded."""
    root = [h.checkpoint_id for h in heads if h.checkpoint_ns == ""]
    if not root:
        return None
    from symfonic_cli.stores.delta import ThreadMessages
    from symfonic_cli.transcript.read import _plain_messages, delta_state, is_delta

    # Told from the stored fields where they show it (no message built: langchain_core is 1 s to import).
    if _plain_messages(store, key, max(root)) is not None:
        return None
    if delta_state(store, key, max(root)) is not None:
        return ThreadMessages.read(store, key)
    record = store.read_checkpoint(key, checkpoint_id=max(root), channels=("messages",))
    if record is None or not is_delta(record):
        return None
    return ThreadMessages.read(store, key)


class _DeltaMessageIds(_MessageIds):
    """Each checkpoint's messages as LangGraph rebuilds a delta-encoded channel."""

    def __init__(self, store: Store, key: str, thread) -> None:
        self.store, self.key, self.thread = store, key, thread
        self.anchors = None
        self.decoded_ids = {}
        self.recent = {}
        self.warnings = set()
        self.decoded = 0

    def get(self, h: CheckpointHead) -> list[str | None] | None:
        where = (h.checkpoint_ns, h.checkpoint_id)
        if where not in self.decoded_ids:
            self.decoded_ids[where] = self.thread.ids_at(where)
        return self.decoded_ids[where]

    def messages(self, h: CheckpointHead, *, strict: bool = False) -> tuple[list[Any] | None, bool]:
        self.decoded += 1
        value = self.thread.value_at((h.checkpoint_ns, h.checkpoint_id))
        self.warnings.update(self.thread.stored.blocked)
        return value, False


def _mark_rewrite(e: HistoryEntry, parent: CheckpointHead, child: CheckpointHead, ids: _MessageIds, writes, siblings: int) -> None:
    if ids.same_anchor(parent, child):
        return  # a proven append
    before, after = ids.get(parent), ids.get(child)
    if before is None or after is None:
        return
    present = set(after)
    e.removed_messages = [m for m in before if m is not None and m not in present]
    prefix = after[: len(before)] == before
    if not prefix:
        e.rewrote = True
    # Same ids in the same places: an edit in place is possible only when the writes that made
    # this checkpoint could replace a message (not plain appends, or ids already present), or
    # when they are not all stored (a fork, an update, a run saved with durability "exit").
    one_step = timestamps.step_of(child.checkpoint_id) == (timestamps.step_of(parent.checkpoint_id) + 1) & 0x3FFF
    if writes is not None and siblings == 1 and one_step and child.source != "fork" and not (writes[1] & set(before)):
        if prefix and child.message_count is not None and parent.message_count is not None and child.message_count >= parent.message_count:
            return
    e.edited_messages = _edited(ids, parent, child, before, after)
    if e.edited_messages or e.removed_messages:
        e.rewrote = True


def _edited(ids: _MessageIds, parent: CheckpointHead, child: CheckpointHead, before, after) -> list[str]:
    """Ids present in both checkpoints whose message differs. First by stored bytes (each
    message's serialized form, matched to the ids by position: nothing unpacked per message),
    else by the decoded messages."""
    old = _stored_messages(ids.store, ids.key, parent.checkpoint_ns, parent.checkpoint_id, raw=True)
    new = _stored_messages(ids.store, ids.key, child.checkpoint_ns, child.checkpoint_id, raw=True)
    ids.decoded += 2
    if old is not None and new is not None and len(old) == len(before) and len(new) == len(after):
        new_by_id = {mid: m for mid, m in zip(after, new) if mid is not None}
        return [mid for mid, m in zip(before, old) if mid in new_by_id and new_by_id[mid] != m]
    old, new, lean = ids.pair(parent, child)
    if old is None or new is None:
        return []
    key_of = _lean_id if lean else tx.message_id_of
    new_by_id = {k: m for m in new if (k := key_of(m)) is not None}
    return [k for m in old if (k := key_of(m)) is not None and k in new_by_id and new_by_id[k] != m]
