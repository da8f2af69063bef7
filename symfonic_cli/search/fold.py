"""What ``threads search`` compares: both sides in Unicode NFC (canonical composition: a letter
typed precomposed, ``é``, equals ``e`` + a combining accent), and without --case-sensitive also
case-folded (``str.casefold``) and composed again. NFC, not NFKC: compatibility characters
(``ﬁ``, full-width letters, superscripts) stay distinct, as ``transcript show`` prints them.

``fold(text)`` is the form compared; ``Folded(text)`` maps a match in it back to characters of
``text`` (for the snippet)."""

from __future__ import annotations

import unicodedata
from itertools import pairwise
from typing import Final

FORM: Final = "NFC"


def nfc(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized(FORM, text):
        return text
    return unicodedata.normalize(FORM, text)


def fold(text: str, *, case_sensitive: bool = False) -> str:
    if case_sensitive:
        return nfc(text)
    if text.isascii():
        return text.casefold()
    return nfc(nfc(text).casefold())


def _clusters(text: str) -> list[int]:
    """Where each run of a character and the combining marks after it starts (and len(text))."""
    starts = [i for i, ch in enumerate(text) if i == 0 or not unicodedata.combining(ch)]
    return starts + [len(text)]


def span(text: str, folded_needle: str, *, case_sensitive: bool = False) -> tuple[int, int] | None:
    """The first match of ``folded_needle`` in ``fold(text)``, as characters of ``text``; None without one."""
    if folded_needle not in fold(text, case_sensitive=case_sensitive):
        return None
    if text.isascii() and (case_sensitive or text.casefold() == text.lower()):
        at = fold(text, case_sensitive=case_sensitive).find(folded_needle)
        return at, at + len(folded_needle)
    # Fold each character with its combining marks; the pieces' owners map folded positions back.
    bounds = _clusters(text)
    owner: list[int] = []
    pieces = []
    for a, b in pairwise(bounds):
        piece = fold(text[a:b], case_sensitive=case_sensitive)
        pieces.append(piece)
        owner.extend([a] * len(piece))
    joined = "".join(pieces)
    at = joined.find(folded_needle)
    if at >= 0:
        end = owner[at + len(folded_needle) - 1]
        return owner[at], next(b for b in bounds if b > end)
    # Composition across those runs (Hangul jamo, a few scripts): the shortest end, then the latest start.
    end = next(b for b in bounds[1:] if folded_needle in fold(text[:b], case_sensitive=case_sensitive))
    start = max(a for a in bounds[:-1] if a < end and folded_needle in fold(text[a:end], case_sensitive=case_sensitive))
    return start, end
