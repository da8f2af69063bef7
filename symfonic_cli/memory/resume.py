"""The resume window: the rows symfonic-core's restart-resume replays into a fresh working deque.

Pure rules first (messages in, rows out), mirroring symfonic-core 9.12's
``SymfonicAgent._maybe_rehydrate_working`` (the latest root checkpoint's
``channel_values["messages"]``, or nothing) and ``WorkingLayer.rehydrate_from_messages`` with its
``_speaker_of``/``_content_of``: user and assistant messages only, text blocks joined and
``strip()``ped, empty ones skipped, oldest first, the last ``max_entries``, the message id as
``turn_id``. Then ``read_resume_window`` reads one latest checkpoint, as ``transcript show`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from symfonic_cli.clock import iso_utc
from symfonic_cli.transcript import rows as tx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

# symfonic-core's WorkingLayer(max_entries=10) and context_budget.max_history_messages.
DEFAULT_MAX_ENTRIES = 10

# Why a restart recalls nothing, each said once.
NO_ROOT_CHECKPOINT = "the thread has no root-namespace checkpoint"
NO_MESSAGES = "its latest checkpoint holds no messages"
NO_TURNS = "its latest checkpoint holds no user or assistant message with text"


@dataclass(frozen=True)
class ResumeRow:
    """One row restart-resume replays: ``speaker`` "user" or "assistant", ``turn_id`` the message
    id, ``content`` as replayed, ``timestamp`` the message's checkpoint time as ``transcript show``
    gives it (None when the store holds none)."""

    speaker: str
    turn_id: str | None
    content: str
    timestamp: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {"speaker": self.speaker, "turn_id": self.turn_id, "content": self.content, "timestamp": iso_utc(self.timestamp)}


@dataclass
class ResumeWindow:
    """``rows`` (oldest first); ``reason`` says why there are none (None when there are rows)."""

    rows: list[ResumeRow]
    checkpoint_id: str | None
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)


def speaker_of(message: Any) -> str | None:
    """``WorkingLayer._speaker_of``: "user", "assistant", or None (not a turn)."""
    kind = tx._field(message, "type")
    if kind == "human":
        return "user"
    if kind == "ai":
        return "assistant"
    name = type(message).__name__
    return {"HumanMessage": "user", "AIMessage": "assistant"}.get(name)


def content_of(message: Any) -> str:
    """``WorkingLayer._content_of``: text blocks joined (other blocks dropped), stripped."""
    content = tx._field(message, "content", "")
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and (block.get("type") == "text" or "text" in block):
                parts.append(str(block.get("text", "")))
        return "".join(parts).strip()
    return str(content).strip()


def window_rows(messages: Sequence[Any], max_entries: int = DEFAULT_MAX_ENTRIES) -> list[ResumeRow]:
    """The rows ``rehydrate_from_messages(scope, messages)`` replays into a deque of ``max_entries``."""
    if max_entries <= 0 or not messages:
        return []
    rows: list[ResumeRow] = []
    for message in messages:
        speaker = speaker_of(message)
        if speaker is None:
            continue
        try:
            content = content_of(message)
        except (RecursionError, ValueError):  # str() of a deeply nested value or a long integer
            content = tx.UNPRINTABLE
        if not content:
            continue
        rows.append(ResumeRow(speaker, tx.message_id_of(message), content, None))
    return rows[-max_entries:]


def read_resume_window(store: Store, key: str, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> ResumeWindow:
    """What a restart of the application recalls for thread ``key``: one latest checkpoint read,
    timestamps resolved for the rows shown alone (as ``transcript show`` resolves them)."""
    from dataclasses import replace

    from symfonic_cli.memory.latest import latest_messages
    from symfonic_cli.transcript import timestamps

    latest = latest_messages(store, key)
    if latest.checkpoint_id is None:
        return ResumeWindow([], None, NO_ROOT_CHECKPOINT, latest.warnings)
    if latest.unread:
        return ResumeWindow([], latest.checkpoint_id, latest.unread, latest.warnings)
    if not latest.messages:
        return ResumeWindow([], latest.checkpoint_id, NO_MESSAGES, latest.warnings)
    rows = window_rows(latest.messages, max_entries)
    if not rows:
        reason = NO_TURNS if max_entries > 0 else "--max-entries is 0"
        return ResumeWindow([], latest.checkpoint_id, reason, latest.warnings)
    known = {(latest.checkpoint_ns, latest.checkpoint_id): [tx.message_id_of(m) for m in latest.messages]}
    ts_map = timestamps.resolve(store, key, known=known, wanted=[r.turn_id for r in rows if r.turn_id])
    rows = [replace(r, timestamp=ts_map.get(r.turn_id)) if r.turn_id else r for r in rows]
    return ResumeWindow(rows, latest.checkpoint_id, None, latest.warnings)

