"""Reading a thread's transcript from a store: the latest checkpoint's messages plus timestamps."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from symfonic_cli import transcript as tx
from symfonic_cli.errors import NotFoundError, StoreError
from symfonic_cli.stores.base import MessageState, Store


@dataclass
class TranscriptResult:
    rows: list[tx.Row]
    checkpoint_id: str | None
    warnings: list[str] = field(default_factory=list)


def _state_ids(state: MessageState) -> tuple[datetime | None, list[str | None]]:
    from symfonic_cli.decoding import lean_loads, lean_message_ids

    value = lean_loads(state.payload_type, state.payload)
    ts = state.ts
    if state.encoding == "checkpoint":
        if not isinstance(value, dict):
            return None, []
        if ts is None:
            ts = value.get("ts")
        value = (value.get("channel_values") or {}).get("messages")
    return tx.parse_checkpoint_ts(ts), lean_message_ids(value)


def _walk(store: Store, key: str) -> Iterator[tuple[datetime | None, list[str | None]]]:
    cache: dict[object, list[str | None]] = {}
    for state in store.iter_message_states(key):
        if state.encoding == "channel" and state.version in cache:
            yield tx.parse_checkpoint_ts(state.ts), cache[state.version]
            continue
        ts, ids = _state_ids(state)
        if state.encoding == "channel":
            cache[state.version] = ids
        yield ts, ids


def resolve_timestamps(store: Store, key: str) -> dict[str, datetime]:
    return tx.oldest_ts_by_id(_walk(store, key))


def read_transcript(
    store: Store,
    key: str,
    *,
    checkpoint_id: str | None = None,
    speaker: str = "all",
    index: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
) -> TranscriptResult:
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
    _refuse_delta(record, messages)
    if not messages:
        return TranscriptResult([], record.checkpoint_id, warnings)
    if not isinstance(messages, list):
        raise StoreError(f"checkpoint {record.checkpoint_id}: 'messages' is not a list ({type(messages).__name__})")
    ts_map = resolve_timestamps(store, key)
    rows = tx.build_rows(messages, speaker=speaker, ts_by_id=ts_map)
    return TranscriptResult(
        tx.select(rows, index=index, since=since, until=until, limit=limit), record.checkpoint_id, warnings
    )


def _refuse_delta(record, messages) -> None:
    try:
        from langgraph.checkpoint.serde.types import _DeltaSnapshot
    except ImportError:  # pragma: no cover - older langgraph has no delta channels
        _DeltaSnapshot = ()  # type: ignore[assignment]
    delta = isinstance(messages, _DeltaSnapshot) if _DeltaSnapshot else False
    if messages is None and "messages" in record.channel_versions:
        delta = True
    if delta:
        raise StoreError(
            f"checkpoint {record.checkpoint_id}: the 'messages' channel is stored delta-encoded "
            "(LangGraph DeltaChannel); symfonic cannot rebuild it yet and will not print a partial transcript"
        )
