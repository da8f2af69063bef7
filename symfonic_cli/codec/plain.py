"""Standard LangGraph messages read straight from their stored fields (the transcript and the
DeltaChannel rebuild): ``_plain_hook`` is an msgpack ext hook that raises ``_NotPlain`` for anything else."""

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
