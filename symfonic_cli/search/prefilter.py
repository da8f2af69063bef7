"""Which stored blobs may hold a text, told from their bytes, never missing one that does.

A message's text is a msgpack string: its UTF-8 bytes stand in the blob as they are. So a blob
lacking the needle's bytes cannot hold the needle in a message whose content is one string.
Everything else is a candidate, decoded to decide: a type other than msgpack (JSON, encrypted,
pickled), content that is not one string (blocks are joined, "[image_url]" is made up, a number
is printed), with --tools any tool call (its arguments are shown as JSON), and a checkpoint
whose messages are not a plain list in it (delta-encoded: they live in the writes).

Both sides are compared in Unicode NFC (search/fold.py), so a stored text may be in any form: only
the needle's ASCII runs are looked for, as ASCII stands in every form alike, but for the three
characters NFC makes of another (``K``, ``;``, `````: the Kelvin sign, the Greek question mark and
varia; ``NFC_UNSAFE``). Without --case-sensitive the needle is folded (``str.casefold``) and only its "fold-safe" runs
are looked for, lower-cased ASCII: characters that nothing but themselves and their ASCII
capital fold to (``s`` is not: ``ß`` and ``ſ`` fold to it; ``k`` is not: the Kelvin sign does).
Every such run of the folded needle stands, ASCII-lower-cased, in the bytes of any string
holding the needle, whatever else folded around it. A folded needle that is ASCII stands whole,
lower-cased, in such a string unless the string holds one of the few other characters folding to
its unsafe letters (``EXOTIC``): then the blob holds that character's bytes.
"""

from __future__ import annotations

import re

# The characters beyond ASCII whose fold (search/fold.py: NFC, casefold, NFC) holds an ASCII
# character, by that character (a test recomputes them from every code point): those characters
# cannot be looked for as bytes alone.
EXOTIC = {
    "a": "\u1e9a", "f": "\ufb00\ufb01\ufb02\ufb03\ufb04", "i": "\u0130\ufb01\ufb03", "k": "\u212a",
    "l": "\ufb02\ufb04", "n": "\u0149", "s": "\u00df\u017f\u1e9e\ufb05\ufb06", "t": "\ufb05\ufb06",
    ";": "\u037e", "`": "\u1fef",
}
FOLD_UNSAFE = frozenset(EXOTIC)
# With --case-sensitive: the ASCII characters NFC makes of another (Kelvin sign, Greek question mark, varia).
NFC_UNSAFE = frozenset("K;`")

# A message whose "content" is not a msgpack string (fixstr a0-bf, str8/16/32 d9-db).
_NOT_ONE_STRING = rb"\xa7content(?![\xa0-\xbf\xd9-\xdb])"
# A non-empty tool_calls list (anything but an empty fixarray 0x90).
_TOOL_CALLS = rb"\xaatool_calls(?!\x90)"


_STANDARD = None


def _standard_messages():
    """A checkpoint in LangGraph's layout whose first channel value is a non-empty ``messages``
    list (fixarray, or array16/32 of a non-zero length): what checkpoint_blob_head would count."""
    global _STANDARD
    if _STANDARD is None:
        from symfonic_cli.codec.msgpack_head import _STANDARD_HEAD

        _STANDARD = re.compile(_STANDARD_HEAD.pattern + rb"[\x81-\x8f]\xa8messages(?:[\x91-\x9f]|\xdc(?!\x00\x00)|\xdd(?!\x00{4}))")
    return _STANDARD


class Prefilter:
    """The byte test for one needle. ``anchors``: byte strings every candidate blob holds (all
    of them; lower-cased ASCII when ``folded``); empty means every blob is a candidate.
    ``whole``/``exotic`` (folded ASCII needles with unsafe letters): a candidate also holds the
    whole lower-cased needle or one of these byte strings (the exotic characters, grouped by
    their first two bytes where several share them)."""

    def __init__(self, needle: str, *, case_sensitive: bool, tools: bool) -> None:
        from symfonic_cli.search.fold import fold

        self.folded = not case_sensitive
        self.tools = tools
        # The stored text may be in any normalisation form: only its ASCII runs stand in the bytes
        # as they do in the needle's NFC form (search/fold.py), bar the few characters NFC makes.
        folded = fold(needle, case_sensitive=case_sensitive)
        unsafe = "".join(sorted(NFC_UNSAFE if case_sensitive else FOLD_UNSAFE))
        runs = re.split("[^\x00-\x7f]|[" + re.escape(unsafe) + "]", folded)
        # Longest first: the first test that fails settles a blob.
        self.anchors: tuple[bytes, ...] = tuple(sorted({r.encode("ascii") for r in runs if r}, key=len, reverse=True))[:3]
        # Runs of characters no case changes (digits, punctuation, space): looked for first,
        # unlowered (no copy of the blob), longest first; most blobs fail one of them. Three
        # bytes at least: a pair (" 7", ", ") stands in nearly every blob, and a search for two
        # bytes is the slowest kind (measured: twice the copy it was to save).
        self.plain: tuple[bytes, ...] = ()
        if self.folded:
            bare = re.split("[^\x00-\x7f]|[A-Za-z" + re.escape(unsafe) + "]", folded)
            self.plain = tuple(sorted({b.encode("ascii") for b in bare if len(b) >= 3}, key=lambda b: (len(b), b), reverse=True))[:3]
        self.whole: bytes | None = None
        self.exotic: tuple[bytes, ...] = ()
        if self.folded and folded.isascii() and not FOLD_UNSAFE.isdisjoint(folded):
            self.whole = folded.encode("ascii")
            chars = {c.encode("utf-8") for x in set(folded) & FOLD_UNSAFE for c in EXOTIC[x]}
            heads = {c[:2] for c in chars}
            shared = {h for h in heads if sum(c.startswith(h) for c in chars) > 1}
            self.exotic = tuple(sorted(shared | {c for c in chars if c[:2] not in shared}))
        self.markers = re.compile(_NOT_ONE_STRING + (b"|" + _TOOL_CALLS if tools else b""))

    def needs_decode(self, blob: bytes, *, whole_checkpoint: bool) -> bool:
        """Whether a msgpack blob must be decoded whatever its bytes (see the module's doc)."""
        if self.markers.search(blob) is not None:
            return True
        if whole_checkpoint:
            if _standard_messages().match(blob) is not None:
                return False  # LangGraph's own layout, messages the first channel: a non-empty list
            from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

            try:
                count = checkpoint_blob_head(blob)[1]
            except (NeedMore, ValueError):
                return True
            return not count  # 0: no messages value (a delta channel keeps them in the writes)
        return False

    def holds_anchors(self, blob: bytes) -> bool:
        # Plain loops, not all() over a generator: this runs once per thread's latest checkpoint.
        for p in self.plain:
            if p not in blob:
                return False
        data = blob.lower() if self.folded else blob  # bytes.lower(): ASCII letters only
        for a in self.anchors:
            if a not in data:
                return False
        return self.whole is None or self.whole in data or any(e in blob for e in self.exotic)

    def may_match(self, payload_type: str | None, blob: bytes | None, *, whole_checkpoint: bool) -> bool:
        """The whole test, in Python (MongoDB, and any store without its own)."""
        if payload_type != "msgpack" or not isinstance(blob, (bytes, bytearray, memoryview)):
            return True
        blob = bytes(blob)
        return self.holds_anchors(blob) or self.needs_decode(blob, whole_checkpoint=whole_checkpoint)
