"""Transcript rows with exactly the semantics of symfonic-core's ``get_transcript``.

Pure logic, no I/O: messages in, rows out. Mirrors ``symfonic/agent/transcript.py`` and
``SymfonicAgent.get_transcript`` of symfonic-core 9.12.0.
"""

from __future__ import annotations

from symfonic_cli.clock import iso_utc, parse_checkpoint_ts  # noqa: F401 - transcript reads it as tx.parse_checkpoint_ts

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from symfonic_cli.codec.fields import field as _field, message_id_of  # also read as tx._field, tx.message_id_of
from symfonic_cli.vocabulary import ALL, ROLES  # --speaker's words

_ROLE_BY_TYPE = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
_ROLE_BY_CLASS = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "ToolMessage": "tool",
    "SystemMessage": "system",
}


@dataclass(frozen=True)
class Row:
    index: int
    role: str
    content: str
    message_id: str | None
    timestamp: datetime | None
    # --tools only: assistant rows' calls ({"id", "name", "args"}), tool rows' name and call id
    tool_calls: list[dict[str, Any]] | None = None
    name: str | None = None
    tool_call_id: str | None = None
    # An assistant row without content: the names of the tools it calls (tables and text show
    # ``(calls lookup)``; not in JSON, which keeps --tools' fields).
    calls: tuple[str, ...] = ()
    # Why symfonic-core's own get_transcript and restart-resume read none of the thread's messages
    # while this row shows one (memory/latest.py: a DeltaChannel, an encrypted store); None: they
    # read them. In JSON only when set, as transcript show's record.
    not_read_by_application: str | None = None

    def to_json(self, tools: bool = False) -> dict[str, Any]:
        out = {
            "index": self.index,
            "role": self.role,
            "content": self.content,
            "message_id": self.message_id,
            "timestamp": iso_utc(self.timestamp),
        }
        if tools:
            out["tool_calls"] = self.tool_calls if self.role == "assistant" else None
            if self.role == "assistant" and out["tool_calls"] is None:
                out["tool_calls"] = []
            out["name"] = self.name
            out["tool_call_id"] = self.tool_call_id
        if self.not_read_by_application is not None:
            out["not_read_by_application"] = self.not_read_by_application
        return out


def parse_speakers(text: str) -> set[str] | None:
    """``--speaker``: one role, a comma list of roles, or ``all`` (None: every row)."""
    words = text.lower().split(",")  # as --format: values are case-insensitive everywhere
    if ALL in words:
        return None
    unknown = [w for w in words if w not in ROLES]
    if unknown:
        raise ValueError(unknown[0])
    return set(words)


def tool_calls_of(message: Any, warnings: list[str] | None = None) -> list[dict[str, Any]]:
    """An assistant message's tool calls as ``{"id", "name", "args"}``; odd shapes kept raw, with a warning."""
    calls = _field(message, "tool_calls", None)
    if not calls:
        return []
    if not isinstance(calls, list):
        if warnings is not None:
            warnings.append(f"message {message_id_of(message)!r}: tool_calls is not a list; shown as stored")
        return [{"id": None, "name": None, "args": calls if isinstance(calls, (dict, str, int, float, bool)) else str(calls)}]
    out = []
    for call in calls:
        if isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(call.get("args"), dict):
            out.append({"id": call.get("id"), "name": call["name"], "args": call["args"]})
            continue
        if warnings is not None:
            warnings.append(f"message {message_id_of(message)!r}: a tool call of an unexpected shape, shown from its raw fields")
        if isinstance(call, dict):
            args = call.get("args")
            out.append({"id": call.get("id"), "name": call.get("name"), "args": args if isinstance(args, (dict, list, str, int, float, bool, type(None))) else str(args)})
        else:
            out.append({"id": None, "name": None, "args": call if isinstance(call, (str, int, float, bool)) else str(call)})
    return out


