"""Reading a thread's transcript from a store: the latest checkpoint's messages plus timestamps.

Rows are chosen first (speaker, index, limit), then timestamps are resolved for the chosen rows
only (all rows for a time range), by ``symfonic_cli.timestamps``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from symfonic_cli import timestamps
from symfonic_cli import transcript as tx
from symfonic_cli.errors import NotFoundError, StoreError
from symfonic_cli.stores.base import Store


@dataclass
class TranscriptResult:
    rows: list[tx.Row]
    checkpoint_id: str | None
    warnings: list[str] = field(default_factory=list)


def resolve_timestamps(store: Store, key: str) -> dict[str, datetime]:
    """Every message id of the thread with its timestamp, by the reference rule."""
    return timestamps.resolve(store, key)


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
    rows = tx.build_rows(messages, speaker=speaker)
    if since is None and until is None:
        # Index and limit do not depend on timestamps: resolve only the rows that are printed.
        rows = tx.select(rows, index=index, limit=limit)
        limit = index = None
    known = {(record.checkpoint_ns, record.checkpoint_id): [tx.message_id_of(m) for m in messages]}
    ts_map = timestamps.resolve(store, key, known=known, wanted=[r.message_id for r in rows if r.message_id])
    rows = [replace(r, timestamp=ts_map.get(r.message_id)) if r.message_id else r for r in rows]
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
