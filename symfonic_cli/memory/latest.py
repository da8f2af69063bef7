"""The latest root checkpoint's ``messages`` as the application reads them (``aget_tuple``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.stores.protocol import Store


@dataclass
class LatestMessages:
    """``checkpoint_id`` None: no root checkpoint. ``delta``: a DeltaChannel's ``messages``, which
    the application's own reads (get_transcript, restart-resume) do not rebuild."""

    checkpoint_ns: str
    checkpoint_id: str | None
    messages: list[Any]
    delta: bool = False
    warnings: list[str] = field(default_factory=list)


def latest_messages(store: Store, key: str) -> LatestMessages:
    """One checkpoint read: the stored fields when they are plain messages, else strictly decoded."""
    from symfonic_cli.transcript.read import _delta_checkpoint, _plain_messages, is_delta

    plain = _plain_messages(store, key, None)
    if plain is not None:
        ns, cid, messages = plain
        return LatestMessages(ns, cid, list(messages))
    delta_at = _delta_checkpoint(store, key, None)
    if delta_at is not None:
        return LatestMessages("", delta_at, [], delta=True)
    record = store.read_checkpoint(key, channels=("messages",))
    if record is None:
        return LatestMessages("", None, [])
    warnings = []
    if record.blocked:
        warnings.append("not decoded (class not on the safe list, shown from its raw fields): " + ", ".join(sorted(record.blocked)))
    if is_delta(record):
        return LatestMessages(record.checkpoint_ns, record.checkpoint_id, [], True, warnings)
    messages = record.channel_values.get("messages")
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise StoreError(f"checkpoint {record.checkpoint_id}: 'messages' is not a list ({type(messages).__name__})")
    return LatestMessages(record.checkpoint_ns, record.checkpoint_id, messages, False, warnings)