def role_of(message: Any) -> str:
    kind = _field(message, "type")
    role = _ROLE_BY_TYPE.get(kind) if isinstance(kind, str) else None
    if role is None:
        role = _ROLE_BY_CLASS.get(type(message).__name__, "other")
    return role


def content_of(message: Any) -> str:
    content = _field(message, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if block.get("type") == "text" or "text" in block:
                    parts.append(str(block.get("text", "")))
                else:
                    parts.append(f"[{block.get('type', 'block')}]")
        return "".join(parts)
    return str(content)


def odd_fields(message: Any) -> list[str]:
    """Stored fields of a message that are not what a message holds: its row is shown without them."""
    out = []
    for name in ("id", "type"):
        value = _field(message, name)
        if value is not None and not isinstance(value, str):
            out.append(f"'{name}' is a {type(value).__name__}, not a string")
    return out


UNPRINTABLE = "[content not shown: nested too deeply or too large]"


def build_rows(
    messages: Sequence[Any],
    *,
    speaker: str | set[str] | None = "all",
    tools: bool = False,
    warnings: list[str] | None = None,
) -> list[Row]:
    """Speaker-filtered rows; ``index`` counts within the filtered view."""
    wanted = None if speaker in (None, "all") else ({speaker} if isinstance(speaker, str) else speaker)
    rows: list[Row] = []
    for position, message in enumerate(messages):
        role = role_of(message)
        if wanted is not None and role not in wanted:
            continue
        mid = message_id_of(message)
        odd = odd_fields(message)
        try:
            content = content_of(message)
        except (RecursionError, ValueError):  # str() of a deeply nested value or a long integer
            content = UNPRINTABLE
            odd.append("its content is nested too deeply or too large to print")
        if odd and warnings is not None:
            warnings.append(f"message {position} of the checkpoint shown from its raw fields: {'; '.join(odd)}")
        row = Row(len(rows), role, content, mid, None)
        if role == "assistant" and not content:
            row = replace(row, calls=tuple(str(c.get("name")) for c in tool_calls_of(message, None) or ()))
        if tools:
            if role == "assistant":
                row = replace(row, tool_calls=tool_calls_of(message, warnings))
            elif role == "tool":
                name, call_id = _field(message, "name"), _field(message, "tool_call_id")
                row = replace(row, name=name if isinstance(name, str) else None, tool_call_id=call_id if isinstance(call_id, str) else None)
        rows.append(row)
    return rows


def select(
    rows: list[Row],
    *,
    index: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
) -> list[Row]:
    """Apply ``--index`` (Python indexing, out of range is empty) or a time range, then ``--limit``."""
    if index is not None and (since is not None or until is not None):
        raise ValueError("index and a time range are mutually exclusive")
    if index is not None:
        n = len(rows)
        resolved = index + n if index < 0 else index
        rows = [rows[resolved]] if 0 <= resolved < n else []
    elif since is not None or until is not None:
        rows = [
            r
            for r in rows
            if r.timestamp is not None
            and (since is None or since <= r.timestamp)
            and (until is None or r.timestamp <= until)
        ]
    if limit is not None and limit >= 0:
        rows = rows[:limit]
    return rows


def parse_bound(text: str) -> datetime:
    """An ISO 8601 ``--since``/``--until`` value; no UTC offset means UTC."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)  # ValueError for the caller to report
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt


def oldest_ts_by_id(states: Iterable[tuple[datetime | None, Iterable[str | None]]]) -> dict[str, datetime]:
    """Reference timestamp rule: walk checkpoints newest to oldest, the oldest holding an id wins.

    ``states`` yields ``(parsed ts, message ids)`` per checkpoint in ``checkpoint_id``-descending
    order, every namespace included; a checkpoint without a usable ts is skipped.
    """
    ts_map: dict[str, datetime] = {}
    for ts, ids in states:
        if ts is None:
            continue
        for mid in ids:
            if mid:
                ts_map[mid] = ts
    return ts_map
