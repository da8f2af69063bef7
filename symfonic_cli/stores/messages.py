"""Each checkpoint's ``messages`` as a prefix of a shared list, reading every checkpoint once.

A long thread stores its whole conversation again in every checkpoint, so decoding each one is
quadratic. Walking the thread newest first, a checkpoint whose stored message bytes are the
first bytes of a child's (LangGraph appended to them) is a *view* of the child's list: the same
``Anchor`` and its own count, proven by one byte comparison, nothing decoded. Only checkpoints
that are no such prefix (the latest one, a compaction, a RemoveMessage, a fork) are split into
their stored items, and each distinct item is decoded once, lean (no class built). An anchor's
bytes are kept only while a checkpoint still to be read may be its prefix (the largest
checkpoint bounds them); what stays is the decoded messages, each distinct one once.

Every backend offers these reads as its own methods (``message_views``, ``delta_message_views``,
and ``written_messages``, what the stored writes remove and add: stores/_common.py ``HeldMessages``): a feature counting messages (a prune's lost ones, an erase's
retained ones) asks the store, and never reads or decodes a checkpoint itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from symfonic_cli.codec.fields import field, message_id_of
from symfonic_cli.codec.msgpack_head import _STANDARD_HEAD, NeedMore, _Reader, item_ends

# ``store``: a backend's Store (stores/protocol.py, which names View; not imported here: no cycle),
# read through its ``iter_message_states`` (and, delta-encoded, stores/delta.py's reads).
Store = Any


class Anchor:
    """A message list: ``keys`` (version keys) and ``messages`` (stored fields), index by index."""

    __slots__ = ("done", "keys", "messages", "offsets", "refs", "region")

    def __init__(self, keys: list, messages: list, region: bytes | None = None, offsets: list[int] | None = None) -> None:
        self.keys, self.messages = keys, messages
        self.region, self.offsets = region, offsets  # the stored item bytes and their ends, while needed
        self.refs = 0  # checkpoints waiting for their parent that are views of this anchor
        self.done = 0  # used by the readers' oldest-first passes


class View(NamedTuple):
    ns: str
    cid: str
    parent: str | None
    ts: str | None
    anchor: Anchor
    length: int

    def keys(self) -> list:
        return self.anchor.keys[:self.length]


class Delta(Exception):
    """The thread's messages are delta-encoded: read them through the rebuild."""


def _fields(item: Any) -> Any:
    from symfonic_cli.codec.strict import LeanObject

    return item.fields if isinstance(item, LeanObject) else item


