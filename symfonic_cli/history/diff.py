"""What changed between two checkpoints of a thread: channels added, removed and changed, and
the ``messages`` channel message by message (added, removed, edited in place), by id.

Both checkpoints are decoded strictly (classes off the safe list come back as their raw fields
and are named in a warning); values are compared as decoded, exactly as a Python ``==`` over
the real saver's ``channel_values`` would compare them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from symfonic_cli.errors import NotFoundError, StoreError
from symfonic_cli.model.checkpoint import CheckpointRecord
from symfonic_cli.stores.protocol import Store
from symfonic_cli.transcript import rows as tx

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.delta import ThreadMessages


@dataclass(frozen=True)
class MessageChange:
    message_id: str | None
    role: str
    content: str  # as transcript rows show it
    value: Any  # the message as decoded
    before: Any = None  # edited: the old message (then ``value`` is the new one)
    before_content: str | None = None
    before_role: str | None = None


@dataclass
class CheckpointDiff:
    key: str
    a: CheckpointRecord
    b: CheckpointRecord
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    messages_added: list[MessageChange] = field(default_factory=list)
    messages_removed: list[MessageChange] = field(default_factory=list)
    messages_edited: list[MessageChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        va, vb = self.a.channel_values, self.b.channel_values
        values = [
            {"channel": ch, "before": jsonable(va.get(ch)), "after": jsonable(vb.get(ch))}
            for ch in sorted({*self.added, *self.removed, *self.changed})
            if ch != "messages"
        ]
        return {
            "thread": self.key,
            "from": _point(self.a),
            "to": _point(self.b),
            "channels": {"added": list(self.added), "removed": list(self.removed), "changed": list(self.changed)},
            "values": values,
            "messages": {
                "added": [_message_json(m) for m in self.messages_added],
                "removed": [_message_json(m) for m in self.messages_removed],
                "edited": [
                    {"id": m.message_id, "before": jsonable(m.before), "after": jsonable(m.value)}
                    for m in self.messages_edited
                ],
            },
        }


def _point(r: CheckpointRecord) -> dict[str, Any]:
    return {"checkpoint_id": r.checkpoint_id, "checkpoint_ns": r.checkpoint_ns, "ts": r.ts}


def _message_json(m: MessageChange) -> dict[str, Any]:
    return {"id": m.message_id, "role": m.role, "content": m.content, "message": jsonable(m.value)}


def resolve_ref(store: Store, key: str, ref: str, *, namespace: str | None) -> tuple[str, str]:
    """``(namespace, checkpoint id)`` for an id, or ``-N`` (the N-th latest of ``namespace``, root by default)."""
    heads = store.checkpoint_ids(key)
    if ref.startswith("-") and ref[1:].isdigit() and ref[1:].isascii():
        n = int(ref[1:])
        ns = namespace if namespace is not None else ""
        ids = sorted((cid for hns, cid in heads if hns == ns), reverse=True)
        if n < 1 or n > len(ids):
            where = "the root namespace" if ns == "" else f"namespace '{ns}'"
            raise NotFoundError(f"thread '{key}' has {len(ids)} checkpoint{'s' if len(ids) != 1 else ''} in {where}; there is no {ref}")
        return ns, ids[n - 1]
    found = [(hns, cid) for hns, cid in heads if cid == ref and (namespace is None or hns == namespace)]
    if not found:
        where = "" if namespace is None else f" in namespace '{namespace}'"
        raise NotFoundError(f"thread '{key}' has no checkpoint '{ref}'{where}", hint="list them with: symfonic thread history")
    # The same id in several namespaces: the root namespace first, then the first by name.
    found.sort(key=lambda w: (w[0] != "", w[0]))
    return found[0]


def read_full(store: Store, key: str, ns: str, cid: str, thread: ThreadMessages | None = None) -> CheckpointRecord:
    """A checkpoint with every channel value (its versions name the channels), delta-encoded
    ones as LangGraph rebuilds them (``thread``: a ThreadMessages already read, if any)."""
    names = _channel_names(store, key, ns, cid)
    if names is None:
        head = store.read_checkpoint(key, checkpoint_ns=ns, checkpoint_id=cid, channels=())
        if head is None:
            raise NotFoundError(f"thread '{key}' has no checkpoint '{cid}'")
        names = tuple(head.channel_versions)
    record = store.read_checkpoint(key, checkpoint_ns=ns, checkpoint_id=cid, channels=names)
    if record is None:  # gone between the two reads
        raise NotFoundError(f"thread '{key}' has no checkpoint '{cid}'")
    from symfonic_cli.stores.delta import rebuilt

    return rebuilt(store, key, record, thread)


def _channel_names(store: Store, key: str, ns: str, cid: str) -> tuple[str, ...] | None:
    """The channels of a root checkpoint stored whole (SQLite, MongoDB), read without building
    any value, so the strict decoder runs once; None: ask ``read_checkpoint`` (PostgreSQL reads
    its version map from JSON, which is cheap)."""
    if ns != "":
        return None
    state = store.read_message_state(key, checkpoint_id=cid)
    if state is None or state.encoding != "checkpoint" or state.payload_type != "msgpack" or not state.payload:
        return None
    from symfonic_cli.codec.strict import lean_loads

    try:
        value = lean_loads(state.payload_type, state.payload)
    except Exception:  # the strict decoder names what is wrong
        return None
    if not isinstance(value, dict):
        return None
    names = [*(value.get("channel_versions") or {}), *(value.get("channel_values") or {})]
    return tuple(dict.fromkeys(str(n) for n in names))


def diff_checkpoints(store: Store, key: str, ref_a: str, ref_b: str, *, namespace: str | None = None,
                     lean: bool = False) -> CheckpointDiff:
    """``lean``: standard messages are read from their stored fields (``codec.plain.StoredMessage``),
    never built, which is all the text and table show (no import of langchain_core: 0.5 s); the
    result's values are then not for ``to_json``. Where stored fields cannot tell whether two
    values are equal, both checkpoints are read again and built, so the changes found are the same."""
    where_a = resolve_ref(store, key, ref_a, namespace=namespace)
    where_b = resolve_ref(store, key, ref_b, namespace=namespace)
    if lean:
        from symfonic_cli.codec.plain import MESSAGE_VIEWS
        from symfonic_cli.codec.strict import viewing

        with viewing(MESSAGE_VIEWS):
            a, b = read_full(store, key, *where_a), read_full(store, key, *where_b)
        try:
            return compare(key, a, b, lean=True)
        except _Unknown:
            pass
    a = read_full(store, key, *where_a)
    b = read_full(store, key, *where_b)
    return compare(key, a, b)


def compare(key: str, a: CheckpointRecord, b: CheckpointRecord, *, lean: bool = False) -> CheckpointDiff:
    """``lean``: values may hold StoredMessage; _Unknown when that leaves an equality open."""
    _equal = _lean_equal if lean else _built_equal
    va, vb = a.channel_values, b.channel_values
    out = CheckpointDiff(key, a, b)
    out.added = sorted(ch for ch in vb if ch not in va)
    out.removed = sorted(ch for ch in va if ch not in vb)
    out.changed = sorted(ch for ch in va if ch in vb and not _equal(va[ch], vb[ch]))
    blocked = a.blocked | b.blocked
    if blocked:
        out.warnings.append("not decoded (class not on the safe list, shown from its raw fields): " + ", ".join(sorted(blocked)))
    ma, mb = va.get("messages"), vb.get("messages")
    if ma is not None and not isinstance(ma, list) or mb is not None and not isinstance(mb, list):
        raise StoreError("the 'messages' channel is not a list in one of the checkpoints; cannot compare it message by message")
    _messages(out, ma or [], mb or [], _equal)
    return out


def _built_equal(x: Any, y: Any) -> bool:
    try:
        return bool(x == y) and type(x) is type(y)
    except Exception:  # a value whose == raises: compare what JSON would show
        return jsonable(x) == jsonable(y)


class _Unknown(Exception):
    """Stored fields do not tell whether two values are equal: build them."""


def _lean_equal(x: Any, y: Any) -> bool:
    """``_built_equal`` over values holding StoredMessage: the same answer, or _Unknown."""
    from symfonic_cli.codec.plain import StoredMessage

    if type(x) is StoredMessage or type(y) is StoredMessage:  # its built type is unknown here
        return _same(x, y)
    return type(x) is type(y) and _same(x, y)


def _same(x: Any, y: Any) -> bool:
    # As ``==`` would answer on the built values: a list or tuple equals one of its own type and
    # length whose items are equal, a dict one with the same keys and equal values; a StoredMessage
    # equals one of the same bytes and fields; anything else is itself, so its ``==`` holds, but
    # ``False`` from an object that might hold a StoredMessage is no answer.
    from symfonic_cli.codec.plain import StoredMessage

    if x is y:  # as list and dict ``==`` do, before comparing
        return True
    tx_, ty = type(x), type(y)
    if tx_ is StoredMessage or ty is StoredMessage:
        if tx_ is ty and x[0] == y[0] and x[1] == y[1]:
            return True
        raise _Unknown
    if tx_ in (list, tuple) and ty in (list, tuple):
        return tx_ is ty and len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    if tx_ is dict and ty is dict:
        return x.keys() == y.keys() and all(_same(v, y[k]) for k, v in x.items())
    try:
        if x == y:
            return True
    except Exception:
        raise _Unknown from None
    if tx_ in _SCALARS and ty in _SCALARS:
        return False
    raise _Unknown


_SCALARS = (str, int, float, bool, bytes, type(None))


def _keyed(messages: list[Any]) -> dict[Any, Any]:
    # Messages without an id (rare: add_messages gives every message one) are keyed by position.
    return {(tx.message_id_of(m) if tx.message_id_of(m) is not None else ("#", i)): m for i, m in enumerate(messages)}


def _change(m: Any, **more: Any) -> MessageChange:
    mid = tx.message_id_of(m)
    return MessageChange(mid if isinstance(mid, str) else None, tx.role_of(m), tx.content_of(m), m, **more)


def _messages(out: CheckpointDiff, old: list[Any], new: list[Any], _equal: Any = _built_equal) -> None:
    before, after = _keyed(old), _keyed(new)
    out.messages_added = [_change(m) for k, m in after.items() if k not in before]
    out.messages_removed = [_change(m) for k, m in before.items() if k not in after]
    out.messages_edited = [
        _change(after[k], before=m, before_content=tx.content_of(m), before_role=tx.role_of(m))
        for k, m in before.items()
        if k in after and not _equal(m, after[k])
    ]


def jsonable(value: Any) -> Any:
    """A decoded value as JSON: plain data as is, models and dataclasses as their fields with
    their class named under ``"__class__"``, bytes as base64 under ``"__bytes__"``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v) for v in items]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"__bytes__": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, datetime) and value.tzinfo is not None:
        from symfonic_cli.clock import iso_utc

        return iso_utc(value)  # the one form: UTC with Z
    if isinstance(value, (datetime, date)):
        return value.isoformat()  # a naive time or a date: as stored
    name = f"{type(value).__module__}.{type(value).__qualname__}"
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return {"__class__": name, **jsonable(dump())}
        except Exception:
            pass
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__class__": name, **{f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    return {"__class__": name, "repr": repr(value)}
