"""Standard LangGraph messages read straight from their stored fields (the transcript and the
DeltaChannel rebuild): ``_plain_hook`` is an msgpack ext hook that raises ``_NotPlain`` for anything else;
``MESSAGE_VIEWS`` has the strict decoder leave them unbuilt (``thread diff``'s text)."""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The standard message classes, on LangGraph's safe list: decoding them strictly never warns,
# and their rows come from their stored ``type``, ``content`` and ``id`` fields alone.
_PLAIN_CLASSES = {
    ("langchain_core.messages.human", "HumanMessage"),
    ("langchain_core.messages.ai", "AIMessage"),
    ("langchain_core.messages.tool", "ToolMessage"),
    ("langchain_core.messages.system", "SystemMessage"),
}
_EXT_PYDANTIC_V2 = 5  # langgraph.checkpoint.serde.jsonplus.EXT_PYDANTIC_V2


class _NotPlain(Exception):
    pass


def _plain_hook(code: int, data: bytes) -> Any:
    import ormsgpack

    if code != _EXT_PYDANTIC_V2:
        raise _NotPlain
    tup = ormsgpack.unpackb(data, ext_hook=_plain_hook)
    if not (isinstance(tup, list) and len(tup) >= 3 and (tup[0], tup[1]) in _PLAIN_CLASSES and isinstance(tup[2], dict)):
        raise _NotPlain
    fields = tup[2]
    if fields.get("type") not in _PLAIN_TYPES or not isinstance(fields.get("id"), (str, type(None))):
        raise _NotPlain
    content = fields.get("content")
    if not (isinstance(content, str) or (isinstance(content, list) and all(isinstance(b, (str, dict)) for b in content))):
        raise _NotPlain
    return fields


_PLAIN_TYPES = {"human", "ai", "tool", "system"}


class StoredMessage(tuple):
    """A standard message seen from its stored fields, not built: ``(ext bytes, fields)``; its
    ``type``, ``content`` and ``id`` are the fields (what transcript rows read). Equal bytes and
    equal fields decode to equal messages, so two compare equal without building either."""

    __slots__ = ()

    @property
    def type(self) -> Any:
        return self[1].get("type")

    @property
    def content(self) -> Any:
        return self[1].get("content", "")

    @property
    def id(self) -> Any:
        return self[1].get("id")


def stored_message(fields: Any, data: bytes) -> Any:
    """An ``exthook`` view: a standard message whose fields are plain (as ``_plain_hook`` requires), else NotImplemented."""
    if not (isinstance(fields, dict) and fields.get("type") in _PLAIN_TYPES and isinstance(fields.get("id"), (str, type(None)))):
        return NotImplemented
    content = fields.get("content")
    if not (isinstance(content, str) or (isinstance(content, list) and all(isinstance(b, (str, dict)) for b in content))):
        return NotImplemented
    return StoredMessage((data, fields))


MESSAGE_VIEWS = dict.fromkeys(_PLAIN_CLASSES, stored_message)
