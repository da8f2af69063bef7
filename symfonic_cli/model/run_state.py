"""What the stores hand to ``thread show`` and ``threads list --status``: plain rows, few decoded values.

A checkpoint is reduced to its run-state fields (``LeanCheckpoint``) without constructing any
stored class: msgpack blobs are unpacked with ``decoding.lean_loads`` (objects stay
``(module, name, fields)``), PostgreSQL's JSONB is read as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from symfonic_cli.model.nexttasks import TASKS
from symfonic_cli.model.thread_row import ThreadRunState  # noqa: F401 - re-exported



@dataclass
class LeanCheckpoint:
    checkpoint_ns: str
    checkpoint_id: str
    v: int
    ts: str | None
    step: int | None
    source: str | None
    channel_versions: dict[str, Any]
    versions_seen: dict[str, dict[str, Any]]
    available: dict[str, Any]  # channels holding a value -> the value where it matters (joins), else None
    sends: list[str | None]
    messages: int | None  # length of the messages channel (None: absent or not a list)


@dataclass
class RawWrite:
    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    task_path: str | None
    idx: int
    channel: str
    type: str | None
    value: bytes | None


@dataclass
class ThreadRunRows:
    """One thread's latest checkpoint per namespace, their pending writes, and its totals."""

    latest: list[LeanCheckpoint]  # root namespace first, then by namespace
    writes: list[RawWrite]
    checkpoints: int
    namespaces: int
    size_bytes: int
    first_checkpoint_id: str | None
    last_checkpoint_id: str | None
    warnings: list[str] = field(default_factory=list)


def send_node(value: Any) -> str | None:
    """The target node of a pending Send as the lean decoder leaves it."""
    from symfonic_cli.codec.strict import LeanObject

    if isinstance(value, LeanObject) and value[1] == "Send":
        args = value[2]
        if isinstance(args, (list, tuple)) and args and isinstance(args[0], str):
            return args[0]
        if isinstance(args, dict) and isinstance(args.get("node"), str):
            return args["node"]
    return None


def _join_value(value: Any) -> Any:
    from symfonic_cli.codec.strict import LeanObject

    if isinstance(value, LeanObject):  # a set is stored as a constructor of a list
        inner = value[2]
        if isinstance(inner, (list, tuple)) and len(inner) == 1 and isinstance(inner[0], (list, tuple)):
            return list(inner[0])
        return inner
    return value


def lean_from_mapping(ns: str, cid: str, checkpoint: Any, metadata: Any, *, extra_values: dict[str, Any] | None = None) -> LeanCheckpoint:
    """A LeanCheckpoint from a checkpoint mapping (lean-decoded msgpack or JSONB)."""
    if not isinstance(checkpoint, dict):
        checkpoint = {}
    values = checkpoint.get("channel_values")
    values = dict(values) if isinstance(values, dict) else {}
    if extra_values:
        values.update(extra_values)
    available: dict[str, Any] = {}
    for chan, value in values.items():
        if isinstance(chan, str):
            available[chan] = _join_value(value) if chan.startswith("join:") else None
    sends: list[str | None] = []
    tasks = values.get(TASKS)
    if isinstance(tasks, list):
        sends = [send_node(s) for s in tasks]
    msgs = values.get("messages")
    versions = checkpoint.get("channel_versions")
    seen = checkpoint.get("versions_seen")
    meta = metadata if isinstance(metadata, dict) else {}
    step = meta.get("step")
    v = checkpoint.get("v")
    return LeanCheckpoint(
        checkpoint_ns=ns,
        checkpoint_id=cid,
        v=v if isinstance(v, int) and not isinstance(v, bool) else 1,
        ts=checkpoint.get("ts") if isinstance(checkpoint.get("ts"), str) else None,
        step=step if isinstance(step, int) and not isinstance(step, bool) else None,
        source=meta.get("source") if isinstance(meta.get("source"), str) else None,
        channel_versions={k: v for k, v in versions.items() if isinstance(k, str)} if isinstance(versions, dict) else {},
        versions_seen={k: dict(v) for k, v in seen.items() if isinstance(k, str) and isinstance(v, dict)} if isinstance(seen, dict) else {},
        available=available,
        sends=sends,
        messages=len(msgs) if isinstance(msgs, list) else (0 if msgs is None else None),
    )


def lean_from_blob(ns: str, cid: str, type_: str | None, blob: bytes | None, metadata: Any) -> LeanCheckpoint:
    from symfonic_cli.codec.strict import lean_loads
    from symfonic_cli.errors import StoreError

    try:
        value = lean_loads(type_, blob)
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"checkpoint {cid} (ns '{ns}') cannot be decoded ({type(exc).__name__})") from None
    return lean_from_mapping(ns, cid, value, metadata)
