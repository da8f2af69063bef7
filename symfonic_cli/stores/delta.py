"""A delta-encoded ``messages`` channel (LangGraph ``DeltaChannel``) rebuilt from the store.

One pass over the thread (``iter_message_states``, ``iter_message_writes``) reads which
checkpoints store the channel and every write to it, messages left as their stored bytes;
``value_at`` then replays only the chain back to the nearest snapshot (``model/delta.py``), and
``timestamps`` walks the tree once. Stored values are decoded by the strict decoder, each
distinct stored message once; ids come from the stored fields (no class built).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.model.delta import DeltaNode, MessageFold, Where, chain_to_seed, topological

CHANNEL = "messages"
_EXT_DELTA_SNAPSHOT = 7  # langgraph.checkpoint.serde.jsonplus.EXT_DELTA_SNAPSHOT


class RawExt(tuple):
    """A stored msgpack extension value, not built: ``(code, bytes)``."""

    __slots__ = ()


def _raw_hook(code: int, data: bytes) -> RawExt:
    return RawExt((code, data))


def _unpack(type_: str | None, data: bytes | None, what: str) -> Any:
    """A stored value unpacked with every object left as RawExt (decrypted first)."""
    from symfonic_cli.codec.cipher import decrypt

    type_, data = decrypt(type_, data, what=what)
    if type_ in (None, "null", "empty") or not data:
        return None
    if type_ != "msgpack":
        from symfonic_cli.codec.strict import loads

        return loads(type_, data, what=what)  # e.g. json: no objects inside to leave unbuilt
    import ormsgpack

    try:
        return ormsgpack.unpackb(bytes(data), ext_hook=_raw_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    except Exception as exc:
        raise StoreError(f"{what} cannot be decoded ({type(exc).__name__}: {exc})") from None


class _Stored:
    """Decoding and inspecting stored items: each distinct RawExt decoded once."""

    def __init__(self) -> None:
        self._lean: dict[RawExt, Any] = {}
        self._strict: dict[RawExt, Any] = {}
        self.blocked: set[str] = set()

    def lean(self, item: RawExt) -> Any:
        hit = self._lean.get(item)
        if hit is None:
            from symfonic_cli.codec.strict import _lean_hook

            hit = self._lean[item] = _lean_hook(item[0], item[1])
        return hit

    def id_of(self, item: Any) -> str | None:
        if type(item) is RawExt:
            item = self.lean(item)
        fields = item[2] if isinstance(item, tuple) and len(item) >= 3 else item
        mid = fields.get("id") if isinstance(fields, dict) else None
        return mid if isinstance(mid, str) else None

    def kind_of(self, item: Any) -> str:
        if type(item) is RawExt:
            lean = self.lean(item)
            if isinstance(lean, tuple) and len(lean) >= 3:
                if lean[1] == "RemoveMessage" or (isinstance(lean[2], dict) and lean[2].get("type") == "remove"):
                    return "remove"
                if lean[1] == "Overwrite" and str(lean[0]).startswith("langgraph."):
                    return "overwrite"
            return ""
        if isinstance(item, dict):
            if len(item) == 1 and "__overwrite__" in item:
                return "overwrite"
            if item.get("type") == "__overwrite__" and "value" in item:
                return "overwrite"
            if item.get("type") == "remove":
                return "remove"
        return ""

    def overwritten(self, item: Any) -> Any:
        if type(item) is RawExt:
            import ormsgpack

            tup = ormsgpack.unpackb(item[1], ext_hook=_raw_hook, option=ormsgpack.OPT_NON_STR_KEYS)
            fields = tup[2] if isinstance(tup, list) and len(tup) >= 3 else {}
            return fields.get("value") if isinstance(fields, dict) else None
        return item.get("__overwrite__", item.get("value"))

    def decode(self, value: Any) -> Any:
        """A value with every RawExt in it built by the strict decoder."""
        if type(value) is RawExt:
            hit = self._strict.get(value)
            if hit is None:
                from symfonic_cli.codec import strict

                with strict.collect_blocked() as blocked:
                    built = strict.strict_hook(value[0], value[1])
                hit = self._strict[value] = (built, frozenset(blocked))
            self.blocked.update(hit[1])
            return hit[0]
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if isinstance(value, dict):
            return {k: self.decode(v) for k, v in value.items()}
        return value


def _plain_fields(items: list) -> list | None:
    """Each item's stored fields when all are standard messages (transcript/read.py's rule)."""
    from symfonic_cli.codec.plain import _NotPlain, _plain_hook

    out = []
    try:
        for m in items:
            if type(m) is not RawExt:
                return None
            out.append(_plain_hook(m[0], m[1]))
    except _NotPlain:
        return None
    except Exception:  # bytes the strict decoder will name in its error
        return None
    return out


def _seed_items(seed: Any) -> list:
    """A stored value as the list it seeds: a snapshot's ``.value``, or a plain value as it is."""
    if type(seed) is RawExt and seed[0] == _EXT_DELTA_SNAPSHOT:
        import ormsgpack

        seed = ormsgpack.unpackb(seed[1], ext_hook=_raw_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    if seed is None:
        return []
    return list(seed) if isinstance(seed, (list, tuple)) else [seed]


class ThreadMessages:
    """Every checkpoint of one thread as the messages rebuild sees it (see module docstring)."""

    def __init__(self) -> None:
        self.nodes: dict[Where, DeltaNode] = {}
        self.ts: dict[Where, str | None] = {}
        self.order: list[Where] = []  # checkpoint_id descending, as the store lists them
        self.seeds: dict[Where, Any] = {}  # the stored value of each checkpoint that has one
        self.writes: dict[Where, list[tuple[tuple, Any]]] = {}
        self.stored = _Stored()

    @classmethod
    def read(cls, store: Any, key: str) -> ThreadMessages:
        out = cls()
        by_version: dict[tuple[str, Any], Any] = {}
        pending: list[tuple[Where, Any]] = []
        for state in store.iter_message_states(key):
            where = (state.checkpoint_ns, state.checkpoint_id)
            what = f"checkpoint {state.checkpoint_id}"
            if state.encoding == "checkpoint":
                cp = _unpack(state.payload_type, state.payload, what)
                if not isinstance(cp, dict):
                    raise StoreError(f"{what} does not decode to a checkpoint mapping")
                found = cp.get("channel_values")
                values = found if isinstance(found, dict) else {}
                versioned = CHANNEL in (cp.get("channel_versions") or {})
                stored = CHANNEL in values
                if stored:
                    out.seeds[where] = values[CHANNEL]
                ts = state.ts if state.ts is not None else cp.get("ts")
            else:  # one channel's blob (PostgreSQL), shipped once per version
                versioned = state.version is not None
                stored = False
                if state.payload is not None:
                    by_version[(state.checkpoint_ns, state.version)] = _unpack(
                        state.payload_type, state.payload, f"channel '{CHANNEL}' of {what}")
                if versioned:
                    pending.append((where, state.version))
                ts = state.ts
            out.nodes[where] = DeltaNode(state.checkpoint_ns, state.checkpoint_id, state.parent_checkpoint_id, versioned, stored)
            out.ts[where] = ts
            out.order.append(where)
        for where, version in pending:
            if (where[0], version) in by_version:
                out.seeds[where] = by_version[(where[0], version)]
                out.nodes[where] = out.nodes[where]._replace(stored=True)
        stored_order = store.writes_replay_order == "stored"
        for seq, w in enumerate(store.iter_message_writes(key)):
            where = (w.checkpoint_ns, w.checkpoint_id)
            value = _unpack(w.payload_type, w.payload, f"write {w.checkpoint_id}/{w.task_id}/{w.idx} channel '{CHANNEL}'")
            order = (seq,) if stored_order else (w.task_path or "", w.task_id, w.idx if w.idx is not None else 0)
            out.writes.setdefault(where, []).append((order, value))
        for ws in out.writes.values():
            ws.sort(key=lambda kv: kv[0])  # writes_sort_key (task_path, task_id, idx), or as the saver lists them
        return out

    @property
    def delta_encoded(self) -> bool:
        return any(n.needs_replay for n in self.nodes.values())

    def _fold(self, items: list | None = None) -> MessageFold:
        s = self.stored
        return MessageFold(s.id_of, s.kind_of, s.overwritten, items)

    def _apply_writes(self, fold: MessageFold, where: Where) -> None:
        for _, value in self.writes.get(where, ()):
            fold.apply(value)

    def fold_at(self, where: Where) -> MessageFold | None:
        """The rebuilt list at one checkpoint, replaying only its chain back to the seed."""
        node = self.nodes.get(where)
        if node is None:
            return None
        if node.stored:
            return self._fold(_seed_items(self.seeds[where]))
        if not node.versioned:
            return self._fold()
        chain = chain_to_seed(self.nodes, where)
        fold = self._fold()
        if chain and self.nodes[(where[0], chain[-1])].stored:
            fold.seed(_seed_items(self.seeds[(where[0], chain[-1])]))
        for cid in reversed(chain):
            self._apply_writes(fold, (where[0], cid))
        return fold

    def value_at(self, where: Where, *, plain: bool = False) -> list | None:
        """The messages at ``where``, decoded strictly (None: no such checkpoint). With ``plain``,
        when every one is a standard message, their stored fields instead (as transcript show
        reads a plain store: the same rows, no object built)."""
        fold = self.fold_at(where)
        if fold is None:
            return None
        items = fold.value()
        if plain:
            fields = _plain_fields(items)
            if fields is not None:
                return fields
        return self.stored.decode(items)

    def ids_at(self, where: Where) -> list[str | None]:
        fold = self.fold_at(where)
        return [] if fold is None else fold.ids()

    def latest(self, checkpoint_ns: str = "") -> Where | None:
        for where in self.order:
            if where[0] == checkpoint_ns:
                return where
        return None

    def timestamps(self) -> dict[str, datetime]:
        """``{message id: ts}`` by get_transcript's rule (the oldest checkpoint, in the store's
        order, whose rebuilt messages hold the id; one without a usable ts is skipped), in one
        walk of the tree: each id is looked at where it joins a checkpoint's list, not again in
        every later checkpoint that still holds it."""
        from symfonic_cli.clock import parse_checkpoint_ts

        position = {w: i for i, w in enumerate(self.order)}  # larger: older
        parsed = {w: parse_checkpoint_ts(self.ts.get(w)) for w in self.order}
        children: dict[Where, int] = {}
        for w, n in self.nodes.items():
            if n.parent_checkpoint_id is not None and (w[0], n.parent_checkpoint_id) in self.nodes:
                p = (w[0], n.parent_checkpoint_id)
                children[p] = children.get(p, 0) + 1
        acc: dict[Where, MessageFold] = {}  # value after the checkpoint's own writes, kept for its children
        best: dict[str, tuple[int, datetime]] = {}

        def flag(ids: Sequence[str | None], where: Where) -> None:
            ts = parsed[where]
            if ts is None:
                return
            pos = position[where]
            for mid in ids:
                if mid is not None:
                    hit = best.get(mid)
                    if hit is None or pos > hit[0]:
                        best[mid] = (pos, ts)

        added_by: dict[Where, list[str]] = {}
        for where in topological(self.nodes):
            node = self.nodes[where]
            parent = (where[0], node.parent_checkpoint_id) if node.parent_checkpoint_id is not None else None
            if parent is not None and parent not in self.nodes:
                parent = None  # LangGraph's walk stops at a missing parent: nothing to replay
            if parent is not None:
                left = children[parent] = children[parent] - 1
                start, added = (acc.pop(parent), added_by.pop(parent)) if left == 0 else (acc[parent].copy(), added_by[parent])
            else:
                start, added = self._fold(), []
            if node.stored:
                items = _seed_items(self.seeds[where])
                if parent is not None and parsed.get(parent) is not None and start.items == items:
                    base = start  # the usual snapshot: the list the chain already gave (compared as bytes)
                    if self.nodes[parent].versioned or self.nodes[parent].stored:
                        flag(added, where)
                    else:
                        flag(base.ids(), where)
                else:
                    base = self._fold(items)
                    flag(base.ids(), where)
            else:
                base = start
                if node.versioned and parent is not None:
                    pnode = self.nodes[parent]
                    if (not pnode.versioned and not pnode.stored) or parsed.get(parent) is None:
                        flag(base.ids(), where)  # the parent's own list differs (or was skipped): all of it
                    else:
                        flag(added, where)  # the ids the parent's writes brought in
            if children.get(where):
                base.added = []
                self._apply_writes(base, where)
                acc[where], added_by[where] = base, base.added
                base.added = []
        return {mid: ts for mid, (_, ts) in best.items()}


class NotRebuilt(str):
    """Shown for a delta-encoded channel other than ``messages``: its value is not rebuilt."""

    __slots__ = ()


def delta_channels(record: Any) -> set[str]:
    """The channels a checkpoint holds as a DeltaChannel's: named in the metadata's
    ``counters_since_delta_snapshot`` or stored as a ``_DeltaSnapshot``."""
    counters = record.metadata.get("counters_since_delta_snapshot") if isinstance(record.metadata, dict) else None
    out = {str(k) for k in counters} if isinstance(counters, dict) else set()
    out.update(ch for ch, v in record.channel_values.items() if _is_snapshot(v))
    return out


def _is_snapshot(value: Any) -> bool:
    return type(value).__name__ == "_DeltaSnapshot" and type(value).__module__.startswith("langgraph.")


def rebuilt(store: Any, key: str, record: Any, thread: ThreadMessages | None = None) -> Any:
    """``record`` with its delta-encoded channels as LangGraph's get_state gives them: a
    snapshot's value, ``messages`` rebuilt, any other channel without a stored value marked
    ``NotRebuilt`` (never shown as empty). The record itself when nothing is delta-encoded."""
    import dataclasses

    chans = delta_channels(record)
    if not chans:
        return record
    values = dict(record.channel_values)
    blocked = set(record.blocked)
    for ch in sorted(chans):
        if ch == CHANNEL:
            continue
        if _is_snapshot(values.get(ch)):
            values[ch] = values[ch].value
        elif ch in record.channel_versions and ch not in values:
            values[ch] = NotRebuilt(f"delta-encoded, not rebuilt (version {record.channel_versions[ch]})")
    if CHANNEL in chans and CHANNEL in record.channel_versions:
        thread = thread if thread is not None else ThreadMessages.read(store, key)
        value = thread.value_at((record.checkpoint_ns, record.checkpoint_id))
        values[CHANNEL] = value if value is not None else []
        blocked |= thread.stored.blocked
    return dataclasses.replace(record, channel_values=values, blocked=frozenset(blocked))
