"""migrate's comparison: a source thread against its copy, decoded."""

from __future__ import annotations

import math
from typing import Any

from symfonic_cli.model.copy import DecodedCheckpoint, DecodedThread, DecodedWrite

# Keys of the checkpoint mapping and metadata a saver may legitimately leave out when writing.
_DROPPED_METADATA = ("writes",)  # PostgreSQL's put stores metadata without "writes"


class _Equal:
    """Deep equality where JSON documents' lists equal msgpack's tuples, and each pair of shared
    objects (a message repeated in every checkpoint) is compared once.

    Equal means "the same bytes would be stored": a float NaN equals a NaN (JSON, msgpack and BSON
    store it alike, and Python's ``nan != nan`` would call a byte-identical row a conflict), and
    -0.0 differs from 0.0 because msgpack, JSON text and BSON keep the sign, unless
    ``signed_zero`` is off (a PostgreSQL side: JSONB numbers have no negative zero).
    """

    def __init__(self, signed_zero: bool = True) -> None:
        self.signed_zero = signed_zero
        self._seen: dict[tuple[int, int], bool] = {}
        self._keep: list[tuple[Any, Any]] = []  # keeps ids valid while the memo lives

    def __call__(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if isinstance(a, (dict, list)) and type(a) is type(b) and a == b:  # C speed, identity first
            return True
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(self(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)):
            return isinstance(b, (list, tuple)) and len(a) == len(b) and all(self(x, y) for x, y in zip(a, b))
        if type(a) is float and type(b) is float:
            if a != a:
                return b != b
            if a == 0.0 and b == 0.0 and self.signed_zero:
                return math.copysign(1.0, a) == math.copysign(1.0, b)
            return a == b
        if isinstance(a, (str, int, float, bool, bytes)) or a is None:
            return a == b and isinstance(a, bool) == isinstance(b, bool)
        key = (id(a), id(b))
        hit = self._seen.get(key)
        if hit is None:
            hit = self._seen[key] = bool(a == b)
            self._keep.append((a, b))
        return hit


def _metadata(cp: DecodedCheckpoint) -> dict[str, Any]:
    return {k: v for k, v in cp.metadata.items() if k not in _DROPPED_METADATA}


def _delta_free(cp: DecodedCheckpoint) -> dict[str, Any]:
    """The checkpoint without the stored values of its DeltaChannels (named in the metadata's
    ``counters_since_delta_snapshot``): PostgreSQL keeps one blob per version, so a checkpoint
    that only carries a snapshot's version reads back with the snapshot. Their values are
    compared rebuilt instead (``symfonic_cli.stores.delta``, Migrator._verify)."""
    counters = cp.metadata.get("counters_since_delta_snapshot") if isinstance(cp.metadata, dict) else None
    values = cp.checkpoint.get("channel_values") if isinstance(cp.checkpoint, dict) else None
    if not isinstance(counters, dict) or not isinstance(values, dict):
        return cp.checkpoint
    return {**cp.checkpoint, "channel_values": {k: v for k, v in values.items() if k not in counters}}


def same_checkpoint(a: DecodedCheckpoint, b: DecodedCheckpoint, eq: _Equal | None = None) -> bool:
    eq = eq or _Equal()
    return a.parent_checkpoint_id == b.parent_checkpoint_id and eq(_delta_free(a), _delta_free(b)) and eq(_metadata(a), _metadata(b))


def same_write(a: DecodedWrite, b: DecodedWrite, eq: _Equal | None = None) -> bool:
    eq = eq or _Equal()
    return (a.task_path, a.channel) == (b.task_path, b.channel) and eq(a.value, b.value)


def differences(source: DecodedThread, target: DecodedThread, *, limit: int = 3, signed_zero: bool = True) -> list[str]:
    """What of the source the target lacks or holds differently (empty: the copy is verified).

    Content the target holds beyond the source is not a difference: a copy adds, never removes.
    """
    out: list[str] = []
    eq = _Equal(signed_zero)
    have = {(c.checkpoint_ns, c.checkpoint_id): c for c in target.checkpoints}
    for c in source.checkpoints:
        t = have.get((c.checkpoint_ns, c.checkpoint_id))
        if t is None:
            out.append(f"checkpoint {c.checkpoint_id} (ns '{c.checkpoint_ns}') missing in the target")
        elif not same_checkpoint(c, t, eq):
            out.append(f"checkpoint {c.checkpoint_id} (ns '{c.checkpoint_ns}') differs: {_what_differs(c, t, eq)}")
        if len(out) >= limit:
            return out
    have_w = {w.key: w for w in target.writes}
    for w in source.writes:
        tw = have_w.get(w.key)
        if tw is None:
            out.append(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} (channel '{w.channel}') missing in the target")
        elif not same_write(w, tw, eq):
            out.append(f"write {w.checkpoint_id}/{w.task_id}/{w.idx} (channel '{w.channel}') differs")
        if len(out) >= limit:
            return out
    return out


def _what_differs(a: DecodedCheckpoint, b: DecodedCheckpoint, eq: _Equal) -> str:
    if a.parent_checkpoint_id != b.parent_checkpoint_id:
        return "parent id"
    ma, mb = _metadata(a), _metadata(b)
    if not eq(ma, mb):
        keys = sorted(k for k in set(ma) | set(mb) if not eq(ma.get(k), mb.get(k)))
        return "metadata " + ", ".join(repr(k) for k in keys[:3])
    va, vb = a.checkpoint.get("channel_values") or {}, b.checkpoint.get("channel_values") or {}
    if not eq(va, vb):
        keys = sorted(k for k in set(va) | set(vb) if not eq(va.get(k), vb.get(k)))
        return "channel " + ", ".join(repr(k) for k in keys[:3])
    keys = sorted(k for k in set(a.checkpoint) | set(b.checkpoint) if not eq(a.checkpoint.get(k), b.checkpoint.get(k)))
    return "checkpoint field " + ", ".join(repr(k) for k in keys[:3])
