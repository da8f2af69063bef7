"""Reading a thread's transcript from a store: the latest checkpoint's messages plus timestamps.

Rows are chosen first (speaker, index, limit), then timestamps are resolved for the chosen rows
only (all rows for a time range), by ``symfonic_cli.transcript.timestamps``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from symfonic_cli.errors import NotFoundError, StoreError
from symfonic_cli.transcript import rows as tx
from symfonic_cli.transcript import timestamps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store


@dataclass
class TranscriptResult:
    rows: list[tx.Row]
    checkpoint_id: str | None
    warnings: list[str] = field(default_factory=list)
    # How the timestamps were resolved (linear or exact, checkpoints decoded).
    resolution: timestamps.Resolution = field(default_factory=timestamps.Resolution)


def read_transcript(
    store: Store,
    key: str,
    *,
    checkpoint_id: str | None = None,
    speaker: str | set[str] | None = "all",
    index: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    tools: bool = False,
    keep=None,
) -> TranscriptResult:
    """``keep(row)``: only the rows it accepts, indexes unchanged, timestamps resolved for them alone."""
    plain = _plain_messages(store, key, checkpoint_id)
    delta_at = _delta_checkpoint(store, key, checkpoint_id) if plain is None else None
    if delta_at is not None:  # told from the stored fields: no strict decode of a snapshot
        return _delta_transcript(store, key, "", delta_at, frozenset(), [], speaker=speaker, index=index,
                                 since=since, until=until, limit=limit, tools=tools, keep=keep)
    if plain is not None:
        checkpoint_ns, read_id, messages = plain
        warnings: list[str] = []
    else:
        record = store.read_checkpoint(key, checkpoint_id=checkpoint_id, channels=("messages",))
        if record is None:
            if checkpoint_id is not None:
                raise NotFoundError(f"thread '{key}' has no checkpoint '{checkpoint_id}' in the root namespace")
            return TranscriptResult([], None)
        warnings = []
        if record.blocked:
            warnings.append(
                "not decoded (class not on the safe list, shown from its raw fields): "
                + ", ".join(sorted(record.blocked))
            )
        messages = record.channel_values.get("messages")
        checkpoint_ns, read_id = record.checkpoint_ns, record.checkpoint_id
        if is_delta(record):
            return _delta_transcript(store, key, record.checkpoint_ns, record.checkpoint_id, record.blocked, warnings,
                                     speaker=speaker, index=index, since=since, until=until, limit=limit, tools=tools, keep=keep)
    if not messages:
        return TranscriptResult([], read_id, warnings)
    if not isinstance(messages, list):
        raise StoreError(f"checkpoint {read_id}: 'messages' is not a list ({type(messages).__name__})")
    rows = tx.build_rows(messages, speaker=speaker, tools=tools, warnings=warnings)
    if keep is not None:
        rows = [r for r in rows if keep(r)]
    if since is None and until is None:
        # Index and limit do not depend on timestamps: resolve only the rows that are printed.
        rows = tx.select(rows, index=index, limit=limit)
        limit = index = None
    known = {(checkpoint_ns, read_id): [tx.message_id_of(m) for m in messages]}
    resolution = timestamps.Resolution()
    ts_map = timestamps.resolve(store, key, known=known, wanted=[r.message_id for r in rows if r.message_id], report=resolution)
    rows = [replace(r, timestamp=ts_map.get(r.message_id)) if r.message_id else r for r in rows]
    return TranscriptResult(tx.select(rows, index=index, since=since, until=until, limit=limit), read_id, warnings, resolution)


# -- plain messages: rows straight from the stored fields, without building message objects

from symfonic_cli.codec.plain import _NotPlain, _plain_hook  # noqa: E402,F401  (stores/delta.py reads them too)


def _plain_messages(store: Store, key: str, checkpoint_id: str | None):
    """``(ns, checkpoint id, [message fields])`` when the checkpoint holds only standard messages
    and plain values (then strict decoding would give the same rows and no warning), else None."""
    state = store.read_message_state(key, checkpoint_id=checkpoint_id)
    if state is None or state.payload_type != "msgpack" or not state.payload:
        return None
    import ormsgpack

    try:
        value = ormsgpack.unpackb(bytes(state.payload), ext_hook=_plain_hook)
    except Exception:  # _NotPlain, or bytes the strict decoder will name in its error
        return None
    if state.encoding == "checkpoint":
        if not isinstance(value, dict) or not isinstance(value.get("channel_values"), dict):
            return None
        if "messages" not in value["channel_values"]:
            return None  # absent or delta-encoded: the strict path decides
        value = value["channel_values"]["messages"]
    if not isinstance(value, list):
        return None
    return state.checkpoint_ns, state.checkpoint_id, value


def is_delta(record) -> bool:
    """Whether a checkpoint's ``messages`` is a DeltaChannel's: a snapshot, or only a version."""
    messages = record.channel_values.get("messages")
    if messages is None:
        return "messages" in record.channel_versions and "messages" not in record.channel_values
    return type(messages).__name__ == "_DeltaSnapshot" and type(messages).__module__.startswith("langgraph.")


def _delta_checkpoint(store: Store, key: str, checkpoint_id: str | None) -> str | None:
    """The checkpoint id when the stored fields show a delta-encoded ``messages`` (SQLite,
    MongoDB: the checkpoint read without building a message), else None (the strict path decides)."""
    found = delta_state(store, key, checkpoint_id)
    return found[0] if found is not None else None


def delta_state(store, key: str, checkpoint_id: str | None) -> tuple[str, bool] | None:
    """``(checkpoint id, whether it holds a snapshot)`` for ``_delta_checkpoint``'s checkpoints."""
    state = store.read_message_state(key, checkpoint_id=checkpoint_id)
    if state is None or state.encoding != "checkpoint" or not state.payload:
        return None
    from symfonic_cli.stores.delta import RawExt, _unpack

    try:
        cp = _unpack(state.payload_type, state.payload, f"checkpoint {state.checkpoint_id}")
    except StoreError:
        return None  # the strict path names what is wrong
    if not isinstance(cp, dict) or not isinstance(cp.get("channel_values"), dict) or not isinstance(cp.get("channel_versions"), dict):
        return None
    value = cp["channel_values"].get("messages")
    if "messages" in cp["channel_values"]:
        return (state.checkpoint_id, True) if type(value) is RawExt and value[0] == 7 else None  # a _DeltaSnapshot
    return (state.checkpoint_id, False) if "messages" in cp["channel_versions"] else None


