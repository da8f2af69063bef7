"""One line of text cut to a width with an ellipsis, never inside a character a reader sees as one
(a grapheme: a letter with its accents, a flag, a Hangul syllable, an emoji with its modifier)
nor inside an escape that ``escape_inline`` wrote (``\\n``, ``\\x1b``, ``\\u200d``).

- ``graphemes(text)``: the text's grapheme clusters, in order (Unicode's extended clusters, close
  enough for cutting: the rules a terminal line meets; no ``Prepend`` characters);
- ``clip(shown, width)``: ``shown`` (text already escaped for one line) within ``width`` terminal
  cells, ending ``…`` where something was cut.
"""

from __future__ import annotations

import unicodedata

# typing.TYPE_CHECKING without importing typing (quick commands load this package).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

ELLIPSIS = "…"
_ZWJ = "\u200d"


def _extends(ch: str) -> bool:
    """Joins the character before it: marks, joiners, variation selectors, emoji modifiers, tags."""
    cp = ord(ch)
    if ch == _ZWJ or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or 0x1F3FB <= cp <= 0x1F3FF or 0xE0020 <= cp <= 0xE007F:
        return True
    return unicodedata.category(ch) in ("Mn", "Me", "Mc")


def _hangul(ch: str) -> str:
    """The Hangul syllable type of ``ch`` (L, V, T, LV, LVT), or ''."""
    cp = ord(ch)
    if 0x1100 <= cp <= 0x115F or 0xA960 <= cp <= 0xA97C:
        return "L"
    if 0x1160 <= cp <= 0x11A7 or 0xD7B0 <= cp <= 0xD7C6:
        return "V"
    if 0x11A8 <= cp <= 0x11FF or 0xD7CB <= cp <= 0xD7FB:
        return "T"
    if 0xAC00 <= cp <= 0xD7A3:
        return "LV" if (cp - 0xAC00) % 28 == 0 else "LVT"
    return ""


_HANGUL_JOINS = {"L": ("L", "V", "LV", "LVT"), "LV": ("V", "T"), "V": ("V", "T"), "LVT": ("T",), "T": ("T",)}


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def graphemes(text: str) -> Iterator[str]:
    cluster = ""
    flags = 0  # regional indicators in the cluster: two make a flag
    for ch in text:
        if cluster:
            last = cluster[-1]
            joins = (
                (last == "\r" and ch == "\n")
                or (_extends(ch) and unicodedata.category(last) != "Cc")
                or (last == _ZWJ and unicodedata.category(ch) not in ("Cc", "Zl", "Zp"))
                or (_regional(ch) and flags % 2 == 1 and _regional(last))
                or (_hangul(ch) in _HANGUL_JOINS.get(_hangul(last), ()))
            )
            if joins:
                cluster += ch
                flags += _regional(ch)
                continue
            yield cluster
        cluster, flags = ch, int(_regional(ch))
    if cluster:
        yield cluster


def _units(shown: str) -> Iterator[str]:
    """What may not be split: an escape ``escape_inline`` wrote (a backslash always starts one
    there: a stored backslash is written ``\\\\``), else a grapheme."""
    i, n = 0, len(shown)
    while i < n:
        j = shown.find("\\", i)
        if j == -1:
            yield from graphemes(shown[i:])
            return
        if j > i:
            yield from graphemes(shown[i:j])
        kind = shown[j + 1:j + 2]
        size = {"x": 4, "u": 6, "U": 10}.get(kind, 2)
        yield shown[j:j + size]
        i = j + size


def clip(shown: str, width: int) -> str:
    """``shown`` if it fits ``width`` cells, else its longest start of whole units that leaves a
    cell for ``…``, and ``…``. Stops reading at the width (a long message is not walked through)."""
    from rich.cells import cell_len

    if width <= 0:
        return ""
    kept: list[tuple[str, int]] = []
    used = 0
    for unit in _units(shown):
        w = cell_len(unit)
        if used + w > width:  # cut: make room for the ellipsis
            while kept and used + 1 > width:
                used -= kept.pop()[1]
            return "".join(u for u, _ in kept) + ELLIPSIS
        kept.append((unit, w))
        used += w
    return shown
