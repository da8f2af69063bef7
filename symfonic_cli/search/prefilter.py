"""Which stored blobs may hold a text, told from their bytes, never missing one that does.

A message's text is a msgpack string: its UTF-8 bytes stand in the blob as they are. So a blob
lacking the needle's bytes cannot hold the needle in a message whose content is one string.
Everything else is a candidate, decoded to decide: a type other than msgpack (JSON, encrypted,
pickled), content that is not one string (blocks are joined, "[image_url]" is made up, a number
is printed), with --tools any tool call (its arguments are shown as JSON), and a checkpoint
whose messages are not a plain list in it (delta-encoded: they live in the writes).

Without --case-sensitive the needle is folded (``str.casefold``) and only its "fold-safe" runs
are looked for, lower-cased ASCII: characters that nothing but themselves and their ASCII
capital fold to (``s`` is not: ``ß`` and ``ſ`` fold to it; ``k`` is not: the Kelvin sign does).
Every such run of the folded needle stands, ASCII-lower-cased, in the bytes of any string
holding the needle, whatever else folded around it.
"""

from __future__ import annotations

import re

# ASCII characters that some other character also folds to (a test recomputes this list from
# every code point): they cannot be looked for as bytes in a case-insensitive search.
FOLD_UNSAFE = frozenset("afhijklnstwy")

# A message whose "content" is not a msgpack string (fixstr a0-bf, str8/16/32 d9-db).
_NOT_ONE_STRING = rb"\xa7content(?![\xa0-\xbf\xd9-\xdb])"
# A non-empty tool_calls list (anything but an empty fixarray 0x90).
_TOOL_CALLS = rb"\xaatool_calls(?!\x90)"


class Prefilter:
    """The byte test for one needle. ``anchors``: byte strings every candidate blob holds (all
    of them; lower-cased ASCII when ``folded``); empty means every blob is a candidate."""

    def __init__(self, needle: str, *, case_sensitive: bool, tools: bool) -> None:
        self.folded = not case_sensitive
        self.tools = tools
        if case_sensitive:
            self.anchors = (needle.encode("utf-8", "surrogatepass"),) if needle else ()
        else:
            runs = re.split("[^\x00-\x7f]|[" + "".join(sorted(FOLD_UNSAFE)) + "]", needle.casefold())
            # Longest first: the first test that fails settles a blob.
            self.anchors = tuple(sorted({r.encode("ascii") for r in runs if r}, key=len, reverse=True))[:3]
        self.markers = re.compile(_NOT_ONE_STRING + (b"|" + _TOOL_CALLS if tools else b""))

    def needs_decode(self, blob: bytes, *, whole_checkpoint: bool) -> bool:
        """Whether a msgpack blob must be decoded whatever its bytes (see the module's doc)."""
        if self.markers.search(blob) is not None:
            return True
        if whole_checkpoint:
            from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

            try:
                count = checkpoint_blob_head(blob)[1]
            except (NeedMore, ValueError):
                return True
            return not count  # 0: no messages value (a delta channel keeps them in the writes)
        return False

    def holds_anchors(self, blob: bytes) -> bool:
        data = blob.lower() if self.folded else blob  # bytes.lower(): ASCII letters only
        return all(a in data for a in self.anchors)

    def may_match(self, payload_type, blob, *, whole_checkpoint: bool) -> bool:
        """The whole test, in Python (MongoDB, and any store without its own)."""
        if payload_type != "msgpack" or not isinstance(blob, (bytes, bytearray, memoryview)):
            return True
        blob = bytes(blob)
        return self.holds_anchors(blob) or self.needs_decode(blob, whole_checkpoint=whole_checkpoint)