def version_key(message: Any, raw: bytes | None = None) -> tuple[str | None, str | bytes]:
    """A message version: its id and its stored content (and role), compared exactly. A stored
    item that decodes to no message (a damaged or unknown ext, a bare value) has no id or content
    to tell it apart: where its stored bytes ``raw`` are at hand, they are its version (two such
    items were one key, so one kept hid every other that a prune deletes)."""
    if raw is not None and not isinstance(message, dict):
        return None, raw
    content = field(message, "content", "")
    try:
        text = json.dumps([field(message, "type"), content], sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(content)
    return message_id_of(message), text


class _Checkpoint(NamedTuple):
    ns: str
    cid: str
    parent: str | None
    ts: str | None
    messages: list[Any]  # stored field mappings (or messages the DeltaChannel rebuild decoded)


def _plain_checkpoints(store: Store, key: str, states: Iterator[Any] | None = None) -> Iterator[_Checkpoint]:
    """Each checkpoint decoded once, lean (no class built); a PostgreSQL blob version shared by
    consecutive checkpoints decoded once."""
    from symfonic_cli.codec.strict import lean_loads

    last: tuple[Any, list[Any]] | None = None
    for state in states if states is not None else store.iter_message_states(key):
        what = f"checkpoint {state.checkpoint_id}"
        ts = state.ts
        if state.encoding == "checkpoint":
            value = lean_loads(state.payload_type, state.payload, what=what)
            values = value.get("channel_values") if isinstance(value, dict) else None
            if ts is None and isinstance(value, dict):
                ts = value.get("ts")
            messages = values.get("messages") if isinstance(values, dict) else None
            if messages is None and isinstance(value, dict) and "messages" in (value.get("channel_versions") or {}):
                raise Delta
        else:
            if state.version is not None and state.payload is None:
                raise Delta
            if last is not None and last[0] == (state.checkpoint_ns, state.version):
                messages = last[1]
            else:
                messages = lean_loads(state.payload_type, state.payload, what=what)
        if messages is not None and not isinstance(messages, list):
            raise Delta  # a DeltaChannel snapshot
        items = [_fields(m) for m in messages or ()]
        if state.encoding != "checkpoint":
            last = ((state.checkpoint_ns, state.version), items)
        yield _Checkpoint(state.checkpoint_ns, state.checkpoint_id, state.parent_checkpoint_id, ts, items)


def _delta_checkpoints(store: Store, key: str) -> Iterator[_Checkpoint]:
    from symfonic_cli.stores.delta import ThreadMessages

    thread = ThreadMessages.read(store, key)
    for where in thread.order:
        node = thread.nodes[where]
        yield _Checkpoint(where[0], where[1], node.parent_checkpoint_id, thread.ts.get(where), thread.value_at(where, plain=True) or [])


class _Items:
    """Distinct stored items decoded once: raw bytes -> (version key, fields)."""

    def __init__(self) -> None:
        self.cache: dict[bytes, tuple[Any, Any]] = {}

    def anchor(self, blob: bytes, start: int, n: int, decode: bool = True) -> Anchor:
        """The list of ``n`` stored items at ``start``; ``decode=False``: their ends only (no keys,
        no messages), enough to tell which checkpoints are its prefixes."""
        ends = item_ends(blob, start, n)
        offsets = [e - start for e in ends]
        keys: list = []
        messages: list = []
        if decode:
            import ormsgpack

            from symfonic_cli.codec.strict import _lean_hook

            begin = start
            for end in ends:
                raw = bytes(blob[begin:end])
                begin = end
                hit = self.cache.get(raw)
                if hit is None:
                    try:
                        m = _fields(ormsgpack.unpackb(raw, ext_hook=_lean_hook, option=ormsgpack.OPT_NON_STR_KEYS))
                    except (ValueError, TypeError):  # a whole item that does not decode (e.g. a str not UTF-8)
                        m = None
                    hit = self.cache[raw] = (version_key(m, raw), m)
                keys.append(hit[0])
                messages.append(hit[1])
        return Anchor(keys, messages, bytes(blob[start:start + (offsets[-1] if offsets else 0)]), offsets)


_MESSAGES_KEY = b"\xa8messages"


def _region(blob: bytes, encoding: str) -> tuple[int, int] | None:
    """``(start of the first item, item count)`` of the stored messages array; None: not a plain array."""
    fast = None
    if encoding == "checkpoint":
        fast = _STANDARD_HEAD.match(blob)
        if fast is None:
            return None
        # LangGraph's layout, read inline (a prune's quick pass runs this per checkpoint): a small
        # channel map whose first key is "messages", then the array's head; anything else, the loop.
        p = fast.end()
        if len(blob) > p + 10 and 0x81 <= blob[p] <= 0x8F and blob.startswith(_MESSAGES_KEY, p + 1):
            c = blob[p + 10]
            if 0x90 <= c <= 0x9F:
                return p + 11, c & 0x0F
            width = 2 if c == 0xDC else 4 if c == 0xDD else 0
            if width and p + 11 + width <= len(blob):
                return p + 11 + width, int.from_bytes(blob[p + 11:p + 11 + width], "big")
    r = _Reader(blob)
    try:
        if fast is not None:
            r.p = fast.end()
            kind, m = r.head()
            if kind != "map":
                return None
            for _ in range(m):
                if blob.startswith(_MESSAGES_KEY, r.p):
                    r.p += 9
                    break
                r.skip()
                r.skip()
            else:
                return None
        kind, n = r.head()
        return (r.p, n) if kind == "array" else None
    except (NeedMore, ValueError, IndexError):
        return None


def checkpoint_views(store: Store, key: str, *, decode: bool = True, states: Iterator[Any] | None = None) -> Iterator[View]:
    """Every checkpoint of ``key`` (every namespace, the store's order: newest first) as a View.
    ``decode=False``: the same views (anchors and lengths), but an anchor read from plain bytes has
    no keys or messages and a view no ``ts`` read from its head: the shape alone, for a quick pass.
    ``states``: the thread's message states as another read gives them (each namespace newest first)."""
    items = _Items()
    waiting: dict[tuple[str, str], list[View]] = {}
    last: tuple[Any, View] | None = None  # a PostgreSQL blob version shared by consecutive checkpoints
    from symfonic_cli.codec.cipher import decrypt

    # A prune's quick pass runs this loop per checkpoint: a MessageState is a tuple (unpacked once),
    # a View made by tuple.__new__ (NamedTuple's own __new__ is a Python call).
    new = tuple.__new__
    for state in states if states is not None else store.iter_message_states(key):
        ns, cid, ts, version, encoding, payload_type, payload, parent = state
        children = waiting.pop((ns, cid), None)
        view = None
        shared = last is not None and encoding == "channel" and last[0] == (ns, version)
        if payload and not shared and isinstance(payload_type, str) and "+" in payload_type:
            # An encrypted value is read as its plaintext: its items split (and told apart) as a plain one's.
            payload_type, payload = decrypt(payload_type, payload, what=f"checkpoint {cid}")
        if last is not None and shared:
            v = last[1]
            view = new(View, (ns, cid, parent, ts, v.anchor, v.length))
        elif payload_type == "msgpack" and payload:
            raw = payload if type(payload) is bytes else bytes(payload)  # a copy only of a memoryview
            found = _region(raw, encoding)
            if found is not None:
                start, n = found
                if ts is None and encoding == "checkpoint" and decode:
                    ts = _head_ts(raw)
                for child in children or ():
                    a = child.anchor
                    if a.region is not None and a.offsets is not None and n <= child.length:
                        length = a.offsets[n - 1] if n else 0
                        if raw.startswith(memoryview(a.region)[:length], start):  # one memcmp, no copy
                            view = new(View, (ns, cid, parent, ts, a, n))
                            break
                if view is None:
                    view = new(View, (ns, cid, parent, ts, items.anchor(raw, start, n, decode), n))
        if view is None:  # no plain array here: read it as the slow path does (a DeltaChannel raises Delta)
            cp = next(_plain_checkpoints(store, key, states=iter([state])))
            anchor = Anchor([version_key(m) for m in cp.messages], list(cp.messages))
            view = View(cp.ns, cp.cid, cp.parent, cp.ts, anchor, len(cp.messages))
        if encoding == "channel":
            last = ((ns, version), view)
        anchor = view.anchor
        if parent is not None and anchor.region is not None:
            anchor.refs += 1
            got = waiting.get((ns, parent))
            if got is None:
                waiting[(ns, parent)] = [view]
            else:
                got.append(view)
        for child in children or ():  # their bytes are needed only while a parent may be their prefix
            a = child.anchor
            a.refs -= 1
            if not a.refs:
                a.region = a.offsets = None
        yield view


def _head_ts(blob: bytes) -> str | None:
    from symfonic_cli.codec.msgpack_head import _STANDARD_HEAD

    fast = _STANDARD_HEAD.match(blob)
    return fast.group(1).decode("ascii") if fast is not None else None


def delta_views(store: Store, key: str) -> Iterator[View]:
    for cp in _delta_checkpoints(store, key):
        yield View(cp.ns, cp.cid, cp.parent, cp.ts, Anchor([version_key(m) for m in cp.messages], list(cp.messages)), len(cp.messages))


def written_messages(store: Store, key: str) -> tuple[dict[tuple[str, str], set[str]], dict[tuple[str, str], list[Any]]]:
    """What the thread's stored writes to ``messages`` do, per checkpoint ``(ns, id)``: the message
    ids they remove (a ``RemoveMessage``), and the messages (stored fields) they add. Each write
    decoded once, lean (no class built); a write that cannot be read raises, as a checkpoint does."""
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