def _delta_transcript(store: Store, key, checkpoint_ns, checkpoint_id, blocked, warnings, *, speaker, index, since, until, limit: int | None,
                      tools, keep=None) -> TranscriptResult:
    """The rows of a delta-encoded ``messages`` channel, rebuilt as LangGraph's get_state does
    (``symfonic_cli/stores/delta.py``); timestamps by the same rule, from the rebuilt lists."""
    from symfonic_cli.stores.delta import ThreadMessages

    thread = ThreadMessages.read(store, key)
    messages = thread.value_at((checkpoint_ns, checkpoint_id), plain=True) or []
    if thread.stored.blocked:
        warnings = [w for w in warnings if not w.startswith("not decoded")] + [
            "not decoded (class not on the safe list, shown from its raw fields): " + ", ".join(sorted(thread.stored.blocked | blocked))]
    if not messages:
        return TranscriptResult([], checkpoint_id, warnings)
    rows = tx.build_rows(messages, speaker=speaker, tools=tools, warnings=warnings)
    if keep is not None:  # as on the plain path: only the rows it accepts, indexes unchanged
        rows = [r for r in rows if keep(r)]
    ts_map = thread.timestamps()
    resolution = timestamps.Resolution()
    resolution.path = "delta"
    rows = [replace(r, timestamp=ts_map.get(r.message_id)) if r.message_id else r for r in rows]
    return TranscriptResult(tx.select(rows, index=index, since=since, until=until, limit=limit), checkpoint_id, warnings, resolution)
