"""A decoded message's fields, read the same way whatever it decoded to: a message object, or the
raw field mapping of one the strict decoder did not build (transcript rows and the stores' message
views read them here)."""

from __future__ import annotations

from typing import Any


def field(message: Any, name: str, default: Any = None) -> Any:
    # A message of a class the strict decoder refused comes back as its raw field mapping.
    if isinstance(message, dict):
        return message.get(name, default)
    return getattr(message, name, default)


def message_id_of(message: Any) -> str | None:
    mid = field(message, "id")
    return mid if isinstance(mid, str) else None  # any other stored value is no id (odd_fields warns)
